"""The judge's copy of the candidate: folders and regular files only, and a task repository's
git directory pruned at its base (moved out of :mod:`evotree.harness.sandbox`)."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["PRUNE_SECONDS", "CopyReport", "copy_regular_files"]

#: The most seconds host git may run pruning the git directories of one copy, all together.
PRUNE_SECONDS = 300.0


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
    A git directory (a ``.git`` folder, a bare repository or separate git directory whose
    ``HEAD``, ``objects`` or ``refs`` may be links, a bare object store: the guard's
    recogniser) is copied pruned at its base (:mod:`evotree.harness.git_prune`: the
    judge reads the task repository as the phase saw it, its future absent), or refused; as a
    phase's box prunes them (:func:`~evotree.harness.git_prune.prune_related`, after the walk,
    an enclosing repository first): a store nested in a repository's work tree, or beside its
    checkout, that shares its history is pruned at that repository's base, and the checkouts
    are tried against one another both ways (:func:`~evotree.harness.git_prune.relate_checkouts`),
    and once all are pruned every store's copy against every checkout's future, nested
    checkouts too (:func:`~evotree.harness.git_prune.cross_checked`). The walk is a loop
    (no folder depth makes it recurse).
    """
    from evotree.harness import git_prune, git_stores, git_untraced

    report = CopyReport()
    over = False
    deadline = time.monotonic() + PRUNE_SECONDS
    #: the git directories met in the walk, pruned after it (source, target, name)
    stores: list[tuple[Path, Path, str]] = []
    made: dict[Path, git_prune.PrunedCopy] = {}

    def refuse(rel: str, why: str) -> None:
        report.refused.append(f"{rel}: {why}")

    def over_limit(name: str) -> None:
        nonlocal over
        if not over:
            refuse(
                name,
                f"over the copy limit ({max_files} files, {max_bytes // 2**20} MiB); "
                "it and every later file were not copied",
            )
        over = True

    def entry(folder: Path, target: Path, rel: str, item: os.DirEntry) -> Path | None:
        """Copy one entry of ``folder``; a folder to walk next is returned, not walked here
        (the walk is a loop: no depth makes it recurse)."""
        name = f"{rel}/{item.name}" if rel else item.name
        try:
            info = item.stat(follow_symlinks=False)
        except OSError as exc:
            refuse(name, f"cannot be read ({exc.strerror})")
            return None
        mode = info.st_mode
        if stat.S_ISLNK(mode):
            refuse(name, f"symbolic link to {os.readlink(item.path)!r} (not followed)")
        elif stat.S_ISDIR(mode) and git_stores.is_git_dir(Path(item.path)):
            stores.append((Path(item.path), target / item.name, name))
        elif stat.S_ISDIR(mode):
            try:
                (target / item.name).mkdir(mode=0o755)
            except OSError as exc:  # a name too long for the copy's deeper path, say
                refuse(name, f"folder cannot be made in the copy ({exc.strerror}; not copied)")
                return None
            return Path(item.path)
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
            over_limit(name)
        else:
            try:
                copied = _copy_file(
                    Path(item.path), target / item.name, info, max_bytes - report.bytes
                )
            except OSError as exc:
                copied = f"cannot be copied ({exc.strerror})"
            if isinstance(copied, str):
                refuse(name, copied)
            else:
                report.files += 1
                report.bytes += copied
        return None

    def git_dir(source: Path, target: Path, name: str, outer: list[Path]) -> None:
        """A git directory (a ``.git`` folder, a bare repository or a separate git directory:
        :func:`evotree.harness.git_stores.is_git_dir`, the guard's own recogniser) goes across
        pruned at its base (what the phase saw, :mod:`evotree.harness.git_prune`), never
        whole: whatever the copy's reader runs finds no future in it; related to ``outer`` (the
        repositories whose work trees hold it or that it lies beside: their copies in ``made``).
        The copy's limits bound the pruning as it goes, and host git runs at most
        :data:`PRUNE_SECONDS` a copy."""
        if over:
            return
        budget = (max_files - report.files, max_bytes - report.bytes)
        if budget[0] <= 0:  # no file left to the copy: nothing is pruned
            over_limit(name)
            return
        try:
            made[source] = git_prune.prune_related(
                source, target, outer, made, deadline=deadline, budget=budget
            )
        except git_prune.OverLimit:
            over_limit(name)
            return
        # UnicodeError: a name the candidate wrote that is not UTF-8 - refused, never a crash
        except (git_prune.PruneError, OSError, subprocess.SubprocessError, UnicodeError) as exc:
            refuse(name, f"a git directory that cannot be pruned at its base: {exc} (not copied)")
            return
        count(source, target, name)

    def usage(target: Path) -> tuple[int, int]:
        files = [p for p in target.rglob("*") if p.is_file()]
        return len(files), sum(p.stat().st_size for p in files)

    def count(source: Path, target: Path, name: str) -> None:
        """The pruned copy in ``target`` counted in the copy's limits (removed when past them)."""
        files, size = usage(target)
        if report.files + files > max_files or report.bytes + size > max_bytes:
            shutil.rmtree(target, ignore_errors=True)
            made.pop(source, None)
            over_limit(name)
            return
        report.files += files
        report.bytes += size

    def relate(
        batch: list[tuple[Path, Path, str]],
        against: list[Path] | None = None,
        exempt: frozenset[tuple[Path, Path]] = frozenset(),
    ) -> None:
        """The checkouts (related to nothing, so pruned first) tried against one another, both
        ways (:func:`~evotree.harness.git_prune.relate_checkouts`), before any store related to
        them is pruned at their bases: one pruned again is counted again, one not kept
        refused. ``against``, ``exempt``: the last call's, over every store pruned
        (:func:`~evotree.harness.git_relations.cross_checked`)."""
        tops = {source: made[source] for source, _, _ in batch if source in made}
        sizes = {source: usage(copy.path) for source, copy in tops.items()}
        budgets = {
            source: (max_files - report.files + files, max_bytes - report.bytes + size)
            for source, (files, size) in sizes.items()
        }
        where = {source: (target, name) for source, target, name in batch}
        changes = git_prune.relate_checkouts(
            tops, deadline=deadline, budgets=budgets, against=against, exempt=exempt
        )
        for source, change in changes.items():
            target, name = where[source]
            report.files -= sizes[source][0]
            report.bytes -= sizes[source][1]
            made.pop(source, None)
            if isinstance(change, git_prune.OverLimit):
                over_limit(name)
            elif isinstance(change, git_prune.PruneError):
                refuse(
                    name,
                    f"a git directory that cannot be pruned at its base: {change} (not copied)",
                )
            else:
                made[source] = change
                count(source, target, name)

    if git_stores.is_git_dir(Path(src)):
        refuse(".", "the candidate folder is itself a git directory (not copied)")
        return report
    # depth first in name order, as a loop: each level is (its entries left, target, rel)
    stack: list[tuple[list[os.DirEntry], Path, str]] = []

    def enter(folder: Path, target: Path, rel: str) -> None:
        try:
            with os.scandir(folder) as it:
                items = sorted(it, key=lambda e: e.name, reverse=True)
        except OSError as exc:
            refuse(rel or ".", f"unreadable folder ({exc.strerror})")
            return
        stack.append((items, target, rel))

    enter(Path(src), Path(dst), "")
    while stack:
        items, target, rel = stack[-1]
        if not items:
            stack.pop()
            continue
        item = items.pop()
        sub = entry(Path(item.path).parent, target, rel, item)
        if sub is not None:
            enter(sub, target / item.name, f"{rel}/{item.name}" if rel else item.name)
    # the git directories, an enclosing (or checked-out) repository before those related to it
    outer = git_prune.relations([source for source, _, _ in stores])
    done: set[Path] = set()
    pending = stores
    first = True
    while pending:
        ready = [s for s in pending if all(o in done for o in outer[s[0]])]
        for source, target, name in ready or pending:
            if ready:
                git_dir(source, target, name, outer[source])
            else:
                refuse(name, "its enclosing repositories name one another (not copied)")
            done.add(source)
        if first and ready:
            relate(ready)
        first = False
        pending = [s for s in pending if s[0] not in done]
    if made and len(stores) > 1:
        # every store's final copy tried against every store's future, nested ones too (a .git
        # file or folder above the task's checkout makes it nested: N1), refused ones at their
        # own HEADs (a bare task store whose pruning passed the deadline)
        relate(stores, *git_prune.cross_checked([source for source, _, _ in stores]))
    # every git directory in it was pruned here: the judge's start need not prune it again
    git_untraced.note_pruned_copy(Path(dst))
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
