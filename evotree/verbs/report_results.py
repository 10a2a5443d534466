"""Typed rows of the ``report`` verb's ``--json`` output: its sections (verdict, scores, per-task,
findings, audit, lineage, curves) and the search report's rates, spend and recommendation. Their
schemas are derived from these types (:mod:`evotree.verbs.schemas`)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "PostedComment",
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
]


class PostedComment(TypedDict):
    """The pull-request comment ``report --post`` created or updated (report.github.PostResult)."""

    action: Literal["created", "updated"]
    pull_request: int
    comment_id: int
    url: str | None
    repository: str


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
