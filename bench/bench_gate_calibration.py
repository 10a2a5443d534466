"""Calibration and power of the promotion gate on a simulated tree (gates/calibration.py).

    .venv/bin/python bench/bench_gate_calibration.py [--quick]

Prints a Markdown section: the gate's false-promotion rate on neutral changes (one look, and
with an agent adding seeds and looking again), its power by true gain and seeds per side, and a
tree of improvement loops under three strategies on the same candidates: greedy keep-if-better
on one run, a strict single-seed gate, and the evotree gate. Noise model: a 77-task pool, Avg@4
per task, between-seed SD 0.03 of success probability shared by a run's tasks, per-(seed, task)
jitter SD 0.02; candidates are neutral (60 %), +0.03 (20 %) or -0.03 (20 %).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evotree.gates.calibration import neutral_false_promotion_rate, power_at, simulate_tree
from evotree.gates.score import ScoreRule


def _ci(hits: int, n: int) -> str:
    from scipy import stats

    lo, hi = stats.binomtest(hits, n).proportion_ci(0.95)
    return f"{hits / n:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer trials (a smoke run)")
    args = parser.parse_args()
    k = 0.2 if args.quick else 1.0
    started = time.monotonic()
    alpha = 0.05
    print("### Gate calibration (bench/bench_gate_calibration.py)\n")
    print(f"alpha = {alpha}, min_delta = 0, min_tasks = 20; rates with 95 % Clopper-Pearson intervals.\n")
    print("| check | trials | false promotions |")
    print("|---|---|---|")
    single = ScoreRule(alpha=alpha, min_seeds=3, max_runs=3)
    n = int(3000 * k)
    print(f"| neutral, 3 seeds per side, one look | {n} | {_ci(*neutral_false_promotion_rate(n, single, seed=1))} |")
    seq = ScoreRule(alpha=alpha, min_seeds=3, max_runs=12)
    n = int(1000 * k)
    print(f"| neutral, 3 more seeds per look until pass, up to 12 | {n} | "
          f"{_ci(*neutral_false_promotion_rate(n, seq, seed=2, sequential=True))} |")
    print("\nPower (share of real gains promoted), one look:\n")
    effects = (0.01, 0.02, 0.03, 0.05, 0.10)
    print("| seeds per side | " + " | ".join(f"+{e:.2f}" for e in effects) + " |")
    print("|---|" + "---|" * len(effects))
    n = int(400 * k)
    for seeds in (3, 5, 10):
        rule = ScoreRule(alpha=alpha, min_seeds=seeds, max_runs=seeds)
        cells = []
        for i, e in enumerate(effects):
            hits, m = power_at(e, n, rule, seed=100 + 10 * seeds + i)
            cells.append(f"{hits / m:.2f}")
        print(f"| {seeds} | " + " | ".join(cells) + " |")
    hits, m = power_at(0.03, n, seq, seed=7, sequential=True)
    print(f"\nSequential (3 seeds per look, up to 12), gain +0.03: power {hits / m:.2f} ({m} trials).\n")
    loops = int(500 * k)
    print(f"Tree of {loops} loops × 10 candidates (same candidates for each strategy):\n")
    print("| strategy | runs | false-promotion rate | power | loops ending below own peak | mean final true gain |")
    print("|---|---|---|---|---|---|")
    rule = ScoreRule(alpha=alpha, min_seeds=3, max_runs=3)
    for strategy in ("greedy", "single_seed", "gate"):
        s = simulate_tree(strategy, loops=loops, steps=10, rule=rule, seed=42)
        print(f"| {strategy} | {s.runs} | {s.false_promotion_rate:.3f} | {s.power:.3f} | {s.below_peak_fraction:.3f} |"
              f" {s.mean_final_quality:+.4f} |")
    print(f"\n({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
