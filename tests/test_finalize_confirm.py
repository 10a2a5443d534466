"""`evotree finalize` shows what it would judge (--dry-run, nothing recorded) and is confirmed:
at a terminal by typing `finalize`, from a script only with --yes."""

from __future__ import annotations

from pathlib import Path

from conftest import Cli, git


def test_a_dry_run_records_nothing_and_a_script_must_say_yes(tmp_path: Path) -> None:
    from test_gym_finalize import hidden_gym_workspace

    ws = hidden_gym_workspace(tmp_path / "w")
    cli = Cli(ws.root)
    ledger = git(ws.root, "rev-parse", "refs/evotree/ledger")
    plan = cli.json("finalize", "--dry-run")
    assert plan["dry_run"] and plan["status"] == "no_ok_submit" and plan["considered"] == 0
    assert "Nothing was recorded" in cli("finalize", "--dry-run").output
    refused = cli.json("finalize", code=2)["error"]
    assert "--yes" in refused["fix"] and "--dry-run" in refused["fix"]
    assert git(ws.root, "rev-parse", "refs/evotree/ledger") == ledger  # nothing judged or recorded
    assert cli.json("finalize", "--yes")["status"] == "no_ok_submit"
