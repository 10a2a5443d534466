"""The reservation book: runs reserved in the ledger and not yet finished.

Runs are reserved before they start (:mod:`evotree.harness.planning`); a reservation
(``meta["reservations"]``, with its owner process, :func:`evotree.core.proc.process_owner`)
counts as spent until ``run.finished`` charges the run. This module says which reservations
the ledger holds (:func:`live_reservations`), which of them count here and which are foreign
(:func:`reservation_book`, the one rule that budgets, the gates and ``evotree status`` apply;
:func:`counted_reservations` is its counted part), and gives back those whose runs never started
(``run.released``): by the request, or once their owner is known to be dead.

The ledger's meta travels with a fetch, so a remote can plant reservations there. A reservation
counts only when one of these holds:

- this workspace made it: its entry carries :func:`reservation_seal`, a MAC by the workspace's
  local key (:func:`evotree.harness.provenance.seal`), which no fetched ledger can forge;
- its owner process is provably alive on this host (same host, boot id and pid namespace, a live
  process of that pid and start time);
- a runner key the signed policy lists signed it (``runner``:
  :func:`evotree.harness.provenance.sign_as_runner` over its facts with ``$EVOTREE_RUNNER_KEY``,
  accepted by :func:`evotree.harness.provenance.check_runner` against the champion's
  ``[share] runner_keys``) — team machines sharing one budget see each other's live reservations
  — and it is not older than its wall limit plus :data:`RUNNER_GRACE_SECONDS` (a crashed team
  machine, or an old signed entry replayed by a remote, stops holding the budget then).

Everything else — unsealed, sealed by another workspace's key, signed by a key the policy does
not list, edited after it was signed, malformed — is *foreign*: ``evotree status`` shows it apart,
and nothing counts it.
"""

from __future__ import annotations

import math
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypedDict

from evotree.core.errors import EvotreeError
from evotree.core.events import RunReleased
from evotree.core.ledger import Event, LedgerTxn
from evotree.core.proc import owner_is_dead
from evotree.core.workspace import Workspace
from evotree.harness.provenance import check_runner, runner_keys_text, seal, sealed, sign_as_runner

__all__ = [
    "RESERVATIONS",
    "RESERVATION_TYPE",
    "RUNNER_GRACE_SECONDS",
    "ForeignReservation",
    "ReservationBook",
    "live_reservations",
    "counted_reservations",
    "reservation_book",
    "reservation_marks",
    "reservation_seal",
    "owner_is_alive",
    "dead_unstarted",
    "held_reservations",
    "release_reservations",
    "release_dead_reservations",
]

#: The ledger's meta key of the runs reserved and not finished: ``{run_id: reservation}``.
RESERVATIONS = "reservations"
#: What a runner signature of a reservation signs besides its facts (never a run's statement)
RESERVATION_TYPE = "evotree.reservation"
#: How long past its wall limit (from when it was reserved) a reservation signed by a listed
#: runner still counts: time to start a queued run. After it, the budget it held is free again.
RUNNER_GRACE_SECONDS = 3600.0


def live_reservations(meta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The reservations ``meta`` holds, but the unstarted ones whose owner died: whoever wrote
    them (budgets and ``status`` count only :func:`reservation_book`'s counted part). Malformed
    entries are left out."""
    held = meta.get(RESERVATIONS)
    reservations = (
        {str(k): dict(v) for k, v in held.items() if isinstance(v, Mapping)}
        if isinstance(held, Mapping)
        else {}
    )
    for run_id in dead_unstarted(reservations):
        del reservations[run_id]
    return reservations


def reservation_facts(run_id: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """What a reservation's seal vouches for (the same dict when made and when checked)."""
    return {
        "what": "reservation",
        "run_id": run_id,
        **{
            k: entry.get(k)
            for k in (
                "version",
                "seed",
                "commit",
                "at",
                "owner",
                "limits",
                "gpus",
                "cpus",
                "usd_per_hour",
                "account",
            )
        },
    }


def reservation_seal(ws: Workspace, run_id: str, entry: Mapping[str, Any]) -> str | None:
    """This workspace's MAC over the reservation ``entry`` of ``run_id`` (stored as its ``seal``)."""
    return seal(ws, reservation_facts(run_id, entry))


def reservation_marks(
    ws: Workspace, run_id: str, entry: Mapping[str, Any], env: dict[str, str] | None = None
) -> dict[str, Any]:
    """What a reservation this workspace makes carries: its ``seal`` (:func:`reservation_seal`)
    and, when ``$EVOTREE_RUNNER_KEY`` of ``env`` (default this process's) names a key, a
    ``runner`` signature over the same facts, which other clones sharing the budget count where
    the signed policy lists that key."""
    facts = reservation_facts(run_id, entry)
    marks: dict[str, Any] = {"seal": reservation_seal(ws, run_id, entry)}
    runner = sign_as_runner({"type": RESERVATION_TYPE, **facts}, env)
    if runner is not None:
        marks["runner"] = runner
    return marks


def owner_is_alive(owner: Mapping[str, Any]) -> bool:
    """True only when ``owner`` (:func:`evotree.core.proc.process_owner`) is provably a live
    process on this host: same host, boot id and pid namespace, and a live process with its pid
    and start time. Anything missing or from elsewhere: False."""
    if not isinstance(owner, Mapping) or owner.get("pid_start") is None or not owner.get("boot_id"):
        return False
    if owner.get("host") != socket.gethostname() or owner.get("boot_id") != _boot_id():
        return False
    try:
        if (owner.get("pid_ns") or "") != os.readlink("/proc/self/ns/pid"):
            return False
    except OSError:
        return False
    return not owner_is_dead(owner)


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as handle:
            return handle.read().strip()
    except OSError:
        return ""


class ForeignReservation(TypedDict):
    """A reservation that counts for nothing here, as ``evotree status`` lists it."""

    run_id: str
    version: str | None
    seed: int | None
    #: the host its owner names (what it claims: nothing here vouches for it)
    host: str | None
    at: str | None
    #: why it does not count
    why: str


@dataclass(frozen=True)
class ReservationBook:
    """The ledger's live reservations, split by :func:`reservation_book`'s rule."""

    #: run id -> entry, for every reservation that counts (what budgets add up)
    counted: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: run id -> why it counts: "this workspace", "a live process on this host", "runner NAME"
    why_counted: dict[str, str] = field(default_factory=dict)
    #: run id -> why it counts for nothing here (a remote's, unsigned, an unlisted key, ...)
    foreign: dict[str, str] = field(default_factory=dict)
    #: run id -> entry of the foreign ones (a mapping; malformed entries: an empty one)
    foreign_entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    def foreign_rows(self) -> list[ForeignReservation]:
        """One row per foreign reservation: run_id, version, seed, host, at, why (for status)."""
        rows: list[ForeignReservation] = []
        for run_id, why in sorted(self.foreign.items()):
            entry = self.foreign_entries.get(run_id) or {}
            owner = entry.get("owner") if isinstance(entry.get("owner"), Mapping) else {}
            seed = entry.get("seed")
            seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
            rows.append(
                {
                    "run_id": run_id,
                    "version": _text(entry.get("version")),
                    "seed": seed,
                    "host": _text(owner.get("host")),
                    "at": _text(entry.get("at")),
                    "why": why,
                }
            )
        return rows


def _text(value: Any) -> str | None:
    return value[:200] if isinstance(value, str) else None


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _runner_expired(entry: Mapping[str, Any], now: datetime) -> bool:
    """Whether a runner-signed reservation is older than its wall limit plus the grace (or says
    no time or limit a reader can trust: then it is expired, fail closed)."""
    at = _parse_time(entry.get("at"))
    limits = entry.get("limits") if isinstance(entry.get("limits"), Mapping) else {}
    wall = limits.get("wall_seconds")
    if (
        at is None
        or isinstance(wall, bool)
        or not isinstance(wall, (int, float))
        or not math.isfinite(wall)
        or wall < 0
    ):
        return True
    return (now - at).total_seconds() > float(wall) + RUNNER_GRACE_SECONDS


def reservation_book(
    ws: Workspace,
    meta: Mapping[str, Any],
    *,
    runner_keys: str | None = None,
    now: datetime | None = None,
) -> ReservationBook:
    """Which of ``meta``'s reservations count here and which are foreign (module doc: sealed by
    this workspace, owned by a live process here, or signed by a listed runner and not expired).

    Unstarted reservations whose owner is known dead are in neither part (they are released).
    ``runner_keys``: the allowed-signers text of the runner keys (default: read from the signed
    champion's commit, only when an entry needs it)."""
    book = ReservationBook()
    held = meta.get(RESERVATIONS)
    if not isinstance(held, Mapping):
        return book
    moment = now or datetime.now(UTC)
    allowed = runner_keys
    dead = set(dead_unstarted({str(k): v for k, v in held.items() if isinstance(v, Mapping)}))
    for key, entry in held.items():
        run_id = str(key)
        if not isinstance(entry, Mapping):
            book.foreign[run_id] = "not a reservation (malformed entry)"
            book.foreign_entries[run_id] = {}
            continue
        if run_id in dead:
            continue
        facts = reservation_facts(run_id, entry)
        why: str | None = None
        if sealed(ws, facts, entry.get("seal")):
            why = "this workspace"
        elif owner_is_alive(entry.get("owner") or {}):
            why = "a live process on this host"
        elif entry.get("runner") is not None:
            if allowed is None:
                allowed = runner_keys_text(ws)
            verdict = check_runner(
                ws, {"type": RESERVATION_TYPE, **facts}, entry.get("runner"), runner_keys=allowed
            )
            if not verdict.trusted:
                book.foreign[run_id] = verdict.reason or "a runner key the policy does not list"
            elif _runner_expired(entry, moment):
                book.foreign[run_id] = (
                    f"signed by listed runner {verdict.signer!r}, but older "
                    f"than its wall limit plus {RUNNER_GRACE_SECONDS:g} s "
                    "(expired)"
                )
            else:
                why = f"runner {verdict.signer}"
        else:
            book.foreign[run_id] = (
                "not sealed by this workspace, no live owner on this host, no "
                "listed runner's signature: another workspace's, or a remote's"
            )
        if why is not None:
            book.counted[run_id] = dict(entry)
            book.why_counted[run_id] = why
        else:
            book.foreign_entries[run_id] = dict(entry)
    return book


def counted_reservations(ws: Workspace, meta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The reservations budgets count: :func:`reservation_book`'s counted part. A reservation a
    remote wrote into the ledger (a fetch, a pull) counts for nothing here, whatever it claims,
    unless a runner key the signed policy lists signed it."""
    return reservation_book(ws, meta).counted


def dead_unstarted(reservations: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The ids of ``reservations`` not started whose owner is known to be dead (malformed entries
    too: nothing can start them)."""
    return [
        run_id
        for run_id, entry in reservations.items()
        if not isinstance(entry, Mapping)
        or (not entry.get("started") and owner_is_dead(entry.get("owner") or {}))
    ]


def held_reservations(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``meta``'s reservation book as it is (for a transaction to change and write
    back); empty when it is not a mapping."""
    held = meta.get(RESERVATIONS)
    return dict(held) if isinstance(held, Mapping) else {}


def release_reservations(ws: Workspace, run_ids: list[str], *, reason: str) -> list[str]:
    """Give back the reservations of ``run_ids`` whose runs have not started (``run.released``).

    Started runs keep theirs (``run.finished`` consumes it); unknown ids are ignored. Appends
    nothing when there is nothing to release. Returns the ids released.
    """

    def unstarted(reservations: Mapping[str, Mapping[str, Any]]) -> list[str]:
        return [
            r
            for r in dict.fromkeys(run_ids)
            if r in reservations
            and isinstance(reservations[r], Mapping)
            and not reservations[r].get("started")
        ]

    if not unstarted(held_reservations(ws.ledger.meta())):
        return []
    return _release(ws, unstarted, reason=reason)


def release_dead_reservations(ws: Workspace) -> list[str]:
    """Release the unstarted reservations whose owner is known to be dead (a killed ``evotree
    run`` or server, a reboot): a crash never leaves a reservation that blocks the tree.

    Only owners on this host can be judged (pid, process start time, boot id); another
    machine's reservations are left to that machine's evotree. Started runs of a dead owner are
    :func:`recover_crashed_runs`'s: it finishes them (``crashed``), which consumes theirs.
    """
    if not dead_unstarted(held_reservations(ws.ledger.meta())):
        return []
    return _release(
        ws, dead_unstarted, reason="the process that reserved these runs died before they started"
    )


class _NothingToRelease(EvotreeError):
    code = "nothing_to_release"


def _release(
    ws: Workspace, pick: Callable[[dict[str, Any]], list[str]], *, reason: str
) -> list[str]:
    actor = ws.git.identity()
    released: list[str] = []

    def change(txn: LedgerTxn) -> Event:
        reservations = held_reservations(txn.meta)
        ids = pick(reservations)
        if not ids:
            raise _NothingToRelease("nothing to release")
        versions = {
            entry.get("version") if isinstance(entry, Mapping) else None
            for entry in (reservations[r] for r in ids)
        }
        for run_id in ids:
            del reservations[run_id]
        txn.meta[RESERVATIONS] = reservations
        released[:] = ids
        only = next(iter(versions)) if len(versions) == 1 else None
        released_now = RunReleased(runs=sorted(ids), reason=reason)
        return Event.of(released_now, version=only, actor=str(actor))

    try:
        ws.ledger.transact(change, actor=actor)
    except _NothingToRelease:
        return []
    return released
