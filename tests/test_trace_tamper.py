"""The trace cannot be reached from inside, and a trace that was cut is no record.

Attacks of a candidate's train code: find a descriptor to the trace among its own and truncate it
(it worked: the compiled tracer's output was not close-on-exec, so ``git log --all`` then one
``ftruncate`` left a trace of 0 rows and a passing audit); and, were the trace reachable some other
way, cut, truncate, reorder or edit it — each must fail the audit closed."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from test_runtime_trace import _run_traced, needs_tracer, seccomp_raw, tracer  # noqa: F401 - the fixture

from evotree.harness.audit.trace import (
    TRACE_FILE,
    TraceTampered,
    check_raw,
    read_trace_rows,
    seal_rows,
    write_trace,
)

#: Run inside the phase: every descriptor it holds (number, target, device/inode), and an attempt to
#: truncate and write each one that is not its stdin/stdout/stderr; then git reads the history.
_HUNT = r"""python3 - <<'PY'
import json, os, stat
found = []
for name in sorted(os.listdir("/proc/self/fd"), key=int):
    fd = int(name)
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
        info = os.fstat(fd)
    except OSError:
        continue
    row = {"fd": fd, "target": target, "dev": info.st_dev, "ino": info.st_ino, "reg": stat.S_ISREG(info.st_mode)}
    if fd > 2 and stat.S_ISREG(info.st_mode):
        try:
            os.ftruncate(fd, 0)
            os.write(fd, b"{}\n")
            row["tampered"] = True
        except OSError as exc:
            row["tampered"] = str(exc)
    found.append(row)
print("FDS " + json.dumps(found))
PY
git log --all --oneline >/dev/null
"""


@needs_tracer
def test_no_descriptor_of_the_tracer_reaches_the_phase(tmp_path: Path, tracer: str) -> None:
    proc, rows = _run_traced(tmp_path, _HUNT)
    assert proc.returncode == 0, proc.stderr
    (line,) = [x for x in proc.stdout.splitlines() if x.startswith("FDS ")]
    fds = json.loads(line[4:])
    raw = (tmp_path / "raw.strace").stat()
    assert not any((f["dev"], f["ino"]) == (raw.st_dev, raw.st_ino) for f in fds), fds
    assert not any(f.get("tampered") is True for f in fds), (
        fds
    )  # nothing writable beyond stdout/stderr
    assert {f["fd"] for f in fds if f["reg"]} <= {0, 1, 2}, fds
    # the trace is whole: its seal holds and it still holds the git call made after the hunt
    sealed = read_trace_rows((tmp_path / "evidence" / TRACE_FILE).read_text())
    assert any(r.get("argv") == ["git", "log", "--all", "--oneline"] for r in sealed)
    assert rows == [{k: v for k, v in r.items() if k != "seq"} for r in sealed]


def _sealed(tmp_path: Path) -> str:
    raw = tmp_path / "raw"
    raw.write_text(
        seccomp_raw(
            [
                {
                    "kind": "exec",
                    "pid": 5,
                    "path": "/usr/bin/bash",
                    "argv": ["bash", "-c", "x"],
                    "cwd": "/w",
                },
                {
                    "kind": "exec",
                    "pid": 6,
                    "path": "/usr/bin/git",
                    "argv": ["git", "log", "--all"],
                    "cwd": "/w",
                },
                {"kind": "exit", "pid": 6, "status": 0, "cmdline": ["git", "log", "--all"]},
                {"kind": "exec", "pid": 7, "path": "/usr/bin/true", "argv": ["true"], "cwd": "/w"},
            ]
        )
    )
    write_trace(raw, tmp_path / TRACE_FILE)
    return (tmp_path / TRACE_FILE).read_text()


def test_a_sealed_trace_reads_back_whole(tmp_path: Path) -> None:
    rows = read_trace_rows(_sealed(tmp_path))
    assert [r["argv"][0] for r in rows] == ["bash", "git", "true"] and rows[1]["exit"] == 0


@pytest.mark.parametrize(
    "attack",
    [
        "truncated",
        "cut-mid-row",
        "row-removed",
        "reordered",
        "edited",
        "appended",
        "emptied",
        "resealed-count",
    ],
)
def test_a_cut_truncated_reordered_or_edited_trace_is_refused(tmp_path: Path, attack: str) -> None:
    text = _sealed(tmp_path)
    lines = text.splitlines(keepends=True)
    if attack == "truncated":  # the end row gone: what an ftruncate to a row boundary leaves
        text = "".join(lines[:-1])
    elif attack == "cut-mid-row":
        text = text[: len(text) // 2]
    elif attack == "row-removed":  # the git row taken out
        text = "".join(lines[:1] + lines[2:])
    elif attack == "reordered":
        text = "".join([lines[1], lines[0], *lines[2:]])
    elif attack == "edited":  # the row kept, its argv made harmless
        text = text.replace('"git", "log", "--all"', '"git", "status", "--sho"')
    elif attack == "appended":
        text += json.dumps({"kind": "exec", "seq": 4, "argv": ["true"]}) + "\n"
    elif attack == "emptied":
        text = ""
    elif attack == "resealed-count":  # the git row taken out and the later seq numbers renumbered
        kept = [json.loads(x) for x in lines[:1] + lines[2:-1]]
        end = json.loads(lines[-1])
        body = "".join(json.dumps({**r, "seq": n}) + "\n" for n, r in enumerate(kept))
        text = body + json.dumps({**end, "seq": len(kept), "rows": len(kept)}) + "\n"
    with pytest.raises(TraceTampered):
        read_trace_rows(text)


@pytest.mark.parametrize(
    "attack", ["end-removed", "cut", "reordered", "row-removed", "edited", "empty"]
)
def test_a_raw_trace_that_was_cut_is_sealed_as_broken(tmp_path: Path, attack: str) -> None:
    """The tracer's own file is checked before it is sealed: its rows' ``seq`` and its end record
    (count and SHA-256); a raw trace cut short (the tracer killed, the file truncated) is sealed
    with ``intact: false`` and the trace then fails the audit closed."""
    rows = [
        {
            "kind": "exec",
            "pid": 5,
            "path": "/usr/bin/git",
            "argv": ["git", "log", "--all"],
            "cwd": "/w",
        },
        {"kind": "exit", "pid": 5, "status": 0, "cmdline": ["git", "log", "--all"]},
        {"kind": "exec", "pid": 6, "path": "/usr/bin/true", "argv": ["true"], "cwd": "/w"},
    ]
    text = seccomp_raw(rows)
    assert check_raw(text) is None
    lines = text.splitlines(keepends=True)
    broken = {
        "end-removed": "".join(lines[:-1]),
        "cut": text[:40],
        "reordered": "".join([lines[1], lines[0], *lines[2:]]),
        "row-removed": "".join(lines[1:]),
        "edited": text.replace('"--all"', '"-1"'),
        "empty": "",
    }[attack]
    assert check_raw(broken) is not None
    raw = tmp_path / "raw"
    raw.write_text(broken)
    write_trace(raw, tmp_path / TRACE_FILE)
    end = json.loads((tmp_path / TRACE_FILE).read_text().splitlines()[-1])
    assert end["kind"] == "end" and end["intact"] is False and end["problem"]
    with pytest.raises(TraceTampered, match="not whole"):
        read_trace_rows((tmp_path / TRACE_FILE).read_text())


def test_a_strace_trace_without_the_sandboxs_exit_is_cut(tmp_path: Path) -> None:
    whole = (
        '7 execve("/usr/bin/bwrap", ["bwrap"], 0x1 /* 3 vars */) = 0\n'
        '8 execve("/usr/bin/git", ["git", "log", "--all"], 0x1 /* 3 vars */) = 0\n'
        "8 +++ exited with 0 +++\n7 +++ exited with 0 +++\n"
    )
    assert check_raw(whole) is None
    assert "cut" in (check_raw(whole.rsplit("7 +++", 1)[0]) or "")


def test_the_compiled_tracer_hash_is_sha256(tmp_path: Path) -> None:
    """seccomp_trace.c computes SHA-256 itself (no library): its end record matches hashlib on
    rows whose bytes fill SHA-256's blocks in every way (lengths around 55, 56, 64)."""
    from evotree.harness import sandbox

    tracer_bin = sandbox.compiled_tracer()
    if tracer_bin is None or not sandbox.check_sandbox().ok or not sandbox._seccomp_works():
        pytest.skip("the compiled seccomp tracer cannot run here")
    out = tmp_path / "raw"
    script = "; ".join(f"/bin/true {'x' * n}" for n in (1, 20, 21, 22, 23, 30, 64, 100, 1000))
    argv = [
        str(tracer_bin),
        str(out),
        sandbox.sys.executable,
        sandbox._TRACE_INSTALLER,
        *sandbox.wrap(sandbox.SandboxSpec(cwd=Path("/")), ["/bin/sh", "-c", script]),
    ]
    subprocess.run(
        argv, check=True, timeout=60, env=sandbox.sandbox_env(dict(os.environ)), capture_output=True
    )
    data = out.read_bytes()
    assert check_raw(data) is None
    body, end = data.rsplit(b"\n", 2)[0] + b"\n", json.loads(data.rsplit(b"\n", 2)[1])
    assert (
        end["sha256"] == hashlib.sha256(body).hexdigest() and end["rows"] == body.count(b"\n") >= 9
    )


def test_seal_rows_then_read_is_identity() -> None:
    rows = [
        {"kind": "exec", "pid": 1, "argv": ["a\u2028b", "é"], "path": "/x"},
        {"kind": "connect", "pid": 2, "family": "AF_INET", "address": "1.1.1.1", "port": 1},
    ]
    back = read_trace_rows(seal_rows(rows))
    assert [{k: v for k, v in r.items() if k != "seq"} for r in back] == rows


@pytest.mark.heavy
@pytest.mark.parametrize("attack", ["truncated", "reordered"])
def test_a_tampered_phase_trace_fails_the_audit_closed(tmp_path: Path, attack: str) -> None:
    """A run's train trace (evidence/train/exec_trace.jsonl) cut to its rows or reordered: the
    audit of the version does not pass (``audit.check_error`` on the runtime trace)."""
    from test_runs import make_run_repo

    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace
    from evotree.gates.runs import run_versions
    from evotree.harness import sandbox
    from evotree.harness.audit.version_audit import audit_version

    if not (sandbox.check_sandbox().ok and sandbox.can_trace()):
        pytest.skip("needs bubblewrap and a tracer")
    repo = make_run_repo(
        tmp_path / "w", budget="max_runs_per_version = 20\n[sandbox]\ntrace = true\n"
    )
    ws = Workspace.open(repo)
    v1 = create_version(ws, hypothesis="honest", parent="v0")
    (record,) = run_versions(ws, [v1.id])
    trace = repo / ".evotree" / "runs" / record.run_id / "evidence" / "train" / TRACE_FILE
    assert trace.is_file(), record.notes
    before = audit_version(ws, v1.id, record=False)
    assert not any(f.code == "audit.check_error" for f in before.findings), [
        f.evidence for f in before.findings
    ]
    lines = trace.read_text().splitlines(keepends=True)
    assert len(lines) >= 3
    trace.write_text(
        "".join(lines[:-1]) if attack == "truncated" else "".join([lines[1], lines[0], *lines[2:]])
    )
    after = audit_version(ws, v1.id, record=False)
    errors = [f for f in after.findings if f.code == "audit.check_error"]
    assert not after.passed and errors and "TraceTampered" in errors[0].evidence["error"]


@pytest.mark.heavy
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_to_the_tracer_does_not_cut_its_trace(tmp_path: Path, sig: str) -> None:
    """Ctrl-C (or a SIGTERM, a hang-up) that reaches the tracer must not cut the trace: a cut trace
    fails the audit closed, so an interrupted `evotree agent` session would fail the audit of every
    version it touched. The tracer ignores them; the sandbox still ends, and the end record is there."""
    import signal as signals
    import time

    from evotree.harness import sandbox

    if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
        pytest.skip("the compiled seccomp tracer cannot run here")
    out = tmp_path / "raw"
    argv = sandbox._seccomp_tracer_argv(out) + sandbox.wrap(
        sandbox.SandboxSpec(cwd=Path("/")), ["/bin/sh", "-c", "sleep 1; /bin/true; exit 3"]
    )
    proc = subprocess.Popen(
        argv,
        env=sandbox.sandbox_env(dict(os.environ)),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.4)
    os.kill(proc.pid, getattr(signals, sig))
    assert proc.wait(timeout=30) == 3
    assert check_raw(out.read_bytes()) is None
    assert any(
        r.get("argv") == ["/bin/true"] for r in map(json.loads, out.read_text().splitlines())
    )


@pytest.mark.heavy
@pytest.mark.parametrize("sig", ["SIGTSTP", "SIGTTIN", "SIGTTOU"])
def test_a_terminal_stop_does_not_stop_the_tracer(tmp_path: Path, sig: str) -> None:
    """Ctrl-Z (or a background read or write) meant for the session must not stop the tracer: a
    stopped tracer holds the phase's every reported call, and one stopped in a pinned open's
    hand-over answers it with a wrong descriptor. The tracer ignores them; the phase's opens go
    on and the trace is whole."""
    import signal as signals
    import time

    from evotree.harness import sandbox

    if not (sandbox.check_sandbox().ok and sandbox._seccomp_works()):
        pytest.skip("the compiled seccomp tracer cannot run here")
    out = tmp_path / "raw"
    script = (
        "for i in $(seq 40); do cat /etc/hostname >/dev/null; sleep 0.02; done; /bin/true; exit 3"
    )
    argv = sandbox._seccomp_tracer_argv(out) + sandbox.wrap(
        sandbox.SandboxSpec(cwd=Path("/")), ["/bin/sh", "-c", script]
    )
    proc = subprocess.Popen(
        argv,
        env=sandbox.sandbox_env(dict(os.environ)),
        process_group=0,  # a group of its own in this session: not orphaned, a stop would stop it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.4)
    for _ in range(5):
        os.kill(proc.pid, getattr(signals, sig))
        time.sleep(0.05)
        state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state != "T", f"the tracer stopped on {sig}"
    try:
        assert proc.wait(timeout=30) == 3
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signals.SIGCONT)
            proc.kill()
    assert check_raw(out.read_bytes()) is None
    assert any(
        r.get("argv") == ["/bin/true"] for r in map(json.loads, out.read_text().splitlines())
    )


@pytest.mark.heavy
def test_a_budget_stop_by_sigkill_leaves_a_whole_trace(tmp_path: Path) -> None:
    """A train phase that ignores SIGTERM is killed at the end of its grace (SIGKILL, repeated
    every poll until the launcher exits): the sandbox ends first, so the tracer still writes its end
    record and the run's trace reads back whole (a cut one would fail the audit closed)."""
    from conftest import commit_file
    from test_runs import make_run_repo

    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace
    from evotree.gates.runs import run_versions
    from evotree.harness import sandbox

    if not (sandbox.check_sandbox().ok and sandbox.can_trace()):
        pytest.skip("needs bubblewrap and a tracer")
    repo = make_run_repo(
        tmp_path / "w",
        budget="max_wall_seconds = 3\n",
        recipe="skill = 0.5\nsteps = 100\nsleep = 0.2\n",
    )
    ws = Workspace.open(repo)
    v1 = create_version(ws, hypothesis="stubborn", parent="v0")
    train = ws.root / v1.worktree / "train.py"
    commit_file(
        ws.root / v1.worktree,
        "train.py",
        "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n" + train.read_text(),
        "ignore TERM",
    )
    (record,) = run_versions(ws, [v1.id])
    assert record.status == "budget_exceeded", record.error
    trace = repo / ".evotree" / "runs" / record.run_id / "evidence" / "train" / TRACE_FILE
    assert read_trace_rows(trace.read_text())  # whole: no TraceTampered


def test_the_installer_exits_when_the_tracer_is_gone() -> None:
    """The filter installer holds the only listener until it has handed it over: with the
    tracer gone (its end of the socket closed), the installer must close it and end, not wait
    for ever on its own reported exit (a box of a killed run was found still alive 46 minutes
    later, blocked in exit_group)."""
    import socket

    from evotree.harness import sandbox

    if not sandbox._seccomp_works():
        pytest.skip("seccomp user notification is not available here")
    ours, theirs = socket.socketpair()
    ours.close()  # the tracer's end: gone before it read the listener
    try:
        proc = subprocess.run(
            [
                sandbox.sys.executable,
                "-I",
                "-S",
                "-c",
                sandbox._TRACE_INSTALLER,
                str(theirs.fileno()),
                "/bin/true",
            ],
            pass_fds=(theirs.fileno(),),
            capture_output=True,
            text=True,
            timeout=30,
        )
    finally:
        theirs.close()
    assert proc.returncode == 1, (proc.returncode, proc.stderr)
    assert "the tracer" in proc.stderr, proc.stderr
