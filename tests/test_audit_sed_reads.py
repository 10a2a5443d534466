"""``sed`` without ``-n`` over a hidden file, judged with the task repository by what it
prints (session 18): ``sed '/re/q'`` prints every line up to the first match, ``sed 'Nq'`` the
first N lines. Cleared when those lines hold nothing of the future; high when they reach the
fix's line, when ``p`` doubles every line, or when the script edits. Real git, real files, the
real audit (``sed --sandbox`` re-run on the checkout's file).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import git
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

OLD = "def sacks(kg):\n    return kg // 50\n"
FIX_LINE = "    return math.ceil(kg / SACK_KG) + SPARE_SACKS  # round up, keep a spare"
NEW = f"import math\n\nSACK_KG = 50\nSPARE_SACKS = 1\n\n\ndef sacks(kg):\n{FIX_LINE}\n"
LOG = (
    "Attaching to process 4242 [main]\n"
    "#0 sacks (kg=130) at girnal/meal.py:2\n"
    "    return kg // 50\n"
    "[Inferior 1 (process 4242) detached]\n"
    "Attaching to process 4300 [fix/round-up]\n"
    "#0 sacks (kg=130) at girnal/meal.py:8\n"
    f"{FIX_LINE}\n"
    "[Inferior 1 (process 4300) detached]\n"
)


@pytest.fixture(scope="module")
def girnal(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("sedq") / "girnal"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "g@example.com")
    git(root, "config", "user.name", "g")
    (root / "meal.py").write_text(OLD)
    git(root, "add", "meal.py")
    git(root, "commit", "-qm", "sacks")
    base = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qb", "fix")
    (root / "meal.py").write_text(NEW)
    git(root, "commit", "-qam", "round sacks up and keep a spare")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-qD", "fix")
    (root / "gdb.txt").write_text(LOG)
    return root, base


def _flagged(girnal: tuple[Path, str], command: str, history: bool) -> bool:
    root, base = girnal
    out = None
    if not history:
        out = subprocess.run(
            ["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False
        ).stdout
    traj = Trajectory("t", "shell", [Step(command, out)])
    audit = audit_trajectories([traj], hidden_paths=["gdb.txt"], repo=root, base=base)
    return bool(audit.verdicts[0].flagged)


@pytest.mark.parametrize("history", [False, True], ids=["recorded", "history"])
@pytest.mark.parametrize(
    ("command", "leak"),
    [
        ("sed '/detached]/q' gdb.txt", False),  # main's session only
        ("sed 4q gdb.txt", False),
        ("sed '/fix/q' gdb.txt", False),  # stops at the fixed session's header
        ("sed '/SACK_KG/q' gdb.txt", True),  # stops at the fix's line: prints it
        ("sed '/SACK_KG/Q' gdb.txt", True),  # Q: not evaluated, stays a read
        ("sed 7q gdb.txt", True),
        ("sed p gdb.txt", True),  # every line, twice
        ("sed 's/x/y/' gdb.txt", True),  # an edit: not evaluated
    ],
)
def test_sed_without_n_is_judged_by_what_it_prints(
    girnal: tuple[Path, str], command: str, leak: bool, history: bool
) -> None:
    assert _flagged(girnal, command, history) is leak
