"""The recorder SDK (harness/recorder.py): exact rows, non-finite values, misuse, crashes.

Real files in temp dirs; the crash test SIGKILLs a real subprocess in the middle of recording.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import evotree.harness.recorder as recorder_module
from evotree.harness.layout import (
    ENV_EVIDENCE_DIR,
    ENV_MAX_STEPS,
    ENV_PHASE,
    ENV_RUN_ID,
    SCHEMAS,
)
from evotree.harness.recorder import Recorder, RecorderError, get_recorder


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def without_ts(rows: list[dict]) -> list[dict]:
    out = []
    for row in rows:
        assert isinstance(row.pop("ts"), float)
        out.append(row)
    return out


@pytest.fixture
def rec(tmp_path: Path) -> Recorder:
    with Recorder(tmp_path / "evidence" / "train", run_id="r1", phase="train") as recorder:
        yield recorder


# ----------------------------------------------------------------------------- exact rows
def test_signal_rows_are_exact(rec: Recorder) -> None:
    rec.signal(3, loss=0.25, kl=1)
    rows = read_rows(rec.evidence_dir / "signals.jsonl")
    assert without_ts(rows) == [
        {
            "run_id": "r1",
            "phase": "train",
            "step": 3,
            "metric": "loss",
            "value": 0.25,
            "nonfinite": False,
        },
        {
            "run_id": "r1",
            "phase": "train",
            "step": 3,
            "metric": "kl",
            "value": 1.0,
            "nonfinite": False,
        },
    ]
    assert rec.rows["signals"] == 2


def test_rollout_group_rows_are_exact_and_match_the_schema(rec: Recorder) -> None:
    rec.rollout_group(
        7,
        group_id="g1",
        task_id="add-3",
        rewards=[1, 0.5],
        components={"correct": [1, 0], "format": [0, 0.5]},
        lengths=[12, 40],
        truncated=[False, True],
        finish_reasons=["stop", "length"],
        texts=["2+1=3", "hmm"],
        commands=[["python -c 1"], []],
    )
    rows = read_rows(rec.evidence_dir / "rollouts.jsonl")
    for row in rows:
        assert list(row) == list(SCHEMAS["rollouts"])  # exactly the schema's keys, in order
    assert without_ts(rows) == [
        {
            "run_id": "r1",
            "phase": "train",
            "step": 7,
            "group_id": "g1",
            "task_id": "add-3",
            "sample_index": 0,
            "reward": 1.0,
            "components": '{"correct": 1.0, "format": 0.0}',
            "length": 12,
            "truncated": False,
            "finish_reason": "stop",
            "text": "2+1=3",
            "commands": ["python -c 1"],
            "nonfinite": False,
        },
        {
            "run_id": "r1",
            "phase": "train",
            "step": 7,
            "group_id": "g1",
            "task_id": "add-3",
            "sample_index": 1,
            "reward": 0.5,
            "components": '{"correct": 0.0, "format": 0.5}',
            "length": 40,
            "truncated": True,
            "finish_reason": "length",
            "text": "hmm",
            "commands": [],
            "nonfinite": False,
        },
    ]


def test_optional_rollout_fields_are_null(rec: Recorder) -> None:
    rec.rollout_group(0, group_id="g", task_id="t", rewards=[0.0])
    (row,) = read_rows(rec.evidence_dir / "rollouts.jsonl")
    assert row["length"] is None and row["truncated"] is None and row["text"] is None
    assert row["commands"] == [] and row["components"] == "{}"


def test_eval_rows_are_exact(tmp_path: Path) -> None:
    with Recorder(tmp_path / "ev", run_id="r9", phase="eval") as rec:
        rec.eval_result("heldout", "t1", 0.75, sample_index=2)
        rec.eval_result("train", "t2", 1)
    rows = read_rows(tmp_path / "ev" / "evals.jsonl")
    for row in rows:
        assert list(row) == list(SCHEMAS["evals"])
    assert without_ts(rows) == [
        {
            "run_id": "r9",
            "phase": "eval",
            "split": "heldout",
            "task_id": "t1",
            "sample_index": 2,
            "score": 0.75,
            "nonfinite": False,
        },
        {
            "run_id": "r9",
            "phase": "eval",
            "split": "train",
            "task_id": "t2",
            "sample_index": 0,
            "score": 1.0,
            "nonfinite": False,
        },
    ]


def test_every_line_is_one_complete_json_object(rec: Recorder) -> None:
    for step in range(50):
        rec.signal(step, loss=1 / (step + 1))
    text = (rec.evidence_dir / "signals.jsonl").read_text()
    assert text.endswith("\n") and text.count("\n") == 50
    assert [json.loads(line)["step"] for line in text.splitlines()] == list(range(50))


# ----------------------------------------------------------------------------- non-finite
def test_nonfinite_values_are_flagged_not_dropped(rec: Recorder) -> None:
    rec.signal(1, loss=float("nan"), grad=float("inf"), ok=2.0)
    rec.rollout_group(
        1,
        group_id="g",
        task_id="t",
        rewards=[float("-inf"), 1.0],
        components={"c": [0.0, float("nan")]},
    )
    rows = read_rows(rec.evidence_dir / "signals.jsonl")
    assert [(r["metric"], r["value"], r["nonfinite"]) for r in rows] == [
        ("loss", None, True),
        ("grad", None, True),
        ("ok", 2.0, False),
    ]
    rollouts = read_rows(rec.evidence_dir / "rollouts.jsonl")
    assert [(r["reward"], r["nonfinite"]) for r in rollouts] == [(None, True), (1.0, True)]
    assert json.loads(rollouts[1]["components"]) == {"c": None}
    assert rec.nonfinite == 4
    # the files stay strict JSON: no NaN / Infinity tokens
    for name in ("signals.jsonl", "rollouts.jsonl"):
        text = (rec.evidence_dir / name).read_text()
        assert "NaN" not in text and "Infinity" not in text


def test_nonfinite_eval_score_is_flagged(tmp_path: Path) -> None:
    with Recorder(tmp_path, run_id="r", phase="eval") as rec:
        rec.eval_result("validation", "t", math.nan)
    (row,) = read_rows(tmp_path / "evals.jsonl")
    assert row["score"] is None and row["nonfinite"] is True


# ----------------------------------------------------------------------------- misuse
def test_outside_a_run_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_EVIDENCE_DIR, raising=False)
    monkeypatch.setattr(recorder_module, "_default", None)
    with pytest.raises(RecorderError) as info:
        get_recorder()
    assert ENV_EVIDENCE_DIR in info.value.message and "no evotree run" in info.value.message
    assert "evotree run" in info.value.fix
    assert info.value.exit_code == 13 and info.value.code == "recorder_error"


def test_from_env_reads_the_run_environment(tmp_path: Path) -> None:
    env = {
        ENV_EVIDENCE_DIR: str(tmp_path / "e"),
        ENV_RUN_ID: "run-7",
        ENV_PHASE: "eval",
        ENV_MAX_STEPS: "5",
    }
    with Recorder.from_env(env) as rec:
        assert (rec.run_id, rec.phase, rec.max_steps) == ("run-7", "eval", 5)
        assert not rec.budget_exceeded(4) and rec.budget_exceeded(5)


@pytest.mark.parametrize("split", ["validation", "heldout"])
def test_hidden_split_from_the_train_phase_is_refused(rec: Recorder, split: str) -> None:
    with pytest.raises(RecorderError) as info:
        rec.eval_result(split, "t", 1.0)
    assert "hidden" in info.value.message and "train" in info.value.message
    assert not (rec.evidence_dir / "evals.jsonl").exists()  # nothing written


def test_train_split_from_the_train_phase_is_fine(rec: Recorder) -> None:
    rec.eval_result("train", "t", 1.0)
    assert len(read_rows(rec.evidence_dir / "evals.jsonl")) == 1


def test_mismatched_lengths_are_refused(rec: Recorder) -> None:
    with pytest.raises(RecorderError, match=r"lengths has 1 values, rewards has 2"):
        rec.rollout_group(0, group_id="g", task_id="t", rewards=[1, 0], lengths=[3])
    with pytest.raises(RecorderError, match=r"components\[c\] has 3 values, rewards has 2"):
        rec.rollout_group(0, group_id="g", task_id="t", rewards=[1, 0], components={"c": [1, 2, 3]})
    with pytest.raises(RecorderError, match="rewards is empty"):
        rec.rollout_group(0, group_id="g", task_id="t", rewards=[])
    assert not (rec.evidence_dir / "rollouts.jsonl").exists()


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_bad_steps_are_refused(rec: Recorder, bad: object) -> None:
    with pytest.raises(RecorderError, match="non-negative integer"):
        rec.signal(bad, loss=1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [None, "x", True, [1]])
def test_non_numbers_are_refused(rec: Recorder, bad: object) -> None:
    with pytest.raises(RecorderError, match="expected a number"):
        rec.signal(0, loss=bad)


def test_unknown_phase_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RecorderError, match="phase: expected one of train, eval"):
        Recorder(tmp_path, run_id="r", phase="judge")


def test_uncreatable_evidence_dir_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "runs"
    blocker.write_text("a file where the runs directory should be")  # works as root too
    with pytest.raises(RecorderError) as info:
        Recorder(blocker / "r1" / "evidence" / "train", run_id="r1", phase="train")
    assert "cannot create the evidence directory" in info.value.message
    assert str(blocker) in info.value.message and "permissions" in info.value.fix


def test_unwritable_evidence_file_is_a_clear_error(tmp_path: Path) -> None:
    rec = Recorder(tmp_path, run_id="r", phase="train")
    (tmp_path / "signals.jsonl").mkdir()  # cannot be opened for appending, even by root
    with pytest.raises(RecorderError) as info:
        rec.signal(0, loss=1.0)
    assert (
        "cannot write evidence to" in info.value.message and "signals.jsonl" in info.value.message
    )
    assert rec.rows["signals"] == 0


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_read_only_evidence_dir_is_a_clear_error(tmp_path: Path) -> None:
    tmp_path.chmod(0o500)
    try:
        rec = Recorder(tmp_path, run_id="r", phase="train")
        with pytest.raises(RecorderError, match="cannot write evidence"):
            rec.signal(0, loss=1.0)
    finally:
        tmp_path.chmod(0o700)


# ----------------------------------------------------------------------------- crash safety
_WRITER = textwrap.dedent("""
    import sys
    from evotree.harness.recorder import Recorder
    rec = Recorder(sys.argv[1], run_id="crash", phase="train")
    text = "x" * int(sys.argv[2])
    step = 0
    while True:
        rec.rollout_group(step, group_id=f"g{step}", task_id="t", rewards=[1.0, 0.0, 0.5, 1.0],
                          texts=[text] * 4, commands=[["ls"]] * 4)
        rec.signal(step, loss=1.0 / (step + 1))
        step += 1
""")


@pytest.mark.parametrize("text_size", [10, 5000])  # 5000: one group is bigger than io's buffer
def test_sigkill_while_recording_loses_at_most_the_last_line(
    tmp_path: Path, text_size: int
) -> None:
    evidence = tmp_path / "evidence" / "train"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(evidence), str(text_size)])
    target = evidence / "rollouts.jsonl"
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            if target.exists() and target.stat().st_size > 400_000:
                break
            assert proc.poll() is None, "the writer died on its own"
            time.sleep(0.01)
        else:
            pytest.fail("the writer wrote too little in 30 s")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    for name in ("rollouts.jsonl", "signals.jsonl"):
        data = (evidence / name).read_bytes()
        lines = data.split(b"\n")
        complete, tail = lines[:-1], lines[-1]  # tail: b"" when the file ends with a newline
        assert len(complete) > 0
        rows = [json.loads(line) for line in complete]  # every complete line parses
        assert all(row["run_id"] == "crash" for row in rows)
        if tail:  # at most one partial last line, never valid JSON followed by more
            with pytest.raises(ValueError):
                json.loads(tail)
    rollouts = [
        json.loads(line) for line in (evidence / "rollouts.jsonl").read_bytes().split(b"\n")[:-1]
    ]
    steps = [row["step"] for row in rollouts]
    assert steps == sorted(steps)  # appended in order, nothing lost in the middle
    assert set(range(steps[-1])) <= set(steps)
