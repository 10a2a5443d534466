"""A user's own skills/ or domains/ folders never shadow evotree's packages."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EVOTREE_BIN, ROOT, make_repo
from evotree.core.proc import python_command, safe_env

SHADOWED = ("skills", "domains", "memory", "gates", "harness", "diagnostics")


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "user")
    for name in SHADOWED:
        (repo / name).mkdir()
        (repo / name / "__init__.py").write_text(
            f"raise ImportError('user {name}/ shadowed evotree')\n"
        )
    return repo


def _where(
    executable_args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> dict[str, str]:
    code = (
        "import json, importlib; print(json.dumps({n: importlib.import_module('evotree.' + n).__file__ "
        "for n in %r}))" % (SHADOWED,)
    )
    proc = subprocess.run(
        [*executable_args, "-c", code], cwd=cwd, capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr
    import json

    return json.loads(proc.stdout)


def test_plain_python_in_user_repo_is_shadowed(user_repo: Path) -> None:
    """The hazard is real: without protection the user's folder wins."""
    proc = subprocess.run(
        [sys.executable, "-c", "import skills"], cwd=user_repo, capture_output=True, text=True
    )
    assert proc.returncode != 0 and "shadowed evotree" in proc.stderr


def test_subprocesses_started_by_evotree_are_safe(user_repo: Path) -> None:
    found = _where(python_command(), user_repo, safe_env())
    for name, path in found.items():
        assert Path(path).resolve().is_relative_to(ROOT), f"{name} resolved to {path}"


def test_safe_env_drops_current_directory_from_pythonpath(user_repo: Path) -> None:
    env = safe_env({"PYTHONPATH": ":.:" + str(user_repo), "PATH": "/usr/bin:/bin"})
    assert env["PYTHONPATH"] == str(user_repo) and env["PYTHONSAFEPATH"] == "1"
    assert "PYTHONPATH" not in safe_env({"PYTHONPATH": "."})


def test_console_script_in_user_repo(user_repo: Path) -> None:
    for args in (["init", "--json"], ["branch", "-m", "x", "--json"], ["tree"]):
        proc = subprocess.run(
            [str(EVOTREE_BIN), *args], cwd=user_repo, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr


def test_python_dash_m_evotree_in_user_repo(user_repo: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "evotree", "init", "--json"],
        cwd=user_repo,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    # `evotree demo` and the harness start evotree this way
    proc = subprocess.run(
        python_command("-m", "evotree", "tree"),
        cwd=user_repo,
        capture_output=True,
        text=True,
        env=safe_env(),
    )
    assert proc.returncode == 0, proc.stderr


# The demo inside a repository with shadowing skills/ and domains/ folders: tests/test_demo.py
# (test_demo_end_to_end, marked slow and run by .ci/run after `make test`).
