"""Signal analyzers of GRPO-style groups: dead groups and solve rates (group-based runs only).

Registered in the order of :mod:`evotree.diagnostics.signal`'s table; the layer's module doc says
when a run counts as group-based.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

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
from evotree.diagnostics.signal_series import is_group_run, shared_groups, using
from evotree.diagnostics.thresholds import help_field, rate_finding
from evotree.harness.compaction import sql_string

__all__ = [
    "DeadGroups",
    "DeadGroupsThresholds",
    "SolveRates",
    "SolveRatesThresholds",
]


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
        with using(context) as ctx:
            if not is_group_run(con, run_id, ctx):
                return []
            groups = shared_groups(con, ctx, run_id)
            counts, shown = self._counts(con, groups)
            total, dead = counts[0], counts[1]
            if not total or dead / total <= self.thresholds.warn_ratio:
                return []
            values, shown_values = self._dead_values(con, groups)
            filtered, shown_filter = _group_filter_drops(con, run_id)
        evidence = self._evidence(counts, values, shown, shown_values)
        if filtered:
            evidence["filtered_by"] = {name: int(n or 0) for name, n in filtered}
            evidence["query_filter"] = shown_filter
        return self._unsolved(evidence, filtered, run_id, version) + self._solved(
            evidence, run_id, version
        )

    def _counts(self, con: Any, groups: Shared) -> tuple[tuple[int, ...], str]:
        """(groups, dead, solved dead, single-sample, late groups, late dead, late solved dead)
        over the groups with a finite reward, and the query."""
        t = self.thresholds
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
        return rows[0], shown

    def _dead_values(self, con: Any, groups: Shared) -> tuple[list[tuple[Any, ...]], str]:
        """The five most common rewards of dead groups (reward, groups), and the query."""
        eps = repr(float(self.thresholds.std_epsilon))
        return query(
            con,
            (
                f"SELECT round(mean, 4) AS reward, count(*) AS groups FROM __run_groups__ WHERE n > 0 AND sd < {eps} "
                "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5"
            ),
            groups,
        )

    def _evidence(
        self, counts: tuple[int, ...], values: list[tuple[Any, ...]], shown: str, shown_values: str
    ) -> dict[str, Any]:
        """The findings' evidence: every count and ratio, the thresholds and the queries."""
        t = self.thresholds
        total, dead, solved_dead, single, late_groups, late_dead, late_solved = counts
        unsolved_dead = dead - solved_dead
        late_unsolved = late_dead - late_solved
        return {
            "dead_ratio": dead / total,
            "dead_groups": dead,
            "groups": total,
            "unsolved_dead_groups": unsolved_dead,
            "unsolved_dead_ratio": unsolved_dead / total,
            "solved_dead_groups": solved_dead,
            "solved_dead_ratio": solved_dead / total,
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

    def _unsolved(
        self,
        evidence: dict[str, Any],
        filtered: list[tuple[Any, ...]],
        run_id: str,
        version: str | None,
    ) -> list[Finding]:
        """``signal.dead_groups_high``; ``filtered``: the group filters that already dropped them."""
        t = self.thresholds
        ratio = evidence["unsolved_dead_ratio"]
        if not ratio > t.warn_ratio:
            return []
        title = (
            f"{ratio:.0%} of groups are dead and unsolved (reward std < {t.std_epsilon:g}, "
            f"reward below {t.solved_reward:g}): {evidence['unsolved_dead_groups']:,} of "
            f"{evidence['groups']:,}"
        )
        if filtered:
            filters = ", ".join(name for name, _ in filtered)
            return [
                self.finding(
                    "signal.dead_groups_high",
                    "warn",
                    f"{title}; {filters} kept them out of the loss",
                    run_id=run_id,
                    version=version,
                    evidence=evidence,
                    suggestion=f"{filters} already gives these groups zero weight, so they cost generation, not "
                    "learning: refill the batch (its max_resample_batches parameter, DAPO's dynamic "
                    "sampling), more samples per group, partial credit, or easier tasks in the pool",
                    skills=[],
                )
            ]
        return [
            self.finding(
                "signal.dead_groups_high",
                "critical" if ratio > t.critical_ratio else "warn",
                title,
                run_id=run_id,
                version=version,
                evidence=evidence,
                suggestion="groups whose samples all get the same low reward give GRPO zero advantage: drop "
                "them (StdGroupFilter), give partial credit (PartialPassReward) or move to easier "
                "tasks; more samples per group also help",
                skills=["StdGroupFilter"],
            )
        ]

    def _solved(self, evidence: dict[str, Any], run_id: str, version: str | None) -> list[Finding]:
        """``signal.dead_groups_solved``: groups every sample solves (progress, not a fault)."""
        t = self.thresholds
        ratio = evidence["solved_dead_ratio"]
        if not ratio > t.warn_ratio:
            return []
        return [
            self.finding(
                "signal.dead_groups_solved",
                "warn" if ratio > t.critical_ratio else "info",
                f"{ratio:.0%} of groups are solved by every sample (reward >= {t.solved_reward:g}, "
                f"std < {t.std_epsilon:g}): {evidence['solved_dead_groups']:,} of {evidence['groups']:,}",
                run_id=run_id,
                version=version,
                evidence=evidence,
                suggestion="the policy has learnt these prompts, so they carry no more signal: that is "
                "progress, not a broken reward. To keep learning, give it harder prompts (a "
                "curriculum, or a harder task pool) and judge the gain on validation",
            )
        ]


#: Skills (skills/catalog.py) that drop zero-variance groups from the loss and record
#: ``skill/<name>/dropped`` signals.
_GROUP_FILTERS = ("StdGroupFilter", "DualLevelFilter")


def _group_filter_drops(con: Any, run_id: str) -> tuple[list[tuple[Any, ...]], str]:
    """(skill, dropped) per group filter the skills seam (evotree.harness.trl) recorded, and the
    query: dead groups those filters dropped were already kept out of the loss; what is left is
    the generation they cost."""
    return query(
        con,
        (
            "SELECT split_part(metric, '/', 2) AS skill, sum(value) AS dropped FROM _signals "
            f"WHERE run_id = {sql_string(run_id)} AND metric IN ("
            + ", ".join(f"'skill/{name}/dropped'" for name in _GROUP_FILTERS)
            + ") GROUP BY 1 ORDER BY 1"
        ),
    )


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
        return out + rate_finding(
            self,
            "signal.none_solved_high",
            frac,
            warn=t.none_solved_warn,
            high=t.none_solved_high,
            title=f"{frac:.0%} of groups are solved by no sample ({none_solved:,} of {total:,})",
            run_id=run_id,
            version=version,
            evidence={**evidence, "threshold": t.none_solved_warn, "high": t.none_solved_high},
            suggestion="most prompts are out of reach: give partial credit (PartialPassReward) or a "
            "shaping term (AuxRewardTerm), use easier tasks, or more samples per group",
            skills=["PartialPassReward", "AuxRewardTerm"],
        )
