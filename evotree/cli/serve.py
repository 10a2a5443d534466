"""`evotree serve`: the trainer agent's verbs as an MCP server.

The command sits on a holder group; :func:`register` moves it onto the ``evotree`` group. The
MCP SDK is imported inside the command (``pip install 'evotree-rl[agent]'``).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from evotree.cli.common import fail
from evotree.cli.common import missing_mcp
from evotree.core.errors import EvotreeError
from evotree.core.workspace import Workspace
from evotree.server.verbs import Principal
from evotree.server.verbs import Verbs
from evotree.server.verbs import pin_principal
from evotree.core.errors import InvalidState

if TYPE_CHECKING:  # the MCP SDK loads only when `serve` runs (an optional extra)
    from evotree.server.tools import EvotreeTools

__all__ = ["register"]


# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.command("serve")
@click.option(
    "--as",
    "principal",
    required=True,
    metavar="NAME",
    help="The principal the server acts for: recorded as the creator of every version it "
    "creates and as the author of its commits and events, whatever git identity "
    "the environment sets. NAME, EMAIL or 'Name <email>'.",
)
@click.option(
    "--socket",
    "socket_path",
    default=None,
    type=click.Path(dir_okay=False),
    metavar="PATH",
    help="Listen on this unix socket (mode 0600; one MCP session per connection) instead of "
    "stdin/stdout.",
)
@click.option(
    "--shutdown-timeout",
    type=click.FloatRange(min=0),
    default=60.0,
    show_default=True,
    help="On exit, seconds to wait for runs in flight to stop and be recorded as cancelled.",
)
@click.option(
    "--worktrees",
    "worktree_dir",
    default=None,
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Put the worktrees of versions this server branches in DIR/<id> (a folder inside the "
    "workspace's worktrees folder; `evotree agent` passes its session's own).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help='Print an error that stops the server from starting as JSON ({"error": ...}) on stdout.',
)
def serve(
    principal: str,
    socket_path: str | None,
    shutdown_timeout: float,
    worktree_dir: str | None,
    as_json: bool,
) -> None:
    """Serve the workspace's verbs to a trainer agent over MCP (Model Context Protocol).

    \b
    Tools: tree, show, log, branch, commit, run (with progress notifications), runs,
    compare, diagnose, suggest, skill_list, skill_show, memory_search, memory_add,
    audit, gates, report, sql (read-only). Results are the documents of
    `evotree CMD --json`; errors carry {"error": {code, exit_code, message, fix}}.
    Promotion, run approval, analyzers promotion, the judge and the policy are not
    served: they stay with people at a terminal.

    \b
    Over stdin/stdout by default (the agent starts the server), e.g. for Claude Code:
      claude mcp add evotree -- evotree -C /path/to/workspace serve --as alice
    With --socket PATH the server outlives its clients; each connection is a session
    (newline-delimited JSON-RPC, as on stdio: `socat - UNIX-CONNECT:PATH` bridges it).
    See docs/agents.md.
    """
    try:
        import anyio

        from evotree.server.tools import build_server, configure_logging
        from evotree.server.transport import serve_stdio, serve_unix_socket
    except ImportError as exc:
        fail(missing_mcp("serve", exc), as_json)
        return

    try:
        who = Principal.parse(principal)
        ws = Workspace.open(click.get_current_context().find_root().obj["dir"])
        if worktree_dir is not None:
            _check_worktree_dir(ws, worktree_dir)
    except EvotreeError as exc:
        fail(exc, as_json)
        return
    # every git identity of this process is the principal's from here on
    pin_principal(who, os.environ)
    configure_logging()
    app, tools = build_server(Verbs(ws.root, who, worktree_dir))
    serve_on = (
        (lambda: serve_unix_socket(app, socket_path))
        if socket_path is not None
        else (lambda: serve_stdio(app))
    )

    error: EvotreeError | None = None
    try:
        anyio.run(_until_signal, serve_on, tools, socket_path is None, shutdown_timeout)
    except* EvotreeError as group:
        error = group.exceptions[0]  # type: ignore[assignment]
    finally:
        _report_left(tools.shutdown(shutdown_timeout))
    if error is not None:
        fail(error, as_json)


def _check_worktree_dir(ws: Workspace, worktree_dir: str) -> None:
    """Refuse a --worktrees folder that is not an existing folder inside the worktrees folder."""
    base = ws.worktree_path("v0").parent.resolve()
    wanted = Path(worktree_dir).resolve()
    if base not in wanted.parents or not wanted.is_dir() or Path(worktree_dir).is_symlink():
        raise InvalidState(
            f"--worktrees {worktree_dir}: expected an existing folder inside the "
            f"worktrees folder {base}",
            fix=f"mkdir {base}/NAME and pass it",
        )


async def _until_signal(
    serve_on: Callable[[], Awaitable[None]],
    tools: EvotreeTools,
    stdio: bool,
    shutdown_timeout: float,
) -> None:
    """Serve until the transport ends or SIGTERM/SIGINT arrives.

    Over stdio a signal stops the runs in flight, then leaves at once: the SDK reads stdin in a
    thread that no cancellation interrupts. Over a socket it cancels the server's task group."""
    import anyio

    async with anyio.create_task_group() as group:

        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    if stdio:
                        left = await anyio.to_thread.run_sync(tools.shutdown, shutdown_timeout)
                        _report_left(left)
                        sys.stderr.flush()
                        os._exit(0)
                    group.cancel_scope.cancel()
                    return

        group.start_soon(on_signal)
        await serve_on()
        group.cancel_scope.cancel()


def _report_left(left: int) -> None:
    """Warn on stderr about calls still running when the server exits."""
    if left:
        click.secho(
            f"evotree serve: {left} call(s) still running at exit; runs left behind are "
            "marked crashed by the next evotree command",
            fg="yellow",
            err=True,
        )


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
