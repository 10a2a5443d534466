#!/usr/bin/env python
"""Benchmark: the cost of the runtime trace on a phase that runs 1,000 git commands.
Target: <= 10 % more wall and CPU time than the same phase in the same sandbox untraced, on the
agent mix (docs/benchmarks/trace.md).

The phase: ``bash -c`` running ``git`` 1,000 times, in the phase sandbox (``SandboxSpec``,
started through ``accounted`` as ``evotree run`` starts phases). Two mixes:

  agent   (default) what a coding agent runs — status, log -5 --stat, diff HEAD~3, show, log of a
          file, grep, blame, diff — on a repository with history (300 commits, 200 files)
  agent-nogrep  the same without ``git grep`` (the one multi-threaded command of the mix: a
          traced process pays for each thread it starts and ends, and git grep starts 8 per run)
  light   the cheapest commands (rev-parse HEAD, status, log -1, diff --stat) on a one-commit
          repository: fork and exec are all there is, the tracer's worst case (its cost is per
          process started)
  tools   programs other than git reading the work tree (python3 importing modules, grep -r,
          cat, wc, sort, head, ls): every open of theirs is walked and pinned by the tracer, which
          the git mixes (the machine's git's opens are not pinned) hardly show
Variants, interleaved in rotated order, --repeats times each (median reported):

  sandbox   the phase in the sandbox
  seccomp   the same with ``SandboxSpec.trace`` and the default tracer (a seccomp
            user-notification filter on execve / connect / exit_group / open*, served outside
            the sandbox by the compiled ``harness/seccomp_trace.c``), including the conversion
            into ``exec_trace.jsonl`` after the phase
  seccomp-exec-only  the same without the open reports (``sandbox.TRACE_OPENS = False``; the
            Python tracer this variant used to measure was deleted)
  strace    the same with the fallback tracer (strace -f --seccomp-bpf outside the sandbox)
  seccomp-unpinned  (--pin-ab) the default tracer with pinning off (EVOTREE_TRACE_PIN=off: every
            open goes on as before pinning, CONTINUE): the cost of pinning, same binary
  seccomp-pin-uncertain  (--pin-ab) pinning only the opens whose walk crossed a link, "..", a
            descriptor or git storage (EVOTREE_TRACE_PIN=uncertain: not sound, measured only)
  seccomp-before  (--tracer-ab BINARY) the default variant with another tracer binary (one built
            from an earlier seccomp_trace.c): an A/B of the tracer binaries
  seccomp-floor  (--floor) the tracer built with EVOTREE_TRACE_FLOOR: every open is trapped and
            let go on at once, nothing read or written -- what the seccomp user-notification trap
            costs by itself, under any work the tracer does (not a tracer: measured only)

Reported: wall time, and CPU time (user + system of the launcher, bubblewrap, the phase's
processes and strace: ``RUSAGE_CHILDREN``). The phase runs its commands one after another and a
traced process waits while strace handles its stop, so on an idle machine the wall overhead is
the CPU overhead; on a loaded one the CPU figure is the steadier estimate.

Each traced run is checked: every one of the 1,000 git processes is in the trace. Run:

    .venv/bin/python bench/bench_audit_trace.py [--mix agent light tools] [--commands 1000]
        [--repeats 5] [--no-strace] [--pin-ab] [--tracer-ab BINARY] [--floor]
        [--json bench/results/trace_overhead.json]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET = 0.10
#: --mix light: the cheapest git commands on a one-commit repository (fork and exec dominate:
#: the worst case for a tracer, whose cost is per process started)
LIGHT = ("git rev-parse HEAD", "git status --short", "git log -1 --oneline", "git diff --stat")
#: --mix agent: what a coding agent runs, on a repository with history (--history commits of
#: --files files)
AGENT = (
    "git status --short",
    "git log -5 --stat",
    "git diff HEAD~3 --stat",
    "git show HEAD~2 --stat",
    "git log --oneline -20 -- src/f7.py",
    "git grep -n value_3",
    "git blame src/f3.py",
    "git diff",
)
#: --mix tools: programs other than git on the same repository (each line one program started)
TOOLS = (
    "python3 -c 'import json, email.parser, http.client, argparse'",
    "grep -rn value_3 src",
    "cat src/f1.py src/f2.py src/f3.py",
    "wc -l src/f10.py src/f11.py src/f12.py src/f13.py src/f14.py",
    "sort src/f4.py",
    "head -5 src/f7.py",
    "ls -la src",
    "sed -n 3p src/f9.py",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--mix", nargs="+", choices=("light", "agent", "agent-nogrep", "tools"), default=["agent"]
    )
    parser.add_argument(
        "--pin-ab", action="store_true", help="add the default tracer with pinning off"
    )
    parser.add_argument(
        "--tracer-ab", type=Path, default=None, help="add the default variant run by this binary"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="add the trap alone: the tracer built to let every open go on unread",
    )
    parser.add_argument(
        "--history", type=int, default=300, help="commits of the --mix agent repository"
    )
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--no-strace", action="store_true", help="leave the strace variant out")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    from evotree.harness.sandbox import can_trace, check_sandbox

    status = check_sandbox()
    if not status.ok or not can_trace():
        print(f"needs bubblewrap and a tracer: {status.reason or 'no tracer'}", file=sys.stderr)
        sys.exit(2)
    load_before = os.getloadavg()
    mixes = {mix: measure(mix, args) for mix in args.mix}
    load_after = os.getloadavg()
    head = mixes.get("agent") or next(iter(mixes.values()))
    figure = "; ".join(
        f"{mix}: seccomp {m['cpu_overhead']['seccomp']:+.1%} CPU / {m['overhead']['seccomp']:+.1%} wall, "
        f"exec-only {m['cpu_overhead']['seccomp-exec-only']:+.1%} CPU / {m['overhead']['seccomp-exec-only']:+.1%} wall"
        for mix, m in mixes.items()
    )
    met = head["cpu_overhead"]["seccomp"] <= TARGET and head["overhead"]["seccomp"] <= TARGET
    short = (
        f"{head['cpu_overhead']['seccomp']:+.0%} CPU / {head['overhead']['seccomp']:+.0%} wall "
        f"(execs only {head['cpu_overhead']['seccomp-exec-only']:+.0%} CPU), load "
        f"{load_before[0]:.0f}-{load_after[0]:.0f}"
    )  # the screen's cell; the rest in figure_detail
    result: dict[str, Any] = {
        "bench": "trace_overhead",
        "target": "runtime trace (opens reported) ≤ 10 % wall and CPU on the agent mix",
        "figure": short,
        "figure_detail": figure,
        "verdict": "met" if met else "not met",
        "script": "bench/bench_audit_trace.py",
        "command": "python " + " ".join(["bench/bench_audit_trace.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": _commit(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "mixes": mixes,
        "benchmark": "Runtime trace overhead",
        "page": "docs/benchmarks/trace.md",
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def floor_binary(folder: Path, args: argparse.Namespace) -> Path | None:
    """The tracer built with EVOTREE_TRACE_FLOOR into ``folder`` (``--floor``), else None."""
    if not args.floor:
        return None
    from evotree.harness.sandbox_tracer_build import TRACER_SOURCE, find_compiler

    compiler = find_compiler()
    if compiler is None:
        raise SystemExit("--floor needs a C compiler")
    binary = folder / "seccomp-trace-floor"
    subprocess.run(
        [
            compiler,
            "-O2",
            "-pthread",
            "-DEVOTREE_TRACE_FLOOR",
            "-o",
            str(binary),
            str(TRACER_SOURCE),
        ],
        check=True,
    )
    return binary


def measure(mix_name: str, args: argparse.Namespace) -> dict[str, Any]:
    """One mix: every variant --repeats times, interleaved in rotated order; medians and ratios."""
    from evotree.harness import sandbox as sandbox_mod
    from evotree.harness.sandbox import finish_trace, wrap
    from evotree.harness.sandbox_launch import accounted, sandbox_env
    from evotree.harness.sandbox_spec import SandboxSpec

    with tempfile.TemporaryDirectory(prefix="evotree-bench-trace-") as tmp:
        base = Path(tmp)
        work = base / "work"
        work.mkdir()
        env = {
            **os.environ,
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@b",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@b",
        }
        subprocess.run(["git", "init", "-q", str(work)], check=True, env=env)
        (work / "src").mkdir()
        files = args.files if mix_name.startswith("agent") or mix_name == "tools" else 20
        for k in range(files):
            (work / "src" / f"f{k}.py").write_text(
                "".join(f"value_{j} = {j * k}\n" for j in range(40))
            )
        subprocess.run(["git", "-C", str(work), "add", "."], check=True, env=env)
        subprocess.run(["git", "-C", str(work), "commit", "-q", "-m", "base"], check=True, env=env)
        if (
            mix_name.startswith("agent") or mix_name == "tools"
        ):  # history: each commit edits a few files (fast-import: seconds, not minutes)
            stream = []
            for c in range(args.history):
                stream.append(
                    f"commit refs/heads/master\ncommitter a <a@b> {1700000000 + c} +0000\n"
                    f"data {len(f'c{c}')}\nc{c}\n"
                    + ("from refs/heads/master^0\n" if c == 0 else "")
                )
                for k in (c % files, (c * 7) % files):
                    body = "".join(f"value_{j} = {j * k + c}\n" for j in range(40))
                    stream.append(f"M 644 inline src/f{k}.py\ndata {len(body)}\n{body}")
            subprocess.run(
                ["git", "-C", str(work), "fast-import", "--quiet"],
                input="".join(stream).encode(),
                check=True,
                env=env,
            )
            subprocess.run(
                ["git", "-C", str(work), "reset", "-q", "--hard", "master"], check=True, env=env
            )
        mix = {
            "agent": AGENT,
            "light": LIGHT,
            "agent-nogrep": tuple(c for c in AGENT if "grep" not in c),
            "tools": TOOLS,
        }[mix_name]
        lines = [mix[k % len(mix)] + " >/dev/null" for k in range(args.commands)]
        script = "\n".join(lines)
        variants: tuple[str, ...] = ("sandbox", "seccomp", "seccomp-exec-only", "strace")
        if args.no_strace:
            variants = variants[:-1]
        if args.pin_ab:
            variants += ("seccomp-unpinned", "seccomp-pin-uncertain")
        if args.tracer_ab is not None:
            variants += ("seccomp-before",)
        if args.floor:
            variants += ("seccomp-floor",)
        compiled = sandbox_mod.compiled_tracer
        binaries = {"seccomp-before": args.tracer_ab, "seccomp-floor": floor_binary(base, args)}
        times: dict[str, list[float]] = {v: [] for v in variants}
        cpu: dict[str, list[float]] = {v: [] for v in variants}
        traced_gits: dict[str, list[int]] = {v: [] for v in variants[1:]}
        if sandbox_mod.compiled_tracer() is None:
            print("no C compiler: the seccomp variants run strace (the fallback)", file=sys.stderr)
        for rep in range(args.repeats):
            k = rep % len(variants)
            for variant in variants[k:] + variants[:k]:
                trace = base / f"raw-{rep}-{variant}" if variant != "sandbox" else None
                sandbox_mod.TRACER = "strace" if variant == "strace" else "seccomp"
                sandbox_mod.TRACE_OPENS = variant != "seccomp-exec-only"
                sandbox_mod.compiled_tracer = (  # type: ignore[assignment]
                    functools.partial(Path, binaries[variant]) if variant in binaries else compiled
                )
                phase_env = sandbox_env(dict(os.environ))
                phase_env.pop("EVOTREE_TRACE_PIN", None)
                if variant == "seccomp-unpinned":
                    phase_env["EVOTREE_TRACE_PIN"] = "off"
                elif variant == "seccomp-pin-uncertain":
                    phase_env["EVOTREE_TRACE_PIN"] = "uncertain"
                spec = SandboxSpec(cwd=work, read_write=(work,), trace=trace)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                proc = subprocess.run(
                    accounted(wrap(spec, ["bash", "-c", script])),
                    env=phase_env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                if trace is not None:
                    rows = finish_trace(spec, base)
                seconds = time.perf_counter() - start
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[variant].append(
                    after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                )
                assert proc.returncode == 0, proc.stderr[-2000:]
                if trace is not None:
                    # the mix's programs in the trace (tools: every program its lines start)
                    gits = sum(
                        1
                        for r in rows
                        if r["kind"] == "exec"
                        and not r.get("missing")
                        and (mix_name == "tools" or r["path"].endswith("/git"))
                    )
                    traced_gits[variant].append(gits)
                    assert gits == args.commands or (
                        mix_name == "tools" and gits > args.commands
                    ), (
                        gits,
                        args.commands,
                    )
                times[variant].append(seconds)
                print(
                    f"  {mix_name} {variant:18s} {seconds:6.2f} s wall  {cpu[variant][-1]:6.2f} s cpu  "
                    f"load {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                )
    sandbox_mod.TRACER, sandbox_mod.TRACE_OPENS = "seccomp", True
    sandbox_mod.compiled_tracer = compiled  # type: ignore[assignment]
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    overhead = {v: med[v] / med["sandbox"] - 1 for v in variants[1:]}
    cpu_overhead = {v: med_cpu[v] / med_cpu["sandbox"] - 1 for v in variants[1:]}
    return {
        "mix": mix_name,
        "commands": list(mix),
        "count": args.commands,
        "repeats": args.repeats,
        "median_seconds": med,
        "seconds": times,
        "ms_per_git": {k: v / args.commands * 1000 for k, v in med.items()},
        "cpu_seconds": cpu,
        "median_cpu_seconds": med_cpu,
        "overhead": overhead,
        "cpu_overhead": cpu_overhead,
        "target": TARGET,
        "meets_target": {v: overhead[v] <= TARGET and cpu_overhead[v] <= TARGET for v in overhead},
        "git_processes_traced": traced_gits,
    }


if __name__ == "__main__":
    main()
