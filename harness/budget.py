"""Budgets: what a request may still spend, decided before any run starts.

Usage is charged in the ledger when a run ends (failed and crashed runs are charged too;
refused requests never start and cost nothing). Before a request starts, :func:`plan_limits`
turns the version's and the tree's remaining budget into per-run limits, split evenly over the
runs of the request, and refuses the request when a run would get nothing.

**Reservations.** A check against a snapshot would let concurrent requests each see the same
budget left; so every run is *reserved* in the ledger before it starts, in the same
compare-and-swap that checks the budget (:func:`evotree.harness.runs.reserve_runs`). A run
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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from evotree.core.config import BudgetSection
from evotree.core.errors import EvotreeError

__all__ = ["BudgetExceeded", "RunLimits", "Usage", "plan_limits", "add_usage", "committed",
           "CHAMPION_RERUNS", "champion_reruns_usage", "champion_reruns_left"]

#: The ledger's meta key of the champions' re-run accounts: ``{version: usage}``.
CHAMPION_RERUNS = "champion_reruns"


class BudgetExceeded(EvotreeError):
    """A request that would exceed a budget; ``details`` names the budget, its use and limit."""

    exit_code = 16
    code = "budget_exceeded"


@dataclass
class Usage:
    """What runs consumed: the unit every budget is counted in."""

    runs: int = 0
    episodes: int = 0
    steps: int = 0
    wall_hours: float = 0.0
    gpu_hours: float = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Usage:
        data = data or {}
        return cls(**{k: data.get(k, 0) for k in asdict(cls())})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def add_usage(a: dict[str, Any] | None, b: dict[str, Any] | None) -> dict[str, Any]:
    """Sum of two usage dicts (as stored in the ledger)."""
    x, y = Usage.from_dict(a), Usage.from_dict(b)
    return Usage(
        runs=x.runs + y.runs,
        episodes=x.episodes + y.episodes,
        steps=x.steps + y.steps,
        wall_hours=round(x.wall_hours + y.wall_hours, 9),
        gpu_hours=round(x.gpu_hours + y.gpu_hours, 9),
    ).to_dict()


def committed(reservations: Mapping[str, Mapping[str, Any]] | None, *, version: str | None = None,
              account: str | None = None) -> dict[str, Any]:
    """What the reserved (not yet finished) runs may still spend, as a usage dict.

    Each counts as one run and its planned limits: ``max_steps`` and ``max_episodes`` (0 when it
    has none), ``wall_seconds`` / 3600 wall hours and that times its ``gpus`` GPU hours.
    ``version``: only that version's reservations; ``account``: only those charged to it
    (``"version"`` or ``"champion_reruns"``).
    """
    total = Usage()
    for entry in (reservations or {}).values():
        if version is not None and entry.get("version") != version:
            continue
        if account is not None and (entry.get("account") or "version") != account:
            continue
        limits = entry.get("limits") or {}
        wall_hours = float(limits.get("wall_seconds") or 0.0) / 3600
        total.runs += 1
        total.steps += int(limits.get("max_steps") or 0)
        total.episodes += int(limits.get("max_episodes") or 0)
        total.wall_hours = round(total.wall_hours + wall_hours, 9)
        total.gpu_hours = round(total.gpu_hours + wall_hours * float(entry.get("gpus") or 0.0), 9)
    return total.to_dict()


def champion_reruns_usage(meta: Mapping[str, Any], champion: str) -> dict[str, Any]:
    """What ``champion``'s re-runs have been charged (the ledger's meta), as a usage dict."""
    return Usage.from_dict((meta.get(CHAMPION_RERUNS) or {}).get(champion)).to_dict()


def champion_reruns_left(budget: BudgetSection, meta: Mapping[str, Any], champion: str) -> int:
    """How many more re-runs ``champion`` may get: ``max_runs_per_version`` less those charged
    and those reserved (what the score gate may still ask of it)."""
    used = Usage.from_dict(champion_reruns_usage(meta, champion)).runs
    reserved = committed(meta.get("reservations"), version=champion, account=CHAMPION_RERUNS)["runs"]
    return max(0, budget.max_runs_per_version - used - reserved)


@dataclass
class RunLimits:
    """Limits handed to one run; None means unlimited."""

    wall_seconds: float
    max_steps: int | None
    max_episodes: int | None
    #: why a limit is below the whole budget (spent in part, or split over the request's runs): shown
    #: before the runs start and kept in each run's notes; not part of the stored limits
    notes: list[str] = field(default_factory=list, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {"wall_seconds": self.wall_seconds, "max_steps": self.max_steps, "max_episodes": self.max_episodes}


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
) -> RunLimits:
    """Per-run limits for ``version_runs`` new runs of ``version`` (``total_runs`` in the request).

    ``version_reserved`` / ``tree_reserved``: what runs reserved and not yet finished may still
    spend (:func:`committed`), counted as used. ``account="champion_reruns"``: ``version_usage``
    is the champion's re-run account (named so in refusals). Raises :class:`BudgetExceeded`
    naming the budget when the request would exceed one.
    """
    charged_runs = Usage.from_dict(version_usage).runs
    used_v = Usage.from_dict(add_usage(version_usage, version_reserved))
    used_t = Usage.from_dict(add_usage(tree_usage, tree_reserved))
    if used_v.runs + version_runs > budget.max_runs_per_version:
        reserved = used_v.runs - charged_runs
        whose = f"{version}'s re-runs as champion have" if account == CHAMPION_RERUNS else f"{version} has"
        raise BudgetExceeded(
            f"{whose} used {used_v.runs} of its {budget.max_runs_per_version} runs"
            + (f" ({reserved} of them reserved or running)" if reserved else "")
            + f"; {version_runs} more would exceed budget.max_runs_per_version",
            fix="run fewer seeds, or raise budget.max_runs_per_version on the champion",
            budget="max_runs_per_version", used=used_v.runs, limit=budget.max_runs_per_version,
            requested=version_runs, reserved=reserved, account=account,
        )

    def per_run(name: str, vlimit: float, tlimit: float, vused: float, tused: float, unit: str) -> float | None:
        left_v = _remaining([(vlimit, vused)])
        left_t = _remaining([(tlimit, tused)])
        shares = [x for x in ((left_v / version_runs) if left_v is not None else None,
                              (left_t / total_runs) if left_t is not None else None) if x is not None]
        if not shares:
            return None
        share = min(shares)
        if share <= 0 or (unit in ("steps", "episodes") and share < 1):
            which = "tree_max_" + name if left_t is not None and (left_t / total_runs) == share else "max_" + name
            used, limit = (tused, tlimit) if which.startswith("tree") else (vused, vlimit)
            raise BudgetExceeded(
                f"budget.{which} is spent: {used:g} of {limit:g} {unit} used, nothing left for "
                f"{version_runs if which.startswith('max') else total_runs} more run(s) of {version}",
                fix=f"raise budget.{which} on the champion, or stop here and keep the best version",
                budget=which, used=used, limit=limit, requested=version_runs,
            )
        tree_binds = left_t is not None and (left_t / total_runs) == share
        used, limit, runs = (tused, tlimit, total_runs) if tree_binds else (vused, vlimit, version_runs)
        if used > 0 or runs > 1:  # less than the whole budget: say so before the runs start, and in their notes
            which = ("tree_max_" if tree_binds else "max_") + name
            shown = int(share) if unit in ("steps", "episodes") else round(share, 4)
            notes.append(f"each run of {version} may use at most {shown:g} {unit}: budget.{which} has "
                         f"{limit - used:g} of {limit:g} left ({used:g} used), split over {runs} run(s); a run "
                         f"that needs more is cut short")
        return share

    notes: list[str] = []

    steps = per_run("steps", budget.max_steps, budget.tree_max_steps, used_v.steps, used_t.steps, "steps")
    episodes = per_run("episodes", budget.max_episodes, budget.tree_max_episodes,
                       used_v.episodes, used_t.episodes, "episodes")
    wall_hours = per_run("wall_hours", budget.max_wall_hours, budget.tree_max_wall_hours,
                         used_v.wall_hours, used_t.wall_hours, "hours")
    wall = float(budget.max_wall_seconds)
    if wall_hours is not None:
        wall = min(wall, wall_hours * 3600)
    if gpus > 0:
        gpu_hours = per_run("gpu_hours", budget.max_gpu_hours, budget.tree_max_gpu_hours,
                            used_v.gpu_hours, used_t.gpu_hours, "GPU hours")
        if gpu_hours is not None:
            wall = min(wall, gpu_hours * 3600 / gpus)
    return RunLimits(
        wall_seconds=wall,
        max_steps=int(steps) if steps is not None else None,
        max_episodes=int(episodes) if episodes is not None else None,
        notes=notes,
    )
