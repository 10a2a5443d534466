"""Statistics of evotree's score layer: is version B better than version A, and how sure are we?

Every function here is pure: arrays in, a small frozen dataclass (or an array, for element-wise
transforms) out; nothing is read from or written to the evidence store. Randomness comes only
from the ``np.random.Generator`` the caller passes as ``rng`` (never the global ``np.random``),
so the same seed gives the same interval.

Shapes used throughout:

- per-task scores of one version: ``(n_tasks,)``
- several seeds (runs) of one version: ``(n_seeds, n_tasks)``, the rows being independent runs
  of the recipe scored on the same task pool (rliable calls this ``(num_runs, num_tasks)``).

What is here, bottom to top:

- sample metrics: :func:`avg_at_k`, :func:`pass_at_k` (unbiased, Chen et al. 2021),
  :func:`normalized_score`;
- paired tests on one pool: :func:`paired_bootstrap` (BCa, percentile fallback),
  :func:`wilcoxon_signed_rank`, :func:`benjamini_hochberg`;
- across seeds (rliable's definitions: the IQM, its stratified bootstrap CI, the probability of
  improvement): :mod:`evotree.diagnostics.seed_stats`;
- :func:`difference`: **the** comparison of two versions that ``compare``, ``diagnose``,
  ``gates``, the reports and the agent tools show (one Δ, one t interval, one one-sided p), with
  the run-to-run spread pooled over a tree (:func:`spread_term`, :func:`pooled_spread`) and runs
  that are identical copies counted once (:func:`runs_identical`);
- :func:`require_same_pool` and :func:`alpha_spending` (sequential looks).

numpy is imported here; ``scipy.stats`` (~1 s cold) only inside the tests that use it
(:func:`wilcoxon_signed_rank`, :func:`benjamini_hochberg`), so importing
this module, and ``evotree`` commands that never run a test, stay fast.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

from evotree.core.errors import EvotreeError

__all__ = [
    "AlphaSpend",
    "AtK",
    "BHResult",
    "Difference",
    "InvalidScores",
    "PairedBootstrap",
    "PoolMismatch",
    "RunSpread",
    "SpreadTerm",
    "WilcoxonResult",
    "alpha_spending",
    "avg_at_k",
    "benjamini_hochberg",
    "difference",
    "normalized_score",
    "paired_bootstrap",
    "pooled_spread",
    "pass_at_k",
    "require_same_pool",
    "runs_identical",
    "spread_term",
    "wilcoxon_signed_rank",
]

#: ``statistic(x, axis=-1)`` reducing the last axis, like ``np.mean`` or ``np.median``.
Reduction = Callable[..., Any]


_NORMAL = NormalDist()
#: Elements per resampling block. Small on purpose: the temporaries stay in cache and under
#: malloc's mmap threshold; 2M-element blocks were mmapped afresh each time and cost ~20 ms of
#: page faults per 10,000-resample bootstrap of 500 tasks (bench/stats_results.md).
_CHUNK_ELEMENTS = 1 << 16
#: Largest n * n table of pairwise sums used by the fast bootstrap of the mean (8 MiB).
_PAIR_TABLE_MAX = 1 << 20
#: Resamples a percentile CI end must have beyond it; fewer and the end is just the extreme
#: draw (too narrow), which matters at the tiny alphas of early sequential looks.
_MIN_TAIL_RESAMPLES = 5


# ----------------------------------------------------------------------------- errors
class PoolMismatch(EvotreeError):
    """The two versions were scored on different task pools; a paired comparison is invalid."""

    exit_code = 20
    code = "pool_mismatch"


class InvalidScores(EvotreeError, ValueError):
    """Scores, counts or parameters a statistic cannot use (wrong shape, NaN, out of range)."""

    exit_code = 21
    code = "invalid_scores"


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class AtK:
    """A per-task sample metric (avg@k or pass@k) and its mean over tasks."""

    metric: str  #: "avg@k" or "pass@k"
    k: int
    per_task: np.ndarray  #: (n_tasks,)
    mean: float


@dataclass(frozen=True)
class PairedBootstrap:
    """Bootstrap CI of ``statistic(b - a)`` over the tasks of one pool."""

    delta: float  #: statistic of the per-task differences b - a (the mean by default)
    ci: tuple[float, float]
    confidence: float
    method: str  #: the method used: "bca" or "percentile"
    fallback_reason: str | None  #: why BCa was not usable (None when it was, or not asked)
    se: float  #: standard deviation of the bootstrap distribution
    #: Monte-Carlo SE of each CI end (normal approximation of the quantile's SE; BCa ends,
    #: whose levels are estimated too, vary ~25 % more: bench/stats_results.md)
    mc_se: tuple[float, float]
    B: int
    n_tasks: int


@dataclass(frozen=True)
class WilcoxonResult:
    statistic: float
    p_value: float
    n_tasks: int
    n_zero: int  #: tasks with b == a (dropped under zero_method="wilcox")
    zero_method: str


@dataclass(frozen=True)
class BHResult:
    adjusted: np.ndarray  #: (m,) BH-adjusted p-values, in the input order
    rejected: np.ndarray  #: (m,) bool, adjusted <= alpha
    alpha: float
    n_rejected: int


@dataclass(frozen=True)
class AlphaSpend:
    """The alpha to spend at one interim look of a sequential evaluation."""

    nominal: float  #: alpha to test at this look (this look's share of the budget)
    spent: float  #: cumulative alpha spent up to and including this look (<= alpha)
    fraction: float  #: information fraction look / max_looks
    look: int
    max_looks: int
    kind: str


# ----------------------------------------------------------------------------- validation
def _vector(x: Any, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise InvalidScores(
            f"expected `{name}` to be a non-empty 1-D array of per-task scores (n_tasks,), "
            f"got shape {arr.shape}",
            fix="pass one score per task",
        )
    _finite(arr, name)
    return arr


def _matrix(x: Any, name: str) -> np.ndarray:
    """(n_seeds, n_tasks); a 1-D array is one seed."""
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.size == 0:
        raise InvalidScores(
            f"expected `{name}` to be a non-empty array of shape (n_seeds, n_tasks), "
            f"got shape {arr.shape}",
            fix="stack the per-task scores of each seed as rows",
        )
    _finite(arr, name)
    return arr


def _finite(arr: np.ndarray, name: str) -> None:
    bad = int(np.count_nonzero(~np.isfinite(arr)))
    if bad:
        raise InvalidScores(
            f"expected finite scores in `{name}`, got {bad} NaN/inf value(s) of {arr.size}",
            fix="drop the tasks without a score (in both versions) or re-run their eval",
        )


def _same_tasks(a: np.ndarray, b: np.ndarray) -> None:
    if a.shape[-1] != b.shape[-1]:
        raise InvalidScores(
            f"expected both versions scored on the same number of tasks, "
            f"got {a.shape[-1]} (A) and {b.shape[-1]} (B)",
            fix="align both on the same task ids first (require_same_pool)",
        )


def _confidence(confidence: float, B: int) -> float:
    """``confidence``, checked against B: each CI end must rest on >= 5 resamples beyond it."""
    if not 0.0 < confidence < 1.0:
        raise InvalidScores(f"expected 0 < confidence < 1, got {confidence}")
    needed = math.ceil(_MIN_TAIL_RESAMPLES / ((1.0 - confidence) / 2.0))
    if B < needed:
        raise InvalidScores(
            f"expected B >= {needed} resamples for a {confidence:.6g} CI (each end needs "
            f"{_MIN_TAIL_RESAMPLES} resamples beyond it), got B={B}",
            fix=f"pass B={needed} or more (small alphas of early sequential looks need large B)",
        )
    return float(confidence)


def _generator(rng: Any, B: int) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InvalidScores(
            f"expected `rng` to be a numpy.random.Generator, got {type(rng).__name__}",
            fix="pass rng=np.random.default_rng(seed)",
        )
    if int(B) != B or B < 1:
        raise InvalidScores(f"expected B (bootstrap resamples) to be a positive integer, got {B}")
    return rng


def _chunks(total: int, per_row: int, elements: int = _CHUNK_ELEMENTS) -> Iterator[tuple[int, int]]:
    """(start, rows) blocks of ``total`` rows of ``per_row`` elements, ~``elements`` each."""
    rows = max(1, elements // max(1, per_row))
    for start in range(0, total, rows):
        yield start, min(rows, total - start)


def _index_dtype(n: int) -> type:
    return np.int32 if n < 2**31 else np.int64


# ----------------------------------------------------------------------------- sample metrics
def avg_at_k(correct: Any) -> AtK:
    """avg@k: the mean of k sampled scores per task, then the mean over tasks.

    ``correct``: (n_tasks, k), 0/1 outcomes (or graded scores in [0, 1]) of k samples per task.
    It estimates the expected single-sample score with k times less variance than one sample.
    """
    arr = np.asarray(correct, dtype=float)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InvalidScores(
            f"expected `correct` of shape (n_tasks, k) with n_tasks, k >= 1, got {arr.shape}"
        )
    _finite(arr, "correct")
    per_task = arr.mean(axis=1)
    per_task.setflags(write=False)
    return AtK("avg@k", int(arr.shape[1]), per_task, float(per_task.mean()))


def pass_at_k(n: Any, c: Any, k: int) -> AtK:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k) per task, and its mean.

    ``n``: samples drawn per task and ``c``: correct ones, each an int or (n_tasks,) ints.
    The product form ``1 - prod_{i=n-c+1}^{n} (1 - k/i)`` avoids the huge binomials. A task
    with fewer than k incorrect samples (n - c < k) has pass@k = 1 exactly.
    """
    n_arr, c_arr = np.broadcast_arrays(np.atleast_1d(np.asarray(n)), np.atleast_1d(np.asarray(c)))
    if n_arr.ndim != 1 or n_arr.size == 0:
        raise InvalidScores(f"expected n and c as ints or (n_tasks,) arrays, got {n_arr.shape}")
    for name, arr in (("n", n_arr), ("c", c_arr)):
        if not np.all(np.equal(np.mod(arr, 1), 0)):
            raise InvalidScores(f"expected integer `{name}` (sample counts), got {arr.tolist()}")
    n_int, c_int = n_arr.astype(np.int64), c_arr.astype(np.int64)
    if int(k) != k or k < 1:
        raise InvalidScores(f"expected k to be a positive integer, got {k}")
    k = int(k)
    if np.any(c_int < 0) or np.any(c_int > n_int):
        raise InvalidScores(
            f"expected 0 <= c <= n for every task, got c={c_int.tolist()} n={n_int.tolist()}"
        )
    if np.any(n_int < k):
        raise InvalidScores(
            f"expected at least k={k} samples per task, got n={int(n_int.min())} on some task",
            fix=f"draw at least {k} samples per task, or lower k",
        )
    per_task = np.empty(n_int.size)
    for i, (ni, ci) in enumerate(zip(n_int.tolist(), c_int.tolist())):
        if ni - ci < k:
            per_task[i] = 1.0
        else:
            per_task[i] = 1.0 - float(np.prod(1.0 - k / np.arange(ni - ci + 1, ni + 1)))
    per_task.setflags(write=False)
    return AtK("pass@k", k, per_task, float(per_task.mean()))


def normalized_score(
    R: Any, random: Any, expert: Any, clip: tuple[float, float] | None = (0.0, 1.2)
) -> np.ndarray:
    """(R - random) / (expert - random), clipped to ``clip`` (None: no clipping).

    ``R``: (..., n_tasks); ``random``, ``expert``: scalars or (n_tasks,) reference scores.
    Puts tasks with different score scales on one scale (0 = random, 1 = expert) before they
    are averaged; clipping keeps one runaway task from dominating the mean.
    """
    r = np.asarray(R, dtype=float)
    lo, hi = np.asarray(random, dtype=float), np.asarray(expert, dtype=float)
    span = hi - lo
    if np.any(span == 0):
        raise InvalidScores(
            f"expected expert != random on every task, got equal references on "
            f"{int(np.count_nonzero(span == 0))} task(s)",
            fix="drop those tasks or give them distinct reference scores",
        )
    out = (r - lo) / span
    if clip is not None:
        out = np.clip(out, clip[0], clip[1])
    return out


# ----------------------------------------------------------------------------- paired, one pool
def _resample_reduce(
    d: np.ndarray, statistic: Reduction, B: int, rng: np.random.Generator
) -> np.ndarray:
    """(B,) statistic of B bootstrap resamples of ``d`` (n,): one (rows, n) index block at a time."""
    n = d.size
    if statistic is np.mean and 2 <= n and n * n <= _PAIR_TABLE_MAX:
        return _resample_mean_pairs(d, B, rng)
    out = np.empty(B)
    for start, rows in _chunks(B, n):
        idx = rng.integers(0, n, size=(rows, n), dtype=_index_dtype(n))
        out[start : start + rows] = statistic(np.take(d, idx), axis=-1)
    return out


def _resample_mean_pairs(d: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """(B,) bootstrap means of ``d`` (n,), drawing the n indices of a resample two at a time.

    One uniform draw k from [0, n*n) is exactly two independent uniform indices
    (i, j) = divmod(k, n), so summing ``pairs[k] = d[i] + d[j]`` over n // 2 draws (plus one
    single index when n is odd) is an exact bootstrap resample sum with half the random
    draws and half the gathers of the plain path.
    """
    n = d.size
    half = n // 2
    pairs = (d[:, None] + d[None, :]).ravel()
    out = np.empty(B)
    for start, rows in _chunks(B, half, _CHUNK_ELEMENTS // 4):
        idx = rng.integers(0, n * n, size=(rows, half), dtype=np.int32)
        total = np.take(pairs, idx).sum(axis=1)
        if n % 2:
            total += np.take(d, rng.integers(0, n, size=rows, dtype=np.int32))
        out[start : start + rows] = total / n
    return out


def _jackknife(d: np.ndarray, statistic: Reduction) -> np.ndarray:
    """(n,) statistic of ``d`` with task i left out, batched as (rows, n - 1) blocks."""
    n = d.size
    out = np.empty(n)
    cols = np.arange(n - 1)
    for start, rows in _chunks(n, n - 1):
        left_out = np.arange(start, start + rows)[:, None]
        out[start : start + rows] = statistic(d[cols + (cols >= left_out)], axis=-1)
    return out


def _bca_levels(
    theta_b: np.ndarray,
    theta_hat: float,
    d: np.ndarray,
    statistic: Reduction,
    alpha: float,
    scale: float,
) -> tuple[float, float] | str:
    """BCa quantile levels (Efron & Tibshirani 1993, 14.3), or why BCa is degenerate here.

    ``scale``: the largest |score|; differences within rounding error of it count as equal
    ((a + 0.1) - a is not exactly 0.1 on every task).
    """
    if d.size < 2 or np.ptp(d) <= 64 * np.finfo(float).eps * scale:
        return "all differences are equal"
    B = theta_b.size
    # Mid-rank proportion below the estimate (scipy's convention): ties count half, which
    # matters for binary scores, where many resampled means equal the estimate.
    ties_half = np.count_nonzero(theta_b < theta_hat) + np.count_nonzero(theta_b <= theta_hat)
    below = ties_half / (2 * B)
    if not 0.0 < below < 1.0:
        return "the estimate lies outside the bootstrap distribution (infinite bias correction)"
    z0 = _NORMAL.inv_cdf(below)
    jack = _jackknife(d, statistic)
    u = jack.mean() - jack
    ss = float(np.sum(u * u))
    if not ss > 0.0:
        return "zero-variance jackknife"
    accel = float(np.sum(u**3)) / (6.0 * ss**1.5)
    if not math.isfinite(accel):
        return "non-finite acceleration"
    levels = []
    for z in (_NORMAL.inv_cdf(alpha / 2), _NORMAL.inv_cdf(1 - alpha / 2)):
        den = 1.0 - accel * (z0 + z)
        if not den > 0.0:
            return f"acceleration {accel:.3g} too large for this confidence"
        levels.append(_NORMAL.cdf(z0 + (z0 + z) / den))
    if not all(math.isfinite(p) for p in levels):
        return "non-finite BCa levels"
    return levels[0], levels[1]


def _quantile_mc_se(se: float, level: float, B: int) -> float:
    """Monte-Carlo SE of the ``level`` quantile of B draws, if they were ~ Normal(., se)."""
    if not (0.0 < level < 1.0) or se <= 0.0:
        return 0.0
    return se * math.sqrt(level * (1 - level) / B) / _NORMAL.pdf(_NORMAL.inv_cdf(level))


def paired_bootstrap(
    a: Any,
    b: Any,
    *,
    statistic: Reduction = np.mean,
    B: int = 10_000,
    confidence: float = 0.95,
    rng: np.random.Generator,
    method: Literal["bca", "percentile"] = "bca",
) -> PairedBootstrap:
    """Bootstrap CI of ``statistic(b - a)`` over tasks: how much B beats A on this pool.

    ``a``, ``b``: (n_tasks,) per-task scores of two versions on the SAME tasks, in the same
    order. Tasks are resampled with replacement (the pairing kept); ``statistic(x, axis=-1)``
    reduces the last axis (``np.mean``: the mean difference; ``np.median`` works too).

    ``method="bca"`` (bias-corrected and accelerated, Efron & Tibshirani 1993) falls back to
    the percentile interval when BCa is degenerate: all differences equal, a zero-variance
    jackknife, an estimate outside the bootstrap distribution, or a non-finite/too large
    acceleration; ``method`` and ``fallback_reason`` of the result say which was used.
    Resampling is vectorized: one (rows, n_tasks) index block per ~64k elements; for
    ``np.mean`` (up to 1024 tasks) an exact pairwise-sum table halves the work.
    """
    a, b = _vector(a, "a"), _vector(b, "b")
    _same_tasks(a, b)
    rng = _generator(rng, B)
    conf = _confidence(confidence, int(B))
    if method not in ("bca", "percentile"):
        raise InvalidScores(f"expected method 'bca' or 'percentile', got {method!r}")
    d = b - a
    theta_hat = float(statistic(d, axis=-1))
    theta_b = _resample_reduce(d, statistic, int(B), rng)
    alpha = 1.0 - conf
    levels: tuple[float, float] = (alpha / 2, 1 - alpha / 2)
    used, reason = "percentile", None
    if method == "bca":
        scale = float(max(np.abs(a).max(), np.abs(b).max()))
        bca = _bca_levels(theta_b, theta_hat, d, statistic, alpha, scale)
        if isinstance(bca, str):
            reason = bca
        else:
            levels, used = bca, "bca"
    lo, hi = (float(v) for v in np.quantile(theta_b, levels))
    se = float(theta_b.std(ddof=1)) if theta_b.size > 1 else 0.0
    mc_se = (
        _quantile_mc_se(se, levels[0], theta_b.size),
        _quantile_mc_se(se, levels[1], theta_b.size),
    )
    return PairedBootstrap(theta_hat, (lo, hi), conf, used, reason, se, mc_se, int(B), d.size)


def wilcoxon_signed_rank(
    a: Any, b: Any, *, zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox"
) -> WilcoxonResult:
    """Two-sided Wilcoxon signed-rank test of b - a over tasks: ``scipy.stats.wilcoxon``
    (``method="auto"``, no continuity correction), imported here, not at module import.

    ``a``, ``b``: (n_tasks,) continuous per-task scores on the same pool. Zero differences
    (tasks where both versions score the same) carry no sign: "wilcox" (default) drops them
    before ranking, "pratt" ranks them and then drops them, "zsplit" splits them between the
    signs. If every difference is zero there is no evidence either way: p = 1, statistic 0
    (scipy would return NaN with a warning).

    scipy's "auto" method decides: more than 50 tasks -> normal approximation with the tie
    correction; otherwise the exact null distribution when there are neither ties nor zeros,
    all 2^n sign flips (a permutation test) when n <= 13, the normal approximation above that.
    The sign-flip case runs ``scipy.stats.permutation_test`` with a vectorized statistic (the
    ranks of |d| do not change under sign flips): ``scipy.stats.wilcoxon`` evaluates its
    statistic one flip at a time there, ~0.6 s at 12 tasks, ~1.3 s at 13, for the same p-value.
    """
    a, b = _vector(a, "a"), _vector(b, "b")
    _same_tasks(a, b)
    if zero_method not in ("wilcox", "pratt", "zsplit"):
        raise InvalidScores(
            f"zero_method: expected wilcox, pratt or zsplit, actually: {zero_method!r}"
        )
    d = b - a
    nonzero = d != 0
    n_zero = int(d.size - np.count_nonzero(nonzero))
    if n_zero == d.size:
        return WilcoxonResult(0.0, 1.0, d.size, n_zero, zero_method)
    from scipy import stats

    magnitudes = np.abs(d[nonzero])
    has_ties = np.unique(magnitudes).size < magnitudes.size
    if d.size <= 13 and (has_ties or n_zero > 0):
        statistic, p = _signed_rank_flips(stats, d, zero_method)
    else:
        result = stats.wilcoxon(d, zero_method=zero_method, method="auto")
        statistic, p = float(result.statistic), float(result.pvalue)
    return WilcoxonResult(statistic, float(min(max(p, 0.0), 1.0)), d.size, n_zero, zero_method)


def _signed_rank_flips(stats: Any, d: np.ndarray, zero_method: str) -> tuple[float, float]:
    """(statistic, p) of scipy.stats.wilcoxon's exact sign-flip test (n <= 13), vectorized."""
    nonzero = d != 0
    if zero_method == "wilcox":  # zeros are dropped before ranking: rank 0, never positive
        ranks = np.zeros(d.size)
        ranks[nonzero] = stats.rankdata(np.abs(d[nonzero]))
    else:
        ranks = stats.rankdata(np.abs(d))
    zero_half = float(ranks[~nonzero].sum()) / 2 if zero_method == "zsplit" else 0.0

    def r_plus(x: np.ndarray, axis: int = -1) -> np.ndarray:  # x: sign-flipped copies of d
        return np.sum((np.moveaxis(x, axis, -1) > 0) * ranks, axis=-1) + zero_half

    observed = float(r_plus(d))
    r_minus = float(np.sum((d < 0) * ranks)) + zero_half
    test = stats.permutation_test(
        (d,), r_plus, permutation_type="samples", vectorized=True, alternative="two-sided"
    )
    return min(observed, r_minus), float(test.pvalue)


def _binary(arr: np.ndarray) -> bool:
    return bool(np.all((arr == 0) | (arr == 1)))


def benjamini_hochberg(p_values: Any, alpha: float = 0.05) -> BHResult:
    """Benjamini-Hochberg step-up: adjusted p-values and which hypotheses to reject at FDR alpha.

    ``p_values``: (m,). adjusted_(i) = min_{j >= i} p_(j) m / j (capped at 1), computed by
    ``scipy.stats.false_discovery_control(p, method="bh")``; rejected = adjusted <= alpha.
    Use when one candidate is compared on many task families or many candidates at once.
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise InvalidScores(f"expected a 1-D array of p-values, got shape {p.shape}")
    if p.size and (not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1):
        raise InvalidScores("expected p-values in [0, 1] (finite), got values outside it")
    if not 0.0 < alpha < 1.0:
        raise InvalidScores(f"expected 0 < alpha < 1, got {alpha}")
    if p.size:
        from scipy import stats

        adjusted = np.asarray(stats.false_discovery_control(p, method="bh"), dtype=float)
    else:
        adjusted = np.empty(0)
    rejected = adjusted <= alpha
    adjusted.setflags(write=False)
    rejected.setflags(write=False)
    return BHResult(adjusted, rejected, float(alpha), int(rejected.sum()))


# ----------------------------------------------------------------------------- pool, sequential
def _examples(ids: list[str], k: int = 3) -> str:
    shown = ", ".join(repr(t) for t in ids[:k])
    return shown + (", ..." if len(ids) > k else "")


def _unique(ids: Iterable[str], side: str) -> set[str]:
    counts = Counter(str(t) for t in ids)
    dupes = sorted(t for t, count in counts.items() if count > 1)
    if dupes:
        raise InvalidScores(
            f"expected each task once in pool {side}, got {len(dupes)} duplicated task id(s) "
            f"({_examples(dupes)})",
            fix="keep one score per task (average repeated evals first)",
        )
    return set(counts)


def require_same_pool(
    tasks_a: Iterable[str], tasks_b: Iterable[str], *, intersect: bool = False
) -> list[str]:
    """The sorted task ids both versions were scored on; raise :class:`PoolMismatch` if they differ.

    A paired comparison is only valid on one task pool: a version scored on easier tasks would
    look better. With ``intersect=True`` a mismatch is accepted and the common tasks returned
    (still an error if there are none).
    """
    set_a, set_b = _unique(tasks_a, "A"), _unique(tasks_b, "B")
    common = sorted(set_a & set_b)
    only_a, only_b = sorted(set_a - set_b), sorted(set_b - set_a)
    if (only_a or only_b) and not intersect:
        raise PoolMismatch(
            f"expected both versions scored on the same task pool, got {len(only_a)} task(s) "
            f"only in A ({_examples(only_a) or 'none'}) and {len(only_b)} only in B "
            f"({_examples(only_b) or 'none'}); {len(common)} in common",
            fix="re-run the eval of both versions on the same pool, or compare on the common "
            "tasks (intersect=True)",
            only_a=len(only_a),
            only_b=len(only_b),
            common=len(common),
            examples_only_a=only_a[:3],
            examples_only_b=only_b[:3],
        )
    if not common:
        raise PoolMismatch(
            f"expected at least one task in common, got 0 ({len(set_a)} in A, {len(set_b)} in B)",
            fix="score both versions on the same task pool",
            only_a=len(only_a),
            only_b=len(only_b),
            common=0,
        )
    return common


def _spend(kind: str, alpha: float, t: float) -> float:
    """Cumulative alpha spent at information fraction t (Lan & DeMets 1983), two-sided."""
    if t >= 1.0:
        return alpha
    if kind == "obrien_fleming":
        return 2.0 * (1.0 - _NORMAL.cdf(_NORMAL.inv_cdf(1.0 - alpha / 2.0) / math.sqrt(t)))
    return alpha * math.log1p((math.e - 1.0) * t)  # pocock


def alpha_spending(
    alpha: float,
    look: int,
    max_looks: int,
    kind: Literal["obrien_fleming", "pocock"] = "obrien_fleming",
) -> AlphaSpend:
    """The alpha to test at interim look ``look`` (1-based) of ``max_looks`` equally spaced looks.

    Lan-DeMets spending: the cumulative alpha at information fraction t = look / max_looks is
    2 (1 - Phi(z_{1-alpha/2} / sqrt(t))) (O'Brien-Fleming type: almost nothing early, nearly
    all of alpha at the last look) or alpha ln(1 + (e - 1) t) (Pocock type). ``nominal`` is
    this look's increment; the increments sum to alpha, so by the union bound the chance of
    ever promoting a version that is not better stays <= alpha however many looks are taken.

    Decision rule at each look: compute the CI at confidence 1 - nominal (e.g.
    ``difference(..., confidence=1 - spend.nominal)``); promote only if it lies entirely above
    the threshold (0, or the minimum gain worth having); reject if it lies entirely below;
    if it straddles the threshold and looks remain, "need more seeds" — run the next batch
    and look again; at the last look a straddling CI means not promoted. A bootstrap CI at a
    tiny nominal alpha needs B >= 10 / nominal resamples (early O'Brien-Fleming looks spend
    ~1e-5); the bootstrap functions refuse a B too small for their confidence.
    """
    if not 0.0 < alpha < 1.0:
        raise InvalidScores(f"expected 0 < alpha < 1, got {alpha}")
    if int(max_looks) != max_looks or max_looks < 1:
        raise InvalidScores(f"expected max_looks to be a positive integer, got {max_looks}")
    if int(look) != look or not 1 <= look <= max_looks:
        raise InvalidScores(f"expected 1 <= look <= max_looks={max_looks}, got look={look}")
    if kind not in ("obrien_fleming", "pocock"):
        raise InvalidScores(f"expected kind 'obrien_fleming' or 'pocock', got {kind!r}")
    t = look / max_looks
    spent = min(alpha, _spend(kind, alpha, t))
    before = min(spent, _spend(kind, alpha, (look - 1) / max_looks)) if look > 1 else 0.0
    return AlphaSpend(spent - before, spent, t, int(look), int(max_looks), kind)


# ----------------------------------------------------------------------------- run-level comparison
IDENTICAL_RUNS_NOTE = (
    "its runs are identical copies (a deterministic policy, or a domain that ignores "
    "the seed): they count as one run, and more seeds add nothing"
)


@dataclass(frozen=True)
class SpreadTerm:
    """What one version (one commit) contributes to the tree's run-to-run spread."""

    runs: int  #: distinct runs (seeds) of the version
    ss: float  #: sum of squared deviations of its runs' mean scores from their mean
    identical: bool  #: >= 2 runs whose per-task scores are all equal: copies, not replicates


@dataclass(frozen=True)
class RunSpread:
    """The run-to-run spread of a run's mean score, pooled over the comparable versions of a tree.

    ``sd`` is sqrt(sum of within-version squared deviations / sum of (runs - 1)) over versions
    with two or more runs that are not identical copies; None when there are none.
    """

    sd: float | None
    df: int  #: sum of (runs - 1) over the versions pooled
    versions: int  #: versions pooled (>= 2 runs that differ)
    runs: int  #: their runs
    identical_versions: int  #: versions with >= 2 runs that are identical copies (left out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sd": self.sd,
            "df": self.df,
            "versions": self.versions,
            "runs": self.runs,
            "identical_versions": self.identical_versions,
        }


def runs_identical(matrix: Any) -> bool:
    """True when a (n_runs, n_tasks) matrix has >= 2 rows and every row equals the first."""
    x = np.asarray(matrix, dtype=float)
    return x.ndim == 2 and x.shape[0] >= 2 and bool(np.all(x == x[0]))


def spread_term(matrix: Any) -> SpreadTerm:
    """The :class:`SpreadTerm` of one version's (n_runs, n_tasks) scores (one row per seed)."""
    x = _matrix(matrix, "matrix")
    means = x.mean(axis=1)
    identical = runs_identical(x)
    ss = 0.0 if identical else float(np.sum((means - means.mean()) ** 2))
    return SpreadTerm(int(x.shape[0]), ss, identical)


def pooled_spread(terms: Iterable[SpreadTerm]) -> RunSpread:
    """Pool the run-to-run variance of a run's mean score over versions (:func:`spread_term` each).

    Within-version deviations only, so versions of different quality pool fine; versions whose
    runs are identical copies are counted apart (their zero spread says nothing about the
    spread of versions whose runs differ).
    """
    ss, df, versions, runs, identical = 0.0, 0, 0, 0, 0
    for term in terms:
        if term.runs < 2:
            continue
        if term.identical:
            identical += 1
            continue
        ss += term.ss
        df += term.runs - 1
        versions += 1
        runs += term.runs
    sd = math.sqrt(ss / df) if df > 0 else None
    return RunSpread(sd, df, versions, runs, identical)


@dataclass(frozen=True)
class Difference:
    """Version b against version a on one task pool: one Δ, one CI, one p (:func:`difference`)."""

    delta: float  #: mean over tasks of b's seed means minus a's
    ci: tuple[float, float]  #: two-sided at ``confidence``; its lower end is the one-sided bound
    confidence: float
    p_value: float  #: one-sided: H0 "Δ <= threshold" (that b is not better than a by more than it)
    threshold: float
    se: float  #: standard error of Δ (the larger of ``se_runs`` and ``se_tasks``)
    df: float  #: degrees of freedom of the t distribution used
    unit: str  #: "runs" (runs are the units) or "tasks" (tasks are the units)
    n_tasks: int
    n_runs: tuple[int, int]  #: distinct runs (seeds) of a and b
    identical: tuple[bool, bool]  #: a side's runs are identical copies (count as one)
    sd: tuple[float | None, float | None]  #: run-to-run SD used for each side
    sd_source: tuple[str, str]  #: "own", "tree", "identical" or "unknown" per side
    se_runs: float | None  #: SE from the run-to-run spread (None when it is unknown)
    se_tasks: float | None  #: SE from the per-task differences (None with one task)
    caveat: str | None

    @property
    def effective_runs(self) -> tuple[int, int]:
        """Runs that count: identical copies count once."""
        return (
            1 if self.identical[0] else self.n_runs[0],
            1 if self.identical[1] else self.n_runs[1],
        )


def _side_sd(x: np.ndarray, spread: RunSpread | None) -> tuple[float | None, float, str, bool]:
    """(sd, df, source, identical) of one side's run-to-run spread."""
    if runs_identical(x):
        return 0.0, math.inf, "identical", True
    n = x.shape[0]
    pooled = spread.sd if spread is not None else None
    if n >= 2:
        own = float(x.mean(axis=1).std(ddof=1))
        if pooled is not None and pooled >= own:
            return pooled, float(spread.df), "tree", False  # type: ignore[union-attr]
        return own, float(n - 1), "own", False
    if pooled is not None:
        return pooled, float(spread.df), "tree", False  # type: ignore[union-attr]
    if spread is not None and spread.identical_versions and not spread.versions:
        return 0.0, math.inf, "identical", False  # every other version of the tree is deterministic
    return None, 0.0, "unknown", False


def difference(
    a: Any,
    b: Any,
    *,
    spread: RunSpread | None = None,
    confidence: float = 0.95,
    threshold: float = 0.0,
) -> Difference:
    """Is b better than a on one task pool? One Δ, one CI and one p, from one t distribution.

    ``a``: (n_runs_a, n_tasks), ``b``: (n_runs_b, n_tasks): per-task scores, one row per run
    (seed; repeated runs of a seed averaged first), the same tasks in the same order.
    Δ = mean over tasks of b's run means minus a's.

    Two standard errors, and the larger is used (the smaller source of noise is nearly
    contained in the larger):

    - **runs as units**: each side's run-to-run SD of a run's mean score over n runs,
      SE² = sd_a²/n_a + sd_b²/n_b. A side's SD is the tree's pooled estimate (``spread``:
      :func:`pooled_spread` over all comparable versions, many degrees of freedom) or the
      side's own estimate when that is larger; a side whose runs are identical copies has
      SD 0 and counts as one run. Degrees of freedom: Welch-Satterthwaite.
    - **tasks as units**: SE = SD of the per-task differences / sqrt(n_tasks), n_tasks - 1
      degrees of freedom (no more than the run-level spread's when that is estimated and
      nonzero: the seed's shift common to all tasks of a run is not in the per-task SD, so a
      run-level spread that came out small on few runs does not make Δ surer); what is left
      when runs are copies of each other (deterministic runs: the comparison says so, and
      copies are never counted as independent).

    CI: Δ ± t(df, 1 - (1 - confidence)/2) · SE; p: one-sided, P(T > (Δ - threshold)/SE).
    """
    a, b = _matrix(a, "a"), _matrix(b, "b")
    _same_tasks(a, b)
    if not 0.0 < confidence < 1.0:
        raise InvalidScores(f"expected 0 < confidence < 1, got {confidence}")
    n_tasks = a.shape[1]
    per_task = b.mean(axis=0) - a.mean(axis=0)
    delta = float(per_task.mean())
    sd_a, df_a, src_a, same_a = _side_sd(a, spread)
    sd_b, df_b, src_b, same_b = _side_sd(b, spread)
    n_a = 1 if same_a else a.shape[0]
    n_b = 1 if same_b else b.shape[0]
    se_runs, df_runs = _welch((sd_a, df_a, n_a), (sd_b, df_b, n_b))
    se_tasks = float(per_task.std(ddof=1) / math.sqrt(n_tasks)) if n_tasks >= 2 else None
    if se_runs is None and se_tasks is None:
        raise InvalidScores(
            "expected two tasks, or a run-to-run spread (two runs of a version, or comparable runs in "
            "the tree), to estimate the noise of Δ; got one task and one run a side",
            fix="run more seeds or score more tasks",
        )
    unit, se, df = _unit(se_runs, df_runs, se_tasks, n_tasks)
    ci, p = _t_interval(delta, se, df, confidence, threshold)
    caveats = []
    if se_runs is None:
        caveats.append(
            "one run a side and no comparable runs in the tree: the run-to-run spread is "
            "unknown, so the CI counts the tasks only and is too narrow; run a second seed"
        )
    return Difference(
        delta=delta,
        ci=(float(ci[0]), float(ci[1])),
        confidence=float(confidence),
        p_value=float(min(1.0, max(0.0, p))),
        threshold=float(threshold),
        se=float(se),
        df=float(df),
        unit=unit,
        n_tasks=int(n_tasks),
        n_runs=(int(a.shape[0]), int(b.shape[0])),
        identical=(same_a, same_b),
        sd=(sd_a, sd_b),
        sd_source=(src_a, src_b),
        se_runs=se_runs,
        se_tasks=se_tasks,
        caveat="; ".join(caveats) or None,
    )


def _welch(
    side_a: tuple[float | None, float, int], side_b: tuple[float | None, float, int]
) -> tuple[float | None, float | None]:
    """(SE, Welch-Satterthwaite degrees of freedom) of Δ with the runs as units, from each side's
    (run-to-run SD, its degrees of freedom, runs that count); (None, None) when a SD is unknown."""
    (sd_a, df_a, n_a), (sd_b, df_b, n_b) = side_a, side_b
    if sd_a is None or sd_b is None:
        return None, None
    va, vb = sd_a**2 / n_a, sd_b**2 / n_b
    den = (va**2 / df_a if va > 0 else 0.0) + (vb**2 / df_b if vb > 0 else 0.0)
    return math.sqrt(va + vb), (va + vb) ** 2 / den if den > 0 else math.inf


def _unit(
    se_runs: float | None, df_runs: float | None, se_tasks: float | None, n_tasks: int
) -> tuple[str, float, float]:
    """(unit, SE, df) of Δ: the larger SE of the two units, runs or tasks (one is known)."""
    if se_tasks is not None and (se_runs is None or se_tasks > se_runs):
        df = float(n_tasks - 1)
        if se_runs and df_runs is not None:
            # the seed's shift, common to every task of a run, is in the run-level spread only:
            # the per-task SE cannot be surer of the noise than that spread's own estimate
            df = min(df, float(df_runs))
        return "tasks", se_tasks, df
    return "runs", float(se_runs), float(df_runs)  # type: ignore[arg-type]


def _t_interval(
    delta: float, se: float, df: float, confidence: float, threshold: float
) -> tuple[tuple[float, float], float]:
    """(two-sided CI at ``confidence``, one-sided p of "Δ <= threshold") from Student's t with
    ``df`` degrees of freedom (the normal distribution when infinite); exact when SE is 0."""
    from scipy import stats as sps

    if not se > 0:
        return (delta, delta), 0.0 if delta > threshold else 1.0
    q = (
        float(sps.t.ppf(1 - (1 - confidence) / 2, df))
        if math.isfinite(df)
        else _NORMAL.inv_cdf(1 - (1 - confidence) / 2)
    )
    z = (delta - threshold) / se
    p = float(sps.t.sf(z, df)) if math.isfinite(df) else 1.0 - _NORMAL.cdf(z)
    return (delta - q * se, delta + q * se), p
