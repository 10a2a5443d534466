"""The trace's argv judge (``harness/audit/trace_argv.py``, issue 29): git describe's spelling
``<anything>-g<hex>`` judged as the abbreviation it names. No sandbox needed; the red team's
attacks are ``tests/test_redteam_trace_resolved_redteam.py`` (V, W)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from test_redteam_gym_trace import _task_repo

from evotree.harness.audit.trace import judge_git_spellings, read_trace_rows, seal_rows
from evotree.harness.audit.trajectories import audit_trajectories

_DESCRIBED = [
    (["git", "log", "-p", "-1", "x-g1a2b3c4d"], ["git", "log", "-p", "-1", "1a2b3c4d"]),
    (["git", "checkout", "x-g1a2b", "--", "a.txt"], ["git", "checkout", "1a2b", "--", "a.txt"]),
    (["git", "show", "v1.0-3-g1A2B3C4D^0:a.txt"], ["git", "show", "1a2b3c4d^0:a.txt"]),
    (["git", "log", "^HEAD", "HEAD..a-b-gbeef~2"], ["git", "log", "^HEAD", "HEAD..beef~2"]),
    (["git", "-C", "w", "diff", "x-gcafe^{tree}"], ["git", "-C", "w", "diff", "cafe^{tree}"]),
    (["git", "checkout", "-", "x-gcafe"], ["git", "checkout", "@{-1}", "cafe"]),
]
_AS_RUN = [
    ["git", "checkout", "--", "x-g1a2b3c4d"],  # a path
    ["git", "commit", "-m", "fix-g1a2b3c4d"],  # an option's value
    ["git", "log", "x-gabc"],  # 3 hex digits: git wants 4
    ["git", "log", "x-G1a2b3c4d"],  # git reads '-g' only
    ["git", "show", ":x-g1a2b3c4d"],  # the index
]


@pytest.mark.parametrize(("run", "judged"), _DESCRIBED, ids=[" ".join(r) for r, _ in _DESCRIBED])
def test_a_describe_spelling_is_judged_as_its_abbreviation(
    run: list[str], judged: list[str]
) -> None:
    (row,) = judge_git_spellings([{"kind": "exec", "argv": list(run)}])
    assert row["argv"] == judged and row["argv_run"] == run and "describe" in row["judged_as"]


@pytest.mark.parametrize("run", _AS_RUN, ids=[" ".join(r) for r in _AS_RUN])
def test_words_that_are_no_describe_spelling_are_left_as_run(run: list[str]) -> None:
    (row,) = judge_git_spellings([{"kind": "exec", "argv": list(run)}])
    assert row["argv"] == run and "judged_as" not in row


def _commit(tmp_path: Path, rev: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(tmp_path / "work"), "rev-parse", rev],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def test_the_audit_flags_the_future_named_by_a_describe_spelling(tmp_path: Path) -> None:
    """(V) ``git log -p -1 x-g<8 hex>`` of the future: a finding; of the base: none."""
    work = tmp_path / "work"
    base = _task_repo(work)
    future = _commit(tmp_path, "future")
    for rev, flagged in ((f"x-g{future[:8]}", True), (f"x-g{base[:8]}", False)):
        trace = tmp_path / "exec_trace.jsonl"
        trace.write_text(seal_rows([{"kind": "exec", "argv": ["git", "log", "-p", "-1", rev]}]))
        (row,) = read_trace_rows(trace.read_text())
        assert row["argv_run"][-1] == rev
        audit = audit_trajectories([trace], repo=work, base=base)
        assert audit.passed is not flagged, [h.rule for v in audit.verdicts for h in v.hits]
