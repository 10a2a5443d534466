"""Errors of the leak audits (exit codes 28 and 29 of :data:`evotree.core.errors.EXIT_CODES`)."""

from __future__ import annotations

from evotree.core.errors import EvotreeError

__all__ = ["AuditFailed", "AuditInputError", "UnreadableTrajectory"]


class AuditFailed(EvotreeError):
    """An audit found leaks of severity high or above (the version must not be promoted)."""

    exit_code = 28
    code = "audit_failed"


class AuditInputError(EvotreeError):
    """A trajectory, transcript or repository the audit was asked to read cannot be read."""

    exit_code = 29
    code = "audit_input_error"


class UnreadableTrajectory(AuditInputError):
    """A file was read but is no trajectory the audit can parse (unknown format, binary,
    malformed lines). The trajectory audit turns it into an ``audit.unreadable`` finding that
    fails the audit: a file nobody could read must never pass as clean."""

    code = "audit_unreadable"
