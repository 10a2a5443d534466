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

The modules: :mod:`.search_model` (the parameters and the data), :mod:`.search_read` (one
workspace's versions with score, audit verdict and spend), :mod:`.search_stats` (the statistics
and the rates over settings), :mod:`.search_render` (Markdown, text, the file). This module
computes one workspace's statistics and a report over several, and re-exports the public names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

from evotree.core.errors import EvotreeError, UsageError
from evotree.core.interventions import InterventionRules, classify_version, policy_rules
from evotree.core.ledger import utcnow
from evotree.core.workspace import Workspace
from evotree.report.search_model import (
    SEARCH_SCHEMA_VERSION,
    SPEND_UNITS,
    TRAINING_UNIT,
    SearchParams,
    SearchReport,
    TreeStats,
    VersionStat,
)
from evotree.report.search_read import read_versions
from evotree.report.search_render import render_markdown, render_text, write_search_report
from evotree.report.search_stats import aggregate_rates, by_class, compute_stats, normalized_summary

__all__ = [
    "SearchParams",
    "VersionStat",
    "TreeStats",
    "SearchReport",
    "tree_stats",
    "search_report",
    "render_markdown",
    "render_text",
    "SEARCH_SCHEMA_VERSION",
    "SPEND_UNITS",
    "TRAINING_UNIT",
    "normalized_summary",
    "compute_stats",
    "read_versions",
    "by_class",
    "aggregate_rates",
    "write_search_report",
]


def tree_stats(
    ws: Workspace,
    *,
    params: SearchParams | None = None,
    setting: str | None = None,
    classify: bool = True,
    rules: InterventionRules | None = None,
) -> TreeStats:
    """Search-level statistics of ``ws``'s tree (see the module doc).

    ``classify``: add each version's intervention class, by ``rules`` or else by the champion's
    policy's ``[interventions]`` rules when it has them (:mod:`evotree.core.interventions`).
    """
    classifier = None
    notes = []
    if classify:
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
                    return {
                        "primary": None,
                        "classes": [],
                        "error": f"{type(exc).__name__}: {exc}"[:300],
                    }

    rows, complete, unattributed = read_versions(ws, interventions=classifier)
    champion = ws.ledger.meta().get("champion")
    if params is not None and params.direction == "auto":
        spec = ws.config.eval.normalization
        params = replace(params, direction=spec.direction if spec is not None else "max")
    stats = compute_stats(
        setting or ws.root.name,
        rows,
        params=params,
        champion=str(champion) if champion else None,
        cpu_complete=complete,
        unattributed=unattributed,
    )
    stats.notes.extend(notes)
    norm = ws.config.eval.normalization
    if norm is not None:
        stats.normalized = normalized_summary(rows[1:], failed_as_zero=norm.failed_as_zero)
    return stats


def search_report(
    workspaces: Sequence[Workspace], *, params: SearchParams | None = None, classify: bool = True
) -> SearchReport:
    """Statistics of each workspace's search and the rates over them (one workspace: rates over one)."""
    if not workspaces:
        raise UsageError(
            "search statistics need at least one workspace", fix="pass --workspace PATH"
        )
    roots = [str(ws.root.resolve()) for ws in workspaces]
    if len(set(roots)) != len(roots):
        twice = sorted({r for r in roots if roots.count(r) > 1})
        raise UsageError(
            f"a workspace is named twice: {', '.join(twice)}",
            fix="name each workspace once: a setting counted twice would skew the rates",
        )
    p = params or SearchParams()
    names = [ws.root.name for ws in workspaces]
    settings = [
        tree_stats(
            ws,
            params=p,
            classify=classify,
            setting=ws.root.name if names.count(ws.root.name) == 1 else str(ws.root),
        )
        for ws in workspaces
    ]
    return SearchReport(
        generated_at=utcnow(),
        parameters=asdict(p),
        settings=settings,
        rates=aggregate_rates(settings),
    )
