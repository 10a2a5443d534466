"""The ``slurm`` executor: each run is a Slurm job submitted through submitit; this process is the driver.

As with Ray (:mod:`evotree.harness.executors.ray`), the driver (the ``evotree run`` process) keeps
everything that decides or records: planning and budgets (done before it is called), each run's
directory with ``run.json`` and its ``.active`` flock, the ledger, the judging policy. Per run (one
version × seed) it

- exports the version's commit without the judge paths into ``<folder>/packages/<sha>.tar``
  (content-addressed: once per commit), and the champion's judge tree into
  ``<folder>/judge/<run_id>.tar.gz`` (mode 0600; the job reads it into memory and deletes it
  before any phase starts);
- submits :func:`evotree.harness.executors.slurm_job.run_job` with the resources of ``[executor]``
  (``cpus`` per task, whole ``gpus`` per node, ``memory_gb``) and a time limit of the run's wall
  budget plus a margin; partition, account and QoS come from Slurm's own ``SBATCH_PARTITION``,
  ``SBATCH_ACCOUNT``, ``SBATCH_QOS`` in the environment;
- polls the jobs; when one ends, imports its evidence from the evidence store
  (``[executor].evidence_uri``) checked against the manifest the job *returned* (submitit's result
  pickle), and finishes the run as the other executors do (compaction, headline, usage,
  ``run.finished``).

``<folder>`` (default ``.evotree/slurm`` of the workspace; ``EVOTREE_SLURM_FOLDER``) must be on a
filesystem the driver and the nodes share, as is the evidence store. ``EVOTREE_SLURM_CLUSTER``
picks submitit's back end: ``slurm`` (the default), or ``local`` (jobs as processes of this
machine, through submitit's local executor: a try without a cluster, and the tests).

Faults: a job that ends without a result (node failure, killed, out of memory) finishes its run
``failed`` with submitit's reason, its evidence incomplete (what it had copied is imported for
inspection); a run's own failure is ``failed`` with its error; nothing is retried here.

Cancel (Ctrl-C) is bounded, as Slurm's own ``scancel`` is (SIGTERM, then SIGKILL after
``KillWait``): every job is asked to stop with SIGTERM (``scancel`` on Slurm; on the local cluster
SIGTERM to submitit's controller, which forwards it to the job and keeps waiting. submitit's own
local cancel is a SIGINT to the controller: one that inherited SIGINT ignored, as every process
started in the background by a non-interactive shell does, never acts on it, and otherwise it
SIGKILLs the job a second later, too soon to stop its phase and report). A job that stops its
phase reports ``cancelled`` in its manifest. One still running after the grace
(:data:`CANCEL_GRACE_SECONDS` on Slurm, :data:`LOCAL_CANCEL_GRACE_SECONDS` on the local cluster)
is killed (on the local cluster: every process of its tree, the phase's sandbox with it) and its
run settled ``cancelled`` by the driver without waiting for a result that will not come, its
evidence imported as incomplete. Jobs not yet started are removed from the queue and their runs
closed ``cancelled`` without charge.
"""

from __future__ import annotations

import hashlib
import math
import os
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.ledger import utcnow
from evotree.harness.executors.errors import ExecutorError
from evotree.harness.layout import RunPaths
from evotree.harness.executors.ray import evidence_uri
from evotree.harness.executors.store import EvidenceStore
from evotree.harness.records import runs_dir
from evotree.harness.executors.ray import _tar_commit
from evotree.harness.executors.ray import _tar_judge
from evotree.harness.executors.slurm_job import judge_archive
from evotree.harness.executors.slurm_job import run_job
from evotree.harness.executors.run_dir import ActiveFlag, make_run_dir, open_record
from evotree.harness.executors.node import apply_manifest, occupied_seconds, run_spec
from evotree.harness.executors.phases import TERM_GRACE_SECONDS
from evotree.harness.finish import ledger_run_started
from evotree.harness.executors.store import WORKER
from evotree.harness.executors.store import FetchResult
from evotree.harness.records import RunStatus
from evotree.harness.finish import finish_run

if TYPE_CHECKING:
    from evotree.core.config_execution import ExecutorSection
    from evotree.core.workspace import Workspace
    from evotree.harness.records import ProgressFn, RunPlan, RunRecord

__all__ = ["CLUSTERS", "SlurmExecutor", "job_folder"]

#: submitit back ends this executor drives
CLUSTERS = ("slurm", "local")
ENV_CLUSTER = "EVOTREE_SLURM_CLUSTER"
ENV_FOLDER = "EVOTREE_SLURM_FOLDER"
#: seconds added to a run's wall budget for its job's time limit (setup, extraction, the evidence copy)
TIME_MARGIN_SECONDS = 600
#: seconds a cancelled Slurm job gets to stop its phase and report before the driver settles its
#: run without it (Slurm itself SIGKILLs the job ``KillWait`` seconds, 30 by default, after the
#: SIGTERM of ``scancel``)
CANCEL_GRACE_SECONDS = 60.0
#: the same on the local cluster, where the driver kills the job's processes itself: the phase's
#: own stop (SIGTERM, :data:`TERM_GRACE_SECONDS`, SIGKILL) and the last evidence copy
LOCAL_CANCEL_GRACE_SECONDS = TERM_GRACE_SECONDS + 10.0
#: seconds the driver waits for a killed local job's processes to be gone
_KILL_WAIT_SECONDS = 10.0
_POLL_SECONDS = 0.5
#: how often the driver reads a running job's evidence in the store for progress, at most
_WATCH_SECONDS = 2.0


def _import_submitit() -> Any:
    try:
        import submitit
    except ImportError:
        raise ExecutorError(
            "the slurm executor needs submitit, which is not installed",
            fix="pip install 'evotree-rl[slurm]' (on the driver and in the nodes' environment), "
            "or run with --executor local",
        ) from None
    return submitit


def job_folder(ws: Workspace) -> Path:
    """The folder submitit and the driver share with the nodes: ``EVOTREE_SLURM_FOLDER`` or ``.evotree/slurm``."""
    value = os.environ.get(ENV_FOLDER, "").strip()
    if not value:
        return ws.state_dir / "slurm"
    path = Path(value).expanduser()
    return path if path.is_absolute() else ws.root / path


@dataclass
class _Job:
    plan: RunPlan
    record: RunRecord
    paths: RunPaths
    active: ActiveFlag
    job: Any
    submitted: float
    watched: dict[str, int] = field(default_factory=dict)  # store file -> bytes read (progress)
    phase: str = ""
    max_step: int = -1


class SlurmExecutor:
    """Runs each planned run as one Slurm job (submitit), with the resources of ``[executor]``."""

    kind = "slurm"

    def __init__(self, section: ExecutorSection, *, cluster: str | None = None) -> None:
        self.section = section
        self.cluster = (cluster or os.environ.get(ENV_CLUSTER, "") or "slurm").strip()
        if self.cluster not in CLUSTERS:
            raise ExecutorError(
                f"{ENV_CLUSTER} must be one of {', '.join(CLUSTERS)}, actually: {self.cluster!r}",
                fix=f"unset {ENV_CLUSTER} (Slurm), or set it to local to try without a cluster",
            )

    def execute(
        self,
        ws: Workspace,
        plans: list[RunPlan],
        *,
        progress: ProgressFn | None,
        cancel: threading.Event,
    ) -> list[RunRecord]:
        """Submit every plan as a job; return their final records in plan order."""
        return _Driver(ws, self.section, self.cluster, plans, progress, cancel).run()


class _Driver:
    """One ``evotree run`` request on Slurm: submits, watches, imports evidence, cancels."""

    def __init__(
        self,
        ws: Workspace,
        section: ExecutorSection,
        cluster: str,
        plans: list[RunPlan],
        progress: ProgressFn | None,
        cancel: threading.Event,
    ) -> None:

        self.submitit = _import_submitit()
        self.ws, self.section, self.cluster, self.plans = ws, section, cluster, plans
        self.notify = progress or (lambda *_: None)
        self.cancel = cancel
        self.base = runs_dir(ws)
        self.folder = job_folder(ws)
        self.uri = evidence_uri(ws, section)
        self.store = EvidenceStore(self.uri)
        self.packages: dict[str, tuple[Path, int]] = {}
        self.running: list[_Job] = []
        self.done: dict[str, RunRecord] = {}
        self.cancelling_since: float | None = None
        self.cancel_grace = (
            LOCAL_CANCEL_GRACE_SECONDS if cluster == "local" else CANCEL_GRACE_SECONDS
        )

    # ------------------------------------------------------------------ main loop
    def run(self) -> list[RunRecord]:
        gpus = self.section.gpus
        if gpus != int(gpus):
            raise ExecutorError(
                f"executor.gpus must be a whole number of GPUs per Slurm job, actually: {gpus:g}",
                fix="set [executor].gpus on the champion to 0, 1, 2, …",
            )
        executor = self._executor()
        try:
            for plan in self.plans:
                if self.cancel.is_set():
                    self._finish_unstarted(plan)
                else:
                    self._submit(executor, plan)
            watched = 0.0
            while self.running:
                self._check_cancel()
                if time.monotonic() - watched > max(_WATCH_SECONDS, self.section.sync_seconds / 2):
                    watched = time.monotonic()
                    for job in self.running:
                        self._watch(job)
                for job in [j for j in self.running if j.job.done()]:
                    self._settle(job)
                time.sleep(_POLL_SECONDS)
        except BaseException as exc:
            for job in list(self.running):  # a driver error must not leave jobs queued or running
                self._stop_job(job)  # best effort: the runs are closed below
            self._abandon(exc)
            raise
        return [self.done[plan.run_id] for plan in self.plans]

    def _executor(self) -> Any:
        folder = self.folder / "jobs"
        folder.mkdir(parents=True, exist_ok=True)
        executor = self.submitit.AutoExecutor(folder=folder, cluster=self.cluster)
        longest = max((p.limits.wall_seconds for p in self.plans), default=3600.0)
        params: dict[str, Any] = {
            "timeout_min": max(1, math.ceil((float(longest) + TIME_MARGIN_SECONDS) / 60)),
            "cpus_per_task": max(1, math.ceil(self.section.cpus)),
            "tasks_per_node": 1,
            "nodes": 1,
            "name": "evotree-run",
        }
        if self.section.gpus:
            params["gpus_per_node"] = int(self.section.gpus)
        if self.section.memory_gb > 0:
            params["mem_gb"] = self.section.memory_gb
        if self.cluster == "slurm":
            # no requeue: a pre-empted run is reported and re-run by a person, not restarted silently
            params["slurm_additional_parameters"] = {"no-requeue": True}
        executor.update_parameters(**params)
        return executor

    def _check_cancel(self) -> None:
        """On cancel, ask every job to stop (SIGTERM); once the grace is over, kill the jobs still
        running and settle their runs ``cancelled`` without their result."""
        if not self.cancel.is_set():
            return
        now = time.monotonic()
        if self.cancelling_since is None:
            self.cancelling_since = now
            for job in self.running:
                self._stop_job(job)
            return
        if now - self.cancelling_since <= self.cancel_grace:
            return
        for job in list(self.running):
            if job.job.done():
                continue  # ended by itself: settled with its result by the main loop
            killed = self._kill_job(job)
            self._settle(
                job,
                forced=f"cancelled: the job did not stop and report within {self.cancel_grace:g} s "
                f"of the cancel and was killed{killed}",
            )

    def _stop_job(self, job: _Job) -> None:
        """Ask a job to stop its phase and report: SIGTERM (``scancel`` on Slurm; on the local
        cluster to submitit's controller, which forwards it to the job)."""
        try:
            if self.cluster == "local":  # a local job's id is its controller's pid
                os.kill(int(job.job.job_id), signal.SIGTERM)
            else:
                job.job.cancel(check=False)
        except Exception:  # noqa: BLE001, S110 - a job that already ended needs no cancel
            pass

    def _kill_job(self, job: _Job) -> str:
        """End a job that did not stop within the grace; return what the run's error adds.

        Local cluster: SIGKILL every process of the controller's tree (the job, its phase's
        launcher, sandbox and watchdog) until none is left. Slurm: ``scancel`` again; Slurm
        SIGKILLs the job's processes itself (``KillWait`` after the first)."""
        if self.cluster != "local":
            try:
                job.job.cancel(check=False)
            except Exception:  # noqa: BLE001, S110 - the job may have left the queue meanwhile
                pass
            return " (scancel; Slurm kills what is left of it)"
        left = _kill_tree(int(job.job.job_id), _KILL_WAIT_SECONDS)
        job.job.done()  # reaps the controller
        return f" ({len(left)} of its processes still alive)" if left else ""

    # ------------------------------------------------------------------ submitting
    def _open_run(self, plan: RunPlan) -> tuple[RunRecord, RunPaths, ActiveFlag]:
        paths = make_run_dir(RunPaths(self.base / plan.run_id))
        active = ActiveFlag(self.base / ".active" / plan.run_id)
        executor = {
            "kind": "slurm",
            "cluster": self.cluster,
            "folder": str(self.folder),
            "evidence_uri": self.uri,
            "driver_host": socket.gethostname(),
        }
        record = open_record(plan, plan.run_id, self.ws.config, executor)
        record.save(paths.record)
        return record, paths, active

    def _package(self, commit: str) -> tuple[Path, int]:
        """The candidate archive of ``commit`` (judge paths excluded), written once: (path, file count)."""
        if commit in self.packages:
            return self.packages[commit]

        data, files = _tar_commit(self.ws, commit, exclude=list(self.ws.config.eval.judge_paths))
        target = self.folder / "packages" / f"{hashlib.sha256(data).hexdigest()[:32]}.tar"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.exists():
            tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, target)
        self.packages[commit] = (target, files)
        return self.packages[commit]

    def _judge(self, plan: RunPlan) -> Path:
        """The run's judge archive, readable by this user only; the job deletes it once read."""

        data, _ = _tar_judge(self.ws, plan.judge_commit, plan.judge_data_commit)
        target = judge_archive(self.folder, plan.run_id)
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return target

    def _submit(self, executor: Any, plan: RunPlan) -> None:
        package, files = self._package(plan.commit)
        judge = self._judge(plan)
        record, paths, active = self._open_run(plan)
        ledger_run_started(self.ws, record)
        spec = run_spec(
            self.ws,
            plan,
            plan.run_id,
            store_uri=self.uri,
            sync_seconds=self.section.sync_seconds,
            candidate_archive=str(package),
            candidate_files=files,
            judge_archive=str(judge),
        )
        try:
            job = executor.submit(run_job, spec)
        except Exception as exc:
            judge.unlink(missing_ok=True)
            self._close_unsubmitted(record, paths, active, exc)
            raise ExecutorError(
                f"submitting run {plan.run_id} to {self.cluster} failed: {_first(exc)}",
                fix="check that sbatch works here (sinfo, a test job) and that SBATCH_PARTITION / "
                "SBATCH_ACCOUNT name a partition and account you may use",
            ) from None
        record.executor["job_id"] = str(job.job_id)
        record.save(paths.record)
        self.running.append(
            _Job(
                plan=plan,
                record=record,
                paths=paths,
                active=active,
                job=job,
                submitted=time.monotonic(),
            )
        )
        self.notify(
            plan.run_id,
            "started",
            {
                "version": plan.version,
                "seed": plan.seed,
                "max_steps": plan.limits.max_steps,
                "job_id": str(job.job_id),
            },
        )

    # ------------------------------------------------------------------ progress
    def _watch(self, job: _Job) -> None:
        """Progress of a running job from what it copied to the store: its phase once its
        ``worker.json`` (train) or judge evidence (eval) is there, and the steps and metrics of
        the new lines of its ``signals.jsonl`` (the same events the local executor sends)."""

        run_id = job.record.run_id
        try:
            if not job.phase and self.store.fs.exists(self.store.run_path(run_id, WORKER)):
                job.phase = "train"
                self.notify(run_id, "phase", {"phase": "train"})
            for phase in ("train", "eval"):
                rows = self._new_rows(job, f"evidence/{phase}/signals.jsonl")
                if (
                    phase == "eval"
                    and job.phase == "train"
                    and (rows or self.store.fs.exists(self.store.run_path(run_id, "logs/eval.err")))
                ):
                    job.phase = "eval"
                    self.notify(run_id, "phase", {"phase": "eval"})
                for row in rows:
                    step = row.get("step")
                    if not isinstance(step, int):
                        continue
                    if step > job.max_step:
                        job.max_step = step
                        self.notify(run_id, "step", {"phase": phase, "step": step})
                    self.notify(
                        run_id,
                        "metric",
                        {
                            "phase": phase,
                            "step": step,
                            "metric": row.get("metric"),
                            "value": row.get("value"),
                        },
                    )
        except Exception:  # noqa: BLE001, S110 - progress is best effort, never a reason to fail a run
            pass

    def _new_rows(self, job: _Job, rel: str) -> list[dict[str, Any]]:
        """Complete JSON lines of a store file past what was read before."""
        import json

        path = self.store.run_path(job.record.run_id, rel)
        offset = job.watched.get(rel, 0)
        try:
            with self.store.fs.open(path, "rb") as handle:
                handle.seek(offset)
                chunk = handle.read()
        except (FileNotFoundError, OSError):
            return []
        end = chunk.rfind(b"\n") + 1  # complete lines only
        job.watched[rel] = offset + end
        rows = []
        for line in chunk[:end].splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
        return rows

    # ------------------------------------------------------------------ settling
    def _settle(self, job: _Job, *, forced: str | None = None) -> None:
        """Finish a job's run from its result (submitit's pickle) and the store's evidence;
        ``forced``: the job was killed after the cancel's grace, no result is read (the reason)."""
        record = job.record
        self._watch(job)  # the last progress: the job copied all of its evidence before it ended
        result: Any = None
        cause: str | None = forced
        if forced is None and self.cancelling_since is not None and not _has_result(job.job):
            # cancelled and ended without its result: submitit would wait 15-30 s for the pickle
            cause = f"cancelled: the Slurm job {job.job.job_id} ended without reporting a result"
        elif forced is None:
            try:
                result = job.job.result()
            except Exception as exc:  # noqa: BLE001 - submitit raises the job's failure as found
                cause = f"the Slurm job {job.job.job_id} ended without a result: {_first(exc)}"
        expected = (
            result.get("files")
            if isinstance(result, dict) and isinstance(result.get("files"), dict)
            else None
        )
        if result is not None and expected is None:
            cause, result = "the job returned no manifest with a file list", None
        try:
            fetched = self.store.fetch(record.run_id, job.paths.root, expected=expected)
        except Exception as exc:  # noqa: BLE001 - fsspec backends raise more than OSError
            fetched = FetchResult(
                manifest=None,
                worker=None,
                checked=False,
                problems=[
                    f"fetching the evidence from {self.uri} failed: {type(exc).__name__}: "
                    f"{_first(exc)}"
                ],
            )
        worker = (result if isinstance(result, dict) else None) or fetched.worker or {}
        if worker.get("host"):
            record.host = str(worker["host"])
        record.executor.update({k: worker[k] for k in ("node_id", "worker_pid") if k in worker})
        manifest = result if result is not None else fetched.manifest
        complete, charge = fetched.complete and result is not None, True
        if manifest is not None:
            apply_manifest(record, manifest)
        if result is None:
            record.status = (
                RunStatus.CANCELLED if self.cancelling_since is not None else RunStatus.FAILED
            ).value
            if (
                not fetched.worker and self.cancelling_since is not None
            ):  # never started: nothing to charge
                charge, complete = False, True
                record.error = "cancelled before its Slurm job started"
            else:
                record.error = (
                    cause
                    or f"the evidence in the store is incomplete: {'; '.join(fetched.problems[:3])}"
                )
        elif not complete:
            record.status = RunStatus.FAILED.value
            record.error = (
                f"the evidence in the store is incomplete: {'; '.join(fetched.problems[:3])}"
            )
        if not complete:
            record.notes.append(
                f"evidence incomplete ({'; '.join(fetched.problems[:3]) or cause}): what arrived is "
                "kept for inspection and not taken as a result"
            )
        self._close(job, wall=occupied_seconds(manifest, worker), charge=charge, complete=complete)

    def _close(self, job: _Job, *, wall: float, charge: bool, complete: bool) -> None:

        judge_archive(self.folder, job.record.run_id).unlink(
            missing_ok=True
        )  # a job that never started
        try:
            finish_run(
                self.ws,
                job.record,
                job.paths,
                None,
                wall_seconds=wall,
                charge=charge,
                complete=complete,
            )
        finally:
            job.active.release()
        if job in self.running:
            self.running.remove(job)
        self.done[job.plan.run_id] = job.record
        self.notify(
            job.record.run_id,
            "finished",
            {"status": job.record.status, "headline": job.record.headline},
        )

    def _close_unsubmitted(
        self, record: RunRecord, paths: RunPaths, active: ActiveFlag, exc: BaseException
    ) -> None:

        record.status = RunStatus.FAILED.value
        record.error = f"not submitted: {_first(exc)}"
        try:
            finish_run(self.ws, record, paths, None, wall_seconds=0.0, charge=False, complete=True)
        finally:
            active.release()

    def _finish_unstarted(self, plan: RunPlan) -> None:

        record, paths, active = self._open_run(plan)
        ledger_run_started(self.ws, record)
        record.status = RunStatus.CANCELLED.value
        record.error = "cancelled before it was submitted"
        try:
            finish_run(self.ws, record, paths, None, wall_seconds=0.0, charge=False, complete=True)
        finally:
            active.release()
        self.done[plan.run_id] = record

    def _abandon(self, exc: BaseException) -> None:
        """The request is aborting: finish every open run (``cancelled`` on Ctrl-C, else ``failed``)."""

        interrupted = isinstance(exc, KeyboardInterrupt) or self.cancelling_since is not None
        why = f"{type(exc).__name__}: {_first(exc)}" if str(exc).strip() else type(exc).__name__
        for job in list(self.running):
            job.record.status = (RunStatus.CANCELLED if interrupted else RunStatus.FAILED).value
            job.record.error = f"the driver stopped this request ({why}) before the run was settled"
            job.record.notes.append(
                "evidence incomplete: the driver did not import this run's evidence"
            )
            try:
                self._close(job, wall=occupied_seconds(None, None), charge=True, complete=False)
            except BaseException:  # noqa: BLE001 - at least the status must land
                job.record.ended_at = job.record.ended_at or utcnow()
                job.record.save(job.paths.record)
                if job in self.running:
                    self.running.remove(job)


def _has_result(job: Any) -> bool:
    """Whether submitit's result pickle of ``job`` is there."""
    try:
        return Path(job.paths.result_pickle).exists()
    except Exception:  # noqa: BLE001 - unknown: let submitit's own wait decide
        return True


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, parent pid, start time in clock ticks) of ``pid`` from ``/proc``, or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # after the command name, which may hold spaces
    try:
        return fields[0], int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None


def _processes() -> dict[int, tuple[str, int, int]]:
    """Every process of this machine: pid -> (state, parent pid, start time)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            found[int(entry.name)] = stat
    return found


def _kill_tree(root: int, timeout: float) -> list[int]:
    """SIGKILL ``root`` (a local job's controller) and every process below it, again for any
    started or re-parented meanwhile, until all are gone or ``timeout`` passes; return the pids
    still alive.

    A process is known by its pid and start time, so a pid the kernel hands to an unrelated
    process meanwhile is left alone. The phase's sandbox also dies with its launcher
    (``--die-with-parent``), and the phase's watchdog kills its process group.
    """
    known: dict[int, int] = {}  # pid -> start time
    deadline = time.monotonic() + timeout
    while True:
        table = _processes()
        if root in table and not known:
            known[root] = table[root][2]
        grew = True
        while grew:  # the children of every known process alive now (itself, not a pid reused)
            grew = False
            for pid, (_state, parent, started) in table.items():
                if pid in known or parent not in known or parent not in table:
                    continue
                if table[parent][2] == known[parent]:
                    known[pid] = started
                    grew = True
        left = [
            pid
            for pid, started in known.items()
            if pid in table and table[pid][2] == started and table[pid][0] not in ("Z", "X")
        ]
        if not left or time.monotonic() > deadline:
            return left
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)


def _first(exc: BaseException) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:300]
