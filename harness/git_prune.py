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
- ``config`` with only what honest work needs
  (:data:`~evotree.harness.git_store_read._KEPT_CONFIG`: never a program git would run nor a
  file it would read), ``info/exclude``, ``info/attributes`` as they were; ``shallow`` with the
  lines the copy holds; the ``index`` as it was when every object it names is in the copy,
  else the base's tree read into a fresh one (the work tree is untouched either way).

git runs outside the sandbox here, on a git directory an earlier phase may have written, so it
never reads that directory's own config, links or pointers: the directory must be
self-contained (:func:`~evotree.harness.git_store_read._check_self_contained`: no
``commondir``, no alternates, every entry of ``objects/`` and ``refs/`` a regular file or
folder — no link, FIFO or device) and git runs on a scratch view of it (evotree's minimal
config, its ``HEAD`` and references copied, ``GIT_OBJECT_DIRECTORY`` its object store read as
a C-quoted alternate: a ':' in its path never splits it), with no system or global config; the
task config's kept entries are written into the copy last, for the box's git alone. A directory
that is not self-contained is not copied (the caller hides it).

The copy lives beside the phase's raw trace, outside every bind, and is removed after the phase
(:func:`remove_copies`): what the phase writes into the task's git directory (the index, objects
of its own) is not kept — its work tree is its result. ``EVOTREE_TASK_REPOS=whole`` (the
operator's environment, never a config a candidate writes) binds the repositories whole, as
before: the trace's own judgement alone, for its tests and benchmarks.

Below it: :mod:`evotree.harness.git_store_read` (host git on a task's store, read so that its
files cannot make it lie) and :mod:`evotree.harness.git_relations` (which stores are related,
and at whose base a related one is pruned); ``relations`` and ``enclosing`` are named here too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import pygit2

from evotree.harness.git_relations import (
    _holds_future,
    _relate,
    _related,
    checkout_relations,
    cross_checked,
    enclosing,
    relations,
)
from evotree.harness.git_store_read import (
    _DEADLINE,
    _MAX_CHECKED,
    _SMALL,
    PrunedCopy,
    PruneError,
    _check_self_contained,
    _git,
    _head_text,
    _is_folder,
    _is_id,
    _minimal_config,
    _read_regular,
)

__all__ = [
    "COPIES_SUFFIX",
    "ENV_TASK_REPOS",
    "OverLimit",
    "PruneError",
    "PrunedCopy",
    "copies_path",
    "cross_checked",
    "enclosing",
    "prune_copy",
    "prune_nested",
    "prune_related",
    "relate_checkouts",
    "relations",
    "pruning",
    "remove_copies",
]

#: The operator's switch: ``pruned`` (the default) or ``whole``.
ENV_TASK_REPOS = "EVOTREE_TASK_REPOS"
#: Where a phase's pruned copies are made: beside its raw trace.
COPIES_SUFFIX = ".git-copies"
#: The largest index copied as it is.
_INDEX_LIMIT = 256 << 20
#: Reference namespaces kept when the base reaches them.
_KEPT_NAMESPACES = ("refs/heads", "refs/tags", "refs/remotes")
_MAX_REFS = 50_000


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


def _copy_refs(git_dir: Path, view: Path) -> None:
    """The task's references of the kept namespaces (loose files, checked regular) and its
    ``packed-refs``, into the view."""
    for namespace in _KEPT_NAMESPACES:
        root = git_dir / namespace
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                data = _read_regular(git_dir, path.relative_to(git_dir), 4096)
                if data is not None:
                    target = view / path.relative_to(git_dir)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(data)
    packed = _read_regular(git_dir, "packed-refs", 256 << 20)
    if packed is not None:
        (view / "packed-refs").write_bytes(packed)


def _kept_refs(
    view: Path, objects: Path | tuple[Path, ...], primary: Path, base: str
) -> dict[str, str]:
    """The branches, tags and remote-tracking references whose commit the base reaches, peeled."""
    rc, out, err = _git(
        view,
        "for-each-ref",
        f"--merged={base}",
        "--format=%(objecttype) %(objectname) %(*objecttype) %(*objectname) %(refname)",
        *_KEPT_NAMESPACES,
        objects=objects,
        primary=primary,
    )
    if rc != 0:
        raise PruneError(f"the references cannot be listed: {err}")
    kept: dict[str, str] = {}
    for raw in out.splitlines():
        try:  # a name that is not UTF-8 is not kept (git would take a replaced one for another)
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
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
    raw = _read_regular(git_dir, "index", _INDEX_LIMIT)
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


#: Pruned packs kept for the next phase over the same store: the newest this many.
CACHE_KEEP = 16


def _cache_root() -> Path | None:
    """The cache of pruned packs (this user's, private); ``None`` where it cannot be."""
    from evotree.harness.sandbox_tracer_build import owned_private, tracer_cache

    root = tracer_cache() / "task-prune"
    try:
        root.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        return None
    return root if owned_private(tracer_cache()) and owned_private(root) else None


def _store_key(git_dir: Path, view: Path, config: str, base: str) -> str:
    """What a pruned pack and its references are a function of: the base, the references and
    shallow boundaries (as copied into the view), the object format — and the store itself, by
    its path and the identity, size and change time of its folders and packs, so that a store
    that gained or lost an object, or another store holding objects under the same ids, never
    meets a pack made from this one."""
    digest = hashlib.sha256()
    digest.update(json.dumps([os.path.realpath(git_dir), config, base]).encode())
    for path in sorted(view.rglob("*")):
        if path.is_file() and path.name != "task-config":
            # names as bytes: a reference name need not be UTF-8 (K2 of the s15 guard red team)
            digest.update(os.fsencode(path.relative_to(view)) + b"\0" + path.read_bytes())
    store = git_dir / "objects"
    folders = [
        store,
        *sorted(Path(e.path) for e in os.scandir(store) if e.is_dir(follow_symlinks=False)),
    ]
    for folder in folders:
        info = os.lstat(folder)
        digest.update(
            os.fsencode(folder.name) + f" {info.st_dev} {info.st_ino} {info.st_mtime_ns}\n".encode()
        )
    if _is_folder(store / "pack"):
        for entry in sorted(os.scandir(store / "pack"), key=lambda e: e.name):
            info = entry.stat(follow_symlinks=False)
            digest.update(
                os.fsencode(entry.name)
                + f" {info.st_ino} {info.st_size} {info.st_mtime_ns}\n".encode()
            )
    return digest.hexdigest()


def _cached(key: str, pack_dir: Path) -> dict[str, str] | None:
    """The kept references of a pruned pack made before from the same store state, its files
    copied into ``pack_dir``; ``None`` when there is none (or it cannot be read whole)."""
    root = _cache_root()
    entry = root / key if root is not None else None
    if entry is None or not _is_folder(entry):
        return None
    try:
        refs = json.loads((entry / "refs.json").read_text())
        files = sorted(p for p in entry.iterdir() if p.suffix in (".pack", ".idx"))
        if not isinstance(refs, dict) or len(files) < 2:
            return None
        for path in files:
            shutil.copyfile(path, pack_dir / path.name)
        os.utime(entry)
    except (OSError, ValueError):
        for path in pack_dir.iterdir():
            path.unlink()
        return None
    return {str(k): str(v) for k, v in refs.items()}


def _keep(key: str, pack_dir: Path, refs: dict[str, str]) -> None:
    """Keep the pack just made (and its references) for the next phase over the same store;
    the oldest beyond :data:`CACHE_KEEP` are removed. Best effort: a failure keeps nothing."""
    root = _cache_root()
    if root is None or (root / key).exists():
        return
    temp = root / f".{key}.{os.getpid()}"
    try:
        temp.mkdir(mode=0o700)
        for path in pack_dir.iterdir():
            shutil.copyfile(path, temp / path.name)
        (temp / "refs.json").write_text(json.dumps(refs))
        os.rename(temp, root / key)
    except OSError:
        shutil.rmtree(temp, ignore_errors=True)
        return
    entries = sorted(
        (p for p in root.iterdir() if not p.name.startswith(".")), key=lambda p: p.stat().st_mtime
    )
    for old in entries[:-CACHE_KEEP]:
        shutil.rmtree(old, ignore_errors=True)


#: How deep submodules' git directories are looked for under ``modules/`` (nested names and
#: submodules of submodules), and how many at most.
_MODULES_DEPTH = 6
_MAX_MODULES = 200


class OverLimit(PruneError):
    """A copy that would pass its caller's file or byte limit (:func:`prune_copy`'s
    ``budget``): stopped as soon as it is past it, nothing of it kept."""


def _usage(dest: Path) -> tuple[int, int]:
    """(files, bytes) under ``dest`` (links not followed)."""
    files = size = 0
    stack = [dest]
    while stack:
        for entry in os.scandir(stack.pop()):
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            else:
                files += 1
                size += entry.stat(follow_symlinks=False).st_size
    return files, size


def _check_budget(dest: Path, budget: tuple[int, int] | None) -> None:
    """:class:`OverLimit` when the copy in ``dest`` holds more than ``budget`` (files, bytes)."""
    if budget is None:
        return
    files, size = _usage(dest)
    if files > budget[0] or size > budget[1]:
        raise OverLimit(f"its pruned copy passes {budget[0]} files or {budget[1]} bytes")


def _copy_modules(
    git_dir: Path,
    dest: Path,
    top: Path,
    budget: tuple[int, int] | None,
    kept: list[tuple[str, Path, dict[str, str]]],
    at: tuple[str, Path] | None = None,
    chain: tuple[tuple[Path, PrunedCopy], ...] = (),
) -> None:
    """The submodules' git directories (``modules/<name>``, as ``git submodule`` absorbs them),
    each pruned at its own base into the copy, so that git in a submodule's work tree (a
    ``.git`` file naming ``../.git/modules/<name>``) works on its base and sees no future. One
    that cannot be pruned is left out (git there says it is not a repository); the copy's
    ``budget`` (``top``: the whole copy) is checked before each (:class:`OverLimit`); ``at``:
    each pruned at that base instead (a nested store's, :func:`prune_nested`). ``chain``: the
    repositories holding it (this one first, each with its pruned copy): a module sharing
    history with one of them (:func:`_relate`: the task itself as a submodule, deinit'ed at the
    fix, its HEAD one the base pins or not) is pruned at that one's base."""
    root = git_dir / "modules"
    if not _is_folder(root):
        return
    queue = [(root, 0)]
    made = 0
    while queue and made < _MAX_MODULES:
        folder, depth = queue.pop(0)
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            path = Path(entry.path)
            if not entry.is_dir(follow_symlinks=False):
                continue
            if os.path.lexists(path / "HEAD") and _is_folder(path / "objects"):
                _check_budget(top, budget)
                target = dest / path.relative_to(git_dir)
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    if at is None and chain:
                        own = _prune(path, target, top, budget, kept, None, chain)
                        rel = _relate(own, chain, target.with_name(target.name + ".check"))
                        if rel is not None:
                            kept[:] = [k for k in kept if target not in k[1].parents]
                            shutil.rmtree(target)
                            _prune(path, target, top, budget, kept, rel)
                    else:
                        _prune(path, target, top, budget, kept, at)
                    made += 1
                except OverLimit:
                    raise
                except (PruneError, OSError, subprocess.SubprocessError, UnicodeError):
                    shutil.rmtree(target, ignore_errors=True)
            elif depth < _MODULES_DEPTH:
                queue.append((path, depth + 1))


def prune_related(
    gd: Path,
    dest: Path,
    outer: Sequence[Path],
    made: Mapping[Path, PrunedCopy],
    *,
    deadline: float,
    budget: tuple[int, int] | None = None,
) -> PrunedCopy:
    """``gd`` pruned into ``dest``: at its own base, or — where it is related to a repository of
    ``outer`` (:func:`relations`, nearest first; their copies in ``made``) it shares history with
    (:func:`_relate`) — at that repository's base, from its pruned copy (:func:`prune_copy`'s
    ``at``), so that a vendored or sibling mirror whose HEAD is the fix holds nothing that base
    does not reach. Its submodules are related to those repositories too. One sharing history
    with a repository that was not pruned (hidden) or has no commit is not pruned
    (:class:`PruneError`: the caller hides or refuses it). The phase's box
    (:func:`evotree.harness.git_guard.before_phase`) and the judge's copy
    (:func:`evotree.harness.sandbox_copy.copy_regular_files`) both prune so."""
    chain = [(o, made[o]) for o in outer if o in made]
    own = prune_copy(gd, dest, budget=budget, deadline=deadline, outer=chain)
    if not outer:
        return own
    token = _DEADLINE.set(deadline)
    try:
        try:
            rel = _relate(
                own, [(o, made.get(o)) for o in outer], dest.with_name(dest.name + ".check")
            )
        except BaseException:
            shutil.rmtree(dest, ignore_errors=True)
            raise
    finally:
        _DEADLINE.reset(token)
    if rel is None:
        return own
    shutil.rmtree(dest)
    return prune_copy(gd, dest, budget=budget, deadline=deadline, at=rel)


def relate_checkouts(
    made: Mapping[Path, PrunedCopy],
    *,
    deadline: float,
    budgets: Mapping[Path, tuple[int, int]] | None = None,
    against: Collection[Path] | None = None,
    exempt: Collection[tuple[Path, Path]] = (),
    lenient: Collection[Path] = (),
) -> dict[Path, PrunedCopy | PruneError]:
    """The stores a phase sees in no work tree (checkouts, or stores beside none; each pruned at
    its own base in ``made``: :func:`relations` relates them to nothing) tried against one
    another, both ways (:func:`~evotree.harness.git_relations.checkout_relations`): one whose
    copy holds another's future — a clone with a work tree of its own checked out at the fix
    beside the task's checkout — is pruned again, in place, at that one's base from its copy
    (:func:`prune_copy`'s ``at``; ``budgets``: each one's (files, bytes)), and must then hold
    no future of any other. One that holds the future of one holding its own (which is the
    task cannot be told), or only of ones themselves related so, or whose relation cannot be
    told, is not kept: its copy is removed and its :class:`PruneError` returned (the caller
    hides or refuses it). Returns what changed: each one's new copy, or why it is not kept.
    The callers prune these first and call this before any store related to them is pruned;
    and, once every store is pruned, call it again over them all with ``against`` and
    ``exempt`` (:func:`~evotree.harness.git_relations.cross_checked`: every store's final copy
    tried against every store's future, nested checkouts too — the s18 third red team's N1 —
    and bare or unpruned stores beside or in a checkout: the task's store kept bare beside a
    clone at the fix, issue 29); ``lenient``: stores in folders another version's code writes
    (the shared cache), not tried by their HEADs."""
    token = _DEADLINE.set(deadline)
    try:
        related = checkout_relations(made, against, exempt, lenient)
    finally:
        _DEADLINE.reset(token)
    out: dict[Path, PrunedCopy | PruneError] = {}
    for gd, others in related.items():
        dest = made[gd].path
        try:
            if isinstance(others, PruneError):
                raise others
            mutual = [o for o in others if gd in _listed(related.get(o))]
            if mutual:
                raise PruneError(
                    f"it and {mutual[0]} each hold the other's future: which is the task's "
                    "cannot be told"
                )
            roots = [(o, made[o]) for o in others if o not in related and made[o].base]
            if not roots:
                raise PruneError(
                    f"it holds the future of {others[0]}, which is itself related to another "
                    "checkout or has no commit: no base to prune it at can be told"
                )
            root, there = roots[0]
            shutil.rmtree(dest)
            budget = budgets.get(gd) if budgets is not None else None
            at = (str(there.base), there.path)
            copy = prune_copy(gd, dest, budget=budget, deadline=deadline, at=at)
            token = _DEADLINE.set(deadline)
            try:
                for o in others:
                    check = dest.with_name(dest.name + ".future")
                    if o != root and _holds_future(copy.path, o, made[o].base, check):
                        raise PruneError(
                            f"pruned at the base of {root}, it still holds the future of {o}"
                        )
            finally:
                _DEADLINE.reset(token)
            out[gd] = copy
        except (PruneError, OSError, subprocess.SubprocessError, UnicodeError) as exc:
            shutil.rmtree(dest, ignore_errors=True)
            out[gd] = (
                exc if isinstance(exc, PruneError) else PruneError(str(exc) or type(exc).__name__)
            )
    return out


def _listed(found: list[Path] | PruneError | None) -> list[Path]:
    """The checkouts :func:`~evotree.harness.git_relations.checkout_relations` named for one
    (none where it named none, or an error)."""
    return found if isinstance(found, list) else []


def prune_copy(
    git_dir: Path,
    dest: Path,
    *,
    budget: tuple[int, int] | None = None,
    deadline: float | None = None,
    at: tuple[str, Path] | None = None,
    outer: Sequence[tuple[Path, PrunedCopy]] = (),
) -> PrunedCopy:
    """Copy the git directory ``git_dir`` into the new folder ``dest`` with only what its base
    (HEAD's commit) reaches (module doc); :class:`PruneError` says why it could not.

    ``budget``: (files, bytes) the copy may hold, checked after its pack and before each
    submodule (:class:`OverLimit`: nothing kept, not even in the cache of packs);
    ``deadline``: when (``time.monotonic``) every host git call of it must be over;
    ``at``: (a commit id, a git directory holding it that this module made: an enclosing
    repository's pruned copy) — the copy is pruned at that commit, not at HEAD's (a store
    nested in that repository's work tree, :func:`prune_nested`): its objects are read from
    both stores, HEAD's branch (or a detached HEAD) is set to it, references past it dropped,
    its submodules pruned at it too; no cache. ``outer``: the repositories whose work trees hold
    it (nearest first, each with its pruned copy): its submodules are related to them too
    (:func:`_copy_modules`)."""
    token = _DEADLINE.set(deadline) if deadline is not None else None
    kept: list[tuple[str, Path, dict[str, str]]] = []
    try:
        copy = _prune(Path(git_dir), Path(dest), Path(dest), budget, kept, at, tuple(outer))
    finally:
        if token is not None:
            _DEADLINE.reset(token)
    for key, pack_dir, refs in kept:  # only a copy made whole, within its budget
        _keep(key, pack_dir, refs)
    return copy


def _prune(
    git_dir: Path,
    dest: Path,
    top: Path,
    budget: tuple[int, int] | None,
    kept: list[tuple[str, Path, dict[str, str]]] | None = None,
    at: tuple[str, Path] | None = None,
    outer: tuple[tuple[Path, PrunedCopy], ...] = (),
) -> PrunedCopy:
    """:func:`prune_copy` of ``git_dir`` into ``dest`` (``top``: the whole copy, for its
    budget; ``at``: the base it is pruned at and the pruned copy holding it; ``outer``: the
    repositories holding it, for its submodules); the packs made are listed in ``kept`` for
    the cache."""
    kept = [] if kept is None else kept
    branch, detached = _head_text(git_dir)
    _check_self_contained(git_dir)
    objects: Path | tuple[Path, ...] = git_dir / "objects"
    if at is not None:
        objects = (git_dir / "objects", at[1] / "objects")
    primary = dest / "objects"
    dest.mkdir(mode=0o700)
    view = dest.with_name(dest.name + ".view")
    view.mkdir(mode=0o700)
    try:
        for sub in ("objects/pack", "objects/info", "refs/heads", "refs/tags", "info"):
            (dest / sub).mkdir(parents=True)
        config, box_config = _minimal_config(git_dir, view)
        (view / "config").write_text(config)
        (view / "refs").mkdir()
        (view / "HEAD").write_text(f"ref: {branch}\n" if branch else f"{detached}\n")
        _copy_refs(git_dir, view)
        shallow = _read_regular(git_dir, "shallow", _SMALL)
        if at is not None:  # the enclosing copy's boundaries too: its history is read here
            # one per line, no empty line: git stops at one ("bad shallow line")
            both = (shallow or b"") + b"\n" + (_read_regular(at[1], "shallow", _SMALL) or b"")
            shallow = b"".join(line + b"\n" for line in both.splitlines() if line.strip()) or None
        if shallow is not None:
            (view / "shallow").write_bytes(shallow)
        rc, out, err = _git(
            view,
            "rev-parse",
            "--verify",
            "-q",
            "HEAD^{commit}" if at is None else f"{at[0]}^{{commit}}",
            objects=objects,
            primary=primary,
        )
        if at is not None and (rc != 0 or out.decode().strip() != at[0]):
            raise PruneError(f"the base {at[0]} is not a commit in {at[1]}")
        if rc == 0:
            base: str | None = out.decode().strip()
        elif (
            branch is not None
            and _git(view, "rev-parse", "--verify", "-q", branch, objects=objects, primary=primary)[
                0
            ]
            != 0
        ):
            base = None  # unborn: no commit yet
        else:
            raise PruneError(f"HEAD of {git_dir} names no commit: {err or 'git rev-parse failed'}")
        if at is None and base is not None:
            base = _below_worktrees(git_dir, view, base, objects, primary)
        (dest / "config").write_text(config)  # the box's comes last
        refs: dict[str, str] = {}
        if base is not None:
            key = _store_key(git_dir, view, config, base) if at is None else None
            hit = _cached(key, dest / "objects" / "pack") if key is not None else None
            if hit is not None:
                refs = hit
            else:
                refs = _kept_refs(view, objects, primary, base)
                rc, _, err = _git(
                    view,
                    "-c",
                    "pack.compression=1",
                    "pack-objects",
                    "--revs",
                    "--window=0",
                    "--quiet",
                    str(dest / "objects" / "pack" / "pack"),
                    stdin=f"{base}\n".encode(),
                    objects=objects,
                    primary=primary,
                )
                if rc != 0:
                    raise PruneError(
                        f"the objects {git_dir}'s base reaches cannot be packed: {err}"
                    )
                if key is not None:
                    kept.append((key, dest / "objects" / "pack", dict(refs)))
            if branch is not None:
                refs[branch] = base
        _check_budget(top, budget)
        (dest / "HEAD").write_text(f"ref: {branch}\n" if branch is not None else f"{base}\n")
        lines = "".join(f"{oid} {name}\n" for name, oid in sorted(refs.items()))
        (dest / "packed-refs").write_text("# pack-refs with: peeled fully-peeled sorted \n" + lines)
        if shallow is not None:
            ids = [w for w in shallow.decode("utf-8", "replace").split() if _is_id(w)]
            gone = _missing(dest, ids)
            (dest / "shallow").write_text("".join(f"{i}\n" for i in ids if i not in gone))
        if _is_folder(git_dir / "info"):  # a link there would be followed to the host's
            for name in ("info/exclude", "info/attributes"):
                data = _read_regular(git_dir, name, _SMALL)
                if data is not None:
                    (dest / name).write_bytes(data)
        this = PrunedCopy(path=dest, base=base, refs=len(refs), index="none")
        _copy_modules(git_dir, dest, top, budget, kept, at, ((git_dir, this), *outer))
        index = _copy_index(git_dir, dest, base)
        # for the box's git: only what honest work needs (_kept_config), never a program to run
        (dest / "config").write_text(box_config)
        _check_budget(top, budget)
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)  # nothing half-made is left to be bound
        raise
    finally:
        shutil.rmtree(view, ignore_errors=True)
    return PrunedCopy(path=dest, base=base, refs=len(refs), index=index)


def _below_worktrees(
    git_dir: Path, view: Path, base: str, objects: Path | tuple[Path, ...], primary: Path
) -> str:
    """``base`` (the store's HEAD) or, when the store has linked worktrees
    (``worktrees/NAME/HEAD``), the commit below every one of them and HEAD (``merge-base
    --octopus``): a task checked out as a linked worktree of a bare clone whose own HEAD moved
    on to the fix is pruned at the worktree's commit, not the fix (the s19 nested red team's
    M3); an honest worktree at a newer commit loses its newer history (over-pruning). A
    worktree's HEAD that cannot be read or names no commit here: :class:`PruneError`."""
    folder = git_dir / "worktrees"
    if not os.path.lexists(folder):
        return base
    if not _is_folder(folder):
        raise PruneError(f"{folder} is not a folder")
    heads: list[str] = []
    for name in sorted(os.listdir(folder)):
        raw = _read_regular(git_dir, f"worktrees/{name}/HEAD", 4096)
        if raw is None:
            raise PruneError(f"the HEAD of the linked worktree {name} of {git_dir} is unreadable")
        text = raw.decode("utf-8", "replace").strip()
        rev = text[4:].strip() if text.startswith("ref:") else text
        if not (_is_id(rev) or re.fullmatch(r"refs/[A-Za-z0-9._/-]+", rev)):
            raise PruneError(
                f"the linked worktree {name} of {git_dir} has a HEAD git would not read"
            )
        rc, out, _ = _git(
            view,
            "rev-parse",
            "--verify",
            "-q",
            f"{rev}^{{commit}}",
            objects=objects,
            primary=primary,
        )
        if rc != 0:
            if text.startswith("ref:"):
                continue  # an unborn or per-worktree branch: no commit of the store's
            raise PruneError(f"the linked worktree {name} of {git_dir} names no commit here")
        heads.append(out.decode().strip())
    if not heads:
        return base
    rc, out, err = _git(
        view, "merge-base", "--octopus", base, *heads, objects=objects, primary=primary
    )
    below = out.decode().strip()
    if rc != 0 or not _is_id(below):
        raise PruneError(f"no commit lies below the linked worktrees of {git_dir}: {err}")
    return below


#: The most git stores nested in one work tree :func:`prune_nested` prunes (more: it says so).
MAX_NESTED = 64


def _prune_nested_store(
    store: Path,
    dest: Path,
    base: str,
    top: Path,
    task: Path,
    budget: tuple[int, int],
    deadline: float | None,
) -> None:
    """``store`` pruned into ``dest``: at ``base`` (``top``'s, :func:`prune_copy`'s ``at``)
    when it shares history with the task's store ``task`` (:func:`_related`: a vendored
    mirror or clone of the task, a shallow clone of the fix); at its own HEAD when it shares
    none (an unrelated vendored repository keeps its own history: the s17 red team's W4), or
    at ``base`` when it cannot be pruned at its own HEAD."""
    try:
        own = prune_copy(store, dest, budget=budget, deadline=deadline)
    except OverLimit:
        raise
    except (PruneError, OSError, subprocess.SubprocessError, UnicodeError):
        own = None
    if own is not None and not _related(
        own.path, task, base, dest.with_name(dest.name + ".check"), deadline
    ):
        return
    shutil.rmtree(dest, ignore_errors=True)
    prune_copy(store, dest, budget=budget, deadline=deadline, at=(base, top))


def prune_nested(
    tree: Path,
    top: Path,
    base: str,
    scratch: Path,
    *,
    deadline: float | None = None,
    max_bytes: int = 128 << 20,
    task: Path | None = None,
) -> str:
    """Every git store nested in the work tree ``tree`` replaced in place by its copy pruned at
    ``base``, the enclosing repository's base (``top``: that repository's pruned copy, which
    holds it; :func:`prune_copy` with ``at``): objects the base does not reach are gone, HEAD's
    branch or a detached HEAD is the base, references past it, reflogs, stashes and state
    pointers dropped — where it shares history with the task's git directory ``task``
    (default ``top``; :func:`_prune_nested_store`); one sharing none (an unrelated vendored
    repository) is pruned at its own HEAD instead, its history its own. A store is what the
    phases' search finds (:func:`evotree.harness.git_search.find_git_dirs`: a ``.git`` folder, a
    bare repository or separate git directory — what a ``.git`` file names inside the tree —
    at any depth, links never followed, ``tree/.git`` itself left out); one git would not open
    (a bare object store, a ``.git`` folder without ``HEAD``, ``objects`` and ``refs``) is
    emptied, as is one that cannot be pruned. ``scratch``: a new folder for the copies (removed
    after). Returns "" or why not every store could be pruned (a search cut short, a store that
    is not self-contained, more than :data:`MAX_NESTED`, ``max_bytes`` of copies or the
    ``deadline`` passed): the caller then fails closed; what was replaced stays replaced."""
    from evotree.harness.git_search import find_git_dirs
    from evotree.harness.git_stores import _is_bare

    tree = Path(os.path.realpath(tree))
    cuts: list[str] = []
    found, _ = find_git_dirs([tree], skip=[tree / ".git"], cuts=cuts)
    found = sorted(p for p in found if p != tree / ".git")
    if cuts:
        return cuts[0]
    if len(found) > MAX_NESTED:
        return f"{len(found)} git stores in the work tree (at most {MAX_NESTED} are pruned)"
    scratch.mkdir(mode=0o700)
    failed: list[str] = []
    left = max_bytes
    try:
        for i, store in enumerate(found):
            rel = store.relative_to(tree)
            dest = scratch / str(i)
            try:
                if _is_bare(store):
                    budget = (_MAX_CHECKED, left)
                    _prune_nested_store(store, dest, base, top, task or top, budget, deadline)
                    left -= _usage(dest)[1]
            except (PruneError, OSError, subprocess.SubprocessError, UnicodeError) as exc:
                # said, and emptied all the same: nothing of it is read in the caller's world
                failed.append(f"{rel}: {str(exc)[:160] or type(exc).__name__}")
            try:
                shutil.rmtree(store)
                if os.path.isdir(dest):
                    os.rename(dest, store)
                else:
                    store.mkdir(mode=0o700)
            except OSError as exc:
                failed.append(f"{rel} cannot be replaced ({exc.strerror or exc})")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return "; ".join(failed[:3]) + (f" (and {len(failed) - 3} more)" if len(failed) > 3 else "")
