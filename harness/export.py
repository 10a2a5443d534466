"""Exporting a committed tree into a directory, without VCS history.

A run never sees a worktree: it gets the blobs of one commit, written by pygit2 (no ``.git``,
no other commits, no uncommitted edits). Paths under ``exclude`` (the judge and hidden splits)
are left out, so they never enter a candidate's run directory.

A commit is data a candidate controls, and git plumbing (``git mktree``, ``hash-object
--literally``, a raw object write) can build trees that ``git add`` never would. Before anything
is written, :func:`check_tree` walks the whole tree and refuses (:class:`UnsafeTree`):

- names that are empty, ``.`` or ``..``, contain ``/`` or NUL, or are not valid UTF-8;
- ``.git`` at any depth (also ``.GIT``, ``.git.``: what a case-insensitive or trailing-dot
  file system would read as ``.git``);
- two entries of one name in the same tree;
- any mode other than a regular file (``100644``), an executable (``100755``) or a directory
  (``040000``): symlinks (``120000``, which could point outside the run directory), submodules
  (gitlinks, ``160000``) and anything else;
- an entry whose object is not of the type its mode says.

Only then are the files written, each destination checked to resolve inside the target and
opened without following links (``O_NOFOLLOW``) and without blocking (``O_NONBLOCK``), and
written only when ``fstat`` says it is a regular file (a FIFO or device left in the target is
refused, never written to or waited on), so a half-written export never happens and a file can
never land outside the target.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pygit2

from evotree.core.errors import InvalidState

__all__ = ["ExportEntry", "UnsafeTree", "check_tree", "export_tree", "is_excluded"]

_BLOB = pygit2.GIT_FILEMODE_BLOB  # 0o100644
_EXEC = pygit2.GIT_FILEMODE_BLOB_EXECUTABLE  # 0o100755
_TREE = pygit2.GIT_FILEMODE_TREE  # 0o040000
_MODE_NAMES = {
    pygit2.GIT_FILEMODE_LINK: "a symlink (120000)",
    pygit2.GIT_FILEMODE_COMMIT: "a submodule (160000)",
}


class UnsafeTree(InvalidState):
    """A commit's tree holds an entry that cannot be exported safely (exit 10).

    ``details``: ``path`` (the entry, as readable text), ``rule`` (which rule it breaks) and
    ``commit``.
    """

    code = "unsafe_tree"


@dataclass(frozen=True)
class ExportEntry:
    """One file or directory of a checked tree: its relative path, git mode and object id."""

    path: str
    mode: int
    oid: pygit2.Oid


def is_excluded(path: str, exclude: list[str] | tuple[str, ...]) -> bool:
    """True when ``path`` (posix, relative) is one of ``exclude`` or inside one of them."""
    for pattern in exclude:
        prefix = pattern.rstrip("/")
        if path == prefix or path.startswith(prefix + "/"):
            return True
    return False


def _refuse(commit: str, path: str, rule: str, fix: str) -> UnsafeTree:
    return UnsafeTree(
        f"commit {commit[:10]}: tree entry {path!r} {rule}; evotree exports only plain files, executables "
        "and directories with ordinary names, so nothing is written outside the run directory",
        fix=fix,
        path=path,
        rule=rule,
        commit=commit,
    )


def _name_problem(raw: bytes) -> str | None:
    """Why a tree entry name is refused, or None."""
    if raw in (b"", b".", b".."):
        return f"is named {raw.decode()!r}" if raw else "has an empty name"
    if b"/" in raw:
        return "has a name containing '/' (an absolute or multi-part path)"
    if b"\0" in raw:
        return "has a name containing NUL"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "has a name that is not valid UTF-8"
    if text.lower().rstrip(". ") == ".git":
        return "is named .git (a repository's metadata: git hooks and config would run)"
    return None


def check_tree(
    repo: pygit2.Repository, commit: pygit2.Oid | str, *, exclude: list[str] | tuple[str, ...] = ()
) -> list[ExportEntry]:
    """Every entry :func:`export_tree` would write (directories before their contents).

    Raises :class:`UnsafeTree` on the first entry that breaks a rule (see the module doc); paths
    under ``exclude`` are not descended into, but an excluded entry's own name and mode are
    checked too.
    """
    head = str(commit)
    tree = repo[commit].peel(pygit2.Tree)
    out: list[ExportEntry] = []
    stack: list[tuple[pygit2.Tree, PurePosixPath]] = [(tree, PurePosixPath())]
    while stack:
        current, prefix = stack.pop()
        seen: set[bytes] = set()
        for entry in current:
            raw = (
                entry.raw_name
                if hasattr(entry, "raw_name")
                else entry.name.encode("utf-8", "surrogateescape")
            )
            shown = (prefix.as_posix() + "/" if prefix.parts else "") + raw.decode(
                "utf-8", "backslashreplace"
            )
            problem = _name_problem(raw)
            if problem is not None:
                raise _refuse(
                    head,
                    shown,
                    problem,
                    "rewrite the version without that entry (it cannot come from `git add`: "
                    "the tree was built with git plumbing); branch a clean version",
                )
            if raw in seen:
                raise _refuse(
                    head,
                    shown,
                    "appears twice in its directory",
                    "rewrite the version with one entry of that name; branch a clean version",
                )
            seen.add(raw)
            mode = entry.filemode
            if mode not in (_BLOB, _EXEC, _TREE):
                what = _MODE_NAMES.get(mode, f"of mode {mode:06o}")
                raise _refuse(
                    head,
                    shown,
                    f"is {what}: only files (100644), executables (100755) and "
                    "directories (040000) are exported",
                    f"replace it by the file(s) it stands for and commit: git rm --cached {shown} "
                    f"&& git add <the real file or directory at {shown}>",
                )
            rel = prefix / raw.decode("utf-8")
            rel_text = rel.as_posix()
            if is_excluded(rel_text, exclude):
                continue
            obj = repo.get(entry.id)
            want = pygit2.GIT_OBJECT_TREE if mode == _TREE else pygit2.GIT_OBJECT_BLOB
            if obj is None or obj.type != want:
                raise _refuse(
                    head,
                    shown,
                    "points to "
                    + (
                        "a missing object"
                        if obj is None
                        else f"a {obj.type_str} while its mode says {'tree' if mode == _TREE else 'blob'}"
                    ),
                    "rewrite the version from a consistent tree; branch a clean version",
                )
            out.append(ExportEntry(rel_text, mode, entry.id))
            if mode == _TREE:
                stack.append((obj, rel))
    return out


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def export_tree(
    repo: pygit2.Repository,
    commit: pygit2.Oid | str,
    target: Path,
    *,
    exclude: list[str] | tuple[str, ...] = (),
) -> int:
    """Write the files of ``commit`` under ``target`` (created); return the number of files.

    The whole tree is checked first (:func:`check_tree`): an unsafe entry raises
    :class:`UnsafeTree` and nothing is written. Symlinks and submodules are refused, not
    recreated or skipped.
    """
    entries = check_tree(repo, commit, exclude=exclude)
    target.mkdir(parents=True, exist_ok=True)
    root = os.path.realpath(target)
    count = 0
    # O_NONBLOCK: a FIFO left in the target cannot block the open (ENXIO without a reader); what
    # was opened must be a regular file (fstat below): never a FIFO, a device or a socket
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
    for entry in entries:
        dest = os.path.join(root, *entry.path.split("/"))
        parent = os.path.realpath(os.path.dirname(dest))
        if not _inside(parent, root) or not _inside(os.path.normpath(dest), root):
            raise _refuse(
                str(commit),
                entry.path,
                f"would be written outside {target}",
                "export into a fresh directory that holds no links",
            )
        if entry.mode == _TREE:
            if os.path.islink(dest):
                raise _refuse(
                    str(commit),
                    entry.path,
                    f"meets a link already at {dest}",
                    "export into a fresh directory that holds no links",
                )
            os.makedirs(dest, exist_ok=True)
            continue
        if os.path.islink(dest):
            raise _refuse(
                str(commit),
                entry.path,
                f"meets a link already at {dest}",
                "export into a fresh directory that holds no links",
            )
        try:
            fd = os.open(dest, flags, 0o755 if entry.mode == _EXEC else 0o644)
        except OSError as exc:
            raise _refuse(
                str(commit),
                entry.path,
                f"meets something at {dest} that cannot be written as a file ({exc.strerror})",
                "export into a fresh directory that holds no links",
            ) from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise _refuse(
                    str(commit),
                    entry.path,
                    f"meets a special file at {dest} (not written)",
                    "export into a fresh directory that holds no links or special files",
                )
            with os.fdopen(fd, "wb") as handle:
                fd = -1
                handle.write(repo[entry.oid].data)
                if entry.mode == _EXEC:
                    os.fchmod(handle.fileno(), 0o755)
        finally:
            if fd != -1:
                os.close(fd)
        count += 1
    return count
