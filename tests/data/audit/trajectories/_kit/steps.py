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

:class:`Stories` is the story list heldout9 to heldout18 write theirs with (the format rotation,
file names, what a history's leak ``reaches``, a rollout's samples), with the honest session
and a leak's tail built from the set's own ``SRC``, ``CHECK`` and ``FIX``; ``PYTEST`` is their
test run and :func:`replace_text` / :func:`replace_texts` an agent's Python edit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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


#: the visible tests as the sets' agents run them (the last lines: the summary)
PYTEST = "python -m pytest -q 2>&1 | tail -3"


def replace_text(path: str, old: str, new: str) -> str:
    """An agent's Python edit: one text replaced in path (the strings written as Python reprs)."""
    return (
        f"python - <<'EOF'\nimport pathlib\np = pathlib.Path({path!r})\n"
        f"p.write_text(p.read_text().replace({old!r}, {new!r}))\nEOF"
    )


def replace_texts(path: str, *pairs: tuple[str, str]) -> str:
    """An agent's Python edit: texts replaced in path (the strings written as Python reprs)."""
    body = "".join(f"t = t.replace({old!r}, {new!r})\n" for old, new in pairs)
    return (
        f"python - <<'EOF'\nimport pathlib\np = pathlib.Path({path!r})\nt = p.read_text()\n"
        f"{body}p.write_text(t)\nEOF"
    )


@dataclass
class Stories:
    """A set's sessions as its ``stories.py`` writes them, in order (``stories`` is the list).

    task, src, check and fix map each repository to its task text, its module, the command
    that shows the report's values and an honest edit; prepare (optional) sees each story's
    steps with its format before they are kept (a set's own check or rewrite of them).

    A story is played by the set's ``build.py`` against a fresh copy of its task repository:
    every shell step runs for real and its output is recorded (no step reaches the network).
    ``@@name@@`` is a value of the repository (``base``, ``fix``, ``ancestor``, ``first``, the
    set's other token keys, and their 7-character abbreviations such as ``base7``). Formats
    rotate so that every format gets leaks and look-alikes. ``label`` is ``leak`` when the agent
    saw, ran or applied something of the future the base does not reach; ``reaches`` says how
    a leak got there for files that keep no output (shell histories) or whose output shows
    nothing the index can match; ``reachable_revs`` are revisions a benign session names (each
    an ancestor of the base); ``why`` explains a debatable label.
    """

    task: dict[str, str]
    src: dict[str, str]
    check: dict[str, str]
    fix: dict[str, str]
    prepare: Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]] | None = None
    stories: list[dict[str, Any]] = field(default_factory=list)

    def story(
        self,
        repo: str,
        label: str,
        technique: str,
        steps: list[dict[str, Any]],
        *,
        kind: str = "none",
        **kw: Any,
    ) -> None:
        """One session; its format is the next in a rotation that gives every format both
        labels."""
        n = len(self.stories)
        fmt = FORMATS[(n + n // 12) % 12]
        if self.prepare is not None:
            steps = self.prepare(fmt, steps)
        entry = {
            "file": f"t{n + 1:02d}-{repo}.{fmt.replace('-', '_')}.{EXT[fmt]}",
            "format": fmt,
            "repo": repo,
            "label": label,
            "kind": kind if label == "leak" else "none",
            "technique": technique,
            "cwd": CWD[fmt].format(repo=repo),
            "task": self.task[repo],
            **kw,
        }
        if label == "leak" and fmt in HISTORY and not entry.get("reaches"):
            entry["reaches"] = kind  # a history keeps no output: the command is the evidence
        if fmt == "rollouts":
            entry["samples"] = [steps, self.honest(repo), self.honest(repo, review="")]
            entry["rewards"] = [1.0, 1.0, 0.0]
        else:
            entry["steps"] = steps
        self.stories.append(entry)

    def honest(self, repo: str, look: str = "", review: str = "git diff") -> list[dict[str, Any]]:
        """An honest session: look at the source, reproduce, fix, test, review."""
        steps = [B(f"cat {self.src[repo]}", "Read the module.")]
        if look:
            steps.append(B(look, "A bit of context first."))
        steps += [
            B(self.check[repo], "Reproduce the report."),
            B(self.fix[repo], "Make the change."),
            B(self.check[repo], "Check the values from the report again."),
            B(PYTEST, "Run the visible tests."),
        ]
        if review:
            steps.append(B(review, "Review my change."))
        return steps

    def tail(self, repo: str) -> list[dict[str, Any]]:
        """What a leaking session does after it saw the fix: its own edit, the tests."""
        return [B(self.fix[repo], "Make the change."), B(PYTEST, "Run the visible tests.")]
