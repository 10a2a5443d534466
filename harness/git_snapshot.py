"""The state of a phase's task repositories before it and what changed since: :func:`snapshot`
(the entries of each git directory with device, inode, change time and content hash, every
reference's value, its object store's folders and files, what its HEAD and state pointers name),
kept beside the raw trace (:func:`snapshot_path`), and :func:`compare` (``git_state`` rows).
Split off :mod:`evotree.harness.git_guard`, which takes the snapshot at a phase's start and
reads it after the phase.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotree.harness.git_stores import _is_fanout

__all__ = ["SNAPSHOT_SUFFIX", "compare", "snapshot", "snapshot_path"]

#: The snapshot of a traced phase's task repositories: beside its raw trace (outside every bind).
SNAPSHOT_SUFFIX = ".git-state.json"
#: Entries git itself writes while it works with references locked (the index, a merge's
#: state); every other entry that appears is a change.
_VOLATILE = frozenset(
    {
        "index",
        "FETCH_HEAD",
        "ORIG_HEAD",
        "MERGE_HEAD",
        "MERGE_MSG",
        "MERGE_MODE",
        "MERGE_RR",
        "COMMIT_EDITMSG",
        "AUTO_MERGE",
        "REBASE_HEAD",
        "CHERRY_PICK_HEAD",
        "REVERT_HEAD",
        "BISECT_LOG",
        "BISECT_START",
        "BISECT_TERMS",
        "BISECT_NAMES",
        "BISECT_EXPECTED_REV",
        "BISECT_ANCESTORS_OK",
        "sequencer",
        "rebase-merge",
        "rebase-apply",
        "gc.log",
        "gc.pid",
        "rr-cache",
        "objects",
        "hooks",
        "description",
        "branches",
        "lost-found",
        "modules",
    }
)
_HASH_LIMIT = 1 << 20


def _entry(path: Path) -> list[Any] | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    kind = (
        "link"
        if stat.S_ISLNK(info.st_mode)
        else "dir"
        if stat.S_ISDIR(info.st_mode)
        else "file"
        if stat.S_ISREG(info.st_mode)
        else "other"
    )
    digest = None
    if kind == "file" and info.st_size <= _HASH_LIMIT:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as fh:
                digest = hashlib.sha256(fh.read(_HASH_LIMIT + 1)).hexdigest()
        except OSError:
            digest = None
    elif kind == "link":
        try:
            digest = "-> " + os.readlink(path)
        except OSError:
            digest = None
    return [kind, info.st_dev, info.st_ino, info.st_ctime_ns, digest]


def _refs(gd: Path, limit: int = 20000) -> dict[str, list[Any] | None]:
    """Every file under ``refs/`` and ``logs/`` (links not followed), by path."""
    out: dict[str, list[Any] | None] = {}
    for top in ("refs", "logs"):
        stack = [gd / top]
        while stack and len(out) < limit:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                else:
                    out[str(Path(entry.path).relative_to(gd))] = _entry(Path(entry.path))
    return out


def _object_dirs(objects: Path) -> list[list[int]]:
    """Device and inode of an object store's folder and of the folders directly in it (its
    ``pack``, ``info`` and loose objects' folders; links not followed): what git reads a task
    repository's objects through, whatever path leads there."""
    out = []
    try:
        info = os.stat(objects, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            out.append([info.st_dev, info.st_ino])
        for entry in os.scandir(objects):
            if entry.is_dir(follow_symlinks=False):
                sub = entry.stat(follow_symlinks=False)
                out.append([sub.st_dev, sub.st_ino])
    except OSError:
        pass
    return out


def _object_files(objects: Path) -> list[list[int]]:
    """Device and inode of every file of an object store's loose-object folders and of its
    ``pack`` folder (links not followed): a store is known by its files too, so that a hard link
    of one into a folder the phase made (same mount) is still the task's object when git reads
    it (:func:`evotree.harness.audit.trace.judge_git_reads`)."""
    out = []
    try:
        folders = [
            e
            for e in os.scandir(objects)
            if e.is_dir(follow_symlinks=False) and (e.name == "pack" or _is_fanout(e.name))
        ]
        for folder in folders:
            for entry in os.scandir(folder.path):
                if entry.is_file(follow_symlinks=False):
                    info = entry.stat(follow_symlinks=False)
                    out.append([info.st_dev, info.st_ino])
    except OSError:
        pass
    return out


#: git's state pointers (each may name a commit git acts on with no revision on its command line)
_STATE_FILES = (
    "ORIG_HEAD",
    "MERGE_HEAD",
    "FETCH_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "REBASE_HEAD",
    "AUTO_MERGE",
    "BISECT_HEAD",
)


def _state_ids(gd: Path) -> list[str]:
    """The commit ids the git directory's state pointers name before the phase (an image's reset
    leaves ``ORIG_HEAD`` naming the future, which then no reference may reach): what the trace's
    judgement counts as the task's history beyond its base, with its references and reflogs."""
    out: list[str] = []
    for name in _STATE_FILES:
        for line in (_read_small(gd / name) or "").splitlines():
            word = line.strip().split("\t", 1)[0].split(" ", 1)[0]
            if len(word) in (40, 64) and all(c in "0123456789abcdef" for c in word):
                out.append(word)
    return out


def snapshot(
    git_dirs: Sequence[Path], problems: Sequence[str] = (), sources: Sequence[Path] | None = None
) -> dict[str, Any]:
    """The state of ``git_dirs`` (module doc), with the problems found while guarding them.

    ``sources``: where each is read from when it is bound from elsewhere (its pruned copy); the
    record keeps both (``path`` as the phase sees it, ``source`` as this process reads it)."""
    repos = []
    for i, gd in enumerate(git_dirs):
        src = Path(sources[i]) if sources is not None else Path(gd)
        try:
            names = sorted(os.listdir(src))
        except OSError:
            names = []
        head = _read_small(src / "HEAD") or ""
        repos.append(
            {
                "path": str(gd),
                "source": str(src),
                # the box path's own entry when a copy is bound over it: moving it away (a rename
                # of a folder above it) is a change even though the copy never moves
                "origin": _entry(Path(gd)) if src != Path(gd) else None,
                "self": _entry(src),
                "entries": {
                    n: _entry(src / n)
                    for n in names
                    if n not in _VOLATILE and not n.endswith(".lock")
                }
                | {"objects": _entry(src / "objects")},
                "refs": _refs(src),
                "object_dirs": _object_dirs(src / "objects"),
                "object_files": _object_files(src / "objects"),
                "state_ids": _state_ids(src),
                "head": head.strip(),
                "head_commit": _head_commit(src, head),
            }
        )
    return {"repos": repos, "problems": list(problems)}


def compare(before: dict[str, Any]) -> list[dict[str, Any]]:
    """What changed in the repositories of ``before`` (a :func:`snapshot`) since it was taken,
    and the problems it recorded: ``{"kind": "git_state", "path": ..., "change": ...}`` rows."""
    rows: list[dict[str, Any]] = []

    def change(path: str, text: str) -> None:
        rows.append({"kind": "git_state", "path": path, "change": text})

    for problem in before.get("problems") or []:
        change(str(problem).split(" ", 1)[0], "not guarded: " + str(problem))
    for repo in before.get("repos") or []:
        gd = Path(str(repo.get("path")))
        src = Path(str(repo.get("source") or gd))  # what was bound there (a pruned copy)
        now = _entry(src)
        was = repo.get("self")
        origin = repo.get("origin")
        if now is None or was is None or now[:3] != was[:3]:
            change(str(gd), "the git directory was moved, removed, replaced or linked")
            continue
        if isinstance(origin, list) and (_entry(gd) or [None])[:3] != origin[:3]:
            change(str(gd), "the git directory was moved, removed, replaced or linked")
            continue
        entries = repo.get("entries") or {}
        try:
            names = set(os.listdir(src))
        except OSError:
            names = set()
        for name in sorted(names - set(entries) - _VOLATILE):
            if not name.endswith(".lock"):
                change(
                    str(gd / name), "a new entry in the git directory (it can point git elsewhere)"
                )
        for name, old in sorted(entries.items()):
            new = _entry(src / name)
            if new is None:
                change(str(gd / name), "removed or renamed")
            elif (
                old is None
                or new[0] != old[0]
                or new[4] != old[4]
                or (new[0] != "dir" and new[1:4] != old[1:4])
                or (new[0] == "dir" and new[1:3] != old[1:3])
            ):
                change(str(gd / name), "changed, replaced or linked during the phase")
        old_refs = repo.get("refs") or {}
        new_refs = _refs(src)
        for name in sorted(set(old_refs) | set(new_refs)):
            old, new = old_refs.get(name), new_refs.get(name)
            if (
                old is None
                or new is None
                or new[0] != old[0]
                or new[4] != old[4]
                or new[1:4] != old[1:4]
            ):
                change(
                    str(gd / name),
                    "a reference or reflog added, removed or changed during the phase",
                )
    return rows


def snapshot_path(trace: Path | str) -> Path:
    """Where the snapshot of the phase traced into ``trace`` is kept."""
    return Path(str(trace) + SNAPSHOT_SUFFIX)


def _read_small(path: Path) -> str | None:
    """The text of a small regular file, never through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read(_HASH_LIMIT).decode("utf-8", errors="replace")


def _head_commit(gd: Path, head: str) -> str | None:
    """The commit HEAD's text names in the git directory ``gd`` (a loose or packed reference,
    one level of ``ref:``), read from the files (the locked ones), never by running git."""
    text = head.strip()
    if not text.startswith("ref:"):
        return text or None
    name = text[4:].strip()
    if not name.startswith("refs/") or ".." in name.split("/"):
        return None
    loose = _read_small(gd / name)
    if loose is not None:
        return loose.strip() or None
    for line in (_read_small(gd / "packed-refs") or "").splitlines():
        parts = line.split(" ", 1)
        if len(parts) == 2 and parts[1].strip() == name:
            return parts[0]
    return None
