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

``trace``
    A phase's runtime trace (``evidence/<phase>/exec_trace.jsonl``, :mod:`evotree.harness.audit.trace`):
    every program that ran in the sandbox (argv, working directory, exit status) and every
    connect to an internet address.

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

__all__ = ["Step", "Trajectory", "FORMATS", "read_trajectories", "detect_format", "rollout_trajectory",
           "trace_trajectory"]

FORMATS = ("evotree", "shell", "swe-agent", "mini-swe-agent", "chat", "claude-code", "codex", "trace")


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
    if low in ("str_replace_editor", "str_replace_based_edit_tool", "text_editor") and args.get("path"):
        words = ["str_replace_editor", str(args.get("command") or "view"), str(args["path"])]
        for key in ("file_text", "old_str", "new_str"):
            if args.get(key) is not None:
                words += [f"--{key}", str(args[key])]
        return [Step(shlex.join(words), tool=name)]
    if low in ("read", "view", "open", "read_file") and (args.get("file_path") or args.get("path")):
        path = str(args.get("file_path") or args.get("path"))
        return [Step(f"cat {q(path)}", tool=name)]
    if low in ("write", "write_file", "create_file") and (args.get("file_path") or args.get("path")):
        path = str(args.get("file_path") or args.get("path"))
        content = args.get("content", args.get("file_text", args.get("text")))
        if isinstance(content, str):
            return [Step(_written(path, content), tool=name)]
        return [Step(f"tee {q(path)}", tool=name)]
    if low in ("edit", "multiedit", "notebookedit", "edit_file", "replace"):
        path = str(args.get("file_path") or args.get("notebook_path") or args.get("path") or "")
        if not path:
            return []
        edits = args.get("edits") if isinstance(args.get("edits"), list) else [args]
        steps = []
        for edit in edits:
            if not isinstance(edit, Mapping):
                continue
            new = edit.get("new_string", edit.get("new_source", edit.get("new_str", edit.get("content"))))
            old = edit.get("old_string", edit.get("old_str"))
            if isinstance(new, str):
                words = ["str_replace_editor", "str_replace" if isinstance(old, str) else "insert", path]
                words += (["--old_str", old] if isinstance(old, str) else []) + ["--new_str", new]
                steps.append(Step(shlex.join(words), tool=name))
        return steps or [Step(f"tee {q(path)}", tool=name)]
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
        return [Step(shlex.join(["apply_patch", patch]), tool=name)] if patch else []
    return []


def _written(path: str, content: str) -> str:
    """A file an editor tool wrote, as the shell command that writes the same content (so the
    audit remembers it, and reads it when the trajectory runs it)."""
    delim = "EVOTREE_EOF"
    while delim in content:
        delim += "_"
    return f"tee {shlex.quote(path)} >/dev/null <<'{delim}'\n{content}\n{delim}"


_SWE_OPEN = re.compile(r"^(open|create)\s+(\"[^\"]+\"|'[^']+'|\S+)(?:\s+\d+)?\s*$")
_SWE_EDIT = re.compile(r"^edit\s+\d+(?::\d+)?\s*\n(.*?)\n?end_of_edit\s*$", re.S)


def _swe_classic(action: str, state: dict[str, str]) -> str:
    """SWE-agent's classic editor commands (``open``, ``create``, ``edit N:M ... end_of_edit``)
    as ``str_replace_editor`` calls on the open file: an edit's body is file content, not
    commands, and a file created and run is read when it runs."""
    text = action.strip()
    m = _SWE_OPEN.match(text)
    if m:
        path = m.group(2).strip("\"'")
        state["open"] = path
        if m.group(1) == "create":
            return shlex.join(["str_replace_editor", "create", path, "--file_text", ""])
        return action
    m = _SWE_EDIT.match(text)
    if m and state.get("open"):
        return shlex.join(["str_replace_editor", "insert", state["open"], "--new_str", m.group(1)])
    return action


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
    state: dict[str, str] = {}
    for entry in data.get("trajectory") or []:
        if not isinstance(entry, Mapping):
            continue
        action = entry.get("action")
        if action:
            traj.steps.append(Step(_swe_classic(str(action), state), None if entry.get("observation") is None
                                   else _text_of(entry.get("observation"))))
    if not traj.steps:  # only a history of messages
        return _messages(data.get("history") or [], tid, source, "swe-agent")
    return traj


def _messages(messages: Iterable[Any], tid: str, source: str, fmt: str) -> Trajectory:
    traj = Trajectory(tid, fmt, source=source)
    pending: dict[str, Step] = {}
    last: list[Step] = []
    state: dict[str, str] = {}
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
            if isinstance(msg.get("action"), str) and msg.get("action") and not msg.get("tool_calls"):
                step = Step(_swe_classic(msg["action"], state))  # SWE-agent history
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
    if obj.get("kind") in ("exec", "connect") and ("argv" in obj or "address" in obj):
        return "trace"
    kind = obj.get("type")
    if kind in ("assistant", "user", "summary", "system") and ("message" in obj or "sessionId" in obj
                                                                or "uuid" in obj):
        return "claude-code"
    if kind in ("response_item", "session_meta", "turn_context", "event_msg", "function_call",
                "function_call_output", "local_shell_call", "local_shell_call_output", "custom_tool_call",
                "custom_tool_call_output", "message", "reasoning"):
        return "codex"
    if "role" in obj and ("content" in obj or "tool_calls" in obj):
        return "chat"
    return None


def _rollout(obj: Mapping[str, Any], source: str | None, nbytes: int = 0) -> Trajectory:
    run_id = str(obj.get("run_id") or "")
    tid = "/".join(str(obj.get(k, "")) for k in ("run_id", "phase", "step", "group_id", "sample_index"))
    commands = obj.get("commands") or []
    steps = [Step(str(c)) for c in commands]
    text = obj.get("text")
    if isinstance(text, str) and text and steps:
        _outputs_from_text(steps, text)
    return Trajectory(tid, "evotree", steps, source=source,
                      task_id=None if obj.get("task_id") is None else str(obj.get("task_id")),
                      run_id=run_id or None, phase=obj.get("phase"),
                      text=obj.get("text") if isinstance(obj.get("text"), str) else None, nbytes=nbytes)


def _outputs_from_text(steps: list[Step], text: str) -> None:
    """Give each step its output when the rollout's ``text`` is the transcript the docs ask for
    (``"$ {command}\\n{output}"`` per step, in order); otherwise leave outputs unknown."""
    starts = []
    pos = 0
    for step in steps:
        marker = "$ " + step.command
        at = text.find(marker, pos)
        if at < 0 or (at > 0 and text[at - 1] != "\n"):
            return
        starts.append((at, at + len(marker)))
        pos = at + len(marker)
    for k, step in enumerate(steps):
        end = starts[k + 1][0] if k + 1 < len(starts) else len(text)
        step.output = text[starts[k][1]:end].strip("\n")


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


def trace_trajectory(rows: Iterable[Mapping[str, Any]], tid: str, source: str | None = None, *,
                     run_id: str | None = None, phase: str | None = None) -> Trajectory:
    """A runtime trace (:mod:`evotree.harness.audit.trace`) as a trajectory: each program that ran
    is a step (its argv as a command line, in its working directory); each connect to an
    internet address a step ``connect() ADDRESS:PORT``."""
    traj = Trajectory(tid, "trace", source=source, run_id=run_id, phase=phase)
    for row in rows:
        if row.get("kind") == "exec":
            argv = [str(a) for a in row.get("argv") or []] or [str(row.get("path") or "")]
            if not argv[0]:
                continue
            exit_ = row.get("exit")
            traj.steps.append(Step(shlex.join(argv), None if exit_ is None else f"[exit {exit_}]", tool="exec"))
            again = row.get("argv_at_exit")
            if isinstance(again, list) and again and [str(a) for a in again] != argv:
                traj.steps.append(Step(shlex.join(str(a) for a in again), None, tool="exec"))
        elif row.get("kind") == "connect":
            addr, port = str(row.get("address") or ""), row.get("port")
            host = f"[{addr}]" if ":" in addr else addr
            traj.steps.append(Step(shlex.join(["connect()", f"{host}:{port}" if port else host]),
                                   str(row.get("result") or ""), tool="connect"))
    return traj


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


_TS_LINE = re.compile(r"^#\d{9,}$")
_ZSH_LINE = re.compile(r"^: \d+:\d+;")
#: a multi-line entry of plain history never spans more lines than this (a stray quote does not
#: swallow the rest of the file)
_MAX_ENTRY_LINES = 200


def _history_entries(text: str) -> list[str]:
    """The commands of a shell history file, one per entry, multi-line entries joined:

    * bash with ``#<epoch>`` lines: a timestamp always starts an entry;
    * zsh extended history (``: <epoch>:0;cmd``): a line that does not start an entry continues
      the one before (zsh ends each inner line with a backslash);
    * bash: a line continues the entry before while that entry is unfinished (an open quote,
      a here-document without its terminator, a trailing backslash, an open bracket or block).
    """
    lines = text.splitlines()
    if any(_ZSH_LINE.match(line) for line in lines[:50]):
        entries: list[str] = []
        for line in lines:
            if _ZSH_LINE.match(line):
                entries.append(line[line.index(";") + 1:])
            elif entries:
                prev = entries[-1]
                entries[-1] = (prev[:-1] if prev.endswith("\\") else prev) + "\n" + line
            elif line.strip():
                entries.append(line)
        return [e[:-1] if e.endswith("\\") else e for e in entries if e.strip()]
    groups: list[list[str]] = [[]]  # a timestamp line (bash HISTTIMEFORMAT) starts an entry for sure
    for line in lines:
        if _TS_LINE.match(line):
            groups.append([])
        else:
            groups[-1].append(line)
    from evotree.harness.audit.commands import LineJoiner

    entries = []
    for group in groups:
        k = 0
        while k < len(group):
            line = group[k]
            k += 1
            if not line.strip():
                continue
            joiner = LineJoiner()
            if joiner.feed(line):
                entries.append(line)
                continue
            j = k
            while j < len(group) and j - k < _MAX_ENTRY_LINES:
                done = joiner.feed(group[j])
                j += 1
                if done:
                    break
            if joiner.finished or j >= len(group):
                entries.append("\n".join(group[k - 1:j]))
                k = j
            else:
                entries.append(line)  # never finished: a line of its own after all
    return entries


def _shell_history(text: str, source: str, stem: str) -> Trajectory:
    return Trajectory(stem, "shell", [Step(e) for e in _history_entries(text)], source=source)


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
    kind = "unknown-json"
    for line in text.lstrip().split("\n", 8)[:8]:  # a header line (older Codex) may come first
        try:
            obj = json.loads(line)
        except ValueError:
            if kind == "unknown-json":
                return kind, None
            continue
        found = _jsonl_kind(obj) if isinstance(obj, Mapping) else None
        if found:
            return found, None
    return kind, None


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
    if fmt == "trace":
        from evotree.harness.audit.trace import read_trace_rows

        traj = trace_trajectory(read_trace_rows(text), stem, source)
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
