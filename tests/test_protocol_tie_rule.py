"""One tie rule everywhere: finalize's selection and report --tree's historical
best pick the same one of tied candidates — the earliest — through one function."""

from __future__ import annotations

from evotree.gates.finalize import first_best, select_best
from evotree.harness.records import RunRecord
from evotree.report.search import SearchParams, VersionStat, compute_stats


def _run(version: str, value: float, started: str) -> RunRecord:
    return RunRecord(
        run_id=f"{version}-r",
        version=version,
        seed=0,
        status="succeeded",
        commit=version * 10,
        judge_commit=None,
        judge_version=None,
        train_command="t",
        eval_command="e",
        started_at=started,
        headline={"metric": "validation/mean_score", "value": value, "n": 64, "scored": 64},
    )


def _row(version: str, order: int, value: float | None, at: str) -> VersionStat:
    return VersionStat(
        id=version,
        order=order,
        parents=[] if order == 1 else ["v0"],
        created_at=at,
        status="evaluated",
        hypothesis="",
        score=value,
        metric="validation/mean_score",
        audit=None,
        valid=value is not None,
        runs_finished=1,
        spend={"runs": 1.0},
    )


SCORES = [("v0", -300.0), ("v1", -95.5), ("v2", -120.0), ("v3", -95.5), ("v4", -95.5 * (1 + 1e-12))]


def test_finalize_and_the_historical_best_pick_the_same_of_tied_versions() -> None:
    times = [f"2026-12-03T09:0{i}:00" for i in range(len(SCORES))]
    runs = [_run(v, s, t) for (v, s), t in zip(SCORES, times)]
    rows = [_row(v, i + 1, s, t) for i, ((v, s), t) in enumerate(zip(SCORES, times))]
    selected = select_best(reversed(runs))  # the records' order does not matter: started_at does
    stats = compute_stats("s", rows)
    assert selected is not None and selected.version == "v1"
    assert stats.historical_best["version"] == "v1" == selected.version
    assert set(stats.historical_best["ties"]) == {"v3", "v4"}  # within the one tolerance
    # a clear improvement later does replace it, in both
    runs.append(_run("v5", -95.0, "2026-12-03T09:09:00"))
    rows.append(_row("v5", 6, -95.0, "2026-12-03T09:09:00"))
    assert select_best(runs).version == "v5" == compute_stats("s", rows).historical_best["version"]  # type: ignore[union-attr]


def test_first_best_is_earliest_of_ties_in_both_directions() -> None:
    items = [("a", 1.0), ("b", 2.0), ("c", 2.0), ("d", 0.5), ("e", 0.5)]
    assert first_best(items, lambda x: x[1])[0] == "b"  # type: ignore[index]
    assert first_best(items, lambda x: x[1], direction="min")[0] == "d"  # type: ignore[index]
    assert first_best([], lambda x: x) is None
    assert SearchParams().better(2.0, 1.0) and not SearchParams().better(2.0, 2.0 * (1 + 1e-12))
