"""The reservation book: runs reserved in the ledger and not yet finished.

Runs are reserved before they start (:mod:`evotree.harness.planning`); a reservation
(``meta["reservations"]``, with its owner process, :func:`evotree.core.proc.process_owner`)
counts as spent until ``run.finished`` charges the run. This module says which reservations
the ledger holds (:func:`live_reservations`), which of them budgets count
(:func:`counted_reservations`), and gives back those whose runs never started (``run.released``):
by the request, or once their owner is known to be dead.

The ledger's meta travels with a fetch, so a remote can plant reservations there. Budgets count
only a reservation this workspace made (its entry carries :func:`reservation_seal`, a MAC by the
workspace's local key, :func:`evotree.harness.provenance.seal`, which no fetched ledger can
forge) or one whose owner process is provably alive on this host (same host, boot id and pid
namespace, a live process of that pid and start time: a run started without a reservation).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.core.events import RunReleased
from evotree.core.ledger import Event, LedgerTxn
from evotree.core.proc import owner_is_dead
from evotree.core.workspace import Workspace
from evotree.harness.provenance import seal, sealed

__all__ = [
    "RESERVATIONS",
    "live_reservations",
    "counted_reservations",
    "reservation_seal",
    "owner_is_alive",
    "dead_unstarted",
    "held_reservations",
    "release_reservations",
    "release_dead_reservations",
]

#: The ledger's meta key of the runs reserved and not finished: ``{run_id: reservation}``.
RESERVATIONS = "reservations"


def live_reservations(meta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The reservations ``meta`` holds, but the unstarted ones whose owner died (what ``status``
    shows; budgets count only :func:`counted_reservations` of them). Malformed entries are left
    out."""
    held = meta.get(RESERVATIONS)
    reservations = ({str(k): dict(v) for k, v in held.items() if isinstance(v, Mapping)}
                    if isinstance(held, Mapping) else {})
    for run_id in dead_unstarted(reservations):
        del reservations[run_id]
    return reservations


def reservation_facts(run_id: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """What a reservation's seal vouches for (the same dict when made and when checked)."""
    return {"what": "reservation", "run_id": run_id,
            **{k: entry.get(k) for k in ("version", "seed", "commit", "at", "owner", "limits", "gpus",
                                         "cpus", "usd_per_hour", "account")}}


def reservation_seal(ws: Workspace, run_id: str, entry: Mapping[str, Any]) -> str | None:
    """This workspace's MAC over the reservation ``entry`` of ``run_id`` (stored as its ``seal``)."""
    return seal(ws, reservation_facts(run_id, entry))


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


def counted_reservations(ws: Workspace, meta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The reservations budgets count: the live ones (:func:`live_reservations`) this workspace
    sealed, or whose owner :func:`owner_is_alive`. A reservation a remote wrote into the ledger
    (a fetch, a pull) counts for nothing here, whatever it claims."""
    out: dict[str, dict[str, Any]] = {}
    for run_id, entry in live_reservations(meta).items():
        if not isinstance(entry, Mapping):
            continue
        owner = entry.get("owner") or {}
        if sealed(ws, reservation_facts(run_id, entry), entry.get("seal")) or owner_is_alive(owner):
            out[run_id] = dict(entry)
    return out


def dead_unstarted(reservations: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The ids of ``reservations`` not started whose owner is known to be dead (malformed entries
    too: nothing can start them)."""
    return [run_id for run_id, entry in reservations.items()
            if not isinstance(entry, Mapping)
            or (not entry.get("started") and owner_is_dead(entry.get("owner") or {}))]


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
        return [r for r in dict.fromkeys(run_ids) if r in reservations
                and isinstance(reservations[r], Mapping) and not reservations[r].get("started")]

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
    return _release(ws, dead_unstarted, reason="the process that reserved these runs died before they started")


class _NothingToRelease(EvotreeError):
    code = "nothing_to_release"



def _release(ws: Workspace, pick: Callable[[dict[str, Any]], list[str]], *, reason: str) -> list[str]:
    actor = ws.git.identity()
    released: list[str] = []

    def change(txn: LedgerTxn) -> Event:
        reservations = held_reservations(txn.meta)
        ids = pick(reservations)
        if not ids:
            raise _NothingToRelease("nothing to release")
        versions = {entry.get("version") if isinstance(entry, Mapping) else None
                    for entry in (reservations[r] for r in ids)}
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
