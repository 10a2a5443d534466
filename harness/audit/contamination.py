"""Contamination: how much of the hidden splits a version could have trained on.

Text is normalized (lower case; everything but letters and digits becomes a space; split at
spaces) and cut into word n-grams: **13-grams** for long documents and **8-grams** for short ones
(fewer than :data:`SHORT_WORDS` words: prompts), the sizes of the GPT-3 / Llama contamination
studies. A hidden document is *contaminated* when at least ``min_overlap`` (default 0.5) of its
n-grams occur in the training side; documents shorter than one 8-gram cannot be judged and are
counted apart (``too_short``).

Documents: each line of a ``.jsonl`` file (its string values joined), each element of a JSON
list (or value of a JSON object) — recursively, the innermost objects holding strings — and
each paragraph (blank-line separated) of other text. Hidden side: data files (not code) under
``[eval].judge_paths`` in the champion's tree, plus any files the caller names. Training side:
every text file of the version's commit outside the judge paths (the candidate's exported tree:
what its train phase can read), plus any files the caller names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from evotree.core.findings import Finding

__all__ = [
    "ContaminationResult",
    "normalize",
    "documents",
    "contamination",
    "SHORT_WORDS",
    "LONG_N",
    "SHORT_N",
    "tree_documents",
]

LONG_N = 13
SHORT_N = 8
#: A document with fewer words than this is a "short prompt" and uses 8-grams.
SHORT_WORDS = 64
_WORD = re.compile(r"[^0-9a-z]+")
_DATA_EXT = frozenset(
    {
        ".json",
        ".jsonl",
        ".txt",
        ".csv",
        ".tsv",
        ".md",
        ".jsonl.txt",
        ".yaml",
        ".yml",
        ".xml",
        ".html",
        ".tex",
        ".rst",
        ".ndjson",
        "",
    }
)
_MAX_FILE = 32 * 1024 * 1024
#: Bytes read per side at most; beyond it the check reports ``truncated`` (a partial answer).
MAX_BYTES = 512 * 1024 * 1024
_EXAMPLES = 5


def normalize(text: str) -> list[str]:
    """Lower-cased words of ``text`` (letters and digits only)."""
    return _WORD.sub(" ", text.lower()).split()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _json_docs(value: Any) -> Iterator[str]:
    """Innermost containers of strings become one document each."""
    if isinstance(value, list) and value and all(isinstance(v, (dict, list)) for v in value):
        for v in value:
            yield from _json_docs(v)
    elif (
        isinstance(value, dict)
        and value
        and all(isinstance(v, (dict, list)) for v in value.values())
    ):
        for v in value.values():
            yield from _json_docs(v)
    elif (
        isinstance(value, list)
        and value
        and all(isinstance(v, str) for v in value)
        and len(value) > 1
    ):
        yield from value  # a list of prompts
    else:
        text = " ".join(_strings(value))
        if text:
            yield text


def documents(name: str, data: bytes) -> list[str]:
    """The documents of one file (module doc). Binary files have none."""
    if b"\x00" in data[:8192]:
        return []
    text = data.decode("utf-8", errors="replace")
    suffix = PurePosixPath(name).suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        docs = []
        for line in text.splitlines():
            if not line.strip():
                continue
            try:
                docs.append(" ".join(_strings(json.loads(line))))
            except ValueError:
                docs.append(line)
        return docs
    if suffix == ".json":
        try:
            return list(_json_docs(json.loads(text)))
        except ValueError:
            pass
    return [p for p in re.split(r"\n\s*\n", text) if p.strip()]


@dataclass
class ContaminationResult:
    """Overlap of the hidden documents with the training side."""

    hidden_files: int = 0
    train_files: int = 0
    hidden_docs: int = 0
    checked: int = 0
    too_short: int = 0
    contaminated: int = 0
    min_overlap: float = 0.5
    max_overlap: float = 0.0
    truncated: bool = False
    examples: list[dict[str, Any]] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.contaminated / self.checked if self.checked else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "hidden_files": self.hidden_files,
            "train_files": self.train_files,
            "hidden_docs": self.hidden_docs,
            "checked": self.checked,
            "too_short": self.too_short,
            "contaminated": self.contaminated,
            "rate": self.rate,
            "min_overlap": self.min_overlap,
            "max_overlap": round(self.max_overlap, 4),
            "long_n": LONG_N,
            "short_n": SHORT_N,
            "short_words": SHORT_WORDS,
            "truncated": self.truncated,
            "examples": self.examples,
        }

    def findings(self, *, version: str | None = None) -> list[Finding]:
        """``audit.contamination`` (high) when any hidden document is contaminated; an info when
        nothing could be checked."""
        if self.contaminated:
            return [
                Finding(
                    layer="audit",
                    code="audit.contamination",
                    severity="high",
                    title=f"{self.contaminated} of {self.checked} hidden documents appear in what the version trains on "
                    f"({self.rate:.1%}, >= {self.min_overlap:.0%} of their n-grams)",
                    evidence=self.to_dict(),
                    version=version,
                    suggestion="remove the hidden examples from the training data (or move them out of the hidden "
                    "split) and re-run",
                )
            ]
        if not self.checked and self.hidden_files:
            return [
                Finding(
                    layer="audit",
                    code="audit.contamination_unchecked",
                    severity="info",
                    title="no hidden document long enough for an n-gram check",
                    evidence=self.to_dict(),
                    version=version,
                )
            ]
        return []


def _grams(words: Sequence[str], n: int) -> set[int]:
    return {hash(" ".join(words[i : i + n])) for i in range(len(words) - n + 1)}


def contamination(
    train_docs: Iterable[str], hidden_docs: Iterable[tuple[str, str]], *, min_overlap: float = 0.5
) -> ContaminationResult:
    """Overlap of ``hidden_docs`` ((source, text) pairs) with ``train_docs`` (module doc)."""
    if not 0 < min_overlap <= 1:
        raise ValueError(f"min_overlap must be in (0, 1], actually: {min_overlap!r}")
    long_set: set[int] = set()
    short_set: set[int] = set()
    for doc in train_docs:
        words = normalize(doc)
        if len(words) >= SHORT_N:
            short_set |= _grams(words, SHORT_N)
        if len(words) >= LONG_N:
            long_set |= _grams(words, LONG_N)
    result = ContaminationResult(min_overlap=min_overlap)
    for source, doc in hidden_docs:
        result.hidden_docs += 1
        words = normalize(doc)
        if len(words) < SHORT_N:
            result.too_short += 1
            continue
        n, pool = (SHORT_N, short_set) if len(words) < SHORT_WORDS else (LONG_N, long_set)
        grams = _grams(words, n)
        overlap = sum(g in pool for g in grams) / len(grams)
        result.checked += 1
        result.max_overlap = max(result.max_overlap, overlap)
        if overlap >= min_overlap:
            result.contaminated += 1
            if len(result.examples) < _EXAMPLES:
                result.examples.append(
                    {
                        "source": source,
                        "n": n,
                        "overlap": round(overlap, 4),
                        "text": " ".join(words[:30]),
                    }
                )
    return result


def _in(path: str, roots: Sequence[str]) -> bool:
    for root in roots:
        clean = root.strip("/")
        if clean and (path == clean or path.startswith(clean + "/")):
            return True
    return False


def tree_documents(
    repo: Any,
    tree: Any,
    *,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    data_only: bool = False,
    max_bytes: int = MAX_BYTES,
) -> tuple[int, list[tuple[str, str]], bool]:
    """(files read, (path, document) pairs, truncated) of a pygit2 tree: files under ``include``
    (all when None), not under ``exclude``; ``data_only`` skips code files (by extension);
    files over 32 MB are skipped and reading stops after ``max_bytes`` (truncated = True)."""
    import pygit2

    files = 0
    total = 0
    truncated = False
    docs: list[tuple[str, str]] = []
    stack = [("", tree)]
    while stack:
        prefix, node = stack.pop()
        for entry in node:
            path = f"{prefix}{entry.name}"
            if entry.type_str == "tree":
                stack.append((path + "/", repo[entry.id]))
                continue
            if entry.type_str != "blob" or entry.filemode == pygit2.GIT_FILEMODE_LINK:
                continue
            if include is not None and not _in(path, include):
                continue
            if _in(path, exclude):
                continue
            if data_only and PurePosixPath(path).suffix.lower() not in _DATA_EXT:
                continue
            blob = repo[entry.id]
            if blob.size > _MAX_FILE:
                truncated = True
                continue
            if total + blob.size > max_bytes:
                return files, docs, True
            total += blob.size
            found = documents(path, blob.data)
            if found:
                files += 1
                docs += [(path, d) for d in found]
    return files, docs, truncated
