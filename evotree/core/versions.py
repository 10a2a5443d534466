"""The version tree: branch, merge, abandon, worktrees, and the read-side views (tree, show, log).

Each verb is one function that takes a :class:`~evotree.core.workspace.Workspace` and returns a plain
dataclass; the CLI only prints them. Every write follows the same order so a failure leaves
nothing half-done: reserve the branch ref atomically, create the worktree, then append the
ledger event; undo the first two if a later step fails.
"""

from __future__ import annotations

import os

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2

from evotree.core.errors import (
    AlreadyExists,
    DirtyState,
    InvalidState,
    MergeConflict,
    UsageError,
)
from evotree.core.events import VersionAbandoned, VersionCreated, WorktreePruned, WorktreeRestored
from evotree.core.ledger import (
    Event,
    EventKind,
    LedgerEntry,
    LedgerTxn,
    VersionRecord,
    VersionStatus,
    utcnow,
)
from evotree.core.refs import CHAMPION_ALIAS, CHAMPION_REF, VersionId, branch_name, branch_ref
from evotree.core.workspace import Workspace

if TYPE_CHECKING:
    from evotree.core.gitio import Identity

__all__ = [
    "create_version",
    "merge_versions",
    "abandon_version",
    "prune_worktrees",
    "restore_worktree",
    "tree_view",
    "show_version",
    "log_entries",
    "version_at",
    "TreeView",
    "VersionView",
    "VersionDetail",
    "PruneResult",
]

_MAX_AUTO_ID_TRIES = 10_000


def version_at(ws: Workspace, start: str | Path) -> str | None:
    """The version whose worktree holds ``start`` (a folder), or None (the main checkout, elsewhere)."""
    here = Path(start).resolve()
    for record in ws.ledger.versions():
        if not record.worktree:
            continue
        root = ws.absolute(record.worktree).resolve()
        if here == root or root in here.parents:
            return record.id
    return None


# ---------------------------------------------------------------------------- creating
def create_version(
    ws: Workspace,
    *,
    hypothesis: str,
    parent: str = CHAMPION_ALIAS,
    name: str | None = None,
    worktree: str | Path | None = None,
    creator: Identity | None = None,
    worktree_parent: Path | None = None,
) -> VersionRecord:
    """``evotree branch``: a new version from ``parent``'s tip, with its branch and worktree.

    ``worktree_parent``: make the worktree ``worktree_parent/<id>`` instead of the configured
    folder's ``<id>`` (``evotree agent``: a session's own folder, the only one its sandbox binds).

    ``creator`` is recorded as ``created_by`` and the event's actor instead of the git identity
    (``evotree serve --as NAME``: the principal comes from the server, not from the environment).
    """
    parent_record = ws.resolve(parent)
    tip = _champion_commit(ws) if parent_record.id == ws.champion() else None
    tip = tip if tip is not None else _branch_tip(ws, parent_record)
    return _new_version(
        ws,
        commit=tip,
        parents=[parent_record.id],
        hypothesis=hypothesis,
        name=name,
        worktree=worktree,
        creator=creator,
        worktree_parent=worktree_parent,
    )


def merge_versions(
    ws: Workspace,
    first: str,
    second: str,
    *,
    message: str,
    name: str | None = None,
    worktree: str | Path | None = None,
    creator: Identity | None = None,
) -> VersionRecord:
    """``evotree merge A B``: a new version whose commit merges both tips (the tree becomes a DAG).

    The champion's side is its promoted (signed) commit, never a later tip of its branch, as in
    :func:`create_version`; ``creator`` is recorded as ``created_by`` (a principal), as there.
    A conflict raises :class:`MergeConflict` listing the files; nothing is created.
    """
    a, b = ws.resolve(first), ws.resolve(second)
    if a.id == b.id:
        raise InvalidState(f"cannot merge {a.id} with itself", fix="name two different versions")
    _require_message(message, "merge message (-m)")
    champion = ws.champion()
    tip_a, tip_b = (
        (_champion_commit(ws) if r.id == champion else None) or _branch_tip(ws, r) for r in (a, b)
    )
    repo = ws.git.repo
    index = repo.merge_commits(tip_a, tip_b)
    if index.conflicts is not None:
        files = sorted(
            {entry.path for triple in index.conflicts for entry in triple if entry is not None}
        )
        raise MergeConflict(
            f"merging {a.id} and {b.id} conflicts in {len(files)} file(s): {', '.join(files)}",
            fix=f"resolve it by hand: branch from {a.id}, `git merge {branch_name(b.id)}` in its "
            "worktree, fix the files and commit",
            files=files,
        )
    tree = index.write_tree(repo)
    signature = (creator if creator is not None else ws.git.identity()).signature()
    commit = repo.create_commit(
        None,
        signature,
        signature,
        f"evotree: merge {a.id} and {b.id}\n\n{message.strip()}\n",
        tree,
        [tip_a, tip_b],
    )
    return _new_version(
        ws,
        commit=commit,
        parents=[a.id, b.id],
        hypothesis=message,
        name=name,
        worktree=worktree,
        creator=creator,
    )


def _new_version(
    ws: Workspace,
    *,
    commit: pygit2.Oid,
    parents: list[str],
    hypothesis: str,
    name: str | None,
    worktree: str | Path | None,
    creator: Identity | None = None,
    worktree_parent: Path | None = None,
) -> VersionRecord:
    git = ws.git
    hypothesis = _require_message(hypothesis, "hypothesis (-m)")
    actor = creator if creator is not None else git.identity()
    explicit = VersionId.parse(name) if name is not None else None
    if explicit is not None:
        if ws.ledger.snapshot().version(explicit.name) is not None:
            raise AlreadyExists(
                f"version {explicit.name} already exists", fix="choose another --name or omit it"
            )
        if worktree is None:
            _check_free_path(ws.worktree_path(explicit.name))
    if worktree is not None:
        _check_worktree_location(ws, Path(worktree).resolve())
        _check_free_path(Path(worktree).resolve())

    def default_path(version: str) -> Path:
        if worktree_parent is not None:
            return Path(worktree_parent).resolve() / version
        return ws.worktree_path(version)

    version_id = _reserve_branch(
        ws, commit, explicit, taken=None if worktree is not None else default_path
    )
    path = Path(worktree).resolve() if worktree is not None else default_path(version_id)
    created_worktree = False
    try:
        _check_free_path(path)
        ws.state_dir  # noqa: B018 - make sure .evotree/ (and its .gitignore) exists first
        path.parent.mkdir(parents=True, exist_ok=True)
        created_worktree = True  # the path was free: whatever is there from here on is ours
        git.add_worktree(path, branch_name(version_id))
        now = utcnow()
        record = VersionRecord(
            id=version_id,
            parents=parents,
            branch=branch_name(version_id),
            status=VersionStatus.ACTIVE.value,
            hypothesis=hypothesis,
            created_by=str(actor),
            created_at=now,
            base_commit=str(commit),
            worktree=ws.display_path(path),
        )

        def change(txn: LedgerTxn) -> Event:
            if txn.version(version_id) is not None:
                raise AlreadyExists(
                    f"version {version_id} already exists in the ledger",
                    fix="choose another --name; nothing was created",
                )
            for parent in parents:
                txn.require(parent)
            number = VersionId(version_id).number
            if number is not None and number > int(txn.meta.get("last_number", 0)):
                txn.meta["last_number"] = number
            txn.put(record)
            created = VersionCreated(
                parents=parents,
                base_commit=str(commit),
                hypothesis=hypothesis,
                worktree=record.worktree,
            )
            return Event.of(created, version=version_id, actor=str(actor), at=now)

        ws.ledger.transact(change, actor=actor)
    except BaseException:
        if created_worktree:
            git.discard_worktree(path)
        git.delete_ref(branch_ref(version_id))
        raise
    return record


def _reserve_branch(
    ws: Workspace,
    commit: pygit2.Oid,
    explicit: VersionId | None,
    *,
    taken: Callable[[str], Path] | None = None,
) -> str:
    """Create ``refs/heads/evotree/<id>`` atomically; the ref is the id's reservation.

    Automatic ids start after the ledger's highest number and skip refs that exist (another
    process reserved it a moment ago, or a branch was left behind), so concurrent
    ``evotree branch`` calls always get distinct ids. With ``taken`` (an id's default worktree
    path), they also skip ids whose folder is there and not empty: a process that died between
    its checkout and its ledger entry leaves one, and it would otherwise fail every later
    ``evotree branch`` on the same id. A link there is not skipped: it is refused, and said
    (whoever can write the worktrees folder -- an agent -- planted it).
    """
    git = ws.git
    if explicit is not None:
        if not git.create_ref(branch_ref(explicit.name), commit, f"evotree branch {explicit.name}"):
            raise AlreadyExists(
                f"branch {branch_name(explicit.name)} already exists",
                fix="choose another --name, or delete the stray branch with "
                f"`git branch -D {branch_name(explicit.name)}` if it is not needed",
            )
        return explicit.name
    number = int(ws.ledger.meta().get("last_number", 0)) + 1
    for _ in range(_MAX_AUTO_ID_TRIES):
        candidate = f"v{number}"
        if taken is not None and _path_in_use(taken(candidate)):
            number += 1
            continue
        if git.create_ref(branch_ref(candidate), commit, f"evotree branch {candidate}"):
            return candidate
        number += 1
    raise AlreadyExists("could not find a free version id", fix="delete stray evotree/v* branches")


def _check_worktree_location(ws: Workspace, path: Path) -> None:
    """Refuse a ``--worktree`` inside git's own directory (``.git/...``) or at the repository's root."""
    git_dir = ws.git._common_dir().resolve()
    if path == git_dir or git_dir in path.parents or ".git" in path.parts:
        raise UsageError(
            f"--worktree {path} is inside git's own directory ({git_dir}): a worktree there would be "
            "mistaken for repository data",
            fix="pass a path outside .git, or omit --worktree",
            path=str(path),
        )
    if path == ws.root:
        raise UsageError(
            f"--worktree {path} is the repository's own working tree",
            fix="pass a new folder, or omit --worktree",
            path=str(path),
        )


def _path_in_use(path: Path) -> bool:
    """Whether ``path`` is a leftover: a file, or a folder (not a link) with contents. A link
    is not one: it is refused where the worktree would go (_check_free_path)."""
    if path.is_symlink():
        return False
    if path.is_file():
        return True
    try:
        return path.is_dir() and any(path.iterdir())
    except OSError:
        return True


def _check_free_path(path: Path) -> None:
    """Refuse a worktree path that is taken: a file, a folder with contents, or a symbolic link
    (whoever can write the worktrees folder -- an agent in ``evotree agent`` -- could otherwise
    make evotree check files out wherever the link points)."""
    if path.is_symlink():
        raise AlreadyExists(
            f"worktree path {path} is a symbolic link (to {os.readlink(path)}): evotree never checks out through one",
            fix=f"remove the link ({path}) and retry",
            path=str(path),
        )
    if path.exists() and (path.is_file() or any(path.iterdir())):
        raise AlreadyExists(
            f"worktree path {path} is already taken",
            fix="pass another --worktree path, or move what is there",
            path=str(path),
        )


def _require_message(text: str, what: str) -> str:
    text = (text or "").strip()
    if not text:
        raise InvalidState(
            f"a {what} is required and must not be empty", fix='pass -m "what you expect and why"'
        )
    return text


def _champion_commit(ws: Workspace) -> pygit2.Oid | None:
    """The champion's promoted commit (the signed one a verb pinned, else the champion ref), not its
    branch tip: a commit that landed on the branch after the review is not part of the champion."""
    if ws.pinned_commit:
        return ws.git.repo[ws.pinned_commit].id
    return ws.git.ref_target(CHAMPION_REF)


def _branch_tip(ws: Workspace, record: VersionRecord) -> pygit2.Oid:
    tip = ws.git.ref_target(branch_ref(record.id))
    if tip is None:
        raise InvalidState(
            f"branch {record.branch} of {record.id} is missing from this repository",
            fix=f"fetch it (git fetch origin {branch_ref(record.id)}:{branch_ref(record.id)}) or "
            f"restore it: git branch {record.branch} {record.base_commit}",
        )
    return tip


# ---------------------------------------------------------------------------- abandon / worktrees
def abandon_version(
    ws: Workspace, version: str, *, reason: str, force: bool = False
) -> VersionRecord:
    """``evotree abandon``: record why, remove the worktree, keep the branch as negative evidence."""
    reason = _require_message(reason, "reason (--reason)")
    record = ws.resolve(version)
    actor = ws.git.identity()
    _check_abandonable(ws, record)
    removed = _remove_worktree_of(ws, record, force=force)

    def change(txn: LedgerTxn) -> Event:
        current = txn.require(record.id)
        _check_abandonable(ws, current, txn.meta.get("champion"))
        current.status = VersionStatus.ABANDONED.value
        current.reason = reason
        current.worktree = None
        current.updated_at = utcnow()
        txn.put(current)
        abandoned = VersionAbandoned(reason=reason, worktree_removed=removed)
        return Event.of(abandoned, version=record.id, actor=str(actor))

    ws.ledger.transact(change, actor=actor)
    return ws.resolve(record.id)


def _check_abandonable(ws: Workspace, record: VersionRecord, champion: Any = None) -> None:
    champion = champion if champion is not None else ws.champion()
    if record.id == champion:
        raise InvalidState(
            f"{record.id} is the champion and cannot be abandoned",
            fix="promote another version first",
        )
    if record.status == VersionStatus.ABANDONED.value:
        raise InvalidState(
            f"{record.id} is already abandoned ({record.reason})", fix="nothing to do"
        )


def _remove_worktree_of(ws: Workspace, record: VersionRecord, *, force: bool) -> str | None:
    """Remove the version's worktree if it exists; refuse a dirty one unless ``force``."""
    if not record.worktree:
        return None
    path = ws.absolute(record.worktree)
    if not path.exists():
        ws.git.prune_worktrees()
        return None
    dirty = ws.git.status_porcelain(path)
    if dirty and not force:
        shown = ", ".join(dirty[:10]) + (" …" if len(dirty) > 10 else "")
        raise DirtyState(
            f"the worktree of {record.id} ({record.worktree}) has uncommitted changes: {shown}",
            fix=f"commit them in {record.worktree} (they stay on {record.branch}), or pass --force to discard them",
            paths=dirty,
        )
    ws.git.remove_worktree(path, force=bool(dirty))
    return record.worktree


@dataclass
class PruneResult:
    """What ``evotree worktree prune`` removed, skipped and forgot (schema: ``prune.schema.json``)."""

    removed: list[str] = field(default_factory=list)
    skipped_dirty: dict[str, list[str]] = field(default_factory=dict)
    forgotten: list[str] = field(default_factory=list)


def prune_worktrees(ws: Workspace, *, force: bool = False) -> PruneResult:
    """Remove worktrees of abandoned/failed versions; forget recorded worktrees that are gone."""
    actor = ws.git.identity()
    result = PruneResult()
    for record in sorted(ws.ledger.versions(), key=_sort_key):
        if not record.worktree:
            continue
        path = ws.absolute(record.worktree)
        if path.exists():
            if not VersionStatus(record.status).is_negative_evidence:
                continue
            try:
                _remove_worktree_of(ws, record, force=force)
            except DirtyState as exc:
                result.skipped_dirty[record.id] = list(exc.details.get("paths", []))
                continue
            result.removed.append(record.id)
        else:
            result.forgotten.append(record.id)
        _record_worktree(
            ws, record.id, None, EventKind.WORKTREE_PRUNED, actor, missing=not path.exists()
        )
    ws.git.prune_worktrees()
    return result


def restore_worktree(
    ws: Workspace, version: str, *, worktree: str | Path | None = None
) -> VersionRecord:
    """``evotree worktree restore V``: give a version (abandoned ones too) a worktree again."""
    record = ws.resolve(version)
    actor = ws.git.identity()
    if record.worktree and ws.absolute(record.worktree).exists():
        raise AlreadyExists(
            f"{record.id} already has a worktree at {record.worktree}",
            fix="use it, or prune it first",
        )
    _branch_tip(ws, record)
    path = Path(worktree).resolve() if worktree is not None else ws.worktree_path(record.id)
    if worktree is not None:
        _check_worktree_location(ws, path)
    _check_free_path(path)
    ws.git.prune_worktrees()  # forget stale registrations of this path
    path.parent.mkdir(parents=True, exist_ok=True)
    ws.git.add_worktree(path, record.branch)
    try:
        _record_worktree(ws, record.id, ws.display_path(path), EventKind.WORKTREE_RESTORED, actor)
    except BaseException:
        ws.git.discard_worktree(path)
        raise
    return ws.resolve(record.id)


def _record_worktree(
    ws: Workspace, version: str, worktree: str | None, kind: EventKind, actor: Any, **data: Any
) -> LedgerEntry:
    def change(txn: LedgerTxn) -> Event:
        current = txn.require(version)
        current.worktree = worktree
        current.updated_at = utcnow()
        txn.put(current)
        payload = (
            WorktreePruned(worktree=worktree, **data)
            if kind is EventKind.WORKTREE_PRUNED
            else WorktreeRestored(worktree=worktree, **data)
        )
        return Event.of(payload, version=version, actor=str(actor))

    return ws.ledger.transact(change, actor=actor)


# ---------------------------------------------------------------------------- read side
@dataclass
class VersionView:
    """One row of ``evotree tree --json`` (schema: ``tree.schema.json``)."""

    id: str
    parent: str | None
    parents: list[str]
    branch: str
    status: str
    hypothesis: str
    champion: bool
    created_by: str
    created_at: str
    base_commit: str
    worktree: str | None
    headline: dict[str, Any] | None
    reason: str | None
    children: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TreeView:
    """The whole tree, oldest version first."""

    champion: str
    versions: list[VersionView]

    def to_dict(self) -> dict[str, Any]:
        # a shallow dict per row: asdict() deep-copies and is 10x slower on large trees
        return {
            "v": 1,
            "champion": self.champion,
            "versions": [dict(v.__dict__) for v in self.versions],
        }


def _sort_key(record: VersionRecord) -> tuple[Any, ...]:
    number = VersionId(record.id).number
    return (record.created_at, number if number is not None else -1, record.id)


def tree_view(ws: Workspace) -> TreeView:
    """Every version with its parent, status, headline score and champion marker."""
    snapshot = ws.ledger.snapshot()
    champion = str(snapshot.meta.get("champion"))
    records = sorted(ws.ledger.versions(), key=_sort_key)
    children: dict[str, list[str]] = {r.id: [] for r in records}
    for record in records:
        for parent in record.parents:
            children.setdefault(parent, []).append(record.id)
    spec = ws.config.eval.normalization
    views = [
        VersionView(
            id=r.id,
            parent=r.parent,
            parents=list(r.parents),
            branch=r.branch,
            status=r.status,
            hypothesis=r.hypothesis,
            champion=r.id == champion,
            created_by=r.created_by,
            created_at=r.created_at,
            base_commit=r.base_commit,
            worktree=r.worktree,
            headline=_normalized_headline(r.headline, spec, r.runs),
            reason=r.reason,
            children=children.get(r.id, []),
        )
        for r in records
    ]
    return TreeView(champion=champion, versions=views)


def _normalized_headline(
    headline: dict[str, Any] | None, spec: Any, runs: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """``headline`` with ``normalized`` beside the raw ``value`` when ``[eval.normalize]`` is set;
    with ``failed_as_zero`` it is AI4AI's mean over the formal runs, a failed one counting 0."""
    if headline is None or spec is None:
        return headline
    from evotree.core.normalize import normalize_score, normalized_mean

    if getattr(spec, "failed_as_zero", False) and runs:
        pairs = [
            (r.get("status"), (r.get("headline") or {}).get("value"))
            for r in runs
            if r.get("status") not in ("ingested", "cancelled", "running")
        ]
        return {**headline, "normalized": normalized_mean(pairs, spec)}
    return {**headline, "normalized": normalize_score(headline.get("value"), spec)}


@dataclass
class VersionDetail:
    """``evotree show V`` (schema: ``show.schema.json``)."""

    version: VersionView
    tip: str | None
    commits: list[dict[str, str]]
    worktree_exists: bool
    uncommitted: list[str]
    events: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["v"] = 1
        return out


def show_version(ws: Workspace, version: str, *, max_commits: int = 50) -> VersionDetail:
    """A version's record, its commits since it was branched, worktree state and ledger events."""
    record = ws.resolve(version)
    view = next(v for v in tree_view(ws).versions if v.id == record.id)
    repo = ws.git.repo
    tip = ws.git.ref_target(branch_ref(record.id))
    commits: list[dict[str, str]] = []
    if tip is not None:
        walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL)
        try:
            walker.hide(pygit2.Oid(hex=record.base_commit))
        except (KeyError, ValueError, pygit2.GitError):
            pass
        for commit in walker:
            if len(commits) >= max_commits:
                break
            commits.append(
                {
                    "commit": str(commit.id),
                    "summary": commit.message.splitlines()[0] if commit.message else "",
                    "author": f"{commit.author.name} <{commit.author.email}>",
                }
            )
    exists = bool(record.worktree) and ws.absolute(record.worktree or "").exists()
    uncommitted = ws.git.status_porcelain(ws.absolute(record.worktree or "")) if exists else []
    events = [{"commit": e.commit, **asdict(e.event)} for e in ws.ledger.entries(version=record.id)]
    return VersionDetail(
        version=view,
        tip=str(tip) if tip is not None else None,
        commits=commits,
        worktree_exists=exists,
        uncommitted=uncommitted,
        events=events,
    )


def log_entries(
    ws: Workspace, *, version: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """Ledger events newest first (schema: ``log.schema.json``)."""
    if version is not None:
        version = ws.resolve(version).id
    return [
        {"commit": e.commit, **asdict(e.event)}
        for e in ws.ledger.entries(version=version, limit=limit)
    ]
