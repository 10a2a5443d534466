"""Programs inside one-liners of other languages: what a ``node -e``, ``perl -e``, ``ruby -e`` or
``php -r`` snippet runs and fetches.

:func:`foreign_calls` reads the code lexically (no parser per language): the string literals passed
to their process calls (``execSync``, ``spawnSync``, ``system``, ``exec``, a name the code gave
one of them), backticks, ``qx`` and ``%x``, and the URLs fetched. Python is read with :mod:`ast`
instead (:mod:`evotree.harness.audit.inline`).
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["foreign_calls"]

_STRING = re.compile(r"""'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`""", re.S)
_PROC_CALL = re.compile(
    r"\b(execSync|execFileSync|spawnSync|execFile|exec|spawn|system|popen|shell_exec|passthru|"
    r"proc_open|readpipe|IO\.popen|Open3\.\w+)\s*\(?\s*"
)
#: a process call bound to another name (``const x = require('child_process').execSync``,
#: ``const { execSync: run } = ...``), called by that name later
_PROC_NAMES = (
    r"execSync|execFileSync|spawnSync|execFile|exec|spawn|system|popen|shell_exec|passthru|"
    r"proc_open|readpipe"
)
_PROC_ALIAS = re.compile(
    rf"(?:\b([A-Za-z_$][\w$]*)\s*=\s*[\w$.()'\"\[\]]*?\b(?:{_PROC_NAMES})\b(?!\s*\()"
    rf"|\b(?:{_PROC_NAMES})\s*:\s*([A-Za-z_$][\w$]*))"
)
_QX = re.compile(r"\bqx\s*([({\[/|!])|%x\s*([({\[|!])")
_CLOSE = {"(": ")", "{": "}", "[": "]", "/": "/", "|": "|", "!": "!"}
#: an internet address given to a call (``fetch(``, ``https.get(``, ``URI(``, ``get(``)
_URL_ARG = re.compile(
    r"""\b(?![\w.:]*\b(?:log|print|puts|say|printf|write|error|info|warn|debug)"""
    r"""\s*\()[\w.:]+\s*\(\s*"""
    r"""(?:'((?:https?|ftp)://[^'\s]+)'|"((?:https?|ftp)://[^"\s]+)")"""
)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), text)


@lru_cache(maxsize=1024)
def foreign_calls(code: str) -> tuple[tuple[str, tuple[str, ...] | str], ...]:
    """Process calls of a node / perl / ruby / php one-liner, read from its string literals."""
    out: list[tuple[str, tuple[str, ...] | str]] = []
    aliases = {a for m in _PROC_ALIAS.finditer(code) for a in m.groups() if a}
    calls = list(_PROC_CALL.finditer(code))
    if aliases:
        named = "|".join(re.escape(a) for a in sorted(aliases))
        calls += list(re.finditer(rf"(?<![\w$.])({named})\s*\(\s*", code))
    for m in calls:
        pos = m.end()
        literals: list[str] = []
        while pos < len(code):
            while pos < len(code) and code[pos] in " \t\n,[":
                pos += 1
            lit = _STRING.match(code, pos)
            if not lit:
                break
            literals.append(_unescape(next(g for g in lit.groups() if g is not None)))
            pos = lit.end()
        if not literals:
            continue
        if len(literals) == 1 or " " in literals[0]:
            out.append(("shell", literals[0]))
        else:
            out.append(("argv", tuple(literals)))
    for m in _URL_ARG.finditer(code):  # fetch('https://...'), https.get("..."), URI.open(...)
        out.append(("argv", ("curl", m.group(1) or m.group(2))))
    for m in _STRING.finditer(code):
        if m.group(3) is not None:  # `...` runs a shell in perl / ruby / php
            out.append(("shell", _unescape(m.group(3))))
    for m in _QX.finditer(code):
        opener = m.group(1) or m.group(2)
        end = code.find(_CLOSE[opener], m.end())
        if end > 0:
            out.append(("shell", code[m.end() : end]))
    return tuple(out)
