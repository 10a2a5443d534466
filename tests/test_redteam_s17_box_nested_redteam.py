"""Red team (session 17) of nested-store pruning in a phase's box (issue 29 item 4; d813a49):
can a phase read the task's future (a commit, or the content of one, the base does not reach)
through a git store in its folders? Real git repositories in temporary folders, the real
:func:`evotree.harness.git_guard.before_phase` and :func:`~evotree.harness.sandbox_copy.
copy_regular_files`; ``test_in_the_box_git_reads_the_fix`` runs git in the real bubblewrap box.

Wins (strict xfails when found; B2, B3, B4, B5 and B7 closed the same session by 113f787, their
tests plain now; B1 in this toy form and B6 stay strict xfails, docs/threat-model.md):

- **B1** a bare ``--depth 1`` clone of a commit *two* past the base, where the task's store never
  held the future (a checkout cloned at the base alone, as CI clones): its only commit and the
  parent it names are no commits of the task's store and the base is not among them, so it is
  "unrelated" and pruned at its own HEAD — the future whole in the box.
- **B2** a mirror with rewritten history (a ``--orphan`` snapshot / ``filter-branch``ed mirror)
  holding the fix's tree under a commit of its own: the relation check compares commit ids only,
  so it is "unrelated", pruned at its own HEAD, and the fix's blob is in the box.
- **B3** a mirror of the task beside its checkout in the phase's folder (``t.git`` next to
  ``t/``), HEAD at the fix: in no found work tree, so pruned at its own HEAD (documented left).
- **B4** the judge's copy of a candidate folder holding a mirror of the task whose HEAD is the
  fix: ``sandbox_copy`` prunes it at its own HEAD (documented left).
- **B5** a submodule of the task that is the task itself, checked out at the fix and deinit'ed
  (its work tree gone, ``.git/modules/sub`` kept): pruned at its own HEAD in the task's copy
  (documented left).
- **B6** a ``git bundle`` of the future as a plain file in the work tree: no store, never pruned
  or hidden; any git in the box can clone it (documented as the content audits').
- **B7** the task's ``.git`` is a symbolic link to its store (said as a problem: a row), or a
  ``.git`` file whose ``gitdir:`` goes through a linked folder (silent): ``_enclosing`` compares
  the unresolved path with the found stores, tells no enclosing repository, and a mirror at the
  fix in the task's work tree is pruned at its own HEAD.

B1, B2, B3, B5 and B7 are shown in the real bubblewrap box too: ``git cat-file`` on the store
prints the fix's line, and the sealed trace holds no finding (no ``git_state`` row: git read a
HEAD recorded before the phase). Each winning store is bare (or has no work tree): nothing but
git storage holds the future.

Holds (plain tests):

- a commit with the fix's tree whose parent is the base (same tree, other parents): shares
  history, pruned at the base, no fix blob;
- a store holding only the fix's blob (no commit): its copy holds no object;
- ``refs/replace`` and ``info/grafts`` in a nested store (the fix's objects fetched in): the
  copy is pruned at its own HEAD as git sees it without them, and holds neither;
- a nested store with an alternate naming an unpruned store of the fix: hidden;
- a linked worktree of the task at the fix inside its work tree (``.git/worktrees``,
  ``commondir``): the worktree's git directory is not bound with the fix;
- a ``.git`` symbolic link in the tree naming a mirror at the fix in the work tree: the mirror is
  pruned at the base;
- a mirror at the fix inside the task's own ``.git``, and a linked worktree of a nested mirror at
  the fix: neither copy holds it;
- a nested mirror whose HEAD names no branch (the fix on another): nothing copied;
- caps: past ``MAX_PRUNED`` or ``PRUNE_SECONDS`` a nested mirror at the fix is hidden, never bound
  whole.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from evotree.harness import git_guard, sandbox
from evotree.harness.audit.trace import read_trace_rows, write_trace
from evotree.harness.sandbox import wrap
from evotree.harness.sandbox_copy import copy_regular_files
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec
from tests.test_git_guard_nested import _ENV, FUTURE, _box, _forget, _git, _has, _task

pytestmark = pytest.mark.heavy


def _stores(path: Path) -> list[Path]:
    """Every git store at or below ``path`` (a folder holding ``HEAD`` and ``objects/``)."""
    out = []
    for folder, dirs, files in os.walk(path):
        if "HEAD" in files and "objects" in dirs:
            out.append(Path(folder))
    return out


def _holds(sources: dict[Path, Path], oid: str) -> list[Path]:
    """The bound git directories (by box path) whose copy, or a store in it, holds ``oid``."""
    return [dst for dst, src in sources.items() if any(_has(s, oid) for s in _stores(src))]


def _blob(repo: Path, rev: str) -> str:
    return _git(repo, "rev-parse", f"{rev}:tolls/toll.py")


def _upstream_two_past(tmp_path: Path) -> tuple[Path, str, str, str]:
    """(upstream, base, fix, fix2): ``wip`` holds the fix and a second commit past it."""
    up, base, fix = _task(tmp_path / "up")
    _git(up, "checkout", "-q", "wip")
    (up / "README").write_text("tolls, with a night discount\n")
    _git(up, "add", "README")
    _git(up, "commit", "-qm", "docs: the discount")
    fix2 = _git(up, "rev-parse", "HEAD")
    _git(up, "checkout", "-q", "main")
    return up, base, fix, fix2


def _setup_b1(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """(the phase's folder, the task's checkout, the leaking store, the fix's blob) of B1: the
    task cloned at the base alone, a ``--depth 1`` clone of the tip two past it in its tree."""
    up, base, fix, fix2 = _upstream_two_past(tmp_path)
    root = tmp_path / "t"
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "main", str(up), str(root))
    (root / ".git/info/exclude").write_text("vendor/\n")
    assert not _has(root / ".git", fix) and _git(root, "rev-parse", "HEAD") == base
    shallow = root / "vendor/tolls.git"  # bare: no work tree holds the future's files
    _git(root, "clone", "-q", "--bare", "--depth", "1", "-b", "wip", up.as_uri(), str(shallow))
    assert _git(shallow, "rev-parse", "HEAD") == fix2
    return root, root, shallow, _blob(up, fix)


@pytest.mark.xfail(
    strict=True,
    reason="B1: a --depth 1 clone two past the base shares no commit id with a task store that "
    "never held the future, and here every file of its tree is new to that store (the blob share "
    "relates it only where the fix left most files as the base has them): 'unrelated', pruned at "
    "its own HEAD",
)
def test_b1_shallow_clone_two_past_the_base(tmp_path: Path) -> None:
    phase, _, _, blob = _setup_b1(tmp_path)
    sources, _ = _box(tmp_path, [phase])
    assert _holds(sources, blob) == []


def test_shallow_clone_of_the_fix_itself_holds(tmp_path: Path) -> None:
    """The control of B1: a ``--depth 1`` clone of the fix names the base as its parent, so it
    shares history even with a store that never held the fix; pruned at the base."""
    up, base, fix, _ = _upstream_two_past(tmp_path)
    root = tmp_path / "t"
    _git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "-b", "main", str(up), str(root))
    assert not _has(root / ".git", fix)
    shallow = root / "vendor/tolls"
    _git(up, "branch", "fixed", fix)
    _git(root, "clone", "-q", "--depth", "1", "-b", "fixed", up.as_uri(), str(shallow))
    assert not _has(shallow / ".git", base) and _has(shallow / ".git", fix)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    assert _holds(sources, fix) == [] and _holds(sources, _blob(up, fix)) == []
    assert _git(root, "--git-dir", str(sources[shallow / ".git"]), "rev-parse", "HEAD") == base


def _snapshot_mirror(tmp_path: Path, root: Path, fix: str, parent: str | None) -> Path:
    """A bare mirror in ``root/vendor`` whose only branch is one commit holding the fix's tree
    (parent ``parent``, or none: a history of its own)."""
    work = tmp_path / "rewrite"
    _git(tmp_path, "clone", "-q", str(root), str(work))
    args = ["commit-tree", f"{fix}^{{tree}}", "-m", "import tolls"]
    if parent is not None:
        args += ["-p", parent]
    snap = _git(work, *args)
    _git(work, "branch", "snap", snap)
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--bare", "--single-branch", "-b", "snap", str(work), str(mirror))
    assert _git(mirror, "rev-parse", "HEAD") == snap
    return mirror


def test_b2_rewritten_history_holding_the_fix_tree(tmp_path: Path) -> None:
    phase, _, _, blob = _setup_b2(tmp_path)
    sources, _ = _box(tmp_path, [phase])
    assert _holds(sources, blob) == []


def _setup_b2(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """B2's (phase's folder, checkout, leaking store, fix's blob): a mirror of one orphan commit
    holding the fix's tree."""
    root, _, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    mirror = _snapshot_mirror(tmp_path, root, fix, None)
    _forget(root)
    return root, root, mirror, blob


def test_same_tree_as_the_fix_on_the_base_holds(tmp_path: Path) -> None:
    """The fix's tree committed again on the base (other parents than the fix's own commit
    would name, another id): it names the base, so it is pruned at the base."""
    root, base, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    mirror = _snapshot_mirror(tmp_path, root, fix, base)
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert snap["hidden"] == []
    assert _holds(sources, blob) == [] and _holds(sources, fix) == []
    assert _git(root, "--git-dir", str(sources[mirror]), "rev-parse", "HEAD") == base


def test_b3_sibling_mirror_beside_the_checkout(tmp_path: Path) -> None:
    phase, _, _, blob = _setup_b3(tmp_path)
    sources, _ = _box(tmp_path, [phase])
    assert _holds(sources, blob) == []


def _setup_b3(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """B3's (phase's folder, checkout, leaking store, fix's blob): ``t.git`` beside ``t/``."""
    root, _, fix = _task(tmp_path / "phase/t")
    mirror = tmp_path / "phase/t.git"
    _git(tmp_path, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    blob = _blob(root, fix)
    _forget(root)
    return tmp_path / "phase", root, mirror, blob


def test_b4_judge_copy_of_a_nested_mirror_at_the_fix(tmp_path: Path) -> None:
    root, _, fix = _task(tmp_path / "cand")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    dst = tmp_path / "judge"
    dst.mkdir()
    report = copy_regular_files(root, dst, max_files=10_000, max_bytes=1 << 30)
    assert (dst / ".git/HEAD").is_file()
    copied = dst / "vendor/tolls.git"
    assert not copied.exists() or not _has(copied, fix), report.refused


def test_b5_submodule_of_the_task_at_the_fix(tmp_path: Path) -> None:
    phase, _, _, blob = _setup_b5(tmp_path)
    sources, _ = _box(tmp_path, [phase])
    assert _holds(sources, blob) == []


def _setup_b5(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    """B5's (phase's folder, checkout, leaking store, fix's blob): the task's submodule ``sub``,
    the task itself at the fix, deinit'ed."""
    root, _, fix = _task(tmp_path / "t")
    _git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(root), "sub")
    _git(root, "commit", "-qm", "sub: the tolls themselves")
    _git(root / "sub", "checkout", "-q", fix)
    _git(root, "submodule", "deinit", "-q", "-f", "sub")  # no work tree holds the future's files
    assert not (root / "sub/tolls").exists()
    assert _git(root, "--git-dir", str(root / ".git/modules/sub"), "rev-parse", "HEAD") == fix
    _git(root, "branch", "-D", "wip")
    _git(root, "reflog", "expire", "--expire=now", "--all")
    return root, root, root / ".git/modules/sub", _blob(root, fix)


@pytest.mark.xfail(
    strict=True,
    reason="B6: a git bundle of the future is a plain file: the guard neither finds nor hides "
    "it (docs: the content audits')",
)
def test_b6_bundle_in_the_work_tree(tmp_path: Path) -> None:
    root, _, _ = _task(tmp_path / "t")
    (root / "vendor").mkdir()
    _git(root, "bundle", "create", "-q", "vendor/tolls.bundle", "wip")
    _forget(root)
    trace = tmp_path / "raw.trace"
    binds = git_guard.before_phase([root], trace)
    covered = [dst for _, _, dst in binds]
    bundle = root / "vendor/tolls.bundle"
    assert any(bundle == d or d in bundle.parents for d in covered)


def test_a_store_of_the_fix_blob_alone_holds(tmp_path: Path) -> None:
    """A bare store with no commit whose only object is the fix's blob: its copy holds none."""
    root, _, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    store = root / "vendor/blobs.git"
    _git(root, "init", "-q", "--bare", str(store))
    data = _git(root, "cat-file", "blob", blob) + "\n"
    proc = subprocess.run(
        ["git", "--git-dir", str(store), "hash-object", "-w", "--stdin"],
        input=data.encode(),
        capture_output=True,
        env={**os.environ, **_ENV},
    )
    assert proc.stdout.decode().strip() == blob
    _forget(root)
    sources, _ = _box(tmp_path, [root])
    assert _holds(sources, blob) == []


def test_replace_refs_and_grafts_in_a_nested_store_hold(tmp_path: Path) -> None:
    """An unrelated library whose HEAD is replaced by the fix (``refs/replace``), and a second
    whose HEAD is grafted onto the fix (``info/grafts``), both holding the fix's objects: neither
    copy holds the fix."""
    root, _, fix = _task(tmp_path / "t")
    blob = _blob(root, fix)
    for name in ("replaced", "grafted"):
        lib = root / f"vendor/{name}"
        lib.mkdir(parents=True)
        _git(lib, "init", "-q", "-b", "main")
        (lib / "lib.py").write_text("x = 1\n")
        _git(lib, "add", "-A")
        _git(lib, "commit", "-qm", "lib")
        head = _git(lib, "rev-parse", "HEAD")
        _git(lib, "fetch", "-q", str(root), "wip")
        if name == "replaced":
            _git(lib, "replace", head, fix)
            assert FUTURE in _git(lib, "show", "HEAD:tolls/toll.py")
        else:
            (lib / ".git/info/grafts").write_text(f"{head} {fix}\n")
        _git(lib, "update-ref", "-d", "FETCH_HEAD")
    _forget(root)
    sources, _ = _box(tmp_path, [root])
    assert _holds(sources, fix) == [] and _holds(sources, blob) == []


def test_a_nested_store_with_an_alternate_to_the_fix_is_hidden(tmp_path: Path) -> None:
    """A nested mirror whose objects come from an unpruned store of the fix (an alternate) is
    hidden, said; never bound with the fix."""
    root, _, fix = _task(tmp_path / "t")
    outside = tmp_path / "up.git"
    _git(tmp_path, "clone", "-q", "--mirror", str(root), str(outside))
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", "--shared", str(outside), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    sources, snap = _box(tmp_path, [root])
    assert mirror not in sources and _holds(sources, fix) == []
    assert any(h.startswith(f"{mirror} could not be pruned") for h in snap["hidden"])


def test_a_linked_worktree_at_the_fix_holds(tmp_path: Path) -> None:
    """``git worktree add --detach vendor/wt <fix>``: the worktree's git directory
    (``.git/worktrees/wt``, ``commondir``) is bound with nothing of the fix."""
    root, _, fix = _task(tmp_path / "t")
    _git(root, "worktree", "add", "-q", "--detach", "vendor/wt", fix)
    _git(root, "branch", "-D", "wip")
    assert _git(root / "vendor/wt", "rev-parse", "HEAD") == fix
    sources, _ = _box(tmp_path, [root])
    assert _holds(sources, fix) == []


def test_a_dot_git_link_to_a_mirror_at_the_fix_holds(tmp_path: Path) -> None:
    """A checkout in the tree whose ``.git`` is a symbolic link naming a mirror at the fix in the
    same work tree: the mirror is found and pruned at the base."""
    root, base, fix = _task(tmp_path / "t")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    (root / "vendor/wt").mkdir()
    os.symlink("../tolls.git", root / "vendor/wt/.git")
    _forget(root)
    sources, _ = _box(tmp_path, [root])
    assert _holds(sources, fix) == []
    assert _git(root, "--git-dir", str(sources[mirror]), "rev-parse", "HEAD") == base


@pytest.mark.parametrize("cap", ["MAX_PRUNED", "PRUNE_SECONDS"])
def test_past_the_caps_a_nested_mirror_is_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cap: str
) -> None:
    """Past the cap of copies or of host git's time, a nested mirror at the fix is hidden and
    said, never bound whole."""
    root, _, fix = _task(tmp_path / "t")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    _forget(root)
    monkeypatch.setattr(git_guard, cap, 0 if cap == "MAX_PRUNED" else 0.0)
    trace = tmp_path / "raw.trace"
    binds = git_guard.before_phase([root], trace)
    assert not any(src == mirror or src == root / ".git" for _, src, _ in binds)
    over_mirror = [src for _, src, dst in binds if dst == mirror]
    assert over_mirror and all(src.name.endswith(".hidden") for src in over_mirror)


@pytest.mark.parametrize("how", ["dot-git-link", "gitdir-through-link"])
def test_b7_enclosing_store_named_through_a_link(tmp_path: Path, how: str) -> None:
    phase, _, _, blob = _setup_b7(tmp_path, how)
    sources, snap = _box(tmp_path, [phase])
    assert phase / "stores/t.git" in sources, snap
    assert _holds(sources, blob) == []


def _setup_b7(tmp_path: Path, how: str) -> tuple[Path, Path, Path, str]:
    """B7's (phase's folder, checkout, leaking store, fix's blob): the task's store named
    through a link, a mirror of it at the fix in its work tree."""
    phase = tmp_path / "phase"
    up, base, fix = _task(tmp_path / "up")
    store = phase / "stores/t.git"
    root = phase / "t"
    store.parent.mkdir(parents=True)
    _git(
        tmp_path,
        "clone",
        "-q",
        "--single-branch",
        f"--separate-git-dir={store}",
        str(up),
        str(root),
    )
    (root / ".git").unlink()
    if how == "dot-git-link":
        os.symlink("../stores/t.git", root / ".git")
    else:
        os.symlink("stores", phase / "linked")
        (root / ".git").write_text("gitdir: ../linked/t.git\n")
    assert _git(root, "rev-parse", "HEAD") == base and _git(root, "status", "--porcelain") == ""
    (store / "info").mkdir(exist_ok=True)
    (store / "info/exclude").write_text("vendor/\n")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(up), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/wip\n")
    return phase, root, mirror, _blob(up, fix)


def test_a_nested_mirror_with_an_unborn_head_holds(tmp_path: Path) -> None:
    """A mirror of the task whose HEAD names no branch (the fix on another): nothing copied."""
    root, _, fix = _task(tmp_path / "t")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    (mirror / "HEAD").write_text("ref: refs/heads/nothing\n")
    _forget(root)
    sources, _ = _box(tmp_path, [root])
    assert _holds(sources, fix) == []


_SETUPS = {
    "B1": _setup_b1,
    "B2": _setup_b2,
    "B3": _setup_b3,
    "B5": _setup_b5,
    "B7": lambda tmp_path: _setup_b7(tmp_path, "gitdir-through-link"),
}


#: The wins still open in the real bubblewrap box (git on the leaking store prints the fix).
_OPEN = {"B1"}


@pytest.mark.parametrize(
    "win",
    [
        pytest.param(
            w,
            marks=pytest.mark.xfail(
                strict=True,
                reason=f"{w} in the real bubblewrap box: git on the leaking store prints the fix",
            ),
        )
        if w in _OPEN
        else w
        for w in sorted(_SETUPS)
    ],
)
def test_in_the_box_git_reads_the_fix(tmp_path: Path, win: str) -> None:
    if not sandbox.check_sandbox().ok:
        pytest.skip("needs bubblewrap")
    phase, root, store, blob = _SETUPS[win](tmp_path)
    script = (
        f"git --git-dir {store} cat-file blob {blob}; git --git-dir {store} show HEAD:tolls/toll.py"
    )
    spec = SandboxSpec(cwd=root, read_write=(phase,), trace=tmp_path / "raw.trace")
    proc = subprocess.run(
        accounted(wrap(spec, ["bash", "-c", script])),
        env=sandbox_env({**os.environ, **_ENV}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    trace = tmp_path / "raw.trace"
    repos = git_guard.task_repositories(trace)
    sealed = tmp_path / "exec_trace.jsonl"
    write_trace(trace, sealed, str(root), extra=git_guard.after_phase(trace), task_repos=repos)
    rows = read_trace_rows(sealed.read_text())
    assert any(r.get("kind") == "exec" for r in rows)  # the trace is there
    # closed either way: the fix not printed, or the trace holds a finding (a git_state row)
    flagged = [r for r in rows if r.get("kind") == "git_state"]
    assert FUTURE not in proc.stdout + proc.stderr or flagged


def test_a_mirror_inside_the_task_git_directory_holds(tmp_path: Path) -> None:
    """A mirror at the fix kept inside the task's own ``.git`` (``.git/vendor/tolls.git``), and a
    linked worktree of a nested mirror at the fix (``worktrees/wt``, its ``.git`` file in the
    tree): no bound copy holds the fix (the task's ``.git`` is its copy, which holds no stray
    folder; the mirror's copy holds no ``worktrees/``)."""
    root, _, fix = _task(tmp_path / "t")
    inside = root / ".git/vendor/tolls.git"
    _git(tmp_path, "clone", "-q", "--mirror", str(root), str(inside))
    (inside / "HEAD").write_text("ref: refs/heads/wip\n")
    mirror = root / "vendor/tolls.git"
    _git(root, "clone", "-q", "--mirror", str(root), str(mirror))
    _git(root, "--git-dir", str(mirror), "worktree", "add", "-q", "--detach", "vendor/wt", fix)
    assert (mirror / "worktrees/wt/HEAD").read_text().strip() == fix
    _forget(root)
    sources, _ = _box(tmp_path, [root])
    assert _holds(sources, fix) == []
    assert not (sources[root / ".git"] / "vendor").exists()
    assert not (sources[mirror] / "worktrees").exists()
