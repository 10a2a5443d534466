"""Processes: Python subprocesses that cannot be shadowed, and whether a process is alive.

evotree's top-level packages (``skills``, ``domains``, ``memory``, …) have common names and
evotree runs inside users' repositories, which may have folders with the same names. Every
Python subprocess evotree starts goes through :func:`python_command` / :func:`safe_env`:
``-P`` and ``PYTHONSAFEPATH=1`` keep the working directory (and a script's directory) off
``sys.path``, so ``import skills`` always finds evotree's.

:func:`process_owner` / :func:`owner_is_dead` name a process so that another one can later tell
whether it is gone (pid, its start time, pid namespace, host, boot id): a run reservation or a
run's ``run.started`` records its owner this way, and crash recovery releases what a dead owner
held. They read ``/proc`` only, so they sit here, below the ledger and the harness.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

__all__ = ["python_command", "safe_env", "process_owner", "owner_is_dead"]


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


_BOOT_ID = "/proc/sys/kernel/random/boot_id"


def _read(path: str) -> str | None:
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError:
        return None


def _pid_state(pid: int) -> tuple[str, int] | None:
    """(state, start time in clock ticks since boot) of ``pid`` from /proc; None: no such process."""
    text = _read(f"/proc/{int(pid)}/stat")
    if not text or ")" not in text:
        return None
    fields_ = text[text.rindex(")") + 2 :].split()
    try:
        return fields_[0], int(fields_[19])
    except (IndexError, ValueError):
        return None


def _pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def process_owner() -> dict[str, Any]:
    """Who holds a reservation: this process (pid, its start time, pid namespace), host, boot id, when."""
    state = _pid_state(os.getpid())
    return {
        "pid": os.getpid(),
        "pid_start": state[1] if state else None,
        "pid_ns": _pid_namespace(),
        "host": socket.gethostname(),
        "boot_id": _read(_BOOT_ID) or "",
        "at": datetime.now(UTC).isoformat(timespec="microseconds"),
    }


def owner_is_dead(owner: Mapping[str, Any]) -> bool:
    """True when the process ``owner`` (:func:`process_owner`) names is known to be gone.

    Judged only on its own host: the machine rebooted (another boot id), or, in the same pid
    namespace, no process has its pid, it is a zombie, or its pid was reused (another start
    time). Another host, another pid namespace or a malformed owner: False (cannot tell).
    """
    if not owner or owner.get("host") != socket.gethostname():
        return False
    boot = _read(_BOOT_ID) or ""
    if boot and owner.get("boot_id") and owner.get("boot_id") != boot:
        return True
    if (owner.get("pid_ns") or "") != _pid_namespace():
        return False
    try:
        pid = int(owner["pid"])
    except (KeyError, TypeError, ValueError):
        return False
    state = _pid_state(pid)
    if state is None or state[0] in ("Z", "X"):
        return True
    return owner.get("pid_start") is not None and state[1] != owner.get("pid_start")
