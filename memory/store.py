"""The memory ref: entries as commits on ``refs/evotree/memory``, with the ledger's mechanics.

One commit per append, parent = the previous head; the commit's tree is every entry so far::

    meta.json                        {"v": 1, "entries": 12}
    entries/<id[1:3]>/<id>.json      one MemoryEntry each (immutable; id = hash of its content)

The commit message is ``evotree: memory <what>`` and, as its last line, one line of JSON naming
the entries the commit added. Appends are compare-and-swap on the ref (:meth:`Git.cas_ref`, as
:meth:`evotree.core.ledger.Ledger.transact` does); a lost race re-reads the head and retries, so
concurrent writers lose nothing, and an entry whose id is already present is not added again.
An append of several entries (a promotion's verifications, an import) is one commit: it lands
whole or not at all. No worktree or index is touched; ``git push origin 'refs/evotree/*'``
carries memory with the ledger.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pygit2

from evotree.core.errors import LedgerConflict
from evotree.core.gitio import Git, Identity, RefRaceLost
from evotree.core.refs import MEMORY_REF
from evotree.memory.model import InvalidMemory, MemoryEntry

__all__ = ["AppendResult", "MemoryStore"]

STORE_SCHEMA_VERSION = 1
_MAX_ATTEMPTS = 200


def _json_bytes(data: Any) -> bytes:
    return (json.dumps(data, sort_keys=True, indent=1, ensure_ascii=False) + "\n").encode()


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

    @property
    def repo(self) -> pygit2.Repository:
        return self.git.repo

    def head(self) -> pygit2.Commit | None:
        """The newest memory commit, or None while memory is empty."""
        target = self.git.ref_target(self.ref)
        return self.repo[target] if target is not None else None

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
        return InvalidMemory(f"memory on {where or self.ref} is malformed: {what}",
                             fix="the memory ref was written by another tool; inspect it with "
                                 f"`git log -p {where or self.ref}`")

    def _items(self, tree: pygit2.Tree, where: str | None) -> Iterable[tuple[pygit2.Tree, pygit2.Object]]:
        """Every ``(shard, item)`` of ``entries/``, each of the type the layout requires (a
        shard is a tree, an item a blob named ``<id>.json``), else :class:`InvalidMemory`."""
        if "entries" not in tree:
            return
        top = tree["entries"]
        if not isinstance(top, pygit2.Tree):
            raise self._malformed(f"entries is a {top.type_str}, not a tree", where)
        for shard in top:
            if not isinstance(shard, pygit2.Tree):
                raise self._malformed(f"entries/{shard.name} is a {shard.type_str}, not a shard tree", where)
            for item in shard:
                if not isinstance(item, pygit2.Blob) or not item.name.endswith(".json"):
                    raise self._malformed(f"entries/{shard.name}/{item.name} is a {item.type_str}, "
                                          "not an entry blob <id>.json", where)
                yield shard, item

    def _entries_of(self, tree: pygit2.Tree, where: str | None = None) -> Iterable[MemoryEntry]:
        for shard, item in self._items(tree, where):
            try:
                entry = MemoryEntry.from_dict(json.loads(item.data))
            except (ValueError, TypeError, InvalidMemory) as exc:
                raise InvalidMemory(
                    f"memory entry {shard.name}/{item.name} on {where or self.ref} is unreadable: {exc}",
                    fix="the memory ref was written by another tool; inspect it with "
                        f"`git log -p {where or self.ref}`") from None
            if item.name != f"{entry.id}.json" or shard.name != _shard(entry.id):
                raise self._malformed(f"entries/{shard.name}/{item.name} holds entry {entry.id}, "
                                      f"which belongs at entries/{_shard(entry.id)}/{entry.id}.json", where)
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
            raise InvalidMemory(f"memory entry {path} on {self.ref} is unreadable: {exc}",
                                fix="the memory ref was written by another tool; inspect it with "
                                    f"`git log -p {self.ref}`") from None
        if entry.id != entry_id:
            raise self._malformed(f"{path} holds entry {entry.id}, not {entry_id}", None)
        return entry

    def commits(self) -> int:
        """How many commits memory has (one per append)."""
        head = self.head()
        if head is None:
            return 0
        count = 0
        for _ in self.repo.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL):
            count += 1
        return count

    # ------------------------------------------------------------------ writing
    def append(self, entries: list[MemoryEntry], *, actor: Identity, what: str,
               merge: pygit2.Oid | None = None) -> AppendResult:
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
        for attempt in range(_MAX_ATTEMPTS):
            head = self.head()
            present = self.ids(head.tree) if head is not None else set()
            new = [e for e in unique.values() if e.id not in present]
            skipped = [i for i in unique if i in present]
            contained = merge is None or (head is not None and (head.id == merge or
                                                                 self.repo.descendant_of(head.id, merge)))
            if not new and contained:
                return AppendResult(added=[], skipped=skipped, commit=None)
            if merge is not None and (head is None or self.repo.descendant_of(merge, head.id)):
                commit = merge  # theirs already holds ours: fast-forward
                subject = f"evotree: memory {what} (fast-forward)"
            else:
                tree = self._write_tree(head, new, len(present) + len(new))
                subject = f"evotree: memory {what}".strip()
                line = json.dumps({"v": STORE_SCHEMA_VERSION, "op": "merge" if merge is not None else "add",
                                   "ids": [e.id for e in new], "kinds": sorted({e.kind for e in new})},
                                  separators=(",", ":"))
                parents = ([head.id] if head is not None else []) + ([merge] if merge is not None else [])
                commit = self.repo.create_commit(None, signature, signature, f"{subject}\n\n{line}\n", tree,
                                                 parents)
            try:
                self.git.cas_ref(self.ref, commit, head.id if head is not None else None, subject)
            except RefRaceLost:
                if self._landed(commit):
                    return AppendResult(added=new, skipped=skipped, commit=str(commit))
                time.sleep(random.uniform(0.001, 0.005) * min(attempt + 1, 20))
                continue
            return AppendResult(added=new, skipped=skipped, commit=str(commit))
        raise LedgerConflict(
            f"could not append to {self.ref} after {_MAX_ATTEMPTS} compare-and-swap attempts",
            fix="another process is writing memory heavily; retry the command",
        )

    def _landed(self, commit: pygit2.Oid) -> bool:
        current = self.git.ref_target(self.ref)
        if current is None:
            return False
        return current == commit or self.repo.descendant_of(current, commit)

    def _write_tree(self, head: pygit2.Commit | None, new: list[MemoryEntry], total: int) -> pygit2.Oid:
        repo = self.repo
        base = head.tree if head is not None else None
        root = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
        entries_tree = repo[base["entries"].id] if base is not None and "entries" in base else None
        top = repo.TreeBuilder(entries_tree) if entries_tree is not None else repo.TreeBuilder()
        by_shard: dict[str, list[MemoryEntry]] = {}
        for entry in new:
            by_shard.setdefault(_shard(entry.id), []).append(entry)
        for shard, items in by_shard.items():
            existing = repo[entries_tree[shard].id] if entries_tree is not None and shard in entries_tree else None
            builder = repo.TreeBuilder(existing) if existing is not None else repo.TreeBuilder()
            for entry in items:
                builder.insert(f"{entry.id}.json", repo.create_blob(_json_bytes(entry.to_dict())),
                               pygit2.GIT_FILEMODE_BLOB)
            top.insert(shard, builder.write(), pygit2.GIT_FILEMODE_TREE)
        root.insert("entries", top.write(), pygit2.GIT_FILEMODE_TREE)
        meta = {"v": STORE_SCHEMA_VERSION, "entries": total}
        root.insert("meta.json", repo.create_blob(_json_bytes(meta)), pygit2.GIT_FILEMODE_BLOB)
        return root.write()
