"""A Python program that can do nothing but print, judged with the task repository by what it
printed of the checkout's files, as a ``cat`` is (:mod:`evotree.harness.audit.hidden_reads`).

A program that opens a hidden file is a read of it whatever it printed: it can also write what
it read (apply the fix without printing it). Judging it by what it printed is only sound when it
can do nothing but print, so only a small language is evaluated here, by this module and never
by Python: ``python -c CODE`` or ``python - <<EOF`` run alone (no pipe, no redirect to a file,
no variable before it, no substitution), whose code is made of imports of ``json``/``sys``/
``re`` (only ``json.load``, ``json.loads`` and ``json.dumps`` are used), assignments to names,
``with open(PATH) as NAME:``, and ``print(...)`` of expressions built from constants, names,
``open(PATH)`` read-only, ``.read()`` of it, subscripts by a constant of a dict or a list (never
of a string: no cut of a line), ``.get``/``.keys``/``.values``/``.items`` of a dict,
``sorted``/``len``/``str``/``repr``/``list``/``tuple``/``min``/``max`` of a container and tuple or
list displays. Everything else (a loop, a comprehension, arithmetic, an attribute outside this
list, ``exec``/``eval``/``getattr``/``__import__``, ``os``/``subprocess``/``shutil``/``pathlib``,
``open`` for writing, ``print(file=...)``) is not evaluated: the read stays as the rule said.

The program is re-done on the checkout's files (a hidden file only when the provenance index
reads it); what it prints must appear in the recorded output (else the output is not this
program's on these files: a read), and the caller judges the recorded output, its JSON and
``repr`` escapes undone, and every string the program printed by content provenance. A trajectory
that names a file that would shadow an imported module (``json.py``), a ``sitecustomize``,
``usercustomize`` or ``.pth`` file, sets a ``PYTHON*`` variable or defines a shell function or
alias named ``python``, is not evaluated (the import, or the command, could run other code).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evotree.harness.audit.future_content import indexed_hidden
from evotree.harness.audit.lexer import _Lexer, _split

__all__ = ["program_prints"]

_PYTHON = re.compile(r"(?:/usr(?:/local)?/bin/)?python3?(?:\.\d+)?")
#: interpreter options that change neither what runs nor where it writes
_PY_FLAGS = frozenset({"-u", "-B", "-I", "-E", "-s", "-S", "-q", "-P"})
_MODULES = frozenset({"json", "sys", "re"})
#: of them, the ones a file of the work tree can shadow (``sys`` is built in)
_SHADOWABLE = frozenset({"json", "re"})
_JSON = frozenset({"load", "loads", "dumps"})
_CONTAINER_CALLS = frozenset({"sorted", "len", "list", "tuple", "min", "max"})
_DICT_METHODS = frozenset({"get", "keys", "values", "items"})
#: the largest file a program is re-done on that the index does not read (a tracked file)
_MAX_BYTES = 1 << 20
#: a trajectory naming one of these may have made an import (or ``python`` itself, a shell
#: function or alias of that name) run its own code
_SHADOW = (
    r"sitecustomize|usercustomize|\.pth\b|\bPYTHON[A-Z]+="
    r"|\balias\b[^\n]*\bpython|\bfunction\s+python|\bpython[\d.]*\s*\(\s*\)"
)


class _Refused(Exception):
    """The program is outside the language evaluated here: the read stays."""


class _Opened:
    """A file ``open``-ed for reading: its text."""

    def __init__(self, text: str) -> None:
        self.text = text


def _code(command: str, depth: int = 0) -> str | None:
    """The Python code of a command line that runs one ``python -c``/``python -`` program and
    nothing else (a ``bash -c`` around it once); None for anything else. A command holding a
    ``$``, a backquote or a backslash, a here-string or more than one here-document is not
    read: bash would expand or join what the lexer keeps as written (``"$P"``, ``$'\\n'``,
    backslash-newline in an unquoted here-document, a second here-document replacing the
    first), so the code evaluated here could differ from the code Python ran."""
    if re.search(r"[$`\\]|<<<", command) or command.count("<<") > 1:
        return None
    lexer = _Lexer(command).run()
    cmds = _split(lexer)
    if lexer.subs or len(cmds) != 1:
        return None
    cmd = cmds[0]
    argv = list(cmd.argv)
    if cmd.assigns or cmd.stdin is not None or cmd.grouped or cmd.xargs or not argv:
        return None
    for op, target in cmd.redirects:  # only ``2>&1`` and ``>/dev/null``: no file written
        if not (op.endswith("&") and target.isdigit()) and target != "/dev/null":
            return None
    if argv[0] in ("bash", "sh") and len(argv) == 3 and argv[1] in ("-c", "-lc") and not depth:
        return None if cmd.heredoc is not None else _code(argv[2], depth + 1)
    if not _PYTHON.fullmatch(argv[0]):
        return None
    k = 1
    while k < len(argv) and argv[k] in _PY_FLAGS:
        k += 1
    rest = argv[k:]
    if len(rest) >= 2 and rest[0] == "-c" and cmd.heredoc is None:
        return rest[1]
    if rest in ([], ["-"]) and cmd.heredoc is not None:
        body = cmd.heredoc
        return None if "$" in body or "`" in body else body  # an unquoted body expands
    return None


class _Program:
    """Evaluates the small language of the module's docstring on the checkout's files."""

    def __init__(self, root: Path, hidden: Sequence[str]) -> None:
        self.root, self.hidden = root, hidden
        self.env: dict[str, Any] = {}
        self.modules: dict[str, str] = {}
        self.printed: list[str] = []
        self.values: list[Any] = []

    def run(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            self.statement(stmt)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in _MODULES:
                    raise _Refused(alias.name)
                name = alias.asname or alias.name
                if name in self.env:
                    raise _Refused(f"rebinds {name}")
                self.modules[name] = alias.name
        elif isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                raise _Refused("assignment")
            self.bind(node.targets[0].id, self.value(node.value))
        elif isinstance(node, ast.With):
            item = node.items[0] if len(node.items) == 1 else None
            if item is None or not isinstance(item.optional_vars, ast.Name):
                raise _Refused("with")
            opened = self.value(item.context_expr)
            if not isinstance(opened, _Opened):
                raise _Refused("with")
            self.bind(item.optional_vars.id, opened)
            for stmt in node.body:
                self.statement(stmt)
        elif isinstance(node, ast.Expr) and _called(node.value, "print"):
            self.print(node.value)  # type: ignore[arg-type]
        elif not isinstance(node, ast.Pass):
            raise _Refused(type(node).__name__)

    def bind(self, name: str, value: Any) -> None:
        if name in self.modules or name in _CONTAINER_CALLS or name in ("print", "open", "str"):
            raise _Refused(f"rebinds {name}")
        self.env[name] = value

    def print(self, node: ast.Call) -> None:
        sep, end = " ", "\n"
        for kw in node.keywords:
            if kw.arg not in ("sep", "end") or not isinstance(kw.value, ast.Constant):
                raise _Refused("print option")
            if not isinstance(kw.value.value, str):
                raise _Refused("print option")
            sep, end = (kw.value.value, end) if kw.arg == "sep" else (sep, kw.value.value)
        args = [self.value(a) for a in node.args]
        if any(isinstance(a, _Opened) for a in args):
            raise _Refused("prints a file object")
        self.values += args
        self.printed.append(sep.join(str(a) for a in args) + end)

    def value(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and isinstance(
            node.value, (str, int, float, bool, type(None))
        ):
            return node.value
        if isinstance(node, ast.Name) and node.id in self.env and node.id not in self.modules:
            return self.env[node.id]
        if isinstance(node, (ast.Tuple, ast.List)) and not any(
            isinstance(e, ast.Starred) for e in node.elts
        ):
            items = [self.value(e) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call) and not any(k.arg is None for k in node.keywords):
            return self.call(node)
        raise _Refused(type(node).__name__)

    def subscript(self, node: ast.Subscript) -> Any:
        container = self.value(node.value)
        key = node.slice
        if not isinstance(key, ast.Constant) or isinstance(key.value, bool):
            raise _Refused("subscript")  # no slice, no computed index
        if isinstance(container, dict) and isinstance(key.value, (str, int, float)):
            return container[key.value]
        if isinstance(container, (list, tuple)) and isinstance(key.value, int):
            return container[key.value]
        raise _Refused("subscript of a string")  # a piece of a line: not evaluated

    def call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Name) and func.id not in self.env:
            if func.id == "open":
                return self.open(node)
            if node.keywords:
                raise _Refused("keywords")
            args = [self.value(a) for a in node.args]
            if func.id in ("str", "repr") and len(args) == 1:
                if isinstance(args[0], _Opened):
                    raise _Refused("a file object")
                return str(args[0]) if func.id == "str" else repr(args[0])
            if func.id in _CONTAINER_CALLS and len(args) == 1:
                if not isinstance(args[0], (dict, list, tuple)):
                    raise _Refused(f"{func.id} of a string")  # sorted('line'): its letters
                return {
                    "sorted": sorted,
                    "len": len,
                    "list": list,
                    "tuple": tuple,
                    "min": min,
                    "max": max,
                }[func.id](args[0])
            raise _Refused(func.id)
        if not isinstance(func, ast.Attribute) or func.attr.startswith("_"):
            raise _Refused("call")
        owner = func.value
        if isinstance(owner, ast.Name) and self.modules.get(owner.id) == "json":
            return self.json(func.attr, node)
        target = self.value(owner)
        if node.keywords:
            raise _Refused("keywords")
        args = [self.value(a) for a in node.args]
        if isinstance(target, _Opened) and func.attr == "read" and not args:
            return target.text
        if isinstance(target, dict) and func.attr in _DICT_METHODS:
            if func.attr == "get" and len(args) in (1, 2):
                return target.get(*args)
            if func.attr != "get" and not args:
                return list(getattr(target, func.attr)())
        raise _Refused(func.attr)

    def json(self, name: str, node: ast.Call) -> Any:
        if name not in _JSON or len(node.args) != 1:
            raise _Refused(f"json.{name}")
        arg = self.value(node.args[0])
        if name == "dumps":
            opts: dict[str, Any] = {}
            for kw in node.keywords:
                if kw.arg not in ("indent", "sort_keys") or not isinstance(kw.value, ast.Constant):
                    raise _Refused("json.dumps option")
                opts[kw.arg] = kw.value.value
            if isinstance(arg, _Opened):
                raise _Refused("a file object")
            return json.dumps(arg, **opts)
        if node.keywords:
            raise _Refused("json option")
        if name == "load" and isinstance(arg, _Opened):
            text = arg.text
        elif name == "loads" and isinstance(arg, str):
            text = arg
        else:
            raise _Refused(f"json.{name}")
        try:
            return json.loads(text)
        except ValueError:
            raise _Refused("not JSON") from None

    def open(self, node: ast.Call) -> _Opened:
        if not node.args or len(node.args) > 2:
            raise _Refused("open")
        path = self.value(node.args[0])
        modes = [self.value(a) for a in node.args[1:]]
        for kw in node.keywords:
            if kw.arg == "mode":
                modes.append(self.value(kw.value))
            elif kw.arg != "encoding":
                raise _Refused(f"open {kw.arg}")
        if len(modes) > 1 or any(m not in ("r", "rt") for m in modes):
            raise _Refused("open mode")
        if not isinstance(path, str):
            raise _Refused("open path")
        return _Opened(self.file(path))

    def file(self, word: str) -> str:
        """The text of the checkout's file a program opens: inside the work tree; under a
        hidden path only when the provenance index reads it."""
        rel = word.removeprefix("./")
        if not rel or rel.startswith(("/", "~", "$")) or {"..", ".git"} & set(rel.split("/")):
            raise _Refused("path")  # outside the work tree, or git's own files
        path = (self.root / rel).resolve()
        if self.root not in path.parents or not path.is_file():
            raise _Refused("path")
        inner = path.relative_to(self.root).as_posix()
        if inner.split("/")[0] == ".git":
            raise _Refused("path")
        if any(inner == h or inner.startswith(h + "/") for h in self.hidden):
            if not indexed_hidden(self.root, self.hidden, path):
                raise _Refused("a hidden file the index does not read")
        elif path.stat().st_size > _MAX_BYTES:
            raise _Refused("too large")
        return path.read_bytes().decode("utf-8", "replace")


def _called(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _strings(value: Any) -> list[str]:
    """Every string a printed value holds (keys and values of dicts, items of lists)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _unescaped(text: str) -> str:
    """The text with JSON and ``repr`` escapes undone (``\\n``, ``\\"``, ``\\uXXXX``)."""
    simple = {"n": "\n", "t": "\t", "r": "\n"}

    def one(m: re.Match[str]) -> str:
        if m[1].startswith("u"):
            return chr(int(m[1][1:], 16))
        return simple.get(m[1], m[1])

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", one, text)


#: commands an earlier step may run for a later program to be evaluated: they read, and change
#: neither a file nor the shell (no redirect to a file, no assignment, no substitution)
_READERS = frozenset({"cat", "ls", "head", "tail", "grep", "rg", "wc", "pwd", "echo", "tree"})
_GIT_READS = frozenset({"status", "log", "diff", "show", "ls-files", "rev-parse", "grep", "blame"})
#: more printed lines than the provenance index's scan looks at: not judged here
_MAX_OUTPUT_LINES = 10_000


def _reads_only(command: str) -> bool:
    """Does an earlier step's ``command`` only read (the allowlist above), so that it cannot
    have replaced the interpreter, a module it imports or the shell's state (``PATH``, ``hash``,
    a function, a login profile, a file in the work tree) before the program ran?"""
    if re.search(r"[$`\\]|<<", command):
        return False
    lexer = _Lexer(command).run()
    if lexer.subs:
        return False
    for cmd in _split(lexer):
        argv = list(cmd.argv)
        if cmd.assigns or cmd.grouped or cmd.xargs or cmd.heredoc is not None or not argv:
            return False
        for op, target in cmd.redirects:
            if not (op.endswith("&") and target.isdigit()) and target != "/dev/null":
                return False
        if argv[0] == "git":
            if len(argv) < 2 or argv[1] not in _GIT_READS:
                return False  # no ``git -c``, no subcommand that writes, no alias
            if any(a.startswith(("--output", "--ext-diff", "--textconv")) for a in argv[2:]):
                return False
        elif argv[0] not in _READERS:
            return False
    return True


def _shadowed_in_checkout(root: Path) -> bool:
    """Does the checkout's top folder (``sys.path[0]`` of ``python -c``/``python -``) hold a
    module or package named as a standard one, or a ``.pth`` file? Any import could run it."""
    import sys

    for entry in root.iterdir():
        name = entry.name
        if name.endswith(".pth"):
            return True
        stem = name[:-3] if name.endswith(".py") else name if entry.is_dir() else ""
        if stem and stem in sys.stdlib_module_names:
            return True
    return False


def program_prints(
    command: str,
    output: str,
    workdir: str | Path,
    hidden_paths: Sequence[str],
    commands: Sequence[str],
    earlier: Sequence[str] | None = None,
) -> list[str] | None:
    """What a print-only Python program run by ``command`` printed, to judge: the recorded
    ``output`` (as is and unescaped) and every string it printed, re-done on the checkout's
    files. None when not evaluated here (the caller keeps the read): not one such program,
    outside the language, a file it cannot re-do the read on, a module the trajectory may
    shadow (``commands``: every command of the trajectory), an earlier step (``earlier``: the
    commands of the steps before this one; None: all of ``commands`` before ``command``) that
    did more than read, a checkout whose top folder shadows a standard module, or an output
    that does not hold what the program prints, holds a backslash (an escape undone once could
    hide another) or is longer than the index's scan."""
    code = _code(command)
    if code is None:
        return None
    if earlier is None:
        earlier = list(commands[: list(commands).index(command)]) if command in commands else []
    if not all(_reads_only(c or "") for c in earlier):
        return None
    if "\\" in output or output.count("\n") > _MAX_OUTPUT_LINES:
        return None
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None
    root = Path(workdir).resolve()
    if _shadowed_in_checkout(root):
        return None
    hidden = [p.strip().strip("/").removeprefix("./") for p in hidden_paths if p.strip("/ ")]
    program = _Program(root, hidden)
    try:
        program.run(tree)
    except (_Refused, LookupError, TypeError, ValueError, OSError, RecursionError):
        return None
    imported = "|".join(sorted(set(program.modules.values()) & _SHADOWABLE))
    shadow = _SHADOW + (rf"|(?<![\w.])(?:{imported})(?:\.py\b|/)" if imported else "")
    if any(re.search(shadow, c or "") for c in commands):
        return None
    printed = "".join(program.printed)
    if printed.strip() and printed.strip() not in output:
        return None  # the recorded output is not what this program prints of these files
    return [output, _unescaped(output), *(s for v in program.values for s in _strings(v))]
