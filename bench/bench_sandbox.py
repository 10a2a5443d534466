"""Benchmark: what the phase sandbox (bubblewrap) costs a phase.

1. **Start-up**: a trivial phase command (``bash -c true``) started plainly, as phases ran
   before the sandbox, and inside the sandbox a train phase gets (its run folders, the Python
   environment and evotree's folders read-only, the default ``[sandbox]`` limits through
   ``prlimit``, started through the CPU-accounting launcher as phases are), alternated, ``--starts`` times each; also ``python -c pass`` both ways (the
   interpreter's start inside the sandbox: imports go through bind mounts). Medians; target
   <= 50 ms for the sandbox's start-up (sandboxed minus plain).
2. **A 10 s phase**: ``sleep 10`` (pure start and teardown cost) and ~10 s of single-threaded
   Python arithmetic (does work inside run slower?), plainly and sandboxed, alternated,
   ``--rounds`` times each; the overhead in percent of the plain wall time. Target <= 3 %.
3. **The judge's copy** of the candidate (regular files only): a synthetic candidate of
   ``--files`` small files and one 64 MiB file, copied by ``copy_regular_files``, against
   ``shutil.copytree``.

    .venv/bin/python bench/bench_sandbox.py --json bench/results/sandbox.json
    .venv/bin/python bench/bench_sandbox.py --startup-only --json bench/results/sandbox_startup.json
    # flags: --starts 40 --rounds 3 --seconds 10 --files 1000

Start-up is also measured under the runtime trace (``SandboxSpec.trace``: the tracer, its filter's
installer -- a Python start inside the sandbox -- and the conversion of the trace after the
command), and with the CPU time of the whole process tree beside the wall time.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib  # noqa: F401  - isolates git's configuration first

from evotree.core.config_execution import SandboxSection
from evotree.harness.sandbox import check_sandbox, finish_trace, wrap
from evotree.harness.sandbox_copy import copy_regular_files
from evotree.harness.sandbox_launch import accounted
from evotree.harness.sandbox_spec import SandboxPolicy, SandboxSpec


def _spec(run: Path) -> SandboxSpec:
    policy = SandboxPolicy.from_config(SandboxSection())
    return SandboxSpec(
        cwd=run / "candidate",
        read_only=(run,),
        read_write=(run / "candidate", run / "evidence" / "train"),
        network=False,
        limits=policy.limits,
    )


def _time(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        argv,
        cwd=cwd,
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    return time.perf_counter() - start


def _cpu_time(argv: list[str], cwd: Path, after: Any = None) -> tuple[float, float]:
    """(wall, CPU of the whole process tree) of one start; ``after``: work the phase pays after
    the command (the trace's conversion), inside the wall time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        argv,
        cwd=cwd,
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )
    if after is not None:
        after()
    wall = time.perf_counter() - start
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, used.ru_utime + used.ru_stime - before.ru_utime - before.ru_stime


def startup(run: Path, starts: int, traced: bool = True) -> dict[str, Any]:
    """Plain, sandboxed and (``traced``) sandboxed under the runtime trace, alternated in rotated
    order after two warm-up rounds; medians of wall and CPU time."""
    spec = _spec(run)
    trace_spec = dataclasses.replace(spec, trace=run.parent / "startup.trace")
    evidence = run.parent / "startup-evidence"
    evidence.mkdir(exist_ok=True)
    cases = {
        "bash -c true": ["bash", "-c", "true"],
        "python -c pass": ["bash", "-c", f"{sys.executable} -c pass"],
    }
    out: dict[str, Any] = {}
    for name, argv in cases.items():
        kinds: dict[str, tuple[list[str], Any]] = {
            "plain": (argv, None),
            "sandbox": (accounted(wrap(spec, argv)), None),
        }
        if traced:
            kinds["traced"] = (
                accounted(wrap(trace_spec, argv)),
                lambda: finish_trace(trace_spec, evidence),
            )
        walls: dict[str, list[float]] = {k: [] for k in kinds}
        cpus: dict[str, list[float]] = {k: [] for k in kinds}
        order = list(kinds)
        for i in range(starts + 2):
            for kind in order[i % len(order) :] + order[: i % len(order)]:
                cmd, after = kinds[kind]
                wall, cpu = _cpu_time(cmd, run / "candidate", after)
                if i >= 2:  # two warm-up rounds
                    walls[kind].append(wall)
                    cpus[kind].append(cpu)
        med = {k: statistics.median(v) for k, v in walls.items()}
        row = {
            "plain_ms": round(med["plain"] * 1000, 2),
            "sandbox_ms": round(med["sandbox"] * 1000, 2),
            "overhead_ms": round((med["sandbox"] - med["plain"]) * 1000, 2),
            "sandbox_p90_ms": round(
                sorted(walls["sandbox"])[int(len(walls["sandbox"]) * 0.9)] * 1000, 2
            ),
            "plain_cpu_ms": round(statistics.median(cpus["plain"]) * 1000, 2),
            "sandbox_cpu_ms": round(statistics.median(cpus["sandbox"]) * 1000, 2),
            "n": len(walls["sandbox"]),
        }
        if traced:
            row.update(
                traced_ms=round(med["traced"] * 1000, 2),
                traced_overhead_ms=round((med["traced"] - med["plain"]) * 1000, 2),
                traced_p90_ms=round(
                    sorted(walls["traced"])[int(len(walls["traced"]) * 0.9)] * 1000, 2
                ),
                traced_cpu_ms=round(statistics.median(cpus["traced"]) * 1000, 2),
            )
        out[name] = row
    return out


_WORK = "x = 0\nfor i in range({n}):\n    x = (x * 31 + i) % 1000003\n"


def _calibrate(seconds: float) -> int:
    n = 2_000_000
    while True:
        took = _time([sys.executable, "-c", _WORK.format(n=n)], Path.cwd())
        if took > 1.0:
            return int(n * seconds / took)
        n *= 2


def long_phase(run: Path, rounds: int, seconds: float) -> dict[str, Any]:
    spec = _spec(run)
    cases = {
        f"sleep {seconds:g}": ["bash", "-c", f"sleep {seconds:g}"],
        f"~{seconds:g} s of Python arithmetic": [
            "bash",
            "-c",
            f"{sys.executable} -c '{_WORK.format(n=_calibrate(seconds))}'",
        ],
    }
    out: dict[str, Any] = {}
    for name, argv in cases.items():
        plain, boxed = [], []
        for i in range(rounds):
            order = [("plain", argv), ("boxed", accounted(wrap(spec, argv)))]
            if i % 2:
                order.reverse()
            for kind, cmd in order:
                (plain if kind == "plain" else boxed).append(_time(cmd, run / "candidate"))
        p, b = statistics.median(plain), statistics.median(boxed)
        out[name] = {
            "plain_s": round(p, 3),
            "sandbox_s": round(b, 3),
            "overhead_pct": round((b - p) / p * 100, 2),
            "plain_all": [round(x, 3) for x in plain],
            "sandbox_all": [round(x, 3) for x in boxed],
        }
    return out


def judge_copy(base: Path, files: int) -> dict[str, Any]:
    src = base / "candidate-src"
    (src / "output").mkdir(parents=True)
    for i in range(files):
        (src / f"f{i:05d}.txt").write_bytes(os.urandom(10_240))
    (src / "output" / "model.safetensors").write_bytes(os.urandom(64 * 2**20))
    mine, theirs = [], []
    for i in range(3):
        for kind in ("mine", "theirs") if i % 2 == 0 else ("theirs", "mine"):
            dst = base / f"copy-{kind}-{i}"
            start = time.perf_counter()
            if kind == "mine":
                dst.mkdir()
                copy_regular_files(src, dst, max_files=100_000, max_bytes=2**40)
            else:
                shutil.copytree(src, dst, symlinks=True)
            (mine if kind == "mine" else theirs).append(time.perf_counter() - start)
            shutil.rmtree(dst)
    return {
        "files": files + 1,
        "mib": round((files * 10_240 + 64 * 2**20) / 2**20, 1),
        "copy_regular_files_s": round(statistics.median(mine), 3),
        "shutil_copytree_s": round(statistics.median(theirs), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--startup-only",
        action="store_true",
        help="only the start-up (item 1), written with the target, figure and verdict",
    )
    args = parser.parse_args()
    status = check_sandbox()
    if not status.ok:
        sys.exit(f"no sandbox here: {status.reason}; {status.fix}")
    with tempfile.TemporaryDirectory(prefix="evotree-bench-sandbox-") as tmp:
        run = Path(tmp) / "runs" / "v1-s0-x"
        (run / "candidate").mkdir(parents=True)
        (run / "evidence" / "train").mkdir(parents=True)
        result: dict[str, Any] = {
            "machine": {
                "python": platform.python_version(),
                "cpus": os.cpu_count(),
                "load": os.getloadavg(),
                "bwrap": status.version,
                "check_ms": status.startup_ms,
                "uid": os.getuid(),
                "kernel": platform.release(),
            },
            "startup": startup(run, args.starts),
        }
        if not args.startup_only:
            result["long_phase"] = long_phase(run, args.rounds, args.seconds)
            result["judge_copy"] = judge_copy(Path(tmp), args.files)
    result["machine"]["load_after"] = os.getloadavg()
    true = result["startup"]["bash -c true"]
    result = {
        "bench": "sandbox_startup",
        "target": "the phase sandbox's start-up (sandboxed minus plain, bash -c true, median) <= 50 ms",
        "figure": (
            f"{true['overhead_ms']:.1f} ms (sandbox {true['sandbox_ms']:.1f} ms, p90 {true['sandbox_p90_ms']:.1f} ms, "
            f"plain {true['plain_ms']:.1f} ms); under the runtime trace {true.get('traced_overhead_ms', 0):.1f} ms"
        ),
        "verdict": "met" if true["overhead_ms"] <= 50 else "not met",
        "script": "bench/bench_sandbox.py",
        "command": "python " + " ".join(["bench/bench_sandbox.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        ).stdout.strip(),
        **result,
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
