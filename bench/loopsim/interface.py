"""The rule interface of the loop simulator: what a promotion rule sees and what it may answer.

This module is the stable contract between the simulator and any rule plugged into it (the
baselines in ``rules.py``, or an adapter around another project's gate). It has no dependency
on the world model: a rule sees only observed scores, counts and budgets, never the truth
(except the perfect-information ceiling, which declares ``oracle = True``).

A rule is any object with

* ``name: str``
* ``decide(state: State) -> Action`` (required), called repeatedly on one proposal until it
  answers ``Action.promote()`` or ``Action.reject()``;
* ``start_loop(info: LoopInfo) -> None`` (optional), called once before each loop, to reset
  any loop-level memory (for example an error budget spent across the tree);
* ``stop_loop(state: LoopState) -> bool`` (optional), called before every proposal after the
  first; ``True`` ends the loop there (the remaining proposals are not judged);
* ``end_proposal(outcome: Outcome) -> None`` (optional), told how each proposal ended.
* ``oracle: bool`` (optional, default False): when True the state carries ``true_effect``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol, runtime_checkable

import numpy as np

PROMOTE = "promote"
REJECT = "reject"
RUN_CANDIDATE = "run_candidate"
RUN_CHAMPION = "run_champion"


class Kind(str, Enum):
    """The four things a rule can answer."""

    promote = PROMOTE
    reject = REJECT
    run_candidate = RUN_CANDIDATE
    run_champion = RUN_CHAMPION


@dataclass(frozen=True)
class Action:
    """A rule's answer: end the proposal (promote, reject) or ask for ``n`` more runs."""

    kind: Kind
    n: int = 0

    @staticmethod
    def promote() -> Action:
        """Make the candidate the champion; the proposal ends."""
        return Action(Kind.promote)

    @staticmethod
    def reject() -> Action:
        """Keep the champion; the proposal ends."""
        return Action(Kind.reject)

    @staticmethod
    def run_candidate(n: int = 1) -> Action:
        """Run the candidate recipe ``n`` more times (``n`` >= 1; each run costs 1)."""
        return Action(Kind.run_candidate, int(n))

    @staticmethod
    def run_champion(n: int = 1) -> Action:
        """Run the champion recipe ``n`` more times (``n`` >= 1; each run costs 1)."""
        return Action(Kind.run_champion, int(n))

    def __post_init__(self) -> None:
        if self.kind in (Kind.run_candidate, Kind.run_champion) and self.n < 1:
            raise ValueError(f"{self.kind.value} needs n >= 1, got {self.n}")


@dataclass(frozen=True)
class LoopInfo:
    """What a rule is told before a loop starts."""

    loop_index: int
    n_proposals: int
    n_tasks: int
    proposal_cap: int  # most runs one proposal may spend (champion + candidate runs)
    loop_budget: int  # most runs the whole loop may spend


@dataclass(frozen=True)
class State:
    """What a rule sees when asked to decide on one proposal.

    Scores are observed run scores on the 0-1 scale (mean over the task pool); the task
    arrays hold the same runs task by task (read-only, one float per task in [0, 1]).
    ``champion_scores`` holds every run of the current champion made in this loop, oldest
    first, including the runs it had as a candidate when it was promoted (the first
    ``champion_runs_as_candidate`` of them: they won a comparison, so they are biased upwards).
    ``look`` is 1 at the first ``decide`` call on a proposal and grows by one each call.
    """

    loop_index: int
    proposal_index: int  # 0-based position of this proposal in the loop
    n_proposals: int
    champion_scores: tuple[float, ...]
    champion_task_scores: tuple[np.ndarray, ...]
    champion_runs_as_candidate: int
    candidate_scores: tuple[float, ...]
    candidate_task_scores: tuple[np.ndarray, ...]
    runs_this_proposal: int  # runs spent on this proposal so far (both recipes)
    runs_in_loop: int  # runs spent in the loop so far, this proposal included
    proposal_budget_left: int
    loop_budget_left: int
    look: int
    promotions_so_far: int
    true_effect: float | None = None  # only for rules with ``oracle = True``


@dataclass(frozen=True)
class LoopState:
    """What ``stop_loop`` sees before the next proposal."""

    loop_index: int
    next_proposal: int  # 0-based index of the proposal that would come next
    n_proposals: int
    runs_in_loop: int
    loop_budget_left: int
    promotions_so_far: int
    decisions: tuple[str, ...]  # "promote"/"reject"/"deadlock" per judged proposal
    champion_scores: tuple[float, ...]


@dataclass(frozen=True)
class Outcome:
    """How one proposal ended (given to ``end_proposal``); no truth in it."""

    proposal_index: int
    decision: str  # "promote", "reject", "deadlock" or "budget"
    runs: int


@runtime_checkable
class Rule(Protocol):
    """The one method a rule must have (see the module docstring for the optional hooks)."""

    name: str

    def decide(self, state: State) -> Action:
        """The next action on this proposal."""
        ...
