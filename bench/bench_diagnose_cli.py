"""Benchmark: the full `evotree diagnose V` (all four layers, through the CLI) of a run of N rollouts.

Builds a real workspace (git repo, `evotree init`, versions v1 -> v2), writes one run of v2 with
N rollout rows and one smaller run of v1 (the parent) with bench_diagnose's generator, gives them
run.json records the harness would have written, then times the CLI end to end (interpreter
start-up, imports, all layers, recording the findings in .evotree/findings and the ledger).

    .venv/bin/python bench/bench_diagnose_cli.py --sizes 1000000 10000000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_diagnose import generate_run  # noqa: E402

TARGETS = {1_000_000: 4.0, 10_000_000: 15.0}  # the scipy.stats import included


def build(root: Path, rows: int) -> None:
    from evotree.core.ledger import utcnow
    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace, init_workspace
    from evotree.harness.records import RunRecord, runs_dir

    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.com")):
        subprocess.run(["git", "-C", str(root), "config", key, value], check=True)
    (root / "recipe.toml").write_text("lr = 1e-5\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "recipe"], check=True)
    init_workspace(root)
    ws = Workspace.open(root)
    create_version(ws, hypothesis="parent")
    create_version(ws, hypothesis="child", parent="v1")
    base = runs_dir(ws)
    base.mkdir(parents=True, exist_ok=True)
    for run_id, version, n, mean in (
        ("run-v2", "v2", rows, 0.4),
        ("run-v1", "v1", max(rows // 10, 8), 0.5),
    ):
        generate_run(
            base, run_id, version=version, rows=n, seed=hash(run_id) % 1000, eval_mean=mean
        )
        RunRecord(
            run_id=run_id,
            version=version,
            seed=0,
            status="succeeded",
            commit="0" * 40,
            judge_commit=None,
            judge_version="v0",
            train_command="(bench)",
            eval_command="(bench)",
            started_at=utcnow(),
        ).save(base / run_id / "run.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    evotree = Path(sys.executable).parent / "evotree"
    results = []
    for rows in args.sizes:
        with tempfile.TemporaryDirectory(prefix="evotree-bench-diagnose-") as tmp:
            root = Path(tmp) / "ws"
            started = time.perf_counter()
            build(root, rows)
            built = time.perf_counter() - started
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                proc = subprocess.run(
                    [str(evotree), "-C", str(root), "diagnose", "v2", "--json"],
                    capture_output=True,
                    text=True,
                    env={**os.environ, "PYTHONSAFEPATH": "1"},
                )
                times.append(time.perf_counter() - t0)
                if proc.returncode != 0:
                    raise SystemExit(proc.stderr)
            findings = json.loads(proc.stdout)
            row = {
                "rows": rows,
                "median_s": statistics.median(times),
                "max_s": max(times),
                "runs": args.repeats,
                "build_s": built,
                "findings": len(findings["findings"]),
                "layers": findings["layers"],
                "target_s": TARGETS.get(rows),
            }
            results.append(row)
            verdict = (
                ""
                if row["target_s"] is None
                else ("MET" if row["median_s"] <= row["target_s"] else "NOT MET")
            )
            print(
                f"{rows:>11,} rows: evotree diagnose v2 --json median {row['median_s']:.2f} s "
                f"(max {row['max_s']:.2f} s, n={args.repeats}); {row['findings']} findings over layers "
                f"{', '.join(row['layers'])}; target {row['target_s']} s {verdict}"
            )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
