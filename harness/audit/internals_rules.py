"""The git internals rule of the leak audit (``audit.git_internals_read``): any program but git
reading ``.git/objects``, ``refs``, ``packed-refs``, ``logs``, ``ORIG_HEAD``, ..., or searching
``.git`` recursively."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evotree.harness.audit.hits import Hit
from evotree.harness.audit.lexer import SimpleCommand

__all__ = ["internals_hits", "traced_open_hit"]


_GIT_INTERNAL = re.compile(
    r"(?:^|[\s/'\"=(:,])\.git/(objects|refs|packed-refs|logs|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD|"
    r"worktrees|modules|rr-cache|lost-found|shallow|index)\b"
)


_RECURSIVE = frozenset(
    {
        "find",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "ag",
        "ack",
        "tree",
        "tar",
        "cp",
        "rsync",
        "du",
        "zip",
        "strings",
        "zgrep",
        "git-filter-repo",
    }
)


def traced_open_hit(argv: Sequence[str], joined: str) -> Hit:
    """The runtime trace saw a program other than git open git storage (``open() PATH``)."""
    target = argv[1] if len(argv) > 1 else "?"
    return Hit(
        "audit.git_internals_read",
        "high",
        f"git storage read without git (runtime trace): {target[:80]}",
        joined,
    )


def internals_hits(name: str, cmd: SimpleCommand, joined: str) -> list[Hit]:
    """Reading ``.git``'s internals with any program but git's own (``git show|cat-file`` of a
    path under ``.git`` counts), or searching or listing ``.git``."""
    argv = cmd.argv
    words = list(argv[1:]) + [t for _, t in cmd.redirects]
    if ".git" not in joined or (
        name == "git" and not any(w.startswith(("show", "cat")) for w in argv[1:2])
    ):
        return []
    internal = next((w for w in words if _GIT_INTERNAL.search(w)), None)
    if internal:
        return [
            Hit("audit.git_internals_read", "high", f"reads git internals: {internal[:80]}", joined)
        ]
    if (
        name in _RECURSIVE
        and "-prune" not in words
        and any(w.rstrip("/") == ".git" or w.rstrip("/").endswith("/.git") for w in words)
    ):
        return [Hit("audit.git_internals_read", "high", f"{name} searches .git", joined)]
    if name == "ls" and any(w.rstrip("/").endswith(".git") for w in words):
        return [Hit("audit.git_internals_read", "warn", "lists .git", joined)]
    return []
