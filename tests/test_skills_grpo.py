"""Each built-in skill changes what a real TRL GRPOTrainer step trains on, in the documented way.

Real GRPO steps of the tiny local model (evotree.harness.tiny_lm) on CPU, through the seam in
evotree.harness.trl (activate_skills + skill_trainer_class) and the evidence hooks (record_rewards,
EvotreeCallback). A test subclass only *captures* what reaches TRL's loss; nothing is mocked.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections import defaultdict
from pathlib import Path
from typing import Any, ClassVar

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("trl", reason="needs the llm extra (trl, transformers, torch)")

import torch

from evotree.harness.recorder import Recorder
from evotree.harness.tiny_lm import build_tiny_causal_lm, build_tiny_tokenizer
from evotree.harness.trl import (
    EvotreeCallback,
    UnsupportedTRL,
    activate_skills,
    record_rewards,
    skill_trainer_class,
)
from evotree.skills import AppliedSkill, SkillNotApplicable, get_skill
from evotree.skills.runtime import SkillHooks, group_stds, overlong_penalty

pytestmark = pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning")

G = 4
#: (a, b, kind): "dead" prompts score the same for every sample; "alive" ones vary; "flaky"
#: ones are dead on odd-numbered scorings and vary on even ones (a refill then revives them).
PROBLEMS = [(2, 3, "dead"), (1, 1, "alive"), (4, 4, "dead"), (3, 5, "alive")]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _hash01(text: str) -> float:
    return int(hashlib.sha1(text.encode()).hexdigest()[:8], 16) / 16**8


class KindReward:
    """0.5 for every sample of a dead prompt; a hash of the text for an alive one."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, prompts: Any, completions: Any, kind: Any, **kwargs: Any) -> list[float]:
        self.calls += 1
        out = []
        for text, k in zip(completions, kind, strict=True):
            if k == "dead" or (k == "flaky" and self.calls % 2 == 1):
                out.append(0.5)
            else:
                out.append(_hash01(text))
        return out


def kind_reward() -> Any:
    reward = KindReward()

    def kind_score(prompts: Any, completions: Any, kind: Any, **kwargs: Any) -> list[float]:
        return reward(prompts, completions, kind, **kwargs)

    return kind_score


def train(
    tmp: Path,
    applied: list[AppliedSkill],
    *,
    problems: list[tuple[int, int, str]] = PROBLEMS,
    reward_funcs: list[Any] | None = None,
    weights: list[float] | None = None,
    hooks: SkillHooks | None = None,
    steps: int = 2,
    max_completion_length: int = 6,
    loss_type: str = "dapo",
    batch_prompts: int | None = None,
) -> dict[str, Any]:
    import dataclasses

    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = build_tiny_tokenizer()
    model = build_tiny_causal_lm(tokenizer, seed=0)
    recorder = Recorder(tmp / "evidence", run_id="r1", phase="train")
    funcs = reward_funcs if reward_funcs is not None else [kind_reward()]
    activation = activate_skills(
        applied,
        hooks=hooks or SkillHooks(domain="custom"),
        reward_funcs=funcs,
        reward_weights=weights,
        max_completion_length=max_completion_length,
    )
    stops = sorted({tokenizer.eos_token_id, tokenizer.pad_token_id})
    wrapped = record_rewards(
        activation.reward_funcs,
        recorder=recorder,
        num_generations=G,
        weights=activation.reward_weights,
        task_id_column="task_id",
        eos_token_id=stops,
        model=model,
    )
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    config = GRPOConfig(
        **{
            (
                "activation_checkpointing"
                if "activation_checkpointing" in fields
                else "gradient_checkpointing"
            ): False
        },
        output_dir=str(tmp / "out"),
        use_cpu=True,
        bf16=False,
        fp16=False,
        seed=0,
        num_generations=G,
        per_device_train_batch_size=(batch_prompts or len(problems)) * G,
        max_completion_length=max_completion_length,
        max_steps=steps,
        learning_rate=1e-2,
        reward_weights=activation.reward_weights,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        loss_type=loss_type,
    )
    base = skill_trainer_class(GRPOTrainer, activation, recorder=recorder)

    class Capture(base):  # type: ignore[misc,valid-type]
        """Keeps a copy of every batch that reaches TRL's loss (the thing trained on)."""

        captured: ClassVar[list[dict[str, Any]]] = []

        def compute_loss(self, model: Any, inputs: Any, *args: Any, **kwargs: Any) -> Any:
            self.captured.append(
                {
                    k: v.detach().clone() if isinstance(v, torch.Tensor) else v
                    for k, v in inputs.items()
                }
            )
            return super().compute_loss(model, inputs, *args, **kwargs)

    Capture.captured = []
    trainer = Capture(
        model=model,
        reward_funcs=wrapped,
        args=config,
        train_dataset=Dataset.from_dict(
            {
                "prompt": [f"what is {a}+{b}?" for a, b, _ in problems],
                "answer": [str(a + b) for a, b, _ in problems],
                "kind": [k for _, _, k in problems],
                "task_id": [f"{k}-{a}-{b}" for a, b, k in problems],
            }
        ),
        processing_class=tokenizer,
        callbacks=[EvotreeCallback(recorder)],
    )
    trainer.train()
    recorder.close()
    return {
        "trainer": trainer,
        "tokenizer": tokenizer,
        "captured": Capture.captured,
        "rollouts": read_jsonl(tmp / "evidence" / "rollouts.jsonl"),
        "signals": read_jsonl(tmp / "evidence" / "signals.jsonl"),
        "activation": activation,
    }


def groups_by_step(rollouts: list[dict[str, Any]]) -> dict[int, list[list[dict[str, Any]]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rollouts:
        groups[row["group_id"]].append(row)
    out: dict[int, list[list[dict[str, Any]]]] = defaultdict(list)
    for members in groups.values():
        out[members[0]["step"]].append(members)
    return out


def reward_std(members: list[dict[str, Any]]) -> float:
    values = [math.nan if r["reward"] is None else r["reward"] for r in members]
    return group_stds(values, len(values))[0]


def signal(signals: list[dict[str, Any]], step: int, name: str) -> Any:
    values = [s["value"] for s in signals if s["step"] == step and s["metric"] == name]
    assert len(values) == 1, (step, name, values)
    return values[0]


def kept_rows(batch: dict[str, Any]) -> torch.Tensor:
    return batch["completion_mask"].sum(1) > 0


def decoded(tokenizer: Any, batch: dict[str, Any], rows: torch.Tensor) -> list[str]:
    out = []
    for ids, mask in zip(
        batch["completion_ids"][rows], batch["completion_mask"][rows], strict=True
    ):
        out.append(tokenizer.decode(ids[mask.bool()].tolist(), skip_special_tokens=True))
    return sorted(out)


def slice_rows(batch: dict[str, Any], rows: torch.Tensor) -> dict[str, Any]:
    n = rows.shape[0]
    return {
        k: (v[rows] if isinstance(v, torch.Tensor) and v.dim() >= 1 and v.shape[0] == n else v)
        for k, v in batch.items()
    }


# ------------------------------------------------------------------------------ StdGroupFilter
@pytest.fixture(scope="module")
def std_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two steps with StdGroupFilter refilling from up to 2 extra generation batches a step,
    sampling the dropped prompts again (refill = "same")."""
    problems = [(2, 3, "dead"), (1, 1, "alive"), (4, 4, "flaky"), (3, 5, "alive")]
    return train(
        tmp_path_factory.mktemp("std"),
        [
            AppliedSkill(
                "StdGroupFilter", {"min_std": 0.0, "max_resample_batches": 2, "refill": "same"}
            )
        ],
        problems=problems,
    )


def test_std_group_filter_zero_std_groups_have_zero_weight(std_run: dict[str, Any]) -> None:
    trainer, signals = std_run["trainer"], std_run["signals"]
    assert trainer.state.global_step == 2 and len(std_run["captured"]) == 2
    by_step = groups_by_step(std_run["rollouts"])
    for step, batch in zip((1, 2), std_run["captured"], strict=True):
        groups = by_step[step]
        zero = [m for m in groups if reward_std(m) <= 0.0]
        live = [m for m in groups if reward_std(m) > 0.0]
        # the dead prompt is always a zero-std group, and the recorded counts match the rollouts
        # (every scored group, the refills' included)
        assert "dead-2-3" in {m[0]["task_id"] for m in zero}
        assert signal(signals, step, "skill/StdGroupFilter/dropped") == len(zero)
        assert signal(signals, step, "skill/StdGroupFilter/kept") == len(live)
        assert signal(signals, step, "skill/StdGroupFilter/groups") == len(groups) > 4
        # what reached the loss: the zero-std groups' samples have no tokens and no advantage
        rows = kept_rows(batch)
        assert int((~rows).sum()) == G * (4 - len(live))
        assert torch.all(batch["advantages"][~rows] == 0)
        assert decoded(std_run["tokenizer"], batch, rows) == sorted(
            r["text"] for m in live for r in m
        )
        # the loss's token count covers only the kept samples
        assert int(batch["num_items_in_batch"]) == int(batch["completion_mask"].sum())
        assert int(batch["num_items_in_batch"]) == sum(r["length"] for m in live for r in m)


def test_std_group_filter_dropped_groups_contribute_nothing_to_the_loss(
    std_run: dict[str, Any],
) -> None:
    """TRL's loss on the filtered batch equals its loss on the kept samples alone: the dropped
    groups have zero weight (they do not even dilute the token normalisation)."""
    trainer = std_run["trainer"]
    batch = std_run["captured"][-1]
    rows = kept_rows(batch)
    assert 0 < int(rows.sum()) < rows.shape[0]
    with torch.no_grad():
        full = trainer.compute_loss(trainer.model, batch)
        alone = trainer.compute_loss(trainer.model, slice_rows(batch, rows))
    assert torch.isclose(full, alone, rtol=1e-5, atol=1e-7), (full, alone)


def test_std_group_filter_refills_from_extra_generation_batches(std_run: dict[str, Any]) -> None:
    """Step 1: flaky is dead when first scored, varies when sampled again; dead never varies."""
    out = std_run
    signals = out["signals"]
    groups = groups_by_step(out["rollouts"])[1]
    zero = [m for m in groups if reward_std(m) <= 0.0]
    # scored: 4 groups, then the 2 dropped ones again (flaky now varies), then dead alone again
    assert len(groups) == 4 + 2 + 1
    assert signal(signals, 1, "skill/StdGroupFilter/resample_batches") == 2
    assert signal(signals, 1, "skill/StdGroupFilter/refilled") == 1
    assert signal(signals, 1, "skill/StdGroupFilter/dropped") == len(zero) == 4  # dead x3, flaky x1
    assert signal(signals, 1, "skill/StdGroupFilter/kept") == 3
    # the batch trained on holds the refilled group's completions, and only kept groups
    batch = out["captured"][0]
    rows = kept_rows(batch)
    assert int(rows.sum()) == 3 * G
    live = [m for m in groups if reward_std(m) > 0.0]
    assert [m[0]["task_id"] for m in live].count("flaky-4-4") == 1
    assert decoded(out["tokenizer"], batch, rows) == sorted(r["text"] for m in live for r in m)
    assert int(batch["num_items_in_batch"]) == sum(r["length"] for m in live for r in m)


def test_std_group_filter_refills_with_fresh_prompts(tmp_path: Path) -> None:
    """DAPO's dynamic sampling (the default): dropped groups are replaced by groups of prompts
    the step had not drawn, never by the dropped prompts again, and the extra generation is
    counted."""
    problems = [
        (2, 3, "dead"),
        (4, 4, "dead"),
        (1, 1, "alive"),
        (3, 5, "alive"),
        (2, 2, "alive"),
        (1, 4, "alive"),
        (5, 5, "alive"),
        (3, 3, "alive"),
    ]
    skill = get_skill("StdGroupFilter")
    params = skill.defaults()
    assert params["refill"] == "fresh" and params["max_resample_batches"] >= 1
    out = train(
        tmp_path,
        [AppliedSkill("StdGroupFilter", params)],
        problems=problems,
        batch_prompts=4,
        steps=3,
    )
    signals, by_step = out["signals"], groups_by_step(out["rollouts"])
    refilled_any = False
    for step, batch in zip((1, 2, 3), out["captured"], strict=True):
        groups = by_step[step]
        first = groups[:4]  # the step's own batch is scored (and recorded) first
        first_ids = {m[0]["task_id"] for m in first}
        refills = groups[4:]
        dead_first = [m for m in first if reward_std(m) <= 0.0]
        if dead_first:
            assert refills, f"step {step}: dead groups and no refill"
        for m in refills:  # fresh prompts only: nothing the step had already drawn
            assert m[0]["task_id"] not in first_ids
        ids = [m[0]["task_id"] for m in refills]
        assert len(ids) == len(set(ids))
        generated = signal(signals, step, "skill/StdGroupFilter/generated_groups")
        assert generated == len(groups)
        assert signal(signals, step, "skill/StdGroupFilter/resample_batches") == (
            1 if refills else 0
        )
        refilled = signal(signals, step, "skill/StdGroupFilter/refilled")
        assert refilled == sum(reward_std(m) > 0.0 for m in refills)
        refilled_any |= refilled > 0
        # the loss sees the live groups of the batch and the live refills: all 4 places filled
        rows = kept_rows(batch)
        assert int(rows.sum()) == G * (4 - len(dead_first) + refilled)
        live = [m for m in first if reward_std(m) > 0.0] + [
            m for m in refills if reward_std(m) > 0.0
        ]
        assert decoded(out["tokenizer"], batch, rows) == sorted(r["text"] for m in live for r in m)
    assert refilled_any


def test_fresh_refill_needs_a_dataset_with_random_access() -> None:
    from evotree.harness.trl import _fresh_rows

    class NoIndex:
        train_dataset = iter([])

    with pytest.raises(SkillNotApplicable, match="random access") as caught:
        _fresh_rows(NoIndex(), 2, set(), 1, 0)
    assert "refill=same" in caught.value.fix


# ------------------------------------------------------------------------------ DualLevelFilter
def test_dual_level_filter_masks_groups_and_broken_samples(tmp_path: Path) -> None:
    def format_ok(text: str) -> bool:
        return text.strip()[:1].isdigit()

    out = train(
        tmp_path,
        [AppliedSkill("DualLevelFilter", get_skill("DualLevelFilter").defaults())],
        hooks=SkillHooks(domain="custom", format_ok=format_ok),
        steps=1,
        max_completion_length=3,
    )
    signals, report, batch = out["signals"], out["trainer"].evotree_last_batch, out["captured"][0]
    groups = groups_by_step(out["rollouts"])[1]
    live = [m for m in groups if reward_std(m) > 0.0]
    keep = [r for m in live for r in m if not r["truncated"] and format_ok(r["text"])]
    masked = [r for m in live for r in m if r["truncated"] or not format_ok(r["text"])]
    assert masked, "the tiny model at 3 tokens truncates some samples"
    assert signal(signals, 1, "skill/DualLevelFilter/dropped") == len(groups) - len(live)
    assert signal(signals, 1, "skill/DualLevelFilter/masked_samples") == len(masked)
    assert signal(signals, 1, "skill/DualLevelFilter/masked_truncated") == sum(
        r["truncated"] for r in masked
    )
    assert (
        signal(signals, 1, "skill/DualLevelFilter/kept_samples")
        == len(keep)
        == sum(report.keep_samples)
    )
    rows = kept_rows(batch)
    assert int(rows.sum()) == len(keep)
    assert decoded(out["tokenizer"], batch, rows) == sorted(r["text"] for r in keep)
    assert torch.all(batch["advantages"][~rows] == 0)


# ------------------------------------------------------------------------------ reward skills
def test_reward_skills_change_the_rewards_trained_on(tmp_path: Path) -> None:
    """OverlongPenalty, PartialPassReward and AuxRewardTerm with the math domain's hooks: each
    recorded component is the documented function of the rollout, TRL trained on their
    weighted sum, and TRL logged each new function."""
    from evotree.domains.math.data import is_well_formed
    from evotree.domains.math.rewards import answer_checks, make_reward_functions, skill_hooks

    tokenizer = build_tiny_tokenizer()
    stops = sorted({tokenizer.eos_token_id, tokenizer.pad_token_id})
    applied = [
        AppliedSkill("OverlongPenalty", {"max_length": 6, "cache_length": 3, "weight": 0.5}),
        AppliedSkill("PartialPassReward", {"min_fraction": 0.0}),
        AppliedSkill("AuxRewardTerm", {"term": "instruction_following", "weight": 0.1}),
    ]
    problems = [(2, 3, "a"), (11, 6, "a"), (4, 4, "a"), (13, 5, "a")]
    out = train(
        tmp_path,
        applied,
        problems=problems,
        reward_funcs=make_reward_functions(stops),
        weights=[1.0, 0.5],
        hooks=skill_hooks(stops, 6),
        steps=1,
    )
    assert out["activation"].reward_weights == [1.0, 0.5, 0.5, 0.1]
    rows = out["rollouts"]
    assert len(rows) == 4 * G
    answers = {f"a-{a}-{b}": a + b for a, b, _ in problems}
    for row in rows:
        comp = json.loads(row["components"])
        assert set(comp) == {
            "correctness",
            "format",
            "overlong_penalty",
            "aux_instruction_following",
        }
        assert comp["overlong_penalty"] == overlong_penalty(row["length"], 6, 3)
        checks = answer_checks(row["text"], answers[row["task_id"]])
        assert comp["correctness"] == pytest.approx(sum(checks) / len(checks))
        assert comp["aux_instruction_following"] == (
            1.0 if is_well_formed(row["text"]) and not row["truncated"] else 0.0
        )
        assert row["reward"] == pytest.approx(
            comp["correctness"]
            + 0.5 * comp["format"]
            + 0.5 * comp["overlong_penalty"]
            + 0.1 * comp["aux_instruction_following"]
        )
    assert any(json.loads(r["components"])["overlong_penalty"] < 0 for r in rows)
    # TRL trained on these rewards: its own logged mean reward is the mean of the recorded ones
    assert signal(out["signals"], 1, "reward") == pytest.approx(
        sum(r["reward"] for r in rows) / len(rows), rel=1e-5
    )
    metrics = {s["metric"] for s in out["signals"]}
    assert {"rewards/overlong_penalty/mean", "rewards/aux_instruction_following/mean"} <= metrics


def test_overlong_penalty_formula() -> None:
    # DAPO: 0 up to L_max - L_cache, linear to -1 at L_max, -1 beyond
    assert [overlong_penalty(n, 10, 4) for n in (0, 6, 7, 8, 10, 11)] == [
        0.0,
        0.0,
        -0.25,
        -0.5,
        -1.0,
        -1.0,
    ]


# ------------------------------------------------------------------------------ refusals
def test_skills_refuse_what_they_cannot_do() -> None:
    from evotree.skills.runtime import activate

    funcs = [kind_reward()]
    with pytest.raises(SkillNotApplicable, match="gym"):
        activate(
            [AppliedSkill("StdGroupFilter", {})],
            hooks=SkillHooks(domain="gym"),
            reward_funcs=funcs,
            reward_weights=None,
            max_completion_length=8,
        )
    with pytest.raises(SkillNotApplicable, match="no per-check results"):
        activate(
            [AppliedSkill("PartialPassReward", {})],
            hooks=SkillHooks(domain="custom"),
            reward_funcs=funcs,
            reward_weights=None,
            max_completion_length=8,
        )
    with pytest.raises(SkillNotApplicable, match="format check"):
        activate(
            [AppliedSkill("DualLevelFilter", {})],
            hooks=SkillHooks(domain="custom"),
            reward_funcs=funcs,
            reward_weights=None,
            max_completion_length=8,
        )
    from evotree.skills import InvalidSkillParam

    with pytest.raises(InvalidSkillParam, match="no auxiliary term 'politeness'"):
        activate(
            [AppliedSkill("AuxRewardTerm", {"term": "politeness"})],
            hooks=SkillHooks(domain="custom", aux_terms={"brevity": funcs[0]}),
            reward_funcs=funcs,
            reward_weights=None,
            max_completion_length=8,
        )


def test_the_seam_refuses_an_unsupported_trl(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import trl

    activation = activate_skills(
        [AppliedSkill("StdGroupFilter", {})],
        hooks=SkillHooks(),
        reward_funcs=[kind_reward()],
        reward_weights=None,
        max_completion_length=8,
    )

    class NotGRPO:  # a trainer without the two methods the seam overrides
        pass

    with pytest.raises(UnsupportedTRL, match="_calculate_rewards"):
        skill_trainer_class(
            NotGRPO, activation, recorder=Recorder(tmp_path, run_id="r", phase="train")
        )
    monkeypatch.setattr(trl, "__version__", "1.17.0")
    with pytest.raises(UnsupportedTRL, match="1.17.0"):
        activate_skills(
            [],
            hooks=SkillHooks(),
            reward_funcs=[kind_reward()],
            reward_weights=None,
            max_completion_length=8,
        )
