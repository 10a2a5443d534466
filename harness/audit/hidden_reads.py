"""A whole read (``cat``) or a bounded print (``sed -n 'ADDR,ADDRp'``) of one file under a
hidden path, judged with the task repository by what it prints of the checkout's file.

A hidden path names where a copy of the future may sit (a tool's leftover folder); a file of
it may hold nothing of the future (mutmut's ``.meta`` of exit codes beside the trampolined
module), and a part of a file that holds the future may print none of it (mutmut's
trampoline function). With the task repository the audit re-does the read on the checkout's
file (read-only: the file's text for ``cat``, GNU ``sed --sandbox`` for ``sed``) and the caller
judges what it prints by content provenance, as it judges a ``head``/``tail``. Only plain forms
are evaluated: ``cat`` with layout options and one file; ``sed`` (``-n`` or not) with ``-E``
and one script made of addresses (line numbers, ``$``, ``/regex/``, ranges, ``~step``, ``!``)
and the commands ``p``, ``=``, ``q``, ``Q`` (nothing that edits, runs or writes), one file. A
binary file, a file the index does not read (too large, beyond the files it reads of a
folder), a pipe or anything else is not evaluated: the read stays as the rule said.

A glob (``cat runs/_sources/harvest_*.py``, ``jq .x runs/*/run.json``) is expanded first
(:func:`expand_globs`) in the checkout as bash expands it: the files it matches there, or the
word itself when it matches none (a file named so does not exist: the read stays). The files an
earlier step could have put there are written by a step of their own, which its rules judge.
"""

from __future__ import annotations

import dataclasses
import glob
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from evotree.harness.audit.future_content import covered_hidden, indexed_hidden
from evotree.harness.audit.hidden_parts import hidden_file, inside_word
from evotree.harness.audit.lexer import SimpleCommand, _basename

__all__ = ["expand_globs", "names_uncovered", "whole_prints"]

#: a glob matching more files than this is not expanded (the read stays)
MAX_GLOB_FILES = 200
_GLOB = re.compile(r"[*?\[]")

#: cat options that only lay the text out (numbers, ends, tabs, squeezed blanks)
_CAT_FLAGS = frozenset("nbsEeTtvA")
#: one sed address: a line, the last line, a regex (``/re/`` with ``I``/``M``), ``first~step``
_ADDR = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*)"
#: one sed command of a read: an optional address or range, ``!``, then p, =, q or Q
_SED_CMD = rf"(?:{_ADDR}(?:\s*,\s*(?:{_ADDR}|[+~]\d+))?)?\s*!?\s*(?:[p=]|[qQ]\s*\d*)"
_SED_SCRIPT = re.compile(rf"\s*{_SED_CMD}(?:\s*[;\n]\s*{_SED_CMD})*\s*;?\s*")
#: the longest a re-run ``sed`` may take (a pathological regex stops here: judged a read)
_SED_SECONDS = 5.0


def expand_globs(cmd: SimpleCommand, workdir: str | Path) -> SimpleCommand | None:
    """``cmd`` with each operand holding a glob replaced by the checkout's paths it matches
    (relative, sorted; a leading dot matched only when the pattern has one, as bash does), or
    kept when it matches none; ``cmd`` itself when no operand holds one. None (not evaluated)
    for a glob that is absolute, climbs with ``..``, starts with ``~`` or ``$``, or matches
    more than :data:`MAX_GLOB_FILES` paths."""
    root = Path(workdir).resolve()
    words: list[str] = list(cmd.argv[:1])
    changed = False
    for word in cmd.argv[1:]:
        if word.startswith("-") or not _GLOB.search(word):
            words.append(word)
            continue
        rel = inside_word(word)
        if rel is None:
            return None
        if (root / rel).exists() or (root / rel).is_symlink():
            return None  # a file named so (the word may have been quoted): which one is read?
        # bash's "[^...]" is Python's "[!...]" (its "[^" is a set holding "^")
        found = sorted(glob.glob(rel.replace("[^", "[!"), root_dir=root))
        if len(found) > MAX_GLOB_FILES:
            return None
        words.extend(found or [word])
        changed = changed or bool(found)
    return dataclasses.replace(cmd, argv=tuple(words)) if changed else cmd


def _file(word: str, root: Path, hidden: Sequence[str]) -> Path | None:
    """The checkout's file a word names when it lies under a hidden path, no glob, inside
    (:func:`hidden_file`), never an option or a brace expansion."""
    rel = word.removeprefix("./")
    if rel.startswith("-") or "{" in rel:
        return None
    return hidden_file(word, root, hidden)


def names_uncovered(cmd: SimpleCommand, workdir: str | Path, hidden_paths: Sequence[str]) -> bool:
    """Whether a word of ``cmd`` (its globs expanded as bash would) names a hidden file the
    provenance index did not read whole (:func:`covered_hidden`: too big, past the files it
    reads of its folder, a tar past its caps): what such a read printed cannot be judged by
    the index, so it is never cleared by it."""
    root = Path(workdir).resolve()
    hidden = [p.strip().strip("/").removeprefix("./") for p in hidden_paths if p.strip("/ ")]
    expanded = expand_globs(cmd, root)
    words = list((expanded or cmd).argv[1:])
    words += [w.split("=", 1)[1] for w in words if w.startswith("--") and "=" in w]
    words += [target for _, target in cmd.redirects]
    for word in words:
        if "\0" in word:
            continue  # no path holds a NUL (bash cuts the word there; the read is kept anyway)
        path = hidden_file(word, root, hidden)
        if path is not None and not covered_hidden(root, hidden, path):
            return True
    return False


def _cat(argv: Sequence[str]) -> list[str] | None:
    """The file operands of ``cat`` with layout options only; None for anything else."""
    files: list[str] = []
    for word in argv[1:]:
        if word.startswith("-") and len(word) > 1:
            if word.startswith("--") or set(word[1:]) - _CAT_FLAGS:
                return None
        else:
            files.append(word)
    return files


#: diff options that only shape what it prints of its two files' lines (a format, a width,
#: context, what counts as equal); anything else (``-r``, ``-l`` runs ``pr``, ``--from-file``,
#: ``-x``, ``-I``, a label) is not evaluated
_DIFF_FLAGS = frozenset("ucqsywbBiaNtTpdEZ")
_DIFF_LONG = frozenset(
    {
        "--brief", "--unified", "--context", "--side-by-side", "--ignore-all-space",
        "--ignore-space-change", "--ignore-blank-lines", "--ignore-case", "--text",
        "--new-file", "--expand-tabs", "--initial-tab", "--show-c-function", "--minimal",
        "--strip-trailing-cr", "--color", "--suppress-common-lines", "--left-column",
        "--report-identical-files", "--ignore-tab-expansion", "--ignore-trailing-space",
    }
)  # fmt: skip
_DIFF_VALUED = re.compile(r"-[UCW]\d*|--(?:unified|context|width|color)=\w+")


def _diff(argv: Sequence[str]) -> list[str] | None:
    """The two file operands of a ``diff`` with layout options only; None for anything else."""
    files: list[str] = []
    k = 1
    while k < len(argv):
        word = argv[k]
        if word in ("-U", "-C", "-W"):
            k += 1
            if k >= len(argv) or not argv[k].isdigit():
                return None
        elif word == "--":
            files += argv[k + 1 :]
            break
        elif word.startswith("-") and len(word) > 1:
            flags = set(word[1:]) <= _DIFF_FLAGS and not word.startswith("--")
            if not (flags or word in _DIFF_LONG or _DIFF_VALUED.fullmatch(word)):
                return None
        else:
            files.append(word)
        k += 1
    return files if len(files) == 2 else None


def _sed(argv: Sequence[str]) -> tuple[list[str], str] | None:
    """(options, script) and the file operands of a read-only ``sed`` (``-n`` kept when given:
    without it sed also prints each line it reads); None else."""
    quiet, opts, script, files = False, [], None, []
    k = 1
    while k < len(argv):
        word = argv[k]
        if word in ("-n", "--quiet", "--silent"):
            quiet = True
        elif word in ("-E", "-r", "--regexp-extended"):
            opts.append("-E")
        elif re.fullmatch(r"-[nEr]+", word):
            quiet = quiet or "n" in word
            opts += ["-E"] if set(word[1:]) & set("Er") else []
        elif word == "-e" and k + 1 < len(argv) and script is None:
            k += 1
            script = argv[k]
        elif word.startswith("-") and len(word) > 1:
            return None  # -i edits in place, -f reads a script, -s/-z change what a line is
        elif script is None:
            script = word
        else:
            files.append(word)
        k += 1
    if script is None or not _SED_SCRIPT.fullmatch(script):
        return None
    # without -n sed prints every line it reads as well (``sed '/re/q'``: up to the first match)
    return [*(["-n"] if quiet else []), *opts, "-e", script], files


def whole_prints(
    argv: Sequence[str], workdir: str | Path, hidden_paths: Sequence[str]
) -> str | None:
    """What ``cat FILE...`` or a read-only ``sed -n SCRIPT FILE`` prints of files under a
    hidden path of ``workdir`` (cat: each file whole, one after another, every one of them
    hidden and indexed; sed: one file); None when not evaluated here (the caller keeps the
    read)."""
    name = _basename(argv[0]) if argv else ""
    root = Path(workdir).resolve()
    hidden = [p.strip().strip("/").removeprefix("./") for p in hidden_paths if p.strip("/ ")]
    if name == "diff":
        return _diff_prints(argv, root, hidden)
    parsed = _cat(argv) if name == "cat" else None
    sed = _sed(argv) if name == "sed" else None
    files = parsed if parsed is not None else (sed[1] if sed else None)
    if parsed is not None and len(parsed) > 1:
        paths = [_file(word, root, hidden) for word in parsed]
        if any(path is None or not indexed_hidden(root, hidden, path) for path in paths):
            return None
        return "".join(path.read_bytes().decode("utf-8", "replace") for path in paths if path)
    if not files or len(files) != 1:
        return None
    path = _file(files[0], root, hidden)
    if path is None or not indexed_hidden(root, hidden, path):
        return None
    if sed is None:
        return path.read_bytes().decode("utf-8", "replace")
    try:
        proc = subprocess.run(
            ["sed", "--sandbox", *sed[0], "--", str(path)],
            cwd=root,
            capture_output=True,
            timeout=_SED_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
            env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.decode("utf-8", "replace")


def _diff_prints(argv: Sequence[str], root: Path, hidden: Sequence[str]) -> str | None:
    """What ``diff A B`` of one hidden file and one file of the checkout can print, when the two
    are the same bytes (a run's saved copy of a script the fix does not change): nothing — the
    hidden file's text is returned for the caller to judge (it holds no line the checkout's
    does not). A diff of files that differ shows how they differ, which a fix that only deletes
    or moves lines is (the s19 red team's W8), and a line too short to index (W7): not
    evaluated. Two hidden files, stdin, a folder or a file the index does not read: not
    evaluated either."""
    files = _diff(argv)
    if files is None or "-" in files:
        return None
    hidden_data: list[bytes] = []
    other_data: list[bytes] = []
    for word in files:
        rel = inside_word(word)
        if rel is None or word.startswith("-") or re.search(r"[*?\[{]", rel):
            return None
        path = (root / rel).resolve()  # a link is judged by the file it reaches
        if root not in path.parents or not path.is_file():
            return None
        inner = path.relative_to(root).as_posix()
        if any(inner == h or inner.startswith(h + "/") for h in hidden):
            if not indexed_hidden(root, hidden, path):
                return None
            hidden_data.append(path.read_bytes())
        else:
            other_data.append(path.read_bytes())
    if len(hidden_data) != 1 or other_data != hidden_data:
        return None
    return hidden_data[0].decode("utf-8", "replace")
