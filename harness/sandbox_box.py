"""A running sandbox seen from outside, by host pid (moved out of :mod:`evotree.harness.sandbox`,
unchanged): its PID namespace, its processes and threads, signals and the final reap."""

from __future__ import annotations

import fcntl
import os
import signal
import time
from pathlib import Path

__all__ = ["SandboxBox"]


class SandboxBox:
    """The processes of one running sandbox, seen from outside (by host pid).

    ``pid`` is the outer process (a process-group leader started by the phase runner: the
    launcher of :func:`accounted`, or bwrap itself). Below it is the sandbox's init (pid 1 of
    the PID namespace); every process of the phase lives in that namespace, whatever session or
    environment it gave itself.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.init: int | None = None
        self.namespace: str | None = None
        self._fd: int | None = None
        self._kills = 0
        #: PID namespaces seen on this machine that are not nested in the sandbox's (an inode number
        #: can be reused, so a nested one is checked again at every count)
        self._outside: set[str] = set()

    def locate(self) -> str | None:
        """The PID namespace of the sandbox (``pid:[inode]``), once its init exists.

        The init is the first descendant of the bwrap process (children first) whose PID
        namespace differs from bwrap's own; never this process's namespace (signalling "every
        process of the namespace" must never mean every process of the machine).
        """
        if self.namespace is None:
            try:
                outside = {
                    os.readlink(f"/proc/{self.pid}/ns/pid"),
                    os.readlink("/proc/self/ns/pid"),
                }
            except OSError:
                return None
            level = [self.pid]
            for _ in range(4):
                level = [c for parent in level for c in _children(parent)]
                for child in level:
                    try:  # held open: the namespace (and its number) cannot be recycled for another
                        fd = os.open(
                            f"/proc/{child}/ns/pid", os.O_RDONLY | os.O_CLOEXEC
                        )  # sandbox while we use it
                    except OSError:
                        continue
                    ns = f"pid:[{os.fstat(fd).st_ino}]"
                    if ns in outside:
                        os.close(fd)
                        continue
                    self.namespace, self.init, self._fd = ns, child, fd
                    return ns
        return self.namespace

    def close(self) -> None:
        """Let go of the namespace (after :meth:`reap`)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self) -> None:
        self.close()

    def members(self) -> list[int]:
        """Host pids of the live processes in the sandbox's PID namespace (its init included;
        zombies, which run nothing, left out)."""
        ns = self.locate()
        if ns is None:
            return []
        found = []
        for pid in _pids():
            try:
                if os.readlink(f"/proc/{pid}/ns/pid") == ns and not _zombie(pid):
                    found.append(int(pid))
            except (OSError, ValueError):
                continue
        return found

    def tasks(self) -> int:
        """Processes and threads alive in the sandbox's PID namespace and the namespaces nested in
        it (a judge's sandboxes for candidate code), its init included (what RLIMIT_NPROC would
        count); 0 before the namespace exists."""
        ns = self.locate()
        if ns is None:
            return 0
        nested = {ns: True}
        outside = self._outside
        count = 0
        # string paths and os.listdir: this runs every poll of the supervisor over every process
        # of the machine (pathlib's glob and joins cost three times as much for the same walk)
        for pid in _pids():
            try:
                theirs = os.readlink(f"/proc/{pid}/ns/pid")
                if theirs in outside:
                    continue
                if theirs not in nested:
                    verdict = self._is_nested(pid)
                    if verdict is None:  # the process is gone: nothing to count, nothing learnt
                        continue
                    nested[theirs] = verdict
                    if not verdict:
                        outside.add(theirs)
                if not nested[theirs]:
                    continue
                with open(f"/proc/{pid}/stat", "rb") as handle:
                    fields_ = handle.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields_[0] not in (b"Z", b"X"):
                count += int(fields_[17]) if fields_[17].isdigit() else 1  # num_threads
        return count

    def _is_nested(self, pid: str) -> bool | None:
        """Whether the PID namespace of the process ``pid`` lies below the sandbox's
        (``NS_GET_PARENT`` up to the sandbox's, or to one this process may not see)."""
        found = False
        try:
            fd = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None  # gone
        try:
            for _ in range(32):
                parent = fcntl.ioctl(fd, 0xB702)  # NS_GET_PARENT
                os.close(fd)
                fd = parent
                if f"pid:[{os.fstat(fd).st_ino}]" == self.namespace:
                    found = True
                    break
        except OSError:
            pass  # EPERM: above our own namespace; the machine's namespaces are not nested in the sandbox
        finally:
            os.close(fd)
        return found

    def signal(self, sig: int) -> None:
        """SIGKILL: the whole sandbox. Other signals: every process of the phase (not the init,
        which forwards nothing and exits when the phase's first process does).

        The first SIGKILL of a located sandbox kills its init and every process of its
        namespace, so that bwrap and the launcher above it exit by themselves (and the launcher
        reaps and counts them); any later one (or one before the namespace is known) also kills
        the outer process group.
        """
        if sig == signal.SIGKILL:
            self.locate()
            self._kills += 1
            if self.init is None or self._kills > 1:
                _kill_group(self.pid, sig)
            for pid in sorted(
                self.members(), key=lambda p: p != self.init
            ):  # its init first: the kernel
                _kill(pid, sig)  # then ends the whole namespace
            return
        members = [p for p in self.members() if p != self.init]
        if not members:
            _kill_group(self.pid, sig)
        for pid in members:
            _kill(pid, sig)

    def reap(self, timeout: float = 5.0) -> list[int]:
        """After the phase: SIGKILL whatever is left in the namespace and wait until it is empty.

        Returns the pids of the phase found alive (normally none: the kernel ends the namespace
        with its init, which may itself still be exiting when bwrap has already reported).
        """
        if self.namespace is None:
            return []
        try:
            left = [p for p in self.members() if p != self.init]
            deadline = time.monotonic() + timeout
            while True:
                alive = self.members()
                if not alive:
                    return left
                for pid in alive:
                    _kill(pid, signal.SIGKILL)
                if time.monotonic() > deadline:
                    return left
                time.sleep(0.01)
        finally:
            self.close()


def _children(parent: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{parent}/task/{parent}/children").read_text().split()]
    except OSError:  # a kernel without /proc/PID/task/TID/children: read every process's parent
        pass
    out = []
    for stat_file in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields_ = stat_file.read_text().rsplit(")", 1)[1].split()
            if int(fields_[1]) == parent:
                out.append(int(stat_file.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return out


def _pids() -> list[str]:
    """The numeric entries of /proc: every process of the machine (this PID namespace's view)."""
    return [name for name in os.listdir("/proc") if name.isdigit()]


def _zombie(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")
    except (OSError, IndexError):
        return True  # gone


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass
