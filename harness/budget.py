"""Budgets: what a request may still spend, decided before any run starts.

Usage is charged in the ledger when a run ends (failed and crashed runs are charged too;
refused requests never start and cost nothing). Before a request starts, :func:`plan_limits`
turns the version's and the tree's remaining budget into per-run limits, split evenly over the
runs of the request, and refuses the request when a run would get nothing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from evotree.core.config import BudgetSection
from evotree.core.errors import EvotreeError

__all__ = ["BudgetExceeded", "RunLimits", "Usage", "plan_limits", "add_usage"]


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


@dataclass
class RunLimits:
    """Limits handed to one run; None means unlimited."""

    wall_seconds: float
    max_steps: int | None
    max_episodes: int | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
) -> RunLimits:
    """Per-run limits for ``version_runs`` new runs of ``version`` (``total_runs`` in the request).

    Raises :class:`BudgetExceeded` naming the budget when the request would exceed one.
    """
    used_v, used_t = Usage.from_dict(version_usage), Usage.from_dict(tree_usage)
    if used_v.runs + version_runs > budget.max_runs_per_version:
        raise BudgetExceeded(
            f"{version} has used {used_v.runs} of its {budget.max_runs_per_version} runs; "
            f"{version_runs} more would exceed budget.max_runs_per_version",
            fix="run fewer seeds, or raise budget.max_runs_per_version on the champion",
            budget="max_runs_per_version", used=used_v.runs, limit=budget.max_runs_per_version,
            requested=version_runs,
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
        return share

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
    )
