"""Opening files a phase wrote without following what the phase put there.

A sandboxed phase can leave anything in the folders it writes (its evidence folder, the
candidate): a symbolic link to a host file it cannot see itself (``rollouts.jsonl ->
~/.ssh/id_rsa``), a link to a folder, a FIFO that blocks whoever opens it, a hard link. evotree
reads those folders *outside* the sandbox, with the user's rights, so every reader of
phase-written files opens them here:

- each path component is opened relative to the one before (``openat``) with ``O_NOFOLLOW``:
  a link anywhere on the way — the file itself or a folder above it, below ``root`` — is refused
  (``root`` itself is evotree's own folder, not the phase's);
- the file is opened ``O_NONBLOCK`` (a FIFO cannot block the open) and accepted only when
  ``fstat`` of the open descriptor says it is a regular file (what is checked is what is read:
  no window between a check and the open);
- a refusal is an :class:`UnsafeFile` (an ``OSError``) whose ``reason`` says what was found;
  callers record it as a finding or say it, and never read the file.

:func:`fd_path` names an open descriptor as ``/proc/self/fd/N`` for a library that takes a path
(DuckDB): opening that name reopens the very file checked, whatever the path names by then.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "UnsafeFile",
    "describe",
    "fd_path",
    "open_regular",
    "opened_regular",
    "read_regular",
    "regular_files_in",
]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class UnsafeFile(OSError):
    """A phase-written path that is not a regular file reached without links: not opened/read.

    ``path``: the path asked for; ``reason``: what was found (a symbolic link, a FIFO, ...).
    """

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        super().__init__(errno.EPERM, f"{path}: {reason} (not read)")
        self.path = str(path)
        self.reason = reason


def describe(mode: int) -> str:
    """What kind of file ``mode`` (``st_mode``) is, in words."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISREG(mode):
        return "a regular file"
    return "a special file"


def _open_dir_chain(root: int, parts: list[str], shown: str) -> int:
    """A descriptor of the folder ``parts`` below the folder descriptor ``root`` (no links)."""
    fd = os.dup(root)
    try:
        for part in parts:
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    try:
                        kind = describe(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode)
                    except OSError:
                        kind = "not a folder"
                    raise UnsafeFile(shown, f"{part} on its way is {kind}") from None
                raise
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_regular(root: str | os.PathLike[str], rel: str | os.PathLike[str]) -> int:
    """A read-only descriptor (close-on-exec) of the regular file ``rel`` under the folder ``root``.

    Raises :class:`UnsafeFile` when ``rel`` or a folder on its way (below ``root``) is a link, or
    the file is not a regular file (FIFO, socket, device, folder); ``FileNotFoundError`` when it is
    not there. ``rel`` must be relative and hold no ``..``.
    """
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise UnsafeFile(rel, "not a plain relative path")
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        folder = _open_dir_chain(top, parts[:-1], str(rel))
    finally:
        os.close(top)
    try:
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFile(rel, "a symbolic link") from None
            raise
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise UnsafeFile(rel, describe(info.st_mode))
        return fd
    finally:
        os.close(folder)


@contextmanager
def opened_regular(root: str | os.PathLike[str], rel: str | os.PathLike[str]) -> Iterator[int]:
    """:func:`open_regular` as a context manager (the descriptor is closed on exit)."""
    fd = open_regular(root, rel)
    try:
        yield fd
    finally:
        os.close(fd)


def read_regular(
    root: str | os.PathLike[str], rel: str | os.PathLike[str], *, limit: int | None = None
) -> bytes:
    """The bytes of the regular file ``rel`` under ``root`` (:func:`open_regular`); at most
    ``limit`` bytes when given."""
    with opened_regular(root, rel) as fd, os.fdopen(os.dup(fd), "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)


def fd_path(fd: int) -> str:
    """``/proc/self/fd/N``: a path that opens the file of ``fd`` itself (for libraries that take a
    path), whatever its own path names now."""
    return f"/proc/self/fd/{fd}"


def regular_files_in(
    root: str | os.PathLike[str], rel: str | os.PathLike[str] = ""
) -> tuple[list[str], dict[str, str]]:
    """The entries of the folder ``rel`` under ``root``, without following links: (names of the
    regular files, {name: what it is} of every other entry but plain folders). The folder
    itself is reached without links (:class:`UnsafeFile` otherwise)."""
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        parts = [p for p in Path(rel).parts if p not in ("", ".")]
        folder = _open_dir_chain(top, parts, str(rel) or ".")
    finally:
        os.close(top)
    regular: list[str] = []
    other: dict[str, str] = {}
    try:
        for name in sorted(os.listdir(folder)):
            try:
                mode = os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode
            except OSError:
                continue
            if stat.S_ISREG(mode):
                regular.append(name)
            elif not stat.S_ISDIR(mode):
                other[name] = describe(mode)
    finally:
        os.close(folder)
    return regular, other
