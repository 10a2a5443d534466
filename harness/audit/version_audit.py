"""`evotree audit V`: every leak check over a version's runs, the leak-adjusted score, the record.

:func:`audit_version` reads the version's finished runs on this machine and runs:

1. the **trajectory audit** over every rollout that recorded commands (``commands`` column;
   the ``text`` column is its observation text), both phases — the judge's (eval) rollouts are
   the trusted record, the train phase's are the candidate's own;
2. **hash ancestry** for rollouts whose task repository the run recorded with
   :func:`record_task` (``evidence/<phase>/audit_tasks.jsonl``: task id, repository, base);
3. **contamination** of the hidden splits (``[eval].judge_paths`` in the champion's tree) by
   the version's tree (:mod:`evotree.harness.audit.contamination`);
4. **protected paths** (:func:`evotree.harness.audit.protected.check_protected_paths`) and the
   **hygiene** of the recorded task repositories
   (:func:`evotree.harness.audit.repo.audit_repository`;
   capped at ``warn``: an unclean environment is not the version's fault, but it is why a
   leak was possible).

A check that crashes becomes an ``audit.check_error`` finding of severity high: the audit fails
closed. ``passed`` means no finding of severity high or above.

**Scores.** ``raw_score``: the mean judge score (eval phase) of the headline split
(validation > heldout > test > train) over the runs. ``leak_adjusted_score``: the same mean with
the evals of flagged trajectories (same run and task id) left out — the score of the
trajectories that did not leak; None when every one leaked. ``leak_zeroed_score``: the
flagged ones counted as failures (score 0) — the lower bound, the score a leak-free
environment would at worst have given.

With ``record`` the findings go to ``.evotree/findings/<V>.audit.jsonl`` (the ``findings``
view of ``evotree sql`` reads them), one ``audit`` event goes on the ledger, and a failed
audit is recorded in memory as an incident (:func:`evotree.memory.record.record_incident`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotree.core.findings import Finding, Severity, sort_findings
from evotree.harness.audit.commands import RuleSet
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.ancestry import Ancestry
from evotree.harness.audit.trajectories import audit_trajectory
from evotree.harness.audit.verdicts import TrajectoryVerdict, findings_from_verdicts
from evotree.harness.layout import ENV_EVIDENCE_DIR
from evotree.harness.layout import ENV_PHASE
from evotree.harness.recorder import RecorderError
from evotree.harness.query import connect
from evotree.harness.records import HEADLINE_SPLITS
from evotree.harness.records import list_runs
from evotree.harness.records import runs_dir
from evotree.harness.audit.trace import AGENT_SESSIONS
from evotree.core.refs import CHAMPION_REF
from evotree.harness.judge_store import judge_in_force
from evotree.harness.audit.transcripts import rollout_trajectory
from evotree.harness.compaction import sql_string
from evotree.core.findings import write_findings_file
from evotree.core.events import Audit
from evotree.core.ledger import Event
from evotree.core.visibility import hidden

__all__ = ["AuditReport", "audit_version", "record_audit", "record_task", "TASKS_FILE"]

#: Where :func:`record_task` writes, inside ``evidence/<phase>/``.
TASKS_FILE = "audit_tasks.jsonl"
#: A sandboxed phase's runtime trace (:mod:`evotree.harness.audit.trace`).
TRACE_FILE = "exec_trace.jsonl"
_LEDGER_FINDINGS = 50
_MAX_REPOS = 50
#: The prefilter in SQL: a superset of :data:`evotree.harness.audit.commands.PREFILTER_KEYWORDS`
#: (tested).
_SQL_PREFILTER = (
    r"git|curl|wget|aria2|http|fetch|ftp|ssh|scp|rsync|nc|telnet|socat|w3m|lynx|links|xh|socket|"
    r"urlopen|requests|urllib|pip|test|conftest|customize|\.pth|eval|base64|xxd|perl|\$|"
    r"fromhex|unhexlify|decode|rot13|rot_13|openssl|\|rev|\| rev|exec|apply_patch|"
    r"str_replace_editor|"
    r"end_of_edit|base32|basenc|connect\(\)|"
    # built names, definitions a later step uses, forge clients, make, git libraries
    r"printf|`|echo -e|x[0-9a-f]{2}|[0-7]{3}|dulwich|zlib|\bgh\b|hub|glab|make|"
    r"subprocess|popen|system\(|spawn|"
    r"(^|[;&|(\n])\s*(export\s+|declare\s+|local\s+|readonly\s+)?[A-Za-z_][A-Za-z0-9_]*\+?="
)


def record_task(
    task_id: str,
    repo: str | os.PathLike[str],
    base: str | None = None,
    *,
    environ: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Record, from inside a run, the task repository (and base commit) a trajectory ran in.

    Called by a policy or a judge next to ``rec.rollout_group(..., task_id=...)``; the audit
    uses it for hash ancestry and repository hygiene. ``base`` defaults to the repository's
    HEAD at the time of the call (record it before the trajectory starts).
    """

    env = os.environ if environ is None else environ
    evidence = env.get(ENV_EVIDENCE_DIR)
    if not evidence:
        raise RecorderError(
            f"no evotree run: {ENV_EVIDENCE_DIR} is not set",
            fix="call record_task from a script started by `evotree run`",
        )
    repo_path = str(Path(repo).resolve())
    if base is None:
        proc = subprocess.run(
            ["git", "-C", repo_path, "rev-parse", "HEAD"], capture_output=True, text=True
        )
        if proc.returncode != 0:
            raise AuditInputError(
                f"{repo_path}: cannot read HEAD ({proc.stderr.strip()})",
                fix="pass base= explicitly, or a repository with a commit",
            )
        base = proc.stdout.strip()
    row = {
        "task_id": str(task_id),
        "repo": repo_path,
        "base": base,
        "phase": env.get(ENV_PHASE, "train"),
        "ts": time.time(),
    }
    path = Path(evidence) / TASKS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
    return row


@dataclass
class AuditReport:
    """What ``evotree audit V --json`` prints (schema: ``audit.schema.json``)."""

    version: str
    passed: bool
    findings: list[Finding]
    trajectories: int
    flagged: int
    git_history_rate: float
    raw_score: float | None
    leak_adjusted_score: float | None
    leak_zeroed_score: float | None = None
    score_metric: str | None = None
    git_history: int = 0
    runs: list[str] = field(default_factory=list)
    checks: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    verdicts: list[TrajectoryVerdict] = field(default_factory=list)  # flagged or with hits
    contamination: dict[str, Any] | None = None
    incident: str | None = None
    seconds: float = 0.0

    @property
    def worst(self) -> str | None:
        worst = max((f.rank for f in self.findings), default=None)
        return worst.label if worst is not None else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "version": self.version,
            "passed": self.passed,
            "worst": self.worst,
            "findings": [f.to_dict() for f in self.findings],
            "trajectories": self.trajectories,
            "flagged": self.flagged,
            "git_history": self.git_history,
            "git_history_rate": self.git_history_rate,
            "raw_score": self.raw_score,
            "leak_adjusted_score": self.leak_adjusted_score,
            "leak_zeroed_score": self.leak_zeroed_score,
            "score_metric": self.score_metric,
            "runs": self.runs,
            "checks": self.checks,
            "warnings": self.warnings,
            "contamination": self.contamination,
            "incident": self.incident,
            "seconds": round(self.seconds, 3),
            "verdicts": [v.to_dict() for v in self.verdicts[:200]],
        }


def _tasks(run_dir: Path) -> dict[str, dict[str, Any]]:
    """task id -> {repo, base} recorded by the run (the judge's records win over the train
    phase's)."""
    found: dict[str, dict[str, Any]] = {}
    for phase in ("train", "eval"):
        path = run_dir / "evidence" / phase / TASKS_FILE
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict) and row.get("task_id") and row.get("repo"):
                found[str(row["task_id"])] = {
                    "repo": str(row["repo"]),
                    "base": row.get("base"),
                    "phase": phase,
                }
    return found


def _check_error(name: str, exc: BaseException, version: str) -> Finding:
    return Finding(
        layer="audit",
        code="audit.check_error",
        severity="high",
        title=f"the {name} check could not run: the audit fails closed",
        evidence={"check": name, "error": f"{type(exc).__name__}: {exc}"[:500]},
        suggestion="fix the cause and re-run `evotree audit`",
        version=version,
    )


def audit_version(
    ws: Any,
    version: str,
    *,
    record: bool = True,
    trajectory_files: Sequence[str] = (),
    hidden_paths: Sequence[str] = (),
    progress: Any = None,
) -> AuditReport:
    """Run every leak check over ``version``'s runs (module doc); record unless ``record=False``.

    ``trajectory_files``: more trajectories to audit (any format of
    :mod:`evotree.harness.audit.transcripts`); ``hidden_paths``: paths beyond ``[eval].judge_paths``
    that no trajectory may touch; ``progress``: a callable taking one line of text (stderr).
    """

    started = time.monotonic()
    say = progress or (lambda _line: None)
    rec = ws.resolve(version)
    vid = rec.id
    runs = [r for r in list_runs(ws, version=vid) if r.status not in ("invalid", "running")]
    run_ids = [r.run_id for r in runs]
    hidden = tuple(ws.config.eval.judge_paths) + tuple(hidden_paths)
    audit = _Audit(ws, vid, run_ids, RuleSet(hidden_paths=hidden), runs_dir(ws), say)
    # the judge's paths are the grader's data: a read of them is a leak, whatever it printed
    audit.graders = RuleSet(hidden_paths=tuple(ws.config.eval.judge_paths))
    tasks, ancestries, by_repo = _task_ancestries(audit)
    _audit_rollouts(audit, tasks, ancestries, by_repo)
    _audit_traces(audit)
    _audit_trajectory_files(audit, trajectory_files)
    n_traj = sum(audit.totals.values())
    if run_ids and not n_traj and not audit.checks.get("trajectories", "").startswith("error"):
        audit.findings.append(
            Finding(
                layer="audit",
                code="audit.no_trajectories",
                severity="info",
                title="the runs recorded no commands (rollouts' commands column is empty): "
                "the trajectory audit had nothing to read",
                suggestion="record tool calls with rec.rollout_group(..., commands=[...])",
                version=vid,
            )
        )
    audit.findings += findings_from_verdicts(audit.verdicts, version=vid, totals=dict(audit.totals))
    contamination_data = _check_contamination(audit)
    _check_protected_paths(audit)
    _check_repo_hygiene(audit, tasks)
    report = _report(audit, n_traj, _leak_scores(audit), contamination_data)
    report.seconds = time.monotonic() - started
    if record:
        record_audit(ws, report)
    return report


@dataclass
class _Audit:
    """What one :func:`audit_version` builds up check by check: the findings, what each check
    did (``checks``, in the order they ran), warnings, and the trajectories' verdicts and counts."""

    ws: Any
    vid: str
    run_ids: list[str]
    rules: RuleSet
    base_dir: Path
    say: Any
    findings: list[Finding] = field(default_factory=list)
    checks: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    verdicts: list[TrajectoryVerdict] = field(default_factory=list)
    totals: Counter[str | None] = field(default_factory=Counter)
    #: the rules over the grader's data alone (``[eval].judge_paths``)
    graders: RuleSet | None = None


def _task_ancestries(
    audit: _Audit,
) -> tuple[
    dict[tuple[str, str], dict[str, Any]],
    dict[tuple[str, str], Ancestry | None],
    dict[tuple[str, str | None, bool], Ancestry | None],
]:
    """(run and task -> recorded repository, run and task -> its ancestry, repository -> its
    ancestry): the task repositories the runs recorded, each opened once."""
    tasks: dict[tuple[str, str], dict[str, Any]] = {}
    for run_id in audit.run_ids:
        for task_id, info in _tasks(audit.base_dir / run_id).items():
            tasks[(run_id, task_id)] = info
    ancestries: dict[tuple[str, str], Ancestry | None] = {}
    by_repo: dict[tuple[str, str | None, bool], Ancestry | None] = {}
    for key, info in tasks.items():
        # a base only the train phase recorded is the candidate's word: it may find future hashes,
        # never clear a hit (it could name the reference fix itself as the base)
        trusted = info.get("phase") == "eval"
        repo_key = (info["repo"], info.get("base"), trusted)
        if repo_key not in by_repo:
            try:
                by_repo[repo_key] = Ancestry(info["repo"], info.get("base"), trusted=trusted)
            except AuditInputError as exc:
                by_repo[repo_key] = None
                audit.warnings.append(f"hash ancestry skipped for {info['repo']}: {exc.message}")
        ancestries[key] = by_repo[repo_key]
    return tasks, ancestries, by_repo


def _audit_rollouts(
    audit: _Audit,
    tasks: dict[tuple[str, str], dict[str, Any]],
    ancestries: dict[tuple[str, str], Ancestry | None],
    by_repo: dict[tuple[str, str | None, bool], Ancestry | None],
) -> None:
    """The trajectory audit over the runs' rollouts (with hash ancestry where recorded)."""
    run_ids, vid = audit.run_ids, audit.vid
    if run_ids:
        audit.say(f"auditing trajectories of {len(run_ids)} run(s)")
        try:
            audit.verdicts, audit.totals = _rollout_verdicts(
                connect(audit.base_dir), run_ids, audit.rules, ancestries, tasks, audit.graders
            )
            audit.checks["trajectories"] = f"{sum(audit.totals.values())} trajectories"
            audit.checks["hash_ancestry"] = (
                f"{len([a for a in by_repo.values() if a])} task repositories"
                if by_repo
                else "skipped: no run recorded its task repositories"
            )
        except Exception as exc:  # noqa: BLE001 - fail closed, say why
            audit.findings.append(_check_error("trajectory", exc, vid))
            audit.checks["trajectories"] = f"error: {exc}"
    else:
        audit.checks["trajectories"] = "skipped: no finished run of this version on this machine"
        audit.findings.append(
            Finding(
                layer="audit",
                code="audit.no_runs",
                severity="info",
                title="no finished run of this version on this machine: no trajectory to audit",
                suggestion=f"run it first: evotree run {vid}",
                version=vid,
            )
        )


def _trace_files(audit: _Audit) -> tuple[list[tuple[Path, str, str, str]], int]:
    """(file, trajectory id, run id, phase) of the runtime traces of the sandboxed phases
    (evidence/<phase>/exec_trace.jsonl) and of the `evotree agent` sessions that could touch
    this version (.evotree/agent-sessions/*/), and how many of them are the phases'."""
    traces: list[tuple[Path, str, str, str]] = []  # (file, trajectory id, run id, phase)
    for run_id in audit.run_ids:
        for trace in sorted((audit.base_dir / run_id / "evidence").glob(f"*/{TRACE_FILE}")):
            traces.append((trace, f"{run_id}/{trace.parent.name}/trace", run_id, trace.parent.name))
    n_phase_traces = len(traces)
    for session in sorted((audit.ws.state_dir / AGENT_SESSIONS).glob("*/session.json")):
        try:
            info = json.loads(session.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            audit.findings.append(_check_error("agent session trace", exc, audit.vid))
            continue
        if isinstance(info, dict) and audit.vid in (info.get("versions") or []):
            name = session.parent.name
            traces.append(
                (session.parent / TRACE_FILE, f"agent/{name}/trace", f"agent:{name}", "agent")
            )
    return traces, n_phase_traces


def _audit_traces(audit: _Audit) -> None:
    """The trajectory audit over the runtime traces; calls the tracer could not read whole are
    a finding of their own."""
    traces, n_phase_traces = _trace_files(audit)
    incomplete: list[dict[str, Any]] = []
    for trace, tid, run_id, phase in traces:
        try:
            from evotree.harness.audit.trace import read_trace_rows
            from evotree.harness.audit.transcripts import trace_trajectory

            rows = read_trace_rows(trace.read_text(encoding="utf-8", errors="replace"))
            incomplete += [
                {
                    "trace": tid,
                    "pid": r.get("pid"),
                    "path": r.get("path"),
                    "why": "unreadable" if r.get("unreadable") else "truncated",
                }
                for r in rows
                if r.get("kind") == "exec" and (r.get("unreadable") or r.get("truncated"))
            ]
            traj = trace_trajectory(rows, tid, str(trace), run_id=run_id, phase=phase)
            audit.verdicts.append(audit_trajectory(traj, audit.rules, None, audit.graders))
        except Exception as exc:  # noqa: BLE001 - fail closed, say why
            audit.findings.append(
                _check_error(
                    "agent session trace" if phase == "agent" else "runtime trace", exc, audit.vid
                )
            )
    if incomplete:  # the tracer could not read these calls whole: say so, never pass them over
        audit.findings.append(
            Finding(
                layer="audit",
                code="audit.trace_incomplete",
                severity="warn",
                title=f"{len(incomplete)} program start(s) in the runtime trace could not be read "
                "whole (the caller died during the call, or its arguments exceeded what the "
                "kernel accepts)",
                evidence={"count": len(incomplete), "examples": incomplete[:5]},
                suggestion="look at the phase's logs around these calls; a phase that keeps "
                "producing them is working against the tracer",
                version=audit.vid,
            )
        )
    if traces:
        audit.checks["runtime_traces"] = (
            f"{n_phase_traces} phase trace(s), "
            f"{len(traces) - n_phase_traces} agent session trace(s)"
        )


def _audit_trajectory_files(audit: _Audit, trajectory_files: Sequence[str]) -> None:
    """The trajectory audit over the files passed besides the runs."""
    if trajectory_files:
        from evotree.harness.audit.trajectories import read_or_unreadable

        for path in trajectory_files:
            for traj in read_or_unreadable(path):
                audit.verdicts.append(audit_trajectory(traj, audit.rules, None, audit.graders))
                audit.totals[traj.run_id] += 1
        audit.checks["trajectory_files"] = f"{len(trajectory_files)} file(s)"


def _check_contamination(audit: _Audit) -> dict[str, Any] | None:
    """Contamination of the hidden splits (the judge's tree) by the version's tree; its JSON
    form, None when the check broke (a finding then)."""
    ws, vid = audit.ws, audit.vid
    audit.say("checking contamination of the hidden splits")
    try:
        from evotree.harness.audit.contamination import contamination, tree_documents

        git_repo = ws.git.repo
        champion_tree = _champion_tree(ws)
        from evotree.core.refs import branch_ref

        version_tree = git_repo.revparse_single(branch_ref(vid)).peel(_commit_type()).tree
        hidden_files, hidden_docs, cut_hidden = tree_documents(
            git_repo, champion_tree, include=list(ws.config.eval.judge_paths), data_only=True
        )
        train_files, train_docs, cut_train = tree_documents(
            git_repo, version_tree, exclude=list(ws.config.eval.judge_paths)
        )
        result = contamination((d for _, d in train_docs), hidden_docs)
        result.hidden_files, result.train_files = hidden_files, train_files
        result.truncated = cut_hidden or cut_train
        if result.truncated:
            audit.warnings.append(
                "contamination: files over 32 MB were skipped or the 512 MB read limit was "
                "reached; the check is partial"
            )
        audit.findings += result.findings(version=vid)
        contamination_data = result.to_dict()
        audit.checks["contamination"] = f"{result.checked} hidden documents checked"
    except Exception as exc:  # noqa: BLE001
        audit.findings.append(_check_error("contamination", exc, vid))
        contamination_data = None
        audit.checks["contamination"] = f"error: {exc}"
    return contamination_data


def _check_protected_paths(audit: _Audit) -> None:
    """Protected paths (the other audit module)."""
    try:
        from evotree.harness.audit.protected import check_protected_paths
    except ImportError:
        audit.checks["protected_paths"] = (
            "skipped: evotree.harness.audit.protected is not installed"
        )
    else:
        try:
            found = check_protected_paths(audit.ws, audit.vid)
            audit.findings += found
            audit.checks["protected_paths"] = f"{len(found)} finding(s)"
        except Exception as exc:  # noqa: BLE001
            audit.findings.append(_check_error("protected paths", exc, audit.vid))
            audit.checks["protected_paths"] = f"error: {exc}"


def _check_repo_hygiene(audit: _Audit, tasks: dict[tuple[str, str], dict[str, Any]]) -> None:
    """Hygiene of the task repositories the runs recorded (at most :data:`_MAX_REPOS`): one
    finding per code, capped at warn."""
    repos = sorted({info["repo"]: info.get("base") for info in tasks.values()}.items())
    if not repos:
        audit.checks["repo_hygiene"] = "skipped: no run recorded its task repositories"
        return
    try:
        from evotree.harness.audit.repo import audit_repository
    except ImportError:
        audit.checks["repo_hygiene"] = "skipped: evotree.harness.audit.repo is not installed"
        return
    checked = 0
    by_code: dict[str, list[tuple[str, Finding]]] = {}
    for path, base in repos[:_MAX_REPOS]:
        if not Path(path).exists():
            audit.warnings.append(f"task repository {path} is gone: its hygiene was not checked")
            continue
        try:
            for f in audit_repository(path, base=base):
                by_code.setdefault(f.code, []).append((path, f))
            checked += 1
        except Exception as exc:  # noqa: BLE001 - an unreadable environment is a warning
            audit.warnings.append(f"hygiene of {path} not checked: {exc}")
    for code, found_in in by_code.items():
        audit.findings.append(_hygiene_finding(code, found_in, checked, audit.vid))
    audit.checks["repo_hygiene"] = f"{checked} task repositories" + (
        f" (first {_MAX_REPOS} of {len(repos)})" if len(repos) > _MAX_REPOS else ""
    )


def _hygiene_finding(
    code: str, found_in: list[tuple[str, Finding]], checked: int, vid: str
) -> Finding:
    """One hygiene code over the task repositories it was found in, capped at warn (the task
    environment, not the version)."""
    worst_found = max(f.rank for _, f in found_in)
    first = found_in[0][1]
    capped = "warn" if worst_found >= Severity.WARN else worst_found.label
    return Finding(
        layer="audit",
        code=code,
        severity=capped,
        title=f"{len(found_in)} of {checked} task repositories: {first.title}",
        evidence={
            "repositories": [p for p, _ in found_in[:5]],
            "count": len(found_in),
            "severity_as_found": worst_found.label,
            "first": first.evidence,
            "note": "the task environment, not the version: capped at warn",
        },
        suggestion=first.suggestion,
        version=vid,
        harness_version=first.harness_version,
    )


def _leak_scores(
    audit: _Audit,
) -> tuple[float | None, float | None, float | None, str | None]:
    """(raw, leak-adjusted, leak-zeroed, metric); all None before finalize in a hidden workspace,
    or when they cannot be computed (a warning then)."""
    raw = adjusted = zeroed = None
    metric = None

    # EvoPolicyGym's boundary: no judge's score before finalize
    if audit.run_ids and not hidden(audit.ws):
        flagged_keys = {
            (v.run_id, v.task_id) for v in audit.verdicts if v.flagged and v.task_id is not None
        }
        try:
            raw, adjusted, zeroed, metric = _scores(
                connect(audit.base_dir), audit.run_ids, flagged_keys, HEADLINE_SPLITS
            )
        except Exception as exc:  # noqa: BLE001 - no score is better than a wrong one
            audit.warnings.append(f"scores not computed: {exc}")
    return raw, adjusted, zeroed, metric


def _report(
    audit: _Audit,
    n_traj: int,
    scores: tuple[float | None, float | None, float | None, str | None],
    contamination_data: dict[str, Any] | None,
) -> AuditReport:
    """The report of the checks: findings sorted, passed when none is high or above."""
    raw, adjusted, zeroed, metric = scores
    findings = sort_findings(audit.findings)
    passed = not any(f.rank >= Severity.HIGH for f in findings)
    verdicts = audit.verdicts
    flagged = sum(v.flagged for v in verdicts if v.format != "trace")
    # the share of the rollouts' trajectories that read git history (runtime traces are evidence of
    # another kind: their hits are findings, but they are not trajectories of the rate)
    history = sum(v.uses_git_history for v in verdicts if v.format != "trace")
    return AuditReport(
        version=audit.vid,
        passed=passed,
        findings=findings,
        trajectories=n_traj,
        flagged=flagged,
        git_history_rate=history / n_traj if n_traj else 0.0,
        raw_score=raw,
        leak_adjusted_score=adjusted,
        leak_zeroed_score=zeroed,
        score_metric=metric,
        git_history=history,
        runs=audit.run_ids,
        checks=audit.checks,
        warnings=audit.warnings,
        verdicts=[v for v in verdicts if v.hits],
        contamination=contamination_data,
    )


def _commit_type() -> Any:
    import pygit2

    return pygit2.Commit


def _champion_tree(ws: Any) -> Any:
    """The tree holding the hidden files: the judge store's commit in force (refs/evotree/judge,
    as the ledger records it), else (a workspace from before the store) the champion's tree."""

    judge = judge_in_force(ws)
    if judge is not None:
        return ws.git.repo[judge].peel(_commit_type()).tree
    return ws.git.repo.revparse_single(CHAMPION_REF).peel(_commit_type()).tree


def _rollout_verdicts(
    con: Any,
    run_ids: list[str],
    rules: RuleSet,
    ancestries: dict[tuple[str, str], Ancestry | None],
    tasks: dict[tuple[str, str], dict[str, Any]],
    graders: RuleSet | None = None,
) -> tuple[list[TrajectoryVerdict], Counter[str | None]]:
    """Verdicts of the rollouts with commands; only prefilter candidates (and rollouts of tasks
    with a recorded repository: hash ancestry reads their text) leave DuckDB."""

    try:
        ids = ", ".join(sql_string(r) for r in run_ids)
        totals: Counter[str | None] = Counter(
            dict(
                con.execute(
                    f"SELECT run_id, count(*) FROM _rollouts WHERE run_id IN ({ids}) "
                    "AND len(commands) > 0 "
                    "GROUP BY run_id"
                ).fetchall()
            )
        )
        with_repo = sorted({run for run, _ in tasks})
        repo_runs = ", ".join(sql_string(r) for r in with_repo) or "NULL"
        needles = "".join("|" + re.escape(n) for n in rules.hidden_needles if n)
        pattern = sql_string(_SQL_PREFILTER + needles)
        cursor = con.execute(
            "SELECT run_id, phase, step, group_id, task_id, sample_index, commands, text "
            "FROM _rollouts "
            f"WHERE run_id IN ({ids}) AND len(commands) > 0 AND (run_id IN ({repo_runs}) OR "
            "list_bool_or(list_transform(commands, lambda c: "
            f"regexp_matches(translate(c, '\"''\\', ''), {pattern}, 'i'))))"
        )
        columns = [d[0] for d in cursor.description]
        verdicts = []
        while True:
            rows = cursor.fetchmany(10000)
            if not rows:
                break
            for row in rows:
                traj = rollout_trajectory(dict(zip(columns, row)))
                ancestry = ancestries.get((traj.run_id or "", traj.task_id or ""))
                verdicts.append(audit_trajectory(traj, rules, ancestry, graders))
        return verdicts, totals
    finally:
        con.close()


def _scores(
    con: Any, run_ids: list[str], flagged: set[tuple[str | None, str | None]], splits: Sequence[str]
) -> tuple[float | None, float | None, float | None, str | None]:
    """(raw, leak-adjusted, leak-zeroed, metric) over the eval phase's headline split."""

    try:
        ids = ", ".join(sql_string(r) for r in run_ids)
        rows = con.execute(
            f"SELECT split, run_id, task_id, score FROM _evals WHERE run_id IN ({ids}) "
            "AND phase = 'eval' AND score IS NOT NULL"
        ).fetchall()
    finally:
        con.close()
    by_split: dict[str, list[tuple[str, str, float]]] = {}
    for split, run_id, task_id, score in rows:
        by_split.setdefault(split, []).append((run_id, task_id, float(score)))
    split = next((s for s in splits if by_split.get(s)), None)
    if split is None:
        return None, None, None, None
    values = by_split[split]
    raw = sum(s for _, _, s in values) / len(values)
    clean = [s for r, t, s in values if (r, t) not in flagged]
    adjusted = sum(clean) / len(clean) if clean else None
    zeroed = sum(0.0 if (r, t) in flagged else s for r, t, s in values) / len(values)
    return raw, adjusted, zeroed, f"{split}/mean_score"


def record_audit(ws: Any, report: AuditReport) -> None:
    """Findings file (atomic), one ``audit`` ledger event, an incident in memory on failure."""

    write_findings_file(
        ws.state_dir / "findings",
        f"{report.version}.audit.jsonl",
        (finding.to_dict() for finding in report.findings),
    )
    if not report.passed:
        try:
            from evotree.memory.record import record_incident
        except ImportError:
            report.warnings.append(
                "evotree.memory.record.record_incident is not available: "
                "the incident is not in memory"
            )
        else:
            try:
                high = [f.to_dict() for f in report.findings if f.rank >= Severity.HIGH]
                entry = record_incident(ws, report.version, high)
                report.incident = str(
                    getattr(entry, "id", None) or getattr(entry, "key", None) or entry
                )
            except Exception as exc:  # noqa: BLE001 - memory must not hide the audit's verdict
                report.warnings.append(f"the incident could not be recorded in memory: {exc}")
    actor = ws.git.identity()
    counts: dict[str, int] = {}
    for finding in report.findings:
        counts[finding.severity] = counts.get(finding.severity, 0) + 1
    listed = [
        {"code": f.code, "severity": f.severity, "title": f.title, "run_id": f.run_id}
        for f in report.findings[:_LEDGER_FINDINGS]
    ]
    audited = Audit(
        passed=report.passed,
        worst=report.worst,
        runs=list(report.runs),
        trajectories=report.trajectories,
        flagged=report.flagged,
        git_history_rate=report.git_history_rate,
        raw_score=report.raw_score,
        leak_adjusted_score=report.leak_adjusted_score,
        leak_zeroed_score=report.leak_zeroed_score,
        score_metric=report.score_metric,
        counts=counts,
        findings=listed,
        total=len(report.findings),
        incident=report.incident,
    )

    def change(txn: Any) -> Event:
        txn.require(report.version)
        return Event.of(audited, version=report.version, actor=str(actor))

    ws.ledger.transact(change, actor=actor)
