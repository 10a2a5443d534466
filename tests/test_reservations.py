"""Reservations, not checks and champion re-runs.

A run is reserved in the ledger, in the compare-and-swap that checks the budgets and the train
gate's approval, before it starts; ``run.finished`` consumes the reservation, a run that never
starts gives it back (``run.released``), and a dead owner's reservations are released by the
next planner or by crash recovery. Concurrent requests — `evotree run` processes and calls to
`evotree serve` mixed — never start more runs than a budget or an approval allows.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import EVOTREE_BIN, Cli, git
from evotree.core.ledger import Event
from evotree.core.workspace import Workspace
from evotree.harness.budget import BudgetExceeded, champion_reruns_left
from evotree.core.proc import owner_is_dead, process_owner
from evotree.harness.planning import plan_runs
from evotree.harness.recovery import recover_crashed_runs
from evotree.harness.reservations import RESERVATIONS, release_reservations
from test_runs import _version, make_run_repo

# tens of seconds of real runs and sandboxes: run apart (make test-heavy; CI runs it after make test)
pytestmark = pytest.mark.heavy

N_REQUESTS = 8

#: the server acts for the person who created the versions (a principal runs its own versions)
OWNER = "Ada Tester <ada@example.com>"


def _allow(ws: Any, requests: Any) -> None:
    return None


def _events(ws: Workspace, kind: str) -> list[Any]:
    return [e.event for e in ws.ledger.entries() if e.event.kind == kind]


def _reservations(ws: Workspace) -> dict[str, Any]:
    return dict(Workspace.open(ws.root).ledger.meta().get(RESERVATIONS) or {})


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}


# ---------------------------------------------------------------------------- in one process
def test_a_reservation_counts_until_its_run_finishes_and_a_release_gives_it_back(
    tmp_path: Path,
) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w", budget="max_runs_per_version = 4"))
    v1 = _version(ws, "skill = 0.6\nsteps = 2\n")
    plans = plan_runs(ws, [v1], authorize=_allow, seeds=3, reserve=True)
    held = _reservations(ws)
    assert sorted(held) == sorted(p.run_id for p in plans)
    assert all(
        r["version"] == v1 and not r["started"] and r["owner"]["pid"] == os.getpid()
        for r in held.values()
    )
    (reserved,) = _events(ws, "run.reserved")
    assert [r["run_id"] for r in reserved.data["runs"]] == [p.run_id for p in plans]
    # nothing ran, nothing was charged, yet a fourth and fifth run would exceed the 4-run budget
    assert not ws.ledger.snapshot().version(v1).usage
    with pytest.raises(
        BudgetExceeded, match=r"used 3 of its 4 runs \(3 of them reserved or running\); 2 more"
    ):
        plan_runs(ws, [v1], authorize=_allow, seeds=2)
    assert (
        len(plan_runs(ws, [v1], authorize=_allow, seeds=1)) == 1
    )  # a preview: nothing is reserved
    assert len(_reservations(ws)) == 3
    assert release_reservations(ws, [plans[0].run_id, "no-such-run"], reason="test") == [
        plans[0].run_id
    ]
    (released,) = _events(ws, "run.released")
    assert released.data == {"runs": [plans[0].run_id], "reason": "test"}
    assert (
        release_reservations(ws, [plans[0].run_id], reason="again") == []
    )  # nothing left: no event
    assert len(_events(ws, "run.released")) == 1
    assert len(plan_runs(ws, [v1], authorize=_allow, seeds=2)) == 2


def test_reserved_runs_count_at_their_planned_limits(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w", budget="tree_max_steps = 10"))
    v1, v2 = _version(ws, "skill = 0.6\n"), _version(ws, "skill = 0.7\n")
    (first,) = plan_runs(ws, [v1], authorize=_allow, reserve=True)
    assert first.limits.max_steps == 10  # the whole tree budget, held by the reservation
    with pytest.raises(BudgetExceeded, match="budget.tree_max_steps is spent: 10 of 10 steps"):
        plan_runs(ws, [v2], authorize=_allow, reserve=True)
    release_reservations(ws, [first.run_id], reason="test")
    (second,) = plan_runs(ws, [v2], authorize=_allow, reserve=True)
    assert second.limits.max_steps == 10


def test_a_run_consumes_its_reservation_and_a_request_that_fails_releases_the_rest(
    tmp_path: Path,
) -> None:
    from evotree.harness.execute import run_versions
    from evotree.harness.executors.errors import ExecutorError

    ws = Workspace.open(make_run_repo(tmp_path / "w", budget="max_runs_per_version = 2"))
    v1 = _version(ws, "skill = 0.6\nsteps = 2\n")
    with pytest.raises(ExecutorError, match="unknown executor"):
        run_versions(ws, [v1], authorize=_allow, seeds=2, executor="no-such-executor")
    (released,) = _events(ws, "run.released")
    assert len(released.data["runs"]) == 2 and not _reservations(ws)
    records = run_versions(ws, [v1], authorize=_allow, seeds=2)
    assert [r.status for r in records] == ["succeeded", "succeeded"]
    assert not _reservations(ws)  # run.finished consumed them
    started = [e.data["run_id"] for e in _events(ws, "run.started")]
    reserved = [r["run_id"] for e in _events(ws, "run.reserved") for r in e.data["runs"]]
    assert set(started) <= set(reserved)
    assert ws.ledger.snapshot().version(v1).usage["runs"] == 2
    with pytest.raises(BudgetExceeded, match="used 2 of its 2 runs"):
        run_versions(ws, [v1], authorize=_allow)
    # status, tree and runs show the runs, never the reservations
    shown = Cli(ws.root).json("show", v1)["version"]
    assert shown["status"] == "evaluated" and shown["headline"]["runs"] == 2
    assert [r["status"] for r in Cli(ws.root).json("runs", "--version", v1)["runs"]] == [
        "succeeded"
    ] * 2


# ---------------------------------------------------------------------------- dead owners
def test_owner_liveness(tmp_path: Path) -> None:
    me = process_owner()
    assert not owner_is_dead(me)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert owner_is_dead({**me, "pid": child.pid, "pid_start": None})  # no such process (any more)
    assert owner_is_dead({**me, "pid_start": (me["pid_start"] or 0) + 1})  # the pid was reused
    assert owner_is_dead({**me, "boot_id": "another-boot"}) == bool(
        me["boot_id"]
    )  # the machine rebooted
    assert not owner_is_dead({**me, "pid": child.pid, "host": "another-host"})  # cannot tell: kept
    assert not owner_is_dead(
        {**me, "pid": child.pid, "pid_ns": "pid:[1]"}
    )  # another pid namespace: kept
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while Path(f"/proc/{zombie.pid}/stat").read_text().split(") ")[1][0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    assert owner_is_dead({**me, "pid": zombie.pid, "pid_start": None})  # killed, not yet reaped
    zombie.wait()


RESERVE_AND_DIE = """
import os, signal, sys
from evotree.core.workspace import Workspace
from evotree.harness.planning import plan_runs
plans = plan_runs(Workspace.open(sys.argv[1]), [sys.argv[2]], authorize=lambda ws, r: None, seeds=3, reserve=True)
print(len(plans), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_planners_reservations_are_released_by_the_next_planner_and_by_recovery(
    tmp_path: Path,
) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w", budget="max_runs_per_version = 4"))
    v1 = _version(ws, "skill = 0.6\n")
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-c", RESERVE_AND_DIE, str(ws.root), v1],
            capture_output=True,
            text=True,
            env=_env(),
        )
        assert out.returncode == -signal.SIGKILL and out.stdout.strip() == "3", out.stderr
        if len(_reservations(ws)) == 3:
            break
    held = _reservations(ws)
    assert len(held) == 3 and all(owner_is_dead(r["owner"]) for r in held.values())
    # the next planner does not count them, and drops them in its own reservation
    plans = plan_runs(ws, [v1], authorize=_allow, seeds=4, reserve=True)
    reserved = _events(ws, "run.reserved")[0]
    assert sorted(reserved.data["released"]) == sorted(held)
    assert sorted(_reservations(ws)) == sorted(p.run_id for p in plans)
    release_reservations(ws, [p.run_id for p in plans], reason="test")
    # crash recovery (every command runs it) releases them too
    subprocess.run(
        [sys.executable, "-c", RESERVE_AND_DIE, str(ws.root), v1], capture_output=True, env=_env()
    )
    assert len(_reservations(ws)) == 3
    assert recover_crashed_runs(Workspace.open(ws.root)) == []
    assert not _reservations(ws)
    released = _events(ws, "run.released")[0]
    assert len(released.data["runs"]) == 3 and "died" in released.data["reason"]


def test_a_sigkilled_server_leaves_no_reservation_that_blocks_the_tree(tmp_path: Path) -> None:
    from test_server import call, socket_server, socket_session

    repo = make_run_repo(tmp_path / "w", budget="max_runs_per_version = 4")
    ws = Workspace.open(repo)
    v1 = _version(ws, "skill = 0.6\nsteps = 400\nsleep = 0.25\n")
    path = tmp_path / "s.sock"

    held: dict[str, Any] = {}

    async def request(server: subprocess.Popen[bytes]) -> None:
        async def run() -> None:
            try:
                await call(session, "run", {"versions": [v1], "seeds": 3, "jobs": 1})
            except Exception:  # noqa: BLE001 - the server dies under it
                pass

        async with socket_session(path) as session:
            async with anyio.create_task_group() as group:
                group.start_soon(run)
                with anyio.fail_after(60):
                    while not any(r.get("started") for r in _reservations(ws).values()):
                        await anyio.sleep(0.1)
                held.update(_reservations(ws))
                server.send_signal(
                    signal.SIGKILL
                )  # while its run is in flight: nothing is cancelled
                server.wait(timeout=30)
                group.cancel_scope.cancel()

    with socket_server(repo, path, principal=OWNER) as server:
        try:
            anyio.run(request, server)
        except Exception:  # noqa: BLE001 - the session's streams break when the server dies
            pass
    assert server.returncode == -signal.SIGKILL
    assert len(held) == 3 and sum(bool(r["started"]) for r in held.values()) == 1
    assert len(_reservations(ws)) == 3  # the dead server still holds them, until the next command
    # the next command recovers: the started run is finished `crashed` (and charged), the two
    # that never started are released; the budget left is 4 - 1
    runs = Cli(repo).json("runs", "--version", v1)["runs"]
    assert [r["status"] for r in runs] == ["crashed"]
    assert not _reservations(ws)
    (released,) = _events(ws, "run.released")
    assert len(released.data["runs"]) == 2
    (repo / ws.resolve(v1).worktree / "recipe.toml").write_text("skill = 0.6\nsteps = 2\n")
    git(repo / ws.resolve(v1).worktree, "commit", "-qam", "fast")
    out = Cli(repo).json("run", v1, "--seeds", "3", "--seed-start", "1")
    assert [r["status"] for r in out["runs"]] == ["succeeded"] * 3


# ---------------------------------------------------------------------------- concurrent requests
def _cli_run(repo: Path, version: str, seed: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(EVOTREE_BIN), "-C", str(repo), "run", version, "--seed-start", str(seed), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
    )


def _mixed_requests(
    repo: Path, version: str, path: Path, *, processes: int, calls: int
) -> list[dict[str, Any]]:
    """``processes`` `evotree run` processes and ``calls`` concurrent server calls, all at once:
    each request's outcome, {"ok": [statuses]} or {"error": code}."""
    from test_server import socket_session

    outcomes: list[dict[str, Any]] = []
    procs = [_cli_run(repo, version, i) for i in range(processes)]

    async def one(session: Any, seed: int) -> None:
        result = await session.call_tool("run", {"versions": [version], "seed_start": 100 + seed})
        data = json.loads(result.content[0].text)
        outcomes.append(
            {"error": data["error"]["code"]}
            if result.is_error
            else {"ok": [r["status"] for r in data["runs"]]}
        )

    async def server_calls() -> None:
        async with socket_session(path) as session:
            async with anyio.create_task_group() as group:
                for i in range(calls):
                    group.start_soon(one, session, i)

    anyio.run(server_calls)
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        if proc.returncode == 0:
            outcomes.append({"ok": [r["status"] for r in json.loads(out)["runs"]]})
        else:
            outcomes.append(
                {"error": json.loads(out)["error"]["code"]} if out.strip() else {"error": err}
            )
    return outcomes


def test_eight_concurrent_requests_never_exceed_a_budget(tmp_path: Path) -> None:
    from test_server import socket_server

    repo = make_run_repo(tmp_path / "w", budget="max_runs_per_version = 4")
    ws = Workspace.open(repo)
    v1 = _version(ws, "skill = 0.6\nsteps = 3\nsleep = 0.3\n")
    path = tmp_path / "s.sock"
    with socket_server(repo, path, principal=OWNER):
        outcomes = _mixed_requests(repo, v1, path, processes=5, calls=3)
    assert len(outcomes) == N_REQUESTS
    ran = [o for o in outcomes if "ok" in o]
    assert all(o["ok"] == ["succeeded"] for o in ran), outcomes
    assert sorted(o.get("error") for o in outcomes if "error" in o) == ["budget_exceeded"] * 4, (
        outcomes
    )
    ws = Workspace.open(repo)
    assert len([e for e in _events(ws, "run.started") if e.version == v1]) == 4
    assert ws.ledger.snapshot().version(v1).usage["runs"] == 4 and len(ran) == 4
    assert not _reservations(ws)


def test_eight_concurrent_requests_never_exceed_a_signed_approval(
    tmp_path: Path, keys: dict[str, tuple[Path, str]]
) -> None:
    """Train gate: one run (60 s) is under the 100 s threshold, two need a person's approval. The
    approval of 3 runs covers 3 runs of the commit, however many requests race for it."""
    import test_gates as tg
    from test_runs import TRAIN
    from test_server import socket_server

    repo = tg.gate_repo(
        tmp_path / "t", keys, train_threshold=100, train=TRAIN, judge=tg.SEEDED_JUDGE
    )
    v1 = tg.new_version(repo)
    path = tmp_path / "s.sock"
    # without an approval, at most one run (the one under the threshold) starts
    with socket_server(repo, path, principal=OWNER):
        outcomes = _mixed_requests(repo, v1, path, processes=6, calls=2)
    assert sum("ok" in o for o in outcomes) == 1, outcomes
    assert sorted(o.get("error") for o in outcomes if "error" in o) == ["gate_failed"] * 7, outcomes
    # a person approves 3 runs: exactly 3 more start
    child = tg.spawn(repo, "approve-run", v1, "--runs", "3", "--key", str(keys["bob"][0]), "--json")
    tg.answer_challenge(child, v1)
    child.expect(r"approve these runs\? \[yes/no\]: ")
    child.sendline("yes")
    code, out = tg.finish(child)
    assert code == 0, out
    with socket_server(repo, path, principal=OWNER):
        outcomes = _mixed_requests(repo, v1, path, processes=6, calls=2)
    assert sum("ok" in o for o in outcomes) == 3, outcomes
    assert all(o.get("ok", ["succeeded"]) == ["succeeded"] for o in outcomes), outcomes
    assert sorted(o.get("error") for o in outcomes if "error" in o) == ["gate_failed"] * 5, outcomes
    ws = Workspace.open(repo)
    assert len([e for e in _events(ws, "run.started") if e.version == v1]) == 4
    assert not _reservations(ws)


# ---------------------------------------------------------------------------- champion re-runs
def _make_champion(ws: Workspace, version: str) -> None:
    """What a signed promotion does to the harness's view: the ledger's champion and the ref."""
    from evotree.core.refs import CHAMPION_REF, branch_ref

    tip = ws.git.ref_target(branch_ref(version))
    ws.git.cas_ref(CHAMPION_REF, tip, ws.git.ref_target(CHAMPION_REF), "test: champion")

    def change(txn: Any) -> Event:
        txn.meta["champion"] = version
        return Event(kind="promotion", version=version, actor="test")

    ws.ledger.transact(change, actor=ws.git.identity())


def test_champion_reruns_are_not_charged_to_the_champions_own_budget(tmp_path: Path) -> None:
    from evotree.harness.execute import run_versions

    ws = Workspace.open(make_run_repo(tmp_path / "w", budget="max_runs_per_version = 2"))
    v1 = _version(ws, "skill = 0.6\nsteps = 2\n")
    assert [r.status for r in run_versions(ws, [v1], authorize=_allow, seeds=2)] == [
        "succeeded"
    ] * 2
    with pytest.raises(BudgetExceeded, match=f"{v1} has used 2 of its 2 runs"):
        plan_runs(ws, [v1], authorize=_allow, seed_start=2)
    _make_champion(ws, v1)
    ws = Workspace.open(ws.root)
    budget = ws.config.budget
    assert champion_reruns_left(budget, ws.ledger.meta(), v1) == 2
    # the score gate asks for re-runs of the champion since its promotion: they run
    records = run_versions(ws, [v1], authorize=_allow, seeds=2, seed_start=2)
    assert [r.status for r in records] == ["succeeded"] * 2
    finished = [
        e for e in _events(ws, "run.finished") if e.data["run_id"] in {r.run_id for r in records}
    ]
    assert [e.data.get("account") for e in finished] == ["champion_reruns"] * 2
    meta = ws.ledger.meta()
    assert meta["champion_reruns"][v1]["runs"] == 2 and meta["usage"]["runs"] == 4  # the tree pays
    assert ws.ledger.snapshot().version(v1).usage["runs"] == 4  # shown as what it consumed
    # ... bounded: one version's worth of re-runs per champion
    assert champion_reruns_left(budget, meta, v1) == 0
    with pytest.raises(
        BudgetExceeded, match=f"{v1}'s re-runs as champion have used 2 of its 2 runs"
    ) as info:
        plan_runs(ws, [v1], authorize=_allow, seed_start=4)
    assert info.value.details["account"] == "champion_reruns"
    # a commit added to the champion's branch is a new candidate, charged to the version
    wt = ws.root / ws.resolve(v1).worktree
    (wt / "recipe.toml").write_text("skill = 0.9\nsteps = 2\n")
    git(wt, "commit", "-qam", "sneaky")
    with pytest.raises(BudgetExceeded, match=f"{v1} has used 4 of its 2 runs"):
        plan_runs(Workspace.open(ws.root), [v1], authorize=_allow, seed_start=4)
    # another version is charged as always
    v2 = _version(ws, "skill = 0.7\nsteps = 2\n")
    with pytest.raises(BudgetExceeded, match=f"{v2} has used 0 of its 2 runs; 3 more"):
        plan_runs(Workspace.open(ws.root), [v2], authorize=_allow, seeds=3)


START_AND_DIE = """
import os, signal, sys
from evotree.core.ledger import utcnow
from evotree.core.workspace import Workspace
from evotree.harness.finish import ledger_run_started
from evotree.harness.planning import plan_runs
from evotree.harness.records import RunRecord
ws = Workspace.open(sys.argv[1])
(plan,) = plan_runs(ws, [sys.argv[2]], authorize=lambda ws, r: None, reserve=True)
record = RunRecord(run_id=plan.run_id, version=plan.version, seed=plan.seed, status="running", commit=plan.commit,
                   judge_commit=plan.judge_commit, judge_version=plan.judge_version, train_command="",
                   eval_command="", started_at=utcnow(), limits=plan.limits.to_dict())
ledger_run_started(ws, record)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_started_run_whose_driver_died_without_a_marker_is_finished_crashed(
    tmp_path: Path,
) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w", budget="max_runs_per_version = 4"))
    v1 = _version(ws, "skill = 0.6\n")
    subprocess.run(
        [sys.executable, "-c", START_AND_DIE, str(ws.root), v1], capture_output=True, env=_env()
    )
    (held,) = _reservations(ws).values()
    assert held["started"] and owner_is_dead(held["owner"])
    (run_id,) = recover_crashed_runs(Workspace.open(ws.root))
    assert not _reservations(ws)
    (finished,) = _events(ws, "run.finished")
    assert finished.data["run_id"] == run_id and finished.data["status"] == "crashed"
    assert finished.data["usage"] == {"runs": 1}
    assert recover_crashed_runs(Workspace.open(ws.root)) == []  # settled once
    assert ws.ledger.snapshot().version(v1).usage["runs"] == 1
