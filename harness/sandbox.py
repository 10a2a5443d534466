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
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError
from evotree.harness import git_guard
from evotree.harness.sandbox_box import SandboxBox
from evotree.harness.sandbox_cgroup import PidsCgroup
from evotree.harness.sandbox_copy import CopyReport, copy_regular_files
from evotree.harness.sandbox_report import sandbox_warning
from evotree.harness.audit.trace import TRACE_SYSCALLS
from evotree.harness.audit.trace import TRACE_FILE
from evotree.harness.audit.trace import write_trace

if TYPE_CHECKING:
    from evotree.core.config import SandboxSection

__all__ = [
    "BWRAP",
    "STRACE",
    "TRACER",
    "ENV_POLICY_SANDBOX",
    "JUDGE_UID",
    "POLICY_CANDIDATE_DIR",
    "SANDBOX_HOME",
    "CopyReport",
    "Limits",
    "PidsCgroup",
    "PolicySandbox",
    "SandboxBox",
    "SandboxPolicy",
    "SandboxSpec",
    "SandboxStatus",
    "SandboxUnavailable",
    "NO_COMPILER",
    "PHASE_ENV",
    "PHASE_ENV_PREFIXES",
    "accounted",
    "can_trace",
    "tracer_unavailable_reason",
    "finish_trace",
    "trace_argv",
    "check_policy_sandbox",
    "check_sandbox",
    "copy_regular_files",
    "disables_userns",
    "policy_sandbox_argv",
    "policy_sandbox_spec",
    "require_sandbox",
    "sandbox_env",
    "sandbox_warning",
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
#: ``$HOME`` inside a sandbox: a folder of its private ``/tmp``.
SANDBOX_HOME = "/tmp/home"
#: The judge phase's environment variable that says what a nested sandbox for candidate code
#: may bind (JSON: ``{"bwrap": path, "read_only": [paths]}``), or why there can be none
#: (``{"error": reason, "fix": text}``). Set by bubblewrap for the judge phase only.
ENV_POLICY_SANDBOX = "EVOTREE_POLICY_SANDBOX"
#: The uid (and gid) of a judge that may nest, inside its user namespace, when evotree runs as
#: root: a process without capabilities may only create a user namespace that maps its parent's
#: uid 0 if it held CAP_SETFCAP (Linux >= 5.12), so the judge must not be uid 0 in its own.
#: 65534 is ``nobody`` (``nogroup``), which ``/etc/passwd`` names everywhere. On the host it is
#: still evotree's uid: files it writes belong to evotree's user.
JUDGE_UID = 65534
#: Where the candidate's files appear inside a policy's nested sandbox (its working directory).
POLICY_CANDIDATE_DIR = "/candidate"

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: /etc entries a phase may read: what the loader, Python, git, torch and TLS need. Never
#: shadow, ssh, sudoers or machine-id.
_ETC = (
    "alternatives",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "passwd",
    "group",
    "nsswitch.conf",
    "localtime",
    "timezone",
    "hosts",
    "host.conf",
    "resolv.conf",
    "gai.conf",
    "protocols",
    "services",
    "ssl",
    "ca-certificates",
    "ca-certificates.conf",
    "pki",
    "crypto-policies",
    "mime.types",
    "os-release",
    "debian_version",
    "gitconfig",
    "inputrc",
    "terminfo",
    "localtime",
)
#: Device nodes of GPUs, bound when the host has them (CUDA needs them; ROCm: kfd and dri).
_GPU_DEVICES = (
    "nvidiactl",
    "nvidia-uvm",
    "nvidia-uvm-tools",
    "nvidia-modeset",
    "nvidia-caps",
    "dri",
    "kfd",
)
#: The evotree packages whose folders the sandbox binds (setup.cfg's package_dir).
_PACKAGES = (
    "evotree",
    "evotree.harness",
    "evotree.diagnostics",
    "evotree.skills",
    "evotree.memory",
    "evotree.gates",
    "evotree.domains",
)
_INSTALL_FIX = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
)
_OFF_FIX = (
    'or, to run phases without isolation, set [sandbox] mode = "off" in the champion\'s '
    "evotree.toml (runs are then marked unsandboxed)"
)


class SandboxUnavailable(EvotreeError):
    """Bubblewrap cannot run here and the champion's policy requires it: nothing was started."""

    exit_code = 36
    code = "sandbox_unavailable"


# ---------------------------------------------------------------------------- the spec
@dataclass(frozen=True)
class Limits:
    """Resource limits of one phase; 0 means unlimited."""

    memory_mb: int = 0  #: RLIMIT_DATA, MiB
    max_processes: int = (
        0  #: RLIMIT_NPROC (processes and threads; for uid 0, counted by the supervisor)
    )
    max_output_mb: int = 0  #: RLIMIT_FSIZE, MiB (largest file written)

    def prlimit_args(self) -> list[str]:
        """``prlimit`` options (soft = hard: a phase cannot raise them) for the limits that are set."""
        args = []
        if self.memory_mb:
            args.append(f"--data={self.memory_mb * 2**20}:{self.memory_mb * 2**20}")
        if self.max_processes:
            args.append(f"--nproc={self.max_processes}:{self.max_processes}")
        if self.max_output_mb:
            args.append(f"--fsize={self.max_output_mb * 2**20}:{self.max_output_mb * 2**20}")
        return args


@dataclass(frozen=True)
class PolicySandbox:
    """The judge will run candidate code in nested sandboxes: what they may read besides the system,
    the Python environment and the candidate's files (the champion's ``[sandbox].read_paths``)."""

    read_only: tuple[Path, ...] = ()


@dataclass(frozen=True)
class SandboxSpec:
    """What one sandboxed process sees and may do.

    Paths are absolute and appear inside at the same path. ``read_only`` and ``read_write``
    are bound in order of depth, so a writable folder inside a read-only one stays writable;
    ``masked`` paths are then covered by an empty tmpfs (a folder inside a bound one that the
    process must not see).
    """

    cwd: Path
    read_only: tuple[Path, ...] = ()
    read_write: tuple[Path, ...] = ()
    masked: tuple[Path, ...] = ()
    network: bool = False
    limits: Limits = field(default_factory=Limits)
    #: Bind the Python environment and evotree's package folders (read-only).
    python: bool = True
    #: The judge phase of a domain that runs candidate code: give the phase a user namespace in
    #: which it can nest sandboxes, and ``$EVOTREE_POLICY_SANDBOX`` (see :func:`policy_sandbox_argv`).
    policy: PolicySandbox | None = None
    #: Let the sandboxed processes create user namespaces of their own (nested sandboxes). Off by
    #: default: ``--disable-userns`` where this bubblewrap has it (0.8 and later).
    userns: bool = False
    #: Trace what runs: every program that runs in the sandbox (argv, working
    #: directory, exit status) and every connect, written to this file by a tracer outside the
    #: sandbox that nothing inside can see, stop or switch off (:data:`TRACER`: the compiled
    #: seccomp user-notification tracer, or strace). Give a path outside
    #: every read-write bind (the run directory, which the phase sees read-only); after the
    #: phase, :func:`finish_trace` turns it into ``evidence/<phase>/exec_trace.jsonl``.
    trace: Path | None = None
    #: Names of environment variables the phase gets besides the fixed set (:func:`sandbox_env`):
    #: the champion's ``[sandbox] pass_env``.
    pass_env: tuple[str, ...] = ()


def _find_tool(name: str, chosen: str | None) -> str | None:
    """``chosen`` when it is an executable file, else ``name`` in /usr/bin, /bin, then ``PATH``."""
    if chosen is not None:
        return chosen if os.access(chosen, os.X_OK) and os.path.isfile(chosen) else None
    for candidate in (f"/usr/bin/{name}", f"/bin/{name}"):
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def _binary(binary: str | None = None) -> str | None:
    return _find_tool("bwrap", binary if binary is not None else BWRAP)


def _exposable(path: Path, what: str) -> Path:
    """``path``, unless binding it would expose a repository or evotree's state."""
    for marker in (".git", ".evotree"):
        if (path / marker).exists():
            raise SandboxUnavailable(
                f"the sandbox would expose {path}: it is {what} and holds {marker} (a repository or a "
                "workspace), which a phase must never see",
                fix="install evotree outside the repository (a virtualenv elsewhere, or a wheel), "
                + _OFF_FIX,
            )
    return path


@functools.lru_cache(maxsize=1)
def python_paths() -> tuple[Path, ...]:
    """Read-only folders a phase needs to run Python with evotree importable.

    Always: sys.prefix, sys.base_prefix (and their exec twins), the interpreter's real install
    prefix, and each evotree package's folder (for an editable install these are the
    checkout's package folders, never the checkout; one that holds ``.git`` or ``.evotree`` is
    refused). Also the folders a fresh interpreter puts on ``sys.path`` by itself (``python -E
    -P``: site-packages, the user site, folders added by ``.pth`` files), except any that would
    expose a repository, a workspace, the home directory or ``/``: those are left out (a
    package imported from there is not importable inside).
    """
    found: list[Path] = []
    for raw in (
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
        os.path.dirname(os.path.dirname(os.path.realpath(sys.executable))),
    ):
        found.append(Path(raw))
    for name in _PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        for location in (spec.submodule_search_locations or []) if spec else []:
            found.append(_exposable(Path(location), f"the folder of the {name} package"))
    home = Path.home().absolute()
    for raw in _site_path():
        path = Path(raw).absolute()
        if path == Path("/") or path == home or path in home.parents:
            continue
        if path.is_dir() and any((path / marker).exists() for marker in (".git", ".evotree")):
            continue
        found.append(path)
    out: list[Path] = []
    for path in sorted({p.absolute() for p in found if p.exists()}, key=lambda p: len(p.parts)):
        if str(path).startswith("/usr/") or path == Path("/usr"):
            continue  # already bound with the system
        if any(path == kept or kept in path.parents for kept in out):
            continue
        out.append(_exposable(path, "part of the Python environment") if path.is_dir() else path)
    return tuple(out)


def _site_path() -> list[str]:
    """``sys.path`` of a fresh interpreter like ours, without the environment or the current folder."""
    try:
        proc = subprocess.run(
            [sys.executable, "-E", "-P", "-c", "import json, sys; print(json.dumps(sys.path))"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        return [p for p in json.loads(proc.stdout) if isinstance(p, str) and p.startswith("/")]
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return []


def _system_args(network: bool, *, proc: bool = True) -> list[str]:
    """Binds of the system. ``proc``: mount ``/proc`` of the sandbox's PID namespace (a nested
    sandbox cannot: the kernel refuses a new procfs in a user namespace below one whose ``/proc``
    has covered folders)."""
    args: list[str] = []
    for path in _SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for name in sorted(set(_ETC)):
        if name == "resolv.conf" and not network:
            continue
        if os.path.lexists(f"/etc/{name}"):
            args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    if proc:
        args += ["--proc", "/proc"]
        if os.path.isdir(
            "/proc/sys"
        ):  # read-only: writable by the host's uid 0 without capabilities
            args += ["--ro-bind", "/proc/sys", "/proc/sys"]
            # except the user namespace limits, which are per user namespace and writable only with
            # CAP_SYS_RESOURCE in it: a nested sandbox sets its own to forbid further namespaces
            if os.path.isdir("/proc/sys/user"):
                args += ["--bind", "/proc/sys/user", "/proc/sys/user"]
    args += ["--dev", "/dev", "--tmpfs", "/dev/shm"]
    for name in sorted(os.listdir("/dev")):
        if name.startswith("nvidia") and name[6:].isdigit() or name in _GPU_DEVICES:
            args += ["--dev-bind-try", f"/dev/{name}", f"/dev/{name}"]
    if os.path.isdir("/sys"):
        args += ["--ro-bind-try", "/sys", "/sys"]
    args += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--dir", SANDBOX_HOME]
    return args


def wrap(spec: SandboxSpec, argv: Sequence[str], *, binary: str | None = None) -> list[str]:
    """The bwrap command line that runs ``argv`` in the sandbox described by ``spec``.

    Raises :class:`SandboxUnavailable` when there is no bwrap binary (``binary``: a path, for
    tests and benchmarks; default :data:`BWRAP` or the system's).
    """
    exe = _binary(binary)
    if exe is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed", fix=_INSTALL_FIX + ", " + _OFF_FIX
        )
    guard = _guard_task_repositories(spec)
    nesting = _nesting_args(spec.policy, exe) if spec.policy is not None else []
    args = _wrap(spec, argv, exe, nesting, guard=guard)
    if spec.trace is not None:
        seccomp = TRACER == "seccomp" and _seccomp_tracing(spec) and _seccomp_works()
        args = (_seccomp_tracer_argv(spec.trace) if seccomp else trace_argv(spec.trace)) + args
    return args


def _guard_task_repositories(spec: SandboxSpec) -> list[tuple[str, Path]]:
    """A traced phase's task repositories (git directories in its read-write folders): their
    state recorded beside the trace, and the binds that lock their references, HEAD and config
    (:mod:`evotree.harness.git_guard`); :func:`finish_trace` compares them after the phase."""
    if spec.trace is None:
        return []
    return git_guard.before_phase(spec.read_write, spec.trace)


def _seccomp_tracing(spec: SandboxSpec) -> bool:
    """The seccomp tracer needs Python inside the sandbox (its installer) and a known ABI."""
    import platform

    if TRACER != "seccomp" or not spec.python or platform.machine() not in ("x86_64", "aarch64"):
        return False
    release = os.uname().release.split(".")
    try:
        return (int(release[0]), int(release[1])) >= (5, 9)  # user notification with CONTINUE
    except (ValueError, IndexError):
        return False


def _strace(binary: str | None = None) -> str | None:
    return _find_tool("strace", binary if binary is not None else STRACE)


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
    import tempfile

    if (
        not _seccomp_tracing(SandboxSpec(cwd=Path("/")))
        or compiled_tracer() is None
        or not check_sandbox().ok
    ):
        return False
    # a success is remembered per kernel, bwrap and tracer (each evotree process would otherwise pay
    # ~0.1 s); were it stale, a traced phase fails closed with the installer's reason
    import hashlib

    tracer = compiled_tracer()
    key = hashlib.sha256(
        f"{os.uname().release}|{_binary(None)}|{tracer}|{sys.executable}".encode()
    ).hexdigest()[:16]
    marker = _tracer_cache() / f"seccomp-probe-{key}.ok"
    if _owned_private(_tracer_cache()) and marker.is_file() and not marker.is_symlink():
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
    if works and _owned_private(_tracer_cache()):
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
    return write_trace(
        spec.trace,
        Path(evidence_dir) / TRACE_FILE,
        cwd=str(Path(spec.cwd).absolute()),
        extra=git_guard.after_phase(spec.trace),
    )


def _wrap(
    spec: SandboxSpec,
    argv: Sequence[str],
    exe: str,
    extra: list[str],
    *,
    guard: Sequence[tuple[str, Path]] = (),
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
    args += _system_args(spec.network)
    binds: list[tuple[str, Path]] = []
    if spec.python:
        binds += [("--ro-bind", p) for p in python_paths()]
    binds += [("--ro-bind", Path(p)) for p in spec.read_only]
    binds += [("--bind", Path(p)) for p in spec.read_write]
    binds += list(guard)  # deeper than the folder that holds them: bound after it
    for option, path in sorted(
        binds, key=lambda b: len(b[1].absolute().parts)
    ):  # parents first (stable)
        args += [option, str(path.absolute()), str(path.absolute())]
    for path in sorted(spec.masked, key=lambda p: len(Path(p).parts)):
        args += ["--tmpfs", str(Path(path).absolute())]
    args += ["--remount-ro", "/", "--chdir", str(Path(spec.cwd).absolute()), "--"]
    limits = spec.limits.prlimit_args()
    if limits:
        args += [_prlimit(), *limits, "--"]
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
        *_judge_user_args(),
        "--setenv",
        ENV_POLICY_SANDBOX,
        json.dumps(policy_sandbox_spec(policy, exe)),
    ]


def _judge_user_args() -> list[str]:
    args = ["--unshare-user"]
    if os.getuid() == 0:
        args += ["--uid", str(JUDGE_UID), "--gid", str(JUDGE_UID)]
    return args


def policy_sandbox_spec(policy: PolicySandbox, binary: str | None = None) -> dict[str, Any]:
    """What a nested sandbox may bind, as ``$EVOTREE_POLICY_SANDBOX`` carries it.

    ``read_only``: the Python environment (:func:`python_paths`) and ``policy.read_only``.
    ``binary``: bwrap's path (default: the one this process uses); it must be visible inside the
    judge's sandbox (``/usr/bin/bwrap`` is).
    """
    exe = _binary(binary)
    if exe is None:
        raise SandboxUnavailable(
            "bubblewrap (bwrap) is not installed", fix=_INSTALL_FIX + ", " + _OFF_FIX
        )
    paths = [*python_paths(), *(Path(p).absolute() for p in policy.read_only)]
    return {
        "bwrap": exe,
        "read_only": [str(p) for p in dict.fromkeys(paths)],
        "disable_userns": "--disable-userns" in _bwrap_help(exe),
    }


def disables_userns(binary: str | None = None) -> bool:
    """Whether this bubblewrap forbids the sandbox further user namespaces here (``--disable-userns``,
    0.8 and later; it needs a user namespace of the sandbox's own, which a setuid bubblewrap on a
    host without unprivileged user namespaces cannot make). Probed once per binary."""
    exe = _binary(binary)
    return exe is not None and _disable_userns_works(exe)


@functools.lru_cache(maxsize=4)
def _disable_userns_works(exe: str) -> bool:
    if "--disable-userns" not in _bwrap_help(exe):
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
def _bwrap_help(exe: str) -> str:
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
            fix=str(spec.get("fix") or _INSTALL_FIX),
        )
    exe = _binary(str(spec["bwrap"]))
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
    args += _system_args(False, proc=False)
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


#: The launcher of a sandboxed phase (:func:`accounted`): argv[1] is the pid of the process that
#: must be its parent, argv[2] a ``cgroup.procs`` file to join first ("-": none), the rest the
#: bwrap command line.
#: Installed inside the sandbox before the phase's command (``python -I -S -c`` of this, then
#: exec): a seccomp filter whose ``execve``, ``execveat``, ``connect``, ``exit_group`` and
#: ``open``/``openat``/``openat2`` calls are reported to a listener (the tracer records the opens
#: of git storage only), which it hands out through the inherited socket named by argv[1]
#: and closes. Refused (EPERM): calls of another ABI (``int 0x80``, x32: they would name other
#: numbers) and ``io_uring_setup`` (io_uring operations bypass seccomp). A filter cannot be
#: removed, and every process of the phase inherits it.
_TRACE_INSTALLER = r"""
import array, ctypes, os, platform, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
nrs = {"x86_64": (59, 322, 42, 231, 425, 0xC000003E, 317, 257, 437, 2),
       "aarch64": (221, 281, 203, 94, 425, 0xC00000B7, 277, 56, 437, 56)}
execve, execveat, connect, exit_group, uring, arch, sys_seccomp, openat, openat2, open_ = nrs[platform.machine()]
def ins(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)
LD, JEQ, JGE, JSET, JA, RET, ST, LDM, AND = 0x20, 0x15, 0x35, 0x45, 0x05, 0x06, 0x02, 0x60, 0x54
ALLOW, NOTIFY, EPERM = 0x7FFF0000, 0x7FC00000, 0x00050001
# open/openat: reported unless the call cannot read a file's content (its flags: O_PATH, O_WRONLY,
# or O_CREAT|O_EXCL -- a new empty file); openat2's flags are behind a pointer: always reported
prog = b"".join([ins(LD, 0, 0, 4), ins(JEQ, 1, 0, arch), ins(RET, 0, 0, EPERM), ins(LD, 0, 0, 0),
                 ins(JGE, 21, 0, 0x40000000), ins(JEQ, 18, 0, execve), ins(JEQ, 17, 0, execveat),
                 ins(JEQ, 16, 0, connect), ins(JEQ, 15, 0, exit_group), ins(JEQ, 14, 0, openat2),
                 ins(JEQ, 15, 0, uring), ins(JEQ, 2, 0, openat), ins(JEQ, 3, 0, open_),
                 ins(RET, 0, 0, ALLOW),
                 ins(LD, 0, 0, 32), ins(JA, 0, 0, 1), ins(LD, 0, 0, 24),      # the flags: openat's, open's
                 ins(ST, 0, 0, 0), ins(JSET, 6, 0, 0x200000),                 # O_PATH
                 ins(AND, 0, 0, 0xC0), ins(JEQ, 4, 0, 0xC0),                  # O_CREAT | O_EXCL
                 ins(LDM, 0, 0, 0), ins(AND, 0, 0, 3), ins(JEQ, 1, 0, 1),     # O_WRONLY
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
out = socket.socket(fileno=int(sys.argv[1]))
out.sendmsg([b"L"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [listener]))])
out.close()
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
        installer = installer.replace("317, 257, 437, 2)", "317, 99991, 99992, 99993)").replace(
            "277, 56, 437, 56)", "277, 99991, 99992, 99993)"
        )
    return [str(compiled), str(out), sys.executable, installer]


#: Why the seccomp tracer cannot run where no C compiler builds it (the one seccomp
#: tracer is the compiled one; strace is the fallback).
NO_COMPILER = (
    "the seccomp tracer could not be built: no C compiler (cc, gcc or clang) on PATH, or the "
    "build of harness/seccomp_trace.c failed"
)
NO_COMPILER_FIX = (
    "install a C compiler (Debian/Ubuntu: apt-get install gcc) so that evotree builds its tracer, "
    "or strace (apt-get install strace), the slower fallback (BENCHMARKS.md §21)"
)


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


#: The compiled seccomp tracer's source (BENCHMARKS.md §21: a fraction of the cost per reported
#: call of the Python tracer it replaced, and of strace).
TRACER_SOURCE = Path(__file__).with_name("seccomp_trace.c")


def _tracer_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evotree"


#: where the install builds the tracer (``scripts/bootstrap``: ``python -m evotree.harness.sandbox build-tracer``)
INSTALLED_TRACER_DIR = Path(sys.prefix) / "libexec" / "evotree"
#: the system's C compilers, tried before PATH's (the tracer runs outside every sandbox)
_COMPILERS = ("/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang")


def _tracer_digest() -> str | None:
    import hashlib

    try:
        source = TRACER_SOURCE.read_bytes()
    except OSError:
        return None
    return hashlib.sha256(source + platform_tag().encode()).hexdigest()[:16]


def _compiler() -> str | None:
    for path in _COMPILERS:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def compiled_tracer() -> Path | None:
    """The compiled seccomp tracer: the one the install built (:data:`INSTALLED_TRACER_DIR`, by
    the source's content hash), else one built once with the system's C compiler into
    ``~/.cache/evotree``; ``None`` where there is no compiler or the build fails (strace is the
    fallback then; :data:`NO_COMPILER` says why).

    The binary runs outside the sandbox, so only a file this user owns, in a directory no one
    else can write, is used; a phase cannot reach either place (neither is bound in a sandbox).
    """
    digest = _tracer_digest()
    if digest is None:
        return None
    installed = INSTALLED_TRACER_DIR / f"seccomp-trace-{digest}"
    if _owned_private(INSTALLED_TRACER_DIR) and _owned_private(installed, executable=True):
        return installed
    return build_tracer(_tracer_cache())


def build_tracer(folder: Path) -> Path | None:
    """Build the tracer into ``folder`` (made private: 0700) unless a binary of this source is
    there already; the binary, or ``None`` without a compiler or when the build fails."""
    digest = _tracer_digest()
    if digest is None:
        return None
    cache = folder
    binary = cache / f"seccomp-trace-{digest}"
    if _owned_private(cache) and _owned_private(binary, executable=True):
        return binary
    compiler = _compiler()
    if compiler is None:
        return None
    try:
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(cache, 0o700)
    except OSError:
        return None
    if not _owned_private(cache):
        return None
    tmp = cache / f".seccomp-trace-{digest}.{os.getpid()}.tmp"
    try:
        proc = subprocess.run(
            [compiler, "-O2", "-pthread", "-o", str(tmp), str(TRACER_SOURCE)],
            capture_output=True,
            timeout=120,
            check=False,
        )
        if proc.returncode != 0:
            return None
        os.chmod(tmp, 0o700)
        os.replace(tmp, binary)
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        tmp.unlink(missing_ok=True)
    return binary if _owned_private(binary, executable=True) else None


def platform_tag() -> str:
    """The machine the compiled tracer is built for (part of its cache key)."""
    import platform

    return f"{platform.system()}-{platform.machine()}"


def _owned_private(path: Path, *, executable: bool = False) -> bool:
    """``path`` is this user's, not a symlink, and no one else can write it."""
    try:
        info = path.lstat()
    except OSError:
        return False
    import stat

    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        return False
    if executable:
        return stat.S_ISREG(info.st_mode) and bool(info.st_mode & 0o100)
    return stat.S_ISDIR(info.st_mode)


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


def _prlimit() -> str:
    for candidate in ("/usr/bin/prlimit", "/bin/prlimit"):
        if os.access(candidate, os.X_OK):
            return candidate
    raise SandboxUnavailable(
        "prlimit (util-linux) is not installed: the sandbox cannot set the phase's limits",
        fix="install util-linux (apt-get install util-linux), or set the [sandbox] limits to 0",
    )


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
            fix=_INSTALL_FIX + ", " + _OFF_FIX,
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
            fix=_INSTALL_FIX + ", " + _OFF_FIX,
        )
    from evotree.core.config import SandboxSection

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
            fix=_INSTALL_FIX + ", " + _OFF_FIX,
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
            fix=fix + ", " + _OFF_FIX,
        )
    fields_ = proc.stdout.split()
    if len(fields_) != 3 or int(fields_[0], 16) != 0 or fields_[1] != "1":
        return SandboxStatus(
            False,
            exe,
            version,
            reason=f"the sandbox kept privileges (CapEff, NoNewPrivs = {fields_[:2]}); "
            "this bubblewrap does not drop capabilities",
            fix="install bubblewrap 0.4 or newer, " + _OFF_FIX,
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
    from evotree.core.config import SandboxSection

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
            _judge_user_args(),
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
            fix=nest_fix + ", " + _OFF_FIX,
        )
    took = round((time.perf_counter() - start) * 1000, 1)
    if proc.returncode != 0:
        message = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
        return SandboxStatus(
            False,
            exe,
            outer.version,
            reason=f"a sandbox cannot start a nested one here: {message}",
            fix=nest_fix + ", " + _OFF_FIX,
        )
    seen = proc.stdout.split()
    if seen[:3] != ["0", "1", "False"] or (spec["disable_userns"] and seen[3:] != ["False"]):
        return SandboxStatus(
            False,
            exe,
            outer.version,
            reason=f"the nested sandbox kept privileges (capabilities, no-new-privileges, "
            f"/proc, a user namespace of its own = {seen})",
            fix="install bubblewrap 0.4 or newer, " + _OFF_FIX,
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
    return ("bubblewrap failed", _INSTALL_FIX)


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


# ---------------------------------------------------------------------------- the policy
@dataclass(frozen=True)
class SandboxPolicy:
    """The champion's ``[sandbox]`` section as the phases apply it.

    ``forbidden``: folders no bind may overlap (the workspace's repository): a ``read_paths``
    entry inside, equal to or above one of them is refused.
    """

    mode: str = "bwrap"
    train_network: bool = False
    eval_network: bool = False
    limits: Limits = field(default_factory=Limits)
    read_paths: tuple[str, ...] = ()
    candidate_max_files: int = 100_000
    candidate_max_mb: int = 65_536
    forbidden: tuple[str, ...] = ()
    #: [sandbox] trace: the train-side phases run under the runtime trace (:func:`finish_trace`)
    trace: bool = False
    #: [sandbox] pass_env: variables of evotree's environment the phases also get (:func:`sandbox_env`)
    pass_env: tuple[str, ...] = ()

    @property
    def enabled(self) -> bool:
        return self.mode != "off"

    @classmethod
    def from_config(
        cls, section: SandboxSection, *, forbidden: Iterable[Path | str] = ()
    ) -> SandboxPolicy:
        return cls(
            mode=section.mode,
            train_network=section.train_network,
            eval_network=section.eval_network,
            limits=Limits(section.memory_mb, section.max_processes, section.max_output_mb),
            read_paths=tuple(section.read_paths),
            candidate_max_files=section.candidate_max_files,
            candidate_max_mb=section.candidate_max_mb,
            forbidden=tuple(str(p) for p in forbidden),
            trace=bool(getattr(section, "trace", False)),
            pass_env=tuple(getattr(section, "pass_env", ()) or ()),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> SandboxPolicy:
        """From :meth:`to_dict` (a Ray task's spec); the default (a sandbox) when absent."""
        if not data:
            return cls()
        values = dict(data)
        values["limits"] = Limits(**values.get("limits", {}))
        for key in ("read_paths", "forbidden", "pass_env"):
            values[key] = tuple(values.get(key, ()))
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "train_network": self.train_network,
            "eval_network": self.eval_network,
            "limits": {
                "memory_mb": self.limits.memory_mb,
                "max_processes": self.limits.max_processes,
                "max_output_mb": self.limits.max_output_mb,
            },
            "read_paths": list(self.read_paths),
            "candidate_max_files": self.candidate_max_files,
            "candidate_max_mb": self.candidate_max_mb,
            "forbidden": list(self.forbidden),
            "trace": self.trace,
            "pass_env": list(self.pass_env),
        }

    def extra_read_only(self) -> tuple[Path, ...]:
        """``read_paths`` that exist, after refusing any that overlaps a forbidden folder."""
        out = []
        for raw in self.read_paths:
            path = Path(os.path.realpath(raw))
            for bad in self.forbidden:
                bad_path = Path(os.path.realpath(bad))
                if path == bad_path or bad_path in path.parents or path in bad_path.parents:
                    raise SandboxUnavailable(
                        f"[sandbox].read_paths entry {raw} overlaps the workspace's repository {bad}: "
                        "a phase would see the repository",
                        fix="list folders outside the repository (datasets, model caches) in [sandbox].read_paths",
                    )
            if path.exists():
                out.append(path)
        return tuple(out)


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
