"""`evotree compare`: seed-aware paired comparison from real runs' evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli, commit_file, validate
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
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


def test_sequential_look_spends_alpha_and_asks_for_more_seeds(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    a, b = _version(ws, "skill = 0.5\nsteps = 1\n"), _version(ws, "skill = 0.6\nsteps = 1\n")
    run_versions(ws, [a, b], seeds=2, jobs=2)
    cli = Cli(ws.root)
    plain = cli.json("compare", a, b, "--bootstrap", "2000")
    assert plain["decision"] in ("better", "inconclusive") and plain["look"] is None
    first = cli.json("compare", a, b, "--look", "1", "--max-looks", "3")
    validate(first, "compare")
    assert first["alpha"] < plain["alpha"]  # an interim look spends only part of alpha
    assert first["B"] >= 20 / first["alpha"]
    lo, hi = first["ci"]
    assert hi - lo >= plain["ci"][1] - plain["ci"][0]  # a stricter level, a wider interval
    assert lo <= 0 <= hi  # one task in ten differs: the interval reaches 0
    assert first["decision"] == "need_more_seeds" and "--look 2" in first["next_step"]
    last = cli.json("compare", a, b, "--look", "3", "--max-looks", "3")
    assert last["decision"] != "need_more_seeds"
    cli.json("compare", a, b, "--look", "1", code=1)  # --look needs --max-looks


def test_iqm_probability_of_improvement_and_per_environment_bh(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    import json
    from conftest import git

    hidden = {"validation": [f"EnvA#{i}" for i in range(10)] + [f"EnvB#{i}" for i in range(10)], "heldout": []}
    (ws.root / "judge" / "hidden.json").write_text(json.dumps(hidden))
    git(ws.root, "commit", "-qam", "two environments")
    git(ws.root, "update-ref", "refs/evotree/champion", "HEAD")
    a, b = _version(ws, "skill = 0.2\nsteps = 1\n"), _version(ws, "skill = 0.9\nsteps = 1\n")
    run_versions(ws, [a, b], seeds=2, jobs=2)
    data = Cli(ws.root).json("compare", a, b, "--bootstrap", "2000")
    validate(data, "compare")
    assert data["iqm"]["b"] > data["iqm"]["a"]
    assert data["probability_of_improvement"]["b_over_a"] > 0.5
    groups = {g["group"]: g for g in data["per_group"]}
    assert set(groups) == {"EnvA", "EnvB"}
    # the judge scores task i of 20 as solved when (i + 1) / 20 <= skill
    assert groups["EnvA"]["delta"] == pytest.approx(0.6) and groups["EnvB"]["delta"] == pytest.approx(0.8)
    for g in groups.values():
        assert g["p_adjusted"] >= g["p_value"]


def test_champion_is_judged_on_runs_since_it_became_champion(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = _version(ws, "skill = 0.6\nsteps = 1\n")
    run_versions(ws, [v1])
    # pretend v1 was promoted now (the promotion gate is a later piece): its earlier runs no longer count
    from evotree.core.ledger import Event

    actor = ws.git.identity()

    def promote(txn):
        txn.meta["champion"] = v1
        return Event(kind="promotion", version=v1, actor=str(actor))

    ws.ledger.transact(promote, actor=actor)
    run_versions(ws, ["v0"])
    err = Cli(ws.root).json("compare", "v0", v1, code=22)["error"]
    assert "winner's curse" in err["message"] and f"evotree run {v1}" in err["fix"]
    run_versions(Workspace.open(ws.root), [v1])
    data = Cli(ws.root).json("compare", "v0", v1, "--bootstrap", "2000")
    assert len(data["runs"]["b"]) == 1  # only the re-evaluation
