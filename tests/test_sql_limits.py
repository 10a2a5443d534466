"""Server-side SQL has a time and a memory limit.

`evotree sql`, `evotree.query` and the MCP server's `sql` tool run DuckDB in evotree's own process
(outside any sandbox): a query that would run for minutes or take gigabytes is stopped at the
limit with a clear error (exit 14, code ``query_limit``), both limits set by ``[sql]``.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest

from conftest import Cli, git, make_repo
from evotree.core.config import ConfigError, parse_config
from evotree.harness.query import QueryLimitExceeded, query

#: minutes of work: a sum over 10^12 rows
LONG = "SELECT sum(i * 2) FROM range(1000000000000) t(i)"
#: gigabytes of state: fifty million distinct 40-byte strings
BIG = "SELECT count(DISTINCT i::VARCHAR || repeat('x', 40)) FROM range(50000000) t(i)"


def test_a_long_query_stops_at_the_time_limit(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(QueryLimitExceeded) as err:
        query(tmp_path, LONG, timeout_s=1.0)
    elapsed = time.monotonic() - started
    assert elapsed < 6, f"stopped only after {elapsed:.1f} s"
    assert err.value.code == "query_limit" and err.value.exit_code == 14
    assert "time limit (1 s)" in err.value.message and "[sql] timeout_seconds" in (
        err.value.fix or ""
    )
    # a short query under the same limits answers
    assert query(tmp_path, "SELECT 41 + 1 AS n", timeout_s=1.0).to_pylist() == [{"n": 42}]


def test_a_big_query_stops_at_the_memory_limit(tmp_path: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    started = time.monotonic()
    with pytest.raises(QueryLimitExceeded) as err:
        query(tmp_path, BIG, memory_mb=64, timeout_s=60)
    assert time.monotonic() - started < 30
    assert "memory limit (64 MiB)" in err.value.message and "[sql] memory_mb" in (
        err.value.fix or ""
    )
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 512 * 1024, f"the process grew by {grown // 1024} MiB"
    # the limit is locked in: a query cannot raise it
    with pytest.raises(Exception, match="not allowed|locked|SET"):
        query(tmp_path, "SET memory_limit = '100GB'", memory_mb=64)


def test_limits_come_from_evotree_toml_through_the_cli(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "ws")
    (repo / "evotree.toml").write_text("[sql]\ntimeout_seconds = 1.0\nmemory_mb = 64\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "limits")
    from evotree.core.workspace import init_workspace

    init_workspace(repo)
    started = time.monotonic()
    err = Cli(repo).json("sql", LONG, code=14)["error"]
    assert time.monotonic() - started < 10
    assert err["code"] == "query_limit" and "time limit (1 s)" in err["message"]
    err = Cli(repo).json("sql", BIG, code=14)["error"]
    assert err["code"] == "query_limit" and "memory limit (64 MiB)" in err["message"]
    assert Cli(repo).json("sql", "SELECT 1 AS one")["rows"] == [{"one": 1}]


def test_bad_limits_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="sql.timeout_seconds"):
        parse_config("[sql]\ntimeout_seconds = 0\n")
    with pytest.raises(ConfigError, match="sql.memory_mb"):
        parse_config("[sql]\nmemory_mb = 1\n")
