"""Statistics across seeds, as rliable defines them: the interquartile mean, its stratified
bootstrap CI, and the probability of improvement.

Scores are ``(n_runs, n_tasks)``: the rows are independent runs (seeds) of one recipe scored on
the same task pool. Like :mod:`evotree.diagnostics.stats` (whose argument checks these share),
every function is pure and draws its randomness only from the ``rng`` it is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from evotree.diagnostics.stats import (
    InvalidScores,
    _chunks,
    _confidence,
    _generator,
    _matrix,
    _same_tasks,
)

__all__ = [
    "BootstrapCI",
    "ImprovementProbability",
    "RunsStatistic",
    "iqm",
    "probability_of_improvement",
    "stratified_bootstrap_ci",
]

#: ``statistic(scores)`` with scores ``(..., n_runs, n_tasks)`` returning ``(...)``, like :func:`iqm`.
RunsStatistic = Callable[[np.ndarray], Any]


@dataclass(frozen=True)
class BootstrapCI:
    point: float
    ci: tuple[float, float]
    confidence: float
    method: str
    B: int


@dataclass(frozen=True)
class ImprovementProbability:
    """P(X > Y) of rliable: per-task Mann-Whitney U / (n_x n_y), averaged over tasks."""

    probability: float
    ci: tuple[float, float]  #: stratified-bootstrap percentile CI
    per_task: np.ndarray  #: (n_tasks,)
    confidence: float
    B: int


def iqm(scores: Any) -> Any:
    """Interquartile mean (rliable): the mean of the middle 50 % of all runs x tasks scores.

    ``scores``: (n_runs, n_tasks) -> float; leading batch axes (..., n_runs, n_tasks) give an
    array (...). floor(N/4) of the N = n_runs * n_tasks values are cut from each end (as
    ``scipy.stats.trim_mean(x, 0.25, axis=None)``): robust to outlier runs, yet less noisy
    than the median.
    """
    arr = np.asarray(scores, dtype=float)
    if arr.ndim < 2 or arr.shape[-1] == 0 or arr.shape[-2] == 0:
        raise InvalidScores(f"expected scores of shape (n_runs, n_tasks), got {arr.shape}")
    flat = arr.reshape(*arr.shape[:-2], -1)
    n = flat.shape[-1]
    cut = int(0.25 * n)
    if cut:  # a partial sort puts exactly the middle n - 2 cut values in [cut, n - cut)
        flat = np.partition(flat, (cut, n - cut - 1), axis=-1)
    out = flat[..., cut : n - cut].mean(axis=-1)
    return float(out) if out.ndim == 0 else out


def _percentile_ci(theta_b: np.ndarray, conf: float) -> tuple[float, float]:
    alpha = 1.0 - conf
    lo, hi = np.quantile(theta_b, (alpha / 2, 1 - alpha / 2))
    return float(lo), float(hi)


def stratified_bootstrap_ci(
    scores: Any,
    statistic: RunsStatistic = iqm,
    *,
    B: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> BootstrapCI:
    """Percentile CI of ``statistic(scores)`` by rliable's stratified bootstrap.

    ``scores``: (n_runs, n_tasks). Each replicate resamples the runs with replacement within
    each task (the task set is fixed: it is the benchmark, not a sample). ``statistic`` takes
    (..., n_runs, n_tasks) and reduces the last two axes, like :func:`iqm` or
    ``lambda s: s.mean(axis=(-2, -1))``; it is called on (rows, n_runs, n_tasks) blocks.
    """
    x = _matrix(scores, "scores")
    rng = _generator(rng, B)
    conf = _confidence(confidence, int(B))
    point = float(statistic(x))
    n_runs, n_tasks = x.shape
    flat, tasks = x.ravel(), np.arange(n_tasks)
    theta_b = np.empty(int(B))
    for start, rows in _chunks(int(B), x.size):
        idx = rng.integers(0, n_runs, size=(rows, n_runs, n_tasks))
        idx *= n_tasks
        idx += tasks  # run r of task t, drawn independently per (replicate, slot, task)
        values = np.asarray(statistic(np.take(flat, idx)), dtype=float)
        if values.shape != (rows,):
            raise InvalidScores(
                f"expected the statistic to reduce the last two axes of (..., n_runs, n_tasks), "
                f"got output shape {values.shape} for input {(rows, n_runs, n_tasks)}",
                fix="write it like `lambda s: s.mean(axis=(-2, -1))`",
            )
        theta_b[start : start + rows] = values
    return BootstrapCI(point, _percentile_ci(theta_b, conf), conf, "percentile", int(B))


def _counts(rng: np.random.Generator, shape: tuple[int, ...], k: int) -> np.ndarray:
    """Multinomial(k; 1/k, ...) resampling counts: shape + (k,), from k uniform draws each."""
    size = math.prod(shape)
    idx = rng.integers(0, k, size=(size, k))
    idx += (np.arange(size) * k)[:, None]
    return np.bincount(idx.ravel(), minlength=size * k).reshape(*shape, k).astype(float)


def probability_of_improvement(
    x: Any,
    y: Any,
    *,
    B: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator,
) -> ImprovementProbability:
    """P(X > Y) (rliable): the chance a run of X beats a run of Y on a task, averaged over tasks.

    ``x``: (n_runs_x, n_tasks), ``y``: (n_runs_y, n_tasks). Per task it is the Mann-Whitney
    U / (n_x n_y) = mean over all run pairs of [x > y] + 0.5 [x == y]; identical arrays give
    0.5 exactly. The CI is a stratified bootstrap: runs of x and of y resampled independently
    within each task; a replicate is sum_ij cx_i K_ij cy_j / (n_x n_y) with K the pair kernel
    and c the resampling counts, one batched matrix product per task.
    """
    x, y = _matrix(x, "x"), _matrix(y, "y")
    _same_tasks(x, y)
    rng = _generator(rng, B)
    conf = _confidence(confidence, int(B))
    nx, ny, n_tasks = x.shape[0], y.shape[0], x.shape[1]
    # kernel[t, i, j] = [x_i > y_j] + 0.5 [x_i == y_j] on task t
    kernel = (x.T[:, :, None] > y.T[:, None, :]) + 0.5 * (x.T[:, :, None] == y.T[:, None, :])
    if x.shape == y.shape and np.array_equal(x, y):
        per_task = np.full(n_tasks, 0.5)  # identical arrays: no run beats its own copy
    else:
        per_task = kernel.mean(axis=(1, 2))
    theta_b = np.empty(int(B))
    for start, rows in _chunks(int(B), n_tasks * 2 * (nx + 2 * ny)):
        cx = _counts(rng, (n_tasks, rows), nx)  # (T, rows, nx)
        cy = _counts(rng, (n_tasks, rows), ny)  # (T, rows, ny)
        per = np.einsum("trj,trj->tr", cx @ kernel, cy) / (nx * ny)  # (T, rows)
        theta_b[start : start + rows] = per.mean(axis=0)
    per_task.setflags(write=False)
    return ImprovementProbability(
        float(per_task.mean()), _percentile_ci(theta_b, conf), per_task, conf, int(B)
    )
