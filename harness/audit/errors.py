"""Errors of the leak audits (exit codes 28 and 29 of :data:`evotree.core.errors.EXIT_CODES`)."""

from __future__ import annotations

from evotree.core.errors import EvotreeError

__all__ = ["AuditFailed", "AuditInputError"]


class AuditFailed(EvotreeError):
    """An audit found leaks of severity high or above (the version must not be promoted)."""

    exit_code = 28
    code = "audit_failed"


class AuditInputError(EvotreeError):
    """A trajectory, transcript or repository the audit was asked to read cannot be read."""

    exit_code = 29
    code = "audit_input_error"
