"""The tree travels with git: push the refs, clone, fetch them, see the same tree."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Cli, commit_file, git
from fixtures_ws import EVOTREE_SPECS, bare_remote, clone_as
from evotree.core.versions import abandon_version, create_version, merge_versions


def test_push_clone_fetch_shows_same_tree(ws: Any, repo: Path, tmp_path: Path) -> None:
    v1 = create_version(ws, hypothesis="filter dead groups")
    v2 = create_version(ws, hypothesis="lr")
    commit_file(repo / v1.worktree, "a.txt", "a", "a")
    commit_file(repo / v2.worktree, "b.txt", "b", "b")
    merge_versions(ws, "v1", "v2", message="both")
    abandon_version(ws, "v2", reason="worse")
    original = Cli(repo).json("tree")

    bare = bare_remote(repo, tmp_path / "origin.git", how="all")

    clone = clone_as(bare, tmp_path / "clone", "Bo Reviewer", "bo@example.com")
    # a plain clone does not carry the ledger: evotree says how to fetch it
    err = Cli(clone).json("tree", code=3)["error"]
    assert "refs/evotree/*" in err["fix"]
    git(clone, "fetch", "--quiet", "origin", *EVOTREE_SPECS)
    cloned = Cli(clone).json("tree")

    def comparable(tree: dict) -> list[dict]:
        return [{k: v for k, v in version.items()} for version in tree["versions"]]

    assert cloned["champion"] == original["champion"] == "v0"
    assert comparable(cloned) == comparable(original)
    assert {v["id"]: v["status"] for v in cloned["versions"]}["v2"] == "abandoned"
    # the clone can continue the tree; ids continue after the shared ones
    new = Cli(clone).json("branch", "--from", "v3", "-m", "from the clone")
    assert new["id"] == "v4" and new["created_by"] == "Bo Reviewer <bo@example.com>"
    assert (clone / ".evotree" / ".gitignore").exists()
    # and the same log
    assert [e["commit"] for e in Cli(clone).json("log")["events"]][1:] == [
        e["commit"] for e in Cli(repo).json("log")["events"]
    ]
    assert json.loads(json.dumps(cloned))  # plain JSON all the way
