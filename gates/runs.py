"""Runs with the train gate in front: the entry points the CLI, the API and the agent server call.

:mod:`evotree.harness.runs` plans and executes runs but never decides who may train; it asks an
``authorize`` callback it is given. These wrappers give it :func:`~evotree.gates.train_gate.train_gate_authorizer`
(costly runs need a person's signed approval, the threshold taken from the signed champion; its
re-check runs in the compare-and-swap that reserves the runs), so every caller above the harness
— the CLI, the API, the agent server — gets the same check without the harness importing the gates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evotree.gates.train_gate import train_gate_authorizer
from evotree.harness.runs import RunPlan, RunRecord
from evotree.harness.runs import plan_runs as _plan_runs
from evotree.harness.execute import run_versions as _run_versions

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = ["plan_runs", "run_versions"]


def plan_runs(ws: Workspace, versions: list[str], **options: Any) -> list[RunPlan]:
    """:func:`evotree.harness.runs.plan_runs` with the train gate as its authorizer."""
    return _plan_runs(ws, versions, authorize=train_gate_authorizer, **options)


def run_versions(ws: Workspace, versions: list[str], **options: Any) -> list[RunRecord]:
    """:func:`evotree.harness.runs.run_versions` with the train gate as its authorizer.

    Options are those of the harness function: ``seeds``, ``seed_start``, ``jobs``, ``heldout``,
    ``progress``, ``cancel``, ``executor``, ``address``.
    """
    return _run_versions(ws, versions, authorize=train_gate_authorizer, **options)
