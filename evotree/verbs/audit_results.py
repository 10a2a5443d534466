"""Typed results of the audit verbs' ``--json`` outputs: the leak audit of a version or of
trajectory files, the repository audit, and the analyzers' backtest. Their schemas are derived
from these types (:mod:`evotree.verbs.schemas`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from evotree.harness.audit.repo import RepoAudit, SanitizeResult

__all__ = [
    "AuditFinding",
    "AuditHit",
    "AuditVerdict",
    "AuditResult",
    "RepoAuditResult",
    "BacktestOutput",
]


Severity = Literal["info", "warn", "high", "critical"]


#: a trajectory's format as the audit read it
TrajectoryFormat = Literal[
    "evotree",
    "shell",
    "swe-agent",
    "mini-swe-agent",
    "chat",
    "claude-code",
    "codex",
    "codex-exec",
    "trace",
    "unknown",
]


class AuditFinding(TypedDict):
    """A finding of the audit layer (``Finding.to_dict()``)."""

    v: Literal[1]
    layer: Literal["audit"]
    code: str
    severity: Severity
    title: str
    #: trajectory audit: trajectories, total, rate, commands, rules (counts), examples;
    #: contamination: checked, contaminated, rate, n-gram sizes, examples
    evidence: dict[str, Any]
    suggestion: str
    skills: list[str]
    run_id: str | None
    version: str | None
    harness_version: str


class AuditHit(TypedDict):
    """One rule that fired on one simple command (``Hit.to_dict()``)."""

    code: str
    severity: Severity
    rule: str
    #: the simple command (after unwrapping bash -c, env, sudo, ...)
    command: str
    revisions: NotRequired[list[str]]
    #: the output line that shows the leak (content provenance), quoted
    output: NotRequired[str]
    refs: NotRequired[list[str]]
    why: NotRequired[str]


class AuditVerdict(TypedDict):
    """What the audit found in one trajectory (``TrajectoryVerdict.to_dict()``)."""

    #: run/phase/step/group/sample for evotree rollouts; the file name otherwise
    id: str
    format: TrajectoryFormat
    source: str | None
    task_id: str | None
    run_id: str | None
    phase: str | None
    steps: int
    #: a hit of severity high or above
    flagged: bool
    uses_git_history: bool
    worst: Severity | None
    hits: list[AuditHit]
    #: hits dropped because every hash they name is the task's base or its ancestor
    cleared: list[dict[str, Any]]
    future_hashes: list[str]


class AuditResult(TypedDict):
    """Leak audit (``evotree audit V --json``: ``AuditReport.to_dict()``; ``evotree audit
    trajectories FILE... --json``: ``TrajectoryAudit.to_dict()``). passed is false when any
    finding is high or above (exit code 28). A version audit has version, the scores, checks and
    runs; a trajectory-file audit has steps, bytes and seconds."""

    v: Literal[1]
    passed: bool
    findings: list[AuditFinding]
    #: trajectories (rollouts with commands, or transcript sessions) audited
    trajectories: int
    flagged: int
    #: trajectories that used git history or internals beyond the base
    git_history: int
    git_history_rate: float
    #: trajectories with hits (all of them with --all)
    verdicts: list[AuditVerdict]
    worst: NotRequired[Severity | None]
    version: NotRequired[str]
    #: mean judge score of the headline split
    raw_score: NotRequired[float | None]
    #: the same with flagged trajectories' evals left out (null when all were flagged)
    leak_adjusted_score: NotRequired[float | None]
    #: the same with flagged trajectories' evals counted as 0
    leak_zeroed_score: NotRequired[float | None]
    score_metric: NotRequired[str | None]
    runs: NotRequired[list[str]]
    #: what each check did, or why it was skipped
    checks: NotRequired[dict[str, str]]
    warnings: NotRequired[list[str]]
    contamination: NotRequired[dict[str, Any] | None]
    #: the memory entry recording a failed audit
    incident: NotRequired[str | None]
    steps: NotRequired[int]
    bytes: NotRequired[int]
    seconds: NotRequired[float]


@dataclass(frozen=True)
class RepoAuditResult:
    """``evotree audit repo PATH --json``: the repository's audit (its fields at the top level)
    and, with ``--sanitize``, the clean copy with its own audit."""

    audit: RepoAudit
    sanitized: SanitizeResult | None = None

    @property
    def passed(self) -> bool:
        """What decides the exit code: the clean copy's audit with --sanitize, else the source's."""
        return self.sanitized.passed if self.sanitized is not None else self.audit.passed

    @property
    def exit_code(self) -> int:
        """28 when the audit did not pass (the JSON is still printed), else 0."""
        return 0 if self.passed else 28

    def to_dict(self) -> dict[str, Any]:
        data = self.audit.to_dict()
        data["sanitized"] = self.sanitized.to_dict() if self.sanitized is not None else None
        return data


class FindingSummary(TypedDict):
    code: str
    severity: str | None
    title: str


class FindingChangeRow(TypedDict):
    """How one finding code of one run changed."""

    run_id: str
    code: str
    kind: Literal["new", "resolved", "severity_changed"]
    before: str | None
    after: str | None


class DeadGroups(TypedDict):
    groups: int
    dead: int
    ratio: float | None


class RunBacktestRow(TypedDict):
    """One run, before and after the transform (``RunBacktest.to_dict()``)."""

    run_id: str
    findings_before: list[FindingSummary]
    findings_after: list[FindingSummary]
    changes: list[FindingChangeRow]
    dead_groups_before: DeadGroups
    dead_groups_after: DeadGroups
    dead_group_ratio_before: float | None
    dead_group_ratio_after: float | None
    #: (dead before - dead after) / dead before; null when no group was dead before
    revived_fraction: float | None
    groups_revived: int
    groups_killed: int


class BacktestAnalyzers(TypedDict):
    """The analyzers a backtest used: their version label (the findings' ``harness_version``
    stamp) and threshold overrides."""

    harness_version: str
    #: analyzer -> threshold overrides
    thresholds: dict[str, Any]
    dead_group_std_epsilon: float


class BacktestOutput(TypedDict):
    """``evotree backtest V --json`` (``BacktestResult.to_dict()``): the analyzers re-run over the
    stored rollouts, as they are and under the transform."""

    runs_dir: str
    run_ids: list[str]
    #: the reward transform (RewardTransform.to_dict())
    transform: dict[str, Any]
    layers: list[str] | None
    analyzers: BacktestAnalyzers
    runs: list[RunBacktestRow]
    #: every run's changes together
    changes: list[FindingChangeRow]
