#!/usr/bin/env python
"""Benchmark: CPU cost of the trajectory audit now against its rules at an older commit.

Both versions run in one interpreter each, alternated: the older ``harness/audit`` is written out
of git (``git show OLD:harness/audit/*.py``) into a temp folder and loaded in place of the current
one by an import hook; everything else (readers' dependencies, the corpus) is the same. The
corpus is ``bench/bench_audit_scan.py``'s synthetic one (``generate``: sessions in three formats,
5 % with one leak). Measured: CPU seconds of ``audit_trajectories`` over every file, parse caches
cleared before each run; the minimum and median of ``--repeats`` runs per version.

Run:

    .venv/bin/python bench/bench_audit_cost.py --old b4decb9 --mb 10 --repeats 7 [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import importlib.abc, importlib.util, json, sys, time
from pathlib import Path
old, corpus, repeats = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
if old:
    class _Old(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "evotree.harness.audit" or name.startswith("evotree.harness.audit."):
                leaf = "__init__" if name == "evotree.harness.audit" else name.rsplit(".", 1)[1]
                f = Path(old) / f"{leaf}.py"
                if f.exists():
                    return importlib.util.spec_from_file_location(
                        name, f, submodule_search_locations=[old] if leaf == "__init__" else None)
            return None
    sys.meta_path.insert(0, _Old())
sys.path.insert(0, sys.argv[4])
from evotree.harness.audit import commands, foreign_code, inline
from evotree.harness.audit.trajectories import audit_trajectories
paths = sorted(p for p in corpus.rglob("*") if p.is_file())
times, flagged = [], None
for _ in range(repeats):
    for f in (commands._parse_cached, commands._hits_cached, inline.python_calls,
              foreign_code.foreign_calls):
        f.cache_clear()
    t = time.process_time()
    flagged = audit_trajectories(paths, hidden_paths=("judge/", "tests/hidden/")).flagged
    times.append(time.process_time() - t)
print(json.dumps({"times": times, "flagged": flagged, "module": commands.__file__}))
"""


def _old_tree(commit: str, dest: Path) -> None:
    names = subprocess.run(
        ["git", "ls-tree", "--name-only", commit, "harness/audit/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for name in names:
        if name.endswith(".py"):
            text = subprocess.run(
                ["git", "show", f"{commit}:{name}"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            (dest / Path(name).name).write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--old", required=True, help="the commit whose harness/audit to compare with"
    )
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=2, help="alternations of old and new")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_audit_scan

    with tempfile.TemporaryDirectory(prefix="audit-cost-") as tmp:
        old = Path(tmp) / "old"
        old.mkdir()
        _old_tree(args.old, old)
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        bench_audit_scan.generate(corpus, args.mb)
        runs: dict[str, list[float]] = {"old": [], "new": []}
        flagged: dict[str, int] = {}
        for _ in range(args.rounds):
            for variant, where in (("old", str(old)), ("new", "")):
                out = subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        _CHILD,
                        where,
                        str(corpus),
                        str(args.repeats),
                        str(ROOT),
                    ],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
                data = json.loads(out.strip().splitlines()[-1])
                runs[variant] += data["times"]
                flagged[variant] = data["flagged"]
    result = {
        "bench": "audit_cost",
        "old": args.old,
        "mb": args.mb,
        "flagged": flagged,
        "cpu_seconds": {
            k: {"min": min(v), "median": statistics.median(v), "runs": len(v)}
            for k, v in runs.items()
        },
        "ratio_min": min(runs["new"]) / min(runs["old"]),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
