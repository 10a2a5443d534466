"""The phase sandbox: each train and judge phase runs inside a bubblewrap (``bwrap``) sandbox.

What a sandboxed phase sees (everything else on the machine is absent, not merely unreadable):

- the system, read-only: ``/usr`` (and ``/bin``, ``/lib``, ``/lib64``, ``/sbin`` as on the
  host), a short list of ``/etc`` files (the loader cache, ``passwd``/``group``, time zone,
  certificates, Debian alternatives; never ``shadow`` or ssh keys), ``/sys`` read-only;
- the Python environment, read-only: ``sys.prefix``, ``sys.base_prefix`` and the folders of the
  evotree package. In development evotree is an editable install whose sources live in the
  repository checkout: only the package folders the install maps (``evotree/``, ``harness/``,
  ``diagnostics/``, ``skills/``, ``memory/``, ``gates/``, ``domains/``) are bound, never the
  checkout itself, ``.git`` or ``.evotree/`` (a folder holding either is refused);
- a private ``/tmp`` (tmpfs; also ``$TMPDIR`` and ``$HOME = /tmp/home``), a minimal ``/dev``
  (null, zero, random, urandom, tty, pts, a private ``/dev/shm``; GPUs' device nodes when the
  host has them), ``/proc`` of its own PID namespace;
- the paths the phase is given in :attr:`SandboxSpec.read_only` / :attr:`SandboxSpec.read_write`
  (the run directory, the candidate, the phase's evidence folder; see
  :mod:`evotree.harness.executors.phases`), at the same paths as outside.

Namespaces: new mount, PID, IPC, UTS, cgroup, network (unless the champion's policy allows the
phase a network) and user. ``--die-with-parent`` (the sandbox dies with the thread that started
it), ``--new-session``, no new privileges, and no capabilities (``--cap-drop ALL``): evotree may
run as root, and a root sandbox that kept its capabilities could remount its binds writable.
When the phase's first process exits, the PID namespace ends and the kernel kills every process
it started: a ``setsid`` daemon does not outlive its phase. A phase may not create user
namespaces of its own (``unshare -U``, a bwrap inside, ``os.unshare(CLONE_NEWUSER)``: each one
is a way to gain capabilities over new kernel objects, the usual first step of a kernel
escape): bubblewrap's ``--disable-userns`` (0.8 and later) forbids it, except in a judge phase
that must nest a sandbox for candidate code (:attr:`SandboxSpec.policy`; the candidate's code
runs there in a sandbox that forbids it again) or where a spec asks for it
(:attr:`SandboxSpec.userns`).

Limits (``[sandbox]`` of the champion's ``evotree.toml``) are set inside the sandbox with
``prlimit`` before the phase's shell starts: ``memory_mb`` is RLIMIT_DATA (heap, arrays,
tensors; address space that is only reserved, as CUDA reserves it, does not count, which
RLIMIT_AS would), ``max_processes`` RLIMIT_NPROC, ``max_output_mb`` RLIMIT_FSIZE (the largest
file a phase may write, its logs included). The kernel never applies RLIMIT_NPROC to the host's
uid 0, whatever uid the process has in its user namespace. So where evotree may make a pids
cgroup (:class:`PidsCgroup`), each phase runs in one limited to ``max_processes`` (the kernel
refuses forks past it); and everywhere the phase supervisor counts the processes and threads of
the sandbox's PID namespace and of those nested in it (:meth:`SandboxBox.tasks`, every poll),
and ends the phase when they are more than ``max_processes`` or a fork was refused at it. Wall
time is enforced by the phase supervisor too.

A phase's CPU time: the bubblewrap process that evotree waits for returns as soon as the phase's
first process exits, without reaping the sandbox's init (which holds the CPU time of every
process of the phase). Phases therefore start through :func:`accounted`: a small launcher that
is a child subreaper, starts bwrap, and reaps bwrap, the sandbox's init and anything else
re-parented to it, so that ``wait4`` on the launcher reports the CPU time of the whole phase.

The judge phase may run candidate code itself (the gym judge plays the candidate's policy). Its
spec then carries a :class:`PolicySandbox`: the judge's sandbox gets its own user namespace in
which it is not uid 0 (:data:`JUDGE_UID` when evotree runs as root), so that the judge, without
any capability, can start a **nested** sandbox per policy process
(:func:`policy_sandbox_argv`): a further user namespace, new PID, network, IPC and UTS
namespaces, no capabilities, and read-only binds of the system, the Python environment and the
candidate's files only, at ``/candidate``; never the judge's folder, its evidence, its ``/tmp``
or its ``/proc``. What the nested sandbox may bind reaches the judge in
``$EVOTREE_POLICY_SANDBOX`` (:data:`ENV_POLICY_SANDBOX`, JSON), set by bubblewrap for the judge
phase only. Where nesting cannot work here, the variable holds the reason instead, and domains
that need it refuse to run candidate code (fail closed).

``/proc/sys`` of every sandbox is bound read-only: evotree often runs as root, a sandbox's uid
is then the host's uid 0 (whatever number it has inside), and the sysctl files are writable by
that uid without any capability. bubblewrap's own cover of ``/proc/sys`` is skipped in that
case (its ``access(W_OK)`` test fails on the 0555 folder).

The runtime trace (:attr:`SandboxSpec.trace`): bubblewrap starts under the
compiled seccomp tracer (``seccomp_trace.c``, :func:`compiled_tracer`; ``strace -f --seccomp-bpf``,
:func:`trace_argv`, where it cannot be built or start), outside the sandbox, which records every
program that runs in it (argv, working directory, exit status, the binary the kernel loaded),
every ``connect`` and every open of git storage by a program other than the machine's git. Its
descriptors are close-on-exec (no process of the phase holds one) and its rows are sealed (a
``seq`` each, a final count and SHA-256); :func:`finish_trace` writes them as
``evidence/<phase>/exec_trace.jsonl`` after the phase, and the audit reads it like a trajectory
(:mod:`evotree.harness.audit.trace`, docs/audit.md). The git directories in a traced phase's
read-write folders are locked (HEAD, config, refs and reflogs read-only, the directory and its
object store mount points) and compared after the phase (:mod:`evotree.harness.git_guard`).

The environment of a phase is an allowlist (:func:`sandbox_env`, :data:`PHASE_ENV`, the
champion's ``[sandbox] pass_env``): no credential of the person running evotree reaches it
unless listed.

Where bubblewrap cannot run, :func:`check_sandbox` says why and how to fix it, and
:func:`require_sandbox` refuses to plan a run (:class:`SandboxUnavailable`, exit 36) unless the
champion's policy says ``[sandbox] mode = "off"``. A start costs a few milliseconds
(``bench/bench_sandbox.py``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.harness import git_guard, git_phase_search, git_prune, git_untraced
from evotree.harness.audit.trace import TRACE_FILE, TRACE_SYSCALLS, write_trace
from evotree.harness.sandbox_launch import sandbox_env
from evotree.harness.sandbox_nested import (
    bwrap_help,
    disable_userns_works,
    judge_user_args,
    policy_sandbox_argv,
)
from evotree.harness.sandbox_spec import (
    ENV_POLICY_SANDBOX,
    INSTALL_FIX,
    OFF_FIX,
    PolicySandbox,
    SandboxPolicy,
    SandboxSpec,
    SandboxUnavailable,
)
from evotree.harness.sandbox_system import find_tool, prlimit_path, python_paths, system_args
from evotree.harness.sandbox_tracer_build import (
    NO_COMPILER,
    NO_COMPILER_FIX,
    build_tracer,
    owned_private,
    tracer_cache,
    tracer_digest,
)

if TYPE_CHECKING:
    from evotree.core.config_execution import SandboxSection

__all__ = [
    "BWRAP",
    "INSTALLED_TRACER_DIR",
    "STRACE",
    "TRACER",
    "TRACE_OPENS",
    "SandboxStatus",
    "can_trace",
    "check_policy_sandbox",
    "check_sandbox",
    "compiled_tracer",
    "disables_userns",
    "finish_trace",
    "policy_sandbox_spec",
    "release_untraced",
    "require_sandbox",
    "trace_argv",
    "tracer_unavailable_reason",
    "wrap",
]

#: Path of the bubblewrap binary; ``None`` looks in /usr/bin, /bin, then ``PATH``. Only tests
#: change it (to a missing file, to check that runs fail closed). It is evotree's own process
#: state: a candidate never runs in evotree's process, so it cannot set it.
BWRAP: str | None = None
#: Path of the strace binary (the runtime tracer of :attr:`SandboxSpec.trace`); ``None`` looks
#: in /usr/bin, /bin, then ``PATH``. Tests set it to a missing file.
STRACE: str | None = None
#: Which tracer :attr:`SandboxSpec.trace` uses: ``"seccomp"`` (the default: a seccomp
#: user-notification filter on execve / execveat / connect / exit_group, served outside the
#: sandbox by the parent of bwrap — compiled from ``seccomp_trace.c`` with the machine's C
#: compiler; no cost at forks and threads) or ``"strace"`` (ptrace, outside the sandbox; the
#: fallback where the seccomp tracer cannot be built or start here). docs/audit.md, "The runtime
#: trace". Tests and benchmarks set it.
TRACER = "seccomp"


def _binary(binary: str | None = None) -> str | None:
    return find_tool("bwrap", binary if binary is not None else BWRAP)


def wrap(spec: SandboxSpec, argv: Sequence[str], *, binary: str | None = None) -> list[str]:
    """The bwrap command line that runs ``argv`` in the sandbox described by ``spec``.

    Raises :class:`SandboxUnavailable` when there is no bwrap binary (``binary``: a path, for
    tests and benchmarks; default :data:`BWRAP` or the system's).
    """
    exe = _binary(binary)
    if exe is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed", fix=INSTALL_FIX + ", " + OFF_FIX
        )
    guard = _guard_task_repositories(spec)
    nesting = _nesting_args(spec.policy, exe) if spec.policy is not None else []
    args = _wrap(spec, argv, exe, nesting, guard=guard)
    if spec.trace is not None:
        seccomp = TRACER == "seccomp" and _seccomp_tracing(spec) and _seccomp_works()
        args = (_seccomp_tracer_argv(spec.trace) if seccomp else trace_argv(spec.trace)) + args
    return args


def _guard_task_repositories(spec: SandboxSpec) -> list[tuple[str, Path, Path]]:
    """A phase's task repositories (git directories in its read-write and read-only folders): each
    bound as a copy pruned at its base (the future absent, :mod:`evotree.harness.git_prune`),
    its state recorded beside the trace, and the binds that lock its references, HEAD and config
    (:mod:`evotree.harness.git_guard`); :func:`finish_trace` compares them after the phase and
    removes the copies."""
    if spec.trace is None:
        # an untraced phase (the judge) binds task repositories pruned too, never whole
        try:
            return git_untraced.before_untraced(
                spec.read_write, spec.read_only, spec.masked, written=spec.written
            )
        except git_prune.PruneError as exc:
            raise SandboxUnavailable(
                f"task repositories cannot be bound pruned: {exc}",
                fix=exc.fix if isinstance(exc, git_phase_search.ReadPathCut) else OFF_FIX,
            ) from exc
    # read-only folders too: a task repository the phase can only read is read whole otherwise
    try:
        return git_guard.before_phase(
            spec.read_write,
            spec.trace,
            read_only=spec.read_only,
            skip=spec.masked,
            written=spec.written,
        )
    except git_phase_search.ReadPathCut as exc:  # a read path not searched whole: refused, said
        raise SandboxUnavailable(
            f"task repositories cannot be guarded: {exc}", fix=exc.fix
        ) from exc


def guard_notes(argv: Sequence[str]) -> list[str]:
    """What the start of the box whose command line is ``argv`` hid from it (a task repository
    past the cap or not prunable, a folder beyond a cut search of what the candidate wrote), once:
    for the run's record (:func:`evotree.harness.git_guard.take_notes`)."""
    return git_guard.take_notes(argv)


def release_untraced(argv: Sequence[str]) -> None:
    """Once a box is over: remove the pruned copies an untraced phase's start made for it
    (``argv``: the command line that ran it, as :func:`wrap` made it, through
    :func:`~evotree.harness.sandbox_launch.accounted` too); nothing for a traced phase
    (:func:`finish_trace` removes its copies)."""
    git_untraced.release_untraced(argv)


def _seccomp_tracing(spec: SandboxSpec) -> bool:
    """The seccomp tracer needs Python inside the sandbox (its installer) and a known ABI."""
    if TRACER != "seccomp" or not spec.python or platform.machine() not in ("x86_64", "aarch64"):
        return False
    release = os.uname().release.split(".")
    try:
        return (int(release[0]), int(release[1])) >= (5, 9)  # user notification with CONTINUE
    except (ValueError, IndexError):
        return False


def _strace(binary: str | None = None) -> str | None:
    return find_tool("strace", binary if binary is not None else STRACE)


def can_trace(binary: str | None = None) -> bool:
    """Whether phases can run under the runtime tracer here: the seccomp tracer (Linux 5.9+,
    x86_64 or aarch64), or strace 5.3+ with ``--seccomp-bpf`` and ptrace allowed (a container may
    forbid it)."""
    if TRACER == "seccomp" and _seccomp_works():
        return True
    return _can_trace(_strace(binary))


@functools.lru_cache(maxsize=1)
def _seccomp_works() -> bool:
    """Whether the seccomp tracer starts here and records a program (once per process): a
    container's seccomp profile or an old kernel refuses user notification."""
    if (
        not _seccomp_tracing(SandboxSpec(cwd=Path("/")))
        or compiled_tracer() is None
        or not check_sandbox().ok
    ):
        return False
    # a success is remembered per kernel, bwrap and tracer (each evotree process would otherwise pay
    # ~0.1 s); were it stale, a traced phase fails closed with the installer's reason
    tracer = compiled_tracer()
    key = hashlib.sha256(
        f"{os.uname().release}|{_binary(None)}|{tracer}|{sys.executable}".encode()
    ).hexdigest()[:16]
    marker = tracer_cache() / f"seccomp-probe-{key}.ok"
    if owned_private(tracer_cache()) and marker.is_file() and not marker.is_symlink():
        return True
    with tempfile.TemporaryDirectory(prefix="evotree-trace-probe-") as tmp:
        spec = SandboxSpec(cwd=Path("/"))  # the trace file is written outside the sandbox
        try:
            argv = _seccomp_tracer_argv(Path(tmp) / "probe.trace") + wrap(
                spec, ["/bin/sh", "-c", "exit 7"]
            )
            proc = subprocess.run(
                argv,
                capture_output=True,
                timeout=60,
                stdin=subprocess.DEVNULL,
                env=sandbox_env(dict(os.environ)),
            )
            rows = (Path(tmp) / "probe.trace").read_text(encoding="utf-8", errors="replace")
        except (OSError, subprocess.SubprocessError, SandboxUnavailable):
            return False
    works = proc.returncode == 7 and '"kind": "exec"' in rows and '"status": 7' in rows
    if works and owned_private(tracer_cache()):
        with contextlib.suppress(OSError):
            marker.touch()
    return works


@functools.lru_cache(maxsize=4)
def _can_trace(exe: str | None) -> bool:
    if exe is None:
        return False
    try:
        proc = subprocess.run(
            [exe, "-f", "--seccomp-bpf", "-qq", "-e", "trace=execve", "-o", os.devnull, "true"],
            capture_output=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def trace_argv(out: Path | str, binary: str | None = None) -> list[str]:
    """The tracer's command line, to put before a bwrap command line (:attr:`SandboxSpec.trace`).

    ``-f`` follows every fork; ``--seccomp-bpf`` makes only the traced system calls stop the
    tracee (the overhead is per exec and fork, not per system call); ``-s`` keeps long argv
    strings whole; ``-y`` names the path of a descriptor (``fchdir``). Raises
    :class:`SandboxUnavailable` without strace (install it: ``apt-get install strace``).
    """

    exe = _strace(binary)
    if exe is None:
        raise SandboxUnavailable(
            "strace is not installed: the runtime trace of the phase cannot be taken",
            fix="install strace (Debian/Ubuntu: apt-get install strace)",
        )
    return [
        exe,
        "-f",
        "--seccomp-bpf",
        "-q",
        "-e",
        f"trace={TRACE_SYSCALLS}",
        "-e",
        "signal=none",
        "-s",
        "65536",
        "-y",
        "-o",
        str(out),
        "--",
    ]


def finish_trace(spec: SandboxSpec, evidence_dir: Path | str) -> list[dict[str, Any]]:
    """After a traced phase: its trace as ``evidence_dir/exec_trace.jsonl`` (replacing any file the
    phase put there), bound like all evidence by the run's manifest. Returns the rows
    (:func:`evotree.harness.audit.trace.parse_strace`)."""

    if spec.trace is None:
        return []
    rows = write_trace(
        spec.trace,
        Path(evidence_dir) / TRACE_FILE,
        cwd=str(Path(spec.cwd).absolute()),
        extra=git_guard.after_phase(spec.trace),
        task_repos=git_guard.task_repositories(spec.trace),
    )
    git_prune.remove_copies(spec.trace)
    return rows


def _wrap(
    spec: SandboxSpec,
    argv: Sequence[str],
    exe: str,
    extra: list[str],
    *,
    guard: Sequence[tuple[str, Path, Path]] = (),
) -> list[str]:
    args = [exe, "--unshare-all"]
    if spec.network:
        args.append("--share-net")
    args += extra
    if not spec.userns and "--unshare-user" not in extra and disables_userns(exe):
        args += ["--unshare-user", "--disable-userns"]
    args += [
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "evotree-sandbox",
    ]
    args += system_args(spec.network)
    binds: list[tuple[str, Path, Path]] = []
    if spec.python:
        binds += [("--ro-bind", p, p) for p in python_paths()]
    binds += [("--ro-bind", Path(p), Path(p)) for p in spec.read_only]
    binds += [("--bind", Path(p), Path(p)) for p in spec.read_write]
    binds += list(guard)  # deeper than the folder that holds them: bound after it
    for option, source, dest in sorted(
        binds, key=lambda b: len(b[2].absolute().parts)
    ):  # parents first (stable)
        args += [option, str(source.absolute()), str(dest.absolute())]
    for path in sorted(spec.masked, key=lambda p: len(Path(p).parts)):
        args += ["--tmpfs", str(Path(path).absolute())]
    args += ["--remount-ro", "/", "--chdir", str(Path(spec.cwd).absolute()), "--"]
    limits = spec.limits.prlimit_args()
    if limits:
        args += [prlimit_path(), *limits, "--"]
    return args + list(argv)


def _nesting_args(policy: PolicySandbox, exe: str) -> list[str]:
    """Options of a judge phase that may nest sandboxes: its own user namespace in which it is not
    uid 0 (as root), and ``$EVOTREE_POLICY_SANDBOX`` (what the nested sandboxes may bind, or why
    there can be none here)."""
    status = check_policy_sandbox(exe)
    if not status.ok:
        value = {"error": status.reason, "fix": status.fix}
        return ["--setenv", ENV_POLICY_SANDBOX, json.dumps(value)]
    return [
        *judge_user_args(),
        "--setenv",
        ENV_POLICY_SANDBOX,
        json.dumps(policy_sandbox_spec(policy, exe)),
    ]


def policy_sandbox_spec(policy: PolicySandbox, binary: str | None = None) -> dict[str, Any]:
    """What a nested sandbox may bind, as ``$EVOTREE_POLICY_SANDBOX`` carries it.

    ``read_only``: the Python environment (:func:`python_paths`) and ``policy.read_only``.
    ``binary``: bwrap's path (default: the one this process uses); it must be visible inside the
    judge's sandbox (``/usr/bin/bwrap`` is).
    """
    exe = _binary(binary)
    if exe is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed", fix=INSTALL_FIX + ", " + OFF_FIX
        )
    paths = [*python_paths(), *(Path(p).absolute() for p in policy.read_only)]
    return {
        "bwrap": exe,
        "read_only": [str(p) for p in dict.fromkeys(paths)],
        "disable_userns": "--disable-userns" in bwrap_help(exe),
    }


def disables_userns(binary: str | None = None) -> bool:
    """Whether this bubblewrap forbids the sandbox further user namespaces here (``--disable-userns``,
    0.8 and later; it needs a user namespace of the sandbox's own, which a setuid bubblewrap on a
    host without unprivileged user namespaces cannot make). Probed once per binary."""
    exe = _binary(binary)
    return exe is not None and disable_userns_works(exe)


#: The launcher of a sandboxed phase (:func:`accounted`): argv[1] is the pid of the process that
#: must be its parent, argv[2] a ``cgroup.procs`` file to join first ("-": none), the rest the
#: bwrap command line.
#: Installed inside the sandbox before the phase's command (``python -I -S -c`` of this, then
#: exec): a seccomp filter whose ``execve``, ``execveat``, ``connect``, ``exit_group``, ``ptrace`` and
#: ``open``/``openat``/``openat2`` calls are reported to a listener (the tracer records the opens
#: of git storage only), and so are the calls that make or change a name (``symlink``, ``link``,
#: ``rename``, ``mknod`` and their ``*at`` forms; opens to write: the tracer rows those under a
#: ``.git`` folder by programs other than git, issue 29), which it hands out through the
#: inherited socket named by argv[1]
#: and closes. Refused (EPERM): calls of another ABI (``int 0x80``, x32: they would name other
#: numbers), ``io_uring_setup`` (io_uring operations bypass seccomp),
#: ``process_vm_readv``/``process_vm_writev`` (another process's memory: the machine's git, whose
#: opens are exempt, holds what it read; cross-memory attach of MPI falls back) and
#: ``pidfd_getfd`` (another process's descriptor: the machine's git's open pack). A filter cannot be
#: removed, and every process of the phase inherits it.
_TRACE_INSTALLER = r"""
import array, ctypes, os, platform, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
nrs = {"x86_64": (59, 322, 42, 231, 425, 0xC000003E, 317, 257, 437, 2, 101),
       "aarch64": (221, 281, 203, 94, 425, 0xC00000B7, 277, 56, 437, 56, 117)}
execve, execveat, connect, exit_group, uring, arch, sys_seccomp, openat, openat2, open_, ptrace = nrs[platform.machine()]
vm_readv, vm_writev = {"x86_64": (310, 311), "aarch64": (270, 271)}[platform.machine()]
pidfd_getfd = 438
def ins(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)
LD, JEQ, JGE, JSET, JA, RET, ST, LDM, AND = 0x20, 0x15, 0x35, 0x45, 0x05, 0x06, 0x02, 0x60, 0x54
ALLOW, NOTIFY, EPERM = 0x7FFF0000, 0x7FC00000, 0x00050001
# calls that make or change a name (issue 29: in a task's git directory only git writes; the
# tracer's write_row): symlink, symlinkat, link, linkat, rename, renameat, renameat2, mknod, mknodat
writes = {"x86_64": (88, 266, 86, 265, 82, 264, 316, 133, 259),
          "aarch64": (36, 36, 37, 37, 38, 38, 276, 33, 33)}[platform.machine()]
# open/openat: reported unless the call names no file's content (O_PATH); openat2's flags are
# behind a pointer: always reported. Opens to write are reported for write_row (and go on).
prog = b"".join([ins(LD, 0, 0, 4), ins(JEQ, 1, 0, arch), ins(RET, 0, 0, EPERM), ins(LD, 0, 0, 0),
                 ins(JGE, 28, 0, 0x40000000), ins(JEQ, 25, 0, execve), ins(JEQ, 24, 0, execveat),
                 ins(JEQ, 23, 0, connect), ins(JEQ, 22, 0, exit_group), ins(JEQ, 21, 0, openat2),
                 ins(JEQ, 20, 0, ptrace)]
                + [ins(JEQ, 19 - k, 0, nr) for k, nr in enumerate(writes)]
                + [ins(JEQ, 12, 0, uring), ins(JEQ, 11, 0, vm_readv), ins(JEQ, 10, 0, vm_writev),
                   ins(JEQ, 9, 0, pidfd_getfd),
                   ins(JEQ, 2, 0, openat), ins(JEQ, 3, 0, open_),
                   ins(RET, 0, 0, ALLOW),
                   ins(LD, 0, 0, 32), ins(JA, 0, 0, 1), ins(LD, 0, 0, 24),    # the flags: openat's, open's
                   ins(JSET, 1, 0, 0x200000),                                 # O_PATH
                   ins(RET, 0, 0, NOTIFY), ins(RET, 0, 0, ALLOW), ins(RET, 0, 0, EPERM)])
code = ctypes.create_string_buffer(prog)
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
fprog = Prog(len(prog) // 8, ctypes.addressof(code))
if libc.prctl(38, 1, 0, 0, 0) != 0:
    sys.exit("evotree: the runtime trace could not start (no_new_privs)")
# NEW_LISTENER (8) | SPEC_ALLOW (4): keep the CPU's speculative-store-bypass default; the kernel would
# otherwise switch it off for a filtered process (costly; it guards code sharing one address space)
listener = libc.syscall(sys_seccomp, 1, 12, ctypes.byref(fprog))
if listener < 0 and ctypes.get_errno() == 22:
    listener = libc.syscall(sys_seccomp, 1, 8, ctypes.byref(fprog))
if listener < 0:
    sys.exit("evotree: the runtime trace could not start (seccomp: " + os.strerror(ctypes.get_errno()) + ")")
try:
    out = socket.socket(fileno=int(sys.argv[1]))
    out.sendmsg([b"L"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [listener]))])
    out.close()
except OSError as exc:
    # the tracer is gone: this process holds the only listener, and its own exit (a reported
    # call) would wait on it for ever; closed, the filtered exit fails and the plain one ends it
    os.close(listener)
    sys.stderr.write("evotree: the runtime trace could not start (the tracer: " + str(exc) + ")\n")
    os._exit(1)
os.close(listener)
os.execvp(sys.argv[2], sys.argv[2:])
"""

#: Whether the seccomp tracer also reports ``open``/``openat``/``openat2`` (it records those of git
#: storage by programs other than the machine's git: git used as a library, objects read with zlib;
#: the audit judges). On by default; benchmarks switch it off to measure its cost.
TRACE_OPENS = True


def _seccomp_tracer_argv(out: Path | str) -> list[str]:
    """The compiled seccomp tracer's command line (before bwrap's); :class:`SandboxUnavailable`
    where it cannot be built (no C compiler: :func:`tracer_unavailable_reason`)."""
    compiled = compiled_tracer()
    if compiled is None:
        raise SandboxUnavailable(NO_COMPILER, fix=NO_COMPILER_FIX)
    installer = _TRACE_INSTALLER
    if not TRACE_OPENS:  # numbers no call has: the filter lets every open go by unreported
        installer = (
            installer.replace("317, 257, 437, 2,", "317, 99991, 99992, 99993,")
            .replace("277, 56, 437, 56,", "277, 99991, 99992, 99993,")
            .replace("(88, 266, 86, 265, 82, 264, 316, 133, 259)", "(99994,) * 9")
            .replace("(36, 36, 37, 37, 38, 38, 276, 33, 33)", "(99994,) * 9")
        )
    return [str(compiled), str(out), sys.executable, installer]


def tracer_unavailable_reason() -> str | None:
    """Why no runtime tracer can run here (``None``: one can): a phase with ``[sandbox] trace`` then
    runs untraced and its run says this."""
    if TRACER == "seccomp" and _seccomp_works():
        return None
    if _can_trace(_strace(None)):
        return None
    parts = []
    if TRACER == "seccomp" and compiled_tracer() is None:
        parts.append(NO_COMPILER)
    elif TRACER == "seccomp":
        parts.append(
            "seccomp user notification is refused here (Linux 5.9+, x86_64 or aarch64, and a container "
            "profile that allows it)"
        )
    parts.append(
        "strace is not installed"
        if _strace(None) is None
        else "strace cannot trace here (ptrace refused)"
    )
    return "; ".join(parts) + ". Fix: " + NO_COMPILER_FIX


#: where the install builds the tracer (``scripts/bootstrap``: ``python -m evotree.harness.sandbox build-tracer``)
INSTALLED_TRACER_DIR = Path(sys.prefix) / "libexec" / "evotree"


def compiled_tracer() -> Path | None:
    """The compiled seccomp tracer: the one the install built (:data:`INSTALLED_TRACER_DIR`, by
    the source's content hash), else one built once with the system's C compiler into
    ``~/.cache/evotree``; ``None`` where there is no compiler or the build fails (strace is the
    fallback then; :data:`NO_COMPILER` says why).

    The binary runs outside the sandbox, so only a file this user owns, in a directory no one
    else can write, is used; a phase cannot reach either place (neither is bound in a sandbox).
    """
    digest = tracer_digest()
    if digest is None:
        return None
    installed = INSTALLED_TRACER_DIR / f"seccomp-trace-{digest}"
    if owned_private(INSTALLED_TRACER_DIR) and owned_private(installed, executable=True):
        return installed
    return build_tracer(tracer_cache())


# ---------------------------------------------------------------------------- the check
@dataclass(frozen=True)
class SandboxStatus:
    """Whether a sandbox can start here: ``ok``, or ``reason`` and ``fix``."""

    ok: bool
    binary: str | None
    version: str | None = None
    reason: str | None = None
    fix: str | None = None
    startup_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "binary": self.binary,
            "version": self.version,
            "reason": self.reason,
            "fix": self.fix,
            "startup_ms": self.startup_ms,
        }


_PROBE = (
    "import sys\n"
    "s = dict(l.split(':', 1) for l in open('/proc/self/status') if ':' in l)\n"
    "print(s['CapEff'].strip(), s['NoNewPrivs'].strip(), open('/proc/1/cmdline').read() != '')\n"
)


def check_sandbox(binary: str | None = None) -> SandboxStatus:
    """Start a trivial sandbox (Python, the default limits) once per process and binary; say why it cannot run.

    ``binary``: a bwrap path (tests point it at a missing file); default :data:`BWRAP`, else
    the system's. The result is cached per binary; :func:`check_sandbox.cache_clear` forgets it.
    """
    return _check(binary if binary is not None else BWRAP)


@functools.lru_cache(maxsize=8)
def _check(binary: str | None) -> SandboxStatus:
    exe = _binary(binary)
    if exe is None:
        where = f"at {binary}" if binary is not None else "in /usr/bin, /bin or PATH"
        return SandboxStatus(
            False,
            None,
            reason=f"bubblewrap (bwrap) is not installed (looked {where})",
            fix=INSTALL_FIX + ", " + OFF_FIX,
        )
    try:
        version = subprocess.run(
            [exe, "--version"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(
            False,
            exe,
            reason=f"{exe} cannot be executed: {exc}",
            fix=INSTALL_FIX + ", " + OFF_FIX,
        )
    from evotree.core.config_execution import SandboxSection

    try:
        argv = wrap(
            SandboxSpec(
                cwd=Path("/tmp"), limits=SandboxPolicy.from_config(SandboxSection()).limits
            ),
            [sys.executable, "-I", "-S", "-c", _PROBE],
            binary=exe,
        )
    except SandboxUnavailable as exc:
        return SandboxStatus(False, exe, version, reason=exc.message, fix=exc.fix)
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(
            False,
            exe,
            version,
            reason=f"a trivial sandbox did not start: {exc}",
            fix=INSTALL_FIX + ", " + OFF_FIX,
        )
    took = round((time.perf_counter() - start) * 1000, 1)
    if proc.returncode != 0:
        message = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        reason, fix = _explain(message)
        return SandboxStatus(
            False,
            exe,
            version,
            reason=f"a trivial sandbox failed: {message} ({reason})",
            fix=fix + ", " + OFF_FIX,
        )
    fields_ = proc.stdout.split()
    if len(fields_) != 3 or int(fields_[0], 16) != 0 or fields_[1] != "1":
        return SandboxStatus(
            False,
            exe,
            version,
            reason=f"the sandbox kept privileges (CapEff, NoNewPrivs = {fields_[:2]}); "
            "this bubblewrap does not drop capabilities",
            fix="install bubblewrap 0.4 or newer, " + OFF_FIX,
        )
    return SandboxStatus(True, exe, version, startup_ms=took)


def _clear_checks() -> None:
    _check.cache_clear()
    _check_policy.cache_clear()


check_sandbox.cache_clear = _clear_checks  # type: ignore[attr-defined]

#: Run inside a nested policy sandbox by :func:`check_policy_sandbox`: effective capabilities,
#: no-new-privileges, whether a /proc is there.
_POLICY_PROBE = (
    "import ctypes, os\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "class H(ctypes.Structure):\n"
    "    _fields_ = [('version', ctypes.c_uint32), ('pid', ctypes.c_int)]\n"
    "class D(ctypes.Structure):\n"
    "    _fields_ = [('effective', ctypes.c_uint32), ('permitted', ctypes.c_uint32),\n"
    "                ('inheritable', ctypes.c_uint32)]\n"
    "h, d = H(0x20080522, 0), (D * 2)()\n"
    "assert libc.capget(ctypes.byref(h), d) == 0\n"
    "print(d[0].effective | d[1].effective | d[0].permitted | d[1].permitted, libc.prctl(39, 0, 0, 0, 0),\n"
    "      os.path.exists('/proc/self'), libc.unshare(0x10000000) == 0)\n"
)


def check_policy_sandbox(binary: str | None = None) -> SandboxStatus:
    """Whether a judge's sandbox can start a nested sandbox for candidate code here (once per process).

    Starts a judge-like sandbox (its own user namespace, not uid 0 inside) that starts a nested
    one (:func:`policy_sandbox_argv`) running Python, and checks that the nested process has no
    capabilities and no-new-privileges set. Cached like :func:`check_sandbox` (whose
    ``cache_clear`` forgets both).
    """
    return _check_policy(binary if binary is not None else BWRAP)


@functools.lru_cache(maxsize=8)
def _check_policy(binary: str | None) -> SandboxStatus:
    outer = _check(binary)
    if not outer.ok or outer.binary is None:
        return outer
    from evotree.core.config_execution import SandboxSection

    exe = outer.binary
    nest_fix = (
        "allow unprivileged user namespaces inside user namespaces (user.max_user_namespaces > 1; "
        "on Ubuntu 24.04 kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile that "
        "allows userns for bwrap)"
    )
    try:
        spec = policy_sandbox_spec(PolicySandbox(), exe)
        inner = policy_sandbox_argv(spec, None, [sys.executable, "-I", "-S", "-c", _POLICY_PROBE])
        argv = _wrap(
            SandboxSpec(
                cwd=Path("/tmp"), limits=SandboxPolicy.from_config(SandboxSection()).limits
            ),
            inner,
            exe,
            judge_user_args(),
        )
    except SandboxUnavailable as exc:
        return SandboxStatus(False, exe, outer.version, reason=exc.message, fix=exc.fix)
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
            env=sandbox_env(dict(os.environ)),
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return SandboxStatus(
            False,
            exe,
            outer.version,
            reason=f"a nested sandbox did not start: {exc}",
            fix=nest_fix + ", " + OFF_FIX,
        )
    took = round((time.perf_counter() - start) * 1000, 1)
    if proc.returncode != 0:
        message = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return SandboxStatus(
            False,
            exe,
            outer.version,
            reason=f"a sandbox cannot start a nested one here: {message}",
            fix=nest_fix + ", " + OFF_FIX,
        )
    seen = proc.stdout.split()
    if seen[:3] != ["0", "1", "False"] or (spec["disable_userns"] and seen[3:] != ["False"]):
        return SandboxStatus(
            False,
            exe,
            outer.version,
            reason=f"the nested sandbox kept privileges (capabilities, no-new-privileges, "
            f"/proc, a user namespace of its own = {seen})",
            fix="install bubblewrap 0.4 or newer, " + OFF_FIX,
        )
    return SandboxStatus(True, exe, outer.version, startup_ms=took)


def _explain(message: str) -> tuple[str, str]:
    low = message.lower()
    if (
        "uid map" in low
        or "user namespace" in low
        or "no permissions to creat" in low
        or "new namespace" in low
    ):
        return (
            "the kernel or a security policy forbids the namespaces bubblewrap needs",
            "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 "
            "also kernel.apparmor_restrict_unprivileged_userns=0), or run evotree as root, or in a container "
            "started with --security-opt seccomp=unconfined --security-opt apparmor=unconfined",
        )
    if "proc" in low and "mount" in low or "operation not permitted" in low:
        return (
            "mounts are not permitted here (a container's default seccomp or AppArmor profile)",
            "start the container with --security-opt seccomp=unconfined --security-opt apparmor=unconfined "
            "(or --privileged)",
        )
    return ("bubblewrap failed", INSTALL_FIX)


def require_sandbox(section: SandboxSection) -> SandboxStatus | None:
    """Refuse (``SandboxUnavailable``) unless a sandbox can run or the policy says ``mode = "off"``.

    Returns the status when a sandbox will be used, ``None`` when the policy turns it off.
    """
    if section.mode == "off":
        return None
    status = check_sandbox()
    if not status.ok:
        raise SandboxUnavailable(
            f"the champion's policy runs every phase in a sandbox, and none can start here: {status.reason}",
            fix=status.fix,
            binary=status.binary,
            reason=status.reason,
        )
    return status


def _main(argv: list[str]) -> int:
    """``python -m evotree.harness.sandbox build-tracer``: the install's build step of the tracer."""
    if argv[:1] != ["build-tracer"]:
        print("usage: python -m evotree.harness.sandbox build-tracer", file=sys.stderr)
        return 2
    built = build_tracer(INSTALLED_TRACER_DIR)
    if built is None:
        print(f"evotree: warning: {NO_COMPILER}; {NO_COMPILER_FIX}", file=sys.stderr)
        return 1
    print(built)
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
