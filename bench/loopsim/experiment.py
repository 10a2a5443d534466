"""Runs rules side by side on the same loops and turns the records into the metrics."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .engine import LoopRecord, run_loop
from .rules import Ceiling, GreedyK
from .world import LoopWorld, WorldConfig

#: loop indices of the extra clean-first-comparison sample start here (never meet the main ones)
FIRST_OFFSET = 10_000_000
CEILING = "ceiling"


@dataclass(frozen=True)
class Setup:
    """The size of an experiment and its budgets."""

    loops: int = 500
    proposals: int = 30
    seeds: tuple[int, ...] = (0,)
    proposal_cap: int = 40
    loop_budget: int = 0  # 0: 20 runs per proposal
    first_loops: int = 2000  # extra loops that judge one forced-neutral proposal
    tolerance: float = 0.005  # "below its peak" means more than this below
    bootstrap: int = 1000

    @property
    def budget(self) -> int:
        return self.loop_budget or 20 * self.proposals


RuleFactory = Callable[[], Any]


def run_rules(
    factories: dict[str, RuleFactory], world: WorldConfig, setup: Setup
) -> dict[str, dict[str, list]]:
    """Every rule on every loop of every seed (same worlds, loop by loop); the ceiling is
    always added. Returns, per rule, its loop records and its clean first comparisons."""
    factories = {CEILING: Ceiling, **factories}
    out: dict[str, dict[str, list]] = {name: {"loops": [], "first": []} for name in factories}
    for seed in setup.seeds:
        cfg = WorldConfig(**{**world.__dict__, "seed": seed})
        rules = {name: make() for name, make in factories.items()}
        for loop in range(setup.loops):
            lw = LoopWorld(cfg, loop, setup.proposals)
            for name, rule in rules.items():
                out[name]["loops"].append(run_loop(rule, lw, setup.proposal_cap, setup.budget))
        first_cfg = WorldConfig(**{**cfg.__dict__, "force_first_neutral": True})
        for i in range(setup.first_loops):
            lw = LoopWorld(first_cfg, FIRST_OFFSET + i, setup.proposals)
            for name, rule in rules.items():
                if name == CEILING:
                    continue
                rec = run_loop(rule, lw, setup.proposal_cap, setup.budget, first_only=True)
                out[name]["first"].append(rec.proposals[0] if rec.proposals else None)
    return out


# ---------------------------------------------------------------------------- statistics
def wilson(k: int, n: int, z: float = 1.96) -> dict[str, float | int | None]:
    """A rate with its Wilson 95 % interval."""
    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "lo": None, "hi": None}
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return {"k": int(k), "n": int(n), "rate": p, "lo": max(0.0, c - h), "hi": min(1.0, c + h)}


def _boot(
    values: np.ndarray, base: np.ndarray | None, reps: int, seed: int
) -> tuple[float, float, float]:
    """Mean of ``values`` (or ratio of means to ``base``), with a loop-bootstrap 95 % CI."""
    rng = np.random.default_rng(seed)
    n = len(values)
    idx = rng.integers(0, n, size=(reps, n))
    if base is None:
        point, stats = values.mean(), values[idx].mean(axis=1)
    else:
        if base.mean() <= 0:
            return math.nan, math.nan, math.nan
        point = values.mean() / base.mean()
        sums = base[idx].mean(axis=1)
        keep = sums > 0  # a resample whose ceiling gained nothing has no ratio
        stats = values[idx][keep].mean(axis=1) / sums[keep]
    lo, hi = np.percentile(stats, [2.5, 97.5])
    return float(point), float(lo), float(hi)


def summarize(
    records: list[LoopRecord], ceiling: list[LoopRecord], first: list, band: float, setup: Setup
) -> dict[str, Any]:
    """The metrics of one rule at one noise level (records paired loop by loop with the
    ceiling's)."""
    props = [p for r in records for p in r.proposals]
    neutral = [p for p in props if abs(p.true_effect) <= band]
    harmful = [p for p in props if p.true_effect < -band]
    better = [p for p in props if p.true_effect > band]
    firsts = [
        r.proposals[0] for r in records if r.proposals and abs(r.proposals[0].true_effect) <= band
    ]
    clean = [p for p in first if p is not None]
    gains = np.array([r.final - r.v0 for r in records])
    ceil = np.array([r.final - r.v0 for r in ceiling])
    runs = np.array([r.runs for r in records], dtype=float)
    champ_runs = sum(r.champion_runs for r in records)
    below = sum(r.final < r.peak - setup.tolerance for r in records)
    deadlocks = sum(p.decision == "deadlock" for p in props)
    gain = _boot(gains, None, setup.bootstrap, 1)
    share = _boot(gains, ceil, setup.bootstrap, 2)
    mean_runs = float(runs.mean())
    per100 = [s / (mean_runs / 100) if mean_runs > 0 else None for s in share]
    return {
        "loops": len(records),
        "proposals_judged": len(props),
        "neutral_promoted_tree": wilson(
            sum(p.decision == "promote" for p in neutral), len(neutral)
        ),
        "neutral_promoted_first": wilson(sum(p.decision == "promote" for p in firsts), len(firsts)),
        "neutral_promoted_first_clean": wilson(
            sum(p.decision == "promote" for p in clean), len(clean)
        ),
        "harmful_promoted": wilson(sum(p.decision == "promote" for p in harmful), len(harmful)),
        "gains_promoted": wilson(sum(p.decision == "promote" for p in better), len(better)),
        "below_peak": wilson(int(below), len(records)),
        "deadlocks": wilson(int(deadlocks), len(props)),
        "loops_with_deadlock": int(
            sum(any(p.decision == "deadlock" for p in r.proposals) for r in records)
        ),
        "final_gain": {"mean": gain[0], "lo": gain[1], "hi": gain[2]},
        "ceiling_share": {"mean": share[0], "lo": share[1], "hi": share[2]},
        "runs_per_loop": mean_runs,
        "champion_run_share": champ_runs / runs.sum() if runs.sum() else None,
        "ceiling_share_per_100_runs": {"mean": per100[0], "lo": per100[1], "hi": per100[2]},
        "stopped_early": wilson(sum(r.stopped_early for r in records), len(records)),
        "budget_exhausted": wilson(sum(r.budget_exhausted for r in records), len(records)),
    }


def matched_k(runs_per_loop: float, proposals: int) -> int:
    """The k at which greedy-k spends about ``runs_per_loop`` (k runs per proposal plus k for
    the initial champion)."""
    return max(1, int(round(runs_per_loop / (proposals + 1))))


def evaluate(
    factories: dict[str, RuleFactory],
    world: WorldConfig,
    setup: Setup,
    noises: Sequence[float],
    match: Sequence[str] = (),
) -> dict[str, Any]:
    """Metrics of every rule at every noise level; for each rule named in ``match``, greedy-k
    at its number of runs is run too (on the same loops) and reported beside it."""
    results: dict[str, Any] = {}
    for noise in noises:
        started = time.perf_counter()
        cfg = world.with_noise(noise)
        raw = run_rules(factories, cfg, setup)
        matched: dict[str, str] = {}
        extra: dict[str, RuleFactory] = {}
        for name in match:
            runs = float(np.mean([r.runs for r in raw[name]["loops"]]))
            k = matched_k(runs, setup.proposals)
            label = f"greedy-{k}"
            matched[name] = label
            if label not in raw and label not in extra:
                extra[label] = lambda k=k: GreedyK(k)
        if extra:
            more = run_rules(extra, cfg, setup)
            raw.update({n: v for n, v in more.items() if n != CEILING})
        ceiling = raw[CEILING]["loops"]
        rows = {
            name: summarize(v["loops"], ceiling, v["first"], cfg.neutral_band, setup)
            for name, v in raw.items()
        }
        results[f"{noise:g}x"] = {
            "rules": rows,
            "matched_greedy": matched,
            "seconds": round(time.perf_counter() - started, 1),
        }
    return results


def world_stats(
    world: WorldConfig, noises: Sequence[float], loops: int = 200, runs: int = 8
) -> dict[str, Any]:
    """Measured properties of the world: run-to-run SD of one recipe's score (collapses left
    out: they are a separate, rare, heavy tail), the SD of the pool's bias on a change (pool
    difference minus true difference, no seed noise), and the effect mix as drawn."""
    out: dict[str, Any] = {}
    for noise in noises:
        cfg = WorldConfig(**{**world.with_noise(noise).__dict__, "collapse_prob": 0.0})
        sds = []
        for loop in range(loops):
            lw = LoopWorld(cfg, FIRST_OFFSET * 2 + loop, 1)
            scores = [lw.run(lw.root, k)[0] for k in range(runs)]
            sds.append(float(np.var(scores, ddof=1)))
        out[f"run_sd_{noise:g}x"] = math.sqrt(float(np.mean(sds)))
    bias, components = [], []
    for loop in range(loops):
        lw = LoopWorld(world, FIRST_OFFSET * 2 + loop, 10)
        for j in range(10):
            child = lw.child(lw.root, j)
            bias.append(
                lw.pool_value(child) - lw.pool_value(lw.root) - (child.value - lw.root.value)
            )
            components.append(lw.proposal(j).component)
    out["pool_bias_sd_of_a_change"] = float(np.std(bias))
    out["effect_mix_drawn"] = {
        c: components.count(c) / len(components) for c in sorted(set(components))
    }
    return out
