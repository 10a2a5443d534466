"""The math domain's train phase: ``python -P -m evotree.domains.math.train`` in the candidate's tree.

Reads ``recipe.toml`` and the train problems of ``math.toml``, builds (or loads) the model and
trains it with ``trl.GRPOTrainer`` on the two reward functions of :mod:`evotree.domains.math.rewards`,
through the harness's TRL seam:

* :func:`evotree.harness.trl.record_rewards` records every scored batch as rollout groups
  (``num_generations`` samples per group, ``sample_index`` 0..n-1, ``task_id`` from the
  dataset's ``task_id`` column, components ``correctness`` and ``format``);
* :class:`evotree.harness.trl.EvotreeCallback` records every logged metric as a signal (loss, reward,
  kl, entropy, ...) and stops training at the run's step budget (``EVOTREE_MAX_STEPS``);
* the version's skills (``skills.toml``, written by ``evotree skill apply``) are activated
  through the same seam: :func:`evotree.harness.trl.activate_skills` (reward skills change the reward
  functions and weights) and :func:`evotree.harness.trl.skill_trainer_class` (batch skills change
  which groups and samples the policy loss sees), with the domain's hooks
  (:func:`evotree.domains.math.rewards.skill_hooks`).

The trained model and its tokenizer are saved to ``output/model/`` (with LoRA: the merged
model; the adapter in ``output/adapter/``): what the judge evaluates. ``[trl] report_to =
["tensorboard"]`` also writes TensorBoard event files to ``output/tensorboard/`` (TRL's own
``train/loss``, ``train/reward``, ...; read them back with ``evotree import tensorboard``).

Exit codes: 0 trained; 65 (invalid submission, charged nothing) when recipe.toml, math.toml or
skills.toml is invalid (or names a skill the math domain cannot apply), the model cannot be loaded, or ``use_vllm = true`` cannot work here, all before
any training; 1 when training itself fails. Outside ``evotree run`` (no ``EVOTREE_EVIDENCE_DIR``)
the evidence goes to ``output/evidence/`` of the current directory (``EVOTREE_MAX_STEPS`` is
still obeyed). On CPU, ``cpu_threads = 0`` trains models under 20M parameters on one thread.

Seeds: the run trains with ``training_seed(recipe.seed, EVOTREE_SEED)`` (0 for an unset
``EVOTREE_SEED``): :func:`evotree.harness.seeding.seed_everything` before the model is built
(the tiny model's weights, LoRA's initialisation), and TRL's ``seed`` / ``data_seed`` (prompt
order, rollout sampling, dropout). The train problems themselves are the version's
``math.toml`` (its own ``seed``), the same at every run seed. Recorded as the signals
``seed/run`` and ``seed/train`` (step 0) and in ``train_summary.json``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.domains.math import ADAPTER_DIR, MODEL_DIR, OUTPUT_DIR, RECIPE_FILE, TRAIN_FILE
from evotree.domains.math.data import SplitError, generate, problems_table
from evotree.domains.math.model import (
    ModelUnavailable,
    check_model_name,
    load_policy,
    offline,
    set_cpu_threads,
)
from evotree.domains.math.rewards import make_reward_functions, skill_hooks
from evotree.domains.math.settings import (
    SettingsError,
    load_recipe,
    load_train_split,
    training_seed,
)
from evotree.domains.math.warmup import load_warm_policy
from evotree.harness.layout import ENV_EVIDENCE_DIR, ENV_MAX_STEPS, INVALID_SUBMISSION_EXIT
from evotree.harness.recorder import Recorder, get_recorder
from evotree.harness.seeding import run_seed as read_run_seed
from evotree.harness.seeding import seed_everything
from evotree.harness.trl import (
    EvotreeCallback,
    UnsupportedTRL,
    activate_skills,
    check_trl_version,
    record_rewards,
    skill_trainer_class,
)
from evotree.skills.recipe import SKILLS_FILE, load_skills_file

__all__ = ["TENSORBOARD_DIR", "grpo_config_kwargs", "main"]

#: Where ``[trl] report_to = ["tensorboard"]`` writes its event files, under ``output/``.
TENSORBOARD_DIR = "tensorboard"


def _say(message: str) -> None:
    print(f"evotree math train: {message}", file=sys.stderr, flush=True)


def _invalid(message: str) -> int:
    _say(f"invalid submission: {message}")
    return INVALID_SUBMISSION_EXIT


def grpo_config_kwargs(
    recipe: Any, output_dir: Path, *, cuda: bool, seed: int | None = None
) -> dict[str, Any]:
    """The ``trl.GRPOConfig`` arguments of a recipe (its ``[trl]`` table applied last).

    ``seed``: the run's training seed (:func:`evotree.domains.math.settings.training_seed`), given
    to TRL as ``seed`` and ``data_seed`` (TRL seeds Python, NumPy and torch with it when the
    trainer is built, and shuffles the prompts and samples the rollouts from it); None: the
    recipe's ``seed`` as it is.
    """
    from trl import GRPOConfig

    seed = recipe.seed if seed is None else int(seed)
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    kwargs: dict[str, Any] = {
        "output_dir": str(output_dir),
        "use_cpu": not cuda,
        "bf16": False,
        "fp16": False,
        "seed": seed,
        "data_seed": seed,
        "learning_rate": recipe.learning_rate,
        "max_steps": recipe.max_steps,
        "num_generations": recipe.num_generations,
        "per_device_train_batch_size": recipe.per_device_train_batch_size,
        "gradient_accumulation_steps": recipe.gradient_accumulation_steps,
        "max_completion_length": recipe.max_completion_length,
        "temperature": recipe.temperature,
        "top_p": recipe.top_p,
        "beta": recipe.beta,
        "epsilon": recipe.epsilon,
        "num_iterations": recipe.num_iterations,
        "loss_type": recipe.loss_type,
        "scale_rewards": recipe.scale_rewards,
        "lr_scheduler_type": recipe.lr_scheduler_type,
        "warmup_steps": recipe.warmup_steps,
        "weight_decay": recipe.weight_decay,
        "max_grad_norm": recipe.max_grad_norm,
        "use_vllm": recipe.use_vllm,
        "reward_weights": recipe.reward_weights,
        "logging_steps": 1,
        "report_to": "none",
        "save_strategy": "no",
        "eval_strategy": "no",
        "disable_tqdm": True,
    }
    # transformers 5 renamed gradient_checkpointing (TRL's default: on) to activation_checkpointing;
    # off by default here (tiny models, CPU), a [trl] entry can turn it on.
    checkpointing = (
        "activation_checkpointing"
        if "activation_checkpointing" in fields
        else "gradient_checkpointing"
    )
    kwargs[checkpointing] = False
    kwargs = {k: v for k, v in kwargs.items() if k in fields}
    kwargs.update(recipe.trl)
    return kwargs


class _Stop(Exception):
    """Ends the train phase early with an exit code (65: an invalid submission; 1: a failure)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _refuse(message: str) -> _Stop:
    """An invalid submission (exit 65, charged nothing): said, then raised by the caller."""
    return _Stop(_invalid(message))


def _fail(message: str) -> _Stop:
    """A failure (exit 1): said, then raised by the caller."""
    _say(message)
    return _Stop(1)


def _with_fix(exc: EvotreeError) -> str:
    """An evotree error's message with its fix in parentheses (when it has one)."""
    return exc.message + (f" ({exc.fix})" if exc.fix else "")


@dataclasses.dataclass
class _Inputs:
    """What the train phase reads from the candidate's tree and the run, checked."""

    recipe: Any
    spec: Any
    problems: list[Any]
    run_seed: int
    seed: int
    applied: Any


def main(cwd: Path | None = None) -> int:
    """Train the candidate's recipe (see the module doc); the exit code."""
    cwd = Path(cwd or os.getcwd())
    started = time.monotonic()
    offline()
    # TRL 1.16 itself calls transformers' deprecated is_gradient_checkpointing
    warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing", category=FutureWarning)
    try:
        return _train(cwd, started)
    except _Stop as stop:
        return stop.code


def _train(cwd: Path, started: float) -> int:
    """Every check first (exit 65 before any training), then training and the judge's model."""
    inputs = _read_inputs(cwd)
    recipe = inputs.recipe
    cuda = _check_runtime(recipe)
    output = cwd / OUTPUT_DIR
    config = _grpo_config(recipe, output, cuda=cuda, seed=inputs.seed)
    seed_everything(inputs.seed)
    model, tokenizer, described, warm = _build_policy(recipe, inputs.spec, cwd, inputs.seed)
    # the version's skills, activated now so a skill that cannot work is refused before training
    stops = sorted(
        {int(i) for i in (tokenizer.eos_token_id, tokenizer.pad_token_id) if i is not None}
    )
    activation = _activate_skills(inputs.applied, recipe, stops)
    config.reward_weights = list(activation.reward_weights)
    threads = set_cpu_threads(model, recipe.cpu_threads) if not cuda else None
    peft_config = _lora_config(recipe, model)
    _name_model_path(recipe, model, tokenizer, output)
    # ------------------------------------------------------------ training
    rec = _recorder(output, recipe)
    trainer = _build_trainer(
        recipe, model, tokenizer, config, activation, rec, stops, inputs.problems, peft_config
    )
    _record_start(rec, trainer, model, inputs, activation, warm)
    _say(
        f"training {described} on {len(inputs.problems)} problems for up to {recipe.max_steps} steps "
        f"({'LoRA' if recipe.lora else 'full'}, {'cuda' if cuda else f'cpu, {threads} thread(s)'}"
        f"{', vLLM' if recipe.use_vllm else ''})"
        + (f" with skills {', '.join(activation.names)}" if activation.names else "")
    )
    result = trainer.train()
    # ------------------------------------------------------------ what the judge evaluates
    _save_model(cwd, recipe, trainer, tokenizer)
    summary = _summary(trainer, result, inputs, activation, warm, described, started)
    (output / "train_summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    rec.close()
    print(json.dumps(summary))
    return 0


def _read_inputs(cwd: Path) -> _Inputs:
    """recipe.toml, math.toml's train problems, the run's seed and skills.toml, each checked."""
    try:
        recipe = load_recipe(cwd / RECIPE_FILE)
        spec = load_train_split(cwd / TRAIN_FILE)
        problems = generate(spec, judge_region=False)
        if not recipe.is_tiny:
            check_model_name(recipe.model, cwd=cwd)
    except (SettingsError, SplitError, ModelUnavailable) as exc:
        raise _refuse(str(exc)) from None
    try:
        run_seed = read_run_seed()
    except ValueError as exc:  # the harness always sets a valid one
        raise _fail(str(exc)) from None
    # every source of randomness follows the run's seed (mixed with the recipe's): the tiny
    # model's initialisation, TRL's prompt order and rollout sampling, dropout
    seed = training_seed(recipe.seed, run_seed)
    try:
        applied = load_skills_file(cwd / SKILLS_FILE, domain="math")
    except EvotreeError as exc:
        raise _refuse(_with_fix(exc)) from None
    return _Inputs(recipe, spec, problems, run_seed, seed, applied)


def _check_runtime(recipe: Any) -> bool:
    """torch, vLLM when the recipe asks for it, a supported TRL; whether CUDA is here."""
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - the llm extra is missing
        raise _fail(
            f"the math domain needs torch, transformers and trl ({exc}); pip install 'evotree[llm]'"
        ) from None
    cuda = torch.cuda.is_available()
    if recipe.use_vllm:
        if not cuda:
            raise _refuse(
                "use_vllm = true, but vLLM rollouts need a CUDA GPU and this machine has none; "
                "set use_vllm = false to generate with transformers on CPU"
            )
        try:
            import vllm  # noqa: F401
        except ImportError:
            raise _refuse(
                "use_vllm = true, but vllm is not installed here; pip install 'evotree[vllm]', "
                "or set use_vllm = false"
            ) from None
    try:
        check_trl_version()
    except UnsupportedTRL as exc:
        raise _fail(f"{exc.message}; {exc.fix}") from None
    return cuda


def _grpo_config(recipe: Any, output: Path, *, cuda: bool, seed: int) -> Any:
    """The ``trl.GRPOConfig``; with ``[trl] report_to = ["tensorboard"]``, event files under the
    run's own output dir, never where an inherited TENSORBOARD_LOGGING_DIR points."""
    from trl import GRPOConfig

    try:
        config = GRPOConfig(**grpo_config_kwargs(recipe, output / "trainer", cuda=cuda, seed=seed))
    except (TypeError, ValueError) as exc:
        raise _refuse(
            f"recipe.toml: the GRPO settings are rejected by trl.GRPOConfig: {exc}"
        ) from None
    if "tensorboard" in (config.report_to or []):
        try:
            import tensorboard  # noqa: F401  (transformers' TensorBoardCallback needs it)
        except ImportError:
            raise _refuse(
                "recipe.toml: trl.report_to = ['tensorboard'] needs tensorboard: "
                "pip install 'evotree-rl[export]'"
            ) from None
        os.environ["TENSORBOARD_LOGGING_DIR"] = str(output / TENSORBOARD_DIR)
    return config


def _build_policy(recipe: Any, spec: Any, cwd: Path, seed: int) -> tuple[Any, Any, str, Any]:
    """The model, its tokenizer, its description and the warm-up used (None: none)."""
    warm = None
    try:
        if recipe.is_tiny and recipe.warmup.enabled:
            # the supervised warm-up on the train region's facts: from the cache, or trained (and
            # cached) now; its own seed, not the run's: every run and version starts from it
            model, tokenizer, described, warm = load_warm_policy(
                spec, recipe.tiny, recipe.warmup, log=_say
            )
            seed_everything(seed)
        else:
            model, tokenizer, described = load_policy(
                recipe.model, cwd=cwd, tiny=recipe.tiny, seed=seed
            )
    except ModelUnavailable as exc:
        raise _refuse(str(exc)) from None
    return model, tokenizer, described, warm


def _activate_skills(applied: Any, recipe: Any, stops: list[int]) -> Any:
    """The version's skills over the domain's reward functions and hooks (exit 65 when one cannot work)."""
    try:
        return activate_skills(
            applied,
            hooks=skill_hooks(stops, recipe.max_completion_length),
            reward_funcs=make_reward_functions(stops),
            reward_weights=recipe.reward_weights,
            max_completion_length=recipe.max_completion_length,
        )
    except EvotreeError as exc:
        raise _refuse(f"{SKILLS_FILE}: {_with_fix(exc)}") from None


def _lora_config(recipe: Any, model: Any) -> Any:
    """peft's LoraConfig when the recipe asks for LoRA (its target modules checked), else None."""
    if not recipe.lora:
        return None
    try:
        from peft import LoraConfig
    except ImportError:
        raise _refuse("lora = true, but peft is not installed here; pip install peft") from None
    peft_config = LoraConfig(
        r=recipe.lora_r,
        lora_alpha=recipe.lora_alpha,
        lora_dropout=recipe.lora_dropout,
        target_modules=list(recipe.lora_target_modules),
        task_type="CAUSAL_LM",
    )
    names = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
    unknown = [m for m in recipe.lora_target_modules if m not in names]
    if unknown:
        raise _refuse(
            f"lora_target_modules: {', '.join(unknown)} are not modules of the model "
            f"(it has e.g. {', '.join(sorted(n for n in names if n.endswith('_proj'))[:8])})"
        )
    return peft_config


def _name_model_path(recipe: Any, model: Any, tokenizer: Any, output: Path) -> None:
    """TRL rebuilds the KL reference model, and vLLM loads the policy, from the model's path:
    give a model built in memory one."""
    if (recipe.beta > 0 or recipe.use_vllm) and not getattr(model.config, "_name_or_path", ""):
        initial = output / "initial_model"
        model.save_pretrained(initial)
        tokenizer.save_pretrained(initial)
        model.config._name_or_path = str(initial)


def _recorder(output: Path, recipe: Any) -> Recorder:
    """The run's recorder; outside ``evotree run``, one writing to ``output/evidence/``."""
    if os.environ.get(ENV_EVIDENCE_DIR):
        rec = get_recorder()
    else:
        limit = os.environ.get(ENV_MAX_STEPS, "")
        rec = Recorder(
            output / "evidence",
            run_id="local",
            phase="train",
            max_steps=int(limit) if limit.isdigit() else None,
        )
        _say(f"not inside `evotree run`: evidence goes to {output / 'evidence'}")
    if rec.max_steps is not None and rec.max_steps < recipe.max_steps:
        _say(
            f"the run's step budget is {rec.max_steps} (max_steps = {recipe.max_steps}): training stops there"
        )
    return rec


def _build_trainer(
    recipe: Any,
    model: Any,
    tokenizer: Any,
    config: Any,
    activation: Any,
    rec: Recorder,
    stops: list[int],
    problems: list[Any],
    peft_config: Any,
) -> Any:
    """The GRPO trainer (the skills' trainer class) with the recorded rewards and the callback."""
    from datasets import Dataset
    from trl import GRPOTrainer

    try:
        reward_funcs = record_rewards(
            activation.reward_funcs,
            recorder=rec,
            num_generations=recipe.num_generations,
            weights=activation.reward_weights,
            task_id_column="task_id",
            eos_token_id=stops,
            model=model,
        )
        trainer_class = skill_trainer_class(GRPOTrainer, activation, recorder=rec)
        return trainer_class(
            model=model,
            reward_funcs=reward_funcs,
            args=config,
            train_dataset=Dataset.from_dict(problems_table(problems)),
            processing_class=tokenizer,
            callbacks=[EvotreeCallback(rec)],
            peft_config=peft_config,
        )
    except EvotreeError as exc:
        raise _fail(exc.message + (f"; {exc.fix}" if exc.fix else "")) from None


def _record_start(
    rec: Recorder, trainer: Any, model: Any, inputs: _Inputs, activation: Any, warm: Any
) -> None:
    """The step-0 signals: the warm-up, the problems, the seeds, the model's size, the skills."""
    if warm is not None:
        rec.signal(
            0,
            **{
                "warmup/steps": warm.manifest["steps"],
                "warmup/accuracy": warm.manifest["accuracy"],
                "warmup/trained": int(warm.trained),
                "warmup/seconds": warm.manifest["seconds"],
            },
        )
    rec.signal(
        0,
        **{
            "train/problems": len(inputs.problems),
            "seed/run": inputs.run_seed,
            "seed/train": inputs.seed,
            "model/parameters": sum(p.numel() for p in model.parameters()),
            "model/trainable_parameters": sum(
                p.numel() for p in trainer.model.parameters() if p.requires_grad
            ),
        },
        **{f"skill/{name}/active": 1 for name in activation.names},
    )


def _save_model(cwd: Path, recipe: Any, trainer: Any, tokenizer: Any) -> None:
    """The trained model and its tokenizer in ``output/model/`` (LoRA: merged; the adapter beside it)."""
    model_dir = cwd / MODEL_DIR
    if recipe.lora:
        trainer.model.save_pretrained(cwd / ADAPTER_DIR)
        tokenizer.save_pretrained(cwd / ADAPTER_DIR)
        merged = trainer.model.merge_and_unload()
        merged.save_pretrained(model_dir, safe_serialization=True)
    else:
        trainer.model.save_pretrained(model_dir, safe_serialization=True)
    tokenizer.save_pretrained(model_dir)


def _summary(
    trainer: Any,
    result: Any,
    inputs: _Inputs,
    activation: Any,
    warm: Any,
    described: str,
    started: float,
) -> dict[str, Any]:
    """``train_summary.json``: what was trained, how far, from which seeds, and the rewards."""
    recipe = inputs.recipe
    history = [entry for entry in trainer.state.log_history if "reward" in entry]
    return {
        "model": described,
        "steps": int(trainer.state.global_step),
        "max_steps": recipe.max_steps,
        "train_problems": len(inputs.problems),
        "lora": recipe.lora,
        "skills": activation.names,
        "run_seed": inputs.run_seed,
        "seed": inputs.seed,
        "warmup": None
        if warm is None
        else {
            "key": warm.key,
            "trained": warm.trained,
            "steps": warm.manifest["steps"],
            "accuracy": warm.manifest["accuracy"],
            "seconds": warm.manifest["seconds"],
            "path": str(warm.path),
        },
        "train_loss": result.training_loss,
        "first_reward": history[0]["reward"] if history else None,
        "last_reward": history[-1]["reward"] if history else None,
        "wall_seconds": round(time.monotonic() - started, 3),
    }


if __name__ == "__main__":
    sys.exit(main())
