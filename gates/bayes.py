"""A decision-theoretic promotion rule, a lever of the decision-goal study (off by default).

The shipped score gate (:mod:`evotree.gates.score`) is a group-sequential test. This rule reads
the same comparison (:func:`evotree.diagnostics.stats.difference`: Δ and its SE) as a
normal-normal model instead: the true Δ of the candidate over the champion has a normal prior
fitted from the loop's own earlier proposals (empirical Bayes: their observed Δ and SE, never
their truth), the look's Δ is a normal observation of it, and

- **promote** when the posterior probability that Δ > ``min_delta`` reaches ``rule.bayes``;
- **stop (futile)** when no later look of the schedule is worth its runs: the expected gain of
  going on to it (the posterior mean of Δ over the outcomes where that look would promote,
  less nothing, since rejecting gains nothing) is below ``rule.bayes_cost`` per run it adds;
- otherwise ask for the next look's seeds, as the shipped gate does.

``rule.bayes`` is a posterior probability, not a test level: the rule looks again and again, so
its chance of promoting a neutral change is not ``1 - bayes``; it is chosen on the simulated tree
so that the hard constraints hold (docs/benchmarks/decision-goal.md, "The promotion rule
itself"). Readiness (tasks, seeds, the champion's re-runs, a known spread) and identical runs
are the shipped gate's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from statistics import NormalDist
from typing import Any

from evotree.gates.score import ScoreDecision, ScoreRule, _se_at, decide_score, look_of

__all__ = ["EffectPrior", "decide", "decide_bayes", "fit_prior", "posterior"]

_NORMAL = NormalDist()


@dataclass(frozen=True)
class EffectPrior:
    """A normal prior of a proposal's true Δ (score units) and the proposals it was fitted on."""

    mean: float
    sd: float
    proposals: int


def fit_prior(history: Sequence[tuple[float, float]], rule: ScoreRule) -> EffectPrior:
    """Empirical Bayes by moments (``bayes_prior`` "fitted"): the mean of the earlier proposals'
    observed Δ and their variance less their mean squared SE, each shrunk toward a default of
    N(0, ``bayes_prior_sd``²) worth ``bayes_prior_weight`` proposals (so a loop's first proposal
    has a prior too); "centered": the same spread about a mean of 0 (a history dominated by
    harmful proposals would otherwise pull every candidate toward harm); "flat": no prior (the
    posterior is the likelihood). ``history``: (observed Δ, its SE) of each earlier proposal of
    the loop."""
    n0, sd0 = rule.bayes_prior_weight, rule.bayes_prior_sd
    n = len(history)
    if rule.bayes_prior == "flat":
        return EffectPrior(0.0, math.inf, n)
    if n == 0 or n0 + n <= 0:
        return EffectPrior(0.0, sd0, 0)
    mean = sum(d for d, _ in history) / (n0 + n) if rule.bayes_prior == "fitted" else 0.0
    excess = sum((d - mean) ** 2 - s * s for d, s in history)
    var = (n0 * sd0 * sd0 + n0 * mean * mean + excess) / (n0 + n)
    floor = (sd0 / 4) ** 2
    return EffectPrior(mean, math.sqrt(max(var, floor)), n)


def posterior(delta: float, se: float, prior: EffectPrior) -> tuple[float, float]:
    """(mean, variance) of the true Δ given the observed ``delta`` with SE ``se``."""
    if se <= 0:
        return delta, 0.0
    w_prior, w_data = 1.0 / prior.sd**2 if math.isfinite(prior.sd) else 0.0, 1.0 / se**2
    var = 1.0 / (w_prior + w_data)
    return var * (prior.mean * w_prior + delta * w_data), var


def _se_for_df(se: float, df: float, level: float) -> float:
    """The SE widened so that a normal quantile at ``level`` matches the t quantile of ``df``
    degrees of freedom: an SE estimated from few runs (a clean first look: 3 df) is itself
    uncertain, and the normal likelihood would take it as known."""
    if not math.isfinite(df) or df > 1e6 or se <= 0:
        return se
    from scipy.stats import t

    return se * float(t.ppf(level, max(df, 1.0))) / _NORMAL.inv_cdf(level)


def _gain_if_promoted(mean: float, spread: float, bar: float) -> float:
    """E[m · 1{m ≥ bar}] for m ~ N(mean, spread²): the expected Δ promoted at a later look whose
    posterior mean m must reach ``bar``."""
    if spread <= 0:
        return mean if mean >= bar else 0.0
    z = (mean - bar) / spread
    return mean * _NORMAL.cdf(z) + spread * _NORMAL.pdf(z)


def decide_bayes(
    diff: Any,
    rule: ScoreRule,
    prior: EffectPrior,
    *,
    champion_runs_left: int | None = None,
) -> ScoreDecision:
    """The rule of the module doc on the comparison ``diff`` (champion a, candidate b)."""
    base = decide_score(diff, rule, champion_runs_left=champion_runs_left)
    if base.verdict == "not_ready" or diff.identical[0] or diff.identical[1]:
        return base  # readiness and identical copies: the shipped gate's answer
    n_a, n_b = int(diff.n_runs[0]), int(diff.n_runs[1])
    looks = rule.looks()
    look = max(1, look_of(rule, n_b, looks))
    se = _se_for_df(float(diff.se), float(diff.df), rule.bayes)
    mean, var = posterior(float(diff.delta), se, prior)
    p_h0 = (
        _NORMAL.cdf((rule.min_delta - mean) / math.sqrt(var))
        if var > 0
        else float(mean <= rule.min_delta)
    )
    notes = [
        f"decision-theoretic rule: prior N({prior.mean:.4f}, {prior.sd:.4f}²) from "
        f"{prior.proposals} earlier proposal(s); posterior Δ {mean:.4f} ± {math.sqrt(var):.4f}; "
        f"P(Δ ≤ {rule.min_delta:g}) = {p_h0:.3g} (p_value holds it)"
    ]
    out = replace(
        base,
        p_value=float(p_h0),
        threshold=float(1.0 - rule.bayes),
        look=look,
        notes=[*base.notes, *notes],
        next_seeds=None,
        conditional_power=None,
        seeds_to_settle=None,
    )
    if p_h0 <= 1.0 - rule.bayes:
        return replace(out, passed=True, verdict="pass", reasons=[])
    reasons = [f"P(Δ ≤ {rule.min_delta:g}) = {p_h0:.3g} is above {1 - rule.bayes:.3g}"]
    if look >= len(looks):
        return replace(out, verdict="fail", reasons=reasons)

    def champion_at(seeds: int) -> int:
        want = max(n_a, rule.champion_planned(seeds))
        if champion_runs_left is not None:
            want = min(want, n_a + max(0, champion_runs_left))
        return want

    z = _NORMAL.inv_cdf(rule.bayes)
    best = -math.inf
    for s in looks[look:]:
        se_k = _se_for_df(_se_at(diff, champion_at(s), s), float(diff.df), rule.bayes)
        _, var_k = posterior(0.0, se_k, prior)
        spread = math.sqrt(max(0.0, var - var_k))
        gain = _gain_if_promoted(mean, spread, rule.min_delta + z * math.sqrt(var_k))
        runs = (s - n_b) + (champion_at(s) - n_a)
        best = max(best, gain - rule.bayes_cost * runs)
    if best <= 0:
        return replace(out, verdict="futile", reasons=reasons)
    nxt = looks[look]
    return replace(
        out,
        verdict="more_seeds",
        reasons=reasons,
        next_seeds={"candidate": max(0, nxt - n_b), "champion": max(0, champion_at(nxt) - n_a)},
    )


def decide(
    diff: Any,
    rule: ScoreRule,
    *,
    history: Sequence[tuple[float, float]] = (),
    champion_runs_left: int | None = None,
) -> ScoreDecision:
    """The score gate's decision: :func:`decide_score` (as shipped), or with ``rule.bayes`` set
    the decision-theoretic rule with a prior fitted from ``history`` (the loop's earlier
    proposals' observed Δ and SE)."""
    if not rule.bayes:
        return decide_score(diff, rule, champion_runs_left=champion_runs_left)
    return decide_bayes(diff, rule, fit_prior(history, rule), champion_runs_left=champion_runs_left)
