"""Finishing a run: evidence compacted, headline and usage computed, the ledger's run events.

:func:`finish_run` is called for local, Ray, Slurm, ingested and crash-recovered runs alike: it
compacts the evidence, reads the headline (refusing a judge's unusable results as a failure),
charges the run (:func:`training_seconds`, :func:`evotree.harness.budget.charge_run`), binds the
evidence to the ledger with its manifest (:mod:`evotree.harness.manifest`) and appends
``run.finished``. :func:`ledger_run_started` / :func:`ledger_run_finished` are the two ledger
transactions of a run's life (the reservation kept, then consumed).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.core.events import ABSENT, RunFinished, RunStarted
from evotree.core.ledger import Event, LedgerTxn, VersionStatus, utcnow
from evotree.core.proc import process_owner
from evotree.core.workspace import Workspace
from evotree.harness.budget import (
    CHAMPION_RERUNS,
    FINALIZE_ACCOUNT,
    FINALIZE_USAGE,
    add_usage,
    charge_run,
    usd_per_run_hour,
)
from evotree.harness.compaction import compact_run
from evotree.harness.layout import RunPaths
from evotree.harness.logs import log_tail_note
from evotree.harness.manifest import evidence_manifest
from evotree.harness.records import HEADLINE_SPLITS, RunRecord, RunStatus
from evotree.harness.reservations import RESERVATIONS
from evotree.harness.version_patch import patch_digest
from evotree.core.interventions import intervention_record
from evotree.harness.provenance import attest_run

__all__ = [
    "finish_run",
    "TRAINING_PHASES",
    "training_seconds",
    "budget_cut_notes",
    "ledger_run_started",
    "ledger_run_finished",
]


class _AlreadySettled(EvotreeError):
    code = "already_settled"


def finish_run(
    ws: Workspace,
    record: RunRecord,
    paths: RunPaths,
    started: float | None,
    wall_seconds: float | None = None,
    *,
    charge: bool = True,
    complete: bool = True,
) -> None:
    """Compact evidence, compute headline and usage, write run.json, append run.finished.

    ``complete=False`` (a remote run whose evidence did not all arrive): what arrived is kept
    and compacted for inspection, but the run gets no headline and ``evidence.complete`` is
    false, so partial evidence is never taken for a result.
    """
    record.ended_at = utcnow()
    record.wall_seconds = round(
        wall_seconds if wall_seconds is not None else time.monotonic() - (started or 0), 3
    )
    steps, episodes = _summarise_evidence(record, paths, complete=complete)
    _charge(ws, record, steps, episodes, charge=charge)
    if record.status == RunStatus.SUCCEEDED.value and record.headline is None:
        mistake = _judge_mistake(paths) if complete else None
        if mistake is not None:  # the judge ran and recorded something unusable: not a success
            record.status = RunStatus.FAILED.value
            record.error = mistake
        else:
            record.notes.append(
                "the judge recorded no eval results: this run has no score (not a score of 0)"
            )
    _note_log_and_cuts(ws, record, paths, steps, episodes)
    # the evidence as it is now, bound to the ledger: a run directory deleted or edited later is
    # found by evotree.harness.integrity (the score gate and compare count every started run)
    manifest = evidence_manifest(paths.root, record.to_dict())
    record.evidence["digest"] = manifest["digest"]
    record.save(paths.record)
    ledger_run_finished(ws, record, manifest)


def _summarise_evidence(record: RunRecord, paths: RunPaths, *, complete: bool) -> tuple[int, int]:
    """Compact the run's evidence and summarise it on the record (the headline only when
    ``complete``); return the train phase's (steps, episodes)."""
    con = _duck()  # one in-memory connection for the compaction and both summaries
    try:
        try:
            result = compact_run(paths.root, con=con)
            record.evidence = _evidence_summary(result)
        except Exception as exc:  # noqa: BLE001 - evidence problems must not lose the run record
            record.notes.append(f"compaction failed: {type(exc).__name__}: {exc}")
            con.close()  # whatever state the failure left it in: the summaries start afresh
            con = _duck()
        if not complete:
            record.evidence["complete"] = False
        record.headline = _headline(con, paths) if complete else None
        return _train_counts(con, paths)
    finally:
        con.close()


def _charge(ws: Workspace, record: RunRecord, steps: int, episodes: int, *, charge: bool) -> None:
    """Record the run's training time and, when it is charged, its usage at the prices in force."""
    # invalid submissions cost nothing unless [budget] charge_invalid; a run is charged at most its
    # wall limit, at the prices in force (harness.budget.charge_run: it never ends above a budget)
    charge = charge and (
        record.status != RunStatus.INVALID.value or ws.config.budget.charge_invalid
    )
    (
        record.train_seconds,
        record.train_cpu_seconds,
        record.judge_train_seconds,
        record.judge_train_cpu_seconds,
    ) = training_seconds(record.phases, judge_trains=ws.config.eval.judge_trains)
    record.usage = {}
    if charge:
        record.usage, charge_notes = charge_run(
            ws.config.budget,
            wall_seconds=record.wall_seconds,
            limits=record.limits,
            gpus=ws.config.executor.gpus,
            cpus=ws.config.executor.cpus,
            steps=steps,
            episodes=episodes,
            train_seconds=record.train_seconds,
            judge_train_seconds=record.judge_train_seconds,
        )
        record.notes.extend(charge_notes)


def _note_log_and_cuts(
    ws: Workspace, record: RunRecord, paths: RunPaths, steps: int, episodes: int
) -> None:
    """Note a failed run's log tail and where a budget cut the run short."""
    budget = ws.config.budget
    tail = log_tail_note(record, paths)
    if tail:
        record.notes.append(tail)
    record.notes.extend(
        budget_cut_notes(
            record.limits,
            steps=steps,
            episodes=episodes,
            whole={
                "max_steps": min(
                    [x for x in (budget.max_steps, budget.tree_max_steps) if x] or [0]
                ),
                "max_episodes": min(
                    [x for x in (budget.max_episodes, budget.tree_max_episodes) if x] or [0]
                ),
            },
        )
    )


#: The phases whose time is training; the judge phase (``eval``) too where ``[eval] judge_trains``.
TRAINING_PHASES = ("prepare", "train")


def training_seconds(
    phases: Mapping[str, Mapping[str, Any]], *, judge_trains: bool
) -> tuple[float, float, float, float]:
    """(train wall, train CPU, judge-phase train wall, judge-phase train CPU) seconds of a run.

    From the phases' ``wall_seconds`` / ``cpu_seconds``, which evotree measures outside the
    sandbox (the monotonic clock and ``wait4``'s rusage of the phase's whole process tree),
    never from what a phase reports about itself. ``judge_trains``: the champion's ``[eval]
    judge_trains`` — the judge phase runs the fixed training (RSIBench-Data's shape), so its
    time is training time too."""

    def measured(phase: str, key: str) -> float:
        value = (phases.get(phase) or {}).get(key)
        ok = (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )
        return max(0.0, float(value)) if ok else 0.0

    wall = sum(measured(p, "wall_seconds") for p in TRAINING_PHASES)
    cpu = sum(measured(p, "cpu_seconds") for p in TRAINING_PHASES)
    judge_wall = measured("eval", "wall_seconds") if judge_trains else 0.0
    judge_cpu = measured("eval", "cpu_seconds") if judge_trains else 0.0
    return (
        round(wall + judge_wall, 3),
        round(cpu + judge_cpu, 3),
        round(judge_wall, 3),
        round(judge_cpu, 3),
    )


def budget_cut_notes(
    limits: Mapping[str, Any] | None, *, steps: int, episodes: int, whole: Mapping[str, int]
) -> list[str]:
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
        notes.append(
            f"budget-limited: it used all {cap} {unit} it was allowed (the budget.{key} left, split over "
            f"the request's runs); a recipe that wanted more was cut short (its logs say: evotree logs "
            f"RUN) — raise budget.{key} or run fewer seeds"
        )
    return notes


def _evidence_summary(result: Any) -> dict[str, Any]:
    data = asdict(result) if hasattr(result, "__dataclass_fields__") else dict(result)
    return {
        k: (str(v) if isinstance(v, Path) else v)
        for k, v in data.items()
        if not isinstance(v, (bytes,))
    }


def _duck() -> Any:
    import duckdb

    return duckdb.connect(":memory:")


def _headline(con: Any, paths: RunPaths) -> dict[str, Any] | None:
    """Mean score of the preferred split, from the judge's evals; None when there are none."""
    evals = paths.parquet("evals")
    if not evals.exists():
        return None
    rows = con.execute(
        "SELECT split, avg(score) FILTER (WHERE isfinite(score)), count(*), count(score) FILTER (WHERE isfinite(score)) "
        "FROM read_parquet(?) WHERE phase = 'eval' GROUP BY split",
        [str(evals)],
    ).fetchall()
    by_split = {split: (mean, n, scored) for split, mean, n, scored in rows}
    for split in HEADLINE_SPLITS:
        if split in by_split and by_split[split][2] > 0:
            mean, n, scored = by_split[split]
            return {
                "metric": f"{split}/mean_score",
                "value": float(mean),
                "n": int(n),
                "scored": int(scored),
            }
    return None


def _judge_mistake(paths: RunPaths) -> str | None:
    """Why the judge's results give no score although it recorded some (None: it recorded none):
    results on no split a headline is read from (a misspelled split), or no finite score."""
    evals = paths.parquet("evals")
    if not evals.exists():
        return None
    con = _duck()
    try:
        rows = con.execute(
            "SELECT split, count(*), count(score) FILTER (WHERE isfinite(score)) FROM read_parquet(?) "
            "WHERE phase = 'eval' GROUP BY split ORDER BY split",
            [str(evals)],
        ).fetchall()
    finally:
        con.close()
    if not rows:
        return None
    known = [(split, n, finite) for split, n, finite in rows if split in HEADLINE_SPLITS]
    if not known:
        listed = ", ".join(f"{split!r} ({n})" for split, n, _ in rows[:5])
        return (
            f"the judge recorded {sum(n for _, n, _ in rows)} eval result(s), all on split(s) {listed}, none on "
            f"{', '.join(HEADLINE_SPLITS)}: a misspelled split? (a judge mistake: this run has no score)"
        )
    total = sum(n for _, n, _ in known)
    return (
        f"the judge recorded {total} eval result(s) on {', '.join(s for s, _, _ in known)}, none with a finite "
        "score (NaN or infinite): a judge mistake, this run has no score"
    )


def _train_counts(con: Any, paths: RunPaths) -> tuple[int, int]:
    """(highest step, rollouts) the train phase recorded: what the run is charged."""
    steps = episodes = 0
    if paths.parquet("signals").exists():
        value = con.execute(
            "SELECT max(step) FROM read_parquet(?) WHERE phase = 'train'",
            [str(paths.parquet("signals"))],
        ).fetchall()[0][0]
        steps = int(value or 0)
    if paths.parquet("rollouts").exists():
        episodes = int(
            con.execute(
                "SELECT count(*) FROM read_parquet(?) WHERE phase = 'train'",
                [str(paths.parquet("rollouts"))],
            ).fetchall()[0][0]
        )
    return steps, episodes


def ledger_run_started(ws: Workspace, record: RunRecord) -> None:
    actor = ws.git.identity()

    owner = process_owner()
    gpus = float(ws.config.executor.gpus)

    try:  # the patch this run trains, against the pristine base: its hash in the ledger
        patch: dict[str, Any] = patch_digest(ws, record.version, commit=record.commit)
    except EvotreeError as exc:
        patch = {"error": exc.code, "message": exc.message}
    except Exception as exc:  # noqa: BLE001 - a record of the patch must never stop a run that was authorized
        patch = {"error": type(exc).__name__, "message": str(exc)[:300]}

    intervention = intervention_record(
        ws, record.version, commit=record.commit
    )  # None without rules; never raises

    def change(txn: LedgerTxn) -> Event:
        version = txn.require(record.version)
        if record.kind != "finalize":  # the held-out evaluation is no run of the version's search
            version.runs = [r for r in version.runs if r["run_id"] != record.run_id] + [
                {
                    "run_id": record.run_id,
                    "seed": record.seed,
                    "status": record.status,
                    "headline": None,
                }
            ]
            if version.status != VersionStatus.ABANDONED.value:
                version.status = VersionStatus.RUNNING.value
            version.updated_at = utcnow()
            txn.put(version)
        # the run keeps its reservation until run.finished; a run that starts without one (a Ray
        # retry, an executor driven directly) gets one now, so other requests count it too
        reservations = dict(txn.meta.get(RESERVATIONS) or {})
        at = utcnow()
        entry = dict(
            reservations.get(record.run_id)
            or {
                "version": record.version,
                "seed": record.seed,
                "commit": record.commit,
                "at": at,
                "limits": record.limits,
                "gpus": gpus,
                "reserved": False,
                "cpus": float(ws.config.executor.cpus),
                "usd_per_hour": usd_per_run_hour(
                    ws.config.budget, gpus=gpus, cpus=ws.config.executor.cpus
                ),
                "account": FINALIZE_ACCOUNT
                if record.kind == "finalize"
                else CHAMPION_RERUNS
                if txn.meta.get("champion") == record.version == record.judge_version
                and record.commit == record.judge_commit
                else "version",
            }
        )
        entry.update(started=at, owner=owner)
        reservations[record.run_id] = entry
        txn.meta[RESERVATIONS] = reservations
        started = RunStarted(
            run_id=record.run_id,
            seed=record.seed,
            commit=record.commit,
            judge_commit=record.judge_commit,
            judge_data_commit=record.judge_data_commit,
            limits=record.limits,
            patch=patch,
            intervention=intervention if intervention is not None else ABSENT,
            account=entry["account"] if entry.get("account") != "version" else ABSENT,
        )
        return Event.of(started, version=record.version, actor=str(actor))

    ws.ledger.transact(change, actor=actor)


def ledger_run_finished(
    ws: Workspace,
    record: RunRecord,
    manifest: dict[str, Any] | None = None,
    *,
    reserved: bool = False,
) -> None:
    """Append ``run.finished``; ``manifest`` (:func:`evidence_manifest`) is recorded as ``evidence``.

    ``reserved``: only while the run still holds its reservation (:class:`_AlreadySettled`
    otherwise: another process settled it first). The event carries ``provenance``
    (:func:`evotree.harness.provenance.attest_run`): what makes the run count here.
    """

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
        account = reservation.get("account") or (
            FINALIZE_ACCOUNT if record.kind == "finalize" else "version"
        )
        if account == FINALIZE_ACCOUNT:
            # finalize's held-out evaluation: charged to its own account, never to the version's or
            # the tree's budget (harness.budget), and no run of the version's search
            txn.meta[FINALIZE_USAGE] = add_usage(txn.meta.get(FINALIZE_USAGE), record.usage)
            finished = RunFinished(
                run_id=record.run_id,
                seed=record.seed,
                status=record.status,
                headline=record.headline,
                usage=record.usage,
                error=record.error,
                account=account,
                evidence=manifest if manifest is not None else ABSENT,
                provenance=provenance,
            )
            return Event.of(finished, version=record.version, actor=str(actor))
        version.runs = [r for r in version.runs if r["run_id"] != record.run_id] + [
            {
                "run_id": record.run_id,
                "seed": record.seed,
                "status": record.status,
                "headline": record.headline,
            }
        ]
        version.usage = add_usage(version.usage, record.usage)
        txn.meta["usage"] = add_usage(txn.meta.get("usage"), record.usage)
        if (
            account == CHAMPION_RERUNS
        ):  # checked against the champion's re-run account (harness.budget)
            reruns = dict(txn.meta.get(CHAMPION_RERUNS) or {})
            reruns[record.version] = add_usage(reruns.get(record.version), record.usage)
            txn.meta[CHAMPION_RERUNS] = reruns
        _refresh_version_status(version)
        version.updated_at = utcnow()
        txn.put(version)
        finished = RunFinished(
            run_id=record.run_id,
            seed=record.seed,
            status=record.status,
            headline=record.headline,
            usage=record.usage,
            error=record.error,
            account=account if account != "version" else ABSENT,
            evidence=manifest if manifest is not None else ABSENT,
            provenance=provenance,
        )
        return Event.of(finished, version=record.version, actor=str(actor))

    ws.ledger.transact(change, actor=actor)


def _refresh_version_status(version: Any) -> None:
    """A version's status and headline from its runs (mean over scored runs of one metric)."""
    if version.status == VersionStatus.ABANDONED.value:
        return
    runs = [
        r
        for r in version.runs  # ingested runs are evidence and invalid ones cost nothing: not attempts
        if r["status"] not in (RunStatus.INGESTED.value, RunStatus.INVALID.value)
    ]
    if not runs:
        invalid = [r for r in version.runs if r["status"] == RunStatus.INVALID.value]
        if invalid:  # an invalid candidate is shown as such in the tree, not as "active"
            version.status = VersionStatus.FAILED.value
            version.reason = (
                f"invalid candidate: {len(invalid)} run(s) refused as invalid submissions (exit 65); "
                f"fix it and commit, then run it again"
            )
        elif version.status == VersionStatus.RUNNING.value:
            version.status = VersionStatus.ACTIVE.value
        return
    if any(r["status"] == RunStatus.RUNNING.value for r in runs):
        version.status = VersionStatus.RUNNING.value
        return
    scored = [
        r["headline"]
        for r in runs
        if r["status"] == RunStatus.SUCCEEDED.value and r.get("headline")
    ]
    if scored:
        metric = scored[0]["metric"]
        same = [h["value"] for h in scored if h["metric"] == metric]
        version.headline = {"metric": metric, "value": sum(same) / len(same), "runs": len(same)}
        version.status = VersionStatus.EVALUATED.value
        version.reason = None
    elif runs:
        version.status = VersionStatus.FAILED.value
        version.reason = (
            f"no run produced a score ({', '.join(sorted({r['status'] for r in runs}))})"
        )
