"""The verb layer: what every face of evotree does, with every policy applied here, once.

The faces — the ``evotree`` CLI, the Python API (:mod:`evotree.api`) and the MCP server
(:mod:`evotree.server`) — parse their input, call a :class:`Session` verb and render what it returns;
none of them decides anything. A session carries the caller's context: the workspace, the
principal (``None``: the person at this machine, the owner of the workspace; a
:class:`~evotree.verbs.principal.Principal`: an agent session or a server's ``--as``), and where
an agent's worktrees go. Each verb applies the policies of :mod:`evotree.verbs.policy`:

========================  =====================================================================
trust root                acting verbs verify the signed chain and pin the workspace to its end
principals                writes (commit, abandon, run, spend) only to the caller's own versions
visibility                refused or redacted at the verb while figures are hidden
evidence checks           the signed policy's void checker passed in, no import side effect
========================  =====================================================================

Verbs return typed results (the library's dataclasses, with ``to_dict()`` for ``--json``).
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError, InvalidState
from evotree.core.ledger import VersionStatus
from evotree.core.workspace import Workspace
from evotree.verbs.policy import (
    MAX_SPEND_TOKENS,
    MAX_SPEND_USD,
    NotYourVersion,
    acting,
    attach,
    hidden_now,
    refuse_hidden,
    require_owner,
    shown,
)
from evotree.verbs.principal import Principal, PrincipalError, UnknownRun, pin_principal

if TYPE_CHECKING:
    from evotree.core.ledger import VersionRecord
    from evotree.core.versions import TreeView, VersionDetail
    from evotree.diagnostics.compare import VersionComparison
    from evotree.diagnostics.diagnose import DiagnoseResult
    from evotree.gates.evaluation import GateReport
    from evotree.harness.money import SpendRecord
    from evotree.harness.records import RunRecord

__all__ = [
    "CommitResult",
    "NotYourVersion",
    "Principal",
    "PrincipalError",
    "QueryResult",
    "Session",
    "UnknownRun",
    "VERBS",
    "open_workspace",
    "pin_principal",
]

#: every verb of :class:`Session`, as the faces name them (a test walks each of them in every face)
VERBS = (
    "tree",
    "show",
    "log",
    "branch",
    "commit",
    "abandon",
    "merge",
    "run",
    "runs",
    "compare",
    "diagnose",
    "suggest",
    "audit",
    "gates",
    "report",
    "sql",
    "spend_record",
    "memory_add",
    "memory_search",
)


def open_workspace(path: str | os.PathLike[str]) -> Workspace:
    """Open the workspace at ``path`` with what the lower layers need passed in; runs whose driving
    process died are marked crashed first (their records say so)."""
    ws = attach(Workspace.open(path))
    active = ws.absolute(ws.config.workspace.runs_dir) / ".active"
    if active.is_dir() and any(
        active.iterdir()
    ):  # cheap check first: most calls have no runs alive
        from evotree.harness.recovery import (
            recover_crashed_runs,
        )  # the harness loads only when needed

        ws.recovered = recover_crashed_runs(ws)
    return ws


@dataclass
class CommitResult:
    """What ``commit`` returns: the files snapshotted and the new tip (or the old one, unchanged)."""

    version: str
    branch: str
    worktree: str | None
    previous_commit: str
    commit: str
    changed: bool
    files: list[dict[str, str]] = field(default_factory=list)
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class QueryResult:
    """What ``sql`` returns: at most ``limit`` rows of one read-only SELECT over the evidence views."""

    columns: list[str]
    rows: list[dict[str, Any]]
    limit: int
    row_count: int
    truncated: bool
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Session:
    """The verbs, acting for ``principal`` on the workspace at ``root`` (module doc)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        principal: Principal | None = None,
        *,
        worktree_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.root = Path(root)
        self.principal = principal
        #: where ``branch`` puts new worktrees (``evotree agent``'s session folder); None: the configured one
        self.worktree_dir = Path(worktree_dir) if worktree_dir is not None else None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ context
    def open(self) -> Workspace:
        """The workspace, opened afresh (a pygit2 repository is not shared between threads)."""
        return open_workspace(self.root)

    def act(self) -> Workspace:
        """The workspace, pinned to the end of the signed chain (refuses when it is not signed)."""
        ws = self.open()
        acting(ws)
        return ws

    def creator(self, ws: Workspace) -> Any:
        """The identity new versions and events record: the principal, or the git identity."""
        return self.principal.identity() if self.principal is not None else ws.git.identity()

    def owns_draft(self, record: VersionRecord) -> bool:
        """Whether the caller may see ``record``'s uncommitted files (its own version, or the owner)."""
        return self.principal is None or record.created_by == str(self.principal.identity())

    # ------------------------------------------------------------------ reading the tree
    def tree(self) -> TreeView:
        from evotree.core.versions import tree_view

        ws = self.open()
        return shown(ws, tree_view(ws))

    def show(self, version: str) -> VersionDetail:
        from evotree.core.versions import show_version

        ws = self.open()
        detail = show_version(ws, version)
        if not self.owns_draft(ws.resolve(version)):
            detail.uncommitted = []
        return shown(ws, detail)

    def log(self, version: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        from evotree.core.versions import log_entries

        ws = self.open()
        return shown(ws, log_entries(ws, version=version, limit=limit))

    # ------------------------------------------------------------------ writing the tree
    def branch(
        self,
        hypothesis: str,
        *,
        parent: str = "champion",
        name: str | None = None,
        worktree: str | os.PathLike[str] | None = None,
        skills: dict[str, dict[str, Any]] | list[tuple[str, dict[str, Any]]] | None = None,
    ) -> VersionRecord:
        """A new version from ``parent`` (the champion: its signed commit) with its branch and worktree;
        with ``skills``, each is checked before anything is created, then applied."""
        from evotree.core.versions import create_version
        from evotree.skills.recipe import branch_with_skills

        ws = self.act()
        creator = self.principal.identity() if self.principal is not None else None
        if not skills:
            return create_version(
                ws,
                hypothesis=hypothesis,
                parent=parent,
                name=name,
                worktree=worktree,
                creator=creator,
                worktree_parent=self.worktree_dir,
            )
        pairs = skills.items() if isinstance(skills, dict) else skills
        requested = [(skill, dict(params or {})) for skill, params in pairs]
        return branch_with_skills(
            ws,
            hypothesis=hypothesis,
            parent=parent,
            name=name,
            worktree=worktree,
            requested=requested,
            creator=creator,
            worktree_parent=self.worktree_dir,
        )

    def merge(
        self,
        first: str,
        second: str,
        *,
        message: str,
        name: str | None = None,
        worktree: str | os.PathLike[str] | None = None,
    ) -> VersionRecord:
        from evotree.core.versions import merge_versions

        ws = self.act()
        creator = self.principal.identity() if self.principal is not None else None
        return merge_versions(
            ws, first, second, message=message, name=name, worktree=worktree, creator=creator
        )

    def abandon(self, version: str, *, reason: str, force: bool = False) -> VersionRecord:
        from evotree.core.versions import abandon_version

        ws = self.open()
        require_owner(ws.resolve(version), self.principal, "abandon")
        return abandon_version(ws, version, reason=reason, force=force)

    def commit(self, version: str, message: str) -> CommitResult:
        """Snapshot ``version``'s worktree into a commit on its branch (the caller's own version).

        libgit2 builds the index, tree and commit in this process: no git program runs, so no
        hook, fsmonitor, filter driver or other program named in the repository's configuration
        can run (the agent can write that configuration). Ignored files stay out; deleted files
        are removed. The branch moves by compare-and-swap from the tip the worktree is on.
        Refused: another principal's version, the champion, an abandoned version, a version
        without a worktree or whose worktree is not on its branch, an empty message.
        """
        import pygit2

        from evotree.core.gitio import RefRaceLost
        from evotree.core.refs import branch_ref

        ws = self.act()
        record = ws.resolve(version)
        text = (message or "").strip()
        _check_committable(ws, record, text)
        require_owner(record, self.principal, "commit")
        worktree = ws.absolute(record.worktree) if record.worktree else None
        if worktree is None or not worktree.is_dir():
            raise InvalidState(
                f"{record.id} has no worktree to commit from",
                fix=f"evotree worktree restore {record.id}",
                version=record.id,
            )
        repo = pygit2.Repository(str(worktree))
        _check_worktree(ws, record, repo, worktree)
        tip = repo.head.target
        index, tree, files = _stage(repo, tip)
        result = CommitResult(
            version=record.id,
            branch=record.branch,
            worktree=record.worktree,
            previous_commit=str(tip),
            commit=str(tip),
            changed=False,
            files=files,
        )
        if tree == repo[tip].tree_id:
            return result
        signature = self.creator(ws).signature()
        commit = repo.create_commit(None, signature, signature, text + "\n", tree, [tip])
        try:
            ws.git.cas_ref(branch_ref(record.id), commit, tip, f"evotree: commit on {record.id}")
        except RefRaceLost:
            raise InvalidState(
                f"the branch of {record.id} moved while committing",
                fix="retry: the new tip is in show()",
                version=record.id,
            ) from None
        index.write()  # the worktree's index now matches the new tip: `git status` is clean
        result.commit, result.changed = str(commit), True
        return result

    # ------------------------------------------------------------------ runs
    def run(
        self,
        versions: Sequence[str],
        *,
        seeds: int = 1,
        seed_start: int = 0,
        jobs: int | None = None,
        heldout: bool = False,
        executor: str | None = None,
        address: str | None = None,
        progress: Callable[[str, str, dict[str, Any]], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> list[RunRecord]:
        """Train and judge ``versions`` × ``seeds`` under the configuration in force (signed), the
        patch and train gates in front; a principal runs its own versions and the champion."""
        from evotree.gates.runs import run_versions

        ws = self.act()
        names = list(versions)
        if self.principal is not None:
            champion = ws.champion()
            for name in names:
                record = ws.resolve(name)
                if record.id != champion:
                    require_owner(record, self.principal, "run")
        hide = hidden_now(ws)
        if progress is not None:
            progress = _safe_progress(progress, hide)
        records = run_versions(
            ws,
            names,
            seeds=seeds,
            seed_start=seed_start,
            jobs=jobs,
            heldout=heldout,
            executor=executor,
            address=address,
            progress=progress,
            cancel=cancel,
        )
        return shown(ws, records, hide=hide)

    def identical_runs_notes(self, versions: Sequence[str]) -> list[str]:
        """For each of ``versions`` whose runs (two or more) gave identical per-task scores, a note
        that more seeds add nothing; none while figures are hidden (identical validation scores
        are a fact about the hidden judge's figures)."""
        ws = self.open()
        if hidden_now(ws):
            return []
        notes = []
        for version in dict.fromkeys(versions):
            try:
                # the ledger's list of runs first: with fewer than two succeeded runs none can be
                # identical, and the statistics (numpy, the evidence reads) are not loaded
                if sum(r.get("status") == "succeeded" for r in ws.resolve(version).runs) < 2:
                    continue
                from evotree.diagnostics.compare import identical_runs_note

                note = identical_runs_note(ws, version)
            except EvotreeError:
                continue
            if note:
                notes.append(note)
        return notes

    def runs(self, version: str | None = None, run_id: str | None = None) -> list[RunRecord]:
        from evotree.harness.records import list_runs

        ws = self.open()
        records = list_runs(ws, version=version)
        if run_id is not None:
            records = [r for r in records if r.run_id == run_id]
            if not records:
                raise UnknownRun(
                    f"no run {run_id!r} on this machine",
                    fix="runs() lists the runs recorded here (run ids look like r-...)",
                    run_id=run_id,
                )
        return shown(ws, records)

    # ------------------------------------------------------------------ analysis
    def compare(
        self,
        a: str,
        b: str,
        *,
        split: str = "validation",
        intersect: bool = False,
        bootstrap: int | None = None,
        seed: int = 0,
        look: int | None = None,
        max_looks: int | None = None,
    ) -> VersionComparison:
        from evotree.diagnostics.compare import compare as compare_fn

        ws = self.act()
        refuse_hidden(ws, "compare")
        return compare_fn(
            ws,
            a,
            b,
            split=split,
            intersect=intersect,
            B=bootstrap,
            seed=seed,
            look=look,
            max_looks=max_looks,
        )

    def gates(
        self, version: str, *, bootstrap: int | None = None, run_audit: bool = True
    ) -> GateReport:
        """Every promotion gate for ``version`` under the signed policy, without promoting."""
        from evotree.gates.evaluation import evaluate_gates
        from evotree.gates.verify import trusted_policy

        ws = self.act()
        refuse_hidden(ws, "gates")
        return evaluate_gates(
            ws, version, policy=trusted_policy(ws), B=bootstrap, run_audit=run_audit
        )

    def report(
        self,
        version: str,
        *,
        against: str = "champion",
        split: str = "validation",
        audit: bool = True,
        progress: Any = None,
    ) -> Any:
        from evotree.report.collect import build_report

        ws = self.act()
        refuse_hidden(ws, "report")
        return build_report(
            ws, version, against=against, split=split, run_audit=audit, progress=progress
        )

    def diagnose(
        self, version: str, *, layers: Sequence[str] | None = None, record: bool = True
    ) -> DiagnoseResult:
        from evotree.diagnostics.diagnose import diagnose as diagnose_fn
        from evotree.gates.analyzer_versions import active_analyzers

        ws = self.act()
        return shown(
            ws,
            diagnose_fn(
                ws,
                version,
                analyzers=active_analyzers(ws),
                layers=list(layers) if layers else None,
                record=record,
            ),
        )

    def suggest(self, version: str) -> Any:
        from evotree.memory.suggestions import suggest as make_suggestions

        ws = self.act()
        return shown(ws, make_suggestions(ws, version))

    def audit(
        self,
        version: str,
        *,
        hidden_paths: Sequence[str] = (),
        trajectory_files: Sequence[str] = (),
        record: bool = True,
        progress: Any = None,
    ) -> Any:
        from evotree.harness.audit.version_audit import audit_version

        ws = self.act()
        return shown(
            ws,
            audit_version(
                ws,
                version,
                record=record,
                trajectory_files=tuple(trajectory_files),
                hidden_paths=tuple(hidden_paths),
                progress=progress,
            ),
        )

    def sql(self, query: str, *, max_rows: int = 1000) -> QueryResult:
        """One read-only SELECT over the evidence views; the judge's rows left out while hidden."""
        table = self.query(query)
        total = table.num_rows
        return QueryResult(
            columns=list(table.column_names),
            rows=table.slice(0, max_rows).to_pylist(),
            limit=max_rows,
            row_count=total,
            truncated=total > max_rows,
        )

    def query(self, query: str) -> Any:
        """:meth:`sql` as a ``pyarrow.Table`` (all rows)."""
        from evotree.harness.query import query as query_runs
        from evotree.harness.query import sql_limits
        from evotree.harness.records import runs_dir

        ws = self.open()
        return query_runs(
            runs_dir(ws),
            query,
            findings_dir=ws.state_dir / "findings",
            hide_judge=hidden_now(ws),
            **sql_limits(ws),
        )

    # ------------------------------------------------------------------ spend and memory
    def spend_record(
        self, usd: float, note: str, *, tokens: int | None = None, version: str | None = None
    ) -> SpendRecord:
        """Record agent/API spend for the caller: finite, at most :data:`MAX_SPEND_USD` (and
        :data:`MAX_SPEND_TOKENS` tokens) a record, and charged to a version only when the caller owns it."""
        from evotree.harness.budget import InvalidSpend
        from evotree.harness.money import record_spend

        if (
            isinstance(usd, bool)
            or not isinstance(usd, (int, float))
            or not math.isfinite(usd)
            or not 0 <= usd <= MAX_SPEND_USD
        ):
            raise InvalidSpend(
                f"--usd: expected a finite amount from 0 to {MAX_SPEND_USD:,.0f}, actually: {usd!r}",
                fix="record what was spent, in USD (e.g. --usd 0.42)",
                usd=str(usd),
            )
        if tokens is not None and (
            isinstance(tokens, bool)
            or not isinstance(tokens, int)
            or not 0 <= tokens <= MAX_SPEND_TOKENS
        ):
            raise InvalidSpend(
                f"--tokens: expected a whole number from 0 to {MAX_SPEND_TOKENS:,}, actually: "
                f"{str(tokens)[:40]}",
                fix="pass the tokens used, e.g. --tokens 120000",
                tokens=str(tokens)[:40],
            )
        ws = self.open()
        if version is not None:
            require_owner(ws.resolve(version), self.principal, "spend_record")
        actor = self.principal.identity() if self.principal is not None else None
        return record_spend(ws, usd, note, tokens=tokens, version=version, actor=actor)

    def memory_add(
        self,
        text: str,
        *,
        kind: str = "lesson",
        version: str | None = None,
        skill: str | None = None,
        evidence: dict[str, str] | None = None,
        tags: Sequence[str] = (),
    ) -> Any:
        from evotree.memory.record import add_entry

        if kind not in ("lesson", "negative_evidence"):
            from evotree.memory.model import InvalidMemory

            raise InvalidMemory(
                f"kind {kind!r} cannot be added by hand: lesson or negative_evidence",
                fix="skill verifications and incidents are recorded by promotions and audits",
            )
        return add_entry(
            self.open(),
            text,
            kind=kind,
            version=version,
            skill=skill,
            evidence={str(k): str(v) for k, v in (evidence or {}).items()},
            tags=list(tags),
        )

    def memory_search(self, query: str, *, kind: str | None = None, limit: int = 20) -> list[Any]:
        from evotree.memory.read import search

        ws = self.open()
        return shown(ws, search(ws, query, limit=limit, kind=kind))


_EVAL_SAFE_KEYS = ("version", "seed", "phase", "status", "note")


def _safe_progress(
    progress: Callable[[str, str, dict[str, Any]], None], hide: bool
) -> Callable[[str, str, dict[str, Any]], None]:
    """The face's progress callback as the harness may call it: never with a hidden figure (an
    event about a hidden split keeps only its phase and status), and never able to fail a run —
    a face's error is evotree's own, not the candidate's, and must not kill or charge a run. While
    hidden, no step or metric of the judge's phase is shown at all, whatever its name (the sql views
    leave out every eval-phase row the same way: a judge signal such as ``replay_mismatches`` names
    no split)."""
    from evotree.core.visibility import JUDGE_PHASES, redact

    def call(run_id: str, event: str, info: dict[str, Any]) -> None:
        data = info
        if (
            hide
            and event in ("step", "metric")
            and isinstance(info, dict)
            and info.get("phase") in JUDGE_PHASES
        ):
            return
        if hide:
            redacted = redact(info)
            data = (
                redacted
                if isinstance(redacted, dict)
                else {k: info[k] for k in _EVAL_SAFE_KEYS if k in info}
            )
            if event in ("step", "metric") and not isinstance(redacted, dict):
                return  # a judged step or figure: not shown at all
        try:
            progress(run_id, event, data)
        except Exception:  # noqa: BLE001, S110 - progress is a view: the run goes on
            pass

    return call


def _check_committable(ws: Workspace, record: VersionRecord, text: str) -> None:
    """Refuse a commit with an empty message, on an abandoned version or on the champion."""
    if not text:
        raise InvalidState("the commit message is empty", fix="say what the change is and why")
    if record.status == VersionStatus.ABANDONED.value:
        raise InvalidState(
            f"{record.id} is abandoned: its recipe is negative evidence and stays as it is",
            fix=f"branch a new version from it: branch(parent={record.id!r}, ...)",
            version=record.id,
        )
    if record.id == ws.champion():
        raise InvalidState(
            f"{record.id} is the champion: it is changed only by promotion",
            fix="branch a new version from the champion and commit there",
            version=record.id,
        )


def _check_worktree(ws: Workspace, record: VersionRecord, repo: Any, worktree: Path) -> None:
    """Refuse a worktree that is not this repository's (its .git points elsewhere) or is not on
    the version's branch: the commit would land where the ledger does not look."""
    admin = Path(repo.path).resolve()
    if (
        admin.parent != Path(ws.git.repo.path).resolve() / "worktrees"
        or repo.workdir is None
        or Path(repo.workdir).resolve() != worktree.resolve()
    ):
        raise InvalidState(
            f"the worktree of {record.id} ({record.worktree}) does not belong to this "
            f"repository (its .git points to {admin})",
            fix=f"evotree worktree restore {record.id} in a fresh place",
            version=record.id,
        )
    expected = f"refs/heads/{record.branch}"
    head = None if repo.head_is_unborn else repo.references.get("HEAD")
    if head is None or repo.head_is_detached or head.target != expected:
        raise InvalidState(
            f"the worktree of {record.id} ({record.worktree}) is not on its branch {record.branch}",
            fix=f"git -C {record.worktree} switch {record.branch}",
            version=record.id,
        )


def _stage(repo: Any, tip: Any) -> tuple[Any, Any, list[dict[str, str]]]:
    """The worktree's files staged (ignored ones left out, deleted ones removed): the index, its
    tree, and each changed file against ``tip`` with its status letter."""
    index = repo.index
    index.read()
    index.add_all()
    workdir = Path(repo.workdir)
    for path in [entry.path for entry in index if not os.path.lexists(workdir / entry.path)]:
        index.remove(path)
    tree = index.write_tree()
    diff = repo.diff(repo[tip].tree, repo[tree])
    files = [
        {
            "path": d.delta.new_file.path
            if d.delta.status_char() != "D"
            else d.delta.old_file.path,
            "status": d.delta.status_char(),
        }
        for d in diff
    ]
    return index, tree, files
