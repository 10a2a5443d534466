"""Backtest (diagnostics/backtest.py): re-diagnosing stored rollouts under a reward transform.
Constructed runs written by the real recorder, compacted to Parquet, read by real DuckDB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_findings import build_run

from evotree.diagnostics.backtest import (
    BacktestError,
    RewardTransform,
    apply_transform,
    as_transform,
    backtest,
)
from evotree.core.errors import ConfigError
from evotree.harness.query import connect, dead_group_ratio

IF = "instruction_following"


def dead_run(runs: Path, run_id: str = "r1", *, compact: bool = True) -> None:
    """2 steps x 4 groups of 4 samples; every group's rewards are equal (all 8 groups dead).

    ``instruction_following`` varies within groups 0-2 (group 2: recorded for one sample only,
    the others are missing -> 0) and is the same for all samples of group 3 (stays dead).
    """
    groups = []
    for step in (0, 1):
        groups += [
            {
                "step": step,
                "group_id": f"s{step}g0",
                "rewards": [1.0] * 4,
                "components": {IF: [0.5, 0.0, 1.0, 0.5]},
            },
            {
                "step": step,
                "group_id": f"s{step}g1",
                "rewards": [0.0] * 4,
                "components": {IF: [0.0, 1.0, 0.0, 1.0]},
            },
            {
                "step": step,
                "group_id": f"s{step}g2",
                "rewards": [0.5] * 4,
                "components": {IF: [1.0, None, None, None]},
            },
            {
                "step": step,
                "group_id": f"s{step}g3",
                "rewards": [0.0] * 4,
                "components": {IF: [1.0] * 4},
            },
        ]
    build_run(runs, run_id, groups=groups, compact=compact)


def dead_groups(result, run_id: str = "r1", side: str = "after"):
    run = result.run(run_id)
    found = [f for f in getattr(run, f"findings_{side}") if f.code == "signal.dead_groups_high"]
    assert len(found) <= 1
    return found[0] if found else None


# ----------------------------------------------------------------------------- the transform
def test_parse_reads_sums_of_terms() -> None:
    assert RewardTransform.parse("reward + 0.1*instruction_following") == RewardTransform(
        add={IF: 0.1}
    )
    t = RewardTransform.parse("2*reward - 0.5 + fmt*0.25 - 0.05 * fmt + .1e1")
    assert (t.scale, t.shift, dict(t.add)) == (2.0, pytest.approx(0.5), {"fmt": pytest.approx(0.2)})
    assert RewardTransform.parse("reward' = reward + 0.1*x") == RewardTransform(add={"x": 0.1})
    assert (
        RewardTransform.parse("reward").is_identity
        and RewardTransform.parse("1*reward + 0").is_identity
    )
    assert str(RewardTransform(add={IF: 0.1})) == "reward + 0.1*instruction_following"
    assert RewardTransform.parse(str(t)) == t
    assert as_transform(None).is_identity and as_transform({"scale": 2.0}) == RewardTransform(
        scale=2.0
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "0.1*instruction_following",
        "reward / 2",
        "reward * x",
        "reward +",
        "reward + + x",
        "exp(reward)",
        "reward 0.1",
        "reward + 0.1*if.score",
        "reward - 2*-x",
        "reward ** 2",
    ],
)
def test_bad_transform_strings_raise_a_clear_error(text: str) -> None:
    with pytest.raises(BacktestError) as info:
        RewardTransform.parse(text)
    err = info.value
    assert (err.exit_code, err.code) == (24, "backtest_error")
    assert "reward transform" in err.message and "reward + 0.1*instruction_following" in (
        err.fix or ""
    )
    assert err.to_dict()["code"] == "backtest_error"


def test_bad_transform_fields_and_bad_string_through_backtest(tmp_path: Path) -> None:
    with pytest.raises(BacktestError, match="finite"):
        RewardTransform(add={IF: float("nan")})
    with pytest.raises(BacktestError, match="scale"):
        RewardTransform(scale="2")  # type: ignore[arg-type]
    dead_run(tmp_path)
    with pytest.raises(BacktestError, match="cannot parse"):
        backtest(tmp_path, ["r1"], transform="reward / 2")


def test_transform_in_sql_adds_weighted_components_missing_as_zero(tmp_path: Path) -> None:
    dead_run(tmp_path)
    con = connect(tmp_path)
    try:
        apply_transform(con, RewardTransform(add={IF: 0.1, "absent": 5.0}, scale=2.0, shift=-1.0))
        rows = con.execute(
            "SELECT group_id, sample_index, reward FROM rollouts WHERE step = 0 "
            "ORDER BY group_id, sample_index"
        ).fetchall()
        stored = con.execute("SELECT count(*) FROM _rollouts_stored").fetchone()[0]
    finally:
        con.close()
    got = {(g, i): r for g, i, r in rows}
    assert got[("s0g0", 0)] == pytest.approx(2 * 1.0 + 0.05 - 1)
    assert got[("s0g1", 1)] == pytest.approx(2 * 0.0 + 0.1 - 1)
    assert got[("s0g2", 0)] == pytest.approx(2 * 0.5 + 0.1 - 1)
    assert got[("s0g2", 3)] == pytest.approx(2 * 0.5 - 1)  # component missing -> 0
    assert stored == 32


# ----------------------------------------------------------------------------- backtest
def test_small_instruction_following_term_revives_dead_groups(tmp_path: Path) -> None:
    dead_run(tmp_path)
    result = backtest(tmp_path, ["r1"], transform="reward + 0.1*instruction_following")
    run = result.run("r1")
    before = dead_groups(result, side="before")
    assert (
        before is not None
        and before.severity == "critical"
        and before.evidence["dead_ratio"] == 1.0
    )
    # after: only the two g3 groups (constant component) are dead: 2 of 8 = 0.25, not above 0.25
    assert dead_groups(result) is None
    assert any(
        c.code == "signal.dead_groups_high"
        and c.kind == "resolved"
        and c.before == "critical"
        and c.after is None
        for c in run.changes
    )
    assert (run.dead_before.dead, run.dead_before.groups) == (8, 8)
    assert (run.dead_after.dead, run.dead_after.groups) == (2, 8)
    assert run.dead_group_ratio_before == 1.0 and run.dead_group_ratio_after == 0.25
    assert run.revived_fraction == pytest.approx((8 - 2) / 8)
    assert (run.groups_revived, run.groups_killed) == (6, 0)
    # the numbers agree with the query layer's dead-group ratio on the same transformed view
    con = connect(tmp_path)
    try:
        assert dead_group_ratio(con, "r1", threshold=1e-4) == 1.0
        apply_transform(con, result.transform)
        assert dead_group_ratio(con, "r1", threshold=1e-4) == 0.25
    finally:
        con.close()
    out = json.loads(json.dumps(result.to_dict()))
    assert out["transform"]["expression"] == "reward + 0.1*instruction_following"
    assert out["runs"][0]["revived_fraction"] == 0.75
    assert {"code": "signal.dead_groups_high", "severity": "critical"}.items() <= next(
        f for f in out["runs"][0]["findings_before"] if f["code"] == "signal.dead_groups_high"
    ).items()
    assert out["analyzers"]["harness_version"] == "builtin" and out["analyzers"]["thresholds"] == {}


def test_dataclass_transform_and_uncompacted_run_read_in_place(tmp_path: Path) -> None:
    dead_run(tmp_path, "live", compact=False)  # JSONL evidence, no Parquet yet
    run = backtest(tmp_path, "live", transform=RewardTransform(add={IF: 0.1})).run("live")
    assert run.revived_fraction == pytest.approx(0.75)


def test_identity_transform_changes_nothing(tmp_path: Path) -> None:
    dead_run(tmp_path)
    for transform in (None, "reward", RewardTransform()):
        result = backtest(tmp_path, ["r1"], transform=transform)
        run = result.run("r1")
        assert run.changes == [] and result.changes == []
        assert [(f.code, f.severity) for f in run.findings_before] == [
            (f.code, f.severity) for f in run.findings_after
        ]
        assert run.dead_before == run.dead_after and run.revived_fraction == 0.0
        assert (run.groups_revived, run.groups_killed) == (0, 0)


def test_stricter_threshold_makes_a_warn_appear(tmp_path: Path) -> None:
    dead_run(tmp_path)
    strict = {"signal.dead_groups": {"warn_ratio": 0.2}}
    result = backtest(
        tmp_path,
        ["r1"],
        transform="reward + 0.1*instruction_following",
        thresholds=strict,
        harness_version="harness-v2",
    )
    after = dead_groups(result)
    assert after is not None and after.severity == "warn" and after.evidence["warn_ratio"] == 0.2
    change = next(c for c in result.changes if c.code == "signal.dead_groups_high")
    assert (change.kind, change.before, change.after) == ("severity_changed", "critical", "warn")
    analyzers = result.to_dict()["analyzers"]
    assert analyzers == {
        "harness_version": "harness-v2",
        "thresholds": strict,
        "dead_group_std_epsilon": 1e-3,
    }
    assert backtest(tmp_path, ["r1"], thresholds=strict).harness_version == "builtin+overrides"
    # a looser std_epsilon is another analyzer version: groups with std 0.05 count as dead again
    loose = backtest(
        tmp_path,
        ["r1"],
        transform="reward + 0.1*instruction_following",
        thresholds={"signal.dead_groups": {"std_epsilon": 1.0}},
    ).run("r1")
    assert loose.dead_after.dead == 8 and loose.revived_fraction == 0.0
    with pytest.raises(ConfigError):
        backtest(tmp_path, ["r1"], thresholds={"signal.dead_groups": {"warn_rate": 0.2}})


def test_unknown_or_no_runs_raise(tmp_path: Path) -> None:
    dead_run(tmp_path)
    with pytest.raises(BacktestError, match="no run 'nope'") as info:
        backtest(tmp_path, ["r1", "nope"])
    assert info.value.exit_code == 24
    with pytest.raises(BacktestError, match="no run ids"):
        backtest(tmp_path, [])
