#!/usr/bin/env python
"""Benchmark: `evotree branch` in a repository that already has 1,000 versions.

Target (issue): at most 1.3x the time of a bare `git branch X <commit>` + `git worktree add
<path> X` of the same commit, measured in the same run (git's own work is the floor).

Two real repositories with the same ~200-file recipe are built in a temp folder: a large one
with --versions versions (default 1,000: all but --active abandoned, their branches kept,
--active with live worktrees) and a small one with --small-versions (default 10). Then, for
--repeats repetitions in rotated order, each repository runs

  base      git branch bench-base <champion commit> && git worktree add <path> bench-base
            (two subprocesses, like a shell script)
  cli       evotree branch -m "..."            (the console script, a new Python process)
  cli-json  evotree branch --json -m "..."     (what an agent parses; large repo only)
  lib       evotree.core.versions.create_version()  (in-process: a trainer agent driving evotree
            from Python; includes Workspace.open)

and, in the large repository only, the fixed costs of any Python CLI: `python -c pass`,
`python -c "import <what evotree branch imports>"`, and `git --version`. After every timed
branch the state is restored exactly (worktree removed, branch deleted, ledger ref reset), so
every repetition branches at the same tree size. Run:

    .venv/bin/python bench/bench_branch.py [--versions 1000] [--repeats 20] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import benchlib as bl  # first: isolates git's configuration before pygit2 is imported

TARGET_RATIO = 1.3
BRANCH_IMPORTS = "import evotree.cli.main, evotree.core.versions, evotree.cli.render"


class Subject:
    """One benchmark repository and the timed operations on it."""

    def __init__(self, repo: Path) -> None:
        import pygit2

        from evotree.core.refs import LEDGER_REF
        from evotree.core.workspace import Workspace

        self.repo = repo
        self.pyrepo = pygit2.Repository(str(repo))
        self.ledger_ref = LEDGER_REF
        self.ledger_head = self.pyrepo.references[LEDGER_REF].target
        ws = Workspace.open(repo)
        self.champion_commit = str(ws.git.ref_target(f"refs/heads/evotree/{ws.champion()}"))
        self.worktree_dir = ws.worktree_path("x").parent
        self.next_id = f"v{int(ws.ledger.meta()['last_number']) + 1}"
        self.base_path = self.worktree_dir / "bench-base"

    # ---------------------------------------------------------------- restore
    def _remove_worktree(self, path: Path) -> None:
        bl.git(self.repo, "worktree", "remove", "--force", "--force", str(path))

    def _restore_version(self, version: str) -> None:
        if version != self.next_id:
            raise RuntimeError(f"expected evotree to create {self.next_id}, it created {version}")
        self._remove_worktree(self.worktree_dir / version)
        self.pyrepo.references.delete(f"refs/heads/evotree/{version}")
        self.pyrepo.references[self.ledger_ref].set_target(self.ledger_head, "bench: restore")

    # ---------------------------------------------------------------- variants
    def base(self) -> float:
        t0 = time.perf_counter()
        for cmd in (
            ["git", "branch", "bench-base", self.champion_commit],
            ["git", "worktree", "add", "--quiet", str(self.base_path), "bench-base"],
        ):
            proc = subprocess.run(cmd, cwd=self.repo, capture_output=True, check=False)
            if proc.returncode != 0:
                raise RuntimeError(f"{cmd} failed: {proc.stderr.decode()}")
        elapsed = time.perf_counter() - t0
        self._remove_worktree(self.base_path)
        bl.git(self.repo, "branch", "-D", "bench-base")
        return elapsed

    def cli(self) -> float:
        elapsed, out = bl.timed_run(
            [*bl.EVOTREE, "branch", "-m", "bench: halve the learning rate"], self.repo
        )
        match = re.search(r"created (\S+) from", out)
        if match is None:
            raise RuntimeError(f"unexpected `evotree branch` output: {out!r}")
        self._restore_version(match.group(1))
        return elapsed

    def cli_json(self) -> float:
        elapsed, out = bl.timed_run(
            [*bl.EVOTREE, "branch", "--json", "-m", "bench: halve the learning rate"], self.repo
        )
        self._restore_version(json.loads(out)["id"])
        return elapsed

    def lib(self) -> float:
        from evotree.core.versions import create_version
        from evotree.core.workspace import Workspace

        t0 = time.perf_counter()
        record = create_version(
            Workspace.open(self.repo), hypothesis="bench: halve the learning rate"
        )
        elapsed = time.perf_counter() - t0
        self._restore_version(record.id)
        return elapsed

    def python_pass(self) -> float:
        return bl.timed_run([bl.PYTHON, "-P", "-c", "pass"], self.repo)[0]

    def python_imports(self) -> float:
        return bl.timed_run([bl.PYTHON, "-P", "-c", BRANCH_IMPORTS], self.repo)[0]

    def git_version(self) -> float:
        return bl.timed_run(["git", "--version"], self.repo)[0]


def build(path: Path, *, versions: int, active: int, files: int, seed: int) -> tuple[Subject, dict]:
    bl.make_recipe_repo(path, files=files, seed=seed)
    bl.evotree(path, "init")
    pop = bl.populate(path, versions, active=active, seed=seed)
    state = bl.check_state(path, versions=versions + 1, worktrees=active)
    info = {
        "versions_added": versions,
        "active_worktrees": active,
        "abandoned": pop.abandoned,
        "tracked_files": bl.tracked_files(path),
        "max_depth": pop.max_depth,
        "populate_seconds": round(pop.seconds, 2),
        **state,
    }
    return Subject(path), info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--versions", type=int, default=1000, help="versions in the large tree (default 1000)"
    )
    parser.add_argument(
        "--small-versions", type=int, default=10, help="versions in the small tree (default 10)"
    )
    parser.add_argument(
        "--active", type=int, default=30, help="active worktrees in the large tree (default 30)"
    )
    parser.add_argument(
        "--small-active", type=int, default=3, help="active worktrees in the small tree (default 3)"
    )
    parser.add_argument("--files", type=int, default=200, help="files in the recipe (default 200)")
    parser.add_argument("--repeats", type=int, default=20, help="timed repetitions (default 20)")
    parser.add_argument(
        "--warmup", type=int, default=2, help="discarded repetitions first (default 2)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temp repositories")
    args = parser.parse_args()
    args.active = min(args.active, args.versions)
    args.small_active = min(args.small_active, args.small_versions)
    started = time.perf_counter()
    env = bl.environment()

    with bl.workdir(args.keep, "evotree-bench-branch-") as tmp:
        print(
            f"building: {args.versions} versions ({args.active} active worktrees) and "
            f"{args.small_versions} versions, {args.files}-file recipe ...",
            file=sys.stderr,
            flush=True,
        )
        big, big_info = build(
            tmp / "large",
            versions=args.versions,
            active=args.active,
            files=args.files,
            seed=args.seed,
        )
        small, small_info = build(
            tmp / "small",
            versions=args.small_versions,
            active=min(args.small_active, args.small_versions),
            files=args.files,
            seed=args.seed,
        )
        print(
            f"  built in {time.perf_counter() - started:.1f} s; measuring ...",
            file=sys.stderr,
            flush=True,
        )

        variants = {
            "large/base": big.base,
            "large/cli": big.cli,
            "large/cli-json": big.cli_json,
            "large/lib": big.lib,
            "large/python-pass": big.python_pass,
            "large/python-imports": big.python_imports,
            "large/git-version": big.git_version,
            "small/base": small.base,
            "small/cli": small.cli,
            "small/lib": small.lib,
        }
        samples = bl.interleave(variants, repeats=args.repeats, warmup=args.warmup, label="branch")
        # the repositories must be exactly as built: nothing leaked between repetitions
        bl.check_state(big.repo, versions=args.versions + 1, worktrees=args.active)
        bl.check_state(
            small.repo,
            versions=args.small_versions + 1,
            worktrees=min(args.small_active, args.small_versions),
        )

    s = {name: bl.summary(values) for name, values in samples.items()}
    med = {name: v["median"] for name, v in s.items()}
    ratios = {
        "cli_vs_base": med["large/cli"] / med["large/base"],
        "cli_json_vs_base": med["large/cli-json"] / med["large/base"],
        "lib_vs_base": med["large/lib"] / med["large/base"],
        "small_cli_vs_base": med["small/cli"] / med["small/base"],
        "small_lib_vs_base": med["small/lib"] / med["small/base"],
        "growth_base_large_vs_small": med["large/base"] / med["small/base"],
        "growth_cli_large_vs_small": med["large/cli"] / med["small/cli"],
        "growth_lib_large_vs_small": med["large/lib"] / med["small/lib"],
    }
    paired = {
        "cli_vs_base": bl.paired_ratio(samples["large/cli"], samples["large/base"]),
        "cli_json_vs_base": bl.paired_ratio(samples["large/cli-json"], samples["large/base"]),
        "lib_vs_base": bl.paired_ratio(samples["large/lib"], samples["large/base"]),
    }
    decomposition = {
        "interpreter_start": med["large/python-pass"],
        "imports": med["large/python-imports"] - med["large/python-pass"],
        "library_work_in_process": med["large/lib"],
        "rest_click_render_exit": med["large/cli"] - med["large/python-imports"] - med["large/lib"],
        "cli_total": med["large/cli"],
        "cli_excess_over_base": med["large/cli"] - med["large/base"],
        "budget_at_1_3x_base": TARGET_RATIO * med["large/base"],
    }
    verdicts = {
        "cli": ratios["cli_vs_base"] <= TARGET_RATIO,
        "cli_json": ratios["cli_json_vs_base"] <= TARGET_RATIO,
        "lib": ratios["lib_vs_base"] <= TARGET_RATIO,
    }

    n_big, n_small = args.versions + 1, args.small_versions + 1
    labels = {
        "large/base": "git branch + git worktree add",
        "large/cli": "evotree branch (CLI)",
        "large/cli-json": "evotree branch --json (CLI)",
        "large/lib": "create_version() in-process",
        "large/python-pass": "python -P -c pass",
        "large/python-imports": "python -P -c 'import <branch modules>'",
        "large/git-version": "git --version",
    }
    print(
        f"\nevotree branch with {n_big} versions in the ledger "
        f"({big_info['tracked_files']}-file recipe, {args.active} active worktrees); "
        f"{args.repeats} interleaved repetitions"
    )
    bl.print_table(f"large tree ({n_big} versions)", [(labels[k], s[k]) for k in labels])
    bl.print_table(
        f"small tree ({n_small} versions)",
        [
            (labels["large/" + k.split("/")[1]], s[k])
            for k in ("small/base", "small/cli", "small/lib")
        ],
    )
    print(
        "\nratios (median / median of the baseline, same run;"
        " paired = median of per-repetition ratios)"
    )
    for key, name in (
        ("cli", "evotree branch (CLI)"),
        ("cli_json", "evotree branch --json (CLI)"),
        ("lib", "create_version() in-process"),
    ):
        r = ratios[f"{key}_vs_base"]
        verdict = "MET" if verdicts[key] else "NOT MET"
        print(
            f"  {name:30} {r:5.2f}x  (paired {paired[f'{key}_vs_base']:4.2f}x)"
            f"   target <= {TARGET_RATIO}x: {verdict}"
        )
    print(
        f"  small tree: CLI {ratios['small_cli_vs_base']:.2f}x, "
        f"in-process {ratios['small_lib_vs_base']:.2f}x of its baseline"
    )
    print(
        "  absolute excess over the baseline (large): "
        f"CLI {bl.ms(med['large/cli'] - med['large/base']).strip()} ms, "
        f"CLI --json {bl.ms(med['large/cli-json'] - med['large/base']).strip()} ms, "
        f"in-process {bl.ms(med['large/lib'] - med['large/base']).strip()} ms"
    )
    print(f"\ngrowth from {n_small} to {n_big} versions (median large / median small)")
    print(
        f"  git baseline {ratios['growth_base_large_vs_small']:.2f}x"
        f"   CLI {ratios['growth_cli_large_vs_small']:.2f}x"
        f"   in-process {ratios['growth_lib_large_vs_small']:.2f}x"
    )
    d = decomposition
    print(
        "\nwhere the CLI's time goes"
        " (medians, large tree; differences of noisy medians, approximate)"
    )
    parts = (
        ("interpreter start (python -P -c pass)", d["interpreter_start"]),
        ("imports: " + BRANCH_IMPORTS[len("import ") :], d["imports"]),
        ("library work (create_version in-process)", d["library_work_in_process"]),
        ("remainder (click, rendering, exit, noise)", d["rest_click_render_exit"]),
        ("= evotree branch (CLI)", d["cli_total"]),
        ("1.3x budget (1.3 x git baseline)", d["budget_at_1_3x_base"]),
    )
    width = max(len(name) for name, _ in parts)
    for name, value in parts:
        print(f"  {name:{width}}  {bl.ms(value)} ms")
    print(f"\ntotal benchmark time {time.perf_counter() - started:.0f} s")

    bl.write_json(
        args.json,
        {
            "benchmark": "branch",
            "target_ratio": TARGET_RATIO,
            "environment": env,
            "params": vars(args),
            "large": big_info,
            "small": small_info,
            "summary": s,
            "ratios": ratios,
            "paired_ratios": paired,
            "decomposition": decomposition,
            "verdicts": verdicts,
            "samples": samples,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
