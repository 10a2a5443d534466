"""An independent simulator of improvement loops, to measure promotion rules.

Layout: ``interface`` (the stable rule contract: State, LoopState, LoopInfo, Action, Outcome),
``world`` (proposals, recipes, noisy runs), ``engine`` (one rule through one loop), ``rules``
(baselines), ``experiment`` (rules side by side, metrics). Pure Python and numpy.
"""

from .engine import LoopRecord, ProposalRecord, run_loop
from .experiment import Setup, evaluate, matched_k, run_rules, summarize, wilson, world_stats
from .interface import Action, Kind, LoopInfo, LoopState, Outcome, Rule, State
from .rules import AlwaysReject, Ceiling, GreedyK, NeverDecide, SequentialMargin
from .world import LoopWorld, WorldConfig

__all__ = [
    "Action",
    "AlwaysReject",
    "Ceiling",
    "GreedyK",
    "Kind",
    "LoopInfo",
    "LoopRecord",
    "LoopState",
    "LoopWorld",
    "NeverDecide",
    "Outcome",
    "ProposalRecord",
    "Rule",
    "SequentialMargin",
    "Setup",
    "State",
    "WorldConfig",
    "evaluate",
    "matched_k",
    "run_loop",
    "run_rules",
    "summarize",
    "wilson",
    "world_stats",
]
