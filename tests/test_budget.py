"""Budget planning: per-run limits from version and tree budgets, refusals that name the budget."""

from __future__ import annotations

import pytest

from evotree.core.config_limits import BudgetSection
from evotree.harness.budget import BudgetExceeded, add_usage, plan_limits


def _plan(
    budget: BudgetSection,
    *,
    version_usage=None,
    tree_usage=None,
    version_runs=1,
    total_runs=1,
    gpus=0.0,
):
    return plan_limits(
        budget,
        version="v1",
        version_usage=version_usage,
        tree_usage=tree_usage,
        version_runs=version_runs,
        total_runs=total_runs,
        gpus=gpus,
    )


def test_unlimited_by_default_except_wall() -> None:
    limits = _plan(BudgetSection())
    assert limits.max_steps is None and limits.max_episodes is None and limits.wall_seconds == 3600


def test_remaining_steps_split_over_the_runs_of_a_request() -> None:
    budget = BudgetSection(max_steps=100, tree_max_steps=1000)
    limits = _plan(
        budget, version_usage={"steps": 40}, tree_usage={"steps": 500}, version_runs=3, total_runs=3
    )
    assert limits.max_steps == 20  # (100 - 40) / 3, tighter than (1000 - 500) / 3
    tree_tight = _plan(
        budget, version_usage={"steps": 0}, tree_usage={"steps": 990}, version_runs=2, total_runs=5
    )
    assert tree_tight.max_steps == 2  # (1000 - 990) / 5


def test_tree_budget_spent_is_named() -> None:
    budget = BudgetSection(tree_max_episodes=50)
    with pytest.raises(
        BudgetExceeded, match=r"budget.tree_max_episodes is spent: 50 of 50 episodes"
    ) as info:
        _plan(budget, tree_usage={"episodes": 50})
    assert info.value.details["budget"] == "tree_max_episodes"


def test_wall_hours_and_gpu_hours_cap_the_wall_clock() -> None:
    budget = BudgetSection(max_wall_seconds=3600, max_wall_hours=1.0, max_gpu_hours=2.0)
    limits = _plan(budget, version_usage={"wall_hours": 0.75}, version_runs=1)
    assert limits.wall_seconds == pytest.approx(900)
    gpu = _plan(budget, version_usage={"gpu_hours": 1.5}, gpus=2.0)
    assert gpu.wall_seconds == pytest.approx(900)  # 0.5 GPU hours left on 2 GPUs
    with pytest.raises(BudgetExceeded, match="budget.max_gpu_hours is spent"):
        _plan(budget, version_usage={"gpu_hours": 2.0}, gpus=1.0)


def test_runs_per_version() -> None:
    with pytest.raises(BudgetExceeded, match="has used 19 of its 20 runs; 2 more"):
        _plan(BudgetSection(), version_usage={"runs": 19}, version_runs=2, total_runs=2)


def test_fraction_of_a_step_is_refused() -> None:
    with pytest.raises(BudgetExceeded, match="nothing left for 3 more run"):
        _plan(BudgetSection(max_steps=10), version_usage={"steps": 8}, version_runs=3, total_runs=3)


def test_add_usage() -> None:
    assert add_usage(
        {"runs": 1, "steps": 3, "wall_hours": 0.1}, {"runs": 1, "episodes": 4, "wall_hours": 0.2}
    ) == {
        "runs": 2,
        "episodes": 4,
        "steps": 3,
        "wall_hours": pytest.approx(0.3),
        "gpu_hours": 0,
        "cpu_hours": 0,
        "usd": 0,
        "agent_usd": 0,
        "tokens": 0,
        "train_hours": 0,
        "judge_train_hours": 0,
    }
    assert (
        add_usage({"usd": 0.1, "tokens": 5}, {"usd": 0.2, "agent_usd": 0.2})["usd"] == 0.3
    )  # rounded to 1e-9


def test_reserved_runs_count_as_spent_at_their_planned_limits() -> None:
    from evotree.harness.budget import committed

    reservations = {
        "a": {
            "version": "v1",
            "limits": {"wall_seconds": 1800, "max_steps": 10, "max_episodes": None},
            "gpus": 2.0,
        },
        "b": {
            "version": "v2",
            "limits": {"wall_seconds": 3600, "max_steps": 5, "max_episodes": 7},
            "account": "champion_reruns",
        },
    }
    assert committed(reservations) == {
        "runs": 2,
        "episodes": 7,
        "steps": 15,
        "wall_hours": 1.5,
        "gpu_hours": 1.0,
        "cpu_hours": 0.0,
        "usd": 0.0,
        "agent_usd": 0,
        "tokens": 0,
        "train_hours": 0,
        "judge_train_hours": 0,
    }
    assert committed(reservations, version="v1")["runs"] == 1
    assert committed(reservations, account="champion_reruns")["steps"] == 5
    assert committed(reservations, account="version")["steps"] == 10
    assert committed(None)["runs"] == 0
    budget = BudgetSection(max_runs_per_version=4, tree_max_steps=100)
    with pytest.raises(
        BudgetExceeded, match=r"used 3 of its 4 runs \(2 of them reserved or running\); 2 more"
    ) as info:
        plan_limits(
            budget,
            version="v1",
            version_usage={"runs": 1},
            tree_usage=None,
            version_runs=2,
            total_runs=2,
            version_reserved={"runs": 2},
        )
    assert info.value.details["reserved"] == 2
    limits = plan_limits(
        budget,
        version="v1",
        version_usage=None,
        tree_usage={"steps": 40},
        version_runs=2,
        total_runs=2,
        tree_reserved=committed(reservations),
    )
    assert limits.max_steps == 22  # (100 - 40 charged - 15 reserved) / 2


def test_champion_reruns_have_their_own_account() -> None:
    from evotree.harness.budget import champion_reruns_left

    budget = BudgetSection(max_runs_per_version=3)
    meta = {
        "champion_reruns": {"v2": {"runs": 1}},
        "reservations": {
            "r": {"version": "v2", "account": "champion_reruns", "limits": {}},
            "s": {"version": "v2", "limits": {}},
        },
    }
    assert champion_reruns_left(budget, meta, "v2") == 1  # 3 - 1 charged - 1 reserved
    assert champion_reruns_left(budget, {}, "v5") == 3
    with pytest.raises(
        BudgetExceeded, match="v2's re-runs as champion have used 3 of its 3 runs"
    ) as info:
        plan_limits(
            budget,
            version="v2",
            version_usage={"runs": 3},
            tree_usage=None,
            version_runs=1,
            total_runs=1,
            account="champion_reruns",
        )
    assert info.value.details["account"] == "champion_reruns"


def test_money_shares_never_add_up_past_the_budget() -> None:
    """Whatever the prices, GPUs, CPUs and runs, N runs each charged at (more than) their USD-bought
    wall limit, summed as the ledger sums (1e-9 USD), never cross tree_max_usd (0.02517 of 0.025)."""
    import random

    from evotree.harness.budget import charge_run

    rng = random.Random(20)
    checked = 0
    for _ in range(3000):
        gpus, cpus = rng.choice([0.0, 1.0, 2.0, 8.0]), rng.choice([1.0, 3.0, 16.0])
        budget = BudgetSection(
            usd_per_gpu_hour=rng.choice([0.0, 0.37, 2.5, 7.77]),
            usd_per_cpu_hour=rng.choice([0.013, 36.0, 0.1]),
            tree_max_usd=round(rng.uniform(0.01, 50), rng.choice([2, 3, 6])),
            max_wall_seconds=10**8,
        )
        used, runs = round(rng.uniform(0, budget.tree_max_usd * 0.9), 9), rng.randint(1, 5)
        try:
            limits = plan_limits(
                budget,
                version="v1",
                version_usage=None,
                tree_usage={"usd": used},
                version_runs=runs,
                total_runs=runs,
                gpus=gpus,
                cpus=cpus,
            )
        except BudgetExceeded:
            continue
        usage, _ = charge_run(
            budget,
            wall_seconds=limits.wall_seconds + 5.0,
            limits=limits.to_dict(),
            gpus=gpus,
            cpus=cpus,
            steps=0,
            episodes=0,
        )
        total = {"usd": used}
        for _ in range(runs):
            total = add_usage(total, usage)
        assert total["usd"] <= budget.tree_max_usd, (budget, used, runs, usage)
        checked += 1
    assert checked > 2000
