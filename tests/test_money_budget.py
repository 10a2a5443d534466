"""Money and time budgets and two rough edges of item 8.

Prices per GPU/CPU hour, ``tree_max_usd`` / ``max_usd``, agent/API spend (``evotree spend record``,
the agent server's ``spend_record``), the search clock (``tree_max_search_hours``); a run is
reserved at its worst-case cost and stopped before it crosses a budget (charged at most its wall
limit); a spent tree budget never blocks reading the tree or gating the historical best. Invalid
candidates (exit 65) are shown as such and optionally charged. Real workspaces and real runs.
"""

from __future__ import annotations

import json
import math
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, commit_file, git, ledger_commits, validate
from evotree.core.config import parse_config
from evotree.core.config_limits import BudgetSection
from evotree.core.errors import ConfigError
from evotree.core.workspace import Workspace
from evotree.harness.budget import (
    BudgetExceeded,
    charge_run,
    clock_left_seconds,
    committed,
    plan_limits,
)
from evotree.harness.money import record_spend
from evotree.harness.planning import plan_runs
from evotree.harness.reservations import RESERVATIONS, release_reservations
from fixtures_ws import promote_at_terminal, scored_config, scored_project, signers_file
from test_runs import _version, make_run_repo

#: 36 USD per CPU hour on the default one CPU per run: one cent per second
CENT_A_SECOND = "usd_per_cpu_hour = 36.0\n"


def _allow(ws: Any, requests: Any) -> None:
    return None


def _events(ws: Workspace, kind: str) -> list[Any]:
    return [e.event for e in Workspace.open(ws.root).ledger.entries() if e.event.kind == kind]


def _plan(budget: BudgetSection, **kw: Any) -> Any:
    args: dict[str, Any] = {
        "version": "v1",
        "version_usage": None,
        "tree_usage": None,
        "version_runs": 1,
        "total_runs": 1,
    }
    args.update(kw)
    return plan_limits(budget, **args)


# ---------------------------------------------------------------------------- planning (no runs)
def test_the_money_left_buys_the_wall_clock_of_each_run() -> None:
    budget = BudgetSection(usd_per_gpu_hour=2.0, usd_per_cpu_hour=0.1, tree_max_usd=1.0)
    # 2 GPUs and 4 CPUs: 4.4 USD/hour; 0.55 USD left for 2 runs: 0.275 USD = 225 s each
    limits = _plan(
        budget, tree_usage={"usd": 0.45}, gpus=2.0, cpus=4.0, version_runs=2, total_runs=2
    )
    assert limits.wall_seconds == pytest.approx(225.0, abs=0.001) and limits.wall_seconds <= 225.0
    assert any("tree_max_usd" in note for note in limits.notes)
    # free runs are not limited by money, but a spent budget (agent spend alone) refuses them
    assert _plan(BudgetSection(tree_max_usd=1.0), tree_usage={"usd": 0.5}).wall_seconds == 3600
    with pytest.raises(BudgetExceeded, match=r"budget.tree_max_usd is spent: 1.2 of 1 USD") as info:
        _plan(BudgetSection(tree_max_usd=1.0), tree_usage={"usd": 1.2, "agent_usd": 1.2})
    assert info.value.details["budget"] == "tree_max_usd" and info.value.exit_code == 16
    # the version's own money, and a share too small to run a second is refused, not started
    with pytest.raises(BudgetExceeded, match="budget.max_usd is spent"):
        _plan(BudgetSection(max_usd=0.5), version_usage={"usd": 0.5})
    with pytest.raises(BudgetExceeded, match=r"less than 1 s of a run at 36 USD/hour") as tiny:
        _plan(
            BudgetSection(usd_per_cpu_hour=36.0, tree_max_usd=0.025),
            tree_usage={"usd": 0.0249},
            cpus=1.0,
        )
    assert tiny.value.details["budget"] == "tree_max_usd"


def test_reservations_hold_their_worst_case_cost() -> None:
    reservations = {
        "a": {
            "version": "v1",
            "limits": {"wall_seconds": 1800},
            "gpus": 1.0,
            "cpus": 2.0,
            "usd_per_hour": 3.0,
        },
        "b": {"version": "v2", "limits": {"wall_seconds": 3600}},
    }  # before prices: 0 USD
    held = committed(reservations)
    assert (
        held["usd"] == 1.5
        and held["cpu_hours"] == 1.0
        and held["gpu_hours"] == 0.5
        and held["runs"] == 2
    )
    limits = _plan(
        BudgetSection(usd_per_cpu_hour=36.0, tree_max_usd=0.05),
        cpus=1.0,
        tree_reserved=held,
        tree_usage={"usd": -1.47},
    )  # (0.05 + 1.47 - 1.5) USD left = 2 s
    assert limits.wall_seconds == pytest.approx(2.0, abs=0.001)


def test_a_run_is_charged_at_most_its_wall_limit() -> None:
    budget = BudgetSection(usd_per_cpu_hour=36.0, usd_per_gpu_hour=0.0)
    usage, notes = charge_run(
        budget,
        wall_seconds=2.517,
        limits={"wall_seconds": 2.5},
        gpus=0.0,
        cpus=1.0,
        steps=3,
        episodes=12,
    )
    assert (
        usage["usd"] == 0.025 and usage["wall_hours"] == round(2.5 / 3600, 9) and usage["runs"] == 1
    )
    assert notes and "charged 2.5 s" in notes[0]
    usage, notes = charge_run(
        budget,
        wall_seconds=1.0,
        limits={"wall_seconds": 2.5},
        gpus=0.0,
        cpus=1.0,
        steps=0,
        episodes=0,
    )
    assert usage["usd"] == 0.01 and not notes


def test_the_search_clock_runs_from_init_and_bounds_every_run_of_a_request() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    budget = BudgetSection(tree_max_search_hours=2.0)
    meta = {"created_at": start.isoformat()}
    assert clock_left_seconds(budget, meta, now=start + timedelta(hours=1.5)) == pytest.approx(1800)
    assert clock_left_seconds(BudgetSection(), meta) is None
    assert clock_left_seconds(budget, {}, now=start) == 0.0  # no init time: fail closed
    # not split over the request's runs (they may run in parallel); the clock's end is
    # each run's absolute deadline instead (tests/test_search_clock.py)
    limits = _plan(
        budget,
        clock_left=1800.0,
        version_runs=3,
        total_runs=3,
        clock_ends_at="2026-01-01T02:00:00+00:00",
    )
    assert limits.wall_seconds == 1800.0 and any("search clock" in n for n in limits.notes)
    assert limits.to_dict()["ends_at"] == "2026-01-01T02:00:00+00:00"
    with pytest.raises(BudgetExceeded, match="tree_max_search_hours is spent") as info:
        _plan(budget, clock_left=-5.0)
    assert info.value.details["budget"] == "tree_max_search_hours"


@pytest.mark.parametrize("bad", ["nan", "inf", "-1.0"])
def test_prices_and_money_budgets_must_be_finite_and_not_negative(bad: str) -> None:
    for key in ("usd_per_gpu_hour", "usd_per_cpu_hour", "tree_max_usd", "tree_max_search_hours"):
        with pytest.raises(ConfigError, match=f"budget.{key}"):
            parse_config(f"[budget]\n{key} = {bad}\n")
    assert (
        parse_config("[budget]\ncharge_invalid = true\ntree_max_usd = 5\n").budget.charge_invalid
        is True
    )


# ---------------------------------------------------------------------------- real runs
@pytest.mark.heavy
def test_a_run_stops_before_it_crosses_the_budget_and_the_next_is_refused(tmp_path: Path) -> None:
    """0.025 USD at one cent a second: the run gets 2.5 s, is stopped, and is charged 0.025 —
    never 0.02517; the next request is refused before anything starts or is charged."""
    repo = make_run_repo(tmp_path / "w", budget=CENT_A_SECOND + "tree_max_usd = 0.025")
    ws = Workspace.open(repo)
    v1 = _version(ws, "skill = 0.6\nsteps = 40\nsleep = 0.25\n")  # wants 10 s
    cli = Cli(repo)
    (run,) = json.loads(cli("run", v1, "--json", code=37).stdout)["runs"]
    assert run["limits"]["wall_seconds"] == 2.5 and run["status"] == "budget_exceeded"
    assert (
        run["wall_seconds"] > 2.5 and run["usage"]["usd"] == 0.025
    )  # took longer, charged its limit
    tree = Workspace.open(repo).ledger.meta()["usage"]
    assert tree["usd"] == 0.025 and tree["usd"] <= 0.025
    started, commits = len(_events(ws, "run.started")), ledger_commits(repo)
    error = json.loads(cli("run", v1, "--json", code=16).stdout)["error"]
    assert error["code"] == "budget_exceeded" and error["details"]["budget"] == "tree_max_usd"
    assert (
        len(_events(ws, "run.started")) == started and ledger_commits(repo) == commits
    )  # nothing written
    shown = cli.json("budget")
    validate(shown, "budget")
    assert shown["spent"] is True and shown["charged"]["usd"] == 0.025
    assert shown["budgets"][0] == {
        "budget": "tree_max_usd",
        "unit": "USD",
        "limit": 0.025,
        "charged": 0.025,
        "reserved": 0,
        "left": 0.0,
    }
    # reading is never blocked by a spent budget
    assert {v["id"] for v in cli.json("tree")["versions"]} == {"v0", v1}
    assert "tree_max_usd" in cli("budget").stdout


def test_racing_requests_never_reserve_past_the_money(tmp_path: Path) -> None:
    """Eight requests at once, 2 s (0.02 USD) per run, 0.045 USD: exactly two are reserved (the
    third's 0.005 USD buys half a second: refused), in the ledger's compare-and-swap."""
    repo = make_run_repo(
        tmp_path / "w", budget=CENT_A_SECOND + "max_wall_seconds = 2\ntree_max_usd = 0.045"
    )
    v1 = _version(Workspace.open(repo), "skill = 0.6\nsteps = 2\n")
    outcomes: list[Any] = []
    barrier = threading.Barrier(8)

    def request() -> None:
        ws = Workspace.open(repo)
        barrier.wait()
        try:
            outcomes.append(plan_runs(ws, [v1], authorize=_allow, seeds=1, reserve=True))
        except BudgetExceeded as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=request) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    reserved = [o for o in outcomes if isinstance(o, list)]
    assert len(outcomes) == 8 and len(reserved) == 2, outcomes
    assert all(
        isinstance(o, BudgetExceeded) and o.details["budget"] == "tree_max_usd"
        for o in outcomes
        if not isinstance(o, list)
    )
    ws = Workspace.open(repo)
    held = ws.ledger.meta()[RESERVATIONS]
    assert committed(held)["usd"] == pytest.approx(0.04) and all(
        e["usd_per_hour"] == 36.0 for e in held.values()
    )
    release_reservations(ws, [p.run_id for plans in reserved for p in plans], reason="test")
    assert committed(Workspace.open(repo).ledger.meta()[RESERVATIONS])["usd"] == 0


def test_no_run_starts_after_the_search_clock(tmp_path: Path) -> None:
    repo = make_run_repo(tmp_path / "w", budget="tree_max_search_hours = 0.0003")  # 1.08 s
    ws = Workspace.open(repo)
    v1 = _version(ws, "skill = 0.6\nsteps = 2\n")
    time.sleep(max(0.0, (clock_left_seconds(ws.config.budget, ws.ledger.meta()) or 0.0)) + 0.1)
    error = Cli(repo).json("run", v1, code=16)["error"]
    assert (
        error["details"]["budget"] == "tree_max_search_hours" and "search clock" in error["message"]
    )
    assert not _events(ws, "run.started")
    clock = Cli(repo).json("budget")["clock"]
    assert (
        clock["limit_hours"] == 0.0003
        and clock["left_hours"] == 0
        and clock["elapsed_hours"] > 0.0003
    )


# ---------------------------------------------------------------------------- agent/API spend
def test_spend_record_charges_the_tree_and_the_version_and_refuses_bad_amounts(
    tmp_path: Path,
) -> None:
    repo = make_run_repo(tmp_path / "w", budget="tree_max_usd = 1.0")
    ws = Workspace.open(repo)
    v1 = _version(ws, "skill = 0.6\nsteps = 2\n")
    cli = Cli(repo)
    out = cli.json(
        "spend",
        "record",
        "--usd",
        "0.75",
        "--note",
        "claude api, session 1",
        "--tokens",
        "120000",
        "--version",
        v1,
    )
    validate(out, "spend-record")
    assert (
        out["usd"] == 0.75
        and out["tree_usd"] == 0.75
        and out["version"] == v1
        and out["tokens"] == 120000
    )
    (event,) = _events(ws, "spend.recorded")
    identity = git(repo, "config", "user.email")
    assert (
        identity in event.actor and event.data["principal"] == event.actor and event.version == v1
    )
    snap = Workspace.open(repo).ledger.snapshot()
    assert snap.meta["usage"]["agent_usd"] == 0.75 and snap.version(v1).usage["usd"] == 0.75
    commits = ledger_commits(repo)
    for bad in (
        ["--usd", "-0.5"],
        ["--usd", "nan"],
        ["--usd", "inf"],
        ["--usd", "1", "--tokens", "-3"],
        ["--usd", "1", "--note", "  "],
    ):
        args = ["spend", "record", *bad] + ([] if "--note" in bad else ["--note", "x"])
        error = cli.json(*args, code=2)["error"]
        assert error["code"] == "invalid_spend", (bad, error)
    assert ledger_commits(repo) == commits  # nothing half-written
    cli.json("spend", "record", "--usd", "0.5", "--note", "more")  # spend made is always recorded
    error = cli.json("run", v1, code=16)["error"]  # free runs, but the money is spent
    assert error["details"]["budget"] == "tree_max_usd"
    shown = cli.json("budget")
    validate(shown, "budget")
    assert (
        shown["charged"]["usd"] == 1.25 and shown["charged"]["agent_usd"] == 1.25 and shown["spent"]
    )
    assert [s["note"] for s in shown["spend"]] == ["more", "claude api, session 1"]


def test_the_agent_server_records_spend_for_its_principal(tmp_path: Path) -> None:
    from evotree.server.verbs import Principal, Verbs

    repo = make_run_repo(tmp_path / "w")
    verbs = Verbs(repo, Principal.parse("bot"))
    out = verbs.spend_record(0.2, "tokens of session 7", tokens=5000)
    assert out["principal"] == "bot <bot>" and out["tree_usd"] == 0.2
    (event,) = _events(Workspace.open(repo), "spend.recorded")
    assert event.actor == "bot <bot>" and event.data["tokens"] == 5000
    from evotree.harness.budget import InvalidSpend

    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(InvalidSpend):
            verbs.spend_record(bad, "refund myself")
    assert len(_events(Workspace.open(repo), "spend.recorded")) == 1


@pytest.mark.heavy
def test_the_spend_record_tool_over_stdio(tmp_path: Path) -> None:
    """The agent's MCP tool: recorded for the server's --as, a negative or infinite amount is a
    tool error (bad_arguments) and nothing is written."""
    import anyio

    from test_server import call, call_error, stdio_session

    repo = make_run_repo(tmp_path / "w")

    async def main() -> dict[str, Any]:
        async with stdio_session(repo, principal="bot") as session:
            names = [t.name for t in (await session.list_tools()).tools]
            return {
                "names": names,
                "ok": await call(
                    session, "spend_record", {"usd": 0.3, "note": "llm", "tokens": 10}
                ),
                "negative": await call_error(
                    session, "spend_record", {"usd": -1, "note": "refund"}
                ),
                "empty": await call_error(session, "spend_record", {"usd": 1, "note": ""}),
            }

    got = anyio.run(main)
    assert "spend_record" in got["names"]
    assert got["ok"]["principal"] == "bot <bot>" and got["ok"]["tree_usd"] == 0.3
    assert got["negative"]["exit_code"] == 2 and got["empty"]["exit_code"] == 2
    (event,) = _events(Workspace.open(repo), "spend.recorded")
    assert event.actor == "bot <bot>" and event.data["usd"] == 0.3


# ---------------------------------------------------------------------------- the budget gate
def test_a_spent_tree_budget_never_blocks_the_budget_gate_of_the_best_version(
    tmp_path: Path,
) -> None:
    from evotree.gates.evaluation import evaluate_gates

    repo = make_run_repo(tmp_path / "w", budget="tree_max_usd = 1.0\nmax_usd = 2.0")
    ws = Workspace.open(repo)
    v1 = _version(ws, "skill = 0.6\nsteps = 2\n")
    v2 = _version(ws, "skill = 0.7\nsteps = 2\n")
    record_spend(ws, 0.5, "on v1", version=v1)
    record_spend(ws, 2.5, "on v2: over its own budget", version=v2)  # the tree: 3 of 1 USD
    gate1 = next(
        g
        for g in evaluate_gates(Workspace.open(repo), v1, run_audit=False).gates
        if g.name == "budget"
    )
    assert gate1.status == "pass" and "the tree: 3 USD of 1" in gate1.summary
    assert gate1.numbers["tree_usage"]["usd"] == 3.0 and gate1.numbers["tree_limits"] == {
        "tree_max_usd": 1.0
    }
    gate2 = next(
        g
        for g in evaluate_gates(Workspace.open(repo), v2, run_audit=False).gates
        if g.name == "budget"
    )
    assert gate2.status == "fail" and "budget.max_usd: 2.5 used of 2" in gate2.summary


# ---------------------------------------------------------------------------- invalid candidates
@pytest.mark.heavy
@pytest.mark.parametrize("charged", [False, True])
def test_an_invalid_candidate_is_shown_invalid_and_charged_when_configured(
    tmp_path: Path, charged: bool
) -> None:
    budget = CENT_A_SECOND + ("charge_invalid = true\n" if charged else "")
    repo = make_run_repo(tmp_path / "w", budget=budget)
    ws = Workspace.open(repo)
    v1 = _version(ws, "invalid = true\n")
    cli = Cli(repo)
    (run,) = _run_any(cli, v1)
    assert run["status"] == "invalid"
    view = next(v for v in cli.json("tree")["versions"] if v["id"] == v1)
    assert view["status"] != "active" and view["reason"].startswith("invalid candidate")
    usage = Workspace.open(repo).ledger.snapshot().version(v1).usage
    if charged:
        assert usage["runs"] == 1 and usage["usd"] > 0
    else:
        assert usage.get("runs", 0) == 0 and usage.get("usd", 0) == 0
    # fixed and run again: an ordinary version again
    commit_file(ws.root / ws.resolve(v1).worktree, "recipe.toml", "skill = 0.6\nsteps = 2\n", "fix")
    (again,) = _run_any(cli, v1)
    assert again["status"] == "succeeded"
    view = next(v for v in cli.json("tree")["versions"] if v["id"] == v1)
    assert view["status"] == "evaluated" and view["reason"] is None


def _run_any(cli: Cli, version: str) -> list[dict[str, Any]]:
    result = cli.runner.invoke(
        __import__("evotree.cli.main", fromlist=["cli"]).cli,
        ["-C", str(cli.repo), "run", version, "--json"],
        catch_exceptions=False,
    )
    return json.loads(result.stdout)["runs"]


# ---------------------------------------------------------------------------- a policy fix without rebuilding
@pytest.mark.heavy
def test_a_mistyped_protected_path_is_fixed_by_a_promoted_policy_change(
    tmp_path: Path, keys: dict[str, tuple[Path, str]]
) -> None:
    """`[protect].paths` names `helpr.py` for `helper.py`: the fix is a version changing
    evotree.toml, run under the champion's policy, promoted by a person who accepts the policy
    change (`--allow-policy-change`, `change policy`). No new workspace: the next version is
    judged by the fixed policy. (A policy-only version scores like the champion and cannot pass
    the score gate alone: the fix rides on an improvement, docs/protocols/budgets.md.)"""
    import test_gates as tg
    from test_runs import TRAIN

    from evotree.gates.evaluation import evaluate_gates
    from evotree.gates.runs import run_versions

    # tests/test_gates.py's gate_repo, with the mistyped [protect].paths in the root's policy
    typo = (
        scored_config(champion_seeds=3, train_approval_above_seconds=0)
        + '[protect]\npaths = ["evotree.toml", "judge/", "gates/", "helpr.py"]\n'
    )
    fixed = typo.replace('"helpr.py"', '"helper.py"')
    repo = scored_project(
        tmp_path / "w",
        judge=tg.SEEDED_JUDGE,
        config=typo,
        train=TRAIN,
        recipe=None,
        files={"gates/allowed_signers": signers_file(keys), "helper.py": "x = 0\n"},
        message="recipe, judge, a policy with a typo",
    )
    ws = Workspace.open(repo)
    assert "helpr.py" in ws.config.protect.paths and "helper.py" not in ws.config.protect.paths
    v1 = tg.new_version(
        repo, "skill = 0.9\nsteps = 3\n", files={"evotree.toml": fixed, "helper.py": "x = 1\n"}
    )
    assert (
        "helper.py" not in Workspace.open(repo).config.protect.paths
    )  # a candidate's policy is not in force
    runs = run_versions(Workspace.open(repo), ["v0", v1], seeds=3)
    assert all(r.status == "succeeded" for r in runs), [r.error for r in runs]
    Cli(repo)("diagnose", v1)
    report = evaluate_gates(Workspace.open(repo), v1, run_audit=True)
    blocking = {g.name for g in report.gates if g.status != "pass"}
    # before a person accepts it, the policy change blocks twice: the protected gate and the audit's
    # audit.protected_path finding (the same change); the acceptance at sign-off covers both
    assert blocking == {"protected", "audit"}, [
        (g.name, g.summary) for g in report.gates if g.status != "pass"
    ]
    audit = next(g for g in report.gates if g.name == "audit")
    assert {b["code"] for b in audit.numbers["blocking"]} == {"audit.protected_path"}

    def accept_policy_change(child: Any) -> None:
        child.expect(r"changes these protected paths \(all of them\):\s+evotree.toml")
        child.expect("type 'change policy' to accept them: ")
        child.sendline("change policy")

    code, out = promote_at_terminal(
        repo,
        v1,
        keys["bob"][0],
        "--allow-policy-change",
        "--json",
        before_gates=accept_policy_change,
    )
    assert code == 0, out
    ws = Workspace.open(repo)
    assert ws.champion() == v1 and "helper.py" in ws.config.protect.paths
    # the fixed policy is in force: a later version that edits helper.py fails the protected gate
    v2 = tg.new_version(repo, "skill = 0.9\nsteps = 3\n", files={"helper.py": "x = 2\n"})
    gate = next(
        g
        for g in evaluate_gates(Workspace.open(repo), v2, run_audit=False).gates
        if g.name == "protected"
    )
    assert gate.status == "fail" and "helper.py" in json.dumps(gate.numbers)
