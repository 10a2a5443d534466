"""Search-level statistics of a whole version tree: ``evotree report --tree``.

RSIBench-Data and AI4AI-Bench judge a *search*, not one version: which version is the historical
best, whether the loop improved on its first attempt, whether it kept searching after its peak
and ended lower, what it spent after the peak, what a valid candidate cost, and when it should
have stopped. :func:`tree_stats` computes these for one workspace from the ledger (version
records, ``run.finished`` usage, ``audit`` events) and the run records on this machine (CPU
seconds); :func:`search_report` aggregates several workspaces ("settings") into rates, as
RSIBench reports 58.33 % (first attempt improved) and 78.26 % (ended below the peak).

The rules (docs/protocols/search-statistics.md):

* **Order** is creation order (the ledger's ``created_at``, then the version number): the time
  order of the search, whichever branch a version sits on.
* **Valid** version: it has a headline score (a succeeded, scored run) and its latest ``audit``
  event did not fail. A version without a score is never scored 0; an audit-failed one is shown
  with its score but takes no part in the best, the peak or the regressions.
* **Historical best** (= the peak): scanning valid versions in order, a later one replaces the
  best only when it is better by more than the tie tolerance ``epsilon * max(|a|, |b|)``
  (relative, default 1e-9): ties go to the earlier version. This is evotree's one tie rule
  (:func:`evotree.gates.finalize.first_best`): ``evotree finalize`` selects by it too.
  (AI4AI-Bench's final scoring and EvoPolicyGym's finalize break exact ties towards the later
  artifact; evotree keeps the earlier one, which already survived.)
* **First attempt**: the first version created as a child of the root. ``beats_root``: its
  score is better than the root's (None when either has no valid score). ``improved_later``
  (RSIBench's "the feedback loop improves the first attempt"): a later valid candidate is better
  than the first attempt; a first attempt without a valid score is improved by any later valid one.
* **Post-peak regression** (RSIBench's, time-ordered over the whole search): the valid versions
  created after the peak; those below it by more than ``margin`` (and outside the tie tolerance)
  are regressions; ``worst_drop`` is the largest drop; ``ended_below_peak`` says whether the last
  valid version is such a regression. ``below_best_so_far`` counts every valid version (peak or
  not) that fell below the best before it by more than the margin.
* **Spend**: what ``run.finished`` charged (runs, steps, episodes, wall / GPU hours and any other
  number a usage carries, e.g. money), plus the CPU seconds of those runs' ``run.json`` on this
  machine (``cpu_seconds_complete`` is false when some are not here), plus the **training bill**
  ``training_usd`` (each run's training compute — the judge phase's where ``[eval] judge_trains``
  — in wall hours x the ``[budget]`` prices of ``[executor]``'s GPUs and CPUs), plus agent/API spend
  (``spend.recorded``: ``usd``, ``agent_usd``, ``tokens``). The share after the peak and the cost
  per valid candidate are led by the training bill when there is one (RSIBench-Data's unit;
  ``usd`` would mix agent spend in), agent spend shown beside it. *After the peak*: charged to versions
  created after the peak (agent spend charged to no version: recorded after the peak was
  created). *Per valid candidate*: spend of the candidates (every
  version but the root) / the number of valid candidates.
* **Stop recommendation**: ``stop`` when ``patience`` versions were created since the peak, or
  when the spend after the peak reached ``max_after_peak_share`` of the total (with at least one
  version after the peak); otherwise ``continue``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from evotree.core.errors import UsageError
from evotree.core.ledger import EventKind, utcnow

if TYPE_CHECKING:
    from evotree.core.interventions import InterventionRules
    from evotree.core.workspace import Workspace

__all__ = ["SearchParams", "VersionStat", "TreeStats", "SearchReport", "tree_stats", "search_report",
           "render_markdown", "render_text", "SEARCH_SCHEMA_VERSION", "SPEND_UNITS", "TRAINING_UNIT",
           "normalized_summary"]

SEARCH_SCHEMA_VERSION = 1
#: spend units always reported (a usage's other numeric keys, e.g. ``usd``, are added when present)
SPEND_UNITS = ("runs", "steps", "episodes", "wall_hours", "gpu_hours", "cpu_seconds")
#: units the stop rule's "spend after the peak" share is measured in, first with a total > 0 wins:
#: the training bill first (RSIBench-Data's unit; agent spend is reported beside it, never in it)
_SHARE_UNITS = ("training_usd", "usd", "gpu_hours", "cpu_hours", "cpu_seconds", "runs")
#: the training bill of a run: its training compute (the judge phase's, where ``[eval] judge_trains``)
#: in wall hours x ([executor].gpus x usd_per_gpu_hour + [executor].cpus x usd_per_cpu_hour)
TRAINING_UNIT = "training_usd"


@dataclass(frozen=True)
class SearchParams:
    """The rules' parameters; every field has a default (see the module doc)."""

    #: relative tie tolerance of two scores: |a - b| <= epsilon * max(|a|, |b|) is a tie
    epsilon: float = 1e-9
    #: a version after the peak regresses when it is below the peak by more than this (score units)
    margin: float = 0.0
    #: stop after this many versions created since the peak
    patience: int = 3
    #: stop when the spend after the peak reaches this share of the total spend
    max_after_peak_share: float = 0.5
    #: "max": higher scores are better; "min": lower; "auto": the workspace's ``[eval.normalize].direction``, else max
    direction: str = "max"

    def __post_init__(self) -> None:
        def bad(name: str, value: Any, expected: str) -> UsageError:
            return UsageError(f"search statistics: {name} must be {expected}, actually: {value!r}",
                              fix=f"pass a {name} {expected}", key=name)

        for name in ("epsilon", "margin", "max_after_peak_share"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise bad(name, value, "a finite number >= 0")
        if self.max_after_peak_share > 1:
            raise bad("max_after_peak_share", self.max_after_peak_share, "between 0 and 1")
        if isinstance(self.patience, bool) or not isinstance(self.patience, int) or self.patience < 1:
            raise bad("patience", self.patience, "an integer >= 1")
        if self.direction not in ("max", "min", "auto"):
            raise bad("direction", self.direction, "'max', 'min' or 'auto'")

    def tie(self, a: float, b: float) -> bool:
        """Whether two scores are equal within the relative tolerance (:func:`evotree.gates.finalize.tied`)."""
        from evotree.gates.finalize import tied

        return tied(a, b, self.epsilon)

    def better(self, a: float, b: float) -> bool:
        """Whether score ``a`` is better than ``b`` by more than the tie tolerance
        (:func:`evotree.gates.finalize.better`, the rule finalize selects by)."""
        from evotree.gates.finalize import better

        return better(a, b, direction=self.direction, epsilon=self.epsilon)

    def drop(self, peak: float, value: float) -> float:
        """How far ``value`` is below ``peak`` in the good direction (negative: above it)."""
        return peak - value if self.direction == "max" else value - peak

    def regressed(self, peak: float, value: float) -> bool:
        """Below ``peak`` by more than the margin and outside the tie tolerance."""
        return not self.tie(peak, value) and self.drop(peak, value) > self.margin


@dataclass
class VersionStat:
    """One version of the search, in creation order (``order`` starts at 1)."""

    id: str
    order: int
    parents: list[str]
    created_at: str
    status: str
    hypothesis: str
    score: float | None
    metric: str | None
    #: the latest audit event: "passed", "failed" or None (never audited)
    audit: str | None
    #: scored and not audit-failed
    valid: bool
    #: runs the ledger recorded as finished (any status)
    runs_finished: int
    spend: dict[str, float]
    #: the best valid version created before this one, and its score (None for the first)
    best_before: str | None = None
    best_before_score: float | None = None
    #: this version is the historical best of the tree
    peak: bool = False
    #: created after the peak
    after_peak: bool = False
    #: how far below the peak (valid versions after the peak; negative: above it within the tie)
    drop: float | None = None
    #: a valid version after the peak below it by more than the margin
    regression: bool = False
    #: intervention class of the version's change (None: not classified)
    intervention: dict[str, Any] | None = None
    #: ``[eval.normalize]``: the version's normalized score (with ``failed_as_zero`` the mean over
    #: its formal runs, a failed one 0: a version whose runs all crashed is 0, not missing)
    normalized: float | None = None


@dataclass
class TreeStats:
    """Search-level statistics of one workspace (one "setting")."""

    setting: str
    root: str | None
    champion: str | None
    metric: str | None
    #: the direction the scores were compared in (max: higher is better)
    direction: str
    versions: list[VersionStat]
    historical_best: dict[str, Any]
    first_attempt: dict[str, Any]
    post_peak: dict[str, Any]
    spend: dict[str, Any]
    cost_per_valid_candidate: dict[str, Any]
    recommendation: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    #: per primary intervention class of the candidates: versions, valid, mean score (None: not classified)
    interventions: dict[str, Any] | None = None
    #: ``[eval.normalize]`` (AI4AI-Bench's headline): the candidates' mean normalized score, crashes 0
    #: with ``failed_as_zero``; None when the workspace has no normalization
    normalized: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SearchReport:
    """``evotree report --tree --json`` (schema: ``report-tree.schema.json``)."""

    generated_at: str
    parameters: dict[str, Any]
    settings: list[TreeStats]
    rates: dict[str, Any]
    #: the file written (``--out``), else None
    path: str | None = None
    #: how the CLI prints it (md or text); not part of the JSON
    search_format: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"v": SEARCH_SCHEMA_VERSION, "generated_at": self.generated_at, "parameters": self.parameters,
                "settings": [s.to_dict() for s in self.settings], "rates": self.rates, "path": self.path}


# ---------------------------------------------------------------------------- reading a workspace
def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _add(total: dict[str, float], usage: Mapping[str, Any] | None) -> None:
    for key, value in (usage or {}).items():
        number = _finite(value)
        if number is not None:
            total[key] = total.get(key, 0.0) + number


#: agent/API spend recorded in the ledger (``evotree spend record``; harness.budget.SPEND_RECORDED)
_SPEND_RECORDED = EventKind.SPEND_RECORDED.value


@dataclass
class _LedgerFacts:
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
    usd = _finite(data.get("usd")) or 0.0
    tokens = data.get("tokens")
    whole = isinstance(tokens, int) and not isinstance(tokens, bool)
    return {"usd": usd, "agent_usd": usd, "tokens": tokens if whole else 0}


def _ledger_facts(ws: Workspace) -> _LedgerFacts:
    """One pass over the ledger: audits, run charges and agent spend."""
    try:
        from evotree.harness.budget import SPEND_RECORDED
    except ImportError:  # an evotree without money budgets records no agent spend
        SPEND_RECORDED = _SPEND_RECORDED  # noqa: N806
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
            facts.runs.setdefault(event.version, []).append((run_id, dict(usage) if isinstance(usage, dict) else {}))
    facts.unattributed.reverse()  # oldest first
    return facts


def _cpu_seconds(ws: Workspace) -> dict[str, float]:
    """CPU seconds per run id, from the run records on this machine."""
    from evotree.harness.records import list_runs

    out = {}
    for record in list_runs(ws):
        value = _finite(record.cpu_seconds)
        if value is not None:
            out[record.run_id] = value
    return out


def _training_bill(ws: Workspace) -> dict[str, float]:
    """USD per run id on this machine: the run's training compute x price (:data:`TRAINING_UNIT`).

    Training compute is what evotree measured around the judge phase when the judge trains
    (``[eval] judge_trains``, RSIBench-Data: the fixed training stack runs there), else around
    prepare and train; priced as the money budget prices a run's hour (:func:`usd_per_run_hour`)."""
    from evotree.harness.budget import usd_per_run_hour
    from evotree.harness.records import list_runs

    hourly = usd_per_run_hour(ws.config.budget, gpus=ws.config.executor.gpus, cpus=ws.config.executor.cpus)
    judge_trains = bool(getattr(ws.config.eval, "judge_trains", False))
    out = {}
    for record in list_runs(ws):
        seconds = _finite(record.judge_train_seconds if judge_trains else record.train_seconds)
        if seconds is not None:
            out[record.run_id] = seconds / 3600.0 * hourly
    return out


def read_versions(ws: Workspace, *, interventions: Callable[[str], dict[str, Any] | None] | None = None
                  ) -> tuple[list[VersionStat], bool, list[tuple[str, dict[str, Any]]]]:
    """The workspace's versions in creation order with score, audit verdict and spend (runs and
    agent spend charged to them); whether the CPU seconds of every charged run were found on this
    machine; and the agent spend charged to no version, ``[(at, usage)]`` oldest first."""
    from evotree.core.versions import tree_view

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
        score = _finite(headline.get("value"))
        spend: dict[str, float] = {unit: 0.0 for unit in SPEND_UNITS}
        runs = charged.get(view.id, [])
        for run_id, usage in runs:
            _add(spend, usage)
            if usage:  # charged: its CPU time and its training bill count too
                if run_id in cpu:
                    spend["cpu_seconds"] += cpu[run_id]
                else:
                    complete = False
                if bill.get(run_id):
                    spend[TRAINING_UNIT] = spend.get(TRAINING_UNIT, 0.0) + bill[run_id]
        for usage in facts.agent.get(view.id, []):
            _add(spend, usage)
        audit = audits.get(view.id)
        rows.append(VersionStat(
            id=view.id, order=order, parents=list(view.parents), created_at=view.created_at, status=view.status,
            hypothesis=view.hypothesis, score=score, metric=headline.get("metric") if score is not None else None,
            audit=audit, valid=score is not None and audit != "failed", runs_finished=len(runs), spend=spend,
            intervention=interventions(view.id) if interventions is not None else None,
            normalized=_version_normalized(spec, headline, formal.get(view.id) or [])))
    return rows, complete, facts.unattributed


def _version_normalized(spec: Any, headline: Mapping[str, Any], runs: Sequence[Mapping[str, Any]]) -> float | None:
    """A version's normalized score: the tree's; with ``failed_as_zero``, from its formal runs
    (so a version whose runs all failed scores 0 instead of having none)."""
    if spec is None:
        return None
    if spec.failed_as_zero:
        from evotree.core.normalize import normalized_mean

        return normalized_mean([(r.get("status"), (r.get("headline") or {}).get("value")) for r in runs
                                if r.get("status") not in ("ingested", "cancelled", "running")], spec)
    return _finite(headline.get("normalized"))


def normalized_summary(candidates: Sequence[VersionStat], *, failed_as_zero: bool) -> dict[str, Any]:
    """AI4AI-Bench's headline over candidates: the mean normalized score (crashed ones 0 with
    ``failed_as_zero``; without it they are left out, and the mean is biased upward)."""
    scored = [r.normalized for r in candidates if r.normalized is not None]
    return {"mean": statistics.fmean(scored) if scored else None, "counted": len(scored),
            "candidates": len(candidates), "failed_as_zero": failed_as_zero}


# ---------------------------------------------------------------------------- the statistics
def _sum(rows: Sequence[VersionStat]) -> dict[str, float]:
    total: dict[str, float] = {unit: 0.0 for unit in SPEND_UNITS}
    for row in rows:
        _add(total, row.spend)
    return {k: round(v, 9) for k, v in total.items()}


def _share_unit(total: Mapping[str, float], cpu_complete: bool) -> str:
    for unit in _SHARE_UNITS:  # the two read from run.json on this machine need all of them
        if total.get(unit, 0.0) > 0 and (unit not in ("cpu_seconds", TRAINING_UNIT) or cpu_complete):
            return unit
    return "runs"


def compute_stats(setting: str, rows: list[VersionStat], *, params: SearchParams | None = None,
                  champion: str | None = None, cpu_complete: bool = True,
                  unattributed: Sequence[tuple[str, Mapping[str, Any]]] = ()) -> TreeStats:
    """The statistics of one search from its versions in creation order (fills the rows' fields).

    ``unattributed``: spend charged to no version, ``[(at, usage)]`` (agent/API spend): it counts
    in the total and the candidates' spend, and after the peak when recorded after the peak
    version was created."""
    p = params or SearchParams()
    if p.direction == "auto":
        p = replace(p, direction="max")
    notes: list[str] = []
    for row in rows:  # the fields this function fills, cleared (rows may be given again)
        row.best_before = row.best_before_score = row.drop = None
        row.peak = row.after_peak = row.regression = False
    root = rows[0].id if rows else None
    metrics = sorted({r.metric for r in rows if r.valid and r.metric})
    if len(metrics) > 1:
        notes.append(f"versions are scored on different metrics ({', '.join(metrics)}): compared as they are")

    # historical best (the peak): evotree's one rule of "best", the one finalize selects by
    # (evotree.gates.finalize.first_best): ties within epsilon go to the earlier version
    from evotree.gates.finalize import first_best

    best: VersionStat | None = None
    below_best_so_far = []
    for row in rows:
        if best is not None:
            row.best_before, row.best_before_score = best.id, best.score
        if not row.valid:
            continue
        assert row.score is not None
        if best is None or p.better(row.score, best.score):  # type: ignore[arg-type]
            best = row
        elif p.regressed(best.score, row.score):  # type: ignore[arg-type]
            below_best_so_far.append(row.id)
    best = first_best([r for r in rows if r.valid], lambda r: r.score,  # type: ignore[arg-type, return-value]
                      direction=p.direction, epsilon=p.epsilon)  # the same as the scan's: said once
    excluded = [r.id for r in rows if r.score is not None and not r.valid]
    if best is not None:
        best.peak = True
        ties = [r.id for r in rows if r.valid and r is not best and p.tie(best.score, r.score)]  # type: ignore[arg-type]
        historical_best = {"version": best.id, "score": best.score, "metric": best.metric, "order": best.order,
                           "ties": ties, "excluded_audit_failed": excluded,
                           "champion_is_best": champion == best.id if champion else None}
        if champion and champion != best.id:
            notes.append(f"the champion {champion} is not the historical best {best.id}: keep {best.id} selectable")
    else:
        historical_best = {"version": None, "score": None, "metric": None, "order": None, "ties": [],
                           "excluded_audit_failed": excluded, "champion_is_best": None}

    # first attempt
    root_row = rows[0] if rows else None
    first = next((r for r in rows[1:] if root is not None and root in r.parents), None)
    first_attempt: dict[str, Any] = {"version": None, "score": None, "valid": False, "beats_root": None,
                                     "improved_later": None, "best_later": None, "best_later_score": None}
    if first is not None and root_row is not None:
        later = [r for r in rows if r.order > first.order and r.valid and r.parents]
        best_later: VersionStat | None = None
        for r in later:
            if best_later is None or p.better(r.score, best_later.score):  # type: ignore[arg-type]
                best_later = r
        if first.valid:
            improved = best_later is not None and p.better(best_later.score, first.score)  # type: ignore[arg-type]
        else:
            improved = best_later is not None
        beats = (p.better(first.score, root_row.score)  # type: ignore[arg-type]
                 if first.valid and root_row.valid else None)
        first_attempt = {"version": first.id, "score": first.score, "valid": first.valid, "beats_root": beats,
                         "improved_later": improved, "best_later": best_later.id if best_later else None,
                         "best_later_score": best_later.score if best_later else None}

    # post-peak regression, time-ordered over the whole search
    after = [r for r in rows if best is not None and r.order > best.order]
    for r in after:
        r.after_peak = True
    valid_after = [r for r in after if r.valid]
    for r in valid_after:
        r.drop = p.drop(best.score, r.score)  # type: ignore[arg-type, union-attr]
        r.regression = p.regressed(best.score, r.score)  # type: ignore[arg-type, union-attr]
    regressions = [r for r in valid_after if r.regression]
    worst = max(valid_after, key=lambda r: r.drop) if valid_after else None  # type: ignore[arg-type, return-value]
    last = valid_after[-1] if valid_after else None
    post_peak = {"peak": best.id if best else None, "versions_after": len(after), "valid_after": len(valid_after),
                 "continued": bool(valid_after), "regressions": [r.id for r in regressions],
                 "worst_drop": worst.drop if worst else None, "worst_version": worst.id if worst else None,
                 "last_valid": last.id if last else None,
                 "ended_below_peak": last.regression if last else None,
                 "below_best_so_far": below_best_so_far, "margin": p.margin}

    # spend
    total = _sum(rows)
    candidates = rows[1:]
    after_spend = _sum(after)
    candidate_spend = _sum(candidates)
    for at, usage in unattributed:
        for target in (total, candidate_spend) + ((after_spend,) if best is not None and at > best.created_at else ()):
            _add(target, usage)
    after_spend = {k: 0.0 for k in total} | after_spend  # every unit of the total, 0 when none after
    candidate_spend = {k: 0.0 for k in total} | candidate_spend
    total, after_spend, candidate_spend = ({k: round(v, 9) for k, v in d.items()}
                                           for d in (total, after_spend, candidate_spend))
    unit = _share_unit(total, cpu_complete)
    share = {k: (round(after_spend[k] / total[k], 9) if total.get(k) else None) for k in total}
    spend = {"total": total, "after_peak": after_spend, "after_peak_share": share, "candidates": candidate_spend,
             "share_unit": unit, "cpu_seconds_complete": cpu_complete}
    if not cpu_complete:
        notes.append("some charged runs have no run.json on this machine: their CPU seconds are not counted")
    valid_candidates = [r for r in candidates if r.valid]
    cost = {"valid_candidates": len(valid_candidates), "candidates": len(candidates),
            "per_candidate": ({k: round(v / len(valid_candidates), 9) for k, v in candidate_spend.items()}
                              if valid_candidates else None)}

    # stop recommendation
    since = len(after)
    share_value = share.get(unit)
    if best is None:
        action = "continue"
        line = "continue: no valid score yet" if rows else "continue: the tree has no version"
    elif since >= p.patience or (since >= 1 and share_value is not None and share_value >= p.max_after_peak_share):
        action = "stop"
        line = (f"stop: {since} version(s) since the peak {best.id} without improvement, spend after the peak "
                f"{_percent(share_value)} of total ({unit}); keep {best.id}")
    else:
        action = "continue"
        line = (f"continue: {since} version(s) since the peak {best.id} (stop at {p.patience}), spend after "
                f"the peak {_percent(share_value)} of total ({unit})")
    recommendation = {"action": action, "line": line, "keep": best.id if best else None,
                      "versions_since_peak": since, "after_peak_share": share_value, "share_unit": unit,
                      "patience": p.patience, "max_after_peak_share": p.max_after_peak_share}
    return TreeStats(setting=setting, root=root, champion=champion, metric=metrics[0] if len(metrics) == 1 else None,
                     direction=p.direction, versions=rows, historical_best=historical_best, first_attempt=first_attempt,
                     post_peak=post_peak, spend=spend, cost_per_valid_candidate=cost,
                     recommendation=recommendation, notes=notes, interventions=by_class(candidates))


def by_class(candidates: Sequence[VersionStat]) -> dict[str, Any] | None:
    """Per primary intervention class: versions, valid versions and their mean score (AI4AI-Bench's
    algorithm-level vs the rest); None when no candidate was classified."""
    classified = [r for r in candidates if r.intervention is not None and r.intervention.get("primary")]
    if not classified:
        return None
    out: dict[str, Any] = {}
    for r in classified:
        primary = (r.intervention or {})["primary"]
        entry = out.setdefault(primary, {"versions": 0, "valid": 0, "mean_score": None, "_scores": []})
        entry["versions"] += 1
        if r.valid:
            entry["valid"] += 1
            entry["_scores"].append(r.score)
    for entry in out.values():
        scores = entry.pop("_scores")
        entry["mean_score"] = statistics.fmean(scores) if scores else None
    return out


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def tree_stats(ws: Workspace, *, params: SearchParams | None = None, setting: str | None = None,
               classify: bool = True, rules: InterventionRules | None = None) -> TreeStats:
    """Search-level statistics of ``ws``'s tree (see the module doc).

    ``classify``: add each version's intervention class, by ``rules`` or else by the champion's
    policy's ``[interventions]`` rules when it has them (:mod:`evotree.core.interventions`).
    """
    classifier = None
    notes = []
    if classify:
        from evotree.core.errors import EvotreeError
        from evotree.core.interventions import classify_version, policy_rules

        if rules is None:
            try:
                rules = policy_rules(ws)
            except EvotreeError as exc:
                notes = [f"intervention classes not shown: {exc.message}"]
        if rules is not None:
            def classifier(vid: str) -> dict[str, Any] | None:
                try:
                    return classify_version(ws, vid, rules).to_dict()
                except EvotreeError as exc:
                    return {"primary": None, "classes": [], "error": exc.message}
                except Exception as exc:  # noqa: BLE001 - a missing object must not hide the statistics
                    return {"primary": None, "classes": [], "error": f"{type(exc).__name__}: {exc}"[:300]}
    rows, complete, unattributed = read_versions(ws, interventions=classifier)
    champion = ws.ledger.meta().get("champion")
    if params is not None and params.direction == "auto":
        spec = ws.config.eval.normalization
        params = replace(params, direction=spec.direction if spec is not None else "max")
    stats = compute_stats(setting or ws.root.name, rows, params=params, champion=str(champion) if champion else None,
                          cpu_complete=complete, unattributed=unattributed)
    stats.notes.extend(notes)
    norm = ws.config.eval.normalization
    if norm is not None:
        stats.normalized = normalized_summary(rows[1:], failed_as_zero=norm.failed_as_zero)
    return stats


# ---------------------------------------------------------------------------- several settings
def _rate(settings: Sequence[TreeStats], pick: Callable[[TreeStats], bool | None]) -> dict[str, Any]:
    counted = [(s.setting, pick(s)) for s in settings]
    counted = [(name, value) for name, value in counted if value is not None]
    yes = [name for name, value in counted if value]
    return {"numerator": len(yes), "denominator": len(counted),
            "rate": round(len(yes) / len(counted), 6) if counted else None, "settings": yes}


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def aggregate_rates(settings: Sequence[TreeStats]) -> dict[str, Any]:
    """Rates over settings (each: numerator, denominator, rate, the settings counted in the numerator).

    Denominators are the settings where the question has an answer: ``ended_below_peak`` and
    ``post_peak_regression`` over the settings that continued after their peak (RSIBench's 23).
    """
    def continued(s: TreeStats) -> bool | None:
        return s.post_peak["continued"] if s.post_peak["peak"] else None

    def after(s: TreeStats, key: str) -> bool | None:
        return (s.post_peak[key] if key == "ended_below_peak" else bool(s.post_peak["regressions"])) \
            if s.post_peak["continued"] else None

    return {
        "settings": len(settings),
        "first_attempt_improved": _rate(settings, lambda s: s.first_attempt["improved_later"]),
        "first_attempt_beats_root": _rate(settings, lambda s: s.first_attempt["beats_root"]),
        "continued_after_peak": _rate(settings, continued),
        "ended_below_peak": _rate(settings, lambda s: after(s, "ended_below_peak")),
        "post_peak_regression": _rate(settings, lambda s: after(s, "regressions")),
        "stop_recommended": _rate(settings, lambda s: s.recommendation["action"] == "stop"),
        "champion_is_best": _rate(settings, lambda s: s.historical_best["champion_is_best"]),
        "median_after_peak_share": _median([s.recommendation["after_peak_share"] for s in settings]),
        "median_runs_per_valid_candidate": _median([
            (s.cost_per_valid_candidate["per_candidate"] or {}).get("runs") for s in settings]),
        # RSIBench-Data's headline cost: the median over settings of the training bill per valid candidate
        "median_training_usd_per_valid_candidate": _median([
            (s.cost_per_valid_candidate["per_candidate"] or {}).get(TRAINING_UNIT) for s in settings]),
        "interventions": by_class([r for s in settings for r in s.versions[1:]]),
        "normalized": (normalized_summary([r for s in settings if s.normalized is not None for r in s.versions[1:]],
                                          failed_as_zero=all(s.normalized["failed_as_zero"] for s in settings
                                                             if s.normalized is not None))
                       if any(s.normalized is not None for s in settings) else None),
    }


def search_report(workspaces: Sequence[Workspace], *, params: SearchParams | None = None,
                  classify: bool = True) -> SearchReport:
    """Statistics of each workspace's search and the rates over them (one workspace: rates over one)."""
    if not workspaces:
        raise UsageError("search statistics need at least one workspace", fix="pass --workspace PATH")
    roots = [str(ws.root.resolve()) for ws in workspaces]
    if len(set(roots)) != len(roots):
        twice = sorted({r for r in roots if roots.count(r) > 1})
        raise UsageError(f"a workspace is named twice: {', '.join(twice)}",
                         fix="name each workspace once: a setting counted twice would skew the rates")
    p = params or SearchParams()
    names = [ws.root.name for ws in workspaces]
    settings = [tree_stats(ws, params=p, classify=classify,
                           setting=ws.root.name if names.count(ws.root.name) == 1 else str(ws.root))
                for ws in workspaces]
    return SearchReport(generated_at=utcnow(), parameters=asdict(p), settings=settings,
                        rates=aggregate_rates(settings))


# ---------------------------------------------------------------------------- rendering
def _num(value: Any, fmt: str = ".4g") -> str:
    return "—" if value is None else format(value, fmt)


def _yes(value: bool | None) -> str:
    return "—" if value is None else ("yes" if value else "no")


def _rate_text(rate: Mapping[str, Any]) -> str:
    if rate["rate"] is None:
        return "— (0 settings)"
    return f"{100 * rate['rate']:.2f}% ({rate['numerator']}/{rate['denominator']})"


_RATE_LABELS = (
    ("first_attempt_improved", "a later attempt beat the first attempt"),
    ("first_attempt_beats_root", "the first attempt beat the root"),
    ("continued_after_peak", "kept searching after the peak"),
    ("ended_below_peak", "ended below the peak (of those that kept searching)"),
    ("post_peak_regression", "any regression after the peak (of those that kept searching)"),
    ("stop_recommended", "stop recommended"),
    ("champion_is_best", "the champion is the historical best"),
)


def _extra_units(total: Mapping[str, float]) -> list[str]:
    """Units beyond :data:`SPEND_UNITS` that were spent (money, tokens, CPU hours, ...)."""
    return sorted(k for k, v in total.items() if k not in SPEND_UNITS and v)


def _units(spend: Mapping[str, Any]) -> list[str]:
    """The units shown, the share's unit first (the training bill when there is one), agent spend
    (``agent_usd``) right beside it, then runs, steps, CPU seconds and the rest."""
    first = [spend["share_unit"], *(["agent_usd"] if spend["total"].get("agent_usd") else [])]
    rest = [u for u in ("runs", "steps", "cpu_seconds", *_extra_units(spend["total"])) if u not in first]
    return [*dict.fromkeys(first), *rest]


def _setting_lines(s: TreeStats, esc: Callable[[Any], str], *, md: bool) -> list[str]:
    hb, fa, pp, sp = s.historical_best, s.first_attempt, s.post_peak, s.spend
    cost = s.cost_per_valid_candidate
    b = (lambda text: f"**{text}**") if md else (lambda text: text)
    lines = [
        f"- {b('recommendation')}: {esc(s.recommendation['line'])}",
        f"- {b('historical best')}: {esc(hb['version'] or '—')} ({_num(hb['score'], '.10g')}"
        + (f", {esc(hb['metric'])}" if hb["metric"] else "")
        + f", {'higher' if s.direction == 'max' else 'lower'} is better)"
        + (f"; ties kept on the earlier version: {esc(', '.join(hb['ties']))}" if hb["ties"] else "")
        + (f"; audit-failed, excluded: {esc(', '.join(hb['excluded_audit_failed']))}"
           if hb["excluded_audit_failed"] else ""),
        f"- {b('champion')}: {esc(s.champion or '—')}"
        + ("" if hb["champion_is_best"] is None else (" (the historical best)" if hb["champion_is_best"]
                                                      else " (not the historical best)")),
        f"- {b('first attempt')}: {esc(fa['version'] or '—')} ({_num(fa['score'])}); beat the root: "
        f"{_yes(fa['beats_root'])}; a later attempt beat it: {_yes(fa['improved_later'])}"
        + (f" (best later: {esc(fa['best_later'])}, {_num(fa['best_later_score'])})" if fa["best_later"] else ""),
        f"- {b('after the peak')}: {pp['versions_after']} version(s), {pp['valid_after']} valid; "
        f"{len(pp['regressions'])} below the peak by more than {_num(pp['margin'])}"
        + (f" ({esc(', '.join(pp['regressions']))})" if pp["regressions"] else "")
        + f"; worst drop {_num(pp['worst_drop'])}" + (f" ({esc(pp['worst_version'])})" if pp["worst_version"] else "")
        + f"; ended below the peak: {_yes(pp['ended_below_peak'])}",
        f"- {b('below the best so far')} (whole search): {len(pp['below_best_so_far'])}"
        + (f" ({esc(', '.join(pp['below_best_so_far']))})" if pp["below_best_so_far"] else ""),
        f"- {b('spend')} (unit of the share: {esc(sp['share_unit'])}): " + ", ".join(
            f"{unit} {_num(sp['total'].get(unit))} (after the peak {_num(sp['after_peak'].get(unit))}, "
            f"{_percent(sp['after_peak_share'].get(unit))})"
            for unit in _units(sp)),
        f"- {b('cost per valid candidate')}: {cost['valid_candidates']} valid of {cost['candidates']} candidate(s)"
        + ("" if not cost["per_candidate"] else ": " + ", ".join(
            f"{unit} {_num(cost['per_candidate'].get(unit))}" for unit in _units(sp))),
    ]
    if s.normalized is not None:
        n = s.normalized
        lines.append(f"- {b('normalized mean of the candidates')}: {_num(n['mean'], '.3f')} over {n['counted']} of "
                     f"{n['candidates']}" + (" (a failed formal run counts 0)" if n["failed_as_zero"] else
                                             " (failed runs left out)"))
    if s.interventions:
        lines.append(f"- {b('intervention classes')}: " + "; ".join(
            f"{esc(k)} {v['versions']} ({v['valid']} valid, mean {_num(v['mean_score'])})"
            for k, v in s.interventions.items()))
    lines += [f"- note: {esc(n)}" for n in s.notes]
    return lines


def _version_row(r: VersionStat) -> list[str]:
    mark = "★ peak" if r.peak else ("↓ regression" if r.regression else ("after peak" if r.after_peak else ""))
    klass = (r.intervention or {}).get("primary") or "—" if r.intervention is not None else "—"
    return [str(r.order), r.id, ",".join(r.parents) or "—", r.status, _num(r.score, ".10g"),
            r.audit or "—", "yes" if r.valid else "no", _num(r.drop), mark, klass,
            _num(r.spend.get("runs"), "g"), _num(r.spend.get("cpu_seconds"), ".3g"), r.hypothesis]


_COLUMNS = ["#", "version", "parents", "status", "score", "audit", "valid", "drop", "mark", "intervention",
            "runs", "cpu s", "hypothesis"]


def render_markdown(report: SearchReport) -> str:
    """The report as Markdown, free of HTML (untrusted text escaped)."""
    from evotree.report.markdown import escape_md

    out = ["# Search statistics", ""]
    p = report.parameters
    out.append(f"Ties within {p['epsilon']:g} (relative) go to the earlier version; regression margin "
               f"{p['margin']:g}; direction {p['direction']}; stop after {p['patience']} version(s) since the "
               f"peak or {100 * p['max_after_peak_share']:.0f}% of the spend after it.")
    out.append("")
    if len(report.settings) > 1:
        out += ["## Rates over settings", "", "| rate | value |", "|---|---|"]
        for key, label in _RATE_LABELS:
            out.append(f"| {label} | {_rate_text(report.rates[key])} |")
        for klass, v in (report.rates.get("interventions") or {}).items():
            out.append(f"| {escape_md(klass)} interventions | {v['versions']} ({v['valid']} valid, "
                       f"mean {_num(v['mean_score'])}) |")
        out.append("")
    for s in report.settings:
        out += [f"## {escape_md(s.setting)}", ""]
        out += _setting_lines(s, escape_md, md=True)
        out += ["", "| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
        for r in s.versions:
            out.append("| " + " | ".join(escape_md(c, 120) for c in _version_row(r)) + " |")
        out.append("")
    return "\n".join(out)


def render_text(report: SearchReport) -> str:
    """The report as plain text for a terminal (control characters written out visibly)."""
    from evotree.core.text import escape_control

    def esc(value: Any) -> str:
        return escape_control(" ".join(str(value).split()))

    out = []
    if len(report.settings) > 1:
        out.append(f"rates over {len(report.settings)} settings:")
        for key, label in _RATE_LABELS:
            out.append(f"  {label}: {_rate_text(report.rates[key])}")
        for klass, v in (report.rates.get("interventions") or {}).items():
            out.append(f"  {esc(klass)} interventions: {v['versions']} ({v['valid']} valid, "
                       f"mean {_num(v['mean_score'])})")
        out.append("")
    for s in report.settings:
        out.append(f"{esc(s.setting)}:")
        out += ["  " + line[2:] for line in _setting_lines(s, esc, md=False)]
        rows = [_COLUMNS[:-1]] + [[esc(c) for c in _version_row(r)[:-1]] for r in s.versions]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        for row in rows:
            out.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def write_search_report(report: SearchReport, out: str, *, fmt: str = "md") -> str:
    """Write the report as Markdown (``md``), plain text (``text``) or JSON (``json``) to ``out`` (a
    file, or a folder that exists or ends in ``/``: ``search-report.<fmt>`` in it), all or nothing;
    returns the path written and records it in ``report.path``."""
    import json
    import os
    import tempfile
    from pathlib import Path

    from evotree.report.model import ReportError

    if fmt not in ("md", "text", "json"):
        raise UsageError(f"report --tree writes md, text or json, not {fmt!r}", fix="--format md or --format json")
    target = Path(out)
    if out.endswith(("/", os.sep)) or target.is_dir():
        target = target / f"search-report.{'txt' if fmt == 'text' else fmt}"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        report.path = str(target)
        body = (json.dumps(report.to_dict(), indent=2) + "\n" if fmt == "json"
                else render_markdown(report) if fmt == "md" else render_text(report))
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(body)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        report.path = None
        raise ReportError(f"cannot write {target}: {exc.strerror or exc}", fix="choose another --out") from None
    return str(target)
