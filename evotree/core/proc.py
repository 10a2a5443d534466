"""Starting Python subprocesses that cannot be shadowed by a user's folders.

evotree's top-level packages (``skills``, ``domains``, ``memory``, …) have common names and
evotree runs inside users' repositories, which may have folders with the same names. Every
Python subprocess evotree starts goes through :func:`python_command` / :func:`safe_env`:
``-P`` and ``PYTHONSAFEPATH=1`` keep the working directory (and a script's directory) off
``sys.path``, so ``import skills`` always finds evotree's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

__all__ = ["python_command", "safe_env"]


def python_command(*args: str, executable: str | None = None) -> list[str]:
    """``[python, -P, *args]`` with this interpreter (or ``executable``)."""
    return [executable or sys.executable, "-P", *args]


def safe_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """An environment for Python subprocesses: ``PYTHONSAFEPATH=1`` and no empty ``PYTHONPATH`` entries.

    An empty entry in ``PYTHONPATH`` means "the current directory", which would reopen the
    shadowing that ``-P`` closes; such entries are dropped.
    """
    env = dict(os.environ if base is None else base)
    env["PYTHONSAFEPATH"] = "1"
    if "PYTHONPATH" in env:
        parts = [p for p in env["PYTHONPATH"].split(os.pathsep) if p and p != "."]
        if parts:
            env["PYTHONPATH"] = os.pathsep.join(parts)
        else:
            del env["PYTHONPATH"]
    env.update(extra)
    return env
