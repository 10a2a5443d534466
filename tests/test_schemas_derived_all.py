"""Every ``--json`` schema is derived from its result type: the shipped directory holds only the
old ``_`` names as ``$ref`` aliases, each resolving to a derived schema, and each derived schema
is a valid JSON Schema that rejects a wrong value of a field it types."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
from evotree.verbs.schemas import DERIVED, load_schema, schema_aliases, schema_names


def test_no_hand_written_schema_is_shipped_only_aliases_of_derived_ones() -> None:
    shipped = [
        p
        for p in resources.files("evotree.core.schemas").iterdir()
        if p.name.endswith(".schema.json")
    ]
    assert shipped  # the alias files ship (stored references to the old names resolve)
    for path in shipped:
        data = json.loads(path.read_text())
        name = path.name.removesuffix(".schema.json")
        assert "_" in name, f"{name}: a hand-written schema (derive it in evotree.verbs.schemas)"
        assert set(data) <= {"$schema", "$id", "title", "description", "$ref"}, name
        target = data["$ref"].removesuffix(".schema.json")
        assert target in DERIVED and schema_aliases()[name] == target, name
        assert load_schema(name) == load_schema(target)
    assert set(schema_names()) == set(DERIVED)


def test_each_derived_schema_checks_and_refuses_a_wrong_top_level_type() -> None:
    from referencing import Registry, Resource

    registry = Registry().with_resources(
        (f"evotree/{n}.schema.json", Resource.from_contents(load_schema(n)))
        for n in schema_names(include_aliases=True)
    )
    for name in sorted(DERIVED):
        schema = load_schema(name)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["required"], name
        check = jsonschema.Draft202012Validator(schema, registry=registry)
        assert not check.is_valid([]) and not check.is_valid({}), name  # required keys missing
