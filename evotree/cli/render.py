"""Rich text output for people. Only the CLI calls this; the library never prints.

Every field people or agents wrote (hypotheses, reasons, names, paths, commit summaries, metric
names, error text, SQL cells) goes through :func:`_esc`: control characters are made visible
(:func:`evotree.core.text.escape_control`) and rich markup is escaped, so a hypothesis cannot
hide text, fake a line of output or style the terminal.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from evotree.core.text import escape_control

_console = Console(highlight=False, soft_wrap=False)


def _esc(value: Any) -> str:
    """A user- or agent-written value, safe to print: control characters visible, markup escaped."""
    return escape(escape_control(value))

_STATUS_STYLE = {
    "active": "green",
    "running": "yellow",
    "evaluated": "cyan",
    "failed": "red",
    "abandoned": "grey50",
}


def _headline_text(headline: dict[str, Any]) -> str:
    """``metric=value`` as plain text (not yet escaped)."""
    value = headline.get("value")
    shown = f"{value:.4g}" if isinstance(value, (int, float)) else str(value)
    return f"{headline.get('metric', 'score')}={shown}"


def _headline(headline: dict[str, Any] | None) -> str:
    if not headline:
        return ""
    return f" · {_esc(_headline_text(headline))}"


def _label(view: Any, *, extra: str = "") -> str:
    status_style = _STATUS_STYLE.get(view.status, "white")
    star = " [bold yellow]★ champion[/]" if view.champion else ""
    text = (
        f"[bold]{_esc(view.id)}[/]{star} [{status_style}]{view.status}[/]"
        f"{_headline(view.headline)} · {_esc(view.hypothesis)}{extra}"
    )
    if view.status in ("abandoned", "failed"):
        reason = f" ({_esc(view.reason)})" if view.reason else ""
        return f"[dim]{text}{reason}[/dim]"
    return text


def tree(result: Any) -> None:
    """``evotree tree``: versions as a tree under their first parent; merges name both parents."""
    by_id = {v.id: v for v in result.versions}
    roots = [v for v in result.versions if v.parent is None or v.parent not in by_id]
    top = Tree(f"[bold]evotree[/] · champion [bold yellow]{_esc(result.champion)}[/]", guide_style="grey50")

    def add(node: Tree, view: Any) -> None:
        continues = False
        while True:
            extra = ""
            if len(view.parents) > 1:
                extra = f" [magenta](merge of {' + '.join(map(_esc, view.parents))})[/]"
            elif continues:
                extra = f" [grey50](from {_esc(view.parent or '')})[/]"
            branch = node.add(_label(view, extra=extra))
            children = [by_id[c] for c in view.children if by_id[c].parent == view.id]
            if len(children) != 1:
                for child in children:
                    add(branch, child)
                return
            # a linear chain stays at one level, so long lineages never run off the screen
            view, continues = children[0], True

    for root in roots:
        add(top, root)
    _console.print(top)
    negative = sum(1 for v in result.versions if v.status in ("abandoned", "failed"))
    _console.print(
        f"[grey50]{len(result.versions)} versions · {negative} kept as negative evidence[/]"
    )


def init_result(result: Any) -> None:
    _console.print(f"[green]✓[/] initialized evotree workspace in {_esc(result.root)}")
    if result.files:
        _console.print(f"  wrote {len(result.files)} file(s): {_esc(', '.join(result.files))}")
    if result.config_committed:
        _console.print("  committed the workspace files on their own")
    _console.print(f"  v0 = {result.commit[:10]} (root and champion), branch {_esc(result.branch)}")
    _console.print('  next: [bold]evotree branch -m "your hypothesis"[/]')


def version_created(record: Any) -> None:
    # plain click output: `evotree branch` is on agents' hot path, and this spares it rich's import
    import click

    shown = escape_control
    click.echo(f"{click.style('✓', fg='green')} created {click.style(shown(record.id), bold=True)} from "
               f"{shown(' + '.join(record.parents))} on branch {shown(record.branch)}")
    click.echo(f"  worktree: {shown(record.worktree or '-')}")
    click.echo(f"  hypothesis: {shown(record.hypothesis)}")


def version_abandoned(record: Any) -> None:
    _console.print(f"[yellow]✓[/] abandoned [bold]{_esc(record.id)}[/]: {_esc(record.reason or '')}")
    _console.print(f"  branch {_esc(record.branch)} kept as negative evidence; worktree removed")


def version_restored(record: Any) -> None:
    _console.print(f"[green]✓[/] restored the worktree of [bold]{_esc(record.id)}[/] at "
                   f"{_esc(record.worktree or '-')}")


def prune_result(result: Any) -> None:
    if not (result.removed or result.forgotten or result.skipped_dirty):
        _console.print("nothing to prune")
    for version in result.removed:
        _console.print(f"[green]✓[/] removed worktree of {_esc(version)}")
    for version in result.forgotten:
        _console.print(f"[green]✓[/] forgot missing worktree of {_esc(version)}")
    for version, paths in result.skipped_dirty.items():
        _console.print(f"[yellow]![/] kept {_esc(version)}: uncommitted changes in {len(paths)} file(s) "
                       "(use --force to discard)")


def version_detail(detail: Any) -> None:
    view = detail.version
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold")
    table.add_column()
    rows = [
        ("version", view.id + ("  ★ champion" if view.champion else "")),
        ("status", view.status + (f" ({view.reason})" if view.reason else "")),
        ("parents", ", ".join(view.parents) or "-"),
        ("children", ", ".join(view.children) or "-"),
        ("branch", view.branch),
        ("hypothesis", view.hypothesis),
        ("created", f"{view.created_at} by {view.created_by}"),
        ("base commit", view.base_commit[:12]),
        ("tip", (detail.tip or "missing")[:12]),
        ("worktree", (view.worktree or "-") + ("" if detail.worktree_exists or not view.worktree else " (missing)")),
    ]
    if view.headline:
        rows.append(("headline", _headline_text(view.headline)))
    if detail.uncommitted:
        rows.append(("uncommitted", f"{len(detail.uncommitted)} file(s): " + ", ".join(detail.uncommitted[:5])))
    for key, value in rows:
        table.add_row(key, _esc(str(value)))
    _console.print(table)
    if detail.commits:
        _console.print(f"\n[bold]commits since branching[/] ({len(detail.commits)})")
        for commit in detail.commits:
            _console.print(f"  {_esc(commit['commit'][:10])} {_esc(commit['summary'])}")
    _console.print(f"\n[bold]events[/] ({len(detail.events)})")
    for event in detail.events:
        _console.print(f"  {_esc(event['at'][:19])}  {_esc(event['kind'])}  {_esc(event['actor'])}")


def log(result: dict[str, Any]) -> None:
    table = Table(box=None)
    for column in ("time (UTC)", "event", "version"):
        table.add_column(column, no_wrap=True)
    table.add_column("actor", overflow="ellipsis", no_wrap=True, max_width=24)
    table.add_column("ledger commit", no_wrap=True)
    for event in result["events"]:
        actor = event["actor"].split(" <")[0]
        table.add_row(_esc(event["at"][:19].replace("T", " ")), _esc(event["kind"]),
                      _esc(event.get("version") or "-"), _esc(actor), _esc(event["commit"][:10]))
    _console.print(table)


def config(cfg: Any) -> None:
    for section, values in asdict(cfg).items():
        _console.print(f"[bold]\\[{section}][/]")
        for key, value in values.items():
            _console.print(f"  {key} = {_esc(repr(value))}")


def config_check(result: dict[str, Any]) -> None:
    _console.print(f"[green]✓[/] {_esc(result['path'])} is valid")


def schema(result: dict[str, Any]) -> None:
    import json

    if "schemas" in result:
        for name in result["schemas"]:
            _console.print(name)
    else:
        _console.print_json(json.dumps(result))


def runs(records: list[Any]) -> None:
    """``evotree run`` / ``evotree runs``: one row per run."""
    if not records:
        _console.print("no runs yet: `evotree run VERSION`")
        return
    table = Table(box=None)
    for column in ("run", "status", "headline", "wall", "steps"):  # the run id names version and seed
        table.add_column(column, no_wrap=True)
    table.add_column("note", overflow="fold", ratio=1)
    style = {"succeeded": "green", "running": "yellow", "failed": "red", "crashed": "red",
             "budget_exceeded": "magenta", "cancelled": "grey50", "ingested": "cyan"}
    for r in records:
        headline = "—" if not r.headline else f"{r.headline['metric'].split('/')[0]}={r.headline['value']:.4g}"
        table.add_row(_esc(r.run_id), f"[{style.get(r.status, 'white')}]{_esc(r.status)}[/]",
                      _esc(headline), f"{r.wall_seconds:.1f}s", str(r.usage.get("steps", "")),
                      _esc((r.error or "; ".join(r.notes))[:80]))
    _console.print(table)


class RunProgress:
    """Live progress of ``evotree run`` on stderr: a bar per run (steps when the budget is known).

    Called from the runs' worker threads; rich's Progress is thread-safe. On a terminal that is
    not interactive it prints one line per phase change instead of redrawing bars.
    """

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=True, highlight=False)
        self.live = self.console.is_terminal
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"), TimeElapsedColumn(), console=self.console,
            disable=not self.live,
        )
        self.tasks: dict[str, Any] = {}
        self.last_metric: dict[str, str] = {}

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def __call__(self, run_id: str, event: str, info: dict[str, Any]) -> None:
        if event == "started":
            self.tasks[run_id] = self.progress.add_task(
                _esc(run_id), total=info.get("max_steps"), info="starting")
            if not self.live:
                self.console.print(f"{_esc(run_id)}: started ({_esc(info['version'])}, seed {info['seed']})")
        elif event == "phase":
            self.progress.update(self.tasks[run_id], info=_esc(info["phase"]))
            if not self.live:
                self.console.print(f"{_esc(run_id)}: {_esc(info['phase'])} phase")
        elif event == "step":
            self.progress.update(self.tasks[run_id], completed=info["step"],
                                 info=f"{_esc(info['phase'])} step {info['step']} {self.last_metric.get(run_id, '')}")
        elif event == "metric" and info.get("metric") in ("loss", "reward", "train/loss", "train/reward"):
            value = info.get("value")
            self.last_metric[run_id] = f"{_esc(info['metric'])}={value:.4g}" if isinstance(value, float) else ""
        elif event == "finished":
            headline = info.get("headline")
            text = _esc(f"{info['status']}" + (f" {headline['metric']}={headline['value']:.4g}" if headline else ""))
            self.progress.update(self.tasks[run_id], info=text)
            if not self.live:
                self.console.print(f"{_esc(run_id)}: {text}")


def sql_result(result: dict[str, Any]) -> None:
    """``evotree sql``: the rows as a table (at most ``limit``)."""
    table = Table(*result["columns"], box=None)
    for row in result["rows"][: result["limit"]]:
        table.add_row(*(_esc(_cell(row[c])) for c in result["columns"]))
    _console.print(table)
    shown = min(len(result["rows"]), result["limit"])
    _console.print(f"[grey50]{len(result['rows'])} row(s)" + (f", {shown} shown" if shown < len(result["rows"]) else "") + "[/]")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "NULL" if value is None else str(value)


_SEVERITY_STYLE = {"info": "grey50", "warn": "yellow", "high": "red", "critical": "bold red"}


def backtest(result: Any) -> None:
    """``evotree backtest``: per run, dead groups and findings before → after."""
    data = result.to_dict()
    _console.print(f"backtest of {len(data['run_ids'])} run(s) under [bold]{_esc(str(result.transform))}[/] "
                   f"(harness {_esc(str(data['harness']['harness_version']))})")
    for run in data["runs"]:
        before, after = run.get("dead_group_ratio_before"), run.get("dead_group_ratio_after")
        revived = run.get("revived_fraction")
        _console.print(f"  {_esc(run['run_id'])}: dead groups {_pct(before)} → {_pct(after)}"
                       + (f" (revived {_pct(revived)})" if revived is not None else ""))
        for change in run.get("changes", []):
            _console.print(f"    {change['kind']}: {_esc(change['code'])} "
                           f"{change.get('before') or '-'} → {change.get('after') or '-'}")


def _pct(value: Any) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def harness_created(record: Any) -> None:
    _console.print(f"[green]✓[/] created harness [bold]{_esc(record.id)}[/] from {_esc(record.parent or '-')} "
                   f"on branch {_esc(record.branch or '-')}; edit harness.toml in {_esc(record.worktree or '-')}, "
                   f"commit, then `evotree harness promote {_esc(record.id)}`")


def harness_list(result: dict[str, Any]) -> None:
    for h in result["harnesses"]:
        star = " [bold yellow]★ active[/]" if h["active"] else ""
        _console.print(f"[bold]{_esc(h['id'])}[/]{star} · {_esc(h['hypothesis'])}")
