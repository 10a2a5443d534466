"""What relates a hidden file to the code the task's future changes (the leak audit's record rule).

In a hidden folder where a file holds the future, a file holding none of it is the tool's
record (a run's metadata, a sitemap) unless it relates to the changed code: a line of any
version of a changed file, or a word of the changed lines, their function or the names the
changed files define, in the text or any decoded view (:func:`relates`). What cannot be told
(no word to tell by, a changed file too big or binary to read) relates: the rule fails closed.
The caller (:mod:`evotree.harness.audit.future_content`) drops a record's lines from the
provenance index. Three red teams (session 18) shaped it: their tests are
``tests/test_redteam_s18_records*_redteam.py``.
"""

from __future__ import annotations

import builtins
import keyword
import re
from collections.abc import Sequence
from pathlib import Path

from evotree.harness.audit.content_views import _undone, decoded_views
from evotree.harness.audit.repo_objects import run_git

__all__ = ["changed_code", "relates"]

_ALNUM = re.compile(r"[A-Za-z0-9]")


#: words too common to relate a file to the code a fix changes (English, Python's own, and the
#: generic names any program and any tool's record hold), compared lowercased
_COMMON_WORDS = frozenset(
    w.lower()
    for w in {
        *keyword.kwlist,
        *dir(builtins),
        *"the and for with from that this not are was but all any can has have had its".split(),
        *"into out one two new old use used get set via per may will when then than".split(),
        *"self cls args kwargs true false none null main test tests".split(),
        *"name file path time date data value type list item line text size count index".split(),
        *"start stop end key keys result status user source version default run runs".split(),
    }
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
#: a name a program defines: a function, a class, a module's constant
_DEFINED = re.compile(
    r"\b(?:def|class|fn|func|function|struct|enum|interface)\s+([A-Za-z_]\w*)|^([A-Z][A-Z0-9_]{2,})\s*[:=]",
    re.M,
)
#: a run of hex digits long enough to hold text (an idea written as hex)
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")


def _parts(text: str) -> set[str]:
    """The lowercased parts (4+ characters) of every identifier in ``text``, split at ``_``
    and at a case change (``WINTER_FEED_RATE``, ``winter_feed_rate`` and ``winterFeedRate``
    share ``winter``, ``feed``, ``rate``), common words left out."""
    out: set[str] = set()
    for word in _WORD.findall(text):
        for part in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", word):
            if len(part) >= 4:
                out.add(part.lower())
        if len(word) >= 4:
            out.add(word.lower())
            joined = word.replace("_", "").lower()  # lb_to_kg and lbToKg are one name
            if len(joined) >= 4 and ("_" in word or word != word.lower()):
                out.add(joined)
    return out - _COMMON_WORDS


def _more_views(text: str) -> list[str]:
    """``text`` decoded in the other ways a file may hold an idea's text: runs of hex digits
    (``0x41, 0x42`` arrays too), rot13, base32, ascii85/base85, uuencoded lines and ``\\uXXXX``
    escapes (what :func:`decoded_views` and ``_undone`` do not undo)."""
    import base64
    import binascii
    import codecs
    import json

    views = [codecs.decode(text, "rot13")]
    hexed = re.sub(r"0x([0-9A-Fa-f]{2})\s*,?\s*", r"\1", text)
    for m in _HEX_RUN.finditer(hexed):
        views.append(bytes.fromhex(m[0]).decode("utf-8", "replace"))
    for m in re.finditer(r"[A-Z2-7=\s]{16,}", text):
        run = re.sub(r"\s", "", m[0])
        try:
            views.append(base64.b32decode(run + "=" * (-len(run) % 8)).decode("utf-8", "replace"))
        except (ValueError, binascii.Error):
            pass
    for decode in (base64.a85decode, base64.b85decode):
        for m in re.finditer(r"\S{20,}", text):
            try:
                views.append(decode(m[0].strip("<~>")).decode("utf-8", "replace"))
            except (ValueError, binascii.Error):
                pass
    uu = []
    for line in text.splitlines():
        try:
            uu.append(binascii.a2b_uu(line))
        except binascii.Error:
            continue
    if uu:
        views.append(b"".join(uu).decode("utf-8", "replace"))
    if "\\u" in text:
        try:
            views.append(json.loads('"' + text.replace('"', '\\"').replace("\n", "\\n") + '"'))
        except ValueError:
            views.append(re.sub(r"\\u([0-9A-Fa-f]{4})", lambda m: chr(int(m[1], 16)), text))
    return views


def changed_code(
    stores: Sequence[tuple[Path, list[str]]], short: tuple[int, int], limit: int
) -> tuple[set[str], set[str]]:
    """What a copy, a variant or a rewrite of the code the future changes would hold: the lines
    (stripped, of :data:`SHORT_LINE` characters and :data:`SHORT_ALNUM` letters or digits) of
    every version, before and after, of every file the future ``stores``' commits change
    (``short``: the least characters and letters or digits of a line kept), and the words
    (:func:`_parts`) of the lines the future adds or removes, of git's hunk header and of the
    names every version of a changed file defines. One ``git log -p -U0`` per store; blobs
    over ``limit`` bytes and binary ones are read for nothing: then, or with no word left,
    every file relates (the second set is empty)."""
    import pygit2

    found: set[str] = set()
    words: set[str] = set()
    unread = False  # a changed file the words cannot be read from (too big, binary)
    for gitdir, commits in stores:
        out = run_git(
            gitdir,
            "log",
            "--no-walk=unsorted",
            "--stdin",
            "-p",
            "-U0",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--diff-merges=first-parent",
            "--no-renames",
            "--format=%x01%H",
            stdin=("\n".join(commits) + "\n").encode(),
        )
        try:
            repo = pygit2.Repository(str(gitdir), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        except (pygit2.GitError, KeyError):
            continue
        changed: dict[str, set[str]] = {}
        paths: set[str] = set()
        for line in out.decode("utf-8", "replace").split("\n"):
            if line.startswith("\x01"):
                paths = changed.setdefault(line[1:], set())
            elif line.startswith("diff --git ") or line.startswith(("--- ", "+++ ")):
                if line.startswith(("--- a/", "+++ b/")):
                    paths.add(line[6:])
            elif line.startswith("@@"):
                words |= _parts(line.split("@@", 2)[-1])
            elif line[:1] in ("+", "-"):
                words |= _parts(line[1:])
        for commit_id, paths in changed.items():
            try:
                commit = repo[commit_id].peel(pygit2.Commit)
                trees = [commit.tree, *(parent.tree for parent in commit.parents)]
            except (KeyError, ValueError, pygit2.GitError):
                continue
            for tree in trees:
                for rel in paths:
                    try:
                        obj = tree[rel]
                    except (KeyError, ValueError):
                        continue
                    if not isinstance(obj, pygit2.Blob):
                        continue
                    if obj.size > limit or obj.is_binary:
                        unread = True
                        continue
                    whole = obj.data.decode("utf-8", "replace")
                    for raw in whole.splitlines():
                        text = raw.strip()
                        if len(text) >= short[0] and len(_ALNUM.findall(text)) >= short[1]:
                            found.add(text)
                    # the names the changed file defines (git's hunk header may not name the
                    # function a change lies in: a method, a change at module level)
                    for m in _DEFINED.finditer(whole):
                        words |= _parts(m[1] or m[2])
    if unread or not words:
        return found, set()  # nothing (or not all) to tell a record by: every file relates
    return found, words


def relates(text: str, lines: set[str], words: set[str]) -> bool:
    """Whether a hidden file's ``text`` relates to the code the future changes: it holds a
    line of a version of a changed file (as written, as a patch's ``+``/``-``/context line, or
    inside a JSON or Python string: a notebook's cell), or a word of the lines the future
    changes, of the function they lie in or of a name a changed file defines (compared by
    parts, lowercased: a rewrite, a port to another language in another case, a test of the
    function, a config of the constant), in the text or in it decoded (escapes, entities,
    base64, hex, percent-encoding). A file with no word of three letters at all (a formula,
    values) cannot be told apart from an idea: it relates too. Such a file is never taken for
    a tool's record."""
    if not words or not _WORD.search(text):
        return True
    views = [*decoded_views(text), *_undone(text), *_more_views(text)]
    for view in views:
        for raw in view.splitlines():
            line = raw.strip()
            if line in lines or (raw[:1] in "+- " and raw[1:].strip() in lines):
                return True
            if line.startswith('"') and line.rstrip(",").endswith('"'):
                if line.rstrip(",")[1:-1].strip() in lines:
                    return True
        if not words.isdisjoint(_parts(view)):
            return True
    return False
