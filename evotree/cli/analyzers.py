"""Analyzer-version commands: `analyzers branch`, `analyzers list`, `analyzers promote`.

`evotree harness ...` (the lineage's first name) still runs the same commands: a hidden,
deprecated alias that says so on stderr, so existing scripts keep working.
"""

from __future__ import annotations

from typing import Any

import click

from evotree.cli.common import open_workspace, outputs, renderer
from evotree.cli.signoff import signoff_command
from evotree.core.text import escape_control as esc
from evotree.gates.analyzer_versions import create_analyzer_version, list_analyzer_versions
from evotree.gates.ceremony import analyzers_signoff
from evotree.verbs.promotion_results import AnalyzersListResult

__all__ = ["DEPRECATION", "register"]

#: What `evotree harness ...` prints on stderr before it runs the `analyzers` command.
DEPRECATION = "evotree: `evotree harness` is deprecated; use `evotree analyzers` (same commands)"

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.group()
def analyzers() -> None:
    """Analyzer versions: the diagnostic thresholds' own lineage (hN, on evotree/harness/hN)."""


@analyzers.command("branch")
@click.option(
    "-m",
    "--message",
    "hypothesis",
    required=True,
    metavar="TEXT",
    help="What the new thresholds should catch.",
)
@outputs(renderer("analyzers_created"))
def analyzers_branch(hypothesis: str) -> Any:
    """Create analyzer version hN from the one in force: a branch plus a worktree with
    harness.toml (its thresholds)."""

    return create_analyzer_version(open_workspace(), hypothesis=hypothesis)


@analyzers.command("list")
@outputs(renderer("analyzers_list"))
def analyzers_list() -> Any:
    """List analyzer versions; the one in force judges every `evotree diagnose`."""

    return AnalyzersListResult.of(list_analyzer_versions(open_workspace()))


@analyzers.command("promote")
@click.argument("analyzers_id", metavar="HN")
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
    "stderr; see `evotree schema analyzers-promote`). Still needs a person at a terminal.",
)
def analyzers_promote(analyzers_id: str, key: str | None, as_json: bool) -> None:
    """Ask a person to put analyzer version HN in force, with a signed sign-off.

    The analyzers decide what `evotree diagnose` and the signal gate flag, so they change like a
    champion does: shows what changes (each threshold against the version in force, and whether
    analyzers.py is added or changed, with its sha256), then the person at the terminal types
    HN and a one-time code and confirms. The statement (the version, its commit, the previous
    version and commit, sha256 of the diff shown) is signed with their SSH key, which must be
    in the champion's allowed signers and not belong to HN's creator; it is recorded in the
    ledger, then refs/evotree/harness moves (compare-and-swap). HN may be h0 (the built-in
    analyzers). Refused without a terminal or under CI (exit 31), for a key not allowed (32),
    or when the analyzers in force are not signed (33: `evotree verify` says why).
    """

    signoff_command(
        lambda ws, policy: analyzers_signoff(ws, policy, analyzers_id),
        key,
        as_json,
        action="promote an analyzer version",
        render=lambda result: (
            f"analyzer version {result.analyzers} is in force (was {result.previous_analyzers}); "
            f"signed by {esc(result.approver)}; diff sha256 {result.diff_hash[:16]}…"
        ),
    )


def _deprecated_alias() -> None:
    click.echo(DEPRECATION, err=True)


#: `evotree harness ...`: the same commands under the lineage's first name, hidden from --help
harness = click.Group(
    "harness",
    commands=dict(analyzers.commands),
    callback=_deprecated_alias,
    hidden=True,
    help="Deprecated name of `evotree analyzers` (same commands).",
)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
    root.add_command(harness, "harness")
