"""The HTML report: one self-contained file (inline CSS, plots inline, no network).

With Plotly installed (the ``report`` extra) the plots are interactive: plotly.js is embedded once,
inline, and each figure is a JSON data block that one small script draws; the static PNG of each
plot stays in ``<noscript>`` (and replaces a figure that fails to draw). Without Plotly the PNGs
are shown, as data URIs, with a note.

The document is written by the Jinja2 templates of ``templates/`` (``report.html``, its sections in
``sections.html``, the style sheet ``report.css``) from plain views this module prepares. The
environment escapes every ``{{ }}`` for HTML (autoescape) after writing its control characters out
visibly (:func:`_visible`, its ``finalize`` hook), so a template cannot forget either; only the
inline scripts and the JSON data blocks are marked ``|safe``. Values reach the templates as data:
a ``{{`` in a hypothesis is text, never template syntax.

A Content-Security-Policy allows only inline styles, ``data:`` images and the page's own inline
scripts by their hashes (plotly.js, the drawing script, and one that marks on ``<body>`` whether
every image decoded, which the browser test reads), so nothing in the file can load anything or
run anything else. The template hashes the very strings it embeds.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from evotree.core.text import escape_control
from evotree.diagnostics.diagnose import aggregate_findings
import evotree.report.interactive as plotly_view
from evotree.report.collect import LAYER_ORDER
from evotree.report.model import ReportData
from evotree.report.plots import PLOTS, plot_order, plot_titles

__all__ = ["TEMPLATES", "render_html"]

#: the report's templates (package data)
TEMPLATES = Path(__file__).resolve().parent / "templates"

# Marks on <body> whether every image decoded: read back by the headless-browser test.
_SCRIPT = (
    "window.addEventListener('load',function(){"
    "var i=Array.prototype.slice.call(document.images);"
    "document.body.setAttribute('data-images',String(i.length));"
    "document.body.setAttribute('data-images-ok',String(i.every(function(x){"
    "return x.complete&&x.naturalWidth>0;})));});"
)
# Draws each interactive figure from its JSON data block; a figure that fails shows its PNG (the
# <noscript> beside it). Marks on <body> how many were drawn and how many failed.
_PLOTLY_INIT = (
    "(function(){var n=0,f=0,"
    "d=document.querySelectorAll('script[type=\"application/json\"][data-plot]');"
    "for(var i=0;i<d.length;i++){"
    "var el=document.getElementById('iplot-'+d[i].getAttribute('data-plot'));"
    "try{var fig=JSON.parse(d[i].textContent);Plotly.newPlot(el,fig.data,fig.layout,"
    "{responsive:true,displaylogo:false});n++;}catch(e){f++;var ns=el&&el.nextElementSibling;"
    "if(ns&&ns.tagName==='NOSCRIPT'){el.innerHTML=ns.textContent;}}}"
    "document.body.setAttribute('data-plots',String(n));"
    "document.body.setAttribute('data-plots-failed',"
    "String(f));})();"
)


def _visible(value: Any) -> Any:
    """What every ``{{ }}`` writes, before autoescape: control characters (bidi overrides, terminal
    escapes, newlines) written out visibly, ``None`` as nothing. Markup (what a template marked
    ``|safe``, and the output of its own macros) is written as it is; so text joined to Markup
    (``macro() ~ text``) would be HTML-escaped only: write text as ``{{ text }}`` of its own."""
    return value if isinstance(value, Markup) else escape_control(value)


def _escape(value: Any) -> Markup:
    """``|e`` and ``|escape``: what a plain ``{{ }}`` writes, control characters included (Jinja's
    own filter would escape only ``<>&'"``); Markup stays as it is."""
    return value if isinstance(value, Markup) else Markup(escape(escape_control(value)))


def _forceescape(value: Any) -> Markup:
    """``|forceescape``: ``value`` escaped even when it is Markup, control characters included."""
    return Markup(escape(escape_control(str(value))))


def _fmt(value: Any, spec: str) -> str:
    """A number in Python's format ``spec``; ``—`` for a missing one."""
    return "—" if value is None else format(value, spec)


def _sha256(script: str) -> str:
    """The base64 sha256 of a script, as a Content-Security-Policy source names it."""
    return base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()


_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    finalize=_visible,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENV.filters["fmt"] = _fmt
_ENV.filters["sha256"] = _sha256
_ENV.filters.update(e=_escape, escape=_escape, forceescape=_forceescape)


def _e(value: Any) -> str:
    """``value`` as the report's templates write text: control characters visible, HTML-escaped."""
    return _ENV.from_string("{{ value }}").render(value=value)


def _json_block(text: str) -> str:
    """JSON safe inside a <script> data block: no ``</script>``, no HTML comment openers."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _scores(data: ReportData) -> dict[str, Any]:
    s = data.scores
    if not s.get("available"):
        return {"available": False, "reason": s.get("reason")}
    normalized = None
    if s.get("normalized"):  # [eval.normalize]: beside the raw means (the statistics stay raw)
        na, nb = (s["normalized"].get(k) for k in ("a", "b"))
        normalized = {"a": na, "b": nb, "delta": None if na is None or nb is None else nb - na}
    iqm = s.get("iqm")
    counts = data.per_task["counts"] if data.per_task.get("available") else None
    return {
        "available": True,
        "s": s,
        "lo": s["ci"][0],
        "hi": s["ci"][1],
        "level": round(100 * s.get("confidence", 1 - 2 * s["alpha"])),
        "normalized": normalized,
        "iqm": {"a": iqm["a"], "b": iqm["b"], "delta": iqm["b"] - iqm["a"]} if iqm else None,
        "p_threshold": s.get("p_threshold", s["alpha"]),
        "statement": s.get("statement"),
        "notes": s.get("notes") or [],
        "caveat": s.get("caveat"),
        "per_task": counts,
    }


def _findings(data: ReportData) -> dict[str, Any]:
    """One table per layer (the known layers first), one row per code with the runs it came from."""
    f = data.findings
    if not f.get("available"):
        return {"available": False, "reason": f.get("reason")}
    layers = []
    for layer in [*LAYER_ORDER, *sorted(set(f["by_layer"]) - set(LAYER_ORDER))]:
        found = f["by_layer"].get(layer)
        if not found:
            continue
        first: dict[str, dict[str, Any]] = {}
        for item in found:
            first.setdefault(item["code"], item)
        rows = [
            {
                "code": row["code"],
                "severity": row["severity"],
                "title": row["title"],
                "runs": ", ".join(row["runs"]) or "version",
                "n": row["count"],
                "suggestion": first[row["code"]].get("suggestion"),
                "detail": [
                    {
                        "run": d.get("run_id") or "version",
                        "severity": d.get("severity"),
                        "title": d.get("title"),
                    }
                    for d in row["detail"]
                ]
                if row["count"] > 1
                else [],
            }
            for row in aggregate_findings(found)
        ]
        layers.append(
            {
                "name": layer,
                "n_findings": len(found),
                "n_kinds": len(first),
                "rows": rows,
                "severe": any(i.get("severity") in ("high", "critical") for i in found),
            }
        )
    return {"available": True, "total": f["total"], "worst": f.get("worst"), "layers": layers}


def _audit(data: ReportData) -> dict[str, Any]:
    a = data.audit
    if not a.get("available"):
        return {"available": False, "reason": a.get("reason")}
    return {
        "available": True,
        "passed": a["passed"],
        "source": a["source"],
        "raw_score": a.get("raw_score"),
        "leak_adjusted_score": a.get("leak_adjusted_score"),
        "found": [
            {"severity": i.get("severity"), "code": i.get("code"), "title": i.get("title")}
            for i in a.get("findings") or []
            if isinstance(i, dict)
        ],
    }


def _gates(data: ReportData) -> dict[str, Any]:
    g = data.gates
    if not g.get("available"):
        return {"available": False, "reason": g.get("reason")}
    return {
        "available": True,
        "passed": g.get("passed"),
        "gates": [
            {"name": x.get("name"), "status": x.get("status"), "summary": x.get("summary")}
            for x in g.get("gates") or []
        ],
    }


def _tree(data: ReportData) -> list[dict[str, Any]]:
    """The lineage as nested nodes: a node's first parent places it; merges are noted."""
    views: dict[str, dict[str, Any]] = {}
    for n in data.lineage["nodes"]:
        classes = (
            ["node"]
            + (["subject"] if n["subject"] else [])
            + (["dead"] if n["status"] in ("abandoned", "failed") else [])
        )
        views[n["id"]] = {
            "id": n["id"],
            "classes": " ".join(classes),
            "hypothesis": n["hypothesis"],
            "champion": n["champion"],
            "status": n["status"],
            "score": n.get("score"),
            "merges": ", ".join(n["parents"][1:]),
            "children": [],
        }
    roots = []
    for n in data.lineage["nodes"]:
        if n["parents"]:
            views[n["parents"][0]]["children"].append(views[n["id"]])
        else:
            roots.append(views[n["id"]])
    return roots


def _plots(
    data: ReportData, plots: dict[str, str], figures: dict[str, str] | None, note: str | None
) -> dict[str, Any]:
    """Each plot in the report's order: its PNG (base64), its Plotly JSON (escaped for a data
    block)."""
    figures = figures or {}
    titles = plot_titles(data)
    shown: list[dict[str, Any]] = []
    for name in plot_order(data, set(plots) | set(figures)):
        png = (
            base64.b64encode(Path(plots[name]).read_bytes()).decode("ascii")
            if name in plots
            else None
        )
        shown.append(
            {
                "name": name,
                "title": titles.get(name, name),
                "png": png,
                "figure": _json_block(figures[name]) if name in figures else None,
                # the first plot of the recorded train signals opens their heading
                "signals_heading": name not in PLOTS and all(p["name"] in PLOTS for p in shown),
            }
        )
    return {"any": bool(plots or figures), "note": note, "shown": shown}


def _signals(data: ReportData) -> dict[str, Any]:
    """Every recorded train signal, by group (the headline first): last value per version, range,
    steps."""
    signals = (data.curves.get("signals") or {}) if data.curves.get("available") else {}
    versions = (
        [v for v in (data.against, data.version) if v]
        if data.against != data.version
        else [data.version]
    )
    headline = signals.get("headline")
    summary = signals.get("summary") or {}
    rows = [
        {
            "group": group["group"],
            "metric": metric,
            "headline": metric == headline,
            "cells": [(summary.get(metric) or {}).get(version) for version in versions],
        }
        for group in signals.get("groups") or []
        for metric in group["metrics"]
    ]
    return {
        "rows": rows,
        "versions": versions,
        "headline": headline,
        "headline_source": signals.get("headline_source"),
        "left_out": signals.get("left_out"),
    }


def _diff(data: ReportData) -> dict[str, Any]:
    """What changed against the compared version (``evotree diff``), collapsed."""
    d = data.recipe_diff or {}
    if not d.get("available"):
        return {"available": False}

    def cell(value: Any) -> str:
        return (
            "—"
            if value is None
            else value
            if isinstance(value, str)
            else json.dumps(value, default=str)
        )

    params, files = d.get("params") or [], d.get("files") or []
    return {
        "available": True,
        "a": d["a"],
        "b": d["b"],
        "n_params": len(params),
        "n_files": len(files),
        "params": [
            {"path": p["path"], "param": p["param"], "a": cell(p["a"]), "b": cell(p["b"])}
            for p in params[:100]
        ],
        "files": [
            {
                "path": f["path"],
                "status": f["status"],
                "additions": f.get("additions", ""),
                "deletions": f.get("deletions", ""),
            }
            for f in files[:100]
        ],
    }


def _interactive(data: ReportData, wanted: bool) -> tuple[dict[str, str] | None, str | None]:
    """The Plotly figures (name -> JSON), or None and why the plots are static."""
    if not wanted:
        return None, None
    if not plotly_view.plotly_available():
        return None, (
            "Static plots: Plotly is not installed, so the plots are not interactive "
            "(pip install 'evotree-rl[report]')."
        )
    try:
        return plotly_view.figures(data), None
    except Exception as exc:  # noqa: BLE001 - an optional view must not cost the report
        return (
            None,
            "Static plots: the interactive plots could not be built "
            f"({type(exc).__name__}: {exc}).",
        )


def render_html(data: ReportData, plots: dict[str, str], *, interactive: bool = True) -> str:
    """The report as one HTML document; ``plots`` (name -> PNG path) are embedded as data URIs.

    ``interactive``: draw the plots with Plotly when it is installed (plotly.js inline, once), the
    PNGs kept as the fallback; otherwise, or when Plotly is missing, the PNGs with a note."""
    figures, note = _interactive(data, interactive)
    scripts = [_SCRIPT]
    if figures:
        scripts = [plotly_view.plotly_js(), _PLOTLY_INIT, _SCRIPT]
    verdict = {
        "status": data.verdict["status"],
        "line": data.verdict["line"],
        "notes": data.verdict.get("notes") or [],
    }
    subject = {k: data.subject[k] for k in ("hypothesis", "branch", "status", "created_by")}
    return _ENV.get_template("report.html").render(
        data=data,
        verdict=verdict,
        subject=subject,
        scripts=scripts,
        scores=_scores(data),
        plots=_plots(data, plots, figures, note),
        signals=_signals(data),
        diff=_diff(data),
        findings=_findings(data),
        audit=_audit(data),
        gates=_gates(data),
        tree=_tree(data),
    )
