"""Running a version: export, train phase, judge phase, evidence, ledger — and crash recovery.

One run = one (version, seed). :func:`run_versions` plans every run of a request (budgets are
checked before anything starts), then executes them, ``jobs`` at a time, each in its own
thread that drives two subprocesses:

1. **train** — the version's committed tree exported into ``<run>/candidate`` (no ``.git``, no
   judge paths), the workspace's ``[train].command`` run there;
2. **eval** — the champion's tree exported into a directory *outside* the run directory, created
   only after the train phase has ended (its whole process group killed), ``[eval].command``
   run there with the candidate at ``$EVOTREE_CANDIDATE_DIR``; deleted afterwards.

Each run holds an ``flock`` on ``<runs_dir>/.active/<run_id>`` while it lives. The kernel
releases it if the driving process dies (even by SIGKILL), so :func:`recover_crashed_runs`,
called by every evotree command, finds such runs, compacts what they recorded and marks them
``crashed``. Only the driving process writes the ledger (``run.started`` / ``run.finished``,
compare-and-swap, so parallel runs keep it consistent).
"""

from __future__ import annotations

import fcntl
import json
import os
import platform
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from evotree.errors import ConfigError, DirtyState, EvotreeError, InvalidState
from evotree.ledger import Event, EventKind, LedgerTxn, VersionStatus, utcnow
from evotree.proc import safe_env
from evotree.refs import CHAMPION_REF, branch_ref
from evotree.workspace import Workspace
from harness.budget import RunLimits, add_usage, plan_limits
from harness.export import export_tree
from harness.layout import (
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

__all__ = [
    "RunStatus",
    "RunRecord",
    "RunPlan",
    "RunDirError",
    "RunsCancelled",
    "plan_runs",
    "run_versions",
    "execute_run",
    "recover_crashed_runs",
    "list_runs",
    "runs_dir",
    "HEADLINE_SPLITS",
]

#: Split whose mean score is a run's headline, in order of preference.
HEADLINE_SPLITS = ("validation", "heldout", "test", "train")
_PACKAGES = ("evotree", "torch", "transformers", "trl", "peft", "gymnasium", "duckdb", "pyarrow", "pygit2")
_TERM_GRACE_SECONDS = 5.0
_POLL_SECONDS = 0.2

ProgressFn = Callable[[str, str, dict[str, Any]], None]


class RunDirError(EvotreeError):
    exit_code = 17
    code = "run_dir_error"


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
    limits: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    headline: dict[str, Any] | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def load(cls, path: Path) -> RunRecord:
        data = json.loads(path.read_text())
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

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


def runs_dir(ws: Workspace) -> Path:
    """The workspace's runs directory (``[workspace].runs_dir``)."""
    path = Path(ws.config.workspace.runs_dir)
    return path if path.is_absolute() else ws.root / path


def _now_stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S")


def _package_versions() -> dict[str, str]:
    from importlib import metadata

    found = {}
    for name in _PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


# ---------------------------------------------------------------------------- planning
def plan_runs(ws: Workspace, versions: list[str], *, seeds: int = 1, heldout: bool = False) -> list[RunPlan]:
    """Check every requested run and budget; nothing starts unless all of them may.

    Refuses abandoned versions, uncommitted changes in a version's worktree (naming the files),
    empty train/eval commands and budgets that would be exceeded.
    """
    if seeds < 1:
        raise InvalidState(f"--seeds: expected at least 1, actually: {seeds}", fix="pass --seeds 1 or more")
    cfg = ws.config
    for name, phase in (("train", cfg.train), ("eval", cfg.eval)):
        if not phase.command.strip():
            raise ConfigError(
                f"[{name}].command is empty in the champion's evotree.toml: there is nothing to run",
                fix=f"set [{name}].command (e.g. \"python {name}.py\") on the champion",
                key=f"{name}.command",
            )
    snapshot = ws.ledger.snapshot()
    champion = ws.resolve("champion", snapshot)
    judge_commit = ws.git.ref_target(CHAMPION_REF)
    if judge_commit is None:
        raise InvalidState("refs/evotree/champion is missing", fix="re-run `evotree init` in a fresh clone")
    records = []
    for name in versions:
        record = ws.resolve(name, snapshot)
        if record.status == VersionStatus.ABANDONED.value:
            raise InvalidState(f"{record.id} is abandoned ({record.reason}); it is kept as evidence, not run",
                               fix=f"branch a new version from it: evotree branch --from {record.id} -m ...")
        if record.worktree and ws.absolute(record.worktree).exists():
            dirty = ws.git.status_porcelain(ws.absolute(record.worktree))
            if dirty:
                raise DirtyState(
                    f"{record.id} has uncommitted changes in {record.worktree}: {', '.join(dirty[:10])}"
                    + (" …" if len(dirty) > 10 else ""),
                    fix=f"commit them (evotree runs only committed trees): git -C {record.worktree} commit -am ...",
                    paths=dirty,
                )
        tip = ws.git.ref_target(branch_ref(record.id))
        if tip is None:
            raise InvalidState(f"branch {record.branch} of {record.id} is missing",
                               fix=f"restore it: git branch {record.branch} {record.base_commit}")
        records.append((record, str(tip)))
    total = len(records) * seeds
    plans: list[RunPlan] = []
    per_version: dict[str, int] = {}
    for record, _ in records:
        per_version[record.id] = per_version.get(record.id, 0) + seeds
    limits_of = {
        vid: plan_limits(
            cfg.budget, version=vid, version_usage=snapshot.version(vid).usage,  # type: ignore[union-attr]
            tree_usage=snapshot.meta.get("usage"), version_runs=count, total_runs=total,
            gpus=cfg.executor.gpus,
        )
        for vid, count in per_version.items()
    }
    for record, tip in records:
        for seed in range(seeds):
            run_id = f"{record.id}-s{seed}-{_now_stamp()}-{secrets.token_hex(3)}"
            plans.append(RunPlan(run_id=run_id, version=record.id, seed=seed, commit=tip,
                                 judge_commit=str(judge_commit), judge_version=champion.id,
                                 limits=limits_of[record.id],
                                 judge_splits=("validation", "heldout") if heldout else ("validation",)))
    return plans


# ---------------------------------------------------------------------------- executing
def run_versions(
    ws: Workspace,
    versions: list[str],
    *,
    seeds: int = 1,
    jobs: int | None = None,
    heldout: bool = False,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
) -> list[RunRecord]:
    """Plan and execute runs of ``versions`` × ``seeds``, ``jobs`` at a time; return their records.

    ``heldout`` asks the judge to score the held-out split too (for the selected candidate).
    """
    plans = plan_runs(ws, versions, seeds=seeds, heldout=heldout)
    jobs = jobs or ws.config.executor.jobs
    cancel = cancel or threading.Event()
    base = runs_dir(ws)
    try:
        (base / ".active").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"cannot create the runs directory {base}: {exc.strerror}",
                          fix="check permissions and free space, or set [workspace].runs_dir") from None
    if not os.access(base, os.W_OK):
        raise RunDirError(f"the runs directory {base} is not writable",
                          fix="check its permissions, or set [workspace].runs_dir to a writable place")
    root = ws.root
    # Runs execute in worker threads even for jobs=1. Ctrl-C only sets the cancel event (a
    # handler, not a KeyboardInterrupt that could strike while a future's lock is held): each
    # run then stops its processes and is marked `cancelled`. A second Ctrl-C aborts.
    interrupted = threading.Event()
    previous = _install_sigint(lambda *_: (interrupted.set(), cancel.set(), _restore_sigint(previous)))
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(execute_run, root, plan, progress=progress, cancel=cancel) for plan in plans]
            records = [f.result() for f in futures]
    finally:
        _restore_sigint(previous)
    if interrupted.is_set():
        raise RunsCancelled(
            f"cancelled: {sum(r.status == RunStatus.CANCELLED.value for r in records)} run(s) stopped "
            "and marked cancelled; runs that had finished are kept",
            fix="`evotree runs` lists them", runs=[r.run_id for r in records],
        )
    return records


def _install_sigint(handler: Callable[..., Any]) -> Any:
    """Install a SIGINT handler when called from the main thread; return the previous one."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, handler)


def _restore_sigint(previous: Any) -> None:
    if previous is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, previous)


def execute_run(
    root: Path, plan: RunPlan, *, progress: ProgressFn | None = None, cancel: threading.Event | None = None
) -> RunRecord:
    """Execute one planned run to the end; always leaves a final run.json and a ledger event."""
    ws = Workspace.open(root)  # a Repository per thread: pygit2 objects are not thread-safe
    cfg = ws.config
    cancel = cancel or threading.Event()
    notify = progress or (lambda *_: None)
    base = runs_dir(ws)
    paths = RunPaths(base / plan.run_id)
    try:
        paths.root.mkdir(parents=True)
        (paths.root / "logs").mkdir()
    except OSError as exc:
        raise RunDirError(f"cannot create the run directory {paths.root}: {exc.strerror}",
                          fix="check permissions and free space of the runs directory") from None
    marker = base / ".active" / plan.run_id
    lock = open(marker, "a+")
    fcntl.flock(lock, fcntl.LOCK_EX)
    record = RunRecord(
        run_id=plan.run_id, version=plan.version, seed=plan.seed, status=RunStatus.RUNNING.value,
        commit=plan.commit, judge_commit=plan.judge_commit, judge_version=plan.judge_version,
        train_command=cfg.train.command, eval_command=cfg.eval.command, started_at=utcnow(),
        packages=_package_versions(), limits=plan.limits.to_dict(),
    )
    record.save(paths.record)
    started = time.monotonic()
    try:
        _ledger_run_started(ws, record)
        notify(plan.run_id, "started", {"version": plan.version, "seed": plan.seed,
                                        "max_steps": plan.limits.max_steps})
        export_tree(ws.git.repo, plan.commit, paths.candidate, exclude=list(cfg.eval.judge_paths))
        deadline = started + plan.limits.wall_seconds
        outcome = _run_phase(plan, paths, "train", cfg.train.command, paths.candidate,
                             deadline, cfg.train.timeout_seconds, cancel, notify, record)
        if outcome == "ok":
            judge_dir = base.parent / "judge" / plan.run_id
            planted = paths.evidence_dir("eval")
            if planted.exists():  # the train phase wrote where only the judge may write
                shutil.rmtree(planted)
                record.notes.append("the train phase wrote into evidence/eval; it was discarded")
            try:
                export_tree(ws.git.repo, plan.judge_commit, judge_dir)
                outcome = _run_phase(plan, paths, "eval", cfg.eval.command, judge_dir,
                                     deadline, cfg.eval.timeout_seconds, cancel, notify, record)
            finally:
                shutil.rmtree(judge_dir, ignore_errors=True)
        record.status = {
            "ok": RunStatus.SUCCEEDED, "failed": RunStatus.FAILED, "budget": RunStatus.BUDGET_EXCEEDED,
            "cancelled": RunStatus.CANCELLED, "invalid": RunStatus.INVALID,
        }[outcome].value
    except BaseException as exc:  # noqa: BLE001 - the run must still be closed and charged
        record.status = RunStatus.CANCELLED.value if isinstance(exc, KeyboardInterrupt) else RunStatus.FAILED.value
        record.error = record.error or f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, Exception):
            try:
                _finish(ws, record, paths, started)
            finally:
                marker.unlink(missing_ok=True)
                lock.close()
            raise
    try:
        _finish(ws, record, paths, started)
    finally:
        marker.unlink(missing_ok=True)
        lock.close()
    notify(plan.run_id, "finished", {"status": record.status, "headline": record.headline})
    return record


def _phase_env(plan: RunPlan, paths: RunPaths, phase: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOTREE_")}
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


class _Tail:
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


def _run_phase(
    plan: RunPlan, paths: RunPaths, phase: str, command: str, cwd: Path,
    deadline: float, timeout: float, cancel: threading.Event, notify: ProgressFn, record: RunRecord,
) -> str:
    """Run one phase; return ok / failed / budget / cancelled. Fills ``record.phases[phase]``."""
    paths.evidence_dir(phase).mkdir(parents=True, exist_ok=True)
    start_wall, started_at = time.monotonic(), utcnow()
    with open(paths.log(phase, "out"), "wb") as out, open(paths.log(phase, "err"), "wb") as err:
        proc = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=_phase_env(plan, paths, phase),
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
    notify(plan.run_id, "phase", {"phase": phase, "pid": proc.pid})
    try:
        return _supervise(plan, paths, phase, command, proc, start_wall, started_at,
                          min(deadline, start_wall + timeout), cancel, notify, record)
    except BaseException:
        _signal_group(proc.pid, signal.SIGKILL)
        raise


def _supervise(
    plan: RunPlan, paths: RunPaths, phase: str, command: str, proc: subprocess.Popen, start_wall: float,
    started_at: str, phase_deadline: float, cancel: threading.Event,
    notify: ProgressFn, record: RunRecord,
) -> str:
    """Watch a phase's process: progress, budgets, cancellation; reap it and record its costs."""
    signals, rollouts = _Tail(paths.jsonl(phase, "signals")), _Tail(paths.jsonl(phase, "rollouts"))
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
                _signal_group(proc.pid, signal.SIGTERM)
                kill_at = time.monotonic() + _TERM_GRACE_SECONDS
        elif time.monotonic() > kill_at:
            _signal_group(proc.pid, signal.SIGKILL)
        time.sleep(_POLL_SECONDS)
    proc.returncode = os.waitstatus_to_exitcode(status)
    _signal_group(proc.pid, signal.SIGKILL)  # nothing a phase started may outlive it
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


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _finish(ws: Workspace, record: RunRecord, paths: RunPaths, started: float | None,
            wall_seconds: float | None = None, *, charge: bool = True) -> None:
    """Compact evidence, compute headline and usage, write run.json, append run.finished."""
    from harness.evidence import compact_run

    record.ended_at = utcnow()
    record.wall_seconds = round(wall_seconds if wall_seconds is not None else time.monotonic() - (started or 0), 3)
    try:
        result = compact_run(paths.root)
        record.evidence = _evidence_summary(result)
    except Exception as exc:  # noqa: BLE001 - evidence problems must not lose the run record
        record.notes.append(f"compaction failed: {type(exc).__name__}: {exc}")
    con = _duck()  # one in-memory connection for both summaries
    try:
        record.headline = _headline(con, paths)
        steps, episodes = _train_counts(con, paths)
    finally:
        con.close()
    gpus = ws.config.executor.gpus
    charge = charge and record.status != RunStatus.INVALID.value  # invalid submissions cost nothing
    record.usage = {
        "runs": 1, "episodes": episodes, "steps": steps,
        "wall_hours": round(record.wall_seconds / 3600, 9),
        "gpu_hours": round(record.wall_seconds / 3600 * gpus, 9),
    } if charge else {}
    if record.status == RunStatus.SUCCEEDED.value and record.headline is None:
        record.notes.append("the judge recorded no eval results: this run has no score (not a score of 0)")
    record.save(paths.record)
    _ledger_run_finished(ws, record)


def _evidence_summary(result: Any) -> dict[str, Any]:
    data = asdict(result) if hasattr(result, "__dataclass_fields__") else dict(result)
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in data.items()
            if not isinstance(v, (bytes,))}


def _duck() -> Any:
    import duckdb

    return duckdb.connect()


def _headline(con: Any, paths: RunPaths) -> dict[str, Any] | None:
    """Mean score of the preferred split, from the judge's evals; None when there are none."""
    evals = paths.parquet("evals")
    if not evals.exists():
        return None
    rows = con.execute(
        "SELECT split, avg(score), count(*), count(score) FROM read_parquet(?) "
        "WHERE phase = 'eval' GROUP BY split", [str(evals)]
    ).fetchall()
    by_split = {split: (mean, n, scored) for split, mean, n, scored in rows}
    for split in HEADLINE_SPLITS:
        if split in by_split and by_split[split][2] > 0:
            mean, n, scored = by_split[split]
            return {"metric": f"{split}/mean_score", "value": float(mean), "n": int(n), "scored": int(scored)}
    return None


def _train_counts(con: Any, paths: RunPaths) -> tuple[int, int]:
    """(highest step, rollouts) the train phase recorded: what the run is charged."""
    steps = episodes = 0
    if paths.parquet("signals").exists():
        value = con.execute("SELECT max(step) FROM read_parquet(?) WHERE phase = 'train'",
                            [str(paths.parquet("signals"))]).fetchall()[0][0]
        steps = int(value or 0)
    if paths.parquet("rollouts").exists():
        episodes = int(con.execute("SELECT count(*) FROM read_parquet(?) WHERE phase = 'train'",
                                   [str(paths.parquet("rollouts"))]).fetchall()[0][0])
    return steps, episodes


# ---------------------------------------------------------------------------- ledger
def _ledger_run_started(ws: Workspace, record: RunRecord) -> None:
    actor = ws.git.identity()

    def change(txn: LedgerTxn) -> Event:
        version = txn.require(record.version)
        version.runs = [r for r in version.runs if r["run_id"] != record.run_id] + [
            {"run_id": record.run_id, "seed": record.seed, "status": record.status, "headline": None}
        ]
        if version.status != VersionStatus.ABANDONED.value:
            version.status = VersionStatus.RUNNING.value
        version.updated_at = utcnow()
        txn.put(version)
        return Event(kind=EventKind.RUN_STARTED.value, version=record.version, actor=str(actor),
                     data={"run_id": record.run_id, "seed": record.seed, "commit": record.commit,
                           "judge_commit": record.judge_commit, "limits": record.limits})

    ws.ledger.transact(change, actor=actor)


def _ledger_run_finished(ws: Workspace, record: RunRecord) -> None:
    actor = ws.git.identity()

    def change(txn: LedgerTxn) -> Event:
        version = txn.require(record.version)
        version.runs = [r for r in version.runs if r["run_id"] != record.run_id] + [
            {"run_id": record.run_id, "seed": record.seed, "status": record.status, "headline": record.headline}
        ]
        version.usage = add_usage(version.usage, record.usage)
        txn.meta["usage"] = add_usage(txn.meta.get("usage"), record.usage)
        _refresh_version_status(version)
        version.updated_at = utcnow()
        txn.put(version)
        return Event(kind=EventKind.RUN_FINISHED.value, version=record.version, actor=str(actor),
                     data={"run_id": record.run_id, "seed": record.seed, "status": record.status,
                           "headline": record.headline, "usage": record.usage, "error": record.error})

    ws.ledger.transact(change, actor=actor)


def _refresh_version_status(version: Any) -> None:
    """A version's status and headline from its runs (mean over scored runs of one metric)."""
    if version.status == VersionStatus.ABANDONED.value:
        return
    runs = [r for r in version.runs  # ingested runs are evidence and invalid ones cost nothing: not attempts
            if r["status"] not in (RunStatus.INGESTED.value, RunStatus.INVALID.value)]
    if not runs:
        if version.status == VersionStatus.RUNNING.value:
            version.status = VersionStatus.ACTIVE.value
        return
    if any(r["status"] == RunStatus.RUNNING.value for r in runs):
        version.status = VersionStatus.RUNNING.value
        return
    scored = [r["headline"] for r in runs if r["status"] == RunStatus.SUCCEEDED.value and r.get("headline")]
    if scored:
        metric = scored[0]["metric"]
        same = [h["value"] for h in scored if h["metric"] == metric]
        version.headline = {"metric": metric, "value": sum(same) / len(same), "runs": len(same)}
        version.status = VersionStatus.EVALUATED.value
        version.reason = None
    elif runs:
        version.status = VersionStatus.FAILED.value
        version.reason = f"no run produced a score ({', '.join(sorted({r['status'] for r in runs}))})"


# ---------------------------------------------------------------------------- crashes
def recover_crashed_runs(ws: Workspace) -> list[str]:
    """Find runs whose driving process died (its flock is free), mark them ``crashed``.

    What they recorded is kept and compacted; they are charged up to their last evidence.
    Returns the ids of the runs marked.
    """
    active = runs_dir(ws) / ".active"
    if not active.is_dir():
        return []
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
                    _kill_orphans(record)
                    record.status = RunStatus.CRASHED.value
                    record.error = ("the process driving this run died (killed or crashed) before it "
                                    "finished; what it recorded is kept")
                    last = max((p.stat().st_mtime for p in paths.root.rglob("*") if p.is_file()),
                               default=time.time())
                    started = datetime.fromisoformat(record.started_at).timestamp()
                    _finish(ws, record, paths, None, wall_seconds=max(0.0, last - started))
                    marked.append(record.run_id)
            marker.unlink(missing_ok=True)
        finally:
            handle.close()
    return marked


def _kill_orphans(record: RunRecord) -> None:
    """Kill processes a dead driver left behind (identified by their EVOTREE_RUN_ID)."""
    needle = f"{ENV_RUN_ID}={record.run_id}".encode()
    for proc_dir in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc_dir / "environ").read_bytes().split(b"\0"):
                os.kill(int(proc_dir.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue


# ---------------------------------------------------------------------------- listing
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
