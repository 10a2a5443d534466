"""What runs inside a Slurm job (through submitit): one run's phases, on the node the job landed on.

:func:`run_job` is the function the driver (:mod:`evotree.harness.executors.slurm`) submits per run
(one version × seed per job). submitit pickles it with its ``spec`` into the job folder, which the
driver and the nodes share, and pickles its return value (the run's manifest) back there. The job

1. reads the run's judge archive (``<folder>/judge/<run_id>.tar.gz``, mode 0600, written by the
   driver) into memory and deletes it: no file of it is left while the candidate's code runs
   (the sandbox does not show the job folder either);
2. extracts the candidate archive (the version's exported commit without the judge paths,
   content-addressed in ``<folder>/packages/``) into a node-local scratch run directory and checks
   its file count;
3. writes ``worker.json`` to the evidence store, runs the train phase in the sandbox of
   ``spec["sandbox"]`` (``SLURM_*`` and ``SUBMITIT_*`` variables dropped from the phases'
   environment; Slurm's ``CUDA_VISIBLE_DEVICES`` kept), copying partial evidence to the store
   every ``sync_seconds``;
4. once every train process is dead, extracts the judge from memory outside the run directory,
   runs the eval phase and deletes it;
5. copies all evidence to the store, writes ``manifest.json`` last and returns it.

``scancel`` (SIGTERM), submitit's local cancel (SIGINT) and Slurm's pre-emption or time-limit
warning (SIGUSR2) stop the phase the way the local executor stops it (SIGTERM, grace, SIGKILL);
the run is reported ``cancelled`` with the reason, never requeued.
"""

from __future__ import annotations

import os
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from evotree.harness.executors.node import (
    NodeRun,
    extract_archive,
    plan_from_spec,
    record_failure,
    record_from_spec,
)
from evotree.harness.executors.store import WORKER
from evotree.harness.records import RunStatus, outcome_status

__all__ = ["judge_archive", "run_job", "scratch_dirs"]

_STOP_SIGNALS = {
    signal.SIGTERM: "scancel or the end of the job (SIGTERM)",
    signal.SIGINT: "cancelled (SIGINT)",
    signal.SIGUSR2: "pre-empted or at its time limit (SIGUSR2)",
}


def scratch_dirs(run_id: str) -> tuple[Path, Path]:
    """(node-local run directory, judge directory outside it) of ``run_id`` on this node."""
    base = Path(tempfile.gettempdir())
    return base / "evotree-slurm" / run_id, base / "evotree-slurm-judge" / run_id


def judge_archive(folder: Path, run_id: str) -> Path:
    """Where the driver leaves a run's judge archive for its job (read once, then deleted)."""
    return folder / "judge" / f"{run_id}.tar.gz"


def run_job(spec: dict[str, Any]) -> dict[str, Any]:
    """Execute one run in this Slurm job; return its manifest (also written to the store)."""
    started = time.monotonic()
    run_id = spec["run_id"]
    cancel, why = _catch_stop_signals()
    judge_bytes = _take_judge_archive(Path(spec["judge_archive"]))
    node = NodeRun.open(spec, scratch_dirs(run_id), started)
    worker = _worker_info(run_id)
    node.store.put_json(run_id, WORKER, worker)
    plan = plan_from_spec(spec)
    record = record_from_spec(spec, plan)
    syncer = node.syncer()
    try:
        node.take_candidate(Path(spec["candidate_archive"]), "archive")
        syncer.start()
        outcome = node.run_phases(
            plan,
            record,
            provide_judge=lambda target: extract_archive(judge_bytes, target),
            cancel=cancel,
            notify=lambda *_: None,
            drop_env=("SLURM_", "SUBMITIT_"),
            cache_name="evotree-slurm-cache",  # node-local, shared by its runs
        )
        record.status = outcome_status(outcome)
        if record.status == RunStatus.CANCELLED.value or cancel.is_set():
            record.status = RunStatus.CANCELLED.value
            # scancel signals every process of the job: the phase may have ended of it first
            stopped = f"stopped on the node: {'; '.join(why) or 'cancelled'}"
            record.error = f"{stopped} ({record.error})" if record.error else stopped
    except Exception as exc:  # noqa: BLE001 - reported to the driver in the manifest
        record_failure(record, exc)
    finally:
        syncer.stop.set()
        judge_bytes = b""
    try:
        return node.finish(record, syncer, {k: worker[k] for k in _SUMMARY_KEYS})
    finally:
        node.remove()


#: The worker record's fields the manifest's summary repeats.
_SUMMARY_KEYS = ("node_id", "worker_pid", "host", "started_at", "job_id")


def _catch_stop_signals() -> tuple[threading.Event, list[str]]:
    """Turn Slurm's and submitit's stop signals into a cancel event and the reasons received."""
    cancel = threading.Event()
    why: list[str] = []

    def stop(signum: int, _frame: Any) -> None:
        why.append(_STOP_SIGNALS.get(signal.Signals(signum), signal.Signals(signum).name))
        cancel.set()

    for signum in _STOP_SIGNALS:  # after submitit's own handlers: ours decide (no requeue)
        signal.signal(signum, stop)
    return cancel, why


def _take_judge_archive(judge_file: Path) -> bytes:
    """Read the run's judge archive into memory and delete the file (none left while code runs)."""
    judge_bytes = judge_file.read_bytes()
    judge_file.unlink(missing_ok=True)
    return judge_bytes


def _worker_info(run_id: str) -> dict[str, Any]:
    """The worker record of this job (``worker.json``): where it runs and what it holds."""
    return {
        "run_id": run_id,
        "worker_pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": time.time(),
        "job_id": os.environ.get("SLURM_JOB_ID") or os.environ.get("SUBMITIT_LOCAL_JOB_ID") or "",
        "node_id": os.environ.get("SLURMD_NODENAME") or socket.gethostname(),
        "gpus": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
