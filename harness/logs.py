"""A run's phase logs: ``evotree logs``, finding a run by id, and a failed run's log-tail note.

The phases write ``logs/<phase>.out`` / ``.err`` under their run directory;
:func:`run_logs` reads their tails, :func:`find_run_dir` resolves a run id (or a unique prefix),
and :func:`log_tail_note` quotes the failing phase's last lines into the run's record.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evotree.core.errors import UsageError
from evotree.core.workspace import Workspace
from evotree.harness.layout import RunPaths
from evotree.harness.records import RunRecord, RunStatus, UnknownRun, runs_dir

__all__ = ["LOG_PHASES", "RunLogs", "find_run_dir", "glob_escape", "run_logs", "log_tail_note"]


#: the phases whose output a run keeps under logs/, in the order they run
LOG_PHASES = ("prepare", "train", "eval")


def _last_lines(path: Path, count: int, *, max_bytes: int = 1 << 20) -> tuple[list[str], bool]:
    """The last ``count`` lines of ``path`` (reading at most its last ``max_bytes``), and whether more precede."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except OSError:
        return [], False
    lines = data.decode("utf-8", errors="replace").splitlines()
    more = size > max_bytes or len(lines) > count
    return lines[-count:] if count else [], more


def log_tail_note(
    record: RunRecord, paths: RunPaths, *, lines: int = 3, width: int = 400
) -> str | None:
    """For a run that failed in a phase (invalid, failed, stopped): the last lines of that phase's
    stderr (stdout when stderr is empty), so the cause is in the run's note, not only in a file."""
    if record.status in (
        RunStatus.SUCCEEDED.value,
        RunStatus.INGESTED.value,
        RunStatus.RUNNING.value,
        RunStatus.CANCELLED.value,
    ):
        return None
    failing = [
        name
        for name, phase in record.phases.items()
        if isinstance(phase, dict) and phase.get("returncode") not in (0, None)
    ]
    phase = failing[-1] if failing else next(reversed(record.phases), None)
    if phase is None:
        return None
    for stream in ("err", "out"):
        tail, _ = _last_lines(paths.log(phase, stream), 50, max_bytes=1 << 16)
        tail = [line.strip() for line in tail if line.strip()][-lines:]
        if tail:
            text = " | ".join(tail)
            if len(text) > width:  # the last line is the error's own message: keep its beginning
                text = tail[-1] if len(tail[-1]) <= width else tail[-1][: width - 1] + "…"
            return f"{phase}.{stream} ends: {text}"
    return None


@dataclass
class RunLogs:
    """``evotree logs RUN``: the tails of a run's phase logs (schema: ``logs.schema.json``)."""

    run_id: str
    version: str | None
    status: str | None
    error: str | None
    logs: list[dict[str, Any]]
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_run_dir(ws: Workspace, run_id: str) -> Path:
    """The directory of run ``run_id`` (or of the one run whose id starts with it); :class:`UnknownRun` otherwise."""
    base = runs_dir(ws)
    if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith(".") or "\0" in run_id:
        raise UnknownRun(
            f"{run_id!r} is not a run id", fix="`evotree runs` lists the run ids", run_id=run_id
        )
    exact = base / run_id
    if (exact / "run.json").is_file():
        return exact
    found = (
        sorted(p for p in base.glob(f"{glob_escape(run_id)}*") if (p / "run.json").is_file())
        if base.is_dir()
        else []
    )
    if len(found) == 1:
        return found[0]
    if found:
        raise UnknownRun(
            f"{run_id!r} names {len(found)} runs: {', '.join(p.name for p in found[:5])}"
            + (" …" if len(found) > 5 else ""),
            fix="type more of the run id",
            run_id=run_id,
        )
    raise UnknownRun(
        f"no run {run_id!r} on this machine (under {base})",
        fix="`evotree runs` lists the run ids",
        run_id=run_id,
    )


def glob_escape(text: str) -> str:
    """``text`` with glob's special characters taken literally."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def run_logs(ws: Workspace, run_id: str, *, phase: str | None = None, tail: int = 50) -> RunLogs:
    """The last ``tail`` lines (0: all) of each phase's stdout and stderr of a run (one ``phase`` only if given)."""
    if phase is not None and phase not in LOG_PHASES:
        raise UsageError(
            f"--phase {phase!r}: expected one of {', '.join(LOG_PHASES)}", fix="e.g. --phase train"
        )
    root = find_run_dir(ws, run_id)
    paths = RunPaths(root)
    try:
        record: RunRecord | None = RunRecord.load(paths.record)
    except (OSError, ValueError):
        record = None
    logs = []
    for name in [phase] if phase else LOG_PHASES:
        for stream in ("out", "err"):
            path = paths.log(name, stream)
            if not path.is_file():
                continue
            lines, more = _last_lines(
                path, tail if tail else 10**9, max_bytes=(1 << 20) if tail else 1 << 40
            )
            logs.append(
                {
                    "phase": name,
                    "stream": stream,
                    "path": str(path),
                    "lines": lines,
                    "truncated": more,
                }
            )
    return RunLogs(
        run_id=root.name,
        version=record.version if record else None,
        status=record.status if record else None,
        error=record.error if record else None,
        logs=logs,
    )
