"""The one trust root: what is in force is read only through the chain of signed promotions.

The configuration, the gate policy, the judge and the champion a verb acts on are those at the end
of the chain :func:`evotree.gates.verify.verify_workspace` walks (every promotion checked against
the policy in force before it, signatures verified). A ref that moved without a signature — a
``git fetch`` of a stranger's ``refs/evotree/*``, a local edit — is not followed: :func:`in_force`
raises :class:`UntrustedState`, which names the problems and ``evotree verify``. Reading verbs
(``tree``, ``log``, ``show``, ``verify``) do not call it and still show the mismatch.

The walk is cached by the ledger tip and the champion and judge refs (``.evotree/cache/trust.json``,
evotree's own state, never pushed or fetched). When only events that cannot change the chain were
appended since (runs, findings, spend: not a promotion, decision, analyzers or judge event) and the
ledger's champion, judge and analyzers are the same, the cached result stands without a new walk.

The analyzers' and the judge's signed chains are read through :func:`chain_trust` (one type,
:class:`evotree.core.chain_trust.ChainTrust`): the same walk, kept in this process by the ledger
tip, the champion, analyzers and judge refs, their reflogs and the signers accepted here — any
move
of one of them walks again. Kept in memory only: nothing on disk can tell it a chain is signed.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from evotree.core.chain_trust import CHAINS, ChainTrust
from evotree.core.ledger import EventKind
from evotree.core.refs import CHAMPION_REF, JUDGE_REF, LEDGER_REF
from evotree.diagnostics.analyzer_versions import ACTIVE_KEY, BUILTIN, RECORDS_KEY
from evotree.gates.bootstrap import accepted_state, unaccepted_signers
from evotree.gates.errors import TamperingFound
from evotree.gates.verify import verify_workspace
from evotree.gates.verify_base import ANALYZERS_PROBLEMS, JUDGE_PROBLEMS

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = ["CHAIN_KINDS", "ChainTrust", "InForce", "UntrustedState", "chain_trust", "in_force"]

#: ledger event kinds that can change what is in force (a new walk is needed after any of them)
CHAIN_KINDS = frozenset(
    {
        EventKind.WORKSPACE_INITIALIZED.value,
        EventKind.PROMOTION.value,
        EventKind.DECISION.value,
        EventKind.ANALYZERS_PROMOTED.value,
        EventKind.JUDGE_PROMOTED.value,
        EventKind.JUDGE_MIGRATED.value,
        EventKind.FINALIZE.value,
        EventKind.SIGNERS_ADDED.value,
    }
)
#: verify's problems that do not touch the champion chain (see :func:`evotree.gates.verify.trusted_policy`)
_NOT_CHAIN = (
    "decision",
    "run_approval",
    "harness_promotion",
    "ledger_harness",
    "harness_ref",
    "harness_reflog",
    "run_off_chain",
    "judge_ref",
    "judge_reflog",
    "run_judge_off_chain",
)
_CACHE_VERSION = 1


class UntrustedState(TamperingFound):
    """What is in force is not backed by signed promotions (exit 33): the verb refuses to act."""

    code = "untrusted_state"


@dataclass(frozen=True)
class InForce:
    """The end of the signed chain: the champion, its commit (whose ``evotree.toml`` and
    allowed signers are the policy in force) and the judge commit in force."""

    champion: str
    commit: str
    judge: str | None


def _ref(ws: Workspace, name: str) -> str | None:
    target = ws.git.ref_target(name)
    return None if target is None else str(target)


def _meta_key(meta: dict[str, Any]) -> str:
    return json.dumps(
        {k: meta.get(k) for k in ("champion", "judge", ACTIVE_KEY, RECORDS_KEY, "finalize")},
        sort_keys=True,
        default=str,
    )


def _cache_path(ws: Workspace) -> Any:
    return ws.state_dir / "cache" / "trust.json"


def _read_cache(ws: Workspace) -> dict[str, Any] | None:
    try:
        data = json.loads(_cache_path(ws).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("v") == _CACHE_VERSION else None


def _write_cache(ws: Workspace, data: dict[str, Any]) -> None:
    path = _cache_path(ws)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".trust.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, path)
    except OSError:
        pass  # a cache only: the next call walks again


def _only_harmless_since(ws: Workspace, old_tip: str) -> bool:
    """Whether every ledger event after ``old_tip`` (an ancestor of the tip) leaves the chain alone."""
    for entry in ws.ledger.entries():
        if entry.commit == old_tip:
            return True
        if entry.event.kind in CHAIN_KINDS:
            return False
    return False  # old_tip is not in the history: the ledger was replaced


def in_force(ws: Workspace) -> InForce:
    """Verify the signed chain (or reuse the cached walk) and pin ``ws`` to its end.

    Raises :class:`UntrustedState` when the champion ref, the ledger's champion or the judge is not
    the end of a signed chain. After it returns, ``ws.config`` is the configuration of the signed
    champion commit (read from that commit, not from the ref, so a ref moved afterwards changes
    nothing for this verb).
    """
    key = {
        "ledger": _ref(ws, LEDGER_REF),
        "champion_ref": _ref(ws, CHAMPION_REF),
        "judge_ref": _ref(ws, JUDGE_REF),
        "meta": _meta_key(ws.ledger.meta()),
        "accepted": accepted_state(ws),
    }
    cached = _read_cache(ws)
    if cached is not None and all(cached.get(k) == v for k, v in key.items() if k != "ledger"):
        if cached.get("ledger") == key["ledger"] or (
            cached.get("ledger") and _only_harmless_since(ws, str(cached["ledger"]))
        ):
            result = InForce(**cached["in_force"])
            if cached.get("ledger") != key["ledger"]:
                _write_cache(ws, {"v": _CACHE_VERSION, **key, "in_force": asdict(result)})
            ws.pin_in_force(result.commit)
            ws.pinned_judge = (
                result.judge,
            )  # harness.judge_store.judge_in_force reads this, not the ledger
            return result
    report = verify_workspace(ws, check_tags=False)
    chain = [p for p in report.problems if p.kind not in _NOT_CHAIN]
    if chain:
        listed = "; ".join(
            f"{p.message}" + (f" (ledger {p.ledger_commit[:10]})" if p.ledger_commit else "")
            for p in chain[:3]
        )
        raise UntrustedState(
            f"refusing to act: what is in force is not backed by signed promotions ({len(chain)} problem(s): "
            f"{listed})",
            fix="run `evotree verify` for the full list; if a fetch brought these refs, restore "
            "refs/evotree/ledger and refs/evotree/champion from a trusted copy (git update-ref with the "
            "values verify names) — nothing runs on an unsigned champion, policy or judge",
            problems=[p.to_dict() for p in chain],
        )
    foreign = unaccepted_signers(ws)
    if foreign:
        first = foreign[0]
        who = ", ".join(str(p) for p in (first["statement"] or {}).get("signers") or []) or "?"
        raise UntrustedState(
            f"refusing to act: the allowed signers ({who}) were added by a signers.added step made elsewhere "
            f"(ledger {first['ledger_commit'][:10]}), not accepted here: a stranger can make such a step with "
            "their own key",
            fix=f"check the key with that person, then `evotree signers accept "
            f"{first['ledger_commit'][:10]}` (or restore the ledger and champion from a trusted copy)",
            problems=[
                {"kind": "signers_not_accepted", "ledger_commit": f["ledger_commit"]}
                for f in foreign
            ],
        )
    result = InForce(
        champion=report.champion,
        commit=report.champion_commit,
        judge=(report.judge or {}).get("commit"),
    )
    _write_cache(ws, {"v": _CACHE_VERSION, **key, "in_force": asdict(result)})
    ws.pin_in_force(result.commit)
    ws.pinned_judge = (
        result.judge,
    )  # harness.judge_store.judge_in_force reads this, not the ledger
    return result


# ------------------------------------------------------------------- analyzers and judge chains
_WALKS: OrderedDict[tuple[Any, ...], dict[str, ChainTrust]] = OrderedDict()
_WALKS_LOCK = threading.Lock()
_MAX_WALKS = 32


def _walk_key(ws: Workspace) -> tuple[Any, ...]:
    """What the analyzers and judge chains' verdict depends on: the ledger tip, the refs the walk
    checks with their reflogs' lengths, and the signers accepted here."""
    repo = ws.git.repo
    refs: list[Any] = []
    for name in (LEDGER_REF, CHAMPION_REF, JUDGE_REF, CHAINS["analyzers"][0]):
        ref = repo.references.get(name)
        try:
            logged = sum(1 for _ in ref.log()) if ref is not None else 0
        except Exception:  # noqa: BLE001 - no reflog: the walk notes it, the key stays the value
            logged = 0
        refs.append((name, _ref(ws, name), logged))
    return (str(repo.path), tuple(refs), accepted_state(ws))


def chain_trust(ws: Workspace, chain: str) -> ChainTrust:
    """Where the signed ``chain`` ("analyzers" or "judge") ends, and what disagrees with it.

    The analyzers chain starts at the built-in ``h0`` (no commit), the judge chain at init's judge;
    both are walked by :func:`evotree.gates.verify.verify_workspace` (promotions checked against
    the allowed signers of the champion in force at their point of the ledger), once per state of
    the ledger and refs (:func:`_walk_key`).
    """
    if chain not in CHAINS:
        raise ValueError(f"no signed chain named {chain!r}: {', '.join(CHAINS)}")
    key = _walk_key(ws)
    with _WALKS_LOCK:
        found = _WALKS.get(key)
    if found is None:
        report = verify_workspace(ws, check_tags=False)
        analyzers = report.analyzers or {}
        found = {
            "analyzers": ChainTrust(
                "analyzers",
                str(analyzers.get("id") or BUILTIN),
                analyzers.get("commit"),
                tuple(p.message for p in report.problems if p.kind in ANALYZERS_PROBLEMS),
            ),
            "judge": ChainTrust(
                "judge",
                None,
                (report.judge or {}).get("commit"),
                tuple(p.message for p in report.problems if p.kind in JUDGE_PROBLEMS),
            ),
        }
        with _WALKS_LOCK:
            _WALKS[key] = found
            while len(_WALKS) > _MAX_WALKS:
                _WALKS.popitem(last=False)
    return found[chain]
