"""Run a promotion rule through the independent loop simulator (bench/loopsim), beside the
baselines on the same proposals: the perfect-information ceiling, greedy-1, greedy-k at the
rule's number of runs, and (with --baselines) fixed greedy-k and the example sequential rule.

    .venv/bin/python bench/loopsim_run.py --rule my.module:make_rule --loops 500 \\
        --proposals 30 --seed 0,1 --noise 1,2 --json /tmp/out.json

``--rule`` is ``MODULE:FACTORY`` (an importable module, or a path to a .py file); FACTORY is
called with no arguments (or with ``--rule-kwargs`` JSON) and returns an object with
``decide(state) -> Action`` (see bench/loopsim/interface.py and docs/benchmarks/loopsim.md).
Without ``--rule`` only the baselines run. ``--record`` also writes the summary record that
bench/results expects.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import importlib.util
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loopsim import GreedyK, SequentialMargin, Setup, WorldConfig, evaluate, world_stats

ROOT = Path(__file__).resolve().parents[1]


def load_factory(spec: str, kwargs: dict[str, Any]) -> Any:
    """The rule factory named by ``MODULE:FACTORY`` (module path or file path)."""
    module_name, _, attr = spec.rpartition(":")
    if not module_name or not attr:
        raise SystemExit(f"--rule wants MODULE:FACTORY, got {spec!r}")
    if module_name.endswith(".py") or "/" in module_name:
        path = Path(module_name).resolve()
        loader_spec = importlib.util.spec_from_file_location(path.stem, path)
        if loader_spec is None or loader_spec.loader is None:
            raise SystemExit(f"cannot load {path}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[path.stem] = module
        loader_spec.loader.exec_module(module)
    else:
        if str(ROOT) not in sys.path:
            sys.path.append(str(ROOT))
        module = importlib.import_module(module_name)
    factory = getattr(module, attr)
    return lambda: factory(**kwargs)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.split(",") if x.strip())


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(",") if x.strip())


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rule", help="MODULE:FACTORY of the rule under test")
    p.add_argument("--rule-kwargs", default="{}", help="JSON keyword arguments for FACTORY")
    p.add_argument("--name", help="label of the rule under test (default: its .name)")
    p.add_argument("--loops", type=int, default=500)
    p.add_argument("--proposals", type=int, default=30)
    p.add_argument("--seed", type=_ints, default=(0,), help="one seed or a comma list")
    p.add_argument("--noise", type=_floats, default=(1.0, 2.0), help="seed-noise multipliers")
    p.add_argument(
        "--first-loops",
        type=int,
        default=2000,
        help="extra loops per seed judging one neutral first proposal",
    )
    p.add_argument("--cap", type=int, default=40, help="runs one proposal may spend")
    p.add_argument("--budget", type=int, default=0, help="runs per loop (0: 20 per proposal)")
    p.add_argument(
        "--baselines",
        default="",
        help="extra fixed greedy k's, e.g. 2,4,8; 'seq' adds the example rule",
    )
    p.add_argument(
        "--stats-loops",
        type=int,
        default=200,
        help="loops used to measure the world (run SD, pool bias)",
    )
    p.add_argument("--json", required=True, help="where to write the full results")
    p.add_argument("--record", help="also write a bench/results summary record here")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    factories: dict[str, Any] = {"greedy-1": lambda: GreedyK(1)}
    match: list[str] = []
    for item in args.baselines.split(","):
        item = item.strip()
        if item == "seq":
            factories[SequentialMargin().name] = SequentialMargin
            match.append(SequentialMargin().name)
        elif item:
            factories[f"greedy-{int(item)}"] = lambda k=int(item): GreedyK(k)
    if args.rule:
        factory = load_factory(args.rule, json.loads(args.rule_kwargs))
        name = args.name or getattr(factory(), "name", args.rule)
        factories = {name: factory, **factories}
        match.insert(0, name)
    setup = Setup(
        loops=args.loops,
        proposals=args.proposals,
        seeds=args.seed,
        proposal_cap=args.cap,
        loop_budget=args.budget,
        first_loops=args.first_loops,
    )
    world = WorldConfig()
    started = time.perf_counter()
    results = evaluate(factories, world, setup, args.noise, match=match)
    out = {
        "script": "bench/loopsim_run.py",
        "command": shlex.join([".venv/bin/python", "bench/loopsim_run.py", *sys.argv[1:]])
        if argv is None
        else "loopsim_run.main(" + repr(argv) + ")",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d"),
        "commit": _commit(),
        "setup": {**setup.__dict__, "loop_budget": setup.budget},
        "world": {k: v for k, v in world.__dict__.items() if k not in ("seed", "noise")},
        "world_measured": world_stats(world, args.noise, loops=args.stats_loops),
        "results": results,
        "seconds": round(time.perf_counter() - started, 1),
    }
    Path(args.json).write_text(json.dumps(out, indent=1, default=_plain) + "\n")
    print(table(out))
    if args.record:
        Path(args.record).write_text(json.dumps(record(out), indent=1, default=_plain) + "\n")
    return 0


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(type(value))


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            text=True,
            capture_output=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _pct(rate: dict[str, Any]) -> str:
    if rate["rate"] is None:
        return "—"
    return f"{100 * rate['rate']:.1f} [{100 * rate['lo']:.1f}, {100 * rate['hi']:.1f}]"


def table(out: dict[str, Any]) -> str:
    """The results as markdown tables, one per noise level."""
    lines = []
    for noise, block in out["results"].items():
        lines += [
            f"\n### {noise} seed noise\n",
            "| rule | neutral promoted, tree % | neutral promoted, clean first % | "
            "below peak % | deadlocks | final true gain | ceiling share | runs/loop | "
            "share per 100 runs | champion runs % |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for name, row in block["rules"].items():
            share, per100 = row["ceiling_share"], row["ceiling_share_per_100_runs"]
            champ = row["champion_run_share"]
            lines.append(
                f"| {name} | {_pct(row['neutral_promoted_tree'])} | "
                f"{_pct(row['neutral_promoted_first_clean'])} | {_pct(row['below_peak'])} | "
                f"{row['deadlocks']['k']} | {row['final_gain']['mean']:.4f} | "
                f"{share['mean']:.3f} [{share['lo']:.3f}, {share['hi']:.3f}] | "
                f"{row['runs_per_loop']:.1f} | "
                + (f"{per100['mean']:.3f}" if per100["mean"] is not None else "—")
                + " | "
                + (f"{100 * champ:.0f}" if champ is not None else "—")
                + " |"
            )
        if block["matched_greedy"]:
            lines.append(
                "\nGreedy-k at equal runs: "
                + ", ".join(f"{rule} ↔ {k}" for rule, k in block["matched_greedy"].items())
            )
    return "\n".join(lines)


def record(out: dict[str, Any]) -> dict[str, Any]:
    """The bench/results summary record: greedy-1 and the ceiling at each noise level."""
    rows = [block["rules"]["greedy-1"] for block in out["results"].values()]
    neutral = "/".join(f"{100 * r['neutral_promoted_tree']['rate']:.1f}" for r in rows)
    below = "/".join(f"{100 * r['below_peak']['rate']:.1f}" for r in rows)
    share = "/".join(f"{r['ceiling_share']['mean']:.2f}" for r in rows)
    figure = (
        f"greedy-1 at {'/'.join(out['results'])} noise: neutral promoted {neutral} %, "
        f"below peak {below} %, ceiling share {share}"
    )
    setup = out["setup"]
    return {
        "benchmark": "Independent loop simulator: baseline promotion rules",
        "script": out["script"],
        "command": out["command"],
        "date": out["date"],
        "commit": out["commit"],
        "page": "docs/benchmarks/loopsim.md",
        "target": (
            f"baselines measured on an independent loop world ({setup['loops']} loops x "
            f"{setup['proposals']} proposals x {len(setup['seeds'])} seeds)"
        ),
        "figure": figure,
        "verdict": "measured",
        "full": out,
    }


if __name__ == "__main__":
    raise SystemExit(main())
