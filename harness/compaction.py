"""Compaction of a run's evidence: ``evidence/<phase>/<kind>.jsonl`` -> ``<run_dir>/<kind>.parquet``.

When a run ends, :func:`compact_run` reads every phase's JSONL file of each kind in
:data:`evotree.harness.layout.KINDS` and writes one zstd Parquet file per kind with exactly the columns
and types of :func:`evotree.harness.layout.arrow_schema` (an empty file with that schema when there are
no rows, so the query views always bind). The JSONL files stay, as the raw record, unless
``keep_jsonl=False``.

What is read, and what is not:

* **Malformed lines are counted and skipped, never fatal.** A line is malformed when it is not
  a JSON object holding at least one column of the kind: a truncated last line after a crash
  (SIGKILL mid-write), garbage, ``[1, 2]``, ``{}``, invalid UTF-8. Blank lines are ignored.
  A value that cannot be read as its column's type (``"step": "abc"``) becomes null; the rest
  of the row is kept (DuckDB's lenient JSON reader; ``1.5`` into an integer column rounds).
* **Forged hidden scores are rejected.** Rows of kind ``evals`` whose ``split`` is in
  :data:`evotree.harness.layout.HIDDEN_SPLITS` are kept only from ``evidence/eval/evals.jsonl`` *and*
  with ``phase == "eval"``: the train phase runs the candidate's own code, which can write files
  directly and bypass the recorder's check. Everything else is dropped and counted in
  :attr:`CompactionResult.rejected_hidden`.
* **Links and special files are never followed**. The evidence folders are written by
  the phase, which can leave a symbolic link to a host file it cannot see itself, a linked
  folder or a FIFO at ``evidence/<phase>/<kind>.jsonl``; compaction runs outside the sandbox.
  Each file is opened through :mod:`evotree.harness.safe_files` (no link on the way,
  ``O_NONBLOCK``, a regular file by ``fstat``) and DuckDB reads that open descriptor
  (``/proc/self/fd/N``), never the path again. Anything else is not read and is listed in
  :attr:`CompactionResult.refused` (path -> what it is), which the run record keeps.
* **Atomic.** Each Parquet file is written to a temp name in the run directory, fsynced, and
  renamed over the target with :func:`os.replace`; a crash leaves the old file (or none) and at
  most a stray ``.<kind>.parquet.tmp-*`` file, which the next compaction removes.

Speed: JSON is parsed once by DuckDB's ``read_json`` (explicit columns, ``ignore_errors``; it
yields one row per non-blank line, all-null for a malformed one) into a temp table with the
schema's types, where each file's malformed and forged rows are counted; DuckDB's own Parquet
writer then writes the kept rows (``COPY``). Neither pyarrow nor numpy is loaded: finishing a run
pays for DuckDB's import only (``bench/bench_compaction.py`` for 1,000,000 rollout rows).
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.harness.layout import HIDDEN_SPLITS, KINDS, SCHEMAS, RunPaths
from evotree.harness.safe_files import UnsafeFile, fd_path, open_regular, regular_files_in

__all__ = [
    "CompactionError",
    "CompactionResult",
    "compact_run",
    "duckdb_type",
    "duckdb_columns",
    "sql_string",
    "sql_ident",
    "jsonl_select",
    "select_list_sql",
    "all_null_sql",
    "hidden_forged_sql",
    "jsonl_files",
]

#: layout type name -> DuckDB type
_DUCKDB_TYPES = {
    "str": "VARCHAR",
    "int": "BIGINT",
    "float": "DOUBLE",
    "bool": "BOOLEAN",
    "list[str]": "VARCHAR[]",
}

#: Rows per Parquet row group (DuckDB's ``ROW_GROUP_SIZE``).
_BATCH_ROWS = 256 * 1024

# row status computed in SQL
_OK, _MALFORMED, _HIDDEN = 0, 1, 2
#: the status of the temp table's all-null row (see _compact_files)
_SENTINEL = -1


class CompactionError(EvotreeError):
    """Compaction could not read a run directory or write its Parquet files."""

    exit_code = 19
    code = "compaction_error"


@dataclass
class CompactionResult:
    """What :func:`compact_run` did to one run directory.

    ``rows``: rows written per kind. ``malformed``: skipped lines per JSONL file (path relative
    to the run directory, every file read is listed, 0 included). ``rejected_hidden``: hidden-
    split eval rows dropped per file (only files with rejections are listed). ``parquet``: the
    file written per kind. ``removed_jsonl``: JSONL files deleted (``keep_jsonl=False``).
    ``refused``: evidence paths that are links, FIFOs or other non-regular files (or lie below a
    linked folder): never read (path relative to the run directory -> what was found).
    """

    run_dir: str
    rows: dict[str, int] = field(default_factory=dict)
    malformed: dict[str, int] = field(default_factory=dict)
    rejected_hidden: dict[str, int] = field(default_factory=dict)
    parquet: dict[str, str] = field(default_factory=dict)
    removed_jsonl: list[str] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def malformed_total(self) -> int:
        return sum(self.malformed.values())

    @property
    def rejected_hidden_total(self) -> int:
        return sum(self.rejected_hidden.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "run_dir": self.run_dir,
            "rows": dict(self.rows),
            "malformed": dict(self.malformed),
            "malformed_total": self.malformed_total,
            "rejected_hidden": dict(self.rejected_hidden),
            "rejected_hidden_total": self.rejected_hidden_total,
            "parquet": dict(self.parquet),
            "removed_jsonl": list(self.removed_jsonl),
            "refused": dict(self.refused),
            "seconds": round(self.seconds, 3),
        }


# ----------------------------------------------------------------------------- SQL helpers
def duckdb_type(type_name: str) -> str:
    """The DuckDB type of a :data:`evotree.harness.layout.SCHEMAS` type name (``"int"`` -> ``BIGINT``)."""
    return _DUCKDB_TYPES[type_name]


def duckdb_columns(kind: str) -> dict[str, str]:
    """Column -> DuckDB type of an evidence kind, in schema order."""
    return {name: duckdb_type(t) for name, t in SCHEMAS[kind].items()}


def sql_string(text: str) -> str:
    """``text`` as a SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


def sql_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def jsonl_select(kind: str, paths: list[Path] | list[str], *, extra: str = "") -> str:
    """A ``read_json`` table expression over JSONL files of ``kind`` with the schema's columns.

    Lenient: ``ignore_errors`` turns a malformed line into an all-null row (filter it out with
    :func:`all_null_sql`). ``extra`` is appended to the argument list (e.g. ``filename=true``).
    """
    columns = (
        "{"
        + ", ".join(f"{sql_string(c)}: {sql_string(t)}" for c, t in duckdb_columns(kind).items())
        + "}"
    )
    files = "[" + ", ".join(sql_string(str(p)) for p in paths) + "]"
    args = (
        f"{files}, columns={columns}, format='newline_delimited', ignore_errors=true, "
        f"maximum_object_size=268435456"
    )
    return f"read_json({args}{', ' + extra if extra else ''})"


def select_list_sql(kind: str) -> str:
    """The schema's columns of a JSONL scan, with non-finite floats made null and flagged.

    A hand-written line may hold ``NaN``/``Infinity`` tokens (DuckDB's reader accepts them);
    like the recorder, the value becomes null and ``nonfinite`` true. (NaN must not reach
    Parquet: DuckDB trusts Parquet min/max statistics, which leave NaN out, and folds
    ``isnan(x)`` to false on such files; duckdb/duckdb#25521.)
    """
    floats = [c for c, t in SCHEMAS[kind].items() if t == "float"]
    bad = " OR ".join(
        f"({sql_ident(c)} IS NOT NULL AND NOT isfinite({sql_ident(c)}))" for c in floats
    )
    out = []
    for column, type_name in SCHEMAS[kind].items():
        ident = sql_ident(column)
        if type_name == "float":
            out.append(f"CASE WHEN isfinite({ident}) THEN {ident} END AS {ident}")
        elif column == "nonfinite" and bad:
            out.append(f"CASE WHEN {bad} THEN true ELSE {ident} END AS {ident}")
        else:
            out.append(ident)
    return ", ".join(out)


def all_null_sql(kind: str) -> str:
    """SQL that is true for a row with every column null: a malformed line (see module doc)."""
    return "(" + " AND ".join(f"{sql_ident(c)} IS NULL" for c in SCHEMAS[kind]) + ")"


def hidden_forged_sql(phase_dir: str) -> str:
    """SQL true for an ``evals`` row from ``evidence/<phase_dir>/`` that must be rejected."""
    hidden = ", ".join(sql_string(s) for s in HIDDEN_SPLITS)
    if phase_dir != "eval":
        return f"(split IN ({hidden}))"
    return f"(split IN ({hidden}) AND phase IS DISTINCT FROM 'eval')"


# ----------------------------------------------------------------------------- compaction
def _jsonl_files(
    paths: RunPaths, kind: str, refused: dict[str, str] | None = None
) -> list[tuple[str, Path]]:
    """(phase directory name, path) of every ``evidence/<phase>/<kind>.jsonl`` that is a regular
    file reached without links, sorted. Anything else at those names (a link, a linked phase
    folder, a FIFO) goes into ``refused`` (relative path -> what it is), never into the list."""
    refused = {} if refused is None else refused
    try:
        _, others = regular_files_in(paths.root, "evidence")
        phases = sorted(
            e.name for e in os.scandir(paths.root / "evidence") if e.is_dir(follow_symlinks=False)
        )
    except FileNotFoundError:
        return []
    except (UnsafeFile, NotADirectoryError) as exc:
        refused["evidence"] = getattr(exc, "reason", "not a folder")
        return []
    for name, what in others.items():  # a phase folder replaced by a link: nothing under it is read
        refused.setdefault(f"evidence/{name}", what)
    found = []
    for phase in phases:
        try:
            files, odd = regular_files_in(paths.root, f"evidence/{phase}")
        except (UnsafeFile, OSError) as exc:
            refused[f"evidence/{phase}"] = getattr(exc, "reason", str(exc))
            continue
        name = f"{kind}.jsonl"
        if name in odd:
            refused[f"evidence/{phase}/{name}"] = odd[name]
        elif name in files:
            found.append((phase, paths.root / "evidence" / phase / name))
    return found


def jsonl_files(paths: RunPaths, kind: str) -> list[tuple[str, Path]]:
    """(phase, path) of every ``evidence/<phase>/<kind>.jsonl`` of a run that is a regular file
    reached without links (the readers of not-yet-compacted evidence: ``evotree sql``)."""
    return _jsonl_files(paths, kind, {})


def _connect() -> Any:
    import duckdb

    return _configure(duckdb.connect(":memory:"))


def _configure(con: Any) -> Any:
    con.execute("SET preserve_insertion_order = true")
    con.execute("SET enable_progress_bar = false")
    return con


def _copy_parquet_atomic(con: Any, target: Path, query: str) -> None:
    """Write the rows of ``query`` to ``target`` as zstd Parquet (DuckDB's writer), atomically."""
    import duckdb

    tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        try:
            con.execute(
                f"COPY ({query}) TO {sql_string(str(tmp))} "
                f"(FORMAT PARQUET, COMPRESSION ZSTD, ROW_GROUP_SIZE {_BATCH_ROWS})"
            )
        except duckdb.IOException as exc:  # the file could not be written: said like an OSError
            raise OSError(str(exc)) from None
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable
        fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def _compact_kind(con: Any, paths: RunPaths, kind: str, result: CompactionResult) -> None:
    files: list[tuple[str, str]] = []  # (phase, /proc/self/fd/N of the file checked and held open)
    rel: list[str] = []
    held: list[int] = []
    try:
        for phase_dir, path in _jsonl_files(paths, kind, result.refused):
            name = str(path.relative_to(paths.root))
            try:  # opened once, checked on the descriptor; DuckDB reads that descriptor
                fd = open_regular(paths.root, name)
            except UnsafeFile as exc:  # swapped for a link or a FIFO since it was listed
                result.refused[name] = exc.reason
                continue
            except FileNotFoundError:
                continue
            held.append(fd)
            files.append((phase_dir, fd_path(fd)))
            rel.append(name)
        _compact_files(con, paths, kind, result, files, rel)
    finally:
        for fd in held:
            os.close(fd)


def _compact_files(
    con: Any,
    paths: RunPaths,
    kind: str,
    result: CompactionResult,
    files: list[tuple[str, str]],
    rel: list[str],
) -> None:
    """Read ``files`` (one pass over the JSON) into a typed temp table, count each file's
    malformed and forged rows there, and write the kept rows to the kind's Parquet file.

    DuckDB alone reads and writes: no pyarrow (and no numpy below it) is loaded to finish a
    run. The table's columns are declared with the schema's types and hold one all-null row
    that is never written, so every Parquet column is optional and the file has exactly
    :func:`evotree.harness.layout.arrow_schema`'s columns, types and nullability.
    """
    table = sql_ident(f"_compact_{kind}")
    columns = ", ".join(f"{sql_ident(c)} {t}" for c, t in duckdb_columns(kind).items())
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} ({columns}, _file INTEGER, _status INTEGER)")
    try:
        # one all-null row, never written: DuckDB writes a column as Parquet REQUIRED (non-null
        # in Arrow) when the table's statistics show no null in it, whatever the declared type
        con.execute(f"INSERT INTO {table} (_file, _status) VALUES (-1, {_SENTINEL})")
        selects = []
        for index, (phase_dir, path) in enumerate(files):
            status = f"CASE WHEN {all_null_sql(kind)} THEN {_MALFORMED}"
            if kind == "evals":
                status += f" WHEN {hidden_forged_sql(phase_dir)} THEN {_HIDDEN}"
            status += f" ELSE {_OK} END"
            # a row's run and phase are where its file lies, whatever the row claims: a candidate
            # cannot write evidence under another run's id or pass train rows off as the judge's
            selects.append(
                f"SELECT * REPLACE ({sql_string(paths.root.name)} AS run_id, "
                f"{sql_string(phase_dir)} AS phase) FROM ("
                f"SELECT {select_list_sql(kind)}, {index} AS _file, {status} AS _status "
                f"FROM {jsonl_select(kind, [path])})"
            )
        if selects:
            con.execute(f"INSERT INTO {table} " + " UNION ALL ".join(selects))
        counts = {
            (int(f), int(s)): int(n)
            for f, s, n in con.execute(
                f"SELECT _file, _status, count(*) FROM {table} GROUP BY _file, _status"
            ).fetchall()
        }
        target = paths.parquet(kind)
        names = ", ".join(sql_ident(c) for c in SCHEMAS[kind])
        try:
            _copy_parquet_atomic(con, target, f"SELECT {names} FROM {table} WHERE _status = {_OK}")
        except OSError as exc:
            raise CompactionError(
                f"cannot write {target}: {exc.strerror or exc}",
                fix="check the permissions and free space of the runs directory",
            ) from None
    finally:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    written = sum(n for (_, status), n in counts.items() if status == _OK)
    result.rows[kind] = written
    result.parquet[kind] = str(target)
    for index, name in enumerate(rel):
        result.malformed[name] = counts.get((index, _MALFORMED), 0)
        if counts.get((index, _HIDDEN)):
            result.rejected_hidden[name] = counts[(index, _HIDDEN)]


def compact_run(
    run_dir: str | os.PathLike[str], *, keep_jsonl: bool = True, con: Any | None = None
) -> CompactionResult:
    """Compact every evidence kind of the run at ``run_dir`` into ``<run_dir>/<kind>.parquet``.

    Reads all phases; skips and counts malformed lines; drops and counts forged hidden-split
    evals; writes each file atomically (see the module doc). Re-running it is safe: the Parquet
    files are rebuilt from the JSONL files. With ``keep_jsonl=False`` the JSONL files are
    deleted once every Parquet file is in place. ``con``: an open in-memory DuckDB connection
    to work in (the caller's, kept open: finishing a run reads the headline from it next);
    None: one of its own.
    """
    started = time.perf_counter()
    paths = RunPaths(Path(run_dir))
    if not paths.root.is_dir():
        raise CompactionError(
            f"run directory {paths.root} does not exist (or is not a directory)",
            fix="pass the directory of one run: <runs_dir>/<run_id>",
        )
    for stray in paths.root.glob(".*.parquet.tmp-*"):  # left by a compaction that crashed
        stray.unlink(missing_ok=True)
    result = CompactionResult(run_dir=str(paths.root))
    own = con is None
    con = _connect() if con is None else _configure(con)
    try:
        for kind in KINDS:
            _compact_kind(con, paths, kind, result)
    except EvotreeError:
        raise
    except Exception as exc:  # duckdb / Arrow errors: an evidence file could not be read
        if type(exc).__module__.split(".")[0] not in (
            "duckdb",
            "_duckdb",
            "pyarrow",
        ) and not isinstance(exc, OSError):
            raise
        raise CompactionError(
            f"cannot compact {paths.root}: {exc}", fix="check that the evidence files are readable"
        ) from None
    finally:
        if own:
            con.close()
    if not keep_jsonl:
        for kind in KINDS:
            for _, path in _jsonl_files(paths, kind, {}):
                path.unlink(missing_ok=True)
                result.removed_jsonl.append(str(path.relative_to(paths.root)))
    result.seconds = time.perf_counter() - started
    return result
