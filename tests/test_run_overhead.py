"""What finishing a run loads: compaction must not pull in pandas, pyarrow or numpy (DuckDB reads
the JSONL and writes the Parquet; those imports were a third of a run's own CPU), and still count
malformed lines and forged hidden scores per file and keep only the good rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evotree.harness.recorder import Recorder

ROOT = Path(__file__).resolve().parent.parent

_COMPACT = """
import json, sys
from evotree.harness.evidence import compact_run
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
    forged = {"run_id": "r1", "phase": "train", "split": "validation", "task_id": "t9",
              "sample_index": 0, "score": 1.0, "nonfinite": False, "ts": 1.0}
    (train / "evals.jsonl").write_text(json.dumps(forged) + "\n" + "{not json\n")
    out = subprocess.run([sys.executable, "-P", "-c", _COMPACT, str(tmp_path)], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    assert data["pandas"] is False
    assert data["pyarrow"] is False and data["numpy"] is False  # DuckDB alone writes Parquet
    assert data["rows"]["evals"] == 2 and data["rows"]["signals"] == 1
    assert data["hidden"] == {"evidence/train/evals.jsonl": 1}
    assert data["malformed"]["evidence/train/evals.jsonl"] == 1
    assert data["malformed"]["evidence/eval/evals.jsonl"] == 0
