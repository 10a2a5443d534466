#!/usr/bin/env python
"""Benchmark: `evotree tree --json` with 10,000 versions in the ledger.

Target (issue): at most 1 s.

A real repository is built in a temp folder: a small recipe, `evotree init`, one version made
with the real CLI (`evotree branch` + `evotree abandon`, real worktree) as a reference, then
--versions - 1 more versions made through evotree's own library (create_version +
abandon_version, see benchlib.populate; git's worktree porcelain is skipped for the abandoned
ones, which leaves the same state), the last --active of them with real worktrees. The
reference record and a library-made record are compared field by field (same keys, same
value types); the ledger holds what evotree's commands write: one `version.created` and, for
abandoned versions, one `version.abandoned` event per version, sharded records, one branch
per version.

Then, for --repeats repetitions in rotated order:

  base        git for-each-ref refs/heads/evotree/     (git listing the same 10,000 branches)
  cli-json    evotree tree --json  > /dev/null         (the console script, new process)
  imports     python -P -c "import evotree.cli.main, evotree.core.versions"   (start-up floor of cli-json)
  lib         in-process, one call timed at two points:
                lib-view  evotree.core.versions.tree_view(Workspace.open(repo))
                lib-json  ... + json.dumps(view.to_dict(), indent=2) as `--json` does

and, for information only (not a target, not interleaved), the text `evotree tree`. evotree
writes every ledger object loose (~6 per event) and never packs; --gc runs `git gc` before
measuring, as git's own auto-gc would eventually do. Run:

    .venv/bin/python bench/bench_tree.py [--versions 10000] [--repeats 8] [--json PATH]
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
TREE_IMPORTS = "import evotree.cli.main, evotree.core.versions"


def _shape(record: dict[str, Any]) -> dict[str, str]:
    return {k: type(v).__name__ for k, v in record.items()}


def build(repo: Path, *, versions: int, active: int, files: int, seed: int) -> dict[str, Any]:
    from evotree.core.workspace import Workspace

    bl.make_recipe_repo(repo, files=files, seed=seed)
    bl.evotree(repo, "init")
    # a reference version made entirely by the CLI, with a real worktree
    bl.evotree(repo, "branch", "-m", "reference: made by the real CLI")
    bl.evotree(repo, "abandon", "v1", "--reason", "reference version for the record check")
    pop = bl.populate(
        repo,
        versions - 1,
        active=active,
        seed=seed,
        progress=lambda i, s: print(f"  {i} versions in {s:.0f} s", file=sys.stderr, flush=True),
    )
    state = bl.check_state(repo, versions=versions + 1, worktrees=active)

    ws = Workspace.open(repo)
    snap = ws.ledger.snapshot()
    real = snap.require("v1").to_dict()
    record_check = "skipped (no abandoned library-made version)"
    if pop.abandoned:  # the first pop.abandoned ids were created and abandoned like v1
        fast = snap.require(pop.ids[0]).to_dict()
        if _shape(real) != _shape(fast):
            raise RuntimeError(
                f"library-made record differs from the CLI-made one: "
                f"{_shape(real)} vs {_shape(fast)}"
            )
        record_check = "same fields and types as a CLI-made version"
    statuses: dict[str, int] = {}
    for record in ws.ledger.versions():
        statuses[record.status] = statuses.get(record.status, 0) + 1
    return {
        "versions_in_ledger": versions + 1,
        "statuses": statuses,
        "max_depth": pop.max_depth,
        "populate_seconds": round(pop.seconds, 1),
        "record_check": record_check,
        **state,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--versions", type=int, default=10000, help="versions added after v0 (default 10000)"
    )
    parser.add_argument(
        "--active", type=int, default=20, help="of which active, with worktrees (default 20)"
    )
    parser.add_argument("--files", type=int, default=30, help="files in the recipe (default 30)")
    parser.add_argument("--repeats", type=int, default=8, help="timed repetitions (default 8)")
    parser.add_argument(
        "--warmup", type=int, default=1, help="discarded repetitions first (default 1)"
    )
    parser.add_argument(
        "--text-repeats",
        type=int,
        default=1,
        help="runs of the text `evotree tree`, for information (default 1; 0 skips)",
    )
    parser.add_argument(
        "--gc",
        action="store_true",
        help="run `git gc` before measuring (evotree itself leaves every ledger object loose)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temp repository")
    args = parser.parse_args()
    if args.versions < 2:
        parser.error("--versions must be at least 2")
    args.active = min(args.active, args.versions - 1)  # v1 is the CLI-made reference
    started = time.perf_counter()
    env = bl.environment()

    from evotree.core.versions import tree_view
    from evotree.core.workspace import Workspace

    with bl.workdir(args.keep, "evotree-bench-tree-") as tmp:
        repo = tmp / "repo"
        print(f"building a ledger of {args.versions} versions ...", file=sys.stderr, flush=True)
        info = build(
            repo, versions=args.versions, active=args.active, files=args.files, seed=args.seed
        )
        print(
            f"  built in {time.perf_counter() - started:.0f} s; checking the output ...",
            file=sys.stderr,
            flush=True,
        )
        if args.gc:
            t0 = time.perf_counter()
            bl.git(repo, "gc", "--quiet")
            info["git_gc_seconds"] = round(time.perf_counter() - t0, 1)
        counts = dict(line.split(": ") for line in bl.git(repo, "count-objects", "-v").splitlines())
        info["objects"] = {
            "loose": int(counts["count"]),
            "loose_kib_on_disk": int(counts["size"]),
            "packed": int(counts["in-pack"]),
            "pack_kib": int(counts["size-pack"]),
        }

        out = bl.evotree(repo, "tree", "--json").stdout
        data = json.loads(out)
        if len(data["versions"]) != args.versions + 1:
            raise RuntimeError(
                f"tree --json lists {len(data['versions'])} versions, expected {args.versions + 1}"
            )
        info["json_bytes"] = len(out.encode())
        try:
            import jsonschema

            from evotree.verbs.schemas import load_schema

            jsonschema.validate(data, load_schema("tree"))
            info["schema_check"] = (
                "tree --json output validates against the schema derived from its result type"
            )
        except ImportError:
            info["schema_check"] = "skipped (jsonschema not installed)"
        del data, out

        def base() -> float:
            return bl.timed_run(
                ["git", "for-each-ref", "refs/heads/evotree/"], repo, stdout=subprocess.DEVNULL
            )[0]

        def cli_json() -> float:
            return bl.timed_run([*bl.EVOTREE, "tree", "--json"], repo, stdout=subprocess.DEVNULL)[0]

        def imports() -> float:
            return bl.timed_run([bl.PYTHON, "-P", "-c", TREE_IMPORTS], repo)[0]

        def lib() -> dict[str, float]:
            t0 = time.perf_counter()
            view = tree_view(Workspace.open(repo))
            t1 = time.perf_counter()
            json.dumps(view.to_dict(), indent=2, default=str)  # what `--json` does with the result
            return {"lib-view": t1 - t0, "lib-json": time.perf_counter() - t0}

        print("measuring ...", file=sys.stderr, flush=True)
        samples = bl.interleave(
            {"base": base, "cli-json": cli_json, "imports": imports, "lib": lib},
            repeats=args.repeats,
            warmup=args.warmup,
            label="tree",
        )
        text: dict[str, Any] = {}
        if args.text_repeats > 0:
            times = []
            for _ in range(args.text_repeats):
                seconds, shown = bl.timed_run([*bl.EVOTREE, "tree"], repo)
                times.append(seconds)
            text = {
                "summary": bl.summary(times),
                "versions_shown": len(set(re.findall(r"\bv\d+\b", shown))),
                "lines": shown.count("\n"),
            }

    s = {name: bl.summary(values) for name, values in samples.items()}
    med = {name: v["median"] for name, v in s.items()}
    cli = samples["cli-json"]
    result = {
        "cli_json_median": med["cli-json"],
        "cli_json_max": s["cli-json"]["max"],
        "runs_within_target": sum(1 for t in cli if t <= TARGET_SECONDS),
        "runs": len(cli),
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
    objects = info["objects"]
    print(
        f"\nevotree tree --json with {n} versions in the ledger ({info['ledger_events']} events, "
        f"{info['json_bytes'] / 1e6:.1f} MB of JSON); {args.repeats} interleaved repetitions"
    )
    print(
        f"object store: {objects['loose']} loose objects "
        f"({objects['loose_kib_on_disk'] / 1024:.0f} MiB on disk), "
        f"{objects['packed']} packed ({objects['pack_kib'] / 1024:.0f} MiB)"
        + (
            f"; `git gc` took {info['git_gc_seconds']} s"
            if args.gc
            else "; not packed (as evotree leaves it)"
        )
    )
    bl.print_table(
        "timings",
        [
            ("git for-each-ref refs/heads/evotree/", s["base"]),
            ("evotree tree --json > /dev/null (CLI)", s["cli-json"]),
            ("python -P -c 'import evotree.cli.main, evotree.core.versions'", s["imports"]),
            ("tree_view() in-process", s["lib-view"]),
            ("tree_view() + to_dict + json.dumps in-process", s["lib-json"]),
        ],
    )
    print(
        f"\n  CLI median {med['cli-json']:.3f} s, max {s['cli-json']['max']:.3f} s; "
        f"{result['runs_within_target']}/{len(cli)} runs within {TARGET_SECONDS:.0f} s"
    )
    print(
        f"  ratio to git for-each-ref: {result['ratio_cli_vs_for_each_ref']:.2f}x "
        f"(paired {result['paired_ratio_cli_vs_for_each_ref']:.2f}x)"
    )
    print(f"  target: median <= {TARGET_SECONDS:.1f} s: {'MET' if met else 'NOT MET'}")
    d = result["decomposition"]
    print("\nwhere the CLI's time goes (medians; differences of noisy medians, approximate)")
    for name, key in (
        ("start-up + imports", "startup_imports"),
        (f"tree_view (reads {n} records)", "tree_view"),
        ("to_dict + json.dumps(indent=2)", "to_dict_and_json_dumps"),
        ("remainder (write to stdout, exit)", "remainder_write_and_exit"),
    ):
        print(f"  {name:34} {bl.ms(d[key])} ms")
    if text:
        print(
            "\nfor information: text `evotree tree` "
            f"(not a target, {args.text_repeats} runs, not interleaved): "
            f"median {text['summary']['median']:.2f} s; "
            f"it printed {text['versions_shown']} of {n} versions "
            f"(tree depth {info['max_depth']}, 80-column pipe)"
        )
    print(f"\ntotal benchmark time {time.perf_counter() - started:.0f} s")

    bl.write_json(
        args.json,
        {
            "benchmark": "tree",
            "target_seconds": TARGET_SECONDS,
            "environment": env,
            "params": vars(args),
            "ledger": info,
            "summary": s,
            "result": result,
            "met": met,
            "text_tree": text,
            "samples": samples,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
