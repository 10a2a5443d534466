"""The EvoPolicyGym compatibility mode (`evotree init --protocol evopolicygym --env ID`), for real.

A policy written for EvoPolicyGym's contract runs unchanged; its scoring (raw mean, the normalized
final score, void on failure), its budget (128 episodes over the whole search) and its per-step
train feedback are checked on real Gymnasium environments, real git repositories and real runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "gymnasium", reason="the gym domain needs gymnasium: pip install 'evotree[gym]'"
)

from conftest import Cli, commit_file, git, make_repo  # noqa: E402

from evotree.core.errors import EvotreeError  # noqa: E402
from evotree.core.versions import create_version  # noqa: E402
from evotree.core.workspace import Workspace  # noqa: E402

#: Written for EvoPolicyGym (its Policy contract, JSON observations); not one line for evotree.
EPG_ACROBOT = """\
class Policy:
    def __init__(self, obs_space, action_space, env_meta):
        assert obs_space["type"] == "Box" and obs_space["shape"] == [6]
        assert action_space == {"type": "Discrete", "n": 3, "start": 0}
        self.meta = dict(env_meta)
        self.episodes = []

    def reset(self, episode_index):
        self.episodes.append(episode_index)

    def act(self, obs):
        assert isinstance(obs, list) and all(isinstance(v, float) for v in obs)
        return 2 if obs[5] - 0.1 * obs[4] > 0 else 0
"""

FLAKY = EPG_ACROBOT.replace(
    "        return 2 if",
    "        if len(self.episodes) == 3:\n"
    "            raise RuntimeError('flaky')\n        return 2 if",
)
OUT_OF_RANGE = EPG_ACROBOT.replace(
    "return 2 if obs[5] - 0.1 * obs[4] > 0 else 0", "return 7 if obs[5] - 0.1 * obs[4] > 0 else -3"
)


# ---------------------------------------------------------------------------- unit: schema, coercion, score
def test_schemas_json_observations_and_coercion() -> None:
    import gymnasium as gym
    import numpy as np

    from evotree.domains.gym.epg import coerce, final_score, schema, to_json

    box = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    assert schema(box) == {
        "type": "Box",
        "shape": [2],
        "dtype": "float32",
        "low": -1.0,
        "high": 1.0,
    }
    assert schema(gym.spaces.Box(0, 255, (96, 96, 3), np.uint8))["type"] == "Image"
    assert schema(gym.spaces.Dict({"a": gym.spaces.Discrete(3)})) == {
        "type": "Dict",
        "spaces": {"a": {"type": "Discrete", "n": 3, "start": 0}},
    }
    assert to_json({"x": np.array([1.5, np.nan], dtype=np.float32), "n": np.int64(3)}) == {
        "x": [1.5, "NaN"],
        "n": 3,
    }
    action, invalid = coerce(box, [3.0, -0.5])
    assert invalid and action.tolist() == [1.0, -0.5] and action.dtype == np.float32
    assert coerce(box, [0.5, 0.5])[1] is False
    assert coerce(box, "garbage")[1] is True and coerce(box, "garbage")[0].tolist() == [0.0, 0.0]
    assert coerce(gym.spaces.Discrete(3), 7) == (2, True) and coerce(gym.spaces.Discrete(3), 1) == (
        1,
        False,
    )
    assert coerce(gym.spaces.Discrete(3), None) == (0, True)
    # EvoPolicyGym's documented normalization, on the mean return
    assert final_score(-290.0, -500.0, -80.0) == pytest.approx(50.0)
    assert final_score(-600.0, -500.0, -80.0) == 0.0 and final_score(
        100.0, -500.0, -80.0
    ) == pytest.approx(120.0)


def test_init_refuses_bad_protocol_options_and_writes_nothing(tmp_path: Path) -> None:
    from evotree.domains.gym.epg_init import init_template, materialize_evopolicygym

    with pytest.raises(EvotreeError, match="exactly one --env"):
        init_template("gym", "evopolicygym", [])
    with pytest.raises(EvotreeError, match="options of the gym domain"):
        init_template("math", "evopolicygym", ["Acrobot-v1"])
    with pytest.raises(EvotreeError, match="not a registered"):
        materialize_evopolicygym(tmp_path, "NoSuchEnv-v0")
    assert not list(tmp_path.iterdir())


# ---------------------------------------------------------------------------- end to end
def _workspace(tmp_path: Path) -> tuple[Workspace, Cli]:
    repo = make_repo(tmp_path / "w")
    cli = Cli(repo)
    cli("init", "--protocol", "evopolicygym", "--env", "Acrobot-v1")
    return Workspace.open(repo), cli


def _version(ws: Workspace, text: str) -> str:
    rec = create_version(ws, hypothesis="h", parent="champion")
    commit_file(ws.root / rec.worktree, "policy.py", text, "policy")
    return rec.id


def _signals(run_dir: Path) -> dict[str, float]:
    import duckdb

    rows = (
        duckdb.connect()
        .execute(
            "SELECT phase, metric, value FROM read_parquet(?)", [str(run_dir / "signals.parquet")]
        )
        .fetchall()
    )
    return {f"{phase}:{metric}": value for phase, metric, value in rows}


@pytest.mark.heavy
def test_an_evopolicygym_policy_runs_unchanged_and_is_scored_as_there(tmp_path: Path) -> None:
    from evotree.gates.runs import run_versions

    ws, cli = _workspace(tmp_path)
    # init wrote the protocol's files: hidden judge files are in the judge store, not the checkout
    assert 'protocol = "evopolicygym"' in (ws.root / "gym.toml").read_text()
    assert not (ws.root / "judge").exists()
    assert "tree_max_episodes = 128" in (ws.root / "evotree.toml").read_text()
    judge = git(ws.root, "show", "refs/evotree/judge:judge/gym.toml")
    assert 'protocol = "evopolicygym"' in judge
    refs = json.loads(git(ws.root, "show", "refs/evotree/judge:judge/references.json"))
    assert (
        refs["envs"]["Acrobot-v1"]["random"] == -500.0
        and refs["envs"]["Acrobot-v1"]["expert"] == -80.0
    )

    good = _version(ws, EPG_ACROBOT)
    [record] = run_versions(ws, [good], seeds=1)
    assert record.status == "succeeded", record.error
    run_dir = ws.root / ".evotree" / "runs" / record.run_id
    signals = _signals(run_dir)
    mean = signals["eval:validation/Acrobot-v1/mean_return"]
    assert -200 < mean < -60  # a raw return, not a 0-1 score
    assert record.headline["value"] == pytest.approx(mean)  # the headline is the raw mean
    assert signals["eval:validation/Acrobot-v1/final_score"] == pytest.approx(
        min(1.2, max(0.0, (mean + 500.0) / 420.0)) * 100.0
    )
    # per-step trajectory feedback for the train episodes, EvoPolicyGym's summary.json
    feedback = run_dir / "evidence" / "train" / "feedback"
    summary = json.loads((feedback / "summary.json").read_text())
    assert summary["status"] == "ok" and summary["n_episodes"] == 8 and len(summary["returns"]) == 8
    assert summary["remaining_budget"] == 120
    steps = [
        json.loads(x)
        for x in (feedback / "episodes" / "ep_000" / "trajectory.jsonl").read_text().splitlines()
    ]
    assert len(steps) == summary["episode_lengths"][0] and steps[0]["t"] == 0
    assert set(steps[0]) == {"t", "obs", "action", "reward", "terminated", "truncated", "info"}
    assert len(steps[0]["obs"]) == 6 and steps[0]["action"] in (0, 2)

    # a policy that raises in one train episode: the submit is void (failed run), charged all the same
    flaky = _version(ws, FLAKY)
    [void] = run_versions(ws, [flaky], seeds=1)
    assert void.status == "failed" and "act_error" in (void.error or "") + _log(ws, void)
    used = _tree_episodes(ws)
    assert used == 16  # 8 + 8: EvoPolicyGym charges a void submit's episodes

    # an action out of the space is coerced and flagged; the episode goes on
    coerced = _version(ws, OUT_OF_RANGE)
    [fixed] = run_versions(ws, [coerced], seeds=1)
    assert fixed.status == "succeeded", fixed.error
    fixed_dir = ws.root / ".evotree" / "runs" / fixed.run_id
    steps = [
        json.loads(x)
        for x in (
            fixed_dir
            / "evidence"
            / "train"
            / "feedback"
            / "episodes"
            / "ep_000"
            / "trajectory.jsonl"
        )
        .read_text()
        .splitlines()
    ]
    assert steps[0]["action"] in (7, -3) and steps[0]["info"].get("action_invalid") is True
    assert _signals(fixed_dir)["train:Acrobot-v1/invalid_actions"] > 0
    # the coerced policy plays the same as the sound one (7 -> 2, -3 -> 0)
    assert _signals(fixed_dir)["eval:validation/Acrobot-v1/mean_return"] == pytest.approx(mean)


def _log(ws: Workspace, record: Any) -> str:
    path = ws.root / ".evotree" / "runs" / record.run_id / "logs" / "train.err"
    return path.read_text() if path.exists() else ""


def _tree_episodes(ws: Workspace) -> int:
    """Episodes charged to the whole tree (the ledger's usage, which ``tree_max_episodes`` bounds)."""
    from evotree.core.ledger import Ledger

    usage = Ledger(Workspace.open(ws.root).git).meta().get("usage") or {}
    return int(usage.get("episodes", 0))
