"""The runtime trace of a sandboxed phase: what really ran, read like a trajectory.

A static reading of commands can be walked around (a program that runs git itself, a command
built at run time). So the phase sandbox (:mod:`evotree.harness.sandbox`, ``SandboxSpec.trace``)
can run bubblewrap under ``strace -f --seccomp-bpf``: a tracer that lives *outside* the sandbox,
in a PID namespace the sandboxed processes cannot see, follows every process they start, and
cannot be detached from inside (a tracee cannot untrace itself; no environment variable, git
config or ``-c`` option reaches it). Every ``execve`` that succeeded — git by any name or path,
started by a shell, Python, ``eval`` or anything else — is recorded with its argv, working
directory and exit status, and so is every ``connect`` to an internet address.

:func:`parse_strace` turns strace's output into rows; :func:`write_trace` writes them as
``evidence/<phase>/exec_trace.jsonl`` (after the phase, so the run's evidence manifest binds it):

``{"kind": "exec", "pid": 12, "path": "/usr/bin/git", "argv": ["git", "log", "--all"], "cwd": "/w", "exit": 0}``
``{"kind": "connect", "pid": 13, "family": "AF_INET", "address": "1.1.1.1", "port": 443, "result": "ENETUNREACH"}``

The audit reads such a file as a trajectory (format ``trace``): each exec is a step (its argv
re-joined as a command line; the trajectory rules apply, git's above all), each connect to a
non-loopback address a step ``connect() ADDRESS:PORT``, which the network rule flags.

Tamper evidence. The tracer's own file is opened close-on-exec outside the sandbox (no
process of the phase holds a descriptor to it), each of its rows carries ``seq`` and its last row,
written after bwrap exited, is ``{"kind": "end", "rows": N, "sha256": H}`` (H: the SHA-256 of
every byte before it). :func:`check_raw` checks that (for strace's text: that the sandbox's first
process's exit was recorded). :func:`write_trace` seals ``exec_trace.jsonl`` the same way (every
row a ``seq``, then an ``end`` row with the count, the hash and whether the raw trace was
intact); :func:`read_trace_rows` raises :class:`TraceTampered` when the seal does not hold or the
raw trace was cut — the audit then fails closed (``audit.check_error``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotree.harness.audit.trace_argv import GIT_SERVERS, judge_git_spellings
from evotree.harness.audit.trace_identity import git_identities, identify
from evotree.harness.audit.trace_own import mark_own_repositories
from evotree.harness.audit.trace_reads import judge_git_reads
from evotree.harness.audit.trace_seccomp import merge_seccomp
from evotree.harness.audit.trace_strace import _LINE, _sandbox_start, parse_strace

__all__ = [
    "AGENT_SESSIONS",
    "GIT_SERVERS",
    "TRACE_FILE",
    "TRACE_SYSCALLS",
    "TraceTampered",
    "check_raw",
    "git_identities",
    "identify",
    "judge_git_reads",
    "judge_git_spellings",
    "parse_strace",
    "merge_seccomp",
    "read_trace_rows",
    "seal_rows",
    "write_trace",
]

#: Where each traced ``evotree agent`` session's evidence lands, under ``.evotree/``:
#: ``agent-sessions/<session>/exec_trace.jsonl`` and ``session.json`` (the versions it could touch).
AGENT_SESSIONS = "agent-sessions"

#: The file of a phase's trace under ``evidence/<phase>/``.
TRACE_FILE = "exec_trace.jsonl"
#: What the tracer stops on (``--seccomp-bpf``: nothing else costs a context switch).
TRACE_SYSCALLS = "execve,execveat,connect,chdir,fchdir,clone,clone3,fork,vfork"


class TraceTampered(ValueError):
    """A trace whose seal does not hold (rows cut, truncated, reordered or changed), or whose raw
    tracer output was cut: it cannot be read as a record of what ran (the audit fails closed)."""


def check_raw(data: bytes | str) -> str | None:
    """Why the tracer's own output ``data`` is not whole (``None``: it is).

    The seccomp tracer's rows: ``seq`` 0, 1, 2, ... in order, then one ``end`` row whose ``rows``
    and ``sha256`` match every byte before it, and nothing after it. strace's text: the sandbox's
    first process (bwrap, the first pid of the file) has its exit recorded.
    """
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    if not raw.strip():
        return (
            "the tracer wrote nothing (not even its end record): the trace was cut or never written"
        )
    if raw.lstrip().startswith(b"{"):
        return _check_seccomp(raw)
    text = raw.decode("utf-8", "replace")
    first = _LINE.match(text.lstrip().split("\n", 1)[0])
    if first is None:
        return "strace's output does not start with a process's line"
    pid = first.group(1)
    ended = re.compile(rf"^{pid}\s+\+\+\+ (?:exited with \d+|killed by \w+)", re.M)
    if not ended.search(text):
        return f"strace's output lacks the exit of the sandbox's first process ({pid}): the trace was cut"
    return None


def _check_seccomp(raw: bytes) -> str | None:
    digest = hashlib.sha256()
    lines = raw.split(b"\n")
    for seq, line in enumerate(lines):
        try:
            row = json.loads(line)
        except ValueError:
            return f"row {seq} of the tracer's file is not JSON: the trace was cut or edited"
        if not isinstance(row, dict) or row.get("seq") != seq:
            found = row.get("seq") if isinstance(row, dict) else None
            return (
                f"the tracer's rows are out of sequence at row {seq} (seq {found}): rows were removed, "
                "reordered or inserted"
            )
        if row.get("kind") == "end":
            if row.get("rows") != seq or row.get("sha256") != digest.hexdigest():
                return "the tracer's end record does not match its rows (count or hash): the trace was changed"
            if lines[seq + 1 :] != [b""]:
                return "rows follow the tracer's end record"
            if row.get("drained") is False:
                return "the tracer did not serve every reported call before it stopped"
            return None
        digest.update(line + b"\n")
    return f"the tracer's end record is missing after {len(lines)} line(s): the trace was cut (or the tracer killed)"


def seal_rows(
    rows: list[dict[str, Any]], *, problem: str | None = None, tracer: str = "seccomp"
) -> str:
    """The text of a sealed ``exec_trace.jsonl``: each row with its ``seq``, then the ``end`` row
    (count, SHA-256 of the lines before it, ``intact`` and the ``problem`` of the raw trace)."""
    lines = []
    for seq, row in enumerate(rows):
        lines.append(
            json.dumps({**{k: v for k, v in row.items() if k != "seq"}, "seq": seq}) + "\n"
        )
    body = "".join(lines)
    end: dict[str, Any] = {
        "kind": "end",
        "seq": len(rows),
        "rows": len(rows),
        "sha256": hashlib.sha256(body.encode("utf-8")).hexdigest(),
        "tracer": tracer,
        "intact": problem is None,
    }
    if problem is not None:
        end["problem"] = problem
    return body + json.dumps(end) + "\n"


def write_trace(
    raw: str | os.PathLike[str],
    out: str | os.PathLike[str],
    cwd: str = "/",
    *,
    extra: list[dict[str, Any]] | None = None,
    task_repos: Sequence[dict[str, Any]] = (),
) -> list[dict[str, Any]]:
    """Convert the tracer's file ``raw`` (the seccomp tracer's JSON rows or strace's output) into
    ``out``, sealed (:func:`seal_rows`; a raw trace that is not whole, :func:`check_raw`, is said in
    the seal and fails the audit closed). ``extra``: rows observed outside the tracer, sealed after
    its rows (``git_state``: a task repository changed during the phase, ``harness/git_guard.py``).
    A file already at ``out`` — one the phase itself may have planted — is replaced, never
    followed. ``task_repos``: the phase's task repositories, against which git's reads are
    judged (:func:`judge_git_reads`; its findings are sealed after the tracer's rows), and by
    which the rows of git work in a repository of the phase's own are told apart
    (:func:`evotree.harness.audit.trace_own.mark_own_repositories`). Returns the rows."""
    try:
        fd = os.open(raw, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        data = b""
    else:
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise TraceTampered(f"{raw} is not a regular file")
            data = fh.read()
    text = data.decode("utf-8", errors="replace")
    seccomp = text.lstrip().startswith("{")
    if seccomp:
        rows = identify(merge_seccomp(text), git_identities())
        rows += judge_git_reads(rows, task_repos)
        mark_own_repositories(rows, task_repos)
    else:
        rows = _sandbox_start(parse_strace(text, cwd))
    rows += extra or []
    problem = check_raw(data)
    target = Path(out)
    if target.is_symlink() or target.exists():
        target.unlink()
    tmp = target.with_name(target.name + ".tmp")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    with open(tmp, "x", encoding="utf-8") as fh:
        fh.write(seal_rows(rows, problem=problem, tracer="seccomp" if seccomp else "strace"))
    os.replace(tmp, target)
    return rows


def read_trace_rows(text: str) -> list[dict[str, Any]]:
    """The exec, connect, open and git read rows of a sealed trace file's text
    (:func:`seal_rows`), git rows in the spelling the audit judges (:func:`judge_git_spellings`);
    a ``git_state`` row (a task repository changed during the phase, or read through a HEAD of
    the phase's own: :func:`judge_git_reads`) is read as an open row of what changed.

    Raises :class:`TraceTampered` when the seal does not hold — a row missing, reordered, added
    or changed, the end row missing (the file was cut) — or when the seal says the tracer's own
    output was cut: such a trace is no record of what ran.
    """
    rows: list[dict[str, Any]] = []
    digest = hashlib.sha256()
    lines = text.split("\n")
    for seq, line in enumerate(lines):
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise TraceTampered(
                f"line {seq + 1} of the trace is not JSON: it was cut or edited"
            ) from exc
        if not isinstance(row, dict) or row.get("seq") != seq:
            raise TraceTampered(
                f"the trace's rows are out of sequence at row {seq}: rows were removed, "
                "reordered or inserted (or it was not written by evotree)"
            )
        if row.get("kind") == "end":
            if row.get("rows") != seq or row.get("sha256") != digest.hexdigest():
                raise TraceTampered(
                    "the trace's end row does not match its rows (count or hash): it was changed"
                )
            if lines[seq + 1 :] != [""]:
                raise TraceTampered("rows follow the trace's end row")
            if row.get("intact") is not True:
                raise TraceTampered(
                    f"the tracer's own output was not whole: {row.get('problem') or 'unknown'}"
                )
            return judge_git_spellings(rows)
        digest.update(line.encode("utf-8", "surrogateescape") + b"\n")
        if row.get("kind") in ("exec", "connect", "open", "gitread", "ptrace"):
            rows.append(row)
        elif row.get("kind") == "git_state":  # judged as git storage touched without git
            rows.append(
                {
                    "kind": "open",
                    "path": f"{row.get('path')} ({row.get('change')})",
                    "exe": "the phase (the task repository's .git, compared after the phase)",
                    "git_state": row.get("change"),
                }
            )
    raise TraceTampered(
        f"the trace has no end row after {len(lines)} line(s): it was cut or truncated"
    )
