"""Typed results of the ``--json`` outputs that are not one library record: ``log``, the error
every ``--json`` command prints when it fails, and memory's listings. Their schemas are derived from these types
(:mod:`evotree.verbs.schemas`), and each builds the JSON it describes (``to_dict``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, NotRequired, TypedDict

from evotree.core.errors import EvotreeError
from evotree.core.schemas.derive import OPTIONAL, schema_note
from evotree.diagnostics.harnesses import HarnessVersion
from evotree.gates.finalize import FinalizePlan
from evotree.verbs.run_list import RunsResult
from evotree.harness.audit.repo import RepoAudit, SanitizeResult
from evotree.memory.model import MemoryEntry
from evotree.memory.read import SearchHit, SkillStatus
from evotree.skills.catalog import SkillInfo

__all__ = [
    "COMMIT_PATTERN",
    "LogEntry",
    "LogResult",
    "ErrorInfo",
    "ErrorResult",
    "MemoryListResult",
    "MemorySearchResult",
    "MemorySkillsResult",
    "GatePolicy",
    "FindingRef",
    "SkillMemory",
    "RecipeChange",
    "EvidenceSide",
    "CompareEvidence",
    "AuditFinding",
    "AuditHit",
    "AuditVerdict",
    "AuditResult",
    "ParamChange",
    "FileChange",
    "Unreadable",
    "SkillDetail",
    "SkillShowResult",
    "SkillListResult",
    "RunningRow",
    "VersionStatusRow",
    "LogFile",
    "SkippedRun",
    "RejectedRef",
    "JudgeFileRow",
    "JudgeDiffFile",
    "JudgeDiff",
    "HarnessDiff",
    "ChainEnd",
    "PromotionRow",
    "HarnessPromotionRow",
    "JudgePromotionRow",
    "EvidenceManifest",
    "EventData",
    "ExitCodesResult",
    "PostedComment",
    "RepoAuditResult",
    "ReportVerdict",
    "ReportSubject",
    "ScoresSection",
    "PerTaskSection",
    "FindingsSection",
    "ReportAuditSection",
    "Section",
    "LineageSection",
    "CurvesSection",
    "SignalsView",
    "Rate",
    "Spend",
    "ClassStat",
    "VersionIntervention",
    "HistoricalBest",
    "FirstAttempt",
    "PostPeak",
    "SpendView",
    "CostPerCandidate",
    "Recommendation",
    "SearchRates",
    "FinalizeDryRun",
    "RunsResult",
    "HarnessListResult",
    "ConfigCheckResult",
    "SignersAccepted",
    "SqlOutput",
    "AgentConfigResult",
    "SchemaListResult",
    "BacktestOutput",
    "LogLine",
]

#: a git object name: SHA-1 (40 hex digits) or SHA-256 (64)
COMMIT_PATTERN = "^[0-9a-f]{40}([0-9a-f]{24})?$"


@dataclass(frozen=True)
class LogEntry:
    """A ledger event (one line of JSON in a ledger commit message) and the ledger commit that
    holds it."""

    #: the event's kind: workspace.initialized, version.created, run.finished, promotion, … (its
    #: payload type in evotree.core.events)
    kind: str
    version: str | None
    #: git identity 'Name <email>'
    actor: str
    #: UTC, ISO 8601
    at: str
    #: the event's own fields (its payload)
    data: dict[str, Any]
    #: the ledger commit
    commit: str = field(metadata=schema_note(pattern=COMMIT_PATTERN))
    #: record schema version; readers skip versions they do not know
    v: int = 1

    @classmethod
    def of(cls, item: dict[str, Any]) -> LogEntry:
        """From :func:`evotree.core.versions.log_entries`'s dict (an event and its commit)."""
        return cls(
            kind=item["kind"],
            version=item.get("version"),
            actor=item["actor"],
            at=item["at"],
            data=dict(item.get("data") or {}),
            commit=item["commit"],
            v=int(item.get("v", 1)),
        )


@dataclass(frozen=True)
class LogResult:
    """``evotree log --json``: the ledger's events, newest first."""

    #: newest first
    events: list[LogEntry]
    v: int = 1

    @classmethod
    def of(cls, entries: Iterable[dict[str, Any]]) -> LogResult:
        return cls(events=[LogEntry.of(item) for item in entries])

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ErrorInfo:
    """What went wrong, and how to repair it."""

    #: stable error code, e.g. unknown_version
    code: str
    #: the process's exit code (``evotree schema exit-codes`` lists them)
    exit_code: int
    message: str
    #: what to do about it
    fix: str | None = field(default=None, metadata={**OPTIONAL, "schema": {"type": "string"}})
    #: the facts the message names (a version, a budget, a limit, …)
    details: dict[str, Any] | None = field(
        default=None, metadata={**OPTIONAL, "schema": {"type": "object"}}
    )


@dataclass(frozen=True)
class ErrorResult:
    """The JSON printed by any ``--json`` command that fails (exit code != 0)."""

    error: ErrorInfo

    @classmethod
    def of(cls, exc: EvotreeError) -> ErrorResult:
        return cls(
            ErrorInfo(
                code=exc.code,
                exit_code=exc.exit_code,
                message=exc.message,
                fix=exc.fix or None,
                details=dict(exc.details) or None,
            )
        )

    def to_dict(self) -> dict[str, Any]:
        info = {
            k: v
            for k, v in asdict(self.error).items()
            if v is not None or k not in ("fix", "details")
        }
        return {"error": info}


@dataclass(frozen=True)
class MemoryListResult:
    """``evotree memory list --json``: the entries, oldest first, and what memory says of each
    skill."""

    #: oldest first
    entries: list[MemoryEntry]
    skills: list[SkillStatus]
    #: significant gains needed in this many domains to be verified across domains
    min_domains: int
    #: whether a filter (kind, skill, version, domain) left entries out
    filtered: bool
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "entries": [e.to_dict() for e in self.entries],
            "skills": [s.to_dict() for s in self.skills],
            "min_domains": self.min_domains,
            "filtered": self.filtered,
        }


@dataclass(frozen=True)
class MemorySearchResult:
    """``evotree memory search --json``."""

    query: str
    #: best first (BM25); every query word matched
    hits: list[SearchHit]
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, "query": self.query, "hits": [h.to_dict() for h in self.hits]}


@dataclass(frozen=True)
class MemorySkillsResult:
    """``evotree memory skills --json``: each skill's verifications, by domain."""

    skills: list[SkillStatus]
    #: significant gains needed in this many domains to be verified across domains
    min_domains: int
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "skills": [s.to_dict() for s in self.skills],
            "min_domains": self.min_domains,
        }


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


Severity = Literal["info", "warn", "high", "critical"]


class FindingRef(TypedDict):
    """A finding named by a suggestion (or addressed by none)."""

    code: str
    severity: str | None
    title: str | None
    run_id: str | None


class SkillMemory(TypedDict):
    """What memory says of a suggested skill."""

    verified_in_domain: bool
    domains: list[str]
    verified_across_domains: bool
    verifications: int
    significant: int
    negative: int
    best_delta: float | None


#: a recipe change the findings' evidence names (``from`` is a Python keyword: the functional form)
RecipeChange = TypedDict(
    "RecipeChange",
    {
        "param": str,
        "from": Any,
        "to": Any,
        "kind": NotRequired[str | None],
        "where": NotRequired[str | None],
        "why": NotRequired[str | None],
        "severity": Severity,
        "score": float,
        "addresses": list[FindingRef],
    },
)


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


class ParamChange(TypedDict):
    """One parameter whose value differs, appears or disappears (a row of ``diff``'s params)."""

    path: str
    #: dotted key, e.g. train.learning_rate
    param: str
    #: value in V (null: absent)
    a: Any
    #: value in W (null: absent)
    b: Any


class FileChange(TypedDict):
    """One changed file (a row of ``diff``'s files)."""

    path: str
    old_path: NotRequired[str]
    status: Literal["added", "removed", "modified", "renamed"]
    additions: int
    deletions: int
    binary: NotRequired[bool]


class Unreadable(TypedDict):
    """A parameter file that could not be parsed on one side (its lines still count)."""

    path: str
    version: str
    reason: str


@dataclass(frozen=True)
class SkillDetail(SkillInfo):
    """A built-in skill, and whether it applies to the workspace's domain."""

    #: applies to this workspace's domain (null outside a workspace)
    applies: bool | None = None
    #: why it does not apply here (null when it does, or outside a workspace)
    why_not: str | None = None

    @classmethod
    def of(cls, info: SkillInfo, domain: str | None) -> SkillDetail:
        why = None if domain is None else info.why_not(domain)
        return cls(
            **{f.name: getattr(info, f.name) for f in fields(SkillInfo)},
            applies=None if domain is None else why is None,
            why_not=why,
        )


@dataclass(frozen=True)
class SkillShowResult(SkillDetail):
    """``evotree skill show NAME --json``: one skill."""

    v: int = 1


@dataclass(frozen=True)
class SkillListResult:
    """``evotree skill list --json``: the built-in skills."""

    #: the workspace's domain, null outside a workspace
    domain: str | None
    skills: list[SkillDetail]
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, "domain": self.domain, "skills": [s.to_dict() for s in self.skills]}


class RunningRow(TypedDict):
    """A run running now on this machine (``status``'s running)."""

    run_id: str
    version: str
    seed: int
    started_at: NotRequired[str | None]
    #: steps, episodes, the last signal (evotree.harness.live.Progress)
    progress: NotRequired[dict[str, Any]]


class VersionStatusRow(TypedDict):
    """One version not abandoned (``status``'s versions): where it stands, what it waits for."""

    id: str
    status: str
    champion: bool
    runs: int
    scored_runs: int
    failed_runs: int
    #: uncommitted paths in its worktree
    uncommitted: int
    headline: NotRequired[dict[str, Any] | None]
    worktree: NotRequired[str | None]
    state: str
    #: the command that moves it on
    next: str
    waits_for: Literal["agent", "person", "runs", "nothing"]


class LogFile(TypedDict):
    """The tail of one phase's log (``logs``' logs)."""

    phase: Literal["prepare", "train", "eval"]
    stream: Literal["out", "err"]
    path: str
    lines: list[str]
    #: earlier lines exist (--tail 0 shows all)
    truncated: bool


class SkippedRun(TypedDict):
    """A run push or pull left alone, and why."""

    run_id: str
    reason: str


class RejectedRef(TypedDict):
    """A ref left as it was (git refused a push; pull: diverged, other evidence), and why."""

    ref: str
    reason: str


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
    """The harness's analyzers.py, compared with the harness in force."""

    status: Literal["absent", "added", "changed", "unchanged", "removed"]
    sha256: str | None
    previous_sha256: str | None


class HarnessDiff(TypedDict):
    """What a harness promotion changes; its canonical JSON's sha256 is what the approver signs."""

    harness: str
    commit: str | None
    previous_harness: str
    previous_commit: str | None
    #: analyzer, key, old, new (old/new null: the analyzer's default)
    thresholds: list[dict[str, Any]]
    analyzers_py: AnalyzersChange


class ChainEnd(TypedDict):
    """The end of a signed chain (harness: its id and commit; judge: its commit, null: none)."""

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


class HarnessPromotionRow(TypedDict):
    """A signed harness promotion, oldest first."""

    harness: str
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


class EvidenceManifest(TypedDict):
    """What a run's evidence was when it finished (evotree.harness.manifest); evotree.harness.
    integrity recomputes it."""

    v: Literal[1]
    #: path in the run directory -> sha256:<hex> (a regular file), link:<sha256 of its target> or
    #: special:<kind>; every <kind>.parquet and every file under evidence/. Omitted above 256
    #: files (the digest covers them)
    files: NotRequired[dict[str, str]]
    n_files: int
    #: sha256 of run.json's bound fields: run_id, version, seed, status, commit, judge_commit,
    #: judge_version, judge_data_commit, started_at, headline (null when absent)
    record: str
    #: one hash over files and record
    digest: str
    #: the machine whose disk holds the run directory
    host: str


class EventData(TypedDict, total=False):
    """The event's own fields (its payload: evotree.core.events, one dataclass per kind).
    run.finished: run_id, seed, status, headline, usage, error and evidence."""

    #: the run's evidence manifest (run.finished; absent in events written before manifests)
    evidence: EvidenceManifest


@dataclass(frozen=True)
class ExitCodesResult:
    """``evotree help exit-codes --json``: every exit code and what it means. The table is data
    (:data:`evotree.core.errors.EXIT_CODES`): its keys are the codes, as text."""

    #: exit code (as text) -> what it means
    exit_codes: dict[str, str]
    v: int = 1

    @classmethod
    def of(cls, codes: dict[int, str]) -> ExitCodesResult:
        return cls({str(k): v for k, v in codes.items()})

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, "exit_codes": dict(self.exit_codes)}


class PostedComment(TypedDict):
    """The pull-request comment ``report --post`` created or updated (report.github.PostResult)."""

    action: Literal["created", "updated"]
    pull_request: int
    comment_id: int
    url: str | None
    repository: str


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


#: a curve: version -> [[step, value], ...], averaged over the version's runs
Series = dict[str, list[tuple[int, float]]]


class ReportVerdict(TypedDict):
    """The report's first line: the comparison's decision, or why there is none."""

    status: Literal["better", "worse", "inconclusive", "need_more_seeds", "not_compared", "blocked"]
    icon: str
    line: str
    notes: list[str]


class ReportSubject(TypedDict):
    """The version the report is about."""

    id: str
    status: str
    hypothesis: str
    parents: list[str]
    branch: str
    created_by: str
    created_at: NotRequired[str]
    headline: dict[str, Any] | None
    champion: bool


class Section(TypedDict):
    """A report section: available, or not with the reason shown in its place."""

    available: bool
    #: why the section could not be filled (only when not available)
    reason: NotRequired[str]


class ScoresSection(Section):
    """The comparison against 'against' (diagnostics.compare): mean_a, mean_b, delta = b - a, ci,
    p_value, test, n_tasks, n_seeds [a, b], decision, threshold, caveat, runs."""

    split: NotRequired[str]
    a: NotRequired[str]
    b: NotRequired[str]
    mean_a: NotRequired[float]
    mean_b: NotRequired[float]
    delta: NotRequired[float]
    ci: NotRequired[list[float]]
    p_value: NotRequired[float]
    test: NotRequired[str]
    alpha: NotRequired[float]
    n_tasks: NotRequired[int]
    n_seeds: NotRequired[list[int]]
    decision: NotRequired[Literal["better", "worse", "inconclusive", "need_more_seeds"]]
    threshold: NotRequired[float]
    caveat: NotRequired[str | None]


class TaskDelta(TypedDict):
    """One task's means on each side and their difference."""

    task: str
    a: float | None
    b: float | None
    delta: float | None


class GroupDelta(TypedDict):
    """One environment's tasks (ENV#i) together."""

    group: str
    n_tasks: int
    a: float | None
    b: float | None
    delta: float | None


class TaskCounts(TypedDict):
    improved: int
    worse: int
    unchanged: int


class PerTaskSection(Section):
    """Per task (and per environment) deltas."""

    tasks: NotRequired[list[TaskDelta]]
    #: per-environment delta: tasks named ENV#i grouped by ENV (empty when the ids carry no group)
    groups: NotRequired[list[GroupDelta]]
    counts: NotRequired[TaskCounts]


class FindingRow(TypedDict):
    """A finding as the report lists it."""

    layer: str
    code: str
    severity: str | None
    title: str


class FindingsSection(Section):
    """The version's findings, by layer."""

    total: NotRequired[int]
    worst: NotRequired[str | None]
    counts: NotRequired[dict[str, int]]
    by_layer: NotRequired[dict[str, list[FindingRow]]]


class ReportAuditSection(Section):
    """The leak audit's verdict."""

    source: NotRequired[str]
    passed: NotRequired[bool]
    raw_score: NotRequired[float | None]
    leak_adjusted_score: NotRequired[float | None]
    findings: NotRequired[list[Any]]


class LineageNode(TypedDict):
    id: str
    parents: list[str]
    status: str
    champion: bool
    subject: bool
    score: Any


class LineageSection(TypedDict):
    """The version's ancestry in the tree (cut to the versions that matter)."""

    available: bool
    champion: Any
    nodes: list[LineageNode]
    total_versions: int
    cut: Any


class SignalGroup(TypedDict):
    group: str
    #: the group's plot name, signals-<slug>
    plot: str
    metrics: list[str]


class SignalsView(TypedDict, total=False):
    """Every train-phase signal of the compared versions' runs (evotree.report.signals): grouped,
    the headline first."""

    #: declared ([train].headline_signal), else reward, else the first reward-like name
    headline: str | None
    headline_source: str
    groups: list[SignalGroup]
    #: metric -> series (at most 400 points a version)
    series: dict[str, Series]
    #: metric -> version -> last, min, max, steps, runs
    summary: dict[str, Any]
    left_out: int


class CurvesSection(Section):
    """The train-phase curves of the compared versions."""

    reward: NotRequired[Series]
    entropy: NotRequired[Series]
    dead_groups: NotRequired[Series]
    entropy_metric: NotRequired[str | None]
    dead_std_epsilon: NotRequired[float]
    signals: NotRequired[SignalsView]


#: usage summed over runs: runs, steps, episodes, wall_hours, gpu_hours, cpu_seconds, ... -> number
Spend = dict[str, float]


class Rate(TypedDict):
    """A share of settings: how many answer yes, of how many that answer at all."""

    numerator: int
    denominator: int
    #: numerator / denominator; null when no setting answers the question
    rate: float | None
    #: the settings counted in the numerator
    settings: list[str]


class ClassStat(TypedDict):
    """The candidates of one primary intervention class."""

    versions: int
    valid: int
    mean_score: float | None


class VersionIntervention(TypedDict, total=False):
    """A version's intervention class (evotree.core.interventions)."""

    #: algorithm | hyperparameter | data | other | none; null for the root
    primary: str | None
    classes: list[str]
    units: dict[str, int]
    files: dict[str, list[str]]
    error: str


class HistoricalBest(TypedDict):
    version: str | None
    score: float | None
    metric: str | None
    order: int | None
    ties: list[str]
    excluded_audit_failed: list[str]
    champion_is_best: bool | None


class FirstAttempt(TypedDict):
    version: str | None
    score: float | None
    valid: bool
    beats_root: bool | None
    improved_later: bool | None
    best_later: str | None
    best_later_score: float | None


class PostPeak(TypedDict):
    peak: str | None
    versions_after: int
    valid_after: int
    continued: bool
    regressions: list[str]
    worst_drop: float | None
    worst_version: str | None
    last_valid: str | None
    ended_below_peak: bool | None
    below_best_so_far: list[str]
    margin: float


class SpendView(TypedDict):
    total: Spend
    after_peak: Spend
    after_peak_share: dict[str, float | None]
    candidates: Spend
    share_unit: str
    cpu_seconds_complete: bool


class CostPerCandidate(TypedDict):
    valid_candidates: int
    candidates: int
    per_candidate: Spend | None


class Recommendation(TypedDict):
    """Stop or continue the search, and why."""

    action: Literal["stop", "continue"]
    line: str
    keep: str | None
    versions_since_peak: int
    after_peak_share: float | None
    share_unit: str
    patience: int
    max_after_peak_share: float


class SearchRates(TypedDict):
    """The rates over the settings."""

    settings: int
    first_attempt_improved: Rate
    first_attempt_beats_root: Rate
    continued_after_peak: Rate
    ended_below_peak: Rate
    post_peak_regression: Rate
    stop_recommended: Rate
    champion_is_best: Rate
    median_after_peak_share: float | None
    median_runs_per_valid_candidate: float | None
    #: RSIBench-Data's unit: the training bill per valid candidate, median over settings
    median_training_usd_per_valid_candidate: NotRequired[float | None]
    #: pooled over the candidates of every setting
    interventions: NotRequired[dict[str, ClassStat] | None]


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
class HarnessListResult:
    """``evotree harness list --json``: the harness versions, the built-in ``h0`` first."""

    #: the end of the signed chain of harness promotions (what diagnose and the gates use)
    active: str
    #: false (with a warning) when the harness ref or the ledger disagree with the signed chain
    signed: bool
    warning: str | None
    harnesses: list[HarnessVersion]
    v: int = 1

    @classmethod
    def of(cls, data: dict[str, Any]) -> HarnessListResult:
        """From :func:`evotree.gates.harnesses.list_harnesses`'s dict."""
        return cls(
            active=data["active"],
            signed=bool(data["signed"]),
            warning=data["warning"],
            harnesses=[HarnessVersion(**h) for h in data["harnesses"]],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "active": self.active,
            "signed": self.signed,
            "warning": self.warning,
            "harnesses": [h.to_dict() for h in self.harnesses],
        }


@dataclass(frozen=True)
class ConfigCheckResult:
    """``evotree config check --json``: the evotree.toml checked (an invalid one is an error)."""

    path: str
    valid: bool
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, "path": self.path, "valid": self.valid}


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


@dataclass(frozen=True)
class SqlOutput:
    """``evotree sql --json``: every row of one read-only SELECT (the verb ``sql`` of the API and
    the agent server returns at most its ``limit`` rows; schema sql)."""

    columns: list[str]
    #: every row the query returned
    rows: list[dict[str, Any]]
    #: rows the text table shows (--limit); the JSON carries them all
    limit: int
    #: len(rows)
    row_count: int
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "columns": list(self.columns),
            "rows": self.rows,
            "limit": self.limit,
            "row_count": self.row_count,
        }


class McpClientConfig(TypedDict):
    """One MCP client's configuration: where it reads it and what to write there."""

    file: str
    #: the file's content: JSON (an object) or TOML (text)
    content: dict[str, Any] | str


@dataclass(frozen=True)
class AgentConfigResult:
    """``evotree agent --print-config --json``: the MCP client configurations written for the
    agent."""

    #: client (claude_code, codex) -> the file it reads and its content
    mcp: dict[str, McpClientConfig]
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, "mcp": self.mcp}


@dataclass(frozen=True)
class SchemaListResult:
    """``evotree schema --json``: every schema name (``evotree schema NAME`` prints one)."""

    #: every name accepted, old ``_`` names included
    schemas: list[str]
    #: the names to use
    current: list[str]
    #: old name -> current name
    aliases: dict[str, str]
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "schemas": list(self.schemas),
            "current": list(self.current),
            "aliases": dict(self.aliases),
        }


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


class BacktestHarness(TypedDict):
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
    harness: BacktestHarness
    runs: list[RunBacktestRow]
    #: every run's changes together
    changes: list[FindingChangeRow]


@dataclass(frozen=True)
class LogLine:
    """``evotree logs RUN --follow --json``: one line a phase wrote (one JSON object a line, as
    the phases write them, until the run has ended)."""

    run_id: str
    phase: Literal["prepare", "train", "eval"]
    stream: Literal["out", "err"]
    #: the line as written (no newline)
    line: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
