"""The workspace: a git repository with an evotree ledger, and ``evotree init``.

A workspace is recognised by its ledger ref, not by a local folder, so a fresh clone that
fetched ``refs/evotree/*`` is a workspace too (``.evotree/`` is created on demand).
"""

from __future__ import annotations

import difflib
import os
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from evotree.core.config import CONFIG_FILE, Config, parse_config, render_template
from evotree.core.errors import (
    AlreadyExists,
    AlreadyInitialized,
    EvotreeError,
    NotAWorkspace,
    UnknownVersion,
)
from evotree.core.gitio import Git
from evotree.core.ledger import Event, EventKind, Ledger, LedgerTxn, VersionRecord, VersionStatus, utcnow
from evotree.core.refs import (
    CHAMPION_ALIAS,
    CHAMPION_REF,
    LEDGER_REF,
    VersionId,
    branch_name,
    branch_ref,
)

__all__ = ["STATE_DIR", "Workspace", "InitResult", "init_workspace"]

STATE_DIR = ".evotree"
ROOT_VERSION = "v0"


class Workspace:
    """An evotree workspace: the repository, its ledger and its (champion's) configuration."""

    def __init__(self, git: Git) -> None:
        self.git = git
        self.ledger = Ledger(git)

    @classmethod
    def open(cls, start: str | os.PathLike[str] = ".") -> Workspace:
        """Open the workspace containing ``start``; :class:`NotAWorkspace` if there is none."""
        git = Git(start)
        ws = cls(git)
        if not ws.ledger.exists():
            raise NotAWorkspace(
                f"{git.root} is a git repository but not an evotree workspace (no {LEDGER_REF})",
                fix="run `evotree init`, or fetch the tree of a shared one: "
                "git fetch origin 'refs/evotree/*:refs/evotree/*' 'refs/heads/evotree/*:refs/heads/evotree/*'",
            )
        return ws

    @property
    def root(self) -> Path:
        return self.git.root

    @property
    def state_dir(self) -> Path:
        """``.evotree/`` (created on first use, with a ``.gitignore`` that ignores all of it)."""
        return ensure_state_dir(self.root)

    @cached_property
    def config(self) -> Config:
        """The configuration in force: ``evotree.toml`` of the champion's commit (never a candidate's)."""
        target = self.git.ref_target(CHAMPION_REF)
        if target is None:
            champion = self.ledger.meta().get("champion")
            record = self.ledger.snapshot().version(champion) if champion else None
            if record is None:
                return Config()
            target = self.git.repo[record.base_commit].id
        tree = self.git.repo[target].tree
        if CONFIG_FILE not in tree:
            return Config()
        text = self.git.repo[tree[CONFIG_FILE].id].data.decode("utf-8", errors="replace")
        return parse_config(text, source=f"{CONFIG_FILE} (champion {str(target)[:10]})")

    def champion(self) -> str:
        """The id of the current champion version."""
        champion = self.ledger.meta().get("champion")
        if not champion:
            raise NotAWorkspace("the ledger names no champion", fix="re-run `evotree init`")
        return str(champion)

    def resolve(self, name: str, txn: LedgerTxn | None = None) -> VersionRecord:
        """The record of ``name`` (a version id or ``champion``); a clear error if unknown."""
        view = txn or self.ledger.snapshot()
        if name == CHAMPION_ALIAS:
            name = str(view.meta.get("champion"))
        else:
            VersionId.parse(name)
        record = view.version(name)
        if record is None:
            known = sorted(r.id for r in self.ledger.versions())
            close = difflib.get_close_matches(name, known, n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise UnknownVersion(
                f"unknown version {name!r}{hint}", fix="`evotree tree` lists the versions", version=name
            )
        return record

    def worktree_path(self, version: str) -> Path:
        """Default worktree location of ``version`` (``[workspace].worktree_dir``/id)."""
        base = Path(self.config.workspace.worktree_dir)
        if not base.is_absolute():
            base = self.root / base
        return base / version

    def display_path(self, path: Path) -> str:
        """A path as stored in the ledger: relative to the root when inside it."""
        try:
            return path.resolve().relative_to(self.root).as_posix()
        except ValueError:
            return str(path.resolve())

    def absolute(self, stored: str) -> Path:
        """The absolute path of a path stored by :meth:`display_path`."""
        path = Path(stored)
        return path if path.is_absolute() else self.root / path


def ensure_state_dir(root: Path) -> Path:
    """Create ``.evotree/`` with a ``.gitignore`` of ``*`` so git never tracks evotree's files."""
    state = root / STATE_DIR
    state.mkdir(exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# evotree's local state: worktrees, runs, caches. Never committed.\n*\n")
    return state


def _differs_from_head(git: Git, head_tree: object, rel: str) -> bool:
    path = git.root / rel
    try:
        entry = head_tree[rel]  # type: ignore[index]
    except KeyError:
        return True
    return git.repo[entry.id].data != path.read_bytes()


@dataclass
class InitResult:
    """What ``evotree init`` did (schema: ``init.schema.json``)."""

    root: str
    champion: str
    commit: str
    branch: str
    config_path: str
    config_committed: bool
    ledger_commit: str
    files: list[str]


#: Writes a domain's workspace files under a root (never overwriting); returns the paths written.
DomainTemplate = Callable[[Path], Iterable[str]]


def init_workspace(start: str | os.PathLike[str] = ".", *, domain: str = "custom",
                   template: DomainTemplate | None = None) -> InitResult:
    """Turn the repository at ``start`` into a workspace with ``v0`` = HEAD as root and champion.

    Writes a commented ``evotree.toml`` when there is none (an existing one is validated) and
    commits it alone if it is not committed yet, so the champion's tree holds the policy.
    ``template`` writes the domain's files (:func:`evotree.domains.domain_template` gives it; the
    core layer does not import the domains); a domain other than ``custom`` needs one.
    On any failure nothing evotree created is left behind.
    """
    if domain != "custom" and template is None:
        raise EvotreeError(f"the {domain} domain's files need its template",
                           fix=f"call evotree.init(path, domain={domain!r}) (the Python API) or `evotree init "
                               f"--domain {domain}`; the core init_workspace takes template=domain_template(domain)")
    git = Git(start)
    head = git.head_commit()
    actor = git.identity()
    ledger = Ledger(git)
    if ledger.exists():
        champion = ledger.meta().get("champion")
        raise AlreadyInitialized(
            f"{git.root} is already an evotree workspace (champion {champion})",
            fix="use `evotree tree` to see it; nothing was changed",
        )
    if git.ref_target(branch_ref(ROOT_VERSION)) is not None:
        raise AlreadyExists(
            f"branch {branch_name(ROOT_VERSION)} already exists but there is no ledger",
            fix=f"rename or delete it (git branch -m {branch_name(ROOT_VERSION)} old/v0) and re-run init",
        )

    config_path = git.root / CONFIG_FILE
    created: list[str] = []
    if config_path.exists():
        parse_config(config_path.read_text(), source=CONFIG_FILE)  # raises ConfigError with line
    else:
        render_template(domain)  # validates the domain before anything is written
    committed = False
    try:
        if template is not None:
            created += list(template(git.root))
        if not config_path.exists():
            config_path.write_text(render_template(domain))
            created.append(CONFIG_FILE)
        paths = [CONFIG_FILE, *[p for p in created if p != CONFIG_FILE]]
        head_tree = git.repo[head].tree
        changed = [p for p in paths if _differs_from_head(git, head_tree, p)]
        if changed:
            git.run("add", "--", *changed)
            git.run("commit", "--quiet", "-m", f"evotree: initialize workspace ({domain} domain)",
                    "--", *changed)
            committed = True
            head = git.head_commit()
    except BaseException:
        if created:
            git.run("reset", "--quiet", "--", *created, check=False)
            for rel in created:
                target = git.root / rel
                if target.is_dir():
                    shutil.rmtree(target, ignore_errors=True)
                else:
                    target.unlink(missing_ok=True)
        raise

    # reflogs for every ref, refs/evotree/* included: `evotree verify` reads the champion's and
    # the ledger's reflogs to see a ref moved and moved back (git logs only branches by default)
    git.run("config", "core.logAllRefUpdates", "always")
    created_refs: list[str] = []
    try:
        if not git.create_ref(branch_ref(ROOT_VERSION), head, "evotree init: v0"):
            raise AlreadyExists(f"branch {branch_name(ROOT_VERSION)} appeared while initializing",
                                    fix="another evotree init ran at the same time; run `evotree tree`")
        created_refs.append(branch_ref(ROOT_VERSION))
        git.cas_ref(CHAMPION_REF, head, git.ref_target(CHAMPION_REF), "evotree init: champion v0")
        created_refs.append(CHAMPION_REF)
        now = utcnow()
        record = VersionRecord(
            id=ROOT_VERSION,
            parents=[],
            branch=branch_name(ROOT_VERSION),
            status=VersionStatus.ACTIVE.value,
            hypothesis="root: the recipe at init",
            created_by=str(actor),
            created_at=now,
            base_commit=str(head),
            worktree=None,
        )

        def change(txn: LedgerTxn) -> Event:
            if txn.head is not None:
                raise AlreadyInitialized(f"{git.root} was initialized concurrently", fix="run `evotree tree`")
            txn.meta.update({"champion": ROOT_VERSION, "last_number": 0, "created_at": now})
            txn.put(record)
            return Event(
                kind=EventKind.WORKSPACE_INITIALIZED.value,
                version=ROOT_VERSION,
                actor=str(actor),
                at=now,
                data={"commit": str(head), "domain": domain, "config_committed": committed},
            )

        entry = ledger.transact(change, actor=actor, create=True)
    except BaseException:
        for ref in created_refs:
            git.delete_ref(ref)
        raise
    ensure_state_dir(git.root)
    return InitResult(
        root=str(git.root),
        champion=ROOT_VERSION,
        commit=str(head),
        branch=branch_name(ROOT_VERSION),
        config_path=str(config_path),
        config_committed=committed,
        ledger_commit=entry.commit,
        files=sorted(created),
    )
