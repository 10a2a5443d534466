"""Is a line of text a line of a program? The test the leak audit applies to what a hidden
file showed: the future a task hides is code (its module, its tests, a patch of them), so a
line that is none — a header, a date, a tool's banner, a package's metadata — shows none of it.
"""

from __future__ import annotations

import html
import re

__all__ = ["OBJECT_ID", "code_like"]

#: a line of a program: a statement's keyword at its start, a definition, an assignment at
#: its start, a call (``word(``); a word of prose (``return``, ``function``) inside a sentence
#: or ``key=value`` inside a log line is not one
_CODE = re.compile(
    r"^(?:def|class|return|raise|import|from\s+[\w.]+\s+import|lambda|yield|elif|except|"
    r"assert|async\s+def|await|function|var|let|const|fn|func|struct|public|private|static|"
    r"void|if|for|while|with|try|else|finally|switch|case)\b"
    r"|\bdef\s+\w+\s*\\?\("
    r"|^[A-Za-z_][\w.\[\]'\"]*\s*(?:[-+*/%|&^]|//|\*\*)?=(?!=)\s*\S"
    r"|[A-Za-z_]\w*\("
)
#: a line of a diff or patch that adds or drops a line (not its ---/+++ header)
_DIFF_BODY = re.compile(r"^[+-](?![+-]{2}\s)(?!$)")
#: a git object id (abbreviated or full), not a plain number or word
OBJECT_ID = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")
#: a string literal opening a line (a docstring: the module's words, which a fix may change)
_DOCSTRING = re.compile(r"^\s*(?:\d+[:|]\s*)?[rbuRBU]?(?:\"\"\"|''')")


#: what a tool puts before a line it prints: grep's file name and number, nl's number, a
#: quote or diff mark
_PREFIX = re.compile(r"^(?:[^\s:]+:\d+[:\-]|[^\s:]*/[^\s:]+[:\-]|\d+[:\-|]\s?|\s*\d+\s+|[>|!]\s?)+")


#: a terminal's colour codes (raw, or as ``cat -v`` shows them) and other control characters
_ESCAPES = re.compile(r"(?:\x1b|\^\[)\[[0-9;]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")


def code_like(line: str) -> bool:
    """Does ``line`` read as a line of a program (or of a diff of one), as printed or with
    colour codes, control characters and markup escapes undone and a tool's line number or
    quote mark taken off?"""
    text = _ESCAPES.sub("", line).strip()
    bare = _PREFIX.sub("", html.unescape(text)).strip()
    return any(
        bool(_CODE.search(t) or _DIFF_BODY.match(t) or _DOCSTRING.match(t)) for t in (text, bare)
    )
