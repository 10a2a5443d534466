"""The memory entry: what one thing the tree learned looks like, its stable id, and validation.

An entry's ``id`` is a hash of its content (everything but ``id`` and ``origin``), so the same
entry has the same id in every workspace it travels to: an import that meets an id it already
holds skips it, and an entry whose content does not hash to its id is refused (edited by hand
or forged). ``origin`` records where an imported entry came from; it is not part of the hash.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

from evotree.core.errors import EvotreeError

__all__ = [
    "ENTRY_SCHEMA_VERSION",
    "EntryKind",
    "InvalidMemory",
    "MemoryEntry",
    "entry_id",
    "json_safe",
]

ENTRY_SCHEMA_VERSION = 1
_ID_PREFIX = "m"
_ID_HEX = 20
_MAX_TEXT = 20_000


class InvalidMemory(EvotreeError):
    """A malformed memory entry or export, or a memory operation that cannot be done."""

    exit_code = 27
    code = "memory_error"


class EntryKind(str, Enum):
    """The four kinds of memory."""

    SKILL_VERIFICATION = "skill_verification"
    LESSON = "lesson"
    NEGATIVE_EVIDENCE = "negative_evidence"
    INCIDENT = "incident"

    @classmethod
    def parse(cls, value: str) -> EntryKind:
        """``"lesson"`` -> ``EntryKind.LESSON``; a clear :class:`InvalidMemory` otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise InvalidMemory(
                f"memory kind: expected one of {', '.join(k.value for k in cls)}, actually: {value!r}",
                fix="use --kind lesson (or another kind listed)",
            ) from None


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON: non-finite floats become None, tuples lists, numpy scalars numbers."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist):
        return json_safe(tolist())
    return str(value)


def _canonical(data: dict[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


_HASHED = (
    "v",
    "kind",
    "text",
    "version",
    "domain",
    "workspace",
    "created_at",
    "created_by",
    "skill",
    "data",
    "evidence",
    "tags",
)


def entry_id(content: dict[str, Any]) -> str:
    """The stable id of an entry's content: ``m`` + 20 hex digits of its SHA-256."""
    hashed = {k: content.get(k) for k in _HASHED}
    return _ID_PREFIX + hashlib.sha256(_canonical(hashed)).hexdigest()[:_ID_HEX]


@dataclass
class MemoryEntry:
    """One thing the tree learned (schema: ``memory_entry.schema.json``).

    ``kind``: skill_verification (``skill`` set; ``data``: delta, ci, p_value, significant, …),
    lesson (``text`` linked to ``evidence``), negative_evidence (a rejected, failed or abandoned
    version: ``data``: decision/reason, findings summary, skills), incident (audit findings).
    ``workspace`` identifies the workspace that learned it (its root commit), ``domain`` the
    workspace's domain then. ``origin`` is None for entries learned here, else where it came from.
    """

    kind: str
    text: str
    version: str | None
    domain: str
    workspace: str
    created_at: str
    created_by: str
    skill: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    v: int = ENTRY_SCHEMA_VERSION
    id: str = ""
    origin: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.kind = EntryKind.parse(self.kind).value
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidMemory(
                "memory entry text: expected a non-empty string", fix="say what was learned"
            )
        if len(self.text) > _MAX_TEXT:
            raise InvalidMemory(
                f"memory entry text: at most {_MAX_TEXT} characters, actually {len(self.text)}",
                fix="shorten it; link long material through evidence instead",
            )
        for name in ("domain", "workspace", "created_at", "created_by"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise InvalidMemory(
                    f"memory entry {name}: expected a non-empty string, actually: "
                    f"{getattr(self, name)!r}",
                    fix="the export is malformed; re-export it",
                )
        for name in ("version", "skill"):
            if getattr(self, name) is not None and not isinstance(getattr(self, name), str):
                raise InvalidMemory(
                    f"memory entry {name}: expected a string or null, actually: "
                    f"{getattr(self, name)!r}",
                    fix="the export is malformed; re-export it",
                )
        if self.kind == EntryKind.SKILL_VERIFICATION.value and not self.skill:
            raise InvalidMemory("a skill verification needs the skill's name", fix="pass the skill")
        for name in ("data", "evidence"):
            if not isinstance(getattr(self, name), dict):
                raise InvalidMemory(
                    f"memory entry {name}: expected an object, actually: "
                    f"{type(getattr(self, name)).__name__}",
                    fix="the export is malformed",
                )
        if (
            isinstance(self.tags, str)
            or not isinstance(self.tags, list)
            or not all(isinstance(t, str) for t in self.tags)
        ):
            raise InvalidMemory(
                f"memory entry tags: expected a list of strings, actually: {self.tags!r}",
                fix="the export is malformed",
            )
        if self.v != ENTRY_SCHEMA_VERSION:
            raise InvalidMemory(
                f"memory entry schema version: expected {ENTRY_SCHEMA_VERSION}, actually: {self.v!r}",
                fix="upgrade evotree to read memory written by a newer version",
            )
        if self.origin is not None and not isinstance(self.origin, dict):
            raise InvalidMemory(
                "memory entry origin: expected an object or null", fix="the export is malformed"
            )
        self.data = json_safe(self.data)
        self.evidence = json_safe(self.evidence)
        self.tags = sorted(set(self.tags))
        computed = entry_id(self.content())
        if not self.id:
            self.id = computed
        elif self.id != computed:
            raise InvalidMemory(
                f"memory entry {self.id}: its content hashes to {computed}; it was changed after it was written",
                fix="memory entries are immutable: add a new entry instead of editing one",
                id=self.id,
            )

    def content(self) -> dict[str, Any]:
        """The hashed part of the entry (everything but ``id`` and ``origin``)."""
        return {k: getattr(self, k) for k in _HASHED}

    @property
    def significant(self) -> bool:
        """For a skill verification: did it show a significant gain (CI above 0 and p < alpha)?"""
        return (
            bool(self.data.get("significant"))
            if self.kind == EntryKind.SKILL_VERIFICATION.value
            else False
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schema ``memory_entry``); a copy the caller may change."""
        out = {name: getattr(self, name) for name in _FIELDS}
        out.update(
            data=copy.deepcopy(self.data),
            evidence=copy.deepcopy(self.evidence),
            tags=list(self.tags),
            origin=copy.deepcopy(self.origin),
        )
        return out

    @classmethod
    def from_dict(cls, data: Any) -> MemoryEntry:
        """Read :meth:`to_dict`'s form, refusing unknown or missing fields and a wrong id."""
        if not isinstance(data, dict):
            raise InvalidMemory(
                f"a memory entry: expected a JSON object, actually: {type(data).__name__}",
                fix="the export is malformed; re-export it",
            )
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidMemory(
                f"memory entry {data.get('id', '?')}: unknown fields {', '.join(unknown)}",
                fix="the export was written by another tool or a newer evotree",
            )
        missing = [
            k
            for k in ("id", "kind", "text", "domain", "workspace", "created_at", "created_by")
            if k not in data
        ]
        if missing:
            raise InvalidMemory(
                f"memory entry {data.get('id', '?')}: missing {', '.join(missing)}",
                fix="the export is malformed; re-export it",
            )
        if not isinstance(data["id"], str) or not data["id"]:
            raise InvalidMemory(
                "memory entry id: expected a non-empty string", fix="the export is malformed"
            )
        try:
            return cls(**data)
        except TypeError as exc:  # e.g. a field of the wrong shape that dataclass init refuses
            raise InvalidMemory(
                f"memory entry {data.get('id')}: {exc}", fix="the export is malformed"
            ) from None


_FIELDS = tuple(f.name for f in fields(MemoryEntry))
