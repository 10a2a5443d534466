"""Finalize (EvoPolicyGym's rule, issue 19 item 2): pick the best validation run, once — a design, not wired yet.

EvoPolicyGym keeps validation and held-out scores from the agent during the search; when the
search ends it *finalizes*: among the submits whose status is ``ok`` it selects the one with the
highest validation score (raw mean return; a tie goes to the latest submit), runs that one
policy once on the held-out pool outside the search budget, and records the result
(``docs/protocol/07-scoring.md`` §7.3–7.4 of EvoPolicyGym v0.1.0). With no ``ok`` submit the
outcome is ``no_ok_submit``.

What is here: the selection rule (:func:`select_best`) over evotree's run records and the plan
(:func:`finalize_plan`) that says which version and commit the held-out run must judge. It reads
run records only; it starts, charges and records nothing.

How to wire it (the CLI, the harness and the ledger are other engineers' files):

1. ``evotree finalize [--json]`` (``evotree/cli``): refuse when the ledger already has a
   ``finalize`` event (exactly one held-out evaluation per search); call :func:`finalize_plan`.
2. A judge-only run of ``plan.commit`` with ``EVOTREE_JUDGE_SPLITS=heldout`` (``harness/runs``:
   a run kind with no train phase, reserved against a ``finalize`` account instead of the
   version's or the tree's budget — the way champion re-runs have their own account — so it is
   not charged to the search).
3. A ledger event ``finalize`` with ``{selected_run, version, commit, validation_mean,
   heldout_run, heldout_mean, final_score, rule}``; ``final_score`` from the judge's
   ``heldout/ENV/final_score`` signal in the EvoPolicyGym mode.
4. Visibility: the agent-facing outputs (``--json`` of ``tree``/``show``/``sql`` and the agent
   server) drop validation and held-out figures while the ledger has no ``finalize`` event; the
   judge still computes and keeps them (they are needed by :func:`select_best`).

Tests: ``tests/test_gym_finalize.py`` (the rule, on real run records).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["Candidate", "FinalizePlan", "select_best", "finalize_plan", "RULE"]

RULE = ("EvoPolicyGym v0.1.0 §7.3: among succeeded runs with a validation headline, the highest raw "
        "validation mean; a tie goes to the latest run")


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
        return {"status": self.status, "considered": self.considered, "rule": self.rule,
                "selected": None if self.selected is None else vars(self.selected)}


def _candidate(record: Any) -> Candidate | None:
    headline = getattr(record, "headline", None) or {}
    if getattr(record, "status", None) != "succeeded" or not str(headline.get("metric", "")).startswith("validation/"):
        return None
    value = headline.get("value")
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value != value:
        return None
    return Candidate(run_id=record.run_id, version=record.version, commit=record.commit,
                     started_at=record.started_at, validation=float(value))


def select_best(records: Iterable[Any]) -> Candidate | None:
    """The run EvoPolicyGym's finalize would select, or None when no run is usable."""
    candidates = [c for c in map(_candidate, records) if c is not None]
    if not candidates:
        return None
    return max(candidates, key=lambda c: (c.validation, c.started_at, c.run_id))


def finalize_plan(ws: Any) -> FinalizePlan:
    """The plan for ``ws``: every run of every version is a submit of the search."""
    from evotree.harness.runs import list_runs

    records = list_runs(ws)
    best = select_best(records)
    return FinalizePlan(status="ready" if best else "no_ok_submit", selected=best, considered=len(records))
