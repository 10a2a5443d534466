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

from evotree.harness.audit.errors import AuditInputError, UnreadableTrajectory
from evotree.harness.audit.commands import LineJoiner

__all__ = [
    "Step",
    "Trajectory",
    "FORMATS",
    "read_trajectories",
    "detect_format",
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
    #: what the task gave the agent before its first action (system / user messages): a hash
    #: quoted there is the task's, not something the agent dug up
    prompt: str | None = None
    #: why parts of the file could not be read as steps (``audit.unreadable``: never a pass)
    unread: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- helpers
#: a fenced shell block: ```bash, ```sh, ... and mini-swe-agent 2's ```mswea_bash_command (any
#: info string naming a shell or a command); the body ends at the closing fence
_FENCE = re.compile(
    r"```(bash|sh|shell|console|zsh|[\w-]*(?:bash|shell|command)[\w-]*)?[ \t]*\n(.*?)```",
    re.S | re.I,
)
#: an opening fence and its info string (to tell unread blocks from code shown as text)
_FENCE_INFO = re.compile(r"```([\w.+-]*)[ \t]*\n")
#: info strings of blocks that are code shown, not commands run
_NOT_COMMANDS = frozenset(
    {
        "python",
        "py",
        "python3",
        "diff",
        "patch",
        "json",
        "yaml",
        "yml",
        "toml",
        "ini",
        "text",
        "txt",
        "plain",
        "plaintext",
        "output",
        "log",
        "md",
        "markdown",
        "js",
        "javascript",
        "ts",
        "typescript",
        "c",
        "cpp",
        "c++",
        "java",
        "go",
        "rust",
        "rs",
        "ruby",
        "rb",
        "html",
        "xml",
        "css",
        "sql",
        "csv",
        "cfg",
        "conf",
        "dockerfile",
        "makefile",
        "r",
        "php",
        "perl",
        "lua",
        "kotlin",
        "swift",
        "scala",
        "tsx",
        "jsx",
    }
)
#: tool names that run something: a call of such a tool the readers do not know is unread
_RUNS = re.compile(r"bash|shell|exec|run|command|terminal|git|python|script|sql|eval", re.I)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)


def _text_of(content: Any) -> str:
    """Text of a message content: a string, or a list of blocks with ``text``/``content``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            _text_of(c.get("text", c.get("content")) if isinstance(c, Mapping) else c)
            for c in content
        )
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
    if low in (
        "bash",
        "shell",
        "exec_command",
        "run_shell_command",
        "terminal",
        "execute_bash",
        "run",
        "container.exec",
        "local_shell",
        "cmd",
        "execute_command",
    ):
        command = args.get("command", args.get("cmd", args.get("script", "")))
        return [Step(_argv_text(command), tool=name)]
    if low in ("write_stdin", "send_input", "send_keys") and isinstance(
        args.get("chars", args.get("input")), str
    ):
        # Codex's unified exec: characters typed into a running session (a shell) are commands too
        text = str(args.get("chars", args.get("input")))
        return [Step(text.strip(), tool=name)] if text.strip() else []
    if low in ("str_replace_editor", "str_replace_based_edit_tool", "text_editor") and args.get(
        "path"
    ):
        words = ["str_replace_editor", str(args.get("command") or "view"), str(args["path"])]
        for key in ("file_text", "old_str", "new_str"):
            if args.get(key) is not None:
                words += [f"--{key}", str(args[key])]
        return [Step(shlex.join(words), tool=name)]
    if low in ("read", "view", "open", "read_file") and (args.get("file_path") or args.get("path")):
        path = str(args.get("file_path") or args.get("path"))
        return [Step(f"cat {q(path)}", tool=name)]
    if low in ("write", "write_file", "create_file") and (
        args.get("file_path") or args.get("path")
    ):
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
            new = edit.get(
                "new_string", edit.get("new_source", edit.get("new_str", edit.get("content")))
            )
            old = edit.get("old_string", edit.get("old_str"))
            if isinstance(new, str):
                words = [
                    "str_replace_editor",
                    "str_replace" if isinstance(old, str) else "insert",
                    path,
                ]
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
    return _written_to(f"tee {shlex.quote(path)} >/dev/null", content)


def _written_to(command: str, content: str) -> str:
    """``command`` fed ``content`` by a quoted here-document (no expansion)."""
    delim = "EVOTREE_EOF"
    while delim in content:
        delim += "_"
    return f"{command} <<'{delim}'\n{content}\n{delim}"


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
    entries = data.get("trajectory") or []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        action = entry.get("action")
        if action:
            traj.steps.append(
                Step(
                    _swe_classic(str(action), state),
                    None
                    if entry.get("observation") is None
                    else _text_of(entry.get("observation")),
                )
            )
    if not traj.steps:  # only a history of messages
        hist = _messages(data.get("history") or [], tid, source, "swe-agent")
        if entries and not hist.steps:
            hist.unread = [
                f"none of the {len(entries)} trajectory entries has an action the audit can read"
            ]
        return hist
    traj.prompt = _swe_prompt(data.get("history"))
    return traj


def _swe_prompt(history: Any) -> str | None:
    """System and user messages of a SWE-agent history before its first action."""
    if not isinstance(history, list):
        return None
    parts = []
    for msg in history:
        if not isinstance(msg, Mapping) or msg.get("role") == "assistant":
            break
        parts.append(_text_of(msg.get("content")))
    return "\n".join(parts) or None


def _fenced(info: str, body: str) -> str:
    """A fenced block as the command it runs: a block whose kind names Python
    (```` ```xyz_python_command ````) is Python fed to the interpreter, anything else shell."""
    if "python" in info.lower():
        return _written_to("python3 -", body)
    return body


def _unknown_fences(text: str) -> list[str]:
    """Info strings of fenced blocks in ``text`` that are neither shell nor code shown as text."""
    return [
        info
        for info in _FENCE_INFO.findall(text)
        if info and info.lower() not in _NOT_COMMANDS and not _FENCE.match("```" + info + "\n```")
    ]


def _messages(messages: Iterable[Any], tid: str, source: str, fmt: str) -> Trajectory:
    """Chat messages as steps. An assistant message's commands are, in order of authority: the
    ``extra.actions`` mini-swe-agent 2 records (what it actually ran), ``tool_calls``, a SWE-agent
    ``action``, fenced shell blocks in its text. The output is the next user / tool message
    (``extra.raw_output`` when recorded). System and user messages before the first command are
    the task's prompt. Calls of tools that run something but are unknown here, and assistant
    turns with a fenced block of an unknown kind, are recorded as unread (``audit.unreadable``)."""
    traj = Trajectory(tid, fmt, source=source)
    pending: dict[str, Step] = {}
    last: list[Step] = []
    state: dict[str, str] = {}
    prompt: list[str] = []
    turns = 0
    for msg in messages:
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        extra = msg.get("extra")
        if not isinstance(extra, dict):
            extra = {}
        if role == "assistant":
            turns += 1
            last = []
            content = _text_of(msg.get("content"))
            actions = extra.get("actions") if isinstance(extra.get("actions"), list) else None
            if actions:
                for action in actions:
                    command = action.get("command") if isinstance(action, Mapping) else action
                    if not isinstance(command, (str, list)) or not command:
                        traj.unread.append(f"an action of assistant turn {turns} has no command")
                        continue
                    step = Step(_argv_text(command))
                    traj.steps.append(step)
                    if isinstance(action, Mapping) and action.get("tool_call_id"):
                        pending[str(action["tool_call_id"])] = step
                    last.append(step)
                continue
            for call in msg.get("tool_calls") or []:
                fn = call.get("function", call) if isinstance(call, Mapping) else {}
                name = str(fn.get("name", ""))
                steps = _tool_step(name, _load_args(fn.get("arguments")))
                if not steps and _RUNS.search(name):
                    traj.unread.append(
                        f"tool call {name!r} (assistant turn {turns}) is not a tool the audit reads"
                    )
                for step in steps:
                    traj.steps.append(step)
                    if isinstance(call, Mapping) and call.get("id"):
                        pending[str(call["id"])] = step
                last += steps
            if (
                isinstance(msg.get("action"), str)
                and msg.get("action")
                and not msg.get("tool_calls")
            ):
                step = Step(_swe_classic(msg["action"], state))  # SWE-agent history
                traj.steps.append(step)
                last.append(step)
            elif not msg.get("tool_calls"):
                blocks = _FENCE.findall(content)
                for info, block in blocks:
                    step = Step(_fenced(info, block.strip()))
                    traj.steps.append(step)
                    last.append(step)
                if not blocks:
                    unknown = _unknown_fences(content)
                    if unknown:
                        traj.unread.append(
                            f"assistant turn {turns} has a ```{unknown[0]} block the audit "
                            "cannot read as a command"
                        )
        elif role in ("user", "tool", "function"):
            raw = extra.get("raw_output")
            text = raw if isinstance(raw, str) else _text_of(msg.get("content"))
            target = (
                pending.pop(str(msg.get("tool_call_id")), None) if msg.get("tool_call_id") else None
            )
            if not traj.steps and role == "user":
                prompt.append(text)
            if target is not None:
                target.output = text
            elif last and role != "user" or (last and last[-1].output is None):
                last[-1].output = text
                last = []
        elif role == "system" and not traj.steps:
            prompt.append(_text_of(msg.get("content")))
    if prompt:
        traj.prompt = "\n".join(prompt)
    if turns and not traj.steps:
        traj.unread.append(f"no command could be read from {turns} assistant turn(s)")
    return traj


# ----------------------------------------------------------------------------- JSONL formats
def _jsonl_kind(obj: Mapping[str, Any]) -> str | None:
    if "commands" in obj and ("group_id" in obj or "run_id" in obj):
        return "evotree"
    if obj.get("kind") in ("exec", "connect") and ("argv" in obj or "address" in obj):
        return "trace"
    kind = obj.get("type")
    if kind in ("assistant", "user", "summary", "system") and (
        "message" in obj or "sessionId" in obj or "uuid" in obj
    ):
        return "claude-code"
    if kind in (
        "response_item",
        "session_meta",
        "turn_context",
        "event_msg",
        "function_call",
        "function_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "message",
        "reasoning",
    ):
        return "codex"
    if "role" in obj and ("content" in obj or "tool_calls" in obj):
        return "chat"
    framed = kind not in ("error", "item.started", "item.updated", "item.completed")
    if kind in _EXEC_EVENTS and (
        framed or isinstance(obj.get("item"), Mapping) or "message" in obj
    ):
        return "codex-exec"
    return None


#: the event types of ``codex exec --json`` (``thread.resumed``/``item.created``: older spellings)
_EXEC_EVENTS = frozenset(
    {
        "thread.started",
        "thread.resumed",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.created",
        "item.updated",
        "item.completed",
        "error",
    }
)
#: item types of ``codex exec --json`` that run nothing (no step)
_EXEC_QUIET = frozenset({"agent_message", "assistant_message", "reasoning", "todo_list", "error"})


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
        step.output = text[starts[k][1] : end].strip("\n")


def rollout_trajectory(row: Mapping[str, Any], source: str | None = None) -> Trajectory:
    """A rollout row (a dict with the columns of :data:`evotree.harness.layout.SCHEMAS` ``rollouts``)."""
    return _rollout(row, source)


class _Session:
    """Accumulates one Claude Code / Codex / chat JSONL session."""

    def __init__(self, tid: str, fmt: str, source: str) -> None:
        self.traj = Trajectory(tid, fmt, source=source)
        self.pending: dict[str, Step] = {}
        self.messages: list[Any] = []

    def _prompt(self, text: str) -> None:
        if not self.traj.steps and text:
            self.traj.prompt = (self.traj.prompt + "\n" if self.traj.prompt else "") + text

    def _unread_tool(self, name: str) -> None:
        if _RUNS.search(name):
            self.traj.unread.append(f"tool call {name!r} is not a tool the audit reads")

    def claude(self, obj: Mapping[str, Any]) -> None:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str) and obj.get("type") == "user":
            self._prompt(content)
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, Mapping):
                continue
            kind = block.get("type")
            if kind == "text" and obj.get("type") == "user":
                self._prompt(_text_of(block.get("text")))
            if kind == "tool_use":
                name = str(block.get("name", ""))
                steps = _tool_step(name, _load_args(block.get("input")))
                if not steps:
                    self._unread_tool(name)
                for step in steps:
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
        if kind == "message" and item.get("role") in ("user", "system", "developer"):
            self._prompt(_text_of(item.get("content")))
        if kind == "function_call" or kind == "custom_tool_call":
            args = _load_args(item.get("arguments", item.get("input")))
            name = str(item.get("name", ""))
            steps = _tool_step(name, args)
            if not steps:
                self._unread_tool(name)
            for step in steps:
                self.traj.steps.append(step)
                self.pending[call_id] = step
        elif kind == "local_shell_call":
            action = item.get("action") or {}
            step = Step(
                _argv_text(action.get("command") if isinstance(action, Mapping) else ""),
                tool="local_shell",
            )
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

    def codex_exec(self, obj: Mapping[str, Any]) -> None:
        """One ``codex exec --json`` event: an item becomes a step when it starts (or completes,
        whichever is seen first); its completion fills in what it printed."""
        item = obj.get("item")
        if not isinstance(item, Mapping):
            return
        kind = str(item.get("type") or item.get("item_type") or "")
        key = "exec:" + str(item.get("id") or len(self.traj.steps))
        if kind == "command_execution":
            step = self.pending.get(key)
            command = _argv_text(item.get("command"))
            if step is None:
                step = Step(command, tool="command_execution")
                self.traj.steps.append(step)
                self.pending[key] = step
            elif command and command != step.command:  # the completed item is what ran
                step.command = command
            out = item.get("aggregated_output")
            done = obj.get("type") == "item.completed" or item.get("status") not in (
                None,
                "in_progress",
            )
            if isinstance(out, str) and (out or done):
                step.output = out
            return
        if key in self.pending:
            return
        if kind == "file_change":
            changes = item.get("changes") if isinstance(item.get("changes"), list) else []
            steps = [
                Step(
                    ("rm -f " if str(c.get("kind")) == "delete" else "tee ")
                    + shlex.quote(str(c.get("path"))),
                    tool="file_change",
                )
                for c in changes
                if isinstance(c, Mapping) and c.get("path")
            ]
            if not steps and changes:
                self.traj.unread.append("a file_change item names no path")
        elif kind == "mcp_tool_call":
            name = str(item.get("tool") or "")
            steps = _tool_step(name, _load_args(item.get("arguments")))
            if not steps:
                self._unread_tool(name)
        elif kind == "web_search":
            steps = [
                Step(
                    f"curl {shlex.quote('websearch:' + str(item.get('query', '')))}",
                    tool="web_search",
                )
            ]
        else:
            if kind not in _EXEC_QUIET:
                self._unread_tool(kind)
            return
        for step in steps:
            self.traj.steps.append(step)
        self.pending[key] = steps[0] if steps else Step("")


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
                traj.steps.append(
                    Step(shlex.join(["open()", path]), f"[opened by {by}]", tool="open")
                )
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
        elif kind == "codex-exec":
            session.codex_exec(obj)
        else:
            session.messages.append(obj)
    if session is not None:
        if session.messages:
            chat = _messages(session.messages, stem, source, "chat")
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


_TS_LINE = re.compile(r"^#\d{9,}$")
_ZSH_LINE = re.compile(r"^: \d+:\d+;")
#: a multi-line entry of plain history never spans more lines than this (a stray quote does not
#: swallow the rest of the file)
_MAX_ENTRY_LINES = 200


def _fish_entries(lines: list[str]) -> list[str]:
    """fish's history (``- cmd: CMD`` entries, ``when:`` / ``paths:`` lines under them; a
    newline inside a command written ``\\n``, a backslash ``\\\\``)."""
    entries = []
    for line in lines:
        if line.startswith("- cmd: "):
            raw = line[len("- cmd: ") :]
            entries.append(
                re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), raw)
            )
    return [e for e in entries if e.strip()]


def _history_entries(text: str) -> list[str]:
    """The commands of a shell history file, one per entry, multi-line entries joined:

    * bash with ``#<epoch>`` lines: a timestamp always starts an entry;
    * fish (``- cmd: CMD``): :func:`_fish_entries`;
    * zsh extended history (``: <epoch>:0;cmd``): a line that does not start an entry continues
      the one before (zsh ends each inner line with a backslash);
    * bash: a line continues the entry before while that entry is unfinished (an open quote,
      a here-document without its terminator, a trailing backslash, an open bracket or block).
    """
    lines = text.splitlines()
    if any(line.startswith("- cmd: ") for line in lines[:50]):
        return _fish_entries(lines)
    if any(_ZSH_LINE.match(line) for line in lines[:50]):
        entries: list[str] = []
        for line in lines:
            if _ZSH_LINE.match(line):
                entries.append(line[line.index(";") + 1 :])
            elif entries:
                prev = entries[-1]
                entries[-1] = (prev[:-1] if prev.endswith("\\") else prev) + "\n" + line
            elif line.strip():
                entries.append(line)
        return [e[:-1] if e.endswith("\\") else e for e in entries if e.strip()]
    groups: list[list[str]] = [
        []
    ]  # a timestamp line (bash HISTTIMEFORMAT) starts an entry for sure
    for line in lines:
        if _TS_LINE.match(line):
            groups.append([])
        else:
            groups[-1].append(line)

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
                entries.append("\n".join(group[k - 1 : j]))
                k = j
            else:
                entries.append(line)  # never finished: a line of its own after all
    return entries


#: a line of prose or markdown, not a command: a heading, a quote, a fence, or a capitalised
#: sentence of four words or more ending in punctuation
_PROSE = re.compile(r"^(?:#{1,6} |> |```|[A-Z][a-z']*(?: \S+){3,}[.?!:]$)")


def _shell_history(text: str, source: str, stem: str) -> Trajectory:
    """A shell history; text that reads mostly as prose or markdown is no shell history (a chat
    log, notes): unread, never a pass."""
    entries = _history_entries(text)
    traj = Trajectory(stem, "shell", [Step(e) for e in entries], source=source)
    prose = sum(bool(_PROSE.match(e.strip())) for e in entries)
    if entries and prose * 2 > len(entries):
        traj.unread.append(
            f"not a shell history: {prose} of {len(entries)} lines read as prose "
            "or markdown (a format the audit does not know)"
        )
    return traj


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
        traj = _shell_history(text, source, stem)
        traj.nbytes = len(raw)
        return [traj]
    if data is not None and fmt not in (
        "claude-code",
        "codex",
    ):  # one JSON document (not a 1-line session)
        if fmt == "swe-agent":
            traj = _swe_agent(data, stem, source)
        elif fmt == "mini-swe-agent":
            traj = _messages(data.get("messages") or [], stem, source, fmt)
        elif fmt == "chat":
            traj = _messages(data, stem, source, "chat")
        elif fmt == "evotree":  # one rollout row
            return [_rollout(data, source, len(raw))] if data.get("commands") else []
        else:
            raise UnreadableTrajectory(
                f"{p}: JSON, but not a known trajectory format (no 'trajectory', 'history' or 'messages')",
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


def iter_trajectories(paths: Iterable[str | os.PathLike[str]]) -> Iterator[Trajectory]:
    """Trajectories of several files, in order."""
    for path in paths:
        yield from read_trajectories(path)
