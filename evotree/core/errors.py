"""One error hierarchy for evotree, each error with a stable exit code and a fix.

The CLI turns any :class:`EvotreeError` into a one-line message (plus the fix) and exits
with the error's ``exit_code``; with ``--json`` it prints ``{"error": {...}}`` instead.
Exit codes are part of the documented interface (``docs/cli.md``) that agents rely on.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "EvotreeError",
    "NotAGitRepository",
    "NoCommits",
    "NotAWorkspace",
    "AlreadyInitialized",
    "MissingIdentity",
    "UnknownVersion",
    "InvalidVersionId",
    "ConfigError",
    "AlreadyExists",
    "DirtyState",
    "MergeConflict",
    "InvalidState",
    "LedgerConflict",
    "GitCommandError",
    "UsageError",
    "EXIT_CODES",
]


class EvotreeError(Exception):
    """Base of every error evotree raises on purpose.

    ``message`` says what is wrong (expectation and actual value); ``fix`` says what to do.
    """

    exit_code: int = 1
    code: str = "error"

    def __init__(self, message: str, *, fix: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        """The JSON form printed by ``--json`` commands (schema: ``error.schema.json``)."""
        out: dict[str, Any] = {
            "code": self.code,
            "exit_code": self.exit_code,
            "message": self.message,
        }
        if self.fix:
            out["fix"] = self.fix
        if self.details:
            out["details"] = self.details
        return out


class UsageError(EvotreeError):
    """A bad option value or argument that click's own checks cannot see (exit 2, like click's)."""

    exit_code = 2
    code = "usage_error"


class NotAGitRepository(EvotreeError):
    exit_code = 3
    code = "not_a_git_repository"


class NoCommits(EvotreeError):
    exit_code = 3
    code = "no_commits"


class NotAWorkspace(EvotreeError):
    exit_code = 3
    code = "not_a_workspace"


class AlreadyInitialized(EvotreeError):
    exit_code = 7
    code = "already_initialized"


class MissingIdentity(EvotreeError):
    exit_code = 4
    code = "missing_identity"


class UnknownVersion(EvotreeError):
    exit_code = 5
    code = "unknown_version"


class InvalidVersionId(EvotreeError):
    exit_code = 5
    code = "invalid_version_id"


class ConfigError(EvotreeError):
    """A problem in ``evotree.toml``; ``details`` carries ``path``, ``key`` and ``line``."""

    exit_code = 6
    code = "config_error"


class AlreadyExists(EvotreeError):
    exit_code = 7
    code = "already_exists"


class DirtyState(EvotreeError):
    exit_code = 8
    code = "dirty_state"


class MergeConflict(EvotreeError):
    exit_code = 9
    code = "merge_conflict"


class InvalidState(EvotreeError):
    exit_code = 10
    code = "invalid_state"


class LedgerConflict(EvotreeError):
    exit_code = 11
    code = "ledger_conflict"


class GitCommandError(EvotreeError):
    exit_code = 12
    code = "git_failed"


#: Documented exit codes (also in docs/cli.md). 2 is click's usage error.
EXIT_CODES: dict[int, str] = {
    0: "success",
    1: "unexpected internal error (a bug: please report it)",
    2: "usage error (bad option or argument)",
    3: "not a git repository / repository has no commits / not an evotree workspace",
    4: "missing git identity (user.name / user.email)",
    5: "unknown or invalid version id",
    6: "malformed evotree.toml",
    7: "already exists (workspace, version id, branch or worktree path)",
    8: "dirty state (uncommitted changes where they matter)",
    9: "merge conflict",
    10: "operation not allowed in the version's current state",
    11: "ledger update lost too many compare-and-swap races",
    12: "a git command failed",
    13: "recorder misuse (outside a run, hidden split from the train phase, bad values)",
    14: "query error (bad SQL over the evidence views, or not one read-only SELECT)",
    15: "unsupported or missing TRL version",
    16: "budget exceeded (the request was refused before it started)",
    17: "run directory cannot be created or written",
    18: "ingest error (missing or malformed trainer_state.json)",
    19: "compaction error (a run's evidence could not be read or its Parquet written)",
    20: "pool mismatch: versions scored on different task pools (ask for the intersection)",
    21: "invalid scores or parameters for a statistic",
    22: "no scores: a version has no scored run to compare",
    23: "invalid finding (a finding or analyzer that breaks the findings model)",
    24: "backtest error (bad reward transform or runs)",
    25: "unknown skill or invalid skill parameter",
    26: "skill does not apply (domain, trainer or TRL version)",
    27: "memory error (malformed entry or export)",
    28: "audit failed: leak findings of high severity or above",
    29: "audit input error (unreadable trajectory, transcript or repository)",
    30: "a gate failed: the evidence does not allow promotion",
    31: "sign-off refused (no interactive terminal, CI environment, approver is creator, wrong code)",
    32: "signature error (no signing key, bad signature, signer not allowed)",
    33: "verify found tampering (ledger, champion ref or signatures)",
    34: "report error (cannot write or post the report)",
    35: "executor error (Ray missing or cluster unreachable, remote run lost)",
    36: "sandbox unavailable: bubblewrap cannot run here and the champion's policy requires it (nothing started)",
    37: "a run did not succeed (failed, invalid submission, crashed or stopped by a budget); its record is printed",
    38: "unknown run id (or a prefix that names no run, or several)",
    39: "evidence sharing error (push / pull: no such remote, an evidence ref evotree did not write)",
    40: "patch rejected: the version's patch against the pristine base breaks the patch rules (nothing started)",
    130: "cancelled (Ctrl-C); runs were stopped and marked cancelled",
}
