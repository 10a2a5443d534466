"""The judge store's signed lineage: which hidden judge data is in force, changing it, migrating to it.

The judge's hidden data (validation and held-out pools, reference answers: the files of
``[eval].judge_paths``) lives on ``refs/evotree/judge`` (:mod:`evotree.harness.judge_store`),
never in a checkout. What scores every run is a person's decision, so changing it is signed
exactly like an analyzers promotion, in two steps by two principals: :func:`propose_judge`
(``evotree
judge propose DIR``) records who proposes the judge files of a directory (``judge.proposed``: the
judge tree, the judge it would replace, the diff and the proposer's identity);
:func:`plan_judge_promotion` writes the judge commit from the directory, computes the diff (file
names, sizes, sha256: never contents) and finds the proposal of exactly that tree, without moving
anything; :func:`record_judge_promotion` signs an ``evotree.judge-promotion`` statement naming the
diff's sha256 and the proposer (``created_by``, so that ``evotree verify`` refuses a signer who
proposed), appends ``judge.promoted`` (the ledger's ``judge`` in force) and compare-and-swaps the
ref. The approver must not be the proposer (:func:`evotree.gates.signoff.approver_for`, as for an
analyzer version's creator). :func:`trusted_judge` is the end of the signed chain as
``evotree verify``
walks it.

:func:`migrate_judge` moves a workspace made before the store: the signed champion's judge
paths become the first judge commit (``judge.migrated``, unsigned: allowed only while the ledger
has no judge, and ``evotree verify`` checks the files are exactly the champion's), and a new
version that removes them from the champion's tree is branched for the owner to promote.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2

from evotree.core.chain_trust import ChainTrust
from evotree.core.errors import InvalidState
from evotree.core.events import JudgeMigrated, JudgePromoted, JudgeProposed
from evotree.core.ledger import Event, EventKind, LedgerEntry, LedgerTxn
from evotree.core.refs import CHAMPION_REF, JUDGE_REF
from evotree.core.workspace import Workspace
from evotree.gates.trust import chain_trust
from evotree.harness.judge_store import (
    judge_diff,
    judge_files,
    judge_in_force,
    write_judge_from_directory,
)
from evotree.harness.judge_store import materialise_judge, tree_judge_files
from evotree.gates.signing import canonical
from evotree.gates.signing import sha256_hex
from evotree.gates.errors import SignoffRefused
from evotree.gates.verify_base import email_of
from evotree.gates.errors import TamperingFound
from evotree.gates.statements import new_statement
from evotree.gates.statements import sign_statement
from evotree.gates.verify_base import JUDGE_PROMOTION_TYPE
from evotree.core.gitio import RefRaceLost
from evotree.core.workspace import judge_ref_store, write_judge_commit
from evotree.gates.policy import policy_at
from evotree.gates.verify import verify_workspace
from evotree.core.versions import create_version

if TYPE_CHECKING:
    from evotree.gates.policy import Policy
    from evotree.gates.signoff import Approver

__all__ = [
    "JudgeExportResult",
    "JudgeMigrationResult",
    "JUDGE_PROPOSED_EVENT",
    "JudgePromotionPlan",
    "JudgePromotionResult",
    "JudgeProposal",
    "JudgeStatus",
    "check_outside_repository",
    "export_judge",
    "judge_status",
    "migrate_judge",
    "plan_judge_promotion",
    "propose_judge",
    "record_judge_promotion",
    "trusted_judge",
]


#: The ledger event of ``evotree judge propose``: who proposes which judge tree, replacing which judge.
JUDGE_PROPOSED_EVENT = EventKind.JUDGE_PROPOSED.value


def trusted_judge(ws: Workspace) -> ChainTrust:
    """The judge commit at the end of the chain (init's, then migrations and signed promotions),
    and its problems (:func:`evotree.gates.trust.chain_trust`: verify's walk, kept by the ledger
    tip and refs)."""
    return chain_trust(ws, "judge")


@dataclass
class JudgeStatus:
    """What ``evotree judge show --json`` prints (schema: ``judge-show.schema.json``): names and hashes only."""

    commit: str | None
    ref: str | None
    signed: bool
    warning: str | None
    judge_paths: list[str]
    files: list[dict[str, Any]]
    legacy: bool

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


def judge_status(ws: Workspace) -> JudgeStatus:
    """The judge in force (the end of the signed chain), its files with sizes and sha256, the ref's value."""
    trust = trusted_judge(ws)
    ref = ws.git.ref_target(JUDGE_REF)
    files = [f.to_dict() for f in judge_files(ws.git.repo, trust.commit)] if trust.commit else []
    return JudgeStatus(
        trust.commit,
        str(ref) if ref is not None else None,
        trust.trusted,
        trust.warning,
        list(ws.config.eval.judge_paths),
        files,
        trust.commit is None,
    )


def _require_judge(ws: Workspace) -> str:
    trust = trusted_judge(ws)
    if not trust.trusted:
        from evotree.gates.errors import TamperingFound

        raise TamperingFound(
            f"refusing: {trust.warning}", fix=trust.fix, problems=list(trust.problems)
        )
    if trust.commit is None:
        raise InvalidState(
            "this workspace has no judge store yet: its judge files are in the champion's tree",
            fix="move them: evotree judge migrate",
        )
    return trust.commit


# ---------------------------------------------------------------------------- export
def _repository_dirs(ws: Workspace) -> list[Path]:
    """The repository's root and every worktree of it (where hidden data must never be written)."""
    dirs = [ws.root.resolve(), Path(ws.git.repo.path).resolve()]
    out = ws.git.run("worktree", "list", "--porcelain", check=False)
    dirs += [
        Path(line[len("worktree ") :]).resolve()
        for line in out.splitlines()
        if line.startswith("worktree ")
    ]
    return dirs


def check_outside_repository(ws: Workspace, directory: Path, *, what: str) -> Path:
    """``directory`` resolved; :class:`InvalidState` when it lies inside the repository or one of its worktrees."""
    target = Path(os.path.abspath(directory)).resolve()
    for base in _repository_dirs(ws):
        if target == base or base in target.parents:
            raise InvalidState(
                f"{what} {target} is inside the repository ({base}): hidden judge data would sit in a checkout "
                "that candidates and agents can read",
                fix="use a directory outside the repository, e.g. ~/judge-edit or a fresh mktemp -d",
            )
    return target


@dataclass
class JudgeExportResult:
    """What ``evotree judge export --json`` prints: where, which commit, names and hashes only."""

    directory: str
    commit: str
    files: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


def export_judge(ws: Workspace, directory: Path) -> JudgeExportResult:
    """Write the judge in force into ``directory`` (outside the repository; new or empty),
    laid out as in the repository (``DIR/judge/gym.toml``)."""

    commit = _require_judge(ws)
    target = check_outside_repository(ws, directory, what="the export directory")
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise InvalidState(
            f"{target} exists and is not an empty directory", fix="pass a new or empty directory"
        )
    target.mkdir(parents=True, exist_ok=True)
    materialise_judge(ws.git.repo, commit, target)
    return JudgeExportResult(
        str(target), commit, [f.to_dict() for f in judge_files(ws.git.repo, commit)]
    )


# ---------------------------------------------------------------------------- promotion
@dataclass
class JudgePromotionPlan:
    """What ``evotree judge promote DIR`` shows the approver before they sign."""

    commit: str
    previous_commit: str
    directory: str
    diff: dict[str, Any]
    diff_hash: str
    #: who proposed these files (``judge.proposed``); the approver must be someone else
    proposed_by: str | None = None
    #: the ledger commit of that proposal
    proposal: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class JudgeProposal:
    """What ``evotree judge propose --json`` prints: the judge tree proposed, by whom, and the diff."""

    commit: str
    tree: str
    previous_commit: str
    directory: str
    diff: dict[str, Any]
    diff_hash: str
    proposed_by: str
    ledger_commit: str

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


@dataclass
class JudgePromotionResult:
    """What ``evotree judge promote --json`` prints (schema: ``judge-promote.schema.json``)."""

    commit: str
    previous_commit: str
    diff: dict[str, Any]
    diff_hash: str
    approver: str
    ledger_commit: str
    proposed_by: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


def _staged(ws: Workspace, directory: Path) -> tuple[str, str, Path, dict[str, Any], str]:
    """(new judge commit, the judge in force, the directory, the diff, its sha256); refuses no-ops."""

    previous = _require_judge(ws)
    source = check_outside_repository(ws, directory, what="the judge directory")
    commit = write_judge_from_directory(
        ws, source, parent=previous, message=f"evotree: judge update from {source.name}\n"
    )
    diff = judge_diff(ws.git.repo, previous, commit)
    if all(row["status"] == "unchanged" for row in diff["files"]):
        raise InvalidState(
            f"{source} holds exactly the judge in force ({previous[:10]}): nothing to promote",
            fix="edit the files first (evotree judge export DIR writes the current ones)",
        )
    return commit, previous, source, diff, sha256_hex(canonical(diff))


def _tree_of(ws: Workspace, commit: str) -> str:
    return str(ws.git.repo[commit].tree_id)


def propose_judge(ws: Workspace, directory: Path, *, proposer: Any = None) -> JudgeProposal:
    """Record who proposes the judge files of ``directory`` (``judge.proposed``); moves no ref.

    ``proposer``: the principal proposing (``evotree serve --as NAME``); default the git identity.
    The proposal names the judge tree (the files, whatever commit carries them later), the judge
    it replaces and the diff; a promotion of that tree must be signed by someone else.
    """
    commit, previous, source, diff, diff_hash = _staged(ws, directory)
    actor = proposer if proposer is not None else ws.git.identity()
    tree = _tree_of(ws, commit)

    def change(txn: LedgerTxn) -> Event:
        current = (txn.meta.get("judge") or {}).get("commit")
        if current != previous:
            raise InvalidState(
                f"the ledger's judge is now {str(current)[:10]}, not {previous[:10]}",
                fix="a judge promotion landed meanwhile; export the judge again and re-apply your edit",
            )
        proposed = JudgeProposed(
            commit=commit,
            tree=tree,
            previous_commit=previous,
            diff=diff,
            diff_hash=diff_hash,
            proposed_by=str(actor),
        )
        return Event.of(proposed, version=None, actor=str(actor))

    entry = ws.ledger.transact(change, actor=actor)
    return JudgeProposal(
        commit, tree, previous, str(source), diff, diff_hash, str(actor), entry.commit
    )


def judge_proposal(ws: Workspace, tree: str, previous: str) -> tuple[str, str] | None:
    """(proposer, ledger commit) of the newest ``judge.proposed`` of judge tree ``tree`` replacing ``previous``."""
    for entry in ws.ledger.entries():  # newest first
        event = entry.event
        if event.kind != JUDGE_PROPOSED_EVENT or not isinstance(event.data, dict):
            continue
        if event.data.get("tree") == tree and event.data.get("previous_commit") == previous:
            return str(event.data.get("proposed_by") or event.actor), entry.commit
    return None


def plan_judge_promotion(ws: Workspace, directory: Path) -> JudgePromotionPlan:
    """Write the judge commit of ``directory`` (no ref moved) and compute what changes; refuses no-ops.

    ``directory`` is laid out as the repository (``DIR/judge/gym.toml``), lies outside it, and
    holds regular files under the champion's ``[eval].judge_paths`` only. Refuses
    (``TamperingFound``) when the judge in force is not the end of the signed chain, and
    (``InvalidState``) when nobody proposed exactly these files to replace the judge in force
    (:func:`propose_judge`): the plan names the proposer, whom the approver must not be.
    """
    commit, previous, source, diff, diff_hash = _staged(ws, directory)
    found = judge_proposal(ws, _tree_of(ws, commit), previous)
    if found is None:
        raise InvalidState(
            f"nobody proposed the judge files of {source} to replace the judge in force ({previous[:10]}): a judge "
            "change is proposed by one principal and signed by another",
            fix=f"the person or agent making the change runs `evotree judge propose {source}`; then another "
            "allowed signer runs `evotree judge promote` on the same files",
        )
    proposed_by, proposal = found
    return JudgePromotionPlan(commit, previous, str(source), diff, diff_hash, proposed_by, proposal)


def record_judge_promotion(
    ws: Workspace, policy: Policy, approver: Approver, plan: JudgePromotionPlan
) -> JudgePromotionResult:
    """Sign the judge promotion, append ``judge.promoted``, then CAS-move ``refs/evotree/judge``.

    ``policy`` from :func:`evotree.gates.verify.trusted_policy`, ``approver`` from
    :func:`evotree.gates.signoff.approver_for` with the plan's proposer: the same rules as an
    analyzers promotion (an allowed key, not the proposer's; refused here too). The statement names
    the new and the previous judge commit, the sha256 of the diff shown and the proposer
    (``created_by``: ``evotree verify`` refuses a statement whose signer proposed it).
    """

    if not plan.proposed_by:
        raise InvalidState(
            "this judge change has no proposer: it was not proposed with `evotree judge propose`",
            fix="propose it first (evotree judge propose DIR), then promote it",
        )
    if email_of(plan.proposed_by) == email_of(approver.principal):
        raise SignoffRefused(
            f"the approver ({approver.principal}) proposed this judge change ({plan.proposed_by}): "
            "a change cannot approve itself",
            fix="another person listed in the allowed signers signs",
        )

    statement = new_statement(
        ws,
        JUDGE_PROMOTION_TYPE,
        approver,
        commit=plan.commit,
        previous_commit=plan.previous_commit,
        diff_hash=plan.diff_hash,
        created_by=plan.proposed_by,
        proposal=plan.proposal,
    )
    signature = sign_statement(policy, approver, statement)
    git = ws.git

    def change(txn: LedgerTxn) -> Event:
        current = (txn.meta.get("judge") or {}).get("commit")
        if current != plan.previous_commit:
            raise InvalidState(
                f"the ledger's judge is now {str(current)[:10]}, not {plan.previous_commit[:10]}",
                fix="another judge promotion landed first; run the command again",
            )
        txn.meta["judge"] = {"commit": plan.commit}
        promoted = JudgePromoted(
            commit=plan.commit,
            previous_commit=plan.previous_commit,
            statement=statement,
            signature=signature,
            diff=plan.diff,
        )
        return Event.of(promoted, version=None, actor=str(git.identity()), at=statement["at"])

    entry = ws.ledger.transact(change, actor=git.identity())
    try:
        judge_ref_store(git).follow(
            git.repo[plan.commit].id,
            git.repo[plan.previous_commit].id,
            f"evotree judge promote (signed by {approver.principal})",
        )
    except RefRaceLost as exc:
        raise TamperingFound(
            f"the judge promotion is recorded and signed, but {JUDGE_REF} was moved by someone else meanwhile ({exc})",
            fix=f"run `evotree verify`; reset the judge ref: git update-ref {JUDGE_REF} {plan.commit}",
        ) from exc
    return JudgePromotionResult(
        plan.commit,
        plan.previous_commit,
        plan.diff,
        plan.diff_hash,
        approver.principal,
        entry.commit,
        plan.proposed_by,
    )


# ---------------------------------------------------------------------------- migration
@dataclass
class JudgeMigrationResult:
    """What ``evotree judge migrate --json`` prints (schema: ``judge-migrate.schema.json``)."""

    commit: str
    champion: str
    champion_commit: str
    files: list[dict[str, Any]]
    ledger_commit: str
    version: str | None
    worktree: str | None
    next_steps: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


def migrate_judge(ws: Workspace, *, branch: bool = True) -> JudgeMigrationResult:
    """Move the signed champion's judge paths into a first judge commit on ``refs/evotree/judge``.

    Allowed only while the ledger has no judge (afterwards a change is a signed promotion). The
    files are taken from the signed champion's commit (refused if ``refs/evotree/champion`` is
    not the end of the signed chain), recorded as ``judge.migrated``, and from then on runs judge
    with them. With ``branch`` a new version branched from the champion commits their removal
    from the tree; until a person promotes it (``evotree promote V --allow-policy-change``: it
    changes protected paths) the champion's tree still holds them, but runs ignore that copy.
    """
    if judge_in_force(ws) is not None:
        raise InvalidState(
            f"the ledger already has a judge in force ({str(judge_in_force(ws))[:10]})",
            fix="change it with a signed promotion: evotree judge export DIR, edit, "
            "evotree judge promote DIR",
        )
    champion, champion_commit = _signed_champion(ws)
    policy = policy_at(ws, champion, champion_commit)
    judge_paths = list(policy.config.eval.judge_paths)
    repo = ws.git.repo
    files = tree_judge_files(repo, champion_commit, judge_paths)
    if not files:
        raise InvalidState(
            f"the champion {champion} has no files under [eval].judge_paths ({', '.join(judge_paths)})",
            fix="nothing to migrate: commit the judge's files in a directory outside the repository "
            "and promote them (evotree judge promote DIR) once a judge exists, or re-run init",
        )
    actor = ws.git.identity()
    oid = write_judge_commit(
        ws.git,
        files,
        parent=None,
        identity=actor,
        message=f"evotree: judge store migrated from {champion} ({champion_commit[:10]})\n",
    )
    entry = _record_migration(ws, oid, champion, champion_commit, sorted(files))
    specs = [p.rstrip("/") for p in judge_paths]
    if branch:
        version, worktree, steps = _branch_removal(ws, champion, judge_paths, oid)
    else:
        version = worktree = None
        steps = [
            "branch a version from the champion, remove the judge paths there and promote it: evotree branch "
            f"-m 'remove judge paths' && git -C <worktree> rm -r {' '.join(specs)} && git -C <worktree> commit "
            "-m 'judge in refs/evotree/judge' && evotree promote V --allow-policy-change"
        ]
    steps += [
        f"remove them from your own checkout's branch too: git rm -r {' '.join(specs)} && git commit",
        "they remain in git history and in existing clones; purge them with a history rewrite "
        f"(git filter-repo --invert-paths {' '.join('--path ' + s for s in specs)}) only if that matters",
        "until the removal is promoted, runs already judge with refs/evotree/judge (the champion's copy is "
        "ignored)",
    ]
    return JudgeMigrationResult(
        str(oid),
        champion,
        champion_commit,
        [f.to_dict() for f in judge_files(repo, oid)],
        entry.commit,
        version,
        str(worktree) if worktree else None,
        steps,
    )


def _signed_champion(ws: Workspace) -> tuple[str, str]:
    """The signed champion and its commit; refused unless ``refs/evotree/champion`` is it."""
    report = verify_workspace(ws, check_tags=False)
    ref = ws.git.ref_target(CHAMPION_REF)
    if not report.champion_commit or ref is None or str(ref) != report.champion_commit:
        raise TamperingFound(
            f"refusing to migrate: {CHAMPION_REF} is not the signed champion "
            f"({report.champion} @ {report.champion_commit[:10]})",
            fix="run `evotree verify` and restore the champion ref first",
        )
    return report.champion, report.champion_commit


def _record_migration(
    ws: Workspace, oid: pygit2.Oid, champion: str, champion_commit: str, files: list[str]
) -> LedgerEntry:
    """Append ``judge.migrated`` (only while no judge is recorded), then move the judge ref."""
    actor = ws.git.identity()

    def change(txn: LedgerTxn) -> Event:
        if (txn.meta.get("judge") or {}).get("commit"):
            raise InvalidState("a judge was recorded meanwhile", fix="run `evotree judge show`")
        txn.meta["judge"] = {"commit": str(oid)}
        migrated = JudgeMigrated(
            commit=str(oid), champion=champion, champion_commit=champion_commit, files=files
        )
        return Event.of(migrated, version=None, actor=str(actor))

    entry = ws.ledger.transact(change, actor=actor)
    try:
        store = judge_ref_store(ws.git)
        store.follow(oid, ws.git.ref_target(JUDGE_REF), "evotree judge migrate")
    except RefRaceLost as exc:
        raise TamperingFound(
            f"the migration is recorded, but {JUDGE_REF} was moved meanwhile ({exc})",
            fix=f"git update-ref {JUDGE_REF} {oid}",
        ) from exc
    return entry


def _branch_removal(
    ws: Workspace, champion: str, judge_paths: list[str], oid: pygit2.Oid
) -> tuple[str, Path, list[str]]:
    """A new version from the champion that commits the judge paths' removal, and what next."""
    specs = [p.rstrip("/") for p in judge_paths]
    record = create_version(
        ws,
        hypothesis=f"remove the judge paths ({', '.join(judge_paths)}) from the tree: "
        "the hidden data now lives in refs/evotree/judge",
        parent=champion,
    )
    path = ws.absolute(str(record.worktree))
    ws.git.run("rm", "-r", "-q", "--ignore-unmatch", "--", *specs, cwd=path)
    ws.git.run(
        "commit",
        "-q",
        "-m",
        f"remove {', '.join(judge_paths)}: the judge's hidden data is in "
        f"{JUDGE_REF} ({str(oid)[:10]})",
        cwd=path,
    )
    steps = [
        f"run it and promote it (removing protected paths is a policy change): evotree run {record.id} "
        f"--seeds 2 && evotree promote {record.id} --allow-policy-change"
    ]
    return record.id, record.worktree, steps
