"""JSON Schema derived from a result dataclass's type hints: the ``--json`` schema of a verb is
its result type, so a field added to the type is in the schema with no hand edit.

:func:`dataclass_schema` maps ``str``/``int``/``float``/``bool``/``None``/``Any``, ``list``/
``tuple``/``Sequence``, ``dict``/``Mapping`` (text keys), unions, ``Literal``, ``Enum`` and nested
dataclasses and ``TypedDict`` s (as ``$defs``, by class name). Each field's ``#:`` comment (the
project's attribute doc) and each class's docstring become descriptions. Every field of a
dataclass is required (``asdict`` writes them all) unless the caller names it optional or its
``metadata`` says ``{"optional": True}`` (a ``to_dict`` that leaves it out when empty); a
``TypedDict``'s required keys are its own. A field's ``metadata["schema"]`` is merged into its
schema (a ``pattern``, an ``enum`` the type cannot say); what a ``to_dict`` adds beside the
fields (``"v"``, a computed property) is passed in as ``extra``.
"""

from __future__ import annotations

import ast
import collections.abc
import dataclasses
import enum
import functools
import inspect
import sys
import types
import typing
from typing import Any, Union

__all__ = ["dataclass_schema", "type_schema", "OPTIONAL", "schema_note"]

#: ``field(metadata=OPTIONAL)``: the output may leave the field out
OPTIONAL: dict[str, Any] = {"optional": True}


def schema_note(*, optional: bool = False, **schema: Any) -> dict[str, Any]:
    """A field's ``metadata``: ``schema`` merged into its derived schema (``pattern=…``), and
    whether the output may leave it out."""
    return {"schema": schema, **({"optional": True} if optional else {})}


_DIALECT = "https://json-schema.org/draft/2020-12/schema"
_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
    object: {},
}


def dataclass_schema(
    cls: type,
    *,
    name: str,
    title: str,
    extra: dict[str, dict[str, Any]] | None = None,
    optional: tuple[str, ...] = (),
    description: str | None = None,
    hints: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``cls().to_dict()`` / ``asdict(cls())``, as ``$id``
    ``evotree/<name>.schema.json``. ``extra``: properties the output has beside the fields (all
    required); ``optional``: fields the output may leave out; ``hints``: a field's more precise
    type than the one declared (a ``TypedDict`` for a ``dict[str, Any]`` field)."""
    defs: dict[str, dict[str, Any]] = {}
    if typing.is_typeddict(cls):  # a result described by the JSON's own keys
        body = _typeddict_schema(cls, defs)
        body["required"] = [k for k in body["required"] if k not in optional]
    else:
        body = _object_schema(cls, defs, optional=optional, hints=hints)
    for key, schema in (extra or {}).items():
        body["properties"][key] = schema
        if key not in body["required"]:
            body["required"].append(key)
    out: dict[str, Any] = {
        "$schema": _DIALECT,
        "$id": f"evotree/{name}.schema.json",
        "title": title,
    }
    text = description if description is not None else _doc(cls)
    if text:
        out["description"] = text
    out.update(body)
    if defs:
        out["$defs"] = dict(sorted(defs.items()))
    return out


def type_schema(hint: Any, defs: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The JSON Schema of one type hint (nested dataclasses added to ``defs`` and referenced)."""
    return _schema(hint, defs if defs is not None else {})


def _schema(hint: Any, defs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        options = [_schema(arg, defs) for arg in args]
        simple = [
            o.get("type") for o in options if set(o) == {"type"} and isinstance(o.get("type"), str)
        ]
        if len(simple) == len(options):
            return {"type": list(dict.fromkeys(simple))}
        if any(o == {} for o in options):
            return {}
        return {"anyOf": options}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (
        list,
        tuple,
        set,
        frozenset,
        collections.abc.Sequence,
        collections.abc.Iterable,
    ) or hint in (list, tuple, set):
        if origin is tuple:  # tuple[X, ...]: items X; a fixed tuple: any items
            item = args[0] if len(args) == 2 and args[1] is Ellipsis else Any
        else:
            item = args[0] if args else Any
        schema: dict[str, Any] = {"type": "array"}
        items = _schema(item, defs)
        if items:
            schema["items"] = items
        return schema
    if origin in (dict, collections.abc.Mapping) or hint in (dict,):
        schema = {"type": "object"}
        if len(args) == 2:
            values = _schema(args[1], defs)
            if values:
                schema["additionalProperties"] = values
        return schema
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return {"enum": [member.value for member in hint]}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        key = hint.__name__
        if key not in defs:
            defs[key] = {}  # a placeholder: a recursive type refers to itself
            defs[key] = _object_schema(hint, defs)
        return {"$ref": f"#/$defs/{key}"}
    if typing.is_typeddict(hint):
        key = hint.__name__
        if key not in defs:
            defs[key] = {}
            defs[key] = _typeddict_schema(hint, defs)
        return {"$ref": f"#/$defs/{key}"}
    return {}  # a type JSON cannot name more precisely (a forward reference that did not resolve)


def _object_schema(
    cls: type,
    defs: dict[str, dict[str, Any]],
    *,
    optional: tuple[str, ...] = (),
    hints: dict[str, Any] | None = None,
) -> dict[str, Any]:
    hints = {**_hints(cls), **(hints or {})}
    notes = _field_notes(cls)
    properties: dict[str, Any] = {}
    left_out = set(optional)
    for f in dataclasses.fields(cls):
        schema = _schema(hints.get(f.name, Any), defs)
        if f.name == "v" and isinstance(f.default, int):
            schema = {"const": f.default}
        schema.update(f.metadata.get("schema") or {})
        if f.metadata.get("optional"):
            left_out.add(f.name)
        if notes.get(f.name):
            schema = {**schema, "description": notes[f.name]}
        properties[f.name] = schema
    out: dict[str, Any] = {
        "type": "object",
        "required": [n for n in properties if n not in left_out],
        "properties": properties,
    }
    text = _doc(cls)
    if text:
        out["description"] = text
    return out


def _typeddict_schema(cls: type, defs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A ``TypedDict``'s object schema. Its required keys are read from the hints themselves
    (``NotRequired[X]`` / ``Required[X]`` and ``total``): with postponed annotations the class's
    own ``__required_keys__`` cannot see them."""
    module = vars(sys.modules.get(cls.__module__)) if cls.__module__ in sys.modules else {}
    try:
        hints = typing.get_type_hints(cls, module, include_extras=True)
    except Exception:  # noqa: BLE001 - an unresolvable name: what the class itself knows
        hints = _hints(cls)
    notes = _field_notes(cls)
    properties: dict[str, Any] = {}
    required: set[str] = set()
    for name, hint in hints.items():
        origin = typing.get_origin(hint)
        if origin is typing.NotRequired:
            hint = typing.get_args(hint)[0]
        elif origin is typing.Required or getattr(cls, "__total__", True):
            if origin is typing.Required:
                hint = typing.get_args(hint)[0]
            required.add(name)
        while typing.get_origin(hint) is typing.Annotated:
            hint = typing.get_args(hint)[0]
        schema = _schema(hint, defs)
        if notes.get(name):
            schema = {**schema, "description": notes[name]}
        properties[name] = schema
    out: dict[str, Any] = {
        "type": "object",
        "required": [n for n in properties if n in required],
        "properties": properties,
    }
    text = _doc(cls)
    if text:
        out["description"] = text
    return out


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    module = vars(sys.modules.get(cls.__module__)) if cls.__module__ in sys.modules else {}
    try:  # each class's own module resolves its fields (a base from another module's too)
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - then with the subclass's module
        pass
    try:
        return typing.get_type_hints(cls, module)
    except Exception:  # noqa: BLE001 - a name imported only for type checking: field by field
        out: dict[str, Any] = {}
        for klass in reversed(cls.__mro__):
            for name, text in getattr(klass, "__annotations__", {}).items():
                try:
                    value = eval(text, module, {}) if isinstance(text, str) else text  # noqa: S307
                    out[name] = value
                except Exception:  # noqa: BLE001 - unresolvable: any value
                    out[name] = Any
        return out


def _doc(cls: type) -> str | None:
    doc = cls.__dict__.get("__doc__")
    if not doc or doc.startswith(f"{cls.__name__}("):  # dataclass's generated signature
        return None
    return " ".join(inspect.cleandoc(doc).split())


def _field_notes(cls: type) -> dict[str, str]:
    """``field -> its #: comment`` from the class's source (and its dataclass bases')."""
    return dict(_class_notes(cls))


@functools.cache
def _class_notes(cls: type) -> dict[str, str]:
    """:func:`_field_notes`, read once a class."""
    notes: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not dataclasses.is_dataclass(klass) and not typing.is_typeddict(klass):
            continue
        found = _module_classes(klass.__module__).get(klass.__qualname__)
        if found is None:
            continue
        node, lines = found
        for item in node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                comment: list[str] = []
                row = item.lineno - 2
                while row >= 0 and lines[row].strip().startswith("#:"):
                    comment.insert(0, lines[row].strip()[2:].strip())
                    row -= 1
                if comment:
                    notes[item.target.id] = " ".join(comment)
    return notes


@functools.cache
def _module_classes(module: str) -> dict[str, tuple[ast.ClassDef, list[str]]]:
    """Each class statement of ``module``'s source by qualified name, with the source's lines: the
    module is parsed once (``inspect.getsource`` of a class parses it again for every class)."""
    try:
        source = inspect.getsource(sys.modules[module])
        tree = ast.parse(source)
    except (KeyError, OSError, TypeError, SyntaxError):
        return {}
    lines = source.splitlines()
    out: dict[str, tuple[ast.ClassDef, list[str]]] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                name = f"{prefix}{node.name}"
                out.setdefault(name, (node, lines))
                visit(node.body, f"{name}.")

    visit(tree.body, "")
    return out
