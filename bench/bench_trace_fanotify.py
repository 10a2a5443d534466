#!/usr/bin/env python
"""Benchmark and probe: fanotify inode marks on the phase's git stores in place of the runtime
trace's per-open reports (issue 29, item 7; docs/benchmarks/trace-fanotify.md).

The question: can a fanotify listener outside the sandbox (``fanotify_init`` with
``FAN_REPORT_FID | FAN_REPORT_DFID_NAME``, an inode mark with ``FAN_OPEN`` on every file and
folder of each git store the phase sees at its start, events read asynchronously and drained at
the end, ``FAN_Q_OVERFLOW`` a finding) report the opens of git storage, with the seccomp tracer
reporting execs only (``sandbox.TRACE_OPENS = False``)? What it costs, on the agent mix of
``bench/bench_audit_trace.py`` (its command list and the same repository; the same sandbox,
started through ``accounted`` as ``evotree run`` starts phases). Variants, interleaved in rotated
order, ``--repeats`` times each (medians reported):

  sandbox            the phase in the sandbox, untraced
  seccomp-exec-only  the seccomp tracer without open reports (``TRACE_OPENS = False``)
  exec-only+fanotify the same, and a fanotify listener (a child process: its CPU is counted with
                     the phase's) marking every file and folder of the stores the box binds
  seccomp            the current default (opens reported)

CPU: user + system of every reaped child (``RUSAGE_CHILDREN``: the launcher, bubblewrap, the
phase's processes, the tracer, the listener), as bench_audit_trace.py counts it; wall: from the
start of the box to the end of the trace's conversion (and of the listener's drain). Each traced
run is checked: every git process is in the trace; each fanotify run: every git process (by its
pid in the trace) has an open event of the store, no overflow.

Run (root, on the 2-vCPU VM: ``nice -n 10``)::

    nice -n 10 .venv/bin/python bench/bench_trace_fanotify.py [--commands 1000] [--repeats 3]
        [--json bench/results/trace_fanotify.json]
    .venv/bin/python bench/bench_trace_fanotify.py --facts     # the feasibility probes, JSON

The fanotify layer (:class:`Fanotify`) uses ctypes and the standard library only, so the
unprivileged probe runs it with the system's ``/usr/bin/python3`` as ``nobody``.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import json
import os
import platform
import resource
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent

# ----------------------------------------------------------------------------- fanotify (ctypes)
FAN_CLOEXEC = 0x1
FAN_NONBLOCK = 0x2
FAN_CLASS_NOTIF = 0x0
FAN_UNLIMITED_QUEUE = 0x10
FAN_UNLIMITED_MARKS = 0x20
FAN_REPORT_PIDFD = 0x80
FAN_REPORT_TID = 0x100
FAN_REPORT_FID = 0x200
FAN_REPORT_DIR_FID = 0x400
FAN_REPORT_NAME = 0x800
FAN_REPORT_DFID_NAME = FAN_REPORT_DIR_FID | FAN_REPORT_NAME

FAN_OPEN = 0x20
FAN_CREATE = 0x100
FAN_OPEN_EXEC = 0x1000
FAN_Q_OVERFLOW = 0x4000
FAN_EVENT_ON_CHILD = 0x08000000
FAN_ONDIR = 0x40000000

FAN_MARK_ADD = 0x1
FAN_MARK_DONT_FOLLOW = 0x4
FAN_MARK_MOUNT = 0x10
FAN_MARK_FILESYSTEM = 0x100

INFO_FID, INFO_DFID_NAME, INFO_DFID, INFO_PIDFD = 1, 2, 3, 4
#: the flags every listener here uses: notification class, file handles (no descriptor per
#: event: an unprivileged group may only report handles), the parent's handle and the name
REPORT = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_FID | FAN_REPORT_DFID_NAME
#: what a store's folder is marked for: opens of it (read as a folder) and of its entries
DIR_MASK = FAN_OPEN | FAN_ONDIR | FAN_EVENT_ON_CHILD
_META = struct.Struct("=IBBHQii")  # event_len, vers, reserved, metadata_len, mask, fd, pid
_MAX_HANDLE = 128

_libc = ctypes.CDLL(None, use_errno=True)
_libc.fanotify_init.argtypes = [ctypes.c_uint, ctypes.c_uint]
_libc.fanotify_mark.argtypes = [
    ctypes.c_int,
    ctypes.c_uint,
    ctypes.c_uint64,
    ctypes.c_int,
    ctypes.c_char_p,
]
_libc.name_to_handle_at.argtypes = [
    ctypes.c_int,
    ctypes.c_char_p,
    ctypes.c_void_p,
    ctypes.POINTER(ctypes.c_int),
    ctypes.c_int,
]
_AT_FDCWD = -100
_AT_SYMLINK_FOLLOW = 0x400


def _oserror(what: str) -> OSError:
    code = ctypes.get_errno()
    return OSError(code, f"{what}: {os.strerror(code)}")


def file_handle(path: str) -> bytes:
    """The file handle of ``path`` (not following a final link) as fanotify reports it:
    ``handle_type`` (4 bytes) then the handle's bytes."""
    buf = ctypes.create_string_buffer(8 + _MAX_HANDLE)
    struct.pack_into("=Ii", buf, 0, _MAX_HANDLE, 0)
    mount_id = ctypes.c_int()
    if _libc.name_to_handle_at(_AT_FDCWD, os.fsencode(path), buf, ctypes.byref(mount_id), 0) != 0:
        raise _oserror(f"name_to_handle_at {path}")
    size, kind = struct.unpack_from("=Ii", buf, 0)
    return struct.pack("=i", kind) + buf.raw[8 : 8 + size]


@dataclass
class Event:
    """One fanotify event: its mask, the pid the kernel reported (0: withheld), the handle of
    the object, and the parent's handle with the name the object was reached by."""

    mask: int
    pid: int
    fid: bytes = b""
    dir_fid: bytes = b""
    name: str = ""
    path: str = ""  #: resolved from the handles of the marked objects ("" when unknown)


@dataclass
class Fanotify:
    """A fanotify group reporting file handles; marks on inodes, events read without blocking."""

    flags: int = REPORT
    fd: int = -1
    #: handle -> path of every object marked (to name the objects of events)
    handles: dict[bytes, str] = field(default_factory=dict)
    marks: int = 0
    overflows: int = 0

    def __post_init__(self) -> None:
        fd = _libc.fanotify_init(self.flags, os.O_RDONLY | os.O_LARGEFILE | os.O_CLOEXEC)
        if fd < 0:
            raise _oserror("fanotify_init")
        self.fd = fd

    def mark(self, path: str, mask: int, flags: int = FAN_MARK_ADD | FAN_MARK_DONT_FOLLOW) -> None:
        """Add ``mask`` to the mark of ``path`` (an inode mark unless ``flags`` say otherwise)."""
        if _libc.fanotify_mark(self.fd, flags, mask, _AT_FDCWD, os.fsencode(path)) != 0:
            raise _oserror(f"fanotify_mark {path}")
        self.marks += 1
        try:
            self.handles[file_handle(path)] = path
        except OSError:
            pass

    def mark_tree(self, root: str) -> int:
        """Mark every folder (its opens and its entries' opens) and every file under ``root``
        (links are not followed; a file's own mark keeps reporting it under another name: a hard
        link, a rename). Returns the number of marks."""
        before = self.marks

        def fail(exc: OSError) -> None:
            raise exc

        for folder, _dirs, files in os.walk(root, onerror=fail):
            self.mark(folder, DIR_MASK)
            for name in files:
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    self.mark(path, FAN_OPEN)
        return self.marks - before

    def read(self, size: int = 1 << 18) -> list[Event]:
        """Every event queued now (none when the queue is empty)."""
        events: list[Event] = []
        while True:
            try:
                data = os.read(self.fd, size)
            except BlockingIOError:
                return events
            if not data:
                return events
            events += self._parse(data)

    def _parse(self, data: bytes) -> list[Event]:
        out = []
        offset = 0
        while offset + _META.size <= len(data):
            length, _vers, _res, meta_len, mask, fd, pid = _META.unpack_from(data, offset)
            if fd >= 0:
                os.close(fd)
            event = Event(mask=mask, pid=pid)
            if mask & FAN_Q_OVERFLOW:
                self.overflows += 1
            info = offset + meta_len
            while info + 4 <= offset + length:
                kind, _pad, info_len = struct.unpack_from("=BBH", data, info)
                if info_len == 0:
                    break
                if kind in (INFO_FID, INFO_DFID_NAME, INFO_DFID):
                    size, htype = struct.unpack_from("=Ii", data, info + 12)
                    handle = struct.pack("=i", htype) + data[info + 20 : info + 20 + size]
                    if kind == INFO_FID:
                        event.fid = handle
                    else:
                        event.dir_fid = handle
                        if kind == INFO_DFID_NAME:
                            raw = data[info + 20 + size : info + info_len]
                            event.name = os.fsdecode(raw.split(b"\0", 1)[0])
                info += info_len
            if event.fid in self.handles:
                event.path = self.handles[event.fid]
            elif event.dir_fid in self.handles:
                event.path = os.path.join(self.handles[event.dir_fid], event.name)
            out.append(event)
            offset += length
        return out

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


# ----------------------------------------------------------------------------- the listener
def listen(stores: list[str], out: str, interval: float) -> None:
    """The listener process of the bench: mark ``stores``, say ``ready`` on stdout, read the
    queue every ``interval`` seconds (and when it wakes) until stdin closes, drain it, write a
    summary (marks, events, pids, overflow) to ``out`` as JSON."""
    group = Fanotify(
        REPORT
        | (FAN_UNLIMITED_QUEUE if os.geteuid() == 0 and os.environ.get("FA_UNLIMITED") else 0)
    )
    started = time.perf_counter()
    for store in stores:
        group.mark_tree(store)
    marked = time.perf_counter() - started
    sys.stdout.write(f"ready {group.marks}\n")
    sys.stdout.flush()
    events = 0
    pids: dict[int, int] = {}
    names: dict[str, int] = {}
    reads = 0
    polled = select.poll()
    polled.register(sys.stdin.fileno(), select.POLLIN | select.POLLHUP)
    polled.register(group.fd, select.POLLIN)
    done = False
    while not done:
        ready = polled.poll(None)
        if any(fd == sys.stdin.fileno() for fd, _ in ready):
            done = True
        batch = group.read()
        reads += 1
        for event in batch:
            events += 1
            pids[event.pid] = pids.get(event.pid, 0) + 1
            key = event.path or event.name
            names[key] = names.get(key, 0) + 1
        if not done and interval:
            time.sleep(interval)
    summary = {
        "stores": stores,
        "marks": group.marks,
        "mark_seconds": marked,
        "events": events,
        "reads": reads,
        "overflows": group.overflows,
        "pids": {str(k): v for k, v in pids.items()},
        "top_paths": dict(sorted(names.items(), key=lambda kv: -kv[1])[:20]),
    }
    Path(out).write_text(json.dumps(summary))
    group.close()


def bound_stores(argv: list[str]) -> list[str]:
    """The git stores a box command line binds (the guard's pruned copies, bound over each task
    repository's ``.git``): the sources of ``--bind``/``--ro-bind`` whose target is a ``.git``."""
    stores = []
    for k, word in enumerate(argv[:-2]):
        if word in ("--bind", "--ro-bind") and argv[k + 2].endswith("/.git"):
            stores.append(argv[k + 1])
    return stores


# ----------------------------------------------------------------------------- feasibility probes
def _wait_events(group: Fanotify, seconds: float = 1.0) -> list[Event]:
    """Events read from ``group`` for ``seconds`` (the queue is asynchronous)."""
    events: list[Event] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        events += group.read()
        time.sleep(0.05)
    return events + group.read()


def _names(events: list[Event]) -> list[str]:
    return [e.path or e.name for e in events]


def _marked_box(work: Path, script: str) -> tuple[list[Event], Any, list[str]]:
    """Run ``script`` (bash) in the phase sandbox, untraced, as ``evotree run`` starts it, with
    every file and folder of the stores it binds (the guard's pruned copy of the task
    repository, made by ``wrap``) marked before it starts: the events, the finished process and
    the stores marked (the events of this process's own walk left out)."""
    from evotree.harness.sandbox import release_untraced, wrap
    from evotree.harness.sandbox_launch import accounted, sandbox_env
    from evotree.harness.sandbox_spec import SandboxSpec

    spec = SandboxSpec(cwd=work, read_write=(work,))
    argv = wrap(spec, ["bash", "-c", script])
    group = Fanotify()
    stores = bound_stores(argv)
    for store in stores:
        group.mark_tree(store)
    try:
        proc = subprocess.run(
            accounted(argv), env=sandbox_env(dict(os.environ)), capture_output=True, text=True
        )
        # less the listener's own: its walk opens each subfolder of a folder it marked
        events = [e for e in _wait_events(group, 0.3) if e.pid != os.getpid()]
    finally:
        group.close()
        release_untraced(argv)
    return events, proc, stores


def _repository(folder: Path) -> Path:
    """A small repository (three commits, loose objects) in ``folder``/work."""
    work = folder / "work"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@b",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@b",
    }
    subprocess.run(["git", "init", "-q", str(work)], check=True, env=env)
    for k in range(3):
        (work / f"f{k}.txt").write_text(f"{k}\n" * 50)
        subprocess.run(["git", "-C", str(work), "add", "."], check=True, env=env)
        subprocess.run(["git", "-C", str(work), "commit", "-q", "-m", f"c{k}"], check=True, env=env)
    return work


def fact_sandboxed_pid(work: Path) -> dict[str, Any]:
    """A process in the box (own user, mount and pid namespaces) opens the store's HEAD: is it
    reported, with which pid (the host's: /proc/PID while it lives says what it is)?"""
    from evotree.harness.sandbox import release_untraced, wrap
    from evotree.harness.sandbox_launch import accounted, sandbox_env
    from evotree.harness.sandbox_spec import SandboxSpec

    spec_argv = None
    group = Fanotify()
    try:  # the box's copy is made by wrap(); the marks go on it before the box starts
        spec = SandboxSpec(cwd=work, read_write=(work,))
        spec_argv = wrap(spec, ["bash", "-c", "read -r head < .git/HEAD; echo $$; exec sleep 2"])
        for store in bound_stores(spec_argv):
            group.mark_tree(store)
        proc = subprocess.Popen(
            accounted(spec_argv),
            env=sandbox_env(dict(os.environ)),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        inner = int(proc.stdout.readline())
        events = _wait_events(group, 0.5)
        heads = [e for e in events if e.path.endswith("/HEAD")]
        pid = heads[0].pid if heads else -1
        cmdline = nspid = ""
        if pid > 0:
            cmdline = (
                Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            )
            nspid = next(
                line.split(":", 1)[1].split()
                for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                if line.startswith("NSpid:")
            )
        proc.wait()
    finally:
        group.close()
        if spec_argv is not None:
            release_untraced(spec_argv)
    return {
        "reported": bool(heads),
        "pid": pid,
        "pid_inside": inner,
        "cmdline_at_pid": cmdline,
        "nspid": nspid,
        "events": len(events),
    }


_PACK = "$(ls .git/objects/pack/*.pack | head -1)"
#: the box's readers of the store (name: the bash line, what an event must name to be its open)
READERS: dict[str, tuple[str, str]] = {
    "git_log": ("git log --stat -3 >/dev/null", ".idx"),
    "python_zlib_pack": (
        "python3 -c \"import glob, zlib; d = open(glob.glob('.git/objects/pack/*.pack')[0], "
        "'rb').read(); zlib.decompressobj().decompress(d[12 + 2:])\"",
        ".pack",
    ),
    "cp_pack_out": (f"cp {_PACK} /tmp/p.pack && cat /tmp/p.pack /tmp/p.pack >/dev/null", ".pack"),
    "hardlink_new_folder": (
        f"mkdir .git/objects/zz && ln {_PACK} .git/objects/zz/linked && "
        "python3 -c \"open('.git/objects/zz/linked', 'rb').read()\"",
        "linked",
    ),
    "rename_new_folder": (
        f"mkdir .git/objects/yy && mv {_PACK} .git/objects/yy/moved && "
        "python3 -c \"open('.git/objects/yy/moved', 'rb').read()\"",
        "moved",
    ),
    "loose_object_new_fanout": (
        "h=$(echo fresh-object-$$ | git hash-object -w --stdin) && "
        "python3 -c \"import sys, zlib; print(zlib.decompress(open('.git/objects/' + sys.argv[1][:2] "
        "+ '/' + sys.argv[1][2:], 'rb').read())[:10])\" $h",
        "NEWOBJECT",
    ),
    "o_path_then_proc_fd": (
        "python3 -c \"import os; fd = os.open('.git/packed-refs', os.O_PATH); "
        "os.open('/proc/self/fd/%d' % fd, os.O_RDONLY)\"",
        "packed-refs",
    ),
    "o_path_only": (
        "python3 -c \"import os; os.open('.git/packed-refs', os.O_PATH)\"",
        "packed-refs",
    ),
}


def _relative(path: str, stores: list[str]) -> str:
    """``path`` relative to the store holding it (the box's copies have temporary names)."""
    for store in stores:
        if path.startswith(store + "/"):
            return os.path.relpath(path, store)
    return path


def fact_reader(work: Path, name: str) -> dict[str, Any]:
    """One of :data:`READERS` in a box whose store is marked: its events, whether the open is
    reported."""
    script, needle = READERS[name]
    subprocess.run(["git", "-C", str(work), "gc", "-q"], check=True)  # one pack, no loose
    events, proc, stores = _marked_box(work, script)
    # an event names the object (its handle: the marked path) and the name it was opened by
    hit = [e.path for e in events if needle in e.path or needle == e.name]
    hit += [e.name for e in events if needle == e.name]
    if name == "loose_object_new_fanout":
        hit = [e.name for e in events if len(e.name) == 38]
    return {
        "rc": proc.returncode,
        "stderr": proc.stderr[-300:],
        "events": len(events),
        "reported": bool(hit),
        "matching": sorted({_relative(n, stores) for n in hit})[:6],
    }


def fact_readers(work: Path) -> dict[str, Any]:
    """What is reported of the store's files when the box's programs read them (:data:`READERS`),
    and a clone --no-local: the store read, the clone's own reads after it."""
    out = {name: fact_reader(work, name) for name in READERS}
    # a clone --no-local read by its own git: the store's reads during the clone are reported,
    # the clone's own reads after it are not (its files are not the store's)
    events_clone, proc1, _ = _marked_box(work, 'git clone -q --no-local "file://$PWD/.git" /tmp/c')
    events_both, proc2, _ = _marked_box(
        work,
        'git clone -q --no-local "file://$PWD/.git" /tmp/c && '
        "for k in 1 2 3 4 5 6 7 8 9 10; do git -C /tmp/c log --stat -3 >/dev/null; done",
    )
    out["clone_no_local"] = {
        "rc": [proc1.returncode, proc2.returncode],
        "events_clone": len(events_clone),
        "events_clone_then_10_logs_of_the_clone": len(events_both),
        "pack_read_by_clone": any(n.endswith(".pack") for n in _names(events_clone)),
    }
    return out


def fact_host_hardlink(folder: Path) -> dict[str, Any]:
    """A hard link of a marked file made outside every marked folder (same file system), and a
    rename of one there: the inode mark follows the file."""
    work = _repository(folder / "hl")
    pack = next((work / ".git" / "objects" / "pack").glob("*.pack"), None)
    if pack is None:
        subprocess.run(["git", "-C", str(work), "gc", "-q"], check=True)
        pack = next((work / ".git" / "objects" / "pack").glob("*.pack"))
    group = Fanotify()
    try:
        group.mark_tree(str(work / ".git"))
        elsewhere = folder / "elsewhere"
        elsewhere.mkdir()
        os.link(pack, elsewhere / "linked")
        (elsewhere / "linked").read_bytes()
        idx = pack.with_suffix(".idx")
        os.rename(idx, elsewhere / "moved")
        (elsewhere / "moved").read_bytes()
        events = _wait_events(group, 0.2)
    finally:
        group.close()
    return {
        "hardlink_reported": any(e.name == "linked" for e in events),
        "rename_reported": any(e.name == "moved" for e in events),
        "names": sorted({e.name for e in events}),
    }


def fact_queue(folder: Path) -> dict[str, Any]:
    """Queue limits: 17,000 distinct files opened unread overflow the default queue (16,384);
    1,000 opens of one file by one process are merged into one event."""
    many = folder / "many"
    many.mkdir()
    for k in range(17000):
        (many / str(k)).write_bytes(b"")
    out: dict[str, Any] = {
        "max_queued_events": int(Path("/proc/sys/fs/fanotify/max_queued_events").read_text()),
        "max_user_marks": int(Path("/proc/sys/fs/fanotify/max_user_marks").read_text()),
        "max_user_groups": int(Path("/proc/sys/fs/fanotify/max_user_groups").read_text()),
    }
    for label, flags in (
        ("default_queue", REPORT),
        ("unlimited_queue", REPORT | FAN_UNLIMITED_QUEUE),
    ):
        try:
            group = Fanotify(flags)
        except OSError as exc:
            out[label] = {"error": errno.errorcode.get(exc.errno or 0, str(exc))}
            continue
        try:
            group.mark(str(many), DIR_MASK)
            for k in range(17000):
                os.close(os.open(many / str(k), os.O_RDONLY))
            events = group.read()
            out[label] = {
                "events": len(events),
                "overflow": any(e.mask & FAN_Q_OVERFLOW for e in events),
            }
        finally:
            group.close()
    group = Fanotify()
    try:
        group.mark(str(many / "1"), FAN_OPEN)
        for _ in range(1000):
            os.close(os.open(many / "1", os.O_RDONLY))
        out["same_file_1000_opens_events"] = len(group.read())
    finally:
        group.close()
    return out


def probe_unprivileged(folder: Path) -> dict[str, Any]:
    """Run as an ordinary user (``nobody``) on a repository at ``folder``/work it may read:
    what fanotify grants it, and what its events say of other processes (the process reading is
    ``cat`` outside a sandbox, then ``cat`` in a bubblewrap box of this user with its own user,
    mount and pid namespaces)."""
    out: dict[str, Any] = {"uid": os.getuid()}
    store = str(folder / "work" / ".git")
    for label, flags in (
        ("init_fd_events", FAN_CLASS_NOTIF | FAN_CLOEXEC),
        ("init_fid", REPORT),
        ("init_unlimited_queue", REPORT | FAN_UNLIMITED_QUEUE),
        ("init_unlimited_marks", REPORT | FAN_UNLIMITED_MARKS),
        ("init_pidfd", REPORT | FAN_REPORT_PIDFD),
        ("init_tid", REPORT | FAN_REPORT_TID),
    ):
        try:
            Fanotify(flags).close()
            out[label] = "ok"
        except OSError as exc:
            out[label] = errno.errorcode.get(exc.errno or 0, str(exc))
    group = Fanotify()
    for label, flags in (("mount_mark", FAN_MARK_MOUNT), ("filesystem_mark", FAN_MARK_FILESYSTEM)):
        try:
            group.mark(store, FAN_OPEN, FAN_MARK_ADD | flags)
            out[label] = "ok"
        except OSError as exc:
            out[label] = errno.errorcode.get(exc.errno or 0, str(exc))
    try:
        out["inode_marks"] = group.mark_tree(store)
    except OSError as exc:
        out["inode_marks"] = errno.errorcode.get(exc.errno or 0, str(exc))
    own = Path(store, "HEAD").read_bytes()
    del own
    subprocess.run(["cat", f"{store}/config"], stdout=subprocess.DEVNULL, check=True)
    box = subprocess.run(
        [
            "bwrap",
            "--unshare-all",
            "--unshare-user",
            "--die-with-parent",
            "--ro-bind",
            "/usr",
            "/usr",
            "--symlink",
            "usr/lib",
            "/lib",
            "--symlink",
            "usr/lib64",
            "/lib64",
            "--symlink",
            "usr/bin",
            "/bin",
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--ro-bind",
            str(folder),
            str(folder),
            "--",
            "cat",
            f"{store}/packed-refs",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    out["box_rc"] = box.returncode
    events = _wait_events(group, 0.3)
    by_name: dict[str, list[int]] = {}
    for e in events:
        by_name.setdefault(os.path.basename(e.path) or e.name, []).append(e.pid)
    out["events"] = {
        k: sorted(set(v)) for k, v in by_name.items() if k in ("HEAD", "config", "packed-refs")
    }
    out["own_pid"] = os.getpid()
    group.close()
    return out


def fact_unprivileged() -> dict[str, Any]:
    """:func:`probe_unprivileged` as ``nobody`` (setpriv), with the system's python3, on a
    repository in a new folder of the system's temporary folder that ``nobody`` may read (a
    test's temporary folder is not traversable by other users)."""
    base = Path(tempfile.mkdtemp(prefix="evotree-fanotify-nobody-"))
    try:
        return _as_nobody(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _as_nobody(base: Path) -> dict[str, Any]:
    _repository(base)
    subprocess.run(["git", "-C", str(base / "work"), "gc", "-q"], check=True)
    for path in [base, *base.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    python = shutil.which("python3", path="/usr/bin") or sys.executable
    proc = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            python,
            "-I",
            "-S",
            str(Path(__file__).resolve()),
            "--probe-unprivileged",
            str(base),
        ],
        capture_output=True,
        text=True,
        cwd="/",
    )
    if proc.returncode != 0:
        return {"error": proc.stderr[-500:]}
    return json.loads(proc.stdout)


def facts() -> dict[str, Any]:
    """Every feasibility probe (root: the sandboxed ones start the phase sandbox)."""
    with tempfile.TemporaryDirectory(prefix="evotree-fanotify-facts-") as tmp:
        folder = Path(tmp)
        work = _repository(folder)
        subprocess.run(["git", "-C", str(work), "gc", "-q"], check=True)
        return {
            "kernel": platform.release(),
            "euid": os.geteuid(),
            "sandboxed_pid": fact_sandboxed_pid(work),
            "readers": fact_readers(work),
            "host_hardlink_and_rename": fact_host_hardlink(folder),
            "queue": fact_queue(folder),
            "unprivileged": fact_unprivileged(),
        }


# ----------------------------------------------------------------------------- the benchmark
def build_repository(work: Path, files: int, history: int) -> None:
    """The agent mix's repository as bench_audit_trace.py builds it (``--files`` files, a base
    commit, ``--history`` commits by fast-import editing two files each): the same steps."""
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@b",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@b",
    }
    subprocess.run(["git", "init", "-q", str(work)], check=True, env=env)
    (work / "src").mkdir()
    for k in range(files):
        (work / "src" / f"f{k}.py").write_text("".join(f"value_{j} = {j * k}\n" for j in range(40)))
    subprocess.run(["git", "-C", str(work), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(work), "commit", "-q", "-m", "base"], check=True, env=env)
    stream = []
    for c in range(history):
        stream.append(
            f"commit refs/heads/master\ncommitter a <a@b> {1700000000 + c} +0000\n"
            f"data {len(f'c{c}')}\nc{c}\n" + ("from refs/heads/master^0\n" if c == 0 else "")
        )
        for k in (c % files, (c * 7) % files):
            body = "".join(f"value_{j} = {j * k + c}\n" for j in range(40))
            stream.append(f"M 644 inline src/f{k}.py\ndata {len(body)}\n{body}")
    subprocess.run(
        ["git", "-C", str(work), "fast-import", "--quiet"],
        input="".join(stream).encode(),
        check=True,
        env=env,
    )
    subprocess.run(["git", "-C", str(work), "reset", "-q", "--hard", "master"], check=True, env=env)


VARIANTS = ("sandbox", "seccomp-exec-only", "exec-only+fanotify", "seccomp")


def run_once(
    variant: str, work: Path, base: Path, script: str, tag: str, interval: float
) -> dict[str, Any]:
    """One phase of ``script`` in the sandbox under ``variant``: wall, CPU, and its checks."""
    from evotree.harness import sandbox as sandbox_mod
    from evotree.harness.sandbox import finish_trace, release_untraced, wrap
    from evotree.harness.sandbox_launch import accounted, sandbox_env
    from evotree.harness.sandbox_spec import SandboxSpec

    trace = base / f"raw-{tag}" if variant != "sandbox" else None
    sandbox_mod.TRACER = "seccomp"
    sandbox_mod.TRACE_OPENS = variant == "seccomp"
    phase_env = sandbox_env(dict(os.environ))
    phase_env.pop("EVOTREE_TRACE_PIN", None)
    spec = SandboxSpec(cwd=work, read_write=(work,), trace=trace)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    argv = wrap(spec, ["bash", "-c", script])  # the guard's copy is made here (in the timing)
    listener = None
    summary_path = base / f"fanotify-{tag}.json"
    if variant == "exec-only+fanotify":
        listener = subprocess.Popen(
            [
                sys.executable,
                "-I",
                "-S",
                str(Path(__file__).resolve()),
                "--listen",
                str(summary_path),
                "--interval",
                str(interval),
                *bound_stores(argv),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert listener.stdout is not None and listener.stdout.readline().startswith("ready")
    proc = subprocess.run(
        accounted(argv), env=phase_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    summary: dict[str, Any] = {}
    if listener is not None:  # stopped (drained) before the trace's conversion reads the copy
        assert listener.stdin is not None
        listener.stdin.close()
        listener.wait()
        summary = json.loads(summary_path.read_text())
    rows = finish_trace(spec, base) if trace is not None else []
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if trace is None:
        release_untraced(argv)
    assert proc.returncode == 0, proc.stderr[-2000:]
    git_pids = {
        r.get("pid")
        for r in rows
        if r["kind"] == "exec" and str(r.get("path", "")).endswith("/git")
    }
    out: dict[str, Any] = {
        "seconds": seconds,
        "cpu": after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime,
        "gits_traced": len(
            [r for r in rows if r["kind"] == "exec" and str(r.get("path", "")).endswith("/git")]
        ),
        "open_rows": sum(1 for r in rows if r["kind"] in ("open", "gitread")),
    }
    if summary:
        event_pids = {int(p) for p in summary["pids"]}
        out.update(
            marks=summary["marks"],
            mark_seconds=summary["mark_seconds"],
            events=summary["events"],
            reads=summary["reads"],
            overflows=summary["overflows"],
            event_pids=len(event_pids),
            gits_with_events=len(git_pids & event_pids),
            top_paths=summary["top_paths"],
        )
    return out


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """The agent mix: every variant ``--repeats`` times, interleaved in rotated order."""
    sys.path.insert(0, str(BENCH))
    import bench_audit_trace as B

    from evotree.harness import sandbox as sandbox_mod

    lines = [B.AGENT[k % len(B.AGENT)] + " >/dev/null" for k in range(args.commands)]
    script = "\n".join(lines)
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="evotree-bench-fanotify-") as tmp:
        base = Path(tmp)
        work = base / "work"
        work.mkdir()
        build_repository(work, args.files, args.history)
        try:
            for rep in range(args.repeats):
                k = rep % len(VARIANTS)
                for variant in VARIANTS[k:] + VARIANTS[:k]:
                    result = run_once(
                        variant, work, base, script, f"{rep}-{variant}", args.interval
                    )
                    if variant != "sandbox":
                        assert result["gits_traced"] == args.commands, result["gits_traced"]
                    if variant == "exec-only+fanotify":
                        assert result["overflows"] == 0, result
                        assert result["gits_with_events"] == args.commands, result
                    runs[variant].append(result)
                    print(
                        f"  {variant:20s} {result['seconds']:6.2f} s wall  {result['cpu']:6.2f} s cpu"
                        f"  events {result.get('events', '-')}  load {os.getloadavg()[0]:.1f}",
                        file=sys.stderr,
                    )
        finally:
            sandbox_mod.TRACER, sandbox_mod.TRACE_OPENS = "seccomp", True
    med = {v: statistics.median(r["seconds"] for r in runs[v]) for v in VARIANTS}
    med_cpu = {v: statistics.median(r["cpu"] for r in runs[v]) for v in VARIANTS}
    return {
        "mix": "agent",
        "commands": list(B.AGENT),
        "count": args.commands,
        "repeats": args.repeats,
        "median_seconds": med,
        "median_cpu_seconds": med_cpu,
        "overhead": {v: med[v] / med["sandbox"] - 1 for v in VARIANTS[1:]},
        "cpu_overhead": {v: med_cpu[v] / med_cpu["sandbox"] - 1 for v in VARIANTS[1:]},
        "target": B.TARGET,
        "runs": runs,
    }


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--history", type=int, default=300)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument(
        "--interval", type=float, default=0.05, help="the listener's pause between reads (s)"
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--facts", action="store_true", help="run the feasibility probes")
    parser.add_argument("--listen", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--probe-unprivileged", default=None, help=argparse.SUPPRESS)
    parser.add_argument("stores", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.listen:
        listen(args.stores, args.listen, args.interval)
        return
    if args.probe_unprivileged:
        print(json.dumps(probe_unprivileged(Path(args.probe_unprivileged))))
        return
    sys.path.insert(0, str(ROOT))
    if args.facts:
        print(json.dumps(facts(), indent=2))
        return
    from evotree.harness.sandbox import can_trace, check_sandbox

    status = check_sandbox()
    if not status.ok or not can_trace() or os.geteuid() != 0:
        print("needs bubblewrap, the tracer and root", file=sys.stderr)
        sys.exit(2)
    load_before = os.getloadavg()
    agent = measure(args)
    load_after = os.getloadavg()
    c, w = agent["cpu_overhead"], agent["overhead"]
    short = (
        f"exec-only+fanotify {c['exec-only+fanotify']:+.0%} CPU / {w['exec-only+fanotify']:+.0%} wall; "
        f"exec-only {c['seccomp-exec-only']:+.0%} / {w['seccomp-exec-only']:+.0%}; "
        f"opens reported {c['seccomp']:+.0%} / {w['seccomp']:+.0%}; load "
        f"{load_before[0]:.1f}-{load_after[0]:.1f}"
    )
    result: dict[str, Any] = {
        "bench": "trace_fanotify",
        "benchmark": "Runtime trace: exec-only reports with fanotify on the stores (not adopted)",
        # no "target" key: a study beside the trace record, not a row of BENCHMARKS.md
        "question": "runtime trace ≤ 10 % wall and CPU on the agent mix (docs/benchmarks/trace.md)",
        "figure": short,
        "verdict": "met"
        if c["exec-only+fanotify"] <= agent["target"] and w["exec-only+fanotify"] <= agent["target"]
        else "not met",
        "script": "bench/bench_trace_fanotify.py",
        "command": "nice -n 10 python "
        + " ".join(["bench/bench_trace_fanotify.py", *sys.argv[1:]]),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": _commit(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "kernel": platform.release(),
        "cpus": os.cpu_count(),
        "nice": os.nice(0),
        "load_average_before": load_before,
        "load_average_after": load_after,
        "agent": agent,
        "page": "docs/benchmarks/trace-fanotify.md",
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
