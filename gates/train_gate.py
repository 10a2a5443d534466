"""The train gate: runs whose budgeted cost is above ``[gates].train_approval_above_seconds``
start only with a person's signed ``run.approved`` for that version's commit.

Cost of a request for one version = ``[budget].max_wall_seconds`` × (the runs of the version's
current commit already started since its last valid approval — ever, without one — plus the runs
asked for): the most it may spend, so a costly request cannot be split into cheap ones. An approval
covers ``runs`` runs of one commit of one version; runs of that commit started after it count
against it. Runs are counted from the ledger's ``run.started`` events (not from run files a
process could delete). The approval's signature is checked against the allowed signers of the
(verified) champion, so a forged or self-made approval does not open it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evotree.gates.errors import GateFailed

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

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
    """Check ``{version: runs}`` before anything starts; :class:`GateFailed` when a costly request is unapproved.

    The threshold and ``max_wall_seconds`` come from the *signed* champion (the end of the chain of
    signed promotions), not from whatever ``refs/evotree/champion`` points to now: a ref moved to a
    commit of one's own, with no train gate, does not switch the gate off — while the signed
    champion has one, runs are refused until the ref is back.
    """
    from evotree.core.refs import CHAMPION_REF
    from evotree.gates.errors import TamperingFound
    from evotree.gates.policy import policy_at
    from evotree.gates.verify import verify_workspace

    signed = verify_workspace(ws, check_tags=False)  # one walk: reused by trusted_policy below
    if not signed.champion_commit:
        raise TamperingFound("refusing to run: the ledger has no signed root (`evotree verify` says why)",
                             fix="restore refs/evotree/ledger from a trusted copy")
    judge = [p for p in signed.problems if p.kind in ("ledger_judge", "judge_promotion")]
    if judge:  # the harness follows the ledger's judge commit: it must be the signed one
        raise TamperingFound(f"refusing to run: the judge data the ledger names is not signed ({judge[0].message})",
                             fix="run `evotree verify`; restore refs/evotree/ledger from a trusted copy; the judge "
                                 "changes only through `evotree judge promote DIR`")
    cfg = policy_at(ws, signed.champion, signed.champion_commit).config
    threshold = cfg.gates.train_approval_above_seconds
    if threshold <= 0:
        return []
    ref = ws.git.ref_target(CHAMPION_REF)
    if ref is None or str(ref) != signed.champion_commit:
        raise TamperingFound(
            f"refusing to run: {CHAMPION_REF} points to {str(ref)[:10] if ref else 'nothing'}, not to the signed "
            f"champion {signed.champion} ({signed.champion_commit[:10]}), whose train gate applies",
            fix="restore the ref (git update-ref refs/evotree/champion "
                f"{signed.champion_commit}) and run `evotree verify`")
    from evotree.gates.verify import trusted_policy
    from evotree.gates.promote import version_tip

    checks: list[TrainGateCheck] = []
    policy = None
    for version, runs in requests.items():
        commit = version_tip(ws, version)
        started, approvals = _history(ws, version, commit)
        if policy is None and approvals:
            policy = trusted_policy(ws, signed)  # raises TamperingFound when the champion is not signed-for
        approved, since = _approval(ws, policy, version, approvals) if approvals else (0, "")
        used = sum(1 for at in started if at > since)
        cost = float(cfg.budget.max_wall_seconds) * (used + runs)
        check = TrainGateCheck(version, cost, threshold, cost > threshold, approved, used)
        checks.append(check)
        if not check.needs_approval:
            continue
        if policy is None:
            policy = trusted_policy(ws, signed)
        if used + runs > approved:
            detail = (f"no valid signed approval for {version}'s current commit" if approved == 0 else
                      f"the approval covers {approved} run(s), {used} already started")
            raise GateFailed(
                f"train gate: {runs} run(s) of {version} may cost up to {cost:g} s "
                f"({used} already started + {runs} × budget.max_wall_seconds {cfg.budget.max_wall_seconds}), above "
                f"gates.train_approval_above_seconds = {threshold}; {detail}",
                fix=f"a person approves at a terminal: evotree approve-run {version} --runs {used + runs}"
                    f" (or request fewer runs)",
                gate="train", version=version, cost_seconds=cost, threshold=threshold,
                approved_runs=approved, used_runs=used)
    return checks


def _history(ws: Workspace, version: str, commit: str) -> tuple[list[str], list[dict]]:
    """One ledger walk: when each run of ``commit`` of ``version`` started (``run.started``
    events), and its ``run.approved`` events naming ``commit`` (unchecked), newest first."""
    record = ws.resolve(version)
    started: list[str] = []
    approvals: list[dict] = []
    for entry in ws.ledger.entries(version=record.id):
        data = entry.event.data if isinstance(entry.event.data, dict) else {}
        if entry.event.kind == "run.started" and data.get("commit") == commit:
            started.append(str(entry.event.at))
        elif entry.event.kind == "run.approved":
            statement = data.get("statement")
            if isinstance(statement, dict) and statement.get("commit") == commit:
                approvals.append(data)
    return started, approvals


def _approval(ws: Workspace, policy: object, version: str, approvals: list[dict]) -> tuple[int, str]:
    """(runs approved by the newest valid one of ``approvals``, the time it was signed); (0, "")."""
    from evotree.gates.statements import anchor_commit
    from evotree.gates.verify import RUN_APPROVAL_TYPE, check_signed_statement

    anchor = anchor_commit(ws)
    record_id = ws.resolve(version).id
    for data in approvals:
        statement = data["statement"]
        if check_signed_statement(policy, statement, data.get("signature"),  # type: ignore[arg-type]
                                  expect_type=RUN_APPROVAL_TYPE, anchor=anchor, version=record_id):
            continue  # forged or from a key that is not allowed: ignored
        # counted from the signed time, not the event's: a replayed copy of an approval (same
        # statement and signature in a new event) does not reset what was already used
        return int(statement.get("runs", 0)), str(statement.get("at") or "")
    return 0, ""
