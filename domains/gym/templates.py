"""The files ``evotree init --domain gym`` writes: policy.py, gym.toml and the hidden judge files."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence

from evotree.core.config_template import toml_value
from evotree.domains.gym.settings import HIDDEN_SEED_MAX, HIDDEN_SEED_MIN

#: a TOML bare key (written as it is; any other key is quoted)
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

__all__ = ["POLICY_PY", "render_gym_toml", "render_judge_toml", "draw_hidden_pools"]

POLICY_PY = '''\
"""v0 policy for evotree's gym domain: one class that plays every environment in gym.toml.

The contract (checked before any episode runs; a policy.py that breaks it is an invalid
submission, which costs no episodes):

* this file defines ``class Policy``;
* ``Policy(env_id, observation_space, action_space)`` is built afresh for every episode;
* ``reset()`` is called once at the start of the episode, ``act(obs)`` at every step;
* ``act`` returns an action in ``action_space``: an ``int`` for Discrete spaces, a numpy array
  of exactly the space's shape, within its bounds, for Box spaces (clip it!). Anything else
  ends the episode as ``invalid_action``.

Each episode's seed also seeds ``random`` and ``numpy.random``, so the policy may be
stochastic and still reproducible. An exception, a hang past the time limit or an invalid
action ends that episode with an error, shown in the train feedback (`evotree show`,
the rollouts of the run) and scored 0 by the judge.

This baseline is deliberately simple; improve it using the train feedback.
"""

import numpy as np


class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.env_id = env_id
        self.action_space = action_space

    def reset(self):
        pass

    def act(self, obs):
        if self.env_id == "CartPole-v1":
            # push the cart towards the side the pole leans to
            return int(obs[2] > 0)
        if self.env_id == "Acrobot-v1":
            # torque in the direction the first link swings
            return 2 if obs[4] > 0 else 0
        if self.env_id == "MountainCar-v0":
            # push right while moving right, coast otherwise
            return 2 if obs[1] >= 0 else 1
        if self.env_id == "Pendulum-v1":
            # push towards upright (obs = cos, sin, angular velocity): too weak to swing up
            torque = -2.0 * obs[1]
            return np.clip(np.array([torque], dtype=np.float32), -2.0, 2.0)
        # any other environment: uniform random actions
        return self.action_space.sample()
'''

_GYM_TOML = """\
# Train feedback for policy.py (evotree gym domain). This file belongs to your version: change
# it to buy the feedback you need.
#
# Every train episode is one rollout row in the run's evidence and is charged to the version's
# episode budget ([budget].max_episodes in evotree.toml: 128 per version, as in EvoPolicyGym).
# A run that would go past the budget is stopped. The judge scores your policy on hidden
# episodes (other seeds) that you never see.

[train]
# Environments to get feedback on.
envs = [{envs}]
# Episodes per environment per run ({episodes} per run with the defaults).
episodes_per_env = {episodes_per_env}
# Train episode seeds: at run seed s (evotree run --seeds / EVOTREE_SEED; 0 when unset) episode i
# of each environment has seed first_seed + s * episodes_per_env + i, so each run seed plays other
# episodes (run seed 0: first_seed, first_seed + 1, ...). Seeds from {hidden_min} up are
# reserved for the judge (train seeds wrap below it); the judge's episodes ignore the run seed.
first_seed = 0
# An episode that runs longer is stopped and recorded as a timeout.
episode_timeout_seconds = {timeout}
# Worker processes playing episodes in parallel.
workers = 1
"""

_JUDGE_TOML_HEAD = """\
# HIDDEN: the judge's configuration. It lives in the judge store (refs/evotree/judge), in no
# checkout, and is written only into each run's judge directory ([eval].judge_paths in
# evotree.toml). Change it with: evotree judge export DIR, edit, evotree judge promote DIR.
#
# Pools: for each split and environment, a fixed list of seeds drawn at random when the
# workspace was created (all >= {hidden_min}, so disjoint from every train seed, and disjoint
# from each other). Task "ENV#i" is the episode with the i-th seed: every version is judged on
# the same episodes. references.json holds the random and expert mean returns on the
# validation pool that normalize scores; recompute it after changing the validation pool or
# the environments: python -m evotree.domains.gym references

[judge]
# Environments that are judged (each needs an entry in references.json).
envs = [{envs}]
# Per-episode time limit; an episode past it scores 0 (the policy's process is killed).
episode_timeout_seconds = {timeout}
# After this many timeouts in one environment its remaining episodes score 0 unplayed (0: never).
max_timeouts_per_env = 3
# Policy processes playing episodes in parallel.
workers = 1
# Episodes each policy process plays side by side (one message each way per round of all of
# them; fewer when the policy is slow); each keeps its own policy object and generators, and
# its time limit is its wall time.
lanes = 256
# Accepted and ignored: the environment runs in the judge's process, the policy in its own, so
# nothing is replayed.
replay_fraction = 0.25
# Normalized score = clip((R - random) / (expert - random), 0, clip_max).
clip_max = 1.2
"""


def _quoted(items: Sequence[str]) -> str:
    """The items as TOML strings, comma-separated (quoted and escaped by the TOML writer)."""
    return ", ".join(toml_value(str(item)) for item in items)


def render_gym_toml(
    envs: Sequence[str], *, episodes_per_env: int = 8, timeout: float = 30.0
) -> str:
    return _GYM_TOML.format(
        envs=_quoted(envs),
        episodes_per_env=episodes_per_env,
        episodes=episodes_per_env * len(envs),
        hidden_min=f"{HIDDEN_SEED_MIN:_}",
        timeout=_number(timeout),
    )


def _number(value: float) -> str:
    """A number as TOML: an integral value without a fraction (``30``), else its repr."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def draw_hidden_pools(
    envs: Sequence[str], sizes: dict[str, int]
) -> dict[str, dict[str, list[int]]]:
    """Fresh random seeds in the hidden range, distinct over every split and environment."""
    rng = secrets.SystemRandom()
    used: set[int] = set()
    pools: dict[str, dict[str, list[int]]] = {}
    for split, size in sizes.items():
        pools[split] = {}
        for env_id in envs:
            seeds = []
            while len(seeds) < size:
                seed = rng.randint(HIDDEN_SEED_MIN, HIDDEN_SEED_MAX)
                if seed not in used:
                    used.add(seed)
                    seeds.append(seed)
            pools[split][env_id] = seeds
    return pools


def render_judge_toml(
    envs: Sequence[str], pools: dict[str, dict[str, list[int]]], *, timeout: float = 30.0
) -> str:
    lines = [
        _JUDGE_TOML_HEAD.format(
            envs=_quoted(envs), timeout=_number(timeout), hidden_min=f"{HIDDEN_SEED_MIN:_}"
        )
    ]
    for split, table in pools.items():
        key = split if _BARE_KEY.fullmatch(split) else toml_value(split)
        lines.append(f"\n[pools.{key}]")
        for env_id, seeds in table.items():
            lines.append(f"{toml_value(env_id)} = {toml_value([int(s) for s in seeds])}")
    return "\n".join(lines) + "\n"
