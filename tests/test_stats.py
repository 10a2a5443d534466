"""diagnostics/stats.py: each statistic against scipy or a hand computation on small arrays."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.stats

from evotree.diagnostics import stats
from evotree.diagnostics.seed_stats import iqm, probability_of_improvement, stratified_bootstrap_ci
from evotree.diagnostics.stats import (
    InvalidScores,
    PoolMismatch,
    alpha_spending,
    avg_at_k,
    benjamini_hochberg,
    normalized_score,
    paired_bootstrap,
    pass_at_k,
    require_same_pool,
    wilcoxon_signed_rank,
)
from evotree.core.errors import EvotreeError


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------- sample metrics
def test_pass_at_k_by_hand() -> None:
    # n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(5, 2, 2).mean == pytest.approx(0.7)
    # per task: c=0 -> 0; n-c < k -> 1 exactly; k=1 -> c/n
    res = pass_at_k([5, 5, 5], [0, 4, 2], 2)
    np.testing.assert_allclose(res.per_task, [0.0, 1.0, 0.7])
    assert res.mean == pytest.approx(1.7 / 3) and res.metric == "pass@k" and res.k == 2
    assert pass_at_k(10, 3, 1).mean == pytest.approx(0.3)


def test_pass_at_k_matches_binomials_and_rejects_bad_counts() -> None:
    n, c, k = 200, 37, 10
    exact = 1 - math.comb(n - c, k) / math.comb(n, k)
    assert pass_at_k(n, c, k).mean == pytest.approx(exact, rel=1e-12)
    with pytest.raises(InvalidScores, match="at least k=6 samples"):
        pass_at_k(5, 2, 6)
    with pytest.raises(InvalidScores, match="0 <= c <= n"):
        pass_at_k(5, 6, 1)


def test_avg_at_k_by_hand() -> None:
    res = avg_at_k([[1, 0, 1, 1], [0, 0, 0, 1]])
    np.testing.assert_allclose(res.per_task, [0.75, 0.25])
    assert res.mean == 0.5 and res.k == 4 and res.metric == "avg@k"


def test_normalized_score_by_hand() -> None:
    out = normalized_score([5.0, 10.0, 20.0, -3.0], random=0.0, expert=10.0)
    np.testing.assert_allclose(out, [0.5, 1.0, 1.2, 0.0])
    np.testing.assert_allclose(
        normalized_score([[2.0, 3.0]], random=[1.0, 1.0], expert=[3.0, 5.0], clip=None),
        [[0.5, 0.5]],
    )
    with pytest.raises(InvalidScores, match="expert != random"):
        normalized_score([1.0], random=[1.0], expert=[1.0])


# ----------------------------------------------------------------------------- paired tests
def test_benjamini_hochberg_by_hand_and_vs_scipy() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.2, 0.5])
    res = benjamini_hochberg(p, alpha=0.05)
    # sorted 0.005 .01 .03 .04 .2 .5, times 6/rank: .03 .03 .06 .06 .24 .5 (already monotone)
    np.testing.assert_allclose(res.adjusted, [0.03, 0.06, 0.06, 0.03, 0.24, 0.5])
    np.testing.assert_allclose(res.adjusted, scipy.stats.false_discovery_control(p, method="bh"))
    assert res.rejected.tolist() == [True, False, False, True, False, False]
    assert res.n_rejected == 2
    q = rng(3).uniform(size=40) ** 3
    np.testing.assert_allclose(
        benjamini_hochberg(q).adjusted, scipy.stats.false_discovery_control(q, method="bh")
    )
    empty = benjamini_hochberg([])
    assert empty.n_rejected == 0 and empty.adjusted.shape == (0,) and empty.rejected.shape == (0,)
    assert benjamini_hochberg([1.0, 1.0]).adjusted.tolist() == [1.0, 1.0]
    assert benjamini_hochberg([0.01]).rejected.tolist() == [True]
    with pytest.raises(InvalidScores, match=r"p-values in \[0, 1\]"):
        benjamini_hochberg([0.5, 1.5])


def test_wilcoxon_matches_scipy_and_all_zero_is_p_one() -> None:
    a = np.array([0.50, 0.61, 0.40, 0.72, 0.33, 0.58, 0.45, 0.66])
    b = np.array([0.55, 0.60, 0.48, 0.80, 0.33, 0.70, 0.41, 0.75])
    res = wilcoxon_signed_rank(a, b)
    ref = scipy.stats.wilcoxon(b - a)
    assert (res.statistic, res.p_value) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))
    assert res.n_zero == 1 and res.n_tasks == 8
    ref_pratt = scipy.stats.wilcoxon(b - a, zero_method="pratt")
    assert wilcoxon_signed_rank(a, b, zero_method="pratt").p_value == pytest.approx(
        ref_pratt.pvalue
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same = wilcoxon_signed_rank(a, a)
    assert (same.p_value, same.statistic, same.n_zero) == (1.0, 0.0, 8)


def test_paired_bootstrap_bca_agrees_with_scipy() -> None:
    r = rng(1)
    a = r.normal(0.5, 0.2, 40)
    b = a + r.gamma(2.0, 0.02, 40) - 0.03  # skewed differences: BCa differs from percentile
    ours = paired_bootstrap(a, b, B=4000, rng=rng(2))
    ref = scipy.stats.bootstrap(
        (a, b),
        lambda x, y, axis: np.mean(y, axis=axis) - np.mean(x, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=4000,
        method="BCa",
        rng=rng(3),
    )
    assert ours.method == "bca" and ours.fallback_reason is None
    assert ours.delta == pytest.approx(np.mean(b - a))
    assert ours.se == pytest.approx(ref.standard_error, rel=0.1)
    for mine, theirs, mc in zip(ours.ci, ref.confidence_interval, ours.mc_se):
        # two independent bootstraps: their difference has SD ~ sqrt(2) * MC standard error
        assert abs(mine - theirs) < 4 * math.sqrt(2) * mc


def test_paired_bootstrap_percentile_matches_numpy_quantiles() -> None:
    a, b = np.zeros(5), np.array([0.1, 0.2, 0.3, 0.4, 1.0])
    mean = lambda x, axis=-1: np.mean(x, axis=axis)  # not np.mean itself: the plain path
    res = paired_bootstrap(a, b, statistic=mean, B=2000, rng=rng(4), method="percentile")
    idx = rng(4).integers(0, 5, size=(2000, 5), dtype=np.int32)
    expected = np.quantile(b[idx].mean(axis=1), [0.025, 0.975])
    np.testing.assert_allclose(res.ci, expected)
    assert res.method == "percentile" and res.fallback_reason is None


@pytest.mark.parametrize("d", [[0.0, 1.0, 10.0], [0.0, 1.0, 10.0, 100.0]])
def test_pairwise_table_bootstrap_of_the_mean_is_exact(d: list[float]) -> None:
    """np.mean draws two indices at once from the n*n table: same distribution as n draws."""
    from itertools import product

    n, B = len(d), 40_000
    exact: dict[float, float] = {}
    for combo in product(d, repeat=n):  # every index tuple is equally likely
        key = round(sum(combo) / n, 9)
        exact[key] = exact.get(key, 0.0) + 1 / n**n
    means = stats._resample_mean_pairs(np.array(d), B, rng(20))
    values, counts = np.unique(np.round(means, 9), return_counts=True)
    assert set(values.tolist()) <= set(exact)
    for value, count in zip(values.tolist(), counts.tolist()):
        p = exact[value]
        assert abs(count / B - p) < 5 * math.sqrt(p * (1 - p) / B) + 1e-12


def test_bootstrap_se_of_the_mean_matches_theory() -> None:
    d = rng(21).normal(0.0, 1.0, 500)
    res = paired_bootstrap(np.zeros(500), d, B=10_000, rng=rng(22))
    # SE of a resample mean: population SD of d / sqrt(n); an SD estimate from B draws has
    # relative SE ~ 1 / sqrt(2B) = 0.7 %
    assert res.se == pytest.approx(d.std() / math.sqrt(500), rel=0.03)


def test_bca_falls_back_to_percentile_on_degenerate_data() -> None:
    a = np.array([0.2, 0.4, 0.6, 0.8])
    res = paired_bootstrap(a, a + 0.1, B=500, rng=rng())
    assert res.method == "percentile" and res.fallback_reason == "all differences are equal"
    assert res.ci == pytest.approx((0.1, 0.1)) and res.delta == pytest.approx(0.1)
    # median of [0,0,0,0,0,1]: every leave-one-out median is 0 -> zero-variance jackknife
    res = paired_bootstrap(np.zeros(6), [0, 0, 0, 0, 0, 1.0], statistic=np.median, B=500, rng=rng())
    assert res.method == "percentile" and res.fallback_reason == "zero-variance jackknife"
    single = paired_bootstrap([0.3], [0.5], B=200, rng=rng())
    assert single.method == "percentile" and single.ci == pytest.approx((0.2, 0.2))


def test_same_seed_same_ci() -> None:
    a, b = rng(5).uniform(size=30), rng(6).uniform(size=30)
    first = paired_bootstrap(a, b, B=1000, rng=rng(7))
    assert first == paired_bootstrap(a, b, B=1000, rng=rng(7))
    assert first.ci != paired_bootstrap(a, b, B=1000, rng=rng(8)).ci
    with pytest.raises(InvalidScores, match="numpy.random.Generator"):
        paired_bootstrap(a, b, rng=7)  # type: ignore[arg-type]


def test_too_few_resamples_for_the_confidence_is_refused() -> None:
    # a 99.9 % CI from 1,000 resamples would be the extreme draws: too narrow
    with pytest.raises(InvalidScores, match="expected B >= 10000 resamples for a 0.999 CI"):
        paired_bootstrap([0.1, 0.2], [0.3, 0.1], B=1000, confidence=0.999, rng=rng())
    with pytest.raises(InvalidScores, match="B >= 200"):
        paired_bootstrap([0.1, 0.2], [0.3, 0.1], B=100, rng=rng())


def test_bad_scores_are_refused_with_the_actual_value() -> None:
    with pytest.raises(InvalidScores, match="1 NaN/inf value"):
        paired_bootstrap([0.1, np.nan], [0.2, 0.3], rng=rng())
    with pytest.raises(InvalidScores, match="got 3 \\(A\\) and 2 \\(B\\)") as info:
        wilcoxon_signed_rank([1.0, 2.0, 3.0], [1.0, 2.0])
    assert isinstance(info.value, EvotreeError) and isinstance(info.value, ValueError)


# ----------------------------------------------------------------------------- across seeds
def test_iqm_by_hand_and_vs_scipy() -> None:
    scores = np.array([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 100.0]])
    assert iqm(scores) == pytest.approx(4.5)  # middle of 1..7,100 is 3,4,5,6
    x = rng(10).normal(size=(5, 7))
    assert iqm(x) == pytest.approx(scipy.stats.trim_mean(x, 0.25, axis=None))
    batch = rng(11).normal(size=(4, 3, 6))
    np.testing.assert_allclose(iqm(batch), [iqm(m) for m in batch])


def test_stratified_bootstrap_resamples_runs_within_tasks() -> None:
    # every task has identical runs: any within-task resample is the same matrix
    same_runs = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])
    res = stratified_bootstrap_ci(same_runs, B=200, rng=rng())
    assert res.ci == pytest.approx((2.0, 2.0)) and res.point == pytest.approx(2.0)
    x = rng(12).normal(size=(4, 8))
    mean = stratified_bootstrap_ci(x, lambda s: s.mean(axis=(-2, -1)), B=3000, rng=rng(13))
    assert mean.ci[0] < x.mean() < mean.ci[1]
    # SE of the mean under within-task resampling: sqrt(sum_t var_t / n_runs) / n_tasks
    se = math.sqrt(np.sum(x.var(axis=0) / 4)) / 8
    assert mean.ci[1] - mean.ci[0] == pytest.approx(2 * 1.96 * se, rel=0.15)
    with pytest.raises(InvalidScores, match="reduce the last two axes"):
        stratified_bootstrap_ci(x, np.mean, B=200, rng=rng())


def test_probability_of_improvement() -> None:
    x = rng(14).normal(size=(3, 5))
    same = probability_of_improvement(x, x.copy(), B=500, rng=rng())
    assert same.probability == 0.5 and np.all(same.per_task == 0.5)
    dominated = probability_of_improvement(x + 10, x, B=500, rng=rng())
    assert dominated.probability == 1.0 and dominated.ci == (1.0, 1.0)
    # one task by hand: pairs (1,2)=0 (1,0)=1 (2,2)=.5 (2,0)=1 -> 2.5/4
    small = probability_of_improvement([[1.0], [2.0]], [[2.0], [0.0]], B=200, rng=rng())
    assert small.probability == pytest.approx(0.625)
    y = rng(15).normal(size=(4, 5))
    u = [scipy.stats.mannwhitneyu(x[:, t], y[:, t]).statistic / 12 for t in range(5)]
    res = probability_of_improvement(x, y, B=2000, rng=rng(16))
    np.testing.assert_allclose(res.per_task, u)
    assert res.ci[0] <= res.probability <= res.ci[1]


def test_probability_of_improvement_ci_matches_a_plain_loop_bootstrap() -> None:
    x, y = rng(27).normal(size=(6, 5)), rng(28).normal(size=(5, 5)) + 0.3
    res = probability_of_improvement(x, y, B=2000, rng=rng(29))
    loop_rng, draws = rng(30), []
    for _ in range(2000):  # rliable's stratified bootstrap, written out
        per_task = []
        for t in range(5):
            xs = x[loop_rng.integers(0, 6, 6), t]
            ys = y[loop_rng.integers(0, 5, 5), t]
            per_task.append(np.mean((xs[:, None] > ys) + 0.5 * (xs[:, None] == ys)))
        draws.append(np.mean(per_task))
    # both are 2,000-draw estimates of the same quantiles (steps of 1/300 here)
    np.testing.assert_allclose(res.ci, np.quantile(draws, [0.025, 0.975]), atol=0.03)


# ----------------------------------------------------------------------------- seed-aware
# ----------------------------------------------------------------------------- pool, sequential
def test_pool_mismatch_message_and_intersect() -> None:
    a = ["t1", "t2", "t3", "t4", "t5"]
    b = ["t3", "t4", "t5", "t6"]
    with pytest.raises(
        PoolMismatch,
        match=r"2 task\(s\) only in A \('t1', 't2'\) and 1 only in B "
        r"\('t6'\); 3 in common",
    ) as info:
        require_same_pool(a, b)
    err = info.value
    assert err.exit_code == 20 and err.code == "pool_mismatch" and "intersect=True" in err.fix
    assert err.details["only_a"] == 2 and err.details["examples_only_b"] == ["t6"]
    assert require_same_pool(a, b, intersect=True) == ["t3", "t4", "t5"]
    assert require_same_pool(["b", "a"], ["a", "b"]) == ["a", "b"]
    with pytest.raises(PoolMismatch, match="at least one task in common"):
        require_same_pool(["x"], ["y"], intersect=True)
    with pytest.raises(InvalidScores, match="duplicated"):
        require_same_pool(["x", "x"], ["x"])


@pytest.mark.parametrize("kind", ["obrien_fleming", "pocock"])
@pytest.mark.parametrize("max_looks", [1, 2, 5, 10])
def test_alpha_spending_monotone_and_within_alpha(kind: str, max_looks: int) -> None:
    looks = [alpha_spending(0.05, k, max_looks, kind=kind) for k in range(1, max_looks + 1)]
    spent = [s.spent for s in looks]
    assert spent == sorted(spent) and spent[-1] == 0.05
    assert all(s.nominal >= 0 for s in looks)
    assert math.fsum(s.nominal for s in looks) <= 0.05 * (1 + 1e-12)


def test_alpha_spending_obrien_fleming_values() -> None:
    # t = 1/2: 2 (1 - Phi(1.959964 / sqrt(0.5))) = 2 (1 - Phi(2.771808))
    first = alpha_spending(0.05, 1, 2)
    assert first.nominal == pytest.approx(2 * scipy.stats.norm.sf(2.7718076), rel=1e-5)
    assert first.nominal == pytest.approx(0.005575, abs=1e-5)
    assert alpha_spending(0.05, 2, 2).nominal == pytest.approx(0.05 - first.nominal)
    # O'Brien-Fleming spends almost nothing at the first of five looks, Pocock much more
    assert alpha_spending(0.05, 1, 5).nominal < 1e-4 < alpha_spending(0.05, 1, 5, "pocock").nominal
    with pytest.raises(InvalidScores, match="look=6"):
        alpha_spending(0.05, 6, 5)


def test_wilcoxon_equals_scipy_on_every_branch() -> None:
    """Exact table (no ties), 2^n sign flips (ties or zeros, n <= 13), normal approximation
    (ties above 13 tasks, or more than 50): each zero method, against scipy.stats.wilcoxon."""
    r = rng(11)
    checked = 0
    for n in (5, 9, 13, 14, 30, 50, 51, 77):
        for continuous in (True, False):
            a = r.normal(size=n) if continuous else r.integers(0, 5, n) / 4
            b = a + r.normal(0.1, 1, size=n) if continuous else r.integers(0, 5, n) / 4
            for zero_method in ("wilcox", "pratt", "zsplit"):
                if np.count_nonzero(b - a) < 2:
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref = scipy.stats.wilcoxon(b - a, zero_method=zero_method)
                res = wilcoxon_signed_rank(a, b, zero_method=zero_method)
                assert res.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
                assert res.p_value == pytest.approx(float(ref.pvalue), rel=1e-9, abs=1e-300)
                checked += 1
    assert checked >= 40
    with pytest.raises(InvalidScores, match="zero_method"):
        wilcoxon_signed_rank([0.1, 0.2], [0.3, 0.1], zero_method="median")  # type: ignore[arg-type]
    with pytest.raises(InvalidScores, match="zero_method"):  # checked before the all-zero shortcut
        wilcoxon_signed_rank([0.1, 0.2], [0.1, 0.2], zero_method="median")  # type: ignore[arg-type]


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize(
    "d",
    [
        [0.0, 0.5],  # one non-zero difference among zeros
        [0.0, 0.0, 0.25, -0.25],  # a tie of opposite signs, two zeros
        [0.25, 0.25, 0.25, 0.5, -0.5, 0.75, 0.0, 1.0, -1.0, 0.25, 0.5, 0.75, 1.0],  # n = 13
        [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, -0.9],  # no ties, no zeros: exact table
        [0.5] * 14 + [-0.5],  # ties at n = 14: normal approximation
    ],
)
def test_wilcoxon_tiny_and_tied_samples_equal_scipy(d: list[float], zero_method: str) -> None:
    d_arr = np.array(d)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ours must not warn on these
        res = wilcoxon_signed_rank(np.zeros(d_arr.size), d_arr, zero_method=zero_method)  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = scipy.stats.wilcoxon(d_arr, zero_method=zero_method)
    assert res.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert res.p_value == pytest.approx(float(ref.pvalue), rel=1e-12)
    assert res.n_zero == d.count(0.0) and res.n_tasks == len(d) and res.zero_method == zero_method


def test_wilcoxon_sign_flip_case_skips_scipys_one_flip_at_a_time_loop(monkeypatch) -> None:
    """Ties or zeros with <= 13 tasks: scipy.stats.wilcoxon enumerates the 2^n sign flips by
    calling its statistic once per flip (~1 s at 13 tasks); ours hands scipy's permutation_test
    a vectorized statistic. Same p-value, and scipy.stats.wilcoxon is not called."""
    a = np.array([0.0, 0.2, 0.2, 0.4, 0.6, 0.6, 0.8, 1.0, 0.4, 0.2, 0.0, 0.6, 0.8])
    b = np.array([0.2, 0.4, 0.2, 0.8, 0.4, 1.0, 1.0, 0.8, 0.8, 0.6, 0.0, 0.6, 1.0])
    expected = {
        zm: scipy.stats.wilcoxon(b - a, zero_method=zm) for zm in ("wilcox", "pratt", "zsplit")
    }

    def refuse(*args, **kwargs):
        raise AssertionError("scipy.stats.wilcoxon called on the sign-flip path")

    monkeypatch.setattr(scipy.stats, "wilcoxon", refuse)
    for zero_method, ref in expected.items():
        res = wilcoxon_signed_rank(a, b, zero_method=zero_method)  # type: ignore[arg-type]
        assert res.statistic == pytest.approx(float(ref.statistic), rel=1e-12)
        assert res.p_value == pytest.approx(float(ref.pvalue), rel=1e-12)
    with pytest.raises(
        AssertionError, match="sign-flip path"
    ):  # n > 13: scipy.stats.wilcoxon itself
        wilcoxon_signed_rank(np.r_[a, 0.5], np.r_[b, 0.7])


def test_importing_stats_does_not_import_scipy() -> None:
    """scipy.stats costs ~1 s cold: only the tests import it, at their first call (the bootstraps
    and an all-zero Wilcoxon never do)."""
    import subprocess
    import sys

    code = (
        "import sys; import evotree.diagnostics.stats as s; import numpy as np; "
        "import evotree.diagnostics.seed_stats as seeds; "
        "assert 'scipy' not in sys.modules, 'import'; "
        "s.paired_bootstrap(np.zeros(9), np.arange(9.0), B=400, rng=np.random.default_rng(0)); "
        "seeds.stratified_bootstrap_ci(np.eye(3), B=400, rng=np.random.default_rng(0)); "
        "assert 'scipy' not in sys.modules, 'bootstrap'; "
        "s.wilcoxon_signed_rank(np.zeros(9), np.zeros(9)); "
        "assert 'scipy' not in sys.modules, 'all-zero'; "
        "s.wilcoxon_signed_rank(np.zeros(9), np.arange(9.0)); "
        "assert 'scipy.stats' in sys.modules, 'test'"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
