"""`evotree init --signer` and solo mode: one person can promote from v0 on.

The key goes into v0's gates/allowed_signers (committed: the policy is the champion's tree).
"Approver != creator" is per principal: the person may approve a version an agent created
(`evotree serve --as bot` / `evotree agent --as bot`), never one they created themselves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Cli, git, make_repo
from fixtures_ws import make_key
from evotree.core.workspace import Workspace


def test_init_signer_writes_v0s_allowed_signers_and_solo_mode_holds(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    key, _ = make_key(tmp_path, "key-ada", comment="ada@example.com")
    result = Cli(repo).json("init", "--signer", f"{key}.pub")
    assert "gates/allowed_signers" in result["files"]
    line = git(repo, "show", "evotree/v0:gates/allowed_signers").splitlines()[-1]
    assert (
        line.startswith("ada@example.com ssh-ed25519 ")
        and line.split()[2] in Path(f"{key}.pub").read_text()
    )
    from evotree.gates.signoff import approver_for
    from evotree.gates.verify import trusted_policy
    from evotree.server.verbs import Principal, Verbs

    ws = Workspace.open(repo)
    policy = trusted_policy(ws)
    # a version an agent created: the person may approve it
    made = Verbs(repo, Principal.parse("bot <bot@example.com>")).branch("the agent's idea")
    assert approver_for(policy, key, made["created_by"]).principal == "ada@example.com"
    # a version the person created (the CLI, their git identity): nobody approves their own
    own = Cli(repo).json("branch", "-m", "my own idea")
    from evotree.gates.errors import SignoffRefused

    with pytest.raises(SignoffRefused, match="created"):
        approver_for(policy, key, own["created_by"])


def test_bad_signers_write_nothing(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    key, _ = make_key(tmp_path, "key-no-address", comment="no-address")
    head = git(repo, "rev-parse", "HEAD")
    out = Cli(repo).json("init", "--signer", f"{key}.pub", code=6)
    assert (
        "not an email address" in out["error"]["message"]
        and "you@example.org=" in out["error"]["fix"]
    )
    out = Cli(repo).json("init", "--signer", str(key), code=6)  # the private key, not the .pub
    assert "not one SSH public key" in out["error"]["message"]
    assert git(repo, "rev-parse", "HEAD") == head and not (repo / "gates").exists()
    assert not (repo / "evotree.toml").exists()
    # EMAIL= names the person when the comment does not
    ok = Cli(repo).json("init", "--signer", f"solo@example.org={key}.pub")
    assert "gates/allowed_signers" in ok["files"]
    assert "solo@example.org ssh-ed25519" in (repo / "gates" / "allowed_signers").read_text()
