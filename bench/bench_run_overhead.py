"""Benchmark: what `evotree run` costs around its two phases, for a one-run request.

A gym workspace (`evotree init --domain gym --env CartPole-v1` in a temp git repository with an
identity). Each repetition branches a fresh version (untimed: a search's typical step runs a new
version once), then, interleaved:

(a) `evotree run vN --json`: the wall time of the whole command (the real console script, as a
    subprocess) and its CPU seconds (this process's RUSAGE_CHILDREN, which includes the phases:
    evotree waits for them);
(b) the two phases themselves: the eval phase's own wall and CPU seconds as the run recorded them
    (measured by evotree outside the sandbox, Popen to exit), and the train phase run again BY HAND
    in the same sandbox -- the SandboxSpec built as harness/executors/phases.py builds it, through
    harness.sandbox.wrap + accounted, on a fresh export of the same commit -- which validates that
    the recorded phase time is the phase's own (the by-hand and recorded train walls agree).

evotree's own cost = (a) - (train + eval), in wall and in CPU seconds, split by where it goes
using the run's timestamps (the ledger's run.reserved / run.started / run.finished events and
run.json's phase times):

    spawn -> run.reserved      start-up and imports, trust check, planning, the reservation
    run.reserved -> started    the executor's set-up, run.json
    started -> train start     run.started (patch digest), candidate export, sandbox checks
    train end -> eval start    kill check, judge export, candidate copy
    eval end -> ended_at       trace read-back
    ended_at -> run.finished   compaction, headline, manifest, provenance, run.finished
    run.finished -> exit       release, warnings, output, interpreter exit

The machine is shared (load is reported with every figure); wall figures are medians over the
repetitions, CPU seconds are less sensitive to load than wall.

    .venv/bin/python bench/bench_run_overhead.py --reps 5
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: E402  - isolates git's configuration first

# the warm-up request writes the bytecode caches that a user's installation has: with
# PYTHONDONTWRITEBYTECODE inherited, every request would compile again each module edited since
# its cache was last written (a cost of this machine's shared checkout, not of evotree)
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

SEGMENTS = (
    "startup_to_reserved",
    "reserved_to_started",
    "started_to_train",
    "train_to_eval",
    "eval_to_ended",
    "ended_to_finished",
    "finished_to_exit",
)


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def setup(root: Path) -> Path:
    repo = root / "ws"
    repo.mkdir()
    benchlib.git(repo, "init", "--quiet", "-b", "main")
    benchlib.git(repo, "config", "user.name", benchlib.IDENTITY[0])
    benchlib.git(repo, "config", "user.email", benchlib.IDENTITY[1])
    benchlib.git(repo, "commit", "--quiet", "--allow-empty", "-m", "start")
    benchlib.evotree(repo, "init", "--domain", "gym", "--env", "CartPole-v1")
    return repo


def events_of(repo: Path, run_id: str) -> dict[str, float]:
    """When the ledger recorded run.reserved / run.started / run.finished for ``run_id``."""
    from evotree.core.workspace import Workspace

    ws = Workspace.open(repo)
    found: dict[str, float] = {}
    for entry in ws.ledger.entries(limit=50):
        event = entry.event
        data = event.data or {}
        ids = (
            [r.get("run_id") for r in data.get("runs", [])]
            if event.kind == "run.reserved"
            else [data.get("run_id")]
        )
        if run_id in ids and event.kind in ("run.reserved", "run.started", "run.finished"):
            found.setdefault(event.kind, _ts(event.at))
    return found


def run_by_hand(repo: Path, record: dict[str, Any], scratch: Path) -> dict[str, float]:
    """The train phase of ``record`` again, by hand, in the sandbox phases.py would build."""
    from evotree.core.workspace import Workspace
    from evotree.harness.budget import RunLimits
    from evotree.harness.executors.phases import phase_env
    from evotree.harness.export import export_tree
    from evotree.harness.layout import RunPaths
    from evotree.harness.records import RunPlan
    from evotree.harness.sandbox import can_trace, wrap
    from evotree.harness.sandbox_launch import accounted, sandbox_env
    from evotree.harness.sandbox_spec import SandboxPolicy, SandboxSpec

    ws = Workspace.open(repo)
    cfg = ws.config
    policy = SandboxPolicy.from_config(cfg.sandbox, forbidden=(ws.root,))
    paths = RunPaths(scratch / (record["run_id"] + "-byhand"))
    paths.root.mkdir(parents=True)
    export_tree(ws.git.repo, record["commit"], paths.candidate, exclude=list(cfg.eval.judge_paths))
    paths.evidence_dir("train").mkdir(parents=True, exist_ok=True)
    plan = RunPlan(
        run_id=paths.root.name,
        version=record["version"],
        seed=record["seed"],
        commit=record["commit"],
        judge_commit=record["judge_commit"] or "",
        judge_version=record["judge_version"] or "",
        limits=RunLimits(
            **{k: record["limits"].get(k) for k in ("wall_seconds", "max_steps", "max_episodes")}
        ),
    )
    extra = policy.extra_read_only()
    spec = SandboxSpec(
        cwd=paths.candidate,
        read_only=(paths.root, *extra),
        read_write=(paths.candidate, paths.evidence_dir("train")),
        network=policy.train_network,
        limits=policy.limits,
        pass_env=policy.pass_env,
    )
    if policy.trace and can_trace():
        (paths.root / "trace").mkdir()
        spec = dataclasses.replace(spec, trace=paths.root / "trace" / "train.trace")
    env = sandbox_env(phase_env(plan, paths, "train"), spec.pass_env)
    argv = accounted(wrap(spec, ["bash", "-c", cfg.train.command]))
    paths.log("train", "out").parent.mkdir(parents=True, exist_ok=True)
    with open(paths.log("train", "out"), "wb") as out, open(paths.log("train", "err"), "wb") as err:
        start = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=paths.candidate,
            env=env,
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(
            f"the by-hand train phase failed ({proc.returncode}): "
            f"{paths.log('train', 'err').read_text()[-500:]}"
        )
    shutil.rmtree(paths.root, ignore_errors=True)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime}


def one_rep(repo: Path, index: int, scratch: Path) -> dict[str, Any]:
    out = benchlib.evotree(repo, "branch", "-m", f"overhead rep {index}", "--json")
    version = json.loads(out.stdout)["id"]
    load = os.getloadavg()[0]
    cpu0 = _children_cpu()
    spawn = time.time()
    t0 = time.perf_counter()
    proc = benchlib.evotree(repo, "run", version, "--json")
    wall = time.perf_counter() - t0
    exited = time.time()
    cpu = _children_cpu() - cpu0
    runs = json.loads(proc.stdout)["runs"]
    assert len(runs) == 1 and runs[0]["status"] == "succeeded", runs
    record = json.loads((repo / ".evotree" / "runs" / runs[0]["run_id"] / "run.json").read_text())
    train, judge = record["phases"]["train"], record["phases"]["eval"]
    ev = events_of(repo, record["run_id"])
    points = [
        spawn,
        ev["run.reserved"],
        _ts(record["started_at"]),
        _ts(train["started_at"]),
        _ts(train["ended_at"]),
        _ts(judge["started_at"]),
        _ts(judge["ended_at"]),
        _ts(record["ended_at"]),
        ev["run.finished"],
        exited,
    ]
    # the phases' own spans are left out: segments are what lies between them
    pairs = ((0, 1), (1, 2), (2, 3), (4, 5), (6, 7), (7, 8), (8, 9))
    spans = [points[b] - points[a] for a, b in pairs]
    hand = run_by_hand(repo, record, scratch)
    phases_wall = train["wall_seconds"] + judge["wall_seconds"]
    phases_cpu = train["cpu_seconds"] + judge["cpu_seconds"]
    return {
        "version": version,
        "run_id": record["run_id"],
        "load_1min": round(load, 2),
        "run_wall": round(wall, 3),
        "run_cpu": round(cpu, 3),
        "train_wall": train["wall_seconds"],
        "eval_wall": judge["wall_seconds"],
        "train_cpu": train["cpu_seconds"],
        "eval_cpu": judge["cpu_seconds"],
        "train_wall_by_hand": round(hand["wall"], 3),
        "train_cpu_by_hand": round(hand["cpu"], 3),
        "own_wall": round(wall - phases_wall, 3),
        "own_wall_vs_hand": round(wall - hand["wall"] - judge["wall_seconds"], 3),
        "own_cpu": round(cpu - phases_cpu, 3),
        "segments": {name: round(value, 3) for name, value in zip(SEGMENTS, spans, strict=True)},
    }


def summarise(reps: list[dict[str, Any]]) -> dict[str, Any]:
    def med(key: str) -> float:
        return round(statistics.median(r[key] for r in reps), 3)

    return {
        "reps": len(reps),
        "load_1min": [r["load_1min"] for r in reps],
        **{
            f"median_{k}": med(k)
            for k in (
                "run_wall",
                "run_cpu",
                "train_wall",
                "eval_wall",
                "train_wall_by_hand",
                "own_wall",
                "own_wall_vs_hand",
                "own_cpu",
            )
        },
        "min_own_wall": round(min(r["own_wall"] for r in reps), 3),
        "median_segments": {
            s: round(statistics.median(r["segments"][s] for r in reps), 3) for s in SEGMENTS
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None, help="write the raw figures as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evotree-bench-overhead-") as tmp:
        root = Path(tmp)
        repo = setup(root)
        scratch = root / "byhand"
        scratch.mkdir()
        one_rep(repo, 0, scratch)  # warm-up: bytecode caches, the tracer's build; not counted
        reps = []
        for index in range(1, args.reps + 1):
            rep = one_rep(repo, index, scratch)
            reps.append(rep)
            print(json.dumps(rep), flush=True)
        summary = summarise(reps)
    print(json.dumps(summary, indent=1))
    if args.out is not None:
        args.out.write_text(json.dumps({"summary": summary, "reps": reps}, indent=1) + "\n")


if __name__ == "__main__":
    main()
