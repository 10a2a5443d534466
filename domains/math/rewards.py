"""The math domain's two GRPO reward functions: ``correctness`` and ``format``.

Both follow TRL's reward-function protocol (``f(prompts=, completions=, completion_ids=,
**dataset_columns) -> list[float]``); the train phase wraps them with
:func:`evotree.harness.trl.record_rewards` so every scored batch is recorded as rollout groups, and
combines them with the recipe's ``[rewards]`` weights (TRL's ``reward_weights``).

* ``correctness``: 1.0 when the completion's first number is the answer (:func:`is_correct`),
  else 0.0.
* ``format``: 0.5 when the completion starts with a number, +0.25 when it is nothing but that
  number, +0.25 when it ended with the end-of-sequence token rather than being cut off at
  ``max_completion_length`` (so ``" 7"`` + eos scores 1.0). The parts are independent, which
  gives a freshly initialised model a gradient towards short numeric answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from evotree.domains.math.data import extract_answer, is_correct, is_well_formed
from evotree.skills.runtime import SkillHooks

__all__ = [
    "answer_checks",
    "correctness_score",
    "format_score",
    "make_reward_functions",
    "skill_hooks",
]


def correctness_score(completion: str, answer: int) -> float:
    return 1.0 if is_correct(completion, answer) else 0.0


def format_score(completion: str, ended: bool) -> float:
    return (
        0.5 * (extract_answer(completion) is not None)
        + 0.25 * is_well_formed(completion)
        + 0.25 * bool(ended)
    )


def make_reward_functions(stop_token_ids: Iterable[int]) -> list[Callable[..., list[float]]]:
    """``[correctness, format]`` for TRL; ``stop_token_ids``: the ids that end a completion
    (the tokenizer's eos and pad ids: TRL keeps the token that ended a completion in
    ``completion_ids``)."""
    stops = frozenset(int(i) for i in stop_token_ids)

    def correctness(
        prompts: Sequence[Any], completions: Sequence[Any], answer: Sequence[str], **kwargs: Any
    ) -> list[float]:
        return [
            correctness_score(_text(c), int(a)) for c, a in zip(completions, answer, strict=True)
        ]

    def format_(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]] | None = None,
        **kwargs: Any,
    ) -> list[float]:
        ids = completion_ids if completion_ids is not None else [[]] * len(completions)
        return [
            format_score(_text(c), bool(i) and int(i[-1]) in stops)
            for c, i in zip(completions, ids, strict=True)
        ]

    format_.__name__ = format_.__qualname__ = "format"
    return [correctness, format_]


def answer_checks(completion: str, answer: int) -> list[bool]:
    """The checks PartialPassReward counts: the answer has the right number of digits, and each
    digit of the expected answer is right in its place (units first). All pass exactly when
    the answer is correct; no number at all passes none."""
    expected = str(answer)
    got = extract_answer(completion)
    if got is None:
        return [False] * (len(expected) + 1)
    digits = str(got)
    return [len(digits) == len(expected)] + [
        i < len(digits) and digits[-1 - i] == expected[-1 - i] for i in range(len(expected))
    ]


def skill_hooks(stop_token_ids: Iterable[int], max_completion_length: int) -> Any:
    """What the math domain offers skills (``evotree.skills.runtime.SkillHooks``): per-digit checks
    for PartialPassReward (replacing ``correctness``), the auxiliary terms
    ``instruction_following`` (exactly a number, ended by the end token) and ``brevity``
    (1 - tokens / max_completion_length), and the output-format check (the completion starts
    with a number) for DualLevelFilter."""

    stops = frozenset(int(i) for i in stop_token_ids)
    limit = max(1, int(max_completion_length))

    def checks(
        prompts: Sequence[Any], completions: Sequence[Any], answer: Sequence[str], **kwargs: Any
    ) -> list[list[bool]]:
        return [answer_checks(_text(c), int(a)) for c, a in zip(completions, answer, strict=True)]

    def instruction_following(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]],
        **kwargs: Any,
    ) -> list[float]:
        return [
            1.0 if is_well_formed(_text(c)) and bool(i) and int(i[-1]) in stops else 0.0
            for c, i in zip(completions, completion_ids, strict=True)
        ]

    def brevity(
        prompts: Sequence[Any],
        completions: Sequence[Any],
        completion_ids: Sequence[Sequence[int]],
        **kwargs: Any,
    ) -> list[float]:
        return [max(0.0, 1.0 - len(i) / limit) for i in completion_ids]

    return SkillHooks(
        domain="math",
        checks=checks,
        all_or_nothing="correctness",
        aux_terms={"instruction_following": instruction_following, "brevity": brevity},
        format_ok=lambda text: extract_answer(text) is not None,
    )


def _text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion and isinstance(completion[-1], dict):
        return str(completion[-1].get("content", ""))  # conversational: the assistant message
    return str(completion)
