"""How a sandboxed phase is started: the launcher that makes its CPU time countable
(:func:`accounted`, a child subreaper that may join a pids cgroup first) and the environment it
gets (:func:`sandbox_env`, an allowlist)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence

from evotree.harness.sandbox_cgroup import PidsCgroup
from evotree.harness.sandbox_spec import SANDBOX_HOME

__all__ = ["PHASE_ENV", "PHASE_ENV_PREFIXES", "accounted", "sandbox_env"]


_LAUNCHER = """\
import ctypes, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: the sandbox's init is re-parented here
libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG: die with the thread that started us
if os.getppid() != int(sys.argv[1]):
    os._exit(137)
if sys.argv[2] != "-":  # the phase's pids cgroup: every process it starts is counted by the kernel
    try:
        with open(sys.argv[2], "w") as procs:
            procs.write(str(os.getpid()))
    except OSError as exc:
        sys.stderr.write(f"evotree: could not join the phase's pids cgroup ({exc})\\n")
quiet = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
for sig in quiet:  # the supervisor signals the sandbox; the launcher stays to reap and count
    signal.signal(sig, signal.SIG_IGN)
argv = sys.argv[3:]
pid = os.posix_spawn(argv[0], argv, os.environ, setsigdef=quiet)
status = 0
while True:
    try:
        child, code = os.wait()
    except ChildProcessError:
        break
    except InterruptedError:
        continue
    if child == pid:
        status = code
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
os._exit(os.waitstatus_to_exitcode(status))
"""


def accounted(argv: Sequence[str], *, cgroup: PidsCgroup | None = None) -> list[str]:
    """``argv`` (a bwrap command line) started through a launcher that makes its CPU time countable.

    The launcher is a child subreaper: it starts ``argv``, then reaps it, the sandbox's init
    (which bubblewrap leaves to its parent's reaper) and whatever else is re-parented to it,
    and exits with ``argv``'s status (or dies of its signal). ``os.wait4`` on the launcher thus
    returns the CPU time of every process of the sandbox. It dies with the thread that started
    it (``PR_SET_PDEATHSIG``) and ignores SIGTERM, SIGINT and SIGHUP (which reach bwrap and the
    sandbox directly); SIGKILL ends it. Must be started by this process (it checks its parent).
    ``cgroup``: a :class:`PidsCgroup` the launcher joins before it starts ``argv``.
    """
    procs = str(cgroup.path / "cgroup.procs") if cgroup is not None else "-"
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(os.getpid()), procs, *argv]


#: The environment variables every sandboxed phase gets (when evotree has them): what a
#: program needs to run (PATH, locale, time zone, terminal), what evotree sets for the phase
#: (PYTHONSAFEPATH, GIT_CEILING_DIRECTORIES, the run's GPUs) and evotree's own ``EVOTREE_*``
#: (:data:`PHASE_ENV_PREFIXES`). Nothing else of the person running evotree: no token, no key, no
#: agent socket, unless the champion's ``[sandbox] pass_env`` names it.
PHASE_ENV = (
    "PATH",
    "HOME",
    "TMPDIR",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TERM",
    "PYTHONSAFEPATH",
    "PYTHONDONTWRITEBYTECODE",
    "GIT_CEILING_DIRECTORIES",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
)


#: Prefixes of the variables every phase gets: the locale (``LC_*``) and evotree's own.
PHASE_ENV_PREFIXES = ("LC_", "EVOTREE_")


def sandbox_env(env: dict[str, str], pass_env: Iterable[str] = ()) -> dict[str, str]:
    """``env`` as a sandboxed phase gets it: an allowlist (:data:`PHASE_ENV`, :data:`PHASE_ENV_PREFIXES`
    and the names in ``pass_env``, the champion's ``[sandbox] pass_env``), private HOME and TMPDIR.

    Everything else is dropped: the credentials of the person running evotree (HF_TOKEN, AWS_*,
    OPENAI_API_KEY, GITHUB_TOKEN, ...) and sockets (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS) reach a
    phase only when ``pass_env`` lists them. The candidate's code reads its environment and can
    write it to its logs, which ``evotree logs`` shows.
    """
    allowed = set(PHASE_ENV) | set(pass_env)
    out = {k: v for k, v in env.items() if k in allowed or k.startswith(PHASE_ENV_PREFIXES)}
    out.update(HOME=SANDBOX_HOME, TMPDIR="/tmp")
    return out
