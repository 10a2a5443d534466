"""A version's patch against the pristine base: what it changes, its hash, what the rules say.

AI4AI-Bench measures a candidate as one source patch applied to the frozen start and retrained
from scratch; the patch is checked before the retrain. Here the *base* is ``[protect].base``
of the configuration in force (default ``"root"``: the first commit of the root version ``v0``,
recorded in the ledger at ``evotree init`` and never moved), so a child of a version that
added ``warm.npy`` carries ``warm.npy`` in its own patch. One function, :func:`version_patch`, serves the audit
(``audit.patch_*`` findings), the protected gate and the check before a run.

The patch hash (:attr:`VersionPatch.sha256`) is the SHA-256 of a canonical listing of the tree
delta base -> candidate (no rename detection; one line per changed path with modes and blob
ids, which are git's content hashes), preceded by both tree ids. ``git diff`` text is not
hashed: its bytes depend on the local git configuration and on id abbreviation.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import pygit2

from evotree.core.findings import Finding, sort_findings
from evotree.core.refs import CHAMPION_REF, branch_ref
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.patch_gate import (
    BLOCKING,
    PatchGate,
    check_patch,
)
from evotree.harness.audit.protected_paths import (
    _protected_finding,
    protected_patterns,
    protected_touches,
)
from evotree.harness.judge_store import judge_in_force

__all__ = [
    "PATCH_FORMAT",
    "VersionPatch",
    "patch_digest",
    "patch_sha256",
    "resolve_base",
    "version_patch",
]


# ---------------------------------------------------------------------------- the pristine base
#: the name of the canonical form :func:`patch_sha256` hashes
PATCH_FORMAT = "evotree-tree-delta-v1"
_COMMIT = re.compile(r"[0-9a-f]{40}")


@dataclass
class VersionPatch:
    """A version's patch: base, commit, hash, changed paths and the findings of the rules."""

    version: str
    #: how the base was named (``root (v0)``, ``champion``, a version id or a commit)
    base: str
    base_commit: str
    commit: str
    sha256: str
    files: list[dict[str, str]]
    #: findings of the patch rules (measured from the base)
    findings: list[Finding] = field(default_factory=list)
    #: the protected-path finding (measured from the champion), if any
    protected: list[Finding] = field(default_factory=list)
    champion_commit: str | None = None

    @property
    def blocking(self) -> list[Finding]:
        """The patch findings the gate and the check before a run refuse (high and critical)."""
        return [f for f in self.findings if f.severity in BLOCKING]

    @property
    def all_findings(self) -> list[Finding]:
        """Protected-path and patch findings together, sorted (what ``evotree audit`` reports)."""
        return sort_findings([*self.protected, *self.findings])

    @property
    def changed_protected(self) -> list[str]:
        """Protected paths whose content differs from the champion's."""
        return sorted({p["path"] for f in self.protected for p in f.evidence.get("paths", [])})

    def summary(self) -> dict[str, Any]:
        """What the ledger records of the patch (``run.started``'s ``patch``)."""
        return {
            "format": PATCH_FORMAT,
            "sha256": self.sha256,
            "base": self.base,
            "base_commit": self.base_commit,
            "commit": self.commit,
            "files": len(self.files),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.summary(),
            "version": self.version,
            "paths": self.files[:200],
            "findings": [f.to_dict() for f in self.all_findings],
            "blocking": [f.code for f in self.blocking],
            "changed_protected": self.changed_protected,
        }


def _commit(repo: pygit2.Repository, rev: str, what: str) -> pygit2.Commit:
    try:
        return repo[rev].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.InvalidSpecError):
        raise AuditInputError(
            f"{what} {rev[:12]} is not a commit of this repository",
            fix="fetch it, or name another [protect].base in the champion's evotree.toml",
        ) from None


def resolve_base(ws: Any, base: str, *, champion_commit: str | None = None) -> tuple[str, str]:
    """``(label, commit)`` of a ``[protect].base``: ``root`` (the root version's first commit),
    ``champion``, a root version id, or a full commit id. Every choice is immutable: a root's
    first commit is in the ledger, a champion commit is signed; a non-root version's branch
    could move under its own children, so it is refused."""
    base = (base or "root").strip()
    if base == "champion":
        commit = champion_commit or (str(ws.git.ref_target(CHAMPION_REF) or "") or None)
        if commit is None:
            raise AuditInputError(
                '[protect].base = "champion": refs/evotree/champion is missing',
                fix="re-run `evotree init` in a fresh clone",
            )
        return "champion", commit
    if _COMMIT.fullmatch(base):
        return base[:12], str(_commit(ws.git.repo, base, "[protect].base commit").id)
    versions = ws.ledger.versions()
    if base == "root":
        roots = sorted((r for r in versions if not r.parents), key=lambda r: (r.created_at, r.id))
        if not roots:
            raise AuditInputError(
                "the ledger has no root version to measure patches from",
                fix="set [protect].base to a full commit id in the champion's evotree.toml",
            )
        return f"root ({roots[0].id})", roots[0].base_commit
    record = ws.resolve(base)
    if record.parents:
        raise AuditInputError(
            f"[protect].base = {base!r} is not a root version: its branch can move, so it is "
            "no pristine base",
            fix='name "root", "champion", a root version or a full commit id',
        )
    return base, record.base_commit


def patch_sha256(
    repo: pygit2.Repository, base: pygit2.Commit, tip: pygit2.Commit
) -> tuple[str, list[dict[str, str]]]:
    """The canonical hash of the patch ``base`` -> ``tip`` and its changed paths (module docstring)."""
    diff = repo.diff(base.tree, tip.tree)
    lines = [f"{PATCH_FORMAT}\nbase-tree {base.tree.id}\ntree {tip.tree.id}\n"]
    files = []
    rows = sorted(diff.deltas, key=lambda d: (d.new_file.path, d.old_file.path))
    for d in rows:
        status = d.status_char()
        lines.append(
            f"{status} {d.old_file.mode:06o} {d.new_file.mode:06o} {d.old_file.id} {d.new_file.id}\t"
            f"{d.old_file.path}\t{d.new_file.path}\n"
        )
        files.append(
            {"path": d.new_file.path if status != "D" else d.old_file.path, "status": status}
        )
    digest = hashlib.sha256()
    for line in lines:
        digest.update(line.encode("utf-8", "surrogateescape"))
    return digest.hexdigest(), files


def _version_tip(ws: Any, record: Any, commit: str | None) -> pygit2.Commit:
    """``commit`` of the version (default: its branch tip), as a commit object."""
    if commit is None:
        tip_id = ws.git.ref_target(branch_ref(record.id))
        if tip_id is None:
            raise AuditInputError(
                f"version {record.id} has no branch {branch_ref(record.id)}",
                fix=f"restore it: git branch {record.branch} {record.base_commit}",
            )
        commit = str(tip_id)
    return _commit(ws.git.repo, commit, f"version {record.id}'s commit")


def patch_digest(
    ws: Any, version: str, *, commit: str | None = None, config: Any = None
) -> dict[str, Any]:
    """What ``run.started`` records of a run's patch (:meth:`VersionPatch.summary`) without
    running the rules: base, base commit, commit, hash and the number of changed paths."""
    record = ws.resolve(version)
    repo: pygit2.Repository = ws.git.repo
    tip = _version_tip(ws, record, commit)
    config = config if config is not None else ws.config
    label, base_id = resolve_base(ws, getattr(config.protect, "base", "root"))
    base = _commit(repo, base_id, f"the pristine base ({label})")
    digest, files = patch_sha256(repo, base, tip)
    return {
        "format": PATCH_FORMAT,
        "sha256": digest,
        "base": label,
        "base_commit": str(base.id),
        "commit": str(tip.id),
        "files": len(files),
    }


def _check_base_lineage(
    repo: pygit2.Repository,
    label: str,
    base: pygit2.Commit,
    named: str,
    champion_commit: str | None,
) -> None:
    """A base read from the ledger (``root``, a root version id) must be the champion's commit or
    one of its ancestors: ``refs/evotree/ledger`` is a ref every worktree can move, and a ledger
    commit that names the candidate's own tip as v0's first commit would make its patch empty.
    A full commit id (or ``champion``) comes from the champion's own policy and is not checked."""
    if champion_commit is None or _COMMIT.fullmatch((named or "").strip()) or label == "champion":
        return
    champion = repo[champion_commit].peel(pygit2.Commit)
    if base.id == champion.id or repo.descendant_of(champion.id, base.id):
        return
    raise AuditInputError(
        f"the pristine base the ledger names ({label}, {str(base.id)[:10]}) is not in the champion's history "
        f"({champion_commit[:10]}): refs/evotree/ledger names a base the champion does not descend from",
        fix="run `evotree verify`; restore refs/evotree/ledger from a trusted copy",
    )


def _judge_trees(ws: Any, repo: pygit2.Repository) -> list[pygit2.Tree]:
    """The judge store's tree in force (the ledger's judge commit: hidden pools, reference
    answers), which every worktree's git can read (``git show refs/evotree/judge:...``)."""

    try:
        commit = judge_in_force(ws)
        return [repo[commit].peel(pygit2.Tree)] if commit else []
    except (KeyError, ValueError, AttributeError, pygit2.GitError):
        return []


def version_patch(
    ws: Any,
    version: str,
    *,
    commit: str | None = None,
    gate: PatchGate | None = None,
    config: Any = None,
    champion_commit: str | None = None,
) -> VersionPatch:
    """``version``'s patch (its branch tip, or ``commit``) against the pristine base, with the findings.

    ``config`` (default the configuration in force) gives the protected paths, ``[protect].base``,
    the thresholds and allowlists; ``champion_commit`` (default the champion ref) the tree the
    protected paths must equal. A gate passes ``policy.config`` and ``policy.commit`` (verified).
    """
    record = ws.resolve(version)
    repo: pygit2.Repository = ws.git.repo
    tip = _version_tip(ws, record, commit)
    config = config if config is not None else ws.config
    if champion_commit is None:
        target = ws.git.ref_target(CHAMPION_REF)
        champion_commit = str(target) if target is not None else None
    named = getattr(config.protect, "base", "root")
    label, base_id = resolve_base(ws, named, champion_commit=champion_commit)
    base = _commit(repo, base_id, f"the pristine base ({label})")
    _check_base_lineage(repo, label, base, named, champion_commit)
    gate = gate or PatchGate.from_protect(config.protect)
    patterns = protected_patterns(config)
    champion = (
        _commit(repo, champion_commit, "the champion commit")
        if champion_commit is not None
        else None
    )
    trees = [base.tree] + ([champion.tree] if champion is not None else [])
    findings = check_patch(
        repo,
        base,
        tip,
        protected=patterns,
        gate=gate,
        version=record.id,
        protected_paths=False,
        protected_trees=trees,
        secret_trees=_judge_trees(ws, repo),
    )
    protected: list[Finding] = []
    if champion is not None:
        touched = protected_touches(repo, champion, tip, patterns)
        if touched:
            protected.append(
                _protected_finding(
                    touched, {"from": str(champion.id), "to": str(tip.id)}, record.id
                )
            )
    digest, files = patch_sha256(repo, base, tip)
    return VersionPatch(
        version=record.id,
        base=label,
        base_commit=str(base.id),
        commit=str(tip.id),
        sha256=digest,
        files=files,
        findings=findings,
        protected=protected,
        champion_commit=champion_commit,
    )
