#!/usr/bin/env python
"""Benchmark: start-up of `evotree --help`, `evotree tree` and `evotree tree --json`.

Target (issue): `evotree --help` and `evotree tree` on a small tree take at most 0.3 s each.

A real repository with a small recipe and a small tree (`evotree init`, --versions versions
made with the real CLI, one of them abandoned) is built in a temp folder. Then, for --repeats
repetitions in rotated order: `python -P -c pass` (same interpreter: the floor of any Python
CLI), `git --version`, `evotree --help`, `evotree tree`, `evotree tree --json` (the console
script, output captured through a pipe as an agent would). Finally each evotree command is run
under `python -X importtime` (--importtime-runs times, median per module) to list the imports
that cost the most. Run:

    .venv/bin/python bench/bench_startup.py [--versions 4] [--repeats 30] [--json PATH]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import benchlib as bl  # first: isolates git's configuration before pygit2 is imported

TARGET_SECONDS = 0.3
COMMANDS = {
    "evotree --help": ["--help"],
    "evotree tree": ["tree"],
    "evotree tree --json": ["tree", "--json"],
}
WATCH = (
    "pygit2",
    "rich",
    "click",
    "tomllib",
    "ssl",
    "json",
    "dataclasses",
    "pathlib",
    "inspect",
    "__editable___evotree_0_1_0_finder",
    "evotree.cli.main",
    "evotree.core.versions",
    "evotree.core.workspace",
    "evotree.core.ledger",
    "evotree.core.config",
    "evotree.cli.render",
    "evotree.core.errors",
)


def build(repo: Path, *, versions: int, files: int, seed: int) -> None:
    bl.make_recipe_repo(repo, files=files, seed=seed)
    bl.evotree(repo, "init")
    for i in range(versions):
        bl.evotree(repo, "branch", "-m", f"small tree: hypothesis {i + 1}")
    if versions:
        bl.evotree(repo, "abandon", "v1", "--reason", "small tree: negative evidence")


def _script_args() -> list[str]:
    return bl.EVOTREE[1:] if bl.EVOTREE[0] == bl.PYTHON else bl.EVOTREE


def importtime(repo: Path, args: list[str], runs: int) -> dict[str, Any]:
    """Median self/cumulative import time per module over ``runs`` runs of ``evotree args``."""
    per_module: dict[str, list[tuple[int, int, int]]] = {}
    for _ in range(runs):
        proc = subprocess.run(
            [bl.PYTHON, "-X", "importtime", *_script_args(), *args],
            cwd=repo,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
        seen = set()
        for line in proc.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, cum_us, name = line[len("import time:") :].split("|")
            depth = (len(name) - len(name.lstrip(" "))) // 2
            name = name.strip()
            if name in seen:
                continue
            seen.add(name)
            per_module.setdefault(name, []).append((int(self_us), int(cum_us), depth))
    rows = []
    for name, values in per_module.items():
        rows.append(
            {
                "module": name,
                "cumulative_ms": statistics.median(v[1] for v in values) / 1000,
                "self_ms": statistics.median(v[0] for v in values) / 1000,
                "depth": values[0][2],
            }
        )
    rows.sort(key=lambda r: -r["cumulative_ms"])
    total = sum(r["cumulative_ms"] for r in rows if r["depth"] == 0)
    return {
        "total_ms": total,
        "modules": len(rows),
        "top": rows[:12],
        # per package: the largest cumulative time of its modules
        # (its outermost import, dependencies included)
        "watch": {
            name: max(
                (
                    r["cumulative_ms"]
                    for r in rows
                    if r["module"] == name or r["module"].startswith(name + ".")
                ),
                default=None,
            )
            for name in WATCH
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--versions", type=int, default=4, help="versions in the small tree (default 4)"
    )
    parser.add_argument("--files", type=int, default=30, help="files in the recipe (default 30)")
    parser.add_argument("--repeats", type=int, default=30, help="timed repetitions (default 30)")
    parser.add_argument(
        "--warmup", type=int, default=3, help="discarded repetitions first (default 3)"
    )
    parser.add_argument(
        "--importtime-runs", type=int, default=5, help="-X importtime runs per command (default 5)"
    )
    parser.add_argument("--top", type=int, default=8, help="imports listed per command (default 8)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temp repository")
    args = parser.parse_args()
    started = time.perf_counter()
    env = bl.environment()

    with bl.workdir(args.keep, "evotree-bench-startup-") as tmp:
        repo = tmp / "repo"
        build(repo, versions=args.versions, files=args.files, seed=args.seed)
        shown = bl.evotree(repo, "tree").stdout
        if f"{args.versions + 1} versions" not in shown:
            raise RuntimeError(f"unexpected `evotree tree` output: {shown!r}")

        def runner(cmd: list[str]):
            return lambda: bl.timed_run(cmd, repo)[0]

        variants = {
            "python -P -c pass": runner([bl.PYTHON, "-P", "-c", "pass"]),
            "git --version": runner(["git", "--version"]),
        }
        for label, cmd_args in COMMANDS.items():
            variants[label] = runner([*bl.EVOTREE, *cmd_args])
        print(
            f"measuring {len(variants)} commands x {args.repeats} repetitions ...",
            file=sys.stderr,
            flush=True,
        )
        samples = bl.interleave(variants, repeats=args.repeats, warmup=args.warmup, label="startup")
        imports = {
            label: importtime(repo, cmd_args, args.importtime_runs)
            for label, cmd_args in COMMANDS.items()
        }

    s = {name: bl.summary(values) for name, values in samples.items()}
    base = s["python -P -c pass"]["median"]
    verdicts = {label: s[label]["median"] <= TARGET_SECONDS for label in COMMANDS}
    ratios = {label: s[label]["median"] / base for label in COMMANDS}
    paired = {
        label: bl.paired_ratio(samples[label], samples["python -P -c pass"]) for label in COMMANDS
    }

    print(
        f"\nstart-up on a small tree ({args.versions + 1} versions); "
        f"{args.repeats} interleaved repetitions"
    )
    bl.print_table("timings", [(name, s[name]) for name in variants])
    print(
        f"\nagainst the target (median <= {TARGET_SECONDS} s) "
        "and the Python floor (python -P -c pass)"
    )
    for label in COMMANDS:
        targeted = label != "evotree tree --json"
        verdict = (
            ("MET" if verdicts[label] else "NOT MET")
            if targeted
            else ("within" if verdicts[label] else "over") + " (not a target)"
        )
        print(
            f"  {label:20} {s[label]['median']:.3f} s  (max {s[label]['max']:.3f} s)  "
            f"{ratios[label]:4.1f}x python (paired {paired[label]:4.1f}x)   {verdict}"
        )
    for label, info in imports.items():
        print(
            f"\nheaviest imports of `{label}` "
            f"(python -X importtime, median of {args.importtime_runs} runs; "
            f"{info['modules']} modules, {info['total_ms']:.0f} ms in top-level imports)"
        )
        print(f"  {'cumulative ms':>13}  {'self ms':>7}  module")
        for row in info["top"][: args.top]:
            print(
                f"  {row['cumulative_ms']:13.1f}  {row['self_ms']:7.1f}  "
                f"{'  ' * row['depth']}{row['module']}"
            )
        heavy = ", ".join(
            f"{k} {v:.0f} ms"
            for k, v in info["watch"].items()
            if v is not None and k in ("pygit2", "rich", "click", "tomllib", "ssl")
        )
        print(f"  outermost import of each heavy package (deps included): {heavy or 'none'}")
    print(f"\ntotal benchmark time {time.perf_counter() - started:.0f} s")

    bl.write_json(
        args.json,
        {
            "benchmark": "startup",
            "target_seconds": TARGET_SECONDS,
            "environment": env,
            "params": vars(args),
            "summary": s,
            "ratios_vs_python": ratios,
            "paired_ratios_vs_python": paired,
            "verdicts": verdicts,
            "importtime": imports,
            "samples": samples,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
