"""Revisions resolved as git resolves them: every revision a git command names is
resolved in the task repository and judged by ancestry relative to the base, not by its spelling
(bare tags and branches, ORIG_HEAD, FETCH_HEAD, stash@{n}, reflog selectors, @{-1}, ^{}, ranges,
hashes). Without the repository, the spelling decides as before, with its known gaps closed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.commands import classify_command
from evotree.harness.audit.ancestry import Ancestry
from evotree.harness.audit.trajectories import audit_trajectories
from evotree.harness.audit.steps import Step, Trajectory


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Base on main; the fix on branch ``fix`` tagged v1.1.0; an older release v1.0.0; ORIG_HEAD and
    FETCH_HEAD left pointing at the fix (as an image's reset and fetch leave them); a stash; the
    previous branch (@{-1}) is ``fix``."""
    repo = make_repo(tmp_path_factory.mktemp("rev") / "task")
    git(repo, "tag", "v1.0.0")
    (repo / "f.py").write_text("value = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    old = git(repo, "rev-parse", "HEAD~1")
    git(repo, "checkout", "-qb", "fix")
    (repo / "f.py").write_text("value = 2\n")
    git(repo, "commit", "-qam", "fix")
    fix = git(repo, "rev-parse", "HEAD")
    git(repo, "tag", "v1.1.0")
    git(repo, "checkout", "-q", "main")
    (repo / "f.py").write_text("value = 3\n")
    git(repo, "stash", "-q")
    git(repo, "update-ref", "ORIG_HEAD", fix)
    (repo / ".git" / "FETCH_HEAD").write_text(f"{fix}\t\tbranch 'fix' of origin\n")
    return {"repo": str(repo), "base": base, "fix": fix, "old": old}


def _flagged(
    task: dict[str, str] | None,
    *commands: str,
    prompt: str | None = None,
    outputs: tuple[str | None, ...] = (),
) -> bool:
    steps = [Step(c, outputs[k] if k < len(outputs) else None) for k, c in enumerate(commands)]
    traj = Trajectory("t", "shell", steps, prompt=prompt)
    if task is None:
        return audit_trajectories([traj]).flagged == 1
    return audit_trajectories([traj], repo=task["repo"], base=task["base"]).flagged == 1


@pytest.mark.parametrize(
    "command",
    [
        "git restore --source=v1.1.0 f.py",
        "git checkout v1.1.0 -- f.py",
        "git show v1.1.0",
        "git show v1.1.0^{}:f.py",
        "git show fix:f.py",
        "git diff fix",
        "git log -p HEAD..v1.1.0",
        "git show ORIG_HEAD:f.py",
        "git diff ORIG_HEAD",
        "git show FETCH_HEAD",
        "git show stash@{0}",
        "git show @{-1}:f.py",
        "git checkout -",
        "git cat-file -p v1.1.0:f.py",
        "git diff-tree -p v1.1.0",
        "git ls-tree -r fix",
    ],
    ids=lambda c: c,
)
def test_revisions_beyond_the_base_are_leaks_whatever_their_spelling(
    task: dict[str, str], command: str
) -> None:
    assert _flagged(task, command), command


@pytest.mark.parametrize(
    "command",
    [
        "git show v1.0.0:recipe.toml",
        "git diff v1.0.0",
        "git cat-file -p HEAD:f.py",
        "git cat-file -t HEAD~1",
        "git checkout main",
        "git show main:f.py",
        "git log v1.1.0..HEAD",
        "git show HEAD~1:recipe.toml",
        "git show f.py",
        "git log -p -- f.py",
    ],
    ids=lambda c: c,
)
def test_look_alikes_resolving_to_the_base_or_before_are_not(
    task: dict[str, str], command: str
) -> None:
    assert not _flagged(task, command), command


def test_ancestor_hash_is_cleared_and_future_hash_is_not(task: dict[str, str]) -> None:
    assert not _flagged(task, f"git show {task['old'][:8]}")
    assert _flagged(task, f"git show {task['fix'][:8]}")
    ancestry = Ancestry(task["repo"], task["base"])
    assert ancestry.resolve("v1.1.0")[0] == "future" and ancestry.resolve("v1.0.0")[0] == "ancestor"
    assert (
        ancestry.resolve("HEAD..v1.1.0")[0] == "future"
        and ancestry.resolve("v1.1.0..HEAD")[0] == "ancestor"
    )
    assert ancestry.resolve("v1.1.0..HEAD", both_ends=True)[0] == "future"
    assert ancestry.resolve("nonexistent-thing")[0] == "unknown"


@pytest.mark.parametrize(
    "command",
    [
        "git restore --source=v1.1.0 f",
        "git checkout v1.1.0 -- f",
        "git show ORIG_HEAD:path",
        "git diff ORIG_HEAD",
        "git cat-file --batch-all-objects --batch-check",
        "git show @{-1}:f",
    ],
    ids=lambda c: c,
)
def test_spellings_the_file_alone_now_catches(command: str) -> None:
    assert any(h.severity == "high" for h in classify_command(command)), command


def test_file_alone_look_alikes() -> None:
    # git cat-file of HEAD is git show HEAD
    assert not any(h.severity == "high" for h in classify_command("git cat-file -p HEAD:src/x.py"))
    # ORIG_HEAD the trajectory set itself (its own reset) is its own HEAD
    assert not _flagged(None, "git reset --hard HEAD~1", "git diff ORIG_HEAD")
    assert _flagged(None, "git status", "git diff ORIG_HEAD")


def test_a_hash_quoted_by_the_task_prompt_is_not_a_leak_alone() -> None:
    prompt = "The regression came with commit 1a2b3c4d (see the issue)."
    assert not _flagged(None, "git show 1a2b3c4d", prompt=prompt)
    assert _flagged(None, "git show 1a2b3c4d")


def test_rev_parse_output_is_no_clean_provenance() -> None:
    """`git rev-parse origin/fix` printed the id; `git diff-tree -p <id>` used it."""
    future = "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"
    assert _flagged(
        None, "git rev-parse origin/fix", f"git diff-tree -p {future[:10]}", outputs=(future, None)
    )
    # look-alike: `git log -3` printed it (HEAD's own history)
    assert not _flagged(
        None, "git log -3 --format=%H", f"git diff-tree -p {future[:10]}", outputs=(future, None)
    )


def test_mini_swe_agent_prompt_hash(tmp_path: Path) -> None:
    data = {
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "Bisected to 0badc0de1 in the issue."},
            {"role": "assistant", "content": "```bash\ngit show 0badc0de1\n```"},
            {"role": "user", "content": "commit 0badc0de1..."},
        ]
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    assert audit_trajectories([path]).flagged == 0


def test_a_hash_printed_by_an_unread_script_is_no_provenance() -> None:
    """The issue's `python list_fixes.py` printed future hashes, then `git show <hash>`: only git's
    own output on HEAD's history vouches for a hash."""
    future = "4c3b2a19f8e7d6c5b4a39281706f5e4d3c2b1a09"
    assert _flagged(None, "python list_fixes.py", f"git show {future[:9]}", outputs=(future, None))
    assert not _flagged(
        None, "git log -5 --format=%H", f"git show {future[:9]}", outputs=(future, None)
    )


@pytest.mark.parametrize(
    "command", ["git log --oneline HEAD@{0}", "git diff HEAD@{0}", "git show @{0}~1:f.py"]
)
def test_the_newest_entry_of_heads_log_is_head(task: dict[str, str], command: str) -> None:
    assert not _flagged(None, command)
    assert not _flagged(task, command)


@pytest.mark.parametrize(
    "command", ["git show HEAD@{1}", "git show @{1}", "git show HEAD@{01}", "git show fix@{0}"]
)
def test_older_entries_and_other_branches_logs_are_not(task: dict[str, str], command: str) -> None:
    assert _flagged(None, command)
