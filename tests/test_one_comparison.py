"""One comparison: compare, diagnose, gates, the report and the agent tools show the
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
from evotree.gates.score import ScoreRule


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
    delta_rows = [
        f
        for f in diagnosis["findings"]
        if f["code"] in ("version.delta_parent", "version.delta_champion")
        and f["evidence"].get("against") == "v0"
    ]
    assert delta_rows
    for row in delta_rows:
        ev = row["evidence"]
        assert (ev["delta"], ev["ci"], ev["p_value"]) == want

    dossier = cli.json("gates", v1)
    validate(dossier, "gates")
    score = next(g for g in dossier["gates"] if g["name"] == "score")
    assert (
        dossier["comparison"]["delta"],
        dossier["comparison"]["ci"],
        dossier["comparison"]["p_value"],
    ) == want
    assert (score["numbers"]["delta"], score["numbers"]["ci"], score["numbers"]["p_value"]) == want
    # the look's threshold is a threshold on the same p
    assert score["numbers"]["threshold"] <= compared["alpha"] and score["numbers"]["looks"] == list(
        ScoreRule().looks()
    )

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

    findings = [
        {
            "layer": "signal",
            "code": "signal.x",
            "severity": "warn",
            "title": f"run {i}",
            "run_id": f"r{i}",
        }
        for i in range(seeds)
    ] + [
        {
            "layer": "signal",
            "code": "signal.x",
            "severity": "critical",
            "title": "worst",
            "run_id": "r9",
        },
        {
            "layer": "version",
            "code": "version.y",
            "severity": "info",
            "title": "about the version",
            "run_id": None,
        },
    ]
    rows = aggregate_findings(findings)
    assert [r["code"] for r in rows] == ["signal.x", "version.y"]
    assert (
        rows[0]["runs"] == ["r0", "r1", "r9"]
        and rows[0]["count"] == 3
        and rows[0]["severity"] == "critical"
    )
    assert rows[0]["title"] == "worst" and len(rows[0]["detail"]) == 3
    assert rows[1]["runs"] == [] and rows[1]["count"] == 1


def test_gates_says_how_many_more_seeds_would_likely_settle_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unsettled score gate (``more_seeds``) says on its score row about how many more seeds of
    the candidate would likely settle it (80 % power were the observed Δ true)."""
    from types import SimpleNamespace

    import numpy as np

    from evotree.cli.gates import render_gates
    from evotree.diagnostics.stats import difference, pooled_spread, spread_term
    from evotree.gates.calibration import SimModel, evaluate
    from evotree.gates.score import ScoreRule, decide_score

    model, rng = SimModel(), np.random.default_rng(6)
    pool = model.difficulties(rng)
    a, b = evaluate(model, pool, 0.0, 4, rng), evaluate(model, pool, 0.03, 2, rng)
    d = difference(a, b, spread=pooled_spread([spread_term(a)]), confidence=0.95)
    decision = decide_score(d, ScoreRule(), names=("v0", "v1"))
    assert decision.verdict == "more_seeds" and decision.seeds_to_settle is not None
    monkeypatch.setenv("COLUMNS", "400")
    gate = SimpleNamespace(
        name="score",
        status="fail",
        summary="not yet",
        fix="",
        passed=False,
        numbers=decision.to_dict(),
    )
    cmp = {
        "a": "v0",
        "b": "v1",
        "split": "validation",
        "mean_a": float(a.mean()),
        "mean_b": float(b.mean()),
        "delta": d.delta,
        "confidence": d.confidence,
        "ci": list(d.ci),
        "p_value": d.p_value,
        "n_seeds": [4, 2],
        "n_tasks": d.n_tasks,
        "ci_method": "t",
        "identical": [False, False],
    }
    report = SimpleNamespace(
        sandbox_warning=None,
        version="v1",
        commit="c" * 40,
        champion="v0",
        champion_commit="d" * 40,
        hypothesis="h",
        created_by="me",
        comparison=cmp,
        gates=[gate],
        findings=[],
        passed=False,
        failed=[gate],
    )
    render_gates(report)
    out = capsys.readouterr().out
    more = decision.seeds_to_settle - 2
    assert (
        f"more_seeds; about {more} more seed(s) of v1 ({decision.seeds_to_settle} in all, and as many of v0)"
        " would likely settle it" in out
    )
