"""The repository audit's checks, one kind of exposure each: refs beyond the allowed set, remotes,
reflogs, special heads (``ORIG_HEAD`` ...), the object store's other history (alternates,
grafts, in-progress operations), other worktrees, dangling objects, the index and files in the
checkout that HEAD does not have. Each returns its :class:`~evotree.core.findings.Finding` s;
:func:`evotree.harness.audit.repo.inspect_repository` runs them all.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pygit2
from pygit2.enums import FileStatus, ObjectType

from evotree.core.findings import Finding
from evotree.harness.audit.repo_objects import (
    FULL_HASH,
    SAMPLE,
    ZERO_ID,
    FutureCommit,
    ObjectScan,
    OpenRepo,
    head_branch,
)

__all__ = [
    "SANITIZE_HINT",
    "checkout_findings",
    "dangling_findings",
    "index_findings",
    "make_finding",
    "matches_any",
    "peel",
    "ref_findings",
    "reflog_findings",
    "remote_findings",
    "severity_for",
    "special_head_findings",
    "store_findings",
    "worktree_findings",
]

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


def matches_any(name: str, patterns: Sequence[str]) -> bool:
    """Is ``name`` one of ``patterns`` (exact names or globs)?"""
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


def peel(repo: pygit2.Repository, oid: pygit2.Oid | str) -> tuple[str, str]:
    """(peeled id, type) of a ref target; annotated tags are followed."""
    try:
        obj = repo[oid]
        while obj.type == ObjectType.TAG:
            obj = repo[obj.target]
        return str(obj.id), obj.type_str
    except (KeyError, ValueError):
        return str(oid), "missing"


def severity_for(kinds: Iterable[str]) -> str:
    """critical when any commit is a later state of the task (descendant or newer than base)."""
    return "critical" if any(k in ("descendant", "newer") for k in kinds) else "high"


def make_finding(
    code: str, severity: str, title: str, evidence: dict[str, Any], suggestion: str
) -> Finding:
    """A finding of the audit layer."""
    return Finding(
        layer="audit",
        code=code,
        severity=severity,
        title=title,
        evidence=evidence,
        suggestion=suggestion,
    )


SANITIZE_HINT = "hand rollouts a sanitized copy: evotree audit repo PATH --sanitize --out CLEAN"


#: ref group -> (code, title, fix) of its finding
_REF_GROUPS = {
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


def ref_findings(
    repo: pygit2.Repository,
    refs: dict[str, str],
    allowed: list[str],
    classify: Any,
    beyond: dict[str, FutureCommit],
) -> list[Finding]:
    """Refs outside the allowed set, grouped: beyond the base, stash, notes, replace
    refs, filter-branch backups; refs at or before the base are info."""
    groups, extra = _group_refs(repo, refs, allowed, classify, beyond)
    out = [_ref_group_finding(key, entries) for key, entries in groups.items()]
    if extra:
        out.append(
            make_finding(
                "audit.repo_extra_ref",
                "info",
                f"{len(extra)} ref(s) besides the allowed ones (all at or before base)",
                {"count": len(extra), "refs": extra[:SAMPLE]},
                "harmless for the future, but a clean task repository has one branch",
            )
        )
    return out


def _group_refs(
    repo: pygit2.Repository,
    refs: dict[str, str],
    allowed: list[str],
    classify: Any,
    beyond: dict[str, FutureCommit],
) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """(group -> entries, entries at or before the base) of the refs not allowed; each future
    commit a ref reaches learns the ref's name."""
    groups: dict[str, list[dict[str, Any]]] = {}
    extra: list[dict[str, Any]] = []
    for name, target in sorted(refs.items()):
        if matches_any(name, allowed):
            continue
        if (
            name == "HEAD"
            and head_branch(repo) in refs
            and not matches_any(head_branch(repo) or "", allowed)
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
    return groups, extra


def _ref_group_finding(key: str, entries: list[dict[str, Any]]) -> Finding:
    """The finding of one group of refs: critical when one reaches a later state of the task."""
    code, title, fix = _REF_GROUPS[key]
    labels = [e["reach"] for e in entries]
    severity = severity_for(labels) if key in ("future", "stash") else "high"
    if key in ("stash", "original") and any(k in ("descendant", "newer") for k in labels):
        severity = "critical"
    names = ", ".join(e["ref"] for e in entries[:3]) + (
        f" and {len(entries) - 3} more" if len(entries) > 3 else ""
    )
    return make_finding(
        code,
        severity,
        f"{title}: {names}",
        {
            "count": len(entries),
            "refs": entries[:SAMPLE],
            "reach": {k: labels.count(k) for k in sorted(set(labels))},
        },
        f"{fix}; {SANITIZE_HINT}",
    )


def remote_findings(repo: pygit2.Repository) -> list[Finding]:
    """Remotes: a URL the future can be fetched from."""
    remotes = []
    for remote in repo.remotes:
        remotes.append({"name": remote.name, "url": remote.url, "push_url": remote.push_url})
    if not remotes:
        return []
    return [
        make_finding(
            "audit.repo_remote",
            "high",
            f"{len(remotes)} remote(s) configured: git fetch reaches upstream",
            {"count": len(remotes), "remotes": remotes[:SAMPLE]},
            f"remove them (git remote remove NAME); {SANITIZE_HINT}",
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


def _reflog_files(r: OpenRepo) -> list[tuple[str, Path]]:
    files: list[tuple[str, Path]] = []
    for root in dict.fromkeys([r.commondir, r.gitdir]):
        logs = root / "logs"
        if logs.is_dir():
            files += [
                (p.relative_to(logs).as_posix(), p) for p in sorted(logs.rglob("*")) if p.is_file()
            ]
    return files


def reflog_findings(r: OpenRepo, classify: Any) -> list[Finding]:
    """Reflog entries that name commits beyond the base."""
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
                if oid == ZERO_ID or oid in seen:
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
        severity = severity_for(labels)
        title = (
            f"reflogs name commits beyond base {len(labels)} time(s) "
            f"({total} entries in {len(logs)} log(s))"
        )
    else:
        severity = "warn"
        title = f"reflogs present ({total} entries in {len(logs)} log(s)), none beyond base"
    return [
        make_finding(
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
            f"expire them (git reflog expire --expire=now --all); {SANITIZE_HINT}",
        )
    ]


def special_head_findings(r: OpenRepo, classify: Any) -> list[Finding]:
    """``ORIG_HEAD``, ``FETCH_HEAD`` ... naming commits beyond the base (or a URL)."""
    found: list[dict[str, Any]] = []
    labels: list[str] = []
    for root in dict.fromkeys([r.gitdir, r.commondir]):
        for name in SPECIAL_HEADS:
            path = root / name
            if not path.is_file():
                continue
            text = path.read_text("utf-8", "replace")
            commits = []
            for oid in dict.fromkeys(FULL_HASH.findall(text)):
                peeled, label = classify(oid)
                commits.append({"commit": peeled, "reach": label})
                if label != "inside":
                    labels.append(label)
            urls = sorted(set(re.findall(r"(?:of|from) '?(\S+://\S+|\S+@\S+:\S+)", text)))
            found.append({"file": name, "commits": commits[:SAMPLE], "urls": urls[:SAMPLE]})
    if not found:
        return []
    severity = severity_for(labels) if labels else "warn"
    names = ", ".join(f["file"] for f in found)
    return [
        make_finding(
            "audit.repo_special_head",
            severity,
            f"{names} left in the git directory"
            + (f" naming {len(labels)} commit(s) beyond base" if labels else ""),
            {"count": len(found), "files": found, "beyond": len(labels)},
            f"delete them from the git directory; {SANITIZE_HINT}",
        )
    ]


def store_findings(r: OpenRepo) -> list[Finding]:
    """The object store's other sources of history: alternates, grafts, packs without an
    index, in-progress operations and side stores."""
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
            make_finding(
                "audit.repo_alternates",
                "high",
                f"objects are borrowed from {len(alternates)} other object store(s)",
                {"count": len(alternates), "alternates": alternates[:SAMPLE]},
                f"a rollout can read every object of those stores; {SANITIZE_HINT}",
            )
        )
    if (r.commondir / "info" / "grafts").is_file():
        out.append(
            make_finding(
                "audit.repo_grafts",
                "high",
                "info/grafts rewrites the parents git shows",
                {"file": "info/grafts"},
                f"delete info/grafts; {SANITIZE_HINT}",
            )
        )
    packs = r.commondir / "objects" / "pack"
    if packs.is_dir():
        unindexed = sorted(
            p.name for p in packs.glob("*.pack") if not p.with_suffix(".idx").is_file()
        )
        if unindexed:
            out.append(
                make_finding(
                    "audit.repo_unindexed_pack",
                    "high",
                    f"{len(unindexed)} pack file(s) without an index: objects the scan cannot see",
                    {"count": len(unindexed), "packs": unindexed[:SAMPLE]},
                    f"git index-pack would reveal them; {SANITIZE_HINT}",
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
            make_finding(
                "audit.repo_stray_state",
                "high",
                f"git directory holds other history or patches: {', '.join(sorted(set(stray)))}",
                {"count": len(set(stray)), "paths": sorted(set(stray))},
                f"finish or abort the operation and delete them; {SANITIZE_HINT}",
            )
        )
    return out


def worktree_findings(r: OpenRepo, classify: Any) -> list[Finding]:
    """Other worktrees whose HEAD is beyond the base."""
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
    severity = severity_for(labels) if labels else "warn"
    return [
        make_finding(
            "audit.repo_worktree",
            severity,
            f"{len(others)} other worktree(s) share this repository"
            + (f", {len(labels)} checked out beyond base" if labels else ""),
            {"count": len(others), "worktrees": others[:SAMPLE], "beyond": len(labels)},
            f"hand rollouts a standalone repository, not a worktree; {SANITIZE_HINT}",
        )
    ]


def dangling_findings(scan: ObjectScan) -> list[Finding]:
    """Objects beyond the base that only the object store still holds."""
    if not scan.dangling_ids:
        return []
    commits = [c for c in scan.future_commits if c.id in scan.dangling_ids]
    kinds = [c.kind for c in commits]
    severity = severity_for(kinds) if commits else "high"
    total = sum(scan.dangling.values())
    detail = ", ".join(f"{n} {k}(s)" for k, n in sorted(scan.dangling.items()))
    return [
        make_finding(
            "audit.repo_unreachable_objects",
            severity,
            f"the object store holds {total} object(s) no ref reaches and base cannot reach "
            f"({detail})",
            {
                "count": total,
                "by_type": dict(scan.dangling),
                "commits": {k: kinds.count(k) for k in ("descendant", "newer", "older")},
                "samples": [asdict(c) for c in commits[:SAMPLE]],
                "objects": sorted(scan.dangling_ids)[:SAMPLE],
            },
            "git cat-file --batch-all-objects or git fsck --lost-found finds them; deleting refs "
            f"is not enough (gc --prune=now with no reflogs, or better: {SANITIZE_HINT})",
        )
    ]


def index_findings(r: OpenRepo, base: pygit2.Commit) -> list[Finding]:
    """Paths the index stages that differ from the base."""
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
        make_finding(
            "audit.repo_index",
            "high",
            f"the index stages {len(paths)} path(s) that differ from base",
            {"count": len(paths), "paths": paths[:SAMPLE]},
            f"reset the index to base (git read-tree BASE); {SANITIZE_HINT}",
        )
    ]


def checkout_findings(r: OpenRepo) -> list[Finding]:
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
            make_finding(
                "audit.repo_dirty",
                "high",
                f"the checkout differs from HEAD: {len(untracked)} untracked, "
                f"{len(changed)} changed path(s)",
                {
                    "untracked": untracked[:SAMPLE],
                    "changed": changed[:SAMPLE],
                    "counts": {"untracked": len(untracked), "changed": len(changed)},
                },
                f"hand rollouts a checkout of base and nothing else; {SANITIZE_HINT}",
            )
        )
    if ignored:
        out.append(
            make_finding(
                "audit.repo_ignored_files",
                "warn",
                f"{len(ignored)} ignored path(s) in the checkout (git status does not show them)",
                {"count": len(ignored), "paths": ignored[:SAMPLE]},
                "check that none holds a reference solution or hidden data",
            )
        )
    return out
