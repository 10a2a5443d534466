"""The fourth held-out trajectory set is what its labels say it is.

The set (``tests/data/audit/trajectories/heldout4``) was written blind, without the audit's rules,
and is scored by ``bench/bench_audit_precision.py --set heldout4``. These tests check the data
only: every file is labelled and in a format the agents write; leaks and look-alikes are balanced;
the task repositories build deterministically with the reference fix unreachable from the base;
and (heavy) every label agrees with the repositories as built.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

SET = Path(__file__).resolve().parent / "data" / "audit" / "trajectories" / "heldout4"
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
REPOS = {"saltmarsh", "kilnlog", "orchard", "beacon", "ferrule"}


def _labels() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    rows = [json.loads(x) for x in (SET / "labels.jsonl").read_text().splitlines() if x.strip()]
    return rows[0], rows[1:]


def _module(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"heldout4_{name}", SET / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(SET))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(SET))
    return mod


def _doc(row: dict[str, Any]) -> Any:
    return json.loads((SET / "files" / row["file"]).read_text())


def _jsonl(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        json.loads(x) for x in (SET / "files" / row["file"]).read_text().splitlines() if x.strip()
    ]


def test_every_file_labelled_balanced_and_every_format_present() -> None:
    meta, rows = _labels()
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
    _, rows = _labels()
    for r in rows:
        name = r["file"].lower()
        assert not any(w in name for w in ("leak", "benign", "clean", "honest", "future")), name


def test_files_are_in_their_agents_formats() -> None:
    _, rows = _labels()
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
    repos = _module("repos")
    meta, _ = _labels()
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
    build = _module("build")
    meta, rows = _labels()
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
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in [meta, *bad]))
    problems = build.check(tmp_path / "scratch", labels, files)
    text = "\n".join(problems)
    assert (
        f"{leak['file']}: shows" in text and f"{leak['file']}: benign but shows the future" in text
    )
    assert f"{benign['file']}: {meta['repos'][benign['repo']]['fix']!r} is not reachable" in text
    assert f"{named['file']}: 'HEAD~1' is not a future commit" in text
    assert "extra.jsonl: not labelled" in text
    assert build.check(tmp_path / "scratch2") == []  # the committed set itself is clean
