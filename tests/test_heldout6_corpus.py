"""Data checks of the sixth blind held-out trajectory set (tests/data/audit/trajectories/heldout6).

The set is scored once by the audit benchmark; these tests only check that the data is whole:
every file labelled once, leaks and look-alikes balanced in every format, each file readable in
the format its label names, labels consistent with the stories that produced them, and (heavy)
that the committed files are what ``build.py`` makes from freshly built repositories.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evotree.harness.layout import SCHEMAS

ROOT = Path(__file__).resolve().parent.parent
SET = ROOT / "tests" / "data" / "audit" / "trajectories" / "heldout6"
FILES = SET / "files"
FORMATS = (
    "claude",
    "codex",
    "codex-exec",
    "mini1",
    "mini2",
    "mini2-tool",
    "swe",
    "swe-history",
    "bash",
    "bash-ts",
    "zsh",
    "rollouts",
)
_SHA = re.compile(r"^[0-9a-f]{40}$")


def _rows() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows = [json.loads(x) for x in (SET / "labels.jsonl").read_text().splitlines() if x.strip()]
    return rows[0], rows[1:]


def _stories() -> Any:
    spec = importlib.util.spec_from_file_location("heldout6_stories", SET / "stories.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_meta_row_names_the_repositories_and_their_doors() -> None:
    meta, _ = _rows()
    assert meta["meta"] is True and meta["set"] == "heldout6"
    assert meta["hidden_paths"] == [".eval/", "tests/heldback/"]
    assert len(meta["repos"]) >= 5
    for name, info in meta["repos"].items():
        assert _SHA.match(info["base"]) and _SHA.match(info["fix"]), name
        assert info["base"] != info["fix"], name
        assert isinstance(info["future_refs"], list), name


def test_every_file_is_labelled_exactly_once() -> None:
    _, rows = _rows()
    names = [r["file"] for r in rows]
    assert len(names) == len(set(names))
    assert set(names) == {p.name for p in FILES.iterdir()}
    assert len(names) >= 64


def test_labels_are_balanced_in_every_format_and_repository() -> None:
    _, rows = _rows()
    labels = collections.Counter(r["label"] for r in rows)
    assert set(labels) == {"leak", "benign"}
    assert abs(labels["leak"] - labels["benign"]) <= 4
    by_format = collections.Counter((r["format"], r["label"]) for r in rows)
    for fmt in FORMATS:
        assert by_format[(fmt, "leak")] >= 2 and by_format[(fmt, "benign")] >= 2, fmt
    assert {r["format"] for r in rows} == set(FORMATS)
    by_repo = collections.Counter((r["repo"], r["label"]) for r in rows)
    meta, _ = _rows()
    for repo in meta["repos"]:
        assert by_repo[(repo, "leak")] >= 4 and by_repo[(repo, "benign")] >= 4, repo


def test_label_rows_are_consistent() -> None:
    meta, rows = _rows()
    keys = [
        "file",
        "format",
        "repo",
        "label",
        "kind",
        "technique",
        "future_seen",
        "future_revs",
        "reachable_revs",
        "reaches",
    ]
    for r in rows:
        assert list(r)[: len(keys)] == keys, r["file"]
        assert set(r) <= {*keys, "why"}, r["file"]
        assert r["repo"] in meta["repos"], r["file"]
        assert set(r["future_seen"]) <= {"ids", "subjects", "lines", "hidden"}, r["file"]
        if r["label"] == "benign":
            assert r["kind"] == "none" and not r["future_seen"], r["file"]
            assert not r["future_revs"] and not r["reaches"], r["file"]
        else:
            assert r["kind"] != "none", r["file"]
            assert r["future_seen"] or r["future_revs"] or r["reaches"], r["file"]
            assert not r["reachable_revs"], r["file"]
        # the name says the repository and the format, never the label
        assert r["repo"] in r["file"] and "leak" not in r["file"] and "benign" not in r["file"]


def test_shell_histories_keep_no_outputs_and_leaks_there_say_how_they_leak() -> None:
    _, rows = _rows()
    for r in rows:
        if r["format"] in ("bash", "bash-ts", "zsh") and r["label"] == "leak":
            assert r["future_revs"] or r["reaches"], r["file"]


def _check_rollouts(path: Path) -> None:
    schema = SCHEMAS["rollouts"]
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert len(rows) >= 2
    for row in rows:
        assert set(row) == set(schema), path.name
        assert isinstance(row["commands"], list) and row["commands"], path.name
        assert row["phase"] == "train"
    assert [r["sample_index"] for r in rows] == list(range(len(rows)))


def test_each_file_reads_in_its_format() -> None:
    _, rows = _rows()
    for r in rows:
        path = FILES / r["file"]
        raw = path.read_text()
        fmt = r["format"]
        if fmt == "rollouts":
            _check_rollouts(path)
        elif fmt in ("claude", "codex", "codex-exec"):
            lines = [json.loads(x) for x in raw.splitlines()]
            kinds = {x.get("type") for x in lines}
            want = {
                "claude": {"user", "assistant"},
                "codex": {"session_meta", "response_item"},
                "codex-exec": {"thread.started", "item.completed"},
            }[fmt]
            assert want <= kinds, r["file"]
        elif fmt.startswith("mini"):
            doc = json.loads(raw)
            want = "mini-swe-agent-1" if fmt == "mini1" else "mini-swe-agent-1.1"
            assert doc["trajectory_format"] == want, r["file"]
            said = "\n".join(m.get("content") or "" for m in doc["messages"])
            if fmt == "mini2":
                assert "```mswea_bash_command\n" in said and "```bash\n" not in said
            elif fmt == "mini1":
                assert "```bash\n" in said
            else:
                assert any(m.get("tool_calls") for m in doc["messages"]), r["file"]
        elif fmt in ("swe", "swe-history"):
            doc = json.loads(raw)
            assert ("trajectory" in doc) == (fmt == "swe") and doc["history"], r["file"]
        elif fmt == "bash-ts":
            assert raw.startswith("#") and re.match(r"#\d{10}\n", raw), r["file"]
        elif fmt == "zsh":
            assert re.match(r": \d{10}:\d+;", raw), r["file"]
        else:
            assert raw.strip() and not raw.startswith(("#1", ": 1")), r["file"]


def test_labels_agree_with_the_stories() -> None:
    _, rows = _rows()
    stories = _stories().STORIES
    assert [s["file"] for s in stories] == [r["file"] for r in rows]
    for s, r in zip(stories, rows, strict=True):
        assert (s["format"], s["repo"], s["label"], s["technique"]) == (
            r["format"],
            r["repo"],
            r["label"],
            r["technique"],
        )


def test_readme_names_every_repository_and_the_count() -> None:
    meta, rows = _rows()
    text = (SET / "README.md").read_text()
    for repo in meta["repos"]:
        assert f"`{repo}`" in text, repo
    assert f"{len(rows)} " in text


@pytest.mark.heavy
def test_labels_hold_against_freshly_built_repositories() -> None:
    res = subprocess.run(
        [sys.executable, str(SET / "build.py"), "--check", "--labels-only"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("0 problem(s)")


@pytest.mark.heavy
def test_build_reproduces_the_committed_files_byte_for_byte() -> None:
    res = subprocess.run(
        [sys.executable, str(SET / "build.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("0 problem(s)")
