"""Attacks through the caller's own ``/proc/self/cwd`` and ``/proc/self/root`` links.

The tracer follows these two links for the caller (seccomp_trace.c, ``resolve_in``): the path
they stand for in the caller's root is walked, judged and pinned like any path, so an honest
program's ``/proc/self/cwd/t.py`` is no finding. Each attack below is what a candidate's code
would try once it knows that: reach git storage through the links, race its working folder
against the tracer's read of it, or leave the folder removed. Each runs in the real sandbox under
the compiled tracer; the safe outcome is that git storage read through the links is a finding,
and that what the caller reads is what was judged.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_redteam_trace_deputy import _OPENS, _lines, _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture
from test_redteam_gym_trace import _flagged

#: a loose object of the task repository, opened through the caller's own links
_STORAGE = (
    _OPENS
    + """\
import glob
obj = sorted(glob.glob(".git/objects/??/*"))[0]
attempt("via-cwd", "/proc/self/cwd/" + obj)
attempt("via-thread-cwd", "/proc/thread-self/cwd/" + obj)
attempt("via-root", "/proc/self/root" + os.getcwd() + "/" + obj)
attempt("via-root-then-cwd", "/proc/self/root/proc/self/cwd/./" + obj)
"""
)


@pytest.mark.heavy
@pytest.mark.parametrize("spelling", ["via-cwd", "via-thread-cwd", "via-root", "via-root-then-cwd"])
def test_git_storage_through_the_callers_own_links_is_a_finding(
    tmp_path: Path, seccomp: None, spelling: str
) -> None:
    """Stopped: the links are followed to the object store, and that read is judged."""
    script = _STORAGE.replace('attempt("', '#attempt("').replace(
        f'#attempt("{spelling}"', f'attempt("{spelling}"'
    )
    proc, audit = _run(tmp_path, script)
    assert _lines(proc)[spelling].startswith("OK"), proc.stdout + proc.stderr[-2000:]
    assert _flagged(audit), [h.rule for v in audit.verdicts for h in v.hits]


#: a second thread flips the working folder between a plain folder and an object folder, both
#: holding a file of the same name, while the first opens that name through /proc/self/cwd: the
#: tracer reads the caller's cwd, then walks; the thread wins the window between them if it can
_RACE = """\
import glob, os, threading
work = os.getcwd()
obj = sorted(glob.glob(".git/objects/??/*"))[0]
folder, name = os.path.split(os.path.join(work, obj))
plain = os.path.join(work, "plain")
os.mkdir(plain)
with open(os.path.join(plain, name), "wb") as f:
    f.write(b"plain")
stop = False
def flip():
    while not stop:
        os.chdir(plain)
        os.chdir(folder)
thread = threading.Thread(target=flip)
thread.start()
got = {"plain": 0, "object": 0, "error": 0}
for _ in range(400):
    try:
        fd = os.open("/proc/self/cwd/" + name, os.O_RDONLY)
    except OSError:
        got["error"] += 1
        continue
    data = os.pread(fd, 16, 0)
    os.close(fd)
    got["plain" if data == b"plain" else "object"] += 1
stop = True
thread.join()
print("plain", got["plain"])
print("object", got["object"])
print("error", got["error"])
"""


@pytest.mark.heavy
def test_a_thread_flipping_the_working_folder_gets_no_unjudged_object(
    tmp_path: Path, seccomp: None
) -> None:
    """Stopped: whichever folder the tracer read, it opened the file there and handed that
    descriptor over, so an object read is a judged read; the run is flagged whenever one came
    out (and the race must have run both ways for the test to say anything)."""
    proc, audit = _run(tmp_path, _RACE, timeout=240)
    lines = _lines(proc)
    assert "object" in lines, proc.stdout + proc.stderr[-2000:]
    plain, objects = int(lines["plain"]), int(lines["object"])
    assert plain + objects > 0, lines
    if objects:
        assert _flagged(audit), (lines, [h.rule for v in audit.verdicts for h in v.hits])


#: the working folder removed under the caller: /proc/self/cwd names a deleted folder
_REMOVED = (
    _OPENS
    + """\
os.mkdir("gone")
os.chdir("gone")
os.rmdir("../gone")
attempt("removed-cwd", "/proc/self/cwd/x")
"""
)


@pytest.mark.heavy
def test_an_open_through_a_removed_working_folder_fails_closed(
    tmp_path: Path, seccomp: None
) -> None:
    """Fails closed: the tracer cannot name a removed folder in the caller's root, so the open
    is an unresolved row (a finding), and the caller gets the kernel's own answer."""
    proc, audit = _run(tmp_path, _REMOVED)
    kernel, _ = _run(tmp_path / "kernel", _REMOVED, pin="off")
    assert _lines(proc)["removed-cwd"] == _lines(kernel)["removed-cwd"], proc.stdout
    assert _flagged(audit), [h.rule for v in audit.verdicts for h in v.hits]
