"""Showing text that users and agents wrote: control characters made visible.

Hypotheses, reasons, commit messages, file names, metric names and error text come from people
and agents, and an agent's text can carry terminal escape sequences (``ESC[8m`` hides what
follows, ``ESC]8;;`` makes links, a bare carriage return overwrites a line), a newline followed
by a line that imitates evotree's own output (``commit: 000...``), or Unicode bidi overrides that
show a text in another order than it is stored (Trojan Source). Every renderer passes such
fields through :func:`escape_control` first, so what a person reads is what was stored.
"""

from __future__ import annotations

__all__ = ["CONTROL_ESCAPES", "escape_control"]

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}

#: code point -> its visible form: C0 controls (NUL..US), DEL, C1 controls (U+0080..U+009F), the
#: bidi embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069), the bidi marks
#: (U+200E, U+200F, U+061C) and the Unicode line and paragraph separators (U+2028, U+2029).
CONTROL_ESCAPES: dict[int, str] = {
    **{c: _NAMED.get(chr(c), f"\\x{c:02x}") for c in range(0x20)},
    0x7F: "\\x7f",
    **{c: f"\\x{c:02x}" for c in range(0x80, 0xA0)},
    **{
        c: f"\\u{c:04x}"
        for c in (
            *range(0x202A, 0x202F),
            *range(0x2066, 0x206A),
            0x200E,
            0x200F,
            0x061C,
            0x2028,
            0x2029,
        )
    },
}
_KEEP_NEWLINES = {c: e for c, e in CONTROL_ESCAPES.items() if c != 0x0A}


def escape_control(text: object, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character written out visibly (``\\x1b``, ``\\n``, ``\\u202e``).

    Printable text (the common case) comes back unchanged. ``keep_newlines`` keeps ``\\n`` for a
    renderer that means to print several lines; carriage returns are escaped even then.
    ``None`` is shown as the empty string.
    """
    if text is None:
        return ""
    text = text if isinstance(text, str) else str(text)
    if text.isprintable():  # every character escaped here is non-printable: nothing to do
        return text
    return text.translate(_KEEP_NEWLINES if keep_newlines else CONTROL_ESCAPES)
