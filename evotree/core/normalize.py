"""Normalized scores (``[eval.normalize]``): one scale across tasks, shown beside the raw score.

AI4AI-Bench's scale: an unusable model scores 0, the task's starting algorithm ``start_score``
(0.1), the task's optimum 1.0; piecewise linear in between, in the metric's ``direction``
(``"max"``: higher raw is better; ``"min"``: lower is better). A raw score worse than
``unusable`` is 0; one better than ``optimum`` is above 1 (not clipped: it says the optimum was
set too low). With ``failed_as_zero``, a formal run that failed (``failed``, ``invalid``,
``crashed``, ``budget_exceeded``) scores 0 instead of having no score — a crash is not a
missing value to drop. A cancelled or still running run has no score either way.

:func:`normalize_score` is the one function every reader uses (tree, compare, gates, reports).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

__all__ = [
    "FAILED_STATUSES",
    "NormalizeError",
    "NormalizeSpec",
    "normalize_score",
    "normalized_mean",
    "parse_normalize",
]

#: run statuses that count as a failed formal run (0 with ``failed_as_zero``)
FAILED_STATUSES = frozenset({"failed", "invalid", "crashed", "budget_exceeded"})
_KEYS = ("unusable", "start", "optimum", "direction", "start_score", "failed_as_zero")


class NormalizeError(ValueError):
    """A bad ``[eval.normalize]`` value; ``key`` names it (the config turns it into a ConfigError)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class NormalizeSpec:
    """The anchors of the scale (raw metric values) and how failed runs count."""

    unusable: float
    start: float
    optimum: float
    direction: str = "max"
    start_score: float = 0.1
    failed_as_zero: bool = False

    def __post_init__(self) -> None:
        if self.direction not in ("max", "min"):
            raise NormalizeError(
                "direction", f'expected "max" or "min", actually: {self.direction!r}'
            )
        for key in ("unusable", "start", "optimum", "start_score"):
            value = getattr(self, key)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
            ):
                raise NormalizeError(key, f"expected a finite number, actually: {value!r}")
        if not isinstance(self.failed_as_zero, bool):
            raise NormalizeError(
                "failed_as_zero", f"expected true or false, actually: {self.failed_as_zero!r}"
            )
        if not 0 < self.start_score < 1:
            raise NormalizeError(
                "start_score", f"expected a number in (0, 1), actually: {self.start_score!r}"
            )
        sign = 1.0 if self.direction == "max" else -1.0
        if not sign * self.unusable < sign * self.start < sign * self.optimum:
            order = "unusable < start < optimum" if sign > 0 else "unusable > start > optimum"
            raise NormalizeError(
                "start",
                f"direction {self.direction!r} needs {order}, actually: unusable "
                f"{self.unusable:g}, start {self.start:g}, optimum {self.optimum:g}",
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_normalize(table: Mapping[str, Any]) -> NormalizeSpec | None:
    """The spec of an ``[eval.normalize]`` table; None for an empty one (no normalization).

    Raises :class:`NormalizeError` naming the key: unknown keys, missing anchors, wrong types,
    anchors out of order for the direction.
    """
    if not table:
        return None
    for key in table:
        if key not in _KEYS:
            raise NormalizeError(str(key), f"unknown key {key!r} (keys: {', '.join(_KEYS)})")
    for key in ("unusable", "start", "optimum"):
        if key not in table:
            raise NormalizeError(
                key,
                f"missing: [eval.normalize] needs unusable, start and optimum (raw metric "
                f"values), actually: {sorted(table)}",
            )
    values = dict(table)
    for key in ("unusable", "start", "optimum", "start_score"):
        if key in values and isinstance(values[key], int) and not isinstance(values[key], bool):
            values[key] = float(values[key])
    return NormalizeSpec(**values)


def normalize_score(
    raw: float | None, spec: NormalizeSpec, *, status: str | None = None
) -> float | None:
    """The normalized score of a raw score (module docstring); None when there is none to give.

    ``status`` is the run's (or None for a score that is not one run's, e.g. a mean): a failed
    formal run is 0 with ``spec.failed_as_zero``, else None, whatever ``raw`` says.
    """
    if status in FAILED_STATUSES:
        return 0.0 if spec.failed_as_zero else None
    if (
        raw is None
        or isinstance(raw, bool)
        or not isinstance(raw, (int, float))
        or not math.isfinite(raw)
    ):
        return None
    sign = 1.0 if spec.direction == "max" else -1.0
    x, u, s, o = sign * raw, sign * spec.unusable, sign * spec.start, sign * spec.optimum
    if x <= u:
        return 0.0
    if x <= s:
        return spec.start_score * (x - u) / (s - u)
    return spec.start_score + (1.0 - spec.start_score) * (x - s) / (o - s)


def normalized_mean(
    runs: Iterable[tuple[str | None, float | None]], spec: NormalizeSpec
) -> float | None:
    """AI4AI-Bench's mean over formal runs: the mean of each run's normalized score, ``(status,
    raw)`` per run; with ``spec.failed_as_zero`` a failed run counts 0 (never dropped), without it
    a failed run, like a run without a score, is left out. None when no run counts."""
    values = [
        v
        for v in (normalize_score(raw, spec, status=status) for status, raw in runs)
        if v is not None
    ]
    return sum(values) / len(values) if values else None
