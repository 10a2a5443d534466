"""The signal layer: is training getting a learning signal, and is it stable?

Analyzers over the rollouts and signals a run recorded in its **train** phase (of the judge's
rows only the number of non-finite ones is read: they may describe hidden tasks). Groups are
``(step, group_id)``
of the train rollouts, as in :func:`evotree.harness.query.dead_group_ratio`; only finite rewards count
(a non-finite reward is stored as null with ``nonfinite`` true).

=========================  ==============================================  =====================
analyzer                   finding codes (severity)                         default thresholds
=========================  ==============================================  =====================
signal.dead_groups         signal.dead_groups_high (warn, critical),        std < 1e-3; unsolved
                           signal.dead_groups_solved (info, warn)           > 25 % warn, > 50 %
                                                                            critical; solved > 25 %
                                                                            info, > 50 % warn
signal.solve_rates         signal.all_solved_high (warn),                   all-solved > 30 %;
                           signal.none_solved_high (warn, high)             none-solved > 50 % / 80 %
signal.reward_trend        signal.reward_plateau (warn),                    last 50 % of steps,
                           signal.reward_declining (high)                   OLS slope, p < 0.05
signal.entropy_collapse    signal.entropy_collapse (warn, high)             drop > 50 % / 80 %
signal.echo_trap           signal.echo_trap (high)                          falls >= 30 %, spike 5x
signal.kl_clip             signal.kl_high, signal.kl_spike,                 kl > 0.5; clip > 0.2;
                           signal.clip_ratio_high, signal.clip_ratio_spike  spike 10x (warn/high)
signal.nonfinite           signal.nonfinite_values (high)                   any row
signal.truncation_trend    signal.truncation_rising (warn, high)            p < 0.05, late >= 5 %
=========================  ==============================================  =====================

**Group-based runs only.** Dead groups and solve rates describe GRPO-style groups: several
completions of one prompt, whose rewards are compared with each other. They are judged only on
runs whose train rollouts have that shape (:func:`is_group_run`: most ``(step, group_id)``
groups hold at least two samples of a single ``task_id``), as the math domain and a custom
domain recording ``rollout_group(..., rewards=[several])`` do. A gym run records one rollout
per episode, grouped by environment (many ``task_id`` per group): equal returns there are
episodes played alike (a solved CartPole returns 500 every time), not a lost advantage signal,
so nothing is reported; nor on runs of single-sample groups.

Shared sub-results (materialized once per run by :class:`evotree.diagnostics.findings.AnalysisContext`):
``run_groups`` (:func:`groups_sql`, one row per group: size, finite-reward count, mean,
population std, min, max, truncation counts); the per-step series are computed from it. Every
finding's ``evidence["query"]`` is the SQL (over the views, the shared table inlined as a
``WITH`` clause) whose rows the numbers were computed from; secondary queries are under
``query_<what>`` keys.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evotree.diagnostics.findings import (
    AnalysisContext,
    Analyzer,
    Finding,
    Shared,
    check_order,
    check_range,
    query,
    register_analyzer,
)
from evotree.harness.compaction import sql_string

__all__ = [
    "DeadGroups",
    "DeadGroupsThresholds",
    "EchoTrap",
    "EchoTrapThresholds",
    "EntropyCollapse",
    "EntropyCollapseThresholds",
    "KlClip",
    "KlClipThresholds",
    "NonFinite",
    "RewardBelowStart",
    "RewardBelowStartThresholds",
    "RewardTrend",
    "RewardTrendThresholds",
    "SolveRates",
    "SolveRatesThresholds",
    "Trend",
    "TruncationTrend",
    "TruncationTrendThresholds",
    "groups_sql",
    "is_group_run",
    "lower_learning_rate",
    "linear_trend",
    "shared_groups",
]


# ----------------------------------------------------------------------------- shared helpers
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


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), digits)


def help_field(default: Any, text: str) -> Any:
    return field(default=default, metadata={"help": text})


# ----------------------------------------------------------------------------- dead groups
@dataclass(frozen=True)
class DeadGroupsThresholds:
    std_epsilon: float = help_field(
        1e-3, "a group is dead when the std of its finite rewards is below this"
    )
    warn_ratio: float = help_field(
        0.25, "unsolved dead groups above this share of all groups: warn; solved ones: info"
    )
    critical_ratio: float = help_field(
        0.5,
        "unsolved dead groups above this share: critical (EvoTrainer's "
        "playbook); solved ones: warn",
    )
    solved_reward: float = help_field(
        1.0,
        "a dead group whose reward is at least this is solved (every sample "
        "correct): 1 is a correct answer under pass/fail rewards and in the "
        "math domain (correctness 1 + format up to 0.5)",
    )
    window_fraction: float = help_field(
        0.2, "the last fraction of steps reported as the late ratio"
    )

    def __post_init__(self) -> None:
        owner = "signal.dead_groups"
        check_range(owner, "std_epsilon", self.std_epsilon, 0.0, math.inf)
        check_range(owner, "warn_ratio", self.warn_ratio, 0.0, 1.0)
        check_range(owner, "critical_ratio", self.critical_ratio, 0.0, 1.0)
        check_order(owner, warn_ratio=self.warn_ratio, critical_ratio=self.critical_ratio)
        check_range(owner, "solved_reward", self.solved_reward, -math.inf, math.inf)
        check_range(owner, "window_fraction", self.window_fraction, 0.0, 1.0)


@register_analyzer
class DeadGroups(Analyzer):
    """Share of groups with (near-)equal rewards: GRPO's advantage is zero there, nothing is learnt.

    Only for group-based runs (:func:`is_group_run`; not gym episodes). A dead group is one of
    two kinds, reported apart because they mean opposite things:

    * **unsolved** (its reward is below ``solved_reward``: every sample wrong, or all stuck at the
      same partial reward): the prompt is out of reach and teaches nothing:
      ``signal.dead_groups_high``, warn above ``warn_ratio`` of all groups, critical above
      ``critical_ratio``; the advice is the group filter (StdGroupFilter), partial credit, easier
      tasks.
    * **solved** (reward at least ``solved_reward``: every sample correct): the policy has learnt
      the prompt. A good run ends with many of these, which is progress, not a broken signal:
      ``signal.dead_groups_solved``, info above ``warn_ratio``, warn above ``critical_ratio``; the
      advice is harder prompts or a curriculum.

    A one-sample group counts as dead (std 0), as in :func:`evotree.harness.query.dead_group_ratio`;
    groups with no finite reward are left out. ``dead_ratio`` in the evidence is the share of all
    dead groups (the query layer's number); each finding's severity comes from its own kind's
    share. The ratio over the last ``window_fraction`` of steps is in the evidence.
    """

    name = "signal.dead_groups"
    layer = "signal"
    codes = ("signal.dead_groups_high", "signal.dead_groups_solved")
    thresholds_type = DeadGroupsThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        with using(context) as ctx:
            if not is_group_run(con, run_id, ctx):
                return []
            groups = shared_groups(con, ctx, run_id)
            eps = repr(float(t.std_epsilon))
            solved = repr(float(t.solved_reward))
            late = f"step >= s1 - (s1 - s0) * {float(t.window_fraction)!r}"
            rows, shown = query(
                con,
                (
                    "WITH b AS (SELECT min(step) AS s0, max(step) AS s1 FROM __run_groups__ WHERE n > 0) "
                    f"SELECT count(*) AS groups, count(*) FILTER (WHERE sd < {eps}) AS dead, "
                    f"count(*) FILTER (WHERE sd < {eps} AND mean >= {solved}) AS solved_dead, "
                    "count(*) FILTER (WHERE n = 1) AS single, "
                    f"count(*) FILTER (WHERE {late}) AS late_groups, "
                    f"count(*) FILTER (WHERE sd < {eps} AND {late}) AS late_dead, "
                    f"count(*) FILTER (WHERE sd < {eps} AND mean >= {solved} AND {late}) AS late_solved_dead "
                    "FROM __run_groups__, b WHERE n > 0"
                ),
                groups,
            )
            total, dead, solved_dead, single, late_groups, late_dead, late_solved = rows[0]
            if not total or dead / total <= t.warn_ratio:
                return []
            values, shown_values = query(
                con,
                (
                    f"SELECT round(mean, 4) AS reward, count(*) AS groups FROM __run_groups__ WHERE n > 0 AND sd < {eps} "
                    "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5"
                ),
                groups,
            )
            # a group filter recorded by the skills seam (evotree.harness.trl): dead groups were already kept
            # out of the loss; what is left is the generation they cost
            filtered, shown_filter = query(
                con,
                (
                    "SELECT split_part(metric, '/', 2) AS skill, sum(value) AS dropped FROM _signals "
                    f"WHERE run_id = {sql_string(run_id)} AND metric IN ("
                    + ", ".join(f"'skill/{name}/dropped'" for name in _GROUP_FILTERS)
                    + ") GROUP BY 1 ORDER BY 1"
                ),
            )
        unsolved_dead = dead - solved_dead
        unsolved_ratio, solved_ratio = unsolved_dead / total, solved_dead / total
        late_unsolved = late_dead - late_solved
        evidence = {
            "dead_ratio": dead / total,
            "dead_groups": dead,
            "groups": total,
            "unsolved_dead_groups": unsolved_dead,
            "unsolved_dead_ratio": unsolved_ratio,
            "solved_dead_groups": solved_dead,
            "solved_dead_ratio": solved_ratio,
            "single_sample_groups": single,
            "late_dead_ratio": late_dead / late_groups if late_groups else None,
            "late_unsolved_dead_ratio": late_unsolved / late_groups if late_groups else None,
            "late_solved_dead_ratio": late_solved / late_groups if late_groups else None,
            "late_window_fraction": t.window_fraction,
            "dead_reward_values": [{"reward": v, "groups": n} for v, n in values],
            "std_epsilon": t.std_epsilon,
            "solved_reward": t.solved_reward,
            "warn_ratio": t.warn_ratio,
            "critical_ratio": t.critical_ratio,
            "query": shown,
            "query_dead_values": shown_values,
        }
        if filtered:
            evidence["filtered_by"] = {name: int(n or 0) for name, n in filtered}
            evidence["query_filter"] = shown_filter
        out = []
        if unsolved_ratio > t.warn_ratio:
            title = (
                f"{unsolved_ratio:.0%} of groups are dead and unsolved (reward std < {t.std_epsilon:g}, "
                f"reward below {t.solved_reward:g}): {unsolved_dead:,} of {total:,}"
            )
            if filtered:
                names = ", ".join(name for name, _ in filtered)
                out.append(
                    self.finding(
                        "signal.dead_groups_high",
                        "warn",
                        f"{title}; {names} kept them out of the loss",
                        run_id=run_id,
                        version=version,
                        evidence=evidence,
                        suggestion=f"{names} already gives these groups zero weight, so they cost generation, not "
                        "learning: refill the batch (its max_resample_batches parameter, DAPO's dynamic "
                        "sampling), more samples per group, partial credit, or easier tasks in the pool",
                        skills=[],
                    )
                )
            else:
                out.append(
                    self.finding(
                        "signal.dead_groups_high",
                        "critical" if unsolved_ratio > t.critical_ratio else "warn",
                        title,
                        run_id=run_id,
                        version=version,
                        evidence=evidence,
                        suggestion="groups whose samples all get the same low reward give GRPO zero advantage: drop "
                        "them (StdGroupFilter), give partial credit (PartialPassReward) or move to easier "
                        "tasks; more samples per group also help",
                        skills=["StdGroupFilter"],
                    )
                )
        if solved_ratio > t.warn_ratio:
            out.append(
                self.finding(
                    "signal.dead_groups_solved",
                    "warn" if solved_ratio > t.critical_ratio else "info",
                    f"{solved_ratio:.0%} of groups are solved by every sample (reward >= {t.solved_reward:g}, "
                    f"std < {t.std_epsilon:g}): {solved_dead:,} of {total:,}",
                    run_id=run_id,
                    version=version,
                    evidence=evidence,
                    suggestion="the policy has learnt these prompts, so they carry no more signal: that is "
                    "progress, not a broken reward. To keep learning, give it harder prompts (a "
                    "curriculum, or a harder task pool) and judge the gain on validation",
                )
            )
        return out


#: Skills (skills/catalog.py) that drop zero-variance groups from the loss and record
#: ``skill/<name>/dropped`` signals.
_GROUP_FILTERS = ("StdGroupFilter", "DualLevelFilter")


# ----------------------------------------------------------------------------- solve rates
@dataclass(frozen=True)
class SolveRatesThresholds:
    solved_reward: float = help_field(1.0, "a sample is solved when its reward is at least this")
    unsolved_reward: float = help_field(0.0, "a sample is failed when its reward is at most this")
    all_solved_warn: float = help_field(0.3, "fraction of all-solved groups above this: warn")
    none_solved_warn: float = help_field(0.5, "fraction of none-solved groups above this: warn")
    none_solved_high: float = help_field(0.8, "fraction of none-solved groups above this: high")

    def __post_init__(self) -> None:
        owner = "signal.solve_rates"
        if not self.unsolved_reward < self.solved_reward:
            raise ValueError(
                f"unsolved_reward ({self.unsolved_reward}) must be below solved_reward "
                f"({self.solved_reward}) in {owner}"
            )
        for name in ("all_solved_warn", "none_solved_warn", "none_solved_high"):
            check_range(owner, name, getattr(self, name), 0.0, 1.0)
        check_order(
            owner, none_solved_warn=self.none_solved_warn, none_solved_high=self.none_solved_high
        )


@register_analyzer
class SolveRates(Analyzer):
    """Fractions of groups where every sample solved / none did.

    Only judged on group-based runs (:func:`is_group_run`) whose every finite reward lies in
    ``[unsolved_reward, solved_reward]`` (pass/fail or graded rewards); for other reward scales
    (returns of gym episodes) "solved" has no meaning and nothing is reported. All-solved
    prompts call for harder prompts, not a group filter: they name no skill.
    """

    name = "signal.solve_rates"
    layer = "signal"
    codes = ("signal.all_solved_high", "signal.none_solved_high")
    thresholds_type = SolveRatesThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        hi, lo = repr(float(t.solved_reward)), repr(float(t.unsolved_reward))
        with using(context) as ctx:
            if not is_group_run(con, run_id, ctx):
                return []
            groups = shared_groups(con, ctx, run_id)
            rows, shown = query(
                con,
                (
                    f"SELECT count(*) AS groups, count(*) FILTER (WHERE lo >= {hi}) AS all_solved, "
                    f"count(*) FILTER (WHERE hi <= {lo}) AS none_solved, min(lo) AS reward_min, max(hi) AS reward_max "
                    "FROM __run_groups__ WHERE n > 0"
                ),
                groups,
            )
        total, all_solved, none_solved, rmin, rmax = rows[0]
        if not total or rmin < t.unsolved_reward or rmax > t.solved_reward:
            return []
        evidence = {
            "groups": total,
            "all_solved_groups": all_solved,
            "none_solved_groups": none_solved,
            "all_solved_fraction": all_solved / total,
            "none_solved_fraction": none_solved / total,
            "reward_min": rmin,
            "reward_max": rmax,
            "solved_reward": t.solved_reward,
            "unsolved_reward": t.unsolved_reward,
            "query": shown,
        }
        out = []
        if all_solved / total > t.all_solved_warn:
            out.append(
                self.finding(
                    "signal.all_solved_high",
                    "warn",
                    f"{all_solved / total:.0%} of groups are solved by every sample ({all_solved:,} of {total:,})",
                    run_id=run_id,
                    version=version,
                    evidence={**evidence, "threshold": t.all_solved_warn},
                    suggestion="these prompts are learnt and teach nothing more: move to harder tasks or a "
                    "curriculum (progress, not a broken signal)",
                )
            )
        frac = none_solved / total
        if frac > t.none_solved_warn:
            out.append(
                self.finding(
                    "signal.none_solved_high",
                    "high" if frac > t.none_solved_high else "warn",
                    f"{frac:.0%} of groups are solved by no sample ({none_solved:,} of {total:,})",
                    run_id=run_id,
                    version=version,
                    evidence={
                        **evidence,
                        "threshold": t.none_solved_warn,
                        "high": t.none_solved_high,
                    },
                    suggestion="most prompts are out of reach: give partial credit (PartialPassReward) or a "
                    "shaping term (AuxRewardTerm), use easier tasks, or more samples per group",
                    skills=["PartialPassReward", "AuxRewardTerm"],
                )
            )
        return out


# ----------------------------------------------------------------------------- reward trend
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


# ----------------------------------------------------------------------------- reward below start
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


# ----------------------------------------------------------------------------- entropy
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


# ----------------------------------------------------------------------------- echo trap
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
        if rows:
            std_steps = np.array([r[0] for r in rows], dtype=np.float64)
            std_values = np.array([r[1] for r in rows], dtype=np.float64)
            std_source = "rollouts"
        else:
            name = next((m for m in t.reward_std_metrics if m in series), None)
            if name is None:
                return []
            std_steps, std_values = series[name]
            std_source = f"signal:{name}"
        entropy_names = [m for m in series if "entropy" in m.lower()]
        grad_names = [m for m in series if any(g.lower() in m.lower() for g in t.grad_norm_metrics)]
        if not entropy_names or not grad_names:
            return []
        entropy_name = max(entropy_names, key=lambda m: (series[m][0].size, m == "entropy"))
        grad_name = max(grad_names, key=lambda m: (series[m][0].size, m == "grad_norm"))
        ent_steps, ent_values = series[entropy_name]
        g_steps, g_values = series[grad_name]
        for step, value, base in spikes(
            g_steps,
            g_values,
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
            if not (std_fell and ent_fell):
                continue
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
        return []


# ----------------------------------------------------------------------------- KL and clipping
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
                found = spikes(
                    steps,
                    values,
                    factor=t.spike_factor,
                    window=t.spike_window,
                    min_baseline=t.min_baseline,
                    floor=floor,
                )
                if found:
                    step, value, base = max(found, key=lambda s: s[1] / s[2])
                    spiked[metric] = {
                        "step": step,
                        "value": value,
                        "baseline": base,
                        "spikes": len(found),
                    }
            if levels:
                worst = max(levels, key=levels.get)
                level = levels[worst]
                if level > warn:
                    high = level > min(4 * warn, cap) if warn < cap else False
                    out.append(
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
                                "window_fraction": t.window_fraction,
                                "query": shown,
                            },
                            suggestion=_KL_CLIP_ADVICE[family],
                        )
                    )
            if spiked:
                worst = max(spiked, key=lambda m: spiked[m]["value"] / spiked[m]["baseline"])
                s = spiked[worst]
                out.append(
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
                            "spike_factor": t.spike_factor,
                            "floor": floor,
                            "spiking_metrics": spiked,
                            "query": shown,
                        },
                        suggestion=_KL_CLIP_ADVICE[family],
                    )
                )
        return out


_KL_CLIP_ADVICE = {
    "kl": "the policy is drifting far from the reference: lower the learning rate, raise the KL "
    "coefficient, or look for reward exploits that pull it away",
    "clip_ratio": "many updates hit the PPO clip range: the step is too large for the data; lower the "
    "learning rate or the number of updates per batch",
}


# ----------------------------------------------------------------------------- NaN / inf
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


# ----------------------------------------------------------------------------- truncation
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
