"""Fifth red team (session 20) of nested-store pruning (issue 29), of adf8f9c ("a store left
unpruned is tried after all": an alternates file's store read for its own objects, a ``.git``
folder tried against an unpruned store in its own work tree, an empty store skipped uncounted).
Attacked through the public entry points only: a phase's box
(:func:`evotree.harness.git_guard.before_phase`), the judge's copy
(:func:`evotree.harness.sandbox_copy.copy_regular_files`) and the replay's fourth world
(:func:`evotree.harness.git_prune.prune_nested` with ``task=``). Real git repositories in
temporary folders, no mocks. A win: a store copy the phase (or the judge) gets keeps the fix's
blob. The shared root of U1-U4: ``git_relations.checkout_relations`` still *skips* an unpruned
store whose future cannot be listed (``continue`` when ``there is None`` below the cap and the
deadline) — adf8f9c made one reason listable (an alternates file), every other reason a store
is hidden for is also a reason its listing fails, so the clone at the fix beside it is tried
against nothing and kept at its own HEAD.

Wins (strict xfails while open; U1-U4 closed the same session — an unpruned store whose future
cannot be listed, or whose objects lie partly elsewhere, is tried by its HEAD: a copy holding it
and commits past it is not kept, and an unreadable HEAD keeps no copy — and U5 the same session — the blobs its future names
that no store its alternates file names holds are its future — plain tests since):

- **U1** the task's checkout cloned with ``core.preferSymlinkRefs=true`` (git's own option; the
  s17 fixes red team's R1 used it for a HEAD link): ``refs/remotes/origin/HEAD`` is a link, so
  ``_check_self_contained`` refuses the store — hidden (refused) unpruned — and the last pass's
  listing of its future fails the same way and is skipped: a clone of upstream checked out at
  the fix beside it is kept. Box and judge.
- **U2** the task's store kept bare with its ``objects`` a link to a folder (R1's "store shared
  by checkouts" image layout), the folder in the phase or outside it: the store is hidden, the
  folder in the phase found as a bare object store and hidden too (``is_object_store``), and
  neither's future can be listed (``objects`` no folder; an object store has no ``HEAD`` or
  config) — both skipped, the clone at the fix kept. Box and judge.
- **U3** every other refusal of the check or the config read, the bare task store beside the
  clone at the fix: ``packed-refs`` a link, a config over 1 MiB, ``extensions.refStorage =
  reftable`` (the config key a newer git writes; host git 2.39 makes no reftable), a FIFO
  ``objects/info/packs``, and M1's own layout with the alternates file a link (own-only
  reading checks ``objects/`` whole, ``info/`` included): hidden, listing refused, skipped, the
  clone kept. Box and judge.
- **U4** the task's store with an alternates file and no object of its own, its objects in an
  object folder of the phase that is no repository (``phase/objects``, no ``HEAD``): the store
  is skipped as empty (``_holds_no_object``: the alternates' objects are no future of its own
  folder) and the object folder, found and hidden, cannot be listed — the clone kept. Unlike the
  known "left of M1" xfail (the reference outside the phase) the store holding the fix is in the
  phase, found and hidden, and still tried against nothing.
- **U5** own-only reading drops N5's closure: the task's store kept bare, blob-less and cloned
  ``--reference`` a mirror at its base (``git clone --bare --filter=blob:none --reference``, as
  a CI cache clones), in the phase or outside it: its own objects are the fix's commit and trees,
  never its blob, and ``_named_missing`` is not added in own-only mode — so R1's padded store
  (the fix's file among files of its own, ``phase/tolls.git``) shares nothing with the future
  and is kept at its own HEAD, the fix's blob in it. (Without the filter the same layout
  holds: the blob is among the store's own objects, below.) This one is not U1-U4's skip: the
  store is listed, its future just lacks the blobs it names.

Holds (plain tests):

- M1's layout with a corrupt loose object in the bare store (a broken cache store): listed all
  the same (its future read despite the garbage), the clone hidden;
- the cap with 32 non-empty junk stores a candidate's code makes unprunable (a HEAD of garbage,
  one blob each: not "empty", so counted) walked before M1's store: past ``MAX_UNPRUNED`` every
  copy is dropped, the clone with them (fail closed);
- M1's reference in the phase holding the fix itself (a bare mirror of every branch): it is
  found, pruned at its HEAD, and the clone is pruned at its base (the fix in no copy);
- U5's control: the same ``--reference`` store with its blobs (no filter): the padded store,
  holding one of its own objects, is hidden, box and judge;
- the replay: U2's linked store and the clone at the fix in the task's work tree — the linked
  store (and its object folder) emptied and said, the clone pruned at the task's base.

Over-pruning (a plain test marking it, a precision cost older than adf8f9c):

- **P1** an honest task checkout cloned with ``core.preferSymlinkRefs=true`` is hidden in the
  box and refused in the judge's copy (its ``refs/remotes/origin/HEAD`` link), alone.

Not attacked (on paper): ``_parents_elsewhere`` marking the wrong commits (a "parent" line in a
message, an octopus, a header parent git ignores) only moves where the walk *down* from the base
stops — the fix lies above the base, so a wrong mark widens the future, never hides it; a parent
it missed would make ``rev-list`` fail, which is the skip of U1-U4 again. TOCTOU between
``_holds_no_object`` and the read: no candidate code runs during the guard's start or the
judge's copy (only a concurrent writer of the shared cache could race it). A store with both
``commondir`` and alternates: git reads the common store's objects, which is found and tried
itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evotree.harness.git_prune import prune_copy, prune_nested
from tests.test_git_guard_nested import _box, _forget, _git, _has, _task
from tests.test_git_prune_checkouts import (
    _bare_task_beside_a_clone_at_the_fix,
    _clone_beside_a_store_whose_reference_holds_the_fix,
    _judge,
)
from tests.test_redteam_s17_box_nested_redteam import _blob, _holds, _stores
from tests.test_redteam_s17_nested2_redteam import _PADDED, _bare_of
from tests.test_redteam_s19_nested4_redteam import _leaks, _referenced_bare_task

_ROOT = (
    "an unpruned store whose future cannot be listed is skipped (checkout_relations' continue "
    "below the cap and the deadline): the clone at the fix beside it is tried against nothing "
    "and kept at its own HEAD"
)


def _unlisted(snap_or_refused: object, name: str) -> bool:
    """Whether ``name`` is said hidden (box snapshot) or refused (judge) — the premise."""
    said = snap_or_refused["hidden"] if isinstance(snap_or_refused, dict) else snap_or_refused
    return any(name in h for h in said)


# --- U1: the task's checkout cloned with core.preferSymlinkRefs ------------------------------


def _symlink_refs_task(tmp_path: Path, clone_at_the_fix: bool = True) -> tuple[Path, Path, str]:
    """(the phase, the task's checkout ``phase/t`` cloned from upstream with
    ``core.preferSymlinkRefs=true`` — its ``refs/remotes/origin/HEAD`` a link, the fix on its
    ``origin/wip`` —, the fix's blob); ``clone_at_the_fix``: a clone of upstream ``phase/cache``
    checked out at the fix beside it."""
    src, _, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    _git(
        tmp_path, "-c", "core.preferSymlinkRefs=true", "clone", "-q", "--no-local", str(src), str(t)
    )
    assert os.path.islink(t / ".git/refs/remotes/origin/HEAD") and _has(t / ".git", fix)
    if clone_at_the_fix:
        cache = phase / "cache"
        _git(tmp_path, "clone", "-q", "--no-local", str(src), str(cache))
        _git(cache, "checkout", "-q", "wip")
        assert _has(cache / ".git", fix)
    return phase, t, blob


@pytest.mark.parametrize("where", ["box", "judge"])
def test_u1_a_clone_at_the_fix_beside_a_task_cloned_with_symlink_refs(
    tmp_path: Path, where: str
) -> None:
    phase, _, blob = _symlink_refs_task(tmp_path)
    assert _leaks(tmp_path, phase, blob, where) == []


def test_p1_an_honest_task_cloned_with_symlink_refs_is_hidden(tmp_path: Path) -> None:
    """P1 (a precision cost): the honest checkout alone, nothing beside it — hidden in the box,
    refused in the judge's copy, for its ``refs/remotes/origin/HEAD`` link git writes itself."""
    phase, t, _ = _symlink_refs_task(tmp_path, clone_at_the_fix=False)
    sources, snap = _box(tmp_path, [phase])
    assert t / ".git" not in sources and _unlisted(snap, "refs/remotes/origin/HEAD"), snap
    _, refused = _judge(tmp_path, phase)
    assert any(r.startswith("t/.git") for r in refused), refused


# --- U2: the bare task store's objects a link to a shared folder -------------------------------


def _linked_objects(tmp_path: Path, where_objects: str) -> tuple[Path, Path, str]:
    """(the phase, the bare task store beside a clone at the fix, its ``objects`` moved to
    ``objstore`` in the phase or outside it and linked back, the fix's blob)."""
    phase, bare, _, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    folder = (phase if where_objects == "in_phase" else tmp_path) / "objstore"
    os.rename(bare / "objects", folder)
    os.symlink(folder, bare / "objects")
    assert _has(bare, blob)
    return phase, bare, blob


@pytest.mark.parametrize("where_objects", ["in_phase", "outside"])
@pytest.mark.parametrize("where", ["box", "judge"])
def test_u2_a_clone_at_the_fix_beside_a_task_store_with_linked_objects(
    tmp_path: Path, where: str, where_objects: str
) -> None:
    phase, _, blob = _linked_objects(tmp_path, where_objects)
    assert _leaks(tmp_path, phase, blob, where) == []


def test_u2_premise_the_store_and_its_folder_are_hidden_and_the_clone_with_them(
    tmp_path: Path,
) -> None:
    """U2's premise, said: both stores hidden for what they are; since session 20 the clone at
    the fix, holding the task store's HEAD and commits past it, is hidden with them."""
    phase, bare, blob = _linked_objects(tmp_path, "in_phase")
    sources, snap = _box(tmp_path, [phase])
    assert _unlisted(snap, str(bare)) and _unlisted(snap, str(phase / "objstore")), snap
    assert _holds(sources, blob) == [], snap
    assert any(str(phase / "cache/.git") in h and "HEAD of" in h for h in snap["hidden"]), snap


# --- U3: every other refusal --------------------------------------------------------------------


def _packed_refs_link(tmp_path: Path, bare: Path) -> None:
    _git(bare, "pack-refs", "--all")
    os.rename(bare / "packed-refs", tmp_path / "packed-refs")
    os.symlink(tmp_path / "packed-refs", bare / "packed-refs")


def _big_config(tmp_path: Path, bare: Path) -> None:
    with open(bare / "config", "a", encoding="utf-8") as fh:
        fh.write("# " + "x" * (1 << 20) + "\n")


def _reftable(tmp_path: Path, bare: Path) -> None:
    text = (bare / "config").read_text().replace("formatversion = 0", "formatversion = 1")
    (bare / "config").write_text(text + "[extensions]\n\trefStorage = reftable\n")


def _fifo_info_packs(tmp_path: Path, bare: Path) -> None:
    (bare / "objects/info").mkdir(exist_ok=True)
    os.mkfifo(bare / "objects/info/packs")


_REFUSALS = {
    "packed-refs-link": _packed_refs_link,
    "config-over-1MiB": _big_config,
    "reftable": _reftable,
    "fifo-info-packs": _fifo_info_packs,
}


@pytest.mark.parametrize("refusal", [*sorted(_REFUSALS), "alternates-a-link"])
@pytest.mark.parametrize("where", ["box", "judge"])
def test_u3_a_clone_at_the_fix_beside_a_refused_task_store(
    tmp_path: Path, where: str, refusal: str
) -> None:
    if refusal == "alternates-a-link":  # M1's layout, its alternates file a link to the same text
        phase, bare, _, _, blob = _referenced_bare_task(tmp_path, nested=False)
        alternates = bare / "objects/info/alternates"
        os.rename(alternates, tmp_path / "alternates")
        os.symlink(tmp_path / "alternates", alternates)
    else:
        phase, bare, _, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
        _REFUSALS[refusal](tmp_path, bare)
    assert _leaks(tmp_path, phase, blob, where) == []


# --- U4: an alternates file naming an object folder of the phase ------------------------------


def _alternate_object_folder(tmp_path: Path) -> tuple[Path, Path, str]:
    """(the phase, the task's store kept bare ``phase/task.git`` with no object of its own and an
    alternates file naming ``phase/objects`` — an object folder, no repository — which holds
    every object of the task, the fix's too, the fix's blob); a clone at the fix beside them."""
    phase, bare, _, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    shutil.move(bare / "objects", phase / "objects")
    for sub in ("info", "pack"):
        (bare / "objects" / sub).mkdir(parents=True)
    (bare / "objects/info/alternates").write_text(f"{phase / 'objects'}\n")
    assert _has(bare, blob) and not (phase / "objects/HEAD").exists()
    return phase, bare, blob


@pytest.mark.parametrize("where", ["box", "judge"])
def test_u4_a_clone_at_the_fix_beside_a_store_whose_alternate_is_in_the_phase(
    tmp_path: Path, where: str
) -> None:
    phase, _, blob = _alternate_object_folder(tmp_path)
    assert _leaks(tmp_path, phase, blob, where) == []


# --- U5: a blob-less store cloned --reference, R1's padded store beside it ---------------------


def _blobless_referenced_task(tmp_path: Path, where_ref: str, partial: bool) -> tuple[Path, str]:
    """(the phase, the fix's blob): the task's store ``phase/task.git`` kept bare, cloned
    ``--reference`` a mirror of upstream at the base (``ref.git``, in the phase or outside it),
    blob-less where ``partial``, the fix a commit no reference of it names; R1's padded store
    ``phase/tolls.git`` (the fix's file among files of its own) beside it."""
    up, _, fix = _task(tmp_path / "up")
    blob = _blob(up, fix)
    _git(up, "config", "uploadpack.allowFilter", "true")
    phase = tmp_path / "phase"
    phase.mkdir()
    ref = (phase if where_ref == "in_phase" else tmp_path) / "ref.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(up), str(ref))
    bare = phase / "task.git"
    args = ["--filter=blob:none"] if partial else []
    _git(tmp_path, "clone", "-q", "--bare", *args, "--reference", str(ref), up.as_uri(), str(bare))
    _git(bare, "branch", "-D", "wip")
    own = _git(bare, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    assert fix in own and (blob not in own) == partial
    store = _bare_of(tmp_path, phase / "tolls.git", [_PADDED])
    assert _git(store, "rev-parse", "HEAD:tolls/toll.py") == blob
    return phase, blob


@pytest.mark.parametrize("where_ref", ["in_phase", "outside"])
@pytest.mark.parametrize("where", ["box", "judge"])
def test_u5_a_padded_store_beside_a_blobless_referenced_task_store(
    tmp_path: Path, where: str, where_ref: str
) -> None:
    phase, blob = _blobless_referenced_task(tmp_path, where_ref, partial=True)
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", ["box", "judge"])
def test_u5_control_the_referenced_store_with_its_blobs(tmp_path: Path, where: str) -> None:
    phase, blob = _blobless_referenced_task(tmp_path, "in_phase", partial=False)
    assert _leaks(tmp_path, phase, blob, where) == []


# --- holds ------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["box", "judge"])
def test_m1_with_a_corrupt_loose_object_still_hides_the_clone(tmp_path: Path, where: str) -> None:
    """A broken cache store: M1's bare store with a garbage loose object is listed all the same
    (its own objects), and the clone at the fix, holding its future, is not kept."""
    phase, bare, cache, _, blob = _referenced_bare_task(tmp_path, nested=False)
    (bare / "objects/ab").mkdir(exist_ok=True)
    (bare / "objects/ab" / ("c" * 38)).write_bytes(b"garbage, no zlib")
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == [] and cache / ".git" not in sources, snap
    else:
        assert _leaks(tmp_path, phase, blob, where) == []


def test_the_cap_with_unprunable_non_empty_junk_before_the_task_store(tmp_path: Path) -> None:
    """32 bare stores a candidate's code writes (one blob each, a HEAD of garbage: not empty,
    not prunable) walked before M1's store: it is the 33rd store left unpruned — every copy is
    dropped, the clone at the fix with them (fail closed)."""
    phase, bare, cache, _, blob = _referenced_bare_task(tmp_path, nested=False)
    clone = phase / "0cache"  # walked first: pruned, under MAX_PRUNED
    cache.rename(clone)
    for i in range(32):
        junk = phase / f"a{i:02}.git"
        _git(phase, "init", "-q", "--bare", str(junk))
        subprocess.run(
            ["git", "--git-dir", str(junk), "hash-object", "-w", "--stdin"],
            input=f"junk {i}\n".encode(),
            check=True,
            capture_output=True,
        )
        (junk / "HEAD").write_text("garbage\n")
    sources, snap = _box(tmp_path, [phase])
    assert _holds(sources, blob) == [], snap
    assert clone / ".git" not in sources, snap
    assert _unlisted(snap, "more than 32 stores were left unpruned"), snap


@pytest.mark.parametrize("where", ["box", "judge"])
def test_m1_with_its_reference_in_the_phase_holding_the_fix(tmp_path: Path, where: str) -> None:
    """M1's store cloned ``--reference`` a bare mirror of every branch (the fix's included) kept
    in the phase: the mirror is found and pruned at its HEAD, and the clone at the fix, holding
    its future, is pruned at its base — the fix in no copy."""
    phase, blob = _clone_beside_a_store_whose_reference_holds_the_fix(tmp_path, tmp_path / "phase")
    assert _leaks(tmp_path, phase, blob, where) == []


def test_u2_in_the_replays_fourth_world(tmp_path: Path) -> None:
    """U2 in the replay (the task known): the task's work tree holding a clone at the fix and a
    bare mirror whose ``objects`` is a link to ``vendor/objstore``: the clone shares the task's
    history and is pruned at its base; the linked mirror cannot be pruned and is emptied, said
    (the caller fails closed) — the fix in no store of the tree."""
    root, base, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    vendor = root / "vendor"
    _git(root, "clone", "-q", "--no-local", str(root), str(vendor / "cache"))
    _git(vendor / "cache", "checkout", "-q", "wip")
    _git(root, "clone", "-q", "--bare", "--no-local", str(root), str(vendor / "m.git"))
    os.rename(vendor / "m.git/objects", vendor / "objstore")
    os.symlink(vendor / "objstore", vendor / "m.git/objects")
    _forget(root)
    top = prune_copy(root / ".git", tmp_path / "top").path
    why = prune_nested(root, top, base, tmp_path / "scratch", task=root / ".git")
    assert "m.git" in why or "objstore" in why, why
    assert not [s for s in _stores(vendor) if _has(s, blob)]
    assert not [p for p in (vendor / "objstore").rglob("*") if p.is_file()]  # emptied too
    assert _git(root, "--git-dir", str(vendor / "cache/.git"), "rev-parse", "HEAD") == base
