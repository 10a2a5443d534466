"""Gates: threat tests — each attempt fails clearly and leaves the champion unchanged —
and the honest path: a person at a pseudo-terminal with an allowed key promotes, verify passes.

Real git repositories, real SSH keys (ssh-keygen), the real CLI as a subprocess under a pty
(pexpect), real runs judged by the champion's judge.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import EVOTREE_BIN, Cli, commit_file, git, make_repo, validate
from fixtures_ws import (
    answer_challenge,
    child_env,
    finish,
    make_key,
    promote_at_terminal,
    scored_project,
    signers_file,
    spawn,
)

from evotree.core.ledger import Event, EventKind, LedgerTxn
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.signoff import CI_VARIABLES

BOB = "bob@example.com"  # the human approver; the agent's git identity is Ada (conftest)


CONFIG = """\
[train]
command = "python train.py"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
[gates]
min_delta = 0.0
alpha = 0.05
min_tasks = {min_tasks}
min_seeds = 3
champion_seeds = 3
bootstrap_samples = 1000
train_approval_above_seconds = {train_threshold}
[budget]
max_wall_seconds = 60
max_runs_per_version = 6
"""


def gate_repo(
    path: Path,
    keys: dict[str, tuple[Path, str]],
    *,
    signers: tuple[str, ...] = ("bob", "ada"),
    min_tasks: int = 20,
    train_threshold: int = 0,
    judge: str | None = None,
    train: str | None = None,
) -> Path:
    """A workspace whose champion's tree holds [gates] and gates/allowed_signers (bob, ada)."""
    allowed = signers_file(keys, signers, header="# approvers of promotions\n")
    return scored_project(
        path,
        judge=judge or "print('judge')\n",
        train=train or None,
        recipe=None,
        config=CONFIG.format(min_tasks=min_tasks, train_threshold=train_threshold),
        files={"gates/allowed_signers": allowed},
        message="recipe, judge, gate policy",
    )


def new_version(
    repo: Path, text: str = "skill = 0.9\n", *, files: dict[str, str] | None = None
) -> str:
    ws = Workspace.open(repo)
    rec = create_version(ws, hypothesis="better skill", parent="champion")
    wt = ws.root / rec.worktree
    for name, content in (files or {}).items():
        (wt / name).parent.mkdir(parents=True, exist_ok=True)
        (wt / name).write_text(content)
    commit_file(wt, "recipe.toml", text, "recipe")
    return rec.id


def state(repo: Path) -> tuple[str, str, int]:
    """(champion ref, ledger champion, signed events): what no refused attempt may change.

    (Evaluating the gates may append an ``audit`` event: the audit records itself.)"""
    ws = Workspace.open(repo)
    signed = sum(
        1 for e in ws.ledger.entries() if e.event.kind in ("promotion", "decision", "run.approved")
    )
    return git(repo, "rev-parse", "refs/evotree/champion"), ws.ledger.meta()["champion"], signed


@pytest.fixture
def gws(tmp_path: Path, keys: dict[str, tuple[Path, str]]) -> Path:
    return gate_repo(tmp_path / "w", keys)


# ---------------------------------------------------------------------------- refusals
def test_promote_refused_without_a_terminal(gws: Path, keys: dict[str, Any]) -> None:
    v1 = new_version(gws)
    before = state(gws)
    for cmd in (["promote", v1], ["approve-run", v1, "--runs", "1"]):
        proc = subprocess.run(
            [str(EVOTREE_BIN), "-C", str(gws), *cmd, "--key", str(keys["bob"][0])],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
            text=True,
            env=child_env(),
        )
        assert proc.returncode == 31, proc.stderr
        assert "not a terminal" in proc.stderr and "fix:" in proc.stderr
        proc = subprocess.run(
            [str(EVOTREE_BIN), "-C", str(gws), *cmd, "--json"],
            input="v1\n",
            capture_output=True,
            check=False,
            text=True,
            env=child_env(),
        )
        assert proc.returncode == 31
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "signoff_refused"
        validate(json.loads(proc.stdout), "error")
    assert state(gws) == before


@pytest.mark.parametrize("variable", ["CI", "GITHUB_ACTIONS"])
def test_promote_refused_in_ci_even_at_a_terminal(
    gws: Path, keys: dict[str, Any], variable: str
) -> None:
    v1 = new_version(gws)
    before = state(gws)
    child = spawn(gws, "promote", v1, "--key", str(keys["bob"][0]), **{variable: "true"})
    code, out = finish(child)
    assert code == 31 and "CI environment" in out and variable in out
    assert state(gws) == before


def test_every_ci_variable_refuses_before_anything_else() -> None:
    from evotree.gates.errors import SignoffRefused
    from evotree.gates.signoff import require_human_terminal

    for variable in CI_VARIABLES:
        with pytest.raises(SignoffRefused, match=variable):
            require_human_terminal(env={variable: "1"})
    for harmless in ("", "0", "false"):
        with pytest.raises(SignoffRefused, match="stdin is not a terminal"):
            require_human_terminal(env={"CI": harmless}, stdin=io.StringIO(), stdout=io.StringIO())


def test_approver_may_not_be_the_creator(gws: Path, keys: dict[str, Any]) -> None:
    v1 = new_version(gws)  # created by Ada (the repository's git identity)
    before = state(gws)
    child = spawn(gws, "promote", v1, "--key", str(keys["ada"][0]))
    code, out = finish(child)
    assert code == 31 and "created this version" in out and "cannot approve itself" in out
    assert state(gws) == before


def test_key_not_in_allowed_signers_is_refused(gws: Path, keys: dict[str, Any]) -> None:
    v1 = new_version(gws)
    before = state(gws)
    child = spawn(gws, "promote", v1, "--key", str(keys["mallory"][0]))
    code, out = finish(child)
    assert code == 32 and "is not in gates/allowed_signers of the champion" in out
    assert state(gws) == before
    # no key at all: a clear error, not a prompt
    child = spawn(gws, "promote", v1, EVOTREE_SIGNING_KEY="")
    code, out = finish(child)
    assert code == 32 and "no signing key" in out
    # a root without allowed signers: nobody can promote (fail closed), and the error says why
    bare = gate_repo(gws.parent / "nobody", keys, signers=())
    child = spawn(bare, "promote", new_version(bare), "--key", str(keys["bob"][0]))
    code, out = finish(child)
    assert code == 32 and "names no signer" in out


def test_candidate_editing_policy_or_signers_in_its_branch_changes_nothing(
    gws: Path, keys: dict[str, Any]
) -> None:
    cfg = (
        (gws / "evotree.toml")
        .read_text()
        .replace("min_delta = 0.0", "min_delta = -1.0")
        .replace("alpha = 0.05", "alpha = 0.9")
    )
    v1 = new_version(
        gws,
        files={
            "gates/allowed_signers": f"mallory@example.com {keys['mallory'][1]}\n",
            "evotree.toml": cfg,
        },
    )
    before = state(gws)
    child = spawn(gws, "promote", v1, "--key", str(keys["mallory"][0]))
    code, out = finish(child)
    assert code == 32 and "not in gates/allowed_signers of the champion" in out
    assert state(gws) == before
    report = Cli(gws).json("gates", v1)
    validate(report, "gates")
    assert (
        report["policy"]["gates"]["min_delta"] == 0.0 and report["policy"]["gates"]["alpha"] == 0.05
    )
    assert report["policy"]["allowed_signers"] == [BOB, "ada@example.com"][::-1] or sorted(
        report["policy"]["allowed_signers"]
    ) == sorted([BOB, "ada@example.com"])
    protected = next(g for g in report["gates"] if g["name"] == "protected")
    assert protected["status"] == "fail"
    assert set(protected["numbers"]["changed"]) == {"evotree.toml", "gates/allowed_signers"}
    assert "git checkout" in protected["fix"]
    assert not report["passed"]
    text = Cli(gws)(
        "gates", v1
    ).output  # the dossier for people: exit 0, the table says what blocks
    assert "protected" in text and "FAIL" in text and "gate(s) block promotion" in text
    Cli(gws)("gates", "v9", code=5)  # an unknown version: the usual clear error


def test_wrong_code_or_version_records_nothing(gws: Path, keys: dict[str, Any]) -> None:
    from evotree.gates.errors import SignoffRefused
    from evotree.gates.signoff import check_typed, new_code

    v1 = new_version(gws)
    before = state(gws)
    child = spawn(gws, "promote", v1, "--key", str(keys["bob"][0]))
    answer_challenge(child, v1, code="AAAA-AAAA")
    code, out = finish(child)
    assert code == 31 and "does not match the code shown" in out
    assert state(gws) == before
    shown = new_code()
    assert re.fullmatch(r"[A-Z2-9]{4}-[A-Z2-9]{4}", shown) and shown != new_code()
    check_typed("v1", shown, " v1 ", shown.lower())  # case and spaces forgiven
    with pytest.raises(SignoffRefused, match="is not 'v1'"):
        check_typed("v1", shown, "v0", shown)
    with pytest.raises(SignoffRefused, match="does not match"):
        check_typed("v1", shown, "v1", "")


def test_failed_gates_offer_only_revise_and_abort_signed(gws: Path, keys: dict[str, Any]) -> None:
    v1 = new_version(gws)  # no runs: the score gate cannot pass
    before = state(gws)
    child = spawn(gws, "promote", v1, "--key", str(keys["bob"][0]), "--json")
    answer_challenge(child, v1)
    child.expect(r"decision \[revise/abort\]: ")
    child.sendline("approve")
    child.expect("'approve' is not one of revise, abort")
    child.expect(r"decision \[revise/abort\]: ")
    child.sendline("revise")
    child.expect("feedback for the next version: ")
    child.sendline("run it with three seeds first")
    code, out = finish(child)
    assert code == 0, out
    result = json.loads(out[out.index('{"') :])
    validate(result, "promote")
    assert (
        result["decision"] == "revise" and result["champion"] == "v0" and result["approver"] == BOB
    )
    assert result["warnings"] == []  # memory kept the feedback as negative evidence
    assert state(gws)[:2] == before[:2] and state(gws)[2] == before[2] + 1
    ws = Workspace.open(gws)
    event = next(ws.ledger.entries(limit=1)).event
    assert event.kind == "decision" and event.data["feedback"] == "run it with three seeds first"
    report = Cli(gws).json("verify")
    validate(report, "verify")
    assert report["ok"] and report["checked"]["decisions"] == 1


# ---------------------------------------------------------------------------- forgery
def _forge_promotion(repo: Path, version: str, *, signature: str, approver: str = BOB) -> None:
    """What an agent with shell access can do: append a promotion to the ledger and move the ref."""
    ws = Workspace.open(repo)
    commit = git(repo, "rev-parse", f"evotree/{version}")
    previous = git(repo, "rev-parse", "refs/evotree/champion")
    dossier = {"version": version, "commit": commit, "gates": [], "passed": True}
    from evotree.gates.signing import canonical, sha256_hex

    statement = {
        "type": "evotree.promotion",
        "v": 1,
        "workspace": previous,
        "approver": approver,
        "decision": "approve",
        "version": version,
        "commit": commit,
        "previous_champion": "v0",
        "previous_commit": previous,
        "evidence_hash": sha256_hex(canonical(dossier)),
        "created_by": ws.resolve(version).created_by,
    }

    def change(txn: LedgerTxn) -> Event:
        txn.meta["champion"] = version
        return Event(
            kind=EventKind.PROMOTION.value,
            version=version,
            actor="mallory",
            data={"statement": statement, "signature": signature, "dossier": dossier},
        )

    ws.ledger.transact(change, actor=ws.git.identity())
    git(repo, "update-ref", "refs/evotree/champion", commit)
    git(repo, "tag", f"evotree/promoted/{version}", commit)  # an unsigned tag


def test_forged_ledger_entry_is_caught_and_blocks_sign_offs(
    gws: Path, keys: dict[str, Any]
) -> None:
    from evotree.gates.signing import canonical, sign

    v1, v2 = new_version(gws), new_version(gws, "skill = 0.7\n")
    assert Cli(gws).json("verify")["ok"]
    # signed by Mallory's key in Bob's name, and a garbage signature: neither verifies
    fake = sign(keys["mallory"][0], canonical({"x": 1}))
    _forge_promotion(gws, v1, signature=fake)
    report = Cli(gws).json("verify", code=33)
    validate(report, "verify")
    kinds = {p["kind"] for p in report["problems"]}
    assert {"promotion", "ledger_champion", "champion_ref"} <= kinds
    assert report["champion"] == "v0"  # the end of the signed chain
    assert any("signature invalid" in p["message"] for p in report["problems"])
    out = Cli(gws)("verify", code=33).output
    assert "tampering found" in out
    # nothing that needs the champion's policy trusts a forged champion
    child = spawn(gws, "promote", v2, "--key", str(keys["bob"][0]))
    code, text = finish(child)
    assert code == 33 and "not backed by signed approvals" in text
    child = spawn(gws, "approve-run", v2, "--runs", "1", "--key", str(keys["bob"][0]))
    code, text = finish(child)
    assert code == 33


def test_champion_ref_moved_by_hand_is_caught(gws: Path, keys: dict[str, Any]) -> None:
    v1 = new_version(gws)
    git(gws, "update-ref", "refs/evotree/champion", git(gws, "rev-parse", f"evotree/{v1}"))
    report = Cli(gws).json("verify", code=33)
    # the ref's value, and (workspaces log every ref update since init) its reflog
    assert sorted(p["kind"] for p in report["problems"]) == ["champion_ref", "champion_reflog"]
    assert any("without a signed approval" in p["message"] for p in report["problems"])


# ---------------------------------------------------------------------------- signatures
def test_allowed_signers_parsing_and_signature_checks(keys: dict[str, Any], tmp_path: Path) -> None:
    from evotree.gates.errors import SignatureError
    from evotree.gates.signing import canonical, parse_allowed_signers, sign, verify

    text = f'{BOB} {keys["bob"][1]}\nada@example.com namespaces="git" {keys["ada"][1]}\n'
    signers = parse_allowed_signers(text)
    assert [s.principals for s in signers] == [(BOB,), ("ada@example.com",)]
    assert signers[0].allows(BOB) and not signers[1].allows(
        "ada@example.com"
    )  # not for our namespace
    with pytest.raises(SignatureError, match="line 2"):
        parse_allowed_signers(f"{BOB} {keys['bob'][1]}\nnot a key line\n")
    with pytest.raises(SignatureError, match="cert-authority"):
        parse_allowed_signers(f"*@example.com cert-authority {keys['bob'][1]}\n")
    data = canonical({"b": 1, "a": [1, 2]})
    assert data == b'{"a":[1,2],"b":1}'
    sig = sign(keys["bob"][0], data)
    assert verify(text, BOB, data, sig)[0]
    assert not verify(text, BOB, data + b" ", sig)[0]
    assert not verify(text, "ada@example.com", data, sig)[0]
    assert not verify(text, BOB, data, sig.replace("A", "B", 5))[0]
    assert not verify(text, BOB, data, "unsigned")[0]


# ---------------------------------------------------------------------------- train gate
def test_train_gate_needs_a_signed_run_approval(tmp_path: Path, keys: dict[str, Any]) -> None:
    from test_runs import TRAIN

    from evotree.gates.errors import GateFailed
    from evotree.gates.runs import plan_runs, run_versions

    repo = gate_repo(tmp_path / "t", keys, train_threshold=100, train=TRAIN, judge=SEEDED_JUDGE)
    v1 = new_version(repo)
    ws = Workspace.open(repo)
    assert len(plan_runs(ws, [v1], seeds=1)) == 1  # 60 s <= 100 s: no approval needed
    with pytest.raises(
        GateFailed, match=r"train gate: 2 run\(s\) of v1 may cost up to 120 s"
    ) as err:
        plan_runs(ws, [v1], seeds=2)
    assert "evotree approve-run v1 --runs 2" in (err.value.fix or "")
    out = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "run", v1, "--seeds", "2"],
        capture_output=True,
        check=False,
        text=True,
        env=child_env(),
    )
    assert out.returncode == 30 and "train gate" in out.stderr
    # a forged approval (signed by a key that is not allowed) opens nothing
    from evotree.gates.promote import anchor_commit
    from evotree.gates.signing import canonical, sign

    statement = {
        "type": "evotree.run-approval",
        "v": 1,
        "workspace": anchor_commit(ws),
        "approver": BOB,
        "version": v1,
        "commit": git(repo, "rev-parse", f"evotree/{v1}"),
        "runs": 10,
        "created_by": ws.resolve(v1).created_by,
    }
    forged = sign(keys["mallory"][0], canonical(statement))
    ws.ledger.transact(
        lambda txn: Event(
            kind="run.approved",
            version=v1,
            actor="mallory",
            data={"statement": statement, "signature": forged, "runs": 10},
        ),
        actor=ws.git.identity(),
    )
    with pytest.raises(GateFailed, match="no valid signed approval"):
        plan_runs(Workspace.open(repo), [v1], seeds=2)
    assert Cli(repo).json("verify", code=33)["problems"][0]["kind"] == "run_approval"
    # the person approves 2 runs at a terminal
    child = spawn(repo, "approve-run", v1, "--runs", "2", "--key", str(keys["bob"][0]), "--json")
    answer_challenge(child, v1)
    child.expect(r"approve these runs\? \[yes/no\]: ")
    child.sendline("yes")
    code, out = finish(child)
    assert code == 0, out
    result = json.loads(out[out.index('{"') :])
    validate(result, "gates-run-approval")
    assert result["runs"] == 2 and result["approver"] == BOB
    assert len(plan_runs(Workspace.open(repo), [v1], seeds=2)) == 2
    with pytest.raises(GateFailed, match="covers 2 run"):
        plan_runs(Workspace.open(repo), [v1], seeds=3)
    # the approval is used up by runs that start; replaying its event in the ledger does not renew it
    started = run_versions(Workspace.open(repo), ["v0", v1], seeds=1)
    assert all(r.status == "succeeded" for r in started), [r.error for r in started]
    ws = Workspace.open(repo)
    approval = next(
        e
        for e in ws.ledger.entries()
        if e.event.kind == "run.approved" and e.event.actor != "mallory"
    )
    ws.ledger.transact(
        lambda txn: Event(
            kind="run.approved", version=v1, actor="mallory", data=approval.event.data
        ),
        actor=ws.git.identity(),
    )
    with pytest.raises(GateFailed, match="covers 2 run.*1 already started"):
        plan_runs(Workspace.open(repo), [v1], seeds=2)
    # a new commit of the version needs a new approval
    commit_file(repo / ".evotree" / "worktrees" / v1, "recipe.toml", "skill = 0.95\n", "tweak")
    with pytest.raises(GateFailed, match="no valid signed approval"):
        plan_runs(Workspace.open(repo), [v1], seeds=2)
    # ... and the runs of the old commit are not evidence for the new one
    score = next(g for g in Cli(repo).json("gates", v1)["gates"] if g["name"] == "score")
    assert score["status"] == "unavailable" and "not evidence for this one" in score["summary"]


# ---------------------------------------------------------------------------- the honest path
SEEDED_JUDGE = """\
import json, os, random
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
seed = int(os.environ.get("EVOTREE_SEED", "0"))
shift = random.Random(1000 + seed).gauss(0, 0.03)  # a run's luck, shared by all its tasks
for i in range(24):
    u = random.Random(i * 7919).random()  # the task's difficulty
    rec.eval_result("validation", f"task-{i}", 1.0 if u < model["skill"] + shift else 0.0)
"""


def test_person_at_a_terminal_promotes_and_verify_passes(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    from test_runs import TRAIN

    from evotree.gates.runs import run_versions

    repo = gate_repo(tmp_path / "h", keys, judge=SEEDED_JUDGE, train=TRAIN)
    v1 = new_version(repo, "skill = 0.9\nsteps = 3\n")
    ws = Workspace.open(repo)
    runs = run_versions(ws, ["v0", v1], seeds=1)
    assert all(r.status == "succeeded" for r in runs), [r.error for r in runs]
    # too few seeds: the score gate says so, with the numbers and the runs that would make it ready
    report = Cli(repo).json("gates", v1)
    validate(report, "gates")
    score = next(g for g in report["gates"] if g["name"] == "score")
    assert score["status"] == "fail" and "the first look needs 3" in score["summary"]
    assert score["numbers"]["verdict"] == "not_ready"
    assert f"evotree run {v1} --seeds 2 --seed-start 1" in score["fix"]
    assert (
        "evotree run v0 --seeds 2 --seed-start 1" in score["fix"]
    )  # re-runs of the champion: new seeds
    # the dossier's comparison and the score gate show one Δ, one CI, one p
    assert report["comparison"]["ci"] == score["numbers"]["ci"]
    assert report["comparison"]["p_value"] == score["numbers"]["p_value"]
    analyzers_gate = next(g for g in report["gates"] if g["name"] == "analyzers")
    assert analyzers_gate["status"] == "fail" and analyzers_gate["fix"] == f"evotree diagnose {v1}"
    runs = run_versions(Workspace.open(repo), ["v0", v1], seeds=3)  # seeds 0, 1 again and 2
    assert all(r.status == "succeeded" for r in runs)
    # analyzers whose plug-in code runs wherever they load: fine in the agent's process,
    # never in the approver's (it could read their key)
    marker = tmp_path / "plugin-ran"
    harness = Cli(repo).json("analyzers", "branch", "-m", "a plug-in")
    hid = harness["id"]
    commit_file(
        repo / harness["worktree"],
        "analyzers.py",
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n",
        "plug-in",
    )
    from test_analyzers_signoff import (
        promote_signed,
    )  # an analyzer version goes in force only with a signed sign-off

    promote_signed(repo, hid, keys["bob"][0])
    Cli(repo)("diagnose", v1)
    assert marker.exists()
    marker.unlink()
    report = Cli(repo).json("gates", v1)
    validate(report, "gates")
    assert report["passed"], [
        (g["name"], g["summary"]) for g in report["gates"] if g["status"] != "pass"
    ]
    score = next(g for g in report["gates"] if g["name"] == "score")
    assert score["numbers"]["n_seeds"] == [3, 3] and score["numbers"]["ci"][0] > 0
    candidate = git(repo, "rev-parse", f"evotree/{v1}")

    code, out = promote_at_terminal(repo, v1, keys["bob"][0], "--merge", "--json")
    assert code == 0, out
    result = json.loads(out[out.index('{"') :])
    validate(result, "promote")
    assert (
        result["decision"] == "approve"
        and result["champion"] == v1
        and result["previous_champion"] == "v0"
    )
    assert (
        result["warnings"] == [] and result["merged"] == "main"
    )  # memory recorded it; merged into main
    assert not marker.exists()  # no plug-in code ran in the approver's process
    signal = next(g for g in result["dossier"]["gates"] if g["name"] == "signal")
    assert (
        signal["numbers"]["plugin_code_executed"] is False and signal["numbers"]["analyzers"] == hid
    )
    git(repo, "merge-base", "--is-ancestor", git(repo, "rev-parse", f"evotree/{v1}"), "main")
    assert git(repo, "rev-parse", "refs/evotree/champion") == candidate
    ws = Workspace.open(repo)
    assert ws.champion() == v1
    event = next(ws.ledger.entries(limit=1)).event
    assert (
        event.kind == "promotion"
        and event.data["statement"]["evidence_hash"] == result["evidence_hash"]
    )
    # the tag is signed by the approver, checked by git itself against the champion's signers
    allowed = tmp_path / "allowed"
    allowed.write_text(f"{BOB} {keys['bob'][1]}\n")
    tag = subprocess.run(
        [
            "git",
            "-c",
            f"gpg.ssh.allowedSignersFile={allowed}",
            "verify-tag",
            f"evotree/promoted/{v1}",
        ],
        cwd=repo,
        capture_output=True,
        check=False,
        text=True,
    )
    assert tag.returncode == 0 and f'Good "git" signature for {BOB}' in tag.stderr
    assert git(repo, "rev-parse", f"evotree/promoted/{v1}^{{commit}}") == candidate
    verified = Cli(repo).json("verify")
    validate(verified, "verify")
    assert verified["ok"] and verified["champion"] == v1
    assert [p["version"] for p in verified["promotions"]] == [v1] and verified["checked"][
        "tags"
    ] == 1
    # the champion's own score is now judged only on runs since its promotion
    from evotree.diagnostics.compare import NoScores, version_scores

    with pytest.raises(NoScores, match="winner's curse"):
        version_scores(ws, v1)

    # tampering after the fact: an unsigned tag in place of the signed one
    signed_tag = git(repo, "rev-parse", f"refs/tags/evotree/promoted/{v1}")
    git(repo, "tag", "-f", f"evotree/promoted/{v1}", candidate)
    report = Cli(repo).json("verify", code=33)
    assert (
        report["problems"][0]["kind"] == "promotion"
        and "not signed" in report["problems"][0]["message"]
    )
    git(repo, "update-ref", f"refs/tags/evotree/promoted/{v1}", signed_tag)
    assert Cli(repo).json("verify")["ok"]
    # ... and an edited dossier: the ledger commit rewritten with a better-looking delta
    head = git(repo, "rev-parse", "refs/evotree/ledger")
    message = git(repo, "log", "-1", "--format=%B", head)
    subject, body = message.split("\n\n", 1)
    data = json.loads(body.strip().splitlines()[-1])
    data["data"]["dossier"]["comparison"]["delta"] = 0.99
    forged_message = f"{subject}\n\n{json.dumps(data, sort_keys=True, separators=(',', ':'))}\n"
    forged = subprocess.run(
        ["git", "commit-tree", f"{head}^{{tree}}", "-p", f"{head}^", "-F", "-"],
        cwd=repo,
        input=forged_message,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    git(repo, "update-ref", "refs/evotree/ledger", forged)
    report = Cli(repo).json("verify", code=33)
    assert any("evidence hash differs" in p["message"] for p in report["problems"])
    git(repo, "update-ref", "refs/evotree/ledger", head)


def test_reflogs_reveal_a_champion_moved_and_moved_back(gws: Path, keys: dict[str, Any]) -> None:
    git(gws, "config", "core.logAllRefUpdates", "always")
    v1 = new_version(gws)
    champion = git(gws, "rev-parse", "refs/evotree/champion")
    # the agent points the champion at its version for a while, then restores it
    git(gws, "update-ref", "refs/evotree/champion", git(gws, "rev-parse", f"evotree/{v1}"))
    git(gws, "update-ref", "refs/evotree/champion", champion)
    # ... and rewrites the ledger's last event away
    head = git(gws, "rev-parse", "refs/evotree/ledger")
    git(gws, "update-ref", "refs/evotree/ledger", git(gws, "rev-parse", f"{head}^"))
    report = Cli(gws).json("verify", code=33)
    kinds = [p["kind"] for p in report["problems"]]
    assert "champion_reflog" in kinds and "ledger_rewritten" in kinds, report
    assert report["champion"] == "v0" and report["checked"]["reflog_entries"] >= 3
    # a champion moved only through its signed chain leaves a clean reflog (fresh workspace)
    other = gate_repo(gws.parent / "clean", keys)
    git(other, "config", "core.logAllRefUpdates", "always")
    new_version(other)
    assert Cli(other).json("verify")["ok"]


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"statement": "approve"},
        {"statement": {}, "signature": None, "dossier": None},
        {
            "statement": {
                "commit": None,
                "previous_commit": 7,
                "approver": ["x"],
                "created_by": {"a": 1},
            },
            "signature": 3,
            "dossier": [],
        },
        {
            "statement": {"type": "evotree.promotion", "commit": "0" * 40, "approver": BOB},
            "signature": "-----BEGIN SSH SIGNATURE-----",
        },
    ],
)
def test_verify_reports_malformed_promotions_without_crashing(
    gws: Path, data: dict[str, Any]
) -> None:
    v1 = new_version(gws)
    ws = Workspace.open(gws)
    ws.ledger.transact(
        lambda txn: Event(kind="promotion", version=v1, actor="x", data=data),
        actor=ws.git.identity(),
    )
    report = Cli(gws).json("verify", code=33)
    assert [p["kind"] for p in report["problems"]] == ["promotion"] and report["champion"] == "v0"


def test_repository_config_cannot_swap_the_signature_program(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    """An agent can write .git/config; gpg.ssh.program there must not fake a verification or see the key."""
    from evotree.gates.signing import sign_tag, verify_tag

    repo = make_repo(tmp_path / "r")
    marker = tmp_path / "ran"
    fake = tmp_path / "fake-ssh-keygen"
    fake.write_text(
        f"#!/bin/sh\ntouch {marker}\necho 'Good \"git\" signature for {BOB} with ED25519 key SHA256:x' >&2\n"
        "exit 0\n"
    )
    fake.chmod(0o755)
    git(repo, "config", "gpg.ssh.program", str(fake))
    git(repo, "config", "core.fsmonitor", str(fake))
    sign_tag(repo, "evotree/promoted/v1", "HEAD", "forged", keys["mallory"][0])
    check = verify_tag(repo, "evotree/promoted/v1", f"{BOB} {keys['bob'][1]}\n")
    assert check.signed and not check.valid and check.principal is None
    assert not marker.exists()


def test_budget_gate_names_the_budget_overspent(
    tmp_path: Path, keys: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version that really overspent (sealed spend charged to it past ``max_usd``) fails the
    budget gate, which names the budget; the version record's cached usage plays no part."""
    from evotree.harness.money import record_spend

    monkeypatch.setitem(globals(), "CONFIG", CONFIG + "max_usd = 1.0\n")
    repo = gate_repo(tmp_path / "w", keys)
    v1 = new_version(repo)
    ws = Workspace.open(repo)
    record_spend(ws, 0.75, "api: first session", version=v1)
    report = Cli(repo).json("gates", v1)
    budget = next(g for g in report["gates"] if g["name"] == "budget")
    assert budget["status"] == "pass", budget
    record_spend(ws, 0.5, "api: second session", version=v1)
    report = Cli(repo).json("gates", v1)
    budget = next(g for g in report["gates"] if g["name"] == "budget")
    assert budget["status"] == "fail" and "budget.max_usd: 1.25 used of 1" in budget["summary"]
    assert budget["fix"]


def test_passphrase_protected_key_asks_the_person_at_the_terminal(tmp_path: Path) -> None:
    keys = {w: make_key(tmp_path / "k", w) for w in ("bob", "ada")}
    subprocess.run(
        ["ssh-keygen", "-q", "-p", "-P", "", "-N", "secret", "-f", str(keys["bob"][0])], check=True
    )
    repo = gate_repo(tmp_path / "w", keys)
    v1 = new_version(repo)
    child = spawn(repo, "promote", v1, "--key", str(keys["bob"][0]))
    answer_challenge(child, v1)
    child.expect(r"decision \[revise/abort\]: ")
    child.sendline("abort")
    child.expect("reason: ")
    child.sendline("not worth a run")
    child.expect("passphrase")  # ssh-keygen asks the terminal, not evotree
    child.sendline("secret")
    code, out = finish(child)
    assert code == 0 and "recorded abort for v1" in out
    assert Cli(repo).json("verify")["checked"]["decisions"] == 1


def test_a_policy_change_needs_the_persons_explicit_acceptance(
    gws: Path, keys: dict[str, Any]
) -> None:
    from evotree.gates.evaluation import acknowledge_protected, evaluate_gates

    carol = make_key(gws.parent / "k", "carol")
    signers = (gws / "gates" / "allowed_signers").read_text() + f"carol@example.com {carol[1]}\n"
    v1 = new_version(gws, files={"gates/allowed_signers": signers})
    before = state(gws)
    child = spawn(gws, "promote", v1, "--key", str(keys["bob"][0]), "--allow-policy-change")
    child.expect("changes these protected paths \\(all of them\\):\\s+gates/allowed_signers")
    child.expect("type 'change policy' to accept them: ")
    child.sendline("yes")
    code, out = finish(child)
    assert code == 31 and "was not accepted" in out
    assert state(gws) == before
    ws = Workspace.open(gws)
    report = evaluate_gates(ws, v1, run_audit=False)
    assert not next(g for g in report.gates if g.name == "protected").passed
    assert acknowledge_protected(report, BOB) == ["gates/allowed_signers"]
    gate = next(g for g in report.gates if g.name == "protected")
    assert gate.passed and gate.numbers["acknowledged_by"] == BOB  # in the signed dossier
    assert report.to_dict()["gates"][3]["numbers"]["acknowledged_by"] == BOB


def test_a_run_under_a_moved_champion_is_refused_and_a_recorded_one_is_reported(
    gws: Path, keys: dict[str, Any]
) -> None:
    """Move the champion ref to a commit of one's own (its own policy: no train gate): the run is
    refused before anything is planned (the trust root). A run.started that names a foreign judge
    commit all the same (written by hand, the ref moved back and its reflog deleted) is reported."""
    v1 = new_version(gws)
    original = git(gws, "rev-parse", "refs/evotree/champion")
    moved = git(gws, "rev-parse", f"evotree/{v1}")
    git(gws, "update-ref", "refs/evotree/champion", moved)
    before = len(list(Workspace.open(gws).ledger.entries()))
    proc = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(gws), "run", v1], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 33 and "evotree verify" in proc.stderr, proc.stderr
    assert (
        len(list(Workspace.open(gws).ledger.entries())) == before
    )  # nothing planned, reserved or run
    git(gws, "update-ref", "refs/evotree/champion", original)
    (gws / ".git" / "logs" / "refs" / "evotree" / "champion").unlink()
    ws = Workspace.open(gws)

    def started(txn: LedgerTxn) -> Event:
        return Event(
            kind=EventKind.RUN_STARTED.value,
            version=v1,
            actor=str(ws.git.identity()),
            data={"run_id": "r-forged", "judge_commit": moved},
        )

    ws.ledger.transact(started, actor=ws.git.identity())
    report = Cli(gws).json("verify", code=33)
    off = [p for p in report["problems"] if p["kind"] == "run_off_chain"]
    assert len(off) == 1 and "was moved for it" in off[0]["message"] and off[0]["version"] == v1


def test_approve_run_signs_the_commit_it_showed_and_refuses_a_moved_branch(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    """The commit is shown before the person answers; if the agent commits to the branch during
    the prompt, the approval is refused and nothing is recorded."""
    repo = gate_repo(tmp_path / "t", keys, train_threshold=100)
    v1 = new_version(repo)
    shown = git(repo, "rev-parse", f"evotree/{v1}")
    child = spawn(repo, "approve-run", v1, "--runs", "2", "--key", str(keys["bob"][0]))
    child.expect(f"commit: {shown}")
    answer_challenge(child, v1)
    child.expect(r"approve these runs\? \[yes/no\]: ")
    commit_file(
        repo / ".evotree" / "worktrees" / v1,
        "recipe.toml",
        "skill = 0.99\n",
        "new code during the prompt",
    )
    child.sendline("yes")
    code, out = finish(child)
    assert code == 10 and "moved while it was being approved" in out, out
    assert not [e for e in Workspace.open(repo).ledger.entries() if e.event.kind == "run.approved"]


def test_train_gate_prices_runs_already_started_and_reads_them_from_the_ledger(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    """A costly request split into cheap ones (--seeds 1, again and again) meets the gate on the
    second; deleting the run files does not reset the count (it comes from run.started events)."""
    import shutil

    from test_runs import TRAIN

    from evotree.gates.errors import GateFailed
    from evotree.gates.runs import plan_runs, run_versions

    repo = gate_repo(tmp_path / "t", keys, train_threshold=100, train=TRAIN, judge=SEEDED_JUDGE)
    v1 = new_version(repo)
    (first,) = run_versions(Workspace.open(repo), [v1], seeds=1)  # 60 s <= 100 s
    assert first.status == "succeeded", first.error
    with pytest.raises(GateFailed, match=r"1 already started \+ 1"):
        plan_runs(Workspace.open(repo), [v1], seeds=1, seed_start=1)  # 120 s > 100 s
    shutil.rmtree(repo / ".evotree" / "runs")
    with pytest.raises(GateFailed, match="no valid signed approval"):
        plan_runs(Workspace.open(repo), [v1], seeds=1, seed_start=1)


def test_paths_shown_for_a_policy_change_cannot_hide_others() -> None:
    """A file name with ANSI codes or a carriage return is printed escaped, so it cannot conceal
    `gates/allowed_signers` on the line the person reads before typing 'change policy'."""
    from evotree.cli.gates import _shown

    assert _shown("gates/0\x1b[8m") == "gates/0\\x1b[8m" and _shown("a\rgates/x") == "a\\rgates/x"
    assert _shown("gates/allowed_signers") == "gates/allowed_signers" and _shown("é.txt") == "é.txt"


def test_moving_the_champion_ref_does_not_switch_the_train_gate_off(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    """The train gate's threshold comes from the signed champion: pointing refs/evotree/champion at
    a commit whose evotree.toml has no train gate refuses the run instead of opening it."""
    from test_runs import TRAIN

    from evotree.gates.errors import TamperingFound
    from evotree.gates.runs import plan_runs

    repo = gate_repo(tmp_path / "t", keys, train_threshold=100, train=TRAIN, judge=SEEDED_JUDGE)
    v1 = new_version(repo)
    wt = repo / ".evotree" / "worktrees" / v1
    text = (
        (wt / "evotree.toml")
        .read_text()
        .replace("train_approval_above_seconds = 100", "train_approval_above_seconds = 0")
    )
    assert "train_approval_above_seconds = 0" in text
    commit_file(wt, "evotree.toml", text, "no train gate")
    original = git(repo, "rev-parse", "refs/evotree/champion")
    git(repo, "update-ref", "refs/evotree/champion", git(repo, "rev-parse", f"evotree/{v1}"))
    with pytest.raises(TamperingFound, match="not to the signed champion"):
        plan_runs(Workspace.open(repo), [v1], seeds=3)
    git(repo, "update-ref", "refs/evotree/champion", original)
    assert len(plan_runs(Workspace.open(repo), [v1], seeds=1)) == 1  # back to normal: 60 s <= 100 s
