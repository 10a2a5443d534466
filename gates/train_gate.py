"""The train gate: runs whose budgeted cost is above ``[gates].train_approval_above_seconds``
start only with a person's signed ``run.approved`` for that version's commit.

Cost of a request for one version = ``[budget].max_wall_seconds`` × the number of its runs
(the most it may spend). An approval covers ``runs`` runs of one commit of one version; runs of
that version started after the approval count against it. Its signature is checked against the
allowed signers of the (verified) champion, so a forged or self-made approval does not open it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gates.errors import GateFailed

if TYPE_CHECKING:
    from evotree.workspace import Workspace

__all__ = ["TrainGateCheck", "train_gate"]


@dataclass
class TrainGateCheck:
    """Whether one version's requested runs may start, and why."""

    version: str
    cost_seconds: float
    threshold: int
    needs_approval: bool
    approved_runs: int = 0
    used_runs: int = 0


def train_gate(ws: Workspace, requests: dict[str, int]) -> list[TrainGateCheck]:
    """Check ``{version: runs}`` before anything starts; :class:`GateFailed` when a costly request is unapproved."""
    cfg = ws.config
    threshold = cfg.gates.train_approval_above_seconds
    if threshold <= 0:
        return []
    checks: list[TrainGateCheck] = []
    policy = None
    for version, runs in requests.items():
        cost = float(cfg.budget.max_wall_seconds) * runs
        check = TrainGateCheck(version, cost, threshold, cost > threshold)
        checks.append(check)
        if not check.needs_approval:
            continue
        if policy is None:
            from gates.policy import trusted_policy

            policy = trusted_policy(ws)  # raises TamperingFound when the champion is not signed-for
        approved, used = _approved_runs(ws, policy, version)
        check.approved_runs, check.used_runs = approved, used
        if used + runs > approved:
            detail = (f"no valid signed approval for {version}'s current commit" if approved == 0 else
                      f"the approval covers {approved} run(s), {used} already started")
            raise GateFailed(
                f"train gate: {runs} run(s) of {version} may cost up to {cost:g} s "
                f"({runs} × budget.max_wall_seconds {cfg.budget.max_wall_seconds}), above "
                f"gates.train_approval_above_seconds = {threshold}; {detail}",
                fix=f"a person approves at a terminal: evotree approve-run {version} --runs {used + runs}"
                    f" (or request fewer runs)",
                gate="train", version=version, cost_seconds=cost, threshold=threshold,
                approved_runs=approved, used_runs=used)
    return checks


def _approved_runs(ws: Workspace, policy: object, version: str) -> tuple[int, int]:
    """(runs approved by the newest valid approval of the version's current commit, runs started since)."""
    from evotree.refs import branch_ref
    from gates.promote import anchor_commit
    from gates.verify import RUN_APPROVAL_TYPE, check_signed_statement
    from harness.runs import list_runs

    record = ws.resolve(version)
    tip = ws.git.ref_target(branch_ref(record.id))
    commit = str(tip) if tip is not None else record.base_commit
    anchor = anchor_commit(ws)
    for entry in ws.ledger.entries(version=record.id):
        if entry.event.kind != "run.approved":
            continue
        data = entry.event.data if isinstance(entry.event.data, dict) else {}
        statement = data.get("statement")
        if not isinstance(statement, dict) or statement.get("commit") != commit:
            continue
        if check_signed_statement(policy, statement, data.get("signature"),  # type: ignore[arg-type]
                                  expect_type=RUN_APPROVAL_TYPE, anchor=anchor, version=record.id):
            continue  # forged or from a key that is not allowed: ignored
        # counted from the signed time, not the event's: a replayed copy of an approval (same
        # statement and signature in a new event) does not reset what was already used
        since = str(statement.get("at") or "")
        used = sum(1 for r in list_runs(ws, version=record.id) if r.started_at > since)
        return int(statement.get("runs", 0)), used
    return 0, 0
