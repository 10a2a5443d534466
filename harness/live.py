"""Watching a run while it runs: its logs as they grow, and how far its train phase has come.

``evotree logs RUN --follow`` and ``evotree run --follow`` print a phase's output as it is written
(:func:`follow_logs`: the log files a phase writes, read from where they were, until the run has
ended and nothing more comes); ``evotree status`` shows each running run's current step, the
newest recorded metric, its rate and, when the run declares its total steps (its step limit, or
a ``total_steps`` signal the recipe records), an ETA (:func:`progress_of`).

Files are opened without following links and only when they are regular files: a phase cannot
make evotree read another file through its log (it writes ``logs/`` inside its own folder).
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evotree.harness.layout import RunPaths

__all__ = ["LiveProgress", "follow_logs", "progress_of"]

_POLL_SECONDS = 0.2
_TAIL_BYTES = 256 * 1024
#: signals a recipe records to say how many steps the whole training takes (for the ETA)
TOTAL_SIGNALS = ("total_steps", "train/total_steps", "max_steps")


def _open_regular(path: Path) -> int | None:
    """A read descriptor of ``path`` when it is a regular file reached without a link; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def follow_logs(
    run_dir: Path,
    phases: tuple[str, ...],
    *,
    finished: Callable[[], bool],
    poll: float = _POLL_SECONDS,
    from_start: bool = True,
) -> Iterator[tuple[str, str, str]]:
    """``(phase, stream, line)`` for each line the run's phases write, as they write it, until
    ``finished()`` says the run has ended and the files have nothing more (a last read after)."""
    paths = RunPaths(run_dir)
    offsets: dict[tuple[str, str], int] = {}
    partial: dict[tuple[str, str], bytes] = {}
    while True:
        done = finished()  # read before the files: what is written before the end is read after it
        for phase in phases:
            for stream in ("out", "err"):
                key = (phase, stream)
                fd = _open_regular(paths.log(phase, stream))
                if fd is None:
                    continue
                try:
                    size = os.fstat(fd).st_size
                    if key not in offsets:
                        offsets[key] = 0 if from_start else max(0, size - _TAIL_BYTES)
                    if size < offsets[key]:  # rewritten: start again
                        offsets[key], partial[key] = 0, b""
                    os.lseek(fd, offsets[key], os.SEEK_SET)
                    data = os.read(fd, max(0, size - offsets[key]))
                finally:
                    os.close(fd)
                offsets[key] += len(data)
                text = partial.get(key, b"") + data
                *lines, rest = text.split(b"\n")
                partial[key] = rest
                for line in lines:
                    yield phase, stream, line.decode("utf-8", errors="replace")
        if done:
            for (phase, stream), rest in partial.items():
                if rest:
                    yield phase, stream, rest.decode("utf-8", errors="replace")
            return
        time.sleep(poll)


@dataclass
class LiveProgress:
    """How far a running run has come (``evotree status``)."""

    phase: str | None
    step: int | None
    total_steps: int | None
    metric: str | None
    value: float | None
    steps_per_second: float | None
    eta_seconds: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _tail_lines(path: Path, limit: int = _TAIL_BYTES) -> list[str]:
    fd = _open_regular(path)
    if fd is None:
        return []
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, max(0, size - limit), os.SEEK_SET)
        data = os.read(fd, limit)
    finally:
        os.close(fd)
    lines = data.decode("utf-8", errors="replace").splitlines()
    return lines[1:] if size > limit else lines  # the first may be cut


def _seconds(stamp: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(stamp)).astimezone(UTC).timestamp()
    except (TypeError, ValueError):
        return None


def progress_of(
    run_dir: Path,
    *,
    started_at: str | None,
    max_steps: int | None,
    phases: tuple[str, ...] = ("train", "prepare"),
) -> LiveProgress:
    """The newest step and metric a running run's train phase recorded (read from the tail of its
    signals file), its rate since the run started and, with a known total, an ETA."""
    paths = RunPaths(run_dir)
    step = total = None
    metric = value = None
    phase_seen = None
    for phase in phases:
        for line in reversed(_tail_lines(paths.jsonl(phase, "signals"))):
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if not isinstance(row, dict):
                continue
            name, number, at = row.get("metric"), row.get("value"), row.get("step")
            if name in TOTAL_SIGNALS and isinstance(number, (int, float)) and total is None:
                total = int(number)
                continue
            if step is None and isinstance(at, int):
                step, phase_seen = at, phase
                if isinstance(name, str) and isinstance(number, (int, float)):
                    metric, value = name, float(number)
        if step is not None:
            break
    total = total or (int(max_steps) if max_steps else None)
    rate = eta = None
    begun = _seconds(started_at)
    if step and begun is not None:
        elapsed = max(1e-6, time.time() - begun)
        rate = step / elapsed
        if total and rate > 0:
            eta = max(0.0, (total - step) / rate)
    return LiveProgress(
        phase=phase_seen,
        step=step,
        total_steps=total,
        metric=metric,
        value=value,
        steps_per_second=rate,
        eta_seconds=eta,
    )
