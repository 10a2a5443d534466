"""The report's data model and error: plain data, no rendering."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from evotree.core.errors import EvotreeError

__all__ = [
    "MARKER_PREFIX",
    "REPORT_SCHEMA_VERSION",
    "ReportData",
    "ReportError",
    "marker",
    "section_unavailable",
]

REPORT_SCHEMA_VERSION = 1
#: Start of the hidden HTML comment that identifies evotree's PR comment for a version.
MARKER_PREFIX = "<!-- evotree-report"


def marker(version: str) -> str:
    """The hidden marker of ``version``'s report comment: a CI job finds and updates it."""
    return f"{MARKER_PREFIX} version={version} -->"


class ReportError(EvotreeError):
    """The report cannot be written or posted (exit 34)."""

    exit_code = 34
    code = "report_error"


def section_unavailable(reason: str) -> dict[str, Any]:
    """A section that could not be filled, with the reason shown in its place."""
    return {"available": False, "reason": reason}


@dataclass
class ReportData:
    """Everything a report shows, as JSON-safe data (schema: ``report.schema.json``).

    Each section is a dict with ``available``; an unavailable one carries ``reason`` instead of
    its content, so a missing audit or gate never hides the rest of the report.
    """

    version: str
    against: str | None
    generated_at: str
    verdict: dict[str, Any]
    subject: dict[str, Any]
    scores: dict[str, Any]
    findings: dict[str, Any]
    audit: dict[str, Any]
    gates: dict[str, Any]
    lineage: dict[str, Any]
    curves: dict[str, Any]
    per_task: dict[str, Any]
    plots: dict[str, str] = field(default_factory=dict)
    #: one line when phases ran (or would run) without the sandbox: the first line of every report
    sandbox_warning: str | None = None
    #: what changed between ``against`` and ``version``: parameters and files (evotree diff)
    recipe_diff: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["v"] = REPORT_SCHEMA_VERSION
        return out
