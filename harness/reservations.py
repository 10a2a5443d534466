"""The reservation book: runs reserved in the ledger and not yet finished.

Runs are reserved before they start (:mod:`evotree.harness.planning`); a reservation
(``meta["reservations"]``, with its owner process, :func:`evotree.core.proc.process_owner`)
counts as spent until ``run.finished`` charges the run. This module says which reservations
still count (:func:`live_reservations`) and gives back those whose runs never started
(``run.released``): by the request, or once their owner is known to be dead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.core.events import RunReleased
from evotree.core.ledger import Event, LedgerTxn
from evotree.core.proc import owner_is_dead
from evotree.core.workspace import Workspace

__all__ = [
    "RESERVATIONS",
    "live_reservations",
    "dead_unstarted",
    "release_reservations",
    "release_dead_reservations",
]

#: The ledger's meta key of the runs reserved and not finished: ``{run_id: reservation}``.
RESERVATIONS = "reservations"


def live_reservations(meta: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The reservations of ``meta`` that still count: all but the unstarted ones whose owner died."""
    reservations = dict(meta.get(RESERVATIONS) or {})
    for run_id in dead_unstarted(reservations):
        del reservations[run_id]
    return reservations


def dead_unstarted(reservations: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return [run_id for run_id, entry in reservations.items()
            if not entry.get("started") and owner_is_dead(entry.get("owner") or {})]


def release_reservations(ws: Workspace, run_ids: list[str], *, reason: str) -> list[str]:
    """Give back the reservations of ``run_ids`` whose runs have not started (``run.released``).

    Started runs keep theirs (``run.finished`` consumes it); unknown ids are ignored. Appends
    nothing when there is nothing to release. Returns the ids released.
    """
    def unstarted(reservations: Mapping[str, Mapping[str, Any]]) -> list[str]:
        return [r for r in dict.fromkeys(run_ids) if r in reservations and not reservations[r].get("started")]

    if not unstarted(ws.ledger.meta().get(RESERVATIONS) or {}):
        return []
    return _release(ws, unstarted, reason=reason)


def release_dead_reservations(ws: Workspace) -> list[str]:
    """Release the unstarted reservations whose owner is known to be dead (a killed ``evotree
    run`` or server, a reboot): a crash never leaves a reservation that blocks the tree.

    Only owners on this host can be judged (pid, process start time, boot id); another
    machine's reservations are left to that machine's evotree. Started runs of a dead owner are
    :func:`recover_crashed_runs`'s: it finishes them (``crashed``), which consumes theirs.
    """
    if not dead_unstarted(ws.ledger.meta().get(RESERVATIONS) or {}):
        return []
    return _release(ws, dead_unstarted, reason="the process that reserved these runs died before they started")


class _NothingToRelease(EvotreeError):
    code = "nothing_to_release"



def _release(ws: Workspace, pick: Callable[[dict[str, Any]], list[str]], *, reason: str) -> list[str]:
    actor = ws.git.identity()
    released: list[str] = []

    def change(txn: LedgerTxn) -> Event:
        reservations = dict(txn.meta.get(RESERVATIONS) or {})
        ids = pick(reservations)
        if not ids:
            raise _NothingToRelease("nothing to release")
        versions = {reservations[r].get("version") for r in ids}
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
