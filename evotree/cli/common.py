"""Helpers shared by every command module: ``--json`` output, error mapping, the workspace.

The command modules import only click and this module at module level (start-up stays fast)
and the library inside each command.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from typing import Any

import click

from evotree.cli.console import WIDE, console
from evotree.core.errors import EXIT_CODES, EvotreeError

__all__ = [
    "EXIT_CODE_HELP",
    "SHORT_EXIT_CODE_HELP",
    "WIDE",
    "console",
    "fail",
    "missing_mcp",
    "open_workspace",
    "outputs",
    "renderer",
    "session",
    "to_data",
]

EXIT_CODE_HELP = "\b\nExit codes:\n" + "\n".join(
    f"  {code:>3}  {text}" for code, text in EXIT_CODES.items()
)
#: the top-level --help's last lines: the full table is one command away
SHORT_EXIT_CODE_HELP = (
    "\b\nExit codes: 0 success, 1 a bug (please report it), 2 usage error; every other code\n"
    "names one kind of error: `evotree help exit-codes` lists them all (docs/cli.md)."
)


def to_data(result: Any) -> Any:
    if isinstance(result, list):  # run records (run, runs, ingest, import): schema runs
        from evotree.verbs.run_list import RunsResult

        return RunsResult(list(result)).to_dict()
    if hasattr(result, "to_dict"):
        return result.to_dict()
    if is_dataclass(result) and not isinstance(result, type):
        return asdict(result)
    return result


def missing_mcp(command: str, exc: ImportError) -> EvotreeError:
    """The error of a command that needs the MCP SDK where it is not installed (exit 2)."""
    missing = EvotreeError(
        f"evotree {command} needs the MCP SDK ({exc.name or exc} is not installed)",
        fix="pip install 'evotree-rl[agent]'",
    )
    missing.exit_code, missing.code = 2, "missing_dependency"
    return missing


def fail(exc: EvotreeError, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"error": exc.to_dict()}))
    else:
        from evotree.core.text import (
            escape_control,
        )  # messages quote names, paths and text users wrote

        click.secho(f"evotree: error: {escape_control(exc.message)}", fg="red", err=True)
        if exc.fix:
            click.echo(f"  fix: {escape_control(exc.fix)}", err=True)
    raise click.exceptions.Exit(exc.exit_code)


def outputs(
    render: Callable[[Any], None], *, pass_json: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add ``--json`` to a command; print its result with ``render`` or as JSON; map errors.

    With ``pass_json`` the command also receives ``as_json`` (to stay quiet while it works).
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @click.option(
            "--json", "as_json", is_flag=True, help="Print JSON for agents (see `evotree schema`)."
        )
        @functools.wraps(func)
        def wrapper(*args: Any, as_json: bool, **kwargs: Any) -> None:
            if pass_json:
                kwargs["as_json"] = as_json
            try:
                _boundary(refuse=True)
                result = func(*args, **kwargs)
            except EvotreeError as exc:
                fail(exc, as_json)
                return
            # EvoPolicyGym's visibility boundary (evotree.core.visibility): decided after the command,
            # so the output of the one that lifts it (finalize) is shown whole
            hide = _boundary(refuse=False)
            if as_json:
                # indented for a person at a terminal; compact (and 2-3x faster to encode) for agents
                indent = 2 if sys.stdout.isatty() else None
                data = to_data(result)
                click.echo(json.dumps(_redact(data) if hide else data, indent=indent, default=str))
            else:
                render(_redact(result) if hide else result)
            code = getattr(
                result, "exit_code", 0
            )  # a result that is printed and still not a success
            if isinstance(code, int) and code:
                raise click.exceptions.Exit(code)

        return wrapper

    return decorate


def _redact(data: Any) -> Any:
    """``data`` as the verb layer shows it while hidden (:func:`evotree.verbs.policy.shown`: redacted,
    the quick metric where the judge's headline was); redacted alone when no workspace opens."""
    from evotree.verbs.policy import redacted

    ctx = click.get_current_context(silent=True)
    try:
        from evotree.core.workspace import Workspace
        from evotree.verbs.policy import acting, shown

        ws = (
            Workspace.open(ctx.find_root().obj["dir"])
            if ctx is not None and ctx.find_root().obj
            else None
        )
        if ws is not None:
            acting(ws)  # pinned to the signed configuration: the quick metric is named there
    except EvotreeError:
        ws = None
    return redacted(data) if ws is None else shown(ws, data, hide=True)


def _boundary(*, refuse: bool) -> bool:
    """The verb layer's visibility policy (evotree.verbs.policy) for the current command: with
    ``refuse``, raise when it is one that only shows hidden figures; otherwise whether its output
    must be redacted. The decision is the verb layer's; this only finds the workspace."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or ctx.find_root().obj is None:
        return False
    from evotree.core.errors import NoCommits, NotAGitRepository, NotAWorkspace
    from evotree.core.workspace import Workspace
    from evotree.verbs.policy import hidden_now, refuse_hidden

    try:
        ws = Workspace.open(ctx.find_root().obj["dir"])
    except (NotAWorkspace, NotAGitRepository, NoCommits):
        return False  # nothing recorded, nothing to hide (init, help)
    except EvotreeError:
        return (
            not refuse
        )  # before: the command reports why; after it ran: unsure, so hide (fail closed)
    command = " ".join(ctx.command_path.split()[1:])
    if refuse:
        from evotree.core.visibility import REFUSED

        if command in REFUSED or (command.split() and command.split()[0] in REFUSED):
            refuse_hidden(ws, command)
        return False
    return hidden_now(ws)


def renderer(name: str) -> Callable[[Any], None]:
    """A renderer from :mod:`evotree.cli.render`, imported only when text output is printed."""

    def call(result: Any) -> None:
        from evotree.cli import render

        getattr(render, name)(result)

    return call


def open_workspace() -> Any:
    """Open the workspace through the verb layer (what the layers below need passed in); say
    which runs whose driving process died were marked crashed."""
    from evotree.verbs import open_workspace as open_ws

    ws = open_ws(click.get_current_context().find_root().obj["dir"])
    if ws.recovered:
        click.secho(
            f"evotree: marked {len(ws.recovered)} run(s) whose process died as crashed: "
            f"{', '.join(ws.recovered)}",
            fg="yellow",
            err=True,
        )
    return ws


def session() -> Any:
    """The verb layer for the person at this terminal (the workspace's owner), in ``-C DIR``."""
    from evotree.verbs import Session

    return Session(click.get_current_context().find_root().obj["dir"])
