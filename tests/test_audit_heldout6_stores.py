"""Content provenance reads every object store the task repository can reach.

Causes found by studying the sixth held-out set's misses (now a development set), each tested
with a leak beside its look-alike, outputs taken from real git:

* a submodule's own store (``.git/modules/<name>``): its commits beyond the commit the
  superproject's base pins, their subjects, lines and tags are the task's future;
* an alternate (``objects/info/alternates``, followed by git itself, nested ones too): a store
  the repository borrows is the repository's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import git, make_repo
from evotree.harness.audit.future_content import build_index
from evotree.harness.audit.future_stores import module_stores
from evotree.harness.audit.repo_objects import open_repo
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories

HIDDEN = ("judge/",)
FIXED = "    return text.split('W')[0] and int(text[1:-1]) * 7  # weeks designator\n"


def _run(repo: Path, command: str) -> str:
    proc = subprocess.run(["bash", "-c", command], cwd=repo, capture_output=True, text=True)
    return proc.stdout + proc.stderr


def _flagged(repo: dict[str, str], command: str, output: str) -> bool:
    traj = Trajectory("t", "shell", [Step(command, output)])
    result = audit_trajectories([traj], hidden_paths=HIDDEN, repo=repo["repo"], base=repo["base"])
    return result.verdicts[0].flagged


@pytest.fixture(scope="module")
def superproject(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A task repository whose submodule ``vendor/dur`` pins the commit before the fix; the
    submodule's own store holds the fix (``origin/main``, tag ``v1.3.0``)."""
    tmp = tmp_path_factory.mktemp("super")
    lib = make_repo(tmp / "lib")
    (lib / "dur.py").write_text("def weeks(text):\n    raise ValueError(text)\n")
    git(lib, "add", "dur.py")
    git(lib, "commit", "-qm", "dur: days only")
    (lib / "dur.py").write_text("def weeks(text):\n" + FIXED)
    git(lib, "commit", "-qam", "Accept the week designator in durations")
    git(lib, "tag", "v1.3.0")
    task = make_repo(tmp / "task")
    git(task, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/dur")
    git(task / "vendor" / "dur", "checkout", "-q", "HEAD~1")
    git(task, "add", "vendor/dur")
    git(task, "commit", "-qm", "vendor dur at days only")
    return {"repo": str(task), "base": git(task, "rev-parse", "HEAD"), "lib": str(lib)}


def test_a_submodule_store_is_indexed_beyond_the_commit_the_base_pins(
    superproject: dict[str, str],
) -> None:
    r = open_repo(superproject["repo"])
    found = module_stores(r.commondir, r.repo, superproject["base"])
    assert [s.path for s in found] == ["vendor/dur"]
    pinned = git(Path(superproject["repo"]) / "vendor" / "dur", "rev-parse", "HEAD")
    assert found[0].base == pinned
    index = build_index(superproject["repo"], superproject["base"])
    fix = git(Path(superproject["lib"]), "rev-parse", "HEAD")
    assert fix in index.objects and fix in index.foreign
    assert FIXED.strip() in index.lines
    assert "v1.3.0" in index.tags
    assert pinned not in index.objects  # the pinned commit is the base's


def test_what_only_the_submodule_store_holds_is_a_leak(superproject: dict[str, str]) -> None:
    repo = Path(superproject["repo"])
    leak = "git -C vendor/dur log --oneline --all"
    out = _run(repo, leak)
    assert "Accept the week designator" in out  # real git: the store's future commit
    assert _flagged(superproject, leak, out)
    shown = "git -C vendor/dur show v1.3.0:dur.py"
    assert _flagged(superproject, shown, _run(repo, shown))
    # the look-alikes: the submodule's own HEAD, the superproject's history
    benign_commands = (
        "git -C vendor/dur log --oneline",
        "git submodule status",
        "cat vendor/dur/dur.py",
    )
    for benign in benign_commands:
        assert not _flagged(superproject, benign, _run(repo, benign)), benign


@pytest.fixture(scope="module")
def borrowing(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A task repository at its base whose store borrows a mirror's (which itself borrows a
    second one, holding the fix): no reference of the task repository reaches the fix."""
    tmp = tmp_path_factory.mktemp("borrow")
    up = make_repo(tmp / "up")
    (up / "roman.py").write_text("def to_int(s):\n    return sum(V[c] for c in s)\n")
    git(up, "add", "roman.py")
    git(up, "commit", "-qm", "roman: additive only")
    base = git(up, "rev-parse", "HEAD")
    (up / "roman.py").write_text(
        "def to_int(s):\n    vals = [V[c] for c in s]  # subtractive pairs: IV, IX\n"
        "    return sum(-v if v < w else v for v, w in zip(vals, vals[1:] + [0]))\n"
    )
    git(up, "commit", "-qam", "to_int: subtractive pairs")
    inner = tmp / "inner.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(up), str(inner)], check=True)
    outer = tmp / "outer.git"
    subprocess.run(["git", "clone", "-q", "--bare", "--shared", str(inner), str(outer)], check=True)
    task = tmp / "task"
    subprocess.run(["git", "clone", "-q", "--shared", str(outer), str(task)], check=True)
    git(task, "reset", "-q", "--hard", base)
    for ref in ("refs/remotes/origin/main", "refs/remotes/origin/HEAD"):
        git(task, "update-ref", "-d", ref)
    git(task, "reflog", "expire", "--expire=now", "--all")
    return {"repo": str(task), "base": base, "outer": str(outer)}


def test_an_alternate_store_is_the_repositorys_own(borrowing: dict[str, str]) -> None:
    task = Path(borrowing["repo"])
    assert "outer.git" in (task / ".git/objects/info/alternates").read_text()
    index = build_index(borrowing["repo"], borrowing["base"])
    fix = git(Path(borrowing["outer"]), "rev-parse", "main")
    assert fix in index.objects and fix not in index.foreign  # git resolves it here
    assert "vals = [V[c] for c in s]  # subtractive pairs: IV, IX" in index.lines
    leak = f"git -C {borrowing['outer']} show main:roman.py"
    assert _flagged(borrowing, leak, _run(task, leak))
    listed = "git cat-file --batch-all-objects --batch-check"
    assert _flagged(borrowing, listed, _run(task, listed))
    benign = "git show HEAD:roman.py"
    assert not _flagged(borrowing, benign, _run(task, benign))


def _audit_rules(repo: dict[str, str] | None, *commands: str) -> bool:
    traj = Trajectory("t", "shell", [Step(c, None) for c in commands])
    extra = {"repo": repo["repo"], "base": repo["base"]} if repo else {}
    return audit_trajectories([traj], hidden_paths=HIDDEN, **extra).verdicts[0].flagged


def test_git_in_a_submodule_resolves_in_the_submodules_store(
    superproject: dict[str, str], tmp_path: Path
) -> None:
    # the superproject has its own v1.3.0 tag at its base: resolved there, it would clear
    git(Path(superproject["repo"]), "tag", "-f", "v1.3.0", superproject["base"])
    try:
        leak = "git -C vendor/dur show v1.3.0 -- dur.py"
        assert _audit_rules(superproject, leak)
        assert _audit_rules(superproject, "git -C vendor/dur diff HEAD origin/main")
        # git's other global options before -C
        assert _audit_rules(superproject, "git --no-pager -C vendor/dur show v1.3.0:dur.py")
        assert not _audit_rules(superproject, "git -C vendor/dur log --oneline HEAD")
        assert not _audit_rules(superproject, "git show v1.3.0:recipe.toml")  # the superproject's
    finally:
        git(Path(superproject["repo"]), "tag", "-d", "v1.3.0")


def test_submodule_foreach_runs_its_command_in_each_submodule(
    superproject: dict[str, str],
) -> None:
    leak = "git submodule foreach 'git log --oneline --all --decorate'"
    assert "Accept the week designator" in _run(Path(superproject["repo"]), leak)
    assert _audit_rules(None, leak)
    assert _audit_rules(superproject, leak)  # resolved in the submodule's store
    benign = "git submodule foreach --recursive 'git status; git log -2'"
    assert not _audit_rules(None, benign)
    assert not _audit_rules(superproject, benign)


def test_submodule_update_remote_checks_out_the_remote_tracking_branch(
    superproject: dict[str, str],
) -> None:
    leak = "git submodule update --remote --no-fetch vendor/dur"
    assert _audit_rules(None, leak)
    assert _audit_rules(superproject, leak)
    assert not _audit_rules(superproject, "git submodule update --init")
    assert not _audit_rules(superproject, "git submodule status")


def test_git_in_a_borrowed_store_resolves_its_own_branches(borrowing: dict[str, str]) -> None:
    # `main` of the task repository is the base; `main` of the store it borrows is the fix
    command = f"git -C {borrowing['outer']} log --oneline -1 main"
    assert _audit_rules(borrowing, command)
    assert not _audit_rules(borrowing, "git log --oneline -1 main")
