"""A run's evidence manifest: what ``run.finished`` binds to the ledger.

:func:`evidence_manifest` hashes every evidence file of a run directory (the Parquet tables and
everything under ``evidence/``; links listed, never followed) and the run.json fields readers
rely on (:data:`BOUND_FIELDS`). :mod:`evotree.harness.integrity`, beside it, recomputes the same
hashes before any run is counted, so a run directory edited or deleted later is found.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat as st
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evotree.harness.layout import KINDS

__all__ = [
    "BOUND_FIELDS",
    "MANIFEST_VERSION",
    "MANIFEST_MAX_LISTED",
    "evidence_files",
    "record_binding",
    "manifest_digest",
    "evidence_manifest",
]

#: run.json fields bound by a run's manifest: what the score gate and compare read from run.json.
BOUND_FIELDS = (
    "run_id",
    "version",
    "seed",
    "status",
    "commit",
    "judge_commit",
    "judge_version",
    "judge_data_commit",
    "started_at",
    "headline",
)
MANIFEST_VERSION = 1
#: At most this many files are listed one by one in the ledger (beyond, only the digest).
MANIFEST_MAX_LISTED = 256
_HASH_CHUNK = 1 << 20


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _file_entry(path: Path) -> str:
    """``sha256:<hex>`` of a regular file, ``link:<sha256 of its target>`` of a link (never
    followed), ``special:<kind>`` of anything else (a FIFO is never opened)."""
    info = os.lstat(path)
    if st.S_ISLNK(info.st_mode):
        return "link:" + _sha256_bytes(os.fsencode(os.readlink(path)))
    if not st.S_ISREG(info.st_mode):
        return "special:" + ("dir" if st.S_ISDIR(info.st_mode) else oct(st.S_IFMT(info.st_mode)))
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def evidence_files(run_dir: Path) -> dict[str, str]:
    """Every evidence file of a run directory -> its :func:`_file_entry`.

    The evidence is ``<kind>.parquet`` at the top and everything under ``evidence/`` (JSONL of
    every phase, the audit sidecars). Links are listed, never followed; a linked ``evidence``
    directory is one entry.
    """
    root = Path(run_dir)
    out: dict[str, str] = {}
    for kind in KINDS:
        path = root / f"{kind}.parquet"
        if os.path.lexists(path):
            out[path.name] = _file_entry(path)
    evidence = root / "evidence"
    if os.path.islink(evidence):
        out["evidence"] = _file_entry(evidence)
    elif evidence.is_dir():
        for folder, dirs, files in os.walk(evidence, followlinks=False):
            base = Path(folder)
            for name in sorted(files) + sorted(d for d in dirs if os.path.islink(base / d)):
                path = base / name
                out[path.relative_to(root).as_posix()] = _file_entry(path)
    return dict(sorted(out.items()))


def record_binding(data: Mapping[str, Any]) -> str:
    """sha256 of the :data:`BOUND_FIELDS` of a run record (as a dict: run.json's content)."""
    return _sha256_bytes(_canonical({k: data.get(k) for k in BOUND_FIELDS}))


def manifest_digest(files: Mapping[str, str], record: str) -> str:
    """The one hash over a manifest: its files and its record binding."""
    return "sha256:" + _sha256_bytes(
        _canonical({"v": MANIFEST_VERSION, "files": dict(files), "record": record})
    )


def evidence_manifest(run_dir: Path, record: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest ``run.finished`` records: ``{"v", "files", "record", "digest", "host"}``.

    ``files``: every evidence file (:func:`evidence_files`) with its sha256; ``record``: the hash
    of run.json's :data:`BOUND_FIELDS`; ``digest``: one hash over both (:func:`manifest_digest`).
    Never raises: an unreadable file is listed as ``error:<reason>`` (and will not match later).
    """
    try:
        files = evidence_files(run_dir)
    except OSError as exc:
        files = {"<unreadable>": f"error:{type(exc).__name__}"}
    bound = record_binding(record)
    manifest: dict[str, Any] = {
        "v": MANIFEST_VERSION,
        "n_files": len(files),
        "record": bound,
        "digest": manifest_digest(files, bound),
        "host": socket.gethostname(),
    }
    if (
        len(files) <= MANIFEST_MAX_LISTED
    ):  # a run that wrote thousands of files keeps its digest only
        manifest["files"] = files
    return manifest
