"""The runtime trace of a sandboxed phase: every program that really runs — git from
Python, from ``eval`` of a base64 string, by absolute path — is recorded with argv, working
directory and exit status by a tracer outside the sandbox that nothing inside can switch off;
connects to the internet from a sandbox without network are recorded too; the audit reads the
trace like a trajectory. git's own trace2 is shown to be no such record (it can be switched off
from inside)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evotree.harness import sandbox
from evotree.harness.audit.trace import TRACE_FILE, parse_strace, write_trace
from evotree.harness.audit.trajectories import audit_trajectories
from evotree.harness.sandbox import can_trace, check_sandbox, finish_trace, wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec

_needs = pytest.mark.skipif(
    not (check_sandbox().ok and can_trace()),
    reason="needs bubblewrap and a tracer (seccomp user notification or strace)",
)


def needs_tracer(test):  # type: ignore[no-untyped-def]
    """Runs sandboxes under both tracers: seconds each, so run apart with the heavy tests."""
    return pytest.mark.heavy(_needs(test))


@pytest.fixture(params=["seccomp", "strace"])
def tracer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every tracer: the seccomp one (the default, compiled) and strace (the fallback where no C
    compiler builds it; the Python tracer was deleted)."""
    name = request.param
    monkeypatch.setattr(sandbox, "TRACER", name)
    if name == "strace" and not sandbox._can_trace(sandbox._strace()):
        pytest.skip("strace cannot trace here")
    if name.startswith("seccomp") and not sandbox._seccomp_works():
        pytest.skip("the seccomp tracer cannot run here")
    if name == "seccomp" and sandbox.compiled_tracer() is None:
        pytest.skip("no C compiler: the compiled tracer cannot be built here")
    return name


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@b",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@b",
    }
    subprocess.run(["git", "init", "-q", str(path)], check=True, env=env)
    subprocess.run(
        ["git", "-C", str(path), "commit", "-q", "--allow-empty", "-m", "base"], check=True, env=env
    )
    return path


def _run_traced(
    tmp_path: Path, script: str, *, network: bool = False
) -> tuple[subprocess.CompletedProcess, list]:
    work = _repo(tmp_path / "work")
    spec = SandboxSpec(cwd=work, read_write=(work,), network=network, trace=tmp_path / "raw.strace")
    proc = subprocess.run(
        accounted(wrap(spec, ["bash", "-c", script])),
        env=sandbox_env(dict(os.environ)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    evidence = tmp_path / "evidence"
    evidence.mkdir(exist_ok=True)
    return proc, finish_trace(spec, evidence)


def _gits(rows: list) -> list[dict]:
    return [r for r in rows if r["kind"] == "exec" and r["path"].endswith("/git")]


@needs_tracer
def test_every_git_process_is_recorded_however_it_was_started(tmp_path: Path, tracer: str) -> None:
    script = "\n".join(
        [
            "python3 -c \"import subprocess; subprocess.run(['git', 'log', '--all', '--oneline'])\"",
            'eval "$(echo Z2l0IHJlZmxvZw== | base64 -d)"',  # git reflog
            "/usr/bin/git rev-parse HEAD",
            "G=git; $G status --short",
            "mkdir -p sub && cd sub && git rev-parse --show-prefix",
            "git rev-parse no-such-revision 2>/dev/null",
            "exit 0",
        ]
    )
    proc, rows = _run_traced(tmp_path, script)
    assert proc.returncode == 0, proc.stderr
    gits = _gits(rows)
    argvs = [r["argv"] for r in gits]
    assert ["git", "log", "--all", "--oneline"] in argvs  # from Python
    assert ["git", "reflog"] in argvs  # from eval of a base64 string
    assert ["/usr/bin/git", "rev-parse", "HEAD"] in argvs  # by absolute path
    assert ["git", "status", "--short"] in argvs
    work = str((tmp_path / "work").absolute())
    by_argv = {tuple(r["argv"]): r for r in gits}
    assert by_argv[("git", "rev-parse", "--show-prefix")]["cwd"] == work + "/sub"
    assert by_argv[("git", "log", "--all", "--oneline")]["cwd"] == work
    assert by_argv[("git", "rev-parse", "no-such-revision")]["exit"] == 128
    assert by_argv[("git", "reflog")]["exit"] == 0
    assert (tmp_path / "evidence" / TRACE_FILE).exists()


@needs_tracer
def test_the_trace_cannot_be_switched_off_from_inside(tmp_path: Path, tracer: str) -> None:
    script = "\n".join(
        [
            # git's own tracing switched off every way git allows: environment, user config, -c
            "export GIT_TRACE2=0 GIT_TRACE2_EVENT=0 GIT_TRACE=0 GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null",
            "printf '[trace2]\\n\\teventTarget = /dev/null\\n' > $HOME/.gitconfig",
            "git -c trace2.eventTarget=/dev/null -c trace2.normalTarget=/dev/null log --all --oneline",
            # the tracer is not there to be seen or killed: another PID namespace
            'echo "tracers=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c strace)"',
            "kill -9 -1 2>/dev/null; true",
            # a process cannot make itself untraced (PTRACE_TRACEME fails: it already has a tracer);
            # nor go around a seccomp filter: io_uring and the other ABI are refused
            "python3 -c \"import ctypes; print('traceme', ctypes.CDLL(None).ptrace(0, 0, 0, 0))\"",
            "python3 -c \"import ctypes; print('uring', ctypes.CDLL(None).syscall(425, 8, 0))\"",
            "python3 -c \"import ctypes, os; print('seccomp-again', ctypes.CDLL(None).prctl(22, 0, 0, 0, 0))\"",
            "git reflog --all",
        ]
    )
    proc, rows = _run_traced(tmp_path, script)
    argvs = [r["argv"] for r in _gits(rows)]
    assert [
        "git",
        "-c",
        "trace2.eventTarget=/dev/null",
        "-c",
        "trace2.normalTarget=/dev/null",
        "log",
        "--all",
        "--oneline",
    ] in argvs
    assert ["git", "reflog", "--all"] in argvs, proc.stdout + proc.stderr
    if tracer == "strace":
        assert "traceme -1" in proc.stdout
    else:
        assert "uring -1" in proc.stdout  # io_uring_setup refused
        assert "seccomp-again -1" in proc.stdout  # no way back to no filter (SECCOMP_MODE_DISABLED)
    assert "tracers=0" in proc.stdout  # no tracer among the sandbox's processes


def test_git_trace2_is_no_such_record(tmp_path: Path) -> None:
    """The alternative measured and rejected: git's trace2 event target in a system config (what
    a sandbox could mount read-only) is dropped by one environment variable of the process."""
    system = tmp_path / "gitconfig"
    events = tmp_path / "events.json"
    system.write_text(f"[trace2]\n\teventTarget = {events}\n")
    _repo(tmp_path / "r")
    env = {**os.environ, "GIT_CONFIG_SYSTEM": str(system), "GIT_CONFIG_GLOBAL": "/dev/null"}
    env.pop("GIT_CONFIG_NOSYSTEM", None)
    subprocess.run(
        ["git", "-C", str(tmp_path / "r"), "status"], env=env, capture_output=True, check=True
    )
    assert events.exists() and "cmd_name" in events.read_text()  # recorded ...
    events.unlink()
    subprocess.run(
        ["git", "-C", str(tmp_path / "r"), "status"],
        env={**env, "GIT_CONFIG_NOSYSTEM": "1"},
        capture_output=True,
        check=True,
    )
    assert not events.exists()  # ... until the process says GIT_CONFIG_NOSYSTEM=1
    subprocess.run(
        ["git", "-C", str(tmp_path / "r"), "status"],
        env={**env, "GIT_TRACE2_EVENT": "0"},
        capture_output=True,
        check=True,
    )
    assert not events.exists()  # ... or GIT_TRACE2_EVENT=0


@needs_tracer
def test_network_attempts_from_a_sandbox_without_network_are_findings(
    tmp_path: Path, tracer: str
) -> None:
    script = "\n".join(
        [
            "python3 -c \"import socket; s = socket.socket(); s.settimeout(1); print(s.connect_ex(('203.0.113.9', 443)))\"",
            "git status --short",
        ]
    )
    proc, rows = _run_traced(tmp_path, script)
    connects = [r for r in rows if r["kind"] == "connect"]
    assert connects and connects[0]["address"] == "203.0.113.9" and connects[0]["port"] == 443
    assert connects[0]["result"] != "0"  # no network: the attempt failed, and is still recorded
    audit = audit_trajectories([tmp_path / "evidence" / TRACE_FILE])
    assert audit.verdicts[0].format == "trace"
    codes = {(h.code, h.severity) for h in audit.verdicts[0].hits}
    assert ("audit.network_fetch", "high") in codes and not audit.passed


@needs_tracer
def test_the_audit_reads_the_trace_like_a_trajectory(tmp_path: Path, tracer: str) -> None:
    leaky = tmp_path / "leaky"
    leaky.mkdir()
    _run_traced(
        leaky,
        "python3 -c \"import subprocess as s; s.run(['git', 'log', '--all', '-p'], capture_output=True)\"",
    )
    audit = audit_trajectories([leaky / "evidence" / TRACE_FILE])
    assert not audit.passed
    assert any(
        h.code == "audit.git_history_leak" and h.command.startswith("git log --all")
        for h in audit.verdicts[0].hits
    )
    honest = tmp_path / "honest"
    honest.mkdir()
    _run_traced(honest, "git status --short && git log -1 --oneline && git diff --stat")
    assert audit_trajectories([honest / "evidence" / TRACE_FILE]).passed


def seccomp_raw(rows: list[dict]) -> str:
    """The seccomp tracer's own file of ``rows``: each with its ``seq``, then the end record (the
    count and the SHA-256 of the bytes before it), as seccomp_trace.c writes it."""
    import hashlib

    body = "".join(json.dumps({"seq": n, **r}) + "\n" for n, r in enumerate(rows))
    end = {
        "seq": len(rows),
        "kind": "end",
        "rows": len(rows),
        "sha256": hashlib.sha256(body.encode()).hexdigest(),
    }
    return body + json.dumps(end) + "\n"


def test_seccomp_rows_merge_exit_status_and_a_rewritten_argv(tmp_path: Path) -> None:
    raw = tmp_path / "raw"
    raw.write_text(
        seccomp_raw(
            [
                {
                    "kind": "exec",
                    "pid": 5,
                    "path": "/usr/bin/git",
                    "argv": ["git", "status"],
                    "cwd": "/w",
                },
                {
                    "kind": "connect",
                    "pid": 6,
                    "family": "AF_INET",
                    "address": "1.2.3.4",
                    "port": 80,
                },
                {
                    "kind": "exit",
                    "pid": 5,
                    "status": 0,
                    "cmdline": ["git", "log", "--all"],
                },  # argv changed under us
            ]
        )
    )
    rows = write_trace(raw, tmp_path / TRACE_FILE)
    assert rows[0]["exit"] == 0 and rows[0]["argv_at_exit"] == ["git", "log", "--all"]
    audit = audit_trajectories([tmp_path / TRACE_FILE])
    assert {h.code for h in audit.verdicts[0].hits if h.severity == "high"} == {
        "audit.git_history_leak",
        "audit.network_fetch",
    }


def test_a_trace_the_phase_planted_is_replaced(tmp_path: Path) -> None:
    planted = tmp_path / TRACE_FILE
    planted.write_text(
        json.dumps({"kind": "exec", "argv": ["git", "status"], "path": "/usr/bin/git"}) + "\n"
    )
    raw = tmp_path / "raw"
    raw.write_text(
        '7 execve("/usr/bin/git", ["git", "reflog"], 0x1 /* 3 vars */) = 0\n7 +++ exited with 0 +++\n'
    )
    rows = write_trace(raw, planted, cwd="/w")
    assert [r["argv"] for r in rows] == [["git", "reflog"]]
    assert json.loads(planted.read_text().splitlines()[0])["argv"] == ["git", "reflog"]


def test_parse_strace_output() -> None:
    text = "\n".join(
        [
            '10 execve("/usr/bin/bash", ["bash", "-c", "cd d; git log"], 0x7f /* 9 vars */) = 0',
            "10 clone(child_stack=NULL, flags=SIGCHLD) = 2 /* 11 in strace's PID NS */",
            '10 chdir("d") = 0',
            "10 vfork( <unfinished ...>",
            '11 execve("/usr/bin/true", ["true"], 0x1 /* 1 var */) = 0',
            "10 <... vfork resumed>) = 3 /* 12 in strace's PID NS */",
            '12 execve("/nope/git", ["git"], 0x1 /* 1 var */) = -1 ENOENT (No such file or directory)',
            '12 execve("/usr/bin/git", ["git", "log", "a\\"b", "x\\ny"], 0x1 /* 1 var */ <unfinished ...>',
            "12 <... execve resumed>) = 0",
            "12 connect(3<socket:[1]>, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), "
            'inet_pton(AF_INET6, "2001:db8::1", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH (Network is unreachable)',
            '12 connect(4<socket:[2]>, {sa_family=AF_UNIX, sun_path="/run/x"}, 110) = 0',
            "12 +++ killed by SIGKILL +++",
            "11 +++ exited with 0 +++",
        ]
    )
    rows = parse_strace(text, cwd="/w")
    execs = [r for r in rows if r["kind"] == "exec"]
    assert [r["argv"] for r in execs] == [
        ["bash", "-c", "cd d; git log"],
        ["true"],
        ["git", "log", 'a"b', "x\ny"],
    ]
    assert execs[1]["cwd"] == "/w" and execs[1]["exit"] == 0
    assert execs[2]["cwd"] == "/w/d" and execs[2]["exit"] == "killed by SIGKILL"
    (conn,) = [r for r in rows if r["kind"] == "connect"]  # AF_UNIX is no network
    assert conn == {
        "kind": "connect",
        "pid": 12,
        "family": "AF_INET6",
        "address": "2001:db8::1",
        "port": 443,
        "result": "ENETUNREACH",
    }


def test_without_strace_a_traced_sandbox_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sandbox, "STRACE", str(tmp_path / "no-strace"))
    monkeypatch.setattr(sandbox, "TRACER", "strace")
    assert not can_trace()
    if check_sandbox().ok:
        with pytest.raises(sandbox.SandboxUnavailable, match="strace"):
            wrap(SandboxSpec(cwd=tmp_path, trace=tmp_path / "t"), ["true"])


@_needs
@pytest.mark.heavy
def test_a_run_with_sandbox_trace_records_its_git_calls_and_the_audit_flags_them(
    tmp_path: Path,
) -> None:
    """`[sandbox] trace = true` in the champion's policy: a train script that runs `git log --all`
    from Python, by absolute path, leaves it in the run's evidence, and `evotree audit` fails the
    version on it (a static reading of the script would have to guess)."""
    from conftest import Cli, commit_file
    from test_runs import make_run_repo

    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace
    from evotree.gates.runs import run_versions

    repo = make_run_repo(
        tmp_path / "w", budget="max_runs_per_version = 20\n[sandbox]\ntrace = true\n"
    )
    ws = Workspace.open(repo)
    assert ws.config.sandbox.trace
    v1 = create_version(ws, hypothesis="peek", parent="v0")
    script = (
        "import subprocess, json\n"
        "subprocess.run(['/usr/bin/git', 'log', '--all', '--oneline'], capture_output=True)\n"
    )
    commit_file(
        ws.root / v1.worktree,
        "train.py",
        script + (ws.root / v1.worktree / "train.py").read_text(),
        "peek",
    )
    (record,) = run_versions(ws, [v1.id])
    trace = repo / ".evotree" / "runs" / record.run_id / "evidence" / "train" / TRACE_FILE
    assert trace.is_file(), record.notes
    rows = [json.loads(line) for line in trace.read_text().splitlines()]
    assert any("log" in (r.get("argv") or []) and "--all" in (r.get("argv") or []) for r in rows), (
        rows[:5]
    )
    report = Cli(repo).json("audit", v1.id, code=28)
    assert any(f["severity"] in ("high", "critical") for f in report["findings"])


@needs_tracer
def test_the_compiled_tracer_reads_what_an_attacker_feeds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seccomp tracer on what an attacker would feed it: argv bytes that are not UTF-8,
    control characters, quotes and backslashes, 3,000 arguments, a 100 kB argument, a relative
    path, an execveat, a failed PATH lookup (no process). (This once compared it with the
    Python tracer, now deleted, which recorded the same rows.)"""
    monkeypatch.setattr(sandbox, "TRACER", "seccomp")
    if not sandbox._seccomp_works() or sandbox.compiled_tracer() is None:
        pytest.skip("the compiled seccomp tracer cannot run here")
    script = "\n".join(
        [
            "git log --grep=$'\\xff\\xfe\\x01\"\\\\\\x1b[31m' --all --oneline >/dev/null 2>&1",
            "git rev-parse $(seq 1 3000) >/dev/null 2>&1",
            "git rev-parse $(head -c 100000 /dev/zero | tr '\\0' 'x') >/dev/null 2>&1",
            "python3 -c \"import os; os.execv('/usr/bin/git', ['git', 'reflog'] + ['x'] * 3000)\" >/dev/null 2>&1",
            "python3 -c \"import os; fd = os.open('/usr/bin/git', os.O_RDONLY); os.execve(fd, ['git', 'status'], {})\" >/dev/null 2>&1",
            "no-such-program-anywhere 2>/dev/null",
            "cp /usr/bin/git ./g && ./g --version >/dev/null",
            "exit 0",
        ]
    )
    proc, traced = _run_traced(tmp_path / "c", script)
    assert proc.returncode == 0, proc.stderr
    argvs = [r.get("argv_called") or r["argv"] for r in traced if r["kind"] == "exec"]  # as called
    assert any(
        a[:2] == ["git", "log"] and "\x1b" in a[2] and "?" in a[2] for a in argvs
    )  # kept, invalid bytes "?"
    assert any(a[:2] == ["git", "reflog"] and len(a) == 3002 for a in argvs)
    assert any(a[:2] == ["git", "rev-parse"] and len(a[2]) == 100000 for a in argvs)
    assert ["git", "status"] in argvs  # execveat of a descriptor
    assert ["./g", "--version"] in argvs  # a copied git under another name
    assert not any(
        a and a[0] == "no-such-program-anywhere" for a in argvs
    )  # a failed lookup: no process


def test_a_compiled_tracer_someone_else_could_write_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compiled tracer runs outside the sandbox: a cache folder or binary that another user
    could write (or a symlink planted in its place) is never run; it is rebuilt or refused."""
    if sandbox.compiled_tracer() is None:
        pytest.skip("no C compiler here")
    monkeypatch.setattr(
        sandbox, "INSTALLED_TRACER_DIR", tmp_path / "not-installed"
    )  # the first-use build
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = sandbox.compiled_tracer()
    assert built is not None and built.parent == tmp_path / "cache" / "evotree"
    assert built.stat().st_mode & 0o777 == 0o700 and built.parent.stat().st_mode & 0o777 == 0o700
    built.chmod(0o777)  # writable by anyone: not trusted, rebuilt
    again = sandbox.compiled_tracer()
    assert again == built and again.stat().st_mode & 0o777 == 0o700
    built.unlink()
    evil = tmp_path / "evil"
    evil.write_text("#!/bin/sh\necho owned\n")
    evil.chmod(0o700)
    built.symlink_to(evil)  # a symlink in its place: replaced by a real build, never followed
    rebuilt = sandbox.compiled_tracer()
    assert (
        rebuilt is not None
        and not rebuilt.is_symlink()
        and rebuilt.read_bytes() != evil.read_bytes()
    )
    os.chmod(
        tmp_path / "cache" / "evotree", 0o777
    )  # a folder anyone could write into: made private again
    assert sandbox.compiled_tracer() == rebuilt
    assert (tmp_path / "cache" / "evotree").stat().st_mode & 0o777 == 0o700
