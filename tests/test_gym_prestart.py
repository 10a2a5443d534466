"""The policy's process started early (``launch.prestart``): the attacker's view of it.

The judge phase starts its policy's process first thing, before it imports numpy, gymnasium
or its settings (``evotree.domains.gym.judge.main``), and its first worker adopts it. These
tests check that the early process is the one that plays, that it gets what a process started
late gets and nothing more (its own two pipes and the standard descriptors, no ``EVOTREE_*``
variable), and that the attacker's spy of ``tests/test_sandbox_gym_seed.py``, run both when
policy.py is imported (the judge has read nothing yet) and at the episode's reset (the judge
holds the seed), finds the seed nowhere it does not find it in a process started late: in
the nested sandbox nowhere, in a plain process not in its own memory, arguments, environment
or its parent's environment and command line.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("gymnasium")

from evotree.domains.gym import launch  # noqa: E402
from evotree.domains.gym.runner import Task, run_episodes  # noqa: E402
from evotree.harness.sandbox import check_policy_sandbox, policy_sandbox_spec  # noqa: E402
from evotree.harness.sandbox_spec import PolicySandbox  # noqa: E402
from test_sandbox_gym_seed import ENV, SEED, SPY, _report  # noqa: E402

#: appended to the spy: what the process holds when policy.py is imported (right after its
#: start) and again at reset; the report carries both
EARLY = r"""
import os as _os


def _fds():
    return [fd for fd in range(1024) if _is_open(fd)]


def _is_open(fd):
    try:
        _os.fstat(fd)
    except OSError:
        return False
    return True


def _look():
    found, tried = spy(None, None)
    return {
        "found": found,
        "tried": tried,
        "fds": _fds(),
        "pipes": [int(a) for a in sys.argv[1:3]],
        "evotree_env": sorted(k for k in _os.environ if k.startswith("EVOTREE")),
        "pid": _os.getpid(),
    }


AT_IMPORT = _look()
_spy_reset = Policy.reset


def _reset(self, *args):
    try:
        _spy_reset(self, *args)
    except RuntimeError as exc:
        report = json.loads(str(exc).split("REPORT", 1)[1].split("TROPER", 1)[0])
        report.update(_look(), found=report["found"], tried=report["tried"], at_import=AT_IMPORT)
        raise RuntimeError("REPORT" + json.dumps(report) + "TROPER") from None


Policy.reset = _reset
"""

#: what a plain policy process must never find of the seed (its own process: the nested
#: sandbox's to close the rest, see test_sandbox_gym_seed.py)
IN_PROCESS = {
    "numpy state",
    "action space generator",
    "observation space generator",
    "frames",
    "inspect.stack",
    "gc",
    "argv or environment",
    "parent environ",
    "parent cmdline",
}


def _setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A judge folder holding the seed (its working directory, as in test_sandbox_gym_seed.py),
    a candidate holding the spy with :data:`EARLY`; no early process left from another test."""
    judge = tmp_path / "judge-dir"
    (judge / "judge").mkdir(parents=True)
    (judge / "judge" / "gym.toml").write_text(f'[pools.validation]\n"{ENV}" = [{SEED}]\n')
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    digest = hashlib.sha256(str(SEED).encode()).hexdigest()
    (candidate / "policy.py").write_text(SPY.format(digest=digest, judge_dir=str(judge)) + EARLY)
    monkeypatch.chdir(judge)
    monkeypatch.setattr(launch, "_early", None)
    return candidate


def _play(candidate: Path, sandbox: dict[str, Any] | None) -> dict[str, Any]:
    (episode,) = run_episodes(candidate, [Task(ENV, 0, SEED)], timeout=120, sandbox=sandbox)
    assert episode.failed, episode
    return _report(episode.message)


def _only_its_pipes(look: dict[str, Any]) -> None:
    assert set(look["fds"]) <= {0, 1, 2, *look["pipes"]}, look["fds"]
    assert look["evotree_env"] == [], look["evotree_env"]


@pytest.mark.heavy
def test_the_early_process_plays_and_holds_what_a_late_one_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain policy process (sandbox off) started early: it is the one that plays; at import
    and at reset it has only its pipes, no EVOTREE_* variable, and the seed in none of the
    places a late process never has it."""
    candidate = _setup(tmp_path, monkeypatch)
    assert launch.prestart(candidate, None)
    early = launch._early[1][0]  # type: ignore[index]
    report = _play(candidate, None)
    assert launch._early is None and early.poll() is not None  # adopted, then closed
    assert report["pid"] == early.pid == report["at_import"]["pid"]
    for look in (report, report["at_import"]):
        _only_its_pipes(look)
        assert not IN_PROCESS & set(look["found"]), look
    # the control: the same spy in a process started late finds what this one found
    late = _play(candidate, None)
    assert set(late["found"]) == set(report["found"]), (late["found"], report["found"])


@pytest.mark.heavy
def test_in_the_nested_sandbox_the_early_process_finds_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge phase's configuration: started early in its nested sandbox, the spy finds
    nothing at import or at reset (no parent's /proc, no seed file, nothing in its process)."""
    if not check_policy_sandbox().ok:
        pytest.skip(f"no nested sandbox here: {check_policy_sandbox().reason}")
    candidate = _setup(tmp_path, monkeypatch)
    sandbox = policy_sandbox_spec(PolicySandbox())
    assert launch.prestart(candidate, sandbox)
    early = launch._early[1][0]  # type: ignore[index]
    report = _play(candidate, sandbox)
    assert launch._early is None and early.poll() is not None
    for look in (report, report["at_import"]):
        assert look["found"] == [], look
        assert look["tried"]["parent mem"] in ("no parent visible", "no maps"), look
        assert all(size == 0 for key, size in look["tried"].items() if key.startswith("file "))
        _only_its_pipes(look)


@pytest.mark.heavy
def test_an_early_process_for_something_else_is_killed_not_adopted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process started early for another candidate (or sandbox) never plays: the worker kills
    it and starts its own; one that cannot be started (no policy.py) is left to the worker."""
    candidate = _setup(tmp_path, monkeypatch)
    other = tmp_path / "other"
    other.mkdir()
    (other / "policy.py").write_text((candidate / "policy.py").read_text())
    assert launch.prestart(other, None)
    early = launch._early[1][0]  # type: ignore[index]
    report = _play(candidate, None)
    assert early.poll() is not None and report["pid"] != early.pid
    assert not launch.prestart(tmp_path / "nothing-here", None) and launch._early is None


@pytest.mark.parametrize("phase", ["judge", "train"])
def test_the_phase_starts_its_policy_before_its_heavy_imports(phase: str) -> None:
    """``python -m evotree.domains.gym.judge`` (and ``.train``) runs main(), which calls
    ``prestart`` first, before anything imports numpy or gymnasium: the module's own imports
    are light."""
    code = (
        f"import json, sys\nimport evotree.domains.gym.{phase}\n"
        "print(json.dumps(sorted(m for m in ('numpy', 'gymnasium') if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(out.stdout) == []


@pytest.mark.heavy
def test_a_judge_that_stops_before_its_episodes_kills_its_early_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``judge.main`` starts the policy's process first; when it stops before any episode (here:
    no judge files) the process is killed, not left for a later start in the same process
    (which must load policy.py as it is then)."""
    from evotree.domains.gym import judge

    candidate = _setup(tmp_path, monkeypatch)
    started = []
    real = launch.spawn

    def spawn(*args: Any) -> Any:
        spawned = real(*args)
        started.append(spawned[0])
        return spawned

    monkeypatch.setattr(launch, "spawn", spawn)
    monkeypatch.setenv("EVOTREE_CANDIDATE_DIR", str(candidate))
    monkeypatch.delenv("EVOTREE_POLICY_SANDBOX", raising=False)
    empty = tmp_path / "no-judge-files"
    empty.mkdir()
    assert judge.main(empty) == 1
    assert len(started) == 1 and started[0].poll() is not None
    assert launch._early is None


@pytest.mark.heavy
def test_a_train_phase_that_stops_before_its_episodes_kills_its_early_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The train phase starts the policy's process first too; with no usable gym.toml it stops
    (an invalid submission) and the process is killed."""
    from evotree.domains.gym import train

    candidate = _setup(tmp_path, monkeypatch)
    started = []
    real = launch.spawn

    def spawn(*args: Any) -> Any:
        spawned = real(*args)
        started.append(spawned[0])
        return spawned

    monkeypatch.setattr(launch, "spawn", spawn)
    monkeypatch.delenv("EVOTREE_POLICY_SANDBOX", raising=False)
    assert train.main(candidate) == 65
    assert len(started) == 1 and started[0].poll() is not None
    assert launch._early is None


# ------------------------------------------------------------------ the worker's start-up paths


@pytest.mark.parametrize("spelling", ["", ".", "./", "./.", "src/..", "src", "../x", "a:"])
def test_worker_env_drops_every_relative_pythonpath_entry(tmp_path: Path, spelling: str) -> None:
    """Any entry that is not an absolute path resolves against the worker's working directory,
    the candidate's folder (``/candidate`` nested): dropped whatever its spelling (its
    ``sitecustomize.py`` would run before GO); an absolute entry elsewhere is kept."""
    candidate = tmp_path / "candidate"
    (candidate / "src").mkdir(parents=True)
    elsewhere = tmp_path / "lib"
    elsewhere.mkdir()
    env = launch.worker_env({"PYTHONPATH": f"{spelling}:{elsewhere}"}, candidate)
    assert env["PYTHONPATH"] == str(elsewhere)
    assert "PYTHONPATH" not in launch.worker_env({"PYTHONPATH": spelling}, candidate)
    assert "PYTHONPATH" not in launch.worker_env({"PYTHONPATH": spelling})


def test_worker_env_drops_absolute_entries_in_the_candidates_folder(tmp_path: Path) -> None:
    """Absolute entries naming the candidate's folder or a folder in it, written so (with
    ``..``) or through a link, and ``/candidate`` (its place in the nested sandbox), are
    dropped; the operator's folders outside it are kept."""
    candidate = tmp_path / "candidate"
    (candidate / "src").mkdir(parents=True)
    outside = tmp_path / "site"
    outside.mkdir()
    (tmp_path / "link").symlink_to(candidate)
    (candidate / "out").symlink_to(outside)  # the candidate's link: it could point anywhere
    inside = [
        str(candidate),
        f"{candidate}/",
        f"{candidate}/src",
        f"{candidate}/src/..",
        f"{outside}/../candidate",
        f"{tmp_path}/link",
        f"{tmp_path}/link/src",
        f"{candidate}/out",
        "/candidate",
        "/candidate/src",
    ]
    env = launch.worker_env({"PYTHONPATH": ":".join([*inside, str(outside)])}, candidate)
    assert env["PYTHONPATH"] == str(outside)


def test_worker_env_drops_the_other_start_up_paths_into_the_candidates_folder(
    tmp_path: Path,
) -> None:
    """``PYTHONHOME``, ``PYTHONUSERBASE``, ``PYTHONPYCACHEPREFIX`` (the standard library's
    bytecode), ``PYTHONSTARTUP``, the loader's ``LD_LIBRARY_PATH`` / ``LD_PRELOAD`` /
    ``LD_AUDIT``: relative or in the candidate's folder, dropped; absolute elsewhere, kept.
    ``PYTHONPLATLIBDIR`` (relative to the prefix) is always dropped."""
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    out = str(tmp_path / "elsewhere")
    for var in ("PYTHONHOME", "PYTHONUSERBASE", "PYTHONPYCACHEPREFIX", "PYTHONSTARTUP"):
        for value in (".", "./", "x", str(candidate), f"{out}:{candidate}", f"{candidate}/x"):
            assert var not in launch.worker_env({var: value}, candidate), (var, value)
        assert launch.worker_env({var: out}, candidate)[var] == out
    assert (
        launch.worker_env({"PYTHONHOME": f"{out}:{out}"}, candidate)["PYTHONHOME"] == f"{out}:{out}"
    )
    env = launch.worker_env({"LD_LIBRARY_PATH": f":.:lib:{candidate}:{out}"}, candidate)
    assert env["LD_LIBRARY_PATH"] == out
    env = launch.worker_env(
        {"LD_PRELOAD": f"./x.so {candidate}/y.so:libfoo.so {out}/z.so", "LD_AUDIT": "a/b.so"},
        candidate,
    )
    assert env["LD_PRELOAD"] == f"libfoo.so {out}/z.so" and "LD_AUDIT" not in env
    assert "PYTHONPLATLIBDIR" not in launch.worker_env({"PYTHONPLATLIBDIR": "lib"}, candidate)


@pytest.mark.parametrize("spelling", ["./", "src/..", "./.", ""])
def test_no_spelling_of_the_candidates_folder_runs_its_sitecustomize(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    """The command and environment the worker gets (``launch.command``) for a candidate holding
    a ``sitecustomize.py`` and a ``usercustomize.py``, with the operator's ``PYTHONPATH`` naming
    its folder: Python starts with neither run. The control: the same interpreter, given the
    raw variable in that folder, runs it."""
    candidate = tmp_path / "candidate"
    (candidate / "src").mkdir(parents=True)
    (candidate / "policy.py").write_text("class Policy: pass\n")
    for name in ("sitecustomize", "usercustomize"):
        (candidate / f"{name}.py").write_text(f"print('RAN-{name}')\n")
    raw = {**os.environ, "PYTHONPATH": f"{spelling}:{candidate}"}
    monkeypatch.setenv("PYTHONPATH", raw["PYTHONPATH"])
    _, env = launch.command(candidate, None)
    probe = [sys.executable, "-P", "-c", "pass"]
    ran = subprocess.run(probe, cwd=candidate, env=env, capture_output=True, text=True, timeout=60)
    assert "RAN-" not in ran.stdout + ran.stderr, ran.stdout + ran.stderr
    control = subprocess.run(
        probe, cwd=candidate, env=raw, capture_output=True, text=True, timeout=60
    )
    assert "RAN-sitecustomize" in control.stdout, control.stdout + control.stderr


#: the policy pushes by what its helper (and a package's module) says: 0, left (CartPole falls
#: in about 9 steps); their unchecked-hash bytecode says 1, and prints
SOURCE_POLICY = """
import helper
from pkg import sub


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        try:
            import bare  # only a bare.pyc in the folder: never imported
        except ImportError:
            pass
        else:
            print("RAN-bare-pyc", flush=True)
        return helper.X + sub.X
"""


@pytest.mark.heavy
@pytest.mark.parametrize("lanes", [1, 2], ids=["one-lane", "lanes"])
def test_the_candidates_modules_run_from_their_source_only(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    lanes: int,
) -> None:
    """policy.py, a helper beside it and a package's module each have an unchecked-hash ``.pyc``
    (PEP 552: Python's loader runs it without looking at the source) of other code, and a bare
    ``bare.pyc`` sits in the folder: the worker runs the sources (the episode pushes left and
    falls) and none of the bytecode; it writes no bytecode into the folder either."""
    import importlib.util
    import py_compile

    monkeypatch.setattr(launch, "_early", None)
    candidate = tmp_path / "candidate"
    (candidate / "pkg").mkdir(parents=True)
    (candidate / "policy.py").write_text(SOURCE_POLICY)
    (candidate / "helper.py").write_text("X = 0\n")
    (candidate / "pkg" / "__init__.py").write_text("")
    (candidate / "pkg" / "sub.py").write_text("X = 0\n")
    hidden = tmp_path / "hidden.py"
    balance = "int(obs[2] + 0.5 * obs[3] > 0)"
    for source, code in [
        ("policy.py", SOURCE_POLICY.replace("helper.X + sub.X", balance)),
        ("helper.py", "print('RAN-pyc helper', flush=True)\nX = 1\n"),
        ("pkg/sub.py", "print('RAN-pyc sub', flush=True)\nX = 0\n"),
        ("bare.py", "print('RAN-bare', flush=True)\n"),
    ]:
        hidden.write_text(code)
        target = candidate / source
        cfile = (
            str(candidate / "bare.pyc")
            if source == "bare.py"
            else importlib.util.cache_from_source(str(target))
        )
        py_compile.compile(
            str(hidden),
            cfile=cfile,
            dfile=source,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
            doraise=True,
        )
    before = sorted(str(p.relative_to(candidate)) for p in candidate.rglob("*"))
    capfd.readouterr()
    (episode,) = run_episodes(
        candidate, [Task(ENV, 0, SEED)], timeout=30, sandbox=None, lanes=lanes
    )
    assert episode.finish_reason == "terminated" and episode.ret < 50, episode
    printed = capfd.readouterr()
    assert "RAN-" not in printed.out + printed.err, printed
    after = sorted(str(p.relative_to(candidate)) for p in candidate.rglob("*"))
    assert after == before  # no bytecode written
    # the control: Python's own import of the folder runs the bytecode
    probe = subprocess.run(
        [sys.executable, "-c", "import helper, bare\nfrom pkg import sub"],
        cwd=candidate,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "RAN-pyc helper" in probe.stdout and "RAN-pyc sub" in probe.stdout, probe
    assert "RAN-bare" in probe.stdout, probe


#: loads once; the second process waits a second (its sibling plays meanwhile), then refuses to
#: load; each Policy built (an episode played) is a line in ``played.txt``
REFUSES_SECOND = """
import os, time

try:  # the first process to get here (atomically: the two start together)
    os.close(os.open("loaded-once", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
except FileExistsError:
    time.sleep(1.0)
    raise ImportError("refusing to load a second time")


class Policy:
    def __init__(self, *args):
        with open("played.txt", "a") as handle:
            handle.write("1\\n")

    def reset(self):
        pass

    def act(self, obs):
        return int(obs[2] + 0.5 * obs[3] > 0)
"""


@pytest.mark.heavy
def test_episodes_of_other_processes_are_handed_over_before_a_load_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two policy processes (``workers = 2``, lanes): the second refuses to load while the first
    plays. ``run_episodes`` raises InvalidPolicy only once the first has handed over every
    episode it started (the train phase records and charges them), none dropped on the way."""
    from evotree.domains.gym.runner import InvalidPolicy

    monkeypatch.setattr(launch, "_early", None)
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    (candidate / "policy.py").write_text(REFUSES_SECOND)
    monkeypatch.chdir(candidate)  # the policy's files: its working directory
    tasks = [Task(ENV, i, SEED + i) for i in range(400)]
    handed: list[Any] = []
    with pytest.raises(InvalidPolicy, match="refusing to load"):
        for episode in run_episodes(candidate, tasks, timeout=30, sandbox=None, workers=2, lanes=4):
            handed.append(episode)
    played = len((candidate / "played.txt").read_text().splitlines())
    assert 0 < played < len(tasks), played  # the attack ran: one played, the other refused
    assert len(handed) == played, (len(handed), played)
