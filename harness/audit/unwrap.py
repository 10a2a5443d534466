"""The unwrapper of the leak audit: what a simple command really runs.

:func:`parse_shell` parses a command line with the trajectory's :class:`ShellContext` and
unwraps what runs other commands, family by family: ``env`` and ``uv run``-style runners,
wrappers (``sudo``, ``timeout``, ``nohup``, ...), ``xargs``, shells (``bash -c``, a here-document
or pipe fed to a shell, ``eval``), ``find -exec`` / awk / ``script -c``
(:mod:`evotree.harness.audit.spawners`), interpreters' code (Python, node, perl, ...:
:mod:`evotree.harness.audit.inline`), git aliases, and files the trajectory wrote and then ran
(scripts, Makefiles). These are one recursion (what a runner runs is unwrapped again) and stay
here; what they read and record is beside it:

* :mod:`~evotree.harness.audit.shell_context` — :class:`ShellContext` (variables, aliases,
  written files) and how a word is read against it;
* :mod:`~evotree.harness.audit.shell_values` — static output, substitutions, what a pipe lists;
* :mod:`~evotree.harness.audit.written_files` — files written, patches, editors, Makefiles;
* :mod:`~evotree.harness.audit.shell_builtins` — ``alias``, ``export``, ``for``, ``read``, ...
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence
from functools import lru_cache

from evotree.harness.audit import foreign_code as _foreign
from evotree.harness.audit import inline as _inline
from evotree.harness.audit import spawners as _spawners
from evotree.harness.audit.git_argv import _GIT_WORDS, _git_sub_index
from evotree.harness.audit.hidden_code import LOADER_VARS
from evotree.harness.audit.lexer import (
    _ASSIGN,
    _KEYWORDS,
    _SPECIAL,
    SimpleCommand,
    _basename,
    _Lexer,
    _split,
)
from evotree.harness.audit.shell_builtins import _shell_builtin
from evotree.harness.audit.shell_context import LISTED_REFS, ShellContext, _expand, _script_key
from evotree.harness.audit.shell_values import (
    _pipe_source,
    _procsub_body,
    _stdin_text,
    _substitute,
)
from evotree.harness.audit.shells import FOLLOWED, c_option
from evotree.harness.audit.written_files import (
    _EDIT_BLOCK,
    _editor,
    _editor_tool,
    _make_recipes,
    _reads_stdin_makefile,
    _remember_writes,
)

__all__ = ["MAX_DEPTH", "parse_shell"]


#: Parsing nested ``bash -c`` / ``eval`` / substitutions stops at this depth.
MAX_DEPTH = 8


_PYTHONS = re.compile(r"^(python|pypy)[0-9.]*$")


# wrappers: name -> (options that take an argument, positional args to skip before the command)
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "-t"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "-o"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e"}), 0),
    "unbuffer": (frozenset(), 0),
    "watch": (frozenset({"-n", "--interval", "-d"}), 0),
    "xargs": (
        frozenset(
            {
                "-I",
                "-i",
                "-n",
                "-L",
                "-l",
                "-P",
                "-d",
                "-E",
                "-e",
                "-s",
                "-a",
                "--max-args",
                "--max-procs",
                "--delimiter",
                "--arg-file",
            }
        ),
        0,
    ),
    "taskset": (frozenset(), 1),
    "chronic": (frozenset(), 0),
    "caffeinate": (frozenset(), 0),
    "strace": (frozenset({"-e", "-o", "-p", "-s"}), 0),
    "flock": (frozenset({"-w", "-E", "--timeout"}), 1),
}


def _after_options(argv: Sequence[str], with_arg: frozenset[str], skip: int) -> list[str]:
    """The words after a wrapper's options (and ``skip`` positional words)."""
    k = 1
    while k < len(argv):
        word = argv[k]
        if word == "--":
            k += 1
            break
        if word.startswith("-") and len(word) > 1:
            name = word.split("=", 1)[0]
            k += (
                2
                if (
                    name in with_arg
                    and "=" not in word
                    and not (len(word) > 2 and word[:2] in with_arg and not word.startswith("--"))
                )
                else 1
            )
            continue
        break
    return list(argv[k + skip :])


def _emit_code(
    calls: Iterable[tuple[str, tuple[str, ...] | str]], depth: int, sink: ShellContext
) -> None:
    for kind, value in calls:
        if kind == "shell":
            _parse_into(str(value), depth + 1, sink)
        elif kind == "load":
            # a Python file the code imports or loads: read when the trajectory wrote it
            key = _script_key(str(value), sink.scripts) if depth < MAX_DEPTH else None
            if key is not None:
                _run_script(sink.scripts[key], "python", depth + 1, sink)
        elif value:
            _unwrap(SimpleCommand(tuple(value)), depth + 1, sink)


def _run_script(body: str, interpreter: str, depth: int, sink: ShellContext) -> None:
    """A file the trajectory wrote is run: read it as the program that runs it would."""
    first = body.lstrip()[:120].split("\n", 1)[0]
    if interpreter == "shebang":
        interpreter = (
            "python"
            if "python" in first
            else "node"
            if re.search(r"\b(node|deno|bun)\b", first)
            else "perl"
            if re.search(r"\b(perl|ruby|php)\b", first)
            else "sh"
        )
    if interpreter == "python":
        _emit_code(_inline.python_calls(body), depth, sink)
    elif interpreter in ("node", "perl"):
        _emit_code(_foreign.foreign_calls(body), depth, sink)
    else:
        _parse_into(body, depth + 1, sink)


_FOREIGN = {
    "node": ("-e", "--eval", "-p", "--print"),
    "nodejs": ("-e", "--eval", "-p", "--print"),
    "bun": ("-e", "--eval"),
    "deno": ("eval",),
    "perl": ("-e", "-E"),
    "ruby": ("-e",),
    "php": ("-r",),
    "Rscript": ("-e",),
}


def _unwrap(cmd: SimpleCommand, depth: int, sink: ShellContext) -> None:
    """Append ``cmd`` (wrappers removed) and whatever it runs to ``sink``: definitions are
    recorded, editor tools write files, written files and Makefiles that run are read, wrappers,
    shells and interpreters are unwrapped; what is left is appended as it is."""
    argv = _prepared(cmd, depth, sink)
    if argv is None:
        return
    name = _basename(argv[0])
    if _shell_builtin(name, argv, cmd, sink) or _editor_tool(name, argv, cmd, sink):
        return
    _remember_writes(name, argv, cmd, sink)
    if name == "git":
        argv = _git_alias(_with_env_config(argv, cmd.assigns), depth, sink)
        if argv is None:
            return
        _submodule_foreach(argv, depth, sink)
    if name in ("make", "gmake") and cmd.heredoc is not None and _reads_stdin_makefile(argv):
        sink.scripts["/dev/stdin"] = cmd.heredoc  # ``make -f - <<EOF``: the body is the Makefile
        stdin_file = ("--file=-", "-f-", "--file=/dev/stdin", "--makefile=-")
        argv = [
            w
            for a in argv
            for w in (
                ["-f", "/dev/stdin"] if a in stdin_file else ["/dev/stdin"] if a == "-" else [a]
            )
        ]
    _run_written(name, argv, depth, sink)
    if _unwrap_runner(name, argv, cmd, depth, sink) or _interpreter_code(
        name, argv, cmd, depth, sink
    ):
        return
    # the loader paths are kept (set before the command, or exported earlier): they decide
    # whose code a program runs (``PYTHONPATH``, ``LD_PRELOAD``, ``PATH``)
    loaders = {**sink.exported(), **{n: v for n, v in cmd.assigns if n in LOADER_VARS}}
    paths = tuple(loaders.items())
    heredoc = cmd.heredoc
    if heredoc is None and _PYTHONS.match(name):
        heredoc = _python_code_elsewhere(argv, cmd, sink)
    sink.append(
        SimpleCommand(tuple(argv), cmd.redirects, heredoc, paths, cmd.stdin, xargs=cmd.xargs)
    )


def _python_code_elsewhere(argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> str | None:
    """The code a Python run reads that its command line does not hold: what a pipe or ``<``
    feeds it (``echo CODE | python``), or the body of a script the trajectory wrote (``python
    run.py``): kept as the command's here-document, so the rules on a run's code judge it (the
    s21 red team's B13)."""
    k, script = 1, None
    while k < len(argv):
        word = argv[k]
        if word == "--":
            script = argv[k + 1] if k + 1 < len(argv) else None
            break
        if word == "-" or not word.startswith("-"):
            script = None if word == "-" else word
            break
        if word.startswith("--"):
            k += 2 if word == "--check-hash-based-pycs" else 1
            continue
        for j, letter in enumerate(word[1:], 1):
            if letter in "cm":
                return None  # the code is on the command line, or a module runs
            if letter in "XW":  # their value: the rest of the word or the next one (I7)
                k += 0 if word[j + 1 :] else 1
                break
        k += 1
    if script is None:
        return _stdin_text(cmd, sink)
    key = _script_key(script, sink.scripts)
    return sink.scripts[key] if key is not None else None


def _prepared(cmd: SimpleCommand, depth: int, sink: ShellContext) -> list[str] | None:
    """``cmd``'s words with assignments dropped, variables expanded, static substitutions put in
    place; None when nothing is left to run here (a bare assignment, a built command word or an
    alias, parsed again)."""
    argv = list(cmd.argv)
    while argv and _ASSIGN.match(argv[0]):
        argv.pop(0)
    if not argv:
        for name, value in cmd.assigns:
            sink.vars[name] = _substitute(value, sink) if ("$(" in value or "`" in value) else value
        if cmd.redirects:
            sink.append(SimpleCommand((), cmd.redirects, cmd.heredoc))
        return None
    if sink.vars:
        argv = _expand(argv, sink.vars)
        if not argv:
            return None
    if depth < MAX_DEPTH and any("$(" in w or "`" in w for w in argv):
        new = [_substitute(w, sink) if ("$(" in w or "`" in w) else w for w in argv]
        if new != argv:
            if new[0] != argv[0]:  # the command word itself was built: parse what it became
                _parse_into(" ".join(new), depth + 1, sink)
                return None
            argv = new
    if "$" in argv[0] and len(argv) > 1 and argv[1] in _GIT_WORDS:
        argv = ["git", *argv[1:]]  # a command name the audit cannot resolve, given git's words
    name = _basename(argv[0])
    alias_value = sink.aliases.get(name)
    if alias_value is not None and depth < MAX_DEPTH and alias_value.split()[:1] != [name]:
        _parse_into(alias_value + " " + " ".join(argv[1:]), depth + 1, sink)
        return None
    return argv


def _env_config(assigns: Sequence[tuple[str, str]]) -> list[str]:
    """The ``key=value`` settings git reads from the environment a command is given
    (``GIT_CONFIG_COUNT`` with ``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>``, and
    ``GIT_CONFIG_PARAMETERS``, the form git's own ``-c`` passes on), in git's order."""
    env = dict(assigns)
    settings: list[str] = []
    try:
        params = shlex.split(env.get("GIT_CONFIG_PARAMETERS", ""))
    except ValueError:
        params = []
    settings += [p for p in params if "=" in p]
    count = env.get("GIT_CONFIG_COUNT", "")
    for n in range(int(count) if count.isdigit() else 0):
        key = env.get(f"GIT_CONFIG_KEY_{n}")
        if key:
            settings.append(f"{key}={env.get(f'GIT_CONFIG_VALUE_{n}', '')}")
    return settings


def _with_env_config(argv: list[str], assigns: Sequence[tuple[str, str]]) -> list[str]:
    """``argv`` with the settings of the command's environment (:func:`_env_config`) written as
    git's own ``-c key=value`` options, so that the rules read them as they read ``-c``
    (``showbranch.default``, an alias)."""
    settings = _env_config(assigns)
    if not settings:
        return argv
    return [argv[0], *[w for kv in settings for w in ("-c", kv)], *argv[1:]]


def _git_alias(argv: list[str], depth: int, sink: ShellContext) -> list[str] | None:
    """git's own aliases (``git config alias.x``, ``git -c alias.x=...``): the words they stand
    for; None when a shell alias (``!...``) was parsed instead."""
    k = _git_sub_index(argv)
    if k > 0:
        sub = argv[k]
        inline = {}
        for j in range(1, k):
            if argv[j] == "-c" and j + 1 < k and argv[j + 1].startswith("alias."):
                alias, _, value = argv[j + 1][6:].partition("=")
                inline[alias] = value
        if sub == "config":
            words = [a for a in argv[k + 1 :] if not a.startswith("-")]
            if len(words) >= 2 and words[0].startswith("alias."):
                sink.git_aliases[words[0][6:]] = " ".join(words[1:])
        value = inline.get(sub, sink.git_aliases.get(sub))
        if value is not None and depth < MAX_DEPTH:
            if value.startswith("!"):
                _parse_into(value[1:] + " " + " ".join(argv[k + 1 :]), depth + 1, sink)
                return None
            argv = [*argv[:k], *value.split(), *argv[k + 1 :]]
    return argv


def _submodule_foreach(argv: list[str], depth: int, sink: ShellContext) -> None:
    """``git submodule [--quiet] foreach [--recursive] CMD...``: CMD runs as a shell command in
    each submodule (parsed like ``sh -c``), so each git command in it is kept as ``git -C
    $sm_path ...`` (the repository it reads is a submodule's); the git command itself is kept
    too."""
    k = _git_sub_index(argv)
    if k <= 0 or argv[k] != "submodule" or depth >= MAX_DEPTH:
        return
    rest = [a for a in argv[k + 1 :]]
    while rest and rest[0] in ("-q", "--quiet"):
        rest.pop(0)
    if rest[:1] != ["foreach"]:
        return
    rest = rest[1:]
    while rest and rest[0] in ("--recursive", "-q", "--quiet"):
        rest.pop(0)
    if rest:
        start = len(sink)
        _parse_into(" ".join(rest), depth + 1, sink)
        for at in range(start, len(sink)):
            cmd = sink[at]
            if cmd.argv and _basename(cmd.argv[0]) == "git":
                argv2 = (cmd.argv[0], "-C", "$sm_path", *cmd.argv[1:])
                sink[at] = SimpleCommand(argv2, cmd.redirects, cmd.heredoc, cmd.assigns, cmd.stdin)


def _run_written(name: str, argv: list[str], depth: int, sink: ShellContext) -> None:
    """make of a Makefile the trajectory wrote, and a script it wrote that runs (source, a path,
    an interpreter with a file)."""
    if name in ("make", "gmake") and depth < MAX_DEPTH:
        for line in _make_recipes(argv, sink):  # a Makefile the trajectory wrote: its recipes run
            _parse_into(line, depth + 1, sink)
    script = None
    interpreter = "sh"
    if name in ("source", ".") and len(argv) > 1:
        script = argv[1]
    elif argv[0].startswith(("./", "/")) or "/" in argv[0]:
        if _script_key(argv[0], sink.scripts) is not None:
            script, interpreter = argv[0], "shebang"
    elif name in FOLLOWED or _PYTHONS.match(name) or name in _FOREIGN:
        script = next((a for a in argv[1:] if not a.startswith("-")), None)
        interpreter = "python" if _PYTHONS.match(name) else "node" if name in _FOREIGN else "sh"
        if c_option(argv) == 1:  # ``bash -c TEXT``: no script (TEXT is parsed as a shell's)
            script = None
        if _PYTHONS.match(name) and "-m" in argv[1:] and argv.index("-m") + 1 < len(argv):
            module = argv[argv.index("-m") + 1]
            script = module.replace(".", "/") + ".py"
            if _script_key(script, sink.scripts) is None:
                script = module.replace(".", "/") + "/__main__.py"
    if script is not None and depth < MAX_DEPTH:
        body = _procsub_body(script, sink)
        if body is None:
            key = _script_key(script, sink.scripts)
            body = sink.scripts[key] if key is not None else None
        if body is not None:
            _run_script(body, interpreter, depth, sink)


def _unwrap_runner(
    name: str, argv: list[str], cmd: SimpleCommand, depth: int, sink: ShellContext
) -> bool:
    """env, xargs, ``uv run`` and the like, wrappers, shells and eval: what they run (True:
    done); find -exec, awk and ``script -c``: what they spawn besides (False: the command itself
    is kept too)."""
    if name == "env":
        _run_env(argv, cmd, depth, sink)
        return True
    if name == "xargs":
        _xargs(argv, cmd, depth, sink)
        return True
    if (
        name in ("uv", "poetry", "pipenv", "pdm", "hatch", "rye")
        and argv[1:2] == ["run"]
        and len(argv) > 2
        and _run_project_tool(argv, cmd, depth, sink)
    ):
        return True
    if name in _WRAPPERS:
        _run_wrapper(name, argv, cmd, depth, sink)
        return True
    if name in FOLLOWED:
        _run_shell(name, argv, cmd, depth, sink)
        return True
    if name == "eval":
        _parse_into(" ".join(argv[1:]), depth + 1, sink)
        return True
    _run_spawned(name, argv, depth, sink)
    return False


def _run_env(argv: list[str], cmd: SimpleCommand, depth: int, sink: ShellContext) -> None:
    """``env [-u VAR] [NAME=value] CMD``: CMD; ``env -S 'CMD ARGS'``: the string, parsed;
    ``env -C DIR CMD``: CMD run in DIR (the s21 red team's B12), as ``cd DIR``, CMD and the way
    back (``cd ..`` as many times as DIR has parts) where DIR is a plain relative path (one
    that is not, absolute, ``~``, a variable or with ``..``: CMD in the line's own folder, as
    before: the way back would lose it, the s22 imports red team's I2). The option as GNU env
    reads it: fused (``-Cgansey``), in a cluster (``-iC gansey``), a long one shortened
    (``--ch=gansey``: I1)."""
    k, moved = 1, ""
    while k < len(argv):
        word = argv[k]
        long, eq, value = word.partition("=")
        if len(long) >= 3 and "--chdir".startswith(long):
            moved = value if eq else argv[k + 1] if k + 1 < len(argv) else ""
            k += 1 if eq else 2
        elif re.fullmatch(r"-[0iv]*C.*", word):
            rest = word[word.index("C") + 1 :]
            moved = rest or (argv[k + 1] if k + 1 < len(argv) else "")
            k += 1 if rest else 2
        elif word in ("-u", "--unset"):
            k += 2
        elif word in ("-S", "--split-string") and k + 1 < len(argv):
            rest = argv[k + 2 :]
            split = argv[k + 1] + (" " + " ".join(rest) if rest else "")
            # the string's own options are env's (``-S '-C gansey python ..'``: I1)
            _parse_into(("env " if split.lstrip().startswith("-") else "") + split, depth + 1, sink)
            return
        elif word.startswith("-") or _ASSIGN.match(word):
            k += 1
        else:
            break
    inner = argv[k:]
    # the loader paths env sets are the program's environment (``env PYTHONPATH=DIR python``)
    sets = tuple(
        (n, v)
        for n, _, v in (w.partition("=") for w in argv[1:k] if _ASSIGN.match(w))
        if n in LOADER_VARS
    )
    moved = re.sub(r"^(?:\$PWD|\$\{PWD\}|~\+)(?:/|$)", "./", moved)  # the folder it is in
    plain = moved and not moved.startswith(("/", "~", "$"))
    moved = posixpath.normpath(moved) if plain else moved  # ``config/../gansey``: gansey
    parts = [p for p in moved.split("/") if p not in ("", ".")]
    if inner and moved and not (plain and parts and ".." not in parts) and "-c" in inner[1:]:
        # a folder the way back cannot be told from (absolute, ``~``, ``..`` first): Python's
        # ``-c`` code gets the move as its own ``os.chdir``, which the import rule follows from
        # the line's own folder; the line's folder is kept for what follows (I2)
        at = inner.index("-c", 1) + 1
        if at < len(inner) and _PYTHONS.match(_basename(inner[0])):
            inner[at] = f"import os; os.chdir({moved!r})\n" + inner[at]
    if inner and plain and parts and ".." not in parts:
        sink.append(SimpleCommand(("cd", moved)))
        _unwrap(
            SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, sets, cmd.stdin), depth, sink
        )
        sink.append(SimpleCommand(("cd", "/".join([".."] * len(parts)))))
    elif inner:
        _unwrap(
            SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, sets, cmd.stdin), depth, sink
        )
    else:
        sink.append(cmd)


def _run_project_tool(argv: list[str], cmd: SimpleCommand, depth: int, sink: ShellContext) -> bool:
    """``uv run [OPTS] CMD`` (poetry, pipenv, pdm, hatch, rye alike): CMD (False: none named)."""
    inner = [a for a in argv[2:]]
    while inner and inner[0].startswith("-"):
        inner.pop(0)
    if not inner:
        return False
    _unwrap(SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink)
    return True


def _run_wrapper(
    name: str, argv: list[str], cmd: SimpleCommand, depth: int, sink: ShellContext
) -> None:
    """sudo, timeout, nice, nohup, ... (:data:`_WRAPPERS`): the command after their options;
    ``command -v`` runs nothing."""
    if name == "command" and len(argv) > 1 and argv[1] in ("-v", "-V"):
        return
    with_arg, skip = _WRAPPERS[name]
    inner = _after_options(argv, with_arg, skip)
    if inner:
        _unwrap(SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink)
    else:
        sink.append(SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc))


def _run_shell(
    name: str, argv: list[str], cmd: SimpleCommand, depth: int, sink: ShellContext
) -> None:
    """A shell: ``busybox CMD``, ``bash -c TEXT``, ``bash <<EOF``, ``... | bash`` (static text
    fed in): what it runs; the shell itself is kept."""
    args = argv[1:]
    if name == "busybox" and args:
        _unwrap(SimpleCommand(tuple(args), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink)
        return
    at = c_option(argv)
    if at is not None:
        if at + 1 < len(argv):
            _parse_into(argv[at + 1], depth + 1, sink)
        sink.append(SimpleCommand(tuple(argv), cmd.redirects, None))
        return
    if not [w for w in args if not w.startswith("-")]:
        if cmd.heredoc:
            _parse_into(cmd.heredoc, depth + 1, sink)  # bash <<EOF ... EOF
            sink.append(SimpleCommand(tuple(argv), cmd.redirects, None))
            return
        fed = _stdin_text(cmd, sink)
        if fed is not None:  # echo ... | base64 -d | bash
            _parse_into(fed, depth + 1, sink)
    sink.append(SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc))


def _run_spawned(name: str, argv: list[str], depth: int, sink: ShellContext) -> None:
    """What ``find -exec``, awk's ``system()`` and ``script -c`` run (:mod:`.spawners`)."""
    runs = _spawners.find_exec(argv) if name == "find" else []
    texts = _spawners.awk_commands(argv) if name in _spawners.AWKS else []
    if name == "script" and _spawners.script_command(argv):
        texts = [_spawners.script_command(argv) or ""]
    for run in runs:
        _unwrap(SimpleCommand(tuple(run), (), None), depth + 1, sink)
    for text in texts:
        _parse_into(text, depth + 1, sink)


def _interpreter_code(
    name: str, argv: list[str], cmd: SimpleCommand, depth: int, sink: ShellContext
) -> bool:
    """Code given to node / perl / ruby / ..., and to Python (``-c``, stdin, a here-document):
    the programs it runs (True: ``python -m pip`` became pip)."""
    if name in _FOREIGN:
        flags = _FOREIGN[name]
        code = next((argv[k + 1] for k, a in enumerate(argv[:-1]) if a in flags), None)
        if code is None and len(argv) == 1 or argv[1:] == ["-"]:
            code = cmd.heredoc if cmd.heredoc is not None else _stdin_text(cmd, sink)
        if code:
            _emit_code(_foreign.foreign_calls(code), depth, sink)
    if _PYTHONS.match(name):
        args = argv[1:]
        if len(args) >= 2 and args[0] == "-m" and args[1] in ("pip", "pip3"):
            _unwrap(
                SimpleCommand(tuple(["pip", *args[2:]]), cmd.redirects, cmd.heredoc), depth, sink
            )
            return True
        code = None
        for k, word in enumerate(args):
            if word == "-c" and k + 1 < len(args):
                code = args[k + 1]
                break
            if not word.startswith("-"):
                break
        if code is None and (not [a for a in args if not a.startswith("-")] or args[-1:] == ["-"]):
            code = cmd.heredoc if cmd.heredoc is not None else _stdin_text(cmd, sink)
        if code is not None:
            _emit_code(_inline.python_calls(code), depth, sink)
    return False


def _xargs(argv: list[str], cmd: SimpleCommand, depth: int, sink: ShellContext) -> None:
    """``... | xargs CMD``: CMD runs with the listed words as arguments (``-I R``: in place
    of R)."""
    with_arg = _WRAPPERS["xargs"][0]
    inner = _after_options(argv, with_arg, 0) or ["echo"]
    repl = None
    for k, word in enumerate(argv[1 : len(argv) - len(inner)], 1):
        if word in ("-I", "--replace") and k + 1 < len(argv):
            repl = argv[k + 1]
        elif word.startswith("-I") and len(word) > 2:
            repl = word[2:]
        elif word.startswith("--replace="):
            repl = word.split("=", 1)[1]
        elif word == "-i":
            repl = "{}"
    scope, items = _pipe_source(cmd.stdin, sink) if cmd.stdin is not None else ("unknown", None)
    if cmd.stdin is None and _spawners.fed_words(cmd.redirects, cmd.heredoc):
        scope, items = "static", _spawners.fed_words(cmd.redirects, cmd.heredoc)
    if scope == "static" and items:
        items = items[:64]
        runs = (
            [[w.replace(repl, it) for w in inner] for it in items[:16]] if repl else [inner + items]
        )
    elif scope == "beyond":
        runs = [[w.replace(repl, LISTED_REFS) for w in inner]] if repl else [inner + [LISTED_REFS]]
    elif scope == "head":
        runs = [[w.replace(repl, "HEAD") for w in inner]] if repl else [inner]
    elif scope == "paths" and items:
        runs = (
            [[w.replace(repl, it) for w in inner] for it in items[:16]]
            if repl
            else [inner + items[:64]]
        )
    else:
        runs = [inner]
    for run in runs:  # (the pipe's source kept: what found the files xargs hands on)
        _unwrap(
            SimpleCommand(tuple(run), cmd.redirects, cmd.heredoc, (), cmd.stdin, xargs=True),
            depth,
            sink,
        )


def _parse_into(text: str, depth: int, sink: ShellContext) -> None:
    if depth > MAX_DEPTH or not text.strip():
        return
    if (
        text.startswith("edit") and "end_of_edit" in text
    ):  # SWE-agent's editor: the body is file content
        m = _EDIT_BLOCK.match(text.strip())
        if m:
            _editor(
                [
                    "str_replace_editor",
                    "insert",
                    str(sink.state.get("open_file") or "<edited file>"),
                    "--new_str",
                    m.group(1),
                ],
                sink,
            )
            return
    lexer = _Lexer(text).run()
    for sub in lexer.subs:
        _parse_into(sub, depth + 1, sink)
    for cmd in _split(lexer):
        _unwrap(cmd, depth, sink)


@lru_cache(maxsize=65536)
def _parse_cached(text: str) -> tuple[tuple[SimpleCommand, ...], bool]:
    sink = ShellContext()
    if not _SPECIAL.search(text):  # plain words: no lexer needed
        words = text.split()
        if words and not _ASSIGN.match(words[0]) and words[0] not in _KEYWORDS:
            _unwrap(SimpleCommand(tuple(words)), 0, sink)
            return tuple(sink), sink.defines or bool(sink.state)
    _parse_into(text, 0, sink)
    return tuple(sink), sink.defines or bool(sink.state)


def parse_shell(text: str, context: ShellContext | None = None) -> tuple[SimpleCommand, ...]:
    """Every simple command ``text`` runs (substitutions and ``bash -c`` bodies first).

    ``context`` carries variables, aliases and scripts from earlier commands of the same
    trajectory (and receives this command's); without it each command stands alone.
    """
    if context is None or not context.relevant(text):
        found, defines = _parse_cached(text)
        if context is None or not defines:
            return found
    sink = ShellContext()
    if context is not None:
        sink.share(context)
    _parse_into(text, 0, sink)
    return tuple(sink)
