"""Episodes played side by side in one policy process (lanes) play exactly what each plays alone.

The policy's process answers several episodes per message (``runner.Worker.play_lanes``). Each
episode has its own policy object, its own copies of the spaces and its own ``random`` /
``numpy.random`` (the module functions are routed to the running episode's generators), so a
policy that draws from the global generators gets the same draws with 1, 3 or 16 lanes, and the
same as the in-process loop (``play(..., isolated=True)``). A crash or a hang of the policy's
process fails every episode in flight, and none of them is played again (a replay would be a
re-roll for a policy that ends its process when it is losing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("gymnasium")

from evotree.domains.gym.catalog import make_env  # noqa: E402
from evotree.domains.gym.episode import play  # noqa: E402
from evotree.domains.gym.runner import Task, run_episodes  # noqa: E402
from evotree.domains.gym.worker import load_policy_class  # noqa: E402

ENV = "CartPole-v1"
TASKS = [Task(ENV, i, 1_000_000 + 7919 * i) for i in range(12)]

#: draws from every global generator and from the space it was given, every step
STOCHASTIC = """\
import random
import numpy as np
from random import random as draw

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.space = action_space
    def reset(self):
        # reseeding the global generator is the episode's own business
        np.random.seed(int(np.random.randint(1000)))
    def act(self, obs):
        if np.random.rand() < 0.2 or draw() < 0.1 or random.random() < 0.05:
            return int(self.space.sample())
        return int(obs[2] + 0.5 * obs[3] > 0)
"""


def _candidate(tmp_path: Path, source: str, name: str = "c") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "policy.py").write_text(source)
    return folder


def _play(
    candidate: Path, lanes: int, tasks: list[Task] = TASKS, **kwargs: Any
) -> list[tuple[int, float, str]]:
    episodes = run_episodes(
        candidate,
        tasks,
        timeout=kwargs.pop("timeout", 30.0),
        sandbox=None,
        lanes=lanes,
        summarize=False,
        **kwargs,
    )
    return [(e.index, e.ret, e.finish_reason) for e in episodes]


@pytest.mark.heavy
def test_lanes_play_what_one_at_a_time_plays(tmp_path: Path) -> None:
    candidate = _candidate(tmp_path, STOCHASTIC)
    alone = _play(candidate, 1)
    assert [i for i, _, _ in alone] == list(range(len(TASKS)))  # task order
    for lanes in (3, 16):
        assert _play(candidate, lanes) == alone, lanes  # same order, same returns
    policy_class = load_policy_class(candidate / "policy.py")
    local = []
    for task in TASKS:
        env = make_env(ENV)
        try:
            local.append(play(env, ENV, task.index, task.seed, policy_class, isolated=True).ret)
        finally:
            env.close()
    assert [ret for _, ret, _ in alone] == local
    assert len({ret for _, ret, _ in alone}) > 3  # the draws do change the episodes


CRASHY = """\
import ctypes, signal, time
import numpy as np

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass
    def reset(self):
        self.fate = np.random.rand()  # the episode's own generator: the same fate in any lane
    def act(self, obs):
        if self.fate < 0.15:
            ctypes.string_at(0)
        if self.fate > 0.9:
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            while True:
                time.sleep(0.01)
        return int(obs[2] > 0)
"""


@pytest.mark.heavy
def test_a_crash_or_a_hang_fails_every_episode_in_flight(tmp_path: Path) -> None:
    candidate = _candidate(tmp_path, CRASHY)
    alone = _play(candidate, 1, timeout=0.5, max_timeouts=0)
    reasons = {reason for _, _, reason in alone}
    assert {"error", "timeout"} <= reasons and reasons & {"terminated", "truncated"}, alone
    side = _play(candidate, 6, timeout=0.5, max_timeouts=0)
    assert [i for i, _, _ in side] == list(range(len(TASKS)))
    lost = ("error", "timeout")
    for one, other in zip(alone, side, strict=True):
        if one[2] in lost:  # what fails alone fails in lanes
            assert other[2] in lost, (one, other)
        elif other[2] not in lost:  # what plays to its end plays what it plays alone
            assert other == one
    # the episodes in flight with a crash or a hang fail with it, so lanes lose at least what
    # playing alone loses; how many more depends on how wide the lanes were when it struck (they
    # ramp up from one and narrow for a slow policy, so on a loaded machine it can be none)
    assert sum(r in lost for _, _, r in side) >= sum(r in lost for _, _, r in alone), side


#: any space: draws from the global generator and the space, or answers from the observation
ANY_SPACE = """\
import numpy as np

class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.space = action_space
    def reset(self):
        pass
    def act(self, obs):
        if np.random.rand() < 0.3:
            return self.space.sample()
        if hasattr(self.space, "n"):
            return int(float(np.sum(obs)) > 0) % int(self.space.n)
        return np.clip(np.zeros(self.space.shape, self.space.dtype) + float(np.sum(obs)),
                       self.space.low, self.space.high).astype(self.space.dtype)
"""


@pytest.mark.heavy
def test_lanes_of_several_environments_play_what_one_at_a_time_plays(tmp_path: Path) -> None:
    """Lanes holding episodes of different environments at once (observations of several dtypes
    and shapes in one round, Discrete and Box actions): the same episodes as one at a time."""
    candidate = _candidate(tmp_path, ANY_SPACE)
    envs = ["CartPole-v1", "Acrobot-v1", "Pendulum-v1", "MountainCarContinuous-v0"]
    tasks = [
        Task(env, i, 2_000_000 + 104729 * i + 13 * j)
        for j, env in enumerate(envs)
        for i in range(3)
    ]
    alone = _play(candidate, 1, tasks)
    assert all(reason in ("terminated", "truncated") for _, _, reason in alone), alone
    assert _play(candidate, 8, tasks) == alone


RESET_SAFE = [
    "CartPole-v1",
    "MountainCar-v0",
    "MountainCarContinuous-v0",
    "Pendulum-v1",
    "Acrobot-v1",
]


def _episode(env: Any, seed: int, actions: list[Any]) -> list[Any]:
    """The observations and rewards of ``env`` (reset as the lanes reset it: no global seeding,
    no action-space seeding) under ``actions``, up to the end of the episode."""
    from evotree.domains.gym.episode import _fast_path

    bare = _fast_path(env)[0]
    obs, _ = bare.reset(seed=seed)
    out = [obs.tobytes()]
    for action in actions:
        obs, reward, terminated, truncated, _ = bare.step(action)
        out.append((obs.tobytes(), float(reward)))
        if terminated:
            break
    return out


@pytest.mark.parametrize("env_id", RESET_SAFE)
def test_a_reused_environment_plays_what_a_fresh_one_plays(env_id: str) -> None:
    """The lanes play the next episode of these environments on an environment that played one
    already (``driver.reusable``): its reset gives exactly a fresh environment's episode, in any
    order, without seeding the global generators or its action space."""
    import numpy as np

    from evotree.domains.gym.driver import reusable

    seeds = [3, 1_000_003, 77, 3]
    rng = np.random.default_rng(0)
    probe = make_env(env_id)
    actions = [[probe.action_space.sample() for _ in range(120)] for _ in seeds]
    assert reusable(probe)
    probe.close()
    fresh = []
    for seed, acts in zip(seeds, actions, strict=True):
        env = make_env(env_id)
        fresh.append(_episode(env, seed, acts))
        env.close()
    env = make_env(env_id)
    for k in rng.permutation(len(seeds)):
        np.random.seed(int(k))  # the global generators are not the episode's
        assert _episode(env, seeds[k], actions[k]) == fresh[k]
    env.close()


def test_other_environments_are_made_fresh_for_every_episode() -> None:
    """An environment with a wrapper of its own, a subclass of a reset-safe class, or one that
    keeps state across resets (BipedalWalker's Box2D world) is never reused."""
    import gymnasium as gym
    from gymnasium.envs.classic_control.cartpole import CartPoleEnv

    from evotree.domains.gym.driver import reusable

    class Tweaked(CartPoleEnv):
        pass

    assert not reusable(gym.wrappers.RecordEpisodeStatistics(make_env(ENV)))
    assert not reusable(Tweaked())
    assert not reusable(gym.make(ENV, render_mode="rgb_array"))
    try:
        walker = make_env("BipedalWalker-v3")
    except Exception:  # noqa: BLE001 - Box2D not installed
        return
    assert not reusable(walker)


@pytest.mark.heavy
def test_two_groups_of_lanes_play_what_one_at_a_time_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the lanes split in two groups whose rounds overlap (``runner.GROUPS = 2``: the
    judge steps one group while the policy's process answers the other), every episode plays
    what it plays alone, in the same order; so do episodes of several environments."""
    from evotree.domains.gym import runner

    candidate = _candidate(tmp_path, STOCHASTIC)
    alone = _play(candidate, 1)
    monkeypatch.setattr(runner, "GROUPS", 2)
    for lanes in (2, 5, 16):
        assert _play(candidate, lanes) == alone, lanes
    several = _candidate(tmp_path, ANY_SPACE, "several")
    tasks = [
        Task(env, i, 3_000_000 + 7 * i + j)
        for j, env in enumerate(["CartPole-v1", "Pendulum-v1", "Acrobot-v1"])
        for i in range(4)
    ]
    monkeypatch.setattr(runner, "GROUPS", 1)
    one = _play(several, 1, tasks)
    monkeypatch.setattr(runner, "GROUPS", 2)
    assert _play(several, 6, tasks) == one


@pytest.mark.heavy
def test_lanes_regrouped_while_they_play_play_what_one_at_a_time_plays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default (``runner.GROUPS = None``) switches between one and two groups of lanes while
    they play (``runner._Overlap``, by this thread's wait for a CPU): with a controller that
    switches at every look (its window 0), and one that can never read the wait, every episode
    plays what it plays alone, in the same order."""
    from evotree.domains.gym import runner

    candidate = _candidate(tmp_path, STOCHASTIC)
    monkeypatch.setattr(runner, "GROUPS", 1)
    alone = _play(candidate, 1)
    monkeypatch.setattr(runner, "GROUPS", None)
    looks: list[int] = []

    def flip(self: runner._Overlap, now: float) -> int:
        self.groups = 2 if self.groups == 1 else 1
        looks.append(self.groups)
        return self.groups

    monkeypatch.setattr(runner._Overlap, "look", flip)
    for lanes in (2, 5, 16):
        assert _play(candidate, lanes) == alone, lanes
    assert 1 in looks and 2 in looks
    monkeypatch.undo()
    monkeypatch.setattr(runner, "GROUPS", None)
    monkeypatch.setattr(runner._Overlap, "PATH", str(tmp_path / "no-schedstat"))
    assert runner._Overlap.start() is None
    assert _play(candidate, 16) == alone


def test_overlap_follows_the_wait_for_a_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two groups after a window in which this thread waited under ``LOW`` of it for a CPU,
    one after a window over ``HIGH``, unchanged in between and within a window."""
    from evotree.domains.gym import runner

    waits = iter([0.0, 0.001, 0.001 + 0.05, 0.051 + 0.015])
    monkeypatch.setattr(runner._Overlap, "waited", classmethod(lambda cls: next(waits)))
    overlap = runner._Overlap(runner._Overlap.waited() or 0.0, 0.0)
    assert overlap.look(0.1) == 1  # within the first window: not looked
    assert overlap.look(0.2) == 2  # 1 ms of 200: 0.5 %
    assert overlap.look(0.4) == 1  # 50 ms of 200: 25 %
    assert overlap.look(0.6) == 1  # 15 ms of 200: 7.5 %, between LOW and HIGH
