"""The math domain's three files, parsed and checked: ``recipe.toml``, ``math.toml``, ``judge/math.toml``.

Every problem is reported with the file and the key (and a suggestion for a misspelt key);
all problems of a file are reported at once. ``recipe.toml`` and ``math.toml`` belong to the
candidate (an invalid one makes the run an *invalid submission*: exit 65, charged nothing);
``judge/math.toml`` is the champion's and hidden.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.domains.math.data import HIDDEN_SEED_MAX, HIDDEN_SEED_MIN, OPS, SplitError, SplitSpec
from evotree.harness.seeding import derive_seed

__all__ = [
    "MANAGED_TRL_KEYS",
    "RECIPE_KEYS",
    "JudgeSettings",
    "Recipe",
    "SettingsError",
    "WarmupSettings",
    "load_judge_settings",
    "load_recipe",
    "load_train_split",
    "parse_judge_settings",
    "parse_recipe",
    "parse_train_split",
    "training_seed",
]

TINY = "tiny"
LOSS_TYPES = ("grpo", "dr_grpo", "bnpo", "dapo", "cispo", "sapo", "luspo", "vespo")
SCALE_REWARDS = ("group", "batch", "none")


class SettingsError(ValueError):
    """A settings file that cannot be used; the message names the file and every bad key."""


# ---------------------------------------------------------------------------- a small schema
@dataclass(frozen=True)
class _Key:
    name: str
    kind: str  # int, float, bool, str, list[str]
    default: Any
    check: Callable[[Any], str | None] | None = None


def _at_least(low: float, *, strict: bool = False) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        ok = value > low if strict else value >= low
        return None if ok else f"expected a number {'>' if strict else '>='} {low}"

    return check


def _between(low: float, high: float) -> Callable[[Any], str | None]:
    return lambda v: None if low <= v <= high else f"expected a number in [{low}, {high}]"


def _one_of(options: tuple[str, ...]) -> Callable[[Any], str | None]:
    return lambda v: None if v in options else f"expected one of {', '.join(options)}"


def _kind_ok(kind: str, value: Any) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind == "list[str]":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    raise AssertionError(kind)  # pragma: no cover


def _type_name(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)


def _parse_table(
    data: Mapping[str, Any],
    keys: tuple[_Key, ...],
    where: str,
    problems: list[str],
    *,
    tables: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Values of ``keys`` from ``data`` (defaults filled in); problems appended, not raised."""
    known = {k.name: k for k in keys}
    out = {k.name: k.default for k in keys}
    for name, value in data.items():
        if name in tables:
            continue
        key = known.get(name)
        if key is None:
            close = difflib.get_close_matches(name, [*known, *tables], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"{where}{name}: unknown key{hint}")
            continue
        if not _kind_ok(key.kind, value):
            want = {
                "int": "an integer",
                "float": "a number",
                "bool": "true or false",
                "str": "a string",
                "list[str]": "a list of strings",
            }[key.kind]
            problems.append(
                f"{where}{name}: expected {want}, actually {_type_name(value)}: {value!r}"
            )
            continue
        if key.kind == "float":
            value = float(value)
        reason = key.check(value) if key.check else None
        if reason:
            problems.append(f"{where}{name}: {reason}, actually: {value!r}")
            continue
        out[name] = value
    return out


def _read_toml(path: Path, what: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SettingsError(f"{path.name}: the {what} is missing ({path})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(f"{path.name}: cannot read the {what}: {exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{path.name}: not valid TOML: {exc}") from None


def _raise(source: str, problems: list[str]) -> None:
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise SettingsError(
            f"{source}: {len(problems)} problem{'s' * (len(problems) > 1)}:\n{lines}"
        )


# ---------------------------------------------------------------------------- recipe.toml
RECIPE_KEYS: tuple[_Key, ...] = (
    _Key(
        "model",
        "str",
        TINY,
        lambda v: None if v.strip() else 'expected "tiny" or a model path/name',
    ),
    _Key("seed", "int", 0, _at_least(0)),
    _Key("learning_rate", "float", 5e-4, _at_least(0, strict=True)),
    _Key("max_steps", "int", 200, _at_least(1)),
    _Key("num_generations", "int", 8, _at_least(2)),
    _Key("per_device_train_batch_size", "int", 64, _at_least(1)),
    _Key("gradient_accumulation_steps", "int", 1, _at_least(1)),
    _Key("max_completion_length", "int", 5, _at_least(1)),
    _Key("temperature", "float", 1.0, _at_least(0, strict=True)),
    _Key("top_p", "float", 1.0, lambda v: None if 0 < v <= 1 else "expected a number in (0, 1]"),
    _Key("beta", "float", 0.0, _at_least(0)),
    _Key("epsilon", "float", 0.2, _at_least(0, strict=True)),
    _Key("num_iterations", "int", 1, _at_least(1)),
    _Key("loss_type", "str", "dapo", _one_of(LOSS_TYPES)),
    _Key("scale_rewards", "str", "group", _one_of(SCALE_REWARDS)),
    _Key(
        "lr_scheduler_type",
        "str",
        "linear",
        _one_of(
            (
                "linear",
                "constant",
                "cosine",
                "constant_with_warmup",
                "cosine_with_restarts",
                "polynomial",
            )
        ),
    ),
    _Key("warmup_steps", "int", 0, _at_least(0)),
    _Key("weight_decay", "float", 0.0, _at_least(0)),
    _Key("max_grad_norm", "float", 1.0, _at_least(0)),
    _Key("lora", "bool", False),
    _Key("lora_r", "int", 8, _at_least(1)),
    _Key("lora_alpha", "int", 16, _at_least(1)),
    _Key("lora_dropout", "float", 0.0, _between(0.0, 1.0)),
    _Key(
        "lora_target_modules",
        "list[str]",
        ["q_proj", "v_proj"],
        lambda v: (
            None if v and all(m.strip() for m in v) else "expected a non-empty list of module names"
        ),
    ),
    _Key("use_vllm", "bool", False),
    _Key("cpu_threads", "int", 0, _between(0, 1024)),
)
REWARD_KEYS: tuple[_Key, ...] = (
    _Key("correctness", "float", 1.0),
    _Key("format", "float", 0.5),
)


@dataclass(frozen=True)
class WarmupSettings:
    """The ``[warmup]`` table of ``recipe.toml`` (the tiny model only; :mod:`evotree.domains.math.warmup`)."""

    enabled: bool = True
    seed: int = 0
    learning_rate: float = 3e-3
    batch_size: int = 64
    #: stop when the greedy accuracy on the warm-up problems reaches this ...
    target_accuracy: float = 0.6
    #: ... measured every this many steps ...
    eval_every: int = 50
    #: ... or at this many steps at the latest
    max_steps: int = 3000
    weight_decay: float = 0.0


#: the ``[warmup]`` table (the tiny model only)
WARMUP_KEYS: tuple[_Key, ...] = (
    _Key("enabled", "bool", WarmupSettings.enabled),
    _Key("seed", "int", WarmupSettings.seed, _at_least(0)),
    _Key("learning_rate", "float", WarmupSettings.learning_rate, _at_least(0, strict=True)),
    _Key("batch_size", "int", WarmupSettings.batch_size, _between(1, 100_000)),
    _Key("target_accuracy", "float", WarmupSettings.target_accuracy, _between(0.0, 1.0)),
    _Key("eval_every", "int", WarmupSettings.eval_every, _between(1, 1_000_000)),
    _Key("max_steps", "int", WarmupSettings.max_steps, _between(0, 1_000_000)),
    _Key("weight_decay", "float", WarmupSettings.weight_decay, _at_least(0)),
)
TINY_KEYS: tuple[_Key, ...] = (
    _Key("hidden_size", "int", 64, _between(8, 4096)),
    _Key("num_layers", "int", 2, _between(1, 48)),
    _Key("num_heads", "int", 4, _between(1, 64)),
    _Key("num_kv_heads", "int", 2, _between(1, 64)),
    _Key("intermediate_size", "int", 256, _between(8, 16384)),
)
#: GRPOConfig fields the domain sets itself: a ``[trl]`` table may not override them.
MANAGED_TRL_KEYS = frozenset(
    {
        "output_dir",
        "use_cpu",
        "logging_steps",
        "logging_strategy",
        "save_strategy",
        "reward_weights",
        "push_to_hub",
        "hub_model_id",
        "hub_token",
        "disable_tqdm",
        "eval_strategy",
        "do_eval",
        "logging_dir",
        "run_name",
        "resume_from_checkpoint",
        "deepspeed",
        "fsdp",
        "log_completions_hub_repo",
        "data_seed",
    }
)


def training_seed(recipe_seed: int, run_seed: int) -> int:
    """The seed a run trains with, from the recipe's ``seed`` and the run's seed (``EVOTREE_SEED``).

    A hash of both (:func:`evotree.harness.seeding.derive_seed`, in ``[0, 2**31)``): two seeds of
    one version train differently (model initialisation of the tiny model, data order, rollout
    sampling, dropout), two versions with the same recipe seed at the same run seed draw the same
    random numbers (common random numbers), and the recipe's seed still picks another stream.
    """

    return derive_seed("math/train", int(recipe_seed), int(run_seed))


@dataclass
class Recipe:
    """``recipe.toml``: the GRPO knobs of a version."""

    model: str = TINY
    seed: int = 0
    learning_rate: float = 5e-4
    max_steps: int = 200
    num_generations: int = 8
    per_device_train_batch_size: int = 64
    gradient_accumulation_steps: int = 1
    max_completion_length: int = 5
    temperature: float = 1.0
    top_p: float = 1.0
    beta: float = 0.0
    epsilon: float = 0.2
    num_iterations: int = 1
    loss_type: str = "dapo"
    scale_rewards: str = "group"
    lr_scheduler_type: str = "linear"
    warmup_steps: int = 0
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    lora: bool = False
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.0
    lora_target_modules: list[str] = field(default_factory=lambda: ["q_proj", "v_proj"])
    use_vllm: bool = False
    #: torch threads on CPU; 0: one for small models (< 20M parameters), torch's default otherwise
    cpu_threads: int = 0
    #: reward function name -> weight (correctness, format)
    rewards: dict[str, float] = field(default_factory=lambda: {"correctness": 1.0, "format": 0.5})
    #: the tiny model's shape (``model = "tiny"`` only)
    tiny: dict[str, int] = field(default_factory=lambda: {k.name: k.default for k in TINY_KEYS})
    #: other GRPOConfig fields, passed through as given
    trl: dict[str, Any] = field(default_factory=dict)
    #: the tiny model's supervised warm-up (``model = "tiny"`` only; :mod:`evotree.domains.math.warmup`)
    warmup: WarmupSettings = field(default_factory=WarmupSettings)

    @property
    def is_tiny(self) -> bool:
        return self.model == TINY

    @property
    def reward_weights(self) -> list[float]:
        return [self.rewards["correctness"], self.rewards["format"]]


def parse_recipe(data: Mapping[str, Any], *, source: str = "recipe.toml") -> Recipe:
    problems: list[str] = []
    tables = ("rewards", "tiny", "trl", "warmup")
    values = _parse_table(data, RECIPE_KEYS, "", problems, tables=tables)
    sub: dict[str, dict[str, Any]] = {}
    for table, keys in (("rewards", REWARD_KEYS), ("tiny", TINY_KEYS), ("warmup", WARMUP_KEYS)):
        raw = data.get(table, {})
        if not isinstance(raw, dict):
            problems.append(f"{table}: expected a table [{table}], actually {_type_name(raw)}")
            raw = {}
        sub[table] = _parse_table(raw, keys, f"{table}.", problems)
    trl = data.get("trl", {})
    if not isinstance(trl, dict):
        problems.append(f"trl: expected a table [trl], actually {_type_name(trl)}")
        trl = {}
    else:
        trl = dict(trl)
        problems.extend(_check_trl_table(trl))
    if not problems:
        g = values["num_generations"]
        if values["per_device_train_batch_size"] % g:
            problems.append(
                f"per_device_train_batch_size: the completions per step ({values['per_device_train_batch_size']}) "
                f"must be a multiple of num_generations ({g})"
            )
        weights = sub["rewards"]
        if all(w == 0 for w in weights.values()):
            problems.append("rewards: every reward weight is 0: nothing would be learned")
        tiny = sub["tiny"]
        if tiny["hidden_size"] % tiny["num_heads"] or tiny["num_heads"] % tiny["num_kv_heads"]:
            problems.append(
                f"tiny: hidden_size ({tiny['hidden_size']}) must be divisible by num_heads "
                f"({tiny['num_heads']}), and num_heads by num_kv_heads ({tiny['num_kv_heads']})"
            )
    _raise(source, problems)
    return Recipe(
        **values,
        rewards=sub["rewards"],
        tiny=sub["tiny"],
        trl=trl,
        warmup=WarmupSettings(**sub["warmup"]),
    )


#: ``[trl] report_to`` integrations a run may use: local files only (TensorBoard writes under the
#: run's ``output/tensorboard/``); the domain's own default is ``"none"``.
REPORT_TO = ("tensorboard", "none")


def _check_report_to(value: Any) -> list[str]:
    """``[trl] report_to``: ``"tensorboard"``, ``"none"`` or a list of them (network loggers refused)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        return [
            f"trl.report_to: expected a string or a list of strings, actually {_type_name(value)}"
        ]
    bad = [v for v in items if v not in REPORT_TO]
    if bad:
        return [
            f"trl.report_to: {', '.join(map(repr, bad))} not allowed: a run reports only to local files "
            f"({' or '.join(map(repr, REPORT_TO))}); export to MLflow or W&B afterwards with `evotree export`"
        ]
    return []


def _check_trl_table(trl: dict[str, Any]) -> list[str]:
    """Names in ``[trl]`` must be GRPOConfig fields the domain does not set itself."""
    if not trl:
        return []
    if "report_to" in trl:
        problems = _check_report_to(trl["report_to"])
        if problems:
            return problems
    import dataclasses

    try:
        from trl import GRPOConfig
    except ImportError:  # checked again (with the install hint) when training starts
        return []
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    recipe = {k.name for k in RECIPE_KEYS}
    problems = []
    for name in trl:
        if name in MANAGED_TRL_KEYS:
            problems.append(f"trl.{name}: set by the math domain itself; it cannot be overridden")
        elif name in recipe:
            problems.append(
                f"trl.{name}: is a recipe key; set it at the top of recipe.toml instead"
            )
        elif name not in fields:
            close = difflib.get_close_matches(name, sorted(fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            problems.append(f"trl.{name}: not a field of trl.GRPOConfig{hint}")
    return problems


def load_recipe(path: Path) -> Recipe:
    return parse_recipe(_read_toml(Path(path), "recipe"), source=Path(path).name)


# ---------------------------------------------------------------------------- split specs
def _split_keys(
    seed_check: Callable[[Any], str | None], num: int, seed: int | None
) -> tuple[_Key, ...]:
    return (
        _Key("seed", "int", seed, seed_check),
        _Key("num_problems", "int", num, _between(1, 100_000)),
        _Key(
            "ops",
            "list[str]",
            ["+", "-"],
            lambda v: (
                None
                if v and all(o in OPS for o in v) and len(set(v)) == len(v)
                else f"expected a non-empty list of distinct operators among {', '.join(OPS)}"
            ),
        ),
        _Key("min_operand", "int", 0, _between(0, 999)),
        _Key("max_operand", "int", 20, _between(0, 999)),
        _Key("word_share", "float", 0.3, _between(0.0, 1.0)),
    )


def _train_seed(v: int) -> str | None:
    return (
        None
        if 0 <= v < HIDDEN_SEED_MIN
        else (
            f"expected 0 <= seed < {HIDDEN_SEED_MIN:_} (seeds from {HIDDEN_SEED_MIN:_} up are the judge's)"
        )
    )


def _hidden_seed(v: int) -> str | None:
    return (
        None
        if HIDDEN_SEED_MIN <= v <= HIDDEN_SEED_MAX
        else (
            f"expected {HIDDEN_SEED_MIN:_} <= seed <= {HIDDEN_SEED_MAX:_} (below are train seeds)"
        )
    )


def _spec(
    values: dict[str, Any], raw: Mapping[str, Any], where: str, problems: list[str]
) -> SplitSpec | None:
    if values["seed"] is None:
        if "seed" not in raw:  # a bad one is reported already
            problems.append(f"{where}seed: missing")
        return None
    try:
        return SplitSpec(
            seed=values["seed"],
            num_problems=values["num_problems"],
            ops=tuple(values["ops"]),
            min_operand=values["min_operand"],
            max_operand=values["max_operand"],
            word_share=values["word_share"],
        )
    except SplitError as exc:
        problems.append(f"{where}{exc}")
        return None


def parse_train_split(data: Mapping[str, Any], *, source: str = "math.toml") -> SplitSpec:
    """The ``[train]`` table of ``math.toml``."""
    problems: list[str] = []
    extra = [k for k in data if k != "train"]
    for name in extra:
        problems.append(f"{name}: unknown table or key (math.toml has one table, [train])")
    raw = data.get("train")
    if not isinstance(raw, dict):
        problems.append("train: the [train] table is missing")
        _raise(source, problems)
    values = _parse_table(raw, _split_keys(_train_seed, 256, 0), "train.", problems)
    spec = _spec(values, raw, "train.", problems) if not problems else None
    _raise(source, problems)
    assert spec is not None
    return spec


def load_train_split(path: Path) -> SplitSpec:
    return parse_train_split(
        _read_toml(Path(path), "train split definition"), source=Path(path).name
    )


# ---------------------------------------------------------------------------- judge/math.toml
JUDGE_KEYS: tuple[_Key, ...] = (
    _Key("samples", "int", 8, _between(1, 1024)),
    _Key("temperature", "float", 0.6, _at_least(0)),
    _Key("top_p", "float", 0.95, lambda v: None if 0 < v <= 1 else "expected a number in (0, 1]"),
    _Key("max_new_tokens", "int", 6, _between(1, 4096)),
    _Key("seed", "int", 0, _at_least(0)),
    _Key("batch_size", "int", 64, _between(1, 100_000)),
    _Key("cpu_threads", "int", 0, _between(0, 1024)),
)
HIDDEN_SPLITS = ("validation", "heldout")


@dataclass
class JudgeSettings:
    """``judge/math.toml``: how the judge samples and which hidden problems it asks."""

    samples: int
    pass_at: list[int]
    temperature: float
    top_p: float
    max_new_tokens: int
    seed: int
    batch_size: int
    cpu_threads: int
    splits: dict[str, SplitSpec]


def parse_judge_settings(
    data: Mapping[str, Any], *, source: str = "judge/math.toml"
) -> JudgeSettings:
    problems: list[str] = []
    judge = data.get("judge", {})
    if not isinstance(judge, dict):
        problems.append("judge: expected a table [judge]")
        judge = {}
    for name in data:
        if name not in ("judge", "splits"):
            problems.append(f"{name}: unknown table or key (expected [judge] and [splits.*])")
    judge = dict(judge)
    pass_at = judge.pop("pass_at", None)  # a list of integers: checked here
    values = _parse_table(judge, JUDGE_KEYS, "judge.", problems)
    if pass_at is None:
        pass_at = sorted({1, values["samples"]})
    elif not (
        isinstance(pass_at, list)
        and pass_at
        and all(isinstance(k, int) and not isinstance(k, bool) for k in pass_at)
    ):
        problems.append(
            f"judge.pass_at: expected a non-empty list of integers, actually: {pass_at!r}"
        )
        pass_at = []
    elif any(not 1 <= k <= values["samples"] for k in pass_at):
        problems.append(
            f"judge.pass_at: every k must be in 1..samples ({values['samples']}), actually: {pass_at}"
        )
    splits_raw = data.get("splits", {})
    splits: dict[str, SplitSpec] = {}
    if not isinstance(splits_raw, dict):
        problems.append("splits: expected tables [splits.validation] and [splits.heldout]")
        splits_raw = {}
    for name in splits_raw:
        if name not in HIDDEN_SPLITS:
            problems.append(f"splits.{name}: unknown split (expected {', '.join(HIDDEN_SPLITS)})")
    for name in HIDDEN_SPLITS:
        raw = splits_raw.get(name)
        if not isinstance(raw, dict):
            problems.append(f"splits.{name}: the [splits.{name}] table is missing")
            continue
        split_values = _parse_table(
            raw, _split_keys(_hidden_seed, 59, None), f"splits.{name}.", problems
        )
        spec = _spec(split_values, raw, f"splits.{name}.", problems)
        if spec is not None:
            splits[name] = spec
    if len(splits) == 2 and splits["validation"].seed == splits["heldout"].seed:
        problems.append("splits: validation and heldout must have different seeds")
    _raise(source, problems)
    return JudgeSettings(pass_at=sorted(set(pass_at)), splits=splits, **values)


def load_judge_settings(path: Path) -> JudgeSettings:
    return parse_judge_settings(
        _read_toml(Path(path), "judge configuration"), source="judge/math.toml"
    )
