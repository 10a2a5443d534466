"""The evidence store: where remote workers put a run's evidence, for the driver to import.

A store is a path or an fsspec URL that every node of a cluster can reach (a local path on one
machine, NFS, ``s3://bucket/prefix``, ``gs://...``). A run's files live under
``<uri>/runs/<run_id>/`` with the layout of a run directory (``harness/layout.py``)::

    worker.json                       written first: node, pid, host, start time
    evidence/<phase>/<kind>.jsonl     copied while the run goes (every sync_seconds) and at its end
    logs/<phase>.<out|err>
    manifest.json                     written last: status, phases, and every file's size and
                                      sha256 (the worker also returns it to the driver through Ray)

Only workers write here and only the driver reads; the driver alone writes run.json and the
ledger. The store is shared, so a candidate's train code may be able to write to it: when the
task returned, the driver checks the files against the manifest the worker *returned*
(``fetch(..., expected=...)``), never against the store's ``manifest.json``; the store copy is
used only for runs that never returned (lost, crashed), which are incomplete anyway. A run
without a manifest, or whose files do not match it, is *incomplete*: what arrived is imported
for inspection but never taken for a result.
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

from evotree.harness.layout import KINDS, PHASES

__all__ = ["MANIFEST", "WORKER", "EvidenceStore", "FetchResult", "evidence_files", "file_digest"]

MANIFEST = "manifest.json"
WORKER = "worker.json"
_PHASES, _KINDS = "|".join(PHASES), "|".join(KINDS)
_ALLOWED = re.compile(rf"^(evidence/({_PHASES})/({_KINDS})\.jsonl|logs/({_PHASES})\.(out|err))$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


_CONTRACT = tuple(
    sorted(
        [f"evidence/{phase}/{kind}.jsonl" for phase in PHASES for kind in KINDS]
        + [f"logs/{phase}.{stream}" for phase in PHASES for stream in ("out", "err")]
    )
)


def evidence_files(root: Path) -> list[str]:
    """The contract's files present under a run directory ``root`` (relative posix paths).

    Only the contract's few names are looked up (the syncer calls this every few seconds: the
    run directory's ``candidate/`` with its checkpoints is never walked); a name reached
    through a symbolic link (the file or a directory on its way) is left out.
    """
    found = []
    for rel in _CONTRACT:
        path = root / rel
        try:
            if not path.is_file() or any(
                (root / part).is_symlink()
                for part in (rel.split("/", 1)[0], rel.rsplit("/", 1)[0], rel)
            ):
                continue
        except OSError:
            continue
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
    #: True when the files were checked against a list of expected files (the returned
    #: manifest's, or else the store's manifest.json).
    checked: bool = False

    @property
    def complete(self) -> bool:
        """True when the files were checked against a manifest and all arrived intact."""
        return self.checked and not self.problems


class EvidenceStore:
    """A run-evidence store at ``uri`` (a path or an fsspec URL)."""

    def __init__(self, uri: str) -> None:
        import fsspec

        self.uri = uri.rstrip("/") or "/"
        try:
            self.fs, root = fsspec.core.url_to_fs(self.uri)
        except (ImportError, ValueError) as exc:
            from evotree.harness.executors.errors import ExecutorError

            raise ExecutorError(
                f"cannot open the evidence store {uri!r}: {exc}",
                fix="install the fsspec backend it needs (e.g. s3fs for s3://) or set "
                "[executor].evidence_uri to a path all nodes reach",
            ) from None
        self.root = root.rstrip("/")

    @staticmethod
    def is_url(uri: str) -> bool:
        """True for ``scheme://...`` URIs, False for plain paths."""
        return bool(_SCHEME.match(uri))

    def run_path(self, run_id: str, rel: str = "") -> str:
        base = f"{self.root}/runs/{run_id}"
        return f"{base}/{rel}" if rel else base

    # ------------------------------------------------------------------ worker side
    @property
    def local(self) -> bool:
        """True when the store is a local (or mounted) file system, False for object stores."""
        protocol = self.fs.protocol
        return bool(
            {"file", "local"} & set(protocol if isinstance(protocol, (tuple, list)) else [protocol])
        )

    def put_json(self, run_id: str, rel: str, data: dict[str, Any]) -> None:
        """Write a small JSON file so a reader never sees it half-written.

        On a file system: a temporary name, then a rename. On an object store (s3, gcs, ...):
        one ``pipe_file`` (an object PUT is atomic already, and a "rename" there is a copy and
        a delete).
        """
        target = self.run_path(run_id, rel)
        payload = (json.dumps(data, sort_keys=True, default=str) + "\n").encode()
        self.fs.makedirs(self.run_path(run_id), exist_ok=True)
        if not self.local:
            self.fs.pipe_file(target, payload)
            return
        tmp = f"{target}.tmp"
        self.fs.pipe_file(tmp, payload)
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

    def fetch(
        self, run_id: str, local_root: Path, expected: dict[str, Any] | None = None
    ) -> FetchResult:
        """Import the run's evidence into ``local_root``; check it against a manifest.

        ``expected``: the ``files`` (size, sha256 per name) of the manifest the worker returned
        to the driver through Ray. When given, the store's ``manifest.json`` is not read at all
        (anything that can write to the store could have rewritten it together with the
        evidence); without it (the task never returned) the store's copy is used. Only the
        run-directory contract's files are imported. Each expected file must arrive with its
        size and sha256; with no manifest at all, whatever is there is imported and the result
        is incomplete.
        """
        manifest = None if expected is not None else self.read_json(run_id, MANIFEST)
        result = FetchResult(manifest=manifest, worker=self.read_json(run_id, WORKER))
        base = self.run_path(run_id)
        try:
            listed = self.fs.find(base)
        except (FileNotFoundError, OSError):
            listed = []
        present = {}
        for remote in listed:
            remote = remote.rstrip("/")
            rel = (
                remote[len(base.rstrip("/")) + 1 :]
                if remote.startswith(base.rstrip("/") + "/")
                else None
            )
            if rel and _ALLOWED.match(rel):
                present[rel] = remote
        if expected is None and manifest is not None:
            expected = manifest.get("files")
            if not isinstance(expected, dict):
                result.problems.append("the store's manifest.json has no file list")
                expected = {}
        result.checked = expected is not None
        if expected is None:
            result.problems.append(
                "no manifest.json: the worker never finished writing this run's evidence"
            )
        expected = expected or {}
        wanted = expected if result.checked else present
        for rel in sorted(wanted):
            if not _ALLOWED.match(rel):
                result.problems.append(f"{rel}: the manifest lists a file that is not run evidence")
                continue
            if rel not in present:
                result.problems.append(
                    f"{rel} is listed in the manifest but missing from the store"
                )
                continue
            dest = local_root / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            self.fs.get_file(present[rel], str(dest))
            result.files.append(rel)
            if rel in expected:
                size, sha = file_digest(dest)
                want = expected[rel] if isinstance(expected[rel], dict) else {}
                if size != want.get("size") or sha != want.get("sha256"):
                    result.problems.append(
                        f"{rel} does not match the manifest (size {size}, expected "
                        f"{want.get('size')})"
                    )
        return result
