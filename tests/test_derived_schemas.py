"""The ``--json`` schemas of the verbs' results are derived from their result types: every verb's
output validates against its schema, and a field added to a type is in its schema unedited."""

from __future__ import annotations

import dataclasses
import json
import typing
from enum import Enum
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import jsonschema
import pytest

from conftest import Cli, validate

from evotree.core.schemas.derive import dataclass_schema, schema_note, type_schema
from evotree.verbs import VERBS, CommitResult, Session
from evotree.verbs.results import ErrorResult, LogResult
from evotree.verbs.schema_derivation import Derived
from evotree.verbs.schemas import DERIVED, VERB_SCHEMAS, load_schema, schema_names


def test_every_derived_schema_is_a_valid_schema_with_exactly_its_type_s_fields() -> None:
    for name, derived in DERIVED.items():
        schema = load_schema(name)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"evotree/{name}.schema.json" and schema["title"] == derived.title
        if typing.is_typeddict(derived.type):  # a TypedDict: its keys, its own required ones
            assert set(schema["properties"]) == set(typing.get_type_hints(derived.type)), name
            continue
        names = {f.name for f in dataclasses.fields(derived.type)} - set(derived.omit)
        optional = set(derived.optional) | {
            f.name for f in dataclasses.fields(derived.type) if f.metadata.get("optional")
        }
        assert set(schema["properties"]) == names | set(derived.extra) | set(derived.beside), name
        assert set(schema["required"]) == (names - optional) | set(derived.extra), name
    assert set(VERB_SCHEMAS) <= set(VERBS) and set(VERB_SCHEMAS.values()) <= set(DERIVED)
    assert set(DERIVED) <= set(schema_names())
    # nothing derived is also shipped as a hand-written file that could drift from it
    shipped = Path(__file__).resolve().parent.parent / "evotree" / "core" / "schemas"
    assert not [n for n in DERIVED if (shipped / f"{n}.schema.json").exists()]


def test_a_field_added_to_a_result_type_appears_in_its_schema_without_a_hand_edit() -> None:
    base = Derived(CommitResult, "commit").schema("commit")
    assert "reviewed_by" not in base["properties"]
    grown = dataclasses.make_dataclass(
        "CommitResult",
        [
            ("reviewed_by", "str | None", dataclasses.field(default=None)),
            ("lines", "list[int]", dataclasses.field(default_factory=list)),
        ],
        bases=(CommitResult,),
    )
    grown.__module__ = CommitResult.__module__
    schema = Derived(grown, "commit").schema("commit")
    assert schema["properties"]["reviewed_by"] == {"type": ["string", "null"]}
    assert schema["properties"]["lines"] == {"type": "array", "items": {"type": "integer"}}
    assert {"reviewed_by", "lines"} <= set(schema["required"])
    # the output of the grown type validates; one without the new field does not
    full = grown(
        version="v1",
        branch="evotree/v1",
        worktree=None,
        previous_commit="a" * 40,
        commit="b" * 40,
        changed=True,
    ).to_dict()
    jsonschema.Draft202012Validator(schema).validate(full)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(
            {k: v for k, v in full.items() if k != "reviewed_by"}
        )


class Colour(Enum):
    RED = "red"


@dataclasses.dataclass
class Inner:
    """An inner row."""

    x: float


@dataclasses.dataclass
class Outer:
    """The outer result."""

    #: the colour chosen
    colour: Colour
    mode: Literal["a", "b"]
    rows: list[Inner]
    table: dict[str, int]
    pair: tuple[str, ...]
    anything: Any
    maybe: Inner | None = None
    v: int = 1


def test_the_derivation_maps_types_and_field_notes() -> None:
    schema = dataclass_schema(Outer, name="outer", title="t", extra={"extra": {"type": "boolean"}})
    props = schema["properties"]
    assert props["colour"] == {"enum": ["red"], "description": "the colour chosen"}
    assert props["mode"] == {"enum": ["a", "b"]}
    assert props["rows"] == {"type": "array", "items": {"$ref": "#/$defs/Inner"}}
    assert props["table"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["pair"] == {"type": "array", "items": {"type": "string"}}
    assert props["anything"] == {} and props["v"] == {"const": 1}
    assert props["maybe"] == {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}]}
    assert schema["$defs"]["Inner"]["properties"]["x"] == {"type": "number"}
    assert schema["description"] == "The outer result." and "extra" in schema["required"]
    assert type_schema(int | None) == {"type": ["integer", "null"]}
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(
        {
            "colour": "red",
            "mode": "a",
            "rows": [{"x": 1.5}],
            "table": {"k": 1},
            "pair": ["p"],
            "anything": None,
            "maybe": None,
            "v": 1,
            "extra": True,
        }
    )
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(
            {
                "colour": "blue",
                "mode": "a",
                "rows": [],
                "table": {},
                "pair": [],
                "anything": 0,
                "maybe": None,
                "v": 1,
                "extra": True,
            }
        )


def _check(verb: str, result: Any) -> None:
    name = VERB_SCHEMAS[verb]
    if verb == "log":  # the verb returns the events; the output is LogResult's (the CLI's --json)
        typed = LogResult.of(result).to_dict()
        assert typed == {"v": 1, "events": result}
        validate(json.loads(json.dumps(typed)), name)
        return
    items = result if isinstance(result, list) else [result]
    assert items, verb
    for item in items:
        validate(json.loads(json.dumps(item.to_dict())), name)


@pytest.mark.heavy
def test_every_verb_s_json_output_validates_against_its_derived_schema(tmp_path: Path) -> None:
    """Each verb with a derived schema, called through the verb layer on a real workspace, and the
    CLI's --json output of the same results."""
    from test_runs import make_run_repo

    repo = make_run_repo(tmp_path / "ws", budget="tree_max_usd = 50")
    session = Session(repo)
    seen: set[str] = set()

    def call(verb: str, *args: Any, **kwargs: Any) -> Any:
        result = getattr(session, verb)(*args, **kwargs)
        _check(verb, result)
        seen.add(verb)
        return result

    v1 = call("branch", "more skill")
    (repo / v1.worktree / "recipe.toml").write_text("skill = 0.7\nsteps = 3\n")
    call("commit", v1.id, "more skill")
    v2 = call("branch", "another idea")
    call("run", [v1.id])
    call("runs", v1.id)
    call("gates", v1.id, run_audit=False)
    session.run(["v0"])
    call("compare", "v0", v1.id)
    call("tree")
    call("show", v1.id)
    call("diagnose", v1.id)
    call("sql", "SELECT run_id, version FROM runs", max_rows=5)
    call("spend_record", 0.5, "api: one session", tokens=100, version=v1.id)
    call("merge", v1.id, v2.id, message="both ideas")
    call("abandon", v2.id, reason="a dead end")
    call("log", limit=20)
    assert seen == set(VERB_SCHEMAS), set(VERB_SCHEMAS) - seen
    cli = Cli(repo)
    for args, name in (
        (("tree",), "tree"),
        (("show", v1.id), "show"),
        (("budget",), "budget"),
        (("diagnose", v1.id), "diagnose"),
        (("runs", "--version", v1.id), "run"),
        (("spend", "record", "--usd", "0.1", "--note", "more"), "spend-record"),
        (("log", "-n", "30"), "log"),
        (("suggest", v1.id), "suggest"),
        (("compare", "v0", v1.id), "compare"),
        (("audit", v1.id), "audit"),
        (("gates", v1.id), "gates"),
    ):
        out = cli.json(*args)
        items = (
            out["runs"] if args[0] == "runs" else [out]
        )  # runs --json: {"v": 1, "runs": [record, ...]}
        if args[0] == "log":
            assert len(out["events"]) > 10
        assert items, args
        for item in items:
            validate(item, name)
    error = cli.json("show", "v999", code=5)
    validate(error, "error")
    assert cli.json("schema", "commit") == load_schema("commit")
    assert cli.json("schema", "log") == load_schema("log")
    assert {"commit", "sql", "tree"} <= set(cli.json("schema")["current"])


class Row(TypedDict):
    """A row of a listing."""

    name: str
    kind: Literal["file", "dir"]
    size: NotRequired[int]


@dataclasses.dataclass
class WithNotes:
    rows: list[Row]
    commit: str = dataclasses.field(metadata=schema_note(pattern="^[0-9a-f]{40}$"))
    note: str | None = dataclasses.field(default=None, metadata=schema_note(optional=True))


def test_typed_dicts_field_metadata_and_optional_fields_are_derived() -> None:
    schema = dataclass_schema(WithNotes, name="w", title="t")
    row = schema["$defs"]["Row"]
    assert row["required"] == ["name", "kind"] and row["properties"]["kind"] == {
        "enum": ["file", "dir"]
    }
    assert schema["properties"]["commit"]["pattern"] == "^[0-9a-f]{40}$"
    assert schema["required"] == ["rows", "commit"]
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate({"rows": [{"name": "a", "kind": "file"}], "commit": "a" * 40})
    for bad in (
        {"rows": [{"name": "a", "kind": "link"}], "commit": "a" * 40},
        {"rows": [{"kind": "dir"}], "commit": "a" * 40},
        {"rows": [], "commit": "HEAD"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            validator.validate(bad)


def test_what_derivation_restores_run_status_enums_commit_patterns_and_error_fields() -> None:
    from evotree.core.errors import UnknownVersion

    run = load_schema("run")["properties"]
    assert "succeeded" in run["status"]["enum"] and "bogus" not in run["status"]["enum"]
    assert run["commit"]["pattern"].startswith("^[0-9a-f]{40}")
    version = load_schema("version")["properties"]
    assert "abandoned" in version["status"]["enum"]
    entry = load_schema("log")["$defs"]["LogEntry"]
    assert entry["properties"]["commit"]["pattern"] and "commit" in entry["required"]
    # the error output is ErrorResult's, exactly the dict EvotreeError writes
    exc = UnknownVersion("no version v9", fix="evotree tree", version="v9")
    assert ErrorResult.of(exc).to_dict() == {"error": exc.to_dict()}
    plain = UnknownVersion("no version v9")
    assert ErrorResult.of(plain).to_dict() == {"error": plain.to_dict()}
    validator = jsonschema.Draft202012Validator(load_schema("error"))
    validator.validate({"error": exc.to_dict()})
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({"error": {**exc.to_dict(), "fix": None}})


def test_memory_outputs_validate_against_their_derived_schemas(tmp_path: Path) -> None:
    """memory add/list/search/skills --json (the CLI's dicts) validate against the schemas derived
    from MemoryEntry and the memory result types, which build the same dicts; an entry with a
    kind or id memory never writes does not validate."""
    from conftest import make_repo
    from evotree.core.workspace import init_workspace
    from evotree.memory.read import list_entries
    from evotree.verbs.results import MemoryListResult

    repo = make_repo(tmp_path / "ws")
    init_workspace(repo)
    cli = Cli(repo)
    entry = cli.json("memory", "add", "dropping flat groups helps", "--tag", "grpo")
    validate(entry, "memory-entry")
    listed = cli.json("memory", "list")
    validate(listed, "memory-list")
    from evotree.core.workspace import Workspace

    typed = MemoryListResult(
        entries=list_entries(Workspace.open(repo)),
        skills=[],
        min_domains=listed["min_domains"],
        filtered=False,
    ).to_dict()
    assert typed == listed
    validate(cli.json("memory", "search", "flat", "groups"), "memory-search")
    validate(cli.json("memory", "skills"), "memory-skills")
    for bad in ({**entry, "kind": "gossip"}, {**entry, "id": "x1"}):
        with pytest.raises(jsonschema.ValidationError):
            validate(bad, "memory-entry")
    assert load_schema("memory_entry") == load_schema("memory-entry")  # the old name still resolves


def test_the_audit_schema_is_what_both_audits_write() -> None:
    """audit's result is the AuditResult TypedDict: every key AuditReport.to_dict() and
    TrajectoryAudit.to_dict() write is one of its keys, and what both write is required."""
    from evotree.harness.audit.trajectories import TrajectoryAudit
    from evotree.harness.audit.version_audit import AuditReport

    report = AuditReport(
        version="v1",
        passed=True,
        findings=[],
        trajectories=0,
        flagged=0,
        git_history_rate=0.0,
        raw_score=None,
        leak_adjusted_score=None,
    )
    files = TrajectoryAudit(
        trajectories=0, flagged=0, git_history=0, git_history_rate=0.0, verdicts=[], findings=[]
    )
    schema = load_schema("audit")
    for out in (report.to_dict(), files.to_dict()):
        assert set(out) <= set(schema["properties"]), set(out) - set(schema["properties"])
        validate(out, "audit")
    assert set(schema["required"]) <= set(report.to_dict()) & set(files.to_dict())
    with pytest.raises(jsonschema.ValidationError):
        validate({**files.to_dict(), "worst": "catastrophic"}, "audit")
