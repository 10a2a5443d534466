"""A gym run on a slow or loaded machine is a slower run, not an invalid one.

A CI rehearsal on a loaded machine (s17: a clean clone, the heavy suite with ``-n 2`` beside a
corpus bench, load 3-5) had two gym runs come back ``invalid``; the run's note ended with the
train phase's "the process loading policy.py died (...) before it was ready; its stderr is in
the phase's log": :meth:`evotree.domains.gym.runner.Worker.start` took any end of the policy's
process before its ``ready`` for policy.py's fault (``InvalidPolicy``: train exit 65, the run
``invalid``), and counted the process's own start (Python, numpy, gymnasium and evotree's
modules, which a process started late imports after GO) against ``startup_timeout``, the limit
of policy.py's import. The process now says ``loading`` once it has read GO, before it imports
policy.py. These tests use real policy processes (no mock): a start that is slow or lost before
``loading`` is the machine's (a slower start, another start, at worst ``WorkerBroken``: a failed
run, never an invalid one); a policy too slow to import, or one whose import ends its process
every time, is still invalid, and says why.

The cause (found in s18): the runtime trace's compiled tracer answers a traced read-open by
walking the path itself with ``openat2(RESOLVE_IN_ROOT)``; such a walk fails with EAGAIN when a
rename or a mount anywhere on the machine races one of its ``..`` (sandboxes starting, git
renaming: ~0.4 % of walks here at load 5, ~1 % beside a renaming process), and the tracer gave
that EAGAIN to the caller for a file that exists. The dynamic loader opens numpy's libraries by
``$ORIGIN/../../numpy.libs/...``: numpy failed to import ("libquadmath...so: cannot open shared
object file"), in the train phase itself (exit 1: a failed run, reproduced beside a fork loop)
or in the policy's process before GO (exit 1 before ``ready``: the invalid runs). The tracer
now walks again while the kernel says EAGAIN (harness/seccomp_trace.c, ``openat2_``).
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("gymnasium")

from evotree.domains.gym import launch  # noqa: E402
from evotree.harness import sandbox  # noqa: E402
from evotree.harness.sandbox_launch import accounted, sandbox_env  # noqa: E402
from evotree.harness.sandbox_spec import SandboxSpec  # noqa: E402
from evotree.domains.gym.runner import (  # noqa: E402
    HOST_STARTS,
    InvalidPolicy,
    Task,
    Worker,
    WorkerBroken,
    run_episodes,
)

ENV = "CartPole-v1"
SEEDS = (918_273_645, 918_273_646)
GOOD = (
    "class Policy:\n"
    "    def __init__(self, env_id, observation_space, action_space):\n"
    "        pass\n"
    "    def reset(self):\n"
    "        pass\n"
    "    def act(self, obs):\n"
    "        return int(obs[2] + 0.5 * obs[3] > 0)\n"
)
#: a Python home that does not exist: the interpreter cannot start (exit 1, before any module
#: of the worker's runs): a process lost before it reads GO, as a start killed on a loaded
#: machine is, with nothing of the candidate's run
NO_HOME = "/nonexistent-evotree-python-home"


def _candidate(tmp_path: Path, source: str = GOOD) -> Path:
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    (candidate / "policy.py").write_text(source)
    return candidate


def _tasks(count: int = 2) -> list[Task]:
    return [Task(ENV, i, SEEDS[0] + i) for i in range(count)]


@pytest.fixture(autouse=True)
def _no_early_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "_early", None)


def test_a_slow_start_of_the_policys_process_is_not_policy_pys_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every start compiles numpy, gymnasium and evotree from source (an empty bytecode
    prefix, none written: a clean clone on a loaded machine, ~1.4 s here at load 5) against a
    ``startup_timeout`` of 0.3 s for policy.py's import: the start is slower, the policy
    loads and plays (before: ``InvalidPolicy``, 'did not finish importing within 0.3 s')."""
    candidate = _candidate(tmp_path)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(tmp_path / "no-bytecode"))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    worker = Worker(candidate, startup_timeout=0.3, sandbox=None)
    began = time.monotonic()
    try:
        worker.start()
        took = time.monotonic() - began
        episode = worker.play(_tasks(1)[0], timeout=60)
    finally:
        worker.close()
    assert took > 0.3, f"the start took {took:.2f} s: not slower than the limit, nothing shown"
    assert not episode.failed and episode.ret > 100, episode


def test_a_policy_too_slow_to_import_is_invalid_and_says_why(tmp_path: Path) -> None:
    """The limit is the project's for policy.py's own import: past it the policy is invalid,
    and the message names the limit and the likely cause."""
    candidate = _candidate(tmp_path, "import time\ntime.sleep(30)\n" + GOOD)
    began = time.monotonic()
    with pytest.raises(InvalidPolicy, match=r"did not finish importing within 0\.5 s"):
        list(run_episodes(candidate, _tasks(), timeout=20, sandbox=None, startup_timeout=0.5))
    assert time.monotonic() - began < 20


def test_an_early_process_lost_before_loading_is_replaced_not_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process started early (launch.prestart, as the train phase and the judge do) dies
    before it reads GO; the worker adopts it, sees it lost before ``loading`` and starts
    another, which plays every episode (before: ``InvalidPolicy``, train exit 65)."""
    candidate = _candidate(tmp_path)
    monkeypatch.setenv("PYTHONHOME", NO_HOME)
    assert launch.prestart(candidate, None)
    early = launch._early[1][0]  # type: ignore[index]
    monkeypatch.delenv("PYTHONHOME")
    played = list(run_episodes(candidate, _tasks(), timeout=60, sandbox=None))
    assert early.poll() == 1, early.poll()  # the adopted one: its interpreter never started
    assert launch._early is None
    assert [e.index for e in played] == [0, 1]
    assert all(not e.failed and e.ret > 100 for e in played), played


def test_a_machine_that_cannot_start_the_process_is_broken_not_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No start ever reaches ``loading``: after HOST_STARTS starts the worker gives up with
    WorkerBroken (the train phase exits 1, a failed run; the judge fails), saying that nothing
    of the candidate's ran and how each start ended; never InvalidPolicy."""
    candidate = _candidate(tmp_path)
    monkeypatch.setenv("PYTHONHOME", NO_HOME)
    worker = Worker(candidate, sandbox=None)
    with pytest.raises(WorkerBroken, match="nothing of the candidate's ran") as raised:
        worker.start()
    assert worker.starts == HOST_STARTS
    assert str(raised.value).count("exit code 1") == HOST_STARTS, raised.value


#: ends its process at import the first time only (a kill from outside while it imports)
DIES_ONCE = (
    "import os\n"
    "MARK = {mark!r}\n"
    "if not os.path.exists(MARK):\n"
    "    open(MARK, 'w').close()\n"
    "    os._exit(9)\n"
) + GOOD


def test_a_process_lost_once_while_importing_policy_py_is_tried_again(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    candidate = _candidate(tmp_path, DIES_ONCE.format(mark=str(mark)))
    played = list(run_episodes(candidate, _tasks(), timeout=60, sandbox=None))
    assert mark.exists()
    assert all(not e.failed and e.ret > 100 for e in played), played


def test_a_policy_that_ends_its_process_at_every_import_is_invalid(tmp_path: Path) -> None:
    """Its fault: invalid after the second try, with how the process ended each time."""
    candidate = _candidate(tmp_path, "import os\nos._exit(7)\n" + GOOD)
    worker = Worker(candidate, sandbox=None)
    with pytest.raises(
        InvalidPolicy, match=r"died while importing it \(exit code 7; exit code 7\)"
    ):
        worker.start()
    assert worker.starts == 2


#: at import (after ``loading``): a forged "broken" frame on the reply pipe, which would make the
#: candidate's failure the machine's (the judge's WorkerBroken: no score at all instead of 0)
FORGED_BROKEN = (
    "import os, struct, sys, time\n"
    '_payload = b\'J{"kind":"broken","message":"forged"}\'\n'
    "os.write(int(sys.argv[2]), struct.pack('>I', len(_payload)) + _payload)\n"
    "time.sleep(30)\n"
) + GOOD


def test_a_broken_frame_written_by_policy_py_is_its_own_fault(tmp_path: Path) -> None:
    assert struct.calcsize(">I") == 4  # the frame header FORGED_BROKEN writes (wire._HEADER)
    candidate = _candidate(tmp_path, FORGED_BROKEN)
    worker = Worker(candidate, sandbox=None)
    with pytest.raises(InvalidPolicy, match="'broken' where 'ready' was expected"):
        worker.start()


# ---------------------------------------------------------------------------- the tracer's walks

#: opens a file through a ``..`` (as the dynamic loader opens ``$ORIGIN/../../numpy.libs/...``)
#: OPENS times in the traced sandbox; prints the count of each outcome
DOTDOT_OPENS = 20_000
_DOTDOT = f"""
import collections, errno, json, os
outcomes = collections.Counter()
for _ in range({DOTDOT_OPENS}):
    try:
        os.close(os.open("lib/sub/../f.so", os.O_RDONLY))
        outcomes["ok"] += 1
    except OSError as exc:
        outcomes[errno.errorcode[exc.errno]] += 1
print(json.dumps(outcomes))
"""


def test_traced_opens_through_dotdot_do_not_fail_while_the_machine_renames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a process outside the sandbox renames a file back and forth (the machine's git, a
    bytecode write), every traced open of an existing file through ``..`` opens it: the
    tracer's scoped walk met EAGAIN on ~1 % of them (236 of 20,000 here before the fix) and
    handed it to the caller; now it walks again."""
    monkeypatch.setattr(sandbox, "TRACER", "seccomp")
    if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
        pytest.skip("needs bubblewrap and the compiled seccomp tracer (a C compiler)")
    work = tmp_path / "work"
    (work / "lib" / "sub").mkdir(parents=True)
    (work / "lib" / "f.so").write_text("x")
    spec = SandboxSpec(cwd=work, read_write=(work,), trace=tmp_path / "raw.trace")
    stop = threading.Event()

    def rename() -> None:
        one, other = tmp_path / "one", tmp_path / "other"
        one.write_text("")
        while not stop.is_set():
            os.rename(one, other)
            os.rename(other, one)

    renamer = threading.Thread(target=rename, daemon=True)
    renamer.start()
    try:
        proc = subprocess.run(
            accounted(sandbox.wrap(spec, [sys.executable, "-c", _DOTDOT])),
            env=sandbox_env(dict(os.environ)),
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        stop.set()
        renamer.join()
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == {"ok": DOTDOT_OPENS}
