#!/usr/bin/env python
"""Benchmark: the dead-group ratio over 10,000,000 rollout rows in Parquet.

Target (issue): (b) at most 1 s.

A runs directory is built in a temp folder: --runs finished runs (default 1),
``<runs>/run-NNNN/run.json`` and ``rollouts.parquet``, holding --rows rows in all (default
10,000,000) in the exact schema of ``evotree.harness.layout`` (zstd, pyarrow's default row groups),
generated with numpy: 8 samples per
group, 64 groups per step, 500 tasks, ~30 % of groups "dead" (all samples the same reward, 0 or
1) and the rest Bernoulli(0.5) rewards (a few of those are all-equal by chance), 0.1 % null
rewards (non-finite), short texts. Then, interleaved in rotated order for --repeats repetitions:

  (a) duckdb-direct   DuckDB on the Parquet file(s) itself: the same GROUP BY / stddev_pop SQL
                      as dead_group_ratio, no views (a fresh in-memory connection each time)
  (b) evotree-views   evotree.harness.query.connect(runs_dir) + dead_group_ratio(con): discovery of the
                      files, the five views (with the run.json join) and the query
  (c) pandas          pd.read_parquet(columns=[run_id, step, group_id, reward]) + dropna +
                      groupby(...).reward.std(ddof=0) <= threshold, mean

All three must return the same ratio (checked). Reported: medians, (b)/(c) and (b)/(a) as the
median of per-repetition ratios. Run:

    .venv/bin/python bench/bench_dead_groups.py [--rows 10000000] [--runs 1] [--repeats 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 1.0
THRESHOLD = 1e-6

DIRECT_SQL = (
    "SELECT count(*) FILTER (WHERE sd <= {thr}) AS dead, count(*) AS groups FROM ("
    "SELECT stddev_pop(reward) AS sd FROM read_parquet({paths}, can_have_nan=true) "
    "WHERE isfinite(reward) GROUP BY run_id, step, group_id)"
)


def run_ids(runs: int) -> list[str]:
    return [f"run-{i + 1:04d}" for i in range(runs)]


def generate(runs_dir: Path, rows: int, runs: int = 1, seed: int = 0) -> dict[str, Any]:
    """Write ``rows`` rollout rows, split over ``runs`` runs (``run.json`` + ``rollouts.parquet``
    each, whole groups per run) into ``runs_dir``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evotree.harness.layout import arrow_schema

    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    samples = 8
    groups = -(-rows // samples)
    g = np.arange(rows, dtype=np.int64) // samples
    group_ids = pa.array([f"g{i:07d}" for i in range(groups)], pa.string())
    tasks = pa.array([f"task-{i:03d}" for i in range(500)], pa.string())
    dead = rng.random(groups) < 0.3
    dead_value = rng.integers(0, 2, groups).astype(np.float64)
    reward = np.where(dead[g], dead_value[g], rng.integers(0, 2, rows).astype(np.float64))
    null = rng.random(rows) < 0.001
    texts = pa.array(
        [
            f"step by step: {i} + {i * 7 % 13} = {i + i * 7 % 13}; the answer is {i % 97}"
            for i in range(1000)
        ],
        pa.string(),
    )
    components = pa.array(
        ['{"correct": 1.0, "format": 1.0}', '{"correct": 0.0, "format": 1.0}'], pa.string()
    )
    empty_lists = pa.ListArray.from_arrays(
        pa.array(np.zeros(rows + 1, dtype=np.int32)), pa.array([], pa.string())
    )
    table = pa.table(
        {
            "run_id": pa.repeat(pa.scalar("run", pa.string()), rows),  # set per run below
            "phase": pa.repeat(pa.scalar("train", pa.string()), rows),
            "step": pa.array(g // 64),
            "group_id": group_ids.take(pa.array(g)),
            "task_id": tasks.take(pa.array(g % 500)),
            "sample_index": pa.array(np.arange(rows, dtype=np.int64) % samples),
            "reward": pa.array(reward, mask=null),
            "components": components.take(pa.array((reward == 0).astype(np.int32))),
            "length": pa.array(rng.integers(16, 1024, rows)),
            "truncated": pa.array(rng.random(rows) < 0.02),
            "finish_reason": pa.repeat(pa.scalar("stop", pa.string()), rows),
            "text": texts.take(pa.array(rng.integers(0, 1000, rows))),
            "commands": empty_lists,
            "nonfinite": pa.array(null),
            "ts": pa.array(1.7e9 + np.arange(rows, dtype=np.float64) * 0.001),
        }
    )
    table = table.cast(arrow_schema("rollouts"))
    per_run = -(-groups // runs) * samples
    size = 0
    for index, run_id in enumerate(run_ids(runs)):
        part = table.slice(index * per_run, per_run)
        part = part.set_column(
            0, "run_id", pa.repeat(pa.scalar(run_id, pa.string()), part.num_rows)
        )
        run_dir = runs_dir / run_id
        run_dir.mkdir(parents=True, exist_ok=True)
        pq.write_table(part, run_dir / "rollouts.parquet", compression="zstd")
        (run_dir / "run.json").write_text(
            json.dumps(
                {
                    "run_id": run_id,
                    "version": f"v{index % 7 + 1}",
                    "seed": seed + index,
                    "status": "succeeded",
                },
                indent=2,
            )
            + "\n"
        )
        size += (run_dir / "rollouts.parquet").stat().st_size
    return {
        "rows": rows,
        "groups": groups,
        "runs": runs,
        "seconds": time.perf_counter() - started,
        "parquet_bytes": size,
    }


def _timed(fn: Callable[[], float]) -> Callable[[], tuple[float, float]]:
    def call() -> tuple[float, float]:
        t0 = time.perf_counter()
        value = fn()
        return time.perf_counter() - t0, value

    return call


def variants(runs_dir: Path, runs: int) -> dict[str, Callable[[], tuple[float, float]]]:
    import duckdb
    import pandas as pd

    from evotree.harness.query import connect, dead_group_ratio

    files = [runs_dir / run_id / "rollouts.parquet" for run_id in run_ids(runs)]
    listing = "[" + ", ".join(f"'{f}'" for f in files) + "]"

    def direct() -> float:
        con = duckdb.connect(":memory:")
        try:
            dead, groups = con.execute(DIRECT_SQL.format(thr=THRESHOLD, paths=listing)).fetchone()
        finally:
            con.close()
        return dead / groups

    def views() -> float:
        con = connect(runs_dir)
        try:
            return dead_group_ratio(con, threshold=THRESHOLD)
        finally:
            con.close()

    def pandas() -> float:
        cols = ["run_id", "step", "group_id", "reward"]
        df = (
            pd.concat([pd.read_parquet(f, columns=cols) for f in files], ignore_index=True)
            if len(files) > 1
            else pd.read_parquet(files[0], columns=cols)
        )
        df = df[df["reward"].notna()]
        std = df.groupby(["run_id", "step", "group_id"], sort=False, observed=True)["reward"].std(
            ddof=0
        )
        return float((std <= THRESHOLD).mean())

    return {
        "(a) duckdb-direct": _timed(direct),
        "(b) evotree-views": _timed(views),
        "(c) pandas": _timed(pandas),
    }


def environment() -> dict[str, Any]:
    import duckdb
    import numpy
    import pandas
    import pyarrow

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "duckdb": duckdb.__version__,
        "pyarrow": pyarrow.__version__,
        "pandas": pandas.__version__,
        "numpy": numpy.__version__,
        "loadavg_at_start": os.getloadavg(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--runs", type=int, default=1, help="Split the rows over this many runs.")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument(
        "--json", default=None, metavar="PATH", help="Also write the results as JSON."
    )
    parser.add_argument("--keep", action="store_true", help="Keep the generated runs directory.")
    args = parser.parse_args(argv)

    env = environment()
    work = Path(tempfile.mkdtemp(prefix="evotree-bench-dead-"))
    try:
        runs_dir = work / "runs"
        print(f"generating {args.rows:,} rollout rows ...", file=sys.stderr, flush=True)
        gen = generate(runs_dir, args.rows, args.runs)
        print(
            f"  {gen['groups']:,} groups in {args.runs} run(s), {gen['parquet_bytes'] / 1e6:.1f} MB Parquet "
            f"in {gen['seconds']:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        fns = variants(runs_dir, args.runs)
        names = list(fns)
        samples: dict[str, list[float]] = {n: [] for n in names}
        results: dict[str, float] = {}
        for rep in range(args.warmup + args.repeats):
            shift = rep % len(names)
            for name in names[shift:] + names[:shift]:
                seconds, value = fns[name]()
                if rep >= args.warmup:
                    samples[name].append(seconds)
                results[name] = value
        values = {round(v, 12) for v in results.values()}
        if len(values) != 1 or any(math.isnan(v) for v in results.values()):
            raise SystemExit(f"the three methods disagree: {results}")
        med = {n: statistics.median(s) for n, s in samples.items()}
        a, b, c = (samples[n] for n in names)
        ratio_bc = statistics.median(x / y for x, y in zip(b, c, strict=True))
        ratio_ba = statistics.median(x / y for x, y in zip(b, a, strict=True))

        print(
            f"\ndead-group ratio over {args.rows:,} rollout rows ({gen['groups']:,} groups, "
            f"{args.runs} run(s)), "
            f"{args.repeats} repetitions after {args.warmup} warm-up"
        )
        print(f"  {'':20}  {'median s':>9}  {'min s':>7}  {'max s':>7}")
        for n in names:
            print(f"  {n:20}  {med[n]:9.3f}  {min(samples[n]):7.3f}  {max(samples[n]):7.3f}")
        print(f"  ratio (b)/(c) = {ratio_bc:.3f}   ratio (b)/(a) = {ratio_ba:.3f}")
        print(f"  dead-group ratio = {next(iter(results.values())):.6f} (all three agree)")
        verdict = "met" if med[names[1]] <= TARGET_SECONDS else "MISSED"
        print(f"  target (b) <= {TARGET_SECONDS:.1f} s: {verdict} ({med[names[1]]:.3f} s)")

        payload = {
            "benchmark": "dead_groups",
            "environment": env,
            "generation": gen,
            "rows": args.rows,
            "runs": args.runs,
            "repeats": args.repeats,
            "warmup": args.warmup,
            "threshold": THRESHOLD,
            "ratio_value": next(iter(results.values())),
            "samples_s": samples,
            "median_s": med,
            "ratio_b_over_c": ratio_bc,
            "ratio_b_over_a": ratio_ba,
            "target_s": TARGET_SECONDS,
            "target_met": med[names[1]] <= TARGET_SECONDS,
        }
        if args.json:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
            print(f"\nwrote {args.json}")
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
