"""Gather a version's evidence into a :class:`ReportData`.

Every number comes from a library call over the workspace: the comparison from
:func:`evotree.diagnostics.compare.compare`, per-task deltas from :func:`evotree.diagnostics.compare.version_scores`,
findings from ``.evotree/findings/<V>.jsonl`` (written by ``evotree diagnose``), the audit from
``evotree.harness.audit`` (or the last ``audit`` ledger event), curves from the DuckDB evidence views,
the lineage from :func:`evotree.core.versions.tree_view`. A section whose source is missing says why
instead of failing the whole report.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from evotree.harness.sandbox_report import sandbox_warning
from evotree.core.errors import EvotreeError
from evotree.report.model import ReportData, section_unavailable
from evotree.report.signals import collect_signals
from evotree.core.workspace import Workspace
from evotree.core.diff import diff_versions
from evotree.diagnostics.compare import compare
from evotree.diagnostics.compare import version_scores
from evotree.core.ledger import EventKind
from evotree.core.versions import tree_view
from evotree.harness.query import connect
from evotree.harness.records import runs_dir

__all__ = ["DEAD_STD_EPSILON", "LAYER_ORDER", "build_report"]

#: A GRPO group is dead when the std of its finite rewards is below this (the default of the
#: ``signal.dead_groups`` analyzer, so the curve and the finding agree).
DEAD_STD_EPSILON = 1e-3
LAYER_ORDER = ("score", "signal", "behavior", "version", "audit")
_SEVERITY_RANK = {"info": 0, "warn": 1, "high": 2, "critical": 3}
_MAX_LINEAGE = 40  # a larger tree is cut to the versions around the subject


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()


def _finite(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def build_report(
    ws: Workspace,
    version: str,
    *,
    against: str = "champion",
    split: str = "validation",
    run_audit: bool = True,
    progress: Callable[[str], None] | None = None,
) -> ReportData:
    """Build the report of ``version`` compared against ``against`` (a version id or ``champion``).

    ``run_audit``: evaluate the gates with the audit, which records it as an ``audit`` ledger
    event exactly as ``evotree gates`` does, and show that audit; when the gates cannot be
    evaluated, compute it with ``evotree.harness.audit.audit_version(record=False)``. Without
    ``run_audit`` nothing is written: the last recorded ``audit`` event is shown, and the gates'
    audit gate is unavailable.
    """
    say = progress or (lambda _msg: None)
    record = ws.resolve(version)
    other = ws.resolve(against)  # an unknown --against is an error, not a silent omission
    subject_id, against_id = record.id, other.id
    tree = ws.ledger.snapshot()
    champion = str(tree.meta.get("champion"))
    say("comparing")
    scores, per_task = _scores(ws, subject_id, against_id, split)
    say("reading findings")
    findings = _findings(ws, subject_id)
    say("evaluating gates")
    gates = _gates(ws, subject_id, run_audit)
    say("reading the audit")
    # the gate evaluation runs the audit (recording it only when it fails, as `evotree gates`
    # does): show that one rather than auditing twice; compute it only when the gates could not
    gate_audit = gates.pop("audit_report", None) if gates.get("available") else None
    audit = (
        _audit_section(gate_audit, "computed by the gate evaluation")
        if gate_audit and "passed" in gate_audit
        else _audit(ws, subject_id, run_audit and not gates.get("available"))
    )
    say("reading the tree and the evidence curves")
    lineage = _lineage(ws, subject_id, against_id)
    curves = _curves(ws, [against_id, subject_id] if against_id != subject_id else [subject_id])
    subject = {
        "id": record.id,
        "status": record.status,
        "hypothesis": record.hypothesis,
        "parents": list(record.parents),
        "branch": record.branch,
        "created_by": record.created_by,
        "created_at": record.created_at,
        "headline": record.headline,
        "champion": record.id == champion,
        "against_is_champion": against_id == champion,
    }
    verdict = _verdict(subject_id, against_id, champion, scores, findings, audit, gates)
    return ReportData(
        version=subject_id,
        against=against_id,
        generated_at=_now(),
        verdict=verdict,
        subject=subject,
        scores=scores,
        findings=findings,
        audit=audit,
        gates=gates,
        lineage=lineage,
        curves=curves,
        per_task=per_task,
        sandbox_warning=sandbox_warning(ws, subject_id),
        recipe_diff=_recipe_diff(ws, against_id, subject_id),
    )


def _recipe_diff(ws: Workspace, against: str, version: str) -> dict[str, Any]:
    """The parameters and files that differ from ``against`` (``evotree diff``), as data."""
    if against == version:
        return section_unavailable("the version is compared with itself")

    try:
        diff = diff_versions(ws, against, version)
    except EvotreeError as exc:
        return section_unavailable(f"no recipe diff: {exc.message}")
    return {
        "available": True,
        "a": diff.a,
        "b": diff.b,
        "params": diff.params,
        "files": diff.files,
        "unreadable": diff.unreadable,
    }


# ----------------------------------------------------------------------------- scores
def _scores(
    ws: Workspace, version: str, against: str, split: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    if version == against:
        reason = (
            f"{version} is the version it would be compared against; pass --against VERSION "
            "(e.g. its parent)"
        )
        return section_unavailable(reason), section_unavailable(reason)

    try:
        result = compare(ws, against, version, split=split)
    except EvotreeError as exc:
        reason = f"{exc.message}" + (f" (fix: {exc.fix})" if exc.fix else "")
        return section_unavailable(reason), section_unavailable(reason)
    comparison = result.to_dict()
    # the per-task view of the same runs the comparison used (its commits)
    commits = comparison.get("commits") or {}
    tasks_a, scores_a, _ = version_scores(ws, against, split=split, commit=commits.get("a"))
    tasks_b, scores_b, _ = version_scores(ws, version, split=split, commit=commits.get("b"))
    run_means = {
        "a": [float(v) for v in scores_a.mean(axis=1)],
        "b": [float(v) for v in scores_b.mean(axis=1)],
    }
    mean_a = dict(zip(tasks_a, scores_a.mean(axis=0).tolist()))
    mean_b = dict(zip(tasks_b, scores_b.mean(axis=0).tolist()))
    common = sorted(set(mean_a) & set(mean_b))
    deltas = [
        {"task": t, "a": mean_a[t], "b": mean_b[t], "delta": mean_b[t] - mean_a[t]} for t in common
    ]
    counts = {
        "improved": sum(d["delta"] > 0 for d in deltas),
        "worse": sum(d["delta"] < 0 for d in deltas),
        "unchanged": sum(d["delta"] == 0 for d in deltas),
    }
    scores = {
        "available": True,
        "split": split,
        "a": against,
        "b": version,
        **_comparison_fields(comparison),
        "run_means": run_means,  # each run's (seed's) mean score, per side: the scores plot's points
        "voided": _voided(comparison),
    }
    return scores, {
        "available": True,
        "tasks": deltas,
        "counts": counts,
        "groups": _task_groups(deltas),
    }


def _comparison_fields(comparison: dict[str, Any]) -> dict[str, Any]:
    """The comparison's figures the scores section shows, in the section's order."""
    return {
        "mean_a": comparison["mean_a"],
        "mean_b": comparison["mean_b"],
        "delta": comparison["delta"],
        "ci": comparison["ci"],
        "p_value": comparison["p_value"],
        "test": comparison["test"],
        "alpha": comparison["alpha"],
        "n_tasks": comparison["n_tasks"],
        "n_seeds": comparison["n_seeds"],
        "decision": comparison["decision"],
        "threshold": comparison["threshold"],
        "caveat": comparison["caveat"],
        "runs": comparison["runs"],
        "ci_method": comparison["ci_method"],
        "iqm": comparison.get("iqm"),
        "probability_of_improvement": comparison.get("probability_of_improvement"),
        "confidence": comparison.get("confidence", 1 - 2 * comparison["alpha"]),
        "p_threshold": comparison.get("p_threshold", comparison["alpha"]),
        "unit": comparison.get("unit"),
        "identical": comparison.get("identical"),
        "statement": comparison.get("statement"),
        "notes": comparison.get("notes") or [],
        "normalized": comparison.get("normalized"),  # [eval.normalize]: the means on that scale
    }


def _voided(comparison: dict[str, Any]) -> dict[str, Any]:
    """Runs a person voided (signed), per side: in no number, listed with who voided them and
    why."""
    return {
        side: {
            "runs": list((evidence.get(side) or {}).get("voided") or []),
            "voids": dict((evidence.get(side) or {}).get("voids") or {}),
        }
        for side, evidence in (
            ("a", comparison.get("evidence") or {}),
            ("b", comparison.get("evidence") or {}),
        )
    }


def _task_groups(deltas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-environment Δ: tasks named ``ENV#i`` (the gym domain's episodes) grouped by ``ENV``, the
    mean of each side and Δ over the group's tasks; empty when the task ids carry no such group or
    all fall in one."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for d in deltas:
        name, sep, _ = str(d["task"]).rpartition("#")
        if not sep or not name:
            return []
        groups.setdefault(name, []).append(d)
    if len(groups) < 2:
        return []
    out = []
    for name, items in sorted(groups.items()):
        n = len(items)
        out.append(
            {
                "group": name,
                "n_tasks": n,
                "a": sum(i["a"] for i in items) / n,
                "b": sum(i["b"] for i in items) / n,
                "delta": sum(i["delta"] for i in items) / n,
            }
        )
    return out


# ----------------------------------------------------------------------------- findings
def _findings(ws: Workspace, version: str) -> dict[str, Any]:
    path = ws.state_dir / "findings" / f"{version}.jsonl"
    if not path.is_file():
        return section_unavailable(
            f"{version} has not been diagnosed on this machine (run: evotree diagnose {version})"
        )
    items: list[dict[str, Any]] = []
    skipped = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            skipped += 1
            continue
        if not isinstance(item, dict) or item.get("v") != 1 or "code" not in item:
            skipped += 1
            continue
        items.append(
            {
                k: item.get(k)
                for k in (
                    "layer",
                    "code",
                    "severity",
                    "title",
                    "suggestion",
                    "skills",
                    "run_id",
                    "evidence",
                    "harness_version",
                )
            }
        )
    by_layer: dict[str, list[dict[str, Any]]] = {layer: [] for layer in LAYER_ORDER}
    for item in items:
        by_layer.setdefault(str(item.get("layer")), []).append(item)
    for layer_items in by_layer.values():
        layer_items.sort(
            key=lambda f: (-_SEVERITY_RANK.get(str(f.get("severity")), 0), str(f.get("code")))
        )
    worst = max(
        (str(f["severity"]) for f in items), key=lambda s: _SEVERITY_RANK.get(s, 0), default=None
    )
    counts: dict[str, int] = {}
    for item in items:
        counts[str(item["severity"])] = counts.get(str(item["severity"]), 0) + 1
    return {
        "available": True,
        "total": len(items),
        "worst": worst,
        "counts": counts,
        "by_layer": {k: v for k, v in by_layer.items() if v},
        "skipped_lines": skipped,
        "source": ws.display_path(path),
    }


# ----------------------------------------------------------------------------- audit
def _audit_event(ws: Workspace, version: str) -> dict[str, Any] | None:

    for entry in ws.ledger.entries(version=version):  # newest first
        if entry.event.kind == EventKind.AUDIT.value:
            return {
                "at": entry.event.at,
                "actor": entry.event.actor,
                "commit": entry.commit,
                "data": entry.event.data,
            }
    return None


def _audit_section(data: dict[str, Any], source: str) -> dict[str, Any]:
    """The report's audit section from an audit report's dict."""
    return {
        "available": True,
        "source": source,
        "passed": bool(data.get("passed")),
        "raw_score": _finite(data.get("raw_score")),
        "leak_adjusted_score": _finite(data.get("leak_adjusted_score")),
        "findings": list(data.get("findings") or []),
        "details": data,
    }


def _audit(ws: Workspace, version: str, run_audit: bool) -> dict[str, Any]:
    reasons = []
    if run_audit:
        try:
            from evotree.harness.audit import (
                audit_version,
            )  # built by the audit issue; may not exist yet
        except ImportError as exc:
            reasons.append(f"the audit module is not installed ({exc})")
        else:
            try:
                report = audit_version(ws, version, record=False)
            except EvotreeError as exc:
                reasons.append(f"the audit could not run: {exc.message}")
            except Exception as exc:  # noqa: BLE001 - a broken optional section must not hide the report
                reasons.append(f"the audit failed: {type(exc).__name__}: {exc}")
            else:
                data = report.to_dict() if hasattr(report, "to_dict") else dict(vars(report))
                return _audit_section(data, "computed")
    event = _audit_event(ws, version)
    if event is not None:
        data = event["data"]
        return {
            "available": True,
            "source": f"ledger event {event['commit'][:10]} ({event['at']})",
            "passed": bool(data.get("passed")),
            "raw_score": _finite(data.get("raw_score")),
            "leak_adjusted_score": _finite(data.get("leak_adjusted_score")),
            "findings": list(data.get("findings") or []),
            "details": data,
        }
    reasons.append(f"no audit recorded for {version} (run: evotree audit {version})")
    return section_unavailable("; ".join(reasons))


# ----------------------------------------------------------------------------- gates
def _gates(ws: Workspace, version: str, run_audit: bool) -> dict[str, Any]:
    """Gate status without promoting (``evotree.gates.evaluation.evaluate_gates``), when it is available."""
    try:
        from evotree.gates.evaluation import evaluate_gates
    except ImportError as exc:
        return section_unavailable(
            f"gates: not evaluated (no gate evaluation in this evotree: {exc})"
        )
    try:
        result = evaluate_gates(ws, version, run_audit=run_audit)
    except EvotreeError as exc:
        return section_unavailable(f"gates: not evaluated ({exc.message})")
    except Exception as exc:  # noqa: BLE001 - a broken optional section must not hide the report
        return section_unavailable(
            f"gates: not evaluated (the gate evaluation failed: {type(exc).__name__}: {exc})"
        )
    data = result.to_dict() if hasattr(result, "to_dict") else result
    if not isinstance(data, dict):
        return section_unavailable("gates: not evaluated (the gate evaluation returned no data)")
    gates = [
        {
            "name": g.get("name"),
            "status": g.get("status"),
            "summary": g.get("summary"),
            "fix": g.get("fix"),
        }
        for g in data.get("gates") or []
        if isinstance(g, dict)
    ]
    return {
        "available": True,
        "passed": bool(data.get("passed")),
        "gates": gates,
        "policy_commit": (data.get("policy") or {}).get("commit"),
        "audit_report": data.get("audit") if isinstance(data.get("audit"), dict) else None,
    }


# ----------------------------------------------------------------------------- lineage
def _lineage(ws: Workspace, version: str, against: str) -> dict[str, Any]:

    view = tree_view(ws)
    by_id = {v.id: v for v in view.versions}
    keep: set[str]
    if len(by_id) <= _MAX_LINEAGE:
        keep = set(by_id)
        cut = False
    else:
        keep = set()
        for start in (version, against, view.champion):
            stack = [start]
            while stack:
                node = stack.pop()
                if node in keep or node not in by_id:
                    continue
                keep.add(node)
                stack.extend(by_id[node].parents)
        keep.update(by_id[version].children)
        cut = True
    nodes = []
    for v in view.versions:
        if v.id not in keep:
            continue
        headline = v.headline or {}
        nodes.append(
            {
                "id": v.id,
                "parents": [p for p in v.parents if p in keep],
                "status": v.status,
                "champion": v.champion,
                "subject": v.id == version,
                "against": v.id == against,
                "hypothesis": v.hypothesis,
                "score": _finite(headline.get("value")),
                "metric": headline.get("metric"),
            }
        )
    return {
        "available": True,
        "champion": view.champion,
        "nodes": nodes,
        "total_versions": len(by_id),
        "cut": cut,
    }


# ----------------------------------------------------------------------------- curves
def _curves(ws: Workspace, versions: list[str]) -> dict[str, Any]:
    """Per-step curves of the train phase, averaged over each version's runs."""

    try:
        con = connect(runs_dir(ws))
    except EvotreeError as exc:
        return section_unavailable(f"the evidence cannot be read: {exc.message}")
    out: dict[str, Any] = {
        "available": True,
        "reward": {},
        "entropy": {},
        "dead_groups": {},
        "entropy_metric": None,
        "dead_std_epsilon": DEAD_STD_EPSILON,
    }
    try:
        runs: dict[str, list[str]] = {}
        for version in versions:
            run_ids = [
                r[0]
                for r in con.execute(
                    "SELECT run_id FROM runs WHERE version = ? AND status NOT IN ('running', 'invalid')",
                    [version],
                ).fetchall()
            ]
            runs[version] = run_ids
            if run_ids:
                _version_curves(con, version, run_ids, out)
        # every recorded signal, grouped, the recipe's declared headline first (evotree.report.signals)
        out["signals"] = collect_signals(con, runs, declared=_declared_headline(ws))
    finally:
        con.close()
    return out


def _version_curves(con: Any, version: str, run_ids: list[str], out: dict[str, Any]) -> None:
    """One version's reward, dead-group and entropy curves (and the reward's seed band) into
    ``out``."""
    marks = ", ".join("?" for _ in run_ids)
    reward = con.execute(
        f"SELECT step, avg(reward) FROM _rollouts WHERE run_id IN ({marks}) AND phase = 'train' "
        "AND isfinite(reward) GROUP BY step ORDER BY step",
        run_ids,
    ).fetchall()
    if not reward:  # no rollouts recorded: the trainer's own reward signal
        reward = con.execute(
            f"SELECT step, avg(value) FROM _signals WHERE run_id IN ({marks}) AND phase = 'train' "
            "AND metric = 'reward' AND isfinite(value) GROUP BY step ORDER BY step",
            run_ids,
        ).fetchall()
    dead = con.execute(
        "SELECT step, avg(CASE WHEN sd < ? THEN 1.0 ELSE 0.0 END) FROM ("
        "SELECT step, run_id, group_id, stddev_pop(reward) AS sd FROM _rollouts "
        f"WHERE run_id IN ({marks}) AND phase = 'train' AND isfinite(reward) "
        "GROUP BY step, run_id, group_id) GROUP BY step ORDER BY step",
        [DEAD_STD_EPSILON, *run_ids],
    ).fetchall()
    metric = con.execute(
        f"SELECT metric FROM _signals WHERE run_id IN ({marks}) AND metric ILIKE '%entropy%' "
        "GROUP BY metric ORDER BY (metric = 'entropy') DESC, count(*) DESC, metric LIMIT 1",
        run_ids,
    ).fetchall()
    entropy: list[tuple[Any, Any]] = []
    if metric:
        out["entropy_metric"] = metric[0][0]
        entropy = con.execute(
            f"SELECT step, avg(value) FROM _signals WHERE run_id IN ({marks}) AND metric = ? "
            "AND isfinite(value) GROUP BY step ORDER BY step",
            [*run_ids, metric[0][0]],
        ).fetchall()
    for name, rows in (("reward", reward), ("dead_groups", dead), ("entropy", entropy)):
        if rows:
            out[name][version] = [
                [int(s), float(v)] for s, v in rows if s is not None and v is not None
            ]
    runs_of = _reward_per_run(con, marks, run_ids)
    if len(runs_of) > 1:  # the seed band of the reward curve
        out.setdefault("reward_runs", {})[version] = list(runs_of.values())


def _reward_per_run(con: Any, marks: str, run_ids: list[str]) -> dict[str, list[list[float]]]:
    """Each run's own train reward curve: run id -> [[step, mean reward], ...]."""
    per_run = con.execute(
        f"SELECT run_id, step, avg(reward) FROM _rollouts WHERE run_id IN ({marks}) AND phase = 'train' "
        "AND isfinite(reward) GROUP BY run_id, step ORDER BY run_id, step",
        run_ids,
    ).fetchall()
    runs_of: dict[str, list[list[float]]] = {}
    for run_id, step, value in per_run:
        if step is not None and value is not None:
            runs_of.setdefault(str(run_id), []).append([int(step), float(value)])
    return runs_of


def _declared_headline(ws: Workspace) -> str | None:
    """The train signal the recipe declares as its headline (``[train].headline_signal``), if any."""
    value = getattr(ws.config.train, "headline_signal", None)
    return str(value) if isinstance(value, str) and value.strip() else None


# ----------------------------------------------------------------------------- verdict
def _verdict(
    version: str,
    against: str,
    champion: str,
    scores: dict[str, Any],
    findings: dict[str, Any],
    audit: dict[str, Any],
    gates: dict[str, Any],
) -> dict[str, Any]:
    """One line a reviewer reads first; ``status`` for machines."""
    role = " (champion)" if against == champion else ""
    if audit.get("available") and not audit.get("passed"):
        status, icon = "blocked", "❌"
        line = f"{version} is blocked: the audit found leaks"
    elif not scores.get("available"):
        status, icon = "not_compared", "❔"
        line = f"{version} was not compared with {against}{role}: {scores.get('reason')}"
    else:
        decision = scores["decision"]
        lo, hi = scores["ci"]
        level = round(100 * scores.get("confidence", 0.95))
        numbers = (
            f"Δ = {scores['delta']:+.3f} ({level}% CI [{lo:+.3f}, {hi:+.3f}], one-sided p = "
            f"{scores['p_value']:.3g}, {scores['n_tasks']} tasks)"
        )
        if decision == "better":
            status, icon, word = "better", "✅", "is better than"
        elif decision == "worse":
            status, icon, word = "worse", "❌", "is worse than"
        elif decision == "need_more_seeds":
            status, icon, word = "need_more_seeds", "⏳", "needs more seeds against"
        else:
            status, icon, word = "inconclusive", "➖", "is not distinguishable from"
        line = f"{version} {word} {against}{role}: {numbers}"
    notes = []
    if findings.get("available") and findings.get("worst") in ("high", "critical"):
        notes.append(f"worst finding: {findings['worst']}")
    if gates.get("available") and gates.get("passed") is False:
        notes.append("gates: failed")
    return {"status": status, "icon": icon, "line": line, "notes": notes}
