"""Run commands: `run`, `runs`, `runs void`, `push`, `pull`, `status`, `logs`, `sql`, `ingest`."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from evotree.cli.common import open_workspace, outputs, renderer, session
from evotree.harness.logs import LOG_PHASES
from evotree.harness.records import runs_dir
from evotree.verbs.policy import hidden_now
from evotree.harness.provenance import mark_foreign
from evotree.harness.records import list_runs
from evotree.cli.signoff import signoff_command
from evotree.gates.ceremony import void_signoff
from evotree.harness.share import push_evidence
from evotree.core.errors import NotAWorkspace
from evotree.harness.share import fetch_shared
from evotree.harness.share import pull_evidence
from evotree.harness.status import workspace_status
from evotree.core.visibility import HiddenUntilFinalize
from evotree.harness.logs import find_run_dir
from evotree.harness.logs import run_logs
from evotree.core.text import escape_control
from evotree.harness.live import follow_logs
from evotree.harness.records import RunRecord
from evotree.verbs.results import LogLine
from evotree.harness.query import query
from evotree.harness.query import sql_limits
from evotree.verbs.results import SqlOutput
from evotree.harness.ingest import ingest_trainer_state

__all__ = ["register"]

# a holder group: :func:`register` moves its commands onto the ``evotree`` group
cli = click.Group("evotree")

#: the largest seed: seeds reach numpy, torch and gymnasium, which take 32-bit seeds (and SQLite / Parquet
#: store them as 64-bit integers); --seed-start 2**70 is refused by click (exit 2) instead of becoming NULL
MAX_SEED = 2**31 - 1


# ---------------------------------------------------------------------------- run / runs
@cli.command()
@click.argument("versions", nargs=-1, required=False, metavar="[VERSION...]")
@click.option(
    "--seeds",
    type=click.IntRange(min=1, max=MAX_SEED),
    default=1,
    show_default=True,
    help="Runs per version, with seeds S..S+N-1 (S: --seed-start).",
)
@click.option(
    "--seed-start",
    type=click.IntRange(min=0, max=MAX_SEED),
    default=0,
    show_default=True,
    help="First seed: add seeds to a comparison (e.g. --seeds 3 --seed-start 3 after 0..2) "
    "instead of repeating them.",
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Runs executed at once (default: [executor].jobs).",
)
@click.option(
    "--heldout",
    is_flag=True,
    help="Also score the held-out split (for the candidate selected on validation).",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray", "slurm"]),
    default=None,
    help="Where runs execute (default: [executor].kind): local processes, Ray tasks, or Slurm jobs "
    "(docs/cluster.md).",
)
@click.option(
    "--address",
    default=None,
    metavar="ADDR",
    help="Ray cluster address, e.g. 10.0.0.1:6379 or auto (default: [executor].address; "
    "'' starts a local Ray for this command).",
)
@click.option(
    "--follow",
    "-f",
    is_flag=True,
    help="Print what each run's phases write as they write it (stderr, prefixed by the run id).",
)
@outputs(renderer("runs"), pass_json=True)
def run(
    versions: tuple[str, ...],
    seeds: int,
    seed_start: int,
    jobs: int | None,
    heldout: bool,
    executor: str | None,
    address: str | None,
    follow: bool,
    as_json: bool,
) -> Any:
    """Run versions under the harness: train phase, then the champion's judge.

    Without VERSION inside a version's worktree (.evotree/worktrees/vN), runs that version.

    \b
    Each run exports the version's committed tree (uncommitted changes are refused) into
    .evotree/runs/<run_id>/candidate, runs [train].command there, then runs the judge
    ([eval].command) from the champion's tree; only the judge sees hidden splits.
    Evidence (signals, rollouts, evals) is written as JSONL while running and compacted
    to Parquet at the end. Budgets are checked before anything starts. Ctrl-C stops the
    runs cleanly and marks them cancelled.

    \b
    --executor ray schedules each (version, seed) as a Ray task with the resources of
    [executor] (cpus, gpus, memory_gb); the version travels as its exported commit, the
    workers write evidence to [executor].evidence_uri and this command imports it and
    writes the ledger. A run whose worker or node dies is marked failed with the cause and
    retried up to [executor].max_retries times. See docs/cluster.md.

    \b
    When a version's runs (two or more seeds) give identical per-task scores — a deterministic
    policy, or a domain that ignores the seed — a warning says that more seeds add nothing.
    """
    if seed_start + seeds - 1 > MAX_SEED:
        from evotree.core.errors import UsageError

        raise UsageError(
            f"--seed-start {seed_start} with --seeds {seeds} reaches seed {seed_start + seeds - 1}, "
            f"above the largest seed {MAX_SEED}",
            fix="start lower",
            option="--seed-start",
        )
    ws = open_workspace()
    if not versions:  # inside a version's worktree, `evotree run` runs that version
        versions = (_version_here(ws),)
    options = {
        "seeds": seeds,
        "seed_start": seed_start,
        "jobs": jobs,
        "heldout": heldout,
        "executor": executor,
        "address": address,
    }
    view = None
    if not as_json:
        from evotree.cli.render import RunProgress

        view = RunProgress()
    progress = _following(ws, view) if follow else view
    try:
        if view is not None:
            with view:
                records = session().run(list(versions), progress=progress, **options)
        else:
            records = session().run(list(versions), progress=progress, **options)
    except KeyboardInterrupt:  # a second Ctrl-C while stopping
        raise click.exceptions.Exit(130) from None
    _warn_after_runs(ws, records)
    _archive(ws, [r.run_id for r in records])
    return RunResults(records)


def _version_here(ws: Any) -> str:
    """The version whose worktree the command was started in (for `evotree run` without VERSION)."""
    from evotree.core.errors import UsageError
    from evotree.core.versions import version_at

    here = version_at(ws, click.get_current_context().find_root().obj["dir"])
    if here is None:
        raise UsageError(
            "which version? name one (evotree run v1), or run it inside a version's worktree",
            fix="`evotree tree` lists the versions; e.g. evotree run v0 --seeds 3",
        )
    return here


def _warn_after_runs(ws: Any, records: Any) -> None:
    """Notes on stderr after the runs: evotree.toml drift, seeds that gave identical scores."""
    drift = ws.config_drift()
    if drift:
        click.secho(f"evotree: note: {drift}", fg="yellow", err=True)
    for note in session().identical_runs_notes(
        [r.version for r in records if r.status == "succeeded"]
    ):
        click.secho(f"evotree: warning: {note}", fg="yellow", err=True)


def _following(ws: Any, view: Any) -> Any:
    """A progress callback that also starts printing each run's phase output when it starts
    (the judge's left out while figures are hidden), then passes the event on to ``view``."""
    import threading

    phases = tuple(p for p in LOG_PHASES if not (p == "eval" and hidden_now(ws)))
    base = runs_dir(ws)

    def progress(run_id: str, event: str, info: Any) -> None:
        if event == "started":
            threading.Thread(
                target=_follow,
                args=(base / run_id, phases, False),
                daemon=True,
                kwargs={"prefix": f"{run_id} ", "err": True},
            ).start()
        if view is not None:
            view(run_id, event, info)

    return progress


def _archive(ws: Any, run_ids: list[str]) -> None:
    """Keep the finished runs' evidence in refs/evotree/runs/ too (safe from `git clean -xdf`, shared by
    `git push origin 'refs/evotree/*'`); a failure here is a warning: the runs themselves stand."""
    try:
        from evotree.harness.share import archive_runs

        result = archive_runs(ws, run_ids)
    except Exception as exc:  # noqa: BLE001 - archiving is a copy: never fail the runs over it
        click.secho(
            f"evotree: warning: the runs' evidence was not archived in refs/evotree/runs ({exc}); "
            "`evotree push` retries",
            fg="yellow",
            err=True,
        )
        return
    for skipped in result.skipped:
        if skipped["reason"] != "still running":
            click.secho(
                f"evotree: note: {skipped['run_id']} not archived in git: {skipped['reason']}",
                fg="yellow",
                err=True,
            )


class RunResults(list):  # type: ignore[type-arg]
    """The records of `evotree run`, printed first; then exit 37 when any run did not succeed.

    A failed, invalid (the candidate's code broke), crashed or budget-stopped run is a result
    worth reading, not an error of the command, so its record is printed (or its JSON) as usual;
    but a script or an agent must not take the command for a success: the exit code says it.
    """

    @property
    def exit_code(self) -> int:
        return 37 if any(r.status not in ("succeeded", "ingested") for r in self) else 0


@outputs(renderer("runs"))
def _list_runs(version: str | None) -> Any:

    ws = open_workspace()
    return mark_foreign(ws, list_runs(ws, version=version))


@cli.group(invoke_without_command=True)
@click.option("--version", "version", default=None, metavar="V", help="Only runs of this version.")
@click.option(
    "--json", "as_json", is_flag=True, help="Print JSON for agents (see `evotree schema`)."
)
@click.pass_context
def runs(ctx: click.Context, version: str | None, as_json: bool) -> None:
    """List the runs recorded on this machine, oldest first.

    \b
    evotree runs void RUN_ID --reason TEXT: a person takes a run whose evidence cannot be
    counted out of the evidence, with a signed sign-off.
    """
    if ctx.invoked_subcommand is None:
        _list_runs(version=version, as_json=as_json)


@runs.command("void")
@click.argument("run_id", metavar="RUN_ID")
@click.option(
    "--reason",
    required=True,
    help="Why the run is voided (signed, and shown wherever it is listed).",
)
@click.option(
    "--key",
    "key",
    default=None,
    help="Your SSH signing key (default $EVOTREE_SIGNING_KEY, then git config user.signingkey).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON (prompts go to stderr). Still needs a person at a terminal.",
)
def runs_void(run_id: str, reason: str, key: str | None, as_json: bool) -> None:
    """Take a run out of the evidence, with a person's signed sign-off (run.voided).

    For a run the ledger records whose evidence cannot be counted — recorded before evidence
    manifests existed (unverified), its directory lost for good (missing), edited (tampered)
    or never finished — and which would otherwise fail the score gate forever. The run, its
    seed, state and recorded headline are shown; the person at the terminal types the run id
    and a one-time code and confirms; the statement (run, version, reason) is signed with
    their SSH key, which must be in the champion's allowed signers and must not be the
    version's creator's. Voided runs are in no number, and `gates`, `compare` and reports list
    them with who voided them and why. A run that counts cannot be voided. Refused without a
    terminal or under CI (exit 31), for a key not allowed (32).
    """

    signoff_command(
        lambda ws, policy: void_signoff(ws, policy, run_id, reason),
        key,
        as_json,
        action="void a run",
        render=lambda result: (
            f"run {result.run_id} of {result.version} is voided "
            f"({result.state_before} before); signed by {result.approver}"
        ),
    )


@cli.command()
@click.argument("remote", required=False)
@click.option(
    "--store",
    default=None,
    metavar="URI",
    help="Where runs too large for git go (a path or an fsspec URL, e.g. s3://bucket/evotree; "
    "default: [executor].evidence_uri when set); the ref then holds the files' hashes.",
)
@outputs(renderer("share_result"))
def push(remote: str | None, store: str | None) -> Any:
    """Share the tree and its evidence: archive finished runs in refs/evotree/runs/, push every ref a clone needs.

    \b
    REMOTE defaults to origin. Each run's run.json, Parquet, evidence/ and logs/ become one
    content-addressed commit on refs/evotree/runs/<run_id> (`evotree run` archives its runs
    already). Pushed with them: the version branches, the ledger, champion, memory, judge store
    and the signed promotion tags refs/tags/evotree/*. A clone then runs `evotree pull`.
    Never forced: a remote ref that names other evidence is refused. A run over 256 MiB goes to
    --store instead (its ref keeps the URI and the files' sha256; `evotree pull` checks them).
    """

    ws = open_workspace()
    configured = ws.config.executor.evidence_uri
    if (
        not store and configured
    ):  # the cluster's evidence store, relative to the workspace when a path
        import re
        from pathlib import Path

        store = (
            configured
            if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", configured)
            else str(ws.root / Path(configured))
        )
    return push_evidence(ws, remote, store=store)


@cli.command()
@click.argument("remote", required=False)
@click.option(
    "--local",
    "local",
    is_flag=True,
    help="Fetch nothing: write back runs from the local refs (e.g. after `git clean -xdf`).",
)
@click.option(
    "--store",
    default=None,
    metavar="URI",
    help="Where large runs are read from (default: [executor].evidence_uri); the address a "
    "remote's pointer names is never used.",
)
@outputs(renderer("share_result"))
def pull(remote: str | None, local: bool, store: str | None) -> Any:
    """Fetch what a clone needs from REMOTE and write back the runs missing here.

    \b
    REMOTE defaults to origin. Fetched: the version branches, the ledger, champion, memory, judge
    store, analyzers, run evidence (refs/evotree/*) and the signed promotion tags
    (refs/tags/evotree/*). A local ref only moves forward; a diverged one is listed, unchanged.
    Runs this machine has are left as they are. Capped by [share] max_object_mb / max_total_mb.
    What counts is still decided here: evidence that differs from its run.finished manifest is
    `tampered`, and runs recorded by another workspace are `foreign` (shown, never counted)
    unless signed by a runner key the champion lists (docs/cluster.md).
    """

    try:
        ws = open_workspace()
    except NotAWorkspace:
        if local:
            raise
        # a fresh clone: fetch the tree first (default [share] caps), then write back its runs
        first = fetch_shared(click.get_current_context().find_root().obj["dir"], remote)
        result = pull_evidence(open_workspace(), remote, fetch=False, store=store)
        result.remote, result.updated, result.rejected = first.remote, first.updated, first.rejected
        return result
    return pull_evidence(ws, remote, fetch=not local, store=store)


@cli.command()
@outputs(renderer("workspace_status"))
def status() -> Any:
    """What runs now, and what each version waits for: a run, a fix, or a person's decision.

    Cheap and read-only (the ledger, this machine's run records, git status of the worktrees);
    `evotree gates V` evaluates the gates themselves.
    """

    return workspace_status(
        open_workspace(), here=click.get_current_context().find_root().obj["dir"]
    )


@cli.command()
@click.argument("run_id", metavar="RUN")
@click.option(
    "--phase",
    type=click.Choice(["prepare", "train", "eval"]),
    default=None,
    help="Only this phase's logs (default: every phase that wrote one).",
)
@click.option(
    "--tail",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Last N lines of each log (0: all of it).",
)
@click.option(
    "--follow",
    "-f",
    is_flag=True,
    help="Keep printing what the phases write until the run ends (with --json: one JSON line each).",
)
@outputs(renderer("run_logs"), pass_json=True)
def logs(run_id: str, phase: str | None, tail: int, follow: bool, as_json: bool) -> Any:
    """Show a run's logs: the stdout and stderr of its prepare, train and eval phases.

    RUN is a run id from `evotree runs` (or a prefix naming one run). A run that failed or was
    invalid also carries the last lines of the failing phase's stderr in its note. With
    --follow, the output is printed as the phases write it, until the run has ended; control
    characters the phase printed are shown escaped.
    """

    ws = open_workspace()
    hide = hidden_now(ws)
    # EvoPolicyGym's boundary: the eval phase's logs are the judge's (they print validation scores)
    if hide and phase == "eval":
        raise HiddenUntilFinalize(
            "the eval phase's logs are the judge's: hidden until the search is finalized",
            fix="read the train phase's logs: evotree logs RUN --phase train",
        )
    if follow:
        phases = tuple(p for p in ([phase] if phase else LOG_PHASES) if not (hide and p == "eval"))
        _follow(find_run_dir(ws, run_id), phases, as_json)
        raise click.exceptions.Exit(0)
    result = run_logs(ws, run_id, phase=phase, tail=tail)
    if hide:
        result.logs = [log for log in result.logs if log.get("phase") != "eval"]
    return result


def _follow(
    run_dir: Any, phases: tuple[str, ...], as_json: bool, *, prefix: str = "", err: bool = False
) -> None:
    """Print a run's phase output as it is written, until the run has ended."""

    def finished() -> bool:
        try:
            return RunRecord.load(run_dir / "run.json").status != "running"
        except (OSError, ValueError):
            return False

    for name, stream, line in follow_logs(run_dir, phases, finished=finished):
        if as_json:
            click.echo(json.dumps(LogLine(run_dir.name, name, stream, line).to_dict()), err=err)
        else:
            click.echo(f"{prefix}{name}.{stream}: {escape_control(line)}", err=err)


@cli.command()
@click.argument("sql")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV instead of a table.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=200,
    show_default=True,
    help="Rows shown in the table (JSON and CSV get all rows).",
)
@outputs(renderer("sql_result"), pass_json=True)
def sql(sql: str, as_csv: bool, limit: int, as_json: bool) -> Any:
    """Query all evidence with DuckDB SQL (read-only: one SELECT).

    \b
    Views: runs (one row per run.json), signals, rollouts, evals (the evidence of every run,
    finished or still running, with version and seed) and findings. Example:
      evotree sql "SELECT version, split, avg(score) FROM evals GROUP BY ALL"
    The query reads the views' files and nothing else: another statement (SET, COPY, ATTACH,
    INSTALL/LOAD, PRAGMA, CREATE, INSERT, ...), several statements, or a SELECT that reads
    another file or a URL exits 14 (code query_not_allowed). A query past [sql] timeout_seconds
    or memory_mb (default 30 s, 2048 MiB) is stopped: exit 14, code query_limit.
    """

    ws = open_workspace()
    table = query(
        runs_dir(ws),
        sql,
        findings_dir=ws.state_dir / "findings",
        hide_judge=hidden_now(ws),
        **sql_limits(ws),
    )
    rows = table.to_pylist()
    if as_csv and not as_json:
        import csv

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(table.column_names)
        for row in rows:
            writer.writerow([row[c] for c in table.column_names])
        raise click.exceptions.Exit(0)

    return SqlOutput(columns=table.column_names, rows=rows, limit=limit, row_count=len(rows))


@cli.command()
@click.argument("path", type=click.Path(dir_okay=False))
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
def ingest(path: str, version: str, seed: int) -> Any:
    """Import a TRL/transformers trainer_state.json as a run of VERSION.

    Its log_history becomes signals; the run has no judge phase, so no score, and it is not
    charged to budgets.
    """

    return [ingest_trainer_state(open_workspace(), path, version=version, seed=seed)]


def register(root: click.Group) -> None:
    """Add this module's commands to the ``evotree`` group."""
    for name, command in cli.commands.items():
        root.add_command(command, name)
