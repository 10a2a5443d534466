"""What a leak rule returns (:class:`Hit`) and what the rules know about the task
(:class:`RuleSet`: its hidden paths), shared by every rule set of the audit."""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

__all__ = ["Hit", "RuleSet"]


#: a name that reads as a file's, not a folder's: a stem, a dot and a short extension
#: (``func_code.py``, ``notes.md``; not ``.hypothesis`` nor ``_minted-regatta``)
_FILE_NAME = re.compile(r"[^.]\.[A-Za-z0-9]{1,8}$")


#: what makes a word a glob bash expands: ``*``, ``?``, a class ``[...]``, a brace list
#: ``{a,b}`` or an extglob group ``@(...)`` (the s20 red team's A3-A6: ``?`` and the rest
#: named the hidden folder as ``*`` did)
GLOB_CHARS = re.compile(r"[*?\[]|\{[^{}]*,[^{}]*\}|[@!+?*]\(")
#: the most words one brace expansion is tried as
_MAX_BRACES = 64


def _braces(word: str) -> list[str]:
    """``word`` with its brace lists expanded as bash does (``a{b,c}d`` is ``abd``, ``acd``),
    at most :data:`_MAX_BRACES` words (past that, the word with each list read as ``*``)."""
    out, todo = [], [word]
    while todo:
        w = todo.pop()
        m = re.search(r"\{([^{}]*,[^{}]*)\}", w)
        if not m:
            out.append(w)
        else:
            todo += [w[: m.start()] + alt + w[m.end() :] for alt in m[1].split(",")]
        if len(out) + len(todo) > _MAX_BRACES:
            return [re.sub(r"\{[^{}]*\}", "*", word)]
    return out


def glob_words(text: str) -> list[str]:
    """The globs of ``text`` as the shell would match them: each word holding a glob character
    (:data:`GLOB_CHARS`), its extglob groups read as ``*`` (any name: the safe side), its brace
    lists expanded, split where a command's punctuation ends a word."""
    out: list[str] = []
    for word in re.split(r"[\s'\"=:<>;&]+", text):
        if not GLOB_CHARS.search(word):
            continue
        word = re.sub(r"[@!+?*]\([^()]*\)", "*", word)
        braced = bool(re.search(r"\{[^{}]*,[^{}]*\}", word))
        for expanded in _braces(word):
            # a brace list's words are paths even with no wildcard left (``{a,b}/x``)
            out += [t for t in re.split(r"[(),|]+", expanded) if braced or re.search(r"[*?\[]", t)]
    return out


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
                re.compile(r"(?:^|[\s/'\"=(:,])" + re.escape(clean) + r"(?=$|[/\s'\"),:])")
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
        return any(n in text for n in self.hidden_needles) or (
            bool(GLOB_CHARS.search(text)) and self._glob_match(text)
        )

    def hidden_match(self, word: str) -> bool:
        """True when ``word`` names a hidden path (or a file under one), also through a glob
        the shell expands (``.idea/shelf/*/shelved.patch``, ``culvert/*.rej``)."""
        return any(p.search(word) for p in self._hidden_re) or (
            bool(GLOB_CHARS.search(word)) and self._glob_match(word)
        )

    def _glob_match(self, text: str) -> bool:
        """Does a glob word in ``text`` (a ``*``, ``?`` or ``[...]`` beside a name: ``*.rej``,
        ``.idea/*/x``; brace expansion and extglob too, :func:`glob_words`) match a hidden path,
        or a file below a hidden folder? Matched part by part (a ``*`` does not cross a ``/``),
        ``**`` by the whole path."""
        for token in glob_words(text):
            if "\\" in token or not re.search(r"[\w.#~-]", token):
                continue  # a glob with a name in it (not a bare ``*``, not an escaped one)
            while token.startswith("./"):
                token = token[2:]
            tparts = token.split("/")
            for path in self.hidden_paths:
                hidden = path.strip().strip("/")
                while hidden.startswith("./"):
                    hidden = hidden[2:]
                if not hidden:
                    continue
                # a hidden path may be a folder though listed without its slash
                # (``slides/_minted-regatta``, as the literal match takes it), unless its name
                # reads as a file's (``func_code.py``): a glob reaching below a folder reads it
                folder = path.endswith("/") or not _FILE_NAME.search(hidden.rsplit("/", 1)[-1])
                if "**" in token:
                    flat = token.replace("**/", "*").replace("**", "*")
                    # below it: any name, or the glob's own last part (``**/row.pygtex``)
                    tails = ("x", tparts[-1].replace("*", "x"))
                    if fnmatch.fnmatchcase(hidden, flat) or (
                        folder and any(fnmatch.fnmatchcase(f"{hidden}/{t}", flat) for t in tails)
                    ):
                        return True
                    continue
                hparts = hidden.split("/")
                if len(tparts) < len(hparts) or (len(tparts) > len(hparts) and not folder):
                    continue
                if all(fnmatch.fnmatchcase(h, t) for h, t in zip(hparts, tparts)):
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
