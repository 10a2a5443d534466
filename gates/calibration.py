"""A simulated version tree with known true effects and seed noise, to calibrate the gates.

Each evaluation of a version scores a fixed pool of tasks (77 by default, as in EvoTrainer's
pool) with ``k`` samples per task; a task's success probability is its difficulty plus the
version's true quality, plus a per-seed shift shared by all tasks of a run (the between-seed
noise that makes one lucky run look like an improvement) and a small per-(seed, task) jitter.
Scores are Avg@k (binomial / k). Nothing here is fitted to the code under test: the true
effects are known, so false promotions and missed gains are counted exactly.

Strategies compared on the same candidates:

- ``greedy``: one run of the candidate against the champion's own score from when it was
  promoted (keep-if-better on one run; the winner's curse included);
- ``single_seed``: a strict gate on one run per side (paired bootstrap CI of Δ above 0 at
  ``alpha``, the champion re-run once): seed-blind, so a lucky run still fools it;
- ``gate``: the score gate of :mod:`evotree.gates.score` (the champion re-evaluated on the same pool,
  ``seeds`` runs per side, sequential looks when ``sequential``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from evotree.gates.score import ScoreRule, decide_score, looks_for, seed_test

__all__ = ["SimModel", "TreeStats", "evaluate", "gate_promotes", "neutral_false_promotion_rate",
           "power_at", "simulate_tree"]


@dataclass(frozen=True)
class SimModel:
    """The noise model of one evaluation."""

    n_tasks: int = 77
    k: int = 4
    seed_sd: float = 0.03
    jitter_sd: float = 0.02

    def difficulties(self, rng: np.random.Generator) -> np.ndarray:
        """Per-task base success probabilities of the pool."""
        return rng.beta(2.0, 2.0, size=self.n_tasks)


def evaluate(model: SimModel, pool: np.ndarray, quality: float, seeds: int, rng: np.random.Generator) -> np.ndarray:
    """(seeds, n_tasks) Avg@k scores of a version of true ``quality`` on ``pool``."""
    shift = rng.normal(0.0, model.seed_sd, size=(seeds, 1))
    jitter = rng.normal(0.0, model.jitter_sd, size=(seeds, pool.size))
    p = np.clip(pool[None, :] + quality + shift + jitter, 0.0, 1.0)
    return rng.binomial(model.k, p) / model.k


def gate_promotes(a: np.ndarray, b: np.ndarray, rule: ScoreRule, rng: np.random.Generator, B: int = 2000) -> bool:
    """The score gate's verdict; the bootstrap runs only when the seed-level test already passes."""
    _, _, nominal = looks_for(rule, b.shape[0])
    if not seed_test(a.mean(axis=1), b.mean(axis=1), rule.min_delta) < nominal:
        return False
    return decide_score(a, b, rule, B=B, rng=rng).passed


def _sequential(model: SimModel, pool: np.ndarray, q_a: float, q_b: float, rule: ScoreRule,
                rng: np.random.Generator, B: int) -> bool:
    """Add a batch of seeds per side and look again until the gate passes or the budget is spent."""
    batch = rule.seeds_needed
    a = evaluate(model, pool, q_a, batch, rng)
    b = evaluate(model, pool, q_b, batch, rng)
    while True:
        if gate_promotes(a, b, rule, rng, B):
            return True
        if b.shape[0] + batch > rule.max_runs:
            return False
        a = np.vstack([a, evaluate(model, pool, q_a, batch, rng)])
        b = np.vstack([b, evaluate(model, pool, q_b, batch, rng)])


def neutral_false_promotion_rate(n: int, rule: ScoreRule, *, model: SimModel = SimModel(), seed: int = 0,
                                 sequential: bool = False, B: int = 2000) -> tuple[int, int]:
    """(promotions, trials) of candidates with no true effect; each trial draws a fresh pool."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n):
        pool = model.difficulties(rng)
        if sequential:
            hits += _sequential(model, pool, 0.0, 0.0, rule, rng, B)
        else:
            a = evaluate(model, pool, 0.0, rule.seeds_needed, rng)
            b = evaluate(model, pool, 0.0, rule.seeds_needed, rng)
            hits += gate_promotes(a, b, rule, rng, B)
    return hits, n


def power_at(effect: float, n: int, rule: ScoreRule, *, model: SimModel = SimModel(), seed: int = 1,
             sequential: bool = False, B: int = 2000) -> tuple[int, int]:
    """(promotions, trials) of candidates whose true effect is ``effect``."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n):
        pool = model.difficulties(rng)
        if sequential:
            hits += _sequential(model, pool, 0.0, effect, rule, rng, B)
        else:
            a = evaluate(model, pool, 0.0, rule.seeds_needed, rng)
            b = evaluate(model, pool, effect, rule.seeds_needed, rng)
            hits += gate_promotes(a, b, rule, rng, B)
    return hits, n


@dataclass
class TreeStats:
    """Outcome of many simulated improvement loops under one strategy."""

    strategy: str
    loops: int
    candidates: int
    non_improvements: int
    false_promotions: int
    real_gains: int
    promoted_gains: int
    ended_below_peak: int
    mean_final_quality: float
    runs: int
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def false_promotion_rate(self) -> float:
        return self.false_promotions / max(1, self.non_improvements)

    @property
    def power(self) -> float:
        return self.promoted_gains / max(1, self.real_gains)

    @property
    def below_peak_fraction(self) -> float:
        return self.ended_below_peak / max(1, self.loops)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.update(false_promotion_rate=self.false_promotion_rate, power=self.power,
                   below_peak_fraction=self.below_peak_fraction)
        return out


def simulate_tree(strategy: str, *, loops: int, steps: int, rule: ScoreRule, model: SimModel = SimModel(),
                  gain: float = 0.03, p_gain: float = 0.2, p_harm: float = 0.2, seed: int = 0,
                  B: int = 2000) -> TreeStats:
    """Run ``loops`` improvement loops of ``steps`` candidates each; candidates are neutral,
    a real gain (+``gain``) or a harm (−``gain``) with the given probabilities."""
    if strategy not in ("greedy", "single_seed", "gate"):
        raise ValueError(f"strategy: expected greedy, single_seed or gate, actually: {strategy!r}")
    rng = np.random.default_rng(seed)
    stats = TreeStats(strategy, loops, 0, 0, 0, 0, 0, 0, 0.0, 0)
    finals = []
    for _ in range(loops):
        pool = model.difficulties(rng)
        quality, peak = 0.0, 0.0
        recorded = float(evaluate(model, pool, quality, 1, rng).mean())  # the champion's own score
        stats.runs += 1
        for _ in range(steps):
            u = rng.random()
            effect = gain if u < p_gain else (-gain if u < p_gain + p_harm else 0.0)
            stats.candidates += 1
            if effect > 0:
                stats.real_gains += 1
            else:
                stats.non_improvements += 1
            if strategy == "greedy":
                score = float(evaluate(model, pool, quality + effect, 1, rng).mean())
                stats.runs += 1
                promote = score > recorded
                if promote:
                    recorded = score
            elif strategy == "single_seed":
                from evotree.diagnostics.stats import compare_versions

                a = evaluate(model, pool, quality, 1, rng)
                b = evaluate(model, pool, quality + effect, 1, rng)
                stats.runs += 2
                promote = compare_versions(a, b, rng=rng, B=B, alpha=rule.alpha).ci[0] > rule.min_delta
            else:
                a = evaluate(model, pool, quality, rule.seeds_needed, rng)
                b = evaluate(model, pool, quality + effect, rule.seeds_needed, rng)
                stats.runs += 2 * rule.seeds_needed
                promote = gate_promotes(a, b, rule, rng, B)
            if promote:
                if effect > 0:
                    stats.promoted_gains += 1
                else:
                    stats.false_promotions += 1
                quality += effect
                peak = max(peak, quality)
        finals.append(quality)
        stats.ended_below_peak += quality < peak - 1e-12
    stats.mean_final_quality = float(np.mean(finals))
    return stats
