"""Runs one rule through one loop of a world: executes its actions, enforces the budgets, and
records what happened next to the truth (which the rule never sees)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .interface import Action, Kind, LoopInfo, LoopState, Outcome, State
from .world import LoopWorld, Recipe


@dataclass(frozen=True)
class ProposalRecord:
    """One judged proposal: its truth in the state it met, and what the rule did."""

    index: int
    component: str
    true_effect: float  # v(candidate) - v(champion), population truth
    decision: str  # promote / reject / deadlock / budget
    runs: int
    champion_runs: int


@dataclass
class LoopRecord:
    """One loop under one rule."""

    loop_index: int
    v0: float
    values: list[float] = field(default_factory=list)  # champion's truth after each proposal
    proposals: list[ProposalRecord] = field(default_factory=list)
    runs: int = 0
    champion_runs: int = 0
    stopped_early: bool = False
    budget_exhausted: bool = False

    @property
    def final(self) -> float:
        return self.values[-1] if self.values else self.v0

    @property
    def peak(self) -> float:
        return max([self.v0, *self.values])


class _Runs:
    """The runs this rule has made of each recipe in this loop."""

    def __init__(self, world: LoopWorld) -> None:
        self.world = world
        self.scores: dict[int, list[float]] = {}
        self.tasks: dict[int, list[np.ndarray]] = {}

    def add(self, recipe: Recipe) -> None:
        scores = self.scores.setdefault(recipe.key, [])
        score, tasks = self.world.run(recipe, len(scores))
        scores.append(score)
        self.tasks.setdefault(recipe.key, []).append(tasks)

    def of(self, recipe: Recipe) -> tuple[tuple[float, ...], tuple[np.ndarray, ...]]:
        return tuple(self.scores.get(recipe.key, ())), tuple(self.tasks.get(recipe.key, ()))


def run_loop(
    rule: Any, world: LoopWorld, proposal_cap: int, loop_budget: int, first_only: bool = False
) -> LoopRecord:
    """Drive ``rule`` through the loop's proposals; ``first_only`` stops after proposal 0."""
    info = LoopInfo(
        world.loop_index, world.n_proposals, world.cfg.n_tasks, proposal_cap, loop_budget
    )
    if hasattr(rule, "start_loop"):
        rule.start_loop(info)
    oracle = bool(getattr(rule, "oracle", False))
    record = LoopRecord(world.loop_index, world.v0)
    runs = _Runs(world)
    champion = world.root
    as_candidate = 0
    promotions = 0
    decisions: list[str] = []
    for j in range(world.n_proposals):
        if first_only and j > 0:
            break
        if j > 0 and hasattr(rule, "stop_loop"):
            champ_scores, _ = runs.of(champion)
            loop_state = LoopState(
                world.loop_index,
                j,
                world.n_proposals,
                record.runs,
                loop_budget - record.runs,
                promotions,
                tuple(decisions),
                champ_scores,
            )
            if rule.stop_loop(loop_state):
                record.stopped_early = True
                break
        candidate = world.child(champion, j)
        effect = candidate.value - champion.value
        spent = champ_spent = 0
        look = 0
        decision = ""
        while not decision:
            look += 1
            champ_scores, champ_tasks = runs.of(champion)
            cand_scores, cand_tasks = runs.of(candidate)
            state = State(
                world.loop_index,
                j,
                world.n_proposals,
                champ_scores,
                champ_tasks,
                as_candidate,
                cand_scores,
                cand_tasks,
                spent,
                record.runs,
                proposal_cap - spent,
                loop_budget - record.runs,
                look,
                promotions,
                effect if oracle else None,
            )
            action = rule.decide(state)
            if not isinstance(action, Action):
                raise TypeError(f"{getattr(rule, 'name', rule)}.decide returned {action!r}")
            if action.kind is Kind.promote:
                decision = "promote"
            elif action.kind is Kind.reject:
                decision = "reject"
            elif spent >= proposal_cap:
                decision = "deadlock"
            elif record.runs >= loop_budget:
                decision = "budget"
            else:
                target = candidate if action.kind is Kind.run_candidate else champion
                n = min(action.n, proposal_cap - spent, loop_budget - record.runs)
                for _ in range(n):
                    runs.add(target)
                spent += n
                record.runs += n
                if target is champion:
                    champ_spent += n
        record.champion_runs += champ_spent
        record.proposals.append(
            ProposalRecord(j, world.proposal(j).component, effect, decision, spent, champ_spent)
        )
        decisions.append(decision)
        if decision == "promote":
            champion = candidate
            as_candidate = len(runs.of(candidate)[0])
            promotions += 1
        record.values.append(champion.value)
        if hasattr(rule, "end_proposal"):
            rule.end_proposal(Outcome(j, decision, spent))
        if decision == "budget":
            record.budget_exhausted = True
            break
    return record
