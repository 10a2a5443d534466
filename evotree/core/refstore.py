"""One store on a git ref: the mechanics the ledger, memory and the judge store share.

A store is a chain of commits on one ref (``refs/evotree/ledger``, ``refs/evotree/memory``,
``refs/evotree/judge``); no worktree or index is ever touched. What this module holds:

- :class:`RefStore`: the ref's head, the walk of its commits (:func:`first_parents`), and
  :meth:`RefStore.update`, the one compare-and-swap loop: read the head, let the caller
  prepare a commit on it, move the ref only if it still points at that head
  (:meth:`Git.cas_ref`); on a lost race prepare again on the new head, so concurrent writers
  never lose or duplicate a commit.
- :meth:`RefStore.follow`: one compare-and-swap to a commit decided elsewhere (the judge ref
  follows the ledger's signed record of it): no retry, a lost race is the caller's to judge.
- :func:`json_bytes`: the canonical JSON of a stored record (sorted keys, indent 1, newline).
- :func:`write_sharded_tree`: a new root tree with blobs added under ``<folder>/<shard>/`` and
  top-level files replaced, reusing every untouched tree of the base (each append writes a few
  small trees, not one tree of every record).
- :func:`sharded_blobs`: the strict walk of such a folder (a shard is a tree, an item a blob
  named ``*.json``), raising the caller's error naming the first thing out of place.
- :func:`write_file_tree`: a tree from repository-relative paths (the judge store's shape).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pygit2

from evotree.core.errors import EvotreeError, LedgerConflict
from evotree.core.gitio import Git, RefRaceLost

__all__ = [
    "MAX_ATTEMPTS",
    "Prepared",
    "RefStore",
    "first_parents",
    "json_bytes",
    "sharded_blobs",
    "write_file_tree",
    "write_sharded_tree",
]

#: compare-and-swap attempts before an append gives up (LedgerConflict)
MAX_ATTEMPTS = 200

T = TypeVar("T")


def json_bytes(data: Any, *, ensure_ascii: bool = True, allow_nan: bool = False) -> bytes:
    """The stored form of one JSON record: sorted keys, indent 1, a final newline.

    ``allow_nan=False`` (the ledger's): Infinity or NaN never enter the store (a sum of huge spends
    once did). Memory keeps its own historical form (``ensure_ascii=False``, ``allow_nan=True``) so
    that existing refs read and re-write byte for byte.
    """
    text = json.dumps(
        data, sort_keys=True, indent=1, ensure_ascii=ensure_ascii, allow_nan=allow_nan
    )
    return (text + "\n").encode()


@dataclass
class Prepared(Generic[T]):
    """What one attempt of :meth:`RefStore.update` prepared on a head.

    ``commit``: the commit the ref should move to (None: nothing to write, ``result`` is returned
    as it is); ``subject``: the reflog message; ``result``: what the update returns once the ref
    holds ``commit``.
    """

    commit: pygit2.Oid | None
    result: T
    subject: str = ""


class RefStore:
    """A chain of commits on one ref, appended to by compare-and-swap."""

    def __init__(
        self,
        git: Git,
        ref: str,
        *,
        busy_fix: str = "retry the command",
        attempts: int = MAX_ATTEMPTS,
    ) -> None:
        self.git = git
        self.ref = ref
        #: the ``fix`` of the LedgerConflict raised when every attempt lost its race
        self.busy_fix = busy_fix
        self.attempts = attempts

    @property
    def repo(self) -> pygit2.Repository:
        return self.git.repo

    def head(self) -> pygit2.Commit | None:
        """The ref's commit, or None while the ref does not exist."""
        target = self.git.ref_target(self.ref)
        return self.repo[target] if target is not None else None

    def exists(self) -> bool:
        return self.git.ref_target(self.ref) is not None

    def landed(self, commit: pygit2.Oid) -> bool:
        """True when ``commit`` is on the ref (its head, or an ancestor of it)."""
        current = self.git.ref_target(self.ref)
        if current is None:
            return False
        return current == commit or self.repo.descendant_of(current, commit)

    def new_commit(
        self, signature: pygit2.Signature, message: str, tree: pygit2.Oid, parents: list[pygit2.Oid]
    ) -> pygit2.Oid:
        """A commit object (no ref moved) by ``signature`` as author and committer."""
        return self.repo.create_commit(None, signature, signature, message, tree, parents)

    def update(self, prepare: Callable[[pygit2.Commit | None], Prepared[T]]) -> T:
        """Move the ref to what ``prepare`` builds on its head, retrying lost races.

        ``prepare`` is called with the current head (None: no ref yet) and again on the new head
        after a lost race, so it must have no side effect outside the objects it writes; it may
        raise to abort (nothing is moved). When the ref moved to our commit but a later step failed
        (e.g. the reflog append, which takes its own lock), the commit is on the ref: it counts as
        written and is not appended twice.
        """
        for attempt in range(self.attempts):
            head = self.head()
            prepared = prepare(head)
            if prepared.commit is None:
                return prepared.result
            try:
                self.git.cas_ref(
                    self.ref,
                    prepared.commit,
                    head.id if head is not None else None,
                    prepared.subject,
                )
            except RefRaceLost:
                if self.landed(prepared.commit):
                    return prepared.result
                time.sleep(random.uniform(0.001, 0.005) * min(attempt + 1, 20))
                continue
            return prepared.result
        raise LedgerConflict(
            f"could not append to {self.ref} after {self.attempts} compare-and-swap attempts",
            fix=self.busy_fix,
        )

    def follow(self, commit: pygit2.Oid, expected: pygit2.Oid | None, subject: str) -> None:
        """Move the ref from ``expected`` to ``commit`` once, by compare-and-swap.

        For a ref that mirrors a decision recorded elsewhere (the judge ref follows the ledger's
        ``judge`` in force): a lost race is not retried, since someone else moving the ref is
        tampering the caller reports; raises :class:`RefRaceLost`.
        """
        self.git.cas_ref(self.ref, commit, expected, subject)

    def first_parents(self) -> Iterator[pygit2.Commit]:
        """The ref's commits, newest first, back to the first (first parents only)."""
        head = self.head()
        return first_parents(head) if head is not None else iter(())

    def count(self) -> int:
        """How many commits the ref reaches (every parent, merges included)."""
        head = self.head()
        if head is None:
            return 0
        return sum(1 for _ in self.repo.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL))


def first_parents(head: pygit2.Commit) -> Iterator[pygit2.Commit]:
    """``head`` and its first parents back to the root commit, newest first."""
    commit: pygit2.Commit | None = head
    while commit is not None:
        yield commit
        commit = commit.parents[0] if commit.parents else None


def write_sharded_tree(
    repo: pygit2.Repository,
    base: pygit2.Tree | None,
    folder: str,
    shards: Mapping[str, Mapping[str, bytes]],
    files: Mapping[str, bytes],
) -> pygit2.Oid:
    """``base`` with ``folder/<shard>/<name>`` added or replaced for every blob of ``shards``
    (shard -> name -> bytes) and each top-level file of ``files`` replaced; the new root tree.

    ``folder`` is always written (an empty tree when there is nothing in it yet), as both stores
    always did; every tree ``shards`` does not touch is reused as it is.
    """
    root = repo.TreeBuilder(base) if base is not None else repo.TreeBuilder()
    top_tree = repo[base[folder].id] if base is not None and folder in base else None
    top = repo.TreeBuilder(top_tree) if top_tree is not None else repo.TreeBuilder()
    for shard, blobs in shards.items():
        existing = repo[top_tree[shard].id] if top_tree is not None and shard in top_tree else None
        builder = repo.TreeBuilder(existing) if existing is not None else repo.TreeBuilder()
        for name, data in blobs.items():
            builder.insert(name, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
        top.insert(shard, builder.write(), pygit2.GIT_FILEMODE_TREE)
    root.insert(folder, top.write(), pygit2.GIT_FILEMODE_TREE)
    for name, data in files.items():
        root.insert(name, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
    return root.write()


def sharded_blobs(
    tree: pygit2.Tree, folder: str, malformed: Callable[[str], Exception]
) -> Iterator[tuple[pygit2.Tree, pygit2.Blob]]:
    """Every ``(shard, item)`` under ``tree``'s ``folder``, each of the type the layout requires
    (``folder`` and each shard a tree, each item a blob named ``<id>.json``); otherwise
    ``malformed(what)`` is raised, ``what`` naming the path and what is there."""
    if folder not in tree:
        return
    top = tree[folder]
    if not isinstance(top, pygit2.Tree):
        raise malformed(f"{folder} is a {top.type_str}, not a tree")
    for shard in top:
        if not isinstance(shard, pygit2.Tree):
            raise malformed(f"{folder}/{shard.name} is a {shard.type_str}, not a shard tree")
        for item in shard:
            if not isinstance(item, pygit2.Blob) or not item.name.endswith(".json"):
                raise malformed(
                    f"{folder}/{shard.name}/{item.name} is a {item.type_str}, "
                    "not an entry blob <id>.json"
                )
            yield shard, item


def write_file_tree(repo: pygit2.Repository, files: Mapping[str, tuple[bytes, int]]) -> pygit2.Oid:
    """A tree holding ``files`` (repository-relative path -> (bytes, filemode)), sub-trees made
    from the paths; a path that is both a file and a directory raises :class:`EvotreeError`."""
    root: dict[str, object] = {}
    for rel, (data, mode) in sorted(files.items()):
        node = root
        *dirs, name = rel.split("/")
        for part in dirs:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise EvotreeError(
                    f"{rel!r}: {part!r} is both a file and a directory", fix="rename one of them"
                )
            node = child
        if name in node:
            raise EvotreeError(f"{rel!r} is both a file and a directory", fix="rename one of them")
        node[name] = (repo.create_blob(data), mode)

    def build(node: dict[str, object]) -> pygit2.Oid:
        builder = repo.TreeBuilder()
        for name, value in node.items():
            if isinstance(value, dict):
                builder.insert(name, build(value), pygit2.GIT_FILEMODE_TREE)
            else:
                oid, mode = value  # type: ignore[misc]
                builder.insert(name, oid, mode)
        return builder.write()

    return build(root)
