"""Budgets: what a request may still spend, decided before any run starts.

Usage is charged in the ledger when a run ends (failed and crashed runs are charged too;
refused requests never start and cost nothing). Before a request starts, :func:`plan_limits`
turns the version's and the tree's remaining budget into per-run limits, split evenly over the
runs of the request, and refuses the request when a run would get nothing.

**Reservations.** A check against a snapshot would let concurrent requests each see the same
budget left; so every run is *reserved* in the ledger before it starts, in the same
compare-and-swap that checks the budget (:func:`evotree.harness.planning.plan_runs`). A run
holds its reservation until ``run.finished`` charges its usage (or until it is released,
unstarted), and while it does it counts as spent (:func:`committed`): one run, and its planned
limits — its ``max_steps``, ``max_episodes`` (0 when unlimited) and its wall clock
(``wall_seconds``, times ``[executor].gpus`` for GPU hours). A run cannot use more than its
limits, so reserved + charged never exceeds a budget, however many requests race.

**Champion re-runs.** The score gate compares a candidate with the champion's runs *since its
promotion* (the runs that got it promoted are biased upward), so it asks for new runs of the
champion. Charging them to the champion's own budget — which it may have spent as a candidate —
could leave no way to settle a comparison (a deadlocked loop). Runs of the champion's promoted
commit (the version the ledger names champion, at the commit of ``refs/evotree/champion``, when
they are reserved) are therefore checked against a separate account,
``meta["champion_reruns"][<champion>]`` in the ledger, instead of the champion's own budget.
They are still charged to the tree's usage (every tree budget bounds them) and shown in the
champion's ``usage`` (what it consumed), and ``run.finished`` names the account
(``"account": "champion_reruns"``). The account has the limits of one version
(``max_runs_per_version``, ``max_steps``, ... of ``[budget]``): each champion gets one version's
worth of re-runs, no more. It is no free compute for an agent: only the current champion's
promoted commit is charged there (a commit added to its branch since is a new candidate, charged
to the version), and a champion is made only by a person's signed promotion
(:func:`champion_reruns_left` is what the score gate may still ask of it).

**Money and the search clock** (docs/protocols/budgets.md). A run costs its wall hours
× (``[executor].gpus`` × ``usd_per_gpu_hour`` + ``[executor].cpus`` × ``usd_per_cpu_hour``): the
resources it holds, whatever it does with them. Agent/API spend is recorded by hand or by the
agent server (:func:`evotree.harness.money.record_spend`, event ``spend.recorded``) and counts in the same ``usd``. A
reservation holds the run's worst-case cost (its wall limit × that rate), so a request that would
cross ``max_usd`` / ``tree_max_usd`` is refused before it starts, and the wall limit a run gets is
what the money left buys (split over the request's runs). A run is charged at most its wall limit
(:func:`charge_run`: stopping a run past its deadline and compacting its evidence is evotree's
time, not the run's), so charged + reserved never crosses a budget. The search clock
(``tree_max_search_hours``) runs from the workspace's init (``meta.created_at``): no run is
planned after its end, and every run gets the clock's end as an absolute deadline
(``RunLimits.ends_at``, :func:`run_deadline`) which the executor enforces, so runs in parallel
each may use the whole time left and runs started one after another are stopped at its end.

**Training time**. A run's usage says how much of its wall clock was training
(``train_hours``): its prepare and train phases and, where the champion's ``[eval] judge_trains``
says the judge phase runs the fixed training (RSIBench-Data), the judge phase too
(``judge_train_hours``, its part) — as measured by evotree around each phase, never as reported
by the phase. That time is inside the run's wall limit, so its reservation and every wall, GPU,
CPU and USD budget already hold it.

**Usage that counts** (:func:`trusted_usage`). The ledger travels: a fetched fast-forward can
rewrite ``meta["usage"]`` and every version record's ``usage``, which are caches. Budgets are
decided from usage recomputed from the events this workspace trusts: each ``run.finished`` whose
provenance is this workspace's key or a runner key the signed policy lists
(:func:`evotree.harness.provenance.check_run`; counted once per run id, the oldest), and each
``spend.recorded`` sealed by this workspace's key (:func:`evotree.harness.provenance.seal`;
counted once per seal). Everything else — a remote's claim, a replayed event, a spend recorded
before seals existed — is shown by ``evotree budget`` as not counted and spends nothing here.
Reservations count by the same kind of rule, decided once in
:func:`evotree.harness.reservations.reservation_book`: sealed by this workspace, owned by a live
process here, or signed by a listed runner key (clones sharing one budget).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from evotree.core.config_limits import BudgetSection
from evotree.core.errors import EvotreeError, UsageError
from evotree.core.events import ABSENT, MalformedEvent, SpendRecorded
from evotree.core.ledger import EventKind, LedgerTxn
from evotree.harness.provenance import check_run, runner_keys_text, sealed

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = [
    "BudgetExceeded",
    "InvalidSpend",
    "RunLimits",
    "Usage",
    "plan_limits",
    "add_usage",
    "committed",
    "CHAMPION_RERUNS",
    "FINALIZE_ACCOUNT",
    "FINALIZE_USAGE",
    "champion_reruns_usage",
    "champion_reruns_left",
    "usd_per_run_hour",
    "charge_run",
    "clock_left_seconds",
    "clock_ends_at",
    "run_deadline",
    "SPEND_RECORDED",
    "MIN_RUN_SECONDS",
    "TrustedUsage",
    "trusted_usage",
    "spend_facts",
]

#: The ledger event of agent/API spend recorded by a person or an agent (:func:`record_spend`).
SPEND_RECORDED = EventKind.SPEND_RECORDED.value
#: A money or clock share that buys less than this many seconds of a run is refused, not started.
MIN_RUN_SECONDS = 1.0

#: The ledger's meta key of the champions' re-run accounts: ``{version: usage}``.
CHAMPION_RERUNS = "champion_reruns"
#: The account of finalize's one held-out evaluation, apart from every search budget
#: (:func:`evotree.harness.planning.plan_finalize_run`): a reservation names it (``"account": "finalize"``),
#: :func:`committed` leaves it out of the search's totals, and its usage is ``meta["finalize_usage"]``.
FINALIZE_ACCOUNT = "finalize"
FINALIZE_USAGE = "finalize_usage"


class BudgetExceeded(EvotreeError):
    """A request that would exceed a budget; ``details`` names the budget, its use and limit."""

    exit_code = 16
    code = "budget_exceeded"


class InvalidSpend(UsageError):
    """A spend record that cannot be recorded: negative, not finite, no note (exit 2)."""

    code = "invalid_spend"


@dataclass
class Usage:
    """What runs consumed: the unit every budget is counted in."""

    runs: int = 0
    episodes: int = 0
    steps: int = 0
    wall_hours: float = 0.0
    gpu_hours: float = 0.0
    #: ``[executor].cpus`` × wall hours (what ``usd_per_cpu_hour`` prices)
    cpu_hours: float = 0.0
    #: money: runs at the prices in force when they finished, plus recorded agent/API spend
    usd: float = 0.0
    #: the part of ``usd`` recorded as agent/API spend (``spend.recorded``)
    agent_usd: float = 0.0
    #: agent tokens recorded with that spend (information; no budget)
    tokens: int = 0
    #: the part of ``wall_hours`` that was training: the prepare and train phases, and the judge
    #: phase where ``[eval] judge_trains`` (measured by evotree; charged up to the run's wall limit)
    train_hours: float = 0.0
    #: the part of ``train_hours`` spent in the judge phase (``[eval] judge_trains``)
    judge_train_hours: float = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Usage:
        data = data or {}
        return cls(**{k: data.get(k, 0) or 0 for k in asdict(cls())})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def add_usage(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any]:
    """Sum of two usage dicts (as stored in the ledger); hours and USD rounded to 1e-9."""
    x, y = Usage.from_dict(a), Usage.from_dict(b)
    out = Usage()
    for f in fields(Usage):
        total = getattr(x, f.name) + getattr(y, f.name)
        setattr(out, f.name, round(total, 9) if isinstance(total, float) else total)
    return out.to_dict()


def usd_per_run_hour(budget: BudgetSection, *, gpus: float, cpus: float) -> float:
    """What one hour of one run costs: its GPUs and CPUs at ``[budget]``'s prices."""
    return float(gpus) * budget.usd_per_gpu_hour + float(cpus) * budget.usd_per_cpu_hour


def committed(
    reservations: Mapping[str, Mapping[str, Any]] | None,
    *,
    version: str | None = None,
    account: str | None = None,
) -> dict[str, Any]:
    """What the reserved (not yet finished) runs may still spend, as a usage dict.

    Each counts as one run and its planned limits: ``max_steps`` and ``max_episodes`` (0 when it
    has none), ``wall_seconds`` / 3600 wall hours, that times its ``gpus`` GPU hours and its
    ``cpus`` CPU hours, and that times its ``usd_per_hour`` (the prices when it was reserved) USD.
    ``version``: only that version's reservations; ``account``: only those charged to it
    (``"version"`` or ``"champion_reruns"``).
    """
    total = Usage()
    for entry in (reservations or {}).values():
        if version is not None and entry.get("version") != version:
            continue
        if account is not None and (entry.get("account") or "version") != account:
            continue
        if account is None and entry.get("account") == FINALIZE_ACCOUNT:
            continue  # finalize's held-out evaluation is no part of the search's budgets
        limits = entry.get("limits") or {}
        wall_hours = float(limits.get("wall_seconds") or 0.0) / 3600
        total.runs += 1
        total.steps += int(limits.get("max_steps") or 0)
        total.episodes += int(limits.get("max_episodes") or 0)
        total.wall_hours = round(total.wall_hours + wall_hours, 9)
        total.gpu_hours = round(total.gpu_hours + wall_hours * float(entry.get("gpus") or 0.0), 9)
        total.cpu_hours = round(total.cpu_hours + wall_hours * float(entry.get("cpus") or 0.0), 9)
        total.usd = round(total.usd + wall_hours * float(entry.get("usd_per_hour") or 0.0), 9)
    return total.to_dict()


def champion_reruns_usage(meta: Mapping[str, Any], champion: str) -> dict[str, Any]:
    """What ``champion``'s re-runs have been charged (the ledger's meta), as a usage dict."""
    return Usage.from_dict((meta.get(CHAMPION_RERUNS) or {}).get(champion)).to_dict()


def champion_reruns_left(
    budget: BudgetSection,
    meta: Mapping[str, Any],
    champion: str,
    *,
    counted: TrustedUsage | None = None,
    reservations: Mapping[str, Mapping[str, Any]] | None = None,
) -> int:
    """How many more re-runs ``champion`` may get: ``max_runs_per_version`` less those charged
    and those reserved (what the score gate may still ask of it). ``counted``: the charged runs
    from :func:`trusted_usage` (else ``meta``'s cached account, which a fetched ledger can
    write); ``reservations``: those that count
    (:func:`evotree.harness.reservations.counted_reservations`; else all of ``meta``'s)."""
    if counted is not None:
        charged = counted.reruns(champion)
    else:
        charged = champion_reruns_usage(meta, champion)
    used = Usage.from_dict(charged).runs
    held = reservations if reservations is not None else meta.get("reservations")
    reserved = committed(held, version=champion, account=CHAMPION_RERUNS)["runs"]
    return max(0, budget.max_runs_per_version - used - reserved)


# ---------------------------------------------------------------------------- usage that counts
def spend_facts(
    *, version: str | None, at: str, usd: Any, tokens: Any, note: Any, principal: Any
) -> dict[str, Any]:
    """What the seal of a ``spend.recorded`` event vouches for (the same dict made and checked)."""
    return {
        "event": SPEND_RECORDED,
        "version": version,
        "at": at,
        "usd": usd,
        "tokens": tokens,
        "note": note,
        "principal": principal,
    }


@dataclass(frozen=True)
class TrustedUsage:
    """Usage recomputed from the ledger's trusted events (module doc): what budgets decide from."""

    #: the tree's usage: every counted run but finalize's, and every counted spend
    tree: dict[str, Any]
    #: each version's usage (its counted runs, champion re-runs included, and spend charged to it)
    versions: dict[str, dict[str, Any]]
    #: each champion's re-run account
    champion_reruns: dict[str, dict[str, Any]]
    #: finalize's own account
    finalize: dict[str, Any]
    #: events that spend nothing here, oldest first: {"event", "commit", "version", "run_id", "why"}
    not_counted: tuple[dict[str, Any], ...] = ()

    def version(self, version: str) -> dict[str, Any]:
        """``version``'s usage (zero when nothing of it counts)."""
        return Usage.from_dict(self.versions.get(version)).to_dict()

    def reruns(self, champion: str) -> dict[str, Any]:
        """``champion``'s re-run account (zero when nothing of it counts)."""
        return Usage.from_dict(self.champion_reruns.get(champion)).to_dict()


@dataclass
class _Tally:
    """The running state of :func:`trusted_usage` at one ledger commit (kept to resume from)."""

    tree: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, dict[str, Any]] = field(default_factory=dict)
    reruns: dict[str, dict[str, Any]] = field(default_factory=dict)
    finalize: dict[str, Any] = field(default_factory=dict)
    runs: set[str] = field(default_factory=set)
    seals: set[str] = field(default_factory=set)
    started: dict[str, dict[str, Any]] = field(default_factory=dict)
    not_counted: list[dict[str, Any]] = field(default_factory=list)

    def copy(self) -> _Tally:
        return _Tally(
            dict(self.tree),
            dict(self.versions),
            dict(self.reruns),
            dict(self.finalize),
            set(self.runs),
            set(self.seals),
            dict(self.started),
            list(self.not_counted),
        )


_TALLIES: OrderedDict[tuple[str, str, str], _Tally] = OrderedDict()
_TALLIES_LOCK = threading.Lock()
_MAX_TALLIES = 64


def _finite_usage(data: Any) -> dict[str, Any] | None:
    """``data`` as a usage dict when every figure is a finite number of 0 or more, else None."""
    if not isinstance(data, Mapping):
        return None
    for name in (f.name for f in fields(Usage)):
        value = data.get(name, 0)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        if not math.isfinite(value) or value < 0:
            return None
    return Usage.from_dict(dict(data)).to_dict()


def _count(ws: Workspace, tally: _Tally, commit: str, event: Any, runner_keys: str) -> None:
    """Add ``event`` (the next, oldest first) to ``tally`` when it is trusted; note it otherwise."""
    data = event.data if isinstance(event.data, dict) else {}
    kind = event.kind
    if kind == EventKind.RUN_STARTED.value:
        rid = data.get("run_id")
        if isinstance(rid, str):
            tally.started.setdefault(rid, data)  # the oldest: one appended later cannot disown it
        return
    if kind not in (EventKind.RUN_FINISHED.value, SPEND_RECORDED):
        return

    def skip(why: str, **extra: Any) -> None:
        tally.not_counted.append(
            {
                "event": kind,
                "commit": commit,
                "version": event.version,
                "at": event.at,
                "why": why,
                **extra,
            }
        )

    try:
        payload = event.payload()  # strict: a malformed event spends nothing, and says why
    except MalformedEvent as exc:
        rid = data.get("run_id")
        skip(exc.message, **({"run_id": rid} if isinstance(rid, str) else {}))
        return
    if isinstance(payload, SpendRecorded):
        _count_spend(ws, tally, event, payload, data, skip)
    else:
        _count_run(ws, tally, event, data, runner_keys, skip)


def _count_spend(
    ws: Workspace,
    tally: _Tally,
    event: Any,
    payload: SpendRecorded,
    data: dict[str, Any],
    skip: Callable[..., None],
) -> None:
    """Count a ``spend.recorded`` event sealed by this workspace's key, once per seal."""
    tokens = payload.tokens if payload.tokens is not ABSENT else None
    principal = payload.principal if payload.principal is not ABSENT else None
    facts = spend_facts(
        version=event.version,
        at=event.at,
        usd=payload.usd,
        tokens=tokens,
        note=payload.note,
        principal=principal,
    )
    mac = payload.seal if payload.seal is not ABSENT else None
    usage = _finite_usage({"usd": payload.usd, "agent_usd": payload.usd, "tokens": tokens or 0})
    if not sealed(ws, facts, mac):
        skip(
            "not sealed by this workspace's key: recorded elsewhere, edited, or before seals",
            usd=data.get("usd"),
        )
    elif mac in tally.seals:
        skip("a copy of a spend already counted", usd=data.get("usd"))
    elif usage is None:
        skip("its amount is not a finite number of 0 or more", usd=str(data.get("usd"))[:40])
    else:
        tally.seals.add(mac)
        tally.tree = add_usage(tally.tree, usage)
        if event.version:
            tally.versions[event.version] = add_usage(tally.versions.get(event.version), usage)


def _count_run(
    ws: Workspace,
    tally: _Tally,
    event: Any,
    data: dict[str, Any],
    runner_keys: str,
    skip: Callable[..., None],
) -> None:
    """Count a trusted ``run.finished`` event, once per run, to its account."""
    rid, version = data.get("run_id"), event.version
    if not isinstance(rid, str) or not rid or not isinstance(version, str):
        skip("names no run or no version")
        return
    if rid in tally.runs:
        skip("a second run.finished of a run already counted", run_id=rid)
        return
    verdict = check_run(ws, rid, version, tally.started.get(rid), data, runner_keys=runner_keys)
    if not verdict.trusted:
        skip(verdict.reason or "foreign", run_id=rid)
        return
    usage = _finite_usage(data.get("usage") or {})
    if usage is None:
        skip("its usage is not finite numbers of 0 or more", run_id=rid)
        return
    tally.runs.add(rid)
    account = data.get("account") or "version"
    if account == FINALIZE_ACCOUNT:
        tally.finalize = add_usage(tally.finalize, usage)
        return
    tally.versions[version] = add_usage(tally.versions.get(version), usage)
    tally.tree = add_usage(tally.tree, usage)
    if account == CHAMPION_RERUNS:
        tally.reruns[version] = add_usage(tally.reruns.get(version), usage)


def trusted_usage(ws: Workspace, txn: LedgerTxn | None = None) -> TrustedUsage:
    """The usage budgets decide from, recomputed from the events this workspace trusts (module
    doc) as of ``txn``'s head (the ledger's head without one); never ``meta["usage"]``.

    Kept per ledger commit: a later call walks only the events appended since.
    """
    txn = txn if txn is not None else ws.ledger.snapshot()
    runner_keys = runner_keys_text(ws)
    repo_key = str(ws.git.repo.path)
    head = str(txn.head.id) if txn.head is not None else ""
    pending: list[tuple[str, Any]] = []
    base = _Tally()
    with _TALLIES_LOCK:
        cached = _TALLIES.get((repo_key, runner_keys, head))
    if cached is None:
        for entry in txn.entries():  # newest first, down to a commit already tallied
            with _TALLIES_LOCK:
                found = _TALLIES.get((repo_key, runner_keys, entry.commit))
            if found is not None:
                base = found
                break
            pending.append((entry.commit, entry.event))
        tally = base.copy()
        for commit, event in reversed(pending):
            _count(ws, tally, commit, event, runner_keys)
        with _TALLIES_LOCK:
            _TALLIES[(repo_key, runner_keys, head)] = tally
            while len(_TALLIES) > _MAX_TALLIES:
                _TALLIES.popitem(last=False)
        cached = tally
    return TrustedUsage(
        tree=Usage.from_dict(cached.tree).to_dict(),
        versions=dict(cached.versions),
        champion_reruns=dict(cached.reruns),
        finalize=Usage.from_dict(cached.finalize).to_dict(),
        not_counted=tuple(cached.not_counted),
    )


@dataclass
class RunLimits:
    """Limits handed to one run; None means unlimited."""

    wall_seconds: float
    max_steps: int | None
    max_episodes: int | None
    #: why a limit is below the whole budget (spent in part, or split over the request's runs): shown
    #: before the runs start and kept in each run's notes; not part of the stored limits
    notes: list[str] = field(default_factory=list, compare=False)
    #: the search clock's end (ISO 8601, UTC) when ``tree_max_search_hours`` is set: an absolute
    #: deadline the executor stops the run at (:func:`run_deadline`), whenever the run starts
    ends_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "wall_seconds": self.wall_seconds,
            "max_steps": self.max_steps,
            "max_episodes": self.max_episodes,
        }
        if self.ends_at is not None:
            out["ends_at"] = self.ends_at
        return out


def _remaining(pairs: list[tuple[float, float]]) -> float | None:
    """Smallest (limit - used) over the non-zero limits; None when all are unlimited."""
    left = [limit - used for limit, used in pairs if limit]
    return min(left) if left else None


def plan_limits(
    budget: BudgetSection,
    *,
    version: str,
    version_usage: dict[str, Any] | None,
    tree_usage: dict[str, Any] | None,
    version_runs: int,
    total_runs: int,
    gpus: float = 0.0,
    version_reserved: dict[str, Any] | None = None,
    tree_reserved: dict[str, Any] | None = None,
    account: str = "version",
    cpus: float = 0.0,
    clock_left: float | None = None,
    clock_ends_at: str | None = None,
) -> RunLimits:
    """Per-run limits for ``version_runs`` new runs of ``version`` (``total_runs`` in the request).

    ``version_reserved`` / ``tree_reserved``: what runs reserved and not yet finished may still
    spend (:func:`committed`), counted as used. ``account="champion_reruns"``: ``version_usage``
    is the champion's re-run account (named so in refusals). ``gpus`` / ``cpus``: what each run
    holds (priced by ``usd_per_gpu_hour`` / ``usd_per_cpu_hour``: the money left caps the wall
    clock). ``clock_left``: seconds until the search clock's end (:func:`clock_left_seconds`):
    no run's wall limit exceeds it, and ``clock_ends_at`` (:func:`clock_ends_at`) becomes each
    run's absolute deadline (``ends_at``), enforced by the executor — not split over the runs, so
    runs in parallel each get the whole time left and runs started later are cut at the clock's
    end. Raises :class:`BudgetExceeded` naming the budget when the request would exceed one.
    """
    charged_runs = Usage.from_dict(version_usage).runs
    used_v = Usage.from_dict(add_usage(version_usage, version_reserved))
    used_t = Usage.from_dict(add_usage(tree_usage, tree_reserved))
    _check_run_count(budget, version, version_runs, account, used_v.runs, charged_runs)
    split = _Split(version, version_runs, total_runs)
    steps = split.per_run(
        "steps", budget.max_steps, budget.tree_max_steps, used_v.steps, used_t.steps, "steps"
    )
    episodes = split.per_run(
        "episodes",
        budget.max_episodes,
        budget.tree_max_episodes,
        used_v.episodes,
        used_t.episodes,
        "episodes",
    )
    wall = _wall_from_hours(budget, split, used_v, used_t, gpus)
    # money: refused when spent (agent spend included) even if runs are free; else the USD share
    # of a run, at its hourly price, caps its wall clock (rounded down to the millisecond)
    usd = split.per_run("usd", budget.max_usd, budget.tree_max_usd, used_v.usd, used_t.usd, "USD")
    rate = usd_per_run_hour(budget, gpus=gpus, cpus=cpus)
    if usd is not None and rate > 0:
        wall = min(wall, _bought_seconds(budget, split, usd, rate, used_t.usd))
    ends_at = None
    if clock_left is not None:
        wall = _clock_wall(budget, split, clock_left, clock_ends_at, wall)
        ends_at = clock_ends_at
    return RunLimits(
        wall_seconds=wall,
        max_steps=int(steps) if steps is not None else None,
        max_episodes=int(episodes) if episodes is not None else None,
        notes=split.notes,
        ends_at=ends_at,
    )


def _check_run_count(
    budget: BudgetSection,
    version: str,
    version_runs: int,
    account: str,
    used_runs: int,
    charged_runs: int,
) -> None:
    """Refuse a request whose runs would exceed ``max_runs_per_version`` (reserved ones count)."""
    if used_runs + version_runs > budget.max_runs_per_version:
        reserved = used_runs - charged_runs
        whose = (
            f"{version}'s re-runs as champion have"
            if account == CHAMPION_RERUNS
            else f"{version} has"
        )
        raise BudgetExceeded(
            f"{whose} used {used_runs} of its {budget.max_runs_per_version} runs"
            + (f" ({reserved} of them reserved or running)" if reserved else "")
            + f"; {version_runs} more would exceed budget.max_runs_per_version",
            fix="run fewer seeds, or raise budget.max_runs_per_version on the champion",
            budget="max_runs_per_version",
            used=used_runs,
            limit=budget.max_runs_per_version,
            requested=version_runs,
            reserved=reserved,
            account=account,
        )


@dataclass
class _Split:
    """Splits what each budget has left over a request's runs; its notes say where one binds."""

    version: str
    version_runs: int
    total_runs: int
    notes: list[str] = field(default_factory=list)

    def per_run(
        self, name: str, vlimit: float, tlimit: float, vused: float, tused: float, unit: str
    ) -> float | None:
        """Each run's share of budget ``name`` (version's and tree's, the smaller); None when
        neither is set. Raises :class:`BudgetExceeded` when nothing is left."""
        version, version_runs, total_runs = self.version, self.version_runs, self.total_runs
        left_v = _remaining([(vlimit, vused)])
        left_t = _remaining([(tlimit, tused)])
        shares = [
            x
            for x in (
                (left_v / version_runs) if left_v is not None else None,
                (left_t / total_runs) if left_t is not None else None,
            )
            if x is not None
        ]
        if not shares:
            return None
        share = min(shares)
        if share <= 0 or (unit in ("steps", "episodes") and share < 1):
            which = (
                "tree_max_" + name
                if left_t is not None and (left_t / total_runs) == share
                else "max_" + name
            )
            used, limit = (tused, tlimit) if which.startswith("tree") else (vused, vlimit)
            raise BudgetExceeded(
                f"budget.{which} is spent: {used:g} of {limit:g} {unit} used, nothing left for "
                f"{version_runs if which.startswith('max') else total_runs} more run(s) of {version}",
                fix=f"raise budget.{which} on the champion, or stop here and keep the best version",
                budget=which,
                used=used,
                limit=limit,
                requested=version_runs,
            )
        tree_binds = left_t is not None and (left_t / total_runs) == share
        used, limit, runs = (
            (tused, tlimit, total_runs) if tree_binds else (vused, vlimit, version_runs)
        )
        if (
            used > 0 or runs > 1
        ):  # less than the whole budget: say so before the runs start, and in their notes
            which = ("tree_max_" if tree_binds else "max_") + name
            shown = int(share) if unit in ("steps", "episodes") else round(share, 4)
            self.notes.append(
                f"each run of {version} may use at most {shown:g} {unit}: budget.{which} has "
                f"{limit - used:g} of {limit:g} left ({used:g} used), split over {runs} run(s); a run "
                f"that needs more is cut short"
            )
        return share


def _wall_from_hours(
    budget: BudgetSection, split: _Split, used_v: Usage, used_t: Usage, gpus: float
) -> float:
    """A run's wall clock in seconds: ``max_wall_seconds``, capped by its share of the wall hours
    and (when it holds GPUs) of the GPU hours left."""
    wall_hours = split.per_run(
        "wall_hours",
        budget.max_wall_hours,
        budget.tree_max_wall_hours,
        used_v.wall_hours,
        used_t.wall_hours,
        "hours",
    )
    wall = float(budget.max_wall_seconds)
    if wall_hours is not None:
        wall = min(wall, wall_hours * 3600)
    if gpus > 0:
        gpu_hours = split.per_run(
            "gpu_hours",
            budget.max_gpu_hours,
            budget.tree_max_gpu_hours,
            used_v.gpu_hours,
            used_t.gpu_hours,
            "GPU hours",
        )
        if gpu_hours is not None:
            wall = min(wall, gpu_hours * 3600 / gpus)
    return wall


def _bought_seconds(
    budget: BudgetSection, split: _Split, usd: float, rate: float, tree_used_usd: float
) -> float:
    """The seconds a run's USD share buys at ``rate`` USD/hour (to the millisecond, its charge
    within the share); raises :class:`BudgetExceeded` when that is under a minimum run."""
    bought = math.floor(usd / rate * 3600 * 1000) / 1000
    while (
        bought > 0 and round(bought / 3600 * rate, 9) > usd
    ):  # charged cost is rounded to 1e-9 USD
        bought = round(bought - 0.001, 3)
    if bought < MIN_RUN_SECONDS:
        which = (
            "tree_max_usd"
            if budget.tree_max_usd
            and (budget.tree_max_usd - tree_used_usd) / split.total_runs <= usd
            else "max_usd"
        )
        raise BudgetExceeded(
            f"budget.{which} has {usd:.6g} USD left for each of the request's runs: less than "
            f"{MIN_RUN_SECONDS:g} s of a run at {rate:g} USD/hour; {split.version} is not started",
            fix=f"raise budget.{which} on the champion, or stop here and keep the best version",
            budget=which,
            left_usd=usd,
            usd_per_hour=rate,
            requested=split.version_runs,
        )
    return bought


def _clock_wall(
    budget: BudgetSection,
    split: _Split,
    clock_left: float,
    clock_ends_at: str | None,
    wall: float,
) -> float:
    """A run's wall clock capped by the search clock's time left; raises
    :class:`BudgetExceeded` when that is under a minimum run."""
    version = split.version
    share = math.floor(clock_left * 1000) / 1000
    if share < MIN_RUN_SECONDS:
        raise BudgetExceeded(
            f"budget.tree_max_search_hours is spent: the search clock of {budget.tree_max_search_hours:g} "
            f"hours (from the workspace's init) has {max(clock_left, 0.0):.0f} s left, less than "
            f"{MIN_RUN_SECONDS:g} s; {version} is not started",
            fix="stop here and keep the best version (evotree tree), or raise budget.tree_max_search_hours "
            "on the champion",
            budget="tree_max_search_hours",
            left_seconds=max(clock_left, 0.0),
            limit=budget.tree_max_search_hours,
            requested=split.version_runs,
        )
    if share < wall:
        split.notes.append(
            f"each run of {version} may use at most {share:g} s: the search clock "
            f"(budget.tree_max_search_hours = {budget.tree_max_search_hours:g}) has "
            f"{clock_left:.0f} s left"
            + (f" and every run is stopped at its end ({clock_ends_at})" if clock_ends_at else "")
        )
        wall = share
    return wall


# ---------------------------------------------------------------------------- charging a run
def charge_run(
    budget: BudgetSection,
    *,
    wall_seconds: float,
    limits: Mapping[str, Any] | None,
    gpus: float,
    cpus: float,
    steps: int,
    episodes: int,
    train_seconds: float = 0.0,
    judge_train_seconds: float = 0.0,
) -> tuple[dict[str, Any], list[str]]:
    """What a finished run is charged, and the note to keep when it is less than measured.

    Hours are charged up to the run's wall limit (``limits["wall_seconds"]``): the time past its
    deadline — the grace a stopped phase gets, compacting its evidence — is evotree's, and its
    reservation (the limit × the prices) is what the budgets were checked against, so a run can
    never end above a budget (0.02517 of 0.025). USD at the prices in force now.
    ``train_seconds`` / ``judge_train_seconds``: the measured training time of its phases
    (:func:`evotree.harness.finish.training_seconds`), shown as ``train_hours`` /
    ``judge_train_hours``, at most the hours charged (the judge phase, last, is cut first).
    """
    notes: list[str] = []
    seconds = max(0.0, float(wall_seconds))
    cap = (limits or {}).get("wall_seconds")
    if (
        isinstance(cap, (int, float))
        and not isinstance(cap, bool)
        and math.isfinite(cap)
        and 0 < cap < seconds
    ):
        notes.append(
            f"charged {cap:g} s, its wall limit, of the {seconds:.3f} s it took (stopping and "
            f"compacting a run past its deadline is not charged to it)"
        )
        seconds = float(cap)
    hours = seconds / 3600
    rate = usd_per_run_hour(budget, gpus=gpus, cpus=cpus)
    # the judge phase comes last: time cut off past the wall limit is cut from it first
    judge_train = max(0.0, float(judge_train_seconds))
    before_judge = min(max(0.0, float(train_seconds) - judge_train), seconds)
    judge_train = min(judge_train, seconds - before_judge)
    train = before_judge + judge_train
    usage = Usage(
        runs=1,
        episodes=int(episodes),
        steps=int(steps),
        wall_hours=round(hours, 9),
        gpu_hours=round(hours * float(gpus), 9),
        cpu_hours=round(hours * float(cpus), 9),
        usd=round(hours * rate, 9),
        train_hours=round(train / 3600, 9),
        judge_train_hours=round(judge_train / 3600, 9),
    )
    return usage.to_dict(), notes


# ---------------------------------------------------------------------------- the search clock
def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def clock_left_seconds(
    budget: BudgetSection, meta: Mapping[str, Any], *, now: datetime | None = None
) -> float | None:
    """Seconds left on the search clock (``tree_max_search_hours`` from ``meta["created_at"]``,
    the workspace's init); None when there is no clock. A ledger without its init time has no
    clock to measure from: 0 left (fail closed)."""
    if not budget.tree_max_search_hours:
        return None
    started = _parse_time(meta.get("created_at"))
    if started is None:
        return 0.0
    elapsed = ((now or datetime.now(UTC)) - started).total_seconds()
    return budget.tree_max_search_hours * 3600 - elapsed


def clock_ends_at(budget: BudgetSection, meta: Mapping[str, Any]) -> str | None:
    """The search clock's end (ISO 8601, UTC): ``meta["created_at"]`` + ``tree_max_search_hours``;
    None without a clock or without an init time (:func:`clock_left_seconds` then refuses)."""
    started = _parse_time(meta.get("created_at"))
    if not budget.tree_max_search_hours or started is None:
        return None
    return (started + timedelta(hours=budget.tree_max_search_hours)).isoformat()


def run_deadline(
    limits: Mapping[str, Any], started: float, *, now: datetime | None = None
) -> tuple[float, float | None]:
    """A run's deadline on this process's monotonic clock, and the search clock's end on it.

    ``limits``: the run's stored limits (``wall_seconds``, optional ``ends_at``); ``started``:
    ``time.monotonic()`` when the run started. The deadline is the sooner of ``started`` +
    ``wall_seconds`` and ``ends_at`` (an absolute time: what is left of it is measured now, so
    a run that starts late, after others, gets only what the clock has left). The second value
    is ``ends_at`` on the monotonic clock (None without one): the executor names the search
    clock when that is what stopped the run. A malformed ``ends_at`` fails closed (no time).
    """
    import time

    deadline = started + float(limits.get("wall_seconds") or 0.0)
    text = limits.get("ends_at")
    if text is None:
        return deadline, None
    ends = _parse_time(text)
    mono = time.monotonic()
    clock_end = mono + (
        (ends - (now or datetime.now(UTC))).total_seconds() if ends is not None else 0.0
    )
    return min(deadline, clock_end), clock_end
