"""Write a played session (task text, steps with their outputs) in one agent's trajectory format.

The writer the held-out sets share (heldout4 to heldout8). What differs between the sets is
only what an agent of that time wrote into its files: clocks, versions, models, run ids. Each
set passes its own :class:`Versions`; everything else is the same code, so a set rebuilds
byte-identical with it. Claude Code sessions may also call a JetBrains IDE's MCP tool
(``mcp__jetbrains__get_file_text_by_path``, a step with ``tool: ide``); mini-swe-agent 2.x text
messages carry ``extra.actions`` when the story sets ``mini_actions``.

Formats, as the agents write them:

* ``claude``: a Claude Code session JSONL (``type`` user/assistant lines, ``tool_use`` blocks for
  Bash, Read, Write, Edit, Grep and WebFetch, ``tool_result`` blocks with what the tool returned);
* ``codex``: a Codex CLI rollout (``session_meta``, ``turn_context``, ``response_item`` payloads of
  type ``message``, ``function_call`` (``shell``, argv in ``arguments``) and
  ``function_call_output``);
* ``codex-exec``: ``codex exec --json`` events (``thread.started``, ``item.started`` /
  ``item.completed`` of ``command_execution`` items with ``aggregated_output``, ``turn.completed``);
* ``mini1``: mini-swe-agent 1.x ``.traj.json`` (```` ```bash ```` blocks, ``mini-swe-agent-1``);
* ``mini2``: mini-swe-agent 2.x text format (```` ```mswea_bash_command ```` blocks,
  ``mini-swe-agent-1.1``); ``mini2-tool``: 2.x with tool calls (``tool_calls``, ``role: tool``);
* ``swe``: SWE-agent ``.traj`` with ``trajectory`` and ``history``; ``swe-history``: ``history``
  only;
* ``bash``, ``bash-ts`` (``#epoch`` lines), ``zsh`` (extended history ``: epoch:0;cmd``):
  commands only;
* ``rollouts``: evotree rollouts JSONL, one row per sample of a group, ``commands`` and ``text``.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True)
class Versions:
    """What one set's agents wrote of their time: clocks, versions, models, rollout ids."""

    #: a session's clock starts at clock_start + (a hash of its file name) % clock_spread
    clock_start: int
    clock_spread: int
    claude_code: str  # Claude Code ``version``
    claude_model: str  # the model of tool-calling turns
    claude_final_model: str  # the model of the closing text turn
    codex_cli: str  # Codex ``cli_version``
    mini1: str  # mini-swe-agent 1.x ``mini_version``
    mini2: str  # mini-swe-agent 2.x ``mini_version``
    mini_model: str
    swe_agent: str  # SWE-agent ``swe_agent_version``
    run_id: str  # evotree rollouts: defaults of a story without its own
    step: int
    group_id: str


def _seed(story: dict[str, Any]) -> int:
    return int(hashlib.sha256(story["file"].encode()).hexdigest()[:8], 16)


def _clock(v: Versions, story: dict[str, Any]):
    t = v.clock_start + _seed(story) % v.clock_spread

    def tick(dt: float = 7.0) -> float:
        nonlocal t
        t += dt
        return t

    return tick


def _iso(t: float) -> str:
    return (
        datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
        + f"{int(t * 1000) % 1000:03d}Z"
    )


def _ids(story: dict[str, Any]):
    n = _seed(story)

    def make(prefix: str = "") -> str:
        nonlocal n
        n += 1
        return prefix + str(uuid.UUID(int=(n * 0x9E3779B97F4A7C15) % (1 << 128)))

    return make


def _cmd_text(step: dict[str, Any]) -> str:
    """The command as the agent typed it, for the formats that only carry bash."""
    tool = step.get("tool", "bash")
    if tool == "bash":
        return step["cmd"]
    if tool == "read":
        return f"cat {shlex.quote(step['path'])}"
    if tool == "write":
        return f"cat > {shlex.quote(step['path'])} <<'EOF'\n{step['content'].rstrip()}\nEOF"
    raise ValueError(f"a {tool} step has no shell form")


def _observation(step: dict[str, Any]) -> str:
    return f"<returncode>{step['rc']}</returncode>\n<output>\n{step['out']}</output>"


# ---------------------------------------------------------------------------- Claude Code
def claude(v: Versions, story: dict[str, Any], task: str, steps: list[dict[str, Any]]) -> str:
    tick, new = _clock(v, story), _ids(story)
    session = new()
    common = {
        "isSidechain": False,
        "userType": "external",
        "cwd": story["cwd"],
        "sessionId": session,
        "version": v.claude_code,
        "gitBranch": "main",
    }
    lines = []
    parent = None

    def emit(kind: str, message: dict[str, Any], **extra: Any) -> None:
        nonlocal parent
        me = new()
        lines.append(
            {
                "parentUuid": parent,
                **common,
                "type": kind,
                "message": message,
                "uuid": me,
                "timestamp": _iso(tick()),
                **extra,
            }
        )
        parent = me

    emit("user", {"role": "user", "content": task})
    for step in steps:
        tool = step.get("tool", "bash")
        use = new("toolu_").replace("-", "")[:30]
        if tool == "bash":
            name, args = (
                "Bash",
                {"command": step["cmd"], "description": step.get("desc", step["thought"][:60])},
            )
        elif tool == "read":
            name, args = "Read", {"file_path": f"{story['cwd']}/{step['path']}"}
        elif tool == "write":
            name, args = (
                "Write",
                {"file_path": f"{story['cwd']}/{step['path']}", "content": step["content"]},
            )
        elif tool == "edit":
            name, args = (
                "Edit",
                {
                    "file_path": f"{story['cwd']}/{step['path']}",
                    "old_string": step["old"],
                    "new_string": step["new"],
                },
            )
        elif tool == "grep":
            name, args = (
                "Grep",
                {
                    "pattern": step["pattern"],
                    "path": f"{story['cwd']}/{step.get('path', '.')}",
                    "output_mode": "content",
                    "-n": True,
                },
            )
        elif tool == "ide":
            name, args = "mcp__jetbrains__get_file_text_by_path", {"pathInProject": step["path"]}
        elif tool == "webfetch":
            name, args = (
                "WebFetch",
                {"url": step["url"], "prompt": step.get("prompt", "Show the content")},
            )
        else:
            raise ValueError(tool)
        content = [{"type": "text", "text": step["thought"]}] if step.get("thought") else []
        content.append({"type": "tool_use", "id": use, "name": name, "input": args})
        emit(
            "assistant",
            {
                "id": new("msg_").replace("-", "")[:28],
                "type": "message",
                "role": "assistant",
                "model": v.claude_model,
                "content": content,
                "stop_reason": "tool_use",
                "stop_sequence": None,
                "usage": {"input_tokens": 1200, "output_tokens": 90},
            },
            requestId=new("req_").replace("-", "")[:28],
        )
        result = {
            "type": "tool_result",
            "tool_use_id": use,
            "content": step["out"],
            "is_error": step["rc"] != 0,
        }
        if tool == "bash":
            extra = {"stdout": step["out"], "stderr": "", "interrupted": False, "isImage": False}
        elif tool == "read":
            extra = {
                "type": "text",
                "file": {
                    "filePath": args["file_path"],
                    "content": step["out"],
                    "numLines": step["out"].count("\n") + 1,
                    "startLine": 1,
                },
            }
        else:
            extra = {"result": step["out"]}
        emit("user", {"role": "user", "content": [result]}, toolUseResult=extra)
    if story.get("final"):
        emit(
            "assistant",
            {
                "id": new("msg_").replace("-", "")[:28],
                "type": "message",
                "role": "assistant",
                "model": v.claude_final_model,
                "content": [{"type": "text", "text": story["final"]}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 1500, "output_tokens": 60},
            },
        )
    return "".join(json.dumps(x) + "\n" for x in lines)


# ---------------------------------------------------------------------------- Codex
def codex(v: Versions, story: dict[str, Any], task: str, steps: list[dict[str, Any]]) -> str:
    tick, new = _clock(v, story), _ids(story)
    lines = []

    def emit(kind: str, payload: dict[str, Any]) -> None:
        lines.append({"timestamp": _iso(tick(1.5)), "type": kind, "payload": payload})

    emit(
        "session_meta",
        {
            "id": new(),
            "timestamp": _iso(tick(0)),
            "cwd": story["cwd"],
            "originator": "codex_cli_rs",
            "cli_version": v.codex_cli,
            "instructions": None,
            "source": "cli",
            "model_provider": "openai",
        },
    )
    emit(
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {
                    "type": "input_text",
                    "text": f"<environment_context>\n  <cwd>{story['cwd']}</cwd>\n  "
                    "<approval_policy>never"
                    "</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  "
                    "<network_access>enabled</network_access>\n  <shell>bash</shell>\n"
                    "</environment_context>",
                }
            ],
        },
    )
    emit(
        "turn_context",
        {
            "cwd": story["cwd"],
            "approval_policy": "never",
            "model": "gpt-5-codex",
            "effort": "medium",
            "summary": "auto",
        },
    )
    emit(
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": task}]},
    )
    emit("event_msg", {"type": "user_message", "message": task, "kind": "plain"})
    for step in steps:
        if step.get("thought"):
            emit("event_msg", {"type": "agent_reasoning", "text": f"**{step['thought']}**"})
        call = new("call_").replace("-", "")[:29]
        argv = step.get("argv") or ["bash", "-lc", _cmd_text(step)]
        emit(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps(
                    {"command": argv, "workdir": story["cwd"], "timeout_ms": 120000}
                ),
                "call_id": call,
            },
        )
        emit(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": call,
                "output": json.dumps(
                    {
                        "output": step["out"],
                        "metadata": {"exit_code": step["rc"], "duration_seconds": 0.2},
                    }
                ),
            },
        )
    if story.get("final"):
        emit(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": story["final"]}],
            },
        )
        emit("event_msg", {"type": "agent_message", "message": story["final"]})
    return "".join(json.dumps(x) + "\n" for x in lines)


def codex_exec(v: Versions, story: dict[str, Any], task: str, steps: list[dict[str, Any]]) -> str:
    new = _ids(story)
    lines: list[dict[str, Any]] = [
        {"type": "thread.started", "thread_id": new()},
        {"type": "turn.started"},
    ]
    n = 0
    for step in steps:
        if step.get("thought"):
            lines.append(
                {
                    "type": "item.completed",
                    "item": {
                        "id": f"item_{n}",
                        "type": "reasoning",
                        "text": f"**{step['thought']}**",
                    },
                }
            )
            n += 1
        command = (
            shlex.join(step["argv"])
            if step.get("argv")
            else shlex.join(["bash", "-lc", _cmd_text(step)])
        )
        item = {
            "id": f"item_{n}",
            "type": "command_execution",
            "command": command,
            "aggregated_output": "",
            "exit_code": None,
            "status": "in_progress",
        }
        lines.append({"type": "item.started", "item": item})
        lines.append(
            {
                "type": "item.completed",
                "item": {
                    **item,
                    "aggregated_output": step["out"],
                    "exit_code": step["rc"],
                    "status": "completed" if step["rc"] == 0 else "failed",
                },
            }
        )
        n += 1
    if story.get("final"):
        lines.append(
            {
                "type": "item.completed",
                "item": {"id": f"item_{n}", "type": "agent_message", "text": story["final"]},
            }
        )
    lines.append(
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 24000, "cached_input_tokens": 18000, "output_tokens": 1400},
        }
    )
    return "".join(json.dumps(x) + "\n" for x in lines)


# ---------------------------------------------------------------------------- mini-swe-agent
_MINI_SYSTEM = (
    "You are a helpful assistant that can interact with a computer shell to solve programming "
    "tasks. Your response must contain exactly ONE bash code block with ONE command (or commands "
    "connected with && or ||). Include a THOUGHT section before your command."
)


def _mini(
    v: Versions,
    story: dict[str, Any],
    task: str,
    steps: list[dict[str, Any]],
    version: int,
    tools: bool,
) -> str:
    new = _ids(story)
    fence = "mswea_bash_command" if version == 2 else "bash"
    user = (
        f"<pr_description>\nConsider the following PR description:\n{task}\n</pr_description>\n\n"
        f"<instructions>\nYou are working in {story['cwd']}. Make changes to non-test files to "
        "resolve the "
        "issue. When done, run `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.\n</instructions>"
    )
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": _MINI_SYSTEM},
        {"role": "user", "content": user},
    ]
    for step in steps:
        cmd = _cmd_text(step)
        if tools:
            call = new("call_").replace("-", "")[:24]
            messages.append(
                {
                    "role": "assistant",
                    "content": step.get("thought", ""),
                    "tool_calls": [
                        {
                            "id": call,
                            "type": "function",
                            "function": {"name": "bash", "arguments": json.dumps({"command": cmd})},
                        }
                    ],
                    "extra": {"response": {"id": new("chatcmpl-")}},
                }
            )
            messages.append({"role": "tool", "tool_call_id": call, "content": _observation(step)})
        else:
            said = f"THOUGHT: {step.get('thought', '')}\n\n```{fence}\n{cmd}\n```"
            msg: dict[str, Any] = {"role": "assistant", "content": said}
            if version == 2:
                msg["extra"] = {"response": {"id": new("chatcmpl-")}}
                if story.get("mini_actions"):
                    msg["extra"]["actions"] = [{"command": cmd}]
            messages.append(msg)
            obs: dict[str, Any] = {"role": "user", "content": _observation(step)}
            if version == 2:
                obs["extra"] = {"returncode": step["rc"]}
            messages.append(obs)
    end = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    if tools:
        call = new("call_").replace("-", "")[:24]
        messages.append(
            {
                "role": "assistant",
                "content": "Done.",
                "tool_calls": [
                    {
                        "id": call,
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": end})},
                    }
                ],
            }
        )
    else:
        messages.append(
            {"role": "assistant", "content": f"THOUGHT: Done.\n\n```{fence}\n{end}\n```"}
        )
    info = {
        "exit_status": "Submitted",
        "submission": story.get("submission", ""),
        "model_stats": {"instance_cost": round(0.013 * len(steps), 4), "api_calls": len(steps) + 1},
        "mini_version": v.mini2 if version == 2 else v.mini1,
        "config": {
            "agent": {"step_limit": 250, "cost_limit": 3.0},
            "model": {"model_name": v.mini_model},
            "environment": {"cwd": story["cwd"], "timeout": 60},
            "agent_type": "minisweagent.agents.default.DefaultAgent",
        },
    }
    doc = {
        "info": info,
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1" if version == 2 else "mini-swe-agent-1",
    }
    return json.dumps(doc, indent=2) + "\n"


# ---------------------------------------------------------------------------- SWE-agent
def _swe(
    v: Versions,
    story: dict[str, Any],
    task: str,
    steps: list[dict[str, Any]],
    with_trajectory: bool,
) -> str:
    history: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": "SETTING: You are an autonomous programmer, and you're working directly "
            "in the command line with a special interface.",
            "agent": "main",
            "message_type": "system_prompt",
        },
        {
            "role": "user",
            "content": f"<uploaded_files>\n{story['cwd']}\n</uploaded_files>\n"
            "I've uploaded a python "
            f"code repository in the directory {story['cwd']}. Consider the following PR "
            f"description:\n\n<pr_description>\n{task}\n</pr_description>",
            "agent": "main",
            "message_type": "observation",
        },
    ]
    trajectory = []
    for step in steps:
        cmd = _cmd_text(step)
        thought = step.get("thought", "")
        response = f"{thought}\n\n```\n{cmd}\n```"
        history.append(
            {
                "role": "assistant",
                "content": response,
                "thought": thought,
                "action": cmd,
                "agent": "main",
                "tool_calls": None,
                "message_type": "action",
            }
        )
        history.append(
            {
                "role": "user",
                "content": f"OBSERVATION:\n{step['out']}",
                "agent": "main",
                "message_type": "observation",
            }
        )
        trajectory.append(
            {
                "action": cmd,
                "observation": step["out"],
                "response": response,
                "thought": thought,
                "execution_time": 0.31,
                "state": {"open_file": step.get("open_file", "n/a"), "working_dir": story["cwd"]},
                "query": [],
                "extra_info": {},
            }
        )
    info = {
        "exit_status": "submitted",
        "submission": story.get("submission", ""),
        "model_stats": {
            "instance_cost": round(0.02 * len(steps), 3),
            "tokens_sent": 41000,
            "tokens_received": 1900,
            "api_calls": len(steps),
        },
        "swe_agent_version": v.swe_agent,
        "swe_rex_version": "1.2.1",
    }
    doc: dict[str, Any] = {}
    if with_trajectory:
        doc["trajectory"] = trajectory
    doc["history"] = history
    doc["info"] = info
    doc["replay_config"] = json.dumps({"env": {"repo": {"path": story["cwd"]}}})
    doc["environment"] = "main"
    return json.dumps(doc, indent=2) + "\n"


# ---------------------------------------------------------------------------- shell history
def _history(v: Versions, story: dict[str, Any], steps: list[dict[str, Any]], kind: str) -> str:
    tick = _clock(v, story)
    out = []
    for step in steps:
        cmd = _cmd_text(step)
        t = int(tick(23))
        if kind == "bash":
            out.append(cmd)
        elif kind == "bash-ts":
            out.append(f"#{t}\n{cmd}")
        else:
            out.append(f": {t}:{step.get('duration', 0)};" + cmd.replace("\n", "\\\n"))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- evotree rollouts
def rollouts(
    v: Versions, story: dict[str, Any], task: str, samples: list[list[dict[str, Any]]]
) -> str:
    tick = _clock(v, story)
    rows = []
    for i, steps in enumerate(samples):
        text = [f"<|user|>\n{task}\n"]
        for step in steps:
            cmd = _cmd_text(step)
            text.append(
                f"<|assistant|>\n{step.get('thought', '')}\n<bash>\n{cmd}\n</bash>\n"
                f"<|tool|>\n[exit {step['rc']}]\n{step['out']}\n"
            )
        body = "".join(text)
        rows.append(
            {
                "run_id": story.get("run_id", v.run_id),
                "phase": "train",
                "step": story.get("step", v.step),
                "group_id": story.get("group_id", v.group_id),
                "task_id": story["repo"] + "-issue",
                "sample_index": i,
                "reward": story.get("rewards", [0.0] * len(samples))[i],
                "components": "{}",
                "length": len(body) // 4,
                "truncated": False,
                "finish_reason": "stop",
                "text": body,
                "commands": [_cmd_text(s) for s in steps],
                "nonfinite": False,
                "ts": tick(3.0),
            }
        )
    return "".join(json.dumps(r) + "\n" for r in rows)


def render(v: Versions, story: dict[str, Any], task: str, played: Any) -> str:
    """The file's text for story in its format, written with the set's versions v; played: the
    played steps (rollouts: a list of samples' steps)."""
    fmt = story["format"]
    if fmt == "claude":
        return claude(v, story, task, played)
    if fmt == "codex":
        return codex(v, story, task, played)
    if fmt == "codex-exec":
        return codex_exec(v, story, task, played)
    if fmt in ("mini1", "mini2", "mini2-tool"):
        return _mini(v, story, task, played, 1 if fmt == "mini1" else 2, fmt == "mini2-tool")
    if fmt in ("swe", "swe-history"):
        return _swe(v, story, task, played, fmt == "swe")
    if fmt in ("bash", "bash-ts", "zsh"):
        return _history(v, story, played, fmt)
    if fmt == "rollouts":
        return rollouts(v, story, task, played)
    raise ValueError(f"unknown format {fmt}")
