"""A friction log: `diff`, `status`, `logs` and other commands, each as a newcomer met it.

Real git repositories and real runs (the small train script and judge of tests/test_runs.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, commit_file, git, ledger_commits, make_repo, validate
from fixtures_ws import bare_remote, clone_as
from test_runs import make_run_repo

from evotree.core.workspace import Workspace


def _error(cli: Cli, *args: str, code: int) -> dict[str, Any]:
    """The error document of a command that must fail cleanly (no traceback), validated."""
    text = cli(*args, code=code)
    assert "Traceback" not in text.output and "fix:" in text.stderr, text.output
    data = cli.json(*args, code=code)
    validate(data, "error")
    assert data["error"]["exit_code"] == code
    return data["error"]


@pytest.fixture
def rrepo(tmp_path: Path) -> Path:
    """A workspace whose v0 trains and is judged in well under a second."""
    return make_run_repo(tmp_path / "w")


def _branch(repo: Path, recipe: str, *, train: str | None = None, message: str = "h") -> str:
    out = Cli(repo).json("branch", "-m", message)
    worktree = repo / out["worktree"]
    if train is not None:
        (worktree / "train.py").write_text(train)
    commit_file(worktree, "recipe.toml", recipe, "recipe")
    return out["id"]


# ---------------------------------------------------------------------------- item 9: bad inputs
def test_a_version_id_with_a_trailing_newline_is_refused(rrepo: Path) -> None:
    cli = Cli(rrepo)
    err = _error(cli, "show", "v0\n", code=5)
    assert err["code"] == "invalid_version_id" and "'v0\\n'" in err["message"]
    err = _error(cli, "branch", "--name", "v7\n", "-m", "x", code=5)
    assert err["code"] == "invalid_version_id"
    assert not git(rrepo, "branch", "--list", "evotree/v7*")  # nothing half-written


def test_a_non_utf8_config_is_a_config_error_in_check_and_init(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    (repo / "evotree.toml").write_bytes(b'[workspace]\ndomain = "custom\xff"\n')
    cli = Cli(repo)
    for args in (("config", "check"), ("init",)):
        err = _error(cli, *args, code=6)
        assert (
            err["code"] == "config_error"
            and "not UTF-8" in err["message"]
            and err["details"]["line"] == 2
        )
    assert git(repo, "rev-parse", "--verify", "-q", "refs/evotree/ledger", check=False) == ""


@pytest.mark.parametrize(
    "text,words",
    [
        ("[budget]\nmax_episodes = " + "9" * 5000 + "\n", "out of range"),
        ("[budget]\nmax_episodes = " + "9" * 30 + "\n", "out of range"),
        ("[budget]\nmax_episodes = " + "[" * 100_000 + "]" * 100_000 + "\n", "nested too deeply"),
    ],
)
def test_huge_integers_and_deep_nesting_are_config_errors(
    tmp_path: Path, text: str, words: str
) -> None:
    repo = make_repo(tmp_path / "r")
    (repo / "evotree.toml").write_text(text)
    err = _error(Cli(repo), "config", "check", code=6)
    assert err["code"] == "config_error" and words in err["message"]


def test_a_run_json_that_is_a_list_is_skipped_by_runs(rrepo: Path) -> None:
    cli = Cli(rrepo)
    cli("run", "v0")
    bad = rrepo / ".evotree" / "runs" / "v0-s9-bad"
    bad.mkdir()
    (bad / "run.json").write_text("[1, 2]\n")
    listed = cli.json("runs")["runs"]
    assert [r["version"] for r in listed] == ["v0"]


@pytest.mark.heavy
def test_a_run_json_that_is_a_list_does_not_break_gates(rrepo: Path) -> None:
    cli = Cli(rrepo)
    cli("run", "v0")
    v1 = _branch(rrepo, "skill = 0.7\nsteps = 3\n")
    cli("run", v1)
    bad = rrepo / ".evotree" / "runs" / "v1-s9-bad"
    bad.mkdir()
    (bad / "run.json").write_text("[1, 2]\n")
    assert "gates" in cli.json("gates", v1)


def test_a_corrupt_parquet_beside_valid_runs_is_named_not_a_traceback(rrepo: Path) -> None:
    cli = Cli(rrepo)
    cli("run", "v0")
    v1 = _branch(rrepo, "skill = 0.7\nsteps = 3\n")
    cli("run", v1)
    (run_dir,) = (rrepo / ".evotree" / "runs").glob(f"{v1}-*")
    good = (run_dir / "evals.parquet").read_bytes()
    (run_dir / "evals.parquet").write_bytes(
        good[:4] + b"\0" * 200 + good[-8:]
    )  # magic kept, body garbage
    err = _error(cli, "compare", "v0", v1, code=22)
    assert "tampered" in err["message"] and run_dir.name in err["message"]
    gates = cli.json("gates", v1)
    score = next(g for g in gates["gates"] if g["name"] == "score")
    assert score["status"] != "pass"


def test_exit_1_is_left_to_bugs(rrepo: Path) -> None:
    cli = Cli(rrepo)
    assert _error(cli, "schema", "nope", code=2)["code"] == "usage_error"
    cli("run", "v0")
    for bad in ("nokey", "nodot=1", "=1", ".warn=1", "signal.="):
        err = _error(cli, "backtest", "v0", "--threshold", bad, code=2)
        assert err["code"] == "usage_error" and "ANALYZER.KEY=VALUE" in err["message"]


def test_seeds_beyond_32_bits_are_refused_before_anything_starts(rrepo: Path) -> None:
    cli = Cli(rrepo)
    out = cli("run", "v0", "--seed-start", str(2**70), code=2)
    assert "--seed-start" in out.output
    _error(cli, "run", "v0", "--seed-start", str(2**31 - 1), "--seeds", "2", code=2)
    cli("ingest", str(rrepo / "x.json"), "--version", "v0", "--seed", str(2**40), code=2)
    assert not list((rrepo / ".evotree" / "runs").glob("v0-*"))


def test_a_worktree_inside_dot_git_is_refused(rrepo: Path) -> None:
    cli = Cli(rrepo)
    for where in (".git/x", str(rrepo / ".git" / "worktrees" / "y"), str(rrepo)):
        err = _error(cli, "branch", "-m", "x", "--worktree", where, code=2)
        assert err["code"] == "usage_error"
    assert git(rrepo, "branch", "--list", "evotree/*").split() == ["evotree/v0"]
    assert not (rrepo / ".git" / "x").exists()


@pytest.mark.parametrize(
    "state",
    [{"log_history": [{"a": "b"}, 3]}, {"log_history": []}, {"log_history": "nonsense"}, [1, 2]],
)
def test_ingest_of_a_nonsense_history_fails(rrepo: Path, tmp_path: Path, state: Any) -> None:
    path = tmp_path / "trainer_state.json"
    path.write_text(json.dumps(state))
    err = _error(Cli(rrepo), "ingest", str(path), "--version", "v0", code=18)
    assert err["code"] == "ingest_error"
    assert not list((rrepo / ".evotree" / "runs").glob("v0-ingested-*"))


# ---------------------------------------------------------------------------- item 2: an empty repository
def test_init_in_a_repository_without_commits_makes_the_first_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", commit=False)  # recipe.toml and train.py exist, uncommitted
    cli = Cli(repo)
    text = cli("init").stdout
    assert "next: evotree run v0 --seeds 3" in text
    out = cli.json("show", "v0")
    head = git(repo, "rev-parse", "HEAD")
    assert out["version"]["base_commit"] == head
    assert git(repo, "rev-list", "--count", "HEAD") == "1"
    assert git(repo, "ls-tree", "--name-only", "HEAD").split() == ["evotree.toml"]
    assert "train.py" in git(repo, "status", "--porcelain")  # the user's own files stay theirs


def test_init_with_a_domain_in_an_empty_repository(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "A")
    git(repo, "config", "user.email", "a@example.com")
    data = Cli(repo).json("init", "--domain", "gym")
    validate(data, "init")
    assert data["config_committed"] and data["judge_commit"]
    assert "the repository had no commits" in " ".join(data["notes"])
    tracked = git(repo, "ls-tree", "-r", "--name-only", "HEAD").split()
    assert "evotree.toml" in tracked and not [p for p in tracked if p.startswith("judge/")]


# ---------------------------------------------------------------------------- item 5: a broken policy
BROKEN_TRAIN = """\
import sys
print("loading the policy", flush=True)
print("Traceback (most recent call last):", file=sys.stderr)
print("ZeroDivisionError: the policy divides by zero on purpose", file=sys.stderr)
sys.exit(65)
"""


def test_an_invalid_run_exits_37_and_its_note_shows_the_real_error(rrepo: Path) -> None:
    cli = Cli(rrepo)
    v1 = _branch(rrepo, "skill = 0.7\n", train=BROKEN_TRAIN)
    result = cli("run", v1, code=37)
    assert (
        "the policy divides by zero on purpose" in result.stdout
    )  # in the table, not only in a file
    (run,) = cli.json("run", v1, "--seed-start", "1", code=37)["runs"]
    validate(run, "run")
    assert run["status"] == "invalid"
    assert any(n.startswith("train.err ends:") and "divides by zero" in n for n in run["notes"]), (
        run["notes"]
    )
    logs = cli.json("logs", run["run_id"])
    validate(logs, "logs")
    err = next(log for log in logs["logs"] if log["phase"] == "train" and log["stream"] == "err")
    assert err["lines"][-1] == "ZeroDivisionError: the policy divides by zero on purpose"
    out = next(log for log in logs["logs"] if log["stream"] == "out")
    assert out["lines"] == ["loading the policy"]
    only = cli.json(
        "logs", run["run_id"][:-3], "--phase", "train", "--tail", "1"
    )  # a unique prefix
    assert [log["lines"] for log in only["logs"] if log["stream"] == "err"] == [[err["lines"][-1]]]
    assert "divides by zero" in cli("logs", run["run_id"]).stdout
    assert _error(cli, "logs", "nope", code=38)["code"] == "unknown_run"
    assert _error(cli, "logs", f"{v1}-s", code=38)["code"] == "unknown_run"  # two runs: ambiguous
    assert _error(cli, "logs", "../etc", code=38)["code"] == "unknown_run"


def test_a_successful_run_exits_0(rrepo: Path) -> None:
    (run,) = Cli(rrepo).json("run", "v0")["runs"]
    assert run["status"] == "succeeded" and not [n for n in run["notes"] if " ends: " in n]


# ---------------------------------------------------------------------------- item 6: read-like commands
@pytest.mark.heavy
def test_gates_and_report_append_no_ledger_event(rrepo: Path) -> None:
    cli = Cli(rrepo)
    cli("run", "v0")
    v1 = _branch(rrepo, "skill = 0.7\nsteps = 3\n")
    cli("run", v1)
    before = ledger_commits(rrepo)
    memory = git(rrepo, "rev-parse", "-q", "--verify", "refs/evotree/memory", check=False)
    cli.json("gates", v1)
    cli("report", v1, "--format", "md")
    assert ledger_commits(rrepo) == before
    assert git(rrepo, "rev-parse", "-q", "--verify", "refs/evotree/memory", check=False) == memory


# ---------------------------------------------------------------------------- item 7: budgets that cut runs short
@pytest.mark.heavy
def test_a_budget_split_over_seeds_is_said_before_and_noted_after(tmp_path: Path) -> None:
    repo = make_run_repo(
        tmp_path / "w",
        budget="max_steps = 12",
        recipe="skill = 0.5\nsteps = 3\nobey_budget = true\n",
    )
    cli = Cli(repo)
    (first,) = cli.json("run", "v0")["runs"]
    assert first["usage"]["steps"] == 3 and not first["notes"]  # the whole budget: nothing to say
    v1 = _branch(repo, "skill = 0.6\nsteps = 8\nobey_budget = true\n")
    result = cli("run", v1, "--seeds", "3")  # 12 steps over 3 runs: 4 each, the recipe wants 8
    assert re.search(rf"budget: each run of {v1} may use at most 4 steps", result.stderr), (
        result.stderr
    )
    runs = cli.json("runs", "--version", v1)["runs"]
    assert len(runs) == 3
    for run in runs:
        assert run["limits"]["max_steps"] == 4
        assert any(n.startswith("budget-limited: it used all 4 steps") for n in run["notes"]), run[
            "notes"
        ]
    assert "budget-limited" in cli("runs", "--version", v1).stdout
    err = _error(cli, "run", v1, code=16)  # nothing left: refused before it starts
    assert err["code"] == "budget_exceeded"


# ---------------------------------------------------------------------------- item 8: papercuts
def test_papercuts(rrepo: Path) -> None:
    cli = Cli(rrepo)
    assert "1 version · 0 kept as negative evidence" in cli("tree").stdout
    short = cli("--help").stdout
    assert (
        "evotree help exit-codes" in short
        and "36  sandbox" not in short
        and len(short.splitlines()) < 70
    )
    codes = cli("help", "exit-codes").stdout
    assert (
        "  2  usage error" in codes
        and "130  cancelled" in codes
        and "37  a run did not succeed" in codes
    )
    assert cli.json("help", "exit-codes")["exit_codes"]["38"].startswith("unknown run id")
    validate(cli.json("help", "exit-codes"), "exit-codes")
    assert "tree [OPTIONS]" in cli("help", "tree").stdout
    assert _error(cli, "help", "nope", code=2)["code"] == "usage_error"
    # one naming for schemas; the old names still load
    listing = cli.json("schema")
    assert not [n for n in listing["current"] if "_" in n] and "memory-entry" in listing["current"]
    assert listing["aliases"]["memory_entry"] == "memory-entry"
    assert cli.json("schema", "memory_entry") == cli.json("schema", "memory-entry")
    # gates --bootstrap, like compare; --B kept, hidden
    help_text = cli("gates", "--help").stdout
    assert "--bootstrap" in help_text and "--B" not in help_text
    # verify prints what it checked, not a dict
    text = cli("verify").stdout
    assert "checked:" in text and "{" not in text


def test_the_run_table_is_not_split_without_a_terminal(rrepo: Path) -> None:
    cli = Cli(rrepo)
    cli("run", "v0", "--seeds", "2")
    lines = cli("runs").stdout.splitlines()
    assert len(lines) == 3, lines  # header + one line per run, whatever the width of the ids
    assert lines[0].split() == ["run", "status", "headline", "wall", "steps", "note"]


def test_run_without_a_version_inside_a_worktree_runs_that_version(rrepo: Path) -> None:
    v1 = _branch(rrepo, "skill = 0.7\nsteps = 3\n")
    inside = Cli(rrepo / ".evotree" / "worktrees" / v1)
    (run,) = inside.json("run")["runs"]
    assert run["version"] == v1 and run["status"] == "succeeded"
    err = _error(Cli(rrepo), "run", code=2)  # in the main checkout: which version?
    assert err["code"] == "usage_error"


def test_status_says_what_runs_and_what_waits_for_whom(rrepo: Path) -> None:
    cli = Cli(rrepo)
    status = cli.json("status")
    validate(status, "status")
    (v0,) = status["versions"]
    assert v0["state"] == "champion without a score" and v0["waits_for"] == "agent"
    cli("run", "v0")
    v1 = _branch(rrepo, "skill = 0.7\nsteps = 3\n")
    v2 = _branch(rrepo, "skill = 0.2\nsteps = 3\n")
    cli("run", v1)
    (rrepo / ".evotree" / "worktrees" / v2 / "wip.txt").write_text("w")
    status = Cli(rrepo / ".evotree" / "worktrees" / v1).json("status")
    rows = {r["id"]: r for r in status["versions"]}
    assert status["here"] == v1 and not status["running"] and status["reserved"] == 0
    assert rows["v0"]["waits_for"] == "nothing"
    assert rows[v1]["waits_for"] == "person" and f"evotree promote {v1}" in rows[v1]["next"]
    assert rows[v2]["state"] == "uncommitted changes" and rows[v2]["uncommitted"] == 1
    assert [line.split(":")[0] for line in status["for_a_person"]] == [v1]
    commit_file(
        rrepo / ".evotree" / "worktrees" / v1, "recipe.toml", "skill = 0.8\nsteps = 3\n", "again"
    )
    rows = {r["id"]: r for r in cli.json("status")["versions"]}
    assert rows[v1]["state"] == "changed since its scored runs" and rows[v1]["waits_for"] == "agent"
    assert "waits for" in cli("status").stdout


# ---------------------------------------------------------------------------- evotree diff
def test_diff_lists_parameters_files_and_scores(rrepo: Path) -> None:
    cli = Cli(rrepo)
    out = cli.json("branch", "-m", "h")
    worktree = rrepo / out["worktree"]
    (worktree / "recipe.toml").write_text("skill = 0.7\nsteps = 3\n[opt]\nlr = 2e-5\n")
    (worktree / "params.json").write_text(json.dumps({"model": {"layers": 4, "act": "gelu|x"}}))
    (worktree / "train.py").unlink()
    git(worktree, "add", "-A")
    git(worktree, "commit", "-qm", "change")
    data = cli.json("diff", "v0", out["id"])
    validate(data, "diff")
    params = {(p["path"], p["param"]): (p["a"], p["b"]) for p in data["params"]}
    assert params[("recipe.toml", "skill")] == (0.5, 0.7)
    assert params[("recipe.toml", "opt.lr")] == (None, 2e-5)
    assert params[("params.json", "model.layers")] == (None, 4)
    assert ("recipe.toml", "steps") not in params  # unchanged
    files = {f["path"]: f["status"] for f in data["files"]}
    assert files == {"params.json": "added", "recipe.toml": "modified", "train.py": "removed"}
    md = cli("diff", "v0", out["id"], "--md").stdout
    assert "| Path | Param | v0 | v1 |" in md and "| recipe.toml | skill | 0.5 | 0.7 |" in md
    assert "gelu\\|x" in md  # a pipe in a value cannot break the table
    assert "| train.py | removed |" in md
    assert "skill" in cli("diff", "v0", out["id"]).stdout
    same = cli.json("diff", "v0", "v0")
    assert same["params"] == [] and same["files"] == []
    assert _error(cli, "diff", "v0", "v9", code=5)["code"] == "unknown_version"


# ---------------------------------------------------------------------------- item 1: evidence that travels
@pytest.mark.heavy
def test_a_fresh_clone_compares_after_pull_and_git_clean_loses_nothing(tmp_path: Path) -> None:
    repo = make_run_repo(tmp_path / "w")
    cli = Cli(repo)
    cli("run", "v0")
    v1 = _branch(repo, "skill = 0.8\nsteps = 3\n")
    cli("run", v1)
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/evotree/runs/").split()
    assert len(refs) == 2  # `evotree run` archived both runs
    remote = bare_remote(repo, tmp_path / "remote.git", how="all")
    pushed = cli.json("push")
    validate(pushed, "share")
    assert pushed["refs"] == 2 and pushed["archived"] == []  # archived already, by `run`
    expected = cli.json("compare", "v0", v1)

    clone = clone_as(remote, tmp_path / "clone", "Bo", "bo@example.com", fetch_evotree=True)
    other = Cli(clone)
    assert _error(other, "compare", "v0", v1, code=22)["code"] == "no_scores"
    pulled = other.json("pull")
    validate(pulled, "share")
    assert len(pulled["restored"]) == 2
    # the clone has the evidence, but did not record it: foreign there, listed and not counted
    # (a teammate's runs count only when signed by a runner key the champion lists,
    # tests/test_share_clone.py); the machine that ran them compares as before
    assert "foreign" in _error(other, "compare", "v0", v1, code=22)["message"]
    assert other.json("pull")["restored"] == []  # nothing missing: nothing written

    git(repo, "clean", "-xdfq", "--", ".evotree/runs")
    assert not list((repo / ".evotree" / "runs").glob("*/run.json"))
    assert len(cli.json("pull", "--local")["restored"]) == 2
    assert cli.json("compare", "v0", v1)["delta"] == expected["delta"]
    # evidence edited after the fact is not taken: the ledger's manifest decides
    (run_dir,) = (repo / ".evotree" / "runs").glob(f"{v1}-*")
    (run_dir / "evals.parquet").write_bytes(b"PAR1" + b"\0" * 64 + b"PAR1")
    assert "tampered" in _error(cli, "compare", "v0", v1, code=22)["message"]
    assert _error(other, "push", "nowhere", code=39)["code"] == "share_error"


def test_archiving_is_content_addressed_and_never_moves_a_ref(rrepo: Path) -> None:
    from evotree.harness.share import archive_runs, run_ref

    cli = Cli(rrepo)
    (run,) = cli.json("run", "v0")["runs"]
    ws = Workspace.open(rrepo)
    ref = run_ref(run["run_id"])
    first = git(rrepo, "rev-parse", ref)
    git(rrepo, "update-ref", "-d", ref)
    assert archive_runs(ws).archived == [run["run_id"]]
    assert git(rrepo, "rev-parse", ref) == first  # the same evidence, the same commit
    assert "run.json" in git(rrepo, "ls-tree", "--name-only", ref).split()
    assert "candidate" not in git(rrepo, "ls-tree", "--name-only", ref).split()
    (rrepo / ".evotree" / "runs" / run["run_id"] / "logs" / "train.out").write_text("changed\n")
    result = archive_runs(ws)
    assert result.skipped == [
        {"run_id": run["run_id"], "reason": "its ref holds other evidence: left unchanged"}
    ]
    assert git(rrepo, "rev-parse", ref) == first


@pytest.mark.heavy
def test_a_large_run_goes_to_a_store_and_comes_back_checked(tmp_path: Path) -> None:
    from evotree.harness.share import POINTER, archive_runs, pull_evidence, run_ref

    repo = make_run_repo(tmp_path / "w")
    (run,) = Cli(repo).json("run", "v0")["runs"]
    ref = run_ref(run["run_id"])
    git(repo, "update-ref", "-d", ref)  # `run` archived it in git: start again, as if it were large
    ws = Workspace.open(repo)
    store = tmp_path / "store"
    assert archive_runs(ws, max_bytes=1).skipped[0]["reason"].endswith("(evotree push --store URI)")
    assert archive_runs(ws, store=str(store), max_bytes=1).archived == [run["run_id"]]
    assert git(repo, "ls-tree", "--name-only", ref).split() == [POINTER]
    stored = store / "evotree-archive" / run["run_id"]
    assert (stored / "run.json").is_file() and (stored / "evals.parquet").is_file()

    run_dir = repo / ".evotree" / "runs" / run["run_id"]
    original = (run_dir / "evals.parquet").read_bytes()
    import shutil

    shutil.rmtree(repo / ".evotree" / "runs")
    assert (
        pull_evidence(ws, fetch=False).restored == []
    )  # no store named here: the pointer's is never used
    assert pull_evidence(ws, fetch=False, store=str(store)).restored == [run["run_id"]]
    assert (run_dir / "evals.parquet").read_bytes() == original
    assert Cli(repo).json("compare", "v0", "v0")["evidence"]["a"]["ok"] == [
        run["run_id"]
    ]  # the manifest agrees

    shutil.rmtree(repo / ".evotree" / "runs")
    (stored / "evals.parquet").write_bytes(b"changed in the store")
    result = pull_evidence(ws, fetch=False, store=str(store))
    assert result.restored == [] and "sha256 differs" in result.skipped[0]["reason"]
    assert not run_dir.exists()  # nothing half-written
