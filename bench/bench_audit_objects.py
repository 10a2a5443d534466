#!/usr/bin/env python
"""Benchmark: the object-store scan of `evotree audit repo` on a repository of 100,000 commits.

Target: at most 10 s.

The repository is built with `git fast-import` (one stream, one pack): --commits commits on
one line of history, each changing one of --files Python files spread over 20 folders (a new
blob, a new folder tree and a new root tree per commit: ~4 objects per commit). The base is
commit number (commits - future); the last --future commits hold "reference fixes". Then the
branch is reset to the base and their refs are deleted, as SWE-bench's cleanup did: the
future commits are still in the pack, reachable by no ref. Correctness is checked before any
timing: the scan must find exactly --future commits beyond base, all of them descendants, and
exactly the objects `git fsck --unreachable` reports.

Then, for --repeats repetitions in rotated order:

  fsck     git fsck --unreachable --no-reflogs --connectivity-only   (git's own way to list
           the objects no ref reaches: the baseline)
  scan     evotree.harness.audit.repo_objects.scan_object_store(repo)   (in-process, the library)
  audit    evotree.harness.audit.repo.inspect_repository(repo)  (the whole audit: refs, reflogs, ...)
  cli      evotree audit repo PATH --json   (the console script, a new process; exit 28)

fsck and cli are also measured in CPU seconds (user + system of the process and its git
children), which a loaded machine inflates far less than wall-clock time.

Run:

    .venv/bin/python bench/bench_audit_objects.py [--commits 100000] [--future 1000] [--repeats 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import benchlib as bl  # first: isolates git's configuration before pygit2 is imported

TARGET_SECONDS = 10.0


def build(repo: Path, *, commits: int, future: int, files: int) -> tuple[str, float]:
    """A repository of ``commits`` commits whose last ``future`` are dangling; returns (base, s)."""
    started = time.perf_counter()
    bl.git(repo.parent, "init", "-q", "-b", "main", str(repo))
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"], cwd=repo, stdin=subprocess.PIPE
    )
    assert proc.stdin is not None
    out = proc.stdin
    when = 1_600_000_000
    for n in range(1, commits + 1):
        path = f"pkg{n % 20}/mod{n % files}.py"
        body = f"# revision {n}\nVALUE_{n % files} = {n}\n" + (
            "FIX = True\n" if n > commits - future else ""
        )
        data = body.encode()
        message = f"{'reference fix' if n > commits - future else 'change'} {n}\n".encode()
        out.write(b"commit refs/heads/main\n")
        out.write(f"mark :{n}\n".encode())
        out.write(f"committer Bench <bench@example.com> {when + n * 60} +0000\n".encode())
        out.write(f"data {len(message)}\n".encode() + message)
        if n > 1:
            out.write(f"from :{n - 1}\n".encode())
        out.write(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
    out.write(f"reset refs/tags/base\nfrom :{commits - future}\n\ndone\n".encode())
    out.close()
    if proc.wait() != 0:
        raise RuntimeError("git fast-import failed")
    base = bl.git(repo, "rev-parse", "refs/tags/base").strip()
    bl.git(repo, "update-ref", "refs/heads/main", base)
    bl.git(repo, "update-ref", "-d", "refs/tags/base")
    bl.git(repo, "reset", "-q", "--hard", base)
    bl.git(repo, "reflog", "expire", "--expire=now", "--all")
    (repo / ".git" / "ORIG_HEAD").unlink(missing_ok=True)
    return base, time.perf_counter() - started


def fsck_unreachable(repo: Path) -> set[str]:
    out = bl.git(
        repo, "fsck", "--unreachable", "--no-reflogs", "--connectivity-only", "--no-progress"
    )
    return {line.split()[2] for line in out.splitlines() if line.startswith("unreachable ")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=100_000)
    parser.add_argument("--future", type=int, default=1_000)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    from evotree.harness.audit.repo import inspect_repository
    from evotree.harness.audit.repo_objects import scan_object_store

    with tempfile.TemporaryDirectory(prefix="evotree-bench-audit-") as tmp:
        repo = Path(tmp) / "task"
        print(
            f"building {args.commits} commits with git fast-import ...", file=sys.stderr, flush=True
        )
        base, build_seconds = build(
            repo, commits=args.commits, future=args.future, files=args.files
        )
        objects = int(bl.git(repo, "count-objects", "-v").split("in-pack: ")[1].split()[0])
        print(f"  built in {build_seconds:.1f} s: {objects} objects in the pack", file=sys.stderr)

        # correctness first
        scan = scan_object_store(repo)
        unreachable = fsck_unreachable(repo)
        assert scan.base == base
        assert sum(scan.beyond.values()) == len(scan.dangling_ids) == len(unreachable), (
            scan.beyond,
            len(unreachable),
        )
        assert scan.dangling_ids == unreachable, "scan and git fsck disagree"
        assert scan.beyond.get("commit") == args.future and scan.descendants == args.future, (
            scan.beyond
        )
        audit = inspect_repository(repo)
        codes = [f.code for f in audit.findings]
        assert codes == ["audit.repo_unreachable_objects"], codes
        assert audit.findings[0].severity == "critical" and not audit.passed

        def child_cpu() -> float:
            t = os.times()
            return t.children_user + t.children_system

        def fsck() -> dict[str, float]:
            t0, c0 = time.perf_counter(), child_cpu()
            fsck_unreachable(repo)
            return {"fsck": time.perf_counter() - t0, "fsck-cpu": child_cpu() - c0}

        def lib_scan() -> float:
            t0 = time.perf_counter()
            scan_object_store(repo)
            return time.perf_counter() - t0

        def lib_audit() -> float:
            t0 = time.perf_counter()
            inspect_repository(repo)
            return time.perf_counter() - t0

        def cli() -> dict[str, float]:
            t0, c0 = time.perf_counter(), child_cpu()
            proc = subprocess.run(
                [*bl.EVOTREE, "audit", "repo", str(repo), "--json"],
                cwd=tmp,
                capture_output=True,
                text=True,
                check=False,
            )
            elapsed, cpu = time.perf_counter() - t0, child_cpu() - c0
            if proc.returncode != 28 or json.loads(proc.stdout)["passed"] is not False:
                raise RuntimeError(
                    f"evotree audit repo: exit {proc.returncode}: {proc.stderr or proc.stdout}"
                )
            return {"cli": elapsed, "cli-cpu": cpu}

        samples = bl.interleave(
            {"fsck": fsck, "scan": lib_scan, "audit": lib_audit, "cli": cli},
            repeats=args.repeats,
            warmup=args.warmup,
            label="audit",
        )
        rows = [
            (name, bl.summary(samples[name]))
            for name in ("fsck", "scan", "audit", "cli", "fsck-cpu", "cli-cpu")
        ]
        bl.print_table(
            f"object-store scan, {args.commits} commits ({objects} objects), "
            f"{args.future} dangling future commits",
            rows,
        )
        ratios = {
            name: bl.paired_ratio(samples[name], samples["fsck"])
            for name in ("scan", "audit", "cli")
        }
        worst = max(bl.summary(samples["cli"])["median"], bl.summary(samples["audit"])["median"])
        ratios["cli-cpu"] = bl.paired_ratio(samples["cli-cpu"], samples["fsck-cpu"])
        load = os.getloadavg()
        print(
            f"  load average at the end: {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs; "
            "*-cpu rows: CPU seconds (user+sys) of the process and its git children"
        )
        print(
            "  ratios vs git fsck (median of paired ratios): "
            + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items())
        )
        verdict = "PASS" if worst <= TARGET_SECONDS else "FAIL"
        print(
            f"  target: CLI audit at most {TARGET_SECONDS:.0f} s -> {verdict} (median {worst:.2f} s)"
        )
        result: dict[str, Any] = {
            "benchmark": "audit_objects",
            "commits": args.commits,
            "future": args.future,
            "objects": objects,
            "build_seconds": build_seconds,
            "target_seconds": TARGET_SECONDS,
            "summary": dict(rows),
            "ratios_vs_fsck": ratios,
            "verdict": verdict,
            "samples": samples,
            "load_average": os.getloadavg(),
            "environment": bl.environment(),
        }
        if args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(json.dumps(result, indent=2))
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
