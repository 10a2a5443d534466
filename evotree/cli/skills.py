"""Commands of skills: `evotree skill list|show|apply`.

Registered on the ``evotree`` group by :func:`register`; imports only click and
:mod:`evotree.cli.main` at module level, the library inside each command.
"""

from __future__ import annotations

from typing import Any

import click
from evotree.core.errors import EvotreeError
from evotree.core.workspace import Workspace
from evotree.core.text import escape_control
from evotree.cli.common import console
from evotree.cli.common import open_workspace
from evotree.cli.common import outputs
from evotree.skills import list_skills
from evotree.verbs.results import SkillDetail
from evotree.verbs.results import SkillListResult
from evotree.skills import get_skill
from evotree.verbs.results import SkillShowResult
from evotree.skills import apply_skill

__all__ = ["parse_param_options", "register"]


def parse_param_options(values: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``--param k=v`` options as a dict; a malformed one is a usage error (exit 2)."""
    out: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(
                f"{item!r} is not KEY=VALUE (e.g. --param min_std=0.1)", param_hint="--param"
            )
        out[key.strip()] = value
    return out


def _domain_here() -> str | None:
    """The workspace's domain when run inside one, else None (listing needs no workspace)."""

    try:
        return Workspace.open(
            click.get_current_context().find_root().obj["dir"]
        ).config.workspace.domain
    except EvotreeError:
        return None


# ------------------------------------------------------------------------------ renderers
def _t(text: Any) -> str:
    """Text for rich: control characters shown escaped, markup shown as typed."""
    from rich.markup import escape

    return escape(escape_control(text))


def _console() -> Any:

    return console(highlight=False)


def _render_list(result: Any) -> None:
    from rich.table import Table

    data = result.to_dict() if hasattr(result, "to_dict") else result  # typed, or its JSON
    domain = data["domain"]
    table = Table(
        title="skills" + (f" (workspace domain: {_t(domain)})" if domain else ""),
        title_justify="left",
    )
    table.add_column("skill", style="bold", no_wrap=True)
    table.add_column("kind", no_wrap=True)
    table.add_column("what it does")
    table.add_column("domains")
    for skill in data["skills"]:
        name = _t(skill["name"])
        if skill["applies"] is False:
            name = f"[dim]{name} (n/a)[/]"
        table.add_row(name, _t(skill["kind"]), _t(skill["title"]), _t(", ".join(skill["domains"])))
    console = _console()
    console.print(table)
    console.print(
        "`evotree skill show NAME` for the details; "
        "`evotree skill apply NAME --to V [--param k=v]` to use one."
    )


def _render_show(result: Any) -> None:
    data = result.to_dict() if hasattr(result, "to_dict") else result  # typed, or its JSON
    console = _console()
    console.print(
        f"[bold]{_t(data['name'])}[/] — {_t(data['title'])}  [dim]({_t(data['kind'])} skill)[/]"
    )
    for key, label in (
        ("trigger", "Trigger"),
        ("intervention", "Intervention"),
        ("expected_outcome", "Expected outcome"),
        ("validation", "Validation"),
    ):
        console.print(f"\n[bold]{label}[/]\n  {_t(data[key])}")
    console.print(f"\n[bold]Domains[/]  {_t(', '.join(data['domains']))}")
    if data["applies"] is False:
        console.print(f"  [yellow]does not apply here:[/] {_t(data['why_not'])}")
    console.print(f"[bold]Addresses[/]  {_t(', '.join(data['addresses']))}")
    console.print(f"[bold]Provenance[/]  {_t(data['provenance'])}")
    console.print("\n[bold]Parameters[/]" + ("" if data["params"] else "  (none)"))
    for p in data["params"]:
        accepted = ""
        if p["range"] is not None:
            low, high = p["range"]
            accepted = f" in [{'-inf' if low is None else low}, {'inf' if high is None else high}]"
        if p["choices"]:
            accepted = f" one of {_t(', '.join(p['choices']))}"
        default = str(p["default"]).lower() if isinstance(p["default"], bool) else p["default"]
        console.print(
            f"  [bold]{_t(p['name'])}[/] ({_t(p['type'])}{accepted}, default "
            f"{_t(repr(default) if isinstance(default, str) else str(default))})"
        )
        console.print(f"      {_t(p['help'])}")


def _render_apply(result: Any) -> None:
    console = _console()
    params = ", ".join(f"{k}={v}" for k, v in result.params.items())
    if not result.changed:
        console.print(
            f"[dim]✓ {_t(result.version)} already has {_t(result.skill)} "
            f"({_t(params)}); nothing changed[/]"
        )
    else:
        console.print(
            f"[green]✓[/] applied [bold]{_t(result.skill)}[/] to "
            f"[bold]{_t(result.version)}[/] ({_t(params) or 'defaults'})"
        )
        console.print(
            f"  commit {result.commit[:10]} on evotree/{_t(result.version)}: "
            f"{_t(result.file)}" + (f" (in {_t(result.worktree)})" if result.worktree else "")
        )
    console.print(
        f"  skills of {_t(result.version)}: "
        f"{_t(', '.join(s.name for s in result.skills) or '-')}; the train phase "
        "activates them at run time"
    )


# ------------------------------------------------------------------------------ commands
def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""

    @cli.group()
    def skill() -> None:
        """The skill library: interventions that change training (StdGroupFilter, ...).

        \b
        Each skill has a trigger, an intervention, an expected outcome, a validation and the
        domains it applies to (EvoTrainer's format), typed parameters and its provenance.
        `skill apply` records one in a version's recipe (skills.toml, a commit on its
        branch) and in the ledger; the train phase activates it when the version runs.
        """

    @skill.command("list")
    @outputs(_render_list)
    def list_() -> Any:
        """List the built-in skills; inside a workspace, those that do not apply to its domain
        are marked."""

        domain = _domain_here()
        return SkillListResult(domain, [SkillDetail.of(info, domain) for info in list_skills()])

    @skill.command()
    @click.argument("name")
    @outputs(_render_show)
    def show(name: str) -> Any:
        """Show one skill: trigger, intervention, expected outcome, validation, domains, the
        finding codes it addresses, its parameters (type, default, range) and provenance."""

        return SkillShowResult.of(get_skill(name), _domain_here())

    @skill.command()
    @click.argument("name")
    @click.option(
        "--to",
        "version",
        required=True,
        metavar="V",
        help="The version whose recipe gets the skill (not the champion: branch first).",
    )
    @click.option(
        "--param",
        "params",
        multiple=True,
        metavar="KEY=VALUE",
        help="A skill parameter (repeatable), e.g. --param min_std=0.1. "
        "Others keep their defaults (`evotree skill show NAME`).",
    )
    @outputs(_render_apply)
    def apply(name: str, version: str, params: tuple[str, ...]) -> Any:
        """Record skill NAME in version V's recipe: skills.toml, committed on V's branch (in its
        worktree when it has one), and a skill.applied event in the ledger.

        \b
        Applying a skill again replaces its parameters. Refused, with nothing written:
        an unknown skill or parameter or a bad value (exit 25), a skill that does not apply
        to the workspace's domain (exit 26), a dirty worktree (exit 8), the champion or an
        abandoned version (exit 10).
        """

        return apply_skill(open_workspace(), version, name, parse_param_options(params))
