"""The policies every verb applies, each decided here once: trust, ownership, visibility, spend.

- **What is in force** (:func:`acting`): a verb that acts on the champion's configuration, policy
  or judge (running, comparing, gating, branching from the champion, committing) first verifies
  the signed chain (:func:`evotree.gates.trust.in_force`) and pins the workspace to its end; an
  unsigned move of a ref refuses it with the problems and ``evotree verify``.
- **Who may act** (:func:`require_owner`): a named principal (an agent behind ``evotree serve`` /
  ``evotree agent``) writes only to the versions it created; the person at this machine (no
  principal: the CLI, the Python API) owns the workspace and may act on every version (sign-off
  still refuses a version's creator, in :mod:`evotree.gates.signoff`).
- **What is hidden** (:func:`hidden_now`, :func:`refuse_hidden`, :func:`shown`): EvoPolicyGym's
  boundary, decided from the *trusted* configuration; when the chain cannot be established the
  figures are hidden (fail closed).
- **What spend may be recorded** (:data:`MAX_SPEND_USD`): finite, bounded amounts only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError, InvalidState
from evotree.core.visibility import FINALIZE_META, HiddenUntilFinalize, redact
from evotree.core.visibility import hidden as _configured_hidden
from evotree.gates.trust import InForce, UntrustedState, in_force

if TYPE_CHECKING:
    from evotree.core.ledger import VersionRecord
    from evotree.core.workspace import Workspace
    from evotree.verbs.principal import Principal

__all__ = ["MAX_SPEND_TOKENS", "MAX_SPEND_USD", "NotYourVersion", "acting", "attach", "hidden_now", "refuse_hidden", "require_owner",
           "shown"]

#: the largest amount one ``spend record`` may carry (USD): far above any real API bill, far below
#: where sums of records stop being finite
MAX_SPEND_USD = 1_000_000.0
#: the most tokens one ``spend record`` may carry: a whole number far above any real bill (an
#: unbounded one, 10**400, landed in the ledger's usage and put every version over a token budget)
MAX_SPEND_TOKENS = 10**12


class NotYourVersion(InvalidState):
    """A principal asked to write to a version another principal created (exit 10)."""

    code = "not_your_version"


def attach(ws: Workspace) -> Workspace:
    """Give ``ws`` what the layers below need from this one, passed in explicitly: the signed
    policy's check of ``run.voided`` events (the evidence views call it)."""
    ws.void_checker = _check_void
    return ws


def _check_void(ws: Workspace, record: Any, run_id: str, data: dict[str, Any]) -> list[str]:
    """:func:`evotree.gates.voids.check_void`, loaded when a void is judged (it loads the harness's
    evidence code, which a reading command such as ``tree`` never needs)."""
    from evotree.gates.voids import check_void

    return check_void(ws, record, run_id, data)


def acting(ws: Workspace) -> InForce:
    """Verify the signed chain and pin ``ws`` to its end before a verb acts (see module doc)."""
    return in_force(ws)


def hidden_now(ws: Workspace) -> bool:
    """Whether figures are hidden now, by the trusted configuration; hidden when the chain cannot
    be established (a fetched champion could otherwise switch the boundary off)."""
    try:
        in_force(ws)
    except EvotreeError:
        return True
    if _configured_hidden(ws):
        return True
    return _finalized_elsewhere(ws)


def _finalized_elsewhere(ws: Workspace) -> bool:
    """Whether the boundary is lifted only by a ``finalize`` this workspace did not record (a fetched
    ledger's unsigned event): then it holds (fail closed)."""
    from evotree.gates.finalize import finalized_here

    try:
        if not ws.config.eval.hide_until_finalize:
            return False
        return not finalized_here(ws, ws.ledger.meta().get(FINALIZE_META))
    except Exception:  # noqa: BLE001 - what cannot be read must not lift the boundary
        return True


def refuse_hidden(ws: Workspace, verb: str) -> None:
    """Refuse ``verb`` (exit 10) when it exists only to show hidden figures and they are hidden now
    (decided by :func:`hidden_now` alone: a configuration that cannot be read, or a finalize this
    workspace did not record, keeps the verb refused)."""
    from evotree.core.visibility import REFUSED

    words = verb.split()
    if not (verb in REFUSED or (words and words[0] in REFUSED)):
        return
    try:
        in_force(ws)  # an unsigned state is refused as such (exit 33, naming `evotree verify`)
    except UntrustedState:
        raise
    except EvotreeError:
        raise HiddenUntilFinalize(f"`{verb}` shows figures this workspace may hide, and what is in force "
                                  "cannot be established", fix="run `evotree verify`") from None
    if hidden_now(ws):
        raise HiddenUntilFinalize(
            f"`{verb}` shows validation and held-out figures, which this workspace hides until the search "
            "is finalized here ([eval] hide_until_finalize, EvoPolicyGym's protocol)",
            fix="use the train feedback (evotree runs, evotree sql over the train phase); a person ends the "
                "search with `evotree finalize`", command=verb)


def shown(ws: Workspace, result: Any, *, hide: bool | None = None) -> Any:
    """``result`` as any face may show it: redacted while figures are hidden."""
    if hide is None:
        hide = hidden_now(ws)
    return redact(result) if hide else result


def require_owner(record: VersionRecord, principal: Principal | None, verb: str) -> None:
    """Refuse a named principal's write to a version it did not create."""
    if principal is None:
        return
    if record.created_by != str(principal.identity()):
        raise NotYourVersion(
            f"{verb} {record.id}: {record.id} was created by {record.created_by}, not by {principal}; "
            "a principal writes only to its own versions",
            fix=f"branch your own version from it (branch(parent={record.id!r}, ...)) and work there",
            version=record.id, verb=verb)
