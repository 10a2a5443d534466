"""`evotree init`: the workspace, v0 = HEAD, and every bad input leaving nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, ledger_commits, make_repo
from evotree.api import init as evotree_init  # noqa: E402
from evotree.core.errors import (
    AlreadyExists,
    AlreadyInitialized,
    ConfigError,
    MissingIdentity,
    NotAGitRepository,
    NotAWorkspace,
)
from evotree.core.workspace import Workspace, init_workspace


def _evotree_refs(repo: Path) -> list[str]:
    out = git(repo, "for-each-ref", "--format=%(refname)", "refs/evotree/", "refs/heads/evotree/")
    return out.splitlines()


def test_init_records_v0_as_root_and_champion(repo: Path) -> None:
    before = git(repo, "rev-parse", "HEAD")
    result = evotree_init(repo, domain="math")
    head = git(repo, "rev-parse", "HEAD")
    # evotree.toml was new, so it was committed alone on top of the user's HEAD
    assert result.config_committed
    assert git(repo, "rev-parse", "HEAD~1") == before
    committed = set(git(repo, "show", "--name-only", "--format=", "HEAD").splitlines())
    assert committed == set(result.files) and "evotree.toml" in committed
    # the domain's hidden judge config is in the judge store, not in the branch or the checkout
    assert "judge/math.toml" not in committed and not (repo / "judge").exists()
    assert result.judge_files == ["judge/math.toml"]
    assert git(repo, "ls-tree", "-r", "--name-only", "refs/evotree/judge") == "judge/math.toml"
    assert git(repo, "rev-parse", "refs/evotree/judge") == result.judge_commit
    assert "judge" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    assert result.commit == head
    assert git(repo, "rev-parse", "refs/evotree/champion") == head
    assert git(repo, "rev-parse", "refs/heads/evotree/v0") == head
    ws = Workspace.open(repo)
    assert ws.champion() == "v0"
    v0 = ws.resolve("v0")
    assert (
        v0.parents == []
        and v0.base_commit == head
        and v0.created_by == "Ada Tester <ada@example.com>"
    )
    assert ws.config.workspace.domain == "math"
    assert ledger_commits(repo) == 1
    assert ws.ledger.meta()["judge"] == {
        "commit": result.judge_commit
    }  # the judge in force: the ledger's


def test_state_dir_is_ignored_by_git(repo: Path) -> None:
    init_workspace(repo)
    assert (repo / ".evotree").is_dir()
    (repo / ".evotree" / "scratch.txt").write_text("x")
    assert git(repo, "status", "--porcelain") == ""


def test_existing_valid_config_is_kept(repo: Path) -> None:
    (repo / "evotree.toml").write_text("[workspace]\ndomain = 'gym'\n")
    git(repo, "add", "evotree.toml")
    git(repo, "commit", "-qm", "my config")
    head = git(repo, "rev-parse", "HEAD")
    result = init_workspace(repo)
    assert not result.config_committed
    assert result.commit == head
    assert Workspace.open(repo).config.workspace.domain == "gym"


def test_init_commits_only_the_config(repo: Path) -> None:
    (repo / "train.py").write_text("print('work in progress')\n")
    git(repo, "add", "train.py")
    init_workspace(repo)
    # the user's staged change stays staged, not swept into evotree's commit
    assert git(repo, "show", "--name-only", "--format=", "HEAD") == "evotree.toml"
    assert "M  train.py" in git(repo, "status", "--porcelain")


def test_init_from_subdirectory(repo: Path) -> None:
    (repo / "sub").mkdir()
    result = init_workspace(repo / "sub")
    assert Path(result.root) == repo.resolve()
    assert Workspace.open(repo / "sub").root == repo.resolve()


def test_not_a_git_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotAGitRepository, match="not a git repository"):
        init_workspace(plain)
    assert list(plain.iterdir()) == []


def test_no_commits_yet_makes_the_first_commit(tmp_path: Path) -> None:
    """`git init` then `evotree init`: init makes the first commit itself, with only the files
    it wrote (item 2; the user's other files stay uncommitted)."""
    empty = make_repo(tmp_path / "empty", commit=False)
    init_workspace(empty)
    assert git(empty, "rev-list", "--count", "HEAD") == "1"
    assert "evotree.toml" in git(empty, "ls-tree", "--name-only", "HEAD").split()


def test_missing_identity(tmp_path: Path) -> None:
    anon = make_repo(tmp_path / "anon", identity=False, commit=False)
    git(anon, "add", "-A")
    git(anon, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "init")
    with pytest.raises(MissingIdentity, match="user.name and user.email missing") as info:
        init_workspace(anon)
    assert "git config user.name" in (info.value.fix or "")
    assert _evotree_refs(anon) == []
    assert not (anon / "evotree.toml").exists()


def test_identity_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    anon = make_repo(tmp_path / "anon", identity=False, commit=False)
    git(anon, "add", "-A")
    git(anon, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "init")
    for var, value in (
        ("GIT_AUTHOR_NAME", "Env Person"),
        ("GIT_AUTHOR_EMAIL", "env@example.com"),
        ("GIT_COMMITTER_NAME", "Env Person"),
        ("GIT_COMMITTER_EMAIL", "env@example.com"),
    ):
        monkeypatch.setenv(var, value)
    init_workspace(anon)
    assert Workspace.open(anon).resolve("v0").created_by == "Env Person <env@example.com>"


def test_already_initialized_changes_nothing(repo: Path) -> None:
    init_workspace(repo)
    refs = {r: git(repo, "rev-parse", r) for r in _evotree_refs(repo)}
    with pytest.raises(AlreadyInitialized, match="already an evotree workspace"):
        init_workspace(repo)
    assert {r: git(repo, "rev-parse", r) for r in _evotree_refs(repo)} == refs


def test_malformed_existing_config_names_key_and_line(repo: Path) -> None:
    (repo / "evotree.toml").write_text(
        "[workspace]\ndomain = 'math'\n[budget]\nmax_episodes = -3\n"
    )
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(
        ConfigError, match=r"evotree.toml:4: budget.max_episodes: expected 0 \(unlimited\) or more"
    ):
        init_workspace(repo)
    assert git(repo, "rev-parse", "HEAD") == head
    assert _evotree_refs(repo) == []
    assert not (repo / ".evotree").exists()


def test_stray_v0_branch_is_reported(repo: Path) -> None:
    git(repo, "branch", "evotree/v0")
    with pytest.raises(
        AlreadyExists, match="branch evotree/v0 already exists but there is no ledger"
    ):
        init_workspace(repo)
    assert not (repo / "evotree.toml").exists()
    assert _evotree_refs(repo) == ["refs/heads/evotree/v0"]


def test_failed_commit_hook_leaves_nothing(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'hook says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(Exception, match="hook says no"):
        init_workspace(repo)
    assert git(repo, "rev-parse", "HEAD") == head
    assert not (repo / "evotree.toml").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert _evotree_refs(repo) == []


def test_failed_commit_hook_restores_the_judge_files(repo: Path) -> None:
    """Init moves committed and uncommitted judge files out of the checkout; a failed commit puts them back."""
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text("print('judge')\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "judge")
    (repo / "judge" / "draft.json").write_text("{}\n")  # not committed
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'hook says no' >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(Exception, match="hook says no"):
        init_workspace(repo)
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / "judge" / "eval.py").read_text() == "print('judge')\n"
    assert (repo / "judge" / "draft.json").read_text() == "{}\n"
    assert git(repo, "status", "--porcelain") == "?? judge/draft.json"
    assert _evotree_refs(repo) == []


def test_committed_judge_moves_to_the_judge_ref(repo: Path) -> None:
    """A judge committed before init: its files go to refs/evotree/judge and init commits their removal."""
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text("print('judge')\n")
    (repo / "judge" / "hidden.json").write_text('{"validation": ["SECRET"]}\n')
    (repo / ".gitignore").write_text("*.cache\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "judge")
    (repo / "judge" / "local.cache").write_text("ignored\n")  # ignored by git: left alone
    before = git(repo, "rev-parse", "HEAD")
    result = init_workspace(repo)
    assert result.judge_removed == ["judge/eval.py", "judge/hidden.json"]
    assert result.judge_files == ["judge/eval.py", "judge/hidden.json"]
    assert git(repo, "ls-tree", "-r", "--name-only", "HEAD") == "\n".join(
        [".gitignore", "evotree.toml", "recipe.toml", "train.py"]
    )
    assert git(repo, "rev-parse", "HEAD~1") == before and result.commit == git(
        repo, "rev-parse", "HEAD"
    )
    assert git(repo, "show", "refs/evotree/judge:judge/hidden.json") == '{"validation": ["SECRET"]}'
    assert sorted(p.name for p in (repo / "judge").iterdir()) == ["local.cache"]
    assert git(repo, "status", "--porcelain") == ""
    assert any("remain in git history" in n for n in result.notes)
    assert any("local.cache" in n for n in result.notes)
    data = next(Workspace.open(repo).ledger.entries()).event.data
    assert (
        data["judge"]["commit"] == result.judge_commit
        and data["judge"]["removed_from_branch"] == result.judge_removed
    )


def test_uncommitted_judge_file_goes_to_the_judge_ref(repo: Path) -> None:
    """A judge/ present but never committed (e.g. judge/gym.toml written by hand) is stored, not lost."""
    (repo / "judge").mkdir()
    (repo / "judge" / "gym.toml").write_text("[judge]\n")
    git(repo, "add", "judge/gym.toml")  # staged, not committed: it must not stay staged either
    result = init_workspace(repo)
    assert result.judge_files == ["judge/gym.toml"] and result.judge_removed == []
    assert git(repo, "show", "refs/evotree/judge:judge/gym.toml") == "[judge]"
    assert not (repo / "judge").exists()
    assert git(repo, "status", "--porcelain") == ""
    assert "judge" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")


def test_stale_judge_ref_is_reported(repo: Path) -> None:
    git(repo, "update-ref", "refs/evotree/judge", "HEAD")
    with pytest.raises(
        AlreadyExists, match="refs/evotree/judge already exists but there is no ledger"
    ):
        init_workspace(repo)


def test_open_requires_a_workspace(repo: Path) -> None:
    with pytest.raises(NotAWorkspace, match="not an evotree workspace"):
        Workspace.open(repo)


def test_bare_repository_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "--bare", "--quiet", str(bare))
    with pytest.raises(NotAGitRepository, match="bare repository"):
        init_workspace(bare)
