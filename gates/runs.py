"""Runs with the train gate in front: the entry points the CLI, the API and the agent server call.

:mod:`evotree.harness.planning` plans and :mod:`evotree.harness.execute` executes runs but
never decides who may train; it asks an ``authorize`` callback it is given. These wrappers give it :func:`~evotree.gates.train_gate.train_gate_authorizer`
(costly runs need a person's signed approval, the threshold taken from the signed champion; its
re-check runs in the compare-and-swap that reserves the runs), so every caller above the harness
— the CLI, the API, the agent server — gets the same check without the harness importing the gates.

Before the train gate, the patch gate (:func:`~evotree.gates.patch.patch_authorizer`): a version
whose patch against the pristine base breaks the patch rules is refused (exit 40) before anything
is planned, reserved or charged, and its branch must still be at the checked commit when the
runs are reserved.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evotree.gates.patch import patch_authorizer
from evotree.gates.train_gate import train_gate_authorizer
from evotree.harness.records import RunPlan, RunRecord
from evotree.harness.planning import plan_runs as _plan_runs
from evotree.harness.execute import run_versions as _run_versions

if TYPE_CHECKING:
    from evotree.core.ledger import LedgerTxn
    from evotree.core.workspace import Workspace

__all__ = ["authorize_runs", "plan_runs", "run_versions"]


def authorize_runs(ws: Workspace, requests: Mapping[str, int]) -> Any:
    """The authorizer every caller gets: the patch gate, then the train gate; both re-checked
    in the compare-and-swap that reserves the runs."""
    patch_recheck = patch_authorizer(ws, requests)
    train_recheck = train_gate_authorizer(ws, requests)

    def recheck(txn: LedgerTxn, runs_of: Mapping[str, int], commits: Mapping[str, str]) -> None:
        patch_recheck(txn, runs_of, commits)
        if callable(train_recheck):
            train_recheck(txn, runs_of, commits)

    return recheck


def plan_runs(ws: Workspace, versions: list[str], **options: Any) -> list[RunPlan]:
    """:func:`evotree.harness.planning.plan_runs` with the patch and train gates as its authorizer."""
    return _plan_runs(ws, versions, authorize=authorize_runs, **options)


def run_versions(ws: Workspace, versions: list[str], **options: Any) -> list[RunRecord]:
    """:func:`evotree.harness.execute.run_versions` with the patch and train gates as its authorizer.

    Options are those of the harness function: ``seeds``, ``seed_start``, ``jobs``, ``heldout``,
    ``progress``, ``cancel``, ``executor``, ``address``.
    """
    return _run_versions(ws, versions, authorize=authorize_runs, **options)
