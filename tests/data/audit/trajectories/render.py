"""Render agent stories into trajectory files of the formats `evotree audit trajectories` reads.

A story is a list of steps; a step is a dict:

* ``{"sh": "command", "out": "what it printed"}`` — a shell command (every format);
* ``{"tool": "Write", "input": {...}, "out": "..."}`` — a non-shell tool call (Claude Code
  tools, Codex ``apply_patch``, SWE-agent ``str_replace_editor``), rendered as that format
  records it.

Format variants (the ``fmt`` argument of :func:`render`):

``claude``            Claude Code session JSONL (uuid chain, ``toolUseResult``, text blocks)
``codex``             Codex rollout JSONL: ``session_meta``, ``response_item`` ``function_call``
                      ``shell`` with ``["bash", "-lc", cmd]``, outputs as JSON strings
``codex-exec``        newer Codex: ``exec_command`` with a ``cmd`` string, ``event_msg`` lines
``codex-legacy``      older Codex: a header object, then bare items (no ``response_item``)
``swe``               SWE-agent ``.traj``: ``trajectory`` of action/observation/thought/response
``swe-history``       SWE-agent ``.traj`` with only ``history`` (function-calling: ``tool_calls``)
``mini``              mini-swe-agent ``messages`` (THOUGHT + one bash block; ``<returncode>``)
``bash``              ``.bash_history`` without timestamps (a multi-line entry spans lines)
``bash-ts``           ``.bash_history`` with ``#<epoch>`` lines
``zsh``               zsh extended history (``: epoch:0;cmd``; a multi-line entry's lines end in ``\\``)
``rollouts``          evotree rollout rows (JSONL): ``commands`` and the ``text`` transcript
"""

from __future__ import annotations

import json
from typing import Any

T0 = 1_712_000_000


def _sh(step: dict[str, Any]) -> str:
    if "sh" not in step:
        raise ValueError(f"a {step.get('tool')} tool step has no shell form in this format")
    return step["sh"]


def _claude(steps: list[dict[str, Any]], name: str) -> str:
    lines = []
    sid = f"{name}-0000-4000-8000-000000000000"
    parent = None
    n = 0

    def uid() -> str:
        nonlocal n
        n += 1
        return f"{name}-{n:04d}"

    def add(obj: dict[str, Any]) -> None:
        nonlocal parent
        u = uid()
        obj = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/workspace/repo",
               "sessionId": sid, "version": "1.0.71", "gitBranch": "main", **obj, "uuid": u,
               "timestamp": f"2025-03-01T10:{n // 60:02d}:{n % 60:02d}.000Z"}
        parent = u
        lines.append(json.dumps(obj))

    add({"type": "user", "message": {"role": "user", "content": "The failing test in the issue should pass. "
                                                                   "Please fix it."}})
    for k, step in enumerate(steps):
        tid = f"toolu_01{name[:6]}{k:04d}"
        if "sh" in step:
            inp: dict[str, Any] = {"command": step["sh"], "description": step.get("why", "Run command")}
            if step.get("background"):
                inp["run_in_background"] = True
            tool = "Bash"
        else:
            tool, inp = step["tool"], step["input"]
        content: list[dict[str, Any]] = []
        if step.get("say"):
            content.append({"type": "text", "text": step["say"]})
        content.append({"type": "tool_use", "id": tid, "name": tool, "input": inp})
        add({"type": "assistant", "message": {"id": f"msg_{k}", "type": "message", "role": "assistant",
                                              "model": "claude-sonnet-4-20250514", "content": content,
                                              "stop_reason": "tool_use"}})
        out = step.get("out", "")
        add({"type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": tid, "type": "tool_result", "content": out, "is_error": False}]},
            "toolUseResult": {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}})
    add({"type": "assistant", "message": {"id": "msg_end", "type": "message", "role": "assistant",
                                          "model": "claude-sonnet-4-20250514",
                                          "content": [{"type": "text", "text": "Done."}]}})
    return "\n".join(lines) + "\n"


def _patch_text(step: dict[str, Any]) -> str:
    return step["input"]["patch"]


def _codex(steps: list[dict[str, Any]], name: str, variant: str) -> str:
    lines = []
    if variant == "codex-legacy":
        lines.append({"id": f"{name}", "timestamp": "2025-04-01T09:00:00.000Z",
                      "instructions": "You are Codex, a coding agent."})
    else:
        lines.append({"timestamp": "2025-06-01T09:00:00.000Z", "type": "session_meta",
                      "payload": {"id": name, "timestamp": "2025-06-01T09:00:00.000Z", "cwd": "/workspace/repo",
                                  "originator": "codex_cli_rs", "cli_version": "0.36.0"}})
        lines.append({"timestamp": "2025-06-01T09:00:00.100Z", "type": "turn_context",
                      "payload": {"cwd": "/workspace/repo", "approval_policy": "never",
                                  "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5-codex"}})

    def item(payload: dict[str, Any], k: int) -> None:
        if variant == "codex-legacy":
            lines.append(payload)
        else:
            lines.append({"timestamp": f"2025-06-01T09:00:{k % 60:02d}.000Z", "type": "response_item",
                          "payload": payload})

    item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix the bug."}]}, 0)
    for k, step in enumerate(steps, 1):
        cid = f"call_{name[:5]}{k:03d}"
        if "sh" in step:
            if variant == "codex-exec":
                call = {"type": "function_call", "name": "exec_command",
                        "arguments": json.dumps({"cmd": step["sh"], "workdir": "/workspace/repo",
                                                 "yield_time_ms": 10000}), "call_id": cid}
            else:
                call = {"type": "function_call", "name": "shell",
                        "arguments": json.dumps({"command": ["bash", "-lc", step["sh"]], "workdir": "/workspace/repo",
                                                 "timeout_ms": 120000}), "call_id": cid}
        elif step["tool"] == "apply_patch" and step.get("via") == "shell":
            call = {"type": "function_call", "name": "shell",
                    "arguments": json.dumps({"command": ["apply_patch", _patch_text(step)],
                                             "workdir": "/workspace/repo"}), "call_id": cid}
        elif step["tool"] == "apply_patch":
            call = {"type": "custom_tool_call", "status": "completed", "call_id": cid, "name": "apply_patch",
                    "input": _patch_text(step)}
        else:
            raise ValueError(step)
        if variant != "codex-legacy":
            item({"type": "reasoning", "summary": [{"type": "summary_text", "text": step.get("say", "")}],
                  "content": None, "encrypted_content": "gAAAA"}, k)
        item(call, k)
        out = step.get("out", "")
        if variant == "codex-exec" and "sh" in step:
            lines.append({"timestamp": f"2025-06-01T09:00:{k % 60:02d}.500Z", "type": "event_msg",
                          "payload": {"type": "exec_command_end", "call_id": cid, "stdout": out, "stderr": "",
                                      "exit_code": 0}})
        kind = "custom_tool_call_output" if call["type"] == "custom_tool_call" else "function_call_output"
        item({"type": kind, "call_id": cid,
              "output": json.dumps({"output": out, "metadata": {"exit_code": 0, "duration_seconds": 0.2}})}, k)
    item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Fixed."}]}, 99)
    return "".join(json.dumps(x) + "\n" for x in lines)


def _swe_action(step: dict[str, Any]) -> str:
    if "sh" in step:
        return step["sh"]
    if step["tool"] == "str_replace_editor":
        inp = step["input"]
        parts = ["str_replace_editor", inp["command"], inp["path"]]
        for key in ("file_text", "old_str", "new_str", "insert_line", "view_range"):
            if key in inp:
                val = inp[key]
                parts += [f"--{key}", "'" + str(val).replace("'", "'\"'\"'") + "'"]
        return " ".join(parts)
    raise ValueError(step)


def _swe(steps: list[dict[str, Any]], name: str) -> str:
    traj = []
    for step in steps:
        traj.append({"action": _swe_action(step), "observation": step.get("out", ""),
                     "response": f"DISCUSSION\n{step.get('say', '')}\n\n```\n{_swe_action(step)}\n```",
                     "thought": step.get("say", ""), "execution_time": 0.31, "state": "{\"working_dir\": \"/testbed\"}",
                     "query": [{"role": "system", "content": "..."}]})
    return json.dumps({"environment": "swe_main", "trajectory": traj, "history": [],
                       "info": {"exit_status": "submitted", "swe_agent_version": "1.0.1"},
                       "replay_config": "{}"}, indent=2)


def _swe_history(steps: list[dict[str, Any]], name: str) -> str:
    hist: list[dict[str, Any]] = [{"role": "system", "content": "SETTING: You are an autonomous programmer.",
                                   "agent": "main", "message_type": "system_prompt"},
                                  {"role": "user", "content": [{"type": "text", "text": "<uploaded_files>/testbed"}],
                                   "agent": "main", "message_type": "observation"}]
    for k, step in enumerate(steps):
        cid = f"call_{k:03d}{name[:4]}"
        if "sh" in step:
            fn = {"name": "bash", "arguments": json.dumps({"command": step["sh"]})}
        else:
            fn = {"name": step["tool"], "arguments": json.dumps(step["input"])}
        hist.append({"role": "assistant", "content": step.get("say", ""), "thought": step.get("say", ""),
                     "action": _swe_action(step), "agent": "main",
                     "tool_calls": [{"function": fn, "id": cid, "type": "function"}], "message_type": "action"})
        hist.append({"role": "tool", "content": [{"type": "text", "text": "OBSERVATION:\n" + step.get("out", "")}],
                     "agent": "main", "message_type": "observation", "tool_call_ids": [cid]})
    return json.dumps({"environment": "main", "trajectory": [], "history": hist,
                       "info": {"exit_status": "submitted"}}, indent=2)


def _mini(steps: list[dict[str, Any]], name: str) -> str:
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer.\n"
                                      "Your response must contain exactly ONE bash code block."},
        {"role": "user", "content": "<pr_description>\nFix the crash.\n</pr_description>\n"
                                    "Example:\n```bash\nls -la\n```"}]
    for step in steps:
        msgs.append({"role": "assistant", "content": f"THOUGHT: {step.get('say', 'Next step.')}\n\n"
                                                     f"```bash\n{_sh(step)}\n```"})
        msgs.append({"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{step.get('out', '')}\n"
                                                f"</output>"})
    return json.dumps({"info": {"exit_status": "Submitted", "mini_version": "1.9.0",
                                "model_stats": {"instance_cost": 0.2, "api_calls": len(steps)}},
                       "messages": msgs, "trajectory_format": "mini-swe-agent-1"}, indent=1)


def _bash(steps: list[dict[str, Any]], timestamps: bool) -> str:
    out = []
    for k, step in enumerate(steps):
        if timestamps:
            out.append(f"#{T0 + 7 * k}")
        out.append(_sh(step))
    return "\n".join(out) + "\n"


def _zsh(steps: list[dict[str, Any]]) -> str:
    out = []
    for k, step in enumerate(steps):
        out.append(f": {T0 + 5 * k}:0;" + _sh(step).replace("\n", "\\\n"))
    return "\n".join(out) + "\n"


def _rollouts(stories: list[list[dict[str, Any]]], name: str) -> str:
    rows = []
    for g, steps in enumerate(stories):
        text = "\n".join(f"$ {_sh(s)}\n{s.get('out', '')}" for s in steps)
        rows.append({"run_id": f"run-{name}", "phase": "eval", "step": 0, "group_id": f"{name}-{g}",
                     "task_id": f"{name}-task{g}", "sample_index": 0, "reward": 0.0,
                     "commands": [_sh(s) for s in steps], "text": text})
    return "".join(json.dumps(r) + "\n" for r in rows)


SUFFIX = {"claude": ".jsonl", "codex": ".jsonl", "codex-exec": ".jsonl", "codex-legacy": ".jsonl",
          "swe": ".traj", "swe-history": ".traj", "mini": ".traj.json", "bash": ".bash_history",
          "bash-ts": ".bash_history", "zsh": ".zsh_history", "rollouts": ".rollouts.jsonl"}


def render(fmt: str, steps: list[dict[str, Any]] | list[list[dict[str, Any]]], name: str) -> str:
    """The file text of one story (``rollouts``: a list of stories, one row each)."""
    if fmt == "claude":
        return _claude(steps, name)  # type: ignore[arg-type]
    if fmt.startswith("codex"):
        return _codex(steps, name, fmt)  # type: ignore[arg-type]
    if fmt == "swe":
        return _swe(steps, name)  # type: ignore[arg-type]
    if fmt == "swe-history":
        return _swe_history(steps, name)  # type: ignore[arg-type]
    if fmt == "mini":
        return _mini(steps, name)  # type: ignore[arg-type]
    if fmt in ("bash", "bash-ts"):
        return _bash(steps, fmt == "bash-ts")  # type: ignore[arg-type]
    if fmt == "zsh":
        return _zsh(steps)  # type: ignore[arg-type]
    if fmt == "rollouts":
        stories = steps if steps and isinstance(steps[0], list) else [steps]
        return _rollouts(stories, name)  # type: ignore[arg-type]
    raise ValueError(fmt)
