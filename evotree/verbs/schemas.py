"""The ``--json`` schemas of the verbs' results, derived from their result types.

A verb returns a typed result (a dataclass with ``to_dict()``); its schema is
:func:`evotree.core.schemas.derive.dataclass_schema` of that type, so a field added to the
type is in the schema with no hand edit (:data:`DERIVED`). Outputs that are not one result type
(errors, listings of the CLI's own, reports, memory) keep the hand-written schemas shipped in
:mod:`evotree.core.schemas`. :func:`load_schema` and :func:`schema_names` answer for both:
``evotree schema NAME`` and the tests read schemas only through them.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from evotree.core import schemas as shipped
from evotree.core.errors import UsageError
from evotree.core.ledger import VersionRecord
from evotree.core.schemas.derive import dataclass_schema
from evotree.core.versions import TreeView, VersionDetail
from evotree.diagnostics.diagnose import DiagnoseResult
from evotree.harness.money import BudgetStatus, SpendRecord
from evotree.harness.records import RunRecord
from evotree.verbs import CommitResult, QueryResult

__all__ = ["DERIVED", "VERB_SCHEMAS", "Derived", "load_schema", "schema_aliases", "schema_names"]

_V = {"const": 1}


@dataclass(frozen=True)
class Derived:
    """One ``--json`` output whose schema is derived from its result type."""

    type: type
    title: str
    #: what ``to_dict`` writes beside the fields (``"v"``, a computed property): name -> schema
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: fields the output may leave out
    optional: tuple[str, ...] = ()

    def schema(self, name: str) -> dict[str, Any]:
        return dataclass_schema(
            self.type, name=name, title=self.title, extra=self.extra, optional=self.optional
        )


_FINDING_ROW = {
    "type": "object",
    "required": ["layer", "code", "severity", "runs"],
    "description": "one row per (layer, code), most severe first, with the runs it came from",
    "properties": {
        "layer": {"type": "string"},
        "code": {"type": "string"},
        "severity": {"type": ["string", "null"]},
        "runs": {"type": "array"},
        "detail": {"type": "array"},
    },
}

#: every ``--json`` output derived from its result type: schema name -> its type
DERIVED: dict[str, Derived] = {
    "tree": Derived(TreeView, "evotree tree --json", extra={"v": _V}),
    "show": Derived(VersionDetail, "evotree show V --json", extra={"v": _V}),
    "version": Derived(
        VersionRecord, "A version record (output of branch, merge, abandon, worktree restore)"
    ),
    "commit": Derived(
        CommitResult, "commit (the API's and the agent server's): the files snapshotted and the tip"
    ),
    "sql": Derived(
        QueryResult, "sql (the API's and the agent server's): rows of one read-only SELECT"
    ),
    "spend-record": Derived(
        SpendRecord, "evotree spend record --json (the agent server's spend_record tool)"
    ),
    "budget": Derived(BudgetStatus, "evotree budget --json"),
    "run": Derived(
        RunRecord,
        "A run record (run.json; items of `evotree run --json` and `evotree runs --json`)",
    ),
    "diagnose": Derived(
        DiagnoseResult,
        "evotree diagnose V --json",
        extra={"v": _V, "by_code": {"type": "array", "items": _FINDING_ROW}},
    ),
}

#: each verb of :data:`evotree.verbs.VERBS` whose result is derived -> its schema (a list result:
#: each item's)
VERB_SCHEMAS: dict[str, str] = {
    "tree": "tree",
    "show": "show",
    "branch": "version",
    "merge": "version",
    "abandon": "version",
    "commit": "commit",
    "run": "run",
    "runs": "run",
    "diagnose": "diagnose",
    "sql": "sql",
    "spend_record": "spend-record",
}


def schema_aliases() -> dict[str, str]:
    """Old schema name -> its current name (:func:`evotree.core.schemas.schema_aliases`)."""
    return shipped.schema_aliases()


def schema_names(*, include_aliases: bool = False) -> list[str]:
    """Every schema :func:`load_schema` gives: the derived ones and the shipped files."""
    return sorted(set(DERIVED) | set(shipped.schema_names(include_aliases=include_aliases)))


def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of the ``--json`` output ``name``: derived from its result type, or the
    shipped file (an old ``_`` name gives the current schema)."""
    name = schema_aliases().get(name, name)
    if name in DERIVED:
        return copy.deepcopy(_derived(name))
    if name not in shipped.schema_names():
        raise UsageError(
            f"unknown schema {name!r}; expected one of {', '.join(schema_names())}",
            fix="`evotree schema` lists them",
            schema=name,
        )
    return shipped.load_schema(name)


@cache
def _derived(name: str) -> dict[str, Any]:
    """The derived schema ``name`` (once a process: the types do not change while it runs)."""
    return DERIVED[name].schema(name)
