"""The search clock's end is every run's absolute deadline, enforced by the
executor — exact, where the old split of the time left over a request's runs was conservative
(runs in parallel were cut to half the time) and could not stop a run that started late."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, ledger_commits

from evotree.core.config_limits import BudgetSection
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
from evotree.harness.budget import (
    BudgetExceeded,
    clock_ends_at,
    clock_left_seconds,
    plan_limits,
    run_deadline,
)
from evotree.harness.executors.phases import TERM_GRACE_SECONDS
from evotree.harness.reservations import RESERVATIONS
from test_runs import _version, make_run_repo

START = datetime(2026, 1, 1, tzinfo=UTC)


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


# ---------------------------------------------------------------------------- planning (no runs)
def test_the_clock_is_not_split_over_a_request_and_its_end_is_each_runs_deadline() -> None:
    budget = BudgetSection(tree_max_search_hours=1.0)
    meta = {"created_at": START.isoformat()}
    ends = clock_ends_at(budget, meta)
    assert ends is not None and _parse(ends) == START + timedelta(hours=1)
    assert clock_ends_at(BudgetSection(), meta) is None and clock_ends_at(budget, {}) is None
    left = clock_left_seconds(budget, meta, now=START + timedelta(minutes=50))
    assert left == pytest.approx(600.0)
    limits = plan_limits(
        budget,
        version="v1",
        version_usage=None,
        tree_usage=None,
        version_runs=4,
        total_runs=4,
        clock_left=left,
        clock_ends_at=ends,
    )
    # four runs, in parallel or not, may each use the whole 600 s; the clock's end stops them all
    assert limits.wall_seconds == pytest.approx(600.0) and limits.ends_at == ends
    assert limits.to_dict() == {
        "wall_seconds": limits.wall_seconds,
        "max_steps": None,
        "max_episodes": None,
        "ends_at": ends,
    }
    assert any("search clock" in note and ends in note for note in limits.notes)
    # without a clock the stored limits keep their old shape
    assert (
        "ends_at"
        not in plan_limits(
            BudgetSection(),
            version="v1",
            version_usage=None,
            tree_usage=None,
            version_runs=1,
            total_runs=1,
        ).to_dict()
    )
    # a clock with less than a second left refuses the request, however few runs it has
    with pytest.raises(BudgetExceeded, match="tree_max_search_hours is spent") as info:
        plan_limits(
            budget,
            version="v1",
            version_usage=None,
            tree_usage=None,
            version_runs=1,
            total_runs=1,
            clock_left=0.4,
            clock_ends_at=ends,
        )
    assert info.value.details["budget"] == "tree_max_search_hours" and info.value.exit_code == 16


def test_run_deadline_is_the_sooner_of_the_wall_limit_and_the_clocks_end() -> None:
    now = datetime.now(UTC)
    mono = time.monotonic()
    # no clock: the wall limit, and no clock end to name
    assert run_deadline({"wall_seconds": 30.0}, mono) == (mono + 30.0, None)
    # the clock ends in 10 s: it is the deadline, whatever the wall limit
    deadline, clock_end = run_deadline(
        {"wall_seconds": 30.0, "ends_at": (now + timedelta(seconds=10)).isoformat()}, mono, now=now
    )
    assert clock_end is not None and deadline == clock_end and 9.0 < deadline - mono < 11.0
    # a run that starts late (after others) gets only what the clock has left, even past its end
    deadline, clock_end = run_deadline(
        {"wall_seconds": 30.0, "ends_at": (now - timedelta(seconds=5)).isoformat()}, mono, now=now
    )
    assert deadline == clock_end and deadline < time.monotonic()
    # the wall limit ends first: the wall limit
    deadline, clock_end = run_deadline(
        {"wall_seconds": 2.0, "ends_at": (now + timedelta(hours=1)).isoformat()}, mono, now=now
    )
    assert deadline == mono + 2.0 and clock_end is not None and clock_end > deadline
    # a malformed end fails closed: no time at all
    deadline, clock_end = run_deadline(
        {"wall_seconds": 30.0, "ends_at": "not a time"}, mono, now=now
    )
    assert clock_end is not None and deadline <= time.monotonic()


# ---------------------------------------------------------------------------- real runs
#: a recipe that wants 20 s of training: the clock's end stops it
SLOW = "skill = 0.6\nsteps = 80\nsleep = 0.25\n"


def _clock_repo(tmp_path: Path, seconds: float) -> tuple[Path, str]:
    repo = make_run_repo(tmp_path / "w", budget=f"tree_max_search_hours = {seconds / 3600:.6f}")
    return repo, _version(Workspace.open(repo), SLOW)


def _stopped_at_the_clock(run: Any, ends_at: datetime) -> None:
    assert run.status == "budget_exceeded", (run.status, run.error)
    assert "search clock" in (run.error or "") and "tree_max_search_hours" in run.error
    train_end = _parse(run.phases["train"]["ended_at"])
    # stopped at the clock's end: not before it, and no later than its grace after SIGTERM (and a poll)
    assert (
        ends_at - timedelta(seconds=0.3)
        <= train_end
        <= ends_at + timedelta(seconds=TERM_GRACE_SECONDS + 1.5)
    )
    assert run.usage["wall_hours"] <= run.limits["wall_seconds"] / 3600 + 1e-9


@pytest.mark.heavy
def test_runs_in_parallel_each_get_the_whole_clock_and_stop_at_its_end(tmp_path: Path) -> None:
    repo, v1 = _clock_repo(tmp_path, 9.0)
    ws = Workspace.open(repo)
    left = clock_left_seconds(ws.config.budget, ws.ledger.meta())
    assert left is not None and left > 4.0, "setting up the workspace took too long for this test"
    records = run_versions(ws, [v1], seeds=2, jobs=2)
    ends_at = _parse(records[0].limits["ends_at"])
    assert ends_at == _parse(clock_ends_at(ws.config.budget, ws.ledger.meta()) or "")
    for run in records:
        # each run may use the whole time left when planned (the split would have given each half)
        assert run.limits["wall_seconds"] > left - 3.0 > left / 2
        _stopped_at_the_clock(run, ends_at)
        assert run.phases["train"]["wall_seconds"] > left / 2 + 0.5  # it really ran past half of it
    # nothing half-written: both runs finished in the ledger, no reservation left
    meta = Workspace.open(repo).ledger.meta()
    assert not meta.get(RESERVATIONS) and meta["usage"]["runs"] == 2
    # no new run is planned after the clock's end, and nothing is written by the refusal
    commits = ledger_commits(repo)
    error = Cli(repo).json("run", v1, code=16)["error"]
    assert error["details"]["budget"] == "tree_max_search_hours" and ledger_commits(repo) == commits


@pytest.mark.heavy
def test_a_run_that_waits_past_the_clocks_end_is_not_started(tmp_path: Path) -> None:
    """One at a time: the first run is stopped at the clock's end, the second — whose own wall
    limit would still allow it several seconds — is not started and costs nothing."""
    repo, v1 = _clock_repo(tmp_path, 8.0)
    ws = Workspace.open(repo)
    first, second = run_versions(ws, [v1], seeds=2, jobs=1)
    ends_at = _parse(first.limits["ends_at"])
    _stopped_at_the_clock(first, ends_at)
    assert second.limits["wall_seconds"] > 3.0  # its wall limit alone would have let it run
    assert second.status == "budget_exceeded" and second.error.startswith(
        "not started: the search clock"
    )
    assert second.phases == {} and second.usage == {} and second.train_seconds == 0
    assert not list(
        (repo / ".evotree" / "runs" / second.run_id / "candidate").glob("*")
    )  # nothing exported
    stored = json.loads((repo / ".evotree" / "runs" / second.run_id / "run.json").read_text())
    assert stored["status"] == "budget_exceeded"
    meta = Workspace.open(repo).ledger.meta()
    assert not meta.get(RESERVATIONS) and meta["usage"]["runs"] == 1  # only the first is charged
    finished = [
        e.event for e in Workspace.open(repo).ledger.entries() if e.event.kind == "run.finished"
    ]
    assert {e.data["run_id"] for e in finished} == {first.run_id, second.run_id}
