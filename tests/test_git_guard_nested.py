"""Git stores nested in a task repository's work tree, as a phase's box gets them (issue 29 item
4, issue 30): one that shares history with the repository it lies in is pruned at that
repository's base (:func:`evotree.harness.git_guard.before_phase`, ``prune_copy``'s ``at``), so
a vendored mirror or clone whose HEAD is the fix brings nothing the base does not reach into the
box; an unrelated one (a library's fixture repository) is pruned at its own HEAD, as before; one
that cannot be pruned so is hidden, said in the snapshot. Real git repositories in temporary
folders; the one test that runs git in the real bubblewrap box is heavy.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evotree.harness import git_guard, sandbox
from evotree.harness.git_prune import prune_copy
from evotree.harness.sandbox import wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec

_ENV = {
    "GIT_AUTHOR_NAME": "Ada Moss",
    "GIT_AUTHOR_EMAIL": "ada@moss.example",
    "GIT_COMMITTER_NAME": "Ada Moss",
    "GIT_COMMITTER_EMAIL": "ada@moss.example",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
#: a line only the future (the fix) holds
FUTURE = "    return rate * 0.5  # the night discount"


def _git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **_ENV}
    )
    assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
    return proc.stdout.strip()


def _task(root: Path) -> tuple[Path, str, str]:
    """(the task's checkout at its base, the base, the fix): the fix on a branch ``wip`` that
    the caller forgets (:func:`_forget`) once its nested stores have taken it."""
    (root / "tolls").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "tolls/toll.py").write_text("def toll(rate):\n    return rate\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "tolls: a flat rate")
    base = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-qb", "wip")
    (root / "tolls/toll.py").write_text(f"def toll(rate):\n{FUTURE}\n")
    _git(root, "commit", "-qam", "tolls: the night discount")
    fix = _git(root, "rev-parse", "HEAD")
    _git(root, "checkout", "-q", "main")
    (root / ".git/info/exclude").write_text("vendor/\n")
    return root, base, fix


def _forget(root: Path) -> None:
    """The fix again a commit no reference of the task's own store names."""
    _git(root, "branch", "-D", "wip")
    _git(root, "reflog", "expire", "--expire=now", "--all")
    assert _git(root, "status", "--porcelain") == ""


def _lib(path: Path) -> tuple[str, str]:
    """An unrelated repository (a history of its own, two commits, a branch past its HEAD):
    (its HEAD, the branch's commit)."""
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "lib.py").write_text("def helper(axles):\n    return axles * 2\n")
    _git(path, "add", "-A")
    _git(path, "commit", "-qm", "lib: a helper")
    (path / "lib.py").write_text("def helper(axles):\n    return axles * 3\n")
    _git(path, "commit", "-qam", "lib: thrice")
    head = _git(path, "rev-parse", "HEAD")
    _git(path, "checkout", "-qb", "next")
    (path / "lib.py").write_text("def helper(axles):\n    return axles * 4\n")
    _git(path, "commit", "-qam", "lib: four times")
    ahead = _git(path, "rev-parse", "HEAD")
    _git(path, "checkout", "-q", "main")
    return head, ahead


def _box(tmp_path: Path, roots: list[Path]) -> tuple[dict[Path, Path], dict]:
    """(each bound git directory's source by its path, the snapshot) of a phase over ``roots``."""
    trace = tmp_path / "raw.trace"
    binds = git_guard.before_phase(roots, trace)
    copies = [(Path(src), Path(dst)) for _, src, dst in binds]
    sources = {
        dst: src
        for src, dst in copies
        if src.parent.name.endswith(".git-copies") and not src.name.endswith(".hidden")
    }
    return sources, json.loads(git_guard.snapshot_path(trace).read_text())


def _has(git_dir: Path, oid: str) -> bool:
    proc = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "-e", oid],
        capture_output=True,
        env={**os.environ, **_ENV},
    )
    return proc.returncode == 0


def _no_future(copy: Path, fix: str, base: str) -> None:
    """Nothing of the fix in the copy: not its object, not its id in any file (a branch, a
    packed reference, a reflog, ``ORIG_HEAD``), not its line in any history; HEAD at the base."""
    assert not _has(copy, fix)
    for folder, _, files in os.walk(copy):
        for name in files:
            assert fix.encode() not in (Path(folder) / name).read_bytes(), Path(folder) / name
    assert not (copy / "ORIG_HEAD").exists() and not (copy / "logs").exists()
    assert _git(copy, "--git-dir", str(copy), "rev-parse", "HEAD") == base
    assert FUTURE not in _git(copy, "--git-dir", str(copy), "log", "-p", "--all")


def test_a_clone_at_the_fix_is_pruned_at_the_task_base(tmp_path: Path) -> None:
    """A non-bare clone of the task (``vendor/tolls``) checked out at the fix, with its reflog,
    ``ORIG_HEAD``, packed remote-tracking references and a tag at the fix: its box copy holds
    none of it; its branch is at the task's base. The task's own copy is unchanged (at its
    HEAD)."""
    root, base, fix = _task(tmp_path / "t")
    clone = root / "vendor/tolls"
    _git(root, "clone", "-q", str(root), str(clone))
    _git(clone, "checkout", "-q", "wip")
    _git(clone, "tag", "v2", fix)
    _git(clone, "reset", "-q", "--hard", "HEAD~1")
    _git(clone, "reset", "-q", "--hard", fix)  # ORIG_HEAD, reflog entries
    assert (clone / ".git/ORIG_HEAD").exists() and (clone / ".git/packed-refs").exists()
    assert fix in (clone / ".git/logs/HEAD").read_text()
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    copy = sources[clone / ".git"]
    _no_future(copy, fix, base)
    assert _git(root, "--git-dir", str(copy), "symbolic-ref", "HEAD") == "refs/heads/wip"
    assert _git(root, "--git-dir", str(sources[root / ".git"]), "rev-parse", "HEAD") == base


def test_a_bare_mirror_whose_head_is_the_fix_is_pruned_at_the_task_base(tmp_path: Path) -> None:
    """A bare mirror (``vendor/tolls.git``) whose HEAD names ``wip`` (the fix), with a reflog and
    ``ORIG_HEAD`` written in: the box copy holds nothing of the fix."""
    root, base, fix = _task(tmp_path / "t")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    (mirror / "ORIG_HEAD").write_text(f"{fix}\n")
    (mirror / "logs/refs/heads").mkdir(parents=True)
    (mirror / "logs/refs/heads/wip").write_text(f"{base} {fix} A <a@b> 0 +0000\tcommit\n")
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    _no_future(sources[mirror], fix, base)


def test_a_shallow_clone_of_the_fix_alone_is_pruned_at_the_task_base(tmp_path: Path) -> None:
    """A shallow clone of the fix (``--depth 1``) holds the fix and not the base: it shares
    history with the task all the same (the fix is a commit of the task's store, no reference
    naming it), so it is pruned at the base: HEAD at the base, no shallow boundary left."""
    root, base, fix = _task(tmp_path / "t")
    shallow = root / "vendor/shallow"
    _git(root, "clone", "-q", "--depth", "1", "-b", "wip", root.as_uri(), str(shallow))
    assert not _has(shallow / ".git", base)
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    copy = sources[shallow / ".git"]
    _no_future(copy, fix, base)
    assert not (copy / "shallow").read_text().strip()


def test_a_nested_clone_at_the_base_stays_readable(tmp_path: Path) -> None:
    """An honest nested clone at the task's base: its box copy's ``git log`` and ``git status``
    work (its history, its index), its ``origin/wip`` (the fix) is gone."""
    root, base, fix = _task(tmp_path / "t")
    clone = root / "vendor/tolls"
    _git(root, "clone", "-q", str(root), str(clone))
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    copy = sources[clone / ".git"]
    view = ["--git-dir", str(copy), "--work-tree", str(clone)]
    assert _git(clone, *view, "log", "--format=%H %s") == f"{base} tolls: a flat rate"
    assert _git(clone, *view, "status", "--porcelain") == ""
    assert _git(clone, *view, "show", "HEAD:tolls/toll.py").endswith("return rate")
    refs = _git(clone, *view, "for-each-ref", "--format=%(refname)").split()
    assert "refs/remotes/origin/wip" not in refs and "refs/heads/main" in refs
    _no_future(copy, fix, base)


def test_a_nested_clone_behind_the_base_keeps_its_own_head(tmp_path: Path) -> None:
    """A nested clone at an older commit of the task (the base moved on since): the base reaches
    its HEAD, so its copy is pruned at its own HEAD (nothing the base does not reach): its
    work tree and index stay clean, its log is its own; the fix is not there."""
    root, old, fix = _task(tmp_path / "t")
    clone = root / "vendor/old"
    _git(root, "clone", "-q", str(root), str(clone))
    (root / "README").write_text("tolls\n")
    _git(root, "add", "README")
    _git(root, "commit", "-qm", "docs: a readme")
    base = _git(root, "rev-parse", "HEAD")
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    copy = sources[clone / ".git"]
    view = ["--git-dir", str(copy), "--work-tree", str(clone)]
    assert _git(clone, *view, "rev-parse", "HEAD") == old
    assert _git(clone, *view, "status", "--porcelain") == ""
    assert not _has(copy, fix) and not _has(copy, base)


def test_an_unrelated_nested_repository_is_pruned_at_its_own_head(tmp_path: Path) -> None:
    """A library's fixture repository in the tree (no shared history): its box copy is what
    pruning it alone gives — its own HEAD, its own two commits, its branch past HEAD dropped —
    never the task's history."""
    root, base, _ = _task(tmp_path / "t")
    _forget(root)
    head, ahead = _lib(root / "vendor/lib")
    alone = prune_copy(root / "vendor/lib/.git", tmp_path / "alone")
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    copy = sources[root / "vendor/lib/.git"]
    assert _git(root, "--git-dir", str(copy), "rev-parse", "HEAD") == head == alone.base
    log = _git(root, "--git-dir", str(copy), "log", "--format=%s", "--all").splitlines()
    assert log == ["lib: thrice", "lib: a helper"]
    assert not _has(copy, ahead) and not _has(copy, base)
    refs = _git(root, "--git-dir", str(copy), "for-each-ref", "--format=%(refname)").split()
    assert refs == ["refs/heads/main"]


def test_an_unrelated_repository_whose_submodule_is_the_task_at_the_fix(tmp_path: Path) -> None:
    """A library in the tree whose submodule (absorbed: ``.git/modules/tolls``) is a clone of the
    task checked out at the fix: the library shares the task's history through it, so it is
    pruned at the task's base, its submodule's copy with it — the fix is in neither."""
    root, base, fix = _task(tmp_path / "t")
    lib = root / "vendor/lib"
    _lib(lib)
    _git(lib, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(root), "tolls")
    _git(lib / "tolls", "checkout", "-q", "wip")
    _git(lib, "commit", "-qam", "lib: the tolls at their newest")
    assert (lib / ".git/modules/tolls/HEAD").is_file()
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    copy = sources[lib / ".git"]
    _no_future(copy, fix, base)
    assert not _has(copy / "modules/tolls", fix)


def test_stores_nested_two_deep_are_pruned_at_the_task_base(tmp_path: Path) -> None:
    """A clone of the task at the fix holding a mirror of it whose HEAD is the fix, and an
    unrelated library holding a mirror of the task at the fix: every one that shares the task's
    history is pruned at the task's base (the mirror in the library found past the library,
    which shares none and keeps its own HEAD)."""
    root, base, fix = _task(tmp_path / "t")
    mid = root / "vendor/mid"
    _git(root, "clone", "-q", str(root), str(mid))
    _git(mid, "checkout", "-q", "wip")
    inner = mid / "deps/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(inner))
    (inner / "HEAD").write_text("ref: refs/heads/wip\n")
    lib_head, _ = _lib(root / "vendor/lib")
    in_lib = root / "vendor/lib/fixtures/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(in_lib))
    (in_lib / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    for store in (mid / ".git", inner, in_lib):
        _no_future(sources[store], fix, base)
    lib_copy = sources[root / "vendor/lib/.git"]
    assert _git(root, "--git-dir", str(lib_copy), "rev-parse", "HEAD") == lib_head


def test_a_git_file_in_the_tree_is_followed_to_its_store(tmp_path: Path) -> None:
    """A clone whose ``.git`` is a file naming its git directory elsewhere in the tree
    (``--separate-git-dir``), at the fix: the directory is pruned at the task's base. And a
    checkout whose own ``.git`` is a file naming a store beside it in the phase's folder: a
    mirror in that checkout is pruned at that store's base (the ``.git`` file names the
    repository whose work tree holds it)."""
    root, base, fix = _task(tmp_path / "phase/t")
    store = root / "vendor/store"
    wt = root / "vendor/wt"
    _git(root, "clone", "-q", f"--separate-git-dir={store}", str(root), str(wt))
    _git(wt, "checkout", "-q", "wip")
    assert (wt / ".git").is_file()
    _forget(root)
    # a second checkout of the task whose .git is a file naming its store beside it
    side = tmp_path / "phase/side"
    side_store = tmp_path / "phase/side-store"
    _git(root, "clone", "-q", f"--separate-git-dir={side_store}", str(root), str(side))
    mirror = side / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(store), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    sources, snap = _box(tmp_path, [tmp_path / "phase"])
    assert snap["hidden"] == []
    _no_future(sources[store], fix, base)
    _no_future(sources[mirror], fix, base)
    assert _git(root, "--git-dir", str(sources[side_store]), "rev-parse", "HEAD") == base


def test_a_nested_store_in_a_repository_that_cannot_be_pruned_is_hidden(tmp_path: Path) -> None:
    """The task's own git directory cannot be pruned (an alternate: not self-contained), so it
    is hidden: a mirror at the fix in its work tree has no base to be pruned at and is hidden
    too, said in the snapshot — never bound at its own HEAD."""
    root, _, _ = _task(tmp_path / "t")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    elsewhere = tmp_path / "elsewhere.git"
    _git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    (root / ".git/objects/info/alternates").write_text(f"{elsewhere / 'objects'}\n")
    sources, snap = _box(tmp_path, [root])
    assert sources == {}
    hidden = snap["hidden"]
    assert any(h.startswith(f"{root / '.git'} could not be pruned") for h in hidden), hidden
    assert any(h.startswith(f"{mirror} could not be pruned") for h in hidden), hidden


@pytest.mark.heavy
def test_git_in_the_box_reads_no_future_from_a_nested_mirror(tmp_path: Path) -> None:
    """In the real bubblewrap box: ``git show wip:...`` and ``git log --all -p`` on the nested
    mirror print nothing of the fix; its log at the base works."""
    if not sandbox.check_sandbox().ok:
        pytest.skip("needs bubblewrap")
    root, _, _ = _task(tmp_path / "t")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    script = (
        "git --git-dir vendor/tolls.git show wip:tolls/toll.py; "
        "git --git-dir vendor/tolls.git log --all -p; "
        "git --git-dir vendor/tolls.git log --format=%s"
    )
    spec = SandboxSpec(cwd=root, read_write=(root,), trace=tmp_path / "raw.trace")
    proc = subprocess.run(
        accounted(wrap(spec, ["bash", "-c", script])),
        env=sandbox_env({**os.environ, **_ENV}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert FUTURE not in proc.stdout + proc.stderr
    assert proc.stdout.strip().endswith("tolls: a flat rate"), proc.stdout + proc.stderr
