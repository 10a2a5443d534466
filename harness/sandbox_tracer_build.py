"""Building the compiled seccomp tracer (``seccomp_trace.c``) with the system's C compiler into a
folder only this user can write; where it is looked for first is
:func:`evotree.harness.sandbox.compiled_tracer`'s (the install's folder, then the user's cache)."""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import stat
import subprocess
from pathlib import Path

__all__ = [
    "NO_COMPILER",
    "NO_COMPILER_FIX",
    "TRACER_SOURCE",
    "build_tracer",
    "find_compiler",
    "owned_private",
    "platform_tag",
    "tracer_cache",
    "tracer_digest",
]


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


#: The compiled seccomp tracer's source (BENCHMARKS.md §21: a fraction of the cost per reported
#: call of the Python tracer it replaced, and of strace).
TRACER_SOURCE = Path(__file__).with_name("seccomp_trace.c")


def tracer_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evotree"


#: the system's C compilers, tried before PATH's (the tracer runs outside every sandbox)
_COMPILERS = ("/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang")


def tracer_digest() -> str | None:
    try:
        source = TRACER_SOURCE.read_bytes()
    except OSError:
        return None
    return hashlib.sha256(source + platform_tag().encode()).hexdigest()[:16]


def find_compiler() -> str | None:
    for path in _COMPILERS:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")


def build_tracer(folder: Path) -> Path | None:
    """Build the tracer into ``folder`` (made private: 0700) unless a binary of this source is
    there already; the binary, or ``None`` without a compiler or when the build fails."""
    digest = tracer_digest()
    if digest is None:
        return None
    cache = folder
    binary = cache / f"seccomp-trace-{digest}"
    if owned_private(cache) and owned_private(binary, executable=True):
        return binary
    compiler = find_compiler()
    if compiler is None:
        return None
    try:
        cache.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(cache, 0o700)
    except OSError:
        return None
    if not owned_private(cache):
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
    return binary if owned_private(binary, executable=True) else None


def platform_tag() -> str:
    """The machine the compiled tracer is built for (part of its cache key)."""

    return f"{platform.system()}-{platform.machine()}"


def owned_private(path: Path, *, executable: bool = False) -> bool:
    """``path`` is this user's, not a symlink, and no one else can write it."""
    try:
        info = path.lstat()
    except OSError:
        return False

    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o022:
        return False
    if executable:
        return stat.S_ISREG(info.st_mode) and bool(info.st_mode & 0o100)
    return stat.S_ISDIR(info.st_mode)
