"""Data checks of the twelfth blind held-out trajectory set (tests/data/.../heldout12).

The fast checks read only the committed files and labels: every file is labelled and on disk,
labels agree with what they record (a benign file shows nothing of the future, a leak shows
something or says how it got there), every format has both labels, files parse in their
format and carry no path of the machine that built them. The heavy checks rebuild the task
repositories and replay every story (``build.py --check``), in a subprocess so that the set's
modules (``repos``, ``stories``, ``render``) never meet another set's of the same name.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from evotree.harness.layout import SCHEMAS

SET = Path(__file__).parent / "data" / "audit" / "trajectories" / "heldout12"
FILES = SET / "files"
LABELS = SET / "labels.jsonl"
FORMATS = {
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
}
HISTORY = {"bash", "bash-ts", "zsh"}
_TYPES = {"str": str, "int": int, "float": float, "bool": bool}


def _labels() -> tuple[dict, list[dict]]:
    rows = [json.loads(x) for x in LABELS.read_text().splitlines() if x.strip()]
    return rows[0], rows[1:]


def test_meta_row_names_the_set_and_its_repositories() -> None:
    meta, rows = _labels()
    assert meta["meta"] is True and meta["set"] == "heldout12"
    assert set(meta["repos"]) == {"wick", "fjord", "cairn", "kyle"}
    for info in meta["repos"].values():
        assert re.fullmatch(r"[0-9a-f]{40}", info["base"])
        assert re.fullmatch(r"[0-9a-f]{40}", info["fix"])
        assert info["base"] != info["fix"] and info["future_refs"]
    assert {r["repo"] for r in rows} == set(meta["repos"])


def test_every_file_is_labelled_once_and_on_disk() -> None:
    _, rows = _labels()
    names = [r["file"] for r in rows]
    assert len(names) == len(set(names))
    assert set(names) == {p.name for p in FILES.iterdir()}


def test_size_balance_and_formats() -> None:
    _, rows = _labels()
    assert len(rows) >= 60
    labels = Counter(r["label"] for r in rows)
    assert set(labels) == {"leak", "benign"}
    assert abs(labels["leak"] - labels["benign"]) <= len(rows) // 10
    per_format = Counter(r["format"] for r in rows)
    assert set(per_format) == FORMATS
    assert min(per_format.values()) >= 5
    for fmt in FORMATS:
        assert {r["label"] for r in rows if r["format"] == fmt} == {"leak", "benign"}, fmt


def test_names_say_repository_and_format_never_the_label() -> None:
    _, rows = _labels()
    for r in rows:
        assert r["file"].split(".")[0].split("-", 1)[1] == r["repo"], r["file"]
        assert r["file"].split(".")[1] == r["format"].replace("-", "_"), r["file"]
        assert "leak" not in r["file"] and "benign" not in r["file"]


def test_labels_agree_with_what_they_record() -> None:
    _, rows = _labels()
    for r in rows:
        seen, name = r["future_seen"], r["file"]
        assert set(seen) <= {"ids", "subjects", "lines", "hidden"}, name
        if r["label"] == "benign":
            assert not seen and not r["future_revs"] and not r["reaches"], name
            assert r["kind"] == "none", name
        else:
            assert r["kind"] != "none", name
            assert seen or r["future_revs"] or r["reaches"], name
            if r["format"] in HISTORY:  # a history keeps no output: it must say how
                assert r["reaches"], name
        if r["format"] in HISTORY:  # nothing of an output can be in a history
            assert not seen, name


def test_files_parse_in_their_format() -> None:
    _, rows = _labels()
    for r in rows:
        text = (FILES / r["file"]).read_text()
        if r["format"] in HISTORY:
            assert text.strip() and not text.lstrip().startswith(("{", "[")), r["file"]
            if r["format"] == "bash-ts":
                assert re.match(r"#\d{10}\n", text), r["file"]
            if r["format"] == "zsh":
                assert re.match(r": \d{10}:\d+;", text), r["file"]
        elif r["file"].endswith(".jsonl"):
            assert all(json.loads(x) is not None for x in text.splitlines()), r["file"]
        else:
            assert isinstance(json.loads(text), dict), r["file"]


def test_mini_swe_agent_2_text_files_fence_commands_as_mswea() -> None:
    _, rows = _labels()
    for r in rows:
        if r["format"] == "mini2":
            assert "```mswea_bash_command" in (FILES / r["file"]).read_text(), r["file"]


def test_rollouts_rows_follow_the_recorder_schema() -> None:
    _, rows = _labels()
    schema = SCHEMAS["rollouts"]
    for r in rows:
        if r["format"] != "rollouts":
            continue
        lines = (FILES / r["file"]).read_text().splitlines()
        assert len(lines) >= 2
        for line in lines:
            row = json.loads(line)
            assert set(row) == set(schema), r["file"]
            for col, kind in schema.items():
                if kind == "list[str]":
                    assert all(isinstance(x, str) for x in row[col]), (r["file"], col)
                else:
                    assert isinstance(row[col], _TYPES[kind]), (r["file"], col)


def test_no_path_of_the_building_machine() -> None:
    leftovers = re.compile(r"/work/|\.venv|/tmp/tmp|heldout12-|/home/(?!dev/|ilse/)|/root/")
    for p in [*sorted(FILES.iterdir()), LABELS]:
        found = leftovers.search(p.read_text())
        assert found is None, (p.name, found and found.group())


def test_future_seen_matches_the_file_text() -> None:
    """Every line the labels say a file shows is in that file's text (cheap, no rebuild)."""
    sys.path.insert(0, str(SET.parent))
    try:
        from _kit.build import file_text
    finally:
        sys.path.remove(str(SET.parent))
    _, rows = _labels()
    for r in rows:
        text = file_text(FILES / r["file"])
        for key in ("subjects", "lines", "hidden"):
            for x in r["future_seen"].get(key, []):
                assert x in text, (r["file"], key, x)


def _run_build(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SET / "build.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )


@pytest.mark.heavy
def test_labels_hold_against_freshly_built_repositories() -> None:
    res = _run_build("--check", "--labels-only")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("0 problem(s)")


@pytest.mark.heavy
def test_rebuild_is_byte_identical_under_ci() -> None:
    """CI sets CI=true; the stories' programs must not see it (pytest would print more)."""
    res = _run_build("--check", env={**os.environ, "CI": "true"})
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("0 problem(s)")
