"""The signal layer (diagnostics/signal.py): every detector on constructed runs where it must
fire and where it must not, with numbers small enough to check by hand. Real recorder, real
Parquet, real DuckDB."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_findings import analyze, build_run, codes, one

from evotree.diagnostics.signal_collapse import EchoTrap, EntropyCollapse
from evotree.diagnostics.signal_groups import DeadGroups, DeadGroupsThresholds, SolveRates
from evotree.diagnostics.signal_reward import RewardTrend
from evotree.diagnostics.signal_series import is_group_run, linear_trend, spikes
from evotree.diagnostics.signal_truncation import TruncationTrend
from evotree.diagnostics.signal_update import KlClip, NonFinite
from evotree.harness.query import connect, dead_group_ratio


def groups_at(step: int, *reward_lists: list[float], **kwargs: Any) -> list[dict[str, Any]]:
    return [
        {"step": step, "group_id": f"s{step}g{i}", "rewards": r, **kwargs}
        for i, r in enumerate(reward_lists)
    ]


def signals(metric: str, values: list[float]) -> list[tuple[int, dict[str, float]]]:
    return [(step, {metric: value}) for step, value in enumerate(values)]


# ----------------------------------------------------------------------------- helpers
def test_linear_trend_matches_scipy_linregress() -> None:
    from scipy.stats import linregress

    rng = np.random.default_rng(3)
    x = np.arange(30, dtype=float)
    y = 0.02 * x + rng.normal(0, 0.2, 30)
    mine, ref = linear_trend(x, y), linregress(x, y)
    assert mine.slope == pytest.approx(ref.slope) and mine.p_value == pytest.approx(ref.pvalue)
    assert mine.change == pytest.approx(ref.slope * 29)
    assert linear_trend([0, 1], [0, 1]) is None  # too few points
    assert linear_trend([1, 1, 1], [0, 1, 2]) is None  # one x
    flat = linear_trend([0, 1, 2, 3], [0.5] * 4)
    assert (flat.slope, flat.p_value) == (0.0, 1.0)
    line = linear_trend([0, 1, 2, 3], [0, 1, 2, 3])
    assert line.p_value == 0.0 and line.rising(0.05, 3.0) and not line.rising(0.05, 3.1)


def test_spikes_compare_with_the_median_before() -> None:
    steps = np.arange(8, dtype=float)
    values = np.array([1, 1, 2, 1, 1, 9, 1, 1], dtype=float)
    # step 5: median of the 5 values before = 1 -> 9 > 5 x 1
    assert spikes(steps, values, factor=5, window=5, min_baseline=5, floor=0) == [(5.0, 9.0, 1.0)]
    assert spikes(steps, values, factor=10, window=5, min_baseline=5, floor=0) == []
    assert spikes(steps, values, factor=5, window=5, min_baseline=6, floor=0) == []
    assert spikes(steps, values, factor=5, window=5, min_baseline=5, floor=10) == []


# ----------------------------------------------------------------------------- dead groups
def test_dead_groups_critical_above_half(tmp_path: Path) -> None:
    # 3 of 4 groups have equal rewards below the solved reward (1): 0.75 > 0.5
    build_run(
        tmp_path,
        "r1",
        groups=groups_at(0, [0.2, 0.2, 0.2], [0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.0, 1.0, 1.0]),
    )
    found = analyze(tmp_path, DeadGroups())
    assert codes(found) == ["signal.dead_groups_high"]
    f = found[0]
    assert f.severity == "critical" and f.skills == ["StdGroupFilter"]
    assert (f.evidence["dead_groups"], f.evidence["groups"], f.evidence["dead_ratio"]) == (
        3,
        4,
        0.75,
    )
    assert (f.evidence["unsolved_dead_groups"], f.evidence["solved_dead_groups"]) == (3, 0)
    assert f.evidence["dead_reward_values"] == [
        {"reward": 0.0, "groups": 1},
        {"reward": 0.2, "groups": 1},
        {"reward": 0.5, "groups": 1},
    ]


def test_dead_groups_split_solved_from_unsolved(tmp_path: Path) -> None:
    """A good run: most groups are dead because every sample is right. That is progress (info or
    warn, harder prompts), never critical, and the group filter is not the advice."""
    # 33 of 34 groups solved by every sample (as in math: correctness 1 + format 0.5), 1 all wrong
    build_run(tmp_path, "good", groups=groups_at(0, *[[1.5, 1.5, 1.5, 1.5]] * 33, [0.0] * 4))
    found = analyze(tmp_path, DeadGroups(), "good")
    assert codes(found) == ["signal.dead_groups_solved"]
    f = found[0]
    assert f.severity == "warn" and f.skills == [] and "StdGroupFilter" not in f.suggestion
    assert "harder prompts" in f.suggestion
    assert (
        f.evidence["solved_dead_groups"],
        f.evidence["unsolved_dead_groups"],
        f.evidence["dead_ratio"],
    ) == (33, 1, 1.0)
    # 3 solved, 3 unsolved of 10: each 30 % (info and warn); the whole (60 %) is no longer critical
    build_run(
        tmp_path,
        "mixed",
        groups=groups_at(0, *[[1.0, 1.0]] * 3, *[[0.0, 0.0]] * 3, *[[0.0, 1.0]] * 4),
    )
    mixed = {f.code: f for f in analyze(tmp_path, DeadGroups(), "mixed")}
    assert mixed["signal.dead_groups_solved"].severity == "info"
    assert mixed["signal.dead_groups_high"].severity == "warn"
    assert mixed["signal.dead_groups_high"].evidence["dead_ratio"] == pytest.approx(0.6)
    # the solved reward is a threshold: on a reward scale where 1 is not "correct", set it
    strict = DeadGroups(DeadGroupsThresholds(solved_reward=2.0))
    assert codes(analyze(tmp_path, strict, "good")) == ["signal.dead_groups_high"]


def test_dead_groups_and_solve_rates_only_for_group_based_runs(tmp_path: Path) -> None:
    """Gym records one rollout per episode, grouped by environment: a solved CartPole (every
    return 500) is not a dead GRPO group. Runs of single-sample groups are not judged either."""
    episodes = [
        {"step": 0, "group_id": "CartPole-v1", "task_id": f"CartPole-v1#{i}", "rewards": [500.0]}
        for i in range(8)
    ]
    episodes += [
        {"step": 0, "group_id": "Acrobot-v1", "task_id": f"Acrobot-v1#{i}", "rewards": [-80.0]}
        for i in range(8)
    ]
    build_run(tmp_path, "gym", groups=episodes)
    binary = [
        {"step": 0, "group_id": "env", "task_id": f"env#{i}", "rewards": [1.0]} for i in range(8)
    ]
    build_run(tmp_path, "episodes01", groups=binary)
    build_run(tmp_path, "single", groups=groups_at(0, *[[0.0]] * 6))
    build_run(tmp_path, "grpo", groups=groups_at(0, *[[0.0, 0.0]] * 6))
    con = connect(tmp_path)
    assert [is_group_run(con, r) for r in ("gym", "episodes01", "single", "grpo")] == [
        False,
        False,
        False,
        True,
    ]
    con.close()
    assert analyze(tmp_path, DeadGroups(), "gym") == []
    assert (
        analyze(tmp_path, SolveRates(), "episodes01") == []
        and analyze(tmp_path, DeadGroups(), "episodes01") == []
    )
    assert analyze(tmp_path, DeadGroups(), "single") == []
    assert codes(analyze(tmp_path, DeadGroups(), "grpo")) == ["signal.dead_groups_high"]


def test_dead_groups_warn_above_a_quarter_and_quiet_at_it(tmp_path: Path) -> None:
    build_run(
        tmp_path,
        "warn",
        groups=groups_at(0, [0.5, 0.5], [0.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.2, 0.4]),
    )
    build_run(
        tmp_path, "quiet", groups=groups_at(0, [1.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.2, 0.4])
    )
    f = one(analyze(tmp_path, DeadGroups(), "warn"), "signal.dead_groups_high")
    assert f.severity == "warn" and f.evidence["dead_ratio"] == 0.4
    assert analyze(tmp_path, DeadGroups(), "quiet") == []  # 1 of 4 = 0.25 is not above 0.25


def test_dead_groups_std_epsilon_and_agreement_with_the_query_layer(tmp_path: Path) -> None:
    # population std of [0, 0.0019] is 0.00095 (< 1e-3: dead); of [0, 0.0021] 0.00105 (alive)
    build_run(tmp_path, "r1", groups=groups_at(0, [0.0, 0.0019], [0.0, 0.0021], [0.0, 0.0021]))
    f = one(analyze(tmp_path, DeadGroups()), "signal.dead_groups_high")  # 1/3 > 0.25
    assert f.severity == "warn"
    assert f.evidence["dead_groups"] == 1 and f.evidence["dead_ratio"] == pytest.approx(1 / 3)
    con = connect(tmp_path)
    assert dead_group_ratio(con, "r1", threshold=1e-3) == pytest.approx(f.evidence["dead_ratio"])
    assert analyze(tmp_path, DeadGroups(DeadGroupsThresholds(std_epsilon=1e-4))) == []  # all alive


def test_dead_groups_one_finite_sample_is_dead_and_no_finite_sample_is_left_out(
    tmp_path: Path,
) -> None:
    build_run(
        tmp_path,
        "r1",
        groups=groups_at(0, [math.nan, 0.5], [math.inf, math.nan], [0.0, 1.0], [0.0, 1.0]),
    )
    f = one(analyze(tmp_path, DeadGroups()), "signal.dead_groups_high")
    # the all-NaN group is left out: 1 dead (one finite sample) of 3
    assert (
        f.evidence["dead_groups"],
        f.evidence["groups"],
        f.evidence["single_sample_groups"],
    ) == (1, 3, 1)


def test_dead_groups_nothing_without_rollouts(tmp_path: Path) -> None:
    build_run(tmp_path, "r1", signals=[(0, {"loss": 1.0})])
    assert analyze(tmp_path, DeadGroups()) == []


# ----------------------------------------------------------------------------- solve rates
def test_all_solved_fraction(tmp_path: Path) -> None:
    # 10 groups: 4 all-solved, 1 none-solved, 5 mixed -> 0.4 > 0.3
    build_run(tmp_path, "r1", groups=groups_at(0, *[[1.0, 1.0]] * 4, [0.0, 0.0], *[[0.0, 1.0]] * 5))
    found = analyze(tmp_path, SolveRates())
    assert codes(found) == ["signal.all_solved_high"]
    f = found[0]
    assert f.severity == "warn" and f.evidence["all_solved_fraction"] == 0.4
    assert f.skills == [] and "harder tasks" in f.suggestion  # learnt prompts: not a group filter
    assert f.evidence["none_solved_fraction"] == 0.1


@pytest.mark.parametrize(("none", "severity"), [(9, "high"), (6, "warn"), (5, None)])
def test_none_solved_fraction(tmp_path: Path, none: int, severity: str | None) -> None:
    build_run(
        tmp_path, "r1", groups=groups_at(0, *[[0.0, 0.0]] * none, *[[0.0, 0.5]] * (10 - none))
    )
    found = analyze(tmp_path, SolveRates())
    if severity is None:
        assert found == []  # 0.5 is not above 0.5
    else:
        f = one(found, "signal.none_solved_high")
        assert f.severity == severity and f.evidence["none_solved_fraction"] == none / 10
        assert f.skills == ["PartialPassReward", "AuxRewardTerm"]


def test_solve_rates_need_rewards_in_the_solved_range(tmp_path: Path) -> None:
    # episode returns: "solved" has no meaning
    build_run(tmp_path, "r1", groups=groups_at(0, *[[200.0, 200.0]] * 5, [0.0, 0.0]))
    assert analyze(tmp_path, SolveRates()) == []


# ----------------------------------------------------------------------------- reward trend
def reward_run(runs: Path, run_id: str, means: list[float]) -> None:
    groups = [
        g for s, m in enumerate(means) for g in groups_at(s, [m - 0.1, m + 0.1], [m + 0.1, m - 0.1])
    ]
    build_run(runs, run_id, groups=groups)


def test_reward_rising_is_quiet(tmp_path: Path) -> None:
    reward_run(tmp_path, "r1", [0.2 + 0.03 * s for s in range(20)])
    assert analyze(tmp_path, RewardTrend()) == []


def test_reward_plateau(tmp_path: Path) -> None:
    # rises for 10 steps, then alternates around 0.5 for 10: the last 10 steps are flat
    reward_run(
        tmp_path,
        "r1",
        [0.2 + 0.03 * s for s in range(10)] + [0.5 + 0.01 * (-1) ** s for s in range(10)],
    )
    f = one(analyze(tmp_path, RewardTrend()), "signal.reward_plateau")
    assert (
        f.severity == "warn"
        and f.evidence["window_steps"] == 10
        and f.evidence["window_first_step"] == 10
    )
    assert f.evidence["p_value"] > 0.05 and f.evidence["mean_reward_window"] == pytest.approx(0.5)
    assert f.evidence["source"] == "rollouts"


def test_reward_declining(tmp_path: Path) -> None:
    reward_run(tmp_path, "r1", [0.8 - 0.03 * s for s in range(20)])
    f = one(analyze(tmp_path, RewardTrend()), "signal.reward_declining")
    assert f.severity == "high"
    assert f.evidence["slope_per_step"] == pytest.approx(-0.03)
    assert f.evidence["change_over_window"] == pytest.approx(-0.27)  # steps 10..19


def test_reward_trend_from_signals_without_rollouts(tmp_path: Path) -> None:
    build_run(tmp_path, "r1", signals=signals("reward", [0.8 - 0.03 * s for s in range(20)]))
    f = one(analyze(tmp_path, RewardTrend()), "signal.reward_declining")
    assert f.evidence["source"] == "signal:reward"
    build_run(tmp_path, "r2", signals=signals("reward", [0.5, 0.6, 0.7, 0.8]))  # window too short
    assert analyze(tmp_path, RewardTrend(), "r2") == []


# ----------------------------------------------------------------------------- entropy
@pytest.mark.parametrize(("last", "severity"), [(0.1, "high"), (0.4, "warn"), (0.8, None)])
def test_entropy_collapse(tmp_path: Path, last: float, severity: str | None) -> None:
    values = list(np.linspace(1.0, last, 10))  # early = the first step, late = the last
    build_run(
        tmp_path, "r1", signals=signals("policy/entropy", values) + signals("loss", [5.0] * 10)
    )
    found = analyze(tmp_path, EntropyCollapse())
    if severity is None:
        assert found == []
        return
    f = one(found, "signal.entropy_collapse")
    assert f.severity == severity and f.evidence["metric"] == "policy/entropy"
    assert f.evidence["early"] == 1.0 and f.evidence["late"] == pytest.approx(last)
    assert f.evidence["drop"] == pytest.approx(1 - last)


def test_entropy_collapse_needs_enough_steps(tmp_path: Path) -> None:
    build_run(tmp_path, "r1", signals=signals("entropy", [1.0, 0.5, 0.01]))
    assert analyze(tmp_path, EntropyCollapse()) == []


# ----------------------------------------------------------------------------- echo trap
def echo_run(
    runs: Path,
    run_id: str,
    *,
    entropy_falls: bool = True,
    spike: bool = True,
    rollouts: bool = True,
) -> None:
    spreads = np.linspace(0.5, 0.1, 20)  # within-group reward std per step
    groups = (
        [g for s, d in enumerate(spreads) for g in groups_at(s, [0.5 - d, 0.5 + d])]
        if rollouts
        else []
    )
    entropy = np.linspace(1.0, 0.3, 20) if entropy_falls else np.ones(20)
    grad = [1.0] * 19 + [10.0 if spike else 1.1]
    sig = [(s, {"entropy": float(entropy[s]), "grad_norm": grad[s]}) for s in range(20)]
    if not rollouts:
        sig = [(s, {**m, "reward_std": float(spreads[s])}) for s, m in sig]
    build_run(runs, run_id, groups=groups, signals=sig)


def test_echo_trap_fires(tmp_path: Path) -> None:
    echo_run(tmp_path, "r1")
    f = one(analyze(tmp_path, EchoTrap()), "signal.echo_trap")
    spreads = np.linspace(0.5, 0.1, 20)
    assert (
        f.severity == "high" and f.evidence["spike_step"] == 19 and f.evidence["grad_norm"] == 10.0
    )
    assert f.evidence["grad_norm_baseline"] == 1.0
    # 19 steps before the spike, quarters of 5: steps 0-4 and 14-18
    assert f.evidence["reward_std_early"] == pytest.approx(spreads[:5].mean())
    assert f.evidence["reward_std_late"] == pytest.approx(spreads[14:19].mean())
    assert f.evidence["reward_std_source"] == "rollouts"


def test_echo_trap_from_signals(tmp_path: Path) -> None:
    echo_run(tmp_path, "r1", rollouts=False)
    f = one(analyze(tmp_path, EchoTrap()), "signal.echo_trap")
    assert f.evidence["reward_std_source"] == "signal:reward_std"


@pytest.mark.parametrize("change", [{"entropy_falls": False}, {"spike": False}])
def test_echo_trap_quiet(tmp_path: Path, change: dict[str, bool]) -> None:
    echo_run(tmp_path, "r1", **change)
    assert analyze(tmp_path, EchoTrap()) == []


# ----------------------------------------------------------------------------- KL / clip
@pytest.mark.parametrize(("level", "severity"), [(3.0, "high"), (0.8, "warn"), (0.4, None)])
def test_kl_level(tmp_path: Path, level: float, severity: str | None) -> None:
    build_run(tmp_path, "r1", signals=signals("objective/kl", [0.01] * 10 + [level] * 10))
    found = analyze(tmp_path, KlClip())
    assert "signal.kl_spike" in codes(found)  # 0.01 -> level at step 10 is also a spike
    high = [f for f in found if f.code == "signal.kl_high"]
    if severity is None:
        assert high == []
    else:
        assert high[0].severity == severity and high[0].evidence["late_mean"] == pytest.approx(
            level
        )
        assert high[0].evidence["metric"] == "objective/kl"


def test_kl_spike_and_floor(tmp_path: Path) -> None:
    build_run(tmp_path, "r1", signals=signals("kl", [0.01] * 15 + [0.5] + [0.01] * 4))
    f = one(analyze(tmp_path, KlClip()), "signal.kl_spike")
    assert (f.evidence["step"], f.evidence["value"], f.evidence["baseline"]) == (15, 0.5, 0.01)
    assert codes(analyze(tmp_path, KlClip())) == ["signal.kl_spike"]
    build_run(tmp_path, "r2", signals=signals("kl", [0.001] * 15 + [0.04] + [0.001] * 4))
    assert analyze(tmp_path, KlClip(), "r2") == []  # 40x, but below the 0.05 floor


def test_kl_matches_whole_name_parts_only(tmp_path: Path) -> None:
    build_run(tmp_path, "r1", signals=signals("rewards/checklist/mean", [0.01] * 10 + [5.0] * 10))
    assert analyze(tmp_path, KlClip()) == []


@pytest.mark.parametrize(("level", "severity"), [(0.9, "high"), (0.3, "warn"), (0.1, None)])
def test_clip_ratio(tmp_path: Path, level: float, severity: str | None) -> None:
    build_run(
        tmp_path,
        "r1",
        signals=signals("clip_ratio/region_mean", [level] * 20)
        + signals("completions/clipped_ratio", [0.9] * 20),
    )  # the truncation signal is not a clip ratio
    found = analyze(tmp_path, KlClip())
    if severity is None:
        assert found == []
    else:
        f = one(found, "signal.clip_ratio_high")
        assert f.severity == severity and f.evidence["late_means"] == {
            "clip_ratio/region_mean": pytest.approx(level)
        }


def test_clip_ratio_spike(tmp_path: Path) -> None:
    build_run(
        tmp_path, "r1", signals=signals("clip_ratio/high_max", [0.005] * 12 + [0.2] + [0.005] * 7)
    )
    assert codes(analyze(tmp_path, KlClip())) == ["signal.clip_ratio_spike"]


# ----------------------------------------------------------------------------- NaN / inf
def test_nonfinite_values_always_reported(tmp_path: Path) -> None:
    run = build_run(
        tmp_path,
        "r1",
        groups=[{"step": 2, "rewards": [math.nan, 1.0]}],
        signals=[(3, {"loss": math.nan, "kl": 0.1}), (4, {"loss": math.inf, "kl": math.nan})],
    )
    from evotree.harness.recorder import Recorder

    with Recorder(
        run / "evidence" / "eval", run_id="r1", phase="eval"
    ) as rec:  # the judge's: counted, not named
        rec.signal(0, **{"validation/secret-task/return": math.nan})
    from evotree.harness.compaction import compact_run

    compact_run(run)
    f = one(analyze(tmp_path, NonFinite()), "signal.nonfinite_values")
    assert f.severity == "high"
    assert (
        f.evidence["signal_rows"],
        f.evidence["rollout_rows"],
        f.evidence["first_train_step"],
    ) == (4, 1, 2)
    assert f.evidence["metrics"] == [
        {"metric": "loss", "rows": 2, "first_step": 3},
        {"metric": "kl", "rows": 1, "first_step": 4},
    ]
    assert "secret" not in str(f.to_dict())


def test_nonfinite_quiet_on_a_clean_run(tmp_path: Path) -> None:
    build_run(
        tmp_path, "r1", groups=[{"step": 0, "rewards": [0.0, 1.0]}], signals=[(0, {"loss": 1.0})]
    )
    assert analyze(tmp_path, NonFinite()) == []


# ----------------------------------------------------------------------------- truncation
def truncation_run(runs: Path, run_id: str, truncated_per_step: list[int]) -> None:
    groups = [
        {"step": s, "group_id": "g", "rewards": [0.5] * 10, "truncated": [i < k for i in range(10)]}
        for s, k in enumerate(truncated_per_step)
    ]
    build_run(runs, run_id, groups=groups)


def test_truncation_rising(tmp_path: Path) -> None:
    truncation_run(
        tmp_path, "r1", [0, 0, 0, 1, 1, 1, 2, 2, 2, 3]
    )  # 0 % -> 30 % (late: the last step)
    f = one(analyze(tmp_path, TruncationTrend()), "signal.truncation_rising")
    assert f.severity == "warn" and f.skills == ["OverlongPenalty"]
    assert (f.evidence["early_fraction"], f.evidence["late_fraction"]) == (0.0, 0.3)
    truncation_run(tmp_path, "r2", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert (
        one(analyze(tmp_path, TruncationTrend(), "r2"), "signal.truncation_rising").severity
        == "high"
    )


@pytest.mark.parametrize(
    "per_step",
    [[2] * 10, [0] * 9 + [0], [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]],
)
def test_truncation_quiet(tmp_path: Path, per_step: list[int]) -> None:
    truncation_run(tmp_path, "r1", per_step)
    assert analyze(tmp_path, TruncationTrend()) == []


def test_truncation_rising_but_rare_is_quiet(tmp_path: Path) -> None:
    groups = [
        {
            "step": s,
            "group_id": "g",
            "rewards": [0.5] * 100,
            "truncated": [i < s for i in range(100)],
        }
        for s in range(5)
    ]  # 0 % -> 4 %: below the 5 % level
    build_run(tmp_path, "r1", groups=groups)
    assert analyze(tmp_path, TruncationTrend()) == []


def test_truncation_from_the_trl_signal(tmp_path: Path) -> None:
    build_run(
        tmp_path,
        "r1",
        signals=signals("completions/clipped_ratio", [0.0, 0.05, 0.1, 0.15, 0.2, 0.25]),
    )
    f = one(analyze(tmp_path, TruncationTrend()), "signal.truncation_rising")
    assert f.evidence["source"] == "signal:completions/clipped_ratio"


def test_dead_groups_under_an_active_group_filter_is_a_warning_without_the_filter_again(
    tmp_path: Path,
) -> None:
    """With StdGroupFilter recording its drops, dead groups no longer reach the loss: the finding
    says so, stays a warning about wasted generation and does not suggest the filter again."""
    dead_groups = groups_at(0, [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.0, 1.0, 1.0])
    build_run(
        tmp_path,
        "r1",
        groups=dead_groups,
        signals=[(1, {"skill/StdGroupFilter/dropped": 3.0, "skill/StdGroupFilter/kept": 1.0})],
    )
    f = one(analyze(tmp_path, DeadGroups()), "signal.dead_groups_high")
    assert (
        f.severity == "warn"
        and f.skills == []
        and "StdGroupFilter kept them out of the loss" in f.title
    )
    assert f.evidence["filtered_by"] == {"StdGroupFilter": 3} and f.evidence["dead_ratio"] == 0.75
    assert "max_resample_batches" in f.suggestion


def test_early_entropy_collapse_names_a_lower_learning_rate(tmp_path: Path) -> None:
    """A collapse in the first quarter of the run at the run's own logged learning rate: ÷ 4; in
    the first half: ÷ 2; later (convergence) or without a logged learning rate: no change named."""

    def run(run_id: str, entropy: list[float], lr: float | None) -> Any:
        extra = signals("learning_rate", [lr] * len(entropy)) if lr is not None else []
        build_run(tmp_path, run_id, signals=signals("entropy", entropy) + extra)
        return one(analyze(tmp_path, EntropyCollapse(), run_id), "signal.entropy_collapse")

    early = run("r1", [1.0, 0.5, 0.05] + [0.01] * 17, 3e-3)  # below 30 % of 1.0 at step 2 of 19
    change = early.evidence["recipe_change"]
    assert change["param"] == "learning_rate" and change["from"] == pytest.approx(3e-3)
    assert change["to"] == pytest.approx(7.5e-4) and change["kind"] == "lower"
    assert "lower learning_rate" in early.suggestion
    middle = run("r2", [1.0] * 8 + [0.05] * 12, 1e-3)  # at step 8 of 19: ÷ 2
    assert middle.evidence["recipe_change"]["to"] == pytest.approx(5e-4)
    late = run("r3", [1.0] * 15 + [0.05] * 5, 1e-3)
    assert "recipe_change" not in late.evidence
    unlogged = run("r4", [1.0, 0.5, 0.05] + [0.01] * 17, None)
    assert "recipe_change" not in unlogged.evidence
