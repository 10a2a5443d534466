"""The decision goal on the project's own simulator (gates/calibration.py), with the metric set of
the independent one (bench/loopsim): the gate, greedy keep-if-better, greedy-k at the gate's runs
and the perfect-information ceiling, on the same loops.

    .venv/bin/python bench/bench_decision_goal.py [--loops 200] [--seeds 0 1] [--trials 2000]
        [--json PATH] [--set KEY=VALUE ...] [--lever KEY=VALUE ...]

The gate and greedy-1 are :func:`evotree.gates.calibration.simulate_tree` as the calibration
bench runs them (the gate: :func:`~evotree.diagnostics.stats.difference` and
:func:`~evotree.gates.score.decide_score` at every look). The simulator has neither a ceiling nor
greedy-k, so both are computed here on the same draws (pools and proposals come from their own
stream, ``default_rng([seed, 1])``, as in ``simulate_tree``): the ceiling promotes exactly the
helpful proposals (effects do not depend on the state there, so its final gain is their sum);
greedy-k runs each candidate ``k`` times with :func:`~evotree.gates.calibration.evaluate` and
keeps it when its mean beats the mean of the champion's last ``k`` runs (a promoted candidate's
runs become the champion's), as loopsim's greedy-k does. The clean first comparison is
:func:`~evotree.gates.calibration.comparison_rate` of a neutral change with no earlier versions.
``--set``/``--lever`` run the gate with a ``ScoreRule``/``Levers`` setting under study instead of
the shipped one (bench/decision_goal_levers.py tabulates such runs).
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evotree.gates.calibration import (
    Levers,
    Proposals,
    SimModel,
    comparison_rate,
    evaluate,
    simulate_tree,
)
from evotree.gates.score import ScoreRule

STEPS = 30


def wilson(k: int, n: int, z: float = 1.96) -> dict[str, Any]:
    """A rate with its Wilson 95 % interval (as loopsim reports rates)."""
    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "lo": None, "hi": None}
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return {"k": int(k), "n": int(n), "rate": p, "lo": max(0.0, c - h), "hi": min(1.0, c + h)}


def _draws(model: SimModel, proposals: Proposals, loops: int, seed: int) -> list[Any]:
    """The pools and proposals ``simulate_tree`` meets on ``seed`` (the same stream)."""
    draws = np.random.default_rng([seed, 1])
    out = []
    for _ in range(loops):
        pool = model.difficulties(draws)
        drawn = [(proposals.draw(draws), proposals.noise(draws)) for _ in range(STEPS)]
        out.append((pool, [effect for effect, _ in drawn]))
    return out


def ceiling(model: SimModel, loops: int, seed: int) -> dict[str, Any]:
    """Promote exactly the helpful proposals: the final gain of each loop."""
    finals = [
        sum(e for e in effects if e > 0) for _, effects in _draws(model, Proposals(), loops, seed)
    ]
    return {"finals": finals, "runs": 0}


def greedy_k(k: int, model: SimModel, loops: int, seed: int, margin: float = 0.0) -> dict[str, Any]:
    """Keep if the mean of ``k`` candidate runs beats the mean of the champion's last ``k`` (by
    more than ``margin``: a fixed-sample test, bench/decision_goal_bound.py)."""
    rng = np.random.default_rng([seed, 2, k])
    finals, neutral, neutral_kept, below, runs = [], 0, 0, 0, 0
    for pool, effects in _draws(model, Proposals(), loops, seed):
        quality = peak = 0.0
        champion = evaluate(model, pool, quality, k, rng).mean()
        runs += k
        for effect in effects:
            score = evaluate(model, pool, quality + effect, k, rng).mean()
            runs += k
            kept = score > champion + margin
            neutral += effect == 0
            neutral_kept += kept and effect == 0
            if kept:
                champion, quality = score, quality + effect
                peak = max(peak, quality)
        finals.append(quality)
        below += quality < peak - 1e-12
    return {
        "finals": finals,
        "runs": runs / loops,
        "neutral": wilson(neutral_kept, neutral),
        "below_peak": wilson(below, loops),
    }


def tree(
    strategy: str,
    model: SimModel,
    loops: int,
    seed: int,
    rule: ScoreRule = ScoreRule(),
    levers: Levers = Levers(),
) -> dict[str, Any]:
    """The gate (with ``rule`` and ``levers``) or greedy-1 through the project's own simulator."""
    s = simulate_tree(
        strategy, loops=loops, steps=STEPS, model=model, seed=seed, rule=rule, levers=levers
    )
    return {
        "finals": list(s.finals),
        "runs": s.runs_per_loop,
        "neutral": wilson(s.promoted_neutral, s.neutral),
        "first_in_tree": wilson(s.first_neutral_promoted, s.first_neutral),
        "harmful": wilson(s.promoted_harmful, s.harmful),
        "power": s.power,
        "below_peak": wilson(s.ended_below_peak, s.loops),
        "deadlocked": s.deadlocked,
        "champion_runs": s.champion_runs / max(1, s.runs),
    }


def one_noise(
    factor: int,
    loops: int,
    seeds: list[int],
    trials: int,
    rule: ScoreRule = ScoreRule(),
    levers: Levers = Levers(),
) -> dict[str, Any]:
    """Every rule at one seed-noise factor, seeds pooled (the gate with ``rule`` and ``levers``:
    a lever under study; the defaults are the gate as shipped)."""
    model = SimModel(seed_sd=SimModel().seed_sd * factor)
    started = time.monotonic()
    parts: dict[str, list[dict[str, Any]]] = {"gate": [], "greedy-1": [], "ceiling": []}
    for seed in seeds:
        parts["gate"].append(tree("gate", model, loops, seed, rule, levers))
        parts["greedy-1"].append(tree("greedy", model, loops, seed))
        parts["ceiling"].append(ceiling(model, loops, seed))
    gate_runs = float(np.mean([p["runs"] for p in parts["gate"]]))
    k = max(1, round(gate_runs / (STEPS + 1)))
    parts[f"greedy-{k}"] = [greedy_k(k, model, loops, seed) for seed in seeds]
    hits, n, first_runs = comparison_rate(
        0.0, trials, rule=rule, model=model, tree_versions=0, seed=41 + factor
    )
    ceil = np.concatenate([p["finals"] for p in parts["ceiling"]])
    rows: dict[str, Any] = {}
    for name, ps in parts.items():
        finals = np.concatenate([p["finals"] for p in ps])
        runs = float(np.mean([p["runs"] for p in ps]))
        share = float(finals.mean() / ceil.mean())
        row: dict[str, Any] = {
            "final_gain": float(finals.mean()),
            "final_gain_se": float(finals.std(ddof=1) / math.sqrt(finals.size)),
            "ceiling_share": share,
            "runs_per_loop": runs,
            "share_per_100_runs": share / (runs / 100) if runs else None,
        }
        for key in ("neutral", "first_in_tree", "harmful", "below_peak"):
            if key in ps[0]:
                row[key] = wilson(sum(p[key]["k"] for p in ps), sum(p[key]["n"] for p in ps))
        if "deadlocked" in ps[0]:
            row["deadlocked"] = sum(p["deadlocked"] for p in ps)
            row["champion_run_share"] = float(np.mean([p["champion_runs"] for p in ps]))
            row["power"] = float(np.mean([p["power"] for p in ps]))
        rows[name] = row
    rows["gate"]["neutral_first_clean"] = wilson(hits, n)
    rows["gate"]["first_clean_mean_runs"] = first_runs
    return {
        "run_sd": model.run_sd,
        "matched_greedy": f"greedy-{k}",
        "rules": rows,
        "seconds": round(time.monotonic() - started, 1),
    }


def _pct(rate: dict[str, Any] | None) -> str:
    if not rate or rate.get("rate") is None:
        return "—"
    return f"{100 * rate['rate']:.1f} [{100 * rate['lo']:.1f}, {100 * rate['hi']:.1f}]"


def normalize(project: dict[str, Any], loopsim: dict[str, Any], rule: str) -> dict[str, Any]:
    """Both simulators' results as {simulator: {noise: {rule: metrics}}} with one set of keys."""
    out: dict[str, Any] = {"project": {}, "loopsim": {}}
    for noise, block in project["results"].items():
        rows = {}
        for name, r in block["rules"].items():
            rows["gate" if name == "gate" else name] = {
                "neutral_tree": r.get("neutral"),
                "neutral_first_clean": r.get("neutral_first_clean"),
                "below_peak": r.get("below_peak"),
                "deadlocks": r.get("deadlocked"),
                "final_gain": r["final_gain"],
                "ceiling_share": r["ceiling_share"],
                "runs_per_loop": r["runs_per_loop"],
                "share_per_100_runs": r["share_per_100_runs"],
                "champion_run_share": r.get("champion_run_share"),
            }
        out["project"][noise] = {"rules": rows, "matched": block["matched_greedy"]}
    for noise, block in loopsim["results"].items():
        rows = {}
        for name, r in block["rules"].items():
            per100 = r["ceiling_share_per_100_runs"]["mean"]
            rows["gate" if name == rule else name] = {
                "neutral_tree": r["neutral_promoted_tree"],
                "neutral_first_clean": r["neutral_promoted_first_clean"]
                if name != "ceiling"
                else None,
                "below_peak": r["below_peak"],
                "deadlocks": r["deadlocks"]["k"],
                "final_gain": r["final_gain"]["mean"],
                "ceiling_share": r["ceiling_share"]["mean"],
                "ceiling_share_ci": [r["ceiling_share"]["lo"], r["ceiling_share"]["hi"]],
                "runs_per_loop": r["runs_per_loop"],
                "share_per_100_runs": per100,
                "champion_run_share": r["champion_run_share"],
            }
        out["loopsim"][noise] = {"rules": rows, "matched": block["matched_greedy"].get(rule)}
    return out


def tables(norm: dict[str, Any]) -> str:
    """One markdown table per simulator and noise level."""
    lines = []
    for sim, blocks in norm.items():
        for noise, block in blocks.items():
            lines += [
                f"\n#### {sim}, {noise} seed noise (greedy-k at the gate's runs: "
                f"{block['matched']})\n",
                "| rule | neutral promoted, tree % | neutral promoted, clean first % | "
                "below peak % | deadlocks | final true gain | ceiling share | runs / loop | "
                "share per 100 runs |",
                "|---|---|---|---|---|---|---|---|---|",
            ]
            for name, r in block["rules"].items():
                per100 = r["share_per_100_runs"]
                lines.append(
                    f"| {name} | {_pct(r['neutral_tree'])} | {_pct(r['neutral_first_clean'])} | "
                    f"{_pct(r['below_peak'])} | {r['deadlocks'] if r['deadlocks'] is not None else '—'}"
                    f" | {r['final_gain']:.4f} | {r['ceiling_share']:.3f} | "
                    f"{r['runs_per_loop']:.0f} | " + (f"{per100:.3f}" if per100 else "—") + " |"
                )
    return "\n".join(lines)


def targets(norm: dict[str, Any]) -> list[dict[str, str]]:
    """One row per constraint per simulator (cells: 1x / 2x)."""
    names = {
        "project": "project's simulator (gates/calibration.py)",
        "loopsim": "independent simulator (bench/loopsim)",
    }
    rows = []
    for sim, blocks in norm.items():
        gates = {n: b["rules"]["gate"] for n, b in blocks.items()}
        matched = {n: b["rules"][b["matched"]] for n, b in blocks.items()}

        def cell(key: str, g: dict[str, dict[str, Any]] = gates) -> str:
            return " / ".join(f"{100 * g[n][key]['rate']:.1f}" for n in g)

        def ok(key: str, limit: float, g: dict[str, dict[str, Any]] = gates) -> bool:
            return all(g[n][key]["rate"] <= limit for n in g)

        rows += [
            {
                "target": f"{names[sim]}: neutral promoted ≤ 2.5 % in the tree (1x / 2x noise)",
                "figure": cell("neutral_tree") + " %",
                "verdict": "met" if ok("neutral_tree", 0.025) else "not met",
            },
            {
                "target": f"{names[sim]}: neutral promoted ≤ 2.0 % on a clean first comparison "
                "(1x / 2x)",
                "figure": cell("neutral_first_clean") + " %",
                "verdict": "met" if ok("neutral_first_clean", 0.020) else "not met",
            },
            {
                "target": f"{names[sim]}: ≤ 2 % of loops end below their peak (1x / 2x)",
                "figure": cell("below_peak") + " %",
                "verdict": "met" if ok("below_peak", 0.02) else "not met",
            },
            {
                "target": f"{names[sim]}: no deadlock (1x / 2x)",
                "figure": " / ".join(str(gates[n]["deadlocks"]) for n in gates) + " deadlocks",
                "verdict": "met" if all(gates[n]["deadlocks"] == 0 for n in gates) else "not met",
            },
            {
                "target": f"{names[sim]}: ceiling share at least greedy-k's at equal runs (1x / 2x)",
                "figure": "/".join(f"{gates[n]['ceiling_share']:.2f}" for n in gates)
                + " vs "
                + "/".join(f"{matched[n]['ceiling_share']:.2f}" for n in gates)
                + " ("
                + "/".join(blocks[n]["matched"] for n in gates)
                + ")",
                "verdict": "met"
                if all(gates[n]["ceiling_share"] >= matched[n]["ceiling_share"] for n in gates)
                else "not met",
            },
        ]
    return rows


def screen_rows(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The per-simulator rows merged two by two (project, loopsim): one row per constraint, so the
    BENCHMARKS screen stays within its 60 lines; the per-simulator rows stay in the record."""
    half = len(rows) // 2
    out = []
    for project, loopsim in zip(rows[:half], rows[half:]):
        name = project["target"].split(": ", 1)[1]
        out.append(
            {
                "target": f"decision goal, both simulators: {name}",
                "figure": f"project {project['figure']}; loopsim {loopsim['figure']}",
                "verdict": "met"
                if project["verdict"] == loopsim["verdict"] == "met"
                else "not met",
            }
        )
    return out


PROJECT_COMMAND = (
    ".venv/bin/python bench/bench_decision_goal.py --loops 200 --seeds 0 1 --trials 2000 "
    "--json bench/results/raw/decision_goal_project.json"
)
LOOPSIM_COMMAND = (
    ".venv/bin/python bench/loopsim_run.py --rule bench/loopsim_evotree.py:make --name "
    "evotree-gate --loops 200 --proposals 30 --seed 0,1 --noise 1,2 --first-loops 2000 "
    "--json bench/results/raw/loopsim_evotree.json"
)


def figure(rows: list[dict[str, str]]) -> str:
    """The record's one-line figure: every constraint's cells, project's then loopsim's."""
    half = len(rows) // 2
    labels = ("neutral in the tree", "clean first", "below peak", "deadlocks", "ceiling share")
    parts = [
        f"{label} {p['figure']} (project), {q['figure']} (loopsim)"
        for label, p, q in zip(labels, rows[:half], rows[half:])
    ]
    return "1x / 2x seed noise: " + "; ".join(parts)


def settings(items: list[str], cls: type) -> dict[str, Any]:
    """``KEY=VALUE`` items (VALUE as JSON; a list becomes a tuple) checked against ``cls``'s
    fields: the rule or the levers of a lever under study."""
    out: dict[str, Any] = {}
    for item in items:
        key, _, text = item.partition("=")
        if key not in cls.__dataclass_fields__:
            raise SystemExit(f"{cls.__name__} has no setting {key!r}")
        value = json.loads(text)
        out[key] = tuple(value) if isinstance(value, list) else value
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--loops", type=int, default=200, help="loops per seed and noise level")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    p.add_argument("--trials", type=int, default=2000, help="clean first comparisons per noise")
    p.add_argument("--json", type=Path, required=True, help="the project simulator's figures")
    p.add_argument("--reuse", action="store_true", help="read --json instead of running")
    p.add_argument("--loopsim", type=Path, help="bench/loopsim_run.py --json output of the gate")
    p.add_argument("--rule", default="evotree-gate", help="the gate's name in --loopsim")
    p.add_argument("--record", type=Path, help="write the bench/results record here")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (one per noise level)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a ScoreRule setting of the gate under study (JSON value), e.g. champion_seeds=3",
    )
    p.add_argument(
        "--lever",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a calibration Levers setting, e.g. reuse_promotion_runs=true",
    )
    args = p.parse_args()
    rule_set, lever_set = settings(args.set, ScoreRule), settings(args.lever, Levers)
    if args.record and (rule_set or lever_set):
        raise SystemExit("--record writes the shipped gate's record: drop --set/--lever")
    rule, levers = ScoreRule(**rule_set), Levers(**lever_set)
    if args.reuse:
        out = json.loads(args.json.read_text())
    else:
        started = time.monotonic()
        with ProcessPoolExecutor(max(1, args.jobs)) as pool:
            futures = {
                f"{f}x": pool.submit(
                    one_noise, f, args.loops, args.seeds, args.trials, rule, levers
                )
                for f in (1, 2)
            }
            out = {
                "loops": args.loops,
                "seeds": args.seeds,
                "steps": STEPS,
                "trials": args.trials,
                "rule": rule_set,
                "levers": lever_set,
                "results": {name: fut.result() for name, fut in futures.items()},
            }
        out["seconds"] = round(time.monotonic() - started, 1)
        args.json.write_text(json.dumps(out, indent=1) + "\n")
    if not args.loopsim:
        for noise, block in out["results"].items():
            for name, row in block["rules"].items():
                print(
                    noise,
                    name,
                    {k: (v["rate"] if isinstance(v, dict) else v) for k, v in row.items()},
                )
        return
    loopsim = json.loads(args.loopsim.read_text())
    norm = normalize(out, loopsim, args.rule)
    print(tables(norm))
    rows = targets(norm)
    for r in rows:
        print(f"- {r['target']}: {r['figure']} — {r['verdict']}")
    if args.record:
        met = all(r["verdict"] == "met" for r in rows)
        record = {
            "benchmark": "The decision goal on two simulators",
            "script": "bench/bench_decision_goal.py",
            "command": " && ".join(
                [
                    PROJECT_COMMAND,
                    LOOPSIM_COMMAND,
                    " ".join([".venv/bin/python", "bench/bench_decision_goal.py", *sys.argv[1:]]),
                ]
            ),
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "commit": subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"],
                text=True,
                capture_output=True,
                cwd=Path(__file__).parents[1],
            ).stdout.strip(),
            "page": "docs/benchmarks/decision-goal.md",
            "target": "the decision goal's hard constraints and objective on both simulators",
            "figure": figure(rows),
            "verdict": "met" if met else "not met",
            "targets": screen_rows(rows),
            "targets_by_simulator": rows,
            "project_setup": {k: out[k] for k in ("loops", "seeds", "steps", "trials")},
            "loopsim_setup": loopsim["setup"],
            "loopsim_command": loopsim["command"],
            "loopsim_commit": loopsim["commit"],
            "metrics": norm,
        }
        args.record.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
