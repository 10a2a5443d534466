#!/usr/bin/env python
"""Benchmark: trajectory scan throughput of the leak audit. Target: >= 50 MB/s.

A corpus of agent transcripts is written to a temp folder: --mb megabytes (default 100) split
evenly over three formats — Claude Code JSONL sessions, SWE-agent ``.traj`` JSON and evotree
rollout JSONL (``commands`` + ``text``) — 40 steps per session. Each step's command is drawn
from the labeled corpus (``tests/data/audit/corpus.jsonl``; 5 % of sessions hold one leak at a
random step; the other steps are benign: half drawn from the corpus (git-heavy), half everyday
commands — cat, grep, sed, find, pytest, git diff/log on a file — with unique arguments) and its
output is realistic filler (source lines, test logs, hashes) of 0.5-8 KB, so most bytes are
observations, as in real transcripts.

Variants, interleaved in rotated order, each --repeats times (median reported):

  read       baseline: read every file and json.loads it (each line for JSONL) — the floor
             of any scan that understands the formats
  audit      evotree.harness.audit.trajectories.audit_trajectories(files): format detection, readers,
             cheap prefilter, shell parsing of the candidates, the rules, provenance
  audit_all  the same with the prefilter disabled (every command parsed): what the prefilter buys

Then the evidence-store path of ``evotree audit V``: the rollout rows of the corpus (a third of
it) compacted into one run's ``rollouts.parquet`` and audited through DuckDB (the SQL prefilter,
then the same rules on the candidates: ``evotree.harness.audit.version_audit._rollout_verdicts``), against
the baseline ``store_read``: one DuckDB scan reading the same columns (commands, text) of every
row. Its throughput is counted in the rows' JSONL bytes.

Throughput = corpus bytes / seconds. The audit's flagged count is checked against the number
of leaky sessions written. Run:

    .venv/bin/python bench/bench_audit_scan.py [--mb 100] [--repeats 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_MBPS = 50.0
STEPS = 40
LEAKY_SESSIONS = 0.05
HIDDEN = ("judge/", "tests/hidden/")  # the corpus's hidden paths
LINES = [
    "    def test_roundtrip(self):",
    "        assert parse(dump(x)) == x",
    "import numpy as np",
    "E       AssertionError: expected 3, got 4",
    "PASSED tests/test_core.py::test_basic",
    "diff --git a/src/pkg/mod.py b/src/pkg/mod.py",
    "@@ -10,7 +10,7 @@ class Parser:",
    "commit 3b18e512dba79e4c8300dd08aeb37f8e728b8dad",
    "    return self._cache.get(key, default)",
    "Traceback (most recent call last):",
    '  File "src/pkg/mod.py", line 42, in run',
]


EVERYDAY = (
    "cat src/pkg/mod{n}.py",
    "grep -rn 'name_{n}' src/",
    "sed -n '{n},{m}p' src/pkg/mod{n}.py",
    "python -m pytest tests/test_mod{n}.py -q",
    "ls -la src/pkg{n}",
    "find . -name 'mod{n}*.py'",
    "python reproduce_{n}.py",
    "head -n {m} src/pkg/mod{n}.py",
    "nl -ba src/pkg/mod{n}.py | sed -n '{n},{m}p'",
    "git diff src/pkg/mod{n}.py",
    "git log -{n} --oneline -- src/pkg/mod{n}.py",
    "sed -i 's/old_{n}/new_{n}/' src/pkg/mod{n}.py",
    "echo 'x = {n}' >> scratch_{m}.py",
)


def _command(rng: random.Random, benign: list[str]) -> str:
    """Half labeled-corpus commands (git-heavy), half everyday commands with unique arguments."""
    if rng.random() < 0.5:
        return rng.choice(benign)
    n = rng.randint(1, 99999)
    return rng.choice(EVERYDAY).format(n=n, m=n + rng.randint(1, 80))


def _output(rng: random.Random) -> str:
    n = rng.randint(8, 120)
    return "\n".join(rng.choice(LINES) + f"  # {rng.getrandbits(32):08x}" for _ in range(n))


def _step(command: str, output: str) -> tuple[str, str]:
    """A benign step with its output. The sessions stage nothing, so a diff of the index against
    HEAD prints nothing (a made-up diff there is what the audit reads as staged blobs the
    trajectory did not stage: the index door of the blind corpora); the output is drawn anyway,
    so the corpus's random stream does not depend on which commands were drawn."""
    if command.startswith("git diff") and ("--cached" in command or "--staged" in command):
        return command, ""
    return command, output


def generate(folder: Path, megabytes: float, seed: int = 0) -> dict[str, Any]:
    """Write the corpus; return its size, file count and how many sessions hold a leak."""
    rows = [
        json.loads(x) for x in (ROOT / "tests/data/audit/corpus.jsonl").read_text().splitlines()
    ]
    benign = [r["command"] for r in rows if r["label"] == "benign" and not r.get("hard")]
    leaks = [r["command"] for r in rows if r["label"] == "leak" and not r.get("hard")]
    rng = random.Random(seed)
    target = int(megabytes * 1e6)
    written = sessions = leaky = files = 0
    fmt = 0
    while written < target:
        steps = [_step(_command(rng, benign), _output(rng)) for _ in range(STEPS)]
        has_leak = rng.random() < LEAKY_SESSIONS
        if has_leak:  # one leak at a random step
            steps[rng.randrange(STEPS)] = (rng.choice(leaks), _output(rng))
        kind = ("claude", "swe", "rollouts")[fmt % 3]
        fmt += 1
        if kind == "claude":
            lines = []
            for i, (cmd, out) in enumerate(steps):
                lines.append(
                    {
                        "type": "assistant",
                        "sessionId": f"s{sessions}",
                        "message": {
                            "role": "assistant",
                            "content": [
                                {
                                    "type": "tool_use",
                                    "id": f"t{i}",
                                    "name": "Bash",
                                    "input": {"command": cmd},
                                }
                            ],
                        },
                    }
                )
                lines.append(
                    {
                        "type": "user",
                        "sessionId": f"s{sessions}",
                        "message": {
                            "role": "user",
                            "content": [
                                {"type": "tool_result", "tool_use_id": f"t{i}", "content": out}
                            ],
                        },
                    }
                )
            data = "".join(json.dumps(x) + "\n" for x in lines)
            path = folder / f"session{sessions}.jsonl"
        elif kind == "swe":
            data = json.dumps(
                {
                    "trajectory": [
                        {"action": c, "observation": o, "thought": ""} for c, o in steps
                    ],
                    "history": [],
                    "info": {},
                }
            )
            path = folder / f"run{sessions}.traj"
        else:
            data = (
                json.dumps(
                    {
                        "run_id": "r",
                        "phase": "eval",
                        "step": 0,
                        "group_id": f"g{sessions}",
                        "task_id": f"t{sessions}",
                        "sample_index": 0,
                        "reward": 1.0,
                        "commands": [c for c, _ in steps],
                        "text": "\n".join(f"$ {c}\n{o}" for c, o in steps),
                    }
                )
                + "\n"
            )
            path = folder / f"rollouts{sessions // 300}.jsonl"
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(data)
        written += len(data.encode())
        sessions += 1
        leaky += has_leak
    files = len(list(folder.iterdir()))
    return {"bytes": written, "files": files, "sessions": sessions, "leaky_sessions": leaky}


def read_baseline(paths: list[Path]) -> int:
    """json.loads every file (every line of JSONL files): the floor of a format-aware scan."""
    n = 0
    for path in paths:
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".jsonl":
            for line in text.splitlines():
                if line:
                    json.loads(line)
                    n += 1
        else:
            json.loads(text)
            n += 1
    return n


def _store(folder: Path, repeats: int) -> dict[str, Any]:
    """The evidence-store path (module doc): median seconds and MB/s of store_read and store_audit."""
    from evotree.harness.audit.commands import RuleSet
    from evotree.harness.audit.version_audit import _rollout_verdicts
    from evotree.harness.compaction import compact_run
    from evotree.harness.query import connect

    runs = folder / "store"
    run = runs / "r"
    (run / "evidence" / "eval").mkdir(parents=True)
    nbytes = rows = 0
    with open(run / "evidence" / "eval" / "rollouts.jsonl", "w", encoding="utf-8") as out:
        for path in sorted(folder.glob("rollouts*.jsonl")):
            text = path.read_text(encoding="utf-8")
            out.write(text)
            nbytes += len(text.encode())
            rows += text.count("\n")
    (run / "run.json").write_text(
        json.dumps({"run_id": "r", "version": "v1", "seed": 0, "status": "succeeded"})
    )
    compact_run(run)
    rules = RuleSet(hidden_paths=HIDDEN)
    times: dict[str, list[float]] = {"store_read": [], "store_audit": []}
    flagged = None
    for rep in range(repeats):
        for variant in (
            ("store_read", "store_audit") if rep % 2 == 0 else ("store_audit", "store_read")
        ):
            start = time.perf_counter()
            if variant == "store_read":
                con = connect(runs)
                con.execute(
                    "SELECT count(*), sum(length(text)), sum(len(commands)) FROM _rollouts"
                ).fetchall()
                con.close()
            else:
                import evotree.harness.audit.commands as commands_mod

                commands_mod._parse_cached.cache_clear()
                commands_mod._hits_cached.cache_clear()
                verdicts, totals = _rollout_verdicts(connect(runs), ["r"], rules, {}, {})
                flagged = sum(v.flagged for v in verdicts)
                assert sum(totals.values()) == rows
            times[variant].append(time.perf_counter() - start)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(
        f"  store: {rows} rollouts, {nbytes / 1e6:.1f} MB: read {med['store_read']:.2f} s, "
        f"audit {med['store_audit']:.2f} s ({nbytes / 1e6 / med['store_audit']:.1f} MB/s)",
        file=sys.stderr,
    )
    return {
        "rows": rows,
        "bytes": nbytes,
        "flagged": flagged,
        "median_seconds": med,
        "mb_per_s": {k: nbytes / 1e6 / v for k, v in med.items()},
        "audit_vs_read": med["store_read"] / med["store_audit"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    import evotree.harness.audit.commands as commands_mod
    import evotree.harness.audit.foreign_code as foreign_mod
    import evotree.harness.audit.inline as inline_mod
    import evotree.harness.audit.trajectories as traj_mod
    from evotree.harness.audit.trajectories import audit_trajectories

    with tempfile.TemporaryDirectory(prefix="evotree-bench-audit-") as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        corpus = generate(folder, args.mb)
        print(
            f"corpus: {corpus['bytes'] / 1e6:.1f} MB in {corpus['files']} files, {corpus['sessions']} sessions "
            f"({corpus['leaky_sessions']} with a leak), written in {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
        )
        paths = sorted(folder.iterdir())
        real_prefilter = traj_mod.prefilter

        def run(variant: str) -> tuple[float, Any]:
            if variant == "audit_all":
                traj_mod.prefilter = lambda *_a, **_k: True
            try:
                commands_mod._parse_cached.cache_clear()  # no variant starts with another's parses
                commands_mod._hits_cached.cache_clear()
                inline_mod.python_calls.cache_clear()
                foreign_mod.foreign_calls.cache_clear()
                start = time.perf_counter()
                if variant == "read":
                    out: Any = read_baseline(paths)
                else:
                    out = audit_trajectories(paths, hidden_paths=HIDDEN)
                return time.perf_counter() - start, out
            finally:
                traj_mod.prefilter = real_prefilter

        variants = ["read", "audit", "audit_all"]
        times: dict[str, list[float]] = {v: [] for v in variants}
        for rep in range(args.repeats):
            order = variants[rep % 3 :] + variants[: rep % 3]
            for variant in order:
                seconds, out = run(variant)
                times[variant].append(seconds)
                if variant != "read":
                    assert out.trajectories == corpus["sessions"], (
                        out.trajectories,
                        corpus["sessions"],
                    )
                    assert out.flagged == corpus["leaky_sessions"], (
                        variant,
                        out.flagged,
                        corpus["leaky_sessions"],
                    )
                print(
                    f"  {variant:9s} {seconds:6.2f} s  {corpus['bytes'] / 1e6 / seconds:7.1f} MB/s",
                    file=sys.stderr,
                )
        store = _store(folder, args.repeats)
    med = {v: statistics.median(t) for v, t in times.items()}
    mbps = {v: corpus["bytes"] / 1e6 / s for v, s in med.items()}
    result = {
        "bench": "audit_scan",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "corpus": corpus,
        "repeats": args.repeats,
        "median_seconds": med,
        "mb_per_s": mbps,
        "audit_vs_read": med["read"] / med["audit"],
        "prefilter_speedup": med["audit_all"] / med["audit"],
        "target_mb_per_s": TARGET_MBPS,
        "meets_target": mbps["audit"] >= TARGET_MBPS,
        "store": store,
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
