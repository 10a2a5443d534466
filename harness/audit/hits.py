"""What a leak rule returns (:class:`Hit`) and what the rules know about the task
(:class:`RuleSet`: its hidden paths), shared by every rule set of the audit."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

__all__ = ["Hit", "RuleSet"]


#: a name that reads as a file's, not a folder's: a stem, a dot and a short extension
#: (``func_code.py``, ``notes.md``; not ``.hypothesis`` nor ``_minted-regatta``)
_FILE_NAME = re.compile(r"[^.]\.[A-Za-z0-9]{1,8}$")


#: what makes a word a glob bash expands: ``*``, ``?``, a class ``[...]``, a brace list
#: ``{a,b}`` or an extglob group ``@(...)`` (the s20 red team's A3-A6: ``?`` and the rest
#: named the hidden folder as ``*`` did)
GLOB_CHARS = re.compile(r"[*?\[]|\{[^{}]*,[^{}]*\}|\{[^{}]+\.\.[^{}]+\}|[@!+?*]\(")
#: a sequence expression bash expands (``{a..c}``, ``{1..9..2}``: the s22 red team's G7)
_SEQUENCE = re.compile(r"\{(-?\w+)\.\.(-?\w+)(?:\.\.-?\d+)?\}")
#: the characters that open an extglob group before a ``(``: ``@(a|b)`` one of, ``?(..)``
#: none or one, ``*(..)`` any number, ``+(..)`` one or more, ``!(..)`` anything but
EXTGLOB = "@?*+!"
_QUANT = {"@": "", "?": "?", "*": "*", "+": "+"}
#: POSIX classes in a bracket (``[[:digit:]]``); another one matches any character
_POSIX = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r"\s",
    "xdigit": "0-9a-fA-F",
    "word": r"\w",
}


#: an item of a bracket expression that bash reads as one member: a POSIX class
#: (``[:alpha:]``), an equivalence class (``[=e=]``) or a collating symbol (``[.period.]``)
_CLASS_ITEM = re.compile(r"\[([:=.])(.+?)\1\]")
#: a word of text as :func:`glob_words` cuts it: characters up to a command's punctuation, a
#: bracket expression kept whole (its ``:`` and ``=`` are a class's, not a word's end)
_WORD = re.compile(r"(?:\[[!^]?\]?(?:\[([:=.]).+?\1\]|\\.|[^\]\s'\"])*\]|\\.|[^\s'\"=:<>;&])+")


#: the most words one brace expansion is tried as
_MAX_BRACES = 64


def _braces(word: str) -> list[str]:
    """``word`` with its brace lists expanded as bash does (``a{b,c}d`` is ``abd``, ``acd``),
    at most :data:`_MAX_BRACES` words (past that, the word with each list read as ``*``)."""
    out, todo = [], [word]
    while todo:
        w = todo.pop()
        m = re.search(r"\{([^{}]*,[^{}]*)\}", w)
        seq = _SEQUENCE.search(w)
        if seq and (not m or seq.start() < m.start()):
            todo += [w[: seq.start()] + v + w[seq.end() :] for v in _sequence(seq)]
        elif not m:
            out.append(w)
        else:
            todo += [w[: m.start()] + alt + w[m.end() :] for alt in m[1].split(",")]
        if len(out) + len(todo) > _MAX_BRACES:
            flat = word
            while re.search(r"\{[^{}]*\}", flat):  # every list, the outer ones too (G8)
                flat = re.sub(r"\{[^{}]*\}", "*", flat)
            return [flat]
    return out


def _sequence(m: re.Match[str]) -> list[str]:
    """The words of a sequence expression (``{o..q}``: o, p, q; ``{1..3}``), at most
    :data:`_MAX_BRACES` + 1 (past that the caller reads the word with ``*``); one that bash
    leaves as it is (``{a..7}``) is ``*``, a superset."""
    lo, hi = m[1], m[2]
    if re.fullmatch(r"-?\d+", lo) and re.fullmatch(r"-?\d+", hi):
        a, b = int(lo), int(hi)
        step = 1 if b >= a else -1
        return [str(v) for v in range(a, b + step, step)][: _MAX_BRACES + 1]
    if len(lo) == len(hi) == 1 and lo.isalpha() and hi.isalpha():
        a, b = ord(lo), ord(hi)
        step = 1 if b >= a else -1
        return [chr(v) for v in range(a, b + step, step)][: _MAX_BRACES + 1]
    return ["*"]


def _group_end(word: str, start: int) -> int:
    """Index just past the ``)`` closing the extglob group whose ``(`` is at ``start`` (nested
    groups and classes skipped), or -1 when it is never closed."""
    depth, i, n = 0, start, len(word)
    while i < n:
        c = word[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            j = _class_end(word, i)
            if j > 0:
                i = j
                continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def _class_end(pat: str, start: int) -> int:
    """Index just past the ``]`` closing the class ``[...]`` at ``start`` (a ``]`` first in it,
    after ``!`` or ``^``, is a member), or -1 when it is never closed."""
    i = start + 1
    if i < len(pat) and pat[i] in "!^":
        i += 1
    if i < len(pat) and pat[i] == "]":
        i += 1
    while i < len(pat):
        m = _CLASS_ITEM.match(pat, i)
        if m:  # ``[[:digit:]]``, ``[[=.=]]``, ``[[.period.]]`` (the s21 red team's B2, B3)
            i = m.end()
            continue
        if pat[i] == "\\" and i + 1 < len(pat):
            i += 2  # an escaped member (``[.\]]``)
            continue
        if pat[i] == "]":
            return i + 1
        i += 1
    return -1


def _pieces(word: str) -> list[str]:
    """``word`` split where a command's ``(``, ``)``, ``,`` or ``|`` ends a path, each extglob
    group (``@(a|b)``, :data:`EXTGLOB`) kept whole in its piece."""
    out, buf, i = [], [], 0
    while i < len(word):
        c = word[i]
        if c in EXTGLOB and word.startswith("(", i + 1):
            end = _group_end(word, i + 1)
            end = len(word) if end < 0 else end
            buf.append(word[i:end])
            i = end
            continue
        # an escaped character or a bracket expression is the word's, whatever it holds
        # (``[.,]``, ``[.\|]``: the s21 red team's B1)
        end = i + 2 if c == "\\" else _class_end(word, i) if c == "[" else -1
        if end > 0:
            buf.append(word[i:end])
            i = end
            continue
        if c in "(),|":
            out.append("".join(buf))
            buf = []
        else:
            buf.append(c)
        i += 1
    out.append("".join(buf))
    return [p for p in out if p]


def glob_words(text: str) -> list[str]:
    """The globs of ``text`` as the shell would match them: each word holding a glob character
    (:data:`GLOB_CHARS`), its brace lists expanded, split where a command's punctuation ends
    a word; extglob groups are kept (:func:`glob_regex` matches them)."""
    out: list[str] = []
    words = (
        [m[0] for m in _WORD.finditer(text)] if "[" in text else re.split(r"[\s'\"=:<>;&]+", text)
    )
    for word in words:
        if not GLOB_CHARS.search(word):
            continue
        braced = bool(re.search(r"\{[^{}]*,[^{}]*\}", word) or _SEQUENCE.search(word))
        for expanded in _braces(word):
            # a brace list's words are paths even with no wildcard left (``{a,b}/x``)
            out += [t for t in _pieces(expanded) if braced or re.search(r"[*?\[]|[@!+]\(", t)]
    return out


def _translate(pat: str, star: str) -> str:
    """The regex of the bash pattern ``pat`` (``*``, ``?``, classes, extglob groups): ``star``
    is what ``*`` matches (``[^/]*`` within a path part). ``!(..)`` is exact at the pattern's
    end and any text elsewhere (a superset: the safe side); a group never closed matches any
    text from there on."""
    out, i, n = [], 0, len(pat)
    while i < n:
        c = pat[i]
        if c in EXTGLOB and pat.startswith("(", i + 1):
            end = _group_end(pat, i + 1)
            if end < 0:
                out.append(".*")
                break
            body = pat[i + 2 : end - 1]
            if c in "+*" and re.search(r"[*?]|[@!+]\(", body):
                # a repeated group holding a wildcard or a group is any text in the part (a
                # superset): as a regex it backtracks without end (``+(*|*)``: G12)
                out.append(star)
                i = end
                continue
            alts = "|".join(_translate(a, star) for a in _alternatives(body))
            if c == "!":
                out.append(f"(?!(?:{alts})\\Z){star}" if end == n else star)
            else:
                out.append(f"(?:{alts}){_QUANT[c]}")
            i = end
            continue
        if c == "*":
            out.append(star)
        elif c == "?":
            out.append("." if star == ".*" else "[^/]")
        elif c == "[" and _class_end(pat, i) > 0:
            end = _class_end(pat, i)
            body = pat[i + 1 : end - 1]
            neg = body[:1] in ("!", "^")
            body = body[1:] if neg else body
            members = _members(body)
            # a negated class keeps case (``[!R]`` matches ``r`` unless nocaseglob is on: the
            # s22 red team's G1), so it stays a superset under the regex's IGNORECASE
            out.append(f"(?-i:[^{members}])" if neg else f"[{members}]")
            i = end
            continue
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pat[i + 1]))
            i += 2
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _members(body: str) -> str:
    """The regex class body of a bracket expression's ``body``: a known POSIX class its
    characters; an unknown one, an equivalence class or a collating symbol any character (a
    superset: the safe side); an escaped character itself and the backslash; a range ``a-z``
    as written, a reversed one (``:-1``, which matches nothing in bash) its two ends."""
    items: list[tuple[str, str | None]] = []  # (regex piece, the one literal character or None)
    i = 0
    while i < len(body):
        m = _CLASS_ITEM.match(body, i)
        if m:
            items.append((_POSIX.get(m[2], r"\s\S") if m[1] == ":" else r"\s\S", None))
            i = m.end()
            continue
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            items += [("\\\\", None), (_class_char(body[i + 1]), body[i + 1])]
            i += 2
            continue
        items.append((_class_char(c), c))
        i += 1
    out, k = [], 0
    while k < len(items):
        piece, char = items[k]
        if (
            char is not None
            and k + 2 < len(items)
            and items[k + 1][1] == "-"
            and items[k + 2][1] is not None
        ):
            high = items[k + 2][1]
            assert high is not None
            out.append(f"{piece}-{items[k + 2][0]}" if char <= high else piece + items[k + 2][0])
            k += 3
            continue
        out.append(piece)
        k += 1
    return "".join(out)


def _class_char(c: str) -> str:
    """``c`` as one member of a regex class."""
    return "\\" + c if c in "\\^[]-" else c


def _alternatives(body: str) -> list[str]:
    """The ``|``-separated patterns of an extglob group's body (nested groups, bracket
    expressions and escaped characters kept whole: the s21 red team's B4)."""
    out, start, i = [], 0, 0
    while i < len(body):
        c = body[i]
        if c in EXTGLOB and body.startswith("(", i + 1):
            end = _group_end(body, i + 1)
            i = len(body) if end < 0 else end
            continue
        end = i + 2 if c == "\\" else _class_end(body, i) if c == "[" else -1
        if end > 0:
            i = end
            continue
        if c == "|":
            out.append(body[start:i])
            start = i + 1
        i += 1
    out.append(body[start:])
    return out


@functools.lru_cache(maxsize=4096)
def glob_regex(pattern: str, whole_path: bool = False) -> re.Pattern[str]:
    """The compiled regex of a bash glob (extglob groups included: fnmatch knows none), for
    one path part, or with ``whole_path`` for a whole path (``*`` then crosses ``/``). Case is
    ignored: ``shopt -s nocaseglob`` on any earlier line makes bash match so, and the audit does
    not follow the shell's options (the s21 red team's B5; fail closed)."""
    return re.compile(
        _translate(_few_stars(pattern), ".*" if whole_path else "[^/]*"),
        re.DOTALL | re.IGNORECASE,
    )


#: the most ``*`` a pattern keeps: past it, its middle is one ``*`` (a superset: the text
#: before its first star and after its last must still match); as a regex, each star
#: multiplies the backtracking (16 stars took 14 s: the s22 imports red team's I14)
_MAX_STARS = 6


def _few_stars(pattern: str) -> str:
    """``pattern`` with runs of ``*`` as one, and past :data:`_MAX_STARS` stars outside
    classes and groups its middle as one ``*``."""
    pattern = re.sub(r"(?<![@!+?*\\])\*{2,}(?!\()", "*", pattern)
    stars = [i for i, c in enumerate(pattern) if c == "*"]
    if len(stars) <= _MAX_STARS:
        return pattern
    head, tail = pattern[: stars[0]], pattern[stars[-1] + 1 :]
    # a piece holding part of a class, a group or an escape is dropped (any text: a superset)
    plain = re.compile(r"[^\[\]()\\@!+?|]*")
    return (head if plain.fullmatch(head) else "") + "*" + (tail if plain.fullmatch(tail) else "")


def part_match(name: str, pattern: str) -> bool:
    """Does the glob part ``pattern`` match the file name ``name`` (:func:`glob_regex`)?"""
    return glob_regex(pattern).fullmatch(name) is not None


#: a glob of wildcards alone (``*/*``, ``??????/*``, ``[!.]*/*``, ``**``)
_BARE_GLOB = re.compile(r"(?:\./)?[*?/\[\]!^]+")
#: a folder part the shell computes: a parameter expansion (any operator), a variable or a
#: command substitution, a whole part before a ``/`` (the s22 red team's G9; not a part's
#: tail: ``localhost:${PORT}/ping``)
_COMPUTED_PART = re.compile(r"(?:^|(?<=[\s'\"=/]))\$(?:\{[^}]*\}|\w+|\([^()]*\))(?=/)")


def _normal_path(word: str) -> str:
    """``word`` as a path with its ``.`` and empty parts dropped and ``..`` resolved (the s22
    red team's G4, G5: ``gansey/./x``, ``gansey//x``, ``config/../gansey/x``)."""
    parts: list[str] = []
    for part in word.strip().split("/"):
        if part in ("", "."):
            continue
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def _globstar(token: str) -> str:
    """The whole-path pattern of a word with a ``**`` part (``*`` then crosses ``/``: ``a/**/b``
    reaches ``a/b`` too); a ``**`` inside a part (``fl**(c)``: a star, then a group) is kept
    (the s22 red team's G2)."""
    return re.sub(r"(?:(?<=/)|^)\*\*(?:/|$)", "*", token)


def _spells_extension(part: str, name: str) -> bool:
    """Does the glob part spell a dot after its first character (``emb*.zarr``, ``*.zarr``,
    ``v1.?``; not ``*``, ``t*``, ``.e*``), or end in the name's whole extension after its last
    wildcard (``emb?zarr``, ``emb[.]zarr``, ``emb*zarr``: the s21 red team's B7)? Then a glob
    reaching below it takes the name it matches for a folder, as bash does (it expands
    ``x.zarr/0`` only where ``x.zarr`` is one): a folder whose name reads as a file's (the s20
    red team's A8)."""
    if re.search(r".\.", re.sub(r"\[[^\]]*\]", "x", part)):
        return True
    tail = re.split(r"[*?\])]", part)[-1]
    if "." in name and len(tail) >= len(name.rsplit(".", 1)[1]) > 0:
        return True
    # or most of the name spelled (``emb?zar?``, ``emb???rr``: the s22 red team's G3)
    literal = re.sub(r"[@!+?*]\([^)]*\)|\[[^\]]*\]|[*?]", "", part)
    return len(literal) * 2 >= len(name) > 0


def _sample(pattern: str) -> str:
    """One name the glob part ``pattern`` matches, where it is simple to make (``*`` none,
    ``?`` and a class one character, an extglob group its first pattern or nothing)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c in EXTGLOB and pattern.startswith("(", i + 1):
            end = _group_end(pattern, i + 1)
            end = len(pattern) if end < 0 else end
            if c in "@+":
                out.append(_sample(_alternatives(pattern[i + 2 : end - 1])[0]))
            i = end
            continue
        if c == "[" and _class_end(pattern, i) > 0:
            end = _class_end(pattern, i)
            body = pattern[i + 1 : end - 1]
            out.append("\x00" if body[:1] in "!^" else body.lstrip("[:")[:1] or "x")
            i = end
            continue
        out.append({"*": "", "?": "x"}.get(c, c))
        i += 1
    return "".join(out)


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
        out: dict[str, object] = {
            "code": self.code,
            "severity": self.severity,
            "rule": self.rule,
            "command": self.command,
        }
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
    _hidden_re: tuple[re.Pattern[str], ...] = field(
        default=(), init=False, repr=False, compare=False
    )
    _needles: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        patterns = []
        for path in self.hidden_paths:
            clean = path.strip().strip("/")
            if clean.startswith("./"):
                clean = clean[2:]
            if not clean:
                continue
            patterns.append(
                # after a parameter expansion's default or alternate (``${x:-PATH}``: G9)
                re.compile(
                    r"(?:^|[\s/'\"=(:,]|\$\{\w*:?[-+=?])" + re.escape(clean) + r"(?=$|[/\s'\"),:}])"
                )
            )
        object.__setattr__(self, "_hidden_re", tuple(patterns))
        object.__setattr__(
            self,
            "_needles",
            tuple(p.strip("/").rsplit("/", 1)[-1] for p in self.hidden_paths if p.strip("/")),
        )

    def mentions_hidden(self, text: str) -> bool:
        """Cheap test: could ``text`` name a hidden path at all (its last component occurs, or
        a glob in it may match one)?"""
        if any(n in text for n in self.hidden_needles):
            return True
        if "$" in text and "/" in text:
            computed = _COMPUTED_PART.sub("*", text)
            if computed != text and self._glob_match(computed):
                return True
        return bool(GLOB_CHARS.search(text)) and self._glob_match(text)

    def hidden_match(self, word: str) -> bool:
        """True when ``word`` names a hidden path (or a file under one), also through a glob
        the shell expands (``.idea/shelf/*/shelved.patch``, ``culvert/*.rej``), with its
        ``.`` and empty parts dropped (``gansey/./x.py``), and with a folder part the shell
        computes (``${x:-gansey}/``, ``$G/``, ``$(pwd)/``) taken for any folder (``*``)."""
        if any(p.search(word) for p in self._hidden_re):
            return True
        if "/" in word:
            flat = re.sub(r"/(?:\.?/)+", "/", word)
            if "/.." in flat:  # ``gansey/x/../flycheck_yarn.py``: resolved (I12)
                flat = re.sub(r"[^\s'\"]*/\.\.(?:/[^\s'\"]*)?", lambda m: _normal_path(m[0]), flat)
            if flat != word and any(p.search(flat) for p in self._hidden_re):
                return True
            computed = _COMPUTED_PART.sub("*", word)
            if computed != word and self._glob_match(computed):
                return True
        return bool(GLOB_CHARS.search(word)) and self._glob_match(word)

    def bare_glob_match(self, word: str) -> bool:
        """Does ``word``, a glob of wildcards alone reaching below the first folder (``*/*``,
        ``??????/*``, ``*/*/*/*``) or a globstar (``**``), match a hidden path as a command's
        own argument? Kept apart from :meth:`hidden_match`: code that lists ``*`` beside other
        names is judged by what it opens (the s22 red team's G6; taking every name-less glob
        in code flagged 400+ look-alikes of the labelled sets)."""
        if not _BARE_GLOB.fullmatch(word) or not ("/" in word.strip("/") or "**" in word):
            return False
        return self._glob_match(word, bare=True)

    def _glob_match(self, text: str, bare: bool = False) -> bool:
        """Does a glob word in ``text`` (a ``*``, ``?`` or ``[...]``: ``*.rej``, ``.idea/*/x``,
        ``*/*``; brace expansion and extglob too, :func:`glob_words`) match a hidden path, or a
        file below a hidden folder? Matched part by part (a ``*`` does not cross a ``/``), a
        ``**`` part by the whole path; the word's ``.`` and empty parts dropped and ``..``
        resolved, and any folder before the hidden path's first part taken (an absolute path,
        ``$PWD/``: as the literal rule finds the path after any ``/``)."""
        for token in glob_words(text):
            token = _normal_path(token)
            if not bare and not re.search(r"[\w.#~-]", token):
                continue  # a glob with a name in it, not a bare ``*`` (``*/*``: bare_glob_match)
            tparts = token.split("/")
            for path in self.hidden_paths:
                hidden = _normal_path(path.strip())
                if not hidden:
                    continue
                # a hidden path may be a folder though listed without its slash
                # (``slides/_minted-regatta``, as the literal match takes it), unless its name
                # reads as a file's (``func_code.py``): a glob reaching below a folder reads it
                folder = path.endswith("/") or not _FILE_NAME.search(hidden.rsplit("/", 1)[-1])
                if "**" in tparts:  # globstar: a ``**`` part crosses folders
                    flat = glob_regex(_globstar(token), True)
                    # below it: any name, or a name the glob's own last part matches
                    tails = ("x", _sample(tparts[-1]))
                    if flat.fullmatch(hidden) or (
                        folder and any(flat.fullmatch(f"{hidden}/{t}") for t in tails)
                    ):
                        return True
                    continue
                hparts = hidden.split("/")
                for at in range(len(tparts) - len(hparts) + 1):
                    parts = tparts[at:]
                    if len(parts) > len(hparts) and not (
                        folder or _spells_extension(parts[len(hparts) - 1], hparts[-1])
                    ):
                        continue  # a file's name: no glob reaches below it, but one in its name
                    if all(part_match(h, t) for h, t in zip(hparts, parts)):
                        return True
        return False

    @property
    def hidden_folders(self) -> tuple[str, ...]:
        """The folders that hold a hidden path (``.idea`` for ``.idea/shelf/x/``): a command
        that lists and reads one of them may read the hidden path without naming it."""
        out: list[str] = []
        for path in self.hidden_paths:
            parts = path.strip().strip("/").split("/")
            out += [p for p in parts[:-1] if p not in ("", ".", "..") and p not in out]
        return tuple(out)

    @property
    def hidden_needles(self) -> tuple[str, ...]:
        """Plain strings the prefilter must let through (a hidden path's last component)."""
        return self._needles
