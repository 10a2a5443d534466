"""What a word or a pipe holds, as far as the command line shows: the output of a pipeline of
literals (:mod:`.static`), ``$(...)`` substitutions with static output or naming a revision,
files a listing of references was written to, and what the left side of a pipe lists
(references beyond the base, HEAD's history, paths, static words)."""

from __future__ import annotations

import re

from evotree.harness.audit import static as _static
from evotree.harness.audit.git_argv import _git_split, _positionals
from evotree.harness.audit.history_rules import _git_rules
from evotree.harness.audit.internals_rules import _GIT_INTERNAL
from evotree.harness.audit.lexer import SimpleCommand, _Lexer, _basename, _split
from evotree.harness.audit.revisions import is_head_relative
from evotree.harness.audit.shell_context import (
    LISTED_REFS,
    ShellContext,
    _expand,
    _norm_path,
    _script_key,
)


def _static_of(cmd: SimpleCommand, sink: ShellContext, hops: int = 0) -> bytes | None:
    """What ``cmd`` prints, when a decoding pipeline of literals computes it (:mod:`.static`)."""
    if hops > 12 or not cmd.argv:
        return None
    argv = _expand(list(cmd.argv), sink.vars) if sink.vars else list(cmd.argv)
    if not argv:
        return None
    name = _basename(argv[0])
    if name in ("echo", "printf"):
        return _static.source_output(argv)
    if name not in _static.FILTERS:
        return None
    data: bytes | None = None
    if cmd.heredoc is not None:
        data = cmd.heredoc.encode("utf-8", "surrogateescape") + b"\n"
    for op, target in cmd.redirects:
        if op == "<<<":
            data = target.encode("utf-8", "surrogateescape") + b"\n"
        elif op == "<":
            key = _script_key(target, sink.scripts)
            data = sink.scripts[key].encode("utf-8", "surrogateescape") if key is not None else None
    if data is None and cmd.stdin is not None:
        data = _static_of(cmd.stdin, sink, hops + 1)
    return _static.filter_output(argv, data, sink.scripts)


def _static_text(text: str, sink: ShellContext) -> str | None:
    """The output of command line ``text`` (a substitution's body) when it is static."""
    if not any(k in text for k in _static.KEYWORDS):
        return None
    cmds = _split(_Lexer(text).run())
    if not cmds:
        return None
    out = _static_of(cmds[-1], sink)
    if out is None:
        return None
    return out.decode("utf-8", "replace").rstrip("\n")


def _substitute(word: str, sink: ShellContext) -> str:
    """``word`` with each ``$(...)`` / backtick substitution whose output is static replaced by
    it."""
    out: list[str] = []
    i = 0
    n = len(word)
    while i < n:
        if word.startswith("$(", i) and not word.startswith("$((", i):
            end = _Lexer(word)._matching(i + 2, "(", ")")
            inner = word[i + 2 : end - 1]
            value = _static_text(inner, sink)
            if value is None and _reads_listed(inner, sink):
                value = LISTED_REFS  # a line of a file a listing of references was written to
            if value is None:
                value = _resolved_rev(inner)
            out.append(word[i:end] if value is None else value)
            i = end
            continue
        if word[i] == "`":
            j = word.find("`", i + 1)
            if j < 0:
                out.append(word[i:])
                break
            value = _static_text(word[i + 1 : j], sink)
            if value is None and _reads_listed(word[i + 1 : j], sink):
                value = LISTED_REFS
            if value is None:
                value = _resolved_rev(word[i + 1 : j])
            out.append(word[i : j + 1] if value is None else value)
            i = j + 1
            continue
        out.append(word[i])
        i += 1
    return "".join(out)


def _resolved_rev(text: str) -> str | None:
    """``$(git rev-parse X)``, ``$(git rev-list -1 X)``, ``$(git log -1 --format=%H X)``: the id
    of X's commit, which names what X names (a revision beyond HEAD stays one)."""
    if "git" not in text:
        return None
    cmds = _split(_Lexer(text).run())
    if len(cmds) != 1 or not cmds[0].argv or _basename(cmds[0].argv[0]) != "git":
        return None
    sub, args = _git_split(cmds[0].argv)
    if sub not in ("rev-parse", "rev-list", "log"):
        return None
    if sub != "rev-parse" and not any(a in ("-1", "-n1", "--max-count=1") for a in args):
        return None
    pos = [a for a in args if not a.startswith("-") and a not in ("1",)]
    if len(pos) != 1 or "$" in pos[0] or "`" in pos[0]:
        return None
    word = re.sub(r"\^\{(?:commit)?\}$", "", pos[0])
    return word if not is_head_relative(word) else "HEAD"


def _listed_files(sink: ShellContext) -> dict[str, bool]:
    """Files the trajectory wrote a listing of references beyond the base to
    (``git branch -r > /tmp/refs.txt``): what a later step reads from them is such a reference."""
    found = sink.state.get("listed_files")
    return found if isinstance(found, dict) else {}


def _names_listed(cmd: SimpleCommand, listed: dict[str, bool]) -> bool:
    words = [*cmd.argv[1:], *(t for op, t in cmd.redirects if op in ("<", "<>"))]
    return any(_script_key(w, listed) is not None for w in words if w and not w.startswith("-"))


def _reads_listed(text: str, sink: ShellContext) -> bool:
    """Does command line ``text`` (a substitution's body) print lines of a listed file?"""
    listed = _listed_files(sink)
    if not listed:
        return False
    for cmd in _split(_Lexer(text).run()):
        if (not cmd.argv or _basename(cmd.argv[0]) in _PASS_THROUGH) and _names_listed(cmd, listed):
            return True
    return False


def _remember_listing(cmd: SimpleCommand, sink: ShellContext) -> None:
    """``git branch -r > f`` (a listing of references beyond the base written to a file): mark f."""
    targets = [t for op, t in cmd.redirects if op in (">", ">>", ">|") and t]
    if targets and _pipe_source(cmd, sink)[0] == "beyond":
        listed = dict(_listed_files(sink))
        listed.update({_norm_path(t): True for t in targets})
        sink.state["listed_files"] = listed


def _procsub_body(word: str, sink: ShellContext) -> str | None:
    """The static output of a process substitution ``<(...)`` used as a file name."""
    if word.startswith("<(") and word.endswith(")"):
        return _static_text(word[2:-1], sink)
    return None


#: programs that pass (a selection of) their input on: a listing piped through them is still
#: that listing
_PASS_THROUGH = frozenset(
    {
        "head",
        "tail",
        "grep",
        "egrep",
        "fgrep",
        "rg",
        "cut",
        "sort",
        "uniq",
        "awk",
        "gawk",
        "sed",
        "tr",
        "cat",
        "tee",
        "column",
        "fmt",
        "tac",
        "shuf",
        "paste",
        "xargs",
        "while",
    }
)


_REF_LISTERS = frozenset(
    {"tag", "for-each-ref", "show-ref", "reflog", "ls-remote", "stash", "name-rev", "describe"}
)


def _pipe_source(cmd: SimpleCommand | None, sink: ShellContext) -> tuple[str, list[str] | None]:
    """What ``cmd`` (the left side of a pipe) lists: ``("static", words)`` when its output is
    computed, ``("beyond", None)`` for references beyond the task's base (``git branch -r``,
    ``git tag``, ``git rev-list --all``, ``cat .git/packed-refs``), ``("head", None)`` for
    HEAD's own history, ``("paths", roots)`` for files, else ``("unknown", None)``."""
    hops = 0
    while cmd is not None and hops < 16:
        out = _static_of(cmd, sink)
        if out is not None:
            return "static", out.decode("utf-8", "replace").split()
        argv = cmd.argv
        if not argv:
            return "unknown", None
        name = _basename(argv[0])
        if name in _PASS_THROUGH and _names_listed(cmd, _listed_files(sink)):
            return "beyond", None
        if (
            name in _PASS_THROUGH
            and cmd.stdin is not None
            and not (
                name in ("grep", "egrep", "fgrep", "rg", "cat")
                and len([a for a in argv[1:] if not a.startswith("-")])
                > (0 if name == "cat" else 1)
            )
        ):
            cmd = cmd.stdin
            hops += 1
            continue
        if name == "git":
            sub, args = _git_split(argv)
            if sub == "branch":
                return ("head", None) if "--show-current" in args else ("beyond", None)
            if sub in _REF_LISTERS:
                return "beyond", None
            if sub in ("log", "rev-list", "shortlog", "whatchanged", "cherry"):
                high = any(h.severity == "high" for h in _git_rules(argv, ""))
                return ("beyond", None) if high else ("head", None)
            if sub in ("ls-files", "diff", "grep", "status", "ls-tree"):
                pos, after = _positionals(args, sub)
                return "paths", after or [p for p in pos if "/" in p or "." in p]
            return "unknown", None
        words = [*argv[1:], *(t for _, t in cmd.redirects)]
        if any(_GIT_INTERNAL.search(w) for w in words):
            return "beyond", None
        if name in ("find", "fd", "ls"):
            roots = []
            for a in argv[1:]:
                if a.startswith(("-", "(", "!")):
                    if name == "find":
                        break
                    continue
                roots.append(a.rstrip("/") + "/" if name == "find" else a)
            return "paths", roots
        return "unknown", None
    return "unknown", None


def _stdin_text(cmd: SimpleCommand, sink: ShellContext) -> str | None:
    """The static text a pipe or here-string feeds to ``cmd`` (a shell or interpreter)."""
    for op, target in cmd.redirects:
        if op == "<<<":
            return target
        if op == "<":
            key = _script_key(target, sink.scripts)
            return sink.scripts[key] if key is not None else _procsub_body(target, sink)
    if cmd.stdin is None:
        return None
    out = _static_of(cmd.stdin, sink)
    return None if out is None else out.decode("utf-8", "replace")
