"""Running one phase of a run: its process, environment, budgets, progress and costs.

Shared by every executor: the local executor calls :func:`run_phase` in a thread of the
``evotree run`` process, the Ray executor in the Ray worker that executes the run. A phase is
``bash -c <command>`` in its own session (process group), supervised until it exits; budgets and
cancellation stop the whole group (SIGTERM, then SIGKILL after a grace period), and nothing the
phase started may outlive it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.ledger import utcnow
from evotree.core.proc import safe_env
from evotree.harness.layout import (
    ENV_CANDIDATE_DIR,
    ENV_EVIDENCE_DIR,
    ENV_JUDGE_SPLITS,
    ENV_MAX_EPISODES,
    ENV_MAX_STEPS,
    ENV_PHASE,
    ENV_RUN_DIR,
    ENV_RUN_ID,
    ENV_SEED,
    ENV_VERSION,
    INVALID_SUBMISSION_EXIT,
    RunPaths,
)

if TYPE_CHECKING:
    from evotree.harness.runs import ProgressFn, RunPlan, RunRecord

__all__ = ["TERM_GRACE_SECONDS", "Tail", "phase_env", "run_phase", "signal_group", "supervise", "train_then_judge"]

TERM_GRACE_SECONDS = 5.0
_POLL_SECONDS = 0.2


def phase_env(plan: RunPlan, paths: RunPaths, phase: str, *, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment of a phase: ours minus EVOTREE_* (and ``drop`` prefixes), plus the run's."""
    prefixes = ("EVOTREE_", *drop)
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env = safe_env(env)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    # git run inside the run directory must not discover the user's repository (and its history)
    env["GIT_CEILING_DIRECTORIES"] = str(paths.root)
    env.update({
        ENV_RUN_DIR: str(paths.root), ENV_RUN_ID: plan.run_id, ENV_VERSION: plan.version,
        ENV_SEED: str(plan.seed), ENV_PHASE: phase, ENV_EVIDENCE_DIR: str(paths.evidence_dir(phase)),
        ENV_CANDIDATE_DIR: str(paths.candidate), ENV_JUDGE_SPLITS: ",".join(plan.judge_splits),
    })
    if plan.limits.max_steps is not None:
        env[ENV_MAX_STEPS] = str(plan.limits.max_steps)
    if plan.limits.max_episodes is not None and phase == "train":
        env[ENV_MAX_EPISODES] = str(plan.limits.max_episodes)
    return env


class Tail:
    """Follows a JSONL file as it grows: complete lines only."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.buffer = b""

    def new_rows(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except FileNotFoundError:
            return []
        self.offset += len(chunk)
        data = self.buffer + chunk
        lines = data.split(b"\n")
        self.buffer = lines.pop()
        rows = []
        for line in lines:
            try:
                rows.append(json.loads(line))
            except ValueError:
                continue
        return rows


def run_phase(
    plan: RunPlan, paths: RunPaths, phase: str, command: str, cwd: Path,
    deadline: float, timeout: float, cancel: threading.Event, notify: ProgressFn, record: RunRecord,
    *, drop_env: tuple[str, ...] = (), reaper: bool = False,
) -> str:
    """Run one phase; return ok / failed / budget / cancelled. Fills ``record.phases[phase]``.

    ``drop_env``: prefixes of variables of this process the phase must not inherit (the Ray
    executor drops ``RAY_``: a candidate is not handed the cluster's address).
    ``reaper``: start a watchdog process that kills the phase's process group if this process
    dies (a Ray worker killed mid-run must not leave a training process behind on its node).
    """
    paths.evidence_dir(phase).mkdir(parents=True, exist_ok=True)
    start_wall, started_at = time.monotonic(), utcnow()
    with open(paths.log(phase, "out"), "wb") as out, open(paths.log(phase, "err"), "wb") as err:
        proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=phase_env(plan, paths, phase, drop=drop_env),
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
    watchdog = _start_reaper(proc.pid) if reaper else None
    notify(plan.run_id, "phase", {"phase": phase, "pid": proc.pid})
    try:
        return supervise(plan, paths, phase, command, proc, start_wall, started_at,
                          min(deadline, start_wall + timeout), cancel, notify, record)
    except BaseException:
        signal_group(proc.pid, signal.SIGKILL)
        raise
    finally:
        if watchdog is not None:
            watchdog.kill()
            watchdog.wait()


#: The watchdog: while its parent lives and the group exists, sleep; if the parent dies
#: (it is re-parented), SIGKILL the group.
_REAPER = """\
import os, signal, sys, time
parent, group = int(sys.argv[1]), int(sys.argv[2])
while os.getppid() == parent:
    time.sleep(0.25)
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        sys.exit(0)
try:
    os.killpg(group, signal.SIGKILL)
except ProcessLookupError:
    pass
"""


def _start_reaper(group: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-S", "-c", _REAPER, str(os.getpid()), str(group)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env={"PATH": os.environ.get("PATH", "")})


def supervise(
    plan: RunPlan, paths: RunPaths, phase: str, command: str, proc: subprocess.Popen, start_wall: float,
    started_at: str, phase_deadline: float, cancel: threading.Event,
    notify: ProgressFn, record: RunRecord,
) -> str:
    """Watch a phase's process: progress, budgets, cancellation; reap it and record its costs."""
    signals, rollouts = Tail(paths.jsonl(phase, "signals")), Tail(paths.jsonl(phase, "rollouts"))
    max_step, episodes, stop_reason, kill_at = -1, 0, None, 0.0
    status, rusage = None, None
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        for row in signals.new_rows():
            step = row.get("step")
            if isinstance(step, int) and step > max_step:
                max_step = step
                notify(plan.run_id, "step", {"phase": phase, "step": step})
            if isinstance(step, int):
                notify(plan.run_id, "metric", {"phase": phase, "step": step, "metric": row.get("metric"),
                                               "value": row.get("value")})
        episodes += len(rollouts.new_rows())
        if stop_reason is None:
            if cancel.is_set():
                stop_reason = "cancelled"
            elif time.monotonic() > phase_deadline:
                stop_reason = "budget"
                record.error = (f"{phase} phase stopped: wall-clock limit of "
                                f"{phase_deadline - start_wall:.0f}s reached")
            elif plan.limits.max_steps is not None and max_step > plan.limits.max_steps:
                stop_reason = "budget"
                record.error = f"{phase} phase stopped: step budget {plan.limits.max_steps} exceeded"
            elif phase == "train" and plan.limits.max_episodes is not None and episodes > plan.limits.max_episodes:
                stop_reason = "budget"
                record.error = f"train phase stopped: episode budget {plan.limits.max_episodes} exceeded"
            if stop_reason is not None:
                signal_group(proc.pid, signal.SIGTERM)
                kill_at = time.monotonic() + TERM_GRACE_SECONDS
        elif time.monotonic() > kill_at:
            signal_group(proc.pid, signal.SIGKILL)
        time.sleep(_POLL_SECONDS)
    proc.returncode = os.waitstatus_to_exitcode(status)
    signal_group(proc.pid, signal.SIGKILL)  # nothing a phase started may outlive it
    signals.new_rows()
    episodes += len(rollouts.new_rows())
    wall = time.monotonic() - start_wall
    cpu = (rusage.ru_utime + rusage.ru_stime) if rusage is not None else 0.0
    record.phases[phase] = {
        "command": command, "returncode": proc.returncode, "started_at": started_at, "ended_at": utcnow(),
        "wall_seconds": round(wall, 3), "cpu_seconds": round(cpu, 3),
    }
    record.cpu_seconds = round(record.cpu_seconds + cpu, 3)
    if stop_reason is not None:
        return stop_reason
    if phase == "train" and proc.returncode == INVALID_SUBMISSION_EXIT:
        record.error = f"invalid submission (the train phase exited with {INVALID_SUBMISSION_EXIT}): see " \
                       f"{paths.log(phase, 'err')}"
        return "invalid"
    if proc.returncode != 0:
        hint = " (command not found)" if proc.returncode == 127 else ""
        record.error = (f"{phase} phase exited with {proc.returncode}{hint}: see "
                        f"{paths.log(phase, 'err')}")
        return "failed"
    return "ok"


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass




def train_then_judge(
    plan: RunPlan, paths: RunPaths, record: RunRecord, *, train_command: str, eval_command: str,
    train_timeout: float, eval_timeout: float, deadline: float, judge_dir: Path,
    provide_judge: Callable[[Path], None], cancel: threading.Event, notify: ProgressFn,
    drop_env: tuple[str, ...] = (), reaper: bool = False,
) -> str:
    """The two phases of a run, in the order that keeps the judge out of the candidate's reach.

    The train phase runs in ``paths.candidate``. Only when its whole process group is dead is
    the judge tree written (``provide_judge(dir)``: an export of the champion's commit, outside
    the run directory, in a fresh directory named after ``judge_dir`` with a random suffix), the
    eval phase run there, and the judge tree deleted. Evidence the train phase planted where only
    the judge writes is discarded. Returns the outcome (ok / failed / budget / cancelled / invalid).
    """
    outcome = run_phase(plan, paths, "train", train_command, paths.candidate,
                        deadline, train_timeout, cancel, notify, record, drop_env=drop_env, reaper=reaper)
    # a train process that left the phase's process group (setsid, a double fork) must not live
    # on while the judge tree is written: it could read or tamper with it
    from evotree.harness.runs import kill_run_processes

    escaped = kill_run_processes(plan.run_id)
    if escaped:
        record.notes.append(f"{len(escaped)} train process(es) outlived the train phase's process group "
                            "and were killed before the judge ran")
    if outcome != "ok":
        return outcome
    planted = paths.evidence_dir("eval")
    if planted.is_symlink():
        planted.unlink()
        record.notes.append("the train phase put a link at evidence/eval; it was removed")
    elif planted.exists():  # the train phase wrote where only the judge may write
        shutil.rmtree(planted)
        record.notes.append("the train phase wrote into evidence/eval; it was discarded")
    # The judge tree goes to a new directory with an unguessable name (mkdtemp: created by this
    # call, mode 0700), never to a path the train phase could have prepared (a symlink planted at
    # a predictable name would receive the hidden files and outlive the cleanup).
    judge_dir.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f"{judge_dir.name}-", dir=judge_dir.parent))
    try:
        provide_judge(fresh)
        return run_phase(plan, paths, "eval", eval_command, fresh,
                         deadline, eval_timeout, cancel, notify, record, drop_env=drop_env, reaper=reaper)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
