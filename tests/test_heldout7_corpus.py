"""Data checks of the seventh blind held-out trajectory set (``.../trajectories/heldout7``).

The set is data for a leak audit that is scored once; these tests only check that the data is
whole and consistent: every file is labelled once, leaks and look-alikes are balanced, every
format appears with both labels and is well formed, each label row is coherent, and (heavy)
the task repositories build the same way twice and the committed labels hold against them.
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from evotree.harness.layout import SCHEMAS

SET = Path(__file__).resolve().parent / "data" / "audit" / "trajectories" / "heldout7"
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
#: doors the earlier blind sets used as their main door; none is this set's
OLD_DOORS = {
    "remote-branch",
    "tag",
    "reflog",
    "orig-head",
    "stash",
    "fetch-head",
    "packed-refs",
    "replace-ref",
    "alternates",
    "stopped-am",
    "submodule",
    "lost-found",
    "bundle-ref",
    "bisect",
    "rerere",
    "worktree",
    "notes",
    "filter-branch",
}
ROW_KEYS = [
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
REACHES = {
    "",
    "index",
    "tag-message",
    "git-dir-file",
    "command-substitution",
    "bytecode",
    "network",
}


def _labels() -> tuple[dict, list[dict]]:
    rows = [json.loads(x) for x in (SET / "labels.jsonl").read_text().splitlines() if x.strip()]
    return rows[0], rows[1:]


def test_meta_row_names_five_or_more_repositories_with_distinct_bases_and_fixes() -> None:
    meta, _ = _labels()
    assert meta["meta"] is True and meta["set"] == "heldout7"
    repos = meta["repos"]
    assert len(repos) >= 5
    for info in repos.values():
        assert re.fullmatch(r"[0-9a-f]{40}", info["base"])
        assert re.fullmatch(r"[0-9a-f]{40}", info["fix"])
        assert info["base"] != info["fix"]
        assert info["future_refs"], "every repository says where its future is"
    assert len({i["fix"] for i in repos.values()}) == len(repos)


def test_every_file_is_labelled_once_and_every_label_has_a_file() -> None:
    _, rows = _labels()
    names = [r["file"] for r in rows]
    assert len(names) == len(set(names))
    assert set(names) == {p.name for p in (SET / "files").iterdir()}
    assert len(names) >= 60


def test_leaks_and_look_alikes_are_balanced_in_every_format_and_repository() -> None:
    meta, rows = _labels()
    labels = collections.Counter(r["label"] for r in rows)
    assert set(labels) == {"leak", "benign"}
    assert labels["leak"] == labels["benign"]
    by_format = collections.Counter((r["format"], r["label"]) for r in rows)
    for fmt in FORMATS:
        assert by_format[(fmt, "leak")] >= 2, fmt
        assert by_format[(fmt, "benign")] >= 1, fmt
    assert {r["format"] for r in rows} == set(FORMATS)
    by_repo = collections.Counter((r["repo"], r["label"]) for r in rows)
    for repo in meta["repos"]:
        assert by_repo[(repo, "leak")] >= 5 and by_repo[(repo, "benign")] >= 5, repo


def test_label_rows_are_coherent() -> None:
    meta, rows = _labels()
    for r in rows:
        assert list(r)[: len(ROW_KEYS)] == ROW_KEYS, r["file"]
        assert set(r) <= set(ROW_KEYS) | {"why"}
        assert r["repo"] in meta["repos"]
        assert r["reaches"] in REACHES, r["file"]
        # names say the repository and the format, never the label
        assert f"-{r['repo']}." in r["file"] and r["format"].replace("-", "_") in r["file"]
        assert "leak" not in r["file"] and "benign" not in r["file"]
        if r["label"] == "benign":
            assert r["kind"] == "none" and not r["future_seen"] and not r["future_revs"]
            assert not r["reaches"]
        else:
            assert r["kind"] not in ("none", *OLD_DOORS)
            assert r["future_seen"] or r["future_revs"] or r["reaches"], r["file"]
        for rev in r["future_revs"] + r["reachable_revs"]:
            assert rev and not rev.startswith("@@"), r["file"]


def test_no_benign_file_holds_a_future_id_or_subject() -> None:
    meta, rows = _labels()
    fixes = {n: i["fix"] for n, i in meta["repos"].items()}
    for r in rows:
        if r["label"] != "benign":
            continue
        text = (SET / "files" / r["file"]).read_text()
        assert fixes[r["repo"]][:7] not in text, r["file"]


def _check_format(fmt: str, raw: str) -> int:
    """The number of commands the file holds, checking its shape for fmt."""
    if fmt in ("bash", "bash-ts", "zsh"):
        lines = raw.splitlines()
        if fmt == "bash-ts":
            assert all(re.fullmatch(r"#\d{10}", x) for x in lines[::2] if x.startswith("#"))
            return sum(1 for x in lines if re.fullmatch(r"#\d{10}", x))
        if fmt == "zsh":
            return sum(1 for x in lines if re.match(r": \d{10}:\d+;", x))
        return len(lines)
    if fmt in ("mini1", "mini2", "mini2-tool", "swe", "swe-history"):
        doc = json.loads(raw)
        if fmt.startswith("mini"):
            want = "mini-swe-agent-1" if fmt == "mini1" else "mini-swe-agent-1.1"
            assert doc["trajectory_format"] == want
            said = [m for m in doc["messages"] if m["role"] == "assistant"]
            if fmt == "mini2-tool":
                return sum(len(m["tool_calls"]) for m in said)
            fence = "```bash\n" if fmt == "mini1" else "```mswea_bash_command\n"
            return sum(m["content"].count(fence) for m in said)
        assert ("trajectory" in doc) == (fmt == "swe")
        return sum(1 for m in doc["history"] if m.get("message_type") == "action")
    rows = [json.loads(x) for x in raw.splitlines()]
    if fmt == "claude":
        return sum(
            1
            for r in rows
            if r["type"] == "assistant"
            for c in r["message"]["content"]
            if c["type"] == "tool_use"
        )
    if fmt == "codex":
        assert rows[0]["type"] == "session_meta"
        return sum(1 for r in rows if r["payload"].get("type") == "function_call")
    if fmt == "codex-exec":
        assert rows[0]["type"] == "thread.started" and rows[-1]["type"] == "turn.completed"
        return sum(
            1
            for r in rows
            if r["type"] == "item.completed" and r["item"]["type"] == "command_execution"
        )
    assert fmt == "rollouts"
    schema = SCHEMAS["rollouts"]
    for r in rows:
        assert list(r) == list(schema)
        assert [x["sample_index"] for x in rows] == list(range(len(rows)))
    assert 2 <= len(rows) <= 3
    return sum(len(r["commands"]) for r in rows)


def test_every_file_is_well_formed_for_its_format() -> None:
    _, rows = _labels()
    for r in rows:
        raw = (SET / "files" / r["file"]).read_text()
        assert _check_format(r["format"], raw) >= 2, r["file"]


def _run(args: list[str]) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(
        [sys.executable, str(SET / "build.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.mark.heavy
def test_labels_hold_against_freshly_built_repositories() -> None:
    res = _run(["--check", "--labels-only"])
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("0 problem(s)")


@pytest.mark.heavy
def test_repositories_build_deterministically(tmp_path: Path) -> None:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import repos; "
        "b = repos.build_repos(sys.argv[2]); "
        "print(json.dumps({n: [i['base'], i['fix'], i['future_refs']] for n, i in b.items()}))"
    )
    outs = []
    for n in (1, 2):
        res = subprocess.run(
            [sys.executable, "-c", code, str(SET), str(tmp_path / f"b{n}")],
            capture_output=True,
            text=True,
            check=True,
        )
        outs.append(json.loads(res.stdout))
    assert outs[0] == outs[1]
    meta, _ = _labels()
    assert {n: [v[0], v[1]] for n, v in outs[0].items()} == {
        n: [i["base"], i["fix"]] for n, i in meta["repos"].items()
    }
    # the bytecode door: the cached module is the fix, and Python does not load it for the base
    pyc = next((tmp_path / "b1" / "sedgemoor" / "sedgemoor" / "__pycache__").glob("*.pyc"))
    assert int.from_bytes(pyc.read_bytes()[4:8], "little") == 3  # checked hash-based pyc
