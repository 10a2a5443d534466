"""`evotree compare A B`: a seed-aware paired comparison of two versions from their evidence.

Reads the judge's per-sample scores of every finished run of both versions, averages them per
(run, task), and hands the two (n_runs, n_tasks) matrices to
:func:`evotree.diagnostics.stats.compare_versions`: each run is one seed, tasks are paired. Versions
scored on different task pools are refused unless the intersection is asked for.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from evotree.diagnostics.stats import (
    alpha_spending,
    benjamini_hochberg,
    compare_versions,
    iqm,
    probability_of_improvement,
    require_same_pool,
    stratified_bootstrap_ci,
    wilcoxon_signed_rank,
)
from evotree.core.errors import EvotreeError
from evotree.core.workspace import Workspace

__all__ = ["NoScores", "VersionComparison", "version_scores", "compare"]


class NoScores(EvotreeError):
    exit_code = 22
    code = "no_scores"


@dataclass
class VersionComparison:
    """What ``evotree compare --json`` prints (schema: ``compare.schema.json``)."""

    a: str
    b: str
    split: str
    delta: float
    ci: list[float]
    p_value: float
    test: str
    n_tasks: int
    n_seeds: list[int]
    seed_aware: bool
    caveat: str | None
    alpha: float
    ci_method: str
    B: int
    runs: dict[str, list[str]]
    mean_a: float
    mean_b: float
    intersected: bool
    threshold: float = 0.0
    decision: str = "inconclusive"
    look: int | None = None
    max_looks: int | None = None
    next_step: str | None = None
    iqm: dict[str, Any] | None = None
    probability_of_improvement: dict[str, Any] | None = None
    per_group: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["v"] = 1
        return out


def version_scores(ws: Workspace, version: str, *, split: str = "validation") -> tuple[list[str], np.ndarray, list[str]]:
    """(task ids, scores of shape (n_runs, n_tasks), run ids) of a version's succeeded runs.

    A task's score in a run is the mean over its samples (Avg@k). Every run must cover the
    same tasks; a run that does not is reported, not silently dropped.
    """
    from evotree.harness.query import connect
    from evotree.harness.runs import runs_dir

    record = ws.resolve(version)
    since = _champion_since(ws, record.id)
    con = connect(runs_dir(ws))
    try:
        rows = con.execute(
            "SELECT e.run_id, e.task_id, avg(e.score) FROM evals e JOIN runs r USING (run_id) "
            "WHERE r.version = ? AND r.status = 'succeeded' AND e.split = ? AND e.phase = 'eval' "
            "AND e.score IS NOT NULL GROUP BY ALL ORDER BY 1, 2",
            [record.id, split],
        ).fetchall()
    finally:
        con.close()
    if not rows:
        raise NoScores(
            f"{record.id} has no scored run on split {split!r} on this machine",
            fix=f"run it first: evotree run {record.id} --seeds 3", version=record.id, split=split,
        )
    if since is not None:
        fresh = set(_runs_started_after(ws, record.id, since))
        rows = [row for row in rows if row[0] in fresh]
        if not rows:
            raise NoScores(
                f"{record.id} is the champion and has no run since it became champion: the runs that "
                "got it promoted are biased upward (the winner's curse), so they are not reused",
                fix=f"re-evaluate it on the same pool: evotree run {record.id} --seeds 3",
                version=record.id, split=split)
    by_run: dict[str, dict[str, float]] = {}
    for run_id, task_id, score in rows:
        by_run.setdefault(run_id, {})[task_id] = float(score)
    run_ids = sorted(by_run)
    tasks = sorted(by_run[run_ids[0]])
    for run_id in run_ids[1:]:
        if sorted(by_run[run_id]) != tasks:
            raise NoScores(
                f"the runs of {record.id} were scored on different tasks ({run_ids[0]}: {len(tasks)}, "
                f"{run_id}: {len(by_run[run_id])})", fix="re-run the version so all runs use one pool",
            )
    matrix = np.array([[by_run[r][t] for t in tasks] for r in run_ids], dtype=float)
    return tasks, matrix, run_ids


def _champion_since(ws: Workspace, version: str) -> str | None:
    """When ``version`` became champion (by promotion), or None if it is not the champion.

    The root ``v0`` became champion at ``evotree init``, before any of its runs, so all its runs
    count; a promoted version's earlier runs do not.
    """
    if ws.champion() != version:
        return None
    for entry in ws.ledger.entries(version=version):
        if entry.event.kind in ("promotion", "workspace.initialized"):
            return entry.event.at
    return None


def _runs_started_after(ws: Workspace, version: str, since: str) -> list[str]:
    from evotree.harness.runs import list_runs

    return [r.run_id for r in list_runs(ws, version=version) if r.started_at > since]


def _per_group(tasks: list[str], a: np.ndarray, b: np.ndarray, alpha: float) -> list[dict[str, Any]] | None:
    """Per environment (task ids ``ENV#i``): Δ and Wilcoxon p, Benjamini–Hochberg adjusted."""
    groups: dict[str, list[int]] = {}
    for index, task in enumerate(tasks):
        if "#" not in task:
            return None
        groups.setdefault(task.rsplit("#", 1)[0], []).append(index)
    if len(groups) < 2:
        return None
    names = sorted(groups)
    rows, p_values = [], []
    for name in names:
        cols = groups[name]
        mean_a, mean_b = a[:, cols].mean(axis=0), b[:, cols].mean(axis=0)
        test = wilcoxon_signed_rank(mean_a, mean_b)
        p_values.append(float(test.p_value))
        rows.append({"group": name, "n_tasks": len(cols), "delta": float(mean_b.mean() - mean_a.mean()),
                     "p_value": float(test.p_value)})
    adjusted = benjamini_hochberg(p_values, alpha)
    for row, p_adj, rejected in zip(rows, adjusted.adjusted, adjusted.rejected):
        row["p_adjusted"] = float(p_adj)
        row["significant"] = bool(rejected)
    return rows


def compare(
    ws: Workspace, a: str, b: str, *, split: str = "validation", intersect: bool = False,
    B: int | None = None, alpha: float | None = None, seed: int = 0,
    look: int | None = None, max_looks: int | None = None, threshold: float | None = None,
) -> VersionComparison:
    """Compare version ``b`` against ``a`` (Δ = b − a) on their common task pool.

    ``decision``: ``better`` when the CI lies above ``threshold`` (default ``[gates].min_delta``),
    ``worse`` when below, else ``inconclusive`` — or, in a sequential evaluation (``look`` of
    ``max_looks``), ``need_more_seeds`` while looks remain. A sequential look tests at the
    alpha this look may spend (Pocock-type Lan-DeMets spending, so that looking again does not
    inflate false promotions), with enough resamples for that level.
    """
    gates = ws.config.gates
    alpha = alpha if alpha is not None else gates.alpha
    threshold = gates.min_delta if threshold is None else threshold
    if (look is None) != (max_looks is None):
        raise EvotreeError("--look and --max-looks go together", fix="pass both, e.g. --look 1 --max-looks 3")
    if look is not None:
        spend = alpha_spending(alpha, look, max_looks, kind="pocock")  # type: ignore[arg-type]
        alpha = spend.nominal
        B = max(B or gates.bootstrap_samples, int(math.ceil(20 / alpha)))
    tasks_a, scores_a, runs_a = version_scores(ws, a, split=split)
    tasks_b, scores_b, runs_b = version_scores(ws, b, split=split)
    common = require_same_pool(tasks_a, tasks_b, intersect=intersect)
    if common != tasks_a or common != tasks_b:
        scores_a = scores_a[:, [tasks_a.index(t) for t in common]]
        scores_b = scores_b[:, [tasks_b.index(t) for t in common]]
    result = compare_versions(
        scores_a, scores_b, rng=np.random.default_rng(seed), B=B or gates.bootstrap_samples, alpha=alpha,
    )
    lo, hi = float(result.ci[0]), float(result.ci[1])
    if lo > threshold:
        decision, next_step = "better", None
    elif hi < threshold:
        decision, next_step = "worse", None
    elif look is not None and look < (max_looks or 0):
        decision = "need_more_seeds"
        next_step = (f"evotree run {ws.resolve(a).id} {ws.resolve(b).id} --seeds {len(runs_a) + len(runs_b)}; "
                     f"then evotree compare {a} {b} --look {look + 1} --max-looks {max_looks}")
    else:
        decision, next_step = "inconclusive", None
    rng = np.random.default_rng(seed + 1)
    extra_b = min(B or gates.bootstrap_samples, 2000)  # the across-seed summaries are secondary
    iqm_summary = None
    poi = None
    if scores_a.shape[0] >= 2 and scores_b.shape[0] >= 2:
        ci_a = stratified_bootstrap_ci(scores_a, iqm, B=extra_b, rng=rng)
        ci_b = stratified_bootstrap_ci(scores_b, iqm, B=extra_b, rng=rng)
        iqm_summary = {"a": float(iqm(scores_a)), "a_ci": [float(x) for x in ci_a.ci],
                       "b": float(iqm(scores_b)), "b_ci": [float(x) for x in ci_b.ci]}
        improvement = probability_of_improvement(scores_b, scores_a, B=extra_b, rng=rng)
        poi = {"b_over_a": float(improvement.probability), "ci": [float(x) for x in improvement.ci]}
    return VersionComparison(
        a=ws.resolve(a).id, b=ws.resolve(b).id, split=split, delta=float(result.delta),
        ci=[float(result.ci[0]), float(result.ci[1])], p_value=float(result.p_value), test=result.test,
        n_tasks=int(result.n_tasks), n_seeds=[int(n) for n in result.n_seeds], seed_aware=result.seed_aware,
        caveat=result.caveat, alpha=float(result.alpha), ci_method=result.ci_method, B=int(result.B),
        runs={"a": runs_a, "b": runs_b}, mean_a=float(scores_a.mean()), mean_b=float(scores_b.mean()),
        intersected=len(common) != len(tasks_a) or len(common) != len(tasks_b),
        threshold=float(threshold), decision=decision, look=look, max_looks=max_looks, next_step=next_step,
        iqm=iqm_summary, probability_of_improvement=poi,
        per_group=_per_group(common, scores_a, scores_b, alpha),
    )
