"""Commands of gates (issue 8): `evotree promote`, `evotree verify`, `evotree approve-run`.

Registered on the ``evotree`` group by :func:`register`; imports only click and
:mod:`evotree.cli` at module level, the library inside each command.
"""

from __future__ import annotations

import click

__all__ = ["register"]


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
