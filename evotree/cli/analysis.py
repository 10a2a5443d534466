"""Analysis commands: `compare`, `diagnose`, `backtest`."""

from __future__ import annotations

import json
from typing import Any

import click

from evotree.cli.common import open_workspace, outputs, renderer
from evotree.core.errors import EvotreeError

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.command()
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--split", default="validation", show_default=True, help="Eval split to compare on.")
@click.option("--intersect", is_flag=True, help="Compare on the tasks both were scored on, if pools differ.")
@click.option("--bootstrap", "B", type=click.IntRange(min=100), default=None,
              help="Bootstrap resamples (default: [gates].bootstrap_samples).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap's generator.")
@click.option("--look", type=click.IntRange(min=1), default=None,
              help="Sequential evaluation: this is look K (tests at the alpha this look may spend).")
@click.option("--max-looks", type=click.IntRange(min=1), default=None, help="Sequential evaluation: N looks in all.")
@outputs(renderer("comparison"))
def compare(a: str, b: str, split: str, intersect: bool, B: int | None, seed: int,
            look: int | None, max_looks: int | None) -> Any:
    """Compare version B against A (delta = B - A) on the same task pool.

    \b
    Paired over tasks and seed-aware: every run is one seed, and with two or more seeds per
    side the bootstrap resamples seeds as well as tasks (a single seed cannot show the
    between-seed variance, and the output says so). Versions scored on different task pools
    are refused unless --intersect.
    """
    from evotree.diagnostics.compare import compare as compare_fn

    return compare_fn(open_workspace(), a, b, split=split, intersect=intersect, B=B, seed=seed,
                      look=look, max_looks=max_looks)


@cli.command()
@click.argument("version")
@click.option("--layer", "layers", multiple=True, type=click.Choice(["score", "signal", "behavior", "version"]),
              help="Only these layers (repeatable; default: all).")
@outputs(renderer("diagnosis"))
def diagnose(version: str, layers: tuple[str, ...]) -> Any:
    """Diagnose a version's runs: score, signal, behavior and version findings.

    Findings (layer, code, severity, title, evidence with the query that produced it,
    suggestion and the skills that address it) are written to .evotree/findings/ (the
    `findings` view of `evotree sql`) and summarised in the ledger.
    """
    from evotree.diagnostics.diagnose import diagnose as diagnose_fn

    from evotree.gates.harnesses import active_harness

    ws = open_workspace()
    return diagnose_fn(ws, version, harness=active_harness(ws), layers=list(layers) or None)


@cli.command()
@click.argument("version")
@click.option("--transform", default=None, metavar="EXPR",
              help='Candidate reward, e.g. "reward + 0.1*instruction_following" (components by name).')
@click.option("--threshold", "overrides", multiple=True, metavar="ANALYZER.KEY=VALUE",
              help="Override an analyzer threshold (another harness version); repeatable.")
@click.option("--harness", "harness_id", default=None, metavar="HN",
              help="Use harness version HN's thresholds (default: the active harness).")
@outputs(renderer("backtest"))
def backtest(version: str, transform: str | None, overrides: tuple[str, ...], harness_id: str | None) -> Any:
    """Re-run the analyzers over a version's stored rollouts, without retraining.

    \b
    Compares the findings and the dead-group ratio of the rollouts as recorded with those
    under a candidate reward transform and/or other thresholds, e.g.
      evotree backtest v3 --transform "reward + 0.1*instruction_following"
    """
    from evotree.diagnostics.backtest import backtest as backtest_fn
    from evotree.harness.runs import list_runs, runs_dir

    ws = open_workspace()
    run_ids = [r.run_id for r in list_runs(ws, version=version) if r.status not in ("invalid", "running")]
    if not run_ids:
        raise EvotreeError(f"{ws.resolve(version).id} has no stored run to backtest on this machine",
                           fix=f"run it first: evotree run {version}")
    from evotree.diagnostics.harnesses import harness_thresholds
    from evotree.gates.harnesses import active_harness

    harness = harness_id or active_harness(ws).id
    thresholds: dict[str, dict[str, Any]] = {k: dict(v) for k, v in harness_thresholds(ws, harness).items()}
    for item in overrides:
        key, sep, value = item.partition("=")
        analyzer, dot, name = key.rpartition(".")  # analyzer names contain dots: signal.dead_groups
        if not sep or not dot or not analyzer:
            raise EvotreeError(f"--threshold expects ANALYZER.KEY=VALUE, actually: {item!r}",
                               fix="e.g. --threshold signal.dead_groups.warn_ratio=0.2")
        thresholds.setdefault(analyzer, {})[name] = json.loads(value) if value[:1] in "-0123456789tf[" else value
    label = harness + ("+overrides" if overrides else "")
    return backtest_fn(runs_dir(ws), run_ids, transform=transform, thresholds=thresholds or None,
                       harness_version=label)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
