"""The version layer (diagnostics/version.py) on real workspaces: real runs, real comparisons."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import commit_file
from test_runs import make_run_repo

from evotree.diagnostics.findings import Finding
from evotree.diagnostics.version import VersionThresholds, intervention_table, version_findings
from evotree.core.errors import ConfigError
from evotree.core.versions import abandon_version, create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions

B = 1000


def _ws(tmp_path: Path, skill: float = 0.5) -> Workspace:
    """A run workspace whose judge scores 40 validation tasks (so a Δ of 0.1 is detectable)."""
    hidden = {
        "validation": [f"val-{i}" for i in range(40)],
        "heldout": [f"SECRET-held-{i}" for i in range(4)],
    }
    root = make_run_repo(tmp_path / "w", recipe=f"skill = {skill}\nsteps = 1\n", hidden=hidden)
    return Workspace.open(root)


def _version(ws: Workspace, recipe: str, parent: str = "champion", hypothesis: str = "h") -> str:
    rec = create_version(ws, hypothesis=hypothesis, parent=parent)
    commit_file(ws.root / rec.worktree, "recipe.toml", recipe, "recipe")
    return rec.id


def _skill(ws: Workspace, skill: float, parent: str = "champion", hypothesis: str = "h") -> str:
    return _version(ws, f"skill = {skill}\nsteps = 1\n", parent, hypothesis)


def _codes(findings: list[Finding]) -> dict[str, Finding]:
    assert all(f.layer == "version" and f.code.startswith("version.") for f in findings)
    codes = [f.code for f in findings]
    assert len(codes) == len(set(codes)), codes
    return {f.code: f for f in findings}


def test_significant_improvement(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    v1 = _skill(ws, 0.7, hypothesis="more skill")
    run_versions(ws, ["v0", v1], seeds=2, jobs=4)
    found = _codes(version_findings(ws, v1, B=B))
    parent = found["version.delta_parent"]
    assert parent.severity == "info" and "significantly better" in parent.title
    assert parent.evidence["delta"] == pytest.approx(0.2) and parent.evidence["ci"][0] > 0
    assert parent.evidence["seed_aware"] is True and parent.evidence["caveat"] is None
    assert found["version.delta_champion"].evidence["against"] == "v0"
    assert found["version.historical_best"].evidence["best"] == v1
    for absent in (
        "version.post_peak_regression",
        "version.saturation",
        "version.escalate",
        "version.too_good_to_be_true",
    ):
        assert absent not in found
    # the root: no parent, so no Δ to it; it is the champion, so no Δ to the champion either
    root = _codes(version_findings(ws, "champion", B=B))
    assert set(root) == {"version.historical_best"}
    assert (
        root["version.historical_best"].evidence["best"] == v1
        and "selectable" in root["version.historical_best"].suggestion
    )
    rows = intervention_table(ws)
    assert rows == [
        {
            "id": v1,
            "parent": "v0",
            "hypothesis": "more skill",
            "status": "evaluated",
            "headline": pytest.approx(0.7),
            "parent_headline": pytest.approx(0.5),
            "delta": pytest.approx(0.2),
        }
    ]


def test_peak_regression_saturation_and_too_good(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    v1 = _skill(ws, 0.7)  # +0.2: the peak
    v2 = _skill(ws, 0.65, parent=v1)  # -0.05
    v3 = _skill(ws, 0.6, parent=v2)  # -0.05: below the peak by 0.1
    v4 = _version(ws, "skill = 0.6\nsteps = 1\n# retry\n", parent=v3)  # 0: no gain thrice
    v5 = _skill(ws, 1.0, parent=v4)  # +0.4: far outside the history
    run_versions(ws, ["v0", v1, v2, v3, v4, v5], seeds=2, jobs=6)

    one = _codes(version_findings(ws, v1, B=B))
    assert "version.post_peak_regression" not in one and "version.too_good_to_be_true" not in one

    three = _codes(version_findings(ws, v3, B=B))
    peak = three["version.post_peak_regression"]
    assert peak.severity == "warn" and peak.evidence["peak"] == v1
    assert peak.evidence["drop"] == pytest.approx(0.1)
    assert "selectable" in peak.suggestion and v1 in peak.suggestion
    assert "version.saturation" not in three  # v1 was a significant gain within the last 3
    assert "version.escalate" not in three  # small losses are not significantly worse
    assert three["version.delta_parent"].evidence["significant"] == "none"
    assert three["version.delta_champion"].severity == "info"  # +0.1 over v0
    # a larger margin silences the regression
    quiet = _codes(version_findings(ws, v3, B=B, thresholds={"regression_margin": 0.2}))
    assert "version.post_peak_regression" not in quiet

    four = _codes(version_findings(ws, v4, B=B))
    sat = four["version.saturation"]
    assert sat.severity == "warn" and [s["version"] for s in sat.evidence["steps"]] == [v2, v3, v4]
    assert "version.post_peak_regression" in four and "version.escalate" not in four
    assert "version.saturation" not in _codes(
        version_findings(ws, v4, B=B, thresholds={"saturation_k": 4})
    )

    five = _codes(version_findings(ws, v5, B=B))
    jump = five["version.too_good_to_be_true"]
    assert jump.severity == "high" and jump.evidence["delta"] == pytest.approx(0.4)
    assert jump.evidence["past_deltas"] == 4 and f"evotree audit {v5}" in jump.suggestion
    assert five["version.historical_best"].evidence["best"] == v5
    assert "version.post_peak_regression" not in five
    # the history rule alone (absolute jump out of reach) still fires; loosened, it does not
    alone = _codes(version_findings(ws, v5, B=B, thresholds=VersionThresholds(absolute_jump=1.0)))
    assert "version.too_good_to_be_true" in alone
    assert "mean + 3 sd" in alone["version.too_good_to_be_true"].title
    loose = _codes(
        version_findings(ws, v5, B=B, thresholds={"absolute_jump": 1.0, "jump_sd": 10.0})
    )
    assert "version.too_good_to_be_true" not in loose
    assert [r["id"] for r in intervention_table(ws)] == [v1, v2, v3, v4, v5]


def test_escalation_and_missing_scores(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    run_versions(ws, ["v0"], seeds=1)
    a1 = _version(ws, "skill = 0.9\nsteps = 1\nfail = true\n")
    (record,) = run_versions(ws, [a1])
    assert record.status != "succeeded"
    first = _codes(version_findings(ws, a1, B=B))
    assert "version.escalate" not in first  # one failure is not yet a streak
    missing = first["version.delta_parent"]
    assert missing.severity == "info" and missing.evidence["delta"] is None
    assert "no scored run" in missing.evidence["reason"]  # reported, not scored 0
    for absent in (
        "version.post_peak_regression",
        "version.too_good_to_be_true",
        "version.saturation",
    ):
        assert absent not in first

    a2 = _skill(ws, 0.6)
    abandon_version(ws, a2, reason="wrong idea")
    second = _codes(version_findings(ws, a2, B=B))
    esc = second["version.escalate"]
    assert esc.severity == "high" and [s["version"] for s in esc.evidence["streak"]] == [a1, a2]
    assert "escalate to a human" in esc.suggestion
    assert second["version.delta_parent"].evidence["delta"] is None
    assert second["version.historical_best"].evidence["best"] == "v0"
    # the champion sees the last attempts made from it too
    assert "version.escalate" in _codes(version_findings(ws, "v0", B=B))
    assert "version.escalate" not in _codes(
        version_findings(ws, a2, B=B, thresholds={"escalate_n": 3})
    )

    a3 = _skill(ws, 0.7)
    run_versions(ws, [a3])
    third = _codes(version_findings(ws, a3, B=B))
    assert "version.escalate" not in third  # a success ends the streak
    parent = third["version.delta_parent"]
    assert parent.evidence["seed_aware"] is False and "one run a side" in parent.evidence["caveat"]
    assert "one run a side" in parent.title
    rows = {r["id"]: r for r in intervention_table(ws)}
    assert rows[a1]["delta"] is None and rows[a1]["status"] == "failed"
    assert rows[a2]["delta"] is None and rows[a2]["status"] == "abandoned"
    assert rows[a3]["delta"] == pytest.approx(0.2)


def test_significantly_worse_counts_toward_escalation(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    b1 = _skill(ws, 0.2)
    b2 = _skill(ws, 0.25, parent=b1)
    b3 = _skill(ws, 0.1, parent=b2)
    run_versions(ws, ["v0", b1, b2, b3], seeds=2, jobs=4)
    found = _codes(version_findings(ws, b1, B=B))
    assert found["version.delta_parent"].severity == "warn"
    assert "significantly worse" in found["version.delta_parent"].title
    assert "version.escalate" not in found
    # b2 is not significantly worse than b1: the streak is broken; b3 is worse but alone
    assert "version.escalate" not in _codes(version_findings(ws, b3, B=B))
    esc = _codes(version_findings(ws, b3, B=B, thresholds={"escalate_n": 1}))["version.escalate"]
    assert esc.evidence["streak"][0]["outcome"] == "significantly worse"


def test_thresholds_are_checked() -> None:
    with pytest.raises(ConfigError):
        from evotree.diagnostics.version import _thresholds

        _thresholds({"saturation": 3})
    with pytest.raises(ValueError):
        VersionThresholds(escalate_n=0)
