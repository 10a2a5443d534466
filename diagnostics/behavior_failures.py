"""Behavior analyzers of rollouts that end badly: truncated or malformed outputs (finish
reasons), and failed tool calls (with the tools' use)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evotree.diagnostics.findings import (
    AnalysisContext,
    Analyzer,
    Finding,
    check_order,
    check_range,
    query,
    register_analyzer,
)
from evotree.diagnostics.behavior_rollouts import (
    component_names,
    component_value_sql,
    is_gym_run,
    run_train,
    sql_list,
)
from evotree.diagnostics.thresholds import help_field, rate_finding

__all__ = [
    "FinishReasons",
    "FinishReasonsThresholds",
    "Tools",
    "ToolsThresholds",
]


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
            f"FROM _rollouts WHERE {run_train(run_id)}"
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
            f"FROM _rollouts WHERE {run_train(run_id)} AND group_id IS NOT NULL GROUP BY group_id)"
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
        fmt = [f"finish_reason IN {sql_list(t.format_failure_reasons)}"] + [
            f"{component_value_sql(n)} <= 0" for n in fmt_names
        ]
        rows, shown = query(
            con,
            (
                "SELECT finish_reason, count(*) AS n, "
                "count(*) FILTER (WHERE truncated OR finish_reason = 'length') AS truncated, "
                "count(*) FILTER (WHERE truncated IS NOT NULL OR finish_reason IS NOT NULL) AS truncation_known, "
                f"count(*) FILTER (WHERE {' OR '.join(fmt)}) AS format_failed "
                f"FROM _rollouts WHERE {run_train(run_id)} GROUP BY finish_reason ORDER BY n DESC"
            ),
        )
        total = sum(r[1] for r in rows)
        if not total:
            return []
        truncated = sum(r[2] for r in rows)
        known = sum(r[3] for r in rows)
        failed = sum(r[4] for r in rows)
        reasons = {str(r[0]): r[1] for r in rows[:10]}
        out = self._truncation(con, run_id, version, truncated, known, reasons, shown)
        rate = failed / total
        return out + rate_finding(
            self,
            "behavior.format_failure_high",
            rate,
            warn=t.format_warn,
            high=t.format_high,
            title=f"{rate:.0%} of rollouts fail the output format ({failed:,} of {total:,})",
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

    def _truncation(
        self,
        con: Any,
        run_id: str,
        version: str | None,
        truncated: int,
        known: int,
        reasons: dict[str, int],
        shown: str,
    ) -> list[Finding]:
        """``behavior.truncation_rate_high``, naming a larger completion budget when the budget,
        not the policy, cuts the rollouts (:func:`_budget_change`)."""
        t = self.thresholds
        rate = truncated / known if known else 0.0
        if not (known and rate > t.truncation_warn):
            return []
        change = _budget_change(con, run_id, rate, t)
        evidence_change = {"recipe_change": change} if change else {}
        return rate_finding(
            self,
            "behavior.truncation_rate_high",
            rate,
            warn=t.truncation_warn,
            high=t.truncation_high,
            title=f"{rate:.0%} of rollouts are truncated ({truncated:,} of {known:,})",
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
    the failed share of tool-using rollouts (rule in the behavior layer's doc) above ``failure_warn``.
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
        failed = [f"finish_reason IN {sql_list(t.tool_failure_reasons)}"] + [
            f"{component_value_sql(n)} > 0" for n in err_names
        ]
        rows, shown = query(
            con,
            (
                "SELECT count(*) AS rollouts, count(*) FILTER (WHERE len(commands) > 0) AS with_commands, "
                "coalesce(sum(len(commands)), 0) AS commands, "
                f"count(*) FILTER (WHERE len(commands) > 0 AND ({' OR '.join(failed)})) AS failed "
                f"FROM _rollouts WHERE {run_train(run_id)}"
            ),
        )
        total, using_tools, commands, failures = rows[0]
        if not using_tools:
            return []
        programs, shown_programs = query(
            con,
            (
                "SELECT split_part(trim(c), ' ', 1) AS program, count(*) AS calls FROM (SELECT unnest(commands) AS c "
                f"FROM _rollouts WHERE {run_train(run_id)} AND len(commands) > 0) GROUP BY program "
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
        return out + rate_finding(
            self,
            "behavior.tool_failure_high",
            rate,
            warn=t.failure_warn,
            high=t.failure_high,
            title=f"{rate:.0%} of tool-using rollouts fail ({failures:,} of {using_tools:,})",
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
