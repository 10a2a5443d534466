"""Exporting a committed tree into a directory, without VCS history.

A run never sees a worktree: it gets the blobs of one commit, written by pygit2 (no ``.git``,
no other commits, no uncommitted edits). Paths under ``exclude`` (the judge and hidden splits)
are left out, so they never enter a candidate's run directory.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pygit2

__all__ = ["export_tree", "is_excluded"]


def is_excluded(path: str, exclude: list[str] | tuple[str, ...]) -> bool:
    """True when ``path`` (posix, relative) is one of ``exclude`` or inside one of them."""
    for pattern in exclude:
        prefix = pattern.rstrip("/")
        if path == prefix or path.startswith(prefix + "/"):
            return True
    return False


def export_tree(
    repo: pygit2.Repository, commit: pygit2.Oid | str, target: Path, *, exclude: list[str] | tuple[str, ...] = ()
) -> int:
    """Write the files of ``commit`` under ``target`` (created); return the number of files.

    Symlinks are recreated as symlinks (their targets are not followed); submodules are skipped.
    """
    tree = repo[commit].peel(pygit2.Tree)
    target.mkdir(parents=True, exist_ok=True)
    count = 0
    stack: list[tuple[pygit2.Tree, PurePosixPath]] = [(tree, PurePosixPath())]
    while stack:
        current, prefix = stack.pop()
        for entry in current:
            rel = prefix / entry.name
            rel_text = rel.as_posix()
            if is_excluded(rel_text, exclude):
                continue
            dest = target / rel_text
            if entry.filemode == pygit2.GIT_FILEMODE_TREE:
                dest.mkdir(exist_ok=True)
                stack.append((repo[entry.id], rel))
            elif entry.filemode == pygit2.GIT_FILEMODE_LINK:
                os.symlink(repo[entry.id].data.decode(), dest)
                count += 1
            elif entry.filemode in (pygit2.GIT_FILEMODE_BLOB, pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
                dest.write_bytes(repo[entry.id].data)
                if entry.filemode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE:
                    dest.chmod(0o755)
                count += 1
            # GIT_FILEMODE_COMMIT (submodule): nothing to export
    return count
