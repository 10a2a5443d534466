"""Red-team tests of the runtime trace: attacks run from *inside* the sandbox against
the tracer outside it — exhaust it, blind it, inject rows into it, race it. Each test is an
attack that worked (and was fixed) or one the tracer must keep withstanding."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from test_runtime_trace import _run_traced, needs_tracer, tracer  # noqa: F401 - the fixture

from evotree.harness.audit.trace import TRACE_FILE
from evotree.harness.audit.trajectories import audit_trajectories

_PRELUDE = "import ctypes, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\n"


def _py(body: str) -> str:
    """A bash line that runs ``body`` (with ctypes/libc ready) in python3."""
    return "python3 - <<'PY'\n" + _PRELUDE + body + "\nPY\n"


def _execs(rows: list) -> list[dict]:
    return [r for r in rows if r["kind"] == "exec"]


def _raw_rows(tmp_path: Path) -> list[dict]:
    """Every line of the tracer's own file must be one JSON object (no forged or broken line)."""
    raw = (tmp_path / "raw.strace").read_bytes().decode("utf-8", "replace")
    if not raw.lstrip().startswith("{"):
        return []  # strace's text: parsed by parse_strace
    lines = raw.split("\n")
    assert lines[-1] == ""
    return [json.loads(line) for line in lines[:-1]]


def _leaks(tmp_path: Path) -> bool:
    audit = audit_trajectories([tmp_path / "evidence" / TRACE_FILE])
    return any(
        h.code == "audit.git_history_leak" and h.severity == "high" for h in audit.verdicts[0].hits
    )


_SECCOMP_ONLY = "the attack is on the seccomp tracers' reading of the caller's memory"


@needs_tracer
def test_a_huge_or_broken_argv_neither_exhausts_nor_hangs_the_tracer(
    tmp_path: Path, tracer: str
) -> None:
    """65,536 argv pointers to one 128 KiB region without a NUL (8 GiB if read naively; the kernel
    refuses it with E2BIG after the tracer read it), a path running into an unmapped page, argv
    pointing into unmapped memory, argv = NULL. The tracer reads at most 8 MiB of argv per call
    (the row says "truncated"), stays responsive, and records what follows."""
    if tracer == "strace":
        pytest.skip(_SECCOMP_ONLY)
    body = """
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
size = 1 << 17
region = libc.mmap(None, size + 4096, 3, 0x22, -1, 0)
ctypes.memset(region, ord("A"), size)
libc.munmap(ctypes.c_void_p(region + size), 4096)  # an unmapped page right after the region
def call(path, argv):
    r = libc.syscall(59, path, argv, None)
    print("errno", ctypes.get_errno(), flush=True)
argv = (ctypes.c_void_p * 65537)(*([region] * 65536), None)
call(b"/usr/bin/true", argv)                                          # E2BIG, 8 GiB to read
call(ctypes.c_void_p(region), (ctypes.c_void_p * 2)(region, None))    # path without a NUL
call(b"/usr/bin/true", (ctypes.c_void_p * 2)(region + size, None))    # argv[0] unmapped
call(b"/usr/bin/true", ctypes.c_void_p(region + size))                # argv itself unmapped
"""
    script = _py(body) + "/usr/bin/true\ngit log --all --oneline >/dev/null\n"
    started = time.monotonic()
    proc, rows = _run_traced(tmp_path, script)
    assert time.monotonic() - started < 90, "the tracer was too slow on a huge argv"
    assert proc.stdout.count("errno") == 4, proc.stderr
    assert "errno 7" in proc.stdout  # E2BIG: the kernel refused the huge call
    assert (tmp_path / "raw.strace").stat().st_size < 64 << 20
    raw = _raw_rows(tmp_path)
    huge = [r for r in raw if r["kind"] == "exec" and r.get("truncated")]
    assert len(huge) == 1 and len(huge[0]["argv"]) == 64 and huge[0]["argv"][0] == "A" * (1 << 17)
    assert sum(len(w) for w in huge[0]["argv"]) <= 8 << 20
    assert all(len(w) <= 1 << 17 for w in huge[0]["argv"])
    assert ["git", "log", "--all", "--oneline"] in [r["argv"] for r in _execs(rows)]
    assert _leaks(tmp_path)


@needs_tracer
def test_a_flood_of_failing_execs_and_concurrent_threads_are_all_served(
    tmp_path: Path, tracer: str
) -> None:
    """2,000 execs that fail, then 256 programs started at once from 64 threads: every one is
    recorded, and a git call after the flood still is."""
    body = """
import subprocess, threading
for k in range(2000):
    libc.syscall(59, b"/nonexistent/prog", None, None)
def run(t):
    for k in range(4):
        subprocess.run(["/usr/bin/true", "t%d-%d" % (t, k)])
threads = [threading.Thread(target=run, args=(t,)) for t in range(64)]
[t.start() for t in threads]
[t.join() for t in threads]
print("done")
"""
    proc, rows = _run_traced(tmp_path, _py(body) + "git reflog >/dev/null\n")
    assert "done" in proc.stdout, proc.stderr
    execs = _execs(rows)
    started = {r["argv"][1] for r in execs if r["path"] == "/usr/bin/true" and len(r["argv"]) == 2}
    assert started == {"t%d-%d" % (t, k) for t in range(64) for k in range(4)}
    assert ["git", "reflog"] in [r["argv"] for r in execs]
    if tracer != "strace":  # strace shows failed calls apart; the seccomp tracers record every call
        assert sum(r["path"] == "/nonexistent/prog" for r in execs) == 2000


@needs_tracer
def test_argv_cannot_inject_or_hide_rows(tmp_path: Path, tracer: str) -> None:
    """Quotes, backslashes, newlines, invalid UTF-8, U+2028 / U+0085 (line ends to Python's
    splitlines: the compiled tracer's raw UTF-8 row was split and dropped) and JSON-looking text:
    the trace stays one row per call, with the argv exactly as given, and no forged row."""
    forged = (
        '"}\n{"kind": "exec", "pid": 1, "path": "/usr/bin/true", "argv": ["forged"], "cwd": "/"}\n'
    )
    words = ['a"b\\c', "x\ny\r", "\u2028", "p\u0085q\u2029", forged, "\\u0000", "end"]
    body = f"""
words = {words!r}
os.execv("/usr/bin/git", ["git", "log", "--all", *[w.encode() for w in words], b"\\xff\\xc0\\x80"])
"""
    _, rows = _run_traced(tmp_path, _py(body))
    for row in _raw_rows(tmp_path):
        assert row.get("argv") != ["forged"]
    gits = [r for r in _execs(rows) if r["path"] == "/usr/bin/git"]
    assert len(gits) == 1
    assert gits[0]["argv"][: 3 + len(words)] == ["git", "log", "--all", *words]
    assert not any(r.get("argv") == ["forged"] for r in rows)
    assert _leaks(tmp_path)


@needs_tracer
def test_an_exec_the_tracer_cannot_resolve_is_still_recorded(tmp_path: Path, tracer: str) -> None:
    """The seccomp tracers recorded an exec only when they found its file themselves, from outside
    the sandbox — so a git run through a symlink into the sandbox's own /tmp (resolved on the
    host: absent), /proc/self/fd/N (the tracer's "self"), or execveat relative to a directory
    descriptor (resolved against the cwd) ran without a row. Every call is recorded now."""
    script = (
        "\n".join(
            [
                "cp /usr/bin/git /tmp/evotree-redteam-g && ln -s /tmp/evotree-redteam-g ./g && ./g log --all -1 >/dev/null",
                "exec 3</usr/bin/git; /proc/self/fd/3 reflog >/dev/null",
            ]
        )
        + "\n"
        + _py(
            """
d = os.open("/usr/bin", os.O_RDONLY)
os.chdir("/tmp")
argv = (ctypes.c_char_p * 5)(b"git", b"-C", os.environ["PWD"].encode(), b"rev-list", b"--all", None)
libc.syscall(322, d, b"git", argv, None, 0)
""".replace("* 5", "* 6")
        )
    )
    assert not Path("/tmp/evotree-redteam-g").exists() or tracer  # the sandbox's /tmp is its own
    proc, rows = _run_traced(tmp_path, script)
    argvs = [
        r.get("argv_called") or r["argv"] for r in _execs(rows)
    ]  # as called (git rows are named "git")
    assert ["./g", "log", "--all", "-1"] in argvs, proc.stderr
    assert ["/proc/self/fd/3", "reflog"] in argvs
    assert ["git", "-C", str((tmp_path / "work").absolute()), "rev-list", "--all"] in argvs
    assert _leaks(tmp_path)


@needs_tracer
def test_escape_attempts_from_inside(tmp_path: Path, tracer: str) -> None:
    """A non-dumpable process (PR_SET_DUMPABLE 0) is still read (the tracer holds every capability
    in the sandbox's user namespace); no new user namespace (bwrap --disable-userns); a stacked
    seccomp filter that allows everything cannot outrank the tracer's notification; x32 and
    io_uring are refused; the tracer is not there to kill (another PID namespace)."""
    body = """
import struct
libc.prctl(4, 0, 0, 0, 0)
assert libc.prctl(3, 0, 0, 0, 0) == 0
print("userns", os.system("unshare -U true 2>/dev/null") != 0)
allow = struct.pack("HBBI", 0x06, 0, 0, 0x7FFF0000)   # RET ALLOW for every call
buf = ctypes.create_string_buffer(allow)
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(1, ctypes.addressof(buf))
print("stacked", libc.syscall(317, 1, 0, ctypes.byref(prog)))
print("x32", libc.syscall(59 | 0x40000000, b"/usr/bin/git", None, None), ctypes.get_errno())
print("uring", libc.syscall(425, 8, None), ctypes.get_errno())
comms = [open("/proc/%s/comm" % p).read().strip() for p in os.listdir("/proc") if p.isdigit()]
print("tracer visible", any("seccomp" in c or "strace" in c for c in comms), flush=True)
os.execv("/usr/bin/git", ["git", "log", "--all", "--oneline"])
"""
    proc, rows = _run_traced(tmp_path, _py(body))
    assert "userns True" in proc.stdout, proc.stdout + proc.stderr
    assert "tracer visible False" in proc.stdout  # another PID namespace: nothing to kill
    if tracer != "strace":
        assert "stacked 0" in proc.stdout  # installed, and still outranked
        assert "x32 -1 1" in proc.stdout and "uring -1 1" in proc.stdout
    git = [r for r in _execs(rows) if r["argv"] == ["git", "log", "--all", "--oneline"]]
    assert git and not git[0].get("unreadable") and git[0]["exit"] == 0
    assert _leaks(tmp_path)


_RACE = """
import signal, subprocess, threading
KILL = {kill}
env = dict(os.environ, GIT_COMMITTER_DATE="2030-01-01T00:00:00", GIT_AUTHOR_DATE="2030-01-01T00:00:00",
           GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@b", GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@b")
q = lambda *a: subprocess.run(["git", *a], check=True, capture_output=True, env=env)
# a repository of the phase's own (a task repository's references are locked in a traced phase)
q("init", "-q", "/tmp/own"); os.chdir("/tmp/own"); q("commit", "-q", "--allow-empty", "-m", "base")
q("checkout", "-q", "-b", "future")
with open("big", "w") as fh:
    fh.write("x\\n" * 400000)
q("add", "big"); q("commit", "-q", "-m", "FUTURE"); q("checkout", "-q", "-")
word = ctypes.create_string_buffer(8)
seen = []
for n in range(40):
    fmt = ("--format=%s#%d" % ("%s", n)).encode()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(w, 1)
        def flip():
            while True:
                ctypes.memmove(word, b"--all\\0", 6)
                ctypes.memmove(word, b"-1\\0", 3)
        threading.Thread(target=flip, daemon=True).start()
        argv = (ctypes.c_char_p * 6)(b"git", b"log", ctypes.cast(word, ctypes.c_char_p), b"-p", fmt, None)
        libc.execv(b"/usr/bin/git", argv)
        os._exit(127)
    os.close(w)
    out = b""
    while KILL == 0 or b"FUTURE#%d" % n not in out:  # without KILL: to the end (no SIGPIPE either)
        chunk = os.read(r, 65536)
        if not chunk:
            break
        out += chunk
    if b"FUTURE#%d" % n in out:
        seen.append(n)
    if KILL:
        os.kill(pid, signal.SIGKILL)  # before it can exit: no exit row, no argv_at_exit
    os.close(r)
    os.waitpid(pid, 0)
print("seen", seen)
"""


def _race(tmp_path: Path, kill: bool) -> tuple[list[int], list[int], int]:
    proc, rows = _run_traced(tmp_path, _py(_RACE.format(kill=int(kill))))
    line = [x for x in proc.stdout.splitlines() if x.startswith("seen")]
    assert line, proc.stderr
    seen = json.loads(line[0][5:])
    hidden, raced = [], 0
    for n in seen:  # git ran with --all: the trace must say so
        (row,) = [r for r in _execs(rows) if f"--format=%s#{n}" in r["argv"]]
        raced += "--all" not in row["argv"]
        if "--all" not in row["argv"] and "--all" not in (row.get("argv_at_exit") or []):
            hidden.append(n)
    return seen, hidden, raced


@needs_tracer
def test_argv_rewritten_after_the_tracer_read_it_is_caught_at_exit(
    tmp_path: Path, tracer: str
) -> None:
    """TOCTOU: a thread flips an argv word between "-1" and "--all" while the exec waits for the
    tracer; what the tracer read may not be what the kernel ran. The program's command line at
    exit (argv_at_exit) shows what ran, and the audit reads it."""
    if tracer == "strace":
        pytest.skip(_SECCOMP_ONLY)
    seen, hidden, raced = _race(tmp_path, kill=False)
    assert seen and not hidden
    # the race is in a repository of the phase's own: an unraced `git log --all` there is its
    # own history (trace_own.py: quiet); a raced row (argv read without --all, at exit with it)
    # is never taken for own work, so the audit flags it
    assert _leaks(tmp_path) or not raced


@needs_tracer
def test_argv_rewritten_and_the_program_killed_before_exit_is_still_seen(
    tmp_path: Path, tracer: str
) -> None:
    """The same race, the program killed before it exits (no exit row): the tracer reads the
    command line the kernel copied at the program's first reported call (its first open, before
    its own code ran), and that is the row's argv."""
    if tracer == "strace":
        pytest.skip(_SECCOMP_ONLY)
    seen, hidden, _raced = _race(tmp_path, kill=True)
    assert seen and not hidden, f"ran with --all but recorded without it: {hidden} of {seen}"
