"""No read-open of a phase's program is let go on unseen: the rewritten-path attack, every decoy.

The kernel reads an open's path from the caller's memory again when the tracer lets the call go
on (seccomp_unotify(2): CONTINUE is no security decision). A second thread of the caller can see
the tracer's read of the path (the first touch of a page whose entry was dropped, in
``/proc/self/pagemap``) and write another path before the kernel copies it. So every read-open
the tracer lets go on is a way to the future branch's objects unless its row is a finding: the
tracer (seccomp_trace.c, ``pin``) pins it (hands the caller the file its own walk reached),
answers it with the kernel's error, or lets it go on with an ``unpinned`` row, which the audit
flags.

Each decoy below is an open that used to go on with no row: a device as written, the caller's
own ``/proc/self`` (``self`` names no process for the tracer outside the box's PID namespace), a
file of ``/proc``, a walk failing with ENOTDIR or ELOOP, an empty path, a relative open from a
removed folder, ``O_EXCL`` without ``O_CREAT`` (a plain read). The attack must fail or be
flagged. Beside them, honest programs are told what the kernel tells them (a control runs with
pinning off), and only the opens the tracer cannot answer as the kernel would are findings.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_redteam_gym_trace import SECRET, _flagged, _safe
from test_redteam_trace_deputy import _OPENS, _differs, _lines, _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture
from test_redteam_trace_own_links_redteam import _LEAK, _future_object

from evotree.harness.audit.trace import TRACE_FILE

#: the rewritten-path attack with DECOY (a Python expression, bytes, evaluated in the box, its
#: setup before) and open flags FLAGS: a thread writes the object's path over the decoy once the
#: tracer's read of the page is seen in /proc/self/pagemap
_REWRITE = """\
import ctypes, mmap, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.open.argtypes = [ctypes.c_void_p, ctypes.c_int]
target = os.path.join(work, obj).encode() + b"\\0"
{setup}
decoy = {decoy} + b"\\0"
mfd = os.memfd_create("path")
os.ftruncate(mfd, 4096)
mm = mmap.mmap(mfd, 4096, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
addr = ctypes.addressof(ctypes.c_char.from_buffer(mm))
pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
def present():
    return int.from_bytes(os.pread(pagemap, 8, addr // 4096 * 8), "little") >> 63
armed = threading.Event()
def watch():
    while True:
        armed.wait()
        while armed.is_set() and not present():
            pass
        if armed.is_set():
            present(), present(), present()
            ctypes.memmove(addr, target, len(target))
            armed.clear()
threading.Thread(target=watch, daemon=True).start()
for tries in range(1, {tries} + 1):
    ctypes.memmove(addr, b"\\0" * 4096, 4096)
    ctypes.memmove(addr, decoy, len(decoy))
    mm.madvise(mmap.MADV_DONTNEED)
    armed.set()
    fd = libc.open(addr, {flags})
    armed.clear()
    try:
        data = os.read(fd, 4096) if fd >= 0 else b""
    except OSError:
        data = b""
    if fd >= 0:
        os.close(fd)
    try:
        print("attack OK", zlib.decompress(data).decode("latin1").replace("\\x00", " "))
        break
    except zlib.error:
        pass
print("tries", tries)
"""

#: name: (setup, decoy, flags)
_DECOYS = {
    "device": ("", 'b"/dev/null"', "os.O_RDONLY"),
    "own-proc-self": ("", 'b"/proc/self/status"', "os.O_RDONLY"),
    "own-thread-self": ("", 'b"/proc/thread-self/stat"', "os.O_RDONLY"),
    "proc-file": ("", 'b"/proc/cpuinfo"', "os.O_RDONLY"),
    "proc-net-link": ("", 'b"/proc/net/dev"', "os.O_RDONLY"),
    "enotdir": ("", 'b"obj.txt/x"', "os.O_RDONLY"),
    "eloop": ('os.path.lexists("loop") or os.symlink("loop", "loop")', 'b"loop"', "os.O_RDONLY"),
    "empty-path": ("", 'b""', "os.O_RDONLY"),
    "excl-without-creat": ("", 'b"obj.txt"', "os.O_RDONLY | os.O_EXCL"),
    "fifo-nonblocking": (
        'os.path.exists("p") or os.mkfifo("p")',
        'b"p"',
        "os.O_RDONLY | os.O_NONBLOCK",
    ),
    "socket": (
        'import socket; s = socket.socket(socket.AF_UNIX); s.bind("s")',
        'b"s"',
        "os.O_RDONLY",
    ),
    "missing-proc-file": ("", 'b"/proc/self/no-such-entry"', "os.O_RDONLY"),
    "creat-missing": ("", 'b"made-by-open"', "os.O_RDONLY | os.O_CREAT"),
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_DECOYS))
def test_a_path_rewritten_after_the_tracers_read_finds_no_open_let_go_on(
    tmp_path: Path, seccomp: None, name: str
) -> None:
    """The object's path written over each decoy in the window: the secret never comes out
    unflagged (the tracer answered the decoy itself, or flagged the open it let go on)."""
    setup, decoy, flags = _DECOYS[name]
    script = _LEAK + _REWRITE.format(setup=setup, decoy=decoy, flags=flags, tries=60)
    proc, audit = _run(tmp_path, script, _future_object, timeout=240)
    if "tries" not in _lines(proc):  # the attack did not run: not a pass
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)


@pytest.mark.heavy
def test_the_attack_wins_where_opens_are_let_go_on(tmp_path: Path, seccomp: None) -> None:
    """The control: with pinning off (every open let go on, as before pinning) the same attack
    reads the future object through the device decoy, unflagged: the tests above can fail."""
    setup, decoy, flags = _DECOYS["device"]
    script = _LEAK + _REWRITE.format(setup=setup, decoy=decoy, flags=flags, tries=60)
    proc, audit = _run(tmp_path, script, _future_object, pin="off", timeout=240)
    if "tries" not in _lines(proc):  # the attack did not run: not a pass
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    if SECRET not in proc.stdout:  # a race: under load it can lose all its tries (not a failure)
        pytest.xfail("the race lost every try this time: the control shows nothing either way")
    if _flagged(audit):
        # the watcher wrote the object's path before the tracer read it (not in the window):
        # the open is recorded as the object's, so the try did not race the tracer at all
        # (seen once in CI under load, "tries 2"); the control shows nothing either way
        pytest.xfail("the path was rewritten before the tracer read it: no race, control moot")
    assert not _flagged(audit), proc.stdout[-2000:]


#: honest opens that used to be let go on: each must get the kernel's answer (the control:
#: pinning off) and no finding
_HONEST = """\
import socket, threading, time
os.mkfifo("fifo")
s = socket.socket(socket.AF_UNIX)
s.bind("sock")
open("plain", "w").write("x")
os.symlink("loop", "loop")
attempt("devnull", "/dev/null")
attempt("tty", "/dev/tty")
attempt("selfstatus-pid", "/proc/self/status")
attempt("threadself-name", "/proc/thread-self/comm")
attempt("selffd", "/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
attempt("selfmaps", "/proc/self/maps")
attempt("selfexe", "/proc/self/exe")
attempt("selfenviron", "/proc/self/environ")
attempt("ownpid-environ", "/proc/%d/environ" % os.getpid())
attempt("netdev-head", "/proc/net/dev")
attempt("mounts", "/proc/mounts")
attempt("cpuinfo-head", "/proc/cpuinfo")
attempt("sys-vm", "/proc/sys/vm/overcommit_memory")
attempt("pid1-cmdline", "/proc/1/cmdline")
attempt("missing-proc", "/proc/self/no-such-entry")
attempt("sock", "sock")
attempt("fifo-nonblock", "fifo", os.O_RDONLY | os.O_NONBLOCK)
attempt("fifo-rdwr", "fifo", os.O_RDWR)
attempt("enotdir", "plain/x")
attempt("eloop", "loop")
attempt("excl", "plain", os.O_RDONLY | os.O_EXCL)
attempt("empty", "")
r, w = os.pipe()
os.write(w, b"piped")
os.dup2(r, 0)
attempt("stdin-pipe", "/dev/stdin")
os.mkdir("gone")
os.chdir("gone")
os.rmdir("../gone")
attempt("gone-name", "x")
attempt("gone-creat", "x", os.O_RDONLY | os.O_CREAT, 0o644)
os.chdir("..")
"""

#: what differs between two runs whatever the tracer does (counters, times, the tracer's
#: own descriptors in the listing): compared by their first characters only
_VOLATILE = {"cpuinfo-head": 12, "netdev-head": 12, "selfmaps": 0, "selfenviron": 0}


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, list[dict]]:
    from evotree.harness import sandbox

    if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
        pytest.skip("needs bubblewrap and the compiled seccomp tracer (a C compiler)")
    old = sandbox.TRACER
    sandbox.TRACER = "seccomp"
    try:
        tmp = tmp_path_factory.mktemp("pinned")
        proc, _ = _run(tmp, _OPENS + _HONEST)
        rows = [
            json.loads(line) for line in (tmp / "evidence" / TRACE_FILE).read_text().splitlines()
        ]
        control, _ = _run(tmp_path_factory.mktemp("kernel"), _OPENS + _HONEST, pin="off")
    finally:
        sandbox.TRACER = old
    return _lines(proc), _lines(control), rows


@pytest.mark.heavy
def test_honest_opens_are_told_what_the_kernel_tells_them(honest: tuple) -> None:
    pinned, kernel, _ = honest
    asked = {line.split('"')[1] for line in _HONEST.splitlines() if line.startswith("attempt(")}
    assert set(pinned) == asked == set(kernel), (pinned, kernel)
    cut = {k: v for k, v in _differs(pinned, kernel).items() if k not in _VOLATILE}
    for key, keep in _VOLATILE.items():
        if keep and pinned.get(key, "-")[:keep] != kernel.get(key, "-")[:keep]:
            cut[key] = (pinned.get(key, "-"), kernel.get(key, "-"))
    assert not cut, cut
    # the box's own view: /proc/self is the caller's folder in the box's /proc (its pid there)
    assert "Pid:\\t" in pinned["selfstatus-pid"] and pinned["selfstatus-pid"].startswith("OK")
    assert pinned["tty"] == "ERR ENXIO" and pinned["sock"] == "ERR ENXIO"
    assert pinned["gone-name"] == "ERR ENOENT" and pinned["empty"] == "ERR ENOENT"
    assert pinned["stdin-pipe"] == "OK b'<ESPIPE>'"  # the pipe itself (pread: ESPIPE)


@pytest.mark.heavy
@pytest.mark.parametrize("pin", ["", "off", "uncertain"])
def test_the_box_never_sees_the_tracers_own_setting(
    tmp_path: Path, seccomp: None, pin: str
) -> None:
    """EVOTREE_TRACE_PIN is the tracer's, not the phase's: the tracer drops it before it starts
    the box. (Before: a control run with pinning off showed the box an environment the pinned run
    did not -- and on a machine whose PATH is long enough, the honest-opens comparison of
    /proc/self/environ failed on that one variable; CI, stop 41.)"""
    script = 'import os\nprint("seen", repr(os.environ.get("EVOTREE_TRACE_PIN")))\n'
    proc, _ = _run(tmp_path, script, pin=pin)
    assert "seen None" in proc.stdout, proc.stdout + proc.stderr[-2000:]


@pytest.mark.heavy
def test_honest_opens_are_no_finding(honest: tuple) -> None:
    """None of the honest opens above is let go on (no open row at all)."""
    _, _, rows = honest
    opens = [r for r in rows if r.get("kind") == "open"]
    assert not opens, opens


#: opens the tracer cannot answer as the kernel would: let go on, each with its reason
_UNSEEN = """\
import threading, time
os.mkfifo("fifo")
def writer():
    time.sleep(0.5)
    with open("fifo", "w") as fh:
        fh.write("late")
threading.Thread(target=writer).start()
attempt("fifo-blocking", "fifo")
attempt("pid1-environ", "/proc/1/environ")
attempt("own-comm-rdwr", "/proc/self/comm", os.O_RDWR)
os.mkdir("gone")
os.chdir("gone")
os.rmdir("../gone")
attempt("gone-dotdot", "../t.py")
"""


@pytest.mark.heavy
def test_opens_it_cannot_answer_are_findings_with_their_reason(
    tmp_path: Path, seccomp: None
) -> None:
    proc, audit = _run(tmp_path, _OPENS + _UNSEEN)
    lines = _lines(proc)
    assert lines["fifo-blocking"] == "OK b'<ESPIPE>'", lines  # the kernel's open waited
    rows = [
        json.loads(line)
        for line in (tmp_path / "evidence" / TRACE_FILE).read_text().splitlines()
        if '"open"' in line
    ]
    why = {r["path"].rsplit("/", 1)[-1]: r.get("unpinned") for r in rows}
    assert "FIFO" in (why.get("fifo") or ""), rows
    assert "checks against its opener" in (why.get("environ") or ""), rows
    assert "to write" in (why.get("comm") or ""), rows
    assert "removed folder" in (why.get("t.py") or ""), rows
    assert _flagged(audit)
    texts = [h.rule for v in audit.verdicts for h in v.hits]
    assert any("could not see" in t and "FIFO" in t for t in texts), texts
    assert SECRET not in proc.stdout
