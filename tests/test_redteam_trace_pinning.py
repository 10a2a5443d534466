"""Red-team attacks on the tracer's pinned opens, by the attacker's book.

The tracer walks an open's path while the caller waits, and (pinning) hands the caller the file
that walk reached as the call's result, so the kernel walks nothing after it (seccomp_trace.c,
"Pinning an open"; docs/threat-model.md). Each attack below tries to make what the tracer judged
and what the caller holds differ, in the real sandbox over a task repository whose branch
``future`` holds ``FUTURE_SECRET_42`` (``_traced`` of test_redteam_gym_trace.py); the safe
outcome: the secret never came out, or the audit flags the run. Where the same attack works
against the tracer with pinning off (``EVOTREE_TRACE_PIN=off``), a control says so: the test of
the pinned tracer is then not vacuous.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_redteam_gym_trace import SECRET, _flagged, _safe, _traced
from test_redteam_trace_attacks import _REOPEN, _SWAP

from evotree.harness import sandbox
from evotree.harness.audit.trace import git_identities
from evotree.harness.sandbox import wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec


@pytest.fixture
def seccomp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "TRACER", "seccomp")
    monkeypatch.delenv("EVOTREE_TRACE_PIN", raising=False)
    if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
        pytest.skip("needs bubblewrap and the compiled seccomp tracer (a C compiler)")
    if not git_identities():
        pytest.skip("no git on this machine")


# ------------------------------------------------------ the link swap, opened by openat2

#: the link swap of test_redteam_trace_attacks.py (the tracer's walk seen in the link's access
#: time), the open made by openat2 with RESOLVE_NO_MAGICLINKS from the working directory, or
#: with RESOLVE_IN_ROOT of a descriptor of "/" (the tracer walks that one from the descriptor)
_OPENAT2 = """\
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)

class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

ROOT = os.open("/", os.O_PATH | os.O_DIRECTORY)

# openat2: RESOLVE_NO_MAGICLINKS from the working directory, or RESOLVE_IN_ROOT of "/"
def OPEN(path, flags):
    in_root = sys.argv[1:] == ["in-root"]
    how = How(flags, 0, 0x10 if in_root else 0x02)
    fd = libc.syscall(437, ROOT if in_root else -100, path.encode(), ctypes.byref(how),
                      ctypes.sizeof(how))
    if fd < 0:
        raise OSError(ctypes.get_errno(), path)
    return fd
"""
_SWAP_OPENAT2 = _SWAP.replace(
    "import os, threading, zlib\n", "import os, threading, zlib\n" + _OPENAT2, 1
).replace("os.open(link, flags)", "OPEN(link, flags)")


@pytest.mark.heavy
@pytest.mark.parametrize("how", ["no-magic", "in-root"])
def test_a_link_swapped_under_openat2(tmp_path: Path, seccomp: None, how: str) -> None:
    proc, audit = _traced(tmp_path, f"python3 t.py {how}", {"t.py": _SWAP_OPENAT2})
    _safe(proc, audit)
    assert "never won" in proc.stderr, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.heavy
def test_a_link_swapped_under_openat2_wins_with_pinning_off(
    tmp_path: Path, seccomp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVOTREE_TRACE_PIN", "off")
    proc, audit = _traced(tmp_path, "python3 t.py in-root", {"t.py": _SWAP_OPENAT2})
    if SECRET not in proc.stdout:
        # since 0b7eb14 the swap's rename is itself reported: it waits behind the open the tracer
        # serves, so it lands after the kernel's walk and the race rarely (or never) wins
        pytest.xfail("the swap never won this time (renames are reported and wait): no control")
    assert not _flagged(audit), proc.stderr[-2000:]


#: the same swap with a FIFO as the decoy (opened O_NONBLOCK: it does not wait): a FIFO is not
#: pinned (its open has effects; a FIFO opened to read waits for a writer), so the kernel walked
#: the link again and opened the object, with no row, about one try in three. Since then a FIFO
#: that does not wait (O_NONBLOCK, O_RDWR), a device and a terminal are pinned like a file, a
#: socket is answered ENXIO, and only a FIFO opened by name to read and wait is let go on, with
#: a finding: the swap never wins, or the run is flagged
_FIFO_SWAP = """\
\\
import os, threading, zlib
os.mkfifo("/tmp/harmless")
tries = [0]

def sneak_open(target, flags, folder=False):
    real = os.stat(target)
    while tries[0] < 300:
        tries[0] += 1
        link, other = "/tmp/l%d" % tries[0], "/tmp/m%d" % tries[0]
        os.symlink("/tmp/harmless", link)
        os.symlink(target, other)
        before = os.lstat(link).st_atime_ns
        got = []
        def attempt():
            try:
                got.append(os.open(link, flags | os.O_NONBLOCK))
            except OSError:
                got.append(-1)

        opener = threading.Thread(target=attempt)
        opener.start()
        while os.lstat(link).st_atime_ns == before and opener.is_alive():
            pass
        os.rename(other, link)
        opener.join()
        os.unlink(link)
        if got[0] < 0:
            continue
        st = os.fstat(got[0])
        if (st.st_dev, st.st_ino) == (real.st_dev, real.st_ino):
            return got[0]
        os.close(got[0])
    raise SystemExit("never won")

store = os.path.realpath("." + "git/objects")
top = sneak_open(store, os.O_RDONLY | os.O_DIRECTORY, True)
for xx in os.listdir(top):
    if len(xx) != 2:
        continue
    sub = sneak_open(store + "/" + xx, os.O_RDONLY | os.O_DIRECTORY, True)
    for name in os.listdir(sub):
        fd = sneak_open(store + "/" + xx + "/" + name, os.O_RDONLY)
        text = zlib.decompress(os.read(fd, 1 << 20))
        if b"SECRET" in text:
            print(text.decode("latin1"))
print("tries", tries[0])
"""


@pytest.mark.heavy
def test_a_link_swapped_from_a_fifo_is_a_finding(tmp_path: Path, seccomp: None) -> None:
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _FIFO_SWAP})
    _safe(proc, audit)
    assert "never won" in proc.stderr or _flagged(audit), proc.stderr[-2000:]


# ------------------------------------------- a name made after the tracer found it missing

#: the open of /tmp/sN/x, where sN is a link to an empty folder: the link's access time says the
#: tracer has walked it (and found x missing); a link x to the object is made only then. The
#: tracer answers a name its walk found missing with ENOENT itself; when the name is there by the
#: time it looks again (the walk that tells a missing name from a link), it walks again and pins
#: what it judged
_LATE_NAME = """\
import os, sys, threading, zlib
CREAT = os.O_CREAT if sys.argv[1:] == ["creat"] else 0
tries = [0]

def sneak_open(target, flags):
    real = os.stat(target)
    while tries[0] < 300:
        tries[0] += 1
        folder, link = "/tmp/r%d" % tries[0], "/tmp/s%d" % tries[0]
        os.mkdir(folder)
        os.symlink(folder, link)
        before = os.lstat(link).st_atime_ns
        got = []

        def opener():
            try:
                got.append(os.open(link + "/x", flags | CREAT, 0o644))
            except OSError as exc:
                got.append(exc)

        thread = threading.Thread(target=opener)
        thread.start()
        while os.lstat(link).st_atime_ns == before and thread.is_alive():
            pass
        os.symlink(target, folder + "/x")
        thread.join()
        if isinstance(got[0], int):
            st = os.fstat(got[0])
            if (st.st_dev, st.st_ino) == (real.st_dev, real.st_ino):
                return got[0]
            os.close(got[0])
    raise SystemExit("never won")

store = os.path.realpath("." + "git/objects")
top = sneak_open(store, os.O_RDONLY | os.O_DIRECTORY)
for xx in os.listdir(top):
    if len(xx) != 2:
        continue
    sub = sneak_open(store + "/" + xx, os.O_RDONLY | os.O_DIRECTORY)
    for name in os.listdir(sub):
        fd = sneak_open(store + "/" + xx + "/" + name, os.O_RDONLY)
        text = zlib.decompress(os.read(fd, 1 << 20))
        if b"SECRET" in text:
            print(text.decode("latin1"))
print("tries", tries[0])
"""


@pytest.mark.heavy
def test_a_name_made_after_the_tracer_found_it_missing(tmp_path: Path, seccomp: None) -> None:
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _LATE_NAME})
    _safe(proc, audit)


#: the same with O_CREAT (a missing name is made, not refused): given the future commit's name
#: (``future``), its loose object is the link made once the tracer has walked. The tracer makes
#: the file itself (O_EXCL, no link followed, the caller's mode and umask) and hands it over; a
#: name there by then is walked again and what the caller gets is judged
_LATE_CREAT = """\
import os, threading, zlib
commit = "FUTURE_COMMIT"
target = os.path.realpath("." + "git/objects") + "/" + commit[:2] + "/" + commit[2:]
real = os.stat(target)
tries = 0
while tries < 300:
    tries += 1
    folder, link = "/tmp/r%d" % tries, "/tmp/s%d" % tries
    os.mkdir(folder)
    os.symlink(folder, link)
    before = os.lstat(link).st_atime_ns
    got = []

    def opener():
        try:
            got.append(os.open(link + "/x", os.O_RDONLY | os.O_CREAT, 0o644))
        except OSError as exc:
            got.append(exc)

    thread = threading.Thread(target=opener)
    thread.start()
    while os.lstat(link).st_atime_ns == before and thread.is_alive():
        pass
    try:
        os.symlink(target, folder + "/x")
    except FileExistsError:
        pass
    thread.join()
    if isinstance(got[0], int):
        st = os.fstat(got[0])
        if (st.st_dev, st.st_ino) == (real.st_dev, real.st_ino):
            print(zlib.decompress(os.read(got[0], 1 << 20)).decode("latin1"))
            break
else:
    raise SystemExit("never won")
print("tries", tries)
"""


@pytest.mark.heavy
def test_a_name_made_after_the_tracer_found_it_missing_opened_o_creat(
    tmp_path: Path, seccomp: None
) -> None:
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _LATE_CREAT}, future="FUTURE_COMMIT")
    _safe(proc, audit)


# --------------------------------------------- a folder renamed over by a link (no signal)

#: no link on the path when the tracer looks: /tmp/d is a folder of harmless files named as the
#: loose objects, and a second thread swaps it with a link to the object folder
#: (renameat2 RENAME_EXCHANGE) as fast as it can, blind (a folder's lookup leaves no access
#: time). Every open is pinned: the tracer judges what the caller gets, link or folder
_RENAMED_FOLDER = """\
import ctypes, os, threading, zlib
libc = ctypes.CDLL(None, use_errno=True)
store = os.path.realpath("." + "git/objects")
loose = [(xx, n) for xx in os.listdir(store) if len(xx) == 2 for n in os.listdir(store + "/" + xx)]
os.mkdir("/tmp/d")
for xx, n in loose:
    open("/tmp/d/" + n, "wb").write(zlib.compress(b"harmless"))
stop = [False]
def flip():
    while not stop[0]:
        for xx, _ in loose:
            os.symlink(store + "/" + xx, "/tmp/e")
            for _ in range(50):
                libc.renameat2(-100, b"/tmp/d", -100, b"/tmp/e", 2)  # RENAME_EXCHANGE
            if os.path.isdir("/tmp/e") and not os.path.islink("/tmp/e"):
                libc.renameat2(-100, b"/tmp/d", -100, b"/tmp/e", 2)
            os.unlink("/tmp/e")
threading.Thread(target=flip, daemon=True).start()
tries = 0
for xx, n in loose:
    for _ in range(3000):
        tries += 1
        try:
            fd = os.open("/tmp/d/" + n, os.O_RDONLY)
        except OSError:
            continue
        text = zlib.decompress(os.read(fd, 1 << 20))
        os.close(fd)
        if b"SECRET" in text:
            print(text.decode("latin1"))
            break
stop[0] = True
print("tries", tries)
"""


@pytest.mark.heavy
def test_a_folder_swapped_with_a_link_while_it_is_opened(tmp_path: Path, seccomp: None) -> None:
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _RENAMED_FOLDER})
    _safe(proc, audit)


# ------------------------------------ the descriptor under /proc/self/fd/N changed by a thread

#: O_PATH descriptors (unreported) of a harmless file and of the object; the open of
#: /proc/self/fd/100 races a second thread that dup2()s one then the other onto 100. The tracer
#: takes the caller's descriptor itself (no path) and hands it over: what it judged
_DUP_SWAP = """\
import os, threading, zlib
open("/tmp/harmless", "wb").write(zlib.compress(b"nothing"))
os.makedirs("/tmp/harmless.d", exist_ok=True)
tries = [0]

def sneak_open(target, flags, folder=False):
    real = os.stat(target)
    decoy = os.open("/tmp/harmless.d" if folder else "/tmp/harmless", os.O_PATH)
    goal = os.open(target, os.O_PATH)
    slot = 100
    while tries[0] < 3000:
        tries[0] += 1
        os.dup2(decoy, slot)
        stop = [False]

        def swap():
            while not stop[0]:
                os.dup2(goal, slot)
                os.dup2(decoy, slot)
            os.dup2(goal, slot)

        thread = threading.Thread(target=swap)
        thread.start()
        try:
            fd = os.open("/proc/self/fd/%d" % slot, flags)
        except OSError:
            fd = -1
        stop[0] = True
        thread.join()
        if fd >= 0:
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == (real.st_dev, real.st_ino):
                return fd
            os.close(fd)
    raise SystemExit("never won")

store = os.path.realpath("." + "git/objects")
top = sneak_open(store, os.O_RDONLY | os.O_DIRECTORY, True)
for xx in os.listdir(top):
    if len(xx) != 2:
        continue
    sub = sneak_open(store + "/" + xx, os.O_RDONLY | os.O_DIRECTORY, True)
    for name in os.listdir(sub):
        fd = sneak_open(store + "/" + xx + "/" + name, os.O_RDONLY)
        text = zlib.decompress(os.read(fd, 1 << 20))
        if b"SECRET" in text:
            print(text.decode("latin1"))
print("tries", tries[0])
"""


@pytest.mark.heavy
def test_a_descriptor_swapped_by_a_thread_while_it_is_reopened(
    tmp_path: Path, seccomp: None
) -> None:
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _DUP_SWAP})
    _safe(proc, audit)


# --------------------------------------------------- links of the phase's own into /proc

_PROC_LINKS = {
    "a relative link to /proc/self/fd": (
        "cd /tmp && ln -s ../proc/self/fd pl && cd - >/dev/null; python3 t.py '/tmp/pl/{fd}'"
    ),
    "a relative link from the working directory": (
        "ln -s $(python3 -c 'import os; print(os.path.relpath(\"/proc/self/fd\"))') rel; "
        "python3 t.py 'rel/{fd}'"
    ),
    "a link to a link to /proc/self/fd": (
        "ln -s /proc/self/fd /tmp/pl; ln -s pl /tmp/pl2; python3 t.py '/tmp/pl2/{fd}'"
    ),
    "a link to /proc, then self": "ln -s /proc /tmp/pp; python3 t.py '/tmp/pp/self/fd/{fd}'",
    "a link to /proc, then the pid": "ln -s /proc /tmp/pp; python3 t.py '/tmp/pp/{tid}/fd/{fd}'",
    "a link to /proc/thread-self": "ln -s /proc/thread-self /tmp/ts; python3 t.py '/tmp/ts/fd/{fd}'",
    "a link to /proc/self": "ln -s /proc/self /tmp/me; python3 t.py '/tmp/me/fd/{fd}'",
    "a link to /dev/fd": "ln -s /dev/fd /tmp/df; python3 t.py '/tmp/df/{fd}'",
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_PROC_LINKS))
def test_a_descriptor_reopened_through_a_link_of_its_own(
    tmp_path: Path, seccomp: None, name: str
) -> None:
    """Stopped: the links are followed one at a time to the caller's descriptor (judged and
    pinned) or to another process's /proc entry (an unresolved open row)."""
    proc, audit = _traced(tmp_path, _PROC_LINKS[name], {"t.py": _REOPEN})
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


#: the machine's git (exempt from open rows; its reads of HEAD, references and stores are gitread
#: rows judged against the task repository) under a HEAD of the phase's own naming the future
#: commit, its objects through a link of the phase's own to /proc/self/fd and an O_PATH
#: descriptor of the task store it inherited (GIT_OBJECT_DIRECTORY=/tmp/pl/N): the store's walk
#: fails like a missing name; followed link by link, it is the task store by device and inode
_GIT_THROUGH_PROC_LINK = """\
import os, subprocess
fd = os.open("." + "git/objects", os.O_PATH | os.O_DIRECTORY)
os.symlink("/proc/self/fd", "/tmp/pl")
os.makedirs("/tmp/f/refs")
open("/tmp/f/HEAD", "w").write("FUTURE_COMMIT\\n")
env = dict(os.environ, GIT_DIR="/tmp/f", GIT_OBJECT_DIRECTORY="/tmp/pl/%d" % fd)
subprocess.run(["git", "log", "-p"], env=env, pass_fds=[fd])
"""


@pytest.mark.heavy
def test_the_machines_git_reads_the_store_through_a_link_to_proc_self(
    tmp_path: Path, seccomp: None
) -> None:
    proc, audit = _traced(
        tmp_path, "python3 t.py", {"t.py": _GIT_THROUGH_PROC_LINK}, future="FUTURE_COMMIT"
    )
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


#: the descriptor reopened relative to a directory descriptor of /proc/self/fd (openat(dirfd,
#: "N")): the tracer reads that descriptor's folder as /proc/PID/fd, another process's entry for
#: it (outside the sandbox's PID namespace), which it does not follow: an unresolved row
_REOPEN_DIRFD = _REOPEN.replace(
    "        return os.open(VIA.format(fd=fd, tid=os.getpid()), flags)",
    "        fds = os.open('/proc/self/fd', os.O_PATH | os.O_DIRECTORY)\n"
    "        return os.open(str(fd), flags, dir_fd=fds)",
)


@pytest.mark.heavy
def test_a_descriptor_reopened_from_a_directory_descriptor_of_proc_self_fd(
    tmp_path: Path, seccomp: None
) -> None:
    assert _REOPEN_DIRFD != _REOPEN
    proc, audit = _traced(tmp_path, "python3 t.py dirfd", {"t.py": _REOPEN_DIRFD})
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


# ------------------------------------------------------- the tracer's privileges, not lent

#: how many of /proc/kallsyms's addresses the reader sees (the kernel shows them only to an
#: opener with CAP_SYSLOG, checked at open): the tracer (evotree, often root) opens what it pins
_KALLSYMS = """\
try:
    lines = open("/proc/kallsyms").read().splitlines()
except OSError as exc:
    lines = []
print("shown", sum(1 for line in lines if line.split()[0].strip("0")))
"""


@pytest.mark.heavy
def test_a_pinned_open_has_the_phases_privileges_not_the_tracers(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped: the tracer's serving thread keeps no capability a file's open is judged by
    (CAP_SYSLOG here; CAP_DAC_OVERRIDE, CAP_SYS_RAWIO...), so a pinned open of /proc/kallsyms
    shows the phase what the same open shows it untraced (as root: the addresses of the kernel
    were shown, a way around KASLR, before the thread dropped them)."""
    proc, _ = _traced(tmp_path, "python3 t.py", {"t.py": _KALLSYMS})
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "t.py").write_text(_KALLSYMS)
    plain = subprocess.run(
        accounted(
            wrap(
                SandboxSpec(cwd=tmp_path / "plain", read_only=(tmp_path / "plain",)),
                ["python3", "t.py"],
            )
        ),
        env=sandbox_env(dict(os.environ)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "shown" in plain.stdout and "shown" in proc.stdout, proc.stderr + plain.stderr
    assert proc.stdout.strip() == plain.stdout.strip(), (proc.stdout, plain.stdout)
