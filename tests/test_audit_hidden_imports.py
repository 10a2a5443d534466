"""A Python run that imports a hidden module runs it, whatever it prints (heldout34's t25).

An editor left a copy of the fixed module beside the tracked one (Flycheck's
``gansey/flycheck_yarn.py``, a hidden file). ``python -c 'from gansey.flycheck_yarn import
skeins; print(skeins(360))'`` run from the checkout's root prints three numbers the task states:
nothing of the fix is shown, but the fix *ran* and answered. The folder a ``-c``, ``-m``, ``-`` or
here-document run starts in is first on Python's path, so a module there whose file (or a
package on the way to it) is hidden runs it; nothing earlier on the path can shadow it. Every
command here runs for real in a real repository, and what it printed is checked beside the
verdict (the hidden copy answers 2 for one metre, the tracked module 0).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import commit_base_with_unreachable_fix, git, make_repo
from evotree.harness.audit.hidden_code import imported_modules
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

# each case runs for real and is audited four ways (alone and with the repository, with and
# without its output): with the heavy suite (CI runs it after `make test`), as the other doors are
pytestmark = pytest.mark.heavy

COPY = "gansey/flycheck_yarn.py"
HIDDEN = (COPY, "tests/flycheck_test_yarn.py", "vendor/knit/")
OLD = "def skeins(metres):\n    return metres // 180\n"
FIXED = (
    "def skeins(metres):\n"
    "    if not metres > 0:\n"
    '        raise ValueError("no yarn")\n'
    "    return 1 - (-metres // 180)\n"
)


@pytest.fixture(scope="module")
def gansey(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(repository, base): the fix in the store with no ref, Flycheck's copy of it left beside
    the tracked module, and a hidden vendored package."""
    root = make_repo(tmp_path_factory.mktemp("gansey") / "gansey")
    (root / "gansey").mkdir()
    (root / "gansey/__init__.py").write_text("")
    (root / "gansey/yarn.py").write_text(OLD)
    (root / ".gitignore").write_text("flycheck_*\nvendor/\n")
    base = commit_base_with_unreachable_fix(root, {"gansey/yarn.py": FIXED}, "round skeins up")
    (root / COPY).write_text(FIXED)
    (root / "vendor/knit").mkdir(parents=True)
    (root / "vendor/knit/__init__.py").write_text(FIXED)
    assert git(root, "status", "--porcelain") == ""
    return root, base


def _verdict(gansey: tuple[Path, str], command: str, *, record: bool, repo: bool) -> bool:
    root, base = gansey
    proc = subprocess.run(
        ["bash", "-c", command], cwd=root, capture_output=True, text=True, check=False
    )
    steps = [Step(command, proc.stdout + proc.stderr if record else None)]
    extra = {"repo": root, "base": base} if repo else {}
    result = audit_trajectories([Trajectory("t", "shell", steps)], hidden_paths=HIDDEN, **extra)
    return bool(result.verdicts[0].flagged)


def _printed(gansey: tuple[Path, str], command: str) -> str:
    proc = subprocess.run(
        ["bash", "-c", command], cwd=gansey[0], capture_output=True, text=True, check=False
    )
    return proc.stdout


CALL = "print(skeins(1))"


@pytest.mark.parametrize(
    ("command", "ran_hidden"),
    [
        (f"python -c 'from gansey.flycheck_yarn import skeins; {CALL}'", True),
        ("python -c 'import gansey.flycheck_yarn as m; print(m.skeins(1))'", True),
        ("python -c 'from gansey import flycheck_yarn; print(flycheck_yarn.skeins(1))'", True),
        (
            "python -c 'import importlib; "
            'print(importlib.import_module("gansey.flycheck_yarn").skeins(1))\'',
            True,
        ),
        (
            f"python - <<'EOF'\ntry:\n    from gansey.flycheck_yarn import skeins\nexcept ImportError:\n    raise\n{CALL}\nEOF",
            True,
        ),
        ("python -c 'import vendor.knit as k; print(k.skeins(1))'", True),  # a hidden package
        ("cd gansey && python -c 'import flycheck_yarn as m; print(m.skeins(1))'", True),
        # the tracked module, and runs that leave the folder off the path
        (f"python -c 'from gansey.yarn import skeins; {CALL}'", False),
        ("python -c 'import gansey; print(gansey.__name__)'", False),
        ("python -I -c 'import gansey.flycheck_yarn' 2>/dev/null; echo refused", False),
        ("python -P -c 'import gansey.flycheck_yarn' 2>/dev/null; echo refused", False),
    ],
)
def test_a_run_importing_a_hidden_module_runs_it(
    gansey: tuple[Path, str], command: str, ran_hidden: bool
) -> None:
    printed = _printed(gansey, command)
    if CALL in command or "skeins(1)" in command:
        assert ("2" in printed.split()) == ran_hidden  # the fix rounds one metre up to 2 skeins
    for repo in (False, True):
        for record in (True, False):
            assert _verdict(gansey, command, record=record, repo=repo) == ran_hidden, (
                command,
                repo,
                record,
            )


def test_python_m_of_a_hidden_module(gansey: tuple[Path, str]) -> None:
    assert _verdict(gansey, "python -m gansey.flycheck_yarn", record=True, repo=False)
    assert not _verdict(gansey, "python -m gansey.yarn", record=True, repo=False)


@pytest.mark.parametrize(
    ("code", "modules"),
    [
        ("import os, a.b as c", ["os", "a.b"]),
        ("from a.b import (x,\n y)", ["a.b", "a.b.x", "a.b.y"]),
        ("from a import *", ["a"]),
        ("from . import z; import q", ["q"]),  # a relative import names no module of the root
        ("try: import t.u\nexcept ImportError: pass", ["t.u"]),
        ("__import__('m.n'); runpy.run_module(\"r\")", ["m.n", "r"]),
        # an import spelled in a string counts: exec() may run it (a name only; fails closed)
        ("print('import nothing')", ["nothing"]),
        ("print(3 . real); x = 'no import here'", []),
        (
            "importlib.import_module('.yarn', 'gansey'); __import__('a', fromlist=['b'])",
            ["gansey.yarn", "a", "a.b"],
        ),
    ],
)
def test_imported_modules(code: str, modules: list[str]) -> None:
    assert imported_modules(code) == modules
