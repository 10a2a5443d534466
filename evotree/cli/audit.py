"""Commands of leak audits: `evotree audit V`, `evotree audit trajectories FILE...`,
`evotree audit repo PATH` (the last from :mod:`evotree.cli.audit_repo`).

The commands sit on a holder group; :func:`register` moves them onto the ``evotree`` group
(which imports this module only when one of them runs). rich is imported when text is printed.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from evotree.core.text import escape_control
from evotree.cli.common import console as make_console
from evotree.cli.common import fail
from evotree.core.errors import EvotreeError

__all__ = ["register", "render_audit", "render_trajectory_audit"]

_STYLE = {"critical": "bold red", "high": "red", "warn": "yellow", "info": "dim"}


class _AuditGroup(click.Group):
    """``evotree audit V`` audits a version; ``evotree audit SUBCOMMAND ...`` runs a subcommand.

    The first word that is not an option and not a subcommand's name is taken as a version id.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((a for a in args if not a.startswith("-")), None)
        if (
            first is not None
            and first not in self.commands
            and not any(a in ("-h", "--help") for a in args[:1])
        ):
            args = ["version", *args]
        return super().parse_args(ctx, args)


def _t(text: Any) -> str:
    """Text for rich: control characters shown escaped, markup shown as typed (an
    agent's command or a trajectory id is text someone else wrote)."""
    from rich.markup import escape

    return escape(escape_control(text))


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _findings_table(console: Any, findings: list[Any]) -> None:
    from rich.table import Table

    table = Table(show_lines=False)
    for column in ("severity", "code", "finding", "run"):
        table.add_column(column)
    for f in findings:
        examples = f.evidence.get("examples") or []
        detail = _t(f.title)
        if examples and isinstance(examples[0], dict) and examples[0].get("command"):
            detail += f"\n[dim]e.g. {_t(str(examples[0]['command'])[:100])}[/]"
        if f.suggestion:
            detail += f"\n[dim]fix: {_t(f.suggestion)}[/]"
        table.add_row(
            f"[{_STYLE.get(f.severity, '')}]{_t(f.severity)}[/]",
            _t(f.code),
            detail,
            _t(f.run_id or ""),
        )
    console.print(table)


def _verdict_table(console: Any, verdicts: list[Any], *, limit: int) -> None:
    """One row per trajectory: its worst hit."""
    from rich.table import Table

    table = Table(title=f"trajectories ({min(len(verdicts), limit)} of {len(verdicts)})")
    for column in ("trajectory", "task", "worst", "rule", "command"):
        table.add_column(column)
    for v in verdicts[:limit]:
        top = max(v.hits, key=lambda h: ("info", "warn", "high", "critical").index(h.severity))
        table.add_row(
            _t(v.id),
            _t(v.task_id or ""),
            f"[{_STYLE.get(top.severity, '')}]{_t(top.severity)}[/]",
            _t(top.rule),
            _t(str(top.command)[:80]),
        )
    console.print(table)


def render_audit(report: Any) -> None:
    """Print an :class:`evotree.harness.audit.version_audit.AuditReport` for people."""

    console = make_console()
    console.print(
        f"[bold]audit of {_t(report.version)}[/bold]: {len(report.runs)} run(s), "
        f"{report.trajectories} trajectories, {report.flagged} flagged, "
        f"git history in {report.git_history_rate:.1%}"
    )
    if report.score_metric:
        console.print(
            f"score ({_t(report.score_metric)}): raw [bold]{_score(report.raw_score)}[/bold]   "
            f"leak-adjusted (flagged left out) [bold]{_score(report.leak_adjusted_score)}[/bold]   "
            f"flagged as failures {_score(report.leak_zeroed_score)}"
        )
    for name, state in report.checks.items():
        console.print(f"  [dim]{_t(name)}: {_t(state)}[/]")
    if report.findings:
        _findings_table(console, report.findings)
    flagged = [v for v in report.verdicts if v.flagged]
    if flagged:
        _verdict_table(console, flagged, limit=20)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/] {_t(warning)}")
    if report.passed:
        console.print("[green]passed[/green]: no finding of severity high or above")
    else:
        console.print(
            "[bold red]FAILED[/bold red]: leaks of severity high or above — this version must not be "
            "promoted on this score"
            + (f" (incident {_t(report.incident)} in memory)" if report.incident else "")
        )


def render_trajectory_audit(result: Any) -> None:
    """Print a :class:`evotree.harness.audit.trajectories.TrajectoryAudit` for people."""

    console = make_console()
    console.print(
        f"{result.trajectories} trajectories ({result.steps} steps, {result.nbytes / 1e6:.1f} MB in "
        f"{result.seconds:.2f} s): {result.flagged} flagged, git history in {result.git_history_rate:.1%}"
    )
    flagged = [v for v in result.verdicts if v.hits]
    if flagged:
        _verdict_table(console, flagged, limit=50)
    if result.findings:
        _findings_table(console, result.findings)
    console.print(
        "[green]passed[/green]"
        if result.passed
        else "[bold red]FAILED[/bold red]: leaks of severity high or above"
    )


def _emit(
    result: Any, as_json: bool, render: Any, passed: bool, data: dict[str, Any] | None = None
) -> None:
    if as_json:
        indent = 2 if sys.stdout.isatty() else None
        click.echo(
            json.dumps(data if data is not None else result.to_dict(), indent=indent, default=str)
        )
    else:
        render(result)
    if not passed:
        from evotree.harness.audit.errors import AuditFailed

        raise click.exceptions.Exit(AuditFailed.exit_code)


# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.group("audit", cls=_AuditGroup, invoke_without_command=False)
def audit() -> None:
    """Leak audits: `evotree audit V` audits version V (run before any promotion).

    \b
    evotree audit V [--trajectory FILE] [--hidden PATH] [--json]
        every check over V's runs: the trajectory audit of recorded commands (git history
        beyond the task's base, .git internals, network fetches, hidden data, writes to
        tests), hash ancestry in the recorded task repositories, contamination of the
        hidden splits, protected paths; the raw and leak-adjusted scores. Exit 28 when a
        finding is high or above.
    evotree audit trajectories FILE... [--repo PATH --base REV] [--hidden|--door|--grader PATH]
        the trajectory audit of files: evotree rollouts, shell history, SWE-agent /
        mini-swe-agent JSON, Claude Code / Codex JSONL. Hidden paths have a role:
        --grader: the grader's data (a read of its content is a leak, whatever it showed);
        --door: a tool's leftover that may hold the fix (with --repo, a read is a leak when
        what it showed holds the committed future); --hidden: with --repo, a read is a
        leak when what it showed holds a distinctive line of the file.
    evotree audit repo PATH [--sanitize]
        repository hygiene: refs, reflogs and objects beyond the task's base.
    """


@audit.command("version", hidden=True)
@click.argument("version")
@click.option(
    "--trajectory",
    "trajectories",
    multiple=True,
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Also audit this trajectory file (any supported format); repeatable.",
)
@click.option(
    "--hidden",
    "hidden",
    multiple=True,
    metavar="PATH",
    help="A path no trajectory may touch, besides [eval].judge_paths; repeatable.",
)
@click.option(
    "--no-record",
    is_flag=True,
    help="Do not write findings, the ledger event or a memory incident.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON for agents (schema: `evotree schema audit`).",
)
def audit_version_cmd(
    version: str,
    trajectories: tuple[str, ...],
    hidden: tuple[str, ...],
    no_record: bool,
    as_json: bool,
) -> None:
    """Audit version VERSION (see `evotree audit --help`)."""

    try:
        from evotree.cli.common import session

        progress = None if as_json else (lambda line: click.echo(f"audit: {line}", err=True))
        report = session().audit(
            version,
            record=not no_record,
            trajectory_files=trajectories,
            hidden_paths=hidden,
            progress=progress,
        )
    except EvotreeError as exc:
        fail(exc, as_json)
        return
    _emit(report, as_json, render_audit, report.passed)


@audit.command("trajectories")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option(
    "--hidden",
    "hidden",
    multiple=True,
    metavar="PATH",
    help="A path no trajectory may touch; with --repo a read is judged by what it showed of "
    "the file (its distinctive lines); repeatable.",
)
@click.option(
    "--grader",
    "graders",
    multiple=True,
    metavar="PATH",
    help="The grader's data (hidden tests, expected values): a read of its content is a leak "
    "whatever it printed, with --repo or not; repeatable.",
)
@click.option(
    "--door",
    "doors",
    multiple=True,
    metavar="PATH",
    help="A hidden path that is a door, not the grader's data (an editor's copy, a CI "
    "artifact that may hold the fix): touching it is a finding, but with --repo a read whose "
    "recorded output shows nothing of the committed future is cleared; repeatable.",
)
@click.option(
    "--repo",
    metavar="PATH",
    type=click.Path(file_okay=False),
    default=None,
    help="The task repository, for hash ancestry (hashes not behind --base are leaks).",
)
@click.option(
    "--base",
    metavar="REV",
    default=None,
    help="The task's base commit in --repo (default: HEAD).",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="List every trajectory in --json, not only those with hits.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON for agents (schema: `evotree schema audit`).",
)
def audit_trajectories_cmd(
    files: tuple[str, ...],
    hidden: tuple[str, ...],
    graders: tuple[str, ...],
    doors: tuple[str, ...],
    repo: str | None,
    base: str | None,
    show_all: bool,
    as_json: bool,
) -> None:
    """Audit trajectory FILES for leaks (no workspace needed). Exit 28 when one leaked."""

    try:
        from evotree.harness.audit.trajectories import audit_trajectories

        if base is not None and repo is None:
            from evotree.harness.audit.errors import AuditInputError

            raise AuditInputError(
                "--base needs --repo (the repository the base commit is in)",
                fix="pass --repo PATH as well",
            )
        result = audit_trajectories(
            files,
            hidden_paths=hidden,
            door_paths=doors,
            grader_paths=graders,
            repo=repo,
            base=base,
        )
    except EvotreeError as exc:
        fail(exc, as_json)
        return
    _emit(
        result,
        as_json,
        render_trajectory_audit,
        result.passed,
        result.to_dict(all_verdicts=show_all),
    )


try:
    from evotree.cli.audit_repo import register_repo
except ImportError:
    pass
else:
    register_repo(audit)


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
