"""The ``evotree`` command line: thin click commands over library functions.

Each command parses its arguments, calls one library function that returns a dataclass, and
prints it: as rich text for people, or with ``--json`` as the documented schema for agents
(``evotree schema NAME``). Errors become one message plus a fix, and a documented exit code.
The group is lazy: only the module of the command that runs is imported (`COMMANDS`).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from evotree.core import __version__
from evotree.cli.common import EXIT_CODE_HELP, SHORT_EXIT_CODE_HELP

__all__ = ["main", "cli", "COMMANDS", "HIDDEN"]

#: Each top-level command, the module of ``evotree.cli`` that registers it, and the one line
#: ``evotree --help`` shows. Only the module of the command that runs is imported, so a command
#: module may import the library at its top and ``--help`` still loads nothing but click.
#: ``tests/test_cli_lazy.py`` checks this table against what each module registers.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("versions", "Turn the current git repository into an evotree workspace."),
    "branch": ("versions", "Create a new version: branch evotree/vN plus its own worktree."),
    "merge": ("versions", "Create a new version whose commit merges versions A and B."),
    "tree": (
        "versions",
        "Show the version tree: id, status, hypothesis, headline score, champion (★).",
    ),
    "show": (
        "versions",
        "Show one version: record, commits since branching, worktree state, its events.",
    ),
    "log": ("versions", "Show the ledger's events, newest first."),
    "diff": (
        "versions",
        "Show what changed from version V to W: parameters, files, headline scores.",
    ),
    "abandon": ("versions", "Abandon a version: record why, remove its worktree, keep its branch."),
    "worktree": ("versions", "Manage version worktrees (prune inactive ones, restore one)."),
    "run": ("runs", "Run versions under the harness: train phase, then the champion's judge."),
    "runs": ("runs", "List the runs recorded on this machine, oldest first."),
    "push": (
        "runs",
        "Share the tree and its evidence: archive finished runs in refs/evotree/runs/, push every ref a clone needs.",
    ),
    "pull": ("runs", "Fetch what a clone needs from REMOTE and write back the runs missing here."),
    "status": (
        "runs",
        "What runs now, and what each version waits for: a run, a fix, or a person's decision.",
    ),
    "logs": (
        "runs",
        "Show a run's logs: the stdout and stderr of its prepare, train and eval phases.",
    ),
    "sql": ("runs", "Query all evidence with DuckDB SQL (read-only: one SELECT)."),
    "ingest": ("runs", "Import a TRL/transformers trainer_state.json as a run of VERSION."),
    "compare": (
        "analysis",
        "Compare version B against version A (delta = B - A) on the same task pool.",
    ),
    "diagnose": (
        "analysis",
        "Diagnose a version's runs: score, signal, behavior and version findings.",
    ),
    "backtest": (
        "analysis",
        "Re-run the analyzers over a version's stored rollouts, without retraining.",
    ),
    "analyzers": (
        "analyzers",
        "Analyzer versions: the diagnostic thresholds' own lineage (hN, on evotree/harness/hN).",
    ),
    "harness": ("analyzers", "Deprecated name of `evotree analyzers` (same commands)."),
    "judge": ("judge", "The judge store: hidden judge data on refs/evotree/judge, in no checkout."),
    "config": ("config", "Inspect and validate evotree.toml."),
    "schema": ("config", "List the JSON schemas of --json outputs, or print one (e.g."),
    "demo": (
        "config",
        "Walk through the loop in a fresh demo repository (default: a temp folder).",
    ),
    "skill": (
        "skills",
        "The skill library: interventions that change training (StdGroupFilter, ...).",
    ),
    "memory": (
        "memory",
        "What the tree learned, kept on refs/evotree/memory (advice, never gate evidence).",
    ),
    "suggest": (
        "memory",
        "Suggest skills for VERSION: its findings mapped to skills, ranked by memory.",
    ),
    "audit": (
        "audit",
        "Leak audits: `evotree audit V` audits version V (run before any promotion).",
    ),
    "gates": (
        "gates",
        "Evaluate every promotion gate for VERSION without promoting (for agents and people).",
    ),
    "promote": ("gates", "Ask a person to promote VERSION to champion, with a signed sign-off."),
    "verify": (
        "gates",
        "Re-check every signed approval in the ledger and where the champion stands.",
    ),
    "approve-run": (
        "gates",
        "Approve costly training runs of VERSION (the train gate), with a signed sign-off.",
    ),
    "report": (
        "report",
        "Write the report of VERSION: verdict, scores with Δ and CI, findings per layer, audit, gates, lineage and plots.",
    ),
    "ci": (
        "report",
        "Continuous integration: a GitHub Actions workflow for evotree/* pull requests.",
    ),
    "serve": (
        "serve",
        "Serve the workspace's verbs to a trainer agent over MCP (Model Context Protocol).",
    ),
    "agent": (
        "agent",
        "Run COMMAND (an agent CLI, a script) as a trainer agent in a bubblewrap sandbox.",
    ),
    "budget": (
        "spend",
        "The tree's spend in USD and hours, each tree budget's left, and the search clock.",
    ),
    "spend": (
        "spend",
        "Agent/API spend: recorded in the ledger (spend.recorded), counted in the USD budgets.",
    ),
    "export": (
        "export",
        "Export runs to the tools you already use: TensorBoard, MLflow, W&B (offline).",
    ),
    "import": (
        "export",
        "Import training logged by another tool as an (ingested, unjudged) run of a version.",
    ),
    "precommit": (
        "export",
        "Audit what is staged in a version's worktree (a pre-commit hook; exit 28 refuses).",
    ),
    "finalize": (
        "finalize",
        "End the search: judge the best validation run once on the held-out split.",
    ),
    "autopilot": (
        "autopilot",
        "Try proposals one by one: branch from the champion, apply, commit, run the seeds the score gate asks for, evaluate the gates; stop post-peak, on the budget, or on futility.",
    ),
    "leaderboard": (
        "leaderboard",
        "Rank agents by the held-out return of their finalized searches (EvoPolicyGym's leaderboard).",
    ),
    "signers": ("signers", "Who may sign promotions: the champion's gates/allowed_signers."),
}

#: Commands that run but ``evotree --help`` does not list (deprecated names).
HIDDEN = frozenset({"harness"})


class LazyGroup(click.Group):
    """The ``evotree`` group: lists commands from :data:`COMMANDS` and imports a command's
    module only when that command is looked up to run (or for its own ``--help``)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module = importlib.import_module(f"evotree.cli.{COMMANDS[cmd_name][0]}")
            module.register(self)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        limit = formatter.width - 6 - max(map(len, self.list_commands(ctx)), default=0)
        rows = [
            (
                name,
                click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit=limit)
                if name in COMMANDS and name not in self.commands
                else self.commands[name].get_short_help_str(limit=limit),
            )
            for name in self.list_commands(ctx)
            if name not in HIDDEN and not (name in self.commands and self.commands[name].hidden)
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=SHORT_EXIT_CODE_HELP,
)
@click.version_option(__version__, prog_name="evotree")
@click.option(
    "-C",
    "directory",
    default=".",
    metavar="PATH",
    type=click.Path(file_okay=False),
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
            from evotree.verbs.results import ExitCodesResult

            click.echo(json.dumps(ExitCodesResult.of(EXIT_CODES).to_dict()))
        else:
            click.echo(EXIT_CODE_HELP.removeprefix("\b\n"))
        return
    if topic is None:
        click.echo(root.get_help())
        return
    command = cli.get_command(root, topic)
    if command is None:
        fail(
            UsageError(
                f"no help topic or command {topic!r}",
                fix="`evotree help exit-codes`, or `evotree --help` lists the commands",
                topic=topic,
            ),
            as_json,
        )
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
