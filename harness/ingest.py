"""``evotree ingest``: import a TRL/transformers ``trainer_state.json`` as a run of a version.

Training that happened outside evotree still becomes evidence: every numeric entry of the
state's ``log_history`` becomes a signal at its ``step``. An ingested run has no judge phase,
so it has no score (a missing result is not a score of zero) and is not charged to budgets.
"""

from __future__ import annotations

import json
import math
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.core.ledger import utcnow
from evotree.core.refs import branch_ref
from evotree.core.workspace import Workspace
from evotree.harness.layout import RunPaths
from evotree.harness.recorder import Recorder
from evotree.harness.finish import finish_run
from evotree.harness.records import RunRecord, RunStatus, now_stamp, runs_dir

__all__ = ["IngestError", "ingest_tensorboard", "ingest_trainer_state", "TENSORBOARD_TRAIN_PREFIX"]

_NOT_METRICS = {"step", "epoch"}


class IngestError(EvotreeError):
    exit_code = 18
    code = "ingest_error"


def ingest_trainer_state(
    ws: Workspace, path: str | Path, *, version: str, seed: int = 0
) -> RunRecord:
    """Create a run of ``version`` whose signals are the state's ``log_history``."""
    source = Path(path)
    history = _log_history(source)
    run = _IngestedRun.open(ws, version)
    skipped = 0
    for entry in history:
        if not isinstance(entry, dict) or not isinstance(entry.get("step"), int):
            skipped += 1
            continue
        metrics = {
            k: v
            for k, v in entry.items()
            if k not in _NOT_METRICS and isinstance(v, (int, float)) and not isinstance(v, bool)
        }
        if "epoch" in entry and isinstance(entry["epoch"], (int, float)):
            metrics["epoch"] = entry["epoch"]
        if metrics:
            run.recorder.signal(entry["step"], **metrics)
    run.recorder.close()
    runtime = next(
        (
            e.get("train_runtime")
            for e in reversed(history)
            if isinstance(e, dict) and isinstance(e.get("train_runtime"), (int, float))
        ),
        0.0,
    )
    record = run.new_record(seed, f"(ingested from {source.resolve()})")
    record.notes.append(f"ingested {len(history) - skipped} log entries from {source.resolve()}")
    if skipped:
        record.notes.append(f"skipped {skipped} log entries without an integer step")
    return run.finish(record, runtime)


def _log_history(source: Path) -> list[Any]:
    """The ``log_history`` of a trainer_state.json; raises :class:`IngestError` when the file
    is missing, not JSON, or has no entry with an integer step."""
    try:
        state = json.loads(source.read_text())
    except FileNotFoundError:
        raise IngestError(
            f"{source} does not exist", fix="pass the path of a trainer_state.json"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise IngestError(
            f"{source} is not valid JSON: {exc}",
            fix="pass a trainer_state.json written by "
            "transformers' Trainer (output_dir/checkpoint-N/trainer_state.json)",
        ) from None
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise IngestError(
            f"{source} has no log_history list: not a trainer_state.json",
            fix="pass output_dir/checkpoint-N/trainer_state.json",
        )
    if not any(
        isinstance(e, dict)
        and isinstance(e.get("step"), int)
        and not isinstance(e.get("step"), bool)
        for e in history
    ):
        raise IngestError(
            f"{source}: none of its {len(history)} log_history entries has an integer step: nothing "
            "to ingest",
            fix="pass a trainer_state.json written by transformers' Trainer "
            "(output_dir/checkpoint-N/trainer_state.json)",
        )
    return history


@dataclass
class _IngestedRun:
    """A new run directory of a version for ingested signals, and the recorder writing them."""

    ws: Workspace
    version: Any  # the version's record
    tip: Any  # its branch's tip, None when the branch is gone
    run_id: str
    paths: RunPaths
    recorder: Recorder

    @classmethod
    def open(cls, ws: Workspace, version: str) -> _IngestedRun:
        """Create the run directory of a new ingested run of ``version`` and its recorder."""
        record_v = ws.resolve(version)
        tip = ws.git.ref_target(branch_ref(record_v.id))
        run_id = f"{record_v.id}-ingested-{now_stamp()}-{secrets.token_hex(3)}"
        paths = RunPaths(runs_dir(ws) / run_id)
        paths.root.mkdir(parents=True)
        recorder = Recorder(paths.evidence_dir("train"), run_id=run_id, phase="train")
        return cls(ws, record_v, tip, run_id, paths, recorder)

    def new_record(self, seed: int, train_command: str) -> RunRecord:
        """The run's record: ``ingested``, with no judge."""
        return RunRecord(
            run_id=self.run_id,
            version=self.version.id,
            seed=seed,
            status=RunStatus.INGESTED.value,
            commit=str(self.tip) if self.tip is not None else self.version.base_commit,
            judge_commit=None,
            judge_version=None,
            train_command=train_command,
            eval_command="",
            started_at=utcnow(),
        )

    def finish(self, record: RunRecord, runtime: float) -> RunRecord:
        """Save and finish the run (not charged; ``runtime``: its training's wall seconds)."""
        if self.recorder.nonfinite:
            record.notes.append(f"{self.recorder.nonfinite} non-finite values recorded and flagged")
        record.save(self.paths.record)
        finish_run(
            self.ws,
            record,
            self.paths,
            None,
            wall_seconds=float(runtime) if math.isfinite(runtime) else 0.0,
            charge=False,
        )
        return record


# ----------------------------------------------------------------------------- TensorBoard
#: The prefix transformers' TensorBoardCallback puts on training logs (``train/loss``); stripped, so
#: a run ingested from TensorBoard has the metric names of one ingested from trainer_state.json.
TENSORBOARD_TRAIN_PREFIX = "train/"


def _event_dirs(source: Path) -> list[Path]:
    return sorted({p.parent for p in source.rglob("events.out.tfevents*") if p.is_file()})


def ingest_tensorboard(
    ws: Workspace, path: str | Path, *, version: str, seed: int = 0
) -> RunRecord:
    """Create a run of ``version`` whose signals are the scalars of a TensorBoard log directory.

    ``path`` is a run directory holding ``events.out.tfevents.*`` files, or a folder with exactly
    one such directory below it (TRL's ``output_dir/runs/<date_host>/``). Every scalar
    ``(tag, step, value)`` becomes a signal, the tag stripped of ``train/`` (TRL's ``train/loss``
    -> ``loss``); read with TensorBoard's own ``EventAccumulator`` (``pip install tensorboard``).
    The run is ``ingested``: no judge phase, no score, not charged to budgets.
    """
    source = Path(path)
    directory = _event_dir(source)
    scalars = _read_scalars(directory, _event_accumulator())
    run = _IngestedRun.open(ws, version)
    for step in sorted(scalars):
        run.recorder.signal(step, **scalars[step])
    run.recorder.close()
    runtime = scalars[max(scalars)].get("train_runtime", 0.0)
    record = run.new_record(seed, f"(ingested from TensorBoard {directory.resolve()})")
    count = sum(len(v) for v in scalars.values())
    record.notes.append(
        f"ingested {count} scalars at {len(scalars)} steps from {directory.resolve()}"
    )
    return run.finish(record, runtime)


def _event_dir(source: Path) -> Path:
    """The one TensorBoard run directory at or below ``source``; raises :class:`IngestError`
    when there is none or more than one."""
    if not source.is_dir():
        raise IngestError(
            f"{source} is not a directory",
            fix="pass a TensorBoard log directory "
            "(TRL with report_to=['tensorboard'] writes output_dir/runs/<date_host>/)",
        )
    dirs = _event_dirs(source)
    if not dirs:
        raise IngestError(
            f"{source} holds no TensorBoard event file (events.out.tfevents.*)",
            fix="pass the logging_dir of a run that used report_to=['tensorboard']",
        )
    if len(dirs) > 1:
        listed = ", ".join(str(d.relative_to(source)) for d in dirs[:5])
        raise IngestError(
            f"{source} holds {len(dirs)} TensorBoard runs ({listed}{', ...' if len(dirs) > 5 else ''})",
            fix="pass one of them: each becomes its own evotree run",
        )
    return dirs[0]


def _event_accumulator() -> Any:
    """TensorBoard's ``event_accumulator`` module; raises :class:`IngestError` (a missing
    dependency) when tensorboard is not installed."""
    try:
        import tensorboard  # noqa: F401  (the package first: its submodules may be cached)
        from tensorboard.backend.event_processing import event_accumulator
    except ImportError as exc:
        missing = IngestError(
            f"reading TensorBoard files needs tensorboard ({exc.name or exc} is not installed)",
            fix="pip install 'evotree-rl[export]'  (or: pip install tensorboard)",
        )
        missing.exit_code, missing.code = 2, "missing_dependency"
        raise missing from None
    return event_accumulator


def _read_scalars(directory: Path, event_accumulator: Any) -> dict[int, dict[str, float]]:
    """``{step: {metric: value}}`` of every scalar in ``directory`` (tags without ``train/``)."""
    acc = event_accumulator.EventAccumulator(
        str(directory), size_guidance={event_accumulator.SCALARS: 0}
    )
    try:
        acc.Reload()
    except Exception as exc:  # a truncated or foreign file: tensorboard raises its own errors
        raise IngestError(
            f"{directory}: cannot read its event files: {str(exc).splitlines()[0] if str(exc) else exc!r}",
            fix="pass a directory written by TensorBoard's SummaryWriter",
        ) from None
    scalars: dict[int, dict[str, float]] = {}
    last_wall = 0.0
    for tag in acc.Tags().get(event_accumulator.SCALARS, []):
        metric = (
            tag[len(TENSORBOARD_TRAIN_PREFIX) :]
            if tag.startswith(TENSORBOARD_TRAIN_PREFIX)
            else tag
        )
        for event in acc.Scalars(tag):
            scalars.setdefault(int(event.step), {})[metric] = float(event.value)
            last_wall = max(last_wall, float(event.wall_time))
    if not scalars:
        raise IngestError(
            f"{directory} has event files but no scalars: nothing to ingest",
            fix="pass the logging_dir of a training run that logged scalars (train/loss, ...)",
        )
    return scalars
