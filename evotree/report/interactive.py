"""Interactive plots of the HTML report (Plotly), built from the same data as the static PNGs.

The scores plot shows each run's (seed's) mean score per version and the one comparison's Δ with
its CI, exactly as :mod:`evotree.report.collect` took them from ``compare`` (no second interval is
computed here); the reward curve is smoothed with :func:`evotree.report.plots.smooth` and banded by
its seeds' range; the per-task Δ is shown per environment when the task ids carry one (``ENV#i``).

Plotly is part of the optional ``report`` extra: :func:`plotly_available` says whether it can be
imported, and the HTML falls back to the static PNGs with a note when it cannot. Figures are
returned as JSON (``figure_json``): the HTML embeds them as data blocks and plotly.js once, inline,
so the file loads nothing from the network.

The figures use only the trace types of :data:`TRACE_TYPES` (lines, points, error bars, filled
bands: ``scatter``; bars: ``bar``), so the HTML inlines plotly.js's *basic* partial bundle (1.2 MB)
rather than the full one (4.8 MB) where the install fetched it (``scripts/fetch-plotly-basic``: from
the npm registry into ``<venv>/share/evotree/``, pinned by :data:`BUNDLE_SHA256`; nothing fetched is
in the repository); elsewhere the ``plotly`` package's full bundle is inlined. A figure with another
type is refused here, not left undrawn in the browser. A small template of their own (a white
layout) keeps each figure's JSON small: plotly's named templates carry every trace type's defaults.
Each group of recorded train signals (:mod:`evotree.report.signals`) is one figure, a panel per
metric, named ``signals-<group>``.
"""

from __future__ import annotations

import json
import os
import sys
from html import escape
from pathlib import Path
from typing import Any

from evotree.report.model import ReportData
from evotree.report.plots import PLOTS, smooth
from evotree.core.text import escape_control

__all__ = ["BUNDLE", "BUNDLE_SHA256", "TRACE_TYPES", "figures", "plotly_available", "plotly_js"]

_HEIGHT = 380
_PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")
#: the trace types the figures use: all in plotly.js's basic partial bundle
TRACE_TYPES = ("scatter", "bar")
#: plotly.js's basic partial bundle (scatter, bar, pie), fetched at install time (scripts/fetch-plotly-basic)
BUNDLE = Path(
    os.environ.get("EVOTREE_PLOTLY_BUNDLE")
    or Path(sys.prefix) / "share" / "evotree" / "plotly-basic.min.js"
)
#: the one bundle used: plotly.js-basic-dist-min 4.1.1 (the plotly 7.1 Python package's plotly.js release)
BUNDLE_SHA256 = "99784e3abfb07b142a15e521a439e6d9addceadb3f79553fd24c72774f0649ba"
_GRID = {
    "gridcolor": "#ebf0f8",
    "linecolor": "#ebf0f8",
    "zerolinecolor": "#ebf0f8",
    "automargin": True,
}
_TEMPLATE = {
    "layout": {
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"color": "#2a3f5f"},
        "colorway": list(_PALETTE),
        "xaxis": _GRID,
        "yaxis": _GRID,
    }
}


def plotly_available() -> bool:
    try:
        import plotly.graph_objects  # noqa: F401
        import plotly.offline  # noqa: F401
    except ImportError:
        return False
    return True


def plotly_js() -> str:
    """plotly.js for the HTML: the basic partial bundle the install fetched (:data:`BUNDLE`, used only
    when its sha256 is the pinned one); else the full bundle of the ``plotly`` package. Neither
    needs the network when a report is written."""
    import hashlib

    try:
        data = BUNDLE.read_bytes()
    except OSError:
        data = b""
    if data and hashlib.sha256(data).hexdigest() == BUNDLE_SHA256:
        return data.decode("utf-8")
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _t(value: Any) -> str:
    """Text Plotly draws: its pseudo-HTML (links, tags) escaped, so a label is only text."""

    return escape(escape_control(value), quote=True)


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _layout(go: Any, title: str, **extra: Any) -> Any:
    settings: dict[str, Any] = {
        "title": {"text": _t(title), "font": {"size": 14}},
        "height": _HEIGHT,
        "template": _TEMPLATE,
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "hovermode": "closest",
        "legend": {"orientation": "h", "y": -0.18},
    }
    return go.Layout(**{**settings, **extra})


def _scores(go: Any, data: ReportData) -> Any:
    from plotly.subplots import make_subplots

    s = data.scores
    lo, hi = s["ci"]
    level = round(100 * s.get("confidence", 0.95))
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.68, 0.32],
        horizontal_spacing=0.14,
        subplot_titles=[_t("Mean score per run (seed)"), _t(f"Δ {s['b']} − {s['a']}, {level}% CI")],
    )
    _run_points(go, fig, s)
    _delta_point(go, fig, s, level)
    fig.update_layout(
        _layout(
            go,
            f"{s['split']}: Δ {s['delta']:+.3f}, {level}% CI [{lo:+.3f}, {hi:+.3f}], "
            f"p {s['p_value']:.3g}",
        )
    )
    fig.update_yaxes(title_text="mean score", row=1, col=1)
    fig.update_xaxes(
        tickvals=[0, 1],
        ticktext=[
            _t(f"{s['a']} ({len(s['run_means']['a'])} runs)"),
            _t(f"{s['b']} ({len(s['run_means']['b'])} runs)"),
        ],
        range=[-0.6, 1.6],
        row=1,
        col=1,
    )
    fig.update_yaxes(title_text="Δ", zeroline=True, row=1, col=2)
    return fig


def _run_points(go: Any, fig: Any, s: dict[str, Any]) -> None:
    """The left panel: each run's mean score as a point, and each side's mean as a short bar."""
    for i, side in enumerate(("a", "b")):
        values = list(s["run_means"][side])
        name = str(s[side])
        color = _PALETTE[i]
        offsets = [
            i + (k - (len(values) - 1) / 2) * min(0.08, 0.5 / max(1, len(values)))
            for k in range(len(values))
        ]
        fig.add_trace(
            go.Scatter(
                x=offsets,
                y=values,
                mode="markers",
                name=_t(name),
                marker={"color": color, "size": 8, "opacity": 0.85},
                hovertemplate=_t(name) + " run %{pointNumber}: %{y:.4f}<extra></extra>",
                showlegend=False,
            ),
            row=1,
            col=1,
        )
        mean = s["mean_a"] if side == "a" else s["mean_b"]  # the comparison's, as in the table
        if mean is not None:
            fig.add_trace(
                go.Scatter(
                    x=[i - 0.3, i + 0.3],
                    y=[mean, mean],
                    mode="lines",
                    line={"color": color, "width": 3},
                    hoverinfo="skip",
                    showlegend=False,
                ),
                row=1,
                col=1,
            )


def _delta_point(go: Any, fig: Any, s: dict[str, Any], level: int) -> None:
    """The right panel: the difference with its confidence interval, and the zero line."""
    lo, hi = s["ci"]
    fig.add_trace(
        go.Scatter(
            x=[_t(f"{s['b']} − {s['a']}")],
            y=[s["delta"]],
            mode="markers",
            marker={"size": 11, "color": "#1f2328"},
            error_y={
                "type": "data",
                "symmetric": False,
                "array": [hi - s["delta"]],
                "arrayminus": [s["delta"] - lo],
                "thickness": 2,
                "width": 10,
            },
            hovertemplate=f"Δ %{{y:+.4f}}<br>{level}% CI [{lo:+.4f}, {hi:+.4f}]<br>one-sided p {s['p_value']:.3g}"
            "<extra></extra>",
            showlegend=False,
        ),
        row=1,
        col=2,
    )
    fig.add_hline(y=0.0, line={"color": "#8c959f", "width": 1, "dash": "dot"}, row=1, col=2)


def _reward(go: Any, data: ReportData, series: dict[str, list[list[float]]], ylabel: str) -> Any:
    runs = data.curves.get("reward_runs") or {}
    fig = go.Figure(
        layout=_layout(go, PLOTS["reward"][0], xaxis={"title": "step"}, yaxis={"title": _t(ylabel)})
    )
    for i, (version, points) in enumerate(series.items()):
        color = _PALETTE[i % len(_PALETTE)]
        window = max(1, len(points) // 20)  # the PNG's window: the same smoothing
        per_run = runs.get(version) or []
        if len(per_run) > 1:
            smoothed = [
                dict(zip([p[0] for p in r], smooth([p[1] for p in r], window))) for r in per_run
            ]
            steps = sorted(set.intersection(*(set(r) for r in smoothed)))
            if steps:
                fig.add_trace(
                    go.Scatter(
                        x=steps,
                        y=[max(r[x] for r in smoothed) for x in steps],
                        mode="lines",
                        line={"width": 0, "color": color},
                        hoverinfo="skip",
                        showlegend=False,
                        legendgroup=_t(version),
                    )
                )
                fig.add_trace(
                    go.Scatter(
                        x=steps,
                        y=[min(r[x] for r in smoothed) for x in steps],
                        mode="lines",
                        line={"width": 0, "color": color},
                        fill="tonexty",
                        fillcolor=_rgba(color, 0.2),
                        name=_t(f"{version}: seeds' range ({len(per_run)})"),
                        legendgroup=_t(version),
                        hoverinfo="skip",
                    )
                )
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in points],
                y=smooth([p[1] for p in points], window),
                mode="lines",
                line={"color": color, "width": 2},
                name=_t(version),
                legendgroup=_t(version),
                hovertemplate=_t(version) + " step %{x}: %{y:.4f}<extra></extra>",
            )
        )
    return fig


def _curve(go: Any, name: str, series: dict[str, list[list[float]]], ylabel: str) -> Any:
    fig = go.Figure(
        layout=_layout(go, PLOTS[name][0], xaxis={"title": "step"}, yaxis={"title": _t(ylabel)})
    )
    for i, (version, points) in enumerate(series.items()):
        fig.add_trace(
            go.Scatter(
                x=[p[0] for p in points],
                y=[p[1] for p in points],
                mode="lines+markers" if len(points) < 30 else "lines",
                name=_t(version),
                line={"color": _PALETTE[i % len(_PALETTE)]},
                hovertemplate=_t(version) + " step %{x}: %{y:.4f}<extra></extra>",
            )
        )
    return fig


def _task_delta(go: Any, data: ReportData) -> Any:
    groups = data.per_task.get("groups") or []
    if groups:  # per environment
        values = [g["delta"] for g in groups]
        fig = go.Figure(
            layout=_layout(
                go,
                f"Per-environment Δ ({data.version} − {data.against}, {len(groups)} environments)",
                xaxis={"title": "Δ mean score", "zeroline": True},
                yaxis={"autorange": "reversed"},
                height=max(_HEIGHT, 120 + 26 * len(groups)),
                margin={"l": 200, "r": 20, "t": 50, "b": 50},
            )
        )
        fig.add_trace(
            go.Bar(
                x=values,
                y=[_t(g["group"]) for g in groups],
                orientation="h",
                marker={
                    "color": [
                        "#1a7f37" if v > 0 else "#cf222e" if v < 0 else "#8c959f" for v in values
                    ]
                },
                customdata=[[g["a"], g["b"], g["n_tasks"]] for g in groups],
                hovertemplate=(
                    f"%{{y}}: Δ %{{x:+.4f}}<br>{_t(data.against)} %{{customdata[0]:.4f}}, "
                    f"{_t(data.version)} %{{customdata[1]:.4f}}<br>%{{customdata[2]}} tasks<extra></extra>"
                ),
            )
        )
        return fig
    tasks = sorted(data.per_task["tasks"], key=lambda t: t["delta"])
    values = [t["delta"] for t in tasks]
    fig = go.Figure(
        layout=_layout(
            go,
            f"Per-task Δ ({data.version} − {data.against}, {len(tasks)} tasks, sorted)",
            xaxis={"title": "task (sorted by Δ)", "showticklabels": len(tasks) <= 30},
            yaxis={"title": "Δ score", "zeroline": True},
        )
    )
    fig.add_trace(
        go.Bar(
            x=[_t(t["task"]) for t in tasks],
            y=values,
            marker={
                "color": ["#1a7f37" if v > 0 else "#cf222e" if v < 0 else "#8c959f" for v in values]
            },
            customdata=[[t["a"], t["b"]] for t in tasks],
            hovertemplate=(
                f"%{{x}}: Δ %{{y:+.4f}}<br>{_t(data.against)} %{{customdata[0]:.4f}}, "
                f"{_t(data.version)} %{{customdata[1]:.4f}}<extra></extra>"
            ),
        )
    )
    return fig


def _signals(go: Any, signals: dict[str, Any], group: dict[str, Any]) -> Any:
    """A group of recorded signals: one panel per metric (three a row), a line per version."""
    from plotly.subplots import make_subplots

    metrics = group["metrics"]
    headline = signals.get("headline")
    cols = min(3, len(metrics))
    rows = -(-len(metrics) // cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        horizontal_spacing=0.08,
        vertical_spacing=min(0.3, 0.6 / rows),
        subplot_titles=[_t(("★ " if m == headline else "") + m) for m in metrics],
    )
    versions = sorted({v for m in metrics for v in (signals["series"].get(m) or {})})
    for k, metric in enumerate(metrics):
        for version, points in (signals["series"].get(metric) or {}).items():
            color = _PALETTE[versions.index(version) % len(_PALETTE)]
            fig.add_trace(
                go.Scatter(
                    x=[p[0] for p in points],
                    y=[p[1] for p in points],
                    name=_t(version),
                    legendgroup=_t(version),
                    mode="lines+markers" if len(points) < 30 else "lines",
                    line={"color": color},
                    marker={"size": 5},
                    showlegend=k == 0,
                    hovertemplate=_t(f"{version} {metric}") + " step %{x}: %{y:.4g}<extra></extra>",
                ),
                row=k // cols + 1,
                col=k % cols + 1,
            )
    fig.update_layout(
        _layout(
            go,
            f"Train signals: {group['group']} (mean over runs, per step)",
            height=110 + 230 * rows,
        )
    )
    fig.update_annotations(font={"size": 11})
    return fig


def figures(data: ReportData) -> dict[str, str]:
    """name -> the Plotly figure as JSON, for every plot that has data (the names of :data:`PLOTS`,
    and ``signals-<group>`` per group of recorded signals). Raises ValueError on a trace type
    outside :data:`TRACE_TYPES` (the inlined bundle could not draw it)."""
    import plotly.graph_objects as go

    out: dict[str, Any] = {}
    if data.scores.get("available") and data.scores.get("run_means"):
        out["scores"] = _scores(go, data)
    curves = data.curves if data.curves.get("available") else {}
    for name in ("reward", "entropy", "dead_groups"):
        series = curves.get(name) or {}
        if not series:
            continue
        ylabel = PLOTS[name][1]
        if name == "entropy" and curves.get("entropy_metric"):
            ylabel = str(curves["entropy_metric"])
        out[name] = (
            _reward(go, data, series, ylabel)
            if name == "reward"
            else _curve(go, name, series, ylabel)
        )
    if data.per_task.get("available") and data.per_task.get("tasks"):
        out["task_delta"] = _task_delta(go, data)
    signals = curves.get("signals") or {}
    for group in signals.get("groups") or []:
        out[group["plot"]] = _signals(go, signals, group)
    result = {}
    for name, fig in out.items():
        spec = fig.to_plotly_json()
        types = {trace.get("type", "scatter") for trace in spec.get("data") or []}
        if not types <= set(TRACE_TYPES):
            raise ValueError(
                f"the {name} plot uses {sorted(types - set(TRACE_TYPES))}, not in the inlined "
                "plotly.js bundle"
            )
        result[name] = json.dumps(spec, default=_default, separators=(",", ":"))
    return result


def _default(value: Any) -> Any:
    """JSON for what Plotly keeps as numpy values."""
    tolist = getattr(value, "tolist", None)
    if tolist is not None:
        return tolist()
    raise TypeError(f"not JSON: {type(value).__name__}")
