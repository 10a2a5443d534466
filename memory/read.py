"""Reading memory: list, show, full-text search, and the per-skill verification status.

Search is SQLite FTS5 from the standard library (``sqlite3``; an in-memory database built from
the entries being searched, ranked with FTS5's ``bm25()``, k1 = 1.2, b = 0.75). What is indexed
and what a query means are decided here, in Python, so that FTS5 never sees user text as query
syntax: every entry's text, kind, version, domain, skill, tags and the string values of its data
(feedback, reasons, hypotheses, finding codes and titles) are cut into lower-case word tokens;
identifiers are also split at ``_``, ``.`` and camelCase (``StdGroupFilter`` → ``stdgroupfilter``,
``std``, ``group``, ``filter``); a plural ``s`` is dropped. A hit must contain every query word
(``word*`` matches a prefix; a compound word such as ``dead-groups`` that is not indexed as a
whole must match all its parts). Each query word becomes a quoted FTS5 phrase, so ``NEAR(``,
``AND``, ``"``, ``-`` or ``^`` in a query are plain characters, never operators.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from evotree.core.workspace import Workspace
from evotree.memory.model import EntryKind, InvalidMemory, MemoryEntry
from evotree.memory.store import MemoryStore

__all__ = [
    "MIN_DOMAINS",
    "SearchHit",
    "SkillStatus",
    "get_entry",
    "list_entries",
    "search",
    "search_entries",
    "skill_status",
    "tokenize",
]

#: EvoTrainer's rule: a skill is verified across domains after significant gains in this many.
MIN_DOMAINS = 2
_WORD = re.compile(r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SEP = re.compile(r"[._-]")


def _stem(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


@lru_cache(maxsize=1 << 16)
def _word_tokens(word: str) -> tuple[str, ...]:
    """The tokens of one word (memoized: words repeat, and every search tokenizes every entry)."""
    whole = _stem(word.lower())
    chunks = _SEP.split(word)
    pieces = [p for chunk in chunks for p in (_PART.findall(chunk) or [chunk])]
    if len(pieces) <= 1:
        return (whole,)
    return (
        whole,
        *(_stem(p.lower()) for p in pieces if p),
        *(_stem(chunk.lower()) for chunk in chunks if chunk and chunk != word),
    )


def tokenize(text: str) -> list[str]:
    """Lower-case search tokens of ``text`` (see the module docstring for the rules)."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out.extend(_word_tokens(word))
    return out


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _document(entry: MemoryEntry) -> list[str]:
    parts = [
        entry.text,
        entry.kind.replace("_", " "),
        entry.version or "",
        entry.domain,
        entry.skill or "",
        " ".join(entry.tags),
        *_strings(entry.data),
    ]
    return tokenize(" ".join(parts))


def list_entries(
    ws: Workspace,
    kind: str | None = None,
    *,
    skill: str | None = None,
    version: str | None = None,
    domain: str | None = None,
) -> list[MemoryEntry]:
    """Entries in memory, oldest first, optionally only one kind, skill, version or domain."""
    if kind is not None:
        kind = EntryKind.parse(kind).value
    return [
        e
        for e in MemoryStore(ws.git).entries()
        if (kind is None or e.kind == kind)
        and (skill is None or e.skill == skill or (e.skill is None and skill in _skills_named(e)))
        and (version is None or e.version == version)
        and (domain is None or e.domain == domain)
    ]


def _skills_named(entry: MemoryEntry) -> set[str]:
    named = set()
    for key in ("skills", "skills_together"):
        for item in entry.data.get(key) or []:
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                named.add(item["name"])
            elif isinstance(item, str):
                named.add(item)
    return named


def get_entry(ws: Workspace, ref: str) -> MemoryEntry:
    """The entry whose id is ``ref`` or starts with it (at least 4 characters, unambiguous)."""
    store = MemoryStore(ws.git)
    exact = store.get(ref) if re.fullmatch(r"m[0-9a-f]{20}", ref or "") else None
    if exact is not None:
        return exact
    if not ref or len(ref) < 4:
        raise InvalidMemory(
            f"memory entry id: expected at least 4 characters of an id like m1a2b…, actually: {ref!r}",
            fix="`evotree memory list` shows the ids",
        )
    matches = sorted(i for i in store.ids() if i.startswith(ref))
    if not matches:
        raise InvalidMemory(
            f"no memory entry with id {ref!r}", fix="`evotree memory list` shows the ids", id=ref
        )
    if len(matches) > 1:
        raise InvalidMemory(
            f"memory entry id {ref!r} is ambiguous: {', '.join(matches[:5])}",
            fix="give more characters of the id",
            id=ref,
        )
    found = store.get(matches[0])
    assert found is not None
    return found


@dataclass
class SearchHit:
    """One search result: the entry, its BM25 score (higher is better), and the query terms it matched."""

    entry: MemoryEntry
    score: float
    matched: list[str]

    def to_dict(self) -> dict[str, Any]:
        # 6 significant digits, not 6 decimals: FTS5's bm25() gives a word found in more than half
        # the entries an idf of 1e-6, so scores in a small memory can be that small.
        return {
            "score": float(f"{self.score:.6g}"),
            "matched": self.matched,
            "entry": self.entry.to_dict(),
        }


# Documents hold only tokens made by ``tokenize`` (ASCII letters, digits and ``._-``) joined by
# spaces; the ``ascii`` tokenizer with those token characters keeps each one whole.
_FTS_TABLE = (
    "CREATE VIRTUAL TABLE docs USING fts5(body, created_at UNINDEXED, id UNINDEXED, "
    "tokenize = \"ascii tokenchars '._-'\")"
)
_FTS_VOCAB = "CREATE VIRTUAL TABLE vocab USING fts5vocab(docs, 'row')"


def _phrase(token: str, prefix: bool) -> str:
    """``token`` as an FTS5 string (a phrase), never as query syntax."""
    return '"' + token.replace('"', '""') + '"' + ("*" if prefix else "")


def _query_words(text: str) -> list[tuple[str, bool, tuple[str, ...]]]:
    """(whole token, is_prefix, its parts) for each word of ``text``; refuses a query without words."""
    if not isinstance(text, str):
        raise InvalidMemory(
            f"search: expected the words to search for as a string, actually: {type(text).__name__}",
            fix='e.g. evotree memory search "dead groups"',
        )
    wanted: list[tuple[str, bool, tuple[str, ...]]] = []
    for raw in (t for t in re.split(r"\s+", text.strip()) if t):
        prefix = raw.endswith("*")
        words = _WORD.findall(raw.rstrip("*"))
        for k, word in enumerate(words):
            tokens = tokenize(word)
            wanted.append(
                (tokens[0], prefix and k == len(words) - 1, tuple(dict.fromkeys(tokens[1:])))
            )
    if not wanted:
        raise InvalidMemory(
            f"search: expected words (letters or digits) to search for, actually: {text[:200]!r}",
            fix='e.g. evotree memory search "dead groups"',
        )
    return list(dict.fromkeys(wanted))  # a repeated word counts once


def search_entries(
    entries: list[MemoryEntry], text: str, *, limit: int | None = None
) -> list[SearchHit]:
    """Rank ``entries`` against the query ``text`` (every word must match; FTS5 BM25), best first.

    Ties keep the older entry first. ``limit``: at most this many hits (``None``: all).
    """
    wanted = _query_words(text)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InvalidMemory(
            f"search limit: expected a whole number ≥ 0 or None, actually: {limit!r}",
            fix="e.g. limit=20",
        )
    if not entries or limit == 0:
        return []
    db = sqlite3.connect(":memory:")
    try:
        try:
            db.execute(_FTS_TABLE)
        except sqlite3.OperationalError as exc:
            raise InvalidMemory(
                f"memory search needs SQLite's FTS5, which this Python's sqlite3 lacks ({exc}; "
                f"SQLite {sqlite3.sqlite_version})",
                fix="use a Python whose sqlite3 module is built with FTS5 (the python.org, "
                "conda and most Linux distribution builds are)",
            ) from None
        db.execute(_FTS_VOCAB)
        db.executemany(
            "INSERT INTO docs(rowid, body, created_at, id) VALUES (?, ?, ?, ?)",
            ((i, " ".join(_document(e)), e.created_at, e.id) for i, e in enumerate(entries)),
        )

        def indexed(token: str) -> bool:
            return db.execute("SELECT 1 FROM vocab WHERE term = ?", (token,)).fetchone() is not None

        # each term: (label, its FTS5 expression). A compound word not indexed as a whole
        # ("dead-groups") must match all of its parts instead.
        terms: list[tuple[str, str]] = []
        for whole, prefix, parts in wanted:
            if prefix or not parts or indexed(whole):
                terms.append((whole, _phrase(whole, prefix)))
            else:
                terms.extend((part, _phrase(part, False)) for part in parts)
        terms = list(dict.fromkeys(terms))
        match = " AND ".join(expr for _, expr in terms)
        rows = db.execute(
            "SELECT rowid, -bm25(docs) AS score FROM docs WHERE docs MATCH ? "
            "ORDER BY score DESC, created_at, id LIMIT ?",
            (match, -1 if limit is None else limit),
        ).fetchall()
    except sqlite3.Error as exc:  # not expected: the query holds only quoted tokens
        raise InvalidMemory(
            f"search {text[:200]!r} failed in SQLite FTS5: {exc}",
            fix="search with plain words; report this query if it keeps failing",
        ) from None
    finally:
        db.close()
    labels = list(dict.fromkeys(label for label, _ in terms))
    return [SearchHit(entry=entries[i], score=score, matched=list(labels)) for i, score in rows]


def search(
    ws: Workspace, text: str, *, limit: int | None = 20, kind: str | None = None
) -> list[SearchHit]:
    """Full-text search over memory (optionally only one kind), best first."""
    return search_entries(list_entries(ws, kind), text, limit=limit)


@dataclass
class SkillStatus:
    """What memory says of one skill (schema: ``memory_skills.schema.json``).

    ``domains``: the domains where a verification showed a significant gain;
    ``verified_across_domains``: at least :data:`MIN_DOMAINS` of them (EvoTrainer's rule).
    ``per_domain`` lists every domain it was tried in, with its verifications' numbers.
    """

    skill: str
    domains: list[str]
    verified_across_domains: bool
    verifications: int
    significant: int
    negative: int
    per_domain: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "domains": self.domains,
            "verified_across_domains": self.verified_across_domains,
            "verifications": self.verifications,
            "significant": self.significant,
            "negative": self.negative,
            "per_domain": self.per_domain,
        }

    def verified_in(self, domain: str) -> bool:
        """Did a verification in ``domain`` show a significant gain?"""
        return domain in self.domains


def skill_status_of(entries: list[MemoryEntry]) -> list[SkillStatus]:
    """Per skill, from ``entries``: significant domains, counts, per-domain numbers (by name)."""
    by_skill: dict[str, list[MemoryEntry]] = {}
    negatives: Counter[str] = Counter()
    for entry in entries:
        if entry.kind == EntryKind.SKILL_VERIFICATION.value and entry.skill:
            by_skill.setdefault(entry.skill, []).append(entry)
        elif entry.kind == EntryKind.NEGATIVE_EVIDENCE.value:
            for name in _skills_named(entry) | ({entry.skill} if entry.skill else set()):
                negatives[name] += 1
    out = []
    for skill in sorted(set(by_skill) | set(negatives)):
        rows: dict[str, dict[str, Any]] = {}
        for entry in by_skill.get(skill, []):
            row = rows.setdefault(
                entry.domain,
                {
                    "domain": entry.domain,
                    "verifications": 0,
                    "significant": 0,
                    "best_delta": None,
                    "versions": [],
                    "imported": False,
                    "workspaces": [],
                },
            )
            row["verifications"] += 1
            row["significant"] += int(entry.significant)
            delta = entry.data.get("delta")
            if isinstance(delta, (int, float)) and (
                row["best_delta"] is None or delta > row["best_delta"]
            ):
                row["best_delta"] = delta
            if entry.version and entry.version not in row["versions"]:
                row["versions"].append(entry.version)
            if entry.workspace not in row["workspaces"]:
                row["workspaces"].append(entry.workspace)
            row["imported"] = row["imported"] or entry.origin is not None
        domains = sorted(d for d, r in rows.items() if r["significant"] > 0)
        verifications = sum(r["verifications"] for r in rows.values())
        out.append(
            SkillStatus(
                skill=skill,
                domains=domains,
                verified_across_domains=len(domains) >= MIN_DOMAINS,
                verifications=verifications,
                significant=sum(r["significant"] for r in rows.values()),
                negative=negatives.get(skill, 0),
                per_domain=[rows[d] for d in sorted(rows)],
            )
        )
    return out


def skill_status(ws: Workspace) -> list[SkillStatus]:
    """Per skill: domains with significant gains and whether it is verified across domains."""
    return skill_status_of(MemoryStore(ws.git).entries())
