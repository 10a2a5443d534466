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

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2

from evotree.core.findings import Finding, Severity, sort_findings
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.repo_findings import (
    checkout_findings,
    dangling_findings,
    index_findings,
    matches_any,
    peel,
    ref_findings,
    reflog_findings,
    remote_findings,
    special_head_findings,
    store_findings,
    worktree_findings,
)
from evotree.harness.audit.repo_objects import (
    FULL_HASH,
    GIT,
    ZERO_ID,
    ObjectScan,
    OpenRepo,
    all_objects,
    git_env,
    head_branch,
    open_repo,
    resolve_commit,
    run_git,
    scan_object_store,
)

__all__ = [
    "RepoAudit",
    "SanitizeResult",
    "audit_repository",
    "inspect_repository",
    "sanitize_repository",
]


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
    r = open_repo(path)
    repo = r.repo
    base_commit = resolve_commit(r, base)
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
        peeled, kind = peel(repo, target)
        if kind == "commit" and peeled != base_id and matches_any(name, allowed):
            allowed_commits.add(peeled)
    scan = scan_object_store(r.path, base_id, also_reachable=sorted(allowed_commits))
    beyond_commits = scan.commits

    def classify_target(oid: str) -> tuple[str, str]:
        """(peeled id, reach) of a target: inside, descendant / newer / older, or not_a_commit."""
        peeled, kind = peel(repo, oid)
        if peeled in beyond_commits:
            return peeled, beyond_commits[peeled].kind
        if kind == "commit":
            return peeled, "inside"
        return peeled, "not_a_commit"

    findings: list[Finding] = []
    findings += ref_findings(repo, refs, allowed, classify_target, beyond_commits)
    findings += remote_findings(repo)
    findings += reflog_findings(r, classify_target)
    findings += special_head_findings(r, classify_target)
    findings += store_findings(r)
    findings += worktree_findings(r, classify_target)
    findings += dangling_findings(scan)
    findings += index_findings(r, base_commit)
    findings += checkout_findings(r)
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
    branch = head_branch(repo)
    return ["HEAD", branch] if branch else ["HEAD"]


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
    r = open_repo(path)
    base_commit = resolve_commit(r, base)
    base_id = str(base_commit.id)
    target = Path(out).expanduser().resolve()
    name = _checked_target(r, target, branch)
    bare = r.repo.is_bare
    created = not target.exists()
    try:
        target.mkdir(parents=True, exist_ok=True)
        gitdir = _write_copy(r, target, name, base_id, bare)
        report = inspect_repository(target)
        clean = scan_object_store(target)  # the copy's own counts (the audit scanned it too)
        commits = int(run_git(gitdir, "rev-list", "--count", base_id).decode().strip())
    except BaseException:
        _remove_copy(target, created)
        raise
    source_objects = len(all_objects(r.gitdir))
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


def _checked_target(r: OpenRepo, target: Path, branch: str | None) -> str:
    """The branch name of the copy, once ``target`` is known to be a fresh place outside the
    source and the source a full clone; :class:`AuditInputError` otherwise."""
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
    return name


def _write_copy(r: OpenRepo, target: Path, name: str, base_id: str, bare: bool) -> Path:
    """Initialise the copy at ``target`` (no template, no reflogs), copy base's objects into it,
    put branch ``name`` and HEAD on base and check its files out; the copy's git directory."""
    with tempfile.TemporaryDirectory(prefix="evotree-empty-template-") as template:
        init = ["init", "--quiet", f"--template={template}", "--initial-branch", name]
        env = {k: v for k, v in git_env(target).items() if k != "GIT_DIR"}
        subprocess.run(
            [*GIT, *init, *(["--bare"] if bare else []), str(target)],
            check=True,
            capture_output=True,
            env=env,
            cwd=target,
        )
    gitdir = target if bare else target / ".git"
    run_git(gitdir, "config", "core.logAllRefUpdates", "false")
    shallow = _shallow_within(r, base_id)
    if shallow:  # a shallow source: the copy is shallow at the same commits
        (gitdir / "shallow").write_text("".join(f"{oid}\n" for oid in shallow))
    _copy_objects(r, gitdir, base_id)
    run_git(gitdir, "update-ref", "--no-deref", f"refs/heads/{name}", base_id, ZERO_ID)
    run_git(gitdir, "symbolic-ref", "HEAD", f"refs/heads/{name}")
    if not bare:
        run_git(
            gitdir,
            "read-tree",
            "--reset",
            "-u",
            "HEAD",
            cwd=target,
            extra_env={"GIT_WORK_TREE": str(target), "GIT_LFS_SKIP_SMUDGE": "1"},
        )
    shutil.rmtree(gitdir / "logs", ignore_errors=True)
    return gitdir


def _copy_objects(r: OpenRepo, gitdir: Path, base_id: str) -> None:
    """Pipe a pack of the objects reachable from base (``pack-objects --revs``) into the copy's
    ``index-pack --strict``; :class:`AuditInputError` with git's message when either fails."""
    pack = subprocess.Popen(
        [*GIT, "pack-objects", "--revs", "--stdout", "--quiet"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=git_env(r.gitdir),
        cwd=r.gitdir,
    )
    index = subprocess.Popen(
        [*GIT, "index-pack", "--stdin", "--strict"],
        stdin=pack.stdout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=git_env(gitdir),
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


def _remove_copy(target: Path, created: bool) -> None:
    """Undo a failed copy: remove ``target`` when this call created it, else empty it again."""
    if created:
        shutil.rmtree(target, ignore_errors=True)
    else:
        for child in target.iterdir():
            shutil.rmtree(
                child, ignore_errors=True
            ) if child.is_dir() and not child.is_symlink() else child.unlink()


def _shallow_within(r: OpenRepo, base_id: str) -> list[str]:
    """The source's shallow boundary commits that are in base's history (sorted)."""
    path = r.commondir / "shallow"
    if not path.is_file():
        return []
    boundary = set(FULL_HASH.findall(path.read_text("ascii", "replace")))
    if not boundary:
        return []
    history = set(run_git(r.gitdir, "rev-list", base_id).decode("ascii", "replace").split())
    return sorted(boundary & history)


def _config_value(repo: pygit2.Repository, key: str) -> str | None:
    try:
        return str(repo.config[key])
    except (KeyError, pygit2.GitError):
        return None


def _short_branch(repo: pygit2.Repository) -> str | None:
    head = head_branch(repo)
    return head.removeprefix("refs/heads/") if head and head.startswith("refs/heads/") else None
