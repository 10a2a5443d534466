"""What binding task repositories pruned at their base costs a traced phase's start.

A traced phase's task repositories are bound as copies holding only what their base reaches
(``harness/git_prune.py``). The copy is made before the phase starts, so it is paid once per
phase. Baseline, in the same run: the same traced phase with the repositories bound whole
(``EVOTREE_TASK_REPOS=whole``). The phase is ``true`` (start-up only: the worst case for the
ratio). Repositories are made with ``git fast-import`` and repacked like a clone: each has a
future branch of 10 commits beyond its base. The first copy of a store is made by ``git
pack-objects`` (``cold_prune_copy_ms``, with an empty cache); later phases over the same store
state copy the pack kept from it (the phase medians, ``prune_copy_ms``). The cache lives in a
temporary ``XDG_CACHE_HOME`` for the run.

    .venv/bin/python bench/bench_task_prune.py [--runs 7] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evotree.harness import git_prune  # noqa: E402
from evotree.harness.sandbox import finish_trace, wrap  # noqa: E402
from evotree.harness.sandbox_launch import accounted, sandbox_env  # noqa: E402
from evotree.harness.sandbox_spec import SandboxSpec  # noqa: E402

#: (name, commits on the base's history, files in the tree)
SIZES = (("small", 50, 20), ("medium", 2000, 500), ("large", 20000, 3000))


def make_repo(path: Path, commits: int, files: int) -> int:
    """A repository of ``commits`` commits over ``files`` files, and a future branch of 10;
    returns its size on disk in bytes after ``git repack -adq``."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    lines: list[str] = []
    mark = 0

    def commit(branch: str, i: int, parent: int | None, text: str) -> int:
        nonlocal mark
        mark += 1
        body = f"{text} {i}\n" * 20
        lines.extend(
            [
                f"commit refs/heads/{branch}",
                f"mark :{mark}",
                f"committer a <a@b> {1_700_000_000 + i} +0000",
                f"data {len(f'c{i}')}",
                f"c{i}",
            ]
        )
        if parent is not None:
            lines.append(f"from :{parent}")
        lines.append(f"M 644 inline f{i % files}.txt")
        lines.append(f"data {len(body.encode())}")
        lines.append(body.rstrip("\n"))
        return mark

    last = None
    for i in range(commits):
        last = commit("main", i, last, "line")
    fut = last
    for i in range(commits, commits + 10):
        fut = commit("fix", i, fut, "future")
    stream = "\n".join(lines) + "\n"
    subprocess.run(
        ["git", "-C", str(path), "fast-import", "--quiet"], input=stream.encode(), check=True
    )
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "main"], check=True)
    subprocess.run(["git", "-C", str(path), "repack", "-adq"], check=True)
    return sum(p.stat().st_size for p in (path / ".git").rglob("*") if p.is_file())


def phase_start(work: Path, trace: Path, mode: str) -> float:
    """Seconds from wrap() to the end of finish_trace() for a traced ``true`` over ``work``."""
    os.environ[git_prune.ENV_TASK_REPOS] = mode
    evidence = trace.parent / f"evidence-{trace.name}"
    evidence.mkdir(exist_ok=True)
    spec = SandboxSpec(cwd=work, read_write=(work,), trace=trace)
    t0 = time.perf_counter()
    subprocess.run(accounted(wrap(spec, ["true"])), env=sandbox_env(dict(os.environ)), check=True)
    finish_trace(spec, evidence)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="evotree-bench-prune-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        for name, commits, files in SIZES:
            work = Path(tmp) / name
            size = make_repo(work, commits, files)
            t0 = time.perf_counter()
            git_prune.prune_copy(work / ".git", Path(tmp) / f"{name}-cold")
            cold = time.perf_counter() - t0
            times: dict[str, list[float]] = {"whole": [], "pruned": []}
            copy_s = []
            for run in range(args.runs):
                for mode in ("whole", "pruned") if run % 2 else ("pruned", "whole"):
                    times[mode].append(phase_start(work, Path(tmp) / f"{name}-{mode}-{run}", mode))
                t0 = time.perf_counter()
                git_prune.prune_copy(work / ".git", Path(tmp) / f"{name}-copy-{run}")
                copy_s.append(time.perf_counter() - t0)
            whole = statistics.median(times["whole"])
            pruned = statistics.median(times["pruned"])
            row = {
                "repo": name,
                "commits": commits,
                "files": files,
                "git_dir_bytes": size,
                "whole_ms": round(whole * 1000, 1),
                "pruned_ms": round(pruned * 1000, 1),
                "ratio": round(pruned / whole, 3),
                "prune_copy_ms": round(statistics.median(copy_s) * 1000, 1),
                "cold_prune_copy_ms": round(cold * 1000, 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    os.environ.pop(git_prune.ENV_TASK_REPOS, None)
    if args.json:
        args.json.write_text(json.dumps({"runs": args.runs, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
