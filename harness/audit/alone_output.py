"""What a read of hidden data showed, judged on the file alone by its recorded output.

Without the task repository the audit cannot tell a hidden file's future lines from its
others: a read of it is high. But most formats record what each step printed, and what the
agent *saw* is that output. A read whose output the agent saw whole — a pipeline of programs
that only display, nothing written or run — and whose every line is either one the task's
prompt or the checkout's own files had shown (never the agent's own prints: its guesses would
vouch for themselves) or no line of a program at all (a header, a date, a mail's address
lines, an HTML preamble, a tool's banner; :func:`~evotree.harness.audit.code_lines.code_like`,
broad on purpose) showed nothing the
file alone can tie to the future: it is lowered to a warn, with the reason. A line of code the
trajectory had not seen (a ``def``, an assignment, a call, a ``raise``, a diff's added line), an
object id it had not seen, or an output that is missing, empty or written elsewhere keeps the
read high. With the repository the read is judged by what it selected (``hidden_selected``)
instead; this module is not used there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from evotree.harness.audit.code_lines import OBJECT_ID, code_like
from evotree.harness.audit.hidden_selected import _sed_args
from evotree.harness.audit.lexer import SimpleCommand, _basename
from evotree.harness.audit.shells import WRAPPER_SHORT, is_shell, runs_body
from evotree.harness.audit.shown import HARNESS_FRAMING
from evotree.harness.audit.unwrap import parse_shell

__all__ = ["displayed_whole", "names_unchanged", "seen_before", "shows_nothing_new"]

#: programs that only read and display whole lines (their output is the step's output). Left
#: out: a dump of bytes (``od``, ``xxd``, ``hexdump``, ``strings``) and every program that
#: reshapes lines — ``tr`` (rot13), ``rev``, ``cut``, ``fold``, ``fmt``, ``column``, ``echo``/
#: ``printf`` of a substitution (lines joined), ``iconv`` — whose output hides a line of code,
#: and counters (``wc``): a count printed of a piped read is judged by the read's own rules
_DISPLAY = frozenset(
    {
        "head", "tail", "cat", "tac", "less", "more", "nl", "sort", "uniq", "zcat",
        "bzcat", "xzcat", "file", "grep", "egrep", "fgrep", "zgrep", "jq", "ls", "cd", "pwd",
        "true", "sed", "expand",
    }
)  # fmt: skip
#: a line a recorder or a harness put where it left part of an output out
_ELIDED = re.compile(
    r"^(?:\.{3}|…|\[\.{3}\]|\[…\])$|\b(?:truncated|omitted|elided|clipped)\b|"
    r"\.\.\. ?\(?\d+ (?:more )?(?:lines|characters|chars|bytes)",
    re.IGNORECASE,
)
#: redirection targets that write nothing anywhere
_NOWHERE = frozenset({"/dev/null", "&1", "&2", "1", "2"})


def displayed_whole(command: str) -> bool:
    """Is ``command`` a pipeline of programs that only display, whose whole output is the
    step's output (nothing redirected to a file, nothing run, nothing edited in place)?"""
    try:
        calls = parse_shell(command)
    except Exception:  # a command the lexer cannot read is not vouched for
        return False
    return bool(calls) and all(_displays(call) for call in calls)


#: where a display program may live: its bare name (PATH as the trajectory left it, checked by
#: the caller) or the system's folders — a program of the agent's named ``head`` is not head
_SYSTEM_BIN = re.compile(r"(?:/usr)?(?:/local)?/s?bin/[\w.+-]+")
#: options that make a display program write a file, run a program or read patterns from one
_WRITING_OPTIONS = {
    "sort": re.compile(r"-o.*|--output(=.*)?|--compress-program(=.*)?"),
    "less": re.compile(r"-[oO].*|--log-file(=.*)?|--LOG-FILE(=.*)?"),
    "more": re.compile(r"-[oO].*"),
    "tar": re.compile(r"--to-command(=.*)?|-I.*|--use-compress-program(=.*)?|"
                      r"--checkpoint-action(=.*)?|-F.*|--info-script(=.*)?|--new-volume-script(=.*)?|"
                      r"--rsh-command(=.*)?|--rmt-command(=.*)?"),
    "grep": re.compile(r"-[a-zA-Z]*f.*|--file(=.*)?"),
}  # fmt: skip
#: a jq filter that only selects: paths (``.a``, ``."b"``, ``[]``, ``[0]``), pipes, commas and
#: ``keys`` / ``length`` / ``type`` — no function that reshapes a string (``explode``, ...)
_JQ_PATH = re.compile(r'\.(?:[A-Za-z_]\w*|"[^"]*")?')
_JQ_REST = re.compile(r"[\s\[\]\d|,]*(?:\b(?:keys|length|type)\b[\s\[\]\d|,]*)*")


def _displays(call: SimpleCommand) -> bool:
    if not call.argv or call.heredoc is not None or call.assigns:
        return False  # NAME=value before it (PATH, LESSOPEN, ...) may change what runs
    word = call.argv[0]
    if "/" in word and not _SYSTEM_BIN.fullmatch(word):
        return False
    name = _basename(word)
    if is_shell(name):  # ``bash -lc 'BODY'``: the body's commands are judged themselves
        return runs_body(call.argv, WRAPPER_SHORT)
    if any(
        (op.startswith((">", "&>")) or "<>" in op) and target not in _NOWHERE
        for op, target in call.redirects
    ):
        return False
    args = call.argv[1:]
    writing = _WRITING_OPTIONS.get("grep" if name in ("egrep", "fgrep", "zgrep") else name)
    if writing is not None and any(writing.fullmatch(a) for a in args):
        return False
    if name == "tar":  # extracted to standard output only (-O / --to-stdout)
        flags = [a for a in args if a.startswith("-")] or args[:1]
        return any("O" in f and not f.startswith("--") or f == "--to-stdout" for f in flags)
    if name in ("gzip", "bzip2", "xz", "zstd"):  # decompressed to standard output only (a
        # compression to it prints bytes no line is judged by)
        short = "".join(a[1:] for a in args if re.fullmatch(r"-[a-zA-Z0-9]+", a))
        return ("d" in short or "--decompress" in args) and (
            "c" in short or "--stdout" in args or "--to-stdout" in args
        )
    if name == "unzip":  # -p / -c: members to standard output, nothing extracted
        return any(re.fullmatch(r"-[a-zA-Z]*[pc][a-zA-Z]*", a) for a in args)
    if name not in _DISPLAY:
        return False
    if name == "uniq":  # a second file name is where it writes
        return len([a for a in args if not a.startswith("-")]) <= 1
    if name == "sed":  # -n with p/q commands behind addresses only: whole lines, unchanged
        return _sed_args(call.argv) is not None
    if name in ("grep", "egrep", "fgrep", "zgrep"):  # -o prints pieces of lines; -c, -l, -L
        # and -q print none (their rules judge them): only a grep printing whole lines
        return not any(
            a in ("--only-matching", "--count", "--files-with-matches", "--files-without-match")
            or a in ("--quiet", "--silent")
            or re.fullmatch(r"-[a-zA-Z]*[oclLq][a-zA-Z]*", a)
            for a in args
        )
    if name == "jq":
        filters = [a for a in args if not a.startswith("-")][:1]
        return bool(filters) and bool(_JQ_REST.fullmatch(_JQ_PATH.sub(" ", filters[0])))
    return True


#: what in a trajectory's earlier commands can change which program a name runs
_RENAMES = re.compile(
    r"\bPATH=|\bexport\s+PATH\b|\balias\b|\bfunction\s|\w\s*\(\)\s*\{|\bhash\s+-p|"
    r"\benable\s+-f|\bBASH_ENV=|\bENV=|\bLESSOPEN=|\bLESS=|\bGREP_OPTIONS=|\bLD_PRELOAD="
)


def names_unchanged(commands: Iterable[str]) -> bool:
    """Did none of ``commands`` (the trajectory's, up to the step) change what a program's
    name runs (``PATH``, an alias, a function, ``LESSOPEN``, ``LD_PRELOAD``...)?"""
    return not any(_RENAMES.search(c or "") for c in commands)


def _lines(output: str) -> list[str]:
    return [
        line.rstrip()
        for line in output.splitlines()
        if line.strip() and not HARNESS_FRAMING.match(line.strip())
    ]


def shows_nothing_new(command: str, output: str | None, seen: Iterable[str]) -> str | None:
    """Why the read ``command`` showed nothing the file alone can tie to the future (None when
    it may have): its output recorded and displayed whole, every line of it either ``seen``
    before by the trajectory or not a line of a program, and no object id it had not seen."""
    if output is None or not displayed_whole(command):
        return None
    lines = _lines(output)
    if not lines:
        return None  # nothing recorded of a read that prints: not evidence of nothing
    if any(_ELIDED.search(line) for line in lines):
        return None  # the record left part of the output out: what was shown is not all here
    known = {line.strip() for line in seen if line.strip()}
    known_text = "\n".join(known)
    for line in lines:
        if line.strip() in known:
            continue
        if code_like(line):
            return None
        if any(oid not in known_text for oid in OBJECT_ID.findall(line)):
            return None
    return (
        "its output, recorded whole, holds no line of a program the trajectory had not seen "
        "and no object id (a header or the tool's own text)"
    )


def seen_before(prompt: str | None, outputs: Sequence[str | None]) -> list[str]:
    """The lines the trajectory had been shown: its prompt and its earlier steps' outputs."""
    lines = (prompt or "").splitlines()
    for output in outputs:
        if output:
            lines.extend(output.splitlines())
    return lines
