"""Tool calls of agent logs as the shell commands they amount to.

Every agent format names its tools differently (Claude Code's ``Read``, Codex's ``exec_command``,
SWE-agent's ``str_replace_editor``, ...); the audit judges shell text, so each call becomes the
shell command with the same effect: a read is ``cat PATH``, a write ``tee PATH`` fed the content
by a quoted here-document, a fetch ``curl URL``. Shared by the readers of every format family.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from typing import Any

from evotree.harness.audit.steps import Step

__all__ = ["RUNS", "argv_text", "load_args", "text_of", "tool_step", "written", "written_to"]

#: tool names that run something: a call of such a tool the readers do not know is unread
RUNS = re.compile(r"bash|shell|exec|run|command|terminal|git|python|script|sql|eval", re.I)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)


def text_of(content: Any) -> str:
    """Text of a message content: a string, or a list of blocks with ``text``/``content``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            text_of(c.get("text", c.get("content")) if isinstance(c, Mapping) else c)
            for c in content
        )
    if isinstance(content, Mapping):
        return text_of(content.get("text", content.get("content", "")))
    return str(content)


def argv_text(command: Any) -> str:
    """A command given as an argv list (joined with :func:`shlex.join`) or as text."""
    if isinstance(command, list):
        return shlex.join(str(c) for c in command)
    return str(command or "")


#: tools whose argument is a shell command line
_SHELL_TOOLS = (
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
)


def _edit_steps(name: str, args: Mapping[str, Any]) -> list[Step]:
    """An edit tool's call (one edit or a list of them) as str_replace_editor steps."""
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
    return steps or [Step(f"tee {shlex.quote(path)}", tool=name)]


def tool_step(name: str, args: Mapping[str, Any]) -> list[Step]:
    """A tool call as shell-equivalent steps (module doc)."""
    low = name.lower()
    q = shlex.quote
    if low in _SHELL_TOOLS:
        command = args.get("command", args.get("cmd", args.get("script", "")))
        return [Step(argv_text(command), tool=name)]
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
            return [Step(written(path, content), tool=name)]
        return [Step(f"tee {q(path)}", tool=name)]
    if low in ("edit", "multiedit", "notebookedit", "edit_file", "replace"):
        return _edit_steps(name, args)
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
    parts = low.split("__")
    if parts[0] == "mcp" and len(parts) >= 3:
        # an MCP server's tool (``mcp__jetbrains__get_file_text_by_path``): by its own name
        steps = tool_step("__".join(parts[2:]), args)
        if steps:
            return [Step(s.command, s.output, tool=name) for s in steps]
        low = "__".join(parts[2:])
    path = next((str(args[k]) for k in _PATH_KEYS if isinstance(args.get(k), str)), "")
    if path and _READS_FILE.search(low):
        # a tool that returns a file's text (an IDE's, an editor's): a read of that path
        return [Step(f"cat {q(path.removeprefix('file://'))}", tool=name)]
    return []


#: the arguments in which a tool is given the file it works on
_PATH_KEYS = (
    "file_path",
    "path",
    "pathInProject",
    "filePath",
    "filename",
    "file",
    "absolute_path",
    "relative_path",
    "uri",
)
#: tool names that return a file's text
_READS_FILE = re.compile(r"read|get_?file|file_?text|file_?content|open|view|show|cat\b")


def written(path: str, content: str) -> str:
    """A file an editor tool wrote, as the shell command that writes the same content (so the
    audit remembers it, and reads it when the trajectory runs it)."""
    return written_to(f"tee {shlex.quote(path)} >/dev/null", content)


def written_to(command: str, content: str) -> str:
    """``command`` fed ``content`` by a quoted here-document (no expansion)."""
    delim = "EVOTREE_EOF"
    while delim in content:
        delim += "_"
    return f"{command} <<'{delim}'\n{content}\n{delim}"


def load_args(raw: Any) -> dict[str, Any]:
    """A tool call's arguments: a mapping, or JSON text of one (other text is its ``input``)."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return value if isinstance(value, dict) else {"command": value}
    return {}
