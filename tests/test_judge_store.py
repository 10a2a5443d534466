"""The judge store (refs/evotree/judge): hidden data in no checkout, materialised only for the judge.

Real git repositories, real runs (the custom judge of ``test_runs``), real SSH keys and the real
CLI under a pty for the signed promotion.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pygit2
import pytest
from conftest import EVOTREE_BIN, Cli, git, validate
from fixtures_ws import child_env, finish, spawn
from test_analyzers_signoff import signed_run_repo
from test_runs import make_run_repo

from evotree.core.errors import EvotreeError
from evotree.core.ledger import Event, LedgerTxn
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, judge_path_problem, write_judge_commit
from evotree.gates.runs import run_versions
from evotree.harness.judge_store import (
    JudgeStoreError,
    judge_files,
    judge_in_force,
    materialise_judge,
    provide_judge_tree,
    read_directory,
)

HIDDEN = {
    "validation": [f"val-{i}" for i in range(10)],
    "heldout": [f"SECRET-held-{i}" for i in range(4)],
}


@pytest.fixture
def rws(tmp_path: Path) -> Workspace:
    """``test_runs.make_run_repo``: judge/eval.py and judge/hidden.json committed, then init."""
    return Workspace.open(make_run_repo(tmp_path / "w"))


def eval_tasks(ws: Workspace, record: Any) -> list[str]:
    import duckdb

    path = ws.root / ".evotree" / "runs" / record.run_id / "evals.parquet"
    return sorted(
        r[0]
        for r in duckdb.connect()
        .execute("SELECT task_id FROM read_parquet(?)", [str(path)])
        .fetchall()
    )


def problem_kinds(ws: Workspace) -> set[str]:
    from evotree.gates.verify import verify_workspace

    return {p.kind for p in verify_workspace(ws, check_tags=False).problems}


def forged_judge(ws: Workspace, hidden: dict[str, list[str]]) -> str:
    """A judge commit nobody signed (what someone with write access could make)."""
    files = {
        "judge/eval.py": (
            git(ws.root, "show", "refs/evotree/judge:judge/eval.py").encode() + b"\n",
            pygit2.GIT_FILEMODE_BLOB,
        ),
        "judge/hidden.json": (json.dumps(hidden).encode(), pygit2.GIT_FILEMODE_BLOB),
    }
    return str(
        write_judge_commit(
            ws.git, files, parent=None, message="forged\n", identity=ws.git.identity()
        )
    )


# ---------------------------------------------------------------------------- in no checkout; runs judge with it
def test_hidden_data_is_in_no_checkout_and_the_judge_still_scores(rws: Workspace) -> None:
    repo = rws.root
    store = git(repo, "rev-parse", "refs/evotree/judge")
    assert judge_in_force(rws) == store
    assert not (repo / "judge").exists()
    assert not [
        p
        for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
        if p.startswith("judge/")
    ]
    assert git(repo, "ls-tree", "-r", "--name-only", store).splitlines() == [
        "judge/eval.py",
        "judge/hidden.json",
    ]
    v1 = create_version(rws, hypothesis="a candidate")
    assert not (
        repo / v1.worktree / "judge"
    ).exists()  # a candidate's worktree holds no hidden data
    assert not git(repo, "grep", "-l", "SECRET-held", "HEAD", check=False)  # nor its branch tip
    (record,) = run_versions(rws, ["v0"], heldout=True)
    assert record.status == "succeeded", record.error
    assert record.headline["value"] == pytest.approx(0.5)  # the same score as with judge/ committed
    assert eval_tasks(rws, record) == sorted(HIDDEN["validation"] + HIDDEN["heldout"])
    assert record.judge_data_commit == store  # provenance: the exact hidden data
    saved = json.loads((repo / ".evotree" / "runs" / record.run_id / "run.json").read_text())
    assert saved["judge_data_commit"] == store
    validate(saved, "run")
    started = next(e for e in rws.ledger.entries() if e.event.kind == "run.started")
    assert started.event.data["judge_data_commit"] == store
    assert problem_kinds(rws) == set()


def test_the_judge_tree_is_the_champion_without_its_judge_paths_plus_the_store(
    rws: Workspace, tmp_path: Path
) -> None:
    repo = rws.git.repo
    champion = git(rws.root, "rev-parse", "refs/evotree/champion")
    # a judge copy still committed in the champion (e.g. before a migration's removal is promoted) never
    # shadows the store: the champion's judge paths are left out, the store is overlaid
    stale = create_version(rws, hypothesis="stale judge copy")
    wt = rws.root / stale.worktree
    (wt / "judge").mkdir()
    (wt / "judge" / "hidden.json").write_text('{"validation": ["STALE"]}')
    (wt / "judge" / "extra.txt").write_text("stale\n")
    git(wt, "add", "-A")
    git(wt, "commit", "-qm", "stale judge copy")
    tip = git(wt, "rev-parse", "HEAD")
    target = tmp_path / "judge-dir"
    provide_judge_tree(repo, tip, judge_in_force(rws), ["judge/"], target)
    assert sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file()) == [
        "evotree.toml",
        "judge/eval.py",
        "judge/hidden.json",
        "recipe.toml",
        "train.py",
    ]
    assert json.loads((target / "judge" / "hidden.json").read_text()) == HIDDEN
    # without a store (a workspace from before it): the champion's whole tree, as before
    legacy = tmp_path / "legacy"
    provide_judge_tree(repo, tip, None, ["judge/"], legacy)
    assert (legacy / "judge" / "extra.txt").exists()
    assert champion  # (the champion ref itself is untouched)


# ---------------------------------------------------------------------------- hardening
def test_unsafe_paths_symlinks_and_directories_are_refused(rws: Workspace, tmp_path: Path) -> None:
    for bad in ("../x", "/etc/passwd", ".git/config", "judge/.GIT/x", "a//b", "./a", ""):
        assert judge_path_problem(bad), bad
    assert judge_path_problem("judge/gym.toml") is None
    with pytest.raises(EvotreeError, match="cannot be a judge file"):
        write_judge_commit(
            rws.git,
            {"../escape": (b"x", pygit2.GIT_FILEMODE_BLOB)},
            parent=None,
            message="m",
            identity=rws.git.identity(),
        )
    # a judge commit holding a symlink (written by hand) is refused before anything is written
    repo = rws.git.repo
    inner = repo.TreeBuilder()
    inner.insert("hidden.json", repo.create_blob(b"{}"), pygit2.GIT_FILEMODE_BLOB)
    inner.insert("peek", repo.create_blob(b"/etc/passwd"), pygit2.GIT_FILEMODE_LINK)
    outer = repo.TreeBuilder()
    outer.insert("judge", inner.write(), pygit2.GIT_FILEMODE_TREE)
    sig = rws.git.identity().signature()
    linked = repo.create_commit(None, sig, sig, "symlink", outer.write(), [])
    with pytest.raises(JudgeStoreError, match="symlink or submodule"):
        materialise_judge(repo, linked, tmp_path / "out")
    assert not (tmp_path / "out" / "judge").exists()
    # materialising never follows a symlink already in the target
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    os.symlink(outside, target / "judge")
    with pytest.raises(JudgeStoreError, match="symlink"):
        materialise_judge(repo, judge_in_force(rws), target)
    assert list(outside.iterdir()) == []
    # a directory to promote: regular files under the judge paths only
    src = tmp_path / "src"
    (src / "judge").mkdir(parents=True)
    (src / "judge" / "hidden.json").write_text("{}")
    assert set(read_directory(src, judge_paths=["judge/"])) == {"judge/hidden.json"}
    os.symlink("/etc/passwd", src / "judge" / "peek")
    with pytest.raises(JudgeStoreError, match="symlink"):
        read_directory(src, judge_paths=["judge/"])
    (src / "judge" / "peek").unlink()
    (src / "notes.txt").write_text("x")
    with pytest.raises(JudgeStoreError, match="not under \\[eval\\].judge_paths"):
        read_directory(src, judge_paths=["judge/"])
    (src / "notes.txt").unlink()
    (src / "judge" / ".git").mkdir()
    with pytest.raises(JudgeStoreError, match=".git"):
        read_directory(src, judge_paths=["judge/"])


# ---------------------------------------------------------------------------- the judge in force is the signed one
def test_a_hand_moved_judge_ref_is_reported_and_not_followed(rws: Workspace) -> None:
    from evotree.gates.judges import judge_status
    from evotree.gates.verify import trusted_policy

    signed = judge_in_force(rws)
    forged = forged_judge(rws, {"validation": ["forged-0", "forged-1"]})
    git(rws.root, "update-ref", "refs/evotree/judge", forged)
    (record,) = run_versions(rws, ["v0"])
    assert record.status == "succeeded" and record.judge_data_commit == signed
    assert eval_tasks(rws, record) == sorted(
        HIDDEN["validation"]
    )  # the signed judge's data, not the ref's
    assert {"judge_ref", "judge_reflog"} <= problem_kinds(rws)
    proc = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(rws.root), "verify", "--json"],
        capture_output=True,
        text=True,
        check=False,
        env=child_env(),
    )
    assert proc.returncode == 33 and "refs/evotree/judge points to" in proc.stdout
    status = judge_status(rws)
    assert status.commit == signed and status.ref == forged and not status.signed
    trusted_policy(
        rws
    )  # a moved judge ref is not followed, so it does not block the champion's policy
    # moving it back leaves the reflog entry: still reported
    git(rws.root, "update-ref", "refs/evotree/judge", signed)
    assert problem_kinds(rws) == {"judge_reflog"}


def test_a_forged_ledger_judge_is_reported_and_blocks_sign_offs(rws: Workspace) -> None:
    from evotree.gates.errors import TamperingFound
    from evotree.gates.judges import trusted_judge
    from evotree.gates.verify import trusted_policy
    from evotree.gates.verify_base import JUDGE_EVENT

    signed = judge_in_force(rws)
    forged = forged_judge(rws, {"validation": ["forged-0"]})

    def change(txn: LedgerTxn) -> Event:  # an unsigned "promotion" written straight into the ledger
        txn.meta["judge"] = {"commit": forged}
        return Event(
            kind=JUDGE_EVENT,
            version=None,
            actor="mallory",
            data={"commit": forged, "previous_commit": signed},
        )

    rws.ledger.transact(change, actor=rws.git.identity())
    git(rws.root, "update-ref", "refs/evotree/judge", forged)
    assert {"judge_promotion", "ledger_judge"} <= problem_kinds(rws)
    assert trusted_judge(rws).commit == signed and not trusted_judge(rws).trusted
    with pytest.raises(TamperingFound):
        trusted_policy(rws)
    # runs follow the ledger's judge commit: the train gate refuses them while it is not signed
    from evotree.gates.runs import plan_runs

    with pytest.raises(TamperingFound, match="judge data the ledger names is not signed"):
        plan_runs(rws, ["v0"])


# ---------------------------------------------------------------------------- the CLI
def test_judge_show_lists_hashes_and_prints_contents_only_to_a_terminal(rws: Workspace) -> None:
    cli = Cli(rws.root)
    listing = cli.json("judge", "show")
    validate(listing, "judge-show")
    assert [f["path"] for f in listing["files"]] == ["judge/eval.py", "judge/hidden.json"]
    assert listing["signed"] and listing["commit"] == judge_in_force(rws) and not listing["legacy"]
    assert "val-0" not in json.dumps(listing)  # names and hashes, never contents
    text = cli("judge", "show").output
    assert "judge/hidden.json" in text and "val-0" not in text
    refused = cli("judge", "show", "judge/hidden.json", code=31)  # stdout is not a terminal here
    assert "stdout is not a terminal" in refused.output and "val-0" not in refused.output
    error = cli.json("judge", "show", "judge/hidden.json", code=1)
    validate(error, "error")
    assert "never carries" in error["error"]["message"]
    assert json.loads(cli("judge", "show", "judge/hidden.json", "--force").output) == HIDDEN
    cli("judge", "show", "judge/nope.json", "--force", code=10)


def test_judge_export_refuses_the_repository_and_writes_outside(
    rws: Workspace, tmp_path: Path
) -> None:
    cli = Cli(rws.root)
    for inside in (rws.root / "judge-copy", rws.root / ".evotree" / "x", rws.root):
        out = cli("judge", "export", str(inside), "--force", code=10).output
        assert "inside the repository" in out
    assert not (rws.root / "judge-copy").exists() and not (rws.root / ".evotree" / "x").exists()
    cli("judge", "export", str(tmp_path / "copy"), code=31)  # not a terminal, no --force
    result = cli.json("judge", "export", str(tmp_path / "copy"), "--force")
    validate(result, "judge-export")
    assert json.loads((tmp_path / "copy" / "judge" / "hidden.json").read_text()) == HIDDEN
    assert result["commit"] == judge_in_force(rws)
    cli("judge", "export", str(tmp_path / "copy"), "--force", code=10)  # not empty any more


# ---------------------------------------------------------------------------- changing the judge: signed
def test_a_signed_judge_promotion_changes_what_judges_runs(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    repo = signed_run_repo(tmp_path / "w", keys)
    ws = Workspace.open(repo)
    before = judge_in_force(ws)
    edit = tmp_path / "edit"
    Cli(repo)("judge", "export", str(edit), "--force")
    (edit / "judge" / "hidden.json").write_text(
        json.dumps({"validation": [f"new-{i}" for i in range(4)]})
    )
    # the change is proposed first (by Ada, the git identity of this checkout): recorded, nothing in force
    proposal = Cli(repo).json("judge", "propose", str(edit))
    validate(proposal, "judge-propose")
    assert (
        proposal["proposed_by"] == "Ada Tester <ada@example.com>"
        and proposal["previous_commit"] == before
    )
    assert judge_in_force(ws) == before
    # no terminal: refused, nothing recorded
    proc = subprocess.run(
        [
            str(EVOTREE_BIN),
            "-C",
            str(repo),
            "judge",
            "promote",
            str(edit),
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
    assert judge_in_force(ws) == before
    # a directory inside the repository is refused even at a terminal
    code, out = finish(
        spawn(repo, "judge", "promote", str(repo / "judge-edit"), "--key", str(keys["bob"][0]))
    )
    assert code == 10 and "inside the repository" in out
    # the person at the terminal: sees the diff, types the commit and the code, says yes
    child = spawn(repo, "judge", "promote", str(edit), "--key", str(keys["bob"][0]), "--json")
    child.expect(r"CHANGED +judge/hidden.json")
    child.expect(
        r"first 7 characters \(([0-9a-f]{7})\) and the one-time code \S*?([A-Z2-9]{4}-[A-Z2-9]{4})"
    )
    short, code_shown = child.match.group(1), child.match.group(2)
    child.expect("judge commit: ")
    child.sendline(short)
    child.expect("one-time code: ")
    child.sendline(code_shown)
    child.expect(r"put this judge in force\? \[yes/no\]: ")
    child.sendline("yes")
    code, out = finish(child)
    assert code == 0, out
    result = json.loads(out[out.index('{"') :])
    validate(result, "judge-promote")
    assert result["previous_commit"] == before and result["commit"].startswith(short)
    assert (
        result["proposed_by"] == "Ada Tester <ada@example.com>"
        and result["approver"] == "bob@example.com"
    )
    assert [r["status"] for r in result["diff"]["files"]] == ["unchanged", "changed"]
    ws = Workspace.open(repo)
    assert judge_in_force(ws) == result["commit"] == git(repo, "rev-parse", "refs/evotree/judge")
    from evotree.gates.verify import verify_workspace

    report = verify_workspace(ws, check_tags=False)
    assert report.ok, report.problems
    assert report.judge == {"commit": result["commit"]}
    assert [p["kind"] for p in report.judge_promotions] == ["promotion"]
    assert report.judge_promotions[0]["approver"] == "bob@example.com"
    (record,) = run_versions(ws, ["v0"])
    assert record.judge_data_commit == result["commit"]
    assert eval_tasks(ws, record) == [f"new-{i}" for i in range(4)]
    # the same files again: nothing to promote
    code, out = finish(spawn(repo, "judge", "promote", str(edit), "--key", str(keys["bob"][0])))
    assert code == 10 and "nothing to promote" in out


# ---------------------------------------------------------------------------- a workspace from before the store
def test_migrate_moves_the_champions_judge_into_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evotree.core.workspace as workspace

    # a workspace made before the store: judge/ committed in the champion's tree, no judge in the ledger
    with monkeypatch.context() as patch:
        patch.setattr(workspace, "_collect_judge_files", lambda *_: workspace._JudgeFiles())
        repo = make_run_repo(tmp_path / "w")
    ws = Workspace.open(repo)
    assert judge_in_force(ws) is None and (repo / "judge" / "hidden.json").exists()
    assert Cli(repo).json("judge", "show")["legacy"]
    (legacy,) = run_versions(ws, ["v0"])
    assert legacy.judge_data_commit is None and legacy.headline["value"] == pytest.approx(0.5)

    result = Cli(repo).json("judge", "migrate")
    validate(result, "judge-migrate")
    ws = Workspace.open(repo)
    assert judge_in_force(ws) == result["commit"] == git(repo, "rev-parse", "refs/evotree/judge")
    assert [f["path"] for f in result["files"]] == ["judge/eval.py", "judge/hidden.json"]
    assert [f.path for f in judge_files(ws.git.repo, result["commit"])] == [
        "judge/eval.py",
        "judge/hidden.json",
    ]
    event = next(e.event for e in ws.ledger.entries() if e.event.kind == "judge.migrated")
    assert event.data["champion_commit"] == git(repo, "rev-parse", "refs/evotree/champion")
    # the new version removes the judge paths from the tree; promoting it is the owner's signed step
    assert result["version"] == "v1" and not (repo / result["worktree"] / "judge").exists()
    assert not [
        p
        for p in git(repo, "ls-tree", "-r", "--name-only", "evotree/v1").splitlines()
        if p.startswith("judge/")
    ]
    assert any("--allow-policy-change" in step for step in result["next_steps"])
    assert problem_kinds(ws) == set()
    (record,) = run_versions(ws, ["v0"])  # judged with the store already
    assert record.judge_data_commit == result["commit"] and record.headline[
        "value"
    ] == pytest.approx(0.5)
    # once the ledger has a judge, a change is a signed promotion
    again = Cli(repo).json("judge", "migrate", code=10)
    assert "already has a judge" in again["error"]["message"]


def test_a_migration_that_is_not_the_champions_judge_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evotree.core.workspace as workspace
    from evotree.gates.verify_base import JUDGE_MIGRATED_EVENT

    with monkeypatch.context() as patch:
        patch.setattr(workspace, "_collect_judge_files", lambda *_: workspace._JudgeFiles())
        repo = make_run_repo(tmp_path / "w")
    ws = Workspace.open(repo)
    forged = str(
        write_judge_commit(
            ws.git,
            {"judge/hidden.json": (b'{"validation": ["x"]}', pygit2.GIT_FILEMODE_BLOB)},
            parent=None,
            message="forged\n",
            identity=ws.git.identity(),
        )
    )
    champion = git(repo, "rev-parse", "refs/evotree/champion")

    def change(txn: LedgerTxn) -> Event:
        txn.meta["judge"] = {"commit": forged}
        return Event(
            kind=JUDGE_MIGRATED_EVENT,
            version=None,
            actor="mallory",
            data={"commit": forged, "champion": "v0", "champion_commit": champion, "files": []},
        )

    ws.ledger.transact(change, actor=ws.git.identity())
    git(repo, "update-ref", "refs/evotree/judge", forged)
    from evotree.gates.verify import verify_workspace

    report = verify_workspace(ws, check_tags=False)
    messages = [p.message for p in report.problems if p.kind == "judge_promotion"]
    assert messages and "not those of the champion's judge paths" in messages[0]
    assert report.judge == {"commit": None}


# ---------------------------------------------------------------------------- who proposed a judge change
def _edited(repo: Path, tmp_path: Path, name: str) -> Path:
    edit = tmp_path / name
    Cli(repo)("judge", "export", str(edit), "--force")
    (edit / "judge" / "hidden.json").write_text(
        json.dumps({"validation": [f"{name}-{i}" for i in range(4)]})
    )
    return edit


def test_a_judge_change_nobody_proposed_is_refused(tmp_path: Path, keys: dict[str, Any]) -> None:
    """Before: `judge promote DIR` had no proposer (approver_for(..., None)): whoever staged it could sign it."""
    repo = signed_run_repo(tmp_path / "w", keys)
    ws = Workspace.open(repo)
    before = judge_in_force(ws)
    edit = _edited(repo, tmp_path, "unproposed")
    code, out = finish(spawn(repo, "judge", "promote", str(edit), "--key", str(keys["bob"][0])))
    assert code == 10 and "nobody proposed" in out and "evotree judge propose" in out
    assert judge_in_force(Workspace.open(repo)) == before
    # a proposal of other files does not cover these
    other = _edited(repo, tmp_path, "other")
    Cli(repo)("judge", "propose", str(other))
    code, out = finish(spawn(repo, "judge", "promote", str(edit), "--key", str(keys["bob"][0])))
    assert code == 10 and "nobody proposed" in out


def test_the_proposer_of_a_judge_change_cannot_approve_it(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    repo = signed_run_repo(tmp_path / "w", keys)
    ws = Workspace.open(repo)
    before = judge_in_force(ws)
    edit = _edited(repo, tmp_path, "mine")
    proposal = Cli(repo).json(
        "judge", "propose", str(edit)
    )  # proposed by Ada (this checkout's git identity)
    assert proposal["proposed_by"].endswith("<ada@example.com>")
    kinds = [e.event.kind for e in Workspace.open(repo).ledger.entries()]
    assert kinds[0] == "judge.proposed"
    # Ada, an allowed signer, tries to sign her own proposal: refused before anything is shown or signed
    code, out = finish(spawn(repo, "judge", "promote", str(edit), "--key", str(keys["ada"][0])))
    assert code == 31 and "ada@example.com" in out and "cannot approve itself" in out
    assert judge_in_force(Workspace.open(repo)) == before
    # the library refuses it too, whatever the caller passes as approver
    from evotree.gates.errors import SignoffRefused
    from evotree.gates.judges import plan_judge_promotion, record_judge_promotion
    from evotree.gates.signoff import Approver
    from evotree.gates.verify import trusted_policy

    plan = plan_judge_promotion(ws, edit)
    assert plan.proposed_by == proposal["proposed_by"]
    with pytest.raises(SignoffRefused, match="proposed this judge change"):
        record_judge_promotion(
            ws, trusted_policy(ws), Approver("ada@example.com", keys["ada"][0], "fp"), plan
        )
    assert judge_in_force(Workspace.open(repo)) == before
    # a statement signed by the proposer and written into the ledger by hand is reported by verify
    from evotree.core.refs import JUDGE_REF
    from evotree.gates.statements import new_statement, sign_statement
    from evotree.gates.verify_base import JUDGE_EVENT, JUDGE_PROMOTION_TYPE

    policy = trusted_policy(ws)
    ada = Approver("ada@example.com", keys["ada"][0], "fp")
    statement = new_statement(
        ws,
        JUDGE_PROMOTION_TYPE,
        ada,
        commit=plan.commit,
        previous_commit=plan.previous_commit,
        diff_hash=plan.diff_hash,
        created_by=plan.proposed_by,
        proposal=plan.proposal,
    )
    signature = sign_statement(policy, ada, statement)

    def change(txn: LedgerTxn) -> Event:
        txn.meta["judge"] = {"commit": plan.commit}
        return Event(
            kind=JUDGE_EVENT,
            version=None,
            actor=str(ws.git.identity()),
            at=statement["at"],
            data={
                "commit": plan.commit,
                "previous_commit": plan.previous_commit,
                "statement": statement,
                "signature": signature,
                "diff": plan.diff,
            },
        )

    ws.ledger.transact(change, actor=ws.git.identity())
    git(repo, "update-ref", JUDGE_REF, plan.commit)
    assert "judge_promotion" in problem_kinds(Workspace.open(repo))
