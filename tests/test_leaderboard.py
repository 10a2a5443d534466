"""`evotree leaderboard`: EvoPolicyGym's rank-normalized held-out table over
finalized searches — the rank rule on the seed article's numbers, and three real finalized gym
searches end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import validate
from evotree.report.leaderboard import (
    SearchEntry,
    category_of,
    leaderboard,
    parse_spec,
    rank_scores,
    render_markdown,
)
from evotree.domains.gym.catalog import CORE16


def test_rank_scores_share_ties_and_put_missing_last() -> None:
    got = rank_scores({"a": 10.0, "b": 5.0, "c": 5.0, "d": None})
    assert got["a"] == (1.0, 1.0, 1.0)
    assert got["b"] == got["c"] == (pytest.approx((0.75 + 0.5) / 2), 2.0, 3.0)
    assert got["d"] == (0.25, 4.0, 4.0)
    assert rank_scores({"x": None, "y": None}) == {"x": (0.75, 1.0, 2.0), "y": (0.75, 1.0, 2.0)}


def test_categories_follow_the_article() -> None:
    counts: dict[str, int] = {}
    for env_id in CORE16:
        counts[category_of(env_id)] = counts.get(category_of(env_id), 0) + 1
    assert counts == {"Gym/Box2D": 4, "MuJoCo": 4, "MiniGrid": 4, "Robotics/Driving": 4}
    assert category_of("CartPole-v1") == "Gym/Box2D" and category_of("Nope-v0") == "Other"


def test_the_articles_headline_row_is_reproduced() -> None:
    """GPT-5.5 placed 1st on 9 and 2nd on 7 of 16 environments among 4 agents: 0.891, 9, 16/16."""
    agents = ["gpt", "claude", "minimax", "deepseek"]
    firsts = set(CORE16[:9])
    entries = []
    for agent_index, agent in enumerate(agents):
        returns = {}
        for env_id in CORE16:
            if agent == "gpt":
                returns[env_id] = 100.0 if env_id in firsts else 90.0
            elif agent == "claude":
                returns[env_id] = 95.0 if env_id in firsts else 100.0
            else:
                returns[env_id] = 10.0 - agent_index
        entries.append(
            SearchEntry(
                f"/{agent}",
                agent,
                "codex" if agent == "gpt" else "claude-code",
                "finalized",
                returns,
            )
        )
    board = leaderboard(entries)
    gpt = next(r for r in board.rows if r.agent == "gpt")
    assert (
        gpt.mean == pytest.approx(0.890625) and gpt.first == 9 and gpt.top2 == 16 and gpt.envs == 16
    )
    assert board.rows[0].agent == "gpt" and [r.agent for r in board.rows][-1] == "deepseek"
    table = render_markdown(board)
    assert table.splitlines()[0] == (
        "| Agent | Harness | Gym/Box2D | MuJoCo | MiniGrid | Robotics/Driving | "
        "Core16 mean | 1st | Top-2 |"
    )
    assert "| gpt | codex | " in table and "| 0.891 | 9 | 16/16 |" in table


def test_parse_spec() -> None:
    assert parse_spec("runs/a") == (None, None, "runs/a")
    assert parse_spec("gpt:codex=runs/a") == ("gpt", "codex", "runs/a")
    assert parse_spec("gpt=runs/a") == ("gpt", None, "runs/a")


# ---------------------------------------------------------------------------- three real finalized searches
def _finalized(path: Path, policy: str | None) -> Any:
    """A tiny hidden CartPole workspace; one version running ``policy`` (none: no run), finalized."""
    from conftest import commit_file
    from test_gym_finalize import hidden_gym_workspace

    from evotree.core.versions import create_version
    from evotree.gates.finalize import finalize
    from evotree.gates.runs import run_versions

    ws = hidden_gym_workspace(path)
    if policy is not None:
        rec = create_version(ws, hypothesis="try", parent="champion")
        commit_file(ws.root / rec.worktree, "policy.py", policy, "policy")
        [record] = run_versions(ws, [rec.id], seeds=1)
        assert record.status == "succeeded", record.error
    return finalize(ws)


@pytest.mark.heavy
def test_three_finalized_searches(tmp_path: Path) -> None:
    from conftest import Cli
    from test_gym_finalize import BAD, GOOD

    good = _finalized(tmp_path / "good", GOOD)
    bad = _finalized(tmp_path / "bad", BAD)
    none = _finalized(tmp_path / "none", None)
    assert (good.status, bad.status, none.status) == ("finalized", "finalized", "no_ok_submit")
    assert good.heldout_mean is not None and bad.heldout_mean is not None
    cli = Cli(tmp_path / "good")
    data = cli.json(
        "leaderboard",
        f"pd:codex={tmp_path / 'good'}",
        f"zero={tmp_path / 'bad'}",
        str(tmp_path / "none"),
    )
    validate(data, "leaderboard")
    rows = {r["agent"]: r for r in data["rows"]}
    assert [r["agent"] for r in data["rows"]] == ["pd", "zero", "none"]
    assert data["envs"] == ["CartPole-v1"] and data["categories"] == ["Gym/Box2D"]
    assert (
        rows["pd"]["scores"] == {"CartPole-v1": 1.0}
        and rows["pd"]["first"] == 1
        and rows["pd"]["top2"] == 1
    )
    assert (
        rows["zero"]["scores"]["CartPole-v1"] == pytest.approx(2 / 3) and rows["zero"]["first"] == 0
    )
    assert (
        rows["none"]["scores"]["CartPole-v1"] == pytest.approx(1 / 3) and rows["none"]["top2"] == 0
    )
    # the raw held-out mean returns are the judge's, of the run each finalize judged
    assert rows["pd"]["returns"]["CartPole-v1"] > rows["zero"]["returns"]["CartPole-v1"]
    assert rows["none"]["returns"]["CartPole-v1"] is None
    statuses = {s["agent"]: s["status"] for s in data["searches"]}
    assert statuses == {"pd": "finalized", "zero": "finalized", "none": "no_ok_submit"}
    text = cli(
        "leaderboard",
        f"pd:codex={tmp_path / 'good'}",
        f"zero={tmp_path / 'bad'}",
        str(tmp_path / "none"),
    ).output
    assert "| pd | codex | 1.000 | 1.000 | 1 | 1/1 |" in text and "no_ok_submit" in text
    # a search not finalized: no held-out figure is read from it, it ranks last
    from test_gym_finalize import hidden_gym_workspace

    hidden_gym_workspace(tmp_path / "open")
    rows2 = {
        r["agent"]: r
        for r in cli.json("leaderboard", str(tmp_path / "good"), str(tmp_path / "open"))["rows"]
    }
    assert rows2["open"]["returns"] == {"CartPole-v1": None} and rows2["good"]["first"] == 1
    assert json.dumps(rows2)  # JSON-safe
