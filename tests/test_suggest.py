"""`evotree suggest V`: findings of a real diagnosis mapped to skills, ranked by memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, commit_file, git, make_repo, validate
from fixtures_ws import bare_remote, clone_as
from test_runs import make_run_repo

import evotree.memory as memory
from evotree.diagnostics.diagnose import diagnose
from evotree.gates.analyzer_versions import active_analyzers
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.gates.runs import run_versions


def _dead_group_version(ws: Workspace, *, dead: bool = True) -> str:
    """A version whose training logs rollouts (all-equal rewards = dead groups), run and diagnosed."""
    rec = create_version(ws, hypothesis="dead groups" if dead else "healthy groups")
    if dead:
        train = (
            (ws.root / rec.worktree / "train.py")
            .read_text()
            .replace("rewards=[skill, 0.0, skill, 1.0]", "rewards=[skill, skill, skill, skill]")
        )
        commit_file(ws.root / rec.worktree, "train.py", train, "constant rewards")
    commit_file(ws.root / rec.worktree, "recipe.toml", "skill = 0.5\nsteps = 4\n", "recipe")
    (record,) = run_versions(ws, [rec.id])
    assert record.status == "succeeded", record.error
    diagnose(ws, rec.id, analyzers=active_analyzers(ws), layers=["signal"])
    return rec.id


def _by_skill(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["skill"]: s for s in result["suggestions"]}


def _math_export(tmp_path: Path, *, significant: bool) -> Path:
    """An export of a math workspace in which StdGroupFilter was promoted (significant or not)."""
    from evotree.skills import apply_skill

    repo = make_repo(tmp_path / "math")
    (repo / "evotree.toml").write_text('[workspace]\ndomain = "math"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "math")
    init_workspace(repo)
    ws = Workspace.open(repo)
    rec = create_version(ws, hypothesis="std filter")
    apply_skill(ws, rec.id, "StdGroupFilter")
    ci = [0.03, 0.15] if significant else [-0.02, 0.1]
    memory.record_promotion(
        ws,
        rec.id,
        previous_champion="v0",
        comparison={
            "a": "v0",
            "b": rec.id,
            "delta": 0.09,
            "ci": ci,
            "p_value": 0.002,
            "test": "wilcoxon",
            "n_tasks": 20,
            "alpha": 0.05,
        },
    )
    path = tmp_path / "math.json"
    memory.export_memory(ws, path, force=True)
    return path


def test_suggestions_follow_findings_and_memory(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = _dead_group_version(ws)
    run = Cli(ws.root)
    first = run.json("suggest", v1)
    validate(first, "suggest")
    assert first["source"] == "file" and first["findings"] >= 1
    skills = _by_skill(first)
    # the critical dead-group finding maps to every skill that addresses it
    assert {"StdGroupFilter", "DualLevelFilter", "PartialPassReward"} <= set(skills)
    std = skills["StdGroupFilter"]
    assert std["severity"] == "critical" and "signal.dead_groups_high" in {
        f["code"] for f in std["addresses"]
    }
    assert std["memory"]["verifications"] == 0 and std["applies"] is True and not std["applied"]
    assert "OverlongPenalty" not in skills  # no truncation or length finding
    # the analyzer names StdGroupFilter itself: it leads before memory says anything
    assert first["suggestions"][0]["skill"] == "StdGroupFilter"
    assert std["score"] == pytest.approx(skills["DualLevelFilter"]["score"] + 0.5)
    base = {name: s["score"] for name, s in skills.items()}

    # memory: a significant StdGroupFilter gain in math (imported) lifts it by 1
    memory.import_memory(ws, _math_export(tmp_path, significant=True))
    second = _by_skill(run.json("suggest", v1))
    assert second["StdGroupFilter"]["score"] == pytest.approx(base["StdGroupFilter"] + 1)
    assert second["StdGroupFilter"]["memory"]["domains"] == ["math"]
    assert any("math" in r for r in second["StdGroupFilter"]["reasons"])
    assert run.json("suggest", v1)["suggestions"][0]["skill"] == "StdGroupFilter"
    # negative evidence naming PartialPassReward lowers it by 0.5
    from evotree.skills import apply_skill

    failed = create_version(ws, hypothesis="partial credit")
    commit_file(ws.root / failed.worktree, "recipe.toml", "skill = 0.4\n", "recipe")
    apply_skill(ws, failed.id, "PartialPassReward")
    memory.record_rejection(
        ws, failed.id, decision="ABORT", feedback="reward hacking on partial credit"
    )
    third = _by_skill(run.json("suggest", v1))
    assert third["PartialPassReward"]["score"] == pytest.approx(base["PartialPassReward"] - 0.5)
    assert third["PartialPassReward"]["memory"]["negative"] == 1
    assert third["PartialPassReward"]["entries"]

    # a significant gain here too: verified across domains (+3) and in this domain (+2)
    winner = create_version(ws, hypothesis="std filter here")
    commit_file(ws.root / winner.worktree, "recipe.toml", "skill = 0.7\n", "recipe")
    apply_skill(ws, winner.id, "StdGroupFilter")
    memory.record_promotion(
        ws,
        winner.id,
        previous_champion="v0",
        comparison={
            "a": "v0",
            "b": winner.id,
            "delta": 0.2,
            "ci": [0.1, 0.3],
            "p_value": 0.001,
            "alpha": 0.05,
            "test": "wilcoxon",
            "n_tasks": 10,
        },
    )
    fourth = run.json("suggest", v1)
    std = _by_skill(fourth)["StdGroupFilter"]
    assert std["memory"]["verified_across_domains"] and std["memory"]["verified_in_domain"]
    assert std["score"] == pytest.approx(base["StdGroupFilter"] + 5)
    assert fourth["suggestions"][0]["skill"] == "StdGroupFilter"
    text = run("suggest", v1).stdout
    assert "StdGroupFilter" in text and "verified across domains" in text


def test_applied_skills_rank_last_and_healthy_runs_get_no_filter(tmp_path: Path) -> None:
    from evotree.skills import apply_skill

    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = _dead_group_version(ws)
    apply_skill(ws, v1, "StdGroupFilter")
    result = Cli(ws.root).json("suggest", v1)
    assert (
        result["suggestions"][-1]["skill"] == "StdGroupFilter"
        and result["suggestions"][-1]["applied"]
    )
    assert any("already applied" in r for r in result["suggestions"][-1]["reasons"])
    # a version whose groups are not dead: no dead-group finding, so no dead-group skill
    v2 = _dead_group_version(ws, dead=False)
    healthy = Cli(ws.root).json("suggest", v2)
    assert healthy["source"] == "file"
    assert all(
        "signal.dead_groups_high" not in {f["code"] for f in s["addresses"]}
        for s in healthy["suggestions"]
    )
    assert "StdGroupFilter" not in _by_skill(healthy)


def test_a_clone_suggests_from_the_ledger_and_undiagnosed_is_explained(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = _dead_group_version(ws)
    v2 = create_version(ws, hypothesis="never run").id
    err = Cli(ws.root).json("suggest", v2, code=10)["error"]
    assert err["code"] == "not_diagnosed" and f"evotree diagnose {v2}" in err["fix"]
    assert Cli(ws.root).json("suggest", "v77", code=5)["error"]["code"] == "unknown_version"
    # a clone has the ledger's finding event but not .evotree/findings/
    bare = bare_remote(ws.root, tmp_path / "origin.git", how="all")
    clone = clone_as(bare, tmp_path / "clone", "Bo", "bo@example.com", fetch_evotree=True)
    from_ledger = Cli(clone).json("suggest", v1)
    validate(from_ledger, "suggest")
    assert from_ledger["source"] == "ledger"
    std = _by_skill(from_ledger)["StdGroupFilter"]
    assert (
        std["severity"] == "critical" and std["addresses"][0]["code"] == "signal.dead_groups_high"
    )
    assert json.loads(json.dumps(from_ledger))
    # suggest stays light: no duckdb, torch, numpy... (the ledger path reads git only)
    from test_startup import HEAVY, _modules_after

    code, modules = _modules_after(["-C", str(clone), "suggest", v1, "--json"], clone)
    assert code == 0 and not modules & set(HEAVY), modules & set(HEAVY)


def test_gym_is_never_offered_grpo_skills(tmp_path: Path) -> None:
    """Skills are offered only where they apply: in a gym workspace a finding that names a GRPO
    skill (or whose code a GRPO skill addresses) gets no suggestion, and is listed unaddressed."""
    from evotree.core.findings import Finding, write_findings_file
    from evotree.skills import list_skills

    repo = make_repo(tmp_path / "gym")
    (repo / "evotree.toml").write_text('[workspace]\ndomain = "gym"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gym")
    init_workspace(repo)
    ws = Workspace.open(repo)
    rec = create_version(ws, hypothesis="a policy")
    findings = [
        Finding(
            "signal",
            "signal.dead_groups_high",
            "critical",
            "dead groups",
            skills=["StdGroupFilter"],
            run_id="r1",
            version=rec.id,
        ),
        Finding(
            "behavior",
            "behavior.truncation_rate_high",
            "high",
            "truncated",
            skills=["OverlongPenalty"],
            run_id="r1",
            version=rec.id,
        ),
        Finding(
            "signal", "signal.none_solved_high", "warn", "none solved", run_id="r1", version=rec.id
        ),
    ]
    write_findings_file(
        ws.state_dir / "findings", f"{rec.id}.jsonl", [f.to_dict() for f in findings]
    )
    result = Cli(ws.root).json("suggest", rec.id)
    validate(result, "suggest")
    grpo = {s.name for s in list_skills() if "gym" not in s.domains}
    assert grpo and result["domain"] == "gym"
    assert not {s["skill"] for s in result["suggestions"]} & grpo, result["suggestions"]
    assert {f["code"] for f in result["unaddressed"]} == {
        "signal.dead_groups_high",
        "behavior.truncation_rate_high",
        "signal.none_solved_high",
    }
