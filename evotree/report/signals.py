"""Every signal a version's runs recorded, for the report: grouped, the headline first.

The train phase records any metric it likes (``rec.signal(step, reward_mean=…, loss=…,
train_acc=…)``, TRL's logs through ``EvotreeCallback``); the report shows all of them, not only
a metric named ``reward``. Metrics are put in groups: the part before the first ``/`` when the
name has one (``rewards/accuracy/mean`` → ``rewards``), else a family the name belongs to
(reward, loss, accuracy, entropy, kl, learning rate, gradient, length, time), else ``other``.

The headline signal comes first (its group first, it first in the group): the one the recipe
declares (``[train].headline_signal`` of the champion's ``evotree.toml``), else ``reward``, else
the first metric whose name says reward, else none (groups in the order above). Only the train
phase's signals are read: what the judge records stays the judge's.

Each series is the mean over a version's runs per step, cut to at most :data:`MAX_POINTS`
points (means of equal step buckets) so that the report stays small whatever the run length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "FAMILIES",
    "MAX_POINTS",
    "collect_signals",
    "group_of",
    "order_signals",
    "plot_name",
    "thin",
]

#: points per version and metric, at most
MAX_POINTS = 400
#: metrics shown at most (the rest are counted in ``left_out``): a report, not a metric store
MAX_METRICS = 60
#: name families, in the order their groups are shown; the first whose pattern matches wins
FAMILIES: tuple[tuple[str, str], ...] = (
    ("reward", r"reward|return|score"),
    ("loss", r"loss"),
    ("accuracy", r"acc|precision|recall|f1"),
    ("entropy", r"entropy"),
    ("kl", r"(^|_)kl($|_)|kl_div"),
    ("learning rate", r"(^|_)lr($|_)|learning_rate"),
    ("gradient", r"grad"),
    ("length", r"len(gth)?"),
    ("time", r"time|seconds|throughput|per_second|fps"),
)
_ORDER = [name for name, _ in FAMILIES]


def group_of(metric: str) -> str:
    """The group a metric is shown in: its ``prefix/`` when it has one, else its family, else ``other``."""
    if "/" in metric.strip("/"):
        return metric.strip("/").split("/", 1)[0]
    lowered = metric.lower()
    for name, pattern in FAMILIES:
        if re.search(pattern, lowered):
            return name
    return "other"


def pick_headline(metrics: Sequence[str], declared: str | None) -> tuple[str | None, str]:
    """(the headline metric, why): the declared one when recorded, else ``reward``, else the first
    whose name says reward; (None, why) when none fits."""
    names = list(metrics)
    if declared and declared in names:
        return declared, "declared by the recipe ([train].headline_signal)"
    if "reward" in names:
        return "reward", "the signal named reward" + (
            f" (the declared {declared!r} was not recorded)" if declared else ""
        )
    rewardish = sorted(m for m in names if "reward" in m.lower())
    if rewardish:
        return rewardish[0], "the first signal whose name says reward"
    return None, "no headline: none declared and no reward signal"


def order_signals(metrics: Sequence[str], headline: str | None) -> list[dict[str, Any]]:
    """``[{"group", "metrics"}]``: the headline's group first and the headline first in it, then
    the families in :data:`FAMILIES` order, prefixed groups and ``other`` after them by name."""
    groups: dict[str, list[str]] = {}
    for metric in sorted(set(metrics)):
        groups.setdefault(group_of(metric), []).append(metric)

    def rank(group: str) -> tuple[int, int, str]:
        first = 0 if headline is not None and headline in groups[group] else 1
        family = _ORDER.index(group) if group in _ORDER else len(_ORDER) + (group == "other")
        return first, family, group

    out = []
    for group in sorted(groups, key=rank):
        names = sorted(groups[group], key=lambda m: (m != headline, m))
        out.append({"group": group, "metrics": names})
    return out


def thin(points: list[list[float]], limit: int = MAX_POINTS) -> list[list[float]]:
    """At most ``limit`` points: the means (step rounded to an integer, and value) of consecutive
    equal buckets; the last point is kept as it is, so the curve ends where the run ended."""
    if len(points) <= limit:
        return points
    size = -(-len(points) // (limit - 1))  # ceil
    out = []
    body = points[:-1]
    for i in range(0, len(body), size):
        chunk = body[i : i + size]
        out.append(
            [round(sum(p[0] for p in chunk) / len(chunk)), sum(p[1] for p in chunk) / len(chunk)]
        )
    out.append(points[-1])
    return out


def plot_name(group: str) -> str:
    """The plot name of a group's figure (``signals-<slug>``): a file name and an HTML id."""
    slug = re.sub(r"[^a-z0-9]+", "-", group.lower()).strip("-") or "other"
    return f"signals-{slug}"


def collect_signals(
    con: Any, runs: dict[str, list[str]], *, declared: str | None = None
) -> dict[str, Any]:
    """Every train-phase signal of the runs (version -> its run ids) on ``con`` (the evidence views).

    Returns ``{"headline", "headline_source", "groups": [{"group", "plot", "metrics"}],
    "series": {metric: {version: [[step, mean]]}}, "summary": {metric: {version: {"last", "min",
    "max", "steps", "runs"}}}, "left_out"}``.
    """
    series: dict[str, dict[str, list[list[float]]]] = {}
    summary: dict[str, dict[str, dict[str, Any]]] = {}
    for version, run_ids in runs.items():
        if not run_ids:
            continue
        marks = ", ".join("?" for _ in run_ids)
        rows = con.execute(
            f"SELECT metric, step, avg(value), count(DISTINCT run_id) FROM _signals WHERE run_id IN ({marks}) "
            "AND phase = 'train' AND metric IS NOT NULL AND step IS NOT NULL AND isfinite(value) "
            "GROUP BY metric, step ORDER BY metric, step",
            run_ids,
        ).fetchall()
        per_metric: dict[str, list[list[float]]] = {}
        seen_runs: dict[str, int] = {}
        for metric, step, value, n_runs in rows:
            per_metric.setdefault(str(metric), []).append([int(step), float(value)])
            seen_runs[str(metric)] = max(seen_runs.get(str(metric), 0), int(n_runs))
        for metric, points in per_metric.items():
            values = [p[1] for p in points]
            series.setdefault(metric, {})[version] = thin(points)
            summary.setdefault(metric, {})[version] = {
                "last": values[-1],
                "min": min(values),
                "max": max(values),
                "steps": len(points),
                "runs": seen_runs[metric],
            }
    headline, why = pick_headline(list(series), declared)
    groups = order_signals(list(series), headline)
    shown, left_out = 0, 0
    kept_groups = []
    used: set[str] = set()
    for group in groups:
        room = max(0, MAX_METRICS - shown)
        metrics, extra = group["metrics"][:room], group["metrics"][room:]
        left_out += len(extra)
        shown += len(metrics)
        if metrics:
            name = plot_name(group["group"])
            while name in used:  # two groups with one slug ("a b", "a-b")
                name += "-"
            used.add(name)
            kept_groups.append({"group": group["group"], "plot": name, "metrics": metrics})
    kept = {m for g in kept_groups for m in g["metrics"]}
    return {
        "headline": headline,
        "headline_source": why,
        "groups": kept_groups,
        "series": {m: s for m, s in series.items() if m in kept},
        "summary": {m: s for m, s in summary.items() if m in kept},
        "left_out": left_out,
    }
