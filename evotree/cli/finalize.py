"""`evotree finalize`: the search's one held-out evaluation (EvoPolicyGym's finalize; issue 19 item 2).

The library is :func:`evotree.gates.finalize.finalize` (its module doc is the design).
"""

from __future__ import annotations

import os
from typing import Any

import click

from evotree.cli.common import open_workspace, outputs

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


def _render(result: Any) -> None:
    from evotree.core.text import escape_control

    if result.status == "no_ok_submit":
        click.echo(f"no_ok_submit: none of the {result.considered} run(s) succeeded with a validation score; "
                   "nothing was judged on the held-out split (recorded: the search is finalized)")
        return
    click.echo(f"selected {result.selected_run} ({result.version}, commit {str(result.commit)[:10]}): "
               f"validation mean {result.validation_mean:.6g}, the best of {result.considered} run(s)")
    if result.status == "finalized":
        score = f", final score {result.final_score:.4g}" if result.final_score is not None else ""
        click.echo(f"held-out: {result.heldout_mean:.6g} ({result.heldout_metric}; run {result.heldout_run}){score}")
    else:
        click.echo(f"held-out run {result.heldout_run} {result.heldout_status}: "
                   f"{escape_control(result.error or 'no held-out score')} (recorded: the search is finalized)")
    click.echo(f"rule: {result.rule}")


@cli.command("finalize")
@outputs(_render, pass_json=True)
def finalize_cmd(as_json: bool) -> Any:
    """End the search: judge the best validation run once on the held-out split.

    \b
    Among the runs that succeeded with a validation headline, the highest validation mean is
    selected (a tie goes to the earliest run, evotree's one tie rule, which `report --tree`'s
    historical best uses too; EvoPolicyGym v0.1.0 §7.3 takes the latest); its commit is judged once
    on the held-out split (a judge-only run, no train phase), charged to a `finalize` account of
    its own, never to a version's or the tree's budget. The ledger records a `finalize` event;
    a second finalize is refused (exit 10, code already_finalized). With no such run the event
    records no_ok_submit. In a workspace with [eval] hide_until_finalize (evotree init
    --protocol evopolicygym) validation and held-out figures are shown only from then on.
    Progress goes to stderr; --json prints the event's data.
    """
    from evotree.core.errors import InvalidState
    from evotree.gates.finalize import finalize

    if os.environ.get("EVOTREE_AGENT_PRINCIPAL"):
        # a courtesy, not the boundary (an agent's process can unset the variable): ending the
        # search is the operator's step, and an agent gains nothing by it (the held-out result is fixed)
        raise InvalidState("finalize ends the search: a person runs it, not an agent session",
                           fix="stop and hand over; the operator runs `evotree finalize`")
    ws = open_workspace()

    def progress(run_id: str, event: str, info: dict[str, Any]) -> None:
        if event in ("started", "phase", "finished"):
            detail = info.get("phase") or info.get("status") or info.get("version") or ""
            click.echo(f"finalize: {run_id}: {event} {detail}".rstrip(), err=True)

    click.echo("finalize: selecting the best validation run …", err=True)
    return finalize(ws, progress=progress)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
