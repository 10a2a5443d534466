"""Findings: one model for every diagnostic layer, the analyzer contract, and the registry.

A :class:`Finding` is one thing a diagnostic layer noticed about a run (or a version): its
``layer`` (score, signal, behavior, version), a stable ``code`` (``"signal.dead_groups_high"``:
the layer, a dot, snake_case; codes never change meaning, so agents and the ledger can rely on
them), a ``severity`` (info < warn < high < critical, ordered by :class:`Severity`), a one-line
``title``, the ``evidence`` (the numbers, and under the key ``"query"`` the SQL over the
evidence views that produced them), a ``suggestion`` and the ``skills`` that address it, the
``run_id`` and ``version`` it is about, and the ``harness_version`` of the analyzer that
produced it (``"builtin"`` for evotree's own). :meth:`Finding.to_dict` is its JSON form, with a
schema version ``"v": 1``; :meth:`Finding.from_dict` reads it back (and refuses other versions).

An :class:`Analyzer` turns the evidence of one run into findings. The contract:

* class attributes ``name`` (stable, ``"<layer>.<what>"``, unique in the registry), ``layer``,
  ``codes`` (every finding code it may emit), ``thresholds_type`` (a dataclass whose fields all
  have defaults; a workspace overrides them by name, see :func:`make_thresholds`) and
  ``harness_version`` (copied into each finding; a workspace's own analyzer sets its own);
* ``analyze(con, *, run_id, version, context=None) -> list[Finding]``: ``con`` is a DuckDB
  connection from :func:`evotree.harness.query.connect`; only reads (temp tables for shared
  sub-results go through ``context``); returns ``[]`` when there is nothing to say or not
  enough evidence to say it; never raises for odd evidence (missing columns' values, an empty
  run): that is a finding or nothing. Heavy lifting belongs in SQL, not in Python loops over
  rows: a run may hold 10M rollouts.
* ``context`` (an :class:`AnalysisContext`; None when the analyzer is called on its own)
  carries the parent version's run ids and the sub-results analyzers share (temp tables made
  once per run, :meth:`AnalysisContext.shared`); :func:`query` runs SQL naming them and
  returns the self-contained query to record as evidence.
* findings are built with :meth:`Analyzer.finding`, which fills layer, run, version and
  analyzer version and checks the code is one of ``codes``.

Built-in analyzers register themselves with :func:`register_analyzer` when their module is
imported (signal layer: :mod:`evotree.diagnostics.signal`, behavior layer: :mod:`evotree.diagnostics.behavior`;
the modules of :data:`BUILTIN_MODULES` are imported before the registry is read);
:func:`run_analyzers`
runs the registered analyzers of the asked layers over runs and returns the findings, most
severe first.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import importlib
import itertools
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from evotree.core.errors import ConfigError
from evotree.core.findings import (
    _CODE,
    FINDING_SCHEMA_VERSION,
    LAYERS,
    SEVERITIES,
    Finding,
    FindingError,
    Severity,
    max_severity,
    sort_findings,
    write_findings_file,
)

__all__ = [
    "BUILTIN_MODULES",
    "FINDING_SCHEMA_VERSION",
    "LAYERS",
    "SEVERITIES",
    "AnalysisContext",
    "Analyzer",
    "Finding",
    "FindingError",
    "NoThresholds",
    "Severity",
    "Shared",
    "analyzer_classes",
    "check_order",
    "check_range",
    "default_thresholds",
    "make_thresholds",
    "max_severity",
    "query",
    "register_analyzer",
    "run_analyzers",
    "sort_findings",
    "write_findings_file",
]

#: Modules whose import registers the built-in analyzers (the score and version layers add theirs).
BUILTIN_MODULES = ("evotree.diagnostics.signal", "evotree.diagnostics.behavior")


# ----------------------------------------------------------------------------- thresholds
@dataclass(frozen=True)
class NoThresholds:
    """The thresholds of an analyzer that has none."""


def _field_ok(value: Any, annotation: Any) -> bool:
    kind = (
        annotation
        if isinstance(annotation, str)
        else getattr(annotation, "__name__", str(annotation))
    )
    kind = kind.replace(" ", "")
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "str":
        return isinstance(value, str)
    if kind.startswith("tuple[str"):
        return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    return True


def make_thresholds(analyzer: type[Analyzer] | Analyzer, overrides: Any = None) -> Any:
    """The thresholds of ``analyzer``: its defaults with ``overrides`` applied.

    ``overrides``: None, an instance of the analyzer's ``thresholds_type`` (used as is), or a
    mapping of field name -> value (e.g. the ``[diagnose.thresholds."signal.dead_groups"]`` table
    of a workspace). Unknown names, wrong types and values the dataclass refuses raise
    :class:`evotree.core.errors.ConfigError` naming the analyzer and the key.
    """
    cls = analyzer.thresholds_type
    if overrides is None:
        return cls()
    if isinstance(overrides, cls):
        return overrides
    if not isinstance(overrides, Mapping):
        raise ConfigError(
            f"thresholds of {analyzer.name}: expected a table of values, actually: "
            f"{type(overrides).__name__}",
            key=analyzer.name,
        )
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    for key, value in overrides.items():
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"thresholds of {analyzer.name}: unknown key {key!r}{hint}",
                fix=f"known keys: {', '.join(fields) or '(none)'}",
                key=f"{analyzer.name}.{key}",
            )
        if not _field_ok(value, fields[key].type):
            raise ConfigError(
                f"thresholds of {analyzer.name}: {key} expected {fields[key].type}, "
                f"actually: {value!r}",
                key=f"{analyzer.name}.{key}",
            )
        values[key] = tuple(value) if isinstance(value, list) else value
    try:
        return cls(**values)
    except ValueError as exc:
        raise ConfigError(f"thresholds of {analyzer.name}: {exc}", key=analyzer.name) from None


def check_order(owner: str, **levels: float) -> None:
    """Raise ValueError unless the given levels are non-decreasing in the order given."""
    names = list(levels)
    for low, high in itertools.pairwise(names):
        if levels[low] > levels[high]:
            raise ValueError(
                f"{low} ({levels[low]}) must not exceed {high} ({levels[high]}) in {owner}"
            )


def check_range(owner: str, name: str, value: float, lo: float, hi: float) -> None:
    """Raise ValueError unless ``lo <= value <= hi``."""
    if not (isinstance(value, (int, float)) and lo <= value <= hi):
        raise ValueError(f"{name} must be in [{lo}, {hi}] in {owner}, actually: {value!r}")


# ----------------------------------------------------------------------------- shared SQL
@dataclass(frozen=True)
class Shared:
    """A sub-result several analyzers use, materialized once per run as a temp table.

    ``alias`` is how queries name it (``__groups__`` in a query is replaced by the table);
    ``sql`` is its definition over the views, shown in findings as a ``WITH`` clause.
    """

    alias: str
    table: str
    sql: str


class AnalysisContext:
    """What a pass over runs shares between analyzers.

    ``parent_run_ids``: runs of the parent version (length shift, reward-vs-eval compare to
    them). Shared sub-results (:meth:`shared`) are temp tables on the connection, dropped by
    :meth:`close`. One context serves one connection.
    """

    def __init__(self, *, parent_run_ids: Sequence[str] = ()) -> None:
        self.parent_run_ids = tuple(str(r) for r in parent_run_ids)
        self._shared: dict[tuple[str, str], Shared] = {}
        self._values: dict[tuple[str, str], Any] = {}
        self._con: Any = None

    def shared(
        self,
        con: Any,
        run_id: str,
        alias: str,
        sql: str,
        *,
        key: str | None = None,
        shown: str | None = None,
    ) -> Shared:
        """The temp table holding ``sql`` for ``run_id`` (created the first time it is asked).

        ``key`` (default: ``alias``) tells sub-results of different parameters apart; ``shown``
        is the definition to display when ``sql`` itself names other temp tables.
        """
        self._bind(con)
        slot = (run_id, key or alias)
        found = self._shared.get(slot)
        if found is None:
            table = f"_diag_{alias}_{len(self._shared)}"
            con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS {sql}")
            found = self._shared[slot] = Shared(alias, table, shown or sql)
        return found

    def memo(self, run_id: str, key: str, compute: Any) -> Any:
        """A value computed once per (run, key): ``compute()`` is called the first time."""
        slot = (run_id, key)
        if slot not in self._values:
            self._values[slot] = compute()
        return self._values[slot]

    def _bind(self, con: Any) -> None:
        if self._con is None:
            self._con = con
        elif self._con is not con:
            raise FindingError(
                "an AnalysisContext serves one connection; create one per connection"
            )

    def close(self) -> None:
        """Drop the temp tables (the connection stays open)."""
        if self._con is not None:
            for shared in self._shared.values():
                try:
                    self._con.execute(f"DROP TABLE IF EXISTS {shared.table}")
                except Exception:  # noqa: BLE001, S110 - the connection may be closed already
                    pass
        self._shared.clear()
        self._values.clear()
        self._con = None


def query(con: Any, sql: str, *shared: Shared) -> tuple[list[tuple[Any, ...]], str]:
    """Run ``sql`` (``__alias__`` names a shared table) -> (rows, the same query over the views).

    The second element is what findings record as ``evidence["query"]``: self-contained SQL
    (shared sub-results inlined as ``WITH`` clauses) that gives the same numbers in
    ``evotree query``.
    """
    executed = shown = sql
    for item in shared:
        executed = executed.replace(f"__{item.alias}__", item.table)
        shown = shown.replace(f"__{item.alias}__", item.alias)
    if shared:
        ctes = ", ".join(f"{s.alias} AS ({s.sql})" for s in shared)
        stripped = shown.lstrip()
        if stripped[:5].upper() == "WITH ":
            shown = f"WITH {ctes}, {stripped[5:]}"
        else:
            shown = f"WITH {ctes} {shown}"
    rows = con.execute(executed).fetchall()
    return rows, " ".join(shown.split())


# ----------------------------------------------------------------------------- analyzers
class Analyzer(ABC):
    """One detector of one layer (see the module doc for the contract)."""

    name: ClassVar[str]
    layer: ClassVar[str]
    codes: ClassVar[tuple[str, ...]]
    thresholds_type: ClassVar[type] = NoThresholds
    harness_version: ClassVar[str] = "builtin"

    def __init__(self, thresholds: Any = None) -> None:
        self.thresholds = make_thresholds(self, thresholds)

    @abstractmethod
    def analyze(
        self, con: Any, *, run_id: str, version: str | None, context: AnalysisContext | None = None
    ) -> list[Finding]:
        """The findings about ``run_id`` (of ``version``) from the evidence views of ``con``."""

    def finding(
        self,
        code: str,
        severity: str | Severity,
        title: str,
        *,
        run_id: str | None,
        version: str | None,
        evidence: Mapping[str, Any],
        suggestion: str = "",
        skills: Sequence[str] = (),
    ) -> Finding:
        """A finding of this analyzer (``code`` must be one of :attr:`codes`)."""
        if code not in self.codes:
            raise FindingError(
                f"analyzer {self.name} emitted {code!r}, which is not in its codes {self.codes}"
            )
        return Finding(
            layer=self.layer,
            code=code,
            severity=Severity.parse(severity).label,
            title=title,
            evidence=dict(evidence),
            suggestion=suggestion,
            skills=list(skills),
            run_id=run_id,
            version=version,
            harness_version=self.harness_version,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, thresholds={self.thresholds!r})"


_REGISTRY: dict[str, type[Analyzer]] = {}


def _check_analyzer(cls: type[Analyzer]) -> None:
    for attr in ("name", "layer", "codes"):
        if not hasattr(cls, attr):
            raise FindingError(f"analyzer {cls.__name__} has no {attr}")
    if cls.layer not in LAYERS:
        raise FindingError(
            f"analyzer {cls.name}: layer must be one of {', '.join(LAYERS)}, actually: {cls.layer!r}"
        )
    if not cls.name.startswith(cls.layer + "."):
        raise FindingError(
            f"analyzer name {cls.name!r} must start with its layer {cls.layer!r} and a dot"
        )
    for code in cls.codes:
        if not _CODE.match(code) or not code.startswith(cls.layer + "."):
            raise FindingError(
                f"analyzer {cls.name}: code {code!r} is not '<{cls.layer}>.<snake_case>'"
            )
    if not dataclasses.is_dataclass(cls.thresholds_type):
        raise FindingError(f"analyzer {cls.name}: thresholds_type must be a dataclass")
    try:
        cls.thresholds_type()
    except TypeError:
        raise FindingError(f"analyzer {cls.name}: every threshold needs a default") from None


def register_analyzer(cls: type[Analyzer] | None = None, *, replace: bool = False) -> Any:
    """Register an analyzer class (usable as a decorator). A second class with the same name is
    refused unless ``replace=True`` (a workspace's analyzer version overriding a built-in)."""

    def add(klass: type[Analyzer]) -> type[Analyzer]:
        _check_analyzer(klass)
        if klass.name in _REGISTRY and _REGISTRY[klass.name] is not klass and not replace:
            raise FindingError(
                f"an analyzer named {klass.name!r} is already registered",
                fix="choose another name, or pass replace=True to override it",
            )
        _REGISTRY[klass.name] = klass
        return klass

    return add(cls) if cls is not None else add


def _load_builtins() -> None:
    for module in BUILTIN_MODULES:
        importlib.import_module(module)


@functools.cache
def _builtin_rank() -> dict[str, int]:
    """Built-in analyzer name -> its place: the layer modules' ``FAMILIES`` in order, each
    family's analyzers in definition order. The registry's order must not depend on which
    module some caller imported first."""
    rank: dict[str, int] = {}
    for module in BUILTIN_MODULES:
        for family in importlib.import_module(module).FAMILIES:
            for value in vars(family).values():
                if (
                    isinstance(value, type)
                    and value.__module__ == family.__name__
                    and value.__dict__.get("name") in _REGISTRY
                ):
                    rank.setdefault(value.__dict__["name"], len(rank))
    return rank


def _check_layers(layers: Iterable[str] | None) -> tuple[str, ...] | None:
    if layers is None:
        return None
    chosen = tuple(layers)
    for layer in chosen:
        if layer not in LAYERS:
            raise FindingError(f"layer: expected one of {', '.join(LAYERS)}, actually: {layer!r}")
    return chosen


def analyzer_classes(layers: Iterable[str] | None = None) -> list[type[Analyzer]]:
    """Registered analyzers (built-ins loaded) of ``layers`` (all when None), in layer order."""
    _load_builtins()
    chosen = _check_layers(layers)
    rank = _builtin_rank()
    order = {name: i for i, name in enumerate(_REGISTRY)}
    classes = [c for c in _REGISTRY.values() if chosen is None or c.layer in chosen]
    return sorted(
        classes,
        key=lambda c: (LAYERS.index(c.layer), rank.get(c.name, len(rank)), order[c.name]),
    )


def default_thresholds(layers: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Analyzer name -> its default thresholds as a dict (what a workspace may override)."""
    return {c.name: dataclasses.asdict(c.thresholds_type()) for c in analyzer_classes(layers)}


def _run_version(con: Any, run_id: str) -> str | None:
    """The version of ``run_id`` from the ``runs`` view (None when unknown)."""
    rows = con.execute("SELECT version FROM runs WHERE run_id = ? LIMIT 1", [run_id]).fetchall()
    return rows[0][0] if rows else None


def run_analyzers(
    con: Any,
    *,
    run_ids: Sequence[str],
    version: str | None,
    layers: Iterable[str] | None = None,
    thresholds: Mapping[str, Any] | None = None,
    parent_run_ids: Sequence[str] = (),
    analyzers: Sequence[type[Analyzer] | Analyzer] | None = None,
    strict: bool = False,
    timings: dict[str, float] | None = None,
) -> list[Finding]:
    """Run the analyzers of ``layers`` over each run in ``run_ids``; findings most severe first.

    ``version``: recorded in every finding (None: each run's version from the ``runs`` view).
    ``parent_run_ids``: runs of the parent version, for analyzers that compare with it.

    ``thresholds``: analyzer name -> overrides (see :func:`make_thresholds`); a name that is not
    a registered analyzer raises :class:`ConfigError`. ``analyzers``: run exactly these (classes
    or instances) instead of the registry's. An analyzer that raises becomes a ``warn`` finding
    ``<layer>.analyzer_failed`` naming it and the error (the other analyzers still run), unless
    ``strict``. ``timings``, when given, receives seconds per analyzer name (summed over runs).
    """
    chosen = _check_layers(layers)
    if analyzers is None:
        classes: list[type[Analyzer] | Analyzer] = list(analyzer_classes(chosen))
    else:
        classes = [a for a in analyzers if chosen is None or a.layer in chosen]
    overrides = dict(thresholds or {})
    known = {a.name for a in classes} | {c.name for c in analyzer_classes()}
    for name in overrides:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"thresholds for an unknown analyzer {name!r}{hint}",
                fix=f"analyzers: {', '.join(sorted(known))}",
                key=name,
            )
    instances = [a if isinstance(a, Analyzer) else a(overrides.get(a.name)) for a in classes]
    findings: list[Finding] = []
    context = AnalysisContext(parent_run_ids=parent_run_ids)
    try:
        for run_id in run_ids:
            run_version = version if version is not None else _run_version(con, run_id)
            for analyzer in instances:
                started = time.perf_counter()
                try:
                    findings.extend(
                        analyzer.analyze(con, run_id=run_id, version=run_version, context=context)
                    )
                except Exception as exc:
                    if strict:
                        raise
                    findings.append(
                        Finding(
                            layer=analyzer.layer,
                            code=f"{analyzer.layer}.analyzer_failed",
                            severity="warn",
                            title=f"analyzer {analyzer.name} failed on run {run_id}: {type(exc).__name__}",
                            evidence={
                                "analyzer": analyzer.name,
                                "error": str(exc).splitlines()[0] if str(exc) else "",
                            },
                            suggestion="report this; the other analyzers ran",
                            run_id=run_id,
                            version=run_version,
                            harness_version=analyzer.harness_version,
                        )
                    )
                if timings is not None:
                    timings[analyzer.name] = (
                        timings.get(analyzer.name, 0.0) + time.perf_counter() - started
                    )
    finally:
        context.close()
    return sort_findings(findings)
