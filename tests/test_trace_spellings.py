"""The git spellings of a runtime trace the audit judges: what names no revision, judged as what
it reads (git's server side, ``-``, a revision-less merge/rebase/cherry). No sandbox needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evotree.harness.audit.trace import identify, judge_git_spellings, read_trace_rows, seal_rows
from evotree.harness.audit.trajectories import audit_trajectories

_JUDGED = [
    (["git", "upload-pack", "."], ["git", "log", "--all"]),
    (["git", "-C", "x", "receive-pack", "."], ["git", "log", "--all"]),
    (["git", "upload-archive", "."], ["git", "log", "--all"]),
    (["git", "daemon", "--export-all"], ["git", "log", "--all"]),
    (["/usr/lib/git-core/git-http-backend"], ["git", "log", "--all"]),  # a program of its own
    (["git", "checkout", "-q", "-"], ["git", "checkout", "-q", "@{-1}"]),
    (["git", "checkout", "-", "--", "a.txt"], ["git", "checkout", "@{-1}", "--", "a.txt"]),
    (["git", "switch", "-"], ["git", "switch", "@{-1}"]),
    (["git", "cherry-pick", "-"], ["git", "cherry-pick", "@{-1}"]),
    (["git", "worktree", "add", "../w", "-"], ["git", "worktree", "add", "../w", "@{-1}"]),
    (["git", "merge", "-q", "--ff-only"], ["git", "merge", "-q", "--ff-only", "@{u}"]),
    (["git", "merge", "-m", "msg"], ["git", "merge", "-m", "msg", "@{u}"]),
    (["git", "rebase"], ["git", "rebase", "@{u}"]),
    (["git", "rebase", "--onto", "main"], ["git", "rebase", "--onto", "main", "@{u}"]),
    (["git", "cherry", "-v"], ["git", "cherry", "-v", "@{u}"]),
]
_AS_RUN = [
    ["git", "checkout", "--", "-"],  # a file named '-'
    ["git", "merge", "--abort"],
    ["git", "rebase", "--continue"],
    ["git", "rebase", "-i", "HEAD~2"],
    ["git", "rebase", "--root"],
    ["git", "log", "-p"],
    ["git", "merge", "main"],
    ["git-lfs", "pull"],  # not git's server side
    ["cat", "-"],
]


@pytest.mark.parametrize(("run", "judged"), _JUDGED, ids=[" ".join(r) for r, _ in _JUDGED])
def test_a_spelling_that_names_no_revision_is_judged_as_what_it_reads(
    run: list[str], judged: list[str]
) -> None:
    (row,) = judge_git_spellings([{"kind": "exec", "argv": list(run)}])
    assert row["argv"] == judged and row["argv_run"] == run and row["judged_as"]


@pytest.mark.parametrize("run", _AS_RUN, ids=[" ".join(r) for r in _AS_RUN])
def test_other_spellings_are_left_as_run(run: list[str]) -> None:
    (row,) = judge_git_spellings([{"kind": "exec", "argv": list(run)}])
    assert row["argv"] == run and "judged_as" not in row


def test_rows_that_are_not_git_calls_or_are_malformed_pass_through() -> None:
    rows = [
        {"kind": "connect", "address": "1.1.1.1"},
        {"kind": "exec", "argv": []},
        {"kind": "exec"},
        {"kind": "exec", "argv": [7, None]},
        {"kind": "open", "path": "x"},
    ]
    assert judge_git_spellings([dict(r) for r in rows]) == rows


def test_a_dashed_name_keeps_its_subcommand_when_identified_by_content() -> None:
    """git-upload-pack is git (a link to it, or a copy): git runs the subcommand its own name
    says, so the identified row reads ``git upload-pack``, then judged as reading every ref."""
    rows = [
        {
            "kind": "exec",
            "argv": ["/tmp/x/git-upload-pack", "."],
            "exe": "/tmp/x/git-upload-pack",
            "exe_sha256": "G",
        },
        {
            "kind": "exec",
            "argv": ["upload-pack", "."],
            "exe": "/tmp/upload-pack",
            "exe_sha256": "G",
        },
    ]
    identify(rows, frozenset({"G"}))
    assert rows[0]["argv"] == ["git", "upload-pack", "."]
    assert rows[1]["argv"] == ["git", "."]  # git runs a copy named upload-pack as plain git
    assert judge_git_spellings(rows)[0]["argv"] == ["git", "log", "--all"]


def test_the_audit_flags_a_server_read_from_a_sealed_trace(tmp_path: Path) -> None:
    trace = tmp_path / "exec_trace.jsonl"
    trace.write_text(seal_rows([{"kind": "exec", "argv": ["git", "upload-pack", "."], "exit": 0}]))
    (row,) = read_trace_rows(trace.read_text())
    assert row["argv_run"] == ["git", "upload-pack", "."]
    audit = audit_trajectories([trace])
    assert not audit.passed
    hits = [h for v in audit.verdicts for h in v.hits]
    assert any(h.code == "audit.git_history_leak" and h.severity == "high" for h in hits), hits
    # the file itself keeps what ran: the judged spelling is made when it is read
    assert json.loads(trace.read_text().splitlines()[0])["argv"] == ["git", "upload-pack", "."]
