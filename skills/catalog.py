"""The built-in skills' metadata: EvoTrainer's format (trigger, intervention, expected outcome,
validation, domain applicability), typed parameters with defaults, and provenance.

Metadata only: this module imports nothing heavy, so ``evotree skill list`` and the memory /
suggest code can read it cheaply. The code that changes training is in :mod:`evotree.skills.runtime`
(the skills' computations) and :mod:`evotree.harness.trl` (the one seam into TRL's ``GRPOTrainer``).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import asdict, dataclass, field
from typing import Any

from evotree.skills.errors import InvalidSkillParam, UnknownSkill

__all__ = [
    "DOMAIN_CHOICES",
    "PARAM_TYPES",
    "ParamSpec",
    "SkillInfo",
    "get_skill",
    "list_skills",
    "parse_params",
]

#: The types a skill parameter may have (as written in ``skills.toml`` and ``--param k=v``).
PARAM_TYPES = ("float", "int", "bool", "str")
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


@dataclass(frozen=True)
class ParamSpec:
    """One typed parameter of a skill: its default, what it means, and the values it accepts.

    ``range`` is ``[low, high]`` for numbers (``None`` on a side means unbounded, both ends
    inclusive); ``choices`` lists the accepted strings of a ``str`` parameter.
    """

    name: str
    type: str
    default: Any
    help: str
    range: tuple[float | None, float | None] | None = None
    choices: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["range"] = list(self.range) if self.range is not None else None
        out["choices"] = list(self.choices) if self.choices is not None else None
        return out

    def convert(self, value: Any, *, skill: str) -> Any:
        """``value`` (a ``--param`` string or a TOML value) as this parameter's type, checked."""
        where = f"{skill}.{self.name}"
        expected = (
            f"{self.type}"
            + (f" in {_range_text(self.range)}" if self.range else "")
            + (f" (one of {', '.join(self.choices)})" if self.choices else "")
        )

        def bad(why: str) -> InvalidSkillParam:
            return InvalidSkillParam(
                f"{where}: {why}; expected {expected}, actually: {value!r}",
                fix=f"`evotree skill show {skill}` lists its parameters; e.g. --param "
                f"{self.name}={_format(self.default)}",
                skill=skill,
                param=self.name,
            )

        converted: Any
        if self.type == "bool":
            if isinstance(value, bool):
                converted = value
            elif isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
                converted = value.strip().lower() in _TRUE
            else:
                raise bad("not a boolean (true/false)")
        elif self.type == "int":
            if isinstance(value, (bool, float)):
                raise bad("not an integer")
            try:
                converted = int(value.strip()) if isinstance(value, str) else int(value)
            except (TypeError, ValueError):
                raise bad("not an integer") from None
        elif self.type == "float":
            if isinstance(value, bool):
                raise bad("not a number")
            try:
                converted = float(value.strip()) if isinstance(value, str) else float(value)
            except (TypeError, ValueError):
                raise bad("not a number") from None
            if not math.isfinite(converted):
                raise bad("not a finite number")
        else:
            if not isinstance(value, str):
                raise bad("not a string")
            converted = value.strip()
            if self.choices is not None and converted not in self.choices:
                raise bad("not an accepted value")
        if self.range is not None:
            low, high = self.range
            if (low is not None and converted < low) or (high is not None and converted > high):
                raise bad("out of range")
        return converted


@dataclass(frozen=True)
class SkillInfo:
    """A skill as EvoTrainer describes one, plus what evotree needs to apply and suggest it.

    ``domains``: the workspace domains it applies to; ``addresses``: the finding codes
    (``diagnostics``) it is an answer to; ``kind``: ``batch`` (changes which samples and
    groups the policy loss sees) or ``reward`` (changes the reward of each sample).
    """

    name: str
    title: str
    trigger: str
    intervention: str
    expected_outcome: str
    validation: str
    domains: list[str]
    addresses: list[str]
    params: list[ParamSpec]
    provenance: str
    kind: str
    not_applicable: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["params"] = [p.to_dict() for p in self.params]
        return out

    def param(self, name: str) -> ParamSpec:
        """The parameter ``name``; :class:`InvalidSkillParam` with a suggestion if unknown."""
        for spec in self.params:
            if spec.name == name:
                return spec
        names = [p.name for p in self.params]
        close = difflib.get_close_matches(name, names, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise InvalidSkillParam(
            f"{self.name} has no parameter {name!r}{hint}; its parameters: "
            f"{', '.join(names) or '(none)'}",
            fix=f"`evotree skill show {self.name}` lists its parameters",
            skill=self.name,
            param=name,
        )

    def defaults(self) -> dict[str, Any]:
        """Every parameter at its default."""
        return {p.name: p.default for p in self.params}

    def why_not(self, domain: str) -> str | None:
        """Why the skill does not apply to ``domain``, or None when it does."""
        if domain in self.domains:
            return None
        return self.not_applicable.get(domain) or (
            f"{self.name} applies to the domains {', '.join(self.domains)}, not {domain!r}"
        )


def _range_text(r: tuple[float | None, float | None]) -> str:
    low = "-inf" if r[0] is None else _format(r[0])
    high = "inf" if r[1] is None else _format(r[1])
    return f"[{low}, {high}]"


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_NOT_GYM_GRPO = (
    "{name} changes GRPO groups and TRL's policy loss; the gym domain evolves "
    "policy code against a judge (no GRPO groups, no TRL trainer), so it does not apply"
)
_GRPO_DOMAINS = ["math", "custom"]


def _gym(name: str) -> dict[str, str]:
    return {"gym": _NOT_GYM_GRPO.format(name=name)}


_BUILTIN: tuple[SkillInfo, ...] = (
    SkillInfo(
        name="StdGroupFilter",
        title="Drop GRPO groups whose rewards do not vary",
        trigger="Many groups have (near-)zero reward std below the solved reward: every sample "
        "of a prompt scores alike (all wrong, or stuck at one partial reward), so the "
        "group's advantages are zero and it only dilutes the batch "
        "(signal.dead_groups_high). Groups every sample solves "
        "(signal.dead_groups_solved, signal.all_solved_high) are learnt prompts: the "
        "answer there is harder prompts, not this filter.",
        intervention="DAPO's dynamic sampling. Groups whose reward std is at most min_std get "
        "zero weight in the policy loss: their completion tokens are masked out of "
        "the loss (and its token count) and their advantages set to 0. Then, up to "
        "max_resample_batches extra generation batches per step, fresh prompts of "
        "the training set (not in the step's batch) are sampled in the dropped "
        "groups' number, and groups that vary take the dropped groups' places "
        '(refill = "same" samples the dropped prompts again instead). The extra '
        "generation is the cost: kept, dropped, refilled, resample_batches and "
        "generated_groups are recorded as signals skill/StdGroupFilter/*.",
        expected_outcome="The groups the policy trains on all carry signal: a lower dead-group "
        "ratio among trained groups and more useful gradient per step. "
        "EvoTrainer found it on SWE; reused, it brought +1.17 on Coding and "
        "+0.96 on Math.",
        validation="skill/StdGroupFilter/dropped at a step equals the recorded rollout groups of "
        "that step whose reward std is <= min_std; then `evotree compare` against "
        "the parent across seeds (paired bootstrap): verified when validation "
        "improves.",
        domains=_GRPO_DOMAINS,
        addresses=[
            "signal.dead_groups_high",
            "signal.reward_plateau",
            "signal.echo_trap",
            "behavior.template_collapse",
        ],
        params=[
            ParamSpec(
                "min_std",
                "float",
                0.0,
                "a group is dropped when its reward std (unbiased, over its scored "
                "samples) is at most this; 0 drops exactly the zero-std groups",
                range=(0.0, None),
            ),
            ParamSpec(
                "max_resample_batches",
                "int",
                2,
                "extra generation batches per step to refill dropped groups (0: no "
                "refill, the batch just trains on fewer groups)",
                range=(0, 8),
            ),
            ParamSpec(
                "refill",
                "str",
                "fresh",
                "where refill groups come from: fresh prompts of the training set "
                "(DAPO) or the same prompts sampled again",
                choices=("fresh", "same"),
            ),
        ],
        provenance="EvoTrainer (seed 001): found on SWE, reused on Coding (+1.17) and Math "
        "(+0.96); dynamic sampling from DAPO (Yu et al., arXiv:2503.14476)",
        kind="batch",
        not_applicable=_gym("StdGroupFilter"),
    ),
    SkillInfo(
        name="DualLevelFilter",
        title="Group-level std filter plus sample-level masking of broken samples",
        trigger="Many rollouts are truncated at the length limit or fail the output format, and "
        "many groups have zero reward std (behavior.format_failure_high, "
        "behavior.truncation_rate_high, signal.dead_groups_high).",
        intervention="Group level: as StdGroupFilter (groups with reward std <= min_std get zero "
        "weight). Sample level: a truncated sample (its last token is not an end "
        "token) and, where the domain can tell, a sample that fails the output "
        "format are masked out of the policy loss, so the policy is not pushed "
        "either way by output the verifier could not judge. The other samples of "
        "the group keep their advantages. Counts are recorded as signals "
        "skill/DualLevelFilter/*.",
        expected_outcome="Fewer truncated and malformed rollouts stop shaping the policy by "
        "noise; a cleaner gradient than the group filter alone.",
        validation="skill/DualLevelFilter/masked_samples equals the recorded rollouts of the step "
        "that are truncated or fail the format, outside dropped groups; then "
        "`evotree compare` against the parent across seeds.",
        domains=_GRPO_DOMAINS,
        addresses=[
            "behavior.format_failure_high",
            "behavior.truncation_rate_high",
            "signal.truncation_rising",
            "signal.dead_groups_high",
        ],
        params=[
            ParamSpec(
                "min_std",
                "float",
                0.0,
                "group level: drop groups whose reward std is at most this",
                range=(0.0, None),
            ),
            ParamSpec(
                "mask_truncated",
                "bool",
                True,
                "sample level: mask samples cut off at max_completion_length",
            ),
            ParamSpec(
                "mask_format_failed",
                "bool",
                True,
                "sample level: mask samples that fail the domain's output format "
                "(needs the domain's format check)",
            ),
        ],
        provenance="EvoTrainer (seed 001) dual-level filtering; sample masking as TRL's "
        "mask_truncated_completions and DAPO's overlong filtering (arXiv:2503.14476)",
        kind="batch",
        not_applicable=_gym("DualLevelFilter"),
    ),
    SkillInfo(
        name="OverlongPenalty",
        title="DAPO's soft overlong punishment",
        trigger="Rollouts run into the length limit, or get longer over training "
        "(behavior.truncation_rate_high, signal.truncation_rising, behavior.length_shift, "
        "behavior.repetition_high).",
        intervention="An extra reward term (component overlong_penalty): 0 for a completion of at "
        "most max_length - cache_length tokens, falling linearly to -1 at "
        "max_length, and -1 beyond it; multiplied by weight and added to the "
        "sample's reward.",
        expected_outcome="Shorter completions that end before the limit; fewer truncated "
        "rollouts and less reward noise from cut-off answers.",
        validation="The recorded overlong_penalty component equals the formula on each "
        "rollout's length; truncation rate falls against the parent at equal steps.",
        domains=_GRPO_DOMAINS,
        addresses=[
            "behavior.truncation_rate_high",
            "signal.truncation_rising",
            "behavior.length_shift",
            "behavior.repetition_high",
        ],
        params=[
            ParamSpec(
                "max_length",
                "int",
                0,
                "L_max in tokens; 0: the trainer's max_completion_length",
                range=(0, None),
            ),
            ParamSpec(
                "cache_length",
                "int",
                0,
                "L_cache, the soft zone before L_max; 0: a fifth of L_max (at least 1)",
                range=(0, None),
            ),
            ParamSpec(
                "weight",
                "float",
                1.0,
                "weight of the penalty term in the reward",
                range=(0.0, 100.0),
            ),
        ],
        provenance="DAPO (Yu et al., arXiv:2503.14476), soft overlong punishment",
        kind="reward",
        not_applicable=_gym("OverlongPenalty"),
    ),
    SkillInfo(
        name="PartialPassReward",
        title="Reward the fraction of checks passed, not all-or-nothing",
        trigger="Most groups are solved by no sample: an all-or-nothing reward gives them zero "
        "std and no gradient (signal.none_solved_high, signal.dead_groups_high).",
        intervention="The domain's all-or-nothing reward (math: correctness) is replaced by the "
        "fraction of its checks a completion passes (math: the answer has the right "
        "number of digits, and each digit is right in its place), under the same "
        "name and weight; a fraction below min_fraction scores 0. A fully correct "
        "completion still scores 1.",
        expected_outcome="Groups that were all-zero now vary, so they carry gradient towards "
        "more correct answers; fewer dead groups early in training.",
        validation="The recorded component equals the fraction of checks passed; the dead-group "
        "ratio falls against the parent; `evotree compare` on validation (scored "
        "by the judge's exact check, unchanged).",
        domains=_GRPO_DOMAINS,
        addresses=["signal.none_solved_high", "signal.dead_groups_high"],
        params=[
            ParamSpec(
                "min_fraction",
                "float",
                0.0,
                "a completion passing fewer than this fraction of checks scores 0",
                range=(0.0, 1.0),
            ),
        ],
        provenance="EvoTrainer (seed 001), partial-pass reward on test suites (SWE, Coding)",
        kind="reward",
        not_applicable=_gym("PartialPassReward"),
    ),
    SkillInfo(
        name="AuxRewardTerm",
        title="A weighted extra reward term",
        trigger="The main reward is too sparse, or a wanted behaviour is not rewarded "
        "(signal.none_solved_high, behavior.tool_failure_high).",
        intervention="Adds one of the domain's auxiliary reward functions (math: "
        "instruction_following, 1 when the completion is exactly a number that "
        "ends with the end token; brevity, 1 - length / max_completion_length) as "
        "a new reward component aux_<term> with the given weight, e.g. 0.1 x "
        "instruction following.",
        expected_outcome="The behaviour the term rewards improves without swamping the main "
        "reward; sparse groups gain some variance.",
        validation="The recorded aux_<term> component equals the term on each rollout; the "
        "main reward does not fall against the parent.",
        domains=_GRPO_DOMAINS,
        addresses=["signal.none_solved_high", "behavior.tool_failure_high"],
        params=[
            ParamSpec(
                "term",
                "str",
                "instruction_following",
                "which auxiliary reward the domain offers (math: instruction_following, "
                "brevity; custom: whatever the training script passes)",
            ),
            ParamSpec(
                "weight", "float", 0.1, "weight of the term in the reward", range=(-10.0, 10.0)
            ),
        ],
        provenance="EvoTrainer (seed 001), auxiliary reward terms (e.g. 0.1 x instruction "
        "following)",
        kind="reward",
        not_applicable=_gym("AuxRewardTerm"),
    ),
)
_BY_NAME = {s.name: s for s in _BUILTIN}

#: (skill, parameter, domain) -> the values that domain offers, checked when a skill is applied
#: (a ``custom`` training script supplies its own, so nothing is checked there).
DOMAIN_CHOICES: dict[tuple[str, str, str], tuple[str, ...]] = {
    ("AuxRewardTerm", "term", "math"): ("instruction_following", "brevity"),
}


def list_skills() -> list[SkillInfo]:
    """Every built-in skill, in a stable order."""
    return list(_BUILTIN)


def get_skill(name: str) -> SkillInfo:
    """The skill called ``name``; :class:`UnknownSkill` (exit 25) with a did-you-mean."""
    found = _BY_NAME.get(name)
    if found is not None:
        return found
    by_lower = {n.lower(): n for n in _BY_NAME}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=2, cutoff=0.5)
    hint = f"; did you mean {' or '.join(by_lower[c] for c in close)}?" if close else ""
    raise UnknownSkill(
        f"unknown skill {name!r}{hint}",
        fix=f"`evotree skill list` lists the skills: {', '.join(_BY_NAME)}",
        skill=name,
    )


def parse_params(info: SkillInfo, given: dict[str, Any]) -> dict[str, Any]:
    """Every parameter of ``info``: the ``given`` ones converted and checked, the rest default.

    ``given`` maps names to ``--param`` strings or already-typed TOML values; an unknown name,
    a wrong type or a value out of range raises :class:`InvalidSkillParam` (exit 25).
    """
    resolved = info.defaults()
    for key, value in given.items():
        spec = info.param(key)
        resolved[key] = spec.convert(value, skill=info.name)
    return resolved
