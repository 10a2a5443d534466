"""How one ``--json`` output's schema is derived from its result type: :class:`Derived` holds
what the type cannot say (per-field additions, more precise hints, omitted and optional fields,
extra ``$defs``) and builds the schema; a ledger event's ``data`` is checked against its kind's
payload type (:func:`payload_schema`). The table of every derived output is
:data:`evotree.verbs.schemas.DERIVED`."""

from __future__ import annotations

import dataclasses
import json
import sys
import typing
from dataclasses import dataclass, field
from typing import Any

from evotree.core.events import PAYLOADS
from evotree.core.schemas.derive import dataclass_schema, type_schema

__all__ = ["Derived", "payload_schema"]


@dataclass(frozen=True)
class Derived:
    """One ``--json`` output whose schema is derived from its result type."""

    type: type
    title: str
    #: what ``to_dict`` writes beside the fields (``"v"``, a computed property): name -> schema
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: fields the output may leave out
    optional: tuple[str, ...] = ()
    #: what a field's type cannot say, merged into its schema: name -> schema (an enum, a pattern)
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: a field's more precise type than the one declared: name -> type (a TypedDict)
    hints: dict[str, Any] = field(default_factory=dict)
    #: fields ``to_dict`` leaves out (kept in the object, not in its JSON)
    omit: tuple[str, ...] = ()
    #: what some outputs of the type carry beside its fields (not required): name -> schema
    beside: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: more types whose schemas ``beside`` or ``fields`` refer to (``#/$defs/Name``)
    defs: tuple[type, ...] = ()
    #: the object holding a ledger event (``""``: the output itself; else its ``$defs`` name)
    #: whose ``data`` is checked against its ``kind``'s payload type (:data:`PAYLOADS`)
    event: str | None = None

    def schema(self, name: str) -> dict[str, Any]:
        own = {k: v for k, v in self.hints.items() if "." not in k}
        out = dataclass_schema(
            self.type,
            name=name,
            title=self.title,
            extra=self.extra,
            optional=tuple(k for k in self.optional if "." not in k),
            hints=own,
        )
        for key, hint in self.hints.items():  # "Type.field": a nested type's field
            if "." in key:
                owner, _, prop = key.partition(".")
                defs = out.setdefault("$defs", {})
                before = defs[owner]["properties"][prop]
                derived = type_schema(hint, defs)
                if "description" in before:
                    derived["description"] = before["description"]
                defs[owner]["properties"][prop] = derived
        for key in self.optional:  # "Type.field": a nested type's field the output may leave out
            if "." in key:
                owner, _, prop = key.partition(".")
                body = out["$defs"][owner]
                body["required"] = [r for r in body["required"] if r != prop]
        for extra_type in self.defs:
            type_schema(extra_type, out.setdefault("$defs", {}))
        for key, more in self.beside.items():
            out["properties"][key] = more
        for key in self.omit:  # "field": the output's own; "Type.field": a nested type's
            owner, _, prop = key.rpartition(".")
            body = out["$defs"][owner] if owner else out
            body["properties"].pop(prop, None)
            body["required"] = [r for r in body["required"] if r != prop]
        if "$defs" in out:
            out["$defs"] = dict(sorted(out["$defs"].items()))
        for key, more in self.fields.items():
            # "field": the output's own; "Type.field": a nested type's (its $defs entry)
            owner, _, name = key.rpartition(".")
            props = out["$defs"][owner]["properties"] if owner else out["properties"]
            props[name] = {**(props.get(name, {}) if owner else props[name]), **more}
        _prune_defs(out)
        if self.event is not None:
            _payloads_by_kind(out, self.event)
        return out


def payload_schema(cls: type) -> dict[str, Any]:
    """The schema of one event kind's ``data`` (its payload dataclass): the keys it declares and no
    other, a field with no default required (an ``ABSENT`` one may be left out), as
    :meth:`evotree.core.events.Payload.from_data` reads it."""
    hints = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    props: dict[str, Any] = {}
    required = []
    for f in dataclasses.fields(cls):
        props[f.name] = type_schema(hints[f.name])
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    out: dict[str, Any] = {
        "type": "object",
        "required": required,
        "properties": props,
        "additionalProperties": False,
    }
    if cls.__dict__.get("__doc__") and not cls.__doc__.startswith(f"{cls.__name__}("):
        out["description"] = " ".join(cls.__doc__.split())
    return out


def _payloads_by_kind(schema: dict[str, Any], where: str) -> None:
    """``data`` checked by ``kind``: one ``if kind == K then data is K's payload`` per event kind,
    the payloads in ``$defs`` as ``payload.<kind>``."""
    defs = schema.setdefault("$defs", {})
    target = defs[where] if where else schema
    cases = []
    for kind, cls in PAYLOADS.items():
        name = f"payload.{kind.value}"
        defs[name] = payload_schema(cls)
        cases.append(
            {
                "if": {"properties": {"kind": {"const": kind.value}}, "required": ["kind"]},
                "then": {"properties": {"data": {"$ref": f"#/$defs/{name}"}}},
            }
        )
    target["allOf"] = cases
    schema["$defs"] = dict(sorted(defs.items()))


def _prune_defs(schema: dict[str, Any]) -> None:
    """Drop the ``$defs`` nothing refers to any more (a nested type a field's schema replaced)."""
    defs = schema.get("$defs")
    while defs:
        text = json.dumps({k: v for k, v in schema.items() if k != "$defs"}) + json.dumps(defs)
        unused = [k for k in defs if f'"#/$defs/{k}"' not in text]
        if not unused:
            return
        for key in unused:
            del defs[key]
    if defs == {}:
        del schema["$defs"]
