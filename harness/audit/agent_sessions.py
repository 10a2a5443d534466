"""Readers of JSONL agent sessions: Claude Code, Codex CLI and ``codex exec --json`` events.

Which format a JSONL line belongs to (:func:`jsonl_kind`, also used to detect a file's format),
and :class:`AgentSession`, which reads a session line by line: each tool call becomes a step
(its shell equivalent, :mod:`evotree.harness.audit.tool_calls`) and the result that answers it
by id becomes its output. Chat-message lines are collected for
:func:`evotree.harness.audit.chat_formats.messages_trajectory`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping
from typing import Any

from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.tool_calls import RUNS, argv_text, load_args, text_of, tool_step

__all__ = ["AgentSession", "jsonl_kind"]


def jsonl_kind(obj: Mapping[str, Any]) -> str | None:
    """The trajectory format one JSON object (a JSONL line) belongs to; None: no known one."""
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


class AgentSession:
    """Accumulates one Claude Code / Codex / chat JSONL session."""

    def __init__(self, tid: str, fmt: str, source: str) -> None:
        self.traj = Trajectory(tid, fmt, source=source)
        self.pending: dict[str, Step] = {}
        self.messages: list[Any] = []

    def _prompt(self, text: str) -> None:
        if not self.traj.steps and text:
            self.traj.prompt = (self.traj.prompt + "\n" if self.traj.prompt else "") + text

    def _unread_tool(self, name: str) -> None:
        if RUNS.search(name):
            self.traj.unread.append(f"tool call {name!r} is not a tool the audit reads")

    def claude(self, obj: Mapping[str, Any]) -> None:
        """One Claude Code line: ``tool_use`` blocks as steps, ``tool_result`` as outputs."""
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
                self._prompt(text_of(block.get("text")))
            if kind == "tool_use":
                name = str(block.get("name", ""))
                steps = tool_step(name, load_args(block.get("input")))
                if not steps:
                    self._unread_tool(name)
                for step in steps:
                    self.traj.steps.append(step)
                    self.pending[str(block.get("id"))] = step
            elif kind == "tool_result":
                step = self.pending.pop(str(block.get("tool_use_id")), None)
                if step is not None:
                    step.output = text_of(block.get("content"))

    def codex(self, obj: Mapping[str, Any]) -> None:
        """One Codex CLI line: function / shell calls as steps, their outputs by call id."""
        item = obj.get("payload") if obj.get("type") == "response_item" else obj
        if not isinstance(item, Mapping):
            return
        kind = item.get("type")
        call_id = str(item.get("call_id") or item.get("id") or "")
        if kind == "message" and item.get("role") in ("user", "system", "developer"):
            self._prompt(text_of(item.get("content")))
        if kind == "function_call" or kind == "custom_tool_call":
            args = load_args(item.get("arguments", item.get("input")))
            name = str(item.get("name", ""))
            steps = tool_step(name, args)
            if not steps:
                self._unread_tool(name)
            for step in steps:
                self.traj.steps.append(step)
                self.pending[call_id] = step
        elif kind == "local_shell_call":
            action = item.get("action") or {}
            step = Step(
                argv_text(action.get("command") if isinstance(action, Mapping) else ""),
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
                step.output = text_of(out)

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
            command = argv_text(item.get("command"))
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
            steps = tool_step(name, load_args(item.get("arguments")))
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
