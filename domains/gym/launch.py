"""Starting a policy's process: light enough for the judge to do before its own imports.

:class:`evotree.domains.gym.runner.Worker` starts its policy process with :func:`spawn` (the
command, its environment, the two pipes; in the judge phase inside a nested sandbox). The judge
phase calls :func:`prestart` first thing, before it imports numpy, gymnasium, its settings or
anything of its episodes: the policy's process (Python, numpy, gymnasium, policy.py: ~0.2 s of
CPU) then starts while the judge imports and reads its settings, on another CPU where one is
free, and the judge's first :class:`~evotree.domains.gym.runner.Worker` takes it over
(:func:`adopt`) instead of starting one. This module imports only the standard library and
the sandbox's argument builder (no numpy), so that the start comes first.

The early process is the same process the judge would start later (same command, same
environment without ``EVOTREE_*``, the same two pipes and nothing else: ``subprocess`` closes
every other descriptor), started earlier: before the judge has read its seeds, made an
environment or written a frame. It gets nothing until the first episode's start message.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from evotree.harness.sandbox_nested import policy_sandbox_argv
from evotree.harness.sandbox_spec import (
    ENV_POLICY_SANDBOX,
    POLICY_CANDIDATE_DIR,
    SandboxUnavailable,
)

__all__ = [
    "FROM_ENV",
    "WorkerBroken",
    "adopt",
    "discard",
    "policy_sandbox_from_env",
    "prestart",
    "spawn",
    "worker_env",
]

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


class WorkerBroken(RuntimeError):
    """The worker cannot run at all on this machine (not the policy's fault)."""


#: Variables of the judge's environment a sandboxed worker does not get: they name the judge's
#: folders (``PWD`` is the judge's working directory), which do not exist in its sandbox anyway.
_JUDGE_PATH_VARS = ("PWD", "OLDPWD", "GIT_CEILING_DIRECTORIES")
#: Default of ``sandbox``: read ``$EVOTREE_POLICY_SANDBOX`` when the worker starts.
FROM_ENV: Any = object()


def policy_sandbox_from_env(environ: dict[str, str] | None = None) -> dict[str, Any] | None:
    """The judge phase's nested-sandbox spec (``$EVOTREE_POLICY_SANDBOX``), or ``None`` outside it.

    A value that is not a JSON object is a spec that says nothing can be isolated (fail closed).
    """

    raw = (os.environ if environ is None else environ).get(ENV_POLICY_SANDBOX)
    if raw is None:
        return None
    try:
        spec = json.loads(raw)
    except ValueError:
        spec = None
    if not isinstance(spec, dict):
        return {"error": f"${ENV_POLICY_SANDBOX} is not a JSON object: {raw[:200]!r}"}
    return spec


_probed: dict[str, str | None] = {}
_probe_lock = threading.Lock()


def _probe_sandbox(spec: dict[str, Any]) -> None:
    """Start one nested sandbox running Python (once per spec and process); :class:`WorkerBroken` if it
    cannot start, with bubblewrap's message. Nothing of the candidate runs in it."""

    key = json.dumps(spec, sort_keys=True)
    with _probe_lock:
        if key not in _probed:
            try:
                argv = policy_sandbox_argv(spec, None, [sys.executable, "-I", "-S", "-c", "pass"])
                proc = subprocess.run(
                    argv,
                    capture_output=True,
                    text=True,
                    timeout=60,
                    stdin=subprocess.DEVNULL,
                    env=worker_env(),
                    check=False,
                )
                lines = proc.stderr.strip().splitlines()
                _probed[key] = (
                    None
                    if proc.returncode == 0
                    else (
                        f"the policy's sandbox does not start here: {lines[-1] if lines else proc.returncode}"
                    )
                )
            except SandboxUnavailable as exc:
                _probed[key] = f"{exc.message} (fix: {exc.fix})" if exc.fix else exc.message
            except (OSError, subprocess.TimeoutExpired) as exc:
                _probed[key] = f"the policy's sandbox does not start here: {exc}"
        problem = _probed[key]
    if problem is not None:
        raise WorkerBroken(problem)


#: Variables naming one folder or file the interpreter, or the loader before it, reads code from
#: at start-up (the standard library, the user site, bytecode of the standard library, a startup
#: file): kept only where the value is absolute and outside the candidate's folder
#: (:func:`_outside`). ``PYTHONHOME`` may be ``prefix:exec_prefix``.
_PATH_VARS = ("PYTHONHOME", "PYTHONUSERBASE", "PYTHONPYCACHEPREFIX", "PYTHONSTARTUP")
#: Variables holding a list of folders searched for code before ``main`` runs: each entry is
#: kept only where it is absolute and outside the candidate's folder, the rest of the list kept.
#: An empty or relative entry names the worker's working directory or a folder under it: the
#: candidate's folder (``/candidate`` in the nested sandbox), whose ``sitecustomize.py``,
#: ``usercustomize.py`` or shared libraries would run before :data:`~evotree.domains.gym.wire.GO`.
_LIST_VARS = {"PYTHONPATH": os.pathsep, "LD_LIBRARY_PATH": ":"}
#: Libraries the dynamic loader maps before the interpreter starts: an entry with a ``/`` is a
#: path (relative ones name the candidate's folder), one without is searched for in the
#: library folders (``LD_LIBRARY_PATH`` as filtered here, then the system's).
_PRELOAD_VARS = ("LD_PRELOAD", "LD_AUDIT")


def _outside(entry: str, candidate_dir: Path | None) -> bool:
    """Whether the path ``entry`` names something the candidate cannot have put there: an
    absolute path that is neither in the candidate's folder (nor ``/candidate``, its place in
    the nested sandbox) as written, nor once its links and ``..`` are resolved. Fail closed:
    an empty or relative entry (it resolves against the worker's working directory, the
    candidate's folder) is never outside, whatever its spelling (``.``, ``./``, ``src/..``)."""
    if not entry or not os.path.isabs(entry):
        return False
    roots = {Path(POLICY_CANDIDATE_DIR)}
    if candidate_dir is not None:
        roots |= {Path(os.path.abspath(candidate_dir)), Path(candidate_dir).resolve()}
    for path in (Path(os.path.normpath(entry)), Path(entry).resolve()):
        if any(path == root or root in path.parents for root in roots):
            return False
    return True


def _scrub_paths(env: dict[str, str], candidate_dir: Path | None) -> None:
    """Drop from ``env`` every path through which code in the candidate's folder would run at
    the interpreter's start, before it waits for :data:`~evotree.domains.gym.wire.GO`
    (:func:`_outside`), in place. ``PYTHONPLATLIBDIR`` (a folder relative to the installation's
    prefix: ``../..`` climbs out of it) is dropped outright: the interpreter's built-in value
    serves."""
    env.pop("PYTHONPLATLIBDIR", None)
    for var in _PATH_VARS:
        if var in env and not all(_outside(p, candidate_dir) for p in env[var].split(os.pathsep)):
            del env[var]
    for var, sep in _LIST_VARS.items():
        if var in env:
            parts = [p for p in env[var].split(sep) if _outside(p, candidate_dir)]
            if parts:
                env[var] = sep.join(parts)
            else:
                del env[var]
    for var in _PRELOAD_VARS:
        if var in env:
            parts = [
                p
                for p in re.split(r"[ :]", env[var])
                if p and ("/" not in p or _outside(p, candidate_dir))
            ]
            if parts:
                env[var] = " ".join(parts)
            else:
                del env[var]


def worker_env(
    base: dict[str, str] | None = None, candidate_dir: Path | None = None
) -> dict[str, str]:
    """The policy's process's environment: ``base`` (this process's) without ``EVOTREE_*``,
    with ``PYTHONSAFEPATH``, a fixed hash seed and one BLAS thread unless told otherwise, and
    without any path that would run code of the candidate's folder (``candidate_dir``; relative
    entries always) before the worker waits for GO (:func:`_scrub_paths`)."""
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if not k.startswith("EVOTREE_")
    }
    env["PYTHONSAFEPATH"] = "1"
    env["PYTHONHASHSEED"] = "0"
    for var in _THREAD_VARS:
        env.setdefault(var, "1")
    _scrub_paths(env, candidate_dir)
    return env


def command(
    candidate_dir: Path, sandbox: dict[str, Any] | None
) -> tuple[list[str], dict[str, str]]:
    """The policy process's command line (``{request}``/``{reply}``: the pipes' numbers) and
    environment; :class:`WorkerBroken` where its nested sandbox cannot start."""
    worker = [sys.executable, "-P", "-m", "evotree.domains.gym.worker", "{request}", "{reply}"]
    if sandbox is None:
        return [*worker, str(candidate_dir / "policy.py")], worker_env(None, candidate_dir)

    _probe_sandbox(sandbox)
    try:
        argv = policy_sandbox_argv(
            sandbox, candidate_dir, [*worker, f"{POLICY_CANDIDATE_DIR}/policy.py"]
        )
    except SandboxUnavailable as exc:
        raise WorkerBroken(exc.message) from None
    env = {k: v for k, v in worker_env(None, candidate_dir).items() if k not in _JUDGE_PATH_VARS}
    return argv, env


def spawn(candidate_dir: Path, sandbox: dict[str, Any] | None) -> tuple[subprocess.Popen, int, int]:
    """Start the policy's process: (the process, the request pipe's write end, the reply pipe's
    read end). It is not waited for (its ``ready`` comes on the reply pipe)."""
    argv, env = command(candidate_dir, sandbox)
    request_r, request_w = os.pipe()
    reply_r, reply_w = os.pipe()
    request_r, reply_w = _lift(request_r), _lift(reply_w)
    argv = [
        str(request_r) if a == "{request}" else str(reply_w) if a == "{reply}" else a for a in argv
    ]
    try:
        proc = subprocess.Popen(
            argv,
            cwd=candidate_dir,
            env=env,
            pass_fds=(request_r, reply_w),
            stdin=subprocess.DEVNULL,
            stdout=2,  # the worker's prints go to our stderr (the log)
            # a session of its own, as the nested sandbox gives it (bubblewrap's
            # --new-session): its kill(0, ...) reaches its own group only, and where the
            # scheduler groups by session (autogroup) the two processes get a share each;
            # it dies with this process (the worker's parent-death signal)
            start_new_session=True,
        )
    except BaseException:
        for fd in (request_w, reply_r):
            os.close(fd)
        raise
    finally:
        os.close(request_r)
        os.close(reply_w)
    return proc, request_w, reply_r


#: the policy's ends of its pipes are the lowest free descriptors from this one on
_FD_BASE = 64


def _lift(fd: int) -> int:
    """``fd`` moved to the lowest free descriptor from :data:`_FD_BASE` on (the original closed),
    or ``fd`` itself where that cannot be done. The numbers the policy's process gets (in its
    argv) then do not depend on what else this process has open at its start (the recorder's
    file, once the first episodes are recorded): a process started early and one started
    later, after rows were written, get the same ones."""
    try:
        lifted = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _FD_BASE)
    except OSError:
        return fd
    os.close(fd)
    return lifted


#: the process :func:`prestart` started and nobody adopted yet: (key, what :func:`spawn` gave)
_early: tuple[str, tuple[subprocess.Popen, int, int]] | None = None
_early_lock = threading.Lock()


def _key(candidate_dir: Path, sandbox: dict[str, Any] | None) -> str:
    return json.dumps([str(Path(candidate_dir).resolve()), sandbox], sort_keys=True)


def prestart(candidate_dir: Path, sandbox: dict[str, Any] | None = FROM_ENV) -> bool:
    """Start the policy's process for ``candidate_dir`` now, for the first worker of this
    process to :func:`adopt` (the judge phase: before its own imports). Whatever fails here
    (no policy.py, no sandbox) is left for that worker's own start to meet and report; True if
    a process was started."""
    global _early
    if sandbox is FROM_ENV:
        sandbox = policy_sandbox_from_env()
    candidate_dir = Path(candidate_dir).resolve()
    if _early is not None or not (candidate_dir / "policy.py").is_file():
        return False
    try:
        _early = (_key(candidate_dir, sandbox), spawn(candidate_dir, sandbox))
    except Exception:  # noqa: BLE001 - the worker's own start raises it again, with its message
        return False
    return True


def adopt(
    candidate_dir: Path, sandbox: dict[str, Any] | None
) -> tuple[subprocess.Popen, int, int] | None:
    """The process :func:`prestart` started for this candidate and sandbox, once; None if there
    is none, or one for something else (then it is killed: a process is never kept for later)."""
    global _early
    with _early_lock:
        early, _early = _early, None
    if early is None:
        return None
    key, spawned = early
    if key == _key(candidate_dir, sandbox):
        return spawned  # one that died already is met as a start that died: the same message
    _kill(spawned)
    return None


def discard() -> None:
    """Kill the process :func:`prestart` started if no worker adopted it (its caller is done:
    a later start in this process loads policy.py as it is then, not as it was)."""
    global _early
    with _early_lock:
        early, _early = _early, None
    if early is not None:
        _kill(early[1])


def _kill(spawned: tuple[subprocess.Popen, int, int]) -> None:
    proc, request_w, reply_r = spawned
    proc.kill()
    proc.wait()
    os.close(request_w)
    os.close(reply_r)
