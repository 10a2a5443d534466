"""Every ``--json`` command has a derived schema, ledger events are checked by kind, and the
agent-facing verbs called by a principal who owns nothing, while figures are hidden, give outputs
(or refusals) that match their schemas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import jsonschema
import pytest

from conftest import Cli, commit_file, validate

from evotree.cli.main import cli
from evotree.core.errors import EvotreeError
from evotree.core.events import PAYLOADS
from evotree.verbs.promotion_results import SignersAccepted
from evotree.verbs.results import ErrorResult, LogResult, MemorySearchResult
from evotree.verbs.schemas import DERIVED, load_schema

#: every command that takes --json -> the schema(s) of what it prints (besides "error", which
#: every one prints when it fails). A command added with --json and no entry here fails the test.
COMMAND_SCHEMAS: dict[str, tuple[str, ...]] = {
    "abandon": ("version",),
    "agent": ("agent-config",),
    "approve-run": ("gates-run-approval",),
    "audit repo": ("audit-repo",),
    "audit trajectories": ("audit",),
    "audit version": ("audit",),
    "autopilot": ("autopilot",),
    "backtest": ("backtest",),
    "branch": ("version",),
    "budget": ("budget",),
    "ci init": ("report-ci",),
    "compare": ("compare",),
    "config check": ("config-check",),
    "config show": ("config",),
    "diagnose": ("diagnose",),
    "diff": ("diff",),
    "export mlflow": ("export",),
    "export results-tsv": ("export-results-tsv",),
    "export tensorboard": ("export",),
    "export wandb": ("export",),
    "finalize": ("finalize", "finalize-plan"),
    "gates": ("gates",),
    "analyzers branch": ("analyzer-version",),
    "analyzers list": ("analyzers-list",),
    "analyzers promote": ("analyzers-promote",),
    # `evotree harness ...`: the deprecated name of `evotree analyzers ...`, the same outputs
    "harness branch": ("analyzer-version",),
    "harness list": ("analyzers-list",),
    "harness promote": ("analyzers-promote",),
    "help": ("exit-codes",),
    "import tensorboard": ("runs",),
    "ingest": ("runs",),
    "init": ("init",),
    "judge export": ("judge-export",),
    "judge migrate": ("judge-migrate",),
    "judge promote": ("judge-promote",),
    "judge propose": ("judge-propose",),
    "judge show": ("judge-show",),
    "leaderboard": ("leaderboard",),
    "log": ("log",),
    "logs": ("logs", "log-line"),  # --follow: one log-line object a line
    "memory add": ("memory-entry",),
    "memory export": ("memory-export",),
    "memory import": ("memory-import",),
    "memory list": ("memory-list",),
    "memory merge": ("memory-merge",),
    "memory search": ("memory-search",),
    "memory show": ("memory-entry",),
    "memory skills": ("memory-skills",),
    "merge": ("version",),
    "precommit": ("precommit",),
    "promote": ("promote",),
    "pull": ("share",),
    "push": ("share",),
    "report": ("report-output", "report-tree"),
    "run": ("runs",),
    "runs": ("runs",),
    "runs void": ("runs-void",),
    "schema": ("schema-list",),  # `schema NAME` prints that JSON Schema itself
    "serve": ("error",),  # it serves; --json only shapes the error it may exit with
    "show": ("show",),
    "signers accept": ("signers-accept",),
    "signers add": ("signers-add",),
    "skill apply": ("skill-apply",),
    "skill list": ("skill-list",),
    "skill show": ("skill-show",),
    "spend record": ("spend-record",),
    "sql": ("sql-output",),
    "status": ("status",),
    "suggest": ("suggest",),
    "tree": ("tree",),
    "verify": ("verify",),
    "worktree prune": ("prune",),
    "worktree restore": ("version",),
}


def _json_commands() -> set[str]:
    """Every command of the ``evotree`` group (walked through the lazy group's own lookup) that
    takes ``--json``, a group's own included (``runs``)."""
    found: set[str] = set()

    def walk(command: click.Command, path: list[str], parent: click.Context | None) -> None:
        if any(isinstance(p, click.Option) and "--json" in p.opts for p in command.params):
            found.add(" ".join(path))
        if isinstance(command, click.Group):
            ctx = click.Context(command, info_name=path[-1] if path else "evotree", parent=parent)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                walk(sub, [*path, name], ctx)

    walk(cli, [], None)
    return found


def test_every_json_command_maps_to_a_derived_schema() -> None:
    commands = _json_commands()
    assert {"runs", "sql", "analyzers list", "signers accept", "export wandb"} <= commands
    unmapped = sorted(commands - set(COMMAND_SCHEMAS))
    assert not unmapped, f"--json command(s) without a schema: {unmapped} (derive one)"
    assert not sorted(set(COMMAND_SCHEMAS) - commands), "stale entries"
    for command, names in COMMAND_SCHEMAS.items():
        for name in names:
            assert name in DERIVED, (command, name)
    assert "error" in DERIVED


# ------------------------------------------------------------------------- events, by kind
_SAMPLE = {str: "x", int: 1, float: 0.5, bool: True, type(None): None}


def _sample(hint: Any) -> Any:
    import typing

    if hint in _SAMPLE:
        return _SAMPLE[hint]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, __import__("types").UnionType):
        return _sample(typing.get_args(hint)[0])
    if origin is list:
        return []
    if origin is dict or hint is dict:
        return {}
    return "x"


def _minimal(cls: type) -> dict[str, Any]:
    """The data a writer of ``cls`` must give: each required field, a value of its type."""
    import dataclasses
    import sys
    import typing

    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return {
        f.name: _sample(hints[f.name])
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }


def _event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "kind": kind,
        "version": "v1",
        "actor": "Ada <ada@example.com>",
        "at": "2026-12-04T00:00:00+00:00",
        "data": data,
        "v": 1,
    }


def test_an_event_s_data_is_checked_against_its_kind_s_payload() -> None:
    """``event`` and ``log`` check each event's data by its kind: what the payload type parses
    validates; an unknown key, a missing required field or a wrong type does not."""
    event = jsonschema.Draft202012Validator(load_schema("event"))
    log = jsonschema.Draft202012Validator(load_schema("log"))
    for kind, cls in PAYLOADS.items():
        data = _minimal(cls)
        cls.from_data(data)  # what the reader accepts ...
        assert event.is_valid(_event(kind.value, data)), kind  # ... the schema accepts
        entry = {**_event(kind.value, data), "commit": "a" * 40}
        assert log.is_valid({"v": 1, "events": [entry]}), kind
        for bad in ({**data, "smuggled": 1},):
            with pytest.raises(EvotreeError):
                cls.from_data(bad)
            assert not event.is_valid(_event(kind.value, bad)), kind
            assert not log.is_valid({"v": 1, "events": [{**entry, "data": bad}]}), kind
        for name in data:  # a required field left out
            assert not event.is_valid(
                _event(kind.value, {k: v for k, v in data.items() if k != name})
            ), (kind, name)
    finished = {"run_id": "v1-s0", "seed": 0, "status": "succeeded"}
    assert event.is_valid(_event("run.finished", finished))
    assert not event.is_valid(_event("run.finished", {**finished, "seed": "zero"}))
    assert not event.is_valid(_event("spend.recorded", {"usd": "1", "note": "x"}))
    # a kind's payload is not another's: promotion's data is not a run's
    assert not event.is_valid(_event("promotion", finished))
    # show's events are checked the same way
    show = load_schema("show")["$defs"]["LogEntry"]
    assert show["allOf"] == load_schema("log")["$defs"]["LogEntry"]["allOf"]
    assert len(show["allOf"]) == len(PAYLOADS)


def test_signers_accepted_names_a_ledger_commit() -> None:
    """signers accept's typed result against its schema: the step is a commit, not a ref name."""
    validate(
        SignersAccepted(accepted="b" * 40, signers=["ada@example.com"]).to_dict(), "signers-accept"
    )
    with pytest.raises(jsonschema.ValidationError):
        validate(SignersAccepted(accepted="HEAD", signers=[]).to_dict(), "signers-accept")


@pytest.mark.heavy
def test_analyzers_schema_sql_and_log_outputs_match_their_schemas(tmp_path: Path) -> None:
    """analyzers branch/list, schema, sql and log --json of a real workspace (log: every event's
    data checked by its kind)."""
    from test_runs import make_run_repo

    repo = make_run_repo(tmp_path / "ws")
    cli_ = Cli(repo)
    validate(cli_.json("analyzers", "branch", "-m", "stricter"), "analyzer-version")
    listed = cli_.json("analyzers", "list")
    validate(listed, "analyzers-list")
    assert [h["id"] for h in listed["analyzers"]] == ["h0", "h1"]
    validate(cli_.json("schema"), "schema-list")
    made = cli_.json("branch", "-m", "idea")
    validate(cli_.json("run", made["id"]), "runs")
    runs = cli_.json("runs")
    validate(runs, "runs")
    run_id = runs["runs"][-1]["run_id"]
    logs = cli_.json("logs", run_id)
    validate(logs, "logs")
    train_out = next(
        log["path"] for log in logs["logs"] if log["phase"] == "train" and log["stream"] == "out"
    )
    Path(train_out).write_text("step 1\nstep 2\n")  # this workspace's phases print nothing
    followed = cli_("logs", run_id, "--follow", "--json").stdout.splitlines()
    assert [json.loads(line)["line"] for line in followed] == ["step 1", "step 2"]
    for line in followed:
        validate(json.loads(line), "log-line")
    out = cli_.json("sql", "SELECT run_id, version FROM runs", "--limit", "1")
    validate(out, "sql-output")
    assert out["limit"] == 1 and out["row_count"] == len(out["rows"]) == 1
    log = cli_.json("log")
    validate(log, "log")
    kinds = {e["kind"] for e in log["events"]}
    assert {"workspace.initialized", "version.created", "run.finished", "harness.created"} <= kinds


# --------------------------------------------------------------- a non-owner, while hidden
@pytest.mark.heavy
def test_every_agent_verb_as_a_non_owner_in_hide_mode_matches_its_schema(tmp_path: Path) -> None:
    """In an EvoPolicyGym workspace (figures hidden) alice owns v1 and has run it; mallory, a
    second agent principal, calls every verb: what she may do returns its schema's output, what
    she may not (write to alice's version, see hidden figures) is refused with the error schema."""
    from test_gym_finalize import GOOD, hidden_gym_workspace

    from evotree.verbs import VERBS, Principal, Session

    ws = hidden_gym_workspace(tmp_path / "w")
    alice = Session(ws.root, Principal.parse("alice"))
    mallory = Session(ws.root, Principal.parse("mallory"))
    v1 = alice.branch("balance")
    commit_file(ws.root / v1.worktree, "policy.py", GOOD, "balance")
    alice.commit(v1.id, "balance")
    [run] = alice.run([v1.id])
    # the reason first (the record's repr is cut in pytest's message): error, then the train
    # phase's log tail (the note log_tail_note adds)
    assert run.status == "succeeded", (run.status, run.error, run.notes[-3:])

    def typed(result: Any) -> Any:
        return json.loads(json.dumps(result.to_dict() if hasattr(result, "to_dict") else result))

    checked: dict[str, str] = {}

    def call(verb: str, schema: str, *args: Any, **kwargs: Any) -> Any:
        try:
            result = getattr(mallory, verb)(*args, **kwargs)
        except EvotreeError as exc:
            validate(ErrorResult.of(exc).to_dict(), "error")
            checked[verb] = f"error:{exc.code}"
            return exc
        if verb == "log":
            validate(LogResult.of(result).to_dict(), "log")
        elif verb == "memory_search":
            validate(typed(MemorySearchResult(query=args[0], hits=result)), schema)
        else:
            for item in result if isinstance(result, list) else [result]:
                validate(typed(item), schema)
        checked[verb] = schema
        return result

    call("tree", "tree")
    call("show", "show", v1.id)
    call("log", "log")
    call("runs", "run", v1.id)
    call("diagnose", "diagnose", v1.id)
    call("suggest", "suggest", v1.id)
    call("audit", "audit", v1.id, record=False)
    call("sql", "sql", "SELECT run_id, status FROM runs")
    call("memory_add", "memory-entry", "balance the pole", version=v1.id)
    call("memory_search", "memory-search", "pole")
    # hidden figures: refused for everyone
    for verb, args in (("compare", ("v0", v1.id)), ("gates", (v1.id,)), ("report", (v1.id,))):
        exc = call(verb, "error", *args)
        assert isinstance(exc, EvotreeError) and exc.code == "hidden_until_finalize", (verb, exc)
    # alice's version: mallory may not write to it
    for verb, schema, args, kwargs in (
        ("commit", "commit", (v1.id, "mine now"), {}),
        ("abandon", "version", (v1.id,), {"reason": "not mine"}),
        ("run", "run", ([v1.id],), {}),
        ("spend_record", "spend-record", (1.0, "on alice"), {"version": v1.id}),
    ):
        exc = call(verb, schema, *args, **kwargs)
        assert isinstance(exc, EvotreeError) and exc.exit_code != 0, (verb, exc)
    # her own version, branched from the champion: hers to write
    own = call("branch", "version", "mallory's idea")
    assert own.created_by and "mallory" in json.dumps(typed(own))
    call("merge", "version", own.id, "v0", message="mine with the root")
    assert set(checked) == set(VERBS), set(VERBS) - set(checked)
    refused = {verb: code for verb, code in checked.items() if code.startswith("error:")}
    assert refused == {
        "compare": "error:hidden_until_finalize",
        "gates": "error:hidden_until_finalize",
        "report": "error:hidden_until_finalize",
        "commit": "error:not_your_version",
        "abandon": "error:not_your_version",
        "run": "error:not_your_version",
        "spend_record": "error:not_your_version",
    }

    # the agent server's tools as mallory (what her MCP client gets back): the same (the server
    # has no abandon or merge tool)
    import anyio

    from evotree.server.tools import EvotreeTools
    from evotree.server.verbs import Verbs

    tools = EvotreeTools(Verbs(ws.root, Principal.parse("mallory")))
    tool_calls = {
        "tree": (lambda v: v.tree(), "tree"),
        "show": (lambda v: v.show(v1.id), "show"),
        "log": (lambda v: v.log(None, None), "log"),
        "runs": (lambda v: v.runs(v1.id), "runs"),
        "diagnose": (lambda v: v.diagnose(v1.id), "diagnose"),
        "suggest": (lambda v: v.suggest(v1.id), "suggest"),
        "audit": (lambda v: v.audit(v1.id), "audit"),
        "sql": (lambda v: v.sql("SELECT run_id FROM runs"), "sql"),
        "memory_search": (lambda v: v.memory_search("pole"), "memory-search"),
        "memory_add": (lambda v: v.memory_add("a second lesson", version=v1.id), "memory-entry"),
        "branch": (lambda v: v.branch("another idea of mallory's"), "version"),
        "compare": (lambda v: v.compare("v0", v1.id), "hidden_until_finalize"),
        "gates": (lambda v: v.gates(v1.id), "hidden_until_finalize"),
        "report": (lambda v: v.report(v1.id), "hidden_until_finalize"),
        "commit": (lambda v: v.commit(v1.id, "mine"), "not_your_version"),
        "run": (lambda v: v.run([v1.id]), "not_your_version"),
        "spend_record": (
            lambda v: v.spend_record(1.0, "on alice", version=v1.id),
            "not_your_version",
        ),
    }
    for name, (call_tool, expected) in tool_calls.items():
        result = anyio.run(tools.call, lambda f=call_tool: f(tools.verbs))
        data = json.loads(result.content[0].text)
        if expected in DERIVED:
            assert not result.is_error, (name, data)
            validate(data, expected)
        else:
            assert result.is_error, (name, data)
            validate(data, "error")
            assert data["error"]["code"] == expected, (name, data)


@pytest.mark.heavy
def test_signers_accept_json_at_a_terminal_matches_its_schema(tmp_path: Path) -> None:
    """The real `signers accept --json` (a person at a terminal accepts a teammate's fetched
    signers step): what it prints is the signers-accept schema's."""
    from conftest import git, make_repo
    from fixtures_ws import CODE_RE, EVOTREE_SPECS, bare_remote, clone_as, finish, make_key, spawn
    from test_signers_after_init import _add

    repo = make_repo(tmp_path / "ws")
    Cli(repo)("init", "--json")
    key, _ = make_key(tmp_path / "keys", "ada")
    bare = bare_remote(repo, tmp_path / "origin.git")
    mate = clone_as(bare, tmp_path / "mate", "Mate", "mate@example.com", fetch_evotree=True)
    code, out = _add(mate, f"ada@example.com={key}.pub", key)
    assert code == 0, out
    git(mate, "push", "--quiet", "origin", *EVOTREE_SPECS)
    git(repo, "fetch", "--quiet", "origin", *EVOTREE_SPECS)
    refused = Cli(repo).json("branch", "-m", "x", code=33)
    validate(refused, "error")
    ledger = refused["error"]["details"]["problems"][0]["ledger_commit"]
    child = spawn(repo, "signers", "accept", ledger[:10], "--json")
    child.expect(CODE_RE)
    shown = child.match.group(1)
    child.expect("signer\\(s\\): ")
    child.sendline("ada@example.com")
    child.expect("one-time code: ")
    child.sendline(shown)
    child.expect(r"accept these signers here\? \[yes/no\]: ")
    child.sendline("yes")
    code, out = finish(child)
    assert code == 0, out
    printed = json.loads([line for line in out.splitlines() if line.startswith("{")][-1])
    validate(printed, "signers-accept")
    assert printed["accepted"] == ledger and printed["signers"] == ["ada@example.com"]
