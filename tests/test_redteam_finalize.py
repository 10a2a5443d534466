"""Red team of EvoPolicyGym's visibility boundary (evotree/core/visibility.py): an agent, before
`evotree finalize`, tries every output it can reach to learn a validation or held-out figure (or
an order that gives one away); each test is one attack and asserts it learns nothing. After
finalize the figures are shown, and finalize is nothing an agent can call through the server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import EVOTREE_BIN, Cli
from test_gym_finalize import hidden_gym_workspace, searched

from evotree.core.visibility import hidden_finding, redact

#: What the judge printed for the two versions (CartPole: the good policy balances 500 steps, the
#: bad one falls after ~9.7): their validation returns and scores.
GOOD_RETURN, BAD_RETURN = "500.0", "9.667"


def _shows(number: str, text: str) -> bool:
    """Whether ``text`` holds ``number`` where a number starts (more digits may follow: 9.6666…),
    not inside a longer one such as a timestamp's ``08:59:29.667545``, which once failed this file
    by chance."""
    return re.search(r"(?<![\d.])" + re.escape(number), text) is not None


def _judge_codes(data: Any) -> list[str]:
    """Finding codes in ``data`` that only report the judge's figures."""
    found: list[str] = []
    if isinstance(data, dict):
        if hidden_finding(data.get("code")):
            found.append(data["code"])
        for value in data.values():
            found += _judge_codes(value)
    elif isinstance(data, list):
        for value in data:
            found += _judge_codes(value)
    return found


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ws = hidden_gym_workspace(tmp_path_factory.mktemp("redteam") / "w")
    ids = searched(ws)
    return ws, ids, Cli(ws.root)


# ---------------------------------------------------------------------------- redaction itself
def test_redact_catches_number_formats_and_key_spellings() -> None:
    for text in (
        "validation/mean=3.1e-1",
        "Validation/Mean_Score: .31",
        "heldout/x = -1E+2",
        "HELDOUT/s=nan",
        "judge said validation/CartPole-v1/mean_return=500.0 ok",
    ):
        out = redact(text)
        assert "<hidden>" in out and not any(
            n in out for n in ("3.1e-1", ".31", "1E+2", "nan", "500.0")
        ), text
    data = {
        "Validation_Mean": 0.3,
        "HELDOUT/score": [0.1, 0.2],
        "heldout.mean": 1,
        "validation-x": {"a": 2},
        "train/mean": 0.5,
        "interventions": [{"id": "v1", "headline": 0.9, "parent_headline": 0.1, "delta": 0.8}],
        "audit": {
            "score_metric": "validation/mean_score",
            "raw_score": 0.7,
            "leak_adjusted_score": 0.7,
            "passed": True,
        },
        "findings": [
            {"code": "version.historical_best", "title": "the best version is v1 (0.9)"},
            {"code": "score.split_summary", "title": "validation: mean score 0.9"},
            {"code": "version.harness_unsigned", "title": "unsigned harness"},
        ],
        "note": "failed; eval.out ends: validation CartPole-v1 3 0 9.667 0.000",
    }
    out = redact(data)
    assert set(out) == {"train/mean", "interventions", "audit", "findings", "note"}
    assert out["interventions"] == [
        {"id": "v1", "headline": None, "parent_headline": None, "delta": None}
    ]
    assert out["audit"] == {"score_metric": "validation/mean_score", "passed": True}
    assert (
        out["findings"][:2] == [None, None]
        and out["findings"][2]["code"] == "version.harness_unsigned"
    )
    assert "9.667" not in out["note"]


# ---------------------------------------------------------------------------- the attacks (CLI)
@pytest.mark.heavy
def test_the_judges_logs_are_not_shown(attacked: Any) -> None:
    ws, ids, cli = attacked
    for _, record in ids.values():
        text = cli("logs", record.run_id).output
        assert not _shows(BAD_RETURN, text) and "validation" not in text, text
        data = cli.json("logs", record.run_id)
        assert {log["phase"] for log in data["logs"]} == {"train"}  # the train feedback stays
        assert (
            cli.json("logs", record.run_id, "--phase", "eval", code=10)["error"]["code"]
            == "hidden_until_finalize"
        )


@pytest.mark.heavy
def test_diagnose_names_no_judge_figure_best_version_or_order(attacked: Any) -> None:
    ws, ids, cli = attacked
    good, _ = ids["good"]
    bad, _ = ids["bad"]
    for version in (good, bad):
        data = cli.json("diagnose", version)
        assert not _judge_codes(data), _judge_codes(data)
        assert not data.get("interventions"), data.get(
            "interventions"
        )  # headline per version: an order
        text = json.dumps(data) + cli("diagnose", version).output
        assert "best version" not in text and "validation" not in text and "mean score" not in text
    # nothing recorded either: the findings view, the ledger's finding events
    rows = cli.json("sql", "SELECT code, title FROM findings")["rows"]
    assert rows and not _judge_codes(rows)
    assert not _judge_codes(cli.json("log"))
    assert not [r for r in rows if "validation" in (r["title"] or "")]


@pytest.mark.heavy
def test_audit_computes_no_judge_score(attacked: Any) -> None:
    ws, ids, cli = attacked
    good, _ = ids["good"]
    data = cli.json("audit", good)
    assert all(
        data.get(k) is None for k in ("raw_score", "leak_adjusted_score", "leak_zeroed_score")
    ), data
    assert "raw 1" not in cli("audit", good).output
    events = [e for e in cli.json("log")["events"] if e["kind"] == "audit"]
    assert events and all(e["data"].get("raw_score") is None for e in events)
    from evotree.core.workspace import Workspace

    # the ledger itself holds no score (so no later output, old or new, can show one)
    recorded = [
        e.event for e in Workspace.open(ws.root).ledger.entries() if e.event.kind == "audit"
    ]
    assert recorded and all(e.data.get("raw_score") is None for e in recorded)


@pytest.mark.heavy
def test_export_is_refused(attacked: Any, tmp_path: Path) -> None:
    ws, ids, cli = attacked
    for args in (
        ("tensorboard", str(tmp_path / "tb")),
        ("wandb", str(tmp_path / "wb")),
        ("mlflow", "--tracking-uri", f"file:{tmp_path / 'ml'}"),
    ):
        assert cli.json("export", *args, code=10)["error"]["code"] == "hidden_until_finalize", args
    assert not (tmp_path / "tb").exists()


@pytest.mark.heavy
def test_sql_tricks_reach_no_judge_row(attacked: Any) -> None:
    ws, ids, cli = attacked
    _, record = ids["bad"]
    run_dir = ws.root / ".evotree" / "runs" / record.run_id
    for query in (
        f"SELECT * FROM read_csv('{run_dir}/logs/eval.out')",
        f"SELECT * FROM read_json_auto('{run_dir}/run.json')",
        f"SELECT * FROM read_text('{run_dir}/evidence/eval/evals.jsonl')",
        f"SELECT * FROM glob('{run_dir}/*')",
        f"SELECT * FROM read_parquet('{run_dir}/signals.parquet')",
    ):
        assert cli.json("sql", query, code=14)["error"]["code"] == "query_not_allowed", query
    text = json.dumps(cli.json("sql", "SELECT * FROM signals")) + json.dumps(
        cli.json("sql", "SELECT * FROM runs")
    )
    text += json.dumps(cli.json("sql", "SELECT sql FROM duckdb_views()"))
    text += json.dumps(cli.json("sql", "SELECT * FROM duckdb_tables()"))
    assert not _shows(BAD_RETURN, text) and not _shows("9.666", text)
    assert "validation/" not in text


@pytest.mark.heavy
def test_abandoned_versions_memory_holds_no_headline(attacked: Any) -> None:
    ws, ids, cli = attacked
    bad, _ = ids["bad"]
    cli("abandon", bad, "--reason", "falls at once")
    data = cli.json("memory", "list")
    assert data["entries"], data
    assert not _judge_codes(data)
    for entry in data["entries"]:
        assert not (entry.get("data") or {}).get("headline"), entry


# ---------------------------------------------------------------------------- the agent's sandbox
@pytest.mark.heavy
def test_the_agent_sandbox_reads_no_run_directory_ledger_or_finalize(attacked: Any) -> None:
    from evotree.harness.sandbox import check_sandbox

    if not check_sandbox().ok:
        pytest.skip("no bubblewrap sandbox here")
    ws, ids, cli = attacked
    good, record = ids["good"]
    probe = (
        f"cat {ws.root}/.evotree/runs/{record.run_id}/run.json; "
        f"cat {ws.root}/.evotree/runs/{record.run_id}/logs/eval.out; "
        f"git -C {ws.root} show refs/evotree/ledger; "
        f"git -C {ws.root / '.evotree' / 'worktrees' / good} log --all -p; "
        f"{sys.executable} -m evotree -C {ws.root / '.evotree' / 'worktrees' / good} finalize --json; "
        "true"
    )
    done = subprocess.run(
        [
            str(EVOTREE_BIN),
            "-C",
            str(ws.root),
            "agent",
            "--versions",
            good,
            "--",
            "sh",
            "-c",
            probe,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    seen = done.stdout + done.stderr
    assert "validation" not in seen and GOOD_RETURN not in seen and '"headline"' not in seen, seen[
        -2000:
    ]
    from evotree.core.workspace import Workspace

    assert (
        not Workspace.open(ws.root).ledger.meta().get("finalize")
    )  # finalize did not run from inside


def test_finalize_is_not_an_agent_server_tool() -> None:
    from evotree.server.tools import TOOL_NAMES
    from evotree.server.verbs import Verbs

    assert "finalize" not in TOOL_NAMES and not any("final" in n for n in TOOL_NAMES)
    assert not hasattr(Verbs, "finalize")


# ---------------------------------------------------------------------------- after finalize: shown
@pytest.mark.heavy
def test_after_finalize_the_judges_figures_are_shown(attacked: Any) -> None:
    ws, ids, cli = attacked
    good, record = ids["good"]
    assert cli.json("finalize", "--yes")["status"] == "finalized"
    logs = cli.json("logs", record.run_id, "--phase", "eval")
    assert any("validation" in line for log in logs["logs"] for line in log["lines"])
    data = cli.json("diagnose", good)
    assert "score.split_summary" in _judge_codes(data) and data["interventions"]
    from evotree.cli.main import cli as main_cli

    # the agent-sandbox probe above ran `git log --all` in a traced agent session: the audit now
    # fails on it (exit 28) — the score is what is checked here
    audited = cli.runner.invoke(main_cli, ["-C", str(cli.repo), "audit", good, "--json"])
    assert audited.exit_code in (0, 28), audited.output
    assert json.loads(audited.stdout)["raw_score"] == pytest.approx(1.0)
    assert (
        cli.json("sql", "SELECT count(*) AS n FROM findings WHERE code LIKE 'score.%'")["rows"][0][
            "n"
        ]
        > 0
    )
