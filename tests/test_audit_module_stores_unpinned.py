"""The base of a submodule store the superproject's base pins nothing for (issue 30, W2b of the
s17 nested red team): :func:`~evotree.harness.audit.future_content.module_stores` judges one
sharing history with the task by the task's base — never by its own HEAD, which may be the fix
(a deinit'ed module, a mirror parked in ``.git/modules``) — and keeps its own HEAD only for a
store sharing no commit with the task. Real repositories, real git, no replay."""

from __future__ import annotations

from pathlib import Path

from test_audit_replay_nested import FUTURE_LINE
from test_audit_selected_lines import FIXED, _task

from conftest import git
from evotree.harness.audit.future_content import build_index
from evotree.harness.audit.future_stores import module_stores
from evotree.harness.audit.repo_objects import open_repo


def _stores(root: Path, base: str) -> dict[str, str]:
    r = open_repo(str(root))
    return {s.gitdir.name: s.base for s in module_stores(r.commondir, r.repo, base)}


def test_a_module_store_at_the_fix_is_judged_by_the_task_base(tmp_path: Path) -> None:
    """A bare clone of the task whose HEAD is the fix, in ``.git/modules/x``: its base is the
    task's base (it holds it), so the fix's line stays a line of the future in the index."""
    repo = _task(tmp_path / "t", FIXED)
    root, base, fut = Path(repo["root"]), str(repo["base"]), str(repo["fut"])
    git(root, "clone", "--quiet", "--bare", str(root), str(root / ".git/modules/x"))
    git(root / ".git/modules/x", "update-ref", "HEAD", fut)
    assert _stores(root, base) == {"x": base}
    assert FUTURE_LINE.strip() in build_index(str(root), base).lines


def test_a_shallow_module_store_of_the_fix_is_no_base(tmp_path: Path) -> None:
    """A shallow clone of the fix alone (the base not in it) in ``.git/modules/s``: no commit
    of it is a base, so it is not taken for one (its commits are the task's own, indexed
    there) and the fix's line stays in the index."""
    repo = _task(tmp_path / "t", FIXED)
    root, base, fut = Path(repo["root"]), str(repo["base"]), str(repo["fut"])
    git(root, "branch", "wip", fut)
    shallow = root / ".git/modules/s"
    git(
        root, "clone", "--quiet", "--bare", "--depth=1", "-b", "wip", f"file://{root}", str(shallow)
    )
    git(root, "branch", "-D", "wip")
    assert git(shallow, "rev-parse", "HEAD") == fut
    assert "s" not in _stores(root, base)
    assert FUTURE_LINE.strip() in build_index(str(root), base).lines


def test_an_unrelated_module_store_keeps_its_own_head(tmp_path: Path) -> None:
    """A repository sharing no commit with the task in ``.git/modules/u``: its own HEAD, as
    before (its history is its own)."""
    repo = _task(tmp_path / "t", FIXED)
    root, base = Path(repo["root"]), str(repo["base"])
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "--quiet", "-b", "main")
    git(lib, "config", "user.name", "Lee Vendor")
    git(lib, "config", "user.email", "lee@vendor.example")
    (lib / "lib.py").write_text("def half(n: int) -> float:\n    return n / 2\n")
    git(lib, "add", "-A")
    git(lib, "commit", "--quiet", "-m", "lib: half")
    git(root, "clone", "--quiet", "--bare", str(lib), str(root / ".git/modules/u"))
    assert _stores(root, base) == {"u": git(lib, "rev-parse", "HEAD")}
