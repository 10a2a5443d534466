"""Reader of shell histories: bash (with or without ``#<epoch>`` lines), zsh extended history
and fish, one trajectory per file with no outputs; multi-line entries joined back together.
"""

from __future__ import annotations

import re

from evotree.harness.audit.commands import LineJoiner
from evotree.harness.audit.steps import Step, Trajectory

__all__ = ["shell_history"]

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


def shell_history(text: str, source: str, stem: str) -> Trajectory:
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
