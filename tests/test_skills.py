"""The skill library: metadata, skills.toml, `evotree skill apply` and `evotree branch --skill`."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

import evotree.skills as skills
from evotree.skills import (
    InvalidSkillParam,
    SkillNotApplicable,
    SkillsFileError,
    UnknownSkill,
    applied_skills,
    apply_skill,
    get_skill,
    list_skills,
    parse_skills_text,
)
from tests.conftest import git, ledger_commits

BUILTIN = [
    "StdGroupFilter",
    "DualLevelFilter",
    "OverlongPenalty",
    "PartialPassReward",
    "AuxRewardTerm",
]


def _set_domain(repo: Path, domain: str) -> None:
    """Commit a domain change to evotree.toml on the champion's commit (main == v0)."""
    path = repo / "evotree.toml"
    text = path.read_text()
    path.write_text(text.replace('domain = "custom"', f'domain = "{domain}"'))
    git(repo, "commit", "-qam", f"domain {domain}")
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/evotree/champion", head)
    git(repo, "update-ref", "refs/heads/evotree/v0", head)


# ------------------------------------------------------------------------------ metadata
def test_catalog_has_every_builtin_with_evotrainer_fields() -> None:
    infos = list_skills()
    assert [s.name for s in infos] == BUILTIN
    for info in infos:
        data = info.to_dict()
        for key in (
            "trigger",
            "intervention",
            "expected_outcome",
            "validation",
            "provenance",
            "title",
        ):
            assert isinstance(data[key], str) and len(data[key]) > 20, (info.name, key)
        assert "math" in info.domains and "gym" not in info.domains
        assert info.why_not("gym") and "gym" in info.why_not("gym")
        assert info.addresses and all(
            c.split(".")[0] in ("signal", "behavior") for c in info.addresses
        )
        json.dumps(data)  # serializable
        for p in data["params"]:
            assert p["type"] in skills.catalog.PARAM_TYPES
            # every default passes its own validation
            assert (
                get_skill(info.name).param(p["name"]).convert(p["default"], skill=info.name)
                == p["default"]
            )


def test_finding_codes_that_name_a_skill_are_addressed_by_it() -> None:
    """diagnostics' findings name skills (Finding.skills); each of those codes is in the skill's
    `addresses`, so suggest can go from a finding to a skill and back."""
    import re

    root = Path(__file__).resolve().parents[1] / "diagnostics"
    pairs = set()
    for path in sorted([*root.glob("signal*.py"), *root.glob("behavior*.py")]):
        text = path.read_text()
        for block in re.split(r"(?:self\.finding|rate_finding)\(", text)[1:]:
            code = re.search(r'"((?:signal|behavior)\.[a-z_]+)"', block)
            named = re.search(r"skills=\[([^\]]*)\]", block[:3000])
            if code and named:
                for name in re.findall(r'"(\w+)"', named.group(1)):
                    pairs.add((code.group(1), name))
    assert len(pairs) >= 8, pairs
    for code, name in pairs:
        assert code in get_skill(name).addresses, (code, name)


def test_unknown_skill_and_bad_params_are_clear() -> None:
    with pytest.raises(UnknownSkill) as err:
        get_skill("StdGroupFiltr")
    assert err.value.exit_code == 25 and "did you mean StdGroupFilter" in err.value.message
    info = get_skill("StdGroupFilter")
    with pytest.raises(InvalidSkillParam, match="did you mean 'min_std'"):
        skills.parse_params(info, {"min_sdt": "0.1"})
    with pytest.raises(InvalidSkillParam, match="not a number"):
        skills.parse_params(info, {"min_std": "abc"})
    with pytest.raises(InvalidSkillParam, match="out of range"):
        skills.parse_params(info, {"min_std": "-1"})
    with pytest.raises(InvalidSkillParam, match="not an integer"):
        skills.parse_params(info, {"max_resample_batches": "1.5"})
    with pytest.raises(InvalidSkillParam, match="not a boolean"):
        skills.parse_params(get_skill("DualLevelFilter"), {"mask_truncated": "maybe"})
    assert skills.parse_params(info, {"min_std": "0.25", "max_resample_batches": "2"}) == {
        "min_std": 0.25,
        "max_resample_batches": 2,
        "refill": "fresh",
    }


def test_skills_file_round_trip_and_errors() -> None:
    text = skills.recipe.render_skills_text(
        [
            skills.AppliedSkill("StdGroupFilter", {"min_std": 0.0, "max_resample_batches": 1}),
            skills.AppliedSkill("AuxRewardTerm", {"term": 'a "quoted" term', "weight": 0.1}),
        ]
    )
    assert [s.name for s in parse_skills_text(text)] == ["StdGroupFilter", "AuxRewardTerm"]
    assert tomllib.loads(text)["skill"][1]["params"]["term"] == 'a "quoted" term'
    with pytest.raises(SkillsFileError, match="listed twice"):
        parse_skills_text(text + '\n[[skill]]\nname = "StdGroupFilter"\n')
    with pytest.raises(SkillsFileError, match="unknown skill 'Nope'"):
        parse_skills_text('[[skill]]\nname = "Nope"\n')
    with pytest.raises(SkillsFileError, match="out of range"):
        parse_skills_text('[[skill]]\nname = "StdGroupFilter"\nparams = { min_std = -2.0 }\n')
    with pytest.raises(SkillsFileError, match="not valid TOML"):
        parse_skills_text("[[skill]\n")
    with pytest.raises(SkillNotApplicable):
        parse_skills_text('[[skill]]\nname = "StdGroupFilter"\n', domain="gym")


# ------------------------------------------------------------------------------ apply
def _branch_files(repo: Path, version: str) -> str:
    return git(repo, "show", f"evotree/{version}:skills.toml")


def test_apply_commits_in_the_worktree_and_appends_the_event(ws: Any, repo: Path) -> None:
    from evotree.core.versions import create_version

    rec = create_version(ws, hypothesis="filter dead groups")
    before = ledger_commits(repo)
    result = apply_skill(ws, rec.id, "StdGroupFilter", {"min_std": "0.05"})
    assert result.changed and result.params == {
        "min_std": 0.05,
        "max_resample_batches": 2,
        "refill": "fresh",
    }
    # a commit on the branch, made in the worktree (its HEAD moved, and it is clean)
    tip = git(repo, "rev-parse", f"evotree/{rec.id}")
    assert tip == result.commit != result.previous_commit
    wt = repo / rec.worktree
    assert git(wt, "rev-parse", "HEAD") == tip and git(wt, "status", "--porcelain") == ""
    assert git(repo, "log", "-1", "--format=%s", tip).startswith("evotree: skill StdGroupFilter")
    assert tomllib.loads(_branch_files(repo, rec.id))["skill"] == [
        {
            "name": "StdGroupFilter",
            "params": {"min_std": 0.05, "max_resample_batches": 2, "refill": "fresh"},
        }
    ]
    # one ledger event, and the version record lists the skill
    assert ledger_commits(repo) == before + 1
    event = json.loads(
        git(repo, "log", "-1", "--format=%B", "refs/evotree/ledger").splitlines()[-1]
    )
    from tests.conftest import validate

    validate(event, "event")
    assert event["kind"] == "skill.applied" and event["version"] == rec.id
    assert event["data"]["skill"] == "StdGroupFilter" and event["data"]["commit"] == tip
    assert event["data"]["params"] == {
        "min_std": 0.05,
        "max_resample_batches": 2,
        "refill": "fresh",
    }
    assert ws.resolve(rec.id).skills == ["StdGroupFilter"]
    assert [s.to_dict() for s in applied_skills(ws, rec.id)] == [
        {
            "name": "StdGroupFilter",
            "params": {"min_std": 0.05, "max_resample_batches": 2, "refill": "fresh"},
        }
    ]

    # a second skill appends; re-applying replaces the params in place; same params: no-op
    apply_skill(ws, rec.id, "OverlongPenalty", {})
    again = apply_skill(ws, rec.id, "StdGroupFilter", {"min_std": "0.1"})
    assert [s.name for s in again.skills] == ["StdGroupFilter", "OverlongPenalty"]
    assert applied_skills(ws, rec.id)[0].params["min_std"] == 0.1
    count = ledger_commits(repo)
    same = apply_skill(ws, rec.id, "StdGroupFilter", {"min_std": "0.1"})
    assert not same.changed and ledger_commits(repo) == count
    assert ws.resolve(rec.id).skills == ["StdGroupFilter", "OverlongPenalty"]


def test_apply_without_a_worktree_commits_on_the_branch(ws: Any, repo: Path) -> None:
    from evotree.core.versions import create_version, prune_worktrees

    rec = create_version(ws, hypothesis="h")
    import shutil

    shutil.rmtree(repo / rec.worktree)
    prune_worktrees(ws)
    result = apply_skill(ws, rec.id, "PartialPassReward", {"min_fraction": "0.5"})
    assert git(repo, "rev-parse", f"evotree/{rec.id}") == result.commit
    assert git(repo, "rev-parse", f"{result.commit}^") == result.previous_commit
    assert "PartialPassReward" in _branch_files(repo, rec.id)


def test_apply_refusals_write_nothing(ws: Any, repo: Path) -> None:
    from evotree.core.errors import DirtyState, InvalidState
    from evotree.core.versions import abandon_version, create_version

    rec = create_version(ws, hypothesis="h")
    tip = git(repo, "rev-parse", f"evotree/{rec.id}")
    count = ledger_commits(repo)

    def unchanged() -> None:
        assert git(repo, "rev-parse", f"evotree/{rec.id}") == tip
        assert ledger_commits(repo) == count
        assert not (repo / rec.worktree / "skills.toml").exists()

    with pytest.raises(UnknownSkill):
        apply_skill(ws, rec.id, "NoSuchSkill", {})
    with pytest.raises(InvalidSkillParam):
        apply_skill(ws, rec.id, "StdGroupFilter", {"max_resample_batches": "99"})
    with pytest.raises(InvalidState, match="champion"):
        apply_skill(ws, "v0", "StdGroupFilter", {})
    (repo / rec.worktree / "notes.txt").write_text("wip")
    with pytest.raises(DirtyState, match="notes.txt"):
        apply_skill(ws, rec.id, "StdGroupFilter", {})
    (repo / rec.worktree / "notes.txt").unlink()
    unchanged()
    abandon_version(ws, rec.id, reason="dead end")
    with pytest.raises(InvalidState, match="abandoned"):
        apply_skill(ws, rec.id, "StdGroupFilter", {})


def test_apply_refuses_a_skill_that_does_not_apply_to_the_domain(ws: Any, repo: Path) -> None:
    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace

    _set_domain(repo, "gym")
    ws = Workspace.open(repo)
    assert ws.config.workspace.domain == "gym"
    rec = create_version(ws, hypothesis="h")
    count = ledger_commits(repo)
    with pytest.raises(SkillNotApplicable) as err:
        apply_skill(ws, rec.id, "StdGroupFilter", {})
    assert err.value.exit_code == 26 and "gym" in err.value.message
    assert ledger_commits(repo) == count


def test_apply_checks_values_the_domain_offers(ws: Any, repo: Path) -> None:
    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace

    _set_domain(repo, "math")
    ws = Workspace.open(repo)
    rec = create_version(ws, hypothesis="h")
    with pytest.raises(InvalidSkillParam, match="offers instruction_following, brevity"):
        apply_skill(ws, rec.id, "AuxRewardTerm", {"term": "politeness"})
    assert apply_skill(ws, rec.id, "AuxRewardTerm", {"term": "brevity"}).changed


def test_a_failed_ledger_append_undoes_the_commit(ws: Any, repo: Path, monkeypatch: Any) -> None:
    from evotree.core.errors import LedgerConflict
    from evotree.core.versions import create_version

    rec = create_version(ws, hypothesis="h")
    tip = git(repo, "rev-parse", f"evotree/{rec.id}")
    count = ledger_commits(repo)

    def fail(*args: Any, **kwargs: Any) -> Any:  # fault injection: the CAS keeps losing
        raise LedgerConflict("lost every race", fix="retry")

    monkeypatch.setattr(ws.ledger, "transact", fail)
    with pytest.raises(LedgerConflict):
        apply_skill(ws, rec.id, "StdGroupFilter", {})
    assert git(repo, "rev-parse", f"evotree/{rec.id}") == tip
    assert git(repo / rec.worktree, "rev-parse", "HEAD") == tip
    assert git(repo / rec.worktree, "status", "--porcelain") == ""
    assert ledger_commits(repo) == count


# ------------------------------------------------------------------------------ CLI
def test_cli_list_show_and_schemas(run: Any, repo: Path, ws: Any) -> None:
    from tests.conftest import validate

    data = run.json("skill", "list")
    validate(data, "skill_list")
    assert data["domain"] == "custom" and [s["name"] for s in data["skills"]] == BUILTIN
    assert all(s["applies"] is True for s in data["skills"])
    text = run("skill", "list").output
    assert all(name in text for name in BUILTIN) and "math, custom" in text
    shown = run.json("skill", "show", "OverlongPenalty")
    validate(shown, "skill_show")
    assert shown["name"] == "OverlongPenalty" and shown["kind"] == "reward"
    assert {p["name"] for p in shown["params"]} == {"max_length", "cache_length", "weight"}
    text = run("skill", "show", "StdGroupFilter").output
    for label in (
        "Trigger",
        "Intervention",
        "Expected outcome",
        "Validation",
        "Provenance",
        "min_std",
        "arXiv:2503.14476",
        "signal.dead_groups_high",
    ):
        assert label in " ".join(text.split()), label
    err = run.json("skill", "show", "StdGroupFiltr", code=25)["error"]
    assert err["code"] == "unknown_skill" and "StdGroupFilter" in err["message"]
    assert "skill_list" in run.json("schema")["schemas"]


def test_cli_list_outside_a_workspace(tmp_path: Path) -> None:
    from tests.conftest import Cli

    data = Cli(tmp_path).json("skill", "list")
    assert data["domain"] is None and all(s["applies"] is None for s in data["skills"])


def test_cli_apply(run: Any, repo: Path, ws: Any) -> None:
    from tests.conftest import validate

    created = run.json("branch", "-m", "h")
    out = run.json(
        "skill",
        "apply",
        "StdGroupFilter",
        "--to",
        created["id"],
        "--param",
        "min_std=0.2",
        "--param",
        "max_resample_batches=1",
    )
    validate(out, "skill_apply")
    assert out["changed"] and out["params"] == {
        "min_std": 0.2,
        "max_resample_batches": 1,
        "refill": "fresh",
    }
    assert git(repo, "rev-parse", f"evotree/{created['id']}") == out["commit"]
    again = run.json(
        "skill",
        "apply",
        "StdGroupFilter",
        "--to",
        created["id"],
        "--param",
        "min_std=0.2",
        "--param",
        "max_resample_batches=1",
    )
    validate(again, "skill_apply")
    assert again["changed"] is False and again["ledger_commit"] is None
    text = run("skill", "apply", "OverlongPenalty", "--to", created["id"]).output
    assert "applied OverlongPenalty" in text
    err = run.json(
        "skill", "apply", "StdGroupFilter", "--to", created["id"], "--param", "min_std=x", code=25
    )["error"]
    assert err["code"] == "invalid_skill_param" and "fix" in err
    result = run(
        "skill", "apply", "StdGroupFilter", "--to", created["id"], "--param", "nonsense", code=2
    )
    assert "KEY=VALUE" in result.output
    err = run.json("skill", "apply", "StdGroupFilter", "--to", "v0", code=10)["error"]
    assert "champion" in err["message"]


def test_cli_branch_with_skills(run: Any, repo: Path, ws: Any) -> None:
    from tests.conftest import validate

    before = ledger_commits(repo)
    data = run.json(
        "branch",
        "-m",
        "filter dead groups, penalize long answers",
        "--skill",
        "StdGroupFilter",
        "--param",
        "StdGroupFilter.min_std=0.1",
        "--skill",
        "OverlongPenalty",
    )
    validate(data, "version")
    assert data["skills"] == ["StdGroupFilter", "OverlongPenalty"]
    assert ledger_commits(repo) == before + 3  # version.created + two skill.applied
    kinds = [
        json.loads(
            git(repo, "log", "-1", "--format=%B", f"refs/evotree/ledger~{i}").splitlines()[-1]
        )["kind"]
        for i in range(3)
    ]
    assert kinds == ["skill.applied", "skill.applied", "version.created"]
    files = tomllib.loads(git(repo, "show", f"evotree/{data['id']}:skills.toml"))["skill"]
    assert [(s["name"], s["params"].get("min_std")) for s in files] == [
        ("StdGroupFilter", 0.1),
        ("OverlongPenalty", None),
    ]
    assert (
        "skills: PartialPassReward"
        in run("branch", "-m", "x", "--skill", "PartialPassReward").output
    )


def test_cli_branch_with_a_bad_skill_creates_nothing(run: Any, repo: Path, ws: Any) -> None:
    before = ledger_commits(repo)
    branches = git(repo, "branch", "--list", "evotree/*")
    run.json(
        "branch",
        "-m",
        "h",
        "--skill",
        "StdGroupFilter",
        "--param",
        "StdGroupFilter.min_std=-1",
        code=25,
    )
    run.json("branch", "-m", "h", "--skill", "NoSuch", code=25)
    run.json(
        "branch",
        "-m",
        "h",
        "--skill",
        "StdGroupFilter",
        "--param",
        "OverlongPenalty.weight=1",
        code=25,
    )
    run.json("branch", "-m", "h", "--skill", "StdGroupFilter", "--skill", "StdGroupFilter", code=25)
    assert ledger_commits(repo) == before
    assert git(repo, "branch", "--list", "evotree/*") == branches


def test_branch_with_skills_abandons_the_version_if_an_apply_fails(
    ws: Any, repo: Path, monkeypatch: Any
) -> None:
    """A failure after the version exists (fault injected into the commit step) leaves an
    abandoned version with the reason, not a live version missing its skills."""
    from evotree.core.errors import GitCommandError
    from evotree.skills import recipe

    def broken(*args: Any, **kwargs: Any) -> str:
        raise GitCommandError("`git commit` failed (1): disk full", fix="free some space")

    monkeypatch.setattr(recipe, "_commit_in_worktree", broken)
    with pytest.raises(GitCommandError):
        recipe.branch_with_skills(ws, hypothesis="h", requested=[("StdGroupFilter", {})])
    (created,) = [r for r in ws.ledger.versions() if r.id != "v0"]
    assert created.status == "abandoned" and "disk full" in created.reason
    assert created.skills == [] and not (repo / ".evotree" / "worktrees" / created.id).exists()


def test_concurrent_applies_to_one_version_all_land(run: Any, repo: Path, ws: Any) -> None:
    """Five `evotree skill apply` processes started at once on one version all land: one commit
    each, on top of one another, and skills.toml and the record list all five. (Applies are
    serialized per version by an flock; process start-up jitter means this test does not
    prove that lock is needed, only that concurrent use ends consistent.)"""
    import subprocess
    import sys

    created = run.json("branch", "-m", "h")
    names = BUILTIN
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-P",
                "-m",
                "evotree",
                "-C",
                str(repo),
                "skill",
                "apply",
                name,
                "--to",
                created["id"],
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(names), outs
    files = tomllib.loads(git(repo, "show", f"evotree/{created['id']}:skills.toml"))["skill"]
    assert sorted(s["name"] for s in files) == sorted(names)
    assert git(repo, "rev-list", "--count", f"evotree/{created['id']}", "^evotree/v0") == str(
        len(names)
    )
    assert sorted(ws.resolve(created["id"]).skills) == sorted(names)
    assert git(repo / created["worktree"], "status", "--porcelain") == ""


def test_apply_refuses_a_worktree_off_its_branch(ws: Any, repo: Path) -> None:
    from evotree.core.errors import InvalidState
    from evotree.core.versions import create_version

    rec = create_version(ws, hypothesis="h")
    git(repo / rec.worktree, "checkout", "--quiet", "--detach")
    with pytest.raises(InvalidState, match="not on its branch"):
        apply_skill(ws, rec.id, "StdGroupFilter", {})


def test_skill_commands_import_nothing_heavy(ws: Any, repo: Path) -> None:
    from test_startup import HEAVY, _modules_after

    for args in (
        ["skill", "list", "--json"],
        ["skill", "show", "StdGroupFilter"],
        ["branch", "-m", "x", "--skill", "StdGroupFilter", "--json"],
    ):
        code, modules = _modules_after(["-C", str(repo), *args], repo)
        assert code == 0, args
        assert not modules & set(HEAVY), (args, modules & set(HEAVY))
