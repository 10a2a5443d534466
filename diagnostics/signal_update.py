"""Signal analyzers of the update's stability: KL and clip ratio (too high at the end, or
spiking) and non-finite values."""

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
    metric_like,
    metric_token,
    series_by_metric,
    spikes,
    tail,
)
from evotree.diagnostics.thresholds import help_field
from evotree.harness.compaction import sql_string

__all__ = [
    "KlClip",
    "KlClipThresholds",
    "NonFinite",
]


@dataclass(frozen=True)
class KlClipThresholds:
    kl_warn: float = help_field(0.5, "mean KL over the last window above this: warn (4x: high)")
    clip_ratio_warn: float = help_field(
        0.2, "mean clip ratio over the last window above this: warn (4x, capped at 1: high)"
    )
    window_fraction: float = help_field(0.1, "the last fraction of steps whose mean is compared")
    spike_factor: float = help_field(
        10.0, "a value this many times the median of the steps before is a spike"
    )
    spike_window: int = help_field(10, "the median is over this many previous steps")
    min_baseline: int = help_field(5, "at least this many previous steps for a baseline")
    kl_spike_floor: float = help_field(0.05, "a KL spike must also reach this value")
    clip_spike_floor: float = help_field(0.05, "a clip-ratio spike must also reach this value")

    def __post_init__(self) -> None:
        owner = "signal.kl_clip"
        check_range(owner, "kl_warn", self.kl_warn, 0.0, math.inf)
        check_range(owner, "clip_ratio_warn", self.clip_ratio_warn, 0.0, 1.0)
        check_range(owner, "window_fraction", self.window_fraction, 0.0, 1.0)
        check_range(owner, "spike_factor", self.spike_factor, 1.0, math.inf)
        if self.min_baseline < 1 or self.spike_window < self.min_baseline:
            raise ValueError(f"need 1 <= min_baseline <= spike_window in {owner}")


@register_analyzer
class KlClip(Analyzer):
    """KL and clip-ratio signals: too high at the end of the run, or spiking.

    KL metrics: names with ``kl`` as a whole part (split at ``/ _ . -``: ``kl``,
    ``objective/kl``, ``kl_div``). Clip metrics: names containing ``clip_ratio`` (TRL's
    ``clip_ratio/low_mean``, ``clip_ratio/region_mean``, ...). Level: the mean over the last
    ``window_fraction`` of steps against ``kl_warn`` / ``clip_ratio_warn`` (4x the threshold:
    high). Spike: a value above ``spike_factor`` x the median of the previous steps and above the
    floor (warn). One finding per code, for the worst metric; all of them in the evidence.
    """

    name = "signal.kl_clip"
    layer = "signal"
    codes = (
        "signal.kl_high",
        "signal.kl_spike",
        "signal.clip_ratio_high",
        "signal.clip_ratio_spike",
    )
    thresholds_type = KlClipThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        series, shown = series_by_metric(
            con, run_id, f"{metric_token('kl')} OR {metric_like('clip_ratio')}"
        )
        out: list[Finding] = []
        families = (
            ("kl", "KL", t.kl_warn, math.inf, t.kl_spike_floor),
            ("clip_ratio", "clip ratio", t.clip_ratio_warn, 1.0, t.clip_spike_floor),
        )
        for family, _label, warn, cap, floor in families:
            names = [m for m in series if ("clip_ratio" in m.lower()) == (family == "clip_ratio")]
            levels: dict[str, float] = {}
            spiked: dict[str, dict[str, float]] = {}
            for metric in names:
                steps, values = series[metric]
                levels[metric] = float(values[-tail(values.size, t.window_fraction) :].mean())
                spike = self._worst_spike(steps, values, floor)
                if spike:
                    spiked[metric] = spike
            out += self._level_finding(family, levels, warn, cap, run_id, version, shown)
            out += self._spike_finding(family, spiked, floor, run_id, version, shown)
        return out

    def _worst_spike(
        self, steps: np.ndarray, values: np.ndarray, floor: float
    ) -> dict[str, float] | None:
        """The series' largest spike against its baseline (step, value, baseline, spikes)."""
        t = self.thresholds
        found = spikes(
            steps,
            values,
            factor=t.spike_factor,
            window=t.spike_window,
            min_baseline=t.min_baseline,
            floor=floor,
        )
        if not found:
            return None
        step, value, base = max(found, key=lambda s: s[1] / s[2])
        return {"step": step, "value": value, "baseline": base, "spikes": len(found)}

    def _level_finding(
        self,
        family: str,
        levels: dict[str, float],
        warn: float,
        cap: float,
        run_id: str,
        version: str | None,
        shown: str,
    ) -> list[Finding]:
        """``signal.<family>_high`` for the metric with the highest late mean, above ``warn``."""
        if not levels:
            return []
        worst = max(levels, key=levels.get)
        level = levels[worst]
        if not level > warn:
            return []
        high = level > min(4 * warn, cap) if warn < cap else False
        return [
            self.finding(
                f"signal.{family}_high",
                "high" if high else "warn",
                f"{worst} averages {level:.3g} over the last steps (threshold {warn:g})",
                run_id=run_id,
                version=version,
                evidence={
                    "metric": worst,
                    "late_mean": level,
                    "threshold": warn,
                    "late_means": levels,
                    "window_fraction": self.thresholds.window_fraction,
                    "query": shown,
                },
                suggestion=_KL_CLIP_ADVICE[family],
            )
        ]

    def _spike_finding(
        self,
        family: str,
        spiked: dict[str, dict[str, float]],
        floor: float,
        run_id: str,
        version: str | None,
        shown: str,
    ) -> list[Finding]:
        """``signal.<family>_spike`` for the metric whose spike is the largest against its
        baseline."""
        if not spiked:
            return []
        worst = max(spiked, key=lambda m: spiked[m]["value"] / spiked[m]["baseline"])
        s = spiked[worst]
        return [
            self.finding(
                f"signal.{family}_spike",
                "warn",
                f"{worst} spiked to {s['value']:.3g} at step {s['step']:g} "
                f"({s['value'] / s['baseline']:.1f}x the median before)",
                run_id=run_id,
                version=version,
                evidence={
                    "metric": worst,
                    **s,
                    "spike_factor": self.thresholds.spike_factor,
                    "floor": floor,
                    "spiking_metrics": spiked,
                    "query": shown,
                },
                suggestion=_KL_CLIP_ADVICE[family],
            )
        ]


_KL_CLIP_ADVICE = {
    "kl": "the policy is drifting far from the reference: lower the learning rate, raise the KL "
    "coefficient, or look for reward exploits that pull it away",
    "clip_ratio": "many updates hit the PPO clip range: the step is too large for the data; lower the "
    "learning rate or the number of updates per batch",
}


@register_analyzer
class NonFinite(Analyzer):
    """Rows recorded with ``nonfinite`` true (a NaN or ±inf value, stored as null).

    Every phase is counted; metric names are listed from train-phase signals only (the judge's
    may name hidden tasks). Always reported when there is one: high.
    """

    name = "signal.nonfinite"
    layer = "signal"
    codes = ("signal.nonfinite_values",)

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        run = sql_string(run_id)
        rows, shown = query(
            con,
            (
                f"SELECT 'signals' AS kind, phase, count(*) AS rows, min(step) AS first_step FROM _signals "
                f"WHERE run_id = {run} AND nonfinite GROUP BY phase UNION ALL "
                f"SELECT 'rollouts', phase, count(*), min(step) FROM _rollouts "
                f"WHERE run_id = {run} AND nonfinite GROUP BY phase ORDER BY kind, phase"
            ),
        )
        if not rows:
            return []
        metrics, shown_metrics = query(
            con,
            (
                f"SELECT metric, count(*) AS rows, min(step) AS first_step FROM _signals WHERE run_id = {run} "
                "AND phase = 'train' AND nonfinite GROUP BY metric ORDER BY rows DESC, metric LIMIT 10"
            ),
        )
        by = {(kind, phase): (n, first) for kind, phase, n, first in rows}
        signals = sum(n for (k, _), (n, _) in by.items() if k == "signals")
        rollouts = sum(n for (k, _), (n, _) in by.items() if k == "rollouts")
        firsts = [f for (_, phase), (_, f) in by.items() if phase == "train" and f is not None]
        first = min(firsts) if firsts else None
        where = ", ".join(f"{n:,} {kind} rows ({phase})" for (kind, phase), (n, _) in by.items())
        return [
            self.finding(
                "signal.nonfinite_values",
                "high",
                f"NaN/inf values recorded: {where}"
                + (f", first at train step {first}" if first is not None else ""),
                run_id=run_id,
                version=version,
                evidence={
                    "signal_rows": signals,
                    "rollout_rows": rollouts,
                    "first_train_step": first,
                    "by_kind_phase": [
                        {"kind": k, "phase": p, "rows": n, "first_step": f}
                        for (k, p), (n, f) in by.items()
                    ],
                    "metrics": [{"metric": m, "rows": n, "first_step": f} for m, n, f in metrics],
                    "query": shown,
                    "query_metrics": shown_metrics,
                },
                suggestion="a NaN/inf in a loss, gradient or reward poisons the update: find the first step and "
                "metric above; usual causes are a reward function dividing by zero, log(0) in a "
                "ratio, fp16 overflow, or a learning rate too high",
            )
        ]
