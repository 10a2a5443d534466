"""Shell commands, parsed properly, and the leak rules applied to each simple command.

:func:`parse_shell` turns one command line (as an agent issued it) into the simple commands it
runs: it splits at ``|``, ``&&``, ``||``, ``;``, ``&`` and newlines, enters subshells
``( ... )`` and groups ``{ ...; }``, command substitutions ``$( ... )`` and backticks, process
substitutions ``<( ... )``, honours single/double quotes, backslashes and ``$'...'``, skips
comments and here-document bodies (but parses a body fed to a shell: ``bash <<EOF``), keeps
redirections apart from arguments, drops ``NAME=value`` prefixes and shell keywords
(``if``, ``then``, ``while``, ``!``, ...), and unwraps the wrappers a command hides behind:
``env``, ``sudo``, ``timeout``, ``nice``, ``nohup``, ``time``, ``command``, ``exec``,
``xargs``, ``stdbuf``, ``watch``, ``bash|sh|zsh -c "..."`` (also ``-lc``), ``eval`` and
``python -c "..."`` (its ``os.system``/``subprocess`` calls, ``open()`` and URL fetches, read
with :mod:`ast`). A hand-written lexer, not bashlex: it never gives up on odd input (an
unterminated quote ends at the end of the line; bashlex rejects 4 of the 253 commands of the
labeled corpus), and it is faster (measured on that corpus: 19 µs per command against bashlex's
176 µs, both uncached, on the shared 2-core machine).

:func:`classify` applies the leak rules to one :class:`SimpleCommand` and returns
:class:`Hit` s. The rules (``docs/audit.md`` has the table):

* ``audit.git_history_leak`` — history or references beyond the task's base: ``git log`` /
  ``rev-list`` / ``shortlog`` / ``rev-parse`` with ``--all``, ``--branches``, ``--remotes``,
  ``--tags``, ``--reflog``, ``--glob``, ``-g``; ``git reflog``, ``fsck``, ``cat-file``,
  ``for-each-ref``, ``show-ref``, ``ls-remote``-less ref listings, ``stash show|list|apply|pop``,
  ``bundle``; ``git show|diff|checkout|switch|restore|cherry-pick|merge|rebase|reset|ls-tree|
  blame|grep|archive|format-patch|worktree add`` naming a revision that is not HEAD-relative
  (a hash, ``rev:path``, ``refs/...``, ``origin/...``, ``x@{n}``; for ``switch``,
  ``cherry-pick``, ``merge`` and ``rebase`` any name) — high. A hash may be cleared later
  (:mod:`evotree.harness.audit.trajectories`): when the task repository shows it is an ancestor of the
  base, or when the trajectory first saw it in the output of ordinary HEAD history. Pickaxe
  (``-S``, ``-G``, ``--grep``) over HEAD's history alone is a warn: it cannot see the future.
* ``audit.git_internals_read`` — reading ``.git/objects``, ``refs``, ``packed-refs``, ``logs``,
  ``ORIG_HEAD``, ... with any program, or searching ``.git`` recursively — high.
* ``audit.network_fetch`` — ``curl``, ``wget``, ``aria2c``, httpie, ``nc``, ``scp``/``ssh``/
  ``rsync host:``, ``git fetch|pull|clone|ls-remote|remote update``, ``pip download``,
  ``pip install`` of a URL, Python ``urlopen``/``requests`` — high; ``pip install NAME`` warn.
* ``audit.hidden_data_read`` — any argument or redirection naming a hidden path (the caller's
  list: ``[eval].judge_paths``, hidden test folders) — high.
* ``audit.test_write`` — writing, moving, deleting or editing in place ``conftest.py``,
  ``sitecustomize.py``, ``usercustomize.py``, ``*.pth``, or a file under ``tests/``, ``test/``,
  ``testing/`` (redirections, ``tee``, ``cp``/``mv``/``install``/``ln``/``rsync`` targets,
  ``sed -i``, ``perl -i``, ``touch``, ``rm``, ``truncate``, ``dd of=``, ``git rm``,
  Python ``open(..., "w")``) — high; a ``test_*.py`` elsewhere — warn.

Ordinary use of the current history is not a leak: ``git status``, ``git diff``,
``git log -3``, ``git log -p -- file``, ``git show HEAD~1``, ``git blame``.

What a parser cannot see is not claimed: ``g=git; $g log --all`` (a command held in a
variable), a script file run with ``bash x.sh`` whose content is not in the trajectory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from evotree.harness.audit import inline as _inline
from evotree.harness.audit import static as _static

__all__ = [
    "Hit",
    "ShellContext",
    "SimpleCommand",
    "RuleSet",
    "parse_shell",
    "classify",
    "classify_command",
    "classify_step",
    "is_head_relative",
    "is_loopback",
    "prefilter",
    "unfinished",
    "LineJoiner",
    "HEX_REV",
]

#: Parsing nested ``bash -c`` / ``eval`` / substitutions stops at this depth.
MAX_DEPTH = 8

# ----------------------------------------------------------------------------- data


@dataclass(frozen=True)
class SimpleCommand:
    """One program invocation: its words (quotes removed) and its redirections."""

    argv: tuple[str, ...]
    redirects: tuple[tuple[str, str], ...] = ()  # (operator, target): (">", "out.txt")
    heredoc: str | None = None  # the body of a here-document fed to it, if any
    assigns: tuple[tuple[str, str], ...] = ()  # NAME=value words before it (alone: shell variables)
    #: the command whose output a pipe feeds into this one (``a | b``: b.stdin is a)
    stdin: SimpleCommand | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Hit:
    """One rule that fired on one simple command."""

    code: str  # audit.git_history_leak, ...
    severity: str  # info | warn | high | critical
    rule: str  # short name of the rule: "git log --all", "reads .git/packed-refs", ...
    command: str  # the simple command, re-joined
    revisions: tuple[str, ...] = ()  # revisions named (may be cleared by ancestry / provenance)
    #: the output line that shows the leak (content provenance), quoted
    output: str = ""
    #: every revision expression the hit rests on, as typed (``v1.1.0``, ``ORIG_HEAD:f``,
    #: ``A..B``): resolved in the task repository when there is one, and judged by ancestry
    refs: tuple[str, ...] = ()
    #: True for a revision the spelling alone cannot judge (``git show v1.1.0`` may name a path):
    #: kept only when the task repository resolves it to a commit beyond the base
    candidate: bool = False

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"code": self.code, "severity": self.severity, "rule": self.rule,
                                  "command": self.command}
        if self.revisions:
            out["revisions"] = list(self.revisions)
        if self.output:
            out["output"] = self.output
        if self.refs:
            out["refs"] = list(self.refs)
        return out


@dataclass(frozen=True)
class RuleSet:
    """What the rules need to know about the task: its hidden paths."""

    hidden_paths: tuple[str, ...] = ()
    _hidden_re: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)
    _needles: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        patterns = []
        for path in self.hidden_paths:
            clean = path.strip().strip("/")
            if clean.startswith("./"):
                clean = clean[2:]
            if not clean:
                continue
            patterns.append(re.compile(r"(?:^|[\s/'\"=(:,])" + re.escape(clean) + r"(?=$|[/\s'\"),:])"))
        object.__setattr__(self, "_hidden_re", tuple(patterns))
        object.__setattr__(self, "_needles", tuple(p.strip("/").rsplit("/", 1)[-1] for p in self.hidden_paths
                                                   if p.strip("/")))

    def mentions_hidden(self, text: str) -> bool:
        """Cheap test: could ``text`` name a hidden path at all (its last component occurs)?"""
        return any(n in text for n in self.hidden_needles)

    def hidden_match(self, word: str) -> bool:
        """True when ``word`` names a hidden path (or a file under one)."""
        return any(p.search(word) for p in self._hidden_re)

    @property
    def hidden_needles(self) -> tuple[str, ...]:
        """Plain strings the prefilter must let through (a hidden path's last component)."""
        return self._needles


# ----------------------------------------------------------------------------- lexer
_OPERATORS = ("&&", "||", ";;", "|&", ";", "&", "|", "(", ")", "\n")
#: characters with no meaning to the shell (inside a word); digits are left out (2>file)
_PLAIN = re.compile(r"[^\s\\'\"$`#<>|&;()0-9]+")
#: a command line without any of these is just words separated by blanks
_SPECIAL = re.compile(r"[\\'\"$`#<>|&;()\n{}!]")
_REDIRS = ("&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", ">&", "<&", "<>", ">", "<")
_KEYWORDS = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}",
                       "time", "esac", "[[", "]]", "coproc"})
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_ANSI_ESC = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b",
             "f": "\f", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}


class _Lexer:
    """Tokens of one shell command line: ("w", word), ("op", op), ("r", redirection op).

    Substitutions (``$(...)``, backticks, ``<(...)``) found anywhere are collected in
    :attr:`subs` to be parsed as commands of their own.
    """

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.n = len(text)
        self.tokens: list[tuple[str, str]] = []
        self.subs: list[str] = []
        self.heredocs: list[tuple[int, str, bool]] = []  # (token index, delimiter, strip tabs)
        self.bodies: dict[int, str] = {}

    def _matching(self, start: int, open_: str, close: str) -> int:
        """Index just past the ``close`` matching an already consumed ``open_`` at ``start``."""
        s, depth, i = self.s, 1, start
        while i < self.n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "'":
                j = s.find("'", i + 1)
                i = self.n if j < 0 else j + 1
                continue
            if c == '"':
                i = self._dq_end(i + 1)
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return self.n

    def _dq_end(self, i: int) -> int:
        s = self.s
        while i < self.n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                return i + 1
            if c == "$" and s.startswith("$(", i):
                i = self._matching(i + 2, "(", ")")
                continue
            if c == "`":
                j = s.find("`", i + 1)
                i = self.n if j < 0 else j + 1
                continue
            i += 1
        return self.n

    def _dollar(self, i: int, buf: list[str]) -> int:
        """Handle ``$`` at ``i``; returns the next index. Substitutions go to :attr:`subs`."""
        s = self.s
        if s.startswith("$((", i):  # arithmetic: keep as text
            end = self._matching(i + 3, "(", ")")
            end = end + 1 if end < self.n and s[end] == ")" else end
            buf.append(s[i:end])
            return end
        if s.startswith("$(", i):
            end = self._matching(i + 2, "(", ")")
            self.subs.append(s[i + 2:end - 1])
            buf.append(s[i:end])
            return end
        if s.startswith("${", i):
            end = self._matching(i + 2, "{", "}")
            buf.append(s[i:end])
            return end
        if s.startswith("$'", i):  # ANSI-C quoting: escapes decoded (g$'\x69't is git)
            j, out = i + 2, []
            while j < self.n and s[j] != "'":
                if s[j] == "\\" and j + 1 < self.n:
                    k = s[j + 1]
                    if k == "x":
                        m = re.match(r"[0-9a-fA-F]{1,2}", s[j + 2:j + 4])
                        if m:
                            out.append(chr(int(m.group(), 16)))
                            j += 2 + len(m.group())
                            continue
                    if k in "01234567":
                        m = re.match(r"[0-7]{1,3}", s[j + 1:j + 4])
                        assert m
                        out.append(chr(int(m.group(), 8)))
                        j += 1 + len(m.group())
                        continue
                    out.append(_ANSI_ESC.get(k, k))
                    j += 2
                    continue
                out.append(s[j])
                j += 1
            buf.append("".join(out))
            return j + 1
        buf.append("$")
        return i + 1

    def run(self) -> _Lexer:
        s = self.s
        buf: list[str] = []
        in_word = False

        def flush() -> None:
            nonlocal in_word
            if in_word:
                self.tokens.append(("w", "".join(buf)))
                buf.clear()
                in_word = False

        i = 0
        plain = _PLAIN.match
        while i < self.n:
            m = plain(s, i)
            if m is not None:  # a run of ordinary characters (the common case): one slice
                buf.append(m.group())
                in_word = True
                i = m.end()
                continue
            c = s[i]
            if c in " \t\r":
                flush()
                i += 1
                continue
            if c == "\\":
                if i + 1 < self.n and s[i + 1] == "\n":  # line continuation
                    i += 2
                    continue
                buf.append(s[i + 1] if i + 1 < self.n else "")
                in_word = True
                i += 2
                continue
            if c == "'":
                j = s.find("'", i + 1)
                j = self.n if j < 0 else j
                buf.append(s[i + 1:j])
                in_word = True
                i = j + 1
                continue
            if c == '"':
                i = self._double(i + 1, buf)
                in_word = True
                continue
            if c == "$":
                i = self._dollar(i, buf)
                in_word = True
                continue
            if c == "`":
                j = s.find("`", i + 1)
                j = self.n if j < 0 else j
                self.subs.append(s[i + 1:j].replace("\\`", "`"))
                buf.append(s[i:j + 1])
                in_word = True
                i = j + 1
                continue
            if c == "#" and not in_word:
                j = s.find("\n", i)
                i = self.n if j < 0 else j
                continue
            if c in "<>" and s.startswith("(", i + 1):  # process substitution
                flush()
                end = self._matching(i + 2, "(", ")")
                self.subs.append(s[i + 2:end - 1])
                self.tokens.append(("w", s[i:end]))
                i = end
                continue
            redir = next((r for r in _REDIRS if s.startswith(r, i)), None) if c in "<>&" or c.isdigit() else None
            if redir is not None:
                if in_word and buf and "".join(buf).isdigit():  # 2>err: the fd belongs to the op
                    buf.clear()
                    in_word = False
                flush()
                self.tokens.append(("r", redir))
                if redir in ("<<", "<<-"):
                    self.heredocs.append((len(self.tokens) - 1, "", redir == "<<-"))
                i += len(redir)
                continue
            op = next((o for o in _OPERATORS if s.startswith(o, i)), None)
            if op is not None:
                flush()
                self.tokens.append(("op", op))
                i += len(op)
                if op == "\n" and self.heredocs:
                    i = self._bodies(i)
                continue
            buf.append(c)
            in_word = True
            i += 1
        flush()
        return self

    def _double(self, i: int, buf: list[str]) -> int:
        s = self.s
        while i < self.n:
            c = s[i]
            if c == '"':
                return i + 1
            if c == "\\" and i + 1 < self.n and s[i + 1] in '"\\$`\n':
                if s[i + 1] != "\n":
                    buf.append(s[i + 1])
                i += 2
                continue
            if c == "$" and (s.startswith("$(", i) or s.startswith("${", i)):
                i = self._dollar(i, buf)
                continue
            if c == "`":
                j = s.find("`", i + 1)
                j = self.n if j < 0 else j
                self.subs.append(s[i + 1:j])
                buf.append(s[i:j + 1])
                i = j + 1
                continue
            buf.append(c)
            i += 1
        return i

    def _bodies(self, i: int) -> int:
        """Consume the bodies of pending here-documents starting at ``i``."""
        for index, _, strip in self.heredocs:
            delim = ""
            if index + 1 < len(self.tokens) and self.tokens[index + 1][0] == "w":
                delim = self.tokens[index + 1][1]
            lines = []
            while i < self.n:
                j = self.s.find("\n", i)
                j = self.n if j < 0 else j
                line = self.s[i:j]
                i = j + 1
                if (line.lstrip("\t") if strip else line) == delim:
                    break
                lines.append(line)
            self.bodies[index] = "\n".join(lines)
        self.heredocs.clear()
        return min(i, self.n)


def _split(lexer: _Lexer) -> list[SimpleCommand]:
    """Group tokens into simple commands (operators separate them)."""
    out: list[SimpleCommand] = []
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    heredoc: list[str] = []
    tokens = lexer.tokens
    k = 0
    piped: SimpleCommand | None = None  # the command before a pipe, fed into the next one
    last: SimpleCommand | None = None

    def end() -> SimpleCommand | None:
        argv = list(words)
        assigns = []
        while argv and (argv[0] in _KEYWORDS or _ASSIGN.match(argv[0])):
            word = argv.pop(0)
            if word not in _KEYWORDS:
                name, _, value = word.partition("=")
                assigns.append((name.rstrip("+"), value))
        if argv and argv[0] in ("select", "case", "function"):
            argv = []
        elif argv and argv[0] == "for" and not (len(argv) > 2 and argv[2] == "in"):
            argv = []  # for ((...)) / for x; do: nothing to follow
        made = None
        if argv or redirects or assigns:
            made = SimpleCommand(tuple(argv), tuple(redirects), "\n".join(heredoc) or None, tuple(assigns),
                                 piped)
            out.append(made)
        words.clear()
        redirects.clear()
        heredoc.clear()
        return made

    while k < len(tokens):
        kind, value = tokens[k]
        if kind == "op":
            made = end()
            last = made if made is not None else last
            if value in ("|", "|&"):
                piped = last
            elif value != "(":
                piped = None
        elif kind == "r":
            target = tokens[k + 1][1] if k + 1 < len(tokens) and tokens[k + 1][0] == "w" else ""
            if value in ("<<", "<<-"):
                heredoc.append(lexer.bodies.get(k, ""))
            else:
                redirects.append((value, target))
            k += 1 if target or (k + 1 < len(tokens) and tokens[k + 1][0] == "w") else 0
        else:
            words.append(value)
        k += 1
    end()
    return out


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
    "xargs": (frozenset({"-I", "-i", "-n", "-L", "-l", "-P", "-d", "-E", "-e", "-s", "-a",
                         "--max-args", "--max-procs", "--delimiter", "--arg-file"}), 0),
    "taskset": (frozenset(), 1),
    "chronic": (frozenset(), 0),
    "caffeinate": (frozenset(), 0),
    "strace": (frozenset({"-e", "-o", "-p", "-s"}), 0),
    "flock": (frozenset({"-w", "-E", "--timeout"}), 1),
}


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


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
            k += 2 if (name in with_arg and "=" not in word and not (len(word) > 2 and word[:2] in with_arg
                                                                     and not word.startswith("--"))) else 1
            continue
        break
    return list(argv[k + skip:])


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
        if self.aliases and any(a in text for a in self.aliases):
            return True
        if self.scripts:
            if "end_of_edit" in text or "str_replace_editor" in text or "apply_patch" in text:
                return True
            if "make" in text and any(_basename(p) in _MAKEFILES for p in self.scripts):
                return True
            return any(_basename(p).rsplit(".", 1)[0] in text for p in self.scripts if p)
        return False


_VAR_WORD = re.compile(r"^\$(?:([A-Za-z_][A-Za-z0-9_]*)|\{([A-Za-z_][A-Za-z0-9_]*)\})$")
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
            out.append(_VAR_REF.sub(lambda r: vars_.get(r.group(1) or r.group(2), r.group(0)), word))
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
            inner = word[i + 2:end - 1]
            value = _static_text(inner, sink)
            out.append(word[i:end] if value is None else value)
            i = end
            continue
        if word[i] == "`":
            j = word.find("`", i + 1)
            if j < 0:
                out.append(word[i:])
                break
            value = _static_text(word[i + 1:j], sink)
            out.append(word[i:j + 1] if value is None else value)
            i = j + 1
            continue
        out.append(word[i])
        i += 1
    return "".join(out)


def _procsub_body(word: str, sink: ShellContext) -> str | None:
    """The static output of a process substitution ``<(...)`` used as a file name."""
    if word.startswith("<(") and word.endswith(")"):
        return _static_text(word[2:-1], sink)
    return None


# ----------------------------------------------------------------------------- what a pipe feeds
#: programs that pass (a selection of) their input on: a listing piped through them is still
#: that listing
_PASS_THROUGH = frozenset({"head", "tail", "grep", "egrep", "fgrep", "rg", "cut", "sort", "uniq", "awk", "gawk",
                           "sed", "tr", "cat", "tee", "column", "fmt", "tac", "shuf", "paste", "xargs", "while"})
_REF_LISTERS = frozenset({"tag", "for-each-ref", "show-ref", "reflog", "ls-remote", "stash", "name-rev",
                          "describe"})


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
        if name in _PASS_THROUGH and cmd.stdin is not None and not (
                name in ("grep", "egrep", "fgrep", "rg", "cat") and len([a for a in argv[1:] if not a.startswith("-")])
                > (0 if name == "cat" else 1)):
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


_PATCH_HEAD = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\+\+\+ (?:b/)?(.+?)(?:\t.*)?$|^\*\*\* Move to: (.+?)\s*$")


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


def _write_file(path: str, content: str, complete: bool, sink: ShellContext, redirects: tuple = ()) -> None:
    """An editor tool or patch wrote ``path``: remember its content, and let the write rules see it."""
    key = _norm_path(path)
    if complete:
        sink.scripts[key] = content
    else:
        old_key = _script_key(path, sink.scripts)
        sink.scripts[old_key or key] = ((sink.scripts.get(old_key, "") + "\n") if old_key else "") + content
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


def _emit_code(calls: Iterable[tuple[str, tuple[str, ...] | str]], depth: int, sink: ShellContext) -> None:
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
    key = _script_key(path, sink.scripts) if path else next(
        (p for p in sink.scripts if _basename(p) in _MAKEFILES), None)
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
        interpreter = ("python" if "python" in first else "node" if re.search(r"\b(node|deno|bun)\b", first) else
                       "perl" if re.search(r"\b(perl|ruby|php)\b", first) else "sh")
    if interpreter == "python":
        _emit_code(_inline.python_calls(body), depth, sink)
    elif interpreter in ("node", "perl"):
        _emit_code(_inline.foreign_calls(body), depth, sink)
    else:
        _parse_into(body, depth + 1, sink)


_FOREIGN = {"node": ("-e", "--eval", "-p", "--print"), "nodejs": ("-e", "--eval", "-p", "--print"),
            "bun": ("-e", "--eval"), "deno": ("eval",), "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",),
            "Rscript": ("-e",)}


def _unwrap(cmd: SimpleCommand, depth: int, sink: ShellContext) -> None:
    """Append ``cmd`` (wrappers removed) and whatever it runs to ``sink``."""
    argv = list(cmd.argv)
    while argv and _ASSIGN.match(argv[0]):
        argv.pop(0)
    if not argv:
        for name, value in cmd.assigns:
            sink.vars[name] = _substitute(value, sink) if ("$(" in value or "`" in value) else value
        if cmd.redirects:
            sink.append(SimpleCommand((), cmd.redirects, cmd.heredoc))
        return
    if sink.vars:
        argv = _expand(argv, sink.vars)
        if not argv:
            return
    if depth < MAX_DEPTH and any("$(" in w or "`" in w for w in argv):
        new = [_substitute(w, sink) if ("$(" in w or "`" in w) else w for w in argv]
        if new != argv:
            if new[0] != argv[0]:  # the command word itself was built: parse what it became
                _parse_into(" ".join(new), depth + 1, sink)
                return
            argv = new
    name = _basename(argv[0])
    alias_value = sink.aliases.get(name)
    if alias_value is not None and depth < MAX_DEPTH and alias_value.split()[:1] != [name]:
        _parse_into(alias_value + " " + " ".join(argv[1:]), depth + 1, sink)
        return
    if name == "alias":
        for word in argv[1:]:
            alias, eq, value = word.partition("=")
            if eq:
                sink.aliases[alias] = value
        return
    if name in ("export", "declare", "local", "readonly", "typeset"):
        for word in argv[1:]:
            var, eq, value = word.partition("=")
            if eq and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", var):
                sink.vars[var] = value
        return
    if name == "for" and len(argv) > 2:  # for VAR in WORDS: the loop variable takes a value the rules can judge
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
        return
    if name == "read" and cmd.stdin is not None:  # ... | while read VAR
        names = [a for a in argv[1:] if not a.startswith("-")]
        if names:
            scope, items = _pipe_source(cmd.stdin, sink)
            if scope == "beyond":
                sink.vars[names[-1]] = LISTED_REFS
            elif items:
                sink.vars[names[-1]] = next((w for w in items if not is_head_relative(w)), items[0])
        return
    if name in ("apply_patch", "applypatch"):
        text = argv[1] if len(argv) > 1 else (cmd.heredoc or "")
        if not text and cmd.stdin is not None:
            text = (_static_of(cmd.stdin, sink) or b"").decode("utf-8", "replace")
        for path, content, complete in _patch_writes(text):
            _write_file(path, content, complete, sink)
        return
    if name == "str_replace_editor":
        _editor(argv, sink)
        return
    if name == "create" and len(argv) == 2:  # SWE-agent's editor: create FILE (and open it)
        sink.state["open_file"] = argv[1]
        _write_file(argv[1], "", True, sink)
        return
    if name == "open" and len(argv) in (2, 3):  # SWE-agent's editor: open FILE [LINE]
        sink.state["open_file"] = argv[1]
    if name in ("patch", "git") and cmd.heredoc and (name == "patch" or argv[1:2] == ["apply"]):
        for path, content, complete in _patch_writes(cmd.heredoc):
            _write_file(path, content, complete, sink)
    if name in ("cat", "tee", "echo", "printf", "cp", "mv") or (cmd.redirects and name in _static.FILTERS):
        _remember_script(name, argv, cmd, sink)
    if name == "git":
        k = _git_sub_index(argv)
        if k > 0:
            sub = argv[k]
            inline = {}
            for j in range(1, k):
                if argv[j] == "-c" and j + 1 < k and argv[j + 1].startswith("alias."):
                    alias, _, value = argv[j + 1][6:].partition("=")
                    inline[alias] = value
            if sub == "config":
                words = [a for a in argv[k + 1:] if not a.startswith("-")]
                if len(words) >= 2 and words[0].startswith("alias."):
                    sink.git_aliases[words[0][6:]] = " ".join(words[1:])
            value = inline.get(sub, sink.git_aliases.get(sub))
            if value is not None and depth < MAX_DEPTH:
                if value.startswith("!"):
                    _parse_into(value[1:] + " " + " ".join(argv[k + 1:]), depth + 1, sink)
                    return
                argv = [*argv[:k], *value.split(), *argv[k + 1:]]
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
    if name == "env":
        k = 1
        while k < len(argv):
            word = argv[k]
            if word in ("-u", "--unset", "-C", "--chdir"):
                k += 2
            elif word in ("-S", "--split-string") and k + 1 < len(argv):
                rest = argv[k + 2:]
                _parse_into(argv[k + 1] + (" " + " ".join(rest) if rest else ""), depth + 1, sink)
                return
            elif word.startswith("-") or _ASSIGN.match(word):
                k += 1
            else:
                break
        inner = argv[k:]
        if inner:
            _unwrap(SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink)
        else:
            sink.append(cmd)
        return
    if name == "xargs":
        _xargs(argv, cmd, depth, sink)
        return
    if name in ("uv", "poetry", "pipenv", "pdm", "hatch", "rye") and argv[1:2] == ["run"] and len(argv) > 2:
        inner = [a for a in argv[2:]]
        while inner and inner[0].startswith("-"):
            inner.pop(0)
        if inner:
            _unwrap(SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink)
            return
    if name in _WRAPPERS:
        if name == "command" and len(argv) > 1 and argv[1] in ("-v", "-V"):
            return
        with_arg, skip = _WRAPPERS[name]
        inner = _after_options(argv, with_arg, skip)
        if inner:
            _unwrap(SimpleCommand(tuple(inner), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink)
        else:
            sink.append(SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc))
        return
    if name in _SHELLS:
        args = argv[1:]
        if name == "busybox" and args:
            _unwrap(SimpleCommand(tuple(args), cmd.redirects, cmd.heredoc, (), cmd.stdin), depth, sink)
            return
        for k, word in enumerate(args):
            if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
                if k + 1 < len(args):
                    _parse_into(args[k + 1], depth + 1, sink)
                sink.append(SimpleCommand(tuple(argv), cmd.redirects, None))
                return
            if not word.startswith("-"):
                break
        if not [w for w in args if not w.startswith("-")]:
            if cmd.heredoc:
                _parse_into(cmd.heredoc, depth + 1, sink)  # bash <<EOF ... EOF
                sink.append(SimpleCommand(tuple(argv), cmd.redirects, None))
                return
            fed = _stdin_text(cmd, sink)
            if fed is not None:  # echo ... | base64 -d | bash
                _parse_into(fed, depth + 1, sink)
        sink.append(SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc))
        return
    if name == "eval":
        _parse_into(" ".join(argv[1:]), depth + 1, sink)
        return
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
            _unwrap(SimpleCommand(tuple(["pip", *args[2:]]), cmd.redirects, cmd.heredoc), depth, sink)
            return
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
    sink.append(SimpleCommand(tuple(argv), cmd.redirects, cmd.heredoc))


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
    for k, word in enumerate(argv[1:len(argv) - len(inner)], 1):
        if word in ("-I", "--replace") and k + 1 < len(argv):
            repl = argv[k + 1]
        elif word.startswith("-I") and len(word) > 2:
            repl = word[2:]
        elif word.startswith("--replace="):
            repl = word.split("=", 1)[1]
        elif word == "-i":
            repl = "{}"
    scope, items = _pipe_source(cmd.stdin, sink) if cmd.stdin is not None else ("unknown", None)
    if scope == "static" and items:
        items = items[:64]
        runs = [[w.replace(repl, it) for w in inner] for it in items[:16]] if repl else [inner + items]
    elif scope == "beyond":
        runs = [[w.replace(repl, LISTED_REFS) for w in inner]] if repl else [inner + [LISTED_REFS]]
    elif scope == "head":
        runs = [[w.replace(repl, "HEAD") for w in inner]] if repl else [inner]
    elif scope == "paths" and items:
        runs = [[w.replace(repl, it) for w in inner] for it in items[:16]] if repl else [inner + items[:64]]
    else:
        runs = [inner]
    for run in runs:
        _unwrap(SimpleCommand(tuple(run), cmd.redirects, cmd.heredoc), depth, sink)


def _parse_into(text: str, depth: int, sink: ShellContext) -> None:
    if depth > MAX_DEPTH or not text.strip():
        return
    if text.startswith("edit") and "end_of_edit" in text:  # SWE-agent's editor: the body is file content
        m = _EDIT_BLOCK.match(text.strip())
        if m:
            _editor(["str_replace_editor", "insert", str(sink.state.get("open_file") or "<edited file>"),
                     "--new_str", m.group(1)], sink)
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


_HEREDOC_START = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
_OPENERS = re.compile(r"(?:^|[;&|(]|\n)\s*(if|case|for|while|until|select)\b")
_CLOSERS = re.compile(r"(?:^|[;&|]|\n)\s*(fi|esac|done)\b")
_SCAN_PLAIN = re.compile(r"[^\\'\"(){}#<]+")


class LineJoiner:
    """Reads a shell command line by line and says when it is finished (:func:`unfinished`)."""

    def __init__(self) -> None:
        self.pending: list[tuple[str, bool]] = []  # here-document terminators still to come
        self.quote = ""
        self.depth = 0
        self.opened = 0
        self.closed = 0
        self.tail = ""  # the end of the last line outside quotes (a trailing pipe, \, && ...)

    def feed(self, line: str) -> bool:
        """Add one line; True when the command is finished after it."""
        if self.pending and not self.quote:
            delim, strip = self.pending[0]
            if (line.lstrip("\t") if strip else line) == delim:
                self.pending.pop(0)
            return self.finished
        outside: list[str] = []
        i, n = 0, len(line)
        quote = self.quote
        while i < n:
            if not quote:
                m = _SCAN_PLAIN.match(line, i)
                if m:
                    outside.append(m.group())
                    i = m.end()
                    continue
            c = line[i]
            if quote == "'":
                j = line.find("'", i)
                if j < 0:
                    i = n
                    break
                quote = ""
                i = j + 1
                continue
            if quote == '"':
                if c == "\\":
                    i += 2
                    continue
                if c == '"':
                    quote = ""
                i += 1
                continue
            if c == "\\":
                if i + 1 >= n:
                    outside.append("\\")
                i += 2
                continue
            if c in "'\"":
                quote = c
            elif c == "#" and (i == 0 or line[i - 1] in " \t;"):
                break
            elif c in "({":
                self.depth += 1
            elif c in ")}":
                self.depth -= 1
            elif line.startswith("<<<", i):
                i += 3
                continue
            elif c == "<" and line.startswith("<<", i):
                m = _HEREDOC_START.match(line, i)
                if m:
                    self.pending.append((m.group(3), m.group(1) == "-"))
                    i = m.end()
                    continue
            outside.append(c)
            i += 1
        self.quote = quote
        flat = "".join(outside)
        self.opened += len(_OPENERS.findall(flat))
        self.closed += len(_CLOSERS.findall(flat))
        self.tail = flat.rstrip()[-2:]
        return self.finished

    @property
    def finished(self) -> bool:
        if self.quote or self.pending or self.depth > 0:
            return False
        if self.tail.endswith(("\\", "|", "&&", "||")):
            return False
        return not (self.opened > 0 and self.opened > self.closed)


def unfinished(text: str) -> bool:
    """Does a shell need more lines to finish ``text``? (An open quote, a here-document without
    its terminator, a trailing backslash or pipe, an open bracket, an ``if``/``for``/``while``/
    ``case`` without its end.) Shell histories store a multi-line command as several lines."""
    joiner = LineJoiner()
    done = True
    for line in text.split("\n"):
        done = joiner.feed(line)
    return not done


# ----------------------------------------------------------------------------- prefilter
#: Substrings (of the lower-cased command, quotes and backslashes removed) without which no rule
#: can fire: program names of the rules, git, test paths, URL schemes, Python's fetchers, and
#: shell features that can spell a word indirectly (eval, ``${``). A plain ``in`` per keyword is
#: ~5x faster than one alternation regex. ``_SQL_PREFILTER`` in :mod:`evotree.harness.audit.version`
#: must stay a superset (tested).
PREFILTER_KEYWORDS = ("git", "curl", "wget", "aria2", "http", "fetch", "ftp", "ssh", "scp", "rsync", "nc",
                      "telnet", "socat", "w3m", "lynx", "links", "xh", "socket", "urlopen", "requests", "urllib",
                      "pip", "test", "conftest", "customize", ".pth", "eval", "base64", "xxd", "perl", "${",
                      "fromhex", "unhexlify", "decode", "rot13", "rot_13", "openssl", "|rev", "| rev", "exec",
                      "apply_patch", "str_replace_editor", "end_of_edit", "base32", "basenc", "connect()",
                      "dulwich", "zlib", "printf", "$(", "`")
#: what else makes a command worth parsing: a definition at the start of a command (``a=gi``,
#: ``export R=origin/fix``: a later step may run it), a program named by escapes (``\x67``,
#: ``\147``), a forge client (gh, hub, glab), make (a Makefile the trajectory wrote)
_PREFILTER_RE = re.compile(r"(?:^|[;&|(\n]\s*)(?:export\s+|declare\s+(?:-\w+\s+)*|local\s+|readonly\s+)?"
                           r"[A-Za-z_][A-Za-z0-9_]*\+?=|\\(?:x[0-9a-fA-F]|[0-7]{3})|"
                           r"(?:^|[\s;&|(])(?:gh|hub|glab|g?make)(?=\s|$)")
_UNQUOTE = str.maketrans("", "", "\"'\\")


def prefilter(command: str, needles: Iterable[str] = ()) -> bool:
    """Cheap test: can ``command`` possibly trigger a rule? (False = certainly not.)

    Quotes and backslashes are removed first, so ``g"i"t`` and ``g\\it`` still pass.
    """
    if "$'" in command:  # ANSI-C quoting can spell anything
        return True
    flat = command.translate(_UNQUOTE) if ('"' in command or "'" in command or "\\" in command) else command
    flat = flat.lower()
    for keyword in PREFILTER_KEYWORDS:
        if keyword in flat:
            return True
    if "=" in command or "\\" in command or "make" in command or "gh" in command or "hub" in command \
            or "glab" in command:
        if _PREFILTER_RE.search(command):
            return True
    return any(n and n.lower() in flat for n in needles)


# ----------------------------------------------------------------------------- revisions
HEX_REV = re.compile(r"^[0-9a-f]{7,40}$")
_HEAD_REL = re.compile(r"^(HEAD|@)?([~^][0-9]*)*$")
#: a release tag's spelling (v1.2.3, 2.0.1, v3.1-rc1): a revision, not a path
_TAG_LIKE = re.compile(r"^v?\d+(?:\.\d+)+(?:[-.+]?[A-Za-z][\w.]*)?$")
#: references git's own operations write (the image's ORIG_HEAD may point at the future fix)
_SPECIAL_HEADS = ("ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
                  "BISECT_HEAD", "AUTO_MERGE")


def is_head_relative(rev: str) -> bool:
    """``HEAD``, ``HEAD~3``, ``@^``, ``HEAD~2..HEAD``, ``HEAD:path``: the task's own history."""
    rev = rev.strip()
    if not rev:
        return True
    if ":" in rev and not rev.startswith(":"):
        rev = rev.split(":", 1)[0]
    elif rev.startswith(":"):  # :path is the index
        return True
    for part in re.split(r"\.\.\.?", rev):
        part = part.lstrip("^")
        if part and not _HEAD_REL.match(part):
            return False
        if part in ("",):
            continue
    return True


def _rev_kind(word: str) -> str | None:
    """'hash' / 'ref' when ``word`` certainly names a revision outside HEAD; 'name' when it may
    be a branch or a path; None when it is HEAD-relative or clearly a path."""
    if is_head_relative(word):
        return None
    base = word.split(":", 1)[0] if ":" in word else word
    parts = [p.lstrip("^") for p in re.split(r"\.\.\.?", base) if p]
    parts = [re.sub(r"([~^][0-9]*)+$", "", p) for p in parts]
    kinds = set()
    for part in parts:
        if not part or _HEAD_REL.match(part):
            continue
        if HEX_REV.match(part):
            kinds.add("hash")
        elif (part.startswith(("refs/", "origin/", "upstream/", "remotes/")) or "@{" in part
              or ":" in word or ".." in word or part in _SPECIAL_HEADS or part in ("stash", "-")
              or _TAG_LIKE.match(part) or part.endswith("^{}") or "^{" in part):
            kinds.add("ref")
        elif "/" in part or "." in part or part.startswith("*"):
            continue  # a path
        else:
            kinds.add("name")
    if "hash" in kinds:
        return "hash"
    if "ref" in kinds:
        return "ref"
    return "name" if "name" in kinds else None


def _hashes(word: str) -> tuple[str, ...]:
    base = word.split(":", 1)[0]
    return tuple(h for h in (re.sub(r"([~^][0-9]*)+$", "", p.lstrip("^"))
                             for p in re.split(r"\.\.\.?", base)) if HEX_REV.match(h))


# ----------------------------------------------------------------------------- git rules
_GIT_GLOBAL_ARG = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                             "--super-prefix", "--config-env"})
_ALL_REFS = frozenset({"--all", "--branches", "--remotes", "--tags", "--reflog", "--glob", "-g",
                       "--walk-reflogs", "--bisect", "--alternate-refs", "--indexed-objects",
                       "--exclude-hidden", "--disk-usage"})
_ALL_REFS_PREFIX = ("--branches=", "--remotes=", "--tags=", "--glob=", "--exclude-hidden=")
_PICKAXE_PREFIX = ("-S", "-G", "--grep", "--find-object", "--pickaxe-regex", "-L")
# options of git subcommands that take a separate argument (not a revision)
_GIT_OPT_ARG = frozenset({"-n", "--max-count", "--skip", "--since", "--until", "--after", "--before",
                          "--author", "--committer", "--format", "--pretty", "-S", "-G", "--grep", "-L",
                          "-m", "-e", "-f", "-U", "--date", "-o", "--output", "--prefix", "--remote",
                          "-b", "-B", "-c", "-C", "--orphan", "-s", "--source", "--strategy", "-X",
                          "--abbrev", "--diff-filter", "--find-object", "--encoding", "--exec", "--onto",
                          "--conflict", "--pathspec-from-file", "--message", "--file", "--template"})
_REV_SUBS = frozenset({"show", "diff", "checkout", "restore", "reset", "ls-tree", "blame", "grep",
                       "archive", "format-patch", "log", "shortlog", "whatchanged", "rev-list", "show-branch",
                       "difftool", "annotate", "name-rev", "describe", "cherry", "range-diff", "diff-tree",
                       "merge-base", "read-tree"})
_REF_SUBS = frozenset({"switch", "cherry-pick", "merge", "rebase", "revert", "pull"})
_ALWAYS = {
    "reflog": "git reflog lists commits beyond the base",
    "fsck": "git fsck finds dangling and unreachable objects",
    "cat-file": None,
    "for-each-ref": "git for-each-ref lists every reference",
    "show-ref": "git show-ref lists every reference",
    "bundle": "git bundle packs references beyond the base",
    "unpack-objects": "git unpack-objects reads raw packs",
    "verify-pack": "git verify-pack lists packed objects",
    "count-objects": None,
    "fast-export": "git fast-export dumps history",
    "rev-parse": None,
    "notes": "git notes reads notes attached to other commits",
    "replace": "git replace rewrites what commits resolve to",
}
_NET_SUBS = frozenset({"fetch", "pull", "clone", "ls-remote", "fetch-pack", "remote-https", "http-fetch"})
#: hub's own commands (all reach GitHub)
_HUB_NET = frozenset({"pr", "pull-request", "issue", "browse", "api", "ci-status", "compare", "create", "fork",
                      "release", "sync", "delete", "gist", "am", "apply", "cherry-pick"})
#: commands of gh / glab that stay on this machine
_FORGE_LOCAL = frozenset({"help", "version", "completion", "config", "alias", "extension", "ext", "--version"})


def _git_split(argv: Sequence[str]) -> tuple[str, list[str]]:
    """(subcommand, its arguments) after git's global options."""
    k = 1
    while k < len(argv):
        word = argv[k]
        if word in _GIT_GLOBAL_ARG:
            k += 2
            continue
        if word.startswith("-"):
            k += 1
            continue
        return word, list(argv[k + 1:])
    return "", []


#: options that are plain flags for these subcommands (elsewhere they take a value)
_FLAGS_OF = {"checkout": frozenset({"-f", "-m", "-p", "-q"}), "switch": frozenset({"-f", "-m", "-q"}),
             "reset": frozenset({"-q", "-p"}), "restore": frozenset({"-p", "-q", "-m"}),
             "cherry-pick": frozenset({"-e", "-x", "-n"}), "merge": frozenset({"-e", "-n", "-q"})}


def _positionals(args: Sequence[str], sub: str = "") -> tuple[list[str], list[str]]:
    """(positional words before ``--``, words after ``--``), skipping options and their values."""
    pos: list[str] = []
    flags = _FLAGS_OF.get(sub, frozenset())
    k = 0
    while k < len(args):
        word = args[k]
        if word == "--":
            return pos, list(args[k + 1:])
        if word.startswith("-") and len(word) > 1:
            name = word.split("=", 1)[0]
            k += 2 if name in _GIT_OPT_ARG and name not in flags and "=" not in word else 1
            continue
        pos.append(word)
        k += 1
    return pos, []


def _git_rules(argv: Sequence[str], joined: str) -> list[Hit]:
    sub, args = _git_split(argv)
    hits: list[Hit] = []
    if not sub:
        return hits
    code = "audit.git_history_leak"

    def hit(severity: str, rule: str, revisions: tuple[str, ...] = (), refs: tuple[str, ...] = ()) -> None:
        hits.append(Hit(code, severity, rule, joined, revisions, refs=refs))

    def candidate(word: str) -> None:
        """A word in a revision's place that its spelling cannot judge (a path, or a branch or tag
        name): kept only if the task repository resolves it beyond the base."""
        if word and not is_head_relative(word) and not word.startswith("-"):
            hits.append(Hit(code, "info", f"git {sub} {word}: resolved in the task repository", joined,
                            refs=(word,), candidate=True))

    if sub in _NET_SUBS:
        hits.append(Hit("audit.network_fetch", "high", f"git {sub} reaches the network", joined))
        if sub != "pull":
            return hits
    if sub == "remote" and args and args[0] in ("update", "add", "set-url"):
        hits.append(Hit("audit.network_fetch", "high" if args[0] == "update" else "warn",
                        f"git remote {args[0]}", joined))
        return hits
    if sub == "submodule" and "update" in args:
        hits.append(Hit("audit.network_fetch", "warn", "git submodule update may fetch", joined))
        return hits
    if sub in _ALWAYS:
        why = _ALWAYS[sub]
        if sub == "rev-parse":
            flag = next((a for a in args if a in _ALL_REFS or a.startswith(_ALL_REFS_PREFIX)
                         or a in ("--symbolic-full-name",) and "--all" in args), None)
            if flag:
                hit("high", f"git rev-parse {flag} lists references beyond the base")
                return hits
            # `git rev-parse origin/fix` prints the id of a commit beyond the base: what it prints is
            # no clean provenance for a later `git show <that id>`
            pos, _ = _positionals([a for a in args if a not in ("--verify", "-q", "--quiet", "--short")
                                   and not a.startswith("--short=")], sub)
            for word in pos:
                kind = _rev_kind(word)
                if kind in ("hash", "ref", "name"):
                    hit("warn", f"git rev-parse {word} names a revision outside HEAD's history", _hashes(word),
                        refs=(word,))
                else:
                    candidate(word)
            return hits
        if sub == "cat-file":
            if any(a.startswith(("--batch", "--buffer")) for a in args):
                hit("high", "git cat-file --batch reads the object store directly")
                return hits
            objects = [a for a in args if not a.startswith("-") and a not in ("blob", "tree", "commit", "tag")]
            for word in objects:
                kind = _rev_kind(word)
                if kind:  # a hash, or a ref: resolved and judged by ancestry when the repository is known
                    hit("high", f"git cat-file {word} reads an object outside HEAD's history", _hashes(word),
                        refs=(word,))
                elif not is_head_relative(word):
                    candidate(word)
            return hits
        if why:
            hit("high", why)
        return hits
    if sub == "stash":
        action = args[0] if args else ""
        if action in ("show", "list", "apply", "pop", "branch"):
            hit("high", f"git stash {action} reads stashed work (not the task's base)")
        return hits
    if sub == "branch":
        if any(a in ("-a", "-r", "--all", "--remotes", "--contains", "--merged", "--no-merged") for a in args):
            hit("warn", "git branch lists other branches")
        return hits
    if sub == "tag" and any(a in ("--contains", "--merged", "--points-at") for a in args):
        hit("warn", "git tag lists tags by commit")
        return hits
    if sub == "worktree" and args[:1] == ["add"]:
        pos, _ = _positionals(args[1:])
        for word in pos[1:]:
            kind = _rev_kind(word)
            if kind:
                hit("high" if kind != "name" else "warn", f"git worktree add of revision {word}", _hashes(word),
                    refs=(word,))
            else:
                candidate(word)
        return hits
    if sub in _REV_SUBS or sub in _REF_SUBS:
        if "--stdin" in args and sub in ("log", "rev-list", "shortlog", "whatchanged", "show", "cherry-pick",
                                         "diff", "name-rev", "describe"):
            # the revisions come from a pipe (`echo master | git log -p --stdin`): the audit cannot
            # see which, and branch and tag names are exactly what it must not allow
            hit("high", f"git {sub} --stdin reads revisions the audit cannot see")
            return hits
        flag = next((a for a in args if a in _ALL_REFS or a.startswith(_ALL_REFS_PREFIX)), None)
        if flag and sub in ("log", "shortlog", "whatchanged", "rev-list", "show-branch", "show", "name-rev",
                            "describe", "grep", "diff", "cherry"):
            hit("high", f"git {sub} {flag} walks references beyond the base")
            return hits
        pickaxe = next((a for a in args if a.startswith(_PICKAXE_PREFIX)), None)
        if sub in _REF_SUBS:
            if sub == "pull":
                return hits
            pos, _ = _positionals(args, sub)
            if sub in ("merge", "rebase", "cherry-pick", "revert") and any(
                    a in ("--abort", "--continue", "--skip", "--quit") for a in args):
                return hits
            if sub == "switch" and any(a in ("-c", "-C", "--create", "--force-create", "--orphan") for a in args):
                pos = pos[1:]  # the new branch name; a start point after it is a revision
            for word in pos:
                kind = _rev_kind(word)
                if kind is None and sub == "switch" and word == "-":
                    kind = "ref"
                if kind:
                    hit("high", f"git {sub} {word} moves to a revision outside the task's base",
                        _hashes(word), refs=(word if word != "-" else "@{-1}",))
                else:
                    candidate(word)
            if sub == "switch" and "--detach" in args:
                pass
            return hits
        # revision-taking subcommands
        if sub == "restore":
            revs = [a.split("=", 1)[1] for a in args if a.startswith("--source=")]
            revs += [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-s", "--source")]
            revs += [a[2:] for a in args if a.startswith("-s") and len(a) > 2 and not a.startswith("--")]
        elif sub == "grep":
            pos, _ = _positionals(args, sub)
            has_e = any(a == "-e" or a.startswith("-e") for a in args)
            revs = pos if has_e else pos[1:]
        elif sub == "checkout":
            if any(a in ("-b", "-B", "--orphan") for a in args):
                pos, _ = _positionals(args, sub)
                revs = pos  # the start point (the new name was consumed as the option's value)
            else:
                pos, after = _positionals(args, sub)
                revs = pos
        elif sub == "reset":
            pos, _ = _positionals(args, sub)
            revs = pos[:1] if any(a in ("--hard", "--soft", "--mixed", "--keep", "--merge") for a in args) else \
                [p for p in pos if _rev_kind(p) in ("hash", "ref")]
        elif sub == "blame" or sub == "annotate":
            pos, _ = _positionals(args, sub)
            revs = [p for p in pos if _rev_kind(p) in ("hash", "ref")]
        elif sub == "archive":
            pos, _ = _positionals(args, sub)
            revs = pos[:1]
        else:
            pos, _ = _positionals(args, sub)
            revs = pos
            if sub in ("log", "shortlog", "whatchanged", "rev-list", "cherry"):
                # A..HEAD lists only commits HEAD reaches (A merely subtracts)
                revs = [w for w in revs if not (re.search(r"(?<!\.)\.\.(?!\.)", w) and
                                                is_head_relative(w.split("..", 1)[1]))]
                revs = [w for w in revs if not w.startswith("^")]
        for word in revs:
            kind = _rev_kind(word)
            if kind in ("hash", "ref"):
                hit("high", f"git {sub} {word} reads a revision outside HEAD's history", _hashes(word),
                    refs=(word if word != "-" else "@{-1}",))
            elif kind == "name" and sub in ("show", "checkout", "diff", "log", "ls-tree", "archive",
                                           "format-patch", "whatchanged", "shortlog", "rev-list", "restore",
                                           "diff-tree", "grep", "reset"):
                hit("warn", f"git {sub} {word}: a branch or tag name (or a path) — not HEAD", (), refs=(word,))
            elif kind == "name" or kind is None:
                candidate(word)
        if pickaxe and not hits and sub in ("log", "whatchanged", "rev-list", "shortlog"):
            hit("warn", f"git {sub} {pickaxe.split('=', 1)[0][:9]} searches history (HEAD's only: no future "
                "commits)")
    return hits


# ----------------------------------------------------------------------------- other rules
_GIT_INTERNAL = re.compile(
    r"(?:^|[\s/'\"=(:,])\.git/(objects|refs|packed-refs|logs|ORIG_HEAD|FETCH_HEAD|MERGE_HEAD|"
    r"worktrees|modules|rr-cache|lost-found|shallow|index)\b")
_RECURSIVE = frozenset({"find", "grep", "egrep", "fgrep", "rg", "ag", "ack", "tree", "tar", "cp", "rsync",
                        "du", "zip", "strings", "zgrep", "git-filter-repo"})
_NET = frozenset({"curl", "wget", "aria2c", "http", "https", "httpie", "lynx", "links", "w3m", "nc", "ncat",
                  "netcat", "telnet", "scp", "sftp", "ssh", "ftp", "socat", "wget2", "xh",
                  "connect()"})  # connect(): a connect the runtime trace saw (harness/audit/trace.py)
_WRITE_LAST = frozenset({"cp", "install", "ln", "rsync"})
_WRITE_ALL = frozenset({"touch", "rm", "truncate", "unlink", "shred", "tee", "mv"})
_WRITERS = _WRITE_LAST | _WRITE_ALL | {"dd", "sed", "perl", "git", "patch", "find"}
_CACHE_PATH = re.compile(r"(?:^|/)(__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache)(?:/|$)|\.py[co]$")
_TEST_DIR = re.compile(r"(?:^|/)(tests?|testing)/")
_TEST_NAMES = re.compile(r"(?:^|/)(conftest\.py|sitecustomize\.py|usercustomize\.py|[^/]+\.pth)$")
_TEST_FILE = re.compile(r"(?:^|/)(test_[^/]*\.py|[^/]*_tests?\.py)$")
_OUT_REDIRS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})


def _write_targets(argv: Sequence[str], redirects: Sequence[tuple[str, str]]) -> list[str]:
    targets = [t for op, t in redirects if op in _OUT_REDIRS and t]
    if not argv:
        return targets
    name = _basename(argv[0])
    args = [a for a in argv[1:] if not a.startswith("-")]
    if name in _WRITE_LAST and args:
        target = next((argv[k + 1] for k, a in enumerate(argv[:-1]) if a in ("-t", "--target-directory")), None)
        targets.append(target or args[-1])
    elif name in _WRITE_ALL:
        targets += args
    elif name == "dd":
        targets += [a[3:] for a in argv[1:] if a.startswith("of=")]
    elif name == "find" and ("-delete" in argv or any(a in ("rm", "unlink", "shred") for a in argv)):
        roots = []
        for a in argv[1:]:
            if a.startswith(("-", "(", "!")):
                break
            roots.append(a.rstrip("/") + "/")
        targets += roots
    elif name in ("sed", "perl") and any(a == "-i" or a.startswith(("-i", "--in-place")) or
                                          (name == "perl" and a.startswith("-") and "i" in a) for a in argv[1:]):
        has_e = any(a in ("-e", "--expression") for a in argv[1:])
        targets += args if has_e else args[1:]
    elif name == "git" and len(argv) > 1:
        sub, rest = _git_split(argv)
        if sub in ("rm", "mv"):
            targets += [a for a in rest if not a.startswith("-")]
    elif name == "patch":
        targets += args[:1]
    return targets


# options that take a value, per network program (the value is not a host)
_NET_OPT_ARG = {
    "curl": frozenset({"-H", "--header", "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode",
                       "--data-ascii", "--json", "-X", "--request", "-o", "--output", "-u", "--user", "-A",
                       "--user-agent", "-e", "--referer", "-b", "--cookie", "-c", "--cookie-jar", "-F", "--form",
                       "--form-string", "-w", "--write-out", "-m", "--max-time", "--connect-timeout", "-T",
                       "--upload-file", "--resolve", "--connect-to", "-E", "--cert", "--key", "--cacert",
                       "--capath", "-K", "--config", "-r", "--range", "-y", "--speed-time", "-Y", "--speed-limit",
                       "-z", "--time-cond", "--retry", "--retry-delay", "--retry-max-time", "--limit-rate", "-C",
                       "--continue-at", "--interface", "--dns-servers", "-U", "--proxy-user", "--max-filesize",
                       "--trace", "--trace-ascii", "--stderr", "-D", "--dump-header", "--oauth2-bearer",
                       "--variable", "--unix-socket", "--abstract-unix-socket", "-Q", "--quote", "--mail-from",
                       "--mail-rcpt", "-t", "--telnet-option", "--local-port", "--max-redirs", "--expect100-timeout",
                       "--happy-eyeballs-timeout-ms", "--output-dir", "--create-file-mode", "--etag-save",
                       "--etag-compare", "--aws-sigv4", "--hostpubmd5", "--pubkey", "--request-target",
                       "--keepalive-time", "--parallel-max", "-P", "--ftp-port"}),
    "wget": frozenset({"-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P",
                       "--directory-prefix", "-U", "--user-agent", "--header", "--post-data", "--post-file",
                       "--body-data", "--body-file", "--method", "-e", "--execute", "-t", "--tries", "-T",
                       "--timeout", "-w", "--wait", "--user", "--password", "-B", "--base", "-Q", "--quota",
                       "--limit-rate", "-l", "--level", "--load-cookies", "--save-cookies", "-A", "--accept",
                       "-R", "--reject", "-D", "--domains", "--referer", "--ca-certificate", "--certificate"}),
    "ssh": frozenset({"-p", "-i", "-l", "-o", "-F", "-L", "-R", "-D", "-b", "-c", "-E", "-e", "-m", "-O", "-Q",
                      "-S", "-W", "-w", "-B", "-I"}),
    "scp": frozenset({"-P", "-i", "-o", "-F", "-c", "-l", "-S", "-D", "-X"}),
    "nc": frozenset({"-p", "-s", "-w", "-i", "-q", "-X", "-x", "-I", "-O", "-T", "-V", "-M", "-m", "-e", "-c"}),
    "http": frozenset({"-a", "--auth", "-A", "--auth-type", "-o", "--output", "--session", "--session-read-only",
                       "--pretty", "-s", "--style", "-p", "--print", "--verify", "--cert", "--cert-key", "--timeout",
                       "--max-redirects", "--ssl", "--ciphers", "--format-options", "--default-scheme", "-P",
                       "--response-charset", "--response-mime", "--chunked-size"}),
}
for _alias, _base in (("ncat", "nc"), ("netcat", "nc"), ("telnet", "nc"), ("sftp", "scp"), ("https", "http"),
                      ("httpie", "http"), ("xh", "http"), ("wget2", "wget"), ("aria2c", "wget")):
    _NET_OPT_ARG[_alias] = _NET_OPT_ARG[_base]
#: options whose value is itself a host the traffic goes to (a proxy, a jump host)
_NET_HOST_OPT = frozenset({"-x", "--proxy", "--preproxy", "-J", "--url"})
_LOOPBACK_HOST = re.compile(r"^(localhost|localhost\.localdomain|[\w.-]*\.localhost|ip6-localhost|ip6-loopback|"
                            r"127(?:\.\d{1,3}){1,3}|::1|0\.0\.0\.0|0|::ffff:127(?:\.\d{1,3}){3}|"
                            r"\$\(hostname[^)]*\)|\$\{?HOSTNAME\}?)$", re.I)


def _net_targets(name: str, argv: Sequence[str]) -> tuple[list[str], bool]:
    """(the hosts / URLs a network program reaches, whether it reads targets from a file)."""
    with_arg = _NET_OPT_ARG.get(name, frozenset())
    targets: list[str] = []
    from_file = False
    k = 1
    positional: list[str] = []
    while k < len(argv):
        word = argv[k]
        if word == "--":
            positional += argv[k + 1:]
            break
        if word.startswith("--"):
            opt, eq, value = word.partition("=")
            if opt in ("--input-file", "-i") or opt == "--config":
                from_file = True
            if opt in _NET_HOST_OPT:
                if eq:
                    targets.append(value)
                elif k + 1 < len(argv):
                    targets.append(argv[k + 1])
                k += 1 if eq else 2
                continue
            k += 2 if opt in with_arg and not eq else 1
            continue
        if word.startswith("-") and len(word) > 1:
            # a cluster of short flags: the first one that takes a value takes the rest (or the next word)
            for j, letter in enumerate(word[1:], 1):
                opt = "-" + letter
                if opt in with_arg or opt in _NET_HOST_OPT:
                    value = word[j + 1:]
                    if not value and k + 1 < len(argv):
                        value = argv[k + 1]
                        k += 1
                    if opt in _NET_HOST_OPT:
                        targets.append(value)
                    if opt in ("-K",) or (name in ("wget", "wget2", "aria2c") and opt == "-i"):
                        from_file = True
                    break
            k += 1
            continue
        positional.append(word)
        k += 1
    if name in ("http", "https", "httpie", "xh"):
        pos = [p for p in positional if not re.fullmatch(r"[A-Z]+", p)]
        targets += [("localhost" + p if p.startswith(":") else p) for p in pos[:1]]
    elif name in ("nc", "ncat", "netcat", "telnet"):
        targets += positional[:1]
    elif name == "socat":
        for addr in positional:
            parts = addr.split(":")
            if parts[0].upper().startswith(("TCP", "UDP", "SSL", "OPENSSL", "PROXY", "SOCKS")) and len(parts) > 1:
                targets.append(parts[1])
    elif name in ("ssh",):
        targets += positional[:1]
    elif name in ("scp", "sftp", "rsync"):
        targets += [p.split(":", 1)[0] for p in positional if ":" in p and not p.startswith("/")]
        if name == "sftp":
            targets += positional[:1]
    else:
        targets += positional
    return targets, from_file


def _host(target: str) -> str:
    t = target.strip().strip("'\"")
    t = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*://", "", t)
    t = t.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in t:
        t = t.rsplit("@", 1)[1]
    if t.startswith("["):
        return t[1:t.find("]")] if "]" in t else t[1:]
    if t.count(":") > 1 and not t.startswith("$("):
        return t  # a bare IPv6 address
    return t.split(":", 1)[0] if not t.startswith("$(") else t[:t.find(")") + 1] if ")" in t else t


def is_loopback(target: str) -> bool:
    """True when a URL / host names this machine (``localhost``, ``127.0.0.1``, ``[::1]``,
    ``0.0.0.0``, ``$(hostname)``): a server the trajectory started itself, not the network."""
    return bool(_LOOPBACK_HOST.match(_host(target)))


def _net_rule(name: str, argv: Sequence[str], joined: str) -> Hit | None:
    targets, from_file = _net_targets(name, argv)
    targets = [t for t in targets if t]
    if not targets and not from_file:
        return None  # curl --version, ssh -V: no host, nothing fetched
    if targets and not from_file and all(is_loopback(t) for t in targets):
        return Hit("audit.network_fetch", "info", f"{name} to this machine (loopback) only", joined)
    if name == "connect()":
        return Hit("audit.network_fetch", "high", f"connect() to {targets[0]} (runtime trace)", joined)
    return Hit("audit.network_fetch", "high", f"{name} reaches the network", joined)


def classify(cmd: SimpleCommand, rules: RuleSet = RuleSet()) -> list[Hit]:
    """The leak rules that fire on one simple command (module doc)."""
    argv = cmd.argv
    joined = " ".join(argv) + "".join(f" {op}{t}" for op, t in cmd.redirects)
    hits: list[Hit] = []
    name = _basename(argv[0]) if argv else ""
    if name == "hub" and len(argv) > 1:  # hub wraps git: git's rules, and its own commands reach GitHub
        sub, _ = _git_split(argv)
        if sub in _HUB_NET:
            hits.append(Hit("audit.network_fetch", "high", f"hub {sub} reaches GitHub", joined))
        hits += _git_rules(("git", *argv[1:]), joined)
    elif name in ("gh", "glab", "tea", "lab"):
        words = [a for a in argv[1:] if not a.startswith("-")]
        if words and words[0] not in _FORGE_LOCAL:
            hits.append(Hit("audit.network_fetch", "high", f"{name} {' '.join(words[:2])} reaches the forge "
                            "(pull requests, patches, the repository's future)", joined))
    if name == "git":
        hits += _git_rules(argv, joined)
    elif name in _NET:
        hit = _net_rule(name, argv, joined)
        if hit is not None:
            hits.append(hit)
    elif name in ("pip", "pip3", "uv", "conda") and len(argv) > 1:
        words = [a for a in argv[1:] if not a.startswith("-")]
        action = words[0] if words else ""
        if name == "uv" and action == "pip":
            words = words[1:]
            action = words[0] if words else ""
        if action == "download":
            hits.append(Hit("audit.network_fetch", "high", f"{name} download fetches packages", joined))
        elif action == "install":
            urls = [w for w in words[1:] if re.match(r"^(git\+|https?://|ftp://)", w) or "@ http" in w]
            if urls:
                hits.append(Hit("audit.network_fetch", "high", f"{name} install from a URL: {urls[0]}", joined))
            elif words[1:] and not all(w in (".", "-e") or w.startswith((".", "/")) for w in words[1:]):
                hits.append(Hit("audit.network_fetch", "warn", f"{name} install reaches the package index",
                                joined))
    # .git internals (any program but git's own --git-dir)
    words = list(argv[1:]) + [t for _, t in cmd.redirects]
    if ".git" in joined and (name != "git" or any(w.startswith(("show", "cat")) for w in argv[1:2])):
        internal = next((w for w in words if _GIT_INTERNAL.search(w)), None)
        if internal:
            hits.append(Hit("audit.git_internals_read", "high", f"reads git internals: {internal[:80]}", joined))
        elif name in _RECURSIVE and "-prune" not in words and any(
                w.rstrip("/") == ".git" or w.rstrip("/").endswith("/.git") for w in words):
            hits.append(Hit("audit.git_internals_read", "high", f"{name} searches .git", joined))
        elif name == "ls" and any(w.rstrip("/").endswith(".git") for w in words):
            hits.append(Hit("audit.git_internals_read", "warn", "lists .git", joined))
    # hidden data
    if rules.hidden_paths and rules.mentions_hidden(joined):
        hidden = next((w for w in [*argv, *(t for _, t in cmd.redirects)] if rules.hidden_match(w)), None)
        if hidden:
            hits.append(Hit("audit.hidden_data_read", "high", f"touches hidden data: {hidden[:80]}", joined))
    # writes to tests
    for target in (_write_targets(argv, cmd.redirects) if cmd.redirects or name in _WRITERS else ()):
        clean = target.strip()
        if clean.startswith("./"):
            clean = clean[2:]
        if _CACHE_PATH.search(clean):
            continue
        if _TEST_NAMES.search(clean) or _TEST_DIR.search(clean):
            verb = "deletes" if name in ("rm", "unlink", "shred") else "writes"
            hits.append(Hit("audit.test_write", "high", f"{verb} {clean[:80]}", joined))
            break
        if _TEST_FILE.search(clean):
            hits.append(Hit("audit.test_write", "warn", f"writes a test file {clean[:80]}", joined))
            break
    return hits


@lru_cache(maxsize=65536)
def _hits_cached(text: str, rules: RuleSet) -> tuple[Hit, ...]:
    return tuple(h for cmd in _parse_cached(text)[0] for h in classify(cmd, rules))


def classify_step(text: str, rules: RuleSet, context: ShellContext, output: str | None = None) -> list[Hit]:
    """The hits of one step of a trajectory: parsed with the trajectory's ``context`` when a
    definition (variable, alias, script) is involved, otherwise memoized by text — agents repeat
    ``git status``, ``git diff`` and test runs all the time. ``output`` (what the step printed,
    when recorded) tells whether a ``git stash`` saved anything."""
    if not context.state.get("orig_head_own") and _ORIG_SETTERS.search(text):
        context.state["orig_head_own"] = True  # git reset / merge / rebase / pull / am write ORIG_HEAD
    if not context.relevant(text) and "stash" not in text and "ORIG_HEAD" not in text:
        _, defines = _parse_cached(text)
        if not defines:
            return list(_hits_cached(text, rules))
    hits: list[Hit] = []
    for cmd in parse_shell(text, context):
        found = classify(cmd, rules)
        if cmd.argv and _basename(cmd.argv[0]) == "git" and any("stash" in w for w in cmd.argv):
            found = _own_stash(cmd, found, context, output)
        if context.state.get("orig_head_own"):
            found = [Hit(h.code, "info", h.rule + " (ORIG_HEAD this trajectory set itself)", h.command)
                     if h.refs and all(r.startswith("ORIG_HEAD") for r in h.refs) else h for h in found]
        hits += found
    return hits


#: commands that write ORIG_HEAD: after one of them, ORIG_HEAD is the trajectory's own HEAD
_ORIG_SETTERS = re.compile(r"\bgit\b[^|;&\n]*\b(reset|merge|rebase|pull|am)\b")


_STASH_REF = re.compile(r"^(?:refs/)?stash(?:@\{(\d+)\})?$")


def _stash_index(word: str) -> int | None:
    if word.isdigit():
        return int(word)
    m = _STASH_REF.match(word.split(":", 1)[0].rstrip("^~0123456789") if "@{" not in word else word.split(":", 1)[0])
    return (int(m.group(1)) if m.group(1) else 0) if m else None


def _own_stash(cmd: SimpleCommand, hits: list[Hit], context: ShellContext, output: str | None) -> list[Hit]:
    """Stashes the trajectory made itself are its own work, not foreign history: count them
    (``git stash`` / ``push`` / ``save``; ``pop`` / ``drop`` take one off) and let ``list``,
    ``show``, ``apply``, ``pop`` of an own entry (``stash@{k}``, k below the count) through."""
    own = int(context.state.get("stash_own", 0))  # type: ignore[call-overload]
    sub, args = _git_split(cmd.argv)
    if sub == "stash":
        action = args[0] if args and not args[0].startswith("-") else "push"
        if action in ("push", "save"):
            if not (output and "No local changes to save" in output):
                context.state["stash_own"] = own + 1
            return hits
        if action == "clear":
            context.state["stash_own"] = 0
            return hits
        if action in ("list", "show", "apply", "pop", "drop", "branch"):
            rest = [a for a in args[1:] if not a.startswith("-")]
            if action == "branch":
                rest = rest[1:]
            index = _stash_index(rest[0]) if rest else 0
            mine = own > 0 and (action == "list" or (index is not None and index < own))
            if action in ("pop", "drop") and mine:
                context.state["stash_own"] = own - 1
            if mine:
                return [Hit(h.code, "info", h.rule + " (a stash this trajectory made)", h.command, h.revisions)
                        if h.severity == "high" and "stash" in h.rule else h for h in hits]
        return hits
    # git show / diff / checkout stash@{k}: the trajectory's own stash is its own work
    refs = [w for w in args if "stash" in w and _stash_index(w) is not None]
    if refs and own and all((_stash_index(w) or 0) < own for w in refs):
        return [Hit(h.code, "info", h.rule + " (a stash this trajectory made)", h.command, h.revisions)
                if h.severity == "high" and any(w in h.rule for w in refs) else h for h in hits]
    return hits


def classify_command(text: str, rules: RuleSet = RuleSet()) -> list[Hit]:
    """Parse one command line and apply the rules to each simple command it runs (a trajectory
    of one step: what the line defines or stashes counts for the rest of it). Candidates (revisions
    only the task repository can judge) are left out: there is no repository here."""
    return [h for h in classify_step(text, rules, ShellContext()) if not h.candidate]
