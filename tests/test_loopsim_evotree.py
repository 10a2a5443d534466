"""The shipped score gate as a loopsim rule (bench/loopsim_evotree.py): it runs a handful of loops
through the gate's own functions, never deadlocks, asks for the seeds the gate plans, and keeps
neutral changes out on a clean first comparison."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import loopsim as L  # noqa: E402  (bench/ is not a package)
import loopsim_evotree as E  # noqa: E402

from evotree.gates.score import ScoreRule  # noqa: E402


def _loops(rule: object, n: int, noise: float = 1.0, proposals: int = 12) -> list:
    cfg = L.WorldConfig(seed=3).with_noise(noise)
    return [L.run_loop(rule, L.LoopWorld(cfg, i, proposals), 40, 20 * proposals) for i in range(n)]


def test_gate_runs_loops_without_deadlock_and_follows_its_looks() -> None:
    gate = E.make()
    records = _loops(gate, 4, noise=2.0)
    props = [p for r in records for p in r.proposals]
    assert len(props) == 4 * 12
    assert {p.decision for p in props} <= {"promote", "reject"}  # no deadlock, no budget cut
    looks = set(ScoreRule().looks())
    for p in props:
        # a proposal's candidate runs stop at one of the gate's looks; the champion's re-runs
        # (4 for a fresh champion, then as many as the candidate's) fit in the cap
        assert p.runs - p.champion_runs in looks
        assert p.runs <= 40
    # the gate decided from its own verdicts, and it asked for more seeds at some point
    assert gate.verdicts.get("more_seeds", 0) > 0
    assert sum(gate.verdicts.get(v, 0) for v in ("fail", "futile")) > 0
    # a promoted candidate is never trusted on its promotion runs: the next proposal re-runs it
    for r in records:
        for before, after in zip(r.proposals, r.proposals[1:]):
            if before.decision == "promote":
                assert after.champion_runs >= ScoreRule().champion_seeds


def test_gate_rejects_a_neutral_first_comparison_that_greedy_takes() -> None:
    cfg = L.WorldConfig(seed=5, force_first_neutral=True)
    worlds = [L.LoopWorld(cfg, 10_000_000 + i, 30) for i in range(40)]
    gate, greedy = E.make(), L.GreedyK(1)
    kept_gate = sum(
        L.run_loop(gate, w, 40, 600, first_only=True).proposals[0].decision == "promote"
        for w in worlds
    )
    kept_greedy = sum(
        L.run_loop(greedy, w, 40, 600, first_only=True).proposals[0].decision == "promote"
        for w in worlds
    )
    assert kept_greedy >= 10  # about half
    assert kept_gate <= 3  # alpha 0.025 one-sided


def test_search_level_stop_ends_a_loop_after_patience_misses() -> None:
    rule = E.make(patience=2)
    records = _loops(rule, 3, proposals=30)
    for r in records:
        decisions = [p.decision for p in r.proposals]
        if r.stopped_early:
            assert decisions[-2:] == ["reject", "reject"]
        else:
            assert len(decisions) == 30
    assert any(r.stopped_early for r in records)
