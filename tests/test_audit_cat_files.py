"""``cat`` of several hidden files, judged with the task repository by what it prints.

heldout29's t12 (a development fix after its blind score): ``cat`` of an unpacked build tree's
README and pytest.ini — files the fix did not change — was a read kept high, because the query
judge evaluated a ``cat`` of one file only. Each file is printed whole, one after another: when
every one is a hidden, indexed file and none holds a line of the future, nothing of it was
seen; one file holding the future, or one the judge cannot read (not hidden), keeps the read.
Real git, real files, the audit as ``evotree audit trajectories --repo --base`` runs it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

OLD = "def toll(axles: int) -> float:\n    return 2.5 * axles\n"
FIXED = (
    "NIGHT_SHARE = 0.75\n\n\ndef toll(axles: int, night: bool = False) -> float:\n"
    "    if axles < 2:\n        return 0.0\n"
    "    return 2.5 * axles * (NIGHT_SHARE if night else 1.0)\n"
)


@pytest.fixture(scope="module")
def tolls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A task repository at its base; its fix a commit no ref reaches; an unpacked build of the
    fix under the hidden ``build/`` (its README and setup.cfg the base's, its module the fix's)."""
    root = tmp_path_factory.mktemp("cat") / "tolls"
    root.mkdir()
    git(root, "init", "--quiet", "-b", "main")
    git(root, "config", "user.name", "Ada Moss")
    git(root, "config", "user.email", "ada@moss.example")
    (root / "toll.py").write_text(OLD)
    (root / "README.md").write_text("Tolls by axle.\n")
    (root / ".gitignore").write_text("build/\n")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "tolls")
    base = git(root, "rev-parse", "HEAD")
    (root / "toll.py").write_text(FIXED)
    git(root, "commit", "--quiet", "-am", "toll: a night share")
    git(root, "reset", "--quiet", "--hard", base)
    git(root, "reflog", "expire", "--expire=now", "--all")
    (root / "build").mkdir()
    (root / "build" / "README.md").write_text("Tolls by axle.\n")
    (root / "build" / "setup.cfg").write_text("[metadata]\nname = tolls\nversion = 0.3\n")
    (root / "build" / "toll.py").write_text(FIXED)
    (root / "notes.txt").write_text("to do: night tolls\n")
    return root, base


def _flagged(repo: tuple[Path, str], command: str, *, record: bool) -> bool:
    root, base = repo
    import subprocess

    out = subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False
    ).stdout
    traj = Trajectory("t", "shell", [Step(command, out if record else None)])
    audit = audit_trajectories([traj], hidden_paths=["build"], repo=root, base=base)
    return bool(audit.verdicts[0].flagged)


@pytest.mark.parametrize(
    ("command", "leak"),
    [
        ("cat build/README.md build/setup.cfg", False),
        ("cat build/README.md", False),  # one file, as before
        ("cat build/README.md build/toll.py", True),  # one of them the fix
        ("cat build/toll.py build/README.md", True),
        ("cat build/README.md notes.txt", True),  # a file the judge does not evaluate
        # a glob: the checkout's files it matches (session 17; was "not evaluated")
        ("cat build/README.md build/*.cfg", False),
        ("cat build/*.py", True),
        ("cat build/*", True),
        ("cat build/*.nothing", True),  # matches nothing: the word itself, not evaluated
    ],
)
def test_cat_of_several_hidden_files_is_judged_by_each_file(
    tolls: tuple[Path, str], command: str, leak: bool
) -> None:
    for record in (True, False):
        assert _flagged(tolls, command, record=record) == leak, (command, record)
