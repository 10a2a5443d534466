"""Shared fixtures: real git repositories in temp dirs, with an isolated git configuration.

The environment is set up at import time, before pygit2 is imported anywhere, because libgit2
reads the location of the global configuration once, when it starts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

_HOME = Path(tempfile.mkdtemp(prefix="evotree-test-home-"))
os.environ["HOME"] = str(_HOME)
os.environ["XDG_CONFIG_HOME"] = str(_HOME / ".config")
os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
os.environ["GIT_CONFIG_GLOBAL"] = str(_HOME / ".gitconfig")
for _var in (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "PYTHONPATH",
    # pytest-xdist's workers inherit the terminal's width as COLUMNS: the tests read command
    # output as a pipe gets it (a test of COLUMNS sets it itself)
    "COLUMNS",
    "LINES",
):
    os.environ.pop(_var, None)
(_HOME / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")

from click.testing import CliRunner  # noqa: E402

from evotree.cli.main import cli  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "evotree" / "core" / "schemas"
EVOTREE_BIN = Path(sys.executable).parent / "evotree"

IDENTITY = ("Ada Tester", "ada@example.com")


def git(repo: Path, *args: str, check: bool = True) -> str:
    """Run git in ``repo`` and return stdout."""
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout.strip()


def commit_base_with_unreachable_fix(root: Path, fixed: dict[str, str], subject: str) -> str:
    """Commit ``root``'s work tree as the task's base, then commit ``fixed`` (path: text) on
    top and reset to the base with the reflog expired: the fix stays in the store, reachable by
    no ref (a leak audit's task repository). The base's id."""
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the base")
    base = git(root, "rev-parse", "HEAD")
    for path, text in fixed.items():
        (root / path).write_text(text)
    git(root, "commit", "-q", "-am", subject)
    git(root, "reset", "-q", "--hard", base)
    git(root, "reflog", "expire", "--expire=now", "--all")
    return base


#: the gansey checkout's editor copy of the fixed module, its hidden paths and the base's module
GANSEY_COPY = "gansey/flycheck_yarn.py"
GANSEY_HIDDEN = (GANSEY_COPY, "config/.env", "cache/emb.zarr", "vendor/knit/", "json/")
GANSEY_OLD = "def skeins(metres):\n    return metres // 180\n"


def gansey_checkout(
    root: Path, old: str, fixed: str, *, tracked: dict[str, str] | None = None, ignored: str = ""
) -> str:
    """The leak-audit red teams' checkout (sessions 21-22): ``gansey/yarn.py`` at ``old`` in
    the base, the fix (``fixed``) in the store with no ref, and hidden beside it Flycheck's
    copy of the fixed module (``gansey/flycheck_yarn.py``), a dotfile (``config/.env``), a Zarr
    folder (``cache/emb.zarr``), a vendored package (``vendor/knit/``) and a data folder named
    like a standard-library package (``json/``). ``tracked``: more files of the base;
    ``ignored``: more lines of its ``.gitignore``. The base's id."""
    make_repo(root)
    (root / "gansey").mkdir()
    (root / "gansey/__init__.py").write_text("")
    (root / "gansey/yarn.py").write_text(old)
    (root / "config").mkdir()
    (root / "config/app.yaml").write_text("name: gansey\n")
    for rel, text in (tracked or {}).items():
        (root / rel).write_text(text)
    (root / ".gitignore").write_text("flycheck_*\n.env\ncache/\nvendor/\njson/\n" + ignored)
    base = commit_base_with_unreachable_fix(root, {"gansey/yarn.py": fixed}, "round skeins up")
    (root / "gansey/flycheck_yarn.py").write_text(fixed)
    (root / "config/.env").write_text(fixed)
    (root / "cache/emb.zarr/0").mkdir(parents=True)
    (root / "cache/emb.zarr/0/0.0").write_text(fixed)
    (root / "vendor/knit").mkdir(parents=True)
    (root / "vendor/knit/__init__.py").write_text(fixed)
    (root / "vendor/knit/x.py").write_text("")
    (root / "json").mkdir()
    (root / "json/fixtures.json").write_text('{"fixed": true}\n')
    assert git(root, "status", "--porcelain") == ""
    return base


def make_repo(path: Path, *, identity: bool = True, commit: bool = True) -> Path:
    """A fresh git repository with a small recipe committed."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "--quiet", "-b", "main")
    if identity:
        git(path, "config", "user.name", IDENTITY[0])
        git(path, "config", "user.email", IDENTITY[1])
    (path / "recipe.toml").write_text("learning_rate = 1e-5\nstd_filter = false\n")
    (path / "train.py").write_text("print('train')\n")
    if commit:
        git(path, "add", "-A")
        git(path, "commit", "--quiet", "-m", "initial recipe")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def ws(repo: Path) -> Any:
    from evotree.core.workspace import Workspace, init_workspace

    init_workspace(repo)
    return Workspace.open(repo)


class Cli:
    """Runs the click CLI in-process against one repository."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.runner = CliRunner()

    def __call__(self, *args: str, code: int = 0) -> Any:
        result = self.runner.invoke(cli, ["-C", str(self.repo), *args], catch_exceptions=False)
        assert result.exit_code == code, (
            f"evotree {' '.join(args)} exited {result.exit_code}, expected {code}:\n{result.output}"
        )
        return result

    def json(self, *args: str, code: int = 0) -> Any:
        result = self(*args, "--json", code=code)
        return json.loads(result.stdout)


@pytest.fixture
def run(repo: Path) -> Cli:
    return Cli(repo)


def ledger_commits(repo: Path) -> int:
    out = git(repo, "rev-list", "--count", "refs/evotree/ledger", check=False)
    return int(out) if out.isdigit() else 0


def commit_file(worktree: Path, name: str, text: str, message: str) -> None:
    (worktree / name).write_text(text)
    git(worktree, "add", "-A")
    git(worktree, "commit", "--quiet", "-m", message)


def load_schema(name: str) -> dict[str, Any]:
    """A ``--json`` schema as evotree gives it: derived from a result type, or a shipped file."""
    from evotree.verbs.schemas import load_schema as load

    return load(name)


def validate(instance: Any, name: str) -> None:
    """Validate against evotree's schema ``name``, resolving its relative $refs."""
    import jsonschema
    from referencing import Registry, Resource

    from evotree.verbs.schemas import schema_names

    registry = Registry().with_resources(
        (f"evotree/{n}.schema.json", Resource.from_contents(load_schema(n)))
        for n in schema_names(include_aliases=True)
    )
    jsonschema.Draft202012Validator(load_schema(name), registry=registry).validate(instance)


#: Test modules of the runtime trace's own judgement of git — the second line: each plants a
#: future in a task repository, has the phase reach it, and checks that the trace finds the use.
#: The first line (each task repository bound as a copy pruned at its base,
#: ``harness/git_prune.py``) leaves nothing to reach, so these run with the repositories bound
#: whole (``EVOTREE_TASK_REPOS=whole``); ``tests/test_task_prune.py`` checks the first line, the
#: same attacks included. A test elsewhere asks for it with the ``future_present`` fixture.
SECOND_LINE_PREFIXES = ("test_redteam_trace", "test_trace_", "test_runtime_trace")
SECOND_LINE_MODULES = frozenset({"test_redteam_gym_trace"})


@pytest.fixture
def future_present(monkeypatch: pytest.MonkeyPatch) -> None:
    """Task repositories bound whole for this test: the trace's judgement alone."""
    monkeypatch.setenv("EVOTREE_TASK_REPOS", "whole")


@pytest.fixture(autouse=True)
def _second_line_modules(request: pytest.FixtureRequest) -> None:
    name = request.module.__name__.rpartition(".")[2]
    if name.startswith(SECOND_LINE_PREFIXES) or name in SECOND_LINE_MODULES:
        request.getfixturevalue("future_present")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)


# the shared set-up of workspaces and signers (keys, scored projects, remotes); it imports this
# module's helpers, so it comes last
from fixtures_ws import keys  # noqa: E402,F401 - a fixture, registered for every test file
