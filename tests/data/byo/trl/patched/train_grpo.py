"""GRPO with TRL: teach a small instruct model to answer one-digit sums, briefly."""

import argparse

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

from evotree.harness import get_recorder, seed_everything
from evotree.harness.trl import EvotreeCallback, record_rewards


def correct(completions, answer, **kwargs):
    return [1.0 if a in c else 0.0 for c, a in zip(completions, answer)]


def brief(completions, **kwargs):
    return [-len(c) / 100 for c in completions]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)  # None: the run's seed
    parser.add_argument("--output-dir", default="grpo-out")
    args = parser.parse_args()
    seed = seed_everything(args.seed)
    rec = get_recorder()

    pairs = [(a, b) for a in range(10) for b in range(10)]
    dataset = Dataset.from_dict({
        "prompt": [f"What is {a}+{b}? Answer with the number only." for a, b in pairs],
        "answer": [str(a + b) for a, b in pairs],
    })
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model)
    config = GRPOConfig(
        output_dir=args.output_dir, max_steps=args.steps, seed=seed,
        num_generations=4, per_device_train_batch_size=8, max_completion_length=16,
        learning_rate=1e-6, logging_steps=1, report_to="none", save_strategy="no",
        bf16=torch.cuda.is_available(), use_cpu=not torch.cuda.is_available(),
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=record_rewards([correct, brief], recorder=rec, model=model,
                                    num_generations=config.num_generations,
                                    weights=config.reward_weights),
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[EvotreeCallback(rec)],
    )
    trainer.train()
    trainer.save_model(args.output_dir)


if __name__ == "__main__":
    main()
