"""The TRL seam (evotree.harness.trl) under real GRPO training of a tiny local model, on CPU, no mocks.

One module-scoped run trains ``trl.GRPOTrainer`` for 3 steps with the hooks; the tests read
its evidence. Two more short runs check that the same training without the hooks ends with
identical weights, and that the recorder's step budget stops training. Fast tests call the
wrapped reward functions directly with batches laid out as TRL lays them out (num_generations
consecutive samples per prompt). The whole module takes ~10-15 s on 2 CPU cores.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything here is built locally
pytest.importorskip("trl", reason="needs the llm extra (trl, transformers, torch)")

import torch

from evotree.harness.recorder import Recorder, RecorderError
from evotree.harness.tiny_lm import build_tiny_causal_lm, build_tiny_tokenizer
from evotree.harness.trl import (
    SUPPORTED_TRL,
    EvotreeCallback,
    RolloutLayoutError,
    UnsupportedTRL,
    check_trl_version,
    record_rewards,
)

# TRL 1.16 itself calls transformers' deprecated is_gradient_checkpointing
pytestmark = pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning")

G = 4  # num_generations
PROMPTS_PER_STEP = 2
STEPS = 3
WEIGHTS = [1.0, 0.5]
PROBLEMS = [(2, 3), (1, 1), (4, 4), (3, 5), (6, 1), (2, 2)]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class Rewards:
    """A correctness and a format reward that remember exactly what they returned, in order."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def correct(self, prompts, completions, answer, **kwargs):
        values = []
        for completion, expected in zip(completions, answer, strict=True):
            digits = "".join(ch for ch in completion.strip().split(" ")[0] if ch.isdigit())
            values.append(1.0 if digits == expected else 0.0)
        self.calls.append(
            {
                "func": "correct",
                "values": list(values),
                "prompts": list(prompts),
                "completions": list(completions),
                "completion_ids": [list(ids) for ids in kwargs["completion_ids"]],
                "step": kwargs["trainer_state"].global_step,
            }
        )
        return values

    def fmt(self, prompts, completions, **kwargs):
        """Share of characters that belong in an arithmetic answer; None (not applicable: TRL
        skips it) for a completion with no digit at all."""
        values = [
            round(sum(ch in "0123456789+-*= " for ch in c) / len(c), 4)
            if any(ch.isdigit() for ch in c)
            else None
            for c in completions
        ]
        self.calls.append({"func": "fmt", "values": list(values)})
        return values


def expected_reward(values: list[Any]) -> float:
    """TRL's combination: nansum of weight * value; NaN when every function returned None."""
    total, scored = 0.0, False
    for weight, value in zip(WEIGHTS, values, strict=True):
        if value is not None and not math.isnan(value):
            total += weight * value
            scored = True
    return total if scored else math.nan


def make_dataset():
    from datasets import Dataset

    return Dataset.from_dict(
        {
            "prompt": [f"what is {a}+{b}?" for a, b in PROBLEMS],
            "answer": [str(a + b) for a, b in PROBLEMS],
            "task_id": [f"add-{a}-{b}" for a, b in PROBLEMS],
        }
    )


def grpo_config(out: Path, max_steps: int):
    import dataclasses

    from trl import GRPOConfig

    # transformers 5 renamed gradient_checkpointing (TRL's default: on) to activation_checkpointing
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    no_checkpointing = {
        (
            "activation_checkpointing"
            if "activation_checkpointing" in fields
            else "gradient_checkpointing"
        ): False
    }
    return GRPOConfig(
        **no_checkpointing,
        output_dir=str(out),
        use_cpu=True,
        bf16=False,
        fp16=False,
        seed=0,
        num_generations=G,
        per_device_train_batch_size=PROMPTS_PER_STEP * G,
        max_completion_length=8,
        max_steps=max_steps,
        learning_rate=1e-2,
        reward_weights=WEIGHTS,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
    )


def train(tmp: Path, *, recorder_max_steps: int | None, trainer_max_steps: int, hooks: bool = True):
    from trl import GRPOTrainer

    tokenizer = build_tiny_tokenizer()
    model = build_tiny_causal_lm(tokenizer, seed=0)
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    recorder = Recorder(tmp / "evidence", run_id="r1", phase="train", max_steps=recorder_max_steps)
    rewards = Rewards()
    reward_funcs: list[Any] = [rewards.correct, rewards.fmt]
    callbacks: list[Any] = []
    if hooks:
        reward_funcs = record_rewards(
            reward_funcs,
            recorder=recorder,
            num_generations=G,
            weights=WEIGHTS,
            task_id_column="task_id",
            eos_token_id=tokenizer.eos_token_id,
            model=model,
        )
        callbacks = [EvotreeCallback(recorder)]
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=grpo_config(tmp / "out", trainer_max_steps),
        train_dataset=make_dataset(),
        processing_class=tokenizer,
        callbacks=callbacks,
    )
    trainer.train()
    recorder.close()
    return {
        "trainer": trainer,
        "model": model,
        "before": before,
        "rewards": rewards,
        "rollouts": read_jsonl(tmp / "evidence" / "rollouts.jsonl"),
        "signals": read_jsonl(tmp / "evidence" / "signals.jsonl"),
    }


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return train(tmp_path_factory.mktemp("grpo"), recorder_max_steps=None, trainer_max_steps=STEPS)


# ------------------------------------------------------------------------ real training
def test_training_changed_the_parameters(run: dict[str, Any]) -> None:
    assert run["trainer"].state.global_step == STEPS
    for name, param in run["model"].named_parameters():
        assert not torch.equal(param.detach(), run["before"][name]), f"{name} did not change"


def test_the_hooks_do_not_change_training(run: dict[str, Any], tmp_path: Path) -> None:
    bare = train(tmp_path, recorder_max_steps=None, trainer_max_steps=STEPS, hooks=False)
    assert bare["rollouts"] == [] and bare["signals"] == []
    assert [c["values"] for c in bare["rewards"].calls] == [
        c["values"] for c in run["rewards"].calls
    ]
    trained = dict(run["model"].named_parameters())
    for name, param in bare["model"].named_parameters():
        assert torch.equal(param.detach(), trained[name].detach()), f"{name} differs"


def test_rollouts_are_whole_groups(run: dict[str, Any]) -> None:
    rows = run["rollouts"]
    assert len(rows) == STEPS * PROMPTS_PER_STEP * G
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["group_id"]].append(row)
    assert len(groups) == STEPS * PROMPTS_PER_STEP
    for group_id, members in groups.items():
        assert [r["sample_index"] for r in members] == list(range(G)), group_id
        assert len({r["task_id"] for r in members}) == 1
        assert len({r["step"] for r in members}) == 1
        assert members[0]["task_id"].startswith("add-")
    # one step per generation batch: global_step + 1, the step whose signals they explain
    per_step = PROMPTS_PER_STEP * G
    assert Counter(r["step"] for r in rows) == dict.fromkeys(range(1, STEPS + 1), per_step)
    assert [c["step"] + 1 for c in run["rewards"].calls if c["func"] == "correct"] == [1, 2, 3]


def test_recorded_rewards_are_what_the_functions_returned(run: dict[str, Any]) -> None:
    calls = run["rewards"].calls
    assert [c["func"] for c in calls] == ["correct", "fmt"] * STEPS  # TRL's order
    rows = iter(run["rollouts"])
    for correct, fmt in zip(calls[0::2], calls[1::2], strict=True):
        for i, (c, f) in enumerate(zip(correct["values"], fmt["values"], strict=True)):
            row = next(rows)
            components = json.loads(row["components"])
            assert components == {"correct": c, "fmt": f}  # None is recorded as null
            want = expected_reward([c, f])
            assert row["reward"] == want or (row["reward"] is None and math.isnan(want))
            assert row["nonfinite"] is (f is None)
            assert row["text"] == correct["completions"][i]
            assert row["length"] == len(correct["completion_ids"][i])
            assert row["task_id"] == "add-" + correct["prompts"][i][8:-1].replace("+", "-")
            ends = correct["completion_ids"][i][-1] == 2  # <eos>
            assert row["truncated"] is (not ends)
            assert row["finish_reason"] == ("stop" if ends else "length")
    assert next(rows, None) is None


def test_signals_are_trls_logged_metrics_once_per_step(run: dict[str, Any]) -> None:
    signals = run["signals"]
    keys = [(s["step"], s["metric"]) for s in signals]
    assert len(keys) == len(set(keys)), "a (step, metric) pair was written twice"
    by_metric: dict[str, dict[int, float]] = defaultdict(dict)
    for s in signals:
        by_metric[s["metric"]][s["step"]] = s["value"]
    for metric in (
        "loss",
        "reward",
        "reward_std",
        "grad_norm",
        "learning_rate",
        "rewards/correct/mean",
        "rewards/fmt/mean",
        "completions/mean_length",
    ):
        assert set(by_metric[metric]) == set(range(1, STEPS + 1)), metric
    assert set(by_metric["train_runtime"]) == {STEPS}  # the end-of-training summary
    assert "budget/stopped" not in by_metric
    # TRL's logged reward at step s is the mean over the rollouts recorded at step s
    for step in range(1, STEPS + 1):
        mine = [r["reward"] for r in run["rollouts"] if r["step"] == step]
        assert by_metric["reward"][step] == pytest.approx(sum(mine) / len(mine), abs=1e-5)


def test_the_step_budget_stops_training_cleanly(tmp_path: Path) -> None:
    result = train(tmp_path, recorder_max_steps=2, trainer_max_steps=6)
    assert result["trainer"].state.global_step == 2
    stopped = [s for s in result["signals"] if s["metric"] == "budget/stopped"]
    assert [(s["step"], s["value"]) for s in stopped] == [(2, 1.0)]
    assert {s["step"] for s in result["signals"] if s["metric"] == "loss"} == {1, 2}
    assert Counter(r["step"] for r in result["rollouts"]) == {
        1: PROMPTS_PER_STEP * G,
        2: PROMPTS_PER_STEP * G,
    }


# ------------------------------------------------------------------------ version check
@pytest.mark.parametrize("version", ["0.19.0", "1.13.2", "1.17.0", "2.0.0", "not-a-version"])
def test_unsupported_trl_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, version: str
) -> None:
    import trl

    monkeypatch.setattr(trl, "__version__", version)
    with pytest.raises(UnsupportedTRL) as info:
        check_trl_version()
    assert info.value.exit_code == 15
    assert version in info.value.message
    assert f">={SUPPORTED_TRL[0]},<{SUPPORTED_TRL[1]}" in info.value.message
    recorder = Recorder(tmp_path, run_id="r", phase="train")
    with pytest.raises(UnsupportedTRL):
        EvotreeCallback(recorder)
    with pytest.raises(UnsupportedTRL):
        record_rewards([lambda **kw: []], recorder=recorder, num_generations=2)


@pytest.mark.parametrize("version", [f"{SUPPORTED_TRL[0]}.0", "1.16.0", "1.16.1.dev0"])
def test_supported_trl_versions_pass(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    import trl

    monkeypatch.setattr(trl, "__version__", version)
    assert check_trl_version() == version


def test_missing_trl_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "trl", None)  # makes `import trl` fail
    with pytest.raises(UnsupportedTRL, match="not installed"):
        check_trl_version()


# ------------------------------------------------------------------------ the wrapper, directly
def trl_batch(prompts: list[str], g: int = G) -> dict[str, Any]:
    """A batch as GRPOTrainer hands it to reward functions: each prompt's g samples in a row."""
    rows = [p for p in prompts for _ in range(g)]
    return {
        "prompts": rows,
        "completions": [f"{i} " for i in range(len(rows))],
        "completion_ids": [[5] * (i % 3 + 1) for i in range(len(rows))],
    }


def test_wrapper_returns_the_same_object_and_writes_after_the_last_function(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path, run_id="r", phase="train")
    out_a, out_b = [1.0, None] + [1.0] * 6, [0.5, None, 2, 0.0, 1, 1, 1, 1]
    a, b = record_rewards(
        [lambda **kw: out_a, lambda **kw: out_b],
        recorder=recorder,
        num_generations=4,
        weights=[2.0, -1.0],
    )
    batch = trl_batch(["q1", "q2"])
    assert a(**batch) is out_a
    assert recorder.rows["rollouts"] == 0  # waits for the second function
    assert b(**batch) is out_b
    rows = read_jsonl(tmp_path / "rollouts.jsonl")
    # 2*a - b, skipping None; sample 1 has no score at all: NaN, recorded as null + nonfinite
    assert [r["reward"] for r in rows] == [1.5, None, 0.0, 2.0, 1.0, 1.0, 1.0, 1.0]
    assert [r["nonfinite"] for r in rows] == [False, True] + [False] * 6
    # no trainer_state: the step is the batch count
    assert [r["group_id"] for r in rows] == ["s1-g0"] * 4 + ["s1-g1"] * 4
    assert [r["length"] for r in rows] == [len(ids) for ids in batch["completion_ids"]]
    assert rows[0]["task_id"] == rows[3]["task_id"] != rows[4]["task_id"]
    assert rows[0]["truncated"] is None  # no eos_token_id given


def test_wrapper_keeps_trls_reward_function_names(tmp_path: Path) -> None:
    import functools

    def accuracy(**kw):
        return [0.0] * len(kw["prompts"])

    class Judge:
        def __call__(self, **kw):
            return [1.0] * len(kw["prompts"])

    recorder = Recorder(tmp_path, run_id="r", phase="train")
    wrapped = record_rewards(
        [accuracy, Judge(), functools.partial(accuracy)], recorder=recorder, num_generations=2
    )
    assert [w.__name__ for w in wrapped] == ["accuracy", "Judge", "accuracy"]
    batch = trl_batch(["q"], g=2)
    for w in wrapped:
        w(**batch)
    components = json.loads(read_jsonl(tmp_path / "rollouts.jsonl")[0]["components"])
    assert components == {"accuracy": 0.0, "Judge": 1.0, "accuracy_2": 0.0}


def test_a_batch_that_is_not_grouped_is_refused(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path, run_id="r", phase="train")

    def zero(*args, **kwargs):
        return [0.0] * len(kwargs["prompts"] if "prompts" in kwargs else args[0])

    (f,) = record_rewards([zero], recorder=recorder, num_generations=4)
    interleaved = {"prompts": ["q1", "q2"] * 4, "completions": ["x"] * 8}
    with pytest.raises(RolloutLayoutError, match="completions of one prompt"):
        f(**interleaved)
    with pytest.raises(RolloutLayoutError, match="whole number of groups"):
        f(prompts=["q"] * 6, completions=["x"] * 6)
    with pytest.raises(RolloutLayoutError, match="keywords"):
        f(["q"] * 4, ["x"] * 4)
    (g,) = record_rewards(
        [lambda **kw: [0.0] * 4], recorder=recorder, num_generations=4, task_id_column="task"
    )
    with pytest.raises(RolloutLayoutError, match="'task' is not among"):
        g(prompts=["q"] * 4, completions=["x"] * 4, level=[1] * 4)
    assert recorder.rows["rollouts"] == 0


def test_eval_mode_batches_are_not_recorded(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path, run_id="r", phase="train")
    model = torch.nn.Linear(1, 1)
    (f,) = record_rewards(
        [lambda **kw: [1.0] * 4], recorder=recorder, num_generations=2, model=model
    )
    model.eval()
    f(**trl_batch(["q1", "q2"], g=2))
    assert recorder.rows["rollouts"] == 0
    model.train()
    f(**trl_batch(["q1", "q2"], g=2))
    assert recorder.rows["rollouts"] == 4


def test_bad_arguments_are_clear_errors(tmp_path: Path) -> None:
    recorder = Recorder(tmp_path, run_id="r", phase="train")
    with pytest.raises(RecorderError, match=r"must be a evotree\.harness\.recorder\.Recorder"):
        EvotreeCallback("not a recorder")  # type: ignore[arg-type]
    with pytest.raises(RecorderError, match="Python reward functions"):
        record_rewards([torch.nn.Linear(1, 1)], recorder=recorder, num_generations=2)
    with pytest.raises(RecorderError, match="Python reward functions"):
        record_rewards(["some/reward-model"], recorder=recorder, num_generations=2)
    with pytest.raises(RecorderError, match="2 weights for 1 reward"):
        record_rewards([len], recorder=recorder, num_generations=2, weights=[1, 2])
    with pytest.raises(RecorderError, match="num_generations"):
        record_rewards([len], recorder=recorder, num_generations=0)


def test_callback_records_numbers_once_and_skips_the_rest(tmp_path: Path) -> None:
    from transformers import TrainerControl, TrainerState

    recorder = Recorder(tmp_path, run_id="r", phase="train", max_steps=5)
    callback = EvotreeCallback(recorder)
    state, control = TrainerState(), TrainerControl()
    state.global_step = 4
    callback.on_log(
        None,
        state,
        control,
        logs={
            "loss": 0.5,
            "kl": float("nan"),
            "grad_norm": torch.tensor(1.5),
            "tag": "x",
            "flag": True,
            "count": 3,
        },
    )
    callback.on_log(None, state, control, logs={"loss": 0.7, "train_runtime": 1.0})
    callback.on_step_end(None, state, control)
    assert not control.should_training_stop
    state.global_step = 5
    callback.on_step_end(None, state, control)
    callback.on_step_end(None, state, control)
    assert control.should_training_stop
    rows = [
        (s["step"], s["metric"], s["value"], s["nonfinite"])
        for s in read_jsonl(tmp_path / "signals.jsonl")
    ]
    assert rows == [
        (4, "loss", 0.5, False),
        (4, "kl", None, True),
        (4, "grad_norm", 1.5, False),
        (4, "count", 3.0, False),
        (4, "train_runtime", 1.0, False),
        (5, "budget/stopped", 1.0, False),
    ]
    assert recorder.nonfinite == 1


def test_conversational_async_and_generator_reward_functions(tmp_path: Path) -> None:
    import asyncio

    recorder = Recorder(tmp_path, run_id="r", phase="train")

    async def judge(prompts, completions, **kwargs):
        return [float(len(c[0]["content"])) for c in completions]

    def lazy(completions, **kwargs):
        return (1.0 for _ in completions)  # a generator: TRL reads it once, so must we

    wrapped_judge, wrapped_lazy = record_rewards(
        [judge, lazy], recorder=recorder, num_generations=2
    )
    assert asyncio.iscoroutinefunction(wrapped_judge)  # TRL runs async reward functions apart
    prompts = [[{"role": "user", "content": "what is 1+1?"}]] * 2
    completions = [
        [{"role": "assistant", "content": "2"}],
        [{"role": "assistant", "content": "11"}],
    ]
    batch = {"prompts": prompts, "completions": completions}
    assert list(wrapped_lazy(**batch)) == [1.0, 1.0]
    assert asyncio.run(wrapped_judge(**batch)) == [1.0, 2.0]
    rows = read_jsonl(tmp_path / "rollouts.jsonl")
    assert [r["text"] for r in rows] == ["2", "11"]
    assert [r["reward"] for r in rows] == [2.0, 3.0]
    assert [r["length"] for r in rows] == [1, 2]  # characters: no completion_ids given
