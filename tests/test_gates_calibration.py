"""Calibration of the score gate on a simulated tree with known true effects and seed noise.

The gate's false-promotion rate on neutral changes must stay at or below its nominal alpha,
including when an agent keeps adding seeds and looking again; greedy keep-if-better on one run
(the failure mode the gates exist for) must, on the same simulator, promote far more
non-improvements — which shows the simulator can tell the two apart.
"""

from __future__ import annotations

import pytest
from scipy import stats

from evotree.gates.calibration import SimModel, neutral_false_promotion_rate, power_at, simulate_tree
from evotree.gates.score import ScoreRule, decide_score

SINGLE = ScoreRule(min_delta=0.0, alpha=0.05, min_tasks=20, min_seeds=3, max_runs=3)  # one look
SEQUENTIAL = ScoreRule(min_delta=0.0, alpha=0.05, min_tasks=20, min_seeds=3, max_runs=12)  # up to 4 looks


def _not_above(hits: int, n: int, alpha: float) -> None:
    """The observed rate is at or below alpha, or at least not significantly above it (one-sided 1 %)."""
    p_above = stats.binomtest(hits, n, alpha, alternative="greater").pvalue
    assert hits / n <= alpha or p_above > 0.01, f"false promotions {hits}/{n} = {hits / n:.3f} > alpha {alpha}"


def test_neutral_changes_are_promoted_at_most_at_alpha() -> None:
    hits, n = neutral_false_promotion_rate(300, SINGLE, seed=11)
    _not_above(hits, n, SINGLE.alpha)
    assert hits / n <= SINGLE.alpha


def test_peeking_with_more_seeds_does_not_inflate_false_promotions() -> None:
    hits, n = neutral_false_promotion_rate(120, SEQUENTIAL, seed=12, sequential=True)
    _not_above(hits, n, SEQUENTIAL.alpha)


def test_gate_finds_large_gains_and_greedy_is_fooled() -> None:
    big, n = power_at(0.10, 60, SINGLE, seed=13)
    assert big / n >= 0.8  # a gain of ~3 seed SDs is found
    greedy = simulate_tree("greedy", loops=60, steps=8, rule=SINGLE, seed=14)
    gate = simulate_tree("gate", loops=60, steps=8, rule=SINGLE, seed=14)
    assert greedy.false_promotion_rate > 0.10  # one lucky run promotes non-improvements
    assert gate.false_promotion_rate <= SINGLE.alpha
    assert gate.false_promotion_rate < greedy.false_promotion_rate / 3


def test_decide_score_explains_each_failure() -> None:
    import numpy as np

    rng = np.random.default_rng(0)
    model = SimModel(n_tasks=10)
    pool = model.difficulties(rng)
    from evotree.gates.calibration import evaluate

    a, b = evaluate(model, pool, 0.0, 2, rng), evaluate(model, pool, 0.0, 2, rng)
    decision = decide_score(a, b, SINGLE, B=500, rng=rng)
    assert not decision.passed
    text = " | ".join(decision.reasons)
    assert "10 tasks, the policy needs at least 20" in text
    assert "champion has 2 seed(s), the policy needs at least 3" in text
    with pytest.raises(ValueError, match="strategy"):
        simulate_tree("optimistic", loops=1, steps=1, rule=SINGLE)


@pytest.mark.slow
def test_calibration_large() -> None:
    hits, n = neutral_false_promotion_rate(3000, SINGLE, seed=21)
    _not_above(hits, n, SINGLE.alpha)
    hits, n = neutral_false_promotion_rate(600, SEQUENTIAL, seed=22, sequential=True)
    _not_above(hits, n, SEQUENTIAL.alpha)
