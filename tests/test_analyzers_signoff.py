"""Analyzers promotions need a person's signed sign-off, like a champion's (threat tests and the
honest path).

An analyzer version decides what `evotree diagnose` and the signal gate flag. Each attempt to put
one in
force without a signed sign-off fails clearly and leaves the analyzers in force unchanged; an
analyzers ref moved by hand is reported by `evotree verify` (exit 33), fails the gates' analyzers
gate, and is not followed by `evotree diagnose`. Real git repositories, real SSH keys, the real
CLI under a pty (pexpect), real runs.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import EVOTREE_BIN, Cli, commit_file, git, validate
from fixtures_ws import answer_challenge, child_env, finish, scored_project, signers_file, spawn
from test_gates import BOB
from test_runs import CONFIG, JUDGE, TRAIN

from evotree.core.errors import UnknownVersion
from evotree.core.ledger import Event, LedgerTxn
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.diagnostics.analyzer_versions import analyzers_trust_finding
from evotree.gates.analyzer_versions import active_analyzers, plan_analyzers_promotion
from evotree.gates.evaluation import evaluate_gates
from evotree.gates.runs import run_versions
from evotree.gates.signing import canonical, sha256_hex

STRICT = '[thresholds."signal.dead_groups"]\nwarn_ratio = 0.1\n'
LENIENT = '[thresholds."signal.dead_groups"]\nwarn_ratio = 0.99\n'
PLUGIN = (
    "from evotree.diagnostics.findings import Analyzer  # a plug-in module that registers nothing\n"
)


def signed_run_repo(path: Path, keys: dict[str, tuple[Path, str]]) -> Path:
    """``test_runs.make_run_repo`` plus ``gates/allowed_signers`` (bob, ada) in the root commit."""
    hidden = {
        "validation": [f"val-{i}" for i in range(10)],
        "heldout": [f"SECRET-held-{i}" for i in range(4)],
    }
    files = {"judge/hidden.json": json.dumps(hidden), "gates/allowed_signers": signers_file(keys)}
    return scored_project(
        path,
        judge=JUDGE,
        config=CONFIG.format(budget=""),
        train=TRAIN,
        recipe="skill = 0.5\nsteps = 3\n",
        files=files,
        message="recipe, train script, judge and allowed signers",
    )


def promote_signed(
    repo: Path, hid: str, key: Path, *, expect: tuple[str, ...] = ()
) -> dict[str, Any]:
    """A person at a terminal promotes analyzer version ``hid``: types it and the one-time code,
    says yes."""
    child = spawn(repo, "analyzers", "promote", hid, "--key", str(key), "--json")
    for text in expect:
        child.expect(re.escape(text))
    answer_challenge(child, hid)
    child.expect(r"put analyzer version \S+ in force\? \[yes/no\]: ")
    child.sendline("yes")
    code, out = finish(child)
    assert code == 0, out
    result = json.loads(out[out.index('{"') :])
    validate(result, "analyzers-promote")
    return result


def analyzers_state(repo: Path) -> tuple[str, str, int]:
    """(analyzers ref, ledger's active version, analyzers promotions): what no refused attempt
    may change."""
    ws = Workspace.open(repo)
    promoted = sum(1 for e in ws.ledger.entries() if e.event.kind == "harness.promoted")
    return (
        git(repo, "rev-parse", "--verify", "--quiet", "refs/evotree/harness", check=False),
        ws.ledger.meta().get("harness_active") or "h0",
        promoted,
    )


@pytest.fixture
def hws(tmp_path: Path, keys: dict[str, tuple[Path, str]]) -> Path:
    """A signed workspace with analyzer version h1 (created by Ada, the agent's identity):
    stricter thresholds."""
    repo = signed_run_repo(tmp_path / "w", keys)
    created = Cli(repo).json("analyzers", "branch", "-m", "catch 10 % dead groups")
    commit_file(repo / created["worktree"], "harness.toml", STRICT, "stricter")
    return repo


# ---------------------------------------------------------------------------- refusals
def test_analyzers_promote_refused_without_a_terminal(hws: Path, keys: dict[str, Any]) -> None:
    before = analyzers_state(hws)
    proc = subprocess.run(
        [
            str(EVOTREE_BIN),
            "-C",
            str(hws),
            "analyzers",
            "promote",
            "h1",
            "--key",
            str(keys["bob"][0]),
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        text=True,
        env=child_env(),
    )
    assert proc.returncode == 31, proc.stderr
    assert "refusing to promote an analyzer version" in proc.stderr
    assert "not a terminal" in proc.stderr
    assert "fix:" in proc.stderr
    result = Cli(hws).runner.invoke(
        __import__("evotree.cli.main", fromlist=["cli"]).cli,
        ["-C", str(hws), "harness", "promote", "h1", "--json"],  # the deprecated name
        input="h1\n",
    )
    assert result.exit_code == 31
    error = json.loads(result.stdout)
    validate(error, "error")
    assert error["error"]["code"] == "signoff_refused"
    assert analyzers_state(hws) == before == ("", "h0", 0)


@pytest.mark.parametrize("variable", ["CI", "GITLAB_CI"])
def test_analyzers_promote_refused_in_ci_even_at_a_terminal(
    hws: Path, keys: dict[str, Any], variable: str
) -> None:
    before = analyzers_state(hws)
    code, out = finish(
        spawn(hws, "analyzers", "promote", "h1", "--key", str(keys["bob"][0]), **{variable: "1"})
    )
    assert code == 31 and "CI environment" in out and variable in out
    assert analyzers_state(hws) == before


def test_analyzers_creator_cannot_approve_it_and_unknown_keys_are_refused(
    hws: Path, keys: dict[str, Any]
) -> None:
    before = analyzers_state(hws)
    code, out = finish(spawn(hws, "analyzers", "promote", "h1", "--key", str(keys["ada"][0])))
    assert code == 31 and "cannot approve itself" in out
    code, out = finish(spawn(hws, "analyzers", "promote", "h1", "--key", str(keys["mallory"][0])))
    assert code == 32 and "is not in gates/allowed_signers of the champion" in out
    # a wrong one-time code, and a "no": nothing recorded either
    child = spawn(hws, "analyzers", "promote", "h1", "--key", str(keys["bob"][0]))
    answer_challenge(child, "h1", code="AAAA-AAAA")
    code, out = finish(child)
    assert code == 31 and "does not match the code shown" in out
    child = spawn(hws, "analyzers", "promote", "h1", "--key", str(keys["bob"][0]))
    answer_challenge(child, "h1")
    child.expect(r"\[yes/no\]: ")
    child.sendline("no")
    code, out = finish(child)
    assert code == 31 and "nothing was recorded" in out
    assert analyzers_state(hws) == before


def test_hand_moved_harness_ref_is_reported_refused_and_not_followed(
    hws: Path, keys: dict[str, Any]
) -> None:

    # the agent writes a lenient harness and points the ref at it by hand
    lenient = Cli(hws).json("analyzers", "branch", "-m", "silence dead groups")
    commit_file(hws / lenient["worktree"], "harness.toml", LENIENT, "lenient")
    git(hws, "update-ref", "refs/evotree/harness", git(hws, "rev-parse", "evotree/harness/h2"))
    report = Cli(hws).json("verify", code=33)
    validate(report, "verify")
    assert {p["kind"] for p in report["problems"]} == {
        "harness_ref",
        "harness_reflog",
    }  # now and in its log
    assert "without a signed analyzers promotion" in report["problems"][0]["message"]
    assert report["analyzers"] == {"id": "h0", "commit": None}
    assert "harness_ref" in Cli(hws)("verify", code=33).output
    # diagnose does not follow it: the built-in thresholds, flagged as not signed
    ws = Workspace.open(hws)
    active = active_analyzers(ws)
    assert (active.id, active.thresholds, active.signed) == ("h0", {}, False)
    assert "not signed" in (active.warning or "")
    finding = analyzers_trust_finding(active, "v1")
    assert (
        finding is not None
        and finding.severity == "critical"
        and finding.code == "version.harness_unsigned"
    )
    listed = Cli(hws).json("analyzers", "list")
    assert (
        listed["active"] == "h0" and listed["signed"] is False and "not signed" in listed["warning"]
    )
    # the gates' analyzers gate fails closed, saying why and how to restore the ref
    v1 = create_version(ws, hypothesis="anything").id
    gate = next(g for g in evaluate_gates(ws, v1, run_audit=False).gates if g.name == "analyzers")
    assert gate.status == "fail" and "not signed" in gate.summary
    assert "git update-ref -d refs/evotree/harness" in (gate.fix or "")
    # a signed promotion does not build on the tampered state
    code, out = finish(spawn(hws, "analyzers", "promote", "h1", "--key", str(keys["bob"][0])))
    assert code == 33 and "refusing to promote an analyzer version" in out
    # ... and a forged ledger entry (no signature) that claims h2 is caught too
    ws.ledger.transact(
        _forged_event("h2", git(hws, "rev-parse", "evotree/harness/h2")), actor=ws.git.identity()
    )
    kinds = {p["kind"] for p in Cli(hws).json("verify", code=33)["problems"]}
    assert {"harness_promotion", "ledger_harness", "harness_ref"} <= kinds
    assert active_analyzers(Workspace.open(hws)).id == "h0"


def _forged_event(hid: str, commit: str) -> Any:
    def change(txn: LedgerTxn) -> Event:
        txn.meta["harness_active"] = hid
        return Event(
            kind="harness.promoted",
            version=None,
            actor="mallory",
            data={
                "harness": hid,
                "commit": commit,
                "statement": {
                    "type": "evotree.harness-promotion",
                    "harness": hid,
                    "commit": commit,
                    "previous_harness": "h0",
                    "previous_commit": None,
                    "approver": BOB,
                },
                "signature": "-----BEGIN SSH SIGNATURE-----\nforged\n",
            },
        )

    return change


# ---------------------------------------------------------------------------- the honest path
def test_person_promotes_an_analyzer_version_at_a_terminal_and_verify_passes(
    hws: Path, keys: dict[str, Any]
) -> None:

    worktree = next(
        h["worktree"] for h in Cli(hws).json("analyzers", "list")["analyzers"] if h["id"] == "h1"
    )
    commit_file(hws / worktree, "analyzers.py", PLUGIN, "plug-in")
    tip = git(hws, "rev-parse", "evotree/harness/h1")
    plugin_sha = sha256_hex(PLUGIN.encode())
    result = promote_signed(
        hws,
        "h1",
        keys["bob"][0],
        expect=("signal.dead_groups.warn_ratio: default -> 0.1", "analyzers.py: ADDED", plugin_sha),
    )
    assert result["analyzers"] == "h1" and result["commit"] == tip and result["approver"] == BOB
    assert result["previous_analyzers"] == "h0" and result["previous_commit"] is None
    assert result["diff"]["analyzers_py"] == {
        "status": "added",
        "sha256": plugin_sha,
        "previous_sha256": None,
    }
    assert result["diff_hash"] == sha256_hex(canonical(result["diff"]))
    assert git(hws, "rev-parse", "refs/evotree/harness") == tip
    ws = Workspace.open(hws)
    event = next(ws.ledger.entries(limit=1)).event
    assert (
        event.kind == "harness.promoted"
        and event.data["statement"]["diff_hash"] == result["diff_hash"]
    )
    assert (
        event.data["statement"]["type"] == "evotree.harness-promotion" and event.data["signature"]
    )
    # what is stored keeps the lineage's first spelling, so ledgers written before the rename
    # verify as they are: the statement's and the diff's keys, the event's, the meta keys
    assert {"harness", "previous_harness"} <= set(event.data["statement"])
    assert {"harness", "previous_harness"} <= set(event.data["diff"])
    assert event.data["harness"] == "h1" and event.data["previous_harness"] == "h0"
    meta = ws.ledger.meta()
    assert meta["harness_active"] == "h1" and "h1" in meta["harnesses"]
    assert any(e.event.kind == "harness.created" for e in ws.ledger.entries())
    report = Cli(hws).json("verify")
    validate(report, "verify")
    assert report["ok"] and report["analyzers"] == {"id": "h1", "commit": tip}
    assert [p["analyzers"] for p in report["analyzers_promotions"]] == ["h1"]
    promotion_commit = git(hws, "rev-parse", "refs/evotree/ledger")
    active = active_analyzers(ws)
    assert (
        active.id == "h1"
        and active.signed
        and active.thresholds["signal.dead_groups"]["warn_ratio"] == 0.1
    )
    v1 = create_version(ws, hypothesis="anything").id
    gate = next(g for g in evaluate_gates(ws, v1, run_audit=False).gates if g.name == "analyzers")
    assert (
        "not signed" not in gate.summary and gate.fix == f"evotree diagnose {v1}"
    )  # signed: only needs a diagnosis
    # library pieces that move nothing: an unknown analyzer version, and the way back to h0
    with pytest.raises(UnknownVersion):
        plan_analyzers_promotion(ws, "h9")
    back = plan_analyzers_promotion(ws, "h0")
    assert back.diff["thresholds"] == [
        {"analyzer": "signal.dead_groups", "key": "warn_ratio", "old": 0.1, "new": None}
    ]
    assert back.diff["analyzers_py"]["status"] == "removed" and back.commit is None
    # an edited diff in the signed record is caught (the ledger rewritten from the promotion)
    head = promotion_commit
    message = git(hws, "log", "-1", "--format=%B", head)
    subject, body = message.split("\n\n", 1)
    data = json.loads(body.strip().splitlines()[-1])
    data["data"]["diff"]["thresholds"] = []
    forged = subprocess.run(
        ["git", "commit-tree", f"{head}^{{tree}}", "-p", f"{head}^", "-F", "-"],
        cwd=hws,
        input=f"{subject}\n\n{json.dumps(data, sort_keys=True, separators=(',', ':'))}\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(hws, "update-ref", "refs/evotree/ledger", forged)
    problems = Cli(hws).json("verify", code=33)["problems"]
    assert any("recorded diff is not the one signed" in p["message"] for p in problems)


# ---------------------------------------------------------------------------- diagnose
@pytest.fixture
def diagnosed_tamper(hws: Path) -> tuple[Path, str]:
    """A version with 20 % dead groups, run; then the agent points the
    analyzers ref at h1 (warn at 10 %) by hand."""
    from test_analyzer_versions import _dead_group_version

    ws = Workspace.open(hws)
    v1 = _dead_group_version(ws)
    (record,) = run_versions(ws, [v1])
    assert record.status == "succeeded", record.error
    git(hws, "update-ref", "refs/evotree/harness", git(hws, "rev-parse", "evotree/harness/h1"))
    return hws, v1


def test_diagnose_does_not_follow_a_hand_moved_analyzers_ref(
    diagnosed_tamper: tuple[Path, str],
) -> None:
    repo, v1 = diagnosed_tamper
    result = Cli(repo).json("diagnose", v1, "--layer", "signal")
    validate(result, "diagnose")
    assert not [
        f for f in result["findings"] if f["code"] == "signal.dead_groups_high"
    ]  # h1's 10 % not applied
    assert {f["harness_version"] for f in result["findings"]} == {"h0"}


def test_diagnose_result_says_the_analyzers_are_not_signed(
    diagnosed_tamper: tuple[Path, str],
) -> None:
    repo, v1 = diagnosed_tamper
    result = Cli(repo).json("diagnose", v1, "--layer", "signal")
    unsigned = [f for f in result["findings"] if f["code"] == "version.harness_unsigned"]
    assert (
        unsigned and unsigned[0]["severity"] == "critical" and "not signed" in unsigned[0]["title"]
    )


# ------------------------------------------------------------------------ stored before the rename
OLD_LEDGER = Path(__file__).parent / "data" / "ledgers" / "harness-promotion-v0.tar.gz"


def test_a_promotion_signed_before_the_rename_still_verifies(tmp_path: Path) -> None:
    """A workspace whose ledger holds a harness promotion signed by the code from before the
    lineage was renamed (made with `evotree.gates.harnesses.record_harness_promotion`, Bob's
    key; no private key ships) verifies byte for byte, and its version is the one in force."""
    import tarfile

    with tarfile.open(OLD_LEDGER) as archive:
        archive.extractall(tmp_path, filter="data")
    repo = tmp_path / "w"
    cli = Cli(repo)
    report = cli.json("verify")
    validate(report, "verify")
    tip = "42b46a37a2bbfec6d76da7207ece30bb4068ed80"
    assert report["ok"] and report["problems"] == []
    assert report["analyzers"] == {"id": "h1", "commit": tip}
    steps = [(p["analyzers"], p["previous"]) for p in report["analyzers_promotions"]]
    assert steps == [("h1", "h0")]
    listed = cli.json("analyzers", "list")
    assert (listed["active"], listed["signed"]) == ("h1", True)
    assert active_analyzers(Workspace.open(repo)).thresholds == {
        "signal.dead_groups": {"warn_ratio": 0.1}
    }
    # the stored statement is what the old code signed; one byte changed in it is caught
    head = git(repo, "rev-parse", "refs/evotree/ledger")
    message = git(repo, "log", "-1", "--format=%B", head)
    subject, body = message.split("\n\n", 1)
    data = json.loads(body.strip().splitlines()[-1])
    assert data["kind"] == "harness.promoted"
    assert data["data"]["statement"]["type"] == "evotree.harness-promotion"
    data["data"]["statement"]["previous_harness"] = "h0 "
    forged = subprocess.run(
        ["git", "commit-tree", f"{head}^{{tree}}", "-p", f"{head}^", "-F", "-"],
        cwd=repo,
        input=f"{subject}\n\n{json.dumps(data, sort_keys=True, separators=(',', ':'))}\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(repo, "update-ref", "refs/evotree/ledger", forged)
    kinds = {p["kind"] for p in cli.json("verify", code=33)["problems"]}
    assert "harness_promotion" in kinds
