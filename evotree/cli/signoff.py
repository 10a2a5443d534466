"""The one driver of every sign-off ceremony (:mod:`evotree.gates.ceremony`): the face only asks.

A person at a terminal (refused for a pipe or under CI, exit 31), inside the approver's process
(system git and ssh-keygen, no repository program), the workspace's signed policy; the gates
layer builds what must be signed; the key is checked (allowed, not the creator's); what is shown,
the subject and a one-time code typed back, the decision, then the gates layer signs and records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from evotree.gates.signoff import check_typed
from evotree.gates.signoff import new_code
from evotree.cli.common import open_workspace
from evotree.core.safegit import approver_process
from evotree.gates.ceremony import YES_NO
from evotree.gates.errors import SignoffRefused
from evotree.gates.signing import resolve_key
from evotree.gates.signoff import approver_for
from evotree.gates.signoff import require_human_terminal
from evotree.gates.verify import trusted_policy
from evotree.cli.common import fail
from evotree.core.errors import EvotreeError

__all__ = ["ask", "challenge", "run_signoff", "signoff_command"]


def ask(text: str, as_json: bool) -> str:
    """One answer typed at the terminal (prompts go to stderr under ``--json``)."""
    return str(click.prompt(text, err=as_json, default="", show_default=False))


def challenge(
    expected: str, as_json: bool, *, what: str = "version id", shown: str = "the version id"
) -> None:
    """Show a one-time code; the person types ``expected`` (``what``, described as ``shown``) and the code back."""

    code = new_code()
    click.echo(
        f"\nTo sign off, type {shown} and the one-time code {click.style(code, bold=True)}",
        err=as_json,
    )
    typed = ask(what, as_json)
    typed_code = ask("one-time code", as_json)
    check_typed(expected, code, typed, typed_code)


def run_signoff(
    build: Callable[[Any, Any], Any],
    key: str | None,
    as_json: bool,
    *,
    action: str,
    prepare: Callable[[Any, Any, Any], None] | None = None,
) -> Any:
    """Run one ceremony: ``build(ws, policy)`` returns the :class:`~evotree.gates.ceremony.SignOff`;
    ``prepare(request, approver, policy)`` (promote) may evaluate and show more, and set the
    choices, before the challenge. Returns what the gates layer recorded."""

    with approver_process():  # git and ssh-keygen: system programs, no repository setting runs one
        require_human_terminal(action=action)
        ws = open_workspace()
        policy = trusted_policy(ws)
        request = build(ws, policy)
        approver = approver_for(
            request.signing_policy or policy, resolve_key(key, git_root=ws.root), request.creator
        )
        for line in request.lines:
            click.echo(line, err=as_json)
        if prepare is not None:
            prepare(request, approver, policy)
        challenge(request.subject, as_json, what=request.subject_label, shown=request.subject_shown)
        if request.note:
            click.echo(request.note, err=as_json)
        choices = tuple(request.choices)
        if choices == YES_NO:
            if ask(request.question, as_json).strip().lower() != "yes":
                message, fix = request.refusal
                raise SignoffRefused(message, fix=fix)
            decision = "yes"
        else:
            for _attempt in range(3):
                decision = ask(f"decision [{'/'.join(choices)}]", as_json).strip().lower()
                if decision in choices:
                    break
                click.echo(f"{decision!r} is not one of {', '.join(choices)}", err=as_json)
            else:
                raise SignoffRefused(
                    f"no valid decision after 3 tries (choices: {', '.join(choices)}); "
                    "nothing was recorded",
                    fix="run the command again and type one of the choices",
                )
        click.echo(f"signing as {approver.principal} ({approver.fingerprint}) …", err=True)
        text = ""
        if decision in request.text_for:
            while not text.strip():
                text = ask(request.text_for[decision], as_json)
        return request.record(approver, decision, text.strip())


def signoff_command(
    build: Callable[[Any, Any], Any],
    key: str | None,
    as_json: bool,
    *,
    action: str,
    render: Callable[[Any], str | None],
) -> None:
    """A ceremony as a command: :func:`run_signoff`, its error mapped (``fail``), and its result
    printed as JSON or as the line ``render(result)`` gives (a renderer may print itself: ``None``)."""
    import json

    try:
        result = run_signoff(build, key, as_json, action=action)
    except EvotreeError as exc:
        fail(exc, as_json)
        return
    if as_json:
        click.echo(json.dumps(result.to_dict(), default=str))
        return
    line = render(result)
    if line is not None:
        click.echo(line)
