"""The third held-out trajectory set is what its labels say it is.

The set is scored by ``bench/bench_audit_precision.py --set heldout3``; these tests only check the
data: every format is there, leaks and look-alikes are balanced, and (heavy) every label agrees
with the task repositories as built — a leak's recorded outputs show something of the future, a
benign file's nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from corpus_sets import FORMATS, labels, set_dir, set_module

SET = set_dir("heldout3")


def test_every_file_labelled_and_every_format_present() -> None:
    meta, rows = labels("heldout3")
    assert meta["meta"] and set(meta["repos"]) == {
        "tidewatch",
        "ledgerline",
        "glyphwrap",
        "cronwheel",
        "quayside",
        "thermoprobe",
    }
    on_disk = {p.name for p in (SET / "files").iterdir()}
    assert on_disk == {r["file"] for r in rows}
    assert len(rows) >= 60
    leaks = sum(r["label"] == "leak" for r in rows)
    assert 0.4 <= leaks / len(rows) <= 0.6
    formats = {r["format"] for r in rows}
    assert FORMATS <= formats
    for r in rows:  # a leak names what of the future it showed; a benign file shows nothing
        content = {k for k in r["future_seen"] if k != "tags"}
        assert bool(content) == (r["label"] == "leak"), r["file"]


def test_mini2_files_use_the_mswea_fence() -> None:
    _, rows = labels("heldout3")
    for r in rows:
        if r["format"] != "mini2":
            continue
        doc = json.loads((SET / "files" / r["file"]).read_text())
        assert doc["trajectory_format"] == "mini-swe-agent-1.1"
        said = [m["content"] for m in doc["messages"] if m["role"] == "assistant"]
        assert said and all("```mswea_bash_command\n" in c and "```bash" not in c for c in said)


def test_repositories_are_deterministic_and_base_is_head(tmp_path: Path) -> None:
    repos = set_module("heldout3", "repos")
    meta, _ = labels("heldout3")
    built = repos.build_repos(tmp_path / "r")
    for name, info in built.items():
        assert info["base"] == meta["repos"][name]["base"], name
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=info["path"], capture_output=True, text=True
        ).stdout
        assert head.strip() == info["base"]
        index = repos.future_index(Path(info["path"]), info["base"], tmp_path / "r" / ".home")
        assert info["fix"] in index["ids"] and info["base"] not in index["ids"]
        assert index["lines"], name


@pytest.mark.heavy
def test_labels_agree_with_the_built_repositories() -> None:
    res = subprocess.run(
        [sys.executable, str(SET / "build.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stdout + res.stderr
