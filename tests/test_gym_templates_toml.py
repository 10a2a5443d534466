"""The gym domain's TOML files are written by the TOML writer: what goes in reads back."""

from __future__ import annotations

import tomllib

from evotree.domains.gym.templates import draw_hidden_pools, render_gym_toml, render_judge_toml


def test_the_judge_file_reads_back_whatever_the_names() -> None:
    envs = ["CartPole-v1", 'odd"name\\x', "tab\there"]
    pools = {"validation": {e: [1, 2] for e in envs}, "held out": {envs[0]: [3]}}
    data = tomllib.loads(render_judge_toml(envs, pools, timeout=2.5))
    assert data["judge"]["envs"] == envs
    assert data["pools"] == pools
    assert data["judge"]["episode_timeout_seconds"] == 2.5


def test_drawn_pools_and_the_train_file_read_back() -> None:
    envs = ["CartPole-v1", "Acrobot-v1"]
    pools = draw_hidden_pools(envs, {"validation": 4, "heldout": 8})
    assert tomllib.loads(render_judge_toml(envs, pools))["pools"] == pools
    assert tomllib.loads(render_gym_toml(envs, episodes_per_env=3))["train"]["envs"] == envs
    assert tomllib.loads(render_gym_toml(['a"b'], episodes_per_env=3))["train"]["envs"] == ['a"b']
