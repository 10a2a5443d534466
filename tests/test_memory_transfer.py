"""`evotree memory export|import`: round trips, no duplicates, validation, all or nothing,
cross-domain verification status, and imports that cannot touch what gates read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, commit_file, git, make_repo, validate

import evotree.memory as memory
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.memory.model import InvalidMemory
from evotree.memory.transfer import _digest

MEMORY_REF = "refs/evotree/memory"


def _workspace(path: Path, domain: str) -> Workspace:
    repo = make_repo(path)
    (repo / "evotree.toml").write_text(f'[workspace]\ndomain = "{domain}"\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", f"{domain} workspace")
    init_workspace(repo)
    return Workspace.open(repo)


def _promote_with(
    ws: Workspace, skill: str, delta: float, ci: tuple[float, float], p: float
) -> str:
    from evotree.skills import apply_skill

    record = create_version(ws, hypothesis=f"{skill} helps")
    commit_file(ws.root / record.worktree, "recipe.toml", f"# {skill}\n", "recipe")
    apply_skill(ws, record.id, skill)
    comparison = {
        "a": "v0",
        "b": record.id,
        "delta": delta,
        "ci": list(ci),
        "p_value": p,
        "test": "wilcoxon",
        "n_tasks": 20,
        "alpha": 0.05,
    }
    memory.record_promotion(ws, record.id, previous_champion="v0", comparison=comparison)
    return record.id


def _ref(repo: Path, name: str) -> str:
    return git(repo, "rev-parse", "--verify", "-q", name, check=False)


@pytest.fixture
def math_ws(tmp_path: Path) -> Workspace:
    ws = _workspace(tmp_path / "math", "math")
    v1 = _promote_with(ws, "StdGroupFilter", 0.09, (0.03, 0.15), 0.002)
    memory.record_rejection(ws, v1, decision="REVISE", feedback="seed variance too high")
    memory.record_incident(
        ws,
        v1,
        [
            {
                "layer": "audit",
                "code": "audit.git_history_read",
                "severity": "critical",
                "title": "policy ran git show on reference patches",
            }
        ],
    )
    memory.add_entry(ws, "dead groups fell from 55% to 27.5% in a backtest", tags=["backtest"])
    return ws


def test_export_import_round_trip_without_duplicates(math_ws: Workspace, tmp_path: Path) -> None:
    custom = _workspace(tmp_path / "custom", "custom")
    path = tmp_path / "math-memory.json"
    out = Cli(math_ws.root).json("memory", "export", str(path))
    validate(out, "memory_export")
    source = memory.list_entries(math_ws)
    assert out["entries"] == len(source) == 5
    assert out["kinds"] == {
        "skill_verification": 1,
        "lesson": 2,
        "negative_evidence": 1,
        "incident": 1,
    }
    assert out["domain"] == "math"

    ledger_before = _ref(custom.root, "refs/evotree/ledger")
    champion_before = _ref(custom.root, "refs/evotree/champion")
    imported = Cli(custom.root).json("memory", "import", str(path))
    validate(imported, "memory_import")
    assert sorted(imported["added"]) == sorted(e.id for e in source) and imported["skipped"] == []
    assert imported["source_domain"] == "math" and imported["commit"] == _ref(
        custom.root, MEMORY_REF
    )
    # the same entries, same ids; each marked with where it came from
    copied = {e.id: e for e in memory.list_entries(custom)}
    for entry in source:
        twin = copied[entry.id]
        assert twin.content() == entry.content()
        assert entry.origin is None and twin.origin["imported_from"] == out["workspace"]
        assert twin.origin["imported_domain"] == "math"
    # importing again adds nothing and makes no commit
    head = _ref(custom.root, MEMORY_REF)
    again = Cli(custom.root).json("memory", "import", str(path))
    assert again["added"] == [] and len(again["skipped"]) == 5 and again["commit"] is None
    assert _ref(custom.root, MEMORY_REF) == head
    # and back again: the math workspace already has every entry
    back = tmp_path / "back.json"
    Cli(custom.root).json("memory", "export", str(back))
    assert Cli(math_ws.root).json("memory", "import", str(back))["added"] == []
    # an import writes only the memory ref: the ledger and the champion did not move
    assert _ref(custom.root, "refs/evotree/ledger") == ledger_before
    assert _ref(custom.root, "refs/evotree/champion") == champion_before
    assert "imported" in Cli(custom.root)("memory", "show", source[0].id).stdout


def test_dry_run_and_kind_filter(math_ws: Workspace, tmp_path: Path) -> None:
    custom = _workspace(tmp_path / "custom", "custom")
    path = tmp_path / "verifications.json"
    out = Cli(math_ws.root).json("memory", "export", str(path), "--kind", "skill_verification")
    assert out["entries"] == 1 and out["kinds"] == {"skill_verification": 1}
    dry = Cli(custom.root).json("memory", "import", str(path), "--dry-run")
    assert dry["dry_run"] and len(dry["added"]) == 1 and dry["commit"] is None
    assert _ref(custom.root, MEMORY_REF) == ""
    assert "would add 1" in Cli(custom.root)("memory", "import", str(path), "--dry-run").stdout
    # an existing file is not overwritten unless asked
    err = Cli(math_ws.root).json("memory", "export", str(path), code=27)["error"]
    assert "already exists" in err["message"] and "--force" in err["fix"]
    Cli(math_ws.root).json("memory", "export", str(path), "--force")
    assert json.loads(path.read_text())["count"] == 5


def test_a_skill_is_verified_across_domains_after_gains_in_two(
    math_ws: Workspace, tmp_path: Path
) -> None:
    custom = _workspace(tmp_path / "custom", "custom")
    path = tmp_path / "m.json"
    memory.export_memory(math_ws, path)
    memory.import_memory(custom, path)
    (status,) = [s for s in memory.skill_status(custom) if s.skill == "StdGroupFilter"]
    assert status.domains == ["math"] and not status.verified_across_domains
    assert status.per_domain[0]["imported"] is True and status.negative == 1
    # a gain in custom that is not significant does not count
    _promote_with(custom, "StdGroupFilter", 0.02, (-0.01, 0.05), 0.2)
    (status,) = [s for s in memory.skill_status(custom) if s.skill == "StdGroupFilter"]
    assert (
        status.domains == ["math"]
        and not status.verified_across_domains
        and status.verifications == 2
    )
    # a significant one does: two domains
    _promote_with(custom, "StdGroupFilter", 0.06, (0.01, 0.11), 0.01)
    (status,) = [s for s in memory.skill_status(custom) if s.skill == "StdGroupFilter"]
    assert status.domains == ["custom", "math"] and status.verified_across_domains
    out = Cli(custom.root).json("memory", "list", "--skill", "StdGroupFilter")
    validate(out, "memory_list")
    assert out["skills"][0]["verified_across_domains"] is True
    assert "verified across domains" in Cli(custom.root)("memory", "skills").stdout
    # the math workspace alone still has one domain
    assert not next(
        s for s in memory.skill_status(math_ws) if s.skill == "StdGroupFilter"
    ).verified_across_domains


def _doc(math_ws: Workspace, tmp_path: Path) -> dict[str, Any]:
    path = tmp_path / "good.json"
    memory.export_memory(math_ws, path, force=True)
    return json.loads(path.read_text())


def _write(tmp_path: Path, doc: Any, name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


def test_malformed_and_foreign_exports_are_refused_whole(
    math_ws: Workspace, tmp_path: Path
) -> None:
    custom = _workspace(tmp_path / "custom", "custom")
    memory.add_entry(custom, "already here")
    head = _ref(custom.root, MEMORY_REF)
    good = _doc(math_ws, tmp_path)

    def refused(doc: Any, message: str) -> None:
        err = Cli(custom.root).json("memory", "import", str(_write(tmp_path, doc)), code=27)[
            "error"
        ]
        assert message in err["message"], err
        assert err["fix"]
        assert _ref(custom.root, MEMORY_REF) == head  # nothing half-imported

    refused("{not json", "not JSON")
    refused([1, 2], "format is 'list'")
    refused({**good, "format": "something-else"}, "format is 'something-else'")
    refused({**good, "v": 2}, "export version 2")
    refused({**good, "entries": good["entries"][:-1]}, "holds 4 entries but says 5")
    del_digest = {k: v for k, v in good.items() if k != "digest"}
    refused(del_digest, "'digest' missing")
    # an entry edited after export: the digest no longer matches
    edited = json.loads(json.dumps(good))
    edited["entries"][0]["text"] = "a forged lesson"
    refused(edited, "do not match the export's digest")
    # ... and with the digest recomputed, the entry's id no longer matches its content
    edited["digest"] = _digest(edited["entries"])
    refused(edited, "changed after it was written")
    # a foreign entry: unknown fields, wrong kind, missing fields (the LAST entry is bad: none lands)
    for bad, message in (
        ({"extra": True}, "unknown fields"),
        ({"kind": "rumour"}, "memory kind"),
        ({"text": ""}, "text"),
    ):
        doc = json.loads(json.dumps(good))
        doc["entries"][-1].update(bad)
        doc["digest"] = _digest(doc["entries"])
        refused(doc, message)
    doc = json.loads(json.dumps(good))
    del doc["entries"][-1]["workspace"]
    doc["digest"] = _digest(doc["entries"])
    refused(doc, "missing workspace")
    missing = Cli(custom.root).json("memory", "import", str(tmp_path / "nope.json"), code=27)[
        "error"
    ]
    assert "cannot read" in missing["message"]
    with pytest.raises(InvalidMemory):
        memory.import_memory(custom, _write(tmp_path, "[]"))
    assert [e.text for e in memory.list_entries(custom)] == ["already here"]


def test_a_forged_verification_changes_no_gate_input(math_ws: Workspace, tmp_path: Path) -> None:
    """An export can claim anything (memory is advice); importing it writes memory only."""
    from evotree.memory.model import MemoryEntry

    custom = _workspace(tmp_path / "custom", "custom")
    v1 = create_version(custom, hypothesis="candidate").id
    forged = MemoryEntry(
        kind="skill_verification",
        text="StdGroupFilter: +0.9, p 1e-9",
        version=v1,
        domain="math",
        workspace="ffffffffffff",
        created_at="2026-01-01T00:00:00+00:00",
        created_by="Mallory <m@example.com>",
        skill="StdGroupFilter",
        data={"delta": 0.9, "ci": [0.8, 1.0], "p_value": 1e-9, "significant": True},
    )
    entries = [forged.to_dict()]
    doc = {
        "format": "evotree-memory",
        "v": 1,
        "workspace": "ffffffffffff",
        "domain": "math",
        "exported_at": "2026-01-01T00:00:00+00:00",
        "exported_by": "Mallory",
        "count": 1,
        "digest": _digest(entries),
        "entries": entries,
    }
    record_before = custom.resolve(v1).to_dict()
    ledger_before = _ref(custom.root, "refs/evotree/ledger")
    memory.import_memory(custom, _write(tmp_path, doc))
    (entry,) = memory.list_entries(custom)
    assert entry.origin["imported_from"] == "ffffffffffff"  # shown as imported, not learned here
    assert _ref(custom.root, "refs/evotree/ledger") == ledger_before
    assert Workspace.open(custom.root).resolve(v1).to_dict() == record_before
    assert Workspace.open(custom.root).champion() == "v0"
