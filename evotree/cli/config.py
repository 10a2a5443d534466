"""Configuration commands: `config show`, `config check`, `schema`, and `demo`."""

from __future__ import annotations

from typing import Any

import click

from evotree.cli.common import fail, open_workspace, outputs, renderer
from evotree.core.errors import EvotreeError
from evotree.core.config import CONFIG_FILE
from evotree.core.config import parse_config
from evotree.core.config import read_config_text
from evotree.core.errors import ConfigError
from evotree.verbs.results import ConfigCheckResult
from evotree.verbs.schemas import load_schema
from evotree.verbs.schemas import schema_aliases
from evotree.verbs.schemas import schema_names
from evotree.demo import run_demo

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


# ---------------------------------------------------------------------------- config / schema
@cli.group()
def config() -> None:
    """Inspect and validate evotree.toml."""


@config.command("show")
@outputs(renderer("config"))
def config_show() -> Any:
    """Print the configuration in force (read from the champion's tree)."""
    return open_workspace().config


@config.command("check")
@click.argument("path", required=False, type=click.Path(dir_okay=False))
@outputs(renderer("config_check"))
def config_check(path: str | None) -> Any:
    """Validate an evotree.toml (default: the one in the current checkout)."""
    from pathlib import Path

    if path is None:
        from evotree.core.gitio import Git

        target = Git(click.get_current_context().find_root().obj["dir"]).root / CONFIG_FILE
    else:
        target = Path(path)
    if not target.is_file():
        raise ConfigError(
            f"{target} does not exist", fix="pass the path of an evotree.toml", path=str(target)
        )

    parse_config(read_config_text(target), source=str(target))
    return ConfigCheckResult(path=str(target), valid=True)


@cli.command()
@click.argument("name", required=False)
@outputs(renderer("schema"))
def schema(name: str | None) -> Any:
    """List the JSON schemas of --json outputs, or print one (e.g. `evotree schema tree`)."""

    if name is None:
        # `schemas`: every name `evotree schema NAME` accepts (old `_` names included, for scripts that
        # look theirs up); `current`: the names to use; `aliases`: old name -> current name
        from evotree.verbs.results import SchemaListResult

        return SchemaListResult(
            schemas=schema_names(include_aliases=True),
            current=schema_names(),
            aliases=schema_aliases(),
        )
    return load_schema(name)


# ---------------------------------------------------------------------------- demo
@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--keep/--no-keep", default=True, show_default=True, help="Keep the demo workspace.")
def demo(path: str | None, keep: bool) -> None:
    """Walk through the loop in a fresh demo repository (default: a temp folder).

    Runs the real commands as subprocesses and prints each one, so you can repeat them: the gym
    domain's own default policy (its constants as knobs, no planted flaw), `evotree autopilot`
    over six proposals judged by the gates, a promotion of each version that passes signed by a
    second person the demo plays at a pseudo-terminal with a key made for the demo (deleted at
    the end), verify, and side by side what greedy keep-if-better would have kept, what evotree
    kept and the held-out truth of both. About 2-3 minutes on two cores.
    """

    try:
        run_demo(path, keep=keep, echo=click.echo)
    except EvotreeError as exc:
        fail(exc, False)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
