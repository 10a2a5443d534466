"""Signal analyzer of truncation: the share of completions cut at the length limit rising
over the run."""

from __future__ import annotations

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
    linear_trend,
    series_by_metric,
    shared_groups,
    tail,
    using,
)
from evotree.diagnostics.thresholds import help_field
from evotree.harness.compaction import sql_string

__all__ = [
    "TruncationTrend",
    "TruncationTrendThresholds",
]


@dataclass(frozen=True)
class TruncationTrendThresholds:
    alpha: float = help_field(0.05, "significance level of the slope's t-test")
    min_level: float = help_field(0.05, "the late truncated fraction must be at least this")
    min_change: float = help_field(
        0.05, "the fitted rise over the run must be at least this (fraction)"
    )
    high_level: float = help_field(0.3, "late truncated fraction above this: high")
    window_fraction: float = help_field(
        0.1, "the late level is the mean over this last fraction of steps"
    )
    min_steps: int = help_field(5, "fewer steps than this: no verdict")
    truncation_metrics: tuple[str, ...] = help_field(
        ("completions/clipped_ratio",), "signal metrics used when rollouts have no truncated flag"
    )

    def __post_init__(self) -> None:
        owner = "signal.truncation_trend"
        for name in ("alpha", "min_level", "min_change", "high_level", "window_fraction"):
            check_range(owner, name, getattr(self, name), 0.0, 1.0)
        check_order(owner, min_level=self.min_level, high_level=self.high_level)
        if self.min_steps < 3:
            raise ValueError(f"min_steps must be at least 3 in {owner}, actually: {self.min_steps}")


@register_analyzer
class TruncationTrend(Analyzer):
    """The truncated fraction per step is rising (completions hitting the length limit more often).

    Per step: truncated / rows with ``truncated`` set, from the train rollouts (or, without,
    TRL's ``completions/clipped_ratio`` signal). Fires when an OLS line over all steps rises
    significantly by at least ``min_change`` and the mean over the last ``window_fraction`` of
    steps is at least ``min_level`` (warn; above ``high_level``: high).
    """

    name = "signal.truncation_trend"
    layer = "signal"
    codes = ("signal.truncation_rising",)
    thresholds_type = TruncationTrendThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        with using(context) as ctx:
            groups = shared_groups(con, ctx, run_id)
            rows, shown = query(
                con,
                (
                    "SELECT step, sum(coalesce(n_trunc, 0)) / sum(n_trunc_known) AS truncated, sum(n_trunc_known) AS n "
                    "FROM __run_groups__ WHERE n_trunc_known > 0 AND step IS NOT NULL GROUP BY step ORDER BY step"
                ),
                groups,
            )
        if rows:
            steps = np.array([r[0] for r in rows], dtype=np.float64)
            frac = np.array([r[1] for r in rows], dtype=np.float64)
            source = "rollouts"
        else:
            where = (
                " OR ".join(f"metric = {sql_string(m)}" for m in t.truncation_metrics) or "false"
            )
            series, shown = series_by_metric(con, run_id, where)
            name = next((m for m in t.truncation_metrics if m in series), None)
            if name is None:
                return []
            steps, frac = series[name]
            source = f"signal:{name}"
        if steps.size < t.min_steps:
            return []
        trend = linear_trend(steps, frac)
        late = float(frac[-tail(steps.size, t.window_fraction) :].mean())
        early = float(frac[: tail(steps.size, t.window_fraction)].mean())
        if trend is None or not trend.rising(t.alpha, t.min_change) or late < t.min_level:
            return []
        return [
            self.finding(
                "signal.truncation_rising",
                "high" if late > t.high_level else "warn",
                f"truncated completions are rising: {early:.1%} early -> {late:.1%} late (p = {trend.p_value:.2g})",
                run_id=run_id,
                version=version,
                evidence={
                    "source": source,
                    "steps": int(steps.size),
                    "early_fraction": early,
                    "late_fraction": late,
                    "slope_per_step": trend.slope,
                    "p_value": trend.p_value,
                    "fitted_change": trend.change,
                    "alpha": t.alpha,
                    "min_level": t.min_level,
                    "high_level": t.high_level,
                    "query": shown,
                },
                suggestion="completions grow until they hit the length limit, so their reward is cut off: "
                "penalize overlong answers (OverlongPenalty) or raise the limit if the tasks need it",
                skills=["OverlongPenalty"],
            )
        ]
