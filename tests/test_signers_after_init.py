"""Signers added after `evotree init` (the quickstart's dead end): once, while there are none, by a
person at a terminal, signed by the new key, checked by `evotree verify`; never again that way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, git, make_repo, validate
from fixtures_ws import CODE_RE, EVOTREE_SPECS, bare_remote, clone_as, finish, make_key, spawn

from evotree.core.ledger import Event, EventKind, LedgerTxn
from evotree.core.workspace import Workspace


def _add(repo: Path, spec: str, key: Path, *, answer: str = "yes") -> tuple[int, str]:
    child = spawn(repo, "signers", "add", spec, "--key", str(key), "--json")
    child.expect(CODE_RE)
    code = child.match.group(1)
    child.expect("signer\\(s\\): ")
    child.sendline(spec.split("=")[0])
    child.expect("one-time code: ")
    child.sendline(code)
    child.expect(r"allow these signers\? \[yes/no\]: ")
    child.sendline(answer)
    return finish(child)


@pytest.fixture
def bare_ws(tmp_path: Path) -> dict[str, Any]:
    repo = make_repo(tmp_path / "ws")
    out = Cli(repo)("init", "--json")
    key, _ = make_key(tmp_path / "keys", "ada")
    return {"repo": repo, "key": key, "init_stderr": out.stderr}


def test_init_without_a_signer_warns_and_says_how(bare_ws: dict[str, Any]) -> None:
    assert "signers add" in bare_ws["init_stderr"] and "no signer" in bare_ws["init_stderr"]


def test_the_first_signer_is_added_once_and_verify_accepts_it(bare_ws: dict[str, Any]) -> None:
    repo, key = bare_ws["repo"], bare_ws["key"]
    before = git(repo, "rev-parse", "refs/evotree/champion")
    refused = _add(repo, f"ada@example.com={key}.pub", key, answer="no")
    assert refused[0] == 31 or "nothing was recorded" in refused[1], refused
    assert git(repo, "rev-parse", "refs/evotree/champion") == before
    code, out = _add(repo, f"ada@example.com={key}.pub", key)
    assert code == 0, out
    result = json.loads(out[out.index('{"') :])
    validate(result, "signers-add")
    assert result["signers"] == ["ada@example.com"] and result["previous_commit"] == before
    champion = git(repo, "rev-parse", "refs/evotree/champion")
    assert champion == result["commit"] and git(repo, "rev-parse", f"{champion}^") == before
    assert git(repo, "diff", "--name-only", before, champion) == "gates/allowed_signers"
    report = Cli(repo).json("verify")
    assert report["ok"], report["problems"]
    from evotree.gates.verify import trusted_policy

    assert trusted_policy(Workspace.open(repo)).principals == ["ada@example.com"]
    # new versions branch from the new champion commit and run under it (the trust root holds)
    made = Cli(repo).json("branch", "-m", "next")
    assert made["base_commit"] == champion
    # never a second time: signers now change only by a reviewed promotion
    child = spawn(repo, "signers", "add", f"ada@example.com={key}.pub", "--key", str(key), "--json")
    code, out = finish(child)
    assert code == 10 and "reviewed promotion" in out, out


def test_a_forged_signers_step_is_reported_and_refused(
    bare_ws: dict[str, Any], tmp_path: Path
) -> None:
    """Someone writes a signers.added event of their own (no valid signature) and moves the champion."""
    repo, key = bare_ws["repo"], bare_ws["key"]
    ws = Workspace.open(repo)
    previous = git(repo, "rev-parse", "refs/evotree/champion")
    (repo / "gates").mkdir(exist_ok=True)
    (repo / "gates" / "allowed_signers").write_text(
        f"mallory@example.com {Path(f'{key}.pub').read_text().split()[0]} "
        f"{Path(f'{key}.pub').read_text().split()[1]}\n"
    )
    git(repo, "add", "gates/allowed_signers")
    git(repo, "commit", "-qm", "me")
    forged = git(repo, "rev-parse", "HEAD")

    def change(txn: LedgerTxn) -> Event:
        return Event(
            kind=EventKind.SIGNERS_ADDED.value,
            version="v0",
            actor="mallory",
            data={
                "commit": forged,
                "previous_commit": previous,
                "statement": {"type": "x"},
                "signature": "",
            },
        )

    ws.ledger.transact(change, actor=ws.git.identity())
    git(repo, "update-ref", "refs/evotree/champion", forged)
    report = json.loads(Cli(repo)("verify", "--json", code=33).stdout)
    assert any(p["kind"] == "signers_added" for p in report["problems"])
    assert Cli(repo).json("run", "v0", code=33)["error"]["code"] == "untrusted_state"


def test_a_fetched_signers_step_counts_only_once_a_person_here_accepts_it(
    bare_ws: dict[str, Any], tmp_path: Path
) -> None:
    """A teammate adds the first signer in their clone and pushes; here it is refused until the
    owner checks the fingerprint and accepts it (the same step a stranger could make)."""
    repo, key = bare_ws["repo"], bare_ws["key"]
    bare = bare_remote(repo, tmp_path / "origin.git")
    specs = EVOTREE_SPECS
    mate = clone_as(bare, tmp_path / "mate", "Mate", "mate@example.com", fetch_evotree=True)
    code, out = _add(mate, f"ada@example.com={key}.pub", key)
    assert code == 0, out
    git(mate, "push", "--quiet", "origin", *specs)
    git(repo, "fetch", "--quiet", "origin", *specs)
    refused = Cli(repo).json("branch", "-m", "x", code=33)["error"]
    assert "not accepted here" in refused["message"] and "signers accept" in refused["fix"]
    ledger = refused["details"]["problems"][0]["ledger_commit"]
    child = spawn(repo, "signers", "accept", ledger[:10], "--json")
    child.expect(CODE_RE)
    code_shown = child.match.group(1)
    child.expect("signer\\(s\\): ")
    child.sendline("ada@example.com")
    child.expect("one-time code: ")
    child.sendline(code_shown)
    child.expect(r"accept these signers here\? \[yes/no\]: ")
    child.sendline("yes")
    code, out = finish(child)
    assert code == 0, out
    assert Cli(repo).json("branch", "-m", "now it counts")["id"]
