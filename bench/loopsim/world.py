"""The world of the loop simulator: proposals with true effects, recipes, and noisy runs.

A loop starts from a recipe of true value ``v0`` (its expected score on the whole task
population, 0-1). Proposal ``j`` is a change with a base effect drawn from a mix of neutral,
small-gain, harmful, catastrophic and large-gain changes; applied to a champion it gives a
candidate whose true value is the champion's plus the effect *in that state*: gains shrink with
the headroom left (diminishing returns) and with earlier accepted changes to the same knob
(redundancy); harms do not shrink.

An observed run scores the recipe on a finite pool of tasks. Task ``i`` has a difficulty
``b_i``; a recipe has an ability ``theta`` (set so its population mean equals its true value)
and a per-task offset ``u_i`` (task x recipe interaction: a child keeps most of its parent's
offsets). A run adds seed noise: an ability shift for the whole run and a per-task jitter, and
rarely a collapse. Per-task scores are continuous pass rates (or binomial over ``m`` samples).
The pool offsets are fixed per recipe, so repeated seeds do not average them away: the pool
mean of a recipe differs from its population (held-out) truth.

Every draw is seeded: the loop (start value, pool, proposals) by ``(seed, loop)``, proposal
``j`` by ``(seed, loop, j)``, run ``k`` of a recipe by ``(seed, loop, recipe, k)``, so every rule
meets the same proposals and, for a recipe they share, the same runs.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, replace

import numpy as np

_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(48)
_GH_W = _GH_W / _GH_W.sum()
#: runs of one recipe are drawn this many at a time
RUN_BLOCK = 8


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@dataclass(frozen=True)
class WorldConfig:
    """Every knob of the world, with the defaults the benchmark page argues for."""

    seed: int = 0
    noise: float = 1.0  # seed-noise multiplier (1x, 2x)
    n_tasks: int = 100
    seed_sd: float = 0.015  # run-to-run SD of the pool score at 1x, at v = 0.5
    jitter_share: float = 0.3  # share of that variance from per-task jitter
    task_sd: float = 1.2  # SD of task difficulty (logit)
    pool_tau: float = 0.35  # SD of a recipe's per-task offsets (logit)
    pool_rho: float = 0.9  # correlation of a child's offsets with its parent's
    collapse_prob: float = 0.01  # chance a run collapses (score scaled by U(0, 0.5))
    samples_per_task: int = 0  # 0: continuous pass rates; m: binomial over m samples
    v0_range: tuple[float, float] = (0.35, 0.60)
    headroom_range: tuple[float, float] = (0.10, 0.30)
    n_groups: int = 6  # knobs a proposal can touch (redundancy within a knob)
    redundancy: float = 0.6  # gain factor per earlier accepted change to the same knob
    # the effect mix: shares (summing to 1) and scales, score units
    p_neutral: float = 0.60
    p_small: float = 0.15
    p_harm: float = 0.20
    p_catastrophe: float = 0.02
    p_large: float = 0.03
    neutral_sd: float = 0.002  # neutral: N(0, sd) clipped to +/- neutral_band
    neutral_band: float = 0.005
    small_mean: float = 0.007  # small gain: band + Exp(mean)
    harm_mean: float = 0.012  # harm: -(band + Exp(mean))
    catastrophe_range: tuple[float, float] = (0.05, 0.30)
    large_min: float = 0.03  # large gain: large_min * (1 + Pareto(large_alpha))
    large_alpha: float = 2.0
    force_first_neutral: bool = False  # draw proposal 0 from the neutral component only

    def with_noise(self, noise: float) -> WorldConfig:
        return replace(self, noise=float(noise))


@dataclass(frozen=True)
class Proposal:
    """One change of the stream: its base effect (score units), component and knob."""

    index: int
    base_effect: float
    component: str
    group: int
    innovation: np.ndarray = field(repr=False)  # fresh per-task offsets it brings (logit)


@dataclass
class Recipe:
    """A version of the recipe: the accepted proposals (in order) and its truth."""

    key: int
    path: tuple[int, ...]
    value: float  # true value: expected score on the task population
    theta: float
    offsets: np.ndarray = field(repr=False)
    group_counts: tuple[int, ...]


class Calibration:
    """Maps true value <-> ability for one task-difficulty spread, and the run-noise scales."""

    def __init__(self, cfg: WorldConfig) -> None:
        self.spread = math.hypot(cfg.task_sd, cfg.pool_tau)
        self.grid = np.linspace(-9.0, 9.0, 3601)
        probs = _sigmoid(self.grid[:, None] + self.spread * _GH_X[None, :])
        self.values = probs @ _GH_W
        theta_half = self.theta_of(0.5)
        p = _sigmoid(theta_half + self.spread * _GH_X)
        slope = float(np.sum(_GH_W * p * (1 - p)))  # d(pool mean)/d(ability)
        slope2 = math.sqrt(float(np.sum(_GH_W * (p * (1 - p)) ** 2)))
        sd = cfg.seed_sd * cfg.noise
        self.ability_sd = sd * math.sqrt(1.0 - cfg.jitter_share) / slope
        self.jitter_sd = sd * math.sqrt(cfg.jitter_share * cfg.n_tasks) / slope2

    def theta_of(self, value: float) -> float:
        return float(np.interp(value, self.values, self.grid))


@functools.lru_cache(maxsize=16)
def _calibration(cfg: WorldConfig) -> Calibration:
    return Calibration(cfg)


class LoopWorld:
    """One loop's world at one noise level: its proposal stream, recipes and runs."""

    def __init__(self, cfg: WorldConfig, loop_index: int, n_proposals: int) -> None:
        self.cfg = cfg
        self.loop_index = loop_index
        self.n_proposals = n_proposals
        self.cal = _calibration(cfg)
        rng = np.random.default_rng([cfg.seed, loop_index, 0])
        self.v0 = float(rng.uniform(*cfg.v0_range))
        self.vmax = min(0.97, self.v0 + float(rng.uniform(*cfg.headroom_range)))
        self.difficulty = rng.normal(0.0, cfg.task_sd, cfg.n_tasks)
        offsets = rng.normal(0.0, cfg.pool_tau, cfg.n_tasks)
        self._proposals: dict[int, Proposal] = {}
        self.root = Recipe(0, (), self.v0, self.cal.theta_of(self.v0), offsets, (0,) * cfg.n_groups)
        self._recipes: dict[tuple[int, ...], Recipe] = {(): self.root}
        self._runs: dict[int, list[tuple[float, np.ndarray]]] = {}

    # ------------------------------------------------------------------ proposals and truth
    def proposal(self, j: int) -> Proposal:
        """Proposal ``j`` of the stream (drawn from its own seed, so it never depends on which
        proposals were looked at before)."""
        if j not in self._proposals:
            self._proposals[j] = self._draw_proposal(j)
        return self._proposals[j]

    @property
    def proposals(self) -> list[Proposal]:
        return [self.proposal(j) for j in range(self.n_proposals)]

    def _draw_proposal(self, j: int) -> Proposal:
        cfg = self.cfg
        rng = np.random.default_rng([cfg.seed, self.loop_index, 1, j])
        shares = np.array([cfg.p_neutral, cfg.p_small, cfg.p_harm, cfg.p_catastrophe, cfg.p_large])
        u = rng.uniform()
        component = ("neutral", "small", "harm", "catastrophe", "large")[
            int(np.searchsorted(np.cumsum(shares / shares.sum()), u, side="right"))
            if not (cfg.force_first_neutral and j == 0)
            else 0
        ]
        band = cfg.neutral_band
        if component == "neutral":
            effect = max(-band, min(band, float(rng.normal(0.0, cfg.neutral_sd))))
        elif component == "small":
            effect = band + float(rng.exponential(cfg.small_mean))
        elif component == "harm":
            effect = -(band + float(rng.exponential(cfg.harm_mean)))
        elif component == "catastrophe":
            effect = -float(rng.uniform(*cfg.catastrophe_range))
        else:
            effect = cfg.large_min * (1.0 + float(rng.pareto(cfg.large_alpha)))
        group = int(rng.integers(cfg.n_groups))
        innovation = rng.normal(0.0, cfg.pool_tau, cfg.n_tasks)
        return Proposal(j, effect, component, group, innovation)

    def effect_in(self, champion: Recipe, proposal: Proposal) -> float:
        """The true effect of a proposal applied to this champion (state-dependent)."""
        effect = proposal.base_effect
        if effect > 0:
            headroom = (self.vmax - champion.value) / (self.vmax - self.v0)
            effect *= max(0.0, min(1.0, headroom))
            effect *= self.cfg.redundancy ** champion.group_counts[proposal.group]
        return max(0.01, min(0.99, champion.value + effect)) - champion.value

    def child(self, champion: Recipe, j: int) -> Recipe:
        """The candidate: the champion with proposal ``j`` applied (built once, then shared)."""
        path = champion.path + (j,)
        if path in self._recipes:
            return self._recipes[path]
        proposal = self.proposal(j)
        value = champion.value + self.effect_in(champion, proposal)
        rho = self.cfg.pool_rho
        offsets = rho * champion.offsets + math.sqrt(1.0 - rho * rho) * proposal.innovation
        counts = list(champion.group_counts)
        counts[proposal.group] += 1
        key = (champion.key * 1_000_003 + j + 1) % (1 << 62)
        recipe = Recipe(key, path, value, self.cal.theta_of(value), offsets, tuple(counts))
        self._recipes[path] = recipe
        return recipe

    # ------------------------------------------------------------------ runs
    def run(self, recipe: Recipe, k: int) -> tuple[float, np.ndarray]:
        """Run ``k`` (0-based) of a recipe: its pool score and per-task scores. The same
        ``(recipe, k)`` gives the same run to every rule (common random numbers): a recipe's
        runs come from its own stream, drawn in blocks, in order."""
        runs = self._runs.setdefault(recipe.key, [])
        while k >= len(runs):
            runs.extend(self._block(recipe, len(runs) // RUN_BLOCK))
        return runs[k]

    def _block(self, recipe: Recipe, block: int) -> list[tuple[float, np.ndarray]]:
        cfg, cal = self.cfg, self.cal
        rng = np.random.default_rng([cfg.seed, self.loop_index, 2, recipe.key, block])
        z = rng.standard_normal((RUN_BLOCK, cfg.n_tasks + 1))
        collapse = rng.uniform(size=RUN_BLOCK) < cfg.collapse_prob
        scale = rng.uniform(0.0, 0.5, size=RUN_BLOCK)
        logits = (
            (recipe.theta - self.difficulty + recipe.offsets)[None, :]
            + cal.ability_sd * z[:, :1]
            + cal.jitter_sd * z[:, 1:]
        )
        tasks = _sigmoid(logits)
        if cfg.samples_per_task > 0:
            tasks = rng.binomial(cfg.samples_per_task, tasks) / cfg.samples_per_task
        tasks = np.where(collapse[:, None], tasks * scale[:, None], tasks)
        tasks.flags.writeable = False
        means = tasks.mean(axis=1)
        return [(float(means[i]), tasks[i]) for i in range(RUN_BLOCK)]

    def pool_value(self, recipe: Recipe) -> float:
        """A recipe's expected score on this loop's pool without seed noise (for diagnostics)."""
        logits = recipe.theta - self.difficulty + recipe.offsets
        return float(_sigmoid(logits).mean())
