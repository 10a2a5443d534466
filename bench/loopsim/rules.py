"""Baseline rules (and test rules) for the loop simulator; each follows ``interface.Rule``."""

from __future__ import annotations

import math
import statistics

from .interface import Action, State


class GreedyK:
    """Keep if better on ``k`` runs: the mean of ``k`` candidate runs against the mean of the
    champion's runs, topped up to ``k`` (the initial champion is run ``k`` times once; a
    promoted candidate's ``k`` runs become the champion's). Greedy-1 is the usual
    keep-if-better: one new run against the one run that made the champion champion."""

    def __init__(self, k: int = 1, margin: float = 0.0) -> None:
        if k < 1:
            raise ValueError("k >= 1")
        self.k = k
        self.margin = margin
        self.name = f"greedy-{k}" + (f"+{margin:g}" if margin else "")

    def decide(self, state: State) -> Action:
        if len(state.champion_scores) < self.k:
            return Action.run_champion(self.k - len(state.champion_scores))
        if len(state.candidate_scores) < self.k:
            return Action.run_candidate(self.k - len(state.candidate_scores))
        champ = statistics.fmean(state.champion_scores[-self.k :])
        cand = statistics.fmean(state.candidate_scores)
        return Action.promote() if cand > champ + self.margin else Action.reject()


class Ceiling:
    """Perfect information: promote exactly the truly better proposals, with no runs."""

    oracle = True
    name = "ceiling"

    def decide(self, state: State) -> Action:
        assert state.true_effect is not None
        return Action.promote() if state.true_effect > 0 else Action.reject()


class AlwaysReject:
    """Never changes the champion, never runs anything."""

    name = "always-reject"

    def decide(self, state: State) -> Action:
        return Action.reject()


class NeverDecide:
    """Asks for one more candidate run forever (for the deadlock accounting)."""

    name = "never-decide"

    def decide(self, state: State) -> Action:
        return Action.run_candidate(1)


class SequentialMargin:
    """An example rule (not tuned, not anyone's gate): runs both recipes in steps of ``step``
    up to ``n_max`` each; promotes when the difference of means clears ``margin`` by ``z``
    standard errors, rejects when it falls short of ``margin`` by ``z``, and at ``n_max``
    promotes only if clearing zero by ``z``. Stops a loop after ``futility`` rejects in a row.
    The SD is pooled from both recipes' runs, with ``sd_floor`` as a lower bound."""

    def __init__(
        self,
        step: int = 2,
        n_max: int = 8,
        z: float = 2.0,
        margin: float = 0.005,
        sd_floor: float = 0.005,
        futility: int = 0,
    ) -> None:
        self.step, self.n_max, self.z = step, n_max, z
        self.margin, self.sd_floor, self.futility = margin, sd_floor, futility
        self.name = f"seq-margin(z={z:g},n<={n_max})"

    def decide(self, state: State) -> Action:
        champ, cand = state.champion_scores, state.candidate_scores
        if len(cand) < self.step:
            if len(champ) < self.step:
                return Action.run_champion(self.step - len(champ))
            return Action.run_candidate(self.step - len(cand))
        if len(champ) < len(cand):
            return Action.run_champion(len(cand) - len(champ))
        diff = statistics.fmean(cand) - statistics.fmean(champ)
        sd = max(self.sd_floor, _pooled_sd(champ, cand))
        se = sd * math.sqrt(1 / len(cand) + 1 / len(champ))
        if len(cand) >= self.n_max or state.proposal_budget_left < 2 * self.step:
            return Action.promote() if diff - self.z * se > 0 else Action.reject()
        if diff - self.z * se > self.margin:
            return Action.promote()
        if diff + self.z * se < self.margin:
            return Action.reject()
        return Action.run_candidate(self.step)

    def stop_loop(self, state) -> bool:  # noqa: ANN001 (interface.LoopState)
        if self.futility <= 0 or len(state.decisions) < self.futility:
            return False
        return all(d != "promote" for d in state.decisions[-self.futility :])


def _pooled_sd(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    ss = sum((x - statistics.fmean(a)) ** 2 for x in a) if len(a) > 1 else 0.0
    ss += sum((x - statistics.fmean(b)) ** 2 for x in b) if len(b) > 1 else 0.0
    dof = max(0, len(a) - 1) + max(0, len(b) - 1)
    return math.sqrt(ss / dof) if dof else 0.0
