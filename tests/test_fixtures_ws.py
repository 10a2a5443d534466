"""The shared set-up itself (tests/fixtures_ws.py): keys copied from a session cache behave like
freshly made ones, and the repositories it builds hold what the tests rely on."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import git
from fixtures_ws import EMAILS, bare_remote, make_key, scored_config, scored_project, signers_file

from evotree.core.config import parse_config


def test_a_key_copy_is_private_usable_and_its_own(tmp_path: Path) -> None:
    bob, bob_public = make_key(tmp_path / "a", "bob")
    again, again_public = make_key(tmp_path / "b", "bob")
    _, ada_public = make_key(tmp_path / "a", "ada")
    assert bob_public == again_public != ada_public  # one key per name, another per other name
    assert bob.stat().st_mode & 0o777 == 0o600
    assert Path(f"{bob}.pub").read_text().split()[2] == "bob"
    _, commented = make_key(tmp_path / "c", "key-bob", comment="bob@example.com")
    assert commented != bob_public
    # the copy signs, and a test that changes its copy's passphrase changes nothing elsewhere
    data = tmp_path / "data"
    data.write_text("x")
    subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-n", "file", "-f", str(bob), str(data)], check=True
    )
    assert (tmp_path / "data.sig").is_file()
    subprocess.run(["ssh-keygen", "-q", "-p", "-P", "", "-N", "secret", "-f", str(bob)], check=True)
    fresh, _ = make_key(tmp_path / "d", "bob")
    unlocked = subprocess.run(
        ["ssh-keygen", "-y", "-P", "", "-f", str(fresh)], capture_output=True, text=True
    )
    assert unlocked.returncode == 0 and unlocked.stdout.split()[1] == bob_public.split()[1]


def test_a_scored_project_is_committed_initialised_and_parses(tmp_path: Path, keys: dict) -> None:
    config = scored_config(min_seeds=2, champion_seeds=2, train_approval_above_seconds=5)
    repo = scored_project(
        tmp_path / "w",
        judge="print('judge')\n",
        config=config,
        files={"gates/allowed_signers": signers_file(keys, ("bob",))},
    )
    assert git(repo, "status", "--porcelain") == ""
    committed = git(repo, "rev-parse", ":/recipe, train script, judge and gate policy")
    tracked = set(git(repo, "ls-tree", "-r", "--name-only", committed).split())
    assert {
        "recipe.toml",
        "train.py",
        "judge/eval.py",
        "evotree.toml",
        "gates/allowed_signers",
    } <= tracked
    assert git(repo, "rev-parse", "--verify", "refs/evotree/champion")  # initialised
    gates = parse_config((repo / "evotree.toml").read_text()).gates
    assert (gates.min_seeds, gates.champion_seeds, gates.train_approval_above_seconds) == (2, 2, 5)
    assert (repo / "gates" / "allowed_signers").read_text() == f"{EMAILS['bob']} {keys['bob'][1]}\n"
    bare = bare_remote(repo, tmp_path / "origin.git")
    assert git(bare, "rev-parse", "refs/evotree/champion") == git(
        repo, "rev-parse", "refs/evotree/champion"
    )
