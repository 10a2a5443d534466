"""Running one phase of a run: its sandbox, process, environment, budgets, progress and costs.

Shared by every executor: the local executor calls :func:`train_then_judge` in a thread of the
``evotree run`` process, the Ray executor in the Ray worker that executes the run. A phase is
``bash -c <command>`` inside a bubblewrap sandbox (:mod:`evotree.harness.sandbox`) started in its
own session, supervised until it exits; budgets and cancellation stop every process of the
phase (SIGTERM, then SIGKILL after a grace period), and nothing the phase started may outlive
it: the sandbox's PID namespace ends with the phase. A sandboxed phase starts through
:func:`evotree.harness.sandbox_launch.accounted` (a launcher that reaps the sandbox, so that ``wait4``
reports the CPU time of all its processes), and the supervisor counts the sandbox's processes
and threads against ``[sandbox] max_processes`` (the kernel's RLIMIT_NPROC does not bind root).
What each phase sees:

- train: the run directory read-only, the candidate folder and ``evidence/train`` writable;
- eval (the judge): the run directory read-only with ``candidate/`` hidden, the champion's
  judge tree read-only (its cwd), a copy of the candidate made of regular files only
  (``$EVOTREE_CANDIDATE_DIR``, read-only; links, FIFOs and devices refused and noted on the
  run) and ``evidence/eval`` writable; its own user namespace and ``$EVOTREE_POLICY_SANDBOX``,
  so that candidate code the judge runs goes into a nested sandbox that sees none of this
  (:func:`evotree.harness.sandbox_nested.policy_sandbox_argv`);
- both: the system and the Python environment read-only, a private ``/tmp`` and ``$HOME``, the
  champion's ``[sandbox].read_paths``; the network only where ``[sandbox]`` allows it.

With ``[sandbox] mode = "off"`` (the champion's choice) a phase is a plain ``bash -c`` in its own
session and the run says so in its notes and in ``phases.<phase>.sandbox``.
"""

from __future__ import annotations

import dataclasses
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
from evotree.harness.sandbox import (
    can_trace,
    check_sandbox,
    finish_trace,
    guard_notes,
    release_untraced,
    wrap,
)
from evotree.harness.sandbox_box import SandboxBox
from evotree.harness.sandbox_cgroup import PidsCgroup
from evotree.harness.sandbox_copy import copy_regular_files
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import (
    PolicySandbox,
    SandboxPolicy,
    SandboxSpec,
    SandboxUnavailable,
)
from evotree.harness.layout import (
    ENV_CACHE_DIR,
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
from evotree.harness.recovery import kill_run_processes

if TYPE_CHECKING:
    from evotree.harness.records import ProgressFn, RunPlan, RunRecord

__all__ = [
    "TERM_GRACE_SECONDS",
    "Tail",
    "phase_env",
    "run_phase",
    "signal_group",
    "supervise",
    "train_then_judge",
]

TERM_GRACE_SECONDS = 5.0
_POLL_SECONDS = 0.2


def phase_env(
    plan: RunPlan,
    paths: RunPaths,
    phase: str,
    *,
    drop: tuple[str, ...] = (),
    candidate: Path | None = None,
    cache: Path | None = None,
    gpus: str | None = None,
) -> dict[str, str]:
    """The environment of a phase: ours minus EVOTREE_* (and ``drop`` prefixes), plus the run's.

    ``candidate``: the folder named by ``EVOTREE_CANDIDATE_DIR`` (default the run's candidate;
    the judge gets its copy). ``cache``: the shared cache folder, as ``EVOTREE_CACHE_DIR``.
    ``gpus``: the run's own devices as ``CUDA_VISIBLE_DEVICES`` (:mod:`.gpus`; '' hides every GPU);
    None keeps this process's value.
    """
    prefixes = ("EVOTREE_", *drop)
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    env = safe_env(env)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    # git run inside the run directory must not discover the user's repository (and its history)
    env["GIT_CEILING_DIRECTORIES"] = str(paths.root)
    env.update(
        {
            ENV_RUN_DIR: str(paths.root),
            ENV_RUN_ID: plan.run_id,
            ENV_VERSION: plan.version,
            ENV_SEED: str(plan.seed),
            ENV_PHASE: phase,
            ENV_EVIDENCE_DIR: str(paths.evidence_dir(phase)),
            ENV_CANDIDATE_DIR: str(candidate or paths.candidate),
            ENV_JUDGE_SPLITS: ",".join(plan.judge_splits),
        }
    )
    if cache is not None:
        env[ENV_CACHE_DIR] = str(cache)
    if gpus is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpus
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
    plan: RunPlan,
    paths: RunPaths,
    phase: str,
    command: str,
    cwd: Path,
    deadline: float,
    timeout: float,
    cancel: threading.Event,
    notify: ProgressFn,
    record: RunRecord,
    *,
    drop_env: tuple[str, ...] = (),
    reaper: bool = False,
    sandbox: SandboxSpec | None = None,
    candidate: Path | None = None,
    cache: Path | None = None,
    trace: bool = False,
    gpus: str | None = None,
) -> str:
    """Run one phase; return ok / failed / budget / cancelled. Fills ``record.phases[phase]``.

    ``sandbox``: what the phase sees (:class:`SandboxSpec`; its ``cwd`` is ``cwd``); ``None``
    runs it without isolation (``[sandbox] mode = "off"``).
    ``candidate``: the folder ``EVOTREE_CANDIDATE_DIR`` names (the judge's copy).
    ``drop_env``: prefixes of variables of this process the phase must not inherit (the Ray
    executor drops ``RAY_``: a candidate is not handed the cluster's address).
    ``reaper``: start a watchdog process that kills the phase's process group if this process
    dies (a Ray worker killed mid-run must not leave a training process behind on its node).
    ``gpus``: the run's ``CUDA_VISIBLE_DEVICES`` (:func:`phase_env`).
    """
    paths.evidence_dir(phase).mkdir(parents=True, exist_ok=True)
    env = phase_env(plan, paths, phase, drop=drop_env, candidate=candidate, cache=cache, gpus=gpus)
    argv = ["bash", "-c", command]
    sandbox = _with_trace(sandbox, trace, paths, phase, record)
    max_tasks = sandbox.limits.max_processes if sandbox is not None else 0
    # the kernel's bound on the phase's processes where evotree may make a pids cgroup (RLIMIT_NPROC
    # does not bind root); the supervisor's count (supervise) is the bound everywhere else
    cgroup = PidsCgroup.create(max_tasks) if max_tasks else None
    if (
        sandbox is not None
    ):  # through the launcher that reaps the sandbox: wait4 then counts its CPU time
        argv, env = (
            accounted(wrap(sandbox, argv), cgroup=cgroup),
            sandbox_env(env, sandbox.pass_env),
        )
        hid = guard_notes(argv)  # what the box's start hid from it (git_guard.take_notes)
        record.notes += [f"the {phase} phase's box: {note}" for note in hid[:20]]
        if len(hid) > 20:
            record.notes.append(f"the {phase} phase's box: {len(hid) - 20} more folders hidden")
    start_wall, started_at = time.monotonic(), utcnow()
    proc = _launch(argv, env, cwd, paths, phase, cgroup)
    box = SandboxBox(proc.pid) if sandbox is not None else None
    watchdog = _start_reaper(proc.pid) if reaper else None
    notify(plan.run_id, "phase", {"phase": phase, "pid": proc.pid})
    try:
        outcome = supervise(
            plan,
            paths,
            phase,
            command,
            proc,
            start_wall,
            started_at,
            min(deadline, start_wall + timeout),
            cancel,
            notify,
            record,
            box=box,
            max_tasks=max_tasks,
            cgroup=cgroup,
        )
    except BaseException:
        _stop(proc.pid, box, signal.SIGKILL)
        _stop(proc.pid, box, signal.SIGKILL)  # the second also kills the launcher and bwrap
        if box is not None:
            box.reap()
        raise
    finally:
        _after_phase(watchdog, cgroup, sandbox, paths, phase, record)
        if sandbox is not None:  # an untraced phase's pruned task repositories: its box is over
            release_untraced(argv)
    record.phases[phase]["sandbox"] = "bwrap" if sandbox is not None else "off"
    record.phases[phase]["network"] = sandbox.network if sandbox is not None else True
    return outcome


def _with_trace(
    sandbox: SandboxSpec | None, trace: bool, paths: RunPaths, phase: str, record: RunRecord
) -> SandboxSpec | None:
    """The phase's sandbox with the runtime trace on where ``trace`` asks and a tracer can run
    (else a note on the run saying the phase ran untraced)."""
    if sandbox is not None and trace and can_trace():
        # the runtime trace (a tracer outside the sandbox: the phase cannot switch it off), written
        # under the run's root, which the phase sees read-only
        trace_dir = paths.root / "trace"
        trace_dir.mkdir(parents=True, exist_ok=True)
        sandbox = dataclasses.replace(sandbox, trace=trace_dir / f"{phase}.trace")
    elif sandbox is not None and trace:
        record.notes.append(
            f"[sandbox] trace is on, but no tracer can run here (seccomp user notification "
            f"refused, no strace): the {phase} phase ran untraced"
        )
    return sandbox


def _launch(
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    paths: RunPaths,
    phase: str,
    cgroup: PidsCgroup | None,
) -> subprocess.Popen:
    """Start the phase's process in a session of its own, its output to the phase's logs (the
    pids cgroup is removed when it cannot start)."""
    try:
        with open(paths.log(phase, "out"), "wb") as out, open(paths.log(phase, "err"), "wb") as err:
            return subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
    except BaseException:
        if cgroup is not None:
            cgroup.remove(timeout=0)
        raise


def _after_phase(
    watchdog: subprocess.Popen | None,
    cgroup: PidsCgroup | None,
    sandbox: SandboxSpec | None,
    paths: RunPaths,
    phase: str,
    record: RunRecord,
) -> None:
    """Once the phase is over: end its watchdog, remove its cgroup, read its runtime trace."""
    if watchdog is not None:
        watchdog.kill()
        watchdog.wait()
    if cgroup is not None:
        cgroup.remove()
    if sandbox is not None and sandbox.trace is not None:
        try:  # into the phase's evidence, bound by the run's manifest like the rest
            record.phases.setdefault(phase, {})["traced_processes"] = len(
                finish_trace(sandbox, paths.evidence_dir(phase))
            )
        except Exception as exc:  # noqa: BLE001 - a broken trace is said, never fatal to the run
            record.notes.append(f"the runtime trace of the {phase} phase could not be read: {exc}")


def _stop(pid: int, box: SandboxBox | None, sig: int) -> None:
    """Signal every process of a phase: its sandbox's namespace, or (unsandboxed) its group."""
    if box is not None:
        box.signal(sig)
    else:
        signal_group(pid, sig)


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
    return subprocess.Popen(
        [sys.executable, "-S", "-c", _REAPER, str(os.getpid()), str(group)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={"PATH": os.environ.get("PATH", "")},
    )


@dataclasses.dataclass
class _Watch:
    """What the supervisor has seen of a phase so far, and whether and when it stops it."""

    signals: Tail
    rollouts: Tail
    max_step: int = -1
    episodes: int = 0
    stop_reason: str | None = None
    kill_at: float = 0.0
    stopped_by: dict[str, Any] | None = None


def supervise(
    plan: RunPlan,
    paths: RunPaths,
    phase: str,
    command: str,
    proc: subprocess.Popen,
    start_wall: float,
    started_at: str,
    phase_deadline: float,
    cancel: threading.Event,
    notify: ProgressFn,
    record: RunRecord,
    *,
    box: SandboxBox | None = None,
    max_tasks: int = 0,
    cgroup: PidsCgroup | None = None,
) -> str:
    """Watch a phase's process: progress, budgets, cancellation; reap it and record its costs.

    ``box``: the phase's sandbox (signals go to every process of its PID namespace, and the
    namespace is empty when this returns); ``None``: signals go to the process group.
    ``max_tasks``: the sandbox's ``max_processes`` (0: none). RLIMIT_NPROC enforces it for
    non-root users; the kernel exempts the host's uid 0, so this counts the processes and threads
    of the sandbox every poll and kills the whole sandbox at once (no grace: a fork bomb does
    not stop on SIGTERM) when there are more; the phase is then a budget stop, and the run
    says why (``record.error``, ``phases.<phase>.stopped_by``). ``cgroup``: the phase's pids
    cgroup, where there is one: the kernel then refuses forks past the limit, and a phase whose
    fork was refused is stopped the same way.
    """
    watch = _Watch(Tail(paths.jsonl(phase, "signals")), Tail(paths.jsonl(phase, "rollouts")))
    limits = _Limits(plan, phase, start_wall, phase_deadline, box, max_tasks, cgroup)
    status, rusage = None, None
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if box is not None:
            box.locate()  # learn the sandbox's PID namespace early: signals and the final reap use it
        _read_progress(watch, plan.run_id, phase, notify)
        if watch.stop_reason is None:
            _check_stop(watch, limits, proc.pid, cancel, record)
        elif time.monotonic() > watch.kill_at:
            _stop(proc.pid, box, signal.SIGKILL)
        time.sleep(_POLL_SECONDS)
    proc.returncode = os.waitstatus_to_exitcode(status)
    # nothing a phase started may outlive it: the sandbox's namespace is emptied (it normally is,
    # the kernel ends it with its init), an unsandboxed phase's group killed
    if box is not None:
        box.reap()
    else:
        signal_group(proc.pid, signal.SIGKILL)
    watch.signals.new_rows()
    watch.episodes += len(watch.rollouts.new_rows())
    _record_costs(record, phase, command, proc.returncode, start_wall, started_at, rusage, watch)
    if watch.stop_reason is not None:
        return watch.stop_reason
    return _exit_outcome(record, paths, phase, proc.returncode)


@dataclasses.dataclass
class _Limits:
    """What bounds a phase while it runs: its deadline, the run's budgets, its sandbox's size."""

    plan: RunPlan
    phase: str
    start_wall: float
    phase_deadline: float
    box: SandboxBox | None
    max_tasks: int
    cgroup: PidsCgroup | None


def _read_progress(watch: _Watch, run_id: str, phase: str, notify: ProgressFn) -> None:
    """Read the phase's new signals (step and metric events) and count its new rollouts."""
    for row in watch.signals.new_rows():
        step = row.get("step")
        if isinstance(step, int) and step > watch.max_step:
            watch.max_step = step
            notify(run_id, "step", {"phase": phase, "step": step})
        if isinstance(step, int):
            notify(
                run_id,
                "metric",
                {
                    "phase": phase,
                    "step": step,
                    "metric": row.get("metric"),
                    "value": row.get("value"),
                },
            )
    watch.episodes += len(watch.rollouts.new_rows())


def _check_stop(
    watch: _Watch, limits: _Limits, pid: int, cancel: threading.Event, record: RunRecord
) -> None:
    """Decide whether the phase stops now (cancelled, over a budget, too many processes) and
    signal it: SIGTERM with a grace period, or SIGKILL at once past ``max_processes``."""
    if cancel.is_set():
        watch.stop_reason = "cancelled"
    elif (error := _budget_error(watch, limits)) is not None:
        watch.stop_reason = "budget"
        record.error = error
    elif (
        limits.box is not None
        and limits.max_tasks
        and (over := _process_limit(limits, limits.box)) is not None
    ):
        watch.stop_reason = "budget"
        watch.stopped_by, record.error = over
        _stop(pid, limits.box, signal.SIGKILL)
        watch.kill_at = time.monotonic()
    if watch.stop_reason is not None and watch.stopped_by is None:
        _stop(pid, limits.box, signal.SIGTERM)
        watch.kill_at = time.monotonic() + TERM_GRACE_SECONDS


def _budget_error(watch: _Watch, limits: _Limits) -> str | None:
    """Why the phase is over its budget (wall clock, steps, train episodes); None if it is not."""
    plan, phase = limits.plan, limits.phase
    if time.monotonic() > limits.phase_deadline:
        return (
            f"{phase} phase stopped: wall-clock limit of "
            f"{limits.phase_deadline - limits.start_wall:.0f}s reached"
        )
    if plan.limits.max_steps is not None and watch.max_step > plan.limits.max_steps:
        return f"{phase} phase stopped: step budget {plan.limits.max_steps} exceeded"
    if (
        phase == "train"
        and plan.limits.max_episodes is not None
        and watch.episodes > plan.limits.max_episodes
    ):
        return f"train phase stopped: episode budget {plan.limits.max_episodes} exceeded"
    return None


def _process_limit(limits: _Limits, box: SandboxBox) -> tuple[dict[str, Any], str] | None:
    """(``stopped_by``, the run's error) when the sandbox holds more processes and threads than
    ``max_processes`` or the kernel refused a fork past it; None while it does not."""
    max_tasks, phase = limits.max_tasks, limits.phase
    tasks = box.tasks()
    stopped_by: dict[str, Any] = {
        "limit": "max_processes",
        "max_processes": max_tasks,
        "seen": tasks,
    }
    if tasks > max_tasks:
        return stopped_by, (
            f"{phase} phase stopped: {tasks} processes and threads in its sandbox, more "
            f"than [sandbox] max_processes = {max_tasks}"
        )
    refused = limits.cgroup.refused() if limits.cgroup else 0
    if not refused:
        return None
    stopped_by["refused_forks"] = refused
    return stopped_by, (
        f"{phase} phase stopped: it reached [sandbox] max_processes = {max_tasks} "
        f"processes and threads (the kernel refused {refused} fork(s) past it)"
    )


def _record_costs(
    record: RunRecord,
    phase: str,
    command: str,
    returncode: int,
    start_wall: float,
    started_at: str,
    rusage: Any,
    watch: _Watch,
) -> None:
    """Record the finished phase on the run: command, exit, times, CPU, what stopped it."""
    wall = time.monotonic() - start_wall
    cpu = (rusage.ru_utime + rusage.ru_stime) if rusage is not None else 0.0
    record.phases[phase] = {
        "command": command,
        "returncode": returncode,
        "started_at": started_at,
        "ended_at": utcnow(),
        "wall_seconds": round(wall, 3),
        "cpu_seconds": round(cpu, 3),
    }
    if watch.stopped_by is not None:
        record.phases[phase]["stopped_by"] = watch.stopped_by
    record.cpu_seconds = round(record.cpu_seconds + cpu, 3)


def _exit_outcome(record: RunRecord, paths: RunPaths, phase: str, returncode: int) -> str:
    """The outcome of a phase that ended on its own: ok, invalid (the submission) or failed."""
    if phase in ("prepare", "train") and returncode == INVALID_SUBMISSION_EXIT:
        record.error = (
            f"invalid submission (the {phase} phase exited with {INVALID_SUBMISSION_EXIT}): see "
            f"{paths.log(phase, 'err')}"
        )
        return "invalid"
    if returncode != 0:
        hint = " (command not found)" if returncode == 127 else ""
        record.error = (
            f"{phase} phase exited with {returncode}{hint}: see {paths.log(phase, 'err')}"
        )
        return "failed"
    return "ok"


def signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def train_then_judge(
    plan: RunPlan,
    paths: RunPaths,
    record: RunRecord,
    *,
    train_command: str,
    eval_command: str,
    train_timeout: float,
    eval_timeout: float,
    deadline: float,
    judge_dir: Path,
    provide_judge: Callable[[Path], None],
    cancel: threading.Event,
    notify: ProgressFn,
    drop_env: tuple[str, ...] = (),
    reaper: bool = False,
    sandbox: SandboxPolicy | None = None,
    prepare_command: str = "",
    cache_dir: Path | None = None,
    judge_only: bool = False,
    gpus: str | None = None,
) -> str:
    """The phases of a run, in the order that keeps the judge out of the candidate's reach.

    ``prepare_command`` (the champion's ``[train] prepare``) runs first, in a sandbox of its own
    that may write ``cache_dir`` (the workspace's shared cache, e.g. a warmed-up base model keyed
    by its inputs) and reads the candidate's tree; the train phase then sees the cache read-only,
    so nothing a candidate's train code does changes what later runs start from.

    The train phase runs in ``paths.candidate``, in a sandbox that sees nothing else of the
    machine's data (``sandbox``: the champion's ``[sandbox]`` policy; ``None`` is the default
    policy, a sandbox). Only when every process of it is dead is the judge tree written
    (``provide_judge(dir)``: an export of the champion's commit, outside the run directory, in a
    fresh directory named after ``judge_dir`` with a random suffix), the candidate copied next
    to it as regular files only, the eval phase run in its own sandbox, and both deleted.
    Evidence the train phase planted where only the judge writes is discarded. Returns the
    outcome (ok / failed / budget / cancelled / invalid). Raises :class:`SandboxUnavailable`
    when the policy wants a sandbox and none can start here (nothing is run).

    ``judge_only`` (a finalize run, :func:`evotree.harness.planning.plan_finalize_run`): no prepare
    and no train phase; the judge scores the committed candidate as exported.

    ``gpus``: the devices the run holds, as every phase's ``CUDA_VISIBLE_DEVICES`` (None: this
    process's own; the Ray and Slurm executors leave it to the scheduler, which sets it).
    """
    policy, extra = _policy_of(sandbox, record)
    run = _RunPhases(
        plan, paths, record, policy, extra, deadline, cancel, notify, drop_env, reaper, gpus
    )
    if not judge_only:
        outcome = _prepare_and_train(
            run,
            train_command=train_command,
            train_timeout=train_timeout,
            prepare_command=prepare_command,
            cache_dir=cache_dir,
        )
        if outcome != "ok":
            return outcome
    return _judge(
        run,
        eval_command=eval_command,
        eval_timeout=eval_timeout,
        judge_dir=judge_dir,
        provide_judge=provide_judge,
    )


def _policy_of(sandbox: SandboxPolicy | None, record: RunRecord) -> tuple[SandboxPolicy, Any]:
    """The run's sandbox policy (None: the default, a sandbox) and the extra read-only paths it
    grants; raises :class:`SandboxUnavailable` when it wants a sandbox none can start here."""
    policy = sandbox if sandbox is not None else SandboxPolicy()
    if policy.enabled:
        status = check_sandbox()
        if not status.ok:
            raise SandboxUnavailable(
                f"no sandbox can start on this machine: {status.reason}", fix=status.fix
            )
        return policy, policy.extra_read_only()
    record.notes.append(
        'ran without a sandbox: the champion\'s evotree.toml sets [sandbox] mode = "off", so '
        "the phases could read and write anything this user can (see docs/threat-model.md)"
    )
    return policy, ()


@dataclasses.dataclass
class _RunPhases:
    """What every phase of one run shares: the run, its policy, deadline, cancel and progress."""

    plan: RunPlan
    paths: RunPaths
    record: RunRecord
    policy: SandboxPolicy
    extra: Any  # the policy's extra read-only paths
    deadline: float
    cancel: threading.Event
    notify: ProgressFn
    drop_env: tuple[str, ...]
    reaper: bool
    gpus: str | None

    def run(
        self,
        phase: str,
        command: str,
        cwd: Path,
        timeout: float,
        sandbox: SandboxSpec | None,
        *,
        candidate: Path | None = None,
        cache: Path | None = None,
        trace: bool = False,
    ) -> str:
        """Run one phase of this run (:func:`run_phase`)."""
        return run_phase(
            self.plan,
            self.paths,
            phase,
            command,
            cwd,
            self.deadline,
            timeout,
            self.cancel,
            self.notify,
            self.record,
            drop_env=self.drop_env,
            reaper=self.reaper,
            sandbox=sandbox,
            candidate=candidate,
            cache=cache,
            trace=trace,
            gpus=self.gpus,
        )


def _prepare_and_train(
    run: _RunPhases,
    *,
    train_command: str,
    train_timeout: float,
    prepare_command: str,
    cache_dir: Path | None,
) -> str:
    """The prepare (when there is one) and train phases of :func:`train_then_judge`."""
    paths, policy = run.paths, run.policy
    cache = None
    if prepare_command.strip():
        if cache_dir is None:
            raise ValueError("[train] prepare needs a cache folder")
        cache = cache_dir
        outcome = _prepare(run, prepare_command, train_timeout, cache)
        if outcome != "ok":
            return outcome
    paths.evidence_dir("train").mkdir(parents=True, exist_ok=True)
    train_box = (
        SandboxSpec(
            cwd=paths.candidate,
            read_only=(paths.root, *run.extra, *((cache,) if cache is not None else ())),
            read_write=(paths.candidate, paths.evidence_dir("train")),
            network=policy.train_network,
            limits=policy.limits,
            pass_env=policy.pass_env,
            written=(cache,) if cache is not None else (),
        )
        if policy.enabled
        else None
    )
    outcome = run.run(
        "train",
        train_command,
        paths.candidate,
        train_timeout,
        train_box,
        cache=cache,
        trace=policy.trace,
    )
    # a train process that left the phase's process group (setsid, a double fork) must not live
    # on while the judge tree is written: it could read or tamper with it. In a sandbox none
    # can (the PID namespace ended with the phase); this is the second line.
    escaped = kill_run_processes(run.plan.run_id)
    if escaped:
        run.record.notes.append(
            f"{len(escaped)} train process(es) outlived the train phase's process group "
            "and were killed before the judge ran"
        )
    return outcome


def _prepare(run: _RunPhases, prepare_command: str, timeout: float, cache: Path) -> str:
    """The prepare phase: the only one that writes the shared ``cache`` (its own sandbox)."""
    paths, policy = run.paths, run.policy
    cache.mkdir(parents=True, exist_ok=True)
    paths.evidence_dir("prepare").mkdir(parents=True, exist_ok=True)
    prepare_box = (
        SandboxSpec(
            cwd=paths.candidate,
            read_only=(paths.root, *run.extra),
            read_write=(cache, paths.evidence_dir("prepare")),
            network=policy.train_network,
            limits=policy.limits,
            pass_env=policy.pass_env,
        )
        if policy.enabled
        else None
    )
    return run.run(
        "prepare",
        prepare_command,
        paths.candidate,
        timeout,
        prepare_box,
        cache=cache,
        trace=policy.trace,
    )


def _judge(
    run: _RunPhases,
    *,
    eval_command: str,
    eval_timeout: float,
    judge_dir: Path,
    provide_judge: Callable[[Path], None],
) -> str:
    """The judge phase of :func:`train_then_judge`, once no train process is alive."""
    paths, policy, record = run.paths, run.policy, run.record
    planted = _fresh_eval_evidence(paths, record)
    # The judge tree goes to a new directory with an unguessable name (mkdtemp: created by this
    # call, mode 0700), never to a path the train phase could have prepared (a symlink planted at
    # a predictable name would receive the hidden files and outlive the cleanup). The judge
    # reads the candidate from a copy beside it: regular files only, so no link the train phase
    # left can make the judge read its own hidden files (or block on a FIFO).
    judge_dir.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f"{judge_dir.name}-", dir=judge_dir.parent))
    copy = Path(tempfile.mkdtemp(prefix=f"{judge_dir.name}-candidate-", dir=judge_dir.parent))
    try:
        report = copy_regular_files(
            paths.candidate,
            copy,
            max_files=policy.candidate_max_files,
            max_bytes=policy.candidate_max_mb * 2**20,
        )
        _note_refused(record, report.refused)
        provide_judge(fresh)
        # the judge may run candidate code (the gym judge plays the policy): it gets what it needs
        # to start a nested sandbox per process of that code, which sees none of the judge's data
        judge_box = (
            SandboxSpec(
                cwd=fresh,
                read_only=(paths.root, fresh, copy, *run.extra),
                read_write=(planted,),
                masked=(paths.candidate,),
                network=policy.eval_network,
                limits=policy.limits,
                policy=PolicySandbox(read_only=run.extra),
            )
            if policy.enabled
            else None
        )
        return run.run("eval", eval_command, fresh, eval_timeout, judge_box, candidate=copy)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
        shutil.rmtree(copy, ignore_errors=True)


def _fresh_eval_evidence(paths: RunPaths, record: RunRecord) -> Path:
    """An empty ``evidence/eval`` for the judge: what the train phase put there is discarded."""
    planted = paths.evidence_dir("eval")
    if planted.is_symlink():
        planted.unlink()
        record.notes.append("the train phase put a link at evidence/eval; it was removed")
    elif planted.exists():  # the train phase wrote where only the judge may write
        shutil.rmtree(planted) if planted.is_dir() else planted.unlink()
        record.notes.append("the train phase wrote into evidence/eval; it was discarded")
    planted.mkdir(parents=True)
    return planted


#: Refused entries named one by one on the run, at most; the rest are counted.
_MAX_REFUSAL_NOTES = 20


def _note_refused(record: RunRecord, refused: list[str]) -> None:
    for line in refused[:_MAX_REFUSAL_NOTES]:
        record.notes.append(f"not given to the judge: candidate/{line}")
    if len(refused) > _MAX_REFUSAL_NOTES:
        record.notes.append(
            f"not given to the judge: {len(refused) - _MAX_REFUSAL_NOTES} more refused entries "
            "of the candidate"
        )
