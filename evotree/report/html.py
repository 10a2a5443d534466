"""The HTML report: one self-contained file (inline CSS, plots inline, no network).

With Plotly installed (the ``report`` extra) the plots are interactive: plotly.js is embedded once,
inline, and each figure is a JSON data block that one small script draws; the static PNG of each
plot stays in ``<noscript>`` (and replaces a figure that fails to draw). Without Plotly the PNGs
are shown, as data URIs, with a note.

A Content-Security-Policy allows only inline styles, ``data:`` images and the page's own inline
scripts by their hashes (plotly.js, the drawing script, and one that marks on ``<body>`` whether
every image decoded, which the browser test reads), so nothing in the file can load anything or
run anything else. All text is escaped.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape
from pathlib import Path
from typing import Any

from evotree.report.collect import LAYER_ORDER
from evotree.report.model import ReportData
from evotree.report.plots import PLOTS, plot_order, plot_titles

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:980px;color:#1f2328;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.verdict{font-size:1.1em;padding:.6em .9em;border-radius:6px;background:#f6f8fa;border-left:5px solid #8c959f}
.verdict.better{border-color:#1a7f37}.verdict.worse,.verdict.blocked{border-color:#cf222e}.verdict.need_more_seeds{border-color:#9a6700}
.na{color:#6e7781;font-style:italic}.sev-critical{color:#a40e26;font-weight:600}.sev-high{color:#bc4c00;font-weight:600}
.sev-warn{color:#9a6700}.sev-info{color:#57606a}ul.tree,ul.tree ul{list-style:none;padding-left:1.4em;margin:0}
ul.tree li{position:relative;margin:.15em 0}ul.tree ul li:before{content:"└─";position:absolute;left:-1.3em;color:#8c959f}
.node{display:inline-block;padding:1px 6px;border:1px solid #d0d7de;border-radius:4px}
.node.subject{border:2px solid #1f6feb}.node.dead{color:#8c959f;text-decoration:line-through}
.plots img{max-width:100%;display:block;margin:.6em 0;border:1px solid #eaeef2}code{background:#f6f8fa;padding:0 3px}
.plots figure{margin:.8em 0;border:1px solid #eaeef2;border-radius:6px;padding:4px}.iplot{width:100%;min-height:380px}
"""

# Marks on <body> whether every image decoded: read back by the headless-browser test.
_SCRIPT = ("window.addEventListener('load',function(){var i=Array.prototype.slice.call(document.images);"
           "document.body.setAttribute('data-images',String(i.length));"
           "document.body.setAttribute('data-images-ok',String(i.every(function(x){"
           "return x.complete&&x.naturalWidth>0;})));});")
# Draws each interactive figure from its JSON data block; a figure that fails shows its PNG (the
# <noscript> beside it). Marks on <body> how many were drawn and how many failed.
_PLOTLY_INIT = ("(function(){var n=0,f=0,d=document.querySelectorAll('script[type=\"application/json\"][data-plot]');"
                "for(var i=0;i<d.length;i++){var el=document.getElementById('iplot-'+d[i].getAttribute('data-plot'));"
                "try{var fig=JSON.parse(d[i].textContent);Plotly.newPlot(el,fig.data,fig.layout,"
                "{responsive:true,displaylogo:false});n++;}catch(e){f++;var ns=el&&el.nextElementSibling;"
                "if(ns&&ns.tagName==='NOSCRIPT'){el.innerHTML=ns.textContent;}}}"
                "document.body.setAttribute('data-plots',String(n));document.body.setAttribute('data-plots-failed',"
                "String(f));})();")


def _e(value: Any) -> str:
    """Text for HTML: escaped, and its control characters (bidi overrides, escapes) written out visibly."""
    from evotree.core.text import escape_control

    return escape(escape_control(value), quote=True)


def _num(value: Any, fmt: str = ".3f") -> str:
    return "—" if value is None else format(value, fmt)


def _na(section: dict[str, Any]) -> str:
    return f'<p class="na">Not available: {_e(section.get("reason"))}</p>'


def _scores(data: ReportData) -> str:
    s = data.scores
    if not s.get("available"):
        return _na(s)
    lo, hi = s["ci"]
    level = round(100 * s.get("confidence", 1 - 2 * s["alpha"]))
    rows = [
        f"<tr><th>{_e(s['split'])}</th><th>{_e(s['a'])}</th><th>{_e(s['b'])}</th><th>Δ</th>"
        f"<th>{level}% CI</th><th>one-sided p</th></tr>",
        f'<tr id="score-row"><td>mean score</td><td class="num">{s["mean_a"]:.3f}</td>'
        f'<td class="num">{s["mean_b"]:.3f}</td><td class="num" id="delta">{s["delta"]:+.3f}</td>'
        f'<td>[{lo:+.3f}, {hi:+.3f}]</td><td class="num">{s["p_value"]:.3g} ({_e(s["test"])})</td></tr>',
        f'<tr><td>runs (seeds)</td><td class="num">{s["n_seeds"][0]}</td><td class="num">{s["n_seeds"][1]}</td>'
        '<td></td><td></td><td></td></tr>',
        f'<tr><td>tasks</td><td class="num">{s["n_tasks"]}</td><td class="num">{s["n_tasks"]}</td>'
        '<td></td><td></td><td></td></tr>',
    ]
    if s.get("normalized"):  # [eval.normalize]: beside the raw means (the statistics stay raw)
        na, nb = (s["normalized"].get(k) for k in ("a", "b"))
        shown = ["—" if v is None else f"{v:.3f}" for v in (na, nb)]
        delta = "" if na is None or nb is None else f"{nb - na:+.3f}"
        rows.insert(2, f'<tr id="normalized-row"><td>normalized</td><td class="num">{shown[0]}</td>'
                       f'<td class="num">{shown[1]}</td><td class="num">{delta}</td><td></td><td></td></tr>')
    if s.get("iqm"):
        iq = s["iqm"]
        rows.append(f'<tr id="iqm-row"><td>IQM</td><td class="num">{iq["a"]:.3f}</td><td class="num">{iq["b"]:.3f}</td>'
                    f'<td class="num">{iq["b"] - iq["a"]:+.3f}</td><td></td><td></td></tr>')
    extra = (f"<p>Decision at threshold {s['threshold']:+g}: <b>{_e(s['decision'])}</b> (needs p &lt; "
             f"{s.get('p_threshold', s['alpha']):.3g}; {_e(s['ci_method'])}).</p>")
    if s.get("statement"):
        extra += f"<p id=\"statement\">{_e(s['statement'])}.</p>"
    for note in s.get("notes") or []:
        extra += f"<p class=\"na\">{_e(note)}</p>"
    if s.get("caveat"):
        extra += f"<p class=\"na\">{_e(s['caveat'])}</p>"
    if data.per_task.get("available"):
        c = data.per_task["counts"]
        extra += f"<p>Per task: {c['improved']} improved, {c['worse']} worse, {c['unchanged']} unchanged.</p>"
    return f'<table id="scores">{"".join(rows)}</table>{extra}'


def _findings(data: ReportData) -> str:
    f = data.findings
    if not f.get("available"):
        return _na(f)
    if not f["total"]:
        return "<p>No findings: every analyzer passed.</p>"
    parts = [f"<p>{f['total']} findings; worst: <b>{_e(f['worst'])}</b>.</p>"]
    for layer in [*LAYER_ORDER, *sorted(set(f["by_layer"]) - set(LAYER_ORDER))]:
        items = f["by_layer"].get(layer)
        if not items:
            continue
        from evotree.diagnostics.diagnose import aggregate_findings

        first: dict[str, dict[str, Any]] = {}
        for item in items:
            first.setdefault(item["code"], item)
        rows = ""
        for row in aggregate_findings(items):  # one row per code, with the runs it came from
            runs = ", ".join(row["runs"]) or "version"
            per_run = "".join(f"<li>{_e(d.get('run_id') or 'version')}: {_e(d.get('severity'))} — {_e(d.get('title'))}</li>"
                              for d in row["detail"])
            detail = (f"<details><summary>{_e(row['title'])}</summary><ul>{per_run}</ul></details>"
                      if row["count"] > 1 else _e(row["title"]))
            rows += (f'<tr class="finding" data-code="{_e(row["code"])}"><td class="sev-{_e(row["severity"])}">'
                     f"{_e(row['severity'])}</td><td><code>{_e(row['code'])}</code></td>"
                     f"<td>{_e(runs)} ({row['count']})</td><td>{detail}</td>"
                     f"<td>{_e(first[row['code']].get('suggestion'))}</td></tr>")
        severe = any(i.get("severity") in ("high", "critical") for i in items)
        parts.append(f"<details{' open' if severe else ''}><summary><b>{_e(layer)}</b> — {len(items)} finding(s) "
                     f"of {len(first)} kind(s)</summary><table class=\"findings\" data-layer=\"{_e(layer)}\">"
                     f"<tr><th>severity</th><th>code</th><th>runs</th><th>finding</th><th>suggestion</th></tr>{rows}"
                     "</table></details>")
    return "".join(parts)


def _audit(data: ReportData) -> str:
    a = data.audit
    if not a.get("available"):
        return _na(a)
    items = "".join(f"<li>{_e(i.get('severity'))} <code>{_e(i.get('code'))}</code>: {_e(i.get('title'))}</li>"
                    for i in a.get("findings") or [] if isinstance(i, dict))
    return (f"<p><b>{'passed' if a['passed'] else 'failed'}</b> (source: {_e(a['source'])}). Raw score "
            f"{_num(a.get('raw_score'))}, leak-adjusted {_num(a.get('leak_adjusted_score'))}.</p>"
            + (f"<ul>{items}</ul>" if items else ""))


def _gates(data: ReportData) -> str:
    g = data.gates
    if not g.get("available"):
        return f'<p class="na">{_e(g.get("reason"))}</p>'
    items = "".join(f'<li class="gate" data-status="{_e(x.get("status"))}"><b>{_e(x.get("name"))}</b> '
                    f"({_e(x.get('status'))}): {_e(x.get('summary'))}</li>" for x in g.get("gates") or [])
    return f"<p>Gates: <b>{'passed' if g.get('passed') else 'not passed'}</b>.</p><ul>{items}</ul>"


def _tree(data: ReportData) -> str:
    nodes = {n["id"]: n for n in data.lineage["nodes"]}
    children: dict[str, list[str]] = {n: [] for n in nodes}
    roots = []
    for node in data.lineage["nodes"]:
        if node["parents"]:
            children[node["parents"][0]].append(node["id"])  # first parent places it; merges noted
        else:
            roots.append(node["id"])

    def item(node_id: str) -> str:
        n = nodes[node_id]
        classes = ["node"] + (["subject"] if n["subject"] else []) + (["dead"] if n["status"] in ("abandoned", "failed") else [])
        score = f" {n['score']:.3f}" if n.get("score") is not None else ""
        merged = f" (merges {', '.join(_e(p) for p in n['parents'][1:])})" if len(n["parents"]) > 1 else ""
        label = (f'<span class="{" ".join(classes)}" data-version="{_e(node_id)}" title="{_e(n["hypothesis"])}">'
                 f"{_e(node_id)}{' ★' if n['champion'] else ''} · {_e(n['status'])}{score}</span>{merged}")
        kids = "".join(item(c) for c in children[node_id])
        return f"<li>{label}{f'<ul>{kids}</ul>' if kids else ''}</li>"

    return f'<ul class="tree" id="tree">{"".join(item(r) for r in roots)}</ul>'


def _json_block(text: str) -> str:
    """JSON safe inside a <script> data block: no ``</script>``, no HTML comment openers."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _plots(data: ReportData, plots: dict[str, str], figures: dict[str, str] | None, note: str | None) -> str:
    if not plots and not figures:
        return '<p class="na">No plots: no curve or comparison data.</p>'
    figures = figures or {}
    titles = plot_titles(data)
    parts_names: list[str] = []
    parts = [f'<p class="na" id="plots-note">{_e(note)}</p>'] if note else []
    for name in plot_order(data, set(plots) | set(figures)):
        if name not in PLOTS and not any(n not in PLOTS for n in parts_names):
            parts.append('<h3 id="signals-plots">Recorded train signals</h3>')
        parts_names.append(name)
        img = ""
        if name in plots:
            encoded = base64.b64encode(Path(plots[name]).read_bytes()).decode("ascii")
            img = f'<img id="plot-{_e(name)}" alt="{_e(titles.get(name, name))}" src="data:image/png;base64,{encoded}">'
        if name in figures:
            parts.append(f'<figure data-plot="{_e(name)}"><div class="iplot" id="iplot-{_e(name)}"></div>'
                         f'{f"<noscript>{img}</noscript>" if img else ""}</figure>'
                         f'<script type="application/json" data-plot="{_e(name)}">{_json_block(figures[name])}</script>')
        else:
            parts.append(img)
    return f'<div class="plots">{"".join(parts)}</div>'


def _signals(data: ReportData) -> str:
    """Every recorded train signal, by group (the headline first): last value per version, range, steps."""
    signals = (data.curves.get("signals") or {}) if data.curves.get("available") else {}
    groups = signals.get("groups") or []
    if not groups:
        return '<p class="na">No train signals recorded.</p>'
    versions = [v for v in (data.against, data.version) if v] if data.against != data.version else [data.version]
    headline = signals.get("headline")
    head = "".join(f"<th>{_e(v)}: last (min–max, steps)</th>" for v in versions)
    rows = ""
    for group in groups:
        for metric in group["metrics"]:
            cells = ""
            for version in versions:
                s = (signals.get("summary", {}).get(metric) or {}).get(version)
                cells += ('<td class="num">—</td>' if not s else
                          f'<td class="num">{s["last"]:.4g} ({s["min"]:.4g}–{s["max"]:.4g}, {s["steps"]})</td>')
            rows += (f'<tr class="signal" data-metric="{_e(metric)}" data-group="{_e(group["group"])}">'
                     f'<td>{_e(group["group"])}</td><td><code>{"★ " if metric == headline else ""}{_e(metric)}</code>'
                     f"</td>{cells}</tr>")
    note = (f'<p class="na">Headline: {_e(headline)} ({_e(signals.get("headline_source"))}).</p>' if headline
            else f'<p class="na">{_e(signals.get("headline_source"))}.</p>')
    more = (f'<p class="na">{signals["left_out"]} more signal(s) left out; <code>evotree export</code> has them '
            "all.</p>" if signals.get("left_out") else "")
    return (f'<table id="signals"><tr><th>group</th><th>signal</th>{head}</tr>{rows}</table>{note}{more}')


def _interactive(data: ReportData, interactive: bool) -> tuple[dict[str, str] | None, str | None]:
    """The Plotly figures (name -> JSON), or None and why the plots are static."""
    if not interactive:
        return None, None
    from evotree.report.interactive import figures, plotly_available

    if not plotly_available():
        return None, ("Static plots: Plotly is not installed, so the plots are not interactive "
                      "(pip install 'evotree-rl[report]').")
    try:
        return figures(data), None
    except Exception as exc:  # noqa: BLE001 - an optional view must not cost the report
        return None, f"Static plots: the interactive plots could not be built ({type(exc).__name__}: {exc})."


def _diff(data: ReportData) -> str:
    """What changed against the compared version (``evotree diff``), collapsed."""
    d = data.recipe_diff or {}
    if not d.get("available"):
        return ""
    import json as _json

    def cell(value: Any) -> str:
        return "—" if value is None else _e(value if isinstance(value, str) else _json.dumps(value, default=str))

    params, files = d.get("params") or [], d.get("files") or []
    rows = "".join(f"<tr><td>{_e(p['path'])}</td><td><code>{_e(p['param'])}</code></td><td>{cell(p['a'])}</td>"
                   f"<td>{cell(p['b'])}</td></tr>" for p in params[:100])
    file_rows = "".join(f"<tr><td>{_e(f['path'])}</td><td>{_e(f['status'])}</td>"
                        f"<td class=\"num\">{_e(f.get('additions', ''))}</td><td class=\"num\">{_e(f.get('deletions', ''))}"
                        "</td></tr>" for f in files[:100])
    return (f'<details id="recipe-diff"><summary>What changed ({_e(d["a"])} → {_e(d["b"])}): {len(params)} '
            f'parameter(s), {len(files)} file(s)</summary>'
            + (f"<table><tr><th>file</th><th>parameter</th><th>{_e(d['a'])}</th><th>{_e(d['b'])}</th></tr>{rows}</table>"
               if params else "") +
            (f"<table><tr><th>file</th><th>change</th><th>+</th><th>−</th></tr>{file_rows}</table>" if files else "")
            + "</details>")


def _hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def render_html(data: ReportData, plots: dict[str, str], *, interactive: bool = True) -> str:
    """The report as one HTML document; ``plots`` (name -> PNG path) are embedded as data URIs.

    ``interactive``: draw the plots with Plotly when it is installed (plotly.js inline, once), the
    PNGs kept as the fallback; otherwise, or when Plotly is missing, the PNGs with a note."""
    figures, note = _interactive(data, interactive)
    scripts = [_SCRIPT]
    if figures:
        from evotree.report.interactive import plotly_js

        scripts = [plotly_js(), _PLOTLY_INIT, _SCRIPT]
    csp = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
           f"script-src {' '.join(_hash(x) for x in scripts)}")
    v = data.verdict
    subject = data.subject
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>evotree report: {_e(data.version)}</title><style>{_CSS}</style></head>
<body data-version="{_e(data.version)}">
{f'<p class="verdict fail" id="sandbox-warning">{_e(data.sandbox_warning)}</p>' if data.sandbox_warning else ''}
<h1>evotree report: {_e(data.version)}</h1>
<p class="verdict {_e(v["status"])}" id="verdict" data-status="{_e(v["status"])}">{_e(v['line'])}</p>
{''.join(f'<p>{_e(n)}</p>' for n in v.get('notes') or [])}
<p>Hypothesis: <span id="hypothesis">{_e(subject['hypothesis'])}</span><br>Branch <code>{_e(subject['branch'])}</code>,
status {_e(subject['status'])}, by {_e(subject['created_by'])}; against {_e(data.against)}.</p>
<h2>Scores</h2>{_scores(data)}
<h2>Plots</h2>{_plots(data, plots, figures, note)}
<h2>Signals</h2>{_signals(data)}
{_diff(data)}
<h2>Findings</h2><div id="findings">{_findings(data)}</div>
<h2>Audit</h2><div id="audit">{_audit(data)}</div>
<h2>Gates</h2><div id="gates">{_gates(data)}</div>
<h2>Tree</h2>{_tree(data)}
<p class="na">Generated {_e(data.generated_at)} by evotree.</p>
{"".join(f"<script>{x}</script>" for x in scripts)}
</body></html>
"""
