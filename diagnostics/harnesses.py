"""Harness versions: the analyzers' thresholds evolve on their own lineage, like policy versions.

A harness version ``hN`` is a branch ``evotree/harness/hN`` with a worktree, whose tree holds
``harness.toml`` (threshold overrides per analyzer, e.g. ``[thresholds.dead_groups]``).
``h0`` is the built-in harness. A harness may also carry ``analyzers.py``: plug-in
analyzers registered with :func:`diagnostics.findings.register_analyzer`, loaded from the
promoted commit only. ``evotree harness promote hN`` points ``refs/evotree/harness``
at the branch's tip; ``evotree diagnose`` reads the thresholds from that ref only, so a policy
version's branch (which may hold any ``harness.toml`` it likes) can never change the harness
that judges it, and every finding records the harness version that produced it.

A harness decides what the signal gate blocks, so promoting one is a person's signed decision,
exactly like promoting a version (:mod:`gates`): :func:`plan_harness_promotion` computes what
changes (thresholds diff, ``analyzers.py`` sha256) without running any workspace code,
:func:`record_harness_promotion` signs a statement naming the diff's sha256 and moves the ref.
The harness in force is the end of the chain of *signed* harness promotions, starting from the
built-in ``h0`` (no ref: always trusted); :func:`trusted_harness` computes it with
``evotree verify``'s walk, and a ref moved by hand is reported, never followed.
"""

from __future__ import annotations

import json
import subprocess
import tomllib
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import pygit2

from evotree.errors import (
    AlreadyExists,
    ConfigError,
    DirtyState,
    EvotreeError,
    InvalidState,
    UnknownVersion,
)
from evotree.ledger import Event, LedgerTxn, utcnow
from evotree.refs import NAMESPACE
from evotree.workspace import Workspace

if TYPE_CHECKING:
    from diagnostics.findings import Finding
    from gates.policy import Policy
    from gates.signoff import Approver

__all__ = [
    "HARNESS_FILE",
    "HARNESS_REF",
    "ActiveHarness",
    "HarnessPromotionPlan",
    "HarnessPromotionResult",
    "HarnessTrust",
    "HarnessVersion",
    "active_harness",
    "create_harness",
    "harness_diff",
    "harness_thresholds",
    "harness_trust_finding",
    "list_harnesses",
    "plan_harness_promotion",
    "record_harness_promotion",
    "trusted_harness",
]

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
    #: False when refs/evotree/harness or the ledger does not match the signed harness chain;
    #: the harness used is then the end of that chain, and ``warning`` says what was found.
    signed: bool = True
    warning: str | None = None

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
    """``{"v": 1, "active": id, "signed": bool, "warning", "harnesses": [...]}`` with the built-in ``h0`` first.

    ``active`` is the end of the signed chain of harness promotions (what diagnose and the gates
    use); ``signed`` is false, with a ``warning``, when the harness ref or the ledger disagree.
    """
    meta = ws.ledger.meta()
    trust = trusted_harness(ws)
    active = trust.id
    items = [HarnessVersion(BUILTIN, None, "built-in analyzers and thresholds", "evotree", "", None, None)]
    for record in sorted((meta.get("harnesses") or {}).values(), key=lambda r: int(r["id"][1:])):
        items.append(HarnessVersion(**{k: record.get(k) for k in HarnessVersion.__dataclass_fields__ if k != "active"}))
    for item in items:
        item.active = item.id == active
    return {"v": 1, "active": active, "signed": trust.trusted, "warning": trust.warning,
            "harnesses": [h.to_dict() for h in items]}


def create_harness(ws: Workspace, *, hypothesis: str) -> HarnessVersion:
    """A new harness version ``hN`` from the active one, with its branch and worktree."""
    if not hypothesis.strip():
        raise EvotreeError("a hypothesis (-m) is required", fix='pass -m "what the new thresholds should catch"')
    git = ws.git
    actor = git.identity()
    meta = ws.ledger.meta()
    trust = trusted_harness(ws)  # branch from the signed harness, never from a ref moved by hand
    parent = trust.id
    base = git.repo[trust.commit].id if trust.commit else None
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


@dataclass
class HarnessTrust:
    """The end of the signed chain of harness promotions, and what disagrees with it."""

    id: str
    commit: str | None
    problems: list[str] = field(default_factory=list)

    @property
    def trusted(self) -> bool:
        return not self.problems

    @property
    def warning(self) -> str | None:
        """One sentence for people and agents, or None when everything matches the signed chain."""
        if not self.problems:
            return None
        return (f"the harness in force is not signed: {self.problems[0]}"
                + (f" (+{len(self.problems) - 1} more problem(s))" if len(self.problems) > 1 else "")
                + f"; the last signed harness {self.id} is used instead")

    @property
    def fix(self) -> str:
        """How to restore the harness ref to the signed chain."""
        restore = (f"git update-ref {HARNESS_REF} {self.commit}" if self.commit
                   else f"git update-ref -d {HARNESS_REF}")
        return (f"run `evotree verify` for the full list; restore the harness ref to the signed chain ({restore}) "
                "and the ledger from a trusted copy; a new harness goes in force only through "
                "`evotree harness promote HN` with a person's signed sign-off")


def trusted_harness(ws: Workspace) -> HarnessTrust:
    """The signed harness chain's end (``h0``, no commit, when nothing was promoted) and its problems.

    Runs :func:`gates.verify.verify_workspace` (without tags): harness promotions are checked
    against the allowed signers of the champion in force at their point of the ledger.
    """
    from gates.verify import HARNESS_PROBLEMS, verify_workspace

    report = verify_workspace(ws, check_tags=False)
    harness = report.harness or {}
    problems = [p.message for p in report.problems if p.kind in HARNESS_PROBLEMS]
    return HarnessTrust(str(harness.get("id") or BUILTIN), harness.get("commit"), problems)


def _blob(ws: Workspace, commit: str | None, name: str) -> bytes | None:
    if commit is None:
        return None
    tree = ws.git.repo[commit].peel(pygit2.Commit).tree
    if name not in tree:
        return None
    obj = ws.git.repo[tree[name].id]
    return obj.data if isinstance(obj, pygit2.Blob) else None


def _raw_thresholds(ws: Workspace, commit: str | None) -> dict[str, dict[str, Any]]:
    raw = _blob(ws, commit, HARNESS_FILE)
    if raw is None:
        return {}
    data = tomllib.loads(raw.decode("utf-8", errors="replace"))
    thresholds = data.get("thresholds", {})
    if not isinstance(thresholds, dict):
        return {}
    # JSON-safe (TOML dates become strings) so the diff has one canonical byte form
    return json.loads(json.dumps({str(k): v for k, v in thresholds.items() if isinstance(v, dict)}, default=str))


def harness_diff(ws: Workspace, previous: str, previous_commit: str | None, hid: str,
                 commit: str | None) -> dict[str, Any]:
    """What a harness promotion changes: every threshold changed, and ``analyzers.py`` (status, sha256).

    Computed from the two commits only (no workspace code runs), so ``evotree verify`` can
    recompute it and check the sha256 the approver signed.
    """
    from gates.signing import sha256_hex

    old, new = _raw_thresholds(ws, previous_commit), _raw_thresholds(ws, commit)
    changes = []
    for analyzer in sorted(set(old) | set(new)):
        before, after = old.get(analyzer, {}), new.get(analyzer, {})
        for key in sorted(set(before) | set(after)):
            if key not in before or key not in after or before[key] != after[key]:
                changes.append({"analyzer": analyzer, "key": key, "old": before.get(key), "new": after.get(key)})
    old_src, new_src = _blob(ws, previous_commit, ANALYZERS_FILE), _blob(ws, commit, ANALYZERS_FILE)
    old_sha = sha256_hex(old_src) if old_src is not None else None
    new_sha = sha256_hex(new_src) if new_src is not None else None
    status = ("absent" if old_sha is None and new_sha is None else "added" if old_sha is None
              else "removed" if new_sha is None else "unchanged" if old_sha == new_sha else "changed")
    return {"harness": hid, "commit": commit, "previous_harness": previous, "previous_commit": previous_commit,
            "thresholds": changes, "analyzers_py": {"status": status, "sha256": new_sha, "previous_sha256": old_sha}}


@dataclass
class HarnessPromotionPlan:
    """What ``evotree harness promote HN`` shows the approver before they sign."""

    harness: str
    commit: str | None
    created_by: str
    hypothesis: str
    previous_harness: str
    previous_commit: str | None
    diff: dict[str, Any]
    diff_hash: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class HarnessPromotionResult:
    """What ``evotree harness promote --json`` prints (schema: ``harness-promote.schema.json``)."""

    harness: str
    commit: str | None
    previous_harness: str
    previous_commit: str | None
    diff: dict[str, Any]
    diff_hash: str
    approver: str
    ledger_commit: str

    def to_dict(self) -> dict[str, Any]:
        return {"v": 1, **asdict(self)}


def _dirty(path: Any) -> list[str]:
    """Uncommitted paths of a worktree, with git's code-running settings pinned off (no fsmonitor, hooks)."""
    from gates.signing import git_command

    proc = subprocess.run(git_command("status", "--porcelain=v1", "-z", "--untracked-files=all"), cwd=path,
                          capture_output=True, check=False, text=True)
    if proc.returncode != 0:
        raise EvotreeError(f"git status failed in {path}: {proc.stderr.strip()}", fix="check the worktree")
    return [e[3:] for e in proc.stdout.split("\0") if len(e) > 3]


def plan_harness_promotion(ws: Workspace, hid: str) -> HarnessPromotionPlan:
    """Validate ``hid`` (its branch tip) and compute what promoting it changes; moves nothing.

    Refuses (``TamperingFound``, exit 33) when the harness in force is not the end of the signed
    chain: a new signature must not build on a ref moved by hand. Runs no workspace code: the
    approver's key is near (``analyzers.py`` is hashed and shown, never imported).
    """
    from gates.errors import TamperingFound
    from gates.signing import canonical, sha256_hex

    trust = trusted_harness(ws)
    if not trust.trusted:
        raise TamperingFound(f"refusing to promote a harness: {trust.warning}", fix=trust.fix,
                             problems=trust.problems)
    records = ws.ledger.meta().get("harnesses") or {}
    if hid != BUILTIN and hid not in records:
        raise UnknownVersion(f"unknown harness version {hid!r}", fix="`evotree harness list` lists them")
    if hid == BUILTIN:
        target, created_by, hypothesis = None, "evotree", "built-in analyzers and thresholds"
    else:
        record = records[hid]
        created_by, hypothesis = str(record.get("created_by") or ""), str(record.get("hypothesis") or "")
        if record.get("worktree") and ws.absolute(record["worktree"]).exists():
            dirty = _dirty(ws.absolute(record["worktree"]))
            if dirty:
                raise DirtyState(f"harness {hid} has uncommitted changes: {', '.join(dirty)}",
                                 fix=f"commit them in {record['worktree']}", paths=dirty)
        tip = ws.git.ref_target(f"refs/heads/{record['branch']}")
        if tip is None:
            raise UnknownVersion(f"the branch {record['branch']} of harness {hid} is gone",
                                 fix="branch a new harness: evotree harness branch -m TEXT")
        target = str(tip)
        raw = _blob(ws, target, HARNESS_FILE)
        _parse(raw.decode("utf-8", errors="replace") if raw is not None else "", f"{HARNESS_FILE} of {hid}")
    if hid == trust.id and target == trust.commit:
        raise InvalidState(f"harness {hid} @ {str(target)[:10]} is already in force", fix="commit a change on its "
                           "branch, or branch a new harness: evotree harness branch -m TEXT")
    diff = harness_diff(ws, trust.id, trust.commit, hid, target)
    return HarnessPromotionPlan(hid, target, created_by, hypothesis, trust.id, trust.commit, diff,
                                sha256_hex(canonical(diff)))


def record_harness_promotion(ws: Workspace, policy: Policy, approver: Approver,
                             plan: HarnessPromotionPlan) -> HarnessPromotionResult:
    """Sign the harness promotion, append the ``harness.promoted`` event, then CAS-move the harness ref.

    ``policy`` must come from :func:`gates.policy.trusted_policy` and ``approver`` from
    :func:`gates.signoff.approver_for` (allowed key, not the harness's creator): the same rules
    as a version's promotion. The statement names the harness, its commit, the previous harness
    and its commit, and the sha256 of the diff the person was shown.
    """
    from evotree.gitio import RefRaceLost
    from gates.errors import TamperingFound
    from gates.promote import new_statement, sign_statement
    from gates.verify import HARNESS_EVENT, HARNESS_PROMOTION_TYPE

    statement = new_statement(ws, HARNESS_PROMOTION_TYPE, approver, harness=plan.harness, commit=plan.commit,
                              previous_harness=plan.previous_harness, previous_commit=plan.previous_commit,
                              created_by=plan.created_by, diff_hash=plan.diff_hash)
    signature = sign_statement(policy, approver, statement)
    git = ws.git

    def change(txn: LedgerTxn) -> Event:
        active = txn.meta.get("harness_active") or BUILTIN
        if active != plan.previous_harness:
            raise InvalidState(f"the ledger's active harness is now {active}, not {plan.previous_harness}",
                               fix="another harness promotion landed first; run the command again")
        txn.meta["harness_active"] = plan.harness
        return Event(kind=HARNESS_EVENT, version=None, actor=str(git.identity()), at=statement["at"],
                     data={"harness": plan.harness, "commit": plan.commit, "previous_harness": plan.previous_harness,
                           "previous_commit": plan.previous_commit, "statement": statement, "signature": signature,
                           "diff": plan.diff})

    entry = ws.ledger.transact(change, actor=git.identity())
    previous = git.repo[plan.previous_commit].id if plan.previous_commit else None
    try:
        if plan.commit is None:
            if git.ref_target(HARNESS_REF) != previous:
                raise RefRaceLost(HARNESS_REF)
            git.delete_ref(HARNESS_REF)
        else:
            git.cas_ref(HARNESS_REF, git.repo[plan.commit].id, previous,
                        f"evotree harness promote {plan.harness} (signed by {approver.principal})")
    except RefRaceLost as exc:
        restore = f"git update-ref {HARNESS_REF} {plan.commit}" if plan.commit else f"git update-ref -d {HARNESS_REF}"
        raise TamperingFound(
            f"the promotion of harness {plan.harness} is recorded and signed, but {HARNESS_REF} was moved by "
            f"someone else meanwhile ({exc})", fix=f"run `evotree verify`; reset the harness ref: {restore}") from exc
    return HarnessPromotionResult(plan.harness, plan.commit, plan.previous_harness, plan.previous_commit, plan.diff,
                                  plan.diff_hash, approver.principal, entry.commit)


def active_harness(ws: Workspace) -> ActiveHarness:
    """The harness in force: the end of the signed chain of harness promotions (never a policy branch).

    A ``refs/evotree/harness`` moved by hand is not followed: the last signed harness is used,
    with ``signed=False`` and a ``warning`` (see :func:`harness_trust_finding`).
    """
    trust = trusted_harness(ws)
    if trust.commit is None:
        return ActiveHarness(BUILTIN, None, {}, signed=trust.trusted, warning=trust.warning)
    source = _blob(ws, trust.commit, ANALYZERS_FILE)
    harness = ActiveHarness(trust.id, trust.commit, {}, source.decode() if source is not None else None,
                            signed=trust.trusted, warning=trust.warning)
    harness.load_analyzers()  # plug-ins first: harness.toml may set their thresholds too
    text = _blob(ws, trust.commit, HARNESS_FILE)
    harness.thresholds = _parse(text.decode() if text is not None else "", f"{HARNESS_FILE} of {trust.id}")
    return harness


def harness_trust_finding(harness: ActiveHarness, version: str | None = None) -> Finding | None:
    """A critical ``version.harness_unsigned`` finding when the harness in force is not signed, else None.

    ``evotree diagnose`` adds it to its result so that an agent or a person reading the findings
    sees that the harness ref or ledger was changed without a signed harness promotion.
    """
    if harness.signed:
        return None
    from diagnostics.findings import Finding

    return Finding(layer="version", code="version.harness_unsigned", severity="critical",
                   title=harness.warning or "the harness in force is not signed",
                   evidence={"harness_used": harness.id, "commit": harness.commit},
                   suggestion="run `evotree verify`; restore refs/evotree/harness to the signed chain; promote "
                              "harnesses only with `evotree harness promote HN` (a person's signed sign-off)",
                   version=version, harness_version=harness.id)


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
