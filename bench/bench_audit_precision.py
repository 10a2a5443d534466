#!/usr/bin/env python
"""Benchmark: precision and recall of the trajectory audit on the labeled corpus (issue 7).

Corpus: ``tests/data/audit/corpus.jsonl`` — one shell command per line with a label (``leak``
with the finding code it must produce, or ``benign``: ordinary work, including ordinary use of
the current history). ``"hard": true`` marks cases written to probe the limits (a command in a
shell variable, an alias, a script run after it is written, loopback fetches, ranges ending at
HEAD, cache directories under tests/). Hidden paths: ``judge/``, ``tests/hidden/``.

A command is *flagged* when the audit has a hit of severity high or above; a leak counts as
found only when the flagged hit has the labeled code. Reported per code, overall, and for the
hard cases alone.

Baseline, measured in the same run: the git-history token regex of the behavior layer
(``evotree.diagnostics.behavior.git_history_pattern``, the check that existed before the audit), on
the rows it is meant for: leaks of codes ``audit.git_history_leak`` / ``git_internals_read``
and every benign row.

Held-out set: ``tests/data/audit/heldout.jsonl`` (60 commands, 31 leaks) was written after the
rules and scored once before any rule was changed for it; its numbers are the blind estimate.

Trajectory sets (issue 21), scored per *file* (a file is flagged when any trajectory in it has a
hit of severity high or above; a leaky file counts as found when flagged): agent trajectories
in eleven format variants (Claude Code, Codex rollout / exec / legacy JSONL, SWE-agent
``trajectory`` and ``history``, mini-swe-agent, bash history with and without timestamps, zsh
extended history, evotree rollouts), written by ``build.py`` beside each set:

* ``tests/data/audit/trajectories/dev`` — the development set: the issue's missed and
  mis-flagged classes in every format; the rules are tuned on it;
* ``tests/data/audit/trajectories/heldout`` — the second held-out set: other stories and
  wrappings, written before the issue-21 rule changes and never tuned on.

Run:

    .venv/bin/python bench/bench_audit_precision.py [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "data" / "audit" / "corpus.jsonl"
#: Written after the rules, and run once before any rule was changed for it: the blind check.
HELDOUT = ROOT / "tests" / "data" / "audit" / "heldout.jsonl"
HISTORY = ("audit.git_history_leak", "audit.git_internals_read")


def _pr(tp: int, fp: int, fn: int) -> dict[str, Any]:
    return {"tp": tp, "fp": fp, "fn": fn,
            "precision": tp / (tp + fp) if tp + fp else None, "recall": tp / (tp + fn) if tp + fn else None}


def _heldout(rules: Any) -> dict[str, Any]:
    from evotree.harness.audit.commands import classify_command

    rows = [json.loads(line) for line in HELDOUT.read_text().splitlines() if line.strip()]
    tp = fp = fn = 0
    errors = []
    for row in rows:
        codes = {h.code for h in classify_command(row["command"], rules) if h.severity in ("high", "critical")}
        if row["label"] == "leak":
            found = row["code"] in codes
            tp += found
            fn += not found
        else:
            fp += bool(codes)
            found = not codes
        if not found:
            errors.append({"command": row["command"], "expected": row["code"] or "benign", "got": sorted(codes)})
    return {"rows": len(rows), **_pr(tp, fp, fn), "errors": errors}


TRAJECTORIES = ROOT / "tests" / "data" / "audit" / "trajectories"


def trajectory_set(folder: Path) -> dict[str, Any]:
    """File-level precision and recall of ``evotree audit trajectories`` on one labelled set."""
    from evotree.harness.audit.trajectories import audit_trajectories

    rows = [json.loads(x) for x in (folder / "labels.jsonl").read_text().splitlines() if x.strip()]
    meta = next(r for r in rows if r.get("meta"))
    rows = [r for r in rows if not r.get("meta")]
    tp = fp = fn = 0
    errors = []
    by_format: dict[str, dict[str, int]] = {}
    for row in rows:
        audit = audit_trajectories([folder / "files" / row["file"]], hidden_paths=meta["hidden_paths"])
        flagged = audit.flagged > 0
        per = by_format.setdefault(row["format"], {"tp": 0, "fp": 0, "fn": 0})
        if row["label"] == "leak":
            tp += flagged
            fn += not flagged
            per["tp" if flagged else "fn"] += 1
        else:
            fp += flagged
            per["fp"] += flagged
        if flagged != (row["label"] == "leak"):
            errors.append({"file": row["file"], "expected": row["label"],
                           "hits": [h.to_dict() for v in audit.verdicts for h in v.hits if h.severity == "high"]})
    return {"files": len(rows), "leaks": sum(r["label"] == "leak" for r in rows), **_pr(tp, fp, fn),
            "by_format": {k: _pr(**v) for k, v in sorted(by_format.items())}, "errors": errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    from evotree.diagnostics.behavior import git_history_pattern
    from evotree.harness.audit.commands import RuleSet, classify_command

    rules = RuleSet(hidden_paths=("judge/", "tests/hidden/"))
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    baseline = re.compile(git_history_pattern())
    counts: dict[str, dict[str, int]] = {}
    overall = {"tp": 0, "fp": 0, "fn": 0}
    hard = {"tp": 0, "fp": 0, "fn": 0}
    history = {"tp": 0, "fp": 0, "fn": 0}
    base = {"tp": 0, "fp": 0, "fn": 0}
    misses: list[dict[str, Any]] = []
    for row in rows:
        high = [h for h in classify_command(row["command"], rules) if h.severity in ("high", "critical")]
        codes = {h.code for h in high}
        buckets = [overall] + ([hard] if row.get("hard") else [])
        base_hit = bool(baseline.search(row["command"]))
        if row["label"] == "leak":
            found = row["code"] in codes
            per = counts.setdefault(row["code"], {"tp": 0, "fp": 0, "fn": 0})
            per["tp" if found else "fn"] += 1
            for b in buckets:
                b["tp" if found else "fn"] += 1
            if row["code"] in HISTORY:
                history["tp" if found else "fn"] += 1
                base["tp" if base_hit else "fn"] += 1
            if not found:
                misses.append({"command": row["command"], "expected": row["code"], "got": sorted(codes)})
        else:
            if high:
                for b in buckets:
                    b["fp"] += 1
                for code in codes:
                    counts.setdefault(code, {"tp": 0, "fp": 0, "fn": 0})["fp"] += 1
                misses.append({"command": row["command"], "expected": "benign", "got": sorted(codes)})
            if codes & set(HISTORY):
                history["fp"] += 1
            base["fp"] += base_hit
    result = {
        "bench": "audit_precision", "rows": len(rows), "leaks": sum(r["label"] == "leak" for r in rows),
        "benign": sum(r["label"] == "benign" for r in rows), "hard_rows": sum(bool(r.get("hard")) for r in rows),
        "overall": _pr(**overall), "hard": _pr(**hard),
        "by_code": {k: _pr(**v) for k, v in sorted(counts.items())},
        "git_history": {"audit": _pr(**history), "baseline_behavior_regex": _pr(**base)},
        "errors": misses,
        "heldout": _heldout(rules),
        "trajectories": {"dev": trajectory_set(TRAJECTORIES / "dev"),
                         "heldout": trajectory_set(TRAJECTORIES / "heldout")},
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
