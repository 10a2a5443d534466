"""The signal layer's building blocks over a run's train rollouts and signals.

The shared ``run_groups`` table (:func:`groups_sql`, one row per ``(step, group_id)`` of the train
rollouts, materialized once per run by :class:`evotree.diagnostics.findings.AnalysisContext`),
the group-shape test (:func:`is_group_run`), per-metric signal series, trends and spikes, the
per-step reward series and the "lower the learning rate" recipe change. The analyzers of the
signal layer (:mod:`evotree.diagnostics.signal`) and the behavior layer read them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from evotree.diagnostics.findings import AnalysisContext, Shared, query
from evotree.harness.compaction import sql_string

__all__ = [
    "GROUP_SHAPE_ROWS",
    "Trend",
    "groups_sql",
    "is_group_run",
    "linear_trend",
    "lower_learning_rate",
    "metric_like",
    "metric_token",
    "reward_series",
    "rolling_median_before",
    "series_by_metric",
    "shared_groups",
    "signal_filter",
    "spikes",
    "tail",
    "using",
]


def groups_sql(run_id: str) -> str:
    """One row per ``(step, group_id)`` of the run's train rollouts.

    Columns: ``n_rows`` (all rows), ``n`` (finite rewards), ``mean``, ``sd`` (population std),
    ``lo``, ``hi`` of the finite rewards (null when ``n`` = 0), ``n_trunc_known`` (rows with
    ``truncated`` set) and ``n_trunc`` (rows truncated).
    """
    return (
        "SELECT step, group_id, count(*) AS n_rows, count(r) AS n, avg(r) AS mean, stddev_pop(r) AS sd, "
        "min(r) AS lo, max(r) AS hi, count(truncated) AS n_trunc_known, sum(truncated::INTEGER) AS n_trunc "
        "FROM (SELECT step, group_id, CASE WHEN isfinite(reward) THEN reward END AS r, truncated "
        f"FROM _rollouts WHERE run_id = {sql_string(run_id)} AND phase = 'train') GROUP BY step, group_id"
    )


def shared_groups(con: Any, context: AnalysisContext, run_id: str) -> Shared:
    """The run's ``groups`` table (:func:`groups_sql`), built once per context."""
    return context.shared(con, run_id, "run_groups", groups_sql(run_id))


#: How many of a run's first train rollouts :func:`is_group_run` reads.
GROUP_SHAPE_ROWS = 1000


def is_group_run(con: Any, run_id: str, context: AnalysisContext | None = None) -> bool:
    """True when the run's train rollouts are GRPO-style groups: of the ``(step, group_id)``
    groups among its first :data:`GROUP_SHAPE_ROWS` train rollouts, at least half hold two or more
    samples, all of one ``task_id`` (several completions of one prompt). False without rollouts,
    for gym runs (a group is an environment's episodes, one ``task_id`` each) and for runs of
    single-sample groups."""

    def compute() -> bool:
        rows, _ = query(
            con,
            (
                "SELECT count(*) AS groups, count(*) FILTER (WHERE n >= 2 AND tasks <= 1) AS sampled FROM ("
                "SELECT step, group_id, count(*) AS n, count(DISTINCT task_id) AS tasks FROM (SELECT step, group_id, "
                f"task_id FROM _rollouts WHERE run_id = {sql_string(run_id)} AND phase = 'train' "
                f"LIMIT {GROUP_SHAPE_ROWS}) GROUP BY step, group_id)"
            ),
        )
        groups, sampled = rows[0]
        return bool(groups) and 2 * sampled >= groups

    if context is None:
        return compute()
    return context.memo(run_id, "is_group_run", compute)


@contextmanager
def using(context: AnalysisContext | None) -> Iterator[AnalysisContext]:
    """``context``, or a fresh one closed afterwards (an analyzer called on its own)."""
    if context is not None:
        yield context
        return
    fresh = AnalysisContext()
    try:
        yield fresh
    finally:
        fresh.close()


def signal_filter(run_id: str, where: str) -> str:
    """Per-(metric, step) means of the run's finite train signals matching ``where``."""
    return (
        f"SELECT metric, step, avg(value) AS v FROM _signals WHERE run_id = {sql_string(run_id)} "
        f"AND phase = 'train' AND value IS NOT NULL AND step IS NOT NULL AND ({where}) "
        "GROUP BY metric, step"
    )


def series_by_metric(
    con: Any, run_id: str, where: str
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], str]:
    """metric -> (steps, values) of the finite train signals matching ``where``; and the query."""
    rows, shown = query(con, f"{signal_filter(run_id, where)} ORDER BY metric, step")
    out: dict[str, tuple[list[int], list[float]]] = {}
    for metric, step, value in rows:
        steps, values = out.setdefault(metric, ([], []))
        steps.append(step)
        values.append(value)
    return {
        m: (np.asarray(s, dtype=np.float64), np.asarray(v, dtype=np.float64))
        for m, (s, v) in out.items()
    }, shown


def metric_like(*needles: str) -> str:
    """SQL: the metric's lower-cased name contains one of ``needles``."""
    return " OR ".join(f"contains(lower(metric), {sql_string(n.lower())})" for n in needles)


def metric_token(token: str) -> str:
    """SQL: ``token`` is a whole part of the metric name, split at ``/ _ . -`` (``kl`` matches
    ``kl``, ``objective/kl``, ``kl_div``; not ``checklist``)."""
    return f"regexp_matches(lower(metric), {sql_string(f'(^|[/_.-]){token}($|[/_.-])')})"


@dataclass(frozen=True)
class Trend:
    """An ordinary least-squares line through (step, value) points and its slope's t-test."""

    slope: float  #: per step
    p_value: float  #: two-sided, H0: slope = 0 (1.0 for a constant series)
    change: float  #: slope * (last step - first step): the fitted change over the points
    n: int
    first_step: float
    last_step: float
    start: float  #: fitted value at the first step
    end: float  #: fitted value at the last step

    def rising(self, alpha: float, min_change: float = 0.0) -> bool:
        return self.slope > 0 and self.p_value < alpha and self.change >= min_change

    def falling(self, alpha: float, min_change: float = 0.0) -> bool:
        return self.slope < 0 and self.p_value < alpha and -self.change >= min_change


def linear_trend(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> Trend | None:
    """OLS fit of ``y`` on ``x`` with the two-sided t-test of its slope (the numbers of
    ``scipy.stats.linregress``, computed with numpy and ``scipy.special.stdtr``: importing
    ``scipy.stats`` costs ~0.5 s). None with fewer than 3 finite points or a single x."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 3 or np.ptp(x) == 0:
        return None
    first, last = float(x.min()), float(x.max())
    if np.ptp(y) == 0:
        return Trend(0.0, 1.0, 0.0, int(x.size), first, last, float(y[0]), float(y[0]))
    from scipy.special import stdtr

    xm, ym = x.mean(), y.mean()
    dx, dy = x - xm, y - ym
    sxx = float(dx @ dx)
    slope = float(dx @ dy) / sxx
    intercept = float(ym - slope * xm)
    df = x.size - 2
    sse = max(float(dy @ dy) - slope * slope * sxx, 0.0)
    se = math.sqrt(sse / df / sxx)
    p = float(2.0 * stdtr(df, -abs(slope) / se)) if se > 0 else (0.0 if slope != 0 else 1.0)
    return Trend(
        slope,
        min(p, 1.0),
        slope * (last - first),
        int(x.size),
        first,
        last,
        intercept + slope * first,
        intercept + slope * last,
    )


def tail(n: int, fraction: float, minimum: int = 1) -> int:
    """How many of ``n`` points a trailing window of ``fraction`` holds (at least ``minimum``)."""
    return min(n, max(minimum, math.ceil(n * fraction)))


def rolling_median_before(values: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(median of the up-to-``k`` values before each point, how many there were)."""
    n = values.size
    base = np.full(n, np.nan)
    count = np.minimum(np.arange(n), k)
    for i in range(1, min(k, n)):
        base[i] = np.median(values[:i])
    if n > k:
        windows = np.lib.stride_tricks.sliding_window_view(values, k)[
            :-1
        ]  # values[i-k:i], i = k..n-1
        base[k:] = np.median(windows, axis=1)
    return base, count


def spikes(
    steps: np.ndarray,
    values: np.ndarray,
    *,
    factor: float,
    window: int,
    min_baseline: int,
    floor: float,
) -> list[tuple[float, float, float]]:
    """(step, value, baseline) where value > factor x the median of the previous ``window``
    values (at least ``min_baseline`` of them, baseline > 0) and value >= ``floor``."""
    if values.size <= min_baseline:
        return []
    base, count = rolling_median_before(values, window)
    hit = (count >= min_baseline) & (base > 0) & (values > factor * base) & (values >= floor)
    return [(float(steps[i]), float(values[i]), float(base[i])) for i in np.flatnonzero(hit)]


def reward_series(
    con: Any, context: AnalysisContext, run_id: str, metrics: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, float, str, str] | None:
    """(steps, per-step mean reward, reward scale, source, query) of the run, or None.

    From the train rollouts when there are any (scale: the population std of all finite
    rewards); otherwise from the first of ``metrics`` among the train signals (scale: the std
    of that series).
    """
    groups = shared_groups(con, context, run_id)
    rows, shown = query(
        con,
        (
            "SELECT step, sum(mean * n) / sum(n) AS reward, sum(n) AS n, sum(n * (sd * sd + mean * mean)) AS s2 "
            "FROM __run_groups__ WHERE n > 0 AND step IS NOT NULL GROUP BY step ORDER BY step"
        ),
        groups,
    )
    if rows:
        steps = np.array([r[0] for r in rows], dtype=np.float64)
        means = np.array([r[1] for r in rows], dtype=np.float64)
        n = np.array([r[2] for r in rows], dtype=np.float64)
        s2 = np.array([r[3] for r in rows], dtype=np.float64)
        total = n.sum()
        grand = float((means * n).sum() / total)
        scale = math.sqrt(max(float(s2.sum() / total) - grand * grand, 0.0))
        return steps, means, scale, "rollouts", shown
    where = " OR ".join(f"metric = {sql_string(m)}" for m in metrics) or "false"
    series, shown = series_by_metric(con, run_id, where)
    for metric in metrics:
        if metric in series:
            steps, values = series[metric]
            return steps, values, float(np.std(values)), f"signal:{metric}", shown
    return None


def lower_learning_rate(
    con: Any, run_id: str, share: float, why: Callable[[float], str]
) -> dict[str, Any] | None:
    """The recipe change "lower ``learning_rate``" for a collapse ``share`` of the way into the
    run: ÷ 4 within the first quarter, ÷ 2 within the first half, None later (convergence). The
    learning rate is the run's own first logged ``learning_rate`` signal (TRL logs it every
    step); None when it was not logged. ``why(lr)`` explains it."""
    if share > 0.5:
        return None
    rows, _ = query(
        con, f"{signal_filter(run_id, metric_token('learning_rate'))} ORDER BY step LIMIT 1"
    )
    if not rows or rows[0][2] is None or not float(rows[0][2]) > 0:
        return None
    lr = float(rows[0][2])
    factor = 4.0 if share <= 0.25 else 2.0
    return {
        "kind": "lower",
        "param": "learning_rate",
        "from": lr,
        "to": float(f"{lr / factor:.3g}"),
        "why": why(lr),
        "where": "the GRPO config (math: recipe.toml; TRL: GRPOConfig.learning_rate)",
    }
