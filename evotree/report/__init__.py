"""Reports of a version: Markdown for pull requests, one self-contained HTML file for
people, JSON for agents, and the GitHub comment that CI keeps up to date.

:func:`build_report` gathers the evidence (comparison, findings, audit, gates, lineage, curves)
into a :class:`ReportData`; :mod:`.markdown`, :mod:`.html` and :mod:`.plots` render it;
:mod:`.github` posts the Markdown as a pull-request comment found again by a hidden marker;
:mod:`.ci` writes the GitHub Actions workflow. Heavy libraries (numpy, duckdb, matplotlib) are
imported inside the functions that need them.
"""

from __future__ import annotations

from typing import Any

from evotree.report.model import MARKER_PREFIX, ReportData, ReportError, marker

__all__ = ["MARKER_PREFIX", "ReportData", "ReportError", "build_report", "marker", "write_report"]


def __getattr__(name: str) -> Any:  # lazy: importing the package stays cheap
    if name == "build_report":
        from evotree.report.collect import build_report

        return build_report
    if name == "write_report":
        from evotree.report.files import write_report

        return write_report
    raise AttributeError(name)
