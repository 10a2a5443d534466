#!/usr/bin/env python
"""Benchmark: `evotree tree --json` with 10,000 versions in the ledger.

Target (issue): at most 1 s.

A real repository is built in a temp folder: a small recipe, `evotree init`, one version made
with the real CLI (`evotree branch` + `evotree abandon`, real worktree) as a reference, then
--versions - 1 more versions made through evotree's own library (create_version +
abandon_version, see benchlib.populate; git's worktree porcelain is skipped for the abandoned
ones, which leaves the same state), the last --active of them with real worktrees. The
reference record and a library-made record are compared field by field, so the ledger holds
what evotree's commands write: one `version.created` and (for abandoned versions) one
`version.abandoned` event per version, sharded records, a branch per version.

Then, for --repeats repetitions in rotated order:

  base        git for-each-ref refs/heads/evotree/     (git listing the same 10,000 branches)
  cli-json    evotree tree --json  > /dev/null         (the console script, new process)
  imports     python -P -c "import evotree.cli, evotree.versions"   (start-up floor of cli-json)
  lib-view    evotree.versions.tree_view(Workspace.open(repo))      (in-process)
  lib-json    tree_view + json.dumps(..., indent=2) as the CLI does (in-process)

and, for information only (not a target, not interleaved), the text `evotree tree`. Run:

    .venv/bin/python bench/bench_tree.py [--versions 10000] [--repeats 10] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import benchlib as bl  # first: isolates git's configuration before pygit2 is imported

TARGET_SECONDS = 1.0
TREE_IMPORTS = "import evotree.cli, evotree.versions"


def _shape(record: dict[str, Any]) -> dict[str, str]:
    return {k: type(v).__name__ for k, v in record.items()}


def build(repo: Path, *, versions: int, active: int, files: int, seed: int) -> dict[str, Any]:
    from evotree.workspace import Workspace

    bl.make_recipe_repo(repo, files=files, seed=seed)
    bl.evotree(repo, "init")
    # a reference version made entirely by the CLI, with a real worktree
    bl.evotree(repo, "branch", "-m", "reference: made by the real CLI")
    bl.evotree(repo, "abandon", "v1", "--reason", "reference version for the record check")
    pop = bl.populate(repo, versions - 1, active=active, seed=seed,
                      progress=lambda i, s: print(f"  {i} versions in {s:.0f} s", file=sys.stderr, flush=True))
    state = bl.check_state(repo, versions=versions + 1, worktrees=active)

    ws = Workspace.open(repo)
    snap = ws.ledger.snapshot()
    real = snap.require("v1").to_dict()
    fast = snap.require(pop.ids[0]).to_dict()
    if _shape(real) != _shape(fast):
        raise RuntimeError(f"library-made record differs from the CLI-made one: {_shape(real)} vs {_shape(fast)}")
    events = {e.event.version: e.event for e in ws.ledger.entries(limit=2 * versions + 10)
              if e.event.kind == "version.created" and e.event.version in ("v1", pop.ids[0])}
    if sorted(events["v1"].data) != sorted(events[pop.ids[0]].data):
        raise RuntimeError("library-made version.created event differs from the CLI-made one")
    statuses: dict[str, int] = {}
    for record in ws.ledger.versions():
        statuses[record.status] = statuses.get(record.status, 0) + 1
    return {"versions_in_ledger": versions + 1, "statuses": statuses, "max_depth": pop.max_depth,
            "populate_seconds": round(pop.seconds, 1), "record_check": "same fields and types as a CLI-made version",
            **state}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", type=int, default=10000, help="versions added after v0 (default 10000)")
    parser.add_argument("--active", type=int, default=20, help="of which active, with worktrees (default 20)")
    parser.add_argument("--files", type=int, default=30, help="files in the recipe (default 30)")
    parser.add_argument("--repeats", type=int, default=10, help="timed repetitions (default 10)")
    parser.add_argument("--warmup", type=int, default=1, help="discarded repetitions first (default 1)")
    parser.add_argument("--text-repeats", type=int, default=2,
                        help="runs of the text `evotree tree`, for information (default 2; 0 skips)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temp repository")
    args = parser.parse_args()
    if args.versions < 2:
        parser.error("--versions must be at least 2")
    started = time.perf_counter()
    env = bl.environment()

    from evotree.versions import tree_view
    from evotree.workspace import Workspace

    with bl.workdir(args.keep, "evotree-bench-tree-") as tmp:
        repo = tmp / "repo"
        print(f"building a ledger of {args.versions} versions ...", file=sys.stderr, flush=True)
        info = build(repo, versions=args.versions, active=args.active, files=args.files, seed=args.seed)
        print(f"  built in {time.perf_counter() - started:.0f} s; checking the output ...", file=sys.stderr, flush=True)

        out = bl.evotree(repo, "tree", "--json").stdout
        data = json.loads(out)
        if len(data["versions"]) != args.versions + 1:
            raise RuntimeError(f"tree --json lists {len(data['versions'])} versions, expected {args.versions + 1}")
        info["json_bytes"] = len(out.encode())
        try:
            import jsonschema

            from evotree.schemas import load_schema

            jsonschema.validate(data, load_schema("tree"))
            info["schema_check"] = "tree --json output validates against tree.schema.json"
        except ImportError:
            info["schema_check"] = "skipped (jsonschema not installed)"
        del data, out

        def base() -> float:
            return bl.timed_run(["git", "for-each-ref", "refs/heads/evotree/"], repo, stdout=subprocess.DEVNULL)[0]

        def cli_json() -> float:
            return bl.timed_run([*bl.EVOTREE, "tree", "--json"], repo, stdout=subprocess.DEVNULL)[0]

        def imports() -> float:
            return bl.timed_run([bl.PYTHON, "-P", "-c", TREE_IMPORTS], repo)[0]

        def lib_view() -> float:
            t0 = time.perf_counter()
            tree_view(Workspace.open(repo))
            return time.perf_counter() - t0

        def lib_json() -> float:
            t0 = time.perf_counter()
            json.dumps(tree_view(Workspace.open(repo)).to_dict(), indent=2, default=str)
            return time.perf_counter() - t0

        print("measuring ...", file=sys.stderr, flush=True)
        samples = bl.interleave({"base": base, "cli-json": cli_json, "imports": imports,
                                 "lib-view": lib_view, "lib-json": lib_json},
                                repeats=args.repeats, warmup=args.warmup, label="tree")
        text: dict[str, Any] = {}
        if args.text_repeats > 0:
            times = []
            for _ in range(args.text_repeats):
                seconds, shown = bl.timed_run([*bl.EVOTREE, "tree"], repo)
                times.append(seconds)
            text = {"summary": bl.summary(times), "versions_shown": len(set(re.findall(r"\bv\d+\b", shown))),
                    "lines": shown.count("\n")}

    s = {name: bl.summary(values) for name, values in samples.items()}
    med = {name: v["median"] for name, v in s.items()}
    cli = samples["cli-json"]
    result = {
        "cli_json_median": med["cli-json"], "cli_json_max": s["cli-json"]["max"],
        "runs_within_target": sum(1 for t in cli if t <= TARGET_SECONDS), "runs": len(cli),
        "ratio_cli_vs_for_each_ref": med["cli-json"] / med["base"],
        "paired_ratio_cli_vs_for_each_ref": bl.paired_ratio(cli, samples["base"]),
        "decomposition": {
            "startup_imports": med["imports"],
            "tree_view": med["lib-view"],
            "to_dict_and_json_dumps": med["lib-json"] - med["lib-view"],
            "remainder_write_and_exit": med["cli-json"] - med["imports"] - med["lib-json"],
        },
    }
    met = med["cli-json"] <= TARGET_SECONDS

    n = args.versions + 1
    print(f"\nevotree tree --json with {n} versions in the ledger ({info['ledger_events']} events, "
          f"{info['json_bytes'] / 1e6:.1f} MB of JSON); {args.repeats} interleaved repetitions")
    bl.print_table("timings", [
        ("git for-each-ref refs/heads/evotree/", s["base"]),
        ("evotree tree --json > /dev/null (CLI)", s["cli-json"]),
        ("python -P -c 'import evotree.cli, evotree.versions'", s["imports"]),
        ("tree_view() in-process", s["lib-view"]),
        ("tree_view() + to_dict + json.dumps in-process", s["lib-json"]),
    ])
    print(f"\n  CLI median {med['cli-json']:.3f} s, max {s['cli-json']['max']:.3f} s; "
          f"{result['runs_within_target']}/{len(cli)} runs within {TARGET_SECONDS:.0f} s")
    print(f"  ratio to git for-each-ref: {result['ratio_cli_vs_for_each_ref']:.2f}x "
          f"(paired {result['paired_ratio_cli_vs_for_each_ref']:.2f}x)")
    print(f"  target: median <= {TARGET_SECONDS:.1f} s: {'MET' if met else 'NOT MET'}")
    d = result["decomposition"]
    print("\nwhere the CLI's time goes (medians; differences of noisy medians, approximate)")
    for name, key in (("start-up + imports", "startup_imports"), ("tree_view (read 10k records)", "tree_view"),
                      ("to_dict + json.dumps(indent=2)", "to_dict_and_json_dumps"),
                      ("remainder (write to stdout, exit)", "remainder_write_and_exit")):
        print(f"  {name:34} {bl.ms(d[key])} ms")
    if text:
        print(f"\nfor information: text `evotree tree` (not a target, {args.text_repeats} runs, not interleaved): "
              f"median {text['summary']['median']:.2f} s; it printed {text['versions_shown']} of {n} versions "
              f"(tree depth {info['max_depth']}, 80-column pipe)")
    print(f"\ntotal benchmark time {time.perf_counter() - started:.0f} s")

    bl.write_json(args.json, {
        "benchmark": "tree", "target_seconds": TARGET_SECONDS, "environment": env, "params": vars(args),
        "ledger": info, "summary": s, "result": result, "met": met, "text_tree": text, "samples": samples,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
