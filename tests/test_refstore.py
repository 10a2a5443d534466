"""The one ref store under the ledger, memory and the judge store (evotree.core.refstore)."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pygit2
import pytest

from evotree.core.errors import EvotreeError, InvalidState, LedgerConflict
from evotree.core.gitio import Git, Identity, RefRaceLost
from evotree.core.ledger import Event, Ledger, VersionRecord
from evotree.core.refstore import (
    Prepared,
    RefStore,
    first_parents,
    json_bytes,
    sharded_blobs,
    write_file_tree,
    write_sharded_tree,
)
from evotree.memory.model import InvalidMemory, MemoryEntry
from evotree.memory.store import MemoryStore

from conftest import make_repo

REF = "refs/evotree/test-store"
ACTOR = Identity("Ada Tester", "ada@example.com")
#: trees written by the ledger's and memory's own loops before they moved onto the one store
LEDGER_TREE = "13dcd0d6a5ff1d1368b418302f331dc8a8dd27a5"
MEMORY_TREE = "4898f767d84615fae6fb738aec3c9319228cdd48"


@pytest.fixture
def gitrepo(tmp_path: Path) -> Git:
    return Git(make_repo(tmp_path / "repo"))


def _append(store: RefStore, name: str) -> str:
    """Append one commit whose tree adds ``items/<shard>/<name>.json``; its id."""

    def prepare(head: pygit2.Commit | None) -> Prepared[str]:
        tree = write_sharded_tree(
            store.repo,
            head.tree if head is not None else None,
            "items",
            {name[:1]: {f"{name}.json": json_bytes({"name": name})}},
            {"meta.json": json_bytes({"last": name})},
        )
        parents = [head.id] if head is not None else []
        commit = store.new_commit(ACTOR.signature(), f"add {name}", tree, parents)
        return Prepared(commit, str(commit), f"add {name}")

    return store.update(prepare)


def test_json_bytes_is_the_stored_form() -> None:
    assert json_bytes({"b": 1, "a": "é"}) == b'{\n "a": "\\u00e9",\n "b": 1\n}\n'
    assert json_bytes({"a": "é"}, ensure_ascii=False) == '{\n "a": "é"\n}\n'.encode()
    with pytest.raises(ValueError):
        json_bytes({"a": float("inf")})
    assert json_bytes({"a": float("nan")}, allow_nan=True) == b'{\n "a": NaN\n}\n'


def test_sharded_tree_keeps_untouched_shards_and_replaces_files(gitrepo: Git) -> None:
    store = RefStore(gitrepo, REF)
    first = _append(store, "apple")
    _append(store, "banana")
    _append(store, "avocado")
    head = store.head()
    assert head is not None
    names = sorted(item.name for _, item in sharded_blobs(head.tree, "items", ValueError))
    assert names == ["apple.json", "avocado.json", "banana.json"]
    assert head.tree["meta.json"].data == json_bytes({"last": "avocado"})
    # the "b" shard of the last commit is the very tree the second commit wrote
    second = head.parents[0]
    assert head.tree["items"]["b"].id == second.tree["items"]["b"].id
    assert [c.message for c in first_parents(head)] == ["add avocado", "add banana", "add apple"]
    assert [str(c.id) for c in store.first_parents()][-1] == first
    assert store.count() == 3
    assert store.landed(pygit2.Oid(hex=first))


def test_prepared_without_commit_moves_nothing(gitrepo: Git) -> None:
    store = RefStore(gitrepo, REF)
    assert store.update(lambda head: Prepared(None, "nothing")) == "nothing"
    assert store.head() is None and not store.exists()


def test_an_abort_in_prepare_writes_nothing(gitrepo: Git) -> None:
    store = RefStore(gitrepo, REF)
    _append(store, "apple")
    before = store.head()

    def refuse(head: pygit2.Commit | None) -> Prepared[None]:
        raise EvotreeError("refused", fix="none")

    with pytest.raises(EvotreeError, match="refused"):
        store.update(refuse)
    assert store.head() == before


def test_a_lost_race_prepares_again_on_the_new_head(gitrepo: Git) -> None:
    store = RefStore(gitrepo, REF)
    _append(store, "apple")
    heads: list[str] = []

    def prepare(head: pygit2.Commit | None) -> Prepared[str]:
        assert head is not None
        heads.append(str(head.id))
        if len(heads) == 1:  # another writer lands first
            _append(RefStore(gitrepo, REF), "banana")
        tree = write_sharded_tree(
            store.repo,
            head.tree,
            "items",
            {"c": {"cherry.json": json_bytes({"name": "cherry"})}},
            {},
        )
        commit = store.new_commit(ACTOR.signature(), "add cherry", tree, [head.id])
        return Prepared(commit, str(commit), "add cherry")

    store.update(prepare)
    assert len(heads) == 2 and heads[0] != heads[1]
    head = store.head()
    assert head is not None
    assert [c.message for c in first_parents(head)] == ["add cherry", "add banana", "add apple"]


def test_every_attempt_lost_is_a_ledger_conflict(gitrepo: Git) -> None:
    store = RefStore(gitrepo, REF, busy_fix="wait", attempts=5)
    _append(store, "apple")
    calls = 0

    def always_stale(head: pygit2.Commit | None) -> Prepared[str]:
        nonlocal calls
        calls += 1
        _append(RefStore(gitrepo, REF), f"x{calls}")  # the head moves under every attempt
        assert head is not None
        commit = store.new_commit(ACTOR.signature(), "late", head.tree.id, [head.id])
        return Prepared(commit, "late", "late")

    with pytest.raises(LedgerConflict) as caught:
        store.update(always_stale)
    assert caught.value.fix == "wait"
    assert "after 5 compare-and-swap attempts" in caught.value.message
    assert calls == 5


def test_threads_appending_at_once_lose_nothing(gitrepo: Git) -> None:
    names = [f"n{t}{i}" for t in range(4) for i in range(6)]
    errors: list[BaseException] = []

    def writer(chunk: list[str]) -> None:
        store = RefStore(Git(gitrepo.root), REF)
        try:
            for name in chunk:
                _append(store, name)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [
        threading.Thread(target=writer, args=(names[t * 6 : (t + 1) * 6],)) for t in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    store = RefStore(gitrepo, REF)
    head = store.head()
    assert head is not None
    stored = sorted(item.name for _, item in sharded_blobs(head.tree, "items", ValueError))
    assert stored == sorted(f"{n}.json" for n in names)
    assert store.count() == len(names)


@pytest.mark.parametrize(
    "layout, message",
    [
        ({"items": (b"x", pygit2.GIT_FILEMODE_BLOB)}, "items is a blob, not a tree"),
        ({"items/ab": (b"x", pygit2.GIT_FILEMODE_BLOB)}, "items/ab is a blob, not a shard tree"),
        (
            {"items/ab/x.txt": (b"x", pygit2.GIT_FILEMODE_BLOB)},
            "items/ab/x.txt is a blob, not an entry",
        ),
        (
            {"items/ab/x.json/y": (b"x", pygit2.GIT_FILEMODE_BLOB)},
            "items/ab/x.json is a tree, not an",
        ),
    ],
)
def test_the_strict_walk_names_what_is_out_of_place(
    gitrepo: Git, layout: dict[str, tuple[bytes, int]], message: str
) -> None:
    tree = gitrepo.repo[write_file_tree(gitrepo.repo, layout)]
    with pytest.raises(ValueError, match=message):
        list(sharded_blobs(tree, "items", ValueError))


def test_a_malformed_ledger_and_memory_are_refused_with_their_names(gitrepo: Git) -> None:
    bad = write_file_tree(
        gitrepo.repo,
        {
            "versions/ab": (b"x", pygit2.GIT_FILEMODE_BLOB),
            "entries/ab": (b"x", pygit2.GIT_FILEMODE_BLOB),
            "meta.json": (b"{}", pygit2.GIT_FILEMODE_BLOB),
        },
    )
    commit = gitrepo.repo.create_commit(None, ACTOR.signature(), ACTOR.signature(), "bad", bad, [])
    for ref in ("refs/evotree/ledger", "refs/evotree/memory"):
        gitrepo.cas_ref(ref, commit, None)
    with pytest.raises(
        InvalidState, match="the ledger on refs/evotree/ledger is malformed: versions/ab is a blob"
    ):
        Ledger(gitrepo).versions()
    with pytest.raises(
        InvalidMemory, match="memory on refs/evotree/memory is malformed: entries/ab is a blob"
    ):
        MemoryStore(gitrepo).entries()


def test_file_tree_refuses_a_path_that_is_both_file_and_folder(gitrepo: Git) -> None:
    with pytest.raises(EvotreeError, match="both a file and a directory"):
        write_file_tree(
            gitrepo.repo,
            {"a": (b"1", pygit2.GIT_FILEMODE_BLOB), "a/b": (b"2", pygit2.GIT_FILEMODE_BLOB)},
        )


def test_ledger_and_memory_keep_their_layouts_on_the_one_store(gitrepo: Git) -> None:
    ledger = Ledger(gitrepo)

    def create(txn):  # type: ignore[no-untyped-def]
        txn.put(
            VersionRecord(
                id="v0",
                parents=[],
                branch="evotree/v0",
                status="active",
                hypothesis="h",
                created_by="A",
                created_at="t",
                base_commit="0" * 40,
            )
        )
        return Event(kind="version.created", version="v0", actor="A", at="2020", data={})

    entry = ledger.transact(create, actor=ACTOR, create=True)
    head = ledger.head()
    assert head is not None and str(head.id) == entry.commit
    shard = head.tree["versions"]
    assert [s.name for s in shard] == [hashlib.sha1(b"v0").hexdigest()[:2]]
    # the tree the ledger wrote before the one store, byte for byte
    assert str(head.tree.id) == LEDGER_TREE
    assert head.message.startswith("evotree: version.created v0\n\n{")
    memory = MemoryStore(gitrepo)
    lesson = MemoryEntry(
        kind="lesson",
        text="ünïcode kept",
        version="v0",
        domain="d",
        workspace="w",
        created_at="2020",
        created_by="A",
    )
    result = memory.append([lesson, lesson], actor=ACTOR, what="lesson")
    assert [e.id for e in result.added] == [lesson.id]
    head = memory.head()
    assert head is not None
    blob = head.tree[f"entries/{lesson.id[1:3]}/{lesson.id}.json"]
    assert "ünïcode kept".encode() in blob.data  # memory's form: non-ASCII as is
    assert str(head.tree.id) == MEMORY_TREE
    again = memory.append([lesson], actor=ACTOR, what="again")
    assert again.commit is None and again.skipped == [lesson.id]


def test_a_ref_moved_to_our_commit_counts_as_written(gitrepo: Git) -> None:
    """A CAS that fails after the ref moved (e.g. the reflog lock) is not appended twice."""
    store = RefStore(gitrepo, REF)
    _append(store, "apple")

    class FlakyGit(Git):
        def cas_ref(
            self, name: str, new: pygit2.Oid, expected: pygit2.Oid | None, message: str = "evotree"
        ) -> None:
            super().cas_ref(name, new, expected, message)
            raise RefRaceLost(f"{name}: the reflog's lock was taken")

    flaky = RefStore(FlakyGit(gitrepo.root), REF)
    written = _append(flaky, "banana")
    assert str(flaky.head().id) == written  # type: ignore[union-attr]
    assert flaky.count() == 2
