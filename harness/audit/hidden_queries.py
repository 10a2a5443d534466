"""A structured query of a hidden file, judged by what it can print.

``sqlite3 DB 'select a, b from t'`` and ``jq '.x[].y' FILE`` print values the query selects
from the file, and nothing else: no code runs, no other byte of the file is shown. With the
task repository the audit opens the hidden file itself (read-only), takes every value the
query can print (all rows of the columns named, whatever its ``where`` keeps, and of every
column its tail reads: ``select line ... where source like '%x%'`` shows by its rows whether
``source`` holds a text; every value a jq path reaches) and judges them as it judges a recorded output, by content provenance: a
value holding a line of the provenance index (a line a future commit adds, a distinctive line
of a hidden file) keeps the read high; otherwise the query printed metadata (times, counts,
file names, settings) and the read is cleared. Only plain forms are evaluated: bare column
names of one table (or ``*``) and ``count(*)`` columns (one number) with a tail free of calls
and sub-queries; a jq filter made of paths (``.a.b[0]``, ``.a[]``, ``."k"``, comma-separated)
and stages of them or of an object shorthand piped on (``.a[0] | {mean, rounds}``). Anything
else (``.dump``, a function, ``jq 'map(...)'``, an unknown option) is not evaluated and stays as
the rule said.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from evotree.harness.audit.future_content import MIN_ALNUM, MIN_LINE
from evotree.harness.audit.lexer import _basename

__all__ = [
    "SCHEMA_COMMAND",
    "holds_index_line",
    "line_count",
    "query_values",
    "read_prints",
    "search_prints",
    "sqlite_files_and_args",
]

#: sqlite3 shell options that only shape the output (their value, if any, is layout)
_SQLITE_FLAGS = frozenset(
    {
        "-header",
        "-noheader",
        "-column",
        "-csv",
        "-json",
        "-line",
        "-list",
        "-box",
        "-table",
        "-markdown",
        "-quote",
        "-tabs",
        "-readonly",
        "-batch",
        "-bail",
        "-safe",
    }
)
_SQLITE_VALUED = frozenset({"-separator", "-newline", "-nullvalue"})
#: dot-commands that print the schema (table and index definitions) or names, never a row
SCHEMA_COMMAND = re.compile(
    r"^\s*\.(?:schema|tables|indexes|indices|databases)(?:\s+(?:--indent|[\w%*?.-]+))*\s*;?\s*$"
)
_IDENT = r'(?:[A-Za-z_][A-Za-z0-9_]*|"[A-Za-z_][A-Za-z0-9_ ]*"|\[[A-Za-z_][A-Za-z0-9_ ]*\])'
#: a column of a plain select: a name, or a count of rows (``count(*)``, ``count(col)``)
_COLUMN = rf"(?:{_IDENT}|count\s*\(\s*(?:\*|{_IDENT})\s*\))"
_COUNT = re.compile(r"count\s*\(", re.I)
_SELECT = re.compile(
    rf"^\s*select\s+(?P<cols>\*|{_COLUMN}(?:\s*,\s*{_COLUMN})*)\s+from\s+(?P<table>{_IDENT})"
    r"(?P<tail>(?:\s+(?:where|order|group|limit)\b[^;()]*)?)\s*;?\s*$",
    re.I,
)
#: words of a tail that print more than the columns named (another select joined on) or, for
#: a count, make it a probe of the rows' text (a count's tail may only limit or order)
_SQL_MORE = re.compile(r"\b(?:union|intersect|except|select|join)\b", re.I)
_COUNT_PROBE = re.compile(r"\b(?:where|group|having)\b", re.I)
#: functions of the sqlite3 shell that read or write files or run an editor
_SQL_SIDE = re.compile(r"\b(?:readfile|writefile|edit|load_extension|fts3_tokenizer)\b", re.I)
#: jq options that only shape the output
_JQ_FLAGS = frozenset(
    {"-r", "-c", "-M", "-C", "-S", "-j", "--raw-output", "--compact-output", "--tab"}
)
#: one step of a jq path: ``.key``, ``."key"``, ``[N]``, ``[]``, ``["key"]``, each maybe ``?``
_JQ_STEP = re.compile(
    r'\s*(?:\.(?P<key>[A-Za-z_][A-Za-z0-9_]*)|\.?"(?P<qkey>[^"\\]*)"|\.?\[\s*(?:(?P<num>-?\d+)'
    r'|"(?P<bkey>[^"\\]*)")?\s*\])\??'
)
#: the most rows per column read to judge a query
_MAX_ROWS = 200_000
#: the most SQLite virtual machine steps spent judging one query
_SQL_STEPS = 50_000_000
#: the largest JSON file a jq query is judged on (a larger one: not evaluated)
_MAX_JSON = 32 << 20


def _unquote(ident: str) -> str:
    return ident[1:-1] if ident[:1] in ('"', "[") else ident


def sqlite_files_and_args(argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """(database, its SQL/dot-command arguments) of ``sqlite3 [layout options] DB ARG...``,
    or None for any other option (``-cmd``, ``-init`` run more) or no argument (stdin)."""
    if not argv or _basename(argv[0]) != "sqlite3":
        return None
    k = 1
    while k < len(argv) and argv[k].startswith("-"):
        opt = "-" + argv[k].lstrip("-")
        if opt in _SQLITE_VALUED:
            k += 2
        elif opt in _SQLITE_FLAGS:
            k += 1
        else:
            return None
    if k >= len(argv) - 1:
        return None
    return argv[k], list(argv[k + 1 :])


class _Budget:
    """SQLite's progress handler: stop a statement after ``_SQL_STEPS`` virtual machine steps
    (a corrupt or hostile database cannot keep the audit waiting)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> int:
        self.calls += 1
        return int(self.calls * 10_000 > _SQL_STEPS)


#: a string literal of SQL (``'it''s'``): no column in it
_SQL_STRING = re.compile(r"'(?:[^']|'')*'")
#: a name in SQL: bare, "quoted", [bracketed] or `ticked`
_SQL_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*|"(?:[^"]|"")*"|\[[^\]]*\]|`(?:[^`]|``)*`')


def _tail_words(tail: str) -> set[str]:
    """The names a select's tail may read a column by (lower case; string literals left out):
    more than it reads is harmless, a column counted here is only judged too."""
    words: set[str] = set()
    for name in _SQL_NAME.findall(_SQL_STRING.sub(" ", tail)):
        if name[:1] in '"[`':
            name = name[1:-1].replace(name[0] * 2, name[0]) if name[0] != "[" else name[1:-1]
        words.add(name.lower())
    return words


def _sqlite_values(db: Path, args: Sequence[str]) -> list[str] | None:
    try:
        con = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
    except (sqlite3.Error, ValueError):
        return None
    values: list[str] = []
    con.set_progress_handler(_Budget(), 10_000)  # a non-zero return aborts the statement
    try:
        for arg in args:
            if SCHEMA_COMMAND.match(arg):
                values += [str(r[0]) for r in con.execute("select sql from sqlite_master") if r[0]]
                continue
            m = _SELECT.match(arg)
            if not m or _SQL_SIDE.search(arg) or _SQL_MORE.search(m["tail"]):
                return None
            if _COUNT.search(m["cols"]) and _COUNT_PROBE.search(m["tail"]):
                return None  # the count of rows whose text matches: a probe of the text
            table = _unquote(m["table"])
            kind = con.execute("select type from sqlite_master where name = ?", (table,)).fetchone()
            if not kind or kind[0] != "table":
                return None  # a view runs its own SQL: not evaluated
            known = [str(r[1]) for r in con.execute(f'pragma table_info("{table}")')]
            if not known:
                return None
            # a count prints one number per group: no line of the file (its column, if named,
            # must still be one the table has)
            named = [c.strip() for c in m["cols"].split(",")]
            counted = [re.sub(r"^count\s*\(\s*|\s*\)$", "", c, flags=re.I) for c in named]
            if any(c != "*" and _unquote(c) not in known for c in counted if c):
                return None
            cols = (
                known if m["cols"] == "*" else [_unquote(c) for c in named if not _COUNT.match(c)]
            )
            if any(c not in known for c in cols):
                return None
            # a column the tail reads (``where source like '%..%'``, ``order by``) is shown
            # by which rows print: judged as if it were printed (S10)
            probed = [c for c in known if c.lower() in _tail_words(m["tail"]) and c not in cols]
            for col in cols + probed:
                rows = con.execute(f'select "{col}" from "{table}" limit {_MAX_ROWS + 1}')
                got = [r[0] for r in rows]
                if len(got) > _MAX_ROWS:
                    return None
                values += [v if isinstance(v, str) else repr(v) for v in got if v is not None]
    except sqlite3.Error:
        return None
    finally:
        con.close()
    return values


def _jq_paths(filt: str) -> list[list[tuple[str, Any]]] | None:
    """The paths of a comma-separated jq filter of paths, or None for anything else."""
    paths: list[list[tuple[str, Any]]] = []
    for part in filt.split(","):
        text = part.strip()
        if text == ".":
            paths.append([])
            continue
        steps: list[tuple[str, Any]] = []
        pos = 0
        while pos < len(text):
            m = _JQ_STEP.match(text, pos)
            if not m or m.end() == pos:
                return None
            if m["key"] is not None or m["qkey"] is not None or m["bkey"] is not None:
                steps.append(("key", m["key"] or m["qkey"] or m["bkey"] or ""))
            elif m["num"] is not None:
                steps.append(("index", int(m["num"])))
            else:
                steps.append(("each", None))
            pos = m.end()
        if not steps or not text.startswith("."):
            return None
        paths.append(steps)
    return paths


#: jq's object shorthand ``{a, b, "c"}``: each key's value under the key's own name
_JQ_OBJECT = re.compile(
    r'\{\s*((?:[A-Za-z_][A-Za-z0-9_]*|"[^"\\]*")(?:\s*,\s*(?:[A-Za-z_][A-Za-z0-9_]*|"[^"\\]*"))*)\s*\}'
)


def _jq_stages(filt: str) -> list[list[list[tuple[str, Any]]] | tuple[str, ...]] | None:
    """The stages of a jq filter ``STAGE | STAGE ...``, each the paths of a comma-separated
    filter of paths (:func:`_jq_paths`) or the keys of an object shorthand ``{a, b}`` (a tuple:
    jq builds the object of its input's values under those keys, which a later stage may walk
    on); None for anything else. A ``|`` inside a quoted key is no stage's end (not
    evaluated)."""
    if '"' in filt and "|" in filt:
        return None
    stages: list[list[list[tuple[str, Any]]] | tuple[str, ...]] = []
    for part in filt.split("|"):
        obj = _JQ_OBJECT.fullmatch(part.strip())
        if obj:
            stages.append(tuple(k.strip().strip('"') for k in obj[1].split(",")))
            continue
        paths = _jq_paths(part)
        if paths is None:
            return None
        stages.append(paths)
    return stages


def _walk(doc: Any, steps: Sequence[tuple[str, Any]]) -> Iterable[Any]:
    if not steps:
        yield doc
        return
    (kind, arg), rest = steps[0], steps[1:]
    if kind == "key" and isinstance(doc, dict) and arg in doc:
        yield from _walk(doc[arg], rest)
    elif kind == "index" and isinstance(doc, list) and -len(doc) <= arg < len(doc):
        yield from _walk(doc[arg], rest)
    elif kind == "each":
        for item in doc.values() if isinstance(doc, dict) else doc if isinstance(doc, list) else []:
            yield from _walk(item, rest)


def _leaves(value: Any) -> Iterable[str]:
    """Every string and key inside a JSON value (what jq prints of it, decoded)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif value is not None:
        yield value if isinstance(value, str) else json.dumps(value)


def _jq_values(argv: Sequence[str], find: Any) -> list[str] | None:
    plain: list[str] = []
    k = 1
    while k < len(argv):
        word = argv[k]
        if word == "--indent":
            k += 2
            continue
        if word.startswith("-") and word != "-":
            if word not in _JQ_FLAGS:
                return None
        else:
            plain.append(word)
        k += 1
    if len(plain) < 2:
        return None  # no filter, or the file comes on stdin
    stages = _jq_stages(plain[0])
    if stages is None:
        return None
    values: list[str] = []
    for name in plain[1:]:
        path = find(name)
        if path is None:
            return None
        try:
            if path.stat().st_size > _MAX_JSON:
                return None
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        docs = [doc]
        for stage in stages:
            if isinstance(stage, tuple):  # {a, b}: the object jq builds of its input's keys
                docs = [{k: d.get(k) if isinstance(d, dict) else None for k in stage} for d in docs]
                continue
            docs = [value for d in docs for steps in stage for value in _walk(d, steps)]
        for value in docs:
            values += list(_leaves(value))
    return values


def query_values(
    argv: Sequence[str], workdir: str | Path, hidden_paths: Sequence[str]
) -> list[str] | None:
    """Every value a ``sqlite3``/``jq`` query of hidden files of ``workdir`` can print, or
    None when the query is not a plain one, or names a file that is not a hidden file of the
    work tree (module doc)."""
    root = Path(workdir).resolve()
    hidden = [p.strip().strip("/").removeprefix("./") for p in hidden_paths if p.strip("/ ")]

    def find(word: str) -> Path | None:
        rel = word.removeprefix("./")
        if rel.startswith(("/", "~", "$")) or ".." in rel.split("/"):
            return None
        if not any(rel == h or rel.startswith(h + "/") for h in hidden):
            return None
        path = (root / rel).resolve()
        return path if path.is_file() and root in path.parents else None

    name = _basename(argv[0]) if argv else ""
    if name == "jq":
        return _jq_values(argv, find)
    parsed = sqlite_files_and_args(argv)
    if parsed is None:
        return None
    db = find(parsed[0])
    return None if db is None else _sqlite_values(db, parsed[1])


#: the most lines of a hidden file a ``head``/``tail`` read is judged on (a larger one: a read)
_MAX_LINES = 1_000_000


def line_count(argv: Sequence[str]) -> tuple[int, bool, list[str]] | None:
    """(count, from the line's start (``tail -n +K``), operands) of ``head``/``tail`` with
    line options only (``-n K``, ``-nK``, ``-K``, ``--lines=K``, ``-q``, ``-v``, combined as
    ``-qn1``); None for anything else (``-c``, ``-f``, ``-z``, an unknown option)."""
    count, plus, files, k = 10, False, [], 1
    while k < len(argv):
        word = argv[k]
        value = None
        if word == "--":
            files += argv[k + 1 :]
            break
        if word.startswith("--lines="):
            value = word.split("=", 1)[1]
        elif word in ("--quiet", "--silent", "--verbose"):
            pass
        elif re.fullmatch(r"-\d+", word):
            value = word[1:]
        elif word.startswith("-") and len(word) > 1:
            flags, has_n, rest = word[1:].partition("n")
            if set(flags) - set("qv"):
                return None
            if has_n:
                if not rest:
                    k += 1
                    rest = argv[k] if k < len(argv) else ""
                value = rest
        else:
            files.append(word)
        if value is not None:
            plus = value.startswith("+")
            if not re.fullmatch(r"[+-]?\d+", value):
                return None
            count = int(value)
        k += 1
    return count, plus, files


def read_prints(
    argv: Sequence[str], workdir: str | Path, hidden_paths: Sequence[str]
) -> list[str] | None:
    """What ``head``/``tail -n K`` prints of each hidden file it names (a glob expanded in
    ``workdir``, as the shell would), read-only; a non-recursive ``grep`` is re-run on each.
    None when the command is another one, has another option, or names no hidden file of the
    work tree that can be read (the caller keeps the read)."""
    name = _basename(argv[0]) if argv else ""
    if name not in ("head", "tail", "grep", "egrep", "fgrep") or any("\0" in w for w in argv):
        return None  # a NUL in a word: bash cuts it there, so it is not re-done (kept)
    root = Path(workdir).resolve()
    hidden = [p.strip().strip("/").removeprefix("./") for p in hidden_paths if p.strip("/ ")]
    if name in ("head", "tail"):
        parsed = line_count(argv)
        if parsed is None:
            return None
        count, plus, words = parsed
    else:
        if any(w in ("-r", "-R") or re.fullmatch(r"-[A-Za-z]*[rRf][A-Za-z]*", w) for w in argv):
            return None  # a recursive search, or a pattern file: judged elsewhere
        words = [w for w in argv[1:] if not w.startswith("-")]
    found: list[Path] = []
    for word in words:
        rel = word.removeprefix("./")
        if rel.startswith(("/", "~", "$")) or ".." in rel.split("/"):
            continue
        paths = sorted(root.glob(rel)) if re.search(r"[*?\[]", rel) else [root / rel]
        for path in paths:
            real = path.resolve()
            inner = real.relative_to(root).as_posix() if root in real.parents else ""
            if any(inner == h or inner.startswith(h + "/") for h in hidden):
                if not path.is_file():
                    return None
                found.append(path)
    if not found:
        return None
    out: list[str] = []
    for path in found:
        if name not in ("head", "tail"):
            printed = search_prints(argv, root, path.relative_to(root).as_posix())
            if printed is None:
                return None
            out.append(printed)
            continue
        try:
            lines = path.read_bytes().decode("utf-8", "replace").splitlines()
        except OSError:
            return None
        if len(lines) > _MAX_LINES:
            return None
        if name == "head":
            out.append("\n".join(lines[:count]))
        elif plus:
            out.append("\n".join(lines[max(count - 1, 0) :]))
        else:
            out.append("\n".join(lines[-abs(count) :] if count else []))
    return out


def holds_index_line(
    values: Iterable[str], lines: Iterable[str], *, inside: bool = False, parts: bool = False
) -> bool:
    """Does any value hold, as one of its lines (stripped), a line of the provenance index?
    ``inside``: or a line holding one (a search's output line, a tag's pattern around it).
    ``parts``: or a distinctive line that is a piece of one (``grep -o`` prints the matches)."""
    wanted = set(lines)
    got = [line.strip() for value in values for line in value.splitlines() if line.strip()]
    if any(line in wanted for line in got):
        return True
    if parts and any(
        len(p) >= MIN_LINE and len(re.findall(r"[A-Za-z0-9]", p)) >= MIN_ALNUM and p in w
        for p in got[:10_000]
        for w in wanted
    ):
        return True
    return inside and any(w in line for line in got[:10_000] for w in wanted)


#: grep options that choose what matches or how a match is shown, passed on as they are
_GREP_FLAGS = frozenset("iyEFGPwxvaInHhoTsbuzZUclLq")
_GREP_LONG = frozenset(
    {
        "--ignore-case",
        "--no-ignore-case",
        "--extended-regexp",
        "--fixed-strings",
        "--basic-regexp",
        "--perl-regexp",
        "--word-regexp",
        "--line-regexp",
        "--invert-match",
        "--text",
        "--line-number",
        "--with-filename",
        "--no-filename",
        "--only-matching",
        "--no-messages",
        "--byte-offset",
        "--initial-tab",
        "--null",
        "--null-data",
        "--binary",
    }
)
#: grep options taking a value: context and count shape the lines printed; the others chose
#: which files it searched (already judged: the hidden file is among them)
_GREP_VALUED = {"A": True, "B": True, "C": True, "m": True, "e": True}
_GREP_SCOPE = ("--include", "--exclude", "--exclude-dir", "--color", "--colour", "--binary-files")
#: the longest a re-run search may take (a pathological pattern stops here: judged a read)
_GREP_SECONDS = 5.0


def search_prints(argv: Sequence[str], workdir: str | Path, hidden: str) -> str | None:
    """What ``grep -r … .`` printed of the hidden file ``hidden`` of ``workdir``: the same
    pattern and options, run by grep on that file alone (read-only). None when the line is
    not one grep can be re-run from (a pattern file, an option not known here, a time-out,
    a file outside the work tree): the caller judges it a read."""
    if not argv or _basename(argv[0]) not in ("grep", "egrep", "fgrep"):
        return None
    root = Path(workdir).resolve()
    path = (root / hidden.removeprefix("./")).resolve()
    if not path.is_file() or root not in path.parents:
        return None
    args: list[str] = {"egrep": ["-E"], "fgrep": ["-F"]}.get(_basename(argv[0]), [])
    pattern: list[str] = []
    plain: list[str] = []
    k = 1
    while k < len(argv):
        word = argv[k]
        name, eq, value = word.partition("=")
        if word == "--":
            plain += argv[k + 1 :]
            break
        if name in _GREP_SCOPE:
            if name == "--binary-files" and eq:
                args.append(word)  # ``=text`` prints a binary file's lines
            k += 1 if eq or name in ("--color", "--colour") else 2
            continue
        if name in ("--regexp",) and eq:
            pattern += ["-e", value]
        elif word in ("-r", "-R", "--recursive", "--dereference-recursive"):
            pass
        elif word.startswith("--"):
            if word not in _GREP_LONG:
                return None
            args.append(word)
        elif word.startswith("-") and len(word) > 1:
            j = 1
            while j < len(word):
                c = word[j]
                if c in _GREP_VALUED:
                    val = word[j + 1 :] or (argv[k + 1] if k + 1 < len(argv) else "")
                    if not word[j + 1 :]:
                        k += 1
                    (pattern if c == "e" else args).extend([f"-{c}", val])
                    break
                if c in "rR":
                    pass
                elif c in _GREP_FLAGS:
                    args.append(f"-{c}")
                else:
                    return None
                j += 1
        else:
            plain.append(word)
        k += 1
    if not pattern:
        if not plain:
            return None
        pattern = ["-e", plain[0]]
    try:
        proc = subprocess.run(
            ["grep", *args, *pattern, "--", str(path)],
            cwd=root,
            capture_output=True,
            timeout=_GREP_SECONDS,
            check=False,
            env={"LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode > 1:
        return None
    return proc.stdout.decode("utf-8", "replace")
