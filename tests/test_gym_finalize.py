"""Finalize's selection rule (issue 19 item 2, designed in gates/finalize.py; not wired to the CLI yet)."""

from __future__ import annotations

from evotree.gates.finalize import finalize_plan, select_best
from evotree.harness.runs import RunRecord


def record(run_id: str, status: str, value: float | None, started: str, metric: str = "validation/mean_score") -> RunRecord:
    return RunRecord(run_id=run_id, version=run_id.split("-")[0], seed=0, status=status, commit="c" * 40,
                     judge_commit=None, judge_version=None, train_command="t", eval_command="e", started_at=started,
                     headline=None if value is None else {"metric": metric, "value": value, "n": 64, "scored": 64})


def test_best_validation_of_the_succeeded_runs_ties_to_the_latest() -> None:
    runs = [
        record("v1-a", "succeeded", -120.0, "2026-12-03T09:00:00"),
        record("v2-a", "failed", -10.0, "2026-12-03T09:01:00"),       # void: never selected
        record("v3-a", "succeeded", -95.5, "2026-12-03T09:02:00"),
        record("v4-a", "succeeded", -95.5, "2026-12-03T09:03:00"),    # tie: the latest wins
        record("v5-a", "succeeded", None, "2026-12-03T09:04:00"),     # not judged
        record("v6-a", "succeeded", 5.0, "2026-12-03T09:05:00", metric="train/mean_score"),
    ]
    best = select_best(runs)
    assert best is not None and best.run_id == "v4-a" and best.validation == -95.5


def test_no_ok_submit() -> None:
    assert select_best([record("v1-a", "failed", 1.0, "2026-12-03T09:00:00")]) is None
    assert select_best([]) is None


def test_plan_on_a_real_workspace_without_runs(ws) -> None:  # noqa: ANN001 - the conftest fixture
    plan = finalize_plan(ws)
    assert plan.status == "no_ok_submit" and plan.selected is None and plan.to_dict()["considered"] == 0
