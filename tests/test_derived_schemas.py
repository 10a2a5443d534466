"""The ``--json`` schemas of the verbs' results are derived from their result types: every verb's
output validates against its schema, and a field added to a type is in its schema unedited."""

from __future__ import annotations

import dataclasses
import json
from enum import Enum
from pathlib import Path
from typing import Any, Literal

import jsonschema
import pytest

from conftest import Cli, validate

from evotree.core.schemas.derive import dataclass_schema, type_schema
from evotree.verbs import VERBS, CommitResult, Session
from evotree.verbs.schemas import DERIVED, VERB_SCHEMAS, Derived, load_schema, schema_names


def test_every_derived_schema_is_a_valid_schema_with_exactly_its_type_s_fields() -> None:
    for name, derived in DERIVED.items():
        schema = load_schema(name)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"evotree/{name}.schema.json" and schema["title"] == derived.title
        names = {f.name for f in dataclasses.fields(derived.type)}
        assert set(schema["properties"]) == names | set(derived.extra), name
        assert set(schema["required"]) == (names - set(derived.optional)) | set(derived.extra), name
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
    call("tree")
    call("show", v1.id)
    call("diagnose", v1.id)
    call("sql", "SELECT run_id, version FROM runs", max_rows=5)
    call("spend_record", 0.5, "api: one session", tokens=100, version=v1.id)
    call("merge", v1.id, v2.id, message="both ideas")
    call("abandon", v2.id, reason="a dead end")
    assert seen == set(VERB_SCHEMAS), set(VERB_SCHEMAS) - seen
    cli = Cli(repo)
    for args, name in (
        (("tree",), "tree"),
        (("show", v1.id), "show"),
        (("budget",), "budget"),
        (("diagnose", v1.id), "diagnose"),
        (("runs", "--version", v1.id), "run"),
        (("spend", "record", "--usd", "0.1", "--note", "more"), "spend-record"),
    ):
        out = cli.json(*args)
        items = (
            out["runs"] if args[0] == "runs" else [out]
        )  # runs --json: {"v": 1, "runs": [record, ...]}
        assert items, args
        for item in items:
            validate(item, name)
    assert cli.json("schema", "commit") == load_schema("commit")
    assert {"commit", "sql", "tree"} <= set(cli.json("schema")["current"])
