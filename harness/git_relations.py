"""Which git directories a phase sees are related, and at whose base a related one is pruned.

A store nested in a repository's work tree, lying beside a checkout, or kept under a
repository's ``.git/modules`` may hold that repository's future (a mirror or clone at the fix,
a padded or orphan history holding the fix's files). :func:`relations` says which repositories
each found git directory is tried against (:func:`enclosing`: those whose work trees hold it,
then every checkout the phase sees); :func:`_shares_history` tells whether a store's pruned copy
shares history with one of them (a commit, most of its HEAD's blobs, or any object of that
repository's future: :func:`_holds_future`); :func:`_relate` says at whose base it is then
pruned. The pruning itself is :mod:`evotree.harness.git_prune`'s (``docs/threat-model.md``,
nested stores).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

from evotree.harness.git_store_read import (
    _DEADLINE,
    _POINTERS,
    _SMALL,
    PrunedCopy,
    PruneError,
    _check_self_contained,
    _git,
    _head_state,
    _minimal_config,
    _object_format,
    _own_base,
    _read_regular,
)

__all__ = ["BLOB_SHARE", "checkout_relations", "cross_checked", "enclosing", "relations"]


def enclosing(gd: Path, found: Iterable[Path]) -> list[Path]:
    """The found git directories (``found``) whose work tree holds ``gd``, the nearest first: for
    each folder above it, its ``.git`` folder, or the git directory its ``.git`` file names
    (``gitdir: ...``, the file read without following a link), or the one a ``.git`` link names
    — each compared with the found ones with its links resolved (a ``.git`` link to the store, a
    ``gitdir:`` through a linked folder name the store all the same) — never ``gd`` itself nor
    one holding it."""
    known = set(found)
    real = {os.path.realpath(k): k for k in known}
    out: list[Path] = []
    for folder in gd.parents:
        dot = folder / ".git"
        target: Path | None = None
        if dot in known:
            target = dot
        else:
            try:
                mode = os.lstat(dot).st_mode
            except OSError:
                mode = 0
            if stat.S_ISLNK(mode):
                target = real.get(os.path.realpath(dot))
            raw = _read_regular(folder, ".git", 4096) if stat.S_ISREG(mode) else None
            text = raw.decode("utf-8", "replace").strip() if raw is not None else ""
            if text.startswith("gitdir:"):
                named = Path(os.path.normpath(folder / text[len("gitdir:") :].strip()))
                target = named if named in known else real.get(os.path.realpath(named))
        if target is not None and target != gd and target not in gd.parents:
            out.append(target)
    return out


def relations(git_dirs: Sequence[Path]) -> dict[Path, list[Path]]:
    """The repositories each of ``git_dirs`` is related to before it is pruned (nearest first):
    those whose work trees hold it (:func:`enclosing`), then every checkout the phase sees (a
    found repository that no work tree holds and that is no sibling) that neither holds nor is
    held by it — a mirror in an unrelated library's work tree beside the task's checkout is
    tried against the task too (the s17 second red team's R4). A sibling is a store in no found
    work tree that holds none either and has no work tree of its own: no ``.git``, or a ``.git``
    whose folder holds nothing else (a bare mirror named ``cache/.git``, R3). Checkouts are
    related to nothing here: they are pruned first, at their own bases, and then tried against
    one another both ways (:func:`checkout_relations`; R3 with a work tree). No cycle: a
    checkout names none, and what holds a store is never held by it."""
    outer = {gd: enclosing(gd, git_dirs) for gd in git_dirs}
    holding = {o for found in outer.values() for o in found}
    siblings = [
        gd
        for gd in git_dirs
        if not outer[gd] and gd not in holding and (gd.name != ".git" or _no_work_tree(gd))
    ]
    tops = [gd for gd in git_dirs if not outer[gd] and gd not in siblings]
    for gd in git_dirs:
        if gd in tops:
            continue
        outer[gd] = outer[gd] + [
            t for t in tops if t not in outer[gd] and t not in gd.parents and gd not in t.parents
        ]
    return outer


def cross_checked(git_dirs: Sequence[Path]) -> tuple[list[Path], frozenset[tuple[Path, Path]]]:
    """What every store's final copy is tried against once all are pruned
    (:func:`checkout_relations` with ``against`` and ``exempt``): (every store the phase sees —
    every checkout, nested or not, and every store beside one or nested in one, bare ones
    included —; the pairs (``S``, ``K``) not tried: ``S`` a ``.git`` folder whose work tree
    holds ``K``, itself a ``.git`` folder with a work tree, or one of the two holding the
    other). A store nested in another's work tree
    is a checkout all the same: a ``.git`` file or folder an earlier phase writes above the
    task's checkout makes it nested in a store of its own choosing, and the mirror at the fix
    beside it is then tried against that store alone (the s18 third red team's N1) — so every
    checkout's future is tried against every store's copy. And every checkout is tried the
    other way too, against the future of every store beside it or nested in it (issue 29): the
    task's store kept bare beside a clone with a work tree checked out at the fix is related to
    the clone (which reaches its base) and kept at its own base, so the clone — whose copy holds
    that store's future — is pruned at that base; the same with that bare store in the clone's
    work tree. A ``.git`` folder is never re-pruned for holding the future of a checkout in its
    own work tree (an honest task holding a clone of itself at an older commit): a candidate
    cannot make one holding the future (the stores holding it are bound as pruned copies and
    cannot be moved), while a ``.git`` file above a checkout naming a mirror at the fix is what
    N1 writes; a bare store, or a separate git directory, in its work tree is tried (fail
    closed: an honest vendored mirror of the task whose HEAD is older than the task's base
    but whose store holds it prunes the task at that older commit — over-pruning, no leak)."""
    against = list(git_dirs)
    exempt = frozenset(
        (s, k)
        for s in git_dirs
        for k in against
        if s != k
        and (
            s in k.parents
            or k in s.parents
            or (s.name == ".git" and _is_dir(s) and s.parent in k.parents and _checkout(k))
        )
    )
    return against, exempt


def _checkout(gd: Path) -> bool:
    """Whether ``gd`` is a ``.git`` folder with a work tree of its own (a checkout), not a bare
    store or a separate git directory."""
    return gd.name == ".git" and _is_dir(gd) and not _no_work_tree(gd)


def _is_dir(path: Path) -> bool:
    """A folder itself, not a link to one."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _no_work_tree(gd: Path) -> bool:
    """Whether the folder of the ``.git`` ``gd`` holds nothing but it (no work tree to check out:
    a bare store under a checkout's name)."""
    try:
        return os.listdir(gd.parent) == [".git"]
    except OSError:
        return False


def _history_ids(copy: Path) -> set[str]:
    """The commits the pruned copy ``copy`` holds (every reference's and HEAD's history), its
    submodules' copies' too (``modules/``), and the parents they name — a shallow clone's
    boundary commits' too, which git lists as roots."""
    ids: set[str] = set()
    stack = [copy]
    while stack:
        store = stack.pop()
        ids |= _store_ids(store)
        modules = store / "modules"
        for folder, dirs, _ in os.walk(modules) if os.path.isdir(modules) else ():
            if "HEAD" in os.listdir(folder) and "objects" in dirs:
                stack.append(Path(folder))
                dirs.clear()
    return ids


def _store_ids(copy: Path) -> set[str]:
    """:func:`_history_ids` of one pruned store, its submodules aside."""
    rc, out, err = _git(copy, "rev-list", "--parents", "--all")
    if rc != 0:
        raise PruneError(f"the history of its copy cannot be listed: {err}")
    ids = set(out.decode("ascii", "replace").split())
    for parents in _boundary_parents(copy, ids).values():
        ids.update(parents)
    return ids


def _boundary_parents(copy: Path, ids: Collection[str]) -> dict[str, list[str]]:
    """The parents each commit of ``ids`` on the shallow boundary of the pruned copy ``copy``
    names (git lists such a commit as a root): one ``cat-file --batch`` of them."""
    raw = _read_regular(copy, "shallow", 1 << 20)
    boundary = [w for w in (raw or b"").decode("ascii", "replace").split() if w in ids]
    found: dict[str, list[str]] = {}
    if not boundary:
        return found
    rc, out, err = _git(
        copy, "cat-file", "--batch", stdin="".join(f"{b}\n" for b in boundary).encode()
    )
    if rc != 0:
        raise PruneError(f"its shallow boundary cannot be read: {err}")
    at = 0
    while at < len(out):  # "<id> <type> <size>\n<content>\n", the parents in its header
        end = out.index(b"\n", at)
        words = out[at:end].split()
        size = int(words[2]) if len(words) == 3 else 0
        header = out[end + 1 : end + 1 + size].split(b"\n\n", 1)[0]
        mine = found.setdefault(words[0].decode("ascii", "replace"), [])
        for line in header.splitlines() if words[1:2] == [b"commit"] else ():
            if line.startswith(b"parent ") and len(line.split()) == 2:
                mine.append(line.split()[1].decode("ascii", "replace"))
        at = end + 1 + size + 1
    return found


#: The share of the (distinct, non-empty) blobs of a store's HEAD tree that, found in another
#: store, makes the two related though no commit id is shared (:func:`_shares_history`): more
#: than half. A fix changes a few of a task's files, so a store holding the task's tree at a
#: commit near its base under commits of its own (a rewritten or snapshot history, a shallow
#: clone past the base) shares most of its blobs with the task's store; blobs are content ids,
#: so an unrelated repository (a library, a test's fixture) shares only identical files, a
#: licence or two among its own (empty files are not counted: every repository has them).
BLOB_SHARE = 0.5


#: Objects every repository may hold that tell nothing of a task's future: the empty blob and
#: the empty tree (sha1 and sha256).
_EMPTY_OBJECTS = frozenset(
    {
        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
        "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813",
        "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
    }
)
#: :func:`_future_objects` by (the store's real path, the base, the state of its object folders).
_FUTURE_CACHE: dict[tuple[str, str | None, str], frozenset[str]] = {}
_FUTURE_CACHE_KEEP = 16


def _objects_state(git_dir: Path) -> str:
    """The identity, size and change time of ``git_dir``'s object folders and packs: a store
    that gained or lost an object reads as another state."""
    digest = hashlib.sha256()
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
        if folder.name == "pack":
            for entry in sorted(os.scandir(folder), key=lambda e: e.name):
                st = entry.stat(follow_symlinks=False)
                digest.update(
                    os.fsencode(entry.name)
                    + f" {st.st_ino} {st.st_size} {st.st_mtime_ns}\n".encode()
                )
    shallow = _read_regular(git_dir, "shallow", _SMALL) or b""
    digest.update(b"shallow\0" + shallow)
    return digest.hexdigest()


def _future_objects(
    outer: Path, base: str | None, scratch: Path, *, own_only: bool = False
) -> frozenset[str]:
    """The task's future in its store ``outer``: every object the store holds (loose or packed,
    referenced or not) that ``base`` does not reach — all of them when there is no base — and
    those its future commits and trees name that it lacks (:func:`_named_missing`: a partial
    clone's blobs), but the empty blob and tree. One ``cat-file --batch-all-objects`` and two
    ``rev-list --objects`` of the store (read as the pruning reads it: self-contained, through a view with
    evotree's config, in ``scratch``), kept for the next store tried against the same one;
    :class:`PruneError` where it cannot be listed. ``own_only``: a store left unpruned for not
    being self-contained (an alternates file: an image cloned ``--reference``; the s19 red
    team's M1) is read for the objects of its own folder alone, its pointers not followed: its
    future is those ``base`` does not reach within them (the walk stops at a commit whose parent
    lies elsewhere), all of them when ``base`` itself lies elsewhere; the objects it names but
    does not hold are not added (they lie in the store its alternates name: most are the base's)."""
    _check_self_contained(outer, pointers=not own_only)
    key = (os.path.realpath(outer), base, own_only, _objects_state(outer))
    hit = _FUTURE_CACHE.get(key)
    if hit is not None:
        return hit
    scratch.mkdir(mode=0o700)
    try:
        config, _ = _minimal_config(outer, scratch)
        (scratch / "config").write_text(config)
        (scratch / "HEAD").write_text("ref: refs/heads/main\n")
        for sub in ("refs", "objects"):
            (scratch / sub).mkdir()
        shallow = _read_regular(outer, "shallow", _SMALL)
        if shallow is not None:
            (scratch / "shallow").write_bytes(shallow)
        objects = _own_objects(outer, scratch / "own") if own_only else outer / "objects"
        rc, out, err = _git(
            scratch,
            "cat-file",
            "--batch-all-objects",
            "--unordered",
            "--batch-check=%(objectname) %(objecttype)",
            objects=objects,
            primary=scratch / "objects",
        )
        if rc != 0:
            raise PruneError(f"the objects of {outer} cannot be listed: {err}")
        rows = [line.split() for line in out.decode("ascii", "replace").splitlines()]
        held = {words[0] for words in rows if words}
        if own_only:
            commits = [w[0] for w in rows if w[1:] == ["commit"]]
            edge = _parents_elsewhere(scratch, commits, held, objects)
            if edge:
                with open(scratch / "shallow", "a", encoding="ascii") as fh:
                    fh.write("".join(f"{c}\n" for c in edge))
        base_held = base is not None and base in held
        if base is not None and (not own_only or base_held):
            rc, out, err = _git(
                scratch,
                "rev-list",
                "--objects",
                "--no-object-names",
                "--missing=allow-any",
                base,
                "--",
                objects=objects,
                primary=scratch / "objects",
            )
            if rc != 0:
                raise PruneError(f"what the base of {outer} reaches cannot be listed: {err}")
            held -= set(out.decode("ascii", "replace").split())
        roots = [w[0] for w in rows if w[1:] in (["commit"], ["tree"]) and w[0] in held]
        if not own_only:
            held |= _named_missing(scratch, roots, base, outer)
        else:
            # the objects its future names that neither it nor the stores its alternates file
            # names hold: a blob-less clone's future blobs, never fetched (the s20 red team's U5)
            named = _named_missing(scratch, roots, base if base_held else None, outer, objects)
            held |= _held_nowhere(scratch, named, outer, objects)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    future = frozenset(held - _EMPTY_OBJECTS)
    if len(_FUTURE_CACHE) >= _FUTURE_CACHE_KEEP:
        _FUTURE_CACHE.pop(next(iter(_FUTURE_CACHE)))
    _FUTURE_CACHE[key] = future
    return future


def _holds_no_object(gd: Path) -> bool:
    """Whether the store ``gd`` holds no object of its own: its ``objects/`` folders (``info``
    aside) are empty folders, no link among them. Such a store has no future, so trying it costs
    no git run and counts toward no cap."""
    try:
        for entry in os.scandir(gd / "objects"):
            if entry.name == "info":
                continue
            if not entry.is_dir(follow_symlinks=False) or any(os.scandir(entry.path)):
                return False
    except OSError:
        return False
    return True


def _own_objects(outer: Path, view: Path) -> Path:
    """A folder of links to the object folders of the store ``outer`` itself (``pack`` and the
    loose ones, checked by :func:`_check_self_contained` as folders, no link), without its
    ``info``: git reading it as an alternate reads the store's own objects and no store its
    alternates file names."""
    view.mkdir(mode=0o700)
    for entry in os.scandir(outer / "objects"):
        if entry.name != "info" and entry.is_dir(follow_symlinks=False):
            os.symlink(entry.path, view / entry.name)
    return view


def _parents_elsewhere(
    scratch: Path, commits: list[str], held: set[str], objects: Path
) -> list[str]:
    """The ``commits`` (held in the store read through ``objects``) a parent of which it does
    not hold (it lies in the store an alternates file names): the walks stop there, as at a
    shallow clone's boundary. One ``cat-file --batch`` of the commits."""
    if not commits:
        return []
    rc, out, err = _git(
        scratch,
        "cat-file",
        "--batch",
        stdin="".join(f"{c}\n" for c in commits).encode(),
        objects=objects,
        primary=scratch / "objects",
    )
    if rc != 0:
        raise PruneError(f"the commits of its own objects cannot be read: {err}")
    edge: list[str] = []
    at = 0
    for c in commits:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        if len(header) != 3 or header[1] != b"commit":
            raise PruneError(f"commit {c} cannot be read")
        size = int(header[2])
        body = out[header_end + 1 : header_end + 1 + size]
        at = header_end + 1 + size + 1
        head = body.split(b"\n\n", 1)[0].decode("ascii", "replace")
        parents = [line[7:].strip() for line in head.splitlines() if line.startswith("parent ")]
        if any(p not in held for p in parents):
            edge.append(c)
    return edge


def _named_missing(
    scratch: Path,
    roots: list[str],
    base: str | None,
    outer: Path,
    objects: Path | None = None,
) -> set[str]:
    """The objects the commits and trees ``roots`` of the store ``outer`` reach (``base``
    aside) that the store does not hold: a partial clone's (``--filter=blob:none``, as CI
    clones) future blobs, named by the future's trees though never fetched (the s18 third red
    team's N5). One ``rev-list --objects --missing=print`` (the missing ones listed with a
    ``?``); :class:`PruneError` where it cannot be listed. ``objects``: the folder read as its
    objects (a view of its own folder's, :func:`_own_objects`)."""
    if not roots:
        return set()
    rc, out, err = _git(
        scratch,
        "rev-list",
        "--objects",
        "--no-object-names",
        "--missing=print",
        "--stdin",
        stdin="".join(f"{r}\n" for r in roots).encode() + (f"^{base}\n".encode() if base else b""),
        objects=objects or outer / "objects",
        primary=scratch / "objects",
    )
    if rc != 0:
        raise PruneError(f"the objects the future of {outer} names cannot be listed: {err}")
    words = out.decode("ascii", "replace").split()
    return {w[1:] for w in words if w.startswith("?") and len(w) > 1}


def _held_nowhere(scratch: Path, ids: set[str], outer: Path, own: Path) -> set[str]:
    """Of ``ids`` (objects the store ``outer`` names but does not hold), those no store its
    alternates file names holds either (read as git reads them, for their ids alone): what was
    never fetched. All of ``ids`` where the file cannot be read (fail closed: more future)."""
    if not ids:
        return set()
    raw = _read_regular(outer, "objects/info/alternates", _SMALL)
    if raw is None:
        return set(ids)
    stores: list[Path] = []
    for line in raw.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line or line.startswith(("#", '"')):
            continue
        path = Path(line) if os.path.isabs(line) else outer / "objects" / line
        if os.path.isdir(path):
            stores.append(path)
    if not stores:
        return set(ids)
    rc, out, err = _git(
        scratch,
        "cat-file",
        "--batch-check=%(objectname)",
        stdin="".join(f"{i}\n" for i in sorted(ids)).encode(),
        objects=(own, *stores),
        primary=scratch / "objects",
    )
    if rc != 0:
        raise PruneError(
            f"whether the objects {outer} names are held elsewhere cannot be told: {err}"
        )
    return {
        line.split()[0]
        for line in out.decode("ascii", "replace").splitlines()
        if line.endswith(" missing")
    }


def _copy_objects(copy: Path) -> set[str]:
    """Every object the pruned copy ``copy`` holds (any history it keeps, not only HEAD's
    tree), its submodules' copies' too (``modules/``)."""
    ids: set[str] = set()
    stack = [copy]
    while stack:
        store = stack.pop()
        rc, out, err = _git(
            store, "cat-file", "--batch-all-objects", "--unordered", "--batch-check=%(objectname)"
        )
        if rc != 0:
            raise PruneError(f"the objects of its copy cannot be listed: {err}")
        ids |= set(out.decode("ascii", "replace").split())
        modules = store / "modules"
        for folder, dirs, _ in os.walk(modules) if os.path.isdir(modules) else ():
            if "HEAD" in os.listdir(folder) and "objects" in dirs:
                stack.append(Path(folder))
                dirs.clear()
    return ids


def _holds_future(copy: Path, outer: Path, base: str | None, scratch: Path) -> bool:
    """Whether the pruned copy ``copy`` holds the future of the task whose store is ``outer``
    and base ``base``: an object of ``copy`` (any blob, tree or commit of any history it keeps)
    is one of :func:`_future_objects`."""
    future = _future_objects(outer, base, scratch)
    return bool(future) and not future.isdisjoint(_copy_objects(copy))


def _shares_history(copy: Path, outer: Path, base: str | None, scratch: Path) -> bool:
    """Whether the pruned copy ``copy`` (what a nested store's own HEAD reaches) shares history
    with the git directory ``outer``: it holds ``outer``'s base (``base``), or one of its
    commits or the parents they name is a commit of ``outer``'s store, referenced or not (a
    shallow clone of the fix holds no base, and the fix is a commit no reference of the task's
    store names), or it holds an object of ``outer``'s store that ``base`` does not reach
    (:func:`_holds_future`: a padded or orphan history holding the fix's blobs), or more than
    :data:`BLOB_SHARE` of the blobs of its HEAD's tree are objects of ``outer``'s store (its
    history rewritten). ``outer``'s store is read as the pruning
    reads a store (self-contained, through a view with evotree's config, in ``scratch``);
    :class:`PruneError` where that cannot be told — and where the two object formats differ
    (a sha256 conversion of a sha1 task's history shares no object id with it, whatever it
    holds: the s18 third red team's N4; the caller hides, refuses or empties it)."""
    _same_format(copy, outer)
    ids = _history_ids(copy)
    if base is not None and base in ids:
        return True
    if _holds_future(copy, outer, base, scratch.with_name(scratch.name + ".future")):
        return True  # whatever its commits or blob share say (the s17 second red team's R1, R2)
    if not ids:
        return False
    blobs: set[str] = set()
    rc, out, _ = _git(copy, "ls-tree", "-r", "-l", "HEAD")
    for line in out.decode("utf-8", "replace").splitlines() if rc == 0 else ():
        words = line.split("\t", 1)[0].split()
        if len(words) == 4 and words[1] == "blob" and words[3] not in ("0", "-"):
            blobs.add(words[2])
    _check_self_contained(outer)
    scratch.mkdir(mode=0o700)
    try:
        config, _ = _minimal_config(outer, scratch)
        (scratch / "config").write_text(config)
        (scratch / "HEAD").write_text("ref: refs/heads/main\n")
        for sub in ("refs", "objects"):
            (scratch / sub).mkdir()
        rc, out, err = _git(
            scratch,
            "cat-file",
            "--batch-check",
            stdin="".join(f"{i}\n" for i in [*sorted(ids), *sorted(blobs)]).encode(),
            objects=outer / "objects",
            primary=scratch / "objects",
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if rc != 0:
        raise PruneError(f"the store of {outer} cannot be read: {err}")
    found = {
        (words[0].decode("ascii", "replace"), words[1])
        for words in (line.split() for line in out.splitlines())
        if len(words) >= 2
    }
    if any(kind == b"commit" for _, kind in found):
        return True
    shared = sum(1 for b in blobs if (b, b"blob") in found)
    return bool(blobs) and shared > BLOB_SHARE * len(blobs)


def _same_format(one: Path, other: Path) -> None:
    """:class:`PruneError` unless the git directories ``one`` and ``other`` have the same
    object format: no object id is shared across formats, so whether one holds the other's
    history or future cannot be told by ids (and no base of one is a commit of the other)."""
    mine, theirs = _object_format(one), _object_format(other)
    if mine != theirs:
        raise PruneError(
            f"its object format ({mine}) is not that of {other} ({theirs}): whether it holds "
            "that repository's history or future cannot be told"
        )


def _reaches(
    copy: PrunedCopy, oid: str, seen: dict[Path, set[str]], own: PrunedCopy | None = None
) -> bool:
    """Whether the base of the pruned copy ``copy`` reaches the commit ``oid``: one of the
    commits it holds, or a parent one of them names (:func:`_store_ids`) — a shallow clone's
    boundary names its parent, which the clone does not hold —, or, where the copy ``own``
    holds that base, a commit of its history there (commit ids name their parents: the
    history one store holds is the base's in any other). A ``--depth 1`` clone of the fix, or
    of a commit past it, reaches the task's base all the same (the s21 relate red team's R1).
    ``seen``: the ids read so far, by copy."""
    if copy.path not in seen:
        ids = _store_ids(copy.path)
        if own is not None and copy.base:
            rc, out, _ = _git(own.path, "rev-list", "--parents", copy.base, "--")
            if rc == 0:
                ids |= set(out.decode("ascii", "replace").split())
        seen[copy.path] = ids
    return oid in seen[copy.path]


def _relate(
    own: PrunedCopy, outer: Sequence[tuple[Path, PrunedCopy | None]], scratch: Path
) -> tuple[str, Path] | None:
    """Where the store whose copy at its own HEAD is ``own`` must be pruned instead: ``None``
    (its own copy stands) when it shares history (:func:`_shares_history`) with none of
    ``outer`` (each a git directory and its pruned copy, ``None`` when it was not pruned), or
    when the base of every one it shares history with reaches its HEAD and it holds no
    submodule (a clone at the task's base or behind it, whichever is the task: nothing past
    that base); else the task's (base, pruned copy). The task's base is the earliest of those:
    the one every other's copy reaches — a mirror past both the task's checkout and a clone at
    the fix beside it is pruned at the task's base whatever their names or nesting (the s20
    HEAD red team's H8), never at the first found. :class:`PruneError` when one it shares
    history with has no copy (not pruned, or no commit: the caller hides it) or cannot be
    told, or when no base is reached by all (histories that diverged: which is the task's
    cannot be told)."""
    shared = [
        (store, there)
        for store, there in outer
        if _shares_history(own.path, store, there.base if there else None, scratch)
    ]
    if not shared:
        return None
    for store, there in shared:
        if there is None or there.base is None:
            raise PruneError(
                f"it shares history with {store}, whose work tree holds it (or which lies beside "
                "it), and that repository was not pruned at a base"
            )
    copies = [there for _, there in shared if there is not None]
    seen: dict[Path, set[str]] = {}
    if (
        own.base is not None
        and not os.path.lexists(own.path / "modules")
        and all(_reaches(there, own.base, seen, own) for there in copies)
    ):
        return None  # at or behind every base it shares history with, whichever is the task's
    earliest = [
        there
        for there in copies
        if all(o is there or _reaches(o, str(there.base), seen, own) for o in copies)
    ]
    if not earliest:
        raise PruneError(
            f"it shares history with {', '.join(str(s) for s, _ in shared)}, whose bases do not "
            "reach one another: which is the task's cannot be told"
        )
    return str(earliest[0].base), earliest[0].path


def _related(own: Path, task: Path, base: str, check: Path, deadline: float | None) -> bool:
    """Whether the nested store's own pruned copy ``own`` shares history with the task's git
    directory ``task`` (it holds ``base``, or a commit of ``task``'s store or a parent one of
    its commits names); True where that cannot be told (pruned at the base, as before)."""
    token = _DEADLINE.set(deadline) if deadline is not None else None
    try:
        return bool(_shares_history(own, task, base, check))
    except (PruneError, OSError, subprocess.SubprocessError, UnicodeError):
        return True
    finally:
        if token is not None:
            _DEADLINE.reset(token)


#: The most stores left unpruned (hidden or refused) whose futures :func:`checkout_relations`
#: lists; past it, every copy not exempt from one more is not kept (the cost stays bounded).
MAX_UNPRUNED = 32


def checkout_relations(
    copies: Mapping[Path, PrunedCopy],
    against: Collection[Path] | None = None,
    exempt: Collection[tuple[Path, Path]] = (),
    lenient: Collection[Path] = (),
) -> dict[Path, list[Path] | PruneError]:
    """Every pair of ``copies`` tried both ways: for each (a store the phase sees in no work
    tree — a checkout, or a store beside none — its copy pruned at its own base), the others
    whose future its copy holds (:func:`_holds_future`: which of two checkouts is the task cannot
    be told, so each is tried against each), in ``copies``' order; a :class:`PruneError` where
    that cannot be told (its copy's objects, or another's future, cannot be listed; or the two
    object formats differ). Only those related to one or more are named: two unrelated
    checkouts beside each other are not. ``against``: only these ones' futures are tried (every
    store's final copy against every store's future, :func:`cross_checked`) — one of them with
    no copy (not pruned: hidden or refused; past the cap, its pruning failed or its deadline
    passed) is tried at its own HEAD (:func:`_own_base`; every object it holds where that
    cannot be read) and, its objects its own, at the earliest of the other copies' bases it
    holds too (:func:`_earliest_bases`: its HEAD may lie past the task's base — a mirror past
    the fix hidden past the cap or beside bases that diverge, the s21 relate red team's R2, R6,
    R10), and a copy holding its future is not kept (a :class:`PruneError`: no base to prune it
    at) — unless only past those bases and holding one, then named related to that one's copy
    (pruned again at it); one whose future cannot be listed (not self-contained: a ``commondir`` or
    links a candidate writes, which must not hide the task beside it) is left out, unless the
    deadline has passed (every copy then not kept) — a ``.git`` folder is tried against one in
    its own work tree too (the s19 red team's M2, M6: the task's store pushed past the cap or
    refused there); past :data:`MAX_UNPRUNED` of them tried, every copy not exempt
    from one more is not kept; ``exempt``: the pairs (the copy's store, the one whose future)
    not tried. An unpruned store whose objects lie partly elsewhere (a pointer: an alternates
    file) or whose future cannot be listed at all (a link or special file in it, a config too
    big, an unknown ref format: the s20 red team's U1-U4) is also tried by its HEAD where that
    can be read: a copy holding that commit and commits past it is not kept
    (:func:`_past_head`) — unless the store is ``lenient`` (in a folder another version's code
    writes, the shared cache: a HEAD written there must not hide every version's task)."""
    tried = list(copies) if against is None else list(against)
    if len(copies) < 1 or len(tried) < 2:
        return {}
    out: dict[Path, list[Path] | PruneError] = {}
    held: dict[Path, set[str]] = {}
    for gd, copy in copies.items():
        try:
            held[gd] = _copy_objects(copy.path)
        except (PruneError, OSError, subprocess.SubprocessError, UnicodeError) as exc:
            out[gd] = PruneError(f"the objects of its copy cannot be listed: {exc}")
    some = next(iter(copies.values())).path
    unpruned = 0
    for n, other in enumerate(tried):
        there = copies.get(other)
        # a store other versions' code may have written (the shared cache) decides nothing
        # about a copy outside it: its "future" (a blob of the task's base a candidate wrote)
        # would re-prune or hide every version's task (the s20 HEAD red team's H6)
        skip = {
            gd
            for gd in copies
            if gd == other or (gd, other) in exempt or (other in lenient and gd not in lenient)
        }
        if all(gd in skip for gd in held):
            continue
        pointers = there is None and any(os.path.lexists(other / p) for p in _POINTERS)
        earliest: dict[str, tuple[Path, frozenset[str]]] = {}
        own_future: frozenset[str] = frozenset()
        if there is None and _holds_no_object(other) and not pointers:
            continue  # nothing in it: no future (an empty store a candidate's code made)
        try:
            if there is None:
                unpruned += 1
                if unpruned > MAX_UNPRUNED:
                    raise PruneError(f"more than {MAX_UNPRUNED} stores were left unpruned")
            if there is not None:
                scratch = there.path.with_name(there.path.name + ".future")
                future = _future_objects(other, there.base, scratch)
            else:
                scratch = some.with_name(f"{some.name}.unpruned{n}.future")
                # a store not self-contained (an alternates file: the task's image cloned
                # --reference, the s19 red team's M1) tried for its own objects alone, and by
                # its HEAD (the rest of its future lies in the store the pointer names)
                if pointers and other not in lenient:
                    _past_head(
                        other, held, copies, skip, out, "its objects lie partly elsewhere", lenient
                    )
                future = _future_objects(other, _own_base(other), scratch, own_only=pointers)
                if not pointers:
                    # its HEAD may lie past the task's base (a mirror hidden past the cap, or
                    # for bases that diverge): what the earliest bases beside it reach is all
                    # that is not future (the s21 relate red team's R2, R6) — an exempt copy's
                    # base too (the task's .git around a vendored clone past the fix: R12)
                    eligible = {
                        copies[gd].base: gd
                        for gd in reversed(list(copies))
                        if gd != other
                        and copies[gd].base
                        and (gd not in lenient or other in lenient)
                    }
                    earliest = _earliest_bases(other, eligible, copies, scratch)
                    if earliest:
                        beyond = frozenset.intersection(*(f for _, f in earliest.values()))
                        own_future, future = future, future | beyond
        except (PruneError, OSError, subprocess.SubprocessError, UnicodeError) as exc:
            if there is None and unpruned <= MAX_UNPRUNED and not _past_deadline():
                # unreadable (a link, a special file...): hidden itself, tried by its HEAD
                if other not in lenient:
                    _past_head(
                        other,
                        held,
                        copies,
                        skip,
                        out,
                        f"its future cannot be listed ({exc})",
                        lenient,
                    )
                continue
            why = PruneError(f"whether it holds the future of {other} cannot be told: {exc}")
            for gd in held:
                if gd not in skip and gd not in out:
                    out[gd] = why
            continue
        if not future:  # nothing past its base: no copy can hold its future, whatever its format
            continue
        for gd, ids in held.items():
            found = out.get(gd, [])
            if gd in skip or not isinstance(found, list):
                continue
            try:
                _same_format(copies[gd].path, other)
            except (PruneError, OSError, subprocess.SubprocessError, UnicodeError) as exc:
                out[gd] = exc if isinstance(exc, PruneError) else PruneError(str(exc))
                continue
            if future.isdisjoint(ids):
                continue
            at = [k for base, (k, _) in earliest.items() if base in ids and k != gd]
            if there is None and at and own_future.isdisjoint(ids):
                # past the earliest base beside it only: pruned again there
                out[gd] = [*found, *(k for k in at[:1] if k not in found)]
            elif there is None:
                out[gd] = PruneError(
                    f"it holds the future of {other}, which was not pruned (hidden): no base to "
                    "prune it at can be told"
                )
            else:
                out[gd] = [*found, other]
    return out


def _earliest_bases(
    other: Path, bases: Mapping[str, Path], copies: Mapping[Path, PrunedCopy], scratch: Path
) -> dict[str, tuple[Path, frozenset[str]]]:
    """Of ``bases`` (each a copy's base, and that copy), those the unpruned store ``other``
    holds that reach no other one it holds (the earliest: the task's, whichever copy is the
    task), each with its copy and the store's future there (:func:`_future_objects`). A base
    the store does not hold stands for the latest commits of that copy's history it holds
    (:func:`_held_tips`: the task's upstream base under a commit of its own), none where it
    holds none (an orphan's, another repository's); :class:`PruneError` where the deadline
    passes."""
    futures: dict[str, frozenset[str]] = {}
    owner = dict(bases)
    missing: list[str] = []
    for base in bases:
        try:
            futures[base] = _future_objects(
                other, base, scratch.with_name(f"{scratch.name}.base{len(futures)}")
            )
        except (PruneError, OSError, subprocess.SubprocessError, UnicodeError):
            if _past_deadline():
                raise
            missing.append(base)
    for base in missing:
        try:
            tips = _held_tips(
                other, copies[bases[base]].path, base, scratch.with_name(scratch.name + ".tips")
            )
        except (PruneError, OSError, subprocess.SubprocessError, UnicodeError, ValueError):
            if _past_deadline():
                raise
            continue
        for tip in sorted(tips - set(owner)):
            try:
                futures[tip] = _future_objects(
                    other, tip, scratch.with_name(f"{scratch.name}.base{len(futures)}")
                )
                owner[tip] = bases[base]
            except (PruneError, OSError, subprocess.SubprocessError, UnicodeError):
                if _past_deadline():
                    raise
    return {
        base: (owner[base], future)
        for base, future in futures.items()
        if all(o == base or o in future for o in futures)
    }


def _held_tips(other: Path, copy: Path, base: str, scratch: Path) -> set[str]:
    """The latest commits of the history of ``base`` in the pruned copy ``copy`` that the store
    ``other`` holds (each held, a child of it in that history not; a shallow boundary's parents
    too): one ``rev-list`` of the copy, one ``cat-file --batch-check`` of the store (read as :func:`_shares_history` reads
    it)."""
    rc, out, err = _git(copy, "rev-list", "--parents", base, "--")
    if rc != 0:
        raise PruneError(f"the history of {copy} cannot be listed: {err}")
    rows = [line.split() for line in out.decode("ascii", "replace").splitlines() if line]
    # a shallow copy's boundary names its parents all the same (the s21 relate red team's R13)
    named = _boundary_parents(copy, {row[0] for row in rows})
    rows = [row[:1] + named[row[0]] if row[0] in named else row for row in rows]
    ids = sorted({w for row in rows for w in row})
    if not ids:
        return set()
    scratch.mkdir(mode=0o700)
    try:
        config, _ = _minimal_config(other, scratch)
        (scratch / "config").write_text(config)
        (scratch / "HEAD").write_text("ref: refs/heads/main\n")
        for sub in ("refs", "objects"):
            (scratch / sub).mkdir()
        rc, found, err = _git(
            scratch,
            "cat-file",
            "--batch-check",
            stdin="".join(f"{i}\n" for i in ids).encode(),
            objects=other / "objects",
            primary=scratch / "objects",
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if rc != 0:
        raise PruneError(f"the store of {other} cannot be read: {err}")
    held = {
        words[0].decode("ascii", "replace")
        for words in (line.split() for line in found.splitlines())
        if len(words) >= 2 and words[1] == b"commit"
    }
    return {p for row in rows if row[0] not in held for p in row[1:] if p in held}


def _past_head(
    other: Path,
    held: Mapping[Path, set[str]],
    copies: Mapping[Path, PrunedCopy],
    skip: Collection[Path],
    out: dict[Path, list[Path] | PruneError],
    why: str,
    lenient: Collection[Path] = (),
) -> None:
    """Every copy (not in ``skip``) holding the HEAD of the unpruned store ``other`` (read
    without git, :func:`_own_base`) at another base — a copy pruned at a base holds only that
    base's history, so it holds commits past that HEAD — is not kept: the store's future cannot
    be told whole (``why``), and a clone at the fix beside it is the clone the issue-29 pass
    exists to catch. A copy at that very commit (the task's checkout beside its own store) is
    kept. A HEAD no copy holds may lie past the task's base (a mirror fetched later: the s20
    HEAD red team's H7), so that base cannot be told from it: a copy holding another copy's base
    at a base of its own (a clone at the fix beside the task's checkout) is named related to
    that one (the caller prunes it again at the earliest such base) — a copy ``lenient`` (in the
    shared cache, which other versions' code writes) neither names that base nor holds that HEAD
    for one outside it (the s21 relate red team's R9: junk one commit back there re-pruned
    another version's task). An unborn HEAD (no commit)
    holds no history: nothing is done; a HEAD that cannot be read (its ``packed-refs`` or
    reference a link, a HEAD of garbage: the s20 red team's U3) may be any commit, so every
    copy is not kept."""
    head, unreadable = _head_state(other)
    if head is None and not unreadable:
        return
    histories: dict[Path, set[str]] = {}
    for gd in held:
        if gd in skip or not isinstance(out.get(gd, []), list):
            continue
        if head is None:
            out[gd] = PruneError(
                f"it may hold the HEAD of {other}, which cannot be read, and {why}: no base to "
                "prune it at can be told"
            )
            continue
        try:
            # its commits and the parents they name: a shallow clone of the fix names the
            # HEAD as its boundary's parent (the s20 HEAD red team's H1)
            histories[gd] = _history_ids(copies[gd].path)
        except (PruneError, OSError, subprocess.SubprocessError, UnicodeError) as exc:
            out[gd] = PruneError(f"whether it holds the HEAD of {other} cannot be told: {exc}")
            continue
        if head in histories[gd] and copies[gd].base != head:
            out[gd] = PruneError(
                f"it holds the HEAD of {other} and commits past it, and {why}: no base to prune "
                "it at can be told"
            )
    if head is None or any(head in ids for k, ids in histories.items() if k not in lenient):
        return
    for gd, ids in histories.items():
        found = out.get(gd, [])
        if not isinstance(found, list):
            continue
        mine = copies[gd].base
        earlier = [
            k
            for k, there in copies.items()
            if k != gd
            and there.base
            and there.base != mine
            and there.base in ids
            and (k not in lenient or gd in lenient)
        ]
        out[gd] = [*found, *(k for k in earlier if k not in found)]
        if not out[gd]:
            del out[gd]


def _past_deadline() -> bool:
    """Whether the pruning under way has passed its deadline (``_DEADLINE``)."""
    deadline = _DEADLINE.get()
    return deadline is not None and time.monotonic() >= deadline
