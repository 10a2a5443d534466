#!/usr/bin/env python
"""Benchmark: the cost of content provenance: building the index of what a task
repository holds beyond its base, and scanning trajectory outputs against it.

The repository is built with `git fast-import`: --commits commits on one line of history over
--files Python files of ~40 lines each (every commit rewrites one file: one new line per
commit); the last --future commits are the "future" (each adds --lines distinctive lines and
gets a subject of its own; every tenth a tag); the branch is reset to the base, the future kept
on a remote-tracking ref. Correctness first: the index must hold every future commit and no base
object, and a planted leak (two future lines in one output) must be found, and the benign outputs
must give no hit.

Measured, for --repeats repetitions:

  build   evotree.harness.audit.future_content.build_index(repo, base)   (wall seconds)
  scan    scan_outputs(index, outputs) over --mb MB of outputs: `cat` of base files, pytest
          lines, hex words (mostly naming nothing), git log -3 of the base   (MB/s of wall time,
          and of CPU time, which a loaded machine inflates far less)

Run:

    .venv/bin/python bench/bench_audit_provenance.py [--commits 20000] [--future 200] [--mb 20] [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import benchlib as bl  # first: isolates git's configuration before pygit2 is imported


def _file_text(rng: random.Random, name: str, n: int, lines: int = 40) -> str:
    out = [f'"""Module {name}."""', "", "import os", ""]
    for k in range(lines):
        out.append(f"def {name}_helper_{k}(value_{k}, scale=1):")
        out.append(f"    return compute_{(k * 7 + n) % 97}(value_{k}) * scale + {k}")
    return "\n".join(out) + "\n"


def build(
    repo: Path, *, commits: int, future: int, files: int, lines: int
) -> tuple[str, list[str]]:
    """The repository (module doc); returns (base id, the distinctive lines of the first future commit)."""
    rng = random.Random(0)
    bl.git(repo.parent, "init", "-q", "-b", "main", str(repo))
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"], cwd=repo, stdin=subprocess.PIPE
    )
    assert proc.stdin is not None
    out = proc.stdin
    when = 1_600_000_000
    base_n = commits - future
    planted: list[str] = []
    for n in range(1, commits + 1):
        f = n % files
        body = _file_text(rng, f"mod{f}", n)
        if n > base_n:
            added = [
                f"    guard_against_case_{n}_{j}(value, threshold={rng.randint(10**6, 10**7)})"
                for j in range(lines)
            ]
            if not planted:
                planted = [a.strip() for a in added]
            body += "\n".join(added) + "\n"
            message = f"Fix issue {n}: handle the edge case of mod{f} ({rng.getrandbits(32):x})\n"
        else:
            message = f"change {n}\n"
        data = body.encode()
        out.write(b"commit refs/heads/main\n")
        out.write(f"mark :{n}\n".encode())
        out.write(f"committer Bench <bench@example.com> {when + n * 60} +0000\n".encode())
        out.write(f"data {len(message.encode())}\n".encode() + message.encode())
        if n > 1:
            out.write(f"from :{n - 1}\n".encode())
        out.write(
            f"M 100644 inline pkg{f % 20}/mod{f}.py\ndata {len(data)}\n".encode() + data + b"\n"
        )
        if n > base_n and n % 10 == 0:
            out.write(f"reset refs/tags/v2.{n}.0\nfrom :{n}\n\n".encode())
    out.write(f"reset refs/remotes/origin/main\nfrom :{commits}\n\n".encode())
    out.write(f"reset refs/tags/base\nfrom :{base_n}\n\ndone\n".encode())
    out.close()
    if proc.wait() != 0:
        raise RuntimeError("git fast-import failed")
    base = bl.git(repo, "rev-parse", "refs/tags/base").strip()
    bl.git(repo, "update-ref", "refs/heads/main", base)
    bl.git(repo, "update-ref", "-d", "refs/tags/base")
    bl.git(repo, "reset", "-q", "--hard", base)
    return base, planted


def outputs(repo: Path, mb: float) -> list[str]:
    """Benign outputs of about ``mb`` MB: base files, pytest lines, hex words, base history."""
    rng = random.Random(1)
    files = sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts)
    log = bl.git(repo, "log", "-3", "--oneline")
    chunks: list[str] = []
    size = 0
    while size < mb * 1e6:
        kind = rng.randrange(4)
        if kind == 0:
            text = files[rng.randrange(len(files))].read_text()
        elif kind == 1:
            text = "".join(f"tests/test_x.py::test_{k} PASSED [{k}%]\n" for k in range(100))
        elif kind == 2:
            text = "".join(
                f"build {rng.getrandbits(40):010x} ok in {rng.random():.3f}s\n" for _ in range(200)
            )
        else:
            text = log + "\n"
        chunks.append(text)
        size += len(text)
    return chunks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--future", type=int, default=200)
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument(
        "--lines", type=int, default=5, help="distinctive lines each future commit adds"
    )
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    from evotree.harness.audit.future_content import build_index, scan_outputs

    with tempfile.TemporaryDirectory(prefix="evotree-bench-prov-") as tmp:
        repo = Path(tmp) / "task"
        print(
            f"building {args.commits} commits ({args.future} future) ...",
            file=sys.stderr,
            flush=True,
        )
        started = time.perf_counter()
        base, planted = build(
            repo, commits=args.commits, future=args.future, files=args.files, lines=args.lines
        )
        built_s = time.perf_counter() - started
        objects = int(bl.git(repo, "count-objects", "-v").split("in-pack: ")[1].split()[0])
        # correctness before timing
        index = build_index(repo, base)
        future_commits = sum(1 for k in index.objects.values() if k == "commit")
        assert future_commits == args.future, future_commits
        assert base not in index.objects and len(index.subjects) == args.future
        assert len(index.tags) == args.future // 10, len(index.tags)
        leak = scan_outputs(index, ["\n".join(planted[:2])])
        assert [h.kind for h in leak] == ["line", "line"] and all(
            h.severity == "high" for h in leak
        ), leak
        chunks = outputs(repo, args.mb)
        benign = scan_outputs(index, chunks)
        assert not benign, benign[:3]
        nbytes = sum(len(c) for c in chunks)
        builds, scans, cpus = [], [], []
        for _ in range(args.repeats):
            t = time.perf_counter()
            index = build_index(repo, base)
            builds.append(time.perf_counter() - t)
            t, c = time.perf_counter(), time.process_time()
            scan_outputs(index, chunks)
            scans.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        result: dict[str, Any] = {
            "bench": "audit_provenance",
            "commits": args.commits,
            "future": args.future,
            "objects": objects,
            "repo_build_s": round(built_s, 2),
            "index": index.to_dict(),
            "build_s": {
                "median": round(statistics.median(builds), 3),
                "min": round(min(builds), 3),
                "max": round(max(builds), 3),
            },
            "scan_mb": round(nbytes / 1e6, 2),
            "scan_s": {"median": round(statistics.median(scans), 3), "min": round(min(scans), 3)},
            "scan_mb_s": round(nbytes / 1e6 / statistics.median(scans), 1),
            "scan_cpu_mb_s": round(
                nbytes / 1e6 / statistics.median(cpus), 1
            ),  # CPU seconds: robust to load
            "environment": bl.environment(),
        }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
