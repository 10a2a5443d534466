"""The executor contract shared by every executor: :class:`Executor`, :class:`ExecutorError`.

Executors import this module, never the package's ``__init__`` (which imports them to build one).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Protocol

from evotree.harness.executors.errors import ExecutorError

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace
    from evotree.harness.records import ProgressFn, RunPlan, RunRecord

__all__ = ["EXECUTOR_KINDS", "Executor", "ExecutorError"]

EXECUTOR_KINDS = ("local", "ray", "slurm")


class Executor(Protocol):
    """Executes planned runs and returns their final records in plan order."""

    kind: str

    def execute(
        self,
        ws: Workspace,
        plans: list[RunPlan],
        *,
        progress: ProgressFn | None,
        cancel: threading.Event,
    ) -> list[RunRecord]:
        """Run every plan to a final record (run.json written, run.finished in the ledger)."""
        ...
