"""Analyzer versions' signed lineage: which version is in force, branching one, promoting one.

The analyzers (thresholds and plug-in analyzers, read by :mod:`evotree.diagnostics`) decide what
the signal gate blocks, so promoting an analyzer version is a person's signed decision exactly
like promoting a policy version: :func:`plan_analyzers_promotion` computes what changes
(thresholds diff, ``analyzers.py`` sha256) without running any workspace code,
:func:`record_analyzers_promotion` signs a statement naming the diff's sha256 and moves
``refs/evotree/harness`` (the lineage's persisted names keep their first spelling). The version
in force is the end of the chain of *signed* analyzers promotions from the built-in ``h0``;
:func:`trusted_analyzers` computes it with ``evotree verify``'s walk, and a ref moved by hand is
reported, never followed. :func:`active_analyzers` loads it for ``diagnose`` and the gates.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import pygit2
from evotree.diagnostics.analyzer_versions import (
    ACTIVE_KEY,
    ANALYZERS_REF,
    BRANCH_PREFIX,
    BUILTIN,
    RECORDS_KEY,
    THRESHOLDS_FILE,
    TEMPLATE,
    ActiveAnalyzers,
    AnalyzerVersion,
    analyzers_diff,
    analyzer_records,
    load_analyzer_version,
    parse_thresholds_toml,
    read_blob,
)

from evotree.core.chain_trust import ChainTrust
from evotree.core.errors import (
    DirtyState,
    EvotreeError,
    InvalidState,
    UnknownVersion,
)
from evotree.core.events import AnalyzerVersionCreated, AnalyzersPromoted
from evotree.core.ledger import Event, LedgerTxn, utcnow
from evotree.core.workspace import Workspace
from evotree.gates.trust import chain_trust
from evotree.core.versions import _check_free_path
from evotree.core.gitio import check_worktree_special_files
from evotree.core.safegit import run_git
from evotree.core.safegit import approver_process
from evotree.gates.errors import TamperingFound
from evotree.gates.signing import canonical
from evotree.gates.signing import sha256_hex
from evotree.gates.statements import new_statement
from evotree.gates.statements import sign_statement
from evotree.gates.verify_base import ANALYZERS_PROMOTION_TYPE
from evotree.core.gitio import RefRaceLost

if TYPE_CHECKING:
    from evotree.gates.policy import Policy
    from evotree.gates.signoff import Approver

__all__ = [
    "AnalyzersPromotionPlan",
    "AnalyzersPromotionResult",
    "active_analyzers",
    "create_analyzer_version",
    "list_analyzer_versions",
    "plan_analyzers_promotion",
    "record_analyzers_promotion",
    "trusted_analyzers",
]


def list_analyzer_versions(ws: Workspace) -> dict[str, Any]:
    """``{"v": 1, "active": id, "signed": bool, "warning", "analyzers": [...]}``, ``h0`` first.

    ``active`` is the end of the signed chain of analyzers promotions (what diagnose and the
    gates use); ``signed`` is false, with a ``warning``, when the ref or the ledger disagree.
    """
    meta = ws.ledger.meta()
    trust = trusted_analyzers(ws)
    active = trust.id
    items = [
        AnalyzerVersion(
            BUILTIN, None, "built-in analyzers and thresholds", "evotree", "", None, None
        )
    ]
    for record in sorted((meta.get(RECORDS_KEY) or {}).values(), key=lambda r: int(r["id"][1:])):
        items.append(
            AnalyzerVersion(
                **{k: record.get(k) for k in AnalyzerVersion.__dataclass_fields__ if k != "active"}
            )
        )
    for item in items:
        item.active = item.id == active
    return {
        "v": 1,
        "active": active,
        "signed": trust.trusted,
        "warning": trust.warning,
        "analyzers": [h.to_dict() for h in items],
    }


def create_analyzer_version(ws: Workspace, *, hypothesis: str) -> AnalyzerVersion:
    """A new analyzer version ``hN`` from the active one, with its branch and worktree."""
    if not hypothesis.strip():
        raise EvotreeError(
            "a hypothesis (-m) is required", fix='pass -m "what the new thresholds should catch"'
        )
    git = ws.git
    actor = git.identity()
    meta = ws.ledger.meta()
    trust = trusted_analyzers(ws)  # branch from the signed version, never from a ref moved by hand
    parent = trust.id
    base = git.repo[trust.commit].id if trust.commit else None
    if base is None:  # the first analyzers branch: a root commit holding the template
        sig = actor.signature()
        builder = git.repo.TreeBuilder()
        builder.insert(
            THRESHOLDS_FILE, git.repo.create_blob(TEMPLATE.encode()), pygit2.GIT_FILEMODE_BLOB
        )
        base = git.repo.create_commit(
            None, sig, sig, "evotree: analyzers template\n", builder.write(), []
        )
    number = max([int(k[1:]) for k in (meta.get(RECORDS_KEY) or {})] + [0]) + 1
    while not git.create_ref(
        f"refs/heads/{BRANCH_PREFIX}h{number}", base, "evotree analyzers branch"
    ):
        number += 1

    hid = f"h{number}"
    branch = BRANCH_PREFIX + hid
    path = ws.absolute(ws.config.workspace.worktree_dir) / f"analyzers-{hid}"
    try:
        # a file, a folder with contents, or a symbolic link (the worktrees folder is writable by an
        # agent in `evotree agent`: a link planted here would make git check the version out there)
        _check_free_path(path)
    except BaseException:
        git.delete_ref(f"refs/heads/{branch}")  # nothing of ours is at `path`: leave it alone
        raise
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        git.add_worktree(path, branch)
        record = AnalyzerVersion(
            hid, parent, hypothesis.strip(), str(actor), utcnow(), branch, ws.display_path(path)
        )

        def change(txn: LedgerTxn) -> Event:
            records = analyzer_records(txn)
            records[hid] = {k: v for k, v in record.to_dict().items() if k != "active"}
            txn.meta[RECORDS_KEY] = records
            created = AnalyzerVersionCreated(
                harness=hid, parent=parent, hypothesis=record.hypothesis
            )
            return Event.of(created, version=None, actor=str(actor))

        ws.ledger.transact(change, actor=actor)
    except BaseException:
        git.discard_worktree(path)
        git.delete_ref(f"refs/heads/{branch}")
        raise
    return record


def trusted_analyzers(ws: Workspace) -> ChainTrust:
    """The signed analyzers chain's end (``h0``, no commit, when nothing was promoted) and its
    problems
    (:func:`evotree.gates.trust.chain_trust`: verify's walk, kept by the ledger tip and refs)."""
    return chain_trust(ws, "analyzers")


@dataclass
class AnalyzersPromotionPlan:
    """What ``evotree analyzers promote HN`` shows the approver before they sign."""

    analyzers: str
    commit: str | None
    created_by: str
    hypothesis: str
    previous_analyzers: str
    previous_commit: str | None
    diff: dict[str, Any]
    diff_hash: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AnalyzersPromotionResult:
    """What ``evotree analyzers promote --json`` prints (schema: ``analyzers-promote``)."""

    analyzers: str
    commit: str | None
    previous_analyzers: str
    previous_commit: str | None
    diff: dict[str, Any]
    diff_hash: str
    approver: str
    ledger_commit: str

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


def _dirty(ws: Workspace, path: Any) -> list[str]:
    """Uncommitted paths of an analyzer version's worktree, as the approver's git sees them
    (:func:`evotree.core.safegit.run_git`: the system git; no hook, fsmonitor, filter or driver
    runs; git is pointed at the worktree's admin folder, never at its ``.git`` pointer file).
    A root ``.gitignore``/``.gitattributes`` that is not a regular file (a FIFO would block git's
    open for ever) is refused before git starts."""
    import os

    admin = ws.git.worktree_admin_dir(path)
    check_worktree_special_files(path)
    proc = run_git(
        ws.root,
        f"--git-dir={admin}",
        f"--work-tree={os.path.realpath(path)}",
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignore-submodules=all",
        cwd=path,
    )
    if proc.returncode != 0:
        raise EvotreeError(
            f"git status failed in {path}: {proc.stderr.strip()}", fix="check the worktree"
        )
    return [e[3:] for e in proc.stdout.split("\0") if len(e) > 3]


def plan_analyzers_promotion(ws: Workspace, hid: str) -> AnalyzersPromotionPlan:
    """Validate ``hid`` (its branch tip) and compute what promoting it changes; moves nothing.

    Refuses (``TamperingFound``, exit 33) when the version in force is not the end of the signed
    chain: a new signature must not build on a ref moved by hand. Runs no workspace code: the
    approver's key is near (``analyzers.py`` is hashed and shown, never imported).
    """

    with approver_process():
        return _plan_analyzers_promotion(ws, hid)


def _plan_analyzers_promotion(ws: Workspace, hid: str) -> AnalyzersPromotionPlan:

    trust = trusted_analyzers(ws)
    if not trust.trusted:
        raise TamperingFound(
            f"refusing to promote an analyzer version: {trust.warning}",
            fix=trust.fix,
            problems=list(trust.problems),
        )
    records = ws.ledger.meta().get(RECORDS_KEY) or {}
    if hid != BUILTIN and hid not in records:
        raise UnknownVersion(
            f"unknown analyzer version {hid!r}", fix="`evotree analyzers list` lists them"
        )
    if hid == BUILTIN:
        target, created_by, hypothesis = None, "evotree", "built-in analyzers and thresholds"
    else:
        record = records[hid]
        created_by, hypothesis = (
            str(record.get("created_by") or ""),
            str(record.get("hypothesis") or ""),
        )
        if record.get("worktree") and ws.absolute(record["worktree"]).exists():
            dirty = _dirty(ws, ws.absolute(record["worktree"]))
            if dirty:
                raise DirtyState(
                    f"analyzer version {hid} has uncommitted changes: {', '.join(dirty)}",
                    fix=f"commit them in {record['worktree']}",
                    paths=dirty,
                )
        tip = ws.git.ref_target(f"refs/heads/{record['branch']}")
        if tip is None:
            raise UnknownVersion(
                f"the branch {record['branch']} of analyzer version {hid} is gone",
                fix="branch a new analyzer version: evotree analyzers branch -m TEXT",
            )
        target = str(tip)
        raw = read_blob(ws, target, THRESHOLDS_FILE)
        parse_thresholds_toml(
            raw.decode("utf-8", errors="replace") if raw is not None else "",
            f"{THRESHOLDS_FILE} of {hid}",
        )
    if hid == trust.id and target == trust.commit:
        raise InvalidState(
            f"analyzer version {hid} @ {str(target)[:10]} is already in force",
            fix="commit a change on its "
            "branch, or branch a new analyzer version: evotree analyzers branch -m TEXT",
        )
    diff = analyzers_diff(ws, trust.id, trust.commit, hid, target)
    return AnalyzersPromotionPlan(
        hid,
        target,
        created_by,
        hypothesis,
        trust.id,
        trust.commit,
        diff,
        sha256_hex(canonical(diff)),
    )


def record_analyzers_promotion(
    ws: Workspace, policy: Policy, approver: Approver, plan: AnalyzersPromotionPlan
) -> AnalyzersPromotionResult:
    """Sign the promotion, append the ``harness.promoted`` event, then CAS-move the analyzers ref.

    ``policy`` must come from :func:`evotree.gates.policy.trusted_policy` and ``approver`` from
    :func:`evotree.gates.signoff.approver_for` (allowed key, not the version's creator): the same
    rules
    as a version's promotion. The statement names the version, its commit, the previous version
    and its commit, and the sha256 of the diff the person was shown.
    """

    with approver_process(policy.config.tools):
        return _record_analyzers_promotion(ws, policy, approver, plan)


def _record_analyzers_promotion(
    ws: Workspace, policy: Policy, approver: Approver, plan: AnalyzersPromotionPlan
) -> AnalyzersPromotionResult:

    statement = new_statement(
        ws,
        ANALYZERS_PROMOTION_TYPE,
        approver,
        harness=plan.analyzers,
        commit=plan.commit,
        previous_harness=plan.previous_analyzers,
        previous_commit=plan.previous_commit,
        created_by=plan.created_by,
        diff_hash=plan.diff_hash,
    )
    signature = sign_statement(policy, approver, statement)
    git = ws.git

    def change(txn: LedgerTxn) -> Event:
        active = txn.meta.get(ACTIVE_KEY) or BUILTIN
        if active != plan.previous_analyzers:
            raise InvalidState(
                f"the ledger's active analyzer version is now {active}, "
                f"not {plan.previous_analyzers}",
                fix="another analyzers promotion landed first; run the command again",
            )
        txn.meta[ACTIVE_KEY] = plan.analyzers
        promoted = AnalyzersPromoted(
            harness=plan.analyzers,
            commit=plan.commit,
            previous_harness=plan.previous_analyzers,
            previous_commit=plan.previous_commit,
            statement=statement,
            signature=signature,
            diff=plan.diff,
        )
        return Event.of(promoted, version=None, actor=str(git.identity()), at=statement["at"])

    entry = ws.ledger.transact(change, actor=git.identity())
    previous = git.repo[plan.previous_commit].id if plan.previous_commit else None
    try:
        if plan.commit is None:
            if git.ref_target(ANALYZERS_REF) != previous:
                raise RefRaceLost(ANALYZERS_REF)
            git.delete_ref(ANALYZERS_REF)
        else:
            git.cas_ref(
                ANALYZERS_REF,
                git.repo[plan.commit].id,
                previous,
                f"evotree analyzers promote {plan.analyzers} (signed by {approver.principal})",
            )
    except RefRaceLost as exc:
        restore = (
            f"git update-ref {ANALYZERS_REF} {plan.commit}"
            if plan.commit
            else f"git update-ref -d {ANALYZERS_REF}"
        )
        raise TamperingFound(
            f"the promotion of analyzer version {plan.analyzers} is recorded and signed, but "
            f"{ANALYZERS_REF} was moved by someone else meanwhile ({exc})",
            fix=f"run `evotree verify`; reset the analyzers ref: {restore}",
        ) from exc
    return AnalyzersPromotionResult(
        plan.analyzers,
        plan.commit,
        plan.previous_analyzers,
        plan.previous_commit,
        plan.diff,
        plan.diff_hash,
        approver.principal,
        entry.commit,
    )


def active_analyzers(ws: Workspace) -> ActiveAnalyzers:
    """The analyzers in force: the end of the signed chain of their promotions (never a policy
    branch).

    A ``refs/evotree/harness`` moved by hand is not followed: the last signed version is used,
    with ``signed=False`` and a ``warning`` (see
    :func:`evotree.diagnostics.analyzer_versions.analyzers_trust_finding`).
    """
    return load_analyzer_version(ws, trusted_analyzers(ws))
