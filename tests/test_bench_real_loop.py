"""The real-loop benchmark (bench/bench_real_loop.py) at its smallest: one loop of one proposal per
domain, through the script's own code, so the script cannot rot. Every run is a real sandboxed
``evotree run``; the test checks the rules' run counts against the ledgers and the rows' shape."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _bench() -> Any:
    """The benchmark's module; importing it (benchlib) moves HOME and git's configuration to a
    temp folder of its own, which this test session's environment is restored from."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    saved = dict(os.environ)
    try:
        import bench_real_loop
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return bench_real_loop


def test_the_autopilot_sections_knobs_parse_and_move_the_recipe() -> None:
    """The [autopilot] section each domain writes is a valid evotree.toml section, and a knob move
    changes exactly its line of the recipe (the same text greedy and evotree run)."""
    import tomllib

    _bench()
    from evotree.domains.autoresearch.templates import example_files
    from real_loop_domains import (
        AUTORESEARCH_KNOBS,
        MATH_KNOBS,
        apply_text,
        autopilot_section,
        math_recipe,
    )

    from evotree.core.config_template import render_template
    from evotree.verbs.autopilot import Knob, Proposal

    text = autopilot_section(
        render_template("math"), "recipe.toml", MATH_KNOBS, max_proposals=3, patience=2, seed=5
    )
    section = tomllib.loads(text)["autopilot"]
    assert section["recipe"] == "recipe.toml" and section["seed"] == 5
    assert set(section["knobs"]) == set(MATH_KNOBS)
    assert text.count("[autopilot]") == 1
    recipe = math_recipe(steps=7)
    knobs = {
        n: Knob(n, float(a), float(b), float(c), "recipe.toml")
        for n, (a, b, c) in MATH_KNOBS.items()
    }
    moved = apply_text(
        recipe,
        "recipe.toml",
        Proposal("k1", "knob", "", {"knob": "num_generations", "steps": 1}),
        knobs,
    )
    assert moved is not None
    changed = [(a, b) for a, b in zip(recipe.splitlines(), moved.splitlines()) if a != b]
    assert changed == [("num_generations = 4", "num_generations = 6")]
    # at its upper bound a move goes the other way; the batch stays a multiple of every group size
    assert "max_steps = 7" in recipe and "per_device_train_batch_size = 24" in recipe
    assert all(24 % g == 0 for g in (2, 4, 6, 8))
    ar = example_files(1.0, seeds=(7_000_001, 7_000_002))
    toml = tomllib.loads(
        autopilot_section(
            ar["evotree.toml"], "train.py", AUTORESEARCH_KNOBS, max_proposals=3, patience=3, seed=0
        )
    )
    assert toml["autopilot"]["recipe"] == "train.py" and toml["train"]["command"]


@pytest.mark.heavy
@pytest.mark.timeout(1800)  # the math warm-up and ~12 sandboxed runs; minutes on a loaded machine
@pytest.mark.skipif(importlib.util.find_spec("trl") is None, reason="the math domain needs trl")
def test_one_proposal_per_new_domain_through_the_benchmark(tmp_path: Path) -> None:
    bench = _bench()
    out = tmp_path / "real_loop.json"
    rc = bench.main(
        [
            "--domains",
            "autoresearch,math",
            "--loops",
            "1",
            "--proposals",
            "1",
            "--ar-budget",
            "0.5",
            "--math-steps",
            "2",
            "--truth-seeds",
            "1",
            "--max-runs",
            "2",
            "--max-k",
            "2",
            "--json",
            str(out),
        ]
    )
    assert rc == 0
    data = json.loads(out.read_text())
    assert [d["domain"] for d in data["domains"]] == ["autoresearch", "math"]
    for domain in data["domains"]:
        (loop,) = domain["loops"]
        rules = loop["rules"]
        assert set(rules) == {"greedy-1", "greedy-k", "evotree"}
        # the autopilot's own count is the ledger's: every run of the rule was a real run
        assert rules["evotree"]["runs"] == rules["evotree"]["autopilot_runs"] > 0
        # the judged row says how far the autopilot followed each proposal (the gate's looks)
        assert rules["evotree"]["max_rounds"] == "gate"
        # a budget of 2 runs: the candidate's first run, then the champion's re-runs are refused
        assert rules["evotree"]["runs"] <= 2 and rules["evotree"]["stopped"] == "budget"
        assert len(loop["proposals"]) == 1  # a knob move always changes the recipe (module doc)
        assert rules["greedy-1"]["runs"] == 2  # the start's one run and the candidate's
        assert rules["greedy-k"]["k"] <= 2
        assert rules["greedy-k"]["runs"] == rules["greedy-k"]["k"] * (rules["greedy-1"]["runs"])
        for row in rules.values():
            assert math.isfinite(row["final_true"]) and math.isfinite(row["start_true"])
            assert row["promotions"] == len(row["path_true"]) - 1
            assert 0 <= row["runs_after_peak"] <= row["runs"]
        assert domain["truth_runs"] >= 1


def _row(final: float, below: bool, runs: int) -> dict[str, Any]:
    return {
        "final_true": final,
        "start_true": 0.4,
        "below_peak": below,
        "promotions": 1,
        "neutral_promotions": 0,
        "harmful_promotions": 0,
        "runs": runs,
        "runs_after_peak": 0,
    }


def _raw(path: Path, seeds: list[int], settings: dict[str, Any], commit: str = "a" * 40) -> str:
    loops = [
        {
            "loop": s,
            "rules": {
                r: _row(0.5 + s / 100, s == 3, 10 + s) for r in ("greedy-1", "greedy-k", "evotree")
            },
        }
        for s in seeds
    ]
    raw = {
        "command": f"run {seeds}",
        "date": "2026-12-05",
        "commit": commit,
        "domains": [{"domain": "gym", "settings": settings, "loops": loops, "seconds": 5.0}],
        "seconds": 6.0,
    }
    path.write_text(json.dumps(raw))
    return str(path)


def test_join_puts_loop_ranges_run_apart_into_one_experiment(tmp_path: Path) -> None:
    bench = _bench()
    settings = {"envs": ["Acrobot-v1"], "neutral": 0.01}
    a = _raw(tmp_path / "a.json", [2, 3], settings)
    b = _raw(tmp_path / "b.json", [0, 1], settings)
    out = tmp_path / "joined.json"
    assert bench.main(["--join", a, b, str(out)]) == 0
    (domain,) = json.loads(out.read_text())["domains"]
    assert [loop["loop"] for loop in domain["loops"]] == [0, 1, 2, 3]
    summary = domain["summary"]["evotree"]
    assert summary["loops"] == 4 and summary["loops_below_peak"] == 1
    assert summary["runs"] == 10 + 11 + 12 + 13
    assert math.isclose(summary["final_true_mean"], 0.515)
    # the same seed twice, or other settings, are not one experiment: refused, nothing written
    again = tmp_path / "again.json"
    assert bench.main(["--join", a, a, str(again)]) == 1 and not again.exists()
    other = _raw(tmp_path / "c.json", [5], {**settings, "neutral": 0.02})
    assert bench.main(["--join", a, other, str(again)]) == 1 and not again.exists()


def test_merge_keeps_every_commit_of_a_joined_part(tmp_path: Path) -> None:
    """A part joined from runs at two commits names both in the summary record (the merge used
    to keep the first 7 characters of the part's commit text, so one of them was lost); a full
    hash is shortened as before."""
    bench = _bench()
    settings = {"envs": ["Acrobot-v1"], "neutral": 0.01}
    a = _raw(tmp_path / "a.json", [0, 1], settings, commit="3b04a59" + "0" * 33)
    b = _raw(tmp_path / "b.json", [2, 3], settings, commit="39f6510" + "1" * 33)
    joined = tmp_path / "joined.json"
    assert bench.main(["--join", a, b, str(joined)]) == 0
    single = json.loads(Path(b).read_text())  # a raw output as the script writes it
    single["domains"][0]["summary"] = bench.summarize(single["domains"][0]["loops"])
    (tmp_path / "single.json").write_text(json.dumps(single))
    out = tmp_path / "real_loop.json"
    assert bench.main(["--merge", str(joined), str(tmp_path / "single.json"), str(out)]) == 0
    assert json.loads(out.read_text())["commit"] == "39f6510 / 3b04a59 / 39f6510"
    # a joined part joined again keeps every commit it names (it kept only the first)
    c = _raw(tmp_path / "c.json", [4], settings, commit="3c7e499" + "2" * 33)
    again = tmp_path / "again.json"
    assert bench.main(["--join", str(joined), c, str(again)]) == 0
    assert json.loads(again.read_text())["commit"] == "39f6510 / 3b04a59 / 3c7e499"


def test_greedy_at_equal_runs_spends_exactly_evotrees_runs() -> None:
    """The schedule of greedy-eq: every run of the budget spent, the versions as even as whole
    runs allow (earlier ones one more), each at least one run and never above the cap."""
    bench = _bench()
    assert bench.equal_schedule(19, 4, 20) == [5, 5, 5, 4]
    assert bench.equal_schedule(7, 4, 20) == [2, 2, 2, 1]
    assert bench.equal_schedule(12, 4, 20) == [3, 3, 3, 3]
    assert bench.equal_schedule(2, 4, 20) == [1, 1, 1, 1]  # fewer runs than versions: one each
    assert bench.equal_schedule(100, 4, 20) == [20, 20, 20, 20]  # the cap binds
    for runs in range(4, 60):
        schedule = bench.equal_schedule(runs, 4, 60)
        assert sum(schedule) == runs and max(schedule) - min(schedule) <= 1, (runs, schedule)


def test_evotrees_path_is_rebuilt_from_the_recorded_moves() -> None:
    """greedy-eq judges evotree's path again in its own truth process: the path rebuilt from a
    recorded loop's promoted moves has the recorded length, each step changes the recipe, and a
    record whose promotions do not fit the moves is refused (None), not judged."""
    pytest.importorskip("gymnasium")
    bench = _bench()
    record = json.loads((BENCH / "results" / "real_loop_gym16.json").read_text())
    domain_record = record["domains"][0]
    settings = domain_record["settings"]
    domain = bench.gym_domain(
        epsilon=settings["epsilon"],
        validation=settings["validation_episodes"],
        heldout=settings["heldout_episodes"],
        judge_seed=settings["judge_seed"],
        neutral=settings["neutral"],
    )
    knobs = list(domain.knobs.values())
    rebuilt = 0
    for loop in domain_record["loops"]:
        tried = bench.knob_proposals(knobs, count=len(loop["proposals"]), seed=loop["loop"])
        row = loop["rules"]["evotree"]
        path = bench.evotree_path(domain, tried, row)
        assert path is not None and len(path) == len(row["path_true"]), loop["loop"]
        assert all(a != b for a, b in zip(path, path[1:], strict=False)), loop["loop"]
        rebuilt += len(path) > 1
    assert rebuilt >= 5  # loops with promotions were rebuilt, not only unchanged starts
    promoted = next(
        loop for loop in domain_record["loops"] if loop["rules"]["evotree"]["promotions"]
    )
    wrong = {**promoted["rules"]["evotree"], "path_true": [0.0]}  # a path shorter than the moves
    tried = bench.knob_proposals(knobs, count=3, seed=promoted["loop"])
    assert bench.evotree_path(domain, tried, wrong) is None


@pytest.mark.heavy
def test_greedy_equal_adds_real_runs_at_evotrees_count(tmp_path: Path) -> None:
    """--add-greedy-equal on one recorded gym loop (loop 10: 7 runs): greedy-eq runs exactly
    evotree's runs (read back from the ledger count the row holds), its path and evotree's are
    judged by one truth, and the summary pairs them."""
    pytest.importorskip("gymnasium")
    bench = _bench()
    record = json.loads((BENCH / "results" / "real_loop_gym16.json").read_text())
    domain = record["domains"][0]
    domain["loops"] = [loop for loop in domain["loops"] if loop["loop"] == 10]
    for loop in domain["loops"]:
        loop["rules"].pop("greedy-eq", None)
    raw, out = tmp_path / "raw.json", tmp_path / "out.json"
    raw.write_text(json.dumps(record))
    saved = dict(os.environ)
    try:
        assert bench.main(["--add-greedy-equal", str(raw), str(out)]) == 0
    finally:
        os.environ.clear()
        os.environ.update(saved)
    loop = json.loads(out.read_text())["domains"][0]["loops"][0]
    row, evotree = loop["rules"]["greedy-eq"], loop["rules"]["evotree"]
    assert row["runs"] == evotree["runs"] == sum(row["k"]) == 7, row
    assert row["failed_runs"] == 0
    assert len(row["evotree_path_true_same_truth"]) == len(evotree["path_true"])
    summary = json.loads(out.read_text())["domains"][0]["summary"]
    assert summary["greedy-eq"]["runs"] == 7 and summary["greedy-eq"]["loops"] == 1


def test_a_raised_run_cap_reaches_the_workspace_and_the_settings(tmp_path: Path) -> None:
    """``--max-runs-per-version`` (the cap lever): the gym workspace's ``[budget]`` line is set,
    the settings record it (and only when it is not the template's 20, so earlier records still
    join), greedy-eq reads it back; a config without exactly one such line is refused unchanged."""
    bench = _bench()
    import real_loop_domains as domains
    import tomllib

    args = bench.parser().parse_args(["--domains", "gym", "--max-runs-per-version", "40"])
    raised = bench.make_domain("gym", args)
    assert raised.max_runs_per_version == 40 and raised.info["max_runs_per_version"] == 40
    plain = bench.make_domain("gym", bench.parser().parse_args(["--domains", "gym"]))
    assert plain.max_runs_per_version == 20 and "max_runs_per_version" not in plain.info
    settings = {**raised.info, "knobs": raised.knob_ranges, "neutral": raised.neutral}
    recorded = json.loads(json.dumps({**settings, "recipe": raised.recipe}))  # as a raw file has it
    again = bench.domain_as_recorded(
        "gym", recorded, bench.parser().parse_args(["--domains", "gym"])
    )
    assert again.max_runs_per_version == 40

    from evotree.demo import gym_config_text

    config = tmp_path / "evotree.toml"
    config.write_text(gym_config_text(["Acrobot-v1"]))
    domains.set_budget_cap(config, 40)
    assert tomllib.loads(config.read_text())["budget"]["max_runs_per_version"] == 40
    doubled = tmp_path / "doubled.toml"
    doubled.write_text(config.read_text() + "max_runs_per_version = 3\n")
    before = doubled.read_text()
    with pytest.raises(ValueError, match="found 2"):
        domains.set_budget_cap(doubled, 50)
    assert doubled.read_text() == before
