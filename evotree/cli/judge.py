"""The judge store's commands: `judge show`, `judge export`, `judge propose`, `judge promote`, `judge migrate`.

The judge's hidden data (``[eval].judge_paths``) lives on ``refs/evotree/judge``, never in a
checkout; these commands are how its owner looks at it and changes it. Contents are printed
only to a terminal (or with ``--force``) and never in ``--json``, which carries names, sizes
and sha256 only. While validation and held-out data are hidden until ``evotree finalize``
(``[eval] hide_until_finalize``, EvoPolicyGym's boundary), ``--force`` does not apply: only a
person at an interactive terminal (no pipe, no CI, no agent session) who types back the path
and a one-time code gets them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from evotree.cli.common import fail, open_workspace, outputs
from evotree.gates.errors import SignoffRefused
from evotree.verbs.policy import hidden_now
from evotree.cli.signoff import challenge as _challenge
from evotree.gates.signoff import require_human_terminal as _require
from evotree.core.errors import EvotreeError
from evotree.gates.judges import export_judge
from evotree.gates.judges import propose_judge
from evotree.cli.signoff import signoff_command
from evotree.gates.ceremony import judge_signoff
from evotree.gates.judges import migrate_judge

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")

_FORCE_HELP = (
    "Write hidden data even though stdout is not a terminal (you take care of where it goes)."
)


@cli.group()
def judge() -> None:
    """The judge store: hidden judge data on refs/evotree/judge, in no checkout.

    \b
    The files of [eval].judge_paths (validation/held-out pools, reference answers) are
    written only into each run's fresh judge directory. Change them with
      evotree judge export DIR   (outside the repository) -> edit ->
      evotree judge propose DIR  (records who proposes the change) ->
      evotree judge promote DIR  (another person signs it, like a champion promotion).
    """


def _echo_files(files: list[dict[str, Any]], echo: Any = click.echo) -> None:
    for f in files:
        echo(f"  {f['path']:40s} {f['size']:>10d} B  sha256 {f['sha256']}")


def _sign_for_hidden(ws: Any, what: str, path: str) -> bool:
    """While the visibility boundary holds (EvoPolicyGym's ``hide_until_finalize`` before
    ``evotree finalize``), hidden judge data goes only to a person at a terminal who signs for it.

    ``--force`` does not lift this: no pipe, no file, no CI and no agent session (the same checks
    as a sign-off, :func:`evotree.gates.signoff.require_human_terminal`), and the person types
    back ``path`` and a one-time code shown on the terminal. True when the boundary holds (and
    the person signed); False when it does not (the ordinary rule applies)."""
    import os

    if not hidden_now(ws):
        return False
    if os.environ.get("EVOTREE_AGENT_PRINCIPAL"):
        raise SignoffRefused(
            f"refusing to {what}: validation and held-out data stay hidden from agent sessions "
            "until `evotree finalize`",
            fix="a person runs it at their own terminal",
        )
    require_human_terminal(
        action=f"{what} while validation and held-out data are hidden until finalize"
    )

    _challenge(path, True, what="path", shown=f"the path ({path})")  # prompts on stderr
    return True


def require_human_terminal(*, action: str) -> None:
    """:func:`evotree.gates.signoff.require_human_terminal` (stdin, stdout and /dev/tty; no CI)."""

    _require(action=action)


def _refuse_pipe(force: bool, what: str) -> None:

    if force:
        return
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        raise SignoffRefused(
            f"refusing to {what}: stdout is not a terminal, and this is hidden judge data",
            fix="run it yourself at a terminal, or pass --force if you mean to send it there",
        )


@judge.command("show")
@click.argument("path", required=False, metavar="[PATH]")
@click.option("--force", is_flag=True, help=_FORCE_HELP)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="List names, sizes and sha256 as JSON (never contents; see `evotree schema judge-show`).",
)
def judge_show(path: str | None, force: bool, as_json: bool) -> None:
    """List the judge's files (sizes, sha256), or print the file PATH (e.g. judge/gym.toml).

    The judge shown is the one in force: the end of the signed chain in the ledger, not
    whatever refs/evotree/judge points to (a difference is reported). Printing a file shows
    hidden data: refused unless stdout is a terminal or --force is given, and never with --json.
    While the search hides validation and held-out data until `evotree finalize`, --force does
    not apply: only a person at an interactive terminal who types back PATH and a one-time code.
    """

    try:
        if path is not None and as_json:
            raise EvotreeError(
                "--json never carries the judge's contents; it lists names and hashes only",
                fix="drop PATH to list the files, or drop --json to print one at a terminal",
            )
        from evotree.gates.judges import judge_status

        ws = open_workspace()
        status = judge_status(ws)
        if path is not None:
            from evotree.core.errors import InvalidState
            from evotree.harness.judge_store import read_judge_file

            if status.commit is None:
                raise InvalidState(
                    "this workspace has no judge store: its judge files are in the champion's tree",
                    fix="move them: evotree judge migrate",
                )
            if not _sign_for_hidden(ws, f"print {path}", path):
                _refuse_pipe(force, f"print {path}")
            data = read_judge_file(ws.git.repo, status.commit, path)
            click.echo(data.decode("utf-8", errors="replace"), nl=not data.endswith(b"\n"))
            return
    except EvotreeError as exc:
        fail(exc, as_json)
        return
    if as_json:
        click.echo(json.dumps(status.to_dict()))
        return
    if status.commit is None:
        click.echo(
            "no judge store: the judge files are in the champion's tree (a workspace from before the store); "
            "move them with `evotree judge migrate`"
        )
    else:
        click.echo(
            f"judge {status.commit[:10]} ({len(status.files)} files, judge paths: "
            f"{', '.join(status.judge_paths)})"
        )
        _echo_files(status.files)
    if not status.signed:
        click.secho(f"warning: {status.warning}", fg="yellow")
    elif status.ref != status.commit:
        click.secho(
            f"warning: refs/evotree/judge points to {str(status.ref)[:10]}, not the judge in force",
            fg="yellow",
        )


@judge.command("export")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help=_FORCE_HELP)
@outputs(lambda result: _render_export(result))
def judge_export(directory: Path, force: bool) -> Any:
    """Write the judge's files into DIR, a new or empty directory OUTSIDE the repository.

    DIR is laid out like the repository (DIR/judge/gym.toml, ...): edit the files there, then
    `evotree judge promote DIR`. A directory inside the repository or one of its worktrees is
    refused (hidden data would sit in a checkout). Like `judge show PATH`, it is for the owner at
    a terminal: refused when stdout is not a terminal unless --force.
    """

    ws = open_workspace()
    if not _sign_for_hidden(ws, "export the judge's hidden data", str(directory)):
        _refuse_pipe(force, "export the judge's hidden data")
    return export_judge(ws, directory)


def _render_export(result: Any) -> None:
    click.echo(
        f"wrote judge {result.commit[:10]} to {result.directory} ({len(result.files)} files); after editing: "
        f"evotree judge promote {result.directory}"
    )


@judge.command("propose")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@outputs(lambda result: _render_propose(result))
def judge_propose(directory: Path) -> Any:
    """Propose the judge files of DIR as the next judge: records who proposes it (judge.proposed).

    Shows and records what changes (file names, sizes, sha256; never contents) and the
    proposer (your git identity). Nothing is in force until another allowed signer — not the
    proposer — signs `evotree judge promote DIR` on exactly these files.
    """

    return propose_judge(open_workspace(), directory)


def _render_propose(result: Any) -> None:
    click.echo(
        f"proposed judge {result.commit[:10]} (tree {result.tree[:10]}) from {result.directory}, replacing "
        f"{result.previous_commit[:10]}; proposed by {result.proposed_by}"
    )
    for row in result.diff["files"]:
        if row["status"] != "unchanged":
            click.echo(f"  {row['status'].upper():8s} {row['path']}")
    click.echo(f"another allowed signer puts it in force: evotree judge promote {result.directory}")


@judge.command("promote")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--key",
    "key",
    default=None,
    help="Your SSH signing key (default $EVOTREE_SIGNING_KEY, then git config user.signingkey).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON (the diff and prompts go to "
    "stderr; see `evotree schema judge-promote`). Still needs a person at a terminal.",
)
def judge_promote(directory: Path, key: str | None, as_json: bool) -> None:
    """Ask a person to put the judge files of DIR in force, with a signed sign-off.

    The judge scores every run, so it changes like a champion does: shows what changes (each
    file added, changed or removed, with sizes and sha256 — never contents), then the person at
    the terminal types the new judge commit's first 7 characters and a one-time code and
    confirms. The files must have been proposed (`evotree judge propose DIR`) by someone else:
    a proposer cannot approve their own judge change. The statement (new and previous judge commit, sha256 of the diff shown) is signed
    with their SSH key, which must be in the champion's allowed signers; it is recorded in the
    ledger (judge.promoted), then refs/evotree/judge moves (compare-and-swap). DIR must lie
    outside the repository and hold regular files under [eval].judge_paths only. Refused without
    a terminal or under CI (exit 31), for a key not allowed (32), or when the judge in force is
    not signed (33: `evotree verify` says why).
    """

    signoff_command(
        lambda ws, policy: judge_signoff(ws, policy, directory),
        key,
        as_json,
        action="change the judge",
        render=lambda result: (
            f"judge {result.commit[:10]} is in force (was {result.previous_commit[:10]}); "
            f"signed by {result.approver}; diff sha256 {result.diff_hash[:16]}…"
        ),
    )


@judge.command("migrate")
@click.option(
    "--no-branch",
    "no_branch",
    is_flag=True,
    help="Do not branch the version that removes the judge paths; print how to do it instead.",
)
@outputs(lambda result: _render_migrate(result))
def judge_migrate(no_branch: bool) -> Any:
    """Move the champion's judge paths into refs/evotree/judge (a workspace made before the store).

    Takes the files of [eval].judge_paths from the signed champion's commit, writes them as the
    first judge commit and records judge.migrated (no signature: allowed only while the ledger
    has no judge, and `evotree verify` checks the files are exactly the champion's). Runs judge
    with the store from then on. Then branches a version that removes the judge paths from the
    tree; promote it (evotree promote V --allow-policy-change) so no checkout holds them, and
    remove them from your own branch. They stay in git history.
    """

    return migrate_judge(open_workspace(), branch=not no_branch)


def _render_migrate(result: Any) -> None:
    click.echo(
        f"judge {result.commit[:10]} is in force: {len(result.files)} file(s) from {result.champion} "
        f"({result.champion_commit[:10]}) moved to refs/evotree/judge"
    )
    _echo_files(result.files)
    if result.version:
        click.echo(f"{result.version} (worktree {result.worktree}) removes them from the tree")
    click.echo("next:")
    for step in result.next_steps:
        click.echo(f"  - {step}")


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
