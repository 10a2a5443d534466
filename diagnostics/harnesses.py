"""Harness versions: the analyzers' thresholds evolve on their own lineage, like policy versions.

A harness version ``hN`` is a branch ``evotree/harness/hN`` with a worktree, whose tree holds
``harness.toml`` (threshold overrides per analyzer, e.g. ``[thresholds.dead_groups]``).
``h0`` is the built-in harness. A harness may also carry ``analyzers.py``: plug-in
analyzers registered with :func:`diagnostics.findings.register_analyzer`, loaded from the
promoted commit only. ``evotree harness promote hN`` points ``refs/evotree/harness``
at the branch's tip; ``evotree diagnose`` reads the thresholds from that ref only, so a policy
version's branch (which may hold any ``harness.toml`` it likes) can never change the harness
that judges it, and every finding records the harness version that produced it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from typing import Any

import pygit2

from evotree.errors import AlreadyExists, ConfigError, DirtyState, EvotreeError, UnknownVersion
from evotree.ledger import Event, LedgerTxn, utcnow
from evotree.refs import NAMESPACE
from evotree.workspace import Workspace

__all__ = ["HARNESS_FILE", "HARNESS_REF", "HarnessVersion", "ActiveHarness", "create_harness",
           "list_harnesses", "promote_harness", "active_harness", "harness_thresholds"]

HARNESS_FILE = "harness.toml"
ANALYZERS_FILE = "analyzers.py"
HARNESS_REF = NAMESPACE + "harness"
BUILTIN = "h0"
_BRANCH_PREFIX = "evotree/harness/"
_TEMPLATE = """\
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

    def load_analyzers(self) -> list[str]:
        """Import the harness's ``analyzers.py`` (once per commit); return the analyzers it registered.

        The module registers :class:`~diagnostics.findings.Analyzer` subclasses with
        ``register_analyzer``; each is stamped with this harness version. The code comes from the
        promoted harness ref only, never from a policy version's tree.
        """
        if not self.analyzers_source or self.commit is None:
            return []
        import importlib.util
        import sys

        from diagnostics.findings import analyzer_classes

        name = f"evotree_harness_{self.commit[:12]}"
        if name in sys.modules:
            return list(getattr(sys.modules[name], "_EVOTREE_REGISTERED", []))
        before = {cls.name: cls for cls in analyzer_classes()}
        spec = importlib.util.spec_from_loader(name, loader=None)
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        try:
            exec(compile(self.analyzers_source, f"<harness {self.id}: {ANALYZERS_FILE}>", "exec"), module.__dict__)
        except Exception as exc:  # noqa: BLE001 - a broken plug-in must say where it broke
            raise EvotreeError(f"{ANALYZERS_FILE} of harness {self.id} failed to load: {type(exc).__name__}: {exc}",
                               fix=f"fix it on branch {_BRANCH_PREFIX}{self.id} and promote again") from None
        added = [cls for cls in analyzer_classes() if before.get(cls.name) is not cls]
        for cls in added:
            cls.harness_version = self.id
        module._EVOTREE_REGISTERED = [cls.name for cls in added]
        sys.modules[name] = module
        return module._EVOTREE_REGISTERED


def _parse(text: str, source: str) -> dict[str, dict[str, Any]]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}", fix=f"fix {HARNESS_FILE}") from None
    unknown = set(data) - {"thresholds"}
    thresholds = data.get("thresholds", {})
    if unknown or not isinstance(thresholds, dict) or not all(isinstance(v, dict) for v in thresholds.values()):
        raise ConfigError(f"{source}: expected only [thresholds.<analyzer>] tables, actually: {sorted(data)}",
                          fix='put each override under [thresholds."<analyzer name>"], e.g. [thresholds."signal.dead_groups"]')
    from diagnostics.findings import analyzer_classes, make_thresholds

    known = {cls.name: cls for cls in analyzer_classes()}
    for name, overrides in thresholds.items():
        if name not in known:
            raise ConfigError(f"{source}: unknown analyzer {name!r}", fix=f"analyzers: {', '.join(sorted(known))}",
                              key=f"thresholds.{name}")
        make_thresholds(known[name], overrides)  # raises ConfigError naming the key
    return thresholds


def _records(txn: LedgerTxn) -> dict[str, dict[str, Any]]:
    return dict(txn.meta.get("harnesses") or {})


def list_harnesses(ws: Workspace) -> dict[str, Any]:
    """``{"v": 1, "active": id, "harnesses": [...]}`` with the built-in ``h0`` first."""
    meta = ws.ledger.meta()
    active = meta.get("harness_active") or BUILTIN
    items = [HarnessVersion(BUILTIN, None, "built-in analyzers and thresholds", "evotree", "", None, None)]
    for record in sorted((meta.get("harnesses") or {}).values(), key=lambda r: int(r["id"][1:])):
        items.append(HarnessVersion(**{k: record.get(k) for k in HarnessVersion.__dataclass_fields__ if k != "active"}))
    for item in items:
        item.active = item.id == active
    return {"v": 1, "active": active, "harnesses": [h.to_dict() for h in items]}


def create_harness(ws: Workspace, *, hypothesis: str) -> HarnessVersion:
    """A new harness version ``hN`` from the active one, with its branch and worktree."""
    if not hypothesis.strip():
        raise EvotreeError("a hypothesis (-m) is required", fix='pass -m "what the new thresholds should catch"')
    git = ws.git
    actor = git.identity()
    meta = ws.ledger.meta()
    parent = meta.get("harness_active") or BUILTIN
    base = git.ref_target(HARNESS_REF)
    if base is None:  # the first harness branch: a root commit holding the template
        sig = actor.signature()
        builder = git.repo.TreeBuilder()
        builder.insert(HARNESS_FILE, git.repo.create_blob(_TEMPLATE.encode()), pygit2.GIT_FILEMODE_BLOB)
        base = git.repo.create_commit(None, sig, sig, "evotree: harness template\n", builder.write(), [])
    number = max([int(k[1:]) for k in (meta.get("harnesses") or {})] + [0]) + 1
    while not git.create_ref(f"refs/heads/{_BRANCH_PREFIX}h{number}", base, "evotree harness branch"):
        number += 1
    hid = f"h{number}"
    branch = _BRANCH_PREFIX + hid
    path = ws.absolute(ws.config.workspace.worktree_dir) / f"harness-{hid}"
    try:
        if path.exists() and any(path.iterdir()):
            raise AlreadyExists(f"worktree path {path} is already taken", fix="move what is there")
        path.parent.mkdir(parents=True, exist_ok=True)
        git.add_worktree(path, branch)
        record = HarnessVersion(hid, parent, hypothesis.strip(), str(actor), utcnow(), branch, ws.display_path(path))

        def change(txn: LedgerTxn) -> Event:
            records = _records(txn)
            records[hid] = {k: v for k, v in record.to_dict().items() if k != "active"}
            txn.meta["harnesses"] = records
            return Event(kind="harness.created", version=None, actor=str(actor),
                         data={"harness": hid, "parent": parent, "hypothesis": record.hypothesis})

        ws.ledger.transact(change, actor=actor)
    except BaseException:
        git.discard_worktree(path)
        git.delete_ref(f"refs/heads/{branch}")
        raise
    return record


def promote_harness(ws: Workspace, hid: str) -> dict[str, Any]:
    """Make ``hid`` the harness in force (its branch tip, validated); recorded in the ledger."""
    git = ws.git
    actor = git.identity()
    meta = ws.ledger.meta()
    records = meta.get("harnesses") or {}
    if hid != BUILTIN and hid not in records:
        raise UnknownVersion(f"unknown harness version {hid!r}", fix="`evotree harness list` lists them")
    if hid == BUILTIN:
        target = None
    else:
        record = records[hid]
        if record.get("worktree") and ws.absolute(record["worktree"]).exists():
            dirty = git.status_porcelain(ws.absolute(record["worktree"]))
            if dirty:
                raise DirtyState(f"harness {hid} has uncommitted changes: {', '.join(dirty)}",
                                 fix=f"commit them in {record['worktree']}", paths=dirty)
        target = git.ref_target(f"refs/heads/{record['branch']}")
        tree = git.repo[target].tree
        text = git.repo[tree[HARNESS_FILE].id].data.decode() if HARNESS_FILE in tree else ""
        _parse(text, f"{HARNESS_FILE} of {hid}")
    previous = git.ref_target(HARNESS_REF)

    def change(txn: LedgerTxn) -> Event:
        txn.meta["harness_active"] = hid
        return Event(kind="harness.promoted", version=None, actor=str(actor),
                     data={"harness": hid, "commit": str(target) if target is not None else None})

    ws.ledger.transact(change, actor=actor)
    if target is None:
        git.delete_ref(HARNESS_REF)
    else:
        from evotree.gitio import RefRaceLost

        try:
            git.cas_ref(HARNESS_REF, target, previous, f"evotree harness promote {hid}")
        except RefRaceLost:
            raise EvotreeError("the harness ref moved while promoting", fix="retry") from None
    return list_harnesses(ws)


def active_harness(ws: Workspace) -> ActiveHarness:
    """The harness in force, read from ``refs/evotree/harness`` (never from a policy branch)."""
    hid = ws.ledger.meta().get("harness_active") or BUILTIN
    target = ws.git.ref_target(HARNESS_REF)
    if hid == BUILTIN or target is None:
        return ActiveHarness(BUILTIN, None, {})
    tree = ws.git.repo[target].tree
    source = ws.git.repo[tree[ANALYZERS_FILE].id].data.decode() if ANALYZERS_FILE in tree else None
    harness = ActiveHarness(hid, str(target), {}, source)
    harness.load_analyzers()  # plug-ins first: harness.toml may set their thresholds too
    text = ws.git.repo[tree[HARNESS_FILE].id].data.decode() if HARNESS_FILE in tree else ""
    harness.thresholds = _parse(text, f"{HARNESS_FILE} of {hid}")
    return harness



def harness_thresholds(ws: Workspace, hid: str) -> dict[str, dict[str, Any]]:
    """The threshold overrides of harness version ``hid`` (its branch tip; ``h0``: none)."""
    if hid == BUILTIN:
        return {}
    records = ws.ledger.meta().get("harnesses") or {}
    if hid not in records:
        raise UnknownVersion(f"unknown harness version {hid!r}", fix="`evotree harness list` lists them")
    target = ws.git.ref_target(f"refs/heads/{records[hid]['branch']}")
    tree = ws.git.repo[target].tree
    text = ws.git.repo[tree[HARNESS_FILE].id].data.decode() if HARNESS_FILE in tree else ""
    return _parse(text, f"{HARNESS_FILE} of {hid}")
