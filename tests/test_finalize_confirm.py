"""`evotree finalize` shows what it would judge (--dry-run, nothing recorded) and is confirmed:
at a terminal by typing `finalize`, from a script only with --yes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

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


@pytest.mark.heavy
def test_finalize_judges_the_trained_artifact_of_a_train_then_judge_domain(tmp_path: Path) -> None:
    """docs/domains/custom.md's shape: train writes model.json (not in the commit), the judge reads
    it. Finalize's judge-only run reads the selected run's trained candidate, so it is judged."""
    from test_runs import make_run_repo

    repo = make_run_repo(tmp_path / "w", recipe="skill = 0.75\nsteps = 2\n")
    cli = Cli(repo)
    [run] = cli.json("run", "v0")["runs"]
    assert run["status"] == "succeeded"
    done = cli.json("finalize", "--yes")
    assert done["status"] == "finalized", done
    assert done["selected_run"] == run["run_id"] and done["heldout_mean"] == pytest.approx(0.75)


@pytest.mark.heavy
def test_a_held_out_run_evotree_could_not_finish_does_not_end_the_search(tmp_path: Path) -> None:
    from test_runs import make_run_repo

    from evotree.gates.finalize import finalize
    from evotree.verbs import open_workspace

    repo = make_run_repo(tmp_path / "w", recipe="skill = 0.5\nsteps = 2\n")
    Cli(repo).json("run", "v0")

    def broken(run_id: str, event: str, info: Any) -> None:  # evotree's own failure mid-run
        if event == "started":
            raise RuntimeError("a renderer broke")

    first = finalize(open_workspace(repo), progress=broken)
    assert first.status == "not_finalized" and first.exit_code == 37
    ws = open_workspace(repo)
    assert not ws.ledger.meta().get("finalize")  # the search goes on
    assert [e.event.kind for e in ws.ledger.entries(limit=1)] == ["finalize.attempt"]
    assert Cli(repo).json("finalize", "--yes")["status"] == "finalized"
