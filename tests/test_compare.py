"""`evotree compare`: seed-aware paired comparison from real runs' evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, validate
from fixtures_ws import recipe_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
from test_runs import make_run_repo


#: A judge whose scores depend on the run's seed: a run's luck shifts all its tasks (as in RL).
SEEDED_JUDGE = """\
import json, os, random
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
hidden = json.load(open("judge/hidden.json"))
seed = int(os.environ.get("EVOTREE_SEED", "0"))
shift = random.Random(1000 + seed).gauss(0, 0.15)
for split in os.environ["EVOTREE_JUDGE_SPLITS"].split(","):
    for i, task in enumerate(hidden.get(split, [])):
        u = random.Random(i * 7919).random()
        rec.eval_result(split, task, 1.0 if u < model["skill"] + shift else 0.0)
"""
POOL = {"validation": [f"val-{i}" for i in range(40)], "heldout": []}


def test_compare_two_versions(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    low, high = (
        recipe_version(ws, "skill = 0.2\nsteps = 1\n"),
        recipe_version(ws, "skill = 0.9\nsteps = 1\n"),
    )
    run_versions(ws, [low, high], seeds=2, jobs=2)
    data = Cli(ws.root).json("compare", low, high, "--bootstrap", "2000")
    validate(data, "compare")
    assert (
        data["delta"] == pytest.approx(0.7) and data["n_tasks"] == 10 and data["n_seeds"] == [2, 2]
    )
    # this judge ignores the seed: the runs are copies, named as such; the tasks are the unit
    assert (
        data["identical"] == [True, True] and data["unit"] == "tasks" and data["test"] == "t_tasks"
    )
    notes = " ".join(data["notes"])
    assert (
        "identical copies" in notes and "more seeds add nothing" in notes and data["caveat"] is None
    )
    assert (
        data["ci"][0] > 0 and data["mean_a"] == pytest.approx(0.2) and data["decision"] == "better"
    )
    assert data["statement"].startswith(f"{high} is better than {low}")
    text = Cli(ws.root)("compare", low, high, "--bootstrap", "2000").output
    assert f"{high} is better than {low}" in text and "B is better" not in text
    assert "runs are identical copies" in text


def test_single_run_a_side_says_the_spread_is_unknown(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = recipe_version(ws, "skill = 0.6\nsteps = 1\n")
    run_versions(ws, ["v0", v1])
    data = Cli(ws.root).json("compare", "v0", v1, "--bootstrap", "2000")
    assert data["seed_aware"] is False and "run-to-run spread is unknown" in data["caveat"]
    assert data["test"] == "t_tasks" and data["spread"]["source"] == ["unknown", "unknown"]


def test_the_spread_is_pooled_over_the_tree_and_ci_and_p_agree(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w", judge=SEEDED_JUDGE, hidden=POOL))
    a, b, c = (recipe_version(ws, f"skill = {s}\nsteps = 1\n") for s in (0.4, 0.5, 0.45))
    run_versions(ws, [a, b, c], seeds=3, jobs=3)
    data = Cli(ws.root).json("compare", a, b)
    validate(data, "compare")
    assert (
        data["identical"] == [False, False] and data["unit"] == "runs" and data["test"] == "t_runs"
    )
    tree = data["spread"]["tree"]
    assert tree["versions"] == 3 and tree["df"] == 6  # a, b and the third version c: 3 × (3 - 1)
    from scipy import stats

    q = stats.t.ppf(1 - data["alpha"], data["df"])
    assert data["ci"] == pytest.approx(
        [data["delta"] - q * data["se"], data["delta"] + q * data["se"]]
    )
    # H0: Δ <= [gates].min_delta (0.002 by default): the p and the CI's lower end agree on it
    margin = data["threshold"]
    assert margin == pytest.approx(0.002)
    assert data["p_value"] == pytest.approx(
        stats.t.sf((data["delta"] - margin) / data["se"], data["df"])
    )
    assert (
        (data["p_value"] < data["alpha"])
        == (data["ci"][0] > margin)
        == (data["decision"] == "better")
    )
    assert data["confidence"] == pytest.approx(1 - 2 * data["alpha"])


def test_sequential_look_is_a_threshold_on_the_same_p(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w", judge=SEEDED_JUDGE, hidden=POOL))
    a, b = (
        recipe_version(ws, "skill = 0.5\nsteps = 1\n"),
        recipe_version(ws, "skill = 0.53\nsteps = 1\n"),
    )
    run_versions(ws, [a, b], seeds=3, jobs=2)
    cli = Cli(ws.root)
    plain = cli.json("compare", a, b, "--bootstrap", "2000")
    assert plain["look"] is None and plain["p_threshold"] == plain["alpha"]
    first = cli.json("compare", a, b, "--look", "1", "--max-looks", "3")
    validate(first, "compare")
    # one interval, one p: the look only lowers the threshold the same p must pass
    assert first["ci"] == plain["ci"] and first["p_value"] == plain["p_value"]
    assert first["p_threshold"] < plain["p_threshold"]
    assert first["decision"] == "need_more_seeds" and "--look 2" in first["next_step"]
    assert "--seed-start 3" in first["next_step"]  # new seeds, not repeated ones
    last = cli.json("compare", a, b, "--look", "3", "--max-looks", "3")
    assert last["decision"] != "need_more_seeds"
    cli.json("compare", a, b, "--look", "1", code=1)  # --look needs --max-looks


def _promote_judge(ws: Workspace, edit: Any, key: Path, tmp_path: Path) -> None:
    """A signed judge promotion through the library (the person's part is tested in test_judge_store)."""
    from evotree.gates.judges import (
        export_judge,
        plan_judge_promotion,
        propose_judge,
        record_judge_promotion,
    )
    from evotree.gates.signoff import approver_for
    from evotree.gates.verify import trusted_policy

    folder = tmp_path / "judge-edit"
    export_judge(ws, folder)
    edit(folder)
    propose_judge(
        ws, folder
    )  # proposed by the checkout's git identity (Ada); the approver is another person
    plan = plan_judge_promotion(ws, folder)
    policy = trusted_policy(ws)
    record_judge_promotion(ws, policy, approver_for(policy, key, plan.proposed_by), plan)


def test_mismatched_pools_refused_unless_intersected(tmp_path: Path, keys: dict[str, Any]) -> None:
    from test_analyzers_signoff import signed_run_repo

    ws = Workspace.open(signed_run_repo(tmp_path / "w", keys))
    v1 = recipe_version(ws, "skill = 0.6\nsteps = 1\n")
    run_versions(ws, ["v0"])
    # the judge in force gets a bigger validation pool (a signed judge promotion); v1 is scored on it
    import json

    def bigger(folder: Path) -> None:
        hidden = json.loads((folder / "judge" / "hidden.json").read_text())
        hidden["validation"] += ["val-extra-1", "val-extra-2"]
        (folder / "judge" / "hidden.json").write_text(json.dumps(hidden))

    _promote_judge(ws, bigger, keys["bob"][0], tmp_path)
    run_versions(Workspace.open(ws.root), [v1])
    err = Cli(ws.root).json("compare", "v0", v1, code=20)["error"]
    assert "only in B" in err["message"] or "only in" in err["message"]
    data = Cli(ws.root).json("compare", "v0", v1, "--intersect", "--bootstrap", "2000")
    assert data["n_tasks"] == 10 and data["intersected"] is True


def test_no_scores_is_explained(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = recipe_version(ws, "skill = 0.6\n")
    err = Cli(ws.root).json("compare", "v0", v1, code=22)["error"]
    assert "has no scored run" in err["message"] and "evotree run v0" in err["fix"]


def test_identical_copies_never_ask_for_more_seeds(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    a, b = (
        recipe_version(ws, "skill = 0.5\nsteps = 1\n"),
        recipe_version(ws, "skill = 0.6\nsteps = 1\n"),
    )
    run_versions(ws, [a, b], seeds=2, jobs=2)
    first = Cli(ws.root).json("compare", a, b, "--look", "1", "--max-looks", "3")
    assert first["identical"] == [True, True]
    lo, hi = first["ci"]
    assert lo <= 0 <= hi  # one task in ten differs, and copies do not count as more evidence
    assert first["decision"] == "inconclusive" and first["next_step"] is None


def test_iqm_probability_of_improvement_and_per_environment_bh(tmp_path: Path) -> None:
    hidden = {
        "validation": [f"EnvA#{i}" for i in range(10)] + [f"EnvB#{i}" for i in range(10)],
        "heldout": [],
    }
    ws = Workspace.open(make_run_repo(tmp_path / "w", hidden=hidden))
    a, b = (
        recipe_version(ws, "skill = 0.2\nsteps = 1\n"),
        recipe_version(ws, "skill = 0.9\nsteps = 1\n"),
    )
    run_versions(ws, [a, b], seeds=2, jobs=2)
    data = Cli(ws.root).json("compare", a, b, "--bootstrap", "2000")
    validate(data, "compare")
    assert data["iqm"]["b"] > data["iqm"]["a"]
    assert data["probability_of_improvement"]["b_over_a"] > 0.5
    groups = {g["group"]: g for g in data["per_group"]}
    assert set(groups) == {"EnvA", "EnvB"}
    # the judge scores task i of 20 as solved when (i + 1) / 20 <= skill
    assert groups["EnvA"]["delta"] == pytest.approx(0.6) and groups["EnvB"][
        "delta"
    ] == pytest.approx(0.8)
    for g in groups.values():
        assert g["p_adjusted"] >= g["p_value"]


def test_champion_is_judged_on_runs_since_it_became_champion(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = recipe_version(ws, "skill = 0.6\nsteps = 1\n")
    run_versions(ws, [v1])
    # pretend v1 was promoted now (the promotion gate is a later piece): its earlier runs no longer count
    from evotree.core.ledger import Event

    actor = ws.git.identity()

    def promote(txn):
        txn.meta["champion"] = v1
        return Event(kind="promotion", version=v1, actor=str(actor))

    ws.ledger.transact(promote, actor=actor)
    # the library's rule (an unsigned promotion is refused by every verb: the trust root; this
    # tests which runs count, so it calls the comparison under the verb layer directly)
    from evotree.core.errors import EvotreeError
    from evotree.diagnostics.compare import compare as compare_fn
    from evotree.gates.runs import run_versions as gated_runs

    gated_runs(ws, ["v0"])
    with pytest.raises(EvotreeError) as caught:
        compare_fn(Workspace.open(ws.root), "v0", v1)
    assert caught.value.exit_code == 22
    assert "winner's curse" in caught.value.message and f"evotree run {v1}" in (
        caught.value.fix or ""
    )
    gated_runs(Workspace.open(ws.root), [v1])
    data = compare_fn(Workspace.open(ws.root), "v0", v1, B=2000).to_dict()
    assert len(data["runs"]["b"]) == 1  # only the re-evaluation


def test_run_warns_when_seeds_add_nothing(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w"))
    v1 = recipe_version(ws, "skill = 0.6\nsteps = 1\n")
    result = Cli(ws.root)("run", v1, "--seeds", "2", "--json")
    assert (
        "gave identical per-task scores" in result.stderr
        and "more seeds add nothing" in result.stderr
    )
    assert result.stdout.lstrip().startswith("{")  # the JSON itself is untouched
    # a judge whose scores depend on the seed: no warning
    ws2 = Workspace.open(make_run_repo(tmp_path / "s", judge=SEEDED_JUDGE, hidden=POOL))
    v2 = recipe_version(ws2, "skill = 0.5\nsteps = 1\n")
    result = Cli(ws2.root)("run", v2, "--seeds", "3", "--json")
    assert "identical" not in result.stderr
