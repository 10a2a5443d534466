"""The behavior layer: what the policy actually produced in its train rollouts.

Analyzers over the contents of a run's **train** rollouts (lengths, finish reasons, texts,
commands) and, for the reward-vs-eval check, its judge scores against the parent's.

=========================  ===============================================  ======================
analyzer                   finding codes (severity)                          default thresholds
=========================  ===============================================  ======================
behavior.length            behavior.length_distribution (info),              KS p < 0.05 and
                           behavior.length_shift (warn, high)                D >= 0.1 / 0.3
behavior.finish            behavior.truncation_rate_high (warn, high),       > 10 % / 30 %;
                           behavior.format_failure_high (warn, high)         > 5 % / 20 %
behavior.tools             behavior.tool_usage (info),                       failures > 20 % / 50 %
                           behavior.tool_failure_high (warn, high)           of tool-using rollouts
behavior.diversity         behavior.template_collapse (warn, high)           pairwise sim >= 0.8 in
                                                                             > 30 % / 60 % of groups
                                                                             of texts >= 3 words
behavior.repetition        behavior.repetition_high (warn, high)             > 10 % / 30 % of texts
behavior.git_history       behavior.git_history_commands (warn, high)        any / >= 5 % of rollouts
behavior.reward_eval       behavior.reward_up_eval_down (high)               p < 0.05 / CI below 0
behavior.gym               behavior.gym_episodes (info),                     failures > 10 % / 50 %;
                           behavior.gym_failures_high (warn, high),          normalized action
                           behavior.gym_action_collapse (warn)               entropy < 0.1
=========================  ===============================================  ======================

**Gym runs** (every sampled train rollout has ``task_id`` = ``group_id + "#" + number``, the
layout of :mod:`evotree.domains.gym.train`) get the gym analyzer; the text analyzers (diversity,
repetition), the finish-reason rates and the length analyzer skip them, because their texts are
generated summaries, a ``truncated`` episode there is the environment's time limit (often
success), and an episode's length is the task's outcome (longer is better on CartPole, worse on
MountainCar), not a completion's length; the gym analyzer reports lengths per environment.

**Short answers.** Template collapse is judged only on groups whose texts average at least
``min_words`` words (default 3, one more than the bigrams compared). A one- or two-word answer
(the math domain's ``" 7"``) has no template to collapse onto: its samples are either the same
answer or not, and a group of equal answers is agreement, which the signal layer's dead-group
and solve-rate findings report (solved or not).

**Text sample.** Diversity and repetition read texts of at most ``sample_groups`` groups
(default 2,000): half from the earliest steps, half from the latest (a group is
``(step, group_id)``); when a boundary step holds more groups than needed, groups are taken in
the order of DuckDB's ``hash(step, group_id, seed)`` (fixed ``seed``, default 0). Texts are cut
to their first ``max_chars`` characters, lower-cased and split into words at spaces, tabs and
line breaks.
Verdicts use the late half; the early half is in the evidence for contrast. Reading only the
two ends keeps the cost bounded: Parquet row groups in between are skipped.

**Tool calls** are the ``commands`` column. A tool-using rollout *failed* when its
``finish_reason`` is in ``tool_failure_reasons`` (default ``error``, ``tool_error``) or one of
its reward components whose name contains ``tool_error`` is above 0 (component names are read
from the first 1,000 train rollouts).

**Git history commands**: a command string in which a token ``git`` (or a path ending in
``/git``), after git's own options (``-C DIR``, ``-c KEY=VALUE``, ``--flag``), is followed by a
history subcommand (``log``, ``show``, ``reflog``, ``rev-list``, ``cat-file``, ``whatchanged``,
``shortlog``, ``blame``, ``fsck``, ``ls-tree``). A token check, not a shell parser (the audit
layer parses shells); ``sh -c "git log"`` is found, ``g=git; $g log`` is not.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
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
from evotree.diagnostics.signal_series import (
    linear_trend,
    reward_series,
    series_by_metric,
    shared_groups,
    tail,
    using,
)
from evotree.diagnostics.stats import paired_bootstrap
from evotree.diagnostics.thresholds import help_field
from evotree.harness.compaction import sql_string

__all__ = [
    "Diversity",
    "DiversityThresholds",
    "FinishReasons",
    "FinishReasonsThresholds",
    "GitHistory",
    "GitHistoryThresholds",
    "Gym",
    "GymThresholds",
    "LengthShift",
    "LengthShiftThresholds",
    "Repetition",
    "RepetitionThresholds",
    "RewardEval",
    "RewardEvalThresholds",
    "Tools",
    "ToolsThresholds",
    "git_history_pattern",
    "is_gym_run",
    "ks_from_histograms",
]

_TRAIN = "phase = 'train'"


def _run(run_id: str) -> str:
    return f"run_id = {sql_string(run_id)} AND {_TRAIN}"


def _in(values: Any) -> str:
    return "(" + ", ".join(sql_string(v) for v in values) + ")" if values else "(NULL)"


# ----------------------------------------------------------------------------- shared helpers
def is_gym_run(con: Any, run_id: str, context: AnalysisContext | None = None) -> bool:
    """True when the run's first 1,000 train rollouts all have ``task_id`` = ``group_id#N``."""

    def compute() -> bool:
        rows, _ = query(
            con,
            (
                "SELECT count(*) AS n, count(*) FILTER (WHERE starts_with(task_id, group_id || '#') AND "
                "regexp_full_match(task_id, '.+#[0-9]+')) AS gym FROM (SELECT task_id, group_id FROM _rollouts "
                f"WHERE {_run(run_id)} LIMIT 1000)"
            ),
        )
        n, gym = rows[0]
        return bool(n) and gym == n

    if context is None:
        return compute()
    return context.memo(run_id, "is_gym", compute)


def component_names(con: Any, run_id: str, context: AnalysisContext | None = None) -> list[str]:
    """Reward component names in the first 1,000 train rollouts of the run."""

    def compute() -> list[str]:
        rows, _ = query(
            con,
            (
                "SELECT DISTINCT unnest(json_keys(CASE WHEN json_valid(components) THEN components END)) AS name "
                f"FROM (SELECT components FROM _rollouts WHERE {_run(run_id)} AND components IS NOT NULL LIMIT 1000) "
                "ORDER BY name"
            ),
        )
        return [r[0] for r in rows if r[0] is not None]

    if context is None:
        return compute()
    return context.memo(run_id, "components", compute)


def component_value_sql(name: str) -> str:
    """SQL: the numeric value of reward component ``name`` of a rollout (null if absent).

    A regular expression over the flat JSON object (an order of magnitude cheaper than JSON
    parsing at 10M rows): ``"name": <number>``.
    """
    pattern = '"' + re.escape(json_key(name)) + r'"\s*:\s*(-?[0-9][0-9.eE+-]*)'
    return f"TRY_CAST(nullif(regexp_extract(components, {sql_string(pattern)}, 1), '') AS DOUBLE)"


def json_key(name: str) -> str:
    """``name`` as it appears between the quotes of a JSON key written by ``json.dumps``."""
    import json

    return json.dumps(name)[1:-1]


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


# ----------------------------------------------------------------------------- lengths
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
        values, counts, shown = length_histogram(con, _run(run_id))
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
            con, f"run_id IN {_in(parents)} AND {_TRAIN}"
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


# ----------------------------------------------------------------------------- finish reasons
@dataclass(frozen=True)
class FinishReasonsThresholds:
    truncation_warn: float = help_field(0.1, "truncated fraction above this: warn")
    truncation_high: float = help_field(0.3, "truncated fraction above this: high")
    format_warn: float = help_field(0.05, "format-failure fraction above this: warn")
    format_high: float = help_field(0.2, "format-failure fraction above this: high")
    format_failure_reasons: tuple[str, ...] = help_field(
        ("format_error", "invalid_format", "parse_error", "no_answer"),
        "finish_reason values that mean the output could not be parsed",
    )
    format_component: str = help_field(
        "format",
        "a reward component whose name contains this and whose "
        "value is <= 0 marks a format failure",
    )

    def __post_init__(self) -> None:
        owner = "behavior.finish"
        for name in ("truncation_warn", "truncation_high", "format_warn", "format_high"):
            check_range(owner, name, getattr(self, name), 0.0, 1.0)
        check_order(
            owner, truncation_warn=self.truncation_warn, truncation_high=self.truncation_high
        )
        check_order(owner, format_warn=self.format_warn, format_high=self.format_high)


def _budget_change(con: Any, run_id: str, rate: float, t: Any) -> dict[str, Any] | None:
    """A recipe change for a truncation finding: raise ``max_completion_length`` (TRL's name) to
    twice the budget the truncated rollouts hit, when more than ``truncation_high`` of the
    rollouts are cut and either nearly all are (90 %: the budget binds) or the cut ones earn less
    reward than the whole ones (the budget, not the policy, costs reward). None otherwise."""
    rows, _ = query(
        con,
        (
            "SELECT max(length) FILTER (WHERE truncated OR finish_reason = 'length') AS budget, "
            "avg(reward) FILTER (WHERE truncated OR finish_reason = 'length') AS cut_reward, "
            "avg(reward) FILTER (WHERE NOT (truncated OR finish_reason = 'length')) AS whole_reward, "
            "count(*) FILTER (WHERE (truncated OR finish_reason = 'length') AND length IS NOT NULL) AS cut "
            f"FROM _rollouts WHERE {_run(run_id)}"
        ),
    )
    if not rows:
        return None
    budget, cut_reward, whole_reward, cut = rows[0]
    if budget is None or not cut or rate <= t.truncation_high:
        return None
    # nearly every rollout cut: the budget binds whatever the few whole ones earn
    if (
        rate < 0.9
        and cut_reward is not None
        and whole_reward is not None
        and float(cut_reward) >= float(whole_reward)
    ):
        return None
    budget = int(budget)
    why = (
        f"{rate:.0%} of rollouts stop at the {budget}-token budget: the budget, not the policy, ends them"
        if rate >= 0.9
        else f"{rate:.0%} of rollouts stop at {budget} tokens; cut ones earn {float(cut_reward or 0):.3g} reward "
        f"on average against {float(whole_reward or 0):.3g} for whole ones"
    )
    change: dict[str, Any] = {
        "kind": "raise",
        "param": "max_completion_length",
        "from": budget,
        "to": 2 * budget,
        "why": why,
        "where": "the GRPO config (math: recipe.toml; TRL: GRPOConfig.max_completion_length)",
    }
    # dead groups whose samples are (nearly) all cut: the budget is their cause too
    groups, _ = query(
        con,
        (
            "SELECT count(*) FILTER (WHERE coalesce(sd, 0) = 0) AS dead, "
            "count(*) FILTER (WHERE coalesce(sd, 0) = 0 AND cut_share >= 0.9) AS dead_cut FROM ("
            "SELECT group_id, stddev_samp(reward) AS sd, "
            "avg(CASE WHEN truncated OR finish_reason = 'length' THEN 1.0 ELSE 0.0 END) AS cut_share "
            f"FROM _rollouts WHERE {_run(run_id)} AND group_id IS NOT NULL GROUP BY group_id)"
        ),
    )
    dead, dead_cut = (int(groups[0][0] or 0), int(groups[0][1] or 0)) if groups else (0, 0)
    if dead and dead_cut / dead >= 0.5:
        change["also_addresses"] = ["signal.dead_groups_high"]
        change["why"] += (
            f"; {dead_cut:,} of the {dead:,} zero-variance groups ({dead_cut / dead:.0%}) are "
            "groups whose samples the budget cut"
        )
    return change


@register_analyzer
class FinishReasons(Analyzer):
    """Truncation and format-failure rates of the train rollouts (not for gym runs).

    Truncated: ``truncated`` true or ``finish_reason`` = ``length``, over rollouts with either
    set. Format failure: ``finish_reason`` in ``format_failure_reasons``, or a reward component
    whose name contains ``format_component`` is <= 0; over all rollouts.
    """

    name = "behavior.finish"
    layer = "behavior"
    codes = ("behavior.truncation_rate_high", "behavior.format_failure_high")
    thresholds_type = FinishReasonsThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        if is_gym_run(con, run_id, context):
            return []
        fmt_names = [
            n
            for n in component_names(con, run_id, context)
            if t.format_component.lower() in n.lower()
        ]
        fmt = [f"finish_reason IN {_in(t.format_failure_reasons)}"] + [
            f"{component_value_sql(n)} <= 0" for n in fmt_names
        ]
        rows, shown = query(
            con,
            (
                "SELECT finish_reason, count(*) AS n, "
                "count(*) FILTER (WHERE truncated OR finish_reason = 'length') AS truncated, "
                "count(*) FILTER (WHERE truncated IS NOT NULL OR finish_reason IS NOT NULL) AS truncation_known, "
                f"count(*) FILTER (WHERE {' OR '.join(fmt)}) AS format_failed "
                f"FROM _rollouts WHERE {_run(run_id)} GROUP BY finish_reason ORDER BY n DESC"
            ),
        )
        total = sum(r[1] for r in rows)
        if not total:
            return []
        truncated = sum(r[2] for r in rows)
        known = sum(r[3] for r in rows)
        failed = sum(r[4] for r in rows)
        reasons = {str(r[0]): r[1] for r in rows[:10]}
        out = []
        rate = truncated / known if known else 0.0
        if known and rate > t.truncation_warn:
            change = _budget_change(con, run_id, rate, t)
            evidence_change = {"recipe_change": change} if change else {}
            out.append(
                self.finding(
                    "behavior.truncation_rate_high",
                    "high" if rate > t.truncation_high else "warn",
                    f"{rate:.0%} of rollouts are truncated ({truncated:,} of {known:,})",
                    run_id=run_id,
                    version=version,
                    evidence={
                        "truncated_fraction": rate,
                        "truncated": truncated,
                        "rollouts": known,
                        "finish_reasons": reasons,
                        "warn": t.truncation_warn,
                        "high": t.truncation_high,
                        "query": shown,
                        **evidence_change,
                    },
                    suggestion=(
                        f"answers hit the completion budget ({change['from']} tokens) and lose their reward: "
                        f"raise max_completion_length to {change['to']} (the budget, not the policy, "
                        "cuts them), or penalize overlong answers (OverlongPenalty)"
                        if change and change.get("kind") == "raise"
                        else "answers hit the length limit and lose their reward: penalize overlong answers "
                        "(OverlongPenalty), or raise the limit if the tasks need it"
                    ),
                    skills=["OverlongPenalty"],
                )
            )
        rate = failed / total
        if rate > t.format_warn:
            out.append(
                self.finding(
                    "behavior.format_failure_high",
                    "high" if rate > t.format_high else "warn",
                    f"{rate:.0%} of rollouts fail the output format ({failed:,} of {total:,})",
                    run_id=run_id,
                    version=version,
                    evidence={
                        "format_failure_fraction": rate,
                        "format_failures": failed,
                        "rollouts": total,
                        "finish_reasons": reasons,
                        "format_failure_reasons": list(t.format_failure_reasons),
                        "format_components": fmt_names,
                        "warn": t.format_warn,
                        "high": t.format_high,
                        "query": shown,
                    },
                    suggestion="the policy often produces output the verifier cannot parse: filter or penalize "
                    "malformed samples at both levels (DualLevelFilter), or give the format its own "
                    "reward term",
                    skills=["DualLevelFilter"],
                )
            )
        return out


# ----------------------------------------------------------------------------- tools
@dataclass(frozen=True)
class ToolsThresholds:
    failure_warn: float = help_field(0.2, "failed share of tool-using rollouts above this: warn")
    failure_high: float = help_field(0.5, "failed share of tool-using rollouts above this: high")
    tool_failure_reasons: tuple[str, ...] = help_field(
        ("error", "tool_error"), "finish_reason values that mean a tool call failed"
    )
    tool_error_component: str = help_field(
        "tool_error",
        "a reward component whose name contains this and "
        "whose value is > 0 marks a failed tool call",
    )

    def __post_init__(self) -> None:
        owner = "behavior.tools"
        check_range(owner, "failure_warn", self.failure_warn, 0.0, 1.0)
        check_range(owner, "failure_high", self.failure_high, 0.0, 1.0)
        check_order(owner, failure_warn=self.failure_warn, failure_high=self.failure_high)


@register_analyzer
class Tools(Analyzer):
    """Tool-call frequency (the ``commands`` column) and the failure rate of tool-using rollouts.

    ``behavior.tool_usage`` (info): share of rollouts with at least one command, commands per
    rollout, the most used programs (first word of a command). ``behavior.tool_failure_high``:
    the failed share of tool-using rollouts (rule in the module doc) above ``failure_warn``.
    """

    name = "behavior.tools"
    layer = "behavior"
    codes = ("behavior.tool_usage", "behavior.tool_failure_high")
    thresholds_type = ToolsThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        err_names = [
            n
            for n in component_names(con, run_id, context)
            if t.tool_error_component.lower() in n.lower()
        ]
        failed = [f"finish_reason IN {_in(t.tool_failure_reasons)}"] + [
            f"{component_value_sql(n)} > 0" for n in err_names
        ]
        rows, shown = query(
            con,
            (
                "SELECT count(*) AS rollouts, count(*) FILTER (WHERE len(commands) > 0) AS with_commands, "
                "coalesce(sum(len(commands)), 0) AS commands, "
                f"count(*) FILTER (WHERE len(commands) > 0 AND ({' OR '.join(failed)})) AS failed "
                f"FROM _rollouts WHERE {_run(run_id)}"
            ),
        )
        total, using_tools, commands, failures = rows[0]
        if not using_tools:
            return []
        programs, shown_programs = query(
            con,
            (
                "SELECT split_part(trim(c), ' ', 1) AS program, count(*) AS calls FROM (SELECT unnest(commands) AS c "
                f"FROM _rollouts WHERE {_run(run_id)} AND len(commands) > 0) GROUP BY program "
                "ORDER BY calls DESC, program LIMIT 10"
            ),
        )
        usage = {
            "rollouts": total,
            "tool_using_rollouts": using_tools,
            "tool_using_fraction": using_tools / total,
            "commands": commands,
            "commands_per_rollout": commands / total,
            "commands_per_tool_using_rollout": commands / using_tools,
            "failed_tool_using_rollouts": failures,
            "failure_rate": failures / using_tools,
            "top_programs": {p: n for p, n in programs},
        }
        out = [
            self.finding(
                "behavior.tool_usage",
                "info",
                f"{using_tools / total:.0%} of rollouts call tools ({commands / using_tools:.1f} commands each); "
                f"{failures / using_tools:.0%} of those fail",
                run_id=run_id,
                version=version,
                evidence={**usage, "query": shown, "query_programs": shown_programs},
            )
        ]
        rate = failures / using_tools
        if rate > t.failure_warn:
            out.append(
                self.finding(
                    "behavior.tool_failure_high",
                    "high" if rate > t.failure_high else "warn",
                    f"{rate:.0%} of tool-using rollouts fail ({failures:,} of {using_tools:,})",
                    run_id=run_id,
                    version=version,
                    evidence={
                        **usage,
                        "failure_reasons": list(t.tool_failure_reasons),
                        "tool_error_components": err_names,
                        "warn": t.failure_warn,
                        "high": t.failure_high,
                        "query": shown,
                    },
                    suggestion="tool calls fail often: check the tool environment (missing programs, timeouts), "
                    "show the policy the error output, or reward successful calls (AuxRewardTerm)",
                    skills=["AuxRewardTerm"],
                )
            )
        return out


# ----------------------------------------------------------------------------- text sample
def text_sample(
    con: Any,
    context: AnalysisContext,
    run_id: str,
    *,
    sample_groups: int,
    seed: int,
    max_chars: int,
) -> tuple[Shared, dict[str, Any]]:
    """The shared text sample of a run (see the module doc): one row per text with ``win``
    ('early'/'late'), ``step``, ``group_id``, ``rid`` (row id) and ``words`` (list of words)."""
    groups = shared_groups(con, context, run_id)
    per_step, _ = query(
        con,
        "SELECT step, count(*) FROM __run_groups__ WHERE step IS NOT NULL GROUP BY step "
        "ORDER BY step",
        groups,
    )
    half = max(1, sample_groups // 2)
    steps = [s for s, _ in per_step]
    counts = np.array([c for _, c in per_step], dtype=np.int64)
    info: dict[str, Any] = {
        "sample_groups": sample_groups,
        "seed": seed,
        "max_chars": max_chars,
        "run_groups": int(counts.sum()),
        "run_steps": len(steps),
    }
    if not steps:
        late_first = early_last = None
    else:
        from_end = np.cumsum(counts[::-1])
        late_first_i = (
            len(steps) - 1 - int(np.searchsorted(from_end, half))
        )  # first step of the late window
        late_first_i = max(late_first_i, 0)
        late_first = steps[late_first_i]
        early_last_i = min(int(np.searchsorted(np.cumsum(counts), half)), late_first_i - 1)
        early_last = steps[early_last_i] if early_last_i >= 0 else None
    info.update({"early_last_step": early_last, "late_first_step": late_first})
    key = f"text_sample_{int(sample_groups)}_{int(seed)}_{int(max_chars)}"
    parts = []
    for win, cond in (
        ("early", f"step <= {early_last}" if early_last is not None else None),
        ("late", f"step >= {late_first}" if late_first is not None else None),
    ):
        if cond is None:
            continue
        # IN over (step, group_id) keeps the step range prunable (a SEMI JOIN was 5x slower)
        parts.append(
            f"SELECT '{win}' AS win, step, group_id, text FROM _rollouts "
            f"WHERE run_id = {sql_string(run_id)} AND phase = 'train' AND {cond} AND text IS NOT NULL "
            f"AND (step, group_id) IN (SELECT (step, group_id) FROM {groups.alias} WHERE {cond} "
            f"ORDER BY hash(step, group_id, {int(seed)}) LIMIT {half})"
        )
    if not parts:
        parts.append(
            "SELECT 'late' AS win, NULL::BIGINT AS step, NULL AS group_id, NULL AS text WHERE false"
        )
    # split at spaces after turning tabs and line breaks into spaces (plain replace and split are
    # ~3x faster than a regex split)
    lowered = f"lower(left(text, {int(max_chars)}))"
    for ch in (9, 10, 13):
        lowered = f"replace({lowered}, chr({ch}), ' ')"
    sql = (
        f"SELECT win, step, group_id, row_number() OVER () AS rid, list_filter(string_split("
        f"{lowered}, ' '), lambda w: w <> '') AS words FROM (" + " UNION ALL ".join(parts) + ")"
    )
    # the groups table is named by its alias inside: materialized with the temp table substituted
    shown = f"WITH {groups.alias} AS ({groups.sql}) {sql}"
    executed = sql.replace(f"FROM {groups.alias} WHERE", f"FROM {groups.table} WHERE")
    return context.shared(con, run_id, "text_sample", executed, key=key, shown=shown), info


def ngrams_sql(words: str, n: int) -> str:
    """SQL: the list of hashed word ``n``-grams of the list ``words`` (64-bit ``hash`` of the n
    words: a collision merges two n-grams with probability ~1e-19 per pair)."""
    parts = ", ".join(f"{words}[i + {k}]" if k else f"{words}[i]" for k in range(n))
    return f"list_transform(range(1, greatest(len({words}) - {n - 2}, 1)), lambda i: hash({parts}))"


@dataclass(frozen=True)
class DiversityThresholds:
    ngram: int = help_field(
        2, "distinct-n and the pairwise similarity use word n-grams of this size"
    )
    collapse_similarity: float = help_field(
        0.8, "a group whose texts have at least this mean pairwise Jaccard similarity is collapsed"
    )
    warn_fraction: float = help_field(0.3, "collapsed share of late groups above this: warn")
    high_fraction: float = help_field(0.6, "collapsed share of late groups above this: high")
    max_texts_per_group: int = help_field(
        16, "pairs are formed among at most this many texts of a group"
    )
    min_words: int = help_field(
        3,
        "groups whose texts average fewer words than this are not judged: a one- or "
        "two-word answer (a number) has no template to collapse onto",
    )
    sample_groups: int = help_field(2000, "groups whose texts are read (half early, half late)")
    seed: int = help_field(0, "seed of the group order within a boundary step")
    max_chars: int = help_field(4000, "texts are cut to this many characters")

    def __post_init__(self) -> None:
        owner = "behavior.diversity"
        if self.min_words < 1:
            raise ValueError(f"need min_words >= 1 in {owner}, actually: {self.min_words}")
        check_range(owner, "collapse_similarity", self.collapse_similarity, 0.0, 1.0)
        check_range(owner, "warn_fraction", self.warn_fraction, 0.0, 1.0)
        check_range(owner, "high_fraction", self.high_fraction, 0.0, 1.0)
        check_order(owner, warn_fraction=self.warn_fraction, high_fraction=self.high_fraction)
        if (
            self.ngram < 1
            or self.max_texts_per_group < 2
            or self.sample_groups < 1
            or self.max_chars < 1
        ):
            raise ValueError(
                f"need ngram >= 1, max_texts_per_group >= 2, sample_groups >= 1, max_chars >= 1 "
                f"in {owner}"
            )


@register_analyzer
class Diversity(Analyzer):
    """Within-group diversity of the texts: template collapse when a group's texts are near-identical.

    Per sampled group with at least two texts: distinct-n (distinct word n-grams / all word
    n-grams over its texts) and the mean pairwise Jaccard similarity of the texts' n-gram sets
    (two empty texts: 1). A group is collapsed when that similarity is at least
    ``collapse_similarity``; the collapsed share of the late groups decides. Groups whose texts
    average fewer than ``min_words`` words are left out (short answers: module doc); their count
    is in the evidence (``short_groups``), and with none left nothing is reported.
    """

    name = "behavior.diversity"
    layer = "behavior"
    codes = ("behavior.template_collapse",)
    thresholds_type = DiversityThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        with using(context) as ctx:
            if is_gym_run(con, run_id, ctx):
                return []
            texts, info = text_sample(
                con, ctx, run_id, sample_groups=t.sample_groups, seed=t.seed, max_chars=t.max_chars
            )
            grams = ngrams_sql("words", t.ngram)
            rows, shown = query(
                con,
                (
                    "WITH t0 AS (SELECT win, step, group_id, rid, words FROM __text_sample__ QUALIFY row_number() "
                    f"OVER (PARTITION BY win, step, group_id ORDER BY rid) <= {int(t.max_texts_per_group)}), "
                    "t1 AS (SELECT * FROM t0 QUALIFY avg(len(words)) OVER (PARTITION BY win, step, group_id) "
                    f">= {int(t.min_words)}), "
                    "g AS MATERIALIZED (SELECT win, dense_rank() OVER (ORDER BY win, step, group_id) AS gk, rid, "
                    f"{grams} AS grams FROM t1), "
                    "x AS MATERIALIZED (SELECT DISTINCT gk, rid, unnest(grams) AS x FROM g), "
                    "kx AS (SELECT gk, rid, count(*) AS k FROM x GROUP BY ALL), "
                    "k AS (SELECT g.win, g.gk, g.rid, coalesce(kx.k, 0) AS k, len(g.grams) AS n "
                    "FROM g LEFT JOIN kx USING (gk, rid)), "
                    "i AS (SELECT a.gk, a.rid AS ra, b.rid AS rb, count(*) AS inter FROM x AS a JOIN x AS b "
                    "ON a.gk = b.gk AND a.x = b.x AND a.rid < b.rid GROUP BY ALL), "
                    "p AS (SELECT a.win, a.gk, CASE WHEN a.k + b.k = 0 THEN 1.0 ELSE coalesce(i.inter, 0) / "
                    "(a.k + b.k - coalesce(i.inter, 0)) END AS jaccard FROM k AS a JOIN k AS b ON a.gk = b.gk AND "
                    "a.rid < b.rid LEFT JOIN i ON i.gk = a.gk AND i.ra = a.rid AND i.rb = b.rid), "
                    "s AS (SELECT win, gk, avg(jaccard) AS similarity FROM p GROUP BY ALL), "
                    "d AS (SELECT gk, count(DISTINCT x) AS grams_distinct FROM x GROUP BY gk), "
                    "n AS (SELECT gk, sum(n) AS grams FROM k GROUP BY gk) "
                    "SELECT s.win, count(*) AS groups, avg(s.similarity) AS mean_similarity, "
                    f"count(*) FILTER (WHERE s.similarity >= {float(t.collapse_similarity)!r}) AS collapsed, "
                    "avg(coalesce(d.grams_distinct, 0) / nullif(n.grams, 0)) AS mean_distinct_n "
                    "FROM s LEFT JOIN d USING (gk) JOIN n USING (gk) GROUP BY s.win ORDER BY s.win"
                ),
                texts,
            )
            by = {
                win: {
                    "groups": n,
                    "mean_similarity": sim,
                    "collapsed_groups": c,
                    "collapsed_fraction": c / n,
                    "mean_distinct_n": dn,
                }
                for win, n, sim, c, dn in rows
                if n
            }
            late = by.get("late")
            if not late or late["collapsed_fraction"] <= t.warn_fraction:
                return []
            short, shown_short = query(
                con,
                (
                    "SELECT win, count(*) FILTER (WHERE words < "
                    + str(int(t.min_words))
                    + ") AS short FROM ("
                    "SELECT win, step, group_id, avg(len(words)) AS words FROM __text_sample__ GROUP BY ALL) "
                    "GROUP BY win ORDER BY win"
                ),
                texts,
            )
        for win, n_short in short:
            if win in by:
                by[win]["short_groups"] = n_short
        frac = late["collapsed_fraction"]
        early = by.get("early")
        contrast = f" (early steps: {early['collapsed_fraction']:.0%})" if early else ""
        # texts shorter than one n-gram have no n-grams: distinct-n is undefined (None)
        distinct = late["mean_distinct_n"]
        distinct_text = (
            f"{distinct:.2f}" if distinct is not None else "n/a (texts shorter than one n-gram)"
        )
        return [
            self.finding(
                "behavior.template_collapse",
                "high" if frac > t.high_fraction else "warn",
                f"{frac:.0%} of sampled late groups are near-identical (mean pairwise similarity "
                f"{late['mean_similarity']:.2f}, distinct-{t.ngram} {distinct_text}){contrast}",
                run_id=run_id,
                version=version,
                evidence={
                    "late": late,
                    "early": early,
                    "ngram": t.ngram,
                    "collapse_similarity": t.collapse_similarity,
                    "min_words": t.min_words,
                    "warn": t.warn_fraction,
                    "high": t.high_fraction,
                    "sample": info,
                    "query": shown,
                    "query_short": shown_short,
                },
                suggestion="the samples of a prompt have collapsed onto one template, so their rewards are "
                "equal and carry no signal: raise the temperature, filter zero-variance groups "
                "(StdGroupFilter), or penalize duplicated samples",
                skills=["StdGroupFilter"],
            )
        ]


@dataclass(frozen=True)
class RepetitionThresholds:
    ngram: int = help_field(3, "repeats are counted over word n-grams of this size")
    repeated_fraction: float = help_field(
        0.5, "a text is repetitive when at least this share of its n-grams are repeats"
    )
    min_words: int = help_field(20, "shorter texts are not judged")
    warn_fraction: float = help_field(0.1, "repetitive share of late texts above this: warn")
    high_fraction: float = help_field(0.3, "repetitive share of late texts above this: high")
    sample_groups: int = help_field(2000, "groups whose texts are read (half early, half late)")
    seed: int = help_field(0, "seed of the group order within a boundary step")
    max_chars: int = help_field(4000, "texts are cut to this many characters")

    def __post_init__(self) -> None:
        owner = "behavior.repetition"
        for name in ("repeated_fraction", "warn_fraction", "high_fraction"):
            check_range(owner, name, getattr(self, name), 0.0, 1.0)
        check_order(owner, warn_fraction=self.warn_fraction, high_fraction=self.high_fraction)
        if self.ngram < 1 or self.min_words < 1 or self.sample_groups < 1 or self.max_chars < 1:
            raise ValueError(f"need ngram, min_words, sample_groups and max_chars >= 1 in {owner}")


@register_analyzer
class Repetition(Analyzer):
    """Repeated n-grams within a text (degenerate loops).

    Per sampled text of at least ``min_words`` words: 1 - distinct n-grams / n-grams. A text is
    repetitive at ``repeated_fraction`` or more; the repetitive share of the late texts decides.
    """

    name = "behavior.repetition"
    layer = "behavior"
    codes = ("behavior.repetition_high",)
    thresholds_type = RepetitionThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        with using(context) as ctx:
            if is_gym_run(con, run_id, ctx):
                return []
            texts, info = text_sample(
                con, ctx, run_id, sample_groups=t.sample_groups, seed=t.seed, max_chars=t.max_chars
            )
            grams = ngrams_sql("words", t.ngram)
            rows, shown = query(
                con,
                (
                    "WITH r AS (SELECT win, 1 - count(DISTINCT x) / count(x) AS repeated FROM (SELECT win, rid, "
                    f"unnest({grams}) AS x FROM __text_sample__ WHERE len(words) >= {int(t.min_words)}) "
                    "GROUP BY win, rid HAVING count(x) > 0) "
                    f"SELECT win, count(*) AS texts, count(*) FILTER (WHERE repeated >= {float(t.repeated_fraction)!r}) "
                    "AS repetitive, avg(repeated) AS mean_repeated FROM r GROUP BY win ORDER BY win"
                ),
                texts,
            )
        by = {
            win: {
                "texts": n,
                "repetitive_texts": k,
                "repetitive_fraction": k / n,
                "mean_repeated_fraction": m,
            }
            for win, n, k, m in rows
            if n
        }
        late = by.get("late")
        if not late or late["repetitive_fraction"] <= t.warn_fraction:
            return []
        frac = late["repetitive_fraction"]
        early = by.get("early")
        contrast = f" (early steps: {early['repetitive_fraction']:.0%})" if early else ""
        return [
            self.finding(
                "behavior.repetition_high",
                "high" if frac > t.high_fraction else "warn",
                f"{frac:.0%} of sampled late texts repeat themselves (>= {t.repeated_fraction:.0%} of their "
                f"{t.ngram}-grams are repeats){contrast}",
                run_id=run_id,
                version=version,
                evidence={
                    "late": late,
                    "early": early,
                    "ngram": t.ngram,
                    "repeated_fraction": t.repeated_fraction,
                    "min_words": t.min_words,
                    "warn": t.warn_fraction,
                    "high": t.high_fraction,
                    "sample": info,
                    "query": shown,
                },
                suggestion="completions loop on the same phrases until the length limit: penalize overlong "
                "outputs (OverlongPenalty), add a repetition penalty at sampling, check the stop tokens",
                skills=["OverlongPenalty"],
            )
        ]


# ----------------------------------------------------------------------------- git history
GIT_HISTORY_SUBCOMMANDS = (
    "log",
    "show",
    "reflog",
    "rev-list",
    "cat-file",
    "whatchanged",
    "shortlog",
    "blame",
    "fsck",
    "ls-tree",
)


def git_history_pattern(subcommands: tuple[str, ...] = GIT_HISTORY_SUBCOMMANDS) -> str:
    """The RE2 pattern of a git history command (module doc); group 4 is the subcommand."""
    subs = "|".join(re.escape(s) for s in subcommands)
    return (
        r"(^|[\s;&|(`'\"])(\S*/)?git((?:\s+-[Cc]\s+\S+|\s+--?[A-Za-z][^\s]*)*)\s+("
        + subs
        + r")(\s|$|[;&|)`'\"])"
    )


@dataclass(frozen=True)
class GitHistoryThresholds:
    high_fraction: float = help_field(
        0.05, "share of rollouts with a git history command at or above this: high (any: warn)"
    )
    subcommands: tuple[str, ...] = help_field(
        GIT_HISTORY_SUBCOMMANDS, "git subcommands that read history"
    )

    def __post_init__(self) -> None:
        check_range("behavior.git_history", "high_fraction", self.high_fraction, 0.0, 1.0)
        if not self.subcommands:
            raise ValueError("subcommands must not be empty in behavior.git_history")


@register_analyzer
class GitHistory(Analyzer):
    """Trajectories that read git history (``git log``, ``git show``, ...): a way to find answers or
    hidden files in earlier commits. Any: warn; at least ``high_fraction`` of rollouts: high."""

    name = "behavior.git_history"
    layer = "behavior"
    codes = ("behavior.git_history_commands",)
    thresholds_type = GitHistoryThresholds

    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        t = self.thresholds
        pattern = sql_string(git_history_pattern(t.subcommands))
        rows, shown = query(
            con,
            (
                "SELECT count(*) AS rollouts, count(*) FILTER (WHERE len(commands) > 0 AND "
                f"list_bool_or(list_transform(commands, lambda c: regexp_matches(c, {pattern})))) AS git_history_rollouts "
                f"FROM _rollouts WHERE {_run(run_id)}"
            ),
        )
        total, hits = rows[0]
        if not hits:
            return []
        subs, shown_subs = query(
            con,
            (
                f"SELECT regexp_extract(c, {pattern}, 4) AS subcommand, count(*) AS commands, "
                "left(min(c), 200) AS example FROM (SELECT unnest(commands) AS c FROM _rollouts "
                f"WHERE {_run(run_id)} AND len(commands) > 0) WHERE regexp_matches(c, {pattern}) "
                "GROUP BY subcommand ORDER BY commands DESC, subcommand"
            ),
        )
        frac = hits / total
        names = ", ".join(f"git {s}" for s, _, _ in subs[:4])
        return [
            self.finding(
                "behavior.git_history_commands",
                "high" if frac >= t.high_fraction else "warn",
                f"{hits:,} rollouts ({frac:.1%}) read git history: {names}",
                run_id=run_id,
                version=version,
                evidence={
                    "rollouts": total,
                    "git_history_rollouts": hits,
                    "fraction": frac,
                    "subcommands": {s: n for s, n, _ in subs},
                    "examples": [e for _, _, e in subs[:3]],
                    "high_fraction": t.high_fraction,
                    "query": shown,
                    "query_subcommands": shown_subs,
                },
                suggestion="the policy looks for answers in the repository's history: check that no solution "
                "or hidden data is reachable from the candidate's tree, and run the audit",
            )
        ]


# ----------------------------------------------------------------------------- reward vs eval
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
        rows, shown_parent = query(
            con,
            (
                "WITH s AS (SELECT run_id, step, avg(reward) AS m, count(reward) AS n FROM _rollouts "
                f"WHERE run_id IN {_in(parents)} AND {_TRAIN} AND isfinite(reward) AND step IS NOT NULL GROUP BY ALL), "
                "r AS (SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY step DESC) AS i, "
                "count(*) OVER (PARTITION BY run_id) AS k FROM s) "
                f"SELECT sum(m * n) / sum(n) AS late_reward, count(DISTINCT run_id) AS runs FROM r "
                f"WHERE i <= greatest(1, ceil(k * {float(t.window_fraction)!r}))"
            ),
        )
        parent_late, parent_runs = rows[0]
        if parent_late is None or not (
            late - parent_late >= t.min_effect * scale and late > parent_late
        ):
            return []
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
                f"WHERE run_id IN {_in(everyone)} AND phase = 'eval' AND score IS NOT NULL "
                "GROUP BY split, task_id HAVING run IS NOT NULL AND parent IS NOT NULL ORDER BY split, task_id"
            ),
        )
        by_split: dict[str, list[tuple[float, float]]] = {}
        for split, _task, a, b in scores:
            by_split.setdefault(split, []).append((a, b))
        split = next((s for s in t.splits if len(by_split.get(s, ())) >= t.min_tasks), None)
        if split is None:
            return []
        pairs = np.array(by_split[split], dtype=np.float64)
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


_HACK_ADVICE = (
    "the policy earns more training reward but scores worse on held-out evaluation: read the "
    "highest-reward rollouts for exploits of the verifier (format tricks, special cases, leaked "
    "answers) and tighten the reward before training further"
)


# ----------------------------------------------------------------------------- gym
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
        t = self.thresholds
        if not is_gym_run(con, run_id, context):
            return []
        rows, shown = query(
            con,
            (
                "SELECT group_id AS env, count(*) AS episodes, avg(reward) FILTER (WHERE isfinite(reward)) AS mean_return, "
                "avg(length) AS mean_length, quantile_cont(length, [0.1, 0.5, 0.9]) AS length_p10_p50_p90, "
                f"count(*) FILTER (WHERE finish_reason IN {_in(t.failure_reasons)}) AS failed, "
                "histogram(coalesce(finish_reason, '(none)')) AS reasons "
                f"FROM _rollouts WHERE {_run(run_id)} GROUP BY group_id ORDER BY group_id"
            ),
        )
        if not rows:
            return []
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
        worst = max(envs, key=lambda e: envs[e]["failed_fraction"])
        frac = envs[worst]["failed_fraction"]
        if frac > t.failure_warn:
            out.append(
                self.finding(
                    "behavior.gym_failures_high",
                    "high" if frac > t.failure_high else "warn",
                    f"{frac:.0%} of {worst} episodes failed ({envs[worst]['failed']} of {envs[worst]['episodes']}: "
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
            )
        acts, shown_acts = query(
            con,
            (
                "SELECT env, action, sum(n) AS n, count(DISTINCT episode) AS episodes FROM (SELECT group_id AS env, "
                "task_id AS episode, split_part(pair, ':', 1) AS action, TRY_CAST(split_part(pair, ':', 2) AS BIGINT) AS n "
                "FROM (SELECT group_id, task_id, unnest(string_split(regexp_extract(text, "
                "'actions ((?:-?[0-9]+:[0-9]+ ?)+)', 1), ' ')) AS pair "
                f"FROM _rollouts WHERE {_run(run_id)} AND text LIKE '%actions %') WHERE pair <> '') "
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
        if entropy:
            low = min(entropy, key=entropy.get)
            if entropy[low] < t.action_entropy_min:
                out.append(
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
                )
        return out
