"""Reads of a task repository's base tree: the text of its files, and which texts, lines and
pieces they hold (split off :mod:`evotree.harness.audit.future_content` on its seam).

The provenance index leaves out what the base already holds (a subject an issue file quotes, a
line of the base's code, a piece of one); the replay's rotation keeps the base's own words
(:func:`evotree.harness.audit.replay_rotate.base_words`). Both read the base through
:func:`base_texts`: text files only (binary files, submodules and files over 4 MB skipped),
decoded as UTF-8 with replacements.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["base_texts"]

#: a word of a lower-cased text: what :func:`_in_tree` looks a text up by
_WORD = re.compile(r"[a-z0-9]+")


def _at_lines(
    repo: Any, base: str, wanted: dict[tuple[int, str], list[str]]
) -> set[tuple[int, str]]:
    """Which (N, text) of ``wanted`` a text file of ``base``'s tree holds as its line N
    (stripped): one pass over the base's lines, each looked up by its text."""
    numbers: dict[str, set[int]] = {}
    for n, text in wanted:
        numbers.setdefault(text, set()).add(n)
    found: set[tuple[int, str]] = set()
    for blob in base_texts(repo, base):
        for n, line in enumerate(blob.split("\n"), 1):
            want = numbers.get(line.strip())
            if want and n in want:
                found.add((n, line.strip()))
    return found


def base_texts(repo: Any, base: str) -> Iterable[str]:
    """The text of every text file of ``base``'s tree (binary files, submodules and files over
    4 MB skipped), decoded as UTF-8 with replacements: one walk both the provenance index and
    the replay's rotation read the base through."""
    import pygit2

    stack = [repo.revparse_single(base).peel(pygit2.Commit).tree]
    while stack:
        tree = stack.pop()
        for entry in tree:
            if entry.type_str == "tree":
                stack.append(repo[entry.id])
                continue
            if entry.type_str != "blob" or entry.filemode == pygit2.GIT_FILEMODE_COMMIT:
                continue
            blob = repo[entry.id]
            if blob.size > 4_000_000 or blob.is_binary:
                continue
            yield blob.data.decode("utf-8", "replace")


def _in_tree(repo: Any, base: str, texts: Sequence[str], lines: Iterable[str] = ()) -> set[str]:
    """Which of ``texts`` occur inside the text files of ``base``'s tree, and which of ``lines``
    equal a stripped line of them. One pass over the base's blobs (binary files and files over
    4 MB skipped); each text is looked for (as a substring) only in the blobs holding its longest
    word, so the cost grows with the size of the base, not with the number of texts."""

    by_word: dict[str, list[str]] = {}
    for text in texts:
        words = _WORD.findall(text.lower())
        if words:
            by_word.setdefault(max(words, key=len), []).append(text)
    wanted = set(lines)
    found: set[str] = set()
    if not by_word and not wanted:
        return found
    keys = set(by_word)
    for text in base_texts(repo, base):
        if wanted:
            found |= wanted.intersection(map(str.strip, text.split("\n")))
        if keys:
            for word in keys.intersection(_WORD.findall(text.lower())):
                found.update(t for t in by_word[word] if t in text)
    return found


def _pieces_in_tree(repo: Any, base: str, pieces: set[str], width: int) -> set[str]:
    """Which of ``pieces`` (each ``width`` characters: the index's ``PIECE``) occur in the text
    files of ``base``'s tree (binary files and files over 4 MB skipped): one slide over each
    blob, each once."""
    import pygit2

    found: set[str] = set()
    seen: set[Any] = set()
    stack = [repo.revparse_single(base).peel(pygit2.Commit).tree]
    while stack:
        tree = stack.pop()
        for entry in tree:
            if entry.type_str == "tree":
                stack.append(repo[entry.id])
                continue
            if entry.type_str != "blob" or entry.filemode == pygit2.GIT_FILEMODE_COMMIT:
                continue
            if entry.id in seen:
                continue
            seen.add(entry.id)
            blob = repo[entry.id]
            if blob.size > 4_000_000 or blob.is_binary:
                continue
            text = blob.data.decode("utf-8", "replace")
            found |= pieces.intersection(map(text.__getitem__, _slices(len(text), width)))
    return found


def _slices(n: int, width: int) -> Iterable[slice]:
    """The ``width``-character windows of a text of ``n`` characters."""
    return map(slice, range(n - width + 1), range(width, n + 1))
