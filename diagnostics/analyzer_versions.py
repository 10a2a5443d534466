"""Analyzer versions: the analyzers' thresholds evolve on their own lineage, like policy versions.

An analyzer version ``hN`` is a branch ``evotree/harness/hN`` with a worktree, whose tree holds
``harness.toml`` (threshold overrides per analyzer, e.g. ``[thresholds.dead_groups]``); the
branch prefix, the ref and the file keep the lineage's first name because existing ledgers and
signed statements use them. ``h0`` is the built-in analyzers. A version may also carry
``analyzers.py``: plug-in analyzers registered with
:func:`evotree.diagnostics.findings.register_analyzer`, loaded from the promoted commit only.
``evotree analyzers promote hN`` points ``refs/evotree/harness`` at the branch's tip;
``evotree diagnose`` reads the thresholds from that ref only, so a policy version's branch (which
may hold any ``harness.toml`` it likes) can never change the analyzers that judge it, and every
finding records the analyzer version that produced it (``harness_version``, a stored field).

The analyzers decide what the signal gate blocks, so promoting a version is a person's signed
decision, exactly like promoting a policy version: the signed lineage (which analyzer version is
in force, branching, promoting) lives in :mod:`evotree.gates.analyzer_versions`, above this layer.
This module holds the records and reads analyzer versions' commits as data (thresholds, the
``analyzers.py`` source, the diff a promotion signs); :func:`load_analyzer_version` loads the
version the gates layer says is in force.
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
    "ACTIVE_KEY",
    "BUILTIN",
    "RECORDS_KEY",
    "THRESHOLDS_FILE",
    "ANALYZERS_REF",
    "TEMPLATE",
    "ActiveAnalyzers",
    "AnalyzerVersion",
    "analyzers_diff",
    "analyzer_records",
    "analyzer_thresholds",
    "analyzers_trust_finding",
    "load_analyzer_version",
    "parse_thresholds_toml",
    "read_blob",
]

# The names marked "persisted" keep the lineage's first spelling: persisted name (existing
# ledgers and signed statements use it).
#: the thresholds file of an analyzer version's tree (persisted name)
THRESHOLDS_FILE = "harness.toml"
ANALYZERS_FILE = "analyzers.py"
#: the ref of the analyzer version in force (persisted name)
ANALYZERS_REF = NAMESPACE + "harness"
BUILTIN = "h0"
#: the ledger meta key of the analyzer versions' records (persisted name)
RECORDS_KEY = "harnesses"
#: the ledger meta key of the analyzer version in force (persisted name)
ACTIVE_KEY = "harness_active"
#: the branches of analyzer versions (persisted name)
BRANCH_PREFIX = "evotree/harness/"
TEMPLATE = """\
# An evotree analyzer version: threshold overrides for the analyzers of `evotree diagnose`.
# `evotree diagnose --help` and diagnostics/signal.py, behavior.py list the analyzers and keys.
# Example:
# [thresholds."signal.dead_groups"]
# warn_ratio = 0.2
"""


@dataclass
class AnalyzerVersion:
    """One analyzer version as the ledger records it."""

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
class ActiveAnalyzers:
    """The analyzer version in force: its id, the threshold overrides and plug-in analyzers of
    its commit."""

    id: str
    commit: str | None
    thresholds: dict[str, dict[str, Any]]
    analyzers_source: str | None = None
    #: False when refs/evotree/harness or the ledger does not match the signed analyzers' chain;
    #: the version used is then the end of that chain, and ``warning`` says what was found.
    signed: bool = True
    warning: str | None = None

    def load_analyzers(self) -> list[str]:
        """Import the version's ``analyzers.py`` (once per commit); return the analyzers it
        registered.

        The module registers :class:`evotree.diagnostics.findings.Analyzer` subclasses with
        ``register_analyzer``; each is stamped with this analyzer version. The code comes from the
        promoted analyzers ref only, never from a policy version's tree.
        """
        if not self.analyzers_source or self.commit is None:
            return []
        import importlib.util
        import sys

        from evotree.diagnostics.findings import analyzer_classes

        name = f"evotree_analyzers_{self.commit[:12]}"
        if name in sys.modules:
            return list(getattr(sys.modules[name], "_EVOTREE_REGISTERED", []))
        before = {cls.name: cls for cls in analyzer_classes()}
        spec = importlib.util.spec_from_loader(name, loader=None)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        try:
            exec(
                compile(self.analyzers_source, f"<analyzers {self.id}: {ANALYZERS_FILE}>", "exec"),
                module.__dict__,
            )
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must say where it broke
            raise EvotreeError(
                f"{ANALYZERS_FILE} of analyzer version {self.id} failed to load: "
                f"{type(exc).__name__}: {exc}",
                fix=f"fix it on branch {BRANCH_PREFIX}{self.id} and promote again",
            ) from None
        added = [cls for cls in analyzer_classes() if before.get(cls.name) is not cls]
        for cls in added:
            cls.harness_version = self.id
        module._EVOTREE_REGISTERED = [cls.name for cls in added]
        sys.modules[name] = module
        return module._EVOTREE_REGISTERED


def parse_thresholds_toml(text: str, source: str) -> dict[str, dict[str, Any]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{source}: not valid TOML: {exc}", fix=f"fix {THRESHOLDS_FILE}"
        ) from None
    unknown = set(data) - {"thresholds"}
    thresholds = data.get("thresholds", {})
    if (
        unknown
        or not isinstance(thresholds, dict)
        or not all(isinstance(v, dict) for v in thresholds.values())
    ):
        raise ConfigError(
            f"{source}: expected only [thresholds.<analyzer>] tables, actually: {sorted(data)}",
            fix='put each override under [thresholds."<analyzer name>"], '
            'e.g. [thresholds."signal.dead_groups"]',
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


def analyzer_records(txn: LedgerTxn) -> dict[str, dict[str, Any]]:
    return dict(txn.meta.get(RECORDS_KEY) or {})


def read_blob(ws: Workspace, commit: str | None, name: str) -> bytes | None:
    if commit is None:
        return None
    tree = ws.git.repo[commit].peel(pygit2.Commit).tree
    if name not in tree:
        return None
    obj = ws.git.repo[tree[name].id]
    return obj.data if isinstance(obj, pygit2.Blob) else None


def _raw_thresholds(ws: Workspace, commit: str | None) -> dict[str, dict[str, Any]]:
    raw = read_blob(ws, commit, THRESHOLDS_FILE)
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


def analyzers_diff(
    ws: Workspace, previous: str, previous_commit: str | None, hid: str, commit: str | None
) -> dict[str, Any]:
    """What an analyzers promotion changes: every threshold changed, and ``analyzers.py``
    (status, sha256).

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
    # the keys are signed (the approver signs this dict's sha256) and verify recomputes them:
    # persisted names (existing ledgers and signed statements use them)
    return {
        "harness": hid,
        "commit": commit,
        "previous_harness": previous,
        "previous_commit": previous_commit,
        "thresholds": changes,
        "analyzers_py": {"status": status, "sha256": new_sha, "previous_sha256": old_sha},
    }


def load_analyzer_version(ws: Workspace, trust: ChainTrust) -> ActiveAnalyzers:
    """The analyzer version ``trust`` names, loaded: its thresholds and plug-in analyzers (never
    a policy branch).

    ``trust`` comes from :func:`evotree.gates.analyzer_versions.trusted_analyzers`, the end of the
    signed chain of analyzers promotions (the gates layer verifies signatures; this layer only
    reads commits). A chain with problems gives ``signed=False`` and a ``warning`` (see
    :func:`analyzers_trust_finding`).
    """
    if trust.commit is None:
        return ActiveAnalyzers(BUILTIN, None, {}, signed=trust.trusted, warning=trust.warning)
    source = read_blob(ws, trust.commit, ANALYZERS_FILE)
    active = ActiveAnalyzers(
        trust.id,
        trust.commit,
        {},
        source.decode() if source is not None else None,
        signed=trust.trusted,
        warning=trust.warning,
    )
    active.load_analyzers()  # plug-ins first: harness.toml may set their thresholds too
    text = read_blob(ws, trust.commit, THRESHOLDS_FILE)
    active.thresholds = parse_thresholds_toml(
        text.decode() if text is not None else "", f"{THRESHOLDS_FILE} of {trust.id}"
    )
    return active


def analyzers_trust_finding(active: ActiveAnalyzers, version: str | None = None) -> Finding | None:
    """A critical ``version.harness_unsigned`` finding (a stored code: persisted name) when the
    analyzers in force are not signed, else None.

    ``evotree diagnose`` adds it to its result so that an agent or a person reading the findings
    sees that the analyzers ref or ledger was changed without a signed analyzers promotion.
    """
    if active.signed:
        return None
    from evotree.diagnostics.findings import Finding

    return Finding(
        layer="version",
        code="version.harness_unsigned",
        severity="critical",
        title=active.warning or "the analyzers in force are not signed",
        evidence={"harness_used": active.id, "commit": active.commit},
        suggestion="run `evotree verify`; restore refs/evotree/harness to the signed chain; "
        "promote analyzer versions only with `evotree analyzers promote HN` (a person's signed "
        "sign-off)",
        version=version,
        harness_version=active.id,
    )


def analyzer_thresholds(ws: Workspace, hid: str) -> dict[str, dict[str, Any]]:
    """The threshold overrides of analyzer version ``hid`` (its branch tip; ``h0``: none)."""
    if hid == BUILTIN:
        return {}
    records = ws.ledger.meta().get(RECORDS_KEY) or {}
    if hid not in records:
        raise UnknownVersion(
            f"unknown analyzer version {hid!r}", fix="`evotree analyzers list` lists them"
        )
    target = ws.git.ref_target(f"refs/heads/{records[hid]['branch']}")
    tree = ws.git.repo[target].tree
    text = ws.git.repo[tree[THRESHOLDS_FILE].id].data.decode() if THRESHOLDS_FILE in tree else ""
    return parse_thresholds_toml(text, f"{THRESHOLDS_FILE} of {hid}")
