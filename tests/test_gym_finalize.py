"""Finalize (gates/finalize.py): the selection rule, and `evotree finalize` on a real gym workspace."""

from __future__ import annotations

from evotree.gates.finalize import finalize_plan, select_best
from evotree.harness.records import RunRecord


def record(
    run_id: str,
    status: str,
    value: float | None,
    started: str,
    metric: str = "validation/mean_score",
) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        version=run_id.split("-")[0],
        seed=0,
        status=status,
        commit="c" * 40,
        judge_commit=None,
        judge_version=None,
        train_command="t",
        eval_command="e",
        started_at=started,
        headline=None
        if value is None
        else {"metric": metric, "value": value, "n": 64, "scored": 64},
    )


def test_best_validation_of_the_succeeded_runs_ties_to_the_earliest() -> None:
    runs = [
        record("v1-a", "succeeded", -120.0, "2026-12-03T09:00:00"),
        record("v2-a", "failed", -10.0, "2026-12-03T09:01:00"),  # void: never selected
        record("v3-a", "succeeded", -95.5, "2026-12-03T09:02:00"),
        record("v4-a", "succeeded", -95.5, "2026-12-03T09:03:00"),  # tie: the earliest (v3-a) wins
        record("v5-a", "succeeded", None, "2026-12-03T09:04:00"),  # not judged
        record("v6-a", "succeeded", 5.0, "2026-12-03T09:05:00", metric="train/mean_score"),
    ]
    best = select_best(runs)
    assert best is not None and best.run_id == "v3-a" and best.validation == -95.5


def test_no_ok_submit() -> None:
    assert select_best([record("v1-a", "failed", 1.0, "2026-12-03T09:00:00")]) is None
    assert select_best([]) is None


def test_plan_on_a_real_workspace_without_runs(ws) -> None:  # noqa: ANN001 - the conftest fixture
    plan = finalize_plan(ws)
    assert (
        plan.status == "no_ok_submit"
        and plan.selected is None
        and plan.to_dict()["considered"] == 0
    )


# ---------------------------------------------------------------------------- the whole step, for real
import re  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

#: A CartPole policy that balances (PD on the pole) and one that does not.
GOOD = (
    "class Policy:\n    def __init__(self, env_id, observation_space, action_space):\n        pass\n"
    "    def reset(self):\n        pass\n    def act(self, obs):\n        return int(obs[2] + 0.5 * obs[3] > 0)\n"
)
BAD = (
    "class Policy:\n    def __init__(self, env_id, observation_space, action_space):\n        pass\n"
    "    def reset(self):\n        pass\n    def act(self, obs):\n        return 0\n"
)


def hidden_gym_workspace(path: Path) -> Any:
    """A tiny CartPole gym workspace with ``[eval] hide_until_finalize = true`` (as the EvoPolicyGym
    protocol writes it) and a version budget of 2 episodes: one run spends it."""
    pytest.importorskip(
        "gymnasium", reason="the gym domain needs gymnasium: pip install 'evotree[gym]'"
    )
    from conftest import git, make_repo

    from evotree.api import init as evotree_init
    from evotree.core.config_template import render_template
    from evotree.core.workspace import Workspace
    from evotree.domains.gym import materialize

    repo = make_repo(path)
    text = render_template("gym")
    text, n = re.subn(r"(?m)^max_episodes = \d+$", "max_episodes = 2", text)
    assert n == 1
    text, n = re.subn(r"(?m)^hide_until_finalize = false$", "hide_until_finalize = true", text)
    assert n == 1
    (repo / "evotree.toml").write_text(text)
    materialize(
        repo,
        envs=("CartPole-v1",),
        train_episodes=2,
        validation_episodes=3,
        heldout_episodes=2,
        episode_timeout=10.0,
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "gym files")
    evotree_init(repo, domain="gym")
    ws = Workspace.open(repo)
    assert ws.config.eval.hide_until_finalize and ws.config.budget.max_episodes == 2
    return ws


def searched(ws: Any) -> dict[str, Any]:
    """Two versions run once each (each spends its episode budget): v1 balances, v2 does not."""
    from conftest import commit_file

    from evotree.core.versions import create_version
    from evotree.gates.runs import run_versions

    ids = {}
    for name, text in (("good", GOOD), ("bad", BAD)):
        rec = create_version(ws, hypothesis=name, parent="champion")
        commit_file(ws.root / rec.worktree, "policy.py", text, name)
        [record] = run_versions(ws, [rec.id], seeds=1)
        assert record.status == "succeeded", record.error
        ids[name] = (rec.id, record)
    return ids


def _usage(ws: Any) -> dict[str, Any]:
    from evotree.core.workspace import Workspace

    snap = Workspace.open(ws.root).ledger.snapshot()
    return {
        "tree": snap.meta.get("usage"),
        **{v: snap.require(v).usage for v in ("v0", "v1", "v2")},
    }


@pytest.mark.heavy
def test_finalize_judges_the_best_validation_run_once_outside_the_budget(tmp_path: Path) -> None:
    from conftest import Cli

    from evotree.harness.budget import BudgetExceeded
    from evotree.gates.runs import run_versions
    from evotree.harness.records import RunRecord

    ws = hidden_gym_workspace(tmp_path / "w")
    ids = searched(ws)
    good, good_run = ids["good"]
    with pytest.raises(
        BudgetExceeded
    ):  # the version's budget is spent: the search may not run it again
        run_versions(ws, [good], seeds=1)
    before = _usage(ws)
    cli = Cli(ws.root)
    event = cli.json("finalize", "--yes")
    assert event["status"] == "finalized", event
    assert event["selected_run"] == good_run.run_id and event["version"] == good
    assert event["commit"] == good_run.commit and event["validation_mean"] == pytest.approx(
        good_run.headline["value"]
    )
    assert isinstance(event["heldout_mean"], float) and event["heldout_metric"].startswith(
        "heldout/"
    )
    assert event["final_score"] is None  # the default gym mode gives no final_score signal
    assert event["rule"].startswith("EvoPolicyGym")
    # not charged to the search: every version's and the tree's usage as before; its own account
    assert _usage(ws) == before
    from evotree.core.workspace import Workspace

    snap = Workspace.open(ws.root).ledger.snapshot()
    assert snap.meta["finalize_usage"]["runs"] == 1 and not snap.meta.get("reservations")
    assert all(
        r["run_id"] != event["heldout_run"]
        for v in ("v0", "v1", "v2")
        for r in snap.require(v).runs
    )
    # exactly one held-out evaluation: a judge-only run of the selected commit on the held-out split
    run_dir = ws.root / ".evotree" / "runs" / event["heldout_run"]
    record = RunRecord.load(run_dir / "run.json")
    assert (
        record.kind == "finalize"
        and record.commit == good_run.commit
        and "train" not in record.phases
    )
    assert record.train_command == "" and record.headline["value"] == pytest.approx(
        event["heldout_mean"]
    )
    import duckdb

    splits = {
        s
        for (s,) in duckdb.connect()
        .execute("SELECT DISTINCT split FROM read_parquet(?)", [str(run_dir / "evals.parquet")])
        .fetchall()
    }
    assert splits == {"heldout"}
    events = [e for e in cli.json("log")["events"] if e["kind"] == "finalize"]
    assert len(events) == 1 and events[0]["data"]["heldout_run"] == event["heldout_run"]
    # a second finalize is refused, and records nothing
    refused = cli.json("finalize", "--yes", code=10)
    assert refused["error"]["code"] == "already_finalized"
    assert len([e for e in cli.json("log")["events"] if e["kind"] == "finalize"]) == 1
    assert len([p for p in (ws.root / ".evotree" / "runs").glob("*finalize*/run.json")]) == 1


def test_finalize_without_a_usable_run_records_no_ok_submit(tmp_path: Path) -> None:
    from conftest import Cli, make_repo

    repo = make_repo(tmp_path / "r")
    cli = Cli(repo)
    cli("init")
    event = cli.json("finalize", "--yes")
    assert (
        event["status"] == "no_ok_submit"
        and event["heldout_run"] is None
        and event["selected_run"] is None
    )
    assert cli.json("finalize", "--yes", code=10)["error"]["code"] == "already_finalized"


def test_finalize_is_refused_in_an_agent_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conftest import Cli, make_repo

    repo = make_repo(tmp_path / "r")
    cli = Cli(repo)
    cli("init")
    monkeypatch.setenv("EVOTREE_AGENT_PRINCIPAL", "agent:test")
    assert cli.json("finalize", "--yes", code=10)["error"]["code"] == "invalid_state"
