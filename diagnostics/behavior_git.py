"""Behavior analyzer of git history commands in the trajectories (``git log``, ``git show``,
...): a way to find answers or hidden files in earlier commits."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evotree.diagnostics.findings import (
    AnalysisContext,
    Analyzer,
    Finding,
    check_range,
    query,
    register_analyzer,
)
from evotree.diagnostics.behavior_rollouts import run_train
from evotree.diagnostics.thresholds import help_field
from evotree.harness.compaction import sql_string

__all__ = [
    "GIT_HISTORY_SUBCOMMANDS",
    "GitHistory",
    "GitHistoryThresholds",
    "git_history_pattern",
]


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
    """The RE2 pattern of a git history command (the behavior layer's doc); group 4 is the subcommand."""
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
                f"FROM _rollouts WHERE {run_train(run_id)}"
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
                f"WHERE {run_train(run_id)} AND len(commands) > 0) WHERE regexp_matches(c, {pattern}) "
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
