"""The unwrapper of the leak audit: what a simple command really runs.

:func:`parse_shell` parses a command line with the trajectory's :class:`ShellContext` and
unwraps wrappers (``env``, ``sudo``, ``timeout``, ``bash -c``, ``eval``, ``xargs``, ...),
variables, aliases, git aliases, files the trajectory wrote and then ran (scripts, Makefiles),
Python and other interpreters' code (:mod:`evotree.harness.audit.inline`) and commands built
from literals (:mod:`evotree.harness.audit.static`). Moved out of
:mod:`evotree.harness.audit.commands`, which re-exports these names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from evotree.harness.audit import inline as _inline
from evotree.harness.audit import static as _static
from evotree.harness.audit import spawners as _spawners
from evotree.harness.audit.lexer import (
    SimpleCommand,
    _ASSIGN,
    _KEYWORDS,
    _Lexer,
    _SPECIAL,
    _basename,
    _split,
)
from evotree.harness.audit.git_argv import _GIT_GLOBAL_ARG, _git_split, _positionals
from evotree.harness.audit.history_rules import _git_rules
from evotree.harness.audit.internals_rules import _GIT_INTERNAL
from evotree.harness.audit.revisions import is_head_relative

__all__ = ["MAX_DEPTH", "ShellContext", "LISTED_REFS", "parse_shell"]


#: Parsing nested ``bash -c`` / ``eval`` / substitutions stops at this depth.
MAX_DEPTH = 8


# ----------------------------------------------------------------------------- unwrapping
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "fish", "busybox"})
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


class ShellContext(list):  # type: ignore[type-arg]
    """The simple commands found so far, and what earlier commands defined: shell variables
    (``G=git``), aliases (``alias gl='git log --all'``), git aliases (``git config alias.h
    'log --all'``) and files written from the command line or by editor tools (``cat > s.sh
    <<EOF``, ``echo ... > s.sh``, ``apply_patch``, ``str_replace_editor create``), so ``$G log
    --all``, ``gl``, ``git h`` and ``bash s.sh`` / ``python s.py`` are seen for what they run.
    ``state`` holds what the trajectory did that later steps depend on (its own stashes, the
    file an editor has open). One context may span a trajectory's steps."""

    def __init__(self) -> None:
        super().__init__()
        self.vars: dict[str, str] = {}
        self.aliases: dict[str, str] = {}
        self.scripts: dict[str, str] = {}
        self.git_aliases: dict[str, str] = {}
        self.state: dict[str, object] = {}

    def share(self, other: ShellContext) -> None:
        """Read and write ``other``'s definitions (not its commands)."""
        self.vars, self.aliases, self.scripts = other.vars, other.aliases, other.scripts
        self.git_aliases, self.state = other.git_aliases, other.state

    @property
    def defines(self) -> bool:
        return bool(self.vars or self.aliases or self.scripts or self.git_aliases)

    def relevant(self, text: str) -> bool:
        """Could a definition change how ``text`` parses? (False: the memoized parse is right.)"""
        if self.vars and "$" in text:
            return True
        if self.git_aliases and "git" in text:
            return True
        listed = self.state.get("listed_files")
        if isinstance(listed, dict) and any(_basename(p) in text for p in listed):
            return True
        if self.aliases and any(a in text for a in self.aliases):
            return True
        if self.scripts:
            if "end_of_edit" in text or "str_replace_editor" in text or "apply_patch" in text:
                return True
            if "make" in text and any(_basename(p) in _MAKEFILES for p in self.scripts):
                return True
            return any(_basename(p).rsplit(".", 1)[0] in text for p in self.scripts if p)
        return False


_VAR_WORD = re.compile(
    r"^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)"
    r"(?:\[(?:0|@|\*)\])?\})$"
)
_VAR_REF = re.compile(r"\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})")
#: what a variable or an ``xargs`` argument holds when it comes from a listing of references
#: beyond the task's base (``git branch -r | xargs git show``): a ref, as far as the rules go
LISTED_REFS = "refs/<listed-by-the-trajectory>"


def _expand(argv: list[str], vars_: dict[str, str]) -> list[str]:
    out: list[str] = []
    for word in argv:
        m = _VAR_WORD.match(word)
        if m and (m.group(1) or m.group(2)) in vars_:
            out.extend(vars_[m.group(1) or m.group(2)].split())
        elif "$" in word:
            out.append(
                _VAR_REF.sub(lambda r: vars_.get(r.group(1) or r.group(2), r.group(0)), word)
            )
        else:
            out.append(word)
    return out


def _norm_path(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _script_key(path: str, scripts: dict[str, str]) -> str | None:
    """The key of ``scripts`` that ``path`` names: the same path, or one ends with the other
    (``/repo/tools/dig.py`` written, ``python tools/dig.py`` run from ``/repo``)."""
    clean = _norm_path(path)
    if clean in scripts:
        return clean
    if not clean or clean.endswith("/"):
        return None
    for key in scripts:
        if key.endswith("/" + clean) or clean.endswith("/" + key):
            return key
    return None


# ----------------------------------------------------------------------------- static output
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
    """``word`` with each ``$(...)`` / backtick substitution whose output is static replaced by it."""
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


# ----------------------------------------------------------------------------- what a pipe feeds
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


# ----------------------------------------------------------------------------- files written
def _remember_script(name: str, argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> None:
    targets = [t for op, t in cmd.redirects if op in (">", ">>", ">|") and t]
    if name == "tee":
        targets += [a for a in argv[1:] if not a.startswith("-")]
    if name in ("cp", "mv") and len(argv) >= 3:
        args = [a for a in argv[1:] if not a.startswith("-")]
        key = _script_key(args[0], sink.scripts) if len(args) == 2 else None
        if key is not None:
            sink.scripts[_norm_path(args[1])] = sink.scripts[key]
        return
    if not targets:
        return
    if name == "tee" and cmd.heredoc is not None:
        body = cmd.heredoc
    elif name == "tee" and cmd.stdin is not None:
        out = _static_of(cmd.stdin, sink)
        if out is None:
            return
        body = out.decode("utf-8", "replace")
    else:
        out = _static_of(cmd, sink)
        if out is None:
            return
        body = out.decode("utf-8", "replace")
        if name == "echo":  # sh's echo reads escapes
            body = body.replace("\\n", "\n")
    for target in targets:
        path = _norm_path(target)
        if any(op == ">>" for op, t in cmd.redirects if t == target):
            sink.scripts[path] = sink.scripts.get(path, "") + body
        else:
            sink.scripts[path] = body


_PATCH_HEAD = re.compile(
    r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\+\+\+ (?:b/)?(.+?)(?:\t.*)?$|^\*\*\* Move to: (.+?)\s*$"
)


def _patch_writes(text: str) -> list[tuple[str, str, bool]]:
    """(path, content, complete) for each file a patch writes: Codex ``apply_patch`` format
    (``*** Add File:`` / ``*** Update File:``) or a unified diff (``+++ b/path``). An update's
    content is its added lines (``complete`` False)."""
    out: list[tuple[str, list[str], bool]] = []
    for line in text.splitlines():
        m = _PATCH_HEAD.match(line)
        if m:
            if m.group(1):
                out.append((m.group(2), [], m.group(1) == "Add"))
            elif m.group(3) and m.group(3) != "/dev/null":
                out.append((m.group(3), [], False))
            elif m.group(4):
                out.append((m.group(4), [], False))
            continue
        if out and line.startswith("+") and not line.startswith("+++"):
            out[-1][1].append(line[1:])
    return [(p, "\n".join(lines), complete) for p, lines, complete in out]


def _write_file(
    path: str, content: str, complete: bool, sink: ShellContext, redirects: tuple = ()
) -> None:
    """An editor tool or patch wrote ``path``: remember its content, and let the write rules see it."""
    key = _norm_path(path)
    if complete:
        sink.scripts[key] = content
    else:
        old_key = _script_key(path, sink.scripts)
        sink.scripts[old_key or key] = (
            (sink.scripts.get(old_key, "") + "\n") if old_key else ""
        ) + content
    sink.append(SimpleCommand(("tee", path), redirects))


def _editor(argv: list[str], sink: ShellContext) -> None:
    """SWE-agent's ``str_replace_editor CMD PATH [--file_text T] [--old_str A] [--new_str B]``."""
    sub = argv[1] if len(argv) > 1 else ""
    path = argv[2] if len(argv) > 2 else str(sink.state.get("open_file") or "")
    opts: dict[str, str] = {}
    k = 3
    while k < len(argv):
        if argv[k].startswith("--") and k + 1 < len(argv):
            opts[argv[k][2:]] = argv[k + 1]
            k += 2
        else:
            k += 1
    if not path:
        return
    sink.state["open_file"] = path
    if sub == "view":
        sink.append(SimpleCommand(("cat", path)))
        return
    if sub == "create":
        _write_file(path, opts.get("file_text", ""), True, sink)
        return
    if sub in ("str_replace", "insert"):
        key = _script_key(path, sink.scripts)
        new, old = opts.get("new_str", ""), opts.get("old_str")
        if key is not None and old and old in sink.scripts[key]:
            _write_file(key, sink.scripts[key].replace(old, new, 1), True, sink)
        else:
            _write_file(path, new, False, sink)
        return
    sink.append(SimpleCommand(("tee", path)))


_EDIT_BLOCK = re.compile(r"^edit\s+(?:\d+(?::\d+)?\s*)?\n(.*?)(?:\n)?end_of_edit\s*$", re.S)


# ----------------------------------------------------------------------------- unwrapping
def _git_sub_index(argv: Sequence[str]) -> int:
    k = 1
    while k < len(argv):
        word = argv[k]
        if word in _GIT_GLOBAL_ARG:
            k += 2
            continue
        if word.startswith("-"):
            k += 1
            continue
        return k
    return -1


def _emit_code(
    calls: Iterable[tuple[str, tuple[str, ...] | str]], depth: int, sink: ShellContext
) -> None:
    for kind, value in calls:
        if kind == "shell":
            _parse_into(str(value), depth + 1, sink)
        elif value:
            _unwrap(SimpleCommand(tuple(value)), depth + 1, sink)


_MAKEFILES = frozenset({"Makefile", "makefile", "GNUmakefile"})
_MAKE_RULE = re.compile(r"^([^\s#:=][^:=]*?)\s*::?(?!=)\s*([^;=]*?)\s*(?:;\s*(.*))?$")


def _make_recipes(argv: Sequence[str], sink: ShellContext) -> list[str]:
    """The recipe lines ``make [-f FILE] [TARGET...]`` runs, from a Makefile the trajectory wrote
    (the first target when none is named; prerequisites that are targets first). Empty when the
    Makefile is not known."""
    path = None
    targets: list[str] = []
    k = 1
    while k < len(argv):
        word = argv[k]
        if word in ("-f", "--file", "--makefile") and k + 1 < len(argv):
            path = argv[k + 1]
            k += 2
            continue
        if word.startswith("-f") and len(word) > 2:
            path = word[2:]
        elif word in ("-C", "--directory", "-j", "-l", "-o", "-W", "-I") and k + 1 < len(argv):
            k += 2
            continue
        elif not word.startswith("-") and "=" not in word:
            targets.append(word)
        k += 1
    key = (
        _script_key(path, sink.scripts)
        if path
        else next((p for p in sink.scripts if _basename(p) in _MAKEFILES), None)
    )
    if key is None:
        return []
    rules: dict[str, tuple[list[str], list[str]]] = {}
    order: list[str] = []
    current: list[list[str]] = []
    for line in sink.scripts[key].split("\n"):
        if line.startswith("\t"):
            for recipe in current:
                recipe.append(line[1:].lstrip("@-+ ").replace("$$", "$"))
            continue
        m = _MAKE_RULE.match(line)
        if not m or line.startswith((" ", "export ", "include ")):
            current = [] if line.strip() and not line.startswith(" ") else current
            continue
        current = []
        for target in m.group(1).split():
            entry = rules.setdefault(target, ([], []))
            entry[0].extend(m.group(2).split())
            if m.group(3):
                entry[1].append(m.group(3).lstrip("@-+ "))
            current.append(entry[1])
            if not target.startswith("."):
                order.append(target)
    lines: list[str] = []
    done: set[str] = set()

    def run(target: str, depth: int) -> None:
        if target in done or target not in rules or depth > 20:
            return
        done.add(target)
        for dep in rules[target][0]:
            run(dep, depth + 1)
        lines.extend(rules[target][1])

    for target in targets or order[:1]:
        run(target, 0)
    return lines


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
        _emit_code(_inline.foreign_calls(body), depth, sink)
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
        argv = _git_alias(argv, depth, sink)
        if argv is None:
            return
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
    sink.append(SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc, (), cmd.stdin))


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


def _shell_builtin(name: str, argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> bool:
    """alias, export / declare, for VAR in ..., ... | while read VAR: definitions (True: done)."""
    if name == "alias":
        for word in argv[1:]:
            alias, eq, value = word.partition("=")
            if eq:
                sink.aliases[alias] = value
        return True
    if name in ("export", "declare", "local", "readonly", "typeset"):
        for word in argv[1:]:
            var, eq, value = word.partition("=")
            if eq and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", var):
                sink.vars[var] = value
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


#: git subcommands that read history or references: after a command name the audit could not
#: resolve (``$X log --all``, ``$(unknown) show origin/fix``) the words are judged as git's
_GIT_WORDS = frozenset(
    {
        "log",
        "show",
        "diff",
        "cat-file",
        "rev-list",
        "reflog",
        "for-each-ref",
        "show-ref",
        "ls-remote",
        "fetch",
        "checkout",
        "restore",
        "switch",
        "reset",
        "cherry-pick",
        "merge",
        "stash",
        "notes",
        "ls-tree",
        "rev-parse",
        "archive",
        "bundle",
        "format-patch",
        "diff-tree",
        "whatchanged",
        "shortlog",
        "fsck",
        "pull",
        "clone",
        "show-branch",
        "blame",
        "fast-export",
        "verify-pack",
        "unpack-objects",
        "name-rev",
        "describe",
        "range-diff",
        "rebase",
    }
)
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


def _editor_tool(name: str, argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> bool:
    """apply_patch, SWE-agent's editor (str_replace_editor, create, open), patch and git apply
    of a here-document: the files they write (True: nothing else runs)."""
    if name in ("apply_patch", "applypatch"):
        text = argv[1] if len(argv) > 1 else (cmd.heredoc or "")
        if not text and cmd.stdin is not None:
            text = (_static_of(cmd.stdin, sink) or b"").decode("utf-8", "replace")
        for path, content, complete in _patch_writes(text):
            _write_file(path, content, complete, sink)
        return True
    if name == "str_replace_editor":
        _editor(argv, sink)
        return True
    if name == "create" and len(argv) == 2:  # SWE-agent's editor: create FILE (and open it)
        sink.state["open_file"] = argv[1]
        _write_file(argv[1], "", True, sink)
        return True
    if name == "open" and len(argv) in (2, 3):  # SWE-agent's editor: open FILE [LINE]
        sink.state["open_file"] = argv[1]
    if name in ("patch", "git") and cmd.heredoc and (name == "patch" or argv[1:2] == ["apply"]):
        for path, content, complete in _patch_writes(cmd.heredoc):
            _write_file(path, content, complete, sink)
    return False


def _remember_writes(name: str, argv: list[str], cmd: SimpleCommand, sink: ShellContext) -> None:
    """Files written from the command line, and files a listing of references went to."""
    if name in ("cat", "tee", "echo", "printf", "cp", "mv") or (
        cmd.redirects and name in _static.FILTERS
    ):
        _remember_script(name, argv, cmd, sink)
    if cmd.redirects and (name == "git" or cmd.stdin is not None or name in _PASS_THROUGH):
        _remember_listing(
            SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc, (), cmd.stdin), sink
        )


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


def _reads_stdin_makefile(argv: Sequence[str]) -> bool:
    """``make -f -`` / ``make -f /dev/stdin`` / ``make --file=-``: the Makefile is the input."""
    for k, word in enumerate(argv[1:], 1):
        if (
            word in ("-f", "--file", "--makefile")
            and k + 1 < len(argv)
            and argv[k + 1] in ("-", "/dev/stdin")
        ):
            return True
        if word in ("-f-", "--file=-", "--file=/dev/stdin", "--makefile=-"):
            return True
    return False


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
    elif name in _SHELLS or _PYTHONS.match(name) or name in _FOREIGN:
        script = next((a for a in argv[1:] if not a.startswith("-")), None)
        interpreter = "python" if _PYTHONS.match(name) else "node" if name in _FOREIGN else "sh"
        if any(a.startswith("-") and "c" in a[1:] and not a.startswith("--") for a in argv[1:2]):
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
    done)."""
    if name == "env":
        k = 1
        while k < len(argv):
            word = argv[k]
            if word in ("-u", "--unset", "-C", "--chdir"):
                k += 2
            elif word in ("-S", "--split-string") and k + 1 < len(argv):
                rest = argv[k + 2 :]
                _parse_into(argv[k + 1] + (" " + " ".join(rest) if rest else ""), depth + 1, sink)
                return True
            elif word.startswith("-") or _ASSIGN.match(word):
                k += 1
            else:
                break
        inner = argv[k:]
        if inner:
            _unwrap(
                SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink
            )
        else:
            sink.append(cmd)
        return True
    if name == "xargs":
        _xargs(argv, cmd, depth, sink)
        return True
    if (
        name in ("uv", "poetry", "pipenv", "pdm", "hatch", "rye")
        and argv[1:2] == ["run"]
        and len(argv) > 2
    ):
        inner = [a for a in argv[2:]]
        while inner and inner[0].startswith("-"):
            inner.pop(0)
        if inner:
            _unwrap(
                SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink
            )
            return True
    if name in _WRAPPERS:
        if name == "command" and len(argv) > 1 and argv[1] in ("-v", "-V"):
            return True
        with_arg, skip = _WRAPPERS[name]
        inner = _after_options(argv, with_arg, skip)
        if inner:
            _unwrap(
                SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink
            )
        else:
            sink.append(SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc))
        return True
    if name in _SHELLS:
        args = argv[1:]
        if name == "busybox" and args:
            _unwrap(
                SimpleCommand(tuple(args), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink
            )
            return True
        for k, word in enumerate(args):
            if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
                if k + 1 < len(args):
                    _parse_into(args[k + 1], depth + 1, sink)
                sink.append(SimpleCommand(tuple(argv), cmd.redirects, None))
                return True
            if not word.startswith("-"):
                break
        if not [w for w in args if not w.startswith("-")]:
            if cmd.heredoc:
                _parse_into(cmd.heredoc, depth + 1, sink)  # bash <<EOF ... EOF
                sink.append(SimpleCommand(tuple(argv), cmd.redirects, None))
                return True
            fed = _stdin_text(cmd, sink)
            if fed is not None:  # echo ... | base64 -d | bash
                _parse_into(fed, depth + 1, sink)
        sink.append(SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc))
        return True
    if name == "eval":
        _parse_into(" ".join(argv[1:]), depth + 1, sink)
        return True
    runs = _spawners.find_exec(argv) if name == "find" else []
    texts = _spawners.awk_commands(argv) if name in _spawners.AWKS else []
    if name == "script" and _spawners.script_command(argv):
        texts = [_spawners.script_command(argv) or ""]
    for run in runs:
        _unwrap(SimpleCommand(tuple(run), (), None), depth + 1, sink)
    for text in texts:
        _parse_into(text, depth + 1, sink)
    return False


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
            _emit_code(_inline.foreign_calls(code), depth, sink)
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


def _xargs(argv: list[str], cmd: SimpleCommand, depth: int, sink: ShellContext) -> None:
    """``... | xargs CMD``: CMD runs with the listed words as arguments (``-I R``: in place of R)."""
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
        _unwrap(SimpleCommand(tuple(run), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink)


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
