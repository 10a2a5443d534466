"""One comparison (issue 17): compare, diagnose, gates, the report and the agent tools show the
same Δ, the same CI and the same p for the same pair of versions — one computation
(:func:`evotree.diagnostics.compare.compare`), and the gate's look-adjusted threshold is a
threshold on that p, not a second interval."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Cli, commit_file, validate
from test_compare import POOL, SEEDED_JUDGE
from test_runs import make_run_repo

from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions


def test_five_readers_agree_on_delta_ci_and_p(tmp_path: Path) -> None:
    ws = Workspace.open(make_run_repo(tmp_path / "w", judge=SEEDED_JUDGE, hidden=POOL))
    rec = create_version(ws, hypothesis="more skill")
    commit_file(ws.root / rec.worktree, "recipe.toml", "skill = 0.65\nsteps = 1\n", "recipe")
    v1 = rec.id
    run_versions(ws, ["v0", v1], seeds=4, jobs=2)
    cli = Cli(ws.root)

    compared = cli.json("compare", "v0", v1)
    validate(compared, "compare")
    want = (compared["delta"], compared["ci"], compared["p_value"])

    diagnosis = cli.json("diagnose", v1)
    validate(diagnosis, "diagnose")
    delta_rows = [f for f in diagnosis["findings"] if f["code"] in ("version.delta_parent", "version.delta_champion")
                  and f["evidence"].get("against") == "v0"]
    assert delta_rows
    for row in delta_rows:
        ev = row["evidence"]
        assert (ev["delta"], ev["ci"], ev["p_value"]) == want

    dossier = cli.json("gates", v1)
    validate(dossier, "gates")
    score = next(g for g in dossier["gates"] if g["name"] == "score")
    assert (dossier["comparison"]["delta"], dossier["comparison"]["ci"], dossier["comparison"]["p_value"]) == want
    assert (score["numbers"]["delta"], score["numbers"]["ci"], score["numbers"]["p_value"]) == want
    # the look's threshold is a threshold on the same p
    assert score["numbers"]["threshold"] <= compared["alpha"] and score["numbers"]["looks"] == [1, 4, 16]

    from evotree.report.collect import build_report

    scores = build_report(Workspace.open(ws.root), v1, against="v0", run_audit=False).scores
    assert (scores["delta"], scores["ci"], scores["p_value"]) == want

    from evotree.server.verbs import Principal, Verbs

    tool = Verbs(ws.root, Principal.parse("alice")).compare("v0", v1)
    assert (tool["delta"], tool["ci"], tool["p_value"]) == want

    # versions are named, never "A/B"
    text = cli("compare", "v0", v1).output + cli("gates", v1).output
    assert "B is better" not in text and "B is worse" not in text and f"{v1}" in text
    assert f"{compared['ci'][0]:+.4f}" in text  # the same interval printed by both


@pytest.mark.parametrize("seeds", [2])
def test_gates_findings_are_one_row_per_code_with_their_runs(tmp_path: Path, seeds: int) -> None:
    from evotree.diagnostics.diagnose import aggregate_findings

    findings = [{"layer": "signal", "code": "signal.x", "severity": "warn", "title": f"run {i}", "run_id": f"r{i}"}
                for i in range(seeds)] + [{"layer": "signal", "code": "signal.x", "severity": "critical",
                                            "title": "worst", "run_id": "r9"},
                                           {"layer": "version", "code": "version.y", "severity": "info",
                                            "title": "about the version", "run_id": None}]
    rows = aggregate_findings(findings)
    assert [r["code"] for r in rows] == ["signal.x", "version.y"]
    assert rows[0]["runs"] == ["r0", "r1", "r9"] and rows[0]["count"] == 3 and rows[0]["severity"] == "critical"
    assert rows[0]["title"] == "worst" and len(rows[0]["detail"]) == 3
    assert rows[1]["runs"] == [] and rows[1]["count"] == 1
