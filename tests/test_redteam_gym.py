"""Red-team tests of the gym judge's split policy process.

Written by someone who did not write it, as a candidate's code would attack it. An attack that is
stopped asserts that it is stopped; an attack that works is kept as a strict xfail that asserts
the safe behaviour (it starts passing, and so failing the xfail, once it is closed). The attacks
play real episodes through ``runner.run_episodes`` (the judge's loop), in the nested policy
sandbox where it can start. (The runtime trace's attacks are in test_redteam_gym_trace.py.)
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

# ---------------------------------------------------------------------------- the gym judge

CARTPOLE = "CartPole-v1"


def _policy_sandbox() -> dict | None:
    """The judge phase's nested sandbox where it can start here, else None (a plain process)."""
    from evotree.harness.sandbox import check_policy_sandbox, policy_sandbox_spec
    from evotree.harness.sandbox_spec import PolicySandbox

    return policy_sandbox_spec(PolicySandbox()) if check_policy_sandbox().ok else None


def _episodes(tmp_path: Path, source: str, tasks: int, **kwargs: object) -> list:
    pytest.importorskip("gymnasium")
    from evotree.domains.gym.runner import Task, run_episodes

    candidate = tmp_path / "candidate"
    candidate.mkdir(exist_ok=True)
    (candidate / "policy.py").write_text(source)
    tasks_ = [Task(CARTPOLE, i, 1_000_003 + 7919 * i) for i in range(tasks)]
    played = run_episodes(candidate, tasks_, summarize=False, **{"timeout": 30.0, **kwargs})  # type: ignore[arg-type]
    return sorted(played, key=lambda e: e.index)


#: plays badly side by side (always pushes left); a few steps in it kills its own process, hoping
#: the judge plays every episode in flight again, one at a time (which the policy would tell from
#: its stack, and there play the good controller)
REROLL = """\
import os, sys

def _alone():
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name in ("batch", "round"):  # the worker's function for lanes
            return False
        frame = frame.f_back
    return True

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.t = 0
    def reset(self):
        self.t = 0
    def act(self, obs):
        self.t += 1
        if _alone():
            return int(obs[2] + 0.5 * obs[3] > 0)
        if self.t >= 5:
            os._exit(3)
        return 0
"""


@pytest.mark.heavy
def test_a_policy_cannot_reroll_its_episodes_by_dying(tmp_path: Path) -> None:
    episodes = _episodes(tmp_path, REROLL, 4, lanes=4, sandbox=_policy_sandbox())
    assert len(episodes) == 4
    # safe: what it played side by side counts (pushing left falls within ~10 steps), or the
    # episodes in flight when it killed itself fail
    assert all(e.failed or e.ret < 50 for e in episodes), [
        (e.ret, e.finish_reason) for e in episodes
    ]
    assert any("died" in e.message for e in episodes), [e.message for e in episodes]


#: the dying process leaves marks where a replacement process might find them; a process that
#: finds marks reports them (its episode fails with them in its message)
MARKS = """\
import os, sys, glob

PLACES = ["/tmp/redteam-mark", "/dev/shm/redteam-mark",
          os.path.join(os.environ.get("HOME", "/tmp"), "redteam-mark")]

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass
    def reset(self):
        found = [p for p in PLACES if os.path.exists(p)]
        if found:
            raise RuntimeError("REPORT%sTROPER" % found)
    def act(self, obs):
        for place in PLACES:
            try:
                with open(place, "w") as handle:
                    handle.write("first try")
            except OSError:
                pass
        os._exit(3)
"""


@pytest.mark.heavy
def test_a_replacement_policy_process_finds_nothing_of_the_dead_one(tmp_path: Path) -> None:
    """In the nested sandbox each policy process has its own /tmp, /dev/shm and home: what the
    one that died wrote is not there for the process that replaces it (every process dies in
    its turn, none reports a mark)."""
    spec = _policy_sandbox()
    if spec is None:
        pytest.skip("no nested policy sandbox here")
    episodes = _episodes(tmp_path, MARKS, 4, lanes=2, sandbox=spec)
    assert all("REPORT" not in e.message for e in episodes), [e.message for e in episodes]
    assert all(e.failed and "died" in e.message for e in episodes), [e.message for e in episodes]


def _frame_attack(payload: str) -> str:
    """A policy that writes ``payload`` (Python bytes expression) on its reply pipe itself the
    first time its process acts, then plays honestly (a replacement process is honest: the mark
    lives outside the nested sandbox, so these run as plain processes)."""
    return f"""\
import os, sys, time, struct
MARK = {{mark!r}}

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass
    def reset(self):
        pass
    def act(self, obs):
        if not os.path.exists(MARK):
            open(MARK, "w").close()
            os.write(int(sys.argv[2]), {payload})
            time.sleep(3600)
        return int(obs[2] + 0.5 * obs[3] > 0)
"""


_FRAMES = {
    "a frame longer than the limit": "struct.pack('>I', (64 << 20) + 1)",
    "a huge frame that never ends": "struct.pack('>I', 60 << 20) + b'J' + b' ' * 1000",
    "a batch answer for lane 7, unasked": "struct.pack('>I', 13) + b'M' + struct.pack('>II', 7, 4)"
    " + b'Aabc'",
    "a failure claiming a good ending": "(lambda p: struct.pack('>I', len(p)) + p)(b'J' + "
    'b\'{"kind": "fail", "reason": "truncated"}\')',
    "an action array of objects": "(lambda d: (lambda p: struct.pack('>I', len(p)) + p)("
    "b'A\\x00j' + struct.pack('>I', len(d)) + d))("
    'b\'{"a": ["|O", [1], "AAAAAAAA"]}\')',
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_FRAMES))
def test_forged_frames_fail_one_episode_within_its_limit(tmp_path: Path, name: str) -> None:
    """Frames the policy's process writes itself: too long, never finished, a batch answer for
    an unasked lane, an object array, a failure claiming a good ending (which would end a
    MountainCar episode early with a better return). The episode fails (error or timeout) within
    its time limit and grace, the process is replaced, and the next episode plays normally."""
    source = _frame_attack(_FRAMES[name]).replace("{mark!r}", repr(str(tmp_path / "mark")))
    started = time.monotonic()
    first, second = _episodes(tmp_path, source, 2, lanes=1, sandbox=None, timeout=2.0)
    assert time.monotonic() - started < 30
    assert first.failed and first.finish_reason in ("error", "timeout"), first
    assert not second.failed and second.ret == 500.0, second


#: thinks 0.1 s per step for its first 15 steps (1.5 s of its own time, past a 1 s limit), its
#: time limit's alarm ignored; then the good controller
SLOW = """\
import signal, time

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.t = 0
    def reset(self):
        self.t = 0
    def act(self, obs):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        self.t += 1
        if self.t <= 15:
            time.sleep(0.1)
        return int(obs[2] + 0.5 * obs[3] > 0)
"""


@pytest.mark.heavy
def test_a_policy_ignoring_its_alarm_is_timed_out_when_alone(tmp_path: Path) -> None:
    """The control: one episode at a time, the judge times the episode's wall time itself."""
    episodes = _episodes(tmp_path, SLOW, 1, lanes=1, sandbox=_policy_sandbox(), timeout=1.0)
    assert [e.finish_reason for e in episodes] == ["timeout"], episodes


@pytest.mark.heavy
def test_a_policy_ignoring_its_alarm_is_timed_out_in_lanes(tmp_path: Path) -> None:
    """With lanes the worker counts each lane's time; ignoring the alarm is not enough."""
    episodes = _episodes(tmp_path, SLOW, 2, lanes=2, sandbox=_policy_sandbox(), timeout=1.0)
    assert [e.finish_reason for e in episodes] == ["timeout", "timeout"], episodes


#: also gives its lane back its time: the worker's clock of the lane is in the policy's process
#: (the worker runs as ``__main__``); its deadline and the alarm's too
SLOW_REFUNDED = SLOW.replace(
    "        self.t += 1\n",
    "        self.t += 1\n"
    "        import sys\n"
    "        main = sys.modules['__main__']\n"
    "        lane = main._Now.lane\n"
    "        if lane is not None:\n"
    "            lane.left = lane.deadline = lane.limit = 1e9\n"
    "            main._Alarm.at = 0.0\n",
)


@pytest.mark.heavy
def test_a_policy_refunding_its_own_time_is_timed_out_in_lanes(tmp_path: Path) -> None:
    assert SLOW_REFUNDED != SLOW
    episodes = _episodes(
        tmp_path, SLOW_REFUNDED, 2, lanes=2, sandbox=_policy_sandbox(), timeout=1.0
    )
    assert [e.finish_reason for e in episodes] == ["timeout", "timeout"], [
        (e.ret, e.finish_reason, e.message[:80]) for e in episodes
    ]


#: returns a different malformed action in each episode (its process lives on between them)
BAD_ACTIONS = """\
import numpy as np

ACTIONS = [[float("nan")], [float("inf")], [1e308], [[0.5]], [0.5, 0.5],
           np.array([np.nan], dtype=np.float16),
           np.array([object()], dtype=object), "0.5", None, {"a": 1}]
COUNT = [0]

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.action = ACTIONS[COUNT[0] % len(ACTIONS)]
        COUNT[0] += 1
    def reset(self):
        pass
    def act(self, obs):
        return self.action
"""


@pytest.mark.heavy
def test_malformed_box_actions_are_invalid_never_stepped(tmp_path: Path) -> None:
    """NaN (also float16), inf, out of bounds, wrong shapes, object arrays, strings, None, dicts:
    each ends its episode as invalid_action at its first step, in a process that lives on."""
    pytest.importorskip("gymnasium")
    from evotree.domains.gym.runner import Task, run_episodes

    candidate = tmp_path / "candidate"
    candidate.mkdir()
    (candidate / "policy.py").write_text(BAD_ACTIONS)
    tasks = [Task("Pendulum-v1", i, 1_000_003 + i) for i in range(10)]
    episodes = list(
        run_episodes(candidate, tasks, timeout=30.0, summarize=False, sandbox=_policy_sandbox())
    )
    assert [e.finish_reason for e in episodes] == ["invalid_action"] * 10, [
        (e.finish_reason, e.message) for e in episodes
    ]
    assert all(e.length == 0 for e in episodes), [e.length for e in episodes]


#: forks a daemon (its own session, SIGHUP ignored, the pipes closed) that keeps writing to the
#: shared stderr, then kills its own process
DAEMON = """\
import os, signal, time

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass
    def reset(self):
        pass
    def act(self, obs):
        if os.fork() == 0:
            os.setsid()
            os.closerange(3, 4096)  # not holding the judge's pipe open
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            if os.fork() == 0:
                for _ in range(60):
                    os.write(2, b"redteam-daemon-alive\\n")
                    time.sleep(0.1)
            os._exit(0)
        time.sleep(0.3)
        os._exit(3)
"""


@pytest.mark.heavy
def test_a_daemon_forked_by_a_policy_dies_with_its_process(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """In the nested sandbox a daemon the policy forks (new session, SIGHUP ignored) ends with
    the policy's process: nothing of it runs on once the judge has replaced that process."""
    spec = _policy_sandbox()
    if spec is None:
        pytest.skip("no nested policy sandbox here")
    episodes = _episodes(tmp_path, DAEMON, 1, lanes=1, sandbox=spec)
    assert episodes[0].failed
    during = capfd.readouterr().err
    assert "redteam-daemon-alive" in during  # the daemon did run
    time.sleep(1.0)
    assert "redteam-daemon-alive" not in capfd.readouterr().err


# ---------------------------------------------------------------------------- lanes: lost processes
#: the good controller, which logs each episode's first observation to LOG (a plain process: the
#: log is the test's) and, in its first process, ends that process at POINT once it has built
#: BUILT policy objects: a replayed episode would log its first observation twice
DIES_AT = """\
import os, sys
LOG, POINT, BUILT = {log!r}, {point!r}, {built!r}
MARK = LOG + ".died"
COUNT = [0]

def _die(where):
    if POINT == where and COUNT[0] >= BUILT and not os.path.exists(MARK):
        open(MARK, "w").close()
        os._exit(7)

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        COUNT[0] += 1
        _die("init")
        self.t = 0
    def reset(self):
        _die("reset")
    def act(self, obs):
        if self.t == 0:
            with open(LOG, "a") as handle:
                handle.write(obs.tobytes().hex() + "\\n")
        self.t += 1
        if self.t == 5:
            _die("step 5")
        if self.t == 60:
            _die("step 60")
        return int(obs[2] + 0.5 * obs[3] > 0)
"""


@pytest.mark.heavy
@pytest.mark.parametrize("point", ["init", "reset", "step 5", "step 60"])
def test_a_process_dying_at_any_point_fails_its_episodes_in_flight_once(
    tmp_path: Path, point: str
) -> None:
    """The first process dies at ``point`` once it has built its third policy object; the
    episodes in flight then fail ("died"), the others play to their end in the next process
    (500: the good controller), and no episode is ever played twice (no first observation is
    logged twice)."""
    log = tmp_path / "first-observations"
    source = DIES_AT.format(log=str(log), point=point, built=3)
    episodes = _episodes(tmp_path, source, 12, lanes=4, sandbox=None)
    assert [e.index for e in episodes] == list(range(12))
    for episode in episodes:
        assert (episode.failed and "died" in episode.message) or episode.ret == 500.0, episode
    died = [e for e in episodes if e.failed]
    assert died and len(died) < 12, [(e.index, e.finish_reason) for e in episodes]
    firsts = log.read_text().split()
    assert len(firsts) == len(set(firsts)), "an episode was played again"
    assert len(firsts) <= 12


#: a lane hog: the episodes whose cart starts right of centre think 0.05 s a step with their alarm
#: ignored and their deadline pushed back (worker state is the policy's); the others are quick
HOG = """\
import signal, sys, time

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.hog = None
    def reset(self):
        pass
    def act(self, obs):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        if self.hog is None:
            self.hog = bool(obs[0] > 0)
        if self.hog:
            main = sys.modules['__main__']
            lane = main._Now.lane
            if lane is not None:
                lane.deadline = 1e18
            time.sleep(0.05)
        return int(obs[2] + 0.5 * obs[3] > 0)
"""


@pytest.mark.heavy
def test_an_episode_gets_no_more_than_its_wall_time_in_lanes(tmp_path: Path) -> None:
    """Whatever the lanes, an episode ends by its own limit on the judge's clock (plus one round
    and the grace period at most): a hog borrows no time from the other lanes, and the quick
    episodes that shared its rounds are timed out with it rather than the hog going on."""
    timeout = 1.0
    episodes = _episodes(tmp_path, HOG, 6, lanes=3, sandbox=None, timeout=timeout, max_timeouts=0)
    hogs = [e for e in episodes if _hogs_on(e.seed)]
    assert hogs and len(hogs) < len(episodes), [e.seed for e in episodes]  # both kinds were played
    assert all(e.finish_reason == "timeout" for e in hogs), hogs
    for episode in episodes:
        # the limit, one round past it (a few hog steps) and the grace, with slack for the load
        assert episode.seconds < timeout + 1.0 + 1.5, (episode.index, episode.seconds, episode)
    for episode in hogs:
        # 0.05 s a step: about 20 steps in 1 s. A quick episode that shared only some of its rounds
        # with a hog may be timed out after many more steps (it ran fast once the hog was gone), so
        # the step count is a claim about the hogs alone.
        assert episode.length < 60, episode


def _hogs_on(seed: int) -> bool:
    """Whether HOG plays the hog on the episode reset with ``seed`` (its first observation's cart
    position is positive), read from Gymnasium itself."""
    import gymnasium

    env = gymnasium.make(CARTPOLE)
    try:
        observation, _ = env.reset(seed=seed)
    finally:
        env.close()
    return bool(observation[0] > 0)


#: the first process forks a child that inherits the pipes and keeps them open, then the parent
#: dies: the judge sees no end of file; it must not wait for ever
FORK_AND_DIE = """\
import os, time
MARK = {mark!r}

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.t = 0
    def reset(self):
        pass
    def act(self, obs):
        self.t += 1
        if self.t == 3 and not os.path.exists(MARK):
            open(MARK, "w").close()
            if os.fork() == 0:
                time.sleep(30)  # holds the reply pipe open
                os._exit(0)
            os._exit(3)
        return int(obs[2] + 0.5 * obs[3] > 0)
"""

#: the first process forks a child that writes garbage on the reply pipe while the parent plays on
FORK_AND_WRITE = """\
import os, sys, time
MARK = {mark!r}

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.t = 0
    def reset(self):
        pass
    def act(self, obs):
        self.t += 1
        if self.t == 3 and not os.path.exists(MARK):
            open(MARK, "w").close()
            if os.fork() == 0:
                for _ in range(50):
                    os.write(int(sys.argv[2]), b"\\x00\\x00\\x00\\x09Ni" + b"\\x01" * 8)
                    time.sleep(0.001)
                os._exit(0)
        return int(obs[2] + 0.5 * obs[3] > 0)
"""


@pytest.mark.heavy
@pytest.mark.parametrize("name", ["fork-and-die", "fork-and-write"])
def test_a_forking_policy_fails_its_episodes_in_flight_and_the_judge_goes_on(
    tmp_path: Path, name: str
) -> None:
    """A child that keeps the dead process's pipe open, or one that writes on it while its parent
    plays: the episodes in flight fail (timeout or error) within their limit and the grace, the
    process is replaced, the later episodes play normally."""
    source = (FORK_AND_DIE if name == "fork-and-die" else FORK_AND_WRITE).format(
        mark=str(tmp_path / "mark")
    )
    started = time.monotonic()
    episodes = _episodes(tmp_path, source, 8, lanes=2, sandbox=None, timeout=2.0)
    assert time.monotonic() - started < 30
    lost = [e for e in episodes if e.failed]
    assert lost and all(e.finish_reason in ("error", "timeout") for e in lost), episodes
    assert all(e.ret == 500.0 for e in episodes if not e.failed)
    assert episodes[-1].ret == 500.0, episodes[-1]


#: writes ``payload`` on its reply pipe itself at its process's 4th act() (two lanes in flight
#: by then), then sleeps; a replacement process finds the mark and plays honestly
_LANES_FRAMES = {
    "an N reply of the wrong size": "struct.pack('>I', 5) + b'Ni' + b'\\x00' * 3",
    "an N reply with an action outside the space": "struct.pack('>I', 18) + b'Ni' + struct.pack('<qq', 7, 7)",
    "an N reply of object arrays": "(lambda p: struct.pack('>I', len(p)) + p)(b'Nb' + bytes((3,))"
    " + b'|O8' + bytes((1,)) + struct.pack('<I', 1) + b'\\x00' * 16)",
    "an M reply for an unasked lane": "struct.pack('>I', 13) + b'M' + struct.pack('>II', 9, 4)"
    " + b'Aabc'",
    "random bytes": "bytes(range(256)) * 4",
    "a header that never ends": "struct.pack('>I', 60 << 20) + b'N'",
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_LANES_FRAMES))
def test_forged_lanes_replies_fail_the_episodes_in_flight(tmp_path: Path, name: str) -> None:
    source = f"""\
import os, sys, time, struct
MARK = {str(tmp_path / "mark")!r}
CALLS = [0]

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass
    def reset(self):
        pass
    def act(self, obs):
        CALLS[0] += 1
        if CALLS[0] == 4 and not os.path.exists(MARK):
            open(MARK, "w").close()
            os.write(int(sys.argv[2]), {_LANES_FRAMES[name]})
            time.sleep(3600)
        return int(obs[2] + 0.5 * obs[3] > 0)
"""
    started = time.monotonic()
    episodes = _episodes(tmp_path, source, 6, lanes=2, sandbox=None, timeout=2.0)
    assert time.monotonic() - started < 30
    lost = [e for e in episodes if e.failed]
    assert lost and all(e.finish_reason in ("error", "timeout") for e in lost), [
        (e.index, e.finish_reason, e.message[:100]) for e in episodes
    ]
    assert all("every episode in flight fails" in e.message for e in lost), lost
    assert all(e.ret == 500.0 for e in episodes if not e.failed)


# ---------------------------------------------------------------------------- EvoPolicyGym mode
#: MountainCar's returns are negative (-200 for an episode that never reaches the flag): a lost
#: episode that counted 0 would beat losing; this policy ends its process (or hangs) instead
EPG_LOSES = """\
import os, signal, time
HOW = {how!r}

class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        pass
    def reset(self, episode_index):
        self.t = 0
    def act(self, obs):
        self.t += 1
        if self.t == 50 and HOW == "dies":
            os._exit(3)
        if self.t == 50 and HOW == "hangs":
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            time.sleep(3600)
        return 1
"""


@pytest.mark.heavy
@pytest.mark.parametrize("how", ["plays", "dies", "hangs"])
def test_an_evopolicygym_episode_lost_with_its_process_voids_the_submit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """EvoPolicyGym's evaluation fails when its policy's process dies or a rollout times out: the
    judge exits 1 (void) rather than scoring the lost episode 0 (which beats -200 here)."""
    pytest.importorskip("gymnasium")
    from evotree.domains.gym import epg_phases
    from evotree.domains.gym.settings import JudgeSettings, References
    from evotree.harness import recorder
    from evotree.harness.layout import ENV_EVIDENCE_DIR, ENV_PHASE

    candidate = tmp_path / "candidate"
    candidate.mkdir()
    (candidate / "policy.py").write_text(EPG_LOSES.format(how=how))
    (tmp_path / "evidence").mkdir()
    monkeypatch.setenv(ENV_EVIDENCE_DIR, str(tmp_path / "evidence"))
    monkeypatch.setenv(ENV_PHASE, "eval")
    monkeypatch.setattr(recorder, "_default", None)
    env_id = "MountainCar-v0"
    settings = JudgeSettings(
        envs=[env_id],
        pools={"validation": {env_id: [1_000_003, 1_000_004]}},
        protocol="evopolicygym",
        episode_timeout_seconds=2.0,
    )
    refs = References(envs={env_id: {"random": -200.0, "expert": -100.0}})
    code = epg_phases.judge(candidate, settings, refs, [env_id], ["validation"], lambda written: 0)
    assert code == (0 if how == "plays" else 1)
