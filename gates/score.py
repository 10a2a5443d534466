"""The score gate's rule, as a pure function of two score matrices (used by the gate and by the
calibration simulation, so what is calibrated is exactly what gates promotions).

Promote only when all hold:

- at least ``min_tasks`` tasks and ``max(2, min_seeds)`` seeds on each side (the champion
  re-evaluated on the same pool: :func:`evotree.diagnostics.compare.version_scores`);
- the one-sided lower confidence bound (level ``1 - a``) of Δ from the seed-aware two-level
  bootstrap of :func:`evotree.diagnostics.stats.compare_versions` lies above ``min_delta`` (reported as
  the two-sided ``1 - 2a`` interval whose lower end it is);
- a one-sided Welch t-test with seeds as units (each run's mean over the pool) rejects
  Δ <= ``min_delta`` at level ``a``.

``a`` is ``alpha`` corrected for repeated looks: every batch of ``min_seeds`` more seeds of the
candidate is one look of at most ``max_runs_per_version // min_seeds``, and each look spends a
Pocock-type share of ``alpha`` (Lan-DeMets), so adding seeds until the gate passes cannot push
the false-promotion rate above ``alpha``. The bootstrap CI alone undercovers with few seeds
(about 80 % at nominal 95 % with 3 seeds, see ``evotree.diagnostics.stats``); the seed-level t-test is
exact for normal seed noise and keeps the gate at its nominal level (``tests/test_gates_calibration.py``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["ScoreDecision", "ScoreRule", "decide_score", "looks_for", "seed_test", "seeds_to_settle"]


@dataclass(frozen=True)
class ScoreRule:
    """The numbers of ``[gates]`` (and the run budget) that the score gate uses."""

    min_delta: float = 0.0
    alpha: float = 0.05
    min_tasks: int = 20
    min_seeds: int = 3
    max_runs: int = 20

    @property
    def seeds_needed(self) -> int:
        """Seeds per side the gate needs: ``min_seeds``, and at least 2 for a seed-level test."""
        return max(2, self.min_seeds)


@dataclass
class ScoreDecision:
    """The score gate's verdict with every number it used."""

    passed: bool
    delta: float
    ci: list[float]
    p_seed: float
    alpha_look: float
    look: int
    max_looks: int
    n_tasks: int
    n_seeds: list[int]
    reasons: list[str]
    seeds_to_settle: int | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def looks_for(rule: ScoreRule, n_seeds_candidate: int) -> tuple[int, int, float]:
    """(look, max_looks, alpha for this look): one look per batch of ``min_seeds`` seeds."""
    from evotree.diagnostics.stats import alpha_spending

    batch = rule.seeds_needed
    max_looks = max(1, rule.max_runs // batch)
    look = min(max_looks, max(1, math.ceil(n_seeds_candidate / batch)))
    if max_looks == 1:
        return 1, 1, rule.alpha
    return look, max_looks, float(alpha_spending(rule.alpha, look, max_looks, kind="pocock").nominal)


def seed_test(a_means: Any, b_means: Any, min_delta: float) -> float:
    """One-sided Welch p-value of H0: mean(b) - mean(a) <= min_delta, seeds as units (nan if < 2 each)."""
    import numpy as np
    from scipy import stats

    a, b = np.asarray(a_means, dtype=float), np.asarray(b_means, dtype=float)
    if a.size < 2 or b.size < 2:
        return float("nan")
    diff = b.mean() - a.mean() - min_delta
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    if se == 0.0:
        return 0.0 if diff > 0 else 1.0
    df = (va + vb) ** 2 / ((va ** 2 / (a.size - 1) if a.size > 1 else 0) + (vb ** 2 / (b.size - 1) if b.size > 1 else 0))
    return float(stats.t.sf(diff / se, df))


def seeds_to_settle(a_means: Any, b_means: Any, rule: ScoreRule, alpha: float) -> int | None:
    """Seeds per side a seed-level test would likely (80 % power) need to pass, given the
    observed Δ and seed spread; None when the observed Δ is not above ``min_delta``."""
    import numpy as np
    from scipy import stats

    a, b = np.asarray(a_means, dtype=float), np.asarray(b_means, dtype=float)
    effect = float(b.mean() - a.mean()) - rule.min_delta
    if effect <= 0:
        return None
    sd = math.sqrt(((a.var(ddof=1) if a.size > 1 else 0.0) + (b.var(ddof=1) if b.size > 1 else 0.0)) / 2)
    if sd == 0.0:
        return rule.seeds_needed
    z = stats.norm.ppf(1 - alpha) + stats.norm.ppf(0.8)
    return max(rule.seeds_needed, math.ceil(2 * (z * sd / effect) ** 2) + 1)


def decide_score(scores_a: Any, scores_b: Any, rule: ScoreRule, *, B: int = 2000, rng: Any = None,
                 ci: tuple[float, float] | None = None, alpha_look: float | None = None) -> ScoreDecision:
    """Apply the score gate to (n_seeds, n_tasks) matrices of the champion (a) and candidate (b).

    ``ci``/``alpha_look`` may be passed when the caller already computed the CI at this look's
    alpha (``evotree compare --look``); otherwise it is computed here with ``B`` resamples.
    """
    import numpy as np

    from evotree.diagnostics.stats import compare_versions

    a = np.atleast_2d(np.asarray(scores_a, dtype=float))
    b = np.atleast_2d(np.asarray(scores_b, dtype=float))
    look, max_looks, nominal = looks_for(rule, b.shape[0])
    if alpha_look is not None:
        nominal = alpha_look
    if ci is None:
        rng = rng if rng is not None else np.random.default_rng(0)
        two_sided = min(0.5, 2 * nominal)  # its lower end is the one-sided (1 - nominal) bound
        result = compare_versions(a, b, rng=rng, B=max(B, math.ceil(20 / two_sided)), alpha=two_sided)
        ci = (float(result.ci[0]), float(result.ci[1]))
    delta = float(b.mean(axis=0).mean() - a.mean(axis=0).mean())
    a_means, b_means = a.mean(axis=1), b.mean(axis=1)
    p = seed_test(a_means, b_means, rule.min_delta)
    reasons = []
    n_tasks = a.shape[1]
    if n_tasks < rule.min_tasks:
        reasons.append(f"{n_tasks} tasks, the policy needs at least {rule.min_tasks}")
    for side, n in (("champion", a.shape[0]), ("candidate", b.shape[0])):
        if n < rule.seeds_needed:
            reasons.append(f"{side} has {n} seed(s), the policy needs at least {rule.seeds_needed}")
    if not ci[0] > rule.min_delta:
        reasons.append(f"CI lower bound {ci[0]:+.4f} is not above min_delta {rule.min_delta:+.4f}")
    if not (p < nominal):
        reasons.append(f"seed-level p = {p:.4g} is not below {nominal:.4g} (alpha {rule.alpha} at look "
                       f"{look} of {max_looks})")
    settle = None
    if reasons:
        settle = seeds_to_settle(a_means, b_means, rule, nominal) if a.shape[0] > 1 and b.shape[0] > 1 else None
    return ScoreDecision(passed=not reasons, delta=delta, ci=[float(ci[0]), float(ci[1])], p_seed=float(p),
                         alpha_look=float(nominal), look=look, max_looks=max_looks, n_tasks=int(n_tasks),
                         n_seeds=[int(a.shape[0]), int(b.shape[0])], reasons=reasons, seeds_to_settle=settle)
