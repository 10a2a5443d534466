"""What runs inside a Ray worker: one run's two phases, on the node the task landed on.

:func:`run_in_worker` is the body of the Ray task the driver (:mod:`evotree.harness.executors.ray`)
submits per run. The task's ``runtime_env`` ``working_dir`` is a package holding only
``candidate.tar``: the version's exported commit (judge paths excluded), so the worker's
working directory and ``sys.path`` contain nothing importable that could shadow evotree. The
worker then

1. extracts the candidate into a node-local scratch run directory and checks its file count;
2. writes ``worker.json`` to the evidence store (node, pid: what the driver needs to clean up
   after a dead worker);
3. runs the train phase (``RAY_*`` variables dropped from its environment) in the sandbox of
   ``spec["sandbox"]`` (:meth:`evotree.harness.sandbox.SandboxPolicy.to_dict` of the champion's
   ``[sandbox]``; absent: the default policy, a sandbox — a node where none can start fails the
   run with the reason), copying partial evidence to the store every ``sync_seconds``;
4. only once every train process is dead, fetches the champion's judge archive (an object
   the driver put; passed nested in a list so Ray does not fetch it before the task starts),
   extracts it outside the run directory, runs the eval phase there (in its own sandbox, on a
   copy of the candidate made of regular files only) and deletes it;
5. copies all evidence to the store and writes ``manifest.json`` last, then returns it.

It never touches the ledger or the driver's run.json. ``ray.cancel`` raises KeyboardInterrupt
here: the phase's process group is killed and the run reported ``cancelled``.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from evotree.harness.executors.node import Syncer as _Syncer
from evotree.harness.executors.node import extract_archive as _extract

__all__ = ["CANDIDATE_ARCHIVE", "ProgressSink", "cleanup_run", "run_in_worker", "scratch_dirs"]

#: The one file of a candidate package (the runtime_env working_dir).
CANDIDATE_ARCHIVE = "candidate.tar"
_FLUSH_SECONDS = 0.5


def scratch_dirs(run_id: str) -> tuple[Path, Path]:
    """(node-local run directory, judge directory outside it) of ``run_id`` on this node."""
    base = Path(tempfile.gettempdir())
    return base / "evotree-ray" / run_id, base / "evotree-ray-judge" / run_id


class ProgressSink:
    """A Ray actor (created by the driver) that buffers progress events from workers."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, dict[str, Any]]] = []

    def push(self, events: list[tuple[str, str, dict[str, Any]]]) -> None:
        self.events.extend(events)

    def drain(self) -> list[tuple[str, str, dict[str, Any]]]:
        events, self.events = self.events, []
        return events


class _Notifier:
    """Progress callback of the phases: batches events to the driver's sink actor."""

    def __init__(self, sink: Any) -> None:
        self.sink = sink
        self.buffer: list[tuple[str, str, dict[str, Any]]] = []
        self.last = time.monotonic()
        self.lock = threading.Lock()

    def __call__(self, run_id: str, event: str, info: dict[str, Any]) -> None:
        with self.lock:
            self.buffer.append((run_id, event, info))
        if event != "metric" or time.monotonic() - self.last > _FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        with self.lock:
            events, self.buffer = self.buffer, []
        self.last = time.monotonic()
        if events and self.sink is not None:
            try:
                self.sink.push.remote(events)
            except Exception:  # noqa: BLE001, S110 - progress is best effort, never a reason to fail a run
                pass


def run_in_worker(spec: dict[str, Any], judge_box: list[Any], sink: Any) -> dict[str, Any]:
    """Execute one run in this Ray worker; return its manifest (also written to the store)."""
    import ray

    from evotree.harness.budget import RunLimits, run_deadline
    from evotree.harness.executors.phases import train_then_judge
    from evotree.harness.executors.store import WORKER, EvidenceStore
    from evotree.harness.layout import RunPaths
    from evotree.harness.records import RunPlan, RunRecord, RunStatus, outcome_status
    from evotree.harness.sandbox import SandboxPolicy

    started = time.monotonic()
    run_id = spec["run_id"]
    store = EvidenceStore(spec["store_uri"])
    scratch, judge_dir = scratch_dirs(run_id)
    shutil.rmtree(scratch, ignore_errors=True)
    paths = RunPaths(scratch)
    (paths.root / "logs").mkdir(parents=True)
    notify = _Notifier(sink)
    node_id = ray.get_runtime_context().get_node_id()
    worker = {
        "run_id": run_id,
        "node_id": node_id,
        "worker_pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": time.time(),
        "attempt": spec["attempt"],
    }
    store.put_json(run_id, WORKER, worker)
    notify(run_id, "worker", worker)
    plan = RunPlan(
        run_id=run_id,
        version=spec["version"],
        seed=spec["seed"],
        commit=spec["commit"],
        judge_commit=spec["judge_commit"],
        judge_version=spec["judge_version"],
        limits=RunLimits(**spec["limits"]),
        judge_splits=tuple(spec["judge_splits"]),
    )
    record = RunRecord(
        run_id=run_id,
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
    syncer = _Syncer(store, run_id, paths.root, float(spec["sync_seconds"]))
    cancel = threading.Event()  # set when ray.cancel raises KeyboardInterrupt in this thread

    def provide_judge(target: Path) -> None:
        data = ray.get(judge_box[0])  # fetched only now: the train process group is dead
        _extract(data, target)

    outcome: dict[str, Any] = {}
    done = threading.Event()

    def phases() -> None:
        try:
            outcome["value"] = train_then_judge(
                plan,
                paths,
                record,
                train_command=spec["train_command"],
                eval_command=spec["eval_command"],
                train_timeout=spec["train_timeout"],
                eval_timeout=spec["eval_timeout"],
                deadline=run_deadline(spec["limits"], started)[
                    0
                ],  # its wall limit or the search clock's end
                judge_dir=judge_dir,
                provide_judge=provide_judge,
                cancel=cancel,
                notify=notify,
                drop_env=("RAY_",),
                reaper=True,
                sandbox=SandboxPolicy.from_dict(spec.get("sandbox")),
                prepare_command=spec.get("prepare_command") or "",
                cache_dir=scratch.parent.parent
                / "evotree-ray-cache",  # node-local, shared by its runs
            )
        except BaseException as exc:  # noqa: BLE001 - reported to the driver in the manifest
            outcome["error"] = exc
        finally:
            done.set()

    try:
        count = _extract(Path.cwd() / CANDIDATE_ARCHIVE, paths.candidate)
        if count != spec["candidate_files"]:
            raise RuntimeError(
                f"the candidate package has {count} files, the exported commit "
                f"{spec['candidate_files']}"
            )
        syncer.start()
        # The phases run in a thread; this (main) thread is where ray.cancel raises
        # KeyboardInterrupt, which becomes the cancel event: the phase is stopped the way the
        # local executor stops it (SIGTERM, grace, SIGKILL) and its costs are still recorded.
        # (An Event, not Thread.join: a KeyboardInterrupt inside join can leave the thread
        # marked finished while it still runs, in Python 3.11.)
        threading.Thread(target=phases, name=f"evotree-run-{run_id}", daemon=True).start()
        while not done.is_set():
            try:
                done.wait(0.2)
            except KeyboardInterrupt:
                cancel.set()
        if "error" in outcome:
            raise outcome["error"]
        record.status = outcome_status(outcome["value"])
        if record.status == RunStatus.CANCELLED.value:
            record.error = record.error or "cancelled (ray.cancel) while running"
    except Exception as exc:  # noqa: BLE001 - reported to the driver in the manifest
        record.status = RunStatus.FAILED.value
        record.error = record.error or f"{type(exc).__name__}: {exc}"
    finally:
        syncer.stop.set()
    try:
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
            "wall_seconds": round(time.monotonic() - started, 3),
            **{k: worker[k] for k in ("node_id", "worker_pid", "host", "started_at", "attempt")},
        }
        manifest = store.finish(run_id, paths.root, summary)
        notify.flush()
        return manifest
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(judge_dir, ignore_errors=True)


def cleanup_run(run_id: str) -> dict[str, Any]:
    """After a worker died: kill what its phases left running on this node, delete its scratch."""
    from evotree.harness.recovery import kill_run_processes, remove_judge_leftovers

    killed = kill_run_processes(run_id)
    for path in scratch_dirs(run_id):
        shutil.rmtree(path, ignore_errors=True)
    # the judge trees are fresh mkdtemp folders named <run_id>-XXXXXXXX beside the scratch path
    remove_judge_leftovers(scratch_dirs(run_id)[1].parent, run_id)
    return {"run_id": run_id, "killed": killed, "host": socket.gethostname()}
