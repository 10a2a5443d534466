"""Signers added after ``evotree init``: the one ceremony that needs no existing signer.

A workspace made without ``--signer`` has no allowed signers, so nobody can sign a promotion —
and the allowed signers change only through a signed promotion. This breaks the circle once:
while the signed champion's policy names **no** signer, a person at a terminal may add the first
ones (``evotree signers add``). The new commit is the champion's commit plus
``gates/allowed_signers`` (nothing else changes), the statement is signed by the new key and
checked against the new file, the ledger records ``signers.added``, and the champion ref (and
the champion's branch, when it is at the champion's commit) move to the new commit by
compare-and-swap. The step is accepted in this workspace's private state (never pushed): a clone
that fetches it must accept it too (``evotree signers accept``), after checking the key with the
person — a stranger can make an equally valid step with their own key. ``evotree verify`` checks each such step (:func:`evotree.gates.verify.check_signers_added`): the policy before it named no signer,
the commit changes only the allowed-signers file, the signature verifies under it. Once a signer
exists, adding or rotating one is a reviewed promotion of a version that edits the file.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import pygit2

from evotree.core.errors import InvalidState
from evotree.core.gitio import RefRaceLost
from evotree.core.events import SignersAdded as SignersAddedPayload
from evotree.core.ledger import Event, EventKind, LedgerTxn
from evotree.core.refs import CHAMPION_REF, branch_ref
from evotree.gates.errors import TamperingFound
from evotree.gates.policy import Policy, policy_at
from evotree.gates.statements import new_statement, sign_statement
from evotree.gates.verify_base import SIGNERS_TYPE
from evotree.gates.signing import canonical, sha256_hex

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace
    from evotree.gates.signoff import Approver

__all__ = [
    "SIGNERS_TYPE",
    "SignersAdded",
    "accept_signers",
    "accepted_state",
    "prepare_signers",
    "record_signers",
    "statement_hash",
    "unaccepted_signers",
]


@dataclass
class SignersAdded:
    """What ``evotree signers add`` prints."""

    champion: str
    previous_commit: str
    commit: str
    signers: list[str]
    approver: str
    ledger_commit: str
    branch_moved: bool
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _with_file(repo: pygit2.Repository, tree: pygit2.Tree, path: str, data: bytes) -> pygit2.Oid:
    """``tree`` with the blob ``data`` at ``path`` (folders created as needed)."""
    head, _, rest = path.partition("/")
    builder = repo.TreeBuilder(tree)
    if not rest:
        builder.insert(head, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
        return builder.write()
    sub = (
        repo[tree[head].id]
        if head in tree and tree[head].type_str == "tree"
        else repo[repo.TreeBuilder().write()]
    )
    builder.insert(head, _with_file(repo, sub, rest, data), pygit2.GIT_FILEMODE_TREE)
    return builder.write()


def prepare_signers(ws: Workspace, policy: Policy, lines: list[str]) -> tuple[str, Policy]:
    """The commit the champion would move to (its commit plus the allowed-signers ``lines``) and its
    policy; refused when the signed champion already names a signer."""
    if policy.signers:
        raise InvalidState(
            f"{policy.allowed_signers_path} of the champion {policy.champion} already names "
            f"{', '.join(policy.principals)}: signers are now added or rotated only by a reviewed promotion",
            fix=f"edit {policy.allowed_signers_path} on a version and promote it (`evotree promote`), "
            "signed by a current signer",
        )
    if not lines:
        raise InvalidState(
            "no signer to add", fix="evotree signers add you@example.org=~/.ssh/id_ed25519.pub"
        )
    repo = ws.git.repo
    previous = repo[policy.commit].peel(pygit2.Commit)
    text = "".join(f"{line}\n" for line in lines)
    tree = _with_file(repo, previous.tree, policy.allowed_signers_path, text.encode())
    identity = ws.git.identity().signature()
    commit = repo.create_commit(
        None,
        identity,
        identity,
        f"evotree signers: allow {', '.join(lines[i].split()[0] for i in range(len(lines)))}\n",
        tree,
        [previous.id],
    )
    return str(commit), policy_at(ws, policy.champion, str(commit))


def record_signers(
    ws: Workspace, policy: Policy, new_policy: Policy, approver: Approver
) -> SignersAdded:
    """Sign (with the new key, checked against the new file), record ``signers.added`` and move the
    champion ref (and branch) from the signed champion's commit to the new one."""
    commit = new_policy.commit
    statement = new_statement(
        ws,
        SIGNERS_TYPE,
        approver,
        version=policy.champion,
        previous_commit=policy.commit,
        commit=commit,
        signers=new_policy.principals,
        signers_hash=sha256_hex(canonical(new_policy.allowed_signers_text)),
    )
    signature = sign_statement(new_policy, approver, statement)

    def change(txn: LedgerTxn) -> Event:
        if txn.meta.get("champion") != policy.champion:
            raise InvalidState(
                f"the champion is now {txn.meta.get('champion')}, not {policy.champion}",
                fix="run the command again",
            )
        added = SignersAddedPayload(
            statement=statement, signature=signature, commit=commit, previous_commit=policy.commit
        )
        return Event.of(
            added, version=policy.champion, actor=str(ws.git.identity()), at=statement["at"]
        )

    entry = ws.ledger.transact(change, actor=ws.git.identity())
    accept_signers(ws, statement)  # made here, by a person at this terminal: accepted here
    repo = ws.git.repo
    try:
        ws.git.cas_ref(
            CHAMPION_REF,
            repo[commit].id,
            repo[policy.commit].id,
            f"evotree signers add (signed by {approver.principal})",
        )
    except RefRaceLost as exc:
        raise TamperingFound(
            f"the signers are recorded, but {CHAMPION_REF} was moved meanwhile ({exc})",
            fix=f"run `evotree verify`; git update-ref {CHAMPION_REF} {commit}",
        ) from exc
    moved = False
    branch = branch_ref(policy.champion)
    if str(ws.git.ref_target(branch)) == policy.commit:
        try:
            ws.git.cas_ref(branch, repo[commit].id, repo[policy.commit].id, "evotree signers add")
            moved = True
        except RefRaceLost:
            moved = False
    return SignersAdded(
        champion=policy.champion,
        previous_commit=policy.commit,
        commit=commit,
        signers=new_policy.principals,
        approver=approver.principal,
        ledger_commit=entry.commit,
        branch_moved=moved,
    )


# ---------------------------------------------------------------------------- local acceptance
def _accepted_path(ws: Workspace) -> Any:
    from evotree.harness.provenance import key_path

    return key_path(ws).parent / "accepted-signers.json"


def statement_hash(statement: Any) -> str:
    """The id of a ``signers.added`` step: sha256 of its canonical statement."""
    return sha256_hex(canonical(statement))


def _accepted(ws: Workspace) -> dict[str, str]:
    import json

    try:
        data = json.loads(_accepted_path(ws).read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def accept_signers(ws: Workspace, statement: dict[str, Any]) -> None:
    """Record, in this workspace's private state (never pushed), that its owner accepts the
    ``signers.added`` step of ``statement`` (sealed with the workspace's key)."""
    import json
    import os

    from evotree.harness.provenance import seal

    digest = statement_hash(statement)
    mac = seal(ws, {"accepted_signers": digest})
    if mac is None:
        raise InvalidState(
            "this workspace's private key cannot be made, so no signers can be accepted here",
            fix="check that the repository's .git folder is writable",
        )
    path = _accepted_path(ws)
    data = _accepted(ws)
    data[digest] = mac
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".accepted-signers.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def accepted_state(ws: Workspace) -> str:
    """A digest of the acceptances (part of the trust cache's key)."""
    return sha256_hex(canonical(_accepted(ws)))


def unaccepted_signers(ws: Workspace) -> list[dict[str, Any]]:
    """The ``signers.added`` steps of the ledger this workspace has not accepted: made elsewhere (a
    fetch) rather than here, or accepted by no person here. A step made in another clone by a
    stranger's own key verifies like an honest one; only this workspace's owner can tell them apart."""
    from evotree.harness.provenance import sealed

    accepted = _accepted(ws)
    missing = []
    for entry in ws.ledger.entries():
        if entry.event.kind != EventKind.SIGNERS_ADDED.value or not isinstance(
            entry.event.data, dict
        ):
            continue
        statement = entry.event.data.get("statement")
        digest = statement_hash(statement)
        if not sealed(ws, {"accepted_signers": digest}, accepted.get(digest)):
            missing.append(
                {"ledger_commit": entry.commit, "statement": statement, "digest": digest}
            )
    return missing
