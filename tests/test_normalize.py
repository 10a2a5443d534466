"""Normalized scores (evotree/core/normalize.py) and their ``[eval.normalize]`` configuration."""

from __future__ import annotations

import math

import pytest

from evotree.core.config import ConfigError, parse_config
from evotree.core.config_template import render_template
from evotree.core.normalize import NormalizeError, NormalizeSpec, normalize_score, parse_normalize

AI4AI = NormalizeSpec(unusable=0.0, start=0.40, optimum=0.90)


def test_the_anchors_map_to_0_0_1_and_1() -> None:
    assert normalize_score(0.0, AI4AI) == 0.0
    assert normalize_score(0.40, AI4AI) == pytest.approx(0.1)
    assert normalize_score(0.90, AI4AI) == pytest.approx(1.0)
    assert normalize_score(0.20, AI4AI) == pytest.approx(0.05)  # halfway to the start
    assert normalize_score(0.65, AI4AI) == pytest.approx(0.55)  # halfway from start to optimum
    assert normalize_score(-3.0, AI4AI) == 0.0  # worse than unusable: 0, never negative
    assert normalize_score(1.0, AI4AI) == pytest.approx(1.18)  # past the optimum: said, not hidden


def test_lower_is_better() -> None:
    loss = NormalizeSpec(unusable=10.0, start=2.0, optimum=1.0, direction="min")
    assert normalize_score(10.0, loss) == 0.0 and normalize_score(12.0, loss) == 0.0
    assert normalize_score(2.0, loss) == pytest.approx(0.1)
    assert normalize_score(1.5, loss) == pytest.approx(0.55)
    assert normalize_score(1.0, loss) == pytest.approx(1.0)
    assert normalize_score(6.0, loss) == pytest.approx(0.05)


def test_failed_formal_runs_count_as_zero_only_when_configured() -> None:
    strict = NormalizeSpec(unusable=0.0, start=0.4, optimum=0.9, failed_as_zero=True)
    for status in ("failed", "invalid", "crashed", "budget_exceeded"):
        assert normalize_score(None, strict, status=status) == 0.0
        assert (
            normalize_score(0.8, strict, status=status) == 0.0
        )  # a failed run's partial score does not count
        assert normalize_score(None, AI4AI, status=status) is None
    for status in ("succeeded", None):
        assert normalize_score(0.65, strict, status=status) == pytest.approx(0.55)
    assert (
        normalize_score(None, strict, status="cancelled") is None
    )  # a person stopped it: no score
    assert normalize_score(None, strict) is None and normalize_score(math.nan, strict) is None
    assert normalize_score(math.inf, AI4AI) is None


def test_a_custom_start_score() -> None:
    spec = NormalizeSpec(unusable=0.0, start=0.5, optimum=1.0, start_score=0.5)
    assert normalize_score(0.75, spec) == pytest.approx(0.75)


def test_parse_and_validate() -> None:
    assert parse_normalize({}) is None
    spec = parse_normalize(
        {"unusable": 0, "start": 1, "optimum": 2, "direction": "max", "failed_as_zero": True}
    )
    assert spec == NormalizeSpec(0.0, 1.0, 2.0, failed_as_zero=True)
    bad = [
        ({"unusable": 0, "start": 0.5}, "optimum"),
        ({"unusable": 0, "start": 1, "optimum": 2, "x": 1}, "x"),
        ({"unusable": 0, "start": 2, "optimum": 1}, "start"),
        ({"unusable": 0, "start": 1, "optimum": 2, "direction": "up"}, "direction"),
        ({"unusable": 0, "start": 1, "optimum": 2, "start_score": 1.5}, "start_score"),
        ({"unusable": "0", "start": 1, "optimum": 2}, "unusable"),
        ({"unusable": 0, "start": 1, "optimum": 2, "failed_as_zero": "yes"}, "failed_as_zero"),
        ({"unusable": 1, "start": 2, "optimum": 3, "direction": "min"}, "start"),
    ]
    for table, key in bad:
        with pytest.raises(NormalizeError) as info:
            parse_normalize(table)
        assert info.value.key == key, table


def test_config_section() -> None:
    assert parse_config(render_template()).eval.normalization is None  # off by default
    cfg = parse_config(
        "[eval.normalize]\nunusable = 0\nstart = 0.42\noptimum = 0.9\nfailed_as_zero = true\n"
    )
    assert cfg.eval.normalization == NormalizeSpec(0.0, 0.42, 0.9, failed_as_zero=True)
    assert cfg.eval.command == "python eval.py"  # the rest of [eval] keeps its defaults
    inline = parse_config(
        '[eval]\nnormalize = { unusable = 10.0, start = 2.0, optimum = 1.0, direction = "min" }\n'
    )
    assert inline.eval.normalization.direction == "min"
    for text, key in (
        ("[eval.normalize]\nunusable = 0\nstart = 1\noptimum = 0.5\n", "eval.normalize.start"),
        ("[eval.normalize]\nstart = 1\n", "eval.normalize.unusable"),
        (
            "[eval.normalize]\nunusable = 0\nstart = 1\noptimum = 2\nscale = 3\n",
            "eval.normalize.scale",
        ),
        ("[eval]\nnormalize = 3\n", "eval.normalize"),
    ):
        with pytest.raises(ConfigError) as info:
            parse_config(text)
        assert info.value.details["key"] == key, text
        assert info.value.exit_code == 6


@pytest.mark.heavy
def test_tree_compare_gates_and_reports_show_the_normalized_score(tmp_path) -> None:  # noqa: ANN001
    """[eval.normalize] set: every reader shows the one normalized value beside the raw score,
    computed by normalize_score from the raw mean; the statistics stay raw."""
    from conftest import Cli
    from test_runs import make_run_repo

    from evotree.core.workspace import Workspace

    normalize = "[eval.normalize]\nunusable = 0.0\nstart = 0.5\noptimum = 1.0\n"
    repo = make_run_repo(tmp_path / "w", budget="max_runs_per_version = 20\n" + normalize)
    cli = Cli(repo)
    cli("run", "v0", "--seeds", "2")
    v1 = cli.json("branch", "-m", "better")["id"]
    (repo / ".evotree" / "worktrees" / v1 / "recipe.toml").write_text("skill = 0.8\nsteps = 3\n")
    from conftest import git

    git(repo / ".evotree" / "worktrees" / v1, "commit", "-qam", "skill 0.8")
    cli("run", v1, "--seeds", "2")
    spec = Workspace.open(repo).config.eval.normalization
    compare = cli.json("compare", "v0", v1)
    assert compare["normalized"] == {
        "a": normalize_score(compare["mean_a"], spec),
        "b": normalize_score(compare["mean_b"], spec),
    }
    assert compare["normalized"]["b"] > compare["normalized"]["a"]
    tree = {v["id"]: v for v in cli.json("tree")["versions"]}
    headline = tree[v1]["headline"]
    assert headline["normalized"] == normalize_score(headline["value"], spec)
    import json

    from evotree.cli.main import cli as root

    gates = json.loads(cli.runner.invoke(root, ["-C", str(repo), "gates", v1, "--json"]).stdout)
    score = next(g for g in gates["gates"] if g["name"] == "score")
    assert score["numbers"]["mean_candidate_normalized"] == compare["normalized"]["b"]
    cli("report", v1, "--format", "md")
    md = (repo / ".evotree" / "reports" / v1 / "report.md").read_text()
    na, nb = compare["normalized"]["a"], compare["normalized"]["b"]
    assert f"| normalized | {na:.3f} | {nb:.3f} | {nb - na:+.3f} | | |" in md
    assert "(normalized " in cli("tree").stdout
