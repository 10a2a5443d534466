"""Interactive plots of the HTML report (Plotly), built from the same data as the static PNGs.

The scores plot shows each run's (seed's) mean score per version and the one comparison's Δ with
its CI, exactly as :mod:`evotree.report.collect` took them from ``compare`` (no second interval is
computed here); the reward curve is smoothed with :func:`evotree.report.plots.smooth` and banded by
its seeds' range; the per-task Δ is shown per environment when the task ids carry one (``ENV#i``).

Plotly is part of the optional ``report`` extra: :func:`plotly_available` says whether it can be
imported, and the HTML falls back to the static PNGs with a note when it cannot. Figures are
returned as JSON (``figure_json``): the HTML embeds them as data blocks and plotly.js once, inline,
so the file loads nothing from the network.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from evotree.report.model import ReportData
from evotree.report.plots import PLOTS, smooth

__all__ = ["figures", "plotly_available", "plotly_js"]

_HEIGHT = 380
_PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860")


def plotly_available() -> bool:
    try:
        import plotly.graph_objects  # noqa: F401
        import plotly.offline  # noqa: F401
    except ImportError:
        return False
    return True


def plotly_js() -> str:
    """plotly.js as shipped inside the Python package (no network)."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _t(value: Any) -> str:
    """Text Plotly draws: its pseudo-HTML (links, tags) escaped, so a label is only text."""
    from evotree.core.text import escape_control

    return escape(escape_control(value), quote=True)


def _rgba(color: str, alpha: float) -> str:
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def _layout(go: Any, title: str, **extra: Any) -> Any:
    settings: dict[str, Any] = {"title": {"text": _t(title), "font": {"size": 14}}, "height": _HEIGHT,
                                "template": "plotly_white", "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
                                "hovermode": "closest", "legend": {"orientation": "h", "y": -0.18}}
    return go.Layout(**{**settings, **extra})


def _scores(go: Any, data: ReportData) -> Any:
    from plotly.subplots import make_subplots

    s = data.scores
    lo, hi = s["ci"]
    level = round(100 * s.get("confidence", 0.95))
    fig = make_subplots(rows=1, cols=2, column_widths=[0.68, 0.32], horizontal_spacing=0.14,
                        subplot_titles=[_t("Mean score per run (seed)"),
                                        _t(f"Δ {s['b']} − {s['a']}, {level}% CI")])
    for i, side in enumerate(("a", "b")):
        values = list(s["run_means"][side])
        name = str(s[side])
        color = _PALETTE[i]
        fig.add_trace(go.Box(y=values, name=_t(name), boxpoints="all", jitter=0.35, pointpos=0, boxmean=True,
                             marker={"color": color, "size": 8}, line={"color": color}, fillcolor=_rgba(color, 0.12),
                             hovertemplate=_t(name) + " run %{pointNumber}: %{y:.4f}<extra></extra>",
                             showlegend=False), row=1, col=1)
    fig.add_trace(go.Scatter(
        x=[_t(f"{s['b']} − {s['a']}")], y=[s["delta"]], mode="markers", marker={"size": 11, "color": "#1f2328"},
        error_y={"type": "data", "symmetric": False, "array": [hi - s["delta"]], "arrayminus": [s["delta"] - lo],
                 "thickness": 2, "width": 10},
        hovertemplate=f"Δ %{{y:+.4f}}<br>{level}% CI [{lo:+.4f}, {hi:+.4f}]<br>one-sided p {s['p_value']:.3g}"
                      "<extra></extra>", showlegend=False), row=1, col=2)
    fig.add_hline(y=0.0, line={"color": "#8c959f", "width": 1, "dash": "dot"}, row=1, col=2)
    fig.update_layout(_layout(go, f"{s['split']}: Δ {s['delta']:+.3f}, {level}% CI [{lo:+.3f}, {hi:+.3f}], "
                                  f"p {s['p_value']:.3g}"))
    fig.update_yaxes(title_text="mean score", row=1, col=1)
    fig.update_yaxes(title_text="Δ", zeroline=True, row=1, col=2)
    return fig


def _reward(go: Any, data: ReportData, series: dict[str, list[list[float]]], ylabel: str) -> Any:
    runs = data.curves.get("reward_runs") or {}
    fig = go.Figure(layout=_layout(go, PLOTS["reward"][0], xaxis={"title": "step"}, yaxis={"title": _t(ylabel)}))
    for i, (version, points) in enumerate(series.items()):
        color = _PALETTE[i % len(_PALETTE)]
        window = max(1, len(points) // 20)  # the PNG's window: the same smoothing
        per_run = runs.get(version) or []
        if len(per_run) > 1:
            smoothed = [dict(zip([p[0] for p in r], smooth([p[1] for p in r], window))) for r in per_run]
            steps = sorted(set.intersection(*(set(r) for r in smoothed)))
            if steps:
                fig.add_trace(go.Scatter(x=steps, y=[max(r[x] for r in smoothed) for x in steps], mode="lines",
                                         line={"width": 0, "color": color}, hoverinfo="skip", showlegend=False,
                                         legendgroup=_t(version)))
                fig.add_trace(go.Scatter(x=steps, y=[min(r[x] for r in smoothed) for x in steps], mode="lines",
                                         line={"width": 0, "color": color}, fill="tonexty",
                                         fillcolor=_rgba(color, 0.2), name=_t(f"{version}: seeds' range ({len(per_run)})"),
                                         legendgroup=_t(version), hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=[p[0] for p in points], y=smooth([p[1] for p in points], window), mode="lines",
                                 line={"color": color, "width": 2}, name=_t(version), legendgroup=_t(version),
                                 hovertemplate=_t(version) + " step %{x}: %{y:.4f}<extra></extra>"))
    return fig


def _curve(go: Any, name: str, series: dict[str, list[list[float]]], ylabel: str) -> Any:
    fig = go.Figure(layout=_layout(go, PLOTS[name][0], xaxis={"title": "step"}, yaxis={"title": _t(ylabel)}))
    for i, (version, points) in enumerate(series.items()):
        fig.add_trace(go.Scatter(x=[p[0] for p in points], y=[p[1] for p in points],
                                 mode="lines+markers" if len(points) < 30 else "lines", name=_t(version),
                                 line={"color": _PALETTE[i % len(_PALETTE)]},
                                 hovertemplate=_t(version) + " step %{x}: %{y:.4f}<extra></extra>"))
    return fig


def _task_delta(go: Any, data: ReportData) -> Any:
    groups = data.per_task.get("groups") or []
    if groups:  # per environment
        values = [g["delta"] for g in groups]
        fig = go.Figure(layout=_layout(
            go, f"Per-environment Δ ({data.version} − {data.against}, {len(groups)} environments)",
            xaxis={"title": "Δ mean score", "zeroline": True}, yaxis={"autorange": "reversed"},
            height=max(_HEIGHT, 120 + 26 * len(groups)), margin={"l": 200, "r": 20, "t": 50, "b": 50}))
        fig.add_trace(go.Bar(
            x=values, y=[_t(g["group"]) for g in groups], orientation="h",
            marker={"color": ["#1a7f37" if v > 0 else "#cf222e" if v < 0 else "#8c959f" for v in values]},
            customdata=[[g["a"], g["b"], g["n_tasks"]] for g in groups],
            hovertemplate=(f"%{{y}}: Δ %{{x:+.4f}}<br>{_t(data.against)} %{{customdata[0]:.4f}}, "
                           f"{_t(data.version)} %{{customdata[1]:.4f}}<br>%{{customdata[2]}} tasks<extra></extra>")))
        return fig
    tasks = sorted(data.per_task["tasks"], key=lambda t: t["delta"])
    values = [t["delta"] for t in tasks]
    fig = go.Figure(layout=_layout(go, f"Per-task Δ ({data.version} − {data.against}, {len(tasks)} tasks, sorted)",
                                   xaxis={"title": "task (sorted by Δ)", "showticklabels": len(tasks) <= 30},
                                   yaxis={"title": "Δ score", "zeroline": True}))
    fig.add_trace(go.Bar(
        x=[_t(t["task"]) for t in tasks], y=values,
        marker={"color": ["#1a7f37" if v > 0 else "#cf222e" if v < 0 else "#8c959f" for v in values]},
        customdata=[[t["a"], t["b"]] for t in tasks],
        hovertemplate=(f"%{{x}}: Δ %{{y:+.4f}}<br>{_t(data.against)} %{{customdata[0]:.4f}}, "
                       f"{_t(data.version)} %{{customdata[1]:.4f}}<extra></extra>")))
    return fig


def figures(data: ReportData) -> dict[str, str]:
    """name -> the Plotly figure as JSON, for every plot that has data (the names of :data:`PLOTS`)."""
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
        out[name] = _reward(go, data, series, ylabel) if name == "reward" else _curve(go, name, series, ylabel)
    if data.per_task.get("available") and data.per_task.get("tasks"):
        out["task_delta"] = _task_delta(go, data)
    return {name: json.dumps(fig.to_plotly_json(), default=_default, separators=(",", ":"))
            for name, fig in out.items()}


def _default(value: Any) -> Any:
    """JSON for what Plotly keeps as numpy values."""
    tolist = getattr(value, "tolist", None)
    if tolist is not None:
        return tolist()
    raise TypeError(f"not JSON: {type(value).__name__}")
