"""The simulator's frontier levers (bench/bench_gate_frontier.py): a new champion keeping the runs
that promoted it, and the oracle futility that knows the true mix of proposals."""

from __future__ import annotations

import numpy as np
import pytest

from evotree.diagnostics.stats import difference
from evotree.gates.calibration import (
    Levers,
    Proposals,
    SimModel,
    _predictive_power,
    _prior_grid,
    evaluate,
    simulate_tree,
)
from evotree.gates.score import ScoreRule, conditional_power


def _diff(effect: float, n_a: int, n_b: int, seed: int = 0):
    model, rng = SimModel(), np.random.default_rng(seed)
    pool = model.difficulties(rng)
    a, b = evaluate(model, pool, 0.0, n_a, rng), evaluate(model, pool, effect, n_b, rng)
    return difference(a, b, confidence=0.95)


def test_predictive_power_under_a_point_prior_is_the_conditional_power_at_that_point() -> None:
    rule = ScoreRule()
    diff = _diff(0.01, 6, 3, seed=4)
    looks = rule.looks()
    # a prior all at the observed Δ: the conditional power at the observed Δ (the champion at the
    # last look's seeds, as the gate plans it)
    expect = conditional_power(
        diff, rule.alpha_at(len(looks), looks), looks[-1], looks[-1], rule.min_delta, 0.0
    )
    assert _predictive_power(
        diff, rule, (np.array([diff.delta]), np.array([1.0]))
    ) == pytest.approx(expect, abs=1e-9)
    powers = [
        _predictive_power(diff, rule, (np.array([t]), np.array([1.0])))
        for t in (-0.02, 0.0, 0.02, 0.04)
    ]
    assert powers == sorted(powers) and powers[0] < 0.05 and powers[-1] > 0.9
    # a two-point prior: the posterior weighs the point nearer the observed Δ more
    mixed = _predictive_power(diff, rule, (np.array([0.0, 0.04]), np.array([0.5, 0.5])))
    assert powers[1] < mixed < powers[3]


def test_the_prior_grid_is_the_mix_of_proposals() -> None:
    effects, weights = _prior_grid(Proposals())
    assert weights.sum() == pytest.approx(1.0)
    assert weights[effects < 0].sum() == pytest.approx(0.6) and weights[
        effects == 0
    ].sum() == pytest.approx(0.3)
    assert effects.min() == pytest.approx(-0.08) and effects.max() == pytest.approx(0.04)


@pytest.mark.heavy
def test_a_champion_that_keeps_its_promotion_runs_needs_fewer_runs_and_stays_strict() -> None:
    shipped = simulate_tree("gate", loops=25, seed=11)
    reuse = simulate_tree("gate", loops=25, seed=11, levers=Levers(reuse_promotion_runs=True))
    assert reuse.champion_runs < shipped.champion_runs  # no re-runs from scratch after a promotion
    assert reuse.neutral_promotion_rate <= 0.025 and reuse.harmful_promotion_rate < 0.01
    assert reuse.deadlocked == 0 and reuse.mean_final > 0


@pytest.mark.heavy
def test_the_oracle_futility_stops_more_comparisons_early_the_higher_it_is() -> None:
    rule = ScoreRule(futility=0.0)
    low = simulate_tree("gate", loops=15, seed=5, rule=rule, levers=Levers(oracle_futility=0.01))
    high = simulate_tree("gate", loops=15, seed=5, rule=rule, levers=Levers(oracle_futility=0.2))
    assert high.runs < low.runs and high.neutral_promotion_rate <= 0.025
