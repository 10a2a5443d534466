"""The behavior layer (diagnostics/behavior.py): every detector on constructed runs where it
must fire and where it must not, with numbers small enough to check by hand. Real recorder,
real Parquet, real DuckDB."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_findings import analyze, build_run, codes, one

from evotree.diagnostics.behavior_failures import FinishReasons, Tools
from evotree.diagnostics.behavior_git import GitHistory, git_history_pattern
from evotree.diagnostics.behavior_gym import Gym
from evotree.diagnostics.behavior_lengths import LengthShift, ks_from_histograms
from evotree.diagnostics.behavior_reward_eval import RewardEval
from evotree.diagnostics.behavior_rollouts import is_gym_run
from evotree.diagnostics.behavior_text import (
    Diversity,
    DiversityThresholds,
    Repetition,
    RepetitionThresholds,
)
from evotree.harness.query import connect


def group(step: int, n: int, group_id: str = "g", **columns: Any) -> dict[str, Any]:
    """One group of ``n`` samples; each column a list of n values (or one value repeated)."""
    out: dict[str, Any] = {"step": step, "group_id": group_id, "rewards": [0.5] * n}
    for key, value in columns.items():
        if key == "components":
            out[key] = {k: v if isinstance(v, list) else [v] * n for k, v in value.items()}
        else:
            out[key] = value if isinstance(value, list) else [value] * n
    return out


# ----------------------------------------------------------------------------- lengths
def test_length_distribution_is_reported(tmp_path: Path) -> None:
    build_run(tmp_path, "r1", groups=[group(0, 10, lengths=list(range(1, 11)))])
    f = one(analyze(tmp_path, LengthShift()), "behavior.length_distribution")
    assert f.severity == "info"
    ev = f.evidence
    assert (ev["n"], ev["mean"], ev["min"], ev["p10"], ev["p50"], ev["p90"], ev["max"]) == (
        10,
        5.5,
        1,
        1,
        5,
        9,
        10,
    )
    build_run(tmp_path, "r2", groups=[group(0, 3)])  # no lengths recorded
    assert analyze(tmp_path, LengthShift(), "r2") == []


def test_length_shift_against_the_parent(tmp_path: Path) -> None:
    build_run(
        tmp_path,
        "parent",
        version="v0",
        groups=[group(0, 40, lengths=[100 + i for i in range(40)])],
    )
    build_run(tmp_path, "r1", groups=[group(0, 40, lengths=[200 + i for i in range(40)])])
    build_run(tmp_path, "same", groups=[group(0, 40, lengths=[100 + i for i in range(40)])])
    found = analyze(tmp_path, LengthShift(), parent_run_ids=["parent"])
    f = one(found, "behavior.length_shift")
    assert f.severity == "high" and f.evidence["ks_d"] == 1.0 and f.evidence["p_value"] < 1e-10
    assert f.evidence["parent"]["p50"] == 119 and f.evidence["run"]["p50"] == 219
    assert "longer" in f.title and f.skills == ["OverlongPenalty"]
    assert codes(analyze(tmp_path, LengthShift(), "same", parent_run_ids=["parent"])) == [
        "behavior.length_distribution"
    ]
    assert codes(analyze(tmp_path, LengthShift())) == [
        "behavior.length_distribution"
    ]  # no parent given


def test_ks_from_histograms_equals_scipy() -> None:
    from scipy.stats import ks_2samp

    rng = np.random.default_rng(0)
    for n1, n2 in ((50, 80), (30_000, 12_000)):  # exact method, then the asymptotic branch
        a, b = rng.integers(0, 60, n1), rng.integers(3, 64, n2)
        av, ac = np.unique(a, return_counts=True)
        bv, bc = np.unique(b, return_counts=True)
        d, p = ks_from_histograms(av, ac, bv, bc)
        ref = ks_2samp(a, b)
        assert d == pytest.approx(ref.statistic) and p == pytest.approx(
            ref.pvalue, rel=1e-9, abs=1e-300
        )


# ----------------------------------------------------------------------------- finish reasons
def test_truncation_rate(tmp_path: Path) -> None:
    # 3 of 10 truncated: 2 flagged, 1 only by finish_reason "length"
    build_run(
        tmp_path,
        "r1",
        groups=[
            group(
                0,
                10,
                truncated=[True, True] + [False] * 8,
                finish_reasons=["length", "length", "length"] + ["stop"] * 7,
            )
        ],
    )
    f = one(analyze(tmp_path, FinishReasons()), "behavior.truncation_rate_high")
    assert f.severity == "warn" and f.evidence["truncated_fraction"] == 0.3  # not above 0.3
    assert f.evidence["finish_reasons"] == {"stop": 7, "length": 3} and f.skills == [
        "OverlongPenalty"
    ]


def test_format_failures_from_finish_reason_and_component(tmp_path: Path) -> None:
    build_run(
        tmp_path,
        "r1",
        groups=[
            group(
                0,
                10,
                finish_reasons=["format_error"] + ["stop"] * 9,
                components={"correct": [1.0] * 10, "format/strict": [1.0, 0.0] + [1.0] * 8},
            )
        ],
    )
    f = one(analyze(tmp_path, FinishReasons()), "behavior.format_failure_high")
    assert (
        f.severity == "warn"
        and f.evidence["format_failures"] == 2
        and f.evidence["format_failure_fraction"] == 0.2
    )
    assert f.evidence["format_components"] == ["format/strict"] and f.skills == ["DualLevelFilter"]
    build_run(tmp_path, "r2", groups=[group(0, 10, finish_reasons="format_error")])
    assert (
        one(analyze(tmp_path, FinishReasons(), "r2"), "behavior.format_failure_high").severity
        == "high"
    )


def test_finish_reasons_quiet(tmp_path: Path) -> None:
    build_run(
        tmp_path,
        "r1",
        groups=[
            group(
                0,
                20,
                truncated=[True] + [False] * 19,
                finish_reasons="stop",
                components={"format": 1.0},
            )
        ],
    )
    assert analyze(tmp_path, FinishReasons()) == []  # 5 % truncated, no format failure


# ----------------------------------------------------------------------------- tools
def test_tool_usage_and_failures(tmp_path: Path) -> None:
    commands = [["ls", "python a.py"], ["pytest -q"], ["ls"], ["cat x"], [], [], [], []]
    reasons = [
        "error",
        "stop",
        "stop",
        "stop",
        "stop",
        "stop",
        "stop",
        "error",
    ]  # the last has no command
    build_run(
        tmp_path,
        "r1",
        groups=[
            group(
                0,
                8,
                commands=commands,
                finish_reasons=reasons,
                components={"tool_error": [0, 0, 1, 0, 0, 0, 0, 0]},
            )
        ],
    )
    found = analyze(tmp_path, Tools())
    usage = one(found, "behavior.tool_usage")
    assert usage.evidence["tool_using_fraction"] == 0.5 and usage.evidence["commands"] == 5
    assert usage.evidence["top_programs"] == {"ls": 2, "cat": 1, "pytest": 1, "python": 1}
    f = one(found, "behavior.tool_failure_high")  # 2 of 4 tool-using rollouts failed
    assert (
        f.severity == "warn"
        and f.evidence["failure_rate"] == 0.5
        and f.evidence["tool_error_components"] == ["tool_error"]
    )


def test_tools_quiet(tmp_path: Path) -> None:
    build_run(tmp_path, "r1", groups=[group(0, 4, finish_reasons="error")])  # no commands at all
    assert analyze(tmp_path, Tools()) == []
    build_run(tmp_path, "r2", groups=[group(0, 4, commands=[["ls"]] * 4, finish_reasons="stop")])
    assert codes(analyze(tmp_path, Tools(), "r2")) == ["behavior.tool_usage"]


# ----------------------------------------------------------------------------- diversity
TEMPLATE = "let me think step by step and the answer is {}"


def test_template_collapse(tmp_path: Path) -> None:
    groups = [
        group(s, 4, group_id=f"g{k}", texts=TEMPLATE.format(k)) for s in range(3) for k in range(2)
    ]
    build_run(tmp_path, "r1", groups=groups)
    f = one(analyze(tmp_path, Diversity()), "behavior.template_collapse")
    late = f.evidence["late"]
    assert (
        f.severity == "high"
        and late["collapsed_fraction"] == 1.0
        and late["mean_similarity"] == 1.0
    )
    # 4 identical texts of 10 words: 9 distinct bigrams of 36
    assert late["mean_distinct_n"] == pytest.approx(9 / 36)
    assert f.evidence["sample"]["sample_groups"] == 2000 and f.evidence["sample"]["seed"] == 0


def test_diversity_hand_checked_similarity(tmp_path: Path) -> None:
    # bigrams {a b, b c} and {a b, b d}: Jaccard 1/3; distinct-2: 3 of 4
    build_run(tmp_path, "r1", groups=[group(0, 2, texts=["a b c", "A  b\td"])])
    found = analyze(
        tmp_path, Diversity(DiversityThresholds(collapse_similarity=0.3, warn_fraction=0.5))
    )
    late = one(found, "behavior.template_collapse").evidence["late"]
    assert late["mean_similarity"] == pytest.approx(1 / 3) and late[
        "mean_distinct_n"
    ] == pytest.approx(0.75)
    assert analyze(tmp_path, Diversity()) == []  # 1/3 < 0.8


def test_diverse_groups_are_quiet(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(200)]
    groups = [
        group(s, 4, group_id="g", texts=[" ".join(rng.choice(words, 30)) for _ in range(4)])
        for s in range(4)
    ]
    build_run(tmp_path, "r1", groups=groups)
    assert analyze(tmp_path, Diversity()) == []


def test_text_sample_is_bounded_and_two_ended(tmp_path: Path) -> None:
    # 10 steps x 3 groups, collapsed only in the last 2 steps; sample 4 groups: 2 early, 2 late
    groups = [
        group(
            s,
            2,
            group_id=f"g{k}",
            texts=[TEMPLATE.format(1), TEMPLATE.format(1)]
            if s >= 8
            else [f"first {s} {k} alpha", f"second {s} {k} beta gamma"],
        )
        for s in range(10)
        for k in range(3)
    ]
    build_run(tmp_path, "r1", groups=groups)
    f = one(
        analyze(tmp_path, Diversity(DiversityThresholds(sample_groups=4))),
        "behavior.template_collapse",
    )
    sample = f.evidence["sample"]
    assert (sample["run_groups"], sample["early_last_step"], sample["late_first_step"]) == (
        30,
        0,
        9,
    )
    assert f.evidence["late"]["groups"] == 2 and f.evidence["early"]["groups"] == 2
    assert (
        f.evidence["early"]["collapsed_fraction"] == 0.0
        and f.evidence["late"]["collapsed_fraction"] == 1.0
    )


# ----------------------------------------------------------------------------- repetition
LOOP = " ".join(["so the answer is"] * 8)  # 32 words, 4 distinct 3-grams of 30
VARIED = " ".join(f"word{i}" for i in range(25))


def test_repetition(tmp_path: Path) -> None:
    build_run(
        tmp_path, "r1", groups=[group(0, 4, texts=[LOOP, VARIED, VARIED, "short loop loop loop"])]
    )
    f = one(analyze(tmp_path, Repetition()), "behavior.repetition_high")
    late = f.evidence["late"]
    # 3 texts have >= 20 words; 1 is repetitive (1 - 4/30 = 0.87 >= 0.5)
    assert late["texts"] == 3 and late["repetitive_texts"] == 1 and f.severity == "high"
    assert late["mean_repeated_fraction"] == pytest.approx((1 - 4 / 30) / 3)
    assert (
        analyze(tmp_path, Repetition(RepetitionThresholds(high_fraction=0.5)))[0].severity == "warn"
    )


def test_repetition_quiet(tmp_path: Path) -> None:
    build_run(
        tmp_path, "r1", groups=[group(0, 4, texts=[VARIED] * 3 + ["loop " * 10])]
    )  # the loop is short
    assert analyze(tmp_path, Repetition()) == []


# ----------------------------------------------------------------------------- git history
@pytest.mark.parametrize(
    ("command", "sub"),
    [
        ("git log --oneline", "log"),
        ("cd repo && git -C sub show HEAD~1:answer.py", "show"),
        ("/usr/bin/git --no-pager reflog", "reflog"),
        ("sh -c 'git cat-file -p HEAD'", "cat-file"),
        ("git -c core.pager=cat log", "log"),
        ("ls; git rev-list --all", "rev-list"),
    ],
)
def test_git_history_pattern_matches(command: str, sub: str) -> None:
    match = re.search(git_history_pattern(), command)
    assert match and match.group(4) == sub


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "legit log",
        "echo git",
        "git commit -m 'show log'",
        "gitlog",
        "git diff",
        "cat .git/logs/HEAD",
    ],
)
def test_git_history_pattern_ignores(command: str) -> None:
    assert re.search(git_history_pattern(), command) is None


def test_git_history_commands(tmp_path: Path) -> None:
    commands = [["ls", "git log -p"], ["git show HEAD:x"], ["git status"]] + [["ls"]] * 17
    build_run(tmp_path, "r1", groups=[group(0, 20, commands=commands)])
    f = one(analyze(tmp_path, GitHistory()), "behavior.git_history_commands")
    assert (
        f.severity == "high"
        and f.evidence["git_history_rollouts"] == 2
        and f.evidence["fraction"] == 0.1
    )
    assert f.evidence["subcommands"] == {"log": 1, "show": 1}
    build_run(tmp_path, "r2", groups=[group(0, 40, commands=[["git log"]] + [["ls"]] * 39)])
    assert (
        one(analyze(tmp_path, GitHistory(), "r2"), "behavior.git_history_commands").severity
        == "warn"
    )
    build_run(tmp_path, "r3", groups=[group(0, 3, commands=[["git status"], ["git diff"], []])])
    assert analyze(tmp_path, GitHistory(), "r3") == []


# ----------------------------------------------------------------------------- reward vs eval
def rising_reward_groups(steps: int = 10, start: float = 0.2) -> list[dict[str, Any]]:
    return [
        group(s, 2, rewards=[start + 0.05 * s - 0.1, start + 0.05 * s + 0.1]) for s in range(steps)
    ]


def test_reward_up_eval_down_within_the_run(tmp_path: Path) -> None:
    sig = [(s, {"eval_accuracy": 0.6 - 0.05 * s}) for s in range(0, 10, 2)]
    build_run(tmp_path, "r1", groups=rising_reward_groups(), signals=sig)
    f = one(analyze(tmp_path, RewardEval()), "behavior.reward_up_eval_down")
    assert f.severity == "high" and f.evidence["basis"] == "eval_signals"
    assert f.evidence["eval_metric"] == "eval_accuracy" and f.evidence[
        "eval_slope"
    ] == pytest.approx(-0.05)
    sig_up = [
        (s, {"eval_accuracy": 0.4 + 0.05 * s, "eval_loss": 1.0 - 0.1 * s}) for s in range(0, 10, 2)
    ]
    build_run(tmp_path, "r2", groups=rising_reward_groups(), signals=sig_up)
    assert analyze(tmp_path, RewardEval(), "r2") == []


def judge(scores: list[float]) -> list[tuple[str, str, float]]:
    return [("validation", f"task-{i}", s) for i, s in enumerate(scores)]


def test_reward_up_eval_down_against_the_parent(tmp_path: Path) -> None:
    build_run(
        tmp_path,
        "parent",
        version="v0",
        groups=rising_reward_groups(start=0.1),
        evals=judge([1.0] * 8 + [0.0] * 2),
    )
    build_run(
        tmp_path, "r1", groups=rising_reward_groups(start=0.3), evals=judge([1.0] * 2 + [0.0] * 8)
    )
    f = one(
        analyze(tmp_path, RewardEval(), parent_run_ids=["parent"]), "behavior.reward_up_eval_down"
    )
    ev = f.evidence
    assert ev["basis"] == "parent_evals" and ev["split"] == "validation" and ev["tasks"] == 10
    assert (ev["eval_run"], ev["eval_parent"], ev["eval_delta"]) == (0.2, 0.8, pytest.approx(-0.6))
    # the last 20 % of 10 steps: steps 8 and 9
    assert ev["late_reward"] == pytest.approx(0.3 + 0.05 * 8.5) and ev[
        "parent_late_reward"
    ] == pytest.approx(0.525)
    assert ev["eval_ci"][1] < 0


def test_reward_eval_quiet_cases(tmp_path: Path) -> None:
    build_run(
        tmp_path,
        "parent",
        version="v0",
        groups=rising_reward_groups(start=0.1),
        evals=judge([1.0] * 5 + [0.0] * 5),
    )
    build_run(
        tmp_path,
        "better",
        groups=rising_reward_groups(start=0.3),
        evals=judge([1.0] * 6 + [0.0] * 4),
    )
    build_run(
        tmp_path, "lower_reward", groups=rising_reward_groups(start=0.0), evals=judge([0.0] * 10)
    )
    build_run(tmp_path, "no_evals", groups=rising_reward_groups(start=0.3))
    for run_id in ("better", "lower_reward", "no_evals"):
        assert analyze(tmp_path, RewardEval(), run_id, parent_run_ids=["parent"]) == [], run_id


# ----------------------------------------------------------------------------- gym
def episode(
    env: str, i: int, *, ret: float, steps: int, reason: str, actions: str
) -> dict[str, Any]:
    return {
        "step": 0,
        "group_id": env,
        "task_id": f"{env}#{i}",
        "rewards": [ret],
        "lengths": [steps],
        "truncated": [reason == "truncated"],
        "finish_reasons": [reason],
        "texts": [
            f"seed={i} return={ret} steps={steps} {reason}: actions {actions}; first obs [0.0]"
        ],
    }


def test_gym_episodes_failures_and_action_collapse(tmp_path: Path) -> None:
    eps = [
        episode("CartPole-v1", i, ret=500.0, steps=500, reason="truncated", actions="0:250 1:250")
        for i in range(5)
    ]
    eps += [
        episode("CartPole-v1", 5 + i, ret=0.0, steps=3, reason="error", actions="0:3")
        for i in range(3)
    ]
    eps += [
        episode("MountainCar-v0", i, ret=-200.0, steps=200, reason="truncated", actions="2:200")
        for i in range(4)
    ]
    build_run(tmp_path, "r1", groups=eps)
    con = connect(tmp_path)
    assert is_gym_run(con, "r1")
    found = analyze(tmp_path, Gym())
    info = one(found, "behavior.gym_episodes")
    cart = info.evidence["environments"]["CartPole-v1"]
    assert cart["episodes"] == 8 and cart["termination_reasons"] == {"truncated": 5, "error": 3}
    assert cart["mean_return"] == pytest.approx(312.5) and cart["failed_fraction"] == 3 / 8
    fail = one(found, "behavior.gym_failures_high")
    assert fail.severity == "warn" and fail.evidence["env"] == "CartPole-v1"
    collapse = one(found, "behavior.gym_action_collapse")
    assert (
        collapse.evidence["env"] == "MountainCar-v0" and collapse.evidence["action_entropy"] == 0.0
    )
    p = np.array([1259, 1250]) / 2509  # action 0: 5 x 250 + 3 x 3; action 1: 5 x 250
    assert collapse.evidence["entropies"]["CartPole-v1"] == pytest.approx(
        -(p * np.log(p)).sum() / np.log(2)
    )
    assert collapse.evidence["action_counts"] == {"2": 800}
    # the text, finish-rate and length analyzers leave gym runs alone
    for analyzer in (FinishReasons(), Diversity(), Repetition(), LengthShift()):
        assert analyze(tmp_path, analyzer) == []


def test_gym_quiet(tmp_path: Path) -> None:
    eps = [
        episode("Acrobot-v1", i, ret=-80.0, steps=80, reason="terminated", actions="0:30 1:20 2:30")
        for i in range(6)
    ]
    build_run(tmp_path, "r1", groups=eps)
    assert codes(analyze(tmp_path, Gym())) == ["behavior.gym_episodes"]
    build_run(tmp_path, "llm", groups=[group(0, 2, texts="actions 0:5")])  # not a gym run
    assert analyze(tmp_path, Gym(), "llm") == []
    assert not is_gym_run(connect(tmp_path), "llm")


def test_diversity_on_texts_shorter_than_one_ngram(tmp_path: Path) -> None:
    """One-word samples have no bigrams: judged (min_words = 1), the collapse finding comes with
    distinct-n None."""
    build_run(tmp_path, "r1", groups=[group(0, 4, texts=["a", "a", "a", "a"])])
    f = one(
        analyze(tmp_path, Diversity(DiversityThresholds(min_words=1))), "behavior.template_collapse"
    )
    assert f.evidence["late"]["mean_distinct_n"] is None and "n/a" in f.title


def test_no_template_collapse_on_one_number_answers(tmp_path: Path) -> None:
    """Math-style answers (' 7', 'answer: 12'): samples agreeing on a number are not a collapsed
    template; by default such groups are not judged at all. Longer texts in the same run still are."""
    numbers = [
        group(s, 4, group_id=f"g{k}", texts=[f" {k + s}"] * 3 + [f"answer: {k + s}"])
        for s in range(4)
        for k in range(6)
    ]
    build_run(tmp_path, "math", groups=numbers)
    assert analyze(tmp_path, Diversity(), "math") == []
    sentences = [
        group(s, 4, group_id=f"t{k}", texts=TEMPLATE.format(k)) for s in range(4) for k in range(6)
    ]
    build_run(tmp_path, "mixed", groups=[*numbers, *sentences])
    f = one(analyze(tmp_path, Diversity(), "mixed"), "behavior.template_collapse")
    late = f.evidence["late"]
    assert late["groups"] == late["collapsed_groups"] and late["short_groups"] > 0
    assert f.evidence["min_words"] == 3


def test_ks_on_large_samples_is_scipys_asymptotic_test() -> None:
    """Large samples: D from the histograms, p from scipy's kstwo, as ks_2samp computes them (a
    weak shift and a clear one)."""
    from scipy.stats import ks_2samp

    rng = np.random.default_rng(2)
    for shift in (0, 3):
        a, b = rng.integers(0, 60, 30_000), rng.integers(shift, 60 + shift, 20_000)
        av, ac = np.unique(a, return_counts=True)
        bv, bc = np.unique(b, return_counts=True)
        ref = ks_2samp(a, b, method="asymp")
        d, p = ks_from_histograms(av, ac, bv, bc)
        assert d == pytest.approx(ref.statistic) and p == pytest.approx(
            ref.pvalue, rel=1e-9, abs=1e-300
        )


def test_a_binding_completion_budget_names_a_larger_one(tmp_path: Path) -> None:
    """Nearly every rollout cut at one budget: raise max_completion_length to twice it, and the
    dead groups whose samples the budget cut are its findings too; a few cut rollouts that earn
    as much as the whole ones name nothing."""
    cut = [
        group(s, 8, f"g{s}", truncated=True, finish_reasons="length", lengths=2, rewards=[0.5] * 8)
        for s in range(6)
    ]
    build_run(tmp_path, "r1", groups=cut)
    f = one(analyze(tmp_path, FinishReasons()), "behavior.truncation_rate_high")
    change = f.evidence["recipe_change"]
    assert (change["param"], change["from"], change["to"]) == ("max_completion_length", 2, 4)
    assert change["also_addresses"] == ["signal.dead_groups_high"]
    assert "raise max_completion_length to 4" in f.suggestion
    # 40 % cut, and the cut ones earn what the whole ones do: the budget costs nothing
    mixed = [
        group(
            0,
            10,
            "g0",
            truncated=[True] * 4 + [False] * 6,
            lengths=[5] * 4 + [3] * 6,
            finish_reasons=["length"] * 4 + ["stop"] * 6,
            rewards=[1.0] * 10,
        )
    ]
    build_run(tmp_path, "r2", groups=mixed)
    f = one(analyze(tmp_path, FinishReasons(), "r2"), "behavior.truncation_rate_high")
    assert "recipe_change" not in f.evidence
