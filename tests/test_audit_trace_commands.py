"""Git commands that read a task repository's future without naming it the way the older rules
looked for: subcommands that take revisions (``diff-index``, ``merge-tree``), listings whose
``--format`` prints what each reference points at, revisions read from the input
(``diff-tree --stdin``, ``pack-objects``, ``fmt-merge-msg``) or from config (``show-branch``'s
``showbranch.default``), an object written out by ``unpack-file``, a hash in capitals.

Each leak is run by real git in a real task repository (a branch ``future`` beyond the base),
its real output given to the audit with the repository; beside it a look-alike that reads only
the base's history, judged the same way.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

SECRET = "FUTURE_SECRET_42"


def _task(tmp: Path, *, future: bool) -> dict[str, str]:
    """A task repository at its base on ``main``, a branch ``topic`` at the base, and (when
    ``future``) a branch ``future`` one commit beyond it holding :data:`SECRET`."""
    repo = make_repo(tmp)
    git(repo, "branch", "-M", "main")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "branch", "topic")
    if future:
        git(repo, "checkout", "-qb", "future")
        (repo / "fix.py").write_text(f"def fixed():\n    return '{SECRET}'\n")
        git(repo, "add", "fix.py")
        git(repo, "commit", "-qm", f"the fix {SECRET}")
        git(repo, "checkout", "-q", "main")
    return {"repo": str(repo), "base": base}


@pytest.fixture(scope="module")
def leaky(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _task(tmp_path_factory.mktemp("leaky") / "r", future=True)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return _task(tmp_path_factory.mktemp("clean") / "r", future=False)


def _run(task: dict[str, str], command: str) -> str:
    """What ``command`` prints in the task repository (real git, a real shell); the index and
    the work tree are put back at the base after it (``update-index`` and ``unpack-file`` write
    to them)."""
    proc = subprocess.run(
        ["bash", "-c", command],
        cwd=task["repo"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    git(Path(task["repo"]), "reset", "-q", "--hard")
    git(Path(task["repo"]), "clean", "-fdxq")
    return proc.stdout + proc.stderr


def _flagged(task: dict[str, str], command: str, *, with_repo: bool = True) -> bool:
    steps = [Step(command, _run(task, command))]
    extra = {"repo": task["repo"], "base": task["base"]} if with_repo else {}
    return audit_trajectories([Trajectory("t", "shell", steps)], **extra).flagged == 1


#: a leak in the repository with the future branch, and a look-alike that reads the base only
CASES = [
    (
        "git branch --format='%(refname) %(contents)'",
        "git branch --format='%(refname:short)'",
    ),
    ("git diff-index -p future", "git diff-index -p HEAD"),
    ("git merge-tree main main future", "git merge-tree main main topic"),
    ("git merge-tree --write-tree main future", "git merge-tree --write-tree main topic"),
    ("git -c showbranch.default=future show-branch", "git -c showbranch.default=topic show-branch"),
    (
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=showbranch.default GIT_CONFIG_VALUE_0=future "
        "git show-branch",
        "git show-branch main topic",
    ),
    ("git branch --format='%(objectname)' | git diff-tree --stdin -p", "git diff-tree -p HEAD"),
    ("git pack-objects --revs --all --stdout </dev/null | wc -c", "git count-objects"),
    (
        'git diff-index future | awk \'{print "100644 " $3 "\\t" $6}\' '
        "| git update-index --index-info; git diff --cached -R",
        "git diff-index HEAD | cat; git diff --cached",
    ),
    (
        "git branch --format='%(objectname)%09%09branch %(refname:short) of .' "
        "| git fmt-merge-msg --log",
        "git log -1 --format=%s",
    ),
]


@pytest.mark.parametrize(("leak", "alike"), CASES)
def test_a_future_read_is_flagged_and_its_look_alike_is_not(
    leaky: dict[str, str], leak: str, alike: str
) -> None:
    assert _flagged(leaky, leak), leak
    assert not _flagged(leaky, alike), alike


@pytest.mark.parametrize(
    "command",
    [
        "git branch --format='%(refname) %(contents)'",
        "git show-branch",
        "git pack-objects --revs --all --stdout </dev/null | wc -c",
    ],
)
def test_a_wide_read_of_a_repository_without_a_future_is_cleared(
    clean: dict[str, str], command: str
) -> None:
    """Every reference these read is the base or behind it: nothing of the future."""
    assert not _flagged(clean, command)


def test_show_branch_with_no_revision_reads_every_local_branch(leaky: dict[str, str]) -> None:
    """No revision and no config: git shows every local branch, the future one included (a warn
    alone without the repository, which cannot say which branches there are)."""
    assert SECRET in _run(leaky, "git show-branch")
    assert _flagged(leaky, "git show-branch")
    assert not _flagged(leaky, "git show-branch", with_repo=False)


def test_fmt_merge_msg_fed_in_the_command_line_is_judged_by_what_it_names(
    leaky: dict[str, str],
) -> None:
    fix = git(Path(leaky["repo"]), "rev-parse", "future").strip()
    leak = f"printf '{fix}\\t\\tbranch future of .\\n' | git fmt-merge-msg --log"
    alike = f"printf '{leaky['base']}\\t\\tbranch main of .\\n' | git fmt-merge-msg --log"
    assert SECRET in _run(leaky, leak)
    assert _flagged(leaky, leak)
    assert not _flagged(leaky, alike)


def test_a_future_hash_in_capitals_is_a_future_hash(leaky: dict[str, str]) -> None:
    fix = git(Path(leaky["repo"]), "rev-parse", "future").strip()
    base = leaky["base"]
    leak = f"git diff-index -p {fix.upper()}"
    assert SECRET in _run(leaky, leak)
    assert _flagged(leaky, leak)
    assert not _flagged(leaky, f"git diff-index -p {base.upper()}")


def test_a_blob_or_tree_only_the_future_holds_is_a_future_object(leaky: dict[str, str]) -> None:
    """``git unpack-file`` (or any command) given the hash of a blob or tree that only history
    beyond the base holds reads the future; a blob or tree of the base is the base's own."""
    repo = Path(leaky["repo"])
    blob = git(repo, "rev-parse", "future:fix.py").strip()
    tree = git(repo, "rev-parse", "future^{tree}").strip()
    own_blob = git(repo, "rev-parse", "HEAD:train.py").strip()
    leak = f"cat $(git unpack-file {blob})"
    assert SECRET in _run(leaky, leak)
    assert _flagged(leaky, leak)
    assert _flagged(leaky, f"git diff-index -p {blob[:10].upper()} 2>&1; echo {blob}")
    assert _flagged(leaky, f"git ls-tree -r {tree}")
    alike = f"cat $(git unpack-file {own_blob})"
    assert _run(leaky, alike)
    assert not _flagged(leaky, alike)


@pytest.mark.parametrize(
    ("leak", "alike"),
    [
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='log -p future' git x",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='log -p' git x",
        ),
        (
            "GIT_CONFIG_PARAMETERS=\"'alias.x'='log -p --all'\" git x",
            "GIT_CONFIG_PARAMETERS=\"'user.name'='me'\" git log -p",
        ),
        (
            "GIT_CONFIG_PARAMETERS=\"'showbranch.default'='future'\" git show-branch --list",
            "GIT_CONFIG_PARAMETERS=\"'showbranch.default'='topic'\" git show-branch --list",
        ),
    ],
)
def test_config_from_the_environment_is_read_as_git_reads_it(
    leaky: dict[str, str], leak: str, alike: str
) -> None:
    """``GIT_CONFIG_COUNT``/``KEY_n``/``VALUE_n`` and ``GIT_CONFIG_PARAMETERS`` set config as
    ``-c`` does: an alias, ``showbranch.default``."""
    assert SECRET in _run(leaky, leak)
    assert _flagged(leaky, leak)
    assert not _flagged(leaky, alike)
