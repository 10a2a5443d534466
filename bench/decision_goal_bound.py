"""An upper bound on the ceiling share any promotion rule can reach at a given number of runs
while promoting at most a given share of neutral changes, on the project's simulator
(docs/benchmarks/decision-goal.md, "The promotion rule itself").

    .venv/bin/python bench/decision_goal_bound.py [--neutral 0.025] [--champion-runs 0,8,16]
        [--lams 0.00001,...] [--fixed] [--seeds 0,1] [--json PATH]

The bound's rule is given more than any real rule has:

- the **true mix of proposals** (``Proposals()``: 60 % harmful U(−0.08, −0.01), 30 % exactly 0,
  10 % helpful U(0.01, 0.04); on a grid) as its prior;
- the **champion's true quality**: no champion runs at all, and no champion noise in the
  comparison;
- each candidate run's mean score as a normal draw around the true quality with the simulator's
  run SD (``SimModel.run_sd``, the seed SD scaled by the noise factor), up to ``--max-runs``.

``--champion-runs M`` (a list) takes the second gift back: the champion is measured on M runs,
charged once per champion (the first and every promoted one), and its error is shared by every
run of the proposal; the best over M of that rule is printed beside greedy-k as "the champion
charged". It is not a bound on every rule (one could top the champion up adaptively, or reuse
its promotion runs with a correction, as greedy-k reuses them free), only on rules that measure
each champion a fixed number of times.

With those, the best sequential rule for one proposal (promote, reject or run once more, after
every run) maximizes E[Δ promoted] − λ·E[runs] − μ·P(a neutral change is promoted); it is found
by backward induction on the sum of the runs' means (a sufficient statistic), and μ is set so that
P(promoted | neutral) equals ``--neutral`` (the hard constraint, 2.5 % in the tree). Proposals are
independent in the project's simulator (effects do not depend on the state), so a loop of 30
proposals is 30 such problems; sweeping λ traces the largest ceiling share reachable at each
number of candidate runs per loop. Any rule that meets the constraint in the real simulator is a
rule this one could imitate with fewer runs (it could simulate the champion's runs), so its share
at equal runs is at most the bound's (up to the grid and the normal approximation of a run's
mean; the figures come from a Monte Carlo of the bound's policy on the continuous mix).
Greedy-k's share on the same simulator (k = 1…6, the page's seeds) is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.ndimage import gaussian_filter1d
from scipy.special import ndtri

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_decision_goal import ceiling, greedy_k  # noqa: E402
from decision_goal_levers import project_curves  # noqa: E402

from evotree.gates.calibration import Proposals, SimModel  # noqa: E402

STEPS = 30


def prior_grid(mix: Proposals, points: int = 40) -> tuple[np.ndarray, np.ndarray]:
    """The mix of true effects on a grid (effects, weights)."""
    harmful = -np.linspace(*mix.harmful, points)
    helpful = np.linspace(*mix.helpful, points)
    effects = np.concatenate([harmful, [0.0], helpful])
    p_helpful = 1.0 - mix.p_harmful - mix.p_neutral
    weights = np.concatenate(
        [
            np.full(points, mix.p_harmful / points),
            [mix.p_neutral],
            np.full(points, p_helpful / points),
        ]
    )
    return effects, weights


class Bound:
    """Backward induction for one (λ, μ): the value and the decision at every (runs, sum)."""

    def __init__(
        self, sd: float, max_runs: int, mix: Proposals = Proposals(), champion_runs: int = 0
    ) -> None:
        self.sd, self.max_runs = sd, max_runs
        #: the champion measured on this many runs (0: known exactly): its error is shared by
        #: every run of the proposal, and the runs are charged once per champion
        self.champion_runs = champion_runs
        self.sd_c = sd / np.sqrt(champion_runs) if champion_runs else 0.0
        self.effects, self.weights = prior_grid(mix)
        self.zero = int(np.argmin(np.abs(self.effects)))
        lo = self.effects.min() * max_runs - 8 * sd * np.sqrt(max_runs)
        hi = self.effects.max() * max_runs + 8 * sd * np.sqrt(max_runs)
        self.h = sd / 8
        self.grid = np.arange(lo, hi + self.h, self.h)
        # posterior weights over the effects at every (n, S): (max_runs + 1, G, E)
        post = []
        for n in range(max_runs + 1):
            if n == 0:
                w = np.tile(self.weights, (1, 1))
            else:
                var = n * sd * sd + (n * self.sd_c) ** 2
                ll = -((self.grid[:, None] - n * self.effects[None, :]) ** 2) / (2 * var)
                ll -= ll.max(axis=1, keepdims=True)
                w = self.weights[None, :] * np.exp(ll)
                w /= w.sum(axis=1, keepdims=True)
            post.append(w)
        self.post = post

    def solve(self, lam: float, mu: float) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per n: (promote value, continue value, reject value 0) on the grid (n = 0: one point)."""
        effects, sd, h = self.effects, self.sd, self.h
        values: list[Any] = [None] * (self.max_runs + 1)
        out: list[Any] = [None] * (self.max_runs + 1)
        nxt = None
        for n in range(self.max_runs, -1, -1):
            w = self.post[n]
            promote = w @ effects - mu * w[:, self.zero]
            if n == self.max_runs:
                cont = np.full(promote.shape, -np.inf)
            else:
                # the champion's error given (n, S, θ): N(m_e, v_e); the next run's mean is
                # x ~ N(θ + m_e, sd² + v_e)
                v_e = 1.0 / (1.0 / self.sd_c**2 + n / sd**2) if self.sd_c else 0.0
                smooth = gaussian_filter1d(nxt, np.sqrt(sd**2 + v_e) / h, mode="nearest")
                points = self.grid if n else np.array([0.0])
                m_e = v_e * (points[:, None] - n * effects[None, :]) / sd**2
                # E[V_{n+1}(S + x)], averaged over the posterior of θ
                shifted = np.interp(points[:, None] + effects[None, :] + m_e, self.grid, smooth)
                cont = (w * shifted).sum(axis=1) - lam
            value = np.maximum(0.0, np.maximum(promote, cont))
            out[n] = (promote, cont)
            values[n] = value
            nxt = value if n else None
        return out

    def simulate(
        self, policy: list[Any], n: int, rng: np.random.Generator, mix: Proposals = Proposals()
    ) -> dict[str, float]:
        """Monte Carlo of the policy on ``n`` proposals drawn from the continuous mix."""
        u = rng.random(n)
        harm, help_ = rng.uniform(*mix.harmful, n), rng.uniform(*mix.helpful, n)
        effects = np.where(
            u < mix.p_harmful, -harm, np.where(u < mix.p_harmful + mix.p_neutral, 0.0, help_)
        )
        error = rng.normal(0.0, self.sd_c, n) if self.sd_c else np.zeros(n)
        total = np.zeros(n)
        runs = np.zeros(n)
        promoted = np.zeros(n, bool)
        open_ = np.ones(n, bool)
        promote0, cont0 = policy[0]
        if not cont0[0] > max(0.0, promote0[0]):
            promoted[:] = promote0[0] > 0
            open_[:] = False
        for k in range(1, self.max_runs + 1):
            idx = np.flatnonzero(open_)
            if not idx.size:
                break
            total[idx] += rng.normal(effects[idx] + error[idx], self.sd)
            runs[idx] += 1
            promote, cont = policy[k]
            p = np.interp(total[idx], self.grid, promote)
            c = np.interp(total[idx], self.grid, cont)
            go_on = c > np.maximum(0.0, p)
            promoted[idx[~go_on]] = p[~go_on] > 0
            open_[idx[~go_on]] = False
        neutral = effects == 0
        helpful_sum = effects[effects > 0].sum()
        return {
            "share": float((effects * promoted).sum() / helpful_sum),
            "runs_per_loop": float(
                STEPS * runs.mean() + self.champion_runs * (1 + STEPS * promoted.mean())
            ),
            "neutral_promoted": float(promoted[neutral].mean()),
            "harmful_promoted": float(promoted[effects < 0].mean()),
            "helpful_promoted": float(promoted[effects > 0].mean()),
        }


def fixed_sample(
    factor: int, neutral: float, ns: range, draws: int, seed: int, mix: Proposals = Proposals()
) -> list[dict[str, float]]:
    """The best fixed-sample test with the champion known: ``n`` candidate runs a proposal,
    promote when their mean is above the level at which a neutral change passes at
    ``neutral`` (Neyman-Pearson: a threshold on the mean is the most powerful test of 0 against
    any positive effect)."""
    sd = SimModel(seed_sd=SimModel().seed_sd * factor).run_sd
    rng = np.random.default_rng([seed, 8])
    u = rng.random(draws)
    harm, help_ = rng.uniform(*mix.harmful, draws), rng.uniform(*mix.helpful, draws)
    effects = np.where(
        u < mix.p_harmful, -harm, np.where(u < mix.p_harmful + mix.p_neutral, 0.0, help_)
    )
    out = []
    for n in ns:
        se = sd / np.sqrt(n)
        bar = float(-ndtri(neutral)) * se
        promoted = rng.normal(effects, se) > bar
        out.append(
            {
                "n": n,
                "runs_per_loop": float(STEPS * n),
                "share": float((effects * promoted).sum() / effects[effects > 0].sum()),
                "neutral_promoted": float(promoted[effects == 0].mean()),
                "helpful_promoted": float(promoted[effects > 0].mean()),
            }
        )
    return out


def fixed_sample_real(
    factor: int, neutral: float, ks: range, seeds: list[int], loops: int = 200
) -> list[dict[str, float]]:
    """A fixed-sample test a real rule can run, in the project's simulator itself: greedy-k
    (k runs of the candidate against the champion's last k) that keeps only a mean better by the
    margin at which a neutral change passes at ``neutral`` against an unbiased champion
    (z · run SD · √(2/k)); the champion's last k runs are its promotion runs, biased upward."""
    model = SimModel(seed_sd=SimModel().seed_sd * factor)
    ceil = np.concatenate([ceiling(model, loops, s)["finals"] for s in seeds]).mean()
    out = []
    for k in ks:
        margin = float(-ndtri(neutral)) * model.run_sd * np.sqrt(2 / k)
        parts = [greedy_k(k, model, loops, s, margin) for s in seeds]
        finals = np.concatenate([p["finals"] for p in parts])
        out.append(
            {
                "k": k,
                "margin": margin,
                "runs_per_loop": float(parts[0]["runs"]),
                "share": float(finals.mean() / ceil),
                "neutral_promoted": sum(p["neutral"]["k"] for p in parts)
                / sum(p["neutral"]["n"] for p in parts),
                "below_peak": sum(p["below_peak"]["k"] for p in parts)
                / sum(p["below_peak"]["n"] for p in parts),
            }
        )
    return out


def frontier(
    factor: int,
    neutral: float,
    lams: list[float],
    max_runs: int,
    draws: int,
    seed: int,
    champion_runs: int = 0,
) -> list[dict[str, float]]:
    """The bound's (runs per loop, ceiling share) at each run cost λ, μ set by bisection so that
    neutral changes are promoted at ``neutral`` (on the exact policy's Monte Carlo)."""
    sd = SimModel(seed_sd=SimModel().seed_sd * factor).run_sd
    bound = Bound(sd, max_runs, champion_runs=champion_runs)
    out = []
    for lam in lams:
        lo, hi = 0.0, 1.0
        best = None
        for _ in range(14):
            mu = (lo + hi) / 2
            res = bound.simulate(bound.solve(lam, mu), draws, np.random.default_rng([seed, 7]))
            if res["neutral_promoted"] > neutral:
                lo = mu
            else:
                hi, best = mu, res | {"mu": mu}
        if best is None:
            best = bound.simulate(bound.solve(lam, hi), draws, np.random.default_rng([seed, 7]))
            best["mu"] = hi
        out.append({"lam": lam, **best})
    return out


def envelope(curves: list[list[dict[str, float]]], runs: float) -> float | None:
    """The largest share any of ``curves`` (each: rows of one champion-run count) reaches at
    ``runs`` runs per loop, interpolated along each curve; None when no curve spans ``runs``."""
    best = None
    for rows in curves:
        pts = sorted((r["runs_per_loop"], r["share"]) for r in rows if r["share"] > 0)
        if len(pts) >= 2 and pts[0][0] <= runs <= pts[-1][0]:
            value = float(np.interp(runs, [x for x, _ in pts], [y for _, y in pts]))
            best = value if best is None else max(best, value)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--neutral", type=float, default=0.025, help="the neutral-promotion cap")
    p.add_argument("--max-runs", type=int, default=32, help="candidate runs at most")
    p.add_argument("--draws", type=int, default=60000, help="proposals per Monte Carlo")
    p.add_argument(
        "--lams",
        default="0.00001,0.00002,0.00005,0.0001,0.0002,0.0004",
        help="run costs (score units a run), a comma list",
    )
    p.add_argument(
        "--champion-runs",
        default="0",
        help="a comma list: the champion measured on this many runs, charged once per champion "
        "(0: known exactly, the bound)",
    )
    p.add_argument("--fixed", action="store_true", help="also the fixed-sample tests")
    p.add_argument("--seeds", default="0,1", help="the project's seeds of greedy-k's curve")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    lams = [float(x) for x in args.lams.split(",")]
    seeds = [int(x) for x in args.seeds.split(",")]
    started = time.monotonic()
    out: dict[str, Any] = {"neutral": args.neutral, "max_runs": args.max_runs, "bound": {}}
    for m in (int(x) for x in args.champion_runs.split(",")):
        out["bound"][str(m)] = {}
        for f in (1, 2):
            rows = frontier(f, args.neutral, lams, args.max_runs, args.draws, f, m)
            out["bound"][str(m)][f"{f}x"] = rows
            for r in rows:
                print(
                    f"champion {'known' if not m else f'{m} runs'}, {f}x, λ {r['lam']:.5f}: "
                    f"share {r['share']:.3f} at {r['runs_per_loop']:.0f} runs (neutral "
                    f"{100 * r['neutral_promoted']:.2f} %, helpful "
                    f"{100 * r['helpful_promoted']:.0f} %, harmful "
                    f"{100 * r['harmful_promoted']:.2f} %)",
                    flush=True,
                )
    for f in (1, 2) if args.fixed else ():
        rows = fixed_sample(f, args.neutral, range(1, 7), args.draws, seed=f)
        out.setdefault("fixed_sample", {})[f"{f}x"] = rows
        print(
            f"{f}x fixed-sample, champion known:",
            [f"{r['runs_per_loop']:.0f}: {r['share']:.3f}" for r in rows],
            flush=True,
        )
        rows = fixed_sample_real(f, args.neutral, range(2, 8), seeds)
        out.setdefault("fixed_sample_real", {})[f"{f}x"] = rows
        for r in rows:
            print(
                f"{f}x greedy-{r['k']} with margin {r['margin']:.4f}: share {r['share']:.3f} at "
                f"{r['runs_per_loop']:.0f} runs, neutral {100 * r['neutral_promoted']:.1f} %, "
                f"below peak {100 * r['below_peak']:.1f} %",
                flush=True,
            )
    curves = project_curves(seeds, 200, range(1, 7))
    out["greedy"] = {}
    for f in (1, 2):
        noise = f"{f}x"
        runs, shares = curves[noise]
        known = out["bound"].get("0", {}).get(noise)
        charged = [v[noise] for m, v in out["bound"].items() if m != "0"]
        rows = []
        for r, sh in zip(runs, shares):
            rows.append(
                {
                    "runs_per_loop": r,
                    "greedy_share": sh,
                    "bound_champion_known": envelope([known], r) if known else None,
                    "best_champion_charged": envelope(charged, r) if charged else None,
                }
            )
            print(
                f"{noise} greedy-{len(rows)} at {r:.0f} runs: {sh:.3f}; bound (champion known) "
                f"{rows[-1]['bound_champion_known']}; best with the champion charged "
                f"{rows[-1]['best_champion_charged']}",
                flush=True,
            )
        out["greedy"][noise] = rows
    out["seconds"] = round(time.monotonic() - started, 1)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
