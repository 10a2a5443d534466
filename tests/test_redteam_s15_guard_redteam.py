"""Red team of session 14's git-guard fixes at a phase's start (issue 29): e4eb003 (a store is what
git reads as one), f57068f (packs by git's magic), 11a6611 (the cap counts only what the candidate
writes), 4d74a58 (a cut in what the candidate wrote hides folders, noted; ``SandboxSpec.written``)
and b5589e7 (one deadline for a phase start's pruning), by a helper who wrote none of them.

The attacker is the candidate's code: the candidate folder it ships (the run directory the prepare
phase reads), what its prepare phase writes into the workspace's shared cache (every later run's
train phase reads it, ``written``), and what its train phase leaves in ``evidence/train`` or its
candidate folder (the judge reads both, one as a copy). The future is ``FUTURE_SECRET_42``
(``test_task_prune._task``). The first line is on in every attack; each has a control that
shows it ran. A win is ``xfail(strict=True)`` asserting the safe outcome, its reason the
mechanism; a stopped attack is a plain test, its docstring saying by what. Against c5be44d
(``git_guard``, ``git_prune``, ``sandbox_copy``, ``sandbox``, ``phases`` unchanged since
b5589e7):

- K1 (WON): a ``.git`` skipped by a cut of the entries. When ``find_git_dirs`` stops at
  ``max_entries`` inside a folder, the folders left (``subs[index:]``) go to ``cut_paths`` to be
  hidden — but a ``.git`` among them is left out (``e.name != ".git"``) and never found. A
  folder ``-x`` sorts before ``.git`` (``-`` < ``.``): in a read-only root the candidate wrote
  (lenient since 4d74a58) the cut hides ``task/-x`` and binds ``task/.git`` whole, no row and no
  note of it. The prepare phase reads the run directory (holding ``evidence/prepare``: lenient),
  so its box reads the task's future by plain ``git log --all``. The bound is patched to 2,000
  entries (2,000,000 in production: the same walk with a bigger flood; the control with the
  sibling named ``x`` shows the bound and flood alone prune it).
- K2 (WON): a reference whose name is not UTF-8 (``refs/heads/x\\xff``, a loose reference
  file the candidate's code writes with ``open``) in a repository the candidate wrote crashes
  the start with ``UnicodeEncodeError`` in ``git_prune._store_key`` (``str(path).encode()`` of a
  surrogate-escaped name), caught by neither ``before_phase`` nor the copy (they catch
  ``PruneError``/``OSError``/``SubprocessError``). In the shared cache it fails every later
  run's train phase, of every version, as evotree's own error (not charged) — what J6's fix
  promised a candidate's writes never do; in the candidate folder it fails the judge's copy (no
  score at the candidate's will: J1's lever).
- K3 (WON): a repository below a path longer than ``PATH_MAX`` (4,096 bytes; 17 folders of
  250 characters, within ``MAX_DEPTH``) is silently skipped: ``os.scandir`` of the absolute path
  fails (``ENAMETOOLONG``) and ``find_git_dirs`` goes on (``except OSError: continue``) — no
  cut, no row, no hidden folder, nothing refused. A clone the prepare phase leaves there in the
  shared cache is bound whole into the train box, whose code reaches it with relative opens and
  reads the future with git.
- K4 (WON, unit level): the same ``continue`` for a folder of mode ``0o111`` (traversable, not
  listable): where evotree does not run as root (shown in a child process as ``nobody``; root
  lists it) the search finds nothing and says nothing, while git, given the clone's path,
  reads its future. The judge's copy refuses an unreadable folder; the phases' search does not.
- K5 (WON): ``EVOTREE_READ_PATHS_WITHOUT_REPOS`` naming a folder that *holds* the workspace's
  cache (``/data`` holding the datasets and ``/data/proj/.evotree/cache``): ``_attested``
  drops a named folder holding a read-write folder, but for 4d74a58's ``written`` only one that
  is the cache or lies in it, so the cache the prepare phase wrote is not searched and a clone
  there is bound whole into the train box. The docs say the variable "cannot name a folder the
  candidate writes"; naming the cache itself is refused (the control).
- K6 (WON): past ``MAX_HIDDEN_CUTS`` ``_coarsen`` lifts the cut folders to a parent that holds
  a repository the search found and pruned (it keeps away only from read-write and masked
  folders); the empty folder bound read-only there comes first (parents first), and bwrap
  cannot make the pruned copy's mount point inside it: the box does not start ("Can't mkdir
  parents ... Read-only file system"). A prepare phase's cache folder ``P/`` holding a small
  clone and 257 folders 66 deep fails every later run's train phase, of every version, as that
  candidate's own failed phase (exit 1: charged, unlike J6's refusal). ``MAX_HIDDEN_CUTS`` is
  patched to 8 (9 folders) for speed.
- K7 (WON: honest work CHANGED, J9's remainder): f57068f reads git's magic only for a
  ``*.pack`` of another name; a ``pack-*.idx``/``.pack`` in a ``pack/`` folder is a store by
  its name alone, so a dataset sharded as ``data/pack/pack-00000.{bin,idx}`` is refused by the
  judge's copy (and hidden in the train box), as J9's was.
Closed since (b778baf; each won attack's test is plain now, its docstring saying by what): K1 a
folder's ``.git`` is taken before its siblings; K2 names read as bytes, a name that is not UTF-8
not kept, a ``UnicodeError`` hides (refuses) the repository; K3/K4 a folder that cannot be listed
is a cut (hidden where the candidate writes, lifted to a parent short enough to be a mount point),
unless it is another user's and cannot be traversed either (nothing below it reachable: the
control); K5 an attested folder holding a written one is searched; K6 a repository in a hidden
folder is hidden with it; K7 packs and indexes by git's magic whatever their names (the control:
git's own under other names still make a store).

- L1 (stopped): a FIFO named ``x.pack`` or ``multi-pack-index`` in a ``pack/`` folder does not
  block the recogniser (``O_NONBLOCK``) and is no store; a link named ``x.pack`` counts.
- L2 (stopped): the one deadline spent (``PRUNE_SECONDS`` 0) hides every repository of the
  start — an empty folder bound over each, nothing of the original bound.
- L3 (stopped): K1 with more than ``MAX_HIDDEN_CUTS`` siblings: ``_coarsen`` lifts them to
  their parent, the folder holding the ``.git``, which is hidden whole.
- L4 (stopped): the cap (11a6611) cannot be made to skip pruning: 33 repositories in the
  candidate folder leave the 33rd hidden, never bound from the original.

Leads, not tested (why): K6's mechanism without lifting: the folders left in an entries cut's
queue are hidden without regard to the phase's read-write folders below them (``_coarsen``
keeps away from ``keep`` only when it lifts), so a queued ``evidence`` (above
``evidence/prepare``) gets an empty read-only folder and bwrap cannot make the read-write
folder's mount point — the candidate's own run only (the run directory is its own). K1, K3 and
K4 in the judge: its lenient root is the run directory with the candidate masked, and nothing
the train phase writes holds the future, so only the prepare phase (which reads the candidate
unmasked) and the cache are concerned. The recogniser's ``listdir`` of ``pack``/``info``/fan-out
folders is not counted in the search's entries (a folder's is counted when it is visited), so
the work of a start is bounded by what is on disk rather than by ``MAX_ENTRIES`` (at most three
listings of each folder: no amplification beyond the files made). Likewise
``git_prune._check_self_contained`` scans up to 2,000,000 entries of a repository's ``objects/``
and ``refs/`` before its first git call, outside b5589e7's deadline (which only ``_git``
checks): 32 such repositories in ``evidence/train`` cost the judge's start 64 million ``stat``
calls, bounded by the disk the candidate fills, not by ``PRUNE_SECONDS`` (not built: gigabytes
of directory entries).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_redteam_judge_copy_redteam import _box, _log_all
from test_task_prune import _ENV, SECRET, _commit, _git, _task

from evotree.harness import git_guard, git_phase_search, git_prune, git_untraced, sandbox
from evotree.harness.sandbox import finish_trace
from evotree.harness.sandbox_copy import copy_regular_files
from evotree.harness.sandbox_launch import accounted, sandbox_env
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


def _snapshot(spec: SandboxSpec) -> dict:
    return json.loads(git_guard.snapshot_path(spec.trace).read_text())


def _bound_from(binds: list[tuple[str, Path, Path]], dest: Path) -> list[Path]:
    """The sources bound onto ``dest``."""
    return [src for _, src, d in binds if d == dest]


# ------------------------------------------------ K1: a .git skipped by a cut of the entries


def _prepare_spec(tmp_path: Path, root: Path) -> SandboxSpec:
    """The prepare phase's box as ``phases._prepare`` makes it: the run directory read-only (it
    holds ``evidence/prepare``, read-write: a folder the candidate writes), the cache
    read-write."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    (root / "evidence" / "prepare").mkdir(parents=True, exist_ok=True)
    return SandboxSpec(
        cwd=root / "candidate",
        read_only=(root,),
        read_write=(cache, root / "evidence" / "prepare"),
        trace=tmp_path / "raw.trace",
    )


def _flooded_run(tmp_path: Path, sibling: str, flood: int) -> Path:
    """A run directory whose candidate holds the task and ``flood`` files in ``aaa/`` (searched
    before ``task/``), and a folder ``sibling`` beside the task's ``.git``."""
    root = tmp_path / "run"
    _task(root / "candidate" / "task")
    (root / "candidate" / "task" / sibling).mkdir()
    many = root / "candidate" / "aaa"
    many.mkdir()
    for i in range(flood):
        (many / f"f{i}").write_bytes(b"")
    return root


def test_k1_control_a_git_dir_sorted_first_is_pruned_at_the_same_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control of K1: the same flood and cut, the sibling named ``x`` (after ``.git``): the
    ``.git`` is found before the cut and bound pruned; ``x`` is hidden."""
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", 2_000)
    root = _flooded_run(tmp_path, "x", 2_000)
    spec = _prepare_spec(tmp_path, root)
    try:
        binds = sandbox._guard_task_repositories(spec)
        task_git = root / "candidate" / "task" / ".git"
        assert _bound_from(binds, root / "candidate" / "task" / "x")  # the cut happened
        sources = _bound_from(binds, task_git)
        assert sources and all(
            str(s).startswith(str(git_prune.copies_path(spec.trace))) for s in sources
        )
    finally:
        git_prune.remove_copies(spec.trace)


def test_k1_a_git_dir_after_a_cut_sibling_is_not_bound_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seccomp: None
) -> None:
    """K1, closed: ``find_git_dirs`` takes a folder's ``.git`` before its siblings, whatever sorts
    before it, so a cut of the entries falls on ``-x`` (hidden) and the ``.git`` is found and
    bound pruned: the prepare phase's ``git log --all`` sees the base, not the future."""
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", 2_000)
    root = _flooded_run(tmp_path, "-x", 2_000)
    spec = _prepare_spec(tmp_path, root)
    task_git = root / "candidate" / "task" / ".git"
    (tmp_path / "ev").mkdir()
    try:
        proc = _box(spec, _log_all(task_git))
        hidden = _snapshot(spec)["hidden"]
    finally:
        finish_trace(spec, tmp_path / "ev")
        git_prune.remove_copies(spec.trace)
    assert "rc 0" in proc.stdout and "base" in proc.stdout, proc  # control: git ran in the box
    assert any("-x was hidden" in h for h in hidden), hidden  # control: the cut happened
    assert SECRET not in proc.stdout, "the prepare phase read the task's future"


def test_l3_a_git_dir_after_many_cut_siblings_is_hidden_with_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped: K1 with ``MAX_HIDDEN_CUTS + 1`` siblings before ``.git``: ``_coarsen`` lifts
    them to their parent, the task's work tree, hidden whole (its ``.git`` with it)."""
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", 2_000)
    root = _flooded_run(tmp_path, "-x", 2_000)
    task = root / "candidate" / "task"
    for i in range(git_phase_search.MAX_HIDDEN_CUTS):
        (task / f"-{i:03d}").mkdir()
    spec = _prepare_spec(tmp_path, root)
    try:
        binds = sandbox._guard_task_repositories(spec)
        assert _bound_from(binds, task), binds  # the work tree is hidden whole
        assert not _bound_from(binds, task / "-x")
    finally:
        git_prune.remove_copies(spec.trace)


def test_k6_lead_a_queued_cut_holding_a_read_write_folder_refuses_the_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The header's lead, closed with K6: a flood in ``candidate/`` cuts the run directory's
    search while ``evidence`` (holding the read-write ``evidence/prepare``) is still queued; an
    empty folder over it would leave bwrap no mount point for the read-write folder, so the
    phase is refused (``ReadPathCut``, said) rather than given a box that cannot start."""
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", 2_000)
    root = tmp_path / "run"
    _task(root / "candidate" / "task")
    for i in range(2_000):
        (root / "candidate" / f"f{i}").write_bytes(b"")
    spec = _prepare_spec(tmp_path, root)
    try:
        with pytest.raises(sandbox.SandboxUnavailable, match="could not be searched whole"):
            sandbox._guard_task_repositories(spec)
        spec = SandboxSpec(  # control: the run directory written, no read-write folder in it...
            cwd=spec.cwd,
            read_only=spec.read_only,
            read_write=spec.read_write[:1],
            trace=spec.trace,
            written=(root,),
        )
        binds = sandbox._guard_task_repositories(spec)  # ...evidence is hidden, said
        assert _bound_from(binds, root / "evidence"), binds
    finally:
        git_prune.remove_copies(spec.trace)


# -------------------------------------------- K2: a reference name that is not UTF-8


def _odd_ref_repo(repo: Path) -> None:
    """A small repository with a loose branch named ``x\\xff`` (not UTF-8) beside ``main``."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, "lib.py", "v = 1\n", "one")
    head = (repo / ".git" / "refs" / "heads" / "main").read_bytes()
    heads = os.fsencode(repo / ".git" / "refs" / "heads")
    with open(os.path.join(heads, b"x\xff"), "wb") as fh:
        fh.write(head)


def test_k2_a_non_utf8_reference_in_the_cache_does_not_fail_later_runs(tmp_path: Path) -> None:
    """K2, closed: ``_store_key`` reads names as bytes (``os.fsencode``) and a reference name
    that is not UTF-8 is not kept; the later run's train phase starts with the repository bound
    pruned (a ``UnicodeError`` would hide it, said, never crash the start)."""
    cache = tmp_path / "ws" / "cache"
    _odd_ref_repo(cache / "dep")
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
    assert (cache / "dep" / ".git").is_dir()
    try:
        binds = sandbox._guard_task_repositories(spec)  # the train phase starts
        sources = _bound_from(binds, cache / "dep" / ".git")
        copies = str(git_prune.copies_path(spec.trace))
        assert sources and all(str(s).startswith(copies) for s in sources), binds
        assert not [s for s in sources if s.name.endswith(".hidden")], binds  # pruned
        packed = (sources[0] / "packed-refs").read_bytes()
        assert b"refs/heads/main" in packed and b"\xff" not in packed, packed
    except sandbox.SandboxUnavailable as exc:
        pytest.fail(f"the later run's train phase refused: {exc}")
    finally:
        git_prune.remove_copies(spec.trace)


def test_k2_a_non_utf8_reference_in_the_candidate_is_refused_by_the_judges_copy(
    tmp_path: Path,
) -> None:
    """K2, closed: the judge's copy prunes the repository (or refuses it), never crashes."""
    candidate = tmp_path / "run" / "candidate"
    (candidate).mkdir(parents=True)
    (candidate / "train.py").write_text("print('train')\n")
    _odd_ref_repo(candidate / "vendor" / "dep")
    copy = tmp_path / "judge-candidate"
    copy.mkdir()
    report = copy_regular_files(candidate, copy, max_files=10_000, max_bytes=1 << 30)
    assert (copy / "train.py").is_file()
    assert (copy / "vendor" / "dep" / ".git").is_dir() or report.refused


# ---------------------------------------- K3: a repository below a path longer than PATH_MAX


def _deep_folder(top: Path, length: int = 4_200) -> tuple[int, list[str]]:
    """Folders of 250-character names below ``top`` until the absolute path passes ``length``
    bytes (made with relative opens); (a descriptor of the deepest, the names)."""
    names: list[str] = []
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    total = len(str(top))
    while total < length:
        name = chr(ord("a") + len(names) % 26) * 250
        os.mkdir(name, dir_fd=fd)
        nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = nxt
        names.append(name)
        total += 251
    return fd, names


#: In the train box: walk to the clone with relative opens, copy its .git to /tmp (relative
#: opens again), and run git there.
_DEEP_READER = """
import os, subprocess, sys
names = sys.argv[1].split('/')
fd = os.open({top!r}, os.O_RDONLY | os.O_DIRECTORY)
for name in names + ['proj', '.git']:
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
def copy(src_fd, dst):
    os.mkdir(dst)
    for entry in os.scandir(src_fd):
        if entry.is_dir(follow_symlinks=False):
            sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=src_fd)
            copy(sub, os.path.join(dst, entry.name))
            os.close(sub)
        elif entry.is_file(follow_symlinks=False):
            f = os.open(entry.name, os.O_RDONLY, dir_fd=src_fd)
            with open(os.path.join(dst, entry.name), 'wb') as out:
                out.write(os.read(f, 1 << 26))
            os.close(f)
copy(fd, '/tmp/stolen.git')
out = subprocess.run(['git', '--git-dir', '/tmp/stolen.git', 'log', '--all', '-p'],
                     capture_output=True, text=True)
print('rc', out.returncode, 'seen', out.stdout.replace(chr(10), ' | ')[-3000:], out.stderr[-300:])
"""


def _train_spec(tmp_path: Path, cache: Path) -> SandboxSpec:
    """A later run's train box as ``phases._prepare_and_train`` makes it (the cache written)."""
    root = tmp_path / "run"
    (root / "candidate").mkdir(parents=True)
    (root / "evidence" / "train").mkdir(parents=True)
    return SandboxSpec(
        cwd=root / "candidate",
        read_only=(root, cache),
        read_write=(root / "candidate", root / "evidence" / "train"),
        trace=tmp_path / "raw.trace",
        written=(cache,),
    )


def test_k3_a_clone_below_a_path_longer_than_path_max_is_not_bound_whole(
    tmp_path: Path, seccomp: None
) -> None:
    """K3, closed: a folder ``os.scandir`` cannot list (``ENAMETOOLONG``) is a cut as any other:
    in the cache (written) it is hidden, lifted to its deepest parent short enough to be a
    mount point (``_mountable``), said; the reader's relative walk ends at the empty folder."""
    cache = tmp_path / "ws" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")  # the prepare phase's clone of the project: the fix upstream
    shallow = cache / "proj"
    _git(cache, "clone", "-q", "--no-local", str(tmp_path / "upstream"), "proj")
    spec = _train_spec(tmp_path, cache)
    binds = sandbox._guard_task_repositories(spec)  # control: where it can be listed, pruned
    git_prune.remove_copies(spec.trace)
    assert _bound_from(binds, shallow / ".git"), binds
    (cache / "deep").mkdir()
    fd, names = _deep_folder(cache / "deep")
    try:
        os.rename(shallow, "proj", dst_dir_fd=fd)  # the clone, moved below the long path
    finally:
        os.close(fd)
    (tmp_path / "ev").mkdir()
    try:
        binds = sandbox._guard_task_repositories(spec)
        seen = _snapshot(spec)
        git_prune.remove_copies(spec.trace)
        script = _DEEP_READER.format(top=str(cache / "deep"))
        proc = subprocess.run(
            accounted(sandbox.wrap(spec, ["python3", "-c", script, "/".join(names)])),
            env=sandbox_env(dict(_ENV)),
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        finish_trace(spec, tmp_path / "ev")
        git_prune.remove_copies(spec.trace)
        subprocess.run(["rm", "-rf", str(cache / "deep")], check=False)
    hidden = [src for src in binds if src[1].name.endswith(".hidden")]
    assert len(hidden) == 1 and len(os.fsencode(hidden[0][2])) <= 4_000, hidden
    assert str(hidden[0][2]).startswith(str(cache / "deep")), hidden
    # control: the box started and the reader walked down to the hidden (empty) folder
    assert "FileNotFoundError" in proc.stderr, proc
    assert any("could not be listed" in h and "was hidden" in h for h in seen["hidden"]), seen
    assert "rc 0" not in proc.stdout and SECRET not in proc.stdout, "the future read"


# ------------------------------- K4: a folder the search cannot list, evotree not root


_NOBODY = 65534


def _as_user(cache: Path, uid: int | None) -> dict:
    """In a forked child running as ``uid`` (``None``: this user): the search of ``cache``, and
    git's log of the clone through the locked folder, given its path."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns to pytest
        code = 1
        try:
            os.close(read)
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            found, problems = git_guard.find_git_dirs([cache])
            log = subprocess.run(
                ["git", "--git-dir", str(cache / "locked" / "proj" / ".git"), "log", "--all"],
                capture_output=True,
                text=True,
                env={**_ENV, "HOME": str(cache.parent)},
            )
            out = {"found": [str(f) for f in found], "problems": problems, "log": log.stdout}
            os.write(write, json.dumps(out).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as fh:
        data = fh.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0 and data, status
    return json.loads(data)


def test_k4_a_clone_below_an_unlistable_folder_is_found(tmp_path: Path) -> None:
    """K4, closed: a folder of mode ``0o111`` (traversable, not listable) is a cut, said (a
    problem; in a read-only root the candidate writes, hidden). Only a folder that is not this
    user's and cannot be traversed either (``_unreachable``: nothing below it is reached) is
    passed over."""
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="evotree-k4-"))  # traversable by another user
    try:
        os.chmod(top, 0o755)
        cache = top / "cache"
        (cache / "locked").mkdir(parents=True)
        _task(top / "upstream")
        _git(cache / "locked", "clone", "-q", "--no-local", str(top / "upstream"), "proj")
        as_root = os.geteuid() == 0
        if as_root:
            subprocess.run(["chown", "-R", f"{_NOBODY}:{_NOBODY}", str(top)], check=True)

        uid = _NOBODY if as_root else None
        control = _as_user(cache, uid)  # control: listable, the clone is found
        assert control["found"] == [str(cache / "locked" / "proj" / ".git")], control
        os.chmod(cache / "locked", 0o111)
        seen = _as_user(cache, uid)
        assert SECRET in seen["log"], seen  # control: git, given the path, reads the future
        assert seen["found"] or seen["problems"], f"the clone went unseen and unsaid: {seen}"
    finally:
        os.chmod(top / "cache" / "locked", 0o755)
        subprocess.run(["rm", "-rf", str(top)], check=False)


def test_k4_control_a_folder_nothing_reaches_is_passed_over(tmp_path: Path) -> None:
    """The honest control of K4's fix: a folder of another user this process can neither list
    nor traverse (a data disk's ``lost+found``, root's, mode 0700) holds nothing a phase can
    reach: the search passes it over, says nothing (an operator's read path holding one is not
    refused), and still finds the clone beside it."""
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("needs a folder of another user than the searching one: run as root")
    top = Path(tempfile.mkdtemp(prefix="evotree-k4c-"))
    try:
        os.chmod(top, 0o755)
        cache = top / "cache"
        (cache / "locked").mkdir(parents=True)
        _task(top / "upstream")
        _git(cache / "locked", "clone", "-q", "--no-local", str(top / "upstream"), "proj")
        subprocess.run(["chown", "-R", f"{_NOBODY}:{_NOBODY}", str(top)], check=True)
        lost = cache / "lost+found"
        lost.mkdir(mode=0o700)  # root's
        os.chmod(lost, 0o700)
        seen = _as_user(cache, _NOBODY)
        assert SECRET in seen["log"], seen  # control: the search ran as nobody
        assert seen["found"] == [str(cache / "locked" / "proj" / ".git")], seen
        assert seen["problems"] == [], seen
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=False)


# ------------------------ K5: an attested folder holding the cache the prepare phase writes


def test_k5_an_attested_folder_holding_the_cache_does_not_leave_it_unsearched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """K5, closed: ``_attested`` drops a named folder that holds (or is, or lies in) a
    ``written`` folder as it does for read-write ones: the cache is searched, its clone pruned."""
    data = tmp_path / "data"  # the operator's: datasets and the workspace
    (data / "imagenet").mkdir(parents=True)
    cache = data / "proj" / ".evotree" / "cache"
    cache.mkdir(parents=True)
    _task(tmp_path / "upstream")
    _git(cache, "clone", "-q", "--no-local", str(tmp_path / "upstream"), "proj")
    spec = _train_spec(tmp_path, cache)
    spec = SandboxSpec(
        cwd=spec.cwd,
        read_only=(*spec.read_only, data / "imagenet"),
        read_write=spec.read_write,
        trace=spec.trace,
        written=spec.written,
    )
    clone = cache / "proj" / ".git"
    try:
        monkeypatch.setenv(git_guard.ENV_NO_REPOS, str(cache))  # control: the cache itself
        assert [s for s in _bound_from(sandbox._guard_task_repositories(spec), clone)]
        git_prune.remove_copies(spec.trace)
        monkeypatch.setenv(git_guard.ENV_NO_REPOS, str(data))  # the folder holding it
        binds = sandbox._guard_task_repositories(spec)
        assert _bound_from(binds, clone), "the cache's clone is bound whole (its future too)"
    finally:
        git_prune.remove_copies(spec.trace)


# ------------- K6: a cut lifted above a repository the search found: the box cannot start


def test_k6_a_cut_lifted_above_a_found_repository_does_not_stop_later_train_boxes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seccomp: None
) -> None:
    """K6, closed: a repository in a folder hidden by a cut (lifted by ``_coarsen``) is hidden
    with it, said, never bound inside it: the later run's train box starts."""
    # 256 in production: 257 folders then
    monkeypatch.setattr(git_phase_search, "MAX_HIDDEN_CUTS", 8)
    cache = tmp_path / "ws" / "cache"
    repo = cache / "P" / "r"  # what a prepare phase left: a small clone...
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    _commit(repo, "lib.py", "v = 1\n", "one")
    spec = _train_spec(tmp_path, cache)
    (tmp_path / "ev").mkdir()
    script = "print('started')"
    try:
        control = _box(spec, script)  # control: the later train box starts
        assert "started" in control.stdout, control
        for i in range(git_phase_search.MAX_HIDDEN_CUTS + 1):  # ...and folders 66 deep beside it
            (cache / "P" / f"d{i:03d}" / "/".join(["d"] * 66)).mkdir(parents=True)
        proc = _box(spec, script)
    finally:
        finish_trace(spec, tmp_path / "ev")
        git_prune.remove_copies(spec.trace)
    assert "Read-only file system" in proc.stderr or "started" in proc.stdout, proc
    assert "started" in proc.stdout, f"the later run's train box did not start: {proc.stderr}"
    hidden = _snapshot(spec)["hidden"]
    assert any(str(repo / ".git") in h and "hidden with it" in h for h in hidden), hidden


# ------------------- K7: a dataset's shards named pack-* taken for a store by their names


def test_k7_a_dataset_shard_named_pack_is_no_object_store(tmp_path: Path) -> None:
    """K7, closed: ``_reads_pack`` reads git's magic for every ``*.pack`` (``PACK``) and ``*.idx``
    (``\\377tOc``), ``pack-*`` too: a dataset's ``pack-00000.{bin,idx}`` is copied."""
    work = tmp_path / "run" / "candidate"
    shards = work / "data" / "pack"
    shards.mkdir(parents=True)
    (shards / "pack-00000.bin").write_bytes(b"\0" * 4096)
    (shards / "pack-00000.idx").write_bytes(b"MMIDIDX\x00\x00" + b"\0" * 64)
    (work / "train.py").write_text("print('train')\n")
    copy = tmp_path / "judge-candidate"
    copy.mkdir()
    report = copy_regular_files(work, copy, max_files=10_000, max_bytes=1 << 30)
    assert (copy / "train.py").is_file()  # control: the copy ran
    assert (copy / "data" / "pack" / "pack-00000.idx").is_file(), report.refused
    assert not report.refused, report.refused


def test_k7_control_git_packs_are_a_store_by_their_magic_whatever_their_names(
    tmp_path: Path,
) -> None:
    """The control of K7's fix: git's own pack and index, under a dataset's names, still make a
    store — the pack alone (``PACK``), the index alone (``\\377tOc``)."""
    repo = tmp_path / "repo"
    _task(repo)
    _git(repo, "repack", "-a", "-d", "-q")
    packs = repo / ".git" / "objects" / "pack"
    pack = next(packs.glob("*.pack"))
    index = pack.with_suffix(".idx")
    for name, src in (("shard-0.pack", pack), ("pack-0.idx", index), ("data.idx", index)):
        store = tmp_path / f"store-{name}"
        (store / "pack").mkdir(parents=True)
        (store / "pack" / name).write_bytes(src.read_bytes())
        assert git_guard.is_object_store(store), name
    honest = tmp_path / "honest"
    (honest / "pack").mkdir(parents=True)
    (honest / "pack" / "pack-0.pack").write_bytes(b"PAK" + b"\0" * 64)
    (honest / "pack" / "pack-0.idx").write_bytes(b"\0" * 1024)  # no magic: no store
    assert not git_guard.is_object_store(honest)


# ---------------------------------------------- L1: FIFOs and links in a pack/ folder


def test_l1_a_fifo_in_a_pack_folder_does_not_block_the_recogniser(tmp_path: Path) -> None:
    """Stopped: the magic is read ``O_NONBLOCK|O_NOFOLLOW``: a FIFO named ``x.pack`` or
    ``multi-pack-index`` is read as no magic at once (no writer needed), and a link named
    ``x.pack`` counts as a pack (git follows it)."""
    store = tmp_path / "store"
    (store / "pack").mkdir(parents=True)
    os.mkfifo(store / "pack" / "x.pack")
    os.mkfifo(store / "pack" / "multi-pack-index")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pathlib import Path; from evotree.harness import git_guard; "
            f"print(git_guard.is_object_store(Path({str(store)!r})))",
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.stdout.strip() == "False", proc
    os.unlink(store / "pack" / "x.pack")
    os.symlink("/nonexistent/elsewhere.pack", store / "pack" / "y.pack")
    assert git_guard.is_object_store(store)


# ------------------------------------------------------------ L2: the one deadline spent


def test_l2_a_spent_deadline_hides_every_repository_never_binds_one_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped: with ``PRUNE_SECONDS`` spent before the first git call, every task repository of
    the start is hidden (an empty folder bound over it, said), none bound from the original."""
    work = tmp_path / "run" / "candidate"
    _task(work / "task")
    _task(work / "other")
    monkeypatch.setattr(git_guard, "PRUNE_SECONDS", 0.0)
    trace = tmp_path / "raw.trace"
    try:
        binds = git_guard.before_phase([work], trace, read_only=[tmp_path / "run"])
        for name in ("task", "other"):
            sources = _bound_from(binds, work / name / ".git")
            assert sources and all(s.name.endswith(".hidden") for s in sources), binds
        assert not [s for _, s, _ in binds if str(s).startswith(str(work))]
        said = json.loads(git_guard.snapshot_path(trace).read_text())["hidden"]
        assert any("time allowed for pruning" in h for h in said), said
    finally:
        git_prune.remove_copies(trace)


# ------------------------------------------------------------------ L4: past the cap


def test_l4_past_the_cap_a_repository_is_hidden_never_bound_whole(tmp_path: Path) -> None:
    """Stopped: 33 repositories in the candidate folder (written by the candidate) - the 33rd
    in the search's order is hidden (an empty folder), none is bound from the original."""
    work = tmp_path / "run" / "candidate"
    for i in range(git_guard.MAX_PRUNED):
        repo = work / f"dep{i:02d}"
        repo.mkdir(parents=True)
        _git(repo, "init", "-q", "-b", "main")
        _commit(repo, "lib.py", f"v = {i}\n", f"dep {i}")
    _task(work / "zz-task")  # the 33rd: the task, last in the search's order
    trace = tmp_path / "raw.trace"
    try:
        binds = git_guard.before_phase([work], trace, read_only=[tmp_path / "run"])
        sources = _bound_from(binds, work / "zz-task" / ".git")
        assert sources and all(s.name.endswith(".hidden") for s in sources), sources
        assert not [s for _, s, _ in binds if str(s).startswith(str(work))]
    finally:
        git_prune.remove_copies(trace)
