"""A run as the machine that drives it opens it: its directory, its ``.active`` flag, its first
record.

Every executor (local, Ray, Slurm) creates the run's directory under the runs directory before
the run starts — a new one: a run directory is never reused — and holds an exclusive flock on
``<runs>/.active/<run_id>`` for the run's life, which crash recovery reads: a flag no live
process holds belongs to a run whose driver died (:mod:`evotree.harness.recovery`).
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.ledger import utcnow
from evotree.harness.layout import RunPaths
from evotree.harness.records import RunDirError, RunPlan, RunRecord, RunStatus, package_versions

if TYPE_CHECKING:
    from evotree.core.config import Config

__all__ = ["ActiveFlag", "make_run_dir", "open_record"]


def make_run_dir(paths: RunPaths) -> RunPaths:
    """Create the run directory and its logs folder; raises :class:`RunDirError` when it cannot
    (it exists already, no permission, no space)."""
    try:
        paths.root.mkdir(parents=True)
        (paths.root / "logs").mkdir()
    except OSError as exc:
        raise RunDirError(
            f"cannot create the run directory {paths.root}: {exc.strerror}",
            fix="check permissions and free space of the runs directory",
        ) from None
    return paths


class ActiveFlag:
    """The run's ``.active`` marker, flocked from creation until :meth:`release`."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker
        self.lock = open(marker, "a+")  # noqa: SIM115 - held for the run's life (crash detection)
        fcntl.flock(self.lock, fcntl.LOCK_EX)

    def release(self) -> None:
        """Remove the marker and drop its lock (the run is finished)."""
        self.marker.unlink(missing_ok=True)
        self.lock.close()


def open_record(
    plan: RunPlan,
    run_id: str,
    cfg: Config,
    executor: dict[str, Any],
    *,
    train_command: str | None = None,
    **fields: Any,
) -> RunRecord:
    """The driver's first record of a run: running, with its commands (``train_command``: when
    not the champion's), limits, packages and ``executor`` (where and how it runs)."""
    return RunRecord(
        run_id=run_id,
        version=plan.version,
        seed=plan.seed,
        status=RunStatus.RUNNING.value,
        commit=plan.commit,
        judge_commit=plan.judge_commit,
        judge_version=plan.judge_version,
        train_command=cfg.train.command if train_command is None else train_command,
        eval_command=cfg.eval.command,
        started_at=utcnow(),
        packages=package_versions(),
        limits=plan.limits.to_dict(),
        executor=executor,
        judge_data_commit=plan.judge_data_commit,
        **fields,
    )
