"""Sign-off as data: what a person is asked to sign, what they type back, what their answer records.

Every ceremony (promote, approve-run, runs void, judge promote, analyzers promote) is a
:class:`SignOff` built by the gates layer from the signed policy; one driver
(:func:`evotree.cli.signoff.run_signoff`) runs them all the same way: a person at a terminal (no
pipe, no CI), the workspace's signed policy, the approver's key checked (allowed, not the
creator), what is shown, the subject and a one-time code typed back, the decision, then
``record`` signs and records. The gates layer decides what must be signed; the face only asks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evotree.gates.signoff import Approver
from evotree.core.text import escape_control
from evotree.gates.promote import record_run_approval
from evotree.gates.promote import version_tip
from evotree.gates.analyzer_versions import plan_analyzers_promotion
from evotree.gates.analyzer_versions import record_analyzers_promotion
from evotree.gates.judges import plan_judge_promotion
from evotree.gates.judges import record_judge_promotion
from evotree.gates.run_void import record_run_void
from evotree.gates.run_void import void_candidate
from evotree.core.workspace import signer_line
from evotree.gates.bootstrap import prepare_signers
from evotree.gates.bootstrap import record_signers

__all__ = ["YES_NO", "SignOff"]

#: the choices of a ceremony that is accepted or not
YES_NO = ("yes", "no")


@dataclass
class SignOff:
    """One sign-off a person may give (see module doc).

    ``lines`` are shown before the challenge (already escaped: they quote names and text others
    wrote); ``subject`` is what the person types back (``subject_label`` names it in the prompt,
    ``subject_shown`` in the instruction); ``choices`` the decisions offered (``YES_NO``: anything
    but ``yes`` refuses with ``refusal``); ``text_for`` the decisions that need a text (a reason,
    feedback) with its prompt; ``record(approver, decision, text)`` signs and records.
    """

    action: str
    subject: str
    creator: str | None
    record: Callable[[Approver, str, str], Any]
    lines: Sequence[str] = ()
    question: str = ""
    choices: Sequence[str] = YES_NO
    refusal: tuple[str, str] = ("not approved; nothing was recorded", "type yes to approve")
    subject_label: str = "version id"
    subject_shown: str = "the version id"
    text_for: dict[str, str] = field(default_factory=dict)
    #: a note shown after the challenge, before the decision (e.g. why APPROVE is not offered)
    note: str = ""
    #: the policy the approver's key is checked against when it is not the one in force (the
    #: first signers, who sign for the file that lists them: evotree.gates.bootstrap)
    signing_policy: Any = None


def _esc(text: Any) -> str:

    return escape_control(text)


def approve_run_signoff(ws: Any, policy: Any, version: str, runs: int) -> SignOff:
    """``evotree approve-run``: costly runs of ``version``'s current commit (the commit shown is the
    one signed; refused if the branch moves meanwhile)."""

    record = ws.resolve(version)
    budget = policy.config.budget
    threshold = policy.config.gates.train_approval_above_seconds
    shown = version_tip(ws, record.id)
    # what someone wrote (hypothesis, creator) is shown escaped: a newline and a fake `commit:` line
    # or ESC[8m in a hypothesis cannot hide or replace the real commit line
    lines = [
        f"{record.id}: {_esc(record.hypothesis)} (created by {_esc(record.created_by)})",
        f"commit: {shown} (the code these runs will train; `git show --stat {shown[:12]}`)",
        f"request: up to {runs} run(s) × {budget.max_wall_seconds} s = {runs * budget.max_wall_seconds} s "
        f"(approval needed above {threshold} s; used so far: {_esc(record.usage or {})})",
    ]
    return SignOff(
        action="approve runs",
        subject=record.id,
        creator=record.created_by,
        lines=lines,
        question="approve these runs? [yes/no]",
        refusal=("not approved; nothing was recorded", "type yes to approve"),
        record=lambda approver, _d, _t: record_run_approval(
            ws, policy, record.id, approver, runs=runs, commit=shown
        ),
    )


def analyzers_signoff(ws: Any, policy: Any, analyzers_id: str) -> SignOff:
    """``evotree analyzers promote``: the analyzers' thresholds and plug-in code that judge every
    version."""
    import json

    plan = plan_analyzers_promotion(ws, analyzers_id)
    diff = plan.diff
    lines = [
        f"analyzer version {plan.analyzers} @ "
        f"{str(plan.commit)[:10] if plan.commit else 'built-in'}: "
        f"{_esc(plan.hypothesis)} (created by {_esc(plan.created_by)})",
        f"replaces {plan.previous_analyzers} @ "
        f"{str(plan.previous_commit)[:10] if plan.previous_commit else 'built-in'}",
    ]
    if diff["thresholds"]:
        lines.append("thresholds:")
        for c in diff["thresholds"]:
            old = "default" if c["old"] is None else json.dumps(c["old"])
            new = "default" if c["new"] is None else json.dumps(c["new"])
            lines.append(f"  {_esc(c['analyzer'])}.{_esc(c['key'])}: {_esc(old)} -> {_esc(new)}")
    else:
        lines.append("thresholds: unchanged")
    py = diff["analyzers_py"]
    lines.append(
        "analyzers.py: "
        + {
            "absent": "none (no plug-in code)",
            "unchanged": f"unchanged (sha256 {py['sha256']})",
            "added": f"ADDED: plug-in code that runs in every `evotree diagnose` (sha256 {py['sha256']})",
            "changed": f"CHANGED: plug-in code that runs in every `evotree diagnose` (sha256 {py['sha256']}, "
            f"was {py['previous_sha256']})",
            "removed": f"removed (was sha256 {py['previous_sha256']})",
        }[py["status"]]
    )
    if plan.commit and py["status"] in ("added", "changed"):
        lines.append(f"  read it before signing: git show {plan.commit[:10]}:analyzers.py")
    lines.append(f"diff sha256 (signed): {plan.diff_hash}")
    return SignOff(
        action="promote an analyzer version",
        subject=plan.analyzers,
        creator=plan.created_by,
        lines=lines,
        subject_label="version id",
        subject_shown="the version id",
        question=f"put analyzer version {plan.analyzers} in force? [yes/no]",
        refusal=("not approved; nothing was recorded", "type yes to promote the analyzer version"),
        record=lambda approver, _d, _t: record_analyzers_promotion(ws, policy, approver, plan),
    )


def judge_signoff(ws: Any, policy: Any, directory: Any) -> SignOff:
    """``evotree judge promote``: new judge files in force (what changes: sizes and sha256, never contents)."""

    plan = plan_judge_promotion(ws, directory)
    lines = [
        f"new judge {plan.commit[:10]} from {plan.directory}",
        f"replaces {plan.previous_commit[:10]}",
        f"proposed by {plan.proposed_by}",
    ]
    for row in plan.diff["files"]:
        if row["status"] == "unchanged":
            continue
        sha = row["sha256"] or row["previous_sha256"]
        size = f"{row['size']} B" if row["size"] is not None else "-"
        lines.append(f"  {row['status'].upper():8s} {row['path']:40s} {size:>12s}  sha256 {sha}")
    unchanged = sum(1 for row in plan.diff["files"] if row["status"] == "unchanged")
    lines += [
        f"  ({unchanged} file(s) unchanged)",
        f"read the files before signing: {plan.directory}",
        f"diff sha256 (signed): {plan.diff_hash}",
    ]
    return SignOff(
        action="change the judge",
        subject=plan.commit[:7],
        creator=plan.proposed_by,
        lines=lines,
        subject_label="judge commit",
        subject_shown=f"the new judge commit's first 7 characters ({plan.commit[:7]})",
        question="put this judge in force? [yes/no]",
        refusal=("not approved; nothing was recorded", "type yes to change the judge"),
        record=lambda approver, _d, _t: record_judge_promotion(ws, policy, approver, plan),
    )


def void_signoff(ws: Any, policy: Any, run_id: str, reason: str) -> SignOff:
    """``evotree runs void``: a run whose evidence cannot be counted leaves its version's numbers."""
    import json

    record, run = void_candidate(ws, run_id)
    lines = [
        f"run {run.run_id} of {record.id} (created by {_esc(str(record.created_by))}), seed {run.seed}, "
        f"commit {str(run.commit)[:10]}",
        f"state: {run.state}: {_esc('; '.join(run.problems))}",
        f"headline the ledger recorded: {json.dumps(run.headline)}",
        f"reason: {_esc(reason)}",
        "voided, it is in no number of its version; gates, compare and reports list it as voided",
    ]
    return SignOff(
        action="void a run",
        subject=run.run_id,
        creator=record.created_by,
        lines=lines,
        subject_label="run id",
        subject_shown="the run id",
        question="void this run? [yes/no]",
        refusal=("not voided; nothing was recorded", "type yes to void the run"),
        record=lambda approver, _d, _t: record_run_void(ws, policy, approver, run.run_id, reason),
    )


def signers_signoff(ws: Any, policy: Any, specs: Sequence[str]) -> SignOff:
    """``evotree signers add``: the first allowed signers of a workspace that has none, signed by
    the new key (:mod:`evotree.gates.bootstrap`)."""

    lines = [signer_line(spec)[1] for spec in specs]
    commit, new_policy = prepare_signers(ws, policy, lines)
    shown = [
        f"the champion {policy.champion} @ {policy.commit[:10]} names no allowed signer: nobody can sign a "
        "promotion yet",
        f"{new_policy.allowed_signers_path} would become:",
    ]
    shown += [f"  {_esc(line)}" for line in lines]
    shown.append(
        f"new champion commit {commit[:10]} (only that file changes); later changes need a promotion"
    )
    principals = ", ".join(new_policy.principals)
    return SignOff(
        action="add the first signers",
        subject=principals,
        creator=None,
        lines=shown,
        subject_label="signer(s)",
        subject_shown=f"the signer(s) ({principals})",
        question="allow these signers? [yes/no]",
        signing_policy=new_policy,
        refusal=("not added; nothing was recorded", "type yes to add the signers"),
        record=lambda approver, _d, _t: record_signers(ws, policy, new_policy, approver),
    )
