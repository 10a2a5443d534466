"""Commands of gates: `evotree gates`, `evotree promote`, `evotree verify`, `evotree approve-run`.

The commands sit on a holder group; :func:`register` moves them onto the ``evotree`` group
(which imports this module only when one of them runs). The interactive sign-off
(one-time code, typed version id, decision) lives here because it talks to the person; the
checks and the signing are library functions in :mod:`evotree.gates`.
"""

from __future__ import annotations

from typing import Any

import click
from evotree.cli.common import console
from evotree.core.text import escape_control
from evotree.cli.common import fail
from evotree.cli.common import open_workspace
from evotree.cli.common import outputs
from evotree.cli.common import session
from evotree.core.errors import EvotreeError
from evotree.gates.verify import verify_workspace
from evotree.harness.sandbox_report import sandbox_warning
from evotree.core.safegit import approver_process
from evotree.cli.signoff import signoff_command
from evotree.gates.ceremony import approve_run_signoff
from evotree.cli.signoff import ask
from evotree.cli.signoff import run_signoff
from evotree.core.errors import InvalidState
from evotree.gates.ceremony import SignOff
from evotree.gates.errors import SignoffRefused
from evotree.gates.evaluation import acknowledge_protected
from evotree.gates.evaluation import evaluate_gates
from evotree.gates.promote import record_decision
from evotree.gates.promote import record_promotion

__all__ = ["register"]


def _console(err: bool = False) -> Any:

    return console(highlight=False, soft_wrap=False, stderr=err)


_STATUS = {"pass": "[green]pass[/]", "fail": "[red]FAIL[/]", "unavailable": "[red]unavailable[/]"}


def _t(text: Any) -> str:
    """Text someone wrote, for rich: control characters shown escaped, markup shown as typed."""
    from rich.markup import escape

    return escape(escape_control(text))


def render_gates(report: Any, *, err: bool = False) -> None:
    """The evidence dossier for people: scores with CIs, findings, audit, the gate table."""
    from rich.table import Table

    con = _console(err)
    if getattr(report, "sandbox_warning", None):
        con.print(f"[bold red]{_t(report.sandbox_warning)}[/]")
    con.print(
        f"[bold]{_t(report.version)}[/] @ {_t(report.commit[:10])} vs champion [bold yellow]"
        f"{_t(report.champion)}[/] @ {_t(report.champion_commit[:10])}"
    )
    con.print(f"hypothesis: {_t(report.hypothesis)} · created by {_t(report.created_by)}")
    cmp = report.comparison
    score = next((g for g in report.gates if g.name == "score"), None)
    if cmp and "delta" in cmp:
        champion, candidate = _t(cmp.get("a")), _t(cmp.get("b"))
        con.print(
            f"score ({_t(cmp.get('split'))}): {champion} {cmp.get('mean_a'):.4f} → {candidate} {cmp.get('mean_b'):.4f}"
            f"  Δ {cmp.get('delta'):+.4f}  {100 * (cmp.get('confidence') or 0.95):.0f} % CI [{cmp['ci'][0]:+.4f}, "
            f"{cmp['ci'][1]:+.4f}]  one-sided p {cmp.get('p_value'):.3g}  seeds {candidate} {cmp['n_seeds'][1]}, "
            f"{champion} {cmp['n_seeds'][0]}  tasks {cmp.get('n_tasks')}  ({_t(cmp.get('ci_method'))})"
        )
        numbers = score.numbers if score is not None else {}
        if "threshold" in numbers:
            where = (
                f"look {numbers.get('look')} of {numbers.get('max_looks')} (seeds {numbers.get('looks')})"
                if (numbers.get("max_looks") or 1) > 1
                else "its one look"
            )
            con.print(
                f"  the score gate needs p < {numbers['threshold']:.3g} at {where}: "
                f"[bold]{_t(numbers.get('verdict'))}[/]"
                + _settle_text(numbers, candidate, champion)
            )
        for name, same in zip((champion, candidate), cmp.get("identical") or []):
            if same:
                con.print(
                    f"  [yellow]{name}: runs are identical copies[/] (deterministic): one run; more seeds add nothing"
                )
    if report.findings:
        con.print("findings (high and above), per code with the runs they came from:")
        for f in report.findings[:8]:
            runs = f.get("runs") or []
            where = (
                (", ".join(runs[:3]) + (f" +{len(runs) - 3}" if len(runs) > 3 else ""))
                if runs
                else "the version"
            )
            con.print(
                f"  {_t(f.get('severity'))} {_t(f.get('code'))} × {_t(f.get('count', 1))} "
                f"({_t(where)}): {_t(f.get('title'))}"
            )
    table = Table(title="gates", show_lines=False)
    for col in ("gate", "status", "evidence", "what would satisfy it"):
        table.add_column(col)
    for gate in report.gates:
        table.add_row(
            _t(gate.name),
            _STATUS.get(gate.status, _t(gate.status)),
            _t(gate.summary),
            _t(gate.fix or "") if not gate.passed else "",
        )
    con.print(table)
    verdict = (
        "[green]all gates pass[/]"
        if report.passed
        else f"[red]{len(report.failed)} gate(s) block promotion: {_t(', '.join(g.name for g in report.failed))}[/]"
    )
    con.print(verdict)


def _settle_text(numbers: dict[str, Any], candidate: str, champion: str) -> str:
    """How many more seeds would likely settle an unsettled score gate (80 % power were the observed Δ true)."""
    if numbers.get("verdict") != "more_seeds":
        return ""
    seeds, have = numbers.get("seeds_to_settle"), (numbers.get("n_seeds") or [0, 0])[1]
    if seeds:
        return (
            f"; about {max(0, seeds - have)} more seed(s) of {candidate} ({seeds} in all, and as many of "
            f"{champion}) would likely settle it"
        )
    last = (numbers.get("looks") or [None])[-1]
    return (
        f"; even {last} seeds of {candidate} would likely not settle it (less than 80 % power were the "
        "observed Δ true)"
    )


def render_promotion(result: Any) -> None:
    con = _console()
    if result.decision == "approve":
        con.print(
            f"[green]promoted[/] {_t(result.version)} (was {_t(result.previous_champion)}); signed by "
            f"{_t(result.approver)}; tag {_t(result.tag)}; evidence sha256 {_t(result.evidence_hash[:16])}…"
        )
        if result.merged:
            con.print(f"merged into {_t(result.merged)}")
    else:
        con.print(
            f"recorded [yellow]{_t(result.decision)}[/] for {_t(result.version)}, signed by "
            f"{_t(result.approver)}; champion stays {_t(result.champion)}"
        )
    for warning in result.warnings:
        con.print(f"[yellow]warning:[/] {_t(warning)}")


def render_verify(report: Any) -> None:
    con = _console()
    if report.sandbox_warning:
        con.print(f"[bold red]{_t(report.sandbox_warning)}[/]")
    anchor = report.anchor or {}
    con.print(
        f"anchor: {_t(anchor.get('version'))} @ {_t(str(anchor.get('commit'))[:10])} (allowed signers: "
        f"{_t(', '.join(anchor.get('allowed_signers') or []) or 'none')})"
    )
    for p in report.promotions:
        con.print(
            f"  ✓ {_t(p['previous'])} → {_t(p['version'])} @ {_t(str(p['commit'])[:10])} signed by "
            f"{_t(p['approver'])}"
        )
    for a in report.approvals:
        con.print(
            f"  ✓ run approval {_t(a['version'])} ({_t(a['runs'])} runs) signed by {_t(a['approver'])}"
        )
    for note in report.notes:
        con.print(f"  [dim]note: {_t(note)}[/]")
    if report.ok:
        checked = report.checked if isinstance(report.checked, dict) else {}
        counts = ", ".join(
            f"{value} {str(key).replace('_', ' ')}" for key, value in checked.items()
        )
        con.print(
            f"[green]verified[/]: champion {_t(report.champion)} @ {_t(report.champion_commit[:10])} is backed "
            f"by {len(report.promotions)} signed promotion(s)"
        )
        if counts:
            con.print(f"  checked: {_t(counts)}")
    else:
        for p in report.problems:
            con.print(f"  [red]✗ {_t(p.kind)}[/]: {_t(p.message)}")
        con.print(f"[red]tampering found[/]: {len(report.problems)} problem(s)")


def render_run_approval(result: Any) -> None:
    _console().print(
        f"[green]approved[/] up to {result.runs} run(s) of {_t(result.version)} @ "
        f"{_t(result.commit[:10])} (≤ {result.max_wall_seconds} s each), signed by {_t(result.approver)}"
    )


# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")


@cli.command("gates")
@click.argument("version")
@click.option(
    "--bootstrap",
    "B",
    type=click.IntRange(min=100),
    default=None,
    help="Resamples of the secondary bootstrap summaries (IQM, P(better)); delta, CI and p use none "
    "(default [gates].bootstrap_samples). Same name as `compare --bootstrap`.",
)
@click.option(
    "--B",
    "B_old",
    type=click.IntRange(min=100),
    default=None,
    hidden=True,
    help="The old name of --bootstrap (kept for scripts).",
)
@outputs(lambda r: render_gates(r), pass_json=True)
def gates_cmd(version: str, B: int | None, B_old: int | None, as_json: bool) -> Any:
    """Evaluate every promotion gate for VERSION without promoting (for agents and people).

    Gates: score (the comparison with the champion re-evaluated on the same pool — the same
    delta, CI and p as `evotree compare` — tested one-sided at alpha over sequential looks;
    the fix says how many more seeds would likely settle it), audit (no leak finding of high severity or above), signal (no critical
    signal finding), protected (judge, policy and signers identical to the champion's),
    budget, analyzers (diagnosed with the analyzers in force). The policy is read from the
    champion's tree only. Exit 0 whether or not the gates pass; see `passed` in --json.
    """

    if not as_json:
        click.echo(f"evaluating gates for {version} …", err=True)
    return session().gates(version, bootstrap=B if B is not None else B_old)


@cli.command("promote")
@click.argument("version")
@click.option(
    "--key",
    "key",
    default=None,
    help="Your SSH signing key (default $EVOTREE_SIGNING_KEY, then git config user.signingkey).",
)
@click.option(
    "--merge",
    is_flag=True,
    help="After promotion, merge the promoted commit into the branch "
    "checked out in the main worktree.",
)
@click.option(
    "--allow-policy-change",
    is_flag=True,
    help="Let the person accept a version that changes "
    "protected paths (gate policy, allowed signers, judge): they type 'change policy' after "
    "seeing the paths; the signed dossier records it.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON (the dossier and prompts "
    "go to stderr). Still needs a person at a terminal.",
)
def promote_cmd(
    version: str, key: str | None, merge: bool, allow_policy_change: bool, as_json: bool
) -> None:
    """Ask a person to promote VERSION to champion, with a signed sign-off.

    Evaluates every gate and prints the evidence dossier, then asks the person at the
    terminal to type the version id and a one-time code and to decide: APPROVE (only when
    every gate passes), REVISE (with feedback for the next version) or ABORT. The decision
    is signed with the approver's SSH key (`ssh-keygen -Y sign`), who must be listed in the
    champion's allowed signers and must not be the version's creator. APPROVE creates the
    signed tag evotree/promoted/VERSION and moves refs/evotree/champion atomically.

    Refused when stdin or stdout is not a terminal or a CI variable is set: agents read the
    evidence with `evotree gates VERSION --json`.
    """

    try:
        result = _promote(version, key, merge, as_json, allow_policy_change)
    except EvotreeError as exc:
        fail(exc, as_json)
        return
    if result is None:
        return
    if as_json:
        import json

        click.echo(json.dumps(result.to_dict(), default=str))
    else:
        render_promotion(result)


@cli.command("verify")
@click.option(
    "--no-tags",
    is_flag=True,
    help="Skip checking the signed tags (e.g. in a clone without tags).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print JSON for agents (see `evotree schema verify`).",
)
def verify_cmd(no_tags: bool, as_json: bool) -> None:
    """Re-check every signed approval in the ledger and where the champion stands.

    For each promotion: the signature over its statement is valid, the signer is in the
    allowed signers of the champion it replaced, the evidence hash equals the sha256 of the
    recorded dossier, it follows the previous champion, and its signed tag verifies. The
    champion ref and the ledger's champion must be the end of that chain. Exit 33 when
    anything was tampered with (an edited ledger, a champion moved without a signed approval).
    """

    try:
        with (
            approver_process()
        ):  # git and ssh-keygen: system programs, no repository setting runs one
            ws = open_workspace()
            report = verify_workspace(ws, check_tags=not no_tags)
            report.sandbox_warning = sandbox_warning(ws)
    except EvotreeError as exc:
        fail(exc, as_json)
        return
    if as_json:
        import json

        click.echo(json.dumps(report.to_dict(), default=str))
    else:
        render_verify(report)
    if not report.ok:
        raise click.exceptions.Exit(33)


@cli.command("approve-run")
@click.argument("version")
@click.option(
    "--runs",
    type=int,
    required=True,
    help="How many runs (seeds) of VERSION's current commit to allow.",
)
@click.option(
    "--key",
    "key",
    default=None,
    help="Your SSH signing key (default $EVOTREE_SIGNING_KEY, then git config user.signingkey).",
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the result as JSON (prompts go to stderr)."
)
def approve_run_cmd(version: str, runs: int, key: str | None, as_json: bool) -> None:
    """Approve costly training runs of VERSION (the train gate), with a signed sign-off.

    Runs whose budgeted cost (runs × [budget].max_wall_seconds) exceeds
    [gates].train_approval_above_seconds start only with such an approval of the version's
    current commit. Same rules as promote: a person at a terminal, an allowed key, not the
    version's creator, the version id and a one-time code typed back.
    """

    signoff_command(
        lambda ws, policy: approve_run_signoff(ws, policy, version, runs),
        key,
        as_json,
        action="approve runs",
        render=render_run_approval,
    )


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)


def _promote(
    version: str, key: str | None, merge: bool, as_json: bool, allow_policy_change: bool = False
) -> Any:
    """`evotree promote` through the one sign-off driver: the gates are evaluated once the key is
    known to be allowed (no workspace code near it), shown, and decide the choices offered."""

    state: dict[str, Any] = {}

    def build(ws: Any, policy: Any) -> SignOff:
        if merge:  # refused before anything is shown or signed; record_promotion checks again
            from evotree.core.safegit import refuse_program_settings

            refuse_program_settings(ws.root, "--merge", git=policy.config.tools.git or None)
        record = ws.resolve(version)
        if record.id == policy.champion:
            raise InvalidState(
                f"{record.id} is already the champion", fix="branch a new version and promote that"
            )
        state["ws"], state["record"] = ws, record

        def record_fn(approver: Any, decision: str, text: str) -> Any:
            if decision == "approve":
                return record_promotion(ws, policy, state["report"], approver, merge=merge)
            return record_decision(ws, policy, state["report"], approver, decision, text)

        return SignOff(
            action="promote",
            subject=record.id,
            creator=record.created_by,
            record=record_fn,
            choices=("approve", "revise", "abort"),
            text_for={"revise": "feedback for the next version", "abort": "reason"},
        )

    def prepare(request: Any, approver: Any, policy: Any) -> None:
        ws, record = state["ws"], state["record"]
        click.echo(f"evaluating gates for {record.id} against {policy.champion} …", err=True)
        report = evaluate_gates(
            ws, record.id, policy=policy, run_plugins=False
        )  # no workspace code near the key
        render_gates(report, err=as_json)
        protected = next(g for g in report.gates if g.name == "protected")
        if allow_policy_change and not protected.passed:
            # one path a line, control characters shown escaped: a file name cannot hide the rest
            listing = "\n".join(
                f"  {_shown(path)}" for path in protected.numbers.get("changed") or []
            )
            click.echo(
                f"\n{record.id} changes these protected paths (all of them):\n{listing}\nIf promoted, these "
                "become the policy and judge of every later version.",
                err=as_json,
            )
            if (
                ask("type 'change policy' to accept them", as_json).strip().lower()
                != "change policy"
            ):
                raise SignoffRefused(
                    "the protected-path change was not accepted; nothing was recorded",
                    fix="promote without --allow-policy-change, or type 'change policy'",
                )
            acknowledge_protected(report, approver.principal)
            click.echo(
                "protected paths accepted; "
                + (
                    "all gates pass"
                    if report.passed
                    else f"still blocking: {', '.join(g.name for g in report.failed)}"
                ),
                err=as_json,
            )
        state["report"] = report
        if not report.passed:
            request.choices = ("revise", "abort")
            request.note = "APPROVE is not offered: the gates above block promotion."

    return run_signoff(build, key, as_json, action="promote", prepare=prepare)


def _shown(text: Any) -> str:
    """``text`` as printable characters: control characters (ANSI escapes, newlines, carriage
    returns, bidi overrides) a candidate put in a path or hypothesis are shown escaped, never
    interpreted by the terminal (:func:`evotree.core.text.escape_control`)."""

    return escape_control(text)
