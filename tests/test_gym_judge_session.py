"""The policy's process runs in a session of its own and dies with the process that started it.

Outside the judge's sandbox (the train phase, ``[sandbox] mode = "off"``) the policy's process
is a plain subprocess. It is started in a session of its own, as the nested sandbox starts it
(bubblewrap's ``--new-session``): a policy that signals its process group (``kill(0, ...)``)
reaches only itself, not the judge. Being out of the judge's process group, it must still die
with the judge: a phase killed as a group (or a judge killed outright) takes it along through
its parent-death signal, even while its ``act`` never returns.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("gymnasium")

from evotree.domains.gym.runner import InvalidPolicy, Task, run_episodes  # noqa: E402

#: signals its own process group at import time: with a shared group that was the judge too
KILL_GROUP = """\
import os, signal
os.kill(0, signal.SIGTERM)

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass
    def reset(self):
        pass
    def act(self, obs):
        return 0
"""

#: never answers: act() leaves a mark, then spins with its alarm ignored
HANG = """\
import signal
signal.signal(signal.SIGALRM, signal.SIG_IGN)

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass
    def reset(self):
        pass
    def act(self, obs):
        open(MARK, "w").close()
        while True:
            pass
"""

#: a judge whose policy hangs: prints the policy process's pid, then plays (for ever)
_JUDGE = """\
import sys
from pathlib import Path
from evotree.domains.gym import runner

real = runner.subprocess.Popen

def popen(*args, **kwargs):
    proc = real(*args, **kwargs)
    print(proc.pid, flush=True)
    return proc

runner.subprocess.Popen = popen
tasks = [runner.Task("CartPole-v1", 0, 1)]
for _ in runner.run_episodes(Path(sys.argv[1]), tasks, timeout=600.0, sandbox=None):
    pass
"""


def _candidate(tmp_path: Path, source: str) -> Path:
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "policy.py").write_text(source)
    return folder


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except OSError:
        return True


@pytest.mark.heavy
def test_a_policy_signalling_its_group_does_not_reach_the_judge(tmp_path: Path) -> None:
    candidate = _candidate(tmp_path, KILL_GROUP)
    with pytest.raises(InvalidPolicy, match="died"):
        list(run_episodes(candidate, [Task("CartPole-v1", 0, 1)], timeout=10.0, sandbox=None))
    # this process (the judge) is still here to see the policy's own process die


@pytest.mark.heavy
def test_the_policy_process_has_its_own_session_and_dies_with_the_judge(tmp_path: Path) -> None:
    mark = tmp_path / "in-act"
    candidate = _candidate(tmp_path, f"MARK = {str(mark)!r}\n" + HANG)
    judge = subprocess.Popen(
        [sys.executable, "-P", "-c", _JUDGE, str(candidate)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the phase's process group, killed as a group below
    )
    try:
        line = judge.stdout.readline() if judge.stdout else ""
        assert line.strip().isdigit(), line
        policy = int(line)
        deadline = time.monotonic() + 60
        while not mark.exists() and time.monotonic() < deadline:  # until act() spins
            time.sleep(0.05)
        assert mark.exists(), "the policy never reached act()"
        assert os.getsid(policy) == policy != os.getsid(judge.pid)
        os.killpg(judge.pid, signal.SIGKILL)  # the phase's group: not the policy's
        judge.wait(timeout=10)
        deadline = time.monotonic() + 10
        while not _gone(policy) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(policy), "the policy's process outlived the judge"
    finally:
        if judge.poll() is None:
            judge.kill()
            judge.wait()
