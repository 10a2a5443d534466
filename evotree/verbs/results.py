"""Typed results of the ``--json`` outputs that are not one library record: ``log``, the error
every ``--json`` command prints when it fails, memory's and skills' listings, status, logs, diff
and share rows, and the small outputs of ``config check``, ``sql``, ``agent`` and ``schema``. Their
schemas are derived from these types (:mod:`evotree.verbs.schemas`), and each builds the JSON it
describes (``to_dict``). The report's sections are in :mod:`evotree.verbs.report_results`, the
audits' in :mod:`evotree.verbs.audit_results`, the gates' and promotions' in
:mod:`evotree.verbs.promotion_results`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, NotRequired, TypedDict

from evotree.core.errors import EvotreeError
from evotree.core.schemas.derive import OPTIONAL, schema_note
from evotree.verbs.run_list import RunsResult
from evotree.memory.model import MemoryEntry
from evotree.memory.read import SearchHit, SkillStatus
from evotree.skills.catalog import SkillInfo
from evotree.verbs.audit_results import Severity

__all__ = [
    "COMMIT_PATTERN",
    "LogEntry",
    "LogResult",
    "ErrorInfo",
    "ErrorResult",
    "MemoryListResult",
    "MemorySearchResult",
    "MemorySkillsResult",
    "FindingRef",
    "SkillMemory",
    "RecipeChange",
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
    "EvidenceManifest",
    "EventData",
    "ExitCodesResult",
    "RunsResult",
    "ConfigCheckResult",
    "SqlOutput",
    "AgentConfigResult",
    "SchemaListResult",
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


@dataclass(frozen=True)
class ConfigCheckResult:
    """``evotree config check --json``: the evotree.toml checked (an invalid one is an error)."""

    path: str
    valid: bool
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, "path": self.path, "valid": self.valid}


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
