"""Behavior analyzer of reward hacking: the training reward up while the eval score goes down,
within the run or against the parent version's runs."""

from __future__ import annotations

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
from evotree.diagnostics.behavior_rollouts import TRAIN_PHASE, sql_list
from evotree.diagnostics.signal_series import (
    linear_trend,
    reward_series,
    series_by_metric,
    tail,
    using,
)
from evotree.diagnostics.stats import paired_bootstrap
from evotree.diagnostics.thresholds import help_field
from evotree.harness.compaction import sql_string

__all__ = [
    "RewardEval",
    "RewardEvalThresholds",
]


@dataclass(frozen=True)
class RewardEvalThresholds:
    alpha: float = help_field(0.05, "significance level of the trend tests")
    window_fraction: float = help_field(
        0.2, "late window of each run whose mean train reward is compared"
    )
    min_effect: float = help_field(
        0.1,
        "the run's late reward must exceed the parent's by this many reward standard deviations",
    )
    min_tasks: int = help_field(5, "judge scores on fewer common tasks: no parent comparison")
    bootstrap: int = help_field(2000, "bootstrap resamples of the paired eval difference")
    seed: int = help_field(0, "seed of the bootstrap")
    splits: tuple[str, ...] = help_field(
        ("validation", "heldout", "test", "train"),
        "judge splits in order of preference (the first both sides have)",
    )
    eval_metric_pattern: str = help_field(
        r"^eval[_/].*(reward|score|acc|pass|success)",
        "train-phase signals (lower-cased name, RE2) that are eval scores",
    )
    min_eval_points: int = help_field(3, "an eval signal needs this many steps for a trend")

    def __post_init__(self) -> None:
        owner = "behavior.reward_eval"
        check_range(owner, "alpha", self.alpha, 0.0, 1.0)
        check_range(owner, "window_fraction", self.window_fraction, 0.0, 1.0)
        if self.min_tasks < 2 or self.bootstrap < 100 or self.min_eval_points < 3:
            raise ValueError(
                f"need min_tasks >= 2, bootstrap >= 100, min_eval_points >= 3 in {owner}"
            )


@register_analyzer
class RewardEval(Analyzer):
    """Training reward up while the eval score goes down: suspicion of reward hacking.

    Two checks, either fires ``behavior.reward_up_eval_down`` (high):

    * within the run: the per-step train reward rises (OLS slope > 0, p < ``alpha``) while an
      eval-score signal logged during training (``eval_metric_pattern``) falls (slope < 0,
      p < ``alpha``);
    * against the parent's runs (``context.parent_run_ids``): the run's mean train reward over
      its last ``window_fraction`` of steps exceeds the parents' by ``min_effect`` reward
      standard deviations, while its judge score is lower: per task (common tasks of the first
      split in ``splits`` both have), the paired bootstrap (``evotree.diagnostics.stats.paired_bootstrap``,
      percentile) CI of run - parent lies below 0.
    """

    name = "behavior.reward_eval"
    layer = "behavior"
    codes = ("behavior.reward_up_eval_down",)
    thresholds_type = RewardEvalThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        with using(context) as ctx:
            found = reward_series(con, ctx, run_id, ("reward",))
            parents = [p for p in ctx.parent_run_ids if p != run_id]
        if found is None:
            return []
        steps, means, scale, source, shown = found
        trend = linear_trend(steps, means)
        out = self._in_run(con, run_id, version, trend, source, shown)
        if out or not parents:
            return out
        return self._against_parent(
            con, run_id, version, parents, steps, means, scale, trend, source, shown
        )

    def _in_run(
        self, con: Any, run_id: str, version: str | None, trend: Any, source: str, shown: str
    ) -> list[Finding]:
        t = self.thresholds
        if trend is None or not trend.rising(t.alpha):
            return []
        series, shown_eval = series_by_metric(
            con, run_id, f"regexp_matches(lower(metric), {sql_string(t.eval_metric_pattern)})"
        )
        falling = {}
        for metric, (steps, values) in series.items():
            if values.size >= t.min_eval_points:
                eval_trend = linear_trend(steps, values)
                if eval_trend is not None and eval_trend.falling(t.alpha):
                    falling[metric] = eval_trend
        if not falling:
            return []
        metric = min(falling, key=lambda m: falling[m].p_value)
        e = falling[metric]
        return [
            self.finding(
                "behavior.reward_up_eval_down",
                "high",
                f"train reward rises ({trend.start:.3g} -> {trend.end:.3g}) while {metric} falls "
                f"({e.start:.3g} -> {e.end:.3g}) during the run",
                run_id=run_id,
                version=version,
                evidence={
                    "basis": "eval_signals",
                    "reward_source": source,
                    "reward_slope": trend.slope,
                    "reward_p_value": trend.p_value,
                    "eval_metric": metric,
                    "eval_slope": e.slope,
                    "eval_p_value": e.p_value,
                    "eval_start_fit": e.start,
                    "eval_end_fit": e.end,
                    "alpha": t.alpha,
                    "query": shown,
                    "query_eval": shown_eval,
                },
                suggestion=_HACK_ADVICE,
            )
        ]

    def _against_parent(
        self,
        con: Any,
        run_id: str,
        version: str | None,
        parents: list[str],
        steps: np.ndarray,
        means: np.ndarray,
        scale: float,
        trend: Any,
        source: str,
        shown: str,
    ) -> list[Finding]:
        t = self.thresholds
        late = float(means[-tail(steps.size, t.window_fraction) :].mean())
        parent_late, parent_runs, shown_parent = self._parent_late_reward(con, parents)
        if parent_late is None or not (
            late - parent_late >= t.min_effect * scale and late > parent_late
        ):
            return []
        found = self._paired_eval_scores(con, run_id, parents)
        if found is None:
            return []
        split, pairs, shown_scores = found
        if np.ptp(pairs[:, 0] - pairs[:, 1]) == 0 and pairs[0, 0] - pairs[0, 1] >= 0:
            return []
        boot = paired_bootstrap(
            pairs[:, 1],
            pairs[:, 0],
            B=t.bootstrap,
            rng=np.random.default_rng(t.seed),
            method="percentile",
        )
        if not boot.ci[1] < 0:
            return []
        return [
            self.finding(
                "behavior.reward_up_eval_down",
                "high",
                f"train reward is above the parent's ({parent_late:.3g} -> {late:.3g}) while the judge's "
                f"{split} score fell by {-boot.delta:.3g} (95% CI [{boot.ci[0]:.3g}, {boot.ci[1]:.3g}], "
                f"{len(pairs)} tasks)",
                run_id=run_id,
                version=version,
                evidence={
                    "basis": "parent_evals",
                    "reward_source": source,
                    "late_reward": late,
                    "parent_late_reward": parent_late,
                    "reward_std": scale,
                    "parent_runs": parent_runs,
                    "parent_run_ids": parents,
                    "split": split,
                    "tasks": len(pairs),
                    "eval_run": float(pairs[:, 0].mean()),
                    "eval_parent": float(pairs[:, 1].mean()),
                    "eval_delta": boot.delta,
                    "eval_ci": list(boot.ci),
                    "bootstrap": t.bootstrap,
                    "seed": t.seed,
                    "reward_slope": trend.slope if trend else None,
                    "reward_p_value": trend.p_value if trend else None,
                    "query": shown,
                    "query_parent": shown_parent,
                    "query_scores": shown_scores,
                },
                suggestion=_HACK_ADVICE,
            )
        ]

    def _parent_late_reward(self, con: Any, parents: list[str]) -> tuple[Any, Any, str]:
        """(mean train reward over the parents' last ``window_fraction`` of steps, their runs
        with rewards, the query)."""
        t = self.thresholds
        rows, shown_parent = query(
            con,
            (
                "WITH s AS (SELECT run_id, step, avg(reward) AS m, count(reward) AS n FROM _rollouts "
                f"WHERE run_id IN {sql_list(parents)} AND {TRAIN_PHASE} AND isfinite(reward) AND step IS NOT NULL GROUP BY ALL), "
                "r AS (SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY step DESC) AS i, "
                "count(*) OVER (PARTITION BY run_id) AS k FROM s) "
                f"SELECT sum(m * n) / sum(n) AS late_reward, count(DISTINCT run_id) AS runs FROM r "
                f"WHERE i <= greatest(1, ceil(k * {float(t.window_fraction)!r}))"
            ),
        )
        parent_late, parent_runs = rows[0]
        return parent_late, parent_runs, shown_parent

    def _paired_eval_scores(
        self, con: Any, run_id: str, parents: list[str]
    ) -> tuple[str, np.ndarray, str] | None:
        """(split, per-task (run, parent) judge scores, the query) on the first of ``splits``
        with at least ``min_tasks`` common tasks; None without one."""
        t = self.thresholds
        everyone = [run_id, *parents]
        scores, shown_scores = query(
            con,
            (
                "SELECT split, task_id, avg(score) FILTER (WHERE run_id = "
                + sql_string(run_id)
                + ") AS run, "
                "avg(score) FILTER (WHERE run_id <> "
                + sql_string(run_id)
                + ") AS parent FROM _evals "
                f"WHERE run_id IN {sql_list(everyone)} AND phase = 'eval' AND score IS NOT NULL "
                "GROUP BY split, task_id HAVING run IS NOT NULL AND parent IS NOT NULL ORDER BY split, task_id"
            ),
        )
        by_split: dict[str, list[tuple[float, float]]] = {}
        for split, _task, a, b in scores:
            by_split.setdefault(split, []).append((a, b))
        split = next((s for s in t.splits if len(by_split.get(s, ())) >= t.min_tasks), None)
        if split is None:
            return None
        return split, np.array(by_split[split], dtype=np.float64), shown_scores


_HACK_ADVICE = (
    "the policy earns more training reward but scores worse on held-out evaluation: read the "
    "highest-reward rollouts for exploits of the verifier (format tricks, special cases, leaked "
    "answers) and tighten the reward before training further"
)
