"""The score gate's decision rule, applied to the one comparison of two versions.

The numbers — Δ, its CI and its p — come from one computation,
:func:`evotree.diagnostics.stats.difference` (called by ``evotree compare``, ``diagnose``,
``gates``, the reports and the agent tools through :func:`evotree.diagnostics.compare.compare`);
this module only decides what they allow. The calibration study
(:mod:`evotree.gates.calibration`, ``bench/bench_gate_calibration.py``) drives these same
functions on a simulated tree.

The rule (docs/gates.md):

- **One-sided test at ``alpha``** (default 0.025): promote only when p (H0: Δ ≤ ``min_delta``,
  default 0.002: better by more than a fifth of a point of a 0–1 score) is below this look's
  threshold. With one look the threshold is ``alpha`` itself, so the gate
  passes exactly when the lower end of the reported (1 − 2·alpha) CI is above ``min_delta``.
- **The run-to-run spread from the whole tree**: the SE of Δ uses the spread of a run's mean
  score pooled over every comparable version of the tree (a side's own estimate when it is
  larger; identical copies count as one run), so even the first look has many degrees of freedom.
- **Sequential looks, seeds added only where the gate is unsure**: looks at ``min_seeds`` ×
  (1, 2, 3, 4, 6, 8, 12, 16 …) candidate seeds up to ``max_runs - champion_seeds`` (room for the
  champion's re-runs). By look j the gate has spent ``alpha · (s_j / s_K)²`` (``spending`` = 2:
  almost nothing at the first looks, which mostly screen out harmful and neutral changes
  cheaply), and each look's threshold on p is the group-sequential one (Lan-DeMets, computed by
  :func:`group_sequential_thresholds`): the chance that a change with Δ = ``min_delta`` first
  passes at look j is look j's share, so the chance that it ever passes, however many looks it
  goes through, is ``alpha`` (normal approximation, at the planned seeds; every threshold is
  below ``alpha``, so a comparison that skips looks stays within it). Between looks the gate
  asks for the next look's seeds of the candidate and as many of the champion (at most
  ``champion_top_up`` when that is set; not by default); it stops asking
  (``futile``) when the chance of passing at the last look, were the true Δ ``optimism`` (1) SE
  above the observed one (an optimistic conditional power), is below ``futility`` (40 %).
  Stopping early never raises the false-promotion rate (the futility rule is non-binding: the
  thresholds ignore it). The defaults were chosen on the simulated tree of
  :mod:`evotree.gates.calibration` (docs/benchmarks/gate.md).
- **The champion re-evaluated**: at least ``champion_seeds`` runs of the champion's commit since
  its promotion (the runs that got it promoted are biased upward). Those re-runs serve every
  candidate compared with it.
- **Deterministic runs**: when both versions' runs are identical copies, seeds add nothing;
  the tasks are the unit and there is one look at ``alpha``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from statistics import NormalDist
from typing import Any

__all__ = [
    "ScoreDecision",
    "ScoreRule",
    "conditional_power",
    "decide_score",
    "group_sequential_thresholds",
    "look_of",
    "pass_margin",
]

_NORMAL = NormalDist()
#: The power at which a comparison "would likely settle" (seeds to settle).
SETTLE_POWER = 0.8


@dataclass(frozen=True)
class ScoreRule:
    """The numbers of ``[gates]`` (and the run budget) that the score gate uses."""

    #: H0 is Δ <= this (score units; 0.002 = 0.2 points of a 0-1 score): a margin so that changes
    #: within noise of zero are rarely promoted on a clean first comparison (docs/gates.md)
    min_delta: float = 0.002
    alpha: float = 0.025
    min_tasks: int = 20
    min_seeds: int = 1
    max_runs: int = 20
    champion_seeds: int = 4
    #: futile when the chance of passing at the last look, were the true Δ ``optimism`` SEs above
    #: the observed one, is below this
    futility: float = 0.4
    optimism: float = 1.0
    #: alpha spent by look j: alpha · (s_j / s_K) ** spending (1: in proportion to the seeds)
    spending: float = 2.0
    #: "exact": group-sequential thresholds (the chance of a first crossing at look j is look j's
    #: share); "shares": each look tested at its share alone (Bonferroni over looks, conservative)
    boundaries: str = "exact"
    #: candidate seeds at each look; () = ``min_seeds`` × (1, 2, 3, 4, 6, 8, 12, 16, 24 …) up to the cap
    schedule: tuple[int, ...] = ()
    #: the most runs (since its promotion) the champion is topped up to at later looks; 0: as
    #: many as the candidate's (as shipped). Never below ``champion_seeds``
    champion_top_up: int = 0
    #: a decision-theoretic rule under study (:mod:`evotree.gates.bayes`; 0: off, the test above):
    #: promote when the posterior probability that Δ > ``min_delta`` reaches this
    bayes: float = 0.0
    #: its futility: stop when no later look's expected gain exceeds this (score units) per run
    bayes_cost: float = 0.0
    #: its prior before the loop's own proposals: N(0, ``bayes_prior_sd``²), worth
    #: ``bayes_prior_weight`` proposals in the empirical-Bayes fit
    bayes_prior_sd: float = 0.02
    bayes_prior_weight: float = 3.0
    #: "fitted" (mean and spread from the loop's proposals), "centered" (spread only, mean 0)
    #: or "flat" (no prior)
    bayes_prior: str = "fitted"

    @property
    def seeds_needed(self) -> int:
        """Candidate seeds at the first look."""
        return max(1, self.min_seeds)

    def looks(self) -> tuple[int, ...]:
        """Candidate seeds at each look: ``min_seeds`` × (1, 2, 3, 4, 6, 8, 12, 16 …: each about
        1.5× the last) up to ``max_runs - champion_seeds`` (room for the champion's re-runs), and
        that cap as the last look when it is above the previous one."""
        if self.schedule:
            return tuple(self.schedule)
        first = self.seeds_needed
        cap = max(first, self.max_runs - self.champion_seeds)
        steps = sorted({m * 2**j for m in (1, 3) for j in range(16)})
        out = [first * m for m in steps if first * m <= cap]
        if cap > out[-1]:
            out.append(cap)
        return tuple(out)

    def spent(self, looks: tuple[int, ...] | None = None) -> tuple[float, ...]:
        """The alpha spent by each look: alpha · (s_j / s_K) ** ``spending``."""
        seeds = looks or self.looks()
        return tuple(self.alpha * (s / seeds[-1]) ** self.spending for s in seeds)

    def champion_planned(self, seeds: int) -> int:
        """The champion's runs the plan puts beside ``seeds`` candidate seeds: as many, at least
        ``champion_seeds``, at most ``champion_top_up`` when it is set."""
        if self.champion_top_up:
            seeds = min(seeds, self.champion_top_up)
        return max(self.champion_seeds, seeds)

    def alpha_at(self, look: int, looks: tuple[int, ...] | None = None) -> float:
        """The threshold on the one-sided p at look ``look`` (1-based): with ``boundaries`` =
        "exact", the nominal level at which the chance of a first crossing at this look, under
        Δ = ``min_delta``, is this look's share of ``alpha`` (Lan-DeMets; the looks' information
        from the planned seeds: the candidate's and as many of the champion's, at least
        ``champion_seeds``); with "shares", the share itself."""
        seeds = looks or self.looks()
        if len(seeds) == 1:
            return self.alpha
        spent = self.spent(seeds)
        if self.boundaries == "shares":
            return spent[look - 1] - (spent[look - 2] if look >= 2 else 0.0)
        infos = tuple(1.0 / (1.0 / self.champion_planned(s) + 1.0 / s) for s in seeds)
        return group_sequential_thresholds(infos, spent)[look - 1]


@lru_cache(maxsize=64)
def group_sequential_thresholds(
    infos: tuple[float, ...], spent: tuple[float, ...]
) -> tuple[float, ...]:
    """Nominal one-sided p thresholds of looks at information ``infos`` (increasing) such that,
    under H0, the chance of first crossing at look j is ``spent[j] - spent[j-1]`` (``spent``: the
    cumulative alpha spent by each look). Canonical joint distribution (the score statistic is a
    Brownian motion in the information); the continuation density is carried on a grid."""
    import numpy as np
    from scipy import optimize
    from scipy.special import ndtr, ndtri

    grid = 801
    out: list[float] = []
    s_nodes = w = None
    prev_info = 0.0
    prev_spent = 0.0
    for info, cum in zip(infos, spent):
        share = max(0.0, cum - prev_spent)
        prev_spent = max(prev_spent, cum)
        if s_nodes is None:
            z = float(-ndtri(share)) if share > 0 else 40.0
            bound = z * math.sqrt(info)
            s_nodes = np.linspace(-10 * math.sqrt(info), bound, grid)
            dens = np.exp(-(s_nodes**2) / (2 * info)) / math.sqrt(2 * math.pi * info)
        else:
            step = math.sqrt(info - prev_info)
            mass = w * dens

            def tail(
                x: float, mass: np.ndarray = mass, s_nodes: np.ndarray = s_nodes, step: float = step
            ) -> float:
                return float(np.sum(mass * ndtr((s_nodes - x) / step)))

            if share <= 0:
                bound = 40.0 * math.sqrt(info)
            else:
                lo, hi = s_nodes[0] - 10 * step, s_nodes[-1] + 40 * step
                bound = optimize.brentq(lambda x: tail(x) - share, lo, hi, xtol=1e-10)  # noqa: B023
            z = bound / math.sqrt(info)
            new = np.linspace(-10 * math.sqrt(info), bound, grid)
            dens = (
                mass[None, :] * np.exp(-((new[:, None] - s_nodes[None, :]) ** 2) / (2 * step**2))
            ).sum(axis=1) / math.sqrt(2 * math.pi * step**2)
            s_nodes = new
        h = s_nodes[1] - s_nodes[0]
        w = np.full(grid, h)
        w[0] = w[-1] = h / 2
        prev_info = info
        out.append(float(ndtr(-z)))
    return tuple(out)


def look_of(rule: ScoreRule, seeds: int, looks: tuple[int, ...] | None = None) -> int:
    """The look ``seeds`` candidate seeds have reached (0 before the first)."""
    return sum(1 for s in (looks or rule.looks()) if s <= seeds)


@dataclass
class ScoreDecision:
    """The score gate's verdict on one comparison, with every number it used.

    ``verdict``: ``pass``; ``more_seeds`` (unsure: run ``next_seeds`` and look again);
    ``futile`` (more seeds are unlikely to settle it in the candidate's favour); ``fail`` (the
    last look, not passed); ``not_ready`` (too few tasks or seeds, or the run-to-run spread is
    unknown).
    """

    passed: bool
    verdict: str
    delta: float
    ci: list[float]
    confidence: float
    p_value: float
    #: the p this look must be below (``alpha`` at one look; its share at a sequential look)
    threshold: float
    look: int
    max_looks: int
    looks: list[int]
    n_tasks: int
    n_seeds: list[int]
    unit: str
    reasons: list[str]
    #: chance of passing at the last look were the observed Δ the true one (None: not computed)
    conditional_power: float | None = None
    #: candidate seeds (and as many of the champion) at which it would likely settle (80 %)
    seeds_to_settle: int | None = None
    #: seeds to add before the next look: {"candidate": k, "champion": j}
    next_seeds: dict[str, int] | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _se_runs(diff: Any, n_a: int, n_b: int) -> float | None:
    if diff.sd[0] is None or diff.sd[1] is None:
        return None
    va = diff.sd[0] ** 2 / (1 if diff.identical[0] else max(1, n_a))
    vb = diff.sd[1] ** 2 / (1 if diff.identical[1] else max(1, n_b))
    return math.sqrt(va + vb)


def _se_at(diff: Any, n_a: int, n_b: int) -> float:
    """The SE of Δ were the sides at ``n_a`` and ``n_b`` runs: the SE now, scaled as the
    run-level SE scales (the per-task part of the noise averages out over runs the same way)."""
    now, later = _se_runs(diff, *diff.n_runs), _se_runs(diff, n_a, n_b)
    if now is None or later is None or now <= 0:
        return float(diff.se)
    return float(diff.se) * later / now


def conditional_power(
    diff: Any, threshold: float, n_a: int, n_b: int, min_delta: float = 0.0, optimism: float = 0.0
) -> float:
    """P(pass at a later look with ``n_a``/``n_b`` runs | the data so far), were the true Δ the
    observed one plus ``optimism`` SEs (0: the observed Δ).

    Brownian-motion form (normal approximation): with information I = 1/SE², the statistic at
    the later look is (z·√I_now + θ·(I_later − I_now) + noise) / √I_later.
    """
    theta = diff.delta - min_delta + optimism * diff.se
    if diff.se <= 0:
        return 1.0 if theta > 0 else 0.0
    se_later = _se_at(diff, n_a, n_b)
    info_now, info_later = 1.0 / diff.se**2, (1.0 / se_later**2 if se_later > 0 else math.inf)
    crit = _NORMAL.inv_cdf(1.0 - threshold)
    if not math.isfinite(info_later):
        return 1.0 if theta > 0 else 0.0
    if info_later <= info_now * (1 + 1e-9):
        return float(theta / diff.se > crit)
    # the statistic now is taken at θ too (z = θ/SE): the optimism moves both
    return float(1.0 - _NORMAL.cdf(pass_margin(theta, theta, info_now, info_later, crit)))


def pass_margin(observed: Any, theta: Any, info_now: float, info_later: float, crit: float) -> Any:
    """The standard-normal quantile the later look's noise must exceed to pass: the statistic
    with Δ ``observed`` at information ``info_now`` drifts by ``theta`` (the true Δ) up to
    ``info_later``, and passes above ``crit`` (Brownian-motion form; P(pass) = 1 − Φ(margin)).
    Floats or NumPy arrays (``theta`` over a grid: :mod:`evotree.gates.calibration`)."""
    gap = info_later - info_now
    return (crit * math.sqrt(info_later) - observed * info_now - theta * gap) / math.sqrt(gap)


def decide_score(
    diff: Any,
    rule: ScoreRule,
    *,
    names: tuple[str, str] = ("champion", "candidate"),
    champion_runs_left: int | None = None,
) -> ScoreDecision:
    """Apply the score gate to the comparison ``diff`` of the champion (a) and the candidate (b).

    ``diff`` is a :class:`evotree.diagnostics.stats.Difference` (or a comparison carrying its
    fields) at confidence 1 − 2·``alpha``; nothing is recomputed here but the look's threshold
    and what more seeds would likely do. ``champion_runs_left``: runs the champion may still
    start (its budget), None when unlimited.
    """
    n_a, n_b = int(diff.n_runs[0]), int(diff.n_runs[1])
    both_identical = bool(diff.identical[0] and diff.identical[1])
    looks = (rule.seeds_needed,) if both_identical else rule.looks()
    # the side whose seeds index the looks: the candidate's, or the champion's when the candidate's
    # runs are identical copies (only the champion's seeds can still change the comparison)
    n_look = n_a if (diff.identical[1] and not diff.identical[0]) else n_b
    look = max(1, look_of(rule, n_look, looks)) if not both_identical else 1
    max_looks = len(looks)
    threshold = rule.alpha if both_identical else rule.alpha_at(look, looks)
    reasons, notes, ready, champion_needed = _readiness(diff, rule, names)
    if not diff.p_value < threshold:
        where = f"at look {look} of {max_looks}" if max_looks > 1 else "at its one look"
        reasons.append(
            f"p = {diff.p_value:.3g} is not below {threshold:.3g} (alpha {rule.alpha:g} {where})"
        )
    if not reasons:
        verdict = "pass"
    elif not ready or diff.n_tasks < rule.min_tasks:
        verdict = "not_ready"
    else:
        verdict = "fail"
    decision = ScoreDecision(
        not reasons,
        verdict,
        float(diff.delta),
        [float(diff.ci[0]), float(diff.ci[1])],
        float(diff.confidence),
        float(diff.p_value),
        float(threshold),
        look,
        max_looks,
        list(looks),
        int(diff.n_tasks),
        [n_a, n_b],
        str(diff.unit),
        reasons,
        notes=notes,
    )
    if not reasons or diff.n_tasks < rule.min_tasks:
        return decision
    if not ready:  # the first look: its seeds (a second run of either side makes the spread known)
        more = {
            "candidate": max(0, rule.seeds_needed - n_b) if not diff.identical[1] else 0,
            "champion": max(0, champion_needed - n_a) if not diff.identical[0] else 0,
        }
        if not any(more.values()):
            more["candidate"] = 1
        decision.next_seeds = more
        return decision
    if both_identical:
        decision.verdict = "fail"
        decision.notes.append("more seeds cannot change this comparison")
        return decision
    return _sequential(decision, diff, rule, looks, champion_runs_left)


def _readiness(
    diff: Any, rule: ScoreRule, names: tuple[str, str]
) -> tuple[list[str], list[str], bool, int]:
    """Why the comparison cannot pass yet (too few tasks or seeds, an unknown spread), the notes
    on identical copies, whether the first look's seeds are there, and the champion's seeds
    needed."""
    champion, candidate = names
    n_a, n_b = int(diff.n_runs[0]), int(diff.n_runs[1])
    reasons: list[str] = []
    notes: list[str] = []
    if diff.n_tasks < rule.min_tasks:
        reasons.append(f"{diff.n_tasks} tasks, the policy needs at least {rule.min_tasks}")
    ready = True
    if n_b < rule.seeds_needed and not diff.identical[1]:
        reasons.append(f"{candidate} has {n_b} seed(s), the first look needs {rule.seeds_needed}")
        ready = False
    champion_needed = 2 if diff.identical[0] else rule.champion_seeds
    if n_a < champion_needed and not (diff.identical[0] and n_a >= 2):
        reasons.append(
            f"{champion} has {n_a} run(s) since its promotion, the policy needs {champion_needed} "
            "(its re-runs; the runs that got it promoted are biased upward)"
        )
        ready = False
    if "unknown" in diff.sd_source:
        reasons.append(
            "the run-to-run spread is unknown (one run a side and no comparable runs in the tree)"
        )
        ready = False
    if diff.identical[0] and diff.identical[1]:
        notes.append(
            f"the runs of {champion} and of {candidate} are identical copies: the tasks are the unit, "
            "more seeds add nothing, and there is one look at alpha"
        )
    elif diff.identical[1]:
        notes.append(f"the runs of {candidate} are identical copies: they count as one run")
    elif diff.identical[0]:
        notes.append(f"the runs of {champion} are identical copies: they count as one run")
    return reasons, notes, ready, champion_needed


def _sequential(
    decision: ScoreDecision,
    diff: Any,
    rule: ScoreRule,
    looks: tuple[int, ...],
    champion_runs_left: int | None,
) -> ScoreDecision:
    """A failed look that more seeds could still change: what they would likely do, were the
    observed Δ the true one (more seeds, futile, or the last look's failure)."""
    n_a, n_b = int(diff.n_runs[0]), int(diff.n_runs[1])
    look, max_looks = decision.look, decision.max_looks

    def champion_at(seeds: int) -> int:
        want = max(n_a, rule.champion_planned(seeds))
        if champion_runs_left is not None:
            want = min(want, n_a + max(0, champion_runs_left))
        return want

    def power_at(j: int, optimism: float = 0.0) -> float:
        s = looks[j - 1]
        if diff.identical[1]:  # looks count the champion's seeds
            return conditional_power(
                diff, rule.alpha_at(j, looks), s, n_b, rule.min_delta, optimism
            )
        return conditional_power(
            diff, rule.alpha_at(j, looks), champion_at(s), s, rule.min_delta, optimism
        )

    later = range(look + 1, max_looks + 1)
    if later:
        decision.conditional_power = power_at(max_looks)
        if diff.delta > rule.min_delta:
            decision.seeds_to_settle = next(
                (looks[j - 1] for j in later if power_at(j) >= SETTLE_POWER), None
            )
    if not later:
        decision.verdict = "fail"
        decision.notes.append(f"this was the last look ({looks[-1]} seeds)")
        return decision
    hopeful = power_at(max_looks, rule.optimism)
    if hopeful < rule.futility:
        decision.verdict = "futile"
        if rule.optimism:
            decision.notes.append(
                f"even were the true Δ {rule.optimism:g} SE above the observed one, the last look "
                f"({looks[-1]} seeds) would pass with probability {100 * hopeful:.0f} % "
                f"(futility below {100 * rule.futility:.0f} %)"
            )
        return decision
    nxt = looks[look]
    decision.verdict = "more_seeds"
    if diff.identical[1]:
        decision.next_seeds = {"candidate": 0, "champion": max(0, nxt - n_a)}
    else:
        decision.next_seeds = {
            "candidate": max(0, nxt - n_b),
            "champion": max(0, champion_at(nxt) - n_a),
        }
    return decision
