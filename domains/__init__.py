"""Workspace templates and judges: ``math`` (TRL GRPO), ``gym`` (EvoPolicyGym protocol), custom.

Domains use the harness SDK; they never reach into gates.
"""

import importlib
from collections.abc import Callable, Iterable
from pathlib import Path

from evotree.core.errors import EvotreeError

__all__ = ["DOMAINS", "domain_template", "write_if_absent"]

#: the bundled domains; ``custom`` has no template (the user writes the train and judge commands)
DOMAINS = ("custom", "math", "gym")


def domain_template(domain: str) -> Callable[[Path], Iterable[str]] | None:
    """The function that writes ``domain``'s workspace files (``None`` for ``custom``)."""
    if domain == "custom":
        return None
    if domain not in DOMAINS:
        raise EvotreeError(
            f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}",
            fix="pass --domain custom, math or gym",
        )
    module = importlib.import_module(f"evotree.domains.{domain}")
    return module.materialize


def write_if_absent(root: Path, rel: str, text: str, written: list[str]) -> None:
    """Write ``root/rel`` unless it exists (a domain never overwrites a user's file); note it in ``written``."""
    target = Path(root) / rel
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    written.append(rel)
