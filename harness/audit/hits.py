"""What a leak rule returns (:class:`Hit`) and what the rules know about the task
(:class:`RuleSet`: its hidden paths), shared by every rule set of the audit."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Hit", "RuleSet"]


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
        """Cheap test: could ``text`` name a hidden path at all (its last component occurs)?"""
        return any(n in text for n in self.hidden_needles)

    def hidden_match(self, word: str) -> bool:
        """True when ``word`` names a hidden path (or a file under one)."""
        return any(p.search(word) for p in self._hidden_re)

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
