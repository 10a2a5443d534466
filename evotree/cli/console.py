"""The rich console every renderer prints with: the terminal's width, or a wide one off a terminal."""

from __future__ import annotations

from typing import Any

__all__ = ["WIDE", "console"]

#: the width of text printed where no terminal says how wide it is (a log, a pipe, CI): no line is
#: split at rich's default of 80 columns; $COLUMNS, when set, wins
WIDE = 240


def console(**options: Any) -> Any:
    """A rich console for command output: the terminal's width at a terminal, else $COLUMNS or
    :data:`WIDE` (output piped to CI is not wrapped one word per line)."""
    import os

    from rich.console import Console

    probe = Console(**options)
    if probe.is_terminal:
        return probe
    columns = os.environ.get("COLUMNS", "")
    return Console(
        width=int(columns) if columns.isdigit() and int(columns) > 0 else WIDE, **options
    )
