"""Shell builtins that define rather than run: ``alias``, ``export``/``declare``, ``for VAR in``,
``... | while read VAR``, ``read``/``mapfile`` of literals and ``printf -v`` — recorded in the
:class:`~.shell_context.ShellContext` so later words that use them are judged."""

from __future__ import annotations

import re

from evotree.harness.audit import static as _static
from evotree.harness.audit.hidden_code import LOADER_VARS
from evotree.harness.audit.lexer import SimpleCommand, _Lexer, _split
from evotree.harness.audit.revisions import is_head_relative
from evotree.harness.audit.shell_context import LISTED_REFS, ShellContext
from evotree.harness.audit.shell_values import _pipe_source


def _shell_builtin(name: str, argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> bool:
    """alias, export / declare, for VAR in ..., ... | while read VAR: definitions (True: done)."""
    if name == "alias":
        for word in argv[1:]:
            alias, eq, value = word.partition("=")
            if eq:
                sink.aliases[alias] = value
        return True
    if name in ("export", "declare", "local", "readonly", "typeset"):
        exports = name == "export" or (name in ("declare", "typeset") and "-x" in argv[1:])
        for word in argv[1:]:
            var, eq, value = word.partition("=")
            if eq and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", var):
                sink.vars[var] = value
                if exports and var in LOADER_VARS:
                    # the environment of every later command (whose code it loads)
                    sink.state["exported"] = {**sink.exported(), var: value}
        return True
    if (
        name == "for" and len(argv) > 2
    ):  # for VAR in WORDS: the loop variable takes a value the rules can judge
        var, words = argv[1], argv[3:]
        value = None
        for word in words:
            if word.startswith("$(") and word.endswith(")"):
                inner = _split(_Lexer(word[2:-1]).run())
                scope, items = _pipe_source(inner[-1], sink) if inner else ("unknown", None)
                if scope == "beyond":
                    value = LISTED_REFS
                    break
                if items:
                    word = next((w for w in items if not is_head_relative(w)), items[0])
            if value is None or (is_head_relative(value) and not is_head_relative(word)):
                value = word
        if value is not None:
            sink.vars[var] = value
        return True
    if name in ("read", "mapfile", "readarray", "printf") and _builtin_sets(name, argv, cmd, sink):
        return True
    if name == "read" and cmd.stdin is not None:  # ... | while read VAR
        names = [a for a in argv[1:] if not a.startswith("-")]
        if names:
            scope, items = _pipe_source(cmd.stdin, sink)
            if scope == "beyond":
                sink.vars[names[-1]] = LISTED_REFS
            elif items:
                sink.vars[names[-1]] = next((w for w in items if not is_head_relative(w)), items[0])
        return True
    return False


_READ_VALUED = frozenset({"-d", "-n", "-N", "-p", "-t", "-u"})


_MAPFILE_VALUED = frozenset({"-d", "-n", "-O", "-s", "-u", "-C", "-c"})


def _builtin_sets(name: str, argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> bool:
    """Builtins that set a variable from literals: ``printf -v VAR FORMAT ARGS``, ``read VAR
    <<< WORD`` (or a here-document), ``mapfile -t ARR <<< WORD`` (True: done)."""
    if name == "printf":
        if argv[1:2] != ["-v"] or len(argv) < 4:
            return False
        out = _static.source_output(["printf", *argv[3:]])
        if out is not None:
            sink.vars[argv[2]] = out.decode("utf-8", "replace")
        return True
    text = next((t for op, t in cmd.redirects if op == "<<<"), cmd.heredoc)
    if text is None:
        return False
    valued = _READ_VALUED if name == "read" else _MAPFILE_VALUED
    names = [
        a for k, a in enumerate(argv[1:], 1) if not a.startswith("-") and argv[k - 1] not in valued
    ]
    if names:
        first = text.splitlines()[0] if text.strip() else ""
        sink.vars[names[-1] if name != "read" else names[0]] = first.strip()
    return True
