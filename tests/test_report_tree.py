"""`evotree report --tree`: search-level statistics checked on hand-made trees
whose answers are known — real workspaces, real runs (the judge scores each version exactly its
recipe's ``skill``), a real failing audit — and the rules on hand-built rows."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from conftest import Cli, commit_file, validate
from test_runs import make_run_repo

from evotree.core.errors import UsageError
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.report.search import (
    SearchParams,
    VersionStat,
    compute_stats,
    render_markdown,
    render_text,
    search_report,
    tree_stats,
)

#: one validation task, scored exactly the model's skill: a version's headline is its recipe's skill
JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
rec.eval_result("validation", "val-0", model["skill"])
"""


def _workspace(path: Path, tree: list[tuple[str, str, dict[str, str]]]) -> Workspace:
    """A workspace whose root scores 0.5 and whose versions ``(parent, skill, extra files)`` are
    created in this order, then run once each (through the harness, without the patch gate)."""
    from evotree.harness.execute import run_versions

    ws = Workspace.open(
        make_run_repo(
            path, judge=JUDGE, hidden={"validation": ["val-0"]}, recipe="skill = 0.5\nsteps = 1\n"
        )
    )
    ids = ["v0"]
    for parent, skill, extra in tree:
        record = create_version(ws, hypothesis=f"skill {skill}", parent=parent)
        wt = ws.root / record.worktree
        for name, text in extra.items():
            (wt / name).parent.mkdir(parents=True, exist_ok=True)
            (wt / name).write_text(text)
        commit_file(wt, "recipe.toml", f"skill = {skill}\nsteps = 1\n", f"skill {skill}")
        ids.append(record.id)
    records = run_versions(ws, ids, authorize=lambda _ws, _request: None)
    assert len(records) == len(ids)
    return ws


@pytest.fixture(scope="module")
def alpha(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """v0 0.5 (root, champion) -> v1 0.6 -> v2 0.9524999999 (the peak) -> v3 0.9525 (a float tie,
    later); v4 0.99 from v0 but audit-failed (ships a judge of its own); v5 0.7 from v2; v6 from v3
    fails (no score); v7 0.9 from v2 (the last valid version, below the peak)."""
    ws = _workspace(
        tmp_path_factory.mktemp("tree") / "alpha",
        [
            ("v0", "0.6", {}),
            ("v1", "0.9524999999", {}),
            ("v2", "0.9525", {}),
            ("v0", "0.99", {"judge/eval.py": "print('1.0')\n"}),
            ("v2", "0.7", {}),
            ("v3", "0.5\nfail = true", {}),
            ("v2", "0.9", {}),
        ],
    )
    from evotree.harness.audit import audit_version

    assert audit_version(ws, "v4").passed is False  # records a failed `audit` event in the ledger
    return ws


@pytest.fixture(scope="module")
def beta(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """v0 0.5 -> v1 0.6 (the peak) -> v2 0.6 (ends at the peak, exactly)."""
    return _workspace(
        tmp_path_factory.mktemp("tree") / "beta",
        [("v0", "0.6", {}), ("v1", "0.6", {"notes.md": "the same skill again\n"})],
    )


@pytest.mark.heavy
def test_figures_of_a_hand_made_tree(alpha: Workspace) -> None:
    from evotree.harness.records import list_runs

    stats = tree_stats(alpha)
    rows = {r.id: r for r in stats.versions}
    assert [r.id for r in stats.versions] == [f"v{i}" for i in range(8)]  # creation order
    assert [rows[v].score for v in ("v0", "v1", "v2", "v3", "v4", "v5", "v7")] == [
        0.5,
        0.6,
        0.9524999999,
        0.9525,
        0.99,
        0.7,
        0.9,
    ]
    assert rows["v6"].score is None and rows["v6"].status == "failed"
    assert rows["v4"].audit == "failed" and not rows["v4"].valid and rows["v1"].audit is None

    # historical best: v2, not the later v3 (a tie within 1e-9) nor the audit-failed v4
    hb = stats.historical_best
    assert (hb["version"], hb["score"], hb["order"]) == ("v2", 0.9524999999, 3)
    assert hb["ties"] == ["v3"] and hb["excluded_audit_failed"] == ["v4"]
    assert hb["champion_is_best"] is False and stats.champion == "v0"
    assert any("champion v0 is not the historical best v2" in n for n in stats.notes)
    # with no tolerance the newer version wins the float tie
    assert tree_stats(alpha, params=SearchParams(epsilon=0.0)).historical_best["version"] == "v3"

    # first attempt: v1 beat the root, and a later attempt (v2) beat v1
    fa = stats.first_attempt
    assert (fa["version"], fa["score"], fa["beats_root"], fa["improved_later"]) == (
        "v1",
        0.6,
        True,
        True,
    )
    assert (fa["best_later"], fa["best_later_score"]) == ("v2", 0.9524999999)

    # post-peak regression in creation order: v3..v7 came after v2; v3 ties, v4 is not valid,
    # v6 has no score; v5 and v7 fell below the peak, v5 the most; the last valid one (v7) is below it
    pp = stats.post_peak
    assert (pp["peak"], pp["versions_after"], pp["valid_after"], pp["continued"]) == (
        "v2",
        5,
        3,
        True,
    )
    assert pp["regressions"] == ["v5", "v7"] and pp["worst_version"] == "v5"
    assert pp["worst_drop"] == pytest.approx(0.9524999999 - 0.7, abs=1e-12)
    assert (pp["last_valid"], pp["ended_below_peak"]) == ("v7", True)
    assert pp["below_best_so_far"] == ["v5", "v7"]
    assert (
        rows["v2"].peak
        and not rows["v3"].regression
        and rows["v3"].drop == pytest.approx(-1e-10, abs=1e-15)
    )
    assert [r.id for r in stats.versions if r.after_peak] == ["v3", "v4", "v5", "v6", "v7"]
    assert rows["v5"].best_before == "v2" and rows["v2"].best_before == "v1"

    # spend: one charged run per version (the failed v6 too); 5 of 8 after the peak
    sp = stats.spend
    assert sp["total"]["runs"] == 8 and sp["after_peak"]["runs"] == 5
    assert sp["after_peak_share"]["runs"] == pytest.approx(5 / 8)
    usage = {r.id: r.usage for r in alpha.ledger.versions()}
    assert sp["total"]["steps"] == sum(u.get("steps", 0) for u in usage.values()) > 0
    assert sp["after_peak"]["steps"] == sum(
        usage[v].get("steps", 0) for v in ("v3", "v4", "v5", "v6", "v7")
    )
    cpu = {r.run_id: r.cpu_seconds for r in list_runs(alpha)}
    assert sp["cpu_seconds_complete"] is True
    assert sp["total"]["cpu_seconds"] == pytest.approx(sum(cpu.values()), abs=1e-6)
    after_cpu = sum(
        r.cpu_seconds for r in list_runs(alpha) if r.version in ("v3", "v4", "v5", "v6", "v7")
    )
    assert sp["after_peak"]["cpu_seconds"] == pytest.approx(after_cpu, abs=1e-6)
    # cost per valid candidate: 7 candidates (v1..v7), 5 valid (not v4, not v6), 7 runs
    cost = stats.cost_per_valid_candidate
    assert (cost["candidates"], cost["valid_candidates"]) == (7, 5)
    assert cost["per_candidate"]["runs"] == pytest.approx(7 / 5)

    # stop: 5 versions since the peak >= patience 3; keep v2
    rec = stats.recommendation
    assert rec["action"] == "stop" and rec["keep"] == "v2" and rec["versions_since_peak"] == 5
    assert rec["line"].startswith(
        "stop: 5 version(s) since the peak v2 without improvement, spend after the peak "
    )
    assert rec["line"].endswith("; keep v2")
    assert (
        tree_stats(alpha, params=SearchParams(patience=6, max_after_peak_share=1.0)).recommendation[
            "action"
        ]
        == "continue"
    )

    # the renderings say the same, and the Markdown carries no HTML from a hypothesis
    report = search_report([alpha])
    validate(report.to_dict(), "report-tree")
    md, text = render_markdown(report), render_text(report)
    for rendered in (md, text):
        assert (
            rec["line"] in rendered
            and "historical best" in rendered
            and "v2 (0.9524999999, validation/mean_score, higher is better)" in rendered
        )
    assert "| 4 | v3 | v2 | evaluated | 0.9525 |" in md
    assert "<" not in md.replace("&lt;", "")


@pytest.mark.heavy
def test_rates_over_two_workspaces_through_the_cli(
    alpha: Workspace, beta: Workspace, tmp_path: Path
) -> None:
    b = tree_stats(beta)
    assert (b.historical_best["version"], b.historical_best["ties"]) == ("v1", ["v2"])
    assert b.first_attempt["beats_root"] is True and b.first_attempt["improved_later"] is False
    assert (
        b.post_peak["continued"] is True and b.post_peak["ended_below_peak"] is False
    )  # ends at the peak
    assert (
        b.post_peak["regressions"] == [] and b.recommendation["action"] == "continue"
    )  # 1 of 3 runs after it

    out = Cli(alpha.root).json(
        "report", "--tree", "--workspace", str(alpha.root), "--workspace", str(beta.root)
    )
    validate(out, "report-tree")
    assert [s["setting"] for s in out["settings"]] == ["alpha", "beta"]
    r = out["rates"]
    assert r["settings"] == 2
    assert (
        r["first_attempt_improved"]["numerator"],
        r["first_attempt_improved"]["denominator"],
    ) == (1, 2)
    assert r["first_attempt_improved"]["rate"] == 0.5 and r["first_attempt_improved"][
        "settings"
    ] == ["alpha"]
    assert r["first_attempt_beats_root"]["rate"] == 1.0
    assert r["continued_after_peak"]["rate"] == 1.0
    assert (r["ended_below_peak"]["numerator"], r["ended_below_peak"]["denominator"]) == (1, 2)
    assert r["post_peak_regression"]["settings"] == ["alpha"]
    assert r["stop_recommended"]["settings"] == ["alpha"] and r["champion_is_best"]["rate"] == 0.0
    per_valid = [tree_stats(w).cost_per_valid_candidate["per_candidate"] for w in (alpha, beta)]
    bills = [
        c["training_usd"] for c in per_valid if "training_usd" in c
    ]  # only where runs priced training
    assert r["median_training_usd_per_valid_candidate"] == (
        pytest.approx(statistics.median(bills)) if bills else None
    )
    assert r["median_runs_per_valid_candidate"] == pytest.approx(
        statistics.median(c["runs"] for c in per_valid)
    )

    # text and Markdown on stdout; Markdown and JSON into a file with --out
    text = Cli(alpha.root)(
        "report", "--tree", "--workspace", str(alpha.root), "--workspace", str(beta.root)
    ).stdout
    assert "a later attempt beat the first attempt: 50.00% (1/2)" in text
    assert "ended below the peak (of those that kept searching): 50.00% (1/2)" in text
    assert Cli(beta.root)("report", "--tree", "--format", "md").stdout.startswith(
        "# Search statistics\n"
    )
    printed = json.loads(Cli(beta.root)("report", "--tree", "--format", "json").stdout)
    assert (
        printed["settings"][0]["post_peak"]["ended_below_peak"] is False and printed["path"] is None
    )
    md_file = tmp_path / "out" / "tree.md"
    said = Cli(alpha.root)("report", "--tree", "--out", str(md_file)).stdout
    assert f"wrote {md_file}" in said and md_file.read_text().startswith("# Search statistics")
    saved = Cli(beta.root).json(
        "report", "--tree", "--format", "json", "--out", str(tmp_path) + "/"
    )
    assert saved["path"] == str(tmp_path / "search-report.json")
    assert (
        json.loads(Path(saved["path"]).read_text())["settings"][0]["historical_best"]["version"]
        == "v1"
    )


def _row(
    vid: str,
    order: int,
    score: float | None,
    *,
    parents: list[str] | None = None,
    audit: str | None = None,
    runs: float = 1.0,
) -> VersionStat:
    return VersionStat(
        id=vid,
        order=order,
        parents=parents if parents is not None else ([] if order == 1 else ["v0"]),
        created_at=f"2026-01-01T00:00:{order:02d}",
        status="evaluated" if score is not None else "failed",
        hypothesis="h",
        score=score,
        metric="validation/mean_score" if score is not None else None,
        audit=audit,
        valid=score is not None and audit != "failed",
        runs_finished=1,
        spend={
            "runs": runs,
            "steps": 0.0,
            "episodes": 0.0,
            "wall_hours": 0.0,
            "gpu_hours": 0.0,
            "cpu_seconds": 0.0,
            "usd": 2.0 * runs,
        },
    )


def test_rules_on_rows_direction_margin_and_money() -> None:
    rows = [
        _row("v0", 1, 0.30),
        _row("v1", 2, 0.20),
        _row("v2", 3, 0.25),
        _row("v3", 4, 0.21),
        _row("v4", 5, 0.10, audit="failed"),
    ]
    # lower is better: the peak is v1 (0.20); v2 is 0.05 worse, v3 only 0.01 (inside a 0.02 margin)
    s = compute_stats("s", rows, params=SearchParams(direction="min", margin=0.02, patience=5))
    assert s.historical_best["version"] == "v1" and s.historical_best["excluded_audit_failed"] == [
        "v4"
    ]
    assert s.post_peak["regressions"] == ["v2"] and s.post_peak["ended_below_peak"] is False
    assert s.post_peak["worst_drop"] == pytest.approx(0.05)
    assert s.first_attempt["beats_root"] is True and s.first_attempt["improved_later"] is False
    # money is a spend unit when a usage carries it, and the stop rule's share is measured in it:
    # 3 of 5 runs (usd 6 of 10) after the peak >= 0.5
    assert s.spend["share_unit"] == "usd" and s.spend["after_peak_share"]["usd"] == pytest.approx(
        0.6
    )
    assert (
        s.recommendation["action"] == "stop" and "60.0% of total (usd)" in s.recommendation["line"]
    )
    assert s.cost_per_valid_candidate["per_candidate"]["usd"] == pytest.approx(8.0 / 3)


def test_a_first_attempt_without_a_score_and_a_tree_without_scores() -> None:
    rows = [_row("v0", 1, None), _row("v1", 2, None), _row("v2", 3, 0.4)]
    s = compute_stats("s", rows)
    assert s.first_attempt["valid"] is False and s.first_attempt["beats_root"] is None
    assert (
        s.first_attempt["improved_later"] is True
    )  # a later valid attempt improves on a failed one
    assert s.historical_best["version"] == "v2" and s.post_peak["continued"] is False
    assert s.recommendation["action"] == "continue"
    empty = compute_stats("e", [_row("v0", 1, None), _row("v1", 2, 0.9, audit="failed")])
    assert empty.historical_best["version"] is None and empty.post_peak["ended_below_peak"] is None
    assert empty.recommendation["line"] == "continue: no valid score yet"
    assert empty.cost_per_valid_candidate == {
        "valid_candidates": 0,
        "candidates": 1,
        "per_candidate": None,
    }


@pytest.mark.parametrize(
    "bad",
    [
        {"epsilon": -1e-9},
        {"margin": float("nan")},
        {"patience": 0},
        {"max_after_peak_share": 1.5},
        {"direction": "up"},
        {"patience": True},
    ],
)
def test_bad_parameters_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(UsageError) as info:
        SearchParams(**bad)  # type: ignore[arg-type]
    assert info.value.code == "usage_error" and info.value.exit_code == 2


def test_bad_workspaces_are_refused(ws: Workspace, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="named twice"):
        search_report([ws, Workspace.open(ws.root)])
    with pytest.raises(UsageError):
        search_report([])
    run = Cli(ws.root)
    outside = tmp_path / "plain"
    outside.mkdir()
    err = run.json(
        "report", "--tree", "--workspace", str(ws.root), "--workspace", str(outside), code=3
    )
    assert err["error"]["code"] == "not_a_git_repository"
    assert (
        run.json("report", "--tree", "--format", "html", code=2)["error"]["code"] == "usage_error"
    )
    assert run.json("report", "v0", "--tree", code=2)["error"]["code"] == "usage_error"
    assert run.json("report", code=2)["error"]["code"] == "usage_error"
    assert not list((ws.root / ".evotree").glob("reports/**/*.md"))  # nothing written


def test_the_schema_is_registered() -> None:
    from evotree.verbs.schemas import load_schema, schema_names

    assert "report-tree" in schema_names()
    assert load_schema("report-tree")["title"] == "evotree report --tree --json"


def test_agent_spend_counts_where_it_was_charged(ws: Workspace) -> None:
    money = pytest.importorskip("evotree.harness.money")
    v1 = create_version(ws, hypothesis="h", parent="v0").id
    money.record_spend(ws, 2.0, "api: drafting v1", tokens=1000, version=v1)
    money.record_spend(ws, 0.5, "api: reading the tree")  # charged to no version
    stats = tree_stats(ws)
    rows = {r.id: r for r in stats.versions}
    assert (
        rows[v1].spend["usd"] == 2.0
        and rows[v1].spend["tokens"] == 1000
        and rows["v0"].spend.get("usd", 0) == 0
    )
    assert stats.spend["total"]["usd"] == 2.5 and stats.spend["candidates"]["usd"] == 2.5
    assert stats.spend["total"]["runs"] == 0


def test_unattributed_spend_after_the_peak_is_time_ordered() -> None:
    rows = [
        _row("v0", 1, 0.5, runs=0.0),
        _row("v1", 2, 0.7, runs=0.0),
        _row("v2", 3, 0.6, runs=0.0),
    ]
    s = compute_stats(
        "s",
        rows,
        unattributed=[("2026-01-01T00:00:01", {"usd": 1.0}), ("2026-01-01T00:00:05", {"usd": 3.0})],
    )
    assert s.historical_best["version"] == "v1"  # created at :02; the :05 spend came after it
    assert s.spend["total"]["usd"] == 4.0 and s.spend["after_peak"]["usd"] == 3.0
    assert s.spend["after_peak_share"]["usd"] == pytest.approx(0.75)


def test_rows_can_be_given_again_with_other_parameters() -> None:
    rows = [_row("v0", 1, 0.5), _row("v1", 2, 0.8), _row("v2", 3, 0.79)]
    assert compute_stats("s", rows, params=SearchParams(margin=0.0)).post_peak["regressions"] == [
        "v2"
    ]
    again = compute_stats("s", rows, params=SearchParams(margin=0.05))
    assert (
        again.post_peak["regressions"] == []
        and not rows[2].regression
        and rows[2].drop == pytest.approx(0.01)
    )
    lower = compute_stats("s", rows, params=SearchParams(direction="min"))
    assert lower.historical_best["version"] == "v0" and not rows[1].peak and rows[0].peak
    assert [r.id for r in rows if r.after_peak] == ["v1", "v2"]
