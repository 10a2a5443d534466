"""Money and time, read and recorded: agent/API spend (``evotree spend record``, the agent
server's ``spend_record``) and what ``evotree budget`` shows. The budgets themselves — prices,
reservations at worst-case cost, the search clock — are :mod:`evotree.harness.budget`; see
docs/protocols/budgets.md."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from evotree.core.config_limits import BudgetSection
from evotree.core.events import SpendRecorded
from evotree.harness.budget import (
    MIN_RUN_SECONDS,
    SPEND_RECORDED,
    InvalidSpend,
    TrustedUsage,
    Usage,
    _parse_time,
    add_usage,
    clock_left_seconds,
    committed,
    spend_facts,
    trusted_usage,
    usd_per_run_hour,
)
from evotree.harness.provenance import seal
from evotree.harness.reservations import counted_reservations
from evotree.core.ledger import Event
from evotree.core.ledger import LedgerTxn
from evotree.core.ledger import utcnow

if TYPE_CHECKING:
    from evotree.core.gitio import Identity
    from evotree.core.workspace import Workspace

__all__ = ["SpendRecord", "record_spend", "BudgetStatus", "budget_status", "MAX_NOTE_CHARS"]


# ---------------------------------------------------------------------------- agent/API spend
@dataclass
class SpendRecord:
    """What ``evotree spend record`` prints: the event's fields and the tree's spend after it."""

    usd: float
    note: str
    tokens: int | None
    version: str | None
    principal: str
    at: str
    tree_usd: float
    tree_max_usd: float
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


MAX_NOTE_CHARS = 2000


def record_spend(
    ws: Workspace,
    usd: float,
    note: str,
    *,
    tokens: int | None = None,
    version: str | None = None,
    actor: Identity | None = None,
) -> SpendRecord:
    """Record agent/API spend (``spend.recorded``): charged to the tree's usage (``usd``,
    ``agent_usd``, ``tokens``) and, with ``version``, to that version's. ``actor``: the principal
    (default the git identity; the agent server passes its ``--as``). Spend already made is
    always recorded, even past a budget (which then refuses new runs); a negative, non-finite or
    unnoted amount is refused and nothing is written."""

    text = _checked_spend(usd, tokens, note)
    who = actor if actor is not None else ws.git.identity()
    charge = Usage(
        usd=round(float(usd), 9), agent_usd=round(float(usd), 9), tokens=int(tokens or 0)
    ).to_dict()
    out: dict[str, Any] = {}

    def change(txn: LedgerTxn) -> Event:
        vid = None
        if version is not None:
            record = txn.require(ws.resolve(version, txn).id)
            record.usage = add_usage(record.usage, charge)
            txn.put(record)
            vid = record.id
        txn.meta["usage"] = add_usage(txn.meta.get("usage"), charge)
        at = utcnow()
        out.update(version=vid, at=at)
        # sealed by this workspace's key: only a spend recorded here counts in its budgets
        # (harness.budget.trusted_usage); a remote's spend.recorded cannot make the seal
        mark = seal(
            ws,
            spend_facts(
                version=vid, at=at, usd=charge["usd"], tokens=tokens, note=text, principal=str(who)
            ),
        )
        payload = SpendRecorded(
            usd=charge["usd"], note=text, tokens=tokens, principal=str(who), seal=mark
        )
        return Event.of(payload, version=vid, actor=str(who), at=at)

    ws.ledger.transact(change, actor=who)
    tree_usd = Usage.from_dict(trusted_usage(ws).tree).usd
    return SpendRecord(
        usd=charge["usd"],
        note=text,
        tokens=tokens,
        version=out["version"],
        principal=str(who),
        at=out["at"],
        tree_usd=tree_usd,
        tree_max_usd=ws.config.budget.tree_max_usd,
    )


def _checked_spend(usd: Any, tokens: Any, note: str) -> str:
    """The spend's note, stripped; raises :class:`InvalidSpend` for a negative, non-finite or
    unnoted amount, or a token count that is not a whole number of 0 or more."""
    if (
        isinstance(usd, bool)
        or not isinstance(usd, (int, float))
        or not math.isfinite(usd)
        or usd < 0
    ):
        raise InvalidSpend(
            f"--usd: expected a finite amount of 0 or more, actually: {usd!r}",
            fix="record what was spent, in USD (e.g. --usd 0.42); spend cannot be taken back",
            usd=str(usd),
        )
    if tokens is not None and (
        isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0
    ):
        raise InvalidSpend(
            f"--tokens: expected a whole number of 0 or more, actually: {tokens!r}",
            fix="pass the tokens used, e.g. --tokens 120000, or leave it out",
            tokens=str(tokens),
        )
    text = (note or "").strip()
    if not text or len(text) > MAX_NOTE_CHARS:
        raise InvalidSpend(
            f"--note: expected 1 to {MAX_NOTE_CHARS} characters saying what was spent on, "
            f"actually: {len(text)}",
            fix="e.g. --note 'claude api: session 3 (v4, v5)'",
        )
    return text


# ---------------------------------------------------------------------------- evotree budget
@dataclass
class BudgetStatus:
    """What ``evotree budget`` prints: prices, the tree's spend, its budgets and the clock."""

    prices: dict[str, float]
    #: charged (runs finished + agent spend) and reserved (runs not finished, at their limits)
    charged: dict[str, Any]
    reserved: dict[str, Any]
    #: one row per tree budget set (and USD always): budget, unit, limit, charged, reserved, left
    budgets: list[dict[str, Any]]
    clock: dict[str, Any]
    #: one row per version with usage: id, status, usage
    versions: list[dict[str, Any]]
    #: spend.recorded events, newest first (at most 20)
    spend: list[dict[str, Any]]
    #: True when a tree budget or the clock refuses every new run (reading is never blocked)
    spent: bool = False
    #: events that spend nothing here (a remote's run or spend, a replayed one), newest first (at
    #: most 20): {"event", "commit", "version", "at", "why", and "run_id" or "usd"}
    not_counted: list[dict[str, Any]] = field(default_factory=list)
    #: how many there are in all
    not_counted_total: int = 0
    #: the finalize account (the held-out run, and the formal retrain with [eval] finalize_retrain):
    #: never part of ``charged`` (the search's, i.e. exploration, usage) nor of any tree budget
    finalize: dict[str, Any] = field(default_factory=dict)
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def budget_status(ws: Workspace, *, now: datetime | None = None) -> BudgetStatus:
    """The tree's spend in USD and hours, what is reserved, each budget's left and the clock."""
    cfg = ws.config
    b = cfg.budget
    snapshot = ws.ledger.snapshot()
    meta = snapshot.meta
    counted = trusted_usage(ws, snapshot)  # never meta["usage"]: a fetched ledger can write that
    charged = Usage.from_dict(counted.tree)
    reserved = Usage.from_dict(committed(counted_reservations(ws, meta)))
    gpus, cpus = float(cfg.executor.gpus), float(cfg.executor.cpus)
    prices = {
        "usd_per_gpu_hour": b.usd_per_gpu_hour,
        "usd_per_cpu_hour": b.usd_per_cpu_hour,
        "gpus_per_run": gpus,
        "cpus_per_run": cpus,
        "usd_per_run_hour": usd_per_run_hour(b, gpus=gpus, cpus=cpus),
    }
    rows = _budget_rows(b, charged, reserved)
    left = clock_left_seconds(b, meta, now=now)
    clock = _clock(b, meta, left, now)
    versions = [
        {"id": r.id, "status": r.status, "usage": counted.version(r.id)}
        for r in ws.ledger.versions()
        if r.id in counted.versions
    ]
    spend = _recent_spend(ws, counted)
    spent = any(r["left"] is not None and r["left"] <= 0 for r in rows) or (
        left is not None and left < MIN_RUN_SECONDS
    )
    not_counted = [dict(item) for item in counted.not_counted[-20:]][::-1]
    return BudgetStatus(
        prices=prices,
        charged=charged.to_dict(),
        reserved=reserved.to_dict(),
        budgets=rows,
        clock=clock,
        versions=versions,
        spend=spend,
        spent=spent,
        not_counted=not_counted,
        not_counted_total=len(counted.not_counted),
        finalize=Usage.from_dict(counted.finalize).to_dict(),
    )


def _budget_rows(b: BudgetSection, charged: Usage, reserved: Usage) -> list[dict[str, Any]]:
    """One row per tree budget set (USD always): its limit, charged, reserved and left."""
    rows = []
    for name, unit, limit, key in (
        ("tree_max_usd", "USD", b.tree_max_usd, "usd"),
        ("tree_max_wall_hours", "hours", b.tree_max_wall_hours, "wall_hours"),
        ("tree_max_gpu_hours", "GPU hours", b.tree_max_gpu_hours, "gpu_hours"),
        ("tree_max_steps", "steps", b.tree_max_steps, "steps"),
        ("tree_max_episodes", "episodes", b.tree_max_episodes, "episodes"),
    ):
        if not limit and name != "tree_max_usd":
            continue
        used, held = getattr(charged, key), getattr(reserved, key)
        rows.append(
            {
                "budget": name,
                "unit": unit,
                "limit": limit or None,
                "charged": used,
                "reserved": held,
                "left": round(limit - used - held, 9) if limit else None,
            }
        )
    return rows


def _clock(
    b: BudgetSection, meta: dict[str, Any], left: float | None, now: datetime | None
) -> dict[str, Any]:
    """The search clock: when it started, hours elapsed and left, its limit and its end."""
    started = meta.get("created_at")
    start = _parse_time(started)
    elapsed = ((now or datetime.now(UTC)) - start).total_seconds() / 3600 if start else None
    clock = {
        "started_at": started,
        "elapsed_hours": round(elapsed, 6) if elapsed is not None else None,
        "limit_hours": b.tree_max_search_hours or None,
        "left_hours": round(max(left, 0.0) / 3600, 6) if left is not None else None,
        "ends_at": None,
    }
    if start is not None and b.tree_max_search_hours:
        clock["ends_at"] = (start + timedelta(hours=b.tree_max_search_hours)).isoformat()
    return clock


def _recent_spend(ws: Workspace, counted: TrustedUsage) -> list[dict[str, Any]]:
    """The newest ``spend.recorded`` events (at most 20), each marked counted or not."""
    spend = []
    skipped = {item["commit"] for item in counted.not_counted if item["event"] == SPEND_RECORDED}
    for entry in ws.ledger.entries():
        if entry.event.kind == SPEND_RECORDED:
            spend.append(
                {
                    "at": entry.event.at,
                    "version": entry.event.version,
                    "actor": entry.event.actor,
                    **{k: entry.event.data.get(k) for k in ("usd", "tokens", "note")},
                    "counted": entry.commit not in skipped,
                }
            )
            if len(spend) >= 20:
                break
    return spend
