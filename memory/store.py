"""The memory ref: entries as commits on ``refs/evotree/memory``, with the ledger's mechanics.

One commit per append, parent = the previous head; the commit's tree is every entry so far::

    meta.json                        {"v": 1, "entries": 12}
    entries/<id[1:3]>/<id>.json      one MemoryEntry each (immutable; id = hash of its content)

The commit message is ``evotree: memory <what>`` and, as its last line, one line of JSON naming
the entries the commit added. Appends go through the ledger's store
(:class:`evotree.core.refstore.RefStore`: compare-and-swap on the ref, the sharded tree, the strict
walk); a lost race re-reads the head and retries, so concurrent writers lose nothing, and an
entry whose id is already present is not added again.
An append of several entries (a promotion's verifications, an import) is one commit: it lands
whole or not at all. No worktree or index is touched; ``git push origin 'refs/evotree/*'``
carries memory with the ledger.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pygit2

from evotree.core.gitio import Git, Identity
from evotree.core.refs import MEMORY_REF
from evotree.core.refstore import Prepared, RefStore, json_bytes, sharded_blobs, write_sharded_tree
from evotree.memory.model import InvalidMemory, MemoryEntry

__all__ = ["AppendResult", "MemoryStore"]

STORE_SCHEMA_VERSION = 1


def _json_bytes(data: Any) -> bytes:
    # memory's stored form since its first release (non-ASCII kept as is)
    return json_bytes(data, ensure_ascii=False, allow_nan=True)


def _shard(entry_id: str) -> str:
    return entry_id[1:3]


@dataclass
class AppendResult:
    """What an append did: the entries it added, those already present, and its commit."""

    added: list[MemoryEntry]
    skipped: list[str]
    commit: str | None


class MemoryStore:
    """Reads and appends the memory of one repository."""

    def __init__(self, git: Git, ref: str = MEMORY_REF) -> None:
        self.git = git
        self.ref = ref
        self.store = RefStore(
            git, ref, busy_fix="another process is writing memory heavily; retry the command"
        )

    @property
    def repo(self) -> pygit2.Repository:
        return self.git.repo

    def head(self) -> pygit2.Commit | None:
        """The newest memory commit, or None while memory is empty."""
        return self.store.head()

    # ------------------------------------------------------------------ reading
    def entries(self) -> list[MemoryEntry]:
        """Every entry, oldest first (by ``created_at``, then id)."""
        head = self.head()
        if head is None:
            return []
        return sorted(self._entries_of(head.tree), key=lambda e: (e.created_at, e.id))

    def entries_of(self, tree: pygit2.Tree, where: str) -> list[MemoryEntry]:
        """Every entry in a memory tree (another ref's, e.g. a clone's), each validated."""
        return list(self._entries_of(tree, where))

    def _malformed(self, what: str, where: str | None) -> InvalidMemory:
        return InvalidMemory(
            f"memory on {where or self.ref} is malformed: {what}",
            fix="the memory ref was written by another tool; inspect it with "
            f"`git log -p {where or self.ref}`",
        )

    def _items(
        self, tree: pygit2.Tree, where: str | None
    ) -> Iterable[tuple[pygit2.Tree, pygit2.Object]]:
        """Every ``(shard, item)`` of ``entries/``, each of the type the layout requires (a
        shard is a tree, an item a blob named ``<id>.json``), else :class:`InvalidMemory`."""
        return sharded_blobs(tree, "entries", lambda what: self._malformed(what, where))

    def _entries_of(self, tree: pygit2.Tree, where: str | None = None) -> Iterable[MemoryEntry]:
        for shard, item in self._items(tree, where):
            try:
                entry = MemoryEntry.from_dict(json.loads(item.data))
            except (ValueError, TypeError, InvalidMemory) as exc:
                raise InvalidMemory(
                    f"memory entry {shard.name}/{item.name} on {where or self.ref} is unreadable: {exc}",
                    fix="the memory ref was written by another tool; inspect it with "
                    f"`git log -p {where or self.ref}`",
                ) from None
            if item.name != f"{entry.id}.json" or shard.name != _shard(entry.id):
                raise self._malformed(
                    f"entries/{shard.name}/{item.name} holds entry {entry.id}, "
                    f"which belongs at entries/{_shard(entry.id)}/{entry.id}.json",
                    where,
                )
            yield entry

    def ids(self, tree: pygit2.Tree | None = None) -> set[str]:
        """The ids present (cheap: names only, no blob is parsed; object types are checked)."""
        if tree is None:
            head = self.head()
            if head is None:
                return set()
            tree = head.tree
        return {item.name.removesuffix(".json") for _, item in self._items(tree, None)}

    def get(self, entry_id: str) -> MemoryEntry | None:
        """The entry with exactly this id, or None; :class:`InvalidMemory` if what is stored there
        is not that entry."""
        head = self.head()
        if head is None:
            return None
        path = f"entries/{_shard(entry_id)}/{entry_id}.json"
        try:
            blob = head.tree[path]
        except (KeyError, ValueError):
            return None
        if not isinstance(blob, pygit2.Blob):
            raise self._malformed(f"{path} is a {blob.type_str}, not an entry blob", None)
        try:
            entry = MemoryEntry.from_dict(json.loads(blob.data))
        except (ValueError, TypeError, InvalidMemory) as exc:
            raise InvalidMemory(
                f"memory entry {path} on {self.ref} is unreadable: {exc}",
                fix="the memory ref was written by another tool; inspect it with "
                f"`git log -p {self.ref}`",
            ) from None
        if entry.id != entry_id:
            raise self._malformed(f"{path} holds entry {entry.id}, not {entry_id}", None)
        return entry

    def commits(self) -> int:
        """How many commits memory has (one per append)."""
        return self.store.count()

    # ------------------------------------------------------------------ writing
    def append(
        self,
        entries: list[MemoryEntry],
        *,
        actor: Identity,
        what: str,
        merge: pygit2.Oid | None = None,
    ) -> AppendResult:
        """Add ``entries`` in one commit (those already present are skipped), retrying lost races.

        ``what`` is the commit subject's tail (``promotion v3``). Nothing is written when every
        entry is already present. ``merge``: another memory commit whose entries these are (a
        diverged clone's memory); it becomes a second parent, so the result fast-forwards both
        sides (or the ref simply moves to it when it already contains ours).
        """
        unique: dict[str, MemoryEntry] = {}
        for entry in entries:
            unique.setdefault(entry.id, entry)
        signature = actor.signature()

        def prepare(head: pygit2.Commit | None) -> Prepared[AppendResult]:
            present = self.ids(head.tree) if head is not None else set()
            new = [e for e in unique.values() if e.id not in present]
            skipped = [i for i in unique if i in present]
            contained = merge is None or (
                head is not None and (head.id == merge or self.repo.descendant_of(head.id, merge))
            )
            if not new and contained:
                return Prepared(None, AppendResult(added=[], skipped=skipped, commit=None))
            if merge is not None and (head is None or self.repo.descendant_of(merge, head.id)):
                commit = merge  # theirs already holds ours: fast-forward
                subject = f"evotree: memory {what} (fast-forward)"
            else:
                commit, subject = self._new_commit(
                    head, new, len(present) + len(new), signature, what=what, merge=merge
                )
            return Prepared(
                commit, AppendResult(added=new, skipped=skipped, commit=str(commit)), subject
            )

        return self.store.update(prepare)

    def _new_commit(
        self,
        head: pygit2.Commit | None,
        new: list[MemoryEntry],
        total: int,
        signature: pygit2.Signature,
        *,
        what: str,
        merge: pygit2.Oid | None,
    ) -> tuple[pygit2.Oid, str]:
        """The commit adding ``new`` on ``head`` (and ``merge`` as a second parent), its subject."""
        shards: dict[str, dict[str, bytes]] = {}
        for entry in new:
            blob = _json_bytes(entry.to_dict())
            shards.setdefault(_shard(entry.id), {})[f"{entry.id}.json"] = blob
        meta = {"v": STORE_SCHEMA_VERSION, "entries": total}
        tree = write_sharded_tree(
            self.repo,
            head.tree if head is not None else None,
            "entries",
            shards,
            {"meta.json": _json_bytes(meta)},
        )
        subject = f"evotree: memory {what}".strip()
        line = json.dumps(
            {
                "v": STORE_SCHEMA_VERSION,
                "op": "merge" if merge is not None else "add",
                "ids": [e.id for e in new],
                "kinds": sorted({e.kind for e in new}),
            },
            separators=(",", ":"),
        )
        parents = ([head.id] if head is not None else []) + ([merge] if merge is not None else [])
        commit = self.store.new_commit(signature, f"{subject}\n\n{line}\n", tree, parents)
        return commit, subject
