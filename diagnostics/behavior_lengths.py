"""Behavior analyzer of rollout lengths: their distribution, and its shift against the parent
version's runs (a two-sample KS test computed from length histograms)."""

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
from evotree.diagnostics.behavior_rollouts import TRAIN_PHASE, is_gym_run, run_train, sql_list
from evotree.diagnostics.thresholds import help_field

__all__ = [
    "LengthShift",
    "LengthShiftThresholds",
    "ks_from_histograms",
    "length_histogram",
]


def _hist_stats(values: np.ndarray, counts: np.ndarray) -> dict[str, Any]:
    """Mean, std and quantiles of a histogram (``values`` sorted)."""
    n = int(counts.sum())
    mean = float((values * counts).sum() / n)
    std = math.sqrt(max(float((counts * (values - mean) ** 2).sum() / n), 0.0))
    cum = np.cumsum(counts)
    q = {
        f"p{int(p * 100)}": float(values[np.searchsorted(cum, p * n, side="left")])
        for p in (0.1, 0.5, 0.9, 0.99)
    }
    return {
        "n": n,
        "mean": mean,
        "std": std,
        "min": float(values[0]),
        **q,
        "max": float(values[-1]),
    }


def ks_from_histograms(
    a_values: np.ndarray, a_counts: np.ndarray, b_values: np.ndarray, b_counts: np.ndarray
) -> tuple[float, float]:
    """(D, p) of the two-sided two-sample KS test, the same as ``scipy.stats.ks_2samp`` on the
    expanded samples, computed from (value, count) histograms.

    Samples of at most 10,000 values each are expanded and passed to ``ks_2samp`` itself (its
    exact method). Larger ones take ``ks_2samp``'s own asymptotic branch,
    ``scipy.stats.kstwo.sf(D, round(n*m/(n+m)))``, on the exact D computed from the cumulative
    counts, so 10M lengths need no expansion and no sort. The test is scipy's; only D is
    computed here, from the histograms.
    """
    from scipy import stats

    n1, n2 = int(a_counts.sum()), int(b_counts.sum())
    if max(n1, n2) <= 10_000:
        result = stats.ks_2samp(np.repeat(a_values, a_counts), np.repeat(b_values, b_counts))
        return float(result.statistic), float(result.pvalue)
    grid = np.union1d(a_values, b_values)
    cdf1 = np.cumsum(np.bincount(np.searchsorted(grid, a_values), a_counts, grid.size)) / n1
    cdf2 = np.cumsum(np.bincount(np.searchsorted(grid, b_values), b_counts, grid.size)) / n2
    d = float(np.max(np.abs(cdf1 - cdf2)))
    m, n = sorted([float(n1), float(n2)], reverse=True)
    effective_n = int(np.round(m * n / (m + n)))
    p = float(stats.kstwo.sf(d, effective_n))
    return d, float(np.clip(p, 0, 1))


@dataclass(frozen=True)
class LengthShiftThresholds:
    alpha: float = help_field(0.05, "KS test significance level")
    warn_d: float = help_field(0.1, "KS statistic D (max CDF distance) at least this: warn")
    high_d: float = help_field(0.3, "KS statistic D at least this: high")

    def __post_init__(self) -> None:
        owner = "behavior.length"
        for name in ("alpha", "warn_d", "high_d"):
            check_range(owner, name, getattr(self, name), 0.0, 1.0)
        check_order(owner, warn_d=self.warn_d, high_d=self.high_d)


def length_histogram(con: Any, where: str) -> tuple[np.ndarray, np.ndarray, str]:
    rows, shown = query(
        con,
        (
            f"SELECT length, count(*) AS n FROM _rollouts WHERE {where} AND length IS NOT NULL "
            "GROUP BY length ORDER BY length"
        ),
    )
    return (
        np.array([r[0] for r in rows], dtype=np.int64),
        np.array([r[1] for r in rows], dtype=np.int64),
        shown,
    )


@register_analyzer
class LengthShift(Analyzer):
    """The distribution of rollout lengths, and its shift against the parent version's runs.

    ``behavior.length_distribution`` (info) reports mean, std and quantiles of the train
    rollouts' ``length``. With parent runs (``context.parent_run_ids``) holding lengths, a
    two-sample KS test (:func:`ks_from_histograms`) compares the two; a shift with p < ``alpha``
    and D >= ``warn_d`` is ``behavior.length_shift`` (D >= ``high_d``: high). Not for gym runs.
    """

    name = "behavior.length"
    layer = "behavior"
    codes = ("behavior.length_distribution", "behavior.length_shift")
    thresholds_type = LengthShiftThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        if is_gym_run(con, run_id, context):
            return []  # episode lengths are outcomes, reported per environment by behavior.gym
        values, counts, shown = length_histogram(con, run_train(run_id))
        if not counts.size:
            return []
        stats = _hist_stats(values, counts)
        out = [
            self.finding(
                "behavior.length_distribution",
                "info",
                f"rollout length: median {stats['p50']:g}, p90 {stats['p90']:g}, max {stats['max']:g} "
                f"over {stats['n']:,} rollouts",
                run_id=run_id,
                version=version,
                evidence={**stats, "query": shown},
            )
        ]
        parents = [p for p in (context.parent_run_ids if context else ()) if p != run_id]
        if not parents:
            return out
        p_values, p_counts, p_shown = length_histogram(
            con, f"run_id IN {sql_list(parents)} AND {TRAIN_PHASE}"
        )
        if not p_counts.size:
            return out
        parent = _hist_stats(p_values, p_counts)
        d, p = ks_from_histograms(values, counts, p_values, p_counts)
        if p >= t.alpha or d < t.warn_d:
            return out
        direction = "longer" if stats["mean"] > parent["mean"] else "shorter"
        out.append(
            self.finding(
                "behavior.length_shift",
                "high" if d >= t.high_d else "warn",
                f"rollouts are {direction} than the parent's: median {parent['p50']:g} -> {stats['p50']:g}, "
                f"mean {parent['mean']:.4g} -> {stats['mean']:.4g} (KS D = {d:.2f}, p = {p:.2g})",
                run_id=run_id,
                version=version,
                evidence={
                    "ks_d": d,
                    "p_value": p,
                    "run": stats,
                    "parent": parent,
                    "parent_run_ids": parents,
                    "alpha": t.alpha,
                    "warn_d": t.warn_d,
                    "high_d": t.high_d,
                    "query": shown,
                    "query_parent": p_shown,
                },
                suggestion="the change moved the length distribution: check that the longer (or shorter) "
                "answers are better and not padding or truncation; an OverlongPenalty bounds growth",
                skills=["OverlongPenalty"] if direction == "longer" else [],
            )
        )
        return out
