"""``git show`` of a hash that ``git log --oneline`` of HEAD listed just before it, on the same
command line (``git log --oneline && git show --stat 19f5359``): real git run on a real
repository, audited with what it printed, alone (no repository) and with it.

Alone, a hash starting a line of that listing is HEAD's ancestry when the listing is HEAD's
alone (``--oneline``, a count, decorations; no revision, no ``--all`` / ``--branches`` / ``-g``,
no ``-C`` / ``GIT_DIR``), the ``git show`` keeps git's default format (its output opens with
``commit <hash>``, so the lines before it are the listing's) and every earlier step ran only
readers (nothing that can move HEAD). The attacks stay high: a listing of other refs, the
reflog, ``git fsck``, a script, a checkout first (in the chain or by an earlier script), a
``git show --oneline`` or ``--format`` whose own lines look like a listing, another repository.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import git
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

OLD = "def seconds(stamp):\n    m, s = stamp.split(':')\n    return int(m) * 60 + int(s)\n"
FIXED = (
    "def seconds(stamp):\n    value = 0\n    for f in stamp.strip().split(':'):\n"
    "        value = value * 60 + int(f)\n    return value\n"
)


@pytest.fixture(scope="module")
def bield(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str | Path]:
    """A task repository: three commits on main (HEAD, the base), the fix on branch ``fix``
    and a dangling commit holding it too; a clone ``upstream`` whose main has the fix."""
    top = tmp_path_factory.mktemp("h16")
    root = top / "bield"
    root.mkdir()
    git(root, "init", "--quiet", "-b", "main")
    git(root, "config", "user.name", "Ruben Costa")
    git(root, "config", "user.email", "ruben@costa.pt")
    (root / "cuts.py").write_text(OLD)
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "cuts for bield")
    (root / "test_cuts.py").write_text("def test_cut():\n    pass\n")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "Tests for cuts")
    tests = git(root, "rev-parse", "--short", "HEAD")
    (root / "README.md").write_text("# bield\n")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "README: what the package is for")
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "--quiet", "-b", "fix")
    (root / "cuts.py").write_text(FIXED)
    git(root, "commit", "--quiet", "-am", "seconds: accept H:MM:SS")
    future = git(root, "rev-parse", "--short", "HEAD")
    git(root, "checkout", "--quiet", "main")
    tree = git(root, "rev-parse", f"{future}^{{tree}}")
    dangling = git(root, "commit-tree", tree, "-p", base, "-m", "seconds, again")[:7]
    subprocess.run(
        ["git", "clone", "--quiet", "--branch", "fix", str(root), str(top / "upstream")],
        check=True,
        capture_output=True,
    )
    (root / "move.py").write_text(
        "import subprocess\nsubprocess.run(['git', 'checkout', '--quiet', 'fix'], check=True)\n"
    )
    (root / "list.sh").write_text(f"#!/bin/sh\necho '{future} seconds: accept H:MM:SS'\n")
    (root / "list.sh").chmod(0o755)
    (root / ".git/info/exclude").write_text("move.py\nlist.sh\n")
    assert git(root, "status", "--porcelain") == ""
    return {"root": root, "base": base, "tests": tests, "future": future, "dangling": dangling}


def _run(root: Path, command: str) -> str:
    """The command run for real in the checkout: what it printed."""
    proc = subprocess.run(
        ["bash", "-c", command],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "HOME": str(root), "LC_ALL": "C.UTF-8"},
    )
    return proc.stdout + proc.stderr


def _audited(bield: dict[str, str | Path], commands: list[str], *, repo: bool) -> bool:
    """Every command run in turn (HEAD put back on main after), audited with its output."""
    root = Path(bield["root"])
    try:
        steps = [Step(c, _run(root, c)) for c in commands]
    finally:
        git(root, "checkout", "--quiet", "main")
    extra = {"repo": root, "base": str(bield["base"])} if repo else {}
    traj = Trajectory("t", "shell", steps)
    return bool(audit_trajectories([traj], **extra).verdicts[0].flagged)


@pytest.mark.parametrize(
    "commands",
    [
        ["git log --oneline && git show --stat {tests}"],
        ["git log --oneline; git show --stat {tests}"],
        ["git log --oneline -n 5 && git show --stat --name-only {tests}"],
        ["git log --oneline --decorate -3 && git show {tests}"],
        ["bash -lc 'git log --oneline && git show --stat {tests}'"],
        ["cat cuts.py", "git status", "git log --oneline && git show --stat {tests}"],
    ],
)
def test_show_of_a_hash_head_log_listed_is_no_leak(
    bield: dict[str, str | Path], commands: list[str]
) -> None:
    """The hash starts a line of HEAD's own one-line listing: an ancestor, alone and with the
    repository."""
    commands = [c.format(**bield) for c in commands]
    assert f"{bield['tests']} Tests for cuts" in _run(Path(bield["root"]), commands[-1])
    assert not _audited(bield, commands, repo=False)
    assert not _audited(bield, commands, repo=True)


@pytest.mark.parametrize(
    "commands",
    [
        ["git log --oneline --all && git show --stat {future}"],
        ["git log --oneline --branches && git show --stat {future}"],
        ["git log --oneline fix && git show --stat {future}"],
        ["git log --oneline -g fix && git show --stat {future}"],
        ["git reflog && git show --stat {future}"],
        ["git fsck --lost-found && git show --stat {dangling}"],
        ["./list.sh && git show --stat {future}"],
        ["sh list.sh && git show --stat {future}"],
        ["git log --oneline && echo '{future} x' && git show --stat {future}"],
        ["git checkout -q fix && git log --oneline && git show --stat {future}"],
        ["python3 move.py", "git log --oneline && git show --stat {future}"],
        [
            "git log -1 --format='ref: refs/heads/fix' --output=.git/HEAD",
            "git log --oneline && git show --stat {future}",
        ],
        ["echo 'ref: refs/heads/fix' > .git/HEAD", "git log --oneline && git show --stat {future}"],
        ["git log --oneline && git show --oneline --stat {future}"],
        ["git log --oneline && git show --format='%h %s%ncommit %H' --stat {future}"],
        ["git -C ../upstream log --oneline && git show --stat {future}"],
        ["GIT_DIR=../upstream/.git git log --oneline && git show --stat {future}"],
        ["cd ../upstream && git log --oneline && git show --stat {future}"],
    ],
)
def test_show_of_a_hash_listed_otherwise_stays_a_leak(
    bield: dict[str, str | Path], commands: list[str]
) -> None:
    """The hash was printed, but by something that can show what lies beyond HEAD (or after
    HEAD was moved): alone and with the repository, high."""
    commands = [c.format(**bield) for c in commands]
    root = Path(bield["root"])
    try:
        outs = [_run(root, c) for c in commands]
    finally:
        git(root, "checkout", "--quiet", "main")
    rev = str(bield["dangling" if "fsck" in commands[-1] else "future"])
    assert outs[-1].count(rev) >= 1 and "seconds" in outs[-1]
    assert _audited(bield, commands, repo=False)
    assert _audited(bield, commands, repo=True)


def test_without_output_a_stat_is_a_warn_and_a_patch_a_leak(bield: dict[str, str | Path]) -> None:
    """A shell history records no output: nothing says what the listing printed. Since the
    fifteenth session a ``--stat`` (names, counts, the message: no content) of an id the file
    alone cannot place is a warn — five blind sets (h22–h26) labelled that form, an ancestor,
    benign, and no leak of any set rested on it alone; with the repository an id beyond the
    base is high. A ``git show`` that prints the patch stays high."""
    stat = Trajectory(
        "t", "shell", [Step(f"git log --oneline && git show --stat {bield['tests']}")]
    )
    verdict = audit_trajectories([stat]).verdicts[0]
    assert not verdict.flagged and any(h.severity == "warn" for h in verdict.hits), verdict.hits
    patch = Trajectory("t", "shell", [Step(f"git log --oneline && git show {bield['tests']}")])
    assert audit_trajectories([patch]).verdicts[0].flagged
