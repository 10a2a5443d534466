"""Reading memory: list, show, full-text search, and the per-skill verification status.

Search is a BM25 ranking over an inverted index built from the entries in memory (pure Python,
no extension to download): every entry's text, kind, version, domain, skill, tags and the string
values of its data (feedback, reasons, hypotheses, finding codes and titles) are cut into
lower-case word tokens; identifiers are also split at ``_``, ``.`` and camelCase
(``StdGroupFilter`` → ``stdgroupfilter``, ``std``, ``group``, ``filter``); a plural ``s`` is
dropped. A hit must contain every query word (``word*`` matches a prefix; a compound word such
as ``dead-groups`` that is not indexed as a whole must match all its parts); hits are ranked by
BM25 (k1 = 1.2, b = 0.75).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
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
_K1 = 1.2
_B = 0.75
_WORD = re.compile(r"[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _stem(token: str) -> str:
    if len(token) > 4 and token.endswith("ies"):
        return token[:-3] + "y"
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def tokenize(text: str) -> list[str]:
    """Lower-case search tokens of ``text`` (see the module docstring for the rules)."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        word = match.group(0)
        whole = _stem(word.lower())
        out.append(whole)
        pieces = [p for chunk in re.split(r"[._-]", word) for p in (_PART.findall(chunk) or [chunk])]
        if len(pieces) > 1:
            out.extend(_stem(p.lower()) for p in pieces if p)
            out.extend(_stem(chunk.lower()) for chunk in re.split(r"[._-]", word) if chunk and chunk != word)
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
    parts = [entry.text, entry.kind.replace("_", " "), entry.version or "", entry.domain, entry.skill or "",
             " ".join(entry.tags), *_strings(entry.data)]
    return tokenize(" ".join(parts))


def list_entries(ws: Workspace, kind: str | None = None, *, skill: str | None = None,
                 version: str | None = None, domain: str | None = None) -> list[MemoryEntry]:
    """Entries in memory, oldest first, optionally only one kind, skill, version or domain."""
    if kind is not None:
        kind = EntryKind.parse(kind).value
    return [e for e in MemoryStore(ws.git).entries()
            if (kind is None or e.kind == kind) and (skill is None or e.skill == skill
                                                     or (e.skill is None and skill in _skills_named(e)))
            and (version is None or e.version == version) and (domain is None or e.domain == domain)]


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
        raise InvalidMemory(f"memory entry id: expected at least 4 characters of an id like m1a2b…, actually: {ref!r}",
                            fix="`evotree memory list` shows the ids")
    matches = sorted(i for i in store.ids() if i.startswith(ref))
    if not matches:
        raise InvalidMemory(f"no memory entry with id {ref!r}", fix="`evotree memory list` shows the ids", id=ref)
    if len(matches) > 1:
        raise InvalidMemory(f"memory entry id {ref!r} is ambiguous: {', '.join(matches[:5])}",
                            fix="give more characters of the id", id=ref)
    found = store.get(matches[0])
    assert found is not None
    return found


@dataclass
class SearchHit:
    """One search result: the entry, its BM25 score, and the query terms it matched."""

    entry: MemoryEntry
    score: float
    matched: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"score": round(self.score, 6), "matched": self.matched, "entry": self.entry.to_dict()}


def search_entries(entries: list[MemoryEntry], text: str, *, limit: int | None = None) -> list[SearchHit]:
    """Rank ``entries`` against the query ``text`` (every term must match; BM25)."""
    wanted: list[tuple[str, bool, list[str]]] = []  # (whole token, is_prefix, its parts)
    for raw in (t for t in re.split(r"\s+", (text or "").strip()) if t):
        prefix = raw.endswith("*")
        words = _WORD.findall(raw.rstrip("*"))
        for k, word in enumerate(words):
            is_prefix = prefix and k == len(words) - 1
            tokens = tokenize(word)
            wanted.append((tokens[0], is_prefix, list(dict.fromkeys(tokens[1:]))))
    if not wanted:
        raise InvalidMemory(f"search: expected words to search for, actually: {text!r}",
                            fix='e.g. evotree memory search "dead groups"')
    docs = [Counter(_document(e)) for e in entries]
    lengths = [sum(d.values()) for d in docs]
    n = len(docs)
    avg = (sum(lengths) / n) if n else 0.0
    postings: dict[str, list[int]] = {}
    for i, doc in enumerate(docs):
        for token in doc:
            postings.setdefault(token, []).append(i)
    vocabulary = sorted(postings)
    # each term: (label, the tokens that count as it). A compound word not indexed as a whole
    # ("dead-groups") must match all of its parts instead.
    terms: list[tuple[str, list[str]]] = []
    for whole, prefix, parts in wanted:
        if prefix:
            terms.append((whole, [t for t in vocabulary if t.startswith(whole)]))
        elif whole in postings or not parts:
            terms.append((whole, [whole] if whole in postings else []))
        else:
            terms.extend((part, [part] if part in postings else []) for part in parts)
    expanded = [group for _, group in terms]
    hits = []
    candidate_sets = [set().union(*(postings[t] for t in group)) if group else set() for group in expanded]
    matching = set.intersection(*candidate_sets) if candidate_sets else set()
    for i in matching:
        score = 0.0
        matched = []
        for token, group in terms:
            hit = False
            for t in group:
                tf = docs[i].get(t, 0)
                if not tf:
                    continue
                hit = True
                df = len(postings[t])
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * lengths[i] / (avg or 1)))
            if hit:
                matched.append(token)
        hits.append(SearchHit(entry=entries[i], score=score, matched=matched))
    hits.sort(key=lambda h: (-h.score, h.entry.created_at, h.entry.id))
    return hits[:limit] if limit is not None else hits


def search(ws: Workspace, text: str, *, limit: int | None = 20, kind: str | None = None) -> list[SearchHit]:
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
        return {"skill": self.skill, "domains": self.domains,
                "verified_across_domains": self.verified_across_domains,
                "verifications": self.verifications, "significant": self.significant,
                "negative": self.negative, "per_domain": self.per_domain}

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
            row = rows.setdefault(entry.domain, {"domain": entry.domain, "verifications": 0, "significant": 0,
                                                 "best_delta": None, "versions": [], "imported": False,
                                                 "workspaces": []})
            row["verifications"] += 1
            row["significant"] += int(entry.significant)
            delta = entry.data.get("delta")
            if isinstance(delta, (int, float)) and (row["best_delta"] is None or delta > row["best_delta"]):
                row["best_delta"] = delta
            if entry.version and entry.version not in row["versions"]:
                row["versions"].append(entry.version)
            if entry.workspace not in row["workspaces"]:
                row["workspaces"].append(entry.workspace)
            row["imported"] = row["imported"] or entry.origin is not None
        domains = sorted(d for d, r in rows.items() if r["significant"] > 0)
        verifications = sum(r["verifications"] for r in rows.values())
        out.append(SkillStatus(skill=skill, domains=domains, verified_across_domains=len(domains) >= MIN_DOMAINS,
                               verifications=verifications, significant=sum(r["significant"] for r in rows.values()),
                               negative=negatives.get(skill, 0),
                               per_domain=[rows[d] for d in sorted(rows)]))
    return out


def skill_status(ws: Workspace) -> list[SkillStatus]:
    """Per skill: domains with significant gains and whether it is verified across domains."""
    return skill_status_of(MemoryStore(ws.git).entries())
