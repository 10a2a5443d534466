"""What the search statistics read from one workspace: its versions in creation order, each with
its score, latest audit verdict and spend (the ledger's run charges and agent spend, the CPU
seconds and training bill of the run records on this machine)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evotree.core.ledger import EventKind
from evotree.core.normalize import normalized_mean
from evotree.core.versions import tree_view
from evotree.core.workspace import Workspace
from evotree.harness.budget import SPEND_RECORDED, usd_per_run_hour
from evotree.harness.records import list_runs
from evotree.report.search_model import SPEND_UNITS, TRAINING_UNIT, VersionStat, add_usage, finite

__all__ = ["read_versions"]


@dataclass
class _LedgerFacts:
    """What the search statistics read from the ledger, in one pass."""

    #: the latest audit verdict per version
    audits: dict[str, str] = field(default_factory=dict)
    #: [(run_id, usage)] per version, from ``run.finished``
    runs: dict[str, list[tuple[str, dict[str, Any]]]] = field(default_factory=dict)
    #: agent/API spend charged to a version
    agent: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: agent/API spend charged to no version: [(at, usage)]
    unattributed: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


def _agent_usage(data: Mapping[str, Any]) -> dict[str, Any]:
    """The usage a ``spend.recorded`` event charged (as :func:`evotree.harness.money.record_spend` does)."""
    usd = finite(data.get("usd")) or 0.0
    tokens = data.get("tokens")
    whole = isinstance(tokens, int) and not isinstance(tokens, bool)
    return {"usd": usd, "agent_usd": usd, "tokens": tokens if whole else 0}


def _ledger_facts(ws: Workspace) -> _LedgerFacts:
    """One pass over the ledger: audits, run charges and agent spend."""
    facts = _LedgerFacts()
    seen_runs: set[str] = set()
    for entry in ws.ledger.entries():  # newest first
        event = entry.event
        if event.kind == SPEND_RECORDED:
            usage = _agent_usage(event.data)
            if event.version is None:
                facts.unattributed.append((event.at, usage))
            else:
                facts.agent.setdefault(event.version, []).append(usage)
            continue
        if event.version is None:
            continue
        if event.kind == EventKind.AUDIT.value and event.version not in facts.audits:
            passed = event.data.get("passed")
            if isinstance(passed, bool):
                facts.audits[event.version] = "passed" if passed else "failed"
        elif event.kind == EventKind.RUN_FINISHED.value:
            run_id = str(event.data.get("run_id") or "")
            if run_id in seen_runs:  # a run settled twice counts once (its newest record)
                continue
            seen_runs.add(run_id)
            usage = event.data.get("usage")
            facts.runs.setdefault(event.version, []).append(
                (run_id, dict(usage) if isinstance(usage, dict) else {})
            )
    facts.unattributed.reverse()  # oldest first
    return facts


def _cpu_seconds(ws: Workspace) -> dict[str, float]:
    """CPU seconds per run id, from the run records on this machine."""
    out = {}
    for record in list_runs(ws):
        value = finite(record.cpu_seconds)
        if value is not None:
            out[record.run_id] = value
    return out


def _training_bill(ws: Workspace) -> dict[str, float]:
    """USD per run id on this machine: the run's training compute x price (:data:`TRAINING_UNIT`).

    Training compute is what evotree measured around the judge phase when the judge trains
    (``[eval] judge_trains``, RSIBench-Data: the fixed training stack runs there), else around
    prepare and train; priced as the money budget prices a run's hour (:func:`usd_per_run_hour`)."""
    hourly = usd_per_run_hour(
        ws.config.budget, gpus=ws.config.executor.gpus, cpus=ws.config.executor.cpus
    )
    judge_trains = bool(getattr(ws.config.eval, "judge_trains", False))
    out = {}
    for record in list_runs(ws):
        seconds = finite(record.judge_train_seconds if judge_trains else record.train_seconds)
        if seconds is not None:
            out[record.run_id] = seconds / 3600.0 * hourly
    return out


def read_versions(
    ws: Workspace, *, interventions: Callable[[str], dict[str, Any] | None] | None = None
) -> tuple[list[VersionStat], bool, list[tuple[str, dict[str, Any]]]]:
    """The workspace's versions in creation order with score, audit verdict and spend (runs and
    agent spend charged to them); whether the CPU seconds of every charged run were found on this
    machine; and the agent spend charged to no version, ``[(at, usage)]`` oldest first."""
    tree = tree_view(ws)
    spec = ws.config.eval.normalization
    formal = {r.id: r.runs for r in ws.ledger.versions()} if spec is not None else {}
    facts = _ledger_facts(ws)
    audits, charged = facts.audits, facts.runs
    cpu = _cpu_seconds(ws)
    bill = _training_bill(ws)
    complete = True
    rows = []
    for order, view in enumerate(tree.versions, start=1):
        headline = view.headline or {}
        score = finite(headline.get("value"))
        spend: dict[str, float] = {unit: 0.0 for unit in SPEND_UNITS}
        runs = charged.get(view.id, [])
        for run_id, usage in runs:
            add_usage(spend, usage)
            if usage:  # charged: its CPU time and its training bill count too
                if run_id in cpu:
                    spend["cpu_seconds"] += cpu[run_id]
                else:
                    complete = False
                if bill.get(run_id):
                    spend[TRAINING_UNIT] = spend.get(TRAINING_UNIT, 0.0) + bill[run_id]
        for usage in facts.agent.get(view.id, []):
            add_usage(spend, usage)
        audit = audits.get(view.id)
        rows.append(
            VersionStat(
                id=view.id,
                order=order,
                parents=list(view.parents),
                created_at=view.created_at,
                status=view.status,
                hypothesis=view.hypothesis,
                score=score,
                metric=headline.get("metric") if score is not None else None,
                audit=audit,
                valid=score is not None and audit != "failed",
                runs_finished=len(runs),
                spend=spend,
                intervention=interventions(view.id) if interventions is not None else None,
                normalized=_version_normalized(spec, headline, formal.get(view.id) or []),
            )
        )
    return rows, complete, facts.unattributed


def _version_normalized(
    spec: Any, headline: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]
) -> float | None:
    """A version's normalized score: the tree's; with ``failed_as_zero``, from its formal runs
    (so a version whose runs all failed scores 0 instead of having none)."""
    if spec is None:
        return None
    if spec.failed_as_zero:
        return normalized_mean(
            [
                (r.get("status"), (r.get("headline") or {}).get("value"))
                for r in runs
                if r.get("status") not in ("ingested", "cancelled", "running")
            ],
            spec,
        )
    return finite(headline.get("normalized"))
