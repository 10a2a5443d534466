"""What the trajectory audit found: one :class:`TrajectoryVerdict` per trajectory, and the
findings grouped from them (:func:`findings_from_verdicts`), with their titles and suggestions.

Kept apart from :mod:`evotree.harness.audit.trajectories` (the rules applied step by step) so the
verdict type, its rendering and the grouping read as one thing; the version audit imports them
from here too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evotree.core.findings import Finding, Severity, sort_findings
from evotree.harness.audit.commands import Hit

__all__ = ["HISTORY_CODES", "TrajectoryVerdict", "findings_from_verdicts"]

#: at most this many examples a finding quotes (and unread reasons a verdict lists)
EXAMPLES = 5

#: Codes that count a trajectory as "using git history" for the rate.
HISTORY_CODES = frozenset(
    {
        "audit.git_history_leak",
        "audit.git_internals_read",
        "audit.future_hash",
        "audit.future_content",
    }
)


@dataclass
class TrajectoryVerdict:
    """What the audit found in one trajectory."""

    id: str
    format: str
    source: str | None
    task_id: str | None
    run_id: str | None
    phase: str | None
    steps: int
    hits: list[Hit] = field(default_factory=list)
    cleared: list[dict[str, Any]] = field(
        default_factory=list
    )  # hits dropped by ancestry/provenance
    future_hashes: list[str] = field(default_factory=list)

    @property
    def worst(self) -> Severity | None:
        return max((Severity.parse(h.severity) for h in self.hits), default=None)

    @property
    def flagged(self) -> bool:
        """A hit of severity high or above: the trajectory leaked."""
        worst = self.worst
        return worst is not None and worst >= Severity.HIGH

    @property
    def uses_git_history(self) -> bool:
        return any(h.code in HISTORY_CODES and h.severity != "info" for h in self.hits)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "format": self.format,
            "source": self.source,
            "task_id": self.task_id,
            "run_id": self.run_id,
            "phase": self.phase,
            "steps": self.steps,
            "flagged": self.flagged,
            "uses_git_history": self.uses_git_history,
            "worst": self.worst.label if self.worst is not None else None,
            "hits": [h.to_dict() for h in self.hits],
            "cleared": self.cleared,
            "future_hashes": self.future_hashes,
        }


_TITLES = {
    "audit.git_history_leak": "read git history or references beyond the task's base",
    "audit.git_internals_read": "read git's internals (.git/objects, refs, packed-refs, logs)",
    "audit.future_hash": "saw commits that are not ancestors of the task's base",
    "audit.network_fetch": "fetched from the network",
    "audit.hidden_data_read": "touched hidden data (judge files, hidden tests, eval splits)",
    "audit.test_write": "wrote, moved or deleted tests, conftest.py or sitecustomize",
    "audit.unreadable": "could not be read whole (unknown format, or steps the readers cannot "
    "parse)",
    "audit.future_content": "saw in tool outputs what only the task's future holds (objects, "
    "subjects, tags, lines of future commits)",
}
_SUGGESTIONS = {
    "audit.git_history_leak": "sanitize the task repositories (`evotree audit repo PATH "
    "--sanitize`: only the base commit and its ancestors) and re-run; do not promote on this score",
    "audit.git_internals_read": "sanitize the task repositories and re-run; do not promote on "
    "this score",
    "audit.future_hash": "the task repository holds its own future: sanitize it and re-run",
    "audit.network_fetch": "run without network access; a fetched answer is not a learned one",
    "audit.hidden_data_read": "keep hidden data outside the candidate's reach (judge paths are "
    "exported only to the judge); re-run",
    "audit.test_write": "tests are the judge's: make them read-only or restore them before "
    "judging; re-run",
    "audit.future_content": "the task repository holds its own future: sanitize it (`evotree "
    "audit repo PATH --sanitize`) and re-run; do not promote on this score",
    "audit.unreadable": "convert the file to a format the audit reads (docs/audit.md) or extend "
    "the reader; an unread trajectory is not a clean one",
}


def findings_from_verdicts(
    verdicts: Sequence[TrajectoryVerdict],
    *,
    version: str | None = None,
    totals: dict[str | None, int] | None = None,
) -> list[Finding]:
    """One finding per (code, run): the worst severity, counts, rules and a few examples."""
    groups: dict[tuple[str, str | None], list[tuple[TrajectoryVerdict, Hit]]] = {}
    for v in verdicts:
        for hit in v.hits:
            if hit.severity != "info":
                groups.setdefault((hit.code, v.run_id), []).append((v, hit))
    findings = []
    for (code, run_id), pairs in groups.items():
        worst = max(Severity.parse(h.severity) for _, h in pairs)
        trajs = {v.id for v, _ in pairs}
        high_trajs = {v.id for v, h in pairs if Severity.parse(h.severity) >= Severity.HIGH}
        total = (totals or {}).get(run_id)
        rules = Counter(
            h.rule.split(" (")[0] if code != "audit.git_history_leak" else _rule_key(h)
            for _, h in pairs
        )
        examples = []
        for v, h in pairs:
            if len(examples) >= EXAMPLES:
                break
            if Severity.parse(h.severity) == worst:
                example = {
                    "trajectory": v.id,
                    "task_id": v.task_id,
                    "phase": v.phase,
                    "source": v.source,
                    "command": h.command[:300],
                    "rule": h.rule,
                }
                if h.output:
                    example["output"] = h.output
                examples.append(example)
        count = len(high_trajs) if worst >= Severity.HIGH else len(trajs)
        of = f" of {total}" if total else ""
        title = f"{count}{of} trajector{'y' if count == 1 else 'ies'} {_TITLES.get(code, code)}"
        evidence: dict[str, Any] = {
            "trajectories": count,
            "total": total,
            "rate": (count / total) if total else None,
            "commands": sum(1 for _ in pairs),
            "rules": dict(rules.most_common(10)),
            "examples": examples,
        }
        findings.append(
            Finding(
                layer="audit",
                code=code,
                severity=worst.label,
                title=title,
                evidence=evidence,
                suggestion=_SUGGESTIONS.get(code, ""),
                run_id=run_id,
                version=version,
            )
        )
    return sort_findings(findings)


def _rule_key(hit: Hit) -> str:
    """``git log --all`` / ``git show <rev>`` style key of a git rule."""
    words = hit.rule.split()
    if (
        len(words) >= 3
        and words[0] == "git"
        and (words[2].startswith("-") and words[2] in hit.rule[:40])
    ):
        return " ".join(words[:3])
    if len(words) >= 2 and words[0] == "git":
        return f"git {words[1]}" + (" <rev>" if "revision" in hit.rule else "")
    return hit.rule[:40]
