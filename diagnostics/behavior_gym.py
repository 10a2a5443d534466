"""Behavior analyzer of gym runs' episodes: per environment, returns, lengths and termination
reasons, failed episodes and a policy collapsed onto one action."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from evotree.diagnostics.findings import (
    AnalysisContext,
    Analyzer,
    Finding,
    check_order,
    check_range,
    query,
    register_analyzer,
)
from evotree.diagnostics.behavior_rollouts import is_gym_run, run_train, sql_list
from evotree.diagnostics.thresholds import help_field, rate_finding

__all__ = [
    "Gym",
    "GymThresholds",
]


@dataclass(frozen=True)
class GymThresholds:
    failure_warn: float = help_field(
        0.1, "failed share of an environment's episodes above this: warn"
    )
    failure_high: float = help_field(0.5, "failed share above this: high")
    failure_reasons: tuple[str, ...] = help_field(
        ("error", "timeout", "invalid_action"), "finish_reason values of failed episodes"
    )
    action_entropy_min: float = help_field(
        0.1, "normalized action entropy below this: the policy (nearly) always takes one action"
    )
    min_episodes: int = help_field(
        4, "environments with fewer episodes are not judged for action collapse"
    )

    def __post_init__(self) -> None:
        owner = "behavior.gym"
        for name in ("failure_warn", "failure_high", "action_entropy_min"):
            check_range(owner, name, getattr(self, name), 0.0, 1.0)
        check_order(owner, failure_warn=self.failure_warn, failure_high=self.failure_high)


@register_analyzer
class Gym(Analyzer):
    """Episodes of gym runs (``group_id`` = environment, ``task_id`` = ``ENV#i``, reward = return).

    ``behavior.gym_episodes`` (info): per environment, episodes, return, episode-length
    quantiles and the termination reasons (``finish_reason``). ``behavior.gym_failures_high``:
    an environment whose failed share (``failure_reasons``) is above ``failure_warn``.
    ``behavior.gym_action_collapse``: discrete action counts are read from the texts
    (``actions 0:12 1:30`` in the summary :mod:`evotree.domains.gym.episode` writes); an environment
    whose action entropy, divided by log(actions seen, at least 2), is below
    ``action_entropy_min`` over at least ``min_episodes`` episodes.
    """

    name = "behavior.gym"
    layer = "behavior"
    codes = ("behavior.gym_episodes", "behavior.gym_failures_high", "behavior.gym_action_collapse")
    thresholds_type = GymThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        if not is_gym_run(con, run_id, context):
            return []
        envs, shown = self._environments(con, run_id)
        if not envs:
            return []
        total = sum(e["episodes"] for e in envs.values())
        out = [
            self.finding(
                "behavior.gym_episodes",
                "info",
                f"{total:,} episodes on {len(envs)} environments: "
                + "; ".join(
                    f"{env} return {e['mean_return']:.4g}, length {e['length_p50']:g}"
                    if e["mean_return"] is not None and e["length_p50"] is not None
                    else env
                    for env, e in list(envs.items())[:4]
                ),
                run_id=run_id,
                version=version,
                evidence={"environments": envs, "query": shown},
            )
        ]
        out += self._failures(envs, run_id, version, shown)
        return out + self._action_collapse(con, run_id, version)

    def _environments(self, con: Any, run_id: str) -> tuple[dict[str, dict[str, Any]], str]:
        """Per environment: episodes, mean return, length quantiles, failed episodes and the
        termination reasons; and the query."""
        rows, shown = query(
            con,
            (
                "SELECT group_id AS env, count(*) AS episodes, avg(reward) FILTER (WHERE isfinite(reward)) AS mean_return, "
                "avg(length) AS mean_length, quantile_cont(length, [0.1, 0.5, 0.9]) AS length_p10_p50_p90, "
                f"count(*) FILTER (WHERE finish_reason IN {sql_list(self.thresholds.failure_reasons)}) AS failed, "
                "histogram(coalesce(finish_reason, '(none)')) AS reasons "
                f"FROM _rollouts WHERE {run_train(run_id)} GROUP BY group_id ORDER BY group_id"
            ),
        )
        envs: dict[str, dict[str, Any]] = {}
        for env, n, ret, mean_len, q, failed, reasons in rows:
            envs[env] = {
                "episodes": n,
                "mean_return": ret,
                "mean_length": mean_len,
                "length_p10": q[0] if q else None,
                "length_p50": q[1] if q else None,
                "length_p90": q[2] if q else None,
                "failed": failed,
                "failed_fraction": failed / n,
                "termination_reasons": dict(reasons or {}),
            }
        return envs, shown

    def _failures(
        self, envs: dict[str, dict[str, Any]], run_id: str, version: str | None, shown: str
    ) -> list[Finding]:
        """``behavior.gym_failures_high`` for the environment with the largest failed share."""
        t = self.thresholds
        worst = max(envs, key=lambda e: envs[e]["failed_fraction"])
        frac = envs[worst]["failed_fraction"]
        return rate_finding(
            self,
            "behavior.gym_failures_high",
            frac,
            warn=t.failure_warn,
            high=t.failure_high,
            title=f"{frac:.0%} of {worst} episodes failed ({envs[worst]['failed']} of {envs[worst]['episodes']}: "
            + ", ".join(
                f"{r} {n}"
                for r, n in envs[worst]["termination_reasons"].items()
                if r in t.failure_reasons
            )
            + ")",
            run_id=run_id,
            version=version,
            evidence={
                "env": worst,
                "failed_fraction": frac,
                "failed_fractions": {e: v["failed_fraction"] for e, v in envs.items()},
                "failure_reasons": list(t.failure_reasons),
                "warn": t.failure_warn,
                "high": t.failure_high,
                "query": shown,
            },
            suggestion="the policy crashes, times out or returns invalid actions: read the episode "
            "texts (they hold the error), clip Box actions to the bounds, return ints for "
            "Discrete spaces",
        )

    def _action_collapse(self, con: Any, run_id: str, version: str | None) -> list[Finding]:
        """``behavior.gym_action_collapse``: the environment of lowest normalized action entropy,
        from the action counts in the episode texts, when it is below ``action_entropy_min``."""
        t = self.thresholds
        acts, shown_acts = query(
            con,
            (
                "SELECT env, action, sum(n) AS n, count(DISTINCT episode) AS episodes FROM (SELECT group_id AS env, "
                "task_id AS episode, split_part(pair, ':', 1) AS action, TRY_CAST(split_part(pair, ':', 2) AS BIGINT) AS n "
                "FROM (SELECT group_id, task_id, unnest(string_split(regexp_extract(text, "
                "'actions ((?:-?[0-9]+:[0-9]+ ?)+)', 1), ' ')) AS pair "
                f"FROM _rollouts WHERE {run_train(run_id)} AND text LIKE '%actions %') WHERE pair <> '') "
                "WHERE n IS NOT NULL GROUP BY env, action ORDER BY env, action"
            ),
        )
        counts: dict[str, dict[str, int]] = {}
        episodes: dict[str, int] = {}
        for env, action, n, eps in acts:
            counts.setdefault(env, {})[action] = int(n)
            episodes[env] = max(episodes.get(env, 0), int(eps))
        entropy = {}
        for env, per_action in counts.items():
            c = np.array(list(per_action.values()), dtype=np.float64)
            if c.sum() <= 0 or episodes[env] < t.min_episodes:
                continue
            p = c[c > 0] / c.sum()
            entropy[env] = float(-(p * np.log(p)).sum() / math.log(max(len(per_action), 2)))
        if not entropy:
            return []
        low = min(entropy, key=entropy.get)
        if not entropy[low] < t.action_entropy_min:
            return []
        return [
            self.finding(
                "behavior.gym_action_collapse",
                "warn",
                f"{low}: the policy almost always takes one action (normalized action entropy "
                f"{entropy[low]:.2f}; counts {counts[low]})",
                run_id=run_id,
                version=version,
                evidence={
                    "env": low,
                    "action_entropy": entropy[low],
                    "action_counts": counts[low],
                    "entropies": entropy,
                    "threshold": t.action_entropy_min,
                    "query": shown_acts,
                },
                suggestion="a policy stuck on one action ignores its observations: check the act() "
                "logic (a constant branch, a wrong observation index)",
            )
        ]
