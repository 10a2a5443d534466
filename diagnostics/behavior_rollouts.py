"""What the behavior layer's analyzers share about a run's train rollouts: SQL for its train
rows, the gym-run test and the reward components' names and values."""

from __future__ import annotations

import json
import re
from typing import Any

from evotree.diagnostics.findings import AnalysisContext, query
from evotree.harness.compaction import sql_string

__all__ = [
    "TRAIN_PHASE",
    "component_names",
    "component_value_sql",
    "is_gym_run",
    "json_key",
    "run_train",
    "sql_list",
]


#: SQL: a row of the train phase.
TRAIN_PHASE = "phase = 'train'"


def run_train(run_id: str) -> str:
    """SQL: the rows of ``run_id``'s train phase."""
    return f"run_id = {sql_string(run_id)} AND {TRAIN_PHASE}"


def sql_list(values: Any) -> str:
    """SQL: ``values`` as the list of an ``IN`` (``(NULL)`` when empty: matches nothing)."""
    return "(" + ", ".join(sql_string(v) for v in values) + ")" if values else "(NULL)"


def is_gym_run(con: Any, run_id: str, context: AnalysisContext | None = None) -> bool:
    """True when the run's first 1,000 train rollouts all have ``task_id`` = ``group_id#N``."""

    def compute() -> bool:
        rows, _ = query(
            con,
            (
                "SELECT count(*) AS n, count(*) FILTER (WHERE starts_with(task_id, group_id || '#') AND "
                "regexp_full_match(task_id, '.+#[0-9]+')) AS gym FROM (SELECT task_id, group_id FROM _rollouts "
                f"WHERE {run_train(run_id)} LIMIT 1000)"
            ),
        )
        n, gym = rows[0]
        return bool(n) and gym == n

    if context is None:
        return compute()
    return context.memo(run_id, "is_gym", compute)


def component_names(con: Any, run_id: str, context: AnalysisContext | None = None) -> list[str]:
    """Reward component names in the first 1,000 train rollouts of the run."""

    def compute() -> list[str]:
        rows, _ = query(
            con,
            (
                "SELECT DISTINCT unnest(json_keys(CASE WHEN json_valid(components) THEN components END)) AS name "
                f"FROM (SELECT components FROM _rollouts WHERE {run_train(run_id)} AND components IS NOT NULL LIMIT 1000) "
                "ORDER BY name"
            ),
        )
        return [r[0] for r in rows if r[0] is not None]

    if context is None:
        return compute()
    return context.memo(run_id, "components", compute)


def component_value_sql(name: str) -> str:
    """SQL: the numeric value of reward component ``name`` of a rollout (null if absent).

    A regular expression over the flat JSON object (an order of magnitude cheaper than JSON
    parsing at 10M rows): ``"name": <number>``.
    """
    pattern = '"' + re.escape(json_key(name)) + r'"\s*:\s*(-?[0-9][0-9.eE+-]*)'
    return f"TRY_CAST(nullif(regexp_extract(components, {sql_string(pattern)}, 1), '') AS DOUBLE)"


def json_key(name: str) -> str:
    """``name`` as it appears between the quotes of a JSON key written by ``json.dumps``."""
    return json.dumps(name)[1:-1]
