"""The train gate: runs whose budgeted cost is above ``[gates].train_approval_above_seconds``
start only with a person's signed ``run.approved`` for that version's commit.

Cost of a request for one version = ``[budget].max_wall_seconds`` × (the runs of the version's
current commit already started since its last valid approval — ever, without one — plus the runs
asked for): the most it may spend, so a costly request cannot be split into cheap ones. An approval
covers ``runs`` runs of one commit of one version; runs of that commit started after it count
against it. Runs are counted from the ledger's ``run.reserved`` and ``run.started`` events (not
from run files a process could delete); a reservation given back unstarted (``run.released``)
does not count. The approval's signature is checked against the allowed signers of the
(verified) champion, so a forged or self-made approval does not open it.

Concurrent requests cannot each pass on the same approval: :func:`train_gate_authorizer` (the
authorizer :mod:`evotree.gates.runs` gives the harness) returns a re-check that the harness runs
inside the compare-and-swap that reserves the runs, counting the runs of the ledger head that
transaction writes on; a request that lands first makes the others' transactions retry and
count its runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from evotree.gates.errors import GateFailed
from evotree.core.refs import CHAMPION_REF
from evotree.gates.errors import TamperingFound
from evotree.gates.policy import policy_at
from evotree.gates.verify import verify_workspace
from evotree.gates.verify import trusted_policy
from evotree.gates.promote import version_tip
from evotree.gates.statements import anchor_commit
from evotree.gates.verify_base import RUN_APPROVAL_TYPE
from evotree.gates.verify_base import check_signed_statement

if TYPE_CHECKING:
    from evotree.core.ledger import LedgerEntry, LedgerTxn
    from evotree.core.workspace import Workspace

__all__ = ["TrainGateCheck", "train_gate", "train_gate_authorizer"]


@dataclass
class TrainGateCheck:
    """Whether one version's requested runs may start, and why."""

    version: str
    cost_seconds: float
    threshold: int
    needs_approval: bool
    approved_runs: int = 0
    used_runs: int = 0
    #: the commit the runs are of, when the valid approval was signed ("" none), the signed
    #: champion's budget.max_wall_seconds: what the reservation's re-check needs
    commit: str = ""
    since: str = ""
    max_wall_seconds: float = 0.0


def train_gate(ws: Workspace, requests: dict[str, int]) -> list[TrainGateCheck]:
    """Check ``{version: runs}`` before anything starts; :class:`GateFailed` when a costly request is unapproved.

    The threshold and ``max_wall_seconds`` come from the *signed* champion (the end of the chain of
    signed promotions), not from whatever ``refs/evotree/champion`` points to now: a ref moved to a
    commit of one's own, with no train gate, does not switch the gate off — while the signed
    champion has one, runs are refused until the ref is back.
    """

    signed = verify_workspace(ws, check_tags=False)  # one walk: reused by trusted_policy below
    if not signed.champion_commit:
        raise TamperingFound(
            "refusing to run: the ledger has no signed root (`evotree verify` says why)",
            fix="restore refs/evotree/ledger from a trusted copy",
        )
    judge = [p for p in signed.problems if p.kind in ("ledger_judge", "judge_promotion")]
    if judge:  # the harness follows the ledger's judge commit: it must be the signed one
        raise TamperingFound(
            f"refusing to run: the judge data the ledger names is not signed ({judge[0].message})",
            fix="run `evotree verify`; restore refs/evotree/ledger from a trusted copy; the judge "
            "changes only through `evotree judge promote DIR`",
        )
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
            f"{signed.champion_commit}) and run `evotree verify`",
        )

    checks: list[TrainGateCheck] = []
    policy = None
    max_wall = float(cfg.budget.max_wall_seconds)
    for version, runs in requests.items():
        commit = version_tip(ws, version)
        record_id = ws.resolve(version).id
        started, approvals = _history(ws.ledger.entries(), record_id, commit)
        if policy is None and approvals:
            policy = trusted_policy(
                ws, signed
            )  # raises TamperingFound when the champion is not signed-for
        approved, since = _approval(ws, policy, version, approvals) if approvals else (0, "")
        used = sum(1 for at in started if at > since)
        cost = max_wall * (used + runs)
        check = TrainGateCheck(
            version,
            cost,
            threshold,
            cost > threshold,
            approved,
            used,
            commit=commit,
            since=since,
            max_wall_seconds=max_wall,
        )
        checks.append(check)
        if not check.needs_approval:
            continue
        if policy is None:
            policy = trusted_policy(ws, signed)
        if used + runs > approved:
            raise _refusal(check, runs)
    return checks


def train_gate_authorizer(ws: Workspace, requests: Mapping[str, int]) -> Any:
    """:func:`train_gate`, and (when the signed champion has a train gate) the re-check the
    harness runs in the compare-and-swap that reserves the runs
    (:data:`evotree.harness.planning.RunRecheck`): the same rule, with the runs counted on the
    ledger head the reservation is written on."""
    checks = {check.version: check for check in train_gate(ws, dict(requests))}
    if not checks:
        return None

    def recheck(txn: LedgerTxn, runs_of: Mapping[str, int], commits: Mapping[str, str]) -> None:
        for version, runs in runs_of.items():
            check = checks.get(version)
            if check is None or not runs:
                continue
            if commits.get(version, check.commit) != check.commit:
                raise GateFailed(
                    f"train gate: the branch of {version} moved while its runs were being planned",
                    fix="run the request again",
                    gate="train",
                    version=version,
                )
            started, _ = _history(txn.entries(), version, check.commit)
            used = sum(1 for at in started if at > check.since)
            cost = check.max_wall_seconds * (used + runs)
            if cost > check.threshold and used + runs > check.approved_runs:
                raise _refusal(
                    replace(check, cost_seconds=cost, needs_approval=True, used_runs=used), runs
                )

    return recheck


def _refusal(check: TrainGateCheck, runs: int) -> GateFailed:
    version, used, approved, cost = (
        check.version,
        check.used_runs,
        check.approved_runs,
        check.cost_seconds,
    )
    detail = (
        f"no valid signed approval for {version}'s current commit"
        if approved == 0
        else f"the approval covers {approved} run(s), {used} already started or reserved"
    )
    return GateFailed(
        f"train gate: {runs} run(s) of {version} may cost up to {cost:g} s "
        f"({used} already started + {runs} × budget.max_wall_seconds {check.max_wall_seconds:g}), above "
        f"gates.train_approval_above_seconds = {check.threshold}; {detail}",
        fix=f"a person approves at a terminal: evotree approve-run {version} --runs {used + runs}"
        f" (or request fewer runs)",
        gate="train",
        version=version,
        cost_seconds=cost,
        threshold=check.threshold,
        approved_runs=approved,
        used_runs=used,
    )


def _history(
    entries: Iterable[LedgerEntry], version: str, commit: str
) -> tuple[list[str], list[dict]]:
    """One ledger walk (``entries`` newest first): for each run of ``commit`` of ``version`` that
    was reserved or started (``run.reserved``, ``run.started``) and not given back unstarted
    (``run.released``), the newest of those times; and the ``run.approved`` events of ``version``
    naming ``commit`` (unchecked), newest first."""
    runs: dict[str, str] = {}
    started: set[str] = set()
    released: set[str] = set()
    approvals: list[dict] = []
    for entry in entries:
        event = entry.event
        data = event.data if isinstance(event.data, dict) else {}
        if event.kind == "run.started":
            if event.version == version and data.get("commit") == commit:
                run_id = str(data.get("run_id") or entry.commit)
                runs.setdefault(run_id, str(event.at))
                started.add(run_id)
        elif event.kind == "run.reserved":
            for run in data.get("runs") or []:
                if (
                    isinstance(run, dict)
                    and run.get("version") == version
                    and run.get("commit") == commit
                ):
                    runs.setdefault(str(run.get("run_id")), str(event.at))
            released.update(str(r) for r in data.get("released") or [])
        elif event.kind == "run.released":
            released.update(str(r) for r in data.get("runs") or [])
        elif event.kind == "run.approved" and event.version == version:
            statement = data.get("statement")
            if isinstance(statement, dict) and statement.get("commit") == commit:
                approvals.append(data)
    return [
        at for run_id, at in runs.items() if run_id not in released or run_id in started
    ], approvals


def _approval(
    ws: Workspace, policy: object, version: str, approvals: list[dict]
) -> tuple[int, str]:
    """(runs approved by the newest valid one of ``approvals``, the time it was signed); (0, "")."""

    anchor = anchor_commit(ws)
    record_id = ws.resolve(version).id
    for data in approvals:
        statement = data["statement"]
        if check_signed_statement(
            policy,
            statement,
            data.get("signature"),  # type: ignore[arg-type]
            expect_type=RUN_APPROVAL_TYPE,
            anchor=anchor,
            version=record_id,
        ):
            continue  # forged or from a key that is not allowed: ignored
        # counted from the signed time, not the event's: a replayed copy of an approval (same
        # statement and signature in a new event) does not reset what was already used
        return int(statement.get("runs", 0)), str(statement.get("at") or "")
    return 0, ""
