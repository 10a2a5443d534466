"""EvoPolicyGym's visibility boundary (evotree/core/visibility.py): before
`evotree finalize`, no output — CLI text or --json, the agent server's tools — shows a validation
or held-out figure; train feedback and budgets stay visible; after finalize they are shown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli
from test_gym_finalize import hidden_gym_workspace, searched

from evotree.core.visibility import redact

HIDDEN = ("validation", "heldout")


def leaks(data: Any, path: str = "") -> list[str]:
    """Where ``data`` shows a hidden figure: a dict naming a hidden split, or a key naming one."""
    found = []
    if isinstance(data, dict):
        for key in ("metric", "split"):
            if isinstance(data.get(key), str) and data[key].lower().startswith(HIDDEN):
                found.append(f"{path}.{key}={data[key]}")
        for key, value in data.items():
            if isinstance(key, str) and key.lower().startswith(HIDDEN):
                found.append(f"{path}.{key}")
            found += leaks(value, f"{path}.{key}")
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += leaks(value, f"{path}[{i}]")
    elif isinstance(data, str) and any(f"{h}/" in data.lower() and "=" in data for h in HIDDEN):
        import re

        if re.search(r"(validation|heldout)/\S*\s*[=:]\s*[-+]?\d", data, re.IGNORECASE):
            found.append(f"{path}: {data[:80]}")
    return found


def test_redact_takes_out_headlines_keys_and_spelled_out_figures() -> None:
    data = {
        "headline": {"metric": "validation/mean_score", "value": 0.31},
        "validation_mean": 0.3,
        "rows": [{"split": "heldout", "score": 1.0}, {"split": "train", "score": 0.5}],
        "note": "v1: succeeded validation/mean_score=0.31",
        "usage": {"episodes": 2},
    }
    out = redact(data)
    assert (
        out["headline"] is None and "validation_mean" not in out and out["usage"] == {"episodes": 2}
    )
    assert out["rows"] == [None, {"split": "train", "score": 0.5}] and "0.31" not in out["note"]
    assert not leaks(out)


@pytest.fixture(scope="module")
def searched_ws(tmp_path_factory: pytest.TempPathFactory) -> Any:
    ws = hidden_gym_workspace(tmp_path_factory.mktemp("vis") / "w")
    ids = searched(ws)
    return ws, ids


def _tool(ws: Any, name: str, fn: Any) -> Any:
    """One agent-server call through the tools layer (what the MCP client gets): its parsed text."""
    import anyio

    from evotree.server.tools import EvotreeTools
    from evotree.server.verbs import Principal, Verbs

    tools = EvotreeTools(Verbs(ws.root, Principal.parse("agent")))
    result = anyio.run(tools.call, lambda: fn(tools.verbs))
    return json.loads(result.content[0].text), bool(result.is_error)


@pytest.mark.heavy
def test_agents_see_no_validation_before_finalize_and_do_after(
    searched_ws: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, ids = searched_ws
    good, good_run = ids["good"]
    assert good_run.headline["metric"].startswith("validation/")  # the judge computed and kept it
    cli = Cli(ws.root)
    # an attacker's tries, with every variable it might hope would lift the boundary
    for name in ("EVOTREE_REVEAL", "EVOTREE_SHOW_HIDDEN", "EVOTREE_HUMAN"):
        monkeypatch.setenv(name, "1")
    monkeypatch.delenv("EVOTREE_AGENT_PRINCIPAL", raising=False)
    for args in (
        ("tree",),
        ("show", good),
        ("runs",),
        ("runs", "--version", good),
        ("log",),
        ("status",),
        ("budget",),
    ):
        data = cli.json(*args)
        assert not leaks(data), (args, leaks(data))
    text = cli("tree").output + cli("runs").output + cli("show", good).output
    assert (
        f"{good_run.headline['value']:.3f}" not in text
    )  # text output too: fail closed for everyone
    # train feedback stays visible (rollouts of the train phase), the judge's rows do not
    rows = cli.json("sql", "SELECT phase, count(*) AS n FROM rollouts GROUP BY ALL")["rows"]
    assert rows and {r["phase"] for r in rows} == {"train"}
    for query in (
        "SELECT * FROM evals",
        "SELECT * FROM signals WHERE phase = 'eval'",
        "SELECT * FROM _shown_evals",
        "SELECT * FROM _evals",
    ):
        assert cli.json("sql", query)["rows"] == [], query
    columns = cli.json("sql", "SELECT * FROM runs")["columns"]
    assert "headline" not in columns
    evals_file = ws.root / ".evotree" / "runs" / good_run.run_id / "evals.parquet"
    assert evals_file.exists()
    refused = cli.json("sql", f"SELECT * FROM read_parquet('{evals_file}')", code=14)
    assert refused["error"]["code"] == "query_not_allowed"
    # the commands whose purpose is the hidden figures are refused
    for args in (("compare", "champion", good), ("gates", good)):
        assert cli.json(*args, code=10)["error"]["code"] == "hidden_until_finalize", args
    # an env var claiming to be a person changes nothing
    monkeypatch.setenv("EVOTREE_AGENT_PRINCIPAL", "")
    assert not leaks(cli.json("tree"))

    # the agent server: every read tool
    calls = {
        "tree": lambda v: v.tree_encoded(),
        "show": lambda v: v.show(good),
        "runs": lambda v: v.runs(),
        "log": lambda v: v.log(None, None),
        "sql": lambda v: v.sql("SELECT * FROM evals"),
        "sql_runs": lambda v: v.sql("SELECT * FROM runs"),
        "diagnose": lambda v: v.diagnose(good),
    }
    for name, fn in calls.items():
        data, error = _tool(ws, name, fn)
        assert not leaks(data), (name, leaks(data))
    for name, fn in {
        "compare": lambda v: v.compare("champion", good),
        "gates": lambda v: v.gates(good),
        "report": lambda v: v.report(good, audit=False),
    }.items():
        data, error = _tool(ws, name, fn)
        assert error and data["error"]["code"] == "hidden_until_finalize", name
    data, _ = _tool(ws, "sql", lambda v: v.sql("SELECT * FROM evals"))
    assert data["rows"] == []

    # after finalize: shown
    event = cli.json("finalize", "--yes")
    assert event["status"] == "finalized"
    tree = cli.json("tree")
    assert leaks(tree)  # the headlines are back
    data, _ = _tool(ws, "tree", lambda v: v.tree_encoded())
    assert leaks(data)
    assert cli.json("sql", "SELECT count(*) AS n FROM evals")["rows"][0]["n"] > 0
    data, error = _tool(ws, "compare", lambda v: v.compare("champion", good))
    assert not error or data["error"]["code"] != "hidden_until_finalize"


def test_heldout_runs_are_refused_where_finalize_judges_held_out(tmp_path: Path) -> None:
    from evotree.core.errors import InvalidState
    from evotree.gates.runs import run_versions

    ws = hidden_gym_workspace(tmp_path / "w")
    with pytest.raises(InvalidState, match="finalize"):
        run_versions(ws, ["v0"], seeds=1, heldout=True)
