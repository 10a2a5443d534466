"""GPU placement for the local executor: each run holds its own devices for its whole life.

The devices are those this process may use: ``CUDA_VISIBLE_DEVICES`` of the ``evotree run``
process when it is set (as a scheduler or the user narrowed them), else every GPU that
``nvidia-smi -L`` lists (MIG instances by their UUID), else none. A run asks for
``[executor].gpus`` of them; its train and judge phases then see exactly those
(``CUDA_VISIBLE_DEVICES``), and no other run of this machine is given them until it ends.

A device is held by an exclusive ``flock`` on ``<state_dir>/gpus/<device>.lock``: two runs of one
request, and two ``evotree run`` processes of one workspace, never hold the same device; a run
that finds too few free waits for them (cancellation stops the wait), and a process that dies
releases its devices with its file descriptors. A request whose runs ask for more GPUs than
exist is refused before anything runs (:func:`check_request`).

``[executor].gpus = 0`` (the default: not declared) places nothing: the phases keep the devices
of this process, as before, and a run that shares them with another run at once says so.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from evotree.harness.executors.errors import ExecutorError

__all__ = ["DeviceLease", "GpuPool", "check_request", "gpus_per_run", "visible_devices"]

ENV_VISIBLE = "CUDA_VISIBLE_DEVICES"
_POLL_SECONDS = 0.2
_SMI_TIMEOUT = 10.0
_GPU_LINE = re.compile(r"^GPU (\d+):.*?(?:\(UUID: (\S+)\))?\s*$")
_MIG_LINE = re.compile(r"^\s+MIG .*\(UUID: (\S+)\)\s*$")


def _parse_visible(value: str) -> list[str]:
    """The ids of a ``CUDA_VISIBLE_DEVICES`` value, in order; CUDA stops at the first invalid one
    (``-1``, an empty entry), so that and the rest are dropped."""
    out: list[str] = []
    for part in value.split(","):
        part = part.strip()
        if not part or part.startswith("-") or part == "NoDevFiles":
            break
        out.append(part)
    return out


def _parse_smi(text: str) -> list[str]:
    """Device ids from ``nvidia-smi -L``: the GPU indices, or a GPU's MIG instance UUIDs when it has any."""
    devices: list[str] = []
    current: str | None = None
    migs: list[str] = []

    def flush() -> None:
        if current is not None:
            devices.extend(migs or [current])

    for line in text.splitlines():
        mig = _MIG_LINE.match(line)
        if mig and current is not None:
            migs.append(mig.group(1))
            continue
        gpu = _GPU_LINE.match(line.strip())
        if gpu:
            flush()
            current, migs = gpu.group(1), []
    flush()
    return devices


def visible_devices(
    env: Mapping[str, str] | None = None, *, smi: str | None = None
) -> tuple[list[str], str]:
    """The GPUs runs may be given, and where that list came from (for messages).

    ``CUDA_VISIBLE_DEVICES`` of ``env`` (default this process) when set; else ``nvidia-smi -L``
    (``smi``: its path; default the one on ``PATH``); else none.
    """
    env = os.environ if env is None else env
    if ENV_VISIBLE in env:
        return _parse_visible(env[ENV_VISIBLE]), f"{ENV_VISIBLE}={env[ENV_VISIBLE]!r}"
    binary = smi or shutil.which("nvidia-smi")
    if not binary:
        return [], f"{ENV_VISIBLE} is not set and there is no nvidia-smi"
    try:
        proc = subprocess.run(
            [binary, "-L"],
            capture_output=True,
            text=True,
            timeout=_SMI_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return [], f"nvidia-smi -L failed ({type(exc).__name__})"
    if proc.returncode != 0:
        return [], f"nvidia-smi -L exited with {proc.returncode}"
    return _parse_smi(proc.stdout), "nvidia-smi -L"


def gpus_per_run(value: float) -> int:
    """``[executor].gpus`` as the whole number of devices a local run holds.

    A fraction shares a GPU on Ray; the local executor gives whole devices only.
    """
    if value < 0 or value != int(value):
        raise ExecutorError(
            f"executor.gpus must be a whole number of GPUs for the local executor, actually: {value:g}",
            fix="set [executor].gpus on the champion to 0, 1, 2, … (a fraction shares a GPU on Ray only: "
            "--executor ray)",
        )
    return int(value)


def check_request(per_run: int, devices: list[str], source: str) -> None:
    """Refuse, before anything runs, runs that ask for more GPUs than this machine has."""
    if per_run > len(devices):
        have = f"{len(devices)} GPU(s) ({', '.join(devices)})" if devices else "no GPU"
        raise ExecutorError(
            f"each run asks for {per_run} GPU(s) ([executor].gpus) but this machine gives runs {have}: "
            f"{source}",
            fix="lower [executor].gpus on the champion, export CUDA_VISIBLE_DEVICES with the devices to use, "
            "or run where there are enough (--executor ray / slurm)",
        )


def _lock_name(device: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", device)[:40]
    return f"{safe}-{hashlib.sha256(device.encode()).hexdigest()[:8]}.lock"


@dataclass
class DeviceLease:
    """Devices one run holds: their ids and the locks that hold them (released by :meth:`release`)."""

    devices: list[str]
    handles: list[IO[str]] = field(default_factory=list, repr=False)

    @property
    def env_value(self) -> str:
        """``CUDA_VISIBLE_DEVICES`` for the run's phases."""
        return ",".join(self.devices)

    def release(self) -> None:
        for handle in self.handles:
            handle.close()  # closing the descriptor drops its flock
        self.handles = []


class GpuPool:
    """The devices of this machine, handed out whole: ``acquire(n)`` blocks until ``n`` are free."""

    def __init__(self, devices: list[str], lock_dir: Path) -> None:
        self.devices = list(devices)
        self.lock_dir = lock_dir
        self._mutex = threading.Lock()  # one thread scans at a time: no two half-leases deadlock

    def _try(self, n: int) -> DeviceLease | None:
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        taken: list[tuple[str, IO[str]]] = []
        for device in self.devices:
            if len(taken) == n:
                break
            handle = open(self.lock_dir / _lock_name(device), "a+")  # noqa: SIM115 - held for the run
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()} {device}\n")
            handle.flush()
            taken.append((device, handle))
        if len(taken) == n:
            return DeviceLease([d for d, _ in taken], [h for _, h in taken])
        for _, handle in taken:  # all or nothing: a partial lease is given back at once
            handle.close()
        return None

    def acquire(
        self, n: int, cancel: threading.Event, *, on_wait: object = None
    ) -> DeviceLease | None:
        """``n`` free devices (an empty lease for 0), or None when ``cancel`` was set while waiting.

        ``on_wait``: called once (no arguments) when the run has to wait.
        """
        if n == 0:
            return DeviceLease([])
        waited = False
        while True:
            with self._mutex:
                lease = self._try(n)
            if lease is not None:
                return lease
            if not waited and callable(on_wait):
                on_wait()
            waited = True
            if cancel.wait(_POLL_SECONDS):
                return None


def wait_note(per_run: int, started: float) -> str | None:
    """The run note of a run that waited for its devices, or None when it did not wait long."""
    waited = time.monotonic() - started
    if waited < 1.0:
        return None
    return f"waited {waited:.0f}s for {per_run} free GPU(s) before it started"
