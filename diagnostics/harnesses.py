"""Harness versions: the analyzers' thresholds evolve on their own lineage, like policy versions.

A harness version ``hN`` is a branch ``evotree/harness/hN`` with a worktree, whose tree holds
``harness.toml`` (threshold overrides per analyzer, e.g. ``[thresholds.dead_groups]``).
``h0`` is the built-in harness. A harness may also carry ``analyzers.py``: plug-in
analyzers registered with :func:`evotree.diagnostics.findings.register_analyzer`, loaded from the
promoted commit only. ``evotree harness promote hN`` points ``refs/evotree/harness``
at the branch's tip; ``evotree diagnose`` reads the thresholds from that ref only, so a policy
version's branch (which may hold any ``harness.toml`` it likes) can never change the harness
that judges it, and every finding records the harness version that produced it.

A harness decides what the signal gate blocks, so promoting one is a person's signed decision,
exactly like promoting a version: the signed lineage (which harness is in force, branching,
promoting) lives in :mod:`evotree.gates.harnesses`, above this layer. This module holds the
records and reads harness commits as data (thresholds, the ``analyzers.py`` source, the diff
a promotion signs); :func:`load_harness` loads the harness the gates layer says is in force.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pygit2

from evotree.core.chain_trust import ChainTrust
from evotree.core.errors import (
    ConfigError,
    EvotreeError,
    UnknownVersion,
)
from evotree.core.ledger import LedgerTxn
from evotree.core.refs import NAMESPACE
from evotree.core.workspace import Workspace

if TYPE_CHECKING:
    from evotree.core.findings import Finding

__all__ = [
    "ANALYZERS_FILE",
    "BRANCH_PREFIX",
    "BUILTIN",
    "HARNESS_FILE",
    "HARNESS_REF",
    "TEMPLATE",
    "ActiveHarness",
    "HarnessVersion",
    "harness_diff",
    "harness_records",
    "harness_thresholds",
    "harness_trust_finding",
    "load_harness",
    "parse_harness_toml",
    "read_blob",
]

HARNESS_FILE = "harness.toml"
ANALYZERS_FILE = "analyzers.py"
HARNESS_REF = NAMESPACE + "harness"
BUILTIN = "h0"
BRANCH_PREFIX = "evotree/harness/"
TEMPLATE = """\
# An evotree harness version: threshold overrides for the analyzers of `evotree diagnose`.
# `evotree diagnose --help` and diagnostics/signal.py, behavior.py list the analyzers and keys.
# Example:
# [thresholds."signal.dead_groups"]
# warn_ratio = 0.2
"""


@dataclass
class HarnessVersion:
    """One harness version as the ledger records it."""

    id: str
    parent: str | None
    hypothesis: str
    created_by: str
    created_at: str
    branch: str | None
    worktree: str | None
    active: bool = False

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ActiveHarness:
    """The harness in force: its id, the threshold overrides and plug-in analyzers of its commit."""

    id: str
    commit: str | None
    thresholds: dict[str, dict[str, Any]]
    analyzers_source: str | None = None
    #: False when refs/evotree/harness or the ledger does not match the signed harness chain;
    #: the harness used is then the end of that chain, and ``warning`` says what was found.
    signed: bool = True
    warning: str | None = None

    def load_analyzers(self) -> list[str]:
        """Import the harness's ``analyzers.py`` (once per commit); return the analyzers it registered.

        The module registers :class:`evotree.diagnostics.findings.Analyzer` subclasses with
        ``register_analyzer``; each is stamped with this harness version. The code comes from the
        promoted harness ref only, never from a policy version's tree.
        """
        if not self.analyzers_source or self.commit is None:
            return []
        import importlib.util
        import sys

        from evotree.diagnostics.findings import analyzer_classes

        name = f"evotree_harness_{self.commit[:12]}"
        if name in sys.modules:
            return list(getattr(sys.modules[name], "_EVOTREE_REGISTERED", []))
        before = {cls.name: cls for cls in analyzer_classes()}
        spec = importlib.util.spec_from_loader(name, loader=None)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        try:
            exec(
                compile(self.analyzers_source, f"<harness {self.id}: {ANALYZERS_FILE}>", "exec"),
                module.__dict__,
            )
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must say where it broke
            raise EvotreeError(
                f"{ANALYZERS_FILE} of harness {self.id} failed to load: {type(exc).__name__}: {exc}",
                fix=f"fix it on branch {BRANCH_PREFIX}{self.id} and promote again",
            ) from None
        added = [cls for cls in analyzer_classes() if before.get(cls.name) is not cls]
        for cls in added:
            cls.harness_version = self.id
        module._EVOTREE_REGISTERED = [cls.name for cls in added]
        sys.modules[name] = module
        return module._EVOTREE_REGISTERED


def parse_harness_toml(text: str, source: str) -> dict[str, dict[str, Any]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}", fix=f"fix {HARNESS_FILE}") from None
    unknown = set(data) - {"thresholds"}
    thresholds = data.get("thresholds", {})
    if (
        unknown
        or not isinstance(thresholds, dict)
        or not all(isinstance(v, dict) for v in thresholds.values())
    ):
        raise ConfigError(
            f"{source}: expected only [thresholds.<analyzer>] tables, actually: {sorted(data)}",
            fix='put each override under [thresholds."<analyzer name>"], e.g. [thresholds."signal.dead_groups"]',
        )
    from evotree.diagnostics.findings import analyzer_classes, make_thresholds

    known = {cls.name: cls for cls in analyzer_classes()}
    for name, overrides in thresholds.items():
        if name not in known:
            raise ConfigError(
                f"{source}: unknown analyzer {name!r}",
                fix=f"analyzers: {', '.join(sorted(known))}",
                key=f"thresholds.{name}",
            )
        make_thresholds(known[name], overrides)  # raises ConfigError naming the key
    return thresholds


def harness_records(txn: LedgerTxn) -> dict[str, dict[str, Any]]:
    return dict(txn.meta.get("harnesses") or {})


def read_blob(ws: Workspace, commit: str | None, name: str) -> bytes | None:
    if commit is None:
        return None
    tree = ws.git.repo[commit].peel(pygit2.Commit).tree
    if name not in tree:
        return None
    obj = ws.git.repo[tree[name].id]
    return obj.data if isinstance(obj, pygit2.Blob) else None


def _raw_thresholds(ws: Workspace, commit: str | None) -> dict[str, dict[str, Any]]:
    raw = read_blob(ws, commit, HARNESS_FILE)
    if raw is None:
        return {}
    data = tomllib.loads(raw.decode("utf-8", errors="replace"))
    thresholds = data.get("thresholds", {})
    if not isinstance(thresholds, dict):
        return {}
    # JSON-safe (TOML dates become strings) so the diff has one canonical byte form
    return json.loads(
        json.dumps({str(k): v for k, v in thresholds.items() if isinstance(v, dict)}, default=str)
    )


def harness_diff(
    ws: Workspace, previous: str, previous_commit: str | None, hid: str, commit: str | None
) -> dict[str, Any]:
    """What a harness promotion changes: every threshold changed, and ``analyzers.py`` (status, sha256).

    Computed from the two commits only (no workspace code runs), so ``evotree verify`` can
    recompute it and check the sha256 the approver signed.
    """
    old, new = _raw_thresholds(ws, previous_commit), _raw_thresholds(ws, commit)
    changes = []
    for analyzer in sorted(set(old) | set(new)):
        before, after = old.get(analyzer, {}), new.get(analyzer, {})
        for key in sorted(set(before) | set(after)):
            if key not in before or key not in after or before[key] != after[key]:
                changes.append(
                    {
                        "analyzer": analyzer,
                        "key": key,
                        "old": before.get(key),
                        "new": after.get(key),
                    }
                )
    old_src, new_src = (
        read_blob(ws, previous_commit, ANALYZERS_FILE),
        read_blob(ws, commit, ANALYZERS_FILE),
    )
    old_sha = hashlib.sha256(old_src).hexdigest() if old_src is not None else None
    new_sha = hashlib.sha256(new_src).hexdigest() if new_src is not None else None
    status = (
        "absent"
        if old_sha is None and new_sha is None
        else "added"
        if old_sha is None
        else "removed"
        if new_sha is None
        else "unchanged"
        if old_sha == new_sha
        else "changed"
    )
    return {
        "harness": hid,
        "commit": commit,
        "previous_harness": previous,
        "previous_commit": previous_commit,
        "thresholds": changes,
        "analyzers_py": {"status": status, "sha256": new_sha, "previous_sha256": old_sha},
    }


def load_harness(ws: Workspace, trust: ChainTrust) -> ActiveHarness:
    """The harness ``trust`` names, loaded: its thresholds and plug-in analyzers (never a policy branch).

    ``trust`` comes from :func:`evotree.gates.harnesses.trusted_harness`, the end of the signed chain
    of harness promotions (the gates layer verifies signatures; this layer only reads commits).
    A chain with problems gives ``signed=False`` and a ``warning`` (see :func:`harness_trust_finding`).
    """
    if trust.commit is None:
        return ActiveHarness(BUILTIN, None, {}, signed=trust.trusted, warning=trust.warning)
    source = read_blob(ws, trust.commit, ANALYZERS_FILE)
    harness = ActiveHarness(
        trust.id,
        trust.commit,
        {},
        source.decode() if source is not None else None,
        signed=trust.trusted,
        warning=trust.warning,
    )
    harness.load_analyzers()  # plug-ins first: harness.toml may set their thresholds too
    text = read_blob(ws, trust.commit, HARNESS_FILE)
    harness.thresholds = parse_harness_toml(
        text.decode() if text is not None else "", f"{HARNESS_FILE} of {trust.id}"
    )
    return harness


def harness_trust_finding(harness: ActiveHarness, version: str | None = None) -> Finding | None:
    """A critical ``version.harness_unsigned`` finding when the harness in force is not signed, else None.

    ``evotree diagnose`` adds it to its result so that an agent or a person reading the findings
    sees that the harness ref or ledger was changed without a signed harness promotion.
    """
    if harness.signed:
        return None
    from evotree.diagnostics.findings import Finding

    return Finding(
        layer="version",
        code="version.harness_unsigned",
        severity="critical",
        title=harness.warning or "the harness in force is not signed",
        evidence={"harness_used": harness.id, "commit": harness.commit},
        suggestion="run `evotree verify`; restore refs/evotree/harness to the signed chain; promote "
        "harnesses only with `evotree harness promote HN` (a person's signed sign-off)",
        version=version,
        harness_version=harness.id,
    )


def harness_thresholds(ws: Workspace, hid: str) -> dict[str, dict[str, Any]]:
    """The threshold overrides of harness version ``hid`` (its branch tip; ``h0``: none)."""
    if hid == BUILTIN:
        return {}
    records = ws.ledger.meta().get("harnesses") or {}
    if hid not in records:
        raise UnknownVersion(
            f"unknown harness version {hid!r}", fix="`evotree harness list` lists them"
        )
    target = ws.git.ref_target(f"refs/heads/{records[hid]['branch']}")
    tree = ws.git.repo[target].tree
    text = ws.git.repo[tree[HARNESS_FILE].id].data.decode() if HARNESS_FILE in tree else ""
    return parse_harness_toml(text, f"{HARNESS_FILE} of {hid}")
