"""The nested sandbox a judge phase starts for candidate code (:func:`policy_sandbox_argv`), the
judge's own user namespace in which it is not uid 0, and what this bubblewrap can forbid
(``--disable-userns``). What the nested sandbox may bind reaches the judge in
``$EVOTREE_POLICY_SANDBOX`` (:func:`evotree.harness.sandbox.policy_sandbox_spec`)."""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotree.harness.sandbox_spec import (
    INSTALL_FIX,
    JUDGE_UID,
    POLICY_CANDIDATE_DIR,
    SandboxUnavailable,
)
from evotree.harness.sandbox_system import find_tool, system_args

__all__ = ["bwrap_help", "disable_userns_works", "judge_user_args", "policy_sandbox_argv"]


def judge_user_args() -> list[str]:
    args = ["--unshare-user"]
    if os.getuid() == 0:
        args += ["--uid", str(JUDGE_UID), "--gid", str(JUDGE_UID)]
    return args


@functools.lru_cache(maxsize=4)
def disable_userns_works(exe: str) -> bool:
    if "--disable-userns" not in bwrap_help(exe):
        return False
    try:
        proc = subprocess.run(
            [exe, "--unshare-user", "--disable-userns", "--ro-bind", "/", "/", "--", "true"],
            capture_output=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


@functools.lru_cache(maxsize=4)
def bwrap_help(exe: str) -> str:
    """``bwrap --help`` (which options this bubblewrap has: ``--disable-userns`` is 0.8 and later)."""
    try:
        proc = subprocess.run(
            [exe, "--help"],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        return proc.stdout + proc.stderr
    except (OSError, subprocess.TimeoutExpired):
        return ""


def policy_sandbox_argv(
    spec: dict[str, Any], candidate: Path | str | None, argv: Sequence[str]
) -> list[str]:
    """The bwrap command line that runs ``argv`` (candidate code) in a nested sandbox.

    ``spec``: the judge phase's ``$EVOTREE_POLICY_SANDBOX`` (:func:`policy_sandbox_spec`).
    The sandbox has a new user namespace (no capabilities in it or anywhere: ``--cap-drop ALL``,
    no new privileges), new PID, network (loopback only), IPC, UTS and cgroup namespaces, a new
    session, and dies with the thread that started it. It sees, read-only: the system (as a
    phase does, without ``/proc``), the folders of ``spec["read_only"]`` and ``candidate`` at
    :data:`POLICY_CANDIDATE_DIR` (its working directory); a private ``/tmp`` (``$HOME`` is
    ``/tmp/home``) and ``/dev/shm``. Nothing of the judge: not its folder, its evidence, its
    ``/tmp``, its processes. File descriptors passed to the bwrap process (pipes) stay open in
    the sandboxed process. Raises :class:`SandboxUnavailable` when ``spec`` says nesting cannot
    work here (``{"error": ...}``) or names no usable bwrap.
    """
    if spec.get("error") or not spec.get("bwrap"):
        raise SandboxUnavailable(
            "candidate code cannot be isolated from the judge here: "
            + str(spec.get("error") or "no bubblewrap binary was named"),
            fix=str(spec.get("fix") or INSTALL_FIX),
        )
    exe = find_tool("bwrap", str(spec["bwrap"]))
    if exe is None:
        raise SandboxUnavailable(
            f"bubblewrap is not executable at {spec['bwrap']} inside the judge's sandbox",
            fix="install bubblewrap under /usr (apt-get install bubblewrap)",
        )
    args = [
        exe,
        "--unshare-all",
        "--unshare-user",
        *(["--disable-userns"] if spec.get("disable_userns") else []),
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "evotree-policy",
    ]
    args += system_args(False, proc=False)
    for path in sorted((Path(p) for p in spec.get("read_only", ())), key=lambda p: len(p.parts)):
        if path.is_absolute() and path != Path("/"):
            args += ["--ro-bind", str(path), str(path)]
    if candidate is not None:
        args += ["--ro-bind", str(Path(candidate).absolute()), POLICY_CANDIDATE_DIR]
    args += [
        "--remount-ro",
        "/",
        "--chdir",
        POLICY_CANDIDATE_DIR if candidate is not None else "/tmp",
        "--",
    ]
    return args + list(argv)
