"""Workspace templates and judges: ``math`` (TRL GRPO), ``gym`` (EvoPolicyGym protocol), custom.

Domains use the harness SDK; they never reach into gates.
"""

from pathlib import Path

__all__ = ["write_if_absent"]


def write_if_absent(root: Path, rel: str, text: str, written: list[str]) -> None:
    """Write ``root/rel`` unless it exists (a domain never overwrites a user's file); note it in ``written``."""
    target = Path(root) / rel
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    written.append(rel)
