"""Exporting a commit into a run directory: trees built with git plumbing.

`git add` never writes a tree entry named `..`, `.git` or `a/b`, but `git mktree`,
`hash-object --literally` or a raw object write do. Before the hardening, such a commit made
`export_tree` write outside the run directory (or a `.git` with hooks inside it, or a symlink
to anywhere). Each attack below is refused with `UnsafeTree` naming the entry and the rule, and
nothing at all is written: the whole tree is checked before the first file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from conftest import commit_file, git, make_repo
from evotree.harness.export import UnsafeTree, check_tree, export_tree

BLOB, EXEC, TREE = "100644", "100755", "040000"


@pytest.fixture
def repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    """The repository lives outside ``tmp_path``: each test checks nothing at all appears there."""
    return pygit2.Repository(str(make_repo(tmp_path_factory.mktemp("repo") / "r")))


def raw_tree(
    repo: pygit2.Repository, entries: list[tuple[str, bytes, pygit2.Oid | str]]
) -> pygit2.Oid:
    """A tree object written byte by byte (no name or mode checks): what plumbing can build."""
    data = b"".join(
        f"{mode} ".encode() + name + b"\0" + bytes.fromhex(str(oid)) for mode, name, oid in entries
    )
    return repo.odb.write(pygit2.GIT_OBJECT_TREE, data)


def commit_of(repo: pygit2.Repository, tree: pygit2.Oid) -> pygit2.Oid:
    sig = pygit2.Signature("Mallory", "mallory@example.com")
    return repo.create_commit(None, sig, sig, "crafted", tree, [])


def nested(
    repo: pygit2.Repository, path: list[bytes], leaf: tuple[str, pygit2.Oid | str]
) -> pygit2.Oid:
    """A tree holding ``path[0]/path[1]/.../path[-1]`` as ``leaf`` (mode, oid), built raw."""
    mode, oid = leaf
    tree = raw_tree(repo, [(mode, path[-1], oid)])
    for name in reversed(path[:-1]):
        tree = raw_tree(repo, [(TREE, name, tree)])
    return tree


def everything_under(path: Path) -> list[str]:
    return sorted(p.relative_to(path).as_posix() for p in path.rglob("*")) if path.exists() else []


def test_ordinary_tree_exports_files_modes_and_exclusions(
    repo: pygit2.Repository, tmp_path: Path
) -> None:
    blob = repo.create_blob(b"print('hi')\n")
    script = repo.create_blob(b"#!/bin/sh\necho hi\n")
    sub = raw_tree(repo, [(BLOB, b"deep.txt", blob)])
    judge = raw_tree(repo, [(BLOB, b"hidden.json", blob)])
    tree = raw_tree(
        repo,
        [
            (BLOB, b"a.py", blob),
            (TREE, b"judge", judge),
            (EXEC, b"run.sh", script),
            (TREE, b"sub", sub),
        ],
    )
    target = tmp_path / "out"
    assert export_tree(repo, commit_of(repo, tree), target, exclude=["judge/"]) == 3
    assert everything_under(target) == ["a.py", "run.sh", "sub", "sub/deep.txt"]
    assert (
        os.stat(target / "run.sh").st_mode & 0o111 and not os.stat(target / "a.py").st_mode & 0o111
    )
    assert (target / "sub" / "deep.txt").read_bytes() == b"print('hi')\n"


@pytest.mark.parametrize(
    "name,rule",
    [
        (b"..", "is named '..'"),
        (b".", "is named '.'"),
        (b"x/../../escaped", "containing '/'"),
        (b".git", "is named .git"),
        (b".GIT", "is named .git"),
        (b".git.", "is named .git"),
        (b"\xff\xfe", "not valid UTF-8"),
    ],
)
def test_unsafe_names_at_the_top_are_refused(
    repo: pygit2.Repository, tmp_path: Path, name: bytes, rule: str
) -> None:
    blob = repo.create_blob(b"pwned\n")
    # a directory of that name holding a file: with '..' the file would land beside the target
    inner = raw_tree(repo, [(BLOB, b"escaped.txt", blob)])
    tree = raw_tree(repo, [(BLOB, b"a.py", blob), (TREE, name, inner)])
    target = tmp_path / "run" / "candidate"
    with pytest.raises(UnsafeTree, match=rule) as info:
        export_tree(repo, commit_of(repo, tree), target)
    assert info.value.code == "unsafe_tree" and info.value.exit_code == 10 and info.value.fix
    assert info.value.details["rule"] and info.value.details["path"]
    assert everything_under(tmp_path) == []  # nothing written, not even the target or a.py


def test_an_absolute_name_is_refused(repo: pygit2.Repository, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    tree = raw_tree(repo, [(BLOB, str(outside).encode(), repo.create_blob(b"pwned\n"))])
    with pytest.raises(UnsafeTree, match="containing '/'"):
        export_tree(repo, commit_of(repo, tree), tmp_path / "run")
    assert not outside.exists() and not (tmp_path / "run").exists()


def test_git_directory_at_any_depth_is_refused(repo: pygit2.Repository, tmp_path: Path) -> None:
    hook = repo.create_blob(b"#!/bin/sh\ntouch /tmp/pwned\n")
    tree = nested(repo, [b"sub", b".git", b"hooks", b"post-checkout"], (EXEC, hook))
    with pytest.raises(UnsafeTree, match=r"'sub/\.git' is named \.git"):
        export_tree(repo, commit_of(repo, tree), tmp_path / "run")
    assert everything_under(tmp_path) == []


def test_dot_dot_deep_in_the_tree_is_refused_before_anything_is_written(
    repo: pygit2.Repository, tmp_path: Path
) -> None:
    """`ok/../../../escaped.txt`: the bad entry comes late; not even the earlier files are written."""
    blob = repo.create_blob(b"pwned\n")
    ok = nested(repo, [b"..", b"..", b"..", b"escaped.txt"], (BLOB, blob))
    tree = raw_tree(repo, [(BLOB, b"aaa.py", blob), (TREE, b"ok", ok)])
    target = tmp_path / "a" / "b" / "run"
    with pytest.raises(UnsafeTree, match=r"'ok/\.\.' is named '\.\.'"):
        export_tree(repo, commit_of(repo, tree), target)
    assert everything_under(tmp_path) == []


def test_symlinks_are_refused_wherever_they_point(repo: pygit2.Repository, tmp_path: Path) -> None:
    for target_text in ("/etc/passwd", "../../../outside", "inside.txt"):
        link = repo.create_blob(target_text.encode())
        tree = raw_tree(
            repo, [(BLOB, b"inside.txt", repo.create_blob(b"x")), ("120000", b"peek", link)]
        )
        with pytest.raises(UnsafeTree, match=r"'peek' is a symlink \(120000\)"):
            export_tree(repo, commit_of(repo, tree), tmp_path / "run")
        assert everything_under(tmp_path) == []


def test_a_committed_symlink_from_git_add_is_refused_too(tmp_path: Path) -> None:
    path = make_repo(tmp_path / "r")
    tmp_path = tmp_path / "out"
    os.symlink("/etc/hostname", path / "host")
    git(path, "add", "host")
    git(path, "commit", "-qm", "a link")
    repo = pygit2.Repository(str(path))
    with pytest.raises(UnsafeTree, match="'host' is a symlink") as info:
        export_tree(repo, repo.head.target, tmp_path / "run")
    assert "git rm --cached host" in info.value.fix
    assert not (tmp_path / "run").exists()


def test_submodules_are_refused_not_skipped(repo: pygit2.Repository, tmp_path: Path) -> None:
    gitlink = "1" * 40  # a commit of another repository: not in this one
    tree = raw_tree(repo, [(BLOB, b"a.py", repo.create_blob(b"x")), ("160000", b"vendor", gitlink)])
    with pytest.raises(UnsafeTree, match=r"'vendor' is a submodule \(160000\)"):
        export_tree(repo, commit_of(repo, tree), tmp_path / "run")
    assert everything_under(tmp_path) == []


def test_other_modes_duplicates_and_mismatched_objects_are_refused(
    repo: pygit2.Repository, tmp_path: Path
) -> None:
    blob = repo.create_blob(b"x")
    sub = raw_tree(repo, [(BLOB, b"f", blob)])
    cases = {
        "appears twice": raw_tree(repo, [(BLOB, b"a", blob), (BLOB, b"a", blob)]),
        "a file and a dir of one name": raw_tree(repo, [(BLOB, b"a", blob), (TREE, b"a", sub)]),
        "mode says blob": raw_tree(repo, [(BLOB, b"a", sub)]),
        "mode says tree": raw_tree(repo, [(TREE, b"a", blob)]),
    }
    for label, tree in cases.items():
        with pytest.raises(UnsafeTree):
            export_tree(repo, commit_of(repo, tree), tmp_path / "run")
        assert everything_under(tmp_path) == [], label


def test_check_tree_lists_what_would_be_written(repo: pygit2.Repository) -> None:
    blob = repo.create_blob(b"x")
    judge = raw_tree(repo, [("120000", b"inside-the-judge-is-not-descended", blob)])
    tree = raw_tree(repo, [(BLOB, b"a", blob), (TREE, b"judge", judge)])
    entries = check_tree(repo, commit_of(repo, tree), exclude=["judge/"])
    assert [e.path for e in entries] == ["a"]


def test_a_link_already_in_the_target_is_not_followed(
    repo: pygit2.Repository, tmp_path: Path
) -> None:
    """Exporting into a directory that already holds a link (never done by evotree, which
    exports into fresh directories): the file is not written through the link."""
    blob = repo.create_blob(b"pwned\n")
    tree = raw_tree(
        repo, [(TREE, b"sub", raw_tree(repo, [(BLOB, b"f.txt", blob)])), (BLOB, b"top.txt", blob)]
    )
    target, outside = tmp_path / "run", tmp_path / "outside"
    target.mkdir()
    outside.mkdir()
    os.symlink(outside, target / "sub")
    with pytest.raises(UnsafeTree, match="link"):
        export_tree(repo, commit_of(repo, tree), target)
    assert everything_under(outside) == []
    os.unlink(target / "sub")
    os.symlink(outside / "top.txt", target / "top.txt")
    with pytest.raises(UnsafeTree, match="link"):
        export_tree(repo, commit_of(repo, tree), target)
    assert not (outside / "top.txt").exists()


def test_a_run_of_a_crafted_commit_fails_and_writes_nothing_outside(tmp_path: Path) -> None:
    """End to end: a version whose branch points at a commit with `../../../escaped.txt`."""
    from test_runs import make_run_repo

    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace
    from evotree.gates.runs import run_versions

    root = make_run_repo(tmp_path / "w")
    ws = Workspace.open(root)
    rec = create_version(ws, hypothesis="escape")
    commit_file(root / rec.worktree, "recipe.toml", "skill = 0.5\nsteps = 1\n", "recipe")
    repo = ws.git.repo
    tip = repo.revparse_single(f"evotree/{rec.id}").peel(pygit2.Commit)
    payload = repo.create_blob(b"pwned\n")
    # candidate/<..>/<..>/<..>/escaped.txt is <workspace>/.evotree/escaped.txt
    escape = nested(repo, [b"..", b"..", b"escaped.txt"], (BLOB, payload))
    tree = raw_tree(
        repo,
        [(f"{e.filemode:o}", e.name.encode(), e.id) for e in tip.tree] + [(TREE, b"..", escape)],
    )
    sig = pygit2.Signature("Mallory", "mallory@example.com")
    crafted = repo.create_commit(None, sig, sig, "crafted", tree, [tip.id])
    git(root, "worktree", "remove", "--force", str(root / rec.worktree))
    git(root, "update-ref", f"refs/heads/evotree/{rec.id}", str(crafted))
    (record,) = run_versions(Workspace.open(root), [rec.id])
    assert record.status == "failed" and "UnsafeTree" in record.error and "'..'" in record.error
    assert not any(p.name == "escaped.txt" for p in tmp_path.rglob("escaped.txt"))
    candidate = root / ".evotree" / "runs" / record.run_id / "candidate"
    assert everything_under(candidate) == []
