"""The patch gate: protected paths against the champion, the patch against the pristine base.

Used twice with the same rules (:func:`evotree.harness.version_patch.version_patch`, which the audit
uses too):

* :func:`evotree.gates.evaluation.protected_gate` — the ``protected`` evidence gate of
  ``evotree gates`` / ``promote``, with the signed champion's policy;
* :func:`check_patches_before_run` — before any run is planned or reserved (``evotree run``, the
  API, the agent server: :mod:`evotree.gates.runs`): a version whose patch the gate would
  reject is refused with :class:`PatchRejected` (exit 40), nothing started, nothing charged.
  Protected-path changes are not refused here in an open workspace: a deliberate policy change is
  run, then accepted by a person at promotion; runs never use the candidate's judge or policy
  anyway. In a protocol workspace — one whose ``[protect] editable`` allowlist says what a
  candidate may change (``init --protocol ai4ai / rsibench-data / autoresearch``) — the task is
  frozen, as in AI4AI-Bench: a patch that changes or adds a protected path (a removal is a
  migration's, and is left to the promotion gate) is refused here too, before anything runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError
from evotree.gates.errors import TamperingFound
from evotree.gates.policy import policy_at
from evotree.gates.verify import verify_workspace
from evotree.harness.version_patch import version_patch

if TYPE_CHECKING:
    from evotree.core.ledger import LedgerTxn
    from evotree.core.workspace import Workspace
    from evotree.harness.version_patch import VersionPatch

__all__ = ["PatchRejected", "check_patches_before_run", "patch_authorizer"]


class PatchRejected(EvotreeError):
    """A version's patch breaks the patch rules; refused before any run (``details``: version, findings)."""

    exit_code = 40
    code = "patch_rejected"


def _describe(patch: VersionPatch) -> str:
    parts = []
    for f in patch.blocking[:4]:
        paths = ", ".join(str(p.get("path")) for p in f.evidence.get("paths", [])[:3])
        parts.append(f"{f.code} ({paths})")
    return "; ".join(parts)


def check_patches_before_run(ws: Workspace, versions: list[str]) -> dict[str, str]:
    """``{version: commit checked}``; raises :class:`PatchRejected` for the first version whose
    patch against the pristine base has a blocking finding. The champion at its promoted commit
    is not checked (its patch was judged, and signed, when it was promoted).

    The rules, the base and the champion's tree are the *signed* champion's (the end of the chain
    of signed promotions, as the train gate reads it), never whatever ``refs/evotree/champion``
    points to: a candidate can move that ref from its worktree (refs are shared) to a commit of
    its own whose ``[protect]`` allows everything."""

    signed = verify_workspace(ws, check_tags=False)
    if not signed.champion_commit:
        raise TamperingFound(
            "refusing to run: the ledger has no signed root, so no signed patch rules "
            "(`evotree verify` says why)",
            fix="restore refs/evotree/ledger from a trusted copy",
        )
    champion, champion_commit = signed.champion, signed.champion_commit
    config = policy_at(ws, champion, champion_commit).config
    checked: dict[str, str] = {}
    for name in versions:
        patch = version_patch(ws, name, config=config, champion_commit=champion_commit)
        anchor = str(signed.anchor.get("commit") or "")
        if patch.base.startswith("root") and anchor and patch.base_commit != anchor:
            # the ledger (a ref any worktree can move) names another first commit than the signed anchor
            raise TamperingFound(
                f"refusing to run: the ledger names {patch.base_commit[:10]} as the root's first commit, not the "
                f"anchor of the signed chain ({anchor[:10]})",
                fix="run `evotree verify`; restore refs/evotree/ledger from a trusted copy",
            )
        checked[patch.version] = patch.commit
        if patch.version == champion and patch.commit == champion_commit:
            continue
        frozen = _frozen_task_changes(config, patch)
        if frozen:
            raise PatchRejected(
                f"{patch.version} changes the frozen task ({', '.join(frozen[:5])}{' …' if len(frozen) > 5 else ''}): "
                "this workspace's [protect] lets a candidate change only its editable paths; nothing was started "
                "or charged",
                fix=f"revert them on {patch.version}'s branch in a new commit; the task changes only "
                "on the champion, by a reviewed promotion",
                version=patch.version,
                commit=patch.commit,
                paths=frozen,
                findings=[f.to_dict() for f in patch.protected],
            )
        if patch.blocking:
            raise PatchRejected(
                f"{patch.version}'s patch against the pristine base ({patch.base}, {patch.base_commit[:10]}) breaks "
                f"the patch rules: {_describe(patch)}; nothing was started or charged",
                fix=f"remove them from {patch.version}'s branch in a new commit (see `evotree audit {patch.version}`), "
                "or branch a clean version from the root; the rules are the champion's [protect]",
                version=patch.version,
                commit=patch.commit,
                base=patch.base,
                base_commit=patch.base_commit,
                patch_sha256=patch.sha256,
                findings=[f.to_dict() for f in patch.blocking],
            )
    return checked


def _frozen_task_changes(config: Any, patch: VersionPatch) -> list[str]:
    """Protected paths the patch changes or adds, when ``[protect] editable`` freezes the task."""
    if not list(getattr(config.protect, "editable", []) or []):
        return []
    return sorted(
        {
            str(p.get("path"))
            for f in patch.protected
            for p in f.evidence.get("paths", [])
            if p.get("status") != "D"
        }
    )


def patch_authorizer(ws: Workspace, requests: Mapping[str, int]) -> Any:
    """A :data:`evotree.harness.planning.RunAuthorizer` step: :func:`check_patches_before_run` now,
    and a re-check (in the reservation's compare-and-swap) that each branch is still at the
    commit that was checked — a commit added meanwhile is refused, never run unchecked."""
    checked = check_patches_before_run(ws, [v for v, n in requests.items() if n])

    def recheck(txn: LedgerTxn, runs_of: Mapping[str, int], commits: Mapping[str, str]) -> None:
        for version, commit in commits.items():
            if version in checked and checked[version] != commit:
                raise PatchRejected(
                    f"the branch of {version} moved while its runs were being planned "
                    f"({checked[version][:10]} checked, {commit[:10]} planned)",
                    fix="run the request again",
                    version=version,
                )

    return recheck
