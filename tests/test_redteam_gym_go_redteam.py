"""Red team of the gym policy process after the GO gate (issue 29, item 6; commit b5fcd74).

Since b5fcd74 the policy's process (``domains/gym/worker.py``), started early by
``launch.prestart`` or late by ``launch.spawn``, does its own imports and then waits for its
host's first frame (``wire.GO``) before it loads ``policy.py``: no candidate code should run
before a judge or train phase adopted the process. Written by someone who did not write the
gate, as a candidate would attack it and the process split. Each attack asserts that it ran
(a control: the same probe where it works, or a count of what it did); an attack that wins is
an ``xfail(strict=False)`` naming its mechanism.

Stopped: files beside ``policy.py`` named like what the worker imports before the gate
(``numpy``, ``gymnasium``, ``json``, ``pickle``, ``struct``, ``ctypes``, ``signal``,
``sitecustomize``, ``usercustomize``, an ``evotree`` package, a ``.pth`` file) run nothing, before
GO or after it (``-P``, ``PYTHONSAFEPATH`` and the folder appended to ``sys.path`` only after GO,
after the standard library and the installed packages; no user site in a virtual environment);
objects returned by ``act()`` whose ``__array__``, ``__index__``, ``__eq__``, ``__reduce__`` ...
run code run it in the policy's process only (the host decodes bytes, it never unpickles);
frames the policy writes itself on its reply pipe (a 4 GiB header, an empty frame, a failure
with a reason of its choosing, an object dtype, a truncated action) cost it that episode (a
failure, 0) and the next one plays as usual; answers it queues ahead are taken in order as its
answers to the next observations (checked actions, its own choice); boolean arrays sent with
the worker's encoders replaced reach BipedalWalker as float32 (the host's check casts them); a
daemon forked after GO in the judge's nested sandbox dies with its judge, and with its process
when that process is lost and replaced (a plain one outlives both: the controls);
EvoPolicyGym's train phase charges a policy that crashes and then refuses to load for every
requested episode.

Closed since (plain tests; a helper who did not write this file): the ``PYTHONPATH`` spellings
(``launch.worker_env`` keeps only absolute entries outside the candidate's folder, judged as
written and resolved; the same for ``PYTHONHOME``/``PYTHONUSERBASE``/``PYTHONPYCACHEPREFIX``/
``PYTHONSTARTUP`` and ``LD_PRELOAD``/``LD_AUDIT``, 2c7c1d6), the ``__pycache__`` policy (the
worker compiles ``policy.py`` and the candidate's modules from source, never bytecode, 4f098ff)
and the uncharged episodes (``play_lanes`` hands over before it restarts, 4ab5e11/38ad4fd).
Still won: the train phase's rows emptied by a daemon (the last paragraph; documented as a
residual in docs/domains/gym.md and docs/threat-model.md).

Won at b5fcd74 (``xfail`` then): a ``PYTHONPATH`` entry that names the working directory in another spelling
than ``.`` (``./``, ``src/..``) survives ``launch.worker_env``'s filter, so a
``sitecustomize.py`` beside ``policy.py`` runs at the interpreter's start, before GO, in a
process no phase has adopted (nested or plain); with ``[sandbox] mode = "off"`` it rewrites the
judge's ``references.json`` through ``/proc/<ppid>/cwd`` before the judge reads it (scores 0.9
for 0, the window b5fcd74 closed). Reached only where the operator's ``PYTHONPATH`` gets to the
phase: ``mode = "off"``, or a champion's ``pass_env = ["PYTHONPATH"]`` (train phase only; the
judge phase gets no ``pass_env``); such a relative entry also puts the candidate's folder on the
train phase's own ``sys.path`` (its working directory), gate or not. Won, against the reading
of ``policy.py`` rather than the observation contract: an unchecked-hash
``__pycache__/policy.cpython-3XX.pyc`` is what the judge runs and scores (the judge's copy
keeps regular files, ``__pycache__`` included), whatever ``policy.py`` says. Won, the train
phase's charge (after GO, not the gate): a policy that plays its lanes, ends its process and
refuses to load at the restart keeps the episodes in flight out of the record
(``Worker.play_lanes`` boards, and so restarts, before it hands over the episodes that failed):
with none finished the train phase exits 65 with no row (an invalid run, charged nothing and no
attempt, after 64 episodes played); later, 64 rows for 128 episodes played. Won, the same charge
by another road (the process split isolates nothing in the train phase): a daemon the policy
forks after GO empties the phase's ``rollouts.jsonl`` (its folder read in
``/proc/<ppid>/environ``) while the phase lives - 70 episodes played, 0 rows charged.
"""

from __future__ import annotations

import importlib.util
import json
import os
import py_compile
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("gymnasium")

from evotree.domains.gym import launch  # noqa: E402
from evotree.domains.gym.runner import Task, run_episodes  # noqa: E402

ENV = "CartPole-v1"
SEEDS = (918_273_645, 918_273_646)
#: a controller that keeps CartPole up for its 500 steps
CONTROLLER = "int(obs[2] + 0.5 * obs[3] > 0)"


def _spec() -> dict[str, Any] | None:
    """The judge phase's nested sandbox where it starts here, else None."""
    from evotree.harness.sandbox import check_policy_sandbox, policy_sandbox_spec
    from evotree.harness.sandbox_spec import PolicySandbox

    return policy_sandbox_spec(PolicySandbox()) if check_policy_sandbox().ok else None


def _sandbox(nested: bool) -> dict[str, Any] | None:
    """The nested sandbox's spec (skips where it cannot start) or None (a plain process)."""
    if not nested:
        return None
    spec = _spec()
    if spec is None:
        pytest.skip("no nested policy sandbox here")
    return spec


def _candidate(tmp_path: Path, source: str, name: str = "candidate") -> Path:
    candidate = tmp_path / name
    candidate.mkdir(exist_ok=True)
    (candidate / "policy.py").write_text(source)
    return candidate


def _phase_env(tmp_path: Path, phase: str, sandbox: dict[str, Any] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOTREE_")}
    evidence = tmp_path / f"evidence-{phase}"
    evidence.mkdir(exist_ok=True)
    env.update(EVOTREE_EVIDENCE_DIR=str(evidence), EVOTREE_PHASE=phase, EVOTREE_RUN_ID="redteam")
    if sandbox is not None:
        env["EVOTREE_POLICY_SANDBOX"] = json.dumps(sandbox)
    return env


def _judge_folder(tmp_path: Path) -> Path:
    """A judge tree holding two hidden seeds and references (CartPole: random 20, expert 500)."""
    judge = tmp_path / "judge-dir"
    (judge / "judge").mkdir(parents=True)
    seeds = ", ".join(str(s) for s in SEEDS)
    (judge / "judge" / "gym.toml").write_text(
        f'[judge]\nenvs = ["{ENV}"]\nepisode_timeout_seconds = 20\nworkers = 1\n'
        f'lanes = 1\n[pools.validation]\n"{ENV}" = [{seeds}]\n'
    )
    (judge / "judge" / "references.json").write_text(
        json.dumps({"envs": {ENV: {"random": 20.0, "expert": 500.0}}})
    )
    return judge


def _run_judge(
    tmp_path: Path, candidate: Path, sandbox: dict[str, Any] | None, *, pythonpath: str = ""
) -> tuple[int, Path, list[dict[str, Any]]]:
    """``python -P -m evotree.domains.gym.judge`` as the harness starts it: (exit code, its
    stderr file, its evidence rows). Output goes to files so that a process the policy left
    behind cannot hold the test up."""
    judge = _judge_folder(tmp_path)
    env = _phase_env(tmp_path, "eval", sandbox)
    env["EVOTREE_CANDIDATE_DIR"] = str(candidate)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    err = tmp_path / "eval.err"
    with open(tmp_path / "eval.out", "wb") as out, open(err, "wb") as handle:
        proc = subprocess.run(
            [sys.executable, "-P", "-m", "evotree.domains.gym.judge"],
            cwd=judge,
            env=env,
            stdout=out,
            stderr=handle,
            stdin=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
    rows = [
        json.loads(line)
        for path in sorted((tmp_path / "evidence-eval").glob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    return proc.returncode, err, rows


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (``/proc/PID/task/*/children``)."""
    out = [pid]
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                for child in handle.read().split():
                    out += _tree(int(child))
    except OSError:
        pass
    return out


def _waits_for_go(pid: int) -> bool | None:
    """Whether the worker under ``pid`` (itself, or inside its bubblewraps) sits in ``read`` on
    its request pipe: it has done its imports and waits at the gate (``/proc/PID/syscall``);
    None when no worker's ``syscall`` can be read here (another user's, or not started yet)."""
    readable = False
    for each in _tree(pid):
        try:
            with open(f"/proc/{each}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
            if b"evotree.domains.gym.worker" not in argv:
                continue
            with open(f"/proc/{each}/syscall") as handle:
                call = handle.read().split()
        except OSError:
            continue
        readable = True
        request = int(argv[argv.index(b"evotree.domains.gym.worker") + 1])
        if len(call) >= 2 and call[0] == "0" and int(call[1], 16) == request:
            return True
    return False if readable else None


def _at_gate(pid: int, limit: float = 30.0) -> bool:
    """Wait until the early process waits for GO (seen twice, 50 ms apart); False past ``limit``.
    Where its ``/proc/PID/syscall`` is never readable, 3 s (its imports take well under 1 s)."""
    end = time.monotonic() + limit
    seen = False
    while time.monotonic() < end:
        state = _waits_for_go(pid)
        seen = seen or state is not None
        if state:
            time.sleep(0.05)
            if _waits_for_go(pid):
                return True
        if not seen and time.monotonic() > end - limit + 3.0:
            return True  # nothing readable here: the fixed wait
        time.sleep(0.05)
    return False


# ---------------------------------------------------------------------------- 1. shadow modules

#: each file prints its name if it ever runs (in the early process, before GO or after)
SHADOW = "import sys\nprint('REDTEAM-SHADOW {name}', file=sys.stderr, flush=True)\n"
SHADOWED = (
    "numpy",
    "gymnasium",
    "json",
    "pickle",
    "struct",
    "select",
    "signal",
    "ctypes",
    "inspect",
    "random",
    "typing",
    "base64",
    "math",
    "sitecustomize",
    "usercustomize",
)

#: policy.py itself and the helper it imports: the probe's control (they run once adopted)
SHADOW_POLICY = f"""
import os, sys
import helper
print("REDTEAM-POLICY", os.getpid(), file=sys.stderr, flush=True)


class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return {CONTROLLER}
"""


def _shadowed(tmp_path: Path) -> Path:
    """A candidate holding :data:`SHADOW_POLICY`, ``helper.py`` and a shadow of each module the
    worker imports before the gate, an ``evotree`` package and a ``.pth`` file."""
    candidate = _candidate(tmp_path, SHADOW_POLICY)
    (candidate / "helper.py").write_text(SHADOW.format(name="helper").replace("SHADOW", "HELPER"))
    for name in SHADOWED:
        (candidate / f"{name}.py").write_text(SHADOW.format(name=name))
    for package in ("evotree", "evotree/domains", "evotree/domains/gym"):
        (candidate / package).mkdir()
        (candidate / package / "__init__.py").write_text(SHADOW.format(name=package))
    (candidate / "evotree/domains/gym/worker.py").write_text(SHADOW.format(name="worker"))
    (candidate / "zz-redteam.pth").write_text(
        "import sys; print('REDTEAM-SHADOW pth', file=sys.stderr, flush=True)\n"
    )
    return candidate


@pytest.mark.heavy
@pytest.mark.parametrize("nested", [True, False], ids=["nested", "plain"])
def test_nothing_beside_policy_py_runs_before_go(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    nested: bool,
) -> None:
    """An early process for a folder of shadows waits at the gate having run none of them;
    adopted, it loads policy.py and its helper (the control: the probe prints) and still none
    of the shadows (the folder is appended to ``sys.path`` after GO, behind the standard
    library and the installed packages)."""
    sandbox = _sandbox(nested)
    monkeypatch.setattr(launch, "_early", None)
    candidate = _shadowed(tmp_path)
    capfd.readouterr()
    assert launch.prestart(candidate, sandbox)
    early = launch._early[1][0]  # type: ignore[index]
    try:
        assert _at_gate(early.pid), "the early process never reached the gate"
        before = capfd.readouterr().err
        assert "REDTEAM-" not in before, before[-2000:]
        assert early.poll() is None
        (episode,) = run_episodes(candidate, [Task(ENV, 0, SEEDS[0])], timeout=30, sandbox=sandbox)
    finally:
        launch.discard()
    after = capfd.readouterr().err
    assert launch._early is None and early.poll() is not None  # adopted, then closed
    assert episode.finish_reason in ("terminated", "truncated"), episode.message
    assert "REDTEAM-HELPER helper" in after and "REDTEAM-POLICY" in after, after[-2000:]
    if not nested:  # the process that played is the early one
        assert f"REDTEAM-POLICY {early.pid}" in after, after[-2000:]
    assert "REDTEAM-SHADOW" not in after, after[-2000:]


# ---------------------------------------------------------------------------- 2. PYTHONPATH

#: run at the interpreter's start where the working directory is on sys.path: leaves a file
#: in the candidate's folder (a plain process's working directory) and says so
SITECUSTOMIZE = r"""
import os, sys, time
print("REDTEAM-PREGO sitecustomize", os.getpid(), file=sys.stderr, flush=True)
try:
    open("prego-%d" % time.monotonic_ns(), "w").close()
except OSError:
    pass
"""

PLAIN_POLICY = f"""
class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return {CONTROLLER}
"""

_PYTHONPATH_WIN = (
    "launch.worker_env drops only empty and '.' entries of PYTHONPATH, but './' (or 'src/..', "
    "'./.') names the same folder: the worker's working directory, the candidate's folder "
    "(/candidate in the nested sandbox). Python puts it on sys.path at start-up and site imports "
    "the candidate's sitecustomize.py before the worker's first line - before the gate "
    "(wire.GO), in a process started early that no phase adopts. Reached only where the "
    "operator's PYTHONPATH reaches the phase: [sandbox] mode = 'off', or a champion's "
    "pass_env = ['PYTHONPATH'] in the train phase (the judge phase gets no pass_env); low "
    "severity: it reopens the window b5fcd74 closed (with mode 'off' the early process rewrites "
    "judge/references.json through /proc/<ppid>/cwd before the judge reads it: 0.9 for 0)"
)


@pytest.mark.heavy
@pytest.mark.parametrize("spelling", [".", ""], ids=["dot", "empty"])
def test_the_filtered_pythonpath_spellings_run_nothing_before_go(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    spelling: str,
) -> None:
    """Stopped: ``PYTHONPATH='.'`` or empty (the spellings ``worker_env`` drops): the early
    process reaches the gate with the candidate's ``sitecustomize.py`` unread."""
    monkeypatch.setattr(launch, "_early", None)
    monkeypatch.setenv("PYTHONPATH", spelling)
    candidate = _candidate(tmp_path, PLAIN_POLICY)
    (candidate / "sitecustomize.py").write_text(SITECUSTOMIZE)
    capfd.readouterr()
    assert launch.prestart(candidate, None)
    early = launch._early[1][0]  # type: ignore[index]
    try:
        assert _at_gate(early.pid)
    finally:
        launch.discard()
    assert "REDTEAM-PREGO" not in capfd.readouterr().err
    assert not list(candidate.glob("prego-*"))


@pytest.mark.heavy
@pytest.mark.parametrize("nested", [True, False], ids=["nested", "plain"])
@pytest.mark.parametrize("spelling", ["./", "src/.."], ids=["dot-slash", "up-again"])
def test_another_spelling_of_the_working_directory_runs_nothing_before_go(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    spelling: str,
    nested: bool,
) -> None:
    """``PYTHONPATH='./'`` (or ``src/..``, with a ``src`` folder in the candidate): an early
    process that is never adopted (``discard`` at the gate) must not have run the candidate's
    ``sitecustomize.py``. The probe's control is its own output: it prints where it runs."""
    sandbox = _sandbox(nested)
    monkeypatch.setattr(launch, "_early", None)
    monkeypatch.setenv("PYTHONPATH", spelling)
    candidate = _candidate(tmp_path, PLAIN_POLICY)
    (candidate / "src").mkdir()
    (candidate / "sitecustomize.py").write_text(SITECUSTOMIZE)
    assert "PYTHONPATH" not in launch.worker_env()  # closed: the filter drops relative entries
    capfd.readouterr()
    assert launch.prestart(candidate, sandbox)
    early = launch._early[1][0]  # type: ignore[index]
    try:
        assert _at_gate(early.pid)
    finally:
        launch.discard()
    err = capfd.readouterr().err
    assert "REDTEAM-PREGO" not in err, err[-1000:]
    assert not list(candidate.glob("prego-*"))


#: at the interpreter's start, where the working directory is on sys.path: replaces the judge's
#: references (random 0, expert 10) through its parent's cwd, as the red team of the early
#: start did from policy.py before the gate (tests/test_redteam_gym_prestart_redteam.py)
REWRITE = r"""
import json, os, sys
try:
    with open(f"/proc/{os.getppid()}/cwd/judge/references.json", "w") as handle:
        handle.write(json.dumps({"envs": {"CartPole-v1": {"random": 0.0, "expert": 10.0}}}))
    wrote = True
except OSError:
    wrote = False
print("REDTEAM-PREGO rewrite", wrote, file=sys.stderr, flush=True)
"""


@pytest.mark.heavy
def test_a_plain_judge_scores_against_its_own_references_whatever_its_pythonpath(
    tmp_path: Path,
) -> None:
    """``[sandbox] mode = "off"`` (the judge's environment is the operator's): with
    ``PYTHONPATH='./'`` the early process's ``sitecustomize.py`` runs before GO, while the
    judge still imports, and rewrites ``judge/references.json`` before the judge reads it; a
    policy that always pushes left (~9 steps: 0 against random 20, expert 500) then scores. The
    control: with ``'.'`` (dropped by ``worker_env``) the same folder scores 0, nothing ran."""
    for spelling in (".", "./"):
        root = tmp_path / ("dot" if spelling == "." else "dot-slash")
        root.mkdir()
        candidate = _candidate(root, SHOWN)
        (candidate / "sitecustomize.py").write_text(REWRITE)
        code, err, rows = _run_judge(root, candidate, None, pythonpath=spelling)
        text = err.read_text(errors="replace")
        assert code == 0, text[-2000:]
        scores = [float(r["score"]) for r in rows if "score" in r]
        assert len(scores) == 2, rows
        if spelling == ".":  # the control
            assert "REDTEAM-PREGO" not in text and scores == [0.0, 0.0], (scores, text[-1000:])
    # closed: worker_env drops every relative entry, so nothing ran before GO either. The
    # probe's control: the same file, at the start of an interpreter whose sys.path holds its
    # folder, rewrites the references of a judge folder (its parent, a shell, works there)
    assert "REDTEAM-PREGO" not in text, text[-1000:]
    assert scores == [0.0, 0.0], (scores, text[-1000:])
    probe = subprocess.run(
        ["/bin/sh", "-c", '"$0" -c pass; true', sys.executable],
        cwd=root / "judge-dir",
        env={**os.environ, "PYTHONPATH": str(candidate)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "REDTEAM-PREGO rewrite True" in probe.stderr, probe.stderr[-1000:]


# ---------------------------------------------------------------------------- 3. policy.py's pyc

#: what policy.py says: always push left (CartPole falls in a few steps)
SHOWN = """
class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return 0
"""

_PYC_WIN = (
    "the worker imports policy.py with importlib's SourceFileLoader, which takes "
    "__pycache__/policy.cpython-3XX.pyc when it is an unchecked-hash pyc (PEP 552) without "
    "looking at policy.py; the judge's copy of the candidate keeps every regular file "
    "(harness/sandbox_copy.py), __pycache__ included, and the nested sandbox reads it. So the "
    "judge scores code that policy.py does not hold (here a balancing controller behind a "
    "policy.py that always pushes left: 500 against ~9). Not a breach of the observation "
    "contract (the hidden code sees what policy.py would), but whatever reads policy.py to "
    "know what was scored (a reviewer, EvoPolicyGym's submitted artifact, an audit of the "
    "source) reads something else; a fix: load the source only (compile(read(policy.py))) or "
    "drop __pycache__ from the judge's copy"
)


@pytest.mark.heavy
def test_the_judge_scores_what_policy_py_says(tmp_path: Path) -> None:
    """policy.py always pushes left; an unchecked-hash ``.pyc`` of a balancing controller sits in
    its ``__pycache__``. The judge's copy (``copy_regular_files``) is played in the nested
    sandbox (plain where it cannot start): it must play policy.py (a short episode), not the
    cache (500 steps). The control: policy.py alone plays short."""
    from evotree.harness.sandbox_copy import copy_regular_files

    sandbox = _spec()
    workspace = _candidate(tmp_path, SHOWN, "workspace")
    (shown,) = run_episodes(workspace, [Task(ENV, 0, SEEDS[0])], timeout=30, sandbox=sandbox)
    assert shown.finish_reason == "terminated" and shown.ret < 50, (shown.ret, shown.message)
    hidden = tmp_path / "hidden" / "policy.py"
    hidden.parent.mkdir()
    hidden.write_text(PLAIN_POLICY)
    py_compile.compile(
        str(hidden),
        cfile=importlib.util.cache_from_source(str(workspace / "policy.py")),
        dfile="policy.py",
        invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        doraise=True,
    )
    copy = tmp_path / "judge-copy"
    copy.mkdir()
    copy_regular_files(workspace, copy, max_files=100, max_bytes=1 << 20)
    assert (copy / "__pycache__").is_dir()  # the judge's copy kept it
    (played,) = run_episodes(copy, [Task(ENV, 0, SEEDS[0])], timeout=30, sandbox=sandbox)
    assert played.ret < 50, f"the cache played: return {played.ret} ({played.finish_reason})"


# ---------------------------------------------------------------------------- 4. returned objects

#: act() returns objects whose special methods report the process they run in
OBJECTS = r"""
import os, sys
import numpy as np

CASE = {case!r}


def _say(what):
    print("REDTEAM-CALL", what, os.getpid(), file=sys.stderr, flush=True)


class Loud(np.ndarray):
    def __array_finalize__(self, obj):
        _say("array_finalize")

    def __array__(self, *args, **kwargs):
        _say("array")
        return np.asarray(self.view(np.ndarray), *args[1:], **kwargs)

    def __reduce__(self):
        _say("reduce")
        return (int, (1,))

    def __reduce_ex__(self, protocol):
        _say("reduce_ex")
        return (int, (1,))

    def __eq__(self, other):
        _say("eq")
        return np.ndarray.__eq__(self, other)

    __hash__ = None

    def __index__(self):
        _say("index")
        return int(self.view(np.ndarray))

    def __int__(self):
        _say("int")
        return int(self.view(np.ndarray))


class LoudInt(int):
    def __eq__(self, other):
        _say("int_eq")
        return int.__eq__(self, other)

    __hash__ = int.__hash__

    def __index__(self):
        _say("int_index")
        return int(self)

    def __reduce__(self):
        _say("int_reduce")
        return (int, (int(self),))

    def __int__(self):
        _say("int_int")
        return int.__int__(self)

    def __repr__(self):
        _say("int_repr")
        return int.__repr__(self)


class Policy:
    def __init__(self, *args):
        _say("init")

    def reset(self, *args):
        pass

    def act(self, obs):
        if isinstance(obs, dict) or isinstance(obs, list):
            obs = np.asarray(obs, dtype=float)
        good = {controller}
        if CASE == "array":
            return np.array(good, dtype=np.int64).view(Loud)
        return LoudInt(good)
"""


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("case", "protocol", "lanes"),
    [
        ("array", "evotree", 1),
        ("int", "evotree", 1),
        ("array", "evotree", 2),
        ("array", "evopolicygym", 1),
    ],
    ids=["array", "int", "array-lanes", "array-epg"],
)
def test_returned_objects_run_nothing_in_the_host(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    case: str,
    protocol: str,
    lanes: int,
) -> None:
    """act() returns an ndarray subclass (or an int subclass) whose ``__array__``, ``__eq__``,
    ``__index__``, ``__reduce__``... print the pid they run in. The host (this test's process:
    ``run_episodes`` in-process, plain) runs none of them; the control: the policy's process
    does (the probe prints)."""
    monkeypatch.setattr(launch, "_early", None)
    candidate = _candidate(tmp_path, OBJECTS.format(case=case, controller=CONTROLLER))
    extra = (
        {
            "protocol": "evopolicygym",
            "meta": {"submit_index": 0, "n_episodes": 2, "remaining_after": 0},
        }
        if protocol == "evopolicygym"
        else None
    )
    capfd.readouterr()
    episodes = list(
        run_episodes(
            candidate,
            [Task(ENV, i, s) for i, s in enumerate(SEEDS)],
            timeout=30,
            sandbox=None,
            lanes=lanes,
            extra=extra,
        )
    )
    err = capfd.readouterr().err
    calls = [line.split() for line in err.splitlines() if line.startswith("REDTEAM-CALL ")]
    assert calls, err[-2000:]  # the probe ran, in the policy's process
    assert {c[1] for c in calls} - {"init"}, sorted({c[1] for c in calls})  # not only init
    assert all(int(c[2]) != os.getpid() for c in calls), [
        c for c in calls if c[2] == str(os.getpid())
    ]
    assert len(episodes) == 2
    for episode in episodes:  # played (the host decoded plain numbers) or refused, never more
        assert episode.ret <= 500.0
        assert episode.finish_reason in ("terminated", "truncated", "invalid_action"), (
            episode.finish_reason,
            episode.message,
        )


# ---------------------------------------------------------------------------- 5. raw frames

#: at step 3 of one episode (the first to get there: a mark file) the policy writes its own
#: frame(s) on the reply pipe (its number is the worker's second argument) and then answers as
#: usual; the other episode is clean
RAW = r"""
import os, struct, sys, json

CASE = {case!r}
MARK = {mark!r}
REPLY = int(sys.argv[2])


def _frame(payload):
    return struct.pack(">I", len(payload)) + payload


def _forge():
    print("REDTEAM-FORGED", CASE, file=sys.stderr, flush=True)  # first: the host kills it
    if CASE == "huge":
        data = struct.pack(">I", 0xFFFFFFF0) + b"A"
    elif CASE == "empty":
        data = struct.pack(">I", 0)
    elif CASE == "reason":
        data = _frame(b'J' + json.dumps({{"kind": "fail", "reason": "truncated",
                                           "message": "", "category": ""}}).encode())
    elif CASE == "object-dtype":
        body = json.dumps({{"a": ["|O", [1], "AAAAAAAAAAA="]}}).encode()
        data = _frame(b"A" + struct.pack(">BcI", 0, b"j", len(body)) + body)
    elif CASE == "truncated":
        data = _frame(b"A" + struct.pack(">BcI", 0, b"i", 100) + b"\0" * 8)
    elif CASE == "ahead":  # answers for the next 20 steps, queued before it sees them
        data = b"".join(_frame(b"A" + struct.pack(">BcI", 0, b"i", 8) + struct.pack(">q", 1))
                        for _ in range(20))
    elif CASE == "stdout":  # a frame on fd 1 (the worker sends it to stderr)
        os.write(1, _frame(b"A" + struct.pack(">BcI", 0, b"i", 8) + struct.pack(">q", 1)))
        return
    os.write(REPLY, data)


def _first():
    try:  # once in all: the first episode of any process that gets there
        os.close(os.open(MARK, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


class Policy:
    def __init__(self, *args):
        self.steps = 0

    def reset(self):
        pass

    def act(self, obs):
        self.steps += 1
        if self.steps == 3 and _first():
            _forge()
        return {controller}
"""

#: each forged frame's verdict for the attacked episode: failed, or (frames queued ahead, a
#: frame on stdout) played with actions the policy chose
RAW_CASES = ("huge", "empty", "reason", "object-dtype", "truncated", "ahead", "stdout")


@pytest.mark.heavy
@pytest.mark.parametrize("case", RAW_CASES)
def test_frames_the_policy_writes_itself_never_score(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    case: str,
) -> None:
    """At step 3 of episode 0 the policy writes its own frame(s) on the reply pipe (or stdout).
    Episode 0 ends as a failure (the host scores it 0) or, for frames it only queued ahead,
    plays on with actions it chose; episode 1 (a new or the same process) plays the balancing
    controller to its 500 steps: nothing forged scores, the judge goes on."""
    monkeypatch.setattr(launch, "_early", None)
    mark = tmp_path / "forged"
    candidate = _candidate(tmp_path, RAW.format(case=case, mark=str(mark), controller=CONTROLLER))
    capfd.readouterr()
    episodes = list(
        run_episodes(
            candidate,
            [Task(ENV, i, s) for i, s in enumerate(SEEDS)],
            timeout=20,
            sandbox=None,
            workers=1,
        )
    )
    err = capfd.readouterr().err
    assert mark.exists()
    assert f"REDTEAM-FORGED {case}" in err, err[-2000:]  # the attack ran
    first, second = sorted(episodes, key=lambda e: e.index)
    if case == "ahead":
        # the host took the queued answers in order, as answers to the observations it sent
        # next (the lag runs on into the next episode: the policy's own doing); every
        # action it played came from the policy's process and was checked, nothing failed
        assert not first.failed and not second.failed, (first.message, second.message)
        assert first.ret < 500.0 and second.ret <= 500.0
        return
    if case == "stdout":  # fd 1 is stderr in the worker: the host never saw the frame
        assert first.ret == 500.0 and first.finish_reason == "truncated", first.message
    else:
        assert first.failed and first.finish_reason == "error", (first.finish_reason, first.message)
        assert "protocol" in first.message, first.message
    assert second.finish_reason == "truncated" and second.ret == 500.0, (
        second.finish_reason,
        second.message,
    )


# ---------------------------------------------------------------------------- 6. daemon after GO

#: at import (after GO): a double-forked daemon in a session of its own beats on stderr
DAEMON = r"""
import os, sys, time

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        end = time.monotonic() + 8.0
        while time.monotonic() < end:
            try:
                os.write(2, b"DAEMON-BEAT %d\n" % os.getpid())
            except OSError:
                pass
            time.sleep(0.1)
        os._exit(0)
    os._exit(0)
os.wait()


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return int(obs[2] + 0.5 * obs[3] > 0)
"""


def _beats(text: str) -> list[int]:
    return [int(x.split()[1]) for x in text.splitlines() if x.startswith("DAEMON-BEAT ")]


@pytest.mark.heavy
@pytest.mark.parametrize("nested", [True, False], ids=["nested", "plain-control"])
def test_a_daemon_forked_after_go_dies_with_its_nested_judge(tmp_path: Path, nested: bool) -> None:
    """The judge (as the harness starts it) plays a policy that forks a daemon at import, after
    GO. Nested: it beat while the judge ran and is silent once the judge exited (the nested
    sandbox's PID namespace ends with its bubblewrap). The control, plain (``mode = 'off'``,
    no boundary claimed): it beats on after the judge exited, the probe works; the test
    kills it."""
    sandbox = _sandbox(nested)
    candidate = _candidate(tmp_path, DAEMON)
    code, err, _rows = _run_judge(tmp_path, candidate, sandbox)
    during = err.read_text(errors="replace")
    time.sleep(0.6)
    after = err.read_text(errors="replace")[len(during) :]
    try:
        assert code == 0, during[-2000:]
        assert _beats(during), during[-2000:]  # the daemon started
        if nested:
            assert not _beats(after), after[-500:]
        else:
            assert _beats(after), after[-500:]
    finally:
        for pid in set(_beats(during + after)):
            if not nested:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


# ---------------------------------------------------------------------------- 7. train: uncharged

#: the train phase's policy: counts the episodes it plays (a Policy per episode) and the
#: observations it sees, in its folder (the train phase's candidate folder is writable); at its
#: CRASH-th observation in all it ends its process (every lane in flight fails); where REFUSE is
#: set, it then refuses to load again
UNCHARGED = r"""
import os, sys

REFUSE = {refuse!r}
CRASH = {crash!r}
if REFUSE and os.path.exists("loaded-once"):
    raise ImportError("refusing to load a second time")
open("loaded-once", "w").close()
_seen = [0]


class Policy:
    def __init__(self, *args):
        with open("episodes.txt", "a") as handle:
            handle.write("1\n")

    def reset(self, *args):
        pass

    def act(self, obs):
        _seen[0] += 1
        with open("seen.txt", "a") as handle:
            handle.write(" ".join("%.6f" % x for x in obs) + "\n")
        if _seen[0] == CRASH and not os.path.exists("crashed"):
            open("crashed", "w").close()
            os._exit(3)
        return int(obs[2] + 0.5 * obs[3] > 0)
"""

_UNCHARGED_WIN = (
    "runner.Worker.play_lanes: when the policy's process is lost (_crash) every episode in "
    "flight fails and waits in flight.done, but the loop's next turn boards the next tasks "
    "first (_board -> self.start()), and that start's InvalidPolicy (policy.py now refuses to "
    "load) propagates before 'while flight.given in done: yield' hands the failed episodes "
    "over. No episode finished yet: train._train_tasks sees InvalidPolicy with "
    "tally.recorded == 0 and exits 65 - an invalid submission, the run charged nothing and "
    "not an attempt (harness/finish.py) - though the policy played 64 episodes (1,000 "
    "observations, written to its writable folder, printable to the log the agent reads): "
    "train episodes for free, as often as it likes. Some finished: the run is charged for "
    "those only (64 rows for 128 episodes played). Against docs/domains/gym.md: 'a policy.py "
    "that loaded fine and stops loading halfway ... is not invalid: the episodes it played "
    "stay recorded and charged'. Needs more tasks than the lanes in flight at the crash "
    "(train lanes default to 64); EvoPolicyGym's train (no lanes) is not affected"
)


def _train(candidate: Path, tmp_path: Path) -> tuple[int, int]:
    """The train phase (``python -P -m evotree.domains.gym.train``, plain as it runs its policy):
    (exit code, rollout rows it recorded)."""
    evidence = tmp_path / "evidence-train"
    env = _phase_env(tmp_path, "train", None)
    env["EVOTREE_SEED"] = "0"
    code = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.gym.train"],
        cwd=candidate,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
        check=False,
    ).returncode
    rollouts = evidence / "rollouts.jsonl"
    rows = len(rollouts.read_text().splitlines()) if rollouts.exists() else 0
    return code, rows


def _uncharged(
    tmp_path: Path, refuse: bool, *, tasks: int = 70, crash: int = 1_000, protocol: str = "evotree"
) -> tuple[int, int, int, int]:
    """(exit code, rollout rows, episodes the policy played, observations it saw) of a train
    phase of ``tasks`` CartPole episodes for :data:`UNCHARGED`."""
    root = tmp_path / ("refuse" if refuse else "control")
    root.mkdir()
    candidate = _candidate(root, UNCHARGED.format(refuse=refuse, crash=crash))
    pool = (
        f"episodes_per_env = {tasks}\nfirst_seed = 0"
        if protocol == "evotree"
        else f"instances = {list(range(tasks))}"  # EvoPolicyGym's train pool: instances
    )
    (candidate / "gym.toml").write_text(
        f'[train]\nenvs = ["{ENV}"]\n{pool}\n'
        f'episode_timeout_seconds = 20\nworkers = 1\nprotocol = "{protocol}"\n'
    )
    code, rows = _train(candidate, root)
    counts = [
        len(path.read_text().splitlines()) if path.exists() else 0
        for path in (candidate / "episodes.txt", candidate / "seen.txt")
    ]
    return code, rows, counts[0], counts[1]


@pytest.mark.heavy
def test_control_a_train_phase_whose_process_died_charges_its_episodes(tmp_path: Path) -> None:
    """The control: the same policy that loads again after its crash: the phase ends (exit 0)
    with one rollout row per episode, the failed ones included (charged)."""
    code, rows, played, seen = _uncharged(tmp_path, refuse=False)
    assert code == 0 and rows == 70 and played <= 70, (code, rows, played)
    assert seen > 30


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("tasks", "crash"), [(70, 1_000), (200, 40_000)], ids=["refused-uncharged", "halfway-charged"]
)
def test_every_train_episode_the_policy_played_is_charged(
    tmp_path: Path, tasks: int, crash: int
) -> None:
    """The policy plays its lanes, ends its process (at its 1,000th observation: no episode has
    finished; or at its 40,000th: the first 64 finished, 64 more in flight), then refuses to
    load: every episode it played must be a rollout row (charged), and a phase in which it
    played is not refused as an invalid submission (exit 65, charged nothing)."""
    code, rows, played, seen = _uncharged(tmp_path, refuse=True, tasks=tasks, crash=crash)
    assert seen >= crash and played > 0, (seen, played)  # the attack ran: it played, then refused
    # every episode it played is a row; a few more may be: episodes started in lanes whose start
    # had not reached the policy's Policy() when the process died fail with it (in flight, charged)
    assert code != 65 and played <= rows <= played + 64, (code, rows, played, seen)


@pytest.mark.heavy
def test_an_evopolicygym_train_phase_charges_a_policy_that_refuses_after_playing(
    tmp_path: Path,
) -> None:
    """Stopped in EvoPolicyGym's contract: its episodes play one at a time (no lanes), the one
    lost with the process is handed over before the restart, and an import error charges every
    requested episode: the same attack (8 instances) ends with a row for each (not exit 65)."""
    code, rows, played, seen = _uncharged(tmp_path, refuse=True, tasks=8, protocol="evopolicygym")
    assert seen >= 30 and played >= 1, (seen, played)  # the attack ran
    assert code != 65 and rows == 8, (code, rows, played, seen)


# ---------------------------------------------------------------------------- 8. daemon, restart

#: at import (after GO): a daemon in a session of its own beats with its process's token; the
#: episode whose first observation leans right (seed 918_273_647) ends the process at step 1, so
#: the worker starts a second process (a second token) for the next episode
RESTART = r"""
import binascii, os, sys, time

TOKEN = binascii.hexlify(os.urandom(4)).decode()
print("REDTEAM-LOADED", TOKEN, file=sys.stderr, flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in sys.argv[1:3]:  # the pipes: its process's end is seen when that process ends
            os.close(int(fd))
        end = time.monotonic() + 6.0
        while time.monotonic() < end:
            try:
                os.write(2, ("DAEMON-TOKEN %s %d\n" % (TOKEN, os.getpid())).encode())
            except OSError:
                pass
            time.sleep(0.05)
        os._exit(0)
    os._exit(0)
os.wait()


class Policy:
    def __init__(self, *args):
        self.steps = 0

    def reset(self):
        pass

    def act(self, obs):
        self.steps += 1
        if self.steps == 1 and obs[0] > 0:
            os._exit(3)
        return int(obs[2] + 0.5 * obs[3] > 0)
"""


@pytest.mark.heavy
@pytest.mark.parametrize("nested", [True, False], ids=["nested", "plain-control"])
def test_a_daemon_of_a_lost_process_dies_before_the_next_one_plays(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    nested: bool,
) -> None:
    """The first process forks a daemon after GO, then dies in its episode; the worker starts a
    second process for the next episode. Nested: the first daemon beats no more once the second
    process has loaded, plus a margin for its sandbox's end: nothing of a lost process runs
    beside the next one. The control, plain: it beats on, the probe works (the test ends it)."""
    sandbox = _sandbox(nested)
    monkeypatch.setattr(launch, "_early", None)
    candidate = _candidate(tmp_path, RESTART)
    capfd.readouterr()
    tasks = [Task(ENV, 0, 918_273_647), Task(ENV, 1, SEEDS[0])]
    episodes = sorted(
        run_episodes(candidate, tasks, timeout=20, sandbox=sandbox), key=lambda e: e.index
    )
    time.sleep(0.5)
    lines = capfd.readouterr().err.splitlines()
    loaded = [x.split()[1] for x in lines if x.startswith("REDTEAM-LOADED ")]
    daemons = {x.split()[1]: int(x.split()[2]) for x in lines if x.startswith("DAEMON-TOKEN ")}
    try:
        assert episodes[0].failed and not episodes[1].failed, [e.message for e in episodes]
        assert len(loaded) == 2, lines[-20:]  # two processes, a daemon each
        first, second = loaded
        assert first in daemons and second in daemons, lines[-20:]
        start = lines.index(f"REDTEAM-LOADED {second}")
        late = [x for x in lines[start:] if x.startswith(f"DAEMON-TOKEN {first} ")]
        if nested:  # a few beats may be in flight while its sandbox ends
            assert len(late) <= 6, len(late)
        else:
            assert len(late) > 10, len(late)
    finally:
        if not nested:
            for pid in daemons.values():
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass


# ---------------------------------------------------------------------------- 9. env faults

#: the policy replaces the worker's encoders: every answer it sends is a boolean array (4,) -
#: in the bounds of BipedalWalker's Box, but of a dtype its step was not written for (np.sign of
#: a boolean raises): what reaches an environment must be the space's own dtype, or a policy
#: could steer it through code paths (casts, overflows, faults) no float32 action takes
BOOLS = r"""
import base64, json, struct, sys
import numpy as np

worker = sys.modules["__main__"]  # python -m evotree.domains.gym.worker
wire = sys.modules["evotree.domains.gym.wire"]
ACTION = np.array([True, False, True, False])
_sent = [0]


def _forged(*args, **kwargs):
    _sent[0] += 1
    if _sent[0] == 1:
        print("REDTEAM-BOOLS", file=sys.stderr, flush=True)
    body = json.dumps(wire.tag(ACTION)).encode()
    return b"A" + struct.pack(">BcI", 0, b"j", len(body)) + body


def _forged_round(answers):
    _sent[0] += 1
    if _sent[0] == 1:
        print("REDTEAM-BOOLS", file=sys.stderr, flush=True)
    header = wire._array_header(ACTION.dtype, ACTION.shape)
    return b"Nb" + header + b"".join(ACTION.tobytes() for _ in answers)


worker.encode_action = _forged
worker.encode_reply = _forged_round


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return np.zeros(4, dtype=np.float32)
"""


@pytest.mark.heavy
@pytest.mark.parametrize("lanes", [1, 2], ids=["one-lane", "lanes"])
def test_a_forged_boolean_action_never_faults_the_environment(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    lanes: int,
) -> None:
    """BipedalWalker's step raises on a boolean array (the control, here: the raw action does
    reach code the space's dtype never does). The policy's process sends boolean arrays on every
    step (its encoders replaced, the worker's own check bypassed): the host's check casts them to
    float32 and the walker plays them, with no environment fault (which would be an ``error``)."""
    pytest.importorskip("Box2D")
    import gymnasium as gym
    import numpy as np

    env = gym.make("BipedalWalker-v3").unwrapped
    env.reset(seed=SEEDS[0])
    with pytest.raises(TypeError):  # the probe: the raw action faults the environment
        env.step(np.array([True, False, True, False]))
    env.close()
    monkeypatch.setattr(launch, "_early", None)
    candidate = _candidate(tmp_path, BOOLS)
    capfd.readouterr()
    tasks = [Task("BipedalWalker-v3", i, s) for i, s in enumerate(SEEDS)]
    episodes = list(run_episodes(candidate, tasks, timeout=60, sandbox=None, lanes=lanes))
    assert "REDTEAM-BOOLS" in capfd.readouterr().err  # the forged frames went out
    for episode in episodes:
        assert "env.step raised" not in episode.message, episode.message
        assert episode.finish_reason in ("terminated", "truncated"), (
            episode.finish_reason,
            episode.message,
        )
        assert episode.length > 1


# ---------------------------------------------------------------------------- 10. train: its rows

#: at import (after GO) in the train phase, where the policy's process is a plain child of the
#: phase: a daemon empties the phase's rollouts.jsonl (its folder named in the parent's environ)
#: every 2 ms for as long as the phase lives; the recorder appends to the emptied file
TRUNCATE = r"""
import os, sys, time

PARENT = os.getppid()
try:
    with open(f"/proc/{PARENT}/environ", "rb") as handle:
        env = dict(x.split(b"=", 1) for x in handle.read().split(b"\0") if b"=" in x)
    ROWS = os.path.join(env[b"EVOTREE_EVIDENCE_DIR"].decode(), "rollouts.jsonl")
except (OSError, KeyError):
    ROWS = None
print("REDTEAM-ROWS", ROWS, file=sys.stderr, flush=True)
if ROWS and os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in sys.argv[1:3]:
            os.close(int(fd))
        def alive():
            try:
                with open(f"/proc/{PARENT}/stat") as handle:
                    return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
            except OSError:
                return False

        while alive():
            try:
                os.truncate(ROWS, 0)
            except OSError:
                pass
            time.sleep(0.002)
        os._exit(0)
    os._exit(0)
if ROWS:
    os.wait()


class Policy:
    def __init__(self, *args):
        pass

    def reset(self):
        pass

    def act(self, obs):
        return int(obs[2] + 0.5 * obs[3] > 0)
"""

_ROWS_WIN = (
    "the train phase's charge is its rollout rows (harness/finish._train_counts counts "
    "evidence/train/rollouts.jsonl), and the policy's process is a plain child of the train "
    "phase in the same sandbox: it reads the evidence folder in /proc/<ppid>/environ "
    "(EVOTREE_EVIDENCE_DIR; relatively it is ../evidence/train) and a daemon it forks after GO "
    "empties rollouts.jsonl every 2 ms while the phase lives (the recorder appends to the "
    "emptied file): 70 episodes played, 0 rows left - the run is charged for none. The "
    "process split isolates nothing in the train phase ([sandbox] nests only the "
    "judge's policy); the phase's evidence is writable by design, so this may be a known limit "
    "of row-counted budgets rather than a defect of the gate"
)


@pytest.mark.heavy
@pytest.mark.xfail(strict=False, reason=_ROWS_WIN)
def test_the_train_phase_records_every_episode_its_policy_played(tmp_path: Path) -> None:
    """70 CartPole episodes in the train phase (plain, as it runs its policy): the rows left in
    rollouts.jsonl must be the 70 played. The control: the daemon found the file (its report)."""
    candidate = _candidate(tmp_path, TRUNCATE)
    (candidate / "gym.toml").write_text(
        f'[train]\nenvs = ["{ENV}"]\nepisodes_per_env = 70\nfirst_seed = 0\n'
        "episode_timeout_seconds = 20\nworkers = 1\n"
    )
    env = _phase_env(tmp_path, "train", None)
    env["EVOTREE_SEED"] = "0"
    log = tmp_path / "train.err"
    with open(log, "wb") as handle:  # a file: the daemon holds the phase's stderr a moment
        proc = subprocess.run(
            [sys.executable, "-P", "-m", "evotree.domains.gym.train"],
            cwd=candidate,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=handle,
            timeout=120,
            check=False,
        )
    time.sleep(0.05)  # the daemon sees its parent gone and ends
    err = log.read_text(errors="replace")
    rollouts = tmp_path / "evidence-train" / "rollouts.jsonl"
    assert proc.returncode == 0, err[-2000:]
    assert f"REDTEAM-ROWS {rollouts}" in err, err[-2000:]  # the attack ran
    rows = len(rollouts.read_text().splitlines()) if rollouts.exists() else 0
    assert rows == 70, rows
