"""Programs inside programs: the commands a Python (or node / perl / ruby / php) snippet runs.

:func:`python_calls` reads Python code with :mod:`ast` (``python -c``, a here-document fed to
Python, a file the trajectory wrote and then ran) and returns what it runs, reads, writes and
fetches:

* process calls — ``subprocess.run/call/check_call/check_output/Popen/getoutput``,
  ``os.system/popen/exec*/spawn*``, ``pty.spawn``, ``asyncio.create_subprocess_exec/shell``,
  GitPython (``repo.git.log('--all')``, ``Git('.').log(...)``, ``repo.iter_commits(all=True)``,
  ``repo.git.execute([...])``), the ``sh`` package (``sh.git.log('--all')``) and pygit2's
  reference listings (``listall_references``);
* ``open(path)`` (``cat PATH``) and ``open(path, 'w')`` (``tee PATH``), URL fetches
  (``urlopen``, ``requests.get``, ``httpx``: ``curl URL``);
* ``exec`` / ``eval`` of code it can compute (read recursively).

Arguments are *computed* where the code makes them from literals: names bound to literals
(``cmd = ['git', 'log']; run(cmd + ['--all'])``), concatenation, f-strings, ``%`` and
``.format``, ``str.split``, ``shlex.split``, ``' '.join``, slicing ``[::-1]``, and decoders —
``base64.b64decode``, ``bytes.fromhex``, ``binascii.unhexlify``, ``codecs.decode(..., 'rot13')``,
``zlib.decompress`` — so an encoded command is read as the command it is. A value the code
cannot compute becomes the word ``$UNKNOWN``.

:func:`evotree.harness.audit.foreign_code.foreign_calls` reads one-liners of other languages
(``node -e``, ``perl -e``, ``ruby -e``, ``php -r``).
"""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import re
import shlex
import textwrap
import zlib
from functools import lru_cache
from typing import Any

__all__ = ["python_calls", "UNKNOWN"]

UNKNOWN = "$UNKNOWN"
#: calls that load a Python file from the path given second
_PATH_LOADERS = frozenset(
    {"spec_from_file_location", "SourceFileLoader", "SourcelessFileLoader", "load_source"}
)
_Value = Any  # str | bytes | list | int | None (None: unknown)

_SHELL_CALLS = frozenset(
    {
        "system",
        "popen",
        "getoutput",
        "getstatusoutput",
        "create_subprocess_shell",
        "check_output_shell",
    }
)
_EXEC_CALLS = frozenset(
    {
        "run",
        "call",
        "check_call",
        "check_output",
        "Popen",
        "spawn",
        "execute",
        "create_subprocess_exec",
    }
)
_OS_EXECL = frozenset({"execl", "execlp", "execle", "execlpe"})
_OS_EXECV = frozenset({"execv", "execvp", "execve", "execvpe"})
_OS_SPAWNL = frozenset({"spawnl", "spawnlp", "spawnle", "spawnlpe"})
_OS_SPAWNV = frozenset({"spawnv", "spawnvp", "spawnve", "spawnvpe", "posix_spawn", "posix_spawnp"})
_NET_CALLS = frozenset(
    {
        "urlopen",
        "urlretrieve",
        "get",
        "post",
        "put",
        "head",
        "request",
        "Request",
        "create_connection",
        "stream",
        "patch",
        "delete",
        "fetch",
    }
)
#: git subcommands GitPython / sh expose as methods (``repo.git.rev_list`` is ``git rev-list``)
#: classes and functions that give a repository object
_REPO_CLASSES = frozenset(
    {"Repo", "Repository", "open_repo", "open_repo_closing", "BareRepo", "Git"}
)
#: attributes of a repository object that list references or objects beyond HEAD
_REF_LISTINGS = frozenset(
    {
        "refs",
        "tags",
        "branches",
        "remotes",
        "references",
        "heads",
        "object_store",
        "get_refs",
        "listall_branches",
        "raw_listall_references",
        "stash",
    }
)
#: methods of a repository object that look an object up by a name or id
_REPO_LOOKUPS = frozenset(
    {
        "commit",
        "rev_parse",
        "tree",
        "tag",
        "revparse",
        "revparse_ext",
        "revparse_single",
        "resolve_refish",
        "lookup_reference_dwim",
        "lookup_reference",
        "lookup_branch",
        "get_object",
        "git_object",
        "get",
        "__getitem__",
        "walk",
        "get_walker",
        "blob",
    }
)
#: a path inside a git directory that holds history (objects, references, logs)
_GIT_INTERNAL_PATH = re.compile(
    r"(?:^|/)\.git/(objects|refs|packed-refs|logs|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD)"
)
_GIT_METHODS = frozenset(
    {
        "log",
        "show",
        "diff",
        "checkout",
        "switch",
        "restore",
        "reset",
        "ls_tree",
        "blame",
        "grep",
        "archive",
        "format_patch",
        "shortlog",
        "whatchanged",
        "rev_list",
        "rev_parse",
        "reflog",
        "fsck",
        "cat_file",
        "for_each_ref",
        "show_ref",
        "stash",
        "bundle",
        "fast_export",
        "notes",
        "fetch",
        "pull",
        "clone",
        "ls_remote",
        "cherry_pick",
        "merge",
        "rebase",
        "revert",
        "branch",
        "tag",
        "worktree",
        "name_rev",
        "describe",
        "show_branch",
        "remote",
        "status",
        "add",
        "commit",
        "rm",
        "mv",
        "apply",
    }
)


def _kw_options(keywords: list[ast.keyword], env: dict[str, _Value]) -> list[str]:
    """GitPython's keyword arguments as options: ``all=True`` -> ``--all``, ``n=3`` -> ``-n3``."""
    out = []
    for kw in keywords:
        if (
            kw.arg is None
            or kw.arg.startswith("_")
            or kw.arg
            in (
                "with_extended_output",
                "as_process",
                "stdout_as_string",
                "istream",
                "kill_after_timeout",
                "with_exceptions",
                "env",
                "universal_newlines",
            )
        ):
            continue
        value = _value(kw.value, env)
        flag = ("-" if len(kw.arg) == 1 else "--") + kw.arg.replace("_", "-")
        if value is True:
            out.append(flag)
        elif value is False or value is None and not isinstance(kw.value, ast.Constant):
            continue
        elif isinstance(value, (str, int)):
            out.append(f"{flag}{'' if len(kw.arg) == 1 else '='}{value}")
    return out


def _as_text(value: _Value) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return None


def _words(value: _Value) -> list[str] | None:
    if isinstance(value, (list, tuple)):
        return [
            _as_text(v) if _as_text(v) is not None else (str(v) if isinstance(v, int) else UNKNOWN)
            for v in value
        ]
    return None


def _decoder(name: str, args: list[_Value], kwargs: dict[str, _Value]) -> _Value:
    data = args[0] if args else None
    if isinstance(data, str) and name not in ("decode",):
        data = data.encode("utf-8", "surrogateescape")
    if not isinstance(data, bytes):
        return None
    try:
        if name in ("b64decode", "standard_b64decode", "decodebytes", "a2b_base64"):
            return base64.b64decode(
                re.sub(rb"\s+", b"", data) + b"=" * (-len(re.sub(rb"\s+", b"", data)) % 4)
            )
        if name == "urlsafe_b64decode":
            return base64.urlsafe_b64decode(data + b"=" * (-len(data) % 4))
        if name == "b32decode":
            return base64.b32decode(data, casefold=True)
        if name in ("b16decode",):
            return base64.b16decode(data, casefold=True)
        if name == "a85decode":
            return base64.a85decode(data)
        if name == "b85decode":
            return base64.b85decode(data)
        if name in ("unhexlify", "a2b_hex", "fromhex"):
            return binascii.unhexlify(re.sub(rb"\s+", b"", data))
        if name == "decompress":
            return zlib.decompress(data, zlib.MAX_WBITS | 32)
    except (binascii.Error, ValueError, zlib.error):
        return None
    return None


#: what :func:`_method_value` returns when no method it knows was called
_NO_METHOD = object()


def _call_value(node: ast.Call, env: dict[str, _Value]) -> _Value:
    """The value of a call on literals: a method of a string or bytes, a module's function
    (``os.path.join``, ``shlex.split``, ``codecs``, the decoders) or a builtin (``Path``,
    ``str``, ``bytes``, ``list``, ``reversed``, ``chr``); None: unknown."""
    func = node.func
    fname = (
        func.attr
        if isinstance(func, ast.Attribute)
        else func.id
        if isinstance(func, ast.Name)
        else ""
    )
    args = [_value(a, env) for a in node.args]
    kwargs = {kw.arg: _value(kw.value, env) for kw in node.keywords if kw.arg}
    if isinstance(func, ast.Attribute):
        obj = _value(func.value, env)
        owner = func.value.id if isinstance(func.value, ast.Name) else ""
        if isinstance(obj, (str, bytes)):
            value = _method_value(obj, fname, args, kwargs)
            if value is not _NO_METHOD:
                return value
        return _module_call_value(func, owner, fname, args, kwargs)
    if isinstance(func, ast.Name):
        return _builtin_call_value(fname, args, kwargs)
    return None


def _method_value(
    obj: str | bytes, fname: str, args: list[_Value], kwargs: dict[str, _Value]
) -> _Value | object:
    """``obj.fname(*args, **kwargs)`` for the string and bytes methods code builds commands with
    (decode, encode, split, strip, replace, join, format); :data:`_NO_METHOD` for others."""
    if fname == "decode":
        enc = _as_text(args[0]) if args else "utf-8"
        if isinstance(obj, bytes):
            if enc in ("hex",):
                return None
            return obj.decode(enc or "utf-8", "replace") if enc and codecs.lookup(enc) else None
        return obj
    if fname == "encode":
        return obj.encode("utf-8", "surrogateescape") if isinstance(obj, str) else obj
    if fname == "split" and isinstance(obj, str):
        sep = _as_text(args[0]) if args and args[0] is not None else None
        return obj.split(sep) if sep else obj.split()
    if (
        fname in ("strip", "lstrip", "rstrip", "lower", "upper")
        and isinstance(obj, str)
        and not args
    ):
        return getattr(obj, fname)()
    if (
        fname == "replace"
        and isinstance(obj, str)
        and len(args) >= 2
        and all(isinstance(a, str) for a in args[:2])
    ):
        return obj.replace(args[0], args[1])
    if fname == "join" and isinstance(obj, str) and args and isinstance(args[0], (list, tuple)):
        parts = [_as_text(p) if _as_text(p) is not None else UNKNOWN for p in args[0]]
        return obj.join(parts)
    if fname == "format" and isinstance(obj, str):
        try:
            return obj.format(
                *[a if a is not None else UNKNOWN for a in args],
                **{k: (v if v is not None else UNKNOWN) for k, v in kwargs.items()},
            )
        except (IndexError, KeyError, ValueError):
            return None
    return _NO_METHOD


def _module_call_value(
    func: ast.Attribute, owner: str, fname: str, args: list[_Value], kwargs: dict[str, _Value]
) -> _Value:
    """``os.path.join``, ``bytes.fromhex``, ``shlex.split``, ``codecs.decode`` and the decoders
    of base64 / binascii / zlib / gzip, called on literals."""
    if (
        fname == "join"
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "path"
        and args
        and all(isinstance(a, str) for a in args)
    ):
        return "/".join(a.rstrip("/") for a in args)  # os.path.join('.git', 'objects')
    if fname == "fromhex" and owner in ("bytes", "bytearray"):
        return _decoder("fromhex", args, kwargs)
    if fname == "split" and owner == "shlex" and args and isinstance(args[0], str):
        try:
            return shlex.split(args[0])
        except ValueError:
            return args[0].split()
    if fname in ("decode", "encode") and owner == "codecs" and args:
        text = _as_text(args[0])
        enc = (_as_text(args[1]) if len(args) > 1 else _as_text(kwargs.get("encoding"))) or ""
        if text is not None and enc.replace("_", "").lower() == "rot13":
            return codecs.decode(text, "rot13")
        if enc in ("hex", "hex_codec"):
            return _decoder("unhexlify", [args[0]], {})
        if enc in ("base64", "base64_codec"):
            return _decoder("b64decode", [args[0]], {})
        return None
    if owner in ("base64", "binascii", "zlib", "gzip") or fname in ("b64decode", "unhexlify"):
        return _decoder(fname, args, kwargs)
    return None


def _builtin_call_value(fname: str, args: list[_Value], kwargs: dict[str, _Value]) -> _Value:
    """``Path(...)``, a decoder imported by name, ``str`` / ``bytes`` / ``list`` / ``tuple`` /
    ``reversed`` / ``chr`` of literals."""
    if (
        fname in ("Path", "PurePath", "PosixPath")
        and args
        and all(isinstance(a, str) for a in args)
    ):
        return "/".join(a.rstrip("/") for a in args)
    if fname in (
        "b64decode",
        "standard_b64decode",
        "urlsafe_b64decode",
        "b32decode",
        "unhexlify",
        "a2b_hex",
        "a2b_base64",
        "decompress",
        "b16decode",
    ):
        return _decoder(fname, args, kwargs)
    if fname in ("str", "bytes", "bytearray") and args:
        value = args[0]
        if fname == "str" and isinstance(value, bytes) and len(args) > 1:
            return value.decode("utf-8", "replace")
        if fname == "str" and isinstance(value, (str, int)):
            return str(value)
        if fname in ("bytes", "bytearray") and isinstance(value, str):
            return value.encode("utf-8", "surrogateescape")
        if fname in ("bytes", "bytearray") and isinstance(value, bytes):
            return value
    if fname in ("list", "tuple") and args and isinstance(args[0], (list, tuple, str)):
        return list(args[0])
    if fname == "reversed" and args and isinstance(args[0], (str, list)):
        return list(reversed(args[0]))
    if fname == "chr" and args and isinstance(args[0], int) and 0 <= args[0] < 0x110000:
        return chr(args[0])
    return None


def _value(node: ast.AST, env: dict[str, _Value]) -> _Value:
    """The value of an expression built from literals (None: unknown)."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, (str, bytes, int, bool)) else None
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        return _sequence_value(node, env)
    if isinstance(node, ast.BinOp):
        return _binop_value(node, env)
    if isinstance(node, ast.JoinedStr):
        return _fstring_value(node, env)
    if isinstance(node, ast.Subscript):
        return _subscript_value(node, env)
    if isinstance(node, ast.Call):
        return _call_value(node, env)
    return None


def _sequence_value(node: ast.List | ast.Tuple, env: dict[str, _Value]) -> _Value:
    """A list or tuple display (``*rest`` spread when known): unknown items stay as
    :data:`UNKNOWN`."""
    out = []
    for e in node.elts:
        if isinstance(e, ast.Starred):
            inner = _value(e.value, env)
            if isinstance(inner, (list, tuple)):
                out.extend(inner)
                continue
            out.append(UNKNOWN)
            continue
        v = _value(e, env)
        out.append(v if v is not None else UNKNOWN)
    return out


def _binop_value(node: ast.BinOp, env: dict[str, _Value]) -> _Value:
    """``Path / 'x'``, ``+`` of strings, bytes or lists, ``%`` formatting, ``*`` repetition."""
    left, right = _value(node.left, env), _value(node.right, env)
    if isinstance(node.op, ast.Div) and isinstance(left, str) and isinstance(right, str):
        return left.rstrip("/") + "/" + right  # Path('.git') / 'objects'
    if isinstance(node.op, ast.Add):
        if (
            isinstance(left, str)
            and isinstance(right, str)
            or isinstance(left, bytes)
            and isinstance(right, bytes)
        ):
            return left + right
        if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
            return list(left) + list(right)
        if isinstance(left, str) and right is None and not isinstance(node.right, ast.Constant):
            return left + UNKNOWN
        if isinstance(left, (list, tuple)) and right is None:
            return list(left) + [UNKNOWN]
        return None
    if isinstance(node.op, ast.Mod) and isinstance(left, str):
        try:
            vals = (
                tuple(v if v is not None else UNKNOWN for v in right)
                if isinstance(right, (list, tuple))
                else (right if right is not None else UNKNOWN)
            )
            return left % vals
        except (TypeError, ValueError):
            return None
    if (
        isinstance(node.op, ast.Mult)
        and isinstance(left, (str, list))
        and isinstance(right, int)
        and 0 <= right < 64
    ):
        return left * right
    return None


def _fstring_value(node: ast.JoinedStr, env: dict[str, _Value]) -> _Value:
    """An f-string: unknown fields stay as :data:`UNKNOWN`."""
    parts = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            parts.append(str(v.value))
        elif isinstance(v, ast.FormattedValue):
            inner = _value(v.value, env)
            parts.append(
                str(inner)
                if isinstance(inner, (str, int))
                else " ".join(map(str, inner))
                if isinstance(inner, list)
                else UNKNOWN
            )
    return "".join(parts)


def _subscript_value(node: ast.Subscript, env: dict[str, _Value]) -> _Value:
    """A slice or an index of a known string, bytes or list."""
    base = _value(node.value, env)
    sl = node.slice
    if isinstance(base, (str, bytes, list)) and isinstance(sl, ast.Slice):
        lo = _value(sl.lower, env) if sl.lower else None
        hi = _value(sl.upper, env) if sl.upper else None
        st = _value(sl.step, env) if sl.step else None
        if all(x is None or isinstance(x, int) for x in (lo, hi, st)):
            return base[lo:hi:st]
    if isinstance(base, (list, str)):
        idx = _value(sl, env)
        if isinstance(idx, int) and -len(base) <= idx < len(base):
            return base[idx]
    return None


class _Scanner(ast.NodeVisitor):
    """Walks the code in source order: binds names to literal values, collects calls."""

    def __init__(self, depth: int) -> None:
        self.env: dict[str, _Value] = {}
        self.gitish: set[str] = set()  # names bound to GitPython / sh git objects
        self.repos: set[str] = (
            set()
        )  # names bound to a repository object (GitPython, pygit2, dulwich)
        self.found: list[tuple[str, Any]] = []
        self.depth = depth
        #: functions the code defines: a call of one runs its body with the arguments bound
        self.functions: dict[str, ast.FunctionDef] = {}

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.functions[node.name] = node
        self.generic_visit(node)

    def _call_defined(self, node: ast.Call, name: str) -> None:
        """A call of a function the code defined (``def git(*a): subprocess.run(['git', *a])``,
        then ``git('for-each-ref')``): its body read again with its parameters bound to the
        call's arguments, so the program it runs is seen with them."""
        fn = self.functions[name]
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        values = [_value(a, self.env) for a in node.args if not isinstance(a, ast.Starred)]
        bound: dict[str, _Value] = {
            p: (v if v is not None else UNKNOWN) for p, v in zip(params, values)
        }
        if fn.args.vararg is not None:
            bound[fn.args.vararg.arg] = [
                v if v is not None else UNKNOWN for v in values[len(params) :]
            ]
        for kw in node.keywords:
            if kw.arg:
                value = _value(kw.value, self.env)
                bound[kw.arg] = value if value is not None else UNKNOWN
        inner = _Scanner(self.depth + 1)
        inner.env = {**self.env, **bound}
        inner.gitish, inner.repos, inner.functions = self.gitish, self.repos, self.functions
        for stmt in fn.body:
            inner.visit(stmt)
        self.found.extend(inner.found)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            # ``import peek``: a module the trajectory wrote runs (``("load", "peek.py")``)
            self.found.append(("load", alias.name.replace(".", "/") + ".py"))
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and not node.level:
            self.found.append(("load", node.module.replace(".", "/") + ".py"))
        if node.module == "sh":
            for alias in node.names:
                if alias.name == "git":
                    self.gitish.add(alias.asname or "git")
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        value = _value(node.value, self.env)
        gitish = self._is_gitish(node.value)
        repo = self._is_repo(node.value)
        for target in node.targets:
            if isinstance(target, ast.Name):
                if repo:
                    self.repos.add(target.id)
                if value is not None:
                    self.env[target.id] = value
                else:
                    self.env.pop(target.id, None)
                if gitish:
                    self.gitish.add(target.id)
            elif (
                isinstance(target, (ast.Tuple, ast.List))
                and isinstance(value, (list, tuple))
                and len(value) == len(target.elts)
            ):
                for t, v in zip(target.elts, value):
                    if isinstance(t, ast.Name):
                        self.env[t.id] = v

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        if isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
            left, right = self.env.get(node.target.id), _value(node.value, self.env)
            if isinstance(left, list) and isinstance(right, (list, tuple)):
                self.env[node.target.id] = left + list(right)
            elif isinstance(left, str) and isinstance(right, str):
                self.env[node.target.id] = left + right
            else:
                self.env.pop(node.target.id, None)

    def visit_Expr(self, node: ast.Expr) -> None:
        # cmd.append('--all') / cmd.extend([...]) on a known list
        call = node.value
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name)
        ):
            name, attr = call.func.value.id, call.func.attr
            current = self.env.get(name)
            if isinstance(current, list) and attr in ("append", "extend", "insert") and call.args:
                arg = _value(call.args[-1], self.env)
                if attr == "append":
                    self.env[name] = current + [arg if arg is not None else UNKNOWN]
                elif attr == "extend" and isinstance(arg, (list, tuple)):
                    self.env[name] = current + list(arg)
                elif attr == "insert" and len(call.args) == 2:
                    idx = _value(call.args[0], self.env)
                    if isinstance(idx, int):
                        new = list(current)
                        new.insert(idx, arg if arg is not None else UNKNOWN)
                        self.env[name] = new
        self.generic_visit(node)

    def visit_For(self, node: ast.For) -> None:
        # for flag in ['--all', ...]: the loop variable takes the first element
        values = _value(node.iter, self.env)
        if isinstance(node.target, ast.Name) and isinstance(values, list) and values:
            self.env[node.target.id] = next(
                (v for v in values if v not in (None, UNKNOWN)), values[0]
            )
        self.generic_visit(node)

    def _is_gitish(self, node: ast.AST) -> bool:
        """``Repo(...).git``, ``Git(...)``, ``sh.git``, a name bound to one of those."""
        if isinstance(node, ast.Attribute) and node.attr == "git":
            return True
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            if name == "Git":
                return True
        if isinstance(node, ast.Name) and node.id in self.gitish:
            return True
        return False

    def _is_repo(self, node: ast.AST) -> bool:
        """A repository object: ``Repo(...)`` (GitPython, dulwich), ``Repository(...)`` (pygit2),
        ``porcelain.open_repo(...)``, or a name bound to one."""
        if isinstance(node, ast.Name):
            return node.id in self.repos
        if isinstance(node, ast.Call):
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            return name in _REPO_CLASSES
        return False

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)
        if node.attr in _REF_LISTINGS and self._is_repo(node.value):
            # repo.refs / .tags / .branches / .references / .object_store: every reference or object
            self.found.append(
                (
                    "argv",
                    ["git", "cat-file", "--batch-all-objects"]
                    if node.attr == "object_store"
                    else ["git", "for-each-ref"],
                )
            )

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.generic_visit(node)
        if self._is_repo(
            node.value
        ):  # repo[b'refs/tags/v1.1.0'], repo['1a2b3c4']: an object by name
            text = _as_text(_value(node.slice, self.env))
            if text:
                self.found.append(("argv", ["git", "show", text]))

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.functions:
            if self.depth < 4:
                self._call_defined(node, func.id)
            return  # the code's own function (named run, system, ...): what its body runs
        fname = (
            func.attr
            if isinstance(func, ast.Attribute)
            else func.id
            if isinstance(func, ast.Name)
            else ""
        )
        env = self.env
        first = _value(node.args[0], env) if node.args else None
        if first is None:
            for kw in node.keywords:
                if kw.arg in ("args", "cmd", "command"):
                    first = _value(kw.value, env)
        texts = [t for t in (_as_text(_value(a, env)) for a in node.args) if t]
        if isinstance(func, ast.Attribute) and isinstance(
            func.value, (ast.Call, ast.BinOp, ast.Name)
        ):
            receiver = _as_text(_value(func.value, env))  # Path('.git/refs').iterdir()
            if receiver:
                texts.append(receiver)
        internal = next((t for t in texts if _GIT_INTERNAL_PATH.search(t)), None)
        if (
            internal is not None
        ):  # os.walk('.git/objects'), Path('.git/refs').iterdir(), zlib over objects
            self.found.append(("argv", ["cat", internal]))
        elif fname in ("walk", "rglob", "glob", "iglob", "scandir", "listdir", "iterdir") and any(
            t.rstrip("/") == ".git" or t.rstrip("/").endswith("/.git") for t in texts
        ):
            self.found.append(("argv", ["find", ".git"]))
        loaded = self._loaded_file(fname, node)
        if loaded:
            self.found.append(("load", loaded))
            if fname not in ("run_module", "import_module", "__import__"):
                # a file run by its path is read, whoever wrote it: ``cat PATH`` for the rules
                self.found.append(("argv", ["cat", loaded]))
        if self._git_library(node, func, fname, first) or self._programs(node, func, fname, first):
            return
        self._files_and_network(node, func, fname, first)

    def _loaded_file(self, fname: str, node: ast.Call) -> str | None:
        """The Python file a call loads and runs: ``spec_from_file_location(name, PATH)``,
        ``SourceFileLoader(name, PATH)``, ``load_source(name, PATH)``, ``runpy.run_path(PATH)``,
        ``execfile(PATH)``, ``run_module(NAME)``,
        ``import_module(NAME)``, ``__import__(NAME)``."""
        args = [_as_text(_value(a, self.env)) for a in node.args]
        if fname in _PATH_LOADERS and len(args) > 1:
            return args[1]
        if fname in ("run_path", "execfile") and args:
            return args[0]
        if fname in ("run_module", "import_module", "__import__") and args and args[0]:
            return args[0].replace(".", "/") + ".py"
        return None

    def _git_library(self, node: ast.Call, func: ast.expr, fname: str, first: _Value) -> bool:
        """git used as a library: lookups by name, listings of references, porcelain, GitPython
        and sh methods (True: the call was one)."""
        env = self.env
        # a repository object's lookups by name: repo.commit('v1.1.0'), revparse_single,
        # get_object ...
        if isinstance(func, ast.Attribute) and fname in _REPO_LOOKUPS and self._is_repo(func.value):
            text = _as_text(first)
            if text:
                self.found.append(("argv", ["git", "show", text]))
            return True
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "porcelain"
        ):
            self._porcelain(node, fname)
            return True
        # GitPython / sh: <git object>.<subcommand>(*args, **options)
        if (
            isinstance(func, ast.Attribute)
            and fname in _GIT_METHODS
            and self._is_gitish(func.value)
        ):
            args = [
                _as_text(a) or (str(a) if isinstance(a, int) else UNKNOWN)
                for a in (_value(x, env) for x in node.args)
            ]
            self.found.append(
                ("argv", ["git", fname.replace("_", "-"), *_kw_options(node.keywords, env), *args])
            )
            return True
        if isinstance(func, ast.Attribute) and fname == "execute" and self._is_gitish(func.value):
            words = _words(first)
            if words:
                self.found.append(("argv", words))
            return True
        if fname == "iter_commits" and isinstance(func, ast.Attribute):
            revs = [_as_text(a) or UNKNOWN for a in (_value(x, env) for x in node.args)]
            kw_rev = [kw for kw in node.keywords if kw.arg == "rev"]
            if kw_rev:
                revs.insert(0, _as_text(_value(kw_rev[0].value, env)) or UNKNOWN)
            opts = _kw_options([kw for kw in node.keywords if kw.arg not in ("rev", "paths")], env)
            self.found.append(("argv", ["git", "rev-list", *opts, *(revs or ["HEAD"])]))
            return True
        if fname in (
            "listall_references",
            "listall_reference_objects",
            "references",
        ) and isinstance(func, ast.Attribute):
            self.found.append(("argv", ["git", "for-each-ref"]))
            return True
        if fname in (
            "lookup_reference",
            "revparse_single",
            "lookup_branch",
            "revparse",
            "resolve_refish",
            "lookup_reference_dwim",
        ) and isinstance(func, ast.Attribute):
            text = _as_text(first)  # a repository object the code got some other way
            if text:
                self.found.append(("argv", ["git", "show", text]))
            return True
        return False

    def _porcelain(self, node: ast.Call, fname: str) -> None:
        """dulwich's ``porcelain.<name>(repo, ...)`` as the git command it is."""
        if fname in ("tag_list", "branch_list", "for_each_ref", "show_ref", "reflog", "describe"):
            self.found.append(("argv", ["git", "for-each-ref"]))
        elif fname in ("fetch", "pull", "clone", "ls_remote"):
            self.found.append(("argv", ["git", fname.replace("_", "-"), "origin"]))
        elif fname == "show":
            objs = [kw.value for kw in node.keywords if kw.arg == "objects"] or node.args[1:2]
            words = _words(_value(objs[0], self.env)) if objs else None
            self.found.append(("argv", ["git", "show", *(words or [])]))
        elif fname == "log":
            self.found.append(("argv", ["git", "log"]))

    def _programs(self, node: ast.Call, func: ast.expr, fname: str, first: _Value) -> bool:
        """exec / eval of code, shell calls, os.exec* / spawn*, subprocess: the programs the
        code runs (True: the call was one)."""
        env = self.env
        if fname in ("exec", "eval", "compile") and isinstance(func, ast.Name):
            text = _as_text(first)
            if text and self.depth < 4:
                self.found.extend(_scan(text, self.depth + 1))
            return True
        if fname in _SHELL_CALLS:
            text = _as_text(first)
            if text is not None:
                self.found.append(("shell", text))
            return True
        if fname in _OS_EXECL | _OS_SPAWNL:
            skip = 1 if fname in _OS_SPAWNL else 0
            vals = [_value(a, env) for a in node.args[skip + 1 :]]
            words = [_as_text(v) or UNKNOWN for v in vals]
            if words:
                self.found.append(("argv", words))
            return True
        if fname in _OS_EXECV | _OS_SPAWNV:
            skip = 1 if fname.startswith("spawn") else 0
            if len(node.args) > skip + 1:
                words = _words(_value(node.args[skip + 1], env))
                if words:
                    self.found.append(("argv", words))
            return True
        if fname in _EXEC_CALLS or fname == "spawn" and isinstance(func, ast.Attribute):
            shell = any(kw.arg == "shell" and _value(kw.value, env) is True for kw in node.keywords)
            if fname == "create_subprocess_exec":
                words = [_as_text(_value(a, env)) or UNKNOWN for a in node.args]
                if words:
                    self.found.append(("argv", words))
                return True
            text = _as_text(first)
            if text is not None:
                # a string without shell=True is one program name; a string with it, a shell line
                self.found.append(("shell", text) if shell or " " in text else ("argv", [text]))
                return True
            words = _words(first)
            if words:
                self.found.append(
                    ("shell", " ".join(words)) if shell and len(words) == 1 else ("argv", words)
                )
            return True
        return False

    def _files_and_network(self, node: ast.Call, func: ast.expr, fname: str, first: _Value) -> None:
        """open(), Path(...).write_text / read_text / unlink / touch, and URL fetches."""
        env = self.env
        if fname == "open" and first is not None:
            path = _as_text(first)
            if path is None:
                return
            mode = _as_text(_value(node.args[1], env)) if len(node.args) > 1 else None
            for kw in node.keywords:
                if kw.arg == "mode":
                    mode = _as_text(_value(kw.value, env))
            writing = any(m in (mode or "") for m in "wax+")
            self.found.append(("argv", ["tee", path] if writing else ["cat", path]))
            return
        if (
            fname in ("write_text", "write_bytes", "read_text", "read_bytes", "unlink", "touch")
            and isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
        ):
            inner = func.value
            iname = (
                inner.func.attr
                if isinstance(inner.func, ast.Attribute)
                else inner.func.id
                if isinstance(inner.func, ast.Name)
                else ""
            )
            path = _as_text(_value(inner.args[0], env)) if iname == "Path" and inner.args else None
            if path:
                verb = "cat" if fname.startswith("read") else "rm" if fname == "unlink" else "tee"
                self.found.append(("argv", [verb, path]))
            return
        if fname in _NET_CALLS and fname != "create_connection":
            url = _as_text(first)
            if url and re.match(r"^(https?|ftp)://", url):
                self.found.append(("argv", ["curl", url]))
        elif fname in ("HTTPConnection", "HTTPSConnection", "create_connection") and node.args:
            arg = node.args[0]  # a host, or create_connection's (host, port)
            if isinstance(arg, ast.Tuple) and arg.elts:
                arg = arg.elts[0]
            host = _as_text(_value(arg, env))
            if host and re.match(r"^[\w.-]+$", host):
                scheme = "http" if fname == "HTTPConnection" else "https"
                self.found.append(("argv", ["curl", f"{scheme}://{host}/"]))


def _parse_loose(code: str) -> ast.AST | None:
    """The code parsed, or its dedented form, or None."""
    for text in (code, textwrap.dedent(code)):
        try:
            return ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return None


def _scan(code: str, depth: int) -> list[tuple[str, Any]]:
    tree = _parse_loose(code)
    if tree is None:
        # a fragment (an edit's new lines, an indented hunk): read each statement that parses alone
        found: list[tuple[str, Any]] = []
        for line in code.splitlines()[:2000]:
            piece = line.strip()
            if not piece or piece.startswith("#"):
                continue
            try:
                sub = ast.parse(piece)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            scanner = _Scanner(depth)
            scanner.visit(sub)
            found.extend(scanner.found)
        return found
    scanner = _Scanner(depth)
    try:
        scanner.visit(tree)
    except RecursionError:
        pass
    return scanner.found


@lru_cache(maxsize=4096)
def python_calls(code: str) -> tuple[tuple[str, tuple[str, ...] | str], ...]:
    """What Python ``code`` runs: ``("shell", "cmd line")`` or ``("argv", (word, ...))`` items,
    and ``("load", "path.py")`` for a Python file it imports or loads (run when the trajectory
    wrote it).

    Opens are ``argv`` items ``cat PATH`` / ``tee PATH``; fetches ``curl URL``. Code that does not
    parse is read statement by statement (an edit's fragment); nothing found: ``()``.
    """
    out: list[tuple[str, tuple[str, ...] | str]] = []
    for kind, value in _scan(code, 0):
        out.append((kind, tuple(value) if kind == "argv" else value))
    return tuple(out)
