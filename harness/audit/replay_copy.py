"""The replay's worlds: the checkout copied, its hidden files' future rotated, and the fourth
world's ``.git`` pruned at the base (split off :mod:`evotree.harness.audit.replay` on its seam).

:func:`_copy_and_rotate` makes the :class:`ReplayWorlds` of one checkout: two copies of its work
tree (its ``.git`` folder bound read-only instead, not copied), one as it is and one with the
future's text in the hidden files rotated (:mod:`evotree.harness.audit.replay_rotate`); the
checkout's git directory pruned at the base as a phase's box gets it
(:func:`evotree.harness.git_prune.prune_copy`) and a copy without the future's words
(:func:`~evotree.harness.audit.replay_rotate.bare_copy`), the git stores nested in it pruned too
(:func:`evotree.harness.git_prune.prune_nested`): the fourth world. :func:`_state` says when a
checkout is too large to copy. The replay (:mod:`evotree.harness.audit.replay`) keeps the worlds
per checkout and runs the steps over them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from evotree.harness.audit.replay_places import _linked_on_the_way
from evotree.harness.audit.replay_rotate import _future_text, _resum, _rotate_file, bare_copy

__all__ = ["ReplayWorlds", "MAX_CHECKOUT_BYTES", "MAX_CHECKOUT_FILES", "PRUNE_SECONDS"]

#: the checkout is copied only up to this size (a larger one: no replay)
MAX_CHECKOUT_BYTES = 512 << 20
MAX_CHECKOUT_FILES = 50_000
#: the pruning of the fourth world's git directory may take this long
PRUNE_SECONDS = 60.0


@dataclass
class ReplayWorlds:
    """Two pristine copies of one checkout: as it is, and with the future's lines rotated."""

    root: Path  # the checkout (the copies are bound here inside the sandbox)
    #: the checkout's ``.git`` folder, bound read-only at ``root/.git`` (not copied: the steps
    #: read it as the agent did, and cannot change the task repository); None: copied with it
    gitdir: Path | None
    real: Path
    neutral: Path
    rotated_lines: int  # how many lines were rotated (0: the worlds are the same)
    tmp: tempfile.TemporaryDirectory[str]
    size: int = 0  # bytes of the work tree (the sandbox's tmpfs for it is sized from it)
    #: what each run printed, by the steps' commands (a trajectory audited twice, recorded and
    #: as a history, runs once); the last few only
    runs: dict[tuple[str, ...], tuple[list[str | None], ...]] = field(default_factory=dict)
    spent: float = 0.0  # seconds of replay so far (past the replay's BUDGET_SECONDS: no more)
    #: the byte sizes of the hidden files the rotation could not keep (a recompressed gzip, a
    #: reindexed database), the checkout's and the rotated copy's: a size shows nothing of the
    #: future, so ``wc -c`` or ``ls -l`` printing one is not judged by it
    sizes: frozenset[str] = frozenset()
    #: the checkout's git directory copied with only what its base reaches, as a phase's box
    #: gets it (:func:`evotree.harness.git_prune.prune_copy`): the fourth world's ``.git``;
    #: None when there is no such copy (no ``.git`` folder, HEAD not at the base, a store
    #: that cannot be pruned)
    at_base: Path | None = None
    #: why the checkout's ``.git`` (a folder, HEAD at the base), or a git store nested in its
    #: work tree, could not be pruned ("": it was, or there was nothing to prune): the
    #: trajectory's verdict says it was not replayed whole (the s16 red team's W4, W5)
    prune_failed: str = ""
    #: the fourth world's work tree (:func:`~evotree.harness.audit.replay_rotate.bare_copy`; None: no fourth world)
    bare: Path | None = None


def _copy_and_rotate(ancestry: Any, root: Path, prune_seconds: float) -> ReplayWorlds | str | None:
    """The worlds of the checkout at ``root``; None when the rotation changes nothing, or why
    it could not be copied. ``prune_seconds``: how long each pruning of the fourth world may
    take (the replay's :data:`PRUNE_SECONDS`, read when it calls)."""
    dotgit = root / ".git"
    gitdir = dotgit if dotgit.is_dir() and not dotgit.is_symlink() else None
    tmp = tempfile.TemporaryDirectory(prefix="evotree-replay-")
    real, neutral = Path(tmp.name) / "real", Path(tmp.name) / "neutral"
    skip = shutil.ignore_patterns(".git") if gitdir is not None else None
    try:
        shutil.copytree(root, real, symlinks=True, ignore=_top_only(root, skip))
        shutil.copytree(root, neutral, symlinks=True, ignore=_top_only(root, skip))
        future = _future_text(ancestry.index())
        count = 0
        hidden = _hidden_files(neutral, ancestry.hidden_paths)
        turned = set()
        for rel in hidden:
            rotated_here = _rotate_file(neutral / rel, future)
            count += rotated_here
            if rotated_here:
                turned.add(rel)
        if turned:
            _resum(real, neutral, hidden, turned)
    except OSError as exc:
        tmp.cleanup()
        return f"the checkout could not be copied for the replay ({_copy_error(exc, root)})"
    if count == 0:
        tmp.cleanup()
        return None
    size = sum(f.stat().st_size for f in real.rglob("*") if f.is_file() and not f.is_symlink())
    sizes = set()
    for rel in turned:
        before, after = (real / rel).stat().st_size, (neutral / rel).stat().st_size
        if before != after:
            sizes |= {str(before), str(after)}
    at_base, prune_failed = _pruned_store(
        ancestry, gitdir, Path(tmp.name) / "git-at-base", prune_seconds
    )
    bare = bare_copy(real, Path(tmp.name) / "bare", hidden, future) if at_base else None
    if at_base is not None and bare is None:
        at_base, prune_failed = None, "the copy without the future's words could not be made"
    if at_base is not None and bare is not None:
        # the git stores nested in the work tree (a vendored mirror, a clone's .git, a bare
        # repository a .git file names) pruned at the base too, one sharing no history with
        # the task at its own HEAD (the s16 red team's W5, the s17 nested red team's W4;
        # :func:`~evotree.harness.git_prune.prune_nested`; none: one walk of the tree)
        from evotree.harness.git_prune import prune_nested

        deadline = time.monotonic() + prune_seconds
        nested = Path(tmp.name) / "nested"
        why = prune_nested(
            bare, at_base, str(ancestry.base), nested, deadline=deadline, task=gitdir
        )
        prune_failed = f"a git store in the work tree: {why}"[:300] if why else ""
    if bare is not None:
        for rel in hidden:
            before, after = (real / rel).stat().st_size, (bare / rel).stat().st_size
            if before != after:
                sizes |= {str(before), str(after)}
    return ReplayWorlds(
        root,
        gitdir,
        real,
        neutral,
        count,
        tmp,
        size,
        sizes=frozenset(sizes),
        at_base=at_base,
        prune_failed=prune_failed,
        bare=bare,
    )


def _pruned_store(
    ancestry: Any, gitdir: Path | None, dest: Path, prune_seconds: float
) -> tuple[Path | None, str]:
    """The checkout's git directory pruned at its base (:func:`prune_copy`) and "", or None and
    why not: no ``.git`` folder or HEAD's commit not the audit's base (the copy is pruned at
    HEAD: no world, nothing said), or a directory the pruning refuses or did not finish in
    ``prune_seconds`` (its reason: the verdict says the trajectory was not replayed
    whole)."""
    from evotree.harness.git_prune import PruneError, prune_copy

    if gitdir is None:
        return None, ""
    try:
        head = ancestry.repo.head.peel(pygit2.Commit).id
    except (pygit2.GitError, KeyError, ValueError):
        return None, ""
    if head != ancestry.base:
        return None, ""
    try:
        copy = prune_copy(gitdir, dest, deadline=time.monotonic() + prune_seconds)
    except (PruneError, OSError) as exc:
        return None, str(exc)[:200] or type(exc).__name__
    if copy.base != str(ancestry.base):
        return None, f"pruned at {copy.base}, not at the base"
    return copy.path, ""


def _top_only(root: Path, skip: Any) -> Any:
    """``skip`` (the ``.git`` folder, bound read-only instead of copied) at the top only."""
    if skip is None:
        return None

    def ignore(folder: str, names: list[str]) -> set[str]:
        return set(skip(folder, names)) if Path(folder) == root else set()

    return ignore


def _copy_error(exc: OSError, root: Path) -> str:
    """A short reason for a failed copy of the checkout at ``root`` (``shutil.Error``: its
    first file's)."""
    errors = exc.args[0] if isinstance(exc, shutil.Error) and exc.args else None
    if isinstance(errors, list) and errors and len(errors[0]) == 3:
        src, _, why = errors[0]
        rel = os.path.relpath(str(src), root)
        more = f" and {len(errors) - 1} more" if len(errors) > 1 else ""
        return f"{rel!r}: {str(why)[:120]}{more}"
    return str(exc)[:160] or type(exc).__name__


def _state(root: Path) -> int | str:
    """A hash of every entry's path, size and times under ``root`` (``.git`` too: the index the
    rotation follows reads it), or why the checkout is too large to copy (more than
    :data:`MAX_CHECKOUT_FILES` entries or :data:`MAX_CHECKOUT_BYTES` bytes)."""
    files = size = 0
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        files += len(filenames) + len(dirnames)
        for name in sorted(filenames):
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            size += st.st_size
            entries.append((dirpath, name, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
        if files > MAX_CHECKOUT_FILES:
            return (
                f"the checkout holds more than {MAX_CHECKOUT_FILES:,} entries "
                "(MAX_CHECKOUT_FILES): it is not copied for the replay"
            )
        if size > MAX_CHECKOUT_BYTES:
            return (
                f"the checkout holds more than {MAX_CHECKOUT_BYTES:,} bytes "
                "(MAX_CHECKOUT_BYTES): it is not copied for the replay"
            )
    return hash(tuple(entries))


def _hidden_files(root: Path, hidden_paths: Sequence[str]) -> list[Path]:
    """The regular files (not links) under each hidden path of the copy, relative to it."""
    found: dict[Path, None] = {}
    for hidden in hidden_paths:
        clean = hidden.strip().strip("/")
        if not clean or clean.startswith("..") or "/../" in f"/{clean}/":
            continue
        top = root / clean
        if top.is_symlink() or not top.exists():
            continue
        candidates = [top] if top.is_file() else sorted(top.rglob("*"))
        for path in candidates:
            if path.is_file() and not path.is_symlink() and not _linked_on_the_way(root, path):
                found[path.relative_to(root)] = None
    return list(found)
