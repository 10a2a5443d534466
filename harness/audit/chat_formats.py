"""Readers of JSON agent documents: SWE-agent ``.traj`` files and chat message lists.

SWE-agent's ``trajectory`` entries (an ``action`` and its ``observation``; the classic editor's
``open`` / ``create`` / ``edit`` as editor calls), and chat messages (mini-swe-agent, OpenAI-style
``tool_calls``, SWE-agent ``history``): the commands of each assistant turn and, as their output,
the user or tool message that answers them. The messages of a JSONL chat session are read here too.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.tool_calls import (
    RUNS,
    argv_text,
    load_args,
    text_of,
    tool_step,
    written_to,
)

__all__ = ["messages_trajectory", "swe_agent_trajectory"]

#: a fenced shell block: ```bash, ```sh, ... and mini-swe-agent 2's ```mswea_bash_command (any
#: info string naming a shell or a command); the body ends at the closing fence, which starts a
#: line, as in the agents' own parsers (mini-swe-agent's closing fence follows a newline at
#: once): a command holding three backticks mid-line (a sed range from a python fence to its
#: end) or on an indented line (a heredoc's) is read on, not cut short. Reading on past a fence
#: a CommonMark reader would close (indented up to three spaces) reads more, never less. An
#: opening line may end in CRLF (mini-swe-agent's ``\s*`` takes the ``\r``).
_FENCE = re.compile(
    r"```(bash|sh|shell|console|zsh|[\w-]*(?:bash|shell|command)[\w-]*)?[ \t\r]*\n(.*?)(?<=\n)```",
    re.S | re.I,
)
#: an opening fence and its info string (to tell unread blocks from code shown as text)
_FENCE_INFO = re.compile(r"```([\w.+-]*)[ \t\r]*\n")
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


def swe_agent_trajectory(data: Mapping[str, Any], tid: str, source: str) -> Trajectory:
    """A SWE-agent ``.traj`` document: its ``trajectory`` entries, else its ``history``."""
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
                    None if entry.get("observation") is None else text_of(entry.get("observation")),
                )
            )
    if not traj.steps:  # only a history of messages
        hist = messages_trajectory(data.get("history") or [], tid, source, "swe-agent")
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
        parts.append(text_of(msg.get("content")))
    return "\n".join(parts) or None


def _fenced(info: str, body: str) -> str:
    """A fenced block as the command it runs: a block whose kind names Python
    (```` ```xyz_python_command ````) is Python fed to the interpreter, anything else shell."""
    if "python" in info.lower():
        return written_to("python3 -", body)
    return body


def _unknown_fences(text: str) -> list[str]:
    """Info strings of fenced blocks in ``text`` that are neither shell nor code shown as text."""
    return [
        info
        for info in _FENCE_INFO.findall(text)
        if info and info.lower() not in _NOT_COMMANDS and not _FENCE.match("```" + info + "\n```")
    ]


def messages_trajectory(messages: Iterable[Any], tid: str, source: str, fmt: str) -> Trajectory:
    """Chat messages as steps. An assistant message's commands are, in order of authority: the
    ``extra.actions`` mini-swe-agent 2 records (what it actually ran), ``tool_calls``, a SWE-agent
    ``action``, fenced shell blocks in its text. The output is the next user / tool message
    (``extra.raw_output`` when recorded). System and user messages before the first command are
    the task's prompt. Calls of tools that run something but are unknown here, and assistant
    turns with a fenced block of an unknown kind, are recorded as unread (``audit.unreadable``)."""
    reader = _ChatReader(Trajectory(tid, fmt, source=source))
    for msg in messages:
        if not isinstance(msg, Mapping):
            continue
        role = msg.get("role")
        extra = msg.get("extra")
        if not isinstance(extra, dict):
            extra = {}
        if role == "assistant":
            reader.assistant(msg, extra)
        elif role in ("user", "tool", "function"):
            reader.reply(msg, role, extra)
        elif role == "system" and not reader.traj.steps:
            reader.prompt.append(text_of(msg.get("content")))
    traj = reader.traj
    if reader.prompt:
        traj.prompt = "\n".join(reader.prompt)
    if reader.turns and not traj.steps:
        traj.unread.append(f"no command could be read from {reader.turns} assistant turn(s)")
    return traj


class _ChatReader:
    """The state of reading one list of chat messages: the steps of the last assistant turn
    (waiting for their output), calls waiting for the tool message that answers them by id, the
    open file of SWE-agent's classic editor, the prompt so far and the assistant turns counted."""

    def __init__(self, traj: Trajectory) -> None:
        self.traj = traj
        self.pending: dict[str, Step] = {}
        self.last: list[Step] = []
        self.state: dict[str, str] = {}
        self.prompt: list[str] = []
        self.turns = 0

    def _add(self, step: Step) -> None:
        """A step of the current assistant turn."""
        self.traj.steps.append(step)
        self.last.append(step)

    def assistant(self, msg: Mapping[str, Any], extra: dict[str, Any]) -> None:
        """An assistant turn: its recorded actions, else its tool calls and then its SWE-agent
        action or (without tool calls) its fenced blocks."""
        self.turns += 1
        self.last = []
        content = text_of(msg.get("content"))
        actions = extra.get("actions") if isinstance(extra.get("actions"), list) else None
        if actions:
            self._actions(actions)
            return
        self._tool_calls(msg.get("tool_calls") or [])
        if isinstance(msg.get("action"), str) and msg.get("action") and not msg.get("tool_calls"):
            self._add(Step(_swe_classic(msg["action"], self.state)))  # SWE-agent history
        elif not msg.get("tool_calls"):
            self._fences(content)

    def _actions(self, actions: list[Any]) -> None:
        """mini-swe-agent 2's ``extra.actions``: what the turn actually ran."""
        for action in actions:
            command = action.get("command") if isinstance(action, Mapping) else action
            if not isinstance(command, (str, list)) or not command:
                self.traj.unread.append(f"an action of assistant turn {self.turns} has no command")
                continue
            step = Step(argv_text(command))
            self.traj.steps.append(step)
            if isinstance(action, Mapping) and action.get("tool_call_id"):
                self.pending[str(action["tool_call_id"])] = step
            self.last.append(step)

    def _tool_calls(self, calls: list[Any]) -> None:
        """OpenAI-style ``tool_calls``, each as its shell equivalent (an unknown one that runs
        something is unread)."""
        for call in calls:
            fn = call.get("function", call) if isinstance(call, Mapping) else {}
            name = str(fn.get("name", ""))
            steps = tool_step(name, load_args(fn.get("arguments")))
            if not steps and RUNS.search(name):
                self.traj.unread.append(
                    f"tool call {name!r} (assistant turn {self.turns}) "
                    "is not a tool the audit reads"
                )
            for step in steps:
                self.traj.steps.append(step)
                if isinstance(call, Mapping) and call.get("id"):
                    self.pending[str(call["id"])] = step
            self.last += steps

    def _fences(self, content: str) -> None:
        """Fenced shell blocks of the turn's text; a block of an unknown kind is unread."""
        blocks = _FENCE.findall(content)
        for info, block in blocks:
            self._add(Step(_fenced(info, block.strip())))
        if not blocks:
            unknown = _unknown_fences(content)
            if unknown:
                self.traj.unread.append(
                    f"assistant turn {self.turns} has a ```{unknown[0]} block the audit "
                    "cannot read as a command"
                )

    def reply(self, msg: Mapping[str, Any], role: Any, extra: dict[str, Any]) -> None:
        """A user / tool / function message: the output of the call it answers (by id) or of
        the last turn's last step; before any step, a user message is prompt."""
        raw = extra.get("raw_output")
        text = raw if isinstance(raw, str) else text_of(msg.get("content"))
        target = (
            self.pending.pop(str(msg.get("tool_call_id")), None)
            if msg.get("tool_call_id")
            else None
        )
        if not self.traj.steps and role == "user":
            self.prompt.append(text)
        if target is not None:
            target.output = text
        elif self.last and role != "user" or (self.last and self.last[-1].output is None):
            self.last[-1].output = text
            self.last = []
