"""Calibration and power of the score gate on a simulated version tree (gates/calibration.py).

    .venv/bin/python bench/bench_gate_calibration.py [--loops 1000] [--trials 2000] [--quick] [--json PATH]

Drives the real functions — :func:`evotree.diagnostics.stats.difference` (the one comparison),
:func:`evotree.diagnostics.stats.pooled_spread` and :func:`evotree.gates.score.decide_score` —
over improvement loops of 30 proposals (60 % harmful, 30 % neutral, 10 % helpful) on a 77-task
pool scored with 8 samples a task, at the default run-to-run spread and with the seed noise
doubled, and prints a Markdown section: the tree under greedy keep-if-better, the previous rule,
the gate and the gate with one lever off at a time; then single comparisons (neutral changes,
power at +0.5 and +1 run-to-run SD). The simulated agent does what the gate says.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evotree.gates.calibration import Levers, Proposals, SimModel, comparison_rate, simulate_tree
from evotree.gates.score import ScoreRule


def _rate(hits: int, n: int) -> str:
    from scipy import stats

    if n == 0:
        return "—"
    lo, hi = stats.binomtest(hits, n).proportion_ci(0.95)
    return f"{hits / n:.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--loops", type=int, default=1000, help="improvement loops per strategy and noise level"
    )
    parser.add_argument("--trials", type=int, default=2000, help="single comparisons per row")
    parser.add_argument("--quick", action="store_true", help="100 loops, 300 trials (a smoke run)")
    parser.add_argument("--json", type=Path, default=None, help="also write the numbers here")
    args = parser.parse_args()
    loops, trials = (100, 300) if args.quick else (args.loops, args.trials)
    started = time.monotonic()
    rule = ScoreRule()
    looks = rule.looks()
    out: dict[str, object] = {
        "loops": loops,
        "trials": trials,
        "rule": rule.__dict__,
        "looks": looks,
        "spent": list(rule.spent()),
        "thresholds": [rule.alpha_at(j) for j in range(1, len(looks) + 1)],
        "noise": {},
    }
    print(
        "### Score gate: calibration and power on a simulated tree (bench/bench_gate_calibration.py)\n"
    )
    print(
        f"Rule: one-sided alpha {rule.alpha}, looks at {list(looks)} candidate seeds, alpha spent "
        f"alpha·(s/{looks[-1]})^{rule.spending:g}, thresholds on p {', '.join(f'{a:.4f}' for a in out['thresholds'])} "
        f"({rule.boundaries} group-sequential), the champion re-run {rule.champion_seeds} times since its promotion, "
        f"futile below {rule.futility:.0%} conditional power were the true Δ {rule.optimism:g} SE above the observed "
        f"one, min_tasks {rule.min_tasks}, "
        f"budget {rule.max_runs} runs a version. {loops} loops × 30 proposals per row, {trials} trials per single "
        "comparison; rates with 95 % Clopper-Pearson intervals.\n"
    )
    one_look = ScoreRule(
        min_seeds=4, max_runs=8
    )  # looks: (4,): the whole alpha at 4 candidate seeds
    # the gate as first shipped: looks 1/4/16, each look tested at its share of alpha,
    # futile when the observed Δ is not above 0 or the conditional power at the observed Δ is below 10 %
    first = ScoreRule(schedule=(1, 4, 16), boundaries="shares", futility=0.1, optimism=0.0)
    variants = [
        (
            "greedy keep-if-better (one run vs the champion's recorded score)",
            "greedy",
            Levers(),
            rule,
        ),
        (
            "previous rule, one look (3 + 3 seeds, Welch, alpha 0.05 Pocock over 6 looks)",
            "previous",
            Levers(sequential=False),
            rule,
        ),
        ("previous rule, adding 3 + 3 seeds look by look", "previous", Levers(), rule),
        (
            "**gate** (pooled spread, one-sided 0.025, sequential, free champion re-runs)",
            "gate",
            Levers(),
            rule,
        ),
        (
            "gate as first shipped (looks 1/4/16, alpha shares, futile when Δ ≤ 0 or CP < 10 % at the "
            "observed Δ)",
            "gate",
            Levers(),
            first,
        ),
        (
            "gate with each look tested at its alpha share (no group-sequential thresholds)",
            "gate",
            Levers(),
            replace(rule, boundaries="shares"),
        ),
        (
            "gate with futility at the observed Δ (stop below 10 % conditional power)",
            "gate",
            Levers(),
            replace(rule, futility=0.1, optimism=0.0),
        ),
        (
            "gate without the pooled spread (each version's own; a second seed where it is unknown)",
            "gate",
            Levers(pooled=False),
            rule,
        ),
        (
            "gate with one look at 4 seeds (alpha 0.025 at once, no sequential seeds)",
            "gate",
            Levers(),
            one_look,
        ),
        (
            "gate with the champion's re-runs charged to its budget",
            "gate",
            Levers(free_champion_reruns=False),
            rule,
        ),
    ]
    for factor in (1, 2):
        model = SimModel(seed_sd=SimModel().seed_sd * factor)
        print(
            f"#### Seed noise ×{factor}: run-to-run SD of a run's mean score ≈ {100 * model.run_sd:.2f} points "
            f"(seed shift SD {100 * model.seed_sd:.1f}, per-task jitter {100 * model.jitter_sd:.0f}, "
            f"binomial eval noise of 8 samples)\n"
        )
        print(
            "| strategy | runs per loop (× greedy) | neutral promoted | first comparison, neutral promoted | "
            "harmful promoted | helpful promoted | loops below own peak | final true gain, points (× greedy) | "
            "deadlocked loops |"
        )
        print("|---|---:|---|---|---|---|---|---:|---:|")
        rows = {}
        greedy = None
        for label, strategy, levers, variant_rule in variants:
            t0 = time.monotonic()
            s = simulate_tree(
                strategy,
                loops=loops,
                model=model,
                levers=levers,
                rule=variant_rule,
                seed=17 + factor,
            )
            if strategy == "greedy":
                greedy = s
            assert greedy is not None
            rows[label] = {**s.to_dict(), "seconds": time.monotonic() - t0}
            print(
                f"| {label} | {s.runs_per_loop:.0f} ({s.runs_per_loop / greedy.runs_per_loop:.1f}×) | "
                f"{_rate(s.promoted_neutral, s.neutral)} | "
                f"{_rate(s.first_neutral_promoted, s.first_neutral) if strategy != 'greedy' else '—'} | "
                f"{_rate(s.promoted_harmful, s.harmful)} | {s.power:.3f} | {_rate(s.ended_below_peak, s.loops)} | "
                f"{100 * s.mean_final:+.2f} ± {100 * s.final_se:.2f} ({s.mean_final / greedy.mean_final:.2f}×) | "
                f"{s.deadlocked} |",
                flush=True,
            )
        print()
        noisy = simulate_tree(
            "gate",
            loops=max(50, loops // 2),
            model=model,
            seed=29 + factor,
            proposals=Proposals(noisy_share=0.3),
        )
        print(
            f"Heterogeneous tree (30 % of proposals twice as noisy as the rest; gate, {noisy.loops} loops): "
            f"neutral promoted {_rate(noisy.promoted_neutral, noisy.neutral)}, loops below own peak "
            f"{_rate(noisy.ended_below_peak, noisy.loops)}, final gain {100 * noisy.mean_final:+.2f} points.\n"
        )
        singles = {}
        print(
            "| one comparison (gate as shipped) | promoted | mean runs (champion re-runs included) |"
        )
        print("|---|---|---:|")
        sd = model.run_sd
        for label, effect, tree, noise in (
            ("neutral, in a tree (10 earlier versions × 3 runs)", 0.0, 10, 1.0),
            ("neutral, clean first comparison (no earlier runs)", 0.0, 0, 1.0),
            ("neutral, candidate twice as noisy as the tree", 0.0, 10, 2.0),
            ("+0.5 run-to-run SD, in a tree", 0.5 * sd, 10, 1.0),
            ("+1 run-to-run SD, in a tree", 1.0 * sd, 10, 1.0),
            ("+0.5 run-to-run SD, clean first comparison", 0.5 * sd, 0, 1.0),
            ("+1 run-to-run SD, clean first comparison", 1.0 * sd, 0, 1.0),
        ):
            hits, n, runs = comparison_rate(
                effect, trials, model=model, tree_versions=tree, noise=noise, seed=41 + factor
            )
            singles[label] = {"promoted": hits, "trials": n, "mean_runs": runs, "effect": effect}
            print(f"| {label} | {_rate(hits, n)} | {runs:.1f} |", flush=True)
        print()
        gate = rows[variants[3][0]]
        g = rows[variants[0][0]]
        first_hits, first_n = (
            singles["neutral, clean first comparison (no earlier runs)"]["promoted"],
            trials,
        )
        checks = [
            ("neutral changes promoted ≤ 2.5 % (tree)", gate["neutral_promotion_rate"] <= 0.025),
            (
                "neutral changes promoted ≤ 2.5 % (clean first comparison)",
                first_hits / first_n <= 0.025,
            ),
            ("≤ 2 % of loops end below their own peak", gate["below_peak_fraction"] <= 0.02),
            ("final gain ≥ 2× greedy's", gate["mean_final"] >= 2 * g["mean_final"]),
            ("runs ≤ 4× greedy's", gate["runs_per_loop"] <= 4 * g["runs_per_loop"]),
            ("no deadlocked loop", gate["deadlocked"] == 0),
        ]
        print(
            "Targets: "
            + "; ".join(f"{name}: **{'met' if ok else 'not met'}**" for name, ok in checks)
            + ".\n"
        )
        out["noise"][f"x{factor}"] = {
            "run_sd": model.run_sd,
            "trees": rows,
            "single": singles,
            "heterogeneous": noisy.to_dict(),
            "targets": dict(checks),
        }
    print(f"({time.monotonic() - started:.0f} s)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
