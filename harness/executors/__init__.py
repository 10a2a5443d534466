"""Executors: where the runs of ``evotree run`` execute.

An executor takes planned runs (:class:`harness.runs.RunPlan`) and returns their final records
(:class:`harness.runs.RunRecord`), in plan order. Planning, budgets, the judging policy and the
ledger stay with the calling process whatever the executor:

- ``local`` (:mod:`harness.executors.local`): threads of this process, ``jobs`` at a time;
- ``ray`` (:mod:`harness.executors.ray`): one Ray task per run on a cluster, with the resources
  of ``[executor]``; evidence travels through an evidence store (:mod:`harness.executors.store`).

Ray is imported only when the ray executor is used.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

from evotree.errors import EvotreeError

if TYPE_CHECKING:
    from evotree.config import ExecutorSection
    from evotree.workspace import Workspace
    from harness.runs import ProgressFn, RunPlan, RunRecord

__all__ = ["EXECUTOR_KINDS", "Executor", "ExecutorError", "make_executor"]

EXECUTOR_KINDS = ("local", "ray")


class ExecutorError(EvotreeError):
    """Ray missing, a cluster that cannot be reached, or an evidence store that cannot be used."""

    exit_code = 35
    code = "executor_error"


class Executor(Protocol):
    """Executes planned runs and returns their final records in plan order."""

    kind: str

    def execute(
        self, ws: Workspace, plans: list[RunPlan], *, progress: ProgressFn | None, cancel: threading.Event
    ) -> list[RunRecord]:
        """Run every plan to a final record (run.json written, run.finished in the ledger)."""
        ...


def make_executor(
    section: ExecutorSection, *, kind: str | None = None, jobs: int | None = None, address: str | None = None
) -> Executor:
    """The executor ``kind`` (default ``[executor].kind``), configured from ``[executor]``.

    ``jobs`` and ``address`` override the section's values for this request.
    """
    kind = kind or section.kind
    if kind == "local":
        from harness.executors.local import LocalExecutor

        return LocalExecutor(jobs or section.jobs)
    if kind == "ray":
        from harness.executors.ray import RayExecutor

        return RayExecutor(section, address=address)
    raise ExecutorError(f"unknown executor {kind!r}; expected one of {', '.join(EXECUTOR_KINDS)}",
                        fix="pass --executor local or --executor ray")
