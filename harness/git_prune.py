"""Task repositories bound into a phase as copies pruned at their base: the future is absent.

A task repository in a phase's read-write folder may hold its own future — the reference fix on
another branch, a tag, the reflog, ``ORIG_HEAD``, a stash, a loose object no reference names.
Judging every way git (or a program reading ``.git`` by hand) could reach it trails the next
spelling, link, index, commit graph or alternate (``docs/threat-model.md``). So before a traced
phase starts, each task git directory is copied with only what its base reaches, and the copy is
bound over it (:func:`evotree.harness.git_guard.before_phase`):

- ``objects/``: one pack of the objects the base commit reaches (its history, trees and blobs),
  written by ``git pack-objects --revs`` with git's own shortcuts off (no replace objects,
  grafts, commit-graph or bitmaps: :data:`evotree.harness.audit.repo_objects.GIT`); nothing
  else — no loose object, no other pack, no alternates;
- ``HEAD`` as it was (a branch, now at the base, or the base detached), and the branches, tags
  and remote-tracking references whose commit the base reaches, each written peeled (a tag's
  message is not copied) in ``packed-refs``; no reflog, no stash, notes or replace references,
  no state pointer (``ORIG_HEAD``, ``FETCH_HEAD``...), no linked worktree;
- ``config``, ``info/exclude``, ``info/attributes`` as they were; ``shallow`` with the lines
  the copy holds; the ``index`` as it was when every object it names is in the copy, else the
  base's tree read into a fresh one (the work tree is untouched either way).

The copy lives beside the phase's raw trace, outside every bind, and is removed after the phase
(:func:`remove_copies`): what the phase writes into the task's git directory (the index, objects
of its own) is not kept — its work tree is its result. ``EVOTREE_TASK_REPOS=whole`` (the
operator's environment, never a config a candidate writes) binds the repositories whole, as
before: the trace's own judgement alone, for its tests and benchmarks.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pygit2

from evotree.harness.audit.repo_objects import GIT, git_env

__all__ = [
    "COPIES_SUFFIX",
    "ENV_TASK_REPOS",
    "PruneError",
    "PrunedCopy",
    "copies_path",
    "prune_copy",
    "pruning",
    "remove_copies",
]

#: The operator's switch: ``pruned`` (the default) or ``whole``.
ENV_TASK_REPOS = "EVOTREE_TASK_REPOS"
#: Where a phase's pruned copies are made: beside its raw trace.
COPIES_SUFFIX = ".git-copies"
#: The largest file copied as it is (config, info files, shallow) and the largest index.
_SMALL = 1 << 20
_INDEX_LIMIT = 256 << 20
#: Reference namespaces kept when the base reaches them.
_KEPT_NAMESPACES = ("refs/heads", "refs/tags", "refs/remotes")
_MAX_REFS = 50_000
_HEX = frozenset("0123456789abcdef")


class PruneError(RuntimeError):
    """A task repository that could not be copied at its base (the phase then does not see it)."""


@dataclass(frozen=True)
class PrunedCopy:
    """What :func:`prune_copy` made: the copy's path, the base it was pruned at (``None`` for a
    repository with no commit), the references kept, and how its index was made (``copied``,
    ``rebuilt`` from the base's tree, or ``none``)."""

    path: Path
    base: str | None
    refs: int
    index: str


def pruning() -> bool:
    """Whether task repositories are bound pruned (the default) rather than whole."""
    value = os.environ.get(ENV_TASK_REPOS, "pruned").strip().lower()
    if value in ("pruned", ""):
        return True
    if value == "whole":
        return False
    raise PruneError(
        f"{ENV_TASK_REPOS}={value!r} is not known: use 'pruned' (the default) or 'whole'"
    )


def copies_path(trace: Path | str) -> Path:
    """The folder of the pruned copies of the phase traced into ``trace``."""
    return Path(str(trace) + COPIES_SUFFIX)


def remove_copies(trace: Path | str) -> None:
    """Remove the phase's pruned copies (a link in their place is removed, never followed)."""
    path = copies_path(trace)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)
    else:
        path.unlink()


def _git(git_dir: Path, *args: str, stdin: bytes | None = None) -> tuple[int, bytes, str]:
    """git on ``git_dir`` alone, without the shortcuts a repository's files could make lie."""
    proc = subprocess.run(
        [*GIT, *args],
        input=stdin,
        capture_output=True,
        env=git_env(git_dir),
        cwd=git_dir,
        check=False,
        timeout=600,
    )
    lines = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    return proc.returncode, proc.stdout, lines[-1] if lines else ""


def _read_regular(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes, never through a link; ``None`` when absent, not regular or larger
    than ``limit``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return fh.read(limit + 1)


def _is_id(text: str) -> bool:
    return len(text) in (40, 64) and set(text) <= _HEX


def _head(git_dir: Path) -> tuple[str | None, str | None]:
    """(the branch HEAD names, or ``None`` when detached; the base commit, or ``None`` when the
    repository has no commit yet)."""
    raw = _read_regular(git_dir / "HEAD", 4096)
    if raw is None and os.path.islink(git_dir / "HEAD"):
        # git takes a HEAD link whose target starts "refs/" for a symbolic reference
        target = os.readlink(git_dir / "HEAD")
        raw = f"ref: {target}".encode() if target.startswith("refs/") else None
    if raw is None:
        raise PruneError(f"{git_dir / 'HEAD'} is not a regular file")
    text = raw.decode("utf-8", "replace").strip()
    branch = None
    if text.startswith("ref:"):
        branch = text[4:].strip()
        if (
            not branch.startswith("refs/")
            or ".." in branch.split("/")
            or any(c.isspace() for c in branch)
        ):
            raise PruneError(f"{git_dir / 'HEAD'} names {branch!r}, not a reference")
    elif not _is_id(text):
        raise PruneError(f"{git_dir / 'HEAD'} holds neither a reference nor an id")
    rc, out, err = _git(git_dir, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    if rc == 0:
        return branch, out.decode().strip()
    if branch is not None:
        rc, _, _ = _git(git_dir, "rev-parse", "--verify", "-q", branch)
        if rc != 0:
            return branch, None  # unborn: no commit yet
    raise PruneError(f"HEAD of {git_dir} names no commit: {err or 'git rev-parse failed'}")


def _kept_refs(git_dir: Path, base: str) -> dict[str, str]:
    """The branches, tags and remote-tracking references whose commit the base reaches, peeled."""
    rc, out, err = _git(
        git_dir,
        "for-each-ref",
        f"--merged={base}",
        "--format=%(objecttype) %(objectname) %(*objecttype) %(*objectname) %(refname)",
        *_KEPT_NAMESPACES,
    )
    if rc != 0:
        raise PruneError(f"the references of {git_dir} cannot be listed: {err}")
    kept: dict[str, str] = {}
    for line in out.decode("utf-8", "replace").splitlines():
        parts = line.split(" ", 4)
        if len(parts) != 5:
            continue
        kind, oid, peeled_kind, peeled, name = parts
        if kind == "tag":
            kind, oid = peeled_kind, peeled
        if kind != "commit" or not _is_id(oid) or any(c.isspace() for c in name):
            continue
        kept[name] = oid
        if len(kept) >= _MAX_REFS:
            break
    return kept


def _missing(copy: Path, ids: list[str]) -> set[str]:
    """The ids of ``ids`` that the copy's store does not hold."""
    if not ids:
        return set()
    rc, out, err = _git(copy, "cat-file", "--batch-check", stdin="\n".join(ids).encode() + b"\n")
    if rc != 0:
        raise PruneError(f"the copy's objects cannot be checked: {err}")
    return {
        line.split(" ", 1)[0]
        for line in out.decode("utf-8", "replace").splitlines()
        if line.endswith(" missing")
    }


def _index_ids(path: Path) -> list[str] | None:
    """The objects a git index names (submodule commits aside); ``None`` when it cannot be read."""
    try:
        index = pygit2.Index(str(path))
        return [str(e.id) for e in index if e.mode != 0o160000]
    except (pygit2.GitError, OSError, ValueError):
        return None


def _copy_index(git_dir: Path, copy: Path, base: str | None) -> str:
    """The copy's index: the task's own when the copy holds every object it names, else the
    base's tree read into a fresh one."""
    source = git_dir / "index"
    raw = _read_regular(source, _INDEX_LIMIT)
    if raw is not None:
        ids = _index_ids(source)
        if ids is not None and not _missing(copy, ids):
            (copy / "index").write_bytes(raw)
            return "copied"
    if base is None:
        return "none"
    rc, _, err = _git(copy, "read-tree", base)
    if rc != 0:
        raise PruneError(f"the base's tree cannot be read into the copy's index: {err}")
    return "rebuilt"


def prune_copy(git_dir: Path, dest: Path) -> PrunedCopy:
    """Copy the git directory ``git_dir`` into the new folder ``dest`` with only what its base
    (HEAD's commit) reaches (module doc); :class:`PruneError` says why it could not."""
    git_dir = Path(git_dir)
    branch, base = _head(git_dir)
    dest.mkdir(mode=0o700)
    for sub in ("objects/pack", "objects/info", "refs/heads", "refs/tags", "info"):
        (dest / sub).mkdir(parents=True)
    config = _read_regular(git_dir / "config", _SMALL)
    if config is None:
        raise PruneError(f"{git_dir / 'config'} is not a regular file of at most 1 MiB")
    (dest / "config").write_bytes(config)
    for name in ("info/exclude", "info/attributes"):
        data = _read_regular(git_dir / name, _SMALL)
        if data is not None:
            (dest / name).write_bytes(data)
    refs: dict[str, str] = {}
    if base is not None:
        refs = _kept_refs(git_dir, base)
        if branch is not None:
            refs[branch] = base
        rc, _, err = _git(
            git_dir,
            "-c",
            "pack.compression=1",
            "pack-objects",
            "--revs",
            "--window=0",
            "--quiet",
            str(dest / "objects" / "pack" / "pack"),
            stdin=f"{base}\n".encode(),
        )
        if rc != 0:
            raise PruneError(f"the objects {git_dir}'s base reaches cannot be packed: {err}")
    head = f"ref: {branch}\n" if branch is not None else f"{base}\n"
    (dest / "HEAD").write_text(head, encoding="utf-8")
    lines = "".join(f"{oid} {name}\n" for name, oid in sorted(refs.items()))
    (dest / "packed-refs").write_text("# pack-refs with: peeled fully-peeled sorted \n" + lines)
    shallow = _read_regular(git_dir / "shallow", _SMALL)
    if shallow is not None:
        ids = [w for w in shallow.decode("utf-8", "replace").split() if _is_id(w)]
        gone = _missing(dest, ids)
        (dest / "shallow").write_text("".join(f"{i}\n" for i in ids if i not in gone))
    index = _copy_index(git_dir, dest, base)
    return PrunedCopy(path=dest, base=base, refs=len(refs), index=index)
