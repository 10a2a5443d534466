"""Node-side pieces shared by the remote executors' jobs (Ray tasks, Slurm jobs): one planned run
executed on the node a job landed on, from the driver's spec.

A job opens a :class:`NodeRun` (a fresh node-local scratch run directory and the evidence
store), builds the run's plan and record from the spec, extracts the candidate and checks its
file count, runs the phases (:func:`evotree.harness.executors.phases.train_then_judge`) while a
:class:`Syncer` copies partial evidence to the store, then copies all evidence, writes the
manifest and deletes its scratch. What differs between the executors (how the judge arrives,
how a cancel arrives, what the worker record says) stays in each job's module.
"""

from __future__ import annotations

import io
import shutil
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.harness.budget import RunLimits, run_deadline
from evotree.harness.executors.phases import train_then_judge
from evotree.harness.executors.store import EvidenceStore, evidence_files
from evotree.harness.layout import RunPaths
from evotree.harness.records import ProgressFn, RunPlan, RunRecord, RunStatus
from evotree.harness.sandbox_spec import SandboxPolicy

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = [
    "NodeRun",
    "Syncer",
    "apply_manifest",
    "extract_archive",
    "occupied_seconds",
    "plan_from_spec",
    "record_failure",
    "record_from_spec",
    "run_spec",
]


class Syncer(threading.Thread):
    """Copies a running run's evidence files to the store every ``period`` seconds."""

    def __init__(self, store: Any, run_id: str, root: Path, period: float) -> None:
        super().__init__(daemon=True, name=f"evotree-sync-{run_id}")
        self.store, self.run_id, self.root, self.period = store, run_id, root, period
        self.stop = threading.Event()
        self.sent: dict[str, int] = {}
        self.error: str | None = None

    def sync(self) -> None:
        """Copy the evidence files whose size changed since the last successful copy."""
        changed: dict[str, int] = {}
        for rel in evidence_files(self.root):  # the contract's names only, never candidate/
            try:
                size = (self.root / rel).stat().st_size
            except OSError:
                continue
            if self.sent.get(rel) != size:
                changed[rel] = size
        if changed:
            self.store.put_files(self.run_id, self.root, list(changed))
            self.sent.update(changed)  # only once the copy succeeded: a failed one is retried

    def run(self) -> None:
        while not self.stop.wait(self.period):
            try:
                self.sync()
            except Exception as exc:  # noqa: BLE001 - a failed partial copy is retried next time
                self.error = f"{type(exc).__name__}: {exc}"


def extract_archive(data: bytes | Path, target: Path) -> int:
    """Extract a tar archive (ours: an exported commit) into ``target``; return its file count."""
    target.mkdir(parents=True, exist_ok=True)
    options = {"name": data} if isinstance(data, Path) else {"fileobj": io.BytesIO(data)}
    with tarfile.open(**options) as archive:
        members = archive.getmembers()
        archive.extractall(target, filter="fully_trusted")  # built by the driver from a commit
    return sum(1 for m in members if m.isfile() or m.issym())


@dataclass
class NodeRun:
    """One run being executed on this node: its spec, evidence store and scratch directories."""

    spec: dict[str, Any]
    started: float  # time.monotonic() when the job began
    store: EvidenceStore
    scratch: Path  # the node-local run directory
    judge_dir: Path  # where the judge tree goes, outside the run directory
    paths: RunPaths

    @classmethod
    def open(cls, spec: dict[str, Any], dirs: tuple[Path, Path], started: float) -> NodeRun:
        """Open the run's evidence store and a fresh scratch run directory (``dirs``: the scratch
        and judge directories of :func:`scratch_dirs` of the job's module)."""
        store = EvidenceStore(spec["store_uri"])
        scratch, judge_dir = dirs
        shutil.rmtree(scratch, ignore_errors=True)
        paths = RunPaths(scratch)
        (paths.root / "logs").mkdir(parents=True)
        return cls(spec, started, store, scratch, judge_dir, paths)

    @property
    def run_id(self) -> str:
        return self.spec["run_id"]

    def syncer(self) -> Syncer:
        """The thread that copies partial evidence every ``sync_seconds`` (not started)."""
        return Syncer(self.store, self.run_id, self.paths.root, float(self.spec["sync_seconds"]))

    def take_candidate(self, archive: Path, what: str) -> None:
        """Extract the candidate ``archive`` into the run directory; fail on a file count other
        than the exported commit's (``what`` names the archive in the error)."""
        count = extract_archive(archive, self.paths.candidate)
        if count != self.spec["candidate_files"]:
            raise RuntimeError(
                f"the candidate {what} has {count} files, the exported commit "
                f"{self.spec['candidate_files']}"
            )

    def run_phases(
        self,
        plan: RunPlan,
        record: RunRecord,
        *,
        provide_judge: Callable[[Path], Any],
        cancel: threading.Event,
        notify: ProgressFn,
        drop_env: tuple[str, ...],
        cache_name: str,
    ) -> str:
        """The run's phases as the spec asks (its deadline: the sooner of its wall limit and the
        search clock's end); ``cache_name``: the node-local cache folder shared by its runs."""
        spec = self.spec
        return train_then_judge(
            plan,
            self.paths,
            record,
            train_command=spec["train_command"],
            eval_command=spec["eval_command"],
            train_timeout=spec["train_timeout"],
            eval_timeout=spec["eval_timeout"],
            deadline=run_deadline(spec["limits"], self.started)[0],
            judge_dir=self.judge_dir,
            provide_judge=provide_judge,
            cancel=cancel,
            notify=notify,
            drop_env=drop_env,
            reaper=True,
            sandbox=SandboxPolicy.from_dict(spec.get("sandbox")),
            prepare_command=spec.get("prepare_command") or "",
            cache_dir=self.scratch.parent.parent / cache_name,
        )

    def finish(self, record: RunRecord, syncer: Syncer, worker: dict[str, Any]) -> dict[str, Any]:
        """Wait for the last partial copy, then copy all evidence and write the manifest (the
        run's summary with ``worker``'s fields); return the manifest."""
        if syncer.is_alive():
            syncer.join(timeout=30)
        if syncer.error:
            record.notes.append(f"a partial copy to the evidence store failed once: {syncer.error}")
        summary = {
            "status": record.status,
            "error": record.error,
            "notes": record.notes,
            "phases": record.phases,
            "cpu_seconds": record.cpu_seconds,
            "wall_seconds": round(time.monotonic() - self.started, 3),
            **worker,
        }
        return self.store.finish(self.run_id, self.paths.root, summary)

    def remove(self) -> None:
        """Delete the run's scratch directory and its judge directory on this node."""
        shutil.rmtree(self.scratch, ignore_errors=True)
        shutil.rmtree(self.judge_dir, ignore_errors=True)


def run_spec(
    ws: Workspace,
    plan: RunPlan,
    run_id: str,
    *,
    store_uri: str,
    sync_seconds: float,
    **extra: Any,
) -> dict[str, Any]:
    """The spec a remote job runs ``plan`` from, as ``run_id`` (what :func:`plan_from_spec` and
    :class:`NodeRun` read on the node); ``extra``: the executor's own fields (how the candidate
    and the judge travel)."""
    cfg = ws.config
    return {
        "run_id": run_id,
        "version": plan.version,
        "seed": plan.seed,
        "commit": plan.commit,
        "judge_commit": plan.judge_commit,
        "judge_version": plan.judge_version,
        "limits": plan.limits.to_dict(),
        "judge_splits": list(plan.judge_splits),
        "train_command": cfg.train.command,
        "eval_command": cfg.eval.command,
        "prepare_command": cfg.train.prepare,
        "train_timeout": cfg.train.timeout_seconds,
        "eval_timeout": cfg.eval.timeout_seconds,
        "store_uri": store_uri,
        "sync_seconds": sync_seconds,
        **extra,
        # the champion's sandbox policy, so nodes isolate the phases exactly as local runs do
        "sandbox": SandboxPolicy.from_config(cfg.sandbox, forbidden=(ws.root,)).to_dict(),
    }


def plan_from_spec(spec: dict[str, Any]) -> RunPlan:
    """The run's plan as the driver's spec carries it."""
    return RunPlan(
        run_id=spec["run_id"],
        version=spec["version"],
        seed=spec["seed"],
        commit=spec["commit"],
        judge_commit=spec["judge_commit"],
        judge_version=spec["judge_version"],
        limits=RunLimits(**spec["limits"]),
        judge_splits=tuple(spec["judge_splits"]),
    )


def record_from_spec(spec: dict[str, Any], plan: RunPlan) -> RunRecord:
    """The node's running record of the run (the driver keeps the real run.json)."""
    return RunRecord(
        run_id=plan.run_id,
        version=plan.version,
        seed=plan.seed,
        status=RunStatus.RUNNING.value,
        commit=plan.commit,
        judge_commit=plan.judge_commit,
        judge_version=plan.judge_version,
        train_command=spec["train_command"],
        eval_command=spec["eval_command"],
        started_at="",
        limits=spec["limits"],
    )


def record_failure(record: RunRecord, exc: BaseException) -> None:
    """Mark the run failed by ``exc`` (reported to the driver in the manifest)."""
    record.status = RunStatus.FAILED.value
    record.error = record.error or f"{type(exc).__name__}: {exc}"


def apply_manifest(record: RunRecord, manifest: dict[str, Any]) -> None:
    """Copy what a job's manifest reports (status, error, notes, phases, CPU) onto the driver's
    record of the run."""
    record.status = str(manifest.get("status", record.status))
    record.error = manifest.get("error")
    record.notes.extend(manifest.get("notes") or [])
    record.phases = dict(manifest.get("phases") or {})
    record.cpu_seconds = float(manifest.get("cpu_seconds") or 0.0)


def occupied_seconds(manifest: dict[str, Any] | None, worker: dict[str, Any] | None) -> float:
    """Seconds the run occupied its worker or job: reported in its manifest, else since its
    worker record says it started, else 0."""
    if manifest and isinstance(manifest.get("wall_seconds"), (int, float)):
        return float(manifest["wall_seconds"])
    if worker and isinstance(worker.get("started_at"), (int, float)):
        return max(0.0, time.time() - float(worker["started_at"]))
    return 0.0
