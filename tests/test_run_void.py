"""Voiding a run: a signed way out for runs whose evidence cannot be counted.

Before: a run recorded before evidence manifests existed ("unverified"), or one whose directory
is lost for good, failed the score gate forever; nothing could be done but abandon the commit.
Now a person signs ``evotree runs void RUN_ID --reason TEXT`` (``run.voided``); the run leaves
every number, and the gates and ``compare`` list it as voided. Tested as the agent that created
the version would try it: voiding its own run, writing an unsigned or forged ``run.voided``
into the ledger, voiding a run that counts (to drop an unlucky seed).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import EVOTREE_BIN, Cli, commit_file, validate
from fixtures_ws import child_env, finish, scored_project, signers_file, spawn

from evotree.core.ledger import Event, LedgerTxn
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
from evotree.harness.integrity import RUN_VOID_TYPE, RUN_VOIDED_EVENT, verify_run_evidence
from evotree.verbs import open_workspace

JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
for i in range(20):
    rec.eval_result("validation", f"task-{i}", min(1.0, max(0.0, model["skill"] + (i % 5 - 2) * 0.01)))
"""


@pytest.fixture
def voidable(tmp_path: Path, keys: dict[str, Any]) -> dict[str, Any]:
    """Champion v0 (3 seeds); v1, created by Ada (the git identity), better (4 seeds); one of v1's
    runs re-finished in the ledger without a manifest, as an evotree from before manifests wrote it."""
    from evotree.harness.finish import ledger_run_finished
    from evotree.harness.records import RunRecord

    repo = scored_project(
        tmp_path / "w",
        judge=JUDGE,
        files={"gates/allowed_signers": signers_file(keys)},
        message="recipe, train script, judge, gate policy and allowed signers",
    )
    ws = open_workspace(repo)
    v1 = create_version(ws, hypothesis="more skill", parent="champion")
    commit_file(repo / v1.worktree, "recipe.toml", "skill = 0.7\n", "more skill")
    records = run_versions(ws, ["v0"], seeds=3, jobs=2) + run_versions(
        Workspace.open(repo), [v1.id], seeds=4, jobs=2
    )
    assert all(r.status == "succeeded" for r in records), [r.error for r in records]
    runs = {r.seed: r.run_id for r in records if r.version == v1.id}
    ws = open_workspace(repo)
    ledger_run_finished(ws, RunRecord.load(repo / ".evotree" / "runs" / runs[3] / "run.json"))
    assert verify_run_evidence(ws, v1.id).run(runs[3]).state == "unverified"
    return {"repo": repo, "v1": v1.id, "runs": runs, "old": runs[3]}


def _score(repo: Path, version: str) -> dict[str, Any]:
    report = Cli(repo).json("gates", version)
    validate(report, "gates")
    return next(g for g in report["gates"] if g["name"] == "score")


def _void_at_terminal(
    repo: Path,
    run_id: str,
    key: Path,
    reason: str = "recorded by evotree 0.3, before manifests",
) -> tuple[int, str]:
    child = spawn(repo, "runs", "void", run_id, "--reason", reason, "--key", str(key), "--json")
    child.expect(r"the one-time code \S*?([A-Z2-9]{4}-[A-Z2-9]{4})")
    code_shown = child.match.group(1)
    child.expect("run id: ")
    child.sendline(run_id)
    child.expect("one-time code: ")
    child.sendline(code_shown)
    child.expect(r"void this run\? \[yes/no\]: ")
    child.sendline("yes")
    return finish(child)


def _hand_written_void(repo: Path, data: dict[str, Any], version: str) -> None:
    ws = open_workspace(repo)

    def change(txn: LedgerTxn) -> Event:
        return Event(
            kind=RUN_VOIDED_EVENT, version=version, actor=str(ws.git.identity()), data=data
        )

    ws.ledger.transact(change, actor=ws.git.identity())


def test_an_unverified_run_fails_the_gate_until_a_person_voids_it(
    voidable: dict[str, Any], keys: dict[str, Any]
) -> None:
    repo, v1, old = voidable["repo"], voidable["v1"], voidable["old"]
    score = _score(repo, v1)
    assert (
        score["status"] == "fail"
        and score["numbers"]["findings"][0]["code"] == "score.evidence_unverified"
    )
    code, out = _void_at_terminal(repo, old, keys["bob"][0])
    assert code == 0, out
    result = json.loads(out[out.index('{"') :])
    validate(result, "runs-void")
    assert (
        result["run_id"] == old
        and result["version"] == v1
        and result["state_before"] == "unverified"
    )
    assert result["approver"] == "bob@example.com" and "before manifests" in result["reason"]
    ws = open_workspace(repo)
    (event,) = [e.event for e in ws.ledger.entries(version=v1) if e.event.kind == RUN_VOIDED_EVENT]
    assert event.data["statement"]["type"] == RUN_VOID_TYPE and event.data["signature"]
    check = verify_run_evidence(ws, v1)
    assert check.ok and old not in [r.run_id for r in check.runs]
    assert [r.run_id for r in check.voided] == [old] and check.voided[0].void[
        "approver"
    ] == "bob@example.com"
    # the gate no longer fails on it, and shows it: in its numbers and its summary
    score = _score(repo, v1)
    assert score["status"] == "pass", score
    assert [v["run_id"] for v in score["numbers"]["voided"]] == [old]
    assert score["numbers"]["voided"][0]["reason"].startswith("recorded by evotree 0.3")
    assert old in score["summary"] and "voided" in score["summary"]
    assert score["numbers"]["evidence"]["candidate"]["voided"] == [old]
    # compare lists it too, and counts the three other seeds only
    data = Cli(repo).json("compare", "v0", v1, "--bootstrap", "1000")
    assert data["evidence"]["ok"] is True and data["evidence"]["b"]["voided"] == [old]
    assert old not in data["runs"]["b"] and len(data["runs"]["b"]) == 3
    # and the report names it, with who voided it and why
    report = Cli(repo).json("report", v1, "--against", "v0", "--format", "json", "--no-audit")[
        "report"
    ]
    assert report["scores"]["voided"]["b"]["runs"] == [old]
    assert report["scores"]["voided"]["b"]["voids"][old]["approver"] == "bob@example.com"
    # once voided, it stays voided
    code, out = finish(
        spawn(repo, "runs", "void", old, "--reason", "again", "--key", str(keys["bob"][0]))
    )
    assert code == 10 and "already voided" in out


def test_the_versions_creator_cannot_void_its_runs(
    voidable: dict[str, Any], keys: dict[str, Any]
) -> None:
    """Ada created v1 (her git identity): her allowed key is refused before anything is shown or signed."""
    repo, v1, old = voidable["repo"], voidable["v1"], voidable["old"]
    code, out = finish(
        spawn(repo, "runs", "void", old, "--reason", "mine", "--key", str(keys["ada"][0]))
    )
    assert code == 31 and "cannot approve itself" in out
    # nor through the library with a hand-made approver
    from evotree.gates.errors import SignoffRefused
    from evotree.gates.run_void import record_run_void
    from evotree.gates.signoff import Approver
    from evotree.gates.verify import trusted_policy

    ws = open_workspace(repo)
    with pytest.raises(SignoffRefused, match="creator cannot void"):
        record_run_void(
            ws, trusted_policy(ws), Approver("ada@example.com", keys["ada"][0], "fp"), old, "mine"
        )
    assert not [e for e in ws.ledger.entries() if e.event.kind == RUN_VOIDED_EVENT]
    # no terminal (an agent's shell): refused
    proc = subprocess.run(
        [
            str(EVOTREE_BIN),
            "-C",
            str(repo),
            "runs",
            "void",
            old,
            "--reason",
            "x",
            "--key",
            str(keys["bob"][0]),
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        check=False,
        env=child_env(),
    )
    assert proc.returncode == 31 and "not a terminal" in proc.stderr
    assert _score(repo, v1)["status"] == "fail"


def test_unsigned_and_forged_voids_void_nothing(
    voidable: dict[str, Any], keys: dict[str, Any]
) -> None:
    from evotree.gates.signing import canonical, sign
    from evotree.gates.statements import anchor_commit

    repo, v1, old = voidable["repo"], voidable["v1"], voidable["old"]
    ws = open_workspace(repo)
    statement = {
        "type": RUN_VOID_TYPE,
        "v": 1,
        "workspace": anchor_commit(ws),
        "approver": "bob@example.com",
        "key": "SHA256:x",
        "at": "2026-01-01T00:00:00Z",
        "nonce": "00",
        "version": v1,
        "run_id": old,
        "reason": "trust me",
        "created_by": "Ada Tester <ada@example.com>",
    }
    # 1. no signature at all
    _hand_written_void(repo, {"run_id": old, "reason": "trust me", "statement": statement}, v1)
    # 2. "signed by bob" with mallory's key (not an allowed signer)
    _hand_written_void(
        repo,
        {
            "run_id": old,
            "reason": "trust me",
            "statement": statement,
            "signature": sign(keys["mallory"][0], canonical(statement)),
        },
        v1,
    )
    # 3. validly signed by Ada, the version's creator, claiming someone else created it
    by_ada = dict(statement, approver="ada@example.com", created_by="Bob <bob@example.com>")
    _hand_written_void(
        repo,
        {
            "run_id": old,
            "reason": "mine",
            "statement": by_ada,
            "signature": sign(keys["ada"][0], canonical(by_ada)),
        },
        v1,
    )
    check = verify_run_evidence(open_workspace(repo), v1)
    run = check.run(old)
    assert run is not None and run.state == "unverified" and not check.voided and not check.ok
    rejected = [p for p in run.problems if "was rejected" in p]
    assert len(rejected) == 3
    assert "signature invalid" in rejected[0] or "no signature" in rejected[0]
    assert "signature invalid" in rejected[1]
    assert "created the version" in rejected[2]
    score = _score(repo, v1)
    assert (
        score["status"] == "fail"
        and score["numbers"]["findings"][0]["code"] == "score.evidence_unverified"
    )
    assert "voided" not in score["numbers"]


def test_a_run_that_counts_cannot_be_voided(voidable: dict[str, Any], keys: dict[str, Any]) -> None:
    """Voiding is for evidence that cannot be counted: not a way to drop an unlucky seed."""
    repo, v1, runs = voidable["repo"], voidable["v1"], voidable["runs"]
    code, out = finish(
        spawn(repo, "runs", "void", runs[0], "--reason", "unlucky", "--key", str(keys["bob"][0]))
    )
    assert code == 10 and "is ok" in out and "may be voided" in out
    code, out = finish(
        spawn(repo, "runs", "void", "no-such-run", "--reason", "x", "--key", str(keys["bob"][0]))
    )
    assert code != 0 and "no run" in out
    # `evotree runs` still lists runs
    listed = Cli(repo).json("runs", "--version", v1)
    assert runs[0] in json.dumps(listed)
