"""The evidence store: where remote workers put a run's evidence, for the driver to import.

A store is a path or an fsspec URL that every node of a cluster can reach (a local path on one
machine, NFS, ``s3://bucket/prefix``, ``gs://...``). A run's files live under
``<uri>/runs/<run_id>/`` with the layout of a run directory (``harness/layout.py``)::

    worker.json                       written first: node, pid, host, start time
    evidence/<phase>/<kind>.jsonl     copied while the run goes (every sync_seconds) and at its end
    logs/<phase>.<out|err>
    manifest.json                     written last, atomically: status, phases, and every file's
                                      size and sha256

Only workers write here and only the driver reads; the driver alone writes run.json and the
ledger. A run whose ``manifest.json`` is missing, or whose files do not match it, is
*incomplete*: what arrived is imported for inspection but never taken for a result.
The driver imports only the file names of the run-directory contract, so a store cannot write
anything else (``run.json``, paths outside the run directory) into the driver's runs directory.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.layout import KINDS, PHASES

__all__ = ["MANIFEST", "WORKER", "EvidenceStore", "FetchResult", "evidence_files", "file_digest"]

MANIFEST = "manifest.json"
WORKER = "worker.json"
_PHASES, _KINDS = "|".join(PHASES), "|".join(KINDS)
_ALLOWED = re.compile(rf"^(evidence/({_PHASES})/({_KINDS})\.jsonl|logs/({_PHASES})\.(out|err))$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def evidence_files(root: Path) -> list[str]:
    """The contract's files present under a run directory ``root`` (relative posix paths)."""
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = path.relative_to(root).as_posix()
            if _ALLOWED.match(rel):
                found.append(rel)
    return found


def file_digest(path: Path) -> tuple[int, str]:
    """(size, sha256 hex) of a local file."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


@dataclass
class FetchResult:
    """What the driver got from the store for one run."""

    manifest: dict[str, Any] | None
    worker: dict[str, Any] | None
    files: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when the manifest is there and every file it lists arrived intact."""
        return self.manifest is not None and not self.problems


class EvidenceStore:
    """A run-evidence store at ``uri`` (a path or an fsspec URL)."""

    def __init__(self, uri: str) -> None:
        import fsspec

        self.uri = uri.rstrip("/") or "/"
        try:
            self.fs, root = fsspec.core.url_to_fs(self.uri)
        except (ImportError, ValueError) as exc:
            from harness.executors import ExecutorError

            raise ExecutorError(f"cannot open the evidence store {uri!r}: {exc}",
                                fix="install the fsspec backend it needs (e.g. s3fs for s3://) or set "
                                    "[executor].evidence_uri to a path all nodes reach") from None
        self.root = root.rstrip("/")

    @staticmethod
    def is_url(uri: str) -> bool:
        """True for ``scheme://...`` URIs, False for plain paths."""
        return bool(_SCHEME.match(uri))

    def run_path(self, run_id: str, rel: str = "") -> str:
        base = f"{self.root}/runs/{run_id}"
        return f"{base}/{rel}" if rel else base

    # ------------------------------------------------------------------ worker side
    def put_json(self, run_id: str, rel: str, data: dict[str, Any]) -> None:
        """Write a small JSON file atomically (temporary name, then a rename)."""
        target = self.run_path(run_id, rel)
        tmp = f"{target}.tmp"
        self.fs.makedirs(self.run_path(run_id), exist_ok=True)
        self.fs.pipe_file(tmp, (json.dumps(data, sort_keys=True, default=str) + "\n").encode())
        self.fs.mv(tmp, target)

    def put_files(self, run_id: str, local_root: Path, rels: list[str]) -> None:
        """Copy the files ``rels`` of ``local_root`` to the run's place in the store."""
        for rel in rels:
            target = self.run_path(run_id, rel)
            self.fs.makedirs(target.rsplit("/", 1)[0], exist_ok=True)
            self.fs.put_file(str(local_root / rel), target)

    def finish(self, run_id: str, local_root: Path, summary: dict[str, Any]) -> dict[str, Any]:
        """Copy every evidence file, then write the manifest (last); return the manifest."""
        rels = evidence_files(local_root)
        self.put_files(run_id, local_root, rels)
        files = {}
        for rel in rels:
            size, sha = file_digest(local_root / rel)
            files[rel] = {"size": size, "sha256": sha}
        manifest = {**summary, "run_id": run_id, "files": files, "v": 1}
        self.put_json(run_id, MANIFEST, manifest)
        return manifest

    # ------------------------------------------------------------------ driver side
    def read_json(self, run_id: str, rel: str) -> dict[str, Any] | None:
        """A JSON file of the run, or None when absent or unreadable."""
        try:
            data = json.loads(self.fs.cat_file(self.run_path(run_id, rel)))
        except (FileNotFoundError, ValueError, OSError):
            return None
        return data if isinstance(data, dict) else None

    def fetch(self, run_id: str, local_root: Path) -> FetchResult:
        """Import the run's evidence into ``local_root``; check it against the manifest.

        Only the run-directory contract's files are imported. With a manifest, each listed
        file must arrive with its size and sha256; without one, whatever is there is imported
        and the result is incomplete.
        """
        result = FetchResult(manifest=self.read_json(run_id, MANIFEST), worker=self.read_json(run_id, WORKER))
        base = self.run_path(run_id)
        try:
            listed = self.fs.find(base)
        except (FileNotFoundError, OSError):
            listed = []
        present = {}
        for remote in listed:
            remote = remote.rstrip("/")
            rel = remote[len(base.rstrip("/")) + 1:] if remote.startswith(base.rstrip("/") + "/") else None
            if rel and _ALLOWED.match(rel):
                present[rel] = remote
        expected = (result.manifest or {}).get("files") or {}
        if result.manifest is None:
            result.problems.append("no manifest.json: the worker never finished writing this run's evidence")
        wanted = expected if result.manifest is not None else present
        for rel in sorted(wanted):
            if not _ALLOWED.match(rel):
                result.problems.append(f"{rel}: the manifest lists a file that is not run evidence")
                continue
            if rel not in present:
                result.problems.append(f"{rel} is listed in the manifest but missing from the store")
                continue
            dest = local_root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            self.fs.get_file(present[rel], str(dest))
            result.files.append(rel)
            if rel in expected:
                size, sha = file_digest(dest)
                if size != expected[rel].get("size") or sha != expected[rel].get("sha256"):
                    result.problems.append(f"{rel} does not match the manifest (size {size}, expected "
                                           f"{expected[rel].get('size')})")
        return result
