"""Normalized scores and the reference returns they are measured against.

``score = clip((R - random) / (expert - random), 0, clip_max)`` per episode, with ``random`` and
``expert`` the mean returns of :class:`evotree.domains.gym.experts.RandomPolicy` and the environment's
expert heuristic on the *validation* pool (computed once, when the workspace is created, and
kept in the hidden ``judge/references.json``). 0 is the random policy, 1 the expert; beating
the expert earns up to ``clip_max`` (1.2). An episode that fails (error, timeout, invalid
action) scores 0 in the judge: it is an execution failure, whatever it had collected.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from typing import Any

import numpy as np

from evotree.domains.gym.settings import References
from evotree.domains.gym.catalog import make_env
from evotree.domains.gym.episode import play
from evotree.domains.gym.experts import RandomPolicy
from evotree.domains.gym.experts import make_expert
from evotree.domains.gym.core16 import STATIC_REFERENCES
from evotree.domains.gym.core16 import STATIC_SOURCE
from evotree.domains.gym.core16 import OBS_ONLY
from evotree.domains.gym.core16 import PRIVILEGED

__all__ = ["normalized_score", "reference_returns", "compute_references", "ZeroPolicy", "CLIP_MAX"]

CLIP_MAX = 1.2


def normalized_score(
    ret: float, random_ret: float, expert_ret: float, clip_max: float = CLIP_MAX
) -> float:
    """``clip((ret - random) / (expert - random), 0, clip_max)``; a non-finite return scores 0."""
    span = expert_ret - random_ret
    if not (math.isfinite(span) and span > 0):
        raise ValueError(
            f"the expert's return ({expert_ret}) must be above the random policy's ({random_ret})"
        )
    if not math.isfinite(ret):
        return 0.0
    return min(clip_max, max(0.0, (ret - random_ret) / span))


def reference_returns(env_id: str, seeds: Iterable[int], which: str) -> list[float]:
    """Returns of the ``which`` policy on ``seeds``, in-process: ``random``, ``expert`` (evotree's
    reference policy) or ``zero`` (the constant zero action: :class:`ZeroPolicy`).

    Each episode gets a fresh environment, as in the judge: an environment can keep state across
    ``reset(seed)`` (BipedalWalker keeps its Box2D world), and a reference must not depend on the
    order its seeds are played in.
    """

    returns = []
    for index, seed in enumerate(seeds):
        env = make_env(env_id)
        try:
            if (
                which == "random"
            ):  # the action space play() seeded (highway-env makes a new one at reset)
                factory = RandomPolicy
            else:
                build = {"expert": make_expert, "zero": ZeroPolicy.make}[which]
                factory = lambda *_, _env=env, _build=build: _build(env_id, _env)  # noqa: E731
            episode = play(env, env_id, index, seed, factory)
        finally:
            env.close()
        if episode.failed:
            raise RuntimeError(
                f"the {which} reference policy failed on {env_id} seed {seed}: {episode.message}"
            )
        returns.append(episode.ret)
    return returns


class ZeroPolicy:
    """The trivial policy: zero torque (a Box space's zero, clipped into its bounds), or a Discrete
    space's first action. An upper anchor must be at least as good as doing nothing."""

    def __init__(self, action_space: Any) -> None:
        import gymnasium

        if isinstance(action_space, gymnasium.spaces.Box):
            zero = np.clip(np.zeros(action_space.shape), action_space.low, action_space.high)
            self.action: Any = zero.astype(action_space.dtype)
        elif isinstance(action_space, gymnasium.spaces.Discrete):
            self.action = int(action_space.start)
        else:
            raise TypeError(f"no zero action for {action_space}")

    @classmethod
    def make(cls, env_id: str, env: Any) -> ZeroPolicy:
        return cls(env.action_space)

    def reset(self) -> None:
        pass

    def act(self, obs: Any) -> Any:
        return self.action.copy() if isinstance(self.action, np.ndarray) else self.action


def compute_references(pools: dict[str, list[int]], *, static: bool = True) -> References:
    """References for each ``env_id -> validation seeds`` of ``pools``, with their provenance.

    Where EvoPolicyGym publishes static anchors (:data:`evotree.domains.gym.core16.STATIC_REFERENCES`)
    and ``static`` is true, those are used and nothing is played; otherwise the random policy,
    evotree's reference policy and the zero-action policy are rolled out on the pool, and the upper
    anchor is the better of the reference and zero actions (``expert_policy`` says which; doing
    nothing must not score above "expert"). Each entry says where its numbers came from
    (``source``) and, when measured, how (policies, their means, episodes).
    """
    import gymnasium

    refs = References(
        meta={
            "pool": "validation",
            "gymnasium": gymnasium.__version__,
            "computed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
    )
    for env_id, seeds in pools.items():
        if static and env_id in STATIC_REFERENCES:
            low, high = STATIC_REFERENCES[env_id]
            refs.envs[env_id] = {"random": low, "expert": high, "source": STATIC_SOURCE}
            continue
        means = {
            "random": _mean(reference_returns(env_id, seeds, "random")),
            "reference": _mean(reference_returns(env_id, seeds, "expert")),
        }
        try:
            means["zero"] = _mean(reference_returns(env_id, seeds, "zero"))
        except TypeError:  # an action space without a zero action: not a candidate
            pass
        best = "zero" if means.get("zero", -math.inf) > means["reference"] else "reference"
        chosen = (
            f"evotree's reference policy ({_expert_name(env_id)})"
            if best == "reference"
            else f"the zero-action policy (scoring.ZeroPolicy), which beat evotree's reference policy "
            f"({_expert_name(env_id)}: {means['reference']:.3f})"
        )
        entry: dict[str, Any] = {
            "random": means["random"],
            "expert": means[best],
            "expert_policy": best,
            "measured": {k: round(v, 6) for k, v in means.items()},
            "episodes": len(seeds),
            "source": (
                f"measured by evotree: mean return on the {len(seeds)} validation seeds of the uniform "
                f"random policy (experts.RandomPolicy) and of {chosen}, the better of evotree's "
                "reference policy and zero actions; one fresh environment and policy per episode, "
                "seeded as in the judge"
            ),
        }
        if entry["expert"] <= entry["random"]:
            raise RuntimeError(
                f"{env_id}: the expert ({entry['expert']:.3f}) does not beat the random policy "
                f"({entry['random']:.3f}) on the validation pool; its scores would be undefined"
            )
        refs.envs[env_id] = entry
    return refs


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def _expert_name(env_id: str) -> str:

    if env_id in OBS_ONLY or env_id in PRIVILEGED:
        privileged = (
            "; privileged: it reads the environment's state" if env_id in PRIVILEGED else ""
        )
        return f"evotree.domains.gym.core16{privileged}"
    return "evotree.domains.gym.experts"
