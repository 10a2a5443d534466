"""Data checks of the tenth held-out trajectory set (tests/data/audit/trajectories/heldout10).

The set is written blind for the leak audit and scored once by hand; no audit runs here. The
fast checks read the committed labels and files only; the two that build the task repositories
(labels against fresh repositories, a byte-for-byte replay) are heavy.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest
from tests.corpus_sets import FORMATS, labels, set_dir, set_module

from evotree.harness.layout import SCHEMAS

NAME = "heldout10"
HERE = set_dir(NAME)
META, ROWS = labels(NAME)
REPOS = ("corrie", "loch", "moraine", "esker", "drumlin")
HISTORIES = ("bash", "bash-ts", "zsh")


def _build_module() -> ModuleType:
    """This set's build.py, with its own repos/stories/render (another set's build may have
    left modules of the same names in sys.modules); those of others are put back after."""
    names = ("repos", "stories", "render")
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    try:
        return set_module(NAME, "build")
    finally:
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)


def _text(row: dict) -> str:
    return (HERE / "files" / row["file"]).read_text()


def test_every_file_is_labelled_once() -> None:
    on_disk = sorted(p.name for p in (HERE / "files").iterdir())
    labelled = [r["file"] for r in ROWS]
    assert len(labelled) == len(set(labelled)) >= 60
    assert sorted(labelled) == on_disk


def test_half_leaks_every_format_and_repository() -> None:
    assert Counter(r["label"] for r in ROWS) == {"leak": 30, "benign": 30}
    formats = Counter(r["format"] for r in ROWS)
    assert set(formats) == FORMATS
    assert min(formats.values()) >= 5
    for fmt in FORMATS:
        got = {r["label"] for r in ROWS if r["format"] == fmt}
        assert got == {"leak", "benign"}, fmt
    for repo in REPOS:
        got = Counter(r["label"] for r in ROWS if r["repo"] == repo)
        assert got == {"leak": 6, "benign": 6}, repo


def test_label_rows_are_consistent() -> None:
    assert META["meta"] is True and META["set"] == NAME
    assert sorted(META["repos"]) == sorted(REPOS)
    for r in ROWS:
        assert r["repo"] in META["repos"]
        assert r["file"].startswith("t") and f"-{r['repo']}." in r["file"]
        content = {k for k in r["future_seen"] if k != "tags"}
        if r["label"] == "benign":
            assert r["kind"] == "none" and not content and not r["reaches"], r["file"]
            assert not r["future_revs"], r["file"]
        else:
            assert r["kind"] != "none", r["file"]
            assert content or r["future_revs"] or r["reaches"], r["file"]
        if r["format"] in HISTORIES and r["label"] == "leak":
            assert r["reaches"], r["file"]  # a history keeps no output


def test_no_file_names_its_label() -> None:
    for r in ROWS:
        assert "leak" not in r["file"] and "benign" not in r["file"]


def test_seen_ids_are_future_objects() -> None:
    """Every id a label quotes is a full id, and the fix's id is never reachable from a base."""
    for r in ROWS:
        for oid in r["future_seen"].get("ids", []):
            assert len(oid) == 40 and oid[:7] in _text(r), r["file"]
    for repo, info in META["repos"].items():
        assert info["fix"] != info["base"], repo


def test_no_build_path_reaches_a_file() -> None:
    """No scratch directory, checkout, home folder or interpreter path is written into a file."""
    bad = ("heldout10-", "/work/", "/root", ".venv", "/usr/lib/python", "/tmp/tmp")
    for p in sorted((HERE / "files").iterdir()):
        text = p.read_text()
        assert not [b for b in bad if b in text], p.name
    text = (HERE / "labels.jsonl").read_text()
    assert not [b for b in bad if b in text]


def test_json_formats_parse() -> None:
    for r in ROWS:
        text = _text(r)
        if r["format"] in ("mini1", "mini2", "mini2-tool", "swe", "swe-history"):
            json.loads(text)
        elif r["format"] not in HISTORIES:
            for line in text.splitlines():
                json.loads(line)


def test_mini2_uses_the_current_fence() -> None:
    for r in ROWS:
        if r["format"] == "mini2":
            doc = json.loads(_text(r))
            said = [m["content"] for m in doc["messages"] if m["role"] == "assistant"]
            assert all("```mswea_bash_command\n" in s for s in said), r["file"]


def test_rollouts_rows_follow_the_schema() -> None:
    keys = set(SCHEMAS["rollouts"])
    for r in ROWS:
        if r["format"] != "rollouts":
            continue
        rows = [json.loads(x) for x in _text(r).splitlines()]
        assert len(rows) == 3
        for row in rows:
            assert set(row) == keys, r["file"]
            assert isinstance(row["commands"], list) and row["commands"]


@pytest.mark.heavy
def test_labels_match_fresh_repositories() -> None:
    """The labels' bases, fixes and what each file shows match freshly built repositories."""
    build = _build_module()
    with tempfile.TemporaryDirectory(prefix="h10-") as tmp:
        assert build.check(Path(tmp)) == []


@pytest.mark.heavy
def test_rebuild_is_byte_identical() -> None:
    """A replay in a scratch folder writes the committed files and labels byte for byte."""
    build = _build_module()
    with tempfile.TemporaryDirectory(prefix="h10-") as tmp:
        assert build.replay(Path(tmp)) == []
