"""`evotree run`: real runs end to end, the visibility boundary, crashes, budgets, parallel runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import EVOTREE_BIN, Cli, commit_file, git, make_repo, validate
from evotree.core.errors import ConfigError, DirtyState, InvalidState
from evotree.core.versions import abandon_version, create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.harness.budget import BudgetExceeded
from evotree.gates.runs import run_versions
from evotree.harness.records import RunRecord, list_runs

TRAIN = """\
import json, os, sys, time, tomllib
from evotree.harness import get_recorder
rec = get_recorder()
recipe = tomllib.load(open("recipe.toml", "rb"))
if recipe.get("invalid"):
    sys.exit(65)
steps = int(recipe.get("steps", 3))
skill = float(recipe.get("skill", 0.5))
for step in range(1, steps + 1):
    rec.signal(step, loss=1.0 / step, reward=skill)
    rec.rollout_group(step, group_id=f"g{step}", task_id="t1", rewards=[skill, 0.0, skill, 1.0],
                      texts=["a", "b", "c", "d"], lengths=[1, 1, 1, 1])
    if recipe.get("obey_budget") and rec.budget_exceeded(step):
        break
    time.sleep(float(recipe.get("sleep", 0)))
# what the candidate can see: recorded so tests can check the visibility boundary
rec.signal(0, sees_judge=float(os.path.exists("judge")),
           sees_git=float(os.system("git log -1 >/dev/null 2>&1") == 0))
json.dump({"skill": skill}, open("model.json", "w"))
if recipe.get("escape"):  # a grandchild in its own session, alive after the train phase ends
    import subprocess
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if recipe.get("judge_link"):  # a link where the judge tree used to be written, to a folder it can read
    target = os.path.join(os.environ["EVOTREE_RUN_DIR"], "..", "..", "judge", os.environ["EVOTREE_RUN_ID"])
    os.makedirs(os.path.dirname(target), exist_ok=True)
    os.symlink(recipe["judge_link"], target)
if recipe.get("plant"):  # forge the judge's evidence before the judge runs
    from evotree.harness.recorder import Recorder
    with Recorder(os.path.join(os.environ["EVOTREE_RUN_DIR"], "evidence", "eval"),
                  run_id=os.environ["EVOTREE_RUN_ID"], phase="eval") as forged:
        for i in range(10):
            forged.eval_result("validation", f"val-{i}", 1.0)
if recipe.get("fail"):
    sys.exit(3)
"""

JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
hidden = json.load(open("judge/hidden.json"))
wanted = os.environ["EVOTREE_JUDGE_SPLITS"].split(",")
for split, tasks in hidden.items():
    if split not in wanted:
        continue
    for i, task in enumerate(tasks):
        rec.eval_result(split, task, 1.0 if (i + 1) / len(tasks) <= model["skill"] else 0.0)
"""

CONFIG = """\
[train]
command = "python train.py"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
[budget]
{budget}
"""


def make_run_repo(
    path: Path,
    *,
    budget: str = "",
    recipe: str = "skill = 0.5\nsteps = 3\n",
    judge: str = JUDGE,
    hidden: dict[str, list[str]] | None = None,
) -> Path:
    repo = make_repo(path)
    (repo / "recipe.toml").write_text(recipe)
    (repo / "train.py").write_text(TRAIN)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(judge)
    hidden = hidden or {
        "validation": [f"val-{i}" for i in range(10)],
        "heldout": [f"SECRET-held-{i}" for i in range(4)],
    }
    (repo / "judge" / "hidden.json").write_text(json.dumps(hidden))
    (repo / "evotree.toml").write_text(CONFIG.format(budget=budget))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipe, train script and judge")
    init_workspace(repo)
    return repo


@pytest.fixture
def rws(tmp_path: Path) -> Workspace:
    return Workspace.open(make_run_repo(tmp_path / "w"))


def _version(ws: Workspace, recipe: str, *, hypothesis: str = "h", parent: str = "champion") -> str:
    rec = create_version(ws, hypothesis=hypothesis, parent=parent)
    commit_file(ws.root / rec.worktree, "recipe.toml", recipe, "recipe")
    return rec.id


def _rows(path: Path) -> list[dict[str, Any]]:
    import duckdb

    con = duckdb.connect()
    cur = con.execute(f"SELECT * FROM read_parquet('{path}')")
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


def test_run_end_to_end(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.8\nsteps = 3\n")
    (record,) = run_versions(rws, [v1])
    assert record.status == "succeeded", record.error
    run_dir = rws.root / ".evotree" / "runs" / record.run_id
    saved = json.loads((run_dir / "run.json").read_text())
    for key in (
        "version",
        "commit",
        "judge_commit",
        "seed",
        "train_command",
        "eval_command",
        "python",
        "packages",
        "host",
        "started_at",
        "ended_at",
        "wall_seconds",
        "cpu_seconds",
        "usage",
        "phases",
    ):
        assert saved[key] not in (None, "", {}), key
    assert saved["commit"] == git(rws.root, "rev-parse", f"evotree/{v1}")
    assert saved["judge_commit"] == git(rws.root, "rev-parse", "refs/evotree/champion")
    assert (
        saved["phases"]["train"]["returncode"] == 0 and saved["phases"]["eval"]["returncode"] == 0
    )
    # evidence: exact rows
    signals = _rows(run_dir / "signals.parquet")
    losses = sorted((r["step"], r["value"]) for r in signals if r["metric"] == "loss")
    assert losses == [(1, 1.0), (2, 0.5), (3, pytest.approx(1 / 3))]
    rollouts = _rows(run_dir / "rollouts.parquet")
    assert len(rollouts) == 12 and {r["group_id"] for r in rollouts} == {"g1", "g2", "g3"}
    evals = _rows(run_dir / "evals.parquet")
    assert len(evals) == 10 and {r["phase"] for r in evals} == {"eval"}
    assert {r["split"] for r in evals} == {"validation"}  # held-out only when asked for
    validation = [r["score"] for r in evals if r["split"] == "validation"]
    assert sum(validation) / len(validation) == pytest.approx(0.8)
    assert record.headline == {
        "metric": "validation/mean_score",
        "value": pytest.approx(0.8),
        "n": 10,
        "scored": 10,
    }
    assert (run_dir / "logs" / "train.out").exists() and (run_dir / "logs" / "eval.err").exists()
    # ledger: started + finished, the version is evaluated with its headline
    view = {v["id"]: v for v in Cli(rws.root).json("tree")["versions"]}
    assert view[v1]["status"] == "evaluated" and view[v1]["headline"]["value"] == pytest.approx(0.8)
    kinds = [e["kind"] for e in Cli(rws.root).json("log", "--version", v1)["events"]]
    assert kinds[:2] == ["run.finished", "run.started"]
    usage = rws.ledger.snapshot().version(v1).usage
    assert usage["runs"] == 1 and usage["steps"] == 3 and usage["episodes"] == 12


def test_visibility_boundary(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.5\nsteps = 1\n")
    # the candidate also rewrites the judge on its branch to give itself full marks
    wt = rws.root / rws.resolve(v1).worktree
    (wt / "judge").mkdir()  # the real judge is in refs/evotree/judge, in no checkout
    commit_file(
        wt,
        "judge/eval.py",
        JUDGE.replace('1.0 if (i + 1) / len(tasks) <= model["skill"] else 0.0', "1.0"),
        "judge myself",
    )
    (record,) = run_versions(rws, [v1], heldout=True)
    run_dir = rws.root / ".evotree" / "runs" / record.run_id
    assert {r["split"] for r in _rows(run_dir / "evals.parquet")} == {"validation", "heldout"}
    assert not (run_dir / "candidate" / "judge").exists()
    assert not (rws.root / ".evotree" / "judge" / record.run_id).exists()  # judge dir removed after
    # nothing the candidate could reach holds hidden data (only the judge's own evidence names its tasks)
    for where in (run_dir / "candidate", run_dir / "evidence" / "train"):
        for path in where.rglob("*"):
            if path.is_file():
                assert "SECRET-held" not in path.read_text(errors="ignore"), path
    for log in ("train.out", "train.err"):
        assert "SECRET-held" not in (run_dir / "logs" / log).read_text()
    seen = {r["metric"]: r["value"] for r in _rows(run_dir / "signals.parquet") if r["step"] == 0}
    assert seen == {"sees_judge": 0.0, "sees_git": 0.0}
    # the champion's judge scored it, not the candidate's copy
    assert record.headline["value"] == pytest.approx(0.5)
    assert not (run_dir / "candidate" / ".git").exists()


def test_uncommitted_changes_refused_and_named(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.5\n")
    (rws.root / rws.resolve(v1).worktree / "recipe.toml").write_text("skill = 1.0\n")
    with pytest.raises(DirtyState, match=r"uncommitted changes in .*: recipe.toml"):
        run_versions(rws, [v1])
    assert list_runs(rws) == []


def test_abandoned_version_is_not_run(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.5\n")
    abandon_version(rws, v1, reason="r")
    with pytest.raises(InvalidState, match="is abandoned"):
        run_versions(rws, [v1])


def test_failed_train_is_charged_and_never_scored(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.9\nsteps = 2\nfail = true\n")
    (record,) = run_versions(rws, [v1])
    assert record.status == "failed" and "train phase exited with 3" in record.error
    assert record.headline is None  # a missing result is not a score of zero
    assert "eval" not in record.phases
    version = rws.ledger.snapshot().version(v1)
    assert version.status == "failed" and version.headline is None
    assert version.usage["runs"] == 1 and version.usage["steps"] == 2


def test_command_not_found_is_explained(tmp_path: Path) -> None:
    repo = make_run_repo(tmp_path / "w")
    (repo / "evotree.toml").write_text(
        CONFIG.format(budget="").replace("python train.py", "no-such-trainer")
    )
    git(repo, "commit", "-qam", "broken command")
    # the champion still has the old config until a version with the change is promoted
    ws = Workspace.open(repo)
    git(repo, "update-ref", "refs/evotree/champion", "HEAD")
    (record,) = run_versions(Workspace.open(repo), ["v0"])
    assert record.status == "failed" and "exited with 127 (command not found)" in record.error
    assert ws  # the workspace stayed usable


def test_empty_command_refused(tmp_path: Path) -> None:
    repo = make_run_repo(tmp_path / "w")
    (repo / "evotree.toml").write_text('[train]\ncommand = " "\n')
    git(repo, "commit", "-qam", "no command")
    git(repo, "update-ref", "refs/evotree/champion", "HEAD")
    with pytest.raises(ConfigError, match=r"\[train\].command is empty"):
        run_versions(Workspace.open(repo), ["v0"])


def test_parallel_runs_and_seeds(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.2\nsteps = 2\n")
    v2 = _version(rws, "skill = 0.6\nsteps = 2\n")
    records = run_versions(rws, [v1, v2], seeds=2, jobs=3)
    assert sorted((r.version, r.seed, r.status) for r in records) == [
        (v1, 0, "succeeded"),
        (v1, 1, "succeeded"),
        (v2, 0, "succeeded"),
        (v2, 1, "succeeded"),
    ]
    assert len({r.run_id for r in records}) == 4
    snap = rws.ledger.snapshot()
    assert len(snap.version(v1).runs) == 2 and len(snap.version(v2).runs) == 2
    assert snap.meta["usage"]["runs"] == 4
    assert snap.version(v2).headline["value"] == pytest.approx(0.6)
    finished = [e for e in rws.ledger.entries() if e.event.kind == "run.finished"]
    assert len(finished) == 4


def test_budget_refused_before_start(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w", budget="max_runs_per_version = 1"))
    events = sum(1 for _ in ws.ledger.entries())
    with pytest.raises(BudgetExceeded, match="max_runs_per_version") as info:
        run_versions(ws, ["v0"], seeds=2)
    assert info.value.details["limit"] == 1
    assert sum(1 for _ in ws.ledger.entries()) == events  # refused requests cost nothing
    assert list_runs(ws) == []
    run_versions(ws, ["v0"])
    with pytest.raises(BudgetExceeded, match="used 1 of its 1 runs"):
        run_versions(ws, ["v0"])


def test_step_budget_stops_runaway_run(tmp_path: Path) -> None:
    ws = Workspace.open(
        make_run_repo(
            tmp_path / "w",
            budget="max_steps = 3",
            recipe="skill = 0.5\nsteps = 200\nsleep = 0.05\n",
        )
    )
    (record,) = run_versions(ws, ["v0"])
    assert record.status == "budget_exceeded" and "step budget 3 exceeded" in record.error
    assert "eval" not in record.phases and record.headline is None
    assert record.usage["steps"] < 200


def test_step_budget_obeyed_by_training_loop(tmp_path: Path) -> None:
    ws = Workspace.open(
        make_run_repo(
            tmp_path / "w",
            budget="max_steps = 5",
            recipe="skill = 0.5\nsteps = 50\nobey_budget = true\n",
        )
    )
    (record,) = run_versions(ws, ["v0"])
    assert record.status == "succeeded" and record.usage["steps"] == 5
    # the version budget is now spent: the next request is refused before it starts
    with pytest.raises(BudgetExceeded, match="budget.max_steps is spent"):
        run_versions(ws, ["v0"])


def test_wall_clock_budget(tmp_path: Path) -> None:
    ws = Workspace.open(
        make_run_repo(
            tmp_path / "w",
            budget="max_wall_seconds = 2",
            recipe="skill = 0.5\nsteps = 100\nsleep = 0.2\n",
        )
    )
    (record,) = run_versions(ws, ["v0"])
    # stopped by the limit, long before its 100 steps of 0.2 s (what the limit must achieve)
    assert record.status == "budget_exceeded" and "wall-clock limit" in record.error
    assert record.usage.get("steps", 0) < 100


def _start_driver(repo: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [str(EVOTREE_BIN), "-C", str(repo), "run", *args, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_signals(repo: Path, minimum: int, timeout: float = 30) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for path in (repo / ".evotree" / "runs").glob("*/evidence/train/signals.jsonl"):
            if len(path.read_text().splitlines()) >= minimum:
                return path.parents[2]
        time.sleep(0.1)
    raise AssertionError("the run recorded nothing in time")


def test_sigkilled_run_is_found_and_marked_crashed(tmp_path: Path) -> None:
    repo = make_run_repo(tmp_path / "w", recipe="skill = 0.5\nsteps = 1000\nsleep = 0.05\n")
    driver = _start_driver(repo, "v0")
    run_dir = _wait_for_signals(repo, 6)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    recorded = len((run_dir / "evidence" / "train" / "signals.jsonl").read_text().splitlines())
    out = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "tree"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "marked 1 run(s) whose process died as crashed" in out.stderr
    record = RunRecord.load(run_dir / "run.json")
    assert record.status == "crashed" and "died" in record.error
    assert len(_rows(run_dir / "signals.parquet")) >= recorded - 1  # at most the last line lost
    assert record.headline is None
    ws = Workspace.open(repo)
    assert ws.ledger.snapshot().version("v0").runs[-1]["status"] == "crashed"
    # the orphaned train process was killed too
    time.sleep(0.3)
    size = (run_dir / "evidence" / "train" / "signals.jsonl").stat().st_size
    time.sleep(0.5)
    assert (run_dir / "evidence" / "train" / "signals.jsonl").stat().st_size == size
    # and a second command finds nothing more to do
    again = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "tree"], capture_output=True, text=True
    )
    assert "crashed" not in again.stderr


def test_ctrl_c_cancels_and_marks(tmp_path: Path) -> None:
    repo = make_run_repo(tmp_path / "w", recipe="skill = 0.5\nsteps = 1000\nsleep = 0.05\n")
    driver = _start_driver(repo, "v0")
    run_dir = _wait_for_signals(repo, 4)
    driver.send_signal(signal.SIGINT)
    out, err = driver.communicate(timeout=30)
    assert driver.returncode == 130, err
    assert json.loads(out)["error"]["code"] == "cancelled"
    record = RunRecord.load(run_dir / "run.json")
    assert record.status == "cancelled" and record.usage["runs"] == 1


def test_unwritable_runs_dir(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # root ignores permission bits: make the runs directory path a file instead
        repo = make_run_repo(tmp_path / "w")
        (repo / ".evotree" / "runs").write_text("not a directory")
    else:
        repo = make_run_repo(tmp_path / "w")
        (repo / ".evotree" / "runs").mkdir()
        (repo / ".evotree" / "runs").chmod(0o500)
    from evotree.harness.records import RunDirError

    with pytest.raises(RunDirError, match="cannot create the runs directory"):
        run_versions(Workspace.open(repo), ["v0"])


def test_cli_run_and_runs(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.7\nsteps = 2\n")
    cli = Cli(rws.root)
    data = cli.json("run", v1, "--seeds", "2")
    for run in data["runs"]:
        validate(run, "run")
    assert [r["status"] for r in data["runs"]] == ["succeeded", "succeeded"]
    listed = cli.json("runs", "--version", v1)
    assert sorted(r["run_id"] for r in listed["runs"]) == sorted(r["run_id"] for r in data["runs"])
    text = cli("runs").output
    assert "succeeded" in text and "validation=0.7" in text


def test_sql_over_runs(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.3\nsteps = 2\n")
    run_versions(rws, [v1, "v0"])
    cli = Cli(rws.root)
    data = cli.json(
        "sql",
        "SELECT version, split, avg(score) AS mean FROM evals WHERE split = 'validation' "
        "GROUP BY ALL ORDER BY version",
    )
    assert data["columns"] == ["version", "split", "mean"]
    assert [(r["version"], r["mean"]) for r in data["rows"]] == [
        ("v0", pytest.approx(0.5)),
        (v1, pytest.approx(0.3)),
    ]
    csv_out = cli("sql", "SELECT count(*) AS n FROM rollouts", "--csv").output
    assert csv_out.splitlines() == ["n", "20"]  # v0: 3 steps x 4, v1: 2 steps x 4
    text = cli("sql", "SELECT run_id, status FROM runs").output
    assert "succeeded" in text and "2 row(s)" in text
    err = cli.json("sql", "SELECT nope FROM evals", code=14)["error"]
    assert "SQL error" in err["message"] and "evals(" in err["fix"]


def test_ingest_trainer_state(rws: Workspace, tmp_path: Path) -> None:
    state = {
        "global_step": 3,
        "log_history": [
            {"loss": 0.9, "reward": 0.1, "learning_rate": 1e-5, "epoch": 0.1, "step": 1},
            {"loss": 0.7, "reward": float("nan"), "epoch": 0.2, "step": 2},
            {"loss": 0.5, "reward": 0.4, "epoch": 0.3, "step": 3},
            {"train_runtime": 12.5, "train_loss": 0.7, "epoch": 0.3, "step": 3},
            {"note": "no step"},
        ],
    }
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps(state))  # json writes NaN, as transformers does
    data = Cli(rws.root).json("ingest", str(path), "--version", "v0")
    validate(data, "runs")
    (run,) = data["runs"]
    assert run["status"] == "ingested" and run["headline"] is None and run["wall_seconds"] == 12.5
    assert any("1 non-finite" in n for n in run["notes"]) and any(
        "skipped 1" in n for n in run["notes"]
    )
    rows = _rows(rws.root / ".evotree" / "runs" / run["run_id"] / "signals.parquet")
    loss = sorted((r["step"], r["value"]) for r in rows if r["metric"] == "loss")
    assert loss == [(1, 0.9), (2, 0.7), (3, 0.5)]
    nan_row = [r for r in rows if r["metric"] == "reward" and r["step"] == 2]
    assert nan_row and nan_row[0]["nonfinite"] is True and nan_row[0]["value"] is None
    version = rws.ledger.snapshot().version("v0")
    assert (
        version.status == "active" and version.usage.get("runs", 0) == 0
    )  # evidence, not an attempt
    err = Cli(rws.root).json("ingest", str(tmp_path / "missing.json"), "--version", "v0", code=18)[
        "error"
    ]
    assert "does not exist" in err["message"]
    (tmp_path / "bad.json").write_text("{not json")
    assert (
        "not valid JSON"
        in Cli(rws.root).json("ingest", str(tmp_path / "bad.json"), "--version", "v0", code=18)[
            "error"
        ]["message"]
    )


def test_progress_lines_when_not_a_terminal(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.4\nsteps = 2\n")
    proc = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(rws.root), "run", v1], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert any(": started (v1, seed 0)" in line for line in lines)
    assert any(line.endswith(": train phase") for line in lines)
    assert any(line.endswith(": eval phase") for line in lines)
    assert any("succeeded validation/mean_score=0.4" in line for line in lines)
    assert "succeeded" in proc.stdout


def test_invalid_submission_costs_nothing(rws: Workspace) -> None:
    v1 = _version(rws, "invalid = true\n")
    (record,) = run_versions(rws, [v1])
    assert record.status == "invalid" and "invalid submission" in record.error
    assert record.usage == {} and "eval" not in record.phases
    version = rws.ledger.snapshot().version(v1)
    # not charged, but not "active" either: the tree shows it failed, and why
    assert version.usage.get("runs", 0) == 0 and version.status == "failed"
    assert (version.reason or "").startswith("invalid candidate")


def test_two_evotree_run_processes_at_once(rws: Workspace) -> None:
    v1 = _version(rws, "skill = 0.3\nsteps = 2\n")
    v2 = _version(rws, "skill = 0.7\nsteps = 2\n")
    drivers = [_start_driver(rws.root, v, "--seeds", "2") for v in (v1, v2)]
    outputs = [d.communicate(timeout=120) for d in drivers]
    for driver, (out, err) in zip(drivers, outputs):
        assert driver.returncode == 0, err
        assert [r["status"] for r in json.loads(out)["runs"]] == ["succeeded", "succeeded"]
    snap = Workspace.open(rws.root).ledger.snapshot()
    assert snap.meta["usage"]["runs"] == 4
    assert snap.version(v1).headline["value"] == pytest.approx(0.3)
    assert snap.version(v2).headline["value"] == pytest.approx(0.7)
    kinds = [e.event.kind for e in Workspace.open(rws.root).ledger.entries()]
    assert kinds.count("run.started") == 4 and kinds.count("run.finished") == 4


#: The sandbox (tests/test_sandbox.py) stops these attacks first; with it off (the champion's signed
#: policy must say so) the second line of defence still holds, which these tests check.
SANDBOX_OFF = '\n[sandbox]\nmode = "off"\n'


@pytest.fixture
def unsandboxed(tmp_path: Path) -> Workspace:
    return Workspace.open(make_run_repo(tmp_path / "off", budget=SANDBOX_OFF))


def test_eval_evidence_planted_by_the_train_phase_is_discarded(unsandboxed: Workspace) -> None:
    """A candidate that writes the judge's evidence directory during training gains nothing: the
    directory is emptied before the judge runs, and the run says so."""
    rws = unsandboxed
    v1 = _version(rws, "skill = 0.2\nsteps = 1\nplant = true\n")
    (record,) = run_versions(rws, [v1])
    assert record.status == "succeeded", record.error
    assert any("wrote into evidence/eval" in note for note in record.notes)
    assert record.headline is not None and record.headline["value"] == pytest.approx(0.2)


def test_seed_start_adds_new_seeds_and_a_negative_start_is_refused(rws: Workspace) -> None:
    """--seed-start S runs seeds S..S+N-1 (adding seeds to a comparison), the seed reaches the
    run (EVOTREE_SEED), and a negative start is refused before anything runs."""
    v1 = _version(rws, "skill = 0.4\nsteps = 1\n")
    records = run_versions(rws, [v1], seeds=2, seed_start=3)
    assert sorted(r.seed for r in records) == [3, 4] and all(
        r.status == "succeeded" for r in records
    )
    assert all(f"{v1}-s{r.seed}-" in r.run_id for r in records)
    with pytest.raises(InvalidState, match="--seed-start"):
        run_versions(rws, [v1], seeds=1, seed_start=-1)
    assert len(rws.ledger.snapshot().version(v1).runs) == 2


def test_a_link_planted_at_the_judge_path_receives_nothing(
    unsandboxed: Workspace, tmp_path: Path
) -> None:
    """The train phase knows where a judge tree at a predictable path would go
    (.evotree/judge/<run_id>) and plants a symlink there to a folder it can read later: the judge
    goes to a fresh directory instead, so the folder stays empty and the run is scored as usual."""
    rws = unsandboxed
    loot = tmp_path / "loot"
    loot.mkdir()
    v1 = _version(rws, f"skill = 0.5\nsteps = 1\njudge_link = '{loot}'\n")
    (record,) = run_versions(rws, [v1])
    assert record.status == "succeeded", record.error
    assert record.headline["value"] == pytest.approx(0.5)
    assert list(loot.iterdir()) == []
    judge_root = rws.root / ".evotree" / "judge"
    assert (judge_root / record.run_id).is_symlink()  # the planted link, untouched and unused
    assert [p.name for p in judge_root.iterdir()] == [record.run_id]  # the fresh judge dir is gone


def test_a_train_process_that_left_the_group_is_killed_before_the_judge(
    unsandboxed: Workspace,
) -> None:
    """A train-phase process in its own session (setsid) survives the group kill; it is found by
    its EVOTREE_RUN_ID and killed before the judge tree is written, and the run says so."""
    rws = unsandboxed
    v1 = _version(rws, "skill = 0.5\nsteps = 1\nescape = true\n")
    (record,) = run_versions(rws, [v1])
    assert record.status == "succeeded", record.error
    assert any("outlived the train phase" in note for note in record.notes), record.notes
    from evotree.harness.recovery import kill_run_processes

    assert kill_run_processes(record.run_id) == []  # nothing of the run is left alive


def test_sigkill_during_the_judge_phase_leaves_no_judge_folder(tmp_path: Path) -> None:
    """The judge tree (hidden answers) lives in a fresh .evotree/judge/<run_id>-XXXXXXXX that the
    driver deletes when the judge ends; a driver SIGKILLed while the judge runs cannot. The next
    evotree command kills the judge process, deletes the folder and marks the run crashed."""
    sleepy = JUDGE + (
        "import time\nopen(os.path.join(os.environ['EVOTREE_EVIDENCE_DIR'], 'judging'), 'w').close()\n"
        "time.sleep(120)\n"
    )
    repo = make_run_repo(tmp_path / "w", recipe="skill = 0.5\nsteps = 1\n", judge=sleepy)
    driver = _start_driver(repo, "v0")
    deadline = time.monotonic() + 60
    while not list((repo / ".evotree" / "runs").glob("*/evidence/eval/judging")):
        assert time.monotonic() < deadline, "the judge phase did not start in time"
        time.sleep(0.1)
    (marker,) = (repo / ".evotree" / "runs").glob("*/evidence/eval/judging")
    run_id = marker.parents[2].name
    judge_root = repo / ".evotree" / "judge"
    folders = list(
        judge_root.glob(f"{run_id}-*")
    )  # the judge's tree (and the candidate's copy, if any)
    assert folders and any(p.name == "hidden.json" for f in folders for p in f.rglob("*"))
    folder = next(f for f in folders if any(p.name == "hidden.json" for p in f.rglob("*")))
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    assert folder.exists()  # nothing deleted it: the driver is dead
    out = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "tree"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "marked 1 run(s) whose process died as crashed" in out.stderr
    assert not folder.exists() and not list(judge_root.glob(f"{run_id}-*"))
    record = RunRecord.load(repo / ".evotree" / "runs" / run_id / "run.json")
    assert record.status == "crashed" and any("judge folder" in note for note in record.notes), (
        record.notes
    )
    from evotree.harness.integrity import verify_run_evidence
    from evotree.harness.recovery import kill_run_processes

    assert kill_run_processes(run_id) == []  # the judge process was killed too
    check = verify_run_evidence(
        Workspace.open(repo), "v0"
    )  # the crashed run is finished with a manifest
    assert [(r.run_id, r.state, r.status) for r in check.runs] == [(run_id, "ok", "crashed")]


def test_judge_folders_of_runs_no_longer_live_are_swept(rws: Workspace) -> None:
    """Leftovers of a crash recovered before this clean-up existed go at the next command; a live
    run's folder, a retry's and anything not made by mkdtemp stay."""
    import fcntl

    from evotree.harness.recovery import recover_crashed_runs

    judge_root = rws.root / ".evotree" / "judge"
    active = rws.root / ".evotree" / "runs" / ".active"
    active.mkdir(parents=True, exist_ok=True)
    stale = judge_root / "v0-s0-20250101T000000-abcdef-x1y2z3_9"
    stale_copy = judge_root / "v0-s0-20250101T000000-abcdef-candidate-0a1b2c3d"
    live = judge_root / "v0-s1-20250101T000000-123456-q1w2e3r4"
    live_copy = judge_root / "v0-s1-20250101T000000-123456-candidate-q1w2e3r4"
    retry = judge_root / "v0-s0-20250101T000000-abcdef-r1"
    for folder in (stale / "judge", stale_copy, live / "judge", live_copy, retry):
        folder.mkdir(parents=True)
    (stale / "judge" / "hidden.json").write_text("{}")
    (stale / "judge").chmod(0o500)  # a judge may leave read-only folders behind
    with open(active / "v0-s1-20250101T000000-123456", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # that run is live
        recover_crashed_runs(rws)
        assert not stale.exists() and not stale_copy.exists()
        assert live.exists() and live_copy.exists() and retry.exists()
    from evotree.harness.recovery import remove_judge_leftovers

    for folder in (
        judge_root / "v0-s2-x-abcdef-0a1b2c3d",
        judge_root / "v0-s2-x-abcdef-r1-0a1b2c3d",
    ):
        folder.mkdir()
    assert remove_judge_leftovers(judge_root, "v0-s2-x-abcdef") == [
        "v0-s2-x-abcdef-0a1b2c3d"
    ]  # not the retry's
