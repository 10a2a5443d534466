"""Finalize (EvoPolicyGym's rule): pick the best validation run, judge it once on held-out.

EvoPolicyGym keeps validation and held-out scores from the agent during the search; when the
search ends it *finalizes*: among the submits whose status is ``ok`` it selects the one with the
highest validation score (raw mean return; a tie goes to the latest submit there, to the
earliest here: :func:`first_best`, evotree's one tie rule), runs that one
policy once on the held-out pool outside the search budget, and records the result
(``docs/protocol/07-scoring.md`` §7.3–7.4 of EvoPolicyGym v0.1.0). With no ``ok`` submit the
outcome is ``no_ok_submit``.

What is here:

- the selection rule (:func:`select_best`) over evotree's run records and the plan
  (:func:`finalize_plan`) that says which version and commit the held-out run must judge (it
  reads run records only);
- :func:`finalize`, what ``evotree finalize`` (``evotree/cli/finalize.py``) calls:

  1. refused (exit 10, code ``already_finalized``) when the ledger has a ``finalize`` event:
     exactly one held-out evaluation per search (checked again in every compare-and-swap);
  2. :func:`finalize_plan`; no usable run: the ``finalize`` event records ``no_ok_submit``;
  3. one held-out run of the selected commit with ``EVOTREE_JUDGE_SPLITS=heldout``
     (:func:`evotree.harness.runs.plan_finalize_run`: run kind ``finalize``, reserved against the
     ``finalize`` account instead of the version's or the tree's budget — the way champion
     re-runs have their own account — so it is not charged to the search (its exploration
     budget) and not refused when the search's budget or clock is spent). By default it is
     judge-only: the judge reads the selected run's trained candidate folder (or the commit,
     EvoPolicyGym's shape). With ``[eval] finalize_retrain`` (AI4AI-Bench's formal retrain)
     the commit's train phase runs again first, clean, in the sandbox, with a fresh random
     seed, and the judge scores what it trained;
  4. the ledger event ``finalize`` with ``{status, selected_run, version, commit,
     validation_mean, heldout_run, heldout_mean, final_score, rule, retrained, seed,
     normalized}`` (``final_score``: the judge's ``heldout/ENV/final_score`` signal in the
     EvoPolicyGym mode, else None; ``normalized``: :func:`final_normalized`); the event also
     sets ``meta["finalize"]``, which lifts the visibility boundary. A held-out run that
     evotree itself could not finish (its process died, Ctrl-C, an exception of the harness)
     records ``finalize.attempt`` instead (``not_finalized``, exit 37): the one finalize is not
     used up.

- AI4AI-Bench's headline over trials (:func:`trials_mean`): the mean of each finalized
  search's normalized score, a search whose formal retrain or judge failed counting 0.

- Visibility (:mod:`evotree.core.visibility`): while ``[eval] hide_until_finalize`` holds and
  the ledger has no ``finalize`` event, every output (CLI text and ``--json``, agent server)
  drops validation and held-out figures; the judge still computes and keeps them
  (:func:`select_best` needs them).

Tests: ``tests/test_gym_finalize.py`` (the rule; the whole step on a real gym workspace),
``tests/test_finalize_visibility.py`` (the boundary) and ``tests/test_ai4ai_mode.py`` (the
retrain, the accounts, the trials' mean).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from evotree.core.errors import InvalidState
from evotree.core.events import Finalize, FinalizeAttempt
from evotree.core.ledger import EventKind

__all__ = [
    "Candidate",
    "FinalizePlan",
    "FinalizeResult",
    "AlreadyFinalized",
    "FINALIZE_EVENT",
    "select_best",
    "finalize_plan",
    "finalize",
    "RULE",
    "TIE_EPSILON",
    "TIE_RULE",
    "tied",
    "better",
    "first_best",
    "final_normalized",
    "finalize_outcome",
    "trials_mean",
]

#: The ledger event of the search's one held-out evaluation.
FINALIZE_EVENT = EventKind.FINALIZE.value

#: The one tie tolerance of the project's "best" (finalize's selection, ``report --tree``'s
#: historical best): two scores tie when ``|a - b| <= TIE_EPSILON * max(|a|, |b|)``.
TIE_EPSILON = 1e-9
#: The one tie rule, said once (evotree departs here from EvoPolicyGym's §7.3, which takes the latest).
TIE_RULE = "a tie (within a relative 1e-9) goes to the earliest"

RULE = (
    "EvoPolicyGym v0.1.0 §7.3 with evotree's one tie rule: among succeeded runs with a validation "
    f"headline, the highest raw validation mean; {TIE_RULE} run (started first)"
)

T = TypeVar("T")


def tied(a: float, b: float, epsilon: float = TIE_EPSILON) -> bool:
    """Whether two scores are equal within the relative tie tolerance."""
    return abs(a - b) <= epsilon * max(abs(a), abs(b))


def better(a: float, b: float, *, direction: str = "max", epsilon: float = TIE_EPSILON) -> bool:
    """Whether score ``a`` beats ``b`` by more than the tie tolerance (``direction`` "max" or "min")."""
    if tied(a, b, epsilon):
        return False
    return a > b if direction == "max" else a < b


def first_best(
    items: Iterable[T],
    score: Callable[[T], float],
    *,
    direction: str = "max",
    epsilon: float = TIE_EPSILON,
) -> T | None:
    """The best of ``items`` taken in their (time) order: a later item replaces the best only when
    it is :func:`better` — so the earliest of tied items wins. The one rule of "best" that
    :func:`select_best` (finalize) and ``evotree report --tree``'s historical best both use."""
    best: T | None = None
    for item in items:
        if best is None or better(score(item), score(best), direction=direction, epsilon=epsilon):
            best = item
    return best


@dataclass(frozen=True)
class Candidate:
    run_id: str
    version: str
    commit: str
    started_at: str
    validation: float


@dataclass(frozen=True)
class FinalizePlan:
    """What finalize would judge on the held-out split (``selected`` None: ``no_ok_submit``)."""

    status: str  # "ready" or "no_ok_submit"
    selected: Candidate | None
    considered: int
    rule: str = RULE

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "considered": self.considered,
            "rule": self.rule,
            "selected": None if self.selected is None else vars(self.selected),
        }


def _candidate(record: Any) -> Candidate | None:
    if getattr(record, "kind", "search") != "search":  # finalize's own held-out run is no submit
        return None
    headline = getattr(record, "headline", None) or {}
    if getattr(record, "status", None) != "succeeded" or not str(
        headline.get("metric", "")
    ).startswith("validation/"):
        return None
    value = headline.get("value")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
        return None
    return Candidate(
        run_id=record.run_id,
        version=record.version,
        commit=record.commit,
        started_at=record.started_at,
        validation=float(value),
    )


def select_best(records: Iterable[Any]) -> Candidate | None:
    """The run EvoPolicyGym's finalize would select, or None when no run is usable."""
    candidates = sorted(
        (c for c in map(_candidate, records) if c is not None),
        key=lambda c: (c.started_at, c.run_id),
    )
    return first_best(candidates, lambda c: c.validation)


def finalize_plan(ws: Any, version: str | None = None) -> FinalizePlan:
    """The plan for ``ws``: every run of every version is a submit of the search; with ``version``
    (the submission named, AI4AI-Bench's shape: the agent submits one patch) only that version's
    runs are, and the rule says so."""
    from evotree.harness.records import list_runs

    records = list_runs(ws)
    rule = RULE
    if version is not None:
        named = ws.resolve(version).id
        records = [r for r in records if r.version == named]
        rule = f"the submitted version {named}: {RULE}"
    best = select_best(records)
    return FinalizePlan(
        status="ready" if best else "no_ok_submit",
        selected=best,
        considered=len(records),
        rule=rule,
    )


class AlreadyFinalized(InvalidState):
    """The search has its held-out evaluation already: the ledger has a ``finalize`` event (exit 10)."""

    code = "already_finalized"


@dataclass
class FinalizeResult:
    """The ``finalize`` event's data (``evotree finalize --json``)."""

    status: str  # "finalized", "no_ok_submit", "heldout_failed" or "not_finalized" (evotree's failure: retry)
    selected_run: str | None
    version: str | None
    commit: str | None
    validation_mean: float | None
    heldout_run: str | None
    heldout_mean: float | None
    final_score: float | None
    rule: str
    considered: int = 0
    heldout_status: str | None = None
    heldout_metric: str | None = None
    error: str | None = None
    #: the selected commit was trained again, clean, before the judge (``[eval] finalize_retrain``)
    retrained: bool = False
    #: the held-out run's seed (a fresh one when it retrained)
    seed: int | None = None
    #: the held-out mean on ``[eval.normalize]``'s scale; 0 for a search finalized without a
    #: held-out score (``heldout_failed``, ``no_ok_submit``) when ``failed_as_zero``; None: no scale
    normalized: float | None = None
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    @property
    def exit_code(self) -> int:
        """37 when evotree could not finish the held-out run (the search is not finalized), else 0."""
        return 37 if self.status == "not_finalized" else 0


def _refuse_twice(meta: Any) -> None:
    from evotree.core.visibility import FINALIZE_META

    done = meta.get(FINALIZE_META)
    if done:
        raise AlreadyFinalized(
            f"this search is finalized already ({done.get('status')}, at {done.get('at')}): it has exactly one "
            "held-out evaluation",
            fix="`evotree log` shows the finalize event",
            finalize=done,
        )


def _final_score(run_dir: Any) -> float | None:
    """The judge's ``heldout/ENV/final_score`` signal (the EvoPolicyGym mode's one environment); None
    when there is none, or several environments (then there is no one final score)."""
    import duckdb

    path = run_dir / "signals.parquet"
    if not path.exists():
        return None
    con = duckdb.connect()
    try:
        rows = con.execute(
            "SELECT metric, value FROM read_parquet(?) WHERE phase = 'eval' AND metric LIKE "
            "'heldout/%/final_score'",
            [str(path)],
        ).fetchall()
    finally:
        con.close()
    values = {metric: value for metric, value in rows}
    if len(values) != 1:
        return None
    value = next(iter(values.values()))
    return float(value) if isinstance(value, (int, float)) and value == value else None


def finalized_here(ws: Any, done: Any) -> bool:
    """Whether ``meta["finalize"]`` (``done``) was recorded by this workspace's own ``finalize``
    (sealed by its key): a finalize event a fetched ledger brought does not lift the boundary here."""
    from evotree.harness.provenance import sealed

    if not isinstance(done, dict):
        return False
    facts = {"what": "finalize", **{k: done.get(k) for k in ("status", "at", "heldout_run")}}
    return sealed(ws, facts, done.get("seal"))


def _record(ws: Any, result: FinalizeResult) -> FinalizeResult:
    """Append the ``finalize`` event (refused if one got there first) and set ``meta["finalize"]``
    (sealed by this workspace's key: :func:`finalized_here`)."""
    from evotree.core.ledger import Event, LedgerTxn, utcnow
    from evotree.core.visibility import FINALIZE_META
    from evotree.harness.provenance import seal

    actor = ws.git.identity()
    finalized = Finalize(**result.to_dict())

    def change(txn: LedgerTxn) -> Event:
        _refuse_twice(txn.meta)
        at = utcnow()
        done = {"status": result.status, "at": at, "heldout_run": result.heldout_run}
        txn.meta[FINALIZE_META] = {**done, "seal": seal(ws, {"what": "finalize", **done})}
        return Event.of(finalized, version=result.version, actor=str(actor), at=at)

    ws.ledger.transact(change, actor=actor)
    return result


def _not_the_candidates(record: Any) -> bool:
    """Whether a held-out run failed for a reason that is evotree's, not the candidate's or the judge's."""
    if record.status in ("crashed", "cancelled"):
        return True
    return record.status == "failed" and any(
        "evotree failed while running this run" in str(n)
        for n in getattr(record, "notes", []) or []
    )


def _record_attempt(ws: Any, result: FinalizeResult) -> FinalizeResult:
    """A ``finalize.attempt`` event: the held-out run evotree could not finish; the search goes on."""
    from evotree.core.ledger import Event, LedgerTxn

    actor = ws.git.identity()
    attempt = FinalizeAttempt(**result.to_dict())

    def change(txn: LedgerTxn) -> Event:
        return Event.of(attempt, version=result.version, actor=str(actor))

    ws.ledger.transact(change, actor=actor)
    return result


def final_normalized(ws: Any, status: str, heldout_mean: float | None) -> float | None:
    """A finalize outcome on ``[eval.normalize]``'s scale (None without one): the held-out mean's
    normalized score when ``status`` is ``finalized``; otherwise the search produced no usable
    model (the retrain or the judge failed, or nothing was submitted), which AI4AI-Bench scores
    0 (``failed_as_zero``). ``not_finalized`` (evotree's failure) is no outcome: None."""
    from evotree.core.normalize import normalize_score

    try:
        spec = ws.config.eval.normalization
    except Exception:  # noqa: BLE001 - no readable scale: no normalized figure
        return None
    if spec is None or status == "not_finalized":
        return None
    if status == "finalized":
        return normalize_score(heldout_mean, spec)
    return 0.0 if spec.failed_as_zero else None


def finalize(
    ws: Any,
    *,
    progress: Callable[[str, str, dict[str, Any]], None] | None = None,
    cancel: threading.Event | None = None,
    version: str | None = None,
) -> FinalizeResult:
    """Finalize the search of ``ws`` (see the module doc); the ``finalize`` event's data."""
    from evotree.harness.layout import RunPaths
    from evotree.harness.records import runs_dir

    _refuse_twice(ws.ledger.meta())
    plan = finalize_plan(ws, version)
    if plan.selected is None:
        return _record(ws, _no_submit(ws, plan))
    best = plan.selected
    retrain = bool(ws.config.eval.finalize_retrain)
    run, record = _heldout_run(ws, best, retrain, progress, cancel)
    headline = record.headline or {}
    metric = str(headline.get("metric") or "")
    value = headline.get("value") if metric.startswith("heldout/") else None
    ok = record.status == "succeeded" and isinstance(value, (int, float))
    if not ok and _not_the_candidates(record):
        # evotree's own failure (its process died, Ctrl-C, an exception of the harness): the search
        # is not finalized, so a person can run finalize again once the cause is fixed. A judge that
        # exits non-zero is not retried: candidate code may run inside it and could crash on purpose
        return _record_attempt(
            ws,
            FinalizeResult(
                status="not_finalized",
                selected_run=best.run_id,
                version=best.version,
                commit=best.commit,
                validation_mean=best.validation,
                heldout_run=record.run_id,
                heldout_mean=None,
                final_score=None,
                rule=plan.rule,
                considered=plan.considered,
                heldout_status=record.status,
                heldout_metric=None,
                error=record.error or "the held-out run did not finish",
                retrained=retrain,
                seed=run.seed,
            ),
        )
    status = "finalized" if ok else "heldout_failed"
    return _record(
        ws,
        FinalizeResult(
            status=status,
            selected_run=best.run_id,
            version=best.version,
            commit=best.commit,
            validation_mean=best.validation,
            heldout_run=record.run_id,
            heldout_mean=float(value) if ok else None,
            final_score=_final_score(RunPaths(runs_dir(ws) / record.run_id).root) if ok else None,
            rule=plan.rule,
            considered=plan.considered,
            heldout_status=record.status,
            heldout_metric=metric or None,
            error=record.error,
            retrained=retrain,
            seed=run.seed,
            normalized=final_normalized(ws, status, float(value) if ok else None),
        ),
    )


def _no_submit(ws: Any, plan: FinalizePlan) -> FinalizeResult:
    """The result of a search with no ok submit: nothing is judged on held-out."""
    return FinalizeResult(
        status="no_ok_submit",
        selected_run=None,
        version=None,
        commit=None,
        validation_mean=None,
        heldout_run=None,
        heldout_mean=None,
        final_score=None,
        rule=plan.rule,
        considered=plan.considered,
        normalized=final_normalized(ws, "no_ok_submit", None),
    )


def _heldout_run(
    ws: Any,
    best: Any,
    retrain: bool,
    progress: Callable[[str, str, dict[str, Any]], None] | None,
    cancel: threading.Event | None,
) -> tuple[Any, Any]:
    """Plan and execute the one held-out run of the selected submit (its reservation released
    whatever happens); the planned run and its record."""
    from evotree.core.errors import EvotreeError
    from evotree.harness.executors.local import LocalExecutor
    from evotree.harness.planning import plan_finalize_run
    from evotree.harness.records import runs_dir
    from evotree.harness.reservations import release_reservations

    # retrain: the selected commit is trained again, clean, with a fresh seed; else the judge reads
    # the selected run's trained artifact (for judges that need one) or the commit itself
    run = plan_finalize_run(
        ws,
        best.version,
        best.commit,
        check=lambda txn: _refuse_twice(txn.meta),
        source_run=best.run_id,
        retrain=retrain,
    )
    try:
        (runs_dir(ws) / ".active").mkdir(parents=True, exist_ok=True)
        [record] = LocalExecutor(jobs=1).execute(
            ws, [run], progress=progress, cancel=cancel or threading.Event()
        )
    finally:
        try:
            release_reservations(
                ws, [run.run_id], reason="finalize ended before its held-out run started"
            )
        except EvotreeError:
            pass
    return run, record


def finalize_outcome(ws: Any) -> dict[str, Any] | None:
    """The data of ``ws``'s ``finalize`` event (the search's one held-out outcome), or None when
    the search is not finalized."""
    for entry in ws.ledger.entries():
        if entry.event.kind == FINALIZE_EVENT:
            return dict(entry.event.data or {})
    return None


def trials_mean(outcomes: Iterable[dict[str, Any] | None]) -> dict[str, Any]:
    """AI4AI-Bench's headline over trials (one finalized search each): the mean of each trial's
    normalized final score, a trial whose retrain or judge failed (or that submitted nothing)
    counting 0 — as its ``finalize`` event records with ``failed_as_zero`` — never dropped.

    ``outcomes``: :func:`finalize_outcome` of each search. A search not finalized (None, or
    ``not_finalized``) has no outcome yet and is named in ``pending``, not counted. A finalized
    search without a normalized score (no ``[eval.normalize]``, or a failure without
    ``failed_as_zero``) is left out and counted in ``unscored``.
    """
    values: list[float] = []
    statuses: dict[str, int] = {}
    pending = unscored = 0
    for outcome in outcomes:
        status = (outcome or {}).get("status")
        if outcome is None or status == "not_finalized":
            pending += 1
            continue
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        value = outcome.get("normalized")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
            values.append(float(value))
        else:
            unscored += 1
    return {
        "mean": sum(values) / len(values) if values else None,
        "trials": len(values),
        "failed": sum(n for s, n in statuses.items() if s != "finalized"),
        "statuses": statuses,
        "pending": pending,
        "unscored": unscored,
    }
