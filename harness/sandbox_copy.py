"""The judge's copy of the candidate: folders and regular files only, and a task repository's
git directory pruned at its base (moved out of :mod:`evotree.harness.sandbox`)."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CopyReport", "copy_regular_files"]


@dataclass
class CopyReport:
    """What :func:`copy_regular_files` copied and what it refused (one line per refused entry)."""

    files: int = 0
    bytes: int = 0
    refused: list[str] = field(default_factory=list)


def copy_regular_files(src: Path, dst: Path, *, max_files: int, max_bytes: int) -> CopyReport:
    """Copy the tree ``src`` into the existing folder ``dst``: folders and regular files only.

    Refused (and reported, never followed or opened): symbolic links, hard links (a regular file
    with more than one name), FIFOs, sockets, devices; files past ``max_files`` files or
    ``max_bytes`` bytes in all. Files are opened with ``O_NOFOLLOW`` and checked again after
    opening, so an entry swapped for a link meanwhile is refused too. Copies are mode 0644, or
    0755 when the owner could execute the original (folders 0755): no set-id bits survive.
    A ``.git`` folder is copied pruned at its base (:mod:`evotree.harness.git_prune`: the
    judge reads the task repository as the phase saw it, its future absent), or refused.
    """
    report = CopyReport()
    over = False

    def refuse(rel: str, why: str) -> None:
        report.refused.append(f"{rel}: {why}")

    def walk(folder: Path, target: Path, rel: str) -> None:
        nonlocal over
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            refuse(rel or ".", f"unreadable folder ({exc.strerror})")
            return
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as exc:
                refuse(name, f"cannot be read ({exc.strerror})")
                continue
            mode = info.st_mode
            if stat.S_ISLNK(mode):
                refuse(name, f"symbolic link to {os.readlink(entry.path)!r} (not followed)")
            elif stat.S_ISDIR(mode) and entry.name == ".git":
                git_dir(Path(entry.path), target / entry.name, name)
            elif stat.S_ISDIR(mode):
                (target / entry.name).mkdir(mode=0o755)
                walk(Path(entry.path), target / entry.name, name)
            elif not stat.S_ISREG(mode):
                kind = (
                    "FIFO"
                    if stat.S_ISFIFO(mode)
                    else "socket"
                    if stat.S_ISSOCK(mode)
                    else "device"
                    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
                    else "special file"
                )
                refuse(name, f"{kind} (not opened)")
            elif info.st_nlink > 1:
                refuse(name, f"hard link ({info.st_nlink} names for one file; not copied)")
            elif over or report.files + 1 > max_files or report.bytes + info.st_size > max_bytes:
                if not over:
                    refuse(
                        name,
                        f"over the copy limit ({max_files} files, {max_bytes // 2**20} MiB); "
                        "it and every later file were not copied",
                    )
                over = True
            else:
                copied = _copy_file(
                    Path(entry.path), target / entry.name, info, max_bytes - report.bytes
                )
                if isinstance(copied, str):
                    refuse(name, copied)
                else:
                    report.files += 1
                    report.bytes += copied

    def git_dir(source: Path, target: Path, name: str) -> None:
        """A task repository's git directory goes across pruned at its base (what the phase
        saw, :mod:`evotree.harness.git_prune`), never whole: whatever the copy's reader runs
        finds no future in it."""
        from evotree.harness import git_prune

        nonlocal over
        if over:
            return
        try:
            git_prune.prune_copy(source, target)
        except (git_prune.PruneError, OSError) as exc:
            refuse(name, f"a git directory that cannot be pruned at its base: {exc} (not copied)")
            return
        made = [p for p in target.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in made)
        if report.files + len(made) > max_files or report.bytes + size > max_bytes:
            shutil.rmtree(target, ignore_errors=True)
            refuse(
                name,
                f"over the copy limit ({max_files} files, {max_bytes // 2**20} MiB); "
                "it and every later file were not copied",
            )
            over = True
            return
        report.files += len(made)
        report.bytes += size

    walk(Path(src), Path(dst), "")
    return report


def _copy_file(src: Path, dst: Path, before: os.stat_result, budget: int) -> int | str:
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return (
            "symbolic link (not followed)"
            if exc.errno == errno.ELOOP
            else f"cannot be opened ({exc.strerror})"
        )
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_nlink > 1
            or (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino)
        ):
            return "changed into a link or special file while being copied (not copied)"
        mode = 0o755 if info.st_mode & stat.S_IXUSR else 0o644
        out = os.open(
            dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode
        )
        try:
            copied = 0
            while copied <= budget:
                try:
                    n = os.copy_file_range(fd, out, 1 << 24)
                except OSError as exc:
                    if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                        raise
                    n = os.sendfile(out, fd, None, 1 << 24)
                if n == 0:
                    break
                copied += n
        finally:
            os.close(out)
        if copied > budget:
            os.unlink(dst)
            return "grew past the copy limit while being copied (not copied)"
        return copied
    finally:
        os.close(fd)
