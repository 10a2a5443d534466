"""Readers of trajectory formats: every format becomes :class:`Trajectory` s of :class:`Step` s.

A step is one command (a shell command line, or a tool call written as its shell equivalent)
and, where the format records it, its output. Formats read (:func:`read_trajectories` detects
them from the content, not the file name):

``evotree``
    Rollout rows of the evidence store (``evidence/<phase>/rollouts.jsonl`` or
    ``rollouts.parquet``): one trajectory per row, its ``commands`` column the steps, its
    ``text`` the observation text.
``shell``
    Plain shell history (``.bash_history`` with ``#<epoch>`` lines, zsh ``: <epoch>:0;cmd``):
    one trajectory per file, no outputs.
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

A file that is none of these raises :class:`evotree.harness.audit.errors.AuditInputError` (exit 29)
naming the file and what was expected.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.harness.audit.errors import AuditInputError

__all__ = ["Step", "Trajectory", "FORMATS", "read_trajectories", "detect_format", "rollout_trajectory"]

FORMATS = ("evotree", "shell", "swe-agent", "mini-swe-agent", "chat", "claude-code", "codex")


@dataclass
class Step:
    """One command a trajectory issued (shell text) and what it printed (None: not recorded)."""

    command: str
    output: str | None = None
    tool: str = "shell"


@dataclass
class Trajectory:
    """One episode of an agent: its steps, and where it came from."""

    id: str
    format: str
    steps: list[Step] = field(default_factory=list)
    source: str | None = None
    task_id: str | None = None
    run_id: str | None = None
    phase: str | None = None
    text: str | None = None  # free observation text (evotree rollouts: the transcript)
    nbytes: int = 0


# ----------------------------------------------------------------------------- helpers
_FENCE = re.compile(r"```(?:bash|sh|shell|console|zsh)?[ \t]*\n(.*?)```", re.S)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)


def _text_of(content: Any) -> str:
    """Text of a message content: a string, or a list of blocks with ``text``/``content``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c.get("text", c.get("content")) if isinstance(c, Mapping) else c)
                         for c in content)
    if isinstance(content, Mapping):
        return _text_of(content.get("text", content.get("content", "")))
    return str(content)


def _argv_text(command: Any) -> str:
    if isinstance(command, list):
        return shlex.join(str(c) for c in command)
    return str(command or "")


def _tool_step(name: str, args: Mapping[str, Any]) -> list[Step]:
    """A tool call as shell-equivalent steps (module doc)."""
    low = name.lower()
    q = shlex.quote
    if low in ("bash", "shell", "exec_command", "run_shell_command", "terminal", "execute_bash", "run",
               "container.exec", "local_shell", "cmd", "execute_command"):
        command = args.get("command", args.get("cmd", args.get("script", "")))
        return [Step(_argv_text(command), tool=name)]
    if low in ("read", "view", "open", "read_file", "str_replace_editor") and (
            args.get("file_path") or args.get("path")):
        path = str(args.get("file_path") or args.get("path"))
        verb = "tee" if args.get("command") in ("create", "str_replace", "insert", "undo_edit") else "cat"
        return [Step(f"{verb} {q(path)}", tool=name)]
    if low in ("write", "edit", "multiedit", "notebookedit", "write_file", "create_file", "edit_file",
               "replace"):
        path = str(args.get("file_path") or args.get("notebook_path") or args.get("path") or "")
        return [Step(f"tee {q(path)}", tool=name)] if path else []
    if low in ("grep", "search", "search_file_content"):
        path = str(args.get("path") or ".")
        return [Step(f"grep -r {q(str(args.get('pattern', '')))} {q(path)}", tool=name)]
    if low in ("glob", "ls", "list_directory"):
        return [Step(f"ls {q(str(args.get('pattern') or args.get('path') or '.'))}", tool=name)]
    if low in ("webfetch", "web_fetch", "fetch", "browse"):
        return [Step(f"curl {q(str(args.get('url', '')))}", tool=name)]
    if low in ("websearch", "web_search", "search_web"):
        return [Step(f"curl {q('websearch:' + str(args.get('query', '')))}", tool=name)]
    if low == "apply_patch":
        patch = str(args.get("input", args.get("patch", "")))
        return [Step(f"tee {q(p.strip())}", tool=name) for p in _PATCH_FILE.findall(patch)]
    return []


def _load_args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return value if isinstance(value, dict) else {"command": value}
    return {}


# ----------------------------------------------------------------------------- JSON formats
def _swe_agent(data: Mapping[str, Any], tid: str, source: str) -> Trajectory:
    traj = Trajectory(tid, "swe-agent", source=source)
    for entry in data.get("trajectory") or []:
        if not isinstance(entry, Mapping):
            continue
        action = entry.get("action")
        if action:
            traj.steps.append(Step(str(action), None if entry.get("observation") is None
                                   else _text_of(entry.get("observation"))))
    if not traj.steps:  # only a history of messages
        return _messages(data.get("history") or [], tid, source, "swe-agent")
    return traj


def _messages(messages: Iterable[Any], tid: str, source: str, fmt: str) -> Trajectory:
    traj = Trajectory(tid, fmt, source=source)
    pending: dict[str, Step] = {}
    last: list[Step] = []
    for msg in messages:
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        if role == "assistant":
            last = []
            for call in msg.get("tool_calls") or []:
                fn = call.get("function", call) if isinstance(call, Mapping) else {}
                steps = _tool_step(str(fn.get("name", "")), _load_args(fn.get("arguments")))
                for step in steps:
                    traj.steps.append(step)
                    if isinstance(call, Mapping) and call.get("id"):
                        pending[str(call["id"])] = step
                last += steps
            if isinstance(msg.get("action"), str) and msg.get("action"):  # SWE-agent history
                step = Step(msg["action"])
                traj.steps.append(step)
                last.append(step)
            elif not msg.get("tool_calls"):
                for block in _FENCE.findall(_text_of(msg.get("content"))):
                    step = Step(block.strip())
                    traj.steps.append(step)
                    last.append(step)
        elif role in ("user", "tool", "function"):
            text = _text_of(msg.get("content"))
            target = pending.pop(str(msg.get("tool_call_id")), None) if msg.get("tool_call_id") else None
            if target is not None:
                target.output = text
            elif last and role != "user" or (last and last[-1].output is None):
                last[-1].output = text
                last = []
    return traj


# ----------------------------------------------------------------------------- JSONL formats
def _jsonl_kind(obj: Mapping[str, Any]) -> str | None:
    if "commands" in obj and ("group_id" in obj or "run_id" in obj):
        return "evotree"
    kind = obj.get("type")
    if kind in ("assistant", "user", "summary", "system") and ("message" in obj or "sessionId" in obj
                                                                or "uuid" in obj):
        return "claude-code"
    if kind in ("response_item", "session_meta", "turn_context", "event_msg", "function_call",
                "function_call_output", "local_shell_call", "message", "reasoning"):
        return "codex"
    if "role" in obj and ("content" in obj or "tool_calls" in obj):
        return "chat"
    return None


def _rollout(obj: Mapping[str, Any], source: str | None, nbytes: int = 0) -> Trajectory:
    run_id = str(obj.get("run_id") or "")
    tid = "/".join(str(obj.get(k, "")) for k in ("run_id", "phase", "step", "group_id", "sample_index"))
    commands = obj.get("commands") or []
    return Trajectory(tid, "evotree", [Step(str(c)) for c in commands], source=source,
                      task_id=None if obj.get("task_id") is None else str(obj.get("task_id")),
                      run_id=run_id or None, phase=obj.get("phase"),
                      text=obj.get("text") if isinstance(obj.get("text"), str) else None, nbytes=nbytes)


def rollout_trajectory(row: Mapping[str, Any], source: str | None = None) -> Trajectory:
    """A rollout row (a dict with the columns of :data:`evotree.harness.layout.SCHEMAS` ``rollouts``)."""
    return _rollout(row, source)


class _Session:
    """Accumulates one Claude Code / Codex / chat JSONL session."""

    def __init__(self, tid: str, fmt: str, source: str) -> None:
        self.traj = Trajectory(tid, fmt, source=source)
        self.pending: dict[str, Step] = {}
        self.messages: list[Any] = []

    def claude(self, obj: Mapping[str, Any]) -> None:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "tool_use":
                for step in _tool_step(str(block.get("name", "")), _load_args(block.get("input"))):
                    self.traj.steps.append(step)
                    self.pending[str(block.get("id"))] = step
            elif kind == "tool_result":
                step = self.pending.pop(str(block.get("tool_use_id")), None)
                if step is not None:
                    step.output = _text_of(block.get("content"))

    def codex(self, obj: Mapping[str, Any]) -> None:
        item = obj.get("payload") if obj.get("type") == "response_item" else obj
        if not isinstance(item, Mapping):
            return
        kind = item.get("type")
        call_id = str(item.get("call_id") or item.get("id") or "")
        if kind == "function_call" or kind == "custom_tool_call":
            args = _load_args(item.get("arguments", item.get("input")))
            for step in _tool_step(str(item.get("name", "")), args):
                self.traj.steps.append(step)
                self.pending[call_id] = step
        elif kind == "local_shell_call":
            action = item.get("action") or {}
            step = Step(_argv_text(action.get("command") if isinstance(action, Mapping) else ""), tool="local_shell")
            self.traj.steps.append(step)
            self.pending[call_id] = step
        elif kind in ("function_call_output", "local_shell_call_output", "custom_tool_call_output"):
            step = self.pending.pop(call_id, None)
            if step is not None:
                out = item.get("output")
                if isinstance(out, str):
                    try:
                        parsed = json.loads(out)
                        out = parsed.get("output", out) if isinstance(parsed, dict) else out
                    except ValueError:
                        pass
                step.output = _text_of(out)


def _jsonl(text: str, source: str, stem: str) -> list[Trajectory]:
    out: list[Trajectory] = []
    session: _Session | None = None
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
        kind = _jsonl_kind(obj)
        if kind is None:
            continue
        good += 1
        if kind == "evotree":
            if obj.get("commands"):  # a rollout without tool calls is no agent trajectory
                out.append(_rollout(obj, f"{source}:{number}", len(line)))
            continue
        if session is None:
            session = _Session(stem, kind, source)
        if kind == "claude-code":
            session.claude(obj)
        elif kind == "codex":
            session.codex(obj)
        else:
            session.messages.append(obj)
    if session is not None:
        if session.messages:
            chat = _messages(session.messages, stem, source, "chat")
            session.traj.steps += chat.steps
        out.append(session.traj)
    if not good:
        raise AuditInputError(
            f"{source}: {bad} malformed line(s) and no line of a known trajectory format",
            fix="pass evotree rollouts, shell history, SWE-agent / mini-swe-agent JSON, or "
                "Claude Code / Codex JSONL (see docs/audit.md)")
    return out


def _shell_history(text: str, source: str, stem: str) -> Trajectory:
    steps = []
    for line in text.splitlines():
        if not line.strip() or re.match(r"^#\d{9,}$", line):
            continue
        m = re.match(r"^: \d+:\d+;(.*)$", line)  # zsh extended history
        steps.append(Step(m.group(1) if m else line))
    return Trajectory(stem, "shell", steps, source=source)


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
        return (_jsonl_kind(data) or "unknown-json"), data
    if isinstance(data, list):
        return "chat", data
    if data is not None:
        return "unknown-json", data
    first = text.lstrip().split("\n", 1)[0]
    try:
        obj = json.loads(first)
    except ValueError:
        return "unknown-json", None
    return ((_jsonl_kind(obj) or "unknown-json") if isinstance(obj, Mapping) else "unknown-json"), None


def detect_format(text: str) -> str:
    """The format of a file's text (module doc); ``shell`` when it is no JSON at all."""
    return _detect(text)[0]


def _read_parquet(path: Path) -> list[Trajectory]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path, columns=None)
    except Exception as exc:  # noqa: BLE001 - any pyarrow failure is an input error here
        raise AuditInputError(f"{path}: not a readable Parquet file ({exc})",
                              fix="pass a rollouts.parquet of a finished run") from None
    if "commands" not in table.column_names:
        raise AuditInputError(f"{path}: a Parquet file without a 'commands' column is not a rollouts file",
                              fix="pass <run>/rollouts.parquet")
    return [_rollout(row, f"{path}:{i}") for i, row in enumerate(table.to_pylist()) if row.get("commands")]


def read_trajectories(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Every trajectory in one file (format detected from its content)."""
    p = Path(path)
    if p.suffix == ".parquet":
        return _read_parquet(p)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise AuditInputError(f"cannot read {p}: {exc.strerror or exc}",
                              fix="check the path (a file, readable)") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
    stem = p.name
    source = str(p)
    fmt, data = _detect(text)
    if fmt == "shell":
        if "\x00" in text:
            raise AuditInputError(f"{p}: a binary file, not a trajectory",
                                  fix="pass a trajectory or transcript file (docs/audit.md lists the formats)")
        traj = _shell_history(text, source, stem)
        traj.nbytes = len(raw)
        return [traj]
    if data is not None and fmt not in ("claude-code", "codex"):  # one JSON document (not a 1-line session)
        if fmt == "swe-agent":
            traj = _swe_agent(data, stem, source)
        elif fmt == "mini-swe-agent":
            traj = _messages(data.get("messages") or [], stem, source, fmt)
        elif fmt == "chat":
            traj = _messages(data, stem, source, "chat")
        elif fmt == "evotree":  # one rollout row
            return [_rollout(data, source, len(raw))] if data.get("commands") else []
        else:
            raise AuditInputError(
                f"{p}: JSON, but not a known trajectory format (no 'trajectory', 'history' or 'messages')",
                fix="pass evotree rollouts, shell history, SWE-agent / mini-swe-agent JSON, or "
                    "Claude Code / Codex JSONL (see docs/audit.md)")
        traj.nbytes = len(raw)
        return [traj]
    trajs = _jsonl(text, source, stem)
    if len(trajs) == 1 and trajs[0].format != "evotree":
        trajs[0].nbytes = len(raw)
    return trajs


def iter_trajectories(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Trajectory]:
    """Trajectories of several files, in order."""
    for path in paths:
        yield from read_trajectories(path)
