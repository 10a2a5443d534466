"""`evotree compare`: seed-aware paired comparison from real runs' evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli, commit_file, validate
from evotree.versions import create_version
from evotree.workspace import Workspace
from harness.runs import run_versions
from test_runs import make_run_repo


def _version(ws: Workspace, recipe: str) -> str:
    rec = create_version(ws, hypothesis="h")
    commit_file(ws.root / rec.worktree, "recipe.toml", recipe, "recipe")
    return rec.id


def test_compare_two_versions(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    low, high = _version(ws, "skill = 0.2\nsteps = 1\n"), _version(ws, "skill = 0.9\nsteps = 1\n")
    run_versions(ws, [low, high], seeds=2, jobs=2)
    data = Cli(ws.root).json("compare", low, high, "--bootstrap", "2000")
    validate(data, "compare")
    assert data["delta"] == pytest.approx(0.7) and data["n_tasks"] == 10 and data["n_seeds"] == [2, 2]
    assert data["seed_aware"] is True and data["caveat"] is None
    assert data["ci"][0] > 0 and data["mean_a"] == pytest.approx(0.2)
    text = Cli(ws.root)("compare", low, high, "--bootstrap", "2000").output
    assert "B is better" in text


def test_single_seed_says_so(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = _version(ws, "skill = 0.6\nsteps = 1\n")
    run_versions(ws, ["v0", v1])
    data = Cli(ws.root).json("compare", "v0", v1, "--bootstrap", "2000")
    assert data["seed_aware"] is False and "single seed" in data["caveat"]
    assert data["test"] == "mcnemar_exact"  # binary per-task scores, one seed per side


def test_mismatched_pools_refused_unless_intersected(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = _version(ws, "skill = 0.6\nsteps = 1\n")
    run_versions(ws, ["v0"])
    # the champion's judge gets a bigger validation pool; v1 is then scored on it
    import json
    hidden = json.loads((ws.root / "judge" / "hidden.json").read_text())
    hidden["validation"] += ["val-extra-1", "val-extra-2"]
    (ws.root / "judge" / "hidden.json").write_text(json.dumps(hidden))
    from conftest import git

    git(ws.root, "commit", "-qam", "bigger pool")
    git(ws.root, "update-ref", "refs/evotree/champion", "HEAD")
    run_versions(Workspace.open(ws.root), [v1])
    err = Cli(ws.root).json("compare", "v0", v1, code=20)["error"]
    assert "only in B" in err["message"] or "only in" in err["message"]
    data = Cli(ws.root).json("compare", "v0", v1, "--intersect", "--bootstrap", "2000")
    assert data["n_tasks"] == 10 and data["intersected"] is True


def test_no_scores_is_explained(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = _version(ws, "skill = 0.6\n")
    err = Cli(ws.root).json("compare", "v0", v1, code=22)["error"]
    assert "has no scored run" in err["message"] and "evotree run v0" in err["fix"]
