"""``evotree ingest``: import a TRL/transformers ``trainer_state.json`` as a run of a version.

Training that happened outside evotree still becomes evidence: every numeric entry of the
state's ``log_history`` becomes a signal at its ``step``. An ingested run has no judge phase,
so it has no score (a missing result is not a score of zero) and is not charged to budgets.
"""

from __future__ import annotations

import json
import math
import secrets
from pathlib import Path

from evotree.core.errors import EvotreeError
from evotree.core.ledger import utcnow
from evotree.core.refs import branch_ref
from evotree.core.workspace import Workspace
from evotree.harness.layout import RunPaths
from evotree.harness.recorder import Recorder
from evotree.harness.runs import RunRecord, RunStatus, finish_run, now_stamp, runs_dir

__all__ = ["IngestError", "ingest_trainer_state"]

_NOT_METRICS = {"step", "epoch"}


class IngestError(EvotreeError):
    exit_code = 18
    code = "ingest_error"


def ingest_trainer_state(ws: Workspace, path: str | Path, *, version: str, seed: int = 0) -> RunRecord:
    """Create a run of ``version`` whose signals are the state's ``log_history``."""
    source = Path(path)
    try:
        state = json.loads(source.read_text())
    except FileNotFoundError:
        raise IngestError(f"{source} does not exist", fix="pass the path of a trainer_state.json") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise IngestError(f"{source} is not valid JSON: {exc}", fix="pass a trainer_state.json written by "
                          "transformers' Trainer (output_dir/checkpoint-N/trainer_state.json)") from None
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise IngestError(f"{source} has no log_history list: not a trainer_state.json",
                          fix="pass output_dir/checkpoint-N/trainer_state.json")
    if not any(isinstance(e, dict) and isinstance(e.get("step"), int) and not isinstance(e.get("step"), bool)
               for e in history):
        raise IngestError(f"{source}: none of its {len(history)} log_history entries has an integer step: nothing "
                          "to ingest", fix="pass a trainer_state.json written by transformers' Trainer "
                          "(output_dir/checkpoint-N/trainer_state.json)")
    record_v = ws.resolve(version)
    tip = ws.git.ref_target(branch_ref(record_v.id))
    run_id = f"{record_v.id}-ingested-{now_stamp()}-{secrets.token_hex(3)}"
    paths = RunPaths(runs_dir(ws) / run_id)
    paths.root.mkdir(parents=True)
    recorder = Recorder(paths.evidence_dir("train"), run_id=run_id, phase="train")
    skipped = 0
    for entry in history:
        if not isinstance(entry, dict) or not isinstance(entry.get("step"), int):
            skipped += 1
            continue
        metrics = {k: v for k, v in entry.items()
                   if k not in _NOT_METRICS and isinstance(v, (int, float)) and not isinstance(v, bool)}
        if "epoch" in entry and isinstance(entry["epoch"], (int, float)):
            metrics["epoch"] = entry["epoch"]
        if metrics:
            recorder.signal(entry["step"], **metrics)
    recorder.close()
    runtime = next((e.get("train_runtime") for e in reversed(history)
                    if isinstance(e, dict) and isinstance(e.get("train_runtime"), (int, float))), 0.0)
    record = RunRecord(
        run_id=run_id, version=record_v.id, seed=seed, status=RunStatus.INGESTED.value,
        commit=str(tip) if tip is not None else record_v.base_commit, judge_commit=None, judge_version=None,
        train_command=f"(ingested from {source.resolve()})", eval_command="", started_at=utcnow(),
    )
    record.notes.append(f"ingested {len(history) - skipped} log entries from {source.resolve()}")
    if skipped:
        record.notes.append(f"skipped {skipped} log entries without an integer step")
    if recorder.nonfinite:
        record.notes.append(f"{recorder.nonfinite} non-finite values recorded and flagged")
    record.save(paths.record)
    finish_run(ws, record, paths, None, wall_seconds=float(runtime) if math.isfinite(runtime) else 0.0,
            charge=False)
    return record

