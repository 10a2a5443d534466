"""Sharing that verifies in a clone.

A teammate clones through a bare remote and runs `evotree pull` only: it carries the version
branches, the ledger, champion, memory, judge store, run evidence and the signed promotion tags,
so `verify` finds no tampering there, and `compare`, `gates` and `report` count the runs that a
runner key listed in the champion's `gates/runner_keys` signed (the team set-up, docs/cluster.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, git, validate
from evotree.core.workspace import Workspace
from fixtures_ws import (
    bare_remote,
    clone_as,
    promote_at_terminal,
    scored_config,
    scored_project,
    signers_file,
)
from test_gates import SEEDED_JUDGE, new_version


def _team_repo(path: Path, keys: dict[str, tuple[Path, str]]) -> Path:
    """A workspace whose champion lists bob as approver and the team's runner key."""
    from test_runs import TRAIN

    runners = f"# the team's runner machines\nci-runner {keys['runner'][1]}\n"
    return scored_project(
        path,
        judge=SEEDED_JUDGE,
        train=TRAIN,
        recipe=None,
        config=scored_config(champion_seeds=3, train_approval_above_seconds=0),
        files={"gates/allowed_signers": signers_file(keys, ("bob",)), "gates/runner_keys": runners},
        message="recipe, judge, gate policy, runner keys",
    )


def _gates(repo: Path, version: str) -> dict[str, Any]:
    from click.testing import CliRunner

    from evotree.cli.main import cli

    result = CliRunner().invoke(
        cli, ["-C", str(repo), "gates", version, "--json"], catch_exceptions=False
    )
    return json.loads(result.stdout)


@pytest.mark.heavy
def test_a_clone_through_a_bare_remote_verifies_compares_gates_and_reports(
    tmp_path: Path, keys: dict[str, tuple[Path, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evotree.gates.runs import run_versions

    repo = _team_repo(tmp_path / "team", keys)
    v1 = new_version(repo, "skill = 0.9\nsteps = 3\n")
    monkeypatch.setenv(
        "EVOTREE_RUNNER_KEY", str(keys["runner"][0])
    )  # this machine signs as the team runner
    monkeypatch.setenv("EVOTREE_RUNNER_PRINCIPAL", "ci-runner")
    records = run_versions(Workspace.open(repo), ["v0", v1], seeds=3, jobs=2)
    assert all(r.status == "succeeded" for r in records), [r.error for r in records]
    Cli(repo)("diagnose", v1)
    expected = Cli(repo).json("compare", "v0", v1)

    bare = bare_remote(repo, tmp_path / "remote.git", how="main")
    pushed = Cli(repo).json("push")
    validate(pushed, "share")
    assert pushed["rejected"] == [] and {
        "refs/evotree/ledger",
        "refs/evotree/champion",
        "refs/evotree/judge",
        f"refs/heads/evotree/{v1}",
    } <= set(pushed["updated"])

    clone = clone_as(bare, tmp_path / "clone", "Bo Teammate", "bo@example.com")
    other = Cli(clone)
    pulled = other.json("pull")  # a fresh clone: no workspace yet, pull fetches it
    validate(pulled, "share")
    assert len(pulled["restored"]) == 6 and pulled["rejected"] == []
    for ref in (
        "refs/evotree/ledger",
        "refs/evotree/champion",
        "refs/evotree/judge",
        f"refs/heads/evotree/{v1}",
    ):
        assert git(clone, "rev-parse", ref) == git(repo, "rev-parse", ref), ref
    got = other.json("compare", "v0", v1)  # signed by the listed runner: counted in the clone too
    assert (got["delta"], got["ci"], got["p_value"]) == (
        expected["delta"],
        expected["ci"],
        expected["p_value"],
    )
    report = _gates(clone, v1)
    score = next(g for g in report["gates"] if g["name"] == "score")
    assert score["numbers"]["evidence"]["candidate"]["foreign"] == []
    assert sorted(score["numbers"]["evidence"]["candidate"]["ok"]) == sorted(
        r.run_id for r in records if r.version == v1
    )
    assert score["status"] == "pass", score["summary"]
    out = clone / "report.md"
    other("report", v1, "--out", str(out), "--no-audit")
    assert out.is_file() and "Scores" in out.read_text()
    assert other.json("verify")["ok"]

    # a person promotes on the team machine; the signed tag travels with `evotree push`
    code, out_text = promote_at_terminal(repo, v1, keys["bob"][0], "--json")
    assert code == 0, out_text
    pushed = Cli(repo).json("push")
    assert f"refs/tags/evotree/promoted/{v1}" in pushed["updated"] and pushed["rejected"] == []

    pulled = other.json("pull")
    assert f"refs/tags/evotree/promoted/{v1}" in pulled["updated"] and pulled["rejected"] == []
    verified = other.json("verify")  # before, the clone lacked the tags: "tampering found"
    assert verified["ok"] and verified["champion"] == v1 and verified["checked"]["tags"] == 1
    assert Workspace.open(clone).champion() == v1
    # a diverged ref is refused and said, never forced; a new one is taken
    mine = git(clone, "commit-tree", "main^{tree}", "-p", "main", "-m", "the teammate's own line")
    git(clone, "update-ref", f"refs/heads/evotree/{v1}", mine)
    git(repo, "push", "-q", "origin", "main:refs/heads/evotree/elsewhere")
    again = other.json("pull")
    assert [r["ref"] for r in again["rejected"]] == [f"refs/heads/evotree/{v1}"]
    assert "diverged" in again["rejected"][0]["reason"]
    assert git(clone, "rev-parse", f"refs/heads/evotree/{v1}") == mine
    assert "refs/heads/evotree/elsewhere" in again["updated"]
