"""The audit judges what a trajectory could see, not the spelling it used.

Causes found by studying the third held-out set's misses and false alarms (now a development
set), each tested here with a leak and a look-alike:

* what git actually shows: ``describe`` (without ``--contains``) names only tags behind the
  commit; ``tag --merged HEAD`` lists only HEAD's tags; ``reflog -n 1`` shows only HEAD@{0};
  ``ls-remote --get-url`` contacts nothing; ``format-patch <since>`` is ``since..HEAD``;
  ``:/text`` searches the messages of commits reachable from *every* reference;
* order: ``git reset --hard ORIG_HEAD`` reads the image's ORIG_HEAD before it writes its own;
* provenance: a hash printed by ``git rev-parse <name>`` is that name's commit, not HEAD's
  history; a tag printed by HEAD's own history (``git describe``) or quoted by the task is
  behind the base;
* references passed through a file (``git branch -r > f``, then ``$(sed -n 1p f)``);
* program names built in code (``['g' + 'it', 'log']``) and forge clients inside quotes reach
  the rules (the prefilter);
* conventional branch namespaces (``fix/…``, ``hotfix/…``) are branches, not paths;
* the trajectory's own branches: switching back after ``git switch -c`` is its own work;
* with the task repository, a stash command in a repository that holds no stash read nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.commands import classify_command, prefilter
from evotree.harness.audit.trajectories import audit_trajectories
from evotree.harness.audit.steps import Step, Trajectory


def _flagged(
    *commands: str,
    outputs: tuple[str | None, ...] = (),
    prompt: str | None = None,
    repo: dict[str, str] | None = None,
) -> bool:
    steps = [Step(c, outputs[k] if k < len(outputs) else None) for k, c in enumerate(commands)]
    traj = Trajectory("t", "shell", steps, prompt=prompt)
    extra = {"repo": repo["repo"], "base": repo["base"]} if repo else {}
    return audit_trajectories([traj], **extra).flagged == 1


@pytest.mark.parametrize(
    "command",
    [
        "git describe --tags",
        "git describe --tags --abbrev=0",
        "git describe --always --dirty",
        "git tag --merged HEAD",
        "git tag --merged",
        "git reflog -n 1",
        "git reflog -1",
        "git reflog show --max-count=1 HEAD",
        "git ls-remote --get-url origin",
        "git format-patch origin/main",
        "git format-patch HEAD~2",
        "git reset --hard HEAD~1 && git show ORIG_HEAD:f.py",
    ],
)
def test_what_git_shows_of_head_alone_is_not_a_leak(command: str) -> None:
    assert not _flagged(command)


@pytest.mark.parametrize(
    "command",
    [
        "git describe --contains HEAD",
        "git reflog -n 2",
        "git reflog -n 1 fix",
        "git ls-remote origin",
        "git format-patch -1 origin/fix",
        "git format-patch -q -1 fix/integral-windup -o /tmp/p",
        "git format-patch HEAD~3..origin/fix",
        "git show ':/midnight' --stat",
        "git log -p -1 hotfix/step-syntax",
        "git reset --hard ORIG_HEAD",
        "bash -lc 'gh pr view 17 --patch'",
        "git branch -r > /tmp/refs.txt && git show $(sed -n 1p /tmp/refs.txt) --stat",
        "git branch -r | head -1 > r; R=$(cat r); git log -p $R",
        "git tag > t.txt; cat t.txt | xargs git show",
    ],
)
def test_what_reaches_beyond_the_base_is_a_leak(command: str) -> None:
    assert _flagged(command)


def test_the_forge_client_in_quotes_and_a_built_name_pass_the_prefilter() -> None:
    assert prefilter("bash -lc 'gh pr view 17 --patch'")
    code = "import subprocess as s; s.run(['g' + 'it', 'log', '-p', '-1', 'hotfix/step-syntax'])"
    assert prefilter(f'python3 -c "{code}"')
    assert _flagged(f'python3 -c "{code}"')
    status = "import subprocess as s; s.run(['g' + 'it', 'status'])"
    assert not _flagged(f'python3 -c "{status}"')


def test_a_reference_written_to_a_file_is_a_reference_in_the_next_step() -> None:
    assert _flagged("git branch -r > /tmp/refs.txt", "git show $(sed -n 1p /tmp/refs.txt) --stat")
    # a file of HEAD's own history read back is not a listing of references
    assert not _flagged("git log -3 --format=%H > /tmp/h.txt", "wc -l /tmp/h.txt")
    # a file written by something else, read back, is not either
    assert not _flagged("echo HEAD~1 > /tmp/r.txt", "git show $(cat /tmp/r.txt) --stat")


def test_orig_head_is_the_images_until_the_trajectory_writes_its_own() -> None:
    assert _flagged("git reset --hard ORIG_HEAD", "git log -2 --oneline")
    assert _flagged("git diff ORIG_HEAD", "git reset --hard HEAD~1")
    assert not _flagged("git reset --hard HEAD~1", "git diff ORIG_HEAD")


def test_a_hash_printed_by_rev_parse_of_a_name_vouches_for_nothing() -> None:
    fix = "e5b9eee089731cf31b5df76ea279b6abbb596b92"
    printed = (fix + "\n", None)
    assert _flagged("git rev-parse windup-fix", f"git diff-tree -p {fix}", outputs=printed)
    assert _flagged("git rev-parse team/windup", f"git diff-tree -p {fix}", outputs=printed)
    # printed by a listing of branches and their tips: not HEAD's history either
    listed = (f"  windup {fix[:7]} x\n", None)
    assert _flagged("git branch -v", f"git diff-tree -p {fix}", outputs=listed)
    # git log of HEAD's own history printed it: the hash is HEAD's
    assert not _flagged("git log -3 --format=%H", f"git show {fix} --stat", outputs=printed)


def test_a_tag_printed_by_heads_own_history_or_quoted_by_the_task_is_behind_the_base() -> None:
    described = ("v2.2.0-2-g0e04583\n", None)
    assert not _flagged("git describe --tags", "git diff v2.2.0 HEAD --stat", outputs=described)
    assert not _flagged("git tag --merged HEAD", "git diff v2.2.0 HEAD", outputs=("v2.2.0\n", None))
    issue = "Broken since v2.2.0: the check digit of 10."
    assert not _flagged("git diff v2.2.0 HEAD", prompt=issue)
    # printed by a listing of every tag (or not printed at all): not vouched for
    assert _flagged("git tag", "git diff v2.3.0 HEAD", outputs=("v2.2.0\nv2.3.0\n", None))
    assert _flagged("git diff v2.3.0 HEAD")
    # v2.2.0 printed; v2.2.0.1 is another tag
    assert _flagged("git describe --tags", "git show v2.2.0.1", outputs=described)


def test_switching_back_from_the_trajectorys_own_branch() -> None:
    assert not _flagged(
        "git switch -c try-clamp",
        "python -m pytest -q",
        "git switch main",
        "git branch -D try-clamp",
    )
    assert not _flagged("git checkout -b mine", "git checkout mine")
    # before it made a branch of its own, a switch to another name is a leak on the file alone
    assert _flagged("git switch upstream")
    # after one, a switch to a remote branch or a branch namespace still is
    assert _flagged("git switch -c try", "git switch origin/fix")
    assert _flagged("git switch -c try", "git switch fix/integral-windup")
    # a start point of its own branch is judged as a revision
    assert _flagged("git checkout -b mine FETCH_HEAD")


@pytest.fixture(scope="module")
def stash_repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """Two task repositories: one whose stash holds the fix, one with no stash at all."""
    out = {}
    for name in ("with", "without"):
        repo = make_repo(tmp_path_factory.mktemp("stash") / name)
        (repo / "f.py").write_text("value = 1\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
        base = git(repo, "rev-parse", "HEAD")
        if name == "with":
            (repo / "f.py").write_text("value = 2  # the fix\n")
            git(repo, "stash", "-q")
        out[name] = {"repo": str(repo), "base": base}
    return out


def test_a_stash_command_is_judged_by_the_stash_the_repository_holds(
    stash_repos: dict[str, dict[str, str]],
) -> None:
    commands = (
        "git stash list",
        "echo x >> notes.txt",
        "git stash",
        "python -m pytest -q",
        "git stash pop",
    )
    assert not _flagged(*commands, repo=stash_repos["without"])
    assert _flagged(*commands, repo=stash_repos["with"])
    assert _flagged("git stash show -p", repo=stash_repos["with"])
    assert not _flagged("git stash show -p", repo=stash_repos["without"])
    # without the repository the spelling decides: a stash the trajectory did not make
    assert _flagged(*commands)


def test_a_message_search_is_resolved_in_the_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "task")
    (repo / "f.py").write_text("value = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base: tides")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-qb", "fix")
    (repo / "f.py").write_text("value = 2\n")
    git(repo, "commit", "-qam", "Wrap across midnight")
    git(repo, "checkout", "-q", "main")
    task = {"repo": str(repo), "base": base}
    assert _flagged("git show ':/midnight' --stat", repo=task)
    assert not _flagged("git show ':/tides' --stat", repo=task)
    assert classify_command("git show :/midnight")


def test_a_display_step_where_git_printed_only_an_error_showed_nothing() -> None:
    missing = "fatal: invalid object name 'origin/fix'.\n"
    assert not _flagged("git show origin/fix:f.py", outputs=(missing,))
    assert not _flagged("git stash show -p", outputs=("No stash entries found.\n",))
    assert not _flagged(
        "git log -p v9.9.9 | head",
        outputs=(
            "fatal: ambiguous argument 'v9.9.9': unknown revision or path not in the working tree.\n",
        ),
    )
    # what it printed is what it showed; an empty output proves nothing (it may not be recorded)
    assert _flagged("git show origin/fix:f.py", outputs=("value = 2\n",))
    assert _flagged("git show origin/fix:f.py", outputs=("",))
    assert _flagged("git show origin/fix:f.py", outputs=(missing + "value = 2\n",))
    # a command that changes the working tree may print nothing when it succeeds
    assert _flagged("git checkout v1.1.0 -- f.py", outputs=("",))
    # ... but one git refused wrote nothing (git checks every pathspec before writing any)
    assert not _flagged(
        "git checkout v1.1.0 -- f.py", outputs=("error: pathspec 'x' did not match\n",)
    )
    assert _flagged("git cherry-pick v1.1.0", outputs=("error: could not apply 1a2b3c4... fix\n",))
    # written to a file, not printed
    assert _flagged("git show origin/fix:f.py > /tmp/f.py 2>&1", outputs=(missing,))


def test_a_name_read_off_the_trajectorys_own_listing_of_references_is_a_reference() -> None:
    listing = "* main\n  windup\n  team/clamp\n"
    assert _flagged("git branch", "git log -p -1 windup", outputs=(listing, None))
    assert _flagged("git branch", "git show team/clamp:pid.py", outputs=(listing, None))
    remotes = ("fork\tgit@example.org:me/pid.git (fetch)\n", None)
    assert _flagged("git remote -v", "git log -p fork/windup", outputs=remotes)
    assert not _flagged("git remote -v", "git log -p src/pid.py", outputs=remotes)
    tags = ("v1.0\nrelease-candidate\n", None)
    assert _flagged("git tag", "git show release-candidate", outputs=tags)
    # not listed: the spelling alone cannot say it is a branch
    assert not _flagged("git log -p -1 windup")
    assert not _flagged("git branch", "git log -p -1 docs", outputs=(listing, None))
    # the branch it stands on, and its way back from its own branch, are not references beyond
    assert not _flagged("git branch", "git log -3 main", outputs=(listing, None))
    assert not _flagged(
        "git switch -c try",
        "git branch",
        "git switch main",
        outputs=(None, "* try\n  main\n", None),
    )


@pytest.mark.parametrize(
    "command",
    [
        "function peek { git log --all; }; peek",
        "function peek {\n  git log -p origin/fix\n}",
        "git show $(git rev-parse @{-1})",
        "git diff $(git rev-parse --short origin/fix)",
        "git show `git rev-parse v1.1.0`:f.py",
        "git show $(git log -1 --format=%H hotfix/x)",
        "git show-branch -a",
        "git merge-base origin/a origin/b",
    ],
)
def test_spellings_that_hid_a_reference(command: str) -> None:
    assert _flagged(command)


@pytest.mark.parametrize(
    "command",
    [
        "function t { python -m pytest -q; }; t",
        "git show $(git rev-parse HEAD~1)",
        "git diff $(git merge-base HEAD origin/main)",
        "git merge-base HEAD origin/main",
        "git merge-base --is-ancestor HEAD~2 HEAD",
    ],
)
def test_their_look_alikes(command: str) -> None:
    assert not _flagged(command)


FIX = "        self._integral = max(-self.i_limit, min(self.i_limit, self._integral + err * dt))"
SHOWN = f"commit 39b1f32\n\n-        self._integral += err * dt\n+{FIX}\n"
EDIT = (
    "str_replace_editor str_replace pid.py --old_str '        self._integral += err * dt' "
    f"--new_str '{FIX}'"
)


def test_a_change_shown_by_an_unjudged_name_and_then_written_was_copied_from_it() -> None:
    assert _flagged("git log -p -1 windup", EDIT, outputs=(SHOWN, None))
    heredoc = f"cat > pid.py <<'EOF'\n{FIX}\nEOF"
    assert _flagged(
        "git show team/windup", "python -c 'print(1)'", heredoc, outputs=(SHOWN, "1\n", None)
    )
    # shown, never written: the name alone stays unjudged on the file alone
    tested = (SHOWN, "1 passed\n")
    assert not _flagged("git log -p -1 windup", "python -m pytest -q", outputs=tested)
    # written first, then shown by a diff against a plain name: the trajectory's own line
    assert not _flagged(EDIT, "git diff main", outputs=(None, SHOWN))
    # the line is in the file as it stands (a cat shows it): nothing new was learnt
    assert not _flagged("cat pid.py", "git log -p -1 docs", EDIT, outputs=(FIX + "\n", SHOWN, None))
    # HEAD's own history showed it: no unjudged name; main is the name a task's branch has
    assert not _flagged("git log -p -1 HEAD~1", EDIT, outputs=(SHOWN, None))
    assert not _flagged("git log -p main -- pid.py", EDIT, outputs=(SHOWN, None))
    assert not _flagged(
        "git switch -c try",
        "git branch",
        "git log -p main",
        outputs=(None, "* try\n  main\n", None),
    )


def test_a_diff_of_names_and_counts_shows_no_content() -> None:
    assert not _flagged("git diff v2.2.0 HEAD --stat")
    assert not _flagged("git diff --name-only origin/fix")
    assert _flagged("git diff --stat -p origin/fix")
    assert _flagged("git diff origin/fix")
    # git show and git log --stat print the commit's id and subject too
    assert _flagged("git show origin/fix --stat")
    assert _flagged("git log --stat -1 origin/fix")


def test_a_plain_name_that_says_it_is_a_change_is_a_branch() -> None:
    assert _flagged("git diff fix-midnight")
    assert _flagged("git log -p windup-fix")
    assert _flagged("git checkout pr-17 -- f.py")
    # file and folder names, and the trajectory's own branches so named, are not
    assert not _flagged("git log -p fixtures")
    assert not _flagged("git log prefix")
    assert not _flagged("git switch -c fix-windup", "git diff fix-windup")
    assert not _flagged("git checkout -b fix-x", "git diff main..fix-x")
    assert not _flagged("git switch -c fix-x", "git switch main", "git log -p fix-x")
    assert _flagged("git switch -c mine", "git diff fix-midnight")


def test_combined_short_options_before_a_new_branch_name() -> None:
    assert not _flagged("git checkout -qb upstream", "git checkout -q main")
    assert not _flagged("git checkout -qb fix-x", "git diff fix-x")
    assert _flagged("git checkout -qb mine FETCH_HEAD")
