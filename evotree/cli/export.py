"""Ecosystem commands: `export tensorboard|mlflow|wandb|results-tsv`, `import tensorboard`."""

from __future__ import annotations

from typing import Any

import click

from evotree.cli.common import open_workspace, outputs, renderer
from evotree.core.text import escape_control
from evotree.harness.ingest import ingest_tensorboard
from evotree.harness.ecosystem import check_staged

__all__ = ["cli", "register"]

MAX_SEED = 2**31 - 1  # as `evotree run` and `evotree ingest`


@click.group()
def cli() -> None:
    """Commands of this module (registered on the root group)."""


def _render_export(result: Any) -> None:

    click.echo(
        f"exported {len(result.runs)} run(s) to {result.tool} at {escape_control(result.destination)}"
    )
    for run in result.runs:
        click.echo(
            f"  {run.run_id}  {run.version}  seed {run.seed}  {run.status}  "
            f"{run.scalars} scalar(s) -> {escape_control(run.target)}"
        )
    if not result.runs:
        click.echo("  (no runs on this machine for those versions: `evotree runs` lists them)")


_versions = click.option(
    "--version",
    "versions",
    multiple=True,
    metavar="V",
    help="Only this version's runs (repeatable; default: every run).",
)


@cli.group("export")
def export() -> None:
    """Export runs to the tools you already use: TensorBoard, MLflow, W&B (offline).

    \b
    One run of the tool per evotree run: every signal as a scalar at its step, the judge's
    headline (judge/headline) and split means (judge/<split>/mean_score) at the last step, and
    version, seed, commit and status as metadata. Needs: pip install 'evotree-rl[export]'.
    """


@export.command("tensorboard")
@click.argument("directory", type=click.Path(file_okay=False))
@_versions
@outputs(_render_export)
def export_tensorboard(directory: str, versions: tuple[str, ...]) -> Any:
    """Write TensorBoard event files: DIRECTORY/<version>/<run_id>/ (tensorboard --logdir DIRECTORY)."""
    from evotree.harness.ecosystem import export_tensorboard as run_export

    return run_export(open_workspace(), directory, versions=list(versions))


@export.command("mlflow")
@click.option(
    "--tracking-uri",
    required=True,
    metavar="URI",
    help="MLflow tracking URI, e.g. file:./mlruns (a local file store).",
)
@click.option(
    "--experiment",
    default=None,
    metavar="NAME",
    help="Experiment name (default: the workspace's folder name).",
)
@_versions
@outputs(_render_export)
def export_mlflow(tracking_uri: str, experiment: str | None, versions: tuple[str, ...]) -> Any:
    """Log one MLflow run per evotree run (params, metrics with steps, evotree.* tags)."""
    from evotree.harness.ecosystem import export_mlflow as run_export

    return run_export(
        open_workspace(), tracking_uri, versions=list(versions), experiment=experiment
    )


@export.command("wandb")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--project",
    default=None,
    metavar="NAME",
    help="W&B project (default: the workspace's folder name).",
)
@_versions
@outputs(_render_export)
def export_wandb(directory: str, project: str | None, versions: tuple[str, ...]) -> Any:
    """Write offline W&B runs under DIRECTORY/wandb/ (no network; upload later with `wandb sync`)."""
    from evotree.harness.ecosystem import export_wandb as run_export

    return run_export(open_workspace(), directory, versions=list(versions), project=project)


def _render_results_tsv(result: Any) -> None:

    if result.path is None:
        for line in result.text.splitlines():  # each cell escaped; the tabs between them kept
            click.echo("\t".join(escape_control(cell) for cell in line.split("\t")))
    else:
        click.echo(f"wrote {len(result.rows)} row(s) to {escape_control(result.path)}")


@export.command("results-tsv")
@click.option(
    "-o",
    "--output",
    default=None,
    type=click.Path(dir_okay=False),
    metavar="PATH",
    help="Write the file here (default: print it).",
)
@click.option(
    "--metric",
    default="val_bpb",
    show_default=True,
    metavar="NAME",
    help="The metric's column: the judge's judge/validation_NAME, else the summary line NAME.",
)
@outputs(_render_results_tsv)
def export_results_tsv(output: str | None, metric: str) -> Any:
    """results.tsv in karpathy/autoresearch's columns, plus evotree's verdict and CI.

    \b
    commit, METRIC, memory_gb, status (keep / discard / crash), description — one row per
    version, oldest first — then verdict, delta, ci_low, ci_high, seeds, version. keep: the
    root and every version the score gate passes (a change within the noise floor is not kept).
    docs/protocols/autoresearch.md.
    """
    from evotree.report.results_tsv import export_results_tsv as run_export

    return run_export(open_workspace(), metric=metric, path=output)


@cli.group("import")
def import_() -> None:
    """Import training logged by another tool as an (ingested, unjudged) run of a version."""


@import_.command("tensorboard")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--version", "version", required=True, metavar="V", help="Version the training belongs to."
)
@click.option(
    "--seed",
    type=click.IntRange(min=0, max=MAX_SEED),
    default=0,
    show_default=True,
    help="Seed of that training.",
)
@outputs(renderer("runs"))
def import_tensorboard(directory: str, version: str, seed: int) -> Any:
    """Import a TensorBoard log directory (e.g. TRL's report_to=["tensorboard"]) as a run of VERSION.

    Every scalar becomes a signal at its step (train/loss -> loss); the run has no judge phase,
    so no score, and it is not charged to budgets.
    """

    return [ingest_tensorboard(open_workspace(), directory, version=version, seed=seed)]


def _render_staged(result: Any) -> None:

    verdict = "refused" if result.blocking else "passed"
    click.echo(
        f"pre-commit audit of {result.version}'s staged tree ({result.files} changed file(s) "
        f"against {escape_control(result.base)}): {verdict}"
    )
    for finding in result.findings:
        click.echo(
            f"  {finding['severity']:<8} {finding['code']}  {escape_control(str(finding['title']))}"
        )


@cli.command("precommit")
@click.option(
    "--worktree",
    default=None,
    type=click.Path(file_okay=False),
    metavar="PATH",
    help="The version's worktree (default: the current directory, or -C).",
)
@outputs(_render_staged)
def precommit(worktree: str | None) -> Any:
    """Audit what is staged in a version's worktree (a pre-commit hook; exit 28 refuses).

    \b
    The audit's static checks (protected paths against the champion, the patch gate against the
    pristine base) over the index as it would be committed. In .pre-commit-config.yaml:
      - repo: local
        hooks:
          - id: evotree-audit
            name: evotree audit (staged)
            entry: evotree precommit
            language: system
            pass_filenames: false
            always_run: true
    """

    here = click.get_current_context().find_root().obj["dir"]
    return check_staged(open_workspace(), worktree or here)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
