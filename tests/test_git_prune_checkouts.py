"""Two checkouts beside each other in a phase's box or the judge's copy (issue 29, the s17 second
red team's R3 with a work tree): each checkout's pruned copy is tried against every other's
store, both ways (:func:`evotree.harness.git_prune.relate_checkouts`). A clone with a work tree
of its own, checked out at the fix beside the task's checkout, holds the task's future — it is
pruned at the task's base, in the box and in the judge's copy; the task's own copy stays at its
base; unrelated checkouts keep their own HEADs; two that hold each other's future are hidden
(refused in the judge's copy). Once every store is pruned, every checkout is tried the other
way too, against the future of every store beside it, bare ones included
(:func:`evotree.harness.git_relations.cross_checked`): the task's store kept bare beside a clone
at the fix leaves the clone pruned at the bare store's base (box and judge), as does that bare
store kept in the clone's own work tree; where the bare store is left unpruned (past the cap,
or its pruning past the deadline) the clone is tried against it at its own HEAD and hidden; an
unrelated bare store beside an honest checkout, pruned or not, changes nothing. Real git repositories in temporary folders,
no mocks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from evotree.harness import git_guard, git_relations, sandbox_copy
from evotree.harness.git_prune import prune_copy
from evotree.harness.sandbox_copy import copy_regular_files
from tests.test_git_guard_nested import FUTURE, _box, _forget, _git, _has, _lib, _task
from tests.test_redteam_s17_box_nested_redteam import _blob, _holds, _stores


def _clone_at_the_fix(phase: Path) -> tuple[Path, str, str, Path]:
    """(the task's checkout ``phase/t``, its base, the fix's blob, a clone ``phase/cache`` with
    a work tree checked out at the fix): the task's store keeps the fix as objects no reference
    names (:func:`_forget`)."""
    root, base, fix = _task(phase / "t")
    blob = _blob(root, fix)
    cache = phase / "cache"
    _git(phase, "clone", "-q", str(root), str(cache))
    _git(cache, "checkout", "-q", "wip")
    assert FUTURE in (cache / "tolls/toll.py").read_text()
    _forget(root)
    assert _has(root / ".git", fix)  # the task's future: in its store, past its base
    return root, base, blob, cache


def _judge(tmp_path: Path, root: Path) -> tuple[Path, list[str]]:
    dst = tmp_path / "judge"
    dst.mkdir()
    report = copy_regular_files(root, dst, max_files=10_000, max_bytes=1 << 30)
    return dst, report.refused


def test_a_clone_with_a_work_tree_at_the_fix_is_pruned_at_the_task_base_in_the_box(
    tmp_path: Path,
) -> None:
    phase = tmp_path / "phase"
    root, base, blob, cache = _clone_at_the_fix(phase)
    sources, snap = _box(tmp_path, [phase])
    assert _holds(sources, blob) == [], snap
    assert cache / ".git" in sources and root / ".git" in sources, snap
    assert _git(root, "--git-dir", str(sources[cache / ".git"]), "rev-parse", "HEAD") == base
    assert _git(root, "--git-dir", str(sources[root / ".git"]), "rev-parse", "HEAD") == base


def test_a_clone_with_a_work_tree_at_the_fix_is_pruned_at_the_task_base_in_the_judge_copy(
    tmp_path: Path,
) -> None:
    phase = tmp_path / "phase"
    root, base, blob, _ = _clone_at_the_fix(phase)
    dst, refused = _judge(tmp_path, phase)
    assert not [s for s in _stores(dst) if _has(s, blob)], refused
    assert _git(root, "--git-dir", str(dst / "cache/.git"), "rev-parse", "HEAD") == base
    assert _git(root, "--git-dir", str(dst / "t/.git"), "rev-parse", "HEAD") == base


def test_a_store_in_the_clones_work_tree_follows_its_new_base(tmp_path: Path) -> None:
    """A mirror of the clone in the clone's own work tree (related to the clone, nearest
    first) is pruned at the clone's base once the clone is pruned at the task's."""
    phase = tmp_path / "phase"
    root, base, fix = _task(phase / "t")
    blob = _blob(root, fix)
    cache = phase / "cache"
    _git(phase, "clone", "-q", str(root), str(cache))
    _git(cache, "checkout", "-q", "wip")
    (cache / ".git/info/exclude").write_text("vendor/\n")
    _git(cache, "clone", "-q", "--mirror", str(cache), str(cache / "vendor/m.git"))
    _forget(root)
    sources, snap = _box(tmp_path, [phase])
    assert _holds(sources, blob) == [], snap
    dst, refused = _judge(tmp_path, phase)
    assert not [s for s in _stores(dst) if _has(s, blob)], refused


def test_unrelated_checkouts_beside_each_other_keep_their_own_heads(tmp_path: Path) -> None:
    phase = tmp_path / "phase"
    root, base, _ = _task(phase / "t")
    head, _ = _lib(phase / "lib")
    _forget(root)
    sources, snap = _box(tmp_path, [phase])
    assert snap["hidden"] == []
    assert _git(root, "--git-dir", str(sources[root / ".git"]), "rev-parse", "HEAD") == base
    lib_copy = sources[phase / "lib/.git"]
    assert _git(root, "--git-dir", str(lib_copy), "rev-parse", "HEAD") == head
    dst, refused = _judge(tmp_path, phase)
    assert refused == []
    assert _git(root, "--git-dir", str(dst / "lib/.git"), "rev-parse", "HEAD") == head


def test_two_clones_at_the_same_commit_keep_their_own_copies(tmp_path: Path) -> None:
    """An honest pair: a second clone of the task at its base holds nothing past it."""
    phase = tmp_path / "phase"
    root, base, _ = _task(phase / "t")
    _forget(root)
    other = phase / "other"
    _git(phase, "clone", "-q", str(root), str(other))
    sources, snap = _box(tmp_path, [phase])
    assert snap["hidden"] == []
    for gd in (root / ".git", other / ".git"):
        assert _git(root, "--git-dir", str(sources[gd]), "rev-parse", "HEAD") == base


@pytest.mark.parametrize("where", ["box", "judge"])
def test_two_checkouts_holding_each_others_future_are_hidden(tmp_path: Path, where: str) -> None:
    """Each holds what the other's base does not reach: a clone checked out at the fix whose
    store fetched the task's next commit (the task's base now), beside the task whose store
    holds the fix: which is the task cannot be told — both hidden (refused in the judge's copy),
    the fix in neither."""
    phase = tmp_path / "phase"
    root, _, fix = _task(phase / "t")
    blob = _blob(root, fix)
    other = phase / "other"
    _git(phase, "clone", "-q", "--no-local", str(root), str(other))
    _git(other, "checkout", "-q", "wip")
    (root / "README").write_text("tolls\n")
    _git(root, "add", "README")
    _git(root, "commit", "-qm", "docs: a readme")
    base = _git(root, "rev-parse", "HEAD")
    _git(other, "fetch", "-q", "origin")
    _forget(root)
    assert _has(root / ".git", fix) and _has(other / ".git", base)
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == []
        hidden = "\n".join(snap["hidden"])
        assert str(root / ".git") in hidden and str(other / ".git") in hidden, snap
    else:
        dst, refused = _judge(tmp_path, phase)
        assert not [s for s in _stores(dst) if _has(s, blob)], refused
        assert any(r.startswith("t/.git") for r in refused), refused
        assert any(r.startswith("other/.git") for r in refused), refused


def _bare_task_beside_a_clone_at_the_fix(tmp_path: Path) -> tuple[Path, Path, Path, str, str]:
    """(the phase's folder, the task's store kept bare ``phase/task.git``, a clone of it with a
    work tree ``phase/cache`` checked out at the fix, the base, the fix's blob): the fix
    objects of the bare store that no reference names."""
    src, base, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    bare = phase / "task.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(bare))
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", str(bare), str(cache))
    _git(cache, "checkout", "-q", "wip")
    _git(bare, "branch", "-D", "wip")  # the fix: objects of the task's store no reference names
    assert _has(bare, fix) and _git(bare, "rev-parse", "HEAD") == base
    return phase, bare, cache, base, blob


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_clone_at_the_fix_beside_the_task_store_kept_bare(tmp_path: Path, where: str) -> None:
    """Closed (issue 29): every checkout is tried the other way too, against the future of
    every store beside it (``git_relations.cross_checked``): the bare store is kept at its own
    base, the clone — whose copy holds that store's future — is pruned at that base."""
    phase, bare, cache, base, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert bare in sources and cache / ".git" in sources, snap
        assert _holds(sources, blob) == [], snap
        assert snap["hidden"] == [], snap
        assert _git(phase, "--git-dir", str(sources[bare]), "rev-parse", "HEAD") == base
        assert _git(phase, "--git-dir", str(sources[cache / ".git"]), "rev-parse", "HEAD") == base
    else:
        dst, refused = _judge(tmp_path, phase)
        assert not [s for s in _stores(dst) if _has(s, blob)], refused
        assert refused == []
        assert _git(phase, "--git-dir", str(dst / "task.git"), "rev-parse", "HEAD") == base
        assert _git(phase, "--git-dir", str(dst / "cache/.git"), "rev-parse", "HEAD") == base


@pytest.mark.parametrize("where", ["box", "judge"])
def test_an_unrelated_bare_store_beside_an_honest_clone_changes_nothing(
    tmp_path: Path, where: str
) -> None:
    """The control: an unrelated library's bare store (a branch past its HEAD: a future of its
    own) beside the task's checkout at its base — neither holds the other's future, each keeps
    its own HEAD, nothing hidden or refused."""
    phase = tmp_path / "phase"
    root, base, _ = _task(phase / "t")
    _forget(root)
    head, branch = _lib(tmp_path / "lib")
    bare = phase / "lib.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(tmp_path / "lib"), str(bare))
    assert _has(bare, branch) and _git(bare, "rev-parse", "HEAD") == head
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert snap["hidden"] == [], snap
        assert _git(root, "--git-dir", str(sources[root / ".git"]), "rev-parse", "HEAD") == base
        assert _git(root, "--git-dir", str(sources[bare]), "rev-parse", "HEAD") == head
    else:
        dst, refused = _judge(tmp_path, phase)
        assert refused == []
        assert _git(root, "--git-dir", str(dst / "t/.git"), "rev-parse", "HEAD") == base
        assert _git(root, "--git-dir", str(dst / "lib.git"), "rev-parse", "HEAD") == head


def _bare_task_in_a_clone_at_the_fix(tmp_path: Path) -> tuple[Path, Path, Path, str, str]:
    """(the phase's folder, the task's store kept bare in the work tree of a clone of it checked
    out at the fix, ``phase/cache/vendor/task.git``, the clone ``phase/cache``, the base, the
    fix's blob): the fix objects of the bare store that no reference names."""
    phase, bare, cache, base, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    (cache / ".git/info/exclude").write_text("vendor/\n")
    (cache / "vendor").mkdir()
    nested = cache / "vendor/task.git"
    bare.rename(nested)
    assert _git(cache, "status", "--porcelain") == ""
    return phase, nested, cache, base, blob


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_clone_at_the_fix_holding_the_task_store_kept_bare(tmp_path: Path, where: str) -> None:
    """The same, the bare store nested in the clone's work tree: the clone is tried against it
    too, pruned at its base."""
    phase, bare, cache, base, blob = _bare_task_in_a_clone_at_the_fix(tmp_path)
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == [], snap
        assert snap["hidden"] == [], snap
        assert _git(phase, "--git-dir", str(sources[cache / ".git"]), "rev-parse", "HEAD") == base
    else:
        dst, refused = _judge(tmp_path, phase)
        assert not [s for s in _stores(dst) if _has(s, blob)], refused
        assert refused == []
        assert _git(phase, "--git-dir", str(dst / "cache/.git"), "rev-parse", "HEAD") == base


@pytest.mark.parametrize("where", ["box", "judge"])
def test_the_deadline_wherever_it_falls_leaves_no_fix_beside_the_bare_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The bare task store beside the clone at the fix, pruned with 0.05 to 1 s in all: wherever
    the deadline falls (the first pruning, the bare store's future set, the clone's new copy),
    no copy bound or copied holds the fix — hidden or refused."""
    phase, _, _, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path / "pristine")
    for k, seconds in enumerate([0.05, 0.1, 0.2, 0.4, 1.0]):
        work = tmp_path / f"run{k}"
        here = work / "phase"
        shutil.copytree(phase, here, symlinks=True)
        if where == "box":
            monkeypatch.setattr(git_guard, "PRUNE_SECONDS", seconds)
            sources, snap = _box(work, [here])
            assert _holds(sources, blob) == [], snap
        else:
            monkeypatch.setattr(sandbox_copy, "PRUNE_SECONDS", seconds)
            dst, refused = _judge(work, here)
            assert not [s for s in _stores(dst) if _has(s, blob)], refused


def test_a_clone_at_the_fix_beside_a_hidden_bare_task_store_is_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bare task store hidden (past the cap here; its pruning past the deadline above):
    the clone is tried against it at its own HEAD all the same, holds its future, and has no
    base to be pruned at — hidden too, the fix in no copy."""
    phase, bare, cache, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    monkeypatch.setattr(git_guard, "MAX_PRUNED", 1)  # cache/.git is pruned, task.git is not
    sources, snap = _box(tmp_path, [phase])
    assert _holds(sources, blob) == [], snap
    hidden = "\n".join(snap["hidden"])
    assert str(bare) in hidden and str(cache / ".git") in hidden, snap


def test_a_mirror_in_the_work_tree_of_a_clone_beside_the_bare_task_store(tmp_path: Path) -> None:
    """A mirror of the clone at the fix in the clone's own work tree (pruned at the clone's base,
    the fix, before the last pass) is tried against the bare task store's future in that pass
    too: the fix in no copy, box and judge."""
    phase, _, cache, _, blob = _bare_task_beside_a_clone_at_the_fix(tmp_path)
    (cache / ".git/info/exclude").write_text("vendor/\n")
    _git(cache, "clone", "-q", "--mirror", str(cache), str(cache / "vendor/m.git"))
    sources, snap = _box(tmp_path, [phase])
    assert cache / "vendor/m.git" in sources or any("m.git" in h for h in snap["hidden"]), snap
    assert _holds(sources, blob) == [], snap
    dst, refused = _judge(tmp_path, phase)
    assert not [s for s in _stores(dst) if _has(s, blob)], refused


def test_an_unrelated_hidden_bare_store_beside_an_honest_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control, the bare store left unpruned (past the cap): tried at its own HEAD, it holds
    nothing of the task's copy — the task keeps its base; past ``MAX_UNPRUNED`` unpruned stores
    tried, whether it does cannot be told — the task is hidden too (fail closed)."""
    phase = tmp_path / "phase"
    root, base, _ = _task(phase / "t")
    _forget(root)
    _lib(tmp_path / "lib")
    bare = phase / "z.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(tmp_path / "lib"), str(bare))
    monkeypatch.setattr(git_guard, "MAX_PRUNED", 1)  # t/.git is pruned, z.git is not
    for run in ("one", "two"):
        (tmp_path / run).mkdir()
    sources, snap = _box(tmp_path / "one", [phase])
    assert [h for h in snap["hidden"] if str(bare) in h] and len(snap["hidden"]) == 1, snap
    assert _git(root, "--git-dir", str(sources[root / ".git"]), "rev-parse", "HEAD") == base
    monkeypatch.setattr(git_relations, "MAX_UNPRUNED", 0)
    sources, snap = _box(tmp_path / "two", [phase])
    assert root / ".git" not in sources and len(snap["hidden"]) == 2, snap


def _referenced_task(tmp_path: Path, where_ref: str) -> tuple[Path, Path, str, str, str]:
    """(the phase, the task's store kept bare ``phase/task.git`` and cloned ``--reference`` a
    stale mirror of the task — one commit behind its base, in the phase or outside it —, the
    base, the fix, the fix's blob): the store's own objects are the base's commit (whose
    parent lies in the mirror) and the fix, which no reference names."""
    src, first, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    phase.mkdir()
    ref = (phase if where_ref == "in_phase" else tmp_path) / "ref.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(src), str(ref))
    (src / "README").write_text("tolls, by the hour\n")
    _git(src, "add", "README")
    _git(src, "commit", "-qm", "a README")
    base = _git(src, "rev-parse", "HEAD")
    bare = phase / "task.git"
    _git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        "--no-local",
        "--reference",
        str(ref),
        str(src),
        str(bare),
    )
    assert (bare / "objects/info/alternates").exists() and not _has(ref, base)
    assert _git(bare, "rev-parse", "HEAD^") == first
    return phase, bare, base, fix, blob


@pytest.mark.parametrize("where_ref", ["in_phase", "outside"])
@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_clone_at_the_fix_beside_a_task_store_with_a_stale_reference(
    tmp_path: Path, where: str, where_ref: str
) -> None:
    """The s19 red team's M1 with the base's own commit in the store (its parent in the mirror
    it references): the store, not self-contained, is left unpruned and tried for its own
    objects, the walk from its HEAD stopping where the parent lies elsewhere; the clone at the
    fix holds that store's future and is not kept — the fix in no copy."""
    phase, bare, _, fix, blob = _referenced_task(tmp_path, where_ref)
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(bare), str(cache))
    _git(cache, "checkout", "-q", "wip")
    _git(bare, "branch", "-D", "wip")
    assert _has(cache / ".git", fix) and _has(bare, fix)
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == [], snap
        assert cache / ".git" not in sources, snap
    else:
        dst, refused = _judge(tmp_path, phase)
        assert not [s for s in _stores(dst) if _has(s, blob)], refused
        assert any(r.startswith("cache") for r in refused), refused


@pytest.mark.parametrize("where_ref", ["in_phase", "outside"])
@pytest.mark.parametrize("where", ["box", "judge"])
def test_an_honest_checkout_beside_a_task_store_with_a_stale_reference_is_kept(
    tmp_path: Path, where: str, where_ref: str
) -> None:
    """The honest layout beside the same store: a checkout of the task at its base (the image's
    clone of it) holds the store's history below its HEAD, none of its future: kept at the
    base; only the store that is not self-contained is hidden."""
    phase, bare, base, _, _ = _referenced_task(tmp_path, where_ref)
    t = phase / "t"
    _git(tmp_path, "clone", "-q", "--no-local", str(bare), str(t))
    assert _git(t, "rev-parse", "HEAD") == base
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert t / ".git" in sources, snap
        assert _git(t, "--git-dir", str(sources[t / ".git"]), "rev-parse", "HEAD") == base
        assert [h for h in snap["hidden"] if not h.startswith(str(bare))] == [], snap
    else:
        dst, refused = _judge(tmp_path, phase)
        assert _git(t, "--git-dir", str(dst / "t/.git"), "rev-parse", "HEAD") == base
        assert [r for r in refused if not r.startswith("task.git")] == [], refused


def _clone_beside_a_store_whose_reference_holds_the_fix(
    tmp_path: Path, ref_folder: Path
) -> tuple[Path, str]:
    """(the phase, the fix's blob): the task's store kept bare ``phase/task.git``, cloned
    ``--reference`` a bare mirror of every branch (the fix's included) in ``ref_folder``, and a
    clone of it ``phase/cache`` checked out at the fix; the store's own folder holds none of it."""
    src, _, fix = _task(tmp_path / "src")
    blob = _blob(src, fix)
    phase = tmp_path / "phase"
    phase.mkdir()
    ref = ref_folder / "ref.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(ref))
    bare = phase / "task.git"
    _git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        "--no-local",
        "--reference",
        str(ref),
        str(src),
        str(bare),
    )
    cache = phase / "cache"
    _git(tmp_path, "clone", "-q", "--no-local", str(bare), str(cache))
    _git(cache, "checkout", "-q", "wip")
    _git(bare, "branch", "-D", "wip")
    assert _has(cache / ".git", fix) and _has(ref, fix)
    return phase, blob


def test_a_clone_at_the_fix_beside_a_store_whose_reference_holds_the_fix(tmp_path: Path) -> None:
    """Left of M1 (closed the same session): the store's alternates name a mirror of the whole
    upstream outside the phase, which holds the fix, so its own folder holds none of it; the
    clone at the fix holds the store's HEAD and commits past it, and is not kept."""
    phase, blob = _clone_beside_a_store_whose_reference_holds_the_fix(tmp_path, tmp_path)
    sources, snap = _box(tmp_path, [phase])
    assert _holds(sources, blob) == [], snap


def _junk_with_an_unreadable_head(folder: Path, base: str) -> Path:
    """A store a candidate's code writes: one object of its own, its ``packed-refs`` a link
    naming the task's base (git follows it; the guard reads no link), so its HEAD cannot be read
    and its future not listed."""
    store = folder / "junk.git"
    _git(folder, "init", "-q", "--bare", "-b", "main", str(store))
    blob = subprocess.run(
        ["git", "--git-dir", str(store), "hash-object", "-w", "--stdin"],
        input=b"junk\n",
        capture_output=True,
        check=True,
    ).stdout.strip()
    assert blob
    (folder / "packed").write_text(f"{base} refs/heads/main\n")
    os.symlink(folder / "packed", store / "packed-refs")
    return store


def test_an_unreadable_head_in_the_shared_cache_hides_no_task(tmp_path: Path) -> None:
    """A store in a folder another version's code writes (``written``: the shared cache) is not
    tried by its HEAD: a junk store there whose HEAD cannot be read hides itself, never every
    version's task; in the phase's own folders the same store keeps no copy beside it (the s20
    red team's U3: it could name any commit)."""
    phase = tmp_path / "phase"
    root, base, _ = _task(phase / "t")
    _forget(root)
    cache = tmp_path / "cache"
    cache.mkdir()
    junk = _junk_with_an_unreadable_head(cache, base)
    trace = tmp_path / "raw.trace"
    git_guard.before_phase([phase], trace, read_only=[cache], written=[cache])
    snap = json.loads(git_guard.snapshot_path(trace).read_text())
    assert [r["path"] for r in snap["repos"]] == [str(root / ".git")], snap
    assert any(h.startswith(str(junk)) for h in snap["hidden"]), snap
    shutil.move(str(cache / "junk.git"), str(phase / "junk.git"))
    os.symlink(cache / "packed", phase / "junk.git/packed-refs.new")
    os.replace(phase / "junk.git/packed-refs.new", phase / "junk.git/packed-refs")
    git_prune_trace = tmp_path / "raw2.trace"
    git_guard.before_phase([phase], git_prune_trace)
    snap = json.loads(git_guard.snapshot_path(git_prune_trace).read_text())
    assert snap["repos"] == [], snap
    assert any(h.startswith(str(root / ".git")) for h in snap["hidden"]), snap


@pytest.mark.parametrize("where", ["box", "judge"])
def test_an_honest_checkout_beside_a_blobless_referenced_store_is_kept(
    tmp_path: Path, where: str
) -> None:
    """The honest side of the s20 red team's U5: the task's store kept bare, blob-less and
    cloned ``--reference`` a mirror at its base (a CI cache), its fix branch kept; its future's
    trees name the base's blobs too, which the mirror holds — they are no future — so the
    task's checkout at the base beside it is kept at its base."""
    src = tmp_path / "src"
    (src / "tolls").mkdir(parents=True)
    _git(src, "init", "-q", "-b", "main")
    (src / "tolls/toll.py").write_text("def toll(rate):\n    return rate\n")
    (src / "README").write_text("tolls of the bridge, by the axle\n")  # a blob the fix keeps
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "tolls: a flat rate")
    base = _git(src, "rev-parse", "HEAD")
    _git(src, "checkout", "-qb", "wip")
    (src / "tolls/toll.py").write_text(f"def toll(rate):\n{FUTURE}\n")
    _git(src, "commit", "-qam", "tolls: the night discount")
    _git(src, "checkout", "-q", "main")
    _git(src, "config", "uploadpack.allowFilter", "true")
    phase = tmp_path / "phase"
    phase.mkdir()
    ref = phase / "ref.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", "--single-branch", str(src), str(ref))
    bare = phase / "task.git"
    _git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        "--filter=blob:none",
        "--reference",
        str(ref),
        src.as_uri(),
        str(bare),
    )
    own = [  # the store's own packs (cat-file would list its alternate's objects too)
        line.split()[1]
        for idx in (bare / "objects/pack").glob("*.idx")
        for line in subprocess.run(
            ["git", "show-index"], stdin=idx.open("rb"), capture_output=True, check=True
        )
        .stdout.decode()
        .splitlines()
    ]
    readme = _git(src, "rev-parse", "main:README")
    assert readme not in own and _has(ref, readme) and _git(bare, "rev-parse", "wip") in own
    t = phase / "t"
    _git(tmp_path, "clone", "-q", "--no-local", str(ref), str(t))
    assert _git(t, "rev-parse", "HEAD") == base
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _git(t, "--git-dir", str(sources[t / ".git"]), "rev-parse", "HEAD") == base, snap
    else:
        dst, refused = _judge(tmp_path, phase)
        assert _git(t, "--git-dir", str(dst / "t/.git"), "rev-parse", "HEAD") == base, refused
        assert not [r for r in refused if r.startswith("t/")], refused


# --- the s20 HEAD red team's H8: a store beside two checkouts follows the earliest base ---------


def _mirror_beside_two_clones(tmp_path: Path, merged: bool) -> tuple[Path, Path, Path, str, str]:
    """(the phase, a checkout ``phase/a`` of upstream's ``wip`` alone (at the fix), a checkout
    ``phase/b`` of its ``side`` alone (a commit off the base: the two diverged), the fix, the
    side's commit), beside them a bare mirror ``phase/mirror.git`` of upstream whose HEAD is a
    merge of ``wip`` and ``side`` (``merged``) or ``main`` (the base: behind both)."""
    src, base, fix = _task(tmp_path / "src")
    _git(src, "checkout", "-qb", "side", base)
    (src / "README").write_text("tolls of the bridge\n")
    _git(src, "add", "README")
    _git(src, "commit", "-qm", "a README")
    side = _git(src, "rev-parse", "HEAD")
    if merged:
        _git(src, "checkout", "-qb", "both", fix)
        _git(src, "merge", "-q", "--no-edit", "side")
    _git(src, "checkout", "-q", "main")
    phase = tmp_path / "phase"
    phase.mkdir()
    mirror = phase / "mirror.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(mirror))
    if merged:
        _git(mirror, "symbolic-ref", "HEAD", "refs/heads/both")
    a, b = phase / "a", phase / "b"
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "wip", str(src), str(a))
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "side", str(src), str(b))
    assert not _has(a / ".git", side) and not _has(b / ".git", fix)
    return phase, a, b, fix, side


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_mirror_past_two_diverged_checkouts_is_hidden(tmp_path: Path, where: str) -> None:
    """H8's fail-closed side (its cost): the mirror's HEAD a merge past two checkouts whose
    bases do not reach each other — which is the task's base cannot be told, so the mirror is
    hidden (refused in the judge's copy); each checkout keeps its own HEAD."""
    phase, a, b, fix, side = _mirror_beside_two_clones(tmp_path, merged=True)
    mirror = phase / "mirror.git"
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert mirror not in sources, snap
        assert any(h.startswith(str(mirror)) and "reach one another" in h for h in snap["hidden"])
        assert _git(a, "--git-dir", str(sources[a / ".git"]), "rev-parse", "HEAD") == fix
        assert _git(b, "--git-dir", str(sources[b / ".git"]), "rev-parse", "HEAD") == side
    else:
        dst, refused = _judge(tmp_path, phase)
        assert [r for r in refused if r.startswith("mirror.git")], refused
        assert not [r for r in refused if not r.startswith("mirror.git")], refused
        assert _git(a, "--git-dir", str(dst / "a/.git"), "rev-parse", "HEAD") == fix
        assert _git(b, "--git-dir", str(dst / "b/.git"), "rev-parse", "HEAD") == side


def test_a_mirror_behind_two_diverged_checkouts_keeps_its_head(tmp_path: Path) -> None:
    """The control: the mirror's HEAD the base both checkouts reach — whichever is the task,
    nothing of its copy lies past that base: kept at its own HEAD (its future, each side's
    commit, then prunes each checkout at that base, as before)."""
    phase, a, b, _, _ = _mirror_beside_two_clones(tmp_path, merged=False)
    mirror = phase / "mirror.git"
    base = _git(mirror, "rev-parse", "HEAD")
    sources, snap = _box(tmp_path, [phase])
    assert snap["hidden"] == [], snap
    assert _git(a, "--git-dir", str(sources[mirror]), "rev-parse", "HEAD") == base
    assert _git(a, "--git-dir", str(sources[a / ".git"]), "rev-parse", "HEAD") == base
    assert _git(b, "--git-dir", str(sources[b / ".git"]), "rev-parse", "HEAD") == base


# --- the s20 HEAD red team's H7: an unpruned store whose HEAD no copy holds --------------------


@pytest.mark.parametrize("where", ["box", "judge"])
@pytest.mark.parametrize("unlistable", [True, False], ids=["unlistable-lib", "listable-lib"])
def test_an_unrelated_unlistable_store_prunes_the_later_of_two_clones(
    tmp_path: Path, where: str, unlistable: bool
) -> None:
    """H7's rule and its cost: an unrelated library's bare store left unpruned (a FIFO in its
    ``objects/info``) beside the task's checkout at its base and an honest second clone of the
    task one commit later — the library's HEAD is in neither copy, so the task's base cannot be
    told from it, and the later clone is pruned at the earlier's base (over-pruning, no leak).
    The control: the library listable, each clone keeps its own HEAD."""
    src, base, later_head = _task(tmp_path / "src")
    phase = tmp_path / "phase"
    phase.mkdir()
    t, later = phase / "t", phase / "later"
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "main", str(src), str(t))
    _git(
        tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "wip", str(src), str(later)
    )
    _lib(tmp_path / "lib")
    lib = phase / "lib.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(tmp_path / "lib"), str(lib))
    if unlistable:
        os.mkfifo(lib / "objects/info/packs")
    want = base if unlistable else later_head
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert (lib in sources) is not unlistable, snap
        assert _git(t, "--git-dir", str(sources[later / ".git"]), "rev-parse", "HEAD") == want
        assert _git(t, "--git-dir", str(sources[t / ".git"]), "rev-parse", "HEAD") == base
    else:
        dst, refused = _judge(tmp_path, phase)
        assert [r.split(":")[0] for r in refused] == (["lib.git"] if unlistable else []), refused
        assert _git(t, "--git-dir", str(dst / "later/.git"), "rev-parse", "HEAD") == want
        assert _git(t, "--git-dir", str(dst / "t/.git"), "rev-parse", "HEAD") == base


# --- the s20 HEAD red team's H4: a linked worktree's git directory, once found -----------------


def _linked_worktree_beside_clones(tmp_path: Path, detached: bool) -> tuple[Path, Path, Path, str]:
    """(the linked worktree's git directory ``phase/wt.git`` — ``HEAD`` on a branch of the
    store outside the phase, or ``detached`` at the base; ``commondir`` naming that store; no
    ``objects`` —, a clone ``phase/cache`` at the fix, a clone ``phase/old`` at the base, the
    base): H4's layout, the worktree's git directory moved out of ``src/.git/worktrees``."""
    src, base, _ = _task(tmp_path / "src")
    phase = tmp_path / "phase"
    phase.mkdir()
    how = ["--detach"] if detached else ["-b", "task"]
    _git(src, "worktree", "add", "-q", *how, str(phase / "t"), base)
    wt = Path(shutil.move(str(src / ".git/worktrees/t"), str(phase / "wt.git")))
    (wt / "commondir").write_text(f"{src / '.git'}\n")
    (phase / "t/.git").write_text(f"gitdir: {wt}\n")
    assert _git(phase / "t", "rev-parse", "HEAD") == base and not (wt / "objects").exists()
    cache, old = phase / "cache", phase / "old"
    _git(tmp_path, "clone", "-q", "--no-local", str(src), str(cache))
    _git(cache, "checkout", "-q", "wip")
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "main", str(src), str(old))
    return wt, cache, old, base


@pytest.mark.parametrize("detached", [False, True], ids=["branch", "detached"])
def test_a_linked_worktrees_git_directory_is_tried_by_its_head(
    tmp_path: Path, detached: bool
) -> None:
    """H4's judging half (the search does not yet find such a folder: ``git_stores``): a linked
    worktree's git directory whose ``commondir`` names a store outside the phase, tried as an
    unpruned store (:func:`~evotree.harness.git_relations.checkout_relations` with it in
    ``against``), is read by its HEAD as git reads it — a branch in the common store, a
    detached id in it —: the clone at the fix, holding that base and commits past it, is not
    kept; the clone at the base is."""
    wt, cache, old, base = _linked_worktree_beside_clones(tmp_path, detached)
    copies = {
        gd: prune_copy(gd, tmp_path / name)
        for gd, name in ((cache / ".git", "cache-copy"), (old / ".git", "old-copy"))
    }
    assert copies[old / ".git"].base == base
    out = git_relations.checkout_relations(copies, against=[*copies, wt])
    assert isinstance(out.get(cache / ".git"), git_relations.PruneError), out
    assert "HEAD of" in str(out[cache / ".git"]), out
    assert old / ".git" not in out, out


@pytest.mark.parametrize("how", ["absent", "a-link", "empty"])
def test_a_linked_worktrees_branch_in_a_common_store_that_cannot_be_read(
    tmp_path: Path, how: str
) -> None:
    """Fail closed: the branch HEAD names lies in the common store, and ``commondir`` names
    none that can be read (a folder that is not there, a ``commondir`` that is a link, an
    empty one) — the HEAD may be any commit, so no copy is kept, the clone at the base
    neither."""
    wt, cache, old, _ = _linked_worktree_beside_clones(tmp_path, detached=False)
    common = wt / "commondir"
    if how == "absent":
        common.write_text(f"{tmp_path / 'gone/.git'}\n")
    elif how == "a-link":
        (tmp_path / "commondir").write_text(common.read_text())
        common.unlink()
        common.symlink_to(tmp_path / "commondir")
    else:
        common.write_text("\n")
    copies = {
        gd: prune_copy(gd, tmp_path / name)
        for gd, name in ((cache / ".git", "cache-copy"), (old / ".git", "old-copy"))
    }
    out = git_relations.checkout_relations(copies, against=[*copies, wt])
    assert isinstance(out.get(cache / ".git"), git_relations.PruneError), out
    assert isinstance(out.get(old / ".git"), git_relations.PruneError), out


# --- the s21 relate red team's R2, R6: an unpruned store's future at the earliest base ---------


def _hidden_mirror_beside(tmp_path: Path, head: str) -> tuple[dict, Path, Path, Path]:
    """(the copies of ``t`` and ``c``, ``t/.git``, ``c/.git``, a bare mirror left unpruned):
    upstream's ``main`` is the base and a commit past it (``later``), ``wip`` the fix and a
    commit past it (``fix2``); ``t`` a checkout of the base alone (its store holds nothing
    past it); ``c`` a clone at
    the fix (``head`` ``fix2``) or at ``later`` (``head`` ``later``); the mirror's HEAD is
    ``head``."""
    src, base, fix = _task(tmp_path / "src")
    _git(src, "checkout", "-q", "wip")
    (src / "README").write_text("tolls, with a night discount\n")
    _git(src, "add", "README")
    _git(src, "commit", "-qm", "docs: the discount")
    _git(src, "checkout", "-q", "main")
    (src / "tolls/lanes.py").write_text("LANES = 4\n")
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "lanes: four")
    later = _git(src, "rev-parse", "HEAD")
    phase = tmp_path / "phase"
    phase.mkdir()
    t, c = phase / "t", phase / "c"
    _git(src, "branch", "old", base)
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "old", str(src), str(t))
    _git(tmp_path, "clone", "-q", "--no-local", str(src), str(c))
    _git(c, "checkout", "-q", fix if head == "fix2" else later)
    mirror = phase / "mirror.git"
    _git(tmp_path, "clone", "-q", "--bare", "--no-local", str(src), str(mirror))
    _git(mirror, "symbolic-ref", "HEAD", "refs/heads/wip" if head == "fix2" else "refs/heads/main")
    copies = {
        gd: prune_copy(gd, tmp_path / f"{gd.parent.name}-copy") for gd in (t / ".git", c / ".git")
    }
    return copies, t / ".git", c / ".git", mirror


def test_an_unpruned_mirror_past_the_fix_prunes_the_clone_at_the_task_base(
    tmp_path: Path,
) -> None:
    """R2, R6's mechanism: a mirror whose HEAD is past the fix, left unpruned (hidden: past the
    cap, or beside bases that diverge), is read at the earliest base beside it that it holds
    (the task's), not at its own HEAD alone — the clone at the fix holds its future there and
    is named related to the task (pruned again at its base), the task's checkout to nothing."""
    copies, t, c, mirror = _hidden_mirror_beside(tmp_path, "fix2")
    out = git_relations.checkout_relations(copies, against=[*copies, mirror])
    assert out == {c: [t]}, out


def test_an_unpruned_mirror_at_the_task_base_prunes_a_later_clone_at_the_older_base(
    tmp_path: Path,
) -> None:
    """Its cost (P1's, for a store left unpruned): the mirror's HEAD the base of the later of
    two checkouts of its repository — which is the task's cannot be told, so the later one is
    named related to the earlier (pruned again at the older base: over-pruning, no leak)."""
    copies, t, c, mirror = _hidden_mirror_beside(tmp_path, "later")
    out = git_relations.checkout_relations(copies, against=[*copies, mirror])
    assert out == {c: [t]}, out
    out = git_relations.checkout_relations(copies, against=[*copies, mirror], lenient=[t])
    assert out == {}, out


@pytest.mark.parametrize("where", ["box", "judge"])
def test_a_task_with_a_commit_of_its_own_beside_a_mirror_past_the_fix_and_a_clone_at_it(
    tmp_path: Path, where: str
) -> None:
    """The task's checkout carrying a commit of its own (an earlier phase committed its work),
    a listable mirror past the fix and a clone at the fix beside it: the task's base is no
    commit of the mirror, so no base is reached by all and the mirror is hidden; read at the
    latest commit of the task's history it holds (the task's upstream base), its future holds
    the clone at the fix — the fix in no copy."""
    copies, t, c, mirror = _hidden_mirror_beside(tmp_path, "fix2")
    work = t.parent
    (work / "tolls/mine.py").write_text("MINE = 1\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "mine: a commit of the task's own")
    blob = _git(c.parent, "rev-parse", "HEAD:tolls/toll.py")
    phase = t.parent.parent
    if where == "box":
        sources, snap = _box(tmp_path, [phase])
        assert _holds(sources, blob) == [], snap
        assert t in sources, snap
    else:
        dst, refused = _judge(tmp_path, phase)
        assert not [s for s in _stores(dst) if _has(s, blob)], refused
        assert not [r for r in refused if r.startswith("t/")], refused
