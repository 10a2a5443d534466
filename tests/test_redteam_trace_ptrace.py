"""The machine's git traced by a process of the phase is not exempt from open rows.

The machine's git is exempt from the trace's open rows: its reads are judged by what it was
asked (its exec row) and by the HEAD, references and object stores it opened (its gitread rows).
A process that traces git (``ptrace``: the filter does not refuse it, debuggers use it) can read
and write git's memory and registers: rewrite a path after the tracer read it, or put code into
it. So once a process of the phase asked to trace (``PTRACE_TRACEME``, ``PTRACE_ATTACH``,
``PTRACE_SEIZE``: a ``ptrace`` row), git is exempt only while no thread of it is traced; a traced
git's opens are a program's opens, and its reads of git storage are rows (findings).
Each case runs in the real sandbox under the compiled tracer over a task repository.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_redteam_gym_trace import _flagged
from test_redteam_trace_deputy import _run
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture

from evotree.harness.audit.trace import TRACE_FILE

#: the child asks to be traced, then execs git (it stops at the exec; the parent lets it go on)
_TRACEME = """\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
pid = os.fork()
if pid == 0:
    libc.ptrace(0, 0, None, None)  # PTRACE_TRACEME
    os.execvp("git", ["git", "cat-file", "-p", "HEAD"])
while True:
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) or os.WIFSIGNALED(status):
        break
    libc.ptrace(7, pid, None, None)  # PTRACE_CONT
print("done", status)
"""

#: git started first, then attached (PTRACE_SEIZE) while it waits on its input; fed after
_SEIZE = """\
import ctypes, os, subprocess, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
git = subprocess.Popen(["git", "cat-file", "--batch"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE)
time.sleep(0.3)
print("seize", libc.ptrace(0x4206, git.pid, None, None), ctypes.get_errno())
out, _ = git.communicate(b"HEAD\\n", timeout=60)
print("done", len(out))
"""

#: the same git, untraced: exempt (no open row)
_PLAIN = """\
import subprocess
out = subprocess.run(["git", "cat-file", "-p", "HEAD"], capture_output=True).stdout
print("done", len(out))
"""


def _rows(tmp_path: Path) -> list[dict]:
    text = (tmp_path / "evidence" / TRACE_FILE).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.heavy
@pytest.mark.parametrize("script", [_TRACEME, _SEIZE], ids=["traceme-then-exec", "seize-running"])
def test_a_traced_git_reads_git_storage_as_rows(tmp_path: Path, seccomp: None, script: str) -> None:
    proc, audit = _run(tmp_path, script)
    assert "done" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    rows = _rows(tmp_path)
    assert [r for r in rows if r.get("kind") == "ptrace"], rows[:20]
    opens = [r for r in rows if r.get("kind") == "open" and "/.git/" in r.get("path", "")]
    assert opens, [r for r in rows if r.get("kind") in ("open", "gitread")]
    assert _flagged(audit)


@pytest.mark.heavy
def test_an_untraced_git_stays_exempt(tmp_path: Path, seccomp: None) -> None:
    """The control: the same git, with no ptrace in the phase, leaves gitread rows only."""
    proc, audit = _run(tmp_path, _PLAIN)
    assert "done" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    rows = _rows(tmp_path)
    assert not [r for r in rows if r.get("kind") in ("open", "ptrace")], rows[:20]
    assert [r for r in rows if r.get("kind") == "gitread"]
    assert not _flagged(audit)
