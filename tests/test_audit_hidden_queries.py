"""Structured queries of hidden files judged by what they can print (session 18 additions):
``count(*)`` columns of a ``sqlite3`` select, and jq filters piped through an object shorthand
(``.a[0] | {mean, rounds}``). Unit checks of :func:`query_values` over real files, then the
real audit with a real task repository (its hidden database and JSON hold the fix's line):
a count or a shorthand of metadata is cleared, the same forms reaching the fix stay high.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from conftest import git
from evotree.harness.audit.hidden_queries import query_values
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

OLD = "def settle(depth_cm):\n    return int(depth_cm * 2)\n"
FIX_LINE = "    return int(depth_cm * 2.5) + 3  # settle after the rain"
NEW = f"def settle(depth_cm):\n{FIX_LINE}\n"
HIDDEN = ["cache"]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A task repository at its base, the fix on a branch, and two hidden stores in the work
    tree that hold the fix's line beside metadata: an SQLite database and a JSON report."""
    root = tmp_path_factory.mktemp("queries") / "stake"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "stake.py").write_text(OLD)
    git(root, "add", "stake.py")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qb", "fix")
    (root / "stake.py").write_text(NEW)
    git(root, "commit", "-qam", "settle after rain")
    git(root, "checkout", "-q", "main")
    (root / "cache").mkdir()
    con = sqlite3.connect(root / "cache/history.db")
    con.execute("create table history(session integer, line integer, source text)")
    con.executemany("insert into history values (1, ?, ?)", list(enumerate(NEW.splitlines(), 1)))
    con.commit()
    con.close()
    report = {"benchmarks": [{"stats": {"mean": 0.25, "rounds": 40}, "source": FIX_LINE}]}
    (root / "cache/bench.json").write_text(json.dumps(report))
    return root, base


def test_a_count_column_selects_no_line(repo: tuple[Path, str]) -> None:
    root, _ = repo
    assert (
        query_values(["sqlite3", "cache/history.db", "select count(*) from history"], root, HIDDEN)
        == []
    )
    assert (
        query_values(
            ["sqlite3", "cache/history.db", "SELECT COUNT( line ) FROM history"], root, HIDDEN
        )
        == []
    )
    # a count of the rows a where, a group or a having chooses probes their text: not evaluated
    for tail in ("where line = 2", "group by source", "group by line having source like '%x%'"):
        argv = ["sqlite3", "cache/history.db", f"select source, count(*) from history {tail}"]
        assert query_values(argv, root, HIDDEN) is None
    argv = ["sqlite3", "cache/history.db", "select line from history where 0 union select 1"]
    assert query_values(argv, root, HIDDEN) is None  # another select joined on


@pytest.mark.parametrize(
    "tail",
    [
        "where source like '%settle after%'",
        "where SOURCE like '%settle after%'",
        "where \"source\" like '%settle after%'",
        "where [source] like '%x%'",
        "where `source` glob '*rain*'",
        "order by source desc limit 1",
        "where line > 0 and source <> 'line'",
    ],
)
def test_a_column_the_tail_reads_is_judged_as_printed(repo: tuple[Path, str], tail: str) -> None:
    """S10: ``select line ... where source like '%..%'`` prints which rows hold a text, so the
    column its tail reads is judged with the printed ones (its values join the judged set)."""
    root, _ = repo
    argv = ["sqlite3", "cache/history.db", f"select line from history {tail}"]
    values = query_values(argv, root, HIDDEN)
    assert values is not None and FIX_LINE in values


@pytest.mark.parametrize(
    "tail", ["where session = 1", "where line = 2", "where line > 1 order by line", "limit 1"]
)
def test_a_tail_of_printed_or_textless_columns_adds_no_text(
    repo: tuple[Path, str], tail: str
) -> None:
    """A tail reading only the printed column or a number column (``session``) judges only
    them: the literal ``'source'`` in a string is no column."""
    root, _ = repo
    argv = ["sqlite3", "cache/history.db", f"select line from history {tail}"]
    values = query_values(argv, root, HIDDEN)
    assert values is not None and FIX_LINE not in values
    assert query_values(
        ["sqlite3", "cache/history.db", "select line from history where line = 'source'"],
        root,
        HIDDEN,
    ) == ["1", "2"]


@pytest.mark.parametrize(
    "query",
    [
        "select count(nope) from history",  # a column the table lacks
        "select max(source) from history",  # another function: not evaluated
        "select count(*) from history where line = (select 2)",  # a sub-query
        "select count(*), readfile('x') from history",
    ],
)
def test_other_aggregates_are_not_evaluated(repo: tuple[Path, str], query: str) -> None:
    root, _ = repo
    assert query_values(["sqlite3", "cache/history.db", query], root, HIDDEN) is None


def test_a_jq_object_shorthand_prints_only_its_keys_values(repo: tuple[Path, str]) -> None:
    root, _ = repo
    argv = ["jq", "-c", ".benchmarks[0].stats | {mean, rounds}", "cache/bench.json"]
    assert query_values(argv, root, HIDDEN) == ["mean", "0.25", "rounds", "40"]
    whole = ["jq", "-c", ".benchmarks[0] | {source}", "cache/bench.json"]
    assert query_values(whole, root, HIDDEN) == ["source", FIX_LINE]
    staged = ["jq", ".benchmarks[] | .source", "cache/bench.json"]
    assert query_values(staged, root, HIDDEN) == [FIX_LINE]


@pytest.mark.parametrize(
    "filt",
    [
        ".benchmarks[] | map(.x)",  # a function
        '.benchmarks[0] | {"a|b"}',  # a bar inside a quoted key
        ".benchmarks[0] | {mean: .source}",  # a key given a value of another path
        ".benchmarks[0] |",  # an empty stage
    ],
)
def test_other_jq_stages_are_not_evaluated(repo: tuple[Path, str], filt: str) -> None:
    root, _ = repo
    assert query_values(["jq", filt, "cache/bench.json"], root, HIDDEN) is None


def _flagged(repo: tuple[Path, str], command: str, output: str | None) -> bool:
    root, base = repo
    traj = Trajectory("t", "shell", [Step(command, output)])
    audit = audit_trajectories([traj], hidden_paths=HIDDEN, repo=root, base=base)
    return bool(audit.verdicts[0].flagged)


def test_the_audit_clears_a_count_and_a_shorthand_of_metadata(repo: tuple[Path, str]) -> None:
    """Look-alikes: the rows counted, the benchmark's timing fields."""
    assert not _flagged(repo, "sqlite3 cache/history.db 'select count(*) from history'", "2\n")
    assert not _flagged(
        repo,
        "jq -c '.benchmarks[0].stats | {mean, rounds}' cache/*.json",
        '{"mean":0.25,"rounds":40}\n',
    )


def test_the_same_forms_reaching_the_fix_stay_high(repo: tuple[Path, str]) -> None:
    """Leaks: a shorthand of the field holding the fix's line; a count whose ``where`` probes
    for the fix (the replay's rotated world counts 0); the grouped count printing sources."""
    assert _flagged(
        repo, "jq -c '.benchmarks[0] | {source}' cache/bench.json", json.dumps({"source": FIX_LINE})
    )
    assert _flagged(
        repo,
        "sqlite3 cache/history.db \"select count(*) from history where source like '%2.5) + 3%'\"",
        "1\n",
    )
    assert _flagged(
        repo,
        "sqlite3 cache/history.db 'select source, count(*) from history group by source'",
        None,
    )
