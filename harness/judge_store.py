"""The judge store: hidden judge data on its own ref, never in a checkout.

``refs/evotree/judge`` points to a commit whose tree holds the judge's files (the paths of
``[eval].judge_paths``, e.g. ``judge/gym.toml``, ``judge/references.json``): validation and
held-out pools, reference answers, the judge's own settings. No worktree ever checks that ref
out, so neither the owner's checkout nor a candidate's worktree (a branch of the champion)
contains hidden data. The harness writes it only into a run's fresh judge directory, after the
train phase is dead: :func:`provide_judge_tree` exports the champion's commit *without* its judge
paths and overlays the judge commit the run's plan recorded.

Which judge commit is in force is the ledger's word (``meta["judge"]["commit"]``: set by
``evotree init``, ``evotree judge migrate`` and ``evotree judge promote``, signed by someone
other than who ran ``evotree judge propose``), never the
ref's: a ref moved by hand is not followed (``evotree verify`` reports it, and checks that the
ledger's judge is the end of the signed chain). A workspace whose ledger names no judge (made
before the store existed) keeps the judge in the champion's tree, as before.

Reading, listing and materialising refuse what an export would refuse: ``..``, absolute paths,
``.git``, symlinks and submodules, so a judge commit cannot write outside its directory.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pygit2

from evotree.core.errors import InvalidState
from evotree.core.gitio import Identity
from evotree.core.refs import JUDGE_REF
from evotree.core.workspace import Workspace, judge_path_problem, under_paths, write_judge_commit
from evotree.harness.export import UnsafeTree, check_tree, export_tree

__all__ = [
    "JUDGE_REF",
    "JudgeFile",
    "JudgeStoreError",
    "check_judge_commit",
    "judge_diff",
    "judge_files",
    "judge_in_force",
    "materialise_judge",
    "provide_judge_tree",
    "read_directory",
    "read_judge_file",
    "write_judge_commit",
    "write_judge_from_directory",
]

_MAX_FILE_BYTES = 2**30  # a judge file above 1 GiB is refused when read from a directory


class JudgeStoreError(InvalidState):
    """A judge commit or directory that cannot be used (a refused path, a symlink, a missing file)."""

    code = "judge_store"


@dataclass
class JudgeFile:
    """One file of a judge commit: its path, size and sha256 (never its content)."""

    path: str
    size: int
    sha256: str
    executable: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def judge_in_force(ws: Workspace) -> str | None:
    """The judge commit the ledger records as in force, or None (the judge lives in the champion's tree).

    The ref ``refs/evotree/judge`` is never read here: moving it by hand changes nothing. A verb that
    verified the signed chain pinned its judge (``ws.pinned_judge``, gates.trust.in_force): that one,
    not the ledger as a later fetch may have changed it.
    """
    pinned = getattr(ws, "pinned_judge", None)
    if isinstance(pinned, tuple) and len(pinned) == 1:
        return pinned[0]
    judge = ws.ledger.meta().get("judge")
    commit = judge.get("commit") if isinstance(judge, dict) else None
    return str(commit) if commit else None


def _entries(
    repo: pygit2.Repository, commit: str | pygit2.Oid
) -> list[tuple[str, pygit2.Oid, int]]:
    """Every file of the judge commit: (path, blob id, filemode); refuses what an export refuses.

    The walk and its rules are the export's (:func:`evotree.harness.export.check_tree`), plus the
    judge store's own path rule; no blob is read, so checking a large judge is cheap.
    """
    short = str(commit)[:10]
    fix = "write a new judge commit from a clean directory (evotree judge propose, then evotree judge promote)"
    try:
        entries = check_tree(repo, commit)
    except (KeyError, ValueError) as exc:
        raise JudgeStoreError(
            f"the judge commit {short} is not in this repository ({exc})",
            fix=f"fetch it: git fetch origin '{JUDGE_REF}:{JUDGE_REF}'",
        ) from None
    except UnsafeTree as exc:
        raise JudgeStoreError(
            f"the judge commit {short} holds {exc.details.get('path')!r}: {exc.details.get('rule')}; "
            "the judge store holds regular files only (no symlink or submodule)",
            fix=fix,
        ) from None
    found: list[tuple[str, pygit2.Oid, int]] = []
    for entry in entries:
        problem = judge_path_problem(entry.path)
        if problem:
            raise JudgeStoreError(
                f"the judge commit {short} holds {entry.path!r}: {problem}", fix=fix
            )
        if entry.mode != pygit2.GIT_FILEMODE_TREE:
            found.append((entry.path, entry.oid, entry.mode))
    return sorted(found, key=lambda item: item[0])


def judge_files(repo: pygit2.Repository, commit: str | pygit2.Oid) -> list[JudgeFile]:
    """The files of a judge commit with sizes and sha256, sorted by path."""
    files = []
    for rel, oid, mode in _entries(repo, commit):
        blob = repo[oid]
        files.append(
            JudgeFile(
                rel,
                blob.size,
                hashlib.sha256(blob.data).hexdigest(),
                mode == pygit2.GIT_FILEMODE_BLOB_EXECUTABLE,
            )
        )
    return files


def tree_judge_files(
    repo: pygit2.Repository, commit: str | pygit2.Oid, judge_paths: list[str]
) -> dict[str, tuple[bytes, int]]:
    """{path: (bytes, filemode)} of the files under ``judge_paths`` in ``commit``'s tree.

    The one walk of a version's judge files: the migration copies them into the judge store and
    verification compares a recorded migration with them. A link or submodule under the judge
    paths is refused (:class:`JudgeStoreError`): the judge store holds regular files only.
    """
    files: dict[str, tuple[bytes, int]] = {}
    stack = [(repo[commit].peel(pygit2.Tree), "")]
    while stack:
        tree, prefix = stack.pop()
        for entry in tree:
            rel = prefix + entry.name
            if entry.filemode == pygit2.GIT_FILEMODE_TREE:
                stack.append((repo[entry.id], rel + "/"))
            elif under_paths(rel, judge_paths):
                if entry.filemode not in (
                    pygit2.GIT_FILEMODE_BLOB,
                    pygit2.GIT_FILEMODE_BLOB_EXECUTABLE,
                ):
                    raise JudgeStoreError(
                        f"{rel} in the version's tree is a symlink or submodule; the judge store "
                        "holds regular files only",
                        fix=f"replace {rel} by a regular file on a new version and promote it first",
                    )
                files[rel] = (repo[entry.id].data, entry.filemode)
    return files


def check_judge_commit(repo: pygit2.Repository, commit: str | pygit2.Oid) -> int:
    """The number of files of a judge commit, after checking it exists and holds only safe paths
    and regular files (no blob is read); :class:`JudgeStoreError` otherwise."""
    return len(_entries(repo, commit))


def read_judge_file(repo: pygit2.Repository, commit: str | pygit2.Oid, path: str) -> bytes:
    """The content of one file of a judge commit."""
    wanted = path.strip()
    wanted = wanted[2:] if wanted.startswith("./") else wanted
    for rel, oid, _ in _entries(repo, commit):
        if rel == wanted:
            return bytes(repo[oid].data)
    names = [rel for rel, _, _ in _entries(repo, commit)]
    raise JudgeStoreError(
        f"the judge has no file {path!r} (it has: {', '.join(names) or 'nothing'})",
        fix="`evotree judge show` lists the files",
    )


def materialise_judge(repo: pygit2.Repository, commit: str | pygit2.Oid, target: Path) -> int:
    """Write the judge commit's files under ``target`` (created; regular files only); the number written.

    The judge store's rules are checked first (:func:`_entries`), then the commit is written by
    :func:`evotree.harness.export.export_tree`: every path checked before anything is written,
    files opened without following links, an existing file at a path replaced (an overlay on the
    champion's export), a link or a directory in the way refused.
    """
    _entries(repo, commit)
    try:
        return export_tree(repo, commit, target)
    except (UnsafeTree, IsADirectoryError) as exc:
        why = (
            exc.message
            if isinstance(exc, UnsafeTree)
            else f"a directory is in the way ({exc.filename})"
        )
        raise JudgeStoreError(
            f"cannot materialise the judge into {target}: {why} (a symlink or a directory "
            "is in the way)",
            fix="materialise the judge into a fresh directory",
        ) from None


def provide_judge_tree(
    repo: pygit2.Repository,
    champion_commit: str,
    judge_data_commit: str | None,
    judge_paths: list[str] | tuple[str, ...],
    target: Path,
) -> int:
    """The judge phase's directory: the champion's commit plus the judge store; the number of files.

    With a judge commit in force, the champion is exported *without* its judge paths (a copy
    still committed there, e.g. before ``evotree judge migrate``'s removal is promoted, never
    shadows the store) and the judge commit is overlaid. Without one (a workspace from before the
    store), the champion's whole tree, judge paths included, as before.
    """
    if judge_data_commit is None:
        return export_tree(repo, champion_commit, target)
    count = export_tree(repo, champion_commit, target, exclude=list(judge_paths))
    return count + materialise_judge(repo, judge_data_commit, target)


def read_directory(
    directory: Path, *, judge_paths: list[str] | tuple[str, ...] | None = None
) -> dict[str, tuple[bytes, int]]:
    """The judge files of a directory laid out like the repository (``DIR/judge/gym.toml``).

    Regular files only: a symlink, a device, a ``.git`` directory or a path outside
    ``judge_paths`` (when given) is refused with its path named; empty directories are ignored.
    """
    root = Path(directory)
    if not root.is_dir():
        raise JudgeStoreError(
            f"{root} is not a directory", fix="pass the directory `evotree judge export` wrote"
        )
    files: dict[str, tuple[bytes, int]] = {}
    for current, dirs, names in os.walk(root, followlinks=False):
        here = Path(current)
        for name in list(dirs):
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                raise JudgeStoreError(
                    f"{rel} in {root} is a symlink; the judge store holds regular files only",
                    fix=f"replace {rel} by the files themselves",
                )
            if name.lower() == ".git":
                raise JudgeStoreError(
                    f"{rel} in {root} is a .git directory; judge files only, please",
                    fix=f"remove {path}",
                )
        for name in names:
            path = here / name
            rel = path.relative_to(root).as_posix()
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                raise JudgeStoreError(
                    f"{rel} in {root} is a symlink or not a regular file; the judge store holds "
                    "regular files only",
                    fix=f"replace {rel} by a regular file or remove it",
                )
            problem = judge_path_problem(rel)
            if problem:
                raise JudgeStoreError(
                    f"{rel!r} cannot be a judge file: {problem}", fix="rename or remove it"
                )
            if judge_paths is not None and not under_paths(rel, judge_paths):
                raise JudgeStoreError(
                    f"{rel} in {root} is not under [eval].judge_paths ({', '.join(judge_paths)}): the judge store "
                    "holds the judge paths only, laid out as in the repository (e.g. DIR/judge/gym.toml)",
                    fix=f"move it under one of {', '.join(judge_paths)} or remove it",
                )
            if info.st_size > _MAX_FILE_BYTES:
                raise JudgeStoreError(
                    f"{rel} is {info.st_size / 2**30:.1f} GiB, over the 1 GiB limit of a judge file",
                    fix="keep large hidden data outside git and let the judge fetch it",
                )
            mode = (
                pygit2.GIT_FILEMODE_BLOB_EXECUTABLE
                if info.st_mode & 0o100
                else pygit2.GIT_FILEMODE_BLOB
            )
            files[rel] = (path.read_bytes(), mode)
    if not files:
        raise JudgeStoreError(
            f"{root} holds no judge files", fix="`evotree judge export DIR` writes the current ones"
        )
    return files


def write_judge_from_directory(
    ws: Workspace,
    directory: Path,
    *,
    parent: str | None,
    message: str,
    identity: Identity | None = None,
) -> str:
    """A new judge commit (no ref moved) from ``directory``'s files under the champion's judge paths."""
    files = read_directory(directory, judge_paths=list(ws.config.eval.judge_paths))
    oid = write_judge_commit(
        ws.git,
        files,
        parent=ws.git.repo[parent].id if parent else None,
        message=message,
        identity=identity or ws.git.identity(),
    )
    return str(oid)


def judge_diff(repo: pygit2.Repository, previous: str | None, commit: str) -> dict[str, Any]:
    """What changes from judge commit ``previous`` (None: none yet) to ``commit``: names and sha256 only.

    ``{"commit", "previous_commit", "files": [{"path", "status", "size", "sha256",
    "previous_sha256"}]}``, status one of added / changed / removed / unchanged, sorted by path.
    Its canonical JSON's sha256 is what a judge promotion signs.
    """
    new = {f.path: f for f in judge_files(repo, commit)}
    old = {f.path: f for f in judge_files(repo, previous)} if previous else {}
    rows = []
    for path in sorted(set(new) | set(old)):
        n, o = new.get(path), old.get(path)
        status = (
            "added"
            if o is None
            else "removed"
            if n is None
            else "unchanged"
            if n.sha256 == o.sha256 and n.executable == o.executable
            else "changed"
        )
        rows.append(
            {
                "path": path,
                "status": status,
                "size": n.size if n else None,
                "sha256": n.sha256 if n else None,
                "previous_sha256": o.sha256 if o else None,
            }
        )
    return {
        "commit": str(commit),
        "previous_commit": str(previous) if previous else None,
        "files": rows,
    }
