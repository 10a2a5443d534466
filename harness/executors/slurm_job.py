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
import shutil
import signal
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from evotree.harness.budget import RunLimits
from evotree.harness.budget import run_deadline
from evotree.harness.executors.phases import train_then_judge
from evotree.harness.executors.node import Syncer
from evotree.harness.executors.node import extract_archive
from evotree.harness.executors.store import WORKER
from evotree.harness.executors.store import EvidenceStore
from evotree.harness.layout import RunPaths
from evotree.harness.records import RunPlan
from evotree.harness.records import RunRecord
from evotree.harness.records import RunStatus
from evotree.harness.records import outcome_status
from evotree.harness.sandbox import SandboxPolicy

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
    cancel = threading.Event()
    why: list[str] = []

    def stop(signum: int, _frame: Any) -> None:
        why.append(_STOP_SIGNALS.get(signal.Signals(signum), signal.Signals(signum).name))
        cancel.set()

    for signum in _STOP_SIGNALS:  # after submitit's own handlers: ours decide (no requeue)
        signal.signal(signum, stop)
    judge_file = Path(spec["judge_archive"])
    judge_bytes = judge_file.read_bytes()
    judge_file.unlink(missing_ok=True)
    store = EvidenceStore(spec["store_uri"])
    scratch, judge_dir = scratch_dirs(run_id)
    shutil.rmtree(scratch, ignore_errors=True)
    paths = RunPaths(scratch)
    (paths.root / "logs").mkdir(parents=True)
    worker = {
        "run_id": run_id,
        "worker_pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": time.time(),
        "job_id": os.environ.get("SLURM_JOB_ID") or os.environ.get("SUBMITIT_LOCAL_JOB_ID") or "",
        "node_id": os.environ.get("SLURMD_NODENAME") or socket.gethostname(),
        "gpus": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
    store.put_json(run_id, WORKER, worker)
    plan = RunPlan(
        run_id=run_id,
        version=spec["version"],
        seed=spec["seed"],
        commit=spec["commit"],
        judge_commit=spec["judge_commit"],
        judge_version=spec["judge_version"],
        limits=RunLimits(**spec["limits"]),
        judge_splits=tuple(spec["judge_splits"]),
    )
    record = RunRecord(
        run_id=run_id,
        version=plan.version,
        seed=plan.seed,
        status=RunStatus.RUNNING.value,
        commit=plan.commit,
        judge_commit=plan.judge_commit,
        judge_version=plan.judge_version,
        train_command=spec["train_command"],
        eval_command=spec["eval_command"],
        started_at="",
        limits=spec["limits"],
    )
    syncer = Syncer(store, run_id, paths.root, float(spec["sync_seconds"]))
    try:
        count = extract_archive(Path(spec["candidate_archive"]), paths.candidate)
        if count != spec["candidate_files"]:
            raise RuntimeError(
                f"the candidate archive has {count} files, the exported commit "
                f"{spec['candidate_files']}"
            )
        syncer.start()
        outcome = train_then_judge(
            plan,
            paths,
            record,
            train_command=spec["train_command"],
            eval_command=spec["eval_command"],
            train_timeout=spec["train_timeout"],
            eval_timeout=spec["eval_timeout"],
            deadline=run_deadline(spec["limits"], started)[0],
            judge_dir=judge_dir,
            provide_judge=lambda target: extract_archive(judge_bytes, target),
            cancel=cancel,
            notify=lambda *_: None,
            drop_env=("SLURM_", "SUBMITIT_"),
            reaper=True,
            sandbox=SandboxPolicy.from_dict(spec.get("sandbox")),
            prepare_command=spec.get("prepare_command") or "",
            cache_dir=scratch.parent.parent
            / "evotree-slurm-cache",  # node-local, shared by its runs
        )
        record.status = outcome_status(outcome)
        if record.status == RunStatus.CANCELLED.value or cancel.is_set():
            record.status = RunStatus.CANCELLED.value
            record.error = record.error or f"stopped on the node: {'; '.join(why) or 'cancelled'}"
    except Exception as exc:  # noqa: BLE001 - reported to the driver in the manifest
        record.status = RunStatus.FAILED.value
        record.error = record.error or f"{type(exc).__name__}: {exc}"
    finally:
        syncer.stop.set()
        judge_bytes = b""
    try:
        if syncer.is_alive():
            syncer.join(timeout=30)
        if syncer.error:
            record.notes.append(f"a partial copy to the evidence store failed once: {syncer.error}")
        summary = {
            "status": record.status,
            "error": record.error,
            "notes": record.notes,
            "phases": record.phases,
            "cpu_seconds": record.cpu_seconds,
            "wall_seconds": round(time.monotonic() - started, 3),
            **{k: worker[k] for k in ("node_id", "worker_pid", "host", "started_at", "job_id")},
        }
        return store.finish(run_id, paths.root, summary)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(judge_dir, ignore_errors=True)
