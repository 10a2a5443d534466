"""The decision-goal levers' table (docs/benchmarks/decision-goal.md, "Levers studied"): each
lever's hard-constraint figures on both simulators and its ceiling share against greedy-k
interpolated to the lever's own runs per loop.

    .venv/bin/python bench/decision_goal_levers.py --greedy-loopsim L_GREEDY.json \
        --seeds 0,1 NAME=P.json,L.json [NAME=P.json,L.json ...]

``P.json``: a ``bench/bench_decision_goal.py --json`` output (with ``--set``/``--lever`` for a
lever); ``L.json``: the ``bench/loopsim_run.py --json`` output of the adapter with the same lever;
``L_GREEDY.json``: ``bench/loopsim_run.py --baselines 3,4,5,6,7 --first-loops 0`` on the same
seeds (greedy-k alone). The project's greedy-k (k = 2…6) is computed here on the same draws.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_decision_goal import ceiling, greedy_k, normalize  # noqa: E402

from evotree.gates.calibration import SimModel  # noqa: E402

Curve = tuple[list[float], list[float]]


def project_curves(seeds: list[int], loops: int, ks: range = range(2, 7)) -> dict[str, Curve]:
    """Greedy-k's (runs per loop, ceiling share) on the project's simulator, per noise level."""
    out: dict[str, Curve] = {}
    for f in (1, 2):
        model = SimModel(seed_sd=SimModel().seed_sd * f)
        ceil = np.concatenate([ceiling(model, loops, s)["finals"] for s in seeds]).mean()
        runs, shares = [], []
        for k in ks:
            parts = [greedy_k(k, model, loops, s) for s in seeds]
            runs.append(float(parts[0]["runs"]))
            shares.append(float(np.concatenate([p["finals"] for p in parts]).mean() / ceil))
        out[f"{f}x"] = (runs, shares)
    return out


def loopsim_curves(baselines: dict[str, Any]) -> dict[str, Curve]:
    """Greedy-k's (runs per loop, ceiling share) in a loopsim baselines run, per noise level."""
    out: dict[str, Curve] = {}
    for noise, block in baselines["results"].items():
        pts = sorted(
            (r["runs_per_loop"], r["ceiling_share"]["mean"])
            for name, r in block["rules"].items()
            if name.startswith("greedy-") and name != "greedy-1"
        )
        out[noise] = ([p[0] for p in pts], [p[1] for p in pts])
    return out


def rows(name: str, norm: dict[str, Any], curves: dict[str, dict[str, Curve]]) -> list[str]:
    """One markdown row per simulator: the lever's cells (1x / 2x) and its gap to greedy-k."""
    out = []
    for sim in ("project", "loopsim"):
        cells = []
        for noise, block in norm[sim].items():
            g = block["rules"]["gate"]
            runs, shares = curves[sim][noise]
            eq = float(np.interp(g["runs_per_loop"], runs, shares))
            cells.append((g, eq))

        def pair(fmt: str, get: Any, cells: list = cells) -> str:
            return " / ".join(fmt.format(get(g, eq)) for g, eq in cells)

        out.append(
            f"| {name} | {sim} | "
            + " | ".join(
                [
                    pair("{:.1f}", lambda g, e: 100 * g["neutral_tree"]["rate"]),
                    pair("{:.1f}", lambda g, e: 100 * g["neutral_first_clean"]["rate"]),
                    pair("{:.1f}", lambda g, e: 100 * g["below_peak"]["rate"]),
                    pair("{}", lambda g, e: g["deadlocks"]),
                    pair("{:.2f}", lambda g, e: g["ceiling_share"]),
                    pair("{:.0f}", lambda g, e: g["runs_per_loop"]),
                    pair("{:.2f}", lambda g, e: e),
                    pair("{:+.3f}", lambda g, e: g["ceiling_share"] - e),
                ]
            )
            + " |"
        )
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="NAME=PROJECT.json,LOOPSIM.json")
    p.add_argument("--greedy-loopsim", type=Path, required=True)
    p.add_argument("--seeds", default="0,1", help="the runs' seeds, a comma list")
    p.add_argument("--loops", type=int, default=200, help="loops per seed (as the runs)")
    args = p.parse_args()
    curves = {
        "project": project_curves([int(x) for x in args.seeds.split(",")], args.loops),
        "loopsim": loopsim_curves(json.loads(args.greedy_loopsim.read_text())),
    }
    print(
        "| lever | simulator | neutral promoted, tree (≤ 2.5) | clean first (≤ 2.0) | "
        "below peak (≤ 2) | deadlocks | ceiling share | runs / loop | greedy at equal runs | gap |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for item in args.runs:
        name, _, paths = item.partition("=")
        project, loopsim = (json.loads(Path(x).read_text()) for x in paths.split(","))
        for line in rows(name, normalize(project, loopsim, "evotree-gate"), curves):
            print(line)


if __name__ == "__main__":
    main()
