"""Harness-version commands: `harness branch`, `harness list`, `harness promote`."""

from __future__ import annotations

from typing import Any

import click

from evotree.cli.common import open_workspace, outputs, renderer
from evotree.gates.harnesses import create_harness
from evotree.gates.harnesses import list_harnesses
from evotree.verbs.promotion_results import HarnessListResult
from evotree.cli.signoff import signoff_command
from evotree.core.text import escape_control as esc
from evotree.gates.ceremony import harness_signoff

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.group()
def harness() -> None:
    """Harness versions: the diagnostic thresholds' own lineage (evotree/harness/hN)."""


@harness.command("branch")
@click.option(
    "-m",
    "--message",
    "hypothesis",
    required=True,
    metavar="TEXT",
    help="What the new thresholds should catch.",
)
@outputs(renderer("harness_created"))
def harness_branch(hypothesis: str) -> Any:
    """Create harness version hN from the active one: a branch plus a worktree with harness.toml."""

    return create_harness(open_workspace(), hypothesis=hypothesis)


@harness.command("list")
@outputs(renderer("harness_list"))
def harness_list() -> Any:
    """List harness versions; the active one judges every `evotree diagnose`."""

    return HarnessListResult.of(list_harnesses(open_workspace()))


@harness.command("promote")
@click.argument("harness_id", metavar="HN")
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
    "stderr; see `evotree schema harness-promote`). Still needs a person at a terminal.",
)
def harness_promote(harness_id: str, key: str | None, as_json: bool) -> None:
    """Ask a person to put harness version HN in force, with a signed sign-off.

    The harness decides what `evotree diagnose` and the signal gate flag, so it changes like a
    champion does: shows what changes (each threshold against the harness in force, and whether
    analyzers.py is added or changed, with its sha256), then the person at the terminal types
    HN and a one-time code and confirms. The statement (harness, its commit, the previous
    harness and commit, sha256 of the diff shown) is signed with their SSH key, which must be
    in the champion's allowed signers and not belong to HN's creator; it is recorded in the
    ledger, then refs/evotree/harness moves (compare-and-swap). HN may be h0 (the built-in
    harness). Refused without a terminal or under CI (exit 31), for a key not allowed (32),
    or when the harness in force is not signed (33: `evotree verify` says why).
    """

    signoff_command(
        lambda ws, policy: harness_signoff(ws, policy, harness_id),
        key,
        as_json,
        action="promote a harness",
        render=lambda result: (
            f"harness {result.harness} is in force (was {result.previous_harness}); "
            f"signed by {esc(result.approver)}; diff sha256 {result.diff_hash[:16]}…"
        ),
    )


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
