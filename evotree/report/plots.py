"""PNG plots of a report: each run's score per version (the seeds as points, the comparison's Δ and
CI), the reward curve smoothed with its seeds' band, entropy and dead-group curves, the
per-task Δ distribution, and every recorded train signal: one figure per group of signals
(:mod:`evotree.report.signals`), a panel per metric, the headline first.

matplotlib is imported here only (Agg backend: no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evotree.report.model import ReportData

__all__ = ["PLOTS", "plot_order", "plot_titles", "smooth", "write_plots"]

#: name -> (title, y label) of each plot a report may carry.
PLOTS = {
    "scores": ("Score per run (seed), with the mean", "mean score"),
    "reward": ("Train reward per step (smoothed; band: the seeds' range)", "mean reward"),
    "entropy": ("Policy entropy per step", "entropy"),
    "dead_groups": ("Dead groups per step (reward std < 1e-3)", "dead-group ratio"),
    "task_delta": ("Per-task Δ", "tasks"),
}


def plot_titles(data: ReportData) -> dict[str, str]:
    """name -> title of every plot the report may carry: :data:`PLOTS` and one per signal group."""
    titles = {name: title for name, (title, _) in PLOTS.items()}
    signals = (data.curves.get("signals") or {}) if data.curves.get("available") else {}
    for group in signals.get("groups") or []:
        titles[group["plot"]] = _group_title(group, signals.get("headline"))
    return titles


def plot_order(data: ReportData, names: object) -> list[str]:
    """``names`` in the report's order: :data:`PLOTS`, then the signal groups (headline's first)."""
    present = set(names)  # type: ignore[call-overload]
    return [n for n in plot_titles(data) if n in present]


def _group_title(group: dict[str, Any], headline: str | None) -> str:
    metrics = group["metrics"]
    star = " (headline first)" if headline in metrics else ""
    return f"Signals: {group['group']}{star} — {', '.join(metrics[:6])}{' …' if len(metrics) > 6 else ''}"


def _signals_plot(plt: Any, signals: dict[str, Any], group: dict[str, Any], path: Path) -> None:
    """One panel per metric of ``group`` (its mean per step, each version a line), three a row."""
    metrics = group["metrics"]
    cols = min(3, len(metrics))
    rows = -(-len(metrics) // cols)
    # one panel: the size of every other plot; more: wider, and taller by the rows
    size = (5.6, 3.2) if cols == 1 and rows == 1 else (5.6 if cols < 3 else 8.4, 0.8 + 2.4 * rows)
    fig, axes = plt.subplots(rows, cols, figsize=size, dpi=100, squeeze=False)
    for i, metric in enumerate(metrics):
        ax = axes[i // cols][i % cols]
        for version, points in (signals["series"].get(metric) or {}).items():
            ax.plot(
                [p[0] for p in points],
                [p[1] for p in points],
                marker="o" if len(points) < 30 else None,
                markersize=3,
                label=version,
            )
        ax.set_title(("★ " if metric == signals.get("headline") else "") + metric, fontsize=9)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if i == 0:
            ax.legend(fontsize=7)
    for j in range(len(metrics), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    fig.suptitle(f"Train signals: {group['group']} (mean over runs, per step)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def _curve_plot(
    plt: Any, series: dict[str, list[list[float]]], title: str, ylabel: str, path: Path
) -> None:
    fig, ax = plt.subplots(figsize=(5.6, 3.2), dpi=100)
    for version, points in series.items():
        ax.plot(
            [p[0] for p in points],
            [p[1] for p in points],
            marker="o" if len(points) < 30 else None,
            markersize=3,
            label=version,
        )
    _finish_steps(plt, fig, ax, title, ylabel, path)


def _finish_steps(plt: Any, fig: Any, ax: Any, title: str, ylabel: str, path: Path) -> None:
    """Title, axes, grid and legend of a per-step curve; saved as PNG and closed."""
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def smooth(values: list[float], window: int) -> list[float]:
    """A trailing running mean over ``window`` points (the first points over what there is)."""
    out, total = [], 0.0
    for i, value in enumerate(values):
        total += value
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def _reward_plot(
    plt: Any,
    series: dict[str, list[list[float]]],
    runs: dict[str, list[list[list[float]]]],
    title: str,
    ylabel: str,
    path: Path,
) -> None:
    """Each version's reward, smoothed, with the range of its seeds' smoothed curves as a band."""
    fig, ax = plt.subplots(figsize=(5.6, 3.2), dpi=100)
    for version, points in series.items():
        window = max(1, len(points) // 20)
        line = ax.plot(
            [p[0] for p in points], smooth([p[1] for p in points], window), label=version
        )[0]
        per_run = runs.get(version) or []
        if len(per_run) > 1:
            smoothed = [
                dict(zip([p[0] for p in r], smooth([p[1] for p in r], window))) for r in per_run
            ]
            steps = sorted(set.intersection(*(set(r) for r in smoothed)))
            if steps:
                ax.fill_between(
                    steps,
                    [min(r[s] for r in smoothed) for s in steps],
                    [max(r[s] for r in smoothed) for s in steps],
                    color=line.get_color(),
                    alpha=0.2,
                    linewidth=0,
                )
    _finish_steps(plt, fig, ax, title, ylabel, path)


def _scores_plot(plt: Any, data: ReportData, path: Path) -> None:
    """Each run's (seed's) mean score per version as points, the versions' means as bars, and the
    one comparison's Δ with its CI in the title."""
    s = data.scores
    fig, ax = plt.subplots(figsize=(5.6, 3.2), dpi=100)
    for x, side in enumerate(("a", "b")):
        values = s["run_means"][side]
        offsets = [x + (i - (len(values) - 1) / 2) * 0.06 for i in range(len(values))]
        ax.scatter(offsets, values, s=18, zorder=3)
        mean = s["mean_a"] if side == "a" else s["mean_b"]
        ax.hlines(mean, x - 0.25, x + 0.25, color="black", linewidth=1.5)
    ax.set_xticks(
        [0, 1],
        [
            f"{s['a']} ({len(s['run_means']['a'])} runs)",
            f"{s['b']} ({len(s['run_means']['b'])} runs)",
        ],
    )
    lo, hi = s["ci"]
    level = round(100 * s.get("confidence", 0.95))
    ax.set_title(
        f"{s['split']}: Δ {s['delta']:+.3f}, {level}% CI [{lo:+.3f}, {hi:+.3f}], p {s['p_value']:.3g}",
        fontsize=9,
    )
    ax.set_ylabel("mean score")
    ax.set_xlim(-0.6, 1.6)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def _group_delta_plot(plt: Any, data: ReportData, path: Path) -> None:
    """Per-environment Δ (tasks ``ENV#i`` grouped by ``ENV``): one horizontal bar per environment."""
    groups = data.per_task["groups"]
    fig, ax = plt.subplots(figsize=(5.6, max(3.2, 0.9 + 0.28 * len(groups))), dpi=100)
    names = [g["group"] for g in groups]
    values = [g["delta"] for g in groups]
    ax.barh(
        names,
        values,
        color=["#1a7f37" if v > 0 else "#cf222e" if v < 0 else "#8c959f" for v in values],
    )
    ax.axvline(0.0, color="black", linewidth=0.8)
    ax.invert_yaxis()
    ax.set_title(
        f"Per-environment Δ ({data.version} − {data.against}, {len(groups)} environments)",
        fontsize=10,
    )
    ax.set_xlabel("Δ mean score")
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def _delta_plot(plt: Any, data: ReportData, path: Path) -> None:
    if data.per_task.get("groups"):
        _group_delta_plot(plt, data, path)
        return
    deltas = [t["delta"] for t in data.per_task["tasks"]]
    fig, ax = plt.subplots(figsize=(5.6, 3.2), dpi=100)
    bins = min(30, max(5, len(set(deltas))))
    ax.hist(deltas, bins=bins, color="#4c72b0", edgecolor="white")
    ax.axvline(0.0, color="black", linewidth=0.8)
    mean = sum(deltas) / len(deltas)
    ax.axvline(mean, color="#c44e52", linestyle="--", linewidth=1.2, label=f"mean Δ {mean:+.3f}")
    ax.set_title(f"Per-task Δ ({data.version} − {data.against}, {len(deltas)} tasks)", fontsize=10)
    ax.set_xlabel("Δ score")
    ax.set_ylabel("tasks")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def write_plots(data: ReportData, directory: Path, prefix: str) -> dict[str, str]:
    """Write the plots that have data as ``<directory>/<prefix>-<name>.png``; return name -> path.

    A plot without data (no rollouts, no entropy signal, no comparison) is left out; the report
    says so in its place. Each group of recorded signals is one more plot, ``signals-<group>``.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    written: dict[str, str] = {}
    if data.scores.get("available") and data.scores.get("run_means"):
        path = directory / f"{prefix}-scores.png"
        _scores_plot(plt, data, path)
        written["scores"] = str(path)
    curves = data.curves if data.curves.get("available") else {}
    for name in ("reward", "entropy", "dead_groups"):
        series = curves.get(name) or {}
        if not series:
            continue
        title, ylabel = PLOTS[name]
        if name == "entropy" and curves.get("entropy_metric"):
            ylabel = str(curves["entropy_metric"])
        path = directory / f"{prefix}-{name}.png"
        if name == "reward":
            _reward_plot(plt, series, curves.get("reward_runs") or {}, title, ylabel, path)
        else:
            _curve_plot(plt, series, title, ylabel, path)
        written[name] = str(path)
    if data.per_task.get("available") and data.per_task.get("tasks"):
        path = directory / f"{prefix}-task_delta.png"
        _delta_plot(plt, data, path)
        written["task_delta"] = str(path)
    signals = curves.get("signals") or {}
    for group in signals.get("groups") or []:
        path = directory / f"{prefix}-{group['plot']}.png"
        _signals_plot(plt, signals, group, path)
        written[group["plot"]] = str(path)
    return written
