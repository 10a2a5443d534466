"""The ledger: an append-only, git-native record of every event, on ``refs/evotree/ledger``.

One commit per event. The commit message carries the event as one line of JSON (``"v": 1``);
the commit's tree is the materialized state after the event:

    meta.json                     {"v": 1, "champion": "v0", "last_number": 7, "events": 12}
    versions/<shard>/<id>.json    one VersionRecord per version (shard = sha1(id)[:2])

Sharding keeps each event's new tree objects small (a shard of a few entries, not one tree of
10,000 versions). Appends go through :meth:`Ledger.transact`: read the head, apply the change,
write a commit, compare-and-swap the ref; on a lost race retry on the new head (the loop, the
sharded tree and the head's walk are :mod:`evotree.core.refstore`'s, shared with memory).
Concurrent processes therefore never lose or duplicate an event, and nothing touches a worktree.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from enum import Enum
from typing import Any, TypedDict

import pygit2

from evotree.core.errors import EvotreeError, InvalidState, NotAWorkspace, UnknownVersion
from evotree.core.events import EventKind, MalformedEvent, Payload, payload_type
from evotree.core.gitio import Git, Identity
from evotree.core.refs import LEDGER_REF
from evotree.core.refstore import (
    Prepared,
    RefStore,
    first_parents,
    json_bytes,
    sharded_blobs,
    write_sharded_tree,
)
from evotree.core.safegit import approver_env, system_program

__all__ = [
    "SCHEMA_VERSION",
    "EventKind",
    "MalformedEvent",
    "Payload",
    "VersionStatus",
    "VersionRecord",
    "Event",
    "LedgerEntry",
    "LedgerTxn",
    "Ledger",
    "utcnow",
]

SCHEMA_VERSION = 1
_GC_EVERY_EVENTS = 1000


def utcnow() -> str:
    """Current UTC time as ISO 8601 with microseconds (sortable)."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


class VersionStatus(str, Enum):
    ACTIVE = "active"
    RUNNING = "running"
    EVALUATED = "evaluated"
    FAILED = "failed"
    ABANDONED = "abandoned"

    @property
    def is_negative_evidence(self) -> bool:
        """Abandoned and failed versions: kept forever, shown dimmed."""
        return self in (VersionStatus.ABANDONED, VersionStatus.FAILED)


@dataclass
class VersionRecord:
    """What the ledger knows of one version (schema: ``version.schema.json``)."""

    id: str
    parents: list[str]
    branch: str
    status: str
    hypothesis: str
    created_by: str
    created_at: str
    base_commit: str
    worktree: str | None = None
    headline: dict[str, Any] | None = None
    reason: str | None = None
    skills: list[str] = field(default_factory=list)
    updated_at: str | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Any] = field(default_factory=dict)

    @property
    def parent(self) -> str | None:
        """The first parent (None for the root)."""
        return self.parents[0] if self.parents else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VersionRecord:
        return cls(**{k: v for k, v in data.items() if k in _RECORD_FIELDS})


_RECORD_FIELDS = frozenset(f.name for f in fields(VersionRecord))


@dataclass
class Event:
    """One ledger event, stored as one line of JSON in its commit message."""

    kind: str
    version: str | None
    actor: str
    at: str = field(default_factory=utcnow)
    data: dict[str, Any] = field(default_factory=dict)
    v: int = SCHEMA_VERSION

    @classmethod
    def of(
        cls, payload: Payload, *, version: str | None, actor: str, at: str | None = None
    ) -> Event:
        """The event of ``payload``'s kind with its data (the typed way to write an event); a
        value of the wrong type is refused here, before anything is written (a writer's bug)."""
        data = payload.to_data()
        type(payload).from_data(data, event=f"{payload.KIND.value} event being written")
        return cls(
            kind=payload.KIND.value,
            version=version,
            actor=actor,
            at=at if at is not None else utcnow(),
            data=data,
        )

    def payload(self) -> Payload:
        """``data`` parsed strictly as its kind's payload (:mod:`evotree.core.events`):
        :class:`MalformedEvent` names the event and the field for an unknown kind or key, a
        missing required key or a value of the wrong type."""
        of = f" of {self.version}" if self.version else ""
        where = f"{self.kind} event{of} at {self.at}"
        return payload_type(self.kind).from_data(self.data, event=where)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, line: str) -> Event | None:
        """Parse an event line; None for lines of a schema version this evotree does not know."""
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            return None
        if not isinstance(data, dict) or data.get("v") != SCHEMA_VERSION:
            return None
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class LedgerEntry:
    """An event with the ledger commit that recorded it."""

    commit: str
    event: Event


def _shard(version_id: str) -> str:
    return hashlib.sha1(version_id.encode()).hexdigest()[:2]


def _json_bytes(data: Any) -> bytes:
    # allow_nan=False: Infinity or NaN never enter the ledger (a sum of huge spends once did)
    return json_bytes(data, allow_nan=False)


class LedgerMeta(TypedDict, total=False):
    """``meta.json`` of the ledger's tree: the tree-wide state beside the version records.

    Every key any layer writes is listed here; :meth:`LedgerTxn.write_tree` refuses an unknown key
    or a value that is not finite JSON, so a typo or an overflow cannot land in the ledger.
    """

    v: int
    #: the champion's version id (moved only by a signed promotion: evotree.gates.promote)
    champion: str | None
    #: the highest version number handed out (branch ids are v<N+1>)
    last_number: int
    #: events appended so far (the ledger's own counter)
    events: int
    created_at: str
    #: the tree's usage (evotree.harness.budget.Usage.to_dict): runs, seconds, episodes, USD, tokens
    usage: dict[str, Any]
    #: runs reserved and not yet finished, by run id (evotree.harness.reservations)
    reservations: dict[str, Any]
    #: the champion re-runs account, by champion id (evotree.harness.budget)
    champion_reruns: dict[str, Any]
    #: the judge commit in force ({"commit": ...}, evotree.gates.judges)
    judge: dict[str, Any]
    #: the analyzers' lineage (evotree.gates.analyzer_versions) and the one in force; persisted
    #: names (existing ledgers and signed statements use them)
    harnesses: dict[str, Any]
    harness_active: str
    #: the search's one held-out evaluation (evotree.gates.finalize) and its own account
    finalize: dict[str, Any]
    finalize_usage: dict[str, Any]
    #: the protocol the workspace was made for (init --protocol), when any
    protocol: str


META_KEYS = frozenset(LedgerMeta.__annotations__)


class LedgerTxn:
    """A change being prepared on top of one ledger head; re-run from scratch on a lost race."""

    def __init__(self, repo: pygit2.Repository, head: pygit2.Commit | None) -> None:
        self._repo = repo
        self.head = head
        self._tree = head.tree if head is not None else None
        self.meta: LedgerMeta = (
            json.loads(self._read("meta.json"))
            if self._tree is not None
            else {"v": SCHEMA_VERSION, "champion": None, "last_number": -1, "events": 0}
        )
        #: keys the head's meta already had (a ledger written by another evotree release is kept as it is)
        self._read_keys = frozenset(self.meta)
        self._changed: dict[str, VersionRecord] = {}

    def _read(self, path: str) -> bytes:
        assert self._tree is not None
        return self._repo[self._tree[path].id].data

    def version(self, version_id: str) -> VersionRecord | None:
        """The record of ``version_id`` as of this transaction, or None."""
        if version_id in self._changed:
            return self._changed[version_id]
        if self._tree is None:
            return None
        try:
            blob = self._read(f"versions/{_shard(version_id)}/{version_id}.json")
        except KeyError:
            return None
        return VersionRecord.from_dict(json.loads(blob))

    def require(self, version_id: str) -> VersionRecord:
        """The record of ``version_id``; :class:`UnknownVersion` when there is none."""
        record = self.version(version_id)
        if record is None:
            raise UnknownVersion(
                f"unknown version {version_id!r}", fix="`evotree tree` lists the versions"
            )
        return record

    def put(self, record: VersionRecord) -> None:
        """Stage a new or updated version record."""
        self._changed[record.id] = record

    def entries(self, *, version: str | None = None) -> Iterator[LedgerEntry]:
        """Events newest first as of this transaction's head (optionally only ``version``'s).

        A change function that decides from history (e.g. how many runs an approval has left)
        reads it here, so that a concurrent append makes the compare-and-swap fail and the
        decision is taken again on the new head.
        """
        if self.head is not None:
            yield from _entries_from(self.head, version)

    def write_tree(self) -> pygit2.Oid:
        unknown = sorted(set(self.meta) - META_KEYS - self._read_keys)
        if unknown:  # a bug of the writer (a misspelled key): nothing is written
            raise EvotreeError(
                f"ledger meta has unknown key(s) {', '.join(unknown)} (known: LedgerMeta)",
                fix="a bug in evotree: report it",
            )
        shards: dict[str, dict[str, bytes]] = {}
        for record in self._changed.values():
            shards.setdefault(_shard(record.id), {})[f"{record.id}.json"] = _json_bytes(
                record.to_dict()
            )
        return write_sharded_tree(
            self._repo, self._tree, "versions", shards, {"meta.json": _json_bytes(self.meta)}
        )


class Ledger:
    """Reads and appends the event ledger of a repository."""

    def __init__(self, git: Git, ref: str = LEDGER_REF) -> None:
        self.git = git
        self.ref = ref
        self.store = RefStore(
            git, ref, busy_fix="another process is writing the ledger heavily; retry the command"
        )

    @property
    def repo(self) -> pygit2.Repository:
        return self.git.repo

    def head(self) -> pygit2.Commit | None:
        """The newest ledger commit, or None before ``evotree init``."""
        return self.store.head()

    def exists(self) -> bool:
        return self.store.exists()

    def snapshot(self) -> LedgerTxn:
        """A read-only view of the current state (a transaction that is never committed)."""
        return LedgerTxn(self.repo, self.head())

    def transact(
        self, change: Callable[[LedgerTxn], Event], *, actor: Identity, create: bool = False
    ) -> LedgerEntry:
        """Apply ``change`` to the newest state and append its event, retrying lost races.

        ``change`` may raise an :class:`~evotree.core.errors.EvotreeError` to abort (nothing is
        written); it is called again on the fresh state after a lost race, so it must have no
        side effects outside the transaction.
        """
        signature = actor.signature()
        events = 0

        def prepare(head: pygit2.Commit | None) -> Prepared[LedgerEntry]:
            nonlocal events
            if head is None and not create:
                raise NotAWorkspace(f"no ledger at {self.ref}", fix="run `evotree init`")
            txn = LedgerTxn(self.repo, head)
            event = change(txn)
            events = int(txn.meta.get("events", 0)) + 1
            txn.meta["events"] = events
            tree = txn.write_tree()
            subject = f"evotree: {event.kind}" + (f" {event.version}" if event.version else "")
            message = f"{subject}\n\n{event.to_json()}\n"
            parents = [head.id] if head is not None else []
            commit = self.store.new_commit(signature, message, tree, parents)
            return Prepared(commit, LedgerEntry(str(commit), event), subject)

        entry = self.store.update(prepare)
        if events % _GC_EVERY_EVENTS == 0:
            self._pack_in_background()
        return entry

    def _pack_in_background(self) -> None:
        """Each event leaves a few loose objects; let git pack them now and then (detached)."""
        try:  # the system's git, with no hook (pre-auto-gc) or global setting of the workspace's
            git = system_program("git")
            subprocess.Popen(
                [
                    git,
                    "-c",
                    "core.hooksPath=/dev/null",
                    "-c",
                    "core.fsmonitor=false",
                    "gc",
                    "--auto",
                    "--quiet",
                ],
                cwd=str(self.git.root),
                env=approver_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except (OSError, EvotreeError):
            pass  # packing is an optimisation only

    # ------------------------------------------------------------------ reading
    def versions(self) -> list[VersionRecord]:
        """Every version record in the current state (unordered)."""
        head = self.head()
        if head is None:
            return []
        known = _RECORD_FIELDS
        records = []
        # tree entries are objects already: no lookups by id
        for _, item in sharded_blobs(head.tree, "versions", self._malformed):
            data = json.loads(item.data)
            records.append(VersionRecord(**{k: v for k, v in data.items() if k in known}))
        return records

    def _malformed(self, what: str) -> InvalidState:
        return InvalidState(
            f"the ledger on {self.ref} is malformed: {what}",
            fix=f"the ledger ref was written by another tool; inspect it with "
            f"`git log -p {self.ref}`",
        )

    def meta(self) -> dict[str, Any]:
        return self.snapshot().meta

    def entries(
        self, *, version: str | None = None, limit: int | None = None
    ) -> Iterator[LedgerEntry]:
        """Events newest first (optionally only those of ``version``, at most ``limit``)."""
        head = self.head()
        if head is None:
            return
        for count, entry in enumerate(_entries_from(head, version), start=1):
            yield entry
            if limit is not None and count >= limit:
                return


def _entries_from(head: pygit2.Commit, version: str | None) -> Iterator[LedgerEntry]:
    """The events from ``head`` back to the first (first parents), optionally only ``version``'s."""
    for commit in first_parents(head):
        event = _event_of(commit)
        if event is not None and (version is None or event.version == version):
            yield LedgerEntry(str(commit.id), event)


def _event_of(commit: pygit2.Commit) -> Event | None:
    lines = [line for line in commit.message.strip().splitlines() if line.strip()]
    return Event.from_json(lines[-1]) if lines else None
