"""Red team of session 14's fixes to the judge's start (issue 29): 2094de1 (the judge's copy of the
candidate is noted — path, device, inode — and not searched or pruned again; more than
``MAX_PRUNED`` repositories elsewhere refuse the judge), e535b3e (an untraced phase's copies
removed when its box is over) and 947e2b1 (a read-only folder searched to 2,000,000 entries, a
cut refusing the phase), red-teamed by a helper who wrote none of them.

The attacker is the candidate: its code in the train phase writes the candidate folder the judge
later copies and the train phase's own ``evidence/train`` (both in the run directory); its code
in the judge reads what the judge's box holds. The future is ``FUTURE_SECRET_42``
(``test_task_prune._task``). The first line is on (the default) in every attack; each asserts
it ran (a control). A win is ``xfail(strict=False)`` asserting the safe outcome, its reason the
mechanism; a stopped attack passes, its docstring saying by what. Results against 3d1b37e (no change to the harness's git guard since 947e2b1):

State at 3b6883e: still WON J7, J9 and J3 (a lead) (xfails; J3 closed in the fifteenth session:
the note holds the copy's inode open); closed J1, J2, J6 (4d74a58), J4
(e4eb003), J8 (11a6611): plain tests now; J5 stopped.

- J1, the cap refuses the judge on what the train phase wrote (WON: honest work CHANGED, and a
  lever of the candidate's): the judge reads the run directory (``paths.root``), which holds
  ``evidence/train`` — the train phase's own read-write folder. 33 repositories there (a
  vendored checkout per dependency kept as a train output) make ``before_untraced`` raise
  ``PruneError`` (``refuse_over_cap``, new with 2094de1); before it the 33rd was hidden and the
  judge ran. The run fails as evotree's own error (``SandboxUnavailable``; ``local.
  _record_exception``: "not the candidate: not charged") — no score, at the candidate's will.
- J2, the read-only cut refuses the judge on what the train phase wrote (WON, same lever, new
  with 947e2b1): a folder 70 deep in ``evidence/train`` (``mkdir -p``: no flood needed) cuts
  the judge's search of the run directory at ``MAX_DEPTH``, and a cut in a read-only folder
  refuses the phase (``ReadPathCut``, "the run cannot be guarded"). The same folder in the
  candidate folder is not searched (masked; the copy is noted).
- J8, an honest task's own tests (WON: honest work CHANGED): the judge's tree (the task's
  hidden tests, ``provide_judge``) is a read-only root of the judge; a task whose tests ship
  33 fixture repositories (a git library's: libgit2 tracks about a hundred under
  ``tests/resources/*/.gitted``, dulwich and GitPython theirs) refuses every judge
  phase (``refuse_over_cap``), and the way out the message names (fewer read paths) is not
  the operator's to take. Before 2094de1 the 33rd was hidden (empty).
- J6, the shared cache (WON, new with 947e2b1): the prepare phase writes the workspace's
  cache, which every later run's train phase reads; a folder 70 deep left there cuts that
  search and ``ReadPathCut`` refuses every later run's train phase (evotree's own failure, not
  charged) until the operator names the cache in ``EVOTREE_READ_PATHS_WITHOUT_REPOS`` (the
  message says so; with it the phase starts — a control).
- J7, host git at the judge's start (WON; the earlier red team's lead, still open after
  2094de1 for what is not the copy): the repositories the train phase left in
  ``evidence/train`` are pruned by host git with no deadline in all (``before_phase`` calls
  ``prune_copy`` without one: 600 s a git call, five calls a repository here), while the
  copy's pruning has ``PRUNE_SECONDS`` in all: up to 32 x 5 x 600 s of host time before
  the judge's timeout starts.
- J3, a stale note and a reused inode (WON at the unit level; a lead in practice):
  ``_PRUNED_COPIES`` forgets a removed copy only at the next ``note_pruned_copy``, and ext4
  gives a folder made at the removed copy's path the same inode: ``_noted_copies`` takes the new
  folder for the noted copy, and its task repository is bound whole (``git log --all`` reads
  the future). Every path evotree notes today is a fresh ``mkdtemp`` (or a finalize run's
  candidate folder, never a judge's read path), so no run reaches it now.
- J4, a store whose packs are not named ``pack-*`` (WON; next to the documented limit "a pack
  copied to another name in another folder"): git reads every ``objects/pack/*.idx`` whatever
  its name, but ``is_object_store`` wants ``pack-*.pack``/``.idx`` (or a loose object): a
  folder ``mirror/objects/pack/x.{pack,idx}`` with no ``HEAD`` is no git directory to the
  guard — bound whole into the traced train box, copied whole to the judge (``note_pruned_copy``
  then vouches for the copy), where git with an alternate naming it reads the future. The
  future comes with the image, as R1's mirror did (the train phase reads it whole and may
  carry it on); not new with 2094de1 — the recogniser's gap, which the note now trusts.
- J9, an honest dataset taken for a store (WON: honest work CHANGED, new with e4eb003, J4's
  fix): ``is_object_store`` takes a folder holding ``pack/`` with any ``*.idx``/``*.pack``
  for a git object store; a candidate's ``data/pack/train_text_document.{bin,idx}`` (a
  Megatron-style indexed dataset of packed sequences) makes ``data/`` a store that cannot be
  pruned: an empty folder is bound over it in the train box, and the judge's copy refuses it.
- J5, another folder renamed over a noted copy (stopped): the note holds device and inode
  (``lstat``), so the folder at the path is searched and its repository pruned. Not tried, why:
  a repository planted in the copy after the note, or a link put at its path — nothing of the
  candidate's runs between the copy and the judge's start (the train phase's processes are
  dead, the copy is outside the run directory), and the judge's box binds it read-only.
- Leads, not tested (why): ``phases.run_phase`` hands the box's argv to ``release_untraced``
  only once ``_launch`` has started it — a launch that raises (the run's log files cannot be
  opened, no process left to fork) leaves that judge's copies to atexit (R7's growth, on an
  error path; the candidate cannot make it fail); a forked child of evotree keeps the lock
  files' open descriptions, so a dead parent's copies are not swept while it lives.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from test_redteam_fixes29_redteam import _store_text
from test_redteam_judge_copy_redteam import _box, _copy, _judge_spec, _log_all
from test_task_prune import SECRET, _commit, _git, _task

from evotree.harness import (
    git_guard,
    git_prune,
    git_relations,
    git_store_read,
    git_untraced,
    sandbox,
)
from evotree.harness.sandbox_spec import SandboxSpec
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture


@pytest.fixture(autouse=True)
def _first_line_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The first line on (the default); a private prune cache and a private folder of untraced
    copies (the host's are left alone)."""
    monkeypatch.delenv(git_prune.ENV_TASK_REPOS, raising=False)
    monkeypatch.delenv(git_guard.ENV_NO_REPOS, raising=False)
    cache = tmp_path / "prune-cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setattr(git_prune, "_cache_root", lambda: cache)
    untraced = tmp_path / "untraced-copies"
    untraced.mkdir(mode=0o700)
    monkeypatch.setattr(git_untraced, "_untraced_root", lambda: untraced)


def _release(binds: list[tuple[str, Path, Path]]) -> None:
    git_untraced.release_untraced([str(src) for _, src, _ in binds])


def _judge_start(root: Path, copy: Path) -> list[tuple[str, Path, Path]]:
    """The judge's start as ``phases._judge`` makes it: its box's task repositories, through
    ``sandbox._guard_task_repositories`` (``SandboxUnavailable`` where it refuses)."""
    return sandbox._guard_task_repositories(_judge_spec(root, copy))


# ---------------------------------------------- J1/J2: the train phase's evidence refuses the judge


def _vendored(folder: Path, count: int) -> None:
    """``count`` small repositories (a vendored checkout per dependency)."""
    for i in range(count):
        repo = folder / f"dep{i:02d}"
        repo.mkdir(parents=True)
        _git(repo, "init", "-q", "-b", "main")
        _commit(repo, "lib.py", f"v = {i}\n", f"dep {i}")


def _run_dir(tmp_path: Path) -> tuple[Path, Path]:
    """A run directory after an honest train phase (its candidate holds the task), and the
    judge's copy of the candidate."""
    root = tmp_path / "run"
    _task(root / "candidate" / "task")
    (root / "evidence" / "train").mkdir(parents=True)
    copy, refused = _copy(root / "candidate", tmp_path)
    assert not refused and (copy / "task" / "a.txt").read_text() == "base\n"  # control
    return root, copy


@pytest.mark.heavy
def test_j1_repositories_the_train_phase_kept_do_not_refuse_the_judge(tmp_path: Path) -> None:
    """Closed (was WON: 33 repositories in evidence/train, which the judge reads in the run
    directory, raised PruneError - SandboxUnavailable, evotree's own failure, no score): past
    MAX_PRUNED the repositories of folders the candidate's code writes are hidden, said in the
    run's record (``take_notes``); only the candidate's own reading of them fails."""
    root, copy = _run_dir(tmp_path)
    kept = root / "evidence" / "train" / "vendor"
    _vendored(kept, git_guard.MAX_PRUNED)
    binds = _judge_start(root, copy)  # control: 32 kept, the judge starts
    try:
        assert len([d for _, _, d in binds if d.name == ".git" and kept in d.parents]) == 32
    finally:
        _release(binds)
    _vendored(kept / "more", 1)  # the 33rd
    try:
        binds = _judge_start(root, copy)
    except sandbox.SandboxUnavailable as exc:
        assert "task repositories" in str(exc)  # the refusal is the cap's
        pytest.fail(f"the judge refused: {exc}")
    _release(binds)


def test_j2_a_deep_folder_the_train_phase_kept_does_not_refuse_the_judge(tmp_path: Path) -> None:
    """Closed (was WON: a folder 70 deep in evidence/train cut the judge's search of the run
    directory and ReadPathCut refused the phase): a cut in a read-only folder the candidate's
    code writes hides the folders left unsearched (an empty folder bound over each, said in the
    run's record) instead of refusing."""
    root, copy = _run_dir(tmp_path)
    deep = root / "candidate" / "/".join(["d"] * 70)
    deep.mkdir(parents=True)  # control: in the candidate folder (masked, its copy noted)
    copy2 = tmp_path / "judge-candidate-2"
    copy2.mkdir()
    from evotree.harness.sandbox_copy import copy_regular_files

    copy_regular_files(root / "candidate", copy2, max_files=100_000, max_bytes=1 << 30)
    _release(_judge_start(root, copy2))  # the judge starts
    (root / "evidence" / "train" / "/".join(["d"] * 70)).mkdir(parents=True)
    try:
        binds = _judge_start(root, copy2)
    except sandbox.SandboxUnavailable as exc:
        assert "could not be searched whole" in str(exc)  # the refusal is the cut's
        pytest.fail(f"the judge refused: {exc}")
    _release(binds)


@pytest.mark.heavy
def test_j8_a_task_whose_tests_ship_fixture_repositories_is_still_judged(tmp_path: Path) -> None:
    """Closed (was WON: the judge's own tree, a read-only root, counted against MAX_PRUNED, so
    33 fixture repositories in the task's hidden tests refused every judge phase): the cap
    counts the repositories of folders the candidate's code can write only; the judge's tree
    and the operator's read paths are pruned whatever their number."""
    root, copy = _run_dir(tmp_path)
    fresh = root.parent / "judge-fresh"  # the judge's tree, as _judge_spec names it
    fixtures = fresh / "tests" / "fixtures"
    _vendored(fixtures / "work", 1)
    for i in range(git_guard.MAX_PRUNED + 1):
        _git(fixtures, "clone", "-q", "--bare", "work/dep00", f"f{i:02d}.git")
    shutil.rmtree(fixtures / "work")
    try:
        binds = _judge_start(root, copy)
    except sandbox.SandboxUnavailable as exc:
        assert "33 task repositories" in str(exc)  # the refusal is the cap's
        pytest.fail(f"the judge refused: {exc}")
    _release(binds)


# ------------------------------------------ J6: the shared cache refuses every later train phase


def test_j6_a_deep_folder_a_prepare_phase_left_in_the_cache_does_not_refuse_later_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closed (was WON: a folder 70 deep the prepare phase left in the shared cache cut every
    later run's train-phase search and ReadPathCut refused it): the train box names the cache
    in ``SandboxSpec.written`` (``phases._prepare_and_train``; the spec below as it makes it
    now), and a cut there hides the folders left unsearched instead of refusing the phase."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    root = tmp_path / "run2"  # a later run, another candidate
    _task(root / "candidate" / "task")
    (root / "evidence" / "train").mkdir(parents=True)
    spec = SandboxSpec(
        cwd=root / "candidate",
        read_only=(root, cache),
        read_write=(root / "candidate", root / "evidence" / "train"),
        trace=tmp_path / "raw.trace",
        written=(cache,),
    )
    sandbox._guard_task_repositories(spec)  # control: the train phase starts
    git_prune.remove_copies(spec.trace)
    (cache / "/".join(["d"] * 70)).mkdir(parents=True)  # what a prepare phase left
    monkeypatch.setenv(git_guard.ENV_NO_REPOS, str(cache))
    sandbox._guard_task_repositories(spec)  # control: the operator's way out works
    git_prune.remove_copies(spec.trace)
    monkeypatch.delenv(git_guard.ENV_NO_REPOS)
    try:
        sandbox._guard_task_repositories(spec)
    except sandbox.SandboxUnavailable as exc:
        assert "could not be searched whole" in str(exc)  # the refusal is the cut's
        pytest.fail(f"the later run's train phase refused: {exc}")
    finally:
        git_prune.remove_copies(spec.trace)


# --------------------------------- J7: host git at the judge's start has no deadline in all


def test_j7_host_git_at_the_judges_start_has_a_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closed (was WON: the judge's start pruned the train phase's repositories with no
    deadline in all, 600 s a git call): ``before_phase`` gives every prune of a phase's start
    one deadline, ``git_guard.PRUNE_SECONDS`` (300 s, as the copy's)."""
    root, copy = _run_dir(tmp_path)
    _vendored(root / "evidence" / "train" / "vendor", 2)
    seen: list[float | None] = []
    real = git_prune._git

    def spy(*args: object, **kwargs: object) -> tuple[int, bytes, str]:
        seen.append(git_prune._DEADLINE.get())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    for module in (git_prune, git_relations, git_store_read):  # every caller of host git
        monkeypatch.setattr(module, "_git", spy)
    binds = _judge_start(root, copy)
    _release(binds)
    assert seen, "control: host git pruned the train phase's repositories"
    per_repo = len(seen) // 2
    assert all(d is not None for d in seen), (
        f"{len(seen)} host git calls ({per_repo} a repository), none with a deadline in all"
    )


# ------------------------------------------------------ J3: a stale note and a reused inode


def test_j3_a_folder_made_where_a_noted_copy_was_is_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closed (was WON at the unit level: ``_PRUNED_COPIES`` forgot a removed copy only at the
    next ``note_pruned_copy``, and ext4 gave a folder made at its path the same inode, so
    ``_noted_copies`` took the new folder for the noted copy and its task repository was bound
    whole): the note holds an ``O_PATH`` descriptor of the copy, so its inode is not freed
    while noted and a folder made at the path is another one — searched and pruned."""
    monkeypatch.setattr(git_untraced, "_PRUNED_COPIES", {})
    path = tmp_path / "judge-candidate-x"
    path.mkdir()
    git_untraced.note_pruned_copy(path)
    before = os.lstat(path).st_ino
    shutil.rmtree(path)
    path.mkdir()
    assert os.lstat(path).st_ino != before  # the noted inode is still held
    _task(path / "task")
    stale = dict(git_untraced._PRUNED_COPIES)
    monkeypatch.setattr(git_untraced, "_PRUNED_COPIES", {})
    binds = git_untraced.before_untraced([], [path], [])  # control: with no note, bound pruned
    try:
        assert [d for _, _, d in binds if d == path / "task" / ".git"], binds
    finally:
        _release(binds)
    monkeypatch.setattr(git_untraced, "_PRUNED_COPIES", stale)
    binds = git_untraced.before_untraced([], [path], [])
    try:
        bound = [d for _, _, d in binds if d == path / "task" / ".git"]
        assert bound, f"the task repository is bound as it is: {binds}"
    finally:
        _release(binds)


# ------------------------------------------------- J4: a store whose packs are not pack-*


def _renamed_store(folder: Path, task: Path) -> Path:
    """``folder/objects/pack/x.{pack,idx}``: every object of ``task`` in one pack not named
    ``pack-*`` (no ``HEAD``, no references: no git directory to git either, a store)."""
    _git(task, "repack", "-a", "-d", "-q")
    pack = folder / "objects" / "pack"
    pack.mkdir(parents=True)
    for src in (task / ".git" / "objects" / "pack").glob("pack-*"):
        if src.suffix in (".pack", ".idx"):
            shutil.copyfile(src, pack / f"x{src.suffix}")
    return folder / "objects"


def test_j4_a_store_whose_packs_are_renamed_does_not_reach_the_judge_whole(
    tmp_path: Path,
) -> None:
    """Closed (was WON: git reads every ``objects/pack/*.idx`` whatever its name, and
    ``is_object_store`` wanted ``pack-*``): any ``*.pack``/``*.idx`` (and a
    ``multi-pack-index``, ``info/alternates``, ``info/packs``) makes a store now, so the store
    of ``x.pack``/``x.idx`` is a git directory to the copy, which cannot prune it (no HEAD)
    and refuses it."""
    work = tmp_path / "image"
    _task(work / "task")
    objects = _renamed_store(work / "candidate" / "mirror", work / "task")
    assert SECRET in _store_text(objects, tmp_path)  # control: git reads the renamed store
    assert git_guard.is_git_dir(objects)  # recognised now (was the win's control: not)
    root = tmp_path / "run"
    (root / "candidate").mkdir(parents=True)
    shutil.copytree(work / "candidate", root / "candidate", dirs_exist_ok=True)
    copy, refused = _copy(root / "candidate", tmp_path)
    assert (copy / "mirror" / "objects" / "pack").is_dir() or refused  # control: the copy ran
    carried = copy / "mirror" / "objects"
    assert not carried.exists() or SECRET not in _store_text(carried, tmp_path)


@pytest.mark.heavy
def test_j4_a_store_whose_packs_are_renamed_is_not_bound_whole_in_the_train_box(
    tmp_path: Path, seccomp: None
) -> None:
    """Closed (was WON: the store of ``x.pack``/``x.idx`` was no task repository to
    ``find_git_dirs`` and was bound whole into the traced train box): the store is found now
    and, not prunable (no HEAD), hidden — git there, with a fresh repository naming it as an
    alternate, reads no future."""
    work = tmp_path / "run" / "candidate"
    _task(work / "task")
    objects = _renamed_store(work / "mirror", work / "task")
    reader = "/tmp/reader"
    script = (
        "import subprocess\n"
        f"subprocess.run(['git', 'init', '-q', '--bare', '{reader}'], check=True)\n"
        f"open('{reader}/objects/info/alternates', 'w').write('{objects}\\n')\n"
        "out = subprocess.run(['git', '--git-dir', '"
        + reader
        + "', 'cat-file', '--batch-all-objects', '--batch'], capture_output=True)\n"
        "print('rc', out.returncode, out.stdout.decode('utf-8', 'replace')[-4000:])\n"
    )
    spec = SandboxSpec(
        cwd=work, read_only=(tmp_path / "run",), read_write=(work,), trace=tmp_path / "raw.trace"
    )
    proc = _box(spec, script)
    try:
        assert "rc 0" in proc.stdout, proc  # control: git ran in the box
        control = _box(spec, _log_all(work / "task" / ".git"))
        assert "base" in control.stdout and SECRET not in control.stdout  # the task: pruned
        assert SECRET not in proc.stdout
    finally:
        from evotree.harness.sandbox import finish_trace

        (tmp_path / "ev").mkdir()
        finish_trace(spec, tmp_path / "ev")


# ---------------------------------------------- J5: a noted copy swapped (stopped)


def test_j5_another_folder_renamed_over_a_noted_copy_is_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped: the note holds the copy's device and inode (read with ``lstat``): another
    folder renamed over the noted path (both existed at once: its inode differs) is searched,
    its task repository bound pruned."""
    monkeypatch.setattr(git_untraced, "_PRUNED_COPIES", {})
    copy = tmp_path / "judge-candidate-x"
    copy.mkdir()
    git_untraced.note_pruned_copy(copy)
    assert git_untraced._noted_copies([copy]) == [copy]  # control: the note holds
    other = tmp_path / "other"
    _task(other / "task")
    copy.rmdir()
    os.rename(other, copy)
    binds = git_untraced.before_untraced([], [copy], [])
    try:
        gits = [(s, d) for _, s, d in binds if d == copy / "task" / ".git"]
        assert gits, binds
        assert SECRET not in _store_text(gits[0][0] / "objects", tmp_path)
    finally:
        _release(binds)


# ------------------------- J9: an honest dataset's pack/ folder taken for an object store


def _indexed_dataset(folder: Path) -> None:
    """A Megatron-style indexed dataset (``<prefix>.bin`` + ``<prefix>.idx``) in a folder named
    ``pack`` (sequence-packed training data): no git data at all."""
    folder.mkdir(parents=True)
    (folder / "train_text_document.bin").write_bytes(b"\\0" * 4096)
    (folder / "train_text_document.idx").write_bytes(b"MMIDIDX\\x00\\x00" + b"\\0" * 64)


def test_j9_an_indexed_dataset_in_a_pack_folder_is_no_object_store(tmp_path: Path) -> None:
    """Closed (was WON with e4eb003: any pack/*.idx made a store, so this dataset was hidden in
    the train box and refused by the judge's copy): a pack/ folder is a store by git's own
    magic now (a *.pack starting PACK, a multi-pack-index starting MIDX) or git's pack-* names."""
    work = tmp_path / "run" / "candidate"
    _indexed_dataset(work / "data" / "pack")
    (work / "train.py").write_text("print('train')\\n")
    copy, refused = _copy(work, tmp_path)
    assert (copy / "train.py").is_file()  # control: the copy ran
    trace = tmp_path / "raw.trace"
    binds = git_guard.before_phase([work], trace, read_only=[tmp_path / "run"])
    git_prune.remove_copies(trace)
    hidden = [str(d) for _, s, d in binds if str(s).endswith(".hidden")]
    assert not refused, refused
    assert hidden == [], hidden
