"""Readers of trajectory formats: every format becomes :class:`Trajectory` s of :class:`Step` s.

A step is one command (a shell command line, or a tool call written as its shell equivalent)
and, where the format records it, its output. Formats read (:func:`read_trajectories` detects
them from the content, not the file name):

``evotree``
    Rollout rows of the evidence store (``evidence/<phase>/rollouts.jsonl`` or
    ``rollouts.parquet``): one trajectory per row, its ``commands`` column the steps, its
    ``text`` the observation text.
``shell``
    Plain shell history (``.bash_history`` with ``#<epoch>`` lines, zsh ``: <epoch>:0;cmd``,
    fish ``- cmd: CMD``): one trajectory per file, no outputs. Text that reads mostly as prose
    or markdown is no history: ``audit.unreadable``.
``swe-agent``
    SWE-agent ``.traj`` JSON: ``{"trajectory": [{"action", "observation", ...}]}`` (or only
    ``"history"`` messages).
``mini-swe-agent`` / ``chat``
    ``{"messages": [...]}`` (or a bare list of messages): shell blocks (```` ```bash ````) in
    assistant messages, the next user/tool message as the output; OpenAI-style ``tool_calls``.
``claude-code``
    Claude Code JSONL sessions: ``tool_use`` blocks (``Bash`` -> its command, ``Read`` ->
    ``cat PATH``, ``Write``/``Edit``/``MultiEdit``/``NotebookEdit`` -> ``tee PATH``, ``Grep`` ->
    ``grep -r PATTERN PATH``, ``Glob`` -> ``ls PATTERN``, ``WebFetch``/``WebSearch`` ->
    ``curl``), outputs from the matching ``tool_result``.
``codex``
    Codex CLI JSONL (``response_item`` payloads or bare items): ``function_call`` /
    ``local_shell_call`` with a ``command`` argv (joined with :func:`shlex.join`, so
    ``["bash", "-lc", "git log --all"]`` is parsed through), ``apply_patch`` patches as writes
    of the files they touch; outputs from ``function_call_output``.
``codex-exec``
    ``codex exec --json`` events (``thread.started``, ``turn.*``, ``item.started`` /
    ``item.updated`` / ``item.completed``, ``error``): a ``command_execution`` item is a step
    (its ``command``, its ``aggregated_output`` as the output); a ``file_change`` item writes
    each changed path (``tee PATH``); an ``mcp_tool_call`` is read as the tool it names; a
    ``web_search`` is a ``curl``. Messages, reasoning and to-do lists are no steps; an item
    of a type the audit does not know that looks like it runs something is ``audit.unreadable``.

``trace``
    A phase's runtime trace (``evidence/<phase>/exec_trace.jsonl``,
    :mod:`evotree.harness.audit.trace`):
    every program that ran in the sandbox (argv, working directory, exit status) and every
    connect to an internet address.

A file that is none of these raises :class:`evotree.harness.audit.errors.AuditInputError` (exit 29)
naming the file and what was expected.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from evotree.harness.audit.agent_sessions import AgentSession, jsonl_kind
from evotree.harness.audit.chat_formats import messages_trajectory, swe_agent_trajectory
from evotree.harness.audit.errors import AuditInputError, UnreadableTrajectory
from evotree.harness.audit.shell_history import shell_history
from evotree.harness.audit.steps import Step, Trajectory

__all__ = [
    "FORMATS",
    "read_trajectories",
    "rollout_trajectory",
    "trace_trajectory",
]

FORMATS = (
    "evotree",
    "shell",
    "swe-agent",
    "mini-swe-agent",
    "chat",
    "claude-code",
    "codex",
    "codex-exec",
    "trace",
)


# ----------------------------------------------------------------------------- rollouts and traces
def _rollout(obj: Mapping[str, Any], source: str | None, nbytes: int = 0) -> Trajectory:
    run_id = str(obj.get("run_id") or "")
    tid = "/".join(
        str(obj.get(k, "")) for k in ("run_id", "phase", "step", "group_id", "sample_index")
    )
    commands = obj.get("commands") or []
    steps = [Step(str(c)) for c in commands]
    text = obj.get("text")
    if isinstance(text, str) and text and steps:
        _outputs_from_text(steps, text)
    # the transcript before the first command is what the task gave the agent (its prompt)
    first = (
        text.find(steps[0].command) if isinstance(text, str) and steps and steps[0].command else -1
    )
    return Trajectory(
        tid,
        "evotree",
        steps,
        source=source,
        task_id=None if obj.get("task_id") is None else str(obj.get("task_id")),
        run_id=run_id or None,
        phase=obj.get("phase"),
        text=obj.get("text") if isinstance(obj.get("text"), str) else None,
        nbytes=nbytes,
        prompt=text[:first].strip() or None if first > 0 else None,
    )


def _outputs_from_text(steps: list[Step], text: str) -> None:
    """Give each step its output when the rollout's ``text`` is the transcript the docs ask for
    (``"$ {command}\\n{output}"`` per step, in order) or a chat transcript whose tool calls are
    ``<bash>\\n{command}\\n</bash>`` each followed by a ``<|tool|>`` turn (the output, up to the
    next ``<|...|>`` turn); otherwise leave outputs unknown."""
    if not _outputs_from_shell_transcript(steps, text):
        _outputs_from_chat_transcript(steps, text)


def _outputs_from_chat_transcript(steps: list[Step], text: str) -> None:
    """Outputs from ``<bash>`` calls and ``<|tool|>`` turns, every step found in order."""
    found = []
    pos = 0
    for step in steps:
        call = f"<bash>\n{step.command}\n</bash>\n"
        at = text.find(call, pos)
        if at < 0:
            return
        pos = at + len(call)
        while pos < len(text) and text[pos] in " \n":
            pos += 1
        if not text.startswith("<|tool|>\n", pos):  # a call answered by no tool turn
            found.append(None)
            continue
        body = pos + len("<|tool|>\n")
        end = text.find("\n<|", body)
        found.append(text[body : end if end >= 0 else len(text)].strip("\n"))
        pos = body
    for step, output in zip(steps, found, strict=True):
        if output is not None:
            step.output = output


def _outputs_from_shell_transcript(steps: list[Step], text: str) -> bool:
    """Outputs from a ``"$ {command}"`` transcript; False when it is not one."""
    starts = []
    pos = 0
    for step in steps:
        marker = "$ " + step.command
        at = text.find(marker, pos)
        if at < 0 or (at > 0 and text[at - 1] != "\n"):
            return False
        starts.append((at, at + len(marker)))
        pos = at + len(marker)
    for k, step in enumerate(steps):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(text)
        step.output = text[starts[k][1] : end].strip("\n")
    return True


def rollout_trajectory(row: Mapping[str, Any], source: str | None = None) -> Trajectory:
    """A rollout row (a dict with the columns of :data:`evotree.harness.layout.SCHEMAS`
    ``rollouts``)."""
    return _rollout(row, source)


def trace_trajectory(
    rows: Iterable[Mapping[str, Any]],
    tid: str,
    source: str | None = None,
    *,
    run_id: str | None = None,
    phase: str | None = None,
) -> Trajectory:
    """A runtime trace (:mod:`evotree.harness.audit.trace`) as a trajectory: each program that ran
    is a step (its argv as a command line, in its working directory); each connect to an
    internet address a step ``connect() ADDRESS:PORT``; each open of git storage (objects, packs,
    refs, reflogs, a bare repository) by a program that is not git a step ``open() PATH``."""
    traj = Trajectory(tid, "trace", source=source, run_id=run_id, phase=phase)
    for row in rows:
        if row.get("kind") == "exec":
            argv = [str(a) for a in row.get("argv") or []] or [str(row.get("path") or "")]
            if not argv[0]:
                continue
            exit_ = row.get("exit")
            traj.steps.append(
                Step(shlex.join(argv), None if exit_ is None else f"[exit {exit_}]", tool="exec")
            )
            again = row.get("argv_at_exit")
            if isinstance(again, list) and again and [str(a) for a in again] != argv:
                traj.steps.append(Step(shlex.join(str(a) for a in again), None, tool="exec"))
        elif (
            row.get("kind") == "open"
        ):  # git storage read by a program that is not git: a library, zlib
            path = str(row.get("path") or "")
            if path:
                by = str(row.get("exe") or row.get("comm") or "a program")
                # an open the trace let go on unseen: why (the kernel read its path again)
                why = row.get("unpinned") or (
                    "its path could not be followed" if row.get("unresolved") else ""
                )
                argv = ["open()", path, *(["--unseen", str(why)] if why else [])]
                traj.steps.append(Step(shlex.join(argv), f"[opened by {by}]", tool="open"))
        elif row.get("kind") == "connect":
            addr, port = str(row.get("address") or ""), row.get("port")
            host = f"[{addr}]" if ":" in addr else addr
            traj.steps.append(
                Step(
                    shlex.join(["connect()", f"{host}:{port}" if port else host]),
                    str(row.get("result") or ""),
                    tool="connect",
                )
            )
    return traj


def _jsonl(text: str, source: str, stem: str) -> list[Trajectory]:
    out: list[Trajectory] = []
    session: AgentSession | None = None
    bad = 0
    good = 0
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if not isinstance(obj, Mapping):
            bad += 1
            continue
        kind = jsonl_kind(obj)
        if kind is None:
            continue
        good += 1
        if kind == "evotree":
            if obj.get("commands"):  # a rollout without tool calls is no agent trajectory
                out.append(_rollout(obj, f"{source}:{number}", len(line)))
            continue
        if session is None:
            session = AgentSession(stem, kind, source)
        if kind == "claude-code":
            session.claude(obj)
        elif kind == "codex":
            session.codex(obj)
        elif kind == "codex-exec":
            session.codex_exec(obj)
        else:
            session.messages.append(obj)
    if session is not None:
        if session.messages:
            chat = messages_trajectory(session.messages, stem, source, "chat")
            session.traj.steps += chat.steps
            session.traj.unread += chat.unread
            session.traj.prompt = session.traj.prompt or chat.prompt
        if bad:
            session.traj.unread.append(f"{bad} line(s) are not JSON objects")
        out.append(session.traj)
    elif bad and good:
        out.append(
            Trajectory(
                stem, "evotree", source=source, unread=[f"{bad} line(s) are not JSON objects"]
            )
        )
    if not good:
        raise UnreadableTrajectory(
            f"{source}: {bad} malformed line(s) and no line of a known trajectory format",
            fix="pass evotree rollouts, shell history, SWE-agent / mini-swe-agent JSON, or "
            "Claude Code / Codex JSONL (see docs/audit.md)",
        )
    return out


def _detect(text: str) -> tuple[str, Any]:
    """(format, the whole text parsed as JSON or None)."""
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return "shell", None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, Mapping):
        if "trajectory" in data or "history" in data:
            return "swe-agent", data
        if "messages" in data:
            return "mini-swe-agent", data
        return (jsonl_kind(data) or "unknown-json"), data
    if isinstance(data, list):
        return "chat", data
    if data is not None:
        return "unknown-json", data
    kind = "unknown-json"
    for line in text.lstrip().split("\n", 8)[:8]:  # a header line (older Codex) may come first
        try:
            obj = json.loads(line)
        except ValueError:
            if kind == "unknown-json":
                return kind, None
            continue
        found = jsonl_kind(obj) if isinstance(obj, Mapping) else None
        if found:
            return found, None
    return kind, None


def _read_parquet(path: Path) -> list[Trajectory]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path, columns=None)
    except Exception as exc:  # noqa: BLE001 - any pyarrow failure is an input error here
        raise AuditInputError(
            f"{path}: not a readable Parquet file ({exc})",
            fix="pass a rollouts.parquet of a finished run",
        ) from None
    if "commands" not in table.column_names:
        raise AuditInputError(
            f"{path}: a Parquet file without a 'commands' column is not a rollouts file",
            fix="pass <run>/rollouts.parquet",
        )
    return [
        _rollout(row, f"{path}:{i}")
        for i, row in enumerate(table.to_pylist())
        if row.get("commands")
    ]


def read_trajectories(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Every trajectory in one file (format detected from its content)."""
    p = Path(path)
    if p.suffix == ".parquet":
        return _read_parquet(p)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise AuditInputError(
            f"cannot read {p}: {exc.strerror or exc}", fix="check the path (a file, readable)"
        ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
    stem = p.name
    source = str(p)
    fmt, data = _detect(text)
    if fmt == "shell":
        if "\x00" in text:
            raise UnreadableTrajectory(
                f"{p}: a binary file, not a trajectory",
                fix="pass a trajectory or transcript file (docs/audit.md lists the formats)",
            )
        traj = shell_history(text, source, stem)
        traj.nbytes = len(raw)
        return [traj]
    if data is not None and fmt not in (
        "claude-code",
        "codex",
    ):  # one JSON document (not a 1-line session)
        if fmt == "swe-agent":
            traj = swe_agent_trajectory(data, stem, source)
        elif fmt == "mini-swe-agent":
            traj = messages_trajectory(data.get("messages") or [], stem, source, fmt)
        elif fmt == "chat":
            traj = messages_trajectory(data, stem, source, "chat")
        elif fmt == "evotree":  # one rollout row
            return [_rollout(data, source, len(raw))] if data.get("commands") else []
        else:
            raise UnreadableTrajectory(
                f"{p}: JSON, but not a known trajectory format "
                "(no 'trajectory', 'history' or 'messages')",
                fix="pass evotree rollouts, shell history, SWE-agent / mini-swe-agent JSON, or "
                "Claude Code / Codex JSONL (see docs/audit.md)",
            )
        traj.nbytes = len(raw)
        return [traj]
    if fmt == "trace":
        from evotree.harness.audit.trace import read_trace_rows

        traj = trace_trajectory(read_trace_rows(text), stem, source)
        traj.nbytes = len(raw)
        return [traj]
    trajs = _jsonl(text, source, stem)
    if len(trajs) == 1 and trajs[0].format != "evotree":
        trajs[0].nbytes = len(raw)
    return trajs
