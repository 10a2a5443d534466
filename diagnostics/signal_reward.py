"""Signal analyzers of the per-step mean reward: its trend over the last window (plateau,
decline) and a run that ends below where it started."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from evotree.diagnostics.findings import (
    AnalysisContext,
    Analyzer,
    Finding,
    check_range,
    query,
    register_analyzer,
)
from evotree.diagnostics.signal_series import (
    is_group_run,
    linear_trend,
    lower_learning_rate,
    reward_series,
    shared_groups,
    tail,
    using,
)
from evotree.diagnostics.thresholds import help_field

__all__ = [
    "RewardBelowStart",
    "RewardBelowStartThresholds",
    "RewardTrend",
    "RewardTrendThresholds",
]


@dataclass(frozen=True)
class RewardTrendThresholds:
    window_fraction: float = help_field(
        0.5, "the trend is fitted over this last fraction of the steps"
    )
    min_window_steps: int = help_field(5, "fewer steps than this in the window: no verdict")
    alpha: float = help_field(0.05, "significance level of the slope's t-test")
    min_effect: float = help_field(
        0.05,
        "a change over the window smaller than this many reward standard deviations counts as flat",
    )
    reward_metrics: tuple[str, ...] = help_field(
        ("reward",), "signal metrics used when the run has no rollouts"
    )

    def __post_init__(self) -> None:
        owner = "signal.reward_trend"
        check_range(owner, "window_fraction", self.window_fraction, 0.0, 1.0)
        check_range(owner, "alpha", self.alpha, 0.0, 1.0)
        check_range(owner, "min_effect", self.min_effect, 0.0, math.inf)
        if self.min_window_steps < 3:
            raise ValueError(
                f"min_window_steps must be at least 3 in {owner}, actually: {self.min_window_steps}"
            )


@register_analyzer
class RewardTrend(Analyzer):
    """Slope of the per-step mean reward over the last window: plateau or decline.

    The per-step mean comes from the train rollouts (or, without rollouts, a reward signal).
    An OLS line is fitted over the last ``window_fraction`` of steps; its change over the window
    is compared with ``min_effect`` reward standard deviations. Declining: a significantly
    negative slope of at least that size (high). Plateau: neither a significant rise of at
    least that size nor a decline (warn).
    """

    name = "signal.reward_trend"
    layer = "signal"
    codes = ("signal.reward_plateau", "signal.reward_declining")
    thresholds_type = RewardTrendThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        with using(context) as ctx:
            found = reward_series(con, ctx, run_id, t.reward_metrics)
            grouped = (
                found is not None and found[3] == "rollouts" and is_group_run(con, run_id, ctx)
            )
        if found is None:
            return []
        steps, means, scale, source, shown = found
        k = tail(steps.size, t.window_fraction, t.min_window_steps)
        if k < t.min_window_steps:
            return []
        trend = linear_trend(steps[-k:], means[-k:])
        if trend is None:
            return []
        effect = t.min_effect * scale
        evidence = {
            "source": source,
            "steps": int(steps.size),
            "window_steps": k,
            "window_first_step": trend.first_step,
            "window_last_step": trend.last_step,
            "slope_per_step": trend.slope,
            "p_value": trend.p_value,
            "change_over_window": trend.change,
            "reward_std": scale,
            "min_change": effect,
            "window_start_fit": trend.start,
            "window_end_fit": trend.end,
            "mean_reward_window": float(means[-k:].mean()),
            "mean_reward_first_steps": float(means[: tail(steps.size, 0.1)].mean()),
            "alpha": t.alpha,
            "query": shown,
        }
        if trend.falling(t.alpha, effect):
            return [
                self.finding(
                    "signal.reward_declining",
                    "high",
                    f"mean reward is falling over the last {k} steps: {trend.start:.3g} -> {trend.end:.3g} "
                    f"(p = {trend.p_value:.2g})",
                    run_id=run_id,
                    version=version,
                    evidence=evidence,
                    suggestion="training is making the policy worse: check the learning rate, KL and clipping "
                    "findings, and whether the reward can be gamed; stop or roll back to the best step",
                )
            ]
        if trend.rising(t.alpha, effect):
            return []
        # the group filter is advice for GRPO-style groups only (not episodes, not single samples)
        return [
            self.finding(
                "signal.reward_plateau",
                "warn",
                f"mean reward has plateaued over the last {k} steps at ~{evidence['mean_reward_window']:.3g} "
                f"(change {trend.change:+.3g}, p = {trend.p_value:.2g})",
                run_id=run_id,
                version=version,
                evidence=evidence,
                suggestion=(
                    "more steps of the same recipe are unlikely to help: look at the dead-group and "
                    "solve-rate findings (filter dead groups with StdGroupFilter, harder or easier "
                    "tasks), or change the reward"
                )
                if grouped
                else (
                    "more steps of the same recipe are unlikely to help: change the recipe, the tasks "
                    "or the reward"
                ),
                skills=["StdGroupFilter"] if grouped else [],
            )
        ]


@dataclass(frozen=True)
class RewardBelowStartThresholds:
    drop: float = help_field(
        0.2,
        "the run ends (its last end_fraction of steps) more than this fraction of "
        "its starting reward below it: high",
    )
    start_steps: int = help_field(
        3, "the starting level is the mean reward of this many first steps"
    )
    end_fraction: float = help_field(
        0.1, "the end level is the mean over this last fraction of steps"
    )
    smooth_fraction: float = help_field(
        0.05, "the fall is found on a running mean over this fraction of the steps (at least 3)"
    )
    min_steps: int = help_field(20, "fewer steps than this: no verdict")
    reward_metrics: tuple[str, ...] = help_field(
        ("reward",), "signal metrics used when the run has no rollouts"
    )

    def __post_init__(self) -> None:
        owner = "signal.reward_below_start"
        check_range(owner, "drop", self.drop, 0.0, 1.0)
        check_range(owner, "end_fraction", self.end_fraction, 0.0, 0.5)
        check_range(owner, "smooth_fraction", self.smooth_fraction, 0.0, 0.5)


@register_analyzer
class RewardBelowStart(Analyzer):
    """Training made the policy worse than it started: the mean reward of the run's last steps
    is more than ``drop`` of its starting level below it (GRPO group runs only).

    The fall step is the first at which a running mean falls below that line. A fall within the
    first half of the run, with the run's ``learning_rate`` logged, names a recipe change (the
    step size: ÷ 4 within the first quarter, ÷ 2 within the half); the dead groups that appeared
    after the fall (their share doubled, or rose by 20 points) and the collapse's usual symptoms (entropy
    collapse, echo trap, a plateau at the fallen level) are listed as findings it addresses.
    """

    name = "signal.reward_below_start"
    layer = "signal"
    codes = ("signal.reward_below_start",)
    thresholds_type = RewardBelowStartThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        with using(context) as ctx:
            return self._analyze(con, run_id, version, ctx)

    def _analyze(
        self, con: Any, run_id: str, version: str | None, ctx: AnalysisContext
    ) -> list[Finding]:
        t = self.thresholds
        if not is_group_run(con, run_id, ctx):
            return []
        found = reward_series(con, ctx, run_id, t.reward_metrics)
        if found is None:
            return []
        steps, means, _scale, source, shown = found
        if steps.size < max(t.min_steps, t.start_steps + 1):
            return []
        start = float(means[: t.start_steps].mean())
        end = float(means[-tail(steps.size, t.end_fraction) :].mean())
        if not start > 0 or end >= start * (1.0 - t.drop):
            return []
        w = max(3, math.ceil(steps.size * t.smooth_fraction))
        running = np.convolve(means, np.ones(w) / w, mode="valid")
        below = np.nonzero(running < start * (1.0 - t.drop))[0]
        fall = float(steps[below[0] + w - 1]) if below.size else float(steps[-1])
        span = float(steps[-1] - steps[0]) or 1.0
        share = (fall - float(steps[0])) / span
        evidence: dict[str, Any] = {
            "source": source,
            "start": start,
            "end": end,
            "drop": 1.0 - end / start,
            "fall_step": fall,
            "fall_share": share,
            "steps": int(steps.size),
            "threshold": t.drop,
            "query": shown,
        }
        change = self._step_size_change(con, run_id, fall, share, ctx)
        if change:
            evidence["recipe_change"] = change
        suggestion = "training made the policy worse than it started: " + (
            f"lower learning_rate from {change['from']:g} to {change['to']:g} (the fall came at "
            f"step {int(fall)}, {share:.0%} into the run)"
            if change
            else "check the learning rate, KL and clipping findings, and whether the reward can be gamed"
        )
        return [
            self.finding(
                "signal.reward_below_start",
                "high",
                f"mean reward ended {1.0 - end / start:.0%} below where it started ({start:.3g} -> {end:.3g}); "
                f"it fell by step {int(fall)}",
                run_id=run_id,
                version=version,
                evidence=evidence,
                suggestion=suggestion,
            )
        ]

    def _step_size_change(
        self, con: Any, run_id: str, fall: float, share: float, ctx: AnalysisContext
    ) -> dict[str, Any] | None:
        groups = shared_groups(con, ctx, run_id)
        rows, _ = query(
            con,
            (
                "SELECT avg(CASE WHEN coalesce(sd, 0) = 0 THEN 1.0 ELSE 0.0 END) FILTER (WHERE step < "
                f"{fall}) AS before, avg(CASE WHEN coalesce(sd, 0) = 0 THEN 1.0 ELSE 0.0 END) FILTER "
                f"(WHERE step >= {fall}) AS after FROM __run_groups__ WHERE n > 0"
            ),
            groups,
        )
        before, after = (rows[0][0], rows[0][1]) if rows else (None, None)
        dead = (
            ""
            if after is None
            else f"; dead groups {float(before or 0):.0%} before the fall, {float(after):.0%} after"
        )
        change = lower_learning_rate(
            con,
            run_id,
            share,
            lambda lr: (
                f"the reward fell below its start by step {int(fall)} ({share:.0%} into the run) at learning rate "
                f"{lr:g}, and never came back{dead}"
            ),
        )
        if change is None:
            return None
        also = ["signal.reward_plateau", "signal.entropy_collapse", "signal.echo_trap"]
        if (
            after is not None
            and float(after) > 0
            and (before is None or float(after) >= min(2 * float(before), float(before) + 0.2))
        ):
            also.insert(0, "signal.dead_groups_high")
        change["also_addresses"] = also
        return change
