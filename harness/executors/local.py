"""The ``local`` executor: runs as supervised subprocesses of the ``evotree run`` process.

One worker thread per run (``jobs`` at a time). Each thread opens its own :class:`Workspace`
(pygit2 objects are not thread-safe), holds the run's ``.active`` flock (crash detection),
exports the version's commit into the run directory and runs the two phases
(:func:`evotree.harness.executors.phases.train_then_judge`); the judge is exported from the champion's
commit, with the judge store's commit the plan recorded overlaid on its judge paths
(:func:`evotree.harness.judge_store.provide_judge_tree`), into a fresh ``.evotree/judge/<run_id>-XXXX``
only after the train process group is dead. Both phases run in the sandbox the champion's
``[sandbox]`` policy asks for (:class:`evotree.harness.sandbox.SandboxPolicy`).
"""

from __future__ import annotations

import fcntl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from evotree.core.ledger import utcnow
from evotree.core.workspace import Workspace
from evotree.harness.export import export_tree
from evotree.harness.judge_store import provide_judge_tree
from evotree.harness.layout import RunPaths
from evotree.harness.sandbox import SandboxPolicy

if TYPE_CHECKING:
    from evotree.harness.runs import ProgressFn, RunPlan, RunRecord

__all__ = ["LocalExecutor", "execute_run"]


class LocalExecutor:
    """Runs on this machine, ``jobs`` at a time, each driven by a thread of this process."""

    kind = "local"

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = max(1, jobs)

    def execute(
        self, ws: Workspace, plans: list[RunPlan], *, progress: ProgressFn | None, cancel: threading.Event
    ) -> list[RunRecord]:
        """Execute every plan; return their final records in plan order."""
        root = ws.root
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = [pool.submit(execute_run, root, plan, progress=progress, cancel=cancel) for plan in plans]
            return [f.result() for f in futures]


def execute_run(
    root: Path, plan: RunPlan, *, progress: ProgressFn | None = None, cancel: threading.Event | None = None
) -> RunRecord:
    """Execute one planned run to the end; always leaves a final run.json and a ledger event."""
    from evotree.harness.executors.phases import train_then_judge
    from evotree.harness.runs import (
        RunDirError,
        RunRecord,
        RunStatus,
        finish_run,
        _ledger_run_started,
        _package_versions,
        outcome_status,
        runs_dir,
    )

    ws = Workspace.open(root)  # a Repository per thread: pygit2 objects are not thread-safe
    cfg = ws.config
    cancel = cancel or threading.Event()
    notify = progress or (lambda *_: None)
    base = runs_dir(ws)
    paths = RunPaths(base / plan.run_id)
    try:
        paths.root.mkdir(parents=True)
        (paths.root / "logs").mkdir()
    except OSError as exc:
        raise RunDirError(f"cannot create the run directory {paths.root}: {exc.strerror}",
                          fix="check permissions and free space of the runs directory") from None
    marker = base / ".active" / plan.run_id
    lock = open(marker, "a+")  # noqa: SIM115 - held for the run's life (crash detection)
    fcntl.flock(lock, fcntl.LOCK_EX)
    record = RunRecord(
        run_id=plan.run_id, version=plan.version, seed=plan.seed, status=RunStatus.RUNNING.value,
        commit=plan.commit, judge_commit=plan.judge_commit, judge_version=plan.judge_version,
        train_command=cfg.train.command, eval_command=cfg.eval.command, started_at=utcnow(),
        packages=_package_versions(), limits=plan.limits.to_dict(), executor={"kind": "local"},
        judge_data_commit=plan.judge_data_commit,
    )
    record.save(paths.record)
    started = time.monotonic()
    try:
        _ledger_run_started(ws, record)
        notify(plan.run_id, "started", {"version": plan.version, "seed": plan.seed,
                                        "max_steps": plan.limits.max_steps})
        export_tree(ws.git.repo, plan.commit, paths.candidate, exclude=list(cfg.eval.judge_paths))
        outcome = train_then_judge(
            plan, paths, record, train_command=cfg.train.command, eval_command=cfg.eval.command,
            train_timeout=cfg.train.timeout_seconds, eval_timeout=cfg.eval.timeout_seconds,
            deadline=started + plan.limits.wall_seconds, judge_dir=base.parent / "judge" / plan.run_id,
            provide_judge=lambda target: provide_judge_tree(ws.git.repo, plan.judge_commit, plan.judge_data_commit,
                                                            cfg.eval.judge_paths, target),
            cancel=cancel, notify=notify, sandbox=SandboxPolicy.from_config(cfg.sandbox, forbidden=(ws.root,)),
            prepare_command=cfg.train.prepare, cache_dir=ws.state_dir / "cache",
        )
        record.status = outcome_status(outcome)
    except BaseException as exc:
        record.status = RunStatus.CANCELLED.value if isinstance(exc, KeyboardInterrupt) else RunStatus.FAILED.value
        record.error = record.error or f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, Exception):
            try:
                finish_run(ws, record, paths, started)
            finally:
                marker.unlink(missing_ok=True)
                lock.close()
            raise
    try:
        finish_run(ws, record, paths, started)
    finally:
        marker.unlink(missing_ok=True)
        lock.close()
    notify(plan.run_id, "finished", {"status": record.status, "headline": record.headline})
    return record
