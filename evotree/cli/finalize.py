"""`evotree finalize`: the search's one held-out evaluation (EvoPolicyGym's finalize).

The library is :func:`evotree.gates.finalize.finalize` (its module doc is the design).
"""

from __future__ import annotations

import os
from typing import Any

import click

from evotree.cli.common import open_workspace, outputs
from evotree.core.text import escape_control
from evotree.core.errors import InvalidState
from evotree.gates.finalize import finalize
from evotree.core.errors import UsageError

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


def _render(result: Any) -> None:

    if getattr(result, "dry_run", False):  # --dry-run: what would be judged
        result = result.to_dict()
        chosen = result.get("selected")
        if not chosen:
            click.echo(
                f"dry run: none of the {result['considered']} run(s) succeeded with a validation score; "
                "finalize would record no_ok_submit (nothing judged). Nothing was recorded."
            )
            return
        shown = (
            f", validation mean {chosen['validation']:.6g}"
            if isinstance(chosen.get("validation"), float)
            else ""
        )
        how = "retrain clean and judge" if result.get("retrain") else "judge"
        click.echo(
            f"dry run: finalize would {how} {chosen['run_id']} ({chosen['version']}, commit "
            f"{str(chosen['commit'])[:10]}){shown} once on the held-out split, the best of "
            f"{result['considered']} run(s). Nothing was recorded."
        )
        click.echo(f"rule: {result['rule']}")
        return

    if result.status == "no_ok_submit":
        click.echo(
            f"no_ok_submit: none of the {result.considered} run(s) succeeded with a validation score; "
            "nothing was judged on the held-out split (recorded: the search is finalized)"
        )
        return
    click.echo(
        f"selected {result.selected_run} ({result.version}, commit {str(result.commit)[:10]}): "
        f"validation mean {result.validation_mean:.6g}, the best of {result.considered} run(s)"
    )
    if result.status == "not_finalized":
        click.echo(
            f"the held-out run {result.heldout_run} did not finish ({result.heldout_status}: "
            f"{escape_control(result.error or '')}): evotree's failure, not the candidate's. The search is NOT "
            "finalized: fix the cause and run `evotree finalize` again"
        )
        return
    if result.retrained:
        click.echo(f"retrained clean from its commit (seed {result.seed}), on the finalize account")
    if result.status == "finalized":
        score = f", final score {result.final_score:.4g}" if result.final_score is not None else ""
        click.echo(
            f"held-out: {result.heldout_mean:.6g} ({result.heldout_metric}; run {result.heldout_run}){score}"
        )
    else:
        click.echo(
            f"held-out run {result.heldout_run} {result.heldout_status}: "
            f"{escape_control(result.error or 'no held-out score')} (recorded: the search is finalized)"
        )
    if result.normalized is not None:
        click.echo(
            f"normalized: {result.normalized:.4g} ([eval.normalize]; a search without a held-out score "
            "counts 0 with failed_as_zero)"
        )
    click.echo(f"rule: {result.rule}")


@cli.command("finalize")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show which run would be judged on the held-out split; judge and record nothing.",
)
@click.option(
    "--yes", is_flag=True, help="Confirm without the prompt (needed off a terminal: a script)."
)
@click.option(
    "--version",
    "submitted",
    default=None,
    metavar="VERSION",
    help="The submission: select among this version's runs only (AI4AI-Bench's shape: the "
    "agent names the one patch it submits).",
)
@outputs(_render, pass_json=True)
def finalize_cmd(dry_run: bool, yes: bool, as_json: bool, submitted: str | None) -> Any:
    """End the search: judge the best validation run once on the held-out split.

    \b
    Among the runs that succeeded with a validation headline, the highest validation mean is
    selected (a tie goes to the earliest run, evotree's one tie rule, which `report --tree`'s
    historical best uses too; EvoPolicyGym v0.1.0 §7.3 takes the latest); its commit is judged once
    on the held-out split (a judge-only run of the selected run's trained candidate, or, with
    [eval] finalize_retrain (AI4AI-Bench, evotree init --protocol ai4ai), after its train phase
    runs again, clean, with a fresh seed), charged to a `finalize` account of its own, never to a
    version's or the tree's (exploration) budget. A held-out run evotree itself could not finish
    records an attempt (exit 37) and leaves the search open. The ledger records a `finalize` event;
    a second finalize is refused (exit 10, code already_finalized). With no such run the event
    records no_ok_submit. --version V considers V's runs only (the one submission an agent
    named, AI4AI-Bench's shape). --dry-run shows the run it would judge and records nothing; at a
    terminal the person confirms by typing `finalize`, off a terminal --yes is required. In a
    workspace with [eval] hide_until_finalize (evotree init --protocol evopolicygym or ai4ai)
    validation and held-out figures are shown only from then on.
    Progress goes to stderr; --json prints the event's data.
    """

    if os.environ.get("EVOTREE_AGENT_PRINCIPAL"):
        # a courtesy, not the boundary (an agent's process can unset the variable): ending the
        # search is the operator's step, and an agent gains nothing by it (the held-out result is fixed)
        raise InvalidState(
            "finalize ends the search: a person runs it, not an agent session",
            fix="stop and hand over; the operator runs `evotree finalize`",
        )
    ws = open_workspace()
    if dry_run:
        from evotree.gates.finalize import finalize_plan
        from evotree.verbs.promotion_results import FinalizeDryRun

        return FinalizeDryRun(finalize_plan(ws, submitted), bool(ws.config.eval.finalize_retrain))
    import sys

    if sys.stdin.isatty() and sys.stderr.isatty() and not yes:
        typed = click.prompt(
            "finalize ends the search: one held-out evaluation, never again; type finalize "
            "to go on",
            err=True,
            default="",
            show_default=False,
        )
        if typed.strip() != "finalize":
            raise InvalidState(
                "not confirmed; nothing was judged or recorded",
                fix="see what it would judge with `evotree finalize --dry-run`, then type finalize",
            )
    elif not yes:
        raise UsageError(
            "finalize ends the search (its one held-out evaluation): confirm at a terminal, or pass "
            "--yes from a script",
            fix="evotree finalize --dry-run shows what it would judge; then evotree finalize --yes",
            option="--yes",
        )

    def progress(run_id: str, event: str, info: dict[str, Any]) -> None:
        if event in ("started", "phase", "finished"):
            detail = info.get("phase") or info.get("status") or info.get("version") or ""
            click.echo(f"finalize: {run_id}: {event} {detail}".rstrip(), err=True)

    click.echo("finalize: selecting the best validation run …", err=True)
    if ws.config.eval.finalize_retrain:
        click.echo(
            "finalize: the selected version is retrained clean before its held-out evaluation",
            err=True,
        )
    return finalize(ws, progress=progress, version=submitted)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
