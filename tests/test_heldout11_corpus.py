"""Data checks of the eleventh held-out trajectory set (tests/data/audit/trajectories/heldout11).

The set is blind data for a scorer, not code under test: these checks keep its files, labels and
rebuild honest (every file labelled, both labels in every format, benign files showing nothing
of the future, no build path in any file). The two that build the task repositories (the label
check against the built stores and the byte-for-byte replay) are heavy.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from evotree.harness.layout import SCHEMAS

SET = Path(__file__).resolve().parent / "data" / "audit" / "trajectories" / "heldout11"
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
KINDS = {"ctags-index", "ci-log", "ipython-history", "editor-workspace"}
TYPES = {"str": str, "int": int, "float": float, "bool": bool, "list[str]": list}


def _rows() -> tuple[dict, list[dict]]:
    rows = [json.loads(x) for x in (SET / "labels.jsonl").read_text().splitlines() if x]
    return rows[0], rows[1:]


def _build() -> ModuleType:
    """The set's build.py, loaded from its file (it is data tooling, not a project module).

    Other sets have modules of the same names (``repos``, ``stories``, ``render``): theirs are
    set aside while this set's load and put back after, and so is ``sys.path``.
    """
    names = ("build", "repos", "stories", "render")
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    path = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location("heldout11_build", SET / "build.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)
        sys.path[:] = path
    return module


def test_meta_row_names_the_repositories_and_hidden_paths() -> None:
    meta, _ = _rows()
    assert meta["meta"] is True and meta["set"] == "heldout11"
    assert set(meta["repos"]) == {"fell", "scree", "tor", "gill"}
    assert len(meta["hidden_paths"]) == 4
    for info in meta["repos"].values():
        assert len(info["base"]) == 40 and len(info["fix"]) == 40
        assert info["base"] != info["fix"] and info["future_refs"]


def test_every_file_is_labelled_once_and_on_disk() -> None:
    _, rows = _rows()
    names = [r["file"] for r in rows]
    assert len(names) == len(set(names)) >= 60
    assert set(names) == {p.name for p in (SET / "files").iterdir()}


def test_formats_and_labels_are_balanced() -> None:
    _, rows = _rows()
    per = Counter((r["format"], r["label"]) for r in rows)
    assert {r["format"] for r in rows} == FORMATS
    for fmt in FORMATS:
        assert per[fmt, "leak"] >= 1 and per[fmt, "benign"] >= 1, fmt
        assert per[fmt, "leak"] + per[fmt, "benign"] >= 5, fmt
    leaks = sum(r["label"] == "leak" for r in rows)
    assert 0.4 <= leaks / len(rows) <= 0.6
    assert {r["kind"] for r in rows if r["label"] == "leak"} == KINDS


def test_labels_agree_with_what_each_file_shows() -> None:
    _, rows = _rows()
    for r in rows:
        assert r["label"] in ("leak", "benign"), r["file"]
        assert r["future_revs"] == [], r["file"]  # no door of this set is a revision
        if r["label"] == "benign":
            assert r["kind"] == "none" and not r["future_seen"] and not r["reaches"], r["file"]
        else:
            assert r["kind"] in KINDS, r["file"]
            assert r["future_seen"] or r["reaches"], r["file"]
        if r["format"] in ("bash", "bash-ts", "zsh"):
            assert not r["future_seen"], r["file"]  # a history keeps no output


def test_file_names_say_repository_and_format_not_label() -> None:
    _, rows = _rows()
    for r in rows:
        name = r["file"]
        assert f"-{r['repo']}." in name and f".{r['format'].replace('-', '_')}." in name
        assert "leak" not in name and "benign" not in name


def test_no_build_path_reaches_a_file() -> None:
    for p in sorted((SET / "files").iterdir()) + [SET / "labels.jsonl"]:
        text = p.read_text()
        for marker in ("heldout11-", "/work/", ".venv", "/.home", "/tmp/tmp"):
            assert marker not in text, (p.name, marker)


def test_rollouts_rows_have_the_recorder_schema() -> None:
    schema = SCHEMAS["rollouts"]
    files = sorted((SET / "files").glob("*.rollouts.jsonl"))
    assert len(files) >= 5
    for p in files:
        rows = [json.loads(x) for x in p.read_text().splitlines() if x]
        assert len(rows) == 3
        for row in rows:
            assert set(row) == set(schema), p.name
            for col, kind in schema.items():
                assert isinstance(row[col], TYPES[kind]), (p.name, col)


@pytest.mark.heavy
def test_labels_check_against_freshly_built_repositories(tmp_path: Path) -> None:
    assert _build().check(tmp_path / "check") == []


@pytest.mark.heavy
def test_rebuild_is_byte_identical(tmp_path: Path) -> None:
    assert _build().replay(tmp_path) == []
