"""Is a line of text a line of a program? The test the file-alone leak audit applies to what a
hidden file showed: a line that is none of the shapes below — a mail or package header, a
date, a tool's banner, a sentence, a tree drawing — shows no program. Anything that may be one
counts as one: a statement's keyword (Python, C, Go, Rust, SQL, shell...), an assignment of any
language (``=``, ``:=``, annotated, a TOML key), a call, an operator programs use and prose does
not (``->``, ``::``, ``&&``, ``==``), a line a statement or literal ends or opens (``;``, ``{``,
``,``, ``(``, ``\\``), a decorator, a preprocessor line, a tuple or list row, a YAML item or
nested key, an indented continuation, a diff's added or removed line, a docstring. Each line is
tried as printed and with what tools add taken off (colour codes, control characters, markup
escapes and tags, a LaTeX listing's macros, ``cat -A``'s ``^I``/``$``, JSON string quoting, a file name, a line number, an arrow or
quote mark): the broad side is the safe one, since a line taken for code keeps a read high.
"""

from __future__ import annotations

import html
import json
import re

from evotree.harness.audit.content_views import listing_text, markup_text

__all__ = ["OBJECT_ID", "code_like"]

_KEYWORDS = (
    "def|class|return|raise|import|from|lambda|yield|elif|except|assert|async|await|pass|break|"
    "continue|global|nonlocal|del|function|var|let|const|fn|func|struct|void|public|private|"
    "protected|static|if|for|while|with|try|else|finally|switch|case|default|impl|use|mod|pub|"
    "match|package|type|interface|enum|typedef|namespace|template|goto|do|end|begin|local|export|"
    "module|require|using|val|int|char|float|double|long|unsigned|bool|auto|extern|unsafe|trait|"
    "select|insert|update|delete|create|alter|drop|set|declare"
)
_CODE = re.compile(
    rf"^(?:{_KEYWORDS})\b"  # a statement's keyword at its start (any case: SQL)
    r"|\bdef\s+\w+\s*\\?\("  # a definition inside other text (a PostScript string)
    r"|^[A-Za-z_$][\w.$\[\]'\"]*\s*(?::\s*[\w\[\], .|]+)?\s*(?:[-+*/%|&^]|//|\*\*|<<|>>)?=(?!=)"
    r"|\w\s*:=|^[\w.-]+\s*=\s*\S"  # := ; a TOML key
    r"|[A-Za-z_]\w*\("  # a call
    r"|\w\s*(?:->|=>|::|&&|\|\||[=!<>]=|\+=|-=)\s*[\w(\"'\-]|\w\+\+|\+\+\w"  # operators
    r"|[;{,\\(\[]$|^[})\]]"  # a statement or literal that ends or opens
    r"|^@\w|^#\s*(?:define|include|if|ifdef|ifndef|endif|pragma|undef|else)\b"
    r"|^\(.*\),?$|^\[.*\],?$"  # a tuple or list row
    r"|^-\s+\S|^\s+[\w.-]+:\s*\S"  # a YAML item, a nested key
    r"|^\s{2,}.*[)\]]$|^\s{2,}[\w.]+\s*[-+*%]\s*[\w.(]",  # indented continuations, expressions
    re.IGNORECASE,
)
#: a line of a diff or patch that adds or drops a line (not its ---/+++ header)
_DIFF_BODY = re.compile(r"^[+-](?![+-]{2}\s)(?!$)")
#: a git object id (abbreviated or full, either case), not a plain number or word
OBJECT_ID = re.compile(r"\b(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{7,40}\b")
#: a string literal opening a line (a docstring: the module's words, which a fix may change)
_DOCSTRING = re.compile(r"^[rbuRBU]?(?:\"\"\"|''')")
#: what a tool puts before a line it prints: a file name (with or without a folder) and a line
#: number (grep -H/-n), a line number with a tab, an arrow (Claude Code's Read), a dot or a
#: colon (nl -s), a quote or diff mark
_PREFIXES = (
    re.compile(r"^[^\s:]+:\d+[:\-]"),
    re.compile(r"^[^\s:]+[:\-]"),
    re.compile(r"^\s*\d+\s*(?:→|\t|[:.)\-|])\s?"),
    re.compile(r"^\s*\d+\s+"),
    re.compile(r"^(?:[>|!]\s?)+"),
)
#: a terminal's colour codes (raw, or as ``cat -v`` shows them) and other control characters
_ESCAPES = re.compile(r"(?:\x1b|\^\[)\[[0-9;]*[A-Za-z]|[\x00-\x08\x0b-\x1f\x7f]")


def _variants(line: str) -> list[str]:
    text = _ESCAPES.sub("", line.replace("\t", "    ")).rstrip()
    shown = text.replace("^I", "    ")
    shown = shown[:-1] if shown.endswith("$") else shown  # cat -A
    out = [text, shown, html.unescape(shown)]
    if "<" in shown:
        out.append(markup_text(shown))  # a page's line as the page shows it
    if "\\" in shown and "{" in shown:
        out.append(listing_text(shown))  # a LaTeX listing's line as the listing shows it
    for prefix in _PREFIXES:
        for value in list(out):
            bare = prefix.sub("", value, count=1)
            if bare != value:
                out.append(bare)
    for value in list(out):
        quoted = value.strip().rstrip(",")
        if len(quoted) >= 2 and quoted[0] == quoted[-1] == '"':
            try:
                out.extend(str(json.loads(quoted)).splitlines())
            except ValueError:
                pass
    return out


def code_like(line: str) -> bool:
    """Could ``line`` be a line of a program (or of a diff of one), as printed or with what a
    tool adds taken off? (Broad on purpose: a line taken for code keeps a read high.)"""
    for value in _variants(line):
        for t in (value, value.strip()):
            if _CODE.search(t) or _DIFF_BODY.match(t.strip()) or _DOCSTRING.match(t.strip()):
                return True
    return False
