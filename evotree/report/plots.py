"""PNG plots of a report: reward, entropy and dead-group curves, and the per-task Δ distribution.

matplotlib is imported here only (Agg backend: no display needed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evotree.report.model import ReportData

__all__ = ["PLOTS", "write_plots"]

#: name -> (title, y label) of each plot a report may carry.
PLOTS = {
    "reward": ("Train reward per step", "mean reward"),
    "entropy": ("Policy entropy per step", "entropy"),
    "dead_groups": ("Dead groups per step (reward std < 1e-3)", "dead-group ratio"),
    "task_delta": ("Per-task Δ", "tasks"),
}


def _curve_plot(plt: Any, series: dict[str, list[list[float]]], title: str, ylabel: str, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(5.6, 3.2), dpi=100)
    for version, points in series.items():
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o" if len(points) < 30 else None,
                markersize=3, label=version)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def _delta_plot(plt: Any, data: ReportData, path: Path) -> None:
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
    says so in its place.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    written: dict[str, str] = {}
    curves = data.curves if data.curves.get("available") else {}
    for name in ("reward", "entropy", "dead_groups"):
        series = curves.get(name) or {}
        if not series:
            continue
        title, ylabel = PLOTS[name]
        if name == "entropy" and curves.get("entropy_metric"):
            ylabel = str(curves["entropy_metric"])
        path = directory / f"{prefix}-{name}.png"
        _curve_plot(plt, series, title, ylabel, path)
        written[name] = str(path)
    if data.per_task.get("available") and data.per_task.get("tasks"):
        path = directory / f"{prefix}-task_delta.png"
        _delta_plot(plt, data, path)
        written["task_delta"] = str(path)
    return written
