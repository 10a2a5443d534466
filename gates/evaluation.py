"""Evidence gates: score, audits, signal findings, protected paths, budget, analyzer version.

Voiding a run whose evidence cannot be counted (a signed decision) is :mod:`evotree.gates.run_void`.

:func:`evaluate_gates` reads the policy of the (verified) champion, evaluates every gate for a
candidate and returns a :class:`GateReport`: each gate passes, fails or is unavailable (which
counts as a failure: the gates fail closed), with its numbers and what would satisfy it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from evotree.core.ledger import utcnow
from evotree.harness.sandbox_report import sandbox_warning
from evotree.core.refs import branch_ref
from evotree.gates.verify import trusted_policy
from evotree.diagnostics.diagnose import aggregate_findings
from evotree.harness.integrity import verify_run_evidence
from evotree.core.errors import EvotreeError
from evotree.diagnostics.compare import champion_since
from evotree.diagnostics.compare import compare
from evotree.gates.score import ScoreRule
from evotree.gates.score import decide_score
from evotree.harness.integrity import PROBLEM_STATES
from evotree.harness.integrity import evidence_findings
from evotree.harness.budget import champion_reruns_left
from evotree.harness.budget import trusted_usage
from evotree.harness.reservations import counted_reservations
from evotree.diagnostics.diagnose import diagnose
from evotree.gates.analyzer_versions import active_analyzers
from evotree.diagnostics.analyzer_versions import ANALYZERS_FILE
from evotree.diagnostics.analyzer_versions import BUILTIN
from evotree.diagnostics.analyzer_versions import THRESHOLDS_FILE
from evotree.gates.analyzer_versions import trusted_analyzers
from evotree.gates.policy import blob_at
from evotree.diagnostics.findings import analyzer_classes
from evotree.diagnostics.findings import run_analyzers
from evotree.harness.query import connect
from evotree.harness.records import list_runs
from evotree.harness.records import runs_dir
from evotree.harness.version_patch import version_patch
from evotree.harness.budget import Usage

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace
    from evotree.gates.policy import Policy

__all__ = [
    "GATE_NAMES",
    "GateReport",
    "GateResult",
    "evaluate_gates",
    "json_safe",
    "protected_gate",
]

GATE_NAMES = ("score", "audit", "signal", "protected", "budget", "analyzers")
_LEAK_BLOCKS = ("high", "critical")


def json_safe(value: Any) -> Any:
    """``value`` with non-finite floats as None and tuples as lists (a canonical, hashable form)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return json_safe(value.item())
    return value


@dataclass
class GateResult:
    """One gate: ``status`` is pass, fail or unavailable (unavailable blocks like a failure)."""

    name: str
    status: str
    summary: str
    numbers: dict[str, Any] = field(default_factory=dict)
    fix: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass
class GateReport:
    """What ``evotree gates V --json`` prints (schema: ``gates.schema.json``); the dossier's core."""

    version: str
    commit: str
    created_by: str
    hypothesis: str
    champion: str
    champion_commit: str
    policy: dict[str, Any]
    gates: list[GateResult]
    comparison: dict[str, Any] | None
    findings: list[dict[str, Any]]
    audit: dict[str, Any] | None
    evaluated_at: str = field(default_factory=utcnow)
    #: one line when phases ran (or would run) without the sandbox; shown first by every reader
    sandbox_warning: str | None = None

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    @property
    def failed(self) -> list[GateResult]:
        return [g for g in self.gates if not g.passed]

    def to_dict(self) -> dict[str, Any]:
        out = json_safe(asdict(self))
        out["passed"] = self.passed
        out["v"] = 1
        return out


def evaluate_gates(
    ws: Workspace,
    version: str,
    *,
    policy: Policy | None = None,
    run_audit: bool = True,
    B: int | None = None,
    run_plugins: bool = True,
) -> GateReport:
    """Evaluate every evidence gate for ``version`` against the champion's policy.

    ``run_plugins=False`` (the sign-off process of ``evotree promote``): no code from the
    workspace runs — a version's plug-in ``analyzers.py`` could otherwise read the approver's
    key in their own process. The signal gate then re-runs the built-in analyzers and adds the
    critical findings of the recorded diagnosis (which ran the plug-ins, in the agent's process).
    """

    policy = policy or trusted_policy(ws)
    record = ws.resolve(version)
    tip = ws.git.ref_target(branch_ref(record.id))
    commit = str(tip) if tip is not None else record.base_commit
    gates_cfg = policy.config.gates
    pol = {
        "commit": policy.commit,
        "gates": asdict(gates_cfg),
        "protect": list(policy.config.protect.paths),
        "allowed_signers": policy.principals,
        "budget_max_runs_per_version": policy.config.budget.max_runs_per_version,
    }
    results: list[GateResult] = []
    comparison = None
    if record.id == policy.champion:
        results.append(
            GateResult(
                "score",
                "fail",
                f"{record.id} is already the champion",
                fix="branch a new version and promote that",
            )
        )
    else:
        score, comparison = _score_gate(ws, policy, record.id, commit, B=B)
        results.append(score)
    audit_result, audit = _audit_gate(ws, record.id, run_audit)
    results.append(audit_result)
    signal_result, findings = _signal_gate(ws, record.id, run_plugins)
    results.append(signal_result)
    # evidence findings of the score gate (runs missing, edited, unfinished) lead the dossier's findings;
    # one row per finding code with the runs it came from (each finding's run and title in `detail`)

    evidence_rows = aggregate_findings(
        [
            {
                k: f.get(k)
                for k in ("layer", "code", "severity", "title", "run_id", "harness_version")
            }
            for f in results[0].numbers.get("findings") or []
        ]
    )
    findings = evidence_rows + aggregate_findings(findings)
    results.append(_protected_gate(ws, policy, record.id, commit))
    results.append(_budget_gate(ws, policy, record))
    results.append(_analyzers_gate(ws, record.id))
    return GateReport(
        version=record.id,
        commit=commit,
        created_by=record.created_by,
        hypothesis=record.hypothesis,
        champion=policy.champion,
        champion_commit=policy.commit,
        policy=pol,
        gates=results,
        comparison=json_safe(comparison),
        findings=findings,
        audit=json_safe(audit),
        sandbox_warning=sandbox_warning(ws, record.id),
    )


def acknowledge_protected(report: GateReport, approver: str) -> list[str]:
    """Let the approver accept a change of protected paths (a deliberate policy or judge change).

    The protected gate then passes, with ``acknowledged_by`` in its numbers: the dossier, and so
    the signed evidence hash, records that a person accepted exactly these paths. Returns them.
    """
    gate = next((g for g in report.gates if g.name == "protected"), None)
    if gate is None or gate.status != "fail":  # passed, or unavailable: nothing a person can accept
        return []
    changed = list(gate.numbers.get("changed") or [])
    if gate.numbers.get(
        "patch_violations"
    ):  # data or weights in the patch: no sign-off waves them through
        if changed:
            gate.numbers = {**gate.numbers, "acknowledged_by": approver}
        return changed
    gate.status = "pass"
    gate.numbers = {**gate.numbers, "acknowledged_by": approver}
    gate.summary = (
        f"changes protected path(s) {', '.join(changed[:5])}: accepted by {approver} at sign-off"
    )
    gate.fix = None
    # the audit reports the same change (audit.protected_path, from the same patch): when that is
    # all it blocks on, the person's acceptance covers it too; any other leak still blocks
    audit = next((g for g in report.gates if g.name == "audit"), None)
    blocking = list((audit.numbers or {}).get("blocking") or []) if audit is not None else []
    if (
        audit is not None
        and audit.status == "fail"
        and blocking
        and all(b.get("code") == "audit.protected_path" for b in blocking)
    ):
        audit.status = "pass"
        audit.numbers = {**audit.numbers, "acknowledged_by": approver}
        audit.summary = (
            f"only the protected-path change accepted by {approver} at sign-off "
            f"({len(blocking)} finding(s) of it)"
        )
        audit.fix = None
    return changed


# ------------------------------------------------------------------ score
def _score_gate(
    ws: Workspace, policy: Policy, version: str, commit: str, *, B: int | None
) -> tuple[GateResult, dict[str, Any] | None]:
    """The score gate (:func:`_score_gate_checked`), plus the runs a person voided: listed in its
    numbers (``voided``: run, seed, approver, reason, state before) and named in its summary,
    never silently dropped; they are in no number and no longer fail the gate."""

    check_a, check_b = verify_run_evidence(ws, policy.champion), verify_run_evidence(ws, version)
    result, data = _score_gate_checked(ws, policy, version, commit, B=B, checks=(check_a, check_b))
    voided = [r for r in check_a.voided if r.commit == policy.commit] + [
        r for r in check_b.voided if r.commit == commit
    ]
    if voided:
        result.numbers["voided"] = [
            {"run_id": r.run_id, "version": r.version, "seed": r.seed, **(r.void or {})}
            for r in voided
        ]
        ids = ", ".join(r.run_id for r in voided[:4]) + (" …" if len(voided) > 4 else "")
        who = sorted({str((r.void or {}).get("approver")) for r in voided})
        result.summary += f" [{len(voided)} run(s) voided by a signed decision and not counted: {ids} (by {', '.join(who)})]"
    return result, data


def _score_gate_checked(
    ws: Workspace,
    policy: Policy,
    version: str,
    commit: str,
    *,
    B: int | None,
    checks: tuple[Any, Any],
) -> tuple[GateResult, dict[str, Any] | None]:
    """The score gate: the one comparison of the candidate with the champion, and the gate's rule.

    The numbers are :func:`evotree.diagnostics.compare.compare`'s (the same Δ, CI and p as
    ``evotree compare``, ``diagnose`` and the reports); :func:`evotree.gates.score.decide_score`
    applies the rule (this look's threshold on p, what more seeds would likely do).

    Only runs of the exact commits compared count: the candidate's commit that would be
    promoted and the champion's commit. Runs of an earlier commit of the version are not
    evidence for a later one (a branch can move after its runs). Of those, *every* run the
    ledger says started counts (:func:`evotree.harness.integrity.verify_run_evidence`): one whose
    evidence is missing, edited, unfinished or unverifiable fails the gate with a critical
    ``score.evidence_*`` finding naming it; one still running makes the gate unavailable. Seeds,
    commits and judges are read from the ledger, not from run.json.
    """

    rule = _score_rule(policy)
    check_a, check_b = checks
    counted_a, counted_b = _counted_runs(ws, policy, commit, checks)
    evidence = {"champion": check_a.summary(counted_a), "candidate": check_b.summary(counted_b)}
    refused = _uncountable_evidence(policy, version, counted_a, counted_b, evidence)
    if refused is not None:
        return refused, None
    try:
        comparison = compare(
            ws,
            policy.champion,
            version,
            B=B,
            evidence_checks=(check_a, check_b),
            commits=(policy.commit, commit),
        )
    except EvotreeError as exc:
        fix = exc.fix or (
            f"evotree run {policy.champion} --seeds {rule.champion_seeds}; "
            f"evotree run {version} --seeds {rule.seeds_needed}"
        )
        return GateResult(
            "score",
            "unavailable",
            f"no comparison with {policy.champion}: {exc.message}",
            {"evidence": evidence},
            fix,
        ), None
    data = comparison.to_dict()
    info = {r.run_id: r for r in (*check_a.runs, *check_b.runs)}
    runs_a, runs_b = comparison.runs["a"], comparison.runs["b"]
    foreign = sorted(
        rid for rid in (*runs_a, *runs_b) if rid in info and info[rid].judge_commit != policy.commit
    )
    decision = decide_score(
        comparison.difference,
        rule,
        names=(policy.champion, version),
        champion_runs_left=_champion_reruns_left(ws, policy),
    )
    numbers = _score_numbers(comparison, decision, foreign, evidence)
    fresh_a = max([r.seed for r in check_a.runs if r.seed is not None] or [-1]) + 1
    return _score_verdict(policy, version, rule, decision, numbers, comparison, fresh_a), data


def _score_verdict(
    policy: Policy,
    version: str,
    rule: ScoreRule,
    decision: Any,
    numbers: dict[str, Any],
    comparison: Any,
    fresh_a: int,
) -> GateResult:
    """The score gate's result: pass with the numbers, or fail with the reasons and the fix."""
    reasons = numbers["reasons"]
    head = (
        f"Δ {decision.delta:+.4f}, {100 * decision.confidence:.0f} % CI [{decision.ci[0]:+.4f}, "
        f"{decision.ci[1]:+.4f}], one-sided p {decision.p_value:.3g}"
    )
    where = (
        f"look {decision.look} of {decision.max_looks}" if decision.max_looks > 1 else "one look"
    )
    if not reasons:
        return GateResult(
            "score",
            "pass",
            f"{version} is better than {policy.champion}: {head} < {decision.threshold:.3g}"
            f" (alpha {rule.alpha:g}, {where})",
            numbers,
        )
    foreign = bool(numbers["foreign_judge_runs"])
    fix = _score_fix(policy, version, decision, rule, foreign, comparison, fresh_a)
    return GateResult("score", "fail", f"{head}: " + "; ".join(reasons), numbers, fix)


def _score_rule(policy: Policy) -> ScoreRule:
    """The score gate's rule from the champion's signed ``[gates]`` and version budget."""
    g = policy.config.gates
    return ScoreRule(
        min_delta=g.min_delta,
        alpha=g.alpha,
        min_tasks=g.min_tasks,
        min_seeds=g.min_seeds,
        max_runs=policy.config.budget.max_runs_per_version,
        champion_seeds=g.champion_seeds,
    )


def _counted_runs(
    ws: Workspace, policy: Policy, commit: str, checks: tuple[Any, Any]
) -> tuple[list[Any], list[Any]]:
    """Every run the ledger says started that counts: of the champion's commit since it became
    champion, and of the candidate's compared commit. A run whose evidence is gone, edited or
    unfinished fails the gate; it is never silently dropped (dropping the worst seeds would
    otherwise turn a failing gate into a pass)."""
    check_a, check_b = checks
    since = champion_since(ws, policy.champion)
    counted_a = [
        r
        for r in check_a.runs
        if r.commit == policy.commit and (since is None or (r.started_at or "") > since)
    ]
    counted_b = [r for r in check_b.runs if r.commit == commit]
    return counted_a, counted_b


def _uncountable_evidence(
    policy: Policy,
    version: str,
    counted_a: list[Any],
    counted_b: list[Any],
    evidence: dict[str, Any],
) -> GateResult | None:
    """The gate's failure when a counted run's evidence cannot be counted, or its unavailability
    while one still runs; None when every counted run can be compared."""
    bad_a = [r for r in counted_a if r.state in PROBLEM_STATES]
    bad_b = [r for r in counted_b if r.state in PROBLEM_STATES]
    if bad_a or bad_b:
        found = evidence_findings(bad_a, version=policy.champion) + evidence_findings(
            bad_b, version=version
        )
        names = "; ".join(f.title for f in found)
        return GateResult(
            "score",
            "fail",
            f"the ledger records run(s) whose evidence cannot be counted: {names}",
            {"evidence": evidence, "findings": [f.to_dict() for f in found]},
            found[0].suggestion + "; the gate counts every run the ledger says started",
        )
    running = [r.run_id for r in counted_a + counted_b if r.state == "running"]
    if running:
        return GateResult(
            "score",
            "unavailable",
            f"{len(running)} run(s) are still running "
            f"({', '.join(running[:3])}): the gate counts every run once it has finished",
            {"evidence": evidence, "running": running},
            "wait for them to finish (evotree runs), then evaluate the gates again",
        )
    return None


def _champion_reruns_left(ws: Workspace, policy: Policy) -> int | None:
    """What the gate may still ask of the champion: its re-runs have an account of their own
    (harness/budget.py), never limited by what its version budget spent before it was champion.
    None without a version budget."""
    if not policy.config.budget.max_runs_per_version:
        return None
    snapshot = ws.ledger.snapshot()
    return champion_reruns_left(
        policy.config.budget,
        snapshot.meta,
        policy.champion,
        counted=trusted_usage(ws, snapshot),
        reservations=counted_reservations(ws, snapshot.meta),
    )


def _score_numbers(
    comparison: Any, decision: Any, foreign: list[str], evidence: dict[str, Any]
) -> dict[str, Any]:
    """The score gate's data: the decision, the means, seeds and runs compared, and the reasons
    it fails (the decision's, and runs judged by another champion's judge)."""
    normalized = comparison.normalized or {}
    numbers = {
        **decision.to_dict(),
        "mean_champion": comparison.mean_a,
        "mean_candidate": comparison.mean_b,
        **(
            {
                "mean_champion_normalized": normalized.get("a"),
                "mean_candidate_normalized": normalized.get("b"),
            }
            if comparison.normalized
            else {}
        ),
        "seeds": {
            "champion": (comparison.seeds or {}).get("a"),
            "candidate": (comparison.seeds or {}).get("b"),
        },
        "runs": {"champion": comparison.runs["a"], "candidate": comparison.runs["b"]},
        "identical": comparison.identical,
        "spread": comparison.spread,
        "foreign_judge_runs": foreign,
        "evidence": evidence,
    }
    reasons = list(decision.reasons)
    if foreign:
        reasons.append(
            f"{len(foreign)} run(s) were judged by another champion's judge ({', '.join(foreign[:3])})"
        )
    numbers["reasons"] = reasons
    return numbers


def _score_fix(
    policy: Policy,
    version: str,
    decision: Any,
    rule: Any,
    foreign: bool,
    comparison: Any,
    fresh_a: int,
) -> str:
    """What would settle the score gate, with the commands. ``fresh_a``: a seed the champion has
    never run (its re-runs need new seeds: a repeated seed can repeat the luck that promoted it)."""
    champion = policy.champion
    seeds = comparison.seeds or {}
    next_b = max(seeds.get("b") or [-1]) + 1
    if foreign:
        return (
            f"re-run both on the current champion's judge: evotree run {champion} --seeds {rule.champion_seeds}; "
            f"evotree run {version} --seeds {rule.seeds_needed}"
        )
    if decision.n_tasks < rule.min_tasks:
        return (
            f"evaluate on a pool of at least {rule.min_tasks} tasks (the judge's validation split)"
        )
    if decision.verdict == "not_ready":
        steps = []
        more = decision.next_seeds or {}
        if more.get("champion"):
            steps.append(
                f"evotree run {champion} --seeds {more['champion']} --seed-start {fresh_a}"
                " (re-runs of the champion since its promotion, with new seeds)"
            )
        if more.get("candidate"):
            steps.append(f"evotree run {version} --seeds {more['candidate']} --seed-start {next_b}")
        return "; ".join(steps) or f"evotree run {version} --seeds {rule.seeds_needed}"
    notes = " ".join(decision.notes)
    if decision.verdict == "more_seeds":
        more = decision.next_seeds or {}
        steps = []
        if more.get("candidate"):
            steps.append(f"evotree run {version} --seeds {more['candidate']} --seed-start {next_b}")
        if more.get("champion"):
            steps.append(
                f"evotree run {champion} --seeds {more['champion']} --seed-start {fresh_a}"
            )
        settle = (
            f"about {decision.seeds_to_settle} seeds of {version} (and as many of {champion}) would likely settle"
            " it (80 % power were the observed Δ true)"
            if decision.seeds_to_settle
            else f"even the last look ({decision.looks[-1]} seeds) would pass with probability "
            f"{100 * (decision.conditional_power or 0):.0f} % were the observed Δ true"
        )
        return (
            f"not settled yet: {settle}; the next look is at {decision.looks[decision.look]} seeds of {version}: "
            + "; ".join(steps)
            + f"; then evotree gates {version}"
            + (f" ({notes})" if notes else "")
        )
    if decision.verdict == "futile":
        chance = decision.conditional_power
        why = (
            f"the observed Δ is not above min_delta {rule.min_delta:+g}"
            if chance is None
            else f"were the observed Δ true, the last look ({decision.looks[-1]} seeds) would pass with probability "
            f"{100 * chance:.0f} %"
        )
        return (
            f"more seeds are unlikely to settle it in {version}'s favour ({why}); revise the version"
            + (f" ({notes})" if notes else "")
        )
    return (
        "not better at the last look; more seeds cannot change the verdict: revise the version"
        + (f" ({notes})" if notes else "")
    )


# ------------------------------------------------------------------ audit
def _audit_gate(
    ws: Workspace, version: str, run_audit: bool
) -> tuple[GateResult, dict[str, Any] | None]:
    if not run_audit:
        return GateResult(
            "audit",
            "unavailable",
            "audit not run (asked to skip it)",
            fix=f"evotree gates {version} (without skipping the audit)",
        ), None
    try:
        from evotree.harness.audit import audit_version, record_audit
    except ImportError as exc:
        return GateResult(
            "audit",
            "unavailable",
            f"audit unavailable in this evotree ({exc}); failing closed",
            fix="install an evotree with evotree.harness.audit, then re-evaluate",
        ), None

    try:
        # evaluating the gates is a read: a clean audit writes nothing; a failed one is an
        # incident, recorded (findings file, ledger event, memory) as `evotree audit` records it
        report = audit_version(ws, version, record=False)
        if not report.passed:
            record_audit(ws, report)
    except EvotreeError as exc:
        code = getattr(exc, "code", "")
        data = {"error": exc.to_dict()}
        if getattr(exc, "exit_code", 0) == 28:  # audit failed: leak findings
            return GateResult("audit", "fail", f"audit failed: {exc.message}", data, exc.fix), data
        return GateResult(
            "audit",
            "unavailable",
            f"audit could not run ({code}): {exc.message}",
            data,
            exc.fix or f"evotree audit {version}",
        ), data
    data = report.to_dict() if hasattr(report, "to_dict") else {"passed": bool(report.passed)}
    blocking = []
    for f in getattr(report, "findings", []) or []:
        fd = f.to_dict() if hasattr(f, "to_dict") else dict(f)
        if fd.get("severity") in _LEAK_BLOCKS:
            blocking.append(fd)
    numbers = {
        "passed": bool(report.passed),
        "blocking": [{k: b.get(k) for k in ("code", "severity", "title")} for b in blocking],
        "raw_score": getattr(report, "raw_score", None),
        "leak_adjusted_score": getattr(report, "leak_adjusted_score", None),
    }
    if report.passed and not blocking:
        return GateResult(
            "audit", "pass", "no leak finding of high severity or above", numbers
        ), data
    titles = (
        "; ".join(f"{b.get('severity')}: {b.get('title')}" for b in blocking[:3])
        or "audit did not pass"
    )
    return GateResult(
        "audit",
        "fail",
        f"{len(blocking)} leak finding(s) of high severity or above: {titles}",
        numbers,
        f"remove the leak in {version} (see `evotree audit {version}`), branch a clean version",
    ), data


# ------------------------------------------------------------------ signal findings
def _signal_gate(
    ws: Workspace, version: str, run_plugins: bool = True
) -> tuple[GateResult, list[dict[str, Any]]]:
    """Re-analyses the evidence now (the recorded findings file is not trusted on its own)."""

    hid, plugin_source, thresholds, _trust = _analyzers_data(ws)
    note = ""
    try:
        if run_plugins or plugin_source is None:
            found = diagnose(
                ws, version, analyzers=active_analyzers(ws), layers=["signal"], record=False
            ).findings
        else:
            found = _builtin_signal(ws, version, thresholds) + _recorded_critical(ws, version)
            note = (
                f" (plug-in analyzers of analyzer version {hid} not executed here; "
                "their recorded criticals counted)"
            )
    except EvotreeError as exc:
        return GateResult(
            "signal",
            "unavailable",
            f"signal layer could not run: {exc.message}",
            fix=exc.fix or f"evotree diagnose {version}",
        ), []
    critical = [f for f in found if f.get("severity") == "critical"]
    shown = [
        {k: f.get(k) for k in ("layer", "code", "severity", "title", "run_id", "harness_version")}
        for f in found
        if f.get("severity") in ("high", "critical")
    ]
    numbers = {
        "critical": len(critical),
        "total": len(found),
        "codes": sorted({str(f.get("code")) for f in critical}),
        "analyzers": hid,
        "plugin_code_executed": bool(plugin_source) and (run_plugins or plugin_source is None),
    }
    if not critical:
        return GateResult(
            "signal",
            "pass",
            f"no critical signal finding ({len(found)} finding(s) in all){note}",
            numbers,
        ), shown
    return GateResult(
        "signal",
        "fail",
        f"{len(critical)} critical signal finding(s): "
        + "; ".join(str(f.get("title")) for f in critical[:3])
        + note,
        numbers,
        f"fix the training signal (see `evotree diagnose {version}`) in a new version",
    ), shown


def _analyzers_data(ws: Workspace) -> tuple[str, str | None, dict[str, Any], Any]:
    """(analyzer version, plug-in source or None, threshold overrides, trust) of the analyzers
    in force, read as data.

    The analyzers in force are the end of the chain of signed analyzers promotions
    (:func:`evotree.gates.analyzer_versions.trusted_analyzers`), never whatever
    ``refs/evotree/harness`` points to: a ref moved by hand is reported in ``trust`` (the
    analyzers gate fails on it).
    """
    import tomllib

    trust = trusted_analyzers(ws)
    if trust.commit is None:
        return BUILTIN, None, {}, trust
    source = blob_at(ws, trust.commit, ANALYZERS_FILE)
    text = blob_at(ws, trust.commit, THRESHOLDS_FILE) or b""
    try:
        thresholds = tomllib.loads(text.decode("utf-8", errors="replace")).get("thresholds", {})
    except tomllib.TOMLDecodeError:
        thresholds = {}
    return (
        trust.id,
        source.decode("utf-8", errors="replace") if source is not None else None,
        thresholds if isinstance(thresholds, dict) else {},
        trust,
    )


def _builtin_signal(
    ws: Workspace, version: str, thresholds: dict[str, Any]
) -> list[dict[str, Any]]:
    """The built-in signal analyzers over the version's runs (no plug-in code loaded)."""

    record = ws.resolve(version)
    runs = [
        r.run_id for r in list_runs(ws, version=record.id) if r.status not in ("invalid", "running")
    ]
    if not runs:
        raise EvotreeError(
            f"{record.id} has no finished run to analyse", fix=f"evotree run {record.id}"
        )
    parents = (
        [r.run_id for r in list_runs(ws, version=record.parent) if r.status == "succeeded"]
        if record.parent
        else []
    )
    known = {cls.name for cls in analyzer_classes()}
    con = connect(runs_dir(ws), findings_dir=ws.state_dir / "findings")
    try:
        found = run_analyzers(
            con,
            run_ids=runs,
            version=record.id,
            layers=["signal"],
            parent_run_ids=parents,
            thresholds={k: v for k, v in thresholds.items() if k in known} or None,
        )
    finally:
        con.close()
    return [f.to_dict() for f in found]


def _recorded_critical(ws: Workspace, version: str) -> list[dict[str, Any]]:
    """Critical signal findings of the recorded diagnosis (``evotree diagnose``)."""
    import json

    path = ws.state_dir / "findings" / f"{version}.jsonl"
    out = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                f = json.loads(line)
            except json.JSONDecodeError:
                continue
            if (
                isinstance(f, dict)
                and f.get("layer") == "signal"
                and f.get("severity") == "critical"
            ):
                out.append(f)
    return out


# ------------------------------------------------------------------ protected paths
def protected_gate(ws: Workspace, policy: Policy, version: str, commit: str) -> GateResult:
    """The ``protected`` gate: the candidate's tree equals the champion's at every protected path
    (judge, policy, signers, analyzers; globs as in the audit), and its patch against the pristine
    base (``[protect].base``) has no blocking finding (:func:`evotree.harness.version_patch.version_patch`,
    the rules the audit and the check before a run use)."""

    try:
        patch = version_patch(
            ws, version, commit=commit, config=policy.config, champion_commit=policy.commit
        )
    except EvotreeError as exc:
        return GateResult(
            "protected",
            "unavailable",
            f"the patch could not be checked: {exc.message}",
            {"error": exc.to_dict()},
            exc.fix or f"evotree audit {version}",
        )
    changed = patch.changed_protected
    violations = [
        {
            "code": f.code,
            "severity": f.severity,
            "title": f.title,
            "paths": [p.get("path") for p in f.evidence.get("paths", [])][:10],
        }
        for f in patch.blocking
    ]
    numbers = {
        "paths": sorted(set(policy.config.protect.paths)),
        "changed": changed,
        "patch": patch.summary(),
        "patch_violations": violations,
    }
    if not changed and not violations:
        return GateResult(
            "protected",
            "pass",
            f"protected paths identical to the champion's; the patch against "
            f"{patch.base} passes the patch rules",
            numbers,
        )
    reasons, fixes = [], []
    if changed:
        reasons.append(
            f"{version} changes protected path(s): {', '.join(changed[:5])}"
            + (" …" if len(changed) > 5 else "")
        )
        fixes.append(
            f"restore them from the champion in a new version (git checkout {policy.commit[:10]} -- "
            f"{' '.join(changed[:3])}); policy changes go through the champion, not a candidate"
        )
    if violations:
        reasons.append(
            f"its patch against {patch.base} breaks the patch rules: "
            + "; ".join(
                f"{v['code']} ({', '.join(map(str, v['paths'][:3]))})" for v in violations[:4]
            )
        )
        fixes.append(
            f"remove the data, weights or changes outside the editable paths (see `evotree audit {version}`)"
        )
    return GateResult("protected", "fail", "; ".join(reasons), numbers, "; ".join(fixes))


_protected_gate = protected_gate


# ------------------------------------------------------------------ budget
def _budget_gate(ws: Workspace, policy: Policy, record: Any) -> GateResult:
    """The version's own spend within the per-version budgets. The tree's spend is shown, not
    judged: a spent tree budget (or search clock) refuses new runs, it never blocks reading,
    comparing or promoting what was already found — the historical best included."""

    b = policy.config.budget
    counted = trusted_usage(ws)
    # the version's usage: only what its trusted events charged (runs this workspace or a listed
    # runner recorded, sealed spend). Never the version record's cached ``usage``: a fetched
    # ledger writes that, and a remote could block a promotion by raising it.
    used = Usage.from_dict(counted.version(record.id))
    tree = Usage.from_dict(counted.tree)
    over = []
    for name, value, limit in (
        ("max_runs_per_version", used.runs, b.max_runs_per_version),
        ("max_episodes", used.episodes, b.max_episodes),
        ("max_steps", used.steps, b.max_steps),
        ("max_wall_hours", used.wall_hours, b.max_wall_hours),
        ("max_gpu_hours", used.gpu_hours, b.max_gpu_hours),
        ("max_usd", used.usd, b.max_usd),
    ):
        if limit and value > limit:
            over.append(f"budget.{name}: {value:g} used of {limit:g}")
    tree_limits = {
        name: limit
        for name, limit in (
            ("tree_max_episodes", b.tree_max_episodes),
            ("tree_max_steps", b.tree_max_steps),
            ("tree_max_wall_hours", b.tree_max_wall_hours),
            ("tree_max_gpu_hours", b.tree_max_gpu_hours),
            ("tree_max_usd", b.tree_max_usd),
        )
        if limit
    }
    numbers = {
        "version_usage": used.to_dict(),
        "tree_usage": tree.to_dict(),
        "over": over,
        "tree_limits": tree_limits,
    }
    tree_note = (
        f"; the tree: {tree.usd:g} USD"
        + (f" of {b.tree_max_usd:g}" if b.tree_max_usd else "")
        + f", {tree.wall_hours:g} wall hours (information: a spent tree budget stops new runs only)"
    )
    if not over:
        return GateResult(
            "budget",
            "pass",
            f"within budget ({used.runs} run(s) of {b.max_runs_per_version}, "
            f"{used.usd:g} USD){tree_note}",
            numbers,
        )
    return GateResult(
        "budget",
        "fail",
        "budget exceeded: " + "; ".join(over) + tree_note,
        numbers,
        "a version that overspent its budget is not promoted; rerun within budget in a new version",
    )


# ---------------------------------------------------------------- analyzer version
def _analyzers_gate(ws: Workspace, version: str) -> GateResult:
    """The analyzers in force must be signed, and the candidate diagnosed (``evotree diagnose``)
    with them."""
    import json

    active, _, _, trust = _analyzers_data(
        ws
    )  # read as data: active_analyzers() would load plug-in code
    if not trust.trusted:
        return GateResult(
            "analyzers",
            "fail",
            f"{trust.warning}: the gates do not judge with unsigned analyzers",
            {"active_analyzers": active, "problems": trust.problems},
            trust.fix,
        )
    path = ws.state_dir / "findings" / f"{version}.jsonl"
    diagnosed = any(
        e.event.kind == "finding" for e in ws.ledger.entries(version=version, limit=200)
    )
    if not path.exists() or not diagnosed:
        return GateResult(
            "analyzers",
            "fail",
            f"{version} has not been diagnosed on this machine",
            {"active_analyzers": active},
            f"evotree diagnose {version}",
        )
    stamps = set()
    for line in path.read_text().splitlines():
        try:
            stamps.add(json.loads(line).get("harness_version"))
        except (json.JSONDecodeError, AttributeError):
            stamps.add("<unreadable>")
    numbers = {"active_analyzers": active, "diagnosed_with": sorted(s for s in stamps if s)}
    if not stamps or stamps == {active}:
        return GateResult(
            "analyzers", "pass", f"diagnosed with the analyzers in force ({active})", numbers
        )
    return GateResult(
        "analyzers",
        "fail",
        f"diagnosed with {', '.join(sorted(map(str, stamps)))}, "
        f"the analyzers in force are {active}",
        numbers,
        f"re-diagnose: evotree diagnose {version}",
    )
