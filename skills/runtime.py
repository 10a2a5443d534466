"""What each built-in skill computes when a version trains. Plain Python, no TRL code.

Two kinds of skills (``SkillInfo.kind``):

* **reward** skills change the reward functions handed to ``GRPOTrainer(reward_funcs=...)``:
  ``OverlongPenalty`` and ``AuxRewardTerm`` add a function (and its weight), and
  ``PartialPassReward`` replaces the domain's all-or-nothing function by the fraction of its
  checks passed, under the same name and weight. Every reward function keeps TRL's protocol
  (``f(prompts=, completions=, completion_ids=, **columns) -> list[float]``), so the harness's
  ``record_rewards`` records each as a component.
* **batch** skills look at a scored generation batch (TRL's combined reward of every sample,
  which samples were truncated, their text) and say which groups and samples keep their weight
  in the policy loss (:class:`Selection`); ``evotree.harness.trl`` applies that to TRL's batch
  (``completion_mask`` and ``advantages``) and records the counts as signals.

:func:`activate` turns a version's :class:`evotree.skills.recipe.AppliedSkill` list into an
:class:`Activation`; the domain supplies what only it knows through :class:`SkillHooks`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evotree.skills.catalog import get_skill
from evotree.skills.errors import InvalidSkillParam, SkillNotApplicable
from evotree.skills.recipe import AppliedSkill

__all__ = [
    "Activation",
    "BatchSkill",
    "ScoredBatch",
    "Selection",
    "SkillHooks",
    "activate",
    "group_stds",
    "overlong_penalty",
]

RewardFunc = Callable[..., Any]


@dataclass
class SkillHooks:
    """What a domain offers the skills.

    ``checks``: TRL-protocol function returning, per sample, the list of checks it passed
    (booleans) — PartialPassReward's input; ``all_or_nothing``: the name of the reward function
    PartialPassReward replaces; ``aux_terms``: auxiliary reward functions by term name
    (AuxRewardTerm); ``format_ok``: whether a completion's text has the output format
    (DualLevelFilter's sample-level format check).
    """

    domain: str = "custom"
    checks: RewardFunc | None = None
    all_or_nothing: str | None = None
    aux_terms: dict[str, RewardFunc] = field(default_factory=dict)
    format_ok: Callable[[str], bool] | None = None


@dataclass
class ScoredBatch:
    """One scored generation batch, as the batch skills see it (one process: the whole batch).

    ``rewards``: TRL's combined reward per sample (``nansum`` of weighted components, NaN when
    no function scored it); samples ``[g*G, (g+1)*G)`` are group ``g``.
    """

    rewards: list[float]
    num_generations: int
    truncated: list[bool]
    completions: list[str]

    @property
    def groups(self) -> int:
        return len(self.rewards) // self.num_generations


@dataclass
class Selection:
    """A batch skill's verdict: which groups and samples keep their weight in the loss."""

    skill: str
    keep_groups: list[bool]
    keep_samples: list[bool]
    counts: dict[str, int]
    min_std: float = 0.0
    max_resample_batches: int = 0
    #: where refill groups come from: "fresh" prompts of the training set (DAPO's dynamic
    #: sampling) or the "same" prompts sampled again
    refill: str = "fresh"


def group_stds(rewards: Sequence[float], num_generations: int) -> list[float]:
    """The reward std of each group: unbiased (n - 1), over its scored (non-NaN) samples, in
    double precision; 0 for a group with fewer than two scored samples (nothing varies)."""
    out = []
    for g in range(len(rewards) // num_generations):
        values = [
            float(r)
            for r in rewards[g * num_generations : (g + 1) * num_generations]
            if not math.isnan(float(r))
        ]
        if len(values) < 2:
            out.append(0.0)
            continue
        mean = math.fsum(values) / len(values)
        out.append(math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1)))
    return out


def _keep_groups(batch: ScoredBatch, min_std: float) -> list[bool]:
    return [std > min_std for std in group_stds(batch.rewards, batch.num_generations)]


class BatchSkill(ABC):
    """A skill that selects what the policy loss sees in a scored batch."""

    name = ""

    def __init__(self, params: dict[str, Any]) -> None:
        self.params = dict(params)

    @abstractmethod
    def select(self, batch: ScoredBatch) -> Selection:
        """Which groups and samples of ``batch`` the loss keeps, with the counts to record."""


class StdGroupFilter(BatchSkill):
    """Groups whose reward std is at most ``min_std`` get zero weight; with
    ``max_resample_batches`` > 0 their places are refilled (fresh prompts by default: DAPO)."""

    name = "StdGroupFilter"

    def select(self, batch: ScoredBatch) -> Selection:
        keep = _keep_groups(batch, float(self.params["min_std"]))
        g = batch.num_generations
        samples = [keep[i // g] for i in range(len(batch.rewards))]
        return Selection(
            self.name,
            keep,
            samples,
            {"groups": len(keep), "kept": sum(keep), "dropped": len(keep) - sum(keep)},
            min_std=float(self.params["min_std"]),
            max_resample_batches=int(self.params["max_resample_batches"]),
            refill=str(self.params.get("refill", "fresh")),
        )


class DualLevelFilter(BatchSkill):
    """The group-level std filter plus sample-level masking of truncated / malformed samples."""

    name = "DualLevelFilter"

    def __init__(self, params: dict[str, Any], format_ok: Callable[[str], bool] | None) -> None:
        super().__init__(params)
        self.format_ok = format_ok

    def select(self, batch: ScoredBatch) -> Selection:
        keep = _keep_groups(batch, float(self.params["min_std"]))
        g = batch.num_generations
        samples, truncated, malformed = [], 0, 0
        for i, text in enumerate(batch.completions):
            cut = bool(self.params["mask_truncated"]) and batch.truncated[i]
            bad = (
                bool(self.params["mask_format_failed"])
                and self.format_ok is not None
                and not self.format_ok(text)
            )
            in_kept_group = keep[i // g]
            truncated += in_kept_group and cut
            malformed += in_kept_group and bad and not cut
            samples.append(in_kept_group and not cut and not bad)
        dropped = len(keep) - sum(keep)
        return Selection(
            self.name,
            keep,
            samples,
            {
                "groups": len(keep),
                "kept": sum(keep),
                "dropped": dropped,
                "masked_samples": truncated + malformed,
                "masked_truncated": truncated,
                "masked_format": malformed,
                "kept_samples": sum(samples),
            },
            min_std=float(self.params["min_std"]),
        )


# ------------------------------------------------------------------------------ reward skills
def overlong_penalty(length: int, max_length: int, cache_length: int) -> float:
    """DAPO's soft overlong punishment of a completion of ``length`` tokens: 0 up to
    ``max_length - cache_length``, then linearly down to -1 at ``max_length``; -1 beyond."""
    expected = max_length - cache_length
    if length <= expected:
        return 0.0
    if length <= max_length:
        return (expected - length) / cache_length
    return -1.0


def _name(func: Any) -> str:
    import functools

    while isinstance(func, functools.partial):
        func = func.func
    return getattr(func, "__name__", type(func).__name__)


def _overlong_func(max_length: int, cache_length: int) -> RewardFunc:
    def overlong_penalty_reward(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]],
        **kwargs: Any,
    ) -> list[float]:
        return [overlong_penalty(len(ids), max_length, cache_length) for ids in completion_ids]

    overlong_penalty_reward.__name__ = overlong_penalty_reward.__qualname__ = "overlong_penalty"
    return overlong_penalty_reward


def _partial_pass_func(name: str, checks: RewardFunc, min_fraction: float) -> RewardFunc:
    def partial_pass(*args: Any, **kwargs: Any) -> list[float]:
        out = []
        for passed in checks(*args, **kwargs):
            passed = list(passed)
            fraction = sum(bool(p) for p in passed) / len(passed) if passed else 0.0
            out.append(fraction if fraction >= min_fraction else 0.0)
        return out

    partial_pass.__name__ = partial_pass.__qualname__ = name  # same component, same weight
    return partial_pass


def _aux_func(term: str, func: RewardFunc) -> RewardFunc:
    def aux(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    aux.__name__ = aux.__qualname__ = f"aux_{term}"
    return aux


@dataclass
class Activation:
    """A version's skills, ready for the trainer: the reward functions and weights to pass to
    ``GRPOTrainer`` (in place of the domain's), and the batch skills for the TRL seam."""

    skills: list[AppliedSkill]
    reward_funcs: list[RewardFunc]
    reward_weights: list[float]
    batch_skills: list[BatchSkill]

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.skills]


def activate(
    applied: Sequence[AppliedSkill],
    *,
    hooks: SkillHooks,
    reward_funcs: Sequence[RewardFunc],
    reward_weights: Sequence[float] | None,
    max_completion_length: int,
) -> Activation:
    """Turn a version's skills into reward functions, weights and batch skills, in recipe order.

    Raises :class:`SkillNotApplicable` (exit 26) when a skill does not apply to
    ``hooks.domain`` or needs something the domain does not offer (PartialPassReward without
    checks, DualLevelFilter's format masking without a format check), and
    :class:`InvalidSkillParam` (exit 25) for an auxiliary term the domain does not have.
    """
    funcs = list(reward_funcs)
    weights = [1.0] * len(funcs) if reward_weights is None else [float(w) for w in reward_weights]
    if len(weights) != len(funcs):
        raise InvalidSkillParam(
            f"{len(weights)} reward weights for {len(funcs)} reward functions",
            fix="pass one weight per reward function",
        )
    building = _Building(funcs, weights, [], hooks, max_completion_length)
    for skill in applied:
        info = get_skill(skill.name)
        why = info.why_not(hooks.domain)
        if why is not None:
            raise SkillNotApplicable(why, fix="remove it from skills.toml", skill=info.name)
        add = _ACTIVATORS.get(info.name)
        if add is None:  # pragma: no cover - a catalog entry without an implementation is a bug
            raise SkillNotApplicable(f"{info.name} has no implementation", skill=info.name)
        add(building, {**info.defaults(), **skill.params})
    return Activation(list(applied), funcs, weights, building.batch)


@dataclass
class _Building:
    """The reward functions, weights and batch skills as the skills are added, in recipe order."""

    funcs: list[RewardFunc]
    weights: list[float]
    batch: list[BatchSkill]
    hooks: SkillHooks
    max_completion_length: int


def _add_std_group_filter(b: _Building, params: dict[str, Any]) -> None:
    b.batch.append(StdGroupFilter(params))


def _add_dual_level_filter(b: _Building, params: dict[str, Any]) -> None:
    if params["mask_format_failed"] and b.hooks.format_ok is None:
        raise SkillNotApplicable(
            f"DualLevelFilter: the {b.hooks.domain} domain offers no format check, so "
            "format-failed samples cannot be told apart",
            fix="apply it with --param mask_format_failed=false, or pass "
            "SkillHooks(format_ok=...) from the training script",
            skill="DualLevelFilter",
        )
    b.batch.append(DualLevelFilter(params, b.hooks.format_ok))


def _add_overlong_penalty(b: _Building, params: dict[str, Any]) -> None:
    max_length = int(params["max_length"]) or int(b.max_completion_length)
    cache = int(params["cache_length"]) or max(1, max_length // 5)
    if cache > max_length:
        raise InvalidSkillParam(
            f"OverlongPenalty: cache_length {cache} exceeds max_length {max_length}",
            fix="choose cache_length <= max_length",
            skill="OverlongPenalty",
        )
    b.funcs.append(_overlong_func(max_length, cache))
    b.weights.append(float(params["weight"]))


def _add_partial_pass_reward(b: _Building, params: dict[str, Any]) -> None:
    target = b.hooks.all_or_nothing
    names = [_name(f) for f in b.funcs]
    if b.hooks.checks is None or target is None or target not in names:
        raise SkillNotApplicable(
            f"PartialPassReward: the {b.hooks.domain} domain offers no per-check results "
            "for its all-or-nothing reward"
            + (f" ({target!r} is not among the reward functions {names})" if target else ""),
            fix="pass SkillHooks(checks=..., all_or_nothing=NAME) from the training script",
            skill="PartialPassReward",
        )
    b.funcs[names.index(target)] = _partial_pass_func(
        target, b.hooks.checks, float(params["min_fraction"])
    )


def _add_aux_reward_term(b: _Building, params: dict[str, Any]) -> None:
    term = str(params["term"])
    if term not in b.hooks.aux_terms:
        raise InvalidSkillParam(
            f"AuxRewardTerm: the {b.hooks.domain} domain has no auxiliary term {term!r}; "
            f"it has: {', '.join(sorted(b.hooks.aux_terms)) or '(none)'}",
            fix="apply it again with --param term=NAME",
            skill="AuxRewardTerm",
            param="term",
        )
    if f"aux_{term}" in [_name(f) for f in b.funcs]:
        raise InvalidSkillParam(
            f"AuxRewardTerm: aux_{term} is already a reward function",
            fix="apply each term once",
            skill="AuxRewardTerm",
        )
    b.funcs.append(_aux_func(term, b.hooks.aux_terms[term]))
    b.weights.append(float(params["weight"]))


#: how each catalog skill joins a training run: a batch skill, or a reward function and weight
_ACTIVATORS: dict[str, Callable[[_Building, dict[str, Any]], None]] = {
    "StdGroupFilter": _add_std_group_filter,
    "DualLevelFilter": _add_dual_level_filter,
    "OverlongPenalty": _add_overlong_penalty,
    "PartialPassReward": _add_partial_pass_reward,
    "AuxRewardTerm": _add_aux_reward_term,
}
