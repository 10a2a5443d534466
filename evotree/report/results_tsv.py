"""``results.tsv`` in karpathy/autoresearch's column layout, from evotree's evidence.

autoresearch's program.md has the agent append one row per experiment to an untracked
``results.tsv``: ``commit  val_bpb  memory_gb  status  description``, status ``keep``, ``discard``
or ``crash``, 0.000000 and 0.0 for a crash. :func:`results_rows` derives the same rows from the
version tree, so existing plots and habits keep working, with evotree's decision beside them:

* one row per version, oldest first; ``commit``: the version's tip (7 characters); ``description``:
  its hypothesis;
* the metric column (named after the metric, ``val_bpb`` by default): the mean over the version's
  succeeded runs of the judge's value (signal ``judge/validation_<metric>``; the run's own summary
  line ``summary/<metric>`` where the judge recorded none); ``memory_gb``: the largest peak memory
  of its runs (``peak_vram_mb`` or ``peak_memory_mb`` of the summary, / 1024);
* ``status``: ``keep`` for the root and every version the score gate passes (or that is or was
  champion); ``crash`` for a version whose runs all failed; ``discard`` otherwise — a version
  within the noise floor is not kept, and one still waiting for seeds is not kept *yet*
  (``verdict`` says ``more_seeds``);
* evotree's columns: ``verdict`` (the score gate's: pass, more_seeds, futile, fail, not_ready;
  ``champion``, ``crash``, ``no_runs``), ``delta``, ``ci_low``, ``ci_high`` (Δ of the score
  against the champion and its CI, in score units: the score is −val_bpb, so Δ > 0 is better),
  ``seeds`` (succeeded runs) and ``version``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any
from evotree.gates.evaluation import evaluate_gates
from evotree.core.ledger import EventKind
from evotree.core.refs import branch_ref
from evotree.core.versions import tree_view
from evotree.domains.autoresearch.summary import peak_memory_gb
from evotree.gates.verify import trusted_policy
from evotree.harness.records import list_runs

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = ["ResultRow", "ResultsTsv", "export_results_tsv", "results_rows", "results_tsv"]

#: autoresearch's five columns (the metric's column is named after the metric), then evotree's
EVOTREE_COLUMNS = ("verdict", "delta", "ci_low", "ci_high", "seeds", "version")


@dataclass
class ResultRow:
    """One experiment (version) as a results.tsv row."""

    commit: str
    metric: float | None
    memory_gb: float | None
    status: str
    description: str
    verdict: str
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    seeds: int
    version: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _run_numbers(record: Any) -> dict[str, float]:
    """The last value of each signal of one run (judge and summary metrics), from its evidence."""
    path = (record.evidence or {}).get("parquet", {}).get("signals")
    if not path:
        return {}
    try:
        import pyarrow.parquet as pq

        table = pq.read_table(path, columns=["metric", "value"]).to_pydict()
    except (OSError, ValueError, KeyError):
        return {}
    out: dict[str, float] = {}
    for name, value in zip(table["metric"], table["value"], strict=True):
        if isinstance(value, (int, float)) and math.isfinite(value):
            out[str(name)] = float(value)
    return out


def _score_verdict(
    ws: Workspace, policy: Any, version: str
) -> tuple[str, float | None, float | None, float | None]:
    """The score gate's verdict for ``version`` against the champion: (verdict, Δ, CI low, CI high)."""

    report = evaluate_gates(ws, version, policy=policy, run_audit=False, run_plugins=False)
    gate = next(g for g in report.gates if g.name == "score")
    numbers = gate.numbers or {}
    ci = numbers.get("ci") or [None, None]
    verdict = "pass" if gate.status == "pass" else str(numbers.get("verdict") or gate.status)
    delta = numbers.get("delta")
    return verdict, (float(delta) if isinstance(delta, (int, float)) else None), ci[0], ci[1]


def results_rows(ws: Workspace, *, metric: str = "val_bpb") -> list[ResultRow]:
    """The version tree as results.tsv rows (see the module's rules), oldest version first."""

    tree = tree_view(ws)
    policy = trusted_policy(ws)
    promoted = {
        e.event.version for e in ws.ledger.entries() if e.event.kind == EventKind.PROMOTION.value
    }
    runs_of: dict[str, list[Any]] = {}
    for record in list_runs(ws):
        runs_of.setdefault(record.version, []).append(record)
    rows = []
    for view in tree.versions:
        tip = ws.git.ref_target(branch_ref(view.id))
        commit = str(tip) if tip is not None else view.base_commit
        runs = [r for r in runs_of.get(view.id, []) if r.commit == commit] or runs_of.get(
            view.id, []
        )
        good = [r for r in runs if r.status == "succeeded"]
        values, memory = [], []
        for record in runs:
            numbers = _run_numbers(record)
            summary = {
                k.removeprefix("summary/"): v
                for k, v in numbers.items()
                if k.startswith("summary/")
            }
            gb = peak_memory_gb(summary)
            if gb is not None:
                memory.append(gb)
            if record in good:
                value = numbers.get(f"judge/validation_{metric}", summary.get(metric))
                if value is not None:
                    values.append(value)
        value = sum(values) / len(values) if values else None
        if not runs:
            verdict, delta, low, high = "no_runs", None, None, None
        elif not good:
            verdict, delta, low, high = "crash", None, None, None
        elif view.id == policy.champion or view.parent is None:
            verdict, delta, low, high = (
                "champion" if view.id == policy.champion else "baseline",
                None,
                None,
                None,
            )
        else:
            verdict, delta, low, high = _score_verdict(ws, policy, view.id)
        if verdict == "crash":
            status = "crash"
        elif (
            view.parent is None
            or view.id == policy.champion
            or view.id in promoted
            or verdict == "pass"
        ):
            status = "keep"
        else:
            status = "discard"
        rows.append(
            ResultRow(
                commit=commit[:7],
                metric=value,
                memory_gb=max(memory) if memory else None,
                status=status,
                description=view.hypothesis,
                verdict=verdict,
                delta=delta,
                ci_low=low,
                ci_high=high,
                seeds=len(good),
                version=view.id,
            )
        )
    return rows


def _cell(value: Any, fmt: str) -> str:
    if value is None:
        return ""
    return format(value, fmt)


def results_tsv(rows: list[ResultRow], *, metric: str = "val_bpb") -> str:
    """The rows as results.tsv text: a header, tab-separated, autoresearch's 0.000000 / 0.0 for a crash."""
    header = ["commit", metric, "memory_gb", "status", "description", *EVOTREE_COLUMNS]
    lines = ["\t".join(header)]
    for r in rows:
        crash = r.status == "crash"
        description = " ".join(r.description.replace("\t", " ").split())
        lines.append(
            "\t".join(
                [
                    r.commit,
                    "0.000000" if crash or r.metric is None else f"{r.metric:.6f}",
                    "0.0" if crash or r.memory_gb is None else f"{r.memory_gb:.1f}",
                    r.status,
                    description,
                    r.verdict,
                    _cell(r.delta, "+.6f"),
                    _cell(r.ci_low, "+.6f"),
                    _cell(r.ci_high, "+.6f"),
                    str(r.seeds),
                    r.version,
                ]
            )
        )
    return "\n".join(lines) + "\n"


@dataclass
class ResultsTsv:
    """``evotree export results-tsv``'s result: the rows, their text and where it was written (None: stdout)."""

    metric: str
    rows: list[ResultRow]
    text: str
    path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "metric": self.metric,
            "path": self.path,
            "rows": [r.to_dict() for r in self.rows],
        }


def export_results_tsv(
    ws: Workspace, *, metric: str = "val_bpb", path: str | None = None
) -> ResultsTsv:
    """The tree's results.tsv (written to ``path`` when given)."""
    from pathlib import Path

    rows = results_rows(ws, metric=metric)
    text = results_tsv(rows, metric=metric)
    if path is not None:
        Path(path).write_text(text, encoding="utf-8")
    return ResultsTsv(metric=metric, rows=rows, text=text, path=path)
