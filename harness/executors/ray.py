"""The ``ray`` executor: each run is a Ray task; this process stays the driver.

The driver (the ``evotree run`` process) keeps everything that decides or records: planning
and budgets (done before it is called), the run directory with ``run.json`` and its ``.active``
flock, the ledger, and the judging policy. Per run it submits one task
(:func:`evotree.harness.executors.ray_worker.run_in_worker`) with

- the resources of ``[executor]`` (``cpus``, ``gpus``, ``memory_gb``) and no Ray retries (the
  driver retries, so every attempt is visible);
- ``runtime_env={"working_dir": gcs://_ray_pkg_<sha>.zip}``: a package holding only
  ``candidate.tar``, the version's exported commit without the judge paths (never the live
  worktree). It is content-addressed, uploaded once per commit and cached by Ray on each node;
- the judge tree as an archive in the object store (the champion's commit with the judge
  store's commit the plan recorded overlaid on its judge paths), passed nested in a list: the
  worker fetches it only after the train phase's process group is dead. The judge is never in
  the candidate's runtime_env.

Workers write evidence to the evidence store (:mod:`evotree.harness.executors.store`); when a task ends
the driver imports it into ``<runs_dir>/<run_id>`` and finishes the run as the local executor
does (compaction, headline, usage, ``run.finished``). Faults:

- the worker or node dies (``WorkerCrashedError``, ``NodeDiedError``, ...): the attempt is
  finished ``failed`` with the cause, what it had copied to the store is kept but marked
  incomplete (no headline), its leftover processes on the node are killed by a clean-up task,
  and a new attempt ``<run_id>-r<k>`` is submitted, up to ``[executor].max_retries``;
- the run's own code fails: ``failed``, not retried (it would fail again);
- a manifest missing or not matching the files: ``failed``, evidence incomplete. The files
  are checked against the manifest the task *returned* through Ray, never the store's
  ``manifest.json`` (train code may be able to write to a shared store); the store copy
  serves only runs that never returned, which are incomplete anyway;
- the store failing while the driver fetches (any backend error): ``failed``, incomplete, the
  error recorded; an error that aborts the request still finishes every open attempt
  (``failed``, or ``cancelled`` on Ctrl-C), so no run is left ``running``;
- cancellation (Ctrl-C): ``ray.cancel`` on every task (KeyboardInterrupt in the worker, which
  stops its phase and reports ``cancelled``), forced after a grace period; queued tasks are
  removed and their runs marked ``cancelled`` without charge.
"""

from __future__ import annotations

import hashlib
import io
import logging
import socket
import tarfile
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.ledger import utcnow
from evotree.harness.executors.errors import ExecutorError
from evotree.harness.executors.phases import TERM_GRACE_SECONDS
from evotree.harness.layout import RunPaths
from evotree.harness.records import runs_dir
from evotree.harness.executors.ray_worker import ProgressSink
from evotree.harness.finish import ledger_run_started
from evotree.harness.records import RunStatus
from evotree.harness.budget import Usage
from evotree.harness.budget import committed
from evotree.harness.budget import trusted_usage
from evotree.harness.reservations import counted_reservations
from evotree.harness.finish import finish_run
from evotree.harness.executors.ray_worker import cleanup_run
from evotree.harness.executors.ray_worker import run_in_worker
from evotree.harness.executors.run_dir import ActiveFlag, make_run_dir, open_record
from evotree.harness.executors.node import apply_manifest, occupied_seconds, run_spec
from evotree.harness.judge_store import provide_judge_tree
from evotree.harness.export import export_tree

if TYPE_CHECKING:
    from evotree.core.config_execution import ExecutorSection
    from evotree.core.workspace import Workspace
    from evotree.harness.executors.store import EvidenceStore, FetchResult
    from evotree.harness.records import ProgressFn, RunPlan, RunRecord

__all__ = ["RayExecutor", "connect", "evidence_uri"]

#: Seconds a cancelled task gets to stop its phase and report, before it is killed.
CANCEL_GRACE_SECONDS = TERM_GRACE_SECONDS + 10.0
_WAIT_SECONDS = 0.25
_CLEANUP_SECONDS = 20.0


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ExecutorError(
            "the ray executor needs Ray, which is not installed",
            fix="pip install 'evotree[ray]' (on the driver and every node), "
            "or run with --executor local",
        ) from None
    return ray


def connect(address: str) -> bool:
    """Connect to the Ray cluster at ``address`` ('' starts a local one); True if we started it.

    A process already connected (``ray.is_initialized()``) is reused as it is.
    """
    ray = _import_ray()
    if ray.is_initialized():
        return False
    _probe(address)
    try:
        ray.init(
            address=address or None,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
            configure_logging=True,
        )
    except (ConnectionError, TimeoutError, RuntimeError, ValueError) as exc:
        raise ExecutorError(
            f"cannot connect to the Ray cluster at {address or '(a new local instance)'}: {exc}",
            fix="start the head (`ray start --head`) and pass its address with --address "
            "(or [executor].address), or pass --address '' to start a local Ray",
        ) from None
    return True


def _probe(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``host:port`` nobody listens on (``ray.init`` would retry for minutes)."""
    if not address or "://" in address or address == "auto" or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            return
    except (OSError, ValueError) as exc:
        reason = (
            exc.strerror
            if isinstance(exc, OSError) and exc.strerror
            else str(exc) or type(exc).__name__
        )
        raise ExecutorError(
            f"cannot reach the Ray cluster at {address}: {reason}",
            fix="start the head there (`ray start --head --port PORT`), check the address and the "
            "firewall, or pass --address '' to start a local Ray",
        ) from None


def evidence_uri(ws: Workspace, section: ExecutorSection) -> str:
    """The store URI of ``[executor].evidence_uri``: '' = .evotree/store, relative = from the root."""
    from evotree.harness.executors.store import EvidenceStore

    uri = section.evidence_uri
    if not uri:
        return str(ws.state_dir / "store")
    if EvidenceStore.is_url(uri):
        return uri
    path = Path(uri).expanduser()
    return str(path if path.is_absolute() else ws.root / path)


@dataclass
class _Attempt:
    plan: RunPlan
    record: RunRecord
    paths: RunPaths
    active: ActiveFlag
    attempt: int
    submitted: float = field(default_factory=time.monotonic)
    worker: dict[str, Any] = field(default_factory=dict)


class RayExecutor:
    """Runs each planned run as a Ray task with the resources of ``[executor]``."""

    kind = "ray"

    def __init__(self, section: ExecutorSection, *, address: str | None = None) -> None:
        self.section = section
        self.address = section.address if address is None else address

    def execute(
        self,
        ws: Workspace,
        plans: list[RunPlan],
        *,
        progress: ProgressFn | None,
        cancel: threading.Event,
    ) -> list[RunRecord]:
        """Run every plan on the cluster; return every attempt's final record, in plan order."""
        started_here = connect(self.address)
        try:
            return _Driver(ws, self.section, self.address, plans, progress, cancel).run()
        finally:
            if started_here:
                _import_ray().shutdown()


class _Driver:
    """One ``evotree run`` request on Ray: submits, watches, imports evidence, retries, cancels."""

    def __init__(
        self,
        ws: Workspace,
        section: ExecutorSection,
        address: str,
        plans: list[RunPlan],
        progress: ProgressFn | None,
        cancel: threading.Event,
    ) -> None:
        from evotree.harness.executors.store import EvidenceStore

        self.ray = _import_ray()
        self.ws, self.section, self.address, self.plans = ws, section, address, plans
        self.notify = progress or (lambda *_: None)
        self.cancel = cancel
        self.base = runs_dir(ws)
        self.uri = evidence_uri(ws, section)
        self.store: EvidenceStore = EvidenceStore(self.uri)
        self.packages: dict[str, tuple[str, int]] = {}
        self.judges: dict[str, Any] = {}
        self.running: dict[Any, _Attempt] = {}
        self.done: dict[str, list[RunRecord]] = {p.run_id: [] for p in plans}
        self.origin: dict[str, str] = {}  # attempt run_id -> the plan's run_id
        self.cancelling_since: float | None = None
        self.forced = False
        longest = max((p.limits.wall_seconds for p in plans), default=3600.0)
        self.pin_seconds = int(longest * (section.max_retries + 1) + 3600)

    # ------------------------------------------------------------------ main loop
    def run(self) -> list[RunRecord]:

        self._check_feasible()
        self.sink = self.ray.remote(num_cpus=0)(ProgressSink).remote()
        self.task = self.ray.remote(_task_body())
        try:
            for plan in self.plans:
                if self.cancel.is_set():
                    self._finish_unstarted(plan, attempt=0)
                else:
                    self._submit(plan, attempt=0)
            while self.running:
                ready, _ = self.ray.wait(
                    list(self.running), num_returns=len(self.running), timeout=_WAIT_SECONDS
                )
                self._drain()
                self._check_cancel()
                for ref in ready:
                    self._settle(ref)
            self._drain()
        except BaseException as exc:
            for ref in list(self.running):  # a driver bug must not leave tasks running
                try:
                    self.ray.cancel(ref, force=True)
                except Exception:  # noqa: BLE001, S110 - best effort: the runs are closed below
                    pass
            self._abandon(exc)
            raise
        finally:
            self.ray.kill(self.sink)
        return [record for plan in self.plans for record in self.done[plan.run_id]]

    def _check_feasible(self) -> None:
        """Refuse, before anything starts, a run no node of the cluster can hold (Ray would
        keep such a task pending forever, silently)."""
        wanted = {
            "CPU": self.section.cpus,
            "GPU": self.section.gpus,
            "memory": self.section.memory_gb * 2**30,
        }
        wanted = {k: v for k, v in wanted.items() if v > 0}
        nodes = [n.get("Resources", {}) for n in self.ray.nodes() if n.get("Alive")]
        if not wanted or any(all(node.get(k, 0) >= v for k, v in wanted.items()) for node in nodes):
            return
        largest = {k: max((node.get(k, 0) for node in nodes), default=0) for k in wanted}
        need = ", ".join(
            f"{k} {v:g}" if k != "memory" else f"memory {v / 2**30:g} GiB"
            for k, v in wanted.items()
        )
        have = ", ".join(
            f"{k} {v:g}" if k != "memory" else f"memory {v / 2**30:.1f} GiB"
            for k, v in largest.items()
        )
        raise ExecutorError(
            f"no node of the Ray cluster can hold one run: each run asks for {need}; the largest "
            f"node has {have} ({len(nodes)} node(s) alive)",
            fix="lower [executor].cpus / gpus / memory_gb on the champion, or add (or let the "
            "autoscaler start) a node that large before running",
        )

    def _check_cancel(self) -> None:
        if not self.cancel.is_set():
            return
        now = time.monotonic()
        if self.cancelling_since is None:
            self.cancelling_since = now
            for ref in self.running:
                self.ray.cancel(ref, force=False)
        elif not self.forced and now - self.cancelling_since > CANCEL_GRACE_SECONDS:
            self.forced = True
            for ref in self.running:
                self.ray.cancel(ref, force=True)

    def _drain(self) -> None:
        try:
            events = self.ray.get(self.sink.drain.remote(), timeout=10)
        except Exception:  # noqa: BLE001 - progress is best effort
            return
        by_id = {a.record.run_id: a for a in self.running.values()}
        for run_id, event, info in events:
            if event == "worker":
                if run_id in by_id:
                    by_id[run_id].worker = info
                continue
            self.notify(run_id, event, info)

    # ------------------------------------------------------------------ submitting
    def _open_run(self, plan: RunPlan, run_id: str, attempt: int) -> _Attempt:
        paths = make_run_dir(RunPaths(self.base / run_id))
        active = ActiveFlag(self.base / ".active" / run_id)
        executor = {
            "kind": "ray",
            "address": self.address or "local",
            "attempt": attempt,
            "retry_of": None,
            "evidence_uri": self.uri,
            "driver_host": socket.gethostname(),
        }
        record = open_record(plan, run_id, self.ws.config, executor)
        record.save(paths.record)
        return _Attempt(plan=plan, record=record, paths=paths, active=active, attempt=attempt)

    def _submit(self, plan: RunPlan, *, attempt: int, retry_of: str | None = None) -> None:
        run_id = plan.run_id if attempt == 0 else f"{plan.run_id}-r{attempt}"
        package, files = self._package(plan.commit)
        judge = self._judge(plan.judge_commit, plan.judge_data_commit)
        att = self._open_run(plan, run_id, attempt)
        att.record.executor["retry_of"] = retry_of
        att.record.save(att.paths.record)
        self.origin[run_id] = plan.run_id
        ledger_run_started(self.ws, att.record)
        self.notify(
            run_id,
            "started",
            {"version": plan.version, "seed": plan.seed, "max_steps": plan.limits.max_steps},
        )
        spec = run_spec(
            self.ws,
            plan,
            run_id,
            store_uri=self.uri,
            sync_seconds=self.section.sync_seconds,
            candidate_files=files,
            attempt=attempt,
        )
        options: dict[str, Any] = {
            "num_cpus": self.section.cpus,
            "num_gpus": self.section.gpus,
            "max_retries": 0,
            "retry_exceptions": False,
            "runtime_env": {"working_dir": package},
        }
        if self.section.memory_gb > 0:
            options["memory"] = int(self.section.memory_gb * 2**30)
        ref = self.task.options(**options).remote(spec, [judge], self.sink)
        self.running[ref] = att

    def _package(self, commit: str) -> tuple[str, int]:
        """The runtime_env package of ``commit`` (judge paths excluded): (gcs URI, file count)."""
        if commit in self.packages:
            return self.packages[commit]
        from ray._private.runtime_env.packaging import (
            GCS_STORAGE_MAX_SIZE,
            package_exists,
            pin_runtime_env_uri,
            upload_package_to_gcs,
        )

        tar_bytes, files = _tar_commit(
            self.ws, commit, exclude=list(self.ws.config.eval.judge_paths)
        )
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            info = zipfile.ZipInfo("candidate.tar", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            archive.writestr(info, tar_bytes)
        data = buffer.getvalue()
        if len(data) >= GCS_STORAGE_MAX_SIZE:
            raise ExecutorError(
                f"the exported commit {commit[:10]} is {len(data) / 2**20:.0f} MiB zipped, over Ray's "
                f"package limit of {GCS_STORAGE_MAX_SIZE / 2**20:.0f} MiB",
                fix="keep data and checkpoints out of the version's commit (download them in the train "
                "command) or raise RAY_max_grpc_message_size / the GCS package limit on the cluster",
            )
        uri = f"gcs://_ray_pkg_{hashlib.sha256(data).hexdigest()[:32]}.zip"
        if not package_exists(uri):
            upload_package_to_gcs(uri, data)
        pin_runtime_env_uri(uri, expiration_s=self.pin_seconds)
        self.packages[commit] = (uri, files)
        return self.packages[commit]

    def _judge(self, commit: str, data_commit: str | None = None) -> Any:
        """The judge tree as an object-store archive: the champion's commit with the judge store's
        commit ``data_commit`` overlaid on its judge paths (without one: the champion's whole tree)."""
        key = f"{commit}+{data_commit}"
        if key not in self.judges:
            data, _ = _tar_judge(self.ws, commit, data_commit)
            self.judges[key] = self.ray.put(data)
        return self.judges[key]

    # ------------------------------------------------------------------ settling
    def _settle(self, ref: Any) -> None:

        att = self.running[ref]  # removed by _close, once the run is finished
        exc_types = self.ray.exceptions
        result: dict[str, Any] | None = None
        kind, cause = "returned", None
        try:
            result = self.ray.get(ref)
        except exc_types.TaskCancelledError:
            kind = "cancelled"
        except exc_types.RuntimeEnvSetupError as exc:
            kind, cause = (
                "failed",
                f"the Ray runtime_env (the candidate package) could not be set up: {_first(exc)}",
            )
        except (
            exc_types.RayTaskError
        ) as exc:  # (a KeyboardInterrupt outside the phases, when cancelling)
            kind = "cancelled" if self.cancelling_since is not None else "failed"
            cause = f"the harness failed in the Ray worker: {_first(exc)}"
        except exc_types.RayError as exc:
            kind = "cancelled" if self.cancelling_since is not None else "lost"
            cause = f"the Ray worker running this run died ({type(exc).__name__}: {_first(exc)})"
        fetched, manifest = self._fetch(att, result if kind == "returned" else None)
        # Who ran it: from the returned manifest, else the worker's own report through Ray
        # (the sink), and only else the store's worker.json (which the candidate could rewrite).
        worker = (
            (
                {k: manifest[k] for k in ("node_id", "worker_pid", "host") if k in manifest}
                if result is not None and manifest is result
                else {}
            )
            or att.worker
            or fetched.worker
            or {}
        )
        record = att.record
        if worker:
            record.host = str(worker.get("host", record.host))
            record.executor.update({k: worker[k] for k in ("node_id", "worker_pid") if k in worker})
        complete, charge = fetched.complete, True
        if kind == "returned" and manifest is not None and complete:
            apply_manifest(record, manifest)
        elif kind == "cancelled":
            if manifest is not None:
                apply_manifest(record, manifest)
            record.status = RunStatus.CANCELLED.value
            if not worker:  # never started: nothing to charge, no evidence to be incomplete
                charge, complete = False, True
                record.error = "cancelled before a Ray worker started it"
            elif manifest is None:
                record.error = record.error or (
                    cause or "cancelled; the worker did not report back"
                )
        else:
            if manifest is not None:
                apply_manifest(record, manifest)
            record.status = RunStatus.FAILED.value
            problems = "; ".join(fetched.problems[:3])
            record.error = cause or f"the evidence in the store is incomplete: {problems}"
            complete = False
        refused = self._no_retry_reason(att) if kind == "lost" else "not lost"
        retry = refused is None
        if kind == "lost":
            self._cleanup(record, wait=retry)
            if retry:
                record.error = f"{record.error}; retried (attempt {att.attempt + 1} of {self.section.max_retries})"
            elif self.section.max_retries:
                record.error = f"{record.error}; not retried: {refused}"
        if not complete:
            record.notes.append(
                f"evidence incomplete ({'; '.join(fetched.problems[:3])}): what arrived is "
                "kept for inspection and not taken as a result"
            )
        self._close(att, wall=occupied_seconds(manifest, worker), charge=charge, complete=complete)
        if retry:
            self._submit(att.plan, attempt=att.attempt + 1, retry_of=record.run_id)

    def _fetch(self, att: _Attempt, result: Any) -> tuple[FetchResult, dict[str, Any] | None]:
        """Import the attempt's evidence; (what arrived, the manifest to trust or None).

        When the task returned, its return value is the manifest and the files are checked
        against *its* sizes and sha256; the store's ``manifest.json`` is ignored (train code
        may write to a shared store and rewrite evidence and manifest together). The store's
        copy is used only when nothing was returned (lost or crashed: incomplete anyway).
        A fetch that fails (any error of the store's backend) gives an incomplete result with
        the problem recorded, never an aborted request.
        """
        from evotree.harness.executors.store import FetchResult

        expected: dict[str, Any] | None = None
        problems: list[str] = []
        if result is not None:
            if isinstance(result, dict) and isinstance(result.get("files"), dict):
                expected = result["files"]
            else:
                problems.append("the worker returned no manifest with a file list")
                expected, result = {}, None
        try:
            fetched = self.store.fetch(att.record.run_id, att.paths.root, expected=expected)
        except Exception as exc:  # noqa: BLE001 - fsspec backends raise more than OSError
            problem = (
                f"fetching the evidence from {self.uri} failed: {type(exc).__name__}: {_first(exc)}"
            )
            fetched = FetchResult(manifest=None, worker=None, checked=False, problems=[problem])
        fetched.problems[:0] = problems
        if problems:
            fetched.checked = False
        return fetched, (result if result is not None else fetched.manifest)

    def _no_retry_reason(self, att: _Attempt) -> str | None:
        """Why a lost attempt is not retried, or None when it is.

        A retry replaces the lost run with the same per-run limits; it is refused when the
        request was cancelled, ``max_retries`` is reached, or one more run of the version would
        exceed ``budget.max_runs_per_version``: the version's charged runs plus every live
        reservation of it in the ledger (the lost attempt's own, this request's queued and running
        runs, and other processes' requests) plus the retry.
        """
        if self.cancelling_since is not None:
            return "the request was cancelled"
        if att.attempt >= self.section.max_retries:
            return f"max_retries = {self.section.max_retries} reached"

        # trusted usage and this workspace's reservations only: a fetched ledger's cached
        # ``usage`` or planted reservations never refuse (or allow) a retry
        snapshot = self.ws.ledger.snapshot()
        used = Usage.from_dict(trusted_usage(self.ws, snapshot).version(att.plan.version)).runs
        reserved = committed(
            counted_reservations(self.ws, snapshot.meta), version=att.plan.version
        )["runs"]
        limit = self.ws.config.budget.max_runs_per_version
        if used + reserved + 1 > limit:
            return (
                f"budget.max_runs_per_version = {limit} would be exceeded ({used} charged, {reserved} "
                "reserved including this attempt, and its retry)"
            )
        return None

    def _close(self, att: _Attempt, *, wall: float, charge: bool, complete: bool) -> None:

        try:
            finish_run(
                self.ws,
                att.record,
                att.paths,
                None,
                wall_seconds=wall,
                charge=charge,
                complete=complete,
            )
        finally:
            att.active.release()
        for ref in [r for r, a in self.running.items() if a is att]:
            del self.running[ref]
        self.done[self.origin[att.record.run_id]].append(att.record)
        self.notify(
            att.record.run_id,
            "finished",
            {"status": att.record.status, "headline": att.record.headline},
        )

    def _abandon(self, exc: BaseException) -> None:
        """The request is aborting: finish every attempt still open, so no run stays ``running``.

        Each is ``cancelled`` (Ctrl-C) or ``failed`` with the cause, charged (it may have run)
        and marked incomplete. A run that cannot be finished normally still gets its status
        written to run.json.
        """

        interrupted = isinstance(exc, KeyboardInterrupt) or self.cancelling_since is not None
        why = f"{type(exc).__name__}: {_first(exc)}" if str(exc).strip() else type(exc).__name__
        for att in list(self.running.values()):
            record = att.record
            record.status = (RunStatus.CANCELLED if interrupted else RunStatus.FAILED).value
            record.error = f"the driver stopped this request ({why}) before the run was settled"
            record.notes.append(
                "evidence incomplete: the driver did not import this run's evidence"
            )
            try:
                self._close(
                    att, wall=occupied_seconds(None, att.worker), charge=True, complete=False
                )
            except BaseException as close_exc:  # noqa: BLE001 - at least the status must land
                record.notes.append(f"finishing it failed: {type(close_exc).__name__}")
                record.evidence["complete"] = False
                record.headline = None
                record.ended_at = record.ended_at or utcnow()
                try:
                    record.save(att.paths.record)
                finally:
                    for ref in [r for r, a in self.running.items() if a is att]:
                        del self.running[ref]

    def _finish_unstarted(self, plan: RunPlan, *, attempt: int) -> None:

        att = self._open_run(plan, plan.run_id, attempt)
        self.origin[plan.run_id] = plan.run_id
        ledger_run_started(self.ws, att.record)
        att.record.status = RunStatus.CANCELLED.value
        att.record.error = "cancelled before it was submitted"
        self._close(att, wall=0.0, charge=False, complete=True)

    def _cleanup(self, record: RunRecord, *, wait: bool) -> None:
        """Kill what a dead worker's phases left on its node and delete its scratch directory."""
        node_id = record.executor.get("node_id")
        if not node_id:
            record.notes.append("the worker's node is unknown: nothing was cleaned up on it")
            return
        try:
            alive = any(n.get("NodeID") == node_id and n.get("Alive") for n in self.ray.nodes())
        except Exception:  # noqa: BLE001 - unknown: try the clean-up anyway
            alive = True
        if not alive:
            record.notes.append("the worker's node is gone: nothing left to clean up on it")
            return
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        task = self.ray.remote(cleanup_run).options(
            num_cpus=0,
            max_retries=0,
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False),
        )
        ref = task.remote(record.run_id)
        if not wait:
            return
        try:
            done = self.ray.get(ref, timeout=_CLEANUP_SECONDS)
            if done.get("killed"):
                record.notes.append(
                    f"killed {len(done['killed'])} process(es) the dead worker left on "
                    f"{done.get('host')}"
                )
        except Exception as exc:  # noqa: BLE001 - a dead node has nothing left to clean
            record.notes.append(
                f"clean-up on the worker's node did not complete: {type(exc).__name__}"
            )


def _task_body() -> Any:

    return run_in_worker


def _first(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _tar_judge(ws: Workspace, commit: str, data_commit: str | None) -> tuple[bytes, int]:
    """A deterministic gzipped tar of the judge tree (:func:`evotree.harness.judge_store.provide_judge_tree`)."""

    with tempfile.TemporaryDirectory(prefix="evotree-judge-") as tmp:
        root = Path(tmp) / "tree"
        count = provide_judge_tree(
            ws.git.repo, commit, data_commit, ws.config.eval.judge_paths, root
        )
        return _tar_directory(root, compress=True), count


def _tar_commit(
    ws: Workspace, commit: str, *, exclude: list[str], compress: bool = False
) -> tuple[bytes, int]:
    """A deterministic tar of ``commit``'s exported tree; (bytes, number of files and links)."""

    with tempfile.TemporaryDirectory(prefix="evotree-export-") as tmp:
        root = Path(tmp) / "tree"
        count = export_tree(ws.git.repo, commit, root, exclude=exclude)
        return _tar_directory(root, compress=compress), count


def _tar_directory(root: Path, *, compress: bool) -> bytes:
    """A deterministic tar of the files under ``root`` (no owners, times zeroed)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if compress else "w") as archive:
        for path in sorted(root.rglob("*")):
            info = archive.gettarinfo(str(path), arcname=path.relative_to(root).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if info.isfile():
                with open(path, "rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)
    return buffer.getvalue()
