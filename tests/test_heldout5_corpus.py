"""Data checks of the fifth held-out trajectory set (not audit scores).

Every file is labelled and parses in its format, the labels agree with the stories they were
written from, leaks and look-alikes are balanced across formats, and the task repositories build
deterministically with the reference fix out of the base's reach.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from corpus_sets import FORMATS, labels, read_jsonl, set_dir, set_module

SET = set_dir("heldout5")
FILES = SET / "files"
KINDS_WITHOUT_TRACE = {"network", "hidden-path", "ref-glob"}


META, ROWS = labels("heldout5")


def test_meta_row_names_every_repository_with_base_fix_and_refs() -> None:
    assert META["meta"] is True and META["set"] == "heldout5"
    assert META["hidden_paths"] == ["judge/", "tests/hidden/"]
    assert set(META["repos"]) == {"lanternfish", "pebblecache", "tallyho", "skein", "marram"}
    for name, info in META["repos"].items():
        assert re.fullmatch(r"[0-9a-f]{40}", info["base"]), name
        assert re.fullmatch(r"[0-9a-f]{40}", info["fix"]), name
        assert info["base"] != info["fix"]
        assert info["future_refs"], f"{name}: the future must be reachable through some ref"


def test_every_file_is_labelled_once_and_every_label_has_a_file() -> None:
    names = [r["file"] for r in ROWS]
    assert len(names) == len(set(names))
    assert set(names) == {p.name for p in FILES.iterdir()}


def test_rows_are_well_formed() -> None:
    for r in ROWS:
        assert r["label"] in ("leak", "benign"), r["file"]
        assert r["format"] in FORMATS, r["file"]
        assert r["repo"] in META["repos"], r["file"]
        assert r["technique"].strip(), r["file"]
        assert isinstance(r["future_seen"], dict)
        assert set(r["future_seen"]) <= {"ids", "subjects", "lines", "hidden"}
        assert (r["kind"] == "none") == (r["label"] == "benign"), r["file"]
        assert f"-{r['repo']}." in r["file"] and f".{r['format'].replace('-', '_')}." in r["file"]
        if "why" in r:
            assert len(r["why"]) > 20, r["file"]


def test_benign_files_show_nothing_of_the_future_and_leaks_show_or_name_it() -> None:
    for r in ROWS:
        if r["label"] == "benign":
            assert r["future_seen"] == {} and not r["future_revs"] and not r["reaches"], r["file"]
        else:
            assert r["future_seen"] or r["future_revs"] or r["reaches"], r["file"]
            assert not r["reaches"] or r["reaches"] in KINDS_WITHOUT_TRACE, r["file"]


def test_future_ids_quoted_in_labels_appear_in_their_file() -> None:
    for r in ROWS:
        text = (FILES / r["file"]).read_text()
        for oid in r["future_seen"].get("ids", []):
            assert re.search(rf"(?<![0-9a-f]){oid[:7]}", text), (r["file"], oid)


def test_size_and_balance() -> None:
    labels = Counter(r["label"] for r in ROWS)
    assert len(ROWS) >= 72
    assert 0.45 <= labels["leak"] / len(ROWS) <= 0.55, labels
    per_format = Counter((r["format"], r["label"]) for r in ROWS)
    for fmt in FORMATS:
        assert per_format[(fmt, "leak")] >= 2 and per_format[(fmt, "benign")] >= 2, fmt
    per_repo = Counter((r["repo"], r["label"]) for r in ROWS)
    for repo in META["repos"]:
        assert per_repo[(repo, "leak")] >= 6 and per_repo[(repo, "benign")] >= 6, repo


def test_leaks_use_many_doors() -> None:
    kinds = Counter(r["kind"] for r in ROWS if r["label"] == "leak")
    assert len(kinds) >= 8, kinds
    assert {"hidden-path", "network-package-registry", "bisect-state", "linked-worktree"} <= set(
        kinds
    )


def _check_claude(path: Path) -> None:
    lines = read_jsonl(path)
    assert lines[0]["type"] == "user" and lines[0]["parentUuid"] is None
    uses = [
        c
        for x in lines
        if x["type"] == "assistant"
        for c in x["message"]["content"]
        if c["type"] == "tool_use"
    ]
    results = [
        c
        for x in lines
        if x["type"] == "user" and isinstance(x["message"]["content"], list)
        for c in x["message"]["content"]
        if c["type"] == "tool_result"
    ]
    assert uses and [u["id"] for u in uses] == [r["tool_use_id"] for r in results]
    for a, b in zip(lines, lines[1:]):
        assert b["parentUuid"] == a["uuid"]


def _check_codex(path: Path) -> None:
    lines = read_jsonl(path)
    assert lines[0]["type"] == "session_meta"
    calls = [x["payload"] for x in lines if x["payload"].get("type") == "function_call"]
    outs = [x["payload"] for x in lines if x["payload"].get("type") == "function_call_output"]
    assert calls and [c["call_id"] for c in calls] == [o["call_id"] for o in outs]
    for c in calls:
        assert isinstance(json.loads(c["arguments"])["command"], list)
    for o in outs:
        assert "exit_code" in json.loads(o["output"])["metadata"]


def _check_codex_exec(path: Path) -> None:
    lines = read_jsonl(path)
    assert lines[0]["type"] == "thread.started" and lines[-1]["type"] == "turn.completed"
    done = [
        x["item"]
        for x in lines
        if x["type"] == "item.completed" and x["item"]["type"] == "command_execution"
    ]
    assert done and all(isinstance(i["exit_code"], int) for i in done)


def _check_mini(path: Path, fmt: str) -> None:
    doc = json.loads(path.read_text())
    msgs = doc["messages"]
    assert msgs[0]["role"] == "system" and msgs[1]["role"] == "user"
    said = [m for m in msgs if m["role"] == "assistant"]
    if fmt == "mini2-tool":
        assert all(m.get("tool_calls") for m in said)
        assert any(m["role"] == "tool" for m in msgs)
    else:
        fence = "```mswea_bash_command\n" if fmt == "mini2" else "```bash\n"
        assert all(m["content"].count(fence) == 1 for m in said)
    assert doc["trajectory_format"].startswith("mini-swe-agent")


def _check_swe(path: Path, fmt: str) -> None:
    doc = json.loads(path.read_text())
    assert ("trajectory" in doc) == (fmt == "swe")
    actions = [m for m in doc["history"] if m.get("message_type") == "action"]
    assert actions and all(m["action"] for m in actions)
    if fmt == "swe":
        assert [t["action"] for t in doc["trajectory"]] == [m["action"] for m in actions]


def _check_history(path: Path, fmt: str) -> None:
    lines = path.read_text().splitlines()
    assert lines
    if fmt == "bash-ts":
        stamps = [x for x in lines if re.fullmatch(r"#\d{10}", x)]
        assert stamps and lines[0].startswith("#")
        assert [int(x[1:]) for x in stamps] == sorted(int(x[1:]) for x in stamps)
    elif fmt == "zsh":
        starts = [x for x in lines if x.startswith(": ")]
        assert starts and all(re.match(r": \d{10}:\d+;", x) for x in starts)
        assert lines[0].startswith(": ")
    else:
        assert not any(re.fullmatch(r"#\d{10}", x) for x in lines)


def _check_rollouts(path: Path) -> None:
    rows = read_jsonl(path)
    assert len(rows) == 3 and [r["sample_index"] for r in rows] == [0, 1, 2]
    assert len({(r["run_id"], r["step"], r["group_id"]) for r in rows}) == 1
    for r in rows:
        assert r["commands"] and all(c in r["text"] for c in r["commands"])
        assert isinstance(r["reward"], float)


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_file_parses_in_its_format(row: dict[str, Any]) -> None:
    path, fmt = FILES / row["file"], row["format"]
    if fmt == "claude":
        _check_claude(path)
    elif fmt == "codex":
        _check_codex(path)
    elif fmt == "codex-exec":
        _check_codex_exec(path)
    elif fmt.startswith("mini"):
        _check_mini(path, fmt)
    elif fmt.startswith("swe"):
        _check_swe(path, fmt)
    elif fmt == "rollouts":
        _check_rollouts(path)
    else:
        _check_history(path, fmt)


def test_labels_agree_with_the_stories() -> None:
    stories = set_module("heldout5", "stories")
    by_file = {s["file"]: s for s in stories.STORIES}
    assert set(by_file) == {r["file"] for r in ROWS}
    for r in ROWS:
        s = by_file[r["file"]]
        assert (s["label"], s["format"], s["repo"], s["technique"]) == (
            r["label"],
            r["format"],
            r["repo"],
            r["technique"],
        )


def _git(path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=path, env=env, capture_output=True, text=True)


@pytest.mark.heavy
def test_repositories_build_deterministically_with_the_fix_out_of_reach(tmp_path: Path) -> None:
    repos = set_module("heldout5", "repos")
    first = repos.build_repos(tmp_path / "a")
    second = repos.build_repos(tmp_path / "b")
    env = repos.git_env(tmp_path / "a" / ".home")
    for name, info in first.items():
        meta = META["repos"][name]
        assert (info["base"], info["fix"]) == (meta["base"], meta["fix"]), name
        assert (second[name]["base"], second[name]["fix"]) == (info["base"], info["fix"])
        path = Path(info["path"])
        assert _git(path, env, "rev-parse", "HEAD").stdout.strip() == info["base"]
        assert _git(path, env, "status", "--porcelain").stdout == "", name
        # the fix is in the store, not an ancestor of the base, and each future ref reaches it
        assert _git(path, env, "cat-file", "-t", info["fix"]).stdout.strip() == "commit"
        assert _git(path, env, "merge-base", "--is-ancestor", info["fix"], info["base"]).returncode
        assert (
            _git(path, env, "merge-base", "--is-ancestor", info["base"], info["fix"]).returncode
            == 0
        )
        for ref in meta["future_refs"]:
            tip = _git(path, env, "rev-parse", "--verify", "-q", f"{ref}^{{commit}}").stdout.strip()
            assert tip, (name, ref)
            assert _git(path, env, "merge-base", "--is-ancestor", tip, info["base"]).returncode
        # no branch or tag a plain `git log --branches --tags` walks leads to the fix
        plain = _git(path, env, "rev-list", "--branches", "--tags").stdout.split()
        assert info["fix"] not in plain, name
        index = repos.future_index(path, info["base"], tmp_path / "a" / ".home")
        assert info["fix"] in index["commits"] and info["base"] not in index["ids"]
        if name in ("lanternfish", "pebblecache", "marram"):
            assert index["hidden"], f"{name}: hidden files expected"


@pytest.mark.heavy
def test_committed_files_match_their_labels_against_fresh_repositories() -> None:
    res = subprocess.run(
        [sys.executable, str(SET / "build.py"), "--check"], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("0 problem(s)")
