"""The task repositories of a traced phase: found, locked in the sandbox, compared afterwards.

Real git repositories in tmp folders; the sandbox tests run real bubblewrap (heavy)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evotree.harness import git_guard, sandbox
from evotree.harness.audit.trace import TRACE_FILE, read_trace_rows, seal_rows
from evotree.harness.audit.trajectories import audit_trajectories
from evotree.harness.sandbox import finish_trace, wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec

_ENV = {
    "GIT_AUTHOR_NAME": "a",
    "GIT_AUTHOR_EMAIL": "a@b",
    "GIT_COMMITTER_NAME": "a",
    "GIT_COMMITTER_EMAIL": "a@b",
}


def _git(path: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(path), *args],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, **_ENV},
    ).stdout.strip()


def _repo(path: Path) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("base\n")
    _git(path, "add", "a.txt")
    _git(path, "commit", "-qm", "base")
    return path


def _changes(gd: Path, act) -> list[dict]:
    before = git_guard.snapshot(*git_guard.find_git_dirs([gd.parent]))
    act()
    return git_guard.compare(before)


def test_work_trees_and_bare_repositories_are_found_links_are_problems(tmp_path: Path) -> None:
    work = _repo(tmp_path / "w" / "work")
    bare = tmp_path / "w" / "deep" / "er" / "b.git"
    bare.parent.mkdir(parents=True)
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    (tmp_path / "w" / "linked").mkdir()
    (tmp_path / "w" / "linked" / ".git").symlink_to(work / ".git")
    (tmp_path / "w" / "through").symlink_to(work)  # a link to a folder is not followed
    found, problems = git_guard.find_git_dirs([tmp_path / "w"])
    assert found == [work / ".git", bare]  # breadth first
    assert len(problems) == 1 and "linked/.git is a symbolic link" in problems[0]
    # too deep: not found, and said (a repository there would not be guarded)
    found, problems = git_guard.find_git_dirs([tmp_path / "w"], max_depth=1)
    assert found == [work / ".git"]
    assert any("deep/er was not searched" in p for p in problems), problems
    # past the entry cap: the search stops, and says so
    found, problems = git_guard.find_git_dirs([tmp_path / "w"], max_entries=2)
    assert found == [] and any("after 2 entries" in p for p in problems), problems


def test_binds_lock_head_config_refs_and_make_mount_points(tmp_path: Path) -> None:
    gd = _repo(tmp_path / "work") / ".git"
    binds, problems = git_guard.guard_binds([gd])
    assert problems == []
    assert ("--bind", gd, gd) in binds and ("--bind", gd / "objects", gd / "objects") in binds
    for name in ("HEAD", "config", "refs", "logs"):
        assert ("--ro-bind", gd / name, gd / name) in binds
    # a copy bound in its place: bound from the copy, its locks from the copy's entries
    copy = _repo(tmp_path / "copy") / ".git"
    binds, problems = git_guard.guard_binds([(gd, copy)])
    assert problems == [] and ("--bind", copy, gd) in binds
    assert ("--ro-bind", copy / "HEAD", gd / "HEAD") in binds
    # a linked HEAD, a HEAD that is a folder: cannot be locked, said
    (gd / "HEAD").unlink()
    (gd / "HEAD").symlink_to("refs/heads/main")
    assert "symbolic link" in git_guard.guard_binds([gd])[1][0]
    (gd / "HEAD").unlink()
    (gd / "HEAD").mkdir()
    assert "not a regular file" in git_guard.guard_binds([gd])[1][0]


def test_every_change_that_repoints_git_is_a_row(tmp_path: Path) -> None:
    gd = _repo(tmp_path / "work") / ".git"
    assert _changes(gd, lambda: _git(gd.parent, "status")) == []  # the index may change
    # a write put back still changes the file's change time
    assert _changes(gd, lambda: (gd / "HEAD").write_text("ref: refs/heads/main\n"))
    assert _changes(gd, lambda: _git(gd.parent, "branch", "x"))  # a new ref
    assert _changes(gd, lambda: (gd / "HEAD").write_text("garbage\n"))[0]["path"] == str(
        gd / "HEAD"
    )
    assert _changes(gd, lambda: None) == []  # a garbage HEAD compares like any other
    assert _changes(gd, lambda: (gd / "commondir").write_text("../f\n"))[0]["change"].startswith(
        "a new entry"
    )
    rows = _changes(gd, lambda: os.rename(gd, gd.parent / "g"))
    assert rows[0]["change"].startswith("the git directory was moved")


def test_no_snapshot_beside_a_trace_is_a_row_and_rows_are_flagged(tmp_path: Path) -> None:
    trace = tmp_path / "raw.trace"
    assert git_guard.after_phase(trace) == []  # no phase ran
    trace.write_text("")
    assert git_guard.after_phase(trace)[0]["change"].startswith("no record")
    git_guard.snapshot_path(trace).write_text("[1, 2]")
    assert "not a record" in git_guard.after_phase(trace)[0]["change"]
    # a git_state row sealed in a trace is read as an open row, which the audit flags
    text = seal_rows([{"kind": "git_state", "path": "/w/.git/HEAD", "change": "changed"}])
    rows = read_trace_rows(text)
    assert rows[0]["kind"] == "open" and rows[0]["git_state"] == "changed"
    out = tmp_path / "t" / TRACE_FILE
    out.parent.mkdir()
    out.write_text(text)
    assert any(v.flagged for v in audit_trajectories([out]).verdicts)


@pytest.fixture
def traced(monkeypatch: pytest.MonkeyPatch) -> None:
    if not sandbox.check_sandbox().ok or not sandbox.can_trace():
        pytest.skip("needs bubblewrap and a tracer")


def _phase(tmp_path: Path, work: Path, script: str) -> tuple[subprocess.CompletedProcess, list]:
    spec = SandboxSpec(cwd=work, read_write=(work,), trace=tmp_path / "raw.trace")
    proc = subprocess.run(
        accounted(wrap(spec, ["bash", "-c", script])),
        env=sandbox_env({**os.environ, **_ENV}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    evidence = tmp_path / "evidence"
    evidence.mkdir(exist_ok=True)
    rows = finish_trace(spec, evidence)
    return proc, [r for r in rows if r.get("kind") == "git_state"]


@pytest.mark.heavy
def test_plain_git_works_on_a_locked_task_repository(tmp_path: Path, traced: None) -> None:
    """status, log, diff, add, restore and apply work; what moves a reference fails, and none of
    it is a change of the repository's state."""
    work = _repo(tmp_path / "work")
    script = (
        "set -e; echo more >> a.txt; git status --short; git log --oneline | wc -l; "
        "git diff --stat; git add a.txt; git diff --cached --stat; git restore --staged a.txt; "
        "git diff > p; git checkout -- a.txt; git apply p; grep -c more a.txt; "
        "if git commit -qam own 2>/dev/null; then echo committed; else echo no-commit; fi; "
        "if git checkout -qb other 2>/dev/null; then echo switched; else echo no-switch; fi"
    )
    proc, changes = _phase(tmp_path, work, script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [
        "M",
        "a.txt",
        "1",
        "a.txt",
        "|",
        "1",
        "+",
        "1",
        "file",
        "changed,",
        "1",
        "insertion(+)",
        "a.txt",
        "|",
        "1",
        "+",
        "1",
        "file",
        "changed,",
        "1",
        "insertion(+)",
        "1",
        "no-commit",
        "no-switch",
    ], proc.stdout
    assert changes == []
    assert _git(work, "rev-parse", "--abbrev-ref", "HEAD") == "main"


@pytest.mark.heavy
def test_a_repository_that_cannot_be_locked_is_a_change(tmp_path: Path, traced: None) -> None:
    """A task repository whose .git is a link (its target beside it) or whose HEAD is a link
    cannot be locked: the phase runs, and the trace says so (fail closed)."""
    real = _repo(tmp_path / "store" / "real")
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").symlink_to(real / ".git")
    proc, changes = _phase(tmp_path, work, "true")
    assert proc.returncode == 0, proc.stderr
    assert [c["path"] for c in changes] == [str(work / ".git")]
    snapshot = json.loads(git_guard.snapshot_path(tmp_path / "raw.trace").read_text())
    assert snapshot["repos"] == []


@pytest.mark.heavy
@pytest.mark.parametrize("repos", ["pruned", "whole"])
def test_a_garbage_head_is_locked_as_it_is_and_a_linked_head_is_said(
    tmp_path: Path, traced: None, repos: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad input does not stop the phase: a HEAD of garbage is locked as it is (whole: git
    fails on it) or the repository hidden (pruned: it cannot be pruned, so nothing of it is
    reachable) — nothing changed either way; a HEAD that is a link cannot be locked and is a row
    (whole), or is read as git reads it into the copy's HEAD, a regular file (pruned)."""
    monkeypatch.setenv("EVOTREE_TASK_REPOS", repos)
    work = _repo(tmp_path / "a" / "work")
    (work / ".git" / "HEAD").write_bytes(b"\xff\x00garbage")
    proc, changes = _phase(tmp_path / "a", work, "git status; echo x > .git/HEAD; echo ran")
    assert proc.stdout.strip().endswith("ran") and changes == []
    assert (work / ".git" / "HEAD").read_bytes() == b"\xff\x00garbage"
    if repos == "pruned":
        said = json.loads(git_guard.snapshot_path(tmp_path / "a" / "raw.trace").read_text())
        assert "could not be pruned" in said["hidden"][0]
    work = _repo(tmp_path / "b" / "work")
    (work / ".git" / "HEAD").unlink()
    (work / ".git" / "HEAD").symlink_to("refs/heads/main")
    proc, changes = _phase(tmp_path / "b", work, "git log --oneline | wc -l")
    assert proc.stdout.strip() == "1", proc.stderr
    linked = [str(work / ".git" / "HEAD")] if repos == "whole" else []
    assert [c["path"] for c in changes] == linked


@pytest.mark.parametrize(
    "entries",
    [
        ("pack/x.pack",),
        ("pack/x.idx", "pack/x.pack"),
        ("pack/multi-pack-index",),
        ("info/alternates",),
        ("info/packs",),
        ("ab/" + "c" * 38,),
    ],
)
def test_every_layout_git_reads_as_a_store_is_an_object_store(
    tmp_path: Path, entries: tuple[str, ...]
) -> None:
    """Issue 29's J4: git reads every ``objects/pack/*.idx`` whatever its name, a
    multi-pack-index, ``info/alternates`` and ``info/packs``, and loose objects: each makes a
    folder a store (found, never bound or copied whole; a pack by git's magic, J9); a folder
    of plain files does not."""
    store = tmp_path / "mirror" / "objects"
    for rel in entries:
        (store / rel).parent.mkdir(parents=True, exist_ok=True)
        magic = {".pack": b"PACK", "multi-pack-index": b"MIDX"}
        (store / rel).write_bytes(magic.get(Path(rel).suffix or Path(rel).name, b"x") + b"\0" * 8)
    plain = tmp_path / "data" / "pack"
    plain.mkdir(parents=True)
    (plain / "x.txt").write_text("x\n")
    (tmp_path / "data" / "info").mkdir()
    (tmp_path / "data" / "info" / "README").write_text("x\n")
    assert git_guard.is_object_store(store)
    assert not git_guard.is_object_store(tmp_path / "data")
    found, _ = git_guard.find_git_dirs([tmp_path])
    assert found == [store]


def test_a_datasets_pack_folder_is_no_object_store(tmp_path: Path) -> None:
    """J9 of the s14 red team: J4's recogniser took any ``pack/*.idx`` for a store, so an
    honest indexed dataset (``pack/train.{bin,idx}``) was hidden and refused; a pack folder is
    a store by git's own magic (``PACK``, ``MIDX``) or git's ``pack-*`` names."""
    data = tmp_path / "data"
    (data / "pack").mkdir(parents=True)
    (data / "pack" / "train.bin").write_bytes(b"\0" * 64)
    (data / "pack" / "train.idx").write_bytes(b"MMIDIDX\x00\x00" + b"\0" * 64)
    (data / "pack" / "other.pack").write_bytes(b"not a pack")
    assert not git_guard.is_object_store(data)
    assert git_guard.find_git_dirs([tmp_path])[0] == []
    (data / "pack" / "x.pack").write_bytes(b"PACK\0\0\0\2")
    assert git_guard.is_object_store(data)
