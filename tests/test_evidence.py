"""Compaction of a run's evidence (harness/compaction.py): exact schema, malformed lines, forged
hidden scores, empty runs, atomic writes. Real JSONL and Parquet files in temp dirs."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from evotree.harness.compaction import CompactionError, compact_run
from evotree.harness.layout import KINDS, SCHEMAS, arrow_schema
from evotree.harness.recorder import Recorder


def record_run(run_dir: Path, run_id: str = "r1") -> None:
    """A small honest run: train-phase signals, rollouts and train-split evals; eval-phase scores."""
    with Recorder(run_dir / "evidence" / "train", run_id=run_id, phase="train") as rec:
        rec.signal(0, loss=1.0, kl=float("nan"))
        rec.signal(1, loss=0.5, kl=0.01)
        rec.rollout_group(
            0,
            group_id="g0",
            task_id="t0",
            rewards=[1.0, 0.0],
            components={"correct": [1, 0]},
            lengths=[5, 9],
            truncated=[False, True],
            finish_reasons=["stop", "length"],
            texts=["a", "b"],
            commands=[["ls", "cat x"], []],
        )
        rec.rollout_group(1, group_id="g1", task_id="t1", rewards=[float("inf"), 1.0])
        rec.eval_result("train", "t0", 1.0)
    with Recorder(run_dir / "evidence" / "eval", run_id=run_id, phase="eval") as rec:
        rec.eval_result("validation", "t0", 0.5)
        rec.eval_result("heldout", "t1", 0.25, sample_index=1)


def table(run_dir: Path, kind: str):
    return pq.read_table(run_dir / f"{kind}.parquet")


def eval_row(split: str, phase: str, score: float = 1.0, task: str = "t9") -> str:
    return (
        json.dumps(
            {
                "run_id": "r1",
                "phase": phase,
                "split": split,
                "task_id": task,
                "sample_index": 0,
                "score": score,
                "nonfinite": False,
                "ts": 1.0,
            }
        )
        + "\n"
    )


# ----------------------------------------------------------------------------- schema and values
def test_columns_and_types_are_exactly_the_layout(tmp_path: Path) -> None:
    record_run(tmp_path)
    result = compact_run(tmp_path)
    assert result.rows == {"signals": 4, "rollouts": 4, "evals": 3}
    for kind in KINDS:
        schema = pq.read_schema(tmp_path / f"{kind}.parquet")
        assert schema.names == list(SCHEMAS[kind])
        assert schema.equals(arrow_schema(kind)), kind
        assert (
            pq.ParquetFile(tmp_path / f"{kind}.parquet").metadata.row_group(0).column(0).compression
            == "ZSTD"
        )
        assert result.parquet[kind] == str(tmp_path / f"{kind}.parquet")


def test_values_round_trip(tmp_path: Path) -> None:
    record_run(tmp_path)
    compact_run(tmp_path)
    signals = table(tmp_path, "signals").to_pylist()
    assert [(r["step"], r["metric"], r["value"], r["nonfinite"]) for r in signals] == [
        (0, "loss", 1.0, False),
        (0, "kl", None, True),
        (1, "loss", 0.5, False),
        (1, "kl", 0.01, False),
    ]
    rollouts = table(tmp_path, "rollouts").to_pylist()
    first = {k: v for k, v in rollouts[0].items() if k != "ts"}
    assert first == {
        "run_id": tmp_path.name,
        "phase": "train",
        "step": 0,
        "group_id": "g0",
        "task_id": "t0",
        "sample_index": 0,
        "reward": 1.0,
        "components": '{"correct": 1.0}',
        "length": 5,
        "truncated": False,
        "finish_reason": "stop",
        "text": "a",
        "commands": ["ls", "cat x"],
        "nonfinite": False,
    }
    assert rollouts[1]["commands"] == [] and rollouts[1]["truncated"] is True
    assert (rollouts[2]["reward"], rollouts[2]["nonfinite"]) == (None, True)
    assert rollouts[2]["length"] is None and rollouts[2]["text"] is None
    evals = table(tmp_path, "evals").to_pylist()
    assert sorted((r["phase"], r["split"], r["score"]) for r in evals) == [
        ("eval", "heldout", 0.25),
        ("eval", "validation", 0.5),
        ("train", "train", 1.0),
    ]
    assert all(isinstance(r["ts"], float) and r["ts"] > 0 for r in evals)


def test_jsonl_files_are_kept_by_default_and_removed_on_request(tmp_path: Path) -> None:
    record_run(tmp_path)
    compact_run(tmp_path)
    assert (tmp_path / "evidence" / "train" / "rollouts.jsonl").is_file()
    result = compact_run(tmp_path, keep_jsonl=False)
    assert sorted(result.removed_jsonl) == sorted(
        [
            "evidence/train/signals.jsonl",
            "evidence/train/rollouts.jsonl",
            "evidence/train/evals.jsonl",
            "evidence/eval/evals.jsonl",
        ]
    )
    assert not list((tmp_path / "evidence").rglob("*.jsonl"))
    assert table(tmp_path, "rollouts").num_rows == 4  # the Parquet files hold everything


def test_compacting_twice_gives_the_same_files(tmp_path: Path) -> None:
    record_run(tmp_path)
    first = {k: table(tmp_path, k) for k in KINDS} if compact_run(tmp_path) else None
    compact_run(tmp_path)
    for kind in KINDS:
        assert table(tmp_path, kind).equals(first[kind])


# ----------------------------------------------------------------------------- malformed lines
def test_malformed_and_truncated_lines_are_counted_and_skipped(tmp_path: Path) -> None:
    record_run(tmp_path)
    train = tmp_path / "evidence" / "train"
    with open(train / "signals.jsonl", "ab") as handle:
        handle.write(b"this is not json\n")
        handle.write(b"\n   \n")  # blank lines are not malformed
        handle.write(b"[1, 2, 3]\n{}\n42\n")
        handle.write(
            b'{"run_id": "r1", "phase": "train", "step": 2, "metric": "loss", "value": 0.1, '
            b'"nonfinite": false, "ts": 1.0}\n'
        )  # valid, after the garbage
        handle.write(b'{"run_id": "\xff\xfe"}\n')  # invalid UTF-8
        handle.write(b'{"run_id": "r1", "phase": "train", "step": 3, "met')  # crash mid-line
    result = compact_run(tmp_path)
    assert result.malformed["evidence/train/signals.jsonl"] == 6
    assert result.malformed["evidence/train/rollouts.jsonl"] == 0
    assert result.malformed_total == 6
    assert result.rows["signals"] == 5
    assert table(tmp_path, "signals").column("step").to_pylist() == [0, 0, 1, 1, 2]


def test_a_file_of_garbage_gives_an_empty_table(tmp_path: Path) -> None:
    (tmp_path / "evidence" / "train").mkdir(parents=True)
    (tmp_path / "evidence" / "train" / "rollouts.jsonl").write_bytes(b"\x00\x01garbage\n{{{\n")
    result = compact_run(tmp_path)
    assert result.malformed == {"evidence/train/rollouts.jsonl": 2}
    assert result.rows["rollouts"] == 0
    assert table(tmp_path, "rollouts").schema.equals(arrow_schema("rollouts"))


def test_wrong_value_types_become_null_not_lost_rows(tmp_path: Path) -> None:
    (tmp_path / "evidence" / "train").mkdir(parents=True)
    (tmp_path / "evidence" / "train" / "signals.jsonl").write_text(
        json.dumps(
            {
                "run_id": "r1",
                "phase": "train",
                "step": "abc",
                "metric": "loss",
                "value": "high",
                "nonfinite": False,
                "ts": 1.0,
                "unknown_key": 1,
            }
        )
        + "\n"
    )
    result = compact_run(tmp_path)
    assert result.rows["signals"] == 1 and result.malformed_total == 0
    (row,) = table(tmp_path, "signals").to_pylist()
    assert row["step"] is None and row["value"] is None and row["metric"] == "loss"


# ----------------------------------------------------------------------------- forged hidden scores
def test_forged_hidden_evals_are_rejected_and_counted(tmp_path: Path) -> None:
    record_run(tmp_path)
    train_evals = tmp_path / "evidence" / "train" / "evals.jsonl"
    eval_evals = tmp_path / "evidence" / "eval" / "evals.jsonl"
    with open(train_evals, "a") as handle:  # the candidate's code writing the file directly
        handle.write(eval_row("validation", "eval"))  # forged: claims the eval phase
        handle.write(eval_row("heldout", "train"))
        handle.write(eval_row("train", "train", task="kept"))  # not hidden: kept
    with open(eval_evals, "a") as handle:
        handle.write(eval_row("heldout", "train"))  # in the judge's file but not from the judge
        handle.write(eval_row("validation", None))  # type: ignore[arg-type]
        handle.write(eval_row("validation", "eval", task="judge"))  # genuine
    result = compact_run(tmp_path)
    assert result.rejected_hidden == {
        "evidence/train/evals.jsonl": 2,
        "evidence/eval/evals.jsonl": 2,
    }
    assert result.rejected_hidden_total == 4
    rows = table(tmp_path, "evals").to_pylist()
    hidden = sorted((r["phase"], r["split"], r["task_id"]) for r in rows if r["split"] != "train")
    assert hidden == [
        ("eval", "heldout", "t1"),
        ("eval", "validation", "judge"),
        ("eval", "validation", "t0"),
    ]
    assert ("train", "kept") in {(r["split"], r["task_id"]) for r in rows}
    assert result.rows["evals"] == 5


def test_hidden_evals_in_an_unknown_phase_directory_are_rejected(tmp_path: Path) -> None:
    other = tmp_path / "evidence" / "judge2"
    other.mkdir(parents=True)
    (other / "evals.jsonl").write_text(eval_row("heldout", "eval") + eval_row("train", "eval"))
    result = compact_run(tmp_path)
    assert result.rejected_hidden == {"evidence/judge2/evals.jsonl": 1}
    assert table(tmp_path, "evals").column("split").to_pylist() == ["train"]


# ----------------------------------------------------------------------------- empty runs
def test_a_run_without_evidence_gets_empty_files_with_the_schema(tmp_path: Path) -> None:
    result = compact_run(tmp_path)
    assert result.rows == dict.fromkeys(KINDS, 0)
    assert result.malformed == {} and result.rejected_hidden == {}
    for kind in KINDS:
        t = table(tmp_path, kind)
        assert t.num_rows == 0 and t.schema.equals(arrow_schema(kind))


def test_empty_jsonl_files_give_empty_tables(tmp_path: Path) -> None:
    train = tmp_path / "evidence" / "train"
    train.mkdir(parents=True)
    for kind in KINDS:
        (train / f"{kind}.jsonl").write_text("")
    result = compact_run(tmp_path)
    assert result.rows == dict.fromkeys(KINDS, 0)
    assert result.malformed == {f"evidence/train/{k}.jsonl": 0 for k in KINDS}
    assert all(table(tmp_path, k).schema.equals(arrow_schema(k)) for k in KINDS)


def test_missing_run_dir_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CompactionError, match="does not exist") as info:
        compact_run(tmp_path / "nope")
    assert info.value.fix and info.value.exit_code == 19


# ----------------------------------------------------------------------------- atomic writes
def test_no_stray_temp_files_and_old_ones_are_cleaned(tmp_path: Path) -> None:
    record_run(tmp_path)
    stray = tmp_path / ".rollouts.parquet.tmp-123-deadbeef"
    stray.write_bytes(b"PAR1 half a file")  # left by a compaction that was killed
    compact_run(tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["evals.parquet", "evidence", "rollouts.parquet", "signals.parquet"]


def test_a_failed_write_leaves_no_partial_file(tmp_path: Path) -> None:
    record_run(tmp_path)
    (tmp_path / "rollouts.parquet").mkdir()  # the rename onto it fails
    (tmp_path / "rollouts.parquet" / "keep").write_text("x")
    with pytest.raises(CompactionError, match="cannot write"):
        compact_run(tmp_path)
    assert not list(tmp_path.glob(".*.tmp-*"))
    assert (tmp_path / "signals.parquet").is_file()  # kinds before the failure are complete
    assert pq.read_table(tmp_path / "signals.parquet").num_rows == 4


_COMPACTOR = textwrap.dedent("""
    import sys
    from evotree.harness.compaction import compact_run
    while True:
        compact_run(sys.argv[1])
""")


def test_sigkill_during_compaction_never_leaves_a_half_parquet(tmp_path: Path) -> None:
    train = tmp_path / "evidence" / "train"
    train.mkdir(parents=True)
    line = (
        '{"run_id":"r1","phase":"train","step":%d,"group_id":"g%d","task_id":"t","sample_index":0,'
        '"reward":1.0,"components":"{}","length":3,"truncated":false,"finish_reason":"stop",'
        '"text":"some text","commands":[],"nonfinite":false,"ts":1.0}\n'
    )
    (train / "rollouts.jsonl").write_text("".join(line % (i, i) for i in range(30_000)))
    proc = subprocess.Popen([sys.executable, "-c", _COMPACTOR, str(tmp_path)])
    target = tmp_path / "rollouts.parquet"
    deadline = time.monotonic() + 30
    while not target.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.08)  # now in the middle of a later compaction (or between two)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert target.exists()
    assert pq.read_table(target).num_rows == 30_000  # the complete old or new file, never half
    compact_run(tmp_path)  # and the next compaction removes any stray temp file
    assert not list(tmp_path.glob(".*.tmp-*"))
    assert math.isclose(pq.read_table(target).column("reward").to_pylist()[-1], 1.0)


def test_nan_and_infinity_tokens_become_null_and_flagged(tmp_path: Path) -> None:
    (tmp_path / "evidence" / "train").mkdir(parents=True)
    (tmp_path / "evidence" / "train" / "signals.jsonl").write_text(
        '{"run_id": "r1", "phase": "train", "step": 0, "metric": "a", "value": NaN, "nonfinite": false, "ts": 1.0}\n'
        '{"run_id": "r1", "phase": "train", "step": 0, "metric": "b", "value": -Infinity, "ts": 1.0}\n'
        '{"run_id": "r1", "phase": "train", "step": 0, "metric": "c", "value": 2.5, "nonfinite": false, "ts": 1.0}\n'
    )
    compact_run(tmp_path)
    rows = table(tmp_path, "signals").to_pylist()
    assert [(r["metric"], r["value"], r["nonfinite"]) for r in rows] == [
        ("a", None, True),
        ("b", None, True),
        ("c", 2.5, False),
    ]


def test_rows_cannot_claim_another_run_or_phase(tmp_path: Path) -> None:
    """The train phase may write files directly: its rows still count as its own run's train rows."""
    run_dir = tmp_path / "real-run"
    train = run_dir / "evidence" / "train"
    train.mkdir(parents=True)
    (train / "signals.jsonl").write_text(
        '{"run_id": "someone-else", "phase": "eval", "step": 1, "metric": "loss", "value": 0.5,'
        ' "nonfinite": false, "ts": 1.0}\n'
    )
    compact_run(run_dir)
    (row,) = table(run_dir, "signals").to_pylist()
    assert row["run_id"] == "real-run" and row["phase"] == "train"
