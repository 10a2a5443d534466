"""The query layer: DuckDB views over every run's evidence, and the questions asked of it.

:func:`connect` opens an in-memory DuckDB connection with five views:

``runs``
    One row per ``<runs_dir>/<run>/run.json``: ``run_id``, ``version``, ``seed``, ``status``
    first (VARCHAR, VARCHAR, BIGINT, VARCHAR; a non-integer seed is null), then every other key
    of any record as a column (union by name; nested objects become structs; a key whose JSON
    type differs between runs is JSON text). A run.json that is not a JSON object
    (half-written) is left out. Built when :func:`connect` runs (a temp table; see
    :func:`_create_runs` for why not ``read_json`` over the files).
``signals``, ``rollouts``, ``evals``
    Exactly the columns and types of :data:`evotree.harness.layout.SCHEMAS`, then ``version`` and
    ``seed`` joined from run.json on ``run_id``. Each is the union of the finished runs'
    ``<run>/<kind>.parquet`` and, for runs with no Parquet file of that kind yet (running, or
    crashed before compaction), their ``evidence/<phase>/<kind>.jsonl`` files read in place,
    with the rules of compaction (:mod:`evotree.harness.compaction`): malformed lines skipped, forged
    hidden-split evals dropped.
``findings``
    ``<findings_dir>/*.jsonl`` with columns version, layer, code, severity, title, run_id (all
    VARCHAR) and ts (DOUBLE); empty without ``findings_dir``.

Each evidence view ``<kind>`` is ``_<kind>`` (the files, schema columns only) left-joined with
run.json's version and seed; internal queries that need neither read ``_<kind>`` directly.
A view with no files behind it still exists, empty, with its columns. The set of files and the
run records are taken when :func:`connect` is called (rows appended to a running run's JSONL
files later are seen): connect again to see runs that started or finished since.

:func:`query` / :func:`query_df` run one SQL statement and return Arrow / pandas;
:func:`dead_group_ratio` is the share of GRPO groups whose rewards are all equal (no learning
signal), the "dead-group ratio" of EvoTrainer. A SQL error raises :class:`QueryError` naming
the problem and the views.

Read-only: :func:`query` and :func:`query_df` (``evotree sql``, ``evotree.query``, the MCP server's
``sql`` tool) open the connection with ``read_only=True``. Once the views exist, DuckDB itself is
locked down: ``allowed_paths`` lists exactly the evidence files behind the views, then
``enable_external_access = false`` (no other file, no network, no extension installed or loaded,
no ``ATTACH``, no ``COPY ... TO``) and ``lock_configuration = true`` (no ``SET`` / ``RESET`` can
undo it). Before anything runs, DuckDB's own parser splits the text into statements
(``extract_statements``): exactly one, of type ``SELECT`` (``WITH``, ``FROM``-first, ``VALUES``,
``DESCRIBE``, ``SUMMARIZE``, ``SHOW`` parse as ``SELECT``), or :class:`QueryNotAllowed`
(exit 14, code ``query_not_allowed``) before execution. A ``SELECT`` that touches a file anyway
(``read_csv_auto('/etc/passwd')``) is refused by DuckDB and raises the same error.

Limits: a read-only query runs under a memory limit (DuckDB's ``memory_limit``, set before the
configuration is locked; no spilling to disk) and a wall-clock limit (a timer calls
``con.interrupt()``); past either it stops with :class:`QueryLimitExceeded` (exit 14, code
``query_limit``) naming the limit and how to raise it (``[sql] timeout_seconds`` /
``memory_mb``; defaults :data:`DEFAULT_TIMEOUT_S`, :data:`DEFAULT_MEMORY_MB`). The MCP server's
``sql`` tool runs in ``evotree serve``, outside any sandbox: these limits are what bound it.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.harness.compaction import (
    all_null_sql,
    duckdb_columns,
    hidden_forged_sql,
    jsonl_files,
    jsonl_select,
    select_list_sql,
    sql_ident,
    sql_string,
)
from evotree.harness.layout import KINDS, RunPaths

__all__ = [
    "DEFAULT_MEMORY_MB",
    "DEFAULT_TIMEOUT_S",
    "QueryError",
    "QueryLimitExceeded",
    "QueryNotAllowed",
    "check_select",
    "sql_limits",
    "VIEWS",
    "RUN_COLUMNS",
    "FINDINGS_COLUMNS",
    "EvidenceSources",
    "scan_runs",
    "connect",
    "query",
    "query_df",
    "dead_group_ratio",
]

VIEWS = ("runs", "signals", "rollouts", "evals", "findings")
#: Columns the ``runs`` view always has (first, in this order), and their DuckDB types.
RUN_COLUMNS = {"run_id": "VARCHAR", "version": "VARCHAR", "seed": "BIGINT", "status": "VARCHAR"}
#: Columns of the ``findings`` view.
FINDINGS_COLUMNS = {
    "version": "VARCHAR",
    "layer": "VARCHAR",
    "code": "VARCHAR",
    "severity": "VARCHAR",
    "title": "VARCHAR",
    "run_id": "VARCHAR",
    "ts": "DOUBLE",
}
#: Columns joined from run.json onto every evidence view.
JOINED_COLUMNS = {"version": "VARCHAR", "seed": "BIGINT"}


class QueryError(EvotreeError):
    """A query over the evidence failed: bad SQL, an unknown view or column, an unreadable file."""

    exit_code = 14
    code = "query_error"


class QueryNotAllowed(QueryError):
    """A query that is not a read-only ``SELECT`` over the evidence views: another statement type
    (``SET``, ``COPY``, ``ATTACH``, ``INSTALL``/``LOAD``, ``PRAGMA``, ``CREATE``, ``INSERT``, ...),
    several statements, or a ``SELECT`` that reads a file or URL (``read_csv_auto``, ``read_parquet``
    of a path outside the evidence, ``httpfs``)."""

    code = "query_not_allowed"


class QueryLimitExceeded(QueryError):
    """A query ran past its wall-clock or memory limit and was stopped (exit 14, code ``query_limit``)."""

    code = "query_limit"


#: Defaults of ``[sql] timeout_seconds`` / ``memory_mb`` (evotree.core.config_execution.SqlSection).
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MEMORY_MB = 2048


# ----------------------------------------------------------------------------- discovery
@dataclass
class EvidenceSources:
    """The files behind the views, as found by :func:`scan_runs`."""

    runs_dir: str
    run_records: list[Path] = field(default_factory=list)
    #: run.json files that are not a JSON object (half-written, garbage): left out of ``runs``
    bad_run_records: list[Path] = field(default_factory=list)
    #: parsed run.json records, in the order of ``run_records``
    records: list[dict[str, Any]] = field(default_factory=list)
    parquet: dict[str, list[Path]] = field(default_factory=lambda: {k: [] for k in KINDS})
    #: kind -> phase directory name -> JSONL files of runs without that kind's Parquet file
    jsonl: dict[str, dict[str, list[Path]]] = field(default_factory=lambda: {k: {} for k in KINDS})


def scan_runs(runs_dir: str | os.PathLike[str]) -> EvidenceSources:
    """Find every run.json, Parquet and (not yet compacted) JSONL file under ``runs_dir``.

    A missing ``runs_dir`` has no runs (nothing has run yet); a file in its place is an error.
    """
    root = Path(runs_dir)
    sources = EvidenceSources(runs_dir=str(root))
    if not root.exists():
        return sources
    if not root.is_dir():
        raise QueryError(
            f"runs directory {root} is not a directory",
            fix="pass the directory that holds one folder per run",
        )
    for run_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        paths = RunPaths(run_dir)
        record = paths.record
        if record.is_file():
            try:
                data = json.loads(record.read_bytes())
            except (OSError, ValueError):
                data = None
            if isinstance(data, dict):
                sources.run_records.append(record)
                sources.records.append(data)
            else:
                sources.bad_run_records.append(record)
        for kind in KINDS:
            parquet = paths.parquet(kind)
            if parquet.is_file():
                sources.parquet[kind].append(parquet)
                continue
            # regular files reached without links only: a phase's link to a host file is never read
            for phase_dir, jsonl in jsonl_files(paths, kind):
                sources.jsonl[kind].setdefault(phase_dir, []).append(jsonl)
    return sources


# ----------------------------------------------------------------------------- views
def _empty_select(columns: dict[str, str]) -> str:
    cols = ", ".join(f"CAST(NULL AS {t}) AS {sql_ident(c)}" for c, t in columns.items())
    return f"SELECT {cols} WHERE false"


def _evidence_sql(kind: str, sources: EvidenceSources) -> str:
    """The raw view of ``kind``: the schema's columns only, Parquet and JSONL files unioned."""
    columns = duckdb_columns(kind)
    typed = ", ".join(f"CAST({sql_ident(c)} AS {t}) AS {sql_ident(c)}" for c, t in columns.items())
    parts = []
    if sources.parquet[kind]:
        files = "[" + ", ".join(sql_string(str(p)) for p in sources.parquet[kind]) + "]"
        # can_have_nan: Parquet min/max statistics leave NaN out; without it DuckDB folds
        # isnan(x) to false on pyarrow-written files (duckdb/duckdb#25521)
        parts.append(f"SELECT {typed} FROM read_parquet({files}, can_have_nan=true)")
    for phase_dir, files in sorted(sources.jsonl[kind].items()):
        where = f"NOT {all_null_sql(kind)}"
        if kind == "evals":
            where += f" AND NOT coalesce({hidden_forged_sql(phase_dir)}, false)"
        parts.append(
            f"SELECT {select_list_sql(kind)} FROM {jsonl_select(kind, files)} WHERE {where}"
        )
    return " UNION ALL ".join(parts) if parts else _empty_select(columns)


def _joined_sql(kind: str) -> str:
    """The public view of ``kind``: the raw view plus version and seed from run.json."""
    joined = ", ".join(f"_m.{sql_ident(c)}" for c in JOINED_COLUMNS)
    return f"SELECT _e.*, {joined} FROM _{kind} AS _e LEFT JOIN _run_meta AS _m ON _e.run_id = _m.run_id"


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if -(2**63) <= number < 2**63 else None


def _str_or_none(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _finite(value: Any) -> Any:
    """``value`` with non-finite floats replaced by None (DuckDB's JSON rejects NaN tokens)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _null_to_json(structure: Any) -> Any:
    """A json_group_structure with "NULL" leaves (always-null keys) made "JSON"."""
    if structure == "NULL":
        return "JSON"
    if isinstance(structure, dict):
        return {k: _null_to_json(v) for k, v in structure.items()}
    if isinstance(structure, list):
        return [_null_to_json(v) for v in structure]
    return structure


def _create_runs(con: Any, sources: EvidenceSources) -> None:
    """``runs``: one row per valid run.json, core columns first (typed), then every other key.

    Built from the records :func:`scan_runs` parsed (DuckDB's own ``read_json`` over many small
    files costs ~1 s per 1,000 runs, at connect and again at every query). SQL column names are
    case-insensitive: a key spelled differently only in case goes to the column of its first
    spelling (``Budget`` then ``budget``: one column ``Budget``); one that collides with a core
    column (``VERSION``) is dropped.
    Values of a key whose JSON type differs between runs are kept as JSON text.
    """

    spelling: dict[str, str] = {c.lower(): c for c in RUN_COLUMNS}
    core: dict[str, list[Any]] = {c: [] for c in RUN_COLUMNS}
    rests: list[str] = []
    for record in sources.records:
        core["run_id"].append(_str_or_none(record.get("run_id")))
        core["version"].append(_str_or_none(record.get("version")))
        core["seed"].append(_int_or_none(record.get("seed")))
        core["status"].append(_str_or_none(record.get("status")))
        rest: dict[str, Any] = {}
        for key, value in record.items():
            if not key or key in RUN_COLUMNS:
                continue
            first = spelling.setdefault(key.lower(), key)
            if first not in RUN_COLUMNS and first not in rest:
                rest[first] = _finite(value)
        rests.append(json.dumps(rest, default=str))
    _temp_table(
        con,
        "_runs_src",
        {
            "run_id": "VARCHAR",
            "version": "VARCHAR",
            "seed": "BIGINT",
            "status": "VARCHAR",
            "_rest": "VARCHAR",
        },
        [
            {"run_id": r, "version": v, "seed": n, "status": st, "_rest": rest}
            for r, v, n, st, rest in zip(
                core["run_id"], core["version"], core["seed"], core["status"], rests
            )
        ],
    )
    try:
        structure = None
        if any(r != "{}" for r in rests):
            ((raw,),) = con.execute(
                "SELECT json_group_structure(_rest::JSON) FROM _runs_src"
            ).fetchall()
            parsed = json.loads(raw) if raw else None
            structure = _null_to_json(parsed) if isinstance(parsed, dict) and parsed else None
        extra = ""
        if structure:
            extra = f", unnest(json_transform(_rest, {sql_string(json.dumps(structure))}))"
        con.execute(
            f"CREATE TEMP TABLE runs AS SELECT run_id, version, seed, status{extra} FROM _runs_src"
        )
    finally:
        con.execute("DROP TABLE IF EXISTS _runs_src")


def _create_run_meta(con: Any, sources: EvidenceSources) -> None:
    """``_run_meta(run_id, version, seed)``: one row per run id, for the evidence views' join."""
    seen: dict[str, tuple[str | None, int | None]] = {}
    for record in sources.records:
        run_id = _str_or_none(record.get("run_id"))
        if run_id is None or run_id in seen:
            continue
        seen[run_id] = (_str_or_none(record.get("version")), _int_or_none(record.get("seed")))
    _temp_table(
        con,
        "_run_meta",
        {"run_id": "VARCHAR", "version": "VARCHAR", "seed": "BIGINT"},
        [{"run_id": r, "version": v, "seed": n} for r, (v, n) in seen.items()],
    )


def _temp_table(con: Any, name: str, columns: dict[str, str], rows: list[dict[str, Any]]) -> None:
    """Create temp table ``name`` with ``columns`` (name -> DuckDB type) holding ``rows``, in one
    statement over a JSON parameter. Registering an Arrow table instead makes duckdb import pandas
    (~0.3 s of every `evotree diagnose`); this takes ~40 ms for 10,000 rows."""
    shape = json.dumps([columns])
    con.execute(
        f"CREATE TEMP TABLE {name} AS SELECT unnest(from_json(?::JSON, {sql_string(shape)}), "
        "recursive := true)",
        [json.dumps(rows)],
    )


def _findings_files(findings_dir: Path | None) -> list[Path]:
    return (
        sorted(Path(findings_dir).glob("*.jsonl"))
        if findings_dir and Path(findings_dir).is_dir()
        else []
    )


def _create_findings_view(con: Any, files: list[Path]) -> None:
    if not files:
        con.execute(f"CREATE VIEW findings AS {_empty_select(FINDINGS_COLUMNS)}")
        return
    columns = (
        "{"
        + ", ".join(f"{sql_string(c)}: {sql_string(t)}" for c, t in FINDINGS_COLUMNS.items())
        + "}"
    )
    listing = "[" + ", ".join(sql_string(str(p)) for p in files) + "]"
    not_all_null = " OR ".join(f"{sql_ident(c)} IS NOT NULL" for c in FINDINGS_COLUMNS)
    con.execute(
        f"CREATE VIEW findings AS SELECT * FROM read_json({listing}, columns={columns}, "
        f"format='newline_delimited', ignore_errors=true) WHERE {not_all_null}"
    )


def _evidence_files(sources: EvidenceSources, findings: list[Path]) -> list[str]:
    """Every file a view reads: the only paths a read-only connection may open."""
    files: list[Path] = [p for kind in KINDS for p in sources.parquet[kind]]
    files += [p for kind in KINDS for group in sources.jsonl[kind].values() for p in group]
    files += findings
    return sorted({str(p) for p in files})


def _limit_memory(con: Any, memory_mb: int) -> None:
    """DuckDB's ``memory_limit`` for this connection, with no spilling to disk (set before the lock)."""
    con.execute(f"SET memory_limit = '{int(memory_mb)}MB'")
    con.execute("SET temp_directory = ''")


def _lock_down(con: Any, files: list[str]) -> None:
    """No file but ``files``, no network, no extension, no configuration change from here on.

    Views are bound when a query runs, so their files must stay readable: ``allowed_paths`` is
    set first (it is honoured only while external access is disabled), then external access is
    disabled and the configuration locked (``SET`` / ``RESET`` of any option then fails).
    """
    listing = "[" + ", ".join(sql_string(f) for f in files) + "]"
    con.execute(f"SET allowed_paths = {listing}")
    con.execute("SET allowed_directories = []")
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def connect(
    runs_dir: str | os.PathLike[str],
    *,
    findings_dir: str | os.PathLike[str] | None = None,
    threads: int | None = None,
    read_only: bool = False,
    hide_judge: bool = False,
    memory_mb: int | None = None,
) -> Any:
    """An in-memory DuckDB connection with the views ``runs``, ``signals``, ``rollouts``,
    ``evals`` and ``findings`` over everything under ``runs_dir`` (see the module doc).

    With ``read_only`` the connection can read the views' files and nothing else, and its
    configuration is locked (:func:`_lock_down`); the analyzers, which create temp tables and
    replace views (backtest), use the default.

    ``hide_judge`` (EvoPolicyGym's visibility boundary, :mod:`evotree.core.visibility`): the
    judge's rows (phase ``eval``: every validation and held-out figure) and run.json's
    ``headline`` are left out; the views then read tables copied when this connects, and a
    read-only connection may open no file at all (the evidence files hold the judge's rows).

    ``memory_mb``: DuckDB's memory limit for the queries that follow (set once the views exist,
    before a read-only connection's configuration is locked; no spilling to disk).
    """
    import duckdb

    sources = scan_runs(runs_dir)
    if hide_judge:
        from evotree.core.visibility import coarsen_run

        # the judge's figures, timing and log tails never enter the views (not redacted after a query)
        sources.records = [
            {k: v for k, v in coarsen_run(r).items() if k != "headline"} for r in sources.records
        ]
    findings = _findings_files(Path(findings_dir) if findings_dir is not None else None)
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET enable_progress_bar = false")
        if threads:
            con.execute(f"SET threads = {int(threads)}")
        _create_run_meta(con, sources)
        _create_runs(con, sources)
        for kind in KINDS:
            con.execute(f"CREATE VIEW _{kind} AS {_evidence_sql(kind, sources)}")
            con.execute(f"CREATE VIEW {kind} AS {_joined_sql(kind)}")
        _create_findings_view(con, findings)
        if hide_judge:
            for kind in KINDS:
                con.execute(
                    f"CREATE TEMP TABLE _shown_{kind} AS SELECT * FROM _{kind} "
                    "WHERE phase IS DISTINCT FROM 'eval'"
                )
                con.execute(f"CREATE OR REPLACE VIEW _{kind} AS SELECT * FROM _shown_{kind}")
            from evotree.core.visibility import HIDDEN_FINDINGS, SHOWN_FINDINGS

            judged = " OR ".join(f"starts_with(code, {sql_string(c)})" for c in HIDDEN_FINDINGS)
            shown = ", ".join(sql_string(c) for c in sorted(SHOWN_FINDINGS))
            con.execute(
                "CREATE TEMP TABLE _shown_findings AS SELECT * FROM findings "
                f"WHERE code IS NULL OR code IN ({shown}) OR NOT ({judged})"
            )
            con.execute("CREATE OR REPLACE VIEW findings AS SELECT * FROM _shown_findings")
        if memory_mb is not None:
            _limit_memory(con, memory_mb)
        if read_only:
            _lock_down(con, [] if hide_judge else _evidence_files(sources, findings))
    except duckdb.Error as exc:
        con.close()
        raise QueryError(
            f"cannot open the evidence under {runs_dir}: {_first_line(exc)}",
            fix="check that the run directories are readable; a corrupt Parquet file "
            "can be rebuilt from its JSONL files by compacting the run again",
        ) from None
    return con


# ----------------------------------------------------------------------------- queries
def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _views_help(con: Any) -> str:
    parts = []
    for view in VIEWS:
        try:
            cols = [row[0] for row in con.execute(f"DESCRIBE {view}").fetchall()]
        except Exception:  # noqa: BLE001, S112 - help text only: leave the view out
            continue
        parts.append(f"{view}({', '.join(cols)})")
    return "; ".join(parts)


_READ_ONLY_FIX = (
    "ask with one SELECT over the views {views} (e.g. SELECT * FROM runs); evotree sql "
    "reads the evidence and nothing else: no other file, no network, no SET, COPY, "
    "ATTACH, INSTALL/LOAD, PRAGMA, CREATE or INSERT"
)


def check_select(con: Any, sql: str) -> None:
    """Refuse ``sql`` unless DuckDB's parser finds exactly one ``SELECT`` statement in it."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise _query_error(con, sql, exc) from None
    fix = _READ_ONLY_FIX.format(views=", ".join(VIEWS))
    if len(statements) != 1:
        raise QueryNotAllowed(
            f"the SQL holds {len(statements)} statements; evotree sql runs exactly one",
            fix=fix,
            sql=sql,
            statements=len(statements),
        )
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        name = getattr(kind, "name", str(kind))
        raise QueryNotAllowed(
            f"{name} statements are not allowed: the evidence is read-only",
            fix=fix,
            sql=sql,
            statement_type=name,
        )


def sql_limits(ws: Any) -> dict[str, Any]:
    """``timeout_s`` and ``memory_mb`` of a workspace's ``[sql]`` (for :func:`query` / :func:`query_df`)."""
    section = ws.config.sql
    return {"timeout_s": float(section.timeout_seconds), "memory_mb": int(section.memory_mb)}


def _query_error(
    con: Any,
    sql: str,
    exc: BaseException,
    *,
    timeout_s: float | None = None,
    memory_mb: int | None = None,
) -> QueryError:
    import duckdb

    if isinstance(exc, duckdb.InterruptException):
        return QueryLimitExceeded(
            f"the query ran past its time limit ({timeout_s:g} s) and was stopped"
            if timeout_s is not None
            else "the query was interrupted",
            fix="narrow it (a WHERE on run_id or version, fewer joins), or raise [sql] timeout_seconds in evotree.toml",
            sql=sql,
            limit="time",
            timeout_seconds=timeout_s,
        )
    if isinstance(exc, duckdb.OutOfMemoryException):
        return QueryLimitExceeded(
            f"the query needed more than its memory limit ({memory_mb} MiB) and was stopped"
            if memory_mb is not None
            else f"the query ran out of memory: {_first_line(exc)}",
            fix="aggregate before joining, select fewer columns or rows, or raise [sql] memory_mb in evotree.toml",
            sql=sql,
            limit="memory",
            memory_mb=memory_mb,
        )

    if isinstance(exc, duckdb.PermissionException):
        return QueryNotAllowed(
            f"the query reaches outside the evidence: {_first_line(exc)}",
            fix=_READ_ONLY_FIX.format(views=", ".join(VIEWS)),
            sql=sql,
            views=list(VIEWS),
        )
    return QueryError(
        f"SQL error: {_first_line(exc)} (views: {', '.join(VIEWS)})",
        fix=f"fix the query; the views and their columns are: {_views_help(con)}",
        sql=sql,
        views=list(VIEWS),
    )


def _limited(
    runs_dir: str | os.PathLike[str],
    sql: str,
    fetch: Any,
    *,
    findings_dir: str | os.PathLike[str] | None,
    hide_judge: bool,
    timeout_s: float | None,
    memory_mb: int | None,
) -> Any:
    """Run ``sql`` read-only and ``fetch`` its relation, under the memory and wall-clock limits."""
    import threading

    import duckdb

    timeout = DEFAULT_TIMEOUT_S if timeout_s is None else float(timeout_s)
    memory = DEFAULT_MEMORY_MB if memory_mb is None else int(memory_mb)
    con = connect(
        runs_dir, findings_dir=findings_dir, read_only=True, hide_judge=hide_judge, memory_mb=memory
    )
    timer = threading.Timer(
        timeout, con.interrupt
    )  # DuckDB checks for an interrupt between vectors
    timer.daemon = True
    timer.start()
    try:
        try:
            relation = con.sql(sql) if _checked(con, sql) else None
            return fetch(relation)
        except duckdb.Error as exc:
            raise _query_error(con, sql, exc, timeout_s=timeout, memory_mb=memory) from None
    finally:
        timer.cancel()
        con.close()


def _checked(con: Any, sql: str) -> bool:
    """:func:`_run`'s checks (not empty, exactly one SELECT) without running anything."""
    if not sql or not sql.strip():
        raise QueryError(
            "the SQL query is empty",
            fix=f"query one of the views {', '.join(VIEWS)}, e.g. SELECT * FROM runs",
        )
    check_select(con, sql)
    return True


def query(
    runs_dir: str | os.PathLike[str],
    sql: str,
    *,
    findings_dir: str | os.PathLike[str] | None = None,
    hide_judge: bool = False,
    timeout_s: float | None = None,
    memory_mb: int | None = None,
) -> Any:
    """Run ``sql`` (one ``SELECT``) over the views of ``runs_dir``, read-only; a ``pyarrow.Table``.

    ``timeout_s`` / ``memory_mb`` (default :data:`DEFAULT_TIMEOUT_S`, :data:`DEFAULT_MEMORY_MB`;
    ``[sql]`` in evotree.toml): past either, :class:`QueryLimitExceeded`."""
    return _limited(
        runs_dir,
        sql,
        lambda relation: relation.to_arrow_table(),
        findings_dir=findings_dir,
        hide_judge=hide_judge,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
    )


def query_df(
    runs_dir: str | os.PathLike[str],
    sql: str,
    *,
    findings_dir: str | os.PathLike[str] | None = None,
    hide_judge: bool = False,
    timeout_s: float | None = None,
    memory_mb: int | None = None,
) -> Any:
    """Run ``sql`` (one ``SELECT``) over the views of ``runs_dir``, read-only; a ``pandas.DataFrame``
    (limits as :func:`query`)."""
    return _limited(
        runs_dir,
        sql,
        lambda relation: relation.df(),
        findings_dir=findings_dir,
        hide_judge=hide_judge,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
    )


def dead_group_ratio(con: Any, run_id: str | None = None, threshold: float = 1e-6) -> float:
    """Fraction of rollout groups whose rewards have population std <= ``threshold``.

    Groups are ``(run_id, step, group_id)`` over the rollouts (of one run with ``run_id``),
    read from ``_rollouts``, the ``rollouts`` view without its run.json join (DuckDB does not
    eliminate an unused LEFT JOIN; skipping it saves ~10 % on 10M rows). Null, NaN and ±inf
    rewards are left out of a group's std; a group with no finite reward is left out entirely.
    A one-sample group has std 0 (dead: no advantage signal). Returns NaN when there is no
    group (nothing to judge).
    """
    import duckdb

    where = "isfinite(reward)"  # false for null, NaN and ±inf
    params: list[Any] = [float(threshold)]
    if run_id is not None:
        where += " AND run_id = ?"
        params.append(str(run_id))
    sql = (
        "SELECT count(*) FILTER (WHERE sd <= ?) AS dead, count(*) AS groups FROM ("
        f"SELECT stddev_pop(reward) AS sd FROM _rollouts WHERE {where} "
        "GROUP BY run_id, step, group_id)"
    )
    try:
        ((dead, groups),) = con.execute(sql, params).fetchall()  # fetchall: leave no open result
    except duckdb.Error as exc:
        raise _query_error(con, sql, exc) from None
    return math.nan if not groups else dead / groups
