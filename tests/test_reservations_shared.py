"""Reservations across clones: one rule decides which count (budgets, gates and ``status``).

A remote's planted reservations are shown by ``evotree status`` as foreign and never counted; a
reservation signed by a runner key the signed policy lists counts in every clone sharing the
budget; one signed by an unlisted key, edited after signing, or expired counts nowhere.
Real repositories, a bare remote in a temp dir, real SSH keys.
"""

from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, git, validate
from fixtures_ws import (
    EVOTREE_SPECS,
    bare_remote,
    clone_as,
    scored_config,
    scored_project,
    with_stranger,
)
from test_runs import make_run_repo

from evotree.core.ledger import Event, EventKind, LedgerTxn
from evotree.core.workspace import Workspace
from evotree.harness.budget import BudgetExceeded
from evotree.harness.money import budget_status
from evotree.harness.planning import plan_runs
from evotree.harness.status import workspace_status
from evotree.harness.reservations import (
    RESERVATION_TYPE,
    counted_reservations,
    reservation_book,
    reservation_marks,
)


def _allow(_ws: Workspace, _per: Any) -> None:
    return None


def _write_book(ws: Workspace, entries: dict[str, Any], note: str) -> None:
    """Add ``entries`` to ``ws``'s reservation book (what a clone's planning, or a remote, writes)."""

    def change(txn: LedgerTxn) -> Event:
        held = dict(txn.meta.get("reservations") or {})
        held.update(entries)
        txn.meta["reservations"] = held
        return Event(
            kind=EventKind.SPEND_RECORDED.value,
            version=None,
            actor=str(ws.git.identity()),
            data={"usd": 0.0, "note": note},
        )

    ws.ledger.transact(change, actor=ws.git.identity())


def _elsewhere(entry: dict[str, Any], host: str = "team-box-2") -> dict[str, Any]:
    """``entry`` as another machine's planning writes it: its owner a process over there."""
    owner = {
        "pid": 4242,
        "pid_start": 99,
        "pid_ns": "pid:[4026531836]",
        "host": host,
        "boot_id": "b" * 36,
        "at": entry["at"],
    }
    out = {k: v for k, v in entry.items() if k not in ("seal", "runner")}
    return {**out, "owner": owner}


# ---------------------------------------------------------------------------- (a) status
def test_status_shows_a_remote_s_reservations_apart_and_never_counts_them(tmp_path: Path) -> None:
    repo = make_run_repo(tmp_path / "ws", budget="max_runs_per_version = 5")
    s = with_stranger(repo, tmp_path)
    theirs = Workspace.open(s["stranger"])
    now = datetime.now(UTC).isoformat()
    planted = {
        f"v0-s{i}-planted": {
            "version": "v0",
            "seed": i,
            "commit": "0" * 40,
            "at": now,
            "owner": {
                "pid": 1 + i,
                "pid_start": 1,
                "pid_ns": "x",
                "boot_id": "b" * 36,
                "host": socket.gethostname() if i == 1 else "mallory-box",
                "at": now,
            },
            "limits": {"wall_seconds": 3.6e9},
            "gpus": 8.0,
            "cpus": 64.0,
            "usd_per_hour": 1e6,
            "account": "version",
            "started": now if i == 1 else None,  # s1: "running here"
            "seal": "hmac-sha256:" + "0" * 64,
            "runner": {"principal": "ci-runner", "signature": "not a signature"}
            if i == 2
            else None,
        }
        for i in range(3)
    }
    planted["junk"] = "not a reservation"
    _write_book(theirs, planted, "hold")
    git(s["stranger"], "push", "--quiet", "origin", *EVOTREE_SPECS)
    git(repo, "fetch", "--quiet", "origin", *EVOTREE_SPECS)

    status = Cli(repo).json("status")
    validate(status, "status")
    assert status["reserved"] == 0  # the budgets' rule, not the ledger's book
    foreign = {row["run_id"]: row for row in status["foreign_reservations"]}
    assert set(foreign) == {*planted}
    assert foreign["v0-s0-planted"]["host"] == "mallory-box" and foreign["v0-s0-planted"]["why"]
    assert foreign["v0-s1-planted"]["host"] == socket.gethostname()  # no live process of it here
    assert "not list" in foreign["v0-s2-planted"]["why"]  # an unverifiable runner signature
    assert "malformed" in foreign["junk"]["why"]
    text = Cli(repo)("status").output
    assert "4 reservations in the ledger not counted here" in text and "v0-s0-planted" in text

    mine = Workspace.open(repo)
    [plan] = plan_runs(mine, ["v0"], authorize=_allow, reserve=True)  # one of this workspace's own
    status = workspace_status(mine).to_dict()  # what the CLI's status prints
    assert status["reserved"] == 1  # ours counts; the planted ones still do not
    foreign = {row["run_id"]: row for row in status["foreign_reservations"]}
    assert set(foreign) == {"v0-s0-planted", "v0-s1-planted", "v0-s2-planted"}  # junk released
    assert budget_status(mine).reserved["runs"] == 1  # budgets count what status counts


# ---------------------------------------------------------------------------- (b) shared budget
def _team(tmp_path: Path, keys: dict[str, tuple[Path, str]]) -> dict[str, Path]:
    runners = f"# the team's machines\nci-runner {keys['runner'][1]}\n"
    repo = scored_project(
        tmp_path / "team",
        judge="print('judge')\n",
        config=scored_config(max_runs_per_version=2),
        files={"gates/runner_keys": runners},
        message="project, runner keys",
    )
    bare = bare_remote(repo, tmp_path / "remote.git")
    clone = clone_as(bare, tmp_path / "clone", "Bo", "bo@example.com", fetch_evotree=True)
    return {"repo": repo, "bare": bare, "clone": clone}


def _push_and_pull(t: dict[str, Path]) -> None:
    git(t["repo"], "push", "--quiet", "origin", *EVOTREE_SPECS)
    git(t["clone"], "fetch", "--quiet", "origin", *EVOTREE_SPECS)


def test_clones_sharing_a_budget_count_a_listed_runner_s_reservations_only(
    tmp_path: Path, keys: dict[str, tuple[Path, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    t = _team(tmp_path, keys)
    runner = {"EVOTREE_RUNNER_KEY": str(keys["runner"][0]), "EVOTREE_RUNNER_PRINCIPAL": "ci-runner"}
    unlisted = {
        "EVOTREE_RUNNER_KEY": str(keys["mallory"][0]),
        "EVOTREE_RUNNER_PRINCIPAL": "ci-runner",
    }  # the listed name, another key
    team = Workspace.open(t["repo"])

    # the team machine's planning signs its reservations as the runner
    monkeypatch.setenv("EVOTREE_RUNNER_KEY", runner["EVOTREE_RUNNER_KEY"])
    monkeypatch.setenv("EVOTREE_RUNNER_PRINCIPAL", "ci-runner")
    plans = plan_runs(team, ["v0"], authorize=_allow, seeds=2, reserve=True)
    monkeypatch.delenv("EVOTREE_RUNNER_KEY")
    made = {p.run_id: team.ledger.meta()["reservations"][p.run_id] for p in plans}
    assert all(e["runner"]["principal"] == "ci-runner" and e["seal"] for e in made.values())
    team.ledger.transact(_clear, actor=team.git.identity())  # given back: the book is empty again

    # first the reservations no clone may count: an unlisted key, an edited copy, an expired one
    one, two = (_elsewhere(e) for e in made.values())
    ids = list(made)
    bad_key = {**one, **reservation_marks(team, "v0-s7-a", one, env=unlisted)}
    signed = {**two, **reservation_marks(team, "v0-s8-b", two, env=runner)}
    edited = {**signed, "limits": {**signed["limits"], "wall_seconds": 1.0}}
    old = {**two, "at": (datetime.now(UTC) - timedelta(days=2)).isoformat()}
    expired = {**old, **reservation_marks(team, "v0-s9-c", old, env=runner)}
    _write_book(team, {"v0-s7-a": bad_key, "v0-s8-b": edited, "v0-s9-c": expired}, "not counted")
    _push_and_pull(t)
    clone = Workspace.open(t["clone"])
    book = reservation_book(clone, clone.ledger.meta())
    assert book.counted == {}
    assert "do not list" in book.foreign["v0-s7-a"]
    assert "do not list" in book.foreign["v0-s8-b"]  # the signature no longer matches its facts
    assert "expired" in book.foreign["v0-s9-c"]
    assert len(plan_runs(clone, ["v0"], authorize=_allow, seeds=2)) == 2  # the budget is free

    # then the team machine's live ones, signed by the listed runner key: they count in the clone
    live = {
        rid: {**_elsewhere(e), **reservation_marks(team, rid, _elsewhere(e), env=runner)}
        for rid, e in zip(ids, made.values(), strict=True)
    }
    _write_book(team, live, "the team machine's reservations")
    _push_and_pull(t)
    clone = Workspace.open(t["clone"])
    book = reservation_book(clone, clone.ledger.meta())
    assert set(book.counted) == set(ids)
    assert set(book.why_counted.values()) == {"runner ci-runner"}
    assert set(counted_reservations(clone, clone.ledger.meta())) == set(ids)
    assert budget_status(clone).reserved["runs"] == 2
    with pytest.raises(BudgetExceeded) as refused:
        plan_runs(clone, ["v0"], authorize=_allow, reserve=True)
    assert refused.value.details.get("budget") == "max_runs_per_version"
    status = Cli(t["clone"]).json("status")
    assert status["reserved"] == 2
    assert {r["run_id"] for r in status["foreign_reservations"]} == {
        "v0-s7-a",
        "v0-s8-b",
        "v0-s9-c",
    }
    # the same signature is never a run's provenance, nor another run's reservation
    assert RESERVATION_TYPE != "evotree.run-provenance"
    moved = {ids[0] + "-copy": live[ids[0]]}
    assert counted_reservations(clone, {"reservations": moved}) == {}


def _clear(txn: LedgerTxn) -> Event:
    txn.meta["reservations"] = {}
    return Event(
        kind=EventKind.SPEND_RECORDED.value,
        version=None,
        actor="ada",
        data={"usd": 0.0, "note": "cleared"},
    )
