"""The signal layer: is training getting a learning signal, and is it stable?

Analyzers over the rollouts and signals a run recorded in its **train** phase (of the judge's
rows only the number of non-finite ones is read: they may describe hidden tasks). Groups are
``(step, group_id)``
of the train rollouts, as in :func:`evotree.harness.query.dead_group_ratio`; only finite rewards count
(a non-finite reward is stored as null with ``nonfinite`` true).

=========================  ==============================================  =====================
analyzer                   finding codes (severity)                         default thresholds
=========================  ==============================================  =====================
signal.dead_groups         signal.dead_groups_high (warn, critical),        std < 1e-3; unsolved
                           signal.dead_groups_solved (info, warn)           > 25 % warn, > 50 %
                                                                            critical; solved > 25 %
                                                                            info, > 50 % warn
signal.solve_rates         signal.all_solved_high (warn),                   all-solved > 30 %;
                           signal.none_solved_high (warn, high)             none-solved > 50 % / 80 %
signal.reward_trend        signal.reward_plateau (warn),                    last 50 % of steps,
                           signal.reward_declining (high)                   OLS slope, p < 0.05
signal.entropy_collapse    signal.entropy_collapse (warn, high)             drop > 50 % / 80 %
signal.echo_trap           signal.echo_trap (high)                          falls >= 30 %, spike 5x
signal.kl_clip             signal.kl_high, signal.kl_spike,                 kl > 0.5; clip > 0.2;
                           signal.clip_ratio_high, signal.clip_ratio_spike  spike 10x (warn/high)
signal.nonfinite           signal.nonfinite_values (high)                   any row
signal.truncation_trend    signal.truncation_rising (warn, high)            p < 0.05, late >= 5 %
=========================  ==============================================  =====================

**Group-based runs only.** Dead groups and solve rates describe GRPO-style groups: several
completions of one prompt, whose rewards are compared with each other. They are judged only on
runs whose train rollouts have that shape
(:func:`evotree.diagnostics.signal_series.is_group_run`: most ``(step, group_id)``
groups hold at least two samples of a single ``task_id``), as the math domain and a custom
domain recording ``rollout_group(..., rewards=[several])`` do. A gym run records one rollout
per episode, grouped by environment (many ``task_id`` per group): equal returns there are
episodes played alike (a solved CartPole returns 500 every time), not a lost advantage signal,
so nothing is reported; nor on runs of single-sample groups.

Shared sub-results (materialized once per run by :class:`evotree.diagnostics.findings.AnalysisContext`):
``run_groups`` (:func:`evotree.diagnostics.signal_series.groups_sql`, one row per group: size, finite-reward count, mean,
population std, min, max, truncation counts); the per-step series are computed from it. Every
finding's ``evidence["query"]`` is the SQL (over the views, the shared table inlined as a
``WITH`` clause) whose rows the numbers were computed from; secondary queries are under
``query_<what>`` keys.

The analyzers live in one module per family, registered by importing this module in the
table's order (the registry's order, and so the order of findings of equal rank):
:mod:`~evotree.diagnostics.signal_groups` (dead groups, solve rates),
:mod:`~evotree.diagnostics.signal_reward` (reward trend, reward below start),
:mod:`~evotree.diagnostics.signal_collapse` (entropy collapse, echo trap),
:mod:`~evotree.diagnostics.signal_update` (KL and clipping, non-finite values) and
:mod:`~evotree.diagnostics.signal_truncation`; their shared building blocks are in
:mod:`~evotree.diagnostics.signal_series`.
"""

# findings.BUILTIN_MODULES names this module; FAMILIES is the layer's order (the registry's)
from evotree.diagnostics import (
    signal_groups,
    signal_reward,
    signal_collapse,
    signal_update,
    signal_truncation,
)

#: the layer's analyzer modules, in the order their analyzers run and their findings rank
FAMILIES = (
    signal_groups,
    signal_reward,
    signal_collapse,
    signal_update,
    signal_truncation,
)

__all__ = ["FAMILIES"]
