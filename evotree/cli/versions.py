"""Version-tree commands: `init`, `branch`, `merge`, `tree`, `show`, `log`, `diff`, `abandon`, `worktree`."""

from __future__ import annotations

from typing import Any

import click

from evotree.cli.common import open_workspace, outputs, renderer, session
from evotree.api import init as init_workspace
from evotree.core.versions import tree_view
from evotree.core.versions import show_version
from evotree.core.versions import log_entries
from evotree.core.diff import diff_markdown
from evotree.core.diff import diff_versions
from evotree.core.versions import prune_worktrees
from evotree.core.versions import restore_worktree

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


# ---------------------------------------------------------------------------- init
@cli.command()
@click.option(
    "--domain",
    type=click.Choice(["custom", "math", "gym"]),
    default="custom",
    show_default=True,
    help="Domain template written into evotree.toml.",
)
@click.option(
    "--signer",
    "signers",
    multiple=True,
    metavar="[EMAIL=]KEY.pub",
    help="An SSH public key allowed to sign promotions, written to v0's gates/allowed_signers (EMAIL, or the "
    "key's comment when it is an address, names the person). Repeatable. See docs/gates.md, solo mode.",
)
@click.option(
    "--protocol",
    type=click.Choice(["evotree", "evopolicygym", "ai4ai", "rsibench-data", "autoresearch"]),
    default="evotree",
    show_default=True,
    help="evopolicygym: the gym domain with EvoPolicyGym's policy contract and scoring (implies --domain "
    "gym; docs/domains/gym.md). ai4ai / rsibench-data: a small task of that protocol's shape and "
    "rules (custom domain; docs/protocols/). autoresearch: karpathy/autoresearch's loop (train.py "
    "editable, prepare.py fixed, a fixed time budget), in an autoresearch repository or as a "
    "worked example (docs/protocols/autoresearch.md).",
)
@click.option(
    "--env",
    "envs",
    multiple=True,
    metavar="ID",
    help="gym domain: an environment to train and judge (repeatable; exactly one with "
    "--protocol evopolicygym).",
)
@outputs(renderer("init_result"))
def init(
    domain: str, signers: tuple[str, ...], protocol: str = "evotree", envs: tuple[str, ...] = ()
) -> Any:
    """Turn the current git repository into an evotree workspace.

    Writes a commented evotree.toml (committed on its own if new), creates .evotree/
    (ignored by git) and records v0 = HEAD as the root and champion. With --signer, v0 also
    holds gates/allowed_signers, so promotions can be signed from the start.
    """

    where = click.get_current_context().find_root().obj["dir"]
    if not signers:  # said before anything is written, on stderr (the --json document stays clean)
        click.secho(
            "evotree: note: no signer (--signer): nobody can sign a promotion yet; add the first one "
            "later with `evotree signers add you@example.org=~/.ssh/id_ed25519.pub --key ~/.ssh/id_ed25519`",
            fg="yellow",
            err=True,
        )
    if protocol in ("ai4ai", "rsibench-data", "autoresearch"):  # the protocol's task and rules
        from evotree.core.errors import EvotreeError
        from evotree.core.workspace import init_workspace as init_with_template
        from evotree.domains.protocols import protocol_template

        if domain != "custom" or envs:
            raise EvotreeError(
                f"--protocol {protocol} writes a custom-domain task; it takes no --domain or --env",
                fix=f"evotree init --protocol {protocol}",
            )
        domain, template = protocol_template(protocol)
        return init_with_template(where, domain=domain, template=template, signers=signers)
    if protocol != "evotree" or envs:  # the gym domain's options: its template takes them
        from evotree.core.workspace import init_workspace as init_with_template
        from evotree.domains.gym.epg_init import init_template

        domain, template = init_template(domain, protocol, envs)
        return init_with_template(where, domain=domain, template=template, signers=signers)
    return init_workspace(where, domain=domain, signers=signers)


# ---------------------------------------------------------------------------- branch
def _render_branch(record: Any) -> None:
    renderer("version_created")(record)
    if record.skills:
        from evotree.core.text import escape_control

        click.echo(
            f"  skills: {escape_control(', '.join(record.skills))} (recorded in skills.toml)"
        )


@cli.command()
@click.option(
    "--from",
    "parent",
    default="champion",
    show_default=True,
    metavar="VERSION",
    help="Version to branch from (or 'champion').",
)
@click.option("--name", default=None, metavar="ID", help="Version id (default: next vN).")
@click.option(
    "-m",
    "--message",
    "hypothesis",
    required=True,
    metavar="TEXT",
    help="The hypothesis: what this version changes and what you expect.",
)
@click.option(
    "--worktree",
    default=None,
    type=click.Path(),
    metavar="PATH",
    help="Worktree location (default: <worktree_dir>/<id>).",
)
@click.option(
    "--skill",
    "skill_names",
    multiple=True,
    metavar="NAME",
    help="Apply this skill to the new version (repeatable; `evotree skill list`).",
)
@click.option(
    "--param",
    "skill_params",
    multiple=True,
    metavar="NAME.KEY=VALUE",
    help="A parameter of a --skill, e.g. --param StdGroupFilter.min_std=0.1 (repeatable).",
)
@outputs(_render_branch)
def branch(
    parent: str,
    name: str | None,
    hypothesis: str,
    worktree: str | None,
    skill_names: tuple[str, ...],
    skill_params: tuple[str, ...],
) -> Any:
    """Create a new version: branch evotree/vN plus its own worktree.

    Records the parent, hypothesis, creator and base commit in the ledger. Safe to run from
    several processes at once: every call gets its own id. With --skill, each skill is
    checked first (nothing is created if one is refused), then recorded in the new version's
    recipe like `evotree skill apply` (a commit and a skill.applied event each).
    """
    skills = None
    if skill_names or skill_params:
        from evotree.skills.recipe import split_skill_params

        skills = split_skill_params(list(skill_names), list(skill_params))
    return session().branch(hypothesis, parent=parent, name=name, worktree=worktree, skills=skills)


# ---------------------------------------------------------------------------- merge
@cli.command()
@click.argument("first", metavar="A")
@click.argument("second", metavar="B")
@click.option("-m", "--message", required=True, metavar="TEXT", help="Why these two are combined.")
@click.option("--name", default=None, metavar="ID", help="Version id (default: next vN).")
@click.option(
    "--worktree", default=None, type=click.Path(), metavar="PATH", help="Worktree location."
)
@outputs(renderer("version_created"))
def merge(first: str, second: str, message: str, name: str | None, worktree: str | None) -> Any:
    """Create a new version whose commit merges versions A and B.

    The ledger records both parents (the tree becomes a DAG). A conflict is reported with
    the files involved and nothing is created.
    """
    return session().merge(first, second, message=message, name=name, worktree=worktree)


# ---------------------------------------------------------------------------- tree / show / log
@cli.command()
@outputs(renderer("tree"))
def tree() -> Any:
    """Show the version tree: id, status, hypothesis, headline score, champion (★).

    Abandoned and failed versions are shown dimmed: they are negative evidence and are
    never deleted.
    """

    return tree_view(open_workspace())


@cli.command()
@click.argument("version")
@outputs(renderer("version_detail"))
def show(version: str) -> Any:
    """Show one version: record, commits since branching, worktree state, its events."""

    return show_version(open_workspace(), version)


@cli.command()
@click.option(
    "--version", "version", default=None, metavar="V", help="Only events of this version."
)
@click.option(
    "-n", "--limit", type=click.IntRange(min=1), default=None, help="At most this many events."
)
@outputs(renderer("log"))
def log(version: str | None, limit: int | None) -> Any:
    """Show the ledger's events, newest first."""

    return {"v": 1, "events": log_entries(open_workspace(), version=version, limit=limit)}


# ---------------------------------------------------------------------------- diff
@cli.command()
@click.argument("first", metavar="V")
@click.argument("second", metavar="W")
@click.option(
    "--md",
    "as_md",
    is_flag=True,
    help="Print Markdown tables (for a PR comment, like `dvc exp diff --md`).",
)
@outputs(renderer("version_diff"), pass_json=True)
def diff(first: str, second: str, as_md: bool, as_json: bool) -> Any:
    """Show what changed from version V to W: parameters, files, headline scores.

    \b
    Parameters come from the structured files of each version's branch tip (TOML, JSON, YAML):
    one row per key whose value differs, appears or disappears (nested keys dotted, e.g.
    train.learning_rate). Other changes are listed per file with added and removed lines;
    `git diff evotree/V evotree/W` shows the lines themselves.
    """

    result = diff_versions(open_workspace(), first, second)
    if as_md and not as_json:
        click.echo(diff_markdown(result), nl=False)
        raise click.exceptions.Exit(0)
    return result


# ---------------------------------------------------------------------------- abandon
@cli.command()
@click.argument("version")
@click.option(
    "--reason",
    required=True,
    metavar="TEXT",
    help="Why it is abandoned (kept as negative evidence).",
)
@click.option("--force", is_flag=True, help="Discard uncommitted changes in its worktree.")
@outputs(renderer("version_abandoned"))
def abandon(version: str, reason: str, force: bool) -> Any:
    """Abandon a version: record why, remove its worktree, keep its branch."""
    ws = open_workspace()
    record = session().abandon(version, reason=reason, force=force)
    try:  # negative evidence for memory; the abandonment above stands whatever happens here
        from evotree.memory.record import record_abandonment

        record_abandonment(ws, record.id, reason)
    except Exception as exc:  # noqa: BLE001 - memory is advice: never undo or fail the abandonment
        click.secho(
            f"evotree: warning: {record.id} is abandoned, but memory was not updated: {exc}",
            fg="yellow",
            err=True,
        )
    return record


# ---------------------------------------------------------------------------- worktree
@cli.group()
def worktree() -> None:
    """Manage version worktrees (prune inactive ones, restore one)."""


@worktree.command("prune")
@click.option("--force", is_flag=True, help="Also remove worktrees with uncommitted changes.")
@outputs(renderer("prune_result"))
def worktree_prune(force: bool) -> Any:
    """Remove worktrees of abandoned and failed versions; forget ones deleted by hand."""

    return prune_worktrees(open_workspace(), force=force)


@worktree.command("restore")
@click.argument("version")
@click.option(
    "--worktree", "path", default=None, type=click.Path(), metavar="PATH", help="Where to put it."
)
@outputs(renderer("version_restored"))
def worktree_restore(version: str, path: str | None) -> Any:
    """Give VERSION a worktree again (abandoned versions too, to inspect them)."""

    return restore_worktree(open_workspace(), version, worktree=path)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
