"""The patch gate against the pristine base (harness/version_patch.py, gates/patch.py): the same rules
in the audit, the protected gate and the check before a run, on real workspaces."""

from __future__ import annotations

import base64
import json
import os
import random
from pathlib import Path

import pygit2
import pytest
from conftest import Cli, git
from fixtures_ws import branch_version, commit_files
from test_runs import make_run_repo

from evotree.core.findings import Finding
from evotree.core.refs import CHAMPION_REF
from evotree.core.workspace import Workspace
from evotree.gates.evaluation import protected_gate
from evotree.gates.patch import PatchRejected, check_patches_before_run, patch_authorizer
from evotree.gates.policy import policy_at
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.protected import check_protected_paths
from evotree.harness.audit.protected_paths import glob_match
from evotree.harness.version_patch import patch_digest, resolve_base, version_patch


def _ws(tmp_path: Path, protect: str = "") -> Workspace:
    """A run workspace whose root commit (the pristine base) holds ``[protect]`` ``protect``."""
    budget = "max_runs_per_version = 20\n" + (f"[protect]\n{protect}\n" if protect else "")
    return Workspace.open(make_run_repo(tmp_path / "w", budget=budget))


def _codes(findings: list[Finding]) -> dict[str, Finding]:
    return {f.code: f for f in findings}


def _paths(f: Finding) -> set[str]:
    return {p["path"] for p in f.evidence["paths"]}


def _policy(ws: Workspace):  # noqa: ANN202 - the champion's policy, as the gates read it
    return policy_at(ws, "v0", str(ws.git.ref_target(CHAMPION_REF)))


def _floats(n: int, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [round(rng.uniform(-1, 1), 6) for _ in range(n)]


NPY = b"\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n" + bytes(
    range(16)
)


def test_a_child_of_a_version_that_added_weights_is_rejected_everywhere(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    parent, pwt = branch_version(ws)
    commit_files(pwt, {"warm.npy": NPY})
    child, cwt = branch_version(ws, parent=parent)
    commit_files(cwt, {"recipe.toml": "skill = 0.7\nsteps = 3\n"})  # the child's own diff is clean
    # the audit: measured from the root, the child's patch carries warm.npy
    found = _codes(check_protected_paths(ws, child))
    assert set(found) == {"audit.patch_data"} and _paths(found["audit.patch_data"]) == {"warm.npy"}
    assert found["audit.patch_data"].evidence["from"] == ws.resolve("v0").base_commit
    # the gate: same rule, same answer
    gate = protected_gate(
        ws, _policy(ws), child, str(ws.git.ref_target(f"refs/heads/evotree/{child}"))
    )
    assert gate.status == "fail" and gate.numbers["changed"] == []
    assert [v["code"] for v in gate.numbers["patch_violations"]] == ["audit.patch_data"]
    assert (
        gate.numbers["patch"]["base"] == "root (v0)" and len(gate.numbers["patch"]["sha256"]) == 64
    )
    # before a run: refused with a stable code and exit code
    with pytest.raises(PatchRejected) as info:
        check_patches_before_run(ws, [child])
    assert info.value.exit_code == 40 and info.value.code == "patch_rejected"
    assert info.value.details["version"] == child and "warm.npy" in info.value.message
    # a clean sibling passes all three
    ok, owt = branch_version(ws)
    commit_files(owt, {"recipe.toml": "skill = 0.6\nsteps = 3\n"})
    assert check_protected_paths(ws, ok) == []
    assert check_patches_before_run(ws, [ok]) == {
        ok: str(ws.git.ref_target(f"refs/heads/evotree/{ok}"))
    }
    assert protected_gate(
        ws, _policy(ws), ok, str(ws.git.ref_target(f"refs/heads/evotree/{ok}"))
    ).passed


def test_a_refused_run_starts_and_charges_nothing(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    v, wt = branch_version(ws)
    commit_files(wt, {"warm.json": json.dumps(_floats(300))})  # weights as a one-line JSON array
    before = [e.event.kind for e in ws.ledger.entries()]
    out = Cli(ws.root).json("run", v, code=40)
    assert out["error"]["code"] == "patch_rejected" and out["error"]["exit_code"] == 40
    assert out["error"]["details"]["findings"][0]["code"] == "audit.patch_payload"
    assert "nothing was started" in out["error"]["message"]
    ws = Workspace.open(ws.root)
    assert [e.event.kind for e in ws.ledger.entries()] == before  # no run.reserved, no run.started
    assert ws.resolve(v).usage in ({}, None) or not ws.resolve(v).usage.get("runs")
    assert not ws.resolve(v).runs
    runs_dir = ws.root / ".evotree" / "runs"
    assert not runs_dir.exists() or not any(p.name.startswith(v + "-") for p in runs_dir.iterdir())
    text = Cli(ws.root)("run", v, code=40).output
    assert "warm.json" in text and "patch" in text


def test_the_audit_command_fails_the_child_too(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    parent, pwt = branch_version(ws)
    commit_files(pwt, {"warm.npy": NPY})
    child, cwt = branch_version(ws, parent=parent)
    commit_files(cwt, {"recipe.toml": "skill = 0.7\nsteps = 3\n"})
    out = Cli(ws.root).json("audit", child, code=28)  # the audit report, and exit 28
    assert not out["passed"]
    assert {f["code"] for f in out["findings"] if f["severity"] == "high"} == {"audit.patch_data"}


def test_a_clean_version_still_runs(tmp_path: Path) -> None:
    from evotree.gates.runs import run_versions

    ws = _ws(tmp_path)
    v, wt = branch_version(ws)
    commit_files(wt, {"recipe.toml": "skill = 0.8\nsteps = 3\n"})
    (record,) = run_versions(ws, [v])
    assert record.status == "succeeded", record.error
    # the patch this run trained is in its run.started event: the hash of the patch against the base
    started = [e.event for e in ws.ledger.entries(version=v) if e.event.kind == "run.started"]
    assert len(started) == 1 and started[0].data["patch"]["sha256"] == version_patch(ws, v).sha256


def test_the_branch_moving_after_the_check_is_refused_at_reservation(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    v, wt = branch_version(ws)
    commit_files(wt, {"recipe.toml": "skill = 0.8\nsteps = 3\n"})
    recheck = patch_authorizer(ws, {v: 1})
    commit_files(wt, {"warm.npy": NPY}, "weights after the check")
    moved = str(ws.git.ref_target(f"refs/heads/evotree/{v}"))
    with pytest.raises(PatchRejected, match="moved while its runs were being planned"):
        recheck(ws.ledger.snapshot(), {v: 1}, {v: moved})


def test_globs_in_protect_paths_count_in_the_gate_as_in_the_audit(tmp_path: Path) -> None:
    ws = _ws(
        tmp_path, 'paths = ["evotree.toml", "judge/", "gates/", "help*.py", "**/secret_*.txt"]'
    )
    v, wt = branch_version(ws)
    commit_files(wt, {"helper.py": "def f():\n    return 1\n", "deep/dir/secret_key.txt": "x\n"})
    found = _codes(check_protected_paths(ws, v))
    assert _paths(found["audit.protected_path"]) == {"helper.py", "deep/dir/secret_key.txt"}
    gate = protected_gate(ws, _policy(ws), v, str(ws.git.ref_target(f"refs/heads/evotree/{v}")))
    assert gate.status == "fail" and set(gate.numbers["changed"]) == {
        "helper.py",
        "deep/dir/secret_key.txt",
    }
    # its child changes nothing itself, but still differs from the champion there: fails too
    child, cwt = branch_version(ws, parent=v)
    commit_files(cwt, {"recipe.toml": "skill = 0.7\nsteps = 3\n"})
    assert "audit.protected_path" in _codes(check_protected_paths(ws, child))
    gate = protected_gate(
        ws, _policy(ws), child, str(ws.git.ref_target(f"refs/heads/evotree/{child}"))
    )
    assert gate.status == "fail" and "helper.py" in gate.numbers["changed"]
    # protected-path changes are a promotion matter (a person may accept a policy change): runs go ahead
    assert v in check_patches_before_run(ws, [v])


def test_the_policy_file_is_protected_even_when_paths_leave_it_out(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 'paths = ["judge/"]')
    v, wt = branch_version(ws)
    commit_files(wt, {"evotree.toml": (wt / "evotree.toml").read_text() + "\n# relaxed\n"})
    assert _paths(_codes(check_protected_paths(ws, v))["audit.protected_path"]) == {"evotree.toml"}
    gate = protected_gate(ws, _policy(ws), v, str(ws.git.ref_target(f"refs/heads/evotree/{v}")))
    assert gate.numbers["changed"] == ["evotree.toml"]


def test_case_tricks_on_protected_paths_are_caught(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    v, wt = branch_version(ws)
    commit_files(wt, {"Judge/eval.py": "print(1.0)\n", "EVOTREE.TOML": "[gates]\n"})
    assert _paths(_codes(check_protected_paths(ws, v))["audit.protected_path"]) == {
        "Judge/eval.py",
        "EVOTREE.TOML",
    }


def test_weights_and_data_however_encoded(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    blob = base64.b64encode(os.urandom(3000)).decode()
    cases: dict[str, tuple[str | bytes, str]] = {
        "w_one_line.json": (json.dumps(_floats(300)), "audit.patch_payload"),
        "w_pretty.json": (json.dumps(_floats(1200, 1), indent=1), "audit.patch_payload"),
        "w_inline.py": ("W = " + repr(_floats(200, 2)) + "\n", "audit.patch_payload"),
        "w_b64.py": (f'BLOB = "{blob}"\n', "audit.patch_payload"),
        "w_b64_lines.py": (
            'BLOB = """\n'
            + "\n".join(blob[i : i + 60] for i in range(0, len(blob), 60))
            + '\n"""\n',
            "audit.patch_payload",
        ),
        "w_hex.py": (f'H = "{os.urandom(1500).hex()}"\n', "audit.patch_payload"),
        "w_escapes.py": (
            "B = b'" + "".join(f"\\x{b:02x}" for b in os.urandom(800)) + "'\n",
            "audit.patch_payload",
        ),
        "late_nul.txt": (b"text\n" * 2000 + b"\x00weights", "audit.patch_binary"),
        "latin.txt": ("caf\xe9 ".encode("latin-1") * 10, "audit.patch_binary"),
        "controls.md": ("".join(chr(c) for c in range(1, 8)) * 5, "audit.patch_binary"),
        "WARM.NPY": (NPY, "audit.patch_data"),
        "warm.npy ": (NPY, "audit.patch_data"),
        "disguised.txt": (NPY, "audit.patch_binary"),
        "model.PT.GZ": (b"zipped", "audit.patch_weights"),
        "answers.py": (
            "ANSWERS = [\n" + "".join(f'    "answer {i}",\n' for i in range(300)) + "]\n",
            "audit.patch_payload",
        ),  # one quoted literal a line is a row too
        "column.txt": ("".join(f"{x}\n" for x in _floats(300, 3)), "audit.patch_payload"),
    }
    for name, (content, code) in cases.items():
        v, wt = branch_version(ws)
        commit_files(wt, {name: content})
        found = _codes(check_protected_paths(ws, v))
        assert set(found) == {code}, (name, found)
        assert _paths(found[code]) == {name}
        with pytest.raises(PatchRejected):
            check_patches_before_run(ws, [v])


def test_data_sharded_over_many_files_is_caught_as_a_whole(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    v, wt = branch_version(ws)
    shards = {
        f"shards/w{i:02d}.json": json.dumps([_floats(100, i)]) for i in range(45)
    }  # 100 numbers each
    commit_files(wt, shards)
    f = _codes(check_protected_paths(ws, v))["audit.patch_payload"]
    item = f.evidence["paths"][0]
    assert item["numbers"] == 4500 and item["limit"] == 4000 and item["path"] == "45 files"
    w, wt2 = branch_version(ws)
    commit_files(
        wt2, dict(list(shards.items())[:30])
    )  # 3000 numbers in all: under the patch's limit
    assert check_protected_paths(ws, w) == []


def test_ordinary_code_and_config_pass(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    v, wt = branch_version(ws)
    code = "\n".join(f"def f{i}(x):\n    return x * {i} + 0.5  # step {i}\n" for i in range(200))
    commit_files(
        wt,
        {
            "lib.py": code,
            "sched.toml": "lr = [1e-3, 5e-4, 2.5e-4, 1e-4]\nwarmup = 100\n",
            "hashes.txt": "\n".join(os.urandom(32).hex() for _ in range(10)) + "\n",
            "README.md": "A recipe with a higher skill: see lib.py.\n",
        },
    )
    assert check_protected_paths(ws, v) == []
    # a modified file is measured by what it adds: an existing long line does not count again
    commit_files(wt, {"sched.toml": "lr = [1e-3, 5e-4, 2.5e-4, 1e-4]\nwarmup = 200\n"})
    assert check_protected_paths(ws, v) == []


def test_editable_allowlist(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 'editable = ["train.py", "data/**", "notes/*.md"]')
    good, gwt = branch_version(ws)
    commit_files(
        gwt,
        {
            "train.py": "print('new train')\n",
            "data/build/strategy.py": "K = 3\n",
            "notes/plan.md": "x\n",
        },
    )
    assert check_protected_paths(ws, good) == []
    cases = {
        "recipe.toml": {"recipe.toml": "skill = 0.9\nsteps = 3\n"},
        "Train.py": {"Train.py": "print(1)\n"},  # case trick: a new file, not train.py
        "database.py": {"database.py": "x = 1\n"},  # data/** is a folder, not a prefix
        "notes/deep/x.md": {"notes/deep/x.md": "x\n"},  # * stays in one folder
    }
    for path, files in cases.items():
        v, wt = branch_version(ws)
        commit_files(wt, files)
        found = _codes(check_protected_paths(ws, v))
        assert set(found) == {"audit.patch_not_editable"} and _paths(
            found["audit.patch_not_editable"]
        ) == {path}
        with pytest.raises(PatchRejected):
            check_patches_before_run(ws, [v])
    # a rename out of an editable path and a deletion are changes too
    v, wt = branch_version(ws)
    git(wt, "mv", "train.py", "trainer.py")
    git(wt, "commit", "-qm", "rename")
    assert _paths(_codes(check_protected_paths(ws, v))["audit.patch_not_editable"]) == {
        "trainer.py"
    }
    v, wt = branch_version(ws)
    commit_files(wt, {"recipe.toml": None})
    assert _paths(_codes(check_protected_paths(ws, v))["audit.patch_not_editable"]) == {
        "recipe.toml"
    }


def test_editable_config_keys(tmp_path: Path) -> None:
    ws = _ws(tmp_path, 'editable_keys = ["recipe.toml:skill"]')
    ok, owt = branch_version(ws)
    commit_files(owt, {"recipe.toml": "skill = 0.9\nsteps = 3\n"})
    assert check_protected_paths(ws, ok) == []
    for content, keys in (
        ("skill = 0.9\nsteps = 30\n", ["steps"]),
        ("skill = 0.5\nsteps = 3\nwarm = [1, 2]\n", ["warm"]),
        ("skill = 0.5\n", ["steps"]),
    ):
        v, wt = branch_version(ws)
        commit_files(wt, {"recipe.toml": content})
        f = _codes(check_protected_paths(ws, v))["audit.patch_config_key"]
        assert f.evidence["paths"][0]["keys"] == keys
    v, wt = branch_version(ws)
    commit_files(wt, {"recipe.toml": "skill = = 1\n"})
    assert (
        "not readable as TOML"
        in _codes(check_protected_paths(ws, v))["audit.patch_config_key"].evidence["paths"][0][
            "why"
        ]
    )


def test_configured_base(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    parent, pwt = branch_version(ws)
    commit_files(pwt, {"warm.npy": NPY})
    tip = str(ws.git.ref_target(f"refs/heads/evotree/{parent}"))
    child, cwt = branch_version(ws, parent=parent)
    commit_files(cwt, {"recipe.toml": "skill = 0.7\nsteps = 3\n"})
    assert resolve_base(ws, "root") == ("root (v0)", ws.resolve("v0").base_commit)
    assert resolve_base(ws, "v0")[1] == ws.resolve("v0").base_commit
    assert resolve_base(ws, "champion")[1] == str(ws.git.ref_target(CHAMPION_REF))
    with pytest.raises(AuditInputError, match="not a root version"):
        resolve_base(ws, parent)
    with pytest.raises(AuditInputError, match="not a commit"):
        resolve_base(ws, "f" * 40)
    cfg = ws.config
    cfg.protect.base = tip  # a base that already holds warm.npy: the child's patch is clean
    assert version_patch(ws, child, config=cfg).findings == []
    cfg.protect.base = "root"
    assert [f.code for f in version_patch(ws, child, config=cfg).findings] == ["audit.patch_data"]


def test_patch_hash_is_the_content_not_the_history(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    a, awt = branch_version(ws)
    commit_files(awt, {"recipe.toml": "skill = 0.7\nsteps = 3\n", "lib.py": "x = 1\n"})
    b, bwt = branch_version(ws)
    commit_files(bwt, {"lib.py": "x = 1\n"}, "first")
    commit_files(bwt, {"recipe.toml": "skill = 0.7\nsteps = 3\n"}, "second")
    pa, pb = version_patch(ws, a), version_patch(ws, b)
    assert pa.commit != pb.commit and pa.sha256 == pb.sha256
    assert {f["path"] for f in pa.files} == {"recipe.toml", "lib.py"}
    assert patch_digest(ws, a) == pa.summary()  # what run.started records, without the rules
    commit_files(bwt, {"lib.py": "x = 2\n"})
    assert version_patch(ws, b).sha256 != pa.sha256
    assert version_patch(ws, "v0").files == []


def test_symlink_and_dotdot_attacks(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    v, wt = branch_version(ws)
    (wt / "train.py").unlink()
    os.symlink("judge/hidden.json", wt / "train.py")
    os.symlink("../../../etc/passwd", wt / "peek")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "links")
    f = _codes(check_protected_paths(ws, v))["audit.patch_symlink"]
    assert _paths(f) == {"train.py", "peek"}
    with pytest.raises(PatchRejected):
        check_patches_before_run(ws, [v])
    # a tree entry named ".." cannot be written into git's object store in the first place
    builder = ws.git.repo.TreeBuilder()
    with pytest.raises((ValueError, pygit2.GitError)):
        builder.insert("..", ws.git.repo.create_blob(b"x"), pygit2.enums.FileMode.BLOB)
        ws.git.repo[builder.write()]


def test_acknowledging_a_policy_change_does_not_pass_a_patch_violation(tmp_path: Path) -> None:
    from evotree.gates.evaluation import GateReport, acknowledge_protected

    ws = _ws(tmp_path)
    v, wt = branch_version(ws)
    commit_files(wt, {"judge/extra.py": "x = 1\n", "warm.npy": NPY})
    gate = protected_gate(ws, _policy(ws), v, str(ws.git.ref_target(f"refs/heads/evotree/{v}")))
    report = GateReport(
        version=v,
        commit="",
        created_by="",
        hypothesis="",
        champion="v0",
        champion_commit="",
        policy={},
        gates=[gate],
        comparison=None,
        findings=[],
        audit=None,
    )
    assert acknowledge_protected(report, "bob@example.com") == ["judge/extra.py"]
    assert (
        report.gates[0].status == "fail"
        and report.gates[0].numbers["acknowledged_by"] == "bob@example.com"
    )


def test_glob_semantics() -> None:
    assert glob_match("data/a/b.py", "data/**") and glob_match("data", "data/")
    assert not glob_match("database.py", "data/**") and not glob_match("database.py", "data/")
    assert glob_match("helper.py", "**/helper.py") and glob_match("a/b/helper.py", "**/helper.py")
    assert glob_match("helper.py", "help*.py") and not glob_match("sub/helper.py", "help*.py")
    assert glob_match("notes/x.md", "notes/*.md") and not glob_match("notes/a/x.md", "notes/*.md")
    assert (
        glob_match("a.py", "[!d]*")
        and not glob_match("d.py", "[!d]*")
        and not glob_match("x/y", "[!d]*y")
    )
    assert not glob_match("Train.py", "train.py") and glob_match("Train.py", "train.py", fold=True)


@pytest.mark.parametrize(
    ("codes", "audit_passes"),
    [
        (["audit.protected_path"], True),
        (
            ["audit.protected_path", "audit.git_history_leak"],
            False,
        ),  # a real leak is never waved through
        (["audit.hidden_data_read"], False),
    ],
)
def test_accepting_a_policy_change_covers_only_the_audit_finding_of_that_change(
    codes: list[str], audit_passes: bool
) -> None:
    from evotree.gates.evaluation import GateReport, GateResult, acknowledge_protected

    gates = [
        GateResult("protected", "fail", "changes evotree.toml", {"changed": ["evotree.toml"]}),
        GateResult(
            "audit",
            "fail",
            "leaks",
            {"blocking": [{"code": c, "severity": "critical"} for c in codes]},
        ),
    ]
    report = GateReport(
        version="v1",
        commit="c",
        created_by="a",
        hypothesis="h",
        champion="v0",
        champion_commit="c0",
        policy={},
        gates=gates,
        comparison=None,
        findings=[],
        audit=None,
    )
    assert acknowledge_protected(report, "bob@example.com") == ["evotree.toml"]
    assert gates[0].status == "pass"
    assert (gates[1].status == "pass") is audit_passes
    assert ("acknowledged_by" in gates[1].numbers) is audit_passes
