"""`evotree diagnose`: findings over real runs, recorded in the ledger and the findings view."""

from __future__ import annotations

from pathlib import Path

from conftest import Cli, commit_file, validate
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
from test_runs import make_run_repo


def test_diagnose_records_findings(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    rec = create_version(ws, hypothesis="dead groups")
    # a train script whose groups all have equal rewards: dead groups everywhere
    train = (
        (ws.root / rec.worktree / "train.py")
        .read_text()
        .replace("rewards=[skill, 0.0, skill, 1.0]", "rewards=[skill, skill, skill, skill]")
    )
    commit_file(ws.root / rec.worktree, "train.py", train, "constant rewards")
    commit_file(ws.root / rec.worktree, "recipe.toml", "skill = 0.5\nsteps = 4\n", "recipe")
    run_versions(ws, [rec.id])
    cli = Cli(ws.root)
    data = cli.json("diagnose", rec.id)
    validate(data, "diagnose")
    codes = {f["code"]: f for f in data["findings"]}
    assert "score.split_summary" in codes
    dead = [f for f in data["findings"] if f["code"].startswith("signal.dead_groups")]
    assert dead and dead[0]["severity"] == "critical" and "StdGroupFilter" in dead[0]["skills"]
    assert "query" in dead[0]["evidence"]
    assert data["worst"] == "critical"
    # recorded: the ledger has a finding event, the findings view has the rows
    events = cli.json("log", "--version", rec.id, "-n", "1")["events"]
    assert events[0]["kind"] == "finding" and events[0]["data"]["counts"]["critical"] >= 1
    rows = cli.json("sql", "SELECT code, severity FROM findings WHERE severity = 'critical'")[
        "rows"
    ]
    assert any(r["code"].startswith("signal.dead_groups") for r in rows)
    text = cli("diagnose", rec.id, "--layer", "score").output
    assert "validation: mean score" in text
    version_layer = cli.json("diagnose", rec.id, "--layer", "version")
    validate(version_layer, "diagnose")
    codes = {f["code"] for f in version_layer["findings"]}
    assert "version.historical_best" in codes and "version.delta_parent" in codes
    assert [row["id"] for row in version_layer["interventions"]] == [rec.id]
    summary = [f for f in data["findings"] if f["code"] == "score.split_summary"][0]
    # the test judge's scores are binary with one sample per task: avg@1 == pass@1 == the mean
    assert summary["evidence"]["k"] == 1
    assert (
        summary["evidence"]["pass_at_k"]
        == summary["evidence"]["avg_at_k"]
        == summary["evidence"]["mean"]
    )


def test_diagnose_without_runs_is_explained(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    err = Cli(ws.root).json("diagnose", "v0", code=1)["error"]
    assert "no finished run" in err["message"] and "evotree run v0" in err["fix"]


def test_backtest_cli_revives_dead_groups(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    rec = create_version(ws, hypothesis="constant rewards, a varying component")
    train = (
        (ws.root / rec.worktree / "train.py")
        .read_text()
        .replace(
            "rewards=[skill, 0.0, skill, 1.0],",
            "rewards=[skill, skill, skill, skill], components={'follow': [0.0, 1.0, 0.0, 1.0]},",
        )
    )
    commit_file(ws.root / rec.worktree, "train.py", train, "constant rewards")
    commit_file(ws.root / rec.worktree, "recipe.toml", "skill = 0.5\nsteps = 2\n", "recipe")
    run_versions(ws, [rec.id])
    cli = Cli(ws.root)
    data = cli.json("backtest", rec.id, "--transform", "reward + 0.1*follow")
    validate(data, "backtest")
    (run,) = data["runs"]
    assert run["dead_group_ratio_before"] == 1.0 and run["dead_group_ratio_after"] == 0.0
    assert run["revived_fraction"] == 1.0
    assert any(
        c["code"] == "signal.dead_groups_high" and c["kind"] == "resolved" for c in run["changes"]
    )
    text = cli("backtest", rec.id, "--transform", "reward + 0.1*follow").output
    assert "dead groups 100.0% → 0.0%" in text and "resolved" in text
    err = cli.json("backtest", rec.id, "--transform", "reward / 2", code=24)["error"]
    assert err["code"] == "backtest_error"
    cli.json("backtest", rec.id, "--threshold", "nonsense", code=2)  # a usage error
