"""Running a version: planning, run records, finishing, the ledger — and crash recovery.

One run = one (version, seed). :func:`evotree.harness.execute.run_versions` plans every run of a request (budgets are
checked before anything starts), then hands the plans to an executor (``evotree.harness.executors``):

- ``local`` (default): ``jobs`` runs at a time, each a thread of this process driving two
  subprocesses;
- ``ray``: each run a Ray task on a cluster, with the resources of ``[executor]``; workers
  write evidence to an evidence store, this process imports it and writes the ledger.

Either way a run has two phases:

1. **train** — the version's committed tree exported into ``<run>/candidate`` (no ``.git``, no
   judge paths), the workspace's ``[train].command`` run there;
2. **eval** — the champion's tree exported into a directory *outside* the run directory, created
   only after the train phase has ended (its whole process group killed), ``[eval].command``
   run there with the candidate at ``$EVOTREE_CANDIDATE_DIR``; deleted afterwards.

Each run holds an ``flock`` on ``<runs_dir>/.active/<run_id>`` while it lives. The kernel
releases it if the driving process dies (even by SIGKILL), so :func:`recover_crashed_runs`,
called by every evotree command, finds such runs, compacts what they recorded and marks them
``crashed``; it also deletes the judge folders a driver killed during the judge phase left
behind (they hold hidden answers). Only the driving process writes the ledger (``run.reserved``
when planned, ``run.started`` / ``run.finished``, compare-and-swap, so parallel runs keep it
consistent). Runs are *reserved* before they start (:func:`plan_runs` with ``reserve=True``): the
budgets and the train gate's allowance are decided in the reservation's compare-and-swap, the
reservation (``meta["reservations"]``, with its owner process) counts as spent until
``run.finished`` charges the run, and one whose run never starts is released (``run.released``)
by the request, or by the next planner or crash recovery once its owner is dead. A run that
starts without one (a Ray retry) gets one at ``run.started``. ``run.finished``
carries the run's evidence manifest (:func:`evidence_manifest`: the sha256 of every evidence
file and of the run.json fields readers rely on), which :mod:`evotree.harness.integrity` checks
before any run is counted.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import platform
import re
import secrets
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

from evotree.core.errors import ConfigError, DirtyState, EvotreeError, InvalidState
from evotree.core.ledger import Event, EventKind, LedgerTxn, VersionStatus, utcnow
from evotree.core.refs import CHAMPION_REF, branch_ref
from evotree.core.workspace import Workspace
from evotree.harness.budget import (
    CHAMPION_RERUNS,
    FINALIZE_ACCOUNT,
    FINALIZE_USAGE,
    RunLimits,
    TrustedUsage,
    add_usage,
    charge_run,
    clock_ends_at,
    clock_left_seconds,
    committed,
    plan_limits,
    trusted_usage,
    usd_per_run_hour,
)
from evotree.harness.layout import ENV_RUN_ID, RunPaths

__all__ = [
    "RunStatus",
    "RunRecord",
    "RunPlan",
    "RunDirError",
    "UnknownRun",
    "RunsCancelled",
    "find_run_dir",
    "run_logs",
    "RunLogs",
    "log_tail_note",
    "RunAuthorizer",
    "RunRecheck",
    "RESERVATIONS",
    "release_reservations",
    "release_dead_reservations",
    "live_reservations",
    "process_owner",
    "owner_is_dead",
    "plan_runs",
    "finish_run",
    "now_stamp",
    "outcome_status",
    "recover_crashed_runs",
    "kill_run_processes",
    "remove_judge_leftovers",
    "judge_root",
    "evidence_manifest",
    "evidence_files",
    "record_binding",
    "manifest_digest",
    "run_is_live",
    "BOUND_FIELDS",
    "list_runs",
    "runs_dir",
    "budget_cut_notes",
    "training_seconds",
    "HEADLINE_SPLITS",
    "plan_finalize_run",
]

#: Split whose mean score is a run's headline, in order of preference.
HEADLINE_SPLITS = ("validation", "heldout", "test", "train")
_PACKAGES = ("evotree", "torch", "transformers", "trl", "peft", "gymnasium", "duckdb", "pyarrow", "pygit2")

ProgressFn = Callable[[str, str, dict[str, Any]], None]
#: Re-checks an authorization inside the reservation's ledger transaction, against that
#: transaction's state: ``(txn, {version: runs}, {version: commit}) -> None``, raising to refuse.
RunRecheck = Callable[[LedgerTxn, Mapping[str, int], Mapping[str, str]], None]
#: Decides whether a request may train: ``(workspace, {version: runs})``, raising to refuse. It may
#: return a :data:`RunRecheck`, which the reservation calls in its compare-and-swap (so concurrent
#: requests cannot each pass on the same allowance); anything else it returns is ignored.
RunAuthorizer = Callable[["Workspace", Mapping[str, int]], Any]
#: The ledger's meta key of the runs reserved and not finished: ``{run_id: reservation}``.
RESERVATIONS = "reservations"


class RunDirError(EvotreeError):
    exit_code = 17
    code = "run_dir_error"


class UnknownRun(EvotreeError):
    exit_code = 38
    code = "unknown_run"


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
    #: the wall and CPU seconds of its training, measured by evotree around each phase
    #: (:func:`training_seconds`): prepare and train, plus the judge phase where the champion's
    #: ``[eval] judge_trains`` says the judge runs the fixed training (RSIBench-Data)
    train_seconds: float = 0.0
    train_cpu_seconds: float = 0.0
    #: the part of ``train_seconds`` / ``train_cpu_seconds`` spent in the judge phase (0 unless judge_trains)
    judge_train_seconds: float = 0.0
    judge_train_cpu_seconds: float = 0.0
    limits: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, Any] = field(default_factory=dict)
    headline: dict[str, Any] | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    #: Where it ran: {"kind": "local"} or, for Ray, kind, address, node_id, worker_pid, attempt,
    #: retry_of (the attempt whose worker died) and evidence_uri.
    executor: dict[str, Any] = field(default_factory=lambda: {"kind": "local"})
    #: The judge-store commit (refs/evotree/judge) overlaid on the champion's tree for the judge:
    #: the exact hidden data that scored the run. None: the judge was the champion's tree alone.
    judge_data_commit: str | None = None
    #: ``search`` (a run of the search: train, then the judge) or ``finalize`` (the search's one
    #: held-out evaluation, judge only, charged to the ``finalize`` account: :func:`plan_finalize_run`)
    kind: str = "search"
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def load(cls, path: Path) -> RunRecord:
        """Read ``run.json``; ``ValueError`` when it is not a run record (not JSON, not an object, fields missing)."""
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict):
            raise ValueError(f"{path}: not a run record (a JSON {type(data).__name__}, not an object)")
        known = set(cls.__dataclass_fields__)
        try:
            return cls(**{k: v for k, v in data.items() if k in known})
        except TypeError as exc:  # a required field is missing
            raise ValueError(f"{path}: not a run record ({exc})") from None

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
    #: The judge store's commit in force when planned (the ledger's, never the ref's); None: none.
    judge_data_commit: str | None = None
    #: ``search`` or ``finalize`` (judge only, :func:`plan_finalize_run`)
    kind: str = "search"
    #: finalize: the selected run whose trained candidate folder the judge reads (a judge that needs
    #: the artifact training made); None: the commit's exported tree
    source_run: str | None = None
    #: finalize: train the commit again (its train phase, a fresh seed) before the judge: a clean retrain
    retrain: bool = False


def runs_dir(ws: Workspace) -> Path:
    """The workspace's runs directory (``[workspace].runs_dir``)."""
    path = Path(ws.config.workspace.runs_dir)
    return path if path.is_absolute() else ws.root / path


def now_stamp() -> str:
    """UTC now as ``YYYYmmddTHHMMSS``: the time part of run ids."""
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
def plan_runs(ws: Workspace, versions: list[str], *, authorize: RunAuthorizer, seeds: int = 1,
              heldout: bool = False, seed_start: int = 0, reserve: bool = False) -> list[RunPlan]:
    """Check every requested run and budget; nothing starts unless all of them may.

    ``reserve=True`` (what :func:`evotree.harness.execute.run_versions` asks) also *reserves* the
    runs in the ledger: one ``run.reserved`` event whose compare-and-swap re-checks the budgets —
    counting every run reserved and not finished (:func:`evotree.harness.budget.committed`) — and
    the authorizer's :data:`RunRecheck` against the state it writes on, so no number of
    concurrent requests, CLI or server, exceeds a budget or an approval. The caller then owns the
    reservations: ``run.started`` keeps them, ``run.finished`` consumes them (charging the
    usage), :func:`release_reservations` gives back those that never started. A reservation
    records its owner (pid, host, boot id, process start time): one whose owner died before its
    run started is released by the next reservation or by :func:`recover_crashed_runs`. Without
    ``reserve`` the same checks run on a snapshot (a preview: nothing is written).

    ``authorize(ws, runs_per_version)`` is asked before any limit is planned and raises to refuse:
    the train gate (:func:`evotree.gates.runs.plan_runs` passes it). It is a required argument so
    that no caller forgets it; the harness itself never decides who may train.

    Each version gets seeds ``seed_start .. seed_start + seeds - 1`` (the same for every version:
    common random numbers). A later ``seed_start`` adds new seeds to a comparison instead of
    repeating the ones already run.

    Refuses abandoned versions, uncommitted changes in a version's worktree (naming the files),
    empty train/eval commands and budgets that would be exceeded.
    """
    if seeds < 1:
        raise InvalidState(f"--seeds: expected at least 1, actually: {seeds}", fix="pass --seeds 1 or more")
    if seed_start < 0:
        raise InvalidState(f"--seed-start: expected 0 or more, actually: {seed_start}", fix="pass --seed-start 0 or more")
    cfg = ws.config
    for name, phase in (("train", cfg.train), ("eval", cfg.eval)):
        if not phase.command.strip():
            raise ConfigError(
                f"[{name}].command is empty in the champion's evotree.toml: there is nothing to run",
                fix=f"set [{name}].command (e.g. \"python {name}.py\") on the champion",
                key=f"{name}.command",
            )
    # fail closed: where the champion's policy wants a sandbox and none can start, nothing runs
    from evotree.harness.sandbox import require_sandbox

    require_sandbox(cfg.sandbox)
    if heldout and cfg.eval.hide_until_finalize:
        raise InvalidState("this workspace judges the held-out split once, in `evotree finalize` "
                           "([eval] hide_until_finalize, EvoPolicyGym's protocol): `--heldout` is not offered",
                           fix="run without --heldout; a person ends the search with `evotree finalize`")
    snapshot = ws.ledger.snapshot()
    champion = ws.resolve("champion", snapshot)
    # the signed champion a verb pinned (gates.trust.in_force), never the ref as it may stand now
    judge_commit = ws.git.repo[ws.pinned_commit].id if ws.pinned_commit else ws.git.ref_target(CHAMPION_REF)
    if judge_commit is None:
        raise InvalidState("refs/evotree/champion is missing", fix="re-run `evotree init` in a fresh clone")
    from evotree.harness.judge_store import check_judge_commit, judge_in_force

    judge_data = judge_in_force(ws)  # the ledger's judge commit: a hand-moved refs/evotree/judge is not followed
    if judge_data is not None:
        check_judge_commit(ws.git.repo, judge_data)  # present and well-formed, before anything starts
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
    # costly runs need a person's signed approval (the train gate, passed in from the gates layer)
    recheck = authorize(ws, per_version)
    # the preview on a snapshot: refuses early, with the same messages, what the reservation would
    tips = {record.id: tip for record, tip in records}
    limits_of = _plan_limits(cfg, snapshot, per_version, total, live_reservations(snapshot.meta),
                             tips=tips, champion_commit=str(judge_commit), counted=trusted_usage(ws, snapshot))
    for record, tip in records:
        for seed in range(seed_start, seed_start + seeds):
            run_id = f"{record.id}-s{seed}-{now_stamp()}-{secrets.token_hex(3)}"
            plans.append(RunPlan(run_id=run_id, version=record.id, seed=seed, commit=tip,
                                 judge_commit=str(judge_commit), judge_version=champion.id,
                                 limits=limits_of[record.id][0],
                                 judge_splits=("validation", "heldout") if heldout else ("validation",),
                                 judge_data_commit=judge_data))
    if reserve:
        limits_of = _reserve(ws, plans, per_version, total, tips, champion_commit=str(judge_commit),
                             recheck=recheck if callable(recheck) else None)
        for plan in plans:
            plan.limits = limits_of[plan.version][0]
    return plans


def plan_finalize_run(ws: Workspace, version: str, commit: str, *, check: Callable[[LedgerTxn], None],
                      source_run: str | None = None, retrain: bool = False) -> RunPlan:
    """Reserve finalize's one held-out evaluation: a judge-only run of ``commit`` (of ``version``)
    on the ``heldout`` split, against the ``finalize`` account.

    Not charged to the version's or the tree's budget, and not refused when they are spent: its
    limits are the judge's own (``[eval].timeout_seconds``, no step or episode budget: the judge
    plays its whole pool). ``check(txn)`` runs in the reservation's compare-and-swap and raises to
    refuse (finalize: a ``finalize`` event or another finalize run already there), so two
    concurrent requests cannot both reserve one. ``retrain``: the commit's train phase runs first,
    clean, with a fresh random seed (``[eval] finalize_retrain``); its limit is the train and
    judge phases' timeouts together, and it is charged to the ``finalize`` account too.
    """
    cfg = ws.config
    if not cfg.eval.command.strip():
        raise ConfigError("[eval].command is empty in the champion's evotree.toml: there is no judge to run",
                          fix="set [eval].command on the champion", key="eval.command")
    from evotree.harness.sandbox import require_sandbox

    require_sandbox(cfg.sandbox)
    # the signed champion a verb pinned (gates.trust.in_force), never the ref as it may stand now
    judge_commit = ws.git.repo[ws.pinned_commit].id if ws.pinned_commit else ws.git.ref_target(CHAMPION_REF)
    if judge_commit is None:
        raise InvalidState("refs/evotree/champion is missing", fix="re-run `evotree init` in a fresh clone")
    from evotree.harness.judge_store import check_judge_commit, judge_in_force

    judge_data = judge_in_force(ws)
    if judge_data is not None:
        check_judge_commit(ws.git.repo, judge_data)
    champion = ws.resolve("champion")
    wall = cfg.eval.timeout_seconds + (cfg.train.timeout_seconds if retrain else 0)
    limits = RunLimits(wall_seconds=float(wall), max_steps=None, max_episodes=None)
    seed = 1 + secrets.randbelow(2**31 - 1) if retrain else 0  # a fresh seed: no seed of the search reused
    plan = RunPlan(run_id=f"{version}-finalize-{now_stamp()}-{secrets.token_hex(3)}", version=version, seed=seed,
                   commit=commit, judge_commit=str(judge_commit), judge_version=champion.id, limits=limits,
                   judge_splits=("heldout",), judge_data_commit=judge_data, kind="finalize",
                   source_run=None if retrain else source_run, retrain=retrain)
    actor = ws.git.identity()
    owner = process_owner()

    def change(txn: LedgerTxn) -> Event:
        check(txn)
        reservations = dict(txn.meta.get(RESERVATIONS) or {})
        for run_id in _dead_unstarted(reservations):
            del reservations[run_id]
        if any((entry.get("account") or "version") == FINALIZE_ACCOUNT for entry in reservations.values()):
            raise InvalidState("a finalize run is already reserved or running",
                               fix="wait for it (`evotree runs`); the search has one held-out evaluation")
        entry = {"version": version, "seed": seed, "commit": commit, "at": utcnow(), "owner": owner,
                 "limits": limits.to_dict(), "gpus": float(cfg.executor.gpus), "cpus": float(cfg.executor.cpus),
                 "usd_per_hour": usd_per_run_hour(cfg.budget, gpus=cfg.executor.gpus, cpus=cfg.executor.cpus),
                 "account": FINALIZE_ACCOUNT, "started": None}
        reservations[plan.run_id] = entry
        txn.meta[RESERVATIONS] = reservations
        return Event(kind=EventKind.RUN_RESERVED.value, version=version, actor=str(actor),
                     data={"runs": [{"run_id": plan.run_id, "version": version, "seed": seed, "commit": commit,
                                     "limits": limits.to_dict(), "account": FINALIZE_ACCOUNT}], "owner": owner})

    ws.ledger.transact(change, actor=actor)
    return plan


# ---------------------------------------------------------------------------- reservations
def _plan_limits(cfg: Any, txn: LedgerTxn, per_version: Mapping[str, int], total: int,
                 reservations: Mapping[str, Mapping[str, Any]], *, tips: Mapping[str, str],
                 champion_commit: str, counted: TrustedUsage) -> dict[str, tuple[RunLimits, str]]:
    """``{version: (limits, account)}`` for a request, counting ``reservations`` as spent.

    Runs of the champion's promoted commit are checked against its re-run account (``account``
    ``champion_reruns``, :mod:`evotree.harness.budget`); every other run — of another version, or
    of a commit added to the champion's branch since — against its version's usage (``version``).
    Usage is ``counted`` (:func:`evotree.harness.budget.trusted_usage`), never the ledger's cached
    ``meta["usage"]`` or a version record's ``usage``, which a fetched ledger can write.
    """
    champion = txn.meta.get("champion")
    out: dict[str, tuple[RunLimits, str]] = {}
    clock_left = clock_left_seconds(cfg.budget, txn.meta)  # the search clock, read once per request
    ends_at = clock_ends_at(cfg.budget, txn.meta)  # its end: every run's absolute deadline
    for vid, count in per_version.items():
        account = CHAMPION_RERUNS if vid == champion and tips.get(vid) == champion_commit else "version"
        txn.require(vid)
        usage = counted.reruns(vid) if account == CHAMPION_RERUNS else counted.version(vid)
        out[vid] = (plan_limits(
            cfg.budget, version=vid, version_usage=usage, tree_usage=counted.tree,
            version_runs=count, total_runs=total, gpus=cfg.executor.gpus,
            version_reserved=committed(reservations, version=vid, account=account),
            tree_reserved=committed(reservations), account=account,
            cpus=cfg.executor.cpus, clock_left=clock_left, clock_ends_at=ends_at,
        ), account)
    return out


def _reserve(ws: Workspace, plans: list[RunPlan], per_version: Mapping[str, int], total: int,
             tips: Mapping[str, str], *, champion_commit: str,
             recheck: RunRecheck | None) -> dict[str, tuple[RunLimits, str]]:
    """Append ``run.reserved`` for ``plans``: the budgets and ``recheck`` decided in its CAS."""
    cfg = ws.config
    actor = ws.git.identity()
    owner = process_owner()
    decided: dict[str, tuple[RunLimits, str]] = {}

    def change(txn: LedgerTxn) -> Event:
        reservations = dict(txn.meta.get(RESERVATIONS) or {})
        dead = _dead_unstarted(reservations)
        for run_id in dead:
            del reservations[run_id]
        for vid in per_version:
            if txn.require(vid).status == VersionStatus.ABANDONED.value:
                raise InvalidState(f"{vid} was abandoned while its runs were being planned",
                                   fix=f"branch a new version from it: evotree branch --from {vid} -m ...")
        limits_of = _plan_limits(cfg, txn, per_version, total, reservations, tips=tips,
                                 champion_commit=champion_commit, counted=trusted_usage(ws, txn))
        # the worst-case price of an hour of each run, held by its reservation (harness.budget)
        rate = usd_per_run_hour(cfg.budget, gpus=cfg.executor.gpus, cpus=cfg.executor.cpus)
        if recheck is not None:
            recheck(txn, per_version, tips)
        at = utcnow()
        runs = []
        for plan in plans:
            limits, account = limits_of[plan.version]
            entry = {"version": plan.version, "seed": plan.seed, "commit": plan.commit, "at": at,
                     "owner": owner, "limits": limits.to_dict(), "gpus": float(cfg.executor.gpus),
                     "cpus": float(cfg.executor.cpus), "usd_per_hour": rate,
                     "account": account, "started": None}
            reservations[plan.run_id] = entry
            runs.append({"run_id": plan.run_id, "version": plan.version, "seed": plan.seed,
                         "commit": plan.commit, "limits": limits.to_dict(), "account": account})
        txn.meta[RESERVATIONS] = reservations
        decided.clear()
        decided.update(limits_of)
        only = {plan.version for plan in plans}
        return Event(kind=EventKind.RUN_RESERVED.value, version=next(iter(only)) if len(only) == 1 else None,
                     actor=str(actor), data={"runs": runs, "owner": owner,
                                             **({"released": sorted(dead)} if dead else {})})

    ws.ledger.transact(change, actor=actor)
    return dict(decided)


def live_reservations(meta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The reservations of ``meta`` that still count: all but the unstarted ones whose owner died."""
    reservations = dict(meta.get(RESERVATIONS) or {})
    for run_id in _dead_unstarted(reservations):
        del reservations[run_id]
    return reservations


def _dead_unstarted(reservations: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return [run_id for run_id, entry in reservations.items()
            if not entry.get("started") and owner_is_dead(entry.get("owner") or {})]


def release_reservations(ws: Workspace, run_ids: list[str], *, reason: str) -> list[str]:
    """Give back the reservations of ``run_ids`` whose runs have not started (``run.released``).

    Started runs keep theirs (``run.finished`` consumes it); unknown ids are ignored. Appends
    nothing when there is nothing to release. Returns the ids released.
    """
    def unstarted(reservations: Mapping[str, Mapping[str, Any]]) -> list[str]:
        return [r for r in dict.fromkeys(run_ids) if r in reservations and not reservations[r].get("started")]

    if not unstarted(ws.ledger.meta().get(RESERVATIONS) or {}):
        return []
    return _release(ws, unstarted, reason=reason)


def release_dead_reservations(ws: Workspace) -> list[str]:
    """Release the unstarted reservations whose owner is known to be dead (a killed ``evotree
    run`` or server, a reboot): a crash never leaves a reservation that blocks the tree.

    Only owners on this host can be judged (pid, process start time, boot id); another
    machine's reservations are left to that machine's evotree. Started runs of a dead owner are
    :func:`recover_crashed_runs`'s: it finishes them (``crashed``), which consumes theirs.
    """
    if not _dead_unstarted(ws.ledger.meta().get(RESERVATIONS) or {}):
        return []
    return _release(ws, _dead_unstarted, reason="the process that reserved these runs died before they started")


class _NothingToRelease(EvotreeError):
    code = "nothing_to_release"


class _AlreadySettled(EvotreeError):
    code = "already_settled"


def _release(ws: Workspace, pick: Callable[[dict[str, Any]], list[str]], *, reason: str) -> list[str]:
    actor = ws.git.identity()
    released: list[str] = []

    def change(txn: LedgerTxn) -> Event:
        reservations = dict(txn.meta.get(RESERVATIONS) or {})
        ids = pick(reservations)
        if not ids:
            raise _NothingToRelease("nothing to release")
        versions = {reservations[r].get("version") for r in ids}
        for run_id in ids:
            del reservations[run_id]
        txn.meta[RESERVATIONS] = reservations
        released[:] = ids
        return Event(kind=EventKind.RUN_RELEASED.value, version=next(iter(versions)) if len(versions) == 1 else None,
                     actor=str(actor), data={"runs": sorted(ids), "reason": reason})

    try:
        ws.ledger.transact(change, actor=actor)
    except _NothingToRelease:
        return []
    return released


_BOOT_ID = "/proc/sys/kernel/random/boot_id"


def _read(path: str) -> str | None:
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def _pid_state(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks since boot) of ``pid`` from /proc; None: no such process."""
    text = _read(f"/proc/{int(pid)}/stat")
    if not text or ")" not in text:
        return None
    fields_ = text[text.rindex(")") + 2:].split()
    try:
        return fields_[0], int(fields_[19])
    except (IndexError, ValueError):
        return None


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def process_owner() -> dict[str, Any]:
    """Who holds a reservation: this process (pid, its start time, pid namespace), host, boot id, when."""
    state = _pid_state(os.getpid())
    return {"pid": os.getpid(), "pid_start": state[1] if state else None, "pid_ns": _pid_namespace(),
            "host": socket.gethostname(), "boot_id": _read(_BOOT_ID) or "", "at": utcnow()}


def owner_is_dead(owner: Mapping[str, Any]) -> bool:
    """True when the process ``owner`` (:func:`process_owner`) names is known to be gone.

    Judged only on its own host: the machine rebooted (another boot id), or, in the same pid
    namespace, no process has its pid, it is a zombie, or its pid was reused (another start
    time). Another host, another pid namespace or a malformed owner: False (cannot tell).
    """
    if not owner or owner.get("host") != socket.gethostname():
        return False
    boot = _read(_BOOT_ID) or ""
    if boot and owner.get("boot_id") and owner.get("boot_id") != boot:
        return True
    if (owner.get("pid_ns") or "") != _pid_namespace():
        return False
    try:
        pid = int(owner["pid"])
    except (KeyError, TypeError, ValueError):
        return False
    state = _pid_state(pid)
    if state is None or state[0] in ("Z", "X"):
        return True
    return owner.get("pid_start") is not None and state[1] != owner.get("pid_start")


def outcome_status(outcome: str) -> str:
    """The run status of a phase outcome (ok / failed / budget / cancelled / invalid)."""
    return {
        "ok": RunStatus.SUCCEEDED, "failed": RunStatus.FAILED, "budget": RunStatus.BUDGET_EXCEEDED,
        "cancelled": RunStatus.CANCELLED, "invalid": RunStatus.INVALID,
    }[outcome].value


def finish_run(ws: Workspace, record: RunRecord, paths: RunPaths, started: float | None,
               wall_seconds: float | None = None, *, charge: bool = True, complete: bool = True) -> None:
    """Compact evidence, compute headline and usage, write run.json, append run.finished.

    ``complete=False`` (a remote run whose evidence did not all arrive): what arrived is kept
    and compacted for inspection, but the run gets no headline and ``evidence.complete`` is
    false, so partial evidence is never taken for a result.
    """
    from evotree.harness.evidence import compact_run

    record.ended_at = utcnow()
    record.wall_seconds = round(wall_seconds if wall_seconds is not None else time.monotonic() - (started or 0), 3)
    try:
        result = compact_run(paths.root)
        record.evidence = _evidence_summary(result)
    except Exception as exc:  # noqa: BLE001 - evidence problems must not lose the run record
        record.notes.append(f"compaction failed: {type(exc).__name__}: {exc}")
    if not complete:
        record.evidence["complete"] = False
    con = _duck()  # one in-memory connection for both summaries
    try:
        record.headline = _headline(con, paths) if complete else None
        steps, episodes = _train_counts(con, paths)
    finally:
        con.close()
    # invalid submissions cost nothing unless [budget] charge_invalid; a run is charged at most its
    # wall limit, at the prices in force (harness.budget.charge_run: it never ends above a budget)
    charge = charge and (record.status != RunStatus.INVALID.value or ws.config.budget.charge_invalid)
    (record.train_seconds, record.train_cpu_seconds, record.judge_train_seconds,
     record.judge_train_cpu_seconds) = training_seconds(record.phases, judge_trains=ws.config.eval.judge_trains)
    record.usage = {}
    if charge:
        record.usage, charge_notes = charge_run(
            ws.config.budget, wall_seconds=record.wall_seconds, limits=record.limits,
            gpus=ws.config.executor.gpus, cpus=ws.config.executor.cpus, steps=steps, episodes=episodes,
            train_seconds=record.train_seconds, judge_train_seconds=record.judge_train_seconds)
        record.notes.extend(charge_notes)
    if record.status == RunStatus.SUCCEEDED.value and record.headline is None:
        mistake = _judge_mistake(paths) if complete else None
        if mistake is not None:  # the judge ran and recorded something unusable: not a success
            record.status = RunStatus.FAILED.value
            record.error = mistake
        else:
            record.notes.append("the judge recorded no eval results: this run has no score (not a score of 0)")
    budget = ws.config.budget
    tail = log_tail_note(record, paths)
    if tail:
        record.notes.append(tail)
    record.notes.extend(budget_cut_notes(record.limits, steps=steps, episodes=episodes, whole={
        "max_steps": min([x for x in (budget.max_steps, budget.tree_max_steps) if x] or [0]),
        "max_episodes": min([x for x in (budget.max_episodes, budget.tree_max_episodes) if x] or [0])}))
    # the evidence as it is now, bound to the ledger: a run directory deleted or edited later is
    # found by evotree.harness.integrity (the score gate and compare count every started run)
    manifest = evidence_manifest(paths.root, record.to_dict())
    record.evidence["digest"] = manifest["digest"]
    record.save(paths.record)
    _ledger_run_finished(ws, record, manifest)


#: The phases whose time is training; the judge phase (``eval``) too where ``[eval] judge_trains``.
TRAINING_PHASES = ("prepare", "train")


def training_seconds(phases: Mapping[str, Mapping[str, Any]], *, judge_trains: bool) -> tuple[float, float, float, float]:
    """(train wall, train CPU, judge-phase train wall, judge-phase train CPU) seconds of a run.

    From the phases' ``wall_seconds`` / ``cpu_seconds``, which evotree measures outside the
    sandbox (the monotonic clock and ``wait4``'s rusage of the phase's whole process tree),
    never from what a phase reports about itself. ``judge_trains``: the champion's ``[eval]
    judge_trains`` — the judge phase runs the fixed training (RSIBench-Data's shape), so its
    time is training time too."""

    def measured(phase: str, key: str) -> float:
        value = (phases.get(phase) or {}).get(key)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return max(0.0, float(value)) if ok else 0.0

    wall = sum(measured(p, "wall_seconds") for p in TRAINING_PHASES)
    cpu = sum(measured(p, "cpu_seconds") for p in TRAINING_PHASES)
    judge_wall = measured("eval", "wall_seconds") if judge_trains else 0.0
    judge_cpu = measured("eval", "cpu_seconds") if judge_trains else 0.0
    return (round(wall + judge_wall, 3), round(cpu + judge_cpu, 3), round(judge_wall, 3), round(judge_cpu, 3))


def budget_cut_notes(limits: Mapping[str, Any] | None, *, steps: int, episodes: int,
                     whole: Mapping[str, int]) -> list[str]:
    """The notes of a run that used every episode or step of a budget *share* (less than the whole
    budget ``whole``: the budget left, split over the request's runs): it may have been cut short,
    which its note says instead of passing for a plain success."""
    notes = []
    for unit, used, key in (("episodes", episodes, "max_episodes"), ("steps", steps, "max_steps")):
        cap = (limits or {}).get(key)
        if not isinstance(cap, int) or isinstance(cap, bool) or cap <= 0 or used < cap:
            continue
        if whole.get(key) and cap >= whole[key]:
            continue  # it had the whole budget: using all of it is the recipe's choice
        notes.append(f"budget-limited: it used all {cap} {unit} it was allowed (the budget.{key} left, split over "
                     f"the request's runs); a recipe that wanted more was cut short (its logs say: evotree logs "
                     f"RUN) — raise budget.{key} or run fewer seeds")
    return notes


# ---------------------------------------------------------------------------- evidence manifest
#: run.json fields bound by a run's manifest: what the score gate and compare read from run.json.
BOUND_FIELDS = ("run_id", "version", "seed", "status", "commit", "judge_commit", "judge_version",
                "judge_data_commit", "started_at", "headline")
MANIFEST_VERSION = 1
#: At most this many files are listed one by one in the ledger (beyond, only the digest).
MANIFEST_MAX_LISTED = 256
_HASH_CHUNK = 1 << 20


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def _sha256_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def _file_entry(path: Path) -> str:
    """``sha256:<hex>`` of a regular file, ``link:<sha256 of its target>`` of a link (never
    followed), ``special:<kind>`` of anything else (a FIFO is never opened)."""
    import hashlib
    import stat as st

    info = os.lstat(path)
    if st.S_ISLNK(info.st_mode):
        return "link:" + _sha256_bytes(os.fsencode(os.readlink(path)))
    if not st.S_ISREG(info.st_mode):
        return "special:" + ("dir" if st.S_ISDIR(info.st_mode) else oct(st.S_IFMT(info.st_mode)))
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(_HASH_CHUNK):
            digest.update(chunk)
    return "sha256:" + digest.hexdigest()


def evidence_files(run_dir: Path) -> dict[str, str]:
    """Every evidence file of a run directory -> its :func:`_file_entry`.

    The evidence is ``<kind>.parquet`` at the top and everything under ``evidence/`` (JSONL of
    every phase, the audit sidecars). Links are listed, never followed; a linked ``evidence``
    directory is one entry.
    """
    from evotree.harness.layout import KINDS

    root = Path(run_dir)
    out: dict[str, str] = {}
    for kind in KINDS:
        path = root / f"{kind}.parquet"
        if os.path.lexists(path):
            out[path.name] = _file_entry(path)
    evidence = root / "evidence"
    if os.path.islink(evidence):
        out["evidence"] = _file_entry(evidence)
    elif evidence.is_dir():
        for folder, dirs, files in os.walk(evidence, followlinks=False):
            base = Path(folder)
            for name in sorted(files) + sorted(d for d in dirs if os.path.islink(base / d)):
                path = base / name
                out[path.relative_to(root).as_posix()] = _file_entry(path)
    return dict(sorted(out.items()))


def record_binding(data: Mapping[str, Any]) -> str:
    """sha256 of the :data:`BOUND_FIELDS` of a run record (as a dict: run.json's content)."""
    return _sha256_bytes(_canonical({k: data.get(k) for k in BOUND_FIELDS}))


def manifest_digest(files: Mapping[str, str], record: str) -> str:
    """The one hash over a manifest: its files and its record binding."""
    return "sha256:" + _sha256_bytes(_canonical({"v": MANIFEST_VERSION, "files": dict(files), "record": record}))


def evidence_manifest(run_dir: Path, record: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest ``run.finished`` records: ``{"v", "files", "record", "digest", "host"}``.

    ``files``: every evidence file (:func:`evidence_files`) with its sha256; ``record``: the hash
    of run.json's :data:`BOUND_FIELDS`; ``digest``: one hash over both (:func:`manifest_digest`).
    Never raises: an unreadable file is listed as ``error:<reason>`` (and will not match later).
    """
    try:
        files = evidence_files(run_dir)
    except OSError as exc:
        files = {"<unreadable>": f"error:{type(exc).__name__}"}
    bound = record_binding(record)
    manifest: dict[str, Any] = {"v": MANIFEST_VERSION, "n_files": len(files), "record": bound,
                                "digest": manifest_digest(files, bound), "host": socket.gethostname()}
    if len(files) <= MANIFEST_MAX_LISTED:  # a run that wrote thousands of files keeps its digest only
        manifest["files"] = files
    return manifest


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
        "SELECT split, avg(score) FILTER (WHERE isfinite(score)), count(*), count(score) FILTER (WHERE isfinite(score)) "
        "FROM read_parquet(?) WHERE phase = 'eval' GROUP BY split", [str(evals)]
    ).fetchall()
    by_split = {split: (mean, n, scored) for split, mean, n, scored in rows}
    for split in HEADLINE_SPLITS:
        if split in by_split and by_split[split][2] > 0:
            mean, n, scored = by_split[split]
            return {"metric": f"{split}/mean_score", "value": float(mean), "n": int(n), "scored": int(scored)}
    return None


def _judge_mistake(paths: RunPaths) -> str | None:
    """Why the judge's results give no score although it recorded some (None: it recorded none):
    results on no split a headline is read from (a misspelled split), or no finite score."""
    evals = paths.parquet("evals")
    if not evals.exists():
        return None
    con = _duck()
    try:
        rows = con.execute("SELECT split, count(*), count(score) FILTER (WHERE isfinite(score)) FROM read_parquet(?) "
                           "WHERE phase = 'eval' GROUP BY split ORDER BY split", [str(evals)]).fetchall()
    finally:
        con.close()
    if not rows:
        return None
    known = [(split, n, finite) for split, n, finite in rows if split in HEADLINE_SPLITS]
    if not known:
        listed = ", ".join(f"{split!r} ({n})" for split, n, _ in rows[:5])
        return (f"the judge recorded {sum(n for _, n, _ in rows)} eval result(s), all on split(s) {listed}, none on "
                f"{', '.join(HEADLINE_SPLITS)}: a misspelled split? (a judge mistake: this run has no score)")
    total = sum(n for _, n, _ in known)
    return (f"the judge recorded {total} eval result(s) on {', '.join(s for s, _, _ in known)}, none with a finite "
            "score (NaN or infinite): a judge mistake, this run has no score")


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

    owner = process_owner()
    gpus = float(ws.config.executor.gpus)
    from evotree.core.errors import EvotreeError
    from evotree.harness.patch import patch_digest

    try:  # the patch this run trains, against the pristine base: its hash in the ledger
        patch: dict[str, Any] = patch_digest(ws, record.version, commit=record.commit)
    except EvotreeError as exc:
        patch = {"error": exc.code, "message": exc.message}
    except Exception as exc:  # noqa: BLE001 - a record of the patch must never stop a run that was authorized
        patch = {"error": type(exc).__name__, "message": str(exc)[:300]}
    from evotree.core.interventions import intervention_record

    intervention = intervention_record(ws, record.version, commit=record.commit)  # None without rules; never raises

    def change(txn: LedgerTxn) -> Event:
        version = txn.require(record.version)
        if record.kind != "finalize":  # the held-out evaluation is no run of the version's search
            version.runs = [r for r in version.runs if r["run_id"] != record.run_id] + [
                {"run_id": record.run_id, "seed": record.seed, "status": record.status, "headline": None}
            ]
            if version.status != VersionStatus.ABANDONED.value:
                version.status = VersionStatus.RUNNING.value
            version.updated_at = utcnow()
            txn.put(version)
        # the run keeps its reservation until run.finished; a run that starts without one (a Ray
        # retry, an executor driven directly) gets one now, so other requests count it too
        reservations = dict(txn.meta.get(RESERVATIONS) or {})
        at = utcnow()
        entry = dict(reservations.get(record.run_id) or {
            "version": record.version, "seed": record.seed, "commit": record.commit, "at": at,
            "limits": record.limits, "gpus": gpus, "reserved": False, "cpus": float(ws.config.executor.cpus),
            "usd_per_hour": usd_per_run_hour(ws.config.budget, gpus=gpus, cpus=ws.config.executor.cpus),
            "account": FINALIZE_ACCOUNT if record.kind == "finalize"
            else CHAMPION_RERUNS if txn.meta.get("champion") == record.version == record.judge_version
            and record.commit == record.judge_commit else "version"})
        entry.update(started=at, owner=owner)
        reservations[record.run_id] = entry
        txn.meta[RESERVATIONS] = reservations
        return Event(kind=EventKind.RUN_STARTED.value, version=record.version, actor=str(actor),
                     data={"run_id": record.run_id, "seed": record.seed, "commit": record.commit,
                           "judge_commit": record.judge_commit, "judge_data_commit": record.judge_data_commit,
                           "limits": record.limits, "patch": patch,
                           **({"intervention": intervention} if intervention is not None else {}),
                           **({"account": entry["account"]} if entry.get("account") != "version" else {})})

    ws.ledger.transact(change, actor=actor)


def _ledger_run_finished(ws: Workspace, record: RunRecord, manifest: dict[str, Any] | None = None, *,
                         reserved: bool = False) -> None:
    """Append ``run.finished``; ``manifest`` (:func:`evidence_manifest`) is recorded as ``evidence``.

    ``reserved``: only while the run still holds its reservation (:class:`_AlreadySettled`
    otherwise: another process settled it first). The event carries ``provenance``
    (:func:`evotree.harness.provenance.attest_run`): what makes the run count here.
    """
    from evotree.harness.provenance import attest_run

    actor = ws.git.identity()
    provenance = attest_run(ws, record, manifest)

    def change(txn: LedgerTxn) -> Event:
        if reserved and record.run_id not in (txn.meta.get(RESERVATIONS) or {}):
            raise _AlreadySettled(f"{record.run_id} was settled by another process")
        version = txn.require(record.version)
        # the run's reservation is consumed: from now on its usage counts, not its limits
        reservations = dict(txn.meta.get(RESERVATIONS) or {})
        reservation = reservations.pop(record.run_id, None) or {}
        if RESERVATIONS in txn.meta or reservation:
            txn.meta[RESERVATIONS] = reservations
        account = reservation.get("account") or (FINALIZE_ACCOUNT if record.kind == "finalize" else "version")
        if account == FINALIZE_ACCOUNT:
            # finalize's held-out evaluation: charged to its own account, never to the version's or
            # the tree's budget (harness.budget), and no run of the version's search
            txn.meta[FINALIZE_USAGE] = add_usage(txn.meta.get(FINALIZE_USAGE), record.usage)
            return Event(kind=EventKind.RUN_FINISHED.value, version=record.version, actor=str(actor),
                         data={"run_id": record.run_id, "seed": record.seed, "status": record.status,
                               "headline": record.headline, "usage": record.usage, "error": record.error,
                               "account": account, **({"evidence": manifest} if manifest is not None else {}),
                               "provenance": provenance})
        version.runs = [r for r in version.runs if r["run_id"] != record.run_id] + [
            {"run_id": record.run_id, "seed": record.seed, "status": record.status, "headline": record.headline}
        ]
        version.usage = add_usage(version.usage, record.usage)
        txn.meta["usage"] = add_usage(txn.meta.get("usage"), record.usage)
        if account == CHAMPION_RERUNS:  # checked against the champion's re-run account (harness.budget)
            reruns = dict(txn.meta.get(CHAMPION_RERUNS) or {})
            reruns[record.version] = add_usage(reruns.get(record.version), record.usage)
            txn.meta[CHAMPION_RERUNS] = reruns
        _refresh_version_status(version)
        version.updated_at = utcnow()
        txn.put(version)
        return Event(kind=EventKind.RUN_FINISHED.value, version=record.version, actor=str(actor),
                     data={"run_id": record.run_id, "seed": record.seed, "status": record.status,
                           "headline": record.headline, "usage": record.usage, "error": record.error,
                           **({"account": account} if account != "version" else {}),
                           **({"evidence": manifest} if manifest is not None else {}),
                           "provenance": provenance})

    ws.ledger.transact(change, actor=actor)


def _refresh_version_status(version: Any) -> None:
    """A version's status and headline from its runs (mean over scored runs of one metric)."""
    if version.status == VersionStatus.ABANDONED.value:
        return
    runs = [r for r in version.runs  # ingested runs are evidence and invalid ones cost nothing: not attempts
            if r["status"] not in (RunStatus.INGESTED.value, RunStatus.INVALID.value)]
    if not runs:
        invalid = [r for r in version.runs if r["status"] == RunStatus.INVALID.value]
        if invalid:  # an invalid candidate is shown as such in the tree, not as "active"
            version.status = VersionStatus.FAILED.value
            version.reason = (f"invalid candidate: {len(invalid)} run(s) refused as invalid submissions (exit 65); "
                              f"fix it and commit, then run it again")
        elif version.status == VersionStatus.RUNNING.value:
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
                        record.notes.append(f"removed {len(removed)} judge folder(s) the dead driver left: "
                                            + ", ".join(removed))
                    record.status = RunStatus.CRASHED.value
                    record.error = ("the process driving this run died (killed or crashed) before it "
                                    "finished; what it recorded is kept")
                    complete = True
                    if record.executor.get("kind") == "ray":  # its evidence is in the store
                        complete = False
                        _import_remote_evidence(record, paths)
                    last = max((p.stat().st_mtime for p in paths.root.rglob("*") if p.is_file()),
                               default=time.time())
                    started = datetime.fromisoformat(record.started_at).timestamp()
                    finish_run(ws, record, paths, None, wall_seconds=max(0.0, last - started), complete=complete)
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
        if not entry.get("started") or os.path.lexists(active / run_id) or not owner_is_dead(entry.get("owner") or {}):
            continue
        paths = RunPaths(runs_dir(ws) / run_id)
        try:
            record = RunRecord.load(paths.record)
        except (OSError, ValueError, TypeError):
            record = None
        if record is not None and record.status != RunStatus.RUNNING.value and record.ended_at:
            # finished on disk, killed before its run.finished landed: record it as it is
            try:
                _ledger_run_finished(ws, record, evidence_manifest(paths.root, record.to_dict()), reserved=True)
            except EvotreeError:
                continue
            marked.append(run_id)
            continue
        if record is None:
            record = RunRecord(run_id=run_id, version=str(entry.get("version")), seed=int(entry.get("seed") or 0),
                               status=RunStatus.RUNNING.value, commit=str(entry.get("commit") or ""),
                               judge_commit=None, judge_version=None, train_command="", eval_command="",
                               started_at=str(entry.get("started")), limits=dict(entry.get("limits") or {}))
            record.notes.append("its run directory is gone: finished from its reservation")
        record.status = RunStatus.CRASHED.value
        record.error = ("the process driving this run died before it finished, and left no .active marker "
                        "to recover it by")
        record.ended_at = utcnow()
        record.headline = None
        record.usage = {"runs": 1}  # what it spent beyond the run is unknown: it is charged as a run
        try:
            _ledger_run_finished(ws, record, reserved=True)
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
        owners.append(stem)  # <run_id>-<word>-XXXXXXXX (or a run id ending in letters: both are checked)
    return owners


def remove_judge_leftovers(root: Path, run_id: str | None = None, *, active: Path | None = None) -> list[str]:
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
            if not (entry.name.startswith(run_id + "-") and _JUDGE_REST.match(entry.name[len(run_id) + 1:])):
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
    import shutil
    import stat as st

    if path.is_symlink() or not path.is_dir():
        path.unlink(missing_ok=True)
        return not os.path.lexists(path)

    def retry(func: Any, name: str, _exc: Any) -> None:  # a judge may leave read-only folders behind
        try:
            os.chmod(os.path.dirname(name), st.S_IRWXU)
            if os.path.isdir(name) and not os.path.islink(name):
                os.chmod(name, st.S_IRWXU)
            func(name)
        except OSError:
            pass

    shutil.rmtree(path, onexc=retry) if sys.version_info >= (3, 12) else shutil.rmtree(path, onerror=retry)
    return not os.path.lexists(path)


def _import_remote_evidence(record: RunRecord, paths: RunPaths) -> None:
    """Copy what a crashed driver's Ray run had put in the evidence store (kept as incomplete)."""
    uri = record.executor.get("evidence_uri")
    if not uri:
        return
    try:
        from evotree.harness.executors.store import EvidenceStore

        fetched = EvidenceStore(uri).fetch(record.run_id, paths.root)
        record.notes.append(f"imported {len(fetched.files)} file(s) from the evidence store {uri}; "
                            "incomplete: the driver died before the run ended")
    except Exception as exc:  # noqa: BLE001 - recovery must mark the run whatever the store does
        record.notes.append(f"the evidence store {uri} could not be read: {type(exc).__name__}: {exc}")


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


# ---------------------------------------------------------------------------- logs
#: the phases whose output a run keeps under logs/, in the order they run
LOG_PHASES = ("prepare", "train", "eval")


def _last_lines(path: Path, count: int, *, max_bytes: int = 1 << 20) -> tuple[list[str], bool]:
    """The last ``count`` lines of ``path`` (reading at most its last ``max_bytes``), and whether more precede."""
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except OSError:
        return [], False
    lines = data.decode("utf-8", errors="replace").splitlines()
    more = size > max_bytes or len(lines) > count
    return lines[-count:] if count else [], more


def log_tail_note(record: RunRecord, paths: RunPaths, *, lines: int = 3, width: int = 400) -> str | None:
    """For a run that failed in a phase (invalid, failed, stopped): the last lines of that phase's
    stderr (stdout when stderr is empty), so the cause is in the run's note, not only in a file."""
    if record.status in (RunStatus.SUCCEEDED.value, RunStatus.INGESTED.value, RunStatus.RUNNING.value,
                         RunStatus.CANCELLED.value):
        return None
    failing = [name for name, phase in record.phases.items()
               if isinstance(phase, dict) and phase.get("returncode") not in (0, None)]
    phase = failing[-1] if failing else next(reversed(record.phases), None)
    if phase is None:
        return None
    for stream in ("err", "out"):
        tail, _ = _last_lines(paths.log(phase, stream), 50, max_bytes=1 << 16)
        tail = [line.strip() for line in tail if line.strip()][-lines:]
        if tail:
            text = " | ".join(tail)
            if len(text) > width:  # the last line is the error's own message: keep its beginning
                text = tail[-1] if len(tail[-1]) <= width else tail[-1][: width - 1] + "…"
            return f"{phase}.{stream} ends: {text}"
    return None


@dataclass
class RunLogs:
    """``evotree logs RUN``: the tails of a run's phase logs (schema: ``logs.schema.json``)."""

    run_id: str
    version: str | None
    status: str | None
    error: str | None
    logs: list[dict[str, Any]]
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def find_run_dir(ws: Workspace, run_id: str) -> Path:
    """The directory of run ``run_id`` (or of the one run whose id starts with it); :class:`UnknownRun` otherwise."""
    base = runs_dir(ws)
    if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith(".") or "\0" in run_id:
        raise UnknownRun(f"{run_id!r} is not a run id", fix="`evotree runs` lists the run ids", run_id=run_id)
    exact = base / run_id
    if (exact / "run.json").is_file():
        return exact
    found = sorted(p for p in base.glob(f"{glob_escape(run_id)}*") if (p / "run.json").is_file()) \
        if base.is_dir() else []
    if len(found) == 1:
        return found[0]
    if found:
        raise UnknownRun(f"{run_id!r} names {len(found)} runs: {', '.join(p.name for p in found[:5])}"
                         + (" …" if len(found) > 5 else ""), fix="type more of the run id", run_id=run_id)
    raise UnknownRun(f"no run {run_id!r} on this machine (under {base})", fix="`evotree runs` lists the run ids",
                     run_id=run_id)


def glob_escape(text: str) -> str:
    """``text`` with glob's special characters taken literally."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def run_logs(ws: Workspace, run_id: str, *, phase: str | None = None, tail: int = 50) -> RunLogs:
    """The last ``tail`` lines (0: all) of each phase's stdout and stderr of a run (one ``phase`` only if given)."""
    if phase is not None and phase not in LOG_PHASES:
        from evotree.core.errors import UsageError

        raise UsageError(f"--phase {phase!r}: expected one of {', '.join(LOG_PHASES)}", fix="e.g. --phase train")
    root = find_run_dir(ws, run_id)
    paths = RunPaths(root)
    try:
        record: RunRecord | None = RunRecord.load(paths.record)
    except (OSError, ValueError):
        record = None
    logs = []
    for name in [phase] if phase else LOG_PHASES:
        for stream in ("out", "err"):
            path = paths.log(name, stream)
            if not path.is_file():
                continue
            lines, more = _last_lines(path, tail if tail else 10**9, max_bytes=(1 << 20) if tail else 1 << 40)
            logs.append({"phase": name, "stream": stream, "path": str(path), "lines": lines, "truncated": more})
    return RunLogs(run_id=root.name, version=record.version if record else None,
                   status=record.status if record else None, error=record.error if record else None, logs=logs)


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
