"""`evotree diagnose V`: run the analyzers over a version's runs, record what they find.

The signal and behavior layers come from the analyzer registry (:mod:`evotree.diagnostics.findings`);
the score layer here summarises the judge's evals per split and flags runs without them; the
version layer (:mod:`evotree.diagnostics.version`) places the version in its tree (Δ vs parent and
champion, historical best, post-peak regression, saturation, escalation, too-good jumps). The
findings are written to ``.evotree/findings/<version>.jsonl`` (the ``findings`` view of
``evotree sql`` reads them) and summarised in one ``finding`` event on the ledger.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from evotree.diagnostics.findings import (
    Finding,
    max_severity,
    run_analyzers,
    sort_findings,
    write_findings_file,
)
from evotree.diagnostics.analyzer_versions import ActiveAnalyzers, analyzers_trust_finding
from evotree.core.errors import EvotreeError
from evotree.core.events import Finding as FindingPayload
from evotree.core.ledger import Event, LedgerTxn
from evotree.core.workspace import Workspace
from evotree.diagnostics.stats import pass_at_k
from evotree.harness.query import connect
from evotree.harness.records import list_runs
from evotree.harness.records import runs_dir
from evotree.core.visibility import hidden

__all__ = ["DiagnoseResult", "aggregate_findings", "diagnose", "LAYERS"]

LAYERS = ("score", "signal", "behavior", "version")
_LEDGER_FINDINGS = 50  # findings listed in the ledger event (all of them are in the JSONL file)


@dataclass
class DiagnoseResult:
    """What ``evotree diagnose --json`` prints (schema: ``diagnose.schema.json``)."""

    version: str
    runs: list[str]
    layers: list[str]
    findings: list[dict[str, Any]] = field(default_factory=list)
    worst: str | None = None
    seconds: float = 0.0
    interventions: list[dict[str, Any]] | None = None

    @property
    def by_code(self) -> list[dict[str, Any]]:
        """The findings aggregated: one row per (layer, code) with the runs they came from."""
        return aggregate_findings(self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "version": self.version,
            "runs": self.runs,
            "layers": self.layers,
            "worst": self.worst,
            "seconds": round(self.seconds, 3),
            "by_code": self.by_code,
            "findings": self.findings,
            "interventions": self.interventions,
        }


_RANK = {"info": 0, "warn": 1, "high": 2, "critical": 3}


def aggregate_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (layer, code): its worst severity, the title of its worst finding, the runs
    it came from (``runs``, sorted; findings about the version as a whole have no run) and how
    many findings (``count``); each finding's own run, severity and title stay in ``detail``.
    Rows are ordered most severe first, then by layer and code."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for f in findings:
        key = (str(f.get("layer")), str(f.get("code")))
        row = rows.get(key)
        if row is None:
            row = rows[key] = {
                "layer": key[0],
                "code": key[1],
                "severity": f.get("severity"),
                "title": f.get("title"),
                "runs": [],
                "count": 0,
                "harness_version": f.get("harness_version"),
                "detail": [],
            }
        elif _RANK.get(str(f.get("severity")), 0) > _RANK.get(str(row["severity"]), 0):
            row["severity"], row["title"] = f.get("severity"), f.get("title")
        row["count"] += 1
        run = f.get("run_id")
        if run and run not in row["runs"]:
            row["runs"].append(run)
        row["detail"].append(
            {"run_id": run, "severity": f.get("severity"), "title": f.get("title")}
        )
    for row in rows.values():
        row["runs"].sort()
    return sorted(
        rows.values(), key=lambda r: (-_RANK.get(str(r["severity"]), 0), r["layer"], r["code"])
    )


def _score_layer(con: Any, run_ids: list[str], version: str) -> list[Finding]:
    findings = []
    for run_id in run_ids:
        query = (
            "SELECT split, count(DISTINCT task_id) AS tasks, count(*) AS samples, avg(score) AS mean, "
            "count(score) AS scored FROM _evals WHERE run_id = ? AND phase = 'eval' GROUP BY split ORDER BY split"
        )
        rows = con.execute(query, [run_id]).fetchall()
        if not rows:
            findings.append(
                Finding(
                    layer="score",
                    code="score.no_eval_results",
                    severity="warn",
                    title="the judge recorded no eval results: this run has no score (not a score of 0)",
                    evidence={"query": query},
                    suggestion="check the judge's log (logs/eval.err) and re-run",
                    run_id=run_id,
                    version=version,
                )
            )
            continue
        for split, tasks, samples, mean, scored in rows:
            evidence = {
                "split": split,
                "tasks": tasks,
                "samples": samples,
                "mean": mean,
                "scored": scored,
                "query": query,
                **_at_k(con, run_id, split),
            }
            title = (
                f"{split}: mean score {mean:.4g} over {tasks} tasks ({samples} samples)"
                if mean is not None
                else f"{split}: no finite score"
            )
            if "pass_at_k" in evidence:
                title += f"; avg@{evidence['k']} {evidence['avg_at_k']:.4g}, pass@{evidence['k']} {evidence['pass_at_k']:.4g}"
            findings.append(
                Finding(
                    layer="score",
                    code="score.split_summary",
                    severity="info",
                    title=title,
                    evidence=evidence,
                    run_id=run_id,
                    version=version,
                )
            )
    return findings


def _at_k(con: Any, run_id: str, split: str) -> dict[str, Any]:
    """Avg@k and unbiased pass@k of a split whose per-sample scores are binary (k = fewest samples)."""

    query = (
        "SELECT task_id, count(score) AS n, sum(score) AS c, bool_and(score IN (0, 1)) AS binary "
        "FROM _evals WHERE run_id = ? AND split = ? AND phase = 'eval' AND score IS NOT NULL GROUP BY task_id"
    )
    rows = con.execute(query, [run_id, split]).fetchall()
    if not rows or not all(binary for *_, binary in rows):
        return {}
    n = [int(r[1]) for r in rows]
    c = [int(round(r[2])) for r in rows]
    k = min(n)
    return {
        "k": k,
        "avg_at_k": sum(ci / ni for ci, ni in zip(c, n)) / len(n),
        "pass_at_k": float(pass_at_k(n, c, k).mean),
        "query_at_k": query,
    }


def diagnose(
    ws: Workspace,
    version: str,
    *,
    analyzers: ActiveAnalyzers,
    layers: list[str] | None = None,
    record: bool = True,
) -> DiagnoseResult:
    """Diagnose every run of ``version`` recorded on this machine; record the findings.

    ``analyzers`` is the analyzer version in force (thresholds, plug-in analyzers), from
    :func:`evotree.gates.analyzer_versions.active_analyzers`: the end of the signed chain, never
    the candidate's tree. It is required so that no caller silently diagnoses with another one.
    """

    started = time.monotonic()
    record_v = ws.resolve(version)
    chosen = _checked_layers(layers)
    run_ids, parent_runs = _runs_to_diagnose(ws, record_v)
    hide = hidden(ws)
    if (
        hide
    ):  # EvoPolicyGym's boundary: the score and version layers only report the judge's figures
        chosen = [layer for layer in chosen if layer not in ("score", "version")]
    found = _run_layers(ws, record_v.id, run_ids, parent_runs, chosen, analyzers, hide)
    interventions = None
    if "version" in chosen:
        from evotree.diagnostics.version import intervention_table, version_findings

        found += version_findings(ws, record_v.id, B=ws.config.gates.bootstrap_samples)
        interventions = intervention_table(ws)
    # every finding names the analyzer version that produced it (plug-ins may name their own)
    found = sort_findings(
        replace(f, harness_version=analyzers.id) if f.harness_version == "builtin" else f
        for f in found
    )
    # the analyzers ref or the ledger off the signed chain
    unsigned = analyzers_trust_finding(analyzers, record_v.id)
    if unsigned is not None:
        found = sort_findings([unsigned, *found])
    worst = max_severity(found)
    result = DiagnoseResult(
        version=record_v.id,
        runs=run_ids,
        layers=chosen,
        findings=[f.to_dict() for f in found],
        worst=worst.label if worst is not None else None,
        seconds=time.monotonic() - started,
        interventions=interventions,
    )
    if record:
        _record(ws, result)
    return result


def _checked_layers(layers: list[str] | None) -> list[str]:
    """The layers asked for (all when None); an unknown one is refused."""
    chosen = list(layers or LAYERS)
    for layer in chosen:
        if layer not in LAYERS:
            raise EvotreeError(
                f"unknown layer {layer!r}; expected one of {', '.join(LAYERS)}",
                fix="pass --layer score, signal, behavior or version",
            )
    return chosen


def _runs_to_diagnose(ws: Workspace, record_v: Any) -> tuple[list[str], list[str]]:
    """(the version's finished runs on this machine, its parent's succeeded runs); refused when
    the version has no finished run."""
    runs = [r for r in list_runs(ws, version=record_v.id) if r.status not in ("invalid", "running")]
    if not runs:
        raise EvotreeError(
            f"{record_v.id} has no finished run to diagnose on this machine",
            fix=f"run it first: evotree run {record_v.id}",
        )
    parent_runs = []
    if record_v.parent:
        parent_runs = [
            r.run_id for r in list_runs(ws, version=record_v.parent) if r.status == "succeeded"
        ]
    return [r.run_id for r in runs], parent_runs


def _run_layers(
    ws: Workspace,
    version: str,
    run_ids: list[str],
    parent_runs: list[str],
    chosen: list[str],
    analyzers: ActiveAnalyzers,
    hide: bool,
) -> list[Finding]:
    """The score layer's findings and the signal and behavior analyzers' (with the analyzer
    version's thresholds), over the evidence views of the runs."""
    con = connect(runs_dir(ws), findings_dir=ws.state_dir / "findings", hide_judge=hide)
    try:
        found: list[Finding] = []
        if "score" in chosen:
            found += _score_layer(con, run_ids, version)
        other = [layer for layer in chosen if layer in ("signal", "behavior")]
        if other:
            found += run_analyzers(
                con,
                run_ids=run_ids,
                version=version,
                layers=other,
                parent_run_ids=parent_runs,
                thresholds=analyzers.thresholds or None,
            )
    finally:
        con.close()
    return found


def _record(ws: Workspace, result: DiagnoseResult) -> None:
    """Replace the version's findings file atomically; append one summary event to the ledger."""
    write_findings_file(ws.state_dir / "findings", f"{result.version}.jsonl", result.findings)
    actor = ws.git.identity()
    counts: dict[str, int] = {}
    for finding in result.findings:
        counts[finding["severity"]] = counts.get(finding["severity"], 0) + 1
    listed = [
        {k: f.get(k) for k in ("code", "severity", "title", "run_id", "layer")}
        for f in result.findings[:_LEDGER_FINDINGS]
    ]

    def change(txn: LedgerTxn) -> Event:
        txn.require(result.version)
        payload = FindingPayload(
            runs=result.runs,
            layers=result.layers,
            worst=result.worst,
            counts=counts,
            findings=listed,
            total=len(result.findings),
        )
        return Event.of(payload, version=result.version, actor=str(actor))

    ws.ledger.transact(change, actor=actor)
