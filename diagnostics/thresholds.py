"""What the analyzers' thresholds share: documented fields, and the finding of a rate that
crossed its warn level.

A thresholds dataclass declares each field with :func:`help_field` (its default and the line
``evotree diagnose --help`` and the harness records show). Many analyzers compare one rate (a
share of rollouts, groups or episodes) with two levels, warn and high: :func:`rate_finding`
builds that finding, or none at or below the warn level.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

from evotree.diagnostics.findings import Analyzer, Finding

__all__ = ["help_field", "rate_finding"]


def help_field(default: Any, text: str) -> Any:
    """A dataclass field with ``default`` and its one-line ``help`` text (in its metadata)."""
    return field(default=default, metadata={"help": text})


def rate_finding(
    analyzer: Analyzer,
    code: str,
    rate: float,
    *,
    warn: float,
    high: float,
    title: str,
    run_id: str,
    version: str | None,
    evidence: Mapping[str, Any],
    suggestion: str,
    skills: Sequence[str] = (),
) -> list[Finding]:
    """``analyzer``'s finding ``code`` for ``rate`` against its levels: none when ``rate`` is at
    most ``warn``, severity high above ``high``, else warn. A list, for ``out += ...``."""
    if not rate > warn:
        return []
    return [
        analyzer.finding(
            code,
            "high" if rate > high else "warn",
            title,
            run_id=run_id,
            version=version,
            evidence=evidence,
            suggestion=suggestion,
            skills=skills,
        )
    ]
