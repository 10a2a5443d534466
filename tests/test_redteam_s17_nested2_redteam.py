"""Second red team (session 17) of nested-store pruning, after the fixes 113f787 and 7439ce3
(issues 29/30): the relation decisions of :mod:`evotree.harness.git_prune` (``relations``,
``_shares_history`` and its ``BLOB_SHARE``), used by a phase's box
(:func:`evotree.harness.git_guard.before_phase`), the judge's copy
(:func:`evotree.harness.sandbox_copy.copy_regular_files`) and the replay's fourth world
(:func:`~evotree.harness.git_prune.prune_nested` with ``task=``), and the index's judgement of
an unpinned module store (:func:`evotree.harness.audit.future_content._unpinned_base`). Real git
repositories in temporary folders, no mocks. A win: a copy the phase (or the judge, or the
fourth world) gets holds the fix's blob, or the index takes the fix's lines for the base's.

Wins (strict xfails when found; all five closed the same session by 64c627b: a store holding any
object of the task's future is related whatever its commits or blob share say; every store
checked against every checkout the phase sees; their tests plain now. Two checkouts beside
each other are checked against each other both ways since 067f772,
``tests/test_git_prune_checkouts.py``, and every store's final copy against every checkout's
future, nested checkouts too, since the s18 third red team's N1):

- **R1** padding: a bare store whose only commit (a history of its own) holds the fix's file
  beside two files of its own. One blob in three is the task's, not more than ``BLOB_SHARE``:
  "unrelated", pruned at its own HEAD — the fix's blob in the box, in the judge's copy and in
  the fourth world alike.
- **R2** only HEAD's tree is weighed: an orphan history whose first commit holds the fix's tree,
  its HEAD a second commit that deletes it (an empty tree, one file of its own, or only empty
  files: no non-empty blob at all). No commit id is shared, HEAD's tree shares no blob:
  "unrelated", and the copy at its own HEAD keeps HEAD's history, the fix's blob in it.
- **R3** a bare mirror at the fix beside the checkout but named ``.git`` (``cache/.git``, its
  folder holding nothing else): ``relations`` makes a sibling only of a store not named
  ``.git``, so it is a "checkout" related to nothing, pruned at its own HEAD (the fix).
- **R4** a mirror at the fix in the work tree of an unrelated library that lies *beside* the
  task's checkout: it has an enclosing repository (the library), so it is no sibling and is
  related to the library alone, with which it shares nothing: pruned at its own HEAD.
- **R5** (W2b again, by rewritten history) ``.git/modules/x`` a bare store of one orphan commit
  holding the fix's tree: it shares no commit with the task, so ``_unpinned_base`` takes its own
  HEAD for its base (the commit-only test; no blob share there) and ``build_index`` counts the
  fix's lines as the base's — none is indexed, and a read of a nested mirror at the fix
  (s16's W5) passes the replay, as a history or with its output recorded.

Holds (plain tests):

- an unrelated orphan HEAD with the fix on another branch of the same store (a mirror whose
  HEAD was switched to an orphan branch): the copy at its own HEAD drops the other branch —
  box, judge and fourth world;
- ``prune_nested`` with ``task=`` on an unrelated vendored repository (kept at its own HEAD):
  a branch past HEAD, the reflog, a stash and ``ORIG_HEAD`` are all dropped;
- a cycle of ``.git`` files (two mirrors at the fix, each in a folder whose ``.git`` file names
  the other): both hidden in the box, both refused in the judge's copy;
- the judge's copy whose limits are reached before its stores are pruned (in the walk, or
  exactly at its end): the mirror at the fix is not copied at all, never whole;
- ``_unpinned_base`` on a module store holding the base and, on its HEAD's branch, the fix (or
  an orphan commit of the fix's tree): judged by the base, the fix's line indexed;
- controls: a mirror in a plain folder beside the checkout (R4's) is pruned at the base; R1's
  store read with its output recorded, or unpadded, is flagged; without R5's module store the
  fix's line is indexed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evotree.harness.audit.future_content import build_index
from evotree.harness.git_prune import prune_copy, prune_nested
from evotree.harness.sandbox_copy import copy_regular_files
from tests.test_git_guard_nested import FUTURE, _box, _forget, _git, _has, _lib, _task
from tests.test_redteam_s17_box_nested_redteam import _blob, _holds, _stores

pytestmark = pytest.mark.heavy  # real repositories pruned a test, some in three places

#: the fix's file, as the task's store holds it (the same blob id wherever it is written)
FIX_TEXT = f"def toll(rate):\n{FUTURE}\n"


def _commit_trees(work: Path, trees: list[dict[str, str]]) -> str:
    """A fresh repository ``work`` whose branch ``main`` is one commit a tree of ``trees``
    (each a map path -> text, the first the root); its HEAD."""
    work.mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main")
    for tree in trees:
        _git(work, "rm", "-rqf", "--ignore-unmatch", ".")
        for rel, text in tree.items():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_text(text)
        _git(work, "add", "-A")
        _git(work, "commit", "-q", "--allow-empty", "-m", f"snapshot {len(tree)}")
    return _git(work, "rev-parse", "HEAD")


def _bare_of(tmp: Path, dest: Path, trees: list[dict[str, str]]) -> Path:
    """A bare clone at ``dest`` of a history of its own (:func:`_commit_trees`)."""
    work = tmp / f"work-{dest.name}"
    _commit_trees(work, trees)
    _git(tmp, "clone", "-q", "--bare", str(work), str(dest))
    return dest


_PADDED = {
    "tolls/toll.py": FIX_TEXT,
    "tolls/zones.py": "ZONES = ('north', 'south', 'harbour')\n",
    "README": "tolls, vendored for the zone tables\n",
}
_UNDER = {
    "empty tree": {},
    "one file of its own": {"NOTES": "moved to the zone tables project\n"},
    "only empty files": {"NOTES": "", "tolls/__init__.py": ""},
}


def _judge(tmp_path: Path, root: Path, **limits: int) -> tuple[Path, list[str]]:
    dst = tmp_path / "judge"
    dst.mkdir()
    kw = {"max_files": 10_000, "max_bytes": 1 << 30} | limits
    report = copy_regular_files(root, dst, **kw)
    return dst, report.refused


def _judge_holds(dst: Path, oid: str) -> list[Path]:
    return [s for s in _stores(dst) if _has(s, oid)]


def _fourth_world(tmp_path: Path, root: Path, base: str) -> str:
    """``prune_nested`` over ``root`` as the replay calls it (``task=`` the task's store)."""
    top = prune_copy(root / ".git", tmp_path / "top").path
    return prune_nested(root, top, base, tmp_path / "scratch", task=root / ".git")


def _all_stores(root: Path) -> list[Path]:
    return [s for s in _stores(root) if s != root / ".git"]


# --- R1: padding under the blob share ---------------------------------------------------------


def _setup_r1(tmp_path: Path) -> tuple[Path, str, str]:
    root, base, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    store = _bare_of(tmp_path, root / "vendor/tolls.git", [_PADDED])
    assert _git(store, "rev-parse", "HEAD:tolls/toll.py") == blob
    _forget(root)
    return root, base, blob


@pytest.mark.parametrize("where", ["box", "judge", "fourth world"])
def test_r1_padding_files_keep_the_fix_under_the_blob_share(tmp_path: Path, where: str) -> None:
    root, base, blob = _setup_r1(tmp_path)
    if where == "box":
        sources, _ = _box(tmp_path, [root])
        assert _holds(sources, blob) == []
    elif where == "judge":
        dst, _ = _judge(tmp_path, root)
        assert _judge_holds(dst, blob) == []
    else:
        _fourth_world(tmp_path, root, base)
        assert not any(_has(s, blob) for s in _all_stores(root))


# --- R2: only HEAD's tree is weighed ---------------------------------------------------------


@pytest.mark.parametrize("under", sorted(_UNDER))
@pytest.mark.parametrize("where", ["box", "judge", "fourth world"])
def test_r2_a_history_below_a_tiny_head_keeps_the_fix(
    tmp_path: Path, where: str, under: str
) -> None:
    root, base, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    store = _bare_of(
        tmp_path, root / "vendor/tolls.git", [{"tolls/toll.py": FIX_TEXT}, _UNDER[under]]
    )
    assert _git(store, "rev-parse", "HEAD~1:tolls/toll.py") == blob
    _forget(root)
    if where == "box":
        sources, _ = _box(tmp_path, [root])
        assert _holds(sources, blob) == []
    elif where == "judge":
        dst, _ = _judge(tmp_path, root)
        assert _judge_holds(dst, blob) == []
    else:
        _fourth_world(tmp_path, root, base)
        assert not any(_has(s, blob) for s in _all_stores(root))


# --- an orphan HEAD, the fix on another branch (hold) -----------------------------------------


@pytest.mark.parametrize("where", ["box", "judge", "fourth world"])
def test_an_orphan_head_with_the_fix_on_another_branch_holds(tmp_path: Path, where: str) -> None:
    """A mirror of the task (``wip`` the fix) whose HEAD names an orphan branch of its own:
    unrelated by HEAD, pruned at HEAD — the branch ``wip`` is not kept, nor its objects."""
    root, base, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    work = tmp_path / "orphan"
    head = _commit_trees(work, [{"lib.py": "def helper(axles):\n    return axles * 2\n"}])
    _git(work, "push", "-q", str(mirror), "main:refs/heads/own")
    (mirror / "HEAD").write_text("ref: refs/heads/own\n")
    assert _git(mirror, "rev-parse", "HEAD") == head and _has(mirror, fix)
    _forget(root)
    if where == "box":
        sources, _ = _box(tmp_path, [root])
        assert _holds(sources, blob) == [] and _holds(sources, fix) == []
        assert _git(root, "--git-dir", str(sources[mirror]), "rev-parse", "HEAD") == head
    elif where == "judge":
        dst, _ = _judge(tmp_path, root)
        assert _judge_holds(dst, blob) == [] and _judge_holds(dst, fix) == []
    else:
        assert _fourth_world(tmp_path, root, base) == ""
        assert not _has(mirror, fix) and not _has(mirror, blob)
        assert _git(mirror, "rev-parse", "HEAD") == head


# --- R3: a mirror beside the checkout named .git ---------------------------------------------


def test_r3_a_sibling_mirror_named_dot_git(tmp_path: Path) -> None:
    phase = tmp_path / "phase"
    root, _, fix = _task(phase / "t")
    blob = _blob(root, fix)
    mirror = phase / "cache/.git"
    _git(tmp_path, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    assert sorted(os.listdir(phase / "cache")) == [".git"]  # no work tree holds the fix's file
    _forget(root)
    sources, snap = _box(tmp_path, [phase])
    assert mirror in sources or any(mirror in h for h in snap["hidden"]), snap
    assert _holds(sources, blob) == []


# --- R4: a mirror in an unrelated checkout beside the task's ---------------------------------


@pytest.mark.parametrize("where", ["box", "judge"])
def test_r4_a_mirror_in_an_unrelated_checkout_beside_the_task(tmp_path: Path, where: str) -> None:
    phase = tmp_path / "phase"
    root, _, fix = _task(phase / "t")
    blob = _blob(root, fix)
    lib = phase / "lib"
    _lib(lib)
    (lib / ".git/info/exclude").write_text("vendor/\n")
    mirror = lib / "vendor/tolls.git"
    _git(lib, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    if where == "box":
        sources, _ = _box(tmp_path, [phase])
        assert _holds(sources, blob) == []
    else:
        dst, _ = _judge(tmp_path, phase)
        assert (dst / "t/.git/HEAD").is_file()
        assert _judge_holds(dst, blob) == []


def test_a_sibling_mirror_in_a_plain_folder_beside_the_task_holds(tmp_path: Path) -> None:
    """R4's control: the same mirror in a plain folder beside the checkout (``phase/vendor``):
    a sibling, related to the checkout, pruned at the base (box and judge)."""
    phase = tmp_path / "phase"
    root, base, fix = _task(phase / "t")
    blob = _blob(root, fix)
    mirror = phase / "vendor/tolls.git"
    _git(tmp_path, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    sources, _ = _box(tmp_path, [phase])
    assert _holds(sources, blob) == []
    assert _git(root, "--git-dir", str(sources[mirror]), "rev-parse", "HEAD") == base
    dst, _ = _judge(tmp_path, phase)
    assert _judge_holds(dst, blob) == []


# --- prune at own HEAD in the fourth world (hold) ---------------------------------------------


def test_an_unrelated_store_kept_at_its_own_head_drops_what_is_past_it(tmp_path: Path) -> None:
    """``prune_nested(task=)`` keeps an unrelated vendored repository at its own HEAD (W4's
    fix); a branch past HEAD, its reflog, a stash and ``ORIG_HEAD`` are dropped with it."""
    root, base, _ = _task(tmp_path / "t")
    lib = root / "vendor/lib"
    head, ahead = _lib(lib)
    (lib / "lib.py").write_text("def helper(axles):\n    return axles * 5\n")
    _git(lib, "stash", "-q")
    stash = _git(lib, "rev-parse", "refs/stash")
    (lib / ".git/ORIG_HEAD").write_text(f"{ahead}\n")
    _forget(root)
    assert _fourth_world(tmp_path, root, base) == ""
    store = lib / ".git"
    assert _git(lib, "rev-parse", "HEAD") == head
    for oid in (ahead, stash):
        assert not _has(store, oid)
    refs = _git(lib, "for-each-ref", "--format=%(refname)").split()
    assert refs == ["refs/heads/main"]
    assert not (store / "logs").exists() and not (store / "ORIG_HEAD").exists()


# --- cycles of .git files (hold) --------------------------------------------------------------


def test_a_cycle_of_dot_git_files_hides_both(tmp_path: Path) -> None:
    """``vendor/a/.git`` names ``../b/s.git``, ``vendor/b/.git`` names ``../a/s.git``, each a
    mirror at the fix: each encloses the other, so no base can be told — hidden in the box,
    refused in the judge's copy; neither is bound or copied with the fix."""
    root, _, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    for one, other in (("a", "b"), ("b", "a")):
        mirror = root / f"vendor/{one}/s.git"
        _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
        (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
        (root / f"vendor/{one}/.git").write_text(f"gitdir: ../{other}/s.git\n")
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert _holds(sources, blob) == [] and _holds(sources, fix) == []
    assert sum("name one another" in h for h in snap["hidden"]) == 2, snap["hidden"]
    dst, refused = _judge(tmp_path, root)
    assert _judge_holds(dst, blob) == []
    assert sum("name one another" in r for r in refused) == 2, refused


# --- the judge's copy: limits before the stores are pruned (hold) ----------------------------


@pytest.mark.parametrize("files", [1, 3])
def test_judge_copy_limits_reached_before_the_stores_are_pruned(tmp_path: Path, files: int) -> None:
    """A candidate folder of three files and a mirror at the fix: with the limit reached in the
    walk (one file), or exactly at its end (three: no file left for the store), the mirror is
    not copied at all — said over the limit, never copied whole."""
    root, _, fix = _task(tmp_path / "cand")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    (root / "notes.txt").write_text("the night discount is a share\n")
    (root / "tolls/__init__.py").write_text("")
    dst, refused = _judge(tmp_path, root, max_files=files)
    assert not (dst / "vendor/tolls.git").exists()
    assert _judge_holds(dst, fix) == []
    assert any("over the copy limit" in r for r in refused), refused


# --- the index's base for an unpinned module store --------------------------------------------


def test_r5_an_orphan_module_store_of_the_fix_tree_launders_its_lines(tmp_path: Path) -> None:
    root, base, fix = _task(tmp_path / "t")
    _bare_of(tmp_path, root / ".git/modules/x", [{"tolls/toll.py": FIX_TEXT}])
    _forget(root)
    index = build_index(root, base)
    assert FUTURE.strip() in index.lines


def test_r5_control_without_the_module_store_the_line_is_indexed(tmp_path: Path) -> None:
    """R5's control: the same task without ``.git/modules/x``: the fix's line is indexed."""
    root, base, _ = _task(tmp_path / "t")
    _forget(root)
    assert FUTURE.strip() in build_index(root, base).lines


def test_a_module_store_with_the_base_and_the_fix_on_its_head_holds(tmp_path: Path) -> None:
    """``.git/modules/x`` a bare clone of the task whose HEAD's branch is the fix (it holds the
    base too), and a second, ``y``, whose HEAD is an orphan commit of the fix's tree on top of a
    store that also holds the base: each judged by the task's base, the fix's line indexed."""
    root, base, fix = _task(tmp_path / "t")
    _git(root, "clone", "-q", "--bare", "-b", "wip", str(root), str(root / ".git/modules/x"))
    y = root / ".git/modules/y"
    _git(root, "clone", "-q", "--bare", "-b", "main", str(root), str(y))
    work = tmp_path / "orphan"
    _commit_trees(work, [{"tolls/toll.py": FIX_TEXT}])
    _git(work, "push", "-q", str(y), "main:refs/heads/own")
    (y / "HEAD").write_text("ref: refs/heads/own\n")
    assert _has(y, base)
    _forget(root)
    assert FUTURE.strip() in build_index(root, base).lines


# --- R1 and R5 in the replay: a read of the fix as a history ----------------------------------


def _replay_task(tmp_path: Path) -> tuple[dict[str, str | Path], Path]:
    from test_audit_replay_nested import _with_future_branch
    from test_audit_selected_lines import FIXED, _task as _replay_repo

    repo = _replay_repo(tmp_path / "t", FIXED)
    return repo, _with_future_branch(repo)


def _replay_caught(tmp_path: Path, repo: dict[str, str | Path], root: Path, recorded: bool) -> bool:
    from test_audit_replay_nested import _audit, _forget_branch
    from test_redteam_s17_nested_redteam import _caught, _step

    _forget_branch(root)
    command = "git --git-dir=vendor/tolls.git show HEAD:tolls/toll.py"
    return _caught(_audit(repo, [_step(root, command, recorded)]))


needs_bwrap = pytest.mark.skipif(
    __import__("evotree.harness.audit.replay", fromlist=["_bwrap"])._bwrap() is None,
    reason="bubblewrap is not installed",
)


@needs_bwrap
def test_r1_padded_store_read_as_a_history_is_caught(tmp_path: Path) -> None:
    from test_audit_selected_lines import FIXED

    repo, root = _replay_task(tmp_path)
    _bare_of(tmp_path, root / "vendor/tolls.git", [{**_PADDED, "tolls/toll.py": FIXED}])
    assert _replay_caught(tmp_path, repo, root, recorded=False)


@needs_bwrap
@pytest.mark.parametrize("padded", [True, False], ids=["padded, recorded", "unpadded, history"])
def test_r1_controls_recorded_or_unpadded_are_flagged(tmp_path: Path, padded: bool) -> None:
    """R1's controls: with its output recorded the output rules recognise the fix's lines
    (high); the same orphan store without the padding (its one blob the task's) is related,
    pruned at the base in the fourth world, and the read as a history is flagged."""
    from test_audit_selected_lines import FIXED

    repo, root = _replay_task(tmp_path)
    tree = {**_PADDED, "tolls/toll.py": FIXED} if padded else {"tolls/toll.py": FIXED}
    _bare_of(tmp_path, root / "vendor/tolls.git", [tree])
    assert _replay_caught(tmp_path, repo, root, recorded=padded)


@needs_bwrap
@pytest.mark.parametrize("recorded", [False, True], ids=["history", "recorded"])
def test_r5_orphan_module_store_launders_a_nested_mirror_read(
    tmp_path: Path, recorded: bool
) -> None:
    from test_audit_selected_lines import FIXED
    from test_redteam_s17_nested_redteam import _mirror_at_fix

    repo, root = _replay_task(tmp_path)
    _mirror_at_fix(root, root / "vendor/tolls.git")
    _bare_of(tmp_path, root / ".git/modules/x", [{"tolls/toll.py": FIXED}])
    assert _replay_caught(tmp_path, repo, root, recorded)
