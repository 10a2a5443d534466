"""The agent's verbs as the server renders them: the verb layer's results as ``--json`` documents.

Each method calls the :class:`evotree.verbs.Session` verb of the same name, acting for the
server's principal (``evotree serve --as NAME``), and returns what ``evotree CMD --json`` prints:
the same ``to_dict()``, the same schema (``evotree schema NAME``). Every policy — the trust root,
who may write which version, what is hidden — is the verb layer's; this module only encodes, and
keeps the read side of the ledger cached per ledger head (``tree``, ``show``, ``log`` of a large
tree within milliseconds). The MCP layer (:mod:`evotree.server.tools`) turns these into tools.
Promotion, run approval, analyzers promotion, the judge and the policy have no verb here, by design.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError
from evotree.verbs import Session
from evotree.verbs.policy import hidden_now, shown
from evotree.verbs.principal import Principal, PrincipalError, UnknownRun, pin_principal
from evotree.core.refs import LEDGER_REF
from evotree.core.versions import tree_view
from evotree.core.refs import branch_ref
from evotree.skills import list_skills
from evotree.verbs.results import SkillDetail
from evotree.verbs.results import SkillListResult
from evotree.skills import get_skill
from evotree.verbs.results import SkillShowResult

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = ["Encoded", "Principal", "PrincipalError", "UnknownRun", "Verbs", "pin_principal"]


@dataclass(frozen=True)
class Encoded:
    """A result already encoded: ``text`` is what ``--json`` prints, ``data`` its parsed form."""

    text: str
    data: dict[str, Any]

    @classmethod
    def of(cls, data: Any) -> Encoded:
        text = json.dumps(data, default=str)
        return cls(text, json.loads(text))


@dataclass
class _LedgerState:
    """What the read verbs need from one ledger head: the tree (encoded), each version's row, and
    every event newest first, all and per version (exactly what ``log`` and ``show`` list)."""

    head: str | None = None
    tree: Encoded | None = None
    views: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    by_version: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def _runs(records: list[Any]) -> dict[str, Any]:
    """``{"v": 1, "runs": [...]}``: what ``evotree run|runs --json`` prints."""
    return {"v": 1, "runs": [r.to_dict() for r in records]}


class Verbs:
    """The agent's verbs over the workspace at ``root``, acting for ``principal``."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        principal: Principal,
        worktree_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.root = Path(root)
        self.principal = principal
        #: where ``branch`` puts new worktrees (``evotree agent``'s session folder); None: the configured one
        self.worktree_dir = Path(worktree_dir) if worktree_dir is not None else None
        self.session = Session(self.root, principal, worktree_dir=worktree_dir)
        self._state = _LedgerState()
        self._state_lock = threading.Lock()

    # ------------------------------------------------------------------ the workspace
    def open(self) -> Workspace:
        """The workspace, opened afresh by the verb layer (runs whose driving process died are
        marked crashed first; this server's own runs hold their flock and are left alone)."""
        return self.session.open()

    # ------------------------------------------------------------------ the version tree
    def ledger_state(self, ws: Workspace) -> _LedgerState:
        """The read side of the ledger at its current head, recomputed only when the head moved.

        The ledger is append-only and every change to the tree is one of its commits, so its
        head names the state: the tree (``tree_view``) is rebuilt when it moved; the events are
        extended with the new commits only (the whole history when the old head is not among
        them, e.g. a ledger replaced by a fetch). A state computed while the head moved is not
        kept. This is what keeps ``tree`` and ``show`` of a 1,000-version tree within a few
        milliseconds on a warm server (BENCHMARKS.md, "MCP tool-call latency").
        """

        def head() -> str | None:
            target = ws.git.ref_target(LEDGER_REF)
            return None if target is None else str(target)

        with self._state_lock:
            before = head()
            current = self._state
            if before is not None and before == current.head:
                return current
            tree = Encoded.of(tree_view(ws).to_dict())
            fresh: list[dict[str, Any]] = []
            found_old = False
            for entry in ws.ledger.entries():
                if entry.commit == current.head:
                    found_old = True
                    break
                fresh.append({"commit": entry.commit, **asdict(entry.event)})
            events = fresh + current.events if found_old else fresh
            by_version: dict[str, list[dict[str, Any]]] = {}
            for event in events:
                if event.get("version") is not None:
                    by_version.setdefault(event["version"], []).append(event)
            state = _LedgerState(
                head=before,
                tree=tree,
                views={v["id"]: v for v in tree.data["versions"]},
                events=events,
                by_version=by_version,
            )
            if head() == before:
                self._state = state
            return state

    def tree_encoded(self) -> Encoded:
        """``tree`` as encoded once per ledger head (as the verb layer shows it)."""
        ws = self.open()
        state = self.ledger_state(ws)
        assert state.tree is not None
        if hidden_now(ws):
            return Encoded.of(shown(ws, state.tree.data, hide=True))
        return state.tree

    def tree(self) -> dict[str, Any]:
        return self.tree_encoded().data

    def show(self, version: str) -> dict[str, Any]:
        """``evotree show V --json``: the record, children and events from the ledger state, the
        branch's commits and the worktree's uncommitted files read now (as ``show_version``).

        ``uncommitted`` lists paths only for a version the server's principal created: another
        principal's unfinished work (its file names) is not the agent's to learn; for those it is
        empty."""
        import pygit2

        ws = self.open()
        record = ws.resolve(version)
        own = self.session.owns_draft(record)
        state = self.ledger_state(ws)
        view = state.views.get(record.id)
        if view is None:  # created after the state was read: the library's own view
            from evotree.core.versions import show_version

            detail = show_version(ws, version).to_dict()
            if not own:
                detail["uncommitted"] = []
            return shown(ws, detail)
        tip = ws.git.ref_target(branch_ref(record.id))
        commits: list[dict[str, str]] = []
        if tip is not None:
            walker = ws.git.repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL)
            try:
                walker.hide(pygit2.Oid(hex=record.base_commit))
            except (KeyError, ValueError, pygit2.GitError):
                pass
            for commit in walker:
                if len(commits) >= 50:
                    break
                commits.append(
                    {
                        "commit": str(commit.id),
                        "summary": commit.message.splitlines()[0] if commit.message else "",
                        "author": f"{commit.author.name} <{commit.author.email}>",
                    }
                )
        exists = bool(record.worktree) and ws.absolute(record.worktree or "").exists()
        uncommitted = (
            ws.git.status_porcelain(ws.absolute(record.worktree or "")) if exists and own else []
        )
        return shown(
            ws,
            {
                "version": view,
                "tip": str(tip) if tip is not None else None,
                "commits": commits,
                "worktree_exists": exists,
                "uncommitted": uncommitted,
                "events": state.by_version.get(record.id, []),
                "v": 1,
            },
        )

    def log(self, version: str | None = None, limit: int | None = None) -> dict[str, Any]:
        ws = self.open()
        if version is not None:
            version = ws.resolve(version).id
        state = self.ledger_state(ws)
        events = state.events if version is None else state.by_version.get(version, [])
        return shown(ws, {"v": 1, "events": events if limit is None else events[:limit]})

    def branch(
        self,
        hypothesis: str,
        parent: str = "champion",
        name: str | None = None,
        skills: dict[str, dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """``evotree branch``: created by the principal; with ``skills``, each is checked before
        anything is created, then applied (as ``evotree branch --skill``)."""
        return self.session.branch(hypothesis, parent=parent, name=name, skills=skills).to_dict()

    def commit(self, version: str, message: str) -> dict[str, Any]:
        """Snapshot the principal's own version's worktree into a commit on its branch
        (:meth:`evotree.verbs.Session.commit`)."""
        return self.session.commit(version, message).to_dict()

    # ------------------------------------------------------------------ runs
    def run(
        self,
        versions: list[str],
        seeds: int = 1,
        seed_start: int = 0,
        jobs: int | None = None,
        heldout: bool = False,
        progress: Callable[[str, str, dict[str, Any]], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> dict[str, Any]:
        """``evotree run``: the same path as the CLI — the runs are reserved in the ledger (budgets
        and the train gate's approval decided in that compare-and-swap, so concurrent calls and
        processes share them), the server's process owns the reservations (a killed server's
        are released by the next planner or crash recovery)."""
        return _runs(
            self.session.run(
                list(versions),
                seeds=seeds,
                seed_start=seed_start,
                jobs=jobs,
                heldout=heldout,
                progress=progress,
                cancel=cancel,
            )
        )

    def runs(self, version: str | None = None, run_id: str | None = None) -> dict[str, Any]:
        return _runs(self.session.runs(version, run_id))

    # ------------------------------------------------------------------ analysis
    def compare(
        self,
        a: str,
        b: str,
        split: str = "validation",
        intersect: bool = False,
        bootstrap: int | None = None,
        seed: int = 0,
        look: int | None = None,
        max_looks: int | None = None,
    ) -> dict[str, Any]:
        return self.session.compare(
            a,
            b,
            split=split,
            intersect=intersect,
            bootstrap=bootstrap,
            seed=seed,
            look=look,
            max_looks=max_looks,
        ).to_dict()

    def diagnose(self, version: str, layers: list[str] | None = None) -> dict[str, Any]:
        return self.session.diagnose(version, layers=layers).to_dict()

    def suggest(self, version: str) -> dict[str, Any]:
        return self.session.suggest(version).to_dict()

    def audit(self, version: str, hidden_paths: list[str] | None = None) -> dict[str, Any]:
        """``evotree audit V --json``: the report whether or not it passed (``passed``; the CLI
        exits 28 when it did not)."""
        return self.session.audit(version, hidden_paths=tuple(hidden_paths or ())).to_dict()

    def gates(self, version: str, bootstrap: int | None = None) -> dict[str, Any]:
        return self.session.gates(version, bootstrap=bootstrap).to_dict()

    def report(
        self, version: str, against: str = "champion", split: str = "validation", audit: bool = True
    ) -> dict[str, Any]:
        """``evotree report V --format json``: the report document (schema ``report``); no file."""
        return self.session.report(version, against=against, split=split, audit=audit).to_dict()

    def sql(self, query: str, max_rows: int = 1000) -> dict[str, Any]:
        """``evotree sql --json`` (read-only: one SELECT over the evidence views), at most
        ``max_rows`` rows (``truncated`` says when there were more)."""
        return self.session.sql(query, max_rows=max_rows).to_dict()

    # ------------------------------------------------------------------ skills and memory
    def _domain(self) -> str | None:
        try:
            return self.open().config.workspace.domain
        except EvotreeError:
            return None

    def skill_list(self) -> dict[str, Any]:
        """``skill list`` as the CLI gives it (the same typed result, schema ``skill-list``)."""

        domain = self._domain()
        return SkillListResult(domain, [SkillDetail.of(i, domain) for i in list_skills()]).to_dict()

    def skill_show(self, name: str) -> dict[str, Any]:
        """``skill show`` as the CLI gives it (schema ``skill-show``)."""

        return SkillShowResult.of(get_skill(name), self._domain()).to_dict()

    def memory_search(self, query: str, kind: str | None = None, limit: int = 20) -> dict[str, Any]:
        hits = self.session.memory_search(query, kind=kind, limit=limit)
        return {
            "v": 1,
            "query": query,
            "hits": [h.to_dict() if hasattr(h, "to_dict") else h for h in hits],
        }

    def spend_record(
        self, usd: float, note: str, tokens: int | None = None, version: str | None = None
    ) -> dict[str, Any]:
        """``evotree spend record --json``: agent/API spend, recorded for this server's principal,
        charged only to its own versions."""
        return self.session.spend_record(usd, note, tokens=tokens, version=version).to_dict()

    def memory_add(
        self,
        text: str,
        kind: str = "lesson",
        version: str | None = None,
        skill: str | None = None,
        evidence: dict[str, str] | None = None,
        tags: list[str] | None = None,
    ) -> dict[str, Any]:
        return self.session.memory_add(
            text, kind=kind, version=version, skill=skill, evidence=evidence, tags=list(tags or [])
        ).to_dict()
