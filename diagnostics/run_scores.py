"""The judge's scores of runs, read from their checked evidence, and the tree's run-to-run spread.

:func:`eval_rows` reads each run's per-task scores from its own directory, checked against the
run's manifest as it is read; :func:`by_seed` makes seeds, not runs, the rows; and
:func:`tree_spread` pools the run-to-run spread of a run's mean score over every comparable
version of the tree (same split, task pool and judge), from one walk of the ledger cached per
ledger head. :mod:`evotree.diagnostics.compare` builds its one comparison on them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from evotree.core.errors import EvotreeError
from evotree.core.workspace import Workspace
from evotree.diagnostics.stats import RunSpread, pooled_spread, spread_term
from evotree.harness.compaction import all_null_sql, hidden_forged_sql, jsonl_select
from evotree.harness.compaction import select_list_sql, sql_string
from evotree.harness.integrity import RunEvidence
from evotree.harness.layout import RunPaths
from evotree.harness.provenance import check_run, runner_keys_text
from evotree.harness.records import runs_dir

__all__ = ["by_seed", "eval_rows", "tree_spread"]


def eval_rows(base: Any, runs: list[Any], split: str) -> list[tuple[str, str, float]]:
    """(run id, task id, mean score) of the judge's scores on ``split``, read from each run's own
    directory (its ``evals.parquet``, else its eval JSONL with compaction's rules), and only rows
    carrying that run's id. Each file is read once into a private copy, checked against the run's
    manifest as it is read (:meth:`evotree.harness.integrity.RunEvidence.read_verified`), and the
    copy is queried: a file swapped after the check is never read."""
    import duckdb

    with tempfile.TemporaryDirectory(prefix="evotree-evals-") as tmp:
        parts = []
        for index, run in enumerate(runs):
            paths = RunPaths(Path(base) / run.run_id)
            rid = sql_string(run.run_id)
            if paths.parquet("evals").is_file():
                copy = Path(tmp) / f"{index}.parquet"
                copy.write_bytes(run.read_verified(paths.root, "evals.parquet"))
                parts.append(
                    f"SELECT run_id, phase, split, task_id, score FROM read_parquet({sql_string(str(copy))}, "
                    f"can_have_nan=true) WHERE run_id = {rid}"
                )
                continue
            evidence = paths.root / "evidence"
            for phase_dir in (
                sorted(p for p in evidence.iterdir() if p.is_dir()) if evidence.is_dir() else []
            ):
                if not (phase_dir / "evals.jsonl").is_file():
                    continue
                copy = Path(tmp) / f"{index}-{len(parts)}.jsonl"
                copy.write_bytes(
                    run.read_verified(paths.root, f"evidence/{phase_dir.name}/evals.jsonl")
                )
                parts.append(
                    f"SELECT run_id, phase, split, task_id, score FROM (SELECT {select_list_sql('evals')} FROM "
                    f"{jsonl_select('evals', [copy])} WHERE NOT {all_null_sql('evals')} AND NOT "
                    f"coalesce({hidden_forged_sql(phase_dir.name)}, false)) WHERE run_id = {rid}"
                )
        if not parts:
            return []
        con = duckdb.connect()
        try:
            return con.execute(
                "SELECT run_id, task_id, avg(score) FROM (" + " UNION ALL ".join(parts) + ") "
                "WHERE split = ? AND phase = 'eval' AND score IS NOT NULL GROUP BY ALL ORDER BY 1, 2",
                [split],
            ).fetchall()
        finally:
            con.close()


def by_seed(
    matrix: np.ndarray, run_ids: list[str], seeds: dict[str, int | None]
) -> tuple[np.ndarray, list[int]]:
    """One row per distinct seed (repeated runs of a seed averaged): seeds, not runs, are the
    units, so re-running a lucky seed cannot shrink the spread a comparison sees."""
    groups: dict[int, list[int]] = {}
    for row, rid in enumerate(run_ids):
        known = seeds.get(rid)
        groups.setdefault(int(known) if known is not None else -1 - row, []).append(row)
    order = sorted(groups)
    return np.array([matrix[groups[s]].mean(axis=0) for s in order]), order


_TREE_CACHE: dict[
    tuple[str, str, str], list[tuple[str, str | None, str | None, list[str], np.ndarray]]
] = {}


def _tree_groups(
    ws: Workspace, split: str
) -> list[tuple[str, str | None, str | None, list[str], np.ndarray]]:
    """(version, commit, judge commit, task ids, (n_seeds, n_tasks) scores) of every group of
    succeeded runs the ledger records (one ledger walk; each evals file checked against its
    run's manifest as it is read; a run that cannot be read, or that is foreign —
    :func:`evotree.harness.provenance.check_run` — is left out). Cached per ledger head."""

    head = ws.ledger.head()
    key = (str(ws.root), str(head.id) if head is not None else "", split)
    if key in _TREE_CACHE:
        return _TREE_CACHE[key]
    started, finished = _run_events(ws)
    groups = _trusted_run_groups(ws, started, finished)
    out = []
    base = runs_dir(ws)
    for (version, commit, judge), runs in sorted(
        groups.items(), key=lambda kv: tuple(map(str, kv[0]))
    ):
        found = _group_scores(base, runs, split)
        if found is not None:
            out.append((version, commit, judge, *found))
    if len(_TREE_CACHE) > 32:
        _TREE_CACHE.clear()
    _TREE_CACHE[key] = out
    return out


def _run_events(ws: Workspace) -> tuple[dict[str, Any], dict[str, Any]]:
    """(run id -> its newest ``run.started`` event, run id -> its newest ``run.finished``)."""
    started: dict[str, Any] = {}
    finished: dict[str, Any] = {}
    for entry in ws.ledger.entries():  # newest first
        event = entry.event
        rid = event.data.get("run_id") if isinstance(event.data, dict) else None
        if not isinstance(rid, str) or not rid:
            continue
        if event.kind == "run.started":
            started.setdefault(rid, event)
        elif event.kind == "run.finished":
            finished.setdefault(rid, event)
    return started, finished


def _trusted_run_groups(
    ws: Workspace, started: dict[str, Any], finished: dict[str, Any]
) -> dict[tuple[str, str | None, str | None], list[RunEvidence]]:
    """(version, commit, judge commit) -> the succeeded runs with an evidence manifest that are
    not foreign (:func:`evotree.harness.provenance.check_run`)."""
    runner_keys = runner_keys_text(ws)
    groups: dict[tuple[str, str | None, str | None], list[RunEvidence]] = {}
    for rid, fin in finished.items():
        manifest = fin.data.get("evidence")
        if (
            fin.data.get("status") != "succeeded"
            or not isinstance(manifest, dict)
            or not isinstance(manifest.get("files"), dict)
            or rid not in started
        ):
            continue
        sdata = started[rid].data
        if not check_run(
            ws, rid, str(fin.version), sdata, fin.data, runner_keys=runner_keys
        ).trusted:
            continue  # foreign evidence (harness.provenance): in no spread, like in no comparison
        seed = fin.data.get("seed", sdata.get("seed"))
        run = RunEvidence(
            run_id=rid,
            version=str(fin.version),
            state="ok",
            seed=seed if isinstance(seed, int) and not isinstance(seed, bool) else None,
            commit=sdata.get("commit"),
            judge_commit=sdata.get("judge_commit"),
            started_at=started[rid].at,
            status="succeeded",
            expected=dict(manifest["files"]),
        )
        groups.setdefault((run.version, run.commit, run.judge_commit), []).append(run)
    return groups


def _group_scores(
    base: Any, runs: list[RunEvidence], split: str
) -> tuple[list[str], np.ndarray] | None:
    """(common task ids, (n_seeds, n_tasks) scores) of one group's runs; None with fewer than
    two seeds, unreadable evidence or no common task."""
    if len({r.seed for r in runs}) < 2:
        return None
    try:
        rows = eval_rows(base, runs, split)
    except (OSError, EvotreeError):
        return None
    by_run: dict[str, dict[str, float]] = {}
    for rid, task, score in rows:
        by_run.setdefault(rid, {})[task] = float(score)
    if len(by_run) < 2:
        return None
    tasks = sorted(set.intersection(*(set(v) for v in by_run.values())))
    if not tasks:
        return None
    ids = sorted(by_run)
    matrix = np.array([[by_run[r][t] for t in tasks] for r in ids])
    seeded, _ = by_seed(matrix, ids, {r.run_id: r.seed for r in runs})
    if seeded.shape[0] < 2:
        return None
    return tasks, seeded


def tree_spread(
    ws: Workspace,
    *,
    split: str,
    tasks: list[str],
    judges: list[str] | None,
    sides: list[np.ndarray],
    exclude: tuple[str, ...] = (),
) -> RunSpread:
    """The run-to-run spread of a run's mean score, pooled over the comparable versions of the tree.

    Comparable: runs of one version and commit, scored on ``split`` over (at least) ``tasks`` by
    one of ``judges`` (None: any), two or more seeds. ``sides``: the compared sides' own
    matrices (always in); ``exclude``: their versions (not counted twice). Versions whose runs are
    identical copies are counted apart (:func:`evotree.diagnostics.stats.pooled_spread`).
    """
    terms = [spread_term(m) for m in sides]
    wanted = set(tasks)
    for version, _commit, judge, group_tasks, matrix in _tree_groups(ws, split):
        if version in exclude or (judges is not None and judge not in judges):
            continue
        if not wanted <= set(group_tasks):
            continue
        cols = [group_tasks.index(t) for t in tasks]
        terms.append(spread_term(matrix[:, cols]))
    return pooled_spread(terms)
