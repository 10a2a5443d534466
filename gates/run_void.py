"""Voiding a run: a signed decision that takes a run whose evidence cannot be counted out of its
version's evidence (``evotree runs void``).

Only a run the ledger records whose evidence is missing, tampered, unfinished or unverified may
be voided (a run that counts is never taken out of a comparison by a signature: that would be
choosing seeds); a version's creator never voids its runs.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from evotree.core.errors import InvalidState, UnknownVersion
from evotree.core.events import RunVoided
from evotree.core.ledger import Event, LedgerTxn
from evotree.gates.errors import SignoffRefused
from evotree.gates.statements import new_statement, sign_statement
from evotree.gates.verify_base import email_of
from evotree.harness.integrity import PROBLEM_STATES, RUN_VOID_TYPE, find_run, verify_run_evidence

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace
    from evotree.gates.policy import Policy

__all__ = ["RunVoidResult", "record_run_void", "void_candidate"]


@dataclass
class RunVoidResult:
    """What ``evotree runs void --json`` prints: the run taken out of the evidence, by whom and why."""

    run_id: str
    version: str
    seed: int | None
    state_before: str
    headline: dict[str, Any] | None
    reason: str
    approver: str
    created_by: str
    ledger_commit: str

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


def void_candidate(ws: Workspace, run_id: str) -> tuple[Any, Any]:
    """(the version record, the run's :class:`~evotree.harness.integrity.RunEvidence`) of a run that may be voided.

    Only a run the ledger records whose evidence cannot be counted (missing, tampered,
    unfinished, unverified) may be voided: a run that counts is not taken out of a comparison
    by a signature (that would be choosing seeds), and a running one finishes first.
    """

    found = find_run(ws, run_id)
    if found is None:
        raise UnknownVersion(
            f"the ledger records no run {run_id!r}", fix="`evotree runs` lists the runs"
        )
    record = ws.resolve(found[0])
    check = verify_run_evidence(ws, record.id)
    voided = next((r for r in check.voided if r.run_id == run_id), None)
    if voided is not None:
        raise InvalidState(
            f"run {run_id} is already voided (by {(voided.void or {}).get('approver')}: "
            f"{(voided.void or {}).get('reason')})",
            fix="nothing to do",
        )
    run = check.run(run_id)
    if run is None:
        raise UnknownVersion(
            f"the ledger records no run {run_id!r} of {record.id}",
            fix="`evotree runs` lists the runs",
        )
    if run.state not in PROBLEM_STATES:
        raise InvalidState(
            f"run {run_id} of {record.id} is {run.state}: only a run whose evidence cannot be counted (missing, "
            "tampered, unfinished, unverified) may be voided",
            fix="a run that counts stays counted; wait for a running one to finish"
            if run.state == "running"
            else "a run that counts stays counted",
        )
    return record, run


def record_run_void(
    ws: Workspace, policy: Policy, approver: Any, run_id: str, reason: str
) -> RunVoidResult:
    """Sign and record ``run.voided``: ``run_id`` leaves the evidence of its version, for ``reason``.

    ``policy`` from :func:`evotree.gates.verify.trusted_policy`, ``approver`` from
    :func:`evotree.gates.signoff.approver_for` with the version's creator (an agent never voids
    its own version's runs; refused here too). The signed statement (``evotree.run-void``)
    names the version, the run, its seed, its state, the headline the ledger recorded for it,
    the reason and the version's creator; :func:`evotree.harness.integrity.verify_run_evidence`
    honours it only while it verifies.
    """

    reason = reason.strip()
    if not reason:
        raise InvalidState(
            "--reason: a void needs a reason (it is signed and shown wherever the run is listed)",
            fix="pass --reason TEXT",
        )
    record, run = void_candidate(ws, run_id)
    if email_of(record.created_by) == email_of(approver.principal):
        raise SignoffRefused(
            f"the approver ({approver.principal}) created {record.id} ({record.created_by}): a "
            "version's creator cannot void its runs",
            fix="another person listed in the allowed signers signs the void",
        )
    statement = new_statement(
        ws,
        RUN_VOID_TYPE,
        approver,
        version=record.id,
        run_id=run.run_id,
        seed=run.seed,
        state=run.state,
        headline=run.headline,
        reason=reason,
        created_by=record.created_by,
        champion=policy.champion,
    )
    signature = sign_statement(policy, approver, statement)

    def change(txn: LedgerTxn) -> Event:
        txn.require(record.id)
        voided = RunVoided(
            run_id=run.run_id, reason=reason, statement=statement, signature=signature
        )
        return Event.of(voided, version=record.id, actor=str(ws.git.identity()), at=statement["at"])

    entry = ws.ledger.transact(change, actor=ws.git.identity())
    return RunVoidResult(
        run.run_id,
        record.id,
        run.seed,
        run.state,
        run.headline,
        reason,
        approver.principal,
        str(record.created_by),
        entry.commit,
    )
