"""Hide mode (EvoPolicyGym's ``[eval] hide_until_finalize``) and the ``--json`` schemas: every
``--json`` output, redacted, still matches its schema, for a person (the CLI, text and JSON) and
for an agent (the verb layer and the agent server's tools); redaction is decided once, in
:func:`evotree.verbs.policy.redacted`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, commit_file, validate

from evotree.verbs.policy import HIDDEN_TEXT, redacted
from evotree.verbs.results import LogEntry, LogResult

_COMMIT = "a" * 40


def _event(kind: str, data: dict[str, Any]) -> LogEntry:
    return LogEntry(
        kind=kind,
        version="v1",
        actor="Ada <ada@example.com>",
        at="2026-12-04T15:56:52+00:00",
        data=data,
        commit=_COMMIT,
    )


def test_a_hidden_item_is_omitted_and_a_headline_nulled_schema_valid() -> None:
    """A ledger event whose payload is a hidden figure is left out of ``log`` (not a ``null`` the
    schema refuses); a hidden finding inside an event's list is left out; a headline is null."""
    hidden_headline = {"metric": "validation/mean", "value": 0.8}
    shown_event = _event(
        "run.finished",
        {"run_id": "v1-s0", "seed": 0, "status": "succeeded", "headline": hidden_headline},
    )
    hidden_payload = _event("finding", {"metric": "validation/mean", "value": 0.8})
    findings = _event(
        "finding",
        {
            "findings": [
                {
                    "code": "score.low_seeds",
                    "severity": "warn",
                    "layer": "score",
                    "title": "few seeds",
                },
                {
                    "code": "behavior.reward_hacking",
                    "severity": "high",
                    "layer": "behavior",
                    "title": "x",
                },
            ]
        },
    )
    result = LogResult(events=[shown_event, hidden_payload, findings])
    raw = redacted(result.to_dict())
    validate(raw, "log")
    assert [e["kind"] for e in raw["events"]] == ["run.finished", "finding"]
    assert raw["events"][0]["data"]["headline"] is None
    assert [f["code"] for f in raw["events"][1]["data"]["findings"]] == ["behavior.reward_hacking"]
    # the typed result itself, redacted (what the verb layer returns to a face), the same
    typed = redacted(result)
    validate(typed.to_dict(), "log")
    assert typed.to_dict() == raw  # a typed result is shown as its JSON is (the time to the minute)
    assert typed.events[0].at == "2026-12-04T15:56:00+00:00"
    assert result.events[1].data == {"metric": "validation/mean", "value": 0.8}  # a copy: untouched


def test_a_text_named_after_a_hidden_split_keeps_its_words_not_its_numbers() -> None:
    skills = {
        "skills": [
            {"name": "a", "validation": "the held-out return rises"},
            {"name": "b", "validation": "validation mean above 0.31"},
            {"name": "c", "validation": {"mean": 0.31}},
        ]
    }
    out = redacted(skills)["skills"]
    assert out[0]["validation"] == "the held-out return rises"
    assert out[1]["validation"] == HIDDEN_TEXT
    assert "validation" not in out[2]  # a figure under the split's name: dropped as before


def test_a_typed_result_s_field_named_after_a_hidden_split_is_nulled_like_its_json_key() -> None:
    """The text renderer gets the typed result, the JSON its dict: neither shows the figure."""
    from evotree.gates.finalize import Candidate, FinalizePlan
    from evotree.verbs.promotion_results import FinalizeDryRun

    plan = FinalizeDryRun(
        FinalizePlan("ready", Candidate("v1-s0", "v1", _COMMIT, "t", 0.8125), 3), retrain=False
    )
    typed = redacted(plan)
    assert typed.plan.selected.validation is None and plan.plan.selected.validation == 0.8125
    raw = redacted(plan.to_dict())
    assert "validation" not in raw["selected"]
    validate(raw, "finalize-plan")
    validate(typed.to_dict(), "finalize-plan")


def test_a_run_s_nulled_end_time_keeps_the_run() -> None:
    run = {
        "run_id": "v1-s0",
        "phases": {"train": {"wall_seconds": 1.0}, "eval": {"returncode": 0}},
        "ended_at": "2026-12-04T15:56:52+00:00",
        "headline": {"metric": "validation/m", "value": 1},
    }
    [out] = redacted([run])
    assert out["ended_at"] is None and out["headline"] is None
    assert out["phases"]["eval"] == {"ok": True}


# ------------------------------------------------------------------------- end to end, hide mode
@pytest.fixture(scope="module")
def hidden_ws(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An EvoPolicyGym-mode gym workspace with one version run by a person (CLI), a lesson in
    memory and a ledger finding that names the judge's figures."""
    from test_gym_finalize import GOOD, hidden_gym_workspace

    from evotree.core.ledger import Event, EventKind, LedgerTxn

    ws = hidden_gym_workspace(tmp_path_factory.mktemp("hidden") / "w")
    cli = Cli(ws.root)
    made = cli.json("branch", "-m", "balance")
    commit_file(ws.root / made["worktree"], "policy.py", GOOD, "balance")
    [run] = cli.json("run", made["id"])["runs"]
    assert run["status"] == "succeeded", run
    cli.json("memory", "add", "balance on the pole's angle", "--version", made["id"])

    def finding(txn: LedgerTxn) -> Event:  # a finding event naming the judge's figures
        return Event(
            kind=EventKind.FINDING.value,
            version=made["id"],
            actor="Ada <ada@example.com>",
            at="2026-12-04T00:00:00+00:00",
            data={
                "runs": [run["run_id"]],
                "layers": ["score"],
                "worst": "warn",
                "counts": {"warn": 1},
                "total": 1,
                "findings": [
                    {
                        "code": "score.low_seeds",
                        "severity": "warn",
                        "layer": "score",
                        "title": "t",
                        "evidence": {"validation/mean": 0.9},
                    }
                ],
            },
        )

    ws.ledger.transact(finding, actor=ws.git.identity())
    return {"repo": ws.root, "version": made["id"], "run": run["run_id"]}


#: every --json command a person may run while hidden: argv -> its schema ("run": each item of
#: {"runs": [...]}); the refused ones print the error schema (exit 10)
def _person_commands(version: str, run_id: str, tmp: Path) -> list[tuple[tuple[str, ...], str]]:
    return [
        (("tree",), "tree"),
        (("show", version), "show"),
        (("log",), "log"),
        (("runs",), "run"),
        (("runs", "--version", version), "run"),
        (("budget",), "budget"),
        (("status",), "status"),
        (("diagnose", version), "diagnose"),
        (("suggest", version), "suggest"),
        (("audit", "version", version), "audit"),
        (("diff", "v0", version), "diff"),
        (("logs", run_id), "logs"),
        (("memory", "list"), "memory-list"),
        (("memory", "search", "balance"), "memory-search"),
        (("memory", "skills"), "memory-skills"),
        (("skill", "list"), "skill-list"),
        (("skill", "show", "StdGroupFilter"), "skill-show"),
        (("verify",), "verify"),
        (("judge", "show"), "judge-show"),
        (("report", "--tree"), "error"),
        (("help", "exit-codes"), "exit-codes"),
        (("worktree", "prune"), "prune"),
        (("memory", "export", str(tmp / "memory.jsonl")), "memory-export"),
        (("compare", "v0", version), "error"),
        (("gates", version), "error"),
        (("report", version), "error"),
        (("finalize", "--dry-run"), "finalize-plan"),
        (("spend", "record", "--usd", "0.25", "--note", "api"), "spend-record"),
        (("analyzers", "list"), "analyzers-list"),
        (("config", "show"), "config"),
        (("config", "check"), "config-check"),
        (("schema",), "schema-list"),
        (("sql", "SELECT run_id, status FROM runs"), "sql-output"),
        (("backtest", version), "backtest"),
    ]


@pytest.mark.heavy
def test_every_json_output_matches_its_schema_in_hide_mode_for_a_person(
    hidden_ws: dict[str, Any], tmp_path: Path
) -> None:
    cli = Cli(hidden_ws["repo"])
    for argv, schema in _person_commands(hidden_ws["version"], hidden_ws["run"], tmp_path):
        out = cli(*argv, "--json", code=10 if schema == "error" else 0)
        data = json.loads(out.stdout)
        for item in data["runs"] if schema == "run" else [data]:
            validate(item, schema)
        if schema == "error":
            assert data["error"]["code"] == "hidden_until_finalize", argv
        if schema == "finalize-plan":
            assert data["selected"]["run_id"] == hidden_ws["run"]
            assert "validation" not in data["selected"]
        if argv[0] == "log":
            assert all(e["data"] is not None for e in data["events"])
            assert not [
                e
                for e in data["events"]
                if e["kind"] == "finding" and any(f is None for f in e["data"].get("findings", []))
            ]
        # the text renderer of the same output does not fail on the redacted data
        if argv[:2] == ("memory", "export"):
            continue  # the file is written: a second export is refused for the existing path
        text = cli(*argv, code=10 if schema == "error" else 0)
        assert "Traceback" not in text.output, argv


@pytest.mark.heavy
def test_every_json_output_matches_its_schema_in_hide_mode_for_an_agent(
    hidden_ws: dict[str, Any],
) -> None:
    """The verb layer as a named principal, and the agent server's tools (what an MCP client
    gets back): each result validates against its schema while hidden."""
    import anyio

    from evotree.server.tools import EvotreeTools
    from evotree.server.verbs import Verbs
    from evotree.verbs import Principal, Session

    repo, version = hidden_ws["repo"], hidden_ws["version"]
    agent = Session(repo, Principal.parse("agent"))
    as_verbs = {
        "tree": (agent.tree(), "tree"),
        "show": (agent.show(version), "show"),
        "log": ({"v": 1, "events": agent.log()}, "log"),
        "runs": (agent.runs(), "run"),
        "diagnose": (agent.diagnose(version, record=False), "diagnose"),
        "suggest": (agent.suggest(version), "suggest"),
        "audit": (agent.audit(version), "audit"),
        "sql": (agent.sql("SELECT * FROM runs"), "sql"),
    }
    for name, (result, schema) in as_verbs.items():
        items = result if isinstance(result, list) else [result]
        for item in items:
            validate(item.to_dict() if hasattr(item, "to_dict") else item, schema)
        assert name

    tools = EvotreeTools(Verbs(repo, Principal.parse("agent")))

    def tool(call: Any) -> tuple[Any, bool]:
        result = anyio.run(tools.call, lambda: call(tools.verbs))
        return json.loads(result.content[0].text), bool(result.is_error)

    calls = {
        "tree": (lambda v: v.tree_encoded(), "tree"),
        "show": (lambda v: v.show(version), "show"),
        "log": (lambda v: v.log(None, None), "log"),
        "runs": (lambda v: v.runs(), "runs"),
        "diagnose": (lambda v: v.diagnose(version), "diagnose"),
        "suggest": (lambda v: v.suggest(version), "suggest"),
        "audit": (lambda v: v.audit(version), "audit"),
        "sql": (lambda v: v.sql("SELECT 1"), "sql"),
        "skill_list": (lambda v: v.skill_list(), "skill-list"),
        "skill_show": (lambda v: v.skill_show("StdGroupFilter"), "skill-show"),
        "memory_search": (lambda v: v.memory_search("balance"), "memory-search"),
        "compare": (lambda v: v.compare("v0", version), "error"),
        "gates": (lambda v: v.gates(version), "error"),
    }
    for name, (call, schema) in calls.items():
        data, is_error = tool(call)
        assert is_error == (schema == "error"), (name, data)
        if schema == "runs":
            for item in data["runs"]:
                validate(item, "run")
        elif schema == "error":
            validate(data, "error")
        else:
            validate(data, schema)


@pytest.mark.heavy
def test_finalize_s_json_matches_its_schema(hidden_ws: dict[str, Any]) -> None:
    """Last (it lifts the boundary): the person's finalize, its JSON against the finalize schema."""
    data = Cli(hidden_ws["repo"]).json("finalize", "--yes")
    validate(data, "finalize")
    assert data["status"] in ("finalized", "heldout_failed"), data
