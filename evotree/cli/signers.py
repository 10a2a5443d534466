"""`evotree signers add`: the first allowed signers of a workspace made without `--signer`."""

from __future__ import annotations

import json

import click

from evotree.cli.common import fail

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.group()
def signers() -> None:
    """Who may sign promotions: the champion's gates/allowed_signers."""


@signers.command("add")
@click.argument("specs", nargs=-1, required=True, metavar="[EMAIL=]KEY.pub...")
@click.option("--key", "key", default=None, help="The new signer's private SSH key, which signs this step "
              "(default $EVOTREE_SIGNING_KEY, then git config user.signingkey).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (prompts go to stderr). "
              "Still needs a person at a terminal.")
def signers_add(specs: tuple[str, ...], key: str | None, as_json: bool) -> None:
    """Add the first allowed signers, while the workspace has none.

    \b
    A workspace made with `evotree init` without --signer cannot promote: nobody may sign, and
    the allowed signers change only through a signed promotion. This breaks that circle once,
    for a person at a terminal: the champion's commit gains gates/allowed_signers (nothing else
    changes), the step is signed by the new key (--key, checked against the new file) and
    recorded in the ledger (signers.added); `evotree verify` checks it. Refused once any signer
    exists: then edit gates/allowed_signers on a version and promote it. Example:
      evotree signers add you@example.org=~/.ssh/id_ed25519.pub --key ~/.ssh/id_ed25519
    """
    from evotree.cli.signoff import run_signoff
    from evotree.core.errors import EvotreeError
    from evotree.gates.ceremony import signers_signoff

    try:
        result = run_signoff(lambda ws, policy: signers_signoff(ws, policy, list(specs)), key, as_json,
                             action="add the first signers")
    except EvotreeError as exc:
        fail(exc, as_json)
        return
    if as_json:
        click.echo(json.dumps(result.to_dict(), default=str))
    else:
        click.echo(f"allowed signers of {result.champion}: {', '.join(result.signers)} (signed by {result.approver}); "
                   f"champion commit {result.commit[:10]} (was {result.previous_commit[:10]}). "
                   "Versions made before this step branch from the old commit: branch new ones from the champion.")


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
