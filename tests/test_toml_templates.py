"""The TOML files evotree and its domains write: every value goes through a TOML writer
(toml_value, tomli_w), so a value of any spelling reads back as itself, and the ordinary files
read as they did when the values were pasted in by hand."""

from __future__ import annotations

import shlex
import tomllib
from pathlib import Path

import pytest

from evotree.core.config import parse_config
from evotree.core.config_template import _DOMAIN_COMMANDS, render_template, toml_value
from evotree.domains.autoresearch.templates import _repo_toml, example_files
from evotree.domains.math.templates import render_judge_toml
from evotree.domains.protocols import START_ACCURACY, materialize_ai4ai
from evotree.domains.rsibench_data import materialize_rsibench

NASTY = ['a "quoted" \\ path', "new\nline\ttab", "é ☃ \x7f \x01", "'single' $HOME `x`", "", "]]"]


@pytest.mark.parametrize("value", [*NASTY, 0, -3, 2**40, 0.73, 1e-05, 30.0, True, ["a", 'b"c']])
def test_a_value_reads_back_as_itself(value: object) -> None:
    assert tomllib.loads(f"v = {toml_value(value)}\n")["v"] == value


def test_a_list_stays_on_one_line() -> None:
    assert toml_value(["x", "y"]) == '["x", "y"]'


def test_an_autoresearch_repository_toml_reads_as_before() -> None:
    """The text the template wrote when the home was pasted into it (an ordinary home)."""
    data = tomllib.loads(_repo_toml(Path("/home/ada")))
    assert data["train"]["command"] == (
        "sh -c 'mkdir -p $HOME/.cache && ln -sfn /home/ada/.cache/autoresearch "
        "$HOME/.cache/autoresearch && ln -sfn /home/ada/.cache/huggingface "
        "$HOME/.cache/huggingface && HF_HUB_OFFLINE=1 exec python -P -m "
        "evotree.domains.autoresearch.runner --metric val_bpb -- python train.py'"
    )
    assert data["sandbox"]["read_paths"] == [
        "/home/ada/.cache/autoresearch",
        "/home/ada/.cache/huggingface",
    ]
    parse_config(_repo_toml(Path("/home/ada")))


@pytest.mark.parametrize(
    "home", ['/home/o"brien', "/home/a\\b", "/home/it's me", "/tmp/x;rm -rf y"]
)
def test_a_home_of_any_name_stays_one_path(home: str) -> None:
    """Pasted in by hand, such a home broke the TOML or the shell line (or ran its tail)."""
    data = tomllib.loads(_repo_toml(Path(home)))
    caches = [f"{home}/.cache/autoresearch", f"{home}/.cache/huggingface"]
    assert data["sandbox"]["read_paths"] == caches
    sh, flag, script = shlex.split(data["train"]["command"])
    assert (sh, flag) == ("sh", "-c")
    words = shlex.split(script)
    links = [words[i + 2] for i, w in enumerate(words) if w == "ln"]
    assert links == caches


def test_the_worked_example_toml_reads_as_before() -> None:
    data = tomllib.loads(example_files(7.5, seeds=(1, 2))["evotree.toml"])
    assert data["train"]["command"] == (
        "python -P -m evotree.domains.autoresearch.runner --time-budget 7.5 --threads 1 "
        "--metric val_bpb -- python train.py"
    )
    assert data["train"]["timeout_seconds"] == 150 and data["budget"]["max_wall_seconds"] == 810


@pytest.mark.parametrize("domain", ["custom", "math", "gym"])
def test_the_workspace_template_reads_its_values(domain: str) -> None:
    data = tomllib.loads(render_template(domain))
    assert data["workspace"]["domain"] == domain
    assert (data["train"]["command"], data["eval"]["command"]) == _DOMAIN_COMMANDS[domain]
    assert data["budget"]["max_episodes"] == (128 if domain == "gym" else 0)
    assert data["tools"]["git"].endswith("/git") or data["tools"]["git"] == ""
    parse_config(render_template(domain))


def test_the_protocols_hidden_seeds_and_anchors_read_back(tmp_path: Path) -> None:
    materialize_ai4ai(tmp_path / "a")
    materialize_rsibench(tmp_path / "r")
    for root, start in ((tmp_path / "a", START_ACCURACY["ai4ai"]), (tmp_path / "r", None)):
        config = tomllib.loads((root / "evotree.toml").read_text())
        assert config["eval"]["normalize"]["start"] == (start or START_ACCURACY["rsibench-data"])
        judge = tomllib.loads((root / "judge" / "task.toml").read_text())
        validation, heldout = (
            judge["splits"]["validation"]["seed"],
            judge["splits"]["heldout"]["seed"],
        )
        assert isinstance(validation, int) and validation < heldout
    judge = tomllib.loads(render_judge_toml(1234567, 7654321))
    assert (judge["splits"]["validation"]["seed"], judge["splits"]["heldout"]["seed"]) == (
        1234567,
        7654321,
    )
