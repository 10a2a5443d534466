"""AI4AI-Bench's protocol mode (`evotree init --protocol ai4ai`), end to end on real runs:

- the hidden evaluator's figures are shown by no face (CLI text and --json, the Python API, the
  agent server's verbs) until `evotree finalize`; every face shows the candidate's own quick
  metric (train.py's accuracy on points it may see) where the judge's headline would be;
- finalize retrains the selected version clean (its train phase again, a fresh seed) and judges
  it once on the held-out points, on the finalize account; the exploration budget is apart;
- a finalize that fails in evotree's own code does not use up the one finalize;
- the worked example: AI4AI's headline (the normalized mean over trials, a crashed formal
  retrain counting 0) computed on three finalized searches.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli
from fixtures_ws import commit_version, protocol_workspace
from test_finalize_visibility import leaks

from evotree.core.workspace import Workspace
from evotree.domains import protocols
from evotree.gates.finalize import finalize, finalize_outcome, trials_mean
from evotree.harness.budget import BudgetExceeded
from evotree.harness.money import budget_status

pytestmark = pytest.mark.heavy

BETTER = "train_points = 400\nepochs = 10\nlr = 0.05\n"
#: a patch that runs in exploration (seeds 0, 1, ...) and crashes in the formal retrain (a fresh seed)
CRASH_ON_RETRAIN = (
    "import os\nif int(os.environ.get('EVOTREE_SEED', '0')) > 1000:\n    raise SystemExit(3)\n"
)


def _quick(cli: Cli, version: str) -> list[float]:
    """The quick metric as train.py recorded it (the train phase's own signal rows)."""
    rows = cli.json(
        "sql",
        "SELECT value FROM signals WHERE phase = 'train' AND metric = 'quick_accuracy' "
        f"AND version = '{version}' ORDER BY run_id",
    )["rows"]
    return [r["value"] for r in rows]


def _plain(result: Any) -> Any:
    if hasattr(result, "to_dict"):
        return result.to_dict()
    if isinstance(result, list):
        return [_plain(r) for r in result]
    return result


def test_every_face_shows_quick_metrics_and_no_judge_figure(tmp_path: Path) -> None:
    import evotree.api as api
    from evotree.cli.main import cli as root
    from evotree.server.verbs import Verbs
    from evotree.verbs import Principal, Session

    cli = protocol_workspace(tmp_path / "w", "ai4ai")
    repo = cli.repo
    out = cli(
        "run", "v0", "--seeds", "2"
    ).output  # text output: the renderer sees the quick headline
    assert "quick=" in out and "validation" not in out and "heldout" not in out, out
    agent = Session(repo, Principal.parse("agent"))
    made = agent.branch("more data, more epochs")
    (repo / made.worktree / "config.toml").write_text(BETTER)
    agent.commit(made.id, "more data, more epochs")
    agent.run([made.id], seeds=2)
    v = made.id
    quick = {"v0": _quick(cli, "v0"), v: _quick(cli, v)}
    assert len(quick["v0"]) == 2 and len(quick[v]) == 2
    # the judge did score every run (finalize selects by it), but no face shows it
    judge_rows = cli.json("sql", "SELECT count(*) AS n FROM evals")["rows"]
    assert judge_rows == [{"n": 0}]  # sql has no judge row while hidden

    def check_tree(data: dict[str, Any]) -> None:
        heads = {row["id"]: row["headline"] for row in data["versions"]}
        for version, values in quick.items():
            assert heads[version]["metric"] == "quick/quick_accuracy", heads
            assert heads[version]["value"] == pytest.approx(sum(values) / len(values))

    def check_runs(data: list[dict[str, Any]]) -> None:
        assert data and all(r["headline"]["metric"] == "quick/quick_accuracy" for r in data), data
        assert sorted(r["headline"]["value"] for r in data if r["version"] == v) == pytest.approx(
            sorted(quick[v])
        )

    def check_show(data: dict[str, Any]) -> None:
        assert data["version"]["headline"]["metric"] == "quick/quick_accuracy"

    checks = {"tree": check_tree, "runs": check_runs, "show": check_show}
    # the CLI, --json
    for verb, args in (("tree", ()), ("runs", ()), ("show", (v,))):
        data = cli.json(verb, *args)
        assert not leaks(data), (verb, leaks(data))
        checks[verb](data["runs"] if verb == "runs" else data)
    # the CLI, text: the quick metric is printed, no judge split is
    for args in (("tree",), ("runs",), ("show", v)):
        out = cli.runner.invoke(root, ["-C", str(repo), *args]).output
        assert "quick" in out and "validation" not in out and "heldout" not in out, (args, out)
    # the refused verbs, every face
    for args in (
        ("compare", "v0", v),
        ("gates", v),
        ("report", v, "--format", "json"),
        ("report", "--tree"),
    ):
        assert cli.json(*args, code=10)["error"]["code"] == "hidden_until_finalize", args
    # the Python API and the Session, as the person and as the agent
    ws = api.open(repo)
    check_tree(_plain(api.tree(ws)))
    check_runs(_plain(api.runs(ws)))
    for session in (Session(repo), agent):
        check_tree(_plain(session.tree()))
        check_runs(_plain(session.runs()))
        check_show(_plain(session.show(v)))
        assert not leaks(_plain(session.tree())) and not leaks(_plain(session.runs()))
        for call in (lambda s: s.compare("v0", v), lambda s: s.gates(v), lambda s: s.report(v)):
            with pytest.raises(Exception) as caught:
                call(session)
            assert getattr(caught.value, "code", None) == "hidden_until_finalize"
    # the agent server's verbs (what the MCP tools return)
    server = Verbs(repo, Principal.parse("agent"))
    check_tree(server.tree())
    check_runs(server.runs()["runs"])
    check_show(server.show(v))
    for data in (server.tree(), server.runs(), server.show(v), server.log()):
        assert not leaks(data), leaks(data)
    # the hidden figures exist (in the run directories) and differ from the quick metric
    evals = sorted((repo / ".evotree" / "runs").glob(f"{v}-s*/evals.parquet"))
    assert len(evals) == 2
    # finalize lifts the boundary: the judge's figures are shown from then on
    cli("finalize", "--yes")
    heads = {row["id"]: row["headline"] for row in cli.json("tree")["versions"]}
    assert heads[v]["metric"].startswith("validation/")
    assert cli.json("compare", "v0", v)["delta"] > 0


def test_ai4ai_worked_example_trials_mean_with_crashes_as_zero(tmp_path: Path) -> None:
    """Three trials (searches) of the AI4AI task: the start algorithm, a better recipe, and one
    whose patch crashes in the formal retrain. Each is finalized (retrained clean, judged once on
    the held-out points); AI4AI's headline is the mean of their normalized scores, the crash 0."""
    # trial 1: the starting algorithm alone. A finalize that fails in evotree's own code (here a
    # progress callback of the face that raises) records an attempt and leaves the search open
    start = protocol_workspace(tmp_path / "start", "ai4ai")
    start("run", "v0", "--seeds", "2")

    def broken(run_id: str, event: str, info: dict[str, Any]) -> None:
        if event == "started":
            raise RuntimeError("a renderer bug")

    failed = finalize(Workspace.open(start.repo), progress=broken)
    assert failed.status == "not_finalized" and failed.exit_code == 37
    assert finalize_outcome(Workspace.open(start.repo)) is None  # not used up
    assert not Workspace.open(start.repo).ledger.meta().get("finalize_usage", {}).get("wall_hours")
    first = start.json("finalize", "--yes")
    assert first["status"] == "finalized" and first["retrained"] is True, first

    # trial 2: a better recipe. Exploration is charged to the search's budget; when that is spent
    # (here: agent spend over [budget] tree_max_usd) no run of the search starts, and the formal
    # retrain still runs, on the finalize account, leaving the search's usage as it was
    better = protocol_workspace(tmp_path / "better", "ai4ai")
    better("run", "v0", "--seeds", "2")
    v1 = commit_version(better, {"config.toml": BETTER}, "more data, more epochs")
    better("run", v1, "--seeds", "2")
    search_seeds = {r["seed"] for r in better.json("runs")["runs"]}
    dry = better.json("finalize", "--dry-run")
    assert (
        dry["retrain"] is True
        and dry["selected"]["version"] == v1
        and "validation" not in dry["selected"]
    )
    named = better.json("finalize", "--dry-run", "--version", "v0")  # the submission an agent named
    assert (
        named["selected"]["version"] == "v0"
        and named["considered"] == 2
        and "submitted version v0" in named["rule"]
    )
    better("spend", "record", "--usd", "1.0", "--note", "the agent's API bill")
    refused = better.json("run", v1, "--seeds", "1", code=BudgetExceeded.exit_code)
    assert "tree_max_usd" in json.dumps(refused), refused
    before = budget_status(Workspace.open(better.repo)).charged  # what `evotree budget` counts
    second = better.json("finalize", "--yes")
    assert (
        second["status"] == "finalized" and second["version"] == v1 and second["retrained"] is True
    ), second
    assert second["seed"] not in search_seeds  # a fresh seed
    # the formal retrain is not charged to the exploration budget (the search's usage)
    assert budget_status(Workspace.open(better.repo)).charged == before
    ws = Workspace.open(better.repo)
    assert ws.ledger.meta()["finalize_usage"]["wall_hours"] > 0  # it is charged to its own account
    account = budget_status(ws).finalize  # `evotree budget` shows it apart from the search's
    assert account["runs"] == 1 and account["wall_hours"] > 0 and account["steps"] == 1
    assert "finalize account (not in the budgets above): 1 run(s)" in better("budget").output
    record = json.loads(
        (better.repo / ".evotree" / "runs" / second["heldout_run"] / "run.json").read_text()
    )
    assert record["kind"] == "finalize" and record["seed"] == second["seed"]
    assert (
        record["phases"]["train"]["returncode"] == 0
        and record["train_command"] == "python train.py"
    )
    assert (
        record["phases"]["train"]["sandbox"] == "bwrap" and not record["phases"]["train"]["network"]
    )
    assert (
        record["limits"]["wall_seconds"]
        == ws.config.train.timeout_seconds + ws.config.eval.timeout_seconds
    )
    # the retrain trained anew: its model.json came from its own train phase, not the search's run
    assert (
        better.repo / ".evotree" / "runs" / second["heldout_run"] / "candidate" / "model.json"
    ).exists()
    spec = ws.config.eval.normalization
    from evotree.core.normalize import normalize_score

    assert second["normalized"] == pytest.approx(normalize_score(second["heldout_mean"], spec))
    assert second["normalized"] > first["normalized"]

    # trial 3: the patch runs in exploration and crashes in the formal retrain: heldout_failed, 0
    crash = protocol_workspace(tmp_path / "crash", "ai4ai")
    crash("run", "v0", "--seeds", "1")
    train = protocols.AI4AI_TRAIN
    v1 = commit_version(
        crash, {"config.toml": BETTER, "train.py": CRASH_ON_RETRAIN + train}, "better, fragile"
    )
    crash("run", v1, "--seeds", "2")
    third = crash.json("finalize", "--yes")
    assert (
        third["version"] == v1
        and third["status"] == "heldout_failed"
        and third["normalized"] == 0.0
    ), third
    assert crash.json("finalize", "--yes", code=10)["error"]["code"] == "already_finalized"

    outcomes = [finalize_outcome(Workspace.open(c.repo)) for c in (start, better, crash)]
    headline = trials_mean(outcomes)
    assert headline["trials"] == 3 and headline["failed"] == 1 and headline["pending"] == 0
    assert headline["mean"] == pytest.approx((first["normalized"] + second["normalized"] + 0.0) / 3)
    # dropping the crash instead (a mean biased upward) would give more
    assert headline["mean"] < (first["normalized"] + second["normalized"]) / 2
    assert trials_mean([*outcomes, None])["pending"] == 1  # a search not finalized is not counted
