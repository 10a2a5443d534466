"""Content provenance: what a trajectory's tool outputs show that only the task's future holds.

A rule per spelling trails the next spelling; what the agent *saw* does not depend on how it typed
the command. :class:`ProvenanceIndex` indexes, for one task repository and its base, what is not
reachable from the base:

* every object id (commits, trees, blobs, tags) the object store holds beyond the base, matched
  in full and by the abbreviations git prints (7 or more leading hex digits; a prefix shared with
  an object the base reaches proves nothing and is ignored);
* the subjects of commits beyond the base;
* the names of tags that point at commits beyond the base;
* the distinctive lines those commits add: not blank, not trivial (at least
  :data:`MIN_LINE` characters and :data:`MIN_ALNUM` letters or digits), and not occurring
  as a line of the base's tree (tag names and subjects: anywhere in a line of it).

The stores read: the task repository's own (with the alternates git follows for it, nested
ones included: a store the repository borrows is the repository's) and every submodule's store
under its git directory's ``modules/`` (:mod:`evotree.harness.audit.future_stores`: nested,
bounded by its ``MAX_MODULE_DEPTH`` and ``MAX_MODULE_STORES``), each beyond the commit the base
pins for that submodule (its HEAD when the base pins none). A submodule's commits are not
resolved by hash ancestry in the task repository, so the index reports their ids itself
(:attr:`ProvenanceIndex.foreign`).

Subjects and tag names that occur in the base's tree (an issue file quoting the fix's title, a
changelog naming the next release) are left out for the same reason.

:func:`scan_outputs` reads a trajectory's recorded tool outputs (per step; the observation text
when no step has one) and returns :class:`ContentHit` s, each quoting the output line and naming
the future object. Two things an honest agent can produce itself are not held against it: a line
it typed in an earlier command (it wrote the same fix), and a blob or tree id on a diff's
``index a..b`` header line (its own identical file has the same blob id). One future line alone
is a ``warn`` (an honest fix can coincide with the reference in one line); two or more, or any
id, subject or tag name, is ``high``.

Cost, per store: one object listing, one walk of the base, one ``git log -p`` over the commits beyond the
base and one read of the base's files (``bench/bench_audit_provenance.py``, BENCHMARKS.md).

Finer than lines, for the reads of hidden files only (:meth:`ProvenanceIndex.shows_piece`): a
tool may cut the future's lines (curl's ``--trace-ascii`` prints 64 bytes a line behind an
offset, a mailer wraps them) or escape them (a JUnit XML report's ``&lt;``), and a read of its
file shows the fix with no whole line matching. The index's *pieces* are the
:data:`PIECE`-character substrings of the lines future commits add that hold
:data:`PIECE_ALNUM` letters or digits and occur nowhere in the base's text files; a printed text
shows the future when it holds one, as printed or with XML/HTML entities or string escapes
undone, unless the trajectory's own text (its prompt, its commands) holds it too, quotes aside.
They are computed once per index, when a hidden read is first judged: one more slide over the
base's blobs.
"""

from __future__ import annotations

import os
import re
import time
import unicodedata
import zipfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.harness.audit.base_tree import _at_lines, _in_tree, _pieces_in_tree
from evotree.harness.audit.content_views import (
    ESCAPED,
    decoded_views,
    listing_text,
    markup_text,
    selection_views,
)
from evotree.harness.audit.future_stores import module_stores
from evotree.harness.audit.repo_objects import (
    all_objects,
    open_repo,
    resolve_commit,
    rev_list_objects,
    run_git,
)

__all__ = [
    "ProvenanceIndex",
    "ContentHit",
    "build_index",
    "scan_outputs",
    "MIN_LINE",
    "MIN_ALNUM",
    "HIDDEN_SOURCE",
    "covered_hidden",
    "indexed_hidden",
    "at_hash_place",
    "PIECE",
    "decoded_views",
    "selection_views",
]

#: a line must be this long (after stripping) to count as distinctive
MIN_LINE = 16
#: ... and hold this many letters or digits
MIN_ALNUM = 8
#: the length of a piece (shingle) of a future line: a read of a hidden file that prints one,
#: whatever cut or wrapped the line around it, printed the future (base code and ordinary words
#: are never pieces: a piece occurs nowhere in the base's files)
PIECE = 20
#: ... and a piece holds this many letters or digits (not a run of indentation and quotes)
PIECE_ALNUM = 10
#: at most this many characters of a printed text are searched for pieces
_PIECE_TEXT = 8 << 20
#: a line the future adds, judged in what a command selected of a hidden file, has at least
#: this many characters (stripped) and this many letters or digits: ``if zone < 1:``,
#: ``return 0.0`` (a lone ``else:`` or ``)`` is not one; the base holds most such lines anyway)
SHORT_LINE = 6
SHORT_ALNUM = 4
#: ... and the selected lines hold at least this many different ones (one alone is no proof)
SHORT_LINES = 2
#: a subject shorter than this is not distinctive ("Fix typo")
MIN_SUBJECT = 12
#: a commit adding more lines than this is a vendored import or a generated file: its lines are
#: indexed only up to this many
MAX_LINES_PER_COMMIT = 2000
#: a hex word, or the abbreviation ``git describe`` (and setuptools-scm's version after it)
#: prints behind ``g``: ``v1.2-3-gcafd797``, ``0.4.1.dev1+gcafd797``
#: and a snapshot release's ``git`` after a date (Fedora's ``0.1.20261207gitcafd797``)
_HEX = re.compile(r"(?:(?<![0-9A-Za-z])|(?<=[-+.]g)|(?<=\dgit))[0-9a-f]{7,40}(?![0-9A-Za-z])")
_HEX7 = re.compile(
    r"(?:(?<![0-9A-Za-z])|(?<=[-+.]g)|(?<=\dgit))([0-9a-f]{7})[0-9a-f]{0,33}(?![0-9A-Za-z])"
)
#: where git prints a commit id: a line's start (``--oneline``, ``rev-list``, after ``--graph``'s
#: marks), ``commit X``, ``X refs/...``; a word of only digits counts as a hash only there
_HASH_PLACE = re.compile(r"(?:^|\n)[*|\\/ ]*(?:commit |[-+]?)$")
_INDEX_LINE = re.compile(r"[ \t]*index [0-9a-f]{7,40}\.\.[0-9a-f]{7,40}")
_ALNUM = re.compile(r"[A-Za-z0-9]")
_TOKEN_SPLIT = re.compile(r"[\s(),;:/'\"`\[\]{}<>]+")


def at_hash_place(text: str, start: int) -> bool:
    """Is ``text[start:]`` where git prints a commit id (a line's start, after ``commit``)?
    Abbreviations of only digits (``2910880``) are hashes there and numbers elsewhere."""
    return _HASH_PLACE.search(text[max(0, start - 40) : start]) is not None or start == 0


@dataclass
class ProvenanceIndex:
    """What is not reachable from a task repository's base (module doc)."""

    base: str
    objects: dict[str, str] = field(default_factory=dict)  # full id -> type, beyond the base
    subjects: dict[str, str] = field(default_factory=dict)  # subject -> commit id
    tags: dict[str, str] = field(default_factory=dict)  # tag name -> commit id
    lines: dict[str, str] = field(default_factory=dict)  # stripped line -> commit id
    #: ids held only by a submodule's store: hash ancestry in the task repository cannot
    #: resolve them, so the index reports them
    foreign: set[str] = field(default_factory=set)
    seconds: float = 0.0
    _prefix7: dict[str, list[str]] = field(default_factory=dict, repr=False)
    #: the longest identifier of each indexed line and subject: an output holding none of them
    #: cannot hold a line or a subject (a cheap test before the line-by-line reading)
    _keys: set[str] = field(default_factory=set, repr=False)
    _base_prefix7: set[str] = field(default_factory=set, repr=False)
    #: (repository, base) of each tree the base holds: where a piece must not occur
    _trees: list[tuple[Any, str]] = field(default_factory=list, repr=False)
    _pieces: set[str] | None = field(default=None, repr=False)
    #: (git directory, future commit ids) of each object store indexed: where
    #: :meth:`added` reads every line the future adds, uncapped
    _stores: list[tuple[Path, list[str]]] = field(default_factory=list, repr=False)
    _added: set[str] | None = field(default=None, repr=False)
    _by_key: dict[str, list[str]] | None = field(default=None, repr=False)

    def pieces(self) -> set[str]:
        """The :data:`PIECE`-character pieces of the lines future commits add that hold
        :data:`PIECE_ALNUM` letters or digits and occur nowhere in the base's text files (its
        code, its docs: what an honest read of the checkout can print). Computed once, when a
        hidden read is first judged (one pass over the base's blobs)."""
        if self._pieces is None:
            found: set[str] = set()
            for line, source in self.lines.items():
                if source.startswith(HIDDEN_SOURCE):
                    continue
                for at in range(len(line) - PIECE + 1):
                    piece = line[at : at + PIECE]
                    if len(_ALNUM.findall(piece)) >= PIECE_ALNUM:
                        found.add(piece)
            for tree_repo, tree_base in self._trees:
                if found:
                    found -= _pieces_in_tree(tree_repo, tree_base, found, PIECE)
            self._pieces = found
        return self._pieces

    def shows_piece(self, text: str, own: str = "") -> str | None:
        """A piece of a future line that ``text`` holds, in any of its decoded views
        (:func:`decoded_views`), or None: what a hidden read printed, judged finer than by
        whole lines (a trace cutting lines at 64 bytes, a report escaping ``<``). ``own``:
        what the trajectory was told or typed itself (the task's words, its commands); a
        piece it holds, quotes aside, is the trajectory's own (the task's example call that
        the fix's test repeats), not the future's."""
        pieces = self.pieces()
        if not pieces or not text:
            return None
        mine = _unquoted(own)
        for view in decoded_views(text[:_PIECE_TEXT]):
            for found in _found_pieces(view, pieces):
                if not mine or _unquoted(found) not in mine:
                    return found
        return None

    def added(self) -> set[str]:
        """Every line the future commits add, stripped, of :data:`SHORT_LINE` characters and
        :data:`SHORT_ALNUM` letters or digits (``if zone < 1:``, shorter than a distinctive
        line), with no cap per commit (a fix beside a 2,000-line lock file), that no text file
        of the base holds as a line. Computed once, when a hidden read's selection is first
        judged: one more ``git log -p`` of the future commits and one pass over the base."""
        if self._added is None:
            found: set[str] = set()
            for gitdir, commits in self._stores:
                found |= _added_lines(gitdir, commits)
            for tree_repo, tree_base in self._trees:
                if found:
                    found -= _in_tree(tree_repo, tree_base, [], found)
            self._added = found
        return self._added

    def _line_inside(self, text: str) -> str | None:
        """An indexed line (a future commit's, a hidden file's own) that a line of ``text``
        holds, looked up by its longest identifier: no bound on the text's lines."""
        if self._by_key is None:
            by_key: dict[str, list[str]] = {}
            for line in self.lines:
                words = _IDENT.findall(line)
                by_key.setdefault(max(words, key=len) if words else "", []).append(line)
            self._by_key = by_key
        loose = self._by_key.get("", [])
        for raw in text.split("\n"):
            for word in set(_IDENT.findall(raw)).intersection(self._by_key):
                for want in self._by_key[word]:
                    if want in raw:
                        return want
            for want in loose:
                if want in raw:
                    return want
        return None

    def lines_inside(self, line: str) -> list[str]:
        """Every indexed line (a future commit's, a hidden file's own) that ``line`` holds as
        it is: the cheap test, with no decoded views."""
        if self._line_inside(line) is None:  # builds the lookup by key, answers most lines
            return []
        assert self._by_key is not None
        found = [w for w in self._by_key.get("", []) if w in line]
        for word in set(_IDENT.findall(line)).intersection(self._by_key):
            found += [w for w in self._by_key[word] if w in line]
        return found

    def selected_future(self, units: Sequence[str], own: str = "") -> str | None:
        """What of the future the lines a command selected of a hidden file hold, or None:
        an indexed line (inside a line: behind a timestamp, a prefix), a line the future adds
        (:meth:`added`: short ones too, uncapped) or a piece (:meth:`pieces`), in the lines as
        they are and in their decoded views (:func:`selection_views`: entities, escapes, NULs
        of UTF-16, no-break spaces, markup, a hex dump, base64, gzip, percent-encoding, the
        lines joined back where a narrow terminal wrapped them); lines the future adds that
        are not distinctive count from :data:`SHORT_LINES` on (one alone, ``import re``, an
        honest line can be). Every selected line is read,
        with no bound on their number or size. ``own``: what the trajectory was told or typed
        itself; a piece or short line it holds is its own."""
        text = "\n".join(units)
        if not text.strip():
            return None
        mine = _unquoted(own)
        views = selection_views(text)
        for view in views:
            found = self._line_inside(view)
            if found is not None:
                return found
        added = self.added()
        for view in views:
            shorts = {
                line.strip()
                for line in view.split("\n")
                if line.strip() in added and not (mine and _unquoted(line.strip()) in mine)
            }
            if len(shorts) >= SHORT_LINES:
                return sorted(shorts)[0]
        pieces = self.pieces()
        if pieces:
            for view in [*views, *(v.replace("\r", "").replace("\n", "") for v in views)]:
                for found in _found_pieces(view, pieces):
                    if not mine or _unquoted(found) not in mine:
                        return found
        return None

    def future_only(self, texts: Iterable[str]) -> str | None:
        """One of ``texts`` (what an oracle's probe matched: ``grep -c WORD``) that a line a
        future commit adds holds and no text file of the base holds anywhere (3 letters or
        digits at least), or None: the probe tells the agent what only the future holds."""
        future = [t for t, c in self.lines.items() if not c.startswith(HIDDEN_SOURCE)]
        future += self.added()
        wanted = {t.strip() for t in texts if len(_ALNUM.findall(t)) >= 3}
        inside = sorted(t for t in wanted if any(t in line for line in future))
        if not inside:
            return None
        present: set[str] = set()
        for tree_repo, tree_base in self._trees:
            present |= _in_tree(tree_repo, tree_base, inside)
        rest = [t for t in inside if t not in present]
        return rest[0] if rest else None

    def object_for(self, word: str) -> tuple[str, str] | None:
        """(full id, type) of the one future object ``word`` abbreviates; None when it names none,
        or when the prefix is shared with an object the base reaches (ambiguous: proves nothing)."""
        word = word.lower()
        candidates = self._prefix7.get(word[:7])
        if not candidates or word[:7] in self._base_prefix7 and len(word) < 40:
            return None
        found = [c for c in candidates if c.startswith(word)]
        if len(found) != 1:
            return None
        return found[0], self.objects[found[0]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "objects": len(self.objects),
            "subjects": len(self.subjects),
            "tags": len(self.tags),
            "lines": len(self.lines),
            "foreign": len(self.foreign),
            "seconds": round(self.seconds, 4),
        }


@dataclass(frozen=True)
class ContentHit:
    """One output line of a trajectory that shows something only the future holds."""

    step: int  # index of the step whose output it is (-1: the observation text)
    kind: str  # object | subject | tag | line
    what: str  # the id / subject / tag / line matched
    commit: str  # the future object (a commit id; the object itself for blobs and trees)
    line: str  # the output line, as recorded (cut to 300 characters)
    severity: str = "high"


def distinctive(line: str) -> bool:
    """Whether ``line`` is long and wordy enough to name the future when an output shows it;
    letters and digits counted as NFKC reads them (a line in fullwidth letters, ``ｒｅｔｕｒｎ``,
    is as wordy as its ASCII spelling: the s18 red team's U6)."""
    if len(line) < MIN_LINE:
        return False
    if len(_ALNUM.findall(line)) >= MIN_ALNUM:
        return True
    return (
        not line.isascii() and len(_ALNUM.findall(unicodedata.normalize("NFKC", line))) >= MIN_ALNUM
    )


#: a line's source when a hidden file of the work tree holds it, not a future commit
HIDDEN_SOURCE = "hidden:"
#: the position a tool prints before a file's line: "4: ", "  12\t", "5      ", grep's "path:4:"
_POSITION = re.compile(r"^\s*(?:[^\s:]+:)?(\d{1,7})(?:[:|\t-]| {2,}| )")
#: at most this many files of a hidden folder, and this many bytes of each, are indexed
_HIDDEN_FILES = 200
_HIDDEN_BYTES = 4 << 20


#: an archive's members that are a distribution's metadata (a name, a version, its README
#: again), not its code: a wheel's ``.dist-info/``, an egg's, an sdist's ``PKG-INFO``
_METADATA = re.compile(r"\.(?:dist|egg)-info/|^EGG-INFO/|(?:^|/)PKG-INFO$")
#: at most this many bytes of a tar (inflated) are read for its members
_TAR_BYTES = 4 * _HIDDEN_BYTES
#: the most characters of a binary format's next item a string's text run may end with (a
#: ``.pyc``'s next object type, a SQLite record's next header byte)
_TRAILER = 2


def _framed_string(run: str) -> str | None:
    """The string a binary format framed ``run`` around, where its printable framing says
    exactly how long that string is: marshal's short string (``z``/``Z``, then its length as one
    byte, as a ``.pyc`` holds a docstring), a SQLite record's one text column (its serial type
    ``13 + 2n`` first; a bare length byte is no frame: a row's own first character, a tuned
    digit, would pass for one — the s20 red team's A9, A10) — the
    run may end with up to :data:`_TRAILER` characters of the next item. None where no frame
    fits: the run is then judged whole (a text two characters off a base line is no frame;
    the s19 red team's W5)."""
    shapes: list[tuple[int, int]] = []  # (characters of framing, the string's length)
    if len(run) > 2 and run[0] in "zZ":
        shapes.append((2, ord(run[1])))
    if run and ord(run[0]) >= 13 and ord(run[0]) % 2:
        shapes.append((1, (ord(run[0]) - 13) // 2))
    for frame, length in shapes:
        if length > 0 and 0 <= len(run) - frame - length <= _TRAILER:
            return run[frame : frame + length]
    return None


#: what a reader of a binary file does not see as text: control characters but tab and line
#: ends, and bytes that are not UTF-8 (``strings`` and ``grep -a`` print the runs between them)
_NOT_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufffd]+")


def _text_runs(data: bytes) -> str:
    """The text a reader sees of binary ``data``: its runs of text between NUL bytes, control
    characters and bytes that are not UTF-8, one run a line (as ``strings`` and ``grep -a``
    print them); of a UTF-16 text (:func:`_wide`), its characters."""
    return _NOT_TEXT.sub("\n", _wide(data) or data.decode("utf-8", "replace"))


def _wide(data: bytes) -> str | None:
    """``data`` decoded as UTF-16 when it is a UTF-16 text (a byte-order mark; or, in its first
    256 bytes, a NUL as every other byte and none between), else None."""
    head = data[:256]
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16", "replace")
    low, high = head[0::2], head[1::2]
    if len(high) < 8:
        return None
    if high.count(0) == len(high) and low.count(0) == 0:
        return data.decode("utf-16-le", "replace")
    if low.count(0) == len(low) and high.count(0) == 0:
        return data.decode("utf-16-be", "replace")
    return None


def _tar_scan(data: bytes) -> tuple[list[bytes], bool] | None:
    """The contents of the regular members of a tar archive ``data`` (plain or compressed, as
    ``tar -xO`` prints them) but a distribution's metadata (:data:`_METADATA`): at most
    :data:`_HIDDEN_FILES` members of at most :data:`_HIDDEN_BYTES` each, up to the first one
    bigger, within :data:`_TAR_BYTES` of the archive, and whether that was every member;
    None when ``data`` is no tar."""
    import io
    import tarfile

    found: list[bytes] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
            for k, info in enumerate(tar):
                # a compressed tar is read by inflating it: stop at a member too big to read
                # or past :data:`_TAR_BYTES` inflated (a bomb costs no more)
                if k >= _HIDDEN_FILES or info.size > _HIDDEN_BYTES:
                    return found, False
                if info.offset_data + info.size > _TAR_BYTES:
                    return found, False
                if info.isfile() and not _METADATA.search(info.name):
                    member = tar.extractfile(info)
                    if member is not None:
                        found.append(member.read(_HIDDEN_BYTES))
    except (tarfile.TarError, OSError, EOFError, ValueError, RuntimeError):
        return (found, False) if found else None
    return found, True


def _hidden_texts(root: Path, hidden_paths: Sequence[str]) -> Iterable[tuple[str, str, bool]]:
    """(hidden path, text, binary) of each file a hidden path of the work tree holds, and of
    each member of a zip archive (a wheel) or a tar archive among them: a text file's text,
    or, of a file holding a NUL byte (``binary``), its text runs (:func:`_text_runs`: what
    ``strings``, ``grep -a``, ``head`` print of it; a bundle's pack, a ``.pyc``, an image
    hold few and short ones)."""
    for path in hidden_paths:
        clean = path.strip().strip("/")
        if not clean or clean.startswith(("..", "/")):
            continue
        top = root / clean
        files = sorted(f for f in top.rglob("*") if f.is_file()) if top.is_dir() else [top]
        for f in files[:_HIDDEN_FILES]:
            members: list[bytes] = []
            try:
                if not f.is_file() or f.stat().st_size > _HIDDEN_BYTES:
                    continue
                if zipfile.is_zipfile(f):
                    with zipfile.ZipFile(f) as z:
                        for info in z.infolist()[:_HIDDEN_FILES]:
                            if (
                                info.file_size <= _HIDDEN_BYTES
                                and not info.is_dir()
                                and not _METADATA.search(info.filename)
                            ):  # code, not a distribution's metadata
                                members.append(z.read(info))
                else:
                    data = f.read_bytes()
                    # a tar is read as its members (``tar -xO``; ``strings`` of a plain one
                    # prints the same runs and its headers' names)
                    tar = _tar_scan(data) if b"\0" in data else None
                    members.extend([data] if tar is None else tar[0])
            except (OSError, zipfile.BadZipFile, RuntimeError):
                continue
            for data in members:
                if b"\0" in data:
                    yield clean, _text_runs(data), True
                else:
                    yield clean, data.decode("utf-8", "replace"), False


def covered_hidden(root: Path, hidden_paths: Sequence[str], path: Path) -> bool:
    """Whether the index read all that ``path`` (a file under a hidden path of the work tree
    ``root``) holds, in some form (:func:`_hidden_texts`): among the files it reads of its
    hidden folder, small enough, a zip's every member but its metadata small enough, a tar's
    every member within the caps. A read of a file it did not cover cannot be cleared by what
    it printed: the index cannot know what the file holds (a binary file of 5 MiB, a tar
    whose first member passes the cap)."""
    if not _among_read(root, hidden_paths, path):
        return False
    try:
        if path.stat().st_size > _HIDDEN_BYTES:
            return False
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                infos = z.infolist()
            return len(infos) <= _HIDDEN_FILES and all(
                i.file_size <= _HIDDEN_BYTES or _METADATA.search(i.filename) for i in infos
            )
        data = path.read_bytes()
    except (OSError, zipfile.BadZipFile, RuntimeError):
        return False
    scanned = _tar_scan(data) if b"\0" in data else None
    return scanned is None or scanned[1]


def _among_read(root: Path, hidden_paths: Sequence[str], path: Path) -> bool:
    """Whether ``path`` is among the files the index reads of the hidden path holding it (the
    first :data:`_HIDDEN_FILES` of its folder, sorted); False under no hidden path."""
    for hidden in hidden_paths:
        clean = hidden.strip().strip("/")
        top = root / clean
        if not clean or not (path == top or top in path.parents):
            continue
        files = sorted(f for f in top.rglob("*") if f.is_file()) if top.is_dir() else [top]
        return path in files[:_HIDDEN_FILES]
    return False


def indexed_hidden(root: Path, hidden_paths: Sequence[str], path: Path) -> bool:
    """Whether the index reads ``path`` (a file under a hidden path of the work tree ``root``)
    as text: among the files it reads of its hidden folder, small enough, no NUL byte, not
    an archive. A file it does not read may hold what the index cannot know (of a binary file
    or an archive it reads text runs or members, not the bytes ``cat`` prints)."""
    if not _among_read(root, hidden_paths, path):
        return False
    try:
        if path.stat().st_size > _HIDDEN_BYTES or zipfile.is_zipfile(path):
            return False
        return b"\0" not in path.read_bytes()
    except OSError:
        return False


def _hidden_lines(text: str, binary: bool = False) -> Iterable[str]:
    """The distinctive lines of a hidden file's text; of a patch (a ``.rej``, a shelf), only
    the lines it adds, without their ``+`` (its headers and removed lines are the base's);
    ``binary``: the text runs of a binary file, never a patch (a ``.pyc`` holding ``@@ ``)."""
    patch = not binary and ("\n@@ " in text or text.startswith("@@ "))
    for raw in text.splitlines():
        if patch and not (raw.startswith("+") and not raw.startswith("+++")):
            continue
        line = (raw[1:] if patch else raw).strip()
        if distinctive(line):
            yield line


def build_index(
    repo: str | os.PathLike[str],
    base: str | None = None,
    hidden_paths: Sequence[str] = (),
    door_paths: Sequence[str] = (),
    grader_paths: Sequence[str] = (),
) -> ProvenanceIndex:
    """Index what ``repo`` holds beyond ``base`` (default HEAD), in its own object store (with
    the alternates git borrows for it) and in each submodule's store under its git directory's
    ``modules/`` (beyond the commit the base pins); see the module doc. ``hidden_paths``: files
    of the work tree the task hides; their distinctive lines that the base's tree does not hold
    are indexed too (source ``hidden:PATH``), so an output printing them shows the hidden
    file whatever printed it. ``door_paths`` (among ``hidden_paths``, or added to them): hidden
    paths the task declares doors, not the grader's data — a tool's leftovers that may hold
    the committed future (an editor's copy, a CI artifact); only lines carrying the future
    are indexed of them, a file there holding none of it adds nothing (:func:`_tool_noise`).
    ``grader_paths`` (likewise): the grader's data, every distinctive line of which stays
    indexed (no line of it is a tool's noise, whatever it holds)."""

    started = time.perf_counter()
    r = open_repo(repo)
    base_id = str(resolve_commit(r, base).id)
    index = ProvenanceIndex(base=base_id)
    candidates: dict[str, tuple[str, str]] = {}  # text -> (kind, commit)
    trees: list[tuple[Any, str]] = [(r.repo, base_id)]
    _index_store(index, r.gitdir, r.repo, base_id, candidates)
    for sub in module_stores(r.commondir, r.repo, base_id):
        _index_store(index, sub.gitdir, sub.repo, sub.base, candidates, foreign=True)
        trees.append((sub.repo, sub.base))
    for oid in index.objects:
        index._prefix7.setdefault(oid[:7], []).append(oid)
    workdir = getattr(r.repo, "workdir", None)
    # (hidden path, a file's distinctive lines, whether they are a binary file's text runs,
    # a door's file's whole text)
    hidden_files: list[tuple[str, list[str], bool, str]] = []
    runs: set[str] = set()  # lines only a binary hidden file's text runs hold
    in_text: set[str] = set()
    doors = {d.strip().strip("/") for d in door_paths}
    graders = {g.strip().strip("/") for g in grader_paths}
    hidden_paths = [
        *hidden_paths,
        *(d for d in (*door_paths, *grader_paths) if d not in hidden_paths),
    ]
    if hidden_paths and workdir:
        for path, text, binary in _hidden_texts(Path(workdir), hidden_paths):
            whole = text if path in doors else ""
            hidden_files.append((path, list(_hidden_lines(text, binary)), binary, whole))
            (runs if binary else in_text).update(hidden_files[-1][1])
            for line in hidden_files[-1][1]:
                # every line of a hidden file the base lacks: a test's expected values, a SQL
                # or YAML fix are the future as much as code is (a filter to "lines of a
                # program" was tried and lost to the s15 alone-output red team)
                candidates.setdefault(line, ("line", HIDDEN_SOURCE + path))
    runs = {t for t in runs - in_text if candidates[t][1].startswith(HIDDEN_SOURCE)}
    # a binary file's text run has no line of its own: a .pyc's docstring, a database's copy
    # of a base line's string, is the base's when the base holds the string its frame bounds
    # (marshal's type and length bytes, a record's serial type) anywhere in a line
    glued = {t: inner for t in runs if (inner := _framed_string(t))}
    # a run with no frame is tried whole (a multi-line docstring's later lines, a row too long
    # for a printable serial type: the s20 red team's FA1, FA2)
    texts = [t for t, (k, _) in candidates.items() if k != "line"] + [*glued.values(), *runs]
    lines = [t for t, (k, _) in candidates.items() if k == "line" and t not in runs]
    # a hidden file's line that is line N of a file of the base behind a tool's position N (a
    # search editor's "4: def f", grep -n's "path:4:", cat -n) shows the base, not the future;
    # the number must be where the base holds it (an answer key's "41<TAB>input" is no view)
    viewed: dict[tuple[int, str], list[str]] = {}
    for t, (k, source) in candidates.items():
        at = _POSITION.match(t) if k == "line" and source.startswith(HIDDEN_SOURCE) else None
        view = t[at.end() :].strip() if at else ""
        if at and view:
            viewed.setdefault((int(at[1]), view), []).append(t)
    present: set[str] = set()
    for tree_repo, tree_base in trees:
        present |= _in_tree(tree_repo, tree_base, texts, lines)
        if viewed:
            for found in _at_lines(tree_repo, tree_base, viewed):
                present.update(viewed[found])
    present.update(t for t, inner in glued.items() if inner in present)
    for text, (kind, commit) in candidates.items():
        if text in present:
            continue
        if kind == "subject":
            index.subjects[text] = commit
        elif kind == "tag":
            index.tags[text] = commit
        else:
            index.lines[text] = commit
    for text in _tool_noise(index, hidden_files, doors, graders):
        del index.lines[text]
    for text in [*index.lines, *index.subjects]:
        words = _IDENT.findall(text)
        if words:
            index._keys.add(max(words, key=len))
    index._trees = trees
    index.seconds = time.perf_counter() - started
    return index


def _added_lines(gitdir: Path, commits: list[str]) -> set[str]:
    """Every line the future ``commits`` add (stripped), of :data:`SHORT_LINE` characters and
    :data:`SHORT_ALNUM` letters or digits, with no cap per commit."""
    out = run_git(
        gitdir,
        "-c",
        "log.showRoot=true",
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "-p",
        "--diff-merges=first-parent",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--no-renames",
        "--format=%x01",
        "-U0",
        stdin=("\n".join(commits) + "\n").encode(),
    )
    found: set[str] = set()
    for raw in out.decode("utf-8", "replace").split("\n"):
        if raw.startswith("+") and not raw.startswith("+++ "):
            line = raw[1:].strip()
            if len(line) >= SHORT_LINE and len(_ALNUM.findall(line)) >= SHORT_ALNUM:
                found.add(line)
    return found


def _found_pieces(text: str, pieces: set[str]) -> Iterable[str]:
    """Each :data:`PIECE`-character substring of ``text`` that is in ``pieces``, in order."""
    for at in range(len(text) - PIECE + 1):
        if text[at : at + PIECE] in pieces:
            yield text[at : at + PIECE]


def _unquoted(text: str) -> str:
    """``text`` with single quotes written as double ones (the same string literal in code)."""
    return text.replace("'", '"')


#: the escapes a tool writes a file's text with (strace's and JSON's strings): ``\"``, ``\n``


def _carrier(index: ProvenanceIndex) -> Any:
    """A test of a hidden file's line: does it hold a future commit's line (as it is, or with a
    tool's string escapes undone), a future commit's subject or a future object's id? (A page's
    text, tags removed, was tried in session 19 and withdrawn: its red team's W1-W3.)"""
    future = [t for t, c in index.lines.items() if not c.startswith(HIDDEN_SOURCE)]
    by_key: dict[str, list[str]] = {}
    for text in [*future, *index.subjects]:
        words = _IDENT.findall(text)
        by_key.setdefault(max(words, key=len) if words else "", []).append(text)
    loose = by_key.pop("", [])

    def carries(line: str) -> bool:
        plain = ESCAPED.sub(lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), line)
        for variant in {line, plain}:
            words = set(_IDENT.findall(variant))
            wanted = [t for w in words.intersection(by_key) for t in by_key[w]]
            if any(t in variant for t in [*wanted, *loose]):
                return True
        # an id as any tool spells it, upper case too (BUILD_COMMIT=CAFD797...)
        return any(index.object_for(m[0]) for m in _HEX.finditer(line.lower()))

    return carries


def _door_views(line: str) -> list[str]:
    """A door's line and its decoded views (:func:`selection_views`, a LaTeX listing's code,
    a page's text), where the committed future it carries is looked for."""
    views = [line, *selection_views(line)]
    for more in (listing_text(line), markup_text(line)):
        if more not in views:
            views.append(more)
    return views


def _tool_noise(
    index: ProvenanceIndex,
    hidden_files: Sequence[tuple[str, Sequence[str], bool, str]],
    doors: Collection[str] = frozenset(),
    graders: Collection[str] = frozenset(),
) -> set[str]:
    """The indexed lines of hidden files that carry nothing of the future: of a hidden file
    that holds a future commit's line, subject or id in some of its lines (a log of a run of
    the fix, a recording of its diff), the other lines are the tool's own (a trace's ``brk``
    and ``exit`` lines, a recording's header) and printing them shows nothing of the fix. A
    hidden file holding none of the future's commits is the future itself (an uncommitted
    shelf, a ``.rej``): all its lines stay, unless a file of the same hidden folder holds the
    future wrapped in lines of its own: that folder is a tool's output around a copy of the
    fix (mutmut's ``mutants/``: the trampolined module beside its ``.meta`` of exit codes), and
    a file of it that holds none of the future is the tool's own too. So is every text file
    under a declared door (``doors``) holding none of it: the task said no grader's data lies
    there, only what a tool left, so what counts of it is the committed future it carries. A
    binary file there keeps its text runs (a ``.pyc`` of the fix holds its constants and
    names, never its lines: no line test can clear it), and so does a file whose whole text,
    decoded, carries the future though no line of it does (a hex dump, base64 of the fix).
    The grader's data (``graders``) has no noise: every line of it is the grader's secret,
    beside the future or not (a reference solution under a header of its own beside the
    cases: the s23 red team's D34)."""
    carries = _carrier(index)
    noise: set[str] = set()
    kept: set[str] = set()
    wrapped: set[str] = set()  # hidden folders where a tool wrapped the future in its own lines
    bare: list[tuple[str, list[str], bool]] = []  # files holding none of the future
    for path, lines, binary, whole in hidden_files:
        own = [t for t in lines if index.lines.get(t, "").startswith(HIDDEN_SOURCE)]
        if path in graders:
            kept.update(own)
            continue
        if path in doors:
            # a door counts for the future it carries in any spelling its tool writes: a
            # highlighted listing, a page's markup, entities, escapes, a hex dump, base64
            held = [t for t in own if any(carries(v) for v in _door_views(t))]
        else:
            held = [t for t in own if carries(t)]
        future = [t for t in lines if t in index.lines and t not in own]
        if held or future:
            noise.update(set(own) - set(held))  # the file holds the future: its rest is noise
            kept.update(held)
            if set(own) - set(held):
                wrapped.add(path)
        elif whole and not carries(whole) and any(carries(v) for v in _door_views(whole)[1:]):
            # an encoding of the future as a whole (a hex dump, base64): no line of it is
            # clear; a text that carries it as written (a patch's context lines, which its
            # distinctive lines leave out) was judged line by line above
            kept.update(own)
        else:
            bare.append((path, own, binary))
    for path, own, binary in bare:
        door = path in doors and not binary
        (noise if path in wrapped or door else kept).update(own)
    return noise - kept


def _index_store(
    index: ProvenanceIndex,
    gitdir: Path,
    repo: Any,
    base_id: str,
    candidates: dict[str, tuple[str, str]],
    *,
    foreign: bool = False,
) -> None:
    """Add one object store's objects beyond ``base_id`` (and its future commits' subjects,
    lines and tag names) to ``index``; ``foreign``: a store other than the task repository's
    own (its commits are not resolved by hash ancestry, so the index reports them)."""
    objects = all_objects(gitdir)
    reachable = rev_list_objects(gitdir, [base_id]) if base_id else set()
    for oid in reachable:
        index._base_prefix7.add(oid[:7].decode())
    commits = []
    for oid, kind in objects.items():
        if oid not in reachable:
            text = oid.decode()
            if text not in index.objects:
                index.objects[text] = kind.decode()
                if foreign:
                    index.foreign.add(text)
            if kind == b"commit":
                commits.append(text)
    if commits:
        _commit_candidates(gitdir, commits, candidates)
        index._stores.append((gitdir, commits))
    _tag_candidates(repo, set(commits), candidates)


def _commit_candidates(
    gitdir: Path, commits: list[str], candidates: dict[str, tuple[str, str]]
) -> None:
    """The subjects and distinctive added lines of the future ``commits`` (one ``git log -p``
    over them all), each kept with the first commit that has it."""
    out = run_git(
        gitdir,
        "-c",
        "log.showRoot=true",
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "-p",
        "--diff-merges=first-parent",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--no-renames",
        "--format=%x01%H%x02%s",
        "-U0",
        stdin=("\n".join(commits) + "\n").encode(),
    )
    current = ""
    added = 0
    for raw in out.decode("utf-8", "replace").split("\n"):
        if raw.startswith("\x01"):
            current, _, subject = raw[1:].partition("\x02")
            added = 0
            subject = subject.strip()
            if len(subject) >= MIN_SUBJECT:
                candidates.setdefault(subject, ("subject", current))
        elif raw.startswith("+") and not raw.startswith("+++ ") and added < MAX_LINES_PER_COMMIT:
            line = raw[1:].strip()
            if distinctive(line):
                added += 1
                candidates.setdefault(line, ("line", current))


def _tag_candidates(
    repo: Any, future_commits: set[str], candidates: dict[str, tuple[str, str]]
) -> None:
    """The names of the tags that point at future commits."""
    for ref in repo.references:
        if not ref.startswith("refs/tags/"):
            continue
        try:
            target = repo.revparse_single(ref).peel(_commit_type())
        except Exception:  # noqa: BLE001 - a tag of a tree or blob, or a broken one: not a commit
            continue
        if str(target.id) in future_commits and len(ref) > len("refs/tags/") + 1:
            candidates.setdefault(ref[len("refs/tags/") :], ("tag", str(target.id)))


def _commit_type() -> Any:
    import pygit2

    return pygit2.Commit


_IDENT = re.compile(r"[A-Za-z0-9_]+")


#: what tools put before a line of a file or a subject, removed in turn (each over a whole output)
_STRIP = tuple(
    re.compile(p, re.M)
    for p in (
        r"^[+\-> ]|^[E>] +",  # diff markers, pytest's "E   " / ">   "
        r"^[^\s:]+:\d+[:-]|^[^\s:]+[:-]",  # grep / rg "path:12:" or "path:"
        r"^\s*\d+[\t:|] ?",  # cat -n, nl, numbered views
        # log --oneline / --graph / commit X
        r"^[*|\\/ ]*(?:commit )?[0-9a-f]{7,40}\s+(?:\([^)]*\)\s+)?",
    )
)


def _around(out: str, needle: str) -> str:
    """The line of ``out`` holding ``needle``, whole (for a token check)."""
    at = out.find(needle)
    start = out.rfind("\n", 0, at) + 1
    end = out.find("\n", at)
    return out[start : end if end >= 0 else len(out)]


def _quote(out: str, needle: str) -> str:
    """The line of ``out`` holding ``needle`` (cut to 300 characters)."""
    at = out.find(needle)
    if at < 0:
        return needle[:300]
    start = out.rfind("\n", 0, at) + 1
    end = out.find("\n", at)
    return out[start : end if end >= 0 else len(out)].strip()[:300]


def scan_outputs(
    index: ProvenanceIndex,
    outputs: Sequence[str | None],
    commands: Sequence[str] = (),
    text: str | None = None,
) -> list[ContentHit]:
    """Future objects, subjects, tag names and lines in the recorded outputs (module doc).

    ``outputs[k]`` is step k's output and ``commands[k]`` its command (a line the trajectory
    typed before step k printed it is its own). ``text``: the observation text, read as one
    output when no step recorded one. Each output is read whole by a few C-level passes (hex
    words, tokens, its lines with and without the prefixes tools add), not line by line."""
    sources: list[tuple[int, str]] = [(k, o) for k, o in enumerate(outputs) if o]
    if not sources and text:
        sources = [(-1, text)]
    hits: list[ContentHit] = []
    seen: set[tuple[str, str]] = set()
    for k, out in sources:
        if index._prefix7.keys().isdisjoint(_HEX7.findall(out)):
            matches: Any = ()  # no hex word of the output starts like a future object
        else:
            matches = _HEX.finditer(out)
        for m in matches:
            word = m.group(0)
            if word.isdigit() and not at_hash_place(out, m.start()):
                continue  # a number, not an abbreviation git printed
            found = index.object_for(word)
            if found is None:
                continue
            oid, kind = found
            start = out.rfind("\n", 0, m.start()) + 1
            if kind in ("blob", "tree") and _INDEX_LINE.match(out, start):
                continue  # the agent's own identical file has the same blob id
            if ("object", oid) not in seen:
                seen.add(("object", oid))
                hits.append(ContentHit(k, "object", word, oid, _quote(out[start:], word)))
        if index.tags:
            if (
                len(index.tags) <= 64
            ):  # a few tags: look for each (C-level), then check its boundaries
                names = {
                    t for t in index.tags if t in out and t in _TOKEN_SPLIT.split(_around(out, t))
                }
            else:
                names = set(_TOKEN_SPLIT.split(out)).intersection(index.tags)
            names.update(
                t for t in index.tags if "/" in t and t in out
            )  # "release/2.0": split apart above
            for name in sorted(names):
                if ("tag", name) not in seen:
                    seen.add(("tag", name))
                    hits.append(ContentHit(k, "tag", name, index.tags[name], _quote(out, name)))
        if index._keys.isdisjoint(_IDENT.findall(out)):
            continue
        variants = [out] + [p.sub("", out) for p in _STRIP]
        stripped: set[str] = set()
        for variant in variants:
            stripped.update(map(str.strip, variant.split("\n")))
        for cand in stripped.intersection(index.subjects):
            if ("subject", cand) not in seen:
                seen.add(("subject", cand))
                hits.append(ContentHit(k, "subject", cand, index.subjects[cand], _quote(out, cand)))
        matched = stripped.intersection(index.lines)
        if matched:
            typed = "\n".join(c for c in commands[: k + 1] if c) if k >= 0 else ""
            for cand in sorted(matched):
                if ("line", cand) not in seen and cand not in typed:
                    seen.add(("line", cand))
                    hits.append(ContentHit(k, "line", cand, index.lines[cand], _quote(out, cand)))
    lines = [h for h in hits if h.kind == "line"]
    if len(lines) == 1 and len(hits) == 1:
        hits = [ContentHit(h.step, h.kind, h.what, h.commit, h.line, "warn") for h in hits]
    return hits
