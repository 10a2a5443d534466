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
   ``spec["sandbox"]`` (:meth:`evotree.harness.sandbox_spec.SandboxPolicy.to_dict` of the champion's
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
from collections.abc import Callable
from pathlib import Path
from typing import Any


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

    # late, as this module's imports are: its progress actor and clean-up task load the module and
    # need none of what running a run does
    from evotree.harness.executors.node import (
        NodeRun,
        extract_archive,
        plan_from_spec,
        record_failure,
        record_from_spec,
    )
    from evotree.harness.executors.store import WORKER
    from evotree.harness.records import RunStatus, outcome_status

    started = time.monotonic()
    run_id = spec["run_id"]
    node = NodeRun.open(spec, scratch_dirs(run_id), started)
    notify = _Notifier(sink)
    worker = {
        "run_id": run_id,
        "node_id": ray.get_runtime_context().get_node_id(),
        "worker_pid": os.getpid(),
        "host": socket.gethostname(),
        "started_at": time.time(),
        "attempt": spec["attempt"],
    }
    node.store.put_json(run_id, WORKER, worker)
    notify(run_id, "worker", worker)
    plan = plan_from_spec(spec)
    record = record_from_spec(spec, plan)
    syncer = node.syncer()
    cancel = threading.Event()  # set when ray.cancel raises KeyboardInterrupt in this thread

    def provide_judge(target: Path) -> None:
        data = ray.get(judge_box[0])  # fetched only now: the train process group is dead
        extract_archive(data, target)

    try:
        node.take_candidate(Path.cwd() / CANDIDATE_ARCHIVE, "package")
        syncer.start()
        outcome = _cancellable(
            lambda: node.run_phases(
                plan,
                record,
                provide_judge=provide_judge,
                cancel=cancel,
                notify=notify,
                drop_env=("RAY_",),
                cache_name="evotree-ray-cache",  # node-local, shared by its runs
            ),
            cancel,
            name=f"evotree-run-{run_id}",
        )
        record.status = outcome_status(outcome)
        if record.status == RunStatus.CANCELLED.value:
            record.error = record.error or "cancelled (ray.cancel) while running"
    except Exception as exc:  # noqa: BLE001 - reported to the driver in the manifest
        record_failure(record, exc)
    finally:
        syncer.stop.set()
    try:
        manifest = node.finish(record, syncer, {k: worker[k] for k in _SUMMARY_KEYS})
        notify.flush()
        return manifest
    finally:
        node.remove()


#: The worker record's fields the manifest's summary repeats.
_SUMMARY_KEYS = ("node_id", "worker_pid", "host", "started_at", "attempt")


def _cancellable(phases: Callable[[], str], cancel: threading.Event, *, name: str) -> str:
    """Run ``phases`` in a thread; a KeyboardInterrupt here (``ray.cancel``) sets ``cancel``.

    This (main) thread is where ray.cancel raises KeyboardInterrupt, which becomes the cancel
    event: the phase is stopped the way the local executor stops it (SIGTERM, grace, SIGKILL) and
    its costs are still recorded. (An Event, not Thread.join: a KeyboardInterrupt inside join can
    leave the thread marked finished while it still runs, in Python 3.11.) What ``phases``
    raised is raised here.
    """
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def body() -> None:
        try:
            outcome["value"] = phases()
        except BaseException as exc:  # noqa: BLE001 - raised again in the calling thread
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=body, name=name, daemon=True).start()
    while not done.is_set():
        try:
            done.wait(0.2)
        except KeyboardInterrupt:
            cancel.set()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def cleanup_run(run_id: str) -> dict[str, Any]:
    """After a worker died: kill what its phases left running on this node, delete its scratch."""
    from evotree.harness.recovery import kill_run_processes, remove_judge_leftovers

    killed = kill_run_processes(run_id)
    for path in scratch_dirs(run_id):
        shutil.rmtree(path, ignore_errors=True)
    # the judge trees are fresh mkdtemp folders named <run_id>-XXXXXXXX beside the scratch path
    remove_judge_leftovers(scratch_dirs(run_id)[1].parent, run_id)
    return {"run_id": run_id, "killed": killed, "host": socket.gethostname()}
