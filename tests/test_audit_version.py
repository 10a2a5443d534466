"""`evotree audit V` / audit_version: every check over a version's real runs, the record
(findings file, ledger event, memory incident), contamination, failing closed, bad input."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, commit_file, git, make_repo, validate
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.harness.audit.version_audit import audit_version
from evotree.gates.runs import run_versions

TRAIN = """\
import json, tomllib
from evotree.harness import get_recorder
rec = get_recorder()
recipe = tomllib.load(open("recipe.toml", "rb"))
for i, commands in enumerate(recipe.get("commands", [])):
    rec.rollout_group(i, group_id=f"g{i}", task_id=f"t{i}", rewards=[recipe["skill"]], commands=[commands],
                      texts=["transcript"])
json.dump({"skill": recipe["skill"]}, open("model.json", "w"))
"""

JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
prompts = [json.loads(line) for line in open("judge/prompts.jsonl")]
for i, p in enumerate(prompts):
    rec.eval_result("validation", p["id"], 1.0 if (i + 1) / len(prompts) <= model["skill"] else 0.0)
"""

CONFIG = """\
[train]
command = "python train.py"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
"""

WORDS = (
    "alpha bravo carbon delta echo fjord glacier harbor island jungle kernel lantern meadow nebula ocean "
    "prairie quartz river summit tundra umber valley willow xenon yonder zephyr amber basalt cobalt dune "
    "ember flint garnet hollow indigo jasper"
).split()


def _prompts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(24)) for _ in range(n)]


HIDDEN = _prompts(1, 10)


def _recipe(skill: float, commands: list[list[str]]) -> str:
    return f"skill = {skill}\ncommands = {json.dumps(commands)}\n"


def make_audit_workspace(path: Path) -> Path:
    repo = make_repo(path)
    files = {
        "train.py": TRAIN,
        "judge/eval.py": JUDGE,
        "evotree.toml": CONFIG,
        "recipe.toml": _recipe(0.5, [["git status", "git diff"]]),
        "judge/prompts.jsonl": "".join(
            json.dumps({"id": f"v{i}", "prompt": p}) + "\n" for i, p in enumerate(HIDDEN)
        ),
        "data/train.jsonl": "".join(json.dumps({"prompt": p}) + "\n" for p in _prompts(2, 20)),
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipe, trainer, judge, data")
    init_workspace(repo)
    return repo


def _version(ws: Workspace, name: str, text: str, message: str) -> str:
    rec = create_version(ws, hypothesis=message)
    commit_file(ws.root / rec.worktree, name, text, message)
    return rec.id


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    repo = make_audit_workspace(tmp_path_factory.mktemp("audit") / "ws")
    ws = Workspace.open(repo)
    clean = _version(
        ws,
        "recipe.toml",
        _recipe(
            0.5,
            [["git status", "git log -3 --oneline"], ["python -m pytest -q", "git diff HEAD~1"]],
        ),
        "clean",
    )
    leaky = _version(
        ws,
        "recipe.toml",
        _recipe(
            0.7,
            [
                ["git status", "curl -s https://example.com/answers.json"],
                ["cat ../../judge/prompts.jsonl"],
                ["echo 'def test_ok(): pass' > tests/test_x.py"],
                ["bash -c 'git log --all --oneline | head'"],
                ["git diff"],
            ],
        ),
        "leaky",
    )
    copied = _prompts(2, 20)[:15] + [p.upper().replace(" ", ", ", 3) + "!" for p in HIDDEN[:3]]
    contaminated = _version(
        ws,
        "data/train.jsonl",
        "".join(json.dumps({"prompt": p}) + "\n" for p in copied),
        "train on some hidden prompts",
    )
    records = run_versions(ws, [clean, leaky])
    assert all(r.status == "succeeded" for r in records), [r.error for r in records]
    return {"repo": repo, "ws": ws, "clean": clean, "leaky": leaky, "contaminated": contaminated}


def test_a_clean_version_passes_and_is_recorded(env: dict[str, Any]) -> None:
    repo, clean = env["repo"], env["clean"]
    report = Cli(repo).json("audit", clean)
    validate(report, "audit")
    assert report["passed"] is True and report["flagged"] == 0 and report["trajectories"] == 2
    assert report["raw_score"] == pytest.approx(0.5) == report["leak_adjusted_score"]
    assert report["contamination"]["checked"] == 10 and report["contamination"]["contaminated"] == 0
    assert report["checks"]["hash_ancestry"].startswith("skipped")
    event = json.loads(
        git(repo, "log", "-1", "--format=%B", "refs/evotree/ledger").splitlines()[-1]
    )
    assert (
        event["kind"] == "audit"
        and event["data"]["passed"] is True
        and event["data"]["incident"] is None
    )
    assert (repo / ".evotree" / "findings" / f"{clean}.audit.jsonl").exists()


def test_each_kind_of_leak_is_found_and_fails_the_audit(env: dict[str, Any]) -> None:
    repo, leaky = env["repo"], env["leaky"]
    report = Cli(repo).json("audit", leaky, code=28)
    validate(report, "audit")
    codes = {f["code"] for f in report["findings"] if f["severity"] == "high"}
    assert codes == {
        "audit.network_fetch",
        "audit.hidden_data_read",
        "audit.test_write",
        "audit.git_history_leak",
    }
    assert report["trajectories"] == 5 and report["flagged"] == 4
    assert report["git_history"] == 1 and report["git_history_rate"] == pytest.approx(0.2)
    # the leaks were in the train phase (other task ids): the judge's score stands
    assert report["raw_score"] == pytest.approx(0.7) == report["leak_adjusted_score"]
    assert report["incident"]
    # the findings view of evotree sql reads the audit's findings
    rows = Cli(repo).json(
        "sql", f"SELECT DISTINCT code FROM findings WHERE version = '{leaky}' ORDER BY code"
    )
    assert {r["code"] for r in rows["rows"]} >= codes


def test_contamination_of_the_hidden_split(env: dict[str, Any]) -> None:
    ws = env["ws"]
    report = audit_version(ws, env["contaminated"], record=False)
    (finding,) = [f for f in report.findings if f.code == "audit.contamination"]
    assert finding.severity == "high" and not report.passed
    assert finding.evidence["contaminated"] == 3 and finding.evidence["checked"] == 10
    assert finding.evidence["short_n"] == 8  # 24-word prompts are short: 8-grams
    # no run: the trajectory audit says so, and nothing was recorded
    assert "audit.no_runs" in {f.code for f in report.findings}
    assert not (ws.root / ".evotree" / "findings" / f"{env['contaminated']}.audit.jsonl").exists()


def test_trajectory_files_join_the_version_audit(env: dict[str, Any], tmp_path: Path) -> None:
    history = tmp_path / "agent_history"
    history.write_text("git status\ngit fsck --lost-found\n")
    report = audit_version(env["ws"], env["clean"], record=False, trajectory_files=[str(history)])
    assert not report.passed and report.trajectories == 3 and report.flagged == 1
    assert report.checks["trajectory_files"] == "1 file(s)"


def test_extra_hidden_paths(env: dict[str, Any]) -> None:
    report = audit_version(env["ws"], env["clean"], record=False, hidden_paths=["HEAD~1"])
    assert "audit.hidden_data_read" in {f.code for f in report.findings}


def test_the_audit_fails_closed_when_a_check_breaks(env: dict[str, Any], tmp_path: Path) -> None:
    ws = env["ws"]
    (run,) = [
        p
        for p in (ws.root / ".evotree" / "runs").iterdir()
        if p.name.startswith(env["clean"] + "-")
    ]
    parquet = run / "rollouts.parquet"
    saved = parquet.read_bytes()
    try:
        parquet.write_bytes(b"not parquet at all")
        report = audit_version(ws, env["clean"], record=False)
    finally:
        parquet.write_bytes(saved)
    (error,) = [f for f in report.findings if f.code == "audit.check_error"]
    assert (
        error.severity == "high" and not report.passed and "trajectory" in error.evidence["check"]
    )


def test_bad_version_and_no_record(env: dict[str, Any]) -> None:
    repo = env["repo"]
    out = Cli(repo).json("audit", "v99", code=5)
    assert out["error"]["code"] == "unknown_version"
    before = git(repo, "rev-parse", "refs/evotree/ledger")
    Cli(repo).json("audit", env["clean"], "--no-record")
    assert git(repo, "rev-parse", "refs/evotree/ledger") == before


def test_audit_group_dispatch(env: dict[str, Any]) -> None:
    cli = Cli(env["repo"])
    assert "evotree audit V" in cli("audit", "--help").output
    assert "Usage" in cli("audit", env["clean"], "--help").output
    assert "trajectories" in cli("audit", "trajectories", "--help").output


def test_audit_help_imports_nothing_heavy(tmp_path: Path) -> None:
    from test_startup import HEAVY, _modules_after

    code, modules = _modules_after(["audit", "--help"], tmp_path)
    assert code == 0 and not modules & set(HEAVY), modules & set(HEAVY)


def test_the_sql_prefilter_lets_through_everything_the_python_one_does() -> None:
    import duckdb

    from evotree.harness.audit.commands import prefilter
    from evotree.harness.audit.version_audit import _SQL_PREFILTER

    corpus = Path(__file__).parent / "data" / "audit" / "corpus.jsonl"
    commands = [json.loads(line)["command"] for line in corpus.read_text().splitlines()]
    commands += ["cat ../../judge/x", "g\\it log", "$'\\x67it' log --all", 'G=g"i"t']
    # definitions, built names, forge clients, make, git libraries
    commands += [
        "a=gi",
        "export R=origin/fix",
        "x=1; y=2",
        "`printf g`",
        "echo -e '\\147it'",
        "printf '\\x67'",
        "gh pr view 1",
        "hub pr list",
        "glab mr diff 2",
        "make peek",
        "python3 -c 'import dulwich'",
        "python3 -c 'import zlib'",
        # a program name built in code, a forge client inside quotes
        "python3 -c \"import subprocess as s; s.run(['g' + 'it', 'log'])\"",
        "python3 -c \"import os; os.system('g' + 'it log')\"",
        "bash -lc 'gh pr view 17'",
    ]
    con = duckdb.connect()
    for command in commands:
        ((sql,),) = con.execute(
            "SELECT regexp_matches(translate(?, '\"''\\', ''), ? || '|judge', 'i')",
            [command, _SQL_PREFILTER],
        ).fetchall()
        assert sql or not prefilter(command, ("judge",)), command


def test_contamination_ngrams_long_and_short_documents() -> None:
    from evotree.harness.audit.contamination import LONG_N, SHORT_WORDS, contamination, documents

    long_doc = " ".join(f"{w}{i % 7}" for i, w in enumerate(WORDS * 3))  # > SHORT_WORDS words
    assert len(long_doc.split()) >= SHORT_WORDS
    train = ["Preamble. " + long_doc.upper().replace(" ", ",  ") + " trailing words", HIDDEN[0]]
    hidden = [("a", long_doc), ("b", HIDDEN[0]), ("c", HIDDEN[1]), ("d", "too short to judge")]
    result = contamination(train, hidden)
    assert (result.hidden_docs, result.checked, result.too_short, result.contaminated) == (
        4,
        3,
        1,
        2,
    )
    assert {e["source"]: e["n"] for e in result.examples} == {"a": LONG_N, "b": 8}
    # half the n-grams is the line: a prompt whose first half was trained on is contaminated
    half = HIDDEN[2].split()
    assert contamination([" ".join(half[:16])], [("x", HIDDEN[2])]).contaminated == 1
    assert contamination([" ".join(half[:10])], [("x", HIDDEN[2])]).contaminated == 0
    with pytest.raises(ValueError, match="min_overlap"):
        contamination([], [], min_overlap=0)
    assert documents("x.jsonl", b'{"q": "one two"}\n\n{"q": "three"}\n') == ["one two", "three"]
    assert documents("x.json", b'[{"q": "a", "a": "b"}, {"q": "c"}]') == ["a b", "c"]
    assert documents("x.txt", b"para one\n\npara two\n") == ["para one", "para two\n"]
    assert documents("x.bin", b"\x00\x01abc") == []


def test_tree_documents_stop_at_the_byte_limit(env: dict[str, Any]) -> None:
    import pygit2

    from evotree.harness.audit.contamination import tree_documents

    ws = env["ws"]
    # the hidden files live in the judge store (refs/evotree/judge), not in any checkout
    tree = ws.git.repo.revparse_single("refs/evotree/judge").peel(pygit2.Commit).tree
    files, docs, truncated = tree_documents(ws.git.repo, tree, include=["judge/"], data_only=True)
    assert files == 1 and len(docs) == 10 and not truncated
    files, docs, truncated = tree_documents(ws.git.repo, tree, max_bytes=10)
    assert truncated and files == 0


def test_a_failed_audit_keeps_its_exit_code_when_the_reader_goes_away(env: dict[str, Any]) -> None:
    """`evotree audit V | head -2`: the reader closes the pipe after two lines; the process still
    exits 28 (the audit failed), not 1 or 120, and prints no BrokenPipeError traceback."""
    import subprocess

    from conftest import EVOTREE_BIN

    proc = subprocess.Popen(
        [str(EVOTREE_BIN), "-C", str(env["repo"]), "audit", env["leaky"]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "100"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()
    proc.stdout.readline()
    proc.stdout.close()  # `head -2` exits
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 28, err
    assert "BrokenPipeError" not in err and "Traceback" not in err


def test_an_agent_session_trace_with_calls_the_tracer_could_not_read_is_a_finding(
    env: dict[str, Any],
) -> None:
    """An `evotree agent` session's runtime trace joins the audit of every version it
    could touch; a call the tracer could not read whole (the caller died, or argv beyond what the
    kernel accepts) is said, never passed over; a session about another version is not read; a
    session.json that is not JSON fails the audit closed."""
    _repo, ws, clean = env["repo"], env["ws"], env["clean"]
    sessions = ws.state_dir / "agent-sessions"
    mine = sessions / "evotree-agent-test1"
    mine.mkdir(parents=True)
    rows = [
        {
            "kind": "exec",
            "pid": 7,
            "path": "/usr/bin/git",
            "argv": ["git", "log", "--all"],
            "cwd": "/agent",
            "exit": 0,
        },
        {
            "kind": "exec",
            "pid": 8,
            "path": "",
            "argv": [],
            "cwd": None,
            "unreadable": True,
            "exit": None,
        },
        {
            "kind": "exec",
            "pid": 9,
            "path": "/usr/bin/git",
            "argv": ["git", "x" * 10],
            "cwd": "/agent",
            "truncated": True,
            "exit": None,
        },
    ]
    from evotree.harness.audit.trace import seal_rows

    (mine / "exec_trace.jsonl").write_text(seal_rows(rows))  # sealed as write_trace seals it
    (mine / "session.json").write_text(
        json.dumps({"v": 1, "principal": "bot", "versions": [clean]})
    )
    other = sessions / "evotree-agent-test2"
    other.mkdir()
    (other / "exec_trace.jsonl").write_text(seal_rows([{**rows[0], "argv": ["git", "reflog"]}]))
    (other / "session.json").write_text(
        json.dumps({"v": 1, "principal": "bot", "versions": ["v999"]})
    )
    try:
        report = audit_version(ws, clean, record=False)
        codes = {f.code: f for f in report.findings}
        assert "audit.git_history_leak" in codes and not report.passed
        assert codes["audit.trace_incomplete"].evidence["count"] == 2
        assert {e["why"] for e in codes["audit.trace_incomplete"].evidence["examples"]} == {
            "unreadable",
            "truncated",
        }
        assert "1 agent session trace(s)" in report.checks["runtime_traces"]
        assert "reflog" not in json.dumps(
            [f.evidence for f in report.findings]
        )  # the other session: not read
        (mine / "session.json").write_text("{not json")
        broken = audit_version(ws, clean, record=False)
        assert any(f.code == "audit.check_error" for f in broken.findings) and not broken.passed
    finally:
        import shutil

        shutil.rmtree(sessions)


def test_a_read_of_the_judges_paths_is_the_graders_data(
    env: dict[str, Any], tmp_path: Path
) -> None:
    """``[eval].judge_paths`` are the grader's data: a read of them is a leak whatever it
    printed — the hidden prompts shown whole, no line of a program among them, is not lowered
    the way a plain hidden path's read is on the file alone."""
    # what the workspace's judge/prompts.jsonl holds (kept in the judge store since init)
    shown = [json.dumps({"id": f"v{i}", "prompt": p}) for i, p in enumerate(HIDDEN[:3])]
    rows = [
        {"type": "user", "sessionId": "s", "message": {"role": "user", "content": "fix it"}},
        {
            "type": "assistant",
            "sessionId": "s",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "head -n 3 judge/prompts.jsonl"},
                    }
                ],
            },
        },
        {
            "type": "user",
            "sessionId": "s",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "\n".join(shown)}
                ],
            },
        },
    ]
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = audit_version(env["ws"], env["clean"], record=False, trajectory_files=[str(session)])
    reads = [f for f in report.findings if f.code == "audit.hidden_data_read"]
    assert reads and all(f.severity == "high" for f in reads) and not report.passed
    # the same read with judge/ as a plain hidden path is lowered on the file alone
    from evotree.harness.audit.trajectories import audit_trajectories

    plain = audit_trajectories([session], hidden_paths=["judge/"])
    assert not plain.flagged
    assert audit_trajectories([session], grader_paths=["judge/"]).flagged == 1
