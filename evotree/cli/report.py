"""Commands of reports: `evotree report`, `evotree ci init`.

The commands sit on a holder group; :func:`register` moves them onto the ``evotree`` group
(which imports this module only when one of them runs).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from evotree.cli.common import console as make_console
from evotree.core.text import escape_control as shown
from evotree.report.search import render_markdown
from evotree.report.search import render_text
from evotree.cli.common import open_workspace
from evotree.core.errors import UsageError
from evotree.core.workspace import Workspace
from evotree.report.search import SearchParams
from evotree.report.search import search_report
from evotree.report.search import write_search_report
from evotree.cli.common import outputs
from evotree.report.files import write_report
from evotree.cli.common import session
from evotree.report.ci import write_workflow

__all__ = ["register"]


def _render_report(result: Any) -> None:
    if getattr(result, "search_format", None):  # `report --tree` (evotree.report.search)
        _render_tree(result)
        return

    console = make_console(highlight=False)
    verdict = result.verdict
    console.print(f"{shown(verdict['icon'])} {shown(verdict['line'])}", markup=False)
    for note in verdict.get("notes") or []:
        console.print(f"  {shown(note)}", markup=False)
    console.print(f"wrote {shown(result.format)}: {shown(result.path)}", markup=False)
    for extra in result.files[1:]:
        console.print(f"  + {shown(extra)}", markup=False)
    if result.posted:
        posted = result.posted
        console.print(
            f"{shown(posted['action'])} comment {shown(posted['comment_id'])} on pull request "
            f"#{shown(posted['pull_request'])} of {shown(posted['repository'])}"
            + (f": {shown(posted['url'])}" if posted.get("url") else ""),
            markup=False,
        )


def _render_tree(result: Any) -> None:

    if result.path:
        click.echo(f"wrote {shown(result.path)}")
        for setting in result.settings:
            click.echo(f"  {shown(setting.setting)}: {shown(setting.recommendation['line'])}")
        return
    if result.search_format == "json":
        import json

        click.echo(json.dumps(result.to_dict(), indent=2))
        return
    click.echo(
        render_markdown(result) if result.search_format == "md" else render_text(result), nl=False
    )


def _tree_report(
    workspaces: tuple[str, ...],
    fmt: str | None,
    out: str | None,
    epsilon: float,
    margin: float,
    patience: int,
    max_after_peak_share: float,
    direction: str,
) -> Any:
    """`evotree report --tree`: search-level statistics of this workspace or of each --workspace."""

    if fmt == "html":
        raise UsageError(
            "report --tree has no HTML format", fix="--format md (the default) or --format json"
        )
    params = SearchParams(
        epsilon=epsilon,
        margin=margin,
        patience=patience,
        max_after_peak_share=max_after_peak_share,
        direction=direction,
    )
    spaces = [Workspace.open(path) for path in workspaces] if workspaces else [open_workspace()]
    result = search_report(spaces, params=params)
    if out is not None:
        write_search_report(result, out, fmt=fmt or "md")
    result.search_format = fmt or "text"
    return result


def _check_version_options(
    version: str | None,
    workspaces: tuple[str, ...],
    fmt: str,
    post: bool,
    plots_url_base: str | None,
    publish_plots: bool,
) -> None:
    """Refuse option combinations a one-version report cannot honour, before any work."""

    if version is None or workspaces:
        raise UsageError(
            "report needs a VERSION (--workspace only goes with --tree)",
            fix="evotree report VERSION, or evotree report --tree",
        )
    if publish_plots and (not post or fmt != "md" or plots_url_base):
        raise UsageError(
            "--publish-plots goes with --post and --format md, without --plots-url-base",
            fix="evotree report VERSION --post --publish-plots",
        )


def _post_report(
    ws: Workspace,
    data: Any,
    result: Any,
    fmt: str,
    plots_url_base: str | None,
    publish_plots: bool,
    pull_request: int | None,
    progress: Callable[[str], None],
) -> dict[str, Any]:
    """`report --post`: link or publish the plots, then create or update the PR comment."""
    from evotree.report.github import post_comment
    from evotree.report.markdown import png_size, render_markdown

    note = (
        "Plots (scores, reward, entropy, dead groups, per-task Δ) are in the `evotree-report` artifact "
        "of this workflow run, or run `evotree report` locally."
    )
    images = None
    folder = Path(result.path).parent
    files = {name: str(folder / file) for name, file in data.plots.items()} if fmt == "md" else {}
    if plots_url_base is not None:
        from evotree.report.assets import links_from_base

        images = links_from_base(plots_url_base, data.plots)
    elif publish_plots and files:
        from evotree.report.assets import publish_to_branch
        from evotree.report.model import ReportError

        progress("publishing the plots")
        try:
            images = publish_to_branch(ws.root, data.version, files, env=os.environ)
        except ReportError as exc:
            note = f"The plots could not be published ({exc.message}). " + note
    progress("posting to GitHub")
    body = render_markdown(
        data,
        images=images,
        images_note=note,
        image_sizes={n: size for n, p in files.items() if (size := png_size(p))},
    )
    return post_comment(
        body,
        version=data.version,
        branch=data.subject["branch"],
        env=os.environ,
        pull_request=pull_request,
    ).to_dict()


def _render_ci(result: Any) -> None:

    click.echo(f"{shown(result.action)} {shown(result.path)}")
    click.echo(f'It installs evotree with: pip install "{shown(result.install)}"')
    click.echo(
        "It runs on pull requests from evotree/* branches: "
        + shown(", ".join(result.commands))
        + "."
    )
    click.echo(
        "Commit it, push, and set the repository variable EVOTREE_RUN_SEEDS to run versions in CI."
    )


# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.command()
@click.argument("version", required=False)
@click.option(
    "--against",
    default="champion",
    show_default=True,
    metavar="champion|VERSION",
    help="The version compared against (Δ = VERSION − AGAINST).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html", "json"]),
    default="md",
    show_default=True,
    help="md: a GitHub PR comment with PNG plots beside it; html: one self-contained file; "
    "json: the report's data (schema `report`).",
)
@click.option(
    "--out",
    default=None,
    metavar="PATH",
    help="File, or folder (existing or ending in /), to write to "
    "[default: .evotree/reports/VERSION/report.FORMAT].",
)
@click.option("--split", default="validation", show_default=True, help="Eval split compared.")
@click.option(
    "--post",
    is_flag=True,
    help="Create or update the report comment on the pull request of the version's branch "
    "(GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL from the environment).",
)
@click.option(
    "--pr",
    "pull_request",
    type=click.IntRange(min=1),
    default=None,
    metavar="NUMBER",
    help="With --post: the pull request to comment on (default: the open one from the branch).",
)
@click.option(
    "--plots-url-base",
    default=None,
    metavar="URL",
    help="With --format md: link the plots as URL/<file> (you publish the PNGs written beside "
    "the Markdown there); with --post the comment shows them inline.",
)
@click.option(
    "--publish-plots",
    is_flag=True,
    help="With --post: commit the PNGs to the branch evotree-report-assets of origin, push it, "
    "and show them inline in the comment (needs contents: write); on failure the comment "
    "says where the plots are instead.",
)
@click.option(
    "--no-audit",
    is_flag=True,
    help="Do not run the audit (nor the gates' audit gate); show the last recorded audit event.",
)
@click.option(
    "--tree",
    is_flag=True,
    help="Search-level statistics of the whole tree instead of one version: historical best, "
    "first-attempt improvement, post-peak regression, spend after the peak, cost per valid "
    "candidate, a stop recommendation (text; --format md/json with --out; schema `report-tree`).",
)
@click.option(
    "--workspace",
    "workspaces",
    multiple=True,
    metavar="PATH",
    help="With --tree: a workspace (setting) to include; repeat it for rates over settings.",
)
@click.option(
    "--epsilon",
    type=float,
    default=1e-9,
    show_default=True,
    help="With --tree: relative tolerance within which two scores tie (the earlier version wins).",
)
@click.option(
    "--margin",
    type=float,
    default=0.0,
    show_default=True,
    help="With --tree: a version after the peak regresses when below it by more than this.",
)
@click.option(
    "--patience",
    type=int,
    default=3,
    show_default=True,
    help="With --tree: recommend stopping after this many versions since the peak.",
)
@click.option(
    "--max-after-peak-share",
    type=float,
    default=0.5,
    show_default=True,
    help="With --tree: recommend stopping when the spend after the peak reaches this share.",
)
@click.option(
    "--direction",
    type=click.Choice(["max", "min", "auto"]),
    default="auto",
    show_default=True,
    help="With --tree: whether higher (max) or lower (min) scores are better; auto: each "
    "workspace's [eval.normalize].direction, else max.",
)
@outputs(_render_report, pass_json=True)
def report(
    version: str | None,
    against: str,
    fmt: str,
    out: str | None,
    split: str,
    post: bool,
    pull_request: int | None,
    plots_url_base: str | None,
    publish_plots: bool,
    no_audit: bool,
    as_json: bool,
    tree: bool,
    workspaces: tuple[str, ...],
    epsilon: float,
    margin: float,
    patience: int,
    max_after_peak_share: float,
    direction: str,
) -> Any:
    """Write the report of VERSION: verdict, scores with Δ and CI, findings per layer, audit,
    gates, lineage and plots.

    \b
    The Markdown is a GitHub pull-request comment (a hidden marker lets CI update its own
    comment); plots are PNG files beside it. The HTML is one self-contained file (tree, interactive
    plots, tables). A section whose evidence is missing says why instead of failing.
    Examples:
      evotree report v3                       # .evotree/reports/v3/report.md + PNGs
      evotree report v3 --format html --out report.html
      evotree report v3 --post                # in CI: comment on the PR of evotree/v3
      evotree report --tree --workspace A --workspace B   # search statistics, rates over settings
    """
    if tree:
        if version is not None or post:
            raise UsageError(
                "report --tree reports the whole tree: give no VERSION and no --post",
                fix="evotree report --tree [--workspace PATH ...]",
            )
        explicit = (
            click.get_current_context().get_parameter_source("fmt")
            != click.core.ParameterSource.DEFAULT
        )
        return _tree_report(
            workspaces,
            fmt if explicit else None,
            out,
            epsilon,
            margin,
            patience,
            max_after_peak_share,
            direction,
        )
    _check_version_options(version, workspaces, fmt, post, plots_url_base, publish_plots)

    ws = open_workspace()
    if post:  # fail fast, before any work or file: no token, bad repository or API URL
        from evotree.report.github import github_config

        github_config(os.environ)

    def progress(message: str) -> None:
        if not as_json:
            click.echo(f"report: {message}…", err=True)

    data = session().report(
        version, against=against, split=split, audit=not no_audit, progress=progress
    )
    progress(f"writing {fmt}")
    result = write_report(ws, data, fmt=fmt, out=out, plots_url_base=plots_url_base)
    if post:
        result.posted = _post_report(
            ws, data, result, fmt, plots_url_base, publish_plots, pull_request, progress
        )
    return result


@cli.group()
def ci() -> None:
    """Continuous integration: a GitHub Actions workflow for evotree/* pull requests."""


@ci.command("init")
@click.option(
    "--path",
    default=".github/workflows/evotree.yml",
    show_default=True,
    help="Workflow file, relative to the repository root.",
)
@click.option(
    "--from",
    "source",
    default=None,
    metavar="PATH",
    help="Folder inside this repository holding evotree's source (e.g. a git submodule); "
    "CI installs from it.",
)
@click.option(
    "--install",
    default=None,
    metavar="REQUIREMENT",
    help="pip requirement that installs evotree in CI: a path or NAME @ URL (never a bare "
    "name: `evotree` on the package index is another project).",
)
@click.option("--force", is_flag=True, help="Overwrite an existing workflow file.")
@outputs(_render_ci)
def ci_init(path: str, source: str | None, install: str | None, force: bool) -> Any:
    """Write a GitHub Actions workflow that runs audit, diagnose and report on pull
    requests from evotree/* branches and posts the report as a PR comment.

    It uses the pull_request trigger (code from forks never gets a write token) and a
    read-only checkout; runs happen in CI only when the repository variable
    EVOTREE_RUN_SEEDS is set. The file is written, not committed.

    \b
    The install step installs evotree-rl with the extras the workspace's domain needs, from
    a source CI can reach: --from PATH, this repository when it is evotree's source, the
    folder evotree was installed from when it is inside this repository, or the git URL
    and commit pip recorded; otherwise it refuses and says what to pass.
    """

    ws = open_workspace()
    return write_workflow(
        ws.root,
        path=path,
        force=force,
        domain=ws.config.workspace.domain,
        source=source,
        install=install,
    )


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
