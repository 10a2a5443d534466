"""The Markdown report: a GitHub pull-request comment.

Text that a candidate controls (hypotheses, finding titles quoting its output) is escaped, so a
version cannot inject HTML, a fake marker or table breaks into its own report.
"""

from __future__ import annotations

import json

from typing import Any

from evotree.report.collect import LAYER_ORDER
from evotree.report.model import ReportData, marker
from evotree.report.plots import PLOTS, plot_order, plot_titles
from evotree.core.text import escape_control
from evotree.diagnostics.diagnose import aggregate_findings

__all__ = [
    "COMMENT_IMAGE_WIDTH",
    "GITHUB_COMMENT_LIMIT",
    "INLINE_PLOTS",
    "escape_md",
    "mermaid",
    "render_markdown",
    "shorten",
]

#: GitHub refuses comment bodies longer than this many characters.
GITHUB_COMMENT_LIMIT = 65536
#: width (px) the comment declares for each plot: two side by side in a GitHub comment
COMMENT_IMAGE_WIDTH = 360
#: the plots shown inline under the verdict, in this order; any other goes under "More plots"
INLINE_PLOTS = ("scores", "reward", "task_delta", "dead_groups")
_SEVERITY_ICON = {"critical": "🟥", "high": "🟧", "warn": "🟨", "info": "⬜"}


def escape_md(text: Any, limit: int = 300) -> str:
    """One line of untrusted text, safe inside Markdown tables and free of HTML; control characters
    (terminal escapes, bidi overrides) are written out visibly (:func:`evotree.core.text.escape_control`)."""

    value = escape_control(" ".join(str(text if text is not None else "").split()))
    if len(value) > limit:
        value = shorten(value, limit)
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("|", "\\|")
        .replace("`", "\\`")
        .replace("[", "\\[")
        .replace("]", "\\]")
    )


def shorten(value: str, limit: int) -> str:
    """``value`` cut to at most ``limit`` characters at a word boundary, with "…" (a single word
    longer than the limit is the only thing cut inside)."""
    if len(value) <= limit:
        return value
    cut = value[: limit - 1]
    if value[limit - 1] != " " and " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:.-(") + "…"


def _num(value: Any, fmt: str = ".3f") -> str:
    return "—" if value is None else format(value, fmt)


def _mermaid_label(node: dict[str, Any]) -> str:
    parts = [node["id"]]
    if node["champion"]:
        parts.append("★")
    parts.append(node["status"])
    if node.get("score") is not None:
        parts.append(f"{node['score']:.3f}")
    return " ".join(parts).replace('"', "#quot;")


def mermaid(lineage: dict[str, Any]) -> str:
    """The lineage as a Mermaid flowchart (GitHub renders ```mermaid blocks)."""
    lines = ["graph TD"]
    ids = {n["id"]: f"n{i}" for i, n in enumerate(lineage["nodes"])}
    for node in lineage["nodes"]:
        lines.append(f'  {ids[node["id"]]}["{_mermaid_label(node)}"]')
    for node in lineage["nodes"]:
        for parent in node["parents"]:
            lines.append(f"  {ids[parent]} --> {ids[node['id']]}")
    for node in lineage["nodes"]:
        if node["subject"]:
            lines.append(f"  style {ids[node['id']]} stroke-width:3px,stroke:#1f6feb")
        elif node["status"] in ("abandoned", "failed"):
            lines.append(f"  style {ids[node['id']]} stroke-dasharray: 4 3,color:#888")
    return "\n".join(lines)


def _scores_table(data: ReportData) -> list[str]:
    s = data.scores
    if not s.get("available"):
        return [f"_Not available: {escape_md(s.get('reason'), 500)}_"]
    a, b = s["a"], s["b"]
    lo, hi = s["ci"]
    level = round(100 * s.get("confidence", 1 - 2 * s["alpha"]))
    seeds_a, seeds_b = s["n_seeds"]
    lines = [
        f"| {s['split']} | {a} | {b} | Δ ({b} − {a}) | {level}% CI | one-sided p |",
        "|---|---:|---:|---:|---|---:|",
        f"| mean score | {s['mean_a']:.3f} | {s['mean_b']:.3f} | {s['delta']:+.3f} | "
        f"[{lo:+.3f}, {hi:+.3f}] | {s['p_value']:.3g} ({s['test']}) |",
        f"| runs (seeds) | {seeds_a} | {seeds_b} | | | |",
        f"| tasks | {s['n_tasks']} | {s['n_tasks']} | | | |",
    ]
    if s.get("normalized"):  # [eval.normalize]: beside the raw means (the statistics stay raw)
        na, nb = (s["normalized"].get(k) for k in ("a", "b"))
        lines.insert(
            3,
            f"| normalized | {_opt(na)} | {_opt(nb)} | "
            f"{'' if na is None or nb is None else f'{nb - na:+.3f}'} | | |",
        )
    if s.get("iqm"):
        iq = s["iqm"]
        lines.append(f"| IQM | {iq['a']:.3f} | {iq['b']:.3f} | {iq['b'] - iq['a']:+.3f} | | |")
    lines.append("")
    lines.append(
        f"Decision at threshold {s['threshold']:+g}: **{s['decision']}** (needs p < "
        f"{s.get('p_threshold', s['alpha']):.3g}; {s['ci_method']})."
    )
    if data.per_task.get("available"):
        c = data.per_task["counts"]
        lines.append(
            f"Per task: {c['improved']} improved, {c['worse']} worse, {c['unchanged']} unchanged."
        )
    notes = [f"{escape_md(s['statement'], 500)}."] if s.get("statement") else []
    notes += [f"- {escape_md(note, 500)}" for note in s.get("notes") or []]
    if s.get("caveat"):
        notes.append(f"- {escape_md(s['caveat'], 500)}")
    for side in ("a", "b"):
        voids = ((s.get("voided") or {}).get(side) or {}).get("voids") or {}
        for run_id, void in sorted(voids.items()):
            notes.append(
                f"- Voided run of {escape_md(s[side], 80)}: {escape_md(run_id, 120)}, by "
                f"{escape_md(void.get('approver'), 120)}: {escape_md(void.get('reason'), 300)} "
                "(in no number above)."
            )
    if notes:
        lines += _collapsed(f"The comparison's statement and notes ({len(notes)})", notes)
    return lines


def _findings_section(data: ReportData) -> list[str]:
    f = data.findings
    if not f.get("available"):
        return [f"_Not available: {escape_md(f.get('reason'), 500)}_"]
    if not f["total"]:
        return ["No findings: every analyzer passed."]
    counts = ", ".join(f"{n} {sev}" for sev, n in sorted(f["counts"].items()))
    lines = [f"{f['total']} findings ({counts}); worst: **{f['worst']}**.", ""]
    for layer in [*LAYER_ORDER, *sorted(set(f["by_layer"]) - set(LAYER_ORDER))]:
        items = f["by_layer"].get(layer)
        if not items:
            continue

        rows = aggregate_findings(items)  # one row per code, with the runs it came from
        lines.append(
            f"<details{' open' if any(i['severity'] in ('high', 'critical') for i in items) else ''}>"
            f"<summary><b>{layer}</b> — {len(items)} finding(s) of {len(rows)} kind(s)</summary>"
        )
        lines.append("")
        lines.append("| severity | code | runs | finding | suggestion |")
        lines.append("|---|---|---|---|---|")
        first = {}
        for item in items:
            first.setdefault(item["code"], item)
        for row in rows:
            item = first[row["code"]]
            skills = (
                f" (skills: {escape_md(', '.join(item.get('skills') or []))})"
                if item.get("skills")
                else ""
            )
            runs = ", ".join(escape_md(r, 80) for r in row["runs"][:4]) + (
                f" +{len(row['runs']) - 4}" if len(row["runs"]) > 4 else ""
            )
            lines.append(
                f"| {_SEVERITY_ICON.get(row['severity'], '')} {row['severity']} | `{escape_md(row['code'])}` "
                f"| {runs or 'version'} ({row['count']}) | {escape_md(row['title'])} | "
                f"{escape_md(item.get('suggestion'), 200)}{skills} |"
            )
        lines.append("")
        lines.append("</details>")
        lines.append("")
    return lines


def _audit_section(data: ReportData) -> list[str]:
    a = data.audit
    if not a.get("available"):
        return [f"_Not available: {escape_md(a.get('reason'), 500)}_"]
    verdict = "✅ passed" if a["passed"] else "❌ failed"
    lines = [
        f"**{verdict}** (source: {escape_md(a['source'])}). Raw score {_num(a.get('raw_score'))}, "
        f"leak-adjusted score {_num(a.get('leak_adjusted_score'))}."
    ]
    for item in a.get("findings") or []:
        if isinstance(item, dict):
            lines.append(
                f"- {escape_md(item.get('severity'))} `{escape_md(item.get('code'))}`: "
                f"{escape_md(item.get('title'))}"
            )
    return lines


def _gates_section(data: ReportData) -> list[str]:
    g = data.gates
    if not g.get("available"):
        return [f"_{escape_md(g.get('reason'), 500)}_"]
    lines = [
        f"Gates: **{'passed' if g.get('passed') else 'not passed'}** (policy from the champion)."
    ]
    icons = {"pass": "✅", "fail": "❌"}
    for gate in g.get("gates") or []:
        lines.append(
            f"- {icons.get(gate.get('status'), '⚪')} {escape_md(gate.get('name'))} ({gate.get('status')}): "
            f"{escape_md(gate.get('summary'), 300)}"
        )
    return lines


def png_size(path: Any) -> tuple[int, int] | None:
    """Width and height of a PNG file from its header, or None."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(24)
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _img(title: str, link: str, size: tuple[int, int] | None) -> str:
    width, height = size or (560, 320)
    shown = min(COMMENT_IMAGE_WIDTH, width)
    return (
        f'<img src="{_attr(link)}" width="{shown}" height="{round(height * shown / width)}" '
        f'alt="{_attr(title)}">'
    )


def _attr(value: str) -> str:
    return (
        str(value)
        .replace("&", "&amp;")
        .replace('"', "&quot;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
    )


def _plots_section(
    data: ReportData,
    images: dict[str, str] | None,
    note: str | None,
    sizes: dict[str, tuple[int, int]] | None,
) -> list[str]:
    """The plots right under the verdict: the main ones inline, two side by side; the rest (and
    the recorded signals' groups) collapsed."""
    if not images:
        return [f"_{note or 'No plots: no curve or comparison data.'}_"]
    sizes = sizes or {}
    titles = plot_titles(data)
    inline = [n for n in INLINE_PLOTS if n in images]
    more = [n for n in plot_order(data, images) if n not in inline]
    lines = [" ".join(_img(titles.get(n, n), images[n], sizes.get(n)) for n in inline)]
    if more:
        lines += [
            "",
            f"<details><summary>More plots ({len(more)})</summary>",
            "",
            " ".join(_img(titles.get(n, n), images[n], sizes.get(n)) for n in more),
            "",
            "</details>",
        ]
    missing = [PLOTS[n][0] for n in PLOTS if n not in images]
    if missing:
        lines += ["", f"<sub>No data for: {', '.join(missing)}.</sub>"]
    return lines


def _collapsed(summary: str, body: list[str], *, open_: bool = False) -> list[str]:
    return [
        "",
        f"<details{' open' if open_ else ''}><summary>{summary}</summary>",
        "",
        *body,
        "",
        "</details>",
    ]


def render_markdown(
    data: ReportData,
    *,
    images: dict[str, str] | None = None,
    images_note: str | None = None,
    limit: int = GITHUB_COMMENT_LIMIT,
    image_sizes: dict[str, tuple[int, int]] | None = None,
) -> str:
    """The report as Markdown: the verdict first, then the plots inline, the scores table, and
    every other section collapsed (``<details>``), so the comment stays short.

    ``images``: plot name -> link (relative to the Markdown file, or a URL where the PNGs were
    published); ``image_sizes``: their pixel sizes (the declared height keeps the aspect); without
    images ``images_note`` says where the plots are. The body is kept under ``limit`` characters
    by dropping finding tables first."""
    warning = [f"> **{escape_md(data.sandbox_warning, 500)}**", ""] if data.sandbox_warning else []
    head = [
        marker(data.version),
        *warning,
        f"## evotree report: {data.version}",
        "",
        f"{data.verdict['icon']} **{escape_md(data.verdict['line'], 500)}**",
    ]
    for note in data.verdict.get("notes") or []:
        head.append(f"- {escape_md(note)}")
    head += ["", *_plots_section(data, images, images_note, image_sizes)]
    subject = data.subject
    scores = [
        "",
        "### Scores",
        "",
        *_scores_table(data),
        "",
        f"Hypothesis: {escape_md(subject['hypothesis'], 300)}  ",
        f"Branch `{escape_md(subject['branch'])}`, status {subject['status']}, by "
        f"{escape_md(subject['created_by'])}, parents: {', '.join(subject['parents']) or '—'}.",
        *_diff_section(data),
        *_signals_section(data),
    ]
    f = data.findings
    summary = "<b>Findings</b>: " + (
        f"{f['total']}, worst {escape_md(f['worst'])}"
        if f.get("available") and f["total"]
        else "none"
        if f.get("available")
        else "not available"
    )
    findings = _collapsed(summary, _findings_section(data))
    rest = _collapsed_rest(data)
    body = "\n".join(head + scores + findings + rest)
    if len(body) > limit:
        short = _collapsed(
            summary,
            [
                "_Finding tables left out to fit the comment size limit; "
                "see the full report (artifact or `evotree report`)._"
            ],
        )
        body = "\n".join(head + scores + short + rest)
    if len(body) > limit:
        body = body[: limit - 80] + "\n\n_…truncated to fit the comment size limit._\n"
    return body


def _collapsed_rest(data: ReportData) -> list[str]:
    """The audit, gates and lineage sections, collapsed (a failed audit open), and the footer."""
    a, g = data.audit, data.gates
    rest = _collapsed(
        "<b>Audit</b>: "
        + (
            ("✅ passed" if a["passed"] else "❌ failed") if a.get("available") else "not available"
        ),
        _audit_section(data),
        open_=bool(a.get("available") and not a.get("passed")),
    )
    rest += _collapsed(
        "<b>Gates</b>: "
        + (
            ("passed" if g.get("passed") else "not passed")
            if g.get("available")
            else "not evaluated"
        ),
        _gates_section(data),
    )
    lineage = ["```mermaid", mermaid(data.lineage), "```"]
    if data.lineage.get("cut"):
        lineage.append(
            f"_Showing the versions around {data.version} of {data.lineage['total_versions']}._"
        )
    rest += _collapsed(
        f"<b>Lineage</b>: {len(data.lineage.get('nodes') or [])} version(s)", lineage
    )
    rest += ["", f"<sub>evotree report · {data.generated_at} · against {data.against}</sub>", ""]
    return rest


def _signals_section(data: ReportData) -> list[str]:
    """Every recorded train signal, by group (the headline first): its last value per version and
    its range, collapsed."""
    signals = (data.curves.get("signals") or {}) if data.curves.get("available") else {}
    groups = signals.get("groups") or []
    if not groups:
        return []
    versions = (
        [v for v in (data.against, data.version) if v]
        if data.against != data.version
        else [data.version]
    )
    headline = signals.get("headline")
    count = sum(len(g["metrics"]) for g in groups)
    lines = [
        "",
        f"<details><summary><b>Signals</b>: {count} recorded in training"
        + (f", headline {escape_md(headline, 80)}" if headline else "")
        + "</summary>",
        "",
        f"| group | signal | {' | '.join(f'{escape_md(v, 40)} last (min–max, steps)' for v in versions)} |",
        f"|---|---|{'---:|' * len(versions)}",
    ]
    for group in groups:
        for metric in group["metrics"]:
            cells = []
            for version in versions:
                s = (signals.get("summary", {}).get(metric) or {}).get(version)
                cells.append(
                    "—"
                    if not s
                    else f"{s['last']:.4g} ({s['min']:.4g}–{s['max']:.4g}, {s['steps']})"
                )
            star = "★ " if metric == headline else ""
            lines.append(
                f"| {escape_md(group['group'], 40)} | {star}`{escape_md(metric, 80)}` | {' | '.join(cells)} |"
            )
    if signals.get("left_out"):
        lines.append(
            f"\n_{signals['left_out']} more signal(s) left out; `evotree export` has them all._"
        )
    lines += ["", "</details>"]
    return lines


def _opt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _diff_section(data: ReportData) -> list[str]:
    """What changed against the compared version (``evotree diff``), collapsed."""
    d = data.recipe_diff or {}
    if not d.get("available"):
        return []
    params, files = d.get("params") or [], d.get("files") or []
    lines = [
        "",
        f"<details><summary><b>What changed</b> ({escape_md(d['a'])} → {escape_md(d['b'])}): "
        f"{len(params)} parameter(s), {len(files)} file(s)</summary>",
        "",
    ]
    if params:
        lines += [
            f"| file | parameter | {escape_md(d['a'])} | {escape_md(d['b'])} |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| {escape_md(p['path'])} | `{escape_md(p['param'])}` | {escape_md(_value(p['a']), 80)} | "
            f"{escape_md(_value(p['b']), 80)} |"
            for p in params[:40]
        ]
        if len(params) > 40:
            lines.append(f"| … {len(params) - 40} more | | | |")
    if files:
        lines += ["", "| file | change | + | − |", "|---|---|---|---|"]
        lines += [
            f"| {escape_md(f['path'])} | {escape_md(f['status'])} | {f.get('additions', '')} | "
            f"{f.get('deletions', '')} |"
            for f in files[:40]
        ]
    lines += ["", "</details>"]
    return lines


def _value(value: Any) -> str:
    return (
        "—"
        if value is None
        else (value if isinstance(value, str) else json.dumps(value, default=str))
    )
