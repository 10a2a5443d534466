"""`evotree signers add`: the first allowed signers of a workspace made without `--signer`."""

from __future__ import annotations

import json

import click

from evotree.cli.common import fail
from evotree.cli.signoff import signoff_command
from evotree.gates.ceremony import signers_signoff
from evotree.cli.common import open_workspace
from evotree.cli.signoff import ask
from evotree.cli.signoff import challenge
from evotree.core.errors import EvotreeError
from evotree.core.errors import InvalidState
from evotree.core.text import escape_control
from evotree.gates.bootstrap import accept_signers
from evotree.gates.bootstrap import unaccepted_signers
from evotree.gates.errors import SignoffRefused
from evotree.gates.signoff import require_human_terminal
from evotree.verbs.promotion_results import SignersAccepted

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.group()
def signers() -> None:
    """Who may sign promotions: the champion's gates/allowed_signers."""


@signers.command("add")
@click.argument("specs", nargs=-1, required=True, metavar="[EMAIL=]KEY.pub...")
@click.option(
    "--key",
    "key",
    default=None,
    help="The new signer's private SSH key, which signs this step "
    "(default $EVOTREE_SIGNING_KEY, then git config user.signingkey).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON (prompts go to stderr). Still needs a person at a terminal.",
)
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

    signoff_command(
        lambda ws, policy: signers_signoff(ws, policy, list(specs)),
        key,
        as_json,
        action="add the first signers",
        render=lambda result: (
            f"allowed signers of {result.champion}: {', '.join(result.signers)} (signed "
            f"by {result.approver}); champion commit {result.commit[:10]} (was "
            f"{result.previous_commit[:10]}). Versions made before this step branch "
            "from the old commit: branch new ones from the champion."
        ),
    )


@signers.command("accept")
@click.argument("ledger_commit", metavar="LEDGER_COMMIT")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON (prompts go to stderr). Still needs a person at a terminal.",
)
def signers_accept(ledger_commit: str, as_json: bool) -> None:
    """Accept signers another clone added (a fetched signers.added step), after checking the key.

    
    A workspace made without --signer gains its first signers by `evotree signers add` in one
    clone; the others fetch that step. A stranger's remote can make an equally valid step with
    their own key, so a fetched step counts here only once a person accepts it: the step's signers
    and key fingerprints are shown, the person checks them with that person (out of band), types
    the signer(s) and a one-time code, and the acceptance is kept in this repository's private
    state (.git/evotree, never pushed). LEDGER_COMMIT: the ledger commit `evotree` names when it
    refuses (a prefix of 7 or more characters).
    """

    try:
        require_human_terminal(action="accept signers")
        ws = open_workspace()
        wanted = ledger_commit.strip().lower()
        steps = [
            s
            for s in unaccepted_signers(ws)
            if len(wanted) >= 7 and s["ledger_commit"].startswith(wanted)
        ]
        if len(steps) != 1:
            raise InvalidState(
                f"no single signers.added step waits for acceptance at {escape_control(ledger_commit)}",
                fix="use the ledger commit evotree named when it refused (evotree log shows them)",
            )
        statement = steps[0]["statement"] or {}
        principals = ", ".join(str(p) for p in statement.get("signers") or [])
        click.echo(
            f"signers.added at ledger {steps[0]['ledger_commit'][:10]}: signers {escape_control(principals)}",
            err=as_json,
        )
        click.echo(
            f"signed by {escape_control(statement.get('approver'))} with key "
            f"{escape_control(statement.get('key'))}; check this fingerprint with that person",
            err=as_json,
        )
        challenge(principals, as_json, what="signer(s)", shown=f"the signer(s) ({principals})")
        if ask("accept these signers here? [yes/no]", as_json).strip().lower() != "yes":
            raise SignoffRefused("not accepted; nothing was recorded", fix="type yes to accept")
        accept_signers(ws, statement)
    except EvotreeError as exc:
        fail(exc, as_json)
        return

    result = SignersAccepted(
        accepted=steps[0]["ledger_commit"], signers=[str(s) for s in statement.get("signers") or []]
    )
    if as_json:
        click.echo(json.dumps(result.to_dict()))
    else:
        click.echo(f"accepted the signers {', '.join(result.signers)} here")


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
