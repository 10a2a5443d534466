"""The search statistics as Markdown (free of HTML) or plain text, and written to a file."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from evotree.core.errors import UsageError
from evotree.core.text import escape_control
from evotree.report.markdown import escape_md
from evotree.report.model import ReportError
from evotree.report.search_model import SPEND_UNITS, SearchReport, TreeStats, VersionStat, percent

__all__ = ["render_markdown", "render_text", "write_search_report"]


def _num(value: Any, fmt: str = ".4g") -> str:
    return "—" if value is None else format(value, fmt)


def _yes(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "no")


def _rate_text(rate: Mapping[str, Any]) -> str:
    if rate["rate"] is None:
        return "— (0 settings)"
    return f"{100 * rate['rate']:.2f}% ({rate['numerator']}/{rate['denominator']})"


_RATE_LABELS = (
    ("first_attempt_improved", "a later attempt beat the first attempt"),
    ("first_attempt_beats_root", "the first attempt beat the root"),
    ("continued_after_peak", "kept searching after the peak"),
    ("ended_below_peak", "ended below the peak (of those that kept searching)"),
    ("post_peak_regression", "any regression after the peak (of those that kept searching)"),
    ("stop_recommended", "stop recommended"),
    ("champion_is_best", "the champion is the historical best"),
)


def _extra_units(total: Mapping[str, float]) -> list[str]:
    """Units beyond :data:`SPEND_UNITS` that were spent (money, tokens, CPU hours, ...)."""
    return sorted(k for k, v in total.items() if k not in SPEND_UNITS and v)


def _units(spend: Mapping[str, Any]) -> list[str]:
    """The units shown, the share's unit first (the training bill when there is one), agent spend
    (``agent_usd``) right beside it, then runs, steps, CPU seconds and the rest."""
    first = [spend["share_unit"], *(["agent_usd"] if spend["total"].get("agent_usd") else [])]
    rest = [
        u for u in ("runs", "steps", "cpu_seconds", *_extra_units(spend["total"])) if u not in first
    ]
    return [*dict.fromkeys(first), *rest]


def _setting_lines(s: TreeStats, esc: Callable[[Any], str], *, md: bool) -> list[str]:
    hb, fa, pp, sp = s.historical_best, s.first_attempt, s.post_peak, s.spend
    cost = s.cost_per_valid_candidate
    b = (lambda text: f"**{text}**") if md else (lambda text: text)
    lines = [
        f"- {b('recommendation')}: {esc(s.recommendation['line'])}",
        f"- {b('historical best')}: {esc(hb['version'] or '—')} ({_num(hb['score'], '.10g')}"
        + (f", {esc(hb['metric'])}" if hb["metric"] else "")
        + f", {'higher' if s.direction == 'max' else 'lower'} is better)"
        + (
            f"; ties kept on the earlier version: {esc(', '.join(hb['ties']))}"
            if hb["ties"]
            else ""
        )
        + (
            f"; audit-failed, excluded: {esc(', '.join(hb['excluded_audit_failed']))}"
            if hb["excluded_audit_failed"]
            else ""
        ),
        f"- {b('champion')}: {esc(s.champion or '—')}"
        + (
            ""
            if hb["champion_is_best"] is None
            else (
                " (the historical best)" if hb["champion_is_best"] else " (not the historical best)"
            )
        ),
        f"- {b('first attempt')}: {esc(fa['version'] or '—')} ({_num(fa['score'])}); beat the root: "
        f"{_yes(fa['beats_root'])}; a later attempt beat it: {_yes(fa['improved_later'])}"
        + (
            f" (best later: {esc(fa['best_later'])}, {_num(fa['best_later_score'])})"
            if fa["best_later"]
            else ""
        ),
        f"- {b('after the peak')}: {pp['versions_after']} version(s), {pp['valid_after']} valid; "
        f"{len(pp['regressions'])} below the peak by more than {_num(pp['margin'])}"
        + (f" ({esc(', '.join(pp['regressions']))})" if pp["regressions"] else "")
        + f"; worst drop {_num(pp['worst_drop'])}"
        + (f" ({esc(pp['worst_version'])})" if pp["worst_version"] else "")
        + f"; ended below the peak: {_yes(pp['ended_below_peak'])}",
        f"- {b('below the best so far')} (whole search): {len(pp['below_best_so_far'])}"
        + (f" ({esc(', '.join(pp['below_best_so_far']))})" if pp["below_best_so_far"] else ""),
        f"- {b('spend')} (unit of the share: {esc(sp['share_unit'])}): "
        + ", ".join(
            f"{unit} {_num(sp['total'].get(unit))} (after the peak {_num(sp['after_peak'].get(unit))}, "
            f"{percent(sp['after_peak_share'].get(unit))})"
            for unit in _units(sp)
        ),
        f"- {b('cost per valid candidate')}: {cost['valid_candidates']} valid of {cost['candidates']} candidate(s)"
        + (
            ""
            if not cost["per_candidate"]
            else ": "
            + ", ".join(f"{unit} {_num(cost['per_candidate'].get(unit))}" for unit in _units(sp))
        ),
    ]
    if s.normalized is not None:
        n = s.normalized
        lines.append(
            f"- {b('normalized mean of the candidates')}: {_num(n['mean'], '.3f')} over {n['counted']} of "
            f"{n['candidates']}"
            + (
                " (a failed formal run counts 0)"
                if n["failed_as_zero"]
                else " (failed runs left out)"
            )
        )
    if s.interventions:
        lines.append(
            f"- {b('intervention classes')}: "
            + "; ".join(
                f"{esc(k)} {v['versions']} ({v['valid']} valid, mean {_num(v['mean_score'])})"
                for k, v in s.interventions.items()
            )
        )
    lines += [f"- note: {esc(n)}" for n in s.notes]
    return lines


def _version_row(r: VersionStat) -> list[str]:
    mark = (
        "★ peak"
        if r.peak
        else ("↓ regression" if r.regression else ("after peak" if r.after_peak else ""))
    )
    klass = (r.intervention or {}).get("primary") or "—" if r.intervention is not None else "—"
    return [
        str(r.order),
        r.id,
        ",".join(r.parents) or "—",
        r.status,
        _num(r.score, ".10g"),
        r.audit or "—",
        "yes" if r.valid else "no",
        _num(r.drop),
        mark,
        klass,
        _num(r.spend.get("runs"), "g"),
        _num(r.spend.get("cpu_seconds"), ".3g"),
        r.hypothesis,
    ]


_COLUMNS = [
    "#",
    "version",
    "parents",
    "status",
    "score",
    "audit",
    "valid",
    "drop",
    "mark",
    "intervention",
    "runs",
    "cpu s",
    "hypothesis",
]


def render_markdown(report: SearchReport) -> str:
    """The report as Markdown, free of HTML (untrusted text escaped)."""
    out = ["# Search statistics", ""]
    p = report.parameters
    out.append(
        f"Ties within {p['epsilon']:g} (relative) go to the earlier version; regression margin "
        f"{p['margin']:g}; direction {p['direction']}; stop after {p['patience']} version(s) since the "
        f"peak or {100 * p['max_after_peak_share']:.0f}% of the spend after it."
    )
    out.append("")
    if len(report.settings) > 1:
        out += ["## Rates over settings", "", "| rate | value |", "|---|---|"]
        for key, label in _RATE_LABELS:
            out.append(f"| {label} | {_rate_text(report.rates[key])} |")
        for klass, v in (report.rates.get("interventions") or {}).items():
            out.append(
                f"| {escape_md(klass)} interventions | {v['versions']} ({v['valid']} valid, "
                f"mean {_num(v['mean_score'])}) |"
            )
        out.append("")
    for s in report.settings:
        out += [f"## {escape_md(s.setting)}", ""]
        out += _setting_lines(s, escape_md, md=True)
        out += ["", "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        for r in s.versions:
            out.append("| " + " | ".join(escape_md(c, 120) for c in _version_row(r)) + " |")
        out.append("")
    return "\n".join(out)


def render_text(report: SearchReport) -> str:
    """The report as plain text for a terminal (control characters written out visibly)."""

    def esc(value: Any) -> str:
        return escape_control(" ".join(str(value).split()))

    out = []
    if len(report.settings) > 1:
        out.append(f"rates over {len(report.settings)} settings:")
        for key, label in _RATE_LABELS:
            out.append(f"  {label}: {_rate_text(report.rates[key])}")
        for klass, v in (report.rates.get("interventions") or {}).items():
            out.append(
                f"  {esc(klass)} interventions: {v['versions']} ({v['valid']} valid, "
                f"mean {_num(v['mean_score'])})"
            )
        out.append("")
    for s in report.settings:
        out.append(f"{esc(s.setting)}:")
        out += ["  " + line[2:] for line in _setting_lines(s, esc, md=False)]
        rows = [_COLUMNS[:-1]] + [[esc(c) for c in _version_row(r)[:-1]] for r in s.versions]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            out.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def write_search_report(report: SearchReport, out: str, *, fmt: str = "md") -> str:
    """Write the report as Markdown (``md``), plain text (``text``) or JSON (``json``) to ``out`` (a
    file, or a folder that exists or ends in ``/``: ``search-report.<fmt>`` in it), all or nothing;
    returns the path written and records it in ``report.path``."""
    if fmt not in ("md", "text", "json"):
        raise UsageError(
            f"report --tree writes md, text or json, not {fmt!r}",
            fix="--format md or --format json",
        )
    target = Path(out)
    if out.endswith(("/", os.sep)) or target.is_dir():
        target = target / f"search-report.{'txt' if fmt == 'text' else fmt}"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        report.path = str(target)
        body = (
            json.dumps(report.to_dict(), indent=2) + "\n"
            if fmt == "json"
            else render_markdown(report)
            if fmt == "md"
            else render_text(report)
        )
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(body)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        report.path = None
        raise ReportError(
            f"cannot write {target}: {exc.strerror or exc}", fix="choose another --out"
        ) from None
    return str(target)
