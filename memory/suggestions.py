"""``evotree suggest V``: the skills that address V's findings, ranked by what memory verified.

Findings come from ``.evotree/findings/V.jsonl`` (written by ``evotree diagnose``); a fresh
clone without that file falls back to the ledger's ``finding`` event for V (codes, severities,
titles). A finding names the skills that address it (``Finding.skills``); the skill library
adds every skill whose ``addresses`` lists the finding's code.

Each candidate skill gets a score (documented in ``docs/memory.md``)::

    severity   worst finding it addresses: info 0.5, warn 1, high 2, critical 3,
               + 0.25 for each further finding code it addresses (at most +1)
               + 0.5 when a finding names the skill itself (not only the library's addresses)
    memory     + 3  verified across domains (significant gains in >= 2 domains)
               + 2  a significant gain in this workspace's domain
               + 1  a significant gain in one other domain (offered across domains)
               - 0.5 for each verification without a significant gain (at most -1.5)
               - 0.5 for each negative-evidence entry naming the skill (at most -1.5)

and suggestions are ranked: skills not yet applied to V first, then by score. A skill the library
says does not apply to the workspace's domain (its ``domains``; ``SkillInfo.why_not``) is never
offered: the GRPO skills are not suggested in the gym domain, whatever a finding names. A warn+
finding left with no applicable skill is listed as unaddressed. Suggestions are advice: nothing
here is read by a gate.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evotree.core.errors import InvalidState
from evotree.core.ledger import EventKind
from evotree.core.workspace import Workspace
from evotree.memory.model import EntryKind
from evotree.memory.read import SkillStatus, skill_status_of
from evotree.memory.record import applied_skills
from evotree.memory.store import MemoryStore

__all__ = ["NotDiagnosed", "SuggestResult", "Suggestion", "load_findings", "suggest"]

_SEVERITY_WEIGHT = {"info": 0.5, "warn": 1.0, "high": 2.0, "critical": 3.0}
_SEVERITY_ORDER = ("info", "warn", "high", "critical")


class NotDiagnosed(InvalidState):
    """The version has no findings to suggest from (it was never diagnosed)."""

    code = "not_diagnosed"


@dataclass
class Suggestion:
    """One suggested skill (schema: ``suggest.schema.json``)."""

    skill: str
    score: float
    severity: str
    addresses: list[dict[str, Any]]
    memory: dict[str, Any]
    reasons: list[str]
    title: str | None = None
    applied: bool = False
    applies: bool | None = None
    entries: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "title": self.title,
            "score": round(self.score, 4),
            "severity": self.severity,
            "addresses": self.addresses,
            "memory": self.memory,
            "reasons": self.reasons,
            "applied": self.applied,
            "applies": self.applies,
            "entries": self.entries,
        }


@dataclass
class SuggestResult:
    """What ``evotree suggest V --json`` prints."""

    version: str
    domain: str
    source: str
    findings: int
    suggestions: list[Suggestion]
    unaddressed: list[dict[str, Any]]
    memory_entries: int
    #: recipe changes the findings' evidence calls for (e.g. raise max_completion_length),
    #: ranked like the skills: a finding that measured its cause names the fix
    changes: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "version": self.version,
            "domain": self.domain,
            "source": self.source,
            "findings": self.findings,
            "suggestions": [s.to_dict() for s in self.suggestions],
            "changes": self.changes,
            "unaddressed": self.unaddressed,
            "memory_entries": self.memory_entries,
        }


def _recipe_changes(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recipe changes named in the findings' evidence (``recipe_change``), one per parameter
    and target value, with the findings they address; ranked by the worst severity addressed."""
    merged: dict[tuple[str, str], dict[str, Any]] = {}
    also: dict[tuple[str, str], set[str]] = {}
    for finding in findings:
        change = (finding.get("evidence") or {}).get("recipe_change")
        if not isinstance(change, dict) or not change.get("param"):
            continue
        key = (str(change["param"]), json.dumps(change.get("to"), sort_keys=True))
        brief = {k: finding.get(k) for k in ("code", "severity", "title", "run_id")}
        item = merged.setdefault(
            key,
            {
                "param": str(change["param"]),
                "from": change.get("from"),
                "to": change.get("to"),
                "kind": change.get("kind"),
                "where": change.get("where"),
                "why": change.get("why"),
                "addresses": [],
            },
        )
        item["addresses"].append(brief)
        also.setdefault(key, set()).update(str(c) for c in change.get("also_addresses") or [])
    for key, codes in also.items():  # findings the change's evidence shows it causes too
        for finding in findings:
            if finding.get("code") in codes and (
                finding.get("run_id") in {b.get("run_id") for b in merged[key]["addresses"]}
            ):
                merged[key]["addresses"].append(
                    {k: finding.get(k) for k in ("code", "severity", "title", "run_id")}
                )
    out = []
    for item in merged.values():
        worst = max(
            (b.get("severity") or "info" for b in item["addresses"]), key=_SEVERITY_ORDER.index
        )
        codes = {b["code"] for b in item["addresses"]}
        # scored as a skill named by its finding: severity, +0.25 a further code, +0.5 named
        item["severity"] = worst
        item["score"] = round(_SEVERITY_WEIGHT[worst] + min(0.25 * (len(codes) - 1), 1.0) + 0.5, 4)
        out.append(item)
    out.sort(key=lambda c: (-c["score"], c["param"]))
    return out


def load_findings(ws: Workspace, version: str) -> tuple[list[dict[str, Any]], str]:
    """(findings of ``version`` as dicts, where they came from: ``file`` or ``ledger``)."""
    path = ws.state_dir / "findings" / f"{version}.jsonl"
    if path.is_file():
        from evotree.core.findings import Finding, FindingError

        out = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                out.append(Finding.from_dict(json.loads(line)).to_dict())
            except (ValueError, FindingError):
                continue  # another schema version or a damaged line: not ours to interpret
        return out, "file"
    for entry in ws.ledger.entries(version=version):
        if entry.event.kind == EventKind.FINDING.value:
            listed = [
                f
                for f in entry.event.data.get("findings") or []
                if isinstance(f, dict) and f.get("code")
            ]
            return [{**f, "skills": []} for f in listed], "ledger"
    raise NotDiagnosed(
        f"{version} has no findings: it was not diagnosed",
        fix=f"run `evotree diagnose {version}` first (after `evotree run {version}`)",
        version=version,
    )


def _library() -> tuple[dict[str, Any], dict[str, list[str]]]:
    """(skill name -> SkillInfo, finding code -> skill names) from the skill library, if any."""
    try:
        import evotree.skills as skill_library
    except ImportError:  # pragma: no cover
        return {}, {}
    lister = getattr(skill_library, "list_skills", None)
    if lister is None:
        return {}, {}
    infos = {info.name: info for info in lister()}
    by_code: dict[str, list[str]] = {}
    for info in infos.values():
        for code in getattr(info, "addresses", ()) or ():
            by_code.setdefault(code, []).append(info.name)
    return infos, by_code


def _memory_score(
    status: SkillStatus | None, domain: str, negatives: int, reasons: list[str]
) -> tuple[float, dict[str, Any]]:
    if status is None:
        return 0.0, {
            "verified_in_domain": False,
            "domains": [],
            "verified_across_domains": False,
            "verifications": 0,
            "significant": 0,
            "negative": negatives,
            "best_delta": None,
        }
    score = 0.0
    if status.verified_across_domains:
        score += 3
        reasons.append(f"verified across domains ({', '.join(status.domains)})")
    if status.verified_in(domain):
        score += 2
        reasons.append(f"significant gain before in the {domain} domain")
    elif status.domains and not status.verified_across_domains:
        score += 1
        reasons.append(f"significant gain in the {status.domains[0]} domain (not yet in {domain})")
    failed = status.verifications - status.significant
    if failed:
        score -= min(0.5 * failed, 1.5)
        reasons.append(f"{failed} verification(s) without a significant gain")
    if negatives:
        score -= min(0.5 * negatives, 1.5)
        reasons.append(
            f"named in {negatives} negative-evidence entr{'y' if negatives == 1 else 'ies'}"
        )
    deltas = [
        r["best_delta"] for r in status.per_domain if isinstance(r.get("best_delta"), (int, float))
    ]
    return score, {
        "verified_in_domain": status.verified_in(domain),
        "domains": status.domains,
        "verified_across_domains": status.verified_across_domains,
        "verifications": status.verifications,
        "significant": status.significant,
        "negative": negatives,
        "best_delta": max(deltas) if deltas else None,
    }


def suggest(ws: Workspace, version: str) -> SuggestResult:
    """Skills addressing ``version``'s findings, ranked by severity and memory's evidence."""
    record = ws.resolve(version)
    findings, source = load_findings(ws, record.id)
    domain = ws.config.workspace.domain
    infos, by_code = _library()
    already = {s["name"] for s in applied_skills(ws, record.id)}
    entries = MemoryStore(ws.git).entries()
    statuses = {s.skill: s for s in skill_status_of(entries)}
    addressed, named, unaddressed = _addressed(
        findings, by_code, lambda name: _offered(infos.get(name), domain)
    )
    suggestions = []
    for name, briefs in addressed.items():
        info = infos.get(name)
        reasons: list[str] = []
        worst = max((b.get("severity") or "info" for b in briefs), key=_SEVERITY_ORDER.index)
        codes = sorted({b["code"] for b in briefs})
        score = _SEVERITY_WEIGHT[worst] + min(0.25 * (len(codes) - 1), 1.0)
        reasons.append(f"addresses {', '.join(codes)} (worst: {worst})")
        if name in named:
            score += 0.5
            reasons.append("named by the finding itself")
        related = [e for e in entries if e.skill == name or _names(e, name)]
        negatives = sum(1 for e in related if e.kind == EntryKind.NEGATIVE_EVIDENCE.value)
        bonus, summary = _memory_score(statuses.get(name), domain, negatives, reasons)
        applies: bool | None = None
        if info is not None:
            applies = True  # _offered() kept only the library's skills for this domain
        elif infos:
            applies = False
            reasons.append("not in this evotree's skill library")
        if name in already:
            reasons.append(f"already applied to {record.id}: tune its parameters or look elsewhere")
        suggestions.append(
            Suggestion(
                skill=name,
                title=getattr(info, "title", None),
                score=score + bonus,
                severity=worst,
                addresses=briefs,
                memory=summary,
                reasons=reasons,
                applied=name in already,
                applies=applies,
                entries=[e.id for e in related],
            )
        )
    suggestions.sort(key=lambda s: (s.applied, s.applies is False, -s.score, s.skill))
    changes = _recipe_changes(findings)
    fixed = {b["code"] for c in changes for b in c["addresses"]}
    return SuggestResult(
        version=record.id,
        domain=domain,
        source=source,
        findings=len(findings),
        suggestions=suggestions,
        unaddressed=[b for b in unaddressed if b["code"] not in fixed],
        memory_entries=len(entries),
        changes=changes,
    )


def _offered(info: Any, domain: str) -> bool:
    """False for a library skill that does not apply to this workspace's domain."""
    if info is None:
        return True  # unknown to this library: listed, with applies=False and the reason
    why_not = getattr(info, "why_not", None)
    if why_not is not None:
        return why_not(domain) is None
    skill_domains = list(getattr(info, "domains", ()) or ())
    return not skill_domains or domain in skill_domains or "*" in skill_domains


def _addressed(
    findings: list[dict[str, Any]],
    by_code: dict[str, list[str]],
    offered: Callable[[str], bool],
) -> tuple[dict[str, list[dict[str, Any]]], set[str], list[dict[str, Any]]]:
    """Per offered skill, the findings it addresses; the skills findings name themselves; and
    the warn-or-worse findings no offered skill addresses."""
    addressed: dict[str, list[dict[str, Any]]] = {}
    named: set[str] = set()  # skills a finding names itself (the analyzer's own recommendation)
    unaddressed = []
    for finding in findings:
        named.update(finding.get("skills") or [])
        names = list(
            dict.fromkeys([*(finding.get("skills") or []), *by_code.get(finding["code"], [])])
        )
        names = [name for name in names if offered(name)]
        brief = {k: finding.get(k) for k in ("code", "severity", "title", "run_id")}
        if not names:
            if finding.get("severity") in ("warn", "high", "critical"):
                unaddressed.append(brief)
            continue
        for name in names:
            addressed.setdefault(name, []).append(brief)
    return addressed, named, unaddressed


def _names(entry: Any, skill: str) -> bool:
    for key in ("skills", "skills_together"):
        for item in entry.data.get(key) or []:
            if item == skill or (isinstance(item, dict) and item.get("name") == skill):
                return True
    return False
