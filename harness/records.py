"""Run records: what a run is on disk and in a plan, and where runs live.

:class:`RunRecord` (``run.json``: everything needed to trust, reproduce and charge a run),
:class:`RunPlan` (one planned run), :class:`RunStatus`, the run errors, :func:`runs_dir` and
:func:`list_runs`. Every other run module (planning, finishing, recovery, logs) reads and writes
these types, so they sit apart, below all of them, with no dependency on the ledger's events.
"""

from __future__ import annotations

import json
import os
import platform
import re
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.core.workspace import Workspace
from evotree.harness.budget import RunLimits

__all__ = [
    "HEADLINE_SPLITS",
    "ProgressFn",
    "RunDirError",
    "UnknownRun",
    "RunsCancelled",
    "RunStatus",
    "RunRecord",
    "RunPlan",
    "runs_dir",
    "now_stamp",
    "package_versions",
    "outcome_status",
    "list_runs",
]

#: Split whose mean score is a run's headline, in order of preference.
#: Split whose mean score is a run's headline, in order of preference.
HEADLINE_SPLITS = ("validation", "heldout", "test", "train")
#: run.json's ``packages``: name -> the distribution whose version is recorded (evotree's own is
#: distributed as ``evotree-rl``: ``evotree`` on the package index is another project)
_PACKAGES = {
    "evotree": "evotree-rl",
    **{
        name: name
        for name in (
            "torch",
            "transformers",
            "trl",
            "peft",
            "gymnasium",
            "duckdb",
            "pyarrow",
            "pygit2",
        )
    },
}

ProgressFn = Callable[[str, str, dict[str, Any]], None]


class RunDirError(EvotreeError):
    exit_code = 17
    code = "run_dir_error"


class UnknownRun(EvotreeError):
    exit_code = 38
    code = "unknown_run"


class RunsCancelled(EvotreeError):
    exit_code = 130
    code = "cancelled"


class RunStatus(str, Enum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CRASHED = "crashed"
    BUDGET_EXCEEDED = "budget_exceeded"
    CANCELLED = "cancelled"
    INVALID = "invalid"
    INGESTED = "ingested"


@dataclass
class RunRecord:
    """``run.json``: everything needed to trust, reproduce and charge a run."""

    run_id: str
    version: str
    seed: int
    status: str
    commit: str
    judge_commit: str | None
    judge_version: str | None
    train_command: str
    eval_command: str
    started_at: str
    host: str = field(default_factory=socket.gethostname)
    python: str = field(default_factory=lambda: platform.python_version())
    packages: dict[str, str] = field(default_factory=dict)
    driver_pid: int = field(default_factory=os.getpid)
    ended_at: str | None = None
    phases: dict[str, dict[str, Any]] = field(default_factory=dict)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    #: the wall and CPU seconds of its training, measured by evotree around each phase
    #: (:func:`training_seconds`): prepare and train, plus the judge phase where the champion's
    #: ``[eval] judge_trains`` says the judge runs the fixed training (RSIBench-Data)
    train_seconds: float = 0.0
    train_cpu_seconds: float = 0.0
    #: the part of ``train_seconds`` / ``train_cpu_seconds`` spent in the judge phase (0 unless judge_trains)
    judge_train_seconds: float = 0.0
    judge_train_cpu_seconds: float = 0.0
    limits: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    headline: dict[str, Any] | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Where it ran: {"kind": "local"} or, for Ray, kind, address, node_id, worker_pid, attempt,
    #: retry_of (the attempt whose worker died) and evidence_uri.
    executor: dict[str, Any] = field(default_factory=lambda: {"kind": "local"})
    #: The judge-store commit (refs/evotree/judge) overlaid on the champion's tree for the judge:
    #: the exact hidden data that scored the run. None: the judge was the champion's tree alone.
    judge_data_commit: str | None = None
    #: ``search`` (a run of the search: train, then the judge) or ``finalize`` (the search's one
    #: held-out evaluation, judge only, charged to the ``finalize`` account: :func:`plan_finalize_run`)
    kind: str = "search"
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def load(cls, path: Path) -> RunRecord:
        """Read ``run.json``; ``ValueError`` when it is not a run record (not JSON, not an object, fields missing)."""
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict):
            raise ValueError(
                f"{path}: not a run record (a JSON {type(data).__name__}, not an object)"
            )
        known = set(cls.__dataclass_fields__)
        try:
            return cls(**{k: v for k, v in data.items() if k in known})
        except TypeError as exc:  # a required field is missing
            raise ValueError(f"{path}: not a run record ({exc})") from None

    def save(self, path: Path) -> None:
        """Write atomically: a reader never sees half a run.json."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True, default=str) + "\n")
        os.replace(tmp, path)


@dataclass
class RunPlan:
    """One planned run: what to export, which commands, which limits."""

    run_id: str
    version: str
    seed: int
    commit: str
    judge_commit: str
    judge_version: str
    limits: RunLimits
    judge_splits: tuple[str, ...] = ("validation",)
    #: The judge store's commit in force when planned (the ledger's, never the ref's); None: none.
    judge_data_commit: str | None = None
    #: ``search`` or ``finalize`` (judge only, :func:`plan_finalize_run`)
    kind: str = "search"
    #: finalize: the selected run whose trained candidate folder the judge reads (a judge that needs
    #: the artifact training made); None: the commit's exported tree
    source_run: str | None = None
    #: finalize: train the commit again (its train phase, a fresh seed) before the judge: a clean retrain
    retrain: bool = False


def runs_dir(ws: Workspace) -> Path:
    """The workspace's runs directory (``[workspace].runs_dir``)."""
    path = Path(ws.config.workspace.runs_dir)
    return path if path.is_absolute() else ws.root / path


def now_stamp() -> str:
    """UTC now as ``YYYYmmddTHHMMSS``: the time part of run ids."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S")


def package_versions() -> dict[str, str]:
    """The installed versions of the packages a run's result may depend on (run.json's
    ``packages``); those not installed are left out.

    What ``importlib.metadata.version`` answers (the first ``<name>-*.dist-info`` or
    ``.egg-info`` along ``sys.path`` whose normalized name matches, its ``Version`` header),
    found in one listing of each path entry instead of importing importlib.metadata and its
    email parser (about 0.04 s of a run's own CPU). A folder without that header is not an
    installation here (importlib.metadata would answer None and stop).
    """
    wanted = {_normalize(distribution): name for name, distribution in _PACKAGES.items()}
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            children = sorted(os.listdir(entry or "."))
        except OSError:  # not a folder (a zip), or gone
            continue
        for child in children:
            base, dot, ext = child.lower().rpartition(".")
            if not dot or ext not in ("dist-info", "egg-info"):
                continue
            name = wanted.get(_normalize(base.partition("-")[0]))
            if name is None or name in found:
                continue
            version = _metadata_version(os.path.join(entry or ".", child))
            if version is not None:
                found[name] = version
    return {name: found[name] for name in _PACKAGES if name in found}


def _normalize(name: str) -> str:
    """A distribution name as importlib.metadata compares them (PEP 503, ``_`` for ``-``)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def _metadata_version(path: str) -> str | None:
    """The ``Version`` header of a dist-info's METADATA or an egg-info's PKG-INFO (a folder, or
    the egg-info file itself); None when there is none."""
    candidates = (
        [path]
        if os.path.isfile(path)
        else [os.path.join(path, "METADATA"), os.path.join(path, "PKG-INFO")]
    )
    for candidate in candidates:
        try:
            with open(candidate, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if not line.strip():
                        break  # the headers end at the first blank line
                    key, sep, value = line.partition(":")
                    if sep and key.strip().lower() == "version":
                        return value.strip()
        except OSError:
            continue
    return None


def outcome_status(outcome: str) -> str:
    """The run status of a phase outcome (ok / failed / budget / cancelled / invalid)."""
    return {
        "ok": RunStatus.SUCCEEDED,
        "failed": RunStatus.FAILED,
        "budget": RunStatus.BUDGET_EXCEEDED,
        "cancelled": RunStatus.CANCELLED,
        "invalid": RunStatus.INVALID,
    }[outcome].value


def list_runs(ws: Workspace, *, version: str | None = None) -> list[RunRecord]:
    """Run records on this machine, oldest first (optionally of one version)."""
    base = runs_dir(ws)
    if version is not None:
        version = ws.resolve(version).id
    if not base.is_dir():
        return []
    records = []
    for path in base.glob("*/run.json"):
        try:
            record = RunRecord.load(path)
        except (ValueError, TypeError, OSError):
            continue
        if version is None or record.version == version:
            records.append(record)
    return sorted(records, key=lambda r: (r.started_at, r.run_id))
