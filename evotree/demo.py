"""``evotree demo``: the loop on a small recipe repository, as real CLI subprocesses.

Every step is the exact command a person would type, run with ``python -P -m evotree`` (so a
folder of the demo repository can never shadow evotree's packages) and echoed with its output.
Until the harness, diagnostics and gates land, the demo walks init → branch → edit →
abandon → branch → tree → log.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evotree.errors import AlreadyExists, EvotreeError, GitCommandError
from evotree.proc import python_command, safe_env

__all__ = ["run_demo"]

_RECIPE = """\
# A GRPO post-training recipe, one knob per line: each evotree version changes some of them.
[model]
name = "tiny-llama"

[grpo]
learning_rate = 1e-5
num_generations = 8
max_completion_length = 64

[filters]
std_group_filter = false      # drop groups whose rewards do not vary (no learning signal)
std_threshold = 0.05
"""


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    if proc.returncode != 0:
        raise GitCommandError(f"`git {' '.join(args)}` failed in the demo repository: {proc.stderr.strip()}",
                              fix="check that git works here (git --version)")
    return proc.stdout


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    if old not in text:
        raise EvotreeError(f"demo: expected {old!r} in {path}", fix="re-run the demo in an empty folder")
    path.write_text(text.replace(old, new))


def run_demo(path: str | None, *, keep: bool = True, echo: Callable[[str], None] = print) -> Path:
    """Create a demo repository at ``path`` (default: a temp folder) and walk the loop in it."""
    started = time.monotonic()
    if path is None:
        repo = Path(tempfile.mkdtemp(prefix="evotree-demo-"))
    else:
        repo = Path(path).resolve()
        if repo.exists() and any(repo.iterdir()):
            raise AlreadyExists(f"demo path {repo} is not empty", fix="pass a new or empty folder")
        repo.mkdir(parents=True, exist_ok=True)
    env = safe_env()
    steps: list[tuple[str, Callable[[], None]]] = []

    def evotree(*args: str) -> Callable[[], None]:
        def step() -> None:
            echo(f"$ evotree {' '.join(_quote(a) for a in args)}")
            proc = subprocess.run(
                python_command("-m", "evotree", "-C", str(repo), *args),
                cwd=repo, env=env, capture_output=True, text=True,
            )
            out = (proc.stdout + proc.stderr).rstrip()
            if out:
                echo(out)
            if proc.returncode != 0:
                raise EvotreeError(
                    f"demo step `evotree {' '.join(args)}` failed with exit code {proc.returncode}",
                    fix="see the output above; the demo workspace is left as it was for inspection",
                )
        return step

    def setup_repo() -> None:
        echo(f"demo repository: {repo}")
        _git(repo, "init", "--quiet", "-b", "main")
        if not _git_ok(repo, "config", "user.name") or not _git_ok(repo, "config", "user.email"):
            _git(repo, "config", "user.name", "evotree demo")
            _git(repo, "config", "user.email", "demo@evotree.invalid")
        (repo / "recipe.toml").write_text(_RECIPE)
        (repo / "skills").mkdir()  # a user folder named like an evotree package: must not shadow it
        (repo / "skills" / "__init__.py").write_text("raise ImportError('user skills/ shadowed evotree')\n")
        _git(repo, "add", "-A")
        _git(repo, "commit", "--quiet", "-m", "initial recipe")

    def edit_v1() -> None:
        wt = repo / ".evotree" / "worktrees" / "v1"
        echo(f"(edit) {wt / 'recipe.toml'}: std_group_filter = true; git commit")
        _edit(wt / "recipe.toml", "std_group_filter = false", "std_group_filter = true ")
        _git(wt, "commit", "--quiet", "-am", "enable StdGroupFilter")

    def edit_v2() -> None:
        wt = repo / ".evotree" / "worktrees" / "v2"
        echo(f"(edit) {wt / 'recipe.toml'}: learning_rate = 3e-5; git commit")
        _edit(wt / "recipe.toml", "learning_rate = 1e-5", "learning_rate = 3e-5")
        _git(wt, "commit", "--quiet", "-am", "raise the learning rate 3x")

    steps = [
        ("create a recipe repository", setup_repo),
        ("make it a workspace", evotree("init")),
        ("branch v1", evotree("branch", "-m", "filter dead groups (reward std < 0.05): more signal per batch")),
        ("change v1's recipe", edit_v1),
        ("branch v2", evotree("branch", "-m", "3x learning rate converges faster")),
        ("change v2's recipe", edit_v2),
        ("abandon v2", evotree("abandon", "v2", "--reason", "reward collapsed after 40 steps (kept as negative evidence)")),
        ("branch v3 from v1", evotree("branch", "--from", "v1", "-m", "StdGroupFilter with a longer completion budget")),
        ("look at the tree", evotree("tree")),
        ("the ledger", evotree("log", "-n", "5")),
    ]
    try:
        for number, (title, step) in enumerate(steps, start=1):
            echo(f"\n[{number}/{len(steps)}] {title}")
            step()
    finally:
        if not keep:
            shutil.rmtree(repo, ignore_errors=True)
    echo(f"\ndone in {time.monotonic() - started:.1f}s. The workspace is at {repo}" if keep else "\ndone.")
    echo("Training runs, diagnostics, audits and promotion are added by later evotree releases.")
    return repo


def _git_ok(repo: Path, *args: str) -> bool:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True).returncode == 0


def _quote(arg: str) -> str:
    return f'"{arg}"' if (" " in arg or not arg) else arg
