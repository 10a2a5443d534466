#!/usr/bin/env python
"""Benchmark: every catalog skill's effect on the math domain, with seeds and CIs.

In a fresh math workspace (``evotree init --domain math``, the domain's defaults), v0 is run on
--seeds seeds; then, for each built-in skill that applies to the math domain, a version
``branch --from v0 --skill NAME`` (the skill's default parameters) is run on the same number of
seeds and compared with v0 by ``evotree compare v0 vN --json`` (the one comparison behind
``compare``, ``gates`` and the reports: Δ of validation Avg@8, its 95 % CI and one-sided p, the
run-to-run spread pooled over the tree). The cost is measured too: the train phase's CPU time
against v0's in the same run, and for StdGroupFilter the generation it adds (groups generated
per group trained, from its ``skill/StdGroupFilter/*`` signals).

What it measures is recorded in the workspace's memory as it is: a version whose Δ is not
significantly above 0 is abandoned with the measured numbers as the reason (negative evidence,
``evotree abandon``); memory is then exported to --memory-out so another workspace can import it
(``evotree memory import``). A skill is verified only by a signed promotion, never by this script.

    .venv/bin/python bench/bench_skills_math.py --seeds 3 \\
        --json bench/results/skills_math.json --memory-out bench/skills_math_memory.json
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # first: isolates git's configuration

ROOT = benchlib.ROOT
sys.path.insert(0, str(ROOT))


def _json(repo: Path, *args: str) -> Any:
    return json.loads(benchlib.evotree(repo, *args, "--json").stdout)


def _train_seconds(repo: Path, version: str) -> list[float]:
    out = []
    for row in _json(repo, "runs", "--version", version)["runs"]:
        train = (row.get("phases") or {}).get("train") or {}
        if train.get("cpu_seconds") is not None:  # CPU time: robust to a busy shared machine
            out.append(float(train["cpu_seconds"]))
    return out


def _sql(repo: Path, query: str) -> list[dict[str, Any]]:
    out = _json(repo, "sql", query)
    return out.get("rows", out) if isinstance(out, dict) else out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--skills", nargs="*", default=None, help="default: every skill that applies to math"
    )
    parser.add_argument("--json", dest="json_path", default=None)
    parser.add_argument("--memory-out", default=None)
    parser.add_argument(
        "--keep", default=None, help="make the workspace here (kept) instead of a temp folder"
    )
    parser.add_argument(
        "--train-ops",
        default=None,
        help='the train problems\' operators, e.g. "+,-,*" (the judge keeps + and -): '
        "multiplication facts the warm model cannot answer make many dead groups, "
        "the setting where EvoTrainer's StdGroupFilter gains came from",
    )
    args = parser.parse_args()

    from evotree.skills import get_skill, list_skills

    names = args.skills or [s.name for s in list_skills() if s.why_not("math") is None]
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="evotree-bench-skills-"))
    repo = base / "ws"
    repo.mkdir(parents=True)
    benchlib.git(repo, "init", "--quiet", "-b", "main")
    benchlib.git(repo, "config", "user.name", benchlib.IDENTITY[0])
    benchlib.git(repo, "config", "user.email", benchlib.IDENTITY[1])
    (repo / "README.md").write_text("skills benchmark\n")
    if args.train_ops:
        from evotree.domains.math.templates import MATH_TOML

        ops = ", ".join(json.dumps(op.strip()) for op in args.train_ops.split(","))
        text = MATH_TOML.replace('ops = ["+", "-"]', f"ops = [{ops}]")
        assert text != MATH_TOML
        (repo / "math.toml").write_text(text)
    benchlib.git(repo, "add", "-A")
    benchlib.git(repo, "commit", "--quiet", "-m", "init")
    benchlib.evotree(repo, "init", "--domain", "math")
    started = time.time()
    seeds = str(args.seeds)
    print(f"v0: {args.seeds} seeds", flush=True)
    benchlib.evotree(repo, "run", "v0", "--seeds", seeds, "--jobs", str(args.jobs))
    base_train = _train_seconds(repo, "v0")
    results: list[dict[str, Any]] = []
    for name in names:
        params = get_skill(name).defaults()
        proc = benchlib.evotree(
            repo,
            "branch",
            "--from",
            "v0",
            "--skill",
            name,
            "-m",
            f"{name} (defaults)",
            "--json",
            check=False,
        )
        if proc.returncode != 0:
            results.append(
                {
                    "skill": name,
                    "params": params,
                    "applies": False,
                    "why": (proc.stderr or proc.stdout).strip()[-300:],
                }
            )
            print(f"{name}: not applied ({proc.returncode})", flush=True)
            continue
        version = json.loads(proc.stdout)["id"]
        print(f"{name} as {version}: {args.seeds} seeds", flush=True)
        benchlib.evotree(repo, "run", version, "--seeds", seeds, "--jobs", str(args.jobs))
        cmp = _json(repo, "compare", "v0", version)
        row: dict[str, Any] = {
            "skill": name,
            "version": version,
            "params": params,
            "applies": True,
            "delta": cmp["delta"],
            "ci": cmp["ci"],
            "p_value": cmp["p_value"],
            "mean_v0": cmp["mean_a"],
            "mean_skill": cmp["mean_b"],
            "n_seeds": cmp.get("n_seeds"),
            "unit": cmp.get("unit"),
            "train_s": _train_seconds(repo, version),
        }
        if name == "StdGroupFilter":
            rows = _sql(
                repo,
                "SELECT metric, sum(value) AS total FROM signals WHERE version = "
                f"'{version}' AND metric LIKE 'skill/StdGroupFilter/%' GROUP BY metric",
            )
            totals = {r["metric"].rsplit("/", 1)[1]: r["total"] for r in rows}
            row["generation"] = totals
        significant = cmp["ci"][0] > 0
        row["significant_gain"] = significant
        if not significant:
            reason = (
                f"{name} (default parameters) on the math domain's defaults: no significant gain over v0, "
                f"Δ {cmp['delta']:+.4f} validation Avg@8, 95 % CI [{cmp['ci'][0]:+.4f}, {cmp['ci'][1]:+.4f}], "
                f"one-sided p {cmp['p_value']:.3g}, {args.seeds} seeds each (bench/bench_skills_math.py)"
            )
            benchlib.evotree(repo, "abandon", version, "--reason", reason)
            row["recorded"] = "negative evidence (abandoned)"
        else:
            row["recorded"] = "kept active: a significant gain, to be promoted through the gates"
        results.append(row)
        print(json.dumps(row), flush=True)
    if args.memory_out:
        benchlib.evotree(repo, "memory", "export", str(Path(args.memory_out).resolve()))
    doc = {
        "seeds": args.seeds,
        "train_ops": args.train_ops,
        "v0_train_s": base_train,
        "skills": results,
        "seconds": time.time() - started,
        "machine": platform.platform(),
        "command": " ".join(sys.argv),
        "workspace": str(repo),
    }
    if args.json_path:
        Path(args.json_path).write_text(json.dumps(doc, indent=2) + "\n")
    print(
        "\n| skill (defaults) | Δ validation Avg@8 vs v0 | 95 % CI | one-sided p | train CPU time vs v0 | recorded |"
    )
    print("|---|---:|---|---:|---:|---|")
    v0_med = statistics.median(base_train) if base_train else float("nan")
    for r in results:
        if not r.get("applies"):
            print(f"| {r['skill']} | — | — | — | — | not applicable: {r['why'][:80]} |")
            continue
        ratio = (
            statistics.median(r["train_s"]) / v0_med
            if r["train_s"] and base_train
            else float("nan")
        )
        print(
            f"| {r['skill']} | {r['delta']:+.4f} | [{r['ci'][0]:+.4f}, {r['ci'][1]:+.4f}] | {r['p_value']:.3g} "
            f"| {ratio:.2f}× | {r['recorded']} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
