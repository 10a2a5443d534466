"""The search statistics' data: parameters, one version's row, one tree's statistics, the report.

The rules these fields follow are :mod:`evotree.report.search`'s module doc.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from evotree.core.errors import UsageError
from evotree.gates.finalize import better, tied

__all__ = [
    "SEARCH_SCHEMA_VERSION",
    "SPEND_UNITS",
    "SHARE_UNITS",
    "TRAINING_UNIT",
    "SearchParams",
    "VersionStat",
    "TreeStats",
    "SearchReport",
    "finite",
    "add_usage",
    "percent",
]

SEARCH_SCHEMA_VERSION = 1
#: spend units always reported (a usage's other numeric keys, e.g. ``usd``, are added when present)
SPEND_UNITS = ("runs", "steps", "episodes", "wall_hours", "gpu_hours", "cpu_seconds")
#: units the stop rule's "spend after the peak" share is measured in, first with a total > 0 wins:
#: the training bill first (RSIBench-Data's unit; agent spend is reported beside it, never in it)
SHARE_UNITS = ("training_usd", "usd", "gpu_hours", "cpu_hours", "cpu_seconds", "runs")
#: the training bill of a run: its training compute (the judge phase's, where ``[eval] judge_trains``)
#: in wall hours x ([executor].gpus x usd_per_gpu_hour + [executor].cpus x usd_per_cpu_hour)
TRAINING_UNIT = "training_usd"


@dataclass(frozen=True)
class SearchParams:
    """The rules' parameters; every field has a default (see the module doc)."""

    #: relative tie tolerance of two scores: |a - b| <= epsilon * max(|a|, |b|) is a tie
    epsilon: float = 1e-9
    #: a version after the peak regresses when it is below the peak by more than this (score units)
    margin: float = 0.0
    #: stop after this many versions created since the peak
    patience: int = 3
    #: stop when the spend after the peak reaches this share of the total spend
    max_after_peak_share: float = 0.5
    #: "max": higher scores are better; "min": lower; "auto": the workspace's ``[eval.normalize].direction``, else max
    direction: str = "max"

    def __post_init__(self) -> None:
        def bad(name: str, value: Any, expected: str) -> UsageError:
            return UsageError(
                f"search statistics: {name} must be {expected}, actually: {value!r}",
                fix=f"pass a {name} {expected}",
                key=name,
            )

        for name in ("epsilon", "margin", "max_after_peak_share"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < 0
            ):
                raise bad(name, value, "a finite number >= 0")
        if self.max_after_peak_share > 1:
            raise bad("max_after_peak_share", self.max_after_peak_share, "between 0 and 1")
        if (
            isinstance(self.patience, bool)
            or not isinstance(self.patience, int)
            or self.patience < 1
        ):
            raise bad("patience", self.patience, "an integer >= 1")
        if self.direction not in ("max", "min", "auto"):
            raise bad("direction", self.direction, "'max', 'min' or 'auto'")

    def tie(self, a: float, b: float) -> bool:
        """Whether two scores are equal within the relative tolerance (:func:`evotree.gates.finalize.tied`)."""
        return tied(a, b, self.epsilon)

    def better(self, a: float, b: float) -> bool:
        """Whether score ``a`` is better than ``b`` by more than the tie tolerance
        (:func:`evotree.gates.finalize.better`, the rule finalize selects by)."""
        return better(a, b, direction=self.direction, epsilon=self.epsilon)

    def drop(self, peak: float, value: float) -> float:
        """How far ``value`` is below ``peak`` in the good direction (negative: above it)."""
        return peak - value if self.direction == "max" else value - peak

    def regressed(self, peak: float, value: float) -> bool:
        """Below ``peak`` by more than the margin and outside the tie tolerance."""
        return not self.tie(peak, value) and self.drop(peak, value) > self.margin


@dataclass
class VersionStat:
    """One version of the search, in creation order (``order`` starts at 1)."""

    id: str
    order: int
    parents: list[str]
    created_at: str
    status: str
    hypothesis: str
    score: float | None
    metric: str | None
    #: the latest audit event: "passed", "failed" or None (never audited)
    audit: str | None
    #: scored and not audit-failed
    valid: bool
    #: runs the ledger recorded as finished (any status)
    runs_finished: int
    spend: dict[str, float]
    #: the best valid version created before this one, and its score (None for the first)
    best_before: str | None = None
    best_before_score: float | None = None
    #: this version is the historical best of the tree
    peak: bool = False
    #: created after the peak
    after_peak: bool = False
    #: how far below the peak (valid versions after the peak; negative: above it within the tie)
    drop: float | None = None
    #: a valid version after the peak below it by more than the margin
    regression: bool = False
    #: intervention class of the version's change (None: not classified)
    intervention: dict[str, Any] | None = None
    #: ``[eval.normalize]``: the version's normalized score (with ``failed_as_zero`` the mean over
    #: its formal runs, a failed one 0: a version whose runs all crashed is 0, not missing)
    normalized: float | None = None


@dataclass
class TreeStats:
    """Search-level statistics of one workspace (one "setting")."""

    setting: str
    root: str | None
    champion: str | None
    metric: str | None
    #: the direction the scores were compared in (max: higher is better)
    direction: str
    versions: list[VersionStat]
    historical_best: dict[str, Any]
    first_attempt: dict[str, Any]
    post_peak: dict[str, Any]
    spend: dict[str, Any]
    cost_per_valid_candidate: dict[str, Any]
    recommendation: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    #: per primary intervention class of the candidates: versions, valid, mean score (None: not classified)
    interventions: dict[str, Any] | None = None
    #: ``[eval.normalize]`` (AI4AI-Bench's headline): the candidates' mean normalized score, crashes 0
    #: with ``failed_as_zero``; None when the workspace has no normalization
    normalized: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchReport:
    """``evotree report --tree --json`` (schema: ``report-tree.schema.json``)."""

    generated_at: str
    parameters: dict[str, Any]
    settings: list[TreeStats]
    rates: dict[str, Any]
    #: the file written (``--out``), else None
    path: str | None = None
    #: how the CLI prints it (md or text); not part of the JSON
    search_format: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": SEARCH_SCHEMA_VERSION,
            "generated_at": self.generated_at,
            "parameters": self.parameters,
            "settings": [s.to_dict() for s in self.settings],
            "rates": self.rates,
            "path": self.path,
        }


# ---------------------------------------------------------------------------- numbers
def finite(value: Any) -> float | None:
    """``value`` as a float when it is a finite number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def add_usage(total: dict[str, float], usage: Mapping[str, Any] | None) -> None:
    """Add every finite number of ``usage`` into ``total`` (by key)."""
    for key, value in (usage or {}).items():
        number = finite(value)
        if number is not None:
            total[key] = total.get(key, 0.0) + number


def percent(value: float | None) -> str:
    """A share as ``12.3%`` (``—`` for None)."""
    return "—" if value is None else f"{100 * value:.1f}%"
