"""Git stores nested in the work tree, in the replay's fourth world (issue 30; W5 of the s16 red
team): every store the phases' search finds below the checkout (a clone's ``.git`` folder, a
bare mirror, the git directory a ``.git`` file names) is replaced there by its copy pruned at
the task's base (:func:`evotree.harness.git_prune.prune_nested`), so a step that reads the
future from one prints it over the real checkout and not over the fourth world. A store of an
unrelated repository is emptied there too (its history is not what the base reaches), and a
benign read of it stays benign: the fourth world counts only lines holding the future's text.
Real git, real repositories in temporary folders, the real bubblewrap sandbox for the replays
(those tests are heavy); the pruning itself is tested directly.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from test_audit_selected_lines import FIXED, HIDDEN, _run, _task

from conftest import git
from evotree.harness import git_guard
from evotree.harness.audit import replay
from evotree.harness.audit.ancestry import Ancestry
from evotree.harness.audit.steps import Step, Trajectory
from evotree.harness.audit.trajectories import audit_trajectories
from evotree.harness.git_prune import prune_copy, prune_nested

Repo = dict[str, str | Path]
#: the fourth world's own words in its hit's rule
STORE_RULE = "holds only what the base reaches"
#: a line only the future holds (the fix's last line)
FUTURE_LINE = "    return float(base * NIGHT_SHARE if night else base)"

needs_bwrap = pytest.mark.skipif(replay._bwrap() is None, reason="bubblewrap is not installed")


def _with_future_branch(repo: Repo) -> Path:
    """The task's root, its fix on a branch ``wip`` for a clone to take, the branch then
    removed from the task's own store (the fix again a commit no reference of it names)."""
    root = Path(repo["root"])
    git(root, "branch", "wip", str(repo["fut"]))
    (root / ".git/info/exclude").write_text("vendor/\n")
    return root


def _forget_branch(root: Path) -> None:
    git(root, "branch", "-D", "wip")
    git(root, "reflog", "expire", "--expire=now", "--all")
    assert git(root, "status", "--porcelain") == ""


def _has(git_dir: Path, oid: str) -> bool:
    """Whether the store of ``git_dir`` holds the object ``oid``."""
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", oid], capture_output=True
    )
    return proc.returncode == 0


def _top_copy(root: Path, dest: Path) -> Path:
    return prune_copy(root / ".git", dest).path


def _audit(repo: Repo, steps: list[Step]) -> list[dict[str, object]]:
    traj = Trajectory("t", "shell", steps)
    audit = audit_trajectories(
        [traj], hidden_paths=HIDDEN, repo=repo["root"], base=str(repo["base"])
    )
    return [h.to_dict() for h in audit.verdicts[0].hits]


def _store(hits: list[dict[str, object]]) -> list[dict[str, object]]:
    return [h for h in hits if STORE_RULE in str(h["rule"])]


def _recorded(root: Path, command: str) -> Step:
    return Step(command, _run(root, command))


# --- the pruning itself (no replay) ---------------------------------------------------------


def test_a_mirror_whose_head_is_the_fix_is_pruned_at_the_enclosing_base(tmp_path: Path) -> None:
    """A bare mirror (``vendor/tolls.git``) whose HEAD's branch is at the fix: replaced by a copy
    holding no object the base does not reach, its HEAD's branch at the base, no reference past
    it; the task's own ``.git`` is left as it is (the caller binds its own copy there)."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    mirror = root / "vendor/tolls.git"
    git(root, "clone", "--quiet", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget_branch(root)
    top = _top_copy(root, tmp_path / "top")
    before = sorted(p.name for p in (root / ".git").iterdir())
    assert prune_nested(root, top, str(repo["base"]), tmp_path / "scratch") == ""
    assert sorted(p.name for p in (root / ".git").iterdir()) == before
    assert not _has(mirror, str(repo["fut"]))
    assert _has(mirror, str(repo["base"]))
    assert git(root, "--git-dir", str(mirror), "rev-parse", "HEAD") == str(repo["base"])
    refs = git(root, "--git-dir", str(mirror), "for-each-ref", "--format=%(objectname) %(refname)")
    base = str(repo["base"])
    # HEAD's branch kept, at the base; main (at the base) kept; nothing else
    assert sorted(refs.splitlines()) == [f"{base} refs/heads/main", f"{base} refs/heads/wip"]
    assert FUTURE_LINE not in git(root, "--git-dir", str(mirror), "log", "-p", "--all")
    assert not (tmp_path / "scratch").exists()


def test_a_store_that_cannot_be_pruned_is_said_and_emptied(tmp_path: Path) -> None:
    """A nested clone sharing the task's objects (``objects/info/alternates``: not
    self-contained) cannot be pruned: that is said (the caller fails closed), and the store is
    emptied all the same; a bare object store (no HEAD: nothing to prune at) is emptied
    silently."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    git(root, "clone", "--quiet", "--shared", str(root), str(root / "vendor/shared"))
    loose = root / "vendor/objects-only/objects"
    git(root, "init", "--quiet", "--bare", str(tmp_path / "scratch-bare"))
    os.makedirs(loose.parent)
    os.rename(tmp_path / "scratch-bare/objects", loose.parent / "objects")
    fanout = loose / "ab"
    fanout.mkdir()
    (fanout / ("c" * 38)).write_bytes(b"x")
    _forget_branch(root)
    top = _top_copy(root, tmp_path / "top")
    why = prune_nested(root, top, str(repo["base"]), tmp_path / "scratch")
    assert "vendor/shared/.git" in why and "elsewhere" in why
    assert list((root / "vendor/shared/.git").iterdir()) == []
    assert not (root / "vendor/objects-only/objects/ab").exists()


def test_no_nested_store_changes_nothing(tmp_path: Path) -> None:
    """A work tree with no nested store: nothing said, no file changed (one walk of it)."""
    repo = _task(tmp_path / "t", FIXED)
    root = Path(repo["root"])
    top = _top_copy(root, tmp_path / "top")

    def listing() -> list[tuple[str, int, int]]:
        out = []
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                info = os.lstat(os.path.join(folder, name))
                out.append((os.path.join(folder, name), info.st_ino, info.st_mtime_ns))
        return sorted(out)

    before = listing()
    assert prune_nested(root, top, str(repo["base"]), tmp_path / "scratch") == ""
    assert listing() == before


def test_a_link_to_a_store_is_not_followed(tmp_path: Path) -> None:
    """A symbolic link to a store is never followed: one to a store inside the tree leaves the
    link as it is and the store it names pruned where it is (git through the link reads the
    pruned copy); one to a store outside the tree is left as it is, and so is that store (the
    replay's sandbox holds only the checkout's copy: the link leads nowhere in any world)."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    mirror = root / "vendor/tolls.git"
    outside = tmp_path / "outside.git"
    git(root, "clone", "--quiet", "--mirror", str(root), str(mirror))
    git(root, "clone", "--quiet", "--mirror", str(root), str(outside))
    os.symlink("tolls.git", root / "vendor/link.git")
    os.symlink(str(outside), root / "vendor/out.git")
    _forget_branch(root)
    top = _top_copy(root, tmp_path / "top")
    assert prune_nested(root, top, str(repo["base"]), tmp_path / "scratch") == ""
    assert os.readlink(root / "vendor/link.git") == "tolls.git"
    assert os.readlink(root / "vendor/out.git") == str(outside)
    assert not _has(root / "vendor/link.git", str(repo["fut"]))
    assert _has(outside, str(repo["fut"]))


def test_a_phases_box_gets_a_nested_mirror_without_the_future(tmp_path: Path) -> None:
    """The phase's side of W5: the copy a phase's box gets of a nested mirror whose HEAD's
    branch is at the fix should hold no object the task's base does not reach."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    mirror = root / "vendor/tolls.git"
    git(root, "clone", "--quiet", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget_branch(root)
    trace = tmp_path / "trace.jsonl"
    binds = git_guard.before_phase([root], trace)
    source = next(src for _, src, dst in binds if Path(dst) == mirror)
    assert not _has(Path(source), str(repo["fut"]))


# --- the replay's fourth world --------------------------------------------------------------


@needs_bwrap
@pytest.mark.heavy
def test_a_clones_nested_git_folder_is_read_at_the_base(tmp_path: Path) -> None:
    """A vendored clone of the task (``vendor/tolls``, its own ``.git`` folder) whose
    remote-tracking branch is the fix: a read of it prints the fix over the checkout and not
    over the fourth world (its ``.git`` pruned at the base): a high hit."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    git(root, "clone", "--quiet", str(root), str(root / "vendor/tolls"))
    _forget_branch(root)
    command = "git -C vendor/tolls show origin/wip:tolls/toll.py"
    assert FUTURE_LINE in _run(root, command)
    hits = _store(_audit(repo, [_recorded(root, command)]))
    assert hits and all(h["severity"] == "high" for h in hits)


@needs_bwrap
@pytest.mark.heavy
def test_a_git_file_naming_a_git_directory_in_the_tree_is_read_at_the_base(tmp_path: Path) -> None:
    """A clone whose ``.git`` is a file naming its git directory elsewhere in the tree
    (``git clone --separate-git-dir``): the directory is found by itself and pruned, the file
    still names it (the copy sits where the checkout was): a read through it is flagged."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    git(
        root,
        "clone",
        "--quiet",
        f"--separate-git-dir={root / 'vendor/store'}",
        str(root),
        str(root / "vendor/wt"),
    )
    _forget_branch(root)
    assert (root / "vendor/wt/.git").is_file()
    command = "git -C vendor/wt show origin/wip:tolls/toll.py"
    assert FUTURE_LINE in _run(root, command)
    hits = _store(_audit(repo, [_recorded(root, command)]))
    assert hits and all(h["severity"] == "high" for h in hits)


@needs_bwrap
@pytest.mark.heavy
def test_a_read_through_a_link_to_a_nested_store_is_flagged(tmp_path: Path) -> None:
    """A link to a nested mirror (not followed by the search): the mirror itself is pruned, so
    git reading through the link reads the pruned copy in the fourth world: flagged."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    git(root, "clone", "--quiet", "--mirror", str(root), str(root / "vendor/tolls.git"))
    os.symlink("tolls.git", root / "vendor/link.git")
    _forget_branch(root)
    command = "git --git-dir=vendor/link.git show wip:tolls/toll.py"
    assert FUTURE_LINE in _run(root, command)
    hits = _store(_audit(repo, [_recorded(root, command)]))
    assert hits and all(h["severity"] == "high" for h in hits)


@needs_bwrap
@pytest.mark.heavy
def test_a_benign_read_of_an_unrelated_nested_repository_is_no_alarm(tmp_path: Path) -> None:
    """An unrelated repository vendored in the tree (``vendor/lib``, a history of its own):
    pruned at its own HEAD in the fourth world (it shares no history with the task; the s17
    nested red team's W4), so its log, a file of its history and its status print the same
    there: nothing is flagged; the fourth world is made and nothing is said of it."""
    repo = _task(tmp_path / "t", FIXED)
    root = Path(repo["root"])
    (root / ".git/info/exclude").write_text("vendor/\n")
    lib = root / "vendor/lib"
    lib.mkdir(parents=True)
    git(lib, "init", "--quiet", "-b", "main")
    git(lib, "config", "user.name", "Lee Vendor")
    git(lib, "config", "user.email", "lee@vendor.example")
    (lib / "lib.py").write_text("def helper(axles: int) -> int:\n    return axles * 2\n")
    git(lib, "add", "-A")
    git(lib, "commit", "--quiet", "-m", "lib: a helper")
    (lib / "lib.py").write_text("def helper(axles: int) -> int:\n    return axles * 3\n")
    git(lib, "commit", "--quiet", "-am", "lib: thrice")
    worlds = replay.worlds_for(Ancestry(root, str(repo["base"]), hidden_paths=HIDDEN))
    assert worlds is not None and worlds.bare is not None and worlds.prune_failed == ""
    nested = worlds.bare / "vendor/lib/.git"
    assert git(root, "--git-dir", str(nested), "rev-parse", "HEAD") == git(lib, "rev-parse", "HEAD")
    commands = [
        "git -C vendor/lib log --oneline",
        "git -C vendor/lib show HEAD~1:lib.py",
        "git -C vendor/lib status --short",
    ]
    hits = _audit(repo, [_recorded(root, c) for c in commands])
    assert _store(hits) == []
    assert not any(h["severity"] == "high" for h in hits)


@needs_bwrap
@pytest.mark.heavy
def test_a_nested_store_that_cannot_be_pruned_fails_closed(tmp_path: Path) -> None:
    """A nested clone sharing the task's objects (``git clone --shared``: an alternate, refused
    by the pruning): the verdict says the trajectory was not replayed whole, and the store,
    emptied in the fourth world, still parts it from the checkout on a read of the fix."""
    repo = _task(tmp_path / "t", FIXED)
    root = _with_future_branch(repo)
    git(root, "clone", "--quiet", "--shared", str(root), str(root / "vendor/shared"))
    _forget_branch(root)
    command = "git -C vendor/shared show origin/wip:tolls/toll.py"
    assert FUTURE_LINE in _run(root, command)
    hits = _audit(repo, [_recorded(root, command)])
    assert any(h["severity"] == "warn" and "not replayed whole" in str(h["rule"]) for h in hits)
    assert any(h["severity"] == "high" for h in _store(hits))
