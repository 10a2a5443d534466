"""The ``evotree`` command line: thin click commands over library functions.

Each command parses its arguments, calls one library function that returns a dataclass, and
prints it: as rich text for people, or with ``--json`` as the documented schema for agents
(``evotree schema NAME``). Errors become one message plus a fix, and a documented exit code.
Heavy modules are imported inside the commands that need them, keeping start-up fast.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from typing import Any

import click

from evotree import __version__
from evotree.errors import EXIT_CODES, EvotreeError

__all__ = ["main", "cli"]

_EXIT_CODE_HELP = "\b\nExit codes:\n" + "\n".join(f"  {code:>2}  {text}" for code, text in EXIT_CODES.items())


def _to_data(result: Any) -> Any:
    if isinstance(result, list):
        return {"v": 1, "runs": [_to_data(item) for item in result]}
    if hasattr(result, "to_dict"):
        return result.to_dict()
    if is_dataclass(result) and not isinstance(result, type):
        return asdict(result)
    return result


def _fail(exc: EvotreeError, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"error": exc.to_dict()}))
    else:
        click.secho(f"evotree: error: {exc.message}", fg="red", err=True)
        if exc.fix:
            click.echo(f"  fix: {exc.fix}", err=True)
    raise click.exceptions.Exit(exc.exit_code)


def outputs(
    render: Callable[[Any], None], *, pass_json: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add ``--json`` to a command; print its result with ``render`` or as JSON; map errors.

    With ``pass_json`` the command also receives ``as_json`` (to stay quiet while it works).
    """

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @click.option("--json", "as_json", is_flag=True, help="Print JSON for agents (see `evotree schema`).")
        @functools.wraps(func)
        def wrapper(*args: Any, as_json: bool, **kwargs: Any) -> None:
            if pass_json:
                kwargs["as_json"] = as_json
            try:
                result = func(*args, **kwargs)
            except EvotreeError as exc:
                _fail(exc, as_json)
                return
            if as_json:
                # indented for a person at a terminal; compact (and 2-3x faster to encode) for agents
                indent = 2 if sys.stdout.isatty() else None
                click.echo(json.dumps(_to_data(result), indent=indent, default=str))
            else:
                render(result)

        return wrapper

    return decorate


def _render(name: str) -> Callable[[Any], None]:
    """A renderer from :mod:`evotree.render`, imported only when text output is printed."""

    def call(result: Any) -> None:
        from evotree import render

        getattr(render, name)(result)

    return call


def _workspace() -> Any:
    """Open the workspace; first mark runs whose driving process died as crashed."""
    from evotree.workspace import Workspace

    ws = Workspace.open(click.get_current_context().find_root().obj["dir"])
    active = ws.absolute(ws.config.workspace.runs_dir) / ".active"
    if active.is_dir() and any(active.iterdir()):  # cheap check first: most calls have no runs alive
        from harness.runs import recover_crashed_runs

        crashed = recover_crashed_runs(ws)
        if crashed:
            click.secho(f"evotree: marked {len(crashed)} run(s) whose process died as crashed: "
                        f"{', '.join(crashed)}", fg="yellow", err=True)
    return ws


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=_EXIT_CODE_HELP,
)
@click.version_option(__version__, prog_name="evotree")
@click.option(
    "-C", "directory", default=".", metavar="PATH", type=click.Path(file_okay=False),
    help="Run as if evotree was started in PATH (like git -C).",
)
@click.pass_context
def cli(ctx: click.Context, directory: str) -> None:
    """evotree: a git-native version tree for RL post-training experiments.

    \b
    Every version of your training recipe is a git branch (evotree/vN) with its own
    worktree; every event is a commit on refs/evotree/ledger. Share the tree with
      git push origin 'refs/evotree/*' 'refs/heads/evotree/*'

    \b
    The loop:  init -> branch -> (edit, commit) -> run -> diagnose -> audit -> compare
               -> promote (human sign-off).  `evotree demo` walks through it.
    Every command takes --json (schemas: `evotree schema`).
    """
    ctx.obj = {"dir": directory}


# ---------------------------------------------------------------------------- init
@cli.command()
@click.option(
    "--domain", type=click.Choice(["custom", "math", "gym"]), default="custom", show_default=True,
    help="Domain template written into evotree.toml.",
)
@outputs(_render("init_result"))
def init(domain: str) -> Any:
    """Turn the current git repository into an evotree workspace.

    Writes a commented evotree.toml (committed on its own if new), creates .evotree/
    (ignored by git) and records v0 = HEAD as the root and champion.
    """
    from evotree.workspace import init_workspace

    return init_workspace(click.get_current_context().find_root().obj["dir"], domain=domain)


# ---------------------------------------------------------------------------- branch
def _render_branch(record: Any) -> None:
    _render("version_created")(record)
    if record.skills:
        click.echo(f"  skills: {', '.join(record.skills)} (recorded in skills.toml)")


@cli.command()
@click.option("--from", "parent", default="champion", show_default=True, metavar="VERSION",
              help="Version to branch from (or 'champion').")
@click.option("--name", default=None, metavar="ID", help="Version id (default: next vN).")
@click.option("-m", "--message", "hypothesis", required=True, metavar="TEXT",
              help="The hypothesis: what this version changes and what you expect.")
@click.option("--worktree", default=None, type=click.Path(), metavar="PATH",
              help="Worktree location (default: <worktree_dir>/<id>).")
@click.option("--skill", "skill_names", multiple=True, metavar="NAME",
              help="Apply this skill to the new version (repeatable; `evotree skill list`).")
@click.option("--param", "skill_params", multiple=True, metavar="NAME.KEY=VALUE",
              help="A parameter of a --skill, e.g. --param StdGroupFilter.min_std=0.1 (repeatable).")
@outputs(_render_branch)
def branch(parent: str, name: str | None, hypothesis: str, worktree: str | None,
           skill_names: tuple[str, ...], skill_params: tuple[str, ...]) -> Any:
    """Create a new version: branch evotree/vN plus its own worktree.

    Records the parent, hypothesis, creator and base commit in the ledger. Safe to run from
    several processes at once: every call gets its own id. With --skill, each skill is
    checked first (nothing is created if one is refused), then recorded in the new version's
    recipe like `evotree skill apply` (a commit and a skill.applied event each).
    """
    if skill_names or skill_params:
        from skills.recipe import branch_with_skills, split_skill_params

        requested = split_skill_params(list(skill_names), list(skill_params))
        return branch_with_skills(_workspace(), hypothesis=hypothesis, parent=parent, name=name,
                                  worktree=worktree, requested=requested)
    from evotree.versions import create_version

    return create_version(_workspace(), hypothesis=hypothesis, parent=parent, name=name, worktree=worktree)


# ---------------------------------------------------------------------------- merge
@cli.command()
@click.argument("first", metavar="A")
@click.argument("second", metavar="B")
@click.option("-m", "--message", required=True, metavar="TEXT", help="Why these two are combined.")
@click.option("--name", default=None, metavar="ID", help="Version id (default: next vN).")
@click.option("--worktree", default=None, type=click.Path(), metavar="PATH", help="Worktree location.")
@outputs(_render("version_created"))
def merge(first: str, second: str, message: str, name: str | None, worktree: str | None) -> Any:
    """Create a new version whose commit merges versions A and B.

    The ledger records both parents (the tree becomes a DAG). A conflict is reported with
    the files involved and nothing is created.
    """
    from evotree.versions import merge_versions

    return merge_versions(_workspace(), first, second, message=message, name=name, worktree=worktree)


# ---------------------------------------------------------------------------- tree / show / log
@cli.command()
@outputs(_render("tree"))
def tree() -> Any:
    """Show the version tree: id, status, hypothesis, headline score, champion (★).

    Abandoned and failed versions are shown dimmed: they are negative evidence and are
    never deleted.
    """
    from evotree.versions import tree_view

    return tree_view(_workspace())


@cli.command()
@click.argument("version")
@outputs(_render("version_detail"))
def show(version: str) -> Any:
    """Show one version: record, commits since branching, worktree state, its events."""
    from evotree.versions import show_version

    return show_version(_workspace(), version)


@cli.command()
@click.option("--version", "version", default=None, metavar="V", help="Only events of this version.")
@click.option("-n", "--limit", type=click.IntRange(min=1), default=None, help="At most this many events.")
@outputs(_render("log"))
def log(version: str | None, limit: int | None) -> Any:
    """Show the ledger's events, newest first."""
    from evotree.versions import log_entries

    return {"v": 1, "events": log_entries(_workspace(), version=version, limit=limit)}


# ---------------------------------------------------------------------------- abandon
@cli.command()
@click.argument("version")
@click.option("--reason", required=True, metavar="TEXT", help="Why it is abandoned (kept as negative evidence).")
@click.option("--force", is_flag=True, help="Discard uncommitted changes in its worktree.")
@outputs(_render("version_abandoned"))
def abandon(version: str, reason: str, force: bool) -> Any:
    """Abandon a version: record why, remove its worktree, keep its branch."""
    from evotree.versions import abandon_version

    ws = _workspace()
    record = abandon_version(ws, version, reason=reason, force=force)
    try:  # negative evidence for memory; the abandonment above stands whatever happens here
        from memory.record import record_abandonment

        record_abandonment(ws, record.id, reason)
    except Exception as exc:  # noqa: BLE001 - memory is advice: never undo or fail the abandonment
        click.secho(f"evotree: warning: {record.id} is abandoned, but memory was not updated: {exc}",
                    fg="yellow", err=True)
    return record


# ---------------------------------------------------------------------------- worktree
@cli.group()
def worktree() -> None:
    """Manage version worktrees (prune inactive ones, restore one)."""


@worktree.command("prune")
@click.option("--force", is_flag=True, help="Also remove worktrees with uncommitted changes.")
@outputs(_render("prune_result"))
def worktree_prune(force: bool) -> Any:
    """Remove worktrees of abandoned and failed versions; forget ones deleted by hand."""
    from evotree.versions import prune_worktrees

    return prune_worktrees(_workspace(), force=force)


@worktree.command("restore")
@click.argument("version")
@click.option("--worktree", "path", default=None, type=click.Path(), metavar="PATH", help="Where to put it.")
@outputs(_render("version_restored"))
def worktree_restore(version: str, path: str | None) -> Any:
    """Give VERSION a worktree again (abandoned versions too, to inspect them)."""
    from evotree.versions import restore_worktree

    return restore_worktree(_workspace(), version, worktree=path)


# ---------------------------------------------------------------------------- run / runs
@cli.command()
@click.argument("versions", nargs=-1, required=True, metavar="VERSION...")
@click.option("--seeds", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs per version, with seeds S..S+N-1 (S: --seed-start).")
@click.option("--seed-start", type=click.IntRange(min=0), default=0, show_default=True,
              help="First seed: add seeds to a comparison (e.g. --seeds 3 --seed-start 3 after 0..2) "
                   "instead of repeating them.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Runs executed at once (default: [executor].jobs).")
@click.option("--heldout", is_flag=True,
              help="Also score the held-out split (for the candidate selected on validation).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default=None,
              help="Where runs execute (default: [executor].kind): local processes, or Ray tasks.")
@click.option("--address", default=None, metavar="ADDR",
              help="Ray cluster address, e.g. 10.0.0.1:6379 or auto (default: [executor].address; "
                   "'' starts a local Ray for this command).")
@outputs(_render("runs"), pass_json=True)
def run(versions: tuple[str, ...], seeds: int, seed_start: int, jobs: int | None, heldout: bool,
        executor: str | None, address: str | None, as_json: bool) -> Any:
    """Run versions under the harness: train phase, then the champion's judge.

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
    """
    from harness.runs import run_versions

    ws = _workspace()
    options = {"seeds": seeds, "seed_start": seed_start, "jobs": jobs, "heldout": heldout, "executor": executor,
               "address": address}
    view = None
    if not as_json:
        from evotree.render import RunProgress

        view = RunProgress()
    try:
        if view is not None:
            with view:
                return run_versions(ws, list(versions), progress=view, **options)
        return run_versions(ws, list(versions), **options)
    except KeyboardInterrupt:  # a second Ctrl-C while stopping
        raise click.exceptions.Exit(130) from None


@cli.command()
@click.option("--version", "version", default=None, metavar="V", help="Only runs of this version.")
@outputs(_render("runs"))
def runs(version: str | None) -> Any:
    """List the runs recorded on this machine, oldest first."""
    from harness.runs import list_runs

    return list_runs(_workspace(), version=version)


@cli.command()
@click.argument("sql")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV instead of a table.")
@click.option("--limit", type=click.IntRange(min=1), default=200, show_default=True,
              help="Rows shown in the table (JSON and CSV get all rows).")
@outputs(_render("sql_result"), pass_json=True)
def sql(sql: str, as_csv: bool, limit: int, as_json: bool) -> Any:
    """Query all evidence with DuckDB SQL.

    \b
    Views: runs (one row per run.json), signals, rollouts, evals (the evidence of every run,
    finished or still running, with version and seed) and findings. Example:
      evotree sql "SELECT version, split, avg(score) FROM evals GROUP BY ALL"
    """
    from harness.query import query
    from harness.runs import runs_dir

    ws = _workspace()
    table = query(runs_dir(ws), sql, findings_dir=ws.state_dir / "findings")
    rows = table.to_pylist()
    if as_csv and not as_json:
        import csv

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(table.column_names)
        for row in rows:
            writer.writerow([row[c] for c in table.column_names])
        raise click.exceptions.Exit(0)
    return {"v": 1, "columns": table.column_names, "rows": rows, "limit": limit}


@cli.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--version", "version", required=True, metavar="V", help="Version the training belongs to.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of that training.")
@outputs(_render("runs"))
def ingest(path: str, version: str, seed: int) -> Any:
    """Import a TRL/transformers trainer_state.json as a run of VERSION.

    Its log_history becomes signals; the run has no judge phase, so no score, and it is not
    charged to budgets.
    """
    from harness.ingest import ingest_trainer_state

    return [ingest_trainer_state(_workspace(), path, version=version, seed=seed)]


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
@outputs(_render("comparison"))
def compare(a: str, b: str, split: str, intersect: bool, B: int | None, seed: int,
            look: int | None, max_looks: int | None) -> Any:
    """Compare version B against A (delta = B - A) on the same task pool.

    \b
    Paired over tasks and seed-aware: every run is one seed, and with two or more seeds per
    side the bootstrap resamples seeds as well as tasks (a single seed cannot show the
    between-seed variance, and the output says so). Versions scored on different task pools
    are refused unless --intersect.
    """
    from diagnostics.compare import compare as compare_fn

    return compare_fn(_workspace(), a, b, split=split, intersect=intersect, B=B, seed=seed,
                      look=look, max_looks=max_looks)


@cli.command()
@click.argument("version")
@click.option("--layer", "layers", multiple=True, type=click.Choice(["score", "signal", "behavior", "version"]),
              help="Only these layers (repeatable; default: all).")
@outputs(_render("diagnosis"))
def diagnose(version: str, layers: tuple[str, ...]) -> Any:
    """Diagnose a version's runs: score, signal, behavior and version findings.

    Findings (layer, code, severity, title, evidence with the query that produced it,
    suggestion and the skills that address it) are written to .evotree/findings/ (the
    `findings` view of `evotree sql`) and summarised in the ledger.
    """
    from diagnostics.diagnose import diagnose as diagnose_fn

    return diagnose_fn(_workspace(), version, layers=list(layers) or None)


@cli.command()
@click.argument("version")
@click.option("--transform", default=None, metavar="EXPR",
              help='Candidate reward, e.g. "reward + 0.1*instruction_following" (components by name).')
@click.option("--threshold", "overrides", multiple=True, metavar="ANALYZER.KEY=VALUE",
              help="Override an analyzer threshold (another harness version); repeatable.")
@click.option("--harness", "harness_id", default=None, metavar="HN",
              help="Use harness version HN's thresholds (default: the active harness).")
@outputs(_render("backtest"))
def backtest(version: str, transform: str | None, overrides: tuple[str, ...], harness_id: str | None) -> Any:
    """Re-run the analyzers over a version's stored rollouts, without retraining.

    \b
    Compares the findings and the dead-group ratio of the rollouts as recorded with those
    under a candidate reward transform and/or other thresholds, e.g.
      evotree backtest v3 --transform "reward + 0.1*instruction_following"
    """
    from diagnostics.backtest import backtest as backtest_fn
    from harness.runs import list_runs, runs_dir

    ws = _workspace()
    run_ids = [r.run_id for r in list_runs(ws, version=version) if r.status not in ("invalid", "running")]
    if not run_ids:
        raise EvotreeError(f"{ws.resolve(version).id} has no stored run to backtest on this machine",
                           fix=f"run it first: evotree run {version}")
    from diagnostics.harnesses import active_harness, harness_thresholds

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


@cli.group()
def harness() -> None:
    """Harness versions: the diagnostic thresholds' own lineage (evotree/harness/hN)."""


@harness.command("branch")
@click.option("-m", "--message", "hypothesis", required=True, metavar="TEXT",
              help="What the new thresholds should catch.")
@outputs(_render("harness_created"))
def harness_branch(hypothesis: str) -> Any:
    """Create harness version hN from the active one: a branch plus a worktree with harness.toml."""
    from diagnostics.harnesses import create_harness

    return create_harness(_workspace(), hypothesis=hypothesis)


@harness.command("list")
@outputs(_render("harness_list"))
def harness_list() -> Any:
    """List harness versions; the active one judges every `evotree diagnose`."""
    from diagnostics.harnesses import list_harnesses

    return list_harnesses(_workspace())


@harness.command("promote")
@click.argument("harness_id", metavar="HN")
@click.option("--key", "key", default=None, help="Your SSH signing key (default $EVOTREE_SIGNING_KEY, "
              "then git config user.signingkey).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON (the diff and prompts go to "
              "stderr; see `evotree schema harness-promote`). Still needs a person at a terminal.")
def harness_promote(harness_id: str, key: str | None, as_json: bool) -> None:
    """Ask a person to put harness version HN in force, with a signed sign-off.

    The harness decides what `evotree diagnose` and the signal gate flag, so it changes like a
    champion does: shows what changes (each threshold against the harness in force, and whether
    analyzers.py is added or changed, with its sha256), then the person at the terminal types
    HN and a one-time code and confirms. The statement (harness, its commit, the previous
    harness and commit, sha256 of the diff shown) is signed with their SSH key, which must be
    in the champion's allowed signers and not belong to HN's creator; it is recorded in the
    ledger, then refs/evotree/harness moves (compare-and-swap). HN may be h0 (the built-in
    harness). Refused without a terminal or under CI (exit 31), for a key not allowed (32),
    or when the harness in force is not signed (33: `evotree verify` says why).
    """
    from evotree.errors import EvotreeError

    def show(plan: Any) -> None:
        diff = plan.diff
        echo = functools.partial(click.echo, err=as_json)
        echo(f"harness {plan.harness} @ {str(plan.commit)[:10] if plan.commit else 'built-in'}: {plan.hypothesis} "
             f"(created by {plan.created_by})")
        echo(f"replaces {plan.previous_harness} @ "
             f"{str(plan.previous_commit)[:10] if plan.previous_commit else 'built-in'}")
        if diff["thresholds"]:
            echo("thresholds:")
            for c in diff["thresholds"]:
                old = "default" if c["old"] is None else json.dumps(c["old"])
                new = "default" if c["new"] is None else json.dumps(c["new"])
                echo(f"  {c['analyzer']}.{c['key']}: {old} -> {new}")
        else:
            echo("thresholds: unchanged")
        py = diff["analyzers_py"]
        line = {"absent": "none (no plug-in code)", "unchanged": f"unchanged (sha256 {py['sha256']})",
                "added": f"ADDED: plug-in code that runs in every `evotree diagnose` (sha256 {py['sha256']})",
                "changed": f"CHANGED: plug-in code that runs in every `evotree diagnose` (sha256 {py['sha256']}, "
                           f"was {py['previous_sha256']})",
                "removed": f"removed (was sha256 {py['previous_sha256']})"}[py["status"]]
        echo(f"analyzers.py: {line}")
        if plan.commit and py["status"] in ("added", "changed"):
            echo(f"  read it before signing: git show {plan.commit[:10]}:analyzers.py")
        echo(f"diff sha256 (signed): {plan.diff_hash}")

    try:
        from diagnostics.harnesses import plan_harness_promotion, record_harness_promotion
        from evotree.cli_gates import _ask, _challenge
        from gates.errors import SignoffRefused
        from gates.policy import trusted_policy
        from gates.signing import resolve_key
        from gates.signoff import approver_for, require_human_terminal

        require_human_terminal(action="promote a harness")
        ws = _workspace()
        policy = trusted_policy(ws)
        plan = plan_harness_promotion(ws, harness_id)
        approver = approver_for(policy, resolve_key(key, git_root=ws.root), plan.created_by)
        show(plan)
        _challenge(plan.harness, as_json)
        if _ask(f"put harness {plan.harness} in force? [yes/no]", as_json).strip().lower() != "yes":
            raise SignoffRefused("not approved; nothing was recorded", fix="type yes to promote the harness")
        click.echo(f"signing as {approver.principal} ({approver.fingerprint}) …", err=True)
        result = record_harness_promotion(ws, policy, approver, plan)
    except EvotreeError as exc:
        _fail(exc, as_json)
        return
    if as_json:
        click.echo(json.dumps(result.to_dict(), default=str))
    else:
        click.echo(f"harness {result.harness} is in force (was {result.previous_harness}); signed by "
                   f"{result.approver}; diff sha256 {result.diff_hash[:16]}…")


# ---------------------------------------------------------------------------- config / schema
@cli.group()
def config() -> None:
    """Inspect and validate evotree.toml."""


@config.command("show")
@outputs(_render("config"))
def config_show() -> Any:
    """Print the configuration in force (read from the champion's tree)."""
    return _workspace().config


@config.command("check")
@click.argument("path", required=False, type=click.Path(dir_okay=False))
@outputs(_render("config_check"))
def config_check(path: str | None) -> Any:
    """Validate an evotree.toml (default: the one in the current checkout)."""
    from pathlib import Path

    from evotree.config import CONFIG_FILE, parse_config
    from evotree.errors import ConfigError

    if path is None:
        from evotree.gitio import Git

        target = Git(click.get_current_context().find_root().obj["dir"]).root / CONFIG_FILE
    else:
        target = Path(path)
    if not target.is_file():
        raise ConfigError(f"{target} does not exist", fix="pass the path of an evotree.toml", path=str(target))
    parse_config(target.read_text(), source=str(target))
    return {"v": 1, "path": str(target), "valid": True}


@cli.command()
@click.argument("name", required=False)
@outputs(_render("schema"))
def schema(name: str | None) -> Any:
    """List the JSON schemas of --json outputs, or print one (e.g. `evotree schema tree`)."""
    from evotree.schemas import load_schema, schema_names

    if name is None:
        return {"v": 1, "schemas": schema_names()}
    return load_schema(name)


# ---------------------------------------------------------------------------- demo
@cli.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--keep/--no-keep", default=True, show_default=True, help="Keep the demo workspace.")
def demo(path: str | None, keep: bool) -> None:
    """Walk through the loop in a fresh demo repository (default: a temp folder).

    Runs the real commands as subprocesses and prints each one, so you can repeat them.
    """
    from evotree.demo import run_demo

    try:
        run_demo(path, keep=keep, echo=click.echo)
    except EvotreeError as exc:
        _fail(exc, False)


# Commands of the later packages live in their own modules, each with ``register(cli)``: they
# import only click and evotree.cli at module level (start-up stays fast) and the library
# lazily inside the commands.
def _register_extensions() -> None:
    from evotree import cli_audit, cli_gates, cli_memory, cli_report, cli_skills

    for module in (cli_skills, cli_memory, cli_audit, cli_gates, cli_report):
        module.register(cli)


_register_extensions()


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="evotree")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
