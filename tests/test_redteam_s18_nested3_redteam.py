"""Third red team (session 18) of nested-store pruning (issue 29), after 64c627b ("a store
holding any object of the task's future is related whatever its commits or blob share say,
every store checked against every checkout"). Attacked through the public entry points only: a
phase's box (:func:`evotree.harness.git_guard.before_phase`, and the real bubblewrap box), the
judge's copy (:func:`evotree.harness.sandbox_copy.copy_regular_files`), the replay's fourth world
(:func:`evotree.harness.git_prune.prune_nested` with ``task=``) and the replay itself. Real git
repositories in temporary folders, no mocks. A win: a copy the phase (or the judge, or the
fourth world) gets keeps the fix's blob, or git there prints the fix's line.

Wins (strict xfails; N2 and N3 closed by 067f772, their tests plain now: with no checkout
left, the stores beside none are tried against one another both ways,
``git_prune.relate_checkouts``, and the mirror holding the task's future is pruned at its base;
N5 closed since: the future set adds the objects the future's commits and trees name that the
task's store lacks, ``rev-list --objects --missing=print``, ``git_relations._named_missing``;
N1 closed since: once every store is pruned, every store's copy is tried against every
checkout's future, a checkout nested in a store's work tree too, ``git_relations.cross_checked``
— a ``.git`` folder an earlier phase makes above the checkout (``git init`` there) the same;
N4 closed since: a store whose object format is not that of the repository it is tried against
is not relatable, ``git_relations._same_format`` — hidden in the box, refused in the judge's
copy, emptied in the fourth world):

- **N1** a ``.git`` *file* in the phase's folder, above the task's checkout (``gitdir:
  t.git`` naming B3's sibling mirror at the fix, or ``gitdir: empty.git`` naming an empty store
  the candidate made): an earlier phase can write it, the search leaves ``.git`` files alone,
  and ``relations`` then takes the task's checkout for a store *nested* in that store's work
  tree — no checkout is left for the sibling mirror to be tried against (or the mirror itself
  is the "enclosing" repository): pruned at its own HEAD, the fix. Box and judge alike.
- **N2** the task's work tree emptied by an earlier phase (only ``t/.git`` left: git restores it
  from the pruned copy in the next phase): ``_no_work_tree`` makes the task's own ``.git`` a
  sibling, no checkout is left, and B3's sibling mirror is pruned at its own HEAD. Box, judge.
- **N3** a task whose ``.git`` is a file (``--separate-git-dir``, an absorbed submodule's
  layout: ``stores/t.git`` named by ``t/.git``) is no checkout for ``relations``: its store holds
  no found store, lies in no work tree and is not named ``.git``, so it is a sibling; a bare
  mirror at the fix beside it (``cache/tolls.git``) is tried against no checkout: its own HEAD.
  No candidate action needed. Box, judge.
- **N4** an object-format conversion: a sha256 store of the task's whole history
  (``fast-export | fast-import``), HEAD the fix, vendored in the task's work tree. No object id
  can be shared with a sha1 task store (no commit, no future object, no blob of the share), so
  it is "unrelated", kept at its own HEAD: the fix in the box, in the judge's copy, in the fourth
  world, and a read of it as a history passes the replay (recorded output is flagged).
- **N5** a blob-less partial clone (``--filter=blob:none``, as CI clones): the task's store holds
  the future's commits and trees but never its blobs, so the future set has no blob and R1's
  padded store (the fix's file among files of its own) is "unrelated" again: box, judge, fourth
  world. (The future trees name the missing blob ids; ``rev-list --missing=print`` lists them.)

Holds (plain tests):

- the future-set cache: after the task's store gains new future objects (a fetch, loose or as a
  pack), the next phase's box relates a padded store of the new fix (no stale, smaller set);
- the deadline, at whatever point it falls (0.2-4 s over six nested mirrors at the fix): no
  bound copy, judge's copy or fourth-world store holds the fix — hidden, refused or emptied;
- a padded store holding the fix's blob only as a delta in a pack: listed, related;
- a sibling mirror at the fix reached through a symbolic link from the task's work tree: the
  link is not followed, the mirror found beside the checkout and pruned at the base;
- N1's ``.git`` file above a checkout whose mirror at the fix is *in* its work tree: the
  mirror is tried against every repository holding it, the task's included: pruned at the base;
- a pack of the fix with no ``.idx`` in an unrelated nested store: git reads none of it, and no
  file of it reaches the box's copy or the judge's;
- the index's base: a sha256 module store of the fix's tree (N4's R5 form) is not taken for a
  base, the fix's line indexed;
- N1's fix spares an honest layout: a task holding a clone of itself at an older commit (its
  store holding the task's base) keeps its base, the clone its older commit, nothing hidden;
- controls: N1/N2's layout without the ``.git`` file or the emptying, N3's with a ``.git``
  folder, N5's with a full clone — each pruned at the base.

Not attacked here (already covered): more stores than ``MAX_NESTED`` in the fourth world, a
linked worktree's ``commondir``, alternates (s17 red teams). Time of check vs use: a phase's
processes end with its box (``--unshare-all``, ``--die-with-parent``) and write only into copies
removed after it, so nothing writes a store between the check and the bind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from evotree.harness import git_guard, sandbox, sandbox_copy
from evotree.harness.audit.future_content import build_index
from evotree.harness.audit.trace import read_trace_rows, write_trace
from evotree.harness.git_prune import prune_copy, prune_nested
from evotree.harness.sandbox import wrap
from evotree.harness.sandbox_copy import copy_regular_files
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec
from tests.test_git_guard_nested import _ENV, FUTURE, _box, _forget, _git, _has, _task
from tests.test_redteam_s17_box_nested_redteam import _blob, _holds, _stores
from tests.test_redteam_s17_nested2_redteam import (
    _PADDED,
    FIX_TEXT,
    _bare_of,
    _judge,
    _judge_holds,
    _replay_caught,
    _replay_task,
    needs_bwrap,
)

pytestmark = pytest.mark.heavy  # real repositories pruned in two or three places a test


def _shows_future(store: Path) -> bool:
    """Whether git on ``store`` (either object format) prints the fix's line from any history it
    keeps."""
    proc = subprocess.run(
        ["git", "--git-dir", str(store), "log", "-p", "--all"],
        capture_output=True,
        text=True,
        env={**os.environ, **_ENV},
    )
    return FUTURE in proc.stdout


def _fourth_world(tmp_path: Path, root: Path, base: str) -> str:
    """``prune_nested`` over ``root`` as the replay calls it (``task=`` the task's store)."""
    top = prune_copy(root / ".git", tmp_path / "top").path
    return prune_nested(root, top, base, tmp_path / "scratch", task=root / ".git")


def _leaks(tmp_path: Path, where: str, phase: Path, blob: str) -> bool:
    """Whether the box over ``phase`` or the judge's copy of it keeps ``blob`` in a store."""
    if where == "box":
        sources, _ = _box(tmp_path, [phase])
        return bool(_holds(sources, blob))
    dst, _ = _judge(tmp_path, phase)
    return bool(_judge_holds(dst, blob))


def _in_box_prints_fix(tmp_path: Path, phase: Path, root: Path, store: Path) -> bool:
    """git in the real bubblewrap box (``phase`` read-write, ``root`` its folder) prints the
    fix's line from ``store`` and the sealed trace holds no ``git_state`` finding."""
    script = f"git --git-dir {store} log -p --all"
    trace = tmp_path / "raw.trace"
    spec = SandboxSpec(cwd=root, read_write=(phase,), trace=trace)
    proc = subprocess.run(
        accounted(wrap(spec, ["bash", "-c", script])),
        env=sandbox_env({**os.environ, **_ENV}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    repos = git_guard.task_repositories(trace)
    sealed = tmp_path / "exec_trace.jsonl"
    write_trace(trace, sealed, str(root), extra=git_guard.after_phase(trace), task_repos=repos)
    rows = read_trace_rows(sealed.read_text())
    assert any(r.get("kind") == "exec" for r in rows)  # the trace is there
    flagged = [r for r in rows if r.get("kind") == "git_state"]
    return FUTURE in proc.stdout and not flagged


# --- N1, N2: the task's checkout reclassified by what an earlier phase leaves -----------------


def _sibling_mirror(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """B3's layout: (the phase's folder, the checkout ``t``, ``t.git`` a bare mirror of the task
    whose HEAD is the fix beside it, the fix's blob)."""
    phase = tmp_path / "phase"
    root, _, fix = _task(phase / "t")
    mirror = phase / "t.git"
    _git(tmp_path, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    blob = _blob(root, fix)
    _forget(root)
    return phase, root, mirror, blob


def _dot_git_file(phase: Path, names: str) -> None:
    """N1: what an earlier phase writes in its folder: a ``.git`` file naming the sibling
    mirror, or an empty store of its own (``init``: a ``.git`` folder, an empty repository
    whose work tree is the phase's folder)."""
    if names == "init":
        _git(phase, "init", "-q", ".")
        return
    if names == "empty":
        _git(phase, "init", "-q", "--bare", "empty.git")
    (phase / ".git").write_text(f"gitdir: {names}.git\n".replace("mirror.git", "t.git"))


def _emptied(root: Path) -> None:
    """N2: the task's work tree emptied, only its ``.git`` left."""
    for entry in os.listdir(root):
        if entry != ".git":
            shutil.rmtree(root / entry)
    assert os.listdir(root) == [".git"]


@pytest.mark.parametrize("where", ["box", "judge"])
@pytest.mark.parametrize("names", ["mirror", "empty", "init"])
def test_n1_a_dot_git_file_above_the_checkout(tmp_path: Path, where: str, names: str) -> None:
    """Closed: once every store is pruned, every store's copy is tried against every
    checkout's future, nested checkouts too (``git_relations.cross_checked``): the sibling
    mirror is pruned at the task's base (the box binds it so, nothing hidden)."""
    phase, root, mirror, blob = _sibling_mirror(tmp_path)
    _dot_git_file(phase, names)
    assert not _leaks(tmp_path, where, phase, blob)
    if where == "box":
        (tmp_path / "again").mkdir()
        sources, snap = _box(tmp_path / "again", [phase])
        assert _git(root, "--git-dir", str(sources[mirror]), "rev-parse", "HEAD") == _git(
            root, "rev-parse", "HEAD"
        )
        assert snap["hidden"] == []


@pytest.mark.parametrize("where", ["box", "judge"])
def test_n2_an_emptied_work_tree(tmp_path: Path, where: str) -> None:
    phase, root, _, blob = _sibling_mirror(tmp_path)
    _emptied(root)
    assert not _leaks(tmp_path, where, phase, blob)


@pytest.mark.parametrize("where", ["box", "judge"])
def test_n1_n2_control_the_sibling_mirror_alone_holds(tmp_path: Path, where: str) -> None:
    """N1/N2's control: the same layout, no ``.git`` file, the work tree as it is: the sibling
    mirror is tried against the checkout, pruned at the base."""
    phase, _, _, blob = _sibling_mirror(tmp_path)
    assert not _leaks(tmp_path, where, phase, blob)


# --- N3: a task whose .git is a file ----------------------------------------------------------


def _separate(tmp_path: Path, separate: bool) -> tuple[Path, Path, Path, str]:
    """(the phase's folder, the checkout ``t`` — its store ``stores/t.git`` named by a ``.git``
    file where ``separate``, else a ``.git`` folder —, a bare mirror at the fix beside it in
    ``cache/``, the fix's blob)."""
    phase = tmp_path / "phase"
    up, _, fix = _task(tmp_path / "up")
    root = phase / "t"
    args = [f"--separate-git-dir={phase / 'stores/t.git'}"] if separate else []
    (phase / "stores").mkdir(parents=True)
    _git(tmp_path, "clone", "-q", "--single-branch", *args, str(up), str(root))
    assert (root / ".git").is_file() == separate
    assert _git(root, "status", "--porcelain") == ""
    mirror = phase / "cache/tolls.git"
    _git(tmp_path, "clone", "-q", "--mirror", str(up), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    return phase, root, mirror, _blob(up, fix)


@pytest.mark.parametrize("where", ["box", "judge"])
def test_n3_a_task_whose_dot_git_is_a_file(tmp_path: Path, where: str) -> None:
    phase, _, _, blob = _separate(tmp_path, separate=True)
    assert not _leaks(tmp_path, where, phase, blob)


@pytest.mark.parametrize("where", ["box", "judge"])
def test_n3_control_a_dot_git_folder_holds(tmp_path: Path, where: str) -> None:
    phase, _, _, blob = _separate(tmp_path, separate=False)
    assert not _leaks(tmp_path, where, phase, blob)


# --- N4: an object-format conversion ----------------------------------------------------------


def _sha256_mirror(repo: Path, dest: Path) -> Path:
    """A bare sha256 store at ``dest`` holding ``repo``'s whole history (``fast-export --all``
    into ``fast-import``), its HEAD on ``wip`` (the fix)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    _git(dest.parent, "init", "-q", "--bare", "--object-format=sha256", str(dest))
    env = {**os.environ, **_ENV}
    export = subprocess.run(
        ["git", "-C", str(repo), "fast-export", "--all"], capture_output=True, check=True, env=env
    ).stdout
    subprocess.run(
        ["git", "--git-dir", str(dest), "fast-import", "--quiet"],
        input=export,
        capture_output=True,
        check=True,
        env=env,
    )
    (dest / "HEAD").write_text("ref: refs/heads/wip\n")
    return dest


@pytest.mark.parametrize("where", ["box", "judge", "fourth world"])
def test_n4_a_sha256_conversion_at_the_fix(tmp_path: Path, where: str) -> None:
    root, base, _ = _task(tmp_path / "t")
    mirror = _sha256_mirror(root, root / "vendor/tolls.git")
    assert _shows_future(mirror)
    _forget(root)
    if where == "box":
        sources, _ = _box(tmp_path, [root])
        assert not any(_shows_future(s) for src in sources.values() for s in _stores(src))
    elif where == "judge":
        dst, _ = _judge(tmp_path, root)
        assert not any(_shows_future(s) for s in _stores(dst))
    else:
        _fourth_world(tmp_path, root, base)
        assert not _shows_future(mirror)


@needs_bwrap
@pytest.mark.parametrize("recorded", [False, True], ids=["history", "recorded"])
def test_n4_a_read_of_the_sha256_store_in_the_replay(tmp_path: Path, recorded: bool) -> None:
    repo, root = _replay_task(tmp_path)
    _sha256_mirror(root, root / "vendor/tolls.git")
    assert _replay_caught(tmp_path, repo, root, recorded)


def test_a_sha256_module_store_is_no_base_for_the_index(tmp_path: Path) -> None:
    """N4's R5 form: ``.git/modules/x`` a sha256 store of the task's history at the fix (no
    commit of the superproject pins it): not taken for a base, the fix's line indexed."""
    root, base, _ = _task(tmp_path / "t")
    _sha256_mirror(root, root / ".git/modules/x")
    _forget(root)
    assert FUTURE.strip() in build_index(root, base).lines


# --- N5: a blob-less partial clone ------------------------------------------------------------


def _clone_task(tmp_path: Path, partial: bool) -> tuple[Path, str, str]:
    """(the task's checkout at its base, cloned from an upstream holding the fix on ``wip`` —
    blob-less where ``partial``, the fix then a commit no reference names —, the base, the fix's
    blob), R1's padded store of the fix's file in its work tree (``vendor/tolls.git``)."""
    up, base, fix = _task(tmp_path / "up")
    blob = _blob(up, fix)
    _git(up, "config", "uploadpack.allowFilter", "true")
    root = tmp_path / "t"
    args = ["--filter=blob:none"] if partial else []
    _git(tmp_path, "clone", "-q", "--no-local", *args, "--no-checkout", up.as_uri(), str(root))
    _git(root, "checkout", "-q", "main")
    _git(root, "update-ref", "-d", "refs/remotes/origin/wip")
    _git(root, "reflog", "expire", "--expire=now", "--all")
    (root / ".git/info/exclude").write_text("vendor/\n")
    held = _git(root, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").split()
    assert fix in held and (blob not in held) == partial
    store = _bare_of(tmp_path, root / "vendor/tolls.git", [_PADDED])
    assert _git(store, "rev-parse", "HEAD:tolls/toll.py") == blob
    return root, base, blob


@pytest.mark.parametrize("where", ["box", "judge", "fourth world"])
def test_n5_a_padded_store_beside_a_blobless_clone(tmp_path: Path, where: str) -> None:
    root, base, blob = _clone_task(tmp_path, partial=True)
    if where == "fourth world":
        _fourth_world(tmp_path, root, base)
        assert not _has(root / "vendor/tolls.git", blob)
    else:
        assert not _leaks(tmp_path, where, root, blob)


@pytest.mark.parametrize("where", ["box", "judge", "fourth world"])
def test_n5_control_a_full_clone_holds(tmp_path: Path, where: str) -> None:
    root, base, blob = _clone_task(tmp_path, partial=False)
    if where == "fourth world":
        _fourth_world(tmp_path, root, base)
        assert not _has(root / "vendor/tolls.git", blob)
    else:
        assert not _leaks(tmp_path, where, root, blob)


# --- the wins in the real bubblewrap box ------------------------------------------------------


def _box_n1(tmp_path: Path) -> tuple[Path, Path, Path]:
    phase, root, mirror, _ = _sibling_mirror(tmp_path)
    _dot_git_file(phase, "empty")
    return phase, root, mirror


def _box_n2(tmp_path: Path) -> tuple[Path, Path, Path]:
    phase, root, mirror, _ = _sibling_mirror(tmp_path)
    _emptied(root)
    return phase, root, mirror


def _box_n3(tmp_path: Path) -> tuple[Path, Path, Path]:
    phase, root, mirror, _ = _separate(tmp_path, separate=True)
    return phase, root, mirror


def _box_n4(tmp_path: Path) -> tuple[Path, Path, Path]:
    root, _, _ = _task(tmp_path / "t")
    mirror = _sha256_mirror(root, root / "vendor/tolls.git")
    _forget(root)
    return root, root, mirror


def _box_n5(tmp_path: Path) -> tuple[Path, Path, Path]:
    root, _, _ = _clone_task(tmp_path, partial=True)
    return root, root, root / "vendor/tolls.git"


_IN_BOX = {"N1": _box_n1, "N2": _box_n2, "N3": _box_n3, "N4": _box_n4, "N5": _box_n5}
#: The wins still open in the real bubblewrap box (remove one here once it is closed).
_OPEN: set[str] = set()


@pytest.mark.parametrize(
    "win",
    [
        pytest.param(
            w,
            marks=pytest.mark.xfail(
                strict=True,
                reason=f"{w} in the real bubblewrap box: git on the leaking store prints the "
                "fix's line and the sealed trace holds no git_state finding",
            ),
        )
        if w in _OPEN
        else w
        for w in sorted(_IN_BOX)
    ],
)
def test_in_the_box_git_prints_the_fix(tmp_path: Path, win: str) -> None:
    if not sandbox.check_sandbox().ok:
        pytest.skip("needs bubblewrap")
    phase, root, store = _IN_BOX[win](tmp_path)
    assert not _in_box_prints_fix(tmp_path, phase, root, store)


# --- holds --------------------------------------------------------------------------------------

FIX2_TEXT = "def toll(rate):\n    return rate * 0.25  # the dawn discount\n"


@pytest.mark.parametrize("how", ["loose", "pack"])
def test_the_future_set_follows_the_task_store_gaining_objects(tmp_path: Path, how: str) -> None:
    """The future-set cache keyed by the task store's object folders and packs: the task's store
    first lacks a second fix (``fix2``), a padded store of ``fix2``'s file beside the fix is
    unrelated in a first phase (the future set cached); ``fix2`` then fetched into the task's
    store (loose objects, or a pack), no reference to it: the next phase relates the padded
    store and binds nothing of ``fix2``."""
    root, _, fix = _task(tmp_path / "t")
    _git(root, "checkout", "-q", "-b", "wip2", "wip")
    (root / "tolls/toll.py").write_text(FIX2_TEXT)
    _git(root, "commit", "-qam", "tolls: the dawn discount")
    blob2 = _blob(root, "wip2")
    _git(root, "checkout", "-q", "main")
    side = tmp_path / "side.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(root), str(side))
    _git(root, "branch", "-D", "wip2")
    _git(root, "reflog", "expire", "--expire=now", "--all")
    _git(root, "gc", "-q", "--prune=now")
    assert not _has(root / ".git", blob2) and _has(root / ".git", fix)
    _forget(root)
    _bare_of(tmp_path, root / "vendor/tolls.git", [{**_PADDED, "tolls/toll.py": FIX2_TEXT}])
    (tmp_path / "one").mkdir()
    sources, _ = _box(tmp_path / "one", [root])
    assert _holds(sources, blob2)  # not yet the task's future: unrelated (B1's limit)
    limit = "1000" if how == "loose" else "1"
    _git(root, "-c", f"fetch.unpackLimit={limit}", "fetch", "-q", str(side), "wip2")
    os.unlink(root / ".git/FETCH_HEAD")
    assert _has(root / ".git", blob2)
    (tmp_path / "two").mkdir()
    sources, _ = _box(tmp_path / "two", [root])
    assert _holds(sources, blob2) == []


@pytest.mark.parametrize("where", ["box", "judge", "fourth world"])
def test_the_deadline_wherever_it_falls_binds_no_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Six nested mirrors at the fix, pruned with 0.2 to 4 s in all: wherever the deadline falls
    (before a store, in its own copy, in the future set's listing, in the relation), no copy
    bound, copied or left in the fourth world holds the fix — hidden, refused or emptied."""
    root, base, fix = _task(tmp_path / "pristine")
    blob = _blob(root, fix)
    for i in range(6):
        mirror = root / f"vendor/m{i}.git"
        _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
        (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    for k, seconds in enumerate([0.2, 0.5, 1.0, 2.0, 4.0]):
        work = tmp_path / f"run{k}"
        here = work / "t"
        shutil.copytree(root, here, symlinks=True)
        if where == "box":
            monkeypatch.setattr(git_guard, "PRUNE_SECONDS", seconds)
            sources, _ = _box(work, [here])
            assert _holds(sources, blob) == [] and _holds(sources, fix) == []
        elif where == "judge":
            monkeypatch.setattr(sandbox_copy, "PRUNE_SECONDS", seconds)
            dst = work / "judge"
            dst.mkdir()
            copy_regular_files(here, dst, max_files=10_000, max_bytes=1 << 30)
            assert _judge_holds(dst, blob) == [] and _judge_holds(dst, fix) == []
        else:
            top = prune_copy(here / ".git", work / "top").path
            deadline = time.monotonic() + seconds
            prune_nested(here, top, base, work / "scratch", task=here / ".git", deadline=deadline)
            stores = _stores(here / "vendor")
            assert not any(_has(s, blob) or _has(s, fix) for s in stores)


def test_a_fix_blob_held_as_a_delta_is_related(tmp_path: Path) -> None:
    """R1's padded store whose pack holds the fix's blob only as a delta against a larger file
    of its own: the copy lists it (any object of any pack), the store is related, pruned at the
    base; the task's store repacked so too."""
    root, _, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    bigger = FIX_TEXT + "".join(f"# zone {i}: the night discount applies\n" for i in range(40))
    store = _bare_of(
        tmp_path, root / "vendor/tolls.git", [{**_PADDED, "tolls/toll_zones.py": bigger}]
    )
    _git(store, "repack", "-q", "-a", "-d", "-f", "--window=50", "--depth=50")
    _git(root, "repack", "-q", "-a", "-d", "-f", "--window=50", "--depth=50")
    pack = next((store / "objects/pack").glob("*.idx"))
    rows = _git(store, "verify-pack", "-v", str(pack)).splitlines()
    row = next(r.split() for r in rows if r.startswith(blob))
    assert len(row) == 7, row  # "<id> blob <size> <packed> <offset> <depth> <base>": a delta
    _forget(root)
    sources, _ = _box(tmp_path, [root])
    assert _holds(sources, blob) == []
    dst, _ = _judge(tmp_path, root)
    assert _judge_holds(dst, blob) == []


def test_a_sibling_mirror_reached_through_a_link_holds(tmp_path: Path) -> None:
    """``t/vendor/tolls.git`` a symbolic link to B3's sibling mirror at the fix: the link is not
    followed, the mirror is found beside the checkout and pruned at the base (box); the judge's
    copy refuses the link and prunes the mirror at the base."""
    phase, root, mirror, blob = _sibling_mirror(tmp_path)
    (root / "vendor").mkdir()
    os.symlink("../../t.git", root / "vendor/tolls.git")
    assert _git(root, "--git-dir", "vendor/tolls.git", "rev-parse", "HEAD:tolls/toll.py") == blob
    sources, _ = _box(tmp_path, [phase])
    assert mirror in sources and _holds(sources, blob) == []
    dst, refused = _judge(tmp_path, phase)
    assert _judge_holds(dst, blob) == []
    assert any(r.startswith("t/vendor/tolls.git: symbolic link") for r in refused), refused


def test_a_dot_git_file_above_a_checkout_with_a_nested_mirror_holds(tmp_path: Path) -> None:
    """N1's file over a mirror at the fix *in* the task's work tree (``t/vendor/tolls.git``):
    the mirror is tried against every repository whose work tree holds it, the task's
    included (nearest first), so it is pruned at the base all the same (box and judge)."""
    phase = tmp_path / "phase"
    root, base, fix = _task(phase / "t")
    blob = _blob(root, fix)
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    _dot_git_file(phase, "empty")
    sources, _ = _box(tmp_path, [phase])
    assert _holds(sources, blob) == []
    assert _git(root, "--git-dir", str(sources[mirror]), "rev-parse", "HEAD") == base
    dst, _ = _judge(tmp_path, phase)
    assert _judge_holds(dst, blob) == []


def test_a_pack_of_the_fix_with_no_index_in_a_nested_store_holds(tmp_path: Path) -> None:
    """An unrelated vendored store (a history of its own) holding, in ``objects/pack``, a pack of
    the fix with no ``.idx`` (git reads no object of it; ``index-pack`` would make one): the
    copy bound over it (and the judge's copy) keeps only what its HEAD reaches, no file of the
    pack, so nothing of the fix is there to index."""
    root, _, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    store = _bare_of(tmp_path, root / "vendor/lib.git", [{"lib.py": "def helper(): pass\n"}])
    raw = subprocess.run(
        ["git", "-C", str(root), "pack-objects", "--stdout", "--revs"],
        input=f"{fix}\n^{fix}~1\n".encode(),
        capture_output=True,
        check=True,
    ).stdout
    (store / "objects/pack/pack-fix.pack").write_bytes(raw)
    assert not _has(store, blob)  # no index: git reads none of it
    _forget(root)
    sources, _ = _box(tmp_path, [root])
    assert _holds(sources, blob) == []
    copy = sources[store]
    assert not any(raw[12:200] in p.read_bytes() for p in copy.rglob("*") if p.is_file())
    dst, _ = _judge(tmp_path, root)
    assert _judge_holds(dst, blob) == []
    assert not (dst / "vendor/lib.git/objects/pack/pack-fix.pack").exists()


def test_a_task_holding_a_clone_of_itself_at_an_older_commit_keeps_its_base(
    tmp_path: Path,
) -> None:
    """N1's fix tries every store's copy against every checkout's future, nested ones too, but
    never a ``.git`` folder against a store in its own work tree: a fixture clone of the task
    checked out at an older commit (its store holding the task's base and the fix past it)
    leaves the task's copy at its own base, the fixture's at the older commit, nothing hidden."""
    root, older, _ = _task(tmp_path / "t")
    (root / "tolls/extra.py").write_text("X = 1\n")
    _git(root, "add", "tolls/extra.py")
    _git(root, "commit", "-qm", "tolls: extra")
    base = _git(root, "rev-parse", "HEAD")
    fixture = root / "vendor/fixture"
    _git(root, "clone", "-q", "--no-local", str(root), str(fixture))
    _git(fixture, "checkout", "-q", older)
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    assert _git(root, "--git-dir", str(sources[root / ".git"]), "rev-parse", "HEAD") == base
    assert _git(root, "--git-dir", str(sources[fixture / ".git"]), "rev-parse", "HEAD") == older
