"""`evotree sql` is read-only: the evidence views and nothing else.

DuckDB's own settings do the work (``allowed_paths`` = the views' files, then
``enable_external_access = false`` and ``lock_configuration = true``), and DuckDB's parser
refuses any statement that is not one SELECT. Each attack fails with exit code 14, code
``query_not_allowed``, and leaves nothing behind; ordinary SELECTs over runs, evals and
rollouts (Parquet of finished runs, JSONL of live ones) still work, through the CLI, the Python
API and the MCP server's ``sql`` tool (tests/test_server.py).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import EVOTREE_BIN, Cli, git, make_repo
from evotree.core.workspace import Workspace, init_workspace
from evotree.gates.runs import run_versions
from evotree.harness.query import QueryError, QueryNotAllowed, connect, query

TRAIN = """\
import json
from evotree.harness import get_recorder
rec = get_recorder()
for step in (1, 2):
    rec.signal(step, reward_mean=0.5)
    rec.rollout_group(step, group_id=f"g{step}", task_id="t", rewards=[0.5, 0.0, 1.0, 0.5])
json.dump({"skill": 0.5}, open("model.json", "w"))
"""

JUDGE = """\
from evotree.harness import get_recorder
rec = get_recorder()
for i in range(4):
    rec.eval_result("validation", f"task-{i}", 1.0 if i < 2 else 0.0)
"""


@pytest.fixture(scope="module")
def evidence(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with one finished run (Parquet evidence) of v0."""
    repo = make_repo(tmp_path_factory.mktemp("sql") / "ws")
    (repo / "train.py").write_text(TRAIN)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(JUDGE)
    (repo / "evotree.toml").write_text(
        '[train]\ncommand = "python train.py"\n\n'
        '[eval]\ncommand = "python judge/eval.py"\njudge_paths = ["judge/"]\n'
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipe")
    init_workspace(repo)
    (record,) = run_versions(Workspace.open(repo), ["v0"])
    assert record.status == "succeeded"
    assert list((repo / ".evotree" / "runs").glob("*/evals.parquet"))
    return repo


def _outside(tmp: Path) -> Path:
    """A Parquet file outside the evidence, that a query must not read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp / "outside.parquet"
    pq.write_table(pa.table({"secret": ["do not read"]}), path)
    return path


ATTACKS = {
    "read a file": "SELECT * FROM read_csv_auto('/etc/passwd')",
    "read a text file": "SELECT * FROM read_text('/etc/hostname')",
    "read parquet outside": "SELECT * FROM read_parquet('{outside}')",
    "glob the disk": "SELECT * FROM glob('/etc/*')",
    "copy to a file": "COPY (SELECT * FROM runs) TO '{target}'",
    "copy a view": "COPY evals TO '{target}' (FORMAT parquet)",
    "export": "EXPORT DATABASE '{tmp}/exported'",
    "attach": "ATTACH '{tmp}/other.duckdb' AS other",
    "install": "INSTALL httpfs",
    "load": "LOAD httpfs",
    "network": "SELECT * FROM read_parquet('https://example.com/data.parquet')",
    "set": "SET enable_external_access = true",
    "reset": "RESET enable_external_access",
    "pragma": "PRAGMA enable_profiling",
    "create": "CREATE TABLE t AS SELECT * FROM runs",
    "insert": "INSERT INTO runs SELECT * FROM runs",
    "drop": "DROP VIEW evals",
    "two statements": "SELECT 1; SELECT 2",
    "select then set": "SELECT 1; SET threads = 1",
    "call": "CALL pragma_version()",
    "checkpoint": "CHECKPOINT",
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_every_attack_fails_through_the_cli(evidence: Path, tmp_path: Path, name: str) -> None:
    target = tmp_path / "stolen.csv"
    sql = ATTACKS[name].format(outside=_outside(tmp_path), target=target, tmp=tmp_path)
    error = Cli(evidence).json("sql", sql, code=14)["error"]
    assert error["code"] == "query_not_allowed", error
    assert error["exit_code"] == 14 and error["fix"]
    assert list(tmp_path.iterdir()) == [
        tmp_path / "outside.parquet"
    ]  # nothing written, nothing attached


def test_the_refusal_names_what_was_refused(evidence: Path) -> None:
    cli = Cli(evidence)
    assert (
        "COPY statements are not allowed"
        in cli.json("sql", "COPY runs TO 'x.csv'", code=14)["error"]["message"]
    )
    message = cli.json("sql", "SELECT * FROM read_csv_auto('/etc/passwd')", code=14)["error"][
        "message"
    ]
    assert "outside the evidence" in message and "/etc/passwd" in message
    assert "2 statements" in cli.json("sql", "SELECT 1; SELECT 2", code=14)["error"]["message"]
    text = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(evidence), "sql", "INSTALL httpfs"],
        capture_output=True,
        text=True,
    )
    assert text.returncode == 14 and "not allowed" in text.stderr and "fix:" in text.stderr
    bad = cli.json("sql", "SELEC 1", code=14)["error"]  # a syntax error stays a plain query error
    assert bad["code"] == "query_error"
    # a statement smuggled into DuckDB's query() table function is refused by DuckDB itself
    cli.json("sql", "SELECT * FROM query('DROP VIEW evals')", code=14)
    assert cli.json("sql", "SELECT count(*) AS n FROM evals")["rows"] == [{"n": 4}]


def test_selects_over_the_views_still_work(evidence: Path) -> None:
    cli = Cli(evidence)
    rows = cli.json("sql", "SELECT version, split, avg(score) AS s FROM evals GROUP BY ALL")["rows"]
    assert rows == [{"version": "v0", "split": "validation", "s": 0.5}]
    assert cli.json("sql", "SELECT count(*) AS n FROM rollouts")["rows"] == [{"n": 8}]
    assert cli.json("sql", "SELECT version, status FROM runs")["rows"] == [
        {"version": "v0", "status": "succeeded"}
    ]
    for sql in (
        "WITH s AS (SELECT * FROM signals) SELECT count(*) AS n FROM s",
        "FROM runs SELECT count(*) AS n",
        "DESCRIBE evals",
        "SUMMARIZE rollouts",
        "SELECT * FROM findings",
        "SHOW TABLES",
    ):
        cli.json("sql", sql)
    assert cli("sql", "SELECT count(*) AS n FROM evals", "--csv").output == "n\n4\n"


def test_the_python_api_is_read_only_too(evidence: Path) -> None:
    import evotree

    ws = evotree.open(evidence)
    assert evotree.query(ws, "SELECT count(*) AS n FROM evals").column("n").to_pylist() == [4]
    with pytest.raises(QueryNotAllowed) as refused:
        evotree.query(ws, "SELECT * FROM read_csv_auto('/etc/passwd')")
    assert refused.value.exit_code == 14 and isinstance(refused.value, QueryError)
    with pytest.raises(QueryNotAllowed):
        evotree.query_df(ws, "SET lock_configuration = false")


def test_views_over_files_stay_readable_after_the_lock(evidence: Path, tmp_path: Path) -> None:
    """The views were created over Parquet files before external access was disabled: still
    readable (those exact files are the allowed paths), while the same reader on another file is not;
    the configuration cannot be unlocked."""
    import duckdb

    runs = evidence / ".evotree" / "runs"
    con = connect(runs, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM evals").fetchone() == (4,)
        (parquet,) = runs.glob("*/evals.parquet")
        assert con.execute(f"SELECT count(*) FROM read_parquet('{parquet}')").fetchone() == (4,)
        with pytest.raises(duckdb.PermissionException):
            con.execute(f"SELECT * FROM read_parquet('{_outside(tmp_path)}')")
        with pytest.raises(duckdb.Error, match="locked"):
            con.execute("SET enable_external_access = true")
    finally:
        con.close()
    # the analyzers' connection is not locked: they create temp tables
    con = connect(runs)
    try:
        con.execute("CREATE TEMP TABLE scratch AS SELECT * FROM evals")
    finally:
        con.close()


def test_live_jsonl_evidence_is_readable_read_only(tmp_path: Path) -> None:
    """A running run's JSONL files (no Parquet yet) are among the allowed paths."""
    run = tmp_path / "runs" / "r1"
    (run / "evidence" / "eval").mkdir(parents=True)
    (run / "run.json").write_text(
        json.dumps({"run_id": "r1", "version": "v1", "seed": 0, "status": "running"})
    )
    (run / "evidence" / "eval" / "evals.jsonl").write_text(
        json.dumps(
            {
                "run_id": "r1",
                "phase": "eval",
                "split": "validation",
                "task_id": "a",
                "score": 1.0,
                "ts": 1.0,
            }
        )
        + "\n"
    )
    table = query(tmp_path / "runs", "SELECT version, score FROM evals")
    assert table.to_pylist() == [{"version": "v1", "score": 1.0}]
