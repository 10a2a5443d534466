"""Commands of reports (issue 9): `evotree report`, `evotree ci init`.

Registered on the ``evotree`` group by :func:`register`; imports only click and
:mod:`evotree.cli.main` at module level, the library inside each command.
"""

from __future__ import annotations

from typing import Any

import click

__all__ = ["register"]


def _render_report(result: Any) -> None:
    from rich.console import Console

    from evotree.core.text import escape_control as shown  # text from versions and agents (issue 16)

    console = Console(highlight=False)
    verdict = result.verdict
    console.print(f"{shown(verdict['icon'])} {shown(verdict['line'])}", markup=False)
    for note in verdict.get("notes") or []:
        console.print(f"  {shown(note)}", markup=False)
    console.print(f"wrote {shown(result.format)}: {shown(result.path)}", markup=False)
    for extra in result.files[1:]:
        console.print(f"  + {shown(extra)}", markup=False)
    if result.posted:
        posted = result.posted
        console.print(f"{shown(posted['action'])} comment {shown(posted['comment_id'])} on pull request "
                      f"#{shown(posted['pull_request'])} of {shown(posted['repository'])}"
                      + (f": {shown(posted['url'])}" if posted.get("url") else ""), markup=False)


def _render_ci(result: Any) -> None:
    from evotree.core.text import escape_control as shown

    click.echo(f"{shown(result.action)} {shown(result.path)}")
    click.echo(f"It installs evotree with: pip install \"{shown(result.install)}\"")
    click.echo("It runs on pull requests from evotree/* branches: " + shown(", ".join(result.commands)) + ".")
    click.echo("Commit it, push, and set the repository variable EVOTREE_RUN_SEEDS to run versions in CI.")


def register(cli: click.Group) -> None:
    """Add this module's commands to ``cli``."""
    from evotree.cli.common import open_workspace, outputs

    @cli.command()
    @click.argument("version")
    @click.option("--against", default="champion", show_default=True, metavar="champion|VERSION",
                  help="The version compared against (Δ = VERSION − AGAINST).")
    @click.option("--format", "fmt", type=click.Choice(["md", "html", "json"]), default="md", show_default=True,
                  help="md: a GitHub PR comment with PNG plots beside it; html: one self-contained file; "
                       "json: the report's data (schema `report`).")
    @click.option("--out", default=None, metavar="PATH",
                  help="File, or folder (existing or ending in /), to write to "
                       "[default: .evotree/reports/VERSION/report.FORMAT].")
    @click.option("--split", default="validation", show_default=True, help="Eval split compared.")
    @click.option("--post", is_flag=True,
                  help="Create or update the report comment on the pull request of the version's branch "
                       "(GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_API_URL from the environment).")
    @click.option("--pr", "pull_request", type=click.IntRange(min=1), default=None, metavar="NUMBER",
                  help="With --post: the pull request to comment on (default: the open one from the branch).")
    @click.option("--no-audit", is_flag=True,
                  help="Do not run the audit (nor the gates' audit gate); show the last recorded audit event.")
    @outputs(_render_report, pass_json=True)
    def report(version: str, against: str, fmt: str, out: str | None, split: str, post: bool,
               pull_request: int | None, no_audit: bool, as_json: bool) -> Any:
        """Write the report of VERSION: verdict, scores with Δ and CI, findings per layer, audit,
        gates, lineage and plots.

        \b
        The Markdown is a GitHub pull-request comment (a hidden marker lets CI update its own
        comment); plots are PNG files beside it. The HTML is one self-contained file (tree,
        plots, tables). A section whose evidence is missing says why instead of failing.
        Examples:
          evotree report v3                       # .evotree/reports/v3/report.md + PNGs
          evotree report v3 --format html --out report.html
          evotree report v3 --post                # in CI: comment on the PR of evotree/v3
        """
        import os

        from evotree.report.collect import build_report
        from evotree.report.files import write_report

        ws = open_workspace()
        if post:  # fail fast, before any work or file: no token, bad repository or API URL
            from evotree.report.github import github_config

            github_config(os.environ)

        def progress(message: str) -> None:
            if not as_json:
                click.echo(f"report: {message}…", err=True)

        data = build_report(ws, version, against=against, split=split, run_audit=not no_audit, progress=progress)
        progress(f"writing {fmt}")
        result = write_report(ws, data, fmt=fmt, out=out)
        if post:
            from evotree.report.github import post_comment
            from evotree.report.markdown import render_markdown

            progress("posting to GitHub")
            body = render_markdown(data, images=None, images_note=(
                "Plots (reward, entropy, dead groups, per-task Δ) are in the `evotree-report` artifact "
                "of this workflow run, or run `evotree report` locally."))
            result.posted = post_comment(body, version=data.version, branch=data.subject["branch"],
                                         env=os.environ, pull_request=pull_request).to_dict()
        return result

    @cli.group()
    def ci() -> None:
        """Continuous integration: a GitHub Actions workflow for evotree/* pull requests."""

    @ci.command("init")
    @click.option("--path", default=".github/workflows/evotree.yml", show_default=True,
                  help="Workflow file, relative to the repository root.")
    @click.option("--from", "source", default=None, metavar="PATH",
                  help="Folder inside this repository holding evotree's source (e.g. a git submodule); "
                       "CI installs from it.")
    @click.option("--install", default=None, metavar="REQUIREMENT",
                  help="pip requirement that installs evotree in CI: a path or NAME @ URL (never a bare "
                       "name: `evotree` on the package index is another project).")
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
        from evotree.report.ci import write_workflow

        ws = open_workspace()
        return write_workflow(ws.root, path=path, force=force, domain=ws.config.workspace.domain,
                              source=source, install=install)
