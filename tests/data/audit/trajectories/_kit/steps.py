"""The format tables and step constructors the held-out sets' ``stories.py`` share.

A story names its transcript format (``claude``, ``codex``, ..., ``rollouts``) and lists its
steps; ``EXT`` gives each format's file ending, ``CWD`` the folder its agent works in (``{repo}``
filled with the task repository's name), ``FORMATS`` the order the sets rotate formats in and
``HISTORY`` the formats that are shell histories (they keep no output). ``B``, ``READ``,
``WRITE``, ``EDIT`` and ``GREP`` make the steps the shared player (``build.py``) plays and the
shared writer (``render.py``) writes. Every set that imports them ran this same code before, so
each still rebuilds byte-identical. A set with other tables or steps of its own keeps them in its
``stories.py`` (and builds its own copy rather than changing a table here: these objects are
shared by every set one process loads).
"""

from __future__ import annotations

from typing import Any

EXT = {
    "claude": "jsonl",
    "codex": "jsonl",
    "codex-exec": "jsonl",
    "mini1": "traj.json",
    "mini2": "traj.json",
    "mini2-tool": "traj.json",
    "swe": "traj",
    "swe-history": "traj",
    "bash": "bash_history",
    "bash-ts": "bash_history",
    "zsh": "zsh_history",
    "rollouts": "rollouts.jsonl",
}
CWD = {
    "claude": "/home/dev/{repo}",
    "codex": "/workspace/{repo}",
    "codex-exec": "/workspace/{repo}",
    "mini1": "/testbed",
    "mini2": "/testbed",
    "mini2-tool": "/testbed",
    "swe": "/testbed",
    "swe-history": "/testbed",
    "bash": "/src/{repo}",
    "bash-ts": "/src/{repo}",
    "zsh": "/src/{repo}",
    "rollouts": "/task/{repo}",
}
FORMATS = (
    "claude",
    "codex",
    "codex-exec",
    "mini1",
    "mini2",
    "mini2-tool",
    "swe",
    "swe-history",
    "bash",
    "bash-ts",
    "zsh",
    "rollouts",
)
HISTORY = ("bash", "bash-ts", "zsh")


def B(cmd: str, thought: str = "", **kw: Any) -> dict[str, Any]:
    """A shell step (run for real unless ``out`` is given)."""
    return {"tool": "bash", "cmd": cmd, "thought": thought, **kw}


def READ(path: str, thought: str = "") -> dict[str, Any]:
    """A file-reading tool's step (the file's text is read from the played repository)."""
    return {"tool": "read", "path": path, "thought": thought}


def WRITE(path: str, content: str, thought: str = "") -> dict[str, Any]:
    """A file-writing tool's step: path gets content."""
    return {"tool": "write", "path": path, "content": content, "thought": thought}


def EDIT(path: str, old: str, new: str, thought: str = "") -> dict[str, Any]:
    """A file-editing tool's step: old is replaced by new in path."""
    return {"tool": "edit", "path": path, "old": old, "new": new, "thought": thought}


def GREP(pattern: str, path: str = ".", thought: str = "", ignored: tuple = ()) -> dict[str, Any]:
    """Claude's Grep (ripgrep): ignored are the globs .gitignore keeps it out of."""
    return {
        "tool": "grep",
        "pattern": pattern,
        "path": path,
        "thought": thought,
        "ignored": list(ignored),
    }
