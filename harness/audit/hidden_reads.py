"""A whole read (``cat``) or a bounded print (``sed -n 'ADDR,ADDRp'``) of one file under a
hidden path, judged with the task repository by what it prints of the checkout's file.

A hidden path names where a copy of the future may sit (a tool's leftover folder); a file of
it may hold nothing of the future (mutmut's ``.meta`` of exit codes beside the trampolined
module), and a part of a file that holds the future may print none of it (mutmut's
trampoline function). With the task repository the audit re-does the read on the checkout's
file (read-only: the file's text for ``cat``, GNU ``sed --sandbox`` for ``sed``) and the caller
judges what it prints by content provenance, as it judges a ``head``/``tail``. Only plain forms
are evaluated: ``cat`` with layout options and one file; ``sed -n`` (or ``--quiet``) with ``-E``
and one script made of addresses (line numbers, ``$``, ``/regex/``, ranges, ``~step``, ``!``)
and the commands ``p``, ``=``, ``q``, ``Q`` (nothing that edits, runs or writes), one file. A
binary file, a file the index does not read (too large, beyond the files it reads of a
folder), a glob, a pipe or anything else is not evaluated: the read stays as the rule said.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

from evotree.harness.audit.future_content import indexed_hidden
from evotree.harness.audit.hidden_parts import hidden_file
from evotree.harness.audit.lexer import _basename

__all__ = ["whole_prints"]

#: cat options that only lay the text out (numbers, ends, tabs, squeezed blanks)
_CAT_FLAGS = frozenset("nbsEeTtvA")
#: one sed address: a line, the last line, a regex (``/re/`` with ``I``/``M``), ``first~step``
_ADDR = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/[IM]*)"
#: one sed command of a read: an optional address or range, ``!``, then p, =, q or Q
_SED_CMD = rf"(?:{_ADDR}(?:\s*,\s*(?:{_ADDR}|[+~]\d+))?)?\s*!?\s*(?:[p=]|[qQ]\s*\d*)"
_SED_SCRIPT = re.compile(rf"\s*{_SED_CMD}(?:\s*[;\n]\s*{_SED_CMD})*\s*;?\s*")
#: the longest a re-run ``sed`` may take (a pathological regex stops here: judged a read)
_SED_SECONDS = 5.0


def _file(word: str, root: Path, hidden: Sequence[str]) -> Path | None:
    """The checkout's file a word names when it lies under a hidden path, no glob, inside
    (:func:`hidden_file`), never an option or a brace expansion."""
    rel = word.removeprefix("./")
    if rel.startswith("-") or "{" in rel:
        return None
    return hidden_file(word, root, hidden)


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


def _sed(argv: Sequence[str]) -> tuple[list[str], str] | None:
    """(extra options, script) and the file operands of a read-only ``sed -n``; None else."""
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
    if not quiet or script is None or not _SED_SCRIPT.fullmatch(script):
        return None
    return [*opts, "-e", script], files


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
            ["sed", "--sandbox", "-n", *sed[0], "--", str(path)],
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
