"""Red team (session 21) of the nested-store relate rule of b2b8958 (issue 29): a store beside
(or in) several checkouts is pruned at the earliest base of those it shares history with (the
one every other's copy reaches), kept at its own HEAD where every such base reaches it, hidden
(refused) where none is reached by all — and of what else landed in ``git_relations.py`` this
session (3a9bfb1, the HEAD rule's "earliest such base" for an unpruned store whose HEAD no copy
holds; and 0cc11ba, a linked worktree's git directory read by its HEAD through its
``commondir``). Attacked through the public entry points only: a phase's box
(:func:`evotree.harness.git_guard.before_phase`, with the shared cache as a written root where
said) and the judge's copy (:func:`evotree.harness.sandbox_copy.copy_regular_files`). Real git
repositories in temporary folders, no mocks. A win: a store copy the phase (or the judge) gets
keeps the fix's blob, or a candidate's write in the shared cache changes another version's
honest task store. The task here has six files (a fix changes one of many: a snapshot of the
task's files shares most blobs with a tree past the fix, as in a real repository).

Wins (strict xfails while open; R1 closed by ef8b612 — a base reaches a commit its copy names as
a parent, or one of its history in the store being related —, R9 by c785784 — 3a9bfb1's rule
reads no copy in the shared cache for one outside it —, R2, R6 and R10 beside the task by
b3348a2 — a store left unpruned whose objects are its own is read at the earliest of the
copies' bases it holds too —, R11 by c9c36bf — ``commondir`` read as git reads it — and R12 by
6d87065 — the earliest bases of every other copy, exempt ones included — and R13 by cac77c5 —
a shallow copy's boundary parents read for its stand-in bases —, plain tests since):

- **R1** (made by b2b8958) a shallow clone of the fix or of the tip past it (``git clone
  --depth 1 --branch``, as CI clones) beside the task's checkout and a listable mirror past the
  fix: the clone's copy does not reach the task's base (its shallow boundary), so no base is
  "reached by all" and the mirror is hidden; a hidden store is tried at its own HEAD, past the
  fix, so its future is empty and the clone keeps the fix. Before b2b8958 this held when the
  clone's name sorted after the task's (``zcache``); now it leaks whatever the names, and with
  the mirror in the task's own work tree too. Box and judge.
- **R2** (made by b2b8958) a candidate's orphan snapshot of its own task's files (``git init;
  git add -A; git commit`` in a copy of the work tree) beside the task, a mirror past the fix
  and a full clone at the fix: the snapshot shares most blobs of the mirror's HEAD tree, and its
  base and the task's do not reach each other — the mirror is hidden, tried at its own HEAD (no
  future), and the clone at the fix is kept. Without the snapshot the clone is pruned (the
  control). Box and judge.
- **R3** (J1/J2/J6) a junk checkout a candidate's prepare phase writes in the shared cache — a
  clone of its task reset one commit back, or an orphan snapshot of its task's files — is a
  "checkout" ``_relate`` reads (``lenient`` is not consulted there): in another version's box an
  honest bare mirror of the task at the task's base beside its checkout is pruned at the junk's
  older base — and its future then prunes the task's checkout there too — or hidden (made by
  b2b8958: the task's checkout, named first, decided before), and
  a task cloned ``--separate-git-dir`` (its store a sibling, the junk the only checkout) is
  pruned at the junk's base — the orphan junk's commit becomes the other version's task HEAD
  (this layout older than b2b8958). Box.
- **R4** H8 nested: the mirror past the fix a checkout with a work tree inside the work tree of
  the clone at the fix: ``_relate`` now prunes it at the task's base, but ``cross_checked``
  exempts a ``.git`` folder from the future of a checkout in its own work tree, so the clone
  keeps the fix (the same mirror bare there: held). Box and judge; older than b2b8958.
- **R5** a clone whose HEAD is an orphan commit of the fix's tree (``git checkout --orphan`` at
  the fix), its store holding upstream's history: below an orphan base the whole history is
  "future", the task's copy holds it, and ``relate_checkouts`` prunes the task's own checkout
  again at the orphan — from the clone's copy: the task gets the fix's tree. Box and judge;
  older than b2b8958.
- **R6** thirty empty repositories (``git init``, a candidate's writes) push an image's mirror
  past the fix beyond ``MAX_PRUNED``: hidden, tried at its own HEAD (no future), so a clone at
  the fix beside the task is kept. Box; older than b2b8958.
- **R7** CI's shallow clone of the fix that then fetched the base branch (``git clone --depth 1
  --branch <fix>; git fetch origin main``: its ``shallow`` file names the fix, the base's
  history lies below it): its future, read below that boundary, is the task's whole history,
  which the task's copy holds — so the task's checkout is pruned again at the clone's base, the
  fix. With or without a mirror beside them. Box and judge; older than b2b8958.
- **R8** a listable bare ``--depth 1`` mirror of the tip past the fix, in a task whose fix
  changes most of its (one-file) tree: it holds no commit of the task's and few of its blobs,
  so it shares history with a full clone at the fix alone and is pruned at that base — its copy
  keeps the fix, and the task's checkout is hidden (the mirror's future at the fix cannot be
  listed: its store lacks that commit). The same mirror unlistable holds (3a9bfb1). Box and
  judge; older than b2b8958.
- **R9** (made by 3a9bfb1; J1/J2/J6) an image's library checkout cloned ``--reference`` (left
  unpruned, its HEAD no copy holds) beside the task: 3a9bfb1 names every copy holding another
  copy's base related to it, the shared cache's copies among those it reads (``lenient`` spares
  only the unpruned store) — a candidate's junk clone of its task one commit back in the shared
  cache prunes another version's task checkout at that older base. Box.
- **R10** a repository in the sha256 object format (one commit: ``git init
  --object-format=sha256``) beside the task: ``_relate`` reads every checkout, and
  ``_shares_history`` raises for one of another format (N4's rule), so a store beside it is
  hidden — the mirror past the fix, and with it the only evidence against a clone at the fix
  (kept); in the shared cache, another version's honest bare mirror or separate git directory
  (J1/J2/J6). Made by b2b8958 where the repository sorts after the task (before, the first
  checkout the store shared history with decided; the separate layout, with the junk the only
  checkout, older). Box and judge (the shared cache: box).
- **R11** (0cc11ba) the s20 H4 layout — the task's checkout a linked worktree of a store outside
  the phase, its git directory moved into the phase — given empty ``objects`` and ``refs``
  folders, so that the search finds it (unpruned: a ``commondir``), with ``commondir`` written
  ``hop/..`` and ``hop`` a link to that store's ``refs``: git resolves the link before the
  ``..`` and reads the store; ``_common_dir`` normalises the text first and reads the git
  directory itself, where the branch is absent — unborn, nothing done, the clone at the fix
  kept. The same with ``commondir`` `` store`` (a leading space git keeps, ``_common_dir``
  strips: a link `` store`` to the store, an empty folder ``store``). Box and judge.
- **R12** (b3348a2) R6 with the mirror a clone with a work tree vendored in the task's own work
  tree (``repo/vendor/upstream`` at fix2, pushed past the cap: hidden): b3348a2 reads a hidden
  store at the earliest of the bases of the copies not in ``skip``, and the task's ``.git`` is
  exempt from a checkout in its own work tree — its base left out, the clone at the fix's base
  is the earliest, nothing past it is held, the clone kept. Bare there, or within the cap,
  held. Box.
- **R13** (made by b2b8958, left by ad9c89a) the task's checkout a ``--depth 1`` clone (as CI
  clones) of a commit of the task's own on top of upstream's base, beside a listable mirror
  past the fix (holding no commit of the task's own) and a full clone at the fix: the clone
  does not reach the task's commit and the task's copy names no commit of the clone's, so the
  mirror is hidden; read at the earliest bases, the task's base is held nowhere and
  ``_held_tips`` (a ``rev-list`` of the shallow copy) finds no stand-in — the boundary's
  parent, upstream's base, is not read —, so the clone's base, the fix, is the earliest and
  the clone keeps the fix. Not shallow: held (ad9c89a). Box and judge.

Holds (plain tests): the controls of R2 and R3; R4 with the mirror bare; a second checkout at
the task's very base (equal HEADs); the clone at the fix carrying ``info/grafts`` or a replace
reference that make the fix a root (the pruning reads neither); a checkout of the task whose
HEAD is garbage (hidden; its every object is future: the clone hidden too); a shallow mirror at
the tip (its blobs shared with the task: pruned at the task's base); R5 with the orphan's tree
the base's; the task's checkout itself shallow beside a full clone at the fix and the mirror;
3a9bfb1's rule with R1's shallow clone beside an unlistable mirror (the boundary
names the task's base: pruned there) and with R8's mirror unlistable; a checkout of the task
whose HEAD is a link, or whose ``.git`` is a link to a store outside the phase; R9's control;
R11's layout with ``commondir`` the store's absolute path (branch or detached HEAD), and with
the link but a detached HEAD (0cc11ba: found, read by its HEAD, the clone not kept).

Over-pruning (plain tests marking the cost):

- **P1** an honest bare mirror at the task's very base (not past it) beside the task's checkout
  and an older clone of the same repository: mirror, task and clone all pruned at the older
  base (the documented cost names a mirror past both; one at the base costs the same).
- **P2** an honest bare mirror at the task's base beside the task's checkout and an orphan export
  of the same files (a ``dist`` repository of its own): the mirror is hidden.
- **P3** an honest bare mirror at the task's base beside the task's checkout and a checkout of a
  feature branch of the same repository (off the base's parent): the mirror is hidden, and the
  feature checkout with it (it holds the hidden mirror's future). Box and judge.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evotree.harness import git_guard
from tests.test_git_guard_nested import _box, _git, _has, _task
from tests.test_git_prune_checkouts import _judge
from tests.test_redteam_s17_box_nested_redteam import _blob, _holds, _stores, _upstream_two_past
from tests.test_redteam_s20_unpruned_redteam import _fifo_info_packs

pytestmark = pytest.mark.heavy

_WHERE = ["box", "judge"]
_FILES = ["axles", "bridges", "lanes", "meters", "plates"]


def _big_task(tmp_path: Path) -> tuple[Path, str, str, str, str]:
    """(upstream, the base's parent, the base, the fix, fix2): ``tolls/`` holds ``toll.py`` and
    five other files; ``main`` is two commits (the parent, then the base), ``wip`` the fix (tag
    ``fixtag``) and a commit past it (fix2, a README)."""
    up = tmp_path / "up"
    (up / "tolls").mkdir(parents=True)
    _git(up, "init", "-q", "-b", "main")
    (up / "tolls/toll.py").write_text("def toll(rate):\n    return rate\n")
    for name in _FILES:
        (up / "tolls" / f"{name}.py").write_text(f"# {name}\nCOUNT = {len(name)}\n")
    _git(up, "add", "-A")
    _git(up, "commit", "-qm", "tolls: a flat rate")
    older = _git(up, "rev-parse", "HEAD")
    (up / "tolls/axles.py").write_text("# axles\nCOUNT = 2\n")
    _git(up, "commit", "-qam", "axles: two")
    base = _git(up, "rev-parse", "HEAD")
    _git(up, "checkout", "-qb", "wip")
    (up / "tolls/toll.py").write_text("def toll(rate):\n    return rate * 0.5  # night\n")
    _git(up, "commit", "-qam", "tolls: the night discount")
    fix = _git(up, "rev-parse", "HEAD")
    _git(up, "tag", "fixtag", fix)
    (up / "README").write_text("tolls, with a night discount\n")
    _git(up, "add", "README")
    _git(up, "commit", "-qm", "docs: the discount")
    fix2 = _git(up, "rev-parse", "HEAD")
    _git(up, "checkout", "-q", "main")
    return up, older, base, fix, fix2


def _checkout(tmp_path: Path, up: Path, path: Path) -> None:
    """An honest checkout of upstream's ``main`` alone (no fix in its store) at ``path``."""
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "main", str(up), str(path))


def _phase(tmp_path: Path, mirror: bool = True) -> tuple[Path, Path, str, str, str, str]:
    """(the phase, upstream, older, base, fix, the fix's blob): the task's honest checkout
    ``phase/t`` at its base; ``mirror``: a bare mirror of upstream ``phase/mirror.git`` whose
    HEAD is fix2 (fetched later: past the fix)."""
    up, older, base, fix, _ = _big_task(tmp_path)
    phase = tmp_path / "phase"
    phase.mkdir()
    _checkout(tmp_path, up, phase / "t")
    assert not _has(phase / "t/.git", fix)
    if mirror:
        bare = phase / "mirror.git"
        _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(up), str(bare))
        _git(bare, "symbolic-ref", "HEAD", "refs/heads/wip")
    return phase, up, older, base, fix, _blob(up, fix)


def _full_clone_at(tmp_path: Path, up: Path, path: Path, rev: str) -> None:
    """A full clone of upstream detached at ``rev``, its remote removed."""
    _git(tmp_path, "clone", "-q", "--no-local", str(up), str(path))
    _git(path, "checkout", "-q", rev)
    _git(path, "remote", "remove", "origin")


def _snapshot(of: Path, path: Path) -> None:
    """An orphan repository at ``path`` whose one commit holds the files of ``of/tolls``."""
    (path / "tolls").mkdir(parents=True)
    for f in (of / "tolls").iterdir():
        (path / "tolls" / f.name).write_bytes(f.read_bytes())
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "a snapshot")


def _leaking(tmp_path: Path, phase: Path, blob: str, where: str) -> tuple[list[Path], object]:
    """(the copies the box or the judge gets that hold ``blob``, what was hidden or refused)."""
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        return _holds(sources, blob), snap["hidden"]
    dst, refused = _judge(tmp_path, phase)
    return [s for s in _stores(dst) if _has(s, blob)], refused


def _head(t: Path, copy: Path) -> str:
    return _git(t, "--git-dir", str(copy), "rev-parse", "HEAD")


# --- R1: a shallow clone of the fix ----------------------------------------------------------


@pytest.mark.parametrize("clone", ["cache", "zcache"])
@pytest.mark.parametrize("at", ["fixtag", "wip"])
@pytest.mark.parametrize("where", _WHERE)
def test_r1_a_shallow_clone_of_the_fix_hides_the_mirror_past_it(
    tmp_path: Path, where: str, at: str, clone: str
) -> None:
    phase, up, _, base, _, blob = _phase(tmp_path)
    c = phase / clone
    _git(tmp_path, "clone", "-q", "--depth", "1", "--branch", at, up.as_uri(), str(c))
    assert _has(c / ".git", blob) and not _has(c / ".git", base)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize("where", _WHERE)
def test_r1_the_mirror_in_the_tasks_work_tree(tmp_path: Path, where: str) -> None:
    phase, up, _, _, _, blob = _phase(tmp_path)
    t = phase / "t"
    (t / ".git/info/exclude").write_text("vendor/\n")
    (t / "vendor").mkdir()
    shutil.move(str(phase / "mirror.git"), str(t / "vendor/mirror.git"))
    c = phase / "zcache"
    _git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "fixtag", up.as_uri(), str(c))
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# --- R2: an orphan snapshot of the task's files ------------------------------------------------


@pytest.mark.parametrize("where", _WHERE)
def test_r2_a_snapshot_of_the_task_hides_the_mirror(tmp_path: Path, where: str) -> None:
    phase, up, _, _, fix, blob = _phase(tmp_path)
    _full_clone_at(tmp_path, up, phase / "zcache", fix)
    _snapshot(phase / "t", phase / "snap")
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize("where", _WHERE)
def test_r2_control_without_the_snapshot_the_clone_is_pruned(tmp_path: Path, where: str) -> None:
    phase, up, _, _, fix, blob = _phase(tmp_path)
    _full_clone_at(tmp_path, up, phase / "zcache", fix)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# --- R3: junk in the shared cache changes another version's task store -----------------------


def _box_with_cache(tmp_path: Path, phase: Path, shared: Path) -> tuple[dict[Path, Path], dict]:
    """:func:`_box` with ``shared`` a read-only root the candidate's code writes (the cache)."""
    trace = tmp_path / "raw.trace"
    binds = git_guard.before_phase([phase], trace, read_only=[shared], written=[shared])
    sources = {
        Path(dst): Path(src)
        for _, src, dst in binds
        if Path(src).parent.name.endswith(".git-copies") and not str(src).endswith(".hidden")
    }
    return sources, json.loads(git_guard.snapshot_path(trace).read_text())


def _honest_task(tmp_path: Path, layout: str) -> tuple[Path, Path, Path, str]:
    """(the phase, the task's work tree ``phase/t``, the store checked, the base): ``mirror``:
    the task's checkout and a bare mirror of it at the same base ``phase/task.git``;
    ``separate``: the task cloned ``--separate-git-dir phase/t.git``."""
    up, _, base, _, _ = _big_task(tmp_path)
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    if layout == "mirror":
        _checkout(tmp_path, up, t)
        store = phase / "task.git"
        _git(
            tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(up), str(store)
        )
    else:
        store = phase / "t.git"
        _git(
            tmp_path,
            "clone",
            "-q",
            "--no-local",
            "--single-branch",
            "--separate-git-dir",
            str(store),
            str(up),
            str(t),
        )
    assert _git(t, "rev-parse", "HEAD") == base
    return phase, t, store, base


def _junk(tmp_path: Path, shared: Path, t: Path, how: str) -> None:
    """A candidate's checkout in the shared cache: ``older``, a clone of its task reset one
    commit back; ``orphan``, an orphan snapshot of its task's files."""
    j = shared / "j"
    if how == "orphan":
        _snapshot(t, j)
        return
    _git(tmp_path, "clone", "-q", "--no-local", str(t), str(j))
    _git(j, "reset", "-q", "--hard", "HEAD^")
    _git(j, "remote", "remove", "origin")
    _git(j, "reflog", "expire", "--expire=now", "--all")
    _git(j, "gc", "-q", "--prune=now")


# R3 closed (git_guard.before_phase: a store outside the shared cache is not related to
# copies inside it, the H6 principle)
@pytest.mark.parametrize("how", ["older", "orphan"])
@pytest.mark.parametrize("layout", ["mirror", "separate"])
def test_r3_junk_in_the_shared_cache_changes_another_versions_task_store(
    tmp_path: Path, layout: str, how: str
) -> None:
    phase, t, store, base = _honest_task(tmp_path, layout)
    shared = tmp_path / "shared"
    shared.mkdir()
    _junk(tmp_path, shared, t, how)
    sources, snap = _box_with_cache(tmp_path, phase, shared)
    mine = {store, t / ".git"} if layout == "mirror" else {store}
    assert mine <= set(sources), snap["hidden"]
    assert {_head(t, sources[gd]) for gd in mine} == {base}


@pytest.mark.parametrize("layout", ["mirror", "separate"])
def test_r3_control_the_honest_task_store_without_junk(tmp_path: Path, layout: str) -> None:
    phase, t, store, base = _honest_task(tmp_path, layout)
    shared = tmp_path / "shared"
    shared.mkdir()
    sources, snap = _box_with_cache(tmp_path, phase, shared)
    assert store in sources, snap["hidden"]
    assert _head(t, sources[store]) == base


# --- R4: the mirror past the fix a checkout in the clone's work tree --------------------------


def _mirror_in_the_clone(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """(the phase, the fix's blob): the task's checkout, a full clone at the fix ``zcache`` and
    in its work tree a mirror of upstream at fix2 — ``checkout``: a clone with a work tree
    ``vendor/m``; ``bare``: ``vendor/m.git``."""
    phase, up, _, _, fix, blob = _phase(tmp_path, mirror=False)
    c = phase / "zcache"
    _full_clone_at(tmp_path, up, c, fix)
    (c / ".git/info/exclude").write_text("vendor/\n")
    (c / "vendor").mkdir()
    if kind == "checkout":
        _git(tmp_path, "clone", "-q", "--no-local", "-b", "wip", str(up), str(c / "vendor/m"))
    else:
        m = c / "vendor/m.git"
        _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(up), str(m))
        _git(m, "symbolic-ref", "HEAD", "refs/heads/wip")
    return phase, blob


@pytest.mark.xfail(
    strict=True,
    reason="R4: the checkout past the fix in the clone's work tree is pruned at the task's base, "
    "but cross_checked exempts the clone's .git from the future of a checkout in its own work "
    "tree: the clone at the fix is kept",
)
@pytest.mark.parametrize("where", _WHERE)
def test_r4_a_mirror_checkout_in_the_clones_work_tree(tmp_path: Path, where: str) -> None:
    phase, blob = _mirror_in_the_clone(tmp_path, "checkout")
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize("where", _WHERE)
def test_r4_holds_a_bare_mirror_in_the_clones_work_tree(tmp_path: Path, where: str) -> None:
    phase, blob = _mirror_in_the_clone(tmp_path, "bare")
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# --- R5: a clone whose HEAD is an orphan commit of the fix's tree -----------------------------


def _orphan_head_clone(tmp_path: Path, tree: str) -> tuple[Path, str]:
    """(the phase, the fix's blob): the task's checkout, the mirror past the fix, and a full
    clone ``zcache`` whose HEAD is an orphan commit of the fix's (or the base's) tree, the fix
    kept on a branch of its store."""
    phase, up, _, base, fix, blob = _phase(tmp_path)
    c = phase / "zcache"
    _full_clone_at(tmp_path, up, c, fix if tree == "fix" else base)
    _git(c, "checkout", "-q", "--orphan", "snapshot")
    _git(c, "commit", "-qm", "a snapshot")
    _git(c, "branch", "-q", "keep", fix)
    return phase, blob


@pytest.mark.xfail(
    strict=True,
    reason="R5: below an orphan base a clone's whole history is future; the task's copy holds "
    "it, so relate_checkouts prunes the task's checkout again at the orphan, whose tree is the "
    "fix's",
)
@pytest.mark.parametrize("where", _WHERE)
def test_r5_a_clone_on_an_orphan_of_the_fix_tree_reprunes_the_task(
    tmp_path: Path, where: str
) -> None:
    phase, blob = _orphan_head_clone(tmp_path, "fix")
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize("where", _WHERE)
def test_r5_holds_an_orphan_of_the_base_tree(tmp_path: Path, where: str) -> None:
    phase, blob = _orphan_head_clone(tmp_path, "base")
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# --- R6: the mirror pushed past the cap -------------------------------------------------------


def test_r6_empty_repositories_push_the_mirror_past_the_cap(tmp_path: Path) -> None:
    up, _, _, fix, _ = _big_task(tmp_path)
    blob = _blob(up, fix)
    phase = tmp_path / "phase"
    phase.mkdir()
    _checkout(tmp_path, up, phase / "repo")
    mirror = phase / "upstream.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(up), str(mirror))
    _git(mirror, "symbolic-ref", "HEAD", "refs/heads/wip")
    _full_clone_at(tmp_path, up, phase / "cache", fix)
    for i in range(git_guard.MAX_PRUNED - 2):
        _git(phase, "init", "-q", f"j{i:02d}")
    sources, snap = _box(tmp_path, [phase])
    assert _holds(sources, blob) == [], snap["hidden"]


# --- R7: a shallow clone of the fix that fetched the base branch -----------------------------


@pytest.mark.xfail(
    strict=True,
    reason="R7: a shallow clone of the fix that fetched main holds the base's history below its "
    "shallow boundary, read as its future; the task's copy holds it, so relate_checkouts prunes "
    "the task's checkout again at the clone's base, the fix",
)
@pytest.mark.parametrize("mirror", [True, False], ids=["mirror", "no-mirror"])
@pytest.mark.parametrize("where", _WHERE)
def test_r7_a_shallow_clone_of_the_fix_that_fetched_main_reprunes_the_task(
    tmp_path: Path, where: str, mirror: bool
) -> None:
    phase, up, _, base, _, blob = _phase(tmp_path, mirror=mirror)
    c = phase / "zcache"
    _git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "fixtag", up.as_uri(), str(c))
    _git(c, "fetch", "-q", "origin", "main:refs/remotes/origin/main")
    assert _has(c / ".git", base) and (c / ".git/shallow").exists()
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# --- R8: a shallow mirror past the fix that shares no commit with the task -------------------


def _shallow_mirror_of_a_small_task(tmp_path: Path, unlistable: bool) -> tuple[Path, str]:
    """(the phase, the fix's blob): a task of one file (the fix changes most of its tree) —
    its honest checkout ``phase/t``, a full clone at the fix ``zcache``, and a bare ``--depth 1``
    mirror of the tip past the fix ``mirror.git`` (FIFO-refused where ``unlistable``)."""
    up, _, fix, _ = _upstream_two_past(tmp_path)
    phase = tmp_path / "phase"
    phase.mkdir()
    _checkout(tmp_path, up, phase / "t")
    m = phase / "mirror.git"
    _git(tmp_path, "clone", "-q", "--bare", "--depth", "1", "-b", "wip", up.as_uri(), str(m))
    if unlistable:
        _fifo_info_packs(tmp_path, m)
    _full_clone_at(tmp_path, up, phase / "zcache", fix)
    return phase, _blob(up, fix)


@pytest.mark.xfail(
    strict=True,
    reason="R8: a shallow mirror past the fix holds no commit of the task's and few of its blobs, "
    "so it shares history with the clone at the fix alone and is pruned at that base, the fix "
    "(the task's checkout hidden: the mirror's future there cannot be listed)",
)
@pytest.mark.parametrize("where", _WHERE)
def test_r8_a_listable_shallow_mirror_follows_the_clone_at_the_fix(
    tmp_path: Path, where: str
) -> None:
    phase, blob = _shallow_mirror_of_a_small_task(tmp_path, unlistable=False)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize("where", _WHERE)
def test_r8_holds_the_same_mirror_unlistable(tmp_path: Path, where: str) -> None:
    """3a9bfb1's rule: the mirror's HEAD no copy holds, the clone at the fix holds the task's
    base at a base of its own — pruned at the task's base."""
    phase, blob = _shallow_mirror_of_a_small_task(tmp_path, unlistable=True)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# --- R9: 3a9bfb1's rule and junk in the shared cache -----------------------------------------


def _referenced_library(tmp_path: Path, phase: Path) -> None:
    """An image's library checkout ``phase/lib`` cloned ``--reference`` a store outside the
    phase (an alternates file: left unpruned, tried by its HEAD, which no copy holds)."""
    lib = tmp_path / "libsrc"
    lib.mkdir()
    _git(lib, "init", "-q", "-b", "main")
    (lib / "lib.py").write_text("def helper(axles):\n    return axles * 2\n")
    _git(lib, "add", "-A")
    _git(lib, "commit", "-qm", "lib: a helper")
    ref = tmp_path / "libref.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(lib), str(ref))
    _git(tmp_path, "clone", "-q", "--reference", str(ref), lib.as_uri(), str(phase / "lib"))
    assert (phase / "lib/.git/objects/info/alternates").exists()


def test_r9_junk_in_the_shared_cache_reprunes_the_task_beside_an_unpruned_library(
    tmp_path: Path,
) -> None:
    up, _, base, _, _ = _big_task(tmp_path)
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    _checkout(tmp_path, up, t)
    _referenced_library(tmp_path, phase)
    shared = tmp_path / "shared"
    shared.mkdir()
    _junk(tmp_path, shared, t, "older")
    sources, snap = _box_with_cache(tmp_path, phase, shared)
    assert t / ".git" in sources, snap["hidden"]
    assert _head(t, sources[t / ".git"]) == base


def test_r9_control_without_junk_the_task_keeps_its_base(tmp_path: Path) -> None:
    up, _, base, _, _ = _big_task(tmp_path)
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    _checkout(tmp_path, up, t)
    _referenced_library(tmp_path, phase)
    shared = tmp_path / "shared"
    shared.mkdir()
    sources, snap = _box_with_cache(tmp_path, phase, shared)
    assert _head(t, sources[t / ".git"]) == base, snap["hidden"]


# --- R10: a repository of another object format ----------------------------------------------


def _sha256_repository(path: Path) -> None:
    """A repository of one commit in the sha256 object format (its index removed: pygit2,
    reading a copy's index, knows no sha256)."""
    path.mkdir(parents=True)
    _git(path, "init", "-q", "--object-format=sha256", "-b", "main")
    (path / "notes.txt").write_text("notes\n")
    _git(path, "add", "notes.txt")
    _git(path, "commit", "-qm", "notes")
    (path / ".git/index").unlink()


@pytest.mark.parametrize("where", _WHERE)
def test_r10_a_sha256_repository_hides_the_mirror_past_the_fix(tmp_path: Path, where: str) -> None:
    phase, up, _, _, fix, blob = _phase(tmp_path)
    _full_clone_at(tmp_path, up, phase / "zcache", fix)
    _sha256_repository(phase / "zother")
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# R10 in the shared cache closed with R3
@pytest.mark.parametrize("layout", ["mirror", "separate"])
def test_r10_a_sha256_repository_in_the_shared_cache_hides_another_versions_store(
    tmp_path: Path, layout: str
) -> None:
    phase, t, store, base = _honest_task(tmp_path, layout)
    shared = tmp_path / "shared"
    shared.mkdir()
    _sha256_repository(shared / "j")
    sources, snap = _box_with_cache(tmp_path, phase, shared)
    mine = {store, t / ".git"} if layout == "mirror" else {store}
    assert mine <= set(sources), snap["hidden"]
    assert {_head(t, sources[gd]) for gd in mine} == {base}


# --- R11: 0cc11ba's commondir read lexically ---------------------------------------------------


def _found_linked_worktree(tmp_path: Path, detached: bool, common: str) -> tuple[Path, str]:
    """(the phase, the fix's blob): the task's checkout ``phase/t`` a linked worktree of a store
    outside the phase (the s20 H4 layout: its git directory moved to ``phase/wt.git``), given
    empty ``objects`` and ``refs`` folders so that the search finds it; its ``commondir``
    ``absolute`` (the store's path), ``link-dotdot`` (``hop/..``, ``hop`` a link to the
    store's ``refs``: git resolves the ``..`` after the link, so reads the store) or
    ``leading-space`` (`` store``, a link to the store, beside an empty folder ``store``: git
    keeps the space); a clone at the fix ``phase/cache`` beside it."""
    src, base, fix = _task(tmp_path / "src")
    phase = tmp_path / "phase"
    phase.mkdir()
    how = ["--detach"] if detached else ["-b", "task"]
    _git(src, "worktree", "add", "-q", *how, str(phase / "t"), base)
    wt = Path(shutil.move(str(src / ".git/worktrees/t"), str(phase / "wt.git")))
    (wt / "objects").mkdir()
    (wt / "refs").mkdir()
    if common == "absolute":
        (wt / "commondir").write_text(f"{src / '.git'}\n")
    elif common == "link-dotdot":
        (wt / "hop").symlink_to(src / ".git/refs")
        (wt / "commondir").write_text("hop/..\n")
    else:
        (wt / " store").symlink_to(src / ".git")
        (wt / "store").mkdir()
        (wt / "commondir").write_text(" store\n")
    (phase / "t/.git").write_text(f"gitdir: {wt}\n")
    assert _git(phase / "t", "rev-parse", "HEAD") == base
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(src), str(cache))
    _git(cache, "checkout", "-q", "wip")
    return phase, _blob(src, fix)


@pytest.mark.parametrize("common", ["link-dotdot", "leading-space"])
@pytest.mark.parametrize("where", _WHERE)
def test_r11_a_commondir_git_reads_elsewhere_reads_as_unborn(
    tmp_path: Path, where: str, common: str
) -> None:
    phase, blob = _found_linked_worktree(tmp_path, detached=False, common=common)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize(
    ("detached", "common"),
    [(False, "absolute"), (True, "absolute"), (True, "link-dotdot")],
    ids=["branch-absolute", "detached-absolute", "detached-link-dotdot"],
)
@pytest.mark.parametrize("where", _WHERE)
def test_r11_holds_a_found_linked_worktree_read_by_its_head(
    tmp_path: Path, where: str, detached: bool, common: str
) -> None:
    """0cc11ba once such a git directory is found: its branch read in the store ``commondir``
    names, or its detached id read in itself — the clone at the fix is not kept."""
    phase, blob = _found_linked_worktree(tmp_path, detached, common)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# --- R12: b3348a2's earliest bases leave out the task exempt from the hidden store -------------


def _vendored_upstream_past_the_cap(tmp_path: Path, kind: str, cap: bool) -> tuple[Path, str]:
    """(the phase, the fix's blob): the task's checkout ``phase/repo`` at its base holding in its
    work tree a clone of upstream past the fix — ``checkout``: with a work tree,
    ``vendor/upstream`` at fix2; ``bare``: ``vendor/upstream.git`` —, a full clone at the fix
    ``phase/cache`` beside it, and (``cap``) thirty empty repositories pushing the vendored
    clone past ``MAX_PRUNED`` (hidden)."""
    up, _, _, fix, _ = _big_task(tmp_path)
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "repo"
    _checkout(tmp_path, up, t)
    (t / ".git/info/exclude").write_text("vendor/\n")
    (t / "vendor").mkdir()
    if kind == "checkout":
        _git(
            tmp_path, "clone", "-q", "--no-local", "-b", "wip", str(up), str(t / "vendor/upstream")
        )
    else:
        m = t / "vendor/upstream.git"
        _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(up), str(m))
        _git(m, "symbolic-ref", "HEAD", "refs/heads/wip")
    _full_clone_at(tmp_path, up, phase / "cache", fix)
    for i in range(git_guard.MAX_PRUNED - 2 if cap else 0):
        _git(phase, "init", "-q", f"j{i:02d}")
    return phase, _blob(up, fix)


def test_r12_a_vendored_checkout_past_the_cap_leaves_the_task_base_out(tmp_path: Path) -> None:
    phase, blob = _vendored_upstream_past_the_cap(tmp_path, "checkout", cap=True)
    sources, snap = _box(tmp_path, [phase])
    assert _holds(sources, blob) == [], snap["hidden"]


@pytest.mark.parametrize(
    ("kind", "cap"),
    [("checkout", False), ("bare", False), ("bare", True)],
    ids=["checkout", "bare", "bare-past-the-cap"],
)
def test_r12_holds_the_vendored_clone_pruned_or_bare(tmp_path: Path, kind: str, cap: bool) -> None:
    """Within the cap the vendored clone is pruned at the task's base (its future prunes the
    clone at the fix); bare, past the cap, the task's base is among the earliest."""
    phase, blob = _vendored_upstream_past_the_cap(tmp_path, kind, cap)
    sources, snap = _box(tmp_path, [phase])
    assert _holds(sources, blob) == [], snap["hidden"]


# --- R13: ad9c89a's stand-in tips of a shallow task checkout --------------------------------


def _task_commit_checkout(tmp_path: Path, shallow: bool) -> tuple[Path, str]:
    """(the phase, the fix's blob): the task's checkout ``phase/t`` at a commit of its own (a
    test file) on top of upstream's base — a ``--depth 1`` clone of it (as CI clones) where
    ``shallow`` —, a bare mirror of upstream past the fix ``mirror.git`` (it holds no commit of
    the task's own) and a full clone at the fix ``zcache``."""
    up, _, _, fix, _ = _big_task(tmp_path)
    full = tmp_path / "tfull"
    _checkout(tmp_path, up, full)
    (full / "tolls/test_toll.py").write_text("def test_toll():\n    assert True\n")
    _git(full, "add", "-A")
    _git(full, "commit", "-qm", "task: a test")
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    if shallow:
        _git(tmp_path, "clone", "-q", "--depth", "1", full.as_uri(), str(t))
    else:
        _git(tmp_path, "clone", "-q", "--no-local", str(full), str(t))
    m = phase / "mirror.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(up), str(m))
    _git(m, "symbolic-ref", "HEAD", "refs/heads/wip")
    _full_clone_at(tmp_path, up, phase / "zcache", fix)
    return phase, _blob(up, fix)


@pytest.mark.parametrize("where", _WHERE)
def test_r13_a_shallow_task_commit_leaves_no_stand_in_base(tmp_path: Path, where: str) -> None:
    phase, blob = _task_commit_checkout(tmp_path, shallow=True)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize("where", _WHERE)
def test_r13_holds_the_task_commit_checkout_not_shallow(tmp_path: Path, where: str) -> None:
    """ad9c89a's own case: the task's commit's parent, held by the mirror, stands for its base."""
    phase, blob = _task_commit_checkout(tmp_path, shallow=False)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# --- holds ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "how", ["equal-heads", "grafts", "replace", "garbage-head", "head-link", "dotgit-link"]
)
@pytest.mark.parametrize("where", _WHERE)
def test_holds_beside_the_task_a_mirror_past_the_fix_and_a_clone_at_it(
    tmp_path: Path, where: str, how: str
) -> None:
    """The mirror past the fix and a full clone at the fix beside the task, and: a second
    checkout at the task's very base; the clone's ``info/grafts`` or a replace reference making
    the fix a root; a checkout of the task whose HEAD is garbage (hidden, its every object
    future), whose HEAD is a link, or whose ``.git`` is a link to a store outside the phase.
    No copy keeps the fix."""
    phase, up, _, _, fix, blob = _phase(tmp_path)
    c = phase / "zcache"
    _full_clone_at(tmp_path, up, c, fix)
    if how == "equal-heads":
        _checkout(tmp_path, up, phase / "t2")
    elif how == "grafts":
        (c / ".git/info/grafts").write_text(f"{fix}\n")
        assert _git(c, "rev-list", "--count", "HEAD") == "1"
    elif how == "replace":
        orphan = _git(c, "commit-tree", "-m", "root", f"{fix}^{{tree}}")
        _git(c, "replace", fix, orphan)
        assert _git(c, "rev-list", "--count", "HEAD") == "1"
    elif how == "garbage-head":
        _checkout(tmp_path, up, phase / "u")
        (phase / "u/.git/HEAD").write_text("garbage\n")
    elif how == "head-link":
        u = phase / "u"
        _checkout(tmp_path, up, u)
        (u / ".git/HEAD").rename(u / ".git/HEAD.real")
        (u / ".git/HEAD").symlink_to("HEAD.real")
    else:
        u = phase / "u"
        _checkout(tmp_path, up, u)
        (u / ".git").rename(tmp_path / "outside.git")
        (u / ".git").symlink_to(tmp_path / "outside.git")
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize("where", _WHERE)
def test_holds_the_tasks_checkout_shallow_beside_a_full_clone_at_the_fix(
    tmp_path: Path, where: str
) -> None:
    """R1 the other way round: the task's checkout a ``--depth 1`` clone of its base (as CI
    clones), the clone at the fix full (it reaches the task's base) and the mirror past it —
    the mirror pruned at the task's base, its future prunes the clone."""
    phase, up, _, _, fix, blob = _phase(tmp_path)
    shutil.rmtree(phase / "t")
    _git(tmp_path, "clone", "-q", "--depth", "1", "-b", "main", up.as_uri(), str(phase / "t"))
    _full_clone_at(tmp_path, up, phase / "zcache", fix)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize("where", _WHERE)
def test_holds_a_shallow_mirror_at_the_tip(tmp_path: Path, where: str) -> None:
    """A bare ``--depth 1`` mirror of the tip past the fix (no commit of the task's, most of its
    blobs) beside the task and a full clone at the fix: pruned at the task's base."""
    phase, up, _, _, fix, blob = _phase(tmp_path, mirror=False)
    m = phase / "mirror.git"
    _git(tmp_path, "clone", "-q", "--bare", "--depth", "1", "-b", "wip", up.as_uri(), str(m))
    _full_clone_at(tmp_path, up, phase / "zcache", fix)
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


@pytest.mark.parametrize("where", _WHERE)
def test_holds_3a9bfb1_a_shallow_clone_beside_an_unlistable_mirror(
    tmp_path: Path, where: str
) -> None:
    """3a9bfb1's rule (an unpruned store's HEAD no copy holds): R1's shallow clone of the fix
    beside the task and the mirror made unlistable (a FIFO) — the clone's boundary names the
    task's base, so it is pruned there."""
    phase, up, _, _, _, blob = _phase(tmp_path)
    _fifo_info_packs(tmp_path, phase / "mirror.git")
    _git(
        tmp_path, "clone", "-q", "--depth", "1", "--branch", "fixtag", up.as_uri(), str(phase / "z")
    )
    held, why = _leaking(tmp_path, phase, blob, where)
    assert held == [], why


# --- over-pruning -----------------------------------------------------------------------------


def test_p1_an_honest_mirror_at_the_base_beside_an_older_clone_prunes_the_task_there(
    tmp_path: Path,
) -> None:
    """P1 (a cost): the task's checkout, a bare mirror at its very base and an older clone of
    the same repository — mirror, task and clone all pruned at the older base."""
    up, older, base, _, _ = _big_task(tmp_path)
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    _checkout(tmp_path, up, t)
    m = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(up), str(m))
    _checkout(tmp_path, up, phase / "old")
    _git(phase / "old", "reset", "-q", "--hard", older)
    sources, snap = _box(tmp_path, [phase])
    assert snap["hidden"] == [], snap
    assert {_head(t, s) for s in sources.values()} == {older} != {base}
    assert set(sources) == {t / ".git", m, phase / "old/.git"}


def test_p2_an_honest_mirror_beside_an_orphan_export_is_hidden(tmp_path: Path) -> None:
    """P2 (a cost, R2's mechanism): the task's checkout, a bare mirror at its base and an
    orphan export of its files (a ``dist`` repository of its own) — the mirror is hidden."""
    up, _, base, _, _ = _big_task(tmp_path)
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    _checkout(tmp_path, up, t)
    m = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(up), str(m))
    _snapshot(t, phase / "dist")
    sources, snap = _box(tmp_path, [phase])
    assert m not in sources
    assert any(h.startswith(str(m)) and "reach one another" in h for h in snap["hidden"]), snap
    assert _head(t, sources[t / ".git"]) == base


@pytest.mark.parametrize("where", _WHERE)
def test_p3_an_honest_mirror_beside_a_feature_branch_checkout_is_hidden(
    tmp_path: Path, where: str
) -> None:
    """P3 (a cost): the task's checkout at its base, a checkout of a feature branch of the same
    repository (off the base's parent: the two diverged) and a bare mirror of it at the task's
    very base — the mirror is hidden (no base reached by all), and the feature checkout with it
    (it holds the hidden mirror's future); the task keeps its base."""
    up, older, base, _, _ = _big_task(tmp_path)
    _git(up, "checkout", "-qb", "dev", older)
    (up / "tolls/lanes.py").write_text("# lanes\nCOUNT = 4\n")
    _git(up, "commit", "-qam", "lanes: four")
    _git(up, "checkout", "-q", "main")
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    _checkout(tmp_path, up, t)
    dev = phase / "dev"
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "dev", str(up), str(dev))
    m = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(up), str(m))
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert set(sources) == {t / ".git"}, snap
        assert any(h.startswith(str(m)) and "reach one another" in h for h in snap["hidden"])
        assert _head(t, sources[t / ".git"]) == base
    else:
        dst, refused = _judge(tmp_path, phase)
        assert {r.split("/", 1)[0].split(":", 1)[0] for r in refused} == {"task.git", "dev"}
        assert _head(t, dst / "t/.git") == base
