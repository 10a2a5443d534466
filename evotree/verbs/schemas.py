"""The ``--json`` schemas of the verbs' results, derived from their result types.

A verb returns a typed result (a dataclass with ``to_dict()``); its schema is
:func:`evotree.core.schemas.derive.dataclass_schema` of that type, so a field added to the
type is in the schema with no hand edit (:data:`DERIVED`); ``log`` and the error every
``--json`` command prints are the typed results of :mod:`evotree.verbs.results`. What a field's
type cannot say (a run's status is one of :class:`~evotree.harness.records.RunStatus`, a commit
is a hex object name) is added per field
(:attr:`evotree.verbs.schema_derivation.Derived.fields`, or the field's own ``metadata``); what
only a rule can say (an unavailable report section carries its reason) is the one hand-written
piece, per field. Every ``--json`` output with a schema is derived; what
:mod:`evotree.core.schemas` still ships are the old ``_`` names, each a ``$ref`` to its current
name. :func:`load_schema` and :func:`schema_names` answer for both: ``evotree schema NAME`` and
the tests read schemas only through them.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from evotree.core import schemas as shipped
from evotree.core.errors import UsageError
from evotree.core.config import Config
from evotree.core.events import EventKind
from evotree.core.ledger import Event, VersionRecord, VersionStatus
from evotree.core.diff import VersionDiff
from evotree.core.versions import PruneResult, TreeView, VersionDetail
from evotree.core.workspace import InitResult
from evotree.diagnostics.compare import VersionComparison
from evotree.diagnostics.diagnose import DiagnoseResult
from evotree.diagnostics.analyzer_versions import AnalyzerVersion
from evotree.harness.ecosystem import ExportResult as ToolExportResult
from evotree.harness.ecosystem import StagedCheck
from evotree.report.leaderboard import Leaderboard
from evotree.report.results_tsv import ResultsTsv
from evotree.verbs.autopilot import AutopilotResult
from evotree.gates.bootstrap import SignersAdded
from evotree.gates.evaluation import GATE_NAMES, GateReport
from evotree.gates.run_void import RunVoidResult
from evotree.gates.finalize import Candidate, FinalizeResult
from evotree.gates.analyzer_versions import AnalyzersPromotionResult
from evotree.gates.judges import (
    JudgeExportResult,
    JudgeMigrationResult,
    JudgeProposal,
    JudgePromotionResult,
    JudgeStatus,
)
from evotree.gates.promote import PromotionResult, RunApprovalResult
from evotree.gates.verify_base import VerifyReport
from evotree.harness.logs import RunLogs
from evotree.harness.audit.repo import RepoAudit, SanitizeResult
from evotree.harness.money import BudgetStatus, SpendRecord
from evotree.harness.share import ShareResult
from evotree.harness.status import WorkspaceStatus
from evotree.report.ci import CiInitResult
from evotree.report.files import FORMATS, ReportOutput
from evotree.report.model import ReportData
from evotree.report.search_model import SearchParams, SearchReport
from evotree.skills.recipe import ApplyResult
from evotree.harness.records import RunRecord, RunStatus
from evotree.verbs import CommitResult, QueryResult
from evotree.memory.model import EntryKind, MemoryEntry
from evotree.memory.suggestions import SuggestResult
from evotree.memory.transfer import ExportResult, ImportResult, MergeResult
from evotree.verbs.audit_results import (
    AuditFinding,
    AuditResult,
    BacktestOutput,
)
from evotree.verbs.promotion_results import (
    ChainEnd,
    CompareEvidence,
    FinalizeDryRun,
    GatePolicy,
    AnalyzersDiff,
    AnalyzersListResult,
    AnalyzersPromotionRow,
    JudgeDiff,
    JudgeFileRow,
    JudgePromotionRow,
    PromotionRow,
    SHA256_PATTERN,
    SignersAccepted,
)
from evotree.verbs.report_results import (
    ClassStat,
    CostPerCandidate,
    CurvesSection,
    FindingsSection,
    FirstAttempt,
    HistoricalBest,
    LineageSection,
    PerTaskSection,
    PostedComment,
    PostPeak,
    Recommendation,
    ReportAuditSection,
    ReportSubject,
    ReportVerdict,
    ScoresSection,
    SearchRates,
    Section,
    SpendView,
    VersionIntervention,
)
from evotree.verbs.schema_derivation import Derived
from evotree.verbs.results import (
    AgentConfigResult,
    COMMIT_PATTERN,
    ConfigCheckResult,
    ErrorResult,
    EventData,
    ExitCodesResult,
    FileChange,
    FindingRef,
    LogEntry,
    LogFile,
    LogLine,
    LogResult,
    MemoryListResult,
    MemorySearchResult,
    MemorySkillsResult,
    ParamChange,
    RecipeChange,
    RejectedRef,
    RunningRow,
    RunsResult,
    SchemaListResult,
    SkillListResult,
    SkillMemory,
    SkillShowResult,
    SkippedRun,
    SqlOutput,
    Unreadable,
    VersionStatusRow,
)

__all__ = ["DERIVED", "VERB_SCHEMAS", "load_schema", "schema_aliases", "schema_names"]

_V = {"const": 1}


_COMMIT = {"pattern": COMMIT_PATTERN}
_RUN_FIELDS: dict[str, dict[str, Any]] = {
    "status": {"enum": [s.value for s in RunStatus]},
    "commit": _COMMIT,
    "judge_commit": _COMMIT,
    "judge_data_commit": _COMMIT,
}
_VERSION_FIELDS: dict[str, dict[str, Any]] = {
    "status": {"enum": [s.value for s in VersionStatus]},
    "base_commit": _COMMIT,
}


_FINDING_ROW = {
    "type": "object",
    "required": ["layer", "code", "severity", "runs"],
    "description": "one row per (layer, code), most severe first, with the runs it came from",
    "properties": {
        "layer": {"type": "string"},
        "code": {"type": "string"},
        "severity": {"type": ["string", "null"]},
        "runs": {"type": "array"},
        "detail": {"type": "array"},
    },
}

_ENTRY = {"id": {"pattern": "^m[0-9a-f]{20}$"}, "kind": {"enum": [k.value for k in EntryKind]}}
_ENTRY_IN = {f"MemoryEntry.{k}": v for k, v in _ENTRY.items()}

_GATES_FIELDS: dict[str, dict[str, Any]] = {
    "commit": _COMMIT,
    "champion_commit": _COMMIT,
    "comparison": {
        "description": "evotree compare champion V (schema compare): the one "
        "comparison; the score gate's numbers carry the same delta, ci and p_value and "
        "the gate's own threshold on p at this look (numbers.threshold), its verdict, "
        "conditional power, seeds to settle and next seeds"
    },
    "findings": {
        "description": "one row per finding code with the runs it came from: first the "
        "score gate's evidence findings (critical score.evidence_*), then signal findings "
        "of high severity or above, re-analysed now"
    },
    "GateResult.name": {"enum": list(GATE_NAMES)},
    "GateResult.status": {
        "enum": ["pass", "fail", "unavailable"],
        "description": "unavailable blocks like fail (the gates fail closed)",
    },
    "GateResult.summary": {"description": "which gate, the numbers"},
    "GateResult.numbers": {
        "description": "the gate's numbers; the score gate's include evidence "
        "(per side: run ids per state, as in compare's evidence)"
    },
    "GateResult.fix": {"description": "what would satisfy the gate (e.g. how many more seeds)"},
}

_PAIR = {"minItems": 2, "maxItems": 2}
_COMPARE_FIELDS: dict[str, dict[str, Any]] = {
    "a": {"description": "the version compared against (named first, e.g. v0)"},
    "b": {"description": "the version compared (named second, e.g. v1); delta = b - a"},
    "delta": {"description": "mean over tasks of b's seed means minus a's"},
    "ci": {
        **_PAIR,
        "description": "two-sided at confidence (1 - 2 alpha): its lower end is the "
        "one-sided bound at alpha; a t interval (runs or tasks as units: see unit)",
    },
    "p_value": {"description": "one-sided: H0 that b is not better than a by more than threshold"},
    "test": {
        "enum": ["t_runs", "t_tasks"],
        "description": "t_runs: runs (seeds) are the units; "
        "t_tasks: tasks are the units (runs are identical copies, or the per-task spread is "
        "the larger noise)",
    },
    "n_seeds": {**_PAIR, "description": "distinct seeds [a, b]"},
    "decision": {
        "enum": ["better", "worse", "inconclusive", "need_more_seeds"],
        "description": "better: p below p_threshold; worse: the CI lies below threshold",
    },
    "unit": {"enum": ["runs", "tasks"]},
    "identical": _PAIR,
    "B": {
        "description": "bootstrap resamples of the secondary summaries (iqm, "
        "probability_of_improvement) only"
    },
    "runs": {"description": "run ids compared: {a: [...], b: [...]}"},
    "iqm": {"description": "IQM of each side with stratified-bootstrap CIs"},
    "probability_of_improvement": {"description": "P(b > a) (rliable) with its CI: b_over_a"},
    "per_group": {
        "description": "per environment (task ids ENV#i): delta, Wilcoxon p and "
        "Benjamini-Hochberg adjusted p"
    },
}

_SKILL: dict[str, dict[str, Any]] = {
    "kind": {
        "enum": ["batch", "reward"],
        "description": "batch: changes what the policy loss sees; reward: changes rewards",
    },
    "not_applicable": {"description": "domain -> why it does not apply there"},
}
_PARAM: dict[str, dict[str, Any]] = {
    "ParamSpec.type": {"enum": ["float", "int", "bool", "str"]},
    "ParamSpec.range": {
        "type": ["array", "null"],
        "items": {"type": ["number", "null"]},
        "minItems": 2,
        "maxItems": 2,
        "description": "[low, high] for numbers, inclusive; null on a side: unbounded",
    },
    "ParamSpec.default": {"description": "default value, of the parameter's type"},
}


_SHA = {"pattern": SHA256_PATTERN}
_FILES = {"files": list[JudgeFileRow]}
_FILE_FIELDS = {"JudgeFileRow.sha256": _SHA, "JudgeFileRow.size": {"minimum": 0}}
_SIGNED = {
    "diff_hash": {**_SHA, "description": "sha256 of the canonical JSON of diff, as signed"},
    "approver": {"description": "the principal in the champion's allowed signers who signed"},
}


#: an unavailable section carries its reason (what the section types cannot say)
_UNAVAILABLE = {
    "if": {"properties": {"available": {"const": False}}},
    "then": {"required": ["available", "reason"]},
}
_SECTIONS = {
    "scores": ScoresSection,
    "per_task": PerTaskSection,
    "findings": FindingsSection,
    "audit": ReportAuditSection,
    "gates": Section,
    "curves": CurvesSection,
}


#: every ``--json`` output derived from its result type: schema name -> its type
DERIVED: dict[str, Derived] = {
    "tree": Derived(TreeView, "evotree tree --json", extra={"v": _V}),
    "show": Derived(
        VersionDetail,
        "evotree show V --json",
        extra={"v": _V},
        hints={"events": list[LogEntry]},
        event="LogEntry",
    ),
    "version": Derived(
        VersionRecord,
        "A version record (output of branch, merge, abandon, worktree restore)",
        fields=_VERSION_FIELDS,
    ),
    "log": Derived(LogResult, "evotree log --json", event="LogEntry"),
    "error": Derived(
        ErrorResult, "The JSON printed by any --json command that fails (exit code != 0)"
    ),
    "commit": Derived(
        CommitResult, "commit (the API's and the agent server's): the files snapshotted and the tip"
    ),
    "sql": Derived(
        QueryResult, "sql (the API's and the agent server's): rows of one read-only SELECT"
    ),
    "spend-record": Derived(
        SpendRecord, "evotree spend record --json (the agent server's spend_record tool)"
    ),
    "budget": Derived(BudgetStatus, "evotree budget --json"),
    "run": Derived(
        RunRecord,
        "A run record (run.json; items of `evotree run --json` and `evotree runs --json`)",
        fields=_RUN_FIELDS,
    ),
    "memory-entry": Derived(
        MemoryEntry,
        "A memory entry (evotree memory add|show --json; items of memory list/search)",
        fields=_ENTRY,
    ),
    "memory-list": Derived(MemoryListResult, "evotree memory list --json", fields=_ENTRY_IN),
    "memory-search": Derived(MemorySearchResult, "evotree memory search --json", fields=_ENTRY_IN),
    "memory-skills": Derived(MemorySkillsResult, "evotree memory skills --json"),
    "memory-export": Derived(ExportResult, "evotree memory export --json", extra={"v": _V}),
    "memory-import": Derived(ImportResult, "evotree memory import --json", extra={"v": _V}),
    "memory-merge": Derived(
        MergeResult,
        "evotree memory merge REF --json",
        extra={"v": _V},
        fields={"source_commit": _COMMIT, "commit": _COMMIT},
    ),
    "gates": Derived(
        GateReport,
        "evotree gates V --json",
        extra={"v": _V, "passed": {"type": "boolean"}},
        fields=_GATES_FIELDS,
        hints={"policy": GatePolicy},
    ),
    "suggest": Derived(
        SuggestResult,
        "evotree suggest V --json",
        extra={"v": _V},
        hints={
            "unaddressed": list[FindingRef],
            "changes": list[RecipeChange],
            "Suggestion.addresses": list[FindingRef],
            "Suggestion.memory": SkillMemory,
        },
        fields={
            "source": {
                "enum": ["file", "ledger"],
                "description": "file: .evotree/findings/V.jsonl; "
                "ledger: the last finding event (a clone without local findings)",
            },
            "unaddressed": {"description": "warn+ findings no skill addresses"},
            "Suggestion.severity": {
                "enum": ["info", "warn", "high", "critical"],
                "description": "worst finding it addresses",
            },
        },
    ),
    "compare": Derived(
        VersionComparison,
        "evotree compare A B --json",
        extra={"v": _V},
        fields=_COMPARE_FIELDS,
        hints={"evidence": CompareEvidence | None},
        omit=("difference",),
    ),
    "audit": Derived(
        AuditResult,
        "evotree audit V --json  /  evotree audit trajectories FILE... --json",
        fields={
            "AuditFinding.code": {"pattern": "^audit\\.[a-z][a-z0-9_]*$"},
            "AuditVerdict.steps": {"minimum": 0},
        },
    ),
    "init": Derived(
        InitResult,
        "evotree init --json",
        fields={
            "champion": {"const": "v0"},
            "branch": {"const": "evotree/v0"},
            "commit": _COMMIT,
            "ledger_commit": _COMMIT,
            "judge_commit": _COMMIT,
        },
    ),
    "prune": Derived(
        PruneResult,
        "evotree worktree prune --json",
        fields={
            "forgotten": {"description": "versions whose recorded worktree was already gone"},
            "skipped_dirty": {"description": "version -> its uncommitted paths (kept)"},
        },
    ),
    "diff": Derived(
        VersionDiff,
        "evotree diff V W --json",
        hints={
            "params": list[ParamChange],
            "files": list[FileChange],
            "unreadable": list[Unreadable],
        },
        fields={"commit_a": _COMMIT, "commit_b": _COMMIT},
    ),
    "report-ci": Derived(
        CiInitResult,
        "evotree ci init --json",
        extra={"v": _V},
        fields={
            "action": {"enum": ["created", "overwritten"]},
            "path": {"description": "the workflow file written (not committed)"},
            "install": {
                "description": "the pip requirement the workflow installs evotree with "
                "(a path in the repository or NAME @ URL, never a bare index name)"
            },
        },
    ),
    "skill-list": Derived(
        SkillListResult,
        "evotree skill list --json",
        fields={**{f"SkillDetail.{k}": v for k, v in _SKILL.items()}, **_PARAM},
    ),
    "skill-show": Derived(
        SkillShowResult, "evotree skill show NAME --json", fields={**_SKILL, **_PARAM}
    ),
    "skill-apply": Derived(
        ApplyResult,
        "evotree skill apply NAME --to V --json",
        extra={"v": _V},
        fields={
            "commit": {**_COMMIT, "description": "the version's branch tip after applying"},
            "previous_commit": _COMMIT,
            "file": {"const": "skills.toml"},
            "params": {"description": "every parameter, resolved (given or default)"},
            "changed": {
                "description": "false: the recipe already had these parameters; no commit, no event"
            },
            "skills": {"description": "all skills of the version, in activation order"},
            "ledger_commit": {
                "description": "the skill.applied event's ledger commit (null when unchanged)"
            },
        },
    ),
    "status": Derived(
        WorkspaceStatus,
        "evotree status --json",
        hints={"running": list[RunningRow], "versions": list[VersionStatusRow]},
        fields={
            "reserved": {"minimum": 0},
            "VersionStatusRow.status": {"enum": [s.value for s in VersionStatus]},
        },
    ),
    "logs": Derived(
        RunLogs,
        "evotree logs RUN --json",
        hints={"logs": list[LogFile]},
        fields={"status": {"enum": [*(s.value for s in RunStatus), None]}},
    ),
    "share": Derived(
        ShareResult,
        "evotree push --json / evotree pull --json",
        hints={"skipped": list[SkippedRun], "rejected": list[RejectedRef]},
        fields={
            "action": {"enum": ["push", "pull", "archive"]},
            "refs": {"minimum": 0},
            "remote": {"description": "null: pull --local (nothing fetched)"},
        },
    ),
    "verify": Derived(
        VerifyReport,
        "evotree verify --json",
        extra={"v": _V},
        hints={
            "promotions": list[PromotionRow],
            "analyzers_promotions": list[AnalyzersPromotionRow],
            "judge_promotions": list[JudgePromotionRow],
            "analyzers": ChainEnd,
            "judge": ChainEnd,
        },
        fields={
            "ok": {"description": "false (exit 33) when tampering was found"},
            "anchor": {"description": "the root of the chain of trust: workspace.initialized"},
            "champion": {"description": "the end of the signed chain"},
            "analyzers": {
                "description": "the end of the signed chain of analyzers promotions "
                "(h0, commit null: the built-in analyzers)"
            },
            "Problem.kind": {
                "description": "ledger_root, promotion, champion_ref, "
                "run_off_chain, judge_promotion, ... (gates/verify.py)"
            },
        },
    ),
    "judge-show": Derived(
        JudgeStatus,
        "evotree judge show --json",
        extra={"v": _V},
        hints=_FILES,
        fields={
            **_FILE_FIELDS,
            "commit": {
                "description": "the judge commit in force; null: no judge store "
                "(legacy: the judge files are in the champion's tree)"
            },
            "ref": {
                "description": "what refs/evotree/judge points to (runs never follow it alone)"
            },
            "signed": {
                "description": "false when evotree verify finds a problem with the judge chain"
            },
            "judge_paths": {"description": "[eval].judge_paths of the champion"},
        },
    ),
    "judge-export": Derived(
        JudgeExportResult,
        "evotree judge export DIR --json",
        extra={"v": _V},
        hints=_FILES,
        fields={**_FILE_FIELDS, "commit": _COMMIT},
    ),
    "judge-migrate": Derived(
        JudgeMigrationResult,
        "evotree judge migrate --json",
        extra={"v": _V},
        hints=_FILES,
        fields={
            **_FILE_FIELDS,
            "commit": {**_COMMIT, "description": "the judge commit now in force"},
            "champion_commit": {
                **_COMMIT,
                "description": "the signed champion the files came from",
            },
            "version": {
                "description": "the new version whose commit removes the judge "
                "paths (null with --no-branch)"
            },
        },
    ),
    "judge-promote": Derived(
        JudgePromotionResult,
        "evotree judge promote DIR --json",
        extra={"v": _V},
        hints={"diff": JudgeDiff},
        fields={
            **_SIGNED,
            "commit": {**_COMMIT, "description": "the judge commit now in force"},
            "previous_commit": _COMMIT,
        },
    ),
    "judge-propose": Derived(
        JudgeProposal,
        "evotree judge propose DIR --json: the judge tree proposed, by whom",
        extra={"v": _V},
        hints={"diff": JudgeDiff},
        fields={
            "commit": _COMMIT,
            "previous_commit": _COMMIT,
            "ledger_commit": _COMMIT,
            "diff_hash": _SIGNED["diff_hash"],
            "proposed_by": {"description": "the approver of its promotion must be someone else"},
        },
    ),
    "runs-void": Derived(
        RunVoidResult,
        "evotree runs void RUN --json: the run taken out of the evidence",
        extra={"v": _V},
        fields={"ledger_commit": _COMMIT},
    ),
    "signers-add": Derived(
        SignersAdded,
        "evotree signers add --json: signers allowed by a signed step",
        fields={"previous_commit": _COMMIT, "commit": _COMMIT, "ledger_commit": _COMMIT},
    ),
    "analyzers-promote": Derived(
        AnalyzersPromotionResult,
        "evotree analyzers promote --json",
        extra={"v": _V},
        hints={"diff": AnalyzersDiff},
        fields={
            **_SIGNED,
            "analyzers": {
                "pattern": "^h[0-9]+$",
                "description": "the analyzer version now in force",
            },
            "commit": {"description": "its commit (null: h0, the built-in analyzers)"},
        },
    ),
    "promote": Derived(
        PromotionResult,
        "evotree promote V --json (after the person's decision)",
        extra={"v": _V},
        fields={
            "dossier": {
                "anyOf": [{"$ref": "gates.schema.json"}, {"type": "null"}],
                "description": "the gate report the approver decided on (schema gates)",
            },
            "decision": {"enum": ["approve", "revise", "abort"]},
            "evidence_hash": {**_SHA, "description": "sha256 of the canonical dossier, signed"},
            "champion": {"description": "the champion after the decision"},
            "approver": {"description": "principal in the champion's allowed signers"},
        },
    ),
    "gates-run-approval": Derived(
        RunApprovalResult,
        "evotree approve-run V --json",
        extra={"v": _V},
        fields={
            "runs": {"minimum": 1},
            "commit": {"description": "the approval covers this commit only"},
        },
    ),
    "event": Derived(
        Event,
        "A ledger event (one line of JSON in a ledger commit message)",
        hints={"data": EventData},
        fields={
            "kind": {
                "description": "one of evotree.core.events.EventKind: "
                + ", ".join(k.value for k in EventKind)
            },
            "actor": {"description": "git identity 'Name <email>'"},
            "at": {"description": "UTC, ISO 8601"},
            "v": {"description": "record schema version; readers skip versions they do not know"},
        },
        beside={
            "commit": {
                "type": "string",
                "pattern": COMMIT_PATTERN,
                "description": "ledger commit (in log/show output only)",
            }
        },
        event="",
    ),
    "exit-codes": Derived(
        ExitCodesResult,
        "evotree help exit-codes --json",
        fields={"exit_codes": {"propertyNames": {"pattern": "^[0-9]+$"}}},
    ),
    "report": Derived(
        ReportData,
        "The report's data (evotree report V --format json; report-output's report)",
        extra={"v": _V},
        optional=("sandbox_warning", "recipe_diff"),
        hints={
            "verdict": ReportVerdict,
            "subject": ReportSubject,
            "lineage": LineageSection,
            **_SECTIONS,
        },
        fields={
            **{name: _UNAVAILABLE for name in _SECTIONS},
            "plots": {
                "description": "plot name (reward, entropy, dead_groups, task_delta) -> "
                "file name beside the Markdown, or 'embedded' in HTML"
            },
            "ScoresSection.ci": {"minItems": 2, "maxItems": 2},
            "recipe_diff": {
                "description": "what changed between `against` and `version` "
                "(evotree diff): params (path, param, a, b), files (path, status, "
                "additions, deletions); or {available: false, reason}"
            },
        },
    ),
    "report-tree": Derived(
        SearchReport,
        "evotree report --tree --json",
        extra={"v": _V},
        omit=("search_format",),
        hints={
            "parameters": SearchParams,
            "rates": SearchRates,
            "TreeStats.historical_best": HistoricalBest,
            "TreeStats.first_attempt": FirstAttempt,
            "TreeStats.post_peak": PostPeak,
            "TreeStats.spend": SpendView,
            "TreeStats.cost_per_valid_candidate": CostPerCandidate,
            "TreeStats.recommendation": Recommendation,
            "TreeStats.interventions": dict[str, ClassStat] | None,
            "VersionStat.intervention": VersionIntervention | None,
        },
        fields={
            "settings": {"minItems": 1},
            "path": {"description": "the file written with --out, else null"},
            "SearchParams.direction": {"enum": ["max", "min", "auto"]},
            "SearchParams.patience": {"minimum": 1},
            "SearchParams.max_after_peak_share": {"minimum": 0, "maximum": 1},
            "TreeStats.direction": {"enum": ["max", "min"]},
            "TreeStats.interventions": {
                "description": "per primary intervention class of "
                "the candidates (null: none classified)"
            },
            "VersionStat.order": {"minimum": 1, "description": "creation order, 1 = the root"},
            "VersionStat.audit": {"enum": ["passed", "failed", None]},
            "VersionStat.score": {"description": "the headline (null: no score, never 0)"},
            "SearchRates.settings": {"minimum": 1},
        },
    ),
    "finalize": Derived(
        FinalizeResult,
        "evotree finalize --json: the finalize event's data",
        # a search not finalized keeps the boundary: the held-out and validation keys are left out
        optional=(
            "validation_mean",
            "heldout_run",
            "heldout_mean",
            "heldout_status",
            "heldout_metric",
        ),
        fields={
            "status": {
                "enum": ["finalized", "no_ok_submit", "heldout_failed", "not_finalized"],
                "description": "not_finalized: evotree's failure (retry)",
            },
            "commit": _COMMIT,
        },
    ),
    "finalize-plan": Derived(
        FinalizeDryRun,
        "evotree finalize --dry-run --json: what finalize would judge",
        omit=("plan",),
        extra={
            "status": {"enum": ["ready", "no_ok_submit"]},
            "considered": {"type": "integer", "minimum": 0},
            "rule": {"type": "string"},
            "selected": {
                "anyOf": [{"$ref": "#/$defs/Candidate"}, {"type": "null"}],
                "description": "the run finalize would judge (null: no_ok_submit)",
            },
        },
        fields={
            "dry_run": {"const": True},
            "Candidate.validation": {
                "type": ["number", "null"],
                "description": "its validation mean (absent while figures are hidden)",
            },
            "Candidate.commit": _COMMIT,
        },
        defs=(Candidate,),
        optional=("Candidate.validation",),
    ),
    "report-output": Derived(
        ReportOutput,
        "evotree report V --json",
        extra={"v": _V},
        hints={"posted": PostedComment | None},
        fields={
            "format": {"enum": list(FORMATS)},
            "path": {"description": "the report file written"},
            "files": {"description": "every file written, the report first, then its plots (md)"},
            "verdict": {"$ref": "report.schema.json#/properties/verdict"},
            "report": {"$ref": "report.schema.json"},
        },
    ),
    "audit-repo": Derived(
        RepoAudit,
        "evotree audit repo PATH --json",
        extra={
            "v": _V,
            "kind": {"const": "repo"},
            "worst": {"enum": ["info", "warn", "high", "critical", None]},
        },
        hints={"findings": list[AuditFinding]},
        beside={
            "sanitized": {
                "anyOf": [{"$ref": "#/$defs/SanitizeResult"}, {"type": "null"}],
                "description": "with --sanitize: the clean copy and its own audit "
                "(the same shape as this one)",
            }
        },
        defs=(SanitizeResult,),
        omit=("ObjectScan.commits", "ObjectScan.dangling_ids"),
        fields={
            "base": _COMMIT,
            "passed": {
                "description": "the source repository has no finding of severity high or above"
            },
            "AuditFinding.code": {"pattern": "^audit\\.[a-z][a-z0-9_]*$"},
            "FutureCommit.id": _COMMIT,
            "FutureCommit.kind": {"enum": ["descendant", "newer", "older"]},
            "ObjectScan.objects": {"minimum": 0},
            "ObjectScan.reachable": {"minimum": 0},
            "ObjectScan.future_commits": {"description": "newest first, at most 20"},
            "SanitizeResult.base": _COMMIT,
            "SanitizeResult.audit": {"$ref": "#"},
            "SanitizeResult.passed": {
                "type": "boolean",
                "description": "the copy passed "
                "its own audit and its HEAD is the base (decides the "
                "exit code)",
            },
            "SanitizeResult.commits": {"minimum": 1},
            "SanitizeResult.removed_objects": {"minimum": 0},
        },
    ),
    "diagnose": Derived(
        DiagnoseResult,
        "evotree diagnose V --json",
        extra={"v": _V, "by_code": {"type": "array", "items": _FINDING_ROW}},
    ),
    "runs": Derived(
        RunsResult,
        "evotree run|runs|ingest|import tensorboard --json: run records, oldest first",
        fields={f"RunRecord.{k}": v for k, v in _RUN_FIELDS.items()},
    ),
    "analyzer-version": Derived(
        AnalyzerVersion,
        "evotree analyzers branch --json: the analyzer version created",
        fields={"id": {"pattern": "^h[0-9]+$"}},
    ),
    "analyzers-list": Derived(
        AnalyzersListResult,
        "evotree analyzers list --json",
        fields={"active": {"pattern": "^h[0-9]+$"}},
    ),
    "config": Derived(Config, "evotree config show --json: the configuration in force"),
    "config-check": Derived(
        ConfigCheckResult, "evotree config check --json", fields={"valid": {"const": True}}
    ),
    "schema-list": Derived(
        SchemaListResult,
        "evotree schema --json (evotree schema NAME prints that JSON Schema itself)",
    ),
    "backtest": Derived(BacktestOutput, "evotree backtest V --json"),
    "leaderboard": Derived(Leaderboard, "evotree leaderboard DIR... --json", extra={"v": _V}),
    "export": Derived(
        ToolExportResult,
        "evotree export tensorboard|mlflow|wandb --json: one entry per run",
        fields={"tool": {"enum": ["tensorboard", "mlflow", "wandb"]}},
    ),
    "export-results-tsv": Derived(
        ResultsTsv, "evotree export results-tsv --json", extra={"v": _V}, omit=("text",)
    ),
    "precommit": Derived(
        StagedCheck,
        "evotree precommit --json: the audit's static checks over the staged tree",
        hints={"findings": list[AuditFinding]},
        extra={
            "exit_code": {
                "enum": [0, 28],
                "description": "28: a finding is high or above (the commit is refused)",
            }
        },
        fields={"staged_commit": _COMMIT},
    ),
    "autopilot": Derived(
        AutopilotResult,
        "evotree autopilot --json: every proposal's outcome, and why it stopped",
        extra={
            "promoted": {"type": "array", "items": {"type": "string"}},
            "passed": {
                "type": "array",
                "items": {"type": ["string", "null"]},
                "description": "the versions every gate passed",
            },
        },
    ),
    "signers-accept": Derived(SignersAccepted, "evotree signers accept LEDGER_COMMIT --json"),
    "sql-output": Derived(
        SqlOutput,
        "evotree sql --json: every row of one read-only SELECT",
        fields={"limit": {"minimum": 1}, "row_count": {"minimum": 0}},
    ),
    "agent-config": Derived(AgentConfigResult, "evotree agent --print-config --json"),
    "log-line": Derived(LogLine, "evotree logs RUN --follow --json: one object a line"),
}

#: each verb of :data:`evotree.verbs.VERBS` whose result is derived -> its schema (a list result:
#: each item's)
VERB_SCHEMAS: dict[str, str] = {
    "tree": "tree",
    "log": "log",
    "gates": "gates",
    "show": "show",
    "branch": "version",
    "merge": "version",
    "abandon": "version",
    "commit": "commit",
    "run": "run",
    "runs": "run",
    "compare": "compare",
    "diagnose": "diagnose",
    "sql": "sql",
    "spend_record": "spend-record",
}


#: Schemas renamed with the analyzers' lineage (it was called the harness): old name -> current.
RENAMED = {
    "harness-promote": "analyzers-promote",
    "harness-version": "analyzer-version",
    "harness-list": "analyzers-list",
}


def schema_aliases() -> dict[str, str]:
    """Old schema name -> its current name: each shipped ``_`` name (a file holding a ``$ref``)
    whose ``-`` name is derived or shipped, and the :data:`RENAMED` ones."""
    current = set(DERIVED) | set(shipped.schema_names(include_aliases=True))
    return {
        **{
            name: name.replace("_", "-")
            for name in shipped.schema_names(include_aliases=True)
            if "_" in name and name.replace("_", "-") in current
        },
        **RENAMED,
    }


def schema_names(*, include_aliases: bool = False) -> list[str]:
    """Every schema :func:`load_schema` gives: the derived ones and the shipped files (the old
    ``_`` names too with ``include_aliases``)."""
    aliases = schema_aliases()
    names = set(DERIVED) | set(shipped.schema_names(include_aliases=True)) | set(RENAMED)
    return sorted(n for n in names if include_aliases or n not in aliases)


def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the ``--json`` output ``name``: derived from its result type, or the
    shipped file (an old ``_`` name gives the current schema)."""
    name = schema_aliases().get(name, name)
    if name in DERIVED:
        return copy.deepcopy(_derived(name))
    if name not in shipped.schema_names(include_aliases=True) or name in schema_aliases():
        raise UsageError(
            f"unknown schema {name!r}; expected one of {', '.join(schema_names())}",
            fix="`evotree schema` lists them",
            schema=name,
        )
    return shipped.load_schema(name)


@cache
def _derived(name: str) -> dict[str, Any]:
    """The derived schema ``name`` (once a process: the types do not change while it runs)."""
    return DERIVED[name].schema(name)
