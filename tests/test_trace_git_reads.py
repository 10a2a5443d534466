"""The judgement of git's reads of HEAD files, references and object stores (``gitread`` rows of
the seccomp tracer) against the task repositories recorded before a phase.

These run the judgement on a real task repository's recorded identities (``git_guard``), with
rows shaped as the tracer writes them; the traced attacks themselves (the tracer, the sandbox and
git) are in test_redteam_gym_trace.py.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_file, git, make_repo
from test_redteam_trace_beside_redteam import _tracer_binary as _tracer_binary  # noqa: F401
from test_redteam_trace_deputy import seccomp as seccomp  # noqa: F401 - the fixture

from evotree.harness import git_guard
from evotree.harness.audit.trace import judge_git_reads, read_trace_rows, seal_rows


@pytest.fixture
def task(tmp_path: Path) -> dict[str, Any]:
    """A task repository recorded as a traced phase's: its identities for the judgement."""
    work = make_repo(tmp_path / "work")
    commit_file(work, "a.txt", "base\n", "base")
    trace = tmp_path / "raw.trace"
    git_guard.before_phase([work], trace)
    (repo,) = git_guard.task_repositories(trace)
    return repo


def _ident(path: Path) -> dict[str, Any]:
    info = os.stat(path)
    kind = "dir" if path.is_dir() else "file"
    return {"dev": info.st_dev, "ino": info.st_ino, "type": kind, "resolved": str(path)}


def _read(what: str, path: Path, pid: int = 7, **extra: Any) -> dict[str, Any]:
    return {"kind": "gitread", "pid": pid, "what": what, "path": str(path), **_ident(path), **extra}


def _exec(pid: int = 7) -> dict[str, Any]:
    return {"kind": "exec", "pid": pid, "path": "/usr/bin/git", "argv": ["git", "log", "-p"]}


def test_the_task_repository_is_recorded_by_identity(task: dict[str, Any]) -> None:
    gd = Path(task["path"])
    objects = os.stat(gd / "objects")
    assert task["objects"] == [objects.st_dev, objects.st_ino]
    head = os.stat(gd / "HEAD")
    assert [head.st_dev, head.st_ino] in task["known"]
    assert task["head"].startswith("ref: refs/heads/")
    assert task["head_commit"] == git(gd.parent, "rev-parse", "HEAD")


def test_git_over_the_task_repository_is_no_finding(task: dict[str, Any]) -> None:
    gd = Path(task["path"])
    ref = gd / task["head"].split(" ", 1)[1]
    rows = [
        _exec(),
        _read("head", gd / "HEAD", content=task["head"]),
        _read("ref", ref),
        _read("ref", gd / "refs"),  # a folder: listed, not read
        {
            "kind": "gitread",
            "pid": 7,
            "what": "ref",
            "path": str(gd / "packed-refs"),
            "unresolved": True,
        },  # named nothing
        _read("objects", gd / "objects"),
    ]
    assert judge_git_reads(rows, [task]) == []


def test_a_head_of_its_own_over_the_task_objects_is_a_finding(
    task: dict[str, Any], tmp_path: Path
) -> None:
    gd = Path(task["path"])
    own = tmp_path / "f"
    own.mkdir()
    (own / "HEAD").write_text("ref: refs/heads/future\n")
    rows = [
        _exec(),
        _read("head", own / "HEAD", content="ref: refs/heads/future\n"),
        _read("objects", gd / "objects"),
    ]
    (finding,) = judge_git_reads(rows, [task])
    assert finding["kind"] == "git_state" and finding["path"] == str(own / "HEAD")
    assert "refs/heads/future" in finding["change"] and "git log -p" in finding["change"]
    # the same reads by a process whose objects are another repository's: nothing to judge
    other = make_repo(tmp_path / "other", commit=False)
    rows[-1] = _read("objects", other / ".git" / "objects")
    assert judge_git_reads(rows, [task]) == []


def test_a_folder_of_the_task_store_reached_by_a_link_is_the_task_store(
    task: dict[str, Any], tmp_path: Path
) -> None:
    """A store of the phase's own whose folders are links to the task store's: git reads the
    task's objects through the folder it opens (the tracer walks the folder of each object)."""
    gd = Path(task["path"])
    own = tmp_path / "s"
    own.mkdir()
    (own / "HEAD").write_text("x")
    loose = next(p for p in (gd / "objects").iterdir() if len(p.name) == 2)
    rows = [_exec(), _read("head", own / "HEAD"), _read("objects", loose)]
    assert len(judge_git_reads(rows, [task])) == 1
    rows[-1] = _read("objects", gd / "objects" / "pack")
    assert len(judge_git_reads(rows, [task])) == 1


def test_a_hard_link_of_a_task_object_in_a_folder_of_its_own_is_the_task_store(
    task: dict[str, Any], tmp_path: Path
) -> None:
    """A folder the phase made inside the task's objects/ (same mount) holding hard links of the
    task's object files: the folder is not the task's by identity, but the file git was handed
    is (``file_dev``/``file_ino``, the task's files recorded before the phase), so a HEAD of the
    process's own is a finding. The same folder holding a file of the phase's own is not."""
    gd = Path(task["path"])
    loose = next(p for p in (gd / "objects").iterdir() if len(p.name) == 2)
    obj = next(loose.iterdir())
    info = os.stat(obj)
    assert [info.st_dev, info.st_ino] in task["object_files"]
    mine = gd / "objects" / "mine" / loose.name
    mine.mkdir(parents=True)
    os.link(obj, mine / obj.name)
    own = tmp_path / "m"
    own.mkdir()
    (own / "HEAD").write_text("0" * 39 + "1\n")
    handed = os.stat(mine / obj.name)
    row = _read("objects", mine, file_dev=handed.st_dev, file_ino=handed.st_ino)
    rows = [_exec(), _read("head", own / "HEAD", content="0" * 39 + "1\n"), row]
    (finding,) = judge_git_reads(rows, [task])
    assert finding["path"] == str(own / "HEAD") and "not the task repository's" in finding["change"]
    assert judge_git_reads(rows[:2] + [_read("objects", mine)], [task]) == []  # no file identity
    (mine / "own").write_text("x")
    theirs = os.stat(mine / "own")
    row = _read("objects", mine, file_dev=theirs.st_dev, file_ino=theirs.st_ino)
    assert judge_git_reads(rows[:2] + [row], [task]) == []


def test_the_task_store_files_are_recorded_but_not_other_files(tmp_path: Path) -> None:
    """Every file of the loose-object folders and of pack/ is recorded; nothing else (info/,
    a folder that is not two hex digits, the store's own files)."""
    work = make_repo(tmp_path / "work")
    commit_file(work, "a.txt", "base\n", "base")
    git(work, "repack", "-q")
    commit_file(work, "b.txt", "next\n", "next")
    objects = work / ".git" / "objects"
    (objects / "info" / "x").write_text("x")
    (objects / "zz").mkdir()
    (objects / "zz" / "y").write_text("y")
    trace = tmp_path / "raw.trace"
    git_guard.before_phase([work], trace)
    (repo,) = git_guard.task_repositories(trace)
    want = [
        p
        for d in objects.iterdir()
        if d.name == "pack" or (len(d.name) == 2 and d.name != "zz")
        for p in d.iterdir()
    ]
    assert any(p.parent.name == "pack" for p in want) and any(p.parent.name != "pack" for p in want)
    got = {tuple(f) for f in repo["object_files"]}
    assert got == {(os.stat(p).st_dev, os.stat(p).st_ino) for p in want}


def test_a_reference_of_its_own_over_the_task_objects_is_a_finding(
    task: dict[str, Any], tmp_path: Path
) -> None:
    gd = Path(task["path"])
    own = tmp_path / "c" / "refs" / "heads"
    own.mkdir(parents=True)
    (own / "main").write_text("0" * 39 + "1\n")
    rows = [_exec(), _read("head", gd / "HEAD"), _read("ref", own / "main")]
    rows.append(_read("objects", gd / "objects"))
    (finding,) = judge_git_reads(rows, [task])
    assert "a reference that is not the task repository's" in finding["change"]


def test_a_worktree_head_is_judged_by_what_it_names(task: dict[str, Any]) -> None:
    gd = Path(task["path"])
    wt = gd / "worktrees" / "w"
    wt.mkdir(parents=True)
    head = wt / "HEAD"

    def judged(content: str) -> list[dict[str, Any]]:
        head.write_text(content)
        rows = [_exec(), _read("head", head, content=content), _read("objects", gd / "objects")]
        return judge_git_reads(rows, [task])

    assert judged(task["head_commit"] + "\n") == []  # detached at the task's HEAD
    assert judged(task["head"] + "\n") == []
    assert judged("0" * 40 + "\n") == []  # git's placeholder while it makes the worktree
    assert len(judged("ref: refs/heads/future\n")) == 1
    assert len(judged("1" * 40 + "\n")) == 1


def test_reads_are_judged_per_program(task: dict[str, Any], tmp_path: Path) -> None:
    """Each exec starts a new program: a HEAD of the phase's own read by one git process and the
    task's objects by the next one under the same pid are two innocent processes; reads of a pid
    with no exec row (a fork) are judged together."""
    gd = Path(task["path"])
    own = tmp_path / "f"
    own.mkdir()
    (own / "HEAD").write_text("x")
    head, objects = _read("head", own / "HEAD"), _read("objects", gd / "objects")
    task_head = _read("head", gd / "HEAD", content=task["head"])
    assert judge_git_reads([_exec(), head, _exec(), task_head, objects], [task]) == []
    forked = [dict(head, pid=9), dict(objects, pid=9)]
    assert len(judge_git_reads([_exec(), *forked], [task])) == 1


def test_more_git_reads_than_recorded_fail_closed(task: dict[str, Any]) -> None:
    rows = [_exec(), {"kind": "gitread", "pid": 7, "overflow": True}]
    (finding,) = judge_git_reads(rows, [task])
    assert "not judged" in finding["change"]


def test_a_finding_is_read_back_as_an_open_row(task: dict[str, Any], tmp_path: Path) -> None:
    """Sealed after the tracer's rows, a finding reaches the audit as an open row (a finding of
    git internals read), and the gitread rows are kept in the sealed trace."""
    gd = Path(task["path"])
    own = tmp_path / "f"
    own.mkdir()
    (own / "HEAD").write_text("x")
    rows = [_exec(), _read("head", own / "HEAD"), _read("objects", gd / "objects")]
    rows += judge_git_reads(rows, [task])
    back = read_trace_rows(seal_rows(rows, problem=None, tracer="seccomp"))
    assert [r["kind"] for r in back] == ["exec", "gitread", "gitread", "open"]
    assert back[-1]["git_state"].startswith("git (git log -p) read the task repository's objects")


def test_git_shown_another_history_by_its_environment_is_a_finding(task: dict[str, Any]) -> None:
    """A graft file or another base of replacement references (read by the tracer from the
    environment the kernel copied at git's exec) shows another history under the task's own
    HEAD, references and objects."""
    row = {**_exec(), "git_env": ["GIT_GRAFT_FILE=/tmp/g"]}
    (finding,) = judge_git_reads([row], [task])
    assert "GIT_GRAFT_FILE=/tmp/g" in finding["change"]
    assert judge_git_reads([_exec()], [task]) == []


@pytest.mark.parametrize(
    "store",
    [
        "/proc/self/root/w/.git/objects",
        "/proc/self/cwd/.git/objects/ab",
        "/dev/fd/5",
        "//proc/./self/root/x/objects",
        "/dev/./fd/5/pack",
    ],
)
def test_an_object_store_the_tracer_cannot_walk_through_proc_is_a_finding(
    task: dict[str, Any], store: str
) -> None:
    """A store named through /proc or /dev gives rows the tracer could not walk ('unresolved'):
    whose objects git read is unknown, so in a phase with task repositories it fails closed."""
    row = {"kind": "gitread", "pid": 7, "what": "objects", "path": store, "unresolved": True}
    (finding,) = judge_git_reads([_exec(), row], [task])
    assert "/proc or /dev" in finding["change"] and "git log -p" in finding["change"]
    assert judge_git_reads([_exec(), row], []) == []  # no task repository: nothing to hide


def test_a_missing_loose_object_folder_is_no_finding(task: dict[str, Any], tmp_path: Path) -> None:
    """What plain git looks for and does not find (a loose object's folder, alternates) is an
    'unresolved' row with an ordinary path: not a store hidden behind a link."""
    gd = Path(task["path"])
    rows = [
        _exec(),
        _read("head", gd / "HEAD", content=task["head"]),
        _read("objects", gd / "objects"),
        {
            "kind": "gitread",
            "pid": 7,
            "what": "objects",
            "path": str(gd / "objects" / "ab"),
            "unresolved": True,
        },
        {
            "kind": "gitread",
            "pid": 7,
            "what": "objects",
            "path": "/tmp/x/.git/objects/info",
            "unresolved": True,
        },
    ]
    assert judge_git_reads(rows, [task]) == []


def test_the_task_objects_read_with_no_head_opened_is_a_finding(task: dict[str, Any]) -> None:
    """git opens a HEAD file to take a folder as its git directory; a HEAD that is a symbolic link
    of the phase's own (``refs/heads/future``) it reads with readlink, unseen: a git program that
    read the task's objects and references with no HEAD opened fails closed."""
    gd = Path(task["path"])
    ref = gd / task["head"].split(" ", 1)[1]
    rows = [_exec(), _read("ref", ref), _read("objects", gd / "objects")]
    (finding,) = judge_git_reads(rows, [task])
    assert "without opening its HEAD" in finding["change"]
    rows.insert(1, _read("head", gd / "HEAD", content=task["head"]))
    assert judge_git_reads(rows, [task]) == []
    # a fork of git (no exec of its own) reads what its parent set up: not judged so
    assert judge_git_reads([_read("objects", gd / "objects", pid=9)], [task]) == []


def test_a_commondir_or_graft_file_new_in_the_task_repository_is_a_finding(
    task: dict[str, Any], tmp_path: Path
) -> None:
    """A commondir or info/grafts in the task's git directory that was not there before the phase
    (task_repositories' ``pointers``) points git elsewhere: reading it is a finding, even when it
    is removed before the phase ends."""
    gd = Path(task["path"])
    assert "commondir" not in task["pointers"]
    (gd / "commondir").write_text("/tmp/c\n")
    row = _read("pointer", gd / "commondir", content="/tmp/c\n")
    (finding,) = judge_git_reads([_exec(), row], [task])
    assert "commondir written into the task repository" in finding["change"]
    assert "/tmp/c" in finding["change"]
    assert judge_git_reads([_exec(), row], [{**task, "pointers": ["commondir"]}]) == []
    other = tmp_path / "other.git"
    other.mkdir()
    (other / "commondir").write_text("x")
    assert judge_git_reads([_exec(), _read("pointer", other / "commondir")], [task]) == []


# --- what git reads beside the task's own files (issue 29, red team of ab9a8ad: D-L) ---


@pytest.fixture
def future_task(tmp_path: Path) -> dict[str, Any]:
    """A task repository whose ``future`` branch holds a commit beyond the base (HEAD: main)."""
    work = make_repo(tmp_path / "fwork")
    commit_file(work, "a.txt", "base\n", "base")
    git(work, "checkout", "-q", "-b", "future")
    commit_file(work, "a.txt", "future\n", "future")
    git(work, "checkout", "-q", "main")
    trace = tmp_path / "fraw.trace"
    git_guard.before_phase([work], trace)
    (repo,) = git_guard.task_repositories(trace)
    repo["future"] = git(work, "rev-parse", "future")
    return repo


def _over_objects(task: dict[str, Any], *reads: dict[str, Any]) -> list[dict[str, Any]]:
    """A git process that read the task's HEAD and objects, and ``reads``."""
    gd = Path(task["path"])
    head = _read("head", gd / "HEAD", content=task["head"])
    return [_exec(), head, *reads, _read("objects", gd / "objects")]


def test_a_worktree_commondir_naming_a_folder_of_its_own_is_a_finding(
    task: dict[str, Any], tmp_path: Path
) -> None:
    """(E/F/G) a linked worktree's own commondir is judged by the folder its text names,
    relative to its own folder as git resolves it: the task's git directory, or a finding."""
    wt = Path(task["path"]) / "worktrees" / "w"
    wt.mkdir(parents=True)
    (wt / "commondir").write_text("../..\n")
    benign = _read("pointer", wt / "commondir", content="../..\n")
    assert judge_git_reads(_over_objects(task, benign), [task]) == []
    attack = {**benign, "content": "/tmp/c\n"}
    (finding,) = judge_git_reads(_over_objects(task, attack), [task])
    assert "through a commondir naming '/tmp/c'" in finding["change"]
    # no task objects read: nothing to judge
    assert judge_git_reads([_exec(), attack], [task]) == []


def test_a_graft_file_that_is_not_the_task_s_is_a_finding(
    task: dict[str, Any], tmp_path: Path
) -> None:
    """(D, E) a graft file read by a git over the task's objects: only the task's own."""
    gd = Path(task["path"])
    (gd / "info").mkdir(exist_ok=True)
    (gd / "info" / "grafts").write_text("")
    task = {**task, "pointers": ["info/grafts"]}
    own = _read("pointer", gd / "info" / "grafts", content="")
    assert judge_git_reads(_over_objects(task, own), [task]) == []
    other = tmp_path / "c" / "info"
    other.mkdir(parents=True)
    (other / "grafts").write_text("a b\n")
    attack = _read("pointer", other / "grafts", content="a b\n")
    (finding,) = judge_git_reads(_over_objects(task, attack), [task])
    assert "a graft file that is not the task's" in finding["change"]


def test_a_task_reference_read_under_another_name_is_a_finding(
    future_task: dict[str, Any], tmp_path: Path
) -> None:
    """(F/G) references are judged by identity: the task's refs/heads/future reached through a
    link named refs/heads/main (or refs/replace/<base>) of a folder of its own is a finding."""
    gd = Path(future_task["path"])
    own = _read("ref", gd / "refs" / "heads" / "future")
    assert judge_git_reads(_over_objects(future_task, own), [future_task]) == []
    link = tmp_path / "c" / "refs" / "heads" / "main"
    link.parent.mkdir(parents=True)
    link.symlink_to(gd / "refs" / "heads" / "future")
    attack = {**_read("ref", link), "resolved": str(gd / "refs" / "heads" / "future")}
    (finding,) = judge_git_reads(_over_objects(future_task, attack), [future_task])
    assert "refs/heads/future read under another name" in finding["change"]


def test_git_common_dir_naming_another_folder_is_a_finding(task: dict[str, Any]) -> None:
    """(D) GIT_COMMON_DIR in git's environment: the task's git directory, or a finding when git
    read the task's objects."""
    rows = _over_objects(task)
    rows[0] = {**rows[0], "git_env": [f"GIT_COMMON_DIR={task['path']}"]}
    assert judge_git_reads(rows, [task]) == []
    rows[0] = {**rows[0], "git_env": ["GIT_COMMON_DIR=/tmp/c"]}
    (finding,) = judge_git_reads(rows, [task])
    assert "GIT_COMMON_DIR=/tmp/c" in finding["change"]
    assert judge_git_reads(rows[:1], [task]) == []  # no task objects read


@pytest.mark.parametrize(
    "name", ["ORIG_HEAD", "MERGE_HEAD", "FETCH_HEAD", "rebase-merge/orig-head"]
)
def test_a_state_pointer_naming_the_future_is_a_finding(
    future_task: dict[str, Any], tmp_path: Path, name: str
) -> None:
    """(J, L) a state pointer (sealed, its text in the row) read by a git over the task's
    objects: naming the base or a commit of the phase's own is plain git (am, merge, rebase of
    its own work); naming a commit the task's references reach beyond the base is a finding
    (FETCH_HEAD: every line)."""
    wt = Path(future_task["path"]) / "worktrees" / "w"
    (wt / name).parent.mkdir(parents=True, exist_ok=True)
    (wt / name).write_text("x\n")
    base, future = future_task["head_commit"], future_task["future"]
    own = "1" * 40  # a commit of the phase's own: no task reference reaches it

    def read(text: str) -> dict[str, Any]:
        return _read("head", wt / name, content=text)

    for text in (f"{base}\n", f"{own}\n", f"{base}\t\tbranch 'main' of ../o\n"):
        assert judge_git_reads(_over_objects(future_task, read(text)), [future_task]) == []
    for text in (
        f"{future}\n",
        f"{base}\t\tbranch 'main' of ../o\n{future}\tnot-for-merge\tbranch 'f' of ../o\n",
        "ref: refs/heads/future\n",
    ):
        (finding,) = judge_git_reads(_over_objects(future_task, read(text)), [future_task])
        assert future[:40] in finding["change"] and "beyond the base" in finding["change"]
    # read by a git over no task objects: nothing to judge
    assert judge_git_reads([_exec(), read(f"{future}\n")], [future_task]) == []


def test_a_state_pointer_naming_a_future_only_the_reflog_reaches_is_a_finding(
    tmp_path: Path,
) -> None:
    """An image reset past the future (``git reset --hard HEAD~1``) leaves it in HEAD's reflog
    and the task's own ``ORIG_HEAD`` only (recorded before the phase: ``state_ids``): a planted
    ``MERGE_HEAD`` naming it is a finding; naming the base is none."""
    work = make_repo(tmp_path / "rwork")
    commit_file(work, "a.txt", "base\n", "base")
    commit_file(work, "a.txt", "future\n", "future")
    future = git(work, "rev-parse", "HEAD")
    git(work, "reset", "-q", "--hard", "HEAD~1")
    trace = tmp_path / "rraw.trace"
    git_guard.before_phase([work], trace)
    (repo,) = git_guard.task_repositories(trace)
    assert repo["state_ids"] == [future]  # the image's ORIG_HEAD
    wt = Path(repo["path"]) / "worktrees" / "w"
    wt.mkdir(parents=True)
    (wt / "MERGE_HEAD").write_text("x\n")
    for tips in (repo, {**repo, "state_ids": []}):  # the reflog alone reaches it too
        row = _read("head", wt / "MERGE_HEAD", content=f"{future}\n")
        (finding,) = judge_git_reads(_over_objects(tips, row), [tips])
        assert "MERGE_HEAD naming" in finding["change"]
    row = _read("head", wt / "MERGE_HEAD", content=f"{repo['head_commit']}\n")
    assert judge_git_reads(_over_objects(repo, row), [repo]) == []


def test_state_texts_git_parses_otherwise_are_judged_as_git_reads_them(
    future_task: dict[str, Any],
) -> None:
    """(red team of b44d85d) an id in capitals (git's hex parser takes A-F), the future's tree or
    tag (``am --abort`` checks a tree out), any pseudo-reference of a git directory (``MY_HEAD``)
    and a session's todo list naming the future by an abbreviation are findings; the base, its
    tree and an abbreviation of the base are none."""
    gd = Path(future_task["path"])
    wt = gd / "worktrees" / "w"
    work = gd.parent
    git(work, "tag", "-a", "-m", "t", "ftag", "future")
    base, future = future_task["head_commit"], future_task["future"]
    tree = git(work, "rev-parse", "future^{tree}")
    base_tree = git(work, "rev-parse", f"{base}^{{tree}}")
    tag = git(work, "rev-parse", "ftag")

    def judged(name: str, text: str) -> list[dict[str, Any]]:
        (wt / name).parent.mkdir(parents=True, exist_ok=True)
        (wt / name).write_text(text)
        row = _read("head", wt / name, content=text)
        return judge_git_reads(_over_objects(future_task, row), [future_task])

    for name, text in (
        ("ORIG_HEAD", f"{future.upper()}\n"),
        ("ORIG_HEAD", f"{tree}\n"),
        ("ORIG_HEAD", f"{tag}\n"),
        ("MY_HEAD", f"{future}\n"),
        ("sequencer/todo", f"pick {base[:7]} base\npick {future[:5]} future\n"),
        ("rebase-merge/git-rebase-todo", f"pick {future[:9]} future\n"),
    ):
        assert len(judged(name, text)) == 1, (name, text)
    for name, text in (
        ("ORIG_HEAD", f"{base.upper()}\n"),
        ("ORIG_HEAD", f"{base_tree}\n"),
        ("MY_HEAD", f"{base}\n"),
        ("sequencer/todo", f"pick {base[:7]} base\n# a comment naming nothing\n"),
    ):
        assert judged(name, text) == [], (name, text)


# --- judged by what git resolves, not how a file spells it (red team of 66d31ff: K, N, L/P, S) ---


def test_a_name_under_git_that_is_not_git_s_own_is_judged_by_what_it_names(
    future_task: dict[str, Any],
) -> None:
    """(K, N) any file under the task's ``.git/`` that is not git's own (``my_head``: the tracer
    seals and rows it as HEAD-like) is a revision git could read: naming the future is a
    finding, the base none; ``ORIG_HEAD`` = ``ref: my_head`` is judged by that read."""
    gd = Path(future_task["path"])
    base, future = future_task["head_commit"], future_task["future"]
    (gd / "my_head").write_text("x\n")
    wt = gd / "worktrees" / "w"
    wt.mkdir(parents=True)
    (wt / "ORIG_HEAD").write_text("x\n")
    pointer = _read("head", wt / "ORIG_HEAD", content="ref: my_head\n")
    for name in ("my_head", "My_Head", "MY_HEAD1"):
        row = {**_read("head", gd / "my_head", content=f"{future}\n"), "path": str(gd / name)}
        (finding,) = judge_git_reads(_over_objects(future_task, pointer, row), [future_task])
        assert f"{name} naming {future}" in finding["change"], finding
    row = _read("head", gd / "my_head", content=f"{base}\n")
    assert judge_git_reads(_over_objects(future_task, pointer, row), [future_task]) == []


def test_session_words_are_judged_as_git_resolves_them(future_task: dict[str, Any]) -> None:
    """(L, P) a todo command's word, or a file git reads as one revision, naming the future by a
    reference name, a peel or a message search (``:/``) or reflog syntax (``@{``) is a finding;
    git's own todo lists (ids, labels, exec lines, subjects naming anything) are none."""
    gd = Path(future_task["path"])
    wt = gd / "worktrees" / "w"
    base = future_task["head_commit"]

    def judged(name: str, text: str) -> list[dict[str, Any]]:
        (wt / name).parent.mkdir(parents=True, exist_ok=True)
        (wt / name).write_text(text)
        row = _read("head", wt / name, content=text)
        return judge_git_reads(_over_objects(future_task, row), [future_task])

    for name, text in (
        ("sequencer/todo", f"pick {base} x\npick future y\n"),
        ("sequencer/todo", "revert refs/heads/future\n"),
        ("sequencer/todo", "pick :/future y\n"),
        ("sequencer/todo", "pick main@{1}\n"),
        ("rebase-merge/git-rebase-todo", "fixup -C heads/future x\n"),
        ("rebase-merge/git-rebase-todo", "fixup -Cfuture x\n"),
        ("rebase-merge/git-rebase-todo", "merge -cfuture onto # x\n"),
        ("rebase-merge/git-rebase-todo", f"merge -C {base} future # Merge\n"),
        ("rebase-merge/git-rebase-todo", "reset future~0\n"),
        ("rebase-merge/git-rebase-todo", "pick main^{/future}\n"),
        ("rebase-merge/onto", "future\n"),
    ):
        assert len(judged(name, text)) == 1, (name, text)
    for name, text in (
        ("sequencer/todo", f"pick {base} future work\n"),
        (
            "rebase-merge/git-rebase-todo",
            f"label onto\nreset onto\npick {base[:7]} x\nlabel future\n"
            f"merge -C {base} onto # Merge branch 'future'\nexec git log future\nbreak\n",
        ),
        ("rebase-merge/onto", f"{base}\n"),
        ("rebase-merge/head-name", "refs/heads/main\n"),
        ("rebase-merge/message", "future\n"),
    ):
        assert judged(name, text) == [], (name, text)


def _colliding_blob(work: Path, prefix: str) -> str:
    """A blob written to ``work``'s store whose id starts with ``prefix`` (found by hashing)."""
    n = 0
    while True:
        body = b"x%d\n" % n
        if hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest().startswith(prefix):
            break
        n += 1
    made = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=work, input=body, capture_output=True
    ).stdout.decode()
    assert made.startswith(prefix), made
    return made.strip()


def test_an_ambiguous_abbreviation_is_every_object_it_could_name(
    future_task: dict[str, Any],
) -> None:
    """(S) a todo's abbreviation shared by the future and a blob of the phase's own names the
    future whatever git's disambiguation (``^{commit}``, ``core.disambiguate``): a finding; so is
    a patch's ``index`` line; an ambiguous prefix of the base's is none."""
    gd = Path(future_task["path"])
    wt = gd / "worktrees" / "w"
    work = gd.parent
    base, future = future_task["head_commit"], future_task["future"]
    _colliding_blob(work, future[:4])
    _colliding_blob(work, base[:4])

    def judged(name: str, text: str) -> list[dict[str, Any]]:
        (wt / name).parent.mkdir(parents=True, exist_ok=True)
        (wt / name).write_text(text)
        row = _read("head", wt / name, content=text)
        return judge_git_reads(_over_objects(future_task, row), [future_task])

    for text in (f"pick {future[:4]}^{{commit}} x\n", f"pick {future[:4]} x\n"):
        (finding,) = judged("sequencer/todo", text)
        assert future in finding["change"], finding
    patch = f"diff --git a/a.txt b/a.txt\nindex {future[:4]}..{'0' * 7} 100644\n"
    assert len(judged("rebase-apply/0001", patch)) == 1
    assert judged("sequencer/todo", f"pick {base[:4]}^{{commit}} x\n") == []


#: (K, the tracer) a file under the task's ``.git/`` that git could read as a revision, named on
#: git's command line however git is pointed at the git directory, then removed: the machine's
#: git opens ``./my_head``, ``.git/objects/../my_head``, ``.git//./my_head``, ``.git/foo/bar``,
#: ``.git/hooks/x``, ``.git/objects/x/y``, ``.git/worktrees/w/my_head`` ..., or ``/tmp/g/my_head``
#: through a link of its own (``/tmp/g`` -> the task's ``.git``)
_PLANTED = """\
os.symlink(os.path.join(work, ".git"), "/tmp/g")
path = os.path.join(work, ".git", {name!r})
made = not os.path.isdir(os.path.dirname(path))
os.makedirs(os.path.dirname(path), exist_ok=True)
put(path, future + "\\n")
env = dict(os.environ, **{env})
report(subprocess.run(["git", "log", "-p", "-1", {name!r}, "--"], cwd={cwd}, env=env,
                      capture_output=True, text=True))
os.unlink(path)
if made:
    os.rmdir(os.path.dirname(path))
os.unlink("/tmp/g")
done()
"""


@pytest.mark.heavy
@pytest.mark.parametrize(
    "name,cwd,env",
    [
        ("my_head", 'os.path.join(work, ".git")', '{"GIT_DIR": "."}'),
        ("my_head", 'os.path.join(work, ".git")', "{}"),
        ("my_head", "work", '{"GIT_DIR": ".git/objects/.."}'),
        ("my_head", "work", '{"GIT_DIR": ".git//."}'),
        ("foo/bar", "work", "{}"),
        ("hooks/x", "work", "{}"),
        ("objects/x", "work", "{}"),
        ("objects/x/y", "work", "{}"),
        ("worktrees/w/my_head", "work", "{}"),
        ("worktrees/w/index", "work", "{}"),
        ("index", "work", "{}"),
        ("my_head", '"/tmp"', '{"GIT_DIR": "/tmp/g"}'),
        ("my_head", '"/tmp"', '{"GIT_DIR": "g"}'),
        ("my_head", '"/tmp/g"', '{"GIT_DIR": "."}'),
    ],
    ids=[
        "git-dir-dot",
        "in-git-dir",
        "objects-dotdot",
        "slash-dot",
        "two-level",
        "hooks",
        "objects-file",
        "objects-deeper",
        "worktree-folder",
        "worktree-index",
        "index",
        "link-absolute",
        "link-relative",
        "link-cwd",
    ],
)
def test_a_planted_name_under_git_is_rowed_however_git_spells_its_path(
    tmp_path: Path, seccomp: None, name: str, cwd: str, env: str
) -> None:
    """The traced attack (the real sandbox and tracer): git shows the future, and its read of the
    planted file is rowed and judged by what it names (a finding). The tracer before this rule
    (a row for ``[A-Z_]+`` names only) loses each."""
    from test_redteam_gym_trace import SECRET, _flagged
    from test_redteam_trace_beside_redteam import _PRELUDE, _ran
    from test_redteam_trace_deputy import _run
    from test_redteam_trace_pin_git_redteam import _future

    script = _PRELUDE + _PLANTED.format(name=name, cwd=cwd, env=env)
    proc, audit = _run(tmp_path, script, _future)
    assert _ran(proc)["attack"].startswith("OK"), proc.stdout[-2000:]
    assert SECRET in proc.stdout and _flagged(audit), proc.stdout[-2000:]
    hits = [h.command for v in audit.verdicts for h in v.hits if h.severity == "high"]
    assert any(f"{name.split('/')[-1]} naming" in h for h in hits), hits


def _write(call: str, path: Path | str, **extra: Any) -> dict[str, Any]:
    """A ``gitwrite`` row as the tracer writes it (write_row): a program that is not git."""
    return {
        "kind": "gitwrite",
        "pid": 9,
        "call": call,
        "path": str(path),
        "resolved": str(path),
        "exe": "/usr/bin/python3",
        **extra,
    }


@pytest.mark.parametrize(
    "call,name",
    [
        ("open", "rebase-merge/git-rebase-todo"),  # GIT_SEQUENCE_EDITOR="sed -i ..."
        ("rename", "rebase-merge/git-rebase-todo"),
        ("open", "rebase-merge/sedAbc123"),
        ("open", "sequencer/todo"),
        ("open", "COMMIT_EDITMSG"),  # core.editor
        ("rename", "MERGE_MSG"),
        ("open", "ORIG_HEAD"),  # its text is judged when git reads it
        ("open", "worktrees/w/HEAD"),
        ("open", "worktrees/w/COMMIT_EDITMSG"),
        ("open", "worktrees/w/rebase-merge/git-rebase-todo"),
        ("open", "hooks/pre-commit"),  # pre-commit install: a program git runs (exec rows)
        ("rename", "hooks/pre-commit"),
        ("symlink", "hooks/pre-commit"),  # a link to a script of the work tree
    ],
)
def test_a_text_file_git_resolves_written_by_a_program_is_no_finding(
    task: dict[str, Any], call: str, name: str
) -> None:
    """In the task's git directory only git writes, but for files whose text the judge resolves
    as git would when git reads them (a session's file, a top-level HEAD-like file: an editor
    edits them) and hooks (programs git runs: ``pre-commit install``)."""
    gd = Path(task["path"])
    link = {"link": "../../scripts/pre-commit"} if call == "symlink" else {}
    if call == "rename":
        link = {"from_type": "file"}
    assert judge_git_reads([_write(call, gd / name, **link)], [task]) == []


@pytest.mark.parametrize(
    "call,name,extra",
    [
        ("symlink", "my_head", {"link": "refs/heads/future"}),  # (A)
        ("symlink", "worktrees/w/ORIG_HEAD", {"link": "refs/heads/future"}),
        ("symlink", "rebase-merge/onto", {"link": "refs/heads/future"}),
        ("open", "index", {}),  # (D)
        ("open", "worktrees/w/index", {}),
        ("open", "objects/tmp_x", {}),  # (I)
        ("open", "objects/pack/pack-x.keep", {}),
        ("open", "objects/info/commit-graph", {}),  # (O)
        ("rename", "objects/d5/tmp_obj_946489", {}),
        ("rename_from", "objects/d5/946489c725e40673284a828f77f967c8d4c43b", {}),
        ("link", "refs/heads/x", {}),
        ("mknod", "my_head", {}),
        ("symlink", "hooks/x", {"link": "refs/heads/future"}),  # a symbolic reference by hand
        ("mknod", "hooks/x", {}),
        ("rename", "x", {"from_type": "dir"}),  # a folder holding a link refs/... renamed in
        ("rename", "my_head", {"from_type": "link"}),
        ("rename_from", "my_head", {"from_type": "exchange"}),  # RENAME_EXCHANGE with a link
        ("link", "rebase-merge/onto", {"from_type": "link"}),  # a hard link of a link
        ("rename", "COMMIT_EDITMSG", {}),  # the source's type unknown
        ("open", "config", {}),
    ],
)
def test_a_name_made_in_the_task_git_directory_by_a_program_is_a_finding(
    task: dict[str, Any], call: str, name: str, extra: dict[str, Any]
) -> None:
    """(A, D, I, O of the red team of a6240c4/8fc3cad) a link, an index, a file of the store's
    layout, a commit graph written without git: ``git_forged``."""
    gd = Path(task["path"])
    (finding,) = judge_git_reads([_write(call, gd / name, **extra)], [task])
    assert finding["rule"] == "git_forged" and name in finding["change"], finding


def test_a_write_outside_the_task_git_directories_is_no_finding(
    task: dict[str, Any], tmp_path: Path
) -> None:
    """A repository of the candidate's own (its ``.git`` written by anything) and the task's
    work tree are not the task's git directory."""
    gd = Path(task["path"])
    rows = [
        _write("symlink", tmp_path / "own" / ".git" / "my_head", link="refs/heads/x"),
        _write("open", tmp_path / "own" / ".git" / "index"),
        _write("open", gd.parent / "a.txt"),
        _write("open", str(gd) + "x/index"),
    ]
    assert judge_git_reads(rows, [task]) == []


def test_a_write_followed_or_unresolved_into_the_task_git_directory_is_a_finding(
    task: dict[str, Any], tmp_path: Path
) -> None:
    """An open through a link of the phase's own (its walk followed into the task's objects),
    and a name the tracer could not walk whose path names the task's git directory."""
    gd = Path(task["path"])
    followed = _write("open", tmp_path / "l", followed=str(gd / "objects" / "info" / "x"))
    (finding,) = judge_git_reads([followed], [task])
    assert "objects/info/x" in finding["change"]
    unresolved = {**_write("open", gd / "index"), "unresolved": True}
    del unresolved["resolved"]
    (finding,) = judge_git_reads([unresolved], [task])
    assert "index" in finding["change"]


def test_git_index_file_outside_the_task_git_directory_is_a_finding(task: dict[str, Any]) -> None:
    """(D) GIT_INDEX_FILE in git's environment: an index in the task's git directory (git's own,
    git's temporary ones) is quiet, one of the phase's own is a finding when git read the task's
    objects."""
    rows = _over_objects(task)
    for value in (f"{task['path']}/index", f"{task['path']}/index.stash.12"):
        rows[0] = {**rows[0], "git_env": [f"GIT_INDEX_FILE={value}"]}
        assert judge_git_reads(rows, [task]) == []
    rows[0] = {**rows[0], "git_env": ["GIT_INDEX_FILE=/tmp/idx"]}
    (finding,) = judge_git_reads(rows, [task])
    assert finding["rule"] == "git_forged" and "GIT_INDEX_FILE=/tmp/idx" in finding["change"]
    rows[0] = {**rows[0], "git_env": ["GIT_INDEX_FILE=idx"], "cwd": "/tmp"}
    (finding,) = judge_git_reads(rows, [task])
    assert "/tmp/idx" in finding["path"]
    assert judge_git_reads(rows[:1], [task]) == []  # no task objects read


#: (no attack) a candidate's own history work in the task's linked worktree, its editors
#: programs that are not git (sed -i: a temporary file beside the one it edits, renamed over it)
_EDITORS = """\
env = dict(who, GIT_EDITOR="sed -i 1s/^/edited/", GIT_SEQUENCE_EDITOR="sed -i 1s/^pick/pick/")
codes = []
def g(*args):
    out = subprocess.run(["git", *args], cwd="/tmp/w", env=env, capture_output=True, text=True)
    print("git", args[0], out.returncode, out.stderr.replace("\\n", " ")[:200])
    codes.append(out.returncode)
    return out
put("/tmp/w/a.txt", "mine\\n")
g("commit", "-q", "-a")
put("/tmp/w/b.txt", "more\\n")
g("add", "b.txt")
g("commit", "-q")
g("rebase", "-q", "-i", "HEAD~1")
g("commit", "-q", "--amend")
g("status", "--short")
print("attack", "none", g("log", "--format=%s", "-2").stdout.replace("\\n", "|"))
print("gits", len(codes), all(c == 0 for c in codes))
done()
"""


@pytest.mark.heavy
def test_history_work_with_editors_in_the_task_worktree_stays_quiet(
    tmp_path: Path, seccomp: None
) -> None:
    """The real tracer: commits with core.editor and a rebase -i with GIT_SEQUENCE_EDITOR="sed -i
    ..." in the task's linked worktree write COMMIT_EDITMSG and rebase-merge/git-rebase-todo with
    sed (not git, through a temporary file renamed over them): rowed, no ``git_forged``."""
    from test_redteam_trace_beside_redteam import _PRELUDE, _ran
    from test_redteam_trace_deputy import _run
    from test_redteam_trace_pin_git_redteam import _future

    proc, audit = _run(tmp_path, _PRELUDE + _EDITORS, _future)
    lines = _ran(proc)
    assert lines.get("gits", "").endswith("True"), proc.stdout[-2000:]
    assert lines["attack"].count("edited") >= 3, proc.stdout[-2000:]  # the editors ran
    # sed's writes were rowed (gitwrite) and judged as the text files they are
    trace = (tmp_path / "evidence" / "exec_trace.jsonl").read_text()
    for name in ("COMMIT_EDITMSG", "rebase-merge/git-rebase-todo"):
        assert '"gitwrite"' in trace and f"/{name}" in trace, name
    # (work committed in the task's worktree moves its HEAD: older rules' findings, not this one's)
    forged = [h.command for v in audit.verdicts for h in v.hits if "git_forged" in h.command]
    assert not forged, forged
