#!/usr/bin/env python
"""Benchmark: compaction of 1,000,000 rollout rows, JSONL -> Parquet (evotree.harness.compaction.compact_run).

Target (issue): under 10 s on the 2-core development machine.

A run directory is built in a temp folder and its train-phase evidence written by the real
recorder (evotree.harness.recorder.Recorder.rollout_group): --rows rows (default 1,000,000) in groups
of 8 samples, 64 groups per step, 500 tasks, rewards in {0, 0.5, 1} with two reward
components, lengths, finish reasons, a short text (~16 words) per sample and a shell command
for every third sample; plus one signal row per step and a few train-split evals. Then two
variants, interleaved in rotated order, each --repeats times (median reported):

  clean     the files as the recorder left them
  crashed   the same rollouts file plus 1 garbage line per 10,000 rows and a truncated last
            line (a SIGKILL mid-write): the malformed lines must be counted, not fatal

Each timing is one full compact_run (all three kinds; the Parquet files are rewritten every
time). The row counts, malformed counts and the Parquet schema are checked after each run.
Run:

    .venv/bin/python bench/bench_compaction.py [--rows 1000000] [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
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

TARGET_SECONDS = 10.0
WORDS = (
    "the",
    "answer",
    "is",
    "so",
    "we",
    "add",
    "multiply",
    "sum",
    "step",
    "therefore",
    "final",
    "number",
    "carry",
    "digit",
    "check",
    "result",
    "equals",
    "first",
    "then",
    "minus",
)


def generate(run_dir: Path, rows: int, seed: int = 0) -> dict[str, Any]:
    """Write the train-phase evidence of a run with ``rows`` rollout rows, through the recorder."""
    from evotree.harness.recorder import Recorder

    started = time.perf_counter()
    rng = random.Random(seed)
    samples = 8
    with Recorder(run_dir / "evidence" / "train", run_id="bench-run", phase="train") as rec:
        group = 0
        written = 0
        while written < rows:
            n = min(samples, rows - written)
            step = group // 64
            rewards = [rng.choice((0.0, 0.5, 1.0)) for _ in range(n)]
            rec.rollout_group(
                step,
                group_id=f"g{group:07d}",
                task_id=f"task-{group % 500:03d}",
                rewards=rewards,
                components={"correct": rewards, "format": [1.0] * n},
                lengths=[rng.randint(16, 1024) for _ in range(n)],
                truncated=[rng.random() < 0.02 for _ in range(n)],
                finish_reasons=["stop"] * n,
                texts=[" ".join(rng.choices(WORDS, k=16)) for _ in range(n)],
                commands=[
                    ["python -c 'print(2+2)'"] if (written + i) % 3 == 0 else [] for i in range(n)
                ],
            )
            if group % 64 == 0:
                rec.signal(step, loss=1.0 / (step + 1), reward_mean=sum(rewards) / n)
                rec.eval_result("train", f"task-{group % 500:03d}", rewards[0])
            written += n
            group += 1
    path = run_dir / "evidence" / "train" / "rollouts.jsonl"
    return {
        "rows": rows,
        "groups": group,
        "seconds": time.perf_counter() - started,
        "jsonl_bytes": path.stat().st_size,
    }


def corrupt(src: Path, dst: Path, rows: int) -> int:
    """Copy the run's evidence to ``dst`` and damage its rollouts file; return the malformed lines."""
    shutil.copytree(src / "evidence", dst / "evidence")
    path = dst / "evidence" / "train" / "rollouts.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1]
    out = []
    garbage = 0
    for i, line in enumerate(lines):
        out.append(line)
        if i % 10_000 == 9_999:
            out.append(b'{"run_id": "bench-run", "phase": "train", garbage')
            garbage += 1
    out.append(lines[-1][: len(lines[-1]) // 2])  # a truncated extra last line, no newline
    path.write_bytes(b"\n".join(out))
    return garbage + 1


def environment() -> dict[str, Any]:
    import duckdb
    import pyarrow

    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "duckdb": duckdb.__version__,
        "pyarrow": pyarrow.__version__,
        "loadavg_at_start": os.getloadavg(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--json", default=None, metavar="PATH", help="Also write the results as JSON."
    )
    parser.add_argument("--keep", action="store_true", help="Keep the generated run directories.")
    args = parser.parse_args(argv)

    import pyarrow.parquet as pq

    from evotree.harness.compaction import compact_run
    from evotree.harness.layout import KINDS, arrow_schema

    env = environment()
    work = Path(tempfile.mkdtemp(prefix="evotree-bench-compaction-"))
    try:
        clean = work / "clean"
        print(
            f"recording {args.rows:,} rollout rows with the recorder ...",
            file=sys.stderr,
            flush=True,
        )
        gen = generate(clean, args.rows)
        print(
            f"  {gen['jsonl_bytes'] / 1e6:.0f} MB of JSONL in {gen['seconds']:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        crashed = work / "crashed"
        bad_lines = corrupt(clean, crashed, args.rows)

        expected = {"clean": (clean, 0), "crashed": (crashed, bad_lines)}
        last: dict[str, Any] = {}

        def variant(name: str) -> Callable[[], float]:
            run_dir, malformed = expected[name]

            def call() -> float:
                t0 = time.perf_counter()
                result = compact_run(run_dir)
                seconds = time.perf_counter() - t0
                if result.rows["rollouts"] != args.rows or result.malformed_total != malformed:
                    raise SystemExit(f"{name}: wrong result {result.to_dict()}")
                for kind in KINDS:
                    if not pq.read_schema(run_dir / f"{kind}.parquet").equals(arrow_schema(kind)):
                        raise SystemExit(f"{name}: {kind}.parquet has the wrong schema")
                last[name] = result
                return seconds

            return call

        fns = {"clean": variant("clean"), "crashed": variant("crashed")}
        names = list(fns)
        samples: dict[str, list[float]] = {n: [] for n in names}
        for rep in range(args.repeats):
            shift = rep % len(names)
            for name in names[shift:] + names[:shift]:
                samples[name].append(fns[name]())
        med = {n: statistics.median(s) for n, s in samples.items()}
        parquet_bytes = (clean / "rollouts.parquet").stat().st_size
        peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        print(
            f"\ncompact_run over {args.rows:,} rollout rows "
            f"({gen['jsonl_bytes'] / 1e6:.0f} MB JSONL -> {parquet_bytes / 1e6:.1f} MB Parquet), "
            f"{args.repeats} repetitions"
        )
        print(f"  {'':10}  {'median s':>9}  {'min s':>7}  {'max s':>7}  {'rows/s':>11}  malformed")
        for n in names:
            print(
                f"  {n:10}  {med[n]:9.2f}  {min(samples[n]):7.2f}  {max(samples[n]):7.2f}  "
                f"{args.rows / med[n]:11,.0f}  {last[n].malformed_total}"
            )
        print(f"  peak RSS of this process (includes generation): {peak_rss_mb:.0f} MB")
        verdict = "met" if max(med.values()) < TARGET_SECONDS else "MISSED"
        print(
            f"  target < {TARGET_SECONDS:.0f} s: {verdict} (clean {med['clean']:.2f} s, "
            f"crashed {med['crashed']:.2f} s)"
        )

        payload = {
            "benchmark": "compaction",
            "environment": env,
            "generation": gen,
            "rows": args.rows,
            "repeats": args.repeats,
            "samples_s": samples,
            "median_s": med,
            "parquet_bytes": parquet_bytes,
            "malformed_lines_crashed": bad_lines,
            "peak_rss_mb": peak_rss_mb,
            "target_s": TARGET_SECONDS,
            "target_met": max(med.values()) < TARGET_SECONDS,
            "results": {n: r.to_dict() for n, r in last.items()},
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
