"""The gym workspace's evotree.toml that the demo and the benchmarks write: the template's text
with its [autopilot] keys set, the knobs of the chosen environments appended and no episode
budget, every value written by the TOML library (no hand quoting)."""

from __future__ import annotations

import tomllib

from evotree.core.config import parse_config
from evotree.core.config_template import render_template
from evotree.demo import GYM_KNOBS, gym_config_text

ENVS = ["CartPole-v1", "MountainCar-v0", "HalfCheetah-v5"]


def _expected(envs: list[str], max_proposals: int, patience: int, seed: int) -> str:
    """The template, line by line: the first of each [autopilot] key set, `knobs = {}` dropped,
    max_episodes 0, and the knob tables appended (written independently of the code under test)."""
    out, section, pending = (
        [],
        "",
        {
            "recipe": '"policy.py"',
            "max_proposals": str(max_proposals),
            "patience": str(patience),
            "seed": str(seed),
        },
    )
    dropped = False
    for line in render_template("gym").splitlines(keepends=True):
        if line.startswith("["):
            section = line.strip()
        key = line.split(" = ", 1)[0]
        if section == "[autopilot]" and key in pending:
            out.append(f"{key} = {pending.pop(key)}\n")
        elif section == "[autopilot]" and line == "knobs = {}\n" and not dropped:
            dropped = True
        elif key == "max_episodes":
            out.append("max_episodes = 0\n")
        else:
            out.append(line)
    tables = [
        f"[autopilot.knobs.{name}]\nlow = {low!r}\nhigh = {high!r}\nstep = {step!r}\n"
        for env in envs
        for name, (low, high, step) in GYM_KNOBS.get(env, {}).items()
    ]
    return "".join(out) + "\n" + "\n".join(tables)


def test_the_gym_config_is_the_template_with_the_autopilot_set() -> None:
    text = gym_config_text(ENVS, max_proposals=8, patience=5, seed=7)
    assert text == _expected(ENVS, 8, 5, 7)
    data = tomllib.loads(text)
    auto = data["autopilot"]
    assert (auto["recipe"], auto["max_proposals"], auto["patience"], auto["seed"]) == (
        "policy.py",
        8,
        5,
        7,
    )
    assert set(auto["knobs"]) == {"CP_ANGVEL", "CP_POS", "MC_BACK", "HC_PERIOD", "HC_AMP"}
    assert data["budget"]["max_episodes"] == 0
    config = parse_config(text)
    assert config.autopilot.recipe == "policy.py" and config.budget.max_episodes == 0


def test_no_knobs_leaves_an_empty_knob_table_out() -> None:
    text = gym_config_text([], max_proposals=2, patience=1, seed=3)
    assert text == _expected([], 2, 1, 3)
    assert tomllib.loads(text)["autopilot"].get("knobs", {}) == {}
