#!/usr/bin/env python
"""Benchmark: every signal- and behavior-layer analyzer over one run of 1M and of 10M rollouts.

Targets: a full pass of all signal + behavior analyzers over a run with 1,000,000
rollout rows in at most 3 s, with 10,000,000 rows in at most 15 s (2 cores).

For each size a runs directory is built in a temp folder with numpy/pyarrow, in the exact
schemas of ``evotree.harness.layout`` (zstd Parquet, pyarrow's default row groups):

* ``run-main``: ``run.json`` + ``rollouts.parquet`` (``--rows`` rows) + ``signals.parquet`` +
  ``evals.parquet``. 8 samples per group, 64 groups per step (so 1M rows = 1,953 steps);
  binary rewards whose success rate rises over the run, ~30 % dead groups (all-solved or
  none-solved), 0.1 % non-finite rewards; components ``{"correct", "format"}``; lengths
  16..1024 (1024 = truncated, ``finish_reason`` "length"; ~1 % "format_error", 0.5 % "error");
  texts drawn from a pool of 4,000 generated texts of 40-160 words (some degenerate: looping,
  or one template); 10 % of rollouts issue 1-3 shell commands (a few ``git log``/``git show``);
  signals: loss, reward, reward_std, entropy, kl, grad_norm, clip_ratio/region_mean,
  completions/clipped_ratio at every step; judge evals on 200 validation tasks.
* ``run-parent``: a smaller run (``--rows`` / 10 rows) of the parent version, for the
  length-shift and reward-vs-eval analyzers.

Then ``evotree.diagnostics.findings.run_analyzers`` runs every registered signal and behavior analyzer
on ``run-main`` (parent runs given), after ``evotree.harness.query.connect``; the wall time of the
connection, of each analyzer and of the whole pass (connect included) is reported, median of
``--repeats`` passes after ``--warmup``. Run:

    .venv/bin/python bench/bench_diagnose.py [--sizes 1000000 10000000] [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGETS = {1_000_000: 3.0, 10_000_000: 15.0}
SAMPLES = 8
GROUPS_PER_STEP = 64

_WORDS = [
    "the",
    "answer",
    "is",
    "so",
    "we",
    "add",
    "then",
    "multiply",
    "both",
    "sides",
    "by",
    "and",
    "divide",
    "check",
    "step",
    "first",
    "second",
    "final",
    "result",
    "value",
    "equation",
    "solve",
    "for",
    "x",
    "y",
    "z",
    "let",
    "denote",
    "sum",
    "product",
    "therefore",
    "because",
    "since",
    "thus",
    "hence",
    "compute",
    "evaluate",
    "simplify",
    "substitute",
    "expand",
    "factor",
]


def _texts(rng: Any, count: int) -> list[str]:
    """A pool of generated completions: mostly varied, some looping, some one template."""
    out = []
    for i in range(count):
        kind = i % 10
        words = int(rng.integers(40, 160))
        if kind == 0:  # a loop: the same 5 words again and again
            unit = " ".join(rng.choice(_WORDS, 5))
            out.append(" ".join([unit] * (words // 5)))
        elif kind == 1:  # the template
            out.append("let me think step by step. the answer is " + str(i % 7))
        else:
            out.append(" ".join(rng.choice(_WORDS, words)) + f" the answer is {i % 97}")
    return out


def generate_run(
    runs_dir: Path, run_id: str, *, version: str, rows: int, seed: int, eval_mean: float
) -> dict[str, Any]:
    """Write one run (run.json, rollouts/signals/evals Parquet) of ``rows`` rollout rows."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evotree.harness.layout import arrow_schema

    rng = np.random.default_rng(seed)
    run_dir = runs_dir / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    groups = -(-rows // SAMPLES)
    steps = (groups - 1) // GROUPS_PER_STEP + 1
    text_pool = pa.array(_texts(rng, 4000), pa.string())
    group_pool = pa.array([f"g{i}" for i in range(GROUPS_PER_STEP)], pa.string())
    task_pool = pa.array([f"task-{i}" for i in range(5000)], pa.string())
    finish_pool = pa.array(["stop", "length", "format_error", "error"], pa.string())
    components = pa.array(
        [
            '{"correct":0.0,"format":0.0}',
            '{"correct":0.0,"format":1.0}',
            '{"correct":1.0,"format":1.0}',
        ],
        pa.string(),
    )
    command_pool = [
        [],
        ["ls"],
        ["python solve.py", "pytest -q"],
        ["cat notes.md", "git log --oneline"],
        ["git show HEAD~1:solution.py"],
        ["grep -r answer .", "python check.py", "ls -la"],
    ]
    pool_lists = pa.array(command_pool, pa.list_(pa.string()))
    schema = arrow_schema("rollouts")
    truncated_total = 0
    chunk = (
        256 * 1024
    )  # whole groups; one row group each, as compaction writes (evotree.harness.compaction)
    with pq.ParquetWriter(run_dir / "rollouts.parquet", schema, compression="zstd") as writer:
        for lo in range(0, rows, chunk):
            n = min(chunk, rows - lo)
            idx = np.arange(lo, lo + n, dtype=np.int64)
            g = idx // SAMPLES
            step = g // GROUPS_PER_STEP
            # success probability rises from 0.3 to 0.6 over the run; 30 % of groups are dead
            p = 0.3 + 0.3 * step / max(steps - 1, 1)
            gu = np.random.default_rng([seed, 1, int(g[0])]).random((int(g[-1]) - int(g[0]) + 1, 2))
            dead = gu[g - g[0], 0] < 0.3
            dead_value = (gu[g - g[0], 1] < 0.5).astype(np.float64)
            reward = np.where(dead, dead_value, (rng.random(n) < p).astype(np.float64))
            null = rng.random(n) < 0.001
            length = np.minimum(rng.gamma(2.0, 150.0, n).astype(np.int64) + 16, 1024)
            truncated = length >= 1024
            truncated_total += int(truncated.sum())
            u = rng.random(n)
            finish = np.where(
                truncated, 1, np.where(u < 0.01, 2, np.where(u < 0.015, 3, 0))
            ).astype(np.int32)
            comp_index = np.where(reward == 1.0, 2, np.where(finish == 2, 0, 1)).astype(np.int32)
            c = rng.random(n)
            cmd_index = np.where(
                c < 0.9,
                0,
                np.where(
                    c < 0.94,
                    1,
                    np.where(c < 0.97, 2, np.where(c < 0.975, 3, np.where(c < 0.977, 4, 5))),
                ),
            ).astype(np.int32)
            table = pa.table(
                {
                    "run_id": pa.repeat(pa.scalar(run_id, pa.string()), n),
                    "phase": pa.repeat(pa.scalar("train", pa.string()), n),
                    "step": pa.array(step),
                    "group_id": group_pool.take(pa.array(g % GROUPS_PER_STEP)),
                    "task_id": task_pool.take(pa.array(g % 5000)),
                    "sample_index": pa.array(idx % SAMPLES),
                    "reward": pa.array(reward, mask=null),
                    "components": components.take(pa.array(comp_index)),
                    "length": pa.array(length),
                    "truncated": pa.array(truncated),
                    "finish_reason": finish_pool.take(pa.array(finish)),
                    "text": text_pool.take(pa.array(rng.integers(0, 4000, n))),
                    "commands": pool_lists.take(pa.array(cmd_index)),
                    "nonfinite": pa.array(null),
                    "ts": pa.array(1.7e9 + idx.astype(np.float64) * 0.001),
                }
            ).cast(schema)
            writer.write_table(table)
            del table

    s = np.arange(steps, dtype=np.int64)
    metrics = {
        "loss": 0.5 - 0.1 * s / steps + rng.normal(0, 0.01, steps),
        "reward": 0.3 + 0.3 * s / max(steps - 1, 1) + rng.normal(0, 0.02, steps),
        "reward_std": 0.4 + rng.normal(0, 0.01, steps),
        "entropy": 1.2 - 0.3 * s / steps + rng.normal(0, 0.02, steps),
        "kl": 0.01 + 0.02 * s / steps + np.abs(rng.normal(0, 0.002, steps)),
        "grad_norm": 1.0 + np.abs(rng.normal(0, 0.1, steps)),
        "clip_ratio/region_mean": 0.002 + np.abs(rng.normal(0, 0.0005, steps)),
        "completions/clipped_ratio": np.full(steps, truncated_total / rows),
    }
    names = list(metrics)
    sig = pa.table(
        {
            "run_id": pa.repeat(pa.scalar(run_id, pa.string()), steps * len(names)),
            "phase": pa.repeat(pa.scalar("train", pa.string()), steps * len(names)),
            "step": pa.array(np.tile(s, len(names))),
            "metric": pa.array(np.repeat(np.array(names), steps)),
            "value": pa.array(np.concatenate([metrics[n] for n in names])),
            "nonfinite": pa.array(np.zeros(steps * len(names), dtype=bool)),
            "ts": pa.array(np.full(steps * len(names), 1.7e9)),
        }
    ).cast(arrow_schema("signals"))
    pq.write_table(sig, run_dir / "signals.parquet", compression="zstd")
    tasks = 200
    ev = pa.table(
        {
            "run_id": pa.repeat(pa.scalar(run_id, pa.string()), tasks),
            "phase": pa.repeat(pa.scalar("eval", pa.string()), tasks),
            "split": pa.repeat(pa.scalar("validation", pa.string()), tasks),
            "task_id": pa.array([f"val-{i}" for i in range(tasks)]),
            "sample_index": pa.array(np.zeros(tasks, dtype=np.int64)),
            "score": pa.array((rng.random(tasks) < eval_mean).astype(np.float64)),
            "nonfinite": pa.array(np.zeros(tasks, dtype=bool)),
            "ts": pa.array(np.full(tasks, 1.7e9)),
        }
    ).cast(arrow_schema("evals"))
    pq.write_table(ev, run_dir / "evals.parquet", compression="zstd")
    (run_dir / "run.json").write_text(
        json.dumps(
            {"run_id": run_id, "version": version, "seed": seed, "status": "succeeded"}, indent=2
        )
        + "\n"
    )
    return {
        "rows": rows,
        "groups": groups,
        "steps": steps,
        "parquet_bytes": sum(f.stat().st_size for f in run_dir.glob("*.parquet")),
    }


def generate(runs_dir: Path, rows: int, seed: int = 0) -> dict[str, Any]:
    started = time.perf_counter()
    main = generate_run(runs_dir, "run-main", version="v2", rows=rows, seed=seed, eval_mean=0.4)
    parent = generate_run(
        runs_dir,
        "run-parent",
        version="v1",
        rows=max(rows // 10, SAMPLES),
        seed=seed + 1,
        eval_mean=0.5,
    )
    return {"main": main, "parent": parent, "seconds": time.perf_counter() - started}


def one_pass(runs_dir: Path) -> dict[str, Any]:
    """connect + every signal and behavior analyzer on run-main (parent: run-parent), timed."""
    started = time.perf_counter()
    from evotree.diagnostics.findings import run_analyzers
    from evotree.harness.query import connect

    imported = time.perf_counter()
    con = connect(runs_dir)
    connected = time.perf_counter()
    timings: dict[str, float] = {}
    try:
        findings = run_analyzers(
            con,
            run_ids=["run-main"],
            version="v2",
            layers=("signal", "behavior"),
            parent_run_ids=["run-parent"],
            timings=timings,
            strict=True,
        )
    finally:
        con.close()
    done = time.perf_counter()
    return {
        "import_s": imported - started,
        "connect_s": connected - imported,
        "analyzers_s": timings,
        "analyze_s": done - connected,
        "total_s": done - imported,
        "findings": [f"{f.severity} {f.code}" for f in findings],
    }


def environment() -> dict[str, Any]:
    import duckdb
    import numpy
    import pyarrow
    import scipy

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "duckdb": duckdb.__version__,
        "pyarrow": pyarrow.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "loadavg_at_start": os.getloadavg(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def cold_pass(runs_dir: Path) -> dict[str, Any]:
    """:func:`one_pass` in a fresh interpreter: imports (duckdb, scipy) and cold caches of the
    process included (the OS page cache is warm: the files were just written)."""
    import subprocess

    proc = subprocess.run(
        [sys.executable, __file__, "--one-pass", str(runs_dir)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument(
        "--json", default=None, metavar="PATH", help="Also write the results as JSON."
    )
    parser.add_argument("--keep", action="store_true", help="Keep the generated runs directories.")
    parser.add_argument("--one-pass", default=None, metavar="RUNS_DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one_pass:
        print(json.dumps(one_pass(Path(args.one_pass))))
        return 0

    env = environment()
    results: dict[str, Any] = {"benchmark": "diagnose", "environment": env, "sizes": {}}
    work = Path(tempfile.mkdtemp(prefix="evotree-bench-diagnose-"))
    try:
        for rows in args.sizes:
            runs_dir = work / f"runs-{rows}"
            print(
                f"generating {rows:,} rollout rows (+ a parent run of {rows // 10:,}) ...",
                file=sys.stderr,
                flush=True,
            )
            gen = generate(runs_dir, rows)
            print(
                f"  {gen['main']['parquet_bytes'] / 1e6:.0f} MB Parquet in {gen['seconds']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
            cold = cold_pass(runs_dir)
            passes = []
            for rep in range(args.warmup + args.repeats):
                result = one_pass(runs_dir)
                if rep >= args.warmup:
                    passes.append(result)
            names = list(passes[0]["analyzers_s"])
            med = {n: statistics.median(p["analyzers_s"][n] for p in passes) for n in names}
            total = statistics.median(p["total_s"] for p in passes)
            connect_s = statistics.median(p["connect_s"] for p in passes)
            target = TARGETS.get(rows)
            print(
                f"\n{rows:,} rollout rows ({gen['main']['steps']:,} steps, {gen['main']['groups']:,} groups): "
                f"median of {args.repeats} warm passes after {args.warmup} warm-up"
            )
            print(f"  {'connect (evotree.harness.query.connect)':40} {connect_s:7.3f} s")
            for n in names:
                print(f"  {n:40} {med[n]:7.3f} s")
            print(
                f"  {'total (connect + analyzers)':40} {total:7.3f} s   (min {min(p['total_s'] for p in passes):.3f}, "
                f"max {max(p['total_s'] for p in passes):.3f})"
            )
            print(
                f"  {'cold pass in a fresh process':40} {cold['total_s']:7.3f} s   (+ {cold['import_s']:.3f} s "
                "importing diagnostics)"
            )
            if target is not None:
                verdict = "met" if total <= target else "MISSED"
                print(
                    f"  target <= {target:g} s (warm median): {verdict}; cold: "
                    f"{'met' if cold['total_s'] <= target else 'MISSED'}"
                )
            print(f"  findings: {', '.join(passes[0]['findings'])}")
            results["sizes"][str(rows)] = {
                "generation": gen,
                "cold": cold,
                "passes": passes,
                "median_analyzer_s": med,
                "median_connect_s": connect_s,
                "median_total_s": total,
                "target_s": target,
                "target_met": None if target is None else total <= target,
            }
            if not args.keep:
                shutil.rmtree(runs_dir, ignore_errors=True)
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
            print(f"\nwrote {args.json}")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
