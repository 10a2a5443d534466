"""`evotree leaderboard DIR…`: EvoPolicyGym's rank-normalized table over finalized searches.

The library is :mod:`evotree.report.leaderboard` (its module doc is the rule).
"""

from __future__ import annotations

from typing import Any

import click

from evotree.cli.common import outputs
from evotree.core.text import escape_control
from evotree.report.leaderboard import render_markdown
from evotree.report.leaderboard import leaderboard
from evotree.report.leaderboard import load_search
from evotree.report.leaderboard import parse_spec

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


def _render(board: Any) -> None:

    click.echo(escape_control(render_markdown(board)), nl=False)
    for entry in board.searches:
        if entry.status != "finalized":
            click.echo(
                escape_control(
                    f"note: {entry.agent} at {entry.path}: {entry.status} (no held-out return: "
                    "ranked last on its environments)"
                ),
                err=True,
            )


@cli.command("leaderboard")
@click.argument("searches", nargs=-1, required=True, metavar="[AGENT[:HARNESS]=]DIR…")
@outputs(_render)
def leaderboard_cmd(searches: tuple[str, ...]) -> Any:
    """Rank agents by the held-out return of their finalized searches (EvoPolicyGym's leaderboard).

    \b
    Each DIR is a workspace whose search `evotree finalize` ended; AGENT (default: the
    directory's name) and HARNESS label its row; several DIRs of one agent on one
    environment are repeats (their held-out means are averaged). Per environment the agents
    are ranked by held-out mean return and scored (n - place + 1) / n (ties share); the table
    shows the category means (Gym/Box2D, MuJoCo, MiniGrid, Robotics/Driving), the overall
    mean, and how many environments each agent placed 1st and in the top 2. A search not
    finalized, or finalized without a held-out return (no_ok_submit, heldout_failed), ranks last.
    """

    entries = []
    for spec in searches:
        agent, harness, directory = parse_spec(spec)
        entries.append(load_search(directory, agent=agent, harness=harness))
    return leaderboard(entries)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
