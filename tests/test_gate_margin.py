"""The score gate's margin and the per-task SE's degrees of freedom (docs/gates.md, "The rule")."""

from __future__ import annotations

import numpy as np
import pytest

from evotree.core.config_limits import GatesSection
from evotree.diagnostics.stats import difference, pooled_spread, spread_term
from evotree.gates.score import ScoreRule


def test_the_gate_and_the_config_share_the_margin() -> None:
    assert ScoreRule().min_delta == GatesSection().min_delta == pytest.approx(0.002)


def test_a_per_task_se_has_no_more_df_than_the_run_level_spread() -> None:
    rng = np.random.default_rng(0)
    tasks = rng.uniform(0.2, 0.8, size=40)
    # runs that differ little from one another, a candidate that differs from the champion a lot
    # task by task (up on some, down on others): the per-task SE is the larger
    champion = tasks + rng.normal(0, 0.01, size=(4, 40))
    candidate = tasks + rng.normal(0, 0.2, size=40) + rng.normal(0, 0.01, size=(1, 40))
    spread = pooled_spread([spread_term(champion), spread_term(candidate)])
    d = difference(champion, candidate, spread=spread, confidence=0.95)
    assert d.unit == "tasks" and d.se_runs is not None and 0 < d.se_runs < d.se_tasks
    assert spread.df == 3 and d.df <= 2 * spread.df < 39  # Welch over the two sides, not 39
    # its p comes from that t: bigger than the per-task one with 39 df
    from scipy import stats

    assert d.p_value == pytest.approx(stats.t.sf(d.delta / d.se, d.df))


def test_identical_copies_keep_the_tasks_df() -> None:
    tasks = np.linspace(0.1, 0.9, 30)
    a, b = np.tile(tasks, (3, 1)), np.tile(np.clip(tasks + 0.05, 0, 1), (2, 1))
    d = difference(a, b, confidence=0.95)
    assert d.identical == (True, True) and d.unit == "tasks" and d.df == 29
