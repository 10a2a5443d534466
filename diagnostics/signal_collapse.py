"""Signal analyzers of a collapsing policy: entropy collapse, and the echo trap (reward
variance and entropy fall, then the gradient norm spikes)."""

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
from evotree.diagnostics.signal_series import (
    lower_learning_rate,
    metric_like,
    series_by_metric,
    shared_groups,
    spikes,
    tail,
    using,
)
from evotree.diagnostics.thresholds import help_field
from evotree.harness.compaction import sql_string

__all__ = [
    "EchoTrap",
    "EchoTrapThresholds",
    "EntropyCollapse",
    "EntropyCollapseThresholds",
]


@dataclass(frozen=True)
class EntropyCollapseThresholds:
    warn_drop: float = help_field(
        0.5, "entropy fell by more than this fraction of its early level: warn"
    )
    high_drop: float = help_field(0.8, "entropy fell by more than this fraction: high")
    early_fraction: float = help_field(
        0.1, "the early level is the mean over this first fraction of steps"
    )
    late_fraction: float = help_field(
        0.1, "the late level is the mean over this last fraction of steps"
    )
    min_steps: int = help_field(4, "fewer logged steps than this: no verdict")

    def __post_init__(self) -> None:
        owner = "signal.entropy_collapse"
        check_range(owner, "warn_drop", self.warn_drop, 0.0, 1.0)
        check_range(owner, "high_drop", self.high_drop, 0.0, 1.0)
        check_order(owner, warn_drop=self.warn_drop, high_drop=self.high_drop)
        check_range(owner, "early_fraction", self.early_fraction, 0.0, 0.5)
        check_range(owner, "late_fraction", self.late_fraction, 0.0, 0.5)


def _learning_rate_change(
    con: Any, run_id: str, steps: np.ndarray, values: np.ndarray, early: float, t: Any
) -> dict[str, Any] | None:
    """A recipe change for an early entropy collapse: lower ``learning_rate``. The collapse step is
    the first at which the entropy is below ``early`` · (1 − ``high_drop``); within the first
    quarter of the run the step size is the likely cause (÷ 4), within the first half ÷ 2; later
    it is convergence, and no change is named. The learning rate is the run's own, read from its
    ``learning_rate`` signal (TRL logs it every step); None when it was not logged."""
    below = np.nonzero(values <= early * (1.0 - t.high_drop))[0]
    if below.size == 0 or steps.size < 2:
        return None
    span = float(steps[-1] - steps[0]) or 1.0
    at = float(steps[below[0]])
    share = (at - float(steps[0])) / span
    return lower_learning_rate(
        con,
        run_id,
        share,
        lambda lr: (
            f"entropy below {1.0 - t.high_drop:.0%} of its early level by step {int(at)} of {int(steps[-1])} "
            f"({share:.0%} of the run) at learning rate {lr:g}"
        ),
    )


@register_analyzer
class EntropyCollapse(Analyzer):
    """A signal whose name contains "entropy" fell by more than ``warn_drop`` of its early level.

    Early level: the mean over the first ``early_fraction`` of its logged steps; late level:
    the mean over the last ``late_fraction`` (at least one step each). Only metrics with a
    positive early level are judged; the one with the largest drop is reported, all in the
    evidence.
    """

    name = "signal.entropy_collapse"
    layer = "signal"
    codes = ("signal.entropy_collapse",)
    thresholds_type = EntropyCollapseThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        series, shown = series_by_metric(con, run_id, metric_like("entropy"))
        drops: dict[str, dict[str, float]] = {}
        for metric, (_steps, values) in series.items():
            if values.size < t.min_steps:
                continue
            early = float(values[: tail(values.size, t.early_fraction)].mean())
            late = float(values[-tail(values.size, t.late_fraction) :].mean())
            if early > 0:
                drops[metric] = {
                    "early": early,
                    "late": late,
                    "drop": (early - late) / early,
                    "steps": int(values.size),
                }
        if not drops:
            return []
        worst = max(drops, key=lambda m: drops[m]["drop"])
        drop = drops[worst]["drop"]
        if drop <= t.warn_drop:
            return []
        steps, values = series[worst]
        change = (
            _learning_rate_change(con, run_id, steps, values, drops[worst]["early"], t)
            if drop > t.high_drop
            else None
        )
        suggestion = (
            "the policy is becoming deterministic and will stop exploring: raise the sampling "
            "temperature, clip higher (asymmetric clipping), add an entropy bonus, or filter "
            "zero-variance groups that push it down"
        )
        if change:
            suggestion = (
                f"the policy collapsed early ({change['why']}): lower learning_rate from "
                f"{change['from']:g} to {change['to']:g}; then " + suggestion.split(": ", 1)[1]
            )
        return [
            self.finding(
                "signal.entropy_collapse",
                "high" if drop > t.high_drop else "warn",
                f"{worst} fell by {drop:.0%}: {drops[worst]['early']:.3g} early -> {drops[worst]['late']:.3g} late",
                run_id=run_id,
                version=version,
                evidence={
                    "metric": worst,
                    **drops[worst],
                    "metrics": drops,
                    "warn_drop": t.warn_drop,
                    "high_drop": t.high_drop,
                    "query": shown,
                    **({"recipe_change": change} if change else {}),
                },
                suggestion=suggestion,
            )
        ]


@dataclass(frozen=True)
class EchoTrapThresholds:
    fall_fraction: float = help_field(
        0.3, "reward std and entropy must each fall by at least this fraction before the spike"
    )
    spike_factor: float = help_field(
        5.0, "a grad-norm spike is this many times the median of the steps before"
    )
    spike_window: int = help_field(10, "the median is over this many previous steps")
    min_baseline: int = help_field(5, "at least this many previous steps for a baseline")
    min_pre_steps: int = help_field(4, "at least this many steps of each series before the spike")
    grad_norm_metrics: tuple[str, ...] = help_field(
        ("grad_norm",), "signal names holding the gradient norm (substring match)"
    )
    reward_std_metrics: tuple[str, ...] = help_field(
        ("reward_std",), "signal names of the reward std, used when the run has no rollouts"
    )

    def __post_init__(self) -> None:
        owner = "signal.echo_trap"
        check_range(owner, "fall_fraction", self.fall_fraction, 0.0, 1.0)
        check_range(owner, "spike_factor", self.spike_factor, 1.0, math.inf)
        if self.min_baseline < 1 or self.spike_window < self.min_baseline or self.min_pre_steps < 2:
            raise ValueError(
                f"need 1 <= min_baseline <= spike_window and min_pre_steps >= 2 in {owner}"
            )


def _fell(values: np.ndarray, fraction: float) -> tuple[float, float, bool]:
    """(early mean, late mean, fell by >= fraction): first and last quarter of ``values``."""
    q = tail(values.size, 0.25)
    early, late = float(values[:q].mean()), float(values[-q:].mean())
    return early, late, early > 0 and late <= (1.0 - fraction) * early


@register_analyzer
class EchoTrap(Analyzer):
    """The "echo trap" (RAGEN): reward variance and entropy collapse, then the gradient norm spikes.

    Series per step: the within-group reward std (mean of the groups' std, from the train
    rollouts; a ``reward_std`` signal without rollouts), the entropy signal (a metric whose
    name contains "entropy", the one logged at most steps) and the grad-norm signal. For each
    grad-norm spike (value > ``spike_factor`` x the median of the previous ``spike_window``
    steps), the steps before it are split in quarters: if the reward std and the entropy of the
    last quarter are both at least ``fall_fraction`` below the first quarter, the alarm fires
    for the first such spike.
    """

    name = "signal.echo_trap"
    layer = "signal"
    codes = ("signal.echo_trap",)
    thresholds_type = EchoTrapThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        with using(context) as ctx:
            groups = shared_groups(con, ctx, run_id)
            rows, shown_std = query(
                con,
                (
                    "SELECT step, avg(sd) AS reward_std FROM __run_groups__ WHERE n >= 2 AND step IS NOT NULL "
                    "GROUP BY step ORDER BY step"
                ),
                groups,
            )
        where = " OR ".join(
            [metric_like("entropy"), metric_like(*t.grad_norm_metrics)]
            + [f"metric = {sql_string(m)}" for m in t.reward_std_metrics]
        )
        series, shown = series_by_metric(con, run_id, where)
        std = self._reward_std(rows, series)
        entropy_names = [m for m in series if "entropy" in m.lower()]
        grad_names = [m for m in series if any(g.lower() in m.lower() for g in t.grad_norm_metrics)]
        if std is None or not entropy_names or not grad_names:
            return []
        std_source = std[2]
        entropy_name = max(entropy_names, key=lambda m: (series[m][0].size, m == "entropy"))
        grad_name = max(grad_names, key=lambda m: (series[m][0].size, m == "grad_norm"))
        trap = self._first_trap(std[:2], series[entropy_name], series[grad_name])
        if trap is None:
            return []
        step, value, base, (std_early, std_late), (ent_early, ent_late) = trap
        return [
            self.finding(
                "signal.echo_trap",
                "high",
                f"echo trap: reward std {std_early:.3g} -> {std_late:.3g} and {entropy_name} "
                f"{ent_early:.3g} -> {ent_late:.3g}, then {grad_name} spiked to {value:.3g} "
                f"({value / base:.1f}x) at step {step:g}",
                run_id=run_id,
                version=version,
                evidence={
                    "spike_step": step,
                    "grad_norm": value,
                    "grad_norm_baseline": base,
                    "grad_norm_metric": grad_name,
                    "entropy_metric": entropy_name,
                    "reward_std_source": std_source,
                    "reward_std_early": std_early,
                    "reward_std_late": std_late,
                    "entropy_early": ent_early,
                    "entropy_late": ent_late,
                    "fall_fraction": t.fall_fraction,
                    "spike_factor": t.spike_factor,
                    "query": shown_std if rows else shown,
                    "query_signals": shown,
                },
                suggestion="the policy is collapsing onto repeated reasoning and the update is about to "
                "blow up: stop or roll back before the spike, filter low-variance groups "
                "(StdGroupFilter), clip higher and lower the learning rate",
                skills=["StdGroupFilter"],
            )
        ]

    def _reward_std(
        self, rows: list[tuple[Any, ...]], series: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> tuple[np.ndarray, np.ndarray, str] | None:
        """(steps, within-group reward std, source): from the rollouts' groups when there are
        any, else the first ``reward_std_metrics`` signal; None without either."""
        if rows:
            steps = np.array([r[0] for r in rows], dtype=np.float64)
            values = np.array([r[1] for r in rows], dtype=np.float64)
            return steps, values, "rollouts"
        name = next((m for m in self.thresholds.reward_std_metrics if m in series), None)
        if name is None:
            return None
        steps, values = series[name]
        return steps, values, f"signal:{name}"

    def _first_trap(
        self,
        std: tuple[np.ndarray, np.ndarray],
        entropy: tuple[np.ndarray, np.ndarray],
        grad: tuple[np.ndarray, np.ndarray],
    ) -> tuple[float, float, float, tuple[float, float], tuple[float, float]] | None:
        """The first grad-norm spike before which the reward std and the entropy
        both fell: (step, value, baseline, (std early, late), (entropy early, late)), or None."""
        t = self.thresholds
        std_steps, std_values = std
        ent_steps, ent_values = entropy
        for step, value, base in spikes(
            grad[0],
            grad[1],
            factor=t.spike_factor,
            window=t.spike_window,
            min_baseline=t.min_baseline,
            floor=-math.inf,
        ):
            pre_std = std_values[std_steps < step]
            pre_ent = ent_values[ent_steps < step]
            if pre_std.size < t.min_pre_steps or pre_ent.size < t.min_pre_steps:
                continue
            std_early, std_late, std_fell = _fell(pre_std, t.fall_fraction)
            ent_early, ent_late, ent_fell = _fell(pre_ent, t.fall_fraction)
            if std_fell and ent_fell:
                return step, value, base, (std_early, std_late), (ent_early, ent_late)
        return None
