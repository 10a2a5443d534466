"""Repository hygiene: can a rollout handed this repository reach the future?

In EvoTrainer a version scored 48.80 because the policy read reference patches with ``git show``
/ ``git log`` in an uncleaned task repository (31.04 after cleanup); SWE-bench Verified/Pro and
mini-swe-agent runs had the same leak. Everything that makes commits *after* the task's base
reachable is reported here as an ``audit`` finding:

* refs beyond the allowed set (branches, tags after base, remote-tracking refs, ``refs/stash``,
  ``refs/notes/*``, ``refs/replace/*``, ``refs/original/*``, linked worktrees' HEADs);
* remotes (a URL to fetch the future from), alternates (another object store), grafts;
* reflog entries, ``ORIG_HEAD`` / ``FETCH_HEAD`` / ``MERGE_HEAD`` ..., in-progress rebase or
  sequencer state, submodule repositories, packs without an index;
* files in the checkout that HEAD does not have (an untracked ``fix.patch``), ignored files;
* the object store itself (:func:`scan_object_store`): every object, loose, packed or borrowed
  from an alternate, that is not reachable from the base (and the allowed refs). SWE-bench's
  fix deleted refs but left such objects in the packs, where ``git cat-file --batch-all-objects``
  or ``git fsck --lost-found`` still find the reference solution.

:func:`sanitize_repository` writes a fresh repository holding history up to the base only (a pack
of the objects reachable from base, one branch, no tags, remotes, reflogs or stray files) and
audits the result. The source repository is only read, never changed.

Object-level work: ``git cat-file --batch-all-objects`` enumerates the object store and
``git rev-list --objects`` computes reachability (both in C, 100k commits in a few seconds; a
Python walk over trees would be far slower); pygit2 reads refs, reflogs, remotes and config.
Every git subprocess runs with replace objects, grafts, the commit-graph and bitmaps disabled
(the repository's own files could otherwise hide history from the scan) and with no lazy fetch
(a partial clone must not reach the network).
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pygit2
from pygit2.enums import FileStatus, ObjectType, RepositoryOpenFlag

from evotree.core.findings import Finding, Severity, sort_findings
from evotree.harness.audit.errors import AuditInputError

__all__ = [
    "FutureCommit",
    "ObjectScan",
    "RepoAudit",
    "SanitizeResult",
    "audit_repository",
    "inspect_repository",
    "sanitize_repository",
    "scan_object_store",
]

_ZERO = "0" * 40
_HEX = re.compile(r"\b[0-9a-f]{40}\b")
#: How many commits / refs / paths a finding's evidence lists (the counts are always complete).
SAMPLE = 20
#: Files in a git directory left by an operation; each names commits (or a URL) the audit checks.
SPECIAL_HEADS = (
    "ORIG_HEAD",
    "FETCH_HEAD",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "BISECT_HEAD",
    "REBASE_HEAD",
    "AUTO_MERGE",
)
#: In-progress operations and side stores inside a git directory that may hold other history.
STRAY_STATE = (
    "rebase-merge",
    "rebase-apply",
    "sequencer",
    "BISECT_LOG",
    "BISECT_START",
    "MERGE_MSG",
    "SQUASH_MSG",
    "modules",
    "lfs/objects",
    "patches",
)
#: git, without the shortcuts a repository's own files could make lie: replace refs, the
#: commit-graph (parents) and reachability bitmaps (which objects a walk reaches); and without
#: the programs its config could make git run in the auditor's process (hooks, fsmonitor).
_GIT = (
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
_GIT_ENV_DROP = (
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


# ---------------------------------------------------------------------------- results
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


@dataclass
class RepoAudit:
    """The audit of one repository: ``passed`` is False when a finding is high or worse."""

    path: str
    base: str
    allowed_refs: list[str]
    passed: bool
    findings: list[Finding]
    scan: ObjectScan
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """The ``audit-repo`` JSON form (``evotree schema audit-repo``)."""
        return {
            "v": 1,
            "kind": "repo",
            "path": self.path,
            "base": self.base,
            "allowed_refs": list(self.allowed_refs),
            "passed": self.passed,
            "worst": _worst(self.findings),
            "findings": [f.to_dict() for f in self.findings],
            "scan": self.scan.to_dict(),
            "seconds": round(self.seconds, 3),
        }


@dataclass
class SanitizeResult:
    """A clean copy of a repository with history up to base only, and its audit."""

    source: str
    out: str
    base: str
    branch: str
    bare: bool
    commits: int
    objects: int
    removed_objects: int
    audit: RepoAudit
    seconds: float

    @property
    def passed(self) -> bool:
        """The clean copy passed its own audit and its HEAD is the base."""
        return self.audit.passed and self.audit.base == self.base

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "out": self.out,
            "base": self.base,
            "branch": self.branch,
            "bare": self.bare,
            "commits": self.commits,
            "objects": self.objects,
            "removed_objects": self.removed_objects,
            "passed": self.passed,
            "audit": self.audit.to_dict(),
            "seconds": round(self.seconds, 3),
        }


def _worst(findings: Sequence[Finding]) -> str | None:
    return max((f.rank for f in findings), default=None).label if findings else None


# ---------------------------------------------------------------------------- opening
@dataclass
class _Repo:
    repo: pygit2.Repository
    path: Path  # what the caller passed, resolved
    gitdir: Path  # the (worktree's) git directory
    commondir: Path  # the shared git directory (== gitdir unless a linked worktree)


def _open(path: str | os.PathLike[str]) -> _Repo:
    """Open exactly the repository at ``path`` (no search upwards: a subdirectory is refused)."""
    target = Path(path).expanduser()
    if not target.exists():
        raise AuditInputError(f"{target} does not exist", fix="pass the path of a git repository")
    target = target.resolve()
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
    return _Repo(repo, target, gitdir, commondir)


def _git_env(gitdir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env.update(
        GIT_DIR=str(gitdir),
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_NO_LAZY_FETCH="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_GRAFT_FILE=str(gitdir / "evotree-no-grafts-file"),
        LC_ALL="C",
    )
    return env


def _git(
    gitdir: Path,
    *args: str,
    stdin: bytes | None = None,
    cwd: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> bytes:
    """Run git on ``gitdir`` only; :class:`AuditInputError` with git's message on failure."""
    env = _git_env(gitdir)
    if extra_env:
        env.update(extra_env)
    proc = subprocess.run(
        [*_GIT, *args], input=stdin, capture_output=True, env=env, cwd=cwd or gitdir, check=False
    )
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise AuditInputError(
            f"git {args[0]} failed on {gitdir}: {message[-1] if message else proc.returncode}",
            fix="check that the repository is readable and not corrupt (git fsck)",
        )
    return proc.stdout


def _resolve(r: _Repo, rev: str | None) -> pygit2.Commit:
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
def _all_objects(gitdir: Path) -> dict[bytes, bytes]:
    """Every object in the store (loose, packed, alternates): hex id -> type, both as bytes."""
    parts = _git(
        gitdir,
        "cat-file",
        "--batch-all-objects",
        "--unordered",
        "--batch-check=%(objectname) %(objecttype)",
    ).split()
    return dict(zip(parts[0::2], parts[1::2]))


def _rev_list_objects(
    gitdir: Path, include: Iterable[str], *, exclude: Iterable[str] = (), extra: Sequence[str] = ()
) -> set[bytes]:
    """Ids of the objects reachable from ``include`` (and ``extra`` options), minus ``exclude``'s."""
    lines = [*include, *(f"^{x}" for x in exclude)]
    if not lines and not extra:
        return set()
    out = _git(
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
    r = _open(path)
    base_commit = _resolve(r, base)
    base_id = str(base_commit.id)
    roots = [base_id, *(str(x) for x in also_reachable)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        listing = pool.submit(_all_objects, r.gitdir)
        walk = pool.submit(_rev_list_objects, r.gitdir, roots)
        objects, reachable = listing.result(), walk.result()
    beyond_raw = objects.keys() - reachable
    dangling_raw: set[bytes] = set()
    if beyond_raw:
        # what refs (all of them, worktrees' HEADs included), reflogs and the index still reach
        referenced = _rev_list_objects(
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
    out_raw = _git(
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


# ---------------------------------------------------------------------------- the audit
def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(name == p or fnmatch.fnmatchcase(name, p) for p in patterns)


def _ref_kind(name: str) -> str:
    for prefix, kind in (
        ("refs/heads/", "branch"),
        ("refs/tags/", "tag"),
        ("refs/remotes/", "remote"),
        ("refs/stash", "stash"),
        ("refs/notes/", "notes"),
        ("refs/replace/", "replace"),
        ("refs/original/", "original"),
    ):
        if name.startswith(prefix):
            return kind
    return "head" if name == "HEAD" else "other"


def _head_branch(repo: pygit2.Repository) -> str | None:
    try:
        ref = repo.lookup_reference("HEAD")
    except (KeyError, pygit2.GitError):
        return None
    target = ref.target
    return target if isinstance(target, str) else None


def _peel(repo: pygit2.Repository, oid: pygit2.Oid | str) -> tuple[str, str]:
    """(peeled id, type) of a ref target; annotated tags are followed."""
    try:
        obj = repo[oid]
        while obj.type == ObjectType.TAG:
            obj = repo[obj.target]
        return str(obj.id), obj.type_str
    except (KeyError, ValueError):
        return str(oid), "missing"


def _severity_for(kinds: Iterable[str]) -> str:
    """critical when any commit is a later state of the task (descendant or newer than base)."""
    return "critical" if any(k in ("descendant", "newer") for k in kinds) else "high"


def inspect_repository(
    path: str | os.PathLike[str],
    *,
    base: str | None = None,
    allowed_refs: Sequence[str] | None = None,
) -> RepoAudit:
    """Audit ``path`` against ``base`` (default HEAD): findings, the object scan and a verdict.

    ``allowed_refs``: ref names or glob patterns (``refs/heads/evotree/*``) that may exist; the
    history they reach counts as reachable. Default: ``HEAD`` and the branch it names, when HEAD
    is the base; an empty list allows no ref at all (HEAD beyond base is then a finding too).
    """
    started = time.perf_counter()
    r = _open(path)
    repo = r.repo
    base_commit = _resolve(r, base)
    base_id = str(base_commit.id)
    allowed = _default_allowed(repo, base_id) if allowed_refs is None else list(allowed_refs)

    refs: dict[str, str] = {}  # ref name -> direct target id
    for name in repo.references:
        try:
            target = repo.references[name].resolve().target
        except (KeyError, pygit2.GitError):
            continue
        refs[name] = str(target)
    try:
        refs["HEAD"] = str(repo.head.target)
    except (pygit2.GitError, KeyError):
        pass
    allowed_commits: set[str] = set()  # the history of allowed refs counts as reachable
    for name, target in refs.items():
        peeled, kind = _peel(repo, target)
        if kind == "commit" and peeled != base_id and _matches(name, allowed):
            allowed_commits.add(peeled)
    scan = scan_object_store(r.path, base_id, also_reachable=sorted(allowed_commits))
    beyond_commits = scan.commits

    def classify_target(oid: str) -> tuple[str, str]:
        """(peeled id, reach) of a target: inside, descendant / newer / older, or not_a_commit."""
        peeled, kind = _peel(repo, oid)
        if peeled in beyond_commits:
            return peeled, beyond_commits[peeled].kind
        if kind == "commit":
            return peeled, "inside"
        return peeled, "not_a_commit"

    findings: list[Finding] = []
    findings += _ref_findings(repo, refs, allowed, classify_target, beyond_commits)
    findings += _remote_findings(repo)
    findings += _reflog_findings(r, classify_target)
    findings += _special_head_findings(r, classify_target)
    findings += _store_findings(r)
    findings += _worktree_findings(r, classify_target)
    findings += _dangling_findings(scan)
    findings += _index_findings(r, base_commit)
    findings += _checkout_findings(r)
    findings = sort_findings(findings)
    passed = not any(f.rank >= Severity.HIGH for f in findings)
    return RepoAudit(
        path=str(r.path),
        base=base_id,
        allowed_refs=allowed,
        passed=passed,
        findings=findings,
        scan=scan,
        seconds=time.perf_counter() - started,
    )


def audit_repository(
    path: str | os.PathLike[str], *, base: str | None = None, allowed_refs: list[str] | None = None
) -> list[Finding]:
    """The findings of :func:`inspect_repository` (most severe first)."""
    return inspect_repository(path, base=base, allowed_refs=allowed_refs).findings


def _default_allowed(repo: pygit2.Repository, base_id: str) -> list[str]:
    try:
        head = str(repo.head.target)
    except (pygit2.GitError, KeyError):
        return []
    if head != base_id:
        return []
    branch = _head_branch(repo)
    return ["HEAD", branch] if branch else ["HEAD"]


def _finding(
    code: str, severity: str, title: str, evidence: dict[str, Any], suggestion: str
) -> Finding:
    return Finding(
        layer="audit",
        code=code,
        severity=severity,
        title=title,
        evidence=evidence,
        suggestion=suggestion,
    )


_SANITIZE = "hand rollouts a sanitized copy: evotree audit repo PATH --sanitize --out CLEAN"


def _ref_findings(
    repo: pygit2.Repository,
    refs: dict[str, str],
    allowed: list[str],
    classify: Any,
    beyond: dict[str, FutureCommit],
) -> list[Finding]:
    groups: dict[str, list[dict[str, Any]]] = {}
    extra: list[dict[str, Any]] = []
    for name, target in sorted(refs.items()):
        if _matches(name, allowed):
            continue
        if (
            name == "HEAD"
            and _head_branch(repo) in refs
            and not _matches(_head_branch(repo) or "", allowed)
        ):
            continue  # reported under the branch HEAD names
        peeled, label = classify(target)
        entry = {"ref": name, "target": peeled, "reach": label}
        if label in ("descendant", "newer", "older"):
            entry["summary"] = beyond[peeled].summary
            beyond[peeled].refs.append(name)
        kind = _ref_kind(name)
        if kind in ("stash", "notes", "replace", "original"):
            groups.setdefault(kind, []).append(entry)
        elif label == "inside":
            extra.append(entry)
        else:
            groups.setdefault("future", []).append(entry)
    out: list[Finding] = []
    specs = {
        "future": (
            "audit.repo_future_ref",
            "refs reach commits beyond base",
            "delete every ref except the task's branch (or sanitize the repository)",
        ),
        "stash": (
            "audit.repo_stash",
            "a stash holds changes on top of the repository",
            "drop the stash (git stash clear) or sanitize the repository",
        ),
        "notes": (
            "audit.repo_notes",
            "git notes are present (arbitrary text and history)",
            "delete refs/notes/* or sanitize the repository",
        ),
        "replace": (
            "audit.repo_replace_ref",
            "replace refs rewrite what history git shows",
            "delete refs/replace/* or sanitize the repository",
        ),
        "original": (
            "audit.repo_backup_ref",
            "filter-branch backups (refs/original) keep old history",
            "delete refs/original/* or sanitize the repository",
        ),
    }
    for key, entries in groups.items():
        code, title, fix = specs[key]
        labels = [e["reach"] for e in entries]
        severity = _severity_for(labels) if key in ("future", "stash") else "high"
        if key in ("stash", "original") and any(k in ("descendant", "newer") for k in labels):
            severity = "critical"
        names = ", ".join(e["ref"] for e in entries[:3]) + (
            f" and {len(entries) - 3} more" if len(entries) > 3 else ""
        )
        out.append(
            _finding(
                code,
                severity,
                f"{title}: {names}",
                {
                    "count": len(entries),
                    "refs": entries[:SAMPLE],
                    "reach": {k: labels.count(k) for k in sorted(set(labels))},
                },
                f"{fix}; {_SANITIZE}",
            )
        )
    if extra:
        out.append(
            _finding(
                "audit.repo_extra_ref",
                "info",
                f"{len(extra)} ref(s) besides the allowed ones (all at or before base)",
                {"count": len(extra), "refs": extra[:SAMPLE]},
                "harmless for the future, but a clean task repository has one branch",
            )
        )
    return out


def _remote_findings(repo: pygit2.Repository) -> list[Finding]:
    remotes = []
    for remote in repo.remotes:
        remotes.append({"name": remote.name, "url": remote.url, "push_url": remote.push_url})
    if not remotes:
        return []
    return [
        _finding(
            "audit.repo_remote",
            "high",
            f"{len(remotes)} remote(s) configured: git fetch reaches upstream",
            {"count": len(remotes), "remotes": remotes[:SAMPLE]},
            f"remove them (git remote remove NAME); {_SANITIZE}",
        )
    ]


def _parse_reflog(path: Path) -> list[tuple[str, str, str]]:
    entries = []
    try:
        text = path.read_text("utf-8", "replace")
    except OSError:
        return entries
    for line in text.splitlines():
        head, _, message = line.partition("\t")
        parts = head.split(" ", 2)
        if len(parts) >= 2 and len(parts[0]) == 40 and len(parts[1]) == 40:
            entries.append((parts[0], parts[1], message))
    return entries


def _reflog_files(r: _Repo) -> list[tuple[str, Path]]:
    files: list[tuple[str, Path]] = []
    for root in dict.fromkeys([r.commondir, r.gitdir]):
        logs = root / "logs"
        if logs.is_dir():
            files += [
                (p.relative_to(logs).as_posix(), p) for p in sorted(logs.rglob("*")) if p.is_file()
            ]
    return files


def _reflog_findings(r: _Repo, classify: Any) -> list[Finding]:
    total = 0
    reaching: list[dict[str, Any]] = []
    labels: list[str] = []
    logs: list[str] = []
    urls: set[str] = set()
    for name, path in _reflog_files(r):
        entries = _parse_reflog(path)
        if not entries:
            continue
        logs.append(name)
        total += len(entries)
        seen: set[str] = set()
        for old, new, message in entries:
            for m in re.finditer(r"(?:from|of) (\S+://\S+|\S+@\S+:\S+)", message):
                urls.add(m.group(1))
            for oid in (old, new):
                if oid == _ZERO or oid in seen:
                    continue
                seen.add(oid)
                peeled, label = classify(oid)
                if label != "inside":
                    labels.append(label)
                    if len(reaching) < SAMPLE:
                        reaching.append(
                            {
                                "log": name,
                                "commit": peeled,
                                "reach": label,
                                "message": message[:120],
                            }
                        )
    if not total:
        return []
    if labels:
        severity = _severity_for(labels)
        title = f"reflogs name commits beyond base {len(labels)} time(s) ({total} entries in {len(logs)} log(s))"
    else:
        severity = "warn"
        title = f"reflogs present ({total} entries in {len(logs)} log(s)), none beyond base"
    return [
        _finding(
            "audit.repo_reflog",
            severity,
            title,
            {
                "entries": total,
                "logs": logs[:SAMPLE],
                "beyond": len(labels),
                "reach": {k: labels.count(k) for k in sorted(set(labels))},
                "samples": reaching,
                "urls": sorted(urls)[:SAMPLE],
            },
            f"expire them (git reflog expire --expire=now --all); {_SANITIZE}",
        )
    ]


def _special_head_findings(r: _Repo, classify: Any) -> list[Finding]:
    found: list[dict[str, Any]] = []
    labels: list[str] = []
    for root in dict.fromkeys([r.gitdir, r.commondir]):
        for name in SPECIAL_HEADS:
            path = root / name
            if not path.is_file():
                continue
            text = path.read_text("utf-8", "replace")
            commits = []
            for oid in dict.fromkeys(_HEX.findall(text)):
                peeled, label = classify(oid)
                commits.append({"commit": peeled, "reach": label})
                if label != "inside":
                    labels.append(label)
            urls = sorted(set(re.findall(r"(?:of|from) '?(\S+://\S+|\S+@\S+:\S+)", text)))
            found.append({"file": name, "commits": commits[:SAMPLE], "urls": urls[:SAMPLE]})
    if not found:
        return []
    severity = _severity_for(labels) if labels else "warn"
    names = ", ".join(f["file"] for f in found)
    return [
        _finding(
            "audit.repo_special_head",
            severity,
            f"{names} left in the git directory"
            + (f" naming {len(labels)} commit(s) beyond base" if labels else ""),
            {"count": len(found), "files": found, "beyond": len(labels)},
            f"delete them from the git directory; {_SANITIZE}",
        )
    ]


def _store_findings(r: _Repo) -> list[Finding]:
    out: list[Finding] = []
    info = r.commondir / "objects" / "info"
    alternates = []
    for name in ("alternates", "http-alternates"):
        path = info / name
        if path.is_file():
            lines = [
                ln.strip()
                for ln in path.read_text("utf-8", "replace").splitlines()
                if ln.strip() and not ln.startswith("#")
            ]
            alternates += [{"file": name, "store": ln} for ln in lines]
    if alternates:
        out.append(
            _finding(
                "audit.repo_alternates",
                "high",
                f"objects are borrowed from {len(alternates)} other object store(s)",
                {"count": len(alternates), "alternates": alternates[:SAMPLE]},
                f"a rollout can read every object of those stores; {_SANITIZE}",
            )
        )
    if (r.commondir / "info" / "grafts").is_file():
        out.append(
            _finding(
                "audit.repo_grafts",
                "high",
                "info/grafts rewrites the parents git shows",
                {"file": "info/grafts"},
                f"delete info/grafts; {_SANITIZE}",
            )
        )
    packs = r.commondir / "objects" / "pack"
    if packs.is_dir():
        unindexed = sorted(
            p.name for p in packs.glob("*.pack") if not p.with_suffix(".idx").is_file()
        )
        if unindexed:
            out.append(
                _finding(
                    "audit.repo_unindexed_pack",
                    "high",
                    f"{len(unindexed)} pack file(s) without an index: objects the scan cannot see",
                    {"count": len(unindexed), "packs": unindexed[:SAMPLE]},
                    f"git index-pack would reveal them; {_SANITIZE}",
                )
            )
    stray = []
    for root in dict.fromkeys([r.gitdir, r.commondir]):
        for name in STRAY_STATE:
            path = root / name
            if path.is_dir() and any(path.iterdir()) or path.is_file():
                stray.append(name)
    if stray:
        out.append(
            _finding(
                "audit.repo_stray_state",
                "high",
                f"git directory holds other history or patches: {', '.join(sorted(set(stray)))}",
                {"count": len(set(stray)), "paths": sorted(set(stray))},
                f"finish or abort the operation and delete them; {_SANITIZE}",
            )
        )
    return out


def _worktree_findings(r: _Repo, classify: Any) -> list[Finding]:
    admin = r.commondir / "worktrees"
    if not admin.is_dir():
        return []
    heads = [
        (entry.name, entry / "HEAD")
        for entry in sorted(admin.iterdir())
        if entry.resolve() != r.gitdir
    ]
    if r.gitdir != r.commondir:  # from a linked worktree, the main checkout is another one
        heads.insert(0, ("(main)", r.commondir / "HEAD"))
    others = []
    labels = []
    for name, head in heads:
        if not head.is_file():
            continue
        text = head.read_text("utf-8", "replace").strip()
        target = text
        if text.startswith("ref: "):
            try:
                target = str(r.repo.references[text[5:]].resolve().target)
            except (KeyError, pygit2.GitError):
                target = ""
        item: dict[str, Any] = {"worktree": name, "head": text[:200]}
        if len(target) == 40:
            peeled, label = classify(target)
            item.update(commit=peeled, reach=label)
            if label != "inside":
                labels.append(label)
        others.append(item)
    if not others:
        return []
    severity = _severity_for(labels) if labels else "warn"
    return [
        _finding(
            "audit.repo_worktree",
            severity,
            f"{len(others)} other worktree(s) share this repository"
            + (f", {len(labels)} checked out beyond base" if labels else ""),
            {"count": len(others), "worktrees": others[:SAMPLE], "beyond": len(labels)},
            f"hand rollouts a standalone repository, not a worktree; {_SANITIZE}",
        )
    ]


def _dangling_findings(scan: ObjectScan) -> list[Finding]:
    if not scan.dangling_ids:
        return []
    commits = [c for c in scan.future_commits if c.id in scan.dangling_ids]
    kinds = [c.kind for c in commits]
    severity = _severity_for(kinds) if commits else "high"
    total = sum(scan.dangling.values())
    detail = ", ".join(f"{n} {k}(s)" for k, n in sorted(scan.dangling.items()))
    return [
        _finding(
            "audit.repo_unreachable_objects",
            severity,
            f"the object store holds {total} object(s) no ref reaches and base cannot reach ({detail})",
            {
                "count": total,
                "by_type": dict(scan.dangling),
                "commits": {k: kinds.count(k) for k in ("descendant", "newer", "older")},
                "samples": [asdict(c) for c in commits[:SAMPLE]],
                "objects": sorted(scan.dangling_ids)[:SAMPLE],
            },
            "git cat-file --batch-all-objects or git fsck --lost-found finds them; deleting refs "
            f"is not enough (gc --prune=now with no reflogs, or better: {_SANITIZE})",
        )
    ]


def _index_findings(r: _Repo, base: pygit2.Commit) -> list[Finding]:
    if r.repo.is_bare or not (r.gitdir / "index").is_file():
        return []
    try:
        diff = r.repo.index.diff_to_tree(base.tree)
    except pygit2.GitError:
        return []
    paths = [d.new_file.path or d.old_file.path for d in diff.deltas]
    if not paths:
        return []
    return [
        _finding(
            "audit.repo_index",
            "high",
            f"the index stages {len(paths)} path(s) that differ from base",
            {"count": len(paths), "paths": paths[:SAMPLE]},
            f"reset the index to base (git read-tree BASE); {_SANITIZE}",
        )
    ]


def _checkout_findings(r: _Repo) -> list[Finding]:
    """Files in the checkout that are not HEAD's: an untracked ``fix.patch`` is a leak too.

    libgit2's status (no fsmonitor hook or other configured program runs); untracked folders
    are reported as one entry, not walked.
    """
    if r.repo.is_bare:
        return []
    try:
        status = r.repo.status(untracked_files="normal", ignored=True)
    except pygit2.GitError:
        return []
    untracked = sorted(p for p, s in status.items() if s & FileStatus.WT_NEW)
    changed = sorted(
        p
        for p, s in status.items()
        if s & (FileStatus.WT_MODIFIED | FileStatus.WT_DELETED | FileStatus.WT_TYPECHANGE)
    )
    ignored = sorted(p for p, s in status.items() if s & FileStatus.IGNORED)
    out: list[Finding] = []
    if untracked or changed:
        out.append(
            _finding(
                "audit.repo_dirty",
                "high",
                f"the checkout differs from HEAD: {len(untracked)} untracked, {len(changed)} changed path(s)",
                {
                    "untracked": untracked[:SAMPLE],
                    "changed": changed[:SAMPLE],
                    "counts": {"untracked": len(untracked), "changed": len(changed)},
                },
                f"hand rollouts a checkout of base and nothing else; {_SANITIZE}",
            )
        )
    if ignored:
        out.append(
            _finding(
                "audit.repo_ignored_files",
                "warn",
                f"{len(ignored)} ignored path(s) in the checkout (git status does not show them)",
                {"count": len(ignored), "paths": ignored[:SAMPLE]},
                "check that none holds a reference solution or hidden data",
            )
        )
    return out


# ---------------------------------------------------------------------------- sanitize
def sanitize_repository(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    base: str | None = None,
    branch: str | None = None,
) -> SanitizeResult:
    """Write a clean repository at ``out``: history up to ``base`` only, then audit it.

    The copy holds one pack with exactly the objects reachable from base, one branch at base
    (``branch``: default the source's current branch name, else ``main``), HEAD on it, the
    base's files checked out (a bare source gives a bare copy), no tags, remotes, reflogs,
    hooks or other state. ``out`` must not exist or be an empty directory; on any failure it
    is removed again. The source is only read.
    """
    started = time.perf_counter()
    r = _open(path)
    base_commit = _resolve(r, base)
    base_id = str(base_commit.id)
    target = Path(out).expanduser().resolve()
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise AuditInputError(
            f"--out {target} already exists and is not an empty directory",
            fix="choose a new path; the sanitized repository is written there",
        )
    if target == r.path or r.path in target.parents or target in r.path.parents:
        raise AuditInputError(
            f"--out {target} overlaps the source repository {r.path}",
            fix="write the clean copy outside the source repository",
        )
    if _config_value(r.repo, "extensions.partialclone"):
        raise AuditInputError(
            f"{r.path} is a partial clone: some objects are only on its promisor remote",
            fix="fetch the missing objects first (git fetch --refetch), or sanitize a full clone",
        )
    name = branch or _short_branch(r.repo) or "main"
    if not pygit2.reference_is_valid_name(f"refs/heads/{name}"):
        raise AuditInputError(
            f"branch name {name!r} is not a valid git branch name", fix="pass another --branch"
        )
    bare = r.repo.is_bare
    created = not target.exists()
    try:
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="evotree-empty-template-") as template:
            init = ["init", "--quiet", f"--template={template}", "--initial-branch", name]
            env = {k: v for k, v in _git_env(target).items() if k != "GIT_DIR"}
            subprocess.run(
                [*_GIT, *init, *(["--bare"] if bare else []), str(target)],
                check=True,
                capture_output=True,
                env=env,
                cwd=target,
            )
        gitdir = target if bare else target / ".git"
        _git(gitdir, "config", "core.logAllRefUpdates", "false")
        shallow = _shallow_within(r, base_id)
        if shallow:  # a shallow source: the copy is shallow at the same commits
            (gitdir / "shallow").write_text("".join(f"{oid}\n" for oid in shallow))
        pack = subprocess.Popen(
            [*_GIT, "pack-objects", "--revs", "--stdout", "--quiet"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=_git_env(r.gitdir),
            cwd=r.gitdir,
        )
        index = subprocess.Popen(
            [*_GIT, "index-pack", "--stdin", "--strict"],
            stdin=pack.stdout,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=_git_env(gitdir),
            cwd=gitdir,
        )
        assert pack.stdin is not None and pack.stdout is not None
        pack.stdout.close()  # index-pack holds the read end
        pack.stdin.write(f"{base_id}\n".encode())
        pack.stdin.close()
        pack_err = pack.stderr.read() if pack.stderr else b""
        index_err = index.stderr.read() if index.stderr else b""
        if pack.wait() != 0 or index.wait() != 0:
            raise AuditInputError(
                f"copying the objects reachable from {base_id[:12]} failed: "
                f"{(pack_err or index_err).decode('utf-8', 'replace').strip()[-300:]}",
                fix="check the source repository with git fsck",
            )
        _git(gitdir, "update-ref", "--no-deref", f"refs/heads/{name}", base_id, _ZERO)
        _git(gitdir, "symbolic-ref", "HEAD", f"refs/heads/{name}")
        if not bare:
            _git(
                gitdir,
                "read-tree",
                "--reset",
                "-u",
                "HEAD",
                cwd=target,
                extra_env={"GIT_WORK_TREE": str(target), "GIT_LFS_SKIP_SMUDGE": "1"},
            )
        shutil.rmtree(gitdir / "logs", ignore_errors=True)
        report = inspect_repository(target)
        clean = scan_object_store(target)  # the copy's own counts (the audit scanned it too)
        commits = int(_git(gitdir, "rev-list", "--count", base_id).decode().strip())
    except BaseException:
        if created:
            shutil.rmtree(target, ignore_errors=True)
        else:
            for child in target.iterdir():
                shutil.rmtree(
                    child, ignore_errors=True
                ) if child.is_dir() and not child.is_symlink() else child.unlink()
        raise
    source_objects = len(_all_objects(r.gitdir))
    return SanitizeResult(
        source=str(r.path),
        out=str(target),
        base=base_id,
        branch=name,
        bare=bare,
        commits=commits,
        objects=clean.objects,
        removed_objects=max(0, source_objects - clean.objects),
        audit=report,
        seconds=time.perf_counter() - started,
    )


def _shallow_within(r: _Repo, base_id: str) -> list[str]:
    """The source's shallow boundary commits that are in base's history (sorted)."""
    path = r.commondir / "shallow"
    if not path.is_file():
        return []
    boundary = set(_HEX.findall(path.read_text("ascii", "replace")))
    if not boundary:
        return []
    history = set(_git(r.gitdir, "rev-list", base_id).decode("ascii", "replace").split())
    return sorted(boundary & history)


def _config_value(repo: pygit2.Repository, key: str) -> str | None:
    try:
        return str(repo.config[key])
    except (KeyError, pygit2.GitError):
        return None


def _short_branch(repo: pygit2.Repository) -> str | None:
    head = _head_branch(repo)
    return head.removeprefix("refs/heads/") if head and head.startswith("refs/heads/") else None
