"""JSON Schemas of every ``--json`` output: the stable interface agents rely on.

A schema's ``"v"`` is bumped only for an incompatible change; new optional fields may be
added at any time, so readers must ignore keys they do not know.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from evotree.core.errors import EvotreeError

__all__ = ["schema_names", "load_schema"]


def schema_names() -> list[str]:
    """Names accepted by :func:`load_schema` (``tree``, ``show``, ``log``, …)."""
    return sorted(
        p.name.removesuffix(".schema.json")
        for p in resources.files(__name__).iterdir()
        if p.name.endswith(".schema.json")
    )


def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema for the ``--json`` output called ``name``."""
    names = schema_names()
    if name not in names:
        raise EvotreeError(f"unknown schema {name!r}; expected one of {', '.join(names)}",
                           fix="`evotree schema` lists them")
    return json.loads(resources.files(__name__).joinpath(f"{name}.schema.json").read_text())
