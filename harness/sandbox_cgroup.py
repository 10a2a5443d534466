"""A phase's pids cgroup (moved out of :mod:`evotree.harness.sandbox`, unchanged).

Where this machine lets evotree make one, each sandboxed phase runs in a pids cgroup limited to
its ``max_processes``: the kernel's bound on processes and threads, which binds the host's root
too (RLIMIT_NPROC does not)."""

from __future__ import annotations

import contextlib
import functools
import os
import time
from pathlib import Path

__all__ = ["PidsCgroup"]


class PidsCgroup:
    """A pids cgroup of one phase, where this machine lets evotree make one: the kernel's bound on
    the number of processes and threads, which (unlike RLIMIT_NPROC) also binds the host's root.

    Made under evotree's own cgroup in the cgroup-v1 ``pids`` hierarchy, or in cgroup v2 when
    evotree's cgroup is the root of its namespace and the ``pids`` controller is already enabled
    for its children (evotree changes no cgroup setting of the host). ``pids.max`` is the phase's
    ``max_processes`` plus :attr:`OVERHEAD` (the launcher, bwrap and the sandbox's init). :meth:`refused` is how many
    forks the kernel refused at the limit (the supervisor then ends the phase and says why).
    """

    #: the launcher, bwrap's outer process and the sandbox's init
    OVERHEAD = 3
    _PREFIX = "evotree-phase-"
    _count = 0

    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self.limit = limit

    @classmethod
    def create(cls, max_processes: int) -> PidsCgroup | None:
        """A new pids cgroup limited to ``max_processes`` (+ overhead), or ``None`` where none can be made."""
        if max_processes <= 0:
            return None
        parent = _pids_parent()
        if parent is None:
            return None
        for stale in parent.glob(
            cls._PREFIX + "*"
        ):  # left by an evotree that was killed: removed once empty
            owner = stale.name[len(cls._PREFIX) :].split("-")[0]
            if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
                with contextlib.suppress(OSError):
                    stale.rmdir()
        cls._count += 1
        path = parent / f"{cls._PREFIX}{os.getpid()}-{cls._count}-{os.urandom(3).hex()}"
        try:
            path.mkdir()
        except OSError:
            return None
        try:
            (path / "pids.max").write_text(str(max_processes + cls.OVERHEAD))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            return None
        return cls(path, max_processes)

    def refused(self) -> int:
        """Forks the kernel refused because the cgroup was at its limit (``pids.events``: ``max N``)."""
        try:
            for line in (self.path / "pids.events").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "max":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self, timeout: float = 5.0) -> bool:
        """Delete the cgroup once its processes are gone (after the phase's sandbox was reaped)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.02)


@functools.lru_cache(maxsize=1)
def _pids_parent() -> Path | None:
    """The folder under which this process may make pids cgroups, or ``None`` (probed once)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    own_v1 = own_v2 = None
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if "pids" in controllers.split(","):
            own_v1 = path
        elif controllers == "":
            own_v2 = path
    candidates: list[Path] = []
    if own_v1 is not None and os.path.isfile("/sys/fs/cgroup/pids/cgroup.procs"):
        candidates.append(Path("/sys/fs/cgroup/pids") / own_v1.lstrip("/"))
    if own_v2 == "/" and os.path.isfile("/sys/fs/cgroup/cgroup.controllers"):
        root = Path("/sys/fs/cgroup")
        try:  # only where the controller is already enabled for children: evotree changes no host setting
            if "pids" in (root / "cgroup.subtree_control").read_text().split():
                candidates.append(root)
        except OSError:
            pass
    for parent in candidates:
        probe = parent / f"evotree-probe-{os.getpid()}-{os.urandom(3).hex()}"
        try:
            probe.mkdir()
        except OSError:
            continue
        try:
            ok = (probe / "pids.max").is_file() and (probe / "pids.events").is_file()
        finally:
            with contextlib.suppress(OSError):
                probe.rmdir()
        if ok:
            return parent
    return None
