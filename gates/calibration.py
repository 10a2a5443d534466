"""A simulated version tree with known true effects, to calibrate the score gate and weigh its levers.

What is simulated (:class:`SimModel`, :class:`Proposals`): a task pool (77 tasks, 8 samples
each, difficulties Beta(2, 2)); a run of a version of true quality q scores task t with
probability clip(difficulty_t + q + shift + jitter_t) — ``shift`` (the seed's luck, shared by
all tasks of a run) and ``jitter`` (a run's per-task luck) are the run-to-run spread of RL
post-training, the binomial draw of the 8 samples is the eval noise. An improvement loop makes
``steps`` proposals (60 % harmful, 30 % neutral, 10 % helpful by default) against a moving
champion. The true effects are known, so false promotions, missed gains and the true quality at
the end of each loop are counted exactly.

What decides is the real code: every comparison is
:func:`evotree.diagnostics.stats.difference` (the one computation behind ``compare``,
``diagnose``, ``gates`` and the reports) on the simulated score matrices, with the run-to-run
spread pooled by :func:`evotree.diagnostics.stats.pooled_spread` over the loop's comparable runs,
and :func:`evotree.gates.score.decide_score` decides (or, with ``ScoreRule.bayes``, the
decision-theoretic rule of :mod:`evotree.gates.bayes`); the simulated agent does exactly what the
gate says (``next_seeds``: the next look's seeds of the candidate and of the champion), stops on
``futile``/``fail`` and re-runs a new champion ``champion_seeds`` times before comparing with it.

Strategies (:func:`simulate_tree`):

- ``greedy``: keep-if-better on one run against the champion's recorded score (the score of the
  run that got it promoted: the winner's curse included);
- ``gate``: the score gate, with the levers of :class:`Levers` (all on by default);
- ``previous``: the rule before the score gate — a Welch test on 3 + 3 run means, the spread of the
  two versions only, alpha 0.05 one-sided spent Pocock-wise over ``max_runs // 3`` looks, every
  look 3 more seeds a side, the champion's re-runs charged to its own run budget.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from evotree.diagnostics.stats import (
    RunSpread,
    SpreadTerm,
    alpha_spending,
    difference,
    pooled_spread,
    spread_term,
)
from evotree.gates.bayes import decide
from evotree.gates.score import ScoreRule
from evotree.gates.score import _se_at
from evotree.gates.score import pass_margin

__all__ = [
    "Levers",
    "Proposals",
    "SimModel",
    "TreeStats",
    "comparison_rate",
    "evaluate",
    "simulate_tree",
]


@dataclass(frozen=True)
class SimModel:
    """The noise model of one evaluation (a run of a version on the pool)."""

    n_tasks: int = 77
    k: int = 8
    seed_sd: float = 0.012
    jitter_sd: float = 0.03

    def difficulties(self, rng: np.random.Generator) -> np.ndarray:
        """Per-task base success probabilities of the pool."""
        return rng.beta(2.0, 2.0, size=self.n_tasks)

    @property
    def run_sd(self) -> float:
        """About the SD of a run's mean score around its version's (seed shift, per-task luck
        and the binomial eval noise of Beta(2, 2) tasks: E[p(1 - p)] = 0.2; clipping ignored)."""
        return math.sqrt(self.seed_sd**2 + (0.2 / self.k + self.jitter_sd**2) / self.n_tasks)


def evaluate(
    model: SimModel,
    pool: np.ndarray,
    quality: float,
    seeds: int,
    rng: np.random.Generator,
    noise: float = 1.0,
) -> np.ndarray:
    """(seeds, n_tasks) Avg@k scores of a version of true ``quality`` on ``pool`` (``noise``: a
    multiple of the model's seed SD, for a version noisier than the rest of the tree)."""
    shift = rng.normal(0.0, model.seed_sd * noise, size=(seeds, 1))
    jitter = rng.normal(0.0, model.jitter_sd, size=(seeds, pool.size))
    p = np.clip(pool[None, :] + quality + shift + jitter, 0.0, 1.0)
    return rng.binomial(model.k, p) / model.k


@dataclass(frozen=True)
class Proposals:
    """The mix of proposals an agent makes, with their true effects (score units, 0.01 = 1 point)."""

    p_harmful: float = 0.6
    p_neutral: float = 0.3
    helpful: tuple[float, float] = (0.01, 0.04)  #: uniform range of a helpful effect
    harmful: tuple[float, float] = (0.01, 0.08)  #: uniform range of a harmful effect's size
    #: share of proposals whose runs are ``noisy_factor`` times as noisy (seed SD) as the tree's
    noisy_share: float = 0.0
    noisy_factor: float = 2.0

    def noise(self, rng: np.random.Generator) -> float:
        """The seed-noise multiple of a proposal's runs."""
        return self.noisy_factor if self.noisy_share and rng.random() < self.noisy_share else 1.0

    def draw(self, rng: np.random.Generator) -> float:
        u = rng.random()
        if u < self.p_harmful:
            return -float(rng.uniform(*self.harmful))
        if u < self.p_harmful + self.p_neutral:
            return 0.0
        return float(rng.uniform(*self.helpful))


@dataclass(frozen=True)
class Levers:
    """The design choices weighed by the calibration study (all on: the gate as shipped)."""

    pooled: bool = True  #: the run-to-run spread from all comparable runs of the tree
    sequential: bool = True  #: add seeds look by look where the gate is unsure
    free_champion_reruns: bool = True  #: the champion's re-runs are not charged to its own budget
    #: a new champion keeps the runs that promoted it (biased upward: the winner's curse) and is
    #: only topped up to ``champion_seeds``; off (as shipped): it is re-run from scratch
    reuse_promotion_runs: bool = False
    #: with ``reuse_promotion_runs``: the kept runs are shifted down by this many SEs of the
    #: candidate's mean at its promotion (sd / sqrt(runs)), a winner's-curse correction (0: none)
    curse_shift: float = 0.0
    #: an oracle futility (a bound, not a rule evotree can ship): also stop when the chance of
    #: passing at the last look, averaged over the posterior of the true effect under the
    #: *true* mix of proposals, is below this (0: off)
    oracle_futility: float = 0.0


@dataclass
class TreeStats:
    """Outcome of many simulated improvement loops under one strategy."""

    strategy: str
    loops: int
    steps: int
    candidates: int = 0
    harmful: int = 0
    neutral: int = 0
    helpful: int = 0
    promoted_harmful: int = 0
    promoted_neutral: int = 0
    promoted_helpful: int = 0
    first_neutral: int = 0  #: neutral proposals that were a loop's first comparison (a clean tree)
    first_neutral_promoted: int = 0
    ended_below_peak: int = 0
    deadlocked: int = 0
    runs: int = 0
    champion_runs: int = 0
    finals: list[float] = field(default_factory=list, repr=False)

    @property
    def neutral_promotion_rate(self) -> float:
        return self.promoted_neutral / max(1, self.neutral)

    @property
    def harmful_promotion_rate(self) -> float:
        return self.promoted_harmful / max(1, self.harmful)

    @property
    def power(self) -> float:
        return self.promoted_helpful / max(1, self.helpful)

    @property
    def below_peak_fraction(self) -> float:
        return self.ended_below_peak / max(1, self.loops)

    @property
    def mean_final(self) -> float:
        return float(np.mean(self.finals)) if self.finals else 0.0

    @property
    def final_se(self) -> float:
        return (
            float(np.std(self.finals, ddof=1) / math.sqrt(len(self.finals)))
            if len(self.finals) > 1
            else 0.0
        )

    @property
    def runs_per_loop(self) -> float:
        return self.runs / max(1, self.loops)

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "finals"}
        out.update(
            neutral_promotion_rate=self.neutral_promotion_rate,
            harmful_promotion_rate=self.harmful_promotion_rate,
            power=self.power,
            below_peak_fraction=self.below_peak_fraction,
            mean_final=self.mean_final,
            final_se=self.final_se,
            runs_per_loop=self.runs_per_loop,
        )
        return out


def _previous_rule(rule: ScoreRule) -> ScoreRule:
    """The pre-issue-17 default, as far as the simulation needs it (see :func:`_previous_decides`)."""
    return replace(rule, alpha=0.05, min_seeds=3)


def _previous_decides(a: np.ndarray, b: np.ndarray, rule: ScoreRule) -> tuple[bool, bool]:
    """(passed, may look again) of the previous rule: Welch on run means, Pocock over max_runs // 3 looks."""
    batch = 3
    max_looks = max(1, rule.max_runs // batch)
    look = min(max_looks, max(1, math.ceil(b.shape[0] / batch)))
    nominal = (
        rule.alpha
        if max_looks == 1
        else alpha_spending(rule.alpha, look, max_looks, kind="pocock").nominal
    )
    d = difference(a, b, spread=None, confidence=1 - 2 * nominal)
    return d.p_value < nominal and d.n_tasks >= rule.min_tasks, look < max_looks


class _Loop:
    """One improvement loop: the champion, its runs since promotion, the tree's spread terms."""

    def __init__(
        self,
        model: SimModel,
        rule: ScoreRule,
        levers: Levers,
        rng: np.random.Generator,
        stats: TreeStats,
        pool: np.ndarray | None = None,
    ) -> None:
        self.model, self.rule, self.levers, self.rng, self.stats = model, rule, levers, rng, stats
        self.pool = model.difficulties(rng) if pool is None else pool
        self.quality = 0.0
        self.peak = 0.0
        self.terms: list[SpreadTerm] = []  # finished versions of the tree
        self.champion_used = (
            0  # runs charged to the champion's budget (its runs as a candidate too)
        )
        self.champion = np.empty((0, model.n_tasks))
        self.noise = 1.0  # the champion's seed-noise multiple
        self.deadlocked = False
        self.prior: tuple[np.ndarray, np.ndarray] | None = None  # (effects, weights): the oracle's
        self.promoted_se = 0.0  # SE of the last passed candidate's mean (the curse correction)
        #: (observed Δ, SE) at the end of each earlier comparison: the decision-theoretic rule's
        #: empirical-Bayes prior (unused by the shipped gate)
        self.history: list[tuple[float, float]] = []

    def run(self, quality: float, n: int, noise: float = 1.0) -> np.ndarray:
        self.stats.runs += n
        return evaluate(self.model, self.pool, quality, n, self.rng, noise)

    def champion_runs_left(self) -> int | None:
        if self.levers.free_champion_reruns:
            return None
        return max(0, self.rule.max_runs - self.champion_used)

    def top_up_champion(self, n: int) -> None:
        left = self.champion_runs_left()
        if left is not None:
            n = min(n, left)
        if n > 0:
            self.champion = np.vstack([self.champion, self.run(self.quality, n, self.noise)])
            self.champion_used += n
            self.stats.champion_runs += n

    def spread(self, candidate: np.ndarray) -> RunSpread | None:
        if not self.levers.pooled:
            return None
        return pooled_spread([*self.terms, spread_term(self.champion), spread_term(candidate)])

    def compare(self, effect: float, noise: float = 1.0) -> tuple[bool, np.ndarray]:
        """Compare one proposal with the champion as the gate directs; (promoted, candidate runs)."""
        self.last: tuple[float, float] | None = None
        out = self._compare(effect, noise)
        if self.last is not None:
            self.history.append(self.last)
        return out

    def _compare(self, effect: float, noise: float = 1.0) -> tuple[bool, np.ndarray]:
        rule = self.rule
        candidate = self.run(self.quality + effect, rule.seeds_needed, noise)
        while True:
            d = difference(
                self.champion,
                candidate,
                spread=self.spread(candidate),
                confidence=1 - 2 * rule.alpha,
                threshold=rule.min_delta,
            )
            self.last = (float(d.delta), float(d.se))
            decision = decide(
                d, rule, history=self.history, champion_runs_left=self.champion_runs_left()
            )
            if decision.passed:
                sd_b = d.sd[1] if d.sd[1] is not None else 0.0
                self.promoted_se = float(sd_b) / math.sqrt(max(1, candidate.shape[0]))
                return True, candidate
            if (
                decision.verdict == "not_ready"
                and decision.next_seeds
                and not self.levers.sequential
                and candidate.shape[0] >= rule.seeds_needed
            ):
                return False, candidate  # one look: no more seeds, not even to learn the spread
            if decision.verdict not in ("more_seeds", "not_ready") or not decision.next_seeds:
                return False, candidate
            if decision.verdict == "more_seeds" and not self.levers.sequential:
                return False, candidate
            if (
                decision.verdict == "more_seeds"
                and self.levers.oracle_futility
                and self.prior is not None
                and _predictive_power(d, rule, self.prior) < self.levers.oracle_futility
            ):
                return False, candidate
            add_b, add_a = decision.next_seeds["candidate"], decision.next_seeds["champion"]
            if add_b + add_a == 0:
                return False, candidate
            self.top_up_champion(add_a)
            if add_b:
                candidate = np.vstack([candidate, self.run(self.quality + effect, add_b, noise)])

    def compare_previous(self, effect: float, noise: float = 1.0) -> tuple[bool, np.ndarray]:
        rule = self.rule
        candidate = self.run(self.quality + effect, 3, noise)
        while True:
            passed, again = _previous_decides(self.champion, candidate, rule)
            if passed or not again or not self.levers.sequential:
                return passed, candidate
            if candidate.shape[0] + 3 > rule.max_runs:
                return False, candidate
            self.top_up_champion(3)
            candidate = np.vstack([candidate, self.run(self.quality + effect, 3, noise)])

    def promote(self, effect: float, candidate: np.ndarray, noise: float = 1.0) -> None:
        self.terms.append(spread_term(self.champion))
        self.noise = noise
        self.quality += effect
        self.peak = max(self.peak, self.quality)
        shift = self.levers.curse_shift * self.promoted_se
        self.champion = (
            candidate - shift
            if self.levers.reuse_promotion_runs
            else np.empty((0, self.model.n_tasks))
        )
        self.champion_used = candidate.shape[0]

    def ready_champion(self, need: int) -> bool:
        """Re-run the champion up to ``need`` runs since promotion; False when its budget cannot."""
        missing = need - self.champion.shape[0]
        if missing > 0:
            self.top_up_champion(missing)
        return self.champion.shape[0] >= need


def _prior_grid(proposals: Proposals, points: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """The true mix of proposal effects on a grid (effects, weights): the oracle's prior."""
    harmful = -np.linspace(*proposals.harmful, points)
    helpful = np.linspace(*proposals.helpful, points)
    p_helpful = 1.0 - proposals.p_harmful - proposals.p_neutral
    effects = np.concatenate([harmful, [0.0], helpful])
    weights = np.concatenate(
        [
            np.full(points, proposals.p_harmful / points),
            [proposals.p_neutral],
            np.full(points, p_helpful / points),
        ]
    )
    return effects, weights


def _predictive_power(diff: Any, rule: ScoreRule, prior: tuple[np.ndarray, np.ndarray]) -> float:
    """The chance of passing at the last look, averaged over the posterior of the true Δ given the
    observed one (normal likelihood, SE of the comparison) under ``prior`` (Brownian-motion form,
    as :func:`evotree.gates.score.conditional_power`, the champion at the candidate's seeds)."""
    from scipy.special import ndtr, ndtri

    looks = rule.looks()
    se = float(diff.se)
    se_last = _se_at(diff, max(int(diff.n_runs[0]), looks[-1]), looks[-1])
    if se <= 0 or se_last <= 0 or se_last >= se:
        return 1.0
    crit = float(-ndtri(rule.alpha_at(len(looks), looks)))
    effects, weights = prior
    post = weights * np.exp(-0.5 * ((float(diff.delta) - effects) / se) ** 2)
    post = post / post.sum()
    margin = pass_margin(
        float(diff.delta) - rule.min_delta,
        effects - rule.min_delta,
        1.0 / se**2,
        1.0 / se_last**2,
        crit,
    )
    return float((post * ndtr(-margin)).sum())


def _record(stats: TreeStats, effect: float, promoted: bool, first: bool) -> None:
    stats.candidates += 1
    kind = "helpful" if effect > 0 else "neutral" if effect == 0 else "harmful"
    setattr(stats, kind, getattr(stats, kind) + 1)
    if promoted:
        setattr(stats, f"promoted_{kind}", getattr(stats, f"promoted_{kind}") + 1)
    if first and kind == "neutral":
        stats.first_neutral += 1
        stats.first_neutral_promoted += promoted


def simulate_tree(
    strategy: str,
    *,
    loops: int,
    steps: int = 30,
    rule: ScoreRule = ScoreRule(),
    model: SimModel = SimModel(),
    proposals: Proposals = Proposals(),
    levers: Levers = Levers(),
    seed: int = 0,
) -> TreeStats:
    """Run ``loops`` improvement loops of ``steps`` proposals each under ``strategy``
    (``greedy``, ``gate`` or ``previous``); the same seed draws the same pools and proposals."""
    if strategy not in ("greedy", "gate", "previous"):
        raise ValueError(f"strategy: expected greedy, gate or previous, actually: {strategy!r}")
    rng = np.random.default_rng(seed)
    # the pools and the proposals come from their own stream: every strategy meets the same ones
    draws = np.random.default_rng([seed, 1])
    stats = TreeStats(strategy, loops, steps)
    if strategy == "previous":
        rule = _previous_rule(rule)
        levers = replace(levers, pooled=False, free_champion_reruns=False)
    for _ in range(loops):
        pool = model.difficulties(draws)
        drawn = [(proposals.draw(draws), proposals.noise(draws)) for _ in range(steps)]
        loop = _Loop(model, rule, levers, rng, stats, pool)
        if levers.oracle_futility:
            loop.prior = _prior_grid(proposals)
        if strategy == "greedy":
            recorded = float(loop.run(0.0, 1).mean())
            for effect, noise in drawn:
                score = float(loop.run(loop.quality + effect, 1, noise).mean())
                promoted = score > recorded
                _record(stats, effect, promoted, False)
                if promoted:
                    recorded = score
                    loop.quality += effect
                    loop.peak = max(loop.peak, loop.quality)
        else:
            need = 3 if strategy == "previous" else rule.champion_seeds
            for step, (effect, noise) in enumerate(drawn):
                if not loop.ready_champion(need):
                    loop.deadlocked = True
                    break
                promoted, candidate = (
                    loop.compare_previous(effect, noise)
                    if strategy == "previous"
                    else loop.compare(effect, noise)
                )
                _record(stats, effect, promoted, step == 0)
                if promoted:
                    loop.promote(effect, candidate, noise)
                else:
                    loop.terms.append(spread_term(candidate))
        stats.deadlocked += loop.deadlocked
        stats.finals.append(loop.quality)
        stats.ended_below_peak += loop.quality < loop.peak - 1e-12
    return stats


def comparison_rate(
    effect: float,
    n: int,
    *,
    rule: ScoreRule = ScoreRule(),
    model: SimModel = SimModel(),
    tree_versions: int = 10,
    tree_runs: int = 3,
    sequential: bool = True,
    noise: float = 1.0,
    seed: int = 0,
) -> tuple[int, int, float]:
    """(promotions, trials, mean runs) of single comparisons of a candidate of true ``effect``
    against a champion re-run ``champion_seeds`` times, in a tree whose spread was already seen on
    ``tree_versions`` earlier versions of ``tree_runs`` runs each (0: a clean first comparison);
    ``noise``: the candidate's seed noise as a multiple of the tree's. Mean runs include the
    champion's re-runs."""
    rng = np.random.default_rng(seed)
    stats = TreeStats("gate", n, 1)
    hits = 0
    for _ in range(n):
        loop = _Loop(model, rule, Levers(sequential=sequential), rng, stats)
        for _ in range(tree_versions):
            loop.terms.append(spread_term(evaluate(model, loop.pool, 0.0, tree_runs, rng)))
        loop.ready_champion(rule.champion_seeds)
        promoted, _ = loop.compare(effect, noise)
        hits += promoted
    return hits, n, stats.runs / max(1, n)
