"""Where the judge phase runs the fixed training (``[eval] judge_trains``,
RSIBench-Data's shape), its time — measured by evotree outside the sandbox, not reported by the
judge — is counted as training in the run record and the usage, and is held by the run's
reservation: a budget that the judge's training would cross stops the run at its limit."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import Cli, git, ledger_commits, make_repo, validate

from evotree.core.config import parse_config
from evotree.core.config_limits import BudgetSection
from evotree.core.errors import ConfigError
from evotree.core.workspace import Workspace, init_workspace
from evotree.harness.budget import charge_run
from evotree.harness.finish import training_seconds
from evotree.harness.reservations import RESERVATIONS
from test_runs import TRAIN, _version

PHASES = {
    "prepare": {"wall_seconds": 1.5, "cpu_seconds": 1.0},
    "train": {"wall_seconds": 10.0, "cpu_seconds": 8.0},
    "eval": {"wall_seconds": 20.0, "cpu_seconds": 19.0},
}


# ---------------------------------------------------------------------------- no runs
def test_the_judge_phase_is_training_only_where_the_policy_says_so() -> None:
    assert training_seconds(PHASES, judge_trains=False) == (11.5, 9.0, 0.0, 0.0)
    assert training_seconds(PHASES, judge_trains=True) == (31.5, 28.0, 20.0, 19.0)
    assert training_seconds({}, judge_trains=True) == (
        0.0,
        0.0,
        0.0,
        0.0,
    )  # a run that never started a phase
    # what is not a measured, finite, non-negative number is not counted
    odd = {
        "train": {"wall_seconds": float("nan"), "cpu_seconds": -3.0},
        "eval": {"wall_seconds": True, "cpu_seconds": "9"},
    }
    assert training_seconds(odd, judge_trains=True) == (0.0, 0.0, 0.0, 0.0)


def test_training_hours_are_charged_at_most_the_runs_hours() -> None:
    budget = BudgetSection(usd_per_cpu_hour=36.0)
    usage, _ = charge_run(
        budget,
        wall_seconds=36.0,
        limits={"wall_seconds": 60.0},
        gpus=0.0,
        cpus=1.0,
        steps=0,
        episodes=0,
        train_seconds=31.5,
        judge_train_seconds=20.0,
    )
    assert usage["train_hours"] == round(31.5 / 3600, 9) and usage["judge_train_hours"] == round(
        20 / 3600, 9
    )
    assert usage["usd"] == 0.36  # the money is the run's wall clock at its price, as before
    # a run stopped past its limit: charged its limit, its training no more than that
    usage, notes = charge_run(
        budget,
        wall_seconds=9.0,
        limits={"wall_seconds": 3.0},
        gpus=0.0,
        cpus=1.0,
        steps=0,
        episodes=0,
        train_seconds=8.5,
        judge_train_seconds=7.0,
    )
    assert notes and usage["wall_hours"] == usage["train_hours"] == round(3 / 3600, 9)
    assert usage["judge_train_hours"] == round(
        1.5 / 3600, 9
    )  # the judge phase, last, is what is cut


def test_judge_trains_is_a_boolean_of_the_eval_section() -> None:
    assert parse_config("").eval.judge_trains is False
    assert parse_config("[eval]\njudge_trains = true\n").eval.judge_trains is True
    with pytest.raises(ConfigError, match="eval.judge_trains: expected true or false"):
        parse_config('[eval]\njudge_trains = "yes"\n')


# ---------------------------------------------------------------------------- real runs
#: a judge that "trains" (burns CPU) for ``seconds`` of its own clock, reports a training time it
#: did not spend (a signal: never what is counted), then scores
JUDGE = """\
import json, os, sys, time
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
seconds = float(open("judge/train_seconds.txt").read())
started = time.process_time()
while time.process_time() - started < seconds:
    sum(i * i for i in range(10000))
rec.signal(0, **{"judge/train_cpu_seconds": 1e6})
for i in range(10):
    rec.eval_result("validation", f"val-{i}", 1.0 if (i + 1) / 10 <= model["skill"] else 0.0)
"""

CONFIG = """\
[train]
command = "python train.py"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
judge_trains = true
[budget]
{budget}
"""


def _judge_trains_repo(path: Path, *, judge_seconds: float, budget: str = "") -> Path:
    repo = make_repo(path)
    (repo / "recipe.toml").write_text("skill = 0.5\nsteps = 2\n")
    (repo / "train.py").write_text(TRAIN)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(JUDGE)
    (repo / "judge" / "train_seconds.txt").write_text(f"{judge_seconds}\n")
    (repo / "evotree.toml").write_text(CONFIG.format(budget=budget))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a judge that trains")
    init_workspace(repo)
    return repo


@pytest.mark.heavy
def test_the_judge_phases_training_is_counted_as_training(tmp_path: Path) -> None:
    repo = _judge_trains_repo(tmp_path / "w", judge_seconds=1.0, budget="usd_per_cpu_hour = 36.0")
    v1 = _version(Workspace.open(repo), "skill = 0.6\nsteps = 2\n")
    cli = Cli(repo)
    (run,) = cli.json("run", v1)["runs"]
    assert run["status"] == "succeeded", run
    train, judge = run["phases"]["train"], run["phases"]["eval"]
    # evotree's own measure of the judge phase (about the second it burned), not the judge's 1e6
    assert 0.8 < judge["cpu_seconds"] < 30 and judge["wall_seconds"] >= judge["cpu_seconds"] * 0.5
    assert run["judge_train_seconds"] == judge["wall_seconds"]
    assert run["judge_train_cpu_seconds"] == judge["cpu_seconds"]
    assert run["train_seconds"] == pytest.approx(
        train["wall_seconds"] + judge["wall_seconds"], abs=0.002
    )
    assert run["train_cpu_seconds"] == pytest.approx(
        train["cpu_seconds"] + judge["cpu_seconds"], abs=0.002
    )
    usage = run["usage"]
    assert usage["judge_train_hours"] == pytest.approx(judge["wall_seconds"] / 3600, abs=1e-8)
    assert usage["train_hours"] == pytest.approx(run["train_seconds"] / 3600, abs=1e-8)
    assert usage["judge_train_hours"] < usage["train_hours"] <= usage["wall_hours"]
    assert usage["usd"] == pytest.approx(
        usage["wall_hours"] * 36.0, abs=1e-7
    )  # both rounded to 1e-9
    # shown as training by `evotree budget`: the tree's and the version's usage
    shown = cli.json("budget")
    validate(shown, "budget")
    assert shown["charged"]["judge_train_hours"] == usage["judge_train_hours"]
    assert shown["charged"]["train_hours"] == usage["train_hours"]
    mine = next(v for v in shown["versions"] if v["id"] == v1)
    assert mine["usage"]["judge_train_hours"] == usage["judge_train_hours"]
    assert "training" in cli("budget").stdout


@pytest.mark.heavy
def test_a_budget_the_judges_training_would_cross_stops_the_run_at_its_limit(
    tmp_path: Path,
) -> None:
    """0.03 USD at one cent a second: the run gets 3 s in all; the judge's 60 s of training is
    stopped at that deadline, the run is charged 0.03 — never more — and the next is refused."""
    repo = _judge_trains_repo(
        tmp_path / "w", judge_seconds=60.0, budget="usd_per_cpu_hour = 36.0\ntree_max_usd = 0.03"
    )
    v1 = _version(Workspace.open(repo), "skill = 0.6\nsteps = 2\n")
    cli = Cli(repo)
    (run,) = json.loads(cli("run", v1, "--json", code=37).stdout)["runs"]
    assert run["limits"]["wall_seconds"] == 3.0 and run["status"] == "budget_exceeded", run
    assert run["error"].startswith("eval phase stopped: wall-clock limit"), run["error"]
    assert run["phases"]["eval"]["wall_seconds"] > 0 and run["judge_train_seconds"] > 0
    usage = run["usage"]
    assert usage["usd"] == 0.03 and usage["wall_hours"] == round(3 / 3600, 9)
    assert 0 < usage["judge_train_hours"] < usage["train_hours"] <= usage["wall_hours"]
    meta = Workspace.open(repo).ledger.meta()
    assert meta["usage"]["usd"] <= 0.03 and not meta.get(RESERVATIONS)
    assert math.isclose(meta["usage"]["judge_train_hours"], usage["judge_train_hours"])
    commits = ledger_commits(repo)
    error = cli.json("run", v1, code=16)["error"]
    assert error["code"] == "budget_exceeded" and error["details"]["budget"] == "tree_max_usd"
    assert ledger_commits(repo) == commits  # refused before anything is reserved or started
