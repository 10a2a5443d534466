"""What every ``evotree.toml`` section's fields share: their help text (in the field's
metadata, shown by ``evotree config``) and the error a section's check raises, which
:func:`evotree.core.config.parse_config` turns into a :class:`~evotree.core.errors.ConfigError`
naming the key and its line."""

from __future__ import annotations

from typing import Any

__all__ = ["FieldError", "field_help", "value_error"]


def field_help(text: str) -> dict[str, str]:
    """A field's metadata holding its help text."""
    return {"help": text}


class FieldError(Exception):
    """A section's value is wrong: ``key`` (``section.key``, or the key within the section)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


def value_error(key: str, expected: str, actual: Any) -> FieldError:
    """The error of ``key`` holding ``actual`` where ``expected`` was wanted."""
    return FieldError(key, f"expected {expected}, actually: {actual!r}")
