"""The loop measured on real runs (issue 33 item 2): greedy against evotree on the same proposals.

Per loop (seed L, fixed in advance): a gym workspace on three Core-16 environments (Acrobot-v1,
MountainCarContinuous-v0, HalfCheetah-v5) whose v0 is :data:`evotree.demo.GYM_POLICY` with
``EPSILON`` > 0 (a random action with that chance each step, from the system's entropy: two runs
of one policy differ, as two training runs do), and one sequence of knob moves drawn from L
(:func:`evotree.verbs.autopilot.knob_proposals`). Three rules judge the same moves:

- **greedy-1**: keep-if-better on one run each (the champion's one run against the candidate's);
- **greedy-k**: the same on the mean of k runs each, k = evotree's runs per proposal in that loop
  (rounded up), so it spends about as many runs;
- **evotree**: ``evotree autopilot`` (the library call, through the verbs) on a real workspace,
  every run a real ``evotree run`` (sandboxed train and judge), the score gate asking for seeds,
  a second signer made in a temp folder promoting what passes every gate.

Greedy's runs are the same judge code played in this process on the same validation pool (the
domain's episode and scoring functions), not ``evotree run``: the same distribution of scores,
without the harness' per-run cost. Every champion is re-judged on the held-out pool, which no
run saw, ``--truth-repeats`` times per episode: its **true value**. Per loop and rule: the final
champion's true value, whether it ended below its own earlier true peak (by more than
``--neutral``), promotions whose true effect is within ±``--neutral`` (neutral) or below it
(harmful), runs, and runs after the peak (evotree also wall seconds).

    .venv/bin/python bench/bench_real_loop.py --loops 2 --proposals 5 --json out.json
"""

from __future__ import annotations

import benchlib  # noqa: F401  - first: isolates git's configuration

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ENVS = ("Acrobot-v1", "MountainCarContinuous-v0", "HalfCheetah-v5")


def _apply(policy: str, proposal: Any, knobs: dict[str, Any]) -> str | None:
    """``policy`` with ``proposal`` applied (as the autopilot applies it), or None when unchanged."""
    from evotree.verbs.autopilot import Proposal, apply_proposal

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "policy.py"
        path.write_text(policy)
        apply_proposal(Proposal(proposal.key, proposal.kind, proposal.summary, dict(proposal.data)), Path(folder),
                       knobs)
        new = path.read_text()
    return None if new == policy else new


class Truth:
    """True values (held-out, many repeats) and single runs (validation, one play), cached."""

    def __init__(self, judge: dict[str, Any], repeats: int) -> None:
        self.judge, self.repeats, self.cache = judge, repeats, {}  # type: ignore[var-annotated]

    def true(self, policy: str) -> float:
        from evotree.demo import gym_truth

        if policy not in self.cache:
            self.cache[policy] = gym_truth(policy, self.judge, repeats=self.repeats, split="heldout")
        return float(self.cache[policy])

    def run(self, policy: str) -> float:
        from evotree.demo import gym_truth

        return gym_truth(policy, self.judge, repeats=1, split="validation")


def greedy(start: str, proposals: list[Any], knobs: dict[str, Any], truth: Truth, k: int) -> dict[str, Any]:
    """Keep-if-better on the mean of ``k`` runs: the path of champions and the runs spent."""
    champion, value = start, statistics.fmean(truth.run(start) for _ in range(k))
    runs, path, kept_at = k, [start], [0]
    for proposal in proposals:
        candidate = _apply(champion, proposal, knobs)
        if candidate is None:
            continue
        score = statistics.fmean(truth.run(candidate) for _ in range(k))
        runs += k
        if score > value:
            champion, value = candidate, score
            path.append(candidate)
            kept_at.append(runs)
    return {"path": path, "runs": runs, "kept_at_runs": kept_at}


def evotree_loop(loop: int, proposals: list[Any], root: Path, judge_seed: int, args: argparse.Namespace
                 ) -> tuple[dict[str, Any], dict[str, Any], str]:
    """One autopilot session on a fresh workspace; its path of champions (policy texts) and runs."""
    from benchlib import git

    from evotree.api import init as evotree_init
    from evotree.demo import SecondSigner, gym_files, gym_policy
    from evotree.verbs import Session
    from evotree.verbs.autopilot import run_autopilot

    repo = root / f"loop-{loop}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@evotree-bench.invalid")
    start = gym_policy(EPSILON=args.epsilon)
    judge = gym_files(repo, ENVS, policy=start, validation=args.validation, heldout=args.heldout, train=1,
                      max_proposals=len(proposals), patience=args.patience, seed=loop, judge_seed=judge_seed)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gym workspace")
    signer = SecondSigner()
    try:
        evotree_init(repo, domain="gym", signers=[signer.signer_arg])
        signer.root = repo
        verbs = Session(repo)
        def progress(event: str, info: dict[str, Any]) -> None:
            if event in ("gate", "stop"):
                print(f"  loop {loop} [{info['proposals_done']}/{info['proposals']} proposals, {info['runs']} runs] "
                      f"{event} {info.get('version', '')} {info.get('verdict') or info.get('stopped') or ''}",
                      file=sys.stderr, flush=True)

        result = run_autopilot(verbs, proposals, patience=args.patience, max_runs=args.max_runs, jobs=args.jobs,
                               promote=signer, progress=progress)
        runs = sorted(verbs.runs(), key=lambda r: r.started_at)
        wall = [r.wall_seconds for r in runs]
        path = [start]
        kept_at = [0]
        used = 0
        for outcome in result.outcomes:
            used += outcome.runs
            if outcome.promoted and outcome.version:
                path.append(git(repo, "show", f"evotree/{outcome.version}:policy.py"))
                kept_at.append(used)
        return ({"path": path, "runs": result.runs, "kept_at_runs": kept_at, "stopped": result.stopped,
                 "proposals_tried": len(result.outcomes), "wall_seconds": wall,
                 "champion_runs": result.champion_runs}, judge, start)
    finally:
        signer.close()


def judge_path(rule: dict[str, Any], truth: Truth, neutral: float) -> dict[str, Any]:
    """The RSIBench-style row of one rule in one loop."""
    values = [truth.true(p) for p in rule["path"]]
    peak = max(range(len(values)), key=lambda i: values[i])
    effects = [b - a for a, b in zip(values, values[1:])]
    return {"final_true": values[-1], "start_true": values[0], "peak_true": values[peak],
            "below_peak": values[-1] < values[peak] - neutral, "promotions": len(effects),
            "neutral_promotions": sum(abs(e) <= neutral for e in effects),
            "harmful_promotions": sum(e < -neutral for e in effects), "runs": rule["runs"],
            "runs_after_peak": rule["runs"] - rule["kept_at_runs"][peak], "path_true": values}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loops", type=int, default=2)
    parser.add_argument("--first-loop", type=int, default=0, help="Seed of the first loop (loops are seeds).")
    parser.add_argument("--proposals", type=int, default=5, help="Proposals per loop.")
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=0.1, help="The policy's chance of a random action.")
    parser.add_argument("--validation", type=int, default=8, help="Validation episodes per environment.")
    parser.add_argument("--heldout", type=int, default=16, help="Held-out episodes per environment.")
    parser.add_argument("--truth-repeats", type=int, default=3, help="Plays of each held-out episode per truth.")
    parser.add_argument("--neutral", type=float, default=0.01, help="A true effect within ±this is neutral.")
    parser.add_argument("--max-runs", type=int, default=60, help="evotree's runs per loop at most.")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--json", default=None, help="Write the results here.")
    args = parser.parse_args()
    import importlib.util

    if importlib.util.find_spec("gymnasium") is None:
        print("bench_real_loop: the gym domain needs gymnasium (pip install 'evotree[gym]')", file=sys.stderr)
        return 1
    from evotree.demo import GYM_KNOBS
    from evotree.verbs.autopilot import Knob, knob_proposals

    knobs = {name: Knob(name, float(lo), float(hi), float(st), "policy.py")
             for env in ENVS for name, (lo, hi, st) in GYM_KNOBS[env].items()}
    started = time.monotonic()
    loops: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="evotree-bench-real-loop-") as folder:
        for loop in range(args.first_loop, args.first_loop + args.loops):
            proposals = knob_proposals(list(knobs.values()), count=args.proposals, seed=loop)
            t0 = time.monotonic()
            ev, judge, start = evotree_loop(loop, proposals, Path(folder), 1000 + loop, args)
            truth = Truth(judge, args.truth_repeats)
            tried = proposals[: ev["proposals_tried"]]  # greedy sees the same moves evotree tried
            k = max(1, math.ceil(ev["runs"] / max(1, len(tried))))
            rows = {"greedy-1": judge_path(greedy(start, tried, knobs, truth, 1), truth, args.neutral),
                    "greedy-k": {**judge_path(greedy(start, tried, knobs, truth, k), truth, args.neutral), "k": k},
                    "evotree": {**judge_path(ev, truth, args.neutral), "stopped": ev["stopped"],
                                "champion_runs": ev["champion_runs"], "wall_seconds": sum(ev["wall_seconds"])}}
            loops.append({"loop": loop, "proposals": [p.to_dict() for p in tried], "rules": rows,
                          "seconds": time.monotonic() - t0})
            for name, row in rows.items():
                print(f"loop {loop} {name:<9} final {row['final_true']:.4f} (start {row['start_true']:.4f}, peak "
                      f"{row['peak_true']:.4f}) below-peak {row['below_peak']} promotions {row['promotions']} "
                      f"(neutral {row['neutral_promotions']}, harmful {row['harmful_promotions']}) runs {row['runs']} "
                      f"after-peak {row['runs_after_peak']}", flush=True)
    summary: dict[str, Any] = {}
    for name in ("greedy-1", "greedy-k", "evotree"):
        rows = [loop["rules"][name] for loop in loops]
        promotions = sum(r["promotions"] for r in rows)
        summary[name] = {
            "loops": len(rows), "final_true_mean": statistics.fmean(r["final_true"] for r in rows),
            "gain_mean": statistics.fmean(r["final_true"] - r["start_true"] for r in rows),
            "below_peak_share": sum(r["below_peak"] for r in rows) / len(rows),
            "promotions": promotions, "neutral_promotions": sum(r["neutral_promotions"] for r in rows),
            "harmful_promotions": sum(r["harmful_promotions"] for r in rows),
            "runs": sum(r["runs"] for r in rows), "runs_after_peak": sum(r["runs_after_peak"] for r in rows)}
        s = summary[name]
        print(f"{name:<9} loops {s['loops']}  final true {s['final_true_mean']:.4f} (gain {s['gain_mean']:+.4f})  "
              f"below peak {100 * s['below_peak_share']:.0f} %  promotions {s['promotions']} (neutral "
              f"{s['neutral_promotions']}, harmful {s['harmful_promotions']})  runs {s['runs']} (after peak "
              f"{s['runs_after_peak']})")
    print(f"done in {time.monotonic() - started:.0f} s")
    benchlib.write_json(args.json, {"args": vars(args), "envs": ENVS, "loops": loops, "summary": summary,
                                    "environment": benchlib.environment(),
                                    "seconds": time.monotonic() - started})
    return 0


if __name__ == "__main__":
    sys.exit(main())
