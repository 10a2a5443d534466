"""What one phase's start searches, and what it hides or refuses (:func:`_search`,
:func:`_lift_long`): the task repositories of its read-write folders and of its read-only ones
(each to its bound; the folders the operator attests hold none, :data:`ENV_NO_REPOS`, left out),
the folders beyond a cut of a read-only folder the candidate's code writes hidden (at most
:data:`MAX_HIDDEN_CUTS`), a cut of any other refused (:class:`ReadPathCut`), a repository whose
path cannot be a mount point hidden with a parent. Split off :mod:`evotree.harness.git_guard`,
whose :func:`~evotree.harness.git_guard.before_phase` prunes, hides and binds what it returns.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from evotree.harness import git_prune
from evotree.harness.git_search import find_git_dirs

__all__ = ["ENV_NO_REPOS", "MAX_HIDDEN_CUTS", "MAX_READ_ONLY_ENTRIES", "ReadPathCut"]

#: How many entries of each of a phase's read-only folders are searched (the operator's data
#: may be large: about two seconds on a warm cache here, :func:`find_git_dirs`). A task
#: repository beyond a cut would be bound whole — an earlier phase can write into a read-only
#: folder (the prepare phase into the run directory) — and a row would flag every honest run
#: reading a big dataset, so a cut refuses the phase (:class:`ReadPathCut`) with the way out:
#: :data:`ENV_NO_REPOS`.
MAX_READ_ONLY_ENTRIES = 2_000_000
#: The operator's environment (never a config a candidate writes): folders, ``os.pathsep``
#: apart, that the operator attests hold no git repository (a dataset of millions of files).
#: The read-only search does not enter them; one that holds or lies in a read-write folder of
#: the phase or a folder the candidate's code wrote (``written``: the shared cache), or lies in
#: a read-only folder holding one (the run directory, which earlier phases write), is searched
#: all the same.
ENV_NO_REPOS = "EVOTREE_READ_PATHS_WITHOUT_REPOS"


class ReadPathCut(git_prune.PruneError):
    """A read-only folder could not be searched whole for task repositories (past
    :data:`MAX_READ_ONLY_ENTRIES` entries or :data:`~evotree.harness.git_search.MAX_DEPTH`
    folders): the phase is refused rather than a repository beyond the cut bound whole. ``fix``
    says the way out."""

    def __init__(self, root: Path, cut: str, *, written: bool = False) -> None:
        self.root = root
        self.fix = (
            f"{root} holds a folder the phases write (the run directory): what an earlier "
            "phase put there flooded it; the run cannot be guarded"
            if written
            else f"if {root} holds no git repository, name it in {ENV_NO_REPOS} in evotree's "
            "environment (it is then not searched); else give the phase a smaller read path"
        )
        super().__init__(
            f"the read path {root} could not be searched whole for task repositories ({cut}); "
            f"{self.fix}"
        )


def _attested(
    read_write: Sequence[Path], read_only: Sequence[Path], written: Sequence[Path] = ()
) -> list[Path]:
    """The folders of :data:`ENV_NO_REPOS` the search may leave out for this phase (module
    data above: never one an earlier phase or this one can write)."""
    words = [
        w
        for w in os.environ.get(ENV_NO_REPOS, "").split(os.pathsep)
        if w.strip() and os.path.isabs(w)
    ]
    if not words:
        return []
    writes = [*read_write, *written]
    rw_roots = [
        r
        for r in read_only
        if any(rw == r or r in rw.parents or _ident(r) in _chain(rw) for rw in writes)
    ]
    mounts = _mount_points()
    out = []
    for word in words:
        path = Path(os.path.normpath(word))
        # a folder the candidate writes (read-write, or ``written``: the shared cache), one in
        # it or one holding it is searched all the same (K5 of the s15 guard red team: a folder
        # holding the cache left it unsearched) - by the folders themselves, whatever the name:
        # a link or a bind of a folder holding the cache is that folder (M5 of its second round)
        if any(rw == path or path in rw.parents or rw in path.parents for rw in writes) or any(
            r == path or r in path.parents for r in rw_roots
        ):
            continue
        chain = _chain(path)
        aliases = _aliases(path, mounts)
        if (
            mounts is None
            or not chain
            or any(aliases & _chain(rw) or _ident(rw) in chain for rw in writes)
            or any(_ident(r) in chain for r in rw_roots)
        ):
            continue  # one that cannot be told apart is searched (fails closed)
        out.append(path)
    return out


def _ident(path: Path | str) -> tuple[int, int] | None:
    """Device and inode of the folder ``path`` (links followed); ``None`` where it cannot be
    read."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _chain(path: Path | str) -> set[tuple[int, int]]:
    """Device and inode of ``path`` (its links resolved) and of each folder above it: the
    folders it lies in, whatever names (links, binds) reach them."""
    real = Path(os.path.realpath(path))
    return {i for i in (_ident(p) for p in (real, *real.parents)) if i is not None}


def _mount_points() -> list[Path] | None:
    """This process's mount points (``/proc/self/mountinfo``); ``None`` where it cannot be
    read."""
    try:
        with open("/proc/self/mountinfo", "rb") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    out = []
    for line in lines:
        fields = line.split(b" ")
        if len(fields) > 4:
            raw = fields[4].decode("unicode_escape").encode("latin-1")  # \040 and the like
            out.append(Path(os.fsdecode(raw)))
    return out


def _aliases(path: Path, mounts: Sequence[Path] | None) -> set[tuple[int, int]]:
    """Device and inode of the folder ``path`` (its links resolved) and of every mount point
    at or below it (a bind there reaches another folder under its own name)."""
    real = Path(os.path.realpath(path))
    out = {_ident(real)}
    for mount in mounts or ():
        if mount == real or real in mount.parents:
            out.add(_ident(mount))
    out.discard(None)
    return out  # type: ignore[return-value]


#: How many folders beyond a cut of a read-only folder the candidate's code writes are hidden
#: (an empty folder bound over each); past it the folders above them are (:func:`_coarsen`).
MAX_HIDDEN_CUTS = 256


def _coarsen(root: Path, paths: list[Path], keep: Sequence[Path], most: int) -> list[Path] | None:
    """At most ``most`` folders that hide all of ``paths`` (folders left unsearched under
    ``root``): the deepest lifted to their parents until few enough, never a folder holding one
    of ``keep`` (the phase's read-write and masked folders); ``root`` itself where it holds none.
    ``None`` where no such set is small enough."""
    out = list(dict.fromkeys(paths))
    while len(out) > most:
        deepest = max(len(p.parts) for p in out)
        lifted = []
        for path in out:
            if len(path.parts) == deepest:
                path = path.parent
                if any(path == k or path in k.parents for k in keep):
                    return None
            lifted.append(path)
        if root in lifted:
            return [root] if most > 0 else None
        out = list(dict.fromkeys(lifted))
        there = set(out)
        out = [p for p in out if not any(a in there for a in p.parents)]
    return out


#: The longest path a folder to hide may have: bwrap makes each mount point below its own new
#: root, so a path near ``PATH_MAX`` (4,096 bytes) cannot be a mount point.
_MOUNT_PATH_MAX = 3_800


def _holds(path: Path, inner: Iterable[Path]) -> bool:
    """Whether the folder ``path`` is or holds one of ``inner``."""
    return any(path == p or path in p.parents for p in inner)


def _mountable(root: Path, paths: list[Path]) -> list[Path]:
    """``paths`` (folders to hide under ``root``), each one too long to be a mount point lifted
    to its deepest parent that is not (never above ``root``): a folder below a path over
    ``PATH_MAX`` (K3 of the s15 guard red team) is hidden with the parent the box reaches it
    through. Those inside another of them are dropped."""
    out = []
    for path in paths:
        while len(os.fsencode(path)) > _MOUNT_PATH_MAX and path != root and root in path.parents:
            path = path.parent
        out.append(path)
    out = list(dict.fromkeys(out))
    there = set(out)
    return [p for p in out if not any(a in there for a in p.parents)]


def _lift_long(
    git_dirs: list[Path],
    hide: list[tuple[Path, str]],
    roots: Iterable[Path | str],
    keep: Iterable[Path | str],
) -> tuple[list[Path], list[tuple[Path, str]]]:
    """(``git_dirs`` less those to hide, ``hide`` with them): a task repository whose path is
    too long to be a mount point (over :data:`_MOUNT_PATH_MAX` bytes) is neither pruned nor
    hidden at its own path — bwrap cannot make that mount point and the box would not start
    (M2 of the s15 guard red team's second round) — but hidden with its deepest parent that can
    be one (:func:`_mountable`, never above its root), said with what that parent holds; the
    other repositories there are hidden with it. :class:`ReadPathCut` where that parent is or
    holds a folder the phase must see (``keep``: read-write, masked), as a cut there does."""
    bases = [Path(p).absolute() for p in roots]
    kept = [Path(p).absolute() for p in keep]
    lifted: list[tuple[Path, str]] = []
    for gd in git_dirs:
        size = len(os.fsencode(gd))
        if size <= _MOUNT_PATH_MAX:
            continue
        holders = [r for r in bases if _holds(r, [gd])]
        root = max(holders, key=lambda r: len(r.parts)) if holders else gd.parent
        path = _mountable(root, [gd])[0]
        why = (
            f"{gd} could not be pruned at its base, so it was hidden: its path is {size:,} "
            f"bytes, too long to be a mount point (over {_MOUNT_PATH_MAX:,}), so {path} was "
            "hidden in its place"
        )
        if _holds(path, kept) or len(os.fsencode(path)) > _MOUNT_PATH_MAX:
            raise ReadPathCut(root, why, written=True)
        lifted.append((path, why))
    if not lifted:
        return git_dirs, hide
    merged = [*hide, *lifted]
    paths = {p for p, _ in merged}
    tops: dict[Path, str] = {}
    for p, w in merged:  # those in another are hidden with it, their reasons said with it
        if not any(a in paths for a in p.parents):
            tops[p] = f"{tops[p]}; {w}" if p in tops else w
    for p, w in merged:
        top = next((t for t in tops if t in p.parents), None)
        if top is not None:
            tops[top] = f"{tops[top]}; {w}"
    out_hide = list(tops.items())
    out_dirs = []
    for gd in git_dirs:
        holder = next((j for j, (p, _) in enumerate(out_hide) if _holds(p, [gd])), None)
        if holder is None:
            out_dirs.append(gd)
        else:
            path, why = out_hide[holder]
            if str(gd) not in why:
                why = f"{why}; the task repository {gd} there was hidden with it"
            out_hide[holder] = (path, why)
    return out_dirs, out_hide


def _read_only_order(read_only: Iterable[Path | str], read_write: Sequence[Path]) -> list[Path]:
    """The read-only roots, the operator's first: a root holding a read-write folder (the run
    directory, which earlier phases write) after every other."""

    def holds(root: Path) -> bool:
        return any(rw == root or root in rw.parents for rw in read_write)

    roots = [Path(p).absolute() for p in read_only]
    return [r for r in roots if not holds(r)] + [r for r in roots if holds(r)]


def _search(
    read_write: Iterable[Path | str],
    read_only: Iterable[Path | str],
    skip: Iterable[Path | str],
    written: Iterable[Path | str] = (),
) -> tuple[list[Path], list[str], list[str], list[Path], list[Path], list[tuple[Path, str]]]:
    """(the task repositories of a phase's folders, the problems, the read-only cuts said in
    ``hidden`` too, those of the repositories found in read-only folders, those found in
    read-only folders only the operator writes, the folders to hide beyond a cut of a read-only
    folder the candidate's code writes, each with why): read-write folders to
    :data:`~evotree.harness.git_search.MAX_ENTRIES`, each read-only one to
    :data:`MAX_READ_ONLY_ENTRIES` (its read-write and ``skip`` folders not entered again, nor
    the operator's :data:`ENV_NO_REPOS`).

    A read-only folder the candidate's code writes — one holding a read-write folder of the
    phase (the run directory: the train phase's evidence), or one of ``written`` (the shared
    cache the prepare phase writes) or in one — cut by a bound has the folders beyond the cut
    hidden (at most :data:`MAX_HIDDEN_CUTS`): what the candidate left there fails only its own
    run's reading of it, never the phase, never another run. Any other read-only folder's cut
    raises :class:`ReadPathCut` (fail closed: no row that flags an honest dataset, no repository
    beyond the cut bound whole; the operator's way out said)."""
    rw = [Path(p).absolute() for p in read_write]
    wrote = [Path(p).absolute() for p in written]
    git_dirs, problems = find_git_dirs(rw, skip=skip)
    roots = _read_only_order(read_only, [*rw, *wrote])
    leave = [*rw, *skip, *_attested(rw, roots, wrote)]
    frozen: list[Path] = []
    operator: list[Path] = []
    said: list[str] = []
    hide: list[tuple[Path, str]] = []
    for root in roots:
        cuts: list[str] = []
        cut_paths: list[Path] = []
        more_dirs, more = find_git_dirs(
            [root], max_entries=MAX_READ_ONLY_ENTRIES, skip=leave, cuts=cuts, cut_paths=cut_paths
        )
        candidates = any(r == root or root in r.parents for r in rw) or any(
            w == root or w in root.parents or root in w.parents for w in wrote
        )
        if cuts and candidates:
            keep = [*rw, *skip]
            cut_paths = (
                _coarsen(root, _mountable(root, cut_paths), keep, MAX_HIDDEN_CUTS - len(hide)) or []
            )
            if any(_holds(path, keep) for path in cut_paths):
                cut_paths = []  # an empty folder over a read-write one: the box cannot start
        if cuts and (not candidates or not cut_paths):
            raise ReadPathCut(root, cuts[0], written=candidates)
        hide += [
            (
                path,
                f"{path} was hidden: {root} holds what the candidate's code wrote, and "
                f"its search for task repositories was cut ({cuts[0]})",
            )
            for path in cut_paths
        ]
        more = [m for m in more if m not in cuts]
        new = [gd for gd in more_dirs if gd not in git_dirs and gd not in frozen]
        frozen += new
        if not candidates:
            operator += new
        said += more
    # a repository in a hidden folder (a cut lifted above it) is hidden with it, never bound
    # in it: bwrap cannot make a mount point in the empty read-only folder bound first, and the
    # box would not start (K6 of the s15 guard red team)
    for j, (path, why) in enumerate(hide):
        inside = [gd for gd in frozen if _holds(path, [gd])]
        if inside:
            names = ", ".join(str(gd) for gd in inside)
            hide[j] = (path, f"{why}; the task repositories there were hidden with it: {names}")
            frozen = [gd for gd in frozen if gd not in inside]
            operator = [gd for gd in operator if gd not in inside]
    git_dirs += frozen
    return (
        git_dirs,
        [*problems, *said],
        [f"in a read-only folder: {c}" for c in said],
        frozen,
        operator,
        hide,
    )
