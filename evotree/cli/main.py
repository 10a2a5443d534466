"""The ``evotree`` command line: thin click commands over library functions.

Each command parses its arguments, calls one library function that returns a dataclass, and
prints it: as rich text for people, or with ``--json`` as the documented schema for agents
(``evotree schema NAME``). Errors become one message plus a fix, and a documented exit code.
Heavy modules are imported inside the commands that need them, keeping start-up fast.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from evotree.core import __version__
from evotree.cli import (
    agent,
    analysis,
    audit,
    autopilot,
    config,
    export,
    finalize,
    gates,
    harness,
    judge,
    leaderboard,
    memory,
    report,
    runs,
    serve,
    signers,
    skills,
    spend,
    versions,
)
from evotree.cli.common import EXIT_CODE_HELP, SHORT_EXIT_CODE_HELP

__all__ = ["main", "cli"]


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=SHORT_EXIT_CODE_HELP,
)
@click.version_option(__version__, prog_name="evotree")
@click.option(
    "-C", "directory", default=".", metavar="PATH", type=click.Path(file_okay=False),
    help="Run as if evotree was started in PATH (like git -C).",
)
@click.pass_context
def cli(ctx: click.Context, directory: str) -> None:
    """evotree: a git-native version tree for RL post-training experiments.

    \b
    Every version of your training recipe is a git branch (evotree/vN) with its own
    worktree; every event is a commit on refs/evotree/ledger. Share the tree with
      git push origin 'refs/evotree/*' 'refs/heads/evotree/*'

    \b
    The loop:  init -> branch -> (edit, commit) -> run -> diagnose -> audit -> compare
               -> promote (human sign-off).  `evotree demo` walks through it.
    Every command takes --json (schemas: `evotree schema`).
    """
    ctx.obj = {"dir": directory}


# one module per command group, each with ``register(cli)``: they import only click and
# evotree.cli.common at module level (start-up stays fast) and the library inside the commands
for _module in (versions, runs, analysis, harness, judge, config, skills, memory, audit, gates, report, serve,
                agent, spend, export, finalize, autopilot, leaderboard, signers):
    _module.register(cli)


@cli.command("help")
@click.argument("topic", required=False, metavar="[exit-codes|COMMAND]")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for agents (exit-codes only).")
@click.pass_context
def help_cmd(ctx: click.Context, topic: str | None, as_json: bool) -> None:
    """Show help: `evotree help exit-codes` (every exit code), `evotree help COMMAND`."""
    import json

    from evotree.core.errors import EXIT_CODES, UsageError
    from evotree.cli.common import fail

    root = ctx.find_root()
    if topic in ("exit-codes", "exit_codes", "exit-code"):
        if as_json:
            click.echo(json.dumps({"v": 1, "exit_codes": {str(k): v for k, v in EXIT_CODES.items()}}))
        else:
            click.echo(EXIT_CODE_HELP.removeprefix("\b\n"))
        return
    if topic is None:
        click.echo(root.get_help())
        return
    command = cli.get_command(root, topic)
    if command is None:
        fail(UsageError(f"no help topic or command {topic!r}", fix="`evotree help exit-codes`, or `evotree --help` "
                        "lists the commands", topic=topic), as_json)
        return
    with click.Context(command, info_name=topic, parent=root) as sub:
        click.echo(command.get_help(sub))


class _PipeSafeStream:
    """stdout whose reader may go away (``evotree audit v3 | head -2``): once a write meets a
    closed pipe, the rest of the output goes to /dev/null and the command runs to its end, so
    the process exits with the command's own code (28 for a failed audit), not 1 or 120."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._closed_pipe = False

    def _drop(self) -> None:
        self._closed_pipe = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        if self._closed_pipe:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._drop()
            return len(text)

    def flush(self) -> None:
        if self._closed_pipe:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def main() -> None:
    """Console-script entry point."""
    sys.stdout = _PipeSafeStream(sys.stdout)  # type: ignore[assignment]
    try:
        cli(prog_name="evotree")
    finally:
        try:
            sys.stdout.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
