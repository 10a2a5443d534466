"""The replay's rotated world: the future's text in the hidden files turned (each ASCII letter
and digit moved one on, the base's own words kept), inside compressed files, zip members,
SQLite databases and checksum lines too, so that a step's output that differs between the
worlds shows it depended on the future. Split off :mod:`evotree.harness.audit.replay` on its
seam (the replay runs and judges; this module only makes the rotated copy's bytes).
"""

from __future__ import annotations

import bz2
import gzip
import shutil
import lzma
import os
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["MAX_HIDDEN_BYTES", "base_words", "rotated"]

#: a hidden file is rotated up to this size (a larger one is left as it is)
MAX_HIDDEN_BYTES = 64 << 20

#: the digests a checksum line of each length may be
_SUMS: dict[int, tuple[str, ...]] = {
    32: ("md5",),
    40: ("sha1",),
    56: ("sha224", "sha3_224"),
    64: ("sha256", "sha3_256", "blake2b-32"),
    96: ("sha384", "sha3_384"),
    128: ("sha512", "sha3_512", "blake2b"),
}


_ROTATE = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "bcdefghijklmnopqrstuvwxyzaBCDEFGHIJKLMNOPQRSTUVWXYZA1234567890",
)


_COMPRESSED: tuple[tuple[bytes, Any], ...] = (
    (b"\x1f\x8b", gzip),
    (b"\xfd7zXZ\x00", lzma),
    (b"BZh", bz2),
)


def rotated(line: str, keep: frozenset[str] | set[str] = frozenset()) -> str:
    """``line`` with each ASCII letter and digit moved one on (``z``→``a``, ``9``→``0``): the
    same length, spaces and punctuation, none of the same words — except the words of
    ``keep`` (the base's own words: a count of ``axles`` stays what it was)."""
    return _WORDS.sub(
        lambda m: (
            m.group(0)
            if m.group(0) in keep or m.group(0).startswith("\\")
            else m.group(0).translate(_ROTATE)
        ),
        line,
    )


#: a word, or an escape sequence kept as it is (``\n``, ``\u001b``, ``\x1b``: a JSON or a
#: recording stays well-formed)
_WORDS = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}|[0-7]{1,3}|.)|[A-Za-z0-9_]+")


#: a line that may hold text encoded (decoded views are read only for such a line)
_ENCODED = re.compile(r"[&\\%<\x00]|[^\x00-\x7f]|[A-Za-z0-9+/]{16,}={0,2}")


@dataclass
class _FutureText:
    """Where of a hidden file's line the future sits: :meth:`spans` (the line's own structure,
    a JSON document's keys, a log's prefix, kept; only the future's text rotated)."""

    index: Any
    added: set[str]
    pieces: set[str]
    #: the words the base's text files hold: kept as they are in a rotated span, so what a
    #: command probes with the base's words (``grep -c axles``) reads the same in both worlds
    #: and only the future's own words part them
    keep: set[str]

    def spans(self, line: str, big: bool = False) -> list[tuple[int, int]]:
        """The parts of ``line`` holding the future: the whole line when it is a line a future
        commit adds; each indexed line inside it; each piece; a future line found only in a
        decoded view (an entity, an escape) where its escaped spelling sits, else the whole
        line. Cheap tests first; the views only for a line that may hold an encoding."""
        from evotree.harness.audit.future_content import PIECE

        bare = line.strip()
        if not bare:
            return []
        if bare in self.added:
            return [(0, len(line))]
        wants = self.index.lines_inside(line)
        # a hidden file's own line holding a future commit's line (a JSON report's entry):
        # only the future's line is rotated, the entry's key and quotes kept
        theirs = [w for w in wants if not str(self.index.lines.get(w, "")).startswith("hidden:")]
        if not theirs and _ENCODED.search(line):
            # the future's line escaped inside it (JSON's \", an entity): found in the line
            # unescaped, rotated where its escaped spelling sits
            theirs_escaped = [
                form
                for view in _unescaped(line)
                for want in self.index.lines_inside(view)
                if not str(self.index.lines.get(want, "")).startswith("hidden:")
                for form in _escaped(want)
            ]
            escaped = [span for form in theirs_escaped for span in _where(line, form)]
            if escaped:
                return escaped
        found = [span for want in theirs or wants for span in _where(line, want)]
        if self.pieces and len(line) >= PIECE:
            # every window of a short line; of a long one, or of any line of a big file, every
            # 10th (a run of 29 characters a future line holds is still found there)
            step = 1 if len(line) < 4 * PIECE and not big else 10
            found += [
                (k, k + PIECE)
                for k in range(0, len(line) - PIECE + 1, step)
                if line[k : k + PIECE] in self.pieces
            ]
        if found or not _ENCODED.search(line):
            return found
        what = self.index.selected_future([line])
        if what is None:
            return []
        spelled = [span for form in _escaped(what) for span in _where(line, form)]
        return spelled or [(0, len(line))]

    def turn(self, line: str, big: bool = False) -> str:
        """``line`` with its future spans rotated (the base's words kept)."""
        spans = sorted(self.spans(line, big))
        if not spans:
            return line
        out, at = [], 0
        for start, end in spans:
            start = max(start, at)
            if end <= start:
                continue
            out += [line[at:start], rotated(line[start:end], self.keep)]
            at = end
        return "".join(out) + line[at:]


def _where(line: str, want: str) -> list[tuple[int, int]]:
    spans, at = [], line.find(want)
    while at >= 0 and want:
        spans.append((at, at + len(want)))
        at = line.find(want, at + len(want))
    return spans


def _unescaped(line: str) -> list[str]:
    """``line`` with JSON's or Python's string escapes undone (``\\"``, ``\\n``), and with
    HTML's entities undone."""
    import html

    plain = re.sub(r"\\[nrt]", " ", line).replace('\\"', '"').replace("\\'", "'")
    return [plain.replace("\\\\", "\\"), html.unescape(line)]


def _escaped(text: str) -> list[str]:
    """How a line may be spelled inside a document: as JSON or a Python string writes it,
    with HTML's entities."""
    import html
    import json

    forms = {text, json.dumps(text)[1:-1], repr(text)[1:-1], html.escape(text, quote=False)}
    forms.add(html.escape(text))
    return [f for f in forms if f]


#: a text file over this size is searched for pieces every 10th character (module doc)
_BIG_TEXT = 1 << 20


#: a binary file is searched for spans only up to this size
_SPAN_BYTES = 16 << 20


def _future_text(index: Any) -> _FutureText:
    keep: set[str] = set()
    for tree_repo, tree_base in getattr(index, "_trees", ()):
        keep |= base_words(tree_repo, tree_base)
    return _FutureText(index, index.added(), index.pieces(), keep)


def base_words(repo: Any, base: str) -> set[str]:
    """Every word (letters, digits, ``_``) of the text files of ``base``'s tree (files over
    4 MB and binary ones skipped)."""
    from evotree.harness.audit.base_tree import base_texts

    words: set[str] = set()
    for text in base_texts(repo, base):
        words.update(_WORDS.findall(text))
    return words


def _rotate_text(data: bytes, future: _FutureText) -> tuple[bytes, int]:
    """``data`` with the future's spans rotated, line by line (a binary file read as
    Latin-1: its bytes kept where no future text sits, so a database keeps its structure)."""
    binary = b"\0" in data
    if binary and len(data) > _SPAN_BYTES:
        return data, 0
    big = len(data) > _BIG_TEXT
    out: list[bytes] = []
    count = 0
    for raw in data.split(b"\n"):
        text = raw.decode("latin-1") if binary else raw.decode("utf-8", "surrogateescape")
        turned = future.turn(text, big)
        if turned != text:
            out.append(
                turned.encode("latin-1") if binary else turned.encode("utf-8", "surrogateescape")
            )
            count += 1
        else:
            out.append(raw)
    return b"\n".join(out), count


def _rotate_file(path: Path, future: _FutureText) -> int:
    """Rotate the future's lines of one hidden file in place (inside a compressed one too)."""
    try:
        st = path.stat()
        if st.st_size > MAX_HIDDEN_BYTES:
            return 0
        data = path.read_bytes()
    except OSError:
        return 0
    try:
        return _rotate_data(path, data, future)
    finally:  # its times as they were (a listing reads the same in both worlds)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _rotate_data(path: Path, data: bytes, future: _FutureText) -> int:
    for magic, codec in _COMPRESSED:
        if data.startswith(magic):
            try:
                inner = codec.decompress(data)
            except (OSError, EOFError, ValueError, lzma.LZMAError):
                return 0
            if len(inner) > MAX_HIDDEN_BYTES:
                return 0
            new, count = _rotate_text(inner, future)
            if count:
                path.write_bytes(_gzip_like(data, new) if codec is gzip else codec.compress(new))
            return count
    new, count = _rotate_text(data, future)
    if count:
        path.write_bytes(_zip_crcs(new) if data.startswith(b"PK\x03\x04") else new)
        if data.startswith(b"SQLite format 3\0"):
            _sqlite_reindexed(path)
    return count


def _gzip_like(original: bytes, inner: bytes) -> bytes:
    """``inner`` gzipped as ``original`` was: its header (name, time, flags) kept and, where a
    level, memory level and strategy of zlib give it, its size (else the smallest): ``wc -c``
    and ``ls -l`` of a rotated ``.gz`` read as of the original where they can (a size the
    rotation could not keep is set aside by the comparison: :attr:`ReplayWorlds.sizes`)."""
    import struct

    head = _gzip_header(original)
    if head is None:
        return gzip.compress(inner, mtime=0)
    trailer = struct.pack("<II", zlib.crc32(inner), len(inner) & 0xFFFFFFFF)
    levels = {2: [9, 8, 7], 4: [1, 2, 3]}.get(original[8], [6, 5, 4, 7, 8, 9, 3, 2, 1])
    levels += [k for k in range(1, 10) if k not in levels]
    tries = [
        (level, mem, strategy)
        for level in levels
        for mem in (8, 9)
        for strategy in (zlib.Z_DEFAULT_STRATEGY, zlib.Z_FILTERED)
    ]
    best = b""
    for level, mem, strategy in tries[: max(1, _GZIP_TRY_BYTES // max(1, len(inner)))]:
        packer = zlib.compressobj(level, zlib.DEFLATED, -15, mem, strategy)
        body = packer.compress(inner) + packer.flush()
        if len(head) + len(body) + 8 == len(original):
            return head + body + trailer
        if not best or len(body) < len(best):
            best = body
    return head + best + trailer


#: at most this many bytes are compressed in all to find a rotated gzip's size (a big one: the
#: original's level only)
_GZIP_TRY_BYTES = 32 << 20


def _gzip_header(data: bytes) -> bytes | None:
    """A one-member gzip file's header (None: another method, several members, malformed)."""
    import struct

    if len(data) < 18 or data[2] != 8:
        return None
    flags, at = data[3], 10
    try:
        if flags & 4:
            at += 2 + struct.unpack_from("<H", data, at)[0]
        for bit in (8, 16):
            if flags & bit:
                at = data.index(b"\0", at) + 1
        if flags & 2:
            at += 2
        unpacker = zlib.decompressobj(-15)
        unpacker.decompress(data[at:])
    except (ValueError, struct.error, zlib.error):
        return None
    if not unpacker.eof or len(unpacker.unused_data) != 8:
        return None
    return data[:at]


def _zip_crcs(data: bytes) -> bytes:
    """A zip file with each stored member's CRC-32 (local header, data descriptor, central
    directory) set to its bytes as they are now: a rotated member tests sound, as the
    original did (``unzip -t``). A member compressed, or a zip this does not read: kept."""
    import struct

    out = bytearray(data)
    end = data.rfind(b"PK\x05\x06")
    if end < 0 or end + 22 > len(data):
        return data
    try:
        count, size, start = struct.unpack_from("<HII", data, end + 10)
        at = start
        for _ in range(count):
            if data[at : at + 4] != b"PK\x01\x02":
                return data
            method, _, _, crc, csize = struct.unpack_from("<HHHII", data, at + 10)
            nlen, elen, clen = struct.unpack_from("<HHH", data, at + 28)
            local = struct.unpack_from("<I", data, at + 42)[0]
            if method == 0 and csize != 0xFFFFFFFF and data[local : local + 4] == b"PK\x03\x04":
                flags = struct.unpack_from("<H", data, local + 6)[0]
                lnlen, lelen = struct.unpack_from("<HH", data, local + 26)
                begin = local + 30 + lnlen + lelen
                new = zlib.crc32(data[begin : begin + csize])
                if new != crc:
                    struct.pack_into("<I", out, at + 16, new)
                    if flags & 8:
                        tail = (
                            begin
                            + csize
                            + (4 if data[begin + csize : begin + csize + 4] == b"PK\x07\x08" else 0)
                        )
                        struct.pack_into("<I", out, tail, new)
                    else:
                        struct.pack_into("<I", out, local + 14, new)
            at += 46 + nlen + elen + clen
    except struct.error:
        return data
    return bytes(out)


def _sqlite_reindexed(path: Path) -> None:
    """A rotated SQLite file's indexes rebuilt from its tables (the rotation changed the keys'
    text, not their order: ``PRAGMA integrity_check`` would fail only in the rotated world)."""
    import sqlite3

    try:
        folder = path.parent.stat()
    except OSError:
        return
    try:
        _reindex(sqlite3, path)
    finally:  # its journal came and went: the folder's times as they were (``ls -la``)
        os.utime(path.parent, ns=(folder.st_atime_ns, folder.st_mtime_ns))


def _reindex(sqlite3: Any, path: Path) -> None:
    try:
        from urllib.parse import quote

        where = f"file:{quote(str(path))}?mode=rw"
        db = sqlite3.connect(where, uri=True, timeout=1, isolation_level=None)
    except sqlite3.Error:
        return
    try:
        db.execute("PRAGMA trusted_schema = OFF")
        db.execute("REINDEX")
    except sqlite3.Error:
        pass
    finally:
        db.close()


#: a checksum tool's line (GNU's: digest, two spaces or `` *``, the path) in a hidden file
_SUM_LINE = re.compile(rb"(\\?)([0-9a-f]{32,128})( [ *])(.+?\r?)")


def _digest(name: str, data: bytes) -> str:
    import hashlib

    if name.startswith("blake2b"):
        size = int(name.split("-")[1]) if "-" in name else 64
        return hashlib.blake2b(data, digest_size=size).hexdigest()
    return hashlib.new(name, data).hexdigest()


def _resum(real: Path, neutral: Path, hidden: Sequence[Path], turned: set[Path]) -> None:
    """In the rotated world, each checksum line of a hidden file (``sha256sum``'s, ``md5sum``'s,
    ``b2sum``'s, as the checkout has it) naming a rotated file, whose digest is the original's,
    given the rotated file's digest: ``sha256sum -c`` reads OK in every world, as it did for
    the agent (the line itself is the checkout's, even where it was rotated)."""
    for rel in hidden:
        path = neutral / rel
        try:
            st = path.stat()
            if st.st_size > 1 << 20:
                continue
            before, after = (real / rel).read_bytes(), path.read_bytes()
        except OSError:
            continue
        lines, turned_lines = before.split(b"\n"), after.split(b"\n")
        if len(lines) != len(turned_lines) or not _SUM_LINE.search(before):
            continue
        changed = False
        for k, line in enumerate(lines):
            match = _SUM_LINE.fullmatch(line)
            new = _resummed(match, rel, real, neutral, turned) if match else None
            if new is not None and new != turned_lines[k]:
                turned_lines[k], changed = new, True
        if changed:
            path.write_bytes(b"\n".join(turned_lines))
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _resummed(
    match: re.Match[bytes], rel: Path, real: Path, neutral: Path, turned: set[Path]
) -> bytes | None:
    """The checksum line ``match`` with the digest of the rotated file it names (None: it names
    no rotated file, or its digest is not that file's)."""
    digest, named = match.group(2).decode(), match.group(4).decode("utf-8", "replace")
    for base in (rel.parent, Path()):
        target = Path(os.path.normpath(base / named))
        if target not in turned:
            continue
        try:
            before, after = (real / target).read_bytes(), (neutral / target).read_bytes()
        except OSError:
            continue
        for name in _SUMS.get(len(digest), ()):
            if _digest(name, before) == digest:
                new = _digest(name, after).encode()
                return match.group(1) + new + match.group(3) + match.group(4)
    return None


def bare_copy(real: Path, dest: Path, hidden: Sequence[Path], future: Any) -> Path | None:
    """The fourth world's work tree: a copy whose hidden files have the future's spans rotated
    whole, the base's words too. The rotated copy keeps the base's words (a probe with them
    counts the same in both worlds); a line of the future made only of the base's words (a
    signature whose type changed) is then left as it is, so that copy still holds it; this one
    does not. The fourth world's judge counts only lines that hold the future's text, so the
    base's words turned do not part it on a count. None: it could not be made."""
    whole = _FutureText(future.index, future.added, future.pieces, set())
    try:
        shutil.copytree(real, dest, symlinks=True)
        turned = {rel for rel in hidden if _rotate_file(dest / rel, whole)}
        if turned:
            _resum(real, dest, hidden, turned)
    except OSError:
        return None
    return dest
