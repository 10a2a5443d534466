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

from evotree.cli.console import console
from evotree.core.text import escape_control


class _PrintingConsole:
    """The console every renderer prints with, made at each use (:func:`console`): $COLUMNS and
    whether stdout is a terminal are read when printing, never frozen at import (a process that
    imported the CLI under another width kept it)."""

    def __getattr__(self, name: str) -> Any:
        return getattr(console(highlight=False, soft_wrap=False), name)


_console = _PrintingConsole()


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


def _plural(count: int, word: str, plural: str | None = None) -> str:
    """``1 version``, ``3 versions``."""
    return f"{count} {word if count == 1 else (plural or word + 's')}"


def _headline_text(headline: dict[str, Any]) -> str:
    """``metric=value`` as plain text (not yet escaped)."""
    value = headline.get("value")
    shown = f"{value:.4g}" if isinstance(value, (int, float)) else str(value)
    normalized = headline.get("normalized")  # [eval.normalize]: beside the raw score
    extra = f" (normalized {normalized:.3f})" if isinstance(normalized, (int, float)) else ""
    return f"{headline.get('metric', 'score')}={shown}{extra}"


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
    top = Tree(
        f"[bold]evotree[/] · champion [bold yellow]{_esc(result.champion)}[/]", guide_style="grey50"
    )

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
        f"[grey50]{_plural(len(result.versions), 'version')} · {negative} kept as negative evidence[/]"
    )


def init_result(result: Any) -> None:
    _console.print(f"[green]✓[/] initialized evotree workspace in {_esc(result.root)}")
    if result.files:
        _console.print(f"  wrote {len(result.files)} file(s): {_esc(', '.join(result.files))}")
    if result.config_committed:
        _console.print("  committed the workspace files on their own")
    _console.print(f"  v0 = {result.commit[:10]} (root and champion), branch {_esc(result.branch)}")
    if result.judge_files:  # moved out of the checkout: say where, so nobody thinks they were lost
        _console.print(
            f"  [yellow]moved[/] {len(result.judge_files)} judge file(s) out of the checkout into the "
            f"judge store (refs/evotree/judge {str(result.judge_commit)[:10]}): "
            f"{_esc(', '.join(result.judge_files[:8]))}{' …' if len(result.judge_files) > 8 else ''}; "
            "read them with `evotree judge show PATH`, change them with `evotree judge propose`"
        )
    for note in result.notes:
        _console.print(f"  [yellow]note:[/] {_esc(note)}")
    # the quickstart's next step: the champion needs runs before anything can be compared with it
    _console.print(
        '  next: [bold]evotree run v0 --seeds 3[/]  (then `evotree branch -m "your hypothesis"`)'
    )


def version_created(record: Any) -> None:
    # plain click output: `evotree branch` is on agents' hot path, and this spares it rich's import
    import click

    shown = escape_control
    click.echo(
        f"{click.style('✓', fg='green')} created {click.style(shown(record.id), bold=True)} from "
        f"{shown(' + '.join(record.parents))} on branch {shown(record.branch)}"
    )
    click.echo(f"  worktree: {shown(record.worktree or '-')}")
    click.echo(f"  hypothesis: {shown(record.hypothesis)}")


def version_diff(result: Any) -> None:
    """``evotree diff V W``: the parameters that differ, then the files that changed."""
    a, b = _esc(result.a), _esc(result.b)
    _console.print(
        f"[bold]{a}[/] {_esc(result.commit_a[:10])} → [bold]{b}[/] {_esc(result.commit_b[:10])}"
    )
    if result.headline_a or result.headline_b:
        _console.print(
            f"  headline: {a} {_esc(_headline_text(result.headline_a) if result.headline_a else '—')}"
            f" → {b} {_esc(_headline_text(result.headline_b) if result.headline_b else '—')}"
        )
    if result.params:
        table = Table(box=None)
        for column in ("path", "param", result.a, result.b):
            table.add_column(_esc(column), overflow="fold")
        for p in result.params:
            table.add_row(*(_esc(_param(x)) for x in (p["path"], p["param"], p["a"], p["b"])))
        _console.print(table)
    else:
        _console.print("  no parameter differs")
    if result.files:
        _console.print(f"[bold]{_plural(len(result.files), 'file')} changed[/]")
        for f in result.files:
            counts = "binary" if f.get("binary") else f"+{f['additions']} −{f['deletions']}"
            old = f" (from {_esc(f['old_path'])})" if f.get("old_path") else ""
            _console.print(f"  {f['status']:<8} {_esc(f['path'])}{old}  [grey50]{counts}[/]")
    else:
        _console.print("  the two trees are identical")
    for u in result.unreadable:
        _console.print(
            f"  [yellow]![/] {_esc(u['path'])} of {_esc(u['version'])} is not readable as "
            f"parameters: {_esc(u['reason'])}"
        )


def _param(value: Any) -> str:
    import json

    if value is None:
        return "—"
    return value if isinstance(value, str) else json.dumps(value, default=str)


def version_abandoned(record: Any) -> None:
    _console.print(
        f"[yellow]✓[/] abandoned [bold]{_esc(record.id)}[/]: {_esc(record.reason or '')}"
    )
    _console.print(f"  branch {_esc(record.branch)} kept as negative evidence; worktree removed")


def version_restored(record: Any) -> None:
    _console.print(
        f"[green]✓[/] restored the worktree of [bold]{_esc(record.id)}[/] at "
        f"{_esc(record.worktree or '-')}"
    )


def prune_result(result: Any) -> None:
    if not (result.removed or result.forgotten or result.skipped_dirty):
        _console.print("nothing to prune")
    for version in result.removed:
        _console.print(f"[green]✓[/] removed worktree of {_esc(version)}")
    for version in result.forgotten:
        _console.print(f"[green]✓[/] forgot missing worktree of {_esc(version)}")
    for version, paths in result.skipped_dirty.items():
        _console.print(
            f"[yellow]![/] kept {_esc(version)}: uncommitted changes in {len(paths)} file(s) "
            "(use --force to discard)"
        )


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
        (
            "worktree",
            (view.worktree or "-")
            + ("" if detail.worktree_exists or not view.worktree else " (missing)"),
        ),
    ]
    if view.headline:
        rows.append(("headline", _headline_text(view.headline)))
    if detail.uncommitted:
        rows.append(
            (
                "uncommitted",
                f"{len(detail.uncommitted)} file(s): " + ", ".join(detail.uncommitted[:5]),
            )
        )
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
        table.add_row(
            _esc(event["at"][:19].replace("T", " ")),
            _esc(event["kind"]),
            _esc(event.get("version") or "-"),
            _esc(actor),
            _esc(event["commit"][:10]),
        )
    _console.print(table)


def config(cfg: Any) -> None:
    for section, values in asdict(cfg).items():
        _console.print(f"[bold]\\[{section}][/]")
        for key, value in values.items():
            _console.print(f"  {key} = {_esc(repr(value))}")


def config_check(result: Any) -> None:
    path = result.path if hasattr(result, "path") else result["path"]
    _console.print(f"[green]✓[/] {_esc(path)} is valid")


def schema(result: Any) -> None:
    import json

    result = result.to_dict() if hasattr(result, "to_dict") else result
    if "schemas" in result:
        for name in result.get("current", result["schemas"]):
            _console.print(name)
        aliases = result.get("aliases") or {}
        if aliases:
            _console.print(
                f"[grey50]old names still accepted: "
                f"{', '.join(f'{old} → {new}' for old, new in aliases.items())}[/]"
            )
    else:
        _console.print_json(json.dumps(result))


def runs(records: list[Any]) -> None:
    """``evotree run`` / ``evotree runs``: one row per run."""
    if not records:
        _console.print("no runs yet: `evotree run VERSION`")
        return
    table = Table(box=None)
    for column in (
        "run",
        "status",
        "headline",
        "wall",
        "steps",
    ):  # the run id names version and seed
        table.add_column(column, no_wrap=True)
    table.add_column("note", overflow="fold", ratio=1)
    console = _table_console()
    style = {
        "succeeded": "green",
        "running": "yellow",
        "failed": "red",
        "crashed": "red",
        "budget_exceeded": "magenta",
        "cancelled": "grey50",
        "ingested": "cyan",
    }
    for r in records:
        headline = (
            "—"
            if not r.headline
            else f"{r.headline['metric'].split('/')[0]}={r.headline['value']:.4g}"
        )
        table.add_row(
            _esc(r.run_id),
            f"[{style.get(r.status, 'white')}]{_esc(r.status)}[/]",
            _esc(headline),
            f"{r.wall_seconds:.1f}s",
            str(r.usage.get("steps", "")),
            _esc(_note(r)),
        )
    console.print(table)


def _note(record: Any, width: int = 160) -> str:
    """A run's note in the table: its error and the end of the failing phase's log (the real
    cause: `evotree logs RUN` has the rest), else its notes; at most ``width`` characters."""
    tail = next(
        (
            n.split(" ends: ", 1)[1]
            for n in record.notes
            if " ends: " in n and n.split(" ", 1)[0].endswith((".err", ".out"))
        ),
        None,
    )
    if record.error:
        text = record.error.split(": see ", 1)[0]
        if tail:
            text = f"{text}: {tail}"
    else:
        text = "; ".join(record.notes)
    return text if len(text) <= width else text[: width - 1] + "…"


def _table_console() -> Console:
    """The console for a table: the terminal's, else (a log, a pipe, CI) $COLUMNS or one wide
    enough that no header or row is split at 80 columns (:func:`console`)."""
    return console(highlight=False, soft_wrap=False)


def share_result(result: Any) -> None:
    """``evotree push`` / ``evotree pull``."""
    where = f" {_esc(result.remote)}" if result.remote else ""
    if result.action == "push":
        _console.print(
            f"[green]✓[/] pushed {_plural(result.refs, 'run evidence ref')} to{where}"
            + (f" ({len(result.archived)} newly archived)" if result.archived else "")
        )
    else:
        _console.print(
            f"[green]✓[/] {_plural(len(result.restored), 'run')} written back from "
            f"{_plural(result.refs, 'evidence ref')}"
            + (f" fetched from{where}" if result.remote else "")
        )
        for run_id in result.restored[:20]:
            _console.print(f"  {_esc(run_id)}")
        if len(result.restored) > 20:
            _console.print(f"  … and {len(result.restored) - 20} more")
    for skipped in result.skipped:
        _console.print(f"  [yellow]skipped[/] {_esc(skipped['run_id'])}: {_esc(skipped['reason'])}")
    updated = getattr(result, "updated", None) or []
    if updated:
        _console.print(
            f"  {_plural(len(updated), 'ref')} {'sent' if result.action == 'push' else 'updated'}"
        )
    for rejected in getattr(result, "rejected", None) or []:
        _console.print(
            f"  [red]left unchanged[/] {_esc(rejected['ref'])}: {_esc(rejected['reason'])}"
        )


def _progress_text(progress: dict[str, Any]) -> str:
    """``step 40/200 · loss=0.31 · 2.1 steps/s · ETA 1m16s`` from :class:`evotree.harness.live.LiveProgress`."""
    if progress.get("step") is None:
        return "starting (no step recorded yet)"
    parts = [
        f"{_esc(progress.get('phase') or '')} step {progress['step']}"
        + (f"/{progress['total_steps']}" if progress.get("total_steps") else "")
    ]
    if progress.get("metric") is not None and isinstance(progress.get("value"), (int, float)):
        parts.append(f"{_esc(progress['metric'])}={progress['value']:.4g}")
    if progress.get("steps_per_second"):
        parts.append(f"{progress['steps_per_second']:.2g} steps/s")
    if progress.get("eta_seconds") is not None:
        minutes, seconds = divmod(int(progress["eta_seconds"]), 60)
        parts.append(f"ETA {minutes}m{seconds:02d}s")
    return " · ".join(parts)


def workspace_status(result: Any) -> None:
    """``evotree status``: the champion, running runs, each version's state and next step."""
    data = result.to_dict()
    head = data.get("champion_headline")
    _console.print(
        f"champion [bold yellow]{_esc(data['champion'])}[/]"
        + (f" · {_esc(_headline_text(head))}" if head else " · not scored yet")
        + (
            f"   (you are in the worktree of [bold]{_esc(data['here'])}[/])"
            if data.get("here")
            else ""
        )
    )
    if data["running"]:
        _console.print("[yellow]running[/]:")
        for run in data["running"]:
            _console.print(f"  {_esc(run['run_id'])}  {_progress_text(run.get('progress') or {})}")
    elif data["reserved"]:
        _console.print(
            f"[yellow]{_plural(data['reserved'], 'run')} reserved[/] (starting, or on another machine)"
        )
    else:
        _console.print("nothing running")
    foreign = data.get("foreign_reservations") or []
    if foreign:  # a remote's, unsigned, an unlisted runner key: shown apart, never counted
        _console.print(
            f"[grey50]{_plural(len(foreign), 'reservation')} in the ledger not counted "
            "here (foreign):[/]"
        )
        for row in foreign[:10]:
            _console.print(
                f"  [grey50]{_esc(row['run_id'])} ({_esc(row.get('host') or '?')}): "
                f"{_esc(row['why'])}[/]"
            )
    table = Table(box=None)
    for column in ("version", "state", "runs", "next", "waits for"):
        table.add_column(column, overflow="fold")
    style = {"person": "bold magenta", "agent": "cyan", "runs": "yellow", "nothing": "grey50"}
    for row in data["versions"]:
        runs = f"{row['scored_runs']}/{row['runs']}" + (
            f" ({row['failed_runs']} failed)" if row["failed_runs"] else ""
        )
        table.add_row(
            _esc(row["id"]) + (" ★" if row["champion"] else ""),
            _esc(row["state"]),
            runs,
            _esc(row["next"]),
            f"[{style.get(row['waits_for'], 'white')}]{_esc(row['waits_for'])}[/]",
        )
    _table_console().print(table)
    if data["for_a_person"]:
        _console.print("[bold magenta]waits for a person:[/]")
        for line in data["for_a_person"]:
            _console.print(f"  {_esc(line)}")


def run_logs(result: Any) -> None:
    """``evotree logs RUN``: each log's last lines under a header naming the file."""
    data = result.to_dict()
    _console.print(
        f"[bold]{_esc(data['run_id'])}[/] {_esc(data.get('status') or '?')}"
        + (f": {_esc(data['error'])}" if data.get("error") else "")
    )
    if not data["logs"]:
        _console.print("[grey50]no logs: the run wrote none (or its phases did not start)[/]")
    for log in data["logs"]:
        more = " (last lines)" if log["truncated"] else ""
        _console.print(
            f"\n[bold]── {_esc(log['phase'])}.{_esc(log['stream'])}[/]{more} [grey50]{_esc(log['path'])}[/]"
        )
        for line in log["lines"]:
            _console.print(_esc(line), soft_wrap=True)
        if not log["lines"]:
            _console.print("[grey50](empty)[/]")


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
            TimeRemainingColumn,
        )

        self.console = console(stderr=True, highlight=False)
        self.live = self.console.is_terminal
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[info]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=self.console,
            disable=not self.live,
        )
        self.tasks: dict[str, Any] = {}
        self.last_metric: dict[str, str] = {}

    def __enter__(self) -> RunProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def __call__(self, run_id: str, event: str, info: dict[str, Any] | None) -> None:
        info = (
            info if isinstance(info, dict) else {}
        )  # an event whose figures are hidden may carry nothing
        if event == "budget":  # before any run starts: the budget left cuts each run short
            self.console.print(f"[magenta]budget:[/] {_esc(str(info.get('note', '')))}")
        elif event == "started":
            self.tasks[run_id] = self.progress.add_task(
                _esc(run_id), total=info.get("max_steps"), info="starting"
            )
            if not self.live:
                self.console.print(
                    f"{_esc(run_id)}: started ({_esc(str(info.get('version', '?')))}, "
                    f"seed {info.get('seed', '?')})"
                )
        elif run_id not in self.tasks:
            return  # an event of a run this view never saw start
        elif event == "phase":
            phase = _esc(str(info.get("phase", "")))
            self.progress.update(self.tasks[run_id], info=phase)
            if not self.live:
                self.console.print(f"{_esc(run_id)}: {phase} phase")
        elif event == "step" and isinstance(info.get("step"), int):
            self.progress.update(
                self.tasks[run_id],
                completed=info["step"],
                info=f"{_esc(str(info.get('phase', '')))} step {info['step']} "
                f"{self.last_metric.get(run_id, '')}",
            )
        elif event == "metric" and info.get("metric") in (
            "loss",
            "reward",
            "train/loss",
            "train/reward",
        ):
            value = info.get("value")
            self.last_metric[run_id] = (
                f"{_esc(info['metric'])}={value:.4g}" if isinstance(value, float) else ""
            )
        elif event == "finished":
            headline = info.get("headline")
            shown = (
                f" {headline.get('metric')}={headline.get('value'):.4g}"
                if isinstance(headline, dict) and isinstance(headline.get("value"), (int, float))
                else ""
            )
            text = _esc(f"{info.get('status', 'finished')}{shown}")
            self.progress.update(self.tasks[run_id], info=text)
            if not self.live:
                self.console.print(f"{_esc(run_id)}: {text}")


def sql_result(result: Any) -> None:
    """``evotree sql``: the rows as a table (at most ``limit``)."""
    result = result.to_dict() if hasattr(result, "to_dict") else result
    table = Table(*result["columns"], box=None)
    for row in result["rows"][: result["limit"]]:
        table.add_row(*(_esc(_cell(row[c])) for c in result["columns"]))
    _console.print(table)
    shown = min(len(result["rows"]), result["limit"])
    _console.print(
        f"[grey50]{len(result['rows'])} row(s)"
        + (f", {shown} shown" if shown < len(result["rows"]) else "")
        + "[/]"
    )


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return "NULL" if value is None else str(value)


_SEVERITY_STYLE = {"info": "grey50", "warn": "yellow", "high": "red", "critical": "bold red"}


def backtest(result: Any) -> None:
    """``evotree backtest``: per run, dead groups and findings before → after."""
    data = result.to_dict()
    _console.print(
        f"backtest of {len(data['run_ids'])} run(s) under [bold]{_esc(str(result.transform))}[/] "
        f"(analyzers {_esc(str(data['analyzers']['harness_version']))})"
    )
    for run in data["runs"]:
        before, after = run.get("dead_group_ratio_before"), run.get("dead_group_ratio_after")
        revived = run.get("revived_fraction")
        _console.print(
            f"  {_esc(run['run_id'])}: dead groups {_pct(before)} → {_pct(after)}"
            + (f" (revived {_pct(revived)})" if revived is not None else "")
        )
        for change in run.get("changes", []):
            _console.print(
                f"    {change['kind']}: {_esc(change['code'])} "
                f"{change.get('before') or '-'} → {change.get('after') or '-'}"
            )


def _pct(value: Any) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def analyzers_created(record: Any) -> None:
    _console.print(
        f"[green]✓[/] created analyzer version [bold]{_esc(record.id)}[/] from "
        f"{_esc(record.parent or '-')} on branch {_esc(record.branch or '-')}; edit harness.toml "
        f"in {_esc(record.worktree or '-')}, commit, then "
        f"`evotree analyzers promote {_esc(record.id)}`"
    )


def analyzers_list(result: Any) -> None:
    result = result.to_dict() if hasattr(result, "to_dict") else result
    for h in result["analyzers"]:
        star = " [bold yellow]★ active[/]" if h["active"] else ""
        _console.print(f"[bold]{_esc(h['id'])}[/]{star} · {_esc(h['hypothesis'])}")
