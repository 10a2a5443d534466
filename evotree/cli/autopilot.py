"""`evotree autopilot`: proposals tried through the verbs, judged by the gates; never signs."""

from __future__ import annotations

from typing import Any

import click

from evotree.cli.common import outputs, session
from evotree.verbs.autopilot import knob_proposals
from evotree.verbs.autopilot import knobs_from_config
from evotree.verbs.autopilot import patch_proposals
from evotree.verbs.autopilot import run_autopilot
from evotree.verbs.autopilot import suggest_proposals
from evotree.core.errors import UsageError

__all__ = ["register"]

cli = click.Group("evotree")


def _render(result: Any) -> None:
    data = result.to_dict()
    click.echo(
        f"autopilot: {len(data['outcomes'])} proposal(s), {data['runs']} run(s) "
        f"({data['champion_runs']} of them champion re-runs); champion {data['start_champion']} -> "
        f"{data['champion']}"
    )
    for o in data["outcomes"]:
        delta = f" Δ {o['delta']:+.4f}" if isinstance(o.get("delta"), (int, float)) else ""
        click.echo(
            f"  {o['version'] or '-':>5}  {o['status']:<14} {o['verdict'] or '':<10}{delta}  "
            f"{o['runs']} run(s)  {o['proposal']['summary']}"
        )
    click.echo(f"stopped: {data['stopped']}: {data['stop_reason']}")
    if data["awaiting_signoff"]:
        click.secho(
            f"{data['awaiting_signoff']} waits for a person's sign-off: "
            f"evotree promote {data['awaiting_signoff']} (the autopilot never signs)",
            fg="green",
        )


def _progress(as_json: bool) -> Any:
    def show(event: str, info: dict[str, Any]) -> None:
        totals = f"[{info['proposals_done']}/{info['proposals']} proposals, {info['runs']} runs]"
        if event == "proposal":
            line = f"{totals} proposal {info['index']}: {info['summary']} (from {info['champion']})"
        elif event == "run":
            line = f"{totals}   run {info['version']} x{info['seeds']} (seeds from {info['seed_start']})"
        elif event == "gate":
            delta = (
                f" Δ {info['delta']:+.4f}" if isinstance(info.get("delta"), (int, float)) else ""
            )
            line = f"{totals}   gates {info['version']}: {info['verdict']}{delta}"
        elif event == "outcome":
            line = f"{totals}   -> {info['version']}: {info['status']}"
        elif event == "stop":
            line = f"{totals} stop: {info['stopped']}"
        else:
            return
        click.echo(line, err=as_json)

    return show


@cli.command("autopilot")
@click.option(
    "--suggest",
    "from_suggest",
    is_flag=True,
    help="Propose what `suggest` offers for the champion.",
)
@click.option(
    "--patches",
    "patches",
    default=None,
    metavar="DIR",
    help="Propose each *.patch / *.diff of DIR, in name order.",
)
@click.option(
    "--max-proposals",
    type=click.IntRange(min=1),
    default=None,
    help="Proposals to try at most (default: [autopilot].max_proposals).",
)
@click.option(
    "--max-runs",
    type=click.IntRange(min=0),
    default=None,
    help="Runs this session may start, champion re-runs included (0: no limit; default [autopilot]).",
)
@click.option(
    "--patience",
    type=click.IntRange(min=1),
    default=None,
    help="Stop after this many proposals in a row not passed (default: [autopilot].patience).",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    default=None,
    help="Seed of the knob proposals' sequence (default: [autopilot].seed).",
)
@click.option(
    "--seeds",
    "first_seeds",
    type=click.IntRange(min=1),
    default=None,
    help="Candidate runs before the first look (default: [gates].min_seeds); the gate asks for more.",
)
@click.option(
    "--skip",
    type=click.IntRange(min=0),
    default=0,
    help="Skip the first N proposals of the sequence (tried by an earlier session).",
)
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Runs in parallel.")
@outputs(_render, pass_json=True)
def autopilot(
    from_suggest: bool,
    patches: str | None,
    max_proposals: int | None,
    max_runs: int | None,
    patience: int | None,
    seed: int | None,
    first_seeds: int | None,
    skip: int,
    jobs: int | None,
    as_json: bool,
) -> Any:
    """Try proposals one by one: branch from the champion, apply, commit, run the seeds the
    score gate asks for, evaluate the gates; stop post-peak, on the budget, or on futility.

    Proposals come from the search space of evotree.toml's [autopilot] (knobs: `NAME = number`
    lines of the recipe moved by whole steps within [low, high], a sequence fixed by its seed),
    from `--suggest`, or from `--patches DIR`. Each proposal is a version whose hypothesis says
    what it tries; versions the gates do not pass are abandoned with the gate's reason. The
    autopilot never signs: it stops at the first version that passes every gate, for a person's
    `evotree promote`.
    """

    verbs = session()
    ws = verbs.act()
    section = ws.config.autopilot
    if from_suggest and patches:
        raise UsageError(
            "--suggest and --patches are two sources: pass one",
            fix="run the autopilot once for each",
        )
    count = max_proposals or section.max_proposals or 8
    if patches:
        proposals = patch_proposals(patches)
    elif from_suggest:
        proposals = suggest_proposals(verbs, ws.champion(), section.recipe or "recipe.toml")
        if not proposals:
            raise UsageError(
                f"suggest offers nothing to try for the champion {ws.champion()}",
                fix=f"suggest reads the champion's findings: evotree run {ws.champion()}; evotree "
                f"diagnose {ws.champion()}; or declare [autopilot.knobs] in evotree.toml",
            )
    else:
        proposals = knob_proposals(
            knobs_from_config(section),
            count=count + skip,
            seed=section.seed if seed is None else seed,
        )
    proposals = proposals[skip:]
    if not proposals:
        raise UsageError(f"--skip {skip} leaves no proposal to try", fix="lower --skip")
    return run_autopilot(
        verbs,
        proposals,
        max_proposals=count,
        max_runs=section.max_runs if max_runs is None else max_runs,
        patience=patience or section.patience or 3,
        futility=section.futility,
        first_seeds=first_seeds,
        jobs=jobs,
        progress=_progress(as_json),
    )


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
