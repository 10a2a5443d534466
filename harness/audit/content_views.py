"""A hidden file's text in the views the future is looked for in: as printed, and with the
encodings a tool writes a file's text in undone (entities, string escapes, terminal colours,
NUL bytes, markup, fixed spaces, hex dumps — ``xxd`` with and without offsets, ``xxd -i``,
``hexdump -C``, ``od -c`` —, base64 and gzip, percent-encoding). Split from
:mod:`evotree.harness.audit.future_content` (which searches these views for the future)."""

from __future__ import annotations

import base64
import binascii
import html
import re
import urllib.parse
import zlib

__all__ = [
    "ANSI",
    "ESCAPED",
    "TAG",
    "decoded_views",
    "listing_text",
    "markup_text",
    "selection_views",
]

#: a string escape (strace, JSON) of a quote, backslash, slash, newline or tab
ESCAPED = re.compile(r"\\([\"\\/nt])")


def decoded_views(text: str) -> list[str]:
    """``text`` as printed and with the common encodings a tool writes a file's text in undone:
    XML/HTML entities (``&lt;``, ``&#60;``: a JUnit report, a saved page) and string escapes
    (``\\n``, ``\\"``: strace, JSON). A line's prefix (an offset, a marker) needs no undoing:
    pieces are searched as substrings."""
    views = [text]
    if "&" in text:
        views.append(html.unescape(text))
    for view in list(views):
        if "\\" in view:
            views.append(ESCAPED.sub(lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), view))
    return views


#: no-break and other fixed spaces a mailer or a page writes for a space (``&nbsp;``)
_SPACES = str.maketrans(dict.fromkeys("\xa0\u2007\u202f\u3000", " "))
#: a tag of markup (HTML, XML): what a page wraps its text in
TAG = re.compile(r"<[^<>\n]*>")
_XXD = re.compile(r"^[0-9a-f]{4,}: ((?:[0-9a-f]{2}){1,2}(?: (?:[0-9a-f]{2}){1,2})*)", re.M | re.I)
_HEX_C = re.compile(r"^[0-9a-f]{4,}  ((?:[0-9a-f]{2} {1,2}){1,16})\|", re.M | re.I)
_OD_C = re.compile(r"^[0-7]{7,}((?:    |   \S|  \\\S| [0-7]{3}){1,16})[ \t]*$", re.M)
_OD_ESC = {"n": b"\n", "t": b"\t", "r": b"\r", "0": b"\0", "\\": b"\\"}
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4}\r?\n?){8,}(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
#: ``xxd -p``: lines of bare hex digits (60 a line by default), nothing else
_PLAIN_HEX = re.compile(r"(?:^[0-9a-f]{16,256}\r?$\n?){2,}", re.M | re.I)
#: ``xxd -i``: a C array of bytes (``0x64, 0x65, ...``)
_C_BYTES = re.compile(r"(?:0x[0-9a-f]{2},?\s*){16,}", re.I)
#: ``hexdump`` and ``od`` with no option: 16-bit little-endian words, in hex or in octal
_HEX_WORDS = re.compile(r"^[0-9a-f]{7,} ((?:[0-9a-f]{4} ?){1,8})\s*$", re.M | re.I)
_OCT_WORDS = re.compile(r"^[0-7]{7,} ((?:[0-7]{6} ?){1,8})\s*$", re.M)
#: ``od -An -c``: the character cells without the address column
_OD_C_BARE = re.compile(r"^((?:    |   \S|  \\\S| [0-7]{3}){2,16})[ \t]*$", re.M)
#: markup of pygments' other formatters: RTF control words and groups, groff's font and
#: colour escapes, BBCode's tags
_RTF = re.compile(r"\\[a-z]+-?\d* ?|[{}]")
_GROFF = re.compile(r"\\[fm]\[[^\]\n]*\]|\\[fm][A-Z0-9]")
_BBCODE = re.compile(r"\[/?(?:color|b|i|u|s|font|size|code)(?:=[^\]\n]*)?\]", re.I)
#: a terminal's escape sequences (colours, cursor moves: CSI; OSC titles and links)
ANSI = re.compile(r"\x1b(?:\[[0-9;:?<=>]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
#: the most bytes a gzip stream found in base64 is inflated to
_INFLATE = 64 << 20


def _od_cells(rest: str) -> bytes:
    """The bytes of one ``od -c`` line's cells (four columns each)."""
    out = b""
    for at in range(0, len(rest) - 3, 4):
        cell = rest[at : at + 4].strip()
        if not cell:
            out += b" "
        elif cell.startswith("\\") and len(cell) == 2:
            out += _OD_ESC.get(cell[1], cell[1].encode())
        elif re.fullmatch(r"[0-7]{3}", cell):
            out += bytes([int(cell, 8) & 0xFF])
        else:
            out += cell.encode()
    return out


def _undone(text: str) -> list[str]:
    """``text`` with the encodings a tool or a forge writes a whole file in undone, where it
    holds them: a hex dump (``xxd``, ``hexdump -C``, ``od -c``: the bytes of its cells),
    base64 runs (a forge's ``contents`` answer; gzip inside inflated), percent-encoding."""
    views: list[str] = []
    for pattern in (_XXD, _HEX_C):
        cells = [m[1] for m in pattern.finditer(text)]
        if len(cells) > 1:
            try:
                data = bytes.fromhex("".join(cells).replace(" ", ""))
            except ValueError:
                continue
            views.append(data.decode("utf-8", "replace"))
    cells = [m[1] for m in _OD_C.finditer(text)]
    if len(cells) > 1:
        views.append(b"".join(_od_cells(c) for c in cells).decode("utf-8", "replace"))
    bare = [m[1] for m in _OD_C_BARE.finditer(text)] if not cells else []
    if len(bare) > 1:  # od -An -c: every line of cells, none an address
        views.append(b"".join(_od_cells(c) for c in bare).decode("utf-8", "replace"))
    for pattern, base, width in ((_HEX_WORDS, 16, 4), (_OCT_WORDS, 8, 6)):
        words = [w for m in pattern.finditer(text) for w in m[1].split()]
        if len(words) > 8 and all(len(w) == width for w in words):
            data = b"".join(
                int(w, base).to_bytes(2, "little") for w in words if int(w, base) < 65536
            )
            views.append(data.rstrip(b"\0").decode("utf-8", "replace"))
    for m in _BASE64.finditer(text):
        run = re.sub(r"\s", "", m[0])
        try:
            data = base64.b64decode(run[: len(run) - len(run) % 4], validate=True)
        except (ValueError, binascii.Error):
            continue
        if data[:2] == b"\x1f\x8b":
            try:
                data = zlib.decompressobj(31).decompress(data, _INFLATE)
            except zlib.error:
                continue
        views.append(data.decode("utf-8", "replace"))
    if _PERCENT.search(text):
        views.append(urllib.parse.unquote(text, errors="replace"))
    for pattern in (_PLAIN_HEX, _C_BYTES):  # xxd -p, xxd -i
        for m in pattern.finditer(text):
            digits = re.sub(r"0x|[^0-9a-fA-F]", "", m[0]) if pattern is _C_BYTES else m[0]
            digits = re.sub(r"\s", "", digits)
            try:
                data = bytes.fromhex(digits[: len(digits) - len(digits) % 2])
            except ValueError:
                continue
            views.append(data.decode("utf-8", "replace"))
    return views


#: the characters pygments' LaTeX formatter escapes (``\PYZus{}``, minted's and Sphinx's
#: ``\PYGZus{}``: the command prefix — ``PY`` and letters —, then ``Z`` and two letters, ``{}``)
_LISTING_CHARS = {
    "bs": "\\",
    "ob": "{",
    "cb": "}",
    "ca": "^",
    "us": "_",
    "am": "&",
    "lt": "<",
    "gt": ">",
    "sh": "#",
    "pc": "%",
    "dl": "$",
    "hy": "-",
    "sq": "'",
    "dq": '"',
    "ti": "~",
    "at": "@",
    "lb": "[",
    "rb": "]",
}
_LISTING_ESCAPE = re.compile(r"\\PY[A-Za-z]*Z([a-z]{2})\{\}")
#: a highlighted token of a LaTeX listing: ``\PYG{k+kn}{import}`` (its type, then its text);
#: the macro is pygments' (``\PY``, ``\PYG``, ``\PYGdefault``...), never a document's own
#: two-argument macro (``\textcolor{red}{For the ablation...}``: prose, the s20 red team's FA4)
_LISTING_TOKEN = re.compile(r"\\PY[A-Za-z]*\{[\w+.-]*\}\{((?:[^{}]|\\PY[A-Za-z]*Z[a-z]{2}\{\})*)\}")


def _rtf_text(text: str) -> str:
    """An RTF document's text: its control words and group braces removed, its escaped
    braces and backslashes kept (``{\\cf4\\b return} floor(`` is ``return floor(``)."""
    kept = text.replace("\\\\", "\0b").replace("\\{", "\0o").replace("\\}", "\0c")
    bare = _RTF.sub("", kept.replace("\\par", "\n"))
    return bare.replace("\0b", "\\").replace("\0o", "{").replace("\0c", "}")


def listing_text(text: str) -> str:
    r"""The code a LaTeX listing highlighted by pygments shows (minted, Sphinx's LaTeX builder,
    ``pygmentize -f latex``): each token's macro removed and the escaped characters restored
    (``\PYG{k}{raise} \PYG{n+ne}{ValueError}\PYG{p}{(}`` is ``raise ValueError(``)."""
    bare = _LISTING_TOKEN.sub(lambda m: m[1], text)
    return _LISTING_ESCAPE.sub(lambda m: _LISTING_CHARS.get(m[1], m[0]), bare)


def markup_text(text: str) -> str:
    """The text a page shows: ``text`` with its tags removed, its entities undone and fixed
    spaces read as spaces (``<strong>N</strong>&nbsp;=&nbsp;2`` is ``N = 2``)."""
    return html.unescape(TAG.sub("", text)).translate(_SPACES)


def selection_views(text: str) -> list[str]:
    """The views of what a command selected of a hidden file that the future is looked for
    in: :func:`decoded_views`, then with NUL bytes dropped (a UTF-16 file read as bytes),
    markup removed and entities undone (a page highlighting each token), fixed spaces read as
    spaces (``&nbsp;``), and the encodings of :func:`_undone` undone."""
    views = decoded_views(text)

    def add(view: str) -> None:
        if view and view not in views:
            views.append(view)

    for view in list(views):
        if "\x1b" in view:  # a coloured log (pygments' terminal formatters, rich, pytest)
            add(ANSI.sub("", view))
    for view in list(views):  # pygments' RTF, groff and BBCode listings
        if "\\" in view and ("{" in view or "\\f" in view or "\\m" in view):
            add(_GROFF.sub("", _rtf_text(view)) if "{\\" in view else _GROFF.sub("", view))
        if "[/" in view:
            add(_BBCODE.sub("", view))
    for view in list(views):
        if "\0" in view:
            add(view.replace("\0", ""))
    for view in list(views):
        if "<" in view:
            add(html.unescape(TAG.sub("", view)))
    for view in list(views):
        if any(c in view for c in "\xa0\u2007\u202f\u3000"):
            add(view.translate(_SPACES))
    for view in list(views):
        for undone in _undone(view):
            for more in decoded_views(undone):
                add(more)
    return views
