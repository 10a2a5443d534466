"""A hash listed by ``git log --oneline`` of HEAD on the same command line, just before the
``git show`` that reads it (``git log --oneline && git show --stat 19f5359``, counts by ``wc``
before them allowed): an ancestor.

``git log`` with no revision but HEAD, no reference scope (``--all``, ``--branches``,
``--reflog``, ``-g``) and no ``-C`` / ``GIT_DIR`` lists HEAD's ancestry only; with
``--oneline`` each line it prints starts with the hash. The ``git show`` after it, in git's
default format and with no format option, starts its own output with ``commit <40 hex>``; so
every line before the first such line is the listing's, and a hash starting one of those lines
is behind HEAD. HEAD itself must still be the task's: every step before it ran only programs
that can neither move HEAD nor change which repository git reads (no checkout, no script, no
``cd``, no redirection into a file). Anything else (a script printing hashes, ``git reflog``,
``git fsck --lost-found``, ``git log --all``, a checkout of a future ref first, a ``git show
--oneline`` whose own lines look like the listing's) clears nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from evotree.harness.audit.lexer import SimpleCommand
from evotree.harness.audit.shells import WRAPPER, runs_body
from evotree.harness.audit.steps import Trajectory
from evotree.harness.audit.unwrap import parse_shell

__all__ = ["listed_by_head_log"]

#: ``git log`` words that keep it a one-line-per-commit listing of HEAD's ancestry
_LOG_FLAGS = frozenset(
    {
        "--oneline",
        "--decorate",
        "--no-decorate",
        "--abbrev-commit",
        "--no-color",
        "--color=never",
        "--pretty=oneline",
        "--format=oneline",
        "HEAD",
    }
)
_COUNT = re.compile(r"^(?:-\d+|-n\d+|--max-count=\d+)$")
_ONELINE = frozenset({"--oneline", "--pretty=oneline", "--format=oneline"})
#: ``git show`` words that keep git's default format (its output opens with ``commit <hash>``)
_SHOW_FLAGS = frozenset(
    {
        "--stat",
        "--shortstat",
        "--numstat",
        "--name-only",
        "--name-status",
        "--summary",
        "--no-patch",
        "-s",
        "-p",
        "--patch",
        "--no-color",
        "--color=never",
    }
)
_HEX = re.compile(r"^[0-9a-f]{7,40}$")
_COMMIT_LINE = re.compile(r"(?m)^commit [0-9a-f]{40}\b")
#: programs that neither move HEAD nor run other code nor change the folder git reads
#: (``rg --pre`` runs a program; ``git grep -O`` a pager; ``git log --output=.git/HEAD`` with
#: ``--format='ref: refs/heads/fix'`` writes HEAD)
_READERS = frozenset(
    {"cat", "ls", "pwd", "head", "tail", "wc", "grep", "egrep", "fgrep", "echo", "nl"}
)
_GIT_READERS = frozenset({"status", "log", "show", "diff", "ls-files", "blame"})
_GIT_RUNS = ("--output", "-o", "--ext-diff", "--textconv", "-O", "--open-files-in-pager")
_ENV = re.compile(r"\bGIT_\w*=|\bexport\b")


def _is_wrapper(cmd: SimpleCommand) -> bool:
    """``bash -lc 'BODY'``: its body's commands are parsed on their own."""
    return runs_body(cmd.argv, WRAPPER)


def _commands(text: str) -> list[SimpleCommand]:
    return [c for c in parse_shell(text) if c.argv and not _is_wrapper(c)]


def _git_sub(cmd: SimpleCommand) -> str | None:
    """The subcommand of a plain ``git SUB ...`` (no global option before it), else None."""
    argv = cmd.argv
    if os.path.basename(argv[0]) != "git" or len(argv) < 2 or argv[1].startswith("-"):
        return None
    return argv[1]


def _writes(cmd: SimpleCommand) -> bool:
    return any(
        ">" in op and target not in ("/dev/null", "&1", "&2", "1", "2")
        for op, target in cmd.redirects
    )


def _reader(cmd: SimpleCommand) -> bool:
    """A command that leaves HEAD and the folder git reads as they were."""
    if _writes(cmd) or cmd.xargs:
        return False
    if os.path.basename(cmd.argv[0]) in _READERS:
        return True
    sub = _git_sub(cmd)
    return sub in _GIT_READERS and not any(a.startswith(_GIT_RUNS) for a in cmd.argv[2:])


def _head_log(cmd: SimpleCommand) -> bool:
    """``git log --oneline`` of HEAD alone (a count, decorations allowed)."""
    if _git_sub(cmd) != "log" or _writes(cmd) or cmd.stdin is not None:
        return False
    args = list(cmd.argv[2:])
    if not any(a in _ONELINE for a in args):
        return False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-n" and i + 1 < len(args) and args[i + 1].isdigit():
            i += 2
            continue
        if a not in _LOG_FLAGS and not _COUNT.match(a):
            return False
        i += 1
    return True


def _counts_only(cmd: SimpleCommand) -> bool:
    """``wc`` with counting options only, reading files named on its command line: each line
    it prints opens with a count."""
    return (
        os.path.basename(cmd.argv[0]) == "wc"
        and cmd.stdin is None
        and not _writes(cmd)
        and all(re.fullmatch(r"-[lcwm]+|--(?:lines|bytes|words|chars)", a) or not a.startswith("-")
                for a in cmd.argv[1:])
    )  # fmt: skip


def _plain_show(cmd: SimpleCommand, revisions: Sequence[str]) -> bool:
    """``git show`` in git's default format of exactly these hashes."""
    if _git_sub(cmd) != "show" or cmd.stdin is not None:
        return False
    revs = [a for a in cmd.argv[2:] if not a.startswith("-")]
    flags = [a for a in cmd.argv[2:] if a.startswith("-")]
    return (
        bool(revs)
        and sorted(revs) == sorted(revisions)
        and all(_HEX.match(r) for r in revs)
        and all(f in _SHOW_FLAGS or f.startswith("--stat=") for f in flags)
    )


def listed_by_head_log(revisions: Sequence[str], k: int, traj: Trajectory) -> bool:
    """Did step ``k`` list every one of ``revisions`` by ``git log --oneline`` of HEAD right
    before its ``git show`` of them, with HEAD still the task's?"""
    step = traj.steps[k]
    command, output = step.command or "", step.output
    if not revisions or not output or _ENV.search(command):
        return False
    # counts before the listing (``wc -c FILES && git log --oneline && git show ...``) print
    # numbers and names, never a line a hash starts
    cmds = [c for c in _commands(command) if not _counts_only(c)]
    if len(cmds) != 2 or not _head_log(cmds[0]) or not _plain_show(cmds[1], revisions):
        return False
    first = _COMMIT_LINE.search(output)
    if first is None:
        return False
    listing = output[: first.start()]
    listed = {line.split()[0] for line in listing.splitlines() if line.strip()}
    if not all(any(w.startswith(r) and _HEX.match(w[:40]) for w in listed) for r in revisions):
        return False
    for earlier in traj.steps[:k]:
        text = earlier.command or ""
        if not text.strip():
            continue
        if _ENV.search(text) or not all(_reader(c) for c in _commands(text)):
            return False
    return True
