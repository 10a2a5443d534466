"""Benchmark: N versions x S seeds on the Ray executor against the local executor (--jobs) here.

One real workspace (git repo, `evotree init`, N versions) whose train and judge phases are tiny
Python scripts that use the recorder (a few signals, rollouts and evals), so the time measured
is what the executor adds around a run. Rounds alternate local / ray in the same process; Ray
is started once before the first round (its start-up is reported on its own, not per round).

Per-run overhead of an executor = (wall of the round x parallel slots - sum over runs of the
train and eval phases' own wall time) / runs: everything a run costs that is not its commands
(export or packaging, process start, evidence copy and import, compaction, ledger).

    .venv/bin/python bench/bench_executor.py --versions 3 --seeds 2 --rounds 3 --slots 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: F401  - isolates git's configuration first

TRAIN = """\
import json
from evotree.harness import get_recorder
rec = get_recorder()
for step in range(1, 4):
    rec.signal(step, loss=1.0 / step)
    rec.rollout_group(step, group_id=f"g{step}", task_id="t", rewards=[0.5, 0.0, 1.0, 0.5])
json.dump({"skill": 0.5}, open("model.json", "w"))
"""
JUDGE = """\
from evotree.harness import get_recorder
rec = get_recorder()
for i in range(10):
    rec.eval_result("validation", f"val-{i}", float(i % 2))
"""
CONFIG = """\
[train]
command = "python train.py"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
[budget]
max_runs_per_version = 1000
"""


def build(root: Path, versions: int) -> list[str]:
    import subprocess

    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace, init_workspace

    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.com")):
        subprocess.run(["git", "-C", str(root), "config", key, value], check=True)
    (root / "train.py").write_text(TRAIN)
    (root / "judge").mkdir()
    (root / "judge" / "eval.py").write_text(JUDGE)
    (root / "evotree.toml").write_text(CONFIG)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "bench recipe"], check=True)
    init_workspace(root)
    ws = Workspace.open(root)
    ids = []
    for i in range(versions):
        rec = create_version(ws, hypothesis=f"bench {i}")
        worktree = root / rec.worktree
        (worktree / "recipe.toml").write_text(f"i = {i}\n")
        subprocess.run(["git", "-C", str(worktree), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(worktree), "commit", "-qm", f"recipe {i}"], check=True)
        ids.append(rec.id)
    return ids


def one_round(ws: Any, ids: list[str], seeds: int, executor: str, slots: int) -> dict[str, Any]:
    from evotree.gates.runs import run_versions

    start = time.perf_counter()
    records = run_versions(ws, ids, seeds=seeds, jobs=slots, executor=executor)
    wall = time.perf_counter() - start
    bad = [r.run_id for r in records if r.status != "succeeded"]
    if bad:
        raise SystemExit(f"{executor}: runs did not succeed: {bad} {[r.error for r in records]}")
    phases = sum(p["wall_seconds"] for r in records for p in r.phases.values())
    return {
        "executor": executor,
        "runs": len(records),
        "wall_s": wall,
        "phase_s": phases,
        "overhead_per_run_s": (wall * slots - phases) / len(records),
    }


def _noop(_: int) -> int:
    import os

    return os.getpid()


def ray_floor(samples: int) -> dict[str, float]:
    """What Ray itself costs per task here: a no-op task in a fresh runtime_env package (a new
    worker process, as each new commit gets) and in an already used one (a reused worker)."""
    import io
    import secrets
    import zipfile

    import ray
    from ray._private.runtime_env.packaging import upload_package_to_gcs

    task = ray.remote(num_cpus=1, max_retries=0)(_noop)
    fresh, warm = [], []
    for _ in range(samples):
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("candidate.tar", secrets.token_bytes(64))
        uri = f"gcs://_ray_pkg_{secrets.token_hex(16)}.zip"
        upload_package_to_gcs(uri, buffer.getvalue())
        for bucket in (fresh, warm):
            start = time.perf_counter()
            ray.get(task.options(runtime_env={"working_dir": uri}).remote(0))
            bucket.append(time.perf_counter() - start)
    return {
        "noop_fresh_env_s": statistics.median(fresh),
        "noop_same_env_s": statistics.median(warm),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--slots", type=int, default=2, help="--jobs of the local executor = Ray CPUs"
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)

    import os

    import ray

    from evotree.core.workspace import Workspace

    with tempfile.TemporaryDirectory(prefix="evotree-bench-executor-") as tmp:
        root = Path(tmp) / "w"
        ids = build(root, args.versions)
        ws = Workspace.open(root)
        t0 = time.perf_counter()
        ray.init(
            num_cpus=args.slots, include_dashboard=False, log_to_driver=False, logging_level="ERROR"
        )
        ray_start = time.perf_counter() - t0
        rows = []
        for i in range(args.rounds):
            order = ("local", "ray") if i % 2 == 0 else ("ray", "local")
            for executor in order:
                row = one_round(ws, ids, args.seeds, executor, args.slots)
                row["round"] = i
                rows.append(row)
                print(
                    f"round {i} {executor:5s} runs={row['runs']} wall={row['wall_s']:.2f}s "
                    f"phases={row['phase_s']:.2f}s overhead/run={row['overhead_per_run_s']:.2f}s",
                    flush=True,
                )
        floor = ray_floor(3)
        print(
            f"ray no-op task: fresh runtime_env {floor['noop_fresh_env_s']:.2f}s, "
            f"same runtime_env {floor['noop_same_env_s']:.3f}s",
            flush=True,
        )
        ray.shutdown()

    def med(executor: str, key: str) -> float:
        return statistics.median(r[key] for r in rows if r["executor"] == executor)

    summary = {
        "versions": args.versions,
        "seeds": args.seeds,
        "runs_per_round": args.versions * args.seeds,
        "slots": args.slots,
        "rounds": args.rounds,
        "ray_start_s": ray_start,
        "load_avg_1m": os.getloadavg()[0],
        "cpus": os.cpu_count(),
        "local_wall_s": med("local", "wall_s"),
        "ray_wall_s": med("ray", "wall_s"),
        "local_overhead_per_run_s": med("local", "overhead_per_run_s"),
        "ray_overhead_per_run_s": med("ray", "overhead_per_run_s"),
        **floor,
        "rows": rows,
    }
    summary["ray_over_local_wall"] = summary["ray_wall_s"] / summary["local_wall_s"]
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
