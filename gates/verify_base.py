"""What `evotree verify` reports and how one signed statement is checked.

The statement types and event kinds the signed chains use, :class:`Problem` and
:class:`VerifyReport`, and :func:`check_signed_statement` (a statement's type, workspace, version,
signer and signature under the policy in force) — shared by the walk of the ledger
(:mod:`evotree.gates.verify`) and the analyzers' and the judge's chains
(:mod:`evotree.gates.verify_chains`).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from evotree.core.ledger import EventKind
from evotree.gates.signing import canonical, verify

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace
    from evotree.gates.policy import Policy


__all__ = [
    "ANALYZERS_EVENT",
    "ANALYZERS_PROBLEMS",
    "ANALYZERS_PROMOTION_TYPE",
    "DECISION_TYPE",
    "JUDGE_EVENT",
    "JUDGE_MIGRATED_EVENT",
    "JUDGE_PROBLEMS",
    "JUDGE_PROMOTION_TYPE",
    "PROMOTION_TYPE",
    "RUN_APPROVAL_TYPE",
    "SIGNERS_TYPE",
    "Problem",
    "VerifyReport",
    "check_signed_statement",
    "email_of",
    "is_commit",
    "tag_name",
]


PROMOTION_TYPE = "evotree.promotion"
DECISION_TYPE = "evotree.decision"
RUN_APPROVAL_TYPE = "evotree.run-approval"
#: the statement of the first allowed signers, added after init (evotree.gates.bootstrap)
SIGNERS_TYPE = "evotree.signers-bootstrap"
#: the analyzers promotion's statement; persisted name (existing ledgers and signed statements
#: use it)
ANALYZERS_PROMOTION_TYPE = "evotree.harness-promotion"
ANALYZERS_EVENT = EventKind.ANALYZERS_PROMOTED.value
JUDGE_PROMOTION_TYPE = "evotree.judge-promotion"
JUDGE_EVENT = EventKind.JUDGE_PROMOTED.value
JUDGE_MIGRATED_EVENT = EventKind.JUDGE_MIGRATED.value
#: Problems that make the judge data in force untrusted (the ledger itself, or the judge chain).
JUDGE_PROBLEMS = (
    "ledger_root",
    "ledger_reinit",
    "ledger_rewritten",
    "judge_promotion",
    "ledger_judge",
    "judge_ref",
    "judge_reflog",
)
#: Problems that make the analyzers in force untrusted (the ledger itself, or their chain). The
#: ``harness_*`` kinds keep the lineage's first spelling: scripts and reports read them.
ANALYZERS_PROBLEMS = (
    "ledger_root",
    "ledger_reinit",
    "ledger_rewritten",
    "harness_promotion",
    "ledger_harness",
    "harness_ref",
    "harness_reflog",
)


def tag_name(version: str) -> str:
    """The signed tag of a promotion: ``evotree/promoted/<V>``."""
    return f"evotree/promoted/{version}"


def email_of(identity: Any) -> str:
    """``"Ada <ada@x.org>"`` -> ``ada@x.org``; a bare principal is returned lower-cased."""
    if not identity:
        return ""
    identity = str(identity)
    match = re.search(r"<([^>]*)>", identity)
    return (match.group(1) if match else identity).strip().lower()


@dataclass
class Problem:
    """One thing verify found wrong."""

    kind: str
    message: str
    version: str | None = None
    ledger_commit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class VerifyReport:
    """What ``evotree verify --json`` prints (schema: ``verify.schema.json``)."""

    ok: bool
    anchor: dict[str, Any]
    champion: str
    champion_commit: str
    promotions: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    checked: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: the end of the analyzers chain: {"id": the analyzer version in force, "commit"}
    analyzers: dict[str, Any] = field(default_factory=lambda: {"id": "h0", "commit": None})
    analyzers_promotions: list[dict[str, Any]] = field(default_factory=list)
    #: the end of the judge chain: {"commit": the judge store's commit in force, or None}
    judge: dict[str, Any] = field(default_factory=lambda: {"commit": None})
    judge_promotions: list[dict[str, Any]] = field(default_factory=list)
    #: set by `evotree verify` (not by the walks the gates reuse): phases without a sandbox
    sandbox_warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["v"] = 1
        return out


def check_signed_statement(
    policy: Policy,
    statement: Any,
    signature: Any,
    *,
    expect_type: str,
    anchor: str,
    version: str | None,
) -> list[str]:
    """Reasons why ``statement``/``signature`` is not a valid signed approval under ``policy`` ([] = valid)."""
    if not isinstance(statement, dict):
        return ["no signed statement"]
    reasons = []
    if statement.get("type") != expect_type:
        reasons.append(f"statement type {statement.get('type')!r}, expected {expect_type!r}")
    if statement.get("workspace") != anchor:
        reasons.append("statement names another workspace (anchor commit differs)")
    if version is not None and statement.get("version") != version:
        reasons.append(f"statement is for {statement.get('version')!r}, the event for {version!r}")
    approver = str(statement.get("approver") or "")
    if policy.signers_error:
        reasons.append(f"no allowed signers: {policy.signers_error}")
    elif not any(s.allows(approver) for s in policy.signers):
        reasons.append(
            f"signer {approver!r} is not in {policy.allowed_signers_path} of {policy.champion}"
        )
    else:
        # the ssh-keygen the policy records (a system program; never one found on PATH)
        ok, message = verify(
            policy.allowed_signers_text,
            approver,
            canonical(statement),
            signature,
            program=policy.config.tools.ssh_keygen or None,
        )
        if not ok:
            reasons.append(
                f"signature invalid: {message.splitlines()[-1] if message else 'no signature'}"
            )
    created_by = email_of(statement.get("created_by"))
    if created_by and email_of(approver) == created_by:
        reasons.append(f"approver {approver} created the version")
    return reasons


def is_commit(ws: Workspace, sha: Any) -> bool:
    import pygit2

    if not isinstance(sha, str) or not re.fullmatch(r"[0-9a-f]{40}", sha):
        return False
    try:
        return isinstance(ws.git.repo[sha], pygit2.Commit)
    except (KeyError, ValueError):
        return False
