"""`evotree init --domain gym` with a judge/gym.toml that exists before init."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip(
    "gymnasium", reason="the gym domain needs gymnasium: pip install 'evotree[gym]'"
)

from conftest import Cli, git, make_repo  # noqa: E402

JUDGE = '[judge]\nenvs = ["CartPole-v1"]\n\n[pools.validation]\n"CartPole-v1" = [1000001, 1000002, 1000003]\n'


@pytest.mark.heavy
def test_an_existing_uncommitted_judge_toml_is_stored_and_judges(tmp_path: Path) -> None:
    from evotree.core.workspace import Workspace
    from evotree.gates.runs import run_versions

    repo = make_repo(tmp_path / "w")
    (repo / "judge").mkdir()
    (repo / "judge" / "gym.toml").write_text(JUDGE)  # the owner's pools, never committed
    Cli(repo)("init", "--domain", "gym")
    assert git(repo, "show", "refs/evotree/judge:judge/gym.toml") == JUDGE.strip()
    refs = json.loads(git(repo, "show", "refs/evotree/judge:judge/references.json"))
    assert list(refs["envs"]) == ["CartPole-v1"] and refs["envs"]["CartPole-v1"]["episodes"] == 3
    assert not (repo / "judge").exists() and "judge/" not in git(
        repo, "ls-tree", "-r", "--name-only", "HEAD"
    )
    [record] = run_versions(Workspace.open(repo), ["v0"], seeds=1)
    assert record.status == "succeeded", record.error
    assert record.headline["value"] >= 0.0


def test_a_git_ignored_judge_folder_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "w")
    (repo / ".gitignore").write_text("judge/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-qm", "ignore judge")
    result = Cli(repo)("init", "--domain", "gym", code=1)
    assert "git ignores judge/gym.toml" in result.output
    assert (
        sorted(p.name for p in repo.iterdir() if p.name != ".git") == [".gitignore", "README.md"]
        or not (repo / "gym.toml").exists()
    )
    assert git(repo, "rev-parse", "-q", "--verify", "refs/evotree/ledger", check=False) == ""
