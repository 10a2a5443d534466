"""Signed statements: the one form every signed record takes (promotion, decision, run approval,
analyzers promotion), and signing one with a check against the champion's allowed signers.

``evotree verify`` checks them all with :func:`evotree.gates.verify.check_signed_statement`.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from evotree.core.ledger import utcnow
from evotree.gates.errors import SignatureError
from evotree.gates.signing import canonical, sign, verify

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace
    from evotree.gates.policy import Policy
    from evotree.gates.signoff import Approver

__all__ = ["anchor_commit", "new_statement", "sign_statement"]


def anchor_commit(ws: Workspace) -> str:
    """The root commit of the workspace (``workspace.initialized``): the statements' workspace id."""
    *_, first = ws.ledger.entries()
    return str(first.event.data.get("commit", ""))


def sign_statement(policy: Policy, approver: Approver, statement: dict[str, Any]) -> str:
    """Sign ``statement`` and check the signature against ``policy`` before it is used anywhere."""
    signature = sign(approver.key, canonical(statement))
    ok, message = verify(
        policy.allowed_signers_text, approver.principal, canonical(statement), signature
    )
    if not ok:
        raise SignatureError(
            f"the signature made with {approver.key} does not verify as {approver.principal}: {message}",
            fix="check that the key is the one listed in the champion's allowed signers",
        )
    return signature


def new_statement(ws: Workspace, kind: str, approver: Approver, **fields: Any) -> dict[str, Any]:
    """A statement of type ``kind`` to sign: workspace anchor, approver, key, time and a nonce, plus ``fields``.

    Every signed record (promotion, decision, run approval, analyzers promotion) has this form,
    so ``evotree verify`` checks them all with :func:`evotree.gates.verify.check_signed_statement`.
    """
    return {
        "type": kind,
        "v": 1,
        "workspace": anchor_commit(ws),
        "approver": approver.principal,
        "key": approver.fingerprint,
        "at": utcnow(),
        "nonce": secrets.token_hex(16),
        **fields,
    }
