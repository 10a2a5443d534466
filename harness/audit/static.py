"""What a small shell pipeline prints, computed without running it.

A leak hidden in an encoded string (``eval "$(echo Z2l0IGxvZyAtLWFsbA== | base64 -d)"``,
``echo 676974… | xxd -r -p | sh``, ``bash <(printf '\\x67\\x69\\x74 reflog')``) is a command
built at run time from a literal the trajectory shows. This module evaluates the pipelines that
do such building — sources ``echo``, ``printf``, ``cat`` of a here-document / here-string /
a file the trajectory wrote, and filters ``base64``/``base32``/``basenc``/``openssl base64``
decoding, ``xxd -r``, ``rev``, ``tac``, ``tr`` and gzip/xz/bzip2 decompression — so the audit can
parse the command that really runs. Anything else is unknown (``None``): nothing is guessed.
"""

from __future__ import annotations

import base64
import binascii
import bz2
import gzip
import lzma
import re
import zlib
from collections.abc import Sequence

__all__ = ["SOURCES", "FILTERS", "source_output", "filter_output", "KEYWORDS"]

#: Output larger than this is not decoded further (a decoded payload is a command, not a file).
MAX_BYTES = 1 << 20
SOURCES = frozenset({"echo", "printf", "cat"})
FILTERS = frozenset(
    {
        "base64",
        "base32",
        "basenc",
        "openssl",
        "xxd",
        "rev",
        "tac",
        "tr",
        "gunzip",
        "zcat",
        "gzip",
        "xz",
        "unxz",
        "xzcat",
        "bzip2",
        "bunzip2",
        "bzcat",
        "cat",
    }
)
#: substrings without which a command substitution cannot be a decoding pipeline
KEYWORDS = (
    "base64",
    "base32",
    "basenc",
    "xxd",
    "rev",
    "tr",
    "openssl",
    "printf",
    "echo",
    "cat",
    "gzip",
    "gunzip",
    "zcat",
    "xz",
    "bz",
    "<<<",
    "tac",
)

_ESC = {
    "n": b"\n",
    "t": b"\t",
    "r": b"\r",
    "a": b"\a",
    "b": b"\b",
    "e": b"\x1b",
    "E": b"\x1b",
    "f": b"\f",
    "v": b"\v",
    "\\": b"\\",
    "'": b"'",
    '"': b'"',
    "?": b"?",
}
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|0[0-7]{0,3}|[1-7][0-7]{0,2}|.)", re.S)


def _escapes(text: str, octal_zero: bool = True) -> bytes:
    """Backslash escapes as ``echo -e`` / ``printf`` read them."""

    def one(m: re.Match[str]) -> str:
        e = m.group(1)
        if e[0] == "x":
            return chr(int(e[1:], 16))
        if e[0] == "u":
            return chr(int(e[1:], 16))
        if e[0] in "01234567" and (octal_zero or e[0] != "0"):
            digits = e[1:] if e[0] == "0" and octal_zero else e
            return chr(int(digits or "0", 8) & 0xFF)
        value = _ESC.get(e)
        return value.decode("latin-1") if value is not None else "\\" + e

    return _ESCAPE.sub(one, text).encode("utf-8", "surrogateescape")


def _printf(args: Sequence[str]) -> bytes | None:
    if not args:
        return None
    fmt, rest = args[0], list(args[1:])
    specs = re.findall(r"%(?:[-+ #0]*\d*(?:\.\d+)?)([sbdiouxXcq%])", fmt)
    used = [c for c in specs if c != "%"]
    out = b""
    rounds = 0
    while True:
        piece = []
        pos = 0
        for m in re.finditer(r"%(?:[-+ #0]*\d*(?:\.\d+)?)([sbdiouxXcq%])", fmt):
            piece.append(_escapes(fmt[pos : m.start()]))
            pos = m.end()
            kind = m.group(1)
            if kind == "%":
                piece.append(b"%")
                continue
            value = rest.pop(0) if rest else ""
            if kind == "b":
                piece.append(_escapes(value))
            elif kind in "diouxX":
                try:
                    number = int(value or "0", 0)
                except ValueError:
                    return None
                piece.append(
                    ("%" + kind).encode() % number if kind != "i" else str(number).encode()
                )
            elif kind == "c":
                piece.append(value[:1].encode())
            else:
                piece.append(value.encode("utf-8", "surrogateescape"))
        piece.append(_escapes(fmt[pos:]))
        out += b"".join(piece)
        rounds += 1
        if not rest or not used or rounds > 1000:
            break
    return out


def source_output(argv: Sequence[str]) -> bytes | None:
    """What ``echo`` / ``printf`` print (``None`` for any other program)."""
    if not argv:
        return None
    name = argv[0].rsplit("/", 1)[-1]
    if name == "echo":
        args = list(argv[1:])
        newline, escapes = True, False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            flags = args.pop(0)
            newline = newline and "n" not in flags
            escapes = ("e" in flags) or (escapes and "E" not in flags)
        text = " ".join(args)
        body = (
            _escapes(text, octal_zero=True) if escapes else text.encode("utf-8", "surrogateescape")
        )
        return body + (b"\n" if newline else b"")
    if name == "printf":
        args = list(argv[1:])
        if args[:1] == ["--"]:
            args = args[1:]
        if args[:1] == ["-v"]:
            return None
        return _printf(args)
    return None


def _tr_set(spec: str) -> str:
    spec = _escapes(spec).decode("utf-8", "surrogateescape")
    classes = {
        "[:lower:]": "abcdefghijklmnopqrstuvwxyz",
        "[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "[:digit:]": "0123456789",
        "[:space:]": " \t\n\r\f\v",
    }
    for key, value in classes.items():
        spec = spec.replace(key, value)
    out = []
    i = 0
    while i < len(spec):
        if i + 2 < len(spec) and spec[i + 1] == "-":
            a, b = ord(spec[i]), ord(spec[i + 2])
            if a <= b and b - a < 4096:
                out.extend(chr(c) for c in range(a, b + 1))
                i += 3
                continue
        out.append(spec[i])
        i += 1
    return "".join(out)


def _b64(data: bytes, alphabet: str = "64") -> bytes | None:
    clean = re.sub(rb"\s+", b"", data)
    try:
        if alphabet == "32":
            return base64.b32decode(clean + b"=" * (-len(clean) % 8), casefold=True)
        if alphabet == "16":
            return base64.b16decode(clean, casefold=True)
        if b"-" in clean or b"_" in clean:
            return base64.urlsafe_b64decode(clean + b"=" * (-len(clean) % 4))
        return base64.b64decode(clean + b"=" * (-len(clean) % 4))
    except (binascii.Error, ValueError):
        return None


#: decoders that read a file named in their arguments (openssl's arguments name no input file)
_FILE_READERS = (
    "base64",
    "base32",
    "basenc",
    "cat",
    "xxd",
    "rev",
    "tac",
    "gunzip",
    "zcat",
    "gzip",
    "xz",
    "unxz",
    "xzcat",
    "bzip2",
    "bunzip2",
    "bzcat",
    "openssl",
)


def filter_output(
    argv: Sequence[str], data: bytes | None, files: dict[str, str] | None = None
) -> bytes | None:
    """What filter ``argv`` prints when fed ``data`` (or reading a file named in ``files``).
    ``None`` when the program is not a known decoder or its input is unknown."""
    if not argv:
        return None
    name = argv[0].rsplit("/", 1)[-1]
    args = list(argv[1:])
    paths = [a for a in args if not a.startswith("-") and a != "-"]
    if name in _FILE_READERS and paths and files is not None and name != "openssl":
        content = _file(paths[-1] if name != "xxd" else paths[0], files)
        if content is None:
            return None
        data = content
    if data is None:
        return None
    if len(data) > MAX_BYTES:
        return None
    try:
        return _decoded(name, args, data)
    except (
        OSError,
        EOFError,
        ValueError,
        zlib.error,
        lzma.LZMAError,
        binascii.Error,
        UnicodeError,
    ):
        return None


def _decoded(name: str, args: list[str], data: bytes) -> bytes | None:
    """What decoder ``name`` prints for ``data`` (None: not a decoder, or encoding; a malformed
    input raises, and :func:`filter_output` says None)."""
    if name == "cat":
        return data
    if name in ("base64", "base32", "basenc", "openssl"):
        return _base_decoded(name, args, data)
    if name == "xxd":
        if (
            "-r" in args
            and any(a in ("-p", "-ps", "-plain", "-postscript") for a in args)
            or "-rp" in args
            or "-pr" in args
        ):
            return binascii.unhexlify(re.sub(rb"[^0-9a-fA-F]", b"", data)[: len(data) // 2 * 2])
        return None
    if name == "rev":
        lines = data.split(b"\n")
        return b"\n".join(line[::-1] for line in lines)
    if name == "tac":
        lines = data.rstrip(b"\n").split(b"\n")
        return b"\n".join(reversed(lines)) + b"\n"
    if name == "tr":
        return _tr(args, data)
    return _decompressed(name, args, data)


def _base_decoded(name: str, args: list[str], data: bytes) -> bytes | None:
    """base64 / base32 / basenc ``-d`` (and ``openssl base64 -d``): the decoded bytes."""
    if name == "openssl":
        if ("base64" in args or "-base64" in args or "-a" in args) and "-d" in args:
            return _b64(data)
        return None
    decode = any(
        a in ("-d", "--decode", "-D") or re.fullmatch(r"-[di]+", a) and "d" in a for a in args
    )
    if not decode:
        return None  # encoding: its output is not a command
    alphabet = (
        "32" if name == "base32" or "--base32" in args else "16" if "--base16" in args else "64"
    )
    return _b64(data, alphabet)


def _tr(args: list[str], data: bytes) -> bytes | None:
    """``tr -d SET`` and ``tr SET1 SET2`` (rot13 and the like) over ``data``."""
    sets = [a for a in args if not a.startswith("-")]
    text = data.decode("utf-8", "surrogateescape")
    if "-d" in args and len(sets) == 1:
        drop = set(_tr_set(sets[0]))
        return "".join(c for c in text if c not in drop).encode("utf-8", "surrogateescape")
    if len(sets) != 2 or any(a.startswith("-") for a in args):
        return None
    src, dst = _tr_set(sets[0]), _tr_set(sets[1])
    if not src or not dst:
        return None
    dst = dst + dst[-1] * max(0, len(src) - len(dst))
    return text.translate(str.maketrans(src, dst[: len(src)])).encode("utf-8", "surrogateescape")


def _decompressed(name: str, args: list[str], data: bytes) -> bytes | None:
    """gzip / xz / bzip2 decompression (``gunzip``, ``zcat``, ``gzip -d``, ...); None for any
    other program."""
    if (
        name in ("gunzip", "zcat")
        or name == "gzip"
        and any(a in ("-d", "-dc", "-cd", "--decompress") for a in args)
    ):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            return zlib.decompress(data)
    if (
        name in ("unxz", "xzcat")
        or name == "xz"
        and any(a in ("-d", "-dc", "-cd", "--decompress") for a in args)
    ):
        return lzma.decompress(data)
    if (
        name in ("bunzip2", "bzcat")
        or name == "bzip2"
        and any(a in ("-d", "-dc", "-cd") for a in args)
    ):
        return bz2.decompress(data)
    return None


def _file(path: str, files: dict[str, str]) -> bytes | None:
    clean = path[2:] if path.startswith("./") else path
    content = files.get(clean)
    if content is None:
        content = next(
            (v for k, v in files.items() if k.endswith("/" + clean) or clean.endswith("/" + k)),
            None,
        )
    return None if content is None else content.encode("utf-8", "surrogateescape")
