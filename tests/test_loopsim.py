"""The independent loop simulator (bench/loopsim): its baselines behave as theory says, every rule
meets the same proposals, and the accounting (ceiling share, deadlocks) is right."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import loopsim as L  # noqa: E402  (bench/ is not a package)

SMALL = L.Setup(loops=12, proposals=10, seeds=(3,), first_loops=0, bootstrap=200)


def _summary(raw: dict, name: str, cfg: L.WorldConfig, setup: L.Setup = SMALL) -> dict:
    return L.summarize(
        raw[name]["loops"], raw["ceiling"]["loops"], raw[name]["first"], cfg.neutral_band, setup
    )


def test_the_ceiling_promotes_exactly_the_better_changes_and_captures_all() -> None:
    cfg = L.WorldConfig()
    raw = L.run_rules({}, cfg, SMALL)
    records = raw["ceiling"]["loops"]
    gains = 0.0
    for rec in records:
        value = rec.v0
        for p in rec.proposals:
            assert (p.decision == "promote") == (p.true_effect > 0)
            assert p.runs == 0
            value += p.true_effect if p.decision == "promote" else 0.0
        assert rec.final == pytest.approx(value)
        assert rec.final >= rec.peak - 1e-12
        gains += rec.final - rec.v0
    assert gains > 0
    row = _summary(raw, "ceiling", cfg)
    assert row["ceiling_share"]["mean"] == pytest.approx(1.0)
    assert row["below_peak"]["k"] == 0 and row["runs_per_loop"] == 0


def test_a_rule_that_always_rejects_captures_nothing_and_promotes_no_neutral_change() -> None:
    cfg = L.WorldConfig()
    raw = L.run_rules({"reject": L.AlwaysReject}, cfg, SMALL)
    row = _summary(raw, "reject", cfg)
    assert row["ceiling_share"]["mean"] == 0.0
    assert row["final_gain"]["mean"] == 0.0
    assert row["neutral_promoted_tree"]["k"] == 0 and row["neutral_promoted_tree"]["n"] > 0
    assert row["runs_per_loop"] == 0 and row["deadlocks"]["k"] == 0


@pytest.mark.parametrize("margin", [0.0, 0.02])
def test_greedy_1_promotes_neutral_first_changes_at_the_rate_its_noise_implies(
    margin: float,
) -> None:
    """One candidate run against one champion run: a neutral change (effect ~ N(0, 0.002)) clears
    ``margin`` with probability Phi(-margin / sqrt(2 sd^2 + 0.002^2)), sd the run-to-run SD (no
    pool interaction or collapses here, so the seed noise is all there is)."""
    cfg = L.WorldConfig(pool_tau=0.0, collapse_prob=0.0)
    setup = L.Setup(loops=0, proposals=5, seeds=(0,), first_loops=500, bootstrap=10)
    raw = L.run_rules({"g1": lambda: L.GreedyK(1, margin=margin)}, cfg, setup)
    first = raw["g1"]["first"]
    assert len(first) == 500 and all(p.component == "neutral" for p in first)
    rate = sum(p.decision == "promote" for p in first) / len(first)
    sd = math.hypot(math.sqrt(2) * cfg.seed_sd, cfg.neutral_sd)
    theory = 0.5 * math.erfc(margin / sd / math.sqrt(2))
    assert abs(rate - theory) < 0.055, (rate, theory)


def test_every_rule_meets_the_same_proposals_and_a_rerun_is_identical() -> None:
    cfg = L.WorldConfig()
    rules = {"g1": lambda: L.GreedyK(1), "g3": lambda: L.GreedyK(3), "reject": L.AlwaysReject}
    raw = L.run_rules(rules, cfg, SMALL)
    again = L.run_rules(rules, cfg, SMALL)
    for name in ["ceiling", *rules]:
        assert raw[name]["loops"] == again[name]["loops"]
    for i in range(SMALL.loops):
        streams = {name: [p.component for p in raw[name]["loops"][i].proposals] for name in raw}
        assert len({tuple(s) for s in streams.values()}) == 1
        # the first proposal meets the same champion (the root) under every rule
        firsts = {raw[name]["loops"][i].proposals[0].true_effect for name in raw}
        assert len(firsts) == 1
    a, b = L.LoopWorld(cfg, 7, 10), L.LoopWorld(cfg, 7, 10)
    assert [(p.base_effect, p.group) for p in a.proposals] == [
        (p.base_effect, p.group) for p in b.proposals
    ]
    # a recipe's k-th run does not depend on who asked first or how often
    assert b.run(b.root, 5)[0] == a.run(a.root, 5)[0] == b.run(b.root, 5)[0]


def test_a_rule_that_never_decides_is_cut_at_the_cap_and_counted_as_deadlocked() -> None:
    cfg = L.WorldConfig()
    setup = L.Setup(
        loops=3,
        proposals=4,
        seeds=(0,),
        proposal_cap=5,
        loop_budget=1000,
        first_loops=0,
        bootstrap=10,
    )
    raw = L.run_rules({"stuck": L.NeverDecide}, cfg, setup)
    for rec in raw["stuck"]["loops"]:
        assert [p.decision for p in rec.proposals] == ["deadlock"] * 4
        assert [p.runs for p in rec.proposals] == [5] * 4
        assert rec.final == rec.v0
    row = _summary(raw, "stuck", cfg, setup)
    assert row["deadlocks"]["k"] == 12 and row["loops_with_deadlock"] == 3


def test_the_loop_budget_ends_a_loop_and_stop_loop_is_obeyed() -> None:
    cfg = L.WorldConfig()
    setup = L.Setup(
        loops=2,
        proposals=10,
        seeds=(0,),
        proposal_cap=40,
        loop_budget=9,
        first_loops=0,
        bootstrap=10,
    )
    raw = L.run_rules(
        {"g4": lambda: L.GreedyK(4), "quit": lambda: L.SequentialMargin(futility=2)}, cfg, setup
    )
    for rec in raw["g4"]["loops"]:
        assert rec.runs == 9 and rec.budget_exhausted and rec.proposals[-1].decision == "budget"
    for rec in raw["quit"]["loops"]:
        assert rec.runs <= 9


def test_doubling_the_seed_noise_doubles_the_run_to_run_sd() -> None:
    stats = L.world_stats(L.WorldConfig(), [1, 2], loops=40, runs=6)
    assert 0.010 < stats["run_sd_1x"] < 0.020
    assert 1.7 < stats["run_sd_2x"] / stats["run_sd_1x"] < 2.1


def test_the_cli_loads_a_rule_from_a_file_and_runs_the_baselines_beside_it(tmp_path: Path) -> None:
    import json

    import loopsim_run

    rule = tmp_path / "my_rule.py"
    rule.write_text(
        "from loopsim import Action\n"
        "class Twice:\n"
        "    def __init__(self, k=2):\n"
        "        self.k, self.name = k, f'twice-{k}'\n"
        "    def decide(self, state):\n"
        "        if len(state.candidate_scores) < self.k:\n"
        "            return Action.run_candidate(self.k)\n"
        "        return Action.reject()\n"
        "def make(**kw):\n"
        "    return Twice(**kw)\n"
    )
    out = tmp_path / "out.json"
    assert (
        loopsim_run.main(
            [
                "--rule",
                f"{rule}:make",
                "--rule-kwargs",
                '{"k": 9}',
                "--loops",
                "3",
                "--proposals",
                "4",
                "--noise",
                "1",
                "--first-loops",
                "4",
                "--stats-loops",
                "3",
                "--json",
                str(out),
            ]
        )
        == 0
    )
    block = json.loads(out.read_text())["results"]["1x"]
    rows = block["rules"]
    assert set(rows) == {"ceiling", "twice-9", "greedy-1", "greedy-7"}
    assert block["matched_greedy"] == {"twice-9": "greedy-7"}  # 36 runs over 4 + 1 comparisons
    assert rows["twice-9"]["runs_per_loop"] == 36 and rows["twice-9"]["ceiling_share"]["mean"] == 0
    assert rows["twice-9"]["neutral_promoted_first_clean"]["n"] == 4
