"""The TRL seam: how a GRPO run built on Hugging Face TRL leaves evotree evidence.

Supported: ``trl`` >= 1.14, < 1.17. Verified end to end (``tests/test_trl_hooks.py``: real
GRPO training on CPU) with trl 1.14.2 and 1.16.0 on transformers 5.24. For trl 1.15.0 the
reward-function call (``_calculate_rewards``), the reward combination and ``RepeatSampler`` are
source-identical and the hooks' direct tests pass, but its GRPO cannot train on a CPU-only
torch (its chunked log-prob kernel needs Triton), so its end-to-end test cannot run on CPU.
:func:`check_trl_version` enforces the range; every entry point below calls it, so an
unverified TRL fails at once with :class:`UnsupportedTRL` (exit code 15) instead of recording
wrong evidence. Widening the range means re-running ``tests/test_trl_hooks.py`` against the new
release and moving :data:`SUPPORTED_TRL`.

Usage (the only two things a training script adds)::

    from evotree.harness.recorder import get_recorder
    from evotree.harness.trl import EvotreeCallback, record_rewards

    rec = get_recorder()
    trainer = GRPOTrainer(
        model=model, args=config, train_dataset=dataset, processing_class=tokenizer,
        reward_funcs=record_rewards([correct, fmt], recorder=rec, model=model,
                                    num_generations=config.num_generations,
                                    weights=config.reward_weights, task_id_column="task_id"),
        callbacks=[EvotreeCallback(rec)],
    )

Contract, and the public TRL / transformers interfaces it rests on:

* **Signals.** :class:`EvotreeCallback` is a ``transformers.TrainerCallback``. ``on_log``
  records every numeric value TRL logs (``loss``, ``reward``, ``rewards/<func>/mean``,
  ``kl``, ``entropy``, ``eval_*``, ``train_runtime``...) as a signal at
  ``state.global_step``, on the main process only; strings and booleans are skipped, NaN/inf
  are passed on so the recorder flags them. A (step, metric) pair is written at most once.
* **Step budget.** ``on_step_end`` asks ``recorder.budget_exceeded(state.global_step)``; when
  it is, the callback sets ``control.should_training_stop`` (the trainer finishes the step,
  logs it and ends normally) and records ``budget/stopped = 1`` once.
* **Rollouts.** :func:`record_rewards` wraps the Python reward functions given to
  ``GRPOTrainer(reward_funcs=...)``. Each wrapper calls its function with exactly the
  arguments TRL passes (``prompts``, ``completions``, ``completion_ids``, ``trainer_state``,
  the extra dataset columns, ...) and returns its result object unchanged (a generator is
  turned into a list of its values), so training is the same with or without it. TRL calls
  every reward function once per generation batch (all get the same ``prompts`` list); when
  the last one has returned, the batch is written as one ``rollout_group`` per prompt. The
  batch layout relied on is TRL's ``RepeatSampler``: the ``num_generations`` samples of a
  prompt are consecutive, so group ``g`` is samples ``[g*G, (g+1)*G)``. This is checked (a
  batch that is not whole groups, or a group whose prompts differ, raises
  :class:`RolloutLayoutError`), and one process is required: with several, TRL splits groups
  across processes' batches.
* **The recorded reward** of a sample is TRL's combination of the functions' values: the sum
  of ``weight * value`` over functions, skipping those that returned ``None`` (TRL's
  ``nansum`` of ``reward_weights * rewards_per_func``), and NaN when every function returned
  ``None`` (TRL's "unscorable" completion). It is summed in double precision, in function
  order; TRL sums the same values in float32. ``components`` holds each function's own value
  (``None`` recorded as NaN, so the recorder flags it). Pass ``weights=config.reward_weights``:
  the wrapper cannot see the trainer's config.
* **Steps.** A rollout row's step is ``trainer_state.global_step + 1``: the optimizer step the
  samples are trained in, which is also the step at which TRL logs their ``reward`` signal,
  so rollouts and signals of one step join on ``step``. (With ``steps_per_generation`` or
  ``num_iterations`` above 1 one batch serves several steps and carries the first one.)
  Without ``trainer_state`` (a direct call) the step is the batch count, from 1.
* **Evaluation.** Batches scored while ``model`` (when given) is in eval mode, i.e. TRL's
  in-training evaluation, are not recorded as train rollouts (the judge's eval phase
  scores models). Without ``model`` they cannot be told apart: pass it, or keep
  ``eval_strategy="no"`` in the train phase.
* Per-group statistics (reward std, dead groups, ...) are computed by evotree from these
  rows: TRL's own ``frac_reward_zero_std`` loses its per-group meaning when
  ``scale_rewards="batch"``.

* **Skills** (``skills/``, docs/skills.md). :func:`activate_skills` turns a version's skills
  into the reward functions and ``reward_weights`` to give ``GRPOTrainer`` (reward skills:
  OverlongPenalty, PartialPassReward, AuxRewardTerm — TRL's public interface only), and
  :func:`skill_trainer_class` returns a subclass of the given trainer class for the batch
  skills (StdGroupFilter, DualLevelFilter): it overrides ``_calculate_rewards`` (result
  unchanged, the scored batch kept) and ``_generate_and_score_completions`` (after TRL's own:
  dropped groups / masked samples get ``completion_mask`` 0 and advantage 0, and
  ``num_items_in_batch`` is recounted), checking that both methods exist. Counts are signals
  ``skill/<Name>/<count>`` at the step of the batch's rollouts.

Not supported: reward models (``nn.Module`` or model-id strings in ``reward_funcs``: TRL
scores them itself, out of the wrapper's reach), multi-process training (see above), and
pickling the wrapped functions.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import json
import math
import numbers
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.harness.recorder import Recorder, RecorderError, get_recorder
from evotree.skills.runtime import activate
from evotree.skills.runtime import ScoredBatch

try:  # transformers comes with trl; without it the module still imports and the check explains
    from transformers import TrainerCallback as _TrainerCallback
except ImportError:  # pragma: no cover - exercised only where the llm extra is not installed
    _TrainerCallback = object  # type: ignore[assignment,misc]

__all__ = [
    "SUPPORTED_TRL",
    "EvotreeCallback",
    "RolloutLayoutError",
    "SkillBatchReport",
    "UnsupportedTRL",
    "activate_skills",
    "check_trl_version",
    "record_rewards",
    "skill_trainer_class",
]

#: The TRL releases this seam is verified against: (lowest supported, first unsupported).
SUPPORTED_TRL: tuple[str, str] = ("1.14", "1.17")
_SUPPORTED_TEXT = f">={SUPPORTED_TRL[0]},<{SUPPORTED_TRL[1]}"
_INSTALL_FIX = f"pip install 'trl{_SUPPORTED_TEXT}' (or install evotree's llm extra)"


class UnsupportedTRL(EvotreeError):
    """TRL is missing, or its version is outside the range the hooks are verified against."""

    exit_code = 15
    code = "unsupported_trl"


class RolloutLayoutError(RecorderError):
    """A reward batch is not laid out as TRL's GRPO groups, so it cannot be recorded as groups."""

    code = "rollout_layout"


def check_trl_version() -> str:
    """The installed TRL version; raises :class:`UnsupportedTRL` if missing or unsupported."""
    try:
        import trl
    except ImportError as exc:
        raise UnsupportedTRL(
            f"TRL is not installed (import failed: {exc}); "
            f"evotree's TRL hooks need trl{_SUPPORTED_TEXT}",
            fix=_INSTALL_FIX,
            supported=_SUPPORTED_TEXT,
            installed=None,
        ) from None
    installed = str(getattr(trl, "__version__", "unknown"))
    from packaging.version import InvalidVersion, Version

    try:
        version = Version(installed)
    except InvalidVersion:
        version = None
    # Compare the release only, so 1.16.1.dev0 or 1.16.0+local count as 1.16.
    if version is None or not (
        Version(SUPPORTED_TRL[0]) <= Version(version.base_version) < Version(SUPPORTED_TRL[1])
    ):
        raise UnsupportedTRL(
            f"TRL {installed} is installed; evotree's TRL hooks support trl{_SUPPORTED_TEXT}",
            fix=_INSTALL_FIX
            + "; a newer TRL needs the hooks re-verified (tests/test_trl_hooks.py)",
            supported=_SUPPORTED_TEXT,
            installed=installed,
        )
    return installed


def _check_recorder(recorder: Any, who: str) -> Recorder:
    if recorder is None:
        return get_recorder()
    if not isinstance(recorder, Recorder):
        raise RecorderError(
            f"{who}: recorder must be a evotree.harness.recorder.Recorder, "
            f"actually: {type(recorder).__name__}",
            fix="pass get_recorder() (inside `evotree run`) or "
            "Recorder(path, run_id=..., phase='train')",
        )
    return recorder


# ---------------------------------------------------------------------------------- signals
_RESERVED = frozenset({"self", "step"})  # names Recorder.signal takes itself


def _as_number(value: Any) -> float | int | None:
    """A loggable number (NaN/inf included), or None for anything that is not one."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, bytes)):
        return None
    if isinstance(value, numbers.Real):
        return value
    item = getattr(value, "item", None)  # 0-d torch tensors and numpy scalars
    if callable(item) and getattr(value, "ndim", 0) == 0:
        try:
            number = item()
        except (TypeError, ValueError, RuntimeError):
            return None
        return None if isinstance(number, bool) or not isinstance(number, numbers.Real) else number
    return None


class EvotreeCallback(_TrainerCallback):
    """Records TRL's logged metrics as signals and stops training cleanly at the step budget.

    ``recorder``: the run's :class:`evotree.harness.recorder.Recorder` (default: :func:`get_recorder`,
    the run set up by ``evotree run``). ``stop_on_budget=False`` records without stopping.
    """

    def __init__(self, recorder: Recorder | None = None, *, stop_on_budget: bool = True) -> None:
        check_trl_version()
        self.recorder = _check_recorder(recorder, "EvotreeCallback")
        self.stop_on_budget = bool(stop_on_budget)
        self._last_step: dict[str, int] = {}  # metric -> last step written (steps only grow)
        self._budget_recorded = False
        self._warned_reserved = False

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        if not logs or not getattr(state, "is_world_process_zero", True):
            return
        step = int(state.global_step)
        metrics: dict[str, Any] = {}
        for name, value in logs.items():
            number = _as_number(value)
            if number is None:
                continue
            if name in _RESERVED:
                if not self._warned_reserved:
                    warnings.warn(
                        f"EvotreeCallback: a logged metric named {name!r} cannot be "
                        "recorded (the name is taken by Recorder.signal); rename it",
                        stacklevel=2,
                    )
                    self._warned_reserved = True
                continue
            if self._last_step.get(name, -1) >= step:  # already written at this step
                continue
            self._last_step[name] = step
            metrics[name] = number
        if metrics:
            self.recorder.signal(step, **metrics)

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        step = int(state.global_step)
        if not self.stop_on_budget or not self.recorder.budget_exceeded(step):
            return
        control.should_training_stop = True
        if not self._budget_recorded and getattr(state, "is_world_process_zero", True):
            self._budget_recorded = True
            self._last_step["budget/stopped"] = step
            self.recorder.signal(step, **{"budget/stopped": 1})


# ---------------------------------------------------------------------------------- rollouts
def _callable_name(func: Any) -> str:
    """The name TRL gives a reward function (metric ``rewards/<name>/mean``)."""
    while isinstance(func, functools.partial):
        func = func.func
    return getattr(func, "__name__", type(func).__name__)


def _is_async(func: Any) -> bool:
    while isinstance(func, functools.partial):
        func = func.func
    return inspect.iscoroutinefunction(func) or (
        callable(func) and inspect.iscoroutinefunction(func.__call__)
    )


def _prompt_key(prompt: Any) -> str:
    """A stable task id for a prompt (plain text or chat messages)."""
    text = (
        prompt
        if isinstance(prompt, str)
        else json.dumps(prompt, sort_keys=True, default=str, ensure_ascii=False)
    )
    return "p" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _completion_text(completion: Any) -> str:
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):  # conversational: a list of messages
        parts = []
        for message in completion:
            content = message.get("content", "") if isinstance(message, dict) else message
            if isinstance(content, list):  # content blocks
                content = "".join(
                    str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in content
                )
            parts.append(str(content))
        return "\n".join(parts)
    return str(completion)


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _reusable(output: Any) -> Any:
    """The reward function's result, as is; a one-shot iterator (a generator) becomes a list
    of the same values, since both the recorder and TRL read it."""
    return list(output) if isinstance(output, Iterator) else output


class _Batch:
    __slots__ = ("kwargs", "outputs", "prompts")

    def __init__(self, prompts: Any, kwargs: dict[str, Any]) -> None:
        self.prompts = prompts
        self.kwargs = kwargs
        self.outputs: dict[int, list[Any]] = {}


class _RewardGroups:
    """Collects each reward function's output for a batch; writes the groups when all are in."""

    def __init__(
        self,
        recorder: Recorder,
        names: list[str],
        weights: list[float],
        num_generations: int,
        task_id_column: str | None,
        eos_token_ids: frozenset[int] | None,
        model: Any,
    ) -> None:
        self.recorder = recorder
        self.names = names
        self.weights = weights
        self.num_generations = num_generations
        self.task_id_column = task_id_column
        self.eos_token_ids = eos_token_ids
        self.model = model
        self.batches = 0  # batches written
        self.skipped_eval = 0  # eval-mode batches not recorded
        self._batch: _Batch | None = None
        self._group_counter: tuple[int, int] = (-1, 0)  # (step, groups written at that step)
        self._lock = threading.Lock()

    def wrap(self, index: int, func: Callable[..., Any]) -> Callable[..., Any]:
        name = self.names[index]
        if _is_async(func):

            async def wrapped(*args: Any, **kwargs: Any) -> Any:
                output = _reusable(await func(*args, **kwargs))
                self.collect(index, name, output, args, kwargs)
                return output
        else:

            def wrapped(*args: Any, **kwargs: Any) -> Any:
                output = _reusable(func(*args, **kwargs))
                self.collect(index, name, output, args, kwargs)
                return output

        functools.update_wrapper(wrapped, func, assigned=("__module__", "__doc__"), updated=())
        wrapped.__name__ = wrapped.__qualname__ = _callable_name(func)  # TRL's metric names stay
        return wrapped

    def collect(
        self, index: int, name: str, output: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        if args or "prompts" not in kwargs or "completions" not in kwargs:
            raise RolloutLayoutError(
                f"reward function {name!r} was called without prompts=/completions= keywords",
                fix="record_rewards wraps reward functions for trl.GRPOTrainer, which calls them "
                "as f(prompts=..., completions=..., completion_ids=..., **columns)",
            )
        if self.model is not None and not getattr(self.model, "training", True):
            self.skipped_eval += index == 0
            return
        prompts = kwargs["prompts"]
        done: _Batch | None = None
        with self._lock:
            batch = self._batch
            if batch is None or batch.prompts is not prompts or index in batch.outputs:
                if batch is not None and batch.outputs:
                    warnings.warn(
                        f"record_rewards: a batch scored by {len(batch.outputs)} of "
                        f"{len(self.names)} reward functions was dropped (a new batch began)",
                        stacklevel=3,
                    )
                batch = self._batch = _Batch(prompts, kwargs)
            batch.outputs[index] = list(output)
            if len(batch.outputs) == len(self.names):
                done, self._batch = batch, None
        if done is not None:
            self.write(done)

    def write(self, batch: _Batch) -> None:
        kwargs, prompts, g = batch.kwargs, batch.prompts, self.num_generations
        completions = kwargs["completions"]
        n = len(prompts)
        for i, name in enumerate(self.names):
            if len(batch.outputs[i]) != n:
                raise RolloutLayoutError(
                    f"reward function {name!r} returned {len(batch.outputs[i])} rewards for "
                    f"{n} completions",
                    fix="return one reward (or None) per completion",
                )
        if len(completions) != n:
            raise RolloutLayoutError(f"{len(completions)} completions for {n} prompts")
        self._check_single_process()
        if n == 0 or n % g:
            raise RolloutLayoutError(
                f"a reward batch of {n} samples is not a whole number of groups of "
                f"num_generations={g}",
                fix="pass record_rewards(num_generations=...) the GRPOConfig's num_generations",
            )
        task_ids = self._task_ids(kwargs, prompts)
        completion_ids = kwargs.get("completion_ids")
        if completion_ids is not None and len(completion_ids) != n:
            completion_ids = None
        state = kwargs.get("trainer_state")
        self.batches += 1
        step = int(state.global_step) + 1 if state is not None else self.batches
        components = {
            name: [math.nan if v is None else v for v in batch.outputs[i]]
            for i, name in enumerate(self.names)
        }
        rewards = [self._combine(batch, s) for s in range(n)]
        texts = [_completion_text(c) for c in completions]
        lengths = (
            [len(ids) for ids in completion_ids]
            if completion_ids is not None
            else [len(t) for t in texts]
        )
        truncated = finish = None
        if completion_ids is not None and self.eos_token_ids is not None:
            truncated = [
                not ids or int(ids[-1]) not in self.eos_token_ids for ids in completion_ids
            ]
            finish = ["length" if t else "stop" for t in truncated]
        last_step, counter = self._group_counter
        first = counter if last_step == step else 0
        for k in range(n // g):
            lo, hi = k * g, (k + 1) * g
            for j in range(lo + 1, hi):
                if prompts[j] != prompts[lo]:
                    raise RolloutLayoutError(
                        f"samples {lo}..{hi - 1} should be the {g} completions of one prompt, but "
                        f"sample {j} has prompt {_short(prompts[j])} and sample {lo} has "
                        f"{_short(prompts[lo])}",
                        fix="pass record_rewards(num_generations=...) the GRPOConfig's "
                        "num_generations, and train on one process",
                    )
                if task_ids[j] != task_ids[lo]:
                    raise RolloutLayoutError(
                        f"the samples of one prompt have different {self.task_id_column!r} values: "
                        f"{task_ids[lo]!r} and {task_ids[j]!r}",
                        fix="give every row of a prompt one task id",
                    )
            self.recorder.rollout_group(
                step,
                group_id=f"s{step}-g{first + k}",
                task_id=task_ids[lo],
                rewards=rewards[lo:hi],
                components={name: values[lo:hi] for name, values in components.items()},
                lengths=lengths[lo:hi],
                truncated=truncated[lo:hi] if truncated is not None else None,
                finish_reasons=finish[lo:hi] if finish is not None else None,
                texts=texts[lo:hi],
            )
        self._group_counter = (step, first + n // g)

    def _combine(self, batch: _Batch, sample: int) -> float:
        """TRL's reward of one sample: nansum of weight * value; NaN when nothing scored it."""
        total, scored = 0.0, False
        for i, weight in enumerate(self.weights):
            value = batch.outputs[i][sample]
            if value is None:
                continue
            value = float(value)
            if math.isnan(value):
                continue
            total += weight * value
            scored = True
        return total if scored else math.nan

    def _task_ids(self, kwargs: dict[str, Any], prompts: Sequence[Any]) -> list[str]:
        column = self.task_id_column
        if column is None:
            return [_prompt_key(p) for p in prompts]
        if column not in kwargs:
            known = sorted(
                k
                for k in kwargs
                if k
                not in (
                    "prompts",
                    "completions",
                    "completion_ids",
                    "trainer_state",
                    "log_extra",
                    "log_metric",
                    "environments",
                )
            )
            raise RolloutLayoutError(
                f"task_id_column {column!r} is not among the dataset columns TRL passed to the "
                f"reward functions: {', '.join(known) or '(none)'}",
                fix="add the column to the train dataset, or pass task_id_column=None "
                "(the task id is then a hash of the prompt)",
            )
        values = kwargs[column]
        if len(values) != len(prompts):
            raise RolloutLayoutError(
                f"column {column!r} has {len(values)} values for {len(prompts)} prompts"
            )
        return [str(v) for v in values]

    @staticmethod
    def _check_single_process() -> None:
        try:
            import torch.distributed as dist
        except ImportError:  # pragma: no cover
            return
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            raise RolloutLayoutError(
                f"record_rewards records from one process, and this run has "
                f"{dist.get_world_size()}: TRL splits a prompt's completions across processes",
                fix="train the recorded run on one process (one GPU)",
            )


def record_rewards(
    reward_funcs: Callable[..., Any] | Sequence[Callable[..., Any]],
    *,
    recorder: Recorder | None = None,
    num_generations: int,
    weights: Sequence[float] | None = None,
    task_id_column: str | None = None,
    eos_token_id: int | Sequence[int] | None = None,
    model: Any = None,
) -> list[Callable[..., Any]]:
    """Wrap GRPO reward functions so each scored batch is recorded as rollout groups.

    Pass the result to ``GRPOTrainer(reward_funcs=...)``. ``num_generations`` and ``weights``
    must be the trainer's ``GRPOConfig.num_generations`` / ``reward_weights`` (``None``: all 1).
    ``task_id_column``: a dataset column naming the task (default: a hash of the prompt).
    ``eos_token_id``: the token id(s) that end a completion (TRL: the eos ids and the pad id);
    when given, rows get ``truncated`` / ``finish_reason`` ("stop" or "length").
    ``model``: the model being trained; batches scored while it is in eval mode (TRL's
    in-training evaluation) are then not recorded. See the module docstring for the contract.
    """
    check_trl_version()
    recorder = _check_recorder(recorder, "record_rewards")
    funcs = list(reward_funcs) if isinstance(reward_funcs, (list, tuple)) else [reward_funcs]
    if not funcs:
        raise RecorderError(
            "record_rewards: reward_funcs is empty", fix="pass one or more reward functions"
        )
    for func in funcs:
        if isinstance(func, str) or not callable(func) or _is_module(func):
            raise RecorderError(
                f"record_rewards wraps Python reward functions, actually: {_short(func)}",
                fix="reward models (nn.Module or a model id) are scored by TRL itself and cannot "
                "be recorded here; wrap the model in a Python reward function instead",
            )
    if (
        isinstance(num_generations, bool)
        or not isinstance(num_generations, int)
        or num_generations < 1
    ):
        raise RecorderError(
            f"record_rewards: num_generations must be a positive integer, "
            f"actually: {num_generations!r}"
        )
    if weights is None:
        weights = [1.0] * len(funcs)
    weights = list(weights)
    if len(weights) != len(funcs):
        raise RecorderError(
            f"record_rewards: {len(weights)} weights for {len(funcs)} reward functions",
            fix="pass the GRPOConfig's reward_weights (one per function), or None for all 1",
        )
    for w in weights:
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not math.isfinite(w):
            raise RecorderError(f"record_rewards: weights must be finite numbers, actually: {w!r}")
    eos: frozenset[int] | None = None
    if eos_token_id is not None:
        eos = frozenset(
            [int(eos_token_id)]
            if isinstance(eos_token_id, numbers.Integral)
            else (int(i) for i in eos_token_id)
        )
    names: list[str] = []
    for func in funcs:  # components are keyed by name: make repeated names distinct
        base = name = _callable_name(func)
        k = 2
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names.append(name)
    groups = _RewardGroups(
        recorder, names, [float(w) for w in weights], num_generations, task_id_column, eos, model
    )
    return [groups.wrap(i, func) for i, func in enumerate(funcs)]


def _is_module(obj: Any) -> bool:
    try:
        import torch.nn
    except ImportError:  # pragma: no cover
        return False
    return isinstance(obj, torch.nn.Module)


# ---------------------------------------------------------------------------------- skills
# The batch seam, for skills (skills/runtime.py) that change what a GRPO step trains on.
#
# A subclass of the given GRPOTrainer class overrides two methods of TRL's GRPOTrainer, each
# calling TRL's own first (no TRL code is copied):
#   _calculate_rewards(inputs, prompts, completions, completion_ids_list) -> rewards_per_func
#       unchanged; the subclass keeps the scored batch (rewards per function, completions,
#       completion ids) for the skills.
#   _generate_and_score_completions(inputs) -> dict
#       in training mode, after TRL has built the generation batch (prompt_ids, prompt_mask,
#       completion_ids, completion_mask, advantages, num_items_in_batch, old/ref log-probs),
#       the batch skills select the groups and samples that keep their weight: the others get
#       completion_mask 0 on every token (out of the loss and its token count) and advantage 0,
#       and num_items_in_batch is recounted from the new mask (TRL's dapo/cispo/vespo loss
#       divides by it). The selection happens before TRL shuffles and splits the batch into
#       steps, so every loss type and steps_per_generation see it.
# Both methods exist with these signatures and output keys in the supported releases
# (SUPPORTED_TRL: tested end to end on 1.16.0, read in the source of 1.14.2 and 1.15.0);
# skill_trainer_class checks that they do and fails with UnsupportedTRL otherwise.
_SEAM_METHODS = ("_calculate_rewards", "_generate_and_score_completions")
#: Generation-batch keys a refill (StdGroupFilter's max_resample_batches) knows how to merge.
_LEFT_PADDED = frozenset({"prompt_ids", "prompt_mask"})
_MERGEABLE = frozenset(
    {
        "prompt_ids",
        "prompt_mask",
        "completion_ids",
        "completion_mask",
        "advantages",
        "num_items_in_batch",
        "old_per_token_logps",
        "ref_per_token_logps",
        "sampling_per_token_logps",
        "importance_sampling_ratio",
    }
)


def activate_skills(
    applied: Sequence[Any],
    *,
    hooks: Any,
    reward_funcs: Sequence[Callable[..., Any]],
    reward_weights: Sequence[float] | None,
    max_completion_length: int,
) -> Any:
    """A version's skills (``evotree.skills.recipe.AppliedSkill``, e.g. from ``load_skills_file``)
    made ready for ``GRPOTrainer``: returns a ``evotree.skills.runtime.Activation`` whose
    ``reward_funcs`` / ``reward_weights`` replace the domain's (pass the functions through
    :func:`record_rewards`, the weights as ``GRPOConfig.reward_weights``) and whose batch
    skills go to :func:`skill_trainer_class`. Checks the TRL version first."""
    check_trl_version()

    return activate(
        applied,
        hooks=hooks,
        reward_funcs=reward_funcs,
        reward_weights=reward_weights,
        max_completion_length=max_completion_length,
    )


def skill_trainer_class(base: type, activation: Any, *, recorder: Recorder | None = None) -> type:
    """``base`` (``trl.GRPOTrainer`` or a subclass) with the activation's batch skills in
    force; ``base`` itself when there are none. Counts go to ``recorder`` as signals
    ``skill/<Name>/<count>`` at the step the batch trains in. See the comment above."""
    check_trl_version()
    batch_skills = list(activation.batch_skills)
    if not batch_skills:
        return base
    missing = [m for m in _SEAM_METHODS if not callable(getattr(base, m, None))]
    if missing:
        import trl

        raise UnsupportedTRL(
            f"{base.__name__} of TRL {trl.__version__} lacks {', '.join(missing)}, the methods "
            f"evotree's batch skills hook into",
            fix=_INSTALL_FIX,
            supported=_SUPPORTED_TEXT,
            installed=str(trl.__version__),
        )
    rec = _check_recorder(recorder, "skill_trainer_class")

    class SkillGRPOTrainer(base):  # type: ignore[misc,valid-type]
        """GRPOTrainer with evotree's batch skills (evotree.harness.trl.skill_trainer_class)."""

        evotree_batch_skills = tuple(batch_skills)

        def _calculate_rewards(
            self, inputs: Any, prompts: Any, completions: Any, completion_ids_list: Any
        ) -> Any:
            rewards_per_func = super()._calculate_rewards(
                inputs, prompts, completions, completion_ids_list
            )
            self._evotree_scored = (
                rewards_per_func,
                list(completions),
                [list(ids) for ids in completion_ids_list],
            )
            return rewards_per_func

        def _generate_and_score_completions(self, inputs: Any) -> Any:
            parent = super()._generate_and_score_completions
            output = parent(inputs)
            if not self.model.training:  # in-training evaluation: scored as it is
                return output
            return _apply_batch_skills(self, inputs, output, parent, rec)

    SkillGRPOTrainer.__name__ = SkillGRPOTrainer.__qualname__ = f"Skill{base.__name__}"
    return SkillGRPOTrainer


@dataclasses.dataclass
class SkillBatchReport:
    """What the batch skills did to one generation batch (kept on the trainer as
    ``evotree_last_batch``; the counts are also recorded as signals)."""

    step: int
    groups: int
    keep_groups: list[bool]
    keep_samples: list[bool]
    counts: dict[str, dict[str, int]]
    resample_batches: int
    refilled_groups: int


def _scored_batch(trainer: Any, num_generations: int) -> Any:
    """The batch the last ``_calculate_rewards`` call scored, as the skills see it."""
    import torch

    rewards_per_func, completions, completion_ids = trainer._evotree_scored
    if rewards_per_func.shape[0] != len(completions):
        raise RolloutLayoutError(
            "evotree's batch skills need one training process: the scored batch spans "
            f"{rewards_per_func.shape[0]} samples, this process holds {len(completions)}",
            fix="train with batch skills on one process (one GPU)",
        )
    values = rewards_per_func.detach().to("cpu", torch.float64)
    weights = trainer.reward_weights.detach().to("cpu", torch.float64)
    scored = ~torch.isnan(values)
    combined = torch.where(scored, values * weights.unsqueeze(0), torch.zeros_like(values)).sum(1)
    combined[~scored.any(1)] = math.nan
    # TRL's own test for a truncated completion: its last id is neither an eos id nor pad
    eos = getattr(trainer, "eos_token_ids", None) or [trainer._tokenizer.eos_token_id]
    stops = {int(i) for i in [*eos, trainer._tokenizer.pad_token_id] if i is not None}
    truncated = [not ids or int(ids[-1]) not in stops for ids in completion_ids]
    return ScoredBatch(
        rewards=combined.tolist(),
        num_generations=num_generations,
        truncated=truncated,
        completions=[_completion_text(c) for c in completions],
    )


def _select(skills: Sequence[Any], batch: Any) -> tuple[list[bool], list[bool], list[Any]]:
    """Every skill's selection, combined: a group or sample keeps its weight only if every
    skill keeps it."""
    selections = [s.select(batch) for s in skills]
    groups = [all(sel.keep_groups[g] for sel in selections) for g in range(batch.groups)]
    samples = [all(sel.keep_samples[i] for sel in selections) for i in range(len(batch.rewards))]
    return groups, samples, selections


def _apply_batch_skills(
    trainer: Any,
    inputs: Any,
    output: dict[str, Any],
    generate: Callable[[Any], dict[str, Any]],
    recorder: Recorder,
) -> dict[str, Any]:
    """Select the batch's groups by the skills, refill dropped ones, mask the rest, report."""
    g = int(trainer.num_generations)
    skills = trainer.evotree_batch_skills
    batch = _scored_batch(trainer, g)
    n = len(batch.rewards)
    if n % g or output["advantages"].shape[0] != n:
        raise RolloutLayoutError(
            f"a generation batch of {n} samples is not whole groups of {g} on one process",
            fix="train on one process",
        )
    keep_groups, keep_samples, selections = _select(skills, batch)
    counts: dict[str, dict[str, int]] = {sel.skill: dict(sel.counts) for sel in selections}
    budget = max((sel.max_resample_batches for sel in selections), default=0)
    fresh = any(sel.max_resample_batches and sel.refill == "fresh" for sel in selections)
    step = int(trainer.state.global_step) + 1
    refill = _Refill(generated=batch.groups)
    _refill_dropped(
        trainer, inputs, output, generate, refill, keep_groups, keep_samples, counts, budget, fresh
    )
    _mask_dropped(trainer, output, keep_samples)
    for sel in selections:
        counts[sel.skill]["kept"] = sum(keep_groups)
        if "kept_samples" in counts[sel.skill]:
            counts[sel.skill]["kept_samples"] = sum(keep_samples)
        if budget:
            counts[sel.skill]["resample_batches"] = refill.extra
            counts[sel.skill]["refilled"] = refill.refilled
            counts[sel.skill]["generated_groups"] = refill.generated
    trainer.evotree_last_batch = SkillBatchReport(
        step,
        len(keep_groups),
        list(keep_groups),
        list(keep_samples),
        counts,
        refill.extra,
        refill.refilled,
    )
    if getattr(trainer.state, "is_world_process_zero", True):
        recorder.signal(
            step,
            **{
                f"skill/{name}/{key}": value
                for name, values in counts.items()
                for key, value in values.items()
            },
        )
    return output


@dataclasses.dataclass
class _Refill:
    """What refilling dropped groups did: resample batches, groups refilled, groups generated."""

    extra: int = 0
    refilled: int = 0
    generated: int = 0


def _refill_dropped(
    trainer: Any,
    inputs: Any,
    output: dict[str, Any],
    generate: Callable[[Any], dict[str, Any]],
    refill: _Refill,
    keep_groups: list[bool],
    keep_samples: list[bool],
    counts: dict[str, dict[str, int]],
    budget: int,
    fresh: bool,
) -> None:
    """Generate again for dropped groups (the same prompts, or fresh ones) while the budget lasts,
    putting each refill the skills keep in place of its dropped group (updates the lists)."""
    g = int(trainer.num_generations)
    skills = trainer.evotree_batch_skills
    step = int(trainer.state.global_step) + 1
    dropped = [k for k, kept in enumerate(keep_groups) if not kept]
    seen = {_prompt_key(row.get("prompt")) for row in inputs} if fresh else set()
    while dropped and refill.extra < budget:
        unknown = sorted(k for k in output if k not in _MERGEABLE)
        if unknown:
            from evotree.skills.errors import SkillNotApplicable

            raise SkillNotApplicable(
                f"refilling dropped groups (max_resample_batches) merges text-only GRPO batches; "
                f"this one also has {', '.join(unknown)}",
                fix="apply the skill with --param max_resample_batches=0",
            )
        if fresh:
            picked = _fresh_rows(trainer, len(dropped), seen, step, refill.extra)
            if not picked:  # the training set has no prompt left that this step has not seen
                break
            rows_in = [row for row in picked for _ in range(g)]
            sub_dropped = dropped[: len(picked)]
        else:
            rows_in = [inputs[k * g + j] for k in dropped for j in range(g)]
            sub_dropped = list(dropped)
        sub = generate(rows_in)
        refill.extra += 1
        refill.generated += len(sub_dropped)
        sub_batch = _scored_batch(trainer, g)
        sub_groups, sub_samples, sub_selections = _select(skills, sub_batch)
        for sel in sub_selections:
            for key, value in sel.counts.items():
                if key != "kept":
                    counts[sel.skill][key] = counts[sel.skill].get(key, 0) + value
        still = list(dropped[len(sub_dropped) :])
        for j, k in enumerate(sub_dropped):
            if not sub_groups[j]:
                still.append(k)
                continue
            _replace_rows(
                trainer,
                output,
                sub,
                list(range(k * g, (k + 1) * g)),
                list(range(j * g, (j + 1) * g)),
            )
            keep_groups[k] = True
            keep_samples[k * g : (k + 1) * g] = sub_samples[j * g : (j + 1) * g]
            refill.refilled += 1
        dropped = sorted(still)


def _mask_dropped(trainer: Any, output: dict[str, Any], keep_samples: list[bool]) -> None:
    """Zero the loss and advantages of the samples the skills dropped; recount the loss items."""
    import torch

    keep = torch.tensor(
        keep_samples, dtype=output["completion_mask"].dtype, device=output["completion_mask"].device
    )
    output["completion_mask"] = output["completion_mask"] * keep.unsqueeze(1)
    output["advantages"] = output["advantages"] * keep.to(output["advantages"].dtype)
    if "tool_mask" in output:
        output["tool_mask"] = output["tool_mask"] * keep.to(output["tool_mask"].dtype).unsqueeze(1)
    loss_mask = (
        output["completion_mask"]
        if "tool_mask" not in output
        else (output["completion_mask"] * output["tool_mask"])
    )
    output["num_items_in_batch"] = trainer.accelerator.gather(loss_mask.sum()).sum()


def _fresh_rows(trainer: Any, wanted: int, seen: set[str], step: int, round_: int) -> list[Any]:
    """Up to ``wanted`` rows of the trainer's training set whose prompts this step has not
    seen yet (DAPO's dynamic sampling draws new prompts, not the dropped ones again), drawn
    reproducibly from the run's seed, the step and the refill round; added to ``seen``."""
    import random

    dataset = getattr(trainer, "train_dataset", None)
    if dataset is None or not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
        from evotree.skills.errors import SkillNotApplicable

        raise SkillNotApplicable(
            "refilling with fresh prompts needs a training set with random access (a "
            "datasets.Dataset); this trainer's is " + type(dataset).__name__,
            fix="apply the skill with --param refill=same (or max_resample_batches=0)",
        )
    seed = int(getattr(trainer.args, "seed", 0) or 0)
    rng = random.Random(f"evotree-refill:{seed}:{step}:{round_}")
    order = list(range(len(dataset)))
    rng.shuffle(order)
    picked: list[Any] = []
    for index in order:
        if len(picked) >= wanted:
            break
        row = dataset[index]
        key = _prompt_key(row.get("prompt"))
        if key in seen:
            continue
        seen.add(key)
        picked.append(row)
    return picked


def _replace_rows(
    trainer: Any, output: dict[str, Any], sub: dict[str, Any], rows: list[int], sub_rows: list[int]
) -> None:
    """Put rows ``sub_rows`` of the refill batch ``sub`` in place of ``rows`` of ``output``,
    padding the narrower side (prompts on the left, completions on the right)."""
    import torch

    pad_id = getattr(trainer._tokenizer, "pad_token_id", None) or 0
    for key, value in list(output.items()):
        if key == "num_items_in_batch" or not isinstance(value, torch.Tensor):
            continue
        other = sub[key]
        if value.dim() == 2 and value.shape[1] != other.shape[1]:
            fill = pad_id if key in ("prompt_ids", "completion_ids") else 0
            width = max(value.shape[1], other.shape[1])
            value = _pad_to(value, width, fill, left=key in _LEFT_PADDED)
            other = _pad_to(other, width, fill, left=key in _LEFT_PADDED)
        value = value.clone()
        value[rows] = other[sub_rows].to(value.dtype)
        output[key] = value


def _pad_to(tensor: Any, width: int, fill: Any, *, left: bool) -> Any:
    import torch

    extra = width - tensor.shape[1]
    if extra <= 0:
        return tensor
    pad = torch.full((tensor.shape[0], extra), fill, dtype=tensor.dtype, device=tensor.device)
    return torch.cat([pad, tensor] if left else [tensor, pad], dim=1)
