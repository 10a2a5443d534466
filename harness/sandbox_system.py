"""What of the host a sandbox uses: the tools it runs (bubblewrap, strace, prlimit, found in
the system's folders before ``PATH``), the system folders and ``/etc`` files it binds read-only,
and the Python environment a phase needs (:func:`python_paths`, never a folder that would expose
a repository or evotree's state)."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from evotree.harness.sandbox_spec import OFF_FIX, SANDBOX_HOME, SandboxUnavailable

__all__ = [
    "ETC_FILES",
    "GPU_DEVICES",
    "PACKAGES",
    "SYSTEM_DIRS",
    "find_tool",
    "prlimit_path",
    "python_paths",
    "system_args",
]


SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


#: /etc entries a phase may read: what the loader, Python, git, torch and TLS need. Never
#: shadow, ssh, sudoers or machine-id.
ETC_FILES = (
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
GPU_DEVICES = (
    "nvidiactl",
    "nvidia-uvm",
    "nvidia-uvm-tools",
    "nvidia-modeset",
    "nvidia-caps",
    "dri",
    "kfd",
)


#: The evotree packages whose folders the sandbox binds (setup.cfg's package_dir).
PACKAGES = (
    "evotree",
    "evotree.harness",
    "evotree.diagnostics",
    "evotree.skills",
    "evotree.memory",
    "evotree.gates",
    "evotree.domains",
)


def find_tool(name: str, chosen: str | None) -> str | None:
    """``chosen`` when it is an executable file, else ``name`` in /usr/bin, /bin, then ``PATH``."""
    if chosen is not None:
        return chosen if os.access(chosen, os.X_OK) and os.path.isfile(chosen) else None
    for candidate in (f"/usr/bin/{name}", f"/bin/{name}"):
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def _exposable(path: Path, what: str) -> Path:
    """``path``, unless binding it would expose a repository or evotree's state."""
    for marker in (".git", ".evotree"):
        if (path / marker).exists():
            raise SandboxUnavailable(
                f"the sandbox would expose {path}: it is {what} and holds {marker} (a repository or a "
                "workspace), which a phase must never see",
                fix="install evotree outside the repository (a virtualenv elsewhere, or a wheel), "
                + OFF_FIX,
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
    for name in PACKAGES:
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


def system_args(network: bool, *, proc: bool = True) -> list[str]:
    """Binds of the system. ``proc``: mount ``/proc`` of the sandbox's PID namespace (a nested
    sandbox cannot: the kernel refuses a new procfs in a user namespace below one whose ``/proc``
    has covered folders)."""
    args: list[str] = []
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for name in sorted(set(ETC_FILES)):
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
        if name.startswith("nvidia") and name[6:].isdigit() or name in GPU_DEVICES:
            args += ["--dev-bind-try", f"/dev/{name}", f"/dev/{name}"]
    if os.path.isdir("/sys"):
        args += ["--ro-bind-try", "/sys", "/sys"]
    args += ["--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--dir", SANDBOX_HOME]
    return args


def prlimit_path() -> str:
    for candidate in ("/usr/bin/prlimit", "/bin/prlimit"):
        if os.access(candidate, os.X_OK):
            return candidate
    raise SandboxUnavailable(
        "prlimit (util-linux) is not installed: the sandbox cannot set the phase's limits",
        fix="install util-linux (apt-get install util-linux), or set the [sandbox] limits to 0",
    )
