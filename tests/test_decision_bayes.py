"""The decision-theoretic promotion rule (evotree.gates.bayes), a lever of the decision-goal
study that is off by default: its empirical-Bayes prior, its posterior, its decisions on real
comparisons, and its use in the project's simulator and the loopsim adapter."""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import loopsim as L  # noqa: E402
import loopsim_evotree as E  # noqa: E402

from evotree.diagnostics.stats import difference  # noqa: E402
from evotree.gates import calibration as C  # noqa: E402
from evotree.gates.bayes import (  # noqa: E402
    EffectPrior,
    decide,
    decide_bayes,
    fit_prior,
    posterior,
)
from evotree.gates.score import ScoreRule, decide_score  # noqa: E402

BAYES = ScoreRule(bayes=0.995, bayes_cost=0.0001, bayes_prior="flat")


def test_the_rule_is_off_by_default() -> None:
    assert ScoreRule().bayes == 0.0
    assert E.SHIPPED.bayes == 0.0


def test_fit_prior_recovers_the_history_and_falls_back_to_the_default() -> None:
    rule = ScoreRule(bayes=0.99, bayes_prior_sd=0.02, bayes_prior_weight=3.0)
    assert fit_prior([], rule) == EffectPrior(0.0, 0.02, 0)
    rng = np.random.default_rng(0)
    true = rng.normal(-0.03, 0.04, size=4000)
    history = [(float(t + rng.normal(0, 0.01)), 0.01) for t in true]
    prior = fit_prior(history, rule)
    assert prior.proposals == 4000
    assert prior.mean == pytest.approx(-0.03, abs=0.003)
    assert prior.sd == pytest.approx(0.04, abs=0.003)  # the SEs' share taken out of the spread
    centered = fit_prior(history, replace(rule, bayes_prior="centered"))
    assert centered.mean == 0.0 and centered.sd == pytest.approx(0.05, abs=0.004)
    assert math.isinf(fit_prior(history, replace(rule, bayes_prior="flat")).sd)
    # a history noisier than its spread: the variance floor, not a negative variance
    assert fit_prior([(0.0, 0.05)] * 50, rule).sd == pytest.approx(0.005)


def test_posterior_is_normal_normal() -> None:
    mean, var = posterior(0.02, 0.01, EffectPrior(0.0, 0.01, 5))
    assert mean == pytest.approx(0.01) and var == pytest.approx(0.00005)
    assert posterior(0.02, 0.01, EffectPrior(0.0, math.inf, 0)) == pytest.approx((0.02, 1e-4))


def _runs(quality: float, n: int, rng: np.random.Generator, sd: float = 0.012) -> np.ndarray:
    pool = np.linspace(0.2, 0.8, 40)
    shift = rng.normal(0, sd, size=(n, 1))
    return np.clip(pool[None, :] + quality + shift + rng.normal(0, 0.03, (n, 40)), 0, 1)


def _diff(a: np.ndarray, b: np.ndarray, rule: ScoreRule = BAYES):
    return difference(a, b, confidence=1 - 2 * rule.alpha, threshold=rule.min_delta)


def test_decisions_on_real_comparisons() -> None:
    rng = np.random.default_rng(1)
    champion = _runs(0.0, 4, rng)
    flat = fit_prior([], BAYES)
    better = decide_bayes(_diff(champion, _runs(0.08, 4, rng)), BAYES, flat)
    assert better.passed and better.verdict == "pass"
    worse = decide_bayes(_diff(champion, _runs(-0.08, 2, rng)), BAYES, flat)
    assert worse.verdict == "futile" and not worse.passed
    unsure = decide_bayes(_diff(champion, _runs(0.005, 2, rng)), BAYES, flat)
    assert unsure.verdict == "more_seeds"
    assert unsure.next_seeds == {"candidate": 1, "champion": 0}
    # the last look of the schedule: no more seeds, a failure
    last = decide_bayes(_diff(_runs(0.0, 16, rng), _runs(0.0, 16, rng)), BAYES, flat)
    assert last.verdict == "fail" and not last.passed
    # readiness is the shipped gate's: too few champion re-runs
    early = decide_bayes(_diff(champion[:2], _runs(0.08, 1, rng)), BAYES, flat)
    assert early.verdict == "not_ready"
    # a skeptical prior holds back what a flat one passes
    skeptical = EffectPrior(-0.03, 0.005, 20)
    assert not decide_bayes(_diff(champion, _runs(0.02, 4, rng)), BAYES, skeptical).passed


def test_decide_is_the_shipped_gate_when_the_rule_is_off() -> None:
    rng = np.random.default_rng(2)
    d = _diff(_runs(0.0, 4, rng), _runs(0.02, 2, rng), ScoreRule())
    shipped = decide_score(d, ScoreRule())
    assert decide(d, ScoreRule(), history=[(0.1, 0.01)]).to_dict() == shipped.to_dict()


def test_the_simulator_fits_the_prior_from_the_loop() -> None:
    model, stats, rng = C.SimModel(), C.TreeStats("gate", 1, 1), np.random.default_rng(3)
    loop = C._Loop(model, BAYES, C.Levers(), rng, stats)
    for effect in (0.0, -0.05, 0.03):
        loop.ready_champion(BAYES.champion_seeds)
        loop.compare(effect)
    assert len(loop.history) == 3 and loop.history[1][0] < 0


@pytest.mark.heavy
def test_the_rule_keeps_neutral_changes_out_of_a_clean_first_comparison() -> None:
    hits, n, _ = C.comparison_rate(0.0, 400, rule=BAYES, tree_versions=0, seed=5)
    assert hits / n < 0.03
    helpful, n, _ = C.comparison_rate(0.04, 100, rule=BAYES, tree_versions=0, seed=6)
    assert helpful / n > 0.6


def test_the_adapter_runs_the_rule_with_the_loops_history() -> None:
    rule = E.make(rule={"bayes": 0.995, "bayes_cost": 0.0001, "bayes_prior": "flat"})
    assert rule.rule.bayes == 0.995
    cfg = L.WorldConfig(seed=3)
    records = [L.run_loop(rule, L.LoopWorld(cfg, i, 10), 40, 240) for i in range(3)]
    assert {p.decision for r in records for p in r.proposals} <= {"promote", "reject"}
    assert len(rule.history) == 10  # one (Δ, SE) per proposal of the last loop
    assert rule.verdicts.get("more_seeds", 0) > 0


def test_the_bound_trades_neutral_promotions_for_gains_and_loses_with_a_noisy_champion() -> None:
    import decision_goal_bound as D

    sd = C.SimModel().run_sd
    known, charged = D.Bound(sd, 6), D.Bound(sd, 6, champion_runs=4)

    def run(bound: D.Bound, mu: float) -> dict[str, float]:
        return bound.simulate(bound.solve(0.0002, mu), 20000, np.random.default_rng(0))

    strict, loose = run(known, 0.2), run(known, 0.0)
    assert strict["neutral_promoted"] < loose["neutral_promoted"]
    assert strict["share"] <= loose["share"]
    assert loose["harmful_promoted"] < 0.01  # the true mix keeps harmful changes out
    noisy = run(charged, 0.2)
    assert noisy["share"] < strict["share"]
    assert noisy["runs_per_loop"] > 4  # the champion's runs are charged
