"""evotree's shipped score gate as a rule of the independent loop simulator (bench/loopsim).

Nothing of the gate is re-implemented here: every look is
:func:`evotree.diagnostics.stats.difference` on the runs' per-task scores, with the run-to-run
spread pooled by :func:`evotree.diagnostics.stats.pooled_spread` over the loop's versions (as
:func:`evotree.diagnostics.run_scores.tree_spread` pools the tree's), and
:func:`evotree.gates.score.decide_score` with the :class:`~evotree.gates.score.ScoreRule` that
``gates`` builds from the default ``[gates]`` and ``[budget]`` (looks, alpha spending,
group-sequential thresholds, futility, the champion's re-runs). The adapter only carries out
what the gate answers, as ``evotree autopilot`` does: ``pass`` promotes; ``more_seeds`` /
``not_ready`` run ``next_seeds`` (the champion's first, then the candidate's) and look again;
``fail`` / ``futile`` reject.

Where the two worlds differ (docs/benchmarks/decision-goal.md):

- The gate counts the champion's runs **since its promotion** only; loopsim's ``State`` gives
  every run of the champion with the first ``champion_runs_as_candidate`` of them from its
  promotion, so the adapter drops those (the gate re-runs a new champion from scratch).
- The gate pools the spread over **every comparable version of the tree**; ``State`` holds only
  the champion and the candidate, so the adapter keeps each finished version's runs itself
  (from the last ``State`` it saw of each proposal) and forgets them at ``start_loop``.
- The champion's re-runs have their own account in ``gates`` (``max_runs_per_version`` = 20 per
  champion, :func:`evotree.harness.budget.champion_reruns_left`); the adapter passes what is
  left of it as ``champion_runs_left`` (``champion_budget=False``: unlimited, as the project's
  simulator assumes).
- The **search-level stop** of ``evotree autopilot`` (post-peak: ``patience`` proposals in a row
  not passed after a promotion; futility: as many before any) is a closure inside
  :func:`evotree.verbs.autopilot.run_autopilot`, not a function the adapter can call; with
  ``patience`` > 0 the adapter's ``stop_loop`` restates it (off by default: the gate alone).

Levers under study, off by default: ``make(rule={...})`` (``ScoreRule`` settings other than the
shipped ones, among them the decision-theoretic rule of :mod:`evotree.gates.bayes`, ``bayes``
and ``bayes_cost``, whose prior the adapter fits from the loop's earlier proposals' last looks)
and ``reuse_promotion_runs`` / ``curse_shift`` (a new champion keeps its promotion runs, shifted
down by a winner's-curse correction; docs/benchmarks/decision-goal.md).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from evotree.diagnostics.stats import SpreadTerm, difference, pooled_spread, spread_term
from evotree.gates.bayes import decide
from evotree.gates.score import ScoreRule
from loopsim import Action, LoopInfo, LoopState, Outcome, State

__all__ = ["EvotreeGate", "make"]

#: the defaults of ``[gates]`` and ``[budget]`` (evotree/core/config.py), as gates builds them
SHIPPED = ScoreRule(
    min_delta=0.002, alpha=0.025, min_tasks=20, min_seeds=1, max_runs=20, champion_seeds=4
)


class EvotreeGate:
    """The shipped score gate behind loopsim's rule interface (module doc)."""

    def __init__(
        self,
        rule: ScoreRule = SHIPPED,
        *,
        champion_budget: bool = True,
        patience: int = 0,
        futility: int = 0,
        reuse_promotion_runs: bool = False,
        curse_shift: float = 0.0,
        name: str | None = None,
    ) -> None:
        self.rule = rule
        #: a lever under study (off as shipped): a new champion keeps the runs that promoted it,
        #: shifted down by ``curse_shift`` SEs of its mean at promotion (a winner's-curse
        #: correction), and is only topped up to ``champion_seeds``
        self.reuse = reuse_promotion_runs
        self.curse_shift = curse_shift
        self.champion_budget = champion_budget
        self.patience = patience
        self.futility = futility or patience
        self.name = name or ("evotree-gate" + (f"+stop{patience}" if patience else ""))
        self.verdicts: dict[str, int] = {}
        self.start_loop(None)

    # ------------------------------------------------------------------ loop-level memory
    def start_loop(self, info: LoopInfo | None) -> None:
        """Forget the last loop's tree."""
        self.terms: list[SpreadTerm] = []  # finished versions of this loop's tree
        self.pending: list[Action] = []  # the rest of the seeds the gate asked for
        self.last: State | None = None  # the last state seen of the proposal in hand
        self.missed = 0  # proposals in a row not passed
        self.promoted = False
        self.shift = 0.0  # the reused runs' correction (score units), of the champion in hand
        self.passed_shift = 0.0  # the same, of the candidate the gate just passed
        #: (observed Δ, SE) at each earlier proposal's last look: the decision-theoretic rule's
        #: empirical-Bayes prior (``rule.bayes``; unused by the shipped gate)
        self.history: list[tuple[float, float]] = []
        self.look: tuple[float, float] | None = None

    def end_proposal(self, outcome: Outcome) -> None:
        """File the finished version's runs with the tree (its spread is the tree's from now)."""
        last, self.last, self.pending = self.last, None, []
        if self.look is not None:
            self.history.append(self.look)
            self.look = None
        if last is None:
            return
        if outcome.decision == "promote":
            self.missed, self.promoted = 0, True
            self.shift = self.passed_shift
            if last.champion_task_scores:  # the old champion: every run of it, one version
                self.terms.append(spread_term(np.vstack(last.champion_task_scores)))
        else:
            self.missed += 1
            if last.candidate_task_scores:
                self.terms.append(spread_term(np.vstack(last.candidate_task_scores)))

    def stop_loop(self, state: LoopState) -> bool:
        """evotree autopilot's search-level rule (post-peak / futility), when ``patience`` > 0."""
        if not self.patience:
            return False
        return self.missed >= (self.patience if self.promoted else self.futility)

    # ------------------------------------------------------------------ one proposal
    def decide(self, state: State) -> Action:
        """Carry out the gate's answer on the runs so far (or the rest of its last request)."""
        self.last = state
        if self.pending:
            return self.pending.pop(0)
        rule = self.rule
        since = list(state.champion_task_scores[state.champion_runs_as_candidate :])
        fresh = len(since)  # the champion's re-runs since its promotion (its run account)
        if self.reuse:
            kept = state.champion_task_scores[: state.champion_runs_as_candidate]
            since = [run - self.shift for run in kept] + since
        if not state.candidate_task_scores:
            self.pending = [Action.run_candidate(rule.seeds_needed)]
            if len(since) < rule.champion_seeds:
                return Action.run_champion(rule.champion_seeds - len(since))
            return self.pending.pop(0)
        if not since:  # no comparison yet: the champion has no runs since its promotion
            return Action.run_champion(rule.champion_seeds)
        a, b = np.vstack(since), np.vstack(state.candidate_task_scores)
        spread = pooled_spread([*self.terms, spread_term(a), spread_term(b)])
        diff = difference(
            a, b, spread=spread, confidence=1 - 2 * rule.alpha, threshold=rule.min_delta
        )
        left = max(0, rule.max_runs - fresh) if self.champion_budget else None
        self.look = (float(diff.delta), float(diff.se))
        decision = decide(diff, rule, history=self.history, champion_runs_left=left)
        self.verdicts[decision.verdict] = self.verdicts.get(decision.verdict, 0) + 1
        if decision.passed:
            sd_b = diff.sd[1] if diff.sd[1] is not None else 0.0
            self.passed_shift = self.curse_shift * float(sd_b) / math.sqrt(len(b))
            return Action.promote()
        more = decision.next_seeds or {}
        if decision.verdict not in ("more_seeds", "not_ready") or not any(more.values()):
            return Action.reject()
        actions = []
        if more.get("champion"):
            actions.append(Action.run_champion(int(more["champion"])))
        if more.get("candidate"):
            actions.append(Action.run_candidate(int(more["candidate"])))
        self.pending = actions[1:]
        return actions[0]


def make(rule: dict[str, Any] | None = None, **kwargs: Any) -> EvotreeGate:
    """The factory ``bench/loopsim_run.py --rule bench/loopsim_evotree.py:make`` calls;
    ``rule``: ScoreRule settings that differ from the shipped ones (a lever under study, e.g.
    ``--rule-kwargs '{"rule": {"champion_seeds": 3}}'``; a list becomes a tuple)."""
    if rule:
        settings = {k: tuple(v) if isinstance(v, list) else v for k, v in rule.items()}
        kwargs["rule"] = replace(SHIPPED, **settings)
    return EvotreeGate(**kwargs)
