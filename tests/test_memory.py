"""Memory on refs/evotree/memory: entries, ids, recording on promotion/rejection/abandonment,
incidents, lessons by hand, search, skill status, and sharing through git."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, commit_file, git, make_repo, validate
from fixtures_ws import bare_remote, clone_as

import evotree.memory as memory
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.memory.model import EntryKind, InvalidMemory, MemoryEntry
from evotree.memory.store import MemoryStore

MEMORY_REF = "refs/evotree/memory"


def _comparison(
    version: str, delta: float, ci: tuple[float, float], p: float, a: str = "v0"
) -> dict[str, Any]:
    return {
        "a": a,
        "b": version,
        "delta": delta,
        "ci": list(ci),
        "p_value": p,
        "test": "wilcoxon",
        "n_tasks": 10,
        "alpha": 0.05,
        "decision": "better" if ci[0] > 0 else "inconclusive",
    }


def _with_skills(ws: Workspace, hypothesis: str, names: list[str]) -> str:
    """A version with one commit and ``names`` applied through the skill library."""
    from evotree.skills import apply_skill

    record = create_version(ws, hypothesis=hypothesis)
    commit_file(ws.root / record.worktree, "recipe.toml", f"# {hypothesis}\n", hypothesis)
    for name in names:
        apply_skill(ws, record.id, name)
    return record.id


def test_promotion_records_verifications_and_a_lesson(ws: Workspace, repo: Path) -> None:
    v1 = _with_skills(ws, "filter dead groups", ["StdGroupFilter", "OverlongPenalty"])
    entries = memory.record_promotion(
        ws, v1, previous_champion="v0", comparison=_comparison(v1, 0.08, (0.02, 0.14), 0.004)
    )
    kinds = [e.kind for e in entries]
    assert kinds.count("skill_verification") == 2 and kinds.count("lesson") == 1
    std = next(e for e in entries if e.skill == "StdGroupFilter")
    assert std.domain == "custom" and std.version == v1 and std.significant
    assert std.data["delta"] == pytest.approx(0.08) and std.data["ci"] == [0.02, 0.14]
    assert std.data["p_value"] == pytest.approx(0.004) and std.data["previous_champion"] == "v0"
    assert std.evidence["version_commit"] == git(repo, "rev-parse", f"evotree/{v1}")
    # one commit for the promotion, on the memory ref, nothing else touched
    assert git(repo, "rev-list", "--count", MEMORY_REF) == "1"
    assert "promotion v1" in git(repo, "log", "-1", "--format=%s", MEMORY_REF)
    assert git(repo, "status", "--porcelain") == ""
    stored = {e.id for e in memory.list_entries(ws)}
    assert stored == {e.id for e in entries}
    assert [
        e.id for e in memory.list_entries(ws, "skill_verification", skill="OverlongPenalty")
    ] == [next(e.id for e in entries if e.skill == "OverlongPenalty")]


def test_significance_needs_ci_above_zero_and_p_below_alpha(ws: Workspace) -> None:
    v1 = _with_skills(ws, "a", ["StdGroupFilter"])
    (ver, _) = memory.record_promotion(
        ws, v1, previous_champion="v0", comparison=_comparison(v1, 0.05, (-0.01, 0.1), 0.03)
    )
    assert not ver.significant  # CI crosses 0
    v2 = _with_skills(ws, "b", ["StdGroupFilter"])
    (ver, _) = memory.record_promotion(
        ws, v2, previous_champion="v0", comparison=_comparison(v2, 0.05, (0.01, 0.1), 0.2)
    )
    assert not ver.significant  # p too large
    # a comparison run the other way round (a = candidate) is oriented as candidate - champion
    v3 = _with_skills(ws, "c", ["StdGroupFilter"])
    flipped = {**_comparison("v0", -0.07, (-0.12, -0.02), 0.001), "a": v3, "b": "v0"}
    (ver, _) = memory.record_promotion(ws, v3, previous_champion="v0", comparison=flipped)
    assert (
        ver.significant
        and ver.data["delta"] == pytest.approx(0.07)
        and ver.data["ci"] == [0.02, 0.12]
    )
    # without a comparison: recorded, not significant
    v4 = _with_skills(ws, "d", ["StdGroupFilter"])
    (ver, _lesson) = memory.record_promotion(ws, v4, previous_champion="v3", comparison=None)
    assert not ver.significant and "no comparison" in ver.text


def test_rejection_abandonment_incident_are_negative_evidence(ws: Workspace, repo: Path) -> None:
    v1 = _with_skills(ws, "reward tweak", ["AuxRewardTerm"])
    rejected = memory.record_rejection(
        ws, v1, decision="REVISE", feedback="gain within noise", evidence={"comparison_p": 0.4}
    )
    assert rejected.kind == "negative_evidence" and rejected.data["decision"] == "REVISE"
    assert [s["name"] for s in rejected.data["skills"]] == ["AuxRewardTerm"]
    assert rejected.data["skills"][0]["params"]  # resolved by the skill library
    assert rejected.evidence["comparison_p"] == 0.4 and "revise" in rejected.tags
    incident = memory.record_incident(
        ws,
        v1,
        [
            {
                "layer": "audit",
                "code": "audit.git_history_read",
                "severity": "critical",
                "title": "ran git show",
                "evidence": {"command": "git show HEAD~1"},
            },
            {
                "layer": "audit",
                "code": "audit.judge_path_read",
                "severity": "high",
                "title": "read judge/",
            },
        ],
    )
    assert (
        incident.kind == "incident"
        and incident.data["worst"] == "critical"
        and incident.data["total"] == 2
    )
    with pytest.raises(InvalidMemory, match="at least one finding"):
        memory.record_incident(ws, v1, [])
    with pytest.raises(InvalidMemory, match="code and severity"):
        memory.record_incident(ws, v1, [{"title": "x"}])
    with pytest.raises(InvalidMemory, match="decision"):
        memory.record_rejection(ws, v1, decision=" ", feedback="x")
    # the CLI's abandon writes negative evidence too
    Cli(repo).json("abandon", v1, "--reason", "reward hacking suspected")
    (abandoned,) = memory.list_entries(ws, "negative_evidence", version=v1)[1:]
    assert (
        abandoned.data["decision"] == "abandoned" and "reward hacking suspected" in abandoned.text
    )
    assert ws.resolve(v1).status == "abandoned"
    assert git(repo, "rev-list", "--count", MEMORY_REF) == "3"


def test_abandonment_carries_the_latest_findings(ws: Workspace) -> None:
    from evotree.core.ledger import Event, LedgerTxn

    v1 = _with_skills(ws, "x", [])

    def finding(txn: LedgerTxn) -> Event:
        txn.require(v1)
        return Event(
            kind="finding",
            version=v1,
            actor="t <t@e>",
            data={
                "worst": "high",
                "counts": {"high": 1},
                "total": 1,
                "findings": [
                    {
                        "code": "signal.dead_groups_high",
                        "severity": "high",
                        "title": "62% of groups are dead",
                        "layer": "signal",
                    }
                ],
            },
        )

    ws.ledger.transact(finding, actor=ws.git.identity())
    entry = memory.record_abandonment(ws, v1, "no learning signal")
    assert entry.data["findings"]["worst"] == "high"
    assert entry.data["findings"]["codes"] == ["signal.dead_groups_high"]
    assert "signal.dead_groups_high" in entry.text
    assert [h.entry.id for h in memory.search(ws, "dead groups")] == [entry.id]


def test_abandon_stands_when_memory_fails(ws: Workspace, repo: Path) -> None:
    v1 = create_version(ws, hypothesis="x").id
    # a memory ref that points at a blob makes every memory write fail
    (repo / "junk").write_text("junk")
    blob = git(repo, "hash-object", "-w", "junk")
    (repo / "junk").unlink()
    git(repo, "update-ref", MEMORY_REF, blob)
    result = Cli(repo)("abandon", v1, "--reason", "worse", "--json")
    assert json.loads(result.stdout)["status"] == "abandoned"
    assert "memory was not updated" in result.stderr
    assert ws.resolve(v1).status == "abandoned"


def test_add_lesson_by_hand_and_refusals(ws: Workspace, repo: Path) -> None:
    run = Cli(repo)
    v1 = create_version(ws, hypothesis="x").id
    entry = run.json(
        "memory",
        "add",
        "dead groups vanish once std < 0.05 groups are dropped",
        "--version",
        v1,
        "--evidence",
        "run=r-1",
        "--tag",
        "grpo",
    )
    validate(entry, "memory_entry")
    assert (
        entry["kind"] == "lesson" and entry["version"] == v1 and entry["evidence"]["run"] == "r-1"
    )
    assert entry["evidence"]["version_commit"] == git(repo, "rev-parse", f"evotree/{v1}")
    assert set(entry["tags"]) == {"grpo", "manual"}
    shown = run.json("memory", "show", entry["id"][:6])
    assert shown == entry
    assert (
        run.json("memory", "add", "x", "--evidence", "novalue", code=27)["error"]["code"]
        == "memory_error"
    )
    assert run.json("memory", "add", "   ", code=27)["error"]["message"].startswith(
        "memory entry text"
    )
    assert (
        run.json("memory", "add", "x", "--version", "v99", code=5)["error"]["code"]
        == "unknown_version"
    )
    assert run.json("memory", "show", "mzzzz", code=27)["error"]["message"].startswith(
        "no memory entry"
    )
    run("memory", "add", "x", "--kind", "skill_verification", code=2)  # not a choice by hand
    with pytest.raises(InvalidMemory, match="recorded automatically"):
        memory.add_entry(ws, "forged", kind="skill_verification", skill="StdGroupFilter")
    assert len(memory.list_entries(ws)) == 1  # refusals wrote nothing


def test_entry_ids_are_content_hashes_and_tampering_is_refused(ws: Workspace) -> None:
    entry = memory.add_entry(ws, "lesson one")
    data = entry.to_dict()
    assert MemoryEntry.from_dict(data) == entry
    assert entry.id.startswith("m") and len(entry.id) == 21
    data["text"] = "lesson one, edited"
    with pytest.raises(InvalidMemory, match="changed after it was written"):
        MemoryEntry.from_dict(data)
    with pytest.raises(InvalidMemory, match="unknown fields"):
        MemoryEntry.from_dict({**entry.to_dict(), "extra": 1})
    with pytest.raises(InvalidMemory, match="kind"):
        MemoryEntry.from_dict({**entry.to_dict(), "kind": "gossip"})
    # origin is not part of the id
    assert (
        MemoryEntry.from_dict({**entry.to_dict(), "origin": {"imported_from": "x"}}).id == entry.id
    )


def test_search_ranks_and_requires_every_word(ws: Workspace) -> None:
    a = memory.add_entry(
        ws, "StdGroupFilter removed dead groups in math; dead groups fell from 55% to 27%"
    )
    b = memory.add_entry(ws, "a dead end: the length penalty made answers too short")
    c = memory.add_entry(ws, "learning rate 1e-5 was stable")
    assert [h.entry.id for h in memory.search(ws, "dead groups")] == [a.id]
    hits = memory.search(ws, "dead")
    assert [h.entry.id for h in hits] == [a.id, b.id]  # a says it twice
    assert hits[0].score > hits[1].score > 0
    assert [h.entry.id for h in memory.search(ws, "group filter")] == [a.id]  # camelCase parts
    assert [h.entry.id for h in memory.search(ws, "stdgroup*")] == [a.id]
    # a compound word not indexed as a whole matches all its parts; punctuation separates words
    assert [h.entry.id for h in memory.search(ws, "dead-groups")] == [a.id]
    assert [h.entry.id for h in memory.search(ws, "dead,groups")] == [a.id]
    assert [h.entry.id for h in memory.search(ws, "groups*")] == [a.id]
    assert [h.entry.id for h in memory.search(ws, "learn*")] == [c.id]
    assert memory.search(ws, "nothing-like-this") == []
    with pytest.raises(InvalidMemory, match="words"):
        memory.search(ws, "  ")


def test_skill_status_needs_significant_gains_in_two_domains(tmp_path: Path) -> None:
    math_repo = make_repo(tmp_path / "m")
    (math_repo / "evotree.toml").write_text('[workspace]\ndomain = "math"\n')
    git(math_repo, "add", "-A")
    git(math_repo, "commit", "-qm", "math")
    init_workspace(math_repo)
    ws = Workspace.open(math_repo)
    assert ws.config.workspace.domain == "math"
    v1 = _with_skills(ws, "a", ["StdGroupFilter"])
    memory.record_promotion(
        ws, v1, previous_champion="v0", comparison=_comparison(v1, 0.1, (0.03, 0.2), 0.001)
    )
    v2 = _with_skills(ws, "b", ["StdGroupFilter"])
    memory.record_promotion(
        ws, v2, previous_champion=v1, comparison=_comparison(v2, 0.1, (0.04, 0.2), 0.002, a=v1)
    )
    (status,) = memory.skill_status(ws)
    # two significant gains, but in ONE domain: not verified across domains
    assert (
        status.skill == "StdGroupFilter" and status.domains == ["math"] and status.significant == 2
    )
    assert not status.verified_across_domains
    out = Cli(math_repo).json("memory", "skills")
    validate(out, "memory_skills")
    assert out["skills"][0]["verified_across_domains"] is False and out["min_domains"] == 2


def test_memory_survives_push_and_clone(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    v1 = _with_skills(ws, "filter", ["StdGroupFilter"])
    memory.record_promotion(
        ws, v1, previous_champion="v0", comparison=_comparison(v1, 0.1, (0.02, 0.2), 0.01)
    )
    memory.add_entry(ws, "keep the historical best")
    before = Cli(repo).json("memory", "list")
    bare = bare_remote(repo, tmp_path / "origin.git", how="all")
    clone = clone_as(bare, tmp_path / "clone", "Bo", "bo@example.com", fetch_evotree=True)
    after = Cli(clone).json("memory", "list")
    from evotree.memory.record import workspace_id

    assert workspace_id(Workspace.open(clone)) == workspace_id(ws)  # the same workspace, cloned
    validate(after, "memory_list")
    assert after["entries"] == before["entries"] and len(after["entries"]) == 3
    assert after["skills"] == before["skills"]
    # the clone appends on top; pushing back and fetching gives the original both
    Cli(clone).json("memory", "add", "learned in the clone")
    git(clone, "push", "--quiet", "origin", "refs/evotree/memory")
    git(repo, "fetch", "--quiet", "origin", "+refs/evotree/memory:refs/evotree/memory")
    assert [e["text"] for e in Cli(repo).json("memory", "list")["entries"]][
        -1
    ] == "learned in the clone"


def test_concurrent_appends_lose_nothing(ws: Workspace, repo: Path) -> None:
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            own = Workspace.open(repo)  # pygit2 repositories are not shared across threads
            for j in range(5):
                memory.add_entry(own, f"lesson {i}-{j}")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    texts = sorted(e.text for e in memory.list_entries(ws))
    assert texts == sorted(f"lesson {i}-{j}" for i in range(4) for j in range(5))
    assert git(repo, "rev-list", "--count", MEMORY_REF) == "20"
    assert MemoryStore(ws.git).commits() == 20


def test_list_search_show_cli_and_schemas(ws: Workspace, repo: Path) -> None:
    run = Cli(repo)
    empty = run.json("memory", "list")
    assert empty["entries"] == [] and empty["skills"] == []
    assert "memory is empty" in run("memory", "list").stdout
    v1 = _with_skills(ws, "filter", ["StdGroupFilter"])
    memory.record_promotion(
        ws, v1, previous_champion="v0", comparison=_comparison(v1, 0.1, (0.02, 0.2), 0.01)
    )
    listed = run.json("memory", "list")
    validate(listed, "memory_list")
    assert {e["kind"] for e in listed["entries"]} == {"skill_verification", "lesson"}
    assert [e["kind"] for e in run.json("memory", "list", "--kind", "lesson")["entries"]] == [
        "lesson"
    ]
    found = run.json("memory", "search", "StdGroupFilter", "significant")
    validate(found, "memory_search")
    assert found["hits"] and all("stdgroupfilter" in h["matched"] for h in found["hits"])
    text = run("memory", "list").stdout
    assert "StdGroupFilter" in text and "verified in one domain" in text
    assert "significant gain" in run("memory", "show", found["hits"][0]["entry"]["id"]).stdout
    assert "BM25" in run("memory", "search", "--help").stdout
    assert EntryKind.LESSON.value == "lesson"


def test_memory_commands_import_nothing_heavy(ws: Workspace, repo: Path) -> None:
    from test_startup import HEAVY, _modules_after

    memory.add_entry(ws, "dead groups need a filter")
    for args in (
        ["memory", "list", "--json"],
        ["memory", "search", "dead"],
        ["memory", "skills"],
        ["memory", "--help"],
    ):
        code, modules = _modules_after(["-C", str(repo), *args], repo)
        assert code == 0, args
        assert not modules & set(HEAVY), (args, modules & set(HEAVY))


def test_a_tampered_memory_ref_is_reported(ws: Workspace, repo: Path) -> None:
    """Someone rewrites an entry's blob in a new memory commit: reading memory says so."""
    entry = memory.add_entry(ws, "the honest lesson")
    tree = git(repo, "rev-parse", f"{MEMORY_REF}^{{tree}}")
    path = f"entries/{entry.id[1:3]}/{entry.id}.json"
    data = json.loads(git(repo, "cat-file", "-p", f"{MEMORY_REF}:{path}"))
    data["text"] = "a convenient lesson"
    index = repo / ".git" / "tampered-index"
    (repo / "forged.json").write_text(json.dumps(data))
    blob = git(repo, "hash-object", "-w", "forged.json")
    (repo / "forged.json").unlink()
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "read-tree", tree], cwd=repo, env=env, check=True)
    subprocess.run(
        ["git", "update-index", "--cacheinfo", f"100644,{blob},{path}"],
        cwd=repo,
        env=env,
        check=True,
    )
    new_tree = subprocess.run(
        ["git", "write-tree"], cwd=repo, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    commit = git(repo, "commit-tree", new_tree, "-p", MEMORY_REF, "-m", "edit")
    # offered for a merge, the edited history is refused and memory stays as it was
    git(repo, "update-ref", "refs/remotes/other/evotree-memory", commit)
    head = git(repo, "rev-parse", MEMORY_REF)
    err = Cli(repo).json("memory", "merge", "refs/remotes/other/evotree-memory", code=27)["error"]
    assert (
        "changed after it was written" in err["message"]
        and git(repo, "rev-parse", MEMORY_REF) == head
    )
    git(repo, "update-ref", MEMORY_REF, commit)
    err = Cli(repo).json("memory", "list", code=27)["error"]
    assert entry.id in err["message"] and "changed after it was written" in err["message"]
    assert "git log -p refs/evotree/memory" in err["fix"]


def test_promotion_with_a_real_comparison(tmp_path: Path) -> None:
    """The dict of evotree.diagnostics.compare over real runs, as the promotion gate passes it."""
    from test_runs import make_run_repo

    from evotree.diagnostics.compare import compare
    from evotree.gates.runs import run_versions

    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    rec = create_version(ws, hypothesis="a better recipe")
    commit_file(ws.root / rec.worktree, "recipe.toml", "skill = 1.0\nsteps = 2\n", "recipe")
    from evotree.skills import apply_skill

    apply_skill(ws, rec.id, "StdGroupFilter", {"min_std": 0.05})
    records = run_versions(ws, ["v0", rec.id], seeds=2)
    assert all(r.status == "succeeded" for r in records), [r.error for r in records]
    comparison = compare(ws, "v0", rec.id, B=2000).to_dict()
    verification, lesson = memory.record_promotion(
        ws, rec.id, previous_champion="v0", comparison=comparison
    )
    assert verification.skill == "StdGroupFilter" and verification.data["params"]["min_std"] == 0.05
    assert (
        verification.data["delta"] == pytest.approx(comparison["delta"]) and comparison["delta"] > 0
    )
    assert verification.data["ci"] == pytest.approx(comparison["ci"])
    assert verification.significant == (
        comparison["ci"][0] > 0 and comparison["p_value"] < comparison["alpha"]
    )
    assert lesson.data["n_tasks"] == comparison["n_tasks"] == 10
    (status,) = memory.skill_status(ws)
    assert status.domains == (["custom"] if verification.significant else [])


def test_schemas_are_valid_and_list_limits(ws: Workspace, repo: Path) -> None:
    import jsonschema
    from conftest import load_schema

    for name in (
        "memory_entry",
        "memory_list",
        "memory_search",
        "memory_skills",
        "memory_export",
        "memory_import",
        "memory_merge",
        "suggest",
    ):
        jsonschema.Draft202012Validator.check_schema(load_schema(name))
        assert name in Cli(repo).json("schema")["schemas"]
    for i in range(3):
        memory.add_entry(ws, f"lesson {i}")
    newest = Cli(repo).json("memory", "list", "-n", "2")
    validate(newest, "memory_list")
    assert [e["text"] for e in newest["entries"]] == ["lesson 1", "lesson 2"]


_ADDER = """
import sys
from evotree.core.workspace import Workspace
import evotree.memory as memory
ws = Workspace.open(sys.argv[1])
for j in range(3):
    memory.add_entry(ws, f"process {sys.argv[2]} lesson {j}")
"""


def test_concurrent_processes_lose_nothing(ws: Workspace, repo: Path) -> None:
    import sys

    procs = [
        subprocess.Popen(
            [sys.executable, "-P", "-c", _ADDER, str(repo), str(i)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    texts = sorted(e.text for e in memory.list_entries(ws))
    assert texts == sorted(f"process {i} lesson {j}" for i in range(4) for j in range(3))
    assert git(repo, "rev-list", "--count", MEMORY_REF) == "12"


def test_diverged_clones_merge_their_memory(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    memory.add_entry(ws, "shared lesson")
    bare = bare_remote(repo, tmp_path / "origin.git", how="all")
    clone = clone_as(bare, tmp_path / "clone", "Bo", "bo@example.com", fetch_evotree=True)
    Cli(clone).json("memory", "add", "learned in the clone")
    git(clone, "push", "--quiet", "origin", "refs/evotree/memory")
    memory.add_entry(ws, "learned here meanwhile")
    # the histories diverged: a plain fetch is refused, nothing is lost
    assert (
        "rejected"
        in subprocess.run(
            ["git", "fetch", "origin", "refs/evotree/memory:refs/evotree/memory"],
            check=False,
            cwd=repo,
            capture_output=True,
            text=True,
        ).stderr
    )
    git(
        repo, "fetch", "--quiet", "origin", "refs/evotree/memory:refs/remotes/origin/evotree-memory"
    )
    merged = Cli(repo).json("memory", "merge", "refs/remotes/origin/evotree-memory")
    validate(merged, "memory_merge")
    assert len(merged["added"]) == 1 and len(merged["skipped"]) == 1 and not merged["fast_forward"]
    assert sorted(e.text for e in memory.list_entries(ws)) == [
        "learned here meanwhile",
        "learned in the clone",
        "shared lesson",
    ]
    parents = git(repo, "log", "-1", "--format=%P", MEMORY_REF).split()
    assert (
        git(repo, "rev-parse", "refs/remotes/origin/evotree-memory") in parents
        and len(parents) == 2
    )
    git(
        repo, "push", "--quiet", "origin", "refs/evotree/memory"
    )  # a fast-forward for the remote now
    # merging again changes nothing; the clone fast-forwards to the merge
    assert Cli(repo).json("memory", "merge", "refs/remotes/origin/evotree-memory")["commit"] is None
    git(
        clone,
        "fetch",
        "--quiet",
        "origin",
        "refs/evotree/memory:refs/remotes/origin/evotree-memory",
    )
    ff = Cli(clone).json("memory", "merge", "refs/remotes/origin/evotree-memory")
    assert ff["fast_forward"] and ff["commit"] == git(repo, "rev-parse", MEMORY_REF)
    assert git(clone, "rev-parse", MEMORY_REF) == git(repo, "rev-parse", MEMORY_REF)
    # refusals: not a commit, not a memory commit; memory untouched
    head = git(repo, "rev-parse", MEMORY_REF)
    assert (
        "does not name a commit"
        in Cli(repo).json("memory", "merge", "nope", code=27)["error"]["message"]
    )
    assert (
        "not a memory commit"
        in Cli(repo).json("memory", "merge", "main", code=27)["error"]["message"]
    )
    assert git(repo, "rev-parse", MEMORY_REF) == head


def _memory_commit(ws: Workspace, shape: dict[str, Any] | bytes) -> str:
    """A commit whose tree is ``meta.json`` plus ``entries`` built from ``shape`` (name -> bytes
    for a blob, name -> dict for a tree; bytes: ``entries`` itself is a blob), written with
    pygit2 as another tool might."""
    import pygit2

    repo = ws.git.repo

    def build(node: dict[str, Any]) -> pygit2.Oid:
        builder = repo.TreeBuilder()
        for name, value in node.items():
            if isinstance(value, dict):
                builder.insert(name, build(value), pygit2.GIT_FILEMODE_TREE)
            else:
                builder.insert(name, repo.create_blob(value), pygit2.GIT_FILEMODE_BLOB)
        return builder.write()

    tree = build({"meta.json": b'{"v": 1}\n', "entries": shape})
    sig = pygit2.Signature("Other Tool", "other@example.com")
    return str(repo.create_commit(None, sig, sig, "other tool\n", tree, []))


def test_malformed_memory_trees_are_refused_not_a_traceback(ws: Workspace, repo: Path) -> None:
    first = memory.add_entry(ws, "the first lesson")
    second = memory.add_entry(ws, "the second lesson")

    def blob(entry: MemoryEntry) -> bytes:
        return (json.dumps(entry.to_dict()) + "\n").encode()

    cases = {
        "blob-for-shard": ({first.id[1:3]: blob(first)}, "not a shard tree"),
        "tree-for-entry": ({first.id[1:3]: {f"{first.id}.json": {"x": b"1"}}}, "not an entry blob"),
        "entries-is-blob": (b"oops", "entries is a blob"),
        # a valid entry under another entry's name: ids() would say `first`, the content is `second`
        "wrong-name": (
            {first.id[1:3]: {f"{first.id}.json": blob(second)}},
            f"holds entry {second.id}",
        ),
    }
    head = git(repo, "rev-parse", MEMORY_REF)
    for name, (shape, message) in cases.items():
        commit = _memory_commit(ws, shape)
        ref = f"refs/remotes/other/{name}"
        git(repo, "update-ref", ref, commit)
        err = Cli(repo).json("memory", "merge", ref, code=27)[
            "error"
        ]  # an exception would propagate
        assert message in err["message"] and f"git log -p {ref}" in err["fix"], (name, err)
        assert git(repo, "rev-parse", MEMORY_REF) == head  # nothing merged
    # the same trees as this workspace's own memory: every reader says InvalidMemory
    store = MemoryStore(ws.git)
    for name in ("blob-for-shard", "tree-for-entry", "entries-is-blob"):
        git(repo, "update-ref", MEMORY_REF, git(repo, "rev-parse", f"refs/remotes/other/{name}"))
        for read in (store.ids, store.entries):
            with pytest.raises(InvalidMemory, match="malformed"):
                read()
        assert "malformed" in Cli(repo).json("memory", "list", code=27)["error"]["message"]
    git(repo, "update-ref", MEMORY_REF, git(repo, "rev-parse", "refs/remotes/other/tree-for-entry"))
    with pytest.raises(InvalidMemory, match="not an entry blob"):
        store.get(first.id)
    git(repo, "update-ref", MEMORY_REF, git(repo, "rev-parse", "refs/remotes/other/wrong-name"))
    with pytest.raises(InvalidMemory, match=f"holds entry {second.id}"):
        store.get(first.id)
    with pytest.raises(InvalidMemory, match=f"holds entry {second.id}"):
        store.entries()


def test_promotion_credits_the_promoted_commit_not_the_moved_branch(
    ws: Workspace, repo: Path
) -> None:
    from evotree.skills import apply_skill

    v1 = _with_skills(ws, "filter dead groups", ["StdGroupFilter"])
    promoted = git(repo, "rev-parse", f"evotree/{v1}")
    # while the approver types the one-time code, the branch moves on: another skill is applied
    apply_skill(ws, v1, "OverlongPenalty")
    assert git(repo, "rev-parse", f"evotree/{v1}") != promoted
    entries = memory.record_promotion(
        ws,
        v1,
        previous_champion="v0",
        commit=promoted,
        comparison=_comparison(v1, 0.08, (0.02, 0.14), 0.004),
    )
    verified = [e.skill for e in entries if e.kind == "skill_verification"]
    assert verified == ["StdGroupFilter"]
    assert all(e.evidence["version_commit"] == promoted for e in entries)
    lesson = next(e for e in entries if e.kind == "lesson")
    assert [s["name"] for s in lesson.data["skills"]] == [
        "StdGroupFilter"
    ] and "OverlongPenalty" not in lesson.text
    # a commit that does not exist is refused and nothing is written
    head = git(repo, "rev-parse", MEMORY_REF)
    with pytest.raises(InvalidMemory, match="does not name a commit"):
        memory.record_promotion(ws, v1, previous_champion="v0", commit="0" * 40, comparison=None)
    assert git(repo, "rev-parse", MEMORY_REF) == head
