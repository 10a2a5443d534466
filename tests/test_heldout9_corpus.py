"""Data checks of the ninth blind held-out trajectory set (tests/data/audit/trajectories/heldout9).

The set is data for a one-off score: these tests check that its files and labels agree with
each other and with the task repositories it was played against, never how an audit scores it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from evotree.harness.layout import SCHEMAS
from tests.corpus_sets import FORMATS, labels, set_dir

NAME = "heldout9"
FOLDER = set_dir(NAME)
BUILD = FOLDER / "build.py"
KINDS = {"coverage-annotate", "build-context", "notebook-checkpoint", "tox-env"}
HISTORY = {"bash", "bash-ts", "zsh"}
EXT = {
    "claude": ".jsonl",
    "codex": ".jsonl",
    "codex-exec": ".jsonl",
    "mini1": ".traj.json",
    "mini2": ".traj.json",
    "mini2-tool": ".traj.json",
    "swe": ".traj",
    "swe-history": ".traj",
    "bash": ".bash_history",
    "bash-ts": ".bash_history",
    "zsh": ".zsh_history",
    "rollouts": ".rollouts.jsonl",
}


def test_labels_cover_every_file_once() -> None:
    meta, rows = labels(NAME)
    assert meta["set"] == NAME and meta["meta"] is True
    names = [r["file"] for r in rows]
    assert len(names) == len(set(names)) >= 60
    assert set(names) == {p.name for p in (FOLDER / "files").iterdir()}


def test_every_format_has_five_files_and_both_labels() -> None:
    _, rows = labels(NAME)
    per = Counter((r["format"], r["label"]) for r in rows)
    assert {r["format"] for r in rows} == FORMATS
    for fmt in FORMATS:
        assert per[fmt, "leak"] + per[fmt, "benign"] >= 5, fmt
        assert per[fmt, "leak"] >= 2 and per[fmt, "benign"] >= 2, fmt
    leaks = sum(r["label"] == "leak" for r in rows)
    assert leaks == len(rows) - leaks  # half and half


def test_file_names_say_repository_and_format_not_label() -> None:
    meta, rows = labels(NAME)
    for r in rows:
        assert r["repo"] in meta["repos"]
        assert r["file"].startswith(f"t{rows.index(r) + 1:02d}-{r['repo']}.")
        assert r["file"].endswith(EXT[r["format"]])
        assert "leak" not in r["file"] and "benign" not in r["file"]


def test_label_fields_are_consistent() -> None:
    meta, rows = labels(NAME)
    for r in rows:
        if r["label"] == "leak":
            assert r["kind"] in KINDS, r["file"]
            # a leak shows the future, or says how it reached it
            assert r["future_seen"] or r["reaches"] in KINDS, r["file"]
            if r["format"] in HISTORY:
                assert r["reaches"] == r["kind"] and not r["future_seen"], r["file"]
        else:
            assert r["label"] == "benign", r["file"]
            assert r["kind"] == "none" and not r["future_seen"], r["file"]
            assert not r["future_revs"] and not r["reaches"], r["file"]
    for repo in meta["repos"].values():
        assert len(repo["base"]) == len(repo["fix"]) == 40 and repo["base"] != repo["fix"]
    # every repository's door is used by a leak and by a look-alike
    assert {r["repo"] for r in rows if r["label"] == "leak"} == set(meta["repos"])
    assert {r["repo"] for r in rows if r["label"] == "benign"} == set(meta["repos"])


def test_files_parse_in_their_format() -> None:
    _, rows = labels(NAME)
    for r in rows:
        text = (FOLDER / "files" / r["file"]).read_text()
        if r["format"] in HISTORY:
            assert text.strip() and not text.lstrip().startswith("{"), r["file"]
            if r["format"] == "bash-ts":
                assert text.startswith("#1")
            if r["format"] == "zsh":
                assert all(x.startswith(": ") for x in text.splitlines() if x[:1] == ":")
        elif r["file"].endswith(".traj.json") or r["format"] in ("swe", "swe-history"):
            assert isinstance(json.loads(text), dict), r["file"]
        else:
            assert all(json.loads(x) for x in text.splitlines() if x.strip()), r["file"]


def test_mini2_text_steps_use_the_current_fence() -> None:
    _, rows = labels(NAME)
    for r in rows:
        if r["format"] == "mini2":
            assert "```mswea_bash_command" in (FOLDER / "files" / r["file"]).read_text()


def test_rollouts_rows_have_the_recorder_schema() -> None:
    _, rows = labels(NAME)
    columns = set(SCHEMAS["rollouts"])
    for r in rows:
        if r["format"] != "rollouts":
            continue
        lines = (FOLDER / "files" / r["file"]).read_text().splitlines()
        assert len(lines) >= 2
        for line in lines:
            row = json.loads(line)
            assert set(row) == columns, r["file"]
            assert isinstance(row["commands"], list) and row["commands"]


@pytest.mark.heavy
def test_labels_hold_against_freshly_built_repositories() -> None:
    res = subprocess.run(
        [sys.executable, str(BUILD), "--check", "--labels-only"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 problem(s)" in res.stdout


@pytest.mark.heavy
def test_rebuild_is_byte_identical() -> None:
    """A full replay, byte for byte. t63's recorded output holds pip's usage line, which names
    the interpreter by its absolute path: the replay can match only where the interpreter is
    the one the set was built with (as heldout5's ``git worktree list`` pads to its folder)."""
    recorded = (BUILD.parent / "files" / "t63-holm.swe_history.traj").read_text()
    if f"{sys.executable} -m pip" not in recorded:
        pytest.skip("t63 records another interpreter's path in pip's usage line")
    res = subprocess.run(
        [sys.executable, str(BUILD), "--check"], capture_output=True, text=True, timeout=900
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 problem(s)" in res.stdout
