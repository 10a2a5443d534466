"""Recording a person's signed decision: promotion, revise/abort, and run approvals.

Every record is a statement (canonical JSON) signed with the approver's SSH key and checked
against the champion's allowed signers before anything is written. A promotion then creates the
signed tag ``evotree/promoted/V``, appends the ``promotion`` event (statement, signature and the
dossier whose sha256 the statement names) and compare-and-swaps ``refs/evotree/champion`` from
the previous champion's commit to the candidate's.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from evotree.core.errors import InvalidState
from evotree.core.events import Decision, Promotion, RunApproved
from evotree.core.ledger import Event, LedgerEntry, LedgerTxn
from evotree.core.refs import CHAMPION_REF, branch_ref
from evotree.core.safegit import approver_process, refuse_program_settings
from evotree.gates.errors import GateFailed, TamperingFound
from evotree.gates.signing import canonical, delete_tag, run_git, sha256_hex, sign_tag
from evotree.gates.statements import anchor_commit, new_statement, sign_statement
from evotree.gates.verify_base import DECISION_TYPE, PROMOTION_TYPE, RUN_APPROVAL_TYPE, tag_name
from evotree.core.gitio import RefRaceLost
from evotree.gates.policy import blob_at

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace
    from evotree.gates.evaluation import GateReport
    from evotree.gates.policy import Policy
    from evotree.gates.signoff import Approver

__all__ = [
    "DecisionResult",
    "PromotionResult",
    "RunApprovalResult",
    "anchor_commit",
    "new_statement",
    "record_decision",
    "record_promotion",
    "record_run_approval",
    "sign_statement",
]


@dataclass
class PromotionResult:
    """What ``evotree promote --json`` prints after a decision (schema: ``promote.schema.json``)."""

    version: str
    decision: str
    previous_champion: str
    champion: str
    commit: str
    evidence_hash: str
    approver: str
    ledger_commit: str
    tag: str | None = None
    feedback: str | None = None
    merged: str | None = None
    warnings: list[str] = field(default_factory=list)
    dossier: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["v"] = 1
        return out


DecisionResult = PromotionResult


@dataclass
class RunApprovalResult:
    """What ``evotree approve-run --json`` prints (schema: ``gates-run-approval.schema.json``)."""

    version: str
    commit: str
    runs: int
    max_wall_seconds: int
    approver: str
    ledger_commit: str

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["v"] = 1
        return out


def record_promotion(
    ws: Workspace, policy: Policy, report: GateReport, approver: Approver, *, merge: bool = False
) -> PromotionResult:
    """Sign and record APPROVE: signed tag, ``promotion`` event, champion ref moved (CAS).

    Every git call runs as the approver's (:mod:`evotree.core.safegit`): the policy's system git
    and ssh-keygen, no repository setting that runs a program. ``merge`` is refused, before
    anything is signed, when the repository's configuration defines such a setting.
    """
    with approver_process(policy.config.tools):
        return _record_promotion(ws, policy, report, approver, merge=merge)


def _record_promotion(
    ws: Workspace, policy: Policy, report: GateReport, approver: Approver, *, merge: bool
) -> PromotionResult:
    if not report.passed:
        failed = ", ".join(g.name for g in report.failed)
        raise GateFailed(
            f"{report.version} cannot be approved: gate(s) failed: {failed}",
            fix="revise the version, or abort; `evotree gates V` explains each gate",
        )
    if report.champion != policy.champion or report.champion_commit != policy.commit:
        raise InvalidState(
            "the champion changed while the gates were evaluated", fix="run evotree promote again"
        )
    if merge:
        refuse_program_settings(ws.root, "--merge", git=policy.config.tools.git or None)
    dossier = report.to_dict()
    evidence_hash = sha256_hex(canonical(dossier))
    statement = new_statement(
        ws,
        PROMOTION_TYPE,
        approver,
        decision="approve",
        version=report.version,
        commit=report.commit,
        created_by=report.created_by,
        previous_champion=policy.champion,
        previous_commit=policy.commit,
        evidence_hash=evidence_hash,
    )
    signature = sign_statement(policy, approver, statement)
    tag = tag_name(report.version)
    tools = policy.config.tools
    tag_object = (
        sign_tag(ws.root, tag, report.commit, _tag_message(statement), approver.key, tools=tools)
        if _tag_free(ws, tag)
        else _stale_tag(ws, tag, report.commit, statement, approver, tools)
    )

    try:  # the signed tag is deleted when the ledger does not take the promotion
        promotion = Promotion(
            statement=statement,
            signature=signature,
            dossier=dossier,
            tag=tag,
            tag_object=tag_object,
            previous_champion=policy.champion,
            commit=report.commit,
        )
        entry = _append_promotion(ws, policy, report, promotion)
    except BaseException:
        delete_tag(ws.root, tag, tools=tools)
        raise
    _move_champion_ref(ws, policy, report, approver)
    warnings: list[str] = []
    merged = _merge(ws, report.commit, warnings, tools) if merge else None
    _remember_promotion(ws, policy, report, warnings)
    return PromotionResult(
        version=report.version,
        decision="approve",
        previous_champion=policy.champion,
        champion=report.version,
        commit=report.commit,
        evidence_hash=evidence_hash,
        approver=approver.principal,
        ledger_commit=entry.commit,
        tag=tag,
        merged=merged,
        warnings=warnings,
        dossier=dossier,
    )


def _append_promotion(
    ws: Workspace, policy: Policy, report: GateReport, promotion: Promotion
) -> LedgerEntry:
    """Append the signed promotion; refused if the champion or the reviewed branch moved."""
    statement = promotion.statement

    def change(txn: LedgerTxn) -> Event:
        if txn.meta.get("champion") != policy.champion:
            raise InvalidState(
                f"the ledger's champion is now {txn.meta.get('champion')}, not {policy.champion}",
                fix="another promotion landed first; evaluate again against the new champion",
            )
        record = txn.require(report.version)
        tip = ws.git.ref_target(branch_ref(report.version))
        if tip is None or str(tip) != report.commit:
            raise InvalidState(
                f"{report.version} changed while it was under review: its branch is at "
                f"{str(tip)[:10] if tip is not None else 'nothing'}, the reviewed commit is {report.commit[:10]}; "
                "nothing was promoted",
                fix=f"review the new commit: evotree promote {report.version} again",
                version=report.version,
            )
        record.updated_at = statement["at"]
        txn.put(record)
        txn.meta["champion"] = report.version
        return Event.of(
            promotion, version=report.version, actor=str(ws.git.identity()), at=statement["at"]
        )

    return ws.ledger.transact(change, actor=ws.git.identity())


def _move_champion_ref(
    ws: Workspace, policy: Policy, report: GateReport, approver: Approver
) -> None:
    """Compare-and-swap the champion ref to the promoted commit (recorded first: a lost race
    is someone else's move, reported as tampering)."""
    try:
        ws.git.cas_ref(
            CHAMPION_REF,
            ws.git.repo[report.commit].id,
            ws.git.repo[policy.commit].id,
            f"evotree promote {report.version} (signed by {approver.principal})",
        )
    except RefRaceLost as exc:
        raise TamperingFound(
            f"the promotion of {report.version} is recorded and signed, but {CHAMPION_REF} was moved by someone "
            f"else meanwhile ({exc})",
            fix="run `evotree verify`; reset the champion ref to the signed chain: "
            f"git update-ref {CHAMPION_REF} {report.commit}",
        ) from exc


def _remember_promotion(
    ws: Workspace, policy: Policy, report: GateReport, warnings: list[str]
) -> None:
    """Record the promotion in memory; a failure is a warning (memory never blocks or undoes a
    signed decision)."""
    try:
        import evotree.memory as memory

        memory.record_promotion(
            ws,
            report.version,
            previous_champion=policy.champion,
            comparison=report.comparison,
            commit=report.commit,
        )
    except Exception as exc:  # noqa: BLE001 - memory never blocks or undoes a signed decision
        warnings.append(
            f"memory: the promotion was not recorded in memory ({type(exc).__name__}: {exc})"
        )


def _tag_message(statement: dict[str, Any]) -> str:
    return (
        f"evotree: promote {statement['version']} (previous champion {statement['previous_champion']})\n\n"
        f"approved by {statement['approver']}\nevidence sha256 {statement['evidence_hash']}\n"
    )


def _tag_free(ws: Workspace, tag: str) -> bool:
    return ws.git.ref_target(f"refs/tags/{tag}") is None


def _stale_tag(
    ws: Workspace,
    tag: str,
    commit: str,
    statement: dict[str, Any],
    approver: Approver,
    tools: Any = None,
) -> str:
    """A tag of that name exists but no valid promotion made it (verify trusts only tags of valid
    promotions): replace it, so a planted tag cannot block or impersonate a promotion."""
    delete_tag(ws.root, tag, tools=tools)
    return sign_tag(ws.root, tag, commit, _tag_message(statement), approver.key, tools=tools)


def _merge(ws: Workspace, commit: str, warnings: list[str], tools: Any = None) -> str | None:
    """Merge the promoted commit into the branch checked out in the main worktree (fast-forward or merge).

    git runs as the approver's (:func:`evotree.gates.signing.run_git`): no hook, no fsmonitor, every
    filter and merge driver the repository names blanked out (and :func:`record_promotion` has
    already refused a repository whose configuration defines one).
    """

    def git(*args: str) -> Any:
        return run_git(ws.root, *args, tools=tools)

    head = git("symbolic-ref", "--quiet", "--short", "HEAD").stdout.strip()
    if not head:
        warnings.append("--merge: the main worktree is on a detached HEAD; nothing merged")
        return None
    if _uses_filters(ws, commit):
        warnings.append(
            f"--merge: {commit[:10]} has files that need git filters (filter= in .gitattributes, e.g. "
            f"LFS), which a sign-off's git never runs; nothing merged (git merge {commit[:10]} yourself)"
        )
        return None
    dirty = git(
        "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all"
    ).stdout.strip()
    if dirty:
        warnings.append(
            f"--merge: {head} has uncommitted changes; nothing merged (git merge {commit[:10]} later)"
        )
        return None
    proc = git(
        "merge", "--no-edit", "--no-verify", "-m", f"evotree: merge promoted {commit[:10]}", commit
    )
    if proc.returncode != 0:
        git("merge", "--abort")
        warnings.append(
            f"--merge: merging into {head} failed and was aborted: {proc.stderr.strip()[:200]}"
        )
        return None
    return head


def _uses_filters(ws: Workspace, commit: str) -> bool:
    """True when the root ``.gitattributes`` of ``commit`` assigns a filter (checked out without it,
    such files would be wrong: LFS pointers instead of their content)."""

    try:
        text = blob_at(ws, commit, ".gitattributes")
    except Exception:  # noqa: BLE001 - unreadable: let git's merge say what is wrong
        return False
    return text is not None and b"filter=" in text


def record_decision(
    ws: Workspace,
    policy: Policy,
    report: GateReport,
    approver: Approver,
    decision: str,
    feedback: str,
) -> PromotionResult:
    """Sign and record REVISE (feedback for the next version) or ABORT; the champion stays."""
    with approver_process(policy.config.tools):
        return _record_decision(ws, policy, report, approver, decision, feedback)


def _record_decision(
    ws: Workspace,
    policy: Policy,
    report: GateReport,
    approver: Approver,
    decision: str,
    feedback: str,
) -> PromotionResult:
    if decision not in ("revise", "abort"):
        raise InvalidState(
            f"decision must be revise or abort here, not {decision!r}", fix="choose revise or abort"
        )
    dossier = report.to_dict()
    evidence_hash = sha256_hex(canonical(dossier))
    statement = new_statement(
        ws,
        DECISION_TYPE,
        approver,
        decision=decision,
        version=report.version,
        commit=report.commit,
        created_by=report.created_by,
        champion=policy.champion,
        evidence_hash=evidence_hash,
        feedback=feedback,
    )
    signature = sign_statement(policy, approver, statement)

    def change(txn: LedgerTxn) -> Event:
        txn.require(report.version)
        made = Decision(
            decision=decision,
            feedback=feedback,
            statement=statement,
            signature=signature,
            dossier=dossier,
        )
        return Event.of(
            made, version=report.version, actor=str(ws.git.identity()), at=statement["at"]
        )

    entry = ws.ledger.transact(change, actor=ws.git.identity())
    warnings: list[str] = []
    try:
        import evotree.memory as memory

        memory.record_rejection(
            ws, report.version, decision=decision, feedback=feedback, evidence=dossier
        )
    except Exception as exc:  # noqa: BLE001
        warnings.append(
            f"memory: the decision was not recorded in memory ({type(exc).__name__}: {exc})"
        )
    return PromotionResult(
        version=report.version,
        decision=decision,
        previous_champion=policy.champion,
        champion=policy.champion,
        commit=report.commit,
        evidence_hash=evidence_hash,
        approver=approver.principal,
        ledger_commit=entry.commit,
        feedback=feedback,
        warnings=warnings,
        dossier=dossier,
    )


def version_tip(ws: Workspace, version: str) -> str:
    """The commit a version's runs would train now: its branch tip (its base commit without one)."""

    record = ws.resolve(version)
    tip = ws.git.ref_target(branch_ref(record.id))
    return str(tip) if tip is not None else record.base_commit


def record_run_approval(
    ws: Workspace,
    policy: Policy,
    version: str,
    approver: Approver,
    *,
    runs: int,
    commit: str | None = None,
) -> RunApprovalResult:
    """Sign and record ``run.approved``: up to ``runs`` runs of ``commit``, the commit the person
    was shown; refused when the version's branch has moved since (default: its current tip)."""
    with approver_process(policy.config.tools):
        return _record_run_approval(ws, policy, version, approver, runs=runs, commit=commit)


def _record_run_approval(
    ws: Workspace,
    policy: Policy,
    version: str,
    approver: Approver,
    *,
    runs: int,
    commit: str | None,
) -> RunApprovalResult:
    if runs < 1:
        raise InvalidState(f"--runs: expected at least 1, actually: {runs}", fix="pass --runs N")
    record = ws.resolve(version)
    current = version_tip(ws, record.id)
    if commit is not None and commit != current:
        raise InvalidState(
            f"{record.id} moved while it was being approved: shown {commit[:10]}, now {current[:10]}",
            fix=f"run `evotree approve-run {record.id}` again and approve what it shows",
        )
    commit = current
    seconds = policy.config.budget.max_wall_seconds
    statement = new_statement(
        ws,
        RUN_APPROVAL_TYPE,
        approver,
        version=record.id,
        commit=commit,
        runs=runs,
        max_wall_seconds=seconds,
        created_by=record.created_by,
        champion=policy.champion,
    )
    signature = sign_statement(policy, approver, statement)

    def change(txn: LedgerTxn) -> Event:
        txn.require(record.id)
        approved = RunApproved(statement=statement, signature=signature, runs=runs)
        return Event.of(
            approved, version=record.id, actor=str(ws.git.identity()), at=statement["at"]
        )

    entry = ws.ledger.transact(change, actor=ws.git.identity())
    return RunApprovalResult(
        version=record.id,
        commit=commit,
        runs=runs,
        max_wall_seconds=seconds,
        approver=approver.principal,
        ledger_commit=entry.commit,
    )
