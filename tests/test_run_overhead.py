"""What finishing a run loads: compaction must not pull in pandas, pyarrow or numpy (DuckDB reads
the JSONL and writes the Parquet; those imports were a third of a run's own CPU), and still count
malformed lines and forged hidden scores per file and keep only the good rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from evotree.harness.compaction import compact_run
from evotree.harness.recorder import Recorder

ROOT = Path(__file__).resolve().parent.parent

_COMPACT = """
import json, sys
from evotree.harness.compaction import compact_run
result = compact_run(sys.argv[1])
print(json.dumps({"pandas": "pandas" in sys.modules, "pyarrow": "pyarrow" in sys.modules,
                  "numpy": "numpy" in sys.modules, "rows": result.rows,
                  "malformed": result.malformed, "hidden": result.rejected_hidden}))
"""


@pytest.mark.heavy  # a subprocess that loads pyarrow and DuckDB: seconds on a loaded machine
def test_compaction_counts_and_filters_without_loading_pandas(tmp_path: Path) -> None:
    with Recorder(tmp_path / "evidence" / "eval", run_id="r1", phase="eval") as rec:
        rec.eval_result("validation", "t0", 0.5)
        rec.eval_result("validation", "t1", 1.0)
    train = tmp_path / "evidence" / "train"
    with Recorder(train, run_id="r1", phase="train") as rec:
        rec.signal(0, loss=1.0)
    # a forged hidden-split score from the train phase, and a malformed line
    forged = {
        "run_id": "r1",
        "phase": "train",
        "split": "validation",
        "task_id": "t9",
        "sample_index": 0,
        "score": 1.0,
        "nonfinite": False,
        "ts": 1.0,
    }
    (train / "evals.jsonl").write_text(json.dumps(forged) + "\n" + "{not json\n")
    out = subprocess.run(
        [sys.executable, "-P", "-c", _COMPACT, str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout)
    assert data["pandas"] is False
    assert data["pyarrow"] is False and data["numpy"] is False  # DuckDB alone writes Parquet
    assert data["rows"]["evals"] == 2 and data["rows"]["signals"] == 1
    assert data["hidden"] == {"evidence/train/evals.jsonl": 1}
    assert data["malformed"]["evidence/train/evals.jsonl"] == 1
    assert data["malformed"]["evidence/eval/evals.jsonl"] == 0


def test_compaction_in_the_callers_connection_leaves_it_open_and_clean(tmp_path: Path) -> None:
    """finish_run compacts in the connection it reads the headline from: compaction leaves it
    open, with no table of its own behind, and the Parquet files it wrote readable there."""
    with Recorder(tmp_path / "evidence" / "eval", run_id="r1", phase="eval") as rec:
        rec.eval_result("validation", "t0", 0.25)
        rec.eval_result("validation", "t1", 0.75)
    con = duckdb.connect(":memory:")
    try:
        result = compact_run(tmp_path, con=con)
        assert result.rows["evals"] == 2
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchall()[0][0] == 0
        mean = con.execute(
            "SELECT avg(score) FROM read_parquet(?)", [str(tmp_path / "evals.parquet")]
        ).fetchall()[0][0]
        assert mean == 0.5
    finally:
        con.close()
