"""Executing a request: plan every run, hand the plans to an executor, handle Ctrl-C.

Kept apart from the run records, planning and finishing (:mod:`evotree.harness.records`,
:mod:`evotree.harness.planning`, :mod:`evotree.harness.finish`) so that the executors, which
build on those records, are imported by this module and never the other way.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError
from evotree.harness.executors import make_executor
from evotree.harness.planning import RunAuthorizer, plan_runs
from evotree.harness.records import (
    ProgressFn,
    RunDirError,
    RunRecord,
    RunStatus,
    RunsCancelled,
    runs_dir,
)
from evotree.harness.reservations import release_reservations

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = ["run_versions"]


def run_versions(
    ws: Workspace,
    versions: list[str],
    *,
    authorize: RunAuthorizer,
    seeds: int = 1,
    jobs: int | None = None,
    heldout: bool = False,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    executor: str | None = None,
    address: str | None = None,
    seed_start: int = 0,
) -> list[RunRecord]:
    """Plan and execute runs of ``versions`` × ``seeds``; return their records in plan order.

    ``heldout`` asks the judge to score the held-out split too (for the selected candidate).
    ``executor`` (``local`` / ``ray``, default ``[executor].kind``) decides where runs execute;
    ``jobs`` bounds the local executor, ``address`` names the Ray cluster (default
    ``[executor].address``; empty starts a local Ray instance for this call).

    The runs are reserved in the ledger before anything starts (``plan_runs(reserve=True)``:
    budgets and the authorizer's approval are checked in that compare-and-swap); whatever
    ends the request — done, refused by the executor, cancelled, an error — the reservations of
    runs that never started are released (``run.released``) before this returns.
    """
    plans = plan_runs(
        ws,
        versions,
        authorize=authorize,
        seeds=seeds,
        heldout=heldout,
        seed_start=seed_start,
        reserve=True,
    )
    if progress is not None:  # a budget split that cuts runs short is said before they start
        said: set[str] = set()
        for plan in plans:
            for note in getattr(plan.limits, "notes", []):
                if note not in said:
                    said.add(note)
                    progress(plan.run_id, "budget", {"version": plan.version, "note": note})
    try:
        return _execute(
            ws,
            plans,
            jobs=jobs,
            progress=progress,
            cancel=cancel,
            executor=executor,
            address=address,
        )
    finally:
        try:
            release_reservations(
                ws,
                [plan.run_id for plan in plans],
                reason="the request ended before these runs started",
            )
        except EvotreeError:
            pass  # left to the owner-death release: this process ends, its reservations are freed


def _execute(
    ws: Workspace,
    plans: list[Any],
    *,
    jobs: int | None,
    progress: ProgressFn | None,
    cancel: threading.Event | None,
    executor: str | None,
    address: str | None,
) -> list[RunRecord]:
    runner = make_executor(ws.config.executor, kind=executor, jobs=jobs, address=address)
    cancel = cancel or threading.Event()
    base = runs_dir(ws)
    try:
        (base / ".active").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(
            f"cannot create the runs directory {base}: {exc.strerror}",
            fix="check permissions and free space, or set [workspace].runs_dir",
        ) from None
    if not os.access(base, os.W_OK):
        raise RunDirError(
            f"the runs directory {base} is not writable",
            fix="check its permissions, or set [workspace].runs_dir to a writable place",
        )
    # Ctrl-C only sets the cancel event (a handler, not a KeyboardInterrupt that could strike
    # while a lock is held): each run then stops its processes (or Ray tasks) and is marked
    # `cancelled`. A second Ctrl-C aborts.
    interrupted = threading.Event()
    previous = _install_sigint(
        lambda *_: (interrupted.set(), cancel.set(), _restore_sigint(previous))
    )
    try:
        records = runner.execute(ws, plans, progress=progress, cancel=cancel)
    finally:
        _restore_sigint(previous)
    if interrupted.is_set():
        raise RunsCancelled(
            f"cancelled: {sum(r.status == RunStatus.CANCELLED.value for r in records)} run(s) stopped "
            "and marked cancelled; runs that had finished are kept",
            fix="`evotree runs` lists them",
            runs=[r.run_id for r in records],
        )
    return records


def _install_sigint(handler: Callable[..., Any]) -> Any:
    """Install a SIGINT handler when called from the main thread; return the previous one."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, handler)


def _restore_sigint(previous: Any) -> None:
    if previous is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, previous)
