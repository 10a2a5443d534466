#!/usr/bin/env python
"""Benchmark: the cost of evotree's recorder + TRL hooks on a GRPO step of the tiny model.

Target: the hooks add at most 3% to a GRPO step.

The same tiny GRPO training (evotree.harness.tiny_lm model, same seed, --steps optimizer steps of
--prompts prompts x --generations completions, CPU, one torch thread) runs in three arms, in an
order rotated every repetition, for --repeats repetitions:

* ``bare``       — trl.GRPOTrainer with the plain reward functions;
* ``hooks``      — the same, with the reward functions wrapped by ``record_rewards`` and an
  ``EvotreeCallback``, writing signals and rollouts to a fresh evidence folder;
* ``bare-again`` — ``bare`` once more: an A/A control, whose ratio to ``bare`` shows how much
  of any difference the machine's noise alone produces.

Per step (wall clock, the first step of each run left out as warm-up) three times are kept:
the whole step (on_step_end to on_step_end), the part inside the step (generation, reward
functions, update) and the part between steps (logging, where the signals are recorded).
Reported per arm: medians and 10th percentiles (the least disturbed by other processes), their
ratios to ``bare``, and the median of the per-repetition ratios. Then --timed-runs more runs of
the ``hooks`` arm time the hooks themselves (every call into EvotreeCallback and the reward
wrappers, the reward functions' own time subtracted): that direct cost per step, over the bare
median step, is the overhead measured without the noise of whole steps. The benchmark also
checks that both arms end with bit-identical weights (the hooks do not change training). Run:

    .venv/bin/python bench/bench_recorder_overhead.py [--repeats 15] [--steps 10] [--json PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET = 0.03
PROBLEMS = [(a, b) for a in range(1, 10) for b in range(1, 10)][:32]


def correct(prompts, completions, answer, **kwargs):
    out = []
    for completion, expected in zip(completions, answer, strict=True):
        digits = "".join(ch for ch in completion.strip().split(" ")[0] if ch.isdigit())
        out.append(1.0 if digits == expected else 0.0)
    return out


def fmt(completions, **kwargs):
    return [
        round(sum(ch in "0123456789+-*= " for ch in c) / len(c), 4)
        if any(ch.isdigit() for ch in c)
        else None
        for c in completions
    ]


#: What is timed per step (wall clock): the whole step (from one on_step_end to the next), the
#: part inside the step (on_step_begin to on_step_end: generation, reward functions and the
#: update), and the part between steps (on_step_end to the next on_step_begin: logging, where
#: EvotreeCallback.on_log runs).
CLOCKS = ("step", "in-step", "between")


class StepClock:
    """perf_counter at every on_step_begin and on_step_end (added last, in both arms)."""

    def __init__(self) -> None:
        from transformers import TrainerCallback

        begins: list[float] = []
        ends: list[float] = []
        self.begins, self.ends = begins, ends

        class _Clock(TrainerCallback):
            def on_step_begin(self, args, state, control, **kw):
                begins.append(time.perf_counter())

            def on_step_end(self, args, state, control, **kw):
                ends.append(time.perf_counter())

        self.callback = _Clock()

    def step_times(self) -> dict[str, list[float]]:
        """Per clock, the times of steps 2..N (step 1 includes warm-up)."""
        b, e = self.begins, self.ends
        n = min(len(b), len(e))
        return {
            "step": [e[i] - e[i - 1] for i in range(1, n)],
            "in-step": [e[i] - b[i] for i in range(1, n)],
            "between": [b[i] - e[i - 1] for i in range(1, n)],
        }


class HookTimer:
    """Wall time inside the hooks' entry points, per call (reward functions' time excluded)."""

    def __init__(self) -> None:
        self.calls: dict[str, list[float]] = {}  # kind -> seconds of hook work per call
        self.steady = 0.0  # hook seconds after a run's second step (files already open)
        self.steady_steps = 0  # steps those seconds cover
        self._user = 0.0  # running total inside the user's reward functions
        self._step_ends = 0  # on_step_end calls in the current run

    def new_run(self, steps: int) -> None:
        self._step_ends = 0
        self.steady_steps += steps - 2

    def wrap(self, obj: Any, name: str) -> None:
        setattr(obj, name, self.timed(getattr(obj, name), kind=name))

    def timed(self, func: Any, *, kind: str | None) -> Any:
        """``func`` timed as a hook call of ``kind`` (the reward functions' time subtracted), or,
        with ``kind=None``, as the user's reward-function time."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            user_before = self._user
            t0 = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - t0
                if kind is None:
                    self._user += elapsed
                else:
                    own = elapsed - (self._user - user_before)
                    self.calls.setdefault(kind, []).append(own)
                    if self._step_ends >= 2:  # steps 1-2 open the evidence files (once per run)
                        self.steady += own
                    if kind == "on_step_end":
                        self._step_ends += 1

        timed.__name__ = getattr(func, "__name__", "hook")  # TRL names reward functions by __name__
        return timed

    def all_calls(self) -> list[float]:
        return [t for times in self.calls.values() for t in times]


def one_run(
    arm: str,
    *,
    steps: int,
    prompts: int,
    generations: int,
    completion_len: int,
    seed: int,
    workdir: Path,
    timer: HookTimer | None = None,
) -> dict[str, Any]:
    from datasets import Dataset
    from transformers import PrinterCallback, ProgressCallback
    from trl import GRPOConfig, GRPOTrainer

    from evotree.harness.recorder import Recorder
    from evotree.harness.tiny_lm import build_tiny_causal_lm, build_tiny_tokenizer
    from evotree.harness.trl import EvotreeCallback, record_rewards

    tokenizer = build_tiny_tokenizer()
    model = build_tiny_causal_lm(tokenizer, seed=seed)
    dataset = Dataset.from_dict(
        {
            "prompt": [f"what is {a}+{b}?" for a, b in PROBLEMS],
            "answer": [str(a + b) for a, b in PROBLEMS],
            "task_id": [f"add-{a}-{b}" for a, b in PROBLEMS],
        }
    )
    fields = {f.name for f in dataclasses.fields(GRPOConfig)}
    no_ckpt = {
        (
            "activation_checkpointing"
            if "activation_checkpointing" in fields
            else "gradient_checkpointing"
        ): False
    }
    out = Path(tempfile.mkdtemp(dir=workdir, prefix=f"{arm}-"))
    config = GRPOConfig(
        output_dir=str(out / "out"),
        use_cpu=True,
        bf16=False,
        fp16=False,
        seed=seed,
        **no_ckpt,
        num_generations=generations,
        per_device_train_batch_size=prompts * generations,
        max_completion_length=completion_len,
        max_steps=steps,
        learning_rate=1e-2,
        reward_weights=[1.0, 0.5],
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
    )
    clock = StepClock()
    reward_funcs: list[Any] = [correct, fmt]
    callbacks: list[Any] = []
    recorder = None
    if arm.startswith("hooks"):
        recorder = Recorder(out / "evidence", run_id=out.name, phase="train")
        if timer is not None:  # the reward functions' own time is subtracted from the hooks'
            reward_funcs = [timer.timed(f, kind=None) for f in reward_funcs]
        reward_funcs = record_rewards(
            reward_funcs,
            recorder=recorder,
            num_generations=generations,
            weights=[1.0, 0.5],
            task_id_column="task_id",
            eos_token_id=tokenizer.eos_token_id,
            model=model,
        )
        callback = EvotreeCallback(recorder)
        if timer is not None:
            for name in ("on_log", "on_step_end"):
                timer.wrap(callback, name)
            reward_funcs = [timer.timed(f, kind="reward wrapper") for f in reward_funcs]
        callbacks.append(callback)
    callbacks.append(clock.callback)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=reward_funcs,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=callbacks,
    )
    for printer in (PrinterCallback, ProgressCallback):  # console output is noise, in both arms
        trainer.remove_callback(printer)
    trainer.train()
    result = {
        "step_times": clock.step_times(),
        "weights": [p.detach().clone() for p in model.parameters()],
    }
    if recorder is not None:
        recorder.close()
        result["rows"] = dict(recorder.rows)
    return result


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--repeats",
        type=int,
        default=15,
        help="repetitions of the three arms (bare, hooks, bare-again)",
    )
    parser.add_argument("--warmup", type=int, default=1, help="repetitions run first, discarded")
    parser.add_argument(
        "--timed-runs", type=int, default=5, help="runs that time the hooks directly"
    )
    parser.add_argument("--steps", type=int, default=10, help="optimizer steps per run")
    parser.add_argument("--prompts", type=int, default=2, help="prompts per step")
    parser.add_argument("--generations", type=int, default=4)
    parser.add_argument("--completion-len", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (1: the tiny model gains nothing from more, and a "
        "shared 2-core machine adds less noise)",
    )
    parser.add_argument("--json", help="write the results here as JSON")
    args = parser.parse_args()

    import torch
    import transformers
    import trl

    from evotree.harness.trl import check_trl_version

    check_trl_version()
    torch.set_num_threads(args.threads)
    shape = {
        "steps": args.steps,
        "prompts": args.prompts,
        "generations": args.generations,
        "completion_len": args.completion_len,
        "seed": args.seed,
    }
    # "bare-again" is an A/A control: its ratio to "bare" is the measurement's noise floor
    arms = ["bare", "hooks", "bare-again"]
    # per clock and arm: every measured step of every run; per clock: per-repetition ratios
    steps = {clock: {arm: [] for arm in arms} for clock in CLOCKS}
    ratios = {clock: {"hooks": [], "bare-again": []} for clock in CLOCKS}
    identical = True
    timer = HookTimer()
    with tempfile.TemporaryDirectory(prefix="evotree-bench-trl-") as tmp:
        work = Path(tmp)
        for rep in range(args.warmup + args.repeats):
            shift = rep % len(arms)
            runs = {arm: one_run(arm, workdir=work, **shape) for arm in arms[shift:] + arms[:shift]}
            identical = identical and all(
                torch.equal(a, b)
                for a, b in zip(runs["bare"]["weights"], runs["hooks"]["weights"], strict=True)
            )
            if rep < args.warmup:
                continue
            for clock in CLOCKS:
                medians = {
                    arm: statistics.median(r["step_times"][clock]) for arm, r in runs.items()
                }
                for arm in arms:
                    steps[clock][arm].extend(runs[arm]["step_times"][clock])
                for arm, values in ratios[clock].items():
                    values.append(medians[arm] / medians["bare"])
            walls = {arm: statistics.median(runs[arm]["step_times"]["step"]) for arm in arms}
            print(
                f"  repetition {rep + 1 - args.warmup}/{args.repeats}: median wall step "
                + ", ".join(f"{arm} {walls[arm] * 1e3:.1f} ms" for arm in arms),
                file=sys.stderr,
                flush=True,
            )
        for _ in range(args.timed_runs):
            timer.new_run(args.steps)
            rows = one_run("hooks", workdir=work, timer=timer, **shape)["rows"]

    summary: dict[str, Any] = {}
    for clock in CLOCKS:
        med = {arm: statistics.median(samples) for arm, samples in steps[clock].items()}
        p10 = {arm: percentile(samples, 0.10) for arm, samples in steps[clock].items()}
        summary[clock] = {
            "median_step_ms": {arm: value * 1e3 for arm, value in med.items()},
            "p10_step_ms": {arm: value * 1e3 for arm, value in p10.items()},
            "ratio_of_p10": {arm: p10[arm] / p10["bare"] for arm in ("hooks", "bare-again")},
            "ratio_of_medians": {arm: med[arm] / med["bare"] for arm in ("hooks", "bare-again")},
            "median_paired_ratio": {arm: statistics.median(v) for arm, v in ratios[clock].items()},
            "paired_ratio_range": {arm: [min(v), max(v)] for arm, v in ratios[clock].items()},
        }
    bare = summary["step"]["median_step_ms"]["bare"] / 1e3
    calls = timer.all_calls()
    total_steps = args.steps * args.timed_runs
    hook_mean = sum(calls) / total_steps  # every call, each run's first (set-up) calls included
    hook_steady = timer.steady / timer.steady_steps  # steps 3..N: evidence files already open
    per_kind = {
        kind: {
            "calls_per_step": len(t) / total_steps,
            "us_per_step": sum(t) / total_steps * 1e6,
            "median_us": statistics.median(t) * 1e6,
            "max_us": max(t) * 1e6,
        }
        for kind, t in timer.calls.items()
    }
    result = {
        "target_overhead": TARGET,
        "command": ".venv/bin/python bench/bench_recorder_overhead.py " + " ".join(sys.argv[1:]),
        "shape": shape,
        "repetitions": args.repeats,
        **summary,
        "hook_ms_per_step_mean": hook_mean * 1e3,
        "hook_ms_per_step_after_step_2": hook_steady * 1e3,
        "hook_share_of_bare_step": {
            "all_steps": hook_mean / bare,
            "after_step_2": hook_steady / bare,
        },
        "hook_calls": per_kind,
        "evidence_rows_per_run": rows,
        "identical_weights": identical,
        "environment": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "trl": trl.__version__,
            "loadavg_at_end": os.getloadavg(),
        },
    }
    print(
        f"\nGRPO step of the tiny model ({args.prompts} prompts x {args.generations} "
        f"completions of <= {args.completion_len} tokens, {args.steps} steps/run, "
        f"{args.repeats} repetitions of bare / hooks / bare-again, torch threads "
        f"{args.threads})"
    )
    for clock in CLOCKS:
        info = summary[clock]
        print(
            f"  {clock:8} time, median ms: "
            + ", ".join(f"{arm} {ms:.3f}" for arm, ms in info["median_step_ms"].items())
            + "; 10th percentile ms: "
            + ", ".join(f"{arm} {ms:.3f}" for arm, ms in info["p10_step_ms"].items())
        )
        for arm in ("hooks", "bare-again"):
            low, high = info["paired_ratio_range"][arm]
            print(
                f"    {arm:10} / bare: ratio of medians {info['ratio_of_medians'][arm]:.4f}, "
                f"of 10th percentiles {info['ratio_of_p10'][arm]:.4f}, median paired ratio "
                f"{info['median_paired_ratio'][arm]:.4f} (range {low:.3f}..{high:.3f})"
                + ("   <- A/A: the noise floor" if arm == "bare-again" else "")
            )
    print(
        f"  hooks' own time: {hook_mean * 1e3:.3f} ms/step = {hook_mean / bare:.2%} of the bare "
        f"median step, over all steps; {hook_steady * 1e3:.3f} ms/step = "
        f"{hook_steady / bare:.2%} after step 2 (steps 1-2 open the evidence files)"
    )
    for kind, info in per_kind.items():
        print(
            f"    {kind:15}: {info['calls_per_step']:.1f} calls/step, {info['us_per_step']:.0f} "
            f"us/step; per call median {info['median_us']:.0f} us, max {info['max_us']:.0f} us"
        )
    print(f"  evidence per run: {rows['signals']} signal rows, {rows['rollouts']} rollout rows")
    print(f"  weights identical with and without hooks: {identical}")
    met = hook_mean / bare <= TARGET
    print(f"  target <= {TARGET:.0%} (hooks' own time, every call): {'met' if met else 'NOT met'}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
