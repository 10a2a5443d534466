"""The analyzers' and the judge's signed chains, as `evotree verify` walks them.

Each analyzers promotion must be signed by an allowed signer of the champion in force, follow the
previous signed analyzer version and name the sha256 of the diff shown to the approver
(recomputed from the two commits); the judge store's chain starts at the judge
``workspace.initialized`` records or at ``judge.migrated`` (the signed champion's judge files,
recomputed), and every later change is a signed ``judge.promoted``. The end of each chain must be
what its ref and the ledger's meta name.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from evotree.core.refs import JUDGE_REF
from evotree.diagnostics.analyzer_versions import (
    ACTIVE_KEY,
    ANALYZERS_REF,
    BUILTIN,
    analyzers_diff,
)
from evotree.gates.signing import canonical, sha256_hex

from evotree.gates.verify_base import (
    ANALYZERS_PROMOTION_TYPE,
    JUDGE_PROMOTION_TYPE,
    Problem,
    check_signed_statement,
    is_commit,
)

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace
    from evotree.gates.policy import Policy


__all__ = [
    "check_analyzers_end",
    "check_analyzers_promotion",
    "check_judge_end",
    "check_judge_migration",
    "check_judge_promotion",
]


def check_analyzers_promotion(
    ws: Workspace,
    policy: Policy,
    data: dict[str, Any],
    anchor: str,
    previous: str,
    previous_commit: str | None,
    records: dict[str, Any],
) -> list[str]:
    """Reasons why a ``harness.promoted`` event is not a valid signed step of the analyzers
    chain."""

    statement = data.get("statement")
    if not isinstance(statement, dict):
        return ["no signed statement (analyzers promotions need a person's signed sign-off)"]
    reasons: list[str] = []
    hid, commit = statement.get("harness"), statement.get("commit")
    if not isinstance(hid, str) or hid != data.get("harness"):
        reasons.append(
            f"the statement is for analyzer version {hid!r}, the event for {data.get('harness')!r}"
        )
    if (
        statement.get("previous_harness") != previous
        or statement.get("previous_commit") != previous_commit
    ):
        reasons.append(
            f"it replaces analyzer version {statement.get('previous_harness')} @ "
            f"{str(statement.get('previous_commit'))[:10]}, but the signed chain's analyzer "
            "version is "
            f"{previous} @ {str(previous_commit)[:10]}"
        )
    if hid == BUILTIN:
        if commit is not None:
            reasons.append("the built-in analyzers h0 have no commit")
    elif not is_commit(ws, commit):
        reasons.append(
            f"the analyzers commit {str(commit)[:10]} is not a commit of this repository"
        )
    record = records.get(str(hid)) if hid != BUILTIN else {"created_by": "evotree"}
    if not isinstance(record, dict):
        reasons.append(f"analyzer version {hid!r} has no record in the ledger")
    elif statement.get("created_by") != record.get("created_by"):
        reasons.append("the statement's creator differs from the ledger's")
    if not reasons:
        try:
            diff = analyzers_diff(ws, previous, previous_commit, str(hid), commit)
        # an unreadable analyzers commit is a problem, not a crash
        except Exception as exc:  # noqa: BLE001
            reasons.append(f"the diff between the analyzers commits cannot be recomputed: {exc}")
        else:
            if sha256_hex(canonical(diff)) != statement.get("diff_hash"):
                reasons.append(
                    "the signed diff hash differs from the diff of the two analyzers commits"
                )
            if sha256_hex(canonical(data.get("diff"))) != statement.get("diff_hash"):
                reasons.append("the recorded diff is not the one signed (edited)")
    reasons += check_signed_statement(
        policy,
        statement,
        data.get("signature"),
        expect_type=ANALYZERS_PROMOTION_TYPE,
        anchor=anchor,
        version=None,
    )
    return reasons


def check_analyzers_end(
    ws: Workspace, analyzers_id: str, commit: str | None, problems: list[Problem]
) -> None:
    """``refs/evotree/harness`` and the ledger's ``harness_active`` must name the end of the
    analyzers chain."""

    meta = ws.ledger.meta().get(ACTIVE_KEY) or BUILTIN
    if meta != analyzers_id:
        problems.append(
            Problem(
                "ledger_harness",
                f"the ledger names analyzer version {meta} as active, but the last signed "
                f"analyzers promotion put {analyzers_id} in force",
            )
        )
    ref = ws.git.ref_target(ANALYZERS_REF)
    if (str(ref) if ref is not None else None) != commit:
        where = (
            f"{analyzers_id} @ {commit[:10]}"
            if commit
            else f"{analyzers_id}: no {ANALYZERS_REF} at all"
        )
        problems.append(
            Problem(
                "harness_ref",
                f"{ANALYZERS_REF} points to {str(ref)[:10] if ref else 'nothing'}, not "
                f"to the end of the signed chain of analyzers promotions ({where}): it was moved "
                "without a signed analyzers promotion",
            )
        )


def check_judge_migration(
    ws: Workspace, policy: Policy, data: dict[str, Any], previous: str | None, champion_commit: str
) -> list[str]:
    """Reasons why a ``judge.migrated`` event is not a valid (unsigned) start of the judge chain.

    Unsigned is enough only because nothing is decided: the chain has no judge yet, and the
    migrated files must be exactly those of the signed champion's judge paths at that point.
    """
    from evotree.harness.judge_store import judge_files, tree_judge_files

    reasons: list[str] = []
    if previous is not None:
        reasons.append(
            f"the ledger already had a judge ({previous[:10]}): changing it needs a signed judge promotion"
        )
    target = data.get("commit")
    if not is_commit(ws, target):
        return reasons + [f"the judge commit {str(target)[:10]} is not a commit of this repository"]
    if data.get("champion_commit") != champion_commit:
        reasons.append(
            f"it claims champion commit {str(data.get('champion_commit'))[:10]}, but the signed "
            f"champion then was {champion_commit[:10]}"
        )
    try:
        moved = {f.path: f.sha256 for f in judge_files(ws.git.repo, target)}
        paths = list(policy.config.eval.judge_paths)
        expected = {
            path: hashlib.sha256(data).hexdigest()
            for path, (data, _mode) in tree_judge_files(ws.git.repo, champion_commit, paths).items()
        }
    except Exception as exc:  # noqa: BLE001 - an unreadable commit is a problem, not a crash
        return reasons + [f"its files cannot be read: {exc}"]
    if moved != expected:
        differ = sorted(
            set(moved) ^ set(expected)
            | {p for p in moved if p in expected and moved[p] != expected[p]}
        )
        reasons.append(
            f"its files are not those of the champion's judge paths ({', '.join(differ[:5])} differ)"
        )
    return reasons


def check_judge_promotion(
    ws: Workspace, policy: Policy, data: dict[str, Any], anchor: str, previous: str | None
) -> list[str]:
    """Reasons why a ``judge.promoted`` event is not a valid signed step of the judge chain."""
    from evotree.harness.judge_store import judge_diff

    statement = data.get("statement")
    if not isinstance(statement, dict):
        return ["no signed statement (changing the judge needs a person's signed sign-off)"]
    reasons: list[str] = []
    commit = statement.get("commit")
    if commit != data.get("commit"):
        reasons.append(
            f"the statement is for judge commit {str(commit)[:10]}, the event for "
            f"{str(data.get('commit'))[:10]}"
        )
    if statement.get("previous_commit") != previous:
        reasons.append(
            f"it replaces judge {str(statement.get('previous_commit'))[:10]}, but the signed chain's "
            f"judge is {str(previous)[:10]}"
        )
    if not is_commit(ws, commit):
        reasons.append(f"the judge commit {str(commit)[:10]} is not a commit of this repository")
    if not reasons:
        try:
            diff = judge_diff(ws.git.repo, previous, str(commit))
        except Exception as exc:  # noqa: BLE001 - an unreadable judge commit is a problem, not a crash
            reasons.append(f"the diff between the judge commits cannot be recomputed: {exc}")
        else:
            if sha256_hex(canonical(diff)) != statement.get("diff_hash"):
                reasons.append(
                    "the signed diff hash differs from the diff of the two judge commits"
                )
            if sha256_hex(canonical(data.get("diff"))) != statement.get("diff_hash"):
                reasons.append("the recorded diff is not the one signed (edited)")
    reasons += check_signed_statement(
        policy,
        statement,
        data.get("signature"),
        expect_type=JUDGE_PROMOTION_TYPE,
        anchor=anchor,
        version=None,
    )
    return reasons


def check_judge_end(ws: Workspace, commit: str | None, problems: list[Problem]) -> None:
    """``refs/evotree/judge`` and the ledger's ``judge`` must name the end of the judge chain."""
    judge = ws.ledger.meta().get("judge")
    meta = str(judge.get("commit")) if isinstance(judge, dict) and judge.get("commit") else None
    if meta != commit:
        problems.append(
            Problem(
                "ledger_judge",
                f"the ledger names judge {str(meta)[:10]} as in force, but the signed "
                f"judge chain ends at {str(commit)[:10]}",
            )
        )
    ref = ws.git.ref_target(JUDGE_REF)
    if (str(ref) if ref is not None else None) != commit:
        where = commit[:10] if commit else f"no {JUDGE_REF} at all"
        problems.append(
            Problem(
                "judge_ref",
                f"{JUDGE_REF} points to {str(ref)[:10] if ref else 'nothing'}, not to "
                f"the end of the signed judge chain ({where}): it was moved without a signed judge "
                "promotion, and runs do not follow it",
            )
        )
