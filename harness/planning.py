"""Planning a request's runs and reserving them in the ledger.

:func:`plan_runs` checks every requested run (the train gate through its ``authorize`` callback,
the sandbox, the judge in force, abandoned versions, dirty worktrees, budgets) before anything
starts, and with ``reserve=True`` appends one ``run.reserved`` event whose compare-and-swap
decides the budgets again on the state it writes on. :func:`plan_finalize_run` reserves
finalize's one held-out evaluation. The reservation book itself (releasing, which reservations
still count) is :mod:`evotree.harness.reservations`.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from evotree.core.errors import ConfigError, DirtyState, InvalidState
from evotree.core.events import ABSENT, RunReserved
from evotree.core.ledger import Event, LedgerTxn, VersionStatus, utcnow
from evotree.core.proc import process_owner
from evotree.core.refs import CHAMPION_REF, branch_ref
from evotree.core.workspace import Workspace
from evotree.harness.budget import (
    CHAMPION_RERUNS,
    FINALIZE_ACCOUNT,
    RunLimits,
    TrustedUsage,
    clock_ends_at,
    clock_left_seconds,
    committed,
    plan_limits,
    trusted_usage,
    usd_per_run_hour,
)
from evotree.harness.records import RunPlan, now_stamp
from evotree.harness.reservations import (
    RESERVATIONS,
    counted_reservations,
    dead_unstarted,
    held_reservations,
    reservation_marks,
)
from evotree.harness.sandbox import require_sandbox
from evotree.harness.judge_store import check_judge_commit
from evotree.harness.judge_store import judge_in_force

__all__ = ["RunRecheck", "RunAuthorizer", "plan_runs", "plan_finalize_run"]

#: Re-checks an authorization inside the reservation's ledger transaction, against that
#: transaction's state: ``(txn, {version: runs}, {version: commit}) -> None``, raising to refuse.
RunRecheck = Callable[[LedgerTxn, Mapping[str, int], Mapping[str, str]], None]
#: Decides whether a request may train: ``(workspace, {version: runs})``, raising to refuse. It may
#: return a :data:`RunRecheck`, which the reservation calls in its compare-and-swap (so concurrent
#: requests cannot each pass on the same allowance); anything else it returns is ignored.
RunAuthorizer = Callable[["Workspace", Mapping[str, int]], Any]


def plan_runs(
    ws: Workspace,
    versions: list[str],
    *,
    authorize: RunAuthorizer,
    seeds: int = 1,
    heldout: bool = False,
    seed_start: int = 0,
    reserve: bool = False,
) -> list[RunPlan]:
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
    _check_request(ws, seeds=seeds, seed_start=seed_start, heldout=heldout)
    cfg = ws.config
    snapshot = ws.ledger.snapshot()
    champion = ws.resolve("champion", snapshot)
    judge_commit, judge_data = _judge_in_force(ws)
    records = [_runnable(ws, name, snapshot) for name in versions]
    total = len(records) * seeds
    plans: list[RunPlan] = []
    per_version: dict[str, int] = {}
    for record, _ in records:
        per_version[record.id] = per_version.get(record.id, 0) + seeds
    # costly runs need a person's signed approval (the train gate, passed in from the gates layer)
    recheck = authorize(ws, per_version)
    # the preview on a snapshot: refuses early, with the same messages, what the reservation would
    tips = {record.id: tip for record, tip in records}
    limits_of = _plan_limits(
        cfg,
        snapshot,
        per_version,
        total,
        counted_reservations(ws, snapshot.meta),
        tips=tips,
        champion_commit=str(judge_commit),
        counted=trusted_usage(ws, snapshot),
    )
    judge = _Judge(str(judge_commit), champion.id, judge_data)
    splits = ("validation", "heldout") if heldout else ("validation",)
    for record, tip in records:
        for seed in range(seed_start, seed_start + seeds):
            plans.append(_run_plan(record.id, seed, tip, limits_of[record.id][0], judge, splits))
    if reserve:
        limits_of = _reserve(
            ws,
            plans,
            per_version,
            total,
            tips,
            champion_commit=str(judge_commit),
            recheck=recheck if callable(recheck) else None,
        )
        for plan in plans:
            plan.limits = limits_of[plan.version][0]
    return plans


@dataclass(frozen=True)
class _Judge:
    """What judges a request's runs: the champion's commit and version, the judge data commit."""

    commit: str
    version: str
    data_commit: str | None


def _run_plan(
    version: str,
    seed: int,
    tip: str,
    limits: RunLimits,
    judge: _Judge,
    splits: tuple[str, ...],
) -> RunPlan:
    """The plan of one run of ``version`` at ``tip`` with ``seed`` (a fresh, unique run id)."""
    run_id = f"{version}-s{seed}-{now_stamp()}-{secrets.token_hex(3)}"
    return RunPlan(
        run_id=run_id,
        version=version,
        seed=seed,
        commit=tip,
        judge_commit=judge.commit,
        judge_version=judge.version,
        limits=limits,
        judge_splits=splits,
        judge_data_commit=judge.data_commit,
    )


def _check_request(ws: Workspace, *, seeds: int, seed_start: int, heldout: bool) -> None:
    """Refuse a request that cannot run at all: bad seed counts, empty commands, no sandbox
    where one is required, ``--heldout`` where the held-out split waits for finalize."""
    if seeds < 1:
        raise InvalidState(
            f"--seeds: expected at least 1, actually: {seeds}", fix="pass --seeds 1 or more"
        )
    if seed_start < 0:
        raise InvalidState(
            f"--seed-start: expected 0 or more, actually: {seed_start}",
            fix="pass --seed-start 0 or more",
        )
    cfg = ws.config
    for name, phase in (("train", cfg.train), ("eval", cfg.eval)):
        if not phase.command.strip():
            raise ConfigError(
                f"[{name}].command is empty in the champion's evotree.toml: there is nothing to run",
                fix=f'set [{name}].command (e.g. "python {name}.py") on the champion',
                key=f"{name}.command",
            )
    # fail closed: where the champion's policy wants a sandbox and none can start, nothing runs

    require_sandbox(cfg.sandbox)
    if heldout and cfg.eval.hide_until_finalize:
        raise InvalidState(
            "this workspace judges the held-out split once, in `evotree finalize` "
            "([eval] hide_until_finalize, EvoPolicyGym's protocol): `--heldout` is not offered",
            fix="run without --heldout; a person ends the search with `evotree finalize`",
        )


def _judge_in_force(ws: Workspace) -> tuple[Any, str | None]:
    """(the champion commit that judges, the judge store's commit in force or None), both checked."""
    # the signed champion a verb pinned (gates.trust.in_force), never the ref as it may stand now
    judge_commit = (
        ws.git.repo[ws.pinned_commit].id if ws.pinned_commit else ws.git.ref_target(CHAMPION_REF)
    )
    if judge_commit is None:
        raise InvalidState(
            "refs/evotree/champion is missing", fix="re-run `evotree init` in a fresh clone"
        )

    judge_data = judge_in_force(
        ws
    )  # the ledger's judge commit: a hand-moved refs/evotree/judge is not followed
    if judge_data is not None:
        check_judge_commit(
            ws.git.repo, judge_data
        )  # present and well-formed, before anything starts
    return judge_commit, judge_data


def _runnable(ws: Workspace, name: str, snapshot: LedgerTxn) -> tuple[Any, str]:
    """(version record, branch tip) of a version that may run: not abandoned, its worktree
    clean, its branch present."""
    record = ws.resolve(name, snapshot)
    if record.status == VersionStatus.ABANDONED.value:
        raise InvalidState(
            f"{record.id} is abandoned ({record.reason}); it is kept as evidence, not run",
            fix=f"branch a new version from it: evotree branch --from {record.id} -m ...",
        )
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
        raise InvalidState(
            f"branch {record.branch} of {record.id} is missing",
            fix=f"restore it: git branch {record.branch} {record.base_commit}",
        )
    return record, str(tip)


def plan_finalize_run(
    ws: Workspace,
    version: str,
    commit: str,
    *,
    check: Callable[[LedgerTxn], None],
    source_run: str | None = None,
    retrain: bool = False,
) -> RunPlan:
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
        raise ConfigError(
            "[eval].command is empty in the champion's evotree.toml: there is no judge to run",
            fix="set [eval].command on the champion",
            key="eval.command",
        )

    require_sandbox(cfg.sandbox)
    judge_commit, judge_data = _judge_in_force(ws)
    champion = ws.resolve("champion")
    wall = cfg.eval.timeout_seconds + (cfg.train.timeout_seconds if retrain else 0)
    limits = RunLimits(wall_seconds=float(wall), max_steps=None, max_episodes=None)
    seed = (
        1 + secrets.randbelow(2**31 - 1) if retrain else 0
    )  # a fresh seed: no seed of the search reused
    plan = RunPlan(
        run_id=f"{version}-finalize-{now_stamp()}-{secrets.token_hex(3)}",
        version=version,
        seed=seed,
        commit=commit,
        judge_commit=str(judge_commit),
        judge_version=champion.id,
        limits=limits,
        judge_splits=("heldout",),
        judge_data_commit=judge_data,
        kind="finalize",
        source_run=None if retrain else source_run,
        retrain=retrain,
    )
    actor = ws.git.identity()
    owner = process_owner()

    def change(txn: LedgerTxn) -> Event:
        check(txn)
        reservations = held_reservations(txn.meta)
        _drop_dead(reservations)
        # only reservations this workspace made (or a live process here holds) block it
        counted = counted_reservations(ws, {RESERVATIONS: reservations})
        if any(
            (entry.get("account") or "version") == FINALIZE_ACCOUNT for entry in counted.values()
        ):
            raise InvalidState(
                "a finalize run is already reserved or running",
                fix="wait for it (`evotree runs`); the search has one held-out evaluation",
            )
        rate = usd_per_run_hour(cfg.budget, gpus=cfg.executor.gpus, cpus=cfg.executor.cpus)
        reservations[plan.run_id] = _reservation(
            ws, plan, limits, FINALIZE_ACCOUNT, at=utcnow(), owner=owner, rate=rate
        )
        txn.meta[RESERVATIONS] = reservations
        runs = [_reserved_run(plan, limits, FINALIZE_ACCOUNT)]
        return Event.of(RunReserved(runs=runs, owner=owner), version=version, actor=str(actor))

    ws.ledger.transact(change, actor=actor)
    return plan


def _drop_dead(reservations: dict[str, Any]) -> list[str]:
    """Remove the reservations whose owner died before their run started; return their ids."""
    dead = dead_unstarted(reservations)
    for run_id in dead:
        del reservations[run_id]
    return dead


def _reservation(
    ws: Workspace,
    plan: RunPlan,
    limits: RunLimits,
    account: str,
    *,
    at: str,
    owner: Any,
    rate: float,
) -> dict[str, Any]:
    """The reservation book's entry of ``plan``: what it may spend, at what price, by whom."""
    cfg = ws.config
    entry = {
        "version": plan.version,
        "seed": plan.seed,
        "commit": plan.commit,
        "at": at,
        "owner": owner,
        "limits": limits.to_dict(),
        "gpus": float(cfg.executor.gpus),
        "cpus": float(cfg.executor.cpus),
        "usd_per_hour": rate,
        "account": account,
        "started": None,
    }
    entry.update(reservation_marks(ws, plan.run_id, entry))
    return entry


def _reserved_run(plan: RunPlan, limits: RunLimits, account: str) -> dict[str, Any]:
    """One run as the ``run.reserved`` event names it."""
    return {
        "run_id": plan.run_id,
        "version": plan.version,
        "seed": plan.seed,
        "commit": plan.commit,
        "limits": limits.to_dict(),
        "account": account,
    }


def _plan_limits(
    cfg: Any,
    txn: LedgerTxn,
    per_version: Mapping[str, int],
    total: int,
    reservations: Mapping[str, Mapping[str, Any]],
    *,
    tips: Mapping[str, str],
    champion_commit: str,
    counted: TrustedUsage,
) -> dict[str, tuple[RunLimits, str]]:
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
        account = (
            CHAMPION_RERUNS if vid == champion and tips.get(vid) == champion_commit else "version"
        )
        txn.require(vid)
        usage = counted.reruns(vid) if account == CHAMPION_RERUNS else counted.version(vid)
        out[vid] = (
            plan_limits(
                cfg.budget,
                version=vid,
                version_usage=usage,
                tree_usage=counted.tree,
                version_runs=count,
                total_runs=total,
                gpus=cfg.executor.gpus,
                version_reserved=committed(reservations, version=vid, account=account),
                tree_reserved=committed(reservations),
                account=account,
                cpus=cfg.executor.cpus,
                clock_left=clock_left,
                clock_ends_at=ends_at,
            ),
            account,
        )
    return out


def _reserve(
    ws: Workspace,
    plans: list[RunPlan],
    per_version: Mapping[str, int],
    total: int,
    tips: Mapping[str, str],
    *,
    champion_commit: str,
    recheck: RunRecheck | None,
) -> dict[str, tuple[RunLimits, str]]:
    """Append ``run.reserved`` for ``plans``: the budgets and ``recheck`` decided in its CAS."""
    cfg = ws.config
    actor = ws.git.identity()
    owner = process_owner()
    decided: dict[str, tuple[RunLimits, str]] = {}

    def change(txn: LedgerTxn) -> Event:
        reservations = held_reservations(txn.meta)
        dead = _drop_dead(reservations)
        for vid in per_version:
            if txn.require(vid).status == VersionStatus.ABANDONED.value:
                raise InvalidState(
                    f"{vid} was abandoned while its runs were being planned",
                    fix=f"branch a new version from it: evotree branch --from {vid} -m ...",
                )
        counted = counted_reservations(ws, {RESERVATIONS: reservations})  # not a remote's
        limits_of = _plan_limits(
            cfg,
            txn,
            per_version,
            total,
            counted,
            tips=tips,
            champion_commit=champion_commit,
            counted=trusted_usage(ws, txn),
        )
        # the worst-case price of an hour of each run, held by its reservation (harness.budget)
        rate = usd_per_run_hour(cfg.budget, gpus=cfg.executor.gpus, cpus=cfg.executor.cpus)
        if recheck is not None:
            recheck(txn, per_version, tips)
        at = utcnow()
        runs = []
        for plan in plans:
            limits, account = limits_of[plan.version]
            reservations[plan.run_id] = _reservation(
                ws, plan, limits, account, at=at, owner=owner, rate=rate
            )
            runs.append(_reserved_run(plan, limits, account))
        txn.meta[RESERVATIONS] = reservations
        decided.clear()
        decided.update(limits_of)
        only = {plan.version for plan in plans}
        reserved = RunReserved(runs=runs, owner=owner, released=sorted(dead) if dead else ABSENT)
        return Event.of(
            reserved, version=next(iter(only)) if len(only) == 1 else None, actor=str(actor)
        )

    ws.ledger.transact(change, actor=actor)
    return dict(decided)
