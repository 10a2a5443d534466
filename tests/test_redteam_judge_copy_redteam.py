"""Red team of the judge's copy of the candidate and of the read-only folders' own bound (issue 29).

Two commits, red-teamed here by a helper who wrote neither: f925d2f (the judge's copy of the
candidate, ``harness/sandbox_copy.py::copy_regular_files``, carries a ``.git`` folder found in
the candidate's folder pruned at its base, or refuses it) and 59ee07b (a phase's read-only
folders are searched for task repositories to 100,000 entries, a cut there said in the
snapshot's ``hidden``, not a row). The attacker is the candidate: its code in the train phase
writes the candidate folder the judge later copies (and, through the prepare phase, the shared
cache); its code in the judge phase (a test file or conftest a task's tests import, the gym
policy) reads what the judge's box holds. The future is ``FUTURE_SECRET_42`` (``_task``); a host
repository outside every bind holds ``HOST_SECRET_77``. The first line is on in every attack.
Each asserts its attack ran (a control). An attack that wins is ``xfail(strict=False)``
asserting the safe outcome, its reason the mechanism; one that is stopped passes, saying by
what. Results against 3c00b7b:

- A, a colon in a folder name (WON): ``git_prune._git`` hands the task's store to host git as
  ``GIT_ALTERNATE_OBJECT_DIRECTORIES=<git dir>/objects``, a colon-separated list: a git
  directory under ``s:t/`` makes host git read ``<...>/s`` too — a link the candidate left
  there, to any store of the host, or with no link at all folders ``x:`` then the store's own
  path — and pack from it whatever commit HEAD names. The judge's
  copy then holds the task's future (its id known: a public fix) or a host repository's content;
  A2: the same repository left in the cache by the prepare phase is pruned that way before the
  train phase, which reads the host's content in its box.
- B, a task repository not named ``.git`` (WON): a bare repository (``upstream.git``) or a
  separate git directory (``.repo-git`` named by a ``.git`` file) — both task repositories to
  ``git_guard.find_git_dirs`` (the train phase prunes them) — goes into the judge's copy whole,
  and the judge phase is not traced (no ``before_phase``): its box reads the future.
- C, a ``.git`` file naming the original store, absolute or relative (stopped: the original
  candidate folder is masked in the judge's box; the relative one names the pruned copy); C2,
  a submodule's store holding a future branch, a ``.git`` under a folder named with a newline
  and an escape sequence (stopped: pruned like any other); a repository under a folder whose
  name holds a colon (honest work, a change: refused, as host git splits the path — see A).
  C3 (WON, a lead): a ``.git`` the train phase made keeps its config in the judge's copy, so
  ``core.fsmonitor`` runs the candidate's program when the judge's own code runs ``git diff``
  there (it wrote a forged ``evidence/eval/score.json``); no shipped domain's judge does.
- D, the operator's ``[sandbox] read_paths`` in the judge phase (WON): the judge is untraced,
  so a task repository there is bound whole (the train phase prunes it).
- E, the read-only bound (WON): ``find_git_dirs`` counts entries across all the read-only roots
  at once and the run directory comes first; the prepare phase writes ``evidence/prepare`` in
  it, so 100,000 entries there leave the operator's read paths unsearched before the train phase
  — a task repository there is bound whole, and the cut is said only in the snapshot's
  ``hidden``, which nothing reads (no row, no audit, no note on the run).
  E2: a train process left running to race the copy (stopped: the box is a pid namespace,
  nothing of the phase outlives it).
- F, host-side limits (WON, three ways): a folder ~1,000 deep crashes the copy (RecursionError:
  no refusal, the run fails as evotree's own error, not charged); the pruning of one ``.git``
  (its ``modules/`` too, 200 a level, nested) runs to the end before the copy's limits are
  checked; the pack of a ``.git`` refused as over the limit is kept in the host's prune cache.
- G, honest work (a change): a repository the train phase made loses its other branches in
  the judge's copy (only what HEAD reaches goes across).
- Not attacked, why: cache poisoning (a key holds the store's path and the identity of its
  folders and packs); a race on the shared cache (the prepare phase of a concurrent run
  rewriting a repository there between ``_check_self_contained`` and host git — e.g. adding
  ``objects/info/alternates`` — is possible with ``jobs > 1`` but timing-dependent: a lead, A
  already reaches the same without a race); a refused name holding a newline goes raw into
  the run's notes (``phases._note_refused``: a line the candidate writes; a lead); a HEAD, shallow file or references naming the future in a repository the
  candidate made (it holds no future object to name: only A brings one in; the rest was the
  first red team's, ``tests/test_redteam_task_prune_redteam.py``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_task_prune import _ENV, SECRET, _commit, _git, _task

from evotree.harness import (
    git_guard,
    git_phase_search,
    git_prune,
    git_relations,
    git_store_read,
)
from evotree.harness.sandbox import finish_trace, wrap
from evotree.harness.sandbox_copy import copy_regular_files
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture

#: content of a repository of the host outside the task (never bound into a box)
HOST_SECRET = "HOST_SECRET_77"


@pytest.fixture(autouse=True)
def _first_line_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The first line on (the default), and a private prune cache (the host's is left alone)."""
    monkeypatch.delenv(git_prune.ENV_TASK_REPOS, raising=False)
    cache = tmp_path / "prune-cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setattr(git_prune, "_cache_root", lambda: cache)


def _host_repo(path: Path) -> str:
    """A repository of the host holding ``HOST_SECRET``; its commit's id."""
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    return _commit(path, "h.txt", f"{HOST_SECRET}\n", "host")


def _copy(candidate: Path, tmp_path: Path, **limits: int) -> tuple[Path, list[str]]:
    """The judge's copy of ``candidate`` (``phases._judge``'s call); its folder, refusals."""
    copy = tmp_path / "judge-candidate"
    copy.mkdir()
    report = copy_regular_files(
        candidate,
        copy,
        max_files=limits.get("max_files", 100_000),
        max_bytes=limits.get("max_bytes", 1 << 30),
    )
    return copy, report.refused


def _all_text(git_dir: Path) -> str:
    """Every object of ``git_dir`` as git prints it (packs are compressed: bytes lie)."""
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        env=_ENV,
    )
    return proc.stdout.decode("utf-8", "replace")


def _box(spec: SandboxSpec, script: str) -> subprocess.CompletedProcess:
    """``python3 -c script`` in the sandbox ``spec`` describes."""
    return subprocess.run(
        accounted(wrap(spec, ["python3", "-c", script])),
        env=sandbox_env(dict(_ENV)),
        capture_output=True,
        text=True,
        timeout=180,
    )


def _judge_spec(root: Path, copy: Path, extra: tuple[Path, ...] = ()) -> SandboxSpec:
    """The judge phase's box as ``harness/executors/phases.py::_judge`` makes it (no trace: the
    judge is not a train-side phase; its policy sandbox left out)."""
    fresh = root.parent / "judge-fresh"
    fresh.mkdir(exist_ok=True)
    planted = root / "evidence" / "eval"
    planted.mkdir(parents=True, exist_ok=True)
    return SandboxSpec(
        cwd=fresh,
        read_only=(root, fresh, copy, *extra),
        read_write=(planted,),
        masked=(root / "candidate",),
    )


def _log_all(git_dir: Path) -> str:
    """A script printing ``git --git-dir <git_dir> log --all -p`` (rc and text, one line)."""
    return (
        "import subprocess\n"
        f'out = subprocess.run(["git", "--git-dir", "{git_dir}", "log", "--all", "-p"],'
        " capture_output=True, text=True)\n"
        'print("rc", out.returncode, "seen", out.stdout.replace("\\n", " | ")[-3000:],'
        " out.stderr[-300:])\n"
    )


# ----------------------------------------------- A: a colon in a folder name (host git, alternates)

_COLON = ("future-of-the-task", "host-repository", "no-link-folders-only")


@pytest.mark.parametrize("store", _COLON)
def test_a_colon_in_a_folder_name_points_host_git_at_a_linked_store(
    tmp_path: Path, store: str
) -> None:
    candidate = tmp_path / "run" / "candidate"
    ids = _task(candidate / "task")
    evil = candidate / "s:t"
    if store == "future-of-the-task":
        target, head, secret = "task/.git/objects", ids["future"], SECRET
    else:
        head = _host_repo(tmp_path / "host")
        target, secret = str(tmp_path / "host" / ".git" / "objects"), HOST_SECRET
        if store == "no-link-folders-only":
            evil = candidate / "x:" / (tmp_path / "host").relative_to("/")
    evil.mkdir(parents=True)
    _git(evil, "init", "-q", "-b", "main")
    (evil / ".git" / "HEAD").write_text(head + "\n")
    if store != "no-link-folders-only":
        os.symlink(target, candidate / "s")
    assert secret not in _all_text(evil / ".git")  # the repository holds nothing of its own
    copy, refused = _copy(candidate, tmp_path)
    assert (copy / "task" / "a.txt").read_text() == "base\n"  # control: the copy ran
    assert SECRET not in _all_text(copy / "task" / ".git")  # the task itself is pruned
    if store != "no-link-folders-only":
        assert any(r.startswith("s: symbolic link") for r in refused), refused
    carried = copy / evil.relative_to(candidate) / ".git"
    text = _all_text(carried) if carried.exists() else ""
    assert secret not in text, text[-500:]


@pytest.mark.heavy
@pytest.mark.parametrize("store", _COLON[:2])
def test_a_repository_the_prepare_phase_left_in_the_cache_reads_a_host_store(
    tmp_path: Path, seccomp: None, store: str
) -> None:
    work = tmp_path / "run" / "candidate"
    ids = _task(work)
    if store == "future-of-the-task":
        head, target, secret = ids["future"], work / ".git" / "objects", SECRET
    else:
        head = _host_repo(tmp_path / "host")
        target, secret = tmp_path / "host" / ".git" / "objects", HOST_SECRET
    cache = tmp_path / "cache"
    cache.mkdir()
    _git(cache, "init", "-q", "--bare", "s:t")
    (cache / "s:t" / "HEAD").write_text(head + "\n")
    os.symlink(str(target), cache / "s")
    spec = SandboxSpec(
        cwd=work,
        read_only=(tmp_path / "run", cache),
        read_write=(work,),
        trace=tmp_path / "raw.trace",
    )
    script = (
        "import subprocess\n"
        "for d in ('.git', '" + str(cache) + "/s:t'):\n"
        '    out = subprocess.run(["git", "--git-dir", d, "log", "--all", "-p"],'
        " capture_output=True, text=True)\n"
        '    print(d, out.returncode, out.stdout.replace("\\n", " | "), out.stderr[-300:])\n'
    )
    proc = _box(spec, script)
    snap = json.loads(git_guard.snapshot_path(spec.trace).read_text())
    (tmp_path / "ev").mkdir()
    rows = finish_trace(spec, tmp_path / "ev")
    assert proc.stdout.startswith(".git 0"), proc.stdout + proc.stderr[-2000:]  # it ran
    own = proc.stdout.split(str(cache))[0]
    assert "base" in own and SECRET not in own  # control: the task itself is pruned
    assert str(cache / "s:t") in [r["path"] for r in snap["repos"]] or any(
        h.startswith(f"{cache / 's:t'} could not be pruned") for h in snap["hidden"]
    )  # pruned or hidden (since the fix: its HEAD names no commit of its own store)
    flagged = [r for r in rows if isinstance(r, dict) and r.get("kind") == "git_state"]
    assert secret not in proc.stdout or flagged, proc.stdout.split(str(cache))[-1][:3000]


# ------------------------------------------------------- B: a task repository not named .git


def _bare(candidate: Path) -> Path:
    """The image's bare clone of the task (all its branches) at candidate/upstream.git."""
    _git(candidate, "clone", "-q", "--no-hardlinks", "--mirror", "task", "upstream.git")
    return candidate / "upstream.git"


def _separate(candidate: Path) -> Path:
    """A clone whose git directory is candidate/.repo-git, named by repo/.git (relative)."""
    _git(candidate, "clone", "-q", "--no-hardlinks", "--no-checkout", "task", "repo")
    os.rename(candidate / "repo" / ".git", candidate / ".repo-git")
    (candidate / "repo" / ".git").write_text("gitdir: ../.repo-git\n")
    _git(
        candidate / "repo",
        "update-ref",
        "refs/heads/fix",
        _git(candidate / "task", "rev-parse", "fix"),
    )
    return candidate / ".repo-git"


_LAYOUTS = {"bare-upstream.git": _bare, "separate-git-dir": _separate}


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
def test_a_task_repository_not_named_git_goes_to_the_judge_whole(
    tmp_path: Path, layout: str
) -> None:
    candidate = tmp_path / "run" / "candidate"
    _task(candidate / "task")
    store = _LAYOUTS[layout](candidate)
    found, _ = git_guard.find_git_dirs([candidate])
    assert store in found  # control: a task repository to the guard (the train phase prunes it)
    assert SECRET in _all_text(store)  # control: it holds the future
    copy, _ = _copy(candidate, tmp_path)
    assert SECRET not in _all_text(copy / "task" / ".git")  # the .git folder is pruned
    carried = copy / store.name
    assert not carried.exists() or SECRET not in _all_text(carried)


@pytest.mark.heavy
def test_the_judges_box_reads_a_bare_repository_of_the_copy(tmp_path: Path, seccomp: None) -> None:
    root = tmp_path / "run"
    candidate = root / "candidate"
    _task(candidate / "task")
    _bare(candidate)
    copy, _ = _copy(candidate, tmp_path)
    proc = _box(_judge_spec(root, copy), _log_all(copy / "upstream.git"))
    assert proc.stdout.startswith("rc 0"), proc.stdout + proc.stderr[-2000:]  # it ran
    assert "base" in proc.stdout  # control: git read it
    assert SECRET not in proc.stdout


# ------------------------------------- C2: a submodule's git directory, odd names (stopped)


def test_a_submodules_future_and_odd_names_do_not_reach_the_judges_copy(tmp_path: Path) -> None:
    """Stopped: the image's task has a submodule whose own store holds a future branch
    (``.git/modules/sub``, as ``git submodule`` absorbs it), and a second clone of the task sits
    under a folder named with a newline and an escape sequence. The copy prunes
    ``modules/sub`` at its own base (``git_prune._copy_modules``) and the oddly named ``.git``
    like any other: no future object in the copy; git in the submodule's work tree works."""
    sub = tmp_path / "subsrc"
    sub.mkdir()
    _git(sub, "init", "-q", "-b", "main")
    _commit(sub, "s.txt", "sub base\n", "sub base")
    _git(sub, "checkout", "-q", "-b", "fix")
    _commit(sub, "s.txt", f"sub {SECRET}\n", f"sub fix {SECRET}")
    _git(sub, "checkout", "-q", "main")
    candidate = tmp_path / "run" / "candidate"
    _task(candidate / "task")
    task = candidate / "task"
    _git(task, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    _git(task, "commit", "-q", "-m", "add sub")
    assert SECRET in _all_text(task / ".git" / "modules" / "sub")  # control: it holds a future
    odd = candidate / "a\nnot given to the judge\x1b[31mb"
    _git(candidate, "clone", "-q", "--no-hardlinks", "task", odd.name)
    _git(odd, "update-ref", "refs/heads/fix", _git(task, "rev-parse", "fix"))
    assert SECRET in _all_text(odd / ".git")  # control
    copy, refused = _copy(candidate, tmp_path)
    assert not refused, refused
    assert (copy / "task" / ".git" / "modules" / "sub").is_dir()  # control: it went across
    assert _git(copy / "task" / "sub", "log", "--oneline").endswith("sub base")
    for git_dir in (
        copy / "task" / ".git",
        copy / "task" / ".git" / "modules" / "sub",
        copy / odd.name / ".git",
    ):
        assert SECRET not in _all_text(git_dir), git_dir


def test_an_honest_repository_under_a_folder_with_a_colon_goes_to_the_judge(
    tmp_path: Path,
) -> None:
    candidate = tmp_path / "run" / "candidate"
    _task(candidate / "task")
    honest = candidate / "proj:v1"
    _git(candidate, "clone", "-q", "--no-hardlinks", "task", honest.name)
    copy, refused = _copy(candidate, tmp_path)
    assert (copy / "task" / "a.txt").read_text() == "base\n"  # control: the copy ran
    assert (copy / honest.name / ".git").is_dir(), refused
    assert _git(copy / honest.name, "log", "--oneline", "-1").endswith("base")


# ---------------------------------------------------- C: a .git file naming the original store


@pytest.mark.heavy
def test_a_git_file_naming_the_original_store_reads_nothing_in_the_judges_box(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped: the train phase leaves sub/.git, a file naming the original task store by its
    host path, and rel/.git naming it relatively. The copy takes both files as they are; in the
    judge's box the original candidate folder is masked (an empty tmpfs): git in copy/sub finds
    no repository; git in copy/rel reads the pruned copy (its base, no future)."""
    root = tmp_path / "run"
    candidate = root / "candidate"
    _task(candidate / "task")
    for name, gitdir in (("sub", candidate / "task" / ".git"), ("rel", "../task/.git")):
        (candidate / name).mkdir()
        (candidate / name / ".git").write_text(f"gitdir: {gitdir}\n")
    copy, _ = _copy(candidate, tmp_path)
    script = (
        "import subprocess\n"
        "for name in ('sub', 'rel'):\n"
        f'    out = subprocess.run(["git", "-C", "{copy}/" + name, "log", "--all", "-p"],'
        " capture_output=True, text=True)\n"
        '    print(name, out.returncode, out.stdout.replace("\\n", " | ")[-2000:],'
        " out.stderr[-200:])\n"
    )
    proc = _box(_judge_spec(root, copy), script)
    assert "sub " in proc.stdout and "rel 0" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert "base" in proc.stdout  # control: git in rel read the (pruned) task
    assert SECRET not in proc.stdout


# ------------------------------------- C3: the judge's own git in the copy runs the candidate's


@pytest.mark.heavy
def test_the_judges_own_git_in_the_copy_runs_a_program_the_candidate_configured(
    tmp_path: Path, seccomp: None
) -> None:
    root = tmp_path / "run"
    candidate = root / "candidate"
    candidate.mkdir(parents=True)
    _git(candidate, "init", "-q", "-b", "main")
    _commit(candidate, "solution.py", "x = 1\n", "base")
    planted = root / "evidence" / "eval"
    forged = planted / "score.json"
    _git(candidate, "config", "core.fsmonitor", f"echo '{{\"score\": 1}}' > {forged}; false")
    (candidate / "solution.py").write_text("x = 2\n")
    copy, refused = _copy(candidate, tmp_path)
    assert not refused and (copy / ".git" / "objects" / "pack").is_dir(), refused  # pruned
    judge = (
        "import subprocess\n"
        f'out = subprocess.run(["git", "-C", "{copy}", "diff", "--stat"], capture_output=True,'
        " text=True)\n"
        'print("rc", out.returncode, out.stdout.strip())\n'
    )
    proc = _box(_judge_spec(root, copy), judge)
    assert proc.stdout.startswith("rc 0") and "solution.py" in proc.stdout, (
        proc.stdout + proc.stderr[-2000:]
    )  # control: the judge's git read the candidate's change
    assert not forged.exists(), forged.read_text()


# ------------------------------------------------- D: the operator's read paths in the judge


@pytest.mark.heavy
def test_the_judge_binds_the_operators_read_paths_whole(tmp_path: Path, seccomp: None) -> None:
    root = tmp_path / "run"
    (root / "candidate").mkdir(parents=True)
    data = tmp_path / "data"
    _task(data / "task")
    train = SandboxSpec(
        cwd=root / "candidate",
        read_only=(root, data),
        read_write=(root / "candidate",),
        trace=tmp_path / "raw.trace",
    )
    trained = _box(train, _log_all(data / "task" / ".git"))
    (tmp_path / "ev").mkdir()
    finish_trace(train, tmp_path / "ev")
    assert trained.stdout.startswith("rc 0") and "base" in trained.stdout, trained.stdout
    assert SECRET not in trained.stdout  # control: the train phase sees it pruned
    copy = tmp_path / "judge-candidate"
    copy.mkdir()
    proc = _box(_judge_spec(root, copy, (data,)), _log_all(data / "task" / ".git"))
    assert proc.stdout.startswith("rc 0") and "base" in proc.stdout, proc.stdout + proc.stderr
    assert SECRET not in proc.stdout


# ----------------------------------------------- E: the read-only bound, cut by an earlier phase


@pytest.mark.heavy
def test_a_flood_in_the_run_directory_cuts_the_search_of_the_operators_read_paths(
    tmp_path: Path, seccomp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the bound set low (947e2b1 raised it to 2,000,000 entries: as many files made here took
    # the test past its 300 s under load); the flood is one more entry than the bound, as before
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", 50_000)
    root = tmp_path / "run"
    work = root / "candidate"
    work.mkdir(parents=True)
    flood = root / "evidence" / "prepare"
    flood.mkdir(parents=True)
    for i in range(git_phase_search.MAX_READ_ONLY_ENTRIES + 1):
        os.close(os.open(flood / f"{i:06d}", os.O_CREAT | os.O_WRONLY, 0o644))
    (root / "evidence" / "train").mkdir()
    data = tmp_path / "data"
    _task(data / "task")
    spec = SandboxSpec(
        cwd=work,
        read_only=(root, data),
        read_write=(work, root / "evidence" / "train"),
        trace=tmp_path / "raw.trace",
    )
    proc = _box(spec, _log_all(data / "task" / ".git"))
    snap = json.loads(git_guard.snapshot_path(spec.trace).read_text())
    (tmp_path / "ev").mkdir()
    finish_trace(spec, tmp_path / "ev")
    rows = git_guard.after_phase(spec.trace) if spec.trace.exists() else []
    assert proc.stdout.startswith("rc 0") and "base" in proc.stdout, proc.stdout + proc.stderr
    # control (since the fix: each root its own bound, so the flood cuts nothing): the
    # operator's read path was searched
    assert str(data / "task" / ".git") in [r["path"] for r in snap["repos"]], snap
    assert SECRET not in proc.stdout or rows, (proc.stdout[-300:], rows)


# ------------------------------------------- E2: a train process left running (stopped)

_DAEMON = """\
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["{marker}", "60"])
    os._exit(0)
time.sleep(0.5)
seen = [p for p in os.listdir("/proc") if p.isdigit()
        and open("/proc/" + p + "/cmdline", "rb").read().startswith(b"{marker}")]
print("left", len(seen))
"""


@pytest.mark.heavy
def test_no_train_process_outlives_the_phase_to_race_the_copy(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped: a train phase double-forks a process into a session of its own and exits, to
    keep writing the candidate folder while the judge copies it. The box is a pid namespace
    (bwrap --unshare-all, --die-with-parent): when the phase ends, nothing of it is alive."""
    marker = f"evotree-redteam-daemon-{os.getpid()}-{time.monotonic_ns()}"
    work = tmp_path / "run" / "candidate"
    work.mkdir(parents=True)
    spec = SandboxSpec(
        cwd=work, read_only=(tmp_path / "run",), read_write=(work,), trace=tmp_path / "raw.trace"
    )
    proc = _box(spec, _DAEMON.format(marker=marker))
    (tmp_path / "ev").mkdir()
    finish_trace(spec, tmp_path / "ev")
    assert proc.stdout.strip() == "left 1", proc.stdout + proc.stderr[-2000:]  # it ran
    time.sleep(0.3)
    alive = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and (Path("/proc") / pid / "cmdline").read_bytes().startswith(
                marker.encode()
            ):
                alive.append(pid)
        except OSError:
            continue
    assert alive == []


# ------------------------------------------------------------------- F: host-side limits

_DEPTH = 1100


def test_a_deep_folder_crashes_the_judges_copy(tmp_path: Path) -> None:
    candidate = tmp_path / "run" / "candidate"
    deep = candidate / "/".join(["d"] * _DEPTH)
    candidate.mkdir(parents=True)
    for level in range(1, _DEPTH + 1):  # a loop: pathlib's mkdir(parents=True) recurses itself
        os.mkdir(candidate / "/".join(["d"] * level))
    (deep / "f").write_text("x")
    (candidate / "ok.txt").write_text("ok")
    assert _DEPTH > sys.getrecursionlimit()  # control: deeper than Python recurses
    try:
        copy, refused = _copy(candidate, tmp_path)
        assert (copy / "ok.txt").read_text() == "ok"
        assert refused or (copy / "/".join(["d"] * _DEPTH) / "f").exists()
    finally:  # rm, not Python: pytest's own removal of tmp_path recurses and fails at this depth
        subprocess.run(
            ["rm", "-rf", str(candidate), str(tmp_path / "judge-candidate")], check=False
        )


_MODULES = 40


def test_the_copy_prunes_everything_before_it_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    candidate = tmp_path / "run" / "candidate"
    candidate.mkdir(parents=True)
    _git(candidate, "init", "-q", "-b", "main")
    for i in range(_MODULES):
        module = candidate / ".git" / "modules" / f"m{i}"
        (module / "objects").mkdir(parents=True)
        (module / "refs").mkdir()
        (module / "HEAD").write_text("ref: refs/heads/main\n")
        (module / "config").write_text("")
    calls = []
    real = git_prune._git

    def counting(*args: object, **kwargs: object) -> tuple[int, bytes, str]:
        calls.append(args[1:2])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    for module in (git_prune, git_relations, git_store_read):  # every caller of host git
        monkeypatch.setattr(module, "_git", counting)
    started = time.monotonic()
    _, refused = _copy(candidate, tmp_path, max_files=5)
    took = time.monotonic() - started
    assert any(r.startswith(".git: over the copy limit") for r in refused), refused  # control
    assert len(calls) <= 10, f"{len(calls)} host git calls in {took:.2f}s before the refusal"


def test_a_refused_git_directory_leaves_its_pack_in_the_hosts_cache(tmp_path: Path) -> None:
    candidate = tmp_path / "run" / "candidate"
    candidate.mkdir(parents=True)
    _git(candidate, "init", "-q", "-b", "main")
    (candidate / "big.bin").write_bytes(os.urandom(3 << 20))
    _git(candidate, "add", "big.bin")
    _git(candidate, "commit", "-q", "-m", "big")
    (candidate / "big.bin").unlink()
    _, refused = _copy(candidate, tmp_path, max_bytes=1 << 20)
    assert any(r.startswith(".git: over the copy limit") for r in refused), refused  # control
    kept = sum(p.stat().st_size for p in (tmp_path / "prune-cache").rglob("*") if p.is_file())
    assert kept < 1 << 20, f"{kept} bytes kept in the cache"


# ------------------------------------------------------------------------- G: honest work


@pytest.mark.xfail(
    strict=False,
    reason="A change to honest work (not documented for the judge's copy): a repository the "
    "train phase made in the candidate folder (its outputs committed, an experiment on another "
    "branch) goes to the judge pruned at HEAD — the branch is gone, so a judge reading it (git "
    "log --all, git show exp:...) fails (its stash and reflog go the same way: not checked "
    "here).",
)
def test_a_repository_the_candidate_made_keeps_its_branches_in_the_judges_copy(
    tmp_path: Path,
) -> None:
    candidate = tmp_path / "run" / "candidate"
    candidate.mkdir(parents=True)
    _git(candidate, "init", "-q", "-b", "main")
    _commit(candidate, "out.txt", "result\n", "result")
    _git(candidate, "checkout", "-q", "-b", "exp")
    _commit(candidate, "exp.txt", "experiment\n", "experiment")
    _git(candidate, "checkout", "-q", "main")
    copy, refused = _copy(candidate, tmp_path)
    assert not refused and (copy / "out.txt").read_text() == "result\n"  # control
    assert _git(copy, "log", "--oneline", "main") != ""  # HEAD's history went across
    branches = _git(copy, "branch", "--format=%(refname:short)").split()
    assert "exp" in branches, branches
