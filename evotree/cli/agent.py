"""`evotree agent`: run a trainer agent in a sandbox, with the workspace's verbs over MCP."""

from __future__ import annotations

import json
import os
from typing import Any

import click

from evotree.cli.common import fail, missing_mcp
from evotree.core.errors import EvotreeError
from evotree.cli.common import open_workspace
from evotree.cli.common import session

__all__ = ["register"]


# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.command(
    "agent", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option(
    "--as",
    "principal",
    default="agent",
    show_default=True,
    metavar="NAME",
    help="The principal the agent acts for: the server records it as the creator of every "
    "version the agent branches, and it may not approve them. NAME, EMAIL or "
    "'Name <email>'.",
)
@click.option(
    "--versions",
    "versions",
    multiple=True,
    metavar="ID[,ID...]",
    help="Versions whose worktrees the agent may edit (default: the principal's own versions "
    "that are not abandoned). Versions it branches during the session are added.",
)
@click.option(
    "--network",
    is_flag=True,
    help="Give the agent the network (an agent CLI calling a model API needs it); allowed only "
    "when the champion's policy sets [sandbox] agent_network = true.",
)
@click.option(
    "--env",
    "env_names",
    multiple=True,
    metavar="NAME",
    help="Pass this environment variable into the sandbox (e.g. ANTHROPIC_API_KEY); the agent "
    "otherwise gets a fresh environment.",
)
@click.option(
    "--print-config",
    is_flag=True,
    help="Print the MCP client configurations (Claude Code's .mcp.json, Codex's config.toml) "
    "the agent gets, and exit without running anything.",
)
@click.option(
    "--keep", is_flag=True, help="Keep the session's private folder (desk, home) at the end."
)
@click.option(
    "--server-log",
    type=click.File("ab"),
    default=None,
    metavar="FILE",
    help="Append the server's log to FILE.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Errors as JSON; with --print-config, the configurations and the session plan as JSON.",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def agent(
    principal: str,
    versions: tuple[str, ...],
    network: bool,
    env_names: tuple[str, ...],
    print_config: bool,
    keep: bool,
    server_log: object,
    as_json: bool,
    command: tuple[str, ...],
) -> None:
    """Run COMMAND (an agent CLI, a script) as a trainer agent in a bubblewrap sandbox.

    \b
    The agent sees its versions' worktrees (read-write), the champion's recipe
    (read-only, /agent/champion), a desk (/agent, its working directory) and the
    socket of an `evotree serve --as NAME` started for it. It cannot see .git, refs,
    the ledger, the judge's data, signing keys or your home directory; it branches,
    commits, runs, compares and reads gates through the MCP tools. The MCP client
    configuration is written for it: /agent/.mcp.json (Claude Code) and
    $HOME/.codex/config.toml (Codex CLI).

    \b
    Examples:
      evotree agent --as claude --network --env ANTHROPIC_API_KEY -- claude --mcp-config .mcp.json
      evotree agent --as codex --network --env OPENAI_API_KEY -- codex
      evotree agent --as bot -- python my_agent.py     (offline; a script using the mcp SDK)

    The exit code is COMMAND's. See docs/agents.md and docs/threat-model.md.
    """
    try:
        from evotree.server.agent import client_configs, prepare_agent, run_agent
    except ImportError as exc:
        fail(missing_mcp("agent", exc), as_json)
        return
    if print_config and not command:
        _print_configs(client_configs(), as_json)
        return

    try:
        who, asked = _checked_request(principal, versions, env_names, command, print_config)
        open_workspace()  # marks runs whose process died as crashed, and says so
        # the sandbox's settings are the signed champion's: refused when unsigned
        ws = session().act()
        plan = prepare_agent(ws, who, versions=asked, network=network)
        if not as_json:
            shown = ", ".join(plan.versions) or "none yet (branch through the tools)"
            click.secho(
                f"evotree agent: {who} in a sandbox; versions: {shown}; "
                f"network: {'on' if plan.network else 'off'}; desk /agent",
                err=True,
                fg="cyan",
            )
        code = run_agent(
            plan,
            list(command),
            passthrough={n: os.environ[n] for n in env_names},
            server_log=server_log,
            keep=keep,
        )
    except EvotreeError as exc:
        fail(exc, as_json)
        return
    raise click.exceptions.Exit(code)


def _print_configs(configs: dict[str, Any], as_json: bool) -> None:
    """`agent --print-config`: the MCP client configurations the agent gets, as text or JSON."""
    if as_json:
        from evotree.verbs.results import AgentConfigResult

        click.echo(json.dumps(AgentConfigResult(mcp=configs).to_dict()))
        return
    for name, entry in configs.items():
        content = entry["content"]
        text = content if isinstance(content, str) else json.dumps(content, indent=2) + "\n"
        click.echo(f"# {name}: {entry['file']}\n{text}")


def _checked_request(
    principal: str,
    versions: tuple[str, ...],
    env_names: tuple[str, ...],
    command: tuple[str, ...],
    print_config: bool,
) -> tuple[str, list[str]]:
    """The principal and the versions asked for, once the options make a session to run."""
    from evotree.server.agent import AgentError
    from evotree.server.verbs import Principal

    if not command:
        raise AgentError("no command to run", fix="evotree agent --as NAME -- CMD [ARGS...]")
    if print_config:
        raise AgentError(
            "--print-config prints and exits: it takes no command",
            fix="evotree agent --print-config (then run the agent without it)",
        )
    who = str(Principal.parse(principal))
    missing_env = [n for n in env_names if n not in os.environ]
    if missing_env:
        raise AgentError(
            f"--env {', '.join(missing_env)}: not set in this environment",
            fix="export it first, or drop the --env option",
        )
    return who, [v.strip() for item in versions for v in item.split(",") if v.strip()]


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
