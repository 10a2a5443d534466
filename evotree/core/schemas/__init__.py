"""The shipped schema files: the old ``_`` names of ``--json`` schemas, each a ``$ref`` to its
current name. Every schema itself is derived from its result type
(:mod:`evotree.verbs.schemas`, which answers for every name, these included).

A schema's ``"v"`` is bumped only for an incompatible change; new optional fields may be
added at any time, so readers must ignore keys they do not know.

Names are lowercase words joined by ``-`` (``memory-entry``, ``skill-list``). The older
``memory_entry``-style names are kept as aliases: their files hold a ``$ref`` to the new name,
so stored references and scripts still resolve (:func:`schema_aliases`).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from evotree.core.errors import UsageError

__all__ = ["schema_names", "schema_aliases", "load_schema"]


def _all_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".schema.json")
        for p in resources.files(__name__).iterdir()
        if p.name.endswith(".schema.json")
    )


def schema_aliases() -> dict[str, str]:
    """Old schema name -> its current name (old names hold ``_``; current names use ``-``)."""
    names = set(_all_names())
    return {
        name: name.replace("_", "-")
        for name in sorted(names)
        if "_" in name and name.replace("_", "-") in names
    }


def schema_names(*, include_aliases: bool = False) -> list[str]:
    """Names accepted by :func:`load_schema` (``tree``, ``show``, ``memory-entry``, …); the old
    ``_`` names too with ``include_aliases``."""
    aliases = schema_aliases()
    return [n for n in _all_names() if include_aliases or n not in aliases]


def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema for the ``--json`` output called ``name`` (an old ``_`` name gives the current schema)."""
    aliases = schema_aliases()
    name = aliases.get(name, name)
    names = schema_names()
    if name not in names:
        raise UsageError(
            f"unknown schema {name!r}; expected one of {', '.join(names)}",
            fix="`evotree schema` lists them",
            schema=name,
        )
    return json.loads(resources.files(__name__).joinpath(f"{name}.schema.json").read_text())
