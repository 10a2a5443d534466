"""Errors of the gates, each with its documented exit code (``evotree.core.errors.EXIT_CODES`` 30-33)."""

from __future__ import annotations

from evotree.core.errors import EvotreeError

__all__ = ["GateFailed", "SignatureError", "SignoffRefused", "TamperingFound"]


class GateFailed(EvotreeError):
    """An evidence gate does not allow the promotion; ``details`` carries the gate table."""

    exit_code = 30
    code = "gate_failed"


class SignoffRefused(EvotreeError):
    """A human sign-off cannot happen here: no terminal, CI, approver is creator, wrong code."""

    exit_code = 31
    code = "signoff_refused"


class SignatureError(EvotreeError):
    """No signing key, a bad signature, or a signer not in the champion's allowed signers."""

    exit_code = 32
    code = "signature_error"


class TamperingFound(EvotreeError):
    """The ledger, the champion ref or a signature does not match a signed approval."""

    exit_code = 33
    code = "tampering_found"
