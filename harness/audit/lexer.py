"""The shell lexer of the leak audit: one command line into the simple commands it runs.

:class:`_Lexer` reads words, quotes (single, double, ``$'...'``), backslashes, comments,
substitutions and here-documents; :func:`_split` turns its tokens into :class:`SimpleCommand` s
(operators, redirections, ``NAME=value`` prefixes, keywords); :class:`LineJoiner` and
:func:`unfinished` tell whether a line of shell history continues on the next one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

__all__ = ["SimpleCommand", "LineJoiner", "unfinished"]


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
    #: True when this command ends a group or loop whose whole output a pipe carries
    #: (``{ a; b; } | c``, ``(a; b) | c``, ``for ...; done | c``): ``c`` reads more than it
    grouped: bool = field(default=False, compare=False, repr=False)
    #: True for the command ``xargs`` runs on the words its input lists
    xargs: bool = field(default=False, compare=False, repr=False)


# ----------------------------------------------------------------------------- lexer
_OPERATORS = ("&&", "||", ";;", "|&", ";", "&", "|", "(", ")", "\n")
#: characters with no meaning to the shell (inside a word); digits are left out (2>file)
_PLAIN = re.compile(r"[^\s\\'\"$`#<>|&;()0-9]+")
#: a command line without any of these is just words separated by blanks
_SPECIAL = re.compile(r"[\\'\"$`#<>|&;()\n{}!]")
_REDIRS = ("&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", ">&", "<&", "<>", ">", "<")
_KEYWORDS = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "while",
        "until",
        "!",
        "{",
        "}",
        "time",
        "esac",
        "[[",
        "]]",
        "coproc",
    }
)
#: words that end a group or a loop (its output is every command's inside it)
_GROUP_ENDS = frozenset({"}", "done", "fi", "esac"})
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_ANSI_ESC = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


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
            self.subs.append(s[i + 2 : end - 1])
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
                        m = re.match(r"[0-9a-fA-F]{1,2}", s[j + 2 : j + 4])
                        if m:
                            out.append(chr(int(m.group(), 16)))
                            j += 2 + len(m.group())
                            continue
                    if k in "01234567":
                        m = re.match(r"[0-7]{1,3}", s[j + 1 : j + 4])
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
        """Read the whole text into tokens: words, redirections and operators (substitutions
        and here-document bodies noted on the way). Runs of ordinary characters are taken in
        one slice here; quoting and operators go to :meth:`_quoted` and :meth:`_operator`."""
        s = self.s
        buf: list[str] = []
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
                in_word = self._flush(buf, in_word)
                i += 1
            elif c == "\\" and i + 1 < self.n and s[i + 1] == "\n":  # line continuation
                i += 2
            elif c in "\\'\"$`":
                i = self._quoted(c, i, buf)
                in_word = True
            elif c == "#" and not in_word:  # a comment, up to the end of the line
                j = s.find("\n", i)
                i = self.n if j < 0 else j
            else:
                i, in_word = self._operator(c, i, buf, in_word)
        self._flush(buf, in_word)
        return self

    def _flush(self, buf: list[str], in_word: bool) -> bool:
        """End the word being read (if any) as a token; False: no word is being read now."""
        if in_word:
            self.tokens.append(("w", "".join(buf)))
            buf.clear()
        return False

    def _quoted(self, c: str, i: int, buf: list[str]) -> int:
        """A backslash escape, a quoted string, a ``$`` expansion or a backtick substitution at
        ``i`` (``c`` is its first character), added to the word: where reading goes on."""
        s = self.s
        if c == "\\":
            buf.append(s[i + 1] if i + 1 < self.n else "")
            return i + 2
        if c == "'":
            j = s.find("'", i + 1)
            j = self.n if j < 0 else j
            buf.append(s[i + 1 : j])
            return j + 1
        if c == '"':
            return self._double(i + 1, buf)
        if c == "$":
            return self._dollar(i, buf)
        j = s.find("`", i + 1)
        j = self.n if j < 0 else j
        self.subs.append(s[i + 1 : j].replace("\\`", "`"))
        buf.append(s[i : j + 1])
        return j + 1

    def _operator(self, c: str, i: int, buf: list[str], in_word: bool) -> tuple[int, bool]:
        """A process substitution, a redirection or an operator at ``i`` (each ends the word
        before it), else one more character of the word: (where reading goes on, in a word)."""
        s = self.s
        if c in "<>" and s.startswith("(", i + 1):  # process substitution
            self._flush(buf, in_word)
            end = self._matching(i + 2, "(", ")")
            self.subs.append(s[i + 2 : end - 1])
            self.tokens.append(("w", s[i:end]))
            return end, False
        if c == "(" and in_word and self._extglob(buf):
            end = self._matching(i + 1, "(", ")")
            buf.append(s[i:end])
            return end, True
        redir = (
            next((r for r in _REDIRS if s.startswith(r, i)), None)
            if c in "<>&" or c.isdigit()
            else None
        )
        if redir is not None:
            if in_word and buf and "".join(buf).isdigit():  # 2>err: the fd belongs to the op
                buf.clear()
                in_word = False
            self._flush(buf, in_word)
            self.tokens.append(("r", redir))
            if redir in ("<<", "<<-"):
                self.heredocs.append((len(self.tokens) - 1, "", redir == "<<-"))
            return i + len(redir), False
        op = next((o for o in _OPERATORS if s.startswith(o, i)), None)
        if op is not None:
            self._flush(buf, in_word)
            self.tokens.append(("op", op))
            i += len(op)
            if op == "\n" and self.heredocs:
                i = self._bodies(i)
            return i, False
        buf.append(c)
        return i + 1, True

    def _extglob(self, buf: list[str]) -> bool:
        """Does a ``(`` after the word read so far open an extglob group (``@(a|b)``, ``?(``,
        ``*(``, ``+(``, ``!(``: part of the word, a pattern list)? Read so on every line, as if
        extglob were on (an earlier line may have turned it on; without it bash refuses the
        line, so nothing runs that the word hides), except a lone ``!`` where a command starts:
        ``!(cmd)`` is a negated subshell there, whose commands are read."""
        word = "".join(buf)
        if not word or word[-1] not in "@?*+!":
            return False
        if word == "!":
            last = self.tokens[-1] if self.tokens else ("op", "\n")
            return not (last[0] == "op" or last[0] == "w" and last[1] in _KEYWORDS)
        return True

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
                self.subs.append(s[i + 1 : j])
                buf.append(s[i : j + 1])
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
        if argv and argv[0] == "function":  # function NAME [()] { BODY: the body runs when called
            argv = argv[2:]
            while argv and argv[0] in ("()", "{", "("):
                argv.pop(0)
        elif argv and argv[0] in ("select", "case"):
            argv = []
        elif argv and argv[0] == "for" and not (len(argv) > 2 and argv[2] == "in"):
            argv = []  # for ((...)) / for x; do: nothing to follow
        made = None
        if argv or redirects or assigns:
            made = SimpleCommand(
                tuple(argv), tuple(redirects), "\n".join(heredoc) or None, tuple(assigns), piped
            )
            out.append(made)
        words.clear()
        redirects.clear()
        heredoc.clear()
        return made

    while k < len(tokens):
        kind, value = tokens[k]
        if kind == "op":
            closes = (
                bool(words) and words[-1] in _GROUP_ENDS or k > 0 and tokens[k - 1] == ("op", ")")
            )
            made = end()
            last = made if made is not None else last
            if value in ("|", "|&"):
                piped = replace(last, grouped=True) if closes and last is not None else last
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


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


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
