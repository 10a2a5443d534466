"""The version layer: what the tree says about one version (the fourth layer).

Where the score, signal and behavior layers look at the evidence of one run, this layer looks
at a version's place in the tree: its Δ against its parent and the champion (the seed-aware
paired comparison of :func:`evotree.diagnostics.compare.compare`), the best version so far, whether its
lineage has peaked, saturated or keeps failing, and whether its gain is implausibly large.

:func:`version_findings` returns :class:`evotree.diagnostics.findings.Finding` objects of layer
``"version"``; :func:`intervention_table` is one row per version with a parent (what was tried,
what it changed). Missing scores are reported, never scored 0: a side without scores makes a
finding say so, and the rules that need a number skip it.

Codes (thresholds: :class:`VersionThresholds`):

* ``version.delta_parent`` / ``version.delta_champion`` (info; warn when significantly worse):
  Δ and CI against the parent / champion, with the single-seed caveat when there is one.
* ``version.historical_best`` (info): the version of the tree with the best headline.
* ``version.post_peak_regression`` (warn): the best ancestor's headline beats this version's by
  more than ``regression_margin``. RSIBench-Data: 78% of runs that kept searching past their
  peak ended lower; the peak must stay selectable.
* ``version.saturation`` (warn): the last ``saturation_k`` versions of the lineage (this one and
  its ancestors) each show no significant gain over their parent.
* ``version.escalate`` (high): the last ``escalate_n`` attempts on this lineage were failed,
  abandoned or significantly worse than their parent (EvoTrainer's rule).
* ``version.too_good_to_be_true`` (high): the Δ over the parent is far outside the tree's history
  of parent-child Δs (> mean + ``jump_sd`` sd of at least ``min_past_deltas`` past Δs, and at
  least ``min_jump`` above their mean) or above ``absolute_jump``.
* ``version.intervention`` (info): the version's intervention class (algorithm / hyperparameter /
  data / other) from the policy's ``[interventions]`` rules, when it has them.

Significance: a comparison is significantly better when its CI lies above 0, significantly worse
when it lies below 0 (the CI at the workspace's ``gates.alpha``).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evotree.diagnostics.compare import NoScores, VersionComparison, compare
from evotree.diagnostics.findings import Finding, check_range, sort_findings
from evotree.diagnostics.stats import PoolMismatch
from evotree.core.errors import ConfigError
from evotree.core.versions import TreeView, VersionView, tree_view
from evotree.core.workspace import Workspace
from evotree.core.interventions import intervention_record

__all__ = ["CODES", "VersionThresholds", "intervention_table", "version_findings"]

CODES = (
    "version.delta_parent",
    "version.delta_champion",
    "version.historical_best",
    "version.post_peak_regression",
    "version.saturation",
    "version.escalate",
    "version.too_good_to_be_true",
    "version.intervention",
)

_NEGATIVE = ("failed", "abandoned")
_PENDING = ("active", "running")


@dataclass(frozen=True)
class VersionThresholds:
    """Thresholds of the version layer; every field has a default."""

    #: post_peak_regression: best ancestor headline - this headline must exceed this.
    regression_margin: float = 0.02
    #: saturation: this many most recent versions of the lineage without a significant gain.
    saturation_k: int = 3
    #: escalate: this many consecutive failed/abandoned/significantly-worse attempts (EvoTrainer: 2).
    escalate_n: int = 2
    #: too_good_to_be_true: Δ above mean + jump_sd * sd of past parent-child Δs ...
    jump_sd: float = 3.0
    #: ... when there are at least this many past Δs ...
    min_past_deltas: int = 3
    #: ... and the Δ exceeds their mean by at least this much (guards sd = 0).
    min_jump: float = 0.05
    #: too_good_to_be_true regardless of history: a Δ over the parent above this.
    absolute_jump: float = 0.3

    def __post_init__(self) -> None:
        owner = "version thresholds"
        check_range(owner, "regression_margin", self.regression_margin, 0.0, math.inf)
        check_range(owner, "saturation_k", self.saturation_k, 1, math.inf)
        check_range(owner, "escalate_n", self.escalate_n, 1, math.inf)
        check_range(owner, "jump_sd", self.jump_sd, 0.0, math.inf)
        check_range(owner, "min_past_deltas", self.min_past_deltas, 2, math.inf)
        check_range(owner, "min_jump", self.min_jump, 0.0, math.inf)
        check_range(owner, "absolute_jump", self.absolute_jump, 0.0, math.inf)


def _thresholds(value: VersionThresholds | Mapping[str, Any] | None) -> VersionThresholds:
    if value is None:
        return VersionThresholds()
    if isinstance(value, VersionThresholds):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"version thresholds: expected a table, actually: {type(value).__name__}", key="version"
        )
    known = {f.name for f in dataclasses.fields(VersionThresholds)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ConfigError(
            f"version thresholds: unknown key(s) {', '.join(unknown)}",
            fix=f"known keys: {', '.join(sorted(known))}",
            key="version",
        )
    try:
        return VersionThresholds(**dict(value))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"version thresholds: {exc}", key="version") from None


def _headline(view: VersionView | None) -> float | None:
    """The mean validation score across the version's runs (None when it has none)."""
    if view is None or not view.headline:
        return None
    value = view.headline.get("value")
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


class _Layer:
    """One pass of the version layer: the tree, and comparisons made at most once per pair."""

    def __init__(self, ws: Workspace, *, split: str, B: int, seed: int) -> None:
        self.ws, self.split, self.B, self.seed = ws, split, B, seed
        self.tree: TreeView = tree_view(ws)
        self.views = {v.id: v for v in self.tree.versions}
        self._cache: dict[tuple[str, str], VersionComparison | str] = {}

    def compare(self, a: str, b: str) -> VersionComparison | str:
        """The comparison b − a, or a sentence saying why there is none."""
        key = (a, b)
        if key not in self._cache:
            try:
                self._cache[key] = compare(
                    self.ws, a, b, split=self.split, B=self.B, seed=self.seed
                )
            except NoScores as exc:
                self._cache[key] = str(exc)
            except PoolMismatch as exc:
                self._cache[key] = f"{a} and {b} were scored on different task pools: {exc}"
        return self._cache[key]

    def lineage(self, version: str) -> list[str]:
        """The version and its first-parent ancestors, oldest first."""
        chain, seen, current = [], set(), version
        while current is not None and current in self.views and current not in seen:
            chain.append(current)
            seen.add(current)
            current = self.views[current].parent
        return chain[::-1]

    def significance(self, c: VersionComparison) -> str:
        if c.ci[0] > 0:
            return "better"
        if c.ci[1] < 0:
            return "worse"
        return "none"


def _finding(
    code: str,
    severity: str,
    title: str,
    version: str,
    evidence: dict[str, Any],
    suggestion: str = "",
) -> Finding:
    return Finding(
        layer="version",
        code=code,
        severity=severity,
        title=title,
        evidence=evidence,
        suggestion=suggestion,
        version=version,
    )


def _delta_finding(layer: _Layer, code: str, other: str, version: str, what: str) -> Finding:
    result = layer.compare(other, version)
    if isinstance(result, str):
        return _finding(
            code,
            "info",
            f"no Δ against the {what} {other}: {result.splitlines()[0]}",
            version,
            {"against": other, "reason": result, "delta": None},
            "run the missing side first (evotree run <version> --seeds 3); "
            "a version without scores is not scored 0",
        )
    sig = layer.significance(result)
    evidence = {
        "against": other,
        "delta": result.delta,
        "ci": result.ci,
        "p_value": result.p_value,
        "significant": sig,
        "n_tasks": result.n_tasks,
        "n_seeds": result.n_seeds,
        "seed_aware": result.seed_aware,
        "caveat": result.caveat,
        "alpha": result.alpha,
        "mean_against": result.mean_a,
        "mean_version": result.mean_b,
        "split": result.split,
    }
    span = f"Δ {result.delta:+.4g} (CI {result.ci[0]:+.4g} .. {result.ci[1]:+.4g})"
    caveat = f" [{result.caveat}]" if result.caveat else ""
    if sig == "worse":
        return _finding(
            code,
            "warn",
            f"significantly worse than the {what} {other}: {span}{caveat}",
            version,
            evidence,
            f"do not promote {version} over {other}; look at what its change broke",
        )
    if sig == "better":
        return _finding(
            code,
            "info",
            f"significantly better than the {what} {other}: {span}{caveat}",
            version,
            evidence,
            "more seeds before promotion" if result.caveat else "",
        )
    return _finding(
        code,
        "info",
        f"not significantly different from the {what} {other}: {span}{caveat}",
        version,
        evidence,
        "run more seeds to tell them apart" if result.caveat else "",
    )


def version_findings(
    ws: Workspace,
    version: str,
    *,
    split: str = "validation",
    B: int = 2000,
    seed: int = 0,
    thresholds: VersionThresholds | Mapping[str, Any] | None = None,
) -> list[Finding]:
    """The version layer's findings about ``version`` (an id or ``champion``), most severe first."""
    t = _thresholds(thresholds)
    record = ws.resolve(version)
    vid = record.id
    layer = _Layer(ws, split=split, B=B, seed=seed)
    view = layer.views[vid]
    findings: list[Finding] = []

    # Δ against the parent and the champion
    if view.parent is not None:
        findings.append(_delta_finding(layer, "version.delta_parent", view.parent, vid, "parent"))
    champion = layer.tree.champion
    if champion != vid and champion in layer.views:
        findings.append(_delta_finding(layer, "version.delta_champion", champion, vid, "champion"))

    own = _headline(view)
    findings += _historical_best(layer, vid, own)
    findings += _post_peak(layer, vid, own, t)
    findings += _saturation(layer, vid, t)
    findings += _escalate(layer, vid, t)
    findings += _too_good(layer, vid, own, t)
    findings += _intervention(ws, vid)
    return sort_findings(findings)


def _intervention(ws: Workspace, vid: str) -> list[Finding]:
    """The version's intervention class (algorithm / hyperparameter / data / other) from the
    policy's ``[interventions]`` rules, when it has them (AI4AI-Bench's central analysis)."""

    record = intervention_record(ws, vid)
    if not record or "error" in record or record.get("primary") is None:
        return []
    classes = ", ".join(record.get("classes") or []) or record["primary"]
    return [
        _finding(
            "version.intervention",
            "info",
            f"{vid} is a {record['primary']} change ({classes} touched)",
            vid,
            record,
        )
    ]


def _historical_best(layer: _Layer, vid: str, own: float | None) -> list[Finding]:
    scored = [(v.id, _headline(v)) for v in layer.tree.versions if _headline(v) is not None]
    if not scored:
        return []
    best_id, best = max(scored, key=lambda item: item[1])  # first (oldest) of ties
    best_view = layer.views[best_id]
    evidence = {
        "best": best_id,
        "best_headline": best,
        "best_status": best_view.status,
        "metric": (best_view.headline or {}).get("metric"),
        "version_headline": own,
        "scored_versions": len(scored),
    }
    if best_id == vid:
        title = f"{vid} is the best version of the tree so far ({best:.4g})"
    else:
        gap = (
            f", {own - best:+.4g} from it" if own is not None else ", this version has no headline"
        )
        title = f"the best version of the tree so far is {best_id} ({best:.4g}{gap})"
    return [
        _finding(
            "version.historical_best",
            "info",
            title,
            vid,
            evidence,
            f"keep {best_id} selectable: do not prune or abandon it",
        )
    ]


def _post_peak(layer: _Layer, vid: str, own: float | None, t: VersionThresholds) -> list[Finding]:
    if own is None:
        return []
    ancestors = [(a, _headline(layer.views[a])) for a in layer.lineage(vid)[:-1]]
    ancestors = [(a, h) for a, h in ancestors if h is not None]
    if not ancestors:
        return []
    peak, peak_value = max(ancestors, key=lambda item: item[1])
    drop = peak_value - own
    if drop <= t.regression_margin:
        return []
    return [
        _finding(
            "version.post_peak_regression",
            "warn",
            f"{vid} is {drop:.4g} below its lineage's peak {peak} ({peak_value:.4g} -> {own:.4g})",
            vid,
            {
                "peak": peak,
                "peak_headline": peak_value,
                "version_headline": own,
                "drop": drop,
                "regression_margin": t.regression_margin,
                "lineage": layer.lineage(vid),
                "prior": "RSIBench-Data: 78% of runs that kept searching past their peak ended lower",
            },
            f"the historical best {peak} must stay selectable (do not abandon or prune it); "
            f"consider branching from {peak} again or stopping this lineage",
        )
    ]


def _saturation(layer: _Layer, vid: str, t: VersionThresholds) -> list[Finding]:
    lineage = layer.lineage(vid)
    recent = lineage[1:][-t.saturation_k :]  # versions that have a parent
    if len(recent) < t.saturation_k:
        return []
    steps = []
    for child in recent:
        parent = layer.views[child].parent
        result = layer.compare(parent, child)
        if isinstance(result, str):  # missing scores: no verdict, never a zero
            return []
        sig = layer.significance(result)
        if sig == "better":
            return []
        steps.append(
            {
                "version": child,
                "parent": parent,
                "delta": result.delta,
                "ci": result.ci,
                "significant": sig,
                "caveat": result.caveat,
            }
        )
    return [
        _finding(
            "version.saturation",
            "warn",
            f"no significant gain in the last {t.saturation_k} versions of the lineage ({', '.join(recent)})",
            vid,
            {"k": t.saturation_k, "steps": steps},
            "this line of changes has saturated: change strategy (another axis of the recipe, a merge, "
            "or branch from the historical best) rather than another small tweak",
        )
    ]


def _escalate(layer: _Layer, vid: str, t: VersionThresholds) -> list[Finding]:
    """Attempts on the lineage: its versions and the children of its versions, oldest first;
    the trailing run of bad outcomes (failed, abandoned, significantly worse) is counted.
    Pending versions (not run yet) and versions that cannot be compared are no outcome: pending
    ones are skipped, uncomparable ones end the streak."""
    lineage = layer.lineage(vid)
    on_line = set(lineage)
    attempts = [
        v
        for v in layer.tree.versions
        if v.parent is not None and (v.id in on_line or v.parent in on_line)
    ]
    streak: list[dict[str, Any]] = []
    for view in reversed(attempts):
        if len(streak) >= t.escalate_n:
            break
        if view.status in _NEGATIVE:
            streak.append(
                {
                    "version": view.id,
                    "parent": view.parent,
                    "outcome": view.status,
                    "reason": view.reason,
                }
            )
            continue
        if view.status in _PENDING and _headline(view) is None:
            continue
        result = layer.compare(view.parent, view.id)
        if isinstance(result, str) or layer.significance(result) != "worse":
            break
        streak.append(
            {
                "version": view.id,
                "parent": view.parent,
                "outcome": "significantly worse",
                "delta": result.delta,
                "ci": result.ci,
            }
        )
    if len(streak) < t.escalate_n:
        return []
    names = ", ".join(f"{s['version']} ({s['outcome']})" for s in reversed(streak))
    return [
        _finding(
            "version.escalate",
            "high",
            f"{len(streak)} consecutive failed attempts on this lineage: {names}",
            vid,
            {"n": t.escalate_n, "streak": streak[::-1], "lineage": lineage},
            "escalate to a human or change strategy: the last attempts all failed; do not spend more "
            "budget on the same kind of change",
        )
    ]


def _past_deltas(layer: _Layer, vid: str) -> list[float]:
    """Headline Δs over their parent of the versions created before ``vid`` (the tree's history)."""
    out = []
    for v in layer.tree.versions:  # oldest first
        if v.id == vid:
            break
        if v.parent is None or v.parent not in layer.views:
            continue
        child, parent = _headline(v), _headline(layer.views[v.parent])
        if child is not None and parent is not None:
            out.append(child - parent)
    return out


def _too_good(layer: _Layer, vid: str, own: float | None, t: VersionThresholds) -> list[Finding]:
    parent = layer.views[vid].parent
    if parent is None:
        return []
    parent_value = _headline(layer.views[parent])
    if own is not None and parent_value is not None:
        delta, source = own - parent_value, "headline"
    else:
        result = layer.compare(parent, vid)
        if isinstance(result, str):
            return []
        delta, source = result.delta, "compare"
    past = _past_deltas(layer, vid)
    reasons = []
    evidence: dict[str, Any] = {
        "parent": parent,
        "delta": delta,
        "delta_source": source,
        "past_deltas": len(past),
        "absolute_jump": t.absolute_jump,
    }
    if len(past) >= t.min_past_deltas:
        mean, sd = statistics.fmean(past), statistics.stdev(past)
        limit = mean + max(t.jump_sd * sd, t.min_jump)
        evidence.update({"past_mean": mean, "past_sd": sd, "limit": limit, "jump_sd": t.jump_sd})
        if delta > limit:
            reasons.append(f"above mean + {t.jump_sd:g} sd of {len(past)} past Δs ({limit:+.4g})")
    if delta > t.absolute_jump:
        reasons.append(f"above the absolute jump threshold {t.absolute_jump:+.4g}")
    if not reasons:
        return []
    return [
        _finding(
            "version.too_good_to_be_true",
            "high",
            f"Δ {delta:+.4g} over {parent} is too good to be true: {'; '.join(reasons)}",
            vid,
            evidence,
            f"run `evotree audit {vid}` before promotion: look for leakage, judge hacking or a changed pool",
        )
    ]


def intervention_table(ws: Workspace) -> list[dict[str, Any]]:
    """One row per version with a parent, oldest first: what was tried and what it changed.

    ``delta`` is headline − parent's headline (None when either has no headline: not 0).
    """
    tree = tree_view(ws)
    views = {v.id: v for v in tree.versions}
    rows = []
    for v in tree.versions:
        if v.parent is None:
            continue
        own, parent = _headline(v), _headline(views.get(v.parent))
        rows.append(
            {
                "id": v.id,
                "parent": v.parent,
                "hypothesis": v.hypothesis,
                "status": v.status,
                "headline": own,
                "parent_headline": parent,
                "delta": own - parent if own is not None and parent is not None else None,
            }
        )
    return rows
