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

from evotree.domains.gym.settings import References

__all__ = ["normalized_score", "reference_returns", "compute_references", "CLIP_MAX"]

CLIP_MAX = 1.2


def normalized_score(ret: float, random_ret: float, expert_ret: float, clip_max: float = CLIP_MAX) -> float:
    """``clip((ret - random) / (expert - random), 0, clip_max)``; a non-finite return scores 0."""
    span = expert_ret - random_ret
    if not (math.isfinite(span) and span > 0):
        raise ValueError(f"the expert's return ({expert_ret}) must be above the random policy's ({random_ret})")
    if not math.isfinite(ret):
        return 0.0
    return min(clip_max, max(0.0, (ret - random_ret) / span))


def reference_returns(env_id: str, seeds: Iterable[int], which: str) -> list[float]:
    """Returns of the ``which`` reference policy (``random`` or ``expert``) on ``seeds``, in-process."""
    from evotree.domains.gym.catalog import make_env
    from evotree.domains.gym.episode import play
    from evotree.domains.gym.experts import make_expert, make_random

    env = make_env(env_id)
    build = {"random": make_random, "expert": make_expert}[which]
    returns = []
    try:
        for index, seed in enumerate(seeds):
            episode = play(env, env_id, index, seed, lambda *_: build(env_id, env))
            if episode.failed:
                raise RuntimeError(f"the {which} reference policy failed on {env_id} seed {seed}: {episode.message}")
            returns.append(episode.ret)
    finally:
        env.close()
    return returns


def compute_references(pools: dict[str, list[int]], *, static: bool = True) -> References:
    """References for each ``env_id -> validation seeds`` of ``pools``, with their provenance.

    Where EvoPolicyGym publishes static anchors (:data:`evotree.domains.gym.core16.STATIC_REFERENCES`)
    and ``static`` is true, those are used and nothing is played; otherwise the random policy and
    evotree's reference policy are rolled out on the pool. Each entry says where its numbers came
    from (``source``) and, when measured, how (policy, episodes, seeds).
    """
    import gymnasium

    from evotree.domains.gym.core16 import STATIC_REFERENCES, STATIC_SOURCE

    refs = References(meta={"pool": "validation", "gymnasium": gymnasium.__version__,
                            "computed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    for env_id, seeds in pools.items():
        if static and env_id in STATIC_REFERENCES:
            low, high = STATIC_REFERENCES[env_id]
            refs.envs[env_id] = {"random": low, "expert": high, "source": STATIC_SOURCE}
            continue
        random_returns = reference_returns(env_id, seeds, "random")
        expert_returns = reference_returns(env_id, seeds, "expert")
        entry: dict[str, Any] = {
            "random": sum(random_returns) / len(random_returns),
            "expert": sum(expert_returns) / len(expert_returns),
            "episodes": len(seeds),
            "source": (f"measured by evotree: mean return on the {len(seeds)} validation seeds of the uniform "
                       "random policy (experts.RandomPolicy) and of evotree's reference policy "
                       f"({_expert_name(env_id)}), one fresh policy per episode, seeded as in the judge"),
        }
        if entry["expert"] <= entry["random"]:
            raise RuntimeError(f"{env_id}: the expert ({entry['expert']:.3f}) does not beat the random policy "
                               f"({entry['random']:.3f}) on the validation pool; its scores would be undefined")
        refs.envs[env_id] = entry
    return refs


def _expert_name(env_id: str) -> str:
    from evotree.domains.gym.core16 import OBS_ONLY, PRIVILEGED

    if env_id in OBS_ONLY or env_id in PRIVILEGED:
        privileged = "; privileged: it reads the environment's state" if env_id in PRIVILEGED else ""
        return f"evotree.domains.gym.core16{privileged}"
    return "evotree.domains.gym.experts"
