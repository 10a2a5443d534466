"""Verifiable arithmetic problems: the generator, the split rules, the prompt format, the checker.

A problem is one arithmetic *fact* (``3 + 4``) phrased by one template (``what is 3+4?``,
``what is 3 plus 4?``, ``what is the sum of 3 and 4?``), with an integer answer. Everything is
deterministic: the same :class:`SplitSpec` gives the same problems, in the same order, on every
machine and Python version (the generator is a ``random.Random`` seeded with a string, and
the judge-region test is a SHA-256).

**Splits.** The space of facts is divided once and for all by a hash of the fact (commutative
facts ``3+4`` / ``4+3`` count as one) into a *train region* and a *judge region*
(:data:`JUDGE_REGION_SHARE` of the facts). Train problems are only ever drawn from the train
region, whatever the candidate writes in ``math.toml``; validation and held-out problems only
from the judge region, held-out skipping every fact validation uses. Seeds are disjoint too:
train seeds are below :data:`HIDDEN_SEED_MIN`, the judge's are drawn at random above it when
the workspace is created. So the three splits never share a problem, in text or in fact.

**Prompt and answer.** The prompt is ``"<question>\\nanswer:"``; the expected completion is the
number (``" 7"``) followed by the end-of-sequence token. :func:`extract_answer` reads the first
integer of a completion (an optional leading ``answer``/``:`` is allowed), :func:`is_correct`
compares it with the answer, :func:`is_well_formed` says whether the completion is exactly a
number. The vocabulary (:data:`WORDS` and the characters of ``evotree.harness.tiny_lm.CHARSET``) is
covered by the tiny tokenizer, so the tiny model never sees ``<unk>``.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "HIDDEN_SEED_MAX",
    "HIDDEN_SEED_MIN",
    "JUDGE_REGION_SHARE",
    "OPS",
    "WORDS",
    "Problem",
    "SplitError",
    "SplitSpec",
    "build_splits",
    "extract_answer",
    "fact_key",
    "format_prompt",
    "generate",
    "hidden_splits",
    "in_judge_region",
    "is_correct",
    "is_well_formed",
    "problems_table",
    "space_size",
]

#: Operators, their task-id names and how they may be phrased ({a}, {b}: the operands).
OPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "+": ("add", ("what is {a}+{b}?", "what is {a} plus {b}?", "what is the sum of {a} and {b}?")),
    "-": ("sub", ("what is {a}-{b}?", "what is {a} minus {b}?")),
    "*": ("mul", ("what is {a}*{b}?", "what is {a} times {b}?")),
}
#: Whole words the prompts use (all in ``evotree.harness.tiny_lm.DEFAULT_WORDS``).
WORDS: tuple[str, ...] = (
    "what",
    "is",
    "the",
    "sum",
    "of",
    "and",
    "plus",
    "minus",
    "times",
    "answer",
)
#: Seeds from here up are reserved for the judge (validation, held-out); train seeds are below.
HIDDEN_SEED_MIN = 1_000_000
HIDDEN_SEED_MAX = 2**31 - 1
#: Share of all facts that belong to the judge region (validation and held-out problems).
JUDGE_REGION_SHARE = 0.25
_REGION_SALT = "evotree-math/region/v1"


class SplitError(ValueError):
    """A split cannot be built as specified (e.g. fewer distinct facts than problems asked for)."""


@dataclass(frozen=True)
class Problem:
    """One verifiable problem. ``task_id`` is stable: ``<op>-<a>-<b>-t<template>``."""

    task_id: str
    question: str
    answer: int
    op: str
    a: int
    b: int
    template: int

    @property
    def prompt(self) -> str:
        return format_prompt(self.question)

    @property
    def fact(self) -> tuple[str, int, int]:
        return fact_key(self.op, self.a, self.b)


@dataclass(frozen=True)
class SplitSpec:
    """How to draw one split: seed, size and difficulty."""

    seed: int
    num_problems: int
    ops: tuple[str, ...] = ("+", "-")
    min_operand: int = 0
    max_operand: int = 20
    #: share of problems phrased in words (``3 plus 4``, ``the sum of 3 and 4``) not symbols
    word_share: float = 0.3

    def __post_init__(self) -> None:
        if not self.ops or any(op not in OPS for op in self.ops):
            raise SplitError(
                f"ops: expected a non-empty list of {', '.join(OPS)}, actually: {list(self.ops)}"
            )
        if len(set(self.ops)) != len(self.ops):
            raise SplitError(f"ops: repeated operator in {list(self.ops)}")
        if not 0 <= self.min_operand <= self.max_operand <= 999:
            raise SplitError(
                f"operands: expected 0 <= min_operand <= max_operand <= 999, actually: "
                f"{self.min_operand}..{self.max_operand}"
            )
        if self.num_problems < 1:
            raise SplitError(f"num_problems: expected at least 1, actually: {self.num_problems}")
        if not 0.0 <= self.word_share <= 1.0:
            raise SplitError(
                f"word_share: expected a number in [0, 1], actually: {self.word_share}"
            )
        if not 0 <= self.seed <= HIDDEN_SEED_MAX:
            raise SplitError(
                f"seed: expected 0 <= seed <= {HIDDEN_SEED_MAX}, actually: {self.seed}"
            )


def fact_key(op: str, a: int, b: int) -> tuple[str, int, int]:
    """The fact a problem asks about; commutative operators ignore the operands' order."""
    if op in ("+", "*") and b < a:
        a, b = b, a
    return (op, a, b)


def in_judge_region(op: str, a: int, b: int) -> bool:
    """True for facts reserved to the judge (a fixed hash: the same on every machine)."""
    fop, fa, fb = fact_key(op, a, b)
    key = f"{_REGION_SALT}/{fop}/{fa}/{fb}"
    value = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2.0**64
    return value < JUDGE_REGION_SHARE


def _facts(spec: SplitSpec) -> Iterable[tuple[str, int, int]]:
    """Every distinct fact of the spec's difficulty (operands of '-' ordered so a >= b)."""
    lo, hi = spec.min_operand, spec.max_operand
    for op in spec.ops:
        for a in range(lo, hi + 1):
            for b in range(lo, hi + 1):
                if op == "-" and a < b:
                    continue
                if op in ("+", "*") and b < a:
                    continue
                yield (op, a, b)


def space_size(spec: SplitSpec, *, judge_region: bool) -> int:
    """How many distinct facts of the spec's difficulty lie in the region."""
    return sum(in_judge_region(*f) == judge_region for f in _facts(spec))


def _answer(op: str, a: int, b: int) -> int:
    return a + b if op == "+" else a - b if op == "-" else a * b


def generate(
    spec: SplitSpec, *, judge_region: bool, exclude: Iterable[tuple[str, int, int]] = ()
) -> list[Problem]:
    """``spec.num_problems`` problems with distinct facts from one region, skipping ``exclude``.

    Deterministic in ``spec`` (and ``exclude``). Raises :class:`SplitError` when the region holds
    fewer usable facts than asked for.
    """
    excluded = {fact_key(*f) for f in exclude}
    available = [
        f for f in _facts(spec) if in_judge_region(*f) == judge_region and f not in excluded
    ]
    if len(available) < spec.num_problems:
        where = "judge" if judge_region else "train"
        raise SplitError(
            f"{spec.num_problems} problems asked for, but only {len(available)} distinct facts of this "
            f"difficulty ({'/'.join(spec.ops)}, operands {spec.min_operand}..{spec.max_operand}) are in "
            f"the {where} region"
            + (f" after removing {len(excluded)} used elsewhere" if excluded else ""),
        )
    rng = random.Random(f"evotree-math/{spec.seed}")
    # Shuffle the candidates (sorted first: the order never depends on set iteration).
    available.sort()
    rng.shuffle(available)
    problems = []
    for op, a, b in available[: spec.num_problems]:
        if op in ("+", "*") and a != b and rng.random() < 0.5:
            a, b = b, a  # show commutative facts in both orders
        name, templates = OPS[op]
        template = 0
        if len(templates) > 1 and rng.random() < spec.word_share:
            template = rng.randrange(1, len(templates))
        question = templates[template].format(a=a, b=b)
        problems.append(
            Problem(
                task_id=f"{name}-{a}-{b}-t{template}",
                question=question,
                answer=_answer(op, a, b),
                op=op,
                a=a,
                b=b,
                template=template,
            )
        )
    return problems


def hidden_splits(validation: SplitSpec, heldout: SplitSpec) -> dict[str, list[Problem]]:
    """The judge's splits: validation, then held-out without any fact validation uses."""
    val = generate(validation, judge_region=True)
    held = generate(heldout, judge_region=True, exclude=(p.fact for p in val))
    return {"validation": val, "heldout": held}


def build_splits(
    train: SplitSpec, validation: SplitSpec, heldout: SplitSpec
) -> dict[str, list[Problem]]:
    """All three splits, checked disjoint by fact and by text (train from the train region).

    The judge only needs :func:`hidden_splits` (which cannot meet train, by region); this is the
    full picture, for tests and tools.
    """
    for name, spec in (("train", train), ("validation", validation), ("heldout", heldout)):
        hidden = name != "train"
        if hidden != (spec.seed >= HIDDEN_SEED_MIN):
            raise SplitError(
                f"{name} seed {spec.seed}: train seeds are below {HIDDEN_SEED_MIN}, "
                f"validation and held-out seeds at or above it"
            )
    splits = {"train": generate(train, judge_region=False), **hidden_splits(validation, heldout)}
    seen_facts: set[tuple[str, int, int]] = set()
    seen_texts: set[str] = set()
    for name, problems in splits.items():
        facts = {p.fact for p in problems}
        texts = {p.question for p in problems}
        if (
            facts & seen_facts or texts & seen_texts
        ):  # pragma: no cover - guaranteed by construction
            raise SplitError(f"the {name} split shares problems with an earlier split")
        seen_facts |= facts
        seen_texts |= texts
    return splits


# ---------------------------------------------------------------------------- prompt and checker
def format_prompt(question: str) -> str:
    """The text the model continues: the question, a newline, ``answer:``."""
    return f"{question}\nanswer:"


_ANSWER_RE = re.compile(r"^\s*(?:answer\s*:?\s*)?(-?\d+)")
_WELL_FORMED_RE = re.compile(r"^\s*(?:answer\s*:?\s*)?-?\d+\s*$")


def extract_answer(completion: str) -> int | None:
    """The integer a completion answers with: its first number (after an optional ``answer:``)."""
    match = _ANSWER_RE.match(completion)
    if match is None:
        return None
    digits = match.group(1)
    if len(digits.lstrip("-")) > 9:
        return None
    return int(digits)


def is_correct(completion: str, answer: int) -> bool:
    """The completion starts with the right number (``" 7"``, ``"7 and more"``, ``"answer: 7"``)."""
    return extract_answer(completion) == answer


def is_well_formed(completion: str) -> bool:
    """The completion is exactly a number (optionally ``answer N``), nothing else."""
    return _WELL_FORMED_RE.match(completion) is not None


def problems_table(problems: Sequence[Problem]) -> dict[str, list]:
    """Columns for a ``datasets.Dataset``: prompt, answer (str), task_id."""
    return {
        "prompt": [p.prompt for p in problems],
        "answer": [str(p.answer) for p in problems],
        "task_id": [p.task_id for p in problems],
    }
