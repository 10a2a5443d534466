"""Executors: where the runs of ``evotree run`` execute.

An executor takes planned runs (:class:`evotree.harness.records.RunPlan`) and returns their final records
(:class:`evotree.harness.records.RunRecord`), in plan order. Planning, budgets, the judging policy and the
ledger stay with the calling process whatever the executor:

- ``local`` (:mod:`evotree.harness.executors.local`): threads of this process, ``jobs`` at a time;
- ``ray`` (:mod:`evotree.harness.executors.ray`): one Ray task per run on a cluster, with the resources
  of ``[executor]``; evidence travels through an evidence store (:mod:`evotree.harness.executors.store`);
- ``slurm`` (:mod:`evotree.harness.executors.slurm`): one Slurm job per run through submitit, the same
  sandbox on the node, evidence through the same store.

Ray and submitit are imported only when their executor is used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evotree.harness.executors.base import EXECUTOR_KINDS, Executor, ExecutorError

if TYPE_CHECKING:
    from evotree.core.config_execution import ExecutorSection

__all__ = ["EXECUTOR_KINDS", "Executor", "ExecutorError", "make_executor"]


def make_executor(
    section: ExecutorSection,
    *,
    kind: str | None = None,
    jobs: int | None = None,
    address: str | None = None,
) -> Executor:
    """The executor ``kind`` (default ``[executor].kind``), configured from ``[executor]``.

    ``jobs`` and ``address`` override the section's values for this request.
    """
    kind = kind or section.kind
    if kind == "local":
        from evotree.harness.executors.local import LocalExecutor

        return LocalExecutor(jobs or section.jobs)
    if kind == "ray":
        from evotree.harness.executors.ray import RayExecutor

        return RayExecutor(section, address=address)
    if kind == "slurm":
        from evotree.harness.executors.slurm import SlurmExecutor

        return SlurmExecutor(section)
    raise ExecutorError(
        f"unknown executor {kind!r}; expected one of {', '.join(EXECUTOR_KINDS)}",
        fix="pass --executor local, ray or slurm",
    )
