"""Fourth red team (session 19) of nested-store pruning (issue 29), after 2e859f3, 75ac3b2,
9c0f4ca and cac2395 ("every checkout is tried the other way too, against every store beside it
or nested in it, bare and unpruned ones included"). Attacked through the public entry points
only: a phase's box (:func:`evotree.harness.git_guard.before_phase`), the judge's copy
(:func:`evotree.harness.sandbox_copy.copy_regular_files`) and the replay's fourth world
(:func:`evotree.harness.git_prune.prune_nested` with ``task=``). Real git repositories in temporary
folders, no mocks. A win: a store copy the phase (or the judge) gets keeps the fix's blob.

Wins (strict xfails while open; M1, M2, M6 closed in session 20 and plain tests since):

- **M1** (closed in session 20: a store left unpruned for an alternates file is tried for the
  objects of its own folder, the walk stopping where a parent lies in the referenced store) the
  task's store kept bare with an alternate (``git clone --bare --reference``, the
  threat model's "an image cloned with --reference keeps an alternate and is hidden") beside a
  clone with a work tree checked out at the fix, or in that clone's work tree: the bare store
  is hidden (refused) for not being self-contained, and the last pass *leaves out* an unpruned
  store whose future cannot be listed — so the clone is tried against nothing and kept at its
  own HEAD, the fix. Box and judge, beside and in the work tree. (Pruned, the same bare store
  prunes the clone at its base: ``tests/test_git_prune_checkouts.py``.)
- **M2** (closed in session 20: a ``.git`` folder is tried against an unpruned store in its
  own work tree too) the cap, in the work tree: the task's store kept bare in the work tree of a clone at
  the fix (the closed issue-29 layout) plus 32 empty ``git init --bare`` stores a candidate's
  code writes in that work tree (``vendor/a00.git``..., walked before ``vendor/task.git``): the
  task's store is past ``MAX_PRUNED`` and hidden, and a ``.git`` folder is not tried against an
  unpruned store in its own work tree (``_holds_in_tree``) — the clone is kept at the fix. Beside
  the clone (not in its work tree) the same cap holds (below). Box (the judge has no cap).
- **M3** (closed in session 19: a store with linked worktrees is pruned at the commit below all
  their HEADs and its own) a linked worktree whose common directory is a bare store: the task's checkout ``t`` is
  ``git worktree add``-ed at the base from ``t.git``, a bare clone of upstream whose HEAD (its
  default branch) is the fix — a natural layout (``git clone --bare`` then ``worktree add`` of
  the task's commit). The search finds ``t.git`` alone (the worktree's ``worktrees/t`` is no
  store) and prunes it at its own HEAD: the fix in the box's and the judge's copy. Close to the
  threat model's "left: a ``.git`` file's linked worktree", but here the store *is* found and
  bound pruned at the wrong commit.
- **M4** (closed in session 19: a loose reference present but unread is no packed line's to stand in for) past the cap, a HEAD read without git: the bare task store beside the clone at the
  fix, pushed past ``MAX_PRUNED`` as in M2 (the junk walked after the clone), its ``main`` a
  loose reference at the base followed by 5,000 newlines (git reads the base) over a stale
  ``packed-refs`` line at the fix (``pack-refs`` then ``update-ref`` back): ``_own_base`` reads
  a loose reference of at most 4 KiB, falls back to the packed line, takes the fix for the
  store's HEAD, finds nothing past it and skips the store — the clone is kept at the fix. (With
  the loose reference short the same layout holds: the clone is hidden, below.)
- **M5** a ``.git`` file naming a store outside the phase's folders: the task's checkout
  ``phase/t`` made with ``git init --separate-git-dir`` into a folder the phase is not given
  (N3's layout, the store elsewhere), a clone with a work tree at the fix beside it: the search
  does not follow the ``.git`` file out of the folder, no store of the task is found, and the
  clone is kept at its own HEAD — box and judge. The threat model leaves "a task repository the
  guard does not find" bound as it is; the new cost is the clone beside it, which the issue-29
  pass exists to catch. (The store's folder given read-only: found, the clone pruned.)
- **M6** (closed in session 20, as M2) M2 without the cap, in the judge's copy too: a candidate's code writes, in the clone's
  work tree beside ``vendor/task.git``, two empty bare stores and two ``.git`` files naming them
  so that each lies in the other's "work tree" (``vendor/.git``: ``gitdir: x/f.git``;
  ``vendor/x/.git``: ``gitdir: ../e.git``): ``vendor/task.git``'s enclosing repositories then
  name one another, it is hidden (refused) unpruned, and the clone's ``.git`` folder is not
  tried against an unpruned store in its own work tree — the clone is kept at the fix.

Holds (plain tests):

- M1 the other way round: the clone at the fix made ``--shared`` from the bare task store (an
  alternate): the clone is not self-contained, hidden (refused) — the store with it (P3);
- a linked worktree checked out at the fix of the bare task store whose HEAD is the base: the
  store is pruned at its HEAD, the worktree's HEAD and ``worktrees/`` are not copied;
- the cap beside: the bare task store pushed past ``MAX_PRUNED`` by 32 real empty stores beside
  it (no monkeypatch): the clone at the fix is tried against it at its own HEAD and hidden;
- the deadline over M2's layout without the junk (0.05 to 1 s): the fix in no copy, box and
  judge;
- a sha256 pair: the task's store sha256 and bare, a sha256 clone at the fix beside it: the
  clone pruned at the base (the format check does not skip a same-format pair);
- a stale ``packed-refs`` line at the fix under a loose branch at the base (``pack-refs`` then
  ``update-ref`` back, a natural history) in the bare task store beside a clone at the fix: the
  store is pruned at the loose branch (git's reading), the clone at that base; the same store
  past the cap (M4 without the padding): read at the loose branch, the clone hidden;
- N4's sha256 conversion at the fix beside the sha1 task store kept bare: hidden (refused);
- a clone at the fix moved into the bare task store's own folder (``task.git/cache``, where
  the path exemption would skip the pair): the search does not enter a store, and the store's
  pruned copy is bound (copied) over the whole folder;
- M1 in the replay's fourth world (the task known there): the clone at the fix in the task's
  work tree pruned at its base, the referenced mirror emptied and said (fail closed).

Over-pruning (plain tests marking the behaviour, a precision cost):

- **P1** an unrelated sha256 bare store (a library with a branch past its HEAD) beside the
  honest sha1 task checkout hides the task in the box and refuses it in the judge's copy: the
  last pass's format check runs before any object is compared. The same store vendored in the
  task's work tree was hidden alone; since session 20 (M2, M6 closed) the task is hidden with it.
- **P2** the task's store kept bare and blob-less (``--filter=blob:none``: no checkout, so not
  even its base's blobs were fetched) cannot be pruned and is hidden (refused), and a clone at
  the fix beside it with it (that is the safe side: the fix in no copy).
- **P3** a bare store beside a ``--shared`` clone of it (an alternate: the clone hidden, as the
  threat model says) is hidden (refused) too: relating it to the clone reads the clone's store,
  which is not self-contained — an honest bare mirror with a ``--shared`` task checkout beside
  it loses both.

Not attacked here: two clones holding each other's future (closed, 067f772's tests), partial
clones' future blobs (N5, closed), a commit-graph, replace references or grafts (git's shortcuts
are off in every host call: ``GIT``'s ``--no-replace-objects``, ``core.commitGraph=false``, the
graft file); a forged ``multi-pack-index`` that lists a pack's objects but the fix's (tried on
paper only: the offsets it names must read as objects of the pack swapped in, too fiddly in the
time); slow stores beyond the deadline sweeps above (the deadline's own tests cover it); a
checkout of the task nested in a clone at the fix (the documented exemption: structurally the
honest "clone of itself at an older commit", which a fix of it would over-prune).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evotree.harness import git_guard, sandbox_copy
from evotree.harness.git_prune import prune_copy, prune_nested
from tests.test_git_guard_nested import _box, _forget, _git, _has, _lib, _task
from tests.test_git_prune_checkouts import (
    _bare_task_beside_a_clone_at_the_fix,
    _bare_task_in_a_clone_at_the_fix,
    _judge,
)
from tests.test_redteam_s17_box_nested_redteam import _blob, _holds, _stores
from tests.test_redteam_s18_nested3_redteam import _sha256_mirror


def _leaks(tmp_path: Path, phase: Path, blob: str, where: str) -> list[Path]:
    """The copies (box or judge) that hold ``blob``."""
    if where == "box":
        sources, _ = _box(tmp_path, [phase])
        return _holds(sources, blob)
    dst, _ = _judge(tmp_path, phase)
    return [s for s in _stores(dst) if _has(s, blob)]


# --- M1: the bare task store with an alternate ------------------------------------------------


def _referenced_bare_task(tmp_path: Path, nested: bool) -> tuple[Path, Path, Path, str, str]:
    """(the phase, the task's store kept bare and cloned ``--reference`` a mirror of the task at
    its base ``phase/ref.git``, a clone of it ``phase/cache`` checked out at the fix, the base,
    the fix's blob); ``nested``: the bare store in the clone's work tree (``vendor/task.git``).
    The fix: objects of the bare store no reference names."""
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    ref = phase / "ref.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(src), str(ref))
    assert not _has(ref, fix)
    bare = tmp_path / "task.git"
    _git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        "--no-local",
        "--reference",
        str(ref),
        str(src),
        str(bare),
    )
    assert (bare / "objects/info/alternates").exists()
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(bare), str(cache))
    _git(cache, "checkout", "-q", "wip")
    assert not (cache / ".git/objects/info/alternates").exists()
    _git(bare, "branch", "-D", "wip")
    if nested:
        (cache / ".git/info/exclude").write_text("vendor/\n")
        (cache / "vendor").mkdir()
        bare = bare.rename(cache / "vendor/task.git")
    else:
        bare = bare.rename(phase / "task.git")
    assert _has(bare, fix) and _git(bare, "rev-parse", "HEAD") == base
    return phase, bare, cache, base, blob


@pytest.mark.parametrize("where", ["box", "judge"])
@pytest.mark.parametrize("nested", [False, True], ids=["beside", "in_tree"])
def test_m1_a_clone_at_the_fix_beside_a_referenced_bare_task_store(
    tmp_path: Path, where: str, nested: bool
) -> None:
    phase, _, _, _, blob = _referenced_bare_task(tmp_path, nested)
    assert _leaks(tmp_path, phase, blob, where) == []


# --- M2: the cap, the bare task store in the clone's work tree ---------------------------------


def _junk(folder: Path, n: int = 32, prefix: str = "a") -> None:
    """``n`` empty bare stores a candidate's code writes (``a00.git``...)."""
    for i in range(n):
        _git(folder.parent, "init", "-q", "--bare", str(folder / f"{prefix}{i:02}.git"))


def test_m2_the_cap_hides_the_bare_task_store_in_the_clones_work_tree(tmp_path: Path) -> None:
    phase, bare, cache, _, blob = _bare_task_in_a_clone_at_the_fix(tmp_path)
    _junk(cache / "vendor")
    sources, snap = _box(tmp_path, [phase])
    assert any(str(bare) in h for h in snap["hidden"]), snap  # the attack's premise
    assert _holds(sources, blob) == [], snap


@pytest.mark.parametrize("where", ["box", "judge"])
def test_m6_a_cycle_of_git_files_leaves_the_bare_task_store_unpruned(
    tmp_path: Path, where: str
) -> None:
    phase, _, cache, _, blob = _bare_task_in_a_clone_at_the_fix(tmp_path)
    vendor = cache / "vendor"  # what a candidate's code writes, beside vendor/task.git
    _git(vendor, "init", "-q", "--bare", str(vendor / "e.git"))
    _git(vendor, "init", "-q", "--bare", str(vendor / "x/f.git"))
    (vendor / ".git").write_text("gitdir: x/f.git\n")  # vendor/: f.git's work tree
    (vendor / "x/.git").write_text("gitdir: ../e.git\n")  # vendor/x/: e.git's work tree
    assert _leaks(tmp_path, phase, blob, where) == []


def test_the_cap_beside_the_clone_holds(tmp_path: Path) -> None:
    """M2's junk beside the clone (the bare store beside it too, not in its work tree): the
    bare store past the cap is tried at its own HEAD; the clone holds its future and is hidden."""
    phase, bare, cache, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    _junk(phase, prefix="d")  # walked after cache/.git, before task.git
    sources, snap = _box(tmp_path, [phase])
    assert any(str(bare) in h and "at most 32" in h for h in snap["hidden"]), snap
    assert _holds(sources, blob) == [], snap
    assert cache / ".git" not in sources, snap
    why = [h for h in snap["hidden"] if h.startswith(str(cache / ".git"))]
    assert why and "at most 32" not in why[0], snap  # hidden for holding its future


# M4 closed (session 19): a loose reference _own_base cannot read stands for no packed line
def test_m4_past_the_cap_a_stale_packed_ref_makes_the_future_empty(tmp_path: Path) -> None:
    phase, bare, cache, base, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    fix = _git(cache, "rev-parse", "HEAD")
    _git(bare, "update-ref", "refs/heads/main", fix)
    _git(bare, "pack-refs", "--all")  # packed-refs: main at the fix (stale below)
    (bare / "refs/heads/main").write_text(base + "\n" * 5000)  # git: the base
    assert _git(bare, "rev-parse", "HEAD") == base and _has(bare, fix)
    _junk(phase, prefix="d")  # walked after cache/.git, before task.git: the store unpruned
    sources, snap = _box(tmp_path, [phase])
    assert any(str(bare) in h and "at most 32" in h for h in snap["hidden"]), snap
    assert _holds(sources, blob) == [], snap


def test_past_the_cap_a_stale_packed_ref_under_a_short_loose_branch(tmp_path: Path) -> None:
    """M4's control: the loose ``main`` at the base without the padding — read as git reads
    it, the store's future (the fix) is held by the clone, which is hidden."""
    phase, bare, cache, base, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    fix = _git(cache, "rev-parse", "HEAD")
    _git(bare, "update-ref", "refs/heads/main", fix)
    _git(bare, "pack-refs", "--all")
    _git(bare, "update-ref", "refs/heads/main", base)
    assert fix in (bare / "packed-refs").read_text()
    _junk(phase, prefix="d")
    sources, snap = _box(tmp_path, [phase])
    assert any(str(bare) in h and "at most 32" in h for h in snap["hidden"]), snap
    assert _holds(sources, blob) == [], snap
    assert cache / ".git" not in sources, snap


@pytest.mark.parametrize("where", ["box", "judge"])
def test_the_deadline_over_the_bare_store_in_the_clones_work_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """M2's layout without the junk, pruned with 0.05 to 1 s in all: wherever the deadline
    falls, the fix in no copy (the last pass past the deadline keeps no copy)."""
    phase, _, _, _, blob = _bare_task_in_a_clone_at_the_fix(tmp_path / "pristine")
    for k, seconds in enumerate([0.05, 0.1, 0.2, 0.4, 1.0]):
        work = tmp_path / f"run{k}"
        here = work / "phase"
        shutil.copytree(phase, here, symlinks=True)
        if where == "box":
            monkeypatch.setattr(git_guard, "PRUNE_SECONDS", seconds)
        else:
            monkeypatch.setattr(sandbox_copy, "PRUNE_SECONDS", seconds)
        assert _leaks(work, here, blob, where) == [], seconds


# --- M3: linked worktrees of a bare store -------------------------------------------------------


# M3 closed (session 19): a store with linked worktrees is pruned below all their HEADs
@pytest.mark.parametrize("where", ["box", "judge"])
def test_m3_the_task_a_linked_worktree_of_a_bare_store_at_the_fix(
    tmp_path: Path, where: str
) -> None:
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    bare = phase / "t.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(bare))
    _git(bare, "update-ref", "refs/heads/main", fix)  # upstream's default branch moved on
    _git(bare, "worktree", "add", "-q", "--detach", str(phase / "t"), base)
    assert _git(phase / "t", "rev-parse", "HEAD") == base
    assert _git(bare, "rev-parse", "HEAD") == fix
    assert _leaks(tmp_path, phase, blob, where) == []
    if where == "box":  # pruned at the worktree's commit, not hidden
        sources, _ = _box(tmp_path, [phase])
        assert _git(phase, "--git-dir", str(sources[bare]), "rev-parse", "HEAD") == base


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_linked_worktree_at_the_fix_of_the_bare_task_store(tmp_path: Path, where: str) -> None:
    """The bare task store at its base, a linked worktree of it checked out (detached) at the
    fix beside it: the store is pruned at its HEAD, ``worktrees/`` not copied."""
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    bare = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(bare))
    _git(bare, "worktree", "add", "-q", "--detach", str(phase / "wt"), fix)
    _git(bare, "branch", "-D", "wip")
    assert _git(phase / "wt", "rev-parse", "HEAD") == fix
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == [], snap
        assert _git(phase, "--git-dir", str(sources[bare]), "rev-parse", "HEAD") == base
        assert not (sources[bare] / "worktrees").exists()
    else:
        assert _leaks(tmp_path, phase, blob, where) == []


# --- M5: the task's separate git directory outside the phase's folders ------------------------


def _separate_task_beside_a_clone_at_the_fix(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """(the phase, the task's checkout ``phase/t`` whose ``.git`` file names its store moved
    outside the phase's folders, ``tmp_path/ro/task.git`` (``git init --separate-git-dir``),
    that store, the fix's blob); a clone ``phase/cache`` with a work tree at the fix beside it;
    the fix: objects of the task's store no reference names."""
    phase = tmp_path / "phase"
    root, base, fix = _task(phase / "t")
    blob = _blob(root, fix)
    cache = phase / "cache"
    _git(phase, "clone", "-q", "--no-local", str(root), str(cache))
    _git(cache, "checkout", "-q", "wip")
    store = tmp_path / "ro/task.git"
    store.parent.mkdir()
    _git(root, "init", "-q", "--separate-git-dir", str(store))
    _forget(root)
    assert (root / ".git").is_file() and _has(store, fix)
    assert _git(root, "rev-parse", "HEAD") == base
    return phase, root, store, blob


@pytest.mark.xfail(
    strict=True,
    reason="M5: the task's .git file names a store outside the phase's folders, which the search "
    "does not follow: the clone at the fix beside the checkout is tried against nothing",
)
@pytest.mark.parametrize("where", ["box", "judge"])
def test_m5_a_clone_at_the_fix_beside_a_task_whose_store_is_outside(
    tmp_path: Path, where: str
) -> None:
    phase, _, _, blob = _separate_task_beside_a_clone_at_the_fix(tmp_path)
    assert _leaks(tmp_path, phase, blob, where) == []


def test_m5_control_the_outside_store_in_a_read_only_folder(tmp_path: Path) -> None:
    """M5's layout with the store's folder among the phase's read-only folders: found, and the
    clone is pruned at its base."""
    phase, _, store, blob = _separate_task_beside_a_clone_at_the_fix(tmp_path)
    trace = tmp_path / "raw.trace"
    binds = git_guard.before_phase([phase], trace, read_only=[store.parent])
    sources = {
        Path(dst): Path(src)
        for _, src, dst in binds
        if Path(src).parent.name.endswith(".git-copies") and not Path(src).name.endswith(".hidden")
    }
    assert store in sources and phase / "cache/.git" in sources, sources
    assert _holds(sources, blob) == []


def test_a_clone_at_the_fix_inside_the_bare_task_store_folder(tmp_path: Path) -> None:
    """The clone at the fix moved into the bare task store's own folder (``task.git/cache``,
    where the exemption of a store holding another by path would skip it): the search does not
    enter a store, and the store's pruned copy is bound (copied) over the whole folder — the
    clone is in neither copy."""
    phase, bare, cache, base, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    cache.rename(bare / "cache")
    sources, snap = _box(tmp_path, [phase])
    assert list(sources) == [bare] and _holds(sources, blob) == [], snap
    assert not (sources[bare] / "cache").exists()
    dst, refused = _judge(tmp_path, phase)
    assert not [s for s in _stores(dst) if _has(s, blob)], refused
    assert not (dst / "task.git/cache").exists()
    assert _git(phase, "--git-dir", str(dst / "task.git"), "rev-parse", "HEAD") == base


# --- holds: formats and stale packed references ---------------------------------------------


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_sha256_clone_at_the_fix_beside_a_sha256_bare_task_store(
    tmp_path: Path, where: str
) -> None:
    """The task's store sha256 and bare (the fix objects no reference names), a sha256 clone
    with a work tree at the fix beside it: the clone is pruned at the bare store's base."""
    src, _, fix = _task(tmp_path / "src")
    phase = tmp_path / "phase"
    bare = _sha256_mirror(src, phase / "task.git")
    assert _git(bare, "rev-parse", "--show-object-format") == "sha256"
    base = _git(bare, "rev-parse", "main")
    tip = _git(bare, "rev-parse", "wip")
    blob = _git(bare, "rev-parse", f"{tip}:tolls/toll.py")
    _git(bare, "symbolic-ref", "HEAD", "refs/heads/main")
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(bare), str(cache))
    _git(cache, "checkout", "-q", "wip")
    _git(bare, "branch", "-D", "wip")
    assert _has(bare, blob) and _git(bare, "rev-parse", "HEAD") == base
    assert _has(cache / ".git", blob) and fix != tip
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == [] and snap["hidden"] == [], snap
        assert _git(phase, "--git-dir", str(sources[cache / ".git"]), "rev-parse", "HEAD") == base
    else:
        assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_stale_packed_ref_at_the_fix_under_a_loose_branch_at_the_base(
    tmp_path: Path, where: str
) -> None:
    """``pack-refs`` with ``main`` at the fix, then ``main`` set back to the base (a loose
    reference over the stale packed line), the fix's branch removed, beside a clone at the fix:
    the bare store is pruned at git's reading (the base), the clone at that base."""
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    bare = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(bare))
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(bare), str(cache))
    _git(cache, "checkout", "-q", "wip")
    _git(bare, "branch", "-D", "wip")
    _git(bare, "update-ref", "refs/heads/main", fix)
    _git(bare, "pack-refs", "--all")
    _git(bare, "update-ref", "refs/heads/main", base)
    assert fix in (bare / "packed-refs").read_text()
    assert _git(bare, "rev-parse", "HEAD") == base
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == [] and snap["hidden"] == [], snap
        for gd in (bare, cache / ".git"):
            assert _git(phase, "--git-dir", str(sources[gd]), "rev-parse", "HEAD") == base
    else:
        assert _leaks(tmp_path, phase, blob, where) == []


# --- over-pruning ------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["box", "judge"])
def test_p1_an_unrelated_sha256_store_beside_the_task_hides_the_task(
    tmp_path: Path, where: str
) -> None:
    """P1 (a precision cost, marked): an unrelated sha256 library store with a branch past its
    HEAD (a future of its own) beside the honest sha1 task checkout: the task is hidden in the
    box, refused in the judge's copy — no object could be shared, yet the format check comes
    first."""
    phase = tmp_path / "phase"
    root, _, _ = _task(phase / "t")
    _forget(root)
    _lib(tmp_path / "lib")
    lib = _sha256_mirror(tmp_path / "lib", phase / "lib.git")
    _git(lib, "symbolic-ref", "HEAD", "refs/heads/main")
    assert _git(lib, "rev-parse", "main") != _git(lib, "rev-parse", "next")
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert root / ".git" not in sources, snap
        assert any(str(root / ".git") in h for h in snap["hidden"]), snap
    else:
        _, refused = _judge(tmp_path, phase)
        assert any(r.startswith("t/.git") for r in refused), refused


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_sha256_conversion_at_the_fix_beside_the_sha1_bare_task_store(
    tmp_path: Path, where: str
) -> None:
    """N4's conversion beside the bare task store instead of in a work tree: a sha256 store of
    the task's whole history, HEAD the fix, beside the sha1 task store kept bare (the fix
    objects no reference names): not relatable, hidden (refused) — the fix in no copy."""
    phase, bare, cache, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    shutil.rmtree(cache)
    _git(bare, "branch", "wip", _git(tmp_path / "src", "rev-parse", "wip"))
    mirror = _sha256_mirror(bare, phase / "cache.git")
    _git(bare, "branch", "-D", "wip")
    sha_blob = _git(mirror, "rev-parse", "HEAD:tolls/toll.py")
    assert sha_blob != blob and _has(mirror, sha_blob)
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, sha_blob) == [] and _holds(sources, blob) == [], snap
        assert mirror not in sources, snap
    else:
        dst, refused = _judge(tmp_path, phase)
        assert not [s for s in _stores(dst) if _has(s, sha_blob) or _has(s, blob)], refused
        assert any(r.startswith("cache.git") for r in refused), refused


def test_p1_an_unrelated_sha256_store_in_the_tasks_work_tree_hides_the_task(
    tmp_path: Path,
) -> None:
    """P1 in the work tree (a precision cost, marked; since session 20 as beside it): the
    unrelated sha256 library store vendored in the honest task's work tree is hidden (not
    relatable to the task enclosing it), and the task, tried against an unpruned store in its
    own work tree (M2, M6) in another object format, is hidden with it."""
    phase = tmp_path / "phase"
    root, _, _ = _task(phase / "t")
    _forget(root)
    _lib(tmp_path / "lib")
    lib = _sha256_mirror(tmp_path / "lib", root / "vendor/lib.git")
    _git(lib, "symbolic-ref", "HEAD", "refs/heads/main")
    sources, snap = _box(tmp_path, [phase])
    assert [h for h in snap["hidden"] if h.startswith(str(lib))], snap
    assert root / ".git" not in sources, snap
    assert any(h.startswith(str(root / ".git")) for h in snap["hidden"]), snap


def test_m1_in_the_replays_fourth_world(tmp_path: Path) -> None:
    """M1 in the replay (:func:`prune_nested` with ``task=``): the task's work tree holding a
    clone at the fix and a bare mirror of the task cloned ``--reference`` (an alternate): the
    task is known there, the clone shares its history and is pruned at its base; the referenced
    mirror is emptied and said (the caller fails closed) — the fix in no store of the tree."""
    root, base, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    vendor = root / "vendor"
    _git(root, "clone", "-q", "--no-local", str(root), str(vendor / "cache"))
    _git(vendor / "cache", "checkout", "-q", "wip")
    _git(root, "clone", "-q", "--bare", "--reference", str(root), str(root), str(vendor / "m.git"))
    assert (vendor / "m.git/objects/info/alternates").exists()
    _forget(root)
    top = prune_copy(root / ".git", tmp_path / "top").path
    why = prune_nested(root, top, base, tmp_path / "scratch", task=root / ".git")
    assert "m.git" in why
    assert not [s for s in _stores(vendor) if _has(s, blob)]
    assert _git(root, "--git-dir", str(vendor / "cache/.git"), "rev-parse", "HEAD") == base


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_clone_at_the_fix_beside_a_blobless_bare_task_store(tmp_path: Path, where: str) -> None:
    """The task's store kept bare and blob-less (``--filter=blob:none``, a promisor remote; no
    checkout, so not even the base's blobs fetched) beside a full clone at the fix: the bare
    store cannot be pruned (its base's blobs missing, no lazy fetch) and is hidden — P2, the
    honest such store's cost — and the clone, holding its future read at its own HEAD, is hidden
    too (refused in the judge's copy)."""
    src, _, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    _git(src, "config", "uploadpack.allowFilter", "true")
    phase = tmp_path / "phase"
    bare = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--filter=blob:none", f"file://{src}", str(bare))
    assert (bare / "config").read_text().count("promisor = true") == 1
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(src), str(cache))
    _git(cache, "checkout", "-q", "wip")
    _git(bare, "branch", "-D", "wip")
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == [] and sources == {}, snap
        hidden = "\n".join(snap["hidden"])
        assert str(bare) in hidden and str(cache / ".git") in hidden, snap
    else:
        dst, refused = _judge(tmp_path, phase)
        assert not [s for s in _stores(dst) if _has(s, blob)], refused
        assert any(r.startswith("task.git") for r in refused), refused
        assert any(r.startswith("cache/.git") for r in refused), refused


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_shared_clone_at_the_fix_of_the_bare_task_store(tmp_path: Path, where: str) -> None:
    """M1 the other way round: the clone at the fix made ``--shared`` from the bare task store
    (its objects through an alternate of the store, which keeps the fix no reference names): the
    clone is not self-contained and is hidden (refused) — and the bare store with it (P3: tried
    against the clone, whose store cannot be read self-contained, it is not kept either)."""
    src, _, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    bare = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(bare))
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--shared", str(bare), str(cache))
    _git(cache, "checkout", "-q", "wip")
    _git(bare, "branch", "-D", "wip")
    assert (cache / ".git/objects/info/alternates").exists() and _has(bare, fix)
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == [] and sources == {}, snap
        hidden = "\n".join(snap["hidden"])
        assert str(bare) in hidden and str(cache / ".git") in hidden, snap
    else:
        dst, refused = _judge(tmp_path, phase)
        assert not [s for s in _stores(dst) if _has(s, blob)], refused
        assert any(r.startswith("cache/.git") for r in refused), refused
        assert any(r.startswith("task.git") for r in refused), refused
