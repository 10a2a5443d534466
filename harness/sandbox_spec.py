"""What one sandboxed phase is given: the spec of a sandbox (:class:`SandboxSpec`, its
:class:`Limits`, the judge's :class:`PolicySandbox`), the champion's ``[sandbox]`` policy as the
phases apply it (:class:`SandboxPolicy`), the fixed names a sandbox uses inside, and the error a
phase raises when no sandbox can start (:class:`SandboxUnavailable`). Data only: the bwrap
command line is built by :mod:`evotree.harness.sandbox`."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError

if TYPE_CHECKING:
    from evotree.core.config_execution import SandboxSection

__all__ = [
    "ENV_POLICY_SANDBOX",
    "INSTALL_FIX",
    "JUDGE_UID",
    "OFF_FIX",
    "POLICY_CANDIDATE_DIR",
    "SANDBOX_HOME",
    "Limits",
    "PolicySandbox",
    "SandboxPolicy",
    "SandboxSpec",
    "SandboxUnavailable",
]


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


INSTALL_FIX = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
)


OFF_FIX = (
    'or, to run phases without isolation, set [sandbox] mode = "off" in the champion\'s '
    "evotree.toml (runs are then marked unsandboxed)"
)


class SandboxUnavailable(EvotreeError):
    """Bubblewrap cannot run here and the champion's policy requires it: nothing was started."""

    exit_code = 36
    code = "sandbox_unavailable"


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
    #: Read-only folders the candidate's code writes in an earlier phase besides those holding a
    #: read-write one (the shared cache the prepare phase writes, read by the train phase): a
    #: search for task repositories cut there hides what lies beyond the cut instead of
    #: refusing the phase (:func:`evotree.harness.git_guard.before_phase`).
    written: tuple[Path, ...] = ()


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
