"""The score gate's decision rule, applied to the one comparison of two versions.

The numbers — Δ, its CI and its p — come from one computation,
:func:`evotree.diagnostics.stats.difference` (called by ``evotree compare``, ``diagnose``,
``gates``, the reports and the agent tools through :func:`evotree.diagnostics.compare.compare`);
this module only decides what they allow. The calibration study
(:mod:`evotree.gates.calibration`, ``bench/bench_gate_calibration.py``) drives these same
functions on a simulated tree.

The rule (docs/gates.md):

- **One-sided test at ``alpha``** (default 0.025): promote only when p (H0: Δ ≤ ``min_delta``)
  is below this look's threshold. With one look the threshold is ``alpha`` itself, so the gate
  passes exactly when the lower end of the reported (1 − 2·alpha) CI is above ``min_delta``.
- **The run-to-run spread from the whole tree**: the SE of Δ uses the spread of a run's mean
  score pooled over every comparable version of the tree (a side's own estimate when it is
  larger; identical copies count as one run), so even the first look has many degrees of freedom.
- **Sequential looks, seeds added only where the gate is unsure**: looks at ``min_seeds``,
  ×4, ×16 … candidate seeds up to ``max_runs - champion_seeds`` (room for the champion's
  re-runs); by look j the gate has spent ``alpha · (s_j / s_K)²`` (``spending`` = 2: almost
  nothing at the first looks, which mostly screen out harmful and neutral changes cheaply; the
  shares sum to ``alpha``, so adding seeds look by look cannot push the false-promotion rate
  above it). Between looks the gate asks for the next look's seeds of the
  candidate and as many of the champion; it stops asking (``futile``) when the observed Δ is
  not above ``min_delta`` or the chance of passing at the last look, were the observed Δ true
  (conditional power), is below ``futility``.
- **The champion re-evaluated**: at least ``champion_seeds`` runs of the champion's commit since
  its promotion (the runs that got it promoted are biased upward). Those re-runs serve every
  candidate compared with it.
- **Deterministic runs**: when both versions' runs are identical copies, seeds add nothing;
  the tasks are the unit and there is one look at ``alpha``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from statistics import NormalDist
from typing import Any

__all__ = ["ScoreDecision", "ScoreRule", "conditional_power", "decide_score", "look_of"]

_NORMAL = NormalDist()
#: Seeds of the candidate multiply by this from one look to the next.
GROWTH = 4
#: The power at which a comparison "would likely settle" (seeds to settle).
SETTLE_POWER = 0.8


@dataclass(frozen=True)
class ScoreRule:
    """The numbers of ``[gates]`` (and the run budget) that the score gate uses."""

    min_delta: float = 0.0
    alpha: float = 0.025
    min_tasks: int = 20
    min_seeds: int = 1
    max_runs: int = 20
    champion_seeds: int = 4
    futility: float = 0.1
    #: alpha spent by look j: alpha · (s_j / s_K) ** spending (1: in proportion to the seeds)
    spending: float = 2.0

    @property
    def seeds_needed(self) -> int:
        """Candidate seeds at the first look."""
        return max(1, self.min_seeds)

    def looks(self) -> tuple[int, ...]:
        """Candidate seeds at each look: ``min_seeds`` × 4^j up to ``max_runs - champion_seeds``
        (and that cap as the last look when it is at least twice the previous one)."""
        first = self.seeds_needed
        cap = max(first, self.max_runs - self.champion_seeds)
        out = [first]
        while out[-1] * GROWTH <= cap:
            out.append(out[-1] * GROWTH)
        if cap >= 2 * out[-1]:
            out.append(cap)
        return tuple(out)

    def alpha_at(self, look: int, looks: tuple[int, ...] | None = None) -> float:
        """This look's share of ``alpha``: alpha · (t_j^ρ − t_{j−1}^ρ), t_j = s_j / s_K the
        candidate's seeds at look j over those at the last look, ρ = ``spending``."""
        seeds = looks or self.looks()
        if len(seeds) == 1:
            return self.alpha

        def spent(j: int) -> float:
            return (seeds[j - 1] / seeds[-1]) ** self.spending if j >= 1 else 0.0

        return self.alpha * (spent(look) - spent(look - 1))


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


def conditional_power(diff: Any, threshold: float, n_a: int, n_b: int, min_delta: float = 0.0) -> float:
    """P(pass at a later look with ``n_a``/``n_b`` runs | the data so far), were the observed Δ true.

    Brownian-motion form (normal approximation): with information I = 1/SE², the statistic at
    the later look is (z·√I_now + θ·(I_later − I_now) + noise) / √I_later.
    """
    theta = diff.delta - min_delta
    if diff.se <= 0:
        return 1.0 if theta > 0 else 0.0
    se_later = _se_at(diff, n_a, n_b)
    info_now, info_later = 1.0 / diff.se ** 2, (1.0 / se_later ** 2 if se_later > 0 else math.inf)
    crit = _NORMAL.inv_cdf(1.0 - threshold)
    if not math.isfinite(info_later):
        return 1.0 if theta > 0 else 0.0
    if info_later <= info_now * (1 + 1e-9):
        return float(theta / diff.se > crit)
    z_now = theta / diff.se
    gap = info_later - info_now
    num = crit * math.sqrt(info_later) - z_now * math.sqrt(info_now) - theta * gap
    return float(1.0 - _NORMAL.cdf(num / math.sqrt(gap)))


def decide_score(diff: Any, rule: ScoreRule, *, names: tuple[str, str] = ("champion", "candidate"),
                 champion_runs_left: int | None = None) -> ScoreDecision:
    """Apply the score gate to the comparison ``diff`` of the champion (a) and the candidate (b).

    ``diff`` is a :class:`evotree.diagnostics.stats.Difference` (or a comparison carrying its
    fields) at confidence 1 − 2·``alpha``; nothing is recomputed here but the look's threshold
    and what more seeds would likely do. ``champion_runs_left``: runs the champion may still
    start (its budget), None when unlimited.
    """
    champion, candidate = names
    n_a, n_b = int(diff.n_runs[0]), int(diff.n_runs[1])
    both_identical = bool(diff.identical[0] and diff.identical[1])
    looks = (rule.seeds_needed,) if both_identical else rule.looks()
    # the side whose seeds index the looks: the candidate's, or the champion's when the candidate's
    # runs are identical copies (only the champion's seeds can still change the comparison)
    n_look = n_a if (diff.identical[1] and not diff.identical[0]) else n_b
    look = max(1, look_of(rule, n_look, looks)) if not both_identical else 1
    max_looks = len(looks)
    threshold = rule.alpha if both_identical else rule.alpha_at(look, looks)
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
        reasons.append(f"{champion} has {n_a} run(s) since its promotion, the policy needs {champion_needed} "
                       "(its re-runs; the runs that got it promoted are biased upward)")
        ready = False
    if "unknown" in diff.sd_source:
        reasons.append("the run-to-run spread is unknown (one run a side and no comparable runs in the tree)")
        ready = False
    if both_identical:
        notes.append(f"the runs of {champion} and of {candidate} are identical copies: the tasks are the unit, "
                     "more seeds add nothing, and there is one look at alpha")
    elif diff.identical[1]:
        notes.append(f"the runs of {candidate} are identical copies: they count as one run")
    elif diff.identical[0]:
        notes.append(f"the runs of {champion} are identical copies: they count as one run")
    passed_p = diff.p_value < threshold
    if not passed_p:
        where = f"at look {look} of {max_looks}" if max_looks > 1 else "at its one look"
        reasons.append(f"p = {diff.p_value:.3g} is not below {threshold:.3g} (alpha {rule.alpha:g} {where})")
    if not reasons:
        return ScoreDecision(True, "pass", float(diff.delta), [float(diff.ci[0]), float(diff.ci[1])],
                             float(diff.confidence), float(diff.p_value), float(threshold), look, max_looks,
                             list(looks), int(diff.n_tasks), [n_a, n_b], str(diff.unit), [], notes=notes)
    decision = ScoreDecision(False, "not_ready" if not ready or diff.n_tasks < rule.min_tasks else "fail",
                             float(diff.delta), [float(diff.ci[0]), float(diff.ci[1])], float(diff.confidence),
                             float(diff.p_value), float(threshold), look, max_looks, list(looks), int(diff.n_tasks),
                             [n_a, n_b], str(diff.unit), reasons, notes=notes)
    if diff.n_tasks < rule.min_tasks:
        return decision
    if not ready:  # the first look: its seeds (a second run of either side makes the spread known)
        more = {"candidate": max(0, rule.seeds_needed - n_b) if not diff.identical[1] else 0,
                "champion": max(0, champion_needed - n_a) if not diff.identical[0] else 0}
        if not any(more.values()):
            more["candidate"] = 1
        decision.next_seeds = more
        return decision
    if both_identical:
        decision.verdict = "fail"
        decision.notes.append("more seeds cannot change this comparison")
        return decision
    # sequential: what more seeds would likely do, were the observed Δ the true one
    def champion_at(seeds: int) -> int:
        want = max(n_a, seeds)
        if champion_runs_left is not None:
            want = min(want, n_a + max(0, champion_runs_left))
        return want

    def power_at(j: int) -> float:
        s = looks[j - 1]
        if diff.identical[1]:  # looks count the champion's seeds
            return conditional_power(diff, rule.alpha_at(j, looks), s, n_b, rule.min_delta)
        return conditional_power(diff, rule.alpha_at(j, looks), champion_at(s), s, rule.min_delta)

    later = range(look + 1, max_looks + 1)
    if diff.delta > rule.min_delta and later:
        decision.conditional_power = power_at(max_looks)
        decision.seeds_to_settle = next((looks[j - 1] for j in later if power_at(j) >= SETTLE_POWER), None)
    if not later:
        decision.verdict = "fail"
        decision.notes.append(f"this was the last look ({looks[-1]} seeds)")
        return decision
    if diff.delta <= rule.min_delta or (decision.conditional_power or 0.0) < rule.futility:
        decision.verdict = "futile"
        return decision
    nxt = looks[look]
    decision.verdict = "more_seeds"
    if diff.identical[1]:
        decision.next_seeds = {"candidate": 0, "champion": max(0, nxt - n_a)}
    else:
        decision.next_seeds = {"candidate": max(0, nxt - n_b), "champion": max(0, champion_at(nxt) - n_a)}
    return decision
