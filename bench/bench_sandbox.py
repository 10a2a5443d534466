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
    # flags: --starts 40 --rounds 3 --seconds 10 --files 1000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
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

from evotree.core.config import SandboxSection
from evotree.harness.sandbox import SandboxPolicy, SandboxSpec, accounted, check_sandbox, copy_regular_files, wrap


def _spec(run: Path) -> SandboxSpec:
    policy = SandboxPolicy.from_config(SandboxSection())
    return SandboxSpec(cwd=run / "candidate", read_only=(run,),
                       read_write=(run / "candidate", run / "evidence" / "train"), network=False, limits=policy.limits)


def _time(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   start_new_session=True)
    return time.perf_counter() - start


def startup(run: Path, starts: int) -> dict[str, Any]:
    spec = _spec(run)
    cases = {
        "bash -c true": ["bash", "-c", "true"],
        "python -c pass": ["bash", "-c", f"{sys.executable} -c pass"],
    }
    out: dict[str, Any] = {}
    for name, argv in cases.items():
        plain, boxed = [], []
        for i in range(starts + 2):
            order = [("plain", argv), ("boxed", accounted(wrap(spec, argv)))]
            if i % 2:
                order.reverse()
            for kind, cmd in order:
                took = _time(cmd, run / "candidate")
                if i >= 2:  # two warm-up rounds
                    (plain if kind == "plain" else boxed).append(took)
        out[name] = {"plain_ms": round(statistics.median(plain) * 1000, 2),
                     "sandbox_ms": round(statistics.median(boxed) * 1000, 2),
                     "overhead_ms": round((statistics.median(boxed) - statistics.median(plain)) * 1000, 2),
                     "sandbox_p90_ms": round(sorted(boxed)[int(len(boxed) * 0.9)] * 1000, 2), "n": len(boxed)}
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
        f"~{seconds:g} s of Python arithmetic":
            ["bash", "-c", f"{sys.executable} -c '{_WORK.format(n=_calibrate(seconds))}'"],
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
        out[name] = {"plain_s": round(p, 3), "sandbox_s": round(b, 3), "overhead_pct": round((b - p) / p * 100, 2),
                     "plain_all": [round(x, 3) for x in plain], "sandbox_all": [round(x, 3) for x in boxed]}
    return out


def judge_copy(base: Path, files: int) -> dict[str, Any]:
    src = base / "candidate-src"
    (src / "output").mkdir(parents=True)
    for i in range(files):
        (src / f"f{i:05d}.txt").write_bytes(os.urandom(10_240))
    (src / "output" / "model.safetensors").write_bytes(os.urandom(64 * 2**20))
    mine, theirs = [], []
    for i in range(3):
        for kind in (("mine", "theirs") if i % 2 == 0 else ("theirs", "mine")):
            dst = base / f"copy-{kind}-{i}"
            start = time.perf_counter()
            if kind == "mine":
                dst.mkdir()
                copy_regular_files(src, dst, max_files=100_000, max_bytes=2**40)
            else:
                shutil.copytree(src, dst, symlinks=True)
            (mine if kind == "mine" else theirs).append(time.perf_counter() - start)
            shutil.rmtree(dst)
    return {"files": files + 1, "mib": round((files * 10_240 + 64 * 2**20) / 2**20, 1),
            "copy_regular_files_s": round(statistics.median(mine), 3),
            "shutil_copytree_s": round(statistics.median(theirs), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--starts", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    status = check_sandbox()
    if not status.ok:
        sys.exit(f"no sandbox here: {status.reason}; {status.fix}")
    with tempfile.TemporaryDirectory(prefix="evotree-bench-sandbox-") as tmp:
        run = Path(tmp) / "runs" / "v1-s0-x"
        (run / "candidate").mkdir(parents=True)
        (run / "evidence" / "train").mkdir(parents=True)
        result: dict[str, Any] = {
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load": os.getloadavg(),
                        "bwrap": status.version, "check_ms": status.startup_ms, "uid": os.getuid()},
            "startup": startup(run, args.starts),
            "long_phase": long_phase(run, args.rounds, args.seconds),
            "judge_copy": judge_copy(Path(tmp), args.files),
        }
    result["machine"]["load_after"] = os.getloadavg()
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
