"""The files ``evotree init --domain math`` writes: recipe.toml, math.toml and the hidden judge/math.toml."""

from __future__ import annotations

import secrets

from evotree.core.config_template import toml_value
from evotree.domains.math.data import HIDDEN_SEED_MAX, HIDDEN_SEED_MIN

__all__ = ["MATH_TOML", "RECIPE_TOML", "draw_hidden_seeds", "render_judge_toml"]

RECIPE_TOML = """\
# v0 recipe of evotree's math domain: GRPO (trl.GRPOTrainer) on verifiable arithmetic.
# Every key is optional (the value shown is the default); an unknown key or a bad value makes
# the run an invalid submission (exit 65), which costs nothing. Reference: docs/domains/math.md
#
# The train phase (`python -P -m evotree.domains.math.train`) trains on the problems of math.toml and
# saves the model to output/model/; the judge samples it on hidden problems you never see.

# "tiny": a ~130K-parameter Llama built locally (evotree.harness.tiny_lm; no download), shaped by
# [tiny] and given a supervised warm-up on the train region's facts first ([warmup]: built once,
# cached outside the repository, shared by every version and run with the same settings).
# Or a Hugging Face causal LM that is already on this machine: a directory, or a model name in
# the local cache (it is never downloaded; no warm-up).
model = "tiny"
seed = 0

# GRPO (names as in trl.GRPOConfig)
# 5e-4 climbs from the warm model; 3e-3 collapses it onto one answer per prompt
learning_rate = 5e-4
max_steps = 200
# completions per prompt (a group); the group-relative advantage needs 2 or more
num_generations = 8
# completions per optimizer step: a multiple of num_generations (64 = 8 prompts x 8)
per_device_train_batch_size = 64
gradient_accumulation_steps = 1
# tokens a completion may have: " 40" plus the end-of-sequence token is 4 with the tiny tokenizer
max_completion_length = 5
temperature = 1.0
top_p = 1.0
# KL penalty against the initial model (0: no reference model is kept)
beta = 0.0
epsilon = 0.2
num_iterations = 1
# grpo, dr_grpo, bnpo, dapo, cispo, sapo, luspo, vespo
loss_type = "dapo"
# group, batch, none
scale_rewards = "group"
lr_scheduler_type = "linear"
warmup_steps = 0
weight_decay = 0.0
max_grad_norm = 1.0

# LoRA adapters (PEFT) instead of full fine-tuning; output/model/ then holds the merged model
# and output/adapter/ the adapter.
lora = false
lora_r = 8
lora_alpha = 16
lora_dropout = 0.0
lora_target_modules = ["q_proj", "v_proj"]

# Generate rollouts with vLLM (a CUDA GPU and `pip install "evotree[vllm]"` needed; refused on CPU).
# vLLM options (vllm_mode, vllm_gpu_memory_utilization, ...) go in [trl].
use_vllm = false

# torch threads on CPU; 0: one thread for models under 20M parameters (faster for tiny
# matrices, and robust on a busy machine), torch's default for larger ones
cpu_threads = 0

[rewards]
# weight of each reward function in the reward of a completion (TRL's reward_weights)
# correctness: 1 when the completion's first number is the answer, else 0
correctness = 1.0
# format: 0.5 for starting with a number, +0.25 for being only that number,
# +0.25 for ending with the end-of-sequence token (not cut off at max_completion_length)
format = 0.5

[tiny]
# shape of the tiny model (model = "tiny" only)
hidden_size = 64
num_layers = 2
num_heads = 4
num_kv_heads = 2
intermediate_size = 256

[warmup]
# the tiny model's supervised warm-up (model = "tiny" only), before GRPO: teacher forcing on every
# train-region fact of math.toml's operators and operand range (every phrasing; never a judge
# fact), stopped when its greedy accuracy on them reaches target_accuracy (measured every
# eval_every steps; max_steps is the cap). Cached outside the repository by a hash of everything
# that determines it (these settings, the data, [tiny], torch's version): the first run trains it
# (about a minute on 2 cores), every later run and version with the same hash loads it.
# enabled = false starts GRPO from random weights instead (it then learns the format only).
enabled = true
target_accuracy = 0.6
eval_every = 50
# also (the defaults): seed 0, learning_rate 3e-3, batch_size 64, max_steps 3000, weight_decay 0.0

[trl]
# any other trl.GRPOConfig field, passed through as is, e.g.
# mask_truncated_completions = true
"""

MATH_TOML = """\
# Train problems of evotree's math domain. This file belongs to your version: change it to
# train on other problems. Reference: docs/domains/math.md
#
# Problems are arithmetic facts ("what is 3+4?", "what is 3 plus 4?", ...) drawn
# deterministically from the seed. The judge asks hidden problems that no train split can
# contain: a fixed quarter of all facts is reserved for the judge and never drawn here, and
# seeds from {hidden_min} up are the judge's.

[train]
seed = 0
num_problems = 256
# operators among "+", "-", "*" (subtraction never goes below 0)
ops = ["+", "-"]
min_operand = 0
max_operand = 20
# share of problems phrased in words ("3 plus 4", "the sum of 3 and 4") rather than symbols
word_share = 0.3
""".format(hidden_min=f"{HIDDEN_SEED_MIN:_}")

_JUDGE_TOML = """\
# HIDDEN: the math judge's configuration. It lives in the judge store (refs/evotree/judge), in
# no checkout, and is written only into each run's judge directory ([eval].judge_paths in
# evotree.toml). Change it with: evotree judge export DIR, edit, evotree judge promote DIR.
#
# The seeds below were drawn at random when the workspace was created. Validation and held-out
# problems come from the judge's quarter of the facts (never in a train split); held-out skips
# every fact validation uses. Every version is judged on the same problems. With the operators
# and operands below the judge's quarter holds 118 facts: validation and held-out take them all.

[judge]
# samples per problem (k of Avg@k): each is scored 1 (correct) or 0
samples = 8
# unbiased pass@k estimates reported per split (each k <= samples)
pass_at = [1, 8]
# sampling of the judge (seeded: the same model gives the same scores)
temperature = 0.6
top_p = 0.95
max_new_tokens = 6
seed = 0
# prompts per generate() call
batch_size = 64
# torch threads on CPU; 0: one thread for models under 20M parameters, torch's default otherwise
cpu_threads = 0

[splits.validation]
seed = {validation_seed}
num_problems = 59
ops = ["+", "-"]
min_operand = 0
max_operand = 20
word_share = 0.3

[splits.heldout]
seed = {heldout_seed}
num_problems = 59
ops = ["+", "-"]
min_operand = 0
max_operand = 20
word_share = 0.3
"""


def draw_hidden_seeds() -> tuple[int, int]:
    """Two distinct random seeds in the judge's range (validation, held-out)."""
    rng = secrets.SystemRandom()
    first = rng.randint(HIDDEN_SEED_MIN, HIDDEN_SEED_MAX)
    second = first
    while second == first:
        second = rng.randint(HIDDEN_SEED_MIN, HIDDEN_SEED_MAX)
    return first, second


def render_judge_toml(validation_seed: int, heldout_seed: int) -> str:
    """The hidden judge/math.toml: the commented template (a TOML writer drops comments), its
    seeds written by toml_value."""
    return _JUDGE_TOML.format(
        validation_seed=toml_value(validation_seed), heldout_seed=toml_value(heldout_seed)
    )
