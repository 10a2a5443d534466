"""Programs that run other programs from their arguments: what they run, as text or argv.

Pure functions of a command's words (no shell state), used by :mod:`.unwrap` to parse what
``find -exec``, ``awk``'s ``system()`` / pipes and ``script -c`` run, and the words ``xargs``
reads from a here-string or a here-document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["find_exec", "awk_commands", "script_command", "fed_words", "AWKS"]

AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
_AWK_VALUED = frozenset({"-F", "-v", "-f", "--field-separator", "--assign", "--file"})
#: ``system("...")``, ``"..." | getline``, ``print ... | "..."`` in an awk program
_AWK_RUNS = re.compile(
    r"\bsystem\s*\(\s*\"((?:[^\"\\]|\\.)*)\""
    r"|\"((?:[^\"\\]|\\.)*)\"\s*\|\s*getline"
    r"|\|\s*\"((?:[^\"\\]|\\.)*)\""
)

_AWK_TO_SHELL = re.compile(
    r"print(?:f)?\s*\(?\s*\"((?:[^\"\\]|\\.)*)\"\s*\)?\s*\|\s*"
    r"\"(?:/bin/|/usr/bin/)?(?:ba|z|da)?sh\""
)


def find_exec(argv: Sequence[str]) -> list[list[str]]:
    """The commands ``find ... -exec CMD {} ;`` (``-execdir``, ``-ok``, ``-okdir``; ``+``) runs,
    with ``{}`` standing for the current folder (what the files are, find decides)."""
    runs: list[list[str]] = []
    k = 1
    while k < len(argv):
        if argv[k] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next(
                (j for j in range(k + 1, len(argv)) if argv[j] in (";", "\\;", "+")), len(argv)
            )
            inner = [("." if w == "{}" else w.replace("{}", ".")) for w in argv[k + 1 : end]]
            if inner:
                runs.append(inner)
            k = end + 1
            continue
        k += 1
    return runs


def awk_commands(argv: Sequence[str]) -> list[str]:
    """The shell command lines an awk program runs (``system("git log")``, ``"cmd" | getline``,
    ``print | "sh"``); the program is the first word that is not an option."""
    k = 1
    while k < len(argv) and argv[k].startswith("-"):
        k += 2 if argv[k] in _AWK_VALUED else 1
    if k >= len(argv):
        return []
    found = [m.group(1) for m in _AWK_TO_SHELL.finditer(argv[k])]  # print "cmd" | "sh"
    for m in _AWK_RUNS.finditer(argv[k]):
        text = next(g for g in m.groups() if g is not None)
        found.append(text.replace('\\"', '"').replace("\\\\", "\\"))
    return [t for t in found if t.strip()]


def script_command(argv: Sequence[str]) -> str | None:
    """``script -qc 'CMD' FILE`` (``--command``): the command line it runs."""
    for k, word in enumerate(argv[1:], 1):
        if word in ("-c", "--command") and k + 1 < len(argv):
            return argv[k + 1]
        if word.startswith("--command="):
            return word.split("=", 1)[1]
        if re.fullmatch(r"-[a-zA-Z]*c", word) and k + 1 < len(argv):
            return argv[k + 1]
    return None


def fed_words(redirects: Sequence[tuple[str, str]], heredoc: str | None) -> list[str] | None:
    """The words a here-string (``<<< origin/fix``) or a here-document feeds a command."""
    text = next((t for op, t in redirects if op == "<<<"), heredoc)
    if text is None:
        return None
    return text.split()
