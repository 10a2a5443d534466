"""Writing memory: what promotion, rejection, abandonment and audits teach, and lessons by hand.

These are called by the gates (promotion, rejection), ``evotree abandon`` and the audits. Each
returns the entries it wrote (already-present ones are not written twice). Memory is advice for
the next version; nothing here is evidence that a gate may rely on.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pygit2

import evotree.skills as skill_library
from evotree.core.ledger import EventKind, utcnow
from evotree.core.workspace import Workspace
from evotree.memory.model import EntryKind, InvalidMemory, MemoryEntry
from evotree.memory.store import MemoryStore
from evotree.skills.recipe import SKILLS_FILE, parse_skills_text
from evotree.core.findings import Finding
from evotree.core.findings import Severity

__all__ = [
    "add_entry",
    "applied_skills",
    "findings_summary",
    "record_abandonment",
    "record_incident",
    "record_promotion",
    "record_rejection",
    "workspace_id",
]

_ROOT = "v0"
_SUMMARY_CODES = 10
_INCIDENT_FINDINGS = 50
MANUAL_KINDS = (EntryKind.LESSON.value, EntryKind.NEGATIVE_EVIDENCE.value)


def workspace_id(ws: Workspace) -> str:
    """A stable id of the workspace: 12 hex digits hashing its root commit and ``init`` time.

    Both are in the ledger, so every clone has the same id; two workspaces initialized from
    the same commit still differ (their ``init`` times differ).
    """
    snapshot = ws.ledger.snapshot()
    record = snapshot.version(_ROOT)
    base = record.base_commit if record is not None else str(ws.git.head_commit())
    seed = f"{base}\n{snapshot.meta.get('created_at') or ''}"
    return hashlib.sha256(seed.encode()).hexdigest()[:12]


def applied_skills(ws: Workspace, version: str, commit: str | None = None) -> list[dict[str, Any]]:
    """The skills applied to ``version`` as ``[{"name", "params"}]``, from its ``skills.toml``.

    Without ``commit``, the branch tip's recipe (:func:`skills.applied_skills`); with it, the
    recipe of exactly that commit (a promotion credits what was judged, not what the branch
    holds now).
    """
    record = ws.resolve(version)
    if commit is None:
        return [
            {"name": s.name, "params": dict(s.params)}
            for s in skill_library.applied_skills(ws, record.id)
        ]
    tree = _commit(ws, commit).tree
    if SKILLS_FILE not in tree:
        return []
    blob = ws.git.repo[tree[SKILLS_FILE].id]
    if not isinstance(blob, pygit2.Blob):
        raise InvalidMemory(
            f"{SKILLS_FILE} of {record.id} at {commit[:10]} is not a file",
            fix=f"inspect it with `git show {commit}:{SKILLS_FILE}`",
        )
    parsed = parse_skills_text(
        blob.data.decode("utf-8", errors="replace"),
        source=f"{SKILLS_FILE} of {record.id} at {commit[:10]}",
    )
    return [{"name": s.name, "params": dict(s.params)} for s in parsed]


def _commit(ws: Workspace, commit: str) -> pygit2.Commit:
    """The commit ``commit`` names, or :class:`InvalidMemory`."""
    try:
        return ws.git.repo.revparse_single(commit).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
        raise InvalidMemory(
            f"{commit!r} does not name a commit ({exc})",
            fix="pass the promoted commit's full id",
            commit=commit,
        ) from None


def findings_summary(ws: Workspace, version: str) -> dict[str, Any] | None:
    """The version's latest diagnosis from the ledger (``finding`` event): worst, counts, top codes."""
    for entry in ws.ledger.entries(version=version):
        if entry.event.kind == EventKind.FINDING.value:
            data = entry.event.data
            listed = data.get("findings") or []
            return {
                "worst": data.get("worst"),
                "counts": data.get("counts") or {},
                "total": data.get("total", len(listed)),
                "codes": [f.get("code") for f in listed[:_SUMMARY_CODES] if isinstance(f, dict)],
                "titles": [f.get("title") for f in listed[:_SUMMARY_CODES] if isinstance(f, dict)],
                "ledger_commit": entry.commit,
            }
    return None


def _base(
    ws: Workspace, kind: EntryKind, text: str, version: str | None, **kwargs: Any
) -> MemoryEntry:
    return MemoryEntry(
        kind=kind.value,
        text=text,
        version=version,
        domain=ws.config.workspace.domain,
        workspace=workspace_id(ws),
        created_at=utcnow(),
        created_by=str(ws.git.identity()),
        **kwargs,
    )


def _version_links(ws: Workspace, version: str, commit: str | None = None) -> dict[str, Any]:
    """The version's commit (``commit`` when given, else its branch tip) and the ledger head."""
    record = ws.resolve(version)
    tip = (
        _commit(ws, commit).id
        if commit is not None
        else ws.git.ref_target(f"refs/heads/{record.branch}")
    )
    head = ws.ledger.head()
    return {
        "version_commit": str(tip) if tip is not None else record.base_commit,
        "ledger_commit": str(head.id) if head is not None else None,
    }


def _fmt(value: Any, spec: str = "+.4g") -> str:
    return format(value, spec) if isinstance(value, (int, float)) else "n/a"


def _oriented(comparison: dict[str, Any], version: str) -> dict[str, Any]:
    """The comparison as Δ = ``version`` − previous champion (flipped if it was run the other way)."""
    delta, ci = comparison.get("delta"), comparison.get("ci")
    if comparison.get("a") == version and comparison.get("b") != version:
        delta = -delta if isinstance(delta, (int, float)) else delta
        if (
            isinstance(ci, (list, tuple))
            and len(ci) == 2
            and all(isinstance(c, (int, float)) for c in ci)
        ):
            ci = [-ci[1], -ci[0]]
    return {
        "delta": delta,
        "ci": list(ci) if isinstance(ci, (list, tuple)) else None,
        "p_value": comparison.get("p_value"),
        "test": comparison.get("test"),
        "n_tasks": comparison.get("n_tasks"),
        "n_seeds": comparison.get("n_seeds"),
        "decision": comparison.get("decision"),
        "split": comparison.get("split"),
        "a": comparison.get("a"),
        "b": comparison.get("b"),
    }


def _significant(result: dict[str, Any], alpha: float) -> bool:
    ci, p = result.get("ci"), result.get("p_value")
    return (
        isinstance(ci, list)
        and len(ci) == 2
        and isinstance(ci[0], (int, float))
        and ci[0] > 0
        and isinstance(p, (int, float))
        and p < alpha
    )


def record_promotion(
    ws: Workspace,
    version: str,
    *,
    previous_champion: str,
    comparison: dict[str, Any] | None,
    commit: str | None = None,
) -> list[MemoryEntry]:
    """On promotion: one skill verification per skill applied to ``version``, plus a lesson.

    ``comparison`` is ``evotree.diagnostics.compare.compare(ws, previous_champion, version).to_dict()``
    (Δ = version − previous champion); a verification is *significant* when the CI's lower bound
    is above 0 and p < alpha (the comparison's alpha, else ``[gates].alpha``). ``commit``: the
    promoted commit; its ``skills.toml`` is credited and it is the ``version_commit`` (the branch
    may have moved on since the comparison). Without it, the branch tip.
    """
    record = ws.resolve(version)
    skills = applied_skills(ws, record.id, commit)
    links = _version_links(ws, record.id, commit)
    domain = ws.config.workspace.domain
    result, significant, alpha, stats = _promotion_comparison(ws, comparison, record.id)
    entries = []
    for skill in skills:
        verdict = "significant gain" if significant else "no significant gain"
        entries.append(
            _base(
                ws,
                EntryKind.SKILL_VERIFICATION,
                f"{skill['name']} in the {domain} domain: {verdict} ({stats}) when {record.id} was promoted "
                f"over {previous_champion}. Hypothesis: {record.hypothesis}",
                record.id,
                skill=skill["name"],
                data={
                    **result,
                    "alpha": alpha,
                    "significant": significant,
                    "params": skill["params"],
                    "previous_champion": previous_champion,
                    "skills_together": [s["name"] for s in skills],
                },
                evidence=links,
                tags=["promotion", "verification"],
            )
        )
    names = ", ".join(s["name"] for s in skills) or "no registered skill"
    entries.append(
        _base(
            ws,
            EntryKind.LESSON,
            f"{record.id} became champion over {previous_champion} ({stats}; "
            f"{'significant' if significant else 'not significant'} at alpha {alpha:g}) with {names}. "
            f"Hypothesis: {record.hypothesis}",
            record.id,
            data={
                **result,
                "alpha": alpha,
                "significant": significant,
                "previous_champion": previous_champion,
                "skills": skills,
            },
            evidence=links,
            tags=["promotion"],
        )
    )
    return _append(ws, entries, f"promotion {record.id}")


def _promotion_comparison(
    ws: Workspace, comparison: dict[str, Any] | None, version: str
) -> tuple[dict[str, Any], bool, float, str]:
    """The comparison oriented to ``version``, whether it is significant, at which alpha, and
    its one-line statistics ("no comparison recorded" without one)."""
    result: dict[str, Any] = {}
    significant = False
    alpha = ws.config.gates.alpha
    if comparison is not None:
        if not isinstance(comparison, dict):
            raise InvalidMemory(
                f"comparison: expected the dict of compare(...).to_dict(), actually: "
                f"{type(comparison).__name__}",
                fix="pass comparison.to_dict()",
            )
        alpha = float(comparison.get("alpha") or alpha)
        result = _oriented(comparison, version)
        significant = _significant(result, alpha)
    stats = (
        f"Δ {_fmt(result.get('delta'))}, 95% CI [{_fmt((result.get('ci') or [None, None])[0])}, "
        f"{_fmt((result.get('ci') or [None, None])[1])}], p {_fmt(result.get('p_value'), '.3g')}"
        if result
        else "no comparison recorded"
    )
    return result, significant, alpha, stats


def record_rejection(
    ws: Workspace,
    version: str,
    *,
    decision: str,
    feedback: str,
    evidence: dict[str, Any] | None = None,
) -> MemoryEntry:
    """REVISE/ABORT at the promotion gate, or a failed gate: negative evidence for ``version``."""
    record = ws.resolve(version)
    if not isinstance(decision, str) or not decision.strip():
        raise InvalidMemory(
            "decision: expected a non-empty string (e.g. REVISE, ABORT, gate_failed)",
            fix="pass the decision that was taken",
        )
    feedback = (feedback or "").strip()
    entry = _base(
        ws,
        EntryKind.NEGATIVE_EVIDENCE,
        f"{record.id} rejected ({decision}): {feedback or 'no feedback given'}. Hypothesis: {record.hypothesis}",
        record.id,
        data={
            "decision": decision,
            "feedback": feedback,
            "hypothesis": record.hypothesis,
            "skills": applied_skills(ws, record.id),
            "findings": findings_summary(ws, record.id),
            "status": record.status,
        },
        evidence={**_version_links(ws, record.id), **(evidence or {})},
        tags=["rejected", decision.lower()],
    )
    return _append(ws, [entry], f"rejection {record.id}")[0]


def record_abandonment(ws: Workspace, version: str, reason: str) -> MemoryEntry:
    """An abandoned version: negative evidence with its reason, skills and latest findings."""
    record = ws.resolve(version)
    findings = findings_summary(ws, record.id)
    worst = (
        f"; worst finding: {findings['worst']} ({', '.join(c for c in findings['codes'][:3] if c)})"
        if findings and findings.get("worst")
        else ""
    )
    entry = _base(
        ws,
        EntryKind.NEGATIVE_EVIDENCE,
        f"{record.id} abandoned: {reason}. Hypothesis: {record.hypothesis}{worst}",
        record.id,
        data={
            "decision": "abandoned",
            "reason": reason,
            "hypothesis": record.hypothesis,
            "skills": applied_skills(ws, record.id),
            "findings": findings,
            "headline": record.headline,
        },
        evidence=_version_links(ws, record.id),
        tags=["abandoned"],
    )
    return _append(ws, [entry], f"abandonment {record.id}")[0]


def record_incident(ws: Workspace, version: str, findings: list[dict[str, Any]]) -> MemoryEntry:
    """An audit incident on ``version``: the audit's findings (code, severity, title, evidence)."""

    record = ws.resolve(version)
    if not isinstance(findings, list) or not findings:
        raise InvalidMemory(
            "an incident needs at least one finding", fix="pass the audit's findings"
        )
    parsed = []
    for item in findings:
        if isinstance(item, Finding):
            item = item.to_dict()
        if not isinstance(item, dict) or not item.get("code") or not item.get("severity"):
            raise InvalidMemory(
                f"incident finding: expected a dict with code and severity, actually: {item!r}"[
                    :300
                ],
                fix="pass Finding.to_dict() values",
            )
        parsed.append(item)
    worst = max(Severity.parse(f["severity"]) for f in parsed).label
    kept = [
        {k: f.get(k) for k in ("layer", "code", "severity", "title", "run_id", "evidence")}
        for f in parsed[:_INCIDENT_FINDINGS]
    ]
    titles = "; ".join(str(f.get("title") or f["code"]) for f in parsed[:5])
    entry = _base(
        ws,
        EntryKind.INCIDENT,
        f"audit incident on {record.id}: {len(parsed)} finding(s), worst {worst}: {titles}",
        record.id,
        data={
            "worst": worst,
            "total": len(parsed),
            "findings": kept,
            "codes": sorted({f["code"] for f in parsed}),
        },
        evidence=_version_links(ws, record.id),
        tags=["audit", worst],
    )
    return _append(ws, [entry], f"incident {record.id}")[0]


def add_entry(
    ws: Workspace,
    text: str,
    *,
    kind: str = EntryKind.LESSON.value,
    version: str | None = None,
    skill: str | None = None,
    evidence: dict[str, Any] | None = None,
    tags: list[str] | None = None,
) -> MemoryEntry:
    """``evotree memory add``: a lesson (or negative evidence) written by a person or an agent.

    Skill verifications and incidents come only from promotions and audits, never by hand.
    """
    kind_value = EntryKind.parse(kind).value
    if kind_value not in MANUAL_KINDS:
        raise InvalidMemory(
            f"--kind {kind_value} is recorded automatically (promotion, audits), not by hand",
            fix=f"use --kind {' or '.join(MANUAL_KINDS)}",
        )
    links: dict[str, Any] = dict(evidence or {})
    if version is not None:
        version = ws.resolve(version).id
        links = {**_version_links(ws, version), **links}
    if skill is not None:
        _check_skill(skill)
    entry = _base(
        ws,
        EntryKind(kind_value),
        (text or "").strip(),
        version,
        skill=skill,
        evidence=links,
        tags=list(tags or []) + ["manual"],
    )
    return _append(ws, [entry], f"{kind_value} {version or ''}".strip())[0]


def _check_skill(name: str) -> None:
    """Refuse a skill name the skill library does not know (its ``UnknownSkill`` has a fix)."""
    skill_library.get_skill(name)


def _append(ws: Workspace, entries: list[MemoryEntry], what: str) -> list[MemoryEntry]:
    MemoryStore(ws.git).append(entries, actor=ws.git.identity(), what=what)
    return entries  # an entry already present has the same id and content: it is the stored one
