"""Data checks of the eighth blind held-out trajectory set (tests/data/audit/trajectories/heldout8).

The set is scored by no test here: these check that its files, labels and task repositories
agree (what each file shows of the future, as computed from the built repositories) and that
a rebuild gives the committed bytes. The two that build repositories are heavy.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from evotree.harness.layout import SCHEMAS

HERE = Path(__file__).resolve().parent / "data" / "audit" / "trajectories" / "heldout8"
FILES = HERE / "files"
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
_SIBLINGS = ("repos", "stories", "render")


def _load_build() -> ModuleType:
    """The set's build.py, imported without leaving its generic module names in sys.modules
    (other sets' builders use the same names)."""
    saved = {k: sys.modules.pop(k) for k in _SIBLINGS if k in sys.modules}
    path = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location("heldout8_build", HERE / "build.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
        for k in _SIBLINGS:
            sys.modules.pop(k, None)
        sys.modules.update(saved)
    return module


BUILD = _load_build()


def _labels() -> tuple[dict, list[dict]]:
    rows = [json.loads(x) for x in (HERE / "labels.jsonl").read_text().splitlines() if x]
    return rows[0], rows[1:]


def test_every_file_is_labelled_once_and_formats_are_balanced() -> None:
    meta, rows = _labels()
    assert meta["meta"] is True and meta["set"] == "heldout8"
    names = [r["file"] for r in rows]
    assert len(names) == len(set(names)) >= 60
    assert set(names) == {p.name for p in FILES.iterdir()}
    counts = collections.Counter((r["format"], r["label"]) for r in rows)
    for fmt in FORMATS:
        assert counts[(fmt, "leak")] >= 3 and counts[(fmt, "benign")] >= 3, fmt
    labels = collections.Counter(r["label"] for r in rows)
    assert labels["leak"] == labels["benign"]
    assert set(meta["repos"]) == {r["repo"] for r in rows}
    assert len(meta["repos"]) >= 4


def test_file_names_say_repository_and_format_never_the_label() -> None:
    _, rows = _labels()
    for r in rows:
        name = r["file"]
        assert r["repo"] in name and r["format"].replace("-", "_") in name
        assert "leak" not in name and "benign" not in name


def test_rows_are_consistent_with_their_label() -> None:
    _, rows = _labels()
    for r in rows:
        if r["label"] == "benign":
            assert r["kind"] == "none" and not r["future_seen"], r["file"]
            assert not r["future_revs"] and not r["reaches"], r["file"]
        else:
            assert r["label"] == "leak" and r["kind"] != "none", r["file"]
            assert r["future_seen"] or r["future_revs"] or r["reaches"], r["file"]
        assert set(r["future_seen"]) <= {"ids", "subjects", "lines", "hidden"}


def test_labels_agree_with_the_stories() -> None:
    _, rows = _labels()
    stories = BUILD.stories.STORIES
    assert [s["file"] for s in stories] == [r["file"] for r in rows]
    for s, r in zip(stories, rows):
        assert (s["format"], s["repo"], s["label"]) == (r["format"], r["repo"], r["label"])


def test_histories_keep_no_output_so_their_leaks_say_how() -> None:
    _, rows = _labels()
    for r in rows:
        if r["format"] in ("bash", "bash-ts", "zsh") and r["label"] == "leak":
            assert r["reaches"] in ("bundle-file", "reject-file", "wheel", "autosave", "ide-shelf")


def test_files_parse_in_their_format() -> None:
    _, rows = _labels()
    for r in rows:
        raw = (FILES / r["file"]).read_text()
        fmt = r["format"]
        if fmt in ("claude", "codex", "codex-exec", "rollouts"):
            lines = [json.loads(x) for x in raw.splitlines()]
            assert lines, r["file"]
            if fmt == "rollouts":
                for row in lines:
                    assert set(row) == set(SCHEMAS["rollouts"]), r["file"]
                    assert row["commands"] and isinstance(row["commands"], list)
        elif fmt.startswith("mini"):
            doc = json.loads(raw)
            said = [m for m in doc["messages"] if m["role"] == "assistant"]
            if fmt == "mini2":
                assert doc["trajectory_format"] == "mini-swe-agent-1.1"
                assert all("```mswea_bash_command\n" in m["content"] for m in said)
            elif fmt == "mini1":
                assert all("```bash\n" in m["content"] for m in said)
            else:
                assert all(m["tool_calls"] for m in said)
        elif fmt.startswith("swe"):
            doc = json.loads(raw)
            assert ("trajectory" in doc) == (fmt == "swe") and doc["history"]
        elif fmt == "bash-ts":
            assert raw.startswith("#")
        elif fmt == "zsh":
            assert raw.startswith(": ")


def test_a_leak_file_shows_what_its_label_says() -> None:
    """Spot check without git: the lines a leak's label lists are in the file's text, and a
    benign file in the same repository does not hold them."""
    _, rows = _labels()
    by_repo: dict[str, set[str]] = collections.defaultdict(set)
    for r in rows:
        if r["label"] == "leak":
            text = BUILD.file_text(FILES / r["file"])
            for line in r["future_seen"].get("lines", []):
                assert line in text, (r["file"], line)
                by_repo[r["repo"]].add(line)
    assert all(by_repo[repo] for repo in {r["repo"] for r in rows})
    for r in rows:
        if r["label"] == "benign":
            text = BUILD.file_text(FILES / r["file"])
            assert not [x for x in by_repo[r["repo"]] if x in text], r["file"]


@pytest.mark.heavy
def test_labels_hold_against_freshly_built_repositories(tmp_path: Path) -> None:
    assert BUILD.check(tmp_path / "check") == []


@pytest.mark.heavy
def test_a_rebuild_is_byte_identical(tmp_path: Path) -> None:
    assert BUILD.replay(tmp_path) == []
