"""The executors' error: kept apart from the contract so that evidence stores raise it without
importing the run records (the run modules import the stores)."""

from __future__ import annotations

from evotree.core.errors import EvotreeError

__all__ = ["ExecutorError"]


class ExecutorError(EvotreeError):
    """Ray missing, a cluster that cannot be reached, or an evidence store that cannot be used."""

    exit_code = 35
    code = "executor_error"
