"""Validating ``run.voided`` events against the signed policy (``evotree runs void``).

The harness keeps the evidence and the void events (:mod:`evotree.harness.integrity`); whether a
void is a valid sign-off -- an allowed signer of the signed champion's policy who did not create
the version, a signature over a statement for this workspace, version and run -- needs the policy
and the signature checks of this layer. :func:`check_void` is what the verb layer
passes to the harness (``ws.void_checker``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evotree.harness.integrity import RUN_VOID_TYPE
from evotree.gates.verify import trusted_policy
from evotree.gates.statements import anchor_commit
from evotree.gates.verify_base import check_signed_statement
from evotree.gates.verify_base import email_of

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = ["check_run_void", "check_void"]


def check_void(ws: Any, record: Any, run_id: str, data: dict[str, Any]) -> list[str]:
    """Reasons why the ``run.voided`` event ``data`` does not void ``run_id`` of ``record`` under
    the signed champion's policy ([] = it does); the policy failing to load is a reason."""

    try:
        policy = trusted_policy(ws)
    except Exception as exc:  # noqa: BLE001 - a void is honoured only under the signed policy
        return [f"the signed champion's policy cannot be established ({exc})"]
    return check_run_void(
        ws, policy, data, version=record.id, run_id=run_id, created_by=record.created_by
    )


def check_run_void(
    ws: Workspace, policy: Any, data: Any, *, version: str, run_id: str, created_by: str | None
) -> list[str]:
    """Reasons why a ``run.voided`` event's ``data`` does not void ``run_id`` of ``version`` ([] = it does).

    The statement must be an ``evotree.run-void`` of this workspace, for this version and run,
    signed by an allowed signer of ``policy`` (the signed champion's) who is not the version's
    creator as the ledger records it (``created_by``: not as the statement claims), with a reason.
    """

    if not isinstance(data, dict):
        return ["no event data"]
    statement = data.get("statement")
    reasons = check_signed_statement(
        policy,
        statement,
        data.get("signature"),
        expect_type=RUN_VOID_TYPE,
        anchor=anchor_commit(ws),
        version=version,
    )
    if not isinstance(statement, dict):
        return reasons
    if statement.get("run_id") != run_id or data.get("run_id") != run_id:
        reasons.append(f"the statement is for run {statement.get('run_id')!r}, not {run_id!r}")
    if not str(statement.get("reason") or "").strip():
        reasons.append("the statement gives no reason")
    approver = email_of(statement.get("approver"))
    if (
        created_by
        and approver
        and approver == email_of(created_by)
        and not any("created the version" in r for r in reasons)
    ):
        reasons.append(
            f"approver {statement.get('approver')} created the version ({created_by}): a version's "
            "creator cannot void its runs"
        )
    return reasons
