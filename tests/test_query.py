"""The query layer (harness/query.py): DuckDB views over finished and running runs, empty
views, the dead-group ratio, and SQL errors. Real DuckDB over real files in temp dirs."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from evotree.harness.compaction import compact_run, duckdb_columns
from evotree.harness.layout import KINDS
from evotree.harness.query import (
    FINDINGS_COLUMNS,
    RUN_COLUMNS,
    VIEWS,
    QueryError,
    connect,
    dead_group_ratio,
    query,
    query_df,
)
from evotree.harness.recorder import Recorder


def make_run(
    runs: Path,
    run_id: str,
    *,
    version: str = "v1",
    seed: int = 0,
    status: str = "succeeded",
    groups: dict[str, list[float]] | None = None,
    compact: bool = False,
    **extra,
) -> Path:
    run_dir = runs / run_id
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(
        json.dumps(
            {"run_id": run_id, "version": version, "seed": seed, "status": status, **extra},
            indent=2,
        )
    )
    with Recorder(run_dir / "evidence" / "train", run_id=run_id, phase="train") as rec:
        rec.signal(0, loss=1.0)
        for group_id, rewards in (groups or {"g0": [1.0, 0.0]}).items():
            rec.rollout_group(0, group_id=group_id, task_id="t", rewards=rewards)
        rec.eval_result("train", "t", 1.0)
    with Recorder(run_dir / "evidence" / "eval", run_id=run_id, phase="eval") as rec:
        rec.eval_result("validation", "t", 0.5)
    if compact:
        compact_run(run_dir)
    return run_dir


def columns(con, view: str) -> dict[str, str]:
    return {row[0]: row[1] for row in con.execute(f"DESCRIBE {view}").fetchall()}


def evidence_columns(kind: str) -> dict[str, str]:
    return {**duckdb_columns(kind), "version": "VARCHAR", "seed": "BIGINT"}


# ----------------------------------------------------------------------------- views
def test_views_cover_finished_and_running_runs_together(tmp_path: Path) -> None:
    make_run(tmp_path, "r-done", version="v1", seed=1, compact=True)
    running = make_run(tmp_path, "r-running", version="v2", seed=2, status="running")
    with open(running / "evidence" / "train" / "signals.jsonl", "a") as handle:
        handle.write('{"run_id": "r-running", "phase": "train", "step": 1, "met')  # being written
    con = connect(tmp_path)
    assert set(VIEWS) <= {row[0] for row in con.execute("SHOW TABLES").fetchall()}
    for kind in KINDS:
        assert columns(con, kind) == evidence_columns(kind)
    rows = con.execute(
        "SELECT run_id, version, seed, count(*) FROM signals GROUP BY ALL ORDER BY 1"
    ).fetchall()
    assert rows == [("r-done", "v1", 1, 1), ("r-running", "v2", 2, 1)]
    rows = con.execute(
        "SELECT run_id, count(*), sum(reward) FROM rollouts GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert rows == [("r-done", 2, 1.0), ("r-running", 2, 1.0)]
    rows = con.execute("SELECT run_id, split, score FROM evals ORDER BY 1, 2").fetchall()
    assert rows == [
        ("r-done", "train", 1.0),
        ("r-done", "validation", 0.5),
        ("r-running", "train", 1.0),
        ("r-running", "validation", 0.5),
    ]
    assert con.execute("SELECT run_id, status FROM runs ORDER BY 1").fetchall() == [
        ("r-done", "succeeded"),
        ("r-running", "running"),
    ]


def test_parquet_wins_over_jsonl_per_kind(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r1", compact=True)  # JSONL kept: must not be counted twice
    assert query(tmp_path, "SELECT count(*) AS n FROM rollouts").column("n").to_pylist() == [2]
    (run / "rollouts.parquet").unlink()  # e.g. compaction killed before this kind was written
    con = connect(tmp_path)
    assert con.execute("SELECT count(*) FROM rollouts").fetchone() == (2,)
    assert con.execute("SELECT count(*) FROM signals").fetchone() == (1,)


def test_running_runs_hide_forged_hidden_scores(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r1")
    forged = {
        "run_id": "r1",
        "phase": "eval",
        "split": "heldout",
        "task_id": "t",
        "sample_index": 0,
        "score": 1.0,
        "nonfinite": False,
        "ts": 1.0,
    }
    with open(run / "evidence" / "train" / "evals.jsonl", "a") as handle:
        handle.write(json.dumps(forged) + "\n" + "garbage\n")
    rows = connect(tmp_path).execute("SELECT phase, split FROM evals ORDER BY split").fetchall()
    assert rows == [("train", "train"), ("eval", "validation")]


def test_views_exist_and_are_empty_without_runs(tmp_path: Path) -> None:
    for runs_dir in (tmp_path / "missing", tmp_path):
        con = connect(runs_dir)
        for kind in KINDS:
            assert columns(con, kind) == evidence_columns(kind)
            assert con.execute(f"SELECT count(*) FROM {kind}").fetchone() == (0,)
        assert columns(con, "runs") == RUN_COLUMNS
        assert columns(con, "findings") == FINDINGS_COLUMNS
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM findings").fetchone() == (0,)


def test_a_run_without_evidence_still_has_a_run_row(tmp_path: Path) -> None:
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "run.json").write_text(
        json.dumps({"run_id": "r1", "version": "v3", "seed": 5, "status": "queued"})
    )
    con = connect(tmp_path)
    assert con.execute("SELECT * FROM runs").fetchall() == [("r1", "v3", 5, "queued")]
    assert con.execute("SELECT count(*) FROM rollouts").fetchone() == (0,)


def test_runs_view_tolerates_extra_keys_odd_types_and_broken_records(tmp_path: Path) -> None:
    make_run(tmp_path, "a", version="v1", seed=1, budget={"steps": 10}, started_at=12.5)
    make_run(tmp_path, "b", version="v2", seed=2)
    (tmp_path / "b" / "run.json").write_text(
        json.dumps({"run_id": "b", "version": 2, "seed": "7", "status": "failed", "error": "boom"})
    )
    make_run(tmp_path, "c")
    (tmp_path / "c" / "run.json").write_text('{"run_id": "c", "vers')  # half-written
    con = connect(tmp_path)
    cols = list(columns(con, "runs"))
    assert cols[:4] == list(RUN_COLUMNS) and {"budget", "started_at", "error"} <= set(cols)
    assert columns(con, "runs")["seed"] == "BIGINT" and columns(con, "runs")["version"] == "VARCHAR"
    rows = con.execute("SELECT run_id, version, seed, status FROM runs ORDER BY 1").fetchall()
    assert rows == [("a", "v1", 1, "succeeded"), ("b", "2", 7, "failed")]
    assert con.execute("SELECT budget.steps FROM runs WHERE run_id = 'a'").fetchone() == (10,)
    # the evidence of the run with a broken run.json is still there, without version/seed
    assert con.execute("SELECT version FROM signals WHERE run_id = 'c'").fetchall() == [(None,)]


def test_findings_view_reads_findings_files(tmp_path: Path) -> None:
    findings = tmp_path / "findings"
    findings.mkdir()
    (findings / "v1.jsonl").write_text(
        json.dumps(
            {
                "version": "v1",
                "layer": "signals",
                "code": "dead_groups",
                "severity": "warning",
                "title": "42% of groups are dead",
                "run_id": "r1",
                "ts": 3.0,
                "extra": [1],
            }
        )
        + "\n"
        + "not json\n"
    )
    con = connect(tmp_path / "runs", findings_dir=findings)
    assert columns(con, "findings") == FINDINGS_COLUMNS
    assert con.execute("SELECT code, severity, ts FROM findings").fetchall() == [
        ("dead_groups", "warning", 3.0)
    ]


# ----------------------------------------------------------------------------- python API
def test_query_returns_arrow_and_query_df_returns_pandas(tmp_path: Path) -> None:
    make_run(tmp_path, "r1", compact=True)
    make_run(tmp_path, "r2")
    result = query(tmp_path, "SELECT run_id, count(*) AS n FROM rollouts GROUP BY 1 ORDER BY 1")
    assert isinstance(result, pa.Table)
    assert result.to_pydict() == {"run_id": ["r1", "r2"], "n": [2, 2]}
    df = query_df(
        tmp_path, "SELECT version, avg(score) AS s FROM evals WHERE split = 'validation' GROUP BY 1"
    )
    assert isinstance(df, pd.DataFrame) and df.to_dict("records") == [{"version": "v1", "s": 0.5}]


@pytest.mark.parametrize(
    "sql, needle",
    [
        ("SELEC * FROM runs", "syntax error"),
        ("SELECT * FROM rollout", "rollout"),
        ("SELECT nope FROM rollouts", "nope"),
    ],
)
def test_bad_sql_is_a_query_error_naming_the_views(tmp_path: Path, sql: str, needle: str) -> None:
    make_run(tmp_path, "r1")
    with pytest.raises(QueryError) as info:
        query(tmp_path, sql)
    err = info.value
    assert err.exit_code == 14 and err.code == "query_error"
    assert needle in err.message and "runs, signals, rollouts, evals, findings" in err.message
    assert "rollouts(run_id, phase, step, group_id" in err.fix
    assert err.to_dict()["details"]["sql"] == sql


def test_empty_sql_is_a_query_error(tmp_path: Path) -> None:
    with pytest.raises(QueryError, match="empty"):
        query_df(tmp_path, "  ")


def test_runtime_sql_errors_are_query_errors(tmp_path: Path) -> None:
    make_run(tmp_path, "r1")
    with pytest.raises(QueryError, match="SQL error"):
        query(tmp_path, "SELECT CAST(group_id AS INTEGER) FROM rollouts")


def test_runs_dir_that_is_a_file_is_a_query_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(QueryError, match="not a directory"):
        connect(tmp_path / "f")


# ----------------------------------------------------------------------------- dead-group ratio
def test_dead_group_ratio_hand_checked(tmp_path: Path) -> None:
    # 4 groups: g0 and g2 have identical rewards (dead), g1 and g3 do not -> 2 / 4
    make_run(
        tmp_path,
        "r1",
        groups={
            "g0": [1, 1, 1, 1],
            "g1": [1, 0, 1, 1],
            "g2": [0.25, 0.25, 0.25, 0.25],
            "g3": [0, 0, 0, 0.5],
        },
    )
    con = connect(tmp_path)
    assert dead_group_ratio(con) == 0.5
    assert dead_group_ratio(con, run_id="r1") == 0.5
    # population std of g3 = sqrt(0.046875) = 0.2165: dead only with a threshold above it
    assert dead_group_ratio(con, threshold=0.2) == 0.5
    assert dead_group_ratio(con, threshold=0.22) == 0.75


def test_dead_group_ratio_per_run_and_across_runs(tmp_path: Path) -> None:
    make_run(tmp_path, "a", groups={"g0": [1, 1], "g1": [1, 0]}, compact=True)
    make_run(tmp_path, "b", groups={"g0": [0, 0], "g1": [0, 0], "g2": [0, 0], "g3": [1, 0]})
    con = connect(tmp_path)
    assert dead_group_ratio(con, run_id="a") == 0.5
    assert dead_group_ratio(con, run_id="b") == 0.75
    assert dead_group_ratio(con) == 4 / 6  # same group ids in two runs are different groups
    assert math.isnan(dead_group_ratio(con, run_id="nope"))


def test_dead_group_ratio_is_nan_safe(tmp_path: Path) -> None:
    nan, inf = float("nan"), float("inf")
    make_run(
        tmp_path,
        "r1",
        groups={
            "all-null": [nan, nan, inf],  # no finite reward: left out
            "dead-with-nan": [1.0, nan, 1.0],  # the NaN is left out: std 0 -> dead
            "alive-with-inf": [0.0, inf, 1.0],  # std of [0, 1] -> alive
            "single": [0.5],  # one sample: std 0 -> dead
        },
    )
    assert dead_group_ratio(connect(tmp_path)) == pytest.approx(2 / 3)


def test_dead_group_ratio_reads_parquet_with_real_nans(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from evotree.harness.layout import arrow_schema

    run = tmp_path / "r1"
    run.mkdir()
    n = 6
    rows = {name: [None] * n for name in arrow_schema("rollouts").names}
    rows.update(
        run_id=["r1"] * n,
        step=[0] * n,
        group_id=["a", "a", "a", "b", "b", "b"],
        reward=[float("nan"), 1.0, 1.0, 0.0, 1.0, float("nan")],
        commands=[[]] * n,
    )
    pq.write_table(pa.table(rows, schema=arrow_schema("rollouts")), run / "rollouts.parquet")
    assert dead_group_ratio(connect(tmp_path)) == 0.5


def test_nan_tokens_in_running_jsonl_are_null_and_flagged(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r1", groups={"g0": [1.0, 1.0]})
    with open(run / "evidence" / "train" / "rollouts.jsonl", "a") as handle:
        handle.write(
            '{"run_id": "r1", "phase": "train", "step": 0, "group_id": "g0", "task_id": "t", '
            '"sample_index": 2, "reward": NaN, "nonfinite": false, "ts": 1.0}\n'
        )
    con = connect(tmp_path)
    assert con.execute(
        "SELECT reward, nonfinite FROM rollouts WHERE sample_index = 2"
    ).fetchall() == [(None, True)]
    assert dead_group_ratio(con) == 1.0


def test_the_connection_stays_usable_after_dead_group_ratio(tmp_path: Path) -> None:
    make_run(tmp_path, "r1")
    con = connect(tmp_path)
    dead_group_ratio(con)
    assert con.sql("SELECT count(*) FROM rollouts").fetchall() == [(2,)]


def test_runs_view_with_awkward_records(tmp_path: Path) -> None:
    for run_id, record in {
        "a": {
            "run_id": "a",
            "version": "v1",
            "seed": 1.0,
            "status": "ok",
            "Budget": 1,
            "empty": {},
            "nothing": None,
            "score": float("nan"),
        },
        "b": {
            "run_id": "b",
            "version": None,
            "seed": True,
            "status": "ok",
            "budget": 2,
            "VERSION": "x",
        },
        "c": ["not", "an", "object"],
    }.items():
        (tmp_path / run_id).mkdir()
        (tmp_path / run_id / "run.json").write_text(json.dumps(record))
    con = connect(tmp_path)
    cols = list(columns(con, "runs"))
    assert cols[:4] == list(RUN_COLUMNS) and "Budget" in cols and "budget" not in cols
    rows = con.execute(
        "SELECT run_id, version, seed, Budget, score FROM runs ORDER BY 1"
    ).fetchall()
    assert rows == [("a", "v1", 1, 1, None), ("b", None, None, 2, None)]
