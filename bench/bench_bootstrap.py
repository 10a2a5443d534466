#!/usr/bin/env python
"""Benchmark: evotree.diagnostics.stats.paired_bootstrap against scipy.stats.bootstrap (paired, BCa).

Target: with B = 10,000 resamples and 500 tasks, the paired BCa bootstrap of a
mean difference is at least 2x faster than
``scipy.stats.bootstrap((a, b), stat, paired=True, method="BCa", vectorized=True)``, with CIs
that agree within Monte-Carlo error.

One fixed data set (per-task scores of two versions on the same 500 tasks, skewed per-task
differences so that BCa and percentile differ). Both run in the same process, in an order
rotated each repetition (the machine is noisy), each repetition with a fresh
``np.random.default_rng`` seed; medians and the median of the per-repetition ratios are
reported. The CIs of every repetition give each method's own Monte-Carlo spread of the CI
ends; the difference of the two methods' median ends is reported in units of the
Monte-Carlo standard error of one bootstrap (the per-repetition SD of the ends, pooled), and
next to it the normal-approximation MC SE that ``paired_bootstrap`` reports itself.

The general statistic path (any ``statistic(x, axis=-1)``; here a wrapper of np.mean, so
no pairwise-sum table) is timed as well. Run:

    .venv/bin/python bench/bench_bootstrap.py [--tasks 500] [--B 10000] [--repeats 21] [--others]
        [--json PATH]

``--others`` times stratified_bootstrap_ci(iqm) and probability_of_improvement at the same size.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import benchlib as bl  # first: shared timing helpers (interleave, summary, paired_ratio)
import numpy as np
import scipy
import scipy.stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from evotree.diagnostics.seed_stats import iqm, probability_of_improvement, stratified_bootstrap_ci
from evotree.diagnostics.stats import paired_bootstrap

TARGET_SPEEDUP = 2.0


def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y, axis=axis) - np.mean(x, axis=axis)


def make_data(n_tasks: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-task scores of A and B in [0, 1]; B is a little better, with skewed gains."""
    rng = np.random.default_rng(seed)
    a = rng.beta(2.0, 3.0, n_tasks)
    gain = rng.gamma(1.5, 0.03, n_tasks) - 0.03 + rng.normal(0.0, 0.05, n_tasks)
    return a, np.clip(a + gain, 0.0, 1.0)


def time_others(n_tasks: int, B: int, seed: int, repeats: int = 5) -> dict[str, float]:
    """Median seconds of the other resampling functions on (seeds, n_tasks) score matrices."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(size=(5, n_tasks))
    b = rng.uniform(size=(3, n_tasks)) + 0.01
    cases = {
        "stratified_bootstrap_ci(iqm), 5 runs": lambda: stratified_bootstrap_ci(
            a, iqm, rng=rng, B=B
        ),
        "probability_of_improvement, 5 vs 3 runs": lambda: probability_of_improvement(
            a, b, rng=rng, B=B
        ),
    }
    paired_bootstrap(a[0], b[0], rng=rng, B=B)  # warm-up, untimed
    out: dict[str, float] = {}
    print(f"\nother functions, {n_tasks} tasks, B = {B:,} (median of {repeats})")
    for name, call in cases.items():
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            call()
            times.append(time.perf_counter() - t0)
        out[name] = statistics.median(times)
        print(f"  {name:56} {out[name] * 1000:8.1f} ms")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--B", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="also write the results as JSON here")
    parser.add_argument(
        "--others", action="store_true", help="also time the other bootstraps at the same size"
    )
    args = parser.parse_args()
    load_at_start = bl.os.getloadavg()

    a, b = make_data(args.tasks, args.seed)
    cis: dict[str, list[tuple[float, float]]] = {"evotree": [], "scipy": []}
    reported_mc: list[tuple[float, float]] = []
    methods: set[str] = set()
    seeds = iter(range(1_000_000))

    def ours() -> float:
        rng = np.random.default_rng(next(seeds))
        t0 = time.perf_counter()
        res = paired_bootstrap(a, b, B=args.B, confidence=args.confidence, rng=rng)
        elapsed = time.perf_counter() - t0
        cis["evotree"].append(res.ci)
        reported_mc.append(res.mc_se)
        methods.add(res.method)
        return elapsed

    def plain_mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.mean(x, axis=axis)

    def ours_plain() -> float:
        # a statistic that is not np.mean itself: the general path (one index per task drawn)
        rng = np.random.default_rng(next(seeds))
        t0 = time.perf_counter()
        paired_bootstrap(a, b, statistic=plain_mean, B=args.B, confidence=args.confidence, rng=rng)
        return time.perf_counter() - t0

    def theirs() -> float:
        rng = np.random.default_rng(next(seeds))
        t0 = time.perf_counter()
        res = scipy.stats.bootstrap(
            (a, b),
            mean_difference,
            paired=True,
            vectorized=True,
            n_resamples=args.B,
            confidence_level=args.confidence,
            method="BCa",
            rng=rng,
        )
        elapsed = time.perf_counter() - t0
        ci = res.confidence_interval
        cis["scipy"].append((float(ci.low), float(ci.high)))
        return elapsed

    samples = bl.interleave(
        {
            "evotree paired_bootstrap": ours,
            "evotree, general statistic path": ours_plain,
            "scipy.stats.bootstrap": theirs,
        },
        repeats=args.repeats,
        warmup=args.warmup,
        label="bootstrap",
    )
    for name in cis:  # drop the warm-up repetitions' CIs
        cis[name] = cis[name][args.warmup :]
    reported_mc = reported_mc[args.warmup :]
    ours_s, theirs_s = samples["evotree paired_bootstrap"], samples["scipy.stats.bootstrap"]
    speedup = 1.0 / bl.paired_ratio(ours_s, theirs_s)
    median_speedup = statistics.median(theirs_s) / statistics.median(ours_s)
    plain_s = samples["evotree, general statistic path"]
    plain_speedup = 1.0 / bl.paired_ratio(plain_s, theirs_s)

    bl.print_table(
        f"paired BCa bootstrap of mean(b - a): {args.tasks} tasks, B = {args.B:,}",
        [(name, bl.summary(s)) for name, s in samples.items()],
        note=f"speed-up (median of per-repetition ratios): {speedup:.2f}x "
        f"(ratio of medians {median_speedup:.2f}x); target >= {TARGET_SPEEDUP:.0f}x; "
        f"general statistic path: {plain_speedup:.2f}x",
    )

    agreement: dict[str, Any] = {}
    print(f"\nconfidence intervals ({args.confidence:.0%}), median over {args.repeats} runs each")
    print(
        f"  {'end':5} {'evotree':>12} {'scipy':>12} {'diff':>11} {'MC SE':>10} "
        f"{'diff/MC SE':>10} {'reported MC SE':>14}"
    )
    for end, label in enumerate(("low", "high")):
        mine = [ci[end] for ci in cis["evotree"]]
        ref = [ci[end] for ci in cis["scipy"]]
        # MC SE of one bootstrap's CI end: the SD of that end over repetitions, pooled
        mc_se = math.sqrt((statistics.variance(mine) + statistics.variance(ref)) / 2)
        # the difference of two medians of r runs each has SD ~ mc_se * sqrt(2 / r) * 1.25
        diff = statistics.median(mine) - statistics.median(ref)
        reported = statistics.median(m[end] for m in reported_mc)
        agreement[label] = {
            "evotree_median": statistics.median(mine),
            "scipy_median": statistics.median(ref),
            "difference": diff,
            "mc_se_one_bootstrap": mc_se,
            "difference_in_mc_se": diff / mc_se if mc_se else 0.0,
            "reported_mc_se": reported,
            "first_run": {"evotree": mine[0], "scipy": ref[0]},
        }
        print(
            f"  {label:5} {statistics.median(mine):12.6f} {statistics.median(ref):12.6f} "
            f"{diff:+11.2e} {mc_se:10.2e} {diff / mc_se:+10.2f} {reported:14.2e}"
        )
    ends = [agreement[label] for label in ("low", "high")]
    one_run = [(e["first_run"]["evotree"], e["first_run"]["scipy"]) for e in ends]
    in_mc_se = [(m - r) / e["mc_se_one_bootstrap"] for (m, r), e in zip(one_run, ends)]
    print(
        f"  one run side by side: evotree ({one_run[0][0]:.6f}, {one_run[1][0]:.6f})"
        f"  scipy ({one_run[0][1]:.6f}, {one_run[1][1]:.6f});"
        f" difference {in_mc_se[0]:+.2f} / {in_mc_se[1]:+.2f} MC SE"
        " (two independent runs: SD sqrt(2) = 1.41 MC SE)"
    )
    agreement["first_run_difference_in_mc_se"] = in_mc_se
    print(f"  evotree method(s) used: {sorted(methods)}; delta = {np.mean(b - a):.6f}")

    others = time_others(args.tasks, args.B, args.seed) if args.others else {}

    ok = speedup >= TARGET_SPEEDUP
    print(f"\n{'PASS' if ok else 'FAIL'}: {speedup:.2f}x faster (target >= {TARGET_SPEEDUP:.0f}x)")
    bl.write_json(
        args.json,
        {
            "benchmark": "bootstrap",
            "target_speedup": TARGET_SPEEDUP,
            "environment": {
                "python": sys.version.split()[0],
                "numpy": np.__version__,
                "scipy": scipy.__version__,
                "cpus": bl.os.cpu_count(),
                "loadavg_at_start": load_at_start,
                "loadavg_at_end": bl.os.getloadavg(),
            },
            "params": vars(args),
            "seconds": {name: bl.summary(s) for name, s in samples.items()},
            "speedup_median_of_ratios": speedup,
            "speedup_ratio_of_medians": median_speedup,
            "speedup_general_statistic_path": plain_speedup,
            "ci_agreement": agreement,
            "methods_used": sorted(methods),
            "other_functions_seconds": others,
            "pass": ok,
        },
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
