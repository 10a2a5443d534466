"""The summary lines an autoresearch-style train.py prints at its end, read into numbers.

karpathy/autoresearch's train.py ends with ``---`` and ``key: value`` lines (``val_bpb:``,
``training_seconds:``, ``peak_vram_mb:`` …) and program.md reads the metric with
``grep "^val_bpb:" run.log``. :func:`parse_summary` reads the same lines the same way: the last
``key: number`` line of each key wins, anywhere in the log (so a crash before the summary leaves
the metric missing, which is how a crash is told apart from a result).
"""

from __future__ import annotations

import math
import re

__all__ = ["DIRECTIONS", "metric_value", "parse_summary", "peak_memory_gb"]

DIRECTIONS = ("min", "max")
_LINE = re.compile(
    r"^([A-Za-z_][A-Za-z0-9_./-]{0,63}):[ \t]*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)[ \t]*$"
)


def parse_summary(text: str) -> dict[str, float]:
    """Every ``key: number`` line of ``text`` (the last value of a key wins); non-finite values kept."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        match = _LINE.match(line.strip("\r"))
        if match:
            out[match.group(1)] = float(match.group(2))
    return out


def metric_value(summary: dict[str, float], metric: str) -> float | None:
    """The metric's value, or None when the run printed none or a non-finite one (a crash)."""
    value = summary.get(metric)
    return value if value is not None and math.isfinite(value) else None


def peak_memory_gb(summary: dict[str, float]) -> float | None:
    """Peak memory in GiB from ``peak_vram_mb`` (autoresearch, a GPU) or ``peak_memory_mb`` (the CPU example)."""
    for key in ("peak_vram_mb", "peak_memory_mb"):
        if key in summary and math.isfinite(summary[key]):
            return summary[key] / 1024
    return None
