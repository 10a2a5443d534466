"""Typed rows of the gate and promotion verbs' ``--json`` outputs: the gate policy and the
compared runs' evidence, judge and analyzers diffs, the signed chains' promotions, accepted
signers, the analyzer versions' list and finalize's dry run. Their schemas are derived from these
types
(:mod:`evotree.verbs.schemas`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NotRequired, TypedDict

from evotree.core.schemas.derive import schema_note
from evotree.diagnostics.analyzer_versions import AnalyzerVersion
from evotree.gates.finalize import FinalizePlan
from evotree.verbs.results import COMMIT_PATTERN

__all__ = [
    "GatePolicy",
    "EvidenceSide",
    "CompareEvidence",
    "JudgeFileRow",
    "JudgeDiffFile",
    "JudgeDiff",
    "AnalyzersDiff",
    "ChainEnd",
    "PromotionRow",
    "AnalyzersPromotionRow",
    "JudgePromotionRow",
    "FinalizeDryRun",
    "AnalyzersListResult",
    "SignersAccepted",
]


class GatePolicy(TypedDict):
    """The gate policy the gates applied: read from the champion's commit only."""

    #: the champion's commit the policy was read from
    commit: str
    #: its [gates] section
    gates: dict[str, Any]
    #: its protected paths
    protect: list[str]
    #: the principals allowed to sign a promotion
    allowed_signers: list[str]
    budget_max_runs_per_version: NotRequired[int]


class EvidenceSide(TypedDict):
    """Run ids per state of the runs counted for one version; unrecorded: run directories of the
    version the ledger does not know (never read)."""

    version: str
    runs: int
    ok: list[str]
    missing: list[str]
    tampered: list[str]
    unfinished: list[str]
    running: list[str]
    unverified: list[str]
    unrecorded: list[str]
    #: run id -> what was found
    problems: dict[str, Any]


class CompareEvidence(TypedDict):
    """The runs the ledger records for each side, checked against their run.finished manifests.
    ok is false when a counted run is missing, tampered, unfinished or unverified: such runs are
    left out of the numbers, named here and in the caveat, and the score gate fails."""

    ok: bool
    #: one critical score.evidence_* finding per kind, naming the runs
    findings: list[dict[str, Any]]
    a: EvidenceSide
    b: EvidenceSide


#: a sha256 digest in hex
SHA256_PATTERN = "^[0-9a-f]{64}$"


class JudgeFileRow(TypedDict):
    """One file of a judge commit: its path, size and sha256 (never its content)."""

    path: str
    size: int
    sha256: str
    executable: bool


class JudgeDiffFile(TypedDict):
    """One judge file, compared with the judge in force."""

    path: str
    status: Literal["added", "changed", "removed", "unchanged"]
    size: int | None
    sha256: str | None
    previous_sha256: str | None


class JudgeDiff(TypedDict):
    """What a judge promotion changes; its canonical JSON's sha256 is what the approver signs."""

    commit: str
    previous_commit: str | None
    files: list[JudgeDiffFile]


class AnalyzersChange(TypedDict):
    """The analyzer version's analyzers.py, compared with the one in force."""

    status: Literal["absent", "added", "changed", "unchanged", "removed"]
    sha256: str | None
    previous_sha256: str | None


class AnalyzersDiff(TypedDict):
    """What an analyzers promotion changes; its canonical JSON's sha256 is what the approver signs
    (so its keys ``harness``, ``previous_harness`` are persisted names: existing ledgers and
    signed statements use them)."""

    harness: str
    commit: str | None
    previous_harness: str
    previous_commit: str | None
    #: analyzer, key, old, new (old/new null: the analyzer's default)
    thresholds: list[dict[str, Any]]
    analyzers_py: AnalyzersChange


class ChainEnd(TypedDict):
    """The end of a signed chain (analyzers: its id and commit; judge: its commit, null: none)."""

    id: NotRequired[str]
    commit: str | None


class PromotionRow(TypedDict):
    """A signed promotion of the champion, oldest first."""

    version: str | None
    commit: str
    previous: str
    approver: str | None
    evidence_hash: str | None
    at: NotRequired[str]
    signed: NotRequired[bool]
    ledger_commit: NotRequired[str]


class AnalyzersPromotionRow(TypedDict):
    """A signed analyzers promotion, oldest first."""

    #: the analyzer version it put in force
    analyzers: str
    commit: str | None
    previous: str | None
    approver: str | None
    diff_hash: str | None
    at: NotRequired[str]
    ledger_commit: NotRequired[str]


class JudgePromotionRow(TypedDict):
    """A valid judge migration or signed judge promotion, oldest first."""

    kind: Literal["promotion", "migration"]
    commit: str
    previous: str | None
    approver: str | None
    diff_hash: str | None
    at: NotRequired[str]
    ledger_commit: NotRequired[str]


@dataclass(frozen=True)
class FinalizeDryRun:
    """``evotree finalize --dry-run --json``: what finalize would judge on the held-out split, and
    whether it would retrain the selected commit first; nothing is recorded."""

    plan: FinalizePlan
    #: ``[eval] finalize_retrain``: the selected commit is trained again, clean, before the judge
    retrain: bool
    dry_run: bool = True
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, "dry_run": True, "retrain": self.retrain, **self.plan.to_dict()}


@dataclass(frozen=True)
class AnalyzersListResult:
    """``evotree analyzers list --json``: the analyzer versions, the built-in ``h0`` first."""

    #: the end of the signed chain of analyzers promotions (what diagnose and the gates use)
    active: str
    #: false (with a warning) when the analyzers ref or the ledger disagree with the signed chain
    signed: bool
    warning: str | None
    analyzers: list[AnalyzerVersion]
    v: int = 1

    @classmethod
    def of(cls, data: dict[str, Any]) -> AnalyzersListResult:
        """From :func:`evotree.gates.analyzer_versions.list_analyzer_versions`'s dict."""
        return cls(
            active=data["active"],
            signed=bool(data["signed"]),
            warning=data["warning"],
            analyzers=[AnalyzerVersion(**h) for h in data["analyzers"]],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "active": self.active,
            "signed": self.signed,
            "warning": self.warning,
            "analyzers": [h.to_dict() for h in self.analyzers],
        }


@dataclass(frozen=True)
class SignersAccepted:
    """``evotree signers accept --json``: a fetched signers.added step accepted in this clone."""

    #: the ledger commit of the signers.added step
    accepted: str = field(metadata=schema_note(pattern=COMMIT_PATTERN))
    #: the principals that step allows to sign
    signers: list[str] = field(default_factory=list)
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, "accepted": self.accepted, "signers": list(self.signers)}
