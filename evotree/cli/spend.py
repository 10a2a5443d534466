"""Money and time: `budget` (the tree's spend, budgets and search clock) and `spend record`
(agent/API spend). See docs/protocols/budgets.md."""

from __future__ import annotations

from typing import Any

import click

from evotree.cli.common import open_workspace, outputs, session
from evotree.core.text import escape_control
from evotree.harness.money import budget_status

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


def _shown(value: Any) -> str:

    return escape_control(value)


def _render_budget(status: Any) -> None:
    p = status.prices
    click.echo(
        f"prices: {p['usd_per_gpu_hour']:g} USD/GPU hour, {p['usd_per_cpu_hour']:g} USD/CPU hour; a run "
        f"holds {p['gpus_per_run']:g} GPU(s) and {p['cpus_per_run']:g} CPU(s): "
        f"{p['usd_per_run_hour']:g} USD/hour"
    )
    c, r = status.charged, status.reserved
    click.echo(
        f"charged: {c['usd']:g} USD ({c['agent_usd']:g} of it agent/API spend, {c['tokens']} tokens), "
        f"{c['runs']} run(s), {c['wall_hours']:.4g} wall hours, {c['gpu_hours']:.4g} GPU hours, "
        f"{c['cpu_hours']:.4g} CPU hours"
    )
    if c.get(
        "train_hours"
    ):  # measured by evotree: prepare and train, and the judge phase where it trains
        click.echo(
            f"training: {c['train_hours']:.4g} of the wall hours"
            + (
                f" ({c['judge_train_hours']:.4g} of them in the judge phase, [eval] judge_trains)"
                if c.get("judge_train_hours")
                else ""
            )
        )
    f = getattr(status, "finalize", None) or {}
    if f.get("runs"):  # finalize's own account, apart from the search's (exploration) budgets
        click.echo(
            f"finalize account (not in the budgets above): {f['runs']} run(s), {f['usd']:g} USD, "
            f"{f['wall_hours']:.4g} wall hours"
        )
    if r["runs"]:
        click.echo(
            f"reserved: {r['runs']} run(s) not finished, up to {r['usd']:g} USD and {r['wall_hours']:.4g} "
            "wall hours at their limits"
        )
    for row in status.budgets:
        if row["limit"] is None:
            continue
        click.echo(
            f"budget.{row['budget']}: {row['charged']:g} charged + {row['reserved']:g} reserved of "
            f"{row['limit']:g} {row['unit']}, {row['left']:g} left"
        )
    clock = status.clock
    if clock["limit_hours"]:
        click.echo(
            f"search clock: {clock['elapsed_hours']:.3f} of {clock['limit_hours']:g} hours since init "
            f"({clock['started_at']}), {clock['left_hours']:.3f} left, ends {clock['ends_at']}"
        )
    else:
        click.echo(f"search clock: {clock['elapsed_hours'] or 0:.3f} hours since init (no limit)")
    for entry in status.spend[:5]:
        click.echo(
            f"  spend {entry['at']}: {entry['usd']:g} USD by {_shown(entry['actor'])}"
            + (f" for {_shown(entry['version'])}" if entry["version"] else "")
            + f": {_shown(entry['note'])}"
        )
    if status.spent:
        click.secho(
            "spent: new runs are refused; reading the tree, compare and the historical best are not "
            "(evotree tree)",
            fg="yellow",
        )


def _render_spend(result: Any) -> None:
    limit = f" of {result.tree_max_usd:g}" if result.tree_max_usd else ""
    click.echo(
        f"recorded {result.usd:g} USD by {_shown(result.principal)}"
        + (f" for {_shown(result.version)}" if result.version else "")
        + f"; the tree has spent {result.tree_usd:g} USD{limit}"
    )


@cli.command()
@outputs(_render_budget)
def budget() -> Any:
    """The tree's spend in USD and hours, each tree budget's left, and the search clock.

    Charged: finished runs at the prices of [budget] (wall hours x [executor].gpus / cpus) plus
    agent/API spend (`evotree spend record`); reserved: runs not finished, at their limits.
    Read-only; a spent budget refuses new runs (exit 16), never reading the tree.
    """

    return budget_status(open_workspace())


@cli.group()
def spend() -> None:
    """Agent/API spend: recorded in the ledger (spend.recorded), counted in the USD budgets."""


@spend.command("record")
@click.option(
    "--usd", type=float, required=True, help="What was spent, in USD (0 or more, finite)."
)
@click.option("--note", required=True, help="What it was spent on (e.g. 'claude api, session 3').")
@click.option("--tokens", type=int, default=None, help="Tokens used (information).")
@click.option(
    "--version",
    "version",
    default=None,
    metavar="V",
    help="The version it was spent on (its budget too).",
)
@outputs(_render_spend)
def spend_record(usd: float, note: str, tokens: int | None, version: str | None) -> Any:
    """Record agent/API spend; it counts in budget.tree_max_usd (and budget.max_usd of --version).

    The principal is your git identity (the agent server records its --as). Spend cannot be
    taken back: a negative or non-finite amount is refused (exit 2, code invalid_spend).
    """
    return session().spend_record(usd, note, tokens=tokens, version=version)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
