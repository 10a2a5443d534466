"""Analysis commands: `compare`, `diagnose`, `backtest`."""

from __future__ import annotations

import json
from typing import Any

import click

from evotree.cli.common import open_workspace, outputs, renderer, session
from evotree.core.errors import UsageError
from evotree.diagnostics.backtest import backtest as backtest_fn
from evotree.harness.records import list_runs
from evotree.harness.records import runs_dir
from evotree.diagnostics.analyzer_versions import analyzer_thresholds
from evotree.gates.analyzer_versions import active_analyzers
from evotree.cli.render import _console
from evotree.cli.render import _esc
from evotree.cli.render import _SEVERITY_STYLE

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.command()
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--split", default="validation", show_default=True, help="Eval split to compare on.")
@click.option(
    "--intersect", is_flag=True, help="Compare on the tasks both were scored on, if pools differ."
)
@click.option(
    "--bootstrap",
    "B",
    type=click.IntRange(min=100),
    default=None,
    help="Bootstrap resamples (default: [gates].bootstrap_samples).",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap's generator."
)
@click.option(
    "--look",
    type=click.IntRange(min=1),
    default=None,
    help="Sequential evaluation: this is look K (tests at the alpha this look may spend).",
)
@click.option(
    "--max-looks",
    type=click.IntRange(min=1),
    default=None,
    help="Sequential evaluation: N looks in all.",
)
@outputs(lambda result: render_comparison(result))
def compare(
    a: str,
    b: str,
    split: str,
    intersect: bool,
    B: int | None,
    seed: int,
    look: int | None,
    max_looks: int | None,
) -> Any:
    """Compare version B against version A (delta = B - A) on the same task pool.

    \b
    One delta, one CI and one p — the same numbers diagnose, gates and the reports show:
    a t interval whose noise is the run-to-run spread of a run's mean score (pooled over the
    comparable runs of the tree; a version's own when larger), or, when runs are identical
    copies (a deterministic policy, or a domain that ignores the seed), the spread of the
    per-task differences: the tasks are then the unit and copies count once. The CI is at
    1 - 2 alpha and p is one-sided (that B is not better than A), so "better" at one look
    means p < alpha. Versions scored on different task pools are refused unless --intersect.
    """
    return session().compare(
        a,
        b,
        split=split,
        intersect=intersect,
        bootstrap=B,
        seed=seed,
        look=look,
        max_looks=max_looks,
    )


@cli.command()
@click.argument("version")
@click.option(
    "--layer",
    "layers",
    multiple=True,
    type=click.Choice(["score", "signal", "behavior", "version"]),
    help="Only these layers (repeatable; default: all).",
)
@outputs(lambda result: render_diagnosis(result))
def diagnose(version: str, layers: tuple[str, ...]) -> Any:
    """Diagnose a version's runs: score, signal, behavior and version findings.

    Findings (layer, code, severity, title, evidence with the query that produced it,
    suggestion and the skills that address it) are written to .evotree/findings/ (the
    `findings` view of `evotree sql`) and summarised in the ledger. Printed once per finding
    code with the runs it came from (--json: `by_code`, and every finding in `findings`).
    """
    return session().diagnose(version, layers=list(layers) or None)


@cli.command()
@click.argument("version")
@click.option(
    "--transform",
    default=None,
    metavar="EXPR",
    help='Candidate reward, e.g. "reward + 0.1*instruction_following" (components by name).',
)
@click.option(
    "--threshold",
    "overrides",
    multiple=True,
    metavar="ANALYZER.KEY=VALUE",
    help="Override an analyzer threshold (another analyzer version); repeatable.",
)
@click.option(
    "--analyzers",
    "--harness",
    "analyzers_id",
    default=None,
    metavar="HN",
    help="Use analyzer version HN's thresholds (default: the one in force; --harness: old name).",
)
@outputs(renderer("backtest"))
def backtest(
    version: str, transform: str | None, overrides: tuple[str, ...], analyzers_id: str | None
) -> Any:
    """Re-run the analyzers over a version's stored rollouts, without retraining.

    \b
    Compares the findings and the dead-group ratio of the rollouts as recorded with those
    under a candidate reward transform and/or other thresholds, e.g.
      evotree backtest v3 --transform "reward + 0.1*instruction_following"
    """

    ws = open_workspace()
    run_ids = [
        r.run_id for r in list_runs(ws, version=version) if r.status not in ("invalid", "running")
    ]
    if not run_ids:
        from evotree.diagnostics.backtest import BacktestError

        raise BacktestError(
            f"{ws.resolve(version).id} has no stored run to backtest on this machine",
            fix=f"run it first: evotree run {version}",
        )

    analyzers = analyzers_id or active_analyzers(ws).id
    thresholds: dict[str, dict[str, Any]] = {
        k: dict(v) for k, v in analyzer_thresholds(ws, analyzers).items()
    }
    for item in overrides:
        key, sep, value = item.partition("=")
        analyzer, dot, name = key.rpartition(".")  # analyzer names contain dots: signal.dead_groups
        if not sep or not dot or not analyzer or not name:
            raise UsageError(
                f"--threshold expects ANALYZER.KEY=VALUE, actually: {item!r}",
                fix="e.g. --threshold signal.dead_groups.warn_ratio=0.2",
                option="--threshold",
            )
        try:
            parsed = json.loads(value) if value[:1] in "-0123456789tf[" else value
        except ValueError:
            parsed = value  # a word that merely starts like a number or true/false: keep it as text
        thresholds.setdefault(analyzer, {})[name] = parsed
    label = analyzers + ("+overrides" if overrides else "")
    return backtest_fn(
        runs_dir(ws),
        run_ids,
        transform=transform,
        thresholds=thresholds or None,
        harness_version=label,
    )


def _fmt(value: Any, spec: str = ".4g") -> str:
    return "—" if value is None else format(value, spec)


def render_comparison(result: Any) -> None:
    """``evotree compare``: the statement naming both versions, then Δ, its CI, p and where the noise came from."""

    a, b = _esc(result.a), _esc(result.b)
    lo, hi = result.ci
    colour = {"better": "green", "worse": "red"}.get(result.decision, "yellow")
    na, nb = result.n_seeds
    _console.print(
        f"[bold]{b}[/] vs [bold]{a}[/] on {_esc(result.split)} ({result.n_tasks} tasks; seeds: {b} {nb}, "
        f"{a} {na})"
    )
    _console.print(f"  [{colour}]{_esc(result.statement)}[/]")
    _console.print(
        f"  Δ = {result.delta:+.4f}  {100 * result.confidence:.0f} % CI [{lo:+.4f}, {hi:+.4f}]  "
        f"one-sided p = {result.p_value:.3g}  ({_esc(result.ci_method)})"
    )
    _console.print(f"  means: {a} {result.mean_a:.4f} → {b} {result.mean_b:.4f}")
    if result.normalized:  # [eval.normalize]: the same means on the normalized scale
        shown = {k: "—" if v is None else f"{v:.3f}" for k, v in result.normalized.items()}
        _console.print(f"  normalized: {a} {shown['a']} → {b} {shown['b']}")
    spread = result.spread or {}
    if spread.get("sd"):
        sd, source = spread["sd"], spread.get("source") or ["?", "?"]
        _console.print(
            f"  run-to-run SD of a run's mean: {a} {_fmt(sd[0])} ({source[0]}), {b} {_fmt(sd[1])} "
            f"({source[1]}); SE of Δ {result.se:.4g}"
        )
    for name, same in zip((a, b), result.identical or []):
        if same:
            _console.print(
                f"  [yellow]{name}: runs are identical copies[/] (deterministic): counted as one run, "
                "the tasks are the unit, more seeds add nothing"
            )
    if result.intersected:
        _console.print("  [yellow]compared on the intersection of two different task pools[/]")
    if result.caveat:
        _console.print(f"  [yellow]caveat:[/] {_esc(result.caveat)}")
    if result.iqm:
        q = result.iqm
        _console.print(
            f"  IQM {a} {q['a']:.4f} [{q['a_ci'][0]:.4f}, {q['a_ci'][1]:.4f}] → {b} {q['b']:.4f} "
            f"[{q['b_ci'][0]:.4f}, {q['b_ci'][1]:.4f}]"
        )
    if result.probability_of_improvement:
        p = result.probability_of_improvement
        _console.print(f"  P({b} > {a}) = {p['b_over_a']:.3f} [{p['ci'][0]:.3f}, {p['ci'][1]:.3f}]")
    for group in result.per_group or []:
        mark = "*" if group["significant"] else " "
        _console.print(
            f"  {mark} {_esc(group['group'])}: Δ {group['delta']:+.4f}, p {group['p_value']:.3g} "
            f"(BH {group['p_adjusted']:.3g})"
        )
    look = f" at look {result.look} of {result.max_looks}" if result.look else ""
    _console.print(
        f"  decision vs threshold {result.threshold:+.4g}: [bold]{result.decision}[/] (needs p < "
        f"{result.p_threshold:.3g}{look})"
    )
    if result.next_step:
        _console.print(f"  next: {_esc(result.next_step)}")


def render_diagnosis(result: Any) -> None:
    """``evotree diagnose``: one row per finding code, most severe first, with the runs it came from."""
    from rich.table import Table

    rows = result.by_code
    _console.print(
        f"[bold]{_esc(result.version)}[/]: {len(result.findings)} finding(s) of {len(rows)} kind(s) over "
        f"{len(result.runs)} run(s); worst: {result.worst or '-'} ({result.seconds:.1f}s)"
    )
    table = Table(box=None)
    for column in ("severity", "layer", "code", "runs"):
        table.add_column(column, no_wrap=True)
    table.add_column("finding", overflow="fold", ratio=1)
    suggestions = {f["code"]: f for f in result.findings}
    for row in rows:
        first = suggestions.get(row["code"], {})
        note = str(row["title"]) + (f" → {first['suggestion']}" if first.get("suggestion") else "")
        if first.get("skills"):
            note += f" [skills: {', '.join(first['skills'])}]"
        if row["count"] > 1:
            note += f" ({row['count']} findings)"
        short = [
            rid.rsplit("-", 2)[0] if rid.count("-") >= 3 else rid for rid in row["runs"]
        ]  # v1-s0-<stamp>-<hex>
        runs = " ".join(short[:3]) + (f" +{len(short) - 3}" if len(short) > 3 else "")
        style = _SEVERITY_STYLE.get(row["severity"], "white")
        table.add_row(
            f"[{style}]{_esc(row['severity'])}[/]",
            _esc(row["layer"]),
            _esc(row["code"]),
            _esc(runs or "version"),
            _esc(note),
        )
    _console.print(table)
    if result.interventions:
        interventions = Table("version", "parent", "Δ headline", "status", "what changed", box=None)
        for item in result.interventions:
            delta = "—" if item.get("delta") is None else f"{item['delta']:+.4f}"
            interventions.add_row(
                _esc(item["id"]),
                _esc(item["parent"] or "-"),
                delta,
                _esc(item["status"]),
                _esc(item["hypothesis"]),
            )
        _console.print("\n[bold]interventions[/]")
        _console.print(interventions)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
