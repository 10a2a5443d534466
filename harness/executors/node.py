"""Node-side pieces shared by the remote executors' jobs (Ray tasks, Slurm jobs): extracting the
driver's archives and copying a running run's evidence to the evidence store."""

from __future__ import annotations

import io
import tarfile
import threading
from pathlib import Path
from typing import Any
from evotree.harness.executors.store import evidence_files

__all__ = ["Syncer", "extract_archive"]


class Syncer(threading.Thread):
    """Copies a running run's evidence files to the store every ``period`` seconds."""

    def __init__(self, store: Any, run_id: str, root: Path, period: float) -> None:
        super().__init__(daemon=True, name=f"evotree-sync-{run_id}")
        self.store, self.run_id, self.root, self.period = store, run_id, root, period
        self.stop = threading.Event()
        self.sent: dict[str, int] = {}
        self.error: str | None = None

    def sync(self) -> None:

        changed: dict[str, int] = {}
        for rel in evidence_files(self.root):  # the contract's names only, never candidate/
            try:
                size = (self.root / rel).stat().st_size
            except OSError:
                continue
            if self.sent.get(rel) != size:
                changed[rel] = size
        if changed:
            self.store.put_files(self.run_id, self.root, list(changed))
            self.sent.update(changed)  # only once the copy succeeded: a failed one is retried

    def run(self) -> None:
        while not self.stop.wait(self.period):
            try:
                self.sync()
            except Exception as exc:  # noqa: BLE001 - a failed partial copy is retried next time
                self.error = f"{type(exc).__name__}: {exc}"


def extract_archive(data: bytes | Path, target: Path) -> int:
    """Extract a tar archive (ours: an exported commit) into ``target``; return its file count."""
    target.mkdir(parents=True, exist_ok=True)
    options = {"name": data} if isinstance(data, Path) else {"fileobj": io.BytesIO(data)}
    with tarfile.open(**options) as archive:
        members = archive.getmembers()
        archive.extractall(target, filter="fully_trusted")  # built by the driver from a commit
    return sum(1 for m in members if m.isfile() or m.issym())
