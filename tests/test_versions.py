"""The version tree: branch, merge, abandon, worktrees, tree/show/log — on real repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import commit_file, git, ledger_commits
from evotree.core.errors import (
    AlreadyExists,
    DirtyState,
    InvalidState,
    InvalidVersionId,
    MergeConflict,
    UnknownVersion,
)
from evotree.core.versions import (
    abandon_version,
    create_version,
    log_entries,
    merge_versions,
    prune_worktrees,
    restore_worktree,
    show_version,
    tree_view,
)


def _branches(repo: Path) -> list[str]:
    return git(
        repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/evotree/"
    ).splitlines()


def _worktrees(repo: Path) -> list[str]:
    return [
        line.split(" ", 1)[1]
        for line in git(repo, "worktree", "list", "--porcelain").splitlines()
        if line.startswith("worktree ")
    ]


def test_branch_creates_branch_worktree_and_event(ws: Any, repo: Path) -> None:
    v1 = create_version(ws, hypothesis="filter dead groups")
    assert v1.id == "v1" and v1.parents == ["v0"] and v1.branch == "evotree/v1"
    path = repo / ".evotree" / "worktrees" / "v1"
    assert v1.worktree == ".evotree/worktrees/v1"
    assert (path / "recipe.toml").exists()
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD") == "evotree/v1"
    assert (
        git(repo, "rev-parse", "evotree/v1")
        == git(repo, "rev-parse", "evotree/v0")
        == v1.base_commit
    )
    assert v1.created_by == "Ada Tester <ada@example.com>"
    assert ledger_commits(repo) == 2
    event = log_entries(ws, limit=1)[0]
    assert event["kind"] == "version.created" and event["version"] == "v1"
    assert (
        event["data"]["parents"] == ["v0"] and event["data"]["hypothesis"] == "filter dead groups"
    )
    # the main checkout is untouched
    assert git(repo, "status", "--porcelain") == ""


def test_ids_are_sequential_and_from_parent_tip(ws: Any, repo: Path) -> None:
    v1 = create_version(ws, hypothesis="a")
    commit_file(repo / v1.worktree, "recipe.toml", "learning_rate = 3e-5\n", "raise lr")
    tip = git(repo, "rev-parse", "evotree/v1")
    v2 = create_version(ws, hypothesis="b", parent="v1")
    assert v2.id == "v2" and v2.parents == ["v1"] and v2.base_commit == tip
    assert (repo / v2.worktree / "recipe.toml").read_text() == "learning_rate = 3e-5\n"
    v3 = create_version(ws, hypothesis="c", parent="champion")
    assert v3.id == "v3" and v3.parents == ["v0"]


def test_custom_name_and_worktree(ws: Any, repo: Path, tmp_path: Path) -> None:
    where = tmp_path / "elsewhere" / "wt"
    rec = create_version(ws, hypothesis="named", name="v7-std", worktree=where)
    assert rec.id == "v7-std" and rec.worktree == str(where.resolve())
    assert (where / "recipe.toml").exists()
    # automatic ids continue from the highest number, not from custom names
    assert create_version(ws, hypothesis="next").id == "v1"
    v9 = create_version(ws, hypothesis="explicit number", name="v9")
    assert v9.id == "v9"
    assert create_version(ws, hypothesis="after v9").id == "v10"


def test_stray_branch_is_skipped_by_automatic_ids(ws: Any, repo: Path) -> None:
    git(repo, "branch", "evotree/v1")
    rec = create_version(ws, hypothesis="x")
    assert rec.id == "v2"


def _nothing_changed(repo: Path, before: tuple[Any, ...]) -> None:
    assert (ledger_commits(repo), _branches(repo), _worktrees(repo)) == before


def _state(repo: Path) -> tuple[Any, ...]:
    return (ledger_commits(repo), _branches(repo), _worktrees(repo))


def test_taken_name_branch_and_path_leave_nothing(ws: Any, repo: Path, tmp_path: Path) -> None:
    create_version(ws, hypothesis="one")
    before = _state(repo)
    with pytest.raises(AlreadyExists, match="version v1 already exists"):
        create_version(ws, hypothesis="dup", name="v1")
    git(repo, "branch", "evotree/v5")
    before = _state(repo)
    with pytest.raises(AlreadyExists, match="branch evotree/v5 already exists"):
        create_version(ws, hypothesis="dup", name="v5")
    _nothing_changed(repo, before)
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "file").write_text("mine")
    with pytest.raises(AlreadyExists, match="worktree path .*occupied is already taken"):
        create_version(ws, hypothesis="x", worktree=occupied)
    _nothing_changed(repo, before)
    default = repo / ".evotree" / "worktrees" / "v2"
    default.mkdir(parents=True)
    (default / "junk").write_text("x")
    with pytest.raises(AlreadyExists, match="already taken"):
        create_version(ws, hypothesis="x", name="v2")
    _nothing_changed(repo, before)
    assert (occupied / "file").read_text() == "mine"


def test_an_automatic_id_skips_a_leftover_folder(ws: Any, repo: Path, tmp_path: Path) -> None:
    """A folder left at an id's default worktree path (a process that died between its checkout
    and its ledger entry) is skipped by automatic ids, not written into and not a failure of
    every later `evotree branch`. A link there is not skipped: refused, and said (a planted
    link; tests/test_agent.py has the agent's)."""
    create_version(ws, hypothesis="one")
    worktrees = repo / ".evotree" / "worktrees"
    (worktrees / "v2").mkdir(parents=True)
    (worktrees / "v2" / "junk").write_text("x")
    (worktrees / "v3").mkdir()  # empty: free, used
    record = create_version(ws, hypothesis="two")
    assert record.id == "v3"
    assert (worktrees / "v2" / "junk").read_text() == "x"
    assert "evotree/v2" not in _branches(repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (worktrees / "v4").symlink_to(elsewhere)
    before = _state(repo)
    with pytest.raises(AlreadyExists, match="symbolic link"):
        create_version(ws, hypothesis="three")
    _nothing_changed(repo, before)
    assert list(elsewhere.iterdir()) == []


def test_bad_parent_and_hypothesis(ws: Any, repo: Path) -> None:
    before = _state(repo)
    with pytest.raises(UnknownVersion, match="unknown version 'v42'"):
        create_version(ws, hypothesis="x", parent="v42")
    with pytest.raises(InvalidVersionId):
        create_version(ws, hypothesis="x", parent="../etc")
    with pytest.raises(InvalidState, match="hypothesis .* is required"):
        create_version(ws, hypothesis="   ")
    with pytest.raises(InvalidVersionId):
        create_version(ws, hypothesis="x", name="bad name")
    _nothing_changed(repo, before)


def test_unknown_version_suggests_close_ids(ws: Any) -> None:
    create_version(ws, hypothesis="x")
    with pytest.raises(UnknownVersion, match="did you mean v1"):
        ws.resolve("v11")


def test_missing_parent_branch_is_explained(ws: Any, repo: Path) -> None:
    create_version(ws, hypothesis="x")
    abandon_version(ws, "v1", reason="r")
    git(repo, "branch", "-D", "evotree/v1")
    with pytest.raises(InvalidState, match="branch evotree/v1 of v1 is missing"):
        create_version(ws, hypothesis="y", parent="v1")


def test_abandon_keeps_branch_removes_worktree(ws: Any, repo: Path) -> None:
    v1 = create_version(ws, hypothesis="3x lr")
    commit_file(repo / v1.worktree, "recipe.toml", "lr = 3e-5\n", "lr")
    tip = git(repo, "rev-parse", "evotree/v1")
    rec = abandon_version(ws, "v1", reason="reward collapsed")
    assert rec.status == "abandoned" and rec.reason == "reward collapsed" and rec.worktree is None
    assert not (repo / ".evotree" / "worktrees" / "v1").exists()
    assert git(repo, "rev-parse", "evotree/v1") == tip
    view = {v.id: v for v in tree_view(ws).versions}
    assert view["v1"].status == "abandoned"
    event = log_entries(ws, limit=1)[0]
    assert event["kind"] == "version.abandoned" and event["data"]["reason"] == "reward collapsed"


def test_abandon_refuses_dirty_worktree_without_force(ws: Any, repo: Path) -> None:
    v1 = create_version(ws, hypothesis="x")
    wt = repo / v1.worktree
    (wt / "notes.txt").write_text("unsaved")
    before = _state(repo)
    with pytest.raises(DirtyState, match=r"uncommitted changes: notes.txt") as info:
        abandon_version(ws, "v1", reason="r")
    assert info.value.details["paths"] == ["notes.txt"]
    _nothing_changed(repo, before)
    assert (wt / "notes.txt").exists()
    rec = abandon_version(ws, "v1", reason="r", force=True)
    assert rec.status == "abandoned" and not wt.exists()


def test_abandon_champion_twice_and_empty_reason(ws: Any, repo: Path) -> None:
    with pytest.raises(InvalidState, match="v0 is the champion"):
        abandon_version(ws, "champion", reason="r")
    create_version(ws, hypothesis="x")
    with pytest.raises(InvalidState, match="reason"):
        abandon_version(ws, "v1", reason="")
    abandon_version(ws, "v1", reason="first")
    with pytest.raises(InvalidState, match=r"already abandoned \(first\)"):
        abandon_version(ws, "v1", reason="second")


def test_abandon_when_worktree_deleted_by_hand(ws: Any, repo: Path) -> None:
    import shutil

    v1 = create_version(ws, hypothesis="x")
    shutil.rmtree(repo / v1.worktree)
    rec = abandon_version(ws, "v1", reason="gone")
    assert rec.status == "abandoned"
    assert str(repo / ".evotree/worktrees/v1") not in _worktrees(repo)


def _two_versions_changing(
    ws: Any, repo: Path, a_text: str, b_text: str, *, same_file: bool
) -> None:
    v1 = create_version(ws, hypothesis="a")
    v2 = create_version(ws, hypothesis="b")
    commit_file(repo / v1.worktree, "recipe.toml", a_text, "change a")
    commit_file(
        repo / v2.worktree, "recipe.toml" if same_file else "extra.toml", b_text, "change b"
    )


def test_merge_creates_version_with_two_parents(ws: Any, repo: Path) -> None:
    _two_versions_changing(
        ws, repo, "learning_rate = 3e-5\nstd_filter = false\n", "beta = 0.1\n", same_file=False
    )
    merged = merge_versions(ws, "v1", "v2", message="combine lr and beta")
    assert merged.id == "v3" and merged.parents == ["v1", "v2"]
    parents = git(repo, "rev-list", "--parents", "-n", "1", "evotree/v3").split()[1:]
    assert parents == [git(repo, "rev-parse", "evotree/v1"), git(repo, "rev-parse", "evotree/v2")]
    wt = repo / merged.worktree
    assert (wt / "recipe.toml").read_text().startswith("learning_rate = 3e-5")
    assert (wt / "extra.toml").read_text() == "beta = 0.1\n"
    view = {v.id: v for v in tree_view(ws).versions}
    assert view["v3"].parent == "v1" and view["v3"].parents == ["v1", "v2"]
    assert "v3" in view["v1"].children and "v3" in view["v2"].children


def test_merge_conflict_lists_files_and_creates_nothing(ws: Any, repo: Path) -> None:
    _two_versions_changing(
        ws, repo, "learning_rate = 3e-5\n", "learning_rate = 1e-4\n", same_file=True
    )
    before = _state(repo)
    objects_before = git(repo, "count-objects")
    with pytest.raises(MergeConflict, match=r"conflicts in 1 file\(s\): recipe.toml") as info:
        merge_versions(ws, "v1", "v2", message="combine")
    assert info.value.details["files"] == ["recipe.toml"]
    _nothing_changed(repo, before)
    assert git(repo, "count-objects") == objects_before


def test_merge_with_itself_is_refused(ws: Any) -> None:
    create_version(ws, hypothesis="a")
    with pytest.raises(InvalidState, match="cannot merge v1 with itself"):
        merge_versions(ws, "v1", "v1", message="m")


def test_prune_removes_inactive_worktrees_and_forgets_missing(ws: Any, repo: Path) -> None:
    import shutil

    v1 = create_version(ws, hypothesis="keep")
    v2 = create_version(ws, hypothesis="gone by hand")
    create_version(ws, hypothesis="restored then pruned")
    abandon_version(ws, "v3", reason="r")
    restore_worktree(ws, "v3")
    shutil.rmtree(repo / v2.worktree)
    result = prune_worktrees(ws)
    assert result.removed == ["v3"] and result.forgotten == ["v2"] and result.skipped_dirty == {}
    assert (repo / v1.worktree).exists()
    assert not (repo / ".evotree/worktrees/v3").exists()
    records = {v.id: v for v in tree_view(ws).versions}
    assert records["v2"].worktree is None and records["v3"].worktree is None
    assert records["v1"].worktree == v1.worktree
    assert str(repo / v2.worktree) not in _worktrees(repo)
    # idempotent
    assert prune_worktrees(ws).removed == []


def test_prune_skips_dirty_unless_forced(ws: Any, repo: Path) -> None:
    create_version(ws, hypothesis="x")
    abandon_version(ws, "v1", reason="r")
    rec = restore_worktree(ws, "v1")
    (repo / rec.worktree / "scratch.txt").write_text("x")
    result = prune_worktrees(ws)
    assert result.skipped_dirty == {"v1": ["scratch.txt"]} and result.removed == []
    assert prune_worktrees(ws, force=True).removed == ["v1"]


def test_restore_worktree(ws: Any, repo: Path) -> None:
    v1 = create_version(ws, hypothesis="x")
    commit_file(repo / v1.worktree, "recipe.toml", "lr = 9\n", "c")
    abandon_version(ws, "v1", reason="r")
    rec = restore_worktree(ws, "v1")
    assert rec.status == "abandoned" and rec.worktree == ".evotree/worktrees/v1"
    assert (repo / rec.worktree / "recipe.toml").read_text() == "lr = 9\n"
    with pytest.raises(AlreadyExists, match="already has a worktree"):
        restore_worktree(ws, "v1")
    assert log_entries(ws, limit=1)[0]["kind"] == "worktree.restored"


def test_show_version(ws: Any, repo: Path) -> None:
    v1 = create_version(ws, hypothesis="x")
    commit_file(repo / v1.worktree, "a.txt", "1", "first change")
    commit_file(repo / v1.worktree, "b.txt", "2", "second change")
    (repo / v1.worktree / "dirty.txt").write_text("d")
    detail = show_version(ws, "v1")
    assert [c["summary"] for c in detail.commits] == ["second change", "first change"]
    assert detail.tip == git(repo, "rev-parse", "evotree/v1")
    assert detail.worktree_exists and detail.uncommitted == ["dirty.txt"]
    assert [e["kind"] for e in detail.events] == ["version.created"]
    champion = show_version(ws, "champion")
    assert (
        champion.version.id == "v0"
        and champion.version.champion
        and champion.version.children == ["v1"]
    )


def test_log_filters_and_limits(ws: Any) -> None:
    create_version(ws, hypothesis="a")
    create_version(ws, hypothesis="b")
    abandon_version(ws, "v2", reason="r")
    kinds = [e["kind"] for e in log_entries(ws)]
    assert kinds == [
        "version.abandoned",
        "version.created",
        "version.created",
        "workspace.initialized",
    ]
    assert [e["kind"] for e in log_entries(ws, version="v2")] == [
        "version.abandoned",
        "version.created",
    ]
    assert len(log_entries(ws, limit=2)) == 2
    with pytest.raises(UnknownVersion):
        log_entries(ws, version="v9")


def test_tree_view_shows_negative_evidence(ws: Any) -> None:
    create_version(ws, hypothesis="a")
    create_version(ws, hypothesis="b", parent="v1")
    abandon_version(ws, "v2", reason="worse")
    view = tree_view(ws)
    assert view.champion == "v0"
    assert [(v.id, v.parent, v.status, v.champion) for v in view.versions] == [
        ("v0", None, "active", True),
        ("v1", "v0", "active", False),
        ("v2", "v1", "abandoned", False),
    ]


def test_commands_work_from_inside_a_version_worktree(ws: Any, repo: Path) -> None:
    from evotree.core.workspace import Workspace

    v1 = create_version(ws, hypothesis="x")
    inner = Workspace.open(repo / v1.worktree)
    assert inner.root == repo.resolve()
    v2 = create_version(inner, hypothesis="from inside")
    assert (
        repo / ".evotree" / "worktrees" / "v2"
    ).exists() and v2.worktree == ".evotree/worktrees/v2"


def test_long_lineage_renders_every_version(ws: Any, repo: Path) -> None:
    from conftest import Cli

    parent = "v0"
    for _ in range(30):
        parent = create_version(ws, hypothesis=f"step after {parent}", parent=parent).id
    out = Cli(repo)("tree").output
    for n in range(31):
        assert f"v{n} " in out, f"v{n} missing from the text tree"
    assert "(from v29)" in out
