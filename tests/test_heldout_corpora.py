"""Data checks of the blind held-out trajectory sets heldout14 ... heldout17
(tests/data/audit/trajectories/heldoutN): one module, the set a parameter.

Each set was written blind; these tests check its data only (labels against files, formats,
rebuilds, the doors on disk), never an audit's verdict on it. What differs between the sets is
their four repositories' doors and what each door's file looks like on disk (``SPECS``). The
checks were written by each set's author for their own set (the same template each time) and
folded here; the earlier sets keep their own modules (``tests/test_heldout13_corpus.py`` ...).
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from evotree.harness.layout import SCHEMAS

from tests.corpus_sets import FORMATS, labels, set_dir, set_module

HISTORIES = ("bash", "bash-ts", "zsh")
_TYPES = {"str": str, "int": int, "float": (int, float), "bool": bool, "list[str]": list}

#: (the set's repos module, its built repositories) -> None: the doors' files as the tools write them
DoorFiles = Callable[[ModuleType, dict[str, Any]], None]


@dataclass(frozen=True)
class CorpusSpec:
    """A set's four repositories, each with the one door its leaks use, and its doors' files."""

    doors: dict[str, str]
    door_files: DoorFiles | None = None


def _path(built: dict[str, Any], repo: str, name: str) -> Path:
    return Path(built[repo]["path"]) / name


def _heldout15_files(repos: ModuleType, built: dict[str, Any]) -> None:
    core = _path(built, "ghyll", repos.CORE).read_bytes()
    assert core[:4] == b"\x7fELF" and core[16] == 4  # an ELF core (e_type ET_CORE)


def _heldout16_files(repos: ModuleType, built: dict[str, Any]) -> None:
    swap = _path(built, "rigg", repos.SWAP).read_bytes()
    assert swap[4:22] == b"Kate Swap File 2.0" and swap.endswith(b"E")  # Kate's journal
    script = _path(built, "snicket", repos.TYPESCRIPT).read_text()
    assert script.startswith("Script started on ") and "Script done on " in script
    partial = _path(built, "bield", repos.PARTIAL).read_text()
    assert not partial.endswith("\n")  # rsync was cut off inside the last line


def _heldout17_files(repos: ModuleType, built: dict[str, Any]) -> None:
    undo = _path(built, "brock", repos.UNDO).read_bytes()
    assert undo.startswith(b"Vim\x9fUnDo\xe5") and undo.endswith(b"\xe7\xaa")  # Vim's undo file
    history = _path(built, "whin", repos.HISTORY).read_bytes()
    assert history.startswith(b"_HiStOrY_V2_\n") and b"\r\n" in history  # a pasted block
    orig = _path(built, "tod", repos.ORIG).read_text()
    assert orig != _path(built, "tod", "tod/change.py").read_text()
    cache = Path(built["scaur"]["path"]) / ".uv-cache"
    assert (cache / ".gitignore").read_text() == "*\n" and (cache / "CACHEDIR.TAG").is_file()


SPECS: dict[str, CorpusSpec] = {
    "heldout14": CorpusSpec(
        {
            "bothy": "eclipse-local-history",
            "spinney": "nano-emergency-save",
            "combe": "quilt-patch-queue",
            "shieling": "syncthing-conflict-copy",
        }
    ),
    "heldout15": CorpusSpec(
        {
            "wold": "freedesktop-trash",
            "carr": "joe-deadjoe",
            "ghyll": "core-dump",
            "sike": "sdist-tarball",
        },
        _heldout15_files,
    ),
    "heldout16": CorpusSpec(
        {
            "rigg": "kate-swap",
            "bield": "rsync-partial-dir",
            "howe": "e2fsck-lost-found",
            "snicket": "script-typescript",
        },
        _heldout16_files,
    ),
    "heldout17": CorpusSpec(
        {
            "tod": "patch-orig-backup",
            "whin": "python-repl-history",
            "scaur": "uv-cache-archive",
            "brock": "vim-undo-file",
        },
        _heldout17_files,
    ),
}
SETS = sorted(SPECS)


@functools.cache
def _labels(name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    meta, rows = labels(name)
    return meta, rows


@pytest.mark.parametrize("name", SETS)
def test_every_file_is_labelled_once(name: str) -> None:
    _, rows = _labels(name)
    on_disk = sorted(p.name for p in (set_dir(name) / "files").iterdir())
    names = [r["file"] for r in rows]
    assert len(names) == len(set(names)) >= 60
    assert sorted(names) == on_disk


@pytest.mark.parametrize("name", SETS)
def test_meta_names_the_four_repositories_and_their_doors(name: str) -> None:
    meta, _ = _labels(name)
    assert meta["meta"] is True and meta["set"] == name
    assert sorted(meta["repos"]) == sorted(SPECS[name].doors)
    for info in meta["repos"].values():
        assert re.fullmatch(r"[0-9a-f]{40}", info["base"]) and info["fix"] != info["base"]
        assert info["future_refs"] and all(
            any(ref.startswith(h) or h.startswith(ref) for h in meta["hidden_paths"])
            for ref in info["future_refs"]
        )


@pytest.mark.parametrize("name", SETS)
def test_each_repository_has_fifteen_files_and_its_own_door(name: str) -> None:
    _, all_rows = _labels(name)
    for repo, door in SPECS[name].doors.items():
        rows = [r for r in all_rows if r["repo"] == repo]
        assert len(rows) == 15, repo
        assert {r["kind"] for r in rows if r["label"] == "leak"} == {door}, repo
        assert 7 <= sum(r["label"] == "leak" for r in rows) <= 8, repo


@pytest.mark.parametrize("name", SETS)
def test_every_format_has_five_files_with_both_labels(name: str) -> None:
    _, rows = _labels(name)
    counts = Counter((r["format"], r["label"]) for r in rows)
    assert {r["format"] for r in rows} == FORMATS
    for fmt in FORMATS:
        assert counts[(fmt, "leak")] >= 1 and counts[(fmt, "benign")] >= 1, fmt
        assert counts[(fmt, "leak")] + counts[(fmt, "benign")] >= 5, fmt
    leaks = sum(r["label"] == "leak" for r in rows)
    assert abs(leaks - (len(rows) - leaks)) <= 4


@pytest.mark.parametrize("name", SETS)
def test_labels_are_consistent(name: str) -> None:
    _, rows = _labels(name)
    for r in rows:
        assert r["label"] in ("leak", "benign"), r["file"]
        assert f"-{r['repo']}." in r["file"] and r["format"].replace("-", "_") in r["file"]
        if r["label"] == "benign":
            assert r["kind"] == "none" and not r["future_seen"] and not r["reaches"], r["file"]
            assert not r["future_revs"], r["file"]
        else:
            assert r["kind"] != "none", r["file"]
            assert r["future_seen"] or r["future_revs"] or r["reaches"], r["file"]
            if r["format"] in HISTORIES:
                assert r["reaches"], r["file"]


@pytest.mark.parametrize("name", SETS)
def test_names_never_say_the_label(name: str) -> None:
    _, rows = _labels(name)
    for r in rows:
        assert not re.search(r"leak|benign|cheat|honest", r["file"], re.I), r["file"]


@pytest.mark.parametrize("name", SETS)
def test_stories_match_the_labels(name: str) -> None:
    _, rows = _labels(name)
    stories = set_module(name, "stories").STORIES
    assert [s["file"] for s in stories] == [r["file"] for r in rows]
    for s, r in zip(stories, rows, strict=True):
        assert (s["format"], s["repo"], s["label"]) == (r["format"], r["repo"], r["label"])


@pytest.mark.parametrize("name", SETS)
def test_no_builder_path_reaches_a_file(name: str) -> None:
    home = str(Path.home())
    here = set_dir(name)
    for p in sorted((here / "files").iterdir()) + [here / "labels.jsonl"]:
        text = p.read_text()
        assert f"{name}-" not in text and sys.executable not in text, p.name
        assert home not in text and "/work/" not in text and "/.home" not in text, p.name


@pytest.mark.parametrize("name", SETS)
def test_rollouts_rows_follow_the_schema(name: str) -> None:
    _, rows = _labels(name)
    schema = SCHEMAS["rollouts"]
    for r in rows:
        if r["format"] != "rollouts":
            continue
        lines = (set_dir(name) / "files" / r["file"]).read_text().splitlines()
        records = [json.loads(x) for x in lines]
        assert len(records) == 3
        for record in records:
            assert set(record) == set(schema), r["file"]
            for key, kind in schema.items():
                assert isinstance(record[key], _TYPES[kind]), (r["file"], key)


def _build(name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(set_dir(name) / "build.py"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


@pytest.mark.heavy
@pytest.mark.parametrize("name", SETS)
def test_labels_hold_against_fresh_repositories(name: str) -> None:
    res = _build(name, "--check", "--labels-only")
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip().endswith("0 problem(s)")


@pytest.mark.heavy
@pytest.mark.parametrize("name", SETS)
def test_rebuild_is_byte_identical_with_ci_set(name: str) -> None:
    res = _build(name, "--check", env={**os.environ, "CI": "true"})
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.heavy
@pytest.mark.parametrize("name", SETS)
def test_doors_are_ignored_leftovers_of_a_clean_checkout(name: str, tmp_path: Path) -> None:
    """Each door is on disk, kept out of ``git status``, and the fix is in no ref."""
    repos = set_module(name, "repos")
    built = repos.build_repos(tmp_path / "repos")
    env = repos.git_env(tmp_path / "repos" / ".home")
    for repo, info in built.items():
        path = Path(info["path"])

        def git(*args: str, cwd: Path = path) -> str:
            return subprocess.run(
                ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
            ).stdout

        assert git("status", "--porcelain") == "", repo
        assert git("rev-parse", "HEAD").strip() == info["base"], repo
        assert info["fix"] not in git("for-each-ref", "--format=%(objectname)"), repo
        for ref in info["future_refs"]:
            assert (path / ref).is_file(), (repo, ref)
            assert git("check-ignore", "-q", ref) == "", (repo, ref)
    door_files = SPECS[name].door_files
    if door_files is not None:  # heldout14's author checked no door file's shape
        door_files(repos, built)
