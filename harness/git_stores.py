"""What git reads as a repository or an object store: the one recogniser of the phases' search
(:func:`evotree.harness.git_search.find_git_dirs`) and the judge's copy of the candidate
(:func:`evotree.harness.sandbox_copy.copy_regular_files`). A store is known by what git itself
reads there (packs and indexes by git's magic, loose objects by their names), a store-named link
as git takes it (followed; through ``/proc`` or ``/dev``, looping, unreadable or too large: a
store, failing closed); never by a name alone.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["MAX_LINKED_NAMES", "is_git_dir", "is_object_store"]


def _is_bare(path: Path) -> bool:
    """``HEAD``, ``objects`` and ``refs`` there as git takes them: ``HEAD`` a regular file or a
    link (git reads a link naming ``refs/...`` as a symbolic reference and follows any other),
    ``objects`` and ``refs`` folders or links (git follows them: a store shared by checkouts).
    A link is recognised, never followed here: the prune refuses what is not self-contained
    (:func:`evotree.harness.git_prune._check_self_contained`), so such a directory is hidden
    or refused, never passed as plain folders."""
    try:
        head = os.lstat(path / "HEAD").st_mode
        objects = os.lstat(path / "objects").st_mode
        refs = os.lstat(path / "refs").st_mode
    except OSError:
        return False
    return (
        (stat.S_ISREG(head) or stat.S_ISLNK(head))
        and (stat.S_ISDIR(objects) or stat.S_ISLNK(objects))
        and (stat.S_ISDIR(refs) or stat.S_ISLNK(refs))
    )


#: The folders of an object store, besides its loose objects' two-hex-digit ones, whose
#: entries git reads as the store's (:func:`is_object_store`).
_STORE_DIRS = ("pack", "info")


def _hex(name: str, lengths: tuple[int, ...]) -> bool:
    return len(name) in lengths and all(c in "0123456789abcdef" for c in name)


def is_object_store(path: Path) -> bool:
    """Whether the folder ``path`` is laid out as a git object store (what an ``objects`` link
    or an alternate names), by whatever git itself reads there, whatever the names: a ``pack/``
    folder git reads packs from (:func:`_reads_pack`: any pack or index by git's magic,
    never by its name), a two-hex-digit folder holding a loose object's
    name, or an ``info/`` folder holding ``alternates`` or ``packs``. Outside a git directory
    it is refused by the judge's copy and hidden from a phase like a git directory that cannot
    be pruned: every object of it (the future's too) is readable by any reader.

    A link of one of those names counts as git takes it: followed (to a folder of another name
    elsewhere, M1 of the s15 guard red team's second round), its folder read by the same rules;
    one whose folder cannot be read for another reason than its absence counts (fails closed)."""
    try:
        with os.scandir(path) as it:
            subs = [
                e
                for e in it
                if (e.name in _STORE_DIRS or _is_fanout(e.name))
                and (e.is_dir(follow_symlinks=False) or e.is_symlink())
            ]
    except OSError:
        return False
    for sub in subs:
        linked = sub.is_symlink()
        if linked and _through_proc(sub.path):
            return True  # /proc/self/cwd, /proc/self/fd/N: what the box's git reads there is
            # not what this process would (N1 of the s15 guard red team's third round)
        try:
            names = _linked_names(sub.path) if linked else os.listdir(sub.path)
        except OSError as exc:
            if linked and exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                return True  # a linked folder that cannot be read: taken for a store
            continue
        if names is None:
            return True  # a linked folder too large to list within the bound: fails closed
        if sub.name == "pack" and _reads_pack(Path(sub.path), names):
            return True
        if sub.name == "info" and any(n in ("alternates", "packs") for n in names):
            return True
        if _is_fanout(sub.name) and any(_hex(n, (38, 62)) for n in names):
            return True
    return False


#: the most names a folder reached through a store-named link is listed for (more: taken for a
#: store), and how many such folders' names are remembered (by device, inode and times), so
#: that a million links to one folder list it once (N2 of the s15 guard red team's third round)
MAX_LINKED_NAMES = 10_000
_LINKED_SEEN: dict[tuple[int, int, int, int], list[str] | None] = {}


def _linked_names(path: str) -> list[str] | None:
    """The names of the folder the link ``path`` leads to, None past :data:`MAX_LINKED_NAMES`;
    each folder listed once while unchanged."""
    info = os.stat(path)
    key = (info.st_dev, info.st_ino, info.st_mtime_ns, info.st_ctime_ns)
    if key in _LINKED_SEEN:
        return _LINKED_SEEN[key]
    names: list[str] | None = []
    with os.scandir(path) as it:
        for entry in it:
            if len(names) >= MAX_LINKED_NAMES:
                names = None
                break
            names.append(entry.name)
    if len(_LINKED_SEEN) > 4096:
        _LINKED_SEEN.clear()
    _LINKED_SEEN[key] = names
    return names


def _through_proc(path: str, hops: int = 40) -> bool:
    """Whether resolving ``path`` as the kernel does passes through ``/proc`` or ``/dev`` (whose
    links name the reader's own folder or descriptors, not this process's), or loops: each
    component resolved in turn, every link's target followed as text, never through a magic
    link of this process."""
    pending = list(Path(path).parts)
    resolved = "/"
    while pending:
        part = pending.pop(0)
        if part == "/":
            resolved = "/"
            continue
        if part in ("", "."):
            continue
        if part == "..":
            resolved = os.path.dirname(resolved) or "/"
            continue
        candidate = os.path.join(resolved, part)
        if candidate in ("/proc", "/dev") or candidate.startswith(("/proc/", "/dev/")):
            return True
        if os.path.islink(candidate):
            hops -= 1
            if hops < 0:
                return True  # a loop: git gives up as ELOOP, the guard fails closed
            try:
                target = os.readlink(candidate)
            except OSError:
                return True
            pending = list(Path(target).parts) + pending
            continue
        resolved = candidate
    return False


def _starts_with(path: Path, magic: bytes) -> bool:
    """Whether the file ``path`` starts with ``magic``; a link counts (git follows it, the
    guard never does)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    try:
        return os.read(fd, len(magic)) == magic
    except OSError:
        return False
    finally:
        os.close(fd)


#: git's magic: a pack, a pack index (version 2 and later), a multi-pack index.
_PACK_MAGIC = b"PACK"
_IDX_MAGIC = b"\377tOc"
_MIDX_MAGIC = b"MIDX"


def _reads_pack(folder: Path, names: list[str]) -> bool:
    """Whether git reads objects from the ``pack/`` folder ``folder`` holding ``names``: a pack
    under any name (git reads every ``*.idx`` beside its ``*.pack``; a pack alone can be
    indexed), a pack index or a ``multi-pack-index`` — each by git's own magic (``PACK``,
    ``\\377tOc``, ``MIDX``), whatever its name (``pack-*`` too: K7 of the s15 guard red team),
    so that a dataset's ``*.idx``/``*.bin`` (J9), even named ``pack-00000.idx``, is no store.
    A version 1 index has no magic, but git reads it only beside a pack, which has one."""
    if "multi-pack-index" in names and _starts_with(folder / "multi-pack-index", _MIDX_MAGIC):
        return True
    return any(
        (n.endswith(".pack") and _starts_with(folder / n, _PACK_MAGIC))
        or (n.endswith(".idx") and _starts_with(folder / n, _IDX_MAGIC))
        for n in names
    )


def is_git_dir(path: Path) -> bool:
    """Whether the folder ``path`` is a git directory: a folder named ``.git`` (not a link; one
    that cannot be looked at for another reason than its absence counts), or one holding ``HEAD`` (a regular file or a link), ``objects`` and ``refs`` (folders or
    links) — a bare repository or a separate git directory — or a bare object store
    (:func:`is_object_store`). The one recogniser of task repositories: the phases' search
    (:func:`find_git_dirs`) and the judge's copy of the candidate
    (:func:`evotree.harness.sandbox_copy.copy_regular_files`) both use it; what it takes is
    pruned, or hidden/refused where it cannot be."""
    if path.name == ".git":
        try:
            return stat.S_ISDIR(os.lstat(path).st_mode)
        except (FileNotFoundError, NotADirectoryError):
            return False  # absent (or its folder is a file)
        except OSError:  # past PATH_MAX, say: taken for one, never for absent (M6, round 2)
            return True
    return _is_bare(path) or is_object_store(path)


def _is_fanout(name: str) -> bool:
    """A loose-object folder's name: two hex digits."""
    return len(name) == 2 and all(c in "0123456789abcdef" for c in name)
