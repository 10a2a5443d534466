"""Which lines of a hidden file a command selected, re-done on the checkout.

A read of a hidden file is judged, with the task repository, by what it SELECTED of the file
(which of the file's own lines the command read), not by what it printed: a command can print
what it read in any shape (``grep -o`` in 15-character matches, a count, a hex dump), but it
can show nothing of a line it never selected. :func:`selections` re-does the selection on the
checkout's file, read-only, and the caller judges each selected line
(:meth:`~evotree.harness.audit.future_content.ProvenanceIndex.selected_future`).

What a command selects:

* ``grep``/``egrep``/``fgrep`` (not recursive: a recursive one is re-run per hidden file by
  :func:`grep_selects`): the lines it matches, with its matching options (``-v``, ``-i``,
  ``-F``/``-E``/``-P``/``-G``, ``-w``, ``-x``, ``-e``, ``-f``, ``-m``, ``-a``/``-I``) and its
  context lines (``-A``/``-B``/``-C``); ``-c``/``-l``/``-L``/``-q``/``-o``/``-n``/``-h``/
  ``-H``/``-b``/``-s``/``--color`` only shape what is printed of them: the matching lines are
  selected all the same. grep itself is re-run with ``-n`` to number them;
* ``head``/``tail`` with ``-n K``/``-K``/``--lines``/``-c K``/``--bytes`` (``+K`` from the
  K-th): those lines, or the lines the bytes fall in;
* ``sed`` whose script is only ``p`` and ``q`` commands behind line, ``$``, ``/re/``,
  ``first~step`` addresses and ranges (``2,$p``, ``/<pre>/,/total/p``, ``5p;5q``,
  ``/re/q`` without ``-n``): sed itself is re-run with each ``p`` made ``=`` (the line numbers
  it would print; without ``-n`` every line it reads is numbered too);
* ``awk 'NR==K'``, ``awk 'NR>=A && NR<=B'`` (``{print}``/``{print $0}`` or none) of one file;
* everything else that reads the file (``cat``, ``xxd``, ``od``, ``base64``, ``strings``, a
  program, a pipe into anything, an unknown option or form): EVERY line (fail closed).

What follows the selecting command in its pipe reads only what it printed of the selected
lines, so it selects nothing more.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evotree.harness.audit.lexer import SimpleCommand, _basename

__all__ = [
    "Selection",
    "grep_selection",
    "grep_selects",
    "selections",
    "shell_expands",
    "whole_file",
]

#: the largest hidden file whose lines are selected (a larger one: not judged, the read kept)
MAX_BYTES = 256 << 20
#: the longest a re-run of grep or sed may take (longer: every line is selected)
_SECONDS = 10.0
_ENV = {"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"}


@dataclass(frozen=True)
class Selection:
    """The lines a command selected of one hidden file (``whole``: every line)."""

    path: str  # the hidden file, relative to the checkout
    lines: list[str]
    whole: bool
    #: a grep that prints none of its lines (``-c``, ``-l``, ``-L``, ``-q``) is an oracle:
    #: what it matched (``grep -o``), for the caller to ask whether the probe is the
    #: future's own text; None for any other read
    matches: tuple[str, ...] | None = None


#: a word the shell would expand whatever its quotes (a substitution): what the command read
#: is not what its words say, so its selection is not re-done (every line)
_EXPANDS = re.compile(r"\$\(|`|\$\{|<\(")


def _expands(argv: Sequence[str]) -> bool:
    return any(_EXPANDS.search(word) for word in argv)


def shell_expands(command: str) -> bool:
    """Whether bash would expand something in ``command`` outside single quotes: a variable
    (``$P``, ``${P}``, ``$1``), a substitution (``$(...)``, backquotes, ``<(...)``): the words
    the audit re-runs would then differ from the ones the agent's program got (a sed script
    ``"$p"`` set to ``1,$p`` before). A ``$`` before nothing or a quote (``'x$'``, ``"x$"``)
    expands nothing."""
    quote = ""
    k = 0
    while k < len(command):
        c = command[k]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            k += 1
        elif c == "'" and not quote:
            quote = "'"
        elif c == '"':
            quote = "" if quote == '"' else '"'
        elif c == "`":
            return True
        elif c == "$" and re.match(r"[A-Za-z_{(@*#?!0-9-]", command[k + 1 : k + 2]):
            return True
        elif c == "<" and command[k + 1 : k + 2] == "(" and not quote:
            return True
        k += 1
    return False


def _pattern_file(value: str, root: Path) -> bool:
    """Whether grep's ``-f`` file can be read again as the agent's grep read it: a file of the
    checkout (stdin, ``/dev/fd``, a file outside the checkout or made and gone: no)."""
    rel = value.removeprefix("./")
    if not rel or rel == "-" or rel.startswith(("/", "~")) or ".." in rel.split("/"):
        return False
    return (root / rel).is_file()


def _lines(data: bytes) -> list[str]:
    """A file's lines as grep and sed count them (split at newline bytes)."""
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def whole_file(path: Path) -> list[str] | None:
    """Every line of ``path`` (None when it cannot be read or is too large)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        return _lines(path.read_bytes())
    except OSError:
        return None


def _numbered(lines: Sequence[str], numbers: Sequence[int]) -> list[str]:
    return [lines[n - 1] for n in sorted(set(numbers)) if 0 < n <= len(lines)]


#: grep options that print less of a selected line or none (the lines are selected all the same)
_GREP_SHAPE = frozenset("clLqonhHbsTZu")
_GREP_MATCH = frozenset("iyEFGPwxvaIU")
_GREP_VALUED = frozenset("ABCmef")
_GREP_LONG_SHAPE = frozenset(
    {
        "--count",
        "--files-with-matches",
        "--files-without-match",
        "--quiet",
        "--silent",
        "--only-matching",
        "--line-number",
        "--no-filename",
        "--with-filename",
        "--byte-offset",
        "--no-messages",
        "--initial-tab",
        "--null",
        "--line-buffered",
        "--recursive",
        "--dereference-recursive",
    }
)
_GREP_LONG_MATCH = {
    "--ignore-case": "-i",
    "--no-ignore-case": "--no-ignore-case",
    "--extended-regexp": "-E",
    "--fixed-strings": "-F",
    "--basic-regexp": "-G",
    "--perl-regexp": "-P",
    "--word-regexp": "-w",
    "--line-regexp": "-x",
    "--invert-match": "-v",
    "--text": "-a",
    "--binary": "-U",
}
_GREP_LONG_VALUED = {
    "--regexp": "-e",
    "--file": "-f",
    "--max-count": "-m",
    "--after-context": "-A",
    "--before-context": "-B",
    "--context": "-C",
}
#: options that chose which files a recursive search read (the hidden file is among them)
_GREP_SCOPE = ("--include", "--exclude", "--exclude-dir", "--color", "--colour", "--binary-files")


def _grep_args(argv: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """(grep's matching options and patterns, its file operands) of a grep command line;
    None for an option not known here (``-z`` changes what a line is)."""
    args: list[str] = {"egrep": ["-E"], "fgrep": ["-F"]}.get(_basename(argv[0]), [])
    patterns: list[str] = []
    plain: list[str] = []
    k = 1
    while k < len(argv):
        word = argv[k]
        if word == "--":
            plain += argv[k + 1 :]
            break
        name, eq, value = word.partition("=")
        if name in _GREP_SCOPE:
            if name == "--binary-files" and eq:
                args.append(word)
            k += 1 if eq or name in ("--color", "--colour") else 2
            continue
        if word.startswith("--"):
            if name in _GREP_LONG_VALUED:
                if not eq:
                    k += 1
                    value = argv[k] if k < len(argv) else ""
                flag = _GREP_LONG_VALUED[name]
                (patterns if flag in ("-e", "-f") else args).extend([flag, value])
            elif word in _GREP_LONG_MATCH:
                args.append(_GREP_LONG_MATCH[word])
            elif word not in _GREP_LONG_SHAPE:
                return None
        elif word.startswith("-") and len(word) > 1:
            j = 1
            while j < len(word):
                c = word[j]
                if c in _GREP_VALUED:
                    val = word[j + 1 :] or (argv[k + 1] if k + 1 < len(argv) else "")
                    if not word[j + 1 :]:
                        k += 1
                    (patterns if c in "ef" else args).extend([f"-{c}", val])
                    break
                if c.isdigit():  # -5: context of 5 lines
                    digits = re.match(r"\d+", word[j:])
                    assert digits is not None
                    args += ["-C", digits[0]]
                    j += len(digits[0])
                    continue
                if c in _GREP_MATCH:
                    args.append(f"-{c}")
                elif c not in _GREP_SHAPE and c not in "rR":
                    return None
                j += 1
        else:
            plain.append(word)
        k += 1
    if not patterns:
        if not plain:
            return None
        patterns, plain = ["-e", plain[0]], plain[1:]
    return [*args, *patterns], plain


def grep_selects(argv: Sequence[str], root: Path, rel: str, *, upto: int = 0) -> list[str] | None:
    """The lines a grep command line selects of the file ``rel`` of the checkout ``root``
    (its matches and context lines, whatever it printed of them): grep re-run on that file
    alone with ``-n`` and ``-a`` (a binary file's matching lines too); ``upto``: only those
    before that line. None when it cannot be re-run (an option not known, a time-out)."""
    if not argv or _basename(argv[0]) not in ("grep", "egrep", "fgrep") or _expands(argv):
        return None
    parsed = _grep_args(argv)
    path = (root / rel).resolve()
    if parsed is None or not path.is_file():
        return None
    files = [v for flag, v in zip(parsed[0], parsed[0][1:], strict=False) if flag == "-f"]
    if not all(_pattern_file(v, root) for v in files):
        return None
    args = parsed[0]
    if not any(a in ("-I", "-a") or a.startswith("--binary-files") for a in args):
        args = ["-a", *args]
    try:
        proc = subprocess.run(
            ["grep", "-n", "--no-filename", "--color=never", *args, "--", str(path)],
            cwd=root,
            capture_output=True,
            timeout=_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
            env=_ENV,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode > 1:
        return None
    numbers = [int(m[1]) for m in re.finditer(rb"(?m)^(\d+)[:-]", proc.stdout)]
    if upto:
        numbers = [n for n in numbers if n < upto]
    lines = whole_file(path)
    return None if lines is None else _numbered(lines, numbers)


_ORACLE_SHORT = frozenset("clLq")
_ORACLE_LONG = frozenset(
    {"--count", "--files-with-matches", "--files-without-match", "--quiet", "--silent"}
)


def _nul_line(data: bytes) -> int:
    """The number of the line holding the file's first NUL byte (0: none): grep prints the
    lines of a file until it meets one, then only "Binary file F matches"."""
    at = data.find(b"\0")
    return 0 if at < 0 else data.count(b"\n", 0, at) + 1


def grep_selection(argv: Sequence[str], root: Path, rel: str) -> Selection | None:
    """:func:`grep_selects` as a :class:`Selection`; an oracle (``-c``/``-l``/``-L``/``-q``: no
    line printed) without ``-P`` carries what grep matched (its ``-o`` matches, re-run
    likewise; a Perl pattern's lookaround prints less than it tested); a file
    read without ``-a`` selects only its lines before the first NUL byte's line (grep then
    prints "Binary file F matches", no line: no oracle asked for, a known residual). None
    when grep cannot be re-run."""
    parsed = _grep_args(argv)
    if parsed is None or _expands(argv):
        return None
    args, opts = parsed[0], [w for w in argv[1:] if w.startswith("-")]
    flags = [w for w in opts if not re.fullmatch(r"-[ABCmef]\S*|--\S+=.*", w)]
    counted = any(
        w in _ORACLE_LONG or (not w.startswith("--") and set(w[1:]) & _ORACLE_SHORT) for w in flags
    )
    # Perl's lookarounds and \K print less than the match they tested: no proof (S9)
    perl = any(w == "--perl-regexp" or (not w.startswith("--") and "P" in w) for w in flags)
    text = any(a == "-a" or a == "--binary-files=text" for a in args)
    try:
        upto = 0 if text or counted else _nul_line((root / rel).read_bytes()[:MAX_BYTES])
    except OSError:
        return None
    lines = grep_selects(argv, root, rel, upto=upto)
    if lines is None:
        return None
    if not counted or "-v" in args or perl:
        return Selection(rel, lines, False)
    keep: list[str] = []
    skip = False
    for a in args:  # the matching options: the context ones and their values dropped
        if skip or a in ("-A", "-B", "-C"):
            skip = not skip
            continue
        keep.append(a)
    try:
        proc = subprocess.run(
            ["grep", "-a", "-o", "--no-filename", "--color=never", *keep, "--", str(root / rel)],
            cwd=root,
            capture_output=True,
            timeout=_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
            env=_ENV,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode > 1:
        return None
    found = tuple(dict.fromkeys(proc.stdout.decode("utf-8", "replace").splitlines()))
    return Selection(rel, lines, False, found)


def _head_tail(argv: Sequence[str]) -> tuple[str, int, bool, list[str]] | None:
    """(unit ``lines``/``bytes``, count, from the K-th (``+K``), files) of ``head``/``tail``
    with ``-n``/``-c`` options (``-q``/``-v`` too); None for another option (``-f``, ``-z``)."""
    unit, count, plus, files, k = "lines", 10, False, [], 1
    while k < len(argv):
        word = argv[k]
        value = None
        if word == "--":
            files += argv[k + 1 :]
            break
        name, eq, val = word.partition("=")
        if name in ("--lines", "--bytes") and eq:
            unit, value = name[2:], val
        elif word in ("--quiet", "--silent", "--verbose"):
            pass
        elif re.fullmatch(r"-\d+", word):
            unit, value = "lines", word[1:]
        elif word.startswith("-") and len(word) > 1:
            m = re.fullmatch(r"-([qv]*)([nc])?(.*)", word)
            if m is None or (m[3] and not m[2]):
                return None
            if m[2]:
                unit = "lines" if m[2] == "n" else "bytes"
                value = m[3]
                if not value:
                    k += 1
                    value = argv[k] if k < len(argv) else ""
        else:
            files.append(word)
        if value is not None:
            if not re.fullmatch(r"[+-]?\d+", value):
                return None
            plus, count = value.startswith("+"), int(value)
        k += 1
    return unit, count, plus, files


def _cut(name: str, spec: tuple[str, int, bool], data: bytes) -> list[str]:
    """The lines ``head``/``tail`` with ``spec`` select of a file's ``data``."""
    unit, count, plus = spec
    lines = _lines(data)
    if unit == "lines":
        if name == "head":
            return lines[:count] if count >= 0 else lines[:count]
        if plus:
            return lines[max(count - 1, 0) :]
        return lines[-abs(count) :] if count else []
    if name == "head":
        start, end = 0, (count if count >= 0 else max(len(data) + count, 0))
    elif plus:
        start, end = max(count - 1, 0), len(data)
    else:
        start, end = max(len(data) - abs(count), 0), len(data) if count else len(data)
    if end <= start:
        return []
    first = data.count(b"\n", 0, start)
    last = data.count(b"\n", 0, max(end - 1, 0))
    return lines[first : last + 1]


_SED_ADDR = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/I?)"
_SED_ADDR2 = rf"(?:{_SED_ADDR}|[+~]\d+)"
_SED_CMD = re.compile(
    rf"\s*(?P<addr>(?:{_SED_ADDR}\s*(?:,\s*{_SED_ADDR2})?)?)\s*(?P<neg>!?)\s*(?P<op>[pq])\s*(?:;|\n|$)"
)


def _sed_script(script: str) -> str | None:
    """The script with each ``p`` made ``=``, or None when it holds another command."""
    out, pos = [], 0
    while pos < len(script):
        if not script[pos:].strip():
            break
        m = _SED_CMD.match(script, pos)
        if m is None or m.end() == pos:
            return None
        out.append(f"{m['addr']}{m['neg']}{'=' if m['op'] == 'p' else 'q'}")
        pos = m.end()
    return "\n".join(out) if out else None


def _sed_args(argv: Sequence[str]) -> tuple[list[str], str, list[str]] | None:
    """(options, script made to number lines, files) of ``sed [-n] SCRIPT FILE...`` (without
    ``-n``, every line read is numbered too: ``sed '/re/q'`` selects the lines up to the
    first match)."""
    quiet, opts, scripts, files = False, [], [], []
    k = 1
    while k < len(argv):
        word = argv[k]
        if word in ("-n", "--quiet", "--silent"):
            quiet = True
        elif word in ("-E", "-r", "--regexp-extended", "--posix"):
            opts.append("-E" if word != "--posix" else word)
        elif re.fullmatch(r"-[nEru]+", word):
            quiet = quiet or "n" in word
            opts += ["-E"] if set(word[1:]) & set("Er") else []
        elif word in ("-e", "--expression") and k + 1 < len(argv):
            k += 1
            scripts.append(argv[k])
        elif word.startswith("--expression="):
            scripts.append(word.split("=", 1)[1])
        elif word.startswith("-") and len(word) > 1:
            return None  # -i edits, -f reads a script, -s/-z change what a line is
        elif not scripts:
            scripts.append(word)
        else:
            files.append(word)
        k += 1
    if not scripts:
        return None
    made = _sed_script("\n".join(scripts))
    if made is not None and not quiet:
        made = "=\n" + made  # without -n sed prints every line it reads, up to a q
    return None if made is None else (opts, made, files)


def _sed_selects(opts: Sequence[str], script: str, path: Path) -> list[str] | None:
    try:
        proc = subprocess.run(
            ["sed", "--sandbox", "-n", *opts, "-e", script, "--", str(path)],
            capture_output=True,
            timeout=_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
            env=_ENV,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    lines = whole_file(path)
    numbers = [int(w) for w in proc.stdout.split() if w.isdigit()]
    return None if lines is None else _numbered(lines, numbers)


_AWK_TEST = r"NR\s*(==|>=|<=|>|<)\s*(\d+)"
_AWK = re.compile(
    rf"\s*{_AWK_TEST}(?:\s*&&\s*{_AWK_TEST})?\s*(?:\{{\s*print(?:\s+\$0)?\s*;?\s*\}})?\s*"
)


def _awk_selects(program: str, lines: Sequence[str]) -> list[str] | None:
    m = _AWK.fullmatch(program)
    if m is None:
        return None
    tests = [(m[1], int(m[2]))] + ([(m[3], int(m[4]))] if m[3] else [])
    ops = {
        "==": lambda n, v: n == v,
        ">=": lambda n, v: n >= v,
        "<=": lambda n, v: n <= v,
        ">": lambda n, v: n > v,
        "<": lambda n, v: n < v,
    }
    return [ln for n, ln in enumerate(lines, 1) if all(ops[op](n, v) for op, v in tests)]


def _hidden_files(words: Sequence[str], root: Path, hidden: Sequence[str]) -> list[str] | None:
    """The hidden files of the checkout the operand ``words`` name (a glob expanded as the
    shell would), relative to ``root``; None when one names a hidden path that is no file."""
    found: list[str] = []
    if any("\0" in w for w in words):
        return None  # bash cuts a word at a NUL: what it read cannot be re-done (kept)
    for word in words:
        rel = word.removeprefix("./")
        if not rel or rel.startswith(("/", "~", "$")) or ".." in rel.split("/"):
            continue
        paths = sorted(root.glob(rel)) if re.search(r"[*?\[]", rel) else [root / rel]
        for path in paths:
            real = path.resolve()
            inner = real.relative_to(root).as_posix() if root in real.parents else ""
            if inner and any(inner == h or inner.startswith(h + "/") for h in hidden):
                if not real.is_file():
                    return None
                found.append(inner)
    return found


def selections(
    cmd: SimpleCommand, workdir: str | Path, hidden_paths: Sequence[str]
) -> list[Selection] | None:
    """The lines ``cmd`` (one command of a step: a pipe's first, or a command the caller
    found reading a hidden file) selects of each hidden file of ``workdir`` it names, re-done
    on the checkout (module doc); None when it names none that can be read (the caller keeps
    the read)."""
    root = Path(workdir).resolve()
    hidden = [p.strip().strip("/").removeprefix("./") for p in hidden_paths if p.strip("/ ")]
    argv = list(cmd.argv)
    name = _basename(argv[0]) if argv else ""
    operands: list[str] = [w for w in argv[1:] if not w.startswith("-")]
    how: str = "whole"
    spec: tuple[str, int, bool] | None = None
    sed: tuple[list[str], str, list[str]] | None = None
    awk: str | None = None
    if _expands(argv):
        pass  # the shell expands a word: every line of the hidden files named
    elif name in ("grep", "egrep", "fgrep"):
        parsed = _grep_args(argv)
        if parsed is not None:
            how, operands = "grep", parsed[1]
    elif name in ("head", "tail"):
        cut = _head_tail(argv)
        if cut is not None:
            how, spec, operands = "cut", cut[:3], cut[3]
    elif name == "sed":
        sed = _sed_args(argv)
        if sed is not None and len(sed[2]) == 1:
            how, operands = "sed", sed[2]
    elif name == "awk" and len(argv) == 3:
        how, awk, operands = "awk", argv[1], [argv[2]]
    files = _hidden_files(operands, root, hidden)
    if not files:
        return None
    out: list[Selection] = []
    for rel in files:
        path = root / rel
        lines = whole_file(path)
        if lines is None:
            return None
        picked: list[str] | None = None
        if how == "grep":
            chosen = grep_selection(argv, root, rel)
            if chosen is not None:
                out.append(chosen)
                continue
        elif how == "cut" and spec is not None:
            try:
                picked = _cut(name, spec, path.read_bytes())
            except OSError:
                picked = None
        elif how == "sed" and sed is not None:
            picked = _sed_selects(sed[0], sed[1], path)
        elif how == "awk" and awk is not None:
            picked = _awk_selects(awk, lines)
        whole = picked is None
        out.append(Selection(rel, lines if picked is None else picked, whole))
    return out


def strings_selects(
    argv: Sequence[str],
    after: Sequence[SimpleCommand],
    workdir: str | Path,
    hidden_paths: Sequence[str],
) -> list[Selection] | None:
    """What ``strings`` of hidden files, cut by the ``head``/``tail -n K`` ``after`` it in its
    pipe, selects: the bytes from the file's start to the end of the K-th string it prints
    (``head``), or from the start of the K-th from the end (``tail``), as lines; every line
    with no cut. None for another option or filter (the caller keeps the read)."""
    from evotree.harness.audit.hidden_parts import hidden_file  # noqa: PLC0415 - a cycle

    least, files, k = 4, [], 1
    while k < len(argv):
        word = argv[k]
        value = None
        if word in ("-a", "--all", "-"):
            pass
        elif word.startswith("--bytes="):
            value = word.split("=", 1)[1]
        elif word in ("-n", "--bytes"):
            k += 1
            value = argv[k] if k < len(argv) else ""
        elif re.fullmatch(r"-n\d+|-\d+", word):
            value = word.lstrip("-n")
        elif word.startswith("-"):
            return None
        else:
            files.append(word)
        if value is not None:
            if not value.isdigit() or int(value) < 1:
                return None
            least = int(value)
        k += 1
    root = Path(workdir).resolve()
    hidden = [p.strip().strip("/").removeprefix("./") for p in hidden_paths if p.strip("/ ")]
    paths = [hidden_file(w, root, hidden) for w in files]
    if not paths or any(p is None for p in paths):
        return None
    cuts: list[tuple[str, int, bool]] = []
    for cmd in after:
        name = _basename(cmd.argv[0]) if cmd.argv else ""
        parsed = _head_tail(cmd.argv) if name in ("head", "tail") else None
        if parsed is None or parsed[0] != "lines" or parsed[3] or cmd.redirects:
            return None
        cuts.append((name, parsed[1], parsed[2]))
    if len(cuts) > 1 or len(paths) > 1 and cuts:
        return None  # more than one cut, or a cut across files: not computed here
    found = re.compile(rb"[\t\x20-\x7e]{%d,}" % least)
    out: list[Selection] = []
    for path in paths:
        assert path is not None
        if path.stat().st_size > MAX_BYTES:
            return None
        data = path.read_bytes()
        rel = path.relative_to(root).as_posix()
        if not cuts:
            out.append(Selection(rel, _lines(data), True))
            continue
        name, count, plus = cuts[0]
        spans = [m.span() for m in found.finditer(data)]
        if name == "head":
            kept = spans[:count] if count >= 0 else spans[:count]
        elif plus:
            kept = spans[max(count - 1, 0) :]
        else:
            kept = spans[-abs(count) :] if count else []
        if not kept:
            out.append(Selection(rel, [], False))
            continue
        start = 0 if name == "head" else kept[0][0]
        end = kept[-1][1] if name == "head" else len(data)
        out.append(Selection(rel, _lines(data[start:end]), False))
    return out
