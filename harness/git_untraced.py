"""An untraced phase's (the judge's) task repositories, bound pruned as a traced phase's are
(:func:`before_untraced`): its copies live in a private, locked folder of this process
(:func:`_untraced_root`, :func:`_locked_folder`), removed when the phase's box is over
(:func:`release_untraced`) or when the process ends; what a process that died left is swept
(:func:`_sweep`). The judge's copy of the candidate, pruned as it was made, is noted
(:func:`note_pruned_copy`) and not searched again. Split off :mod:`evotree.harness.git_guard`.
"""

from __future__ import annotations

import atexit
import fcntl
import os
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from evotree.harness import git_prune
from evotree.harness.git_guard import before_phase
from evotree.harness.git_phase_search import _search

__all__ = ["before_untraced", "note_pruned_copy", "release_untraced"]

#: Phases run in threads of one process (the local executor): the lists below change under it.
_UNTRACED_LOCK = threading.Lock()
#: The judge's copies of candidates this process made (folder -> device, inode, and an
#: ``O_PATH`` descriptor of the folder that this process holds open: while it is held the
#: folder's inode cannot be freed, so a folder made later at the path never gets the same
#: device and inode — J3 of tests/test_redteam_s14_judge_start_redteam.py):
#: :func:`evotree.harness.sandbox_copy.copy_regular_files` pruned every git directory in them
#: with the guard's own recogniser (or refused it), so an untraced phase's start does not search
#: or prune them again (:func:`note_pruned_copy`).
_PRUNED_COPIES: dict[str, tuple[int, int, int]] = {}


def note_pruned_copy(folder: Path) -> None:
    """Say that ``folder`` is a copy whose git directories this process pruned as it made it
    (the judge's copy of the candidate): an untraced phase reading it neither searches nor
    prunes it again — nothing of it can be hidden by
    :data:`~evotree.harness.git_guard.MAX_PRUNED`, and host git does not
    run twice on it. Known by path, device and inode, the inode held by an open descriptor (a
    folder made later at the path is not taken, even on a file system that reuses inodes);
    noted copies that are gone, or whose path now names another folder, are forgotten here and
    their descriptors closed."""
    with _UNTRACED_LOCK:
        for path, (dev, ino, fd) in list(_PRUNED_COPIES.items()):
            try:
                info = os.lstat(path)
                same = (info.st_dev, info.st_ino) == (dev, ino)
            except OSError:
                same = False
            if not same:
                del _PRUNED_COPIES[path]
                _close_quietly(fd)
        try:
            fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return
        info = os.fstat(fd)
        key = str(Path(folder).absolute())
        if key in _PRUNED_COPIES:
            _close_quietly(_PRUNED_COPIES.pop(key)[2])
        _PRUNED_COPIES[key] = (info.st_dev, info.st_ino, fd)


def _close_quietly(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _noted_copies(roots: Iterable[Path]) -> list[Path]:
    """Those of ``roots`` that :func:`note_pruned_copy` noted, still the same folder (not a
    link, same device and inode — an inode the note holds, so never another folder's)."""
    out = []
    for root in roots:
        want = _PRUNED_COPIES.get(str(root))
        try:
            info = os.lstat(root)
        except OSError:
            continue
        if (
            want is not None
            and stat.S_ISDIR(info.st_mode)
            and (info.st_dev, info.st_ino) == want[:2]
        ):
            out.append(root)
    return out


#: This process's untraced phases' copies: each removed when its phase's box is over
#: (:func:`release_untraced`), what is left when the process ends (atexit, the backstop).
_UNTRACED: list[Path] = []
_ATEXIT: list[bool] = []
#: The lock file in each folder of copies, held (flock) by this process while it lives: a
#: sweep by another process (another PID namespace too) removes only a folder whose lock it
#: can take, that is one whose process is gone.
_LOCK_NAME = "lock"
_LOCKS: dict[Path, int] = {}


def _untraced_root() -> Path | None:
    """The private folder of untraced phases' pruned copies (this user's); ``None`` where it
    cannot be made private."""
    from evotree.harness.sandbox_tracer_build import owned_private, tracer_cache

    cache = tracer_cache()
    root = cache / "untraced-copies"
    try:
        for folder in (cache, root):
            missing = [p for p in (folder, *folder.parents) if not os.path.lexists(p)]
            for made in reversed(missing):  # each folder made here is 0700 whatever the umask
                try:
                    os.mkdir(made, 0o700)
                except FileExistsError:
                    continue
                _make_private(made)
            _make_private(folder)  # an existing one of this user's is made private too
            if not owned_private(folder):  # another's, or a link: never entered
                return None
    except OSError:
        return None
    return root


def _make_private(folder: Path) -> None:
    """Mode 0700 on ``folder`` where it is this user's folder (never through a link; another's,
    or a link, is left as it is for :func:`owned_private` to refuse): as the tracer build makes
    its cache, so that a umask of 002 leaves no folder of evotree's group-writable."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        info = os.fstat(fd)
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != 0o700:
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def _sweep(root: Path) -> None:
    """Remove the copies a process that is gone left in ``root`` (it died before its exit):
    a folder whose lock file's flock can be taken (its process, in whatever PID namespace,
    holds it while it lives). A folder with no lock file is left (one being made, or made by
    an evotree before the locks): a pid alone cannot say a process is gone in another
    namespace."""
    for entry in os.scandir(root):
        pid = entry.name.split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            fd = os.open(
                os.path.join(entry.path, _LOCK_NAME),
                os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK,
            )
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # held: its process lives
            os.close(fd)
            continue
        try:
            shutil.rmtree(entry.path, ignore_errors=True)
        finally:
            os.close(fd)


def _locked_folder(root: Path) -> Path:
    """A new folder of this process's copies in ``root``, its lock file held: made under a name
    no sweep takes (``.``), locked, then renamed to ``<pid>-...`` (never seen unlocked)."""
    staging = Path(tempfile.mkdtemp(prefix=f".{os.getpid()}-", dir=root))
    try:
        fd = os.open(
            staging / _LOCK_NAME,
            os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        folder = root / staging.name[1:]
        if os.path.lexists(folder):
            raise FileExistsError(folder)
        os.rename(staging, folder)
    except OSError:
        os.close(fd)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _LOCKS[folder] = fd
    return folder


def _unlock(folder: Path) -> None:
    fd = _LOCKS.pop(folder, None)
    if fd is not None:
        os.close(fd)


def _remove_untraced() -> None:
    with _UNTRACED_LOCK:
        folders = list(_UNTRACED)
        _UNTRACED.clear()
    for folder in folders:
        shutil.rmtree(folder, ignore_errors=True)
        _unlock(folder)


def release_untraced(argv: Iterable[str]) -> list[Path]:
    """Remove the pruned copies that the box command line ``argv`` (:func:`before_untraced`'s
    binds in it) put in place, once that box is over: each untraced phase's copies live as long
    as its box, not as long as the process (a search of many judge phases in one process would
    otherwise keep one copy of every task repository per phase). Folders of other phases —
    another thread's box still running — are left. Returns the folders removed."""
    words = [str(word) for word in argv]
    with _UNTRACED_LOCK:
        done = [
            folder
            for folder in _UNTRACED
            if any(w == str(folder) or w.startswith(str(folder) + os.sep) for w in words)
        ]
        for folder in done:
            _UNTRACED.remove(folder)
    for folder in done:
        shutil.rmtree(folder, ignore_errors=True)
        _unlock(folder)
    return done


def before_untraced(
    read_write: Iterable[Path | str],
    read_only: Iterable[Path | str],
    skip: Iterable[Path | str],
    written: Iterable[Path | str] = (),
) -> list[tuple[str, Path, Path]]:
    """:func:`~evotree.harness.git_guard.before_phase` for a phase that runs without a trace (the
    judge): its task repositories — in the operator's read paths, say — are bound pruned too (or
    hidden), never whole. The copies and their snapshot are made in a private folder of this
    process, removed when the phase's box is over (the runner hands the box's command line to
    :func:`release_untraced`), what is left when the process ends (one that died is swept by a later
    call); there is no trace to seal a row, so nothing is compared after the phase. The judge's copy
    of the candidate (:func:`note_pruned_copy`: pruned as it was made) is not searched again; more
    than :data:`~evotree.harness.git_guard.MAX_PRUNED` repositories in the folders the candidate's
    code can write, and folders beyond a cut of one, are hidden (said in the run's record:
    :func:`~evotree.harness.git_guard.take_notes`); the operator's folders are not capped.
    :class:`~evotree.harness.git_prune.PruneError` when no private folder can be made while
    repositories are there to prune (never bound whole)."""
    read_write, read_only, skip = list(read_write), list(read_only), list(skip)
    written = list(written)
    if not git_prune.pruning():
        return []
    root = _untraced_root()
    skip = [*skip, *_noted_copies(Path(p).absolute() for p in read_only)]
    if root is None:
        found = _search(read_write, read_only, skip, written)
        if found[0] or found[5]:
            raise git_prune.PruneError(
                "no private folder for an untraced phase's pruned task repositories"
            )
        return []
    _sweep(root)
    try:
        folder = _locked_folder(root)
    except OSError as exc:
        raise git_prune.PruneError(
            f"no locked folder for an untraced phase's pruned task repositories: {exc}"
        ) from exc
    try:
        binds = before_phase(
            read_write,
            folder / "phase",
            read_only,
            skip,
            written=written,
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        _unlock(folder)
        raise
    if not binds:
        shutil.rmtree(folder, ignore_errors=True)
        _unlock(folder)
        return []
    with _UNTRACED_LOCK:
        if not _ATEXIT:
            atexit.register(_remove_untraced)
            _ATEXIT.append(True)
        _UNTRACED.append(folder)
    return binds
