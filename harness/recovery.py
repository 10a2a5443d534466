"""Crash recovery and the judge-folder janitor.

Each run holds an ``flock`` on ``<runs_dir>/.active/<run_id>`` while it lives; the kernel frees
it if the driving process dies (even by SIGKILL). :func:`recover_crashed_runs`, called by every
evotree command, finds such runs, kills their leftover processes (:func:`kill_run_processes`),
deletes the judge folders a driver killed during the judge phase left behind (they hold hidden
answers: :func:`remove_judge_leftovers`), and finishes them ``crashed``
(:func:`evotree.harness.finish.finish_run`); it settles dead owners' reservations too.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import stat as st
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.core.ledger import utcnow
from evotree.core.proc import owner_is_dead
from evotree.core.workspace import Workspace
from evotree.harness.finish import finish_run, ledger_run_finished
from evotree.harness.layout import ENV_RUN_ID, RunPaths
from evotree.harness.manifest import evidence_manifest
from evotree.harness.records import RunRecord, RunStatus, runs_dir
from evotree.harness.reservations import RESERVATIONS, release_dead_reservations

__all__ = [
    "recover_crashed_runs",
    "run_is_live",
    "judge_root",
    "remove_judge_leftovers",
    "kill_run_processes",
]


def recover_crashed_runs(ws: Workspace) -> list[str]:
    """Find runs whose driving process died (its flock is free), mark them ``crashed``.

    What they recorded is kept and compacted; they are charged up to their last evidence. Their
    leftover processes are killed first, then the judge folders a driver killed during the judge
    phase could not delete (they hold the hidden answers) are removed, and so are such folders
    of runs no longer live (:func:`remove_judge_leftovers`). Reservations whose owner died are
    settled too (:func:`release_dead_reservations`; a started run whose driver died and whose
    ``.active`` marker is gone is finished ``crashed``). Returns the ids of the runs marked.
    """
    active = runs_dir(ws) / ".active"
    if not active.is_dir():
        remove_judge_leftovers(judge_root(ws), active=active)
        return _settle_reservations(ws, active)
    marked = []
    for marker in sorted(active.iterdir()):
        try:
            handle = open(marker, "a+")
        except OSError:
            continue
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its driver is alive
            if not marker.exists():
                continue  # finished (or recovered) while we waited
            paths = RunPaths(runs_dir(ws) / marker.name)
            if paths.record.exists():
                record = RunRecord.load(paths.record)
                if record.status == RunStatus.RUNNING.value:
                    kill_run_processes(record.run_id)
                    # a driver killed during the judge phase left the judge's tree (hidden answers)
                    removed = remove_judge_leftovers(judge_root(ws), record.run_id)
                    if removed:
                        record.notes.append(
                            f"removed {len(removed)} judge folder(s) the dead driver left: "
                            + ", ".join(removed)
                        )
                    record.status = RunStatus.CRASHED.value
                    record.error = (
                        "the process driving this run died (killed or crashed) before it "
                        "finished; what it recorded is kept"
                    )
                    complete = True
                    if record.executor.get("kind") == "ray":  # its evidence is in the store
                        complete = False
                        _import_remote_evidence(record, paths)
                    last = max(
                        (p.stat().st_mtime for p in paths.root.rglob("*") if p.is_file()),
                        default=time.time(),
                    )
                    started = datetime.fromisoformat(record.started_at).timestamp()
                    finish_run(
                        ws,
                        record,
                        paths,
                        None,
                        wall_seconds=max(0.0, last - started),
                        complete=complete,
                    )
                    marked.append(record.run_id)
            marker.unlink(missing_ok=True)
        finally:
            handle.close()
    # judge folders of runs that are no longer live (a crash recovered before this clean-up existed)
    remove_judge_leftovers(judge_root(ws), active=active)
    return marked + _settle_reservations(ws, active)


def _settle_reservations(ws: Workspace, active: Path) -> list[str]:
    """Release dead owners' unstarted reservations; finish (``crashed``) their started runs that
    have no ``.active`` marker left to recover them by. Returns the ids of the runs finished."""
    try:
        release_dead_reservations(ws)
        reservations = ws.ledger.meta().get(RESERVATIONS) or {}
    except EvotreeError:
        return []  # recovery never blocks the command that called it
    marked = []
    for run_id, entry in reservations.items():
        if (
            not entry.get("started")
            or os.path.lexists(active / run_id)
            or not owner_is_dead(entry.get("owner") or {})
        ):
            continue
        paths = RunPaths(runs_dir(ws) / run_id)
        try:
            record = RunRecord.load(paths.record)
        except (OSError, ValueError, TypeError):
            record = None
        if record is not None and record.status != RunStatus.RUNNING.value and record.ended_at:
            # finished on disk, killed before its run.finished landed: record it as it is
            try:
                ledger_run_finished(
                    ws, record, evidence_manifest(paths.root, record.to_dict()), reserved=True
                )
            except EvotreeError:
                continue
            marked.append(run_id)
            continue
        if record is None:
            record = RunRecord(
                run_id=run_id,
                version=str(entry.get("version")),
                seed=int(entry.get("seed") or 0),
                status=RunStatus.RUNNING.value,
                commit=str(entry.get("commit") or ""),
                judge_commit=None,
                judge_version=None,
                train_command="",
                eval_command="",
                started_at=str(entry.get("started")),
                limits=dict(entry.get("limits") or {}),
            )
            record.notes.append("its run directory is gone: finished from its reservation")
        record.status = RunStatus.CRASHED.value
        record.error = (
            "the process driving this run died before it finished, and left no .active marker "
            "to recover it by"
        )
        record.ended_at = utcnow()
        record.headline = None
        record.usage = {
            "runs": 1
        }  # what it spent beyond the run is unknown: it is charged as a run
        try:
            ledger_run_finished(ws, record, reserved=True)
            if paths.root.is_dir():
                record.save(paths.record)
        except (EvotreeError, OSError):
            continue
        marked.append(run_id)
    return marked


def run_is_live(ws: Workspace, run_id: str) -> bool:
    """True while a process drives ``run_id`` on this machine (its ``.active`` flock is held)."""
    marker = runs_dir(ws) / ".active" / run_id
    try:
        fd = os.open(marker, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing releases the lock if we took it
    return False


def judge_root(ws: Workspace) -> Path:
    """Where the local executor writes judge trees: ``<runs_dir>/../judge`` (outside every run)."""
    return runs_dir(ws).parent / "judge"


#: Folders the judge phase makes with ``tempfile.mkdtemp(prefix=f"{run_id}-")`` (its tree) or
#: ``prefix=f"{run_id}-<word>-"`` (e.g. the candidate's copy): eight characters of mkdtemp's
#: alphabet at the end. A retry's folders (``<id>-r1-XXXXXXXX``) are not ``<id>``'s.
_MKDTEMP_SUFFIX = re.compile(r"^[a-z0-9_]{8}$")
_JUDGE_REST = re.compile(r"^(?:[a-z]+-)?[a-z0-9_]{8}$")


def _judge_owners(name: str) -> list[str]:
    """The run ids a judge folder named ``name`` may belong to (none: not a judge folder)."""
    head, dash, suffix = name.rpartition("-")
    if not dash or not head or not _MKDTEMP_SUFFIX.match(suffix):
        return []
    owners = [head]
    stem, dash, word = head.rpartition("-")
    if dash and stem and word.isalpha() and word.islower():
        owners.append(
            stem
        )  # <run_id>-<word>-XXXXXXXX (or a run id ending in letters: both are checked)
    return owners


def remove_judge_leftovers(
    root: Path, run_id: str | None = None, *, active: Path | None = None
) -> list[str]:
    """Delete judge folders (``<root>/<run_id>-XXXXXXXX``) that a killed driver could not delete.

    With ``run_id``: that run's (call it once the run's processes are dead). Without: every
    such folder whose run has no ``.active`` marker any more (its driver is gone and the run
    was finished or recovered: leftovers of a crash before this clean-up existed; ``active`` is
    the runs directory's ``.active`` folder). Links are removed, never followed; a live run's
    folder (its marker exists) is never touched. Returns the names removed.
    """
    if not root.is_dir() or (run_id is None and active is None):
        return []
    removed = []
    for entry in sorted(root.iterdir()):
        if run_id is not None:
            if not (
                entry.name.startswith(run_id + "-")
                and _JUDGE_REST.match(entry.name[len(run_id) + 1 :])
            ):
                continue
        else:
            owners = _judge_owners(entry.name)
            if not owners or any(os.path.lexists(active / owner) for owner in owners):  # type: ignore[operator]
                continue
        if _remove_tree(entry):
            removed.append(entry.name)
    return removed


def _remove_tree(path: Path) -> bool:
    """Remove a file, link or directory tree (read-only parts included); True when it is gone."""
    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
        return not os.path.lexists(path)

    def retry(
        func: Any, name: str, _exc: Any
    ) -> None:  # a judge may leave read-only folders behind
        try:
            os.chmod(os.path.dirname(name), st.S_IRWXU)
            if os.path.isdir(name) and not os.path.islink(name):
                os.chmod(name, st.S_IRWXU)
            func(name)
        except OSError:
            pass

    shutil.rmtree(path, onexc=retry) if sys.version_info >= (3, 12) else shutil.rmtree(
        path, onerror=retry
    )
    return not os.path.lexists(path)


def _import_remote_evidence(record: RunRecord, paths: RunPaths) -> None:
    """Copy what a crashed driver's Ray run had put in the evidence store (kept as incomplete)."""
    uri = record.executor.get("evidence_uri")
    if not uri:
        return
    try:
        from evotree.harness.executors.store import EvidenceStore

        fetched = EvidenceStore(uri).fetch(record.run_id, paths.root)
        record.notes.append(
            f"imported {len(fetched.files)} file(s) from the evidence store {uri}; "
            "incomplete: the driver died before the run ended"
        )
    except Exception as exc:  # noqa: BLE001 - recovery must mark the run whatever the store does
        record.notes.append(
            f"the evidence store {uri} could not be read: {type(exc).__name__}: {exc}"
        )


def kill_run_processes(run_id: str) -> list[int]:
    """SIGKILL this machine's processes of ``run_id``; return their pids.

    They are found by ``EVOTREE_RUN_ID=<run_id>`` in their environment (set for every phase
    process), so a process that left its group (setsid, double fork) is found too. Used after
    a train phase, by crash recovery (a dead driver's leftovers) and on a Ray node after its
    worker died. The calling process itself is never killed.
    """
    needle = f"{ENV_RUN_ID}={run_id}".encode()
    killed = []
    me = os.getpid()
    for proc_dir in Path("/proc").glob("[0-9]*"):
        try:
            pid = int(proc_dir.name)
            if pid != me and needle in (proc_dir / "environ").read_bytes().split(b"\0"):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        except (OSError, ValueError):
            continue
    return killed
