"""The first line: task repositories bound into a traced phase as copies pruned at their base.

Unit tests of :func:`evotree.harness.git_prune.prune_copy` on real repositories whose future sits
at every door git has (a branch, a tag, the reflog, ``ORIG_HEAD``, ``FETCH_HEAD``, a stash, notes,
a replace reference, a dangling loose object, a second pack, an alternate, a future blob in the
index); then, in the real sandbox under the tracer, the attacks that beat the trace's own
judgement (``tests/test_redteam_trace_resolved_redteam.py``: J, R, S, T, V, W, Y) and the plain
ones, run with the first line on: the future never comes out, because it is not there.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from evotree.harness import (
    git_guard,
    git_phase_search,
    git_prune,
    git_store_read,
    git_untraced,
)
from evotree.harness.sandbox import finish_trace, wrap
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import SandboxSpec
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture

SECRET = "FUTURE_SECRET_42"
_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "a",
    "GIT_AUTHOR_EMAIL": "a@b",
    "GIT_COMMITTER_NAME": "a",
    "GIT_COMMITTER_EMAIL": "a@b",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=_ENV, input=stdin, capture_output=True, text=True, check=True
    ).stdout.strip()


def _commit(work: Path, name: str, text: str, message: str) -> str:
    (work / name).write_text(text)
    _git(work, "add", name)
    _git(work, "commit", "-q", "-m", message)
    return _git(work, "rev-parse", "HEAD")


def _task(work: Path) -> dict[str, str]:
    """A task repository at ``base`` on ``main`` whose future sits at every door."""
    work.mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main")
    old = _commit(work, "a.txt", "old\n", "old")
    _git(work, "tag", "-a", "-m", "an old release", "v0.9", old)
    base = _commit(work, "a.txt", "base\n", "base")
    _git(work, "update-ref", "refs/remotes/origin/main", base)
    _git(work, "checkout", "-q", "-b", "fix")
    future = _commit(work, "a.txt", f"{SECRET}\n", f"fix {SECRET}")
    _git(work, "tag", "v1.1", future)
    _git(work, "tag", "-a", "-m", f"tagged later: {SECRET}", "v0.9-notes", old)
    _git(work, "notes", "add", "-m", f"note {SECRET}", base)
    _git(work, "checkout", "-q", "main")
    _git(work, "replace", old, future)
    _git(work, "update-ref", "refs/remotes/origin/fix", future)
    (work / "a.txt").write_text(f"stashed {SECRET}\n")
    _git(work, "stash", "-q")
    (work / ".git" / "ORIG_HEAD").write_text(future + "\n")
    (work / ".git" / "FETCH_HEAD").write_text(f"{future}\t\tbranch 'fix' of x\n")
    dangling = _git(work, "hash-object", "-w", "--stdin", stdin=f"dangling {SECRET}\n")
    _git(work, "repack", "-q", "-a", "-d")
    loose = _git(work, "hash-object", "-w", "--stdin", stdin=f"loose {SECRET}\n")
    return {"old": old, "base": base, "future": future, "dangling": dangling, "loose": loose}


def _config(git_dir: Path) -> list[str]:
    """The entries of ``git_dir``'s own config, as git lists them."""
    return _git(git_dir, "config", "--file", str(git_dir / "config"), "--list").splitlines()


def _objects(git_dir: Path) -> set[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch-all-objects", "--batch-check"],
        capture_output=True,
        text=True,
        check=True,
        env={**_ENV, "GIT_NO_REPLACE_OBJECTS": "1"},
    ).stdout
    return {line.split(" ", 1)[0] for line in out.splitlines()}


def _reachable(work: Path, rev: str) -> set[str]:
    out = subprocess.run(
        ["git", "--no-replace-objects", "rev-list", "--objects", rev],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split(" ", 1)[0] for line in out.splitlines()}


def test_the_copy_holds_what_the_base_reaches_and_nothing_else(tmp_path: Path) -> None:
    ids = _task(tmp_path / "work")
    gd = tmp_path / "work" / ".git"
    copy = git_prune.prune_copy(gd, tmp_path / "copy")
    assert copy.base == ids["base"] and copy.index == "copied"
    held = _objects(copy.path)
    assert held == _reachable(tmp_path / "work", ids["base"])
    for door in ("future", "dangling", "loose"):
        assert ids[door] not in held
    # references: main (HEAD's branch) at the base, the remote-tracking main, the old tag peeled
    # (its message not copied; the tag made later on an old commit kept only as its commit)
    refs = (copy.path / "packed-refs").read_text().splitlines()[1:]
    assert sorted(refs) == sorted(
        [
            f"{ids['base']} refs/heads/main",
            f"{ids['base']} refs/remotes/origin/main",
            f"{ids['old']} refs/tags/v0.9",
            f"{ids['old']} refs/tags/v0.9-notes",
        ]
    )
    assert (copy.path / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert _config(copy.path) == _config(gd)  # a plain task's config: every key is kept
    names = set(os.listdir(copy.path))
    assert not names & {"ORIG_HEAD", "FETCH_HEAD", "logs", "hooks", "worktrees"}
    assert not (copy.path / "objects" / "info" / "alternates").exists()
    text = b"".join(p.read_bytes() for p in copy.path.rglob("*") if p.is_file())
    assert SECRET.encode() not in text
    # git in the copy: the base's history and nothing of the future, however it is asked for
    env = {**_ENV, "GIT_DIR": str(copy.path)}
    log = subprocess.run(
        ["git", "log", "--all", "--reflog", "-p"], env=env, capture_output=True, text=True
    )
    assert log.returncode == 0 and "base" in log.stdout and SECRET not in log.stdout
    for rev in ("fix", "v1.1", "ORIG_HEAD", "FETCH_HEAD", "stash@{0}", ids["future"][:10]):
        shown = subprocess.run(["git", "show", rev], env=env, capture_output=True, text=True)
        assert shown.returncode != 0 and SECRET not in shown.stdout, rev


def test_an_index_naming_an_absent_object_is_rebuilt_from_the_base(tmp_path: Path) -> None:
    ids = _task(tmp_path / "work")
    work = tmp_path / "work"
    blob = _git(work, "rev-parse", f"{ids['future']}:a.txt")
    _git(work, "update-index", "--cacheinfo", f"100644,{blob},a.txt")
    copy = git_prune.prune_copy(work / ".git", tmp_path / "copy")
    assert copy.index == "rebuilt"
    listed = subprocess.run(
        ["git", "--git-dir", str(copy.path), "ls-files", "-s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert blob not in listed and _git(work, "rev-parse", f"{ids['base']}:a.txt") in listed


def test_detached_unborn_shallow_and_linked_heads(tmp_path: Path) -> None:
    ids = _task(tmp_path / "work")
    work = tmp_path / "work"
    _git(work, "checkout", "-q", "--detach", ids["old"])
    copy = git_prune.prune_copy(work / ".git", tmp_path / "c1")
    assert (copy.path / "HEAD").read_text() == ids["old"] + "\n"
    assert ids["base"] not in _objects(copy.path)  # the base is the future of an older HEAD
    # a repository with no commit: HEAD kept, nothing else
    empty = tmp_path / "empty"
    empty.mkdir()
    _git(empty, "init", "-q", "-b", "main")
    copy = git_prune.prune_copy(empty / ".git", tmp_path / "c2")
    assert copy.base is None and _objects(copy.path) == set()
    # a shallow clone: its boundary kept where the copy holds it
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", "--no-local", f"file://{work}", str(shallow)],
        check=True,
        env=_ENV,
    )
    copy = git_prune.prune_copy(shallow / ".git", tmp_path / "c3")
    kept = (copy.path / "shallow").read_text().split()
    assert kept == (shallow / ".git" / "shallow").read_text().split()
    log = subprocess.run(
        ["git", "--git-dir", str(copy.path), "log", "--oneline"], capture_output=True, text=True
    )
    assert log.returncode == 0 and len(log.stdout.splitlines()) == 1
    # HEAD a link into refs/ (as git takes it): the copy's HEAD a regular file naming it
    _git(work, "checkout", "-q", "main")
    (work / ".git" / "HEAD").unlink()
    (work / ".git" / "HEAD").symlink_to("refs/heads/main")
    copy = git_prune.prune_copy(work / ".git", tmp_path / "c4")
    assert (copy.path / "HEAD").read_text() == "ref: refs/heads/main\n"


@pytest.mark.parametrize(
    "head,why",
    [
        (b"\xff\x00garbage", "neither a reference nor an id"),
        (b"ref: refs/heads/../../../etc\n", "not a reference"),
        (b"ref: refs/heads/nowhere\n", None),  # unborn branch: kept as it is
        (b"0" * 40 + b"\n", "names no commit"),
    ],
)
def test_bad_heads_fail_with_a_reason_and_leave_no_copy(
    tmp_path: Path, head: bytes, why: str | None
) -> None:
    _task(tmp_path / "work")
    gd = tmp_path / "work" / ".git"
    (gd / "HEAD").write_bytes(head)
    if why is None:
        assert git_prune.prune_copy(gd, tmp_path / "copy").base is None
        return
    with pytest.raises(git_prune.PruneError, match=why):
        git_prune.prune_copy(gd, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


def test_the_switch_is_the_operators_and_unknown_values_fail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(git_prune.ENV_TASK_REPOS, raising=False)
    assert git_prune.pruning()
    monkeypatch.setenv(git_prune.ENV_TASK_REPOS, "whole")
    assert not git_prune.pruning()
    monkeypatch.setenv(git_prune.ENV_TASK_REPOS, "off")
    with pytest.raises(git_prune.PruneError, match="not known"):
        git_prune.pruning()


def test_before_phase_binds_the_copy_and_removing_never_follows_a_link(tmp_path: Path) -> None:
    _task(tmp_path / "work")
    gd = tmp_path / "work" / ".git"
    trace = tmp_path / "raw.trace"
    binds = git_guard.before_phase([tmp_path / "work"], trace)
    copy = git_prune.copies_path(trace) / "0"
    assert ("--bind", copy, gd) in binds and ("--ro-bind", copy / "HEAD", gd / "HEAD") in binds
    assert all(src != gd for _, src, dest in binds if dest == gd)
    (repo,) = git_guard.task_repositories(trace)
    assert repo["path"] == str(gd) and repo["head"] == "ref: refs/heads/main"
    assert git_guard.after_phase(trace) == []
    git_prune.remove_copies(trace)
    assert not git_prune.copies_path(trace).exists()
    # a link in the copies' place: removed, its target untouched
    keep = tmp_path / "keep"
    keep.mkdir()
    (keep / "f").write_text("x")
    git_prune.copies_path(trace).symlink_to(keep)
    git_prune.remove_copies(trace)
    assert (keep / "f").read_text() == "x" and not os.path.lexists(git_prune.copies_path(trace))


# ------------------------------------------------------------------------------ in the sandbox


def _phase(tmp_path: Path, work: Path, script: str) -> tuple[subprocess.CompletedProcess, list]:
    spec = SandboxSpec(cwd=work, read_write=(work,), trace=tmp_path / "raw.trace")
    proc = subprocess.run(
        accounted(wrap(spec, ["python3", "-c", script])),
        env=sandbox_env(dict(_ENV)),
        capture_output=True,
        text=True,
        timeout=180,
    )
    evidence = tmp_path / "evidence"
    evidence.mkdir(exist_ok=True)
    rows = finish_trace(spec, evidence)
    return proc, rows


_PLAIN = """\
import os, subprocess, zlib
seen = []
for argv in (["git", "log", "--all", "--reflog", "-p"], ["git", "show", "v1.1"],
             ["git", "show", "ORIG_HEAD"], ["git", "stash", "show", "-p"],
             ["git", "fsck", "--lost-found", "--unreachable"], ["git", "notes", "list"],
             ["git", "log", "-p", "-1", "--glob=refs/*"], ["git", "cat-file", "--batch-all-objects",
             "--batch"]):
    out = subprocess.run(argv, capture_output=True)
    seen.append((out.stdout + out.stderr).decode("latin-1"))
for root, _, files in os.walk(".git"):
    for f in files:
        data = open(os.path.join(root, f), "rb").read()
        seen.append(data.decode("latin-1"))
        try:
            seen.append(zlib.decompress(data).decode("latin-1"))
        except zlib.error:
            pass
print("secret", "FUTURE_SECRET_42" in "".join(seen))
print("status", subprocess.run(["git", "status", "--short"], capture_output=True,
                               text=True).stdout.split())
"""


@pytest.mark.heavy
def test_every_door_is_empty_in_the_box_and_the_repository_is_left_as_it_was(
    tmp_path: Path, seccomp: None
) -> None:
    """git by every spelling, the store's files read by hand (zlib) and a walk of ``.git``: no
    future; ``git status`` works; the task repository outside is unchanged and the copies are
    gone after the phase; the trace records no change."""
    work = tmp_path / "work"
    _task(work)
    before = _objects(work / ".git")
    proc, rows = _phase(tmp_path, work, _PLAIN)
    lines = dict(line.split(" ", 1) for line in proc.stdout.splitlines() if " " in line)
    assert lines.get("secret") == "False", proc.stdout + proc.stderr[-2000:]
    assert lines["status"] == "[]", proc.stdout  # the index came along: a clean status
    assert _objects(work / ".git") == before
    assert not git_prune.copies_path(tmp_path / "raw.trace").exists()
    assert [r for r in rows if r.get("kind") == "git_state"] == []


def _attacks() -> list[object]:
    """The resolved red team's attacks that beat the trace's own judgement, with their set-up."""
    import test_redteam_trace_resolved_redteam as red

    return [
        pytest.param(
            red._LINKED_DIR.format(head='os.symlink("refs/../HEAD", os.path.join(g, "HEAD"))'),
            red._future,
            id="J-git-dir-of-links",
        ),
        pytest.param(
            red._GIT_WRITES_LINK.format(step=red._LOG.format(rev="my_head")),
            red._future,
            id="R-link-written-by-git",
        ),
        pytest.param(
            red._GIT_WRITES.format(
                pre="",
                body='(future + "\\n").encode()',
                prefix="objects/",
                name="tmp_x",
                step=red._S_LOG,
            ),
            red._future_blob_and_tree,
            id="S-store-layout-name",
        ),
        pytest.param(
            red._GIT_WRITES.format(
                pre="", body='b"x\\n"', prefix="objects/", name="tmp_y", step=red._S_INDEX
            ),
            red._future_blob_and_tree,
            id="S-index-entry",
        ),
        pytest.param(
            red._GIT_WRITES.format(
                pre=red._S_GRAPH,
                body="graph",
                prefix="objects/info/",
                name="commit-graph",
                step=red._S_GRAPH_LOG,
            ),
            red._future_blob_and_tree,
            id="S-commit-graph",
        ),
        pytest.param(red._GIT_HIDES.format(by_git="True"), red._future, id="T-git-clean"),
        pytest.param(red._SPELLING.format(rev='"x-g" + future[:8]'), red._future, id="V"),
        pytest.param(
            red._ARGV_ANY.format(argv='["git", "checkout", "x-g" + future[:8], "--", "a.txt"]'),
            red._future,
            id="W",
        ),
        pytest.param(red._GRAPH_ALT.format(build=red._S_GRAPH), red._future_blob_and_tree, id="Y"),
    ]


@pytest.mark.heavy
@pytest.mark.parametrize("script,setup", _attacks())
def test_the_attacks_that_beat_the_trace_find_nothing(
    tmp_path: Path, seccomp: None, script: str, setup: object
) -> None:
    """Each attack ran (its lines printed) and the future never came out: with the ids of the
    future handed to it (``future.txt``, ``blob.txt``, ``tree.txt``), git has nothing to read."""
    from test_redteam_trace_beside_redteam import _ran
    from test_redteam_trace_deputy import _run

    proc, _audit = _run(tmp_path, script, setup)  # type: ignore[arg-type]
    lines = _ran(proc)
    assert lines["attack"].startswith("ERR"), proc.stdout[-2000:]
    assert SECRET not in proc.stdout, proc.stdout[-2000:]
    snap = json.loads(git_guard.snapshot_path(tmp_path / "raw.trace").read_text())
    assert [r["source"] for r in snap["repos"]] == [
        str(git_prune.copies_path(tmp_path / "raw.trace") / "0")
    ]


@pytest.mark.heavy
def test_the_control_the_same_attack_wins_with_the_repository_whole(
    tmp_path: Path, seccomp: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control of the attacks above: with the repository bound whole (the operator's
    ``EVOTREE_TASK_REPOS=whole``), the describe spelling (V) shows the future."""
    import test_redteam_trace_resolved_redteam as red
    from test_redteam_trace_beside_redteam import _ran
    from test_redteam_trace_deputy import _run

    monkeypatch.setenv(git_prune.ENV_TASK_REPOS, "whole")
    proc, _audit = _run(tmp_path, red._SPELLING.format(rev='"x-g" + future[:8]'), red._future)
    assert _ran(proc)["attack"].startswith("OK") and SECRET in proc.stdout, proc.stdout[-2000:]
    assert not git_prune.copies_path(tmp_path / "raw.trace").exists()


@pytest.mark.parametrize(
    "make,why",
    [
        (lambda gd, task: (gd / "commondir").write_text(str(task) + "\n"), "points git elsewhere"),
        (
            lambda gd, task: (gd / "objects" / "info" / "alternates").write_text(
                str(task / "objects") + "\n"
            ),
            "points git elsewhere",
        ),
        (
            lambda gd, task: (gd / "refs" / "heads" / "x").symlink_to(
                task / "refs" / "heads" / "fix"
            ),
            "not a regular file or a folder",
        ),
        (lambda gd, task: os.mkfifo(gd / "objects" / "f"), "not a regular file or a folder"),
        (
            lambda gd, task: ((gd / "config").unlink(), os.mkfifo(gd / "config")),
            "config is not a regular file",
        ),
    ],
    ids=["commondir", "alternates", "ref-link", "fifo-in-store", "fifo-config"],
)
def test_a_git_directory_that_is_not_self_contained_is_not_copied(
    tmp_path: Path, make: object, why: str
) -> None:
    """git runs outside the box on a directory an earlier phase could have written: one that
    points git at another repository or store, or holds a link, FIFO or device where git reads,
    is refused (the caller hides it), before any git runs (a FIFO would hang it)."""
    ids = _task(tmp_path / "task")
    evil = tmp_path / "evil"
    evil.mkdir()
    _git(evil, "init", "-q", "-b", "main")
    _commit(evil, "e.txt", "e\n", "e")
    gd = evil / ".git"
    make(gd, tmp_path / "task" / ".git")  # type: ignore[operator]
    with pytest.raises(git_prune.PruneError, match=why):
        git_prune.prune_copy(gd, tmp_path / "copy")
    assert not (tmp_path / "copy").exists() and ids["future"]


def test_the_tasks_config_is_never_read_by_git_outside_the_box(tmp_path: Path) -> None:
    """A config whose includes and programs would act on the host (an fsmonitor hook writing a
    file, an include of a FIFO): the copy is made without git reading it, then it is the
    copy's, for the box's git alone."""
    _task(tmp_path / "work")
    gd = tmp_path / "work" / ".git"
    os.mkfifo(tmp_path / "pipe")
    flag = tmp_path / "ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {flag}\n")
    hook.chmod(0o755)
    with open(gd / "config", "a") as fh:
        fh.write(f"[include]\n\tpath = {tmp_path / 'pipe'}\n[core]\n\tfsmonitor = {hook}\n")
        fh.write("[pack]\n\tpackSizeLimit = 1k\n\twindow = 250\n")
    copy = git_prune.prune_copy(gd, tmp_path / "copy")
    assert not flag.exists()
    # the copy's config keeps what honest work needs, never the include or the fsmonitor (C3)
    kept = _git(tmp_path, "config", "--file", str(copy.path / "config"), "--list").splitlines()
    assert "core.bare=false" in kept and "core.repositoryformatversion=0" in kept, kept
    assert not [k for k in kept if k.startswith(("include.", "core.fsmonitor", "pack."))], kept
    assert len(list((copy.path / "objects" / "pack").glob("*.pack"))) == 1


def test_an_info_link_is_not_followed_and_submodules_are_pruned_too(tmp_path: Path) -> None:
    work = tmp_path / "work"
    _task(work)
    up = tmp_path / "up"
    up.mkdir()
    _git(up, "init", "-q", "-b", "main")
    _commit(up, "u.txt", "u\n", "u")
    _git(up, "checkout", "-q", "-b", "fix")
    _commit(up, "u.txt", f"{SECRET}\n", "upstream fix")
    _git(up, "checkout", "-q", "main")
    _git(work, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(up), "sub")
    host = tmp_path / "host-info"
    host.mkdir()
    (host / "exclude").write_text("HOST FILE\n")
    gd = work / ".git"
    for name in os.listdir(gd / "info"):
        (gd / "info" / name).unlink()
    (gd / "info").rmdir()
    (gd / "info").symlink_to(host)
    copy = git_prune.prune_copy(gd, tmp_path / "copy")
    assert not (copy.path / "info" / "exclude").exists()
    sub = copy.path / "modules" / "sub"
    assert (sub / "HEAD").is_file() and SECRET.encode() not in b"".join(
        p.read_bytes() for p in sub.rglob("*") if p.is_file()
    )
    log = subprocess.run(
        [
            "git",
            "--git-dir",
            str(sub),
            "--work-tree",
            str(work / "sub"),
            "log",
            "--all",
            "--oneline",
        ],
        capture_output=True,
        text=True,
    )
    assert log.returncode == 0 and log.stdout.count("\n") == 1, log.stdout + log.stderr


def test_a_pruned_pack_is_kept_for_the_same_store_state_only(tmp_path: Path) -> None:
    """The next phase over the same store copies the pack made for the last one (the cache, by
    the store's path, folders and packs, the base and the references); a store that changed, or
    another store, makes its own. The copies are equal to ones made afresh."""
    ids = _task(tmp_path / "work")
    gd = tmp_path / "work" / ".git"
    root = git_prune._cache_root()
    assert root is not None
    before = set(root.iterdir())
    first = git_prune.prune_copy(gd, tmp_path / "c1")
    made = set(root.iterdir()) - before
    assert len(made) == 1
    second = git_prune.prune_copy(gd, tmp_path / "c2")
    assert set(root.iterdir()) - before == made  # a hit: nothing new kept
    assert _objects(second.path) == _objects(first.path) == _reachable(gd.parent, ids["base"])
    assert (second.path / "packed-refs").read_text() == (first.path / "packed-refs").read_text()
    # the store gains a commit on main: another key, the new base's objects
    new = _commit(gd.parent, "b.txt", "more\n", "more")
    third = git_prune.prune_copy(gd, tmp_path / "c3")
    assert third.base == new and len(set(root.iterdir()) - before) == 2
    assert new in _objects(third.path) and ids["future"] not in _objects(third.path)
    # a second store with the same history (a clone): its own entry
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(gd.parent), str(clone)], check=True, env=_ENV)
    git_prune.prune_copy(clone / ".git", tmp_path / "c4")
    assert len(set(root.iterdir()) - before) == 3


def test_a_start_copies_at_most_max_pruned_repositories_and_hides_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    for name in ("a", "b", "c"):
        _task(work / name)
    monkeypatch.setattr(git_guard, "MAX_PRUNED", 2)
    binds = git_guard.before_phase([work], tmp_path / "raw.trace")
    snap = json.loads(git_guard.snapshot_path(tmp_path / "raw.trace").read_text())
    assert [r["path"] for r in snap["repos"]] == [str(work / n / ".git") for n in ("a", "b")]
    assert len(snap["hidden"]) == 1 and "at most 2" in snap["hidden"][0]
    hidden = git_prune.copies_path(tmp_path / "raw.trace") / "2.hidden"
    assert ("--bind", hidden, work / "c" / ".git") in binds


def test_an_untraced_start_over_the_cap_hides_and_skips_only_a_noted_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R6, then J1/J8 of the s14 red team (issue 29): the untraced judge's start prunes at most
    ``MAX_PRUNED`` task repositories of the folders the candidate's code can write (a read-only
    one holding a read-write one: the run directory) and hides the rest, said for the run's
    record (``take_notes``: the candidate's own leavings fail only its own reading of them,
    never the phase); those of a folder only the operator writes are all pruned, whatever their
    number (J8); the judge's copy that
    ``copy_regular_files`` made is noted and not searched again (its repositories were pruned
    as it was made), but a folder made by hand, or another folder put at a noted copy's path,
    is searched like any read path."""
    from evotree.harness.sandbox_copy import copy_regular_files

    root = tmp_path / "untraced"
    root.mkdir(mode=0o700)
    monkeypatch.setattr(git_untraced, "_untraced_root", lambda: root)
    monkeypatch.setattr(git_untraced, "_UNTRACED", [])
    monkeypatch.setattr(git_guard, "MAX_PRUNED", 2)
    run = tmp_path / "run"
    (run / "eval").mkdir(parents=True)
    for name in ("a", "b", "c"):
        _task(run / name)
    binds = git_untraced.before_untraced([run / "eval"], [run], [])
    pruned = [d for _, s, d in binds if d.name == ".git" and not s.name.endswith(".hidden")]
    assert pruned == [run / n / ".git" for n in "ab"], binds
    hidden = [(s, d) for _, s, d in binds if s.name.endswith(".hidden")]
    assert [d for _, d in hidden] == [run / "c" / ".git"], binds
    notes = git_guard.take_notes([str(s) for s, _ in hidden])
    assert len(notes) == 1 and "at most 2" in notes[0] and str(run / "c" / ".git") in notes[0]
    assert git_guard.take_notes([str(s) for s, _ in hidden]) == []  # said once
    git_untraced._remove_untraced()
    assert list(root.iterdir()) == [] and git_untraced._UNTRACED == []  # nothing left behind
    data = tmp_path / "data"
    for name in ("a", "b", "c"):
        _task(data / name)
    binds = git_untraced.before_untraced([run / "eval"], [data], [])  # the operator's: all pruned
    assert [d for _, _, d in binds if d.name == ".git"] == [data / n / ".git" for n in "abc"]
    git_untraced._remove_untraced()
    candidate = tmp_path / "candidate"
    for name in ("a", "b", "c"):
        _task(candidate / name)
    copy = tmp_path / "copy"
    copy.mkdir()
    assert not copy_regular_files(candidate, copy, max_files=10_000, max_bytes=1 << 30).refused
    assert git_untraced.before_untraced([], [copy], []) == []  # noted: not searched again
    (data / "c" / ".git").rename(tmp_path / "c.git")
    binds = git_untraced.before_untraced([], [copy, data], [])
    assert [d for _, _, d in binds if d.name == ".git"] == [data / n / ".git" for n in "ab"]
    git_untraced._remove_untraced()
    moved = tmp_path / "copy-moved"
    copy.rename(moved)
    copy.mkdir()
    _task(copy / "by-hand")
    binds = git_untraced.before_untraced([], [copy], [])  # another folder at the path: searched
    assert [d for _, _, d in binds if d.name == ".git"] == [copy / "by-hand" / ".git"], binds
    git_untraced._remove_untraced()


@pytest.mark.heavy
def test_a_task_repository_in_a_read_only_folder_is_pruned_too(
    tmp_path: Path, seccomp: None
) -> None:
    """The prepare phase reads the candidate's folder read-only: a task repository there is
    bound pruned as in the read-write folders."""
    work = tmp_path / "work"
    _task(work)
    spec = SandboxSpec(cwd=work, read_only=(work,), trace=tmp_path / "raw.trace")
    proc = subprocess.run(
        accounted(wrap(spec, ["git", "log", "--all", "--reflog", "-p"])),
        env=sandbox_env(dict(_ENV)),
        capture_output=True,
        text=True,
        timeout=120,
    )
    (tmp_path / "evidence").mkdir()
    finish_trace(spec, tmp_path / "evidence")
    assert proc.returncode == 0 and "base" in proc.stdout, proc.stderr[-2000:]
    assert SECRET not in proc.stdout


def test_the_judges_copy_of_the_candidate_carries_a_task_repository_pruned(
    tmp_path: Path,
) -> None:
    """The judge reads the candidate from a copy (what it runs may be the candidate's code): a
    task repository's ``.git`` goes across pruned at its base, never whole; one that is not
    self-contained is refused."""
    from evotree.harness.sandbox_copy import copy_regular_files

    candidate = tmp_path / "candidate"
    _task(candidate / "task")
    evil = candidate / "evil"
    evil.mkdir()
    _git(evil, "init", "-q", "-b", "main")
    (evil / ".git" / "commondir").write_text(str(candidate / "task" / ".git") + "\n")
    copy = tmp_path / "copy"
    copy.mkdir()
    report = copy_regular_files(candidate, copy, max_files=10_000, max_bytes=1 << 30)
    blob = b"".join(p.read_bytes() for p in (copy / "task" / ".git").rglob("*") if p.is_file())
    assert SECRET.encode() not in blob and (copy / "task" / "a.txt").read_text() == "base\n"
    log = subprocess.run(
        ["git", "-C", str(copy / "task"), "log", "--all", "--oneline"],
        capture_output=True,
        text=True,
        env=_ENV,
    )
    assert log.returncode == 0 and len(log.stdout.splitlines()) == 2, log.stderr
    assert not (copy / "evil" / ".git").exists()
    assert any(
        r.startswith("evil/.git: a git directory that cannot be pruned") for r in report.refused
    )


def test_a_cut_search_of_a_read_only_folder_refuses_the_phase_and_cuts_no_other_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """E, then R4/R5, then J1/J2/J6 of the s14 red team (issue 29): each read-only folder has its
    own bound and the operator's come first (a folder holding a read-write one, the run
    directory, last): a flood of the run directory leaves the operator's data searched; a cut
    of a folder only the operator writes refuses the phase (``ReadPathCut``: fail closed, with
    the read path and the way out; no row that flags an honest dataset); a cut of one the
    candidate's code writes (the run directory; ``written``: the shared cache) hides every
    folder left unsearched (an empty folder bound over each, said for the run's record): what
    the candidate left fails only its own reading of it, never the phase or another run."""
    run = tmp_path / "run"
    for i in range(5):
        (run / "evidence" / f"d{i}").mkdir(parents=True)
    work = run / "candidate"
    work.mkdir()
    data = tmp_path / "data"
    _task(data / "task")
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", 3)
    binds = git_guard.before_phase([work], tmp_path / "raw.trace", read_only=[run, data])
    hidden = [(o, s, d) for o, s, d in binds if s.name.startswith("cut")]
    assert [d for _, _, d in hidden] == [run / "evidence" / f"d{i}" for i in range(5)], binds
    assert all(o == "--ro-bind" and not any(s.iterdir()) for o, s, _ in hidden)
    assert [d for _, _, d in binds if d.name == ".git"] == [data / "task" / ".git"]
    notes = git_guard.take_notes([str(s) for _, s, _ in hidden])
    assert len(notes) == 5 and "candidate's code wrote" in notes[0], notes
    git_prune.remove_copies(tmp_path / "raw.trace")
    cache = tmp_path / "cache"  # another phase writes it: named in ``written``
    for i in range(5):
        (cache / f"c{i}").mkdir(parents=True)
    binds = git_guard.before_phase(
        [work], tmp_path / "raw.trace", read_only=[cache], written=[cache]
    )
    assert len([s for _, s, _ in binds if s.name.startswith("cut")]) == 5, binds
    git_prune.remove_copies(tmp_path / "raw.trace")
    with pytest.raises(git_guard.ReadPathCut) as exc:  # the operator's: refused, the way out
        git_guard.before_phase([work], tmp_path / "raw.trace", read_only=[cache])
    assert exc.value.root == cache and git_guard.ENV_NO_REPOS in exc.value.fix, exc.value
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", 8)  # run: 7 entries
    git_guard.before_phase([work], tmp_path / "raw.trace", read_only=[run, data])
    snap = json.loads(git_guard.snapshot_path(tmp_path / "raw.trace").read_text())
    assert [r["path"] for r in snap["repos"]] == [str(data / "task" / ".git")]
    assert snap["problems"] == [] and git_guard.after_phase(tmp_path / "raw.trace") == []
    git_prune.remove_copies(tmp_path / "raw.trace")


def test_the_operators_attested_read_paths_are_not_searched_and_none_that_phases_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R5 (issue 29): a read path over the bound refuses the phase, naming it and the way out;
    named in ``EVOTREE_READ_PATHS_WITHOUT_REPOS`` (the operator's environment) it is not
    searched. A named folder that holds or lies in a read-write folder, or lies in a read-only
    folder holding one (the run directory), is searched all the same; relative names are
    ignored."""
    run = tmp_path / "run"
    work = run / "candidate"
    _task(work / "task")
    (run / "evidence").mkdir()
    _task(run / "evidence" / "planted")
    data = tmp_path / "data"
    for i in range(5):
        (data / f"d{i}").mkdir(parents=True)
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", 3)
    trace = tmp_path / "raw.trace"
    with pytest.raises(git_guard.ReadPathCut, match=git_guard.ENV_NO_REPOS) as exc:
        git_guard.before_phase([work], trace, read_only=[data])
    assert exc.value.root == data and str(data) in str(exc.value)
    named = os.pathsep.join([str(data), "relative/x", str(run), str(run / "evidence"), str(work)])
    monkeypatch.setenv(git_guard.ENV_NO_REPOS, named)
    monkeypatch.setattr(git_phase_search, "MAX_READ_ONLY_ENTRIES", 100)
    git_guard.before_phase([work], trace, read_only=[data, run])
    snap = json.loads(git_guard.snapshot_path(trace).read_text())
    found = sorted(r["path"] for r in snap["repos"])
    assert found == sorted(
        [str(work / "task" / ".git"), str(run / "evidence" / "planted" / ".git")]
    ), found
    git_prune.remove_copies(trace)


def test_one_recogniser_of_git_directories(tmp_path: Path) -> None:
    """B: a ``.git`` folder, a bare repository and a separate git directory are git directories
    to the guard's search and to the judge's copy alike (:func:`git_guard.is_git_dir`); a
    ``.git`` file or a plain folder is not."""
    work = tmp_path / "work"
    _task(work)
    _git(tmp_path, "clone", "-q", "--bare", str(work), "b.git")
    (tmp_path / "plain").mkdir()
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / ".git").write_text("gitdir: ../work/.git\n")
    assert git_guard.is_git_dir(work / ".git") and git_guard.is_git_dir(tmp_path / "b.git")
    assert not git_guard.is_git_dir(tmp_path / "plain")
    assert not git_guard.is_git_dir(tmp_path / "f" / ".git")
    found, _ = git_guard.find_git_dirs([tmp_path])
    assert sorted(found) == sorted([work / ".git", tmp_path / "b.git"])


def test_odd_folder_names_are_quoted_for_host_git(tmp_path: Path) -> None:
    """A: a task repository under folders named with ':', a double quote, a backslash and a
    newline is pruned from its own store (the alternate is quoted as git documents), never
    split into another."""
    work = tmp_path / 'a:b"c\\d\ne' / "task"
    ids = _task(work)
    copy = git_prune.prune_copy(work / ".git", tmp_path / "copy")
    assert copy.base == ids["base"]
    assert _objects(copy.path) == _reachable(work, ids["base"])
    assert git_store_read._quote_path('/x:y"\\\n') == '"/x:y\\"\\\\\\n"'


def test_the_box_config_keeps_what_honest_work_needs(tmp_path: Path) -> None:
    """C3: the copy's config keeps the remote, branch, user and git-lfs's own filters; a
    program git would run (fsmonitor, hooksPath, an alias, a textconv, a filter of its own,
    sshCommand, pager, editor) or a file it would read (include) is dropped."""
    work = tmp_path / "work"
    _task(work)
    gd = work / ".git"
    for key, value in (
        ("remote.origin.url", "https://example.invalid/x.git"),
        ("branch.main.remote", "origin"),
        ("user.name", "a b"),
        ("filter.lfs.clean", "git-lfs clean -- %f"),
        ("filter.lfs.smudge", "sh -c evil"),
        ("core.fsmonitor", "touch /tmp/x"),
        ("core.hooksPath", "/tmp"),
        ("core.sshCommand", "evil"),
        ("core.pager", "evil"),
        ("core.editor", "evil"),
        ("alias.st", "!evil"),
        ("diff.x.textconv", "evil"),
        ("filter.x.clean", "evil"),
        ("include.path", "/tmp/other"),
        ('remote.we"ird.url', "x"),
    ):
        _git(work, "config", key, value)
    with open(gd / "config", "a") as fh:  # a key with no value: implicit true, kept so
        fh.write("[core]\n\tsymlinks\n")
    copy = git_prune.prune_copy(gd, tmp_path / "copy")
    kept = _config(copy.path)
    for line in (
        "remote.origin.url=https://example.invalid/x.git",
        "branch.main.remote=origin",
        "user.name=a b",
        "filter.lfs.clean=git-lfs clean -- %f",
        'remote.we"ird.url=x',
        "core.symlinks",
    ):
        assert line in kept, kept
    assert not [
        k
        for k in kept
        if k.split("=", 1)[0]
        in (
            "filter.lfs.smudge",
            "core.fsmonitor",
            "core.hookspath",
            "core.sshcommand",
            "core.pager",
            "core.editor",
            "alias.st",
            "diff.x.textconv",
            "filter.x.clean",
            "include.path",
        )
    ], kept


def test_the_copy_refuses_what_it_cannot_prune_in_time_and_a_git_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """F2: host git runs at most ``PRUNE_SECONDS`` for one copy (spent here: the repository is
    refused with a line, not bound whole); a candidate folder that is itself a git directory
    is refused."""
    from evotree.harness import sandbox_copy

    candidate = tmp_path / "candidate"
    _task(candidate / "task")
    monkeypatch.setattr(sandbox_copy, "PRUNE_SECONDS", -1.0)
    copy = tmp_path / "copy"
    copy.mkdir()
    report = sandbox_copy.copy_regular_files(candidate, copy, max_files=100, max_bytes=1 << 30)
    assert (copy / "task" / "a.txt").read_text() == "base\n"
    assert not (copy / "task" / ".git").exists()
    assert [r for r in report.refused if "time allowed for pruning" in r], report.refused
    bare = tmp_path / "bare.git"
    _git(tmp_path, "clone", "-q", "--bare", str(candidate / "task"), str(bare))
    report = sandbox_copy.copy_regular_files(bare, tmp_path / "copy2", max_files=9, max_bytes=9)
    assert report.refused == [".: the candidate folder is itself a git directory (not copied)"]


def test_an_untraced_phase_binds_task_repositories_pruned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """D: a phase without a trace (the judge) binds a task repository of its read-only folders
    as a copy pruned at its base (a masked folder is not searched); the copies are made in a
    private folder of this process, removed when it ends."""
    from evotree.harness.sandbox import _guard_task_repositories

    monkeypatch.setattr(git_untraced, "_UNTRACED", [])
    data = tmp_path / "data"
    _task(data / "task")
    masked = tmp_path / "masked"
    _task(masked / "task")
    spec = SandboxSpec(cwd=tmp_path, read_only=(data, masked), masked=(masked,))
    binds = _guard_task_repositories(spec)
    bound = {dest: source for _, source, dest in binds if dest.name == ".git"}
    assert list(bound) == [data / "task" / ".git"], binds
    assert SECRET not in "".join(_objects(bound[data / "task" / ".git"]))
    assert ids_in(bound[data / "task" / ".git"]) and len(git_untraced._UNTRACED) == 1
    folder = git_untraced._UNTRACED[0]
    assert folder.is_dir() and bound[data / "task" / ".git"].is_relative_to(folder)
    git_untraced._remove_untraced()
    assert not folder.exists()
    assert _guard_task_repositories(SandboxSpec(cwd=tmp_path, read_only=(masked,))) != []
    git_untraced._remove_untraced()
    assert _guard_task_repositories(SandboxSpec(cwd=tmp_path, read_only=(tmp_path / "x",))) == []


def ids_in(git_dir: Path) -> bool:
    """Whether ``git_dir`` holds a pack (its pruned copy was made)."""
    return bool(list((git_dir / "objects" / "pack").glob("*.pack")))


def test_a_path_too_long_for_the_copy_is_refused_with_a_line(tmp_path: Path) -> None:
    """F1: a folder whose path fits the candidate's folder but not the copy's (a longer path)
    is refused with a line; the copy goes on (no error leaves it)."""
    from evotree.harness.sandbox_copy import copy_regular_files

    candidate = tmp_path / "c"
    candidate.mkdir()
    deep = candidate
    while len(str(deep)) < 4096 - 300:
        deep = deep / ("d" * 200)
        deep.mkdir()
    (candidate / "ok.txt").write_text("ok")
    copy = tmp_path / ("x" * 250)
    copy.mkdir()
    try:
        report = copy_regular_files(candidate, copy, max_files=100, max_bytes=1 << 20)
        assert (copy / "ok.txt").read_text() == "ok"
        assert [r for r in report.refused if "cannot be made in the copy" in r], report.refused
    finally:  # rm, not Python: pytest's removal of tmp_path fails on paths this long
        subprocess.run(["rm", "-rf", str(candidate), str(copy)], check=False)


def test_the_untraced_root_is_private_whatever_the_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R10 (issue 29): under umask 002 every folder ``_untraced_root`` makes is 0700, and an
    existing one of this user's that is group-writable is made 0700 (as the tracer build makes
    its cache); a link in its place is never followed (no folder)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg" / "cache"))
    old = os.umask(0o002)
    try:
        root = git_untraced._untraced_root()
        assert root == tmp_path / "xdg" / "cache" / "evotree" / "untraced-copies"
        for folder in (root, root.parent, root.parent.parent, tmp_path / "xdg"):
            assert os.lstat(folder).st_mode & 0o777 == 0o700, folder
        os.chmod(root.parent, 0o775)
        os.chmod(root, 0o777)
        assert git_untraced._untraced_root() == root
        assert os.lstat(root.parent).st_mode & 0o777 == 0o700
        assert os.lstat(root).st_mode & 0o777 == 0o700
    finally:
        os.umask(old)
    other = tmp_path / "elsewhere"
    other.mkdir(mode=0o777)
    os.chmod(other, 0o777)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "linked"))
    (tmp_path / "linked").mkdir()
    os.symlink(other, tmp_path / "linked" / "evotree")
    assert git_untraced._untraced_root() is None
    assert os.lstat(other).st_mode & 0o777 == 0o777  # not followed


def test_a_repository_in_a_read_only_folder_is_bound_read_only(tmp_path: Path) -> None:
    """R9 (issue 29): the pruned copy of a task repository found in a read-only folder is bound
    read-only (its store too), as the original was; one in a read-write folder keeps its
    read-write bind (git adds objects there)."""
    work = tmp_path / "work"
    _task(work / "task")
    data = tmp_path / "data"
    _task(data / "task")
    trace = tmp_path / "raw.trace"
    try:
        binds = git_guard.before_phase([work], trace, read_only=[data])
        by_dest = {dest: opt for opt, _, dest in binds}
        ro_gd, rw_gd = data / "task" / ".git", work / "task" / ".git"
        assert by_dest[ro_gd] == "--ro-bind" and by_dest[ro_gd / "objects"] == "--ro-bind"
        assert by_dest[rw_gd] == "--bind" and by_dest[rw_gd / "objects"] == "--bind"
    finally:
        git_prune.remove_copies(trace)


def test_a_linked_head_or_store_is_a_git_directory_and_a_bare_store_too(tmp_path: Path) -> None:
    """R1 (issue 29): a bare repository whose ``HEAD`` is a link (``core.preferSymlinkRefs``)
    or whose ``objects`` is a link is a git directory to the search; the first is pruned at its
    base, the second is not self-contained (refused by the prune, so hidden), and the store it
    names — a bare object store outside any git directory — is found and cannot be pruned
    either. A folder that merely has a ``pack/`` or two-hex-digit folder is none."""
    work = tmp_path / "w"
    _task(work / "task")
    _git(work, "-c", "core.preferSymlinkRefs=true", "clone", "-q", "--mirror", "task", "h.git")
    assert os.path.islink(work / "h.git" / "HEAD")
    _git(work, "clone", "-q", "--no-hardlinks", "--mirror", "task", "o.git")
    os.rename(work / "o.git" / "objects", work / "objstore")
    os.symlink("../objstore", work / "o.git" / "objects")
    for honest in ("data/pack", "data/ab"):
        (work / honest).mkdir(parents=True)
        (work / honest / "notes.txt").write_text("x")
    found, problems = git_guard.find_git_dirs([work])
    assert set(found) == {work / n for n in ("task/.git", "h.git", "o.git", "objstore")}
    assert problems == []
    assert not git_guard.is_git_dir(work / "data")
    copy = git_prune.prune_copy(work / "h.git", tmp_path / "h-copy")
    seen = _git(tmp_path, "--git-dir", str(copy.path), "log", "--all", "-p")
    assert "base" in seen and SECRET not in seen
    for refused in ("o.git", "objstore"):
        with pytest.raises(git_prune.PruneError):
            git_prune.prune_copy(work / refused, tmp_path / f"{refused}-copy")


def test_the_sweep_takes_only_folders_whose_lock_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """R8 (issue 29): an untraced phase's folder of copies holds a lock file this process
    flocks while it lives; another process's sweep leaves it (whatever its pids say), takes
    it once the lock is free, and leaves a folder with no lock file."""
    import sys

    root = tmp_path / "untraced"
    root.mkdir(mode=0o700)
    monkeypatch.setattr(git_untraced, "_untraced_root", lambda: root)
    monkeypatch.setattr(git_untraced, "_UNTRACED", [])
    data = tmp_path / "data"
    _task(data / "task")
    assert git_untraced.before_untraced([], [data], [])
    (folder,) = git_untraced._UNTRACED
    assert folder.parent == root and folder.name.startswith(f"{os.getpid()}-")
    (root / "999999999-nolock").mkdir()
    sweep = [
        sys.executable,
        "-c",
        f"from evotree.harness import git_untraced as g\n"
        f"from pathlib import Path\ng._sweep(Path({str(root)!r}))",
    ]
    subprocess.run(sweep, check=True, timeout=60, cwd=Path(__file__).parents[1])
    assert folder.exists() and (root / "999999999-nolock").exists()
    git_untraced._unlock(folder)  # as if this process had died
    subprocess.run(sweep, check=True, timeout=60, cwd=Path(__file__).parents[1])
    assert not folder.exists() and (root / "999999999-nolock").exists()
    git_untraced._UNTRACED.clear()


@pytest.mark.heavy  # 600 folders 66 deep (about 40,000 folders made)
def test_many_cuts_of_what_the_candidate_wrote_hide_the_folders_above_them(
    tmp_path: Path,
) -> None:
    """J1/J2/J6 of the s14 red team (issue 29): past ``MAX_HIDDEN_CUTS`` folders left unsearched
    (300 folders 66 deep), the folders above them are hidden instead — never one holding a
    read-write folder of the phase (``evidence/eval``); a written root holding none (the shared
    cache) is hidden whole; the operator's folder is refused as before."""
    run = tmp_path / "run"
    (run / "evidence" / "eval").mkdir(parents=True)
    cache = tmp_path / "cache"
    deep = "/".join(["d"] * 66)
    for i in range(git_phase_search.MAX_HIDDEN_CUTS + 44):
        (run / "evidence" / "train" / f"x{i}" / deep).mkdir(parents=True)
        (cache / f"x{i}" / deep).mkdir(parents=True)
    rw = [run / "evidence" / "eval"]
    hide = git_phase_search._search(rw, [run], [])[5]
    assert [p for p, _ in hide] == [run / "evidence" / "train"], hide[:3]
    hide = git_phase_search._search(rw, [cache], [], [cache])[5]
    assert [p for p, _ in hide] == [cache], hide[:3]
    with pytest.raises(git_guard.ReadPathCut):
        git_phase_search._search(rw, [cache], [])
