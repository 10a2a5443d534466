"""The gate policy in force: ``evotree.toml`` and the allowed signers of the champion's commit.

Both are read as git blobs of a commit that a signed chain of promotions vouches for
(:func:`trusted_policy`), never from a worktree or a candidate's branch: a candidate that edits
its own ``gates/allowed_signers`` or ``[gates]`` changes nothing about how it is judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evotree.core.config import CONFIG_FILE, Config, parse_config
from evotree.gates.signing import AllowedSigner, parse_allowed_signers

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = ["Policy", "blob_at", "policy_at"]


@dataclass
class Policy:
    """The policy of one champion commit."""

    champion: str
    commit: str
    config: Config
    allowed_signers_path: str
    allowed_signers_text: str
    signers: list[AllowedSigner]
    signers_error: str | None = None

    @property
    def principals(self) -> list[str]:
        """Every principal the allowed-signers file names."""
        return sorted({p for s in self.signers for p in s.principals})


def blob_at(ws: Workspace, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` in ``commit``'s tree, or None (a directory counts as absent)."""
    import pygit2

    tree = ws.git.repo[commit].peel(pygit2.Commit).tree
    try:
        entry = tree[path]
    except KeyError:
        return None
    obj = ws.git.repo[entry.id]
    return obj.data if isinstance(obj, pygit2.Blob) else None


def policy_at(ws: Workspace, champion: str, commit: str) -> Policy:
    """The policy stored in ``commit`` (the champion ``champion``'s tree)."""
    text = blob_at(ws, commit, CONFIG_FILE)
    config = (
        parse_config(text.decode("utf-8", errors="replace"), source=f"{CONFIG_FILE} of {champion}")
        if text is not None
        else Config()
    )
    path = config.gates.allowed_signers
    raw = blob_at(ws, commit, path)
    signers: list[AllowedSigner] = []
    error = None
    allowed = raw.decode("utf-8", errors="replace") if raw is not None else ""
    if raw is None:
        error = f"{path} does not exist in the champion's tree ({champion} @ {commit[:10]})"
    else:
        try:
            signers = parse_allowed_signers(allowed, source=f"{path} of {champion}")
        except Exception as exc:  # noqa: BLE001 - a malformed file allows nobody (fail closed)
            error = str(exc)
            signers = []
        if not signers and error is None:
            error = f"{path} of {champion} names no signer"
    return Policy(champion, commit, config, path, allowed if error is None else "", signers, error)
