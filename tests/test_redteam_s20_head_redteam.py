"""Sixth red team (session 20) of nested-store pruning (issue 29), of 765a023 (the HEAD rule:
an unpruned store — hidden or refused — whose future cannot be listed, or that has an
alternates/commondir pointer, is tried by its HEAD read without git, ``_own_base``: a copy
holding that commit at another base is not kept; a HEAD there but unreadable keeps no copy;
an unborn branch names nothing; stores under ``written`` roots, the shared cache, are exempt).
Attacked through the public entry points only: a phase's box
(:func:`evotree.harness.git_guard.before_phase`) and the judge's copy
(:func:`evotree.harness.sandbox_copy.copy_regular_files`). Real git repositories in temporary
folders, no mocks. A win: a store copy the phase (or the judge) gets keeps the fix's blob, or a
candidate's write in the shared cache changes another version's task.

Wins (strict xfails while open; H1 and H3 closed the same session — the HEAD rule reads a
copy's commits and the parents they name, and HEAD is read as git reads it (a loose ref's
first word of either case, a symbolic loose ref followed, two packed lines of one branch or
a name git refuses unreadable) — and H6 (a store in the shared cache decides nothing about a
copy outside it) — plain tests since):

- **H1** a shallow clone of the fix (``git clone --depth 1 --branch wip``, as CI clones) beside
  the task's store left unpruned (U3's FIFO ``objects/info/packs``, U3's config over 1 MiB, U1's
  checkout cloned with ``core.preferSymlinkRefs``, or left of M1's store cloned ``--reference``
  a mirror outside the phase that holds the fix): the clone holds the fix's commit, tree and
  blob but not the store's HEAD commit (the base lies past its shallow boundary), so
  ``_past_head`` (``head in ids``) passes it, and the store's future is unlisted (or, own-only,
  empty) — kept at its own HEAD, the fix in it. Box and judge.
- **H2** the same with an orphan snapshot of the fix's tree (a fresh repository, one commit, the
  fix's file): no commit of the task at all, only the fix's blob — kept. Box and judge.
- **H3** the unpruned task store's HEAD read as unborn or as another commit while git reads the
  base (``_own_base`` vs git's ref reading), a full clone at the fix beside it: the branch's
  loose ref (a) ``<base> trailing words`` (git takes the id and ignores what follows a space),
  (b) the base in upper case (git's hex parsing takes it; ``_is_id`` wants lower case), (c) a
  symbolic ref ``ref: refs/heads/real`` (git follows the chain) — ``_own_base`` gets no id and
  ``_head_unreadable`` sees a regular file, so "unborn", nothing done —; (d) a ``packed-refs``
  claiming ``sorted`` with the branch twice, a decoy first (``_own_base`` takes the first line,
  git's binary search the base); (e) a reftable store (git 2.45+'s layout, made by hand: HEAD
  the placeholder ``ref: refs/heads/.invalid``, ``refs/heads`` a file) — no loose ref, no
  ``packed-refs``: "unborn". (a)-(d) with the store refused (FIFO) and with left of M1's
  ``--reference`` store (its own folder empty, so its own-only future is too). Box and judge.
- **H4** the task's checkout a linked worktree (``git worktree add``) whose git directory is
  moved into the phase (``HEAD``, ``commondir`` naming the main store outside the phase, no
  ``objects`` folder): it is not found as a store at all (no hidden entry either), so no HEAD
  rule runs and the clone at the fix beside it is kept — branch and detached HEAD alike (the
  latter an id ``_own_base`` could read). Box and judge.
- **H5** ``lenient`` (the documented exemption's cost): the task's store, unlistable, in the
  shared cache (``written``) beside a clone at the fix in the workspace: not tried by its HEAD,
  its future unlisted — the clone kept. A candidate cannot put the fix there (it never sees it);
  an image or operator that fills the cache can. (A fix must keep J1/J2/J6: see H6.)
- **H6** the J principle, not through ``_past_head``: a junk bare store a candidate's prepare
  phase writes in the shared cache, holding one loose blob of the task's base tree (the same task
  in every version; ``git hash-object -w``) under a commit of its own (or under no commit), has
  that blob in its "future"; ``lenient`` covers only the HEAD rule, so the cross pass finds the
  honest task's copy holding that future and re-prunes it at the junk's commit (its HEAD an
  unrelated orphan) — or hides it where the junk has no commit — in every version's train box.
- **H7** the HEAD rule takes the unpruned store's HEAD for the task's base: an image's bare
  mirror of upstream fetched later (HEAD at upstream's tip, two past the base; FIFO-refused)
  beside the task's honest checkout at its base and a clone at the fix — the clone holds commits
  before that HEAD, not it, so it is kept (with the mirror listable it is pruned at the task's
  base: the control). Box and judge.
- **H8** (older than 765a023, found on the way) the same mirror *listable*, the clone named to
  sort before the task (``cache`` < ``t``): a bare store beside two checkouts is related to the
  first of them it shares history with (``relations``: the tops in path order; ``_relate``),
  not to the one whose base the other's reaches — the mirror is pruned at the clone's base, the
  fix, so no future past the task's base is seen and both keep the fix. Box and judge.

Holds (plain tests):

- the controls: H1's and H2's layouts with the task store listable (its future read: the
  shallow clone and the orphan hidden); H7's with the mirror listable and the clone named after
  the task;
- H1 with the task store's ``packed-refs`` a link (its HEAD's branch only packed: "unreadable",
  every copy dropped);
- the branch ``refs/heads/main`` a directory beside a packed line git reads: a loose reference
  there but not a file — unreadable, no copy kept;
- a clone at the base (a copy at the store's very HEAD is kept) carrying a stale submodule store
  at the fix in ``.git/modules/sub`` that no gitlink names: kept without it;
- a clone at the fix in the shared cache beside the unlistable task store in the workspace:
  ``lenient`` exempts the store, not the copies tried against it — the clone hidden;
- the replay's fourth world: H1's shallow clone and H2's orphan in the task's work tree are
  pruned at its base or emptied (the task's store listable there).

Over-pruning (plain tests marking it):

- **P2** an honest checkout at its base beside a stale mirror of its own repository one commit
  behind, the mirror cloned ``--reference`` a cache outside the phase (an alternates file: tried
  by its HEAD) or unlistable (a FIFO) — the checkout holds that older HEAD at another base and
  is hidden in the box, refused in the judge's copy.

Not attacked or not kept: a HEAD link to a file outside ``refs/`` (git refuses the repository);
``refs/heads`` case folding (Linux is case-sensitive); the task's store inside the clone's own
``.git`` (not found, and no copy of it reaches the box: no task store in view at all).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from evotree.harness import git_guard
from evotree.harness.git_prune import prune_copy, prune_nested
from tests.test_git_guard_nested import FUTURE, _box, _forget, _git, _has, _task
from tests.test_git_prune_checkouts import _bare_task_beside_a_clone_at_the_fix, _judge
from tests.test_redteam_s17_box_nested_redteam import _blob, _holds, _stores, _upstream_two_past
from tests.test_redteam_s19_nested4_redteam import _leaks
from tests.test_redteam_s20_unpruned_redteam import (
    _big_config,
    _fifo_info_packs,
    _packed_refs_link,
    _symlink_refs_task,
)


def _unlistable_task(tmp_path: Path, refusal: str) -> tuple[Path, Path, str, str, str]:
    """(the phase, upstream ``src``, the base, the fix, the fix's blob): the task's store in the
    phase holding the fix as objects no local branch names, made unlistable by ``refusal``
    (``listable``: left as it is, the control). ``symlink-refs``: U1's checkout ``phase/t``;
    else the bare ``phase/task.git``. Nothing beside it."""
    if refusal == "symlink-refs":
        phase, t, blob = _symlink_refs_task(tmp_path, clone_at_the_fix=False)
        src = tmp_path / "src"
        return phase, src, _git(t, "rev-parse", "HEAD"), _git(src, "rev-parse", "wip"), blob
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    phase.mkdir()
    bare = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(bare))
    _git(bare, "branch", "-D", "wip")
    assert _has(bare, fix) and _git(bare, "rev-parse", "HEAD") == base
    if refusal == "reference":  # left of M1: cloned --reference a mirror outside holding the fix
        shutil.rmtree(bare)
        ref = tmp_path / "ref.git"
        _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(ref))
        _git(tmp_path, "clone", "-q", "--bare", "--reference", str(ref), src.as_uri(), str(bare))
        _git(bare, "branch", "-D", "wip")
        assert (bare / "objects/info/alternates").exists() and _has(bare, fix)
    elif refusal != "listable":
        {
            "fifo-info-packs": _fifo_info_packs,
            "config-over-1MiB": _big_config,
            "packed-refs-link": _packed_refs_link,
        }[refusal](tmp_path, bare)
    return phase, src, base, fix, blob


def _shallow_clone_of_the_fix(tmp_path: Path, phase: Path, src: Path, base: str, fix: str) -> None:
    shallow = phase / "shallow"
    _git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "wip", src.as_uri(), str(shallow))
    assert _has(shallow / ".git", fix) and not _has(shallow / ".git", base)


def _orphan_with_the_fix_tree(phase: Path, blob: str) -> None:
    orphan = phase / "snap"
    (orphan / "tolls").mkdir(parents=True)
    (orphan / "tolls/toll.py").write_text(f"def toll(rate):\n{FUTURE}\n")
    _git(orphan, "init", "-q", "-b", "main")
    _git(orphan, "add", "-A")
    _git(orphan, "commit", "-qm", "a snapshot")
    assert _git(orphan, "rev-parse", "HEAD:tolls/toll.py") == blob


def _clone_at_the_fix(tmp_path: Path, phase: Path, src: Path) -> None:
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(src), str(cache))
    _git(cache, "checkout", "-q", "wip")


_UNLISTABLE = ["fifo-info-packs", "config-over-1MiB", "symlink-refs", "reference"]
_WHERE = ["box", "judge"]

# --- H1: a shallow clone of the fix -------------------------------------------------------------


@pytest.mark.parametrize("refusal", _UNLISTABLE)
@pytest.mark.parametrize("where", _WHERE)
def test_h1_a_shallow_clone_of_the_fix_beside_an_unlistable_task_store(
    tmp_path: Path, where: str, refusal: str
) -> None:
    phase, src, base, fix, blob = _unlistable_task(tmp_path, refusal)
    _shallow_clone_of_the_fix(tmp_path, phase, src, base, fix)
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("refusal", ["listable", "packed-refs-link"])
@pytest.mark.parametrize("where", _WHERE)
def test_h1_holds_where_the_store_is_listable_or_its_head_unreadable(
    tmp_path: Path, where: str, refusal: str
) -> None:
    """The control (its future read: the shallow clone holds it) and a HEAD whose branch lies
    only in a linked ``packed-refs`` (unreadable: no copy kept)."""
    phase, src, base, fix, blob = _unlistable_task(tmp_path, refusal)
    _shallow_clone_of_the_fix(tmp_path, phase, src, base, fix)
    assert _leaks(tmp_path, phase, blob, where) == []


# --- H2: an orphan snapshot of the fix's tree -------------------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="H2: an orphan snapshot of the fix's tree holds no commit of the task, so _past_head "
    "passes it, and the unlistable store's future (which names the fix's blob) is never compared",
)
@pytest.mark.parametrize("refusal", _UNLISTABLE)
@pytest.mark.parametrize("where", _WHERE)
def test_h2_an_orphan_with_the_fix_tree_beside_an_unlistable_task_store(
    tmp_path: Path, where: str, refusal: str
) -> None:
    phase, _, _, _, blob = _unlistable_task(tmp_path, refusal)
    _orphan_with_the_fix_tree(phase, blob)
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", _WHERE)
def test_h2_control_the_orphan_beside_a_listable_task_store(tmp_path: Path, where: str) -> None:
    phase, _, _, _, blob = _unlistable_task(tmp_path, "listable")
    _orphan_with_the_fix_tree(phase, blob)
    assert _leaks(tmp_path, phase, blob, where) == []


# --- H3: a HEAD the guard reads otherwise than git --------------------------------------------


def _rewrite_head(bare: Path, base: str, kind: str) -> None:
    """The bare store's ``HEAD -> refs/heads/main`` made to resolve, for git, to ``base`` by way
    of ``kind``; its other branches and ``packed-refs`` gone."""
    refs = bare / "refs/heads"
    packed = bare / "packed-refs"
    packed.unlink(missing_ok=True)
    for f in refs.iterdir():
        f.unlink()
    if kind == "trailing":
        (refs / "main").write_text(f"{base} trailing words\n")
    elif kind == "uppercase":
        (refs / "main").write_text(f"{base.upper()}\n")
    elif kind == "symref":
        (refs / "main").write_text("ref: refs/heads/real\n")
        (refs / "real").write_text(f"{base}\n")
    elif kind == "packed-duplicate":
        packed.write_text(
            "# pack-refs with: peeled fully-peeled sorted \n"
            f"{'1' * 40} refs/heads/main\n{'2' * 40} refs/heads/a\n{base} refs/heads/main\n"
        )
    elif kind == "ref-a-directory":
        (refs / "main").mkdir()
        (refs / "main/x").write_text(f"{base}\n")
        packed.write_text(f"{base} refs/heads/main\n")
    assert _git(bare, "rev-parse", "HEAD") == base


@pytest.mark.parametrize("kind", ["trailing", "uppercase", "symref", "packed-duplicate"])
@pytest.mark.parametrize("where", _WHERE)
@pytest.mark.parametrize("refusal", ["fifo-info-packs", "reference"])
def test_h3_a_head_git_reads_as_the_base_and_the_guard_does_not(
    tmp_path: Path, where: str, kind: str, refusal: str
) -> None:
    phase, src, base, _, blob = _unlistable_task(tmp_path, refusal)
    _clone_at_the_fix(tmp_path, phase, src)
    _rewrite_head(phase / "task.git", base, kind)
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", _WHERE)
def test_h3_a_reftable_store_reads_as_unborn(tmp_path: Path, where: str) -> None:
    """The layout git 2.45+ writes (``--ref-format=reftable``), made by hand: host git 2.39
    cannot write or read one, so git's reading of the base is not asserted — the refs live in
    ``reftable/``, which no reader here parses."""
    phase, bare, _, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    (bare / "packed-refs").unlink(missing_ok=True)
    shutil.rmtree(bare / "refs")
    (bare / "refs").mkdir()
    (bare / "refs/heads").write_text("this repository uses the reftable format\n")
    (bare / "HEAD").write_text("ref: refs/heads/.invalid\n")
    (bare / "reftable").mkdir()
    (bare / "reftable/tables.list").write_text("0x000000000001-0x000000000002-01234567.ref\n")
    (bare / "reftable/0x000000000001-0x000000000002-01234567.ref").write_bytes(b"REFT\x01")
    text = (bare / "config").read_text().replace("formatversion = 0", "formatversion = 1")
    (bare / "config").write_text(text + "[extensions]\n\trefStorage = reftable\n")
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", _WHERE)
def test_h3_holds_a_branch_that_is_a_directory(tmp_path: Path, where: str) -> None:
    """``refs/heads/main`` a folder (git reads the packed line): a loose reference there but not
    a file — unreadable, no copy kept."""
    phase, bare, _, base, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    _rewrite_head(bare, base, "ref-a-directory")
    _fifo_info_packs(tmp_path, bare)
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", _WHERE)
def test_h3_holds_a_clone_at_the_base_carrying_a_module_store_at_the_fix(
    tmp_path: Path, where: str
) -> None:
    """A copy at the unlistable store's very HEAD is kept (the task's own checkout); a clone at
    the base carrying a stale submodule store at the fix in ``.git/modules/sub`` (no gitlink
    names it) is kept without it — the fix in no copy."""
    phase, bare, cache, base, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    _git(cache, "checkout", "-q", base)
    module = cache / ".git/modules/sub"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(tmp_path / "src"), str(module))
    _git(module, "symbolic-ref", "HEAD", "refs/heads/wip")
    _git(cache, "branch", "-D", "wip")
    _git(cache, "remote", "remove", "origin")
    _git(cache, "reflog", "expire", "--expire=now", "--all")
    _git(cache, "gc", "-q", "--prune=now")
    assert not _has(cache / ".git", blob) and _has(module, blob)
    _fifo_info_packs(tmp_path, bare)
    assert _leaks(tmp_path, phase, blob, where) == []


def _mirror_past_the_fix(
    tmp_path: Path, unlistable: bool, clone: str = "zcache"
) -> tuple[Path, str]:
    """(the phase, the fix's blob): the task's honest checkout ``phase/t`` at its base (no fix in
    its store), a bare mirror of upstream ``phase/mirror.git`` whose HEAD is upstream's tip two
    past the base (a mirror fetched later; FIFO-refused where ``unlistable``), a clone at the
    fix ``phase/<clone>`` (detached at it; ``zcache`` sorts after ``t``)."""
    up, base, fix, fix2 = _upstream_two_past(tmp_path)
    blob = _blob(up, fix)
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "main", str(up), str(t))
    assert not _has(t / ".git", fix)
    mirror = phase / "mirror.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(up), str(mirror))
    _git(mirror, "symbolic-ref", "HEAD", "refs/heads/wip")
    assert _git(mirror, "rev-parse", "HEAD") == fix2
    if unlistable:
        _fifo_info_packs(tmp_path, mirror)
    cache = phase / clone
    _git(tmp_path, "clone", "-q", "--no-local", str(up), str(cache))
    _git(cache, "checkout", "-q", fix)
    _git(cache, "remote", "remove", "origin")
    assert _has(cache / ".git", fix) and not _git(cache, "rev-list", "--all").count(fix2)
    return phase, blob


@pytest.mark.parametrize("where", _WHERE)
def test_h7_a_clone_at_the_fix_beside_an_unlistable_mirror_past_it(
    tmp_path: Path, where: str
) -> None:
    phase, blob = _mirror_past_the_fix(tmp_path, unlistable=True)
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", _WHERE)
def test_h7_control_the_mirror_listable(tmp_path: Path, where: str) -> None:
    """The mirror listable: related to the task's checkout, pruned at its base, its future (the
    fix) found in the clone, pruned at that base too."""
    phase, blob = _mirror_past_the_fix(tmp_path, unlistable=False)
    assert _leaks(tmp_path, phase, blob, where) == []


@pytest.mark.parametrize("where", _WHERE)
def test_h8_the_listable_mirror_follows_a_clone_at_the_fix_named_first(
    tmp_path: Path, where: str
) -> None:
    phase, blob = _mirror_past_the_fix(tmp_path, unlistable=False, clone="cache")
    assert _leaks(tmp_path, phase, blob, where) == []


# --- H4: a linked worktree's git directory in the phase ----------------------------------------


@pytest.mark.xfail(
    strict=True,
    reason="H4: a linked worktree's git directory (HEAD, commondir naming the store outside the "
    "phase, no objects folder) is not found as a store, so no HEAD rule runs and the clone at "
    "the fix beside it is kept",
)
@pytest.mark.parametrize("detached", [False, True], ids=["branch", "detached"])
@pytest.mark.parametrize("where", _WHERE)
def test_h4_a_clone_at_the_fix_beside_a_linked_worktree(
    tmp_path: Path, where: str, detached: bool
) -> None:
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    phase.mkdir()
    how = ["--detach"] if detached else ["-b", "task"]
    _git(src, "worktree", "add", "-q", *how, str(phase / "t"), base)
    shutil.move(str(src / ".git/worktrees/t"), str(phase / "wt.git"))
    (phase / "wt.git/commondir").write_text(f"{src / '.git'}\n")
    (phase / "t/.git").write_text(f"gitdir: {phase / 'wt.git'}\n")
    assert _git(phase / "t", "rev-parse", "HEAD") == base
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(src), str(cache))
    _git(cache, "checkout", "-q", "wip")
    assert _leaks(tmp_path, phase, blob, where) == []


# --- H5, H6: the shared cache (``written``) ----------------------------------------------------


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


@pytest.mark.xfail(
    strict=True,
    reason="H5: a store under a written root (lenient) is not tried by its HEAD and its future "
    "cannot be listed: the clone at the fix in the workspace beside it is kept",
)
def test_h5_an_unlistable_task_store_in_the_shared_cache(tmp_path: Path) -> None:
    phase, bare, _, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    moved = Path(shutil.move(str(bare), str(shared / "task.git")))
    _fifo_info_packs(tmp_path, moved)
    sources, snap = _box_with_cache(tmp_path, phase, shared)
    assert _holds(sources, blob) == [], snap


def test_h5_holds_a_clone_at_the_fix_in_the_shared_cache(tmp_path: Path) -> None:
    """``lenient`` exempts the unpruned store, not the copies tried against it: the clone at the
    fix in the cache beside the unlistable task store in the workspace is hidden."""
    phase, bare, cache, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    shared = tmp_path / "shared"
    shared.mkdir()
    shutil.move(str(cache), str(shared / "cache"))
    _fifo_info_packs(tmp_path, bare)
    sources, snap = _box_with_cache(tmp_path, phase, shared)
    assert _holds(sources, blob) == [], snap
    assert any(str(shared / "cache/.git") in h for h in snap["hidden"]), snap


def _junk_holding_a_base_blob(tmp_path: Path, shared: Path, root: Path, commit: bool) -> Path:
    """A bare store a candidate's prepare phase writes in the shared cache: one loose blob, the
    task's base ``tolls/toll.py`` (``hash-object -w``), no reference naming it; ``commit``: its
    HEAD an orphan commit of its own."""
    junk = shared / "junk.git"
    _git(shared, "init", "-q", "--bare", "-b", "main", str(junk))
    if commit:
        work = tmp_path / "w"
        work.mkdir()
        _git(work, "init", "-q", "-b", "main")
        (work / "x").write_text("x\n")
        _git(work, "add", "x")
        _git(work, "commit", "-qm", "x")
        _git(work, "push", "-q", str(junk), "main")
    subprocess.run(
        ["git", "--git-dir", str(junk), "hash-object", "-w", str(root / "tolls/toll.py")],
        check=True,
        capture_output=True,
    )
    return junk


@pytest.mark.parametrize("commit", [True, False], ids=["orphan-head", "no-commit"])
def test_h6_a_junk_store_in_the_shared_cache_changes_another_versions_task(
    tmp_path: Path, commit: bool
) -> None:
    phase = tmp_path / "phase"
    root, base, _ = _task(phase / "t")
    _forget(root)
    shared = tmp_path / "shared"
    shared.mkdir()
    _junk_holding_a_base_blob(tmp_path, shared, root, commit)
    sources, snap = _box_with_cache(tmp_path, phase, shared)
    assert root / ".git" in sources, snap
    assert _git(root, "--git-dir", str(sources[root / ".git"]), "rev-parse", "HEAD") == base


def test_the_replay_prunes_a_shallow_clone_and_an_orphan_of_the_fix(tmp_path: Path) -> None:
    """The replay's fourth world (the task known, its store listable): H1's shallow clone and
    H2's orphan in the task's work tree share its future and are pruned at its base or emptied
    — the fix in no store of the tree."""
    root, base, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    vendor = root / "vendor"
    vendor.mkdir()
    _git(
        tmp_path, "clone", "-q", "--depth", "1", "--branch", "wip", root.as_uri(), str(vendor / "s")
    )
    _orphan_with_the_fix_tree(vendor, blob)
    _forget(root)
    assert _has(vendor / "s/.git", blob) and _has(vendor / "snap/.git", blob)
    top = prune_copy(root / ".git", tmp_path / "top").path
    prune_nested(root, top, base, tmp_path / "scratch", task=root / ".git")
    assert not [s for s in _stores(vendor) if _has(s, blob)]


# --- P2: over-pruning --------------------------------------------------------------------------


def _stale_mirror_beside_an_honest_checkout(tmp_path: Path, how: str) -> tuple[Path, Path, str]:
    """(the phase, the honest checkout ``phase/t`` at its base, the base): beside it a bare
    mirror of the same repository one commit behind, ``old.git``, cloned ``--reference`` a cache
    outside the phase (``reference``) or made unlistable (``fifo``)."""
    src, _, _ = _task(tmp_path / "src")
    phase = tmp_path / "phase"
    phase.mkdir()
    old = phase / "old.git"
    if how == "reference":
        ref = tmp_path / "ref.git"
        _git(tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(src), str(ref))
        _git(
            tmp_path,
            "clone",
            "-q",
            "--bare",
            "--single-branch",
            "--reference",
            str(ref),
            src.as_uri(),
            str(old),
        )
        assert (old / "objects/info/alternates").exists()
    else:
        _git(tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(src), str(old))
        _fifo_info_packs(tmp_path, old)
    (src / "README").write_text("tolls, by the hour\n")
    _git(src, "add", "README")
    _git(src, "commit", "-qm", "a README")
    base = _git(src, "rev-parse", "HEAD")
    t = phase / "t"
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", str(src), str(t))
    assert _git(t, "rev-parse", "HEAD^") == _git(old, "rev-parse", "HEAD")
    return phase, t, base


@pytest.mark.parametrize("how", ["reference", "fifo"])
def test_p2_an_honest_checkout_beside_a_stale_unlistable_mirror_is_hidden(
    tmp_path: Path, how: str
) -> None:
    """P2 (a precision cost of 765a023): the honest checkout holds the stale mirror's HEAD at
    another base — hidden in the box, refused in the judge's copy."""
    phase, t, _ = _stale_mirror_beside_an_honest_checkout(tmp_path, how)
    sources, snap = _box(tmp_path, [phase])
    assert t / ".git" not in sources, snap
    assert any(h.startswith(str(t / ".git")) and "HEAD of" in h for h in snap["hidden"]), snap
    _, refused = _judge(tmp_path, phase)
    assert any(r.startswith("t/.git") for r in refused), refused


@pytest.mark.xfail(
    strict=True,
    reason="H6's price (the operator's layout): a store in the shared cache decides nothing about "
    "a copy outside it, so an upstream mirror holding the fix there no longer prunes a clone at "
    "the fix in the workspace when the task's own store never held the fix",
)
def test_h6_price_a_mirror_of_the_fix_in_the_shared_cache(tmp_path: Path) -> None:
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    phase.mkdir()
    t = phase / "t"
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "main", str(src), str(t))
    assert not _has(t / ".git", blob)
    shared = tmp_path / "shared"
    shared.mkdir()
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(shared / "mirror.git"))
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(src), str(cache))
    _git(cache, "checkout", "-q", "wip")
    assert _git(t, "rev-parse", "HEAD") == base
    sources, snap = _box_with_cache(tmp_path, phase, shared)
    assert _holds(sources, blob) == [], snap
