"""The loop measured on real runs: greedy against evotree on the same proposals, three domains.

Per domain (bench/real_loop_domains.py: gym, math, autoresearch; the hidden judge fixed in
advance) and per loop (its seed L, fixed in advance): one sequence of knob moves drawn from L
(:func:`evotree.verbs.autopilot.knob_proposals`), judged by three rules, each from its own
champion, every run of every rule a real ``evotree run`` (sandboxed train and judge, the same
harness and judge):

- **evotree**: ``run_autopilot`` (the library call, through the verbs) on a fresh workspace: the
  score gate asks for seeds, a second signer made in a temp folder promotes what passes every gate;
- **greedy-1**: keep-if-better on one run each (the kept version's one run against the
  candidate's, both at seed 0: the same seed, as autoresearch's loop runs it);
- **greedy-k**: the same on the mean of k runs each (seeds 0..k-1), k = evotree's runs per
  proposal in that loop rounded up (capped by the domain's runs per version), so it spends
  about as many runs (in practice more: the start version costs k runs too);
- **greedy-eq** (``--add-greedy-equal``, on a raw output of the three): the same at exactly
  evotree's runs in that loop, its runs spread over its start version and the moves it can
  apply as evenly as whole runs allow (the earlier versions one run more), so no rule is
  ahead by spending.

Greedy's versions live in one greedy workspace per domain (each rule and loop its own start
version, a branch of v0 without changes, and its own candidates branched from its own kept
version); each rule's run count is the number of runs the ledger holds for its versions. Greedy
is given only the moves evotree tried before its stop rule ended the loop.

Truth: every champion re-judged on the held-out split, which no search run saw: gym in this
process (``--truth-repeats`` plays of every held-out episode), math and autoresearch by
``--truth-seeds`` real ``evotree run --heldout`` runs at seeds from 1000 in a workspace of their
own (mean and standard error). Per loop and rule: the final champion's true value, whether it
ended below its own earlier true peak (by more than the domain's neutral band), promotions whose
true effect is within the band (neutral) or below it (harmful), runs and runs after the peak.

    .venv/bin/python bench/bench_real_loop.py --domains gym,math,autoresearch --loops 2 \\
        --proposals 3 --json bench/results/real_loop.json
    # the summary record (bench/results/real_loop.json) from raw outputs (bench/results/raw/):
    .venv/bin/python bench/bench_real_loop.py --merge RAW1.json RAW2.json OUT.json
    # loop ranges of one domain run apart (--first-loop), as one raw output:
    .venv/bin/python bench/bench_real_loop.py --join RAW1.json RAW2.json OUT.json
    # greedy at exactly evotree's runs, added to a raw output's loops (same settings):
    .venv/bin/python bench/bench_real_loop.py --add-greedy-equal RAW.json OUT.json
"""

from __future__ import annotations

import benchlib  # noqa: F401  - first: isolates git's configuration

import argparse
import importlib.util
import itertools
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from real_loop_domains import (
    Domain,
    GymTruth,
    WorkspaceTruth,
    apply_text,
    autoresearch_domain,
    gym_domain,
    math_domain,
    run_seeds,
    share_cache,
)

from evotree.demo import SecondSigner
from evotree.verbs import Session
from evotree.verbs.autopilot import Proposal, knob_proposals, run_autopilot

RULES = ("greedy-1", "greedy-k", "greedy-eq", "evotree")
DOMAINS = ("gym", "math", "autoresearch")


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _value(records: list[Any]) -> float:
    """The mean headline (validation score) of a version's runs; -inf when none scored."""
    values = [
        float(r.headline["value"])
        for r in records
        if r.status == "succeeded"
        and r.headline
        and isinstance(r.headline.get("value"), (int, float))
    ]
    return statistics.fmean(values) if values else -math.inf


def greedy(
    session: Session, domain: Domain, proposals: list[Proposal], k: int | list[int], label: str
) -> dict[str, Any]:
    """Keep-if-better on the mean of ``k`` real runs (seeds 0..k-1) in the greedy workspace
    ``session``, from a start version equal to v0; the path of champions and the real runs.
    ``k`` may be a schedule: the start version's runs, then each applied move's, in order (one
    run each past its end; the runs recorded show it)."""
    schedule = (
        itertools.chain(k, itertools.repeat(1)) if isinstance(k, list) else itertools.repeat(k)
    )
    start = session.branch(f"{label}: start (v0 unchanged)", parent="v0")
    champion, text = start.id, domain.start
    records, runs = run_seeds(session, champion, seeds=next(schedule), seed_start=0)
    value, versions = _value(records), [champion]
    path, kept_at = [text], [0]
    for proposal in proposals:
        candidate = apply_text(text, domain.recipe, proposal, domain.knobs)
        if candidate is None:
            continue
        k = next(schedule)
        record = session.branch(f"{label}: {proposal.key} {proposal.summary}", parent=champion)
        worktree = session.open().absolute(record.worktree)
        (worktree / domain.recipe).write_text(candidate)
        session.commit(record.id, f"{label}: {proposal.summary}")
        versions.append(record.id)
        records, started = run_seeds(session, record.id, seeds=k, seed_start=0)
        runs += started
        score = _value(records)
        _say(f"  {label} {proposal.key} {proposal.summary}: {score:.4f} vs kept {value:.4f}")
        if score > value:
            champion, text, value = record.id, candidate, score
            path.append(candidate)
            kept_at.append(runs)
        else:
            session.abandon(record.id, reason=f"{label}: not better on {k} run(s)")
    ledger_runs = sum(len(session.runs(v)) for v in versions)  # the real count, from the ledger
    assert ledger_runs == runs, (ledger_runs, runs)
    failed = sum(r.status != "succeeded" for v in versions for r in session.runs(v))
    return {
        "path": path,
        "runs": ledger_runs,
        "kept_at_runs": kept_at,
        "versions": versions,
        "failed_runs": failed,
    }


def evotree_loop(
    domain: Domain,
    repo: Path,
    loop: int,
    proposals: list[Proposal],
    args: argparse.Namespace,
    cache_from: Path | None,
) -> dict[str, Any]:
    """One autopilot session on a fresh workspace; its path of champions and runs."""
    signer = SecondSigner()
    try:
        domain.workspace(
            repo,
            [signer.signer_arg],
            seed=loop,
            max_proposals=len(proposals),
            patience=args.patience,
        )
        if cache_from is not None:
            share_cache(cache_from, repo)
        signer.root = repo
        verbs = Session(repo)

        def progress(event: str, info: dict[str, Any]) -> None:
            if event in ("gate", "stop"):
                _say(
                    f"  {domain.name} loop {loop} [{info['proposals_done']}/{info['proposals']}"
                    f" proposals, {info['runs']} runs] {event} {info.get('version', '')} "
                    f"{info.get('verdict') or info.get('stopped') or ''}"
                )

        result = run_autopilot(
            verbs,
            proposals,
            patience=args.patience,
            max_runs=args.max_runs,
            jobs=args.jobs,
            max_rounds=args.max_rounds or None,
            promote=signer,
            progress=progress,
        )
        runs = verbs.runs()
        path, kept_at, used = [domain.start], [0], 0
        for outcome in result.outcomes:
            used += outcome.runs
            if outcome.promoted and outcome.version:
                spec = f"evotree/{outcome.version}:{domain.recipe}"
                path.append(benchlib.git(repo, "show", spec))
                kept_at.append(used)
        return {
            "path": path,
            "runs": len(runs),
            "autopilot_runs": result.runs,
            "kept_at_runs": kept_at,
            "stopped": result.stopped,
            "proposals_tried": len(result.outcomes),
            "champion_runs": result.champion_runs,
            # gate evaluations per proposal at most: "gate" follows the gate's whole look schedule
            # (records without this key were made with the earlier autopilot's 8)
            "max_rounds": args.max_rounds or "gate",
            "wall_seconds": sum(r.wall_seconds for r in runs),
            "failed_runs": sum(r.status != "succeeded" for r in runs),
            "outcomes": [
                {
                    "key": o.proposal.key,
                    "summary": o.proposal.summary,
                    "status": o.status,
                    "verdict": o.verdict,
                    "delta": o.delta,
                    "runs": o.runs,
                    "promoted": o.promoted,
                }
                for o in result.outcomes
            ],
        }
    finally:
        signer.close()


def judge_path(rule: dict[str, Any], truth: Any, neutral: float) -> dict[str, Any]:
    """The RSIBench-style row of one rule in one loop."""
    judged = [truth.true(p) for p in rule["path"]]
    values = [v for v, _ in judged]
    peak = max(range(len(values)), key=lambda i: values[i])
    effects = [b - a for a, b in itertools.pairwise(values)]
    return {
        "final_true": values[-1],
        "start_true": values[0],
        "peak_true": values[peak],
        "below_peak": values[-1] < values[peak] - neutral,
        "promotions": len(effects),
        "neutral_promotions": sum(abs(e) <= neutral for e in effects),
        "harmful_promotions": sum(e < -neutral for e in effects),
        "runs": rule["runs"],
        "runs_after_peak": rule["runs"] - rule["kept_at_runs"][peak],
        "path_true": values,
        "path_true_se": [se for _, se in judged],
    }


def make_domain(name: str, args: argparse.Namespace) -> Domain:
    if name == "gym":
        return gym_domain(
            epsilon=args.epsilon,
            validation=args.validation,
            heldout=args.heldout,
            judge_seed=args.judge_seed,
            neutral=args.neutral,
            max_runs_per_version=args.max_runs_per_version,
        )
    if name == "math":
        return math_domain(steps=args.math_steps, neutral=args.neutral)
    if name == "autoresearch":
        return autoresearch_domain(budget=args.ar_budget, neutral=args.neutral)
    raise SystemExit(f"bench_real_loop: unknown domain {name!r} (one of {', '.join(DOMAINS)})")


def run_domain(
    name: str,
    args: argparse.Namespace,
    folder: Path,
    done: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Every loop of one domain: the three rules' rows, per loop, and the truth's cost;
    ``done`` is given the domain's result so far after every loop (a partial result survives
    a run stopped early)."""
    domain = make_domain(name, args)
    started = time.monotonic()

    def result() -> dict[str, Any]:
        return {
            "domain": name,
            "settings": {
                **domain.info,
                "knobs": domain.knob_ranges,
                "neutral": domain.neutral,
                "recipe": domain.recipe,
            },
            "loops": loops,
            "summary": summarize(loops),
            "truth_runs": getattr(truth, "runs", 0),
            "seconds": time.monotonic() - started,
        }

    knobs = list(domain.knobs.values())
    first = folder / f"{name}-loop-{args.first_loop}"
    loops: list[dict[str, Any]] = []
    greedy_session = truth = None
    for loop in range(args.first_loop, args.first_loop + args.loops):
        proposals = knob_proposals(knobs, count=args.proposals, seed=loop)
        t0 = time.monotonic()
        repo = folder / f"{name}-loop-{loop}"
        seed_cache = first if loop != args.first_loop else args.cache_from
        ev = evotree_loop(domain, repo, loop, proposals, args, seed_cache)
        t_ev = time.monotonic() - t0
        if greedy_session is None:  # one greedy workspace per domain, its warm cache shared
            judge = domain.workspace(folder / f"{name}-greedy", [])
            share_cache(first, folder / f"{name}-greedy")
            greedy_session = Session(folder / f"{name}-greedy")
            if name == "gym":
                truth = GymTruth(judge, args.truth_repeats)
            else:
                truth = WorkspaceTruth(
                    domain,
                    folder / f"{name}-truth",
                    seeds=args.truth_seeds,
                    jobs=args.jobs,
                    share_from=first,
                )
        tried = proposals[: ev["proposals_tried"]]  # greedy sees the moves evotree tried
        k = max(1, math.ceil(ev["runs"] / max(1, len(tried))))
        k = min(k, domain.max_runs_per_version, args.max_k or k)
        t1 = time.monotonic()
        g1 = greedy(greedy_session, domain, tried, 1, f"loop {loop} greedy-1")
        gk = greedy(greedy_session, domain, tried, k, f"loop {loop} greedy-k")
        t_greedy = time.monotonic() - t1
        t2 = time.monotonic()
        rows = {
            "greedy-1": {**judge_path(g1, truth, domain.neutral), "failed_runs": g1["failed_runs"]},
            "greedy-k": {
                **judge_path(gk, truth, domain.neutral),
                "k": k,
                "failed_runs": gk["failed_runs"],
            },
            "evotree": {
                **judge_path(ev, truth, domain.neutral),
                "stopped": ev["stopped"],
                "champion_runs": ev["champion_runs"],
                "autopilot_runs": ev["autopilot_runs"],
                "max_rounds": ev["max_rounds"],
                "wall_seconds": ev["wall_seconds"],
                "outcomes": ev["outcomes"],
                "failed_runs": ev["failed_runs"],
            },
        }
        loops.append(
            {
                "loop": loop,
                "proposals": [p.to_dict() for p in tried],
                "rules": rows,
                "seconds": {"evotree": t_ev, "greedy": t_greedy, "truth": time.monotonic() - t2},
                "loadavg_after": os.getloadavg(),
            }
        )
        for rule, row in rows.items():
            print(
                f"{name} loop {loop} {rule:<9} final {row['final_true']:.4f} (start "
                f"{row['start_true']:.4f}, peak {row['peak_true']:.4f}) below-peak "
                f"{row['below_peak']} promotions {row['promotions']} (neutral "
                f"{row['neutral_promotions']}, harmful {row['harmful_promotions']}) runs "
                f"{row['runs']} after-peak {row['runs_after_peak']}",
                flush=True,
            )
        if done is not None:
            done(result())
    return result()


def summarize(loops: list[dict[str, Any]]) -> dict[str, Any]:
    """Per rule over ``loops``: means, shares and totals."""
    summary: dict[str, Any] = {}
    for name in RULES:
        rows = [loop["rules"][name] for loop in loops if name in loop["rules"]]
        if not rows or len(rows) != len(loops):
            continue
        summary[name] = {
            "loops": len(rows),
            "final_true_mean": statistics.fmean(r["final_true"] for r in rows),
            "gain_mean": statistics.fmean(r["final_true"] - r["start_true"] for r in rows),
            "loops_below_peak": sum(r["below_peak"] for r in rows),
            "promotions": sum(r["promotions"] for r in rows),
            "neutral_promotions": sum(r["neutral_promotions"] for r in rows),
            "harmful_promotions": sum(r["harmful_promotions"] for r in rows),
            "runs": sum(r["runs"] for r in rows),
            "runs_after_peak": sum(r["runs_after_peak"] for r in rows),
        }
        if name != "evotree" and "evotree" in loops[0]["rules"] and len(rows) > 1:
            # paired per loop (the same proposals): evotree's final truth minus this rule's
            diffs = [
                loop["rules"][name].get(
                    "evotree_path_true_same_truth", [loop["rules"]["evotree"]["final_true"]]
                )[-1]
                - loop["rules"][name]["final_true"]
                for loop in loops
            ]
            summary[name]["evotree_minus_mean"] = statistics.fmean(diffs)
            summary[name]["evotree_minus_se"] = statistics.stdev(diffs) / math.sqrt(len(diffs))
    return summary


def equal_schedule(runs: int, evaluations: int, cap: int) -> list[int]:
    """``runs`` spread over ``evaluations`` versions as evenly as whole runs allow, the earlier
    versions one more; each at least one run and at most ``cap`` (so the total may fall short
    of ``runs`` only where the cap binds)."""
    base, extra = divmod(runs, evaluations)
    return [max(1, min(cap, base + (i < extra))) for i in range(evaluations)]


def evotree_path(domain: Domain, tried: list[Proposal], row: dict[str, Any]) -> list[str] | None:
    """evotree's path of champions in one loop, rebuilt from its recorded outcomes (the moves it
    promoted, applied in order to the start); None when the rebuilt path does not match the
    recorded one (its length, or a promoted move that changes nothing)."""
    by_key = {p.key: p for p in tried}
    path = [domain.start]
    for outcome in row["outcomes"]:
        if outcome["promoted"]:
            text = apply_text(path[-1], domain.recipe, by_key[outcome["key"]], domain.knobs)
            if text is None:
                return None
            path.append(text)
    return path if len(path) == len(row["path_true"]) else None


#: the raw record's settings keys and the arguments that set them
SETTING_ARGS = {
    "epsilon": "epsilon",
    "validation_episodes": "validation",
    "heldout_episodes": "heldout",
    "judge_seed": "judge_seed",
    "neutral": "neutral",
    "steps": "math_steps",
    "max_runs_per_version": "max_runs_per_version",
}


def domain_as_recorded(name: str, settings: dict[str, Any], args: argparse.Namespace) -> Domain:
    """The domain ``name`` made with the recorded ``settings``; refuses (SystemExit) settings
    this script would not make again (the greedy runs would not be the same experiment)."""
    import json

    for key, value in settings.items():
        if key in SETTING_ARGS:
            setattr(args, SETTING_ARGS[key], value)
    domain = make_domain(name, args)
    now = {**domain.info, "knobs": domain.knob_ranges, "neutral": domain.neutral}
    if json.loads(json.dumps({**now, "recipe": domain.recipe})) != settings:
        raise SystemExit(f"bench_real_loop --add-greedy-equal: {name}'s settings differ")
    return domain


def greedy_equal_loop(
    session: Session, domain: Domain, truth: Any, loop: dict[str, Any], proposals: int
) -> dict[str, Any]:
    """The ``greedy-eq`` row of one recorded loop: the moves evotree tried (drawn again from the
    loop's seed, checked against the record), greedy on real runs at exactly evotree's runs,
    and evotree's path judged again by the same ``truth`` (the gym truth is an estimate whose
    noise draws from the system: the pair shares one truth process)."""
    seed = loop["loop"]
    drawn = knob_proposals(list(domain.knobs.values()), count=proposals, seed=seed)
    tried = drawn[: len(loop["proposals"])]

    def move(p: dict[str, Any]) -> tuple[Any, ...]:  # the move, not where it was applied
        return p["key"], p["summary"], p["data"].get("knob"), p["data"].get("steps")

    if [move(p.to_dict()) for p in tried] != [move(p) for p in loop["proposals"]]:
        raise SystemExit(f"bench_real_loop --add-greedy-equal: loop {seed}'s moves differ")
    ev_path = evotree_path(domain, tried, loop["rules"]["evotree"])
    if ev_path is None:
        raise SystemExit(f"bench_real_loop --add-greedy-equal: loop {seed}'s path differs")
    # versions greedy runs: its start and every move that changes the start's text (a move
    # that cannot apply costs no run; greedy applies moves to its kept text, which the runs
    # recorded below show if that ever differs)
    versions = 1 + sum(
        apply_text(domain.start, domain.recipe, p, domain.knobs) is not None for p in tried
    )
    budget = loop["rules"]["evotree"]["runs"]
    ks = equal_schedule(budget, versions, domain.max_runs_per_version)
    ge = greedy(session, domain, tried, ks, f"loop {seed} greedy-eq")
    row = {**judge_path(ge, truth, domain.neutral), "k": ks, "failed_runs": ge["failed_runs"]}
    row["evotree_path_true_same_truth"] = [truth.true(text)[0] for text in ev_path]
    return row


def add_greedy_equal(path: str, out: str, args: argparse.Namespace) -> int:
    """Add the ``greedy-eq`` rule (:func:`greedy_equal_loop`) to every loop of the raw output
    ``path`` and write ``out``, the summaries computed again. Refuses a record whose settings,
    moves or evotree paths this script would not make again."""
    import json

    raw = json.loads(Path(path).read_text())
    started, stamp = time.monotonic(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="evotree-bench-real-loop-eq-") as folder:
        for part in raw["domains"]:
            name = part["domain"]
            domain = domain_as_recorded(name, part["settings"], args)
            judge = domain.workspace(Path(folder) / f"{name}-greedy", [])
            session = Session(Path(folder) / f"{name}-greedy")
            if name == "gym":
                truth: Any = GymTruth(judge, args.truth_repeats)
            else:
                truth = WorkspaceTruth(
                    domain, Path(folder) / f"{name}-truth", seeds=args.truth_seeds, jobs=args.jobs
                )
            for loop in part["loops"]:
                t0 = time.monotonic()
                row = greedy_equal_loop(session, domain, truth, loop, args.proposals)
                loop["rules"]["greedy-eq"] = row
                loop["seconds"]["greedy-eq"] = time.monotonic() - t0
                _say(
                    f"{name} loop {loop['loop']} greedy-eq final {row['final_true']:.4f} "
                    f"(evotree {row['evotree_path_true_same_truth'][-1]:.4f}, same truth) runs "
                    f"{row['runs']} of {loop['rules']['evotree']['runs']}, k {row['k']}"
                )
            part["summary"] = summarize(part["loops"])
    raw["command"] += (
        f" && .venv/bin/python bench/bench_real_loop.py --add-greedy-equal {path} {out}"
    )
    raw["date"] += f" / greedy-eq {stamp} - {time.strftime('%H:%M UTC', time.gmtime())}"
    raw["seconds"] = (raw.get("seconds") or 0.0) + time.monotonic() - started
    raw["greedy_eq_from"] = path
    raw["greedy_eq_commit"] = os.environ.get("BENCH_EVOTREE_COMMIT") or (
        benchlib.environment().get("evotree_commit", "unknown")
    )
    benchlib.write_json(out, raw)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--domains",
        default="gym,math,autoresearch",
        help="Comma-separated: gym, math, autoresearch.",
    )
    p.add_argument("--loops", type=int, default=2)
    p.add_argument("--first-loop", type=int, default=0, help="Seed of the first loop.")
    p.add_argument("--proposals", type=int, default=3, help="Proposals per loop.")
    p.add_argument("--patience", type=int, default=3)
    p.add_argument("--max-runs", type=int, default=60, help="evotree's runs per loop at most.")
    p.add_argument(
        "--max-runs-per-version",
        type=int,
        default=20,
        help="gym: the workspace's [budget] cap of runs one version may take (the template's "
        "20; a lever study raises it, recorded in the settings).",
    )
    p.add_argument(
        "--max-rounds",
        type=int,
        default=0,
        help="The autopilot's gate evaluations per proposal at most (0: the gate's whole look "
        "schedule; 8 replays the autopilot before 2026-12-06, which cut the gate's last look "
        "whenever a champion re-run took a round).",
    )
    p.add_argument(
        "--max-k",
        type=int,
        default=0,
        help="Cap greedy-k's k (0: evotree's runs per proposal, up to the runs per version).",
    )
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument(
        "--neutral",
        type=float,
        default=0.01,
        help="A true effect within ±this is neutral (score units of each domain).",
    )
    p.add_argument("--epsilon", type=float, default=0.1, help="gym: chance of a random action.")
    p.add_argument("--validation", type=int, default=8, help="gym: validation episodes per env.")
    p.add_argument("--heldout", type=int, default=16, help="gym: held-out episodes per env.")
    p.add_argument("--judge-seed", type=int, default=1000, help="gym: seed of the hidden pools.")
    p.add_argument(
        "--truth-repeats",
        type=int,
        default=3,
        help="gym: plays of each held-out episode per truth.",
    )
    p.add_argument("--math-steps", type=int, default=20, help="math: GRPO steps per run.")
    p.add_argument(
        "--ar-budget",
        type=float,
        default=2.0,
        help="autoresearch: CPU seconds of training per run.",
    )
    p.add_argument(
        "--truth-seeds",
        type=int,
        default=4,
        help="math, autoresearch: held-out runs per champion's truth.",
    )
    p.add_argument(
        "--cache-from",
        type=Path,
        default=None,
        help="A workspace whose .evotree/cache (the math warm-up) seeds the first loop's.",
    )
    p.add_argument("--json", default=None, help="Write the results here.")
    return p


TARGET = "real loops: ≤ 2 % below peak, ≤ 2.5 % neutral promotions, ≥ greedy-k at equal runs"
PAGE = "docs/benchmarks/real-loop.md"


def figure(domain: dict[str, Any]) -> str:
    """The screen's cell for one domain: loops, and per rule the mean final truth, loops below
    peak, neutral and harmful promotions and runs (the detail is on the page)."""
    s = domain["summary"]
    for names in (
        {
            "evotree": "evotree",
            "greedy-k": "greedy-k",
            "greedy-eq": "greedy-eq",
            "greedy-1": "greedy-1",
        },
        {"evotree": "ev", "greedy-k": "gk", "greedy-eq": "g=", "greedy-1": "g1"},
    ):
        cells = [
            f"{names[rule]} {s[rule]['final_true_mean']:.3f} {s[rule]['loops_below_peak']}b "
            f"{s[rule]['neutral_promotions']}n{s[rule]['harmful_promotions']}h "
            f"{s[rule]['runs']}r"
            for rule in names
            if rule in s
        ]
        text = f"{domain['domain']} ×{len(domain['loops'])}: " + "; ".join(cells)
        if len(text) <= 110:
            break
    return text


def merge(paths: list[str], out: str) -> int:
    """Write the summary record ``out`` (``bench/results/real_loop.json``: the keys
    bench/make_benchmarks.py reads, one target per domain) from the raw outputs ``paths``."""
    import json

    parts = [json.loads(Path(p).read_text()) for p in paths]
    for part in parts:  # a raw output written before these keys: from its args and environment
        args, env = part.get("args", {}), part.get("environment") or {}
        part.setdefault(
            "command",
            ".venv/bin/python bench/bench_real_loop.py "
            + " ".join(
                f"--{k.replace('_', '-')} {v}" for k, v in args.items() if v not in (None, "", 0)
            ),
        )
        part.setdefault("date", env.get("time", ""))
        part.setdefault("commit", env.get("evotree_commit", ""))
    domains = [d for part in parts for d in part["domains"]]
    payload = {
        "benchmark": "The loop on real runs: greedy against evotree, three domains",
        "script": "bench/bench_real_loop.py",
        "command": " && ".join(part["command"] for part in parts),
        "date": " / ".join(sorted({part["date"][:10] for part in parts})),
        "dates": [part["date"] for part in parts],
        # every full hash shortened: a joined part's commits ("3b04a59 / 39f6510") stay whole
        "commit": " / ".join(
            re.sub(r"\b([0-9a-f]{7})[0-9a-f]{33}\b", r"\1", part["commit"]) for part in parts
        ),
        "page": PAGE,
        "target": TARGET,
        "figure": "; ".join(figure(d) for d in domains),
        "verdict": "measured",
        "targets": [
            {"target": f"{d['domain']}: {TARGET}"[:110], "figure": figure(d), "verdict": "measured"}
            for d in domains
        ],
        "note": "b: loops ending below their peak, n/h: neutral/harmful promotions, "
        "r: runs; a few loops per domain say nothing about rates near 2 %",
        "raw": list(paths),
        "domains": domains,
        "loadavg": [
            {"start": part.get("loadavg_start"), "end": part.get("loadavg_end")} for part in parts
        ],
        "seconds": [part.get("seconds") for part in parts],
    }
    benchlib.write_json(out, payload)
    return 0


def join(paths: list[str], out: str) -> int:
    """Write one raw output ``out`` from raw outputs of the same domains run over different
    loop seeds (``--first-loop``) with the same settings: the loops in seed order, each
    domain's summary computed again over all of them. Refuses settings that differ or a loop
    seed that appears twice (the parts would not be one experiment)."""
    import json

    parts = [json.loads(Path(p).read_text()) for p in paths]
    joined: dict[str, dict[str, Any]] = {}
    for part in parts:
        for domain in part["domains"]:
            name = domain["domain"]
            if name not in joined:
                joined[name] = {**domain, "loops": [], "seconds": 0.0, "truth_runs": 0}
            elif joined[name]["settings"] != domain["settings"]:
                _say(f"bench_real_loop --join: {name}'s settings differ between the parts")
                return 1
            joined[name]["loops"] += domain["loops"]
            joined[name]["seconds"] += domain.get("seconds") or 0.0
            joined[name]["truth_runs"] += domain.get("truth_runs") or 0
    for domain in joined.values():
        seeds = [loop["loop"] for loop in domain["loops"]]
        if len(set(seeds)) != len(seeds):
            _say(f"bench_real_loop --join: {domain['domain']} has loop seeds twice: {seeds}")
            return 1
        domain["loops"].sort(key=lambda loop: loop["loop"])
        domain["summary"] = summarize(domain["loops"])
    benchlib.write_json(
        out,
        {
            "script": "bench/bench_real_loop.py",
            "command": " && ".join(part["command"] for part in parts),
            "date": " / ".join(part["date"] for part in parts),
            # each commit of each part (a part joined before names several), shortened
            "commit": " / ".join(
                sorted({c.strip()[:7] for part in parts for c in part["commit"].split(" / ")})
            ),
            "parts": list(paths),
            "domains": list(joined.values()),
            "environment": parts[0].get("environment"),
            "loadavg_start": parts[0].get("loadavg_start"),
            "loadavg_end": parts[-1].get("loadavg_end"),
            "seconds": sum(part.get("seconds") or 0.0 for part in parts),
        },
    )
    return 0


def tables(domains: list[dict[str, Any]]) -> str:
    """Markdown tables of the loops and the totals, per domain (for the benchmark's page)."""
    out = []
    for d in domains:
        out += [
            f"**{d['domain']}**",
            "",
            "| loop | rule | final true | start | peak | below peak | promotions (neutral, "
            "harmful) | runs | runs after peak |",
            "|---|---|---:|---:|---:|---|---|---:|---:|",
        ]
        for loop in d["loops"]:
            for rule in RULES:
                if rule not in loop["rules"]:
                    continue
                r = loop["rules"][rule]
                name = f"{rule} (k = {r['k']})" if "k" in r else rule
                if rule == "evotree":
                    name += f" ({r['stopped']})"
                out.append(
                    f"| {loop['loop']} ({len(loop['proposals'])} moves) | {name} | "
                    f"{r['final_true']:.4f} | {r['start_true']:.4f} | "
                    f"{r['peak_true']:.4f} | {'**yes**' if r['below_peak'] else 'no'} | "
                    f"{r['promotions']} ({r['neutral_promotions']}, "
                    f"{r['harmful_promotions']}) | {r['runs']} | {r['runs_after_peak']} |"
                )
        out += [
            "",
            "| rule | mean final true (gain) | loops below peak | promotions (neutral, "
            "harmful) | runs (after peak) |",
            "|---|---:|---:|---|---:|",
        ]
        for rule, s in d["summary"].items():
            out.append(
                f"| {rule} | {s['final_true_mean']:.4f} ({s['gain_mean']:+.4f}) | "
                f"{s['loops_below_peak']} of {s['loops']} | {s['promotions']} "
                f"({s['neutral_promotions']}, {s['harmful_promotions']}) | {s['runs']} "
                f"({s['runs_after_peak']}) |"
            )
        out.append("")
        paired = [(r, s) for r, s in d["summary"].items() if "evotree_minus_mean" in s]
        if paired:
            out += ["| paired per loop | evotree − rule (± SE) |", "|---|---:|"]
            out += [
                f"| evotree − {r} | {s['evotree_minus_mean']:+.4f} ± {s['evotree_minus_se']:.4f} |"
                for r, s in paired
            ]
            out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--merge"]:
        return merge(argv[1:-1], argv[-1])
    if argv[:1] == ["--join"]:  # loop ranges of the same domains run apart, as one raw output
        return join(argv[1:-1], argv[-1])
    if argv[:1] == ["--add-greedy-equal"]:  # greedy at exactly evotree's runs, loop by loop
        if len(argv) < 3:
            _say("usage: bench_real_loop.py --add-greedy-equal RAW.json OUT.json [options]")
            return 2
        return add_greedy_equal(argv[1], argv[2], parser().parse_args(argv[3:]))
    if argv[:1] == ["--tables"]:  # the page's tables from raw outputs
        import json

        print(tables([d for p in argv[1:] for d in json.loads(Path(p).read_text())["domains"]]))
        return 0
    args = parser().parse_args(argv)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    names = [n.strip() for n in args.domains.split(",") if n.strip()]
    need = {"gym": "gymnasium", "math": "trl"}
    for name in names:
        if name in need and importlib.util.find_spec(need[name]) is None:
            _say(f"bench_real_loop: the {name} domain needs {need[name]}")
            return 1
    started = time.monotonic()
    load_start = os.getloadavg()
    results: list[dict[str, Any]] = []
    env = benchlib.environment()

    def write(partial: list[dict[str, Any]]) -> None:
        benchlib.write_json(
            args.json,
            {
                "script": "bench/bench_real_loop.py",
                "command": ".venv/bin/python bench/bench_real_loop.py " + " ".join(argv),
                "date": f"{stamp} - {time.strftime('%H:%M UTC', time.gmtime())}",
                # a run against a snapshot of the tree (another interpreter's evotree) names its commit
                "commit": os.environ.get("BENCH_EVOTREE_COMMIT")
                or env.get("evotree_commit", "unknown"),
                "evotree_from": str(Path(sys.modules["evotree"].__file__ or "").parent.parent),
                "args": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
                "domains": partial,
                "environment": env,
                "loadavg_start": load_start,
                "loadavg_end": os.getloadavg(),
                "seconds": time.monotonic() - started,
            },
        )

    with tempfile.TemporaryDirectory(prefix="evotree-bench-real-loop-") as folder:
        for name in names:
            results.append(
                run_domain(name, args, Path(folder), lambda part: write([*results, part]))
            )
            for rule, s in results[-1]["summary"].items():
                print(
                    f"{name} {rule:<9} loops {s['loops']}  final true {s['final_true_mean']:.4f}"
                    f" (gain {s['gain_mean']:+.4f})  below peak {s['loops_below_peak']}  "
                    f"promotions {s['promotions']} (neutral {s['neutral_promotions']}, harmful "
                    f"{s['harmful_promotions']})  runs {s['runs']} (after peak "
                    f"{s['runs_after_peak']})",
                    flush=True,
                )
    print(f"done in {time.monotonic() - started:.0f} s")
    write(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
