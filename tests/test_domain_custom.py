"""The custom domain's worked example in docs/domains/custom.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT, Cli, git, make_repo
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.gates.runs import run_versions

DOC = ROOT / "docs" / "domains" / "custom.md"


def _blocks() -> dict[str, str]:
    """Files of the example: each code block preceded by a line starting with `path`."""
    text = DOC.read_text()
    found = {}
    for match in re.finditer(r"^`([\w./]+)` — .*?\n+```\w+\n(.*?)```", text, re.S | re.M):
        found[match.group(1)] = match.group(2)
    return found


def test_doc_example_runs_end_to_end(tmp_path: Path) -> None:
    files = _blocks()
    assert set(files) == {
        "recipe.toml",
        "train.py",
        "judge/eval.py",
        "judge/tasks.json",
        "evotree.toml",
    }
    repo = make_repo(tmp_path / "custom")
    for rel, content in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(content)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipe, trainer and judge")
    result = init_workspace(repo)
    # the committed judge moved to refs/evotree/judge: out of the branch tip and the checkout
    assert result.judge_removed == ["judge/eval.py", "judge/tasks.json"]
    assert not (repo / "judge").exists()
    assert "judge" not in git(repo, "ls-tree", "--name-only", "HEAD").split()
    assert (
        git(repo, "ls-tree", "-r", "--name-only", "refs/evotree/judge").split()
        == result.judge_files
    )
    ws = Workspace.open(repo)
    (v0,) = run_versions(ws, ["v0"])
    assert v0.status == "succeeded" and v0.headline["value"] == pytest.approx(0.5)
    assert (
        v0.judge_data_commit == result.judge_commit
    )  # the judge's hidden data, recorded with the run
    v1 = create_version(ws, hypothesis="more skill")
    assert not (
        repo / v1.worktree / "judge"
    ).exists()  # a candidate's worktree holds no hidden data
    recipe = repo / v1.worktree / "recipe.toml"
    recipe.write_text(recipe.read_text().replace("skill = 0.5", "skill = 0.75"))
    git(repo / v1.worktree, "commit", "-qam", "skill 0.75")
    runs = run_versions(ws, ["v1"], seeds=2)
    assert [r.headline["value"] for r in runs] == [pytest.approx(0.75)] * 2
    rows = Cli(repo).json(
        "sql", "SELECT version, avg(score) AS s FROM evals GROUP BY version ORDER BY version"
    )
    assert [(r["version"], r["s"]) for r in rows["rows"]] == [("v0", 0.5), ("v1", 0.75)]
    assert not (repo / ".evotree" / "runs" / v0.run_id / "candidate" / "judge").exists()
