"""Red-team attacks on the tracer's following of the caller's own cwd and root links.

The tracer follows ``/proc/self/cwd``, ``/proc/self/root`` and thread-self's (seccomp_trace.c,
``resolve_in``) by reading ``/proc/PID/cwd`` itself and walking the path it stands for in the
caller's root. That walk is not the kernel's: the kernel jumps to the folder (no search
permission on its parents, no path length, one link hop), the tracer walks a string from "/".
Each attack below is a candidate's train code using the difference, in the real sandbox under
the compiled tracer, over a task repository whose ``future`` branch holds ``FUTURE_SECRET_42``.
The object read is the loose object of the future's blob (its path written into ``obj.txt``
from outside the box: no listing of the store in the box). Where the kernel's answer is the
point, a control runs with pinning off (``EVOTREE_TRACE_PIN=off``).

Two attacks at the end are not 081b083's but were found on the way: the same failed walks in
plain relative opens, and a path rewritten in memory after the tracer read it (any open the
tracer lets go on, CONTINUE, is walked by the kernel from a path it reads again).

Safe outcomes: git storage read through the links is a finding (or is refused); the caller gets
from the tracer the kernel's answer. An attack that works is a strict xfail asserting the safe
outcome (its reason says how it works); one that is stopped is a passing test.

Of the 19 attacks that first worked, 17 were stopped by the tracer's next change: a walk through
an own link that fails for any reason but a missing name fails closed (a finding), as does one
refused (EACCES) or too long (ENAMETOOLONG) once a relative path is joined to the cwd; the
caller's O_NOFOLLOW on the link and openat2's RESOLVE_NO_MAGICLINKS/_NO_SYMLINKS fail closed
(the kernel answers); /proc/self/cwd is the process's cwd (thread-self's the thread's); O_CREAT
through the links makes the file where the link stands. Two remained (strict xfails): forty links
after the link (one hop more for the tracer than for the kernel: a file the caller may read
anyway), still open, and a path rewritten in memory after the tracer read it (any open let go
on), stopped since: no read-open is let go on without a finding (test_redteam_trace_let_go.py).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_redteam_gym_trace import SECRET, _flagged, _safe
from test_redteam_trace_deputy import _OPENS, _differs, _lines, _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture

from evotree.harness import sandbox
from evotree.harness.audit.trace import git_identities


def _works(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


def _future_object(work: Path) -> None:
    """Outside the box: the path (from the work folder) of the future blob's loose object."""
    blob = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "future:a.txt"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    obj = f".git/objects/{blob[:2]}/{blob[2:]}"
    assert (work / obj).is_file(), obj
    (work / "obj.txt").write_text(obj)


#: ``leak(name, path)``: opens PATH, inflates it and prints what it holds (the secret, if the
#: object came out); ``x`` is made by each attack (most often a link to the object)
_LEAK = """\
import os, zlib
work = os.getcwd()
obj = open("obj.txt").read()
def leak(name, path):
    try:
        with open(path, "rb") as fh:
            text = zlib.decompress(fh.read())
    except (OSError, zlib.error) as exc:
        print(name, "ERR", getattr(exc, "errno", exc))
        return
    print(name, "OK", text.decode("latin1").replace("\\x00", " ").replace("\\n", " "))
"""

#: the link x to the object, and a path "/proc/self/cwd/y/../y/../.../x" just under PATH_MAX
#: (4,095 bytes): the kernel walks it (the cwd is a jump, not a string); the tracer's
#: "<cwd>/y/../.../x" is longer than PATH_MAX, its openat2 fails (ENAMETOOLONG)
_PADDED_OWN_CWD = """\
os.mkdir("y")
os.symlink(os.path.join(work, obj), "x")
pad = "y/../" * ((4095 - len("/proc/self/cwd/x")) // 5)
leak("attack", "/proc/self/cwd/" + pad + "x")
"""

#: the same padding in a relative path: "<cwd>/<relative>" is past PATH_MAX for the tracer only
_PADDED_RELATIVE = """\
os.mkdir("y")
os.symlink(os.path.join(work, obj), "x")
pad = "y/../" * ((4095 - len("x")) // 5)
leak("attack", pad + "x")
"""

#: the working folder under a folder of mode 000 (the caller's own): the kernel's jump to the
#: cwd checks no parent's search permission, the tracer's walk from "/" is refused (EACCES: it
#: keeps no CAP_DAC_OVERRIDE, by design)
_LOCKED_PARENT_OWN_CWD = """\
os.makedirs("a/b/c")
os.chdir("a/b/c")
os.symlink(os.path.join(work, obj), "x")
os.chmod(os.path.join(work, "a"), 0)
try:
    leak("attack", "/proc/self/cwd/x")
finally:
    os.chmod(os.path.join(work, "a"), 0o755)
"""

#: the same with a plain relative open
_LOCKED_PARENT_RELATIVE = _LOCKED_PARENT_OWN_CWD.replace('"/proc/self/cwd/x"', '"x"')

#: own links nested twice, to a link x into /proc/self/root: the tracer's walk of "<cwd>/x" is
#: at depth 2, where a failed walk (x's target goes through /proc/self, which names no process
#: for the tracer) is neither retried with the links expanded nor failed closed
_NESTED_ROOT_CWD = """\
os.symlink("/proc/self/root" + os.path.join(work, obj), "x")
leak("attack", "/proc/self/root/proc/self/cwd/x")
"""

_NESTED_ROOT_ROOT = """\
os.symlink("/proc/self/root" + os.path.join(work, obj), "x")
leak("attack", "/proc/self/root/proc/self/root" + work + "/x")
"""

#: the working folder /proc: "/proc/self/cwd/self/root/<work>/x" is own links twice as well
_CWD_IN_PROC = """\
os.symlink("/proc/self/root" + os.path.join(work, obj), "x")
os.chdir("/proc")
leak("attack", "/proc/self/cwd/self/root" + work + "/x")
"""


@pytest.mark.heavy
@pytest.mark.parametrize(
    "script",
    [
        pytest.param(
            _PADDED_OWN_CWD,
            id="own-cwd-path-past-path-max",
        ),
        pytest.param(
            _LOCKED_PARENT_OWN_CWD,
            id="own-cwd-under-a-mode-000-folder",
        ),
        pytest.param(
            _NESTED_ROOT_CWD,
            id="root-then-cwd-to-a-proc-link",
        ),
        pytest.param(
            _NESTED_ROOT_ROOT,
            id="root-then-root-to-a-proc-link",
        ),
        pytest.param(
            _CWD_IN_PROC,
            id="cwd-in-proc-then-root",
        ),
    ],
)
def test_git_storage_through_own_links_where_the_tracers_walk_fails(
    tmp_path: Path, seccomp: None, script: str
) -> None:
    """The object is read (the kernel walks) while the tracer's own walk failed: the safe
    outcome is that the secret did not come out or the run is flagged."""
    proc, audit = _run(tmp_path, _LEAK + script, _future_object)
    if "attack" not in _lines(proc):  # the attack did not run (not an expected failure)
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)


@pytest.mark.heavy
@pytest.mark.parametrize(
    "script",
    [
        pytest.param(
            _PADDED_RELATIVE,
            id="relative-path-past-path-max",
        ),
        pytest.param(
            _LOCKED_PARENT_RELATIVE,
            id="relative-under-a-mode-000-folder",
        ),
    ],
)
def test_git_storage_by_relative_opens_where_the_tracers_walk_fails(
    tmp_path: Path, seccomp: None, script: str
) -> None:
    """The same failures of the tracer's walk without the links (a relative open's base is
    the same readlink of /proc/PID/cwd): the safe outcome as above."""
    proc, audit = _run(tmp_path, _LEAK + script, _future_object)
    if "attack" not in _lines(proc):  # the attack did not run (not an expected failure)
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)


#: walks that fail closed or are judged: a link from the cwd into /proc/self/root at depth 1
#: (expanded and followed), own links three deep (past the depth), /proc/PID/cwd by number and
#: /proc/self/task/TID/cwd (another process's spelling: unresolved), a working folder deeper than
#: a page (its readlink fails: unresolved), a directory descriptor of /proc with "self/cwd/x"
#: (the own-link walk, judged)
_JUDGED = {
    "cwd-link-into-proc-self-root": """\
os.symlink("/proc/self/root" + os.path.join(work, obj), "x")
leak("attack", "/proc/self/cwd/x")
""",
    "own-links-three-deep": """\
os.symlink(os.path.join(work, obj), "x")
leak("attack", "/proc/self/root/proc/self/root/proc/self/root" + work + "/x")
""",
    "cwd-by-pid-number": """\
os.symlink(os.path.join(work, obj), "x")
leak("attack", "/proc/%d/cwd/x" % os.getpid())
""",
    "cwd-by-task-id": """\
os.symlink(os.path.join(work, obj), "x")
leak("attack", "/proc/self/task/%d/cwd/x" % os.getpid())
""",
    "own-cwd-deeper-than-a-page": """\
target = os.path.join(work, obj)
for _ in range(21):
    os.mkdir("d" * 200)
    os.chdir("d" * 200)
os.symlink(target, "x")
leak("attack", "/proc/self/cwd/x")
""",
    "dirfd-of-proc-then-self-cwd": """\
os.symlink(os.path.join(work, obj), "x")
p = os.open("/proc", os.O_RDONLY | os.O_DIRECTORY)
fd = os.open("self/cwd/x", os.O_RDONLY, dir_fd=p)
print("attack", "OK", zlib.decompress(os.read(fd, 4096)).decode("latin1").replace("\\x00", " "))
""",
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_JUDGED))
def test_git_storage_through_own_links_that_are_judged(
    tmp_path: Path, seccomp: None, name: str
) -> None:
    """Stopped: the object comes out, and the run is flagged."""
    proc, audit = _run(tmp_path, _LEAK + _JUDGED[name], _future_object)
    assert SECRET in _lines(proc).get("attack", ""), proc.stdout + proc.stderr[-2000:]
    assert _flagged(audit), [h.rule for v in audit.verdicts for h in v.hits]


#: opens through the own links whose answer the kernel gives differently or the same; each line
#: ``name OK <bytes>`` or ``name ERR <errno>``
_ANSWERS = (
    _OPENS
    + """\
import ctypes, threading
work = os.getcwd()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def attempt2(name, path, flags, resolve, dirfd=-100):
    how = (ctypes.c_uint64 * 3)(flags, 0, resolve)
    fd = libc.syscall(437, ctypes.c_int(dirfd), ctypes.c_char_p(path.encode()),
                      ctypes.byref(how), ctypes.c_size_t(24))
    if fd < 0:
        print(name, "ERR", errno.errorcode.get(ctypes.get_errno()))
        return
    print(name, "OK", os.pread(fd, 20, 0))
    os.close(fd)
open("f", "w").write("leader")
os.mkdir("plain")
open("plain/f", "w").write("plain")
attempt("nofollow-directory-cwd", "/proc/self/cwd", os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
attempt("nofollow-directory-root", "/proc/self/root", os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY)
attempt("nofollow-cwd", "/proc/self/cwd", os.O_RDONLY | os.O_NOFOLLOW)
attempt2("resolve-no-magiclinks", "/proc/self/cwd/f", 0, 0x02)
attempt2("resolve-no-symlinks", "/proc/self/cwd/f", 0, 0x04)
attempt2("resolve-no-xdev", "/proc/self/cwd/f", 0, 0x01)
attempt2("resolve-no-magiclinks-root", "/proc/self/root" + work + "/f", 0, 0x02)
attempt("dotdot", "/proc/self/cwd/../" + os.path.basename(work) + "/f")
attempt("root-dotdot", "/proc/self/root/../.." + work + "/f")
def in_thread():
    libc.unshare(0x200)  # CLONE_FS: this thread's own working folder
    os.chdir("plain")
    attempt("thread-fs-self-cwd", "/proc/self/cwd/f")
    attempt("thread-fs-thread-self-cwd", "/proc/thread-self/cwd/f")
thread = threading.Thread(target=in_thread)
thread.start()
thread.join()
for label, folder in (("deleted", "x (deleted)"), ("newline", "new\\nline"), ("long", "d" * 255)):
    os.chdir(work)
    os.mkdir(folder)
    os.chdir(folder)
    open("g", "w").write(label)
    attempt("odd-name-" + label, "/proc/self/cwd/g")
os.chdir(work)
for label, folder in (("box-tmpfs", "/dev/shm/own"), ("through-a-link", work + "/lnk")):
    if label == "through-a-link":
        os.symlink("plain", folder)
    else:
        os.mkdir(folder)
        open(folder + "/f", "w").write(label)
    os.chdir(folder)
    attempt("cwd-" + label, "/proc/self/cwd/f")
    os.chdir(work)
attempt("creat-own-cwd", "/proc/self/cwd/new1", os.O_RDWR | os.O_CREAT, 0o644)
attempt("creat-own-root", "/proc/self/root" + work + "/new2", os.O_RDWR | os.O_CREAT, 0o644)
print("creat-made", os.path.exists("new1"), os.path.exists("new2"))
# 40 links to f: with the magic link before them, one hop past the kernel's 40
for k in range(40):
    os.symlink("f" if k == 39 else "l%d" % (k + 1), "l%d" % k)
attempt("forty-links-after-cwd", "/proc/self/cwd/l0")
# chroot, pivot_root or a mount over the cwd need a user namespace: refused in the box
r = libc.unshare(0x10000000 | 0x20000)
print("unshare-user-mount", r, errno.errorcode.get(ctypes.get_errno()) if r else "")
"""
)


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict, dict]]:
    """The answers of the pinned run and of the kernel (pinning off), once for the module."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sandbox, "TRACER", "seccomp")
        mp.delenv("EVOTREE_TRACE_PIN", raising=False)
        if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
            pytest.skip("needs bubblewrap and the compiled seccomp tracer (a C compiler)")
        if not git_identities():
            pytest.skip("no git on this machine")
        base = tmp_path_factory.mktemp("answers")
        pinned, _ = _run(base / "pinned", _ANSWERS)
        kernel, _ = _run(base / "kernel", _ANSWERS, pin="off")
        a, b = _lines(pinned), _lines(kernel)
        # pytest.fail, not assert: a broken run must not pass for an expected (xfail) failure
        if len(b) < 21 or len(a) < 21:
            pytest.fail(kernel.stdout + pinned.stdout + pinned.stderr[-2000:])
        yield a, b


_DIFFERENT = {
    "forty-links-after-cwd": (
        "/proc/self/cwd/l0 with 40 links l0 -> ... -> f: the kernel counts the magic link as a "
        "hop (41: ELOOP), the tracer's walk of '<cwd>/l0' has 40 and hands over f"
    ),
}


@pytest.mark.heavy
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=_works(_DIFFERENT[n]) if n in _DIFFERENT else ())
        for n in [
            "nofollow-directory-cwd",
            "nofollow-directory-root",
            "nofollow-cwd",
            "resolve-no-magiclinks",
            "resolve-no-symlinks",
            "resolve-no-xdev",
            "resolve-no-magiclinks-root",
            "dotdot",
            "root-dotdot",
            "thread-fs-self-cwd",
            "thread-fs-thread-self-cwd",
            "odd-name-deleted",
            "odd-name-newline",
            "odd-name-long",
            "cwd-box-tmpfs",
            "cwd-through-a-link",
            "creat-own-cwd",
            "creat-own-root",
            "creat-made",
            "forty-links-after-cwd",
            "unshare-user-mount",
        ]
    ],
)
def test_the_caller_is_told_what_the_kernel_tells_it(answers: tuple[dict, dict], name: str) -> None:
    """The tracer's answer through the own links is the kernel's (none of these reads git
    storage: a difference hands over a descriptor the kernel refuses, or another file)."""
    pinned, kernel = answers
    if name not in kernel:
        pytest.fail(f"{name} was not run: {kernel}")
    assert pinned.get(name) == kernel[name], _differs(pinned, kernel)


@pytest.mark.heavy
def test_no_user_namespace_in_the_box(answers: tuple[dict, dict]) -> None:
    """Stopped: no chroot, pivot_root or mount inside the box (each would put the caller's root
    or cwd where the tracer's readlink of /proc/PID/cwd names something else)."""
    pinned, kernel = answers
    assert kernel["unshare-user-mount"].startswith("-1"), kernel
    assert pinned["unshare-user-mount"].startswith("-1"), pinned


# ------------------------------------- found on the way: not 081b083's, any open the tracer lets go

#: the path of an open the tracer lets go on (CONTINUE: here /dev/null, a device reached as
#: written; a /proc file, a failed walk are others) is read twice: by the tracer
#: (process_vm_readv) and by the kernel after the answer. The path lives alone in a page of a
#: shared memfd mapping whose page-table entry was dropped (MADV_DONTNEED: the content stays);
#: the first touch of the page is the tracer's read, which a thread sees in /proc/self/pagemap
#: (the "present" bit) and then writes the object's path over "/dev/null" before the kernel
#: copies it. Not a blind race: the thread waits for the tracer's read
_PATH_REWRITTEN = """\
import ctypes, mmap, threading
libc = ctypes.CDLL(None, use_errno=True)
libc.open.argtypes = [ctypes.c_void_p, ctypes.c_int]
target = os.path.join(work, obj).encode() + b"\\0"
decoy = b"/dev/null\\0"
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
            present(), present(), present()  # a few microseconds: the tracer's copy is over
            ctypes.memmove(addr, target, len(target))
            armed.clear()
threading.Thread(target=watch, daemon=True).start()
for tries in range(1, 201):
    ctypes.memmove(addr, decoy, len(decoy))
    mm.madvise(mmap.MADV_DONTNEED)
    armed.set()
    fd = libc.open(addr, os.O_RDONLY)
    armed.clear()
    data = os.read(fd, 4096) if fd >= 0 else b""
    if fd >= 0:
        os.close(fd)
    if data:
        print("attack OK", zlib.decompress(data).decode("latin1").replace("\\x00", " "))
        break
print("tries", tries)
"""


@pytest.mark.heavy
def test_a_path_rewritten_once_the_tracer_has_read_it(tmp_path: Path, seccomp: None) -> None:
    """Any open the tracer lets go on (CONTINUE) is walked by the kernel from a path it reads
    again: the safe outcome is that the secret did not come out or the run is flagged. It won
    on the first try (the decoy /dev/null, a device reached as written, was let go on with no
    row); devices are pinned now, and no read-open goes on without a finding (every decoy:
    test_redteam_trace_let_go.py)."""
    proc, audit = _run(tmp_path, _LEAK + _PATH_REWRITTEN, _future_object, timeout=240)
    if "tries" not in _lines(proc):  # the attack did not run (not an expected failure)
        pytest.fail(proc.stdout + proc.stderr[-2000:])
    _safe(proc, audit)
