"""The score gate's rule (gates/score.py) on numbers whose truth is known: looks, thresholds,
verdicts, deterministic runs and what more seeds would do. The simulated tree is in
tests/test_gate_power.py (small) and bench/bench_gate_calibration.py (full size)."""

from __future__ import annotations

import numpy as np
import pytest

from evotree.diagnostics.stats import InvalidScores, difference, pooled_spread, spread_term
from evotree.gates.calibration import SimModel, evaluate, simulate_tree
from evotree.gates.score import ScoreRule, conditional_power, decide_score, look_of

RULE = ScoreRule()


def test_looks_and_thresholds() -> None:
    assert RULE.alpha == 0.025 and RULE.looks() == (
        1,
        2,
        3,
        4,
        6,
        8,
        12,
        16,
    )  # room for 4 champion re-runs of 20
    spent = RULE.spent()
    assert spent[-1] == pytest.approx(RULE.alpha) and spent[0] == pytest.approx(0.025 / 256)
    thresholds = [RULE.alpha_at(j) for j in range(1, 9)]
    assert thresholds == sorted(thresholds) and all(t < RULE.alpha for t in thresholds)
    # group-sequential: each threshold above its bare share (the looks are correlated) ...
    shares = ScoreRule(boundaries="shares")
    assert all(t >= shares.alpha_at(j) * (1 - 1e-9) for j, t in enumerate(thresholds, 1))
    assert thresholds[-1] > 1.1 * shares.alpha_at(8)
    # ... and under H0 the chance of a first crossing at look j is look j's share (Monte Carlo on the
    # canonical joint distribution of the looks' z statistics)
    looks = np.array(RULE.looks(), dtype=float)
    info = 1.0 / (1.0 / np.maximum(RULE.champion_seeds, looks) + 1.0 / looks)
    rng = np.random.default_rng(0)
    z = np.cumsum(
        rng.normal(size=(400_000, looks.size)) * np.sqrt(np.diff(np.r_[0.0, info])), axis=1
    ) / np.sqrt(info)
    from scipy import stats as st

    crossed = (z > st.norm.isf(thresholds)).any(axis=1).mean()
    assert crossed == pytest.approx(RULE.alpha, abs=0.001)
    assert [look_of(RULE, n) for n in (0, 1, 3, 4, 15, 16, 20)] == [0, 1, 3, 4, 7, 8, 8]
    one = ScoreRule(min_seeds=3, max_runs=6, champion_seeds=3)
    assert one.looks() == (3,) and one.alpha_at(1) == one.alpha
    assert ScoreRule(min_seeds=2).looks() == (2, 4, 6, 8, 12, 16)
    assert ScoreRule(schedule=(1, 4, 16)).looks() == (1, 4, 16)


def _matrices(seed: int, effect: float, n_a: int, n_b: int, model: SimModel = SimModel()) -> tuple:
    rng = np.random.default_rng(seed)
    pool = model.difficulties(rng)
    return evaluate(model, pool, 0.0, n_a, rng), evaluate(model, pool, effect, n_b, rng), pool, rng


def test_one_ci_one_p_and_the_gate_uses_them() -> None:
    a, b, _, _ = _matrices(1, 0.05, 4, 16)
    d = difference(a, b, confidence=0.95)
    decision = decide_score(d, RULE)
    assert decision.delta == d.delta and decision.ci == list(d.ci) and decision.p_value == d.p_value
    assert decision.look == len(RULE.looks()) and decision.threshold == pytest.approx(
        RULE.alpha_at(len(RULE.looks()))
    )
    assert decision.passed == (d.p_value < decision.threshold)
    # with one look the threshold is alpha itself: passing <=> the CI's lower end is above 0
    single = ScoreRule(min_seeds=4, max_runs=8)
    d4 = difference(a, b[:4], confidence=1 - 2 * single.alpha)
    assert decide_score(d4, single).passed == (d4.ci[0] > 0)


def test_pooled_spread_has_the_degrees_of_freedom_of_the_tree() -> None:
    model = SimModel()
    rng = np.random.default_rng(3)
    pool = model.difficulties(rng)
    tree = [spread_term(evaluate(model, pool, q, 3, rng)) for q in (0.0, 0.02, -0.03, 0.01)]
    copies = spread_term(np.tile(evaluate(model, pool, 0.0, 1, rng), (3, 1)))
    spread = pooled_spread([*tree, copies])
    assert spread.df == 8 and spread.versions == 4 and spread.identical_versions == 1
    assert spread.sd == pytest.approx(model.run_sd, rel=0.5)
    a, b = evaluate(model, pool, 0.0, 4, rng), evaluate(model, pool, 0.0, 1, rng)
    d = difference(a, b, spread=spread)
    assert d.sd_source[1] == "tree" and d.df > 3  # one run of the candidate, yet a known spread


def test_identical_runs_count_once_and_the_tasks_are_the_unit() -> None:
    rng = np.random.default_rng(4)
    base = rng.binomial(8, 0.5, size=(1, 40)) / 8
    better = np.clip(base + (rng.random((1, 40)) < 0.3) / 8, 0, 1)
    a, b = np.tile(base, (5, 1)), np.tile(better, (5, 1))
    d = difference(a, b)
    assert d.identical == (True, True) and d.unit == "tasks" and d.effective_runs == (1, 1)
    one = difference(base, better, spread=pooled_spread([spread_term(a), spread_term(b)]))
    assert d.ci == one.ci and d.p_value == one.p_value  # five copies are worth one run
    decision = decide_score(d, RULE)
    assert (
        decision.max_looks == 1 and decision.threshold == RULE.alpha
    )  # seeds add nothing: one look
    assert "identical copies" in " ".join(decision.notes)
    with pytest.raises(InvalidScores, match="two tasks"):
        difference(base[:, :1], better[:, :1])


def test_verdicts_say_what_to_do() -> None:
    a, b, _, _ = _matrices(5, 0.0, 4, 1)
    model_spread = pooled_spread([spread_term(a)])
    # too few champion re-runs: not ready, with the seeds to add
    d = difference(a[:2], b, spread=model_spread)
    early = decide_score(d, RULE)
    assert early.verdict == "not_ready" and early.next_seeds == {"candidate": 0, "champion": 2}
    # an unknown spread (one run a side, no tree): not ready
    lone = decide_score(difference(a[:1], b), RULE)
    assert lone.verdict == "not_ready" and any("spread is unknown" in r for r in lone.reasons)
    # a promising first look: more seeds of both, and how many would likely settle it
    a2, b2, _, _ = _matrices(6, 0.03, 4, 1)
    d2 = difference(a2, b2 + 0.03, spread=pooled_spread([spread_term(a2)]))
    more = decide_score(d2, RULE)
    assert more.verdict == "more_seeds" and more.next_seeds == {"candidate": 1, "champion": 0}
    assert more.conditional_power is not None and more.seeds_to_settle in RULE.looks()
    # the champion's budget bounds what the gate asks of it
    assert decide_score(d2, RULE, champion_runs_left=0).next_seeds["champion"] == 0
    # a negative Δ: futile, no seeds asked
    d3 = difference(a2, b2 - 0.05, spread=pooled_spread([spread_term(a2)]))
    assert decide_score(d3, RULE).verdict == "futile"
    # too few tasks
    small = difference(a2[:, :10], b2[:, :10], spread=pooled_spread([spread_term(a2[:, :10])]))
    assert any("10 tasks" in r for r in decide_score(small, RULE).reasons)


def test_conditional_power_grows_with_the_effect() -> None:
    a, b, _, _ = _matrices(7, 0.0, 4, 4)
    spread = pooled_spread([spread_term(a), spread_term(b)])
    low = conditional_power(difference(a, b + 0.005, spread=spread), 0.02, 16, 16)
    high = conditional_power(difference(a, b + 0.03, spread=spread), 0.02, 16, 16)
    assert 0.0 <= low < high <= 1.0


def test_simulate_tree_rejects_unknown_strategies() -> None:
    with pytest.raises(ValueError, match="strategy"):
        simulate_tree("optimistic", loops=1, steps=1)
