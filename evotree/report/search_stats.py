"""The search statistics of versions in creation order (the rules: :mod:`evotree.report.search`).

:func:`compute_stats` is one pass per question, each its own step: the historical best (the peak),
the first attempt, the post-peak regressions, the spend and the stop recommendation.
:func:`aggregate_rates` turns several settings' statistics into rates.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from evotree.gates.finalize import first_best
from evotree.report.search_model import (
    SHARE_UNITS,
    SPEND_UNITS,
    TRAINING_UNIT,
    SearchParams,
    TreeStats,
    VersionStat,
    add_usage,
    percent,
)

__all__ = ["aggregate_rates", "by_class", "compute_stats", "normalized_summary"]


def normalized_summary(
    candidates: Sequence[VersionStat], *, failed_as_zero: bool
) -> dict[str, Any]:
    """AI4AI-Bench's headline over candidates: the mean normalized score (crashed ones 0 with
    ``failed_as_zero``; without it they are left out, and the mean is biased upward)."""
    scored = [r.normalized for r in candidates if r.normalized is not None]
    return {
        "mean": statistics.fmean(scored) if scored else None,
        "counted": len(scored),
        "candidates": len(candidates),
        "failed_as_zero": failed_as_zero,
    }


def _sum(rows: Sequence[VersionStat]) -> dict[str, float]:
    total: dict[str, float] = {unit: 0.0 for unit in SPEND_UNITS}
    for row in rows:
        add_usage(total, row.spend)
    return {k: round(v, 9) for k, v in total.items()}


def _share_unit(total: Mapping[str, float], cpu_complete: bool) -> str:
    for unit in SHARE_UNITS:  # the two read from run.json on this machine need all of them
        if total.get(unit, 0.0) > 0 and (
            unit not in ("cpu_seconds", TRAINING_UNIT) or cpu_complete
        ):
            return unit
    return "runs"


def compute_stats(
    setting: str,
    rows: list[VersionStat],
    *,
    params: SearchParams | None = None,
    champion: str | None = None,
    cpu_complete: bool = True,
    unattributed: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> TreeStats:
    """The statistics of one search from its versions in creation order (fills the rows' fields).

    ``unattributed``: spend charged to no version, ``[(at, usage)]`` (agent/API spend): it counts
    in the total and the candidates' spend, and after the peak when recorded after the peak
    version was created."""
    p = params or SearchParams()
    if p.direction == "auto":
        p = replace(p, direction="max")
    notes: list[str] = []
    for row in rows:  # the fields this function fills, cleared (rows may be given again)
        row.best_before = row.best_before_score = row.drop = None
        row.peak = row.after_peak = row.regression = False
    metrics = sorted({r.metric for r in rows if r.valid and r.metric})
    if len(metrics) > 1:
        notes.append(
            f"versions are scored on different metrics ({', '.join(metrics)}): compared as they are"
        )
    best, below_best_so_far = _peak(rows, p)
    historical_best = _historical_best(rows, best, p, champion, notes)
    first_attempt = _first_attempt(rows, p)
    after = [r for r in rows if best is not None and r.order > best.order]
    post_peak = _post_peak(after, best, p, below_best_so_far)
    spend, cost = _spend(rows, after, best, cpu_complete, unattributed, notes)
    recommendation = _recommendation(rows, best, len(after), spend, p)
    return TreeStats(
        setting=setting,
        root=rows[0].id if rows else None,
        champion=champion,
        metric=metrics[0] if len(metrics) == 1 else None,
        direction=p.direction,
        versions=rows,
        historical_best=historical_best,
        first_attempt=first_attempt,
        post_peak=post_peak,
        spend=spend,
        cost_per_valid_candidate=cost,
        recommendation=recommendation,
        notes=notes,
        interventions=by_class(rows[1:]),
    )


def _peak(rows: Sequence[VersionStat], p: SearchParams) -> tuple[VersionStat | None, list[str]]:
    """The historical best (evotree's one rule of "best", the one finalize selects by:
    :func:`evotree.gates.finalize.first_best`, ties within epsilon go to the earlier version), and
    the valid versions below the best before them; fills each row's ``best_before``."""
    best: VersionStat | None = None
    below_best_so_far = []
    for row in rows:
        if best is not None:
            row.best_before, row.best_before_score = best.id, best.score
        if not row.valid:
            continue
        assert row.score is not None
        if best is None or p.better(row.score, best.score):  # type: ignore[arg-type]
            best = row
        elif p.regressed(best.score, row.score):  # type: ignore[arg-type]
            below_best_so_far.append(row.id)
    best = first_best(
        [r for r in rows if r.valid],
        lambda r: r.score,  # type: ignore[arg-type, return-value]
        direction=p.direction,
        epsilon=p.epsilon,
    )  # the same as the scan's: said once
    return best, below_best_so_far


def _historical_best(
    rows: Sequence[VersionStat],
    best: VersionStat | None,
    p: SearchParams,
    champion: str | None,
    notes: list[str],
) -> dict[str, Any]:
    """The peak's entry of the statistics (marks the peak's row)."""
    excluded = [r.id for r in rows if r.score is not None and not r.valid]
    if best is None:
        return {
            "version": None,
            "score": None,
            "metric": None,
            "order": None,
            "ties": [],
            "excluded_audit_failed": excluded,
            "champion_is_best": None,
        }
    best.peak = True
    ties = [r.id for r in rows if r.valid and r is not best and p.tie(best.score, r.score)]  # type: ignore[arg-type]
    if champion and champion != best.id:
        notes.append(
            f"the champion {champion} is not the historical best {best.id}: keep {best.id} selectable"
        )
    return {
        "version": best.id,
        "score": best.score,
        "metric": best.metric,
        "order": best.order,
        "ties": ties,
        "excluded_audit_failed": excluded,
        "champion_is_best": champion == best.id if champion else None,
    }


def _first_attempt(rows: Sequence[VersionStat], p: SearchParams) -> dict[str, Any]:
    """The first child of the root: whether it beat the root and whether a later one beat it."""
    root_row = rows[0] if rows else None
    root = root_row.id if root_row is not None else None
    first = next((r for r in rows[1:] if root is not None and root in r.parents), None)
    if first is None or root_row is None:
        return {
            "version": None,
            "score": None,
            "valid": False,
            "beats_root": None,
            "improved_later": None,
            "best_later": None,
            "best_later_score": None,
        }
    later = [r for r in rows if r.order > first.order and r.valid and r.parents]
    best_later: VersionStat | None = None
    for r in later:
        if best_later is None or p.better(r.score, best_later.score):  # type: ignore[arg-type]
            best_later = r
    if first.valid:
        improved = best_later is not None and p.better(best_later.score, first.score)  # type: ignore[arg-type]
    else:
        improved = best_later is not None
    beats = (
        p.better(first.score, root_row.score)  # type: ignore[arg-type]
        if first.valid and root_row.valid
        else None
    )
    return {
        "version": first.id,
        "score": first.score,
        "valid": first.valid,
        "beats_root": beats,
        "improved_later": improved,
        "best_later": best_later.id if best_later else None,
        "best_later_score": best_later.score if best_later else None,
    }


def _post_peak(
    after: Sequence[VersionStat],
    best: VersionStat | None,
    p: SearchParams,
    below_best_so_far: list[str],
) -> dict[str, Any]:
    """Post-peak regression, time-ordered over the whole search (marks the rows after the peak)."""
    for r in after:
        r.after_peak = True
    valid_after = [r for r in after if r.valid]
    for r in valid_after:
        r.drop = p.drop(best.score, r.score)  # type: ignore[arg-type, union-attr]
        r.regression = p.regressed(best.score, r.score)  # type: ignore[arg-type, union-attr]
    regressions = [r for r in valid_after if r.regression]
    worst = max(valid_after, key=lambda r: r.drop) if valid_after else None  # type: ignore[arg-type, return-value]
    last = valid_after[-1] if valid_after else None
    return {
        "peak": best.id if best else None,
        "versions_after": len(after),
        "valid_after": len(valid_after),
        "continued": bool(valid_after),
        "regressions": [r.id for r in regressions],
        "worst_drop": worst.drop if worst else None,
        "worst_version": worst.id if worst else None,
        "last_valid": last.id if last else None,
        "ended_below_peak": last.regression if last else None,
        "below_best_so_far": below_best_so_far,
        "margin": p.margin,
    }


def _spend(
    rows: Sequence[VersionStat],
    after: Sequence[VersionStat],
    best: VersionStat | None,
    cpu_complete: bool,
    unattributed: Sequence[tuple[str, Mapping[str, Any]]],
    notes: list[str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The spend (total, after the peak, its share, the candidates') and the cost per valid candidate."""
    total = _sum(rows)
    candidates = rows[1:]
    after_spend = _sum(after)
    candidate_spend = _sum(candidates)
    for at, usage in unattributed:
        for target in (total, candidate_spend) + (
            (after_spend,) if best is not None and at > best.created_at else ()
        ):
            add_usage(target, usage)
    after_spend = {
        k: 0.0 for k in total
    } | after_spend  # every unit of the total, 0 when none after
    candidate_spend = {k: 0.0 for k in total} | candidate_spend
    total, after_spend, candidate_spend = (
        {k: round(v, 9) for k, v in d.items()} for d in (total, after_spend, candidate_spend)
    )
    unit = _share_unit(total, cpu_complete)
    share = {k: (round(after_spend[k] / total[k], 9) if total.get(k) else None) for k in total}
    spend = {
        "total": total,
        "after_peak": after_spend,
        "after_peak_share": share,
        "candidates": candidate_spend,
        "share_unit": unit,
        "cpu_seconds_complete": cpu_complete,
    }
    if not cpu_complete:
        notes.append(
            "some charged runs have no run.json on this machine: their CPU seconds are not counted"
        )
    valid_candidates = [r for r in candidates if r.valid]
    cost = {
        "valid_candidates": len(valid_candidates),
        "candidates": len(candidates),
        "per_candidate": (
            {k: round(v / len(valid_candidates), 9) for k, v in candidate_spend.items()}
            if valid_candidates
            else None
        ),
    }
    return spend, cost


def _recommendation(
    rows: Sequence[VersionStat],
    best: VersionStat | None,
    since: int,
    spend: Mapping[str, Any],
    p: SearchParams,
) -> dict[str, Any]:
    """Stop after ``patience`` versions since the peak or at ``max_after_peak_share`` of the spend."""
    unit = spend["share_unit"]
    share_value = spend["after_peak_share"].get(unit)
    if best is None:
        action = "continue"
        line = "continue: no valid score yet" if rows else "continue: the tree has no version"
    elif since >= p.patience or (
        since >= 1 and share_value is not None and share_value >= p.max_after_peak_share
    ):
        action = "stop"
        line = (
            f"stop: {since} version(s) since the peak {best.id} without improvement, spend after the peak "
            f"{percent(share_value)} of total ({unit}); keep {best.id}"
        )
    else:
        action = "continue"
        line = (
            f"continue: {since} version(s) since the peak {best.id} (stop at {p.patience}), spend after "
            f"the peak {percent(share_value)} of total ({unit})"
        )
    return {
        "action": action,
        "line": line,
        "keep": best.id if best else None,
        "versions_since_peak": since,
        "after_peak_share": share_value,
        "share_unit": unit,
        "patience": p.patience,
        "max_after_peak_share": p.max_after_peak_share,
    }


def by_class(candidates: Sequence[VersionStat]) -> dict[str, Any] | None:
    """Per primary intervention class: versions, valid versions and their mean score (AI4AI-Bench's
    algorithm-level vs the rest); None when no candidate was classified."""
    classified = [
        r for r in candidates if r.intervention is not None and r.intervention.get("primary")
    ]
    if not classified:
        return None
    out: dict[str, Any] = {}
    for r in classified:
        primary = (r.intervention or {})["primary"]
        entry = out.setdefault(
            primary, {"versions": 0, "valid": 0, "mean_score": None, "_scores": []}
        )
        entry["versions"] += 1
        if r.valid:
            entry["valid"] += 1
            entry["_scores"].append(r.score)
    for entry in out.values():
        scores = entry.pop("_scores")
        entry["mean_score"] = statistics.fmean(scores) if scores else None
    return out


def _rate(
    settings: Sequence[TreeStats], pick: Callable[[TreeStats], bool | None]
) -> dict[str, Any]:
    counted = [(s.setting, pick(s)) for s in settings]
    counted = [(name, value) for name, value in counted if value is not None]
    yes = [name for name, value in counted if value]
    return {
        "numerator": len(yes),
        "denominator": len(counted),
        "rate": round(len(yes) / len(counted), 6) if counted else None,
        "settings": yes,
    }


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def aggregate_rates(settings: Sequence[TreeStats]) -> dict[str, Any]:
    """Rates over settings (each: numerator, denominator, rate, the settings counted in the numerator).

    Denominators are the settings where the question has an answer: ``ended_below_peak`` and
    ``post_peak_regression`` over the settings that continued after their peak (RSIBench's 23).
    """

    def continued(s: TreeStats) -> bool | None:
        return s.post_peak["continued"] if s.post_peak["peak"] else None

    def after(s: TreeStats, key: str) -> bool | None:
        return (
            (s.post_peak[key] if key == "ended_below_peak" else bool(s.post_peak["regressions"]))
            if s.post_peak["continued"]
            else None
        )

    return {
        "settings": len(settings),
        "first_attempt_improved": _rate(settings, lambda s: s.first_attempt["improved_later"]),
        "first_attempt_beats_root": _rate(settings, lambda s: s.first_attempt["beats_root"]),
        "continued_after_peak": _rate(settings, continued),
        "ended_below_peak": _rate(settings, lambda s: after(s, "ended_below_peak")),
        "post_peak_regression": _rate(settings, lambda s: after(s, "regressions")),
        "stop_recommended": _rate(settings, lambda s: s.recommendation["action"] == "stop"),
        "champion_is_best": _rate(settings, lambda s: s.historical_best["champion_is_best"]),
        "median_after_peak_share": _median(
            [s.recommendation["after_peak_share"] for s in settings]
        ),
        "median_runs_per_valid_candidate": _median(
            [(s.cost_per_valid_candidate["per_candidate"] or {}).get("runs") for s in settings]
        ),
        # RSIBench-Data's headline cost: the median over settings of the training bill per valid candidate
        "median_training_usd_per_valid_candidate": _median(
            [
                (s.cost_per_valid_candidate["per_candidate"] or {}).get(TRAINING_UNIT)
                for s in settings
            ]
        ),
        "interventions": by_class([r for s in settings for r in s.versions[1:]]),
        "normalized": (
            normalized_summary(
                [r for s in settings if s.normalized is not None for r in s.versions[1:]],
                failed_as_zero=all(
                    s.normalized["failed_as_zero"] for s in settings if s.normalized is not None
                ),
            )
            if any(s.normalized is not None for s in settings)
            else None
        ),
    }
