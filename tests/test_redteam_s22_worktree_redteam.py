"""Red team (session 22) of 7cff6f4 (H4 closed: a linked worktree's git directory — ``HEAD``
and ``commondir``, whatever its name, where it is no ``.git`` folder, bare store or object
store — is found wherever it lies, never pruned, tried by its HEAD as an unpruned store, bound
(copied) as its pointers alone where its ``commondir`` names a task store pruned beside it,
else hidden (refused); the store it reads is pruned below its HEAD, M3 wherever it lies).
Attacked through the public entry points only: a phase's box
(:func:`evotree.harness.git_guard.before_phase`; a store the binds leave unmasked counts too)
and the judge's copy (:func:`evotree.harness.sandbox_copy.copy_regular_files`). Real git
repositories in temporary folders, no mocks. A win: a copy the box or the judge reads holds
the fix's blob.

Wins (strict xfails). W4 and W6 are a candidate's own: two small files written in its
folders (by an earlier phase) beside a layout the guard holds unmasked; W5 is W4's older form
(before 7cff6f4); W1-W3 are operator layouts, as M3's was (a candidate cannot write a store at
the fix):

- **W4** (box, judge) ``t/HEAD`` (``ref: refs/heads/nothing``) and ``t/commondir`` (``.git``)
  written at the task checkout's work tree root: ``t`` is now a linked worktree's git
  directory, so the search stops there and ``t/.git`` is never found; ``t`` is hidden (its
  ``commondir`` names no store pruned here) — the task's base and future vanish from every
  relation, its branch reads unborn (no HEAD rule) — and the clone at the fix beside it,
  related to nothing, is kept at the fix. New with 7cff6f4 (the search descended into such a
  folder before). The control (unmasked) holds. The same where the workspace *is* the
  checkout and the clone at the fix lies in a read-only root (the image's): the whole
  workspace is hidden (the candidate's price), the clone kept at the fix. (A decoy folder
  wrapping the clone instead masks the clone: a hold.)
- **W5** (box, judge) W4 with ``HEAD`` and empty ``objects/``, ``refs/`` folders (a bare
  store's signs) instead of ``commondir``: the same masking through ``_is_bare`` — older than
  7cff6f4, found here (checked against 7cff6f4~1's harness: W5 leaks there, W4 does not).
- **W6** (box, judge) H4's own layout reopened: the task a worktree (at the base) of a bare
  clone whose HEAD is the fix, its git directory moved to ``phase/worktrees/w`` (held: M3
  through ``moved_worktrees``) — ``HEAD`` (an unborn branch) and ``commondir`` written in the
  plain folder ``phase/worktrees`` make it the linked directory found; ``w`` is found nowhere,
  no M3, and the bare clone is pruned at its own HEAD, the fix.
- **W1** (box) the task a worktree (at the base) of a bare clone whose HEAD is the fix, the
  worktree's git directory in the shared cache (``written``): R9's filter drops it from
  ``moved_worktrees`` (it lies in the cache, the store does not) and ``lenient`` exempts it
  from the HEAD rule, so nothing tells the base — the bare clone is pruned at its own HEAD,
  the fix. By R9's design (the commit's own shared-cache test asserts "no older commit"); the
  judge's copy of this layout is the documented "git directory outside the phase" limit.
- **W2** (box, judge) the same task a worktree of a non-bare clone at the fix, its git
  directory moved to ``.git`` *folder* form inside the clone's own work tree
  (``cache/w/.git``: ``HEAD``, ``commondir`` ``../../.git``; git takes it): named ``.git``, it
  is no ``is_linked_git_dir`` (no M3 through ``moved_worktrees``); it is hidden (not
  self-contained) and tried by its HEAD — but ``cross_checked`` exempts the pair
  (``cache/.git``, ``cache/w/.git``: a ``.git`` folder whose work tree holds a checkout), so
  the clone is kept at the fix. Beside the clone (not in its work tree) the HEAD rule hides it
  (a hold below); a non-``.git`` name in its work tree is M3'd (a hold below).
- **W3** (box, judge) the worktree's git directory moved inside its store's own folder but not
  under ``worktrees/`` (``task.git/wt``, ``commondir`` ``..``): the search never enters a store,
  so it is found nowhere — no M3, no HEAD rule — and the bare clone at the fix is pruned at
  the fix ("wherever it lies" does not reach inside a store).

Holds (plain tests): a per-worktree branch (``ref: refs/worktree/task``, which
``_below_worktrees`` resolves in the store, finds nothing and skips) is caught by the cross
pass's HEAD rule (``_head_state`` reads it in the worktree's folder); the ``.git``-folder
worktree beside the bare clone at the fix; a candidate's decoy folder (``HEAD`` +
``commondir``) wrapping a clone at the fix (the search stops there; bound as pointers, it
masks the clone; the judge copies the pointers alone); a decoy whose HEAD names the clone's
``wip`` branch; ``commondir`` cycles and ``.`` (the decoys hidden, nothing else; a decoy whose
HEAD names a commit a copy holds hides copies rather than keeping them — W4 needs an unborn
branch); an honest
moved worktree carrying ``logs/HEAD``, ``ORIG_HEAD``, ``FETCH_HEAD``, ``refs/worktree/``,
``config.worktree`` naming the fix and a ``modules/`` clone at the fix: only ``HEAD``,
``commondir``, ``gitdir``, ``index`` reach the box and the judge, no fix id in them; a
non-``.git`` worktree directory inside the clone's work tree (M3 through ``moved_worktrees``).
An ``index`` never holds a blob (ids and paths only): none was attacked further.

Costs (plain tests documenting them):

- **C1** a stale moved worktree's git directory (its ``commondir`` naming a folder that is gone,
  or a FIFO) hides every store of the phase — the task's too (the HEAD rule: a branch
  unreadable, no copy kept); seen in a probe, not kept as a test: a ``HEAD`` link
  (``-> refs/heads/main``, git takes it) in one naming the task's store hides that store
  (``moved_worktrees`` reads no link: ``_below_worktrees`` raises).
- **C2** any folder holding files named ``HEAD`` and ``commondir`` is a git directory: a data
  folder so is hidden with everything in it; at the workspace's root the whole workspace is
  hidden; at a work tree's root, ``prune_nested`` (the audit's fourth world) empties the whole
  tree, the task's ``.git`` too, and says nothing ("").
- **C3** a candidate's ``HEAD`` + ``commondir`` folder in the shared cache naming a store of the
  cache changes every version's copy of it: a HEAD of no commit hides it, an older HEAD prunes
  it there (M3) — R9 filters only stores outside the cache (the J principle).
- **C4** 33 two-file decoys push the task's own store past ``MAX_PRUNED`` (hidden): cheaper
  than bare junk stores, the candidate's own loss.
- **C5** an honest moved worktree with a split index: its ``index`` cannot be read alone, so
  it is dropped (``sharedindex.*`` is never copied) — git in the box reads the work tree as
  deleted and untracked (the documented "dropped, not rebuilt" cost, reached honestly).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from evotree.harness import git_guard
from evotree.harness.git_prune import prune_nested
from tests.test_git_guard_nested import _git, _has, _task
from tests.test_git_prune_checkouts import _box_view, _judge, _task_with_a_linked_worktree
from tests.test_redteam_s17_box_nested_redteam import _blob, _stores

_WHERE = ["box", "judge"]

# C5: pygit2's ``Index`` left half-made by the harness reading a split index says so in its
# ``__del__``, whenever the collector runs
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def _binds(tmp_path: Path, phase: Path, **kw: object) -> list[tuple[str, Path, Path]]:
    return git_guard.before_phase([phase], tmp_path / "raw.trace", **kw)  # type: ignore[arg-type]


def _hidden(binds: list[tuple[str, Path, Path]]) -> list[Path]:
    return [Path(d) for _, s, d in binds if Path(s).name.endswith(".hidden")]


def _sources(binds: list[tuple[str, Path, Path]]) -> dict[Path, Path]:
    return {
        Path(d): Path(s)
        for _, s, d in binds
        if Path(s).parent.name.endswith(".git-copies") and not Path(s).name.endswith(".hidden")
    }


def _box_leaks(tmp_path: Path, phase: Path, blob: str, **kw: object) -> list[Path]:
    """The stores the box reads holding ``blob``: a bound copy's, or one on disk in the phase
    that no bind masks (a folder the search stopped at but nothing bound over)."""
    binds = _binds(tmp_path, phase, **kw)
    dsts = [Path(d) for _, _, d in binds]
    out = [Path(d) for _, s, d in binds if any(_has(x, blob) for x in _stores(Path(s)))]
    for store in _stores(phase):
        if not any(d == store or d in store.parents for d in dsts) and _has(store, blob):
            out.append(store)
    return out


def _judge_leaks(tmp_path: Path, phase: Path, blob: str) -> list[Path]:
    dst, _ = _judge(tmp_path, phase)
    return [s for s in _stores(dst) if _has(s, blob)]


def _leaks(tmp_path: Path, phase: Path, blob: str, where: str) -> list[Path]:
    if where == "box":
        return _box_leaks(tmp_path, phase, blob)
    return _judge_leaks(tmp_path, phase, blob)


def _clone_at_the_fix(tmp_path: Path, src: Path, where: Path) -> None:
    _git(tmp_path, "clone", "-q", "--no-local", str(src), str(where))
    _git(where, "checkout", "-q", "wip")


def _bare_at_the_fix(tmp_path: Path, phase: Path) -> tuple[Path, str, str, str]:
    """(a bare clone ``phase/task.git`` of the task whose HEAD is ``wip``, the fix; the base;
    the fix; its blob) with a linked worktree ``phase/w`` detached at the base, its git
    directory still in ``task.git/worktrees/w`` (M3's layout; the caller moves it)."""
    src, base, fix = _task(tmp_path / "src")
    store = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(store))
    _git(store, "symbolic-ref", "HEAD", "refs/heads/wip")
    blob = _blob(store, fix)
    _git(store, "worktree", "add", "-q", "--detach", str(phase / "w"), base)
    return store, base, fix, blob


# --- wins ---------------------------------------------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="W1: the task's moved worktree git directory in the shared cache: R9 drops its M3 "
    "and lenient its HEAD rule; the bare clone at the fix in the workspace is kept at the fix",
)
def test_w1_the_task_worktree_git_dir_in_the_shared_cache(tmp_path: Path) -> None:
    phase = tmp_path / "phase"
    phase.mkdir()
    store, base, _, blob = _bare_at_the_fix(tmp_path, phase)
    shared = tmp_path / "shared"
    shared.mkdir()
    wt = Path(shutil.move(str(store / "worktrees/w"), str(shared / "wt.git")))
    (wt / "commondir").write_text(f"{store}\n")
    (phase / "w/.git").write_text(f"gitdir: {wt}\n")
    assert _git(phase / "w", "rev-parse", "HEAD") == base
    assert _box_leaks(tmp_path, phase, blob, read_only=[shared], written=[shared]) == []


@pytest.mark.xfail(
    strict=True,
    reason="W2: a worktree git directory in .git-folder form inside the work tree of its clone "
    "at the fix: no is_linked_git_dir (no M3), and cross_checked exempts (cache/.git, "
    "cache/w/.git) from the HEAD rule: the clone kept at the fix",
)
@pytest.mark.parametrize("where", _WHERE)
def test_w2_a_dot_git_folder_worktree_in_its_clone_at_the_fix(tmp_path: Path, where: str) -> None:
    phase = tmp_path / "phase"
    phase.mkdir()
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    cache = phase / "cache"
    _clone_at_the_fix(tmp_path, src, cache)
    _git(cache, "remote", "remove", "origin")
    _git(cache, "worktree", "add", "-q", "--detach", str(cache / "w"), base)
    (cache / "w/.git").unlink()
    shutil.move(str(cache / ".git/worktrees/w"), str(cache / "w/.git"))
    (cache / "w/.git/commondir").write_text("../../.git\n")
    (cache / ".git/info/exclude").write_text("w/\n")
    assert _git(cache / "w", "rev-parse", "HEAD") == base
    assert _git(cache / "w", "status", "--porcelain") == ""
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.xfail(
    strict=True,
    reason="W3: the worktree git directory moved inside its store's folder, not under "
    "worktrees/: the search never enters a store, so no M3 and no HEAD rule; the bare clone "
    "at the fix is pruned at the fix",
)
@pytest.mark.parametrize("where", _WHERE)
def test_w3_the_worktree_git_dir_inside_its_store(tmp_path: Path, where: str) -> None:
    phase = tmp_path / "phase"
    phase.mkdir()
    store, base, _, blob = _bare_at_the_fix(tmp_path, phase)
    shutil.move(str(store / "worktrees/w"), str(store / "wt"))
    (store / "wt/commondir").write_text("..\n")
    (phase / "w/.git").write_text("gitdir: ../task.git/wt\n")
    assert _git(phase / "w", "rev-parse", "HEAD") == base
    assert _leaks(tmp_path, phase, blob, where) == []


_MASKS = ["linked", "bare-junk"]


def _mask(folder: Path, how: str) -> None:
    """A candidate's files making ``folder`` read as a git directory whose HEAD names nothing:
    ``linked`` — ``HEAD`` (an unborn branch) and ``commondir`` (``.git``: a folder there, so
    the branch reads unborn, no HEAD rule); ``bare-junk`` — ``HEAD`` and empty ``objects/``,
    ``refs/`` (older than 7cff6f4)."""
    (folder / "HEAD").write_text("ref: refs/heads/nothing\n")
    if how == "linked":
        (folder / "commondir").write_text(".git\n")
    else:
        (folder / "objects").mkdir()
        (folder / "refs").mkdir()


@pytest.mark.xfail(
    strict=True,
    reason="W4/W5: files at the task checkout's root make it a git directory (linked: HEAD + "
    "commondir; bare-junk: HEAD + empty objects/, refs/): the search stops there, t/.git is "
    "never found, t is masked, and the clone at the fix beside it relates to nothing: kept at "
    "the fix",
)
@pytest.mark.parametrize("how", _MASKS)
@pytest.mark.parametrize("where", _WHERE)
def test_w4_w5_the_task_checkout_masked_beside_a_clone_at_the_fix(
    tmp_path: Path, where: str, how: str
) -> None:
    phase = tmp_path / "phase"
    t, _, fix = _task(phase / "t")
    blob = _blob(t, fix)
    _clone_at_the_fix(tmp_path, t, phase / "cache")
    _mask(t, how)
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.xfail(
    strict=True,
    reason="W4: the workspace is the task's checkout, a clone at the fix in a read-only root "
    "(the image's): HEAD + commondir at the workspace's root hide it whole, t/.git unfound, "
    "and the clone is kept at the fix",
)
def test_w4_the_workspace_root_masked_beside_a_read_only_clone_at_the_fix(
    tmp_path: Path,
) -> None:
    t, _, fix = _task(tmp_path / "t")
    blob = _blob(t, fix)
    image = tmp_path / "image"
    image.mkdir()
    _clone_at_the_fix(tmp_path, t, image / "cache")
    trace = tmp_path / "control.trace"
    control = git_guard.before_phase([t], trace, read_only=[image])
    assert not [d for _, s, d in control if any(_has(x, blob) for x in _stores(Path(s)))]
    _mask(t, "linked")
    binds = git_guard.before_phase([t], tmp_path / "raw.trace", read_only=[image])
    assert not [d for _, s, d in binds if any(_has(x, blob) for x in _stores(Path(s)))]


def test_w4_control_the_clone_at_the_fix_beside_the_task_unmasked(tmp_path: Path) -> None:
    phase = tmp_path / "phase"
    t, _, fix = _task(phase / "t")
    blob = _blob(t, fix)
    _clone_at_the_fix(tmp_path, t, phase / "cache")
    assert _box_leaks(tmp_path, phase, blob) == []
    assert _judge_leaks(tmp_path, phase, blob) == []


@pytest.mark.xfail(
    strict=True,
    reason="W6: HEAD + commondir written in the plain folder holding the task's moved worktree "
    "git directory (phase/worktrees/w): the search stops at the folder, w is found nowhere, "
    "no M3 — the bare clone at the fix is pruned at the fix (H4's layout reopened)",
)
@pytest.mark.parametrize("where", _WHERE)
def test_w6_the_moved_worktree_masked_by_its_folder(tmp_path: Path, where: str) -> None:
    phase = tmp_path / "phase"
    phase.mkdir()
    store, base, _, blob = _bare_at_the_fix(tmp_path, phase)
    (phase / "worktrees").mkdir()
    wt = Path(shutil.move(str(store / "worktrees/w"), str(phase / "worktrees/w")))
    (wt / "commondir").write_text("../../task.git\n")
    (phase / "w/.git").write_text("gitdir: ../worktrees/w\n")
    assert _git(phase / "w", "rev-parse", "HEAD") == base
    assert _leaks(tmp_path, phase, blob, where) == []  # the control: held unmasked
    shutil.rmtree(tmp_path / "judge", ignore_errors=True)
    (phase / "worktrees/HEAD").write_text("ref: refs/heads/nothing\n")
    (phase / "worktrees/commondir").write_text("../task.git\n")
    assert _leaks(tmp_path, phase, blob, where) == []


# --- holds --------------------------------------------------------------------------------------


@pytest.mark.parametrize("where", _WHERE)
def test_holds_a_per_worktree_branch_of_the_moved_task_worktree(tmp_path: Path, where: str) -> None:
    """``ref: refs/worktree/task``: ``_below_worktrees`` resolves it in the store (nothing
    there: skipped, the store pruned at the fix), but the cross pass reads it where git does
    (the worktree's folder) and does not keep the copy holding the base and the fix."""
    phase = tmp_path / "phase"
    phase.mkdir()
    store, base, _, blob = _bare_at_the_fix(tmp_path, phase)
    wt = Path(shutil.move(str(store / "worktrees/w"), str(phase / "wt.git")))
    (wt / "commondir").write_text("../task.git\n")
    (phase / "w/.git").write_text("gitdir: ../wt.git\n")
    (wt / "refs/worktree").mkdir(parents=True)
    (wt / "refs/worktree/task").write_text(f"{base}\n")
    (wt / "HEAD").write_text("ref: refs/worktree/task\n")
    assert _git(phase / "w", "rev-parse", "HEAD") == base
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", _WHERE)
def test_holds_a_dot_git_folder_worktree_beside_the_bare_clone_at_the_fix(
    tmp_path: Path, where: str
) -> None:
    """W2's worktree outside its store's work tree: hidden (not self-contained) and tried by its
    HEAD, which the bare clone's copy holds with the fix past it."""
    phase = tmp_path / "phase"
    phase.mkdir()
    store, base, _, blob = _bare_at_the_fix(tmp_path, phase)
    (phase / "w/.git").unlink()
    shutil.move(str(store / "worktrees/w"), str(phase / "w/.git"))
    (phase / "w/.git/commondir").write_text("../../task.git\n")
    assert _git(phase / "w", "rev-parse", "HEAD") == base
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", _WHERE)
def test_holds_a_linked_worktree_dir_in_the_work_tree_of_its_clone_at_the_fix(
    tmp_path: Path, where: str
) -> None:
    """W2's layout with the git directory not named ``.git`` (``cache/wt.git``): a linked one,
    the clone pruned below its HEAD (M3 through ``moved_worktrees``)."""
    phase = tmp_path / "phase"
    phase.mkdir()
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    cache = phase / "cache"
    _clone_at_the_fix(tmp_path, src, cache)
    _git(cache, "remote", "remove", "origin")
    _git(cache, "worktree", "add", "-q", "--detach", str(cache / "w"), base)
    shutil.move(str(cache / ".git/worktrees/w"), str(cache / "wt.git"))
    (cache / "wt.git/commondir").write_text("../.git\n")
    (cache / "w/.git").write_text("gitdir: ../wt.git\n")
    (cache / ".git/info/exclude").write_text("w/\nwt.git/\n")
    assert _git(cache / "w", "rev-parse", "HEAD") == base
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", _WHERE)
def test_holds_a_decoy_wrapping_a_clone_at_the_fix(tmp_path: Path, where: str) -> None:
    """A candidate's folder with ``HEAD`` and ``commondir`` (naming the task's store) holding a
    clone at the fix: the search stops at the folder, so the clone is found nowhere — but the
    folder is bound as its pointers (the clone masked), and the judge copies those alone."""
    phase = tmp_path / "phase"
    t, base, fix = _task(phase / "t")
    blob = _blob(t, fix)
    decoy = phase / "decoy"
    decoy.mkdir()
    (decoy / "HEAD").write_text(f"{base}\n")
    (decoy / "commondir").write_text("../t/.git\n")
    _clone_at_the_fix(tmp_path, t, decoy / "cache")
    assert _leaks(tmp_path, phase, blob, where) == []
    if where == "judge":
        assert sorted(os.listdir(tmp_path / "judge/decoy")) == ["HEAD", "commondir"]


def test_holds_a_decoy_naming_the_fix_branch_of_a_clone_at_the_fix(tmp_path: Path) -> None:
    """A decoy ``HEAD`` ``ref: refs/heads/wip`` read through ``commondir`` in the clone at the
    fix (M3 there: the merge base of the fix and itself): the clone is still pruned at the
    task's base beside it, the decoy's branch unborn in that copy."""
    phase = tmp_path / "phase"
    t, _, fix = _task(phase / "t")
    blob = _blob(t, fix)
    _clone_at_the_fix(tmp_path, t, phase / "cache")
    decoy = phase / "decoy"
    decoy.mkdir()
    (decoy / "HEAD").write_text("ref: refs/heads/wip\n")
    (decoy / "commondir").write_text("../cache/.git\n")
    assert _box_leaks(tmp_path, phase, blob) == []


@pytest.mark.parametrize("kind", ["cycle"])
def test_holds_commondir_cycles(tmp_path: Path, kind: str) -> None:
    """Two decoys naming each other: hidden (no task store pruned there), the branch unborn for
    the HEAD rule, nothing else hidden, nothing leaked (``.``, itself, likewise)."""
    phase = tmp_path / "phase"
    t, _, fix = _task(phase / "t")
    blob = _blob(t, fix)
    _clone_at_the_fix(tmp_path, t, phase / "cache")
    names = ["d1", "d2"] if kind == "cycle" else ["d1"]
    for i, name in enumerate(names):
        (phase / name).mkdir()
        (phase / name / "HEAD").write_text("ref: refs/heads/main\n")
        other = names[(i + 1) % len(names)]
        (phase / name / "commondir").write_text(f"../{other}\n" if kind == "cycle" else ".\n")
    binds = _binds(tmp_path, phase)
    assert sorted(_hidden(binds)) == [phase / n for n in names]
    assert _box_leaks(tmp_path, phase, blob) == []


@pytest.mark.parametrize("where", _WHERE)
def test_holds_future_naming_extras_of_an_honest_moved_worktree(tmp_path: Path, where: str) -> None:
    """An honest moved worktree's git directory carrying the fix's id in ``logs/HEAD``,
    ``ORIG_HEAD``, ``FETCH_HEAD``, ``refs/worktree/old``, ``config.worktree``, and a clone at
    the fix in ``modules/sub``: only ``HEAD``, ``commondir``, ``gitdir``, ``index`` go across,
    none naming the fix; no copy holds the fix's blob."""
    phase = tmp_path / "phase"
    t, _, _, blob = _task_with_a_linked_worktree(phase, "relative")
    fix = _git(t, "rev-parse", "wip")
    wt = phase / "wt.git"
    (wt / "logs").mkdir(exist_ok=True)
    (wt / "logs/HEAD").write_text(f"{'0' * 40} {fix} a <a@b> 0 +0000\tcheckout\n")
    (wt / "ORIG_HEAD").write_text(f"{fix}\n")
    (wt / "FETCH_HEAD").write_text(f"{fix}\t\tbranch 'wip'\n")
    (wt / "refs/worktree").mkdir(parents=True)
    (wt / "refs/worktree/old").write_text(f"{fix}\n")
    (wt / "config.worktree").write_text(f"[evotree]\n\tfix = {fix}\n")
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(t), str(wt / "modules/sub"))
    _git(wt / "modules/sub", "symbolic-ref", "HEAD", "refs/heads/wip")
    assert _leaks(tmp_path, phase, blob, where) == []
    if where == "box":
        copy = _sources(_binds(tmp_path, phase))[wt]
    else:
        copy = tmp_path / "judge/wt.git"
    assert sorted(os.listdir(copy)) == ["HEAD", "commondir", "gitdir", "index"]
    assert all(fix.encode() not in (copy / n).read_bytes() for n in os.listdir(copy))


# --- costs --------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["gone", "fifo"])
def test_c1_a_stale_moved_worktree_hides_the_task(tmp_path: Path, kind: str) -> None:
    """A moved worktree's git directory whose store is gone (``commondir`` naming no folder), or
    a FIFO ``commondir``: its branch unreadable, no copy is kept — the task's store hidden with
    it."""
    phase = tmp_path / "phase"
    t, _, _ = _task(phase / "t")
    stale = phase / "old-wt"
    stale.mkdir()
    (stale / "HEAD").write_text("ref: refs/heads/main\n")
    if kind == "gone":
        (stale / "commondir").write_text("../removed/.git\n")
    else:
        os.mkfifo(stale / "commondir")
    hidden = _hidden(_binds(tmp_path, phase))
    assert t / ".git" in hidden and stale in hidden, hidden


def test_c1_the_judge_refuses_the_task_beside_a_stale_moved_worktree(tmp_path: Path) -> None:
    phase = tmp_path / "phase"
    _task(phase / "t")
    stale = phase / "old-wt"
    stale.mkdir()
    (stale / "HEAD").write_text("ref: refs/heads/main\n")
    (stale / "commondir").write_text("../removed/.git\n")
    dst, refused = _judge(tmp_path, phase)
    assert sorted(r.split(":")[0] for r in refused) == ["old-wt", "t/.git"], refused
    assert not (dst / "t/.git").exists()


def test_c2_a_data_folder_with_head_and_commondir_files_is_hidden(tmp_path: Path) -> None:
    """A fixture folder holding files named ``HEAD`` and ``commondir`` (a git tool's test data,
    say) is a linked worktree's git directory: hidden with all it holds, refused by the judge."""
    phase = tmp_path / "phase"
    t, _, _ = _task(phase / "t")
    data = t / "fixtures/refs-case"
    data.mkdir(parents=True)
    (data / "HEAD").write_text("ref: refs/heads/main\n")
    (data / "commondir").write_text("../../../elsewhere\n")
    (data / "expected.json").write_text("{}\n")
    assert data in _hidden(_binds(tmp_path, phase))
    dst, refused = _judge(tmp_path, phase)
    assert any(r.startswith("t/fixtures/refs-case:") for r in refused), refused
    assert not (dst / "t/fixtures/refs-case/expected.json").exists()


def test_c2_head_and_commondir_at_the_workspace_root_hide_it_whole(tmp_path: Path) -> None:
    phase = tmp_path / "phase"
    t, _, _ = _task(phase / "t")
    (phase / "HEAD").write_text("ref: refs/heads/main\n")
    (phase / "commondir").write_text("t/.git\n")
    binds = _binds(tmp_path, phase)
    assert _hidden(binds) == [phase], binds


def test_c2_prune_nested_empties_a_work_tree_whose_root_has_head_and_commondir(
    tmp_path: Path,
) -> None:
    """The audit's fourth world: the tree root itself found as a linked worktree's git
    directory (the search starts there) and emptied — its ``.git`` and every file — with no
    word of it (``""``: every store pruned)."""
    t, base, _ = _task(tmp_path / "t")
    (t / "HEAD").write_text(f"{base}\n")
    (t / "commondir").write_text(".git\n")
    assert prune_nested(t, t / ".git", base, tmp_path / "scratch") == ""
    assert os.listdir(t) == []


@pytest.mark.parametrize("head", ["no-commit", "older"])
def test_c3_a_linked_folder_in_the_shared_cache_changes_a_shared_store(
    tmp_path: Path, head: str
) -> None:
    """One version's code writes ``shared/x`` (``HEAD``, ``commondir`` ``../mirror.git``): the
    shared mirror is hidden (a HEAD of no commit) or pruned at that older commit (M3) in every
    version's box — R9 filters only stores outside the cache."""
    phase = tmp_path / "phase"
    t, base, _ = _task(phase / "t")
    (t / "README").write_text("tolls\n")
    _git(t, "add", "README")
    _git(t, "commit", "-qm", "docs: a readme")
    shared = tmp_path / "shared"
    shared.mkdir()
    mirror = shared / "mirror.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(t), str(mirror))
    x = shared / "x"
    x.mkdir()
    (x / "HEAD").write_text(("1" * 40 if head == "no-commit" else base) + "\n")
    (x / "commondir").write_text("../mirror.git\n")
    binds = _binds(tmp_path, phase, read_only=[shared], written=[shared])
    if head == "no-commit":
        assert mirror in _hidden(binds), binds
        return
    assert _git(tmp_path, "--git-dir", str(_sources(binds)[mirror]), "rev-parse", "HEAD") == base


def test_c5_a_split_index_of_a_moved_worktree_is_dropped(tmp_path: Path) -> None:
    """An honest moved worktree with a split index (``update-index --split-index``: its
    ``index`` names ``sharedindex.*`` beside it): the index is not read, so dropped (the shared
    one is never copied) — git in the box sees the work tree's files deleted and untracked.
    (pygit2's ``Index`` left half-made by that read says so in its ``__del__``: filtered.)"""
    phase = tmp_path / "phase"
    t, w, _, _ = _task_with_a_linked_worktree(phase, "relative")
    _git(w, "update-index", "--split-index")
    assert any(n.startswith("sharedindex.") for n in os.listdir(phase / "wt.git"))
    sources = _sources(_binds(tmp_path, phase))
    assert sorted(os.listdir(sources[phase / "wt.git"])) == ["HEAD", "commondir", "gitdir"]
    view = _box_view(phase, tmp_path / "view", sources)
    assert "D  tolls/toll.py" in _git(view / w.name, "status", "--porcelain")


def test_c4_decoys_push_the_task_store_past_the_cap(tmp_path: Path) -> None:
    phase = tmp_path / "phase"
    t, base, _ = _task(phase / "t")
    for i in range(git_guard.MAX_PRUNED + 1):
        d = phase / f"d{i:02}"
        d.mkdir()
        (d / "HEAD").write_text(f"{base}\n")
        (d / "commondir").write_text("../t/.git\n")
    assert t / ".git" in _hidden(_binds(tmp_path, phase))
