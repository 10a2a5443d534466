"""`evotree compare A B`: the one comparison of two versions, from their evidence.

Every place that shows how one version compares with another — ``evotree compare``, the
version layer of ``evotree diagnose``, the score gate of ``evotree gates`` and ``promote``, the
reports and the agent tools — calls :func:`compare`, which calls
:func:`evotree.diagnostics.stats.difference` once: one Δ, one CI, one p. The gate applies its
decision rule to that result (:mod:`evotree.gates.score`); a look-adjusted threshold is a
threshold on the same p, never a second interval.

Reads the judge's per-sample scores of every succeeded run the ledger records for both versions
(evidence checked against each run's manifest: :mod:`evotree.harness.integrity`; a run whose
evidence is missing or edited is left out and reported, never silently dropped) of the commit
compared, averages them per (run, task) and then per seed (a repeated seed counts once), and
compares the two (n_seeds, n_tasks) matrices on their common task pool. The run-to-run spread
is pooled over every comparable version of the tree (:func:`tree_spread`: same split, same task
pool, same judge). Runs that are identical copies (a deterministic policy, or a domain that
ignores the seed) are named as such and count as one run; the tasks are then the unit.
Versions scored on different task pools are refused unless the intersection is asked for.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from evotree.diagnostics.run_scores import by_seed, eval_rows, tree_spread
from evotree.diagnostics.seed_stats import iqm, probability_of_improvement, stratified_bootstrap_ci
from evotree.diagnostics.stats import (
    Difference,
    RunSpread,
    alpha_spending,
    benjamini_hochberg,
    difference,
    require_same_pool,
    runs_identical,
    wilcoxon_signed_rank,
)
from evotree.core.errors import EvotreeError
from evotree.core.workspace import Workspace
from evotree.harness.integrity import verify_run_evidence
from evotree.harness.records import runs_dir
from evotree.core.refs import CHAMPION_REF
from evotree.core.refs import branch_ref
from evotree.core.normalize import FAILED_STATUSES
from evotree.core.normalize import normalize_score
from evotree.core.normalize import normalized_mean
from evotree.harness.integrity import evidence_findings

if TYPE_CHECKING:
    from evotree.harness.integrity import EvidenceCheck

__all__ = [
    "NoScores",
    "SideScores",
    "VersionComparison",
    "compare",
    "identical_runs_note",
    "side_scores",
    "version_scores",
]


class NoScores(EvotreeError):
    exit_code = 22
    code = "no_scores"


@dataclass
class VersionComparison:
    """What ``evotree compare A B --json`` prints (schema: ``compare.schema.json``).

    ``a`` is the version compared against (e.g. ``v0``), ``b`` the version compared (e.g. ``v1``):
    Δ = b − a. Every number comes from one :class:`evotree.diagnostics.stats.Difference`.
    """

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
    #: the runs the ledger records for each side, checked on disk (see :func:`compare`)
    evidence: dict[str, Any] | None = None
    #: the CI's confidence (1 − 2·alpha: its lower end is the one-sided bound at alpha)
    confidence: float = 0.95
    #: the p the decision needs: alpha, or this look's share of it (``--look``)
    p_threshold: float = 0.025
    se: float = 0.0
    df: float = 0.0
    #: "runs" (runs are the units) or "tasks" (tasks are the units: the runs are copies)
    unit: str = "runs"
    #: per side [a, b]: its runs are identical copies (they count as one run)
    identical: list[bool] = field(default_factory=lambda: [False, False])
    #: the run-to-run spread used: per side SD and its source, and the tree's pooled estimate
    spread: dict[str, Any] | None = None
    #: the commit of each side whose runs were compared
    commits: dict[str, str | None] | None = None
    #: the seeds of each side (one row each; a repeated seed averaged)
    seeds: dict[str, list[int]] | None = None
    #: one sentence naming the versions, e.g. "v1 is better than v0 (...)"
    statement: str = ""
    #: what the reader should know that is not a problem (e.g. runs that are identical copies)
    notes: list[str] = field(default_factory=list)
    #: ``[eval.normalize]``: each side's mean on the normalized scale (the statistics stay raw)
    normalized: dict[str, float | None] | None = None
    difference: Difference | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        diff, self.difference = self.difference, None
        try:
            out = asdict(self)
        finally:
            self.difference = diff
        out.pop("difference", None)
        out["v"] = 1
        return out


def version_scores(
    ws: Workspace,
    version: str,
    *,
    split: str = "validation",
    check: EvidenceCheck | None = None,
    commit: str | None = None,
) -> tuple[list[str], np.ndarray, list[str]]:
    """(task ids, scores of shape (n_runs, n_tasks), run ids) of a version's succeeded runs.

    The runs are those the ledger records (:func:`evotree.harness.integrity.verify_run_evidence`,
    or ``check`` when the caller already has it) that finished ``succeeded`` with their evidence
    present and intact — of ``commit`` only, when given; each run's scores are read from its own
    directory only. A run whose evidence is missing, edited or unfinished is never read (callers
    report it: :func:`compare` in ``evidence``, the score gate as a failing finding); a run
    directory the ledger does not know is ignored. A task's score in a run is the mean over its
    samples (Avg@k). Every run must cover the same tasks; a run that does not is reported, not
    silently dropped.
    """

    record = ws.resolve(version)
    since = champion_since(ws, record.id)
    check = check if check is not None else verify_run_evidence(ws, record.id)
    usable = [
        r
        for r in check.runs
        if r.usable and r.status == "succeeded" and (since is None or (r.started_at or "") > since)
    ]
    chosen = [r for r in usable if commit is None or r.commit == commit]
    rows = eval_rows(runs_dir(ws), chosen, split)
    if not rows:
        _raise_no_scores(ws, record, check, usable, since, split, commit)
    return _score_matrix(record.id, rows)


def _raise_no_scores(
    ws: Workspace,
    record: Any,
    check: EvidenceCheck,
    usable: list[Any],
    since: str | None,
    split: str,
    commit: str | None,
) -> NoReturn:
    """Raise :class:`NoScores` saying why a version has nothing to compare: runs the ledger
    records that cannot be used, foreign runs, runs of another commit only, or a champion
    without a run since its promotion."""
    excluded = [r for r in check.problems if since is None or (r.started_at or "") > since]
    why = (
        f"; {len(excluded)} run(s) the ledger records cannot be used ({_problem_text(excluded)})"
        if excluded
        else ""
    )
    foreign = [r.run_id for r in check.by_state("foreign")]
    if foreign:  # pulled from someone else (or forged): listed, never counted (harness.provenance)
        why += (
            f"; {len(foreign)} run(s) are foreign here ({', '.join(foreign[:3])}"
            f"{' …' if len(foreign) > 3 else ''}): recorded by another workspace and not signed by a "
            "runner key the champion lists, so not counted (docs/cluster.md: runner keys)"
        )
    if commit is not None and usable and eval_rows(runs_dir(ws), usable, split):
        raise NoScores(
            f"none of the {len(usable)} scored run(s) of {record.id} is of the commit compared "
            f"({commit[:10]}): runs of another commit are not evidence for this one" + why,
            fix=f"evotree run {record.id} --seeds 1 (runs the branch tip; {record.id} must be at {commit[:10]})",
            version=record.id,
            split=split,
            commit=commit,
        )
    earlier = [r for r in check.runs if r.usable and r.status == "succeeded" and r not in usable]
    if since is not None and earlier and eval_rows(runs_dir(ws), earlier, split):
        promoted = _promotion_comparison(ws, record.id)
        said = (
            (
                f"; it was promoted on Δ {promoted['delta']:+.4g} (CI {promoted['ci'][0]:+.4g} to "
                f"{promoted['ci'][1]:+.4g}, p {promoted['p_value']:.3g}) against {promoted['against']}, "
                "the signed dossier's comparison (`evotree log --version "
                f"{record.id}` shows it)"
            )
            if promoted
            else ""
        )
        raise NoScores(
            f"{record.id} is the champion and has no run since it became champion: the runs that "
            "got it promoted are biased upward (the winner's curse), so they are not reused"
            + said
            + why,
            fix=f"re-evaluate it on the same pool with new seeds: evotree run {record.id} --seeds 4 "
            f"--seed-start {_next_seed(check)}",
            version=record.id,
            split=split,
            promotion_comparison=promoted,
        )
    raise NoScores(
        f"{record.id} has no scored run on split {split!r} on this machine" + why,
        fix=f"run it first: evotree run {record.id} --seeds 1",
        version=record.id,
        split=split,
    )


def _score_matrix(
    version: str, rows: list[tuple[str, str, float]]
) -> tuple[list[str], np.ndarray, list[str]]:
    """(task ids, (n_runs, n_tasks) scores, run ids) from (run, task, score) rows; refused when
    the runs were scored on different tasks."""
    by_run: dict[str, dict[str, float]] = {}
    for run_id, task_id, score in rows:
        by_run.setdefault(run_id, {})[task_id] = float(score)
    run_ids = sorted(by_run)
    tasks = sorted(by_run[run_ids[0]])
    for run_id in run_ids[1:]:
        if sorted(by_run[run_id]) != tasks:
            raise NoScores(
                f"the runs of {version} were scored on different tasks ({run_ids[0]}: {len(tasks)}, "
                f"{run_id}: {len(by_run[run_id])})",
                fix="re-run the version so all runs use one pool",
            )
    matrix = np.array([[by_run[r][t] for t in tasks] for r in run_ids], dtype=float)
    return tasks, matrix, run_ids


def _promotion_comparison(ws: Workspace, version: str) -> dict[str, Any] | None:
    """The comparison the signed dossier of ``version``'s promotion recorded (Δ, CI, p, against whom)."""
    for entry in ws.ledger.entries(version=version):
        if entry.event.kind != "promotion" or not isinstance(entry.event.data, dict):
            continue
        dossier = entry.event.data.get("dossier")
        comparison = dossier.get("comparison") if isinstance(dossier, dict) else None
        if not isinstance(comparison, dict):
            return None
        try:
            return {
                "delta": float(comparison["delta"]),
                "ci": [float(x) for x in comparison["ci"]][:2],
                "p_value": float(comparison["p_value"]),
                "against": str(comparison.get("a") or entry.event.data.get("previous_champion")),
                "ledger_commit": entry.commit,
            }
        except (KeyError, TypeError, ValueError):
            return None
    return None


def _next_seed(check: EvidenceCheck) -> int:
    """A seed no run of the version has used yet (new seeds: a repeated seed repeats its luck)."""
    seeds = [r.seed for r in check.runs if r.seed is not None]
    return max(seeds) + 1 if seeds else 0


@dataclass
class SideScores:
    """One side of a comparison: its runs of one commit, one row per seed."""

    version: str
    tasks: list[str]
    matrix: np.ndarray  #: (n_seeds, n_tasks)
    run_ids: list[str]
    seeds: list[int]
    commit: str | None
    judge_commits: list[str]
    next_seed: int
    note: str | None = None


def default_commit(ws: Workspace, version: str) -> str | None:
    """The commit a comparison of ``version`` is about: the champion ref's for the champion, else
    the tip of its branch (the commit the gates would promote)."""

    record = ws.resolve(version)
    ref = CHAMPION_REF if ws.champion() == record.id else branch_ref(record.id)
    tip = ws.git.ref_target(ref)
    return str(tip) if tip is not None else record.base_commit


def side_scores(
    ws: Workspace,
    version: str,
    *,
    split: str = "validation",
    check: EvidenceCheck | None = None,
    commit: str | None = None,
    strict: bool = False,
) -> SideScores:
    """The scores of ``version`` a comparison uses: its runs of ``commit`` (default
    :func:`default_commit`), averaged per seed. Without ``strict``, a version with no scored run
    of that commit falls back to the newest commit that has some, and says so in ``note``."""

    record = ws.resolve(version)
    check = check if check is not None else verify_run_evidence(ws, record.id)
    want = commit or default_commit(ws, record.id)
    note = None
    try:
        tasks, matrix, run_ids = version_scores(
            ws, record.id, split=split, check=check, commit=want
        )
    except NoScores as exc:
        if strict or "of the commit compared" not in exc.message:
            raise
        tasks, matrix, run_ids = version_scores(ws, record.id, split=split, check=check)
        info = {r.run_id: r for r in check.runs}
        newest = max(run_ids, key=lambda rid: info[rid].started_at or "")
        want = info[newest].commit
        keep = [i for i, rid in enumerate(run_ids) if info[rid].commit == want]
        matrix, run_ids = matrix[keep], [run_ids[i] for i in keep]
        note = (
            f"{record.id} has no run of its current commit: its runs of the earlier commit "
            f"{str(want)[:10]} are compared (the gates count only runs of the commit they would promote)"
        )
    info = {r.run_id: r for r in check.runs}
    seeded, seeds = by_seed(
        matrix, run_ids, {rid: info[rid].seed if rid in info else None for rid in run_ids}
    )
    judges = sorted(
        {str(info[rid].judge_commit) for rid in run_ids if rid in info and info[rid].judge_commit}
    )
    return SideScores(
        record.id, tasks, seeded, run_ids, seeds, want, judges, _next_seed(check), note
    )


def identical_runs_note(ws: Workspace, version: str, *, split: str = "validation") -> str | None:
    """A warning when the version's runs of its current commit (two or more seeds) gave
    identical per-task scores: a deterministic policy, or a domain that ignores the seed."""
    try:
        side = side_scores(ws, version, split=split, strict=True)
    except EvotreeError:
        return None
    if not runs_identical(side.matrix):
        return None
    return (
        f"{side.version}: its {len(side.seeds)} runs (seeds {', '.join(map(str, side.seeds[:6]))}"
        f"{' …' if len(side.seeds) > 6 else ''}) gave identical per-task scores on {split}: the policy is "
        "deterministic or the domain ignores the seed, so more seeds add nothing; comparisons count its "
        "runs as one and use the tasks as the unit"
    )


def _problem_text(runs: list[Any]) -> str:
    parts = []
    for state in ("missing", "tampered", "unfinished", "unverified"):
        ids = [r.run_id for r in runs if r.state == state]
        if ids:
            parts.append(f"{state}: {', '.join(ids[:3])}" + (" …" if len(ids) > 3 else ""))
    return "; ".join(parts)


def champion_since(ws: Workspace, version: str) -> str | None:
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


def _per_group(
    tasks: list[str], a: np.ndarray, b: np.ndarray, alpha: float
) -> list[dict[str, Any]] | None:
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
        rows.append(
            {
                "group": name,
                "n_tasks": len(cols),
                "delta": float(mean_b.mean() - mean_a.mean()),
                "p_value": float(test.p_value),
            }
        )
    adjusted = benjamini_hochberg(p_values, alpha)
    for row, p_adj, rejected in zip(rows, adjusted.adjusted, adjusted.rejected):
        row["p_adjusted"] = float(p_adj)
        row["significant"] = bool(rejected)
    return rows


def compare(
    ws: Workspace,
    a: str,
    b: str,
    *,
    split: str = "validation",
    intersect: bool = False,
    B: int | None = None,
    alpha: float | None = None,
    seed: int = 0,
    look: int | None = None,
    max_looks: int | None = None,
    threshold: float | None = None,
    evidence_checks: tuple[EvidenceCheck, EvidenceCheck] | None = None,
    commits: tuple[str | None, str | None] | None = None,
) -> VersionComparison:
    """Compare version ``b`` against ``a`` (Δ = b − a) on their common task pool: the one comparison.

    Δ, CI (at 1 − 2·``alpha``, default ``[gates].alpha``) and p (one-sided: that ``b`` is not
    better than ``a`` by more than ``threshold``, default ``[gates].min_delta``) come from one
    :func:`evotree.diagnostics.stats.difference`, with the run-to-run spread pooled over the
    tree (:func:`tree_spread`). No bootstrap enters them, so every caller gets the same numbers.

    ``decision``: ``better`` when p is below the threshold on p (``alpha``: the CI then lies above
    ``threshold``), ``worse`` when the CI lies below ``threshold``, else ``inconclusive`` — or, in
    a sequential evaluation (``look`` of ``max_looks``), ``need_more_seeds`` while looks remain;
    a look tests the same p against its share of ``alpha`` (``p_threshold``; Pocock-type
    Lan-DeMets spending), never against a second interval.

    ``commits``: the commit of each side whose runs count (the score gate passes the champion's
    and the candidate's; default :func:`default_commit` with a fallback that ``caveat`` names).

    Evidence: only runs the ledger records, with their evidence intact, are read
    (:func:`version_scores`). Runs that are missing, edited, unfinished or unverifiable are left
    out of the numbers and reported: ``evidence.ok`` is false, ``evidence.findings`` holds a
    critical ``score.evidence_*`` finding per kind naming the runs, and the caveat starts with
    ``EVIDENCE PROBLEM``. (``evidence_checks``: the two sides' checks, when the caller has them.)

    ``B`` and ``seed``: resamples and generator of the secondary summaries only (IQM, P(b > a)).
    """
    gates = ws.config.gates
    alpha = alpha if alpha is not None else gates.alpha
    threshold = gates.min_delta if threshold is None else threshold
    p_threshold = _p_threshold(alpha, look, max_looks)
    sides = _read_sides(
        ws, a, b, split=split, intersect=intersect, evidence_checks=evidence_checks, commits=commits
    )
    diff = difference(
        sides.scores_a,
        sides.scores_b,
        spread=sides.spread,
        confidence=1 - 2 * alpha,
        threshold=threshold,
    )
    decision, next_step = _decide(diff, sides, p_threshold, threshold, look, max_looks)
    extra_b = min(B or gates.bootstrap_samples, 2000)  # the across-seed summaries are secondary
    iqm_summary, poi = _seed_summaries(sides.scores_a, sides.scores_b, extra_b, seed)
    return _comparison(
        ws,
        sides,
        diff,
        split=split,
        alpha=alpha,
        threshold=threshold,
        p_threshold=p_threshold,
        decision=decision,
        next_step=next_step,
        look=look,
        max_looks=max_looks,
        B=extra_b,
        iqm_summary=iqm_summary,
        poi=poi,
    )


def _p_threshold(alpha: float, look: int | None, max_looks: int | None) -> float:
    """The p a ``better`` decision needs: ``alpha``, or this look's Pocock-type share of it."""
    if (look is None) != (max_looks is None):
        raise EvotreeError(
            "--look and --max-looks go together", fix="pass both, e.g. --look 1 --max-looks 3"
        )
    if not 0.0 < alpha < 0.5:
        raise EvotreeError(f"alpha: expected a one-sided level in (0, 0.5), actually: {alpha}")
    p_threshold = alpha
    if look is not None:
        p_threshold = alpha_spending(alpha, look, max_looks, kind="pocock").nominal  # type: ignore[arg-type]
    return p_threshold


@dataclass
class _Sides:
    """The two sides of a comparison, read from their evidence and aligned on one task pool."""

    name_a: str
    name_b: str
    check_a: EvidenceCheck
    check_b: EvidenceCheck
    side_a: SideScores
    side_b: SideScores
    evidence: dict[str, Any]
    warning: str | None
    common: list[str]
    scores_a: np.ndarray  #: (n_seeds, n_common_tasks)
    scores_b: np.ndarray
    spread: RunSpread


def _read_sides(
    ws: Workspace,
    a: str,
    b: str,
    *,
    split: str,
    intersect: bool,
    evidence_checks: tuple[EvidenceCheck, EvidenceCheck] | None,
    commits: tuple[str | None, str | None] | None,
) -> _Sides:
    """Both sides' scores on their common task pool, their evidence report and the tree's
    run-to-run spread of comparable versions (:func:`tree_spread`)."""
    name_a, name_b = ws.resolve(a).id, ws.resolve(b).id
    check_a, check_b = evidence_checks or (
        verify_run_evidence(ws, name_a),
        verify_run_evidence(ws, name_b),
    )
    want_a, want_b = commits or (None, None)
    side_a = side_scores(
        ws, name_a, split=split, check=check_a, commit=want_a, strict=want_a is not None
    )
    side_b = side_scores(
        ws, name_b, split=split, check=check_b, commit=want_b, strict=want_b is not None
    )
    evidence, warning = comparison_evidence(ws, check_a, check_b)
    common = require_same_pool(side_a.tasks, side_b.tasks, intersect=intersect)
    scores_a = side_a.matrix[:, [side_a.tasks.index(t) for t in common]]
    scores_b = side_b.matrix[:, [side_b.tasks.index(t) for t in common]]
    judges = sorted(set(side_a.judge_commits) | set(side_b.judge_commits)) or None
    spread = tree_spread(
        ws,
        split=split,
        tasks=common,
        judges=judges,
        sides=[scores_a, scores_b],
        exclude=(name_a, name_b),
    )
    return _Sides(
        name_a,
        name_b,
        check_a,
        check_b,
        side_a,
        side_b,
        evidence,
        warning,
        common,
        scores_a,
        scores_b,
        spread,
    )


def _decide(
    diff: Difference,
    sides: _Sides,
    p_threshold: float,
    threshold: float,
    look: int | None,
    max_looks: int | None,
) -> tuple[str, str | None]:
    """(decision, the commands of the next look when it is ``need_more_seeds``)."""
    if diff.p_value < p_threshold:
        return "better", None
    if diff.ci[1] < threshold:
        return "worse", None
    if look is not None and look < (max_looks or 0) and not all(diff.identical):
        n_a, n_b = diff.n_runs
        name_a, name_b = sides.name_a, sides.name_b
        return "need_more_seeds", (
            f"evotree run {name_a} --seeds {max(1, n_a)} --seed-start {sides.side_a.next_seed}; evotree run "
            f"{name_b} --seeds {max(1, n_b)} --seed-start {sides.side_b.next_seed}; then evotree compare "
            f"{name_a} {name_b} --look {look + 1} --max-looks {max_looks}"
        )
    return "inconclusive", None


def _seed_summaries(
    scores_a: np.ndarray, scores_b: np.ndarray, B: int, seed: int
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(each side's IQM with its stratified-bootstrap CI, P(b > a) with its CI): the secondary
    across-seed summaries, None unless both sides have two seeds."""
    rng = np.random.default_rng(seed + 1)
    if not (scores_a.shape[0] >= 2 and scores_b.shape[0] >= 2):
        return None, None
    ci_a = stratified_bootstrap_ci(scores_a, iqm, B=B, rng=rng)
    ci_b = stratified_bootstrap_ci(scores_b, iqm, B=B, rng=rng)
    iqm_summary = {
        "a": float(iqm(scores_a)),
        "a_ci": [float(x) for x in ci_a.ci],
        "b": float(iqm(scores_b)),
        "b_ci": [float(x) for x in ci_b.ci],
    }
    improvement = probability_of_improvement(scores_b, scores_a, B=B, rng=rng)
    return iqm_summary, {
        "b_over_a": float(improvement.probability),
        "ci": [float(x) for x in improvement.ci],
    }


def _identical_notes(diff: Difference, name_a: str, name_b: str) -> list[str]:
    """The notes on sides whose runs are identical copies (and on the unit, when both are)."""
    said = [
        f"{name}'s runs are identical copies (a deterministic policy, or a domain that ignores the seed): they "
        "count as one run, and more seeds add nothing"
        for name, same in ((name_a, diff.identical[0]), (name_b, diff.identical[1]))
        if same
    ]
    if all(diff.identical):
        said.append("the tasks are the unit of this comparison")
    return said


def _comparison(
    ws: Workspace,
    sides: _Sides,
    diff: Difference,
    *,
    split: str,
    alpha: float,
    threshold: float,
    p_threshold: float,
    decision: str,
    next_step: str | None,
    look: int | None,
    max_looks: int | None,
    B: int,
    iqm_summary: dict[str, Any] | None,
    poi: dict[str, Any] | None,
) -> VersionComparison:
    """The :class:`VersionComparison` of the two sides, from their one :class:`Difference`."""
    s, spread = sides, sides.spread
    unit_text = "runs as units" if diff.unit == "runs" else "tasks as units"
    tree_text = (
        f"spread pooled over {spread.versions} version(s) of the tree, df {spread.df}"
        if spread.sd is not None
        else "no pooled spread"
    )
    lo, hi = diff.ci
    return VersionComparison(
        a=s.name_a,
        b=s.name_b,
        split=split,
        delta=float(diff.delta),
        ci=[float(lo), float(hi)],
        p_value=float(diff.p_value),
        test=f"t_{diff.unit}",
        n_tasks=int(diff.n_tasks),
        n_seeds=[int(n) for n in diff.n_runs],
        seed_aware=diff.se_runs is not None,
        caveat=_caveat(s, diff),
        alpha=float(alpha),
        ci_method=f"t ({unit_text}; {tree_text})",
        B=int(B),
        runs={"a": s.side_a.run_ids, "b": s.side_b.run_ids},
        mean_a=float(s.scores_a.mean()),
        mean_b=float(s.scores_b.mean()),
        intersected=len(s.common) != len(s.side_a.tasks) or len(s.common) != len(s.side_b.tasks),
        threshold=float(threshold),
        decision=decision,
        look=look,
        max_looks=max_looks,
        next_step=next_step,
        iqm=iqm_summary,
        probability_of_improvement=poi,
        per_group=_per_group(s.common, s.scores_a, s.scores_b, alpha),
        evidence=s.evidence,
        confidence=float(diff.confidence),
        p_threshold=float(p_threshold),
        se=float(diff.se),
        df=float(diff.df) if math.isfinite(diff.df) else 1e9,
        unit=diff.unit,
        identical=list(diff.identical),
        spread={
            "sd": list(diff.sd),
            "source": list(diff.sd_source),
            "tree": spread.to_dict(),
            "se_runs": diff.se_runs,
            "se_tasks": diff.se_tasks,
        },
        commits={"a": s.side_a.commit, "b": s.side_b.commit},
        seeds={"a": s.side_a.seeds, "b": s.side_b.seeds},
        statement=statement(s.name_a, s.name_b, diff, decision, p_threshold, threshold),
        notes=_identical_notes(diff, s.name_a, s.name_b),
        normalized=_normalized_sides(ws, s),
        difference=diff,
    )


def _caveat(sides: _Sides, diff: Difference) -> str | None:
    """The comparison's caveat: the evidence warning, each side's note and the difference's."""
    notes = [sides.warning, sides.side_a.note, sides.side_b.note]
    if diff.caveat:
        notes.append(diff.caveat)
    return " ".join(n for n in notes if n) or None


def _normalized_sides(ws: Workspace, sides: _Sides) -> dict[str, float | None] | None:
    """Each side's mean normalized by ``[eval.normalize]`` (:func:`_normalized_means`), with the
    side's failed formal runs since it became champion."""
    s = sides
    return _normalized_means(
        ws,
        float(s.scores_a.mean()),
        float(s.scores_b.mean()),
        sides=(
            (s.scores_a, _failed_formal(s.check_a, s.side_a.commit, champion_since(ws, s.name_a))),
            (s.scores_b, _failed_formal(s.check_b, s.side_b.commit, champion_since(ws, s.name_b))),
        ),
    )


def _failed_formal(check: Any, commit: str | None, since: str | None) -> list[str]:
    """The failed formal runs of ``commit`` (not voided, not foreign; for a champion, since it became
    champion, as its scored runs): with ``failed_as_zero`` they count 0."""

    return [
        r.run_id
        for r in check.runs
        if r.status in FAILED_STATUSES
        and r.void is None
        and r.state != "foreign"
        and (commit is None or r.commit == commit)
        and (since is None or (r.started_at or "") > since)
    ]


def _normalized_means(
    ws: Workspace,
    mean_a: float,
    mean_b: float,
    sides: tuple[tuple[Any, list[str]], tuple[Any, list[str]]] | None = None,
) -> dict[str, float | None] | None:
    """Each side's mean score normalized by ``[eval.normalize]`` (the mean of raw scores, then
    normalized: the map is not linear across its anchors), or None when it is not set. With
    ``failed_as_zero`` (AI4AI-Bench): the mean over the side's formal runs of each run's normalized
    mean score, its failed runs of the same commit counting 0 (``sides``: (scores, failed run ids))."""
    spec = ws.config.eval.normalization
    if spec is None:
        return None

    if spec.failed_as_zero and sides is not None:
        out = []
        for scores, failed in sides:
            pairs = [("succeeded", float(row.mean())) for row in scores] + [
                ("failed", None) for _ in failed
            ]
            out.append(normalized_mean(pairs, spec))
        return {"a": out[0], "b": out[1]}
    return {"a": normalize_score(mean_a, spec), "b": normalize_score(mean_b, spec)}


def statement(
    a: str, b: str, diff: Difference, decision: str, p_threshold: float, threshold: float
) -> str:
    """One sentence naming the versions, e.g. "v1 is better than v0: Δ +0.21, 95 % CI [...], p 0.0004"."""
    level = f"{100 * diff.confidence:.0f} %"
    numbers = f"Δ {diff.delta:+.4f}, {level} CI [{diff.ci[0]:+.4f}, {diff.ci[1]:+.4f}], one-sided p {diff.p_value:.3g}"
    above = f" above {threshold:+g}" if threshold else ""
    if decision == "better":
        return f"{b} is better than {a}{above}: {numbers} < {p_threshold:.3g}"
    if decision == "worse":
        return f"{b} is worse than {a}: {numbers}"
    if decision == "need_more_seeds":
        return f"{b} is not yet distinguishable from {a}: {numbers}, needs < {p_threshold:.3g} at this look"
    return f"{b} is not distinguishable from {a}: {numbers}"


def comparison_evidence(
    ws: Workspace, check_a: EvidenceCheck, check_b: EvidenceCheck
) -> tuple[dict[str, Any], str | None]:
    """``VersionComparison.evidence`` and the warning that leads its caveat (None when all is well).

    Counted are the runs a comparison may use: every run the ledger records for the version
    (for a champion, those since it became champion). A missing, edited, unfinished or unchecked
    run is left out of the numbers but never silently: it is listed here, named in the caveat,
    and ``ok`` is false (the score gate fails on the same runs).
    """

    out: dict[str, Any] = {"ok": True, "findings": []}
    bad: list[str] = []
    for side, check in (("a", check_a), ("b", check_b)):
        since = champion_since(ws, check.version)
        counted = [r for r in check.runs if since is None or (r.started_at or "") > since]
        out[side] = check.summary(counted)
        problems = [r for r in counted if not r.usable and r.state != "running"]
        if problems:
            out["ok"] = False
            out["findings"] += [
                f.to_dict() for f in evidence_findings(problems, version=check.version)
            ]
            bad.append(f"{check.version}: {_problem_text(problems)}")
    warning = None
    if bad:
        warning = (
            "EVIDENCE PROBLEM: run(s) the ledger records were left out because their evidence is "
            f"missing, edited or unfinished ({'; '.join(bad)}); these numbers are not a valid "
            "comparison and the score gate fails."
        )
    return out, warning
