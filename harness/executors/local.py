"""The ``local`` executor: runs as supervised subprocesses of the ``evotree run`` process.

One worker thread per run (``jobs`` at a time). Each thread opens its own :class:`Workspace`
(pygit2 objects are not thread-safe), holds the run's ``.active`` flock (crash detection),
exports the version's commit into the run directory and runs the two phases
(:func:`evotree.harness.executors.phases.train_then_judge`); the judge is exported from the champion's
commit, with the judge store's commit the plan recorded overlaid on its judge paths
(:func:`evotree.harness.judge_store.provide_judge_tree`), into a fresh ``.evotree/judge/<run_id>-XXXX``
only after the train process group is dead. A run's deadline is the sooner of its wall limit and
the search clock's end (:func:`evotree.harness.budget.run_deadline`); a run whose turn comes after
that end is not started (:func:`clock_stopped`). Both phases run in the sandbox the champion's
``[sandbox]`` policy asks for (:class:`evotree.harness.sandbox_spec.SandboxPolicy`).

GPUs (:mod:`evotree.harness.executors.gpus`): with ``[executor].gpus = N`` each run holds ``N``
devices of its own for its whole life (both phases see only them as ``CUDA_VISIBLE_DEVICES``); a
run waits, before it starts, until that many are free, and a request whose runs ask for more than
the machine has is refused before anything runs. The devices are recorded in ``run.json``
(``executor.gpus``).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.workspace import Workspace
from evotree.harness.budget import run_deadline
from evotree.harness.executors.gpus import (
    DeviceLease,
    GpuPool,
    check_request,
    gpus_per_run,
    visible_devices,
    wait_note,
)
from evotree.harness.export import export_tree
from evotree.harness.judge_store import provide_judge_tree
from evotree.harness.layout import RunPaths
from evotree.harness.sandbox_spec import SandboxPolicy
from evotree.harness.records import (
    RunRecord,
    RunStatus,
    outcome_status,
    runs_dir,
)
from evotree.harness.sandbox_copy import copy_regular_files
from evotree.harness.executors.phases import train_then_judge
from evotree.harness.executors.run_dir import ActiveFlag, make_run_dir, open_record
from evotree.harness.finish import finish_run
from evotree.harness.finish import ledger_run_started

if TYPE_CHECKING:
    from evotree.harness.records import ProgressFn, RunPlan

__all__ = ["LocalExecutor", "execute_run", "clock_stopped"]


class _NotStarted(Exception):
    """The search clock ended before the run's phases started: none is started (not charged)."""


def clock_stopped(record: RunRecord, clock_end: float | None, *, started: float) -> bool:
    """Whether the search clock's end (``clock_end``, monotonic; :func:`run_deadline`) has come;
    if so the run is marked stopped by the budget ``tree_max_search_hours`` (status
    ``budget_exceeded``, its error naming the clock). Called before the phases start (a run that
    waited for a worker past the clock's end is not started) and after a budget stop (which
    limit stopped it: the clock, or the run's own wall limit)."""

    if clock_end is None or time.monotonic() < clock_end:
        return False
    ends_at = record.limits.get("ends_at")
    if not record.phases:
        record.error = (
            f"not started: the search clock (budget.tree_max_search_hours) ended at {ends_at}, "
            "before this run's turn came; nothing ran and nothing is charged"
        )
    elif "wall-clock limit" in (record.error or "") and clock_end <= started + float(
        record.limits.get("wall_seconds") or 0.0
    ):  # stopped by time, and the clock ended first
        record.error = (
            f"stopped at the search clock's end ({ends_at}, budget.tree_max_search_hours)"
            + (f": {record.error}" if record.error else "")
        )
    else:
        return False
    record.status = RunStatus.BUDGET_EXCEEDED.value
    return True


class LocalExecutor:
    """Runs on this machine, ``jobs`` at a time, each driven by a thread of this process.

    ``gpus``: devices each run holds (default: the workspace's ``[executor].gpus``); ``devices``:
    the devices to hand out (default: :func:`visible_devices`).
    """

    kind = "local"

    def __init__(
        self, jobs: int = 1, *, gpus: float | None = None, devices: list[str] | None = None
    ) -> None:
        self.jobs = max(1, jobs)
        self.gpus = gpus
        self.devices = devices

    def execute(
        self,
        ws: Workspace,
        plans: list[RunPlan],
        *,
        progress: ProgressFn | None,
        cancel: threading.Event,
    ) -> list[RunRecord]:
        """Execute every plan; return their final records in plan order.

        Raises :class:`ExecutorError` before anything runs when a run asks for more GPUs than exist.
        """
        root = ws.root
        per_run = gpus_per_run(ws.config.executor.gpus if self.gpus is None else self.gpus)
        if self.devices is not None:
            devices, source = list(self.devices), "the devices given to the executor"
        else:
            devices, source = visible_devices()
        shared = None
        if per_run:
            check_request(per_run, devices, source)
            gpu_pool: GpuPool | None = GpuPool(devices, ws.state_dir / "gpus")
        else:
            gpu_pool = None
            if devices and self.jobs > 1 and len(plans) > 1:
                shared = (
                    f"[executor].gpus = 0: this run was given no GPU of its own; it shared the {len(devices)} "
                    f"visible GPU(s) ({source}) with the runs beside it (set [executor].gpus to place them)"
                )

        def one(plan: RunPlan) -> RunRecord:
            notes = [shared] if shared else []
            if gpu_pool is None:
                return execute_run(root, plan, progress=progress, cancel=cancel, notes=notes)
            waiting = time.monotonic()
            notify = progress or (lambda *_: None)
            lease = gpu_pool.acquire(
                per_run,
                cancel,
                on_wait=lambda: notify(
                    plan.run_id,
                    "waiting",
                    {"for": "gpus", "gpus": per_run, "devices": len(devices)},
                ),
            )
            if lease is None:  # cancelled while it waited: it starts cancelled and stops at once
                lease = DeviceLease([])
            elif note := wait_note(per_run, waiting):
                notes.append(note)
            try:
                return execute_run(
                    root, plan, progress=progress, cancel=cancel, lease=lease, notes=notes
                )
            finally:
                lease.release()

        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = [pool.submit(one, plan) for plan in plans]
            return [f.result() for f in futures]


def _candidate_from_run(base: Path, plan: RunPlan, paths: Any, cfg: Any, record: Any) -> bool:
    """Finalize's judge-only run: the selected run's candidate folder as its train phase left it
    (the trained artifact a train -> artifact -> judge domain needs), copied as regular files only
    (no link or special file followed); False when there is none (the commit's tree is exported)."""
    if (
        plan.kind != "finalize"
        or plan.retrain
        or not plan.source_run
        or "/" in plan.source_run
        or plan.source_run.startswith(".")
    ):
        return False
    source = base / plan.source_run / "candidate"
    if source.is_symlink() or not source.is_dir():
        return False

    paths.candidate.mkdir(parents=True, exist_ok=True)
    report = copy_regular_files(
        source,
        paths.candidate,
        max_files=cfg.sandbox.candidate_max_files,
        max_bytes=cfg.sandbox.candidate_max_mb * 2**20,
    )
    record.notes.append(
        f"the judge read the trained candidate of {plan.source_run} (its train phase's outputs)"
    )
    record.notes.extend(
        f"not copied from {plan.source_run}: {item}" for item in report.refused[:20]
    )
    return True


def execute_run(
    root: Path,
    plan: RunPlan,
    *,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    lease: DeviceLease | None = None,
    notes: list[str] | None = None,
) -> RunRecord:
    """Execute one planned run to the end; always leaves a final run.json and a ledger event.

    ``lease``: the GPUs the run holds (its phases see only them); None: this process's devices.
    ``notes``: lines for the run's record (how it was placed).
    """
    ws = Workspace.open(root)  # a Repository per thread: pygit2 objects are not thread-safe
    cancel = cancel or threading.Event()
    notify = progress or (lambda *_: None)
    base = runs_dir(ws)
    paths = make_run_dir(RunPaths(base / plan.run_id))
    active = ActiveFlag(base / ".active" / plan.run_id)
    record = _new_record(plan, ws.config, lease)
    record.notes.extend(notes or [])
    record.save(paths.record)
    started = time.monotonic()
    # the sooner of its wall limit and the search clock's end (an absolute deadline: harness.budget)
    deadline, clock_end = run_deadline(record.limits, started)
    charge = True
    try:
        ledger_run_started(ws, record)
        notify(plan.run_id, "started", _started_info(plan, lease))
        if clock_stopped(
            record, clock_end, started=started
        ):  # it ended while this run waited its turn
            charge = False
            raise _NotStarted
        outcome = _run_phases(ws, base, plan, paths, record, deadline, cancel, notify, lease)
        record.status = outcome_status(outcome)
        if outcome == "budget":
            clock_stopped(record, clock_end, started=started)
    except _NotStarted:
        pass
    except BaseException as exc:
        charge = _record_exception(record, exc)
        if not isinstance(exc, Exception):
            try:
                finish_run(ws, record, paths, started)
            finally:
                active.release()
            raise
    try:
        finish_run(ws, record, paths, started, charge=charge)
    finally:
        active.release()
    notify(plan.run_id, "finished", {"status": record.status, "headline": record.headline})
    return record


def _new_record(plan: RunPlan, cfg: Any, lease: DeviceLease | None) -> RunRecord:
    """The run's first record: running, with its commands, limits, packages and placement."""
    return open_record(
        plan,
        plan.run_id,
        cfg,
        {"kind": "local", **({"gpus": list(lease.devices)} if lease is not None else {})},
        train_command="" if plan.kind == "finalize" and not plan.retrain else cfg.train.command,
        kind=plan.kind,
    )


def _started_info(plan: RunPlan, lease: DeviceLease | None) -> dict[str, Any]:
    """The ``started`` progress event's payload."""
    return {
        "version": plan.version,
        "seed": plan.seed,
        "max_steps": plan.limits.max_steps,
        **({"gpus": list(lease.devices)} if lease is not None else {}),
    }


def _run_phases(
    ws: Workspace,
    base: Path,
    plan: RunPlan,
    paths: RunPaths,
    record: RunRecord,
    deadline: float,
    cancel: threading.Event,
    notify: ProgressFn,
    lease: DeviceLease | None,
) -> str:
    """Put the candidate in the run directory, then run the phases; return their outcome."""
    cfg = ws.config
    if not _candidate_from_run(base, plan, paths, cfg, record):
        export_tree(ws.git.repo, plan.commit, paths.candidate, exclude=list(cfg.eval.judge_paths))
    return train_then_judge(
        plan,
        paths,
        record,
        train_command=cfg.train.command,
        eval_command=cfg.eval.command,
        train_timeout=cfg.train.timeout_seconds,
        eval_timeout=cfg.eval.timeout_seconds,
        deadline=deadline,
        judge_dir=base.parent / "judge" / plan.run_id,
        provide_judge=lambda target: provide_judge_tree(
            ws.git.repo, plan.judge_commit, plan.judge_data_commit, cfg.eval.judge_paths, target
        ),
        cancel=cancel,
        notify=notify,
        sandbox=SandboxPolicy.from_config(cfg.sandbox, forbidden=(ws.root,)),
        prepare_command=cfg.train.prepare,
        cache_dir=ws.state_dir / "cache",
        # the held-out evaluation of finalize: no train phase, unless it retrains clean
        judge_only=plan.kind == "finalize" and not plan.retrain,
        gpus=lease.env_value if lease is not None else None,
    )


def _record_exception(record: RunRecord, exc: BaseException) -> bool:
    """Record what stopped the run (an interrupt: cancelled; else failed); return whether the
    run is still charged (an exception is evotree's own failure, never charged)."""
    record.status = (
        RunStatus.CANCELLED.value if isinstance(exc, KeyboardInterrupt) else RunStatus.FAILED.value
    )
    record.error = record.error or f"{type(exc).__name__}: {exc}"
    if isinstance(exc, Exception):
        # the candidate's failures arrive as outcomes, not exceptions: this one is evotree's own
        # (the harness, a renderer, the disk), and a failure of evotree's is never charged
        record.notes.append(
            "evotree failed while running this run (not the candidate): not charged"
        )
        return False
    return True
