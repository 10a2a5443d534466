"""Protected paths and the patch gate (harness/audit/protected.py) on real workspaces."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from fixtures_ws import branch_version, commit_files
from test_runs import make_run_repo

from evotree.diagnostics.findings import Finding
from evotree.core.config import parse_config
from evotree.core.versions import merge_versions
from evotree.core.workspace import Workspace
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.patch_gate import PatchGate
from evotree.harness.audit.payload import row_shape
from evotree.harness.audit.protected import check_protected_paths
from evotree.harness.audit.protected_paths import protected_patterns


@pytest.fixture
def pws(tmp_path: Path) -> Workspace:
    return Workspace.open(make_run_repo(tmp_path / "w"))


def _codes(findings: list[Finding]) -> dict[str, Finding]:
    return {f.code: f for f in findings}


def test_a_recipe_change_passes_the_gate(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    commit_files(
        wt, {"recipe.toml": "skill = 0.9\nsteps = 3\n", "notes/plan.md": "try a higher skill\n"}
    )
    assert check_protected_paths(pws, v) == []


def test_judge_hidden_data_config_and_harness_changes_are_critical(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    # the judge lives in refs/evotree/judge, in no checkout: a version that writes judge files of
    # its own (a judge to shadow the real one) is still a protected-path change
    assert not (wt / "judge").exists()
    commit_files(
        wt,
        {
            "judge/hidden.json": json.dumps({"heldout": ["easy"]}),
            "harness.toml": "[thresholds]\n",
            "evotree.toml": (wt / "evotree.toml").read_text() + "\n# relaxed\n",
        },
    )
    commit_files(wt, {"judge/eval.py": "print(1.0)\n"}, "a judge of its own")
    found = _codes(check_protected_paths(pws, v))
    assert set(found) == {"audit.protected_path"}
    f = found["audit.protected_path"]
    assert f.severity == "critical" and f.version == v and f.layer == "audit"
    by_path = {p["path"]: p for p in f.evidence["paths"]}
    assert set(by_path) == {"judge/hidden.json", "judge/eval.py", "harness.toml", "evotree.toml"}
    assert (
        by_path["judge/eval.py"]["status"] == "A"
        and by_path["judge/eval.py"]["pattern"] == "judge/"
    )
    assert by_path["harness.toml"]["status"] == "A"
    assert f.evidence["to"] == str(pws.git.ref_target(f"refs/heads/evotree/{v}"))


def test_renaming_into_a_protected_path_is_caught(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    commit_files(wt, {"gates/allowed_signers": "mallory ssh-ed25519 AAAA\n"})
    f = _codes(check_protected_paths(pws, v))["audit.protected_path"]
    assert f.evidence["paths"][0]["pattern"] in ("gates/", "gates/allowed_signers")


def test_diff_is_measured_from_where_the_version_started_not_the_parents_tip(
    pws: Workspace,
) -> None:
    parent, pwt = branch_version(pws)
    child, cwt = branch_version(pws, parent=parent)
    commit_files(pwt, {"judge/eval.py": "print('parent changed the judge later')\n"})
    commit_files(cwt, {"recipe.toml": "skill = 0.7\n"})
    assert check_protected_paths(pws, child) == []  # the parent's later change is not the child's
    assert "audit.protected_path" in _codes(check_protected_paths(pws, parent))


def test_protected_paths_come_from_the_champion_not_the_candidate(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    text = (wt / "evotree.toml").read_text()
    commit_files(
        wt, {"evotree.toml": text + "\n[protect]\npaths = []\n", "judge/eval.py": "print(1.0)\n"}
    )
    paths = {
        p["path"]
        for p in _codes(check_protected_paths(pws, v))["audit.protected_path"].evidence["paths"]
    }
    assert paths == {"evotree.toml", "judge/eval.py"}


def test_patch_gate_data_weights_binary_and_large(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    commit_files(
        wt,
        {
            "data/answers.csv": "id,answer\n1,42\n",
            "ckpt/model.safetensors": b"\x00\x01weights",
            "tool.so": b"\x7fELF\x00\x00\x00binary",
            "big.txt": "word\n" * 300_000,
            "cache.pt.gz": b"zipped weights",
        },
    )
    found = _codes(check_protected_paths(pws, v))
    assert found["audit.patch_data"].evidence["paths"][0]["path"] == "data/answers.csv"
    assert {p["path"] for p in found["audit.patch_weights"].evidence["paths"]} == {
        "ckpt/model.safetensors",
        "cache.pt.gz",
    }
    assert found["audit.patch_binary"].evidence["paths"][0]["path"] == "tool.so"
    large = found["audit.patch_large_file"].evidence["paths"][0]
    assert (
        large["path"] == "big.txt" and large["bytes"] == 1_500_000 and large["limit"] == 1_000_000
    )
    assert all(found[c].severity == "high" for c in found)
    assert "audit.protected_path" not in found


def test_patch_gate_row_shaped_payload_in_a_python_file(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    rows = "\n".join(f'    ("task-{i}", {i * 7 % 13}, {i / 3:.4f}),' for i in range(500))
    commit_files(
        wt,
        {"lookup.py": f"ANSWERS = [\n{rows}\n]\n\ndef answer(t):\n    return dict(ANSWERS)[t]\n"},
    )
    f = _codes(check_protected_paths(pws, v))["audit.patch_payload"]
    assert f.evidence["paths"][0]["rows"] == 500 and f.evidence["paths"][0]["shape"] == "(S,N,N),"


def test_patch_gate_counts_only_added_rows_and_one_long_line(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    rows = "\n".join(f"{i},{i * 2}" for i in range(150))
    commit_files(wt, {"table.py": f'"""\n{rows}\n"""\n'})
    assert check_protected_paths(pws, v) == []  # 150 rows: under the limit of 200
    more = "\n".join(f"{i},{i * 2}" for i in range(150, 300))
    commit_files(wt, {"table.py": f'"""\n{rows}\n{more}\n"""\n'})
    # the version's whole diff adds 300 rows now
    assert (
        _codes(check_protected_paths(pws, v))["audit.patch_payload"].evidence["paths"][0]["rows"]
        == 300
    )
    w, wt2 = branch_version(pws)
    commit_files(wt2, {"blob.py": "X = [" + ",".join(str(i) for i in range(10_000)) + "]\n"})
    f = _codes(check_protected_paths(pws, w))["audit.patch_payload"]
    assert f.evidence["paths"][0]["longest_line"] > 20_000


def test_symlinks_out_of_the_tree_or_into_the_judge(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    os.symlink("/etc/passwd", wt / "abs")
    os.symlink("../../judge", wt / "up")
    os.symlink("judge/hidden.json", wt / "peek.json")
    os.symlink("recipe.toml", wt / "fine.toml")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "links")
    f = _codes(check_protected_paths(pws, v))["audit.patch_symlink"]
    why = {p["path"]: p["why"] for p in f.evidence["paths"]}
    assert why == {"abs": "absolute", "up": "outside the tree", "peek.json": "into judge/"}


def test_a_submodule_is_a_warning(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    git(wt, "update-index", "--add", "--cacheinfo", f"160000,{'a' * 40},vendor/answers")
    git(wt, "commit", "-qm", "vendor a submodule")
    f = _codes(check_protected_paths(pws, v))["audit.patch_submodule"]
    assert f.severity == "warn" and f.evidence["paths"] == [
        {"path": "vendor/answers", "commit": "a" * 40}
    ]


def test_allow_list_and_thresholds_from_the_gate(pws: Workspace) -> None:
    v, wt = branch_version(pws)
    commit_files(
        wt, {"fixtures/tiny.csv": "a,b\n1,2\n", "recipe.toml": "skill = 0.6\n" + "#" * 50 + "\n"}
    )
    assert "audit.patch_data" in _codes(check_protected_paths(pws, v))
    assert check_protected_paths(pws, v, gate=PatchGate(allow=["fixtures/"])) == []
    found = _codes(
        check_protected_paths(pws, v, gate=PatchGate(allow=["fixtures/"], max_file_bytes=10))
    )
    assert found["audit.patch_large_file"].evidence["paths"][0]["path"] == "recipe.toml"


def test_merge_version_is_checked_against_both_sides(pws: Workspace) -> None:
    a, awt = branch_version(pws)
    b, bwt = branch_version(pws)
    commit_files(awt, {"recipe.toml": "skill = 0.9\n"})
    commit_files(bwt, {"judge/eval.py": "print('always 1')\n"})
    merged = merge_versions(pws, a, b, message="combine")
    f = _codes(check_protected_paths(pws, merged.id))["audit.protected_path"]
    assert f.evidence["paths"][0]["path"] == "judge/eval.py"


def test_root_version_has_no_diff_and_bad_input_is_clear(pws: Workspace) -> None:
    assert check_protected_paths(pws, "v0") == []
    from evotree.core.errors import UnknownVersion

    with pytest.raises(UnknownVersion):
        check_protected_paths(pws, "v99")
    v, _ = branch_version(pws)
    git(pws.root, "worktree", "remove", "--force", str(pws.root / ".evotree" / "worktrees" / v))
    git(pws.root, "branch", "-D", f"evotree/{v}")
    with pytest.raises(AuditInputError, match="has no branch"):
        check_protected_paths(pws, v)
    with pytest.raises(AuditInputError, match="max_row_lines"):
        PatchGate(max_row_lines=0)


def test_patterns_and_row_shapes() -> None:
    cfg = parse_config(
        '[eval]\njudge_paths = ["judge/", "hidden/"]\n[protect]\npaths = ["evotree.toml"]\n'
    )
    pats = protected_patterns(cfg)
    assert pats[:3] == ["evotree.toml", "judge/", "hidden/"] and "gates/allowed_signers" in pats
    assert "harness.toml" in pats
    assert row_shape('{"id": 3, "label": "cat", "ok": true},') == "{S:N,S:S,S:N},"
    assert row_shape("1.5,2,-3e4") == "N,N,N"
    assert row_shape("    return foo(a, b)") is None
    assert row_shape("x = 1") is None
    assert row_shape("[]") is None


def test_gate_reads_protect_keys_when_the_config_has_them() -> None:
    class Protect:
        def __init__(self) -> None:
            self.paths: list[str] = []
            self.max_row_lines = 5
            self.patch_allow = ["data/"]

    gate: Any = PatchGate.from_protect(Protect())
    assert gate.max_row_lines == 5 and gate.allow == ["data/"] and gate.max_file_bytes == 1_000_000
    assert PatchGate.from_protect(parse_config("").protect) == PatchGate()


def test_protect_section_holds_the_gate_thresholds_with_sensible_defaults() -> None:
    from evotree.core.config import ConfigError
    from evotree.core.config_phases import ProtectSection
    from evotree.core.config_template import render_template

    defaults = ProtectSection()
    assert PatchGate.from_protect(defaults) == PatchGate()  # one set of defaults, not two
    assert parse_config(render_template()).protect == defaults
    cfg = parse_config(
        '[protect]\nmax_row_lines = 50\nmax_file_bytes = 2048\npatch_allow = ["fixtures/"]\n'
    )
    gate = PatchGate.from_protect(cfg.protect)
    assert (gate.max_row_lines, gate.max_file_bytes, gate.allow) == (50, 2048, ["fixtures/"])
    assert cfg.protect.paths == ["evotree.toml", "judge/", "gates/"]
    for bad, key in (
        ("max_row_lines = 0", "protect.max_row_lines"),
        ("max_line_chars = -1", "protect.max_line_chars"),
        ('patch_allow = ["../up"]', "protect.patch_allow"),
        ('paths = ["/etc"]', "protect.paths"),
        ("max_file_bytes = 1.5", "protect.max_file_bytes"),
    ):
        with pytest.raises(ConfigError) as info:
            parse_config(f"[protect]\n{bad}\n")
        assert info.value.details["key"] == key and info.value.details["line"] == 2


def test_the_champions_protect_section_sets_the_gate(pws: Workspace) -> None:
    text = (
        pws.root / "evotree.toml"
    ).read_text() + '\n[protect]\npatch_allow = ["fixtures/"]\nmax_row_lines = 3\n'
    (pws.root / "evotree.toml").write_text(text)
    git(pws.root, "commit", "-qam", "champion: allow fixtures, strict rows")
    git(pws.root, "update-ref", "refs/evotree/champion", "HEAD")
    ws = Workspace.open(pws.root)
    v, wt = branch_version(ws)
    commit_files(
        wt,
        {
            "fixtures/tiny.csv": "a,b\n1,2\n",
            "rows.py": "\n".join(f"{i},{i}" for i in range(5)) + "\n",
        },
    )
    found = _codes(check_protected_paths(ws, v))
    # v started from the champion's commit (not v0's branch tip, whose evotree.toml is older): its
    # protected paths equal the policy in force; only the payload rule (max_row_lines = 3) fires
    assert set(found) == {"audit.patch_payload"}
    assert found["audit.patch_payload"].evidence["paths"][0]["limit"] == 3
