"""Which cached ``.pyc`` files of a task repository's work tree are compiled from the future.

A hash-based ``.pyc`` (``--invalidation-mode checked-hash`` or ``unchecked-hash``: flags bit 0
set in its 16-byte header) stores, at bytes 8-16, the hash of the source it was compiled from
(:func:`importlib.util.source_hash`). When that hash is the hash of a blob only history beyond
the base holds (the provenance index's blobs), the file is bytecode of a future version of a
module: whoever reads it reads the fix, whatever its source tree says. Only ``.pyc`` files this
Python can judge are judged (the hash's key is the interpreter's magic number: a ``.pyc`` of
another Python version is left alone); timestamp-based ones store no hash and are not judged.

:func:`future_bytecode` lists them (``__pycache__`` folders of the work tree, bounded walk);
:func:`named_future_bytecode` finds the commands of a trajectory that touch one (any program
but a listing or a deletion) before the trajectory built the bytecode itself.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotree.harness.audit.bytecode_rules import (
    builds_bytecode,
    is_cache_path,
    lists_only,
    xargs_of,
)
from evotree.harness.audit.hits import Hit
from evotree.harness.audit.steps import Trajectory
from evotree.harness.audit.unwrap import parse_shell

__all__ = ["FutureBytecode", "future_bytecode", "named_future_bytecode"]

#: folders a walk for the project's own caches does not enter
_SKIP = frozenset({".git", "node_modules", ".venv", "venv", ".tox", ".nox", "site-packages"})
_MAX_FILES = 5000
_MAX_BLOB = 4_000_000
_MENTION = re.compile(r"\S*(?:__pycache__|\.pyc\b)")


@dataclass(frozen=True)
class FutureBytecode:
    """A ``.pyc`` of the work tree compiled from a blob beyond the base."""

    path: str  # relative to the work tree: pkg/__pycache__/m.cpython-311.pyc
    blob: str  # the future blob it was compiled from


def _hash_based(path: Path) -> bytes | None:
    """The source hash a ``.pyc`` of this Python stores, or None (timestamp-based, another
    Python's, unreadable)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError:
        return None
    if len(head) < 16 or head[:4] != importlib.util.MAGIC_NUMBER:
        return None
    if not int.from_bytes(head[4:8], "little") & 1:
        return None
    return head[8:16]


def future_bytecode(
    workdir: str | os.PathLike[str] | None, repo: Any, index: Any
) -> list[FutureBytecode]:
    """The hash-based ``.pyc`` files under ``workdir``'s ``__pycache__`` folders whose source
    hash is that of a blob in ``index`` (a
    :class:`~evotree.harness.audit.future_content.ProvenanceIndex`) that ``repo`` (pygit2)
    holds."""
    if not workdir or not os.path.isdir(workdir):
        return []
    hashes: dict[bytes, str] = {}
    seen = 0
    for root, dirs, files in os.walk(workdir):
        dirs[:] = [d for d in dirs if d not in _SKIP]
        if os.path.basename(root) != "__pycache__":
            continue
        for name in files:
            if not name.endswith(".pyc"):
                continue
            seen += 1
            if seen > _MAX_FILES:
                break
            found = _hash_based(Path(root) / name)
            if found is not None:
                hashes[found] = os.path.relpath(os.path.join(root, name), workdir)
    if not hashes:
        return []
    out: list[FutureBytecode] = []
    for oid, kind in index.objects.items():
        if kind != "blob":
            continue
        try:
            blob = repo[oid]
        except (KeyError, ValueError):
            continue
        if blob.size > _MAX_BLOB or blob.is_binary:
            continue
        source = importlib.util.source_hash(blob.data)
        if source in hashes:
            out.append(FutureBytecode(hashes[source], oid))
    return sorted(out, key=lambda f: f.path)


def _names(word: str, pyc: FutureBytecode) -> bool:
    """Does ``word`` name the ``.pyc`` (its path's end, its file name, or a glob over its
    cache folder)?"""
    folder, _, name = pyc.path.rpartition("/")
    if name in word:
        return True
    return folder in word and ("*" in word or word.rstrip("/").endswith(folder))


def _finds(argv: Sequence[str], pyc: FutureBytecode) -> bool:
    """``find ROOT... -name '*.pyc'`` (or ``-path '*__pycache__*'``) whose roots hold the
    ``.pyc``."""
    if not argv or not any(
        a in ("-name", "-iname", "-path", "-ipath", "-regex") and is_cache_path(b)
        for a, b in zip(argv, argv[1:])
    ):
        return False
    roots: list[str] = []
    for word in argv[1:]:
        if word.startswith(("-", "(", "!")):
            break
        roots.append(word)
    for root in roots or ["."]:
        clean = root.rstrip("/")
        while clean.startswith("./"):
            clean = clean[2:]
        if clean in ("", ".") or pyc.path.startswith(clean + "/"):
            return True
    return False


def named_future_bytecode(
    traj: Trajectory, found: Sequence[FutureBytecode], rule: str
) -> list[Hit]:
    """A command touching a future ``.pyc`` (reading, copying, running: anything but listing or
    deleting), before any step built the project's bytecode itself: ``audit.future_content``
    high, naming the blob (one hit per trajectory: the first)."""
    if not found:
        return []
    for step in traj.steps:
        command = step.command or ""
        mention = _MENTION.search(command)
        if mention is None:
            if builds_bytecode(command):
                return []  # the trajectory's own build rewrote the cache from here on
            continue
        if builds_bytecode(command[: mention.start()]):
            return []  # built earlier on the same line
        for cmd in parse_shell(command):
            if not cmd.argv or lists_only(cmd):
                continue
            words = [*cmd.argv[1:], *(t for _, t in cmd.redirects)]
            src = cmd.stdin  # ``find . -name '*.pyc' | xargs strings``: the reader gets find's
            fed = (
                src.argv
                if src is not None and src.argv and src.argv[0] == "find" and xargs_of(cmd, src)
                else ()
            )
            for pyc in found:
                if any(_names(w, pyc) for w in words) or _finds(fed, pyc):
                    return [
                        Hit(
                            "audit.future_content",
                            "high",
                            f"{rule}: {pyc.path} is compiled from blob {pyc.blob[:12]}, "
                            "which only history beyond the base holds",
                            " ".join(cmd.argv)[:300],
                        )
                    ]
        if builds_bytecode(command):
            return []
    return []
