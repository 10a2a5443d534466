"""The fourth held-out trajectory set is what its labels say it is.

The set (``tests/data/audit/trajectories/heldout4``) was written blind, without the audit's rules,
and is scored by ``bench/bench_audit_precision.py --set heldout4``. These tests check the data
only: every file is labelled and in a format the agents write; leaks and look-alikes are balanced;
the task repositories build deterministically with the reference fix unreachable from the base;
and (heavy) every label agrees with the repositories as built.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from corpus_sets import FORMATS, labels, read_jsonl, set_dir, set_module

SET = set_dir("heldout4")
REPOS = {"saltmarsh", "kilnlog", "orchard", "beacon", "ferrule"}


def _doc(row: dict[str, Any]) -> Any:
    return json.loads((SET / "files" / row["file"]).read_text())


def _jsonl(row: dict[str, Any]) -> list[dict[str, Any]]:
    return read_jsonl(SET / "files" / row["file"])


def test_every_file_labelled_balanced_and_every_format_present() -> None:
    meta, rows = labels("heldout4")
    assert meta["meta"] and set(meta["repos"]) == REPOS and meta["hidden_paths"]
    on_disk = {p.name for p in (SET / "files").iterdir()}
    assert on_disk == {r["file"] for r in rows}
    assert len(rows) >= 60
    leaks = sum(r["label"] == "leak" for r in rows)
    assert {r["label"] for r in rows} == {"leak", "benign"}
    assert 0.4 <= leaks / len(rows) <= 0.6
    assert {r["format"] for r in rows} == FORMATS
    assert {r["repo"] for r in rows} == REPOS
    per = Counter((r["format"], r["label"]) for r in rows)
    assert all(per[(f, "leak")] >= 2 and per[(f, "benign")] >= 2 for f in FORMATS), per
    for r in rows:  # a leak shows, names or dumps something of the future; a benign file none of it
        content = {k for k in r["future_seen"] if k != "tags"}
        if r["label"] == "benign":
            assert not content and not r["future_revs"] and not r["reaches"], r["file"]
        else:
            assert content or r["future_revs"] or r["reaches"] in ("object-store", "network"), r[
                "file"
            ]
            assert r["kind"] != "none" and r["technique"], r["file"]


def test_file_names_do_not_give_the_label_away() -> None:
    _, rows = labels("heldout4")
    for r in rows:
        name = r["file"].lower()
        assert not any(w in name for w in ("leak", "benign", "clean", "honest", "future")), name


def test_files_are_in_their_agents_formats() -> None:
    _, rows = labels("heldout4")
    for r in rows:
        fmt = r["format"]
        if fmt in ("mini1", "mini2", "mini2-tool"):
            doc = _doc(r)
            assert doc["trajectory_format"] == (
                "mini-swe-agent-1" if fmt == "mini1" else "mini-swe-agent-1.1"
            )
            said = [m for m in doc["messages"] if m["role"] == "assistant"]
            if fmt == "mini2-tool":
                assert said and all(m["tool_calls"] for m in said)
                assert any(m["role"] == "tool" for m in doc["messages"])
            else:
                fence = "```mswea_bash_command\n" if fmt == "mini2" else "```bash\n"
                assert said and all(fence in m["content"] for m in said), r["file"]
                if fmt == "mini2":
                    assert all("```bash" not in m["content"] for m in said)
        elif fmt in ("swe", "swe-history"):
            doc = _doc(r)
            assert ("trajectory" in doc) == (fmt == "swe") and doc["history"]
            assert any(m.get("action") for m in doc["history"])
        elif fmt == "claude":
            lines = _jsonl(r)
            uses = [
                b
                for x in lines
                if x["type"] == "assistant"
                for b in x["message"]["content"]
                if b["type"] == "tool_use"
            ]
            results = [
                b
                for x in lines
                if x["type"] == "user" and isinstance(x["message"]["content"], list)
                for b in x["message"]["content"]
                if b["type"] == "tool_result"
            ]
            assert uses and {u["id"] for u in uses} == {b["tool_use_id"] for b in results}
        elif fmt == "codex":
            lines = _jsonl(r)
            assert lines[0]["type"] == "session_meta"
            calls = [
                x["payload"]
                for x in lines
                if x["type"] == "response_item" and x["payload"]["type"] == "function_call"
            ]
            outs = [
                x["payload"]
                for x in lines
                if x["type"] == "response_item" and x["payload"]["type"] == "function_call_output"
            ]
            assert calls and {c["call_id"] for c in calls} == {o["call_id"] for o in outs}
        elif fmt == "codex-exec":
            lines = _jsonl(r)
            assert lines[0]["type"] == "thread.started" and lines[-1]["type"] == "turn.completed"
            assert any(
                x["type"] == "item.completed" and x["item"]["type"] == "command_execution"
                for x in lines
            )
        elif fmt == "rollouts":
            lines = _jsonl(r)
            assert len(lines) >= 2 and all(x["commands"] and x["text"] for x in lines)
            assert [x["sample_index"] for x in lines] == list(range(len(lines)))
        else:
            text = (SET / "files" / r["file"]).read_text()
            assert text.strip()
            if fmt == "bash-ts":
                assert text.startswith("#")
            if fmt == "zsh":
                assert text.startswith(": ")


@pytest.mark.heavy
def test_repositories_are_deterministic_and_the_fix_is_unreachable(tmp_path: Path) -> None:
    repos = set_module("heldout4", "repos")
    meta, _ = labels("heldout4")
    built = repos.build_repos(tmp_path / "r")
    for name, info in built.items():
        assert info["base"] == meta["repos"][name]["base"], name
        assert info["fix"] == meta["repos"][name]["fix"], name
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=info["path"], capture_output=True, text=True
        )
        assert head.stdout.strip() == info["base"]
        index = repos.future_index(Path(info["path"]), info["base"], tmp_path / "r" / ".home")
        assert info["fix"] in index["ids"] and info["base"] not in index["ids"]
        assert info["ancestor"] not in index["ids"] and index["lines"] and index["subjects"], name
        for ref in info["future_refs"]:  # every hiding place holds a future commit
            sha = subprocess.run(
                ["git", "rev-parse", ref], cwd=info["path"], capture_output=True, text=True
            )
            assert sha.stdout.strip() in index["ids"], (name, ref)


@pytest.mark.heavy
def test_labels_agree_with_the_built_repositories() -> None:
    res = subprocess.run(
        [sys.executable, str(SET / "build.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.heavy
def test_the_check_catches_a_mislabelled_copy(tmp_path: Path) -> None:
    """The label check is not vacuous: flipped labels and wrong revisions are reported."""
    build = set_module("heldout4", "build")
    meta, rows = labels("heldout4")
    files = tmp_path / "files"
    shutil.copytree(SET / "files", files)
    leak = next(r for r in rows if r["label"] == "leak" and r["future_seen"].get("ids"))
    benign = next(r for r in rows if r["label"] == "benign" and r["reachable_revs"])
    named = next(r for r in rows if r["label"] == "leak" and r["future_revs"] and r is not leak)
    bad = []
    for r in rows:
        r = dict(r)
        if r["file"] == leak["file"]:
            r.update(label="benign", future_seen={})  # a leak called benign, its outputs hidden
        elif r["file"] == benign["file"]:
            r["reachable_revs"] = [meta["repos"][r["repo"]]["fix"]]  # the fix called reachable
        elif r["file"] == named["file"]:
            r["future_revs"] = ["HEAD~1"]  # an ancestor called future
        bad.append(r)
    (files / "extra.jsonl").write_text("{}\n")  # a file nobody labelled
    labels_file = tmp_path / "labels.jsonl"
    labels_file.write_text("".join(json.dumps(r) + "\n" for r in [meta, *bad]))
    problems = build.check(tmp_path / "scratch", labels_file, files)
    text = "\n".join(problems)
    assert (
        f"{leak['file']}: shows" in text and f"{leak['file']}: benign but shows the future" in text
    )
    assert f"{benign['file']}: {meta['repos'][benign['repo']]['fix']!r} is not reachable" in text
    assert f"{named['file']}: 'HEAD~1' is not a future commit" in text
    assert "extra.jsonl: not labelled" in text
    assert build.check(tmp_path / "scratch2") == []  # the committed set itself is clean
