"""Commands of memory and suggestions (issue 6): `evotree memory ...`, `evotree suggest`.

Registered on the ``evotree`` group by :func:`register`; imports only click and
:mod:`evotree.cli` at module level, the library inside each command.
"""

from __future__ import annotations

import click

__all__ = ["register"]


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
