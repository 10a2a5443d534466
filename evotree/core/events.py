"""The ledger's event kinds and the typed payload of each (what an event's ``data`` holds).

Every kind of :class:`EventKind` has one frozen dataclass (:data:`PAYLOADS`). A writer builds its
event from one (:meth:`evotree.core.ledger.Event.of`); a reader parses an event's ``data`` back
with :meth:`Payload.from_data`, which refuses a key the payload does not declare and a value of
the wrong type, naming the event and the field (:class:`MalformedEvent`).

The stored form does not change: :meth:`Payload.to_data` gives the same dict a writer built by
hand before (keys sorted when serialized; numbers kept as they were, never coerced), so events
already in a ledger — and the signatures over statements inside them — read and verify as
before. A field whose default is :data:`ABSENT` (omittable) is left out of the stored dict when
it is not set: events written before it existed, or writers that add it only sometimes (a
run's ``account`` only when it is not ``"version"``), keep their shape.
"""

from __future__ import annotations

import math
import sys
import types
import typing
from dataclasses import MISSING, dataclass, fields
from enum import Enum
from typing import Any, ClassVar, Union

from evotree.core.errors import InvalidState

__all__ = ["ABSENT", "PAYLOADS", "EventKind", "MalformedEvent", "Payload", "payload_type"]


class EventKind(str, Enum):
    WORKSPACE_INITIALIZED = "workspace.initialized"
    VERSION_CREATED = "version.created"
    VERSION_ABANDONED = "version.abandoned"
    VERSION_STATUS = "version.status"
    WORKTREE_PRUNED = "worktree.pruned"
    WORKTREE_RESTORED = "worktree.restored"
    RUN_STARTED = "run.started"
    RUN_FINISHED = "run.finished"
    FINDING = "finding"
    DECISION = "decision"
    PROMOTION = "promotion"
    SKILL_APPLIED = "skill.applied"
    AUDIT = "audit"
    RUN_APPROVED = "run.approved"
    #: runs reserved before they start (budget and approval checked in the same compare-and-swap)
    RUN_RESERVED = "run.reserved"
    #: reservations given back before their runs started (refused, cancelled, owner dead)
    RUN_RELEASED = "run.released"
    #: a run's evidence declared void by a signed statement (``evotree runs void``)
    RUN_VOIDED = "run.voided"
    #: agent/API spend recorded (``evotree spend record``)
    SPEND_RECORDED = "spend.recorded"
    #: a new analyzer version branched (``evotree analyzers branch``); persisted name (existing
    #: ledgers and signed statements use it)
    ANALYZERS_CREATED = "harness.created"
    #: the analyzers' lineage moved by a signed promotion (``evotree analyzers promote``);
    #: persisted name (existing ledgers and signed statements use it)
    ANALYZERS_PROMOTED = "harness.promoted"
    #: a new judge commit proposed, then promoted by a signed statement (``evotree judge``)
    JUDGE_PROPOSED = "judge.proposed"
    JUDGE_PROMOTED = "judge.promoted"
    #: judge data moved from the champion's tree into the judge store by a signed migration
    JUDGE_MIGRATED = "judge.migrated"
    #: the search's one held-out evaluation (``evotree finalize``); lifts the visibility boundary
    FINALIZE = "finalize"
    #: a finalize whose held-out run evotree could not finish (its own failure): the search goes on
    FINALIZE_ATTEMPT = "finalize.attempt"
    #: the first allowed signers, added after init while there were none (``evotree signers add``)
    SIGNERS_ADDED = "signers.added"


#: what to do about a malformed event
_FIX = "the event was not written by this evotree (or is damaged): see `evotree verify`"


class MalformedEvent(InvalidState):
    """An event whose ``data`` does not match its kind's payload (an unknown key, a wrong type)."""

    code = "malformed_event"


class _Absent:
    """The value of an omittable field that is not set: its key is left out when stored."""

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


#: the default of an omittable payload field (``field: T = ABSENT``): some events leave its key out
#: (written before the field existed, or a writer that sets it only sometimes)
ABSENT: Any = _Absent()


def _check(value: Any, hint: Any, where: str) -> None:
    """Raise :class:`MalformedEvent` unless ``value`` (parsed JSON) has the type ``hint``."""
    if hint is Any:
        return
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        errors = []
        for option in typing.get_args(hint):
            try:
                _check(value, option, where)
                return
            except MalformedEvent as exc:
                errors.append(exc)
        raise MalformedEvent(
            f"{where}: expected {_name(hint)}, actually: {_shown(value)}",
            fix=_FIX,
        )
    if hint is type(None):
        ok = value is None
    elif hint is bool:
        ok = isinstance(value, bool)
    elif hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        ok = (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        )
    elif hint is str:
        ok = isinstance(value, str)
    elif origin is list:
        if not isinstance(value, list):
            ok = False
        else:
            (item,) = typing.get_args(hint) or (Any,)
            for i, element in enumerate(value):
                _check(element, item, f"{where}[{i}]")
            return
    elif origin is dict:
        if not isinstance(value, dict):
            ok = False
        else:
            _, item = typing.get_args(hint) or (str, Any)
            for key, element in value.items():
                if not isinstance(key, str):
                    raise MalformedEvent(f"{where}: expected text keys, actually: {_shown(key)}")
                _check(element, item, f"{where}[{key!r}]")
            return
    else:
        raise TypeError(f"payload field type {hint!r} is not supported")  # a bug of a payload class
    if not ok:
        raise MalformedEvent(
            f"{where}: expected {_name(hint)}, actually: {_shown(value)}",
            fix=_FIX,
        )


def _name(hint: Any) -> str:
    if isinstance(hint, type):
        return {
            type(None): "null",
            str: "text",
            int: "a whole number",
            float: "a finite number",
            bool: "true or false",
        }.get(hint, hint.__name__)
    return str(hint).replace("typing.", "").replace("NoneType", "None")


def _shown(value: Any) -> str:
    text = repr(value)
    return (text[:80] + "…") if len(text) > 80 else text


@dataclass(frozen=True)
class Payload:
    """The ``data`` of one kind of ledger event (subclasses: one per :class:`EventKind`)."""

    KIND: ClassVar[EventKind]

    def to_data(self) -> dict[str, Any]:
        """The dict stored as the event's ``data`` (unset :func:`omittable` fields left out)."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) is not ABSENT
        }

    @classmethod
    def from_data(cls, data: Any, *, event: str | None = None) -> Payload:
        """``data`` parsed strictly: a key this payload does not declare, a value of the wrong type
        or a missing required key raises :class:`MalformedEvent` naming the event and the field."""
        name = event or cls.KIND.value
        if not isinstance(data, dict):
            raise MalformedEvent(
                f"{name}: its data is {_shown(data)}, not an object",
                fix=_FIX,
                event=name,
            )
        hints = _hints(cls)
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise MalformedEvent(
                f"{name}: unknown field(s) {', '.join(unknown)} (a {cls.KIND.value} event has "
                f"{', '.join(sorted(known)) or 'none'})",
                fix=_FIX,
                event=name,
                fields=unknown,
            )
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                if f.default is MISSING and f.default_factory is MISSING:
                    raise MalformedEvent(
                        f"{name}: field {f.name} is missing",
                        event=name,
                        field=f.name,
                        fix="the event was not written by this evotree (or is damaged): see "
                        "`evotree verify`",
                    )
                continue
            _check(data[f.name], hints[f.name], f"{name}: field {f.name}")
            values[f.name] = data[f.name]
        return cls(**values)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return _HINTS[cls]


# ---------------------------------------------------------------------------- the payloads
Text = str
Commit = str
Obj = dict[str, Any]


@dataclass(frozen=True)
class WorkspaceInitialized(Payload):
    KIND = EventKind.WORKSPACE_INITIALIZED
    commit: Commit
    domain: str | None = ABSENT
    config_committed: bool = ABSENT
    #: the judge in force at init: {"commit", "files", "removed_from_branch"}
    judge: Obj = ABSENT


@dataclass(frozen=True)
class VersionCreated(Payload):
    KIND = EventKind.VERSION_CREATED
    parents: list[str]
    base_commit: Commit
    hypothesis: Text
    worktree: str | None = ABSENT


@dataclass(frozen=True)
class VersionAbandoned(Payload):
    KIND = EventKind.VERSION_ABANDONED
    reason: Text
    #: the worktree removed (its display path), or None
    worktree_removed: str | bool | None = ABSENT


@dataclass(frozen=True)
class VersionStatusChanged(Payload):
    KIND = EventKind.VERSION_STATUS
    status: str = ABSENT
    reason: str | None = ABSENT


@dataclass(frozen=True)
class WorktreePruned(Payload):
    KIND = EventKind.WORKTREE_PRUNED
    worktree: str | None
    missing: bool = ABSENT


@dataclass(frozen=True)
class WorktreeRestored(Payload):
    KIND = EventKind.WORKTREE_RESTORED
    worktree: str | None


@dataclass(frozen=True)
class RunStarted(Payload):
    KIND = EventKind.RUN_STARTED
    run_id: str
    seed: int
    commit: Commit
    judge_commit: str | None = ABSENT
    judge_data_commit: str | None = ABSENT
    limits: Obj | None = ABSENT
    #: the patch this run trains, against the pristine base (harness.version_patch.patch_digest)
    patch: Obj | None = ABSENT
    intervention: Obj = ABSENT
    #: set only when it is not "version" (champion_reruns, finalize)
    account: str = ABSENT


@dataclass(frozen=True)
class RunFinished(Payload):
    KIND = EventKind.RUN_FINISHED
    run_id: str
    seed: int
    status: str
    headline: Obj | None = ABSENT
    #: harness.budget.Usage.to_dict()
    usage: dict[str, float] = ABSENT
    error: str | None = ABSENT
    account: str = ABSENT
    #: the evidence manifest (harness.integrity.evidence_manifest)
    evidence: Obj = ABSENT
    #: harness.provenance.attest_run: what makes the run count here
    provenance: Obj = ABSENT


@dataclass(frozen=True)
class Finding(Payload):
    KIND = EventKind.FINDING
    runs: list[str] = ABSENT
    layers: list[str] = ABSENT
    worst: str | None = ABSENT
    counts: dict[str, int] = ABSENT
    findings: list[Obj] = ABSENT
    total: int = ABSENT


@dataclass(frozen=True)
class Decision(Payload):
    KIND = EventKind.DECISION
    decision: str
    statement: Obj
    signature: str
    feedback: str | None = ABSENT
    dossier: Obj = ABSENT


@dataclass(frozen=True)
class Promotion(Payload):
    KIND = EventKind.PROMOTION
    statement: Obj
    signature: str
    commit: Commit = ABSENT
    previous_champion: str | None = ABSENT
    dossier: Obj = ABSENT
    tag: str | None = ABSENT
    tag_object: str | None = ABSENT


@dataclass(frozen=True)
class SkillApplied(Payload):
    KIND = EventKind.SKILL_APPLIED
    skill: str
    commit: Commit
    params: Obj = ABSENT
    previous_commit: str = ABSENT
    file: str = ABSENT
    domain: str | None = ABSENT
    skills: list[str] = ABSENT


@dataclass(frozen=True)
class Audit(Payload):
    KIND = EventKind.AUDIT
    passed: bool
    worst: str | None = ABSENT
    runs: list[str] = ABSENT
    trajectories: int = ABSENT
    flagged: int = ABSENT
    git_history_rate: float | None = ABSENT
    raw_score: float | None = ABSENT
    leak_adjusted_score: float | None = ABSENT
    leak_zeroed_score: float | None = ABSENT
    score_metric: str | None = ABSENT
    counts: dict[str, int] = ABSENT
    findings: list[Obj] = ABSENT
    total: int = ABSENT
    incident: str | None = ABSENT


@dataclass(frozen=True)
class RunApproved(Payload):
    KIND = EventKind.RUN_APPROVED
    statement: Obj
    signature: str
    runs: int


@dataclass(frozen=True)
class RunReserved(Payload):
    KIND = EventKind.RUN_RESERVED
    #: one {"run_id", "version", "seed", "commit", "limits", "account"} per run reserved
    runs: list[Obj]
    #: who holds them (evotree.core.proc.process_owner)
    owner: Obj | None = ABSENT
    #: dead owners' reservations given back in the same step
    released: list[str] = ABSENT


@dataclass(frozen=True)
class RunReleased(Payload):
    KIND = EventKind.RUN_RELEASED
    runs: list[str]
    reason: str | None = ABSENT


@dataclass(frozen=True)
class RunVoided(Payload):
    KIND = EventKind.RUN_VOIDED
    run_id: str
    reason: str
    statement: Obj
    signature: str


@dataclass(frozen=True)
class SpendRecorded(Payload):
    KIND = EventKind.SPEND_RECORDED
    usd: float
    note: str
    tokens: int | None = ABSENT
    principal: str = ABSENT
    #: this workspace's MAC over what the spend says (harness.provenance.seal): only a sealed
    #: spend counts in this workspace's budgets (harness.budget.trusted_usage)
    seal: str | None = ABSENT


@dataclass(frozen=True)
class AnalyzerVersionCreated(Payload):
    KIND = EventKind.ANALYZERS_CREATED
    #: the analyzer version's id; persisted name (existing ledgers and signed statements use it)
    harness: str
    parent: str | None = ABSENT
    hypothesis: str = ABSENT


@dataclass(frozen=True)
class AnalyzersPromoted(Payload):
    KIND = EventKind.ANALYZERS_PROMOTED
    #: the analyzer version now in force (``harness``, ``previous_harness``: persisted names,
    #: existing ledgers and signed statements use them)
    harness: str
    statement: Obj
    signature: str
    commit: str | None = ABSENT
    previous_harness: str | None = ABSENT
    previous_commit: str | None = ABSENT
    diff: str | Obj | list[Any] | None = ABSENT


@dataclass(frozen=True)
class JudgeProposed(Payload):
    KIND = EventKind.JUDGE_PROPOSED
    commit: Commit
    tree: str = ABSENT
    previous_commit: str | None = ABSENT
    diff: str | Obj | list[Any] | None = ABSENT
    diff_hash: str = ABSENT
    proposed_by: str = ABSENT


@dataclass(frozen=True)
class JudgePromoted(Payload):
    KIND = EventKind.JUDGE_PROMOTED
    commit: Commit
    statement: Obj
    signature: str
    previous_commit: str | None = ABSENT
    diff: str | Obj | list[Any] | None = ABSENT


@dataclass(frozen=True)
class JudgeMigrated(Payload):
    KIND = EventKind.JUDGE_MIGRATED
    commit: Commit
    champion: str = ABSENT
    champion_commit: str = ABSENT
    files: list[str] = ABSENT


@dataclass(frozen=True)
class Finalize(Payload):
    """``finalize``'s data: evotree.gates.finalize.FinalizeResult.to_dict()."""

    KIND = EventKind.FINALIZE
    status: str
    rule: str
    selected_run: str | None = ABSENT
    version: str | None = ABSENT
    commit: str | None = ABSENT
    validation_mean: float | None = ABSENT
    heldout_run: str | None = ABSENT
    heldout_mean: float | None = ABSENT
    final_score: float | None = ABSENT
    considered: int = ABSENT
    heldout_status: str | None = ABSENT
    heldout_metric: str | None = ABSENT
    error: str | None = ABSENT
    retrained: bool = ABSENT
    seed: int | None = ABSENT
    normalized: float | None = ABSENT
    v: int = ABSENT


@dataclass(frozen=True)
class FinalizeAttempt(Finalize):
    """``finalize.attempt``'s data: the same result, its status ``not_finalized``."""

    KIND = EventKind.FINALIZE_ATTEMPT


@dataclass(frozen=True)
class SignersAdded(Payload):
    KIND = EventKind.SIGNERS_ADDED
    statement: Obj
    signature: str
    commit: Commit
    previous_commit: str | None = ABSENT


#: the payload type of every event kind
PAYLOADS: dict[EventKind, type[Payload]] = {
    cls.KIND: cls
    for cls in (
        WorkspaceInitialized,
        VersionCreated,
        VersionAbandoned,
        VersionStatusChanged,
        WorktreePruned,
        WorktreeRestored,
        RunStarted,
        RunFinished,
        Finding,
        Decision,
        Promotion,
        SkillApplied,
        Audit,
        RunApproved,
        RunReserved,
        RunReleased,
        RunVoided,
        SpendRecorded,
        AnalyzerVersionCreated,
        AnalyzersPromoted,
        JudgePromoted,
        JudgeProposed,
        JudgeMigrated,
        Finalize,
        FinalizeAttempt,
        SignersAdded,
    )
}

_missing = [kind.value for kind in EventKind if kind not in PAYLOADS]
if _missing:  # pragma: no cover - a new kind without its payload is a bug caught at import
    raise TypeError(f"event kind(s) without a payload type: {', '.join(_missing)}")


def payload_type(kind: str) -> type[Payload]:
    """The payload dataclass of the event kind ``kind``; :class:`MalformedEvent` for a kind this
    evotree does not know."""
    try:
        return PAYLOADS[EventKind(kind)]
    except ValueError:
        raise MalformedEvent(
            f"unknown event kind {kind!r}",
            event=kind,
            fix="the event was written by another evotree release or by hand: see `evotree verify`",
        ) from None
