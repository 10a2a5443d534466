"""Every ref name evotree reads or writes, and the version-id value class.

evotree writes only inside ``refs/evotree/`` and ``refs/heads/evotree/``; share the tree with
``git push origin 'refs/evotree/*' 'refs/heads/evotree/*'``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evotree.core.errors import InvalidVersionId

__all__ = [
    "NAMESPACE",
    "LEDGER_REF",
    "MEMORY_REF",
    "CHAMPION_REF",
    "JUDGE_REF",
    "BRANCH_PREFIX",
    "CHAMPION_ALIAS",
    "VersionId",
    "branch_name",
    "branch_ref",
]

NAMESPACE = "refs/evotree/"
LEDGER_REF = NAMESPACE + "ledger"
MEMORY_REF = NAMESPACE + "memory"
CHAMPION_REF = NAMESPACE + "champion"
#: The judge store: a commit whose tree holds the hidden judge files (``[eval].judge_paths``);
#: never checked out, materialised only into a run's fresh judge directory. The commit in force
#: is the one the ledger records (``meta["judge"]``), never this ref alone.
JUDGE_REF = NAMESPACE + "judge"
BRANCH_PREFIX = "evotree/"
#: Word accepted wherever a version id is, meaning "the current champion".
CHAMPION_ALIAS = "champion"

_AUTO_RE = re.compile(r"^v(0|[1-9][0-9]{0,8})$")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True, order=True)
class VersionId:
    """A version id: ``v<N>`` (numbered automatically) or a custom name usable in a ref."""

    name: str

    @classmethod
    def parse(cls, text: str) -> VersionId:
        """Parse and validate ``text``; raise :class:`InvalidVersionId` naming the rule broken."""
        if text == CHAMPION_ALIAS:
            raise InvalidVersionId(
                f"'{CHAMPION_ALIAS}' is reserved (it names the current champion), not a version id",
                fix="choose another --name",
            )
        if (
            not isinstance(text, str)
            or not _NAME_RE.fullmatch(text)
            or ".." in text
            or text.endswith(".lock")
            or text.endswith(".")
        ):
            raise InvalidVersionId(
                f"expected a version id like 'v7' or 'v7-std-filter' (letters, digits, '.', '_', '-';"
                f" at most 64 characters), actually: {text!r}",
                fix="`evotree tree` lists the version ids",
            )
        return cls(text)

    @property
    def number(self) -> int | None:
        """N for an automatic id ``vN``; None for a custom name."""
        m = _AUTO_RE.fullmatch(self.name)
        return int(m.group(1)) if m else None

    def __str__(self) -> str:
        return self.name


def branch_name(version: str) -> str:
    """Short branch name of a version: ``evotree/<id>``."""
    return BRANCH_PREFIX + version


def branch_ref(version: str) -> str:
    """Full ref of a version's branch: ``refs/heads/evotree/<id>``."""
    return "refs/heads/" + branch_name(version)
