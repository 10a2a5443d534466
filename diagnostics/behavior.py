"""The behavior layer: what the policy actually produced in its train rollouts.

Analyzers over the contents of a run's **train** rollouts (lengths, finish reasons, texts,
commands) and, for the reward-vs-eval check, its judge scores against the parent's.

=========================  ===============================================  ======================
analyzer                   finding codes (severity)                          default thresholds
=========================  ===============================================  ======================
behavior.length            behavior.length_distribution (info),              KS p < 0.05 and
                           behavior.length_shift (warn, high)                D >= 0.1 / 0.3
behavior.finish            behavior.truncation_rate_high (warn, high),       > 10 % / 30 %;
                           behavior.format_failure_high (warn, high)         > 5 % / 20 %
behavior.tools             behavior.tool_usage (info),                       failures > 20 % / 50 %
                           behavior.tool_failure_high (warn, high)           of tool-using rollouts
behavior.diversity         behavior.template_collapse (warn, high)           pairwise sim >= 0.8 in
                                                                             > 30 % / 60 % of groups
                                                                             of texts >= 3 words
behavior.repetition        behavior.repetition_high (warn, high)             > 10 % / 30 % of texts
behavior.git_history       behavior.git_history_commands (warn, high)        any / >= 5 % of rollouts
behavior.reward_eval       behavior.reward_up_eval_down (high)               p < 0.05 / CI below 0
behavior.gym               behavior.gym_episodes (info),                     failures > 10 % / 50 %;
                           behavior.gym_failures_high (warn, high),          normalized action
                           behavior.gym_action_collapse (warn)               entropy < 0.1
=========================  ===============================================  ======================

**Gym runs** (every sampled train rollout has ``task_id`` = ``group_id + "#" + number``, the
layout of :mod:`evotree.domains.gym.train`) get the gym analyzer; the text analyzers (diversity,
repetition), the finish-reason rates and the length analyzer skip them, because their texts are
generated summaries, a ``truncated`` episode there is the environment's time limit (often
success), and an episode's length is the task's outcome (longer is better on CartPole, worse on
MountainCar), not a completion's length; the gym analyzer reports lengths per environment.

**Short answers.** Template collapse is judged only on groups whose texts average at least
``min_words`` words (default 3, one more than the bigrams compared). A one- or two-word answer
(the math domain's ``" 7"``) has no template to collapse onto: its samples are either the same
answer or not, and a group of equal answers is agreement, which the signal layer's dead-group
and solve-rate findings report (solved or not).

**Text sample.** Diversity and repetition read texts of at most ``sample_groups`` groups
(default 2,000): half from the earliest steps, half from the latest (a group is
``(step, group_id)``); when a boundary step holds more groups than needed, groups are taken in
the order of DuckDB's ``hash(step, group_id, seed)`` (fixed ``seed``, default 0). Texts are cut
to their first ``max_chars`` characters, lower-cased and split into words at spaces, tabs and
line breaks.
Verdicts use the late half; the early half is in the evidence for contrast. Reading only the
two ends keeps the cost bounded: Parquet row groups in between are skipped.

**Tool calls** are the ``commands`` column. A tool-using rollout *failed* when its
``finish_reason`` is in ``tool_failure_reasons`` (default ``error``, ``tool_error``) or one of
its reward components whose name contains ``tool_error`` is above 0 (component names are read
from the first 1,000 train rollouts).

**Git history commands**: a command string in which a token ``git`` (or a path ending in
``/git``), after git's own options (``-C DIR``, ``-c KEY=VALUE``, ``--flag``), is followed by a
history subcommand (``log``, ``show``, ``reflog``, ``rev-list``, ``cat-file``, ``whatchanged``,
``shortlog``, ``blame``, ``fsck``, ``ls-tree``). A token check, not a shell parser (the audit
layer parses shells); ``sh -c "git log"`` is found, ``g=git; $g log`` is not.

The analyzers live in one module per family, registered by importing this module in the table's
order (the registry's order, and so the order of findings of equal rank):
:mod:`~evotree.diagnostics.behavior_lengths`, :mod:`~evotree.diagnostics.behavior_failures`
(finish reasons, tools), :mod:`~evotree.diagnostics.behavior_text` (diversity, repetition),
:mod:`~evotree.diagnostics.behavior_git`, :mod:`~evotree.diagnostics.behavior_reward_eval` and
:mod:`~evotree.diagnostics.behavior_gym`; what they share about a run's rollouts is in
:mod:`~evotree.diagnostics.behavior_rollouts`.
"""

# findings.BUILTIN_MODULES names this module; FAMILIES is the layer's order (the registry's)
from evotree.diagnostics import (
    behavior_lengths,
    behavior_failures,
    behavior_text,
    behavior_git,
    behavior_reward_eval,
    behavior_gym,
)

#: the layer's analyzer modules, in the order their analyzers run and their findings rank
FAMILIES = (
    behavior_lengths,
    behavior_failures,
    behavior_text,
    behavior_git,
    behavior_reward_eval,
    behavior_gym,
)

__all__ = ["FAMILIES"]
