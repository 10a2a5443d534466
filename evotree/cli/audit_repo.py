"""``evotree audit repo PATH``: repository hygiene and the object-store scan.

:func:`register_repo` adds the ``repo`` subcommand to the ``audit`` group that
:mod:`evotree.cli.audit` creates. rich is imported when text is printed.
"""

from __future__ import annotations

from typing import Any

import click
from evotree.cli.common import console as make_console
from evotree.core.text import escape_control
from evotree.cli.common import outputs
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.repo import inspect_repository
from evotree.harness.audit.repo import sanitize_repository
from evotree.verbs.audit_results import RepoAuditResult

__all__ = ["register_repo", "render_repo_audit"]

_STYLE = {"critical": "bold red", "high": "red", "warn": "yellow", "info": "dim"}


def render_repo_audit(result: Any) -> None:
    """Print an audit (and a sanitize result, if any) as rich text for people."""
    from rich.table import Table

    from rich.markup import escape

    def shown(
        text: Any,
    ) -> str:  # paths, refs and finding text can carry control characters and markup
        return escape(escape_control(text))

    console = make_console()
    audit = result.audit
    scan = audit.scan
    console.print(
        f"[bold]repository[/bold] {shown(audit.path)}  [bold]base[/bold] {shown(audit.base[:12])}  "
        f"allowed refs: {shown(', '.join(audit.allowed_refs)) or '(none)'}"
    )
    beyond = ", ".join(f"{n} {k}" for k, n in sorted(scan.beyond.items())) or "nothing"
    console.print(
        f"object store: {scan.objects} objects, {scan.reachable} reachable from base; "
        f"beyond base: {beyond} ({scan.descendants} descendant, {scan.newer} newer, "
        f"{scan.older} older commit(s)); scanned in {scan.seconds:.2f} s"
    )
    if audit.findings:
        table = Table(show_lines=False)
        for column in ("severity", "code", "finding"):
            table.add_column(column)
        for f in audit.findings:
            table.add_row(
                f"[{_STYLE[f.severity]}]{f.severity}[/]",
                shown(f.code),
                f"{shown(f.title)}\n[dim]fix: {shown(f.suggestion)}[/]",
            )
        console.print(table)
    verdict = (
        "[green]passed[/green]"
        if audit.passed
        else "[bold red]FAILED[/bold red] (findings of severity high or above)"
    )
    console.print(f"audit: {verdict}")
    clean = result.sanitized
    if clean is not None:
        state = "[green]clean[/green]" if clean.passed else "[bold red]NOT clean[/bold red]"
        console.print(
            f"sanitized copy: {shown(clean.out)} (branch {shown(clean.branch)} at {shown(clean.base[:12])}, "
            f"{clean.commits} commits, {clean.objects} objects; {clean.removed_objects} objects "
            f"left behind) — re-audited: {state}"
        )
        for f in clean.audit.findings:
            console.print(
                f"  [{_STYLE[f.severity]}]{f.severity}[/] {shown(f.code)}: {shown(f.title)}"
            )


@click.command("repo")
@click.argument("path", type=click.Path(file_okay=False))
@click.option(
    "--base",
    metavar="REV",
    default=None,
    help="The task's base commit (default: HEAD). Anything base cannot reach is 'the future'.",
)
@click.option(
    "--allow-ref",
    "allowed",
    multiple=True,
    metavar="REF",
    help="A ref (or glob, e.g. 'refs/heads/evotree/*') allowed to exist; repeatable. "
    "Default: HEAD and its branch when HEAD is the base.",
)
@click.option(
    "--sanitize",
    is_flag=True,
    help="Also write a clean repository (history up to base only) to --out and audit it.",
)
@click.option(
    "--out",
    metavar="PATH",
    default=None,
    type=click.Path(),
    help="Where --sanitize writes the clean repository (must not exist, or be empty).",
)
@click.option(
    "--branch",
    metavar="NAME",
    default=None,
    help="Branch name in the clean repository (default: the source's branch, else main).",
)
@outputs(render_repo_audit, pass_json=True)
def repo(
    path: str,
    base: str | None,
    allowed: tuple[str, ...],
    sanitize: bool,
    out: str | None,
    branch: str | None,
    as_json: bool,
) -> Any:
    """Audit a task repository (or worktree) for leaks of the future.

    \b
    Reports, as audit findings with evidence (refs, hashes, counts):
      refs beyond the allowed set and tags after base, remotes, reflog entries,
      ORIG_HEAD / FETCH_HEAD / MERGE_HEAD ..., stash, notes, replace refs, grafts,
      alternates, linked worktrees, rebase/sequencer state, packs without an index,
      the index staging other content, and -- scanning the object store itself,
      not only the refs -- objects (loose or packed) that base cannot reach:
      commits after base that no ref names still hold the reference fix.
    \b
    --sanitize --out CLEAN writes a fresh repository with history up to base only
    (one branch, no tags, remotes, reflogs or stray objects), then audits it. The
    source repository is never modified.
    \b
    Exit 0: passed (with --sanitize: the clean copy passed); 28: findings of
    severity high or above (--json still prints the report); 29: unreadable input.
    """

    if sanitize and not out:
        raise AuditInputError(
            "--sanitize needs --out PATH (the source is never changed in place)",
            fix="add --out CLEAN_PATH (a new or empty directory)",
        )
    if out and not sanitize:
        raise AuditInputError(
            "--out is only used with --sanitize", fix="add --sanitize, or drop --out"
        )
    if not as_json:
        click.echo(f"evotree: scanning the object store of {path} ...", err=True)
    audit = inspect_repository(path, base=base, allowed_refs=list(allowed) or None)
    clean = None
    if sanitize:
        if not as_json:
            click.echo(f"evotree: writing a clean copy to {out} ...", err=True)
        clean = sanitize_repository(path, out, base=base, branch=branch)
    return RepoAuditResult(audit, clean)  # not passed: printed, then exit 28 (its exit_code)


def register_repo(audit_group: click.Group) -> None:
    """Add ``repo PATH [--base REV] [--allow-ref REF] [--sanitize --out PATH] [--json]``."""
    audit_group.add_command(repo, "repo")
