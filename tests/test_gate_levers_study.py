"""The non-default levers of the decision-goal study (docs/benchmarks/decision-goal.md, "Levers
studied"): a new champion that keeps its promotion runs, shifted down by a winner's-curse
correction, in the project's simulator and in the loopsim adapter; ScoreRule settings passed to
both benches. Off by default: the shipped gate re-runs a new champion from scratch."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import bench_decision_goal as B  # noqa: E402  (bench/ is not a package)
import loopsim as L  # noqa: E402
import loopsim_evotree as E  # noqa: E402

from evotree.gates.calibration import Levers, Proposals, SimModel, _Loop, TreeStats  # noqa: E402
from evotree.gates.calibration import simulate_tree  # noqa: E402
from evotree.gates.score import ScoreRule  # noqa: E402


def test_promotion_runs_are_kept_shifted_down_by_the_curse_correction() -> None:
    model = SimModel()
    rng = np.random.default_rng(0)
    stats = TreeStats("gate", 1, 1)
    candidate = rng.uniform(0.2, 0.8, size=(3, model.n_tasks))
    for levers, expect in (
        (Levers(reuse_promotion_runs=True, curse_shift=2.0), candidate - 0.02),
        (Levers(reuse_promotion_runs=True), candidate),
        (Levers(curse_shift=2.0), np.empty((0, model.n_tasks))),  # shipped: re-run from scratch
    ):
        loop = _Loop(model, ScoreRule(), levers, rng, stats)
        loop.ready_champion(4)
        loop.promoted_se = 0.01
        loop.promote(0.02, candidate)
        assert loop.champion.shape == expect.shape
        assert np.allclose(loop.champion, expect)
        assert loop.quality == pytest.approx(0.02)


def test_kept_promotion_runs_save_champion_reruns_in_the_project_simulator() -> None:
    mix = Proposals(p_harmful=0.0, p_neutral=0.0, helpful=(0.03, 0.04))  # many promotions
    kw = dict(loops=3, steps=6, proposals=mix, seed=5)
    shipped = simulate_tree("gate", **kw)
    reused = simulate_tree("gate", levers=Levers(reuse_promotion_runs=True, curse_shift=1.0), **kw)
    assert shipped.promoted_helpful >= 3 and reused.promoted_helpful >= 3
    assert reused.champion_runs < shipped.champion_runs


def _loops(rule: object, n: int) -> list:
    cfg = L.WorldConfig(seed=3)
    return [L.run_loop(rule, L.LoopWorld(cfg, i, 12), 40, 240) for i in range(n)]


def test_the_adapter_reuses_promotion_runs_only_when_asked() -> None:
    shipped, reused = E.make(), E.make(reuse_promotion_runs=True, curse_shift=1.0)
    assert not shipped.reuse and reused.reuse and reused.curse_shift == 1.0
    a, b = _loops(shipped, 6), _loops(reused, 6)
    promotions = sum(p.decision == "promote" for r in b for p in r.proposals)
    assert promotions >= 2
    assert {p.decision for r in b for p in r.proposals} <= {"promote", "reject"}

    def after_promotion(records: list) -> list[int]:
        return [
            nxt.champion_runs
            for r in records
            for before, nxt in zip(r.proposals, r.proposals[1:])
            if before.decision == "promote"
        ]

    # shipped: a new champion is re-run champion_seeds times before its first comparison
    assert all(n >= ScoreRule().champion_seeds for n in after_promotion(a))
    # reused: a champion promoted on 4 or more runs needs no re-run to start comparing
    assert min(after_promotion(b)) < ScoreRule().champion_seeds
    assert sum(r.champion_runs for r in b) < sum(r.champion_runs for r in a)


def test_rule_settings_reach_the_adapter_and_the_project_bench() -> None:
    gate = E.make(rule={"champion_seeds": 3, "schedule": [1, 2, 4]})
    assert gate.rule.champion_seeds == 3 and gate.rule.looks() == (1, 2, 4)
    assert gate.rule.min_delta == E.SHIPPED.min_delta  # the rest stays shipped
    assert B.settings(["spending=1", "schedule=[1,2,4,8]"], ScoreRule) == {
        "spending": 1,
        "schedule": (1, 2, 4, 8),
    }
    assert B.settings(["reuse_promotion_runs=true"], Levers) == {"reuse_promotion_runs": True}
    with pytest.raises(SystemExit):
        B.settings(["no_such_setting=1"], ScoreRule)


def test_champion_top_up_caps_the_champions_reruns() -> None:
    capped = ScoreRule(champion_top_up=4)
    assert [capped.champion_planned(s) for s in (1, 4, 8, 16)] == [4, 4, 4, 4]
    assert [ScoreRule().champion_planned(s) for s in (1, 4, 8, 16)] == [4, 4, 8, 16]
    # fewer champion runs planned: less information at the late looks, other thresholds
    assert capped.alpha_at(8) != ScoreRule().alpha_at(8)
    records = _loops(E.make(rule={"champion_top_up": 4}), 6)
    shipped = _loops(E.make(), 6)
    for r in records:
        promotions = sum(p.decision == "promote" for p in r.proposals)
        assert r.champion_runs <= 4 * (promotions + 1)  # never re-run beyond its first 4
        assert {p.decision for p in r.proposals} <= {"promote", "reject"}
    assert sum(r.champion_runs for r in records) < sum(r.champion_runs for r in shipped)


def test_levers_table_measures_the_gap_to_greedy_k_interpolated_at_the_levers_runs() -> None:
    import decision_goal_levers as T

    rate = {"rate": 0.01}
    gate = {
        "neutral_tree": rate,
        "neutral_first_clean": rate,
        "below_peak": {"rate": 0.0},
        "deadlocks": 0,
        "ceiling_share": 0.65,
        "runs_per_loop": 93.0,
    }
    norm = {sim: {n: {"rules": {"gate": gate}} for n in ("1x", "2x")} for sim in ("p", "l")}
    norm = {"project": norm["p"], "loopsim": norm["l"]}
    curve = ([62.0, 124.0], [0.6, 0.8])  # greedy-2 and greedy-4: 0.70 at 93 runs
    curves = {sim: {"1x": curve, "2x": curve} for sim in ("project", "loopsim")}
    lines = T.rows("x", norm, curves)
    assert len(lines) == 2
    assert lines[0].startswith("| x | project | 1.0 / 1.0 |")
    assert lines[0].endswith("| 0.70 / 0.70 | -0.050 / -0.050 |")
