"""A task repository opened so that its own files cannot make git lie, and its object store.

Every git subprocess runs without replace objects, grafts, the commit-graph and bitmaps, hooks or
fsmonitor, and with no lazy fetch (:func:`run_git`); :func:`open_repo` opens exactly the
repository at a path. :func:`scan_object_store` lists every object (``git cat-file
--batch-all-objects``) and what the base reaches (``git rev-list --objects``), and classifies the
commits beyond it (:class:`FutureCommit`).
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pygit2
from pygit2.enums import Option, RepositoryOpenFlag

from evotree.harness.audit.errors import AuditInputError

__all__ = [
    "FULL_HASH",
    "GIT",
    "SAMPLE",
    "ZERO_ID",
    "FutureCommit",
    "ObjectScan",
    "OpenRepo",
    "all_objects",
    "allow_read_extensions",
    "git_env",
    "head_branch",
    "open_repo",
    "resolve_commit",
    "rev_list_objects",
    "run_git",
    "scan_object_store",
]

ZERO_ID = "0" * 40
FULL_HASH = re.compile(r"\b[0-9a-f]{40}\b")
#: How many commits / refs / paths a finding's evidence lists (the counts are always complete).
SAMPLE = 20
#: git, without the shortcuts a repository's own files could make lie: replace refs, the
#: commit-graph (parents) and reachability bitmaps (which objects a walk reaches); and without
#: the programs its config could make git run in the auditor's process (hooks, fsmonitor).
GIT = (
    "git",
    "--no-replace-objects",
    "-c",
    "core.commitGraph=false",
    "-c",
    "pack.useBitmaps=false",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
)
#: Git environment variables that would point a subprocess at another repository or history view.
GIT_ENV_DROP = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_REPLACE_REF_BASE",
    "GIT_SHALLOW_FILE",
    "GIT_QUARANTINE_PATH",
    "GIT_CEILING_DIRECTORIES",
)


@dataclass
class FutureCommit:
    """A commit in the object store that the base cannot reach.

    ``kind``: ``descendant`` (base is its ancestor: a later state of the task), ``newer``
    (unrelated history committed after base) or ``older`` (unrelated, committed before base).
    ``refs``: the non-allowed refs that point at it ([] when only the object store holds it).
    """

    id: str
    kind: str
    time: int
    summary: str
    refs: list[str] = field(default_factory=list)


@dataclass
class ObjectScan:
    """What the object store holds beyond the base (:func:`scan_object_store`)."""

    path: str
    base: str
    objects: int
    reachable: int
    beyond: dict[str, int]
    dangling: dict[str, int]
    descendants: int
    newer: int
    older: int
    future_commits: list[FutureCommit]
    seconds: float
    #: every commit beyond the reachable set -> its FutureCommit (not serialized; for the audit)
    commits: dict[str, FutureCommit] = field(default_factory=dict, repr=False)
    #: ids of objects beyond base that no ref, reflog or index entry reaches (not serialized)
    dangling_ids: set[str] = field(default_factory=set, repr=False)

    @property
    def beyond_total(self) -> int:
        """Objects not reachable from the base (and the allowed refs)."""
        return sum(self.beyond.values())

    def to_dict(self) -> dict[str, Any]:
        """JSON form: counts, and at most :data:`SAMPLE` future commits (newest first)."""
        return {
            "path": self.path,
            "base": self.base,
            "objects": self.objects,
            "reachable": self.reachable,
            "beyond": dict(self.beyond),
            "dangling": dict(self.dangling),
            "descendants": self.descendants,
            "newer": self.newer,
            "older": self.older,
            "future_commits": [asdict(c) for c in self.future_commits[:SAMPLE]],
            "seconds": round(self.seconds, 3),
        }


# ---------------------------------------------------------------------------- opening
@dataclass
class OpenRepo:
    """A repository opened by :func:`open_repo`."""

    repo: pygit2.Repository
    path: Path  # what the caller passed, resolved
    gitdir: Path  # the (worktree's) git directory
    commondir: Path  # the shared git directory (== gitdir unless a linked worktree)


#: Repository extensions the audit reads through: ``partialclone`` marks a partial clone whose
#: promisor packs are ordinary packs in the store (libgit2 refuses to open it otherwise). libgit2
#: never fetches a missing object and git runs with ``GIT_NO_LAZY_FETCH``, so an object only on
#: the promisor remote is simply absent; any other unknown extension still refuses the open.
READ_EXTENSIONS = ("partialclone",)


def allow_read_extensions() -> None:
    """Let libgit2 open repositories that declare one of :data:`READ_EXTENSIONS`."""
    known = set(pygit2.option(Option.GET_EXTENSIONS))
    missing = [name for name in READ_EXTENSIONS if name not in known]
    if missing:
        pygit2.option(Option.SET_EXTENSIONS, missing, len(missing))


def open_repo(path: str | os.PathLike[str]) -> OpenRepo:
    """Open exactly the repository at ``path`` (no search upwards: a subdirectory is refused).

    A partial clone opens (:data:`READ_EXTENSIONS`); a repository that declares any other
    extension libgit2 does not know, or that is not a repository, is refused."""
    target = Path(path).expanduser()
    if not target.exists():
        raise AuditInputError(f"{target} does not exist", fix="pass the path of a git repository")
    target = target.resolve()
    allow_read_extensions()
    try:
        repo = pygit2.Repository(str(target), RepositoryOpenFlag.NO_SEARCH)
    except (pygit2.GitError, KeyError) as exc:
        raise AuditInputError(
            f"{target} is not a git repository (its root or git directory): {exc}",
            fix="pass the repository's top-level directory, or a bare repository",
        ) from None
    gitdir = Path(repo.path).resolve()
    commondir = gitdir
    common_file = gitdir / "commondir"
    if common_file.is_file():
        common = Path(common_file.read_text().strip())
        commondir = (common if common.is_absolute() else gitdir / common).resolve()
    return OpenRepo(repo, target, gitdir, commondir)


def git_env(gitdir: Path) -> dict[str, str]:
    """The environment of a git subprocess on ``gitdir`` alone (module doc)."""
    env = {k: v for k, v in os.environ.items() if k not in GIT_ENV_DROP}
    env.update(
        GIT_DIR=str(gitdir),
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_NO_LAZY_FETCH="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_GRAFT_FILE=str(gitdir / "evotree-no-grafts-file"),
        LC_ALL="C",
    )
    return env


def run_git(
    gitdir: Path,
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> bytes:
    """Run git on ``gitdir`` only; :class:`AuditInputError` with git's message on failure."""
    env = git_env(gitdir)
    if extra_env:
        env.update(extra_env)
    proc = subprocess.run(
        [*GIT, *args], input=stdin, capture_output=True, env=env, cwd=cwd or gitdir, check=False
    )
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise AuditInputError(
            f"git {args[0]} failed on {gitdir}: {message[-1] if message else proc.returncode}",
            fix="check that the repository is readable and not corrupt (git fsck)",
        )
    return proc.stdout


def resolve_commit(r: OpenRepo, rev: str | None) -> pygit2.Commit:
    """The commit ``rev`` names (default HEAD); a clear error when it names none."""
    name = rev or "HEAD"
    try:
        obj = r.repo.revparse_single(name)
        commit = obj.peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        if rev is None and r.repo.head_is_unborn:
            raise AuditInputError(
                f"{r.path} has no commits: there is no base to audit against",
                fix="commit the task's base first, or pass --base",
            ) from None
        raise AuditInputError(
            f"base {name!r} does not name a commit in {r.path}: {exc}",
            fix="pass --base with a commit, branch or tag of this repository",
        ) from None
    return commit


# ---------------------------------------------------------------------------- object store
def all_objects(gitdir: Path) -> dict[bytes, bytes]:
    """Every object in the store (loose, packed, alternates): hex id -> type, both as bytes."""
    parts = run_git(
        gitdir,
        "cat-file",
        "--batch-all-objects",
        "--unordered",
        "--batch-check=%(objectname) %(objecttype)",
    ).split()
    return dict(zip(parts[0::2], parts[1::2]))


def rev_list_objects(
    gitdir: Path, include: Iterable[str], *, exclude: Iterable[str] = (), extra: Sequence[str] = ()
) -> set[bytes]:
    """Ids of the objects reachable from ``include`` (and ``extra`` options), minus
    ``exclude``'s."""
    lines = [*include, *(f"^{x}" for x in exclude)]
    if not lines and not extra:
        return set()
    out = run_git(
        gitdir,
        "rev-list",
        "--objects",
        "--no-object-names",
        "--missing=allow-any",
        *extra,
        "--stdin",
        stdin=("\n".join(lines) + "\n").encode(),
    )
    return set(out.split())


def scan_object_store(
    path: str | os.PathLike[str], base: str | None = None, *, also_reachable: Sequence[str] = ()
) -> ObjectScan:
    """Find every object in ``path``'s object store that ``base`` (default HEAD) cannot reach.

    ``also_reachable``: commits whose history counts as reachable too (the allowed refs).
    The objects beyond base are counted by type; each commit among them is classified
    (descendant of base / newer / older than base) and those that no ref, reflog or index
    entry reaches are counted as ``dangling`` (only the object store still holds them).
    Listing the store and walking base's history run at the same time (two git processes).
    """
    started = time.perf_counter()
    r = open_repo(path)
    base_commit = resolve_commit(r, base)
    base_id = str(base_commit.id)
    roots = [base_id, *(str(x) for x in also_reachable)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        listing = pool.submit(all_objects, r.gitdir)
        walk = pool.submit(rev_list_objects, r.gitdir, roots)
        objects, reachable = listing.result(), walk.result()
    beyond_raw = objects.keys() - reachable
    dangling_raw: set[bytes] = set()
    if beyond_raw:
        # what refs (all of them, worktrees' HEADs included), reflogs and the index still reach
        referenced = rev_list_objects(
            r.gitdir, [], exclude=roots, extra=["--all", "--reflog", "--indexed-objects"]
        )
        dangling_raw = beyond_raw - referenced
    beyond = {k.decode(): n for k, n in Counter(map(objects.__getitem__, beyond_raw)).items()}
    dangling = {k.decode(): n for k, n in Counter(map(objects.__getitem__, dangling_raw)).items()}
    commit_ids = [oid.decode() for oid in beyond_raw if objects[oid] == b"commit"]
    commits = _classify(r.gitdir, commit_ids, base_commit)
    ordered = sorted(commits.values(), key=lambda c: (-c.time, c.id))
    counts = Counter(c.kind for c in ordered)
    return ObjectScan(
        path=str(r.path),
        base=base_id,
        objects=len(objects),
        reachable=len(objects) - len(beyond_raw),
        beyond=beyond,
        dangling=dangling,
        descendants=counts["descendant"],
        newer=counts["newer"],
        older=counts["older"],
        future_commits=ordered,
        seconds=time.perf_counter() - started,
        commits=commits,
        dangling_ids={oid.decode() for oid in dangling_raw},
    )


def _classify(gitdir: Path, ids: list[str], base: pygit2.Commit) -> dict[str, FutureCommit]:
    """Commits beyond base -> descendant / newer / older, in one pass over their parents.

    Parents, times and subjects come from one ``git rev-list --no-walk`` (plumbing: no
    ``log.*`` configuration of the audited repository applies).
    """
    if not ids:
        return {}
    base_id = str(base.id)
    base_time = base.commit_time
    out_raw = run_git(
        gitdir,
        "rev-list",
        "--no-walk=unsorted",
        "--no-commit-header",
        "--stdin",
        "--format=%H%x1f%P%x1f%ct%x1f%s%x1e",
        stdin=("\n".join(ids) + "\n").encode(),
    )
    info: dict[str, tuple[list[str], int, str]] = {}
    for record in out_raw.decode("utf-8", "replace").split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) != 4:
            continue
        oid, parents, when, subject = fields
        info[oid] = (parents.split(), int(when or 0), subject[:120])
    descendant: dict[str, bool] = {}
    # oldest first, so parents are usually decided before their children; an iterative
    # post-order walk covers clock skew (history chains are 100k commits deep: no recursion)
    for start in sorted(info, key=lambda o: info[o][1]):
        if start in descendant:
            continue
        stack = [start]
        while stack:
            oid = stack[-1]
            parents = info[oid][0]
            for p in parents:
                if p in info and p not in descendant:
                    stack.append(p)
                    break
            else:
                stack.pop()
                descendant[oid] = any(p == base_id or descendant.get(p, False) for p in parents)
    out: dict[str, FutureCommit] = {}
    for oid, (_, when, summary) in info.items():
        kind = "descendant" if descendant[oid] else ("newer" if when > base_time else "older")
        out[oid] = FutureCommit(id=oid, kind=kind, time=when, summary=summary)
    return out


def head_branch(repo: pygit2.Repository) -> str | None:
    """The ref HEAD names (``refs/heads/main``); None when HEAD is detached or absent."""
    try:
        ref = repo.lookup_reference("HEAD")
    except (KeyError, pygit2.GitError):
        return None
    target = ref.target
    return target if isinstance(target, str) else None
