"""The agent's verbs as plain functions: library calls in, the CLI's ``--json`` documents out.

Each function opens the workspace afresh (a pygit2 repository is not shared between threads,
and the champion's configuration is read as it is now), calls the same library function as
the command of the same name, and returns what ``evotree CMD --json`` prints: the same
``to_dict()``, the same schema (``evotree schema NAME``). The MCP layer
(:mod:`evotree.server.tools`) only turns them into tools; nothing here knows about MCP.

Writes are made for the server's principal (:class:`Principal`, ``evotree serve --as NAME``):
a version created here records it as ``created_by``; :func:`pin_principal` makes it the git
identity of everything else the server process writes. Promotion, run approval, harness
promotion, the judge and the policy have no verb here, by design.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, MutableMapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.errors import EvotreeError, InvalidState
from evotree.core.text import escape_control

if TYPE_CHECKING:
    from evotree.core.gitio import Identity
    from evotree.core.workspace import Workspace

__all__ = ["Encoded", "Principal", "PrincipalError", "UnknownRun", "Verbs", "pin_principal"]

#: ``-c`` settings pinned for every git subprocess of the server (GIT_CONFIG_COUNT, see
#: :func:`pin_principal`): no hook and no fsmonitor program configured in the repository runs.
GIT_PINNED_CONFIG = (("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false"))


class UnknownRun(EvotreeError):
    """No run with that id on this machine (a bad argument: exit 2)."""

    exit_code = 2
    code = "unknown_run"


class PrincipalError(EvotreeError):
    """``--as NAME`` is not a usable principal."""

    exit_code = 2
    code = "bad_principal"


_EMAIL_FORM = re.compile(r"^\s*([^<>]*?)\s*<([^<>\s]+)>\s*$")


@dataclass(frozen=True)
class Principal:
    """Whom the server acts for: ``name`` and ``email`` as git records them.

    ``alice`` -> ``alice <alice>``; ``alice@example.org`` -> ``alice <alice@example.org>``;
    ``Alice Liddell <alice@example.org>`` as given. The email part is what sign-off compares
    (a version's creator cannot approve it), so use the same address as the person's
    allowed-signers line when the agent acts for a person.
    """

    name: str
    email: str

    @classmethod
    def parse(cls, text: str) -> Principal:
        raw = (text or "").strip()
        if not raw:
            raise PrincipalError("--as needs a name: the principal the server acts for",
                                 fix="evotree serve --as alice (or --as 'Alice <alice@example.org>')")
        if len(raw) > 200 or not raw.isprintable():
            raise PrincipalError(f"--as {escape_control(raw[:80])!r} is not a usable name "
                                 "(control characters or longer than 200 characters)",
                                 fix="use a plain name or 'Name <email>'")
        match = _EMAIL_FORM.match(raw)
        if match:
            name, email = match.group(1) or match.group(2).split("@")[0], match.group(2)
        elif "<" in raw or ">" in raw:
            raise PrincipalError(f"--as {raw!r}: expected NAME or 'Name <email>'",
                                 fix="evotree serve --as 'Alice <alice@example.org>'")
        elif "@" in raw and " " not in raw:
            name, email = raw.split("@")[0], raw
        else:
            name, email = raw, raw
        return cls(name=name, email=email)

    def identity(self) -> Identity:
        from evotree.core.gitio import Identity

        return Identity(self.name, self.email)

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


def pin_principal(principal: Principal, environ: MutableMapping[str, str] | None = None) -> None:
    """Make ``principal`` the git identity of this process and pin git's code-running settings.

    Sets ``GIT_AUTHOR_*`` / ``GIT_COMMITTER_*`` (what :meth:`evotree.core.gitio.Git.identity`
    and git read first), overriding whatever the agent's environment had, so every event the
    server writes (runs, findings, memory, audits) names the principal. Drops the variables that
    would point git elsewhere or configure it from the environment (``GIT_DIR``,
    ``GIT_WORK_TREE``, ``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS``, ``GIT_CONFIG_COUNT`` and its
    keys), then sets ``core.hooksPath=/dev/null`` and ``core.fsmonitor=false`` as command-line
    settings (``GIT_CONFIG_COUNT``) for every git subprocess, above the repository's config.
    """
    env = os.environ if environ is None else environ
    for key in [k for k in env if k.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
        del env[key]
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"):
        env.pop(key, None)
    env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = principal.name
    env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = principal.email
    for i, (key, value) in enumerate(GIT_PINNED_CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    env["GIT_CONFIG_COUNT"] = str(len(GIT_PINNED_CONFIG))


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


def _refuse_if_hidden(ws: Workspace, command: str) -> None:
    from evotree.core.visibility import refuse_if_hidden

    refuse_if_hidden(ws, command)


def _runs(records: list[Any]) -> dict[str, Any]:
    """``{"v": 1, "runs": [...]}``: what ``evotree run|runs --json`` prints."""
    return {"v": 1, "runs": [r.to_dict() for r in records]}


class Verbs:
    """The agent's verbs over the workspace at ``root``, acting for ``principal``."""

    def __init__(self, root: str | os.PathLike[str], principal: Principal,
                 worktree_dir: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root)
        self.principal = principal
        #: where ``branch`` puts new worktrees (``evotree agent``'s session folder); None: the configured one
        self.worktree_dir = Path(worktree_dir) if worktree_dir is not None else None
        self._state = _LedgerState()
        self._state_lock = threading.Lock()

    # ------------------------------------------------------------------ the workspace
    def open(self) -> Workspace:
        """The workspace, opened afresh; runs whose driving process died are marked crashed first
        (as every CLI command does; this server's own runs hold their flock and are left alone)."""
        from evotree.core.workspace import Workspace

        ws = Workspace.open(self.root)
        active = ws.absolute(ws.config.workspace.runs_dir) / ".active"
        if active.is_dir() and any(active.iterdir()):
            from evotree.harness.runs import recover_crashed_runs

            recover_crashed_runs(ws)
        return ws

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
        from evotree.core.refs import LEDGER_REF
        from evotree.core.versions import tree_view

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
            state = _LedgerState(head=before, tree=tree, views={v["id"]: v for v in tree.data["versions"]},
                                 events=events, by_version=by_version)
            if head() == before:
                self._state = state
            return state

    def tree_encoded(self) -> Encoded:
        """``tree`` as encoded once per ledger head."""
        state = self.ledger_state(self.open())
        assert state.tree is not None
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

        from evotree.core.refs import branch_ref

        ws = self.open()
        record = ws.resolve(version)
        own = record.created_by == str(self.principal.identity())
        state = self.ledger_state(ws)
        view = state.views.get(record.id)
        if view is None:  # created after the state was read: the library's own view
            from evotree.core.versions import show_version

            shown = show_version(ws, version).to_dict()
            if not own:
                shown["uncommitted"] = []
            return shown
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
                commits.append({"commit": str(commit.id),
                                "summary": commit.message.splitlines()[0] if commit.message else "",
                                "author": f"{commit.author.name} <{commit.author.email}>"})
        exists = bool(record.worktree) and ws.absolute(record.worktree or "").exists()
        uncommitted = ws.git.status_porcelain(ws.absolute(record.worktree or "")) if exists and own else []
        return {"version": view, "tip": str(tip) if tip is not None else None, "commits": commits,
                "worktree_exists": exists, "uncommitted": uncommitted,
                "events": state.by_version.get(record.id, []), "v": 1}

    def log(self, version: str | None = None, limit: int | None = None) -> dict[str, Any]:
        ws = self.open()
        if version is not None:
            version = ws.resolve(version).id
        state = self.ledger_state(ws)
        events = state.events if version is None else state.by_version.get(version, [])
        return {"v": 1, "events": events if limit is None else events[:limit]}

    def branch(self, hypothesis: str, parent: str = "champion", name: str | None = None,
               skills: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        """``evotree branch``: created by the principal; with ``skills``, each is checked before
        anything is created, then applied (as ``evotree branch --skill``)."""
        from evotree.core.versions import create_version

        ws = self.open()
        creator = self.principal.identity()
        if not skills:
            return create_version(ws, hypothesis=hypothesis, parent=parent, name=name, creator=creator,
                                  worktree_parent=self.worktree_dir).to_dict()
        from evotree.core.versions import abandon_version
        from evotree.skills import get_skill, parse_params
        from evotree.skills.recipe import apply_skill, check_applicable

        domain = ws.config.workspace.domain
        for skill_name, params in skills.items():
            info = get_skill(skill_name)
            check_applicable(info, domain, parse_params(info, dict(params or {})))
        record = create_version(ws, hypothesis=hypothesis, parent=parent, name=name, creator=creator,
                                worktree_parent=self.worktree_dir)
        try:
            for skill_name, params in skills.items():
                apply_skill(ws, record.id, skill_name, dict(params or {}))
        except BaseException as exc:
            reason = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            try:
                abandon_version(ws, record.id, reason=f"branch with skills failed: {reason}", force=True)
            except Exception:  # noqa: BLE001, S110 - the original error is the one to report
                pass
            raise
        return ws.resolve(record.id).to_dict()

    def commit(self, version: str, message: str) -> dict[str, Any]:
        """Snapshot the files of ``version``'s worktree into a commit on its branch.

        libgit2 builds the index, tree and commit in this process: no git program runs, so no
        hook, fsmonitor, filter driver or other program named in the repository's configuration
        can run either (the agent can write that configuration). Ignored files stay out
        (``.gitignore``); deleted files are removed. The branch moves by compare-and-swap from the
        tip the worktree is on. Refused: the champion, an abandoned version, a version without a
        worktree or whose worktree is not on its branch, an empty message.
        """
        import pygit2

        from evotree.core.gitio import RefRaceLost
        from evotree.core.ledger import VersionStatus
        from evotree.core.refs import branch_ref

        ws = self.open()
        record = ws.resolve(version)
        text = (message or "").strip()
        if not text:
            raise InvalidState("the commit message is empty", fix="say what the change is and why")
        if record.status == VersionStatus.ABANDONED.value:
            raise InvalidState(f"{record.id} is abandoned: its recipe is negative evidence and stays as it is",
                               fix=f"branch a new version from it: branch(parent={record.id!r}, ...)",
                               version=record.id)
        if record.id == ws.champion():
            raise InvalidState(f"{record.id} is the champion: it is changed only by promotion",
                               fix="branch a new version from the champion and commit there", version=record.id)
        worktree = ws.absolute(record.worktree) if record.worktree else None
        if worktree is None or not worktree.is_dir():
            raise InvalidState(f"{record.id} has no worktree to commit from",
                               fix=f"evotree worktree restore {record.id}", version=record.id)
        repo = pygit2.Repository(str(worktree))
        admin = Path(repo.path).resolve()
        if admin.parent != Path(ws.git.repo.path).resolve() / "worktrees" or repo.workdir is None \
                or Path(repo.workdir).resolve() != worktree.resolve():
            raise InvalidState(f"the worktree of {record.id} ({record.worktree}) does not belong to this "
                               f"repository (its .git points to {admin})",
                               fix=f"evotree worktree restore {record.id} in a fresh place", version=record.id)
        expected = f"refs/heads/{record.branch}"
        head = None if repo.head_is_unborn else repo.references.get("HEAD")
        if head is None or repo.head_is_detached or head.target != expected:
            raise InvalidState(f"the worktree of {record.id} ({record.worktree}) is not on its branch {record.branch}",
                               fix=f"git -C {record.worktree} switch {record.branch}", version=record.id)
        tip = repo.head.target
        index = repo.index
        index.read()
        index.add_all()
        workdir = Path(repo.workdir)
        gone = [entry.path for entry in index if not os.path.lexists(workdir / entry.path)]
        for path in gone:
            index.remove(path)
        tree = index.write_tree()
        previous = repo[tip]
        diff = repo.diff(previous.tree, repo[tree])
        files = [{"path": d.delta.new_file.path if d.delta.status_char() != "D" else d.delta.old_file.path,
                  "status": d.delta.status_char()} for d in diff]
        result = {"v": 1, "version": record.id, "branch": record.branch, "worktree": record.worktree,
                  "previous_commit": str(tip), "files": files}
        if tree == previous.tree_id:
            return {**result, "changed": False, "commit": str(tip)}
        signature = self.principal.identity().signature()
        commit = repo.create_commit(None, signature, signature, text + "\n", tree, [tip])
        try:
            ws.git.cas_ref(branch_ref(record.id), commit, tip, f"evotree serve: commit on {record.id}")
        except RefRaceLost:
            raise InvalidState(f"the branch of {record.id} moved while committing",
                               fix="retry: the new tip is in show()", version=record.id) from None
        index.write()  # the worktree's index now matches the new tip: `git status` is clean
        return {**result, "changed": True, "commit": str(commit)}

    # ------------------------------------------------------------------ runs
    def run(self, versions: list[str], seeds: int = 1, seed_start: int = 0, jobs: int | None = None,
            heldout: bool = False, progress: Callable[[str, str, dict[str, Any]], None] | None = None,
            cancel: threading.Event | None = None) -> dict[str, Any]:
        """``evotree run``: the same path as the CLI — the runs are reserved in the ledger (budgets
        and the train gate's approval decided in that compare-and-swap, so concurrent calls and
        processes share them), the server's process owns the reservations (a killed server's
        are released by the next planner or crash recovery)."""
        from evotree.gates.runs import run_versions

        records = run_versions(self.open(), list(versions), seeds=seeds, seed_start=seed_start, jobs=jobs,
                               heldout=heldout, progress=progress, cancel=cancel)
        return _runs(records)

    def runs(self, version: str | None = None, run_id: str | None = None) -> dict[str, Any]:
        from evotree.harness.runs import list_runs

        records = list_runs(self.open(), version=version)
        if run_id is not None:
            records = [r for r in records if r.run_id == run_id]
            if not records:
                raise UnknownRun(f"no run {run_id!r} on this machine",
                                 fix="runs() lists the runs recorded here (run ids look like r-...)", run_id=run_id)
        return _runs(records)

    # ------------------------------------------------------------------ analysis
    def compare(self, a: str, b: str, split: str = "validation", intersect: bool = False,
                bootstrap: int | None = None, seed: int = 0, look: int | None = None,
                max_looks: int | None = None) -> dict[str, Any]:
        import evotree.gates  # noqa: F401 - validates signed run voids for the evidence check
        from evotree.diagnostics.compare import compare as compare_fn

        ws = self.open()
        _refuse_if_hidden(ws, "compare")
        return compare_fn(ws, a, b, split=split, intersect=intersect, B=bootstrap, seed=seed,
                          look=look, max_looks=max_looks).to_dict()

    def diagnose(self, version: str, layers: list[str] | None = None) -> dict[str, Any]:
        from evotree.diagnostics.diagnose import diagnose as diagnose_fn
        from evotree.gates.harnesses import active_harness

        ws = self.open()
        return diagnose_fn(ws, version, harness=active_harness(ws), layers=list(layers) if layers else None).to_dict()

    def suggest(self, version: str) -> dict[str, Any]:
        from evotree.memory.suggest import suggest as make_suggestions

        return make_suggestions(self.open(), version).to_dict()

    def audit(self, version: str, hidden_paths: list[str] | None = None) -> dict[str, Any]:
        """``evotree audit V --json``: the report whether or not it passed (``passed``; the CLI
        exits 28 when it did not)."""
        from evotree.harness.audit.version import audit_version

        return audit_version(self.open(), version, hidden_paths=tuple(hidden_paths or ())).to_dict()

    def gates(self, version: str, bootstrap: int | None = None) -> dict[str, Any]:
        from evotree.gates.evidence import evaluate_gates

        ws = self.open()
        _refuse_if_hidden(ws, "gates")
        return evaluate_gates(ws, version, B=bootstrap).to_dict()

    def report(self, version: str, against: str = "champion", split: str = "validation",
               audit: bool = True) -> dict[str, Any]:
        """``evotree report V --format json``: the report document (schema ``report``); no file."""
        from evotree.report.collect import build_report

        ws = self.open()
        _refuse_if_hidden(ws, "report")
        return build_report(ws, version, against=against, split=split, run_audit=audit).to_dict()

    def sql(self, query: str, max_rows: int = 1000) -> dict[str, Any]:
        """``evotree sql --json`` (read-only: one SELECT over the evidence views), at most
        ``max_rows`` rows (``truncated`` says when there were more)."""
        from evotree.harness.query import query as query_runs
        from evotree.harness.runs import runs_dir

        from evotree.core.visibility import hidden

        ws = self.open()
        table = query_runs(runs_dir(ws), query, findings_dir=ws.state_dir / "findings", hide_judge=hidden(ws))
        total = table.num_rows
        rows = table.slice(0, max_rows).to_pylist()
        return {"v": 1, "columns": table.column_names, "rows": rows, "limit": max_rows,
                "row_count": total, "truncated": total > max_rows}

    # ------------------------------------------------------------------ skills and memory
    def _domain(self) -> str | None:
        try:
            return self.open().config.workspace.domain
        except EvotreeError:
            return None

    @staticmethod
    def _skill_data(info: Any, domain: str | None) -> dict[str, Any]:
        data = info.to_dict()
        data["applies"] = None if domain is None else info.why_not(domain) is None
        data["why_not"] = None if domain is None else info.why_not(domain)
        return data

    def skill_list(self) -> dict[str, Any]:
        from evotree.skills import list_skills

        domain = self._domain()
        return {"v": 1, "domain": domain, "skills": [self._skill_data(i, domain) for i in list_skills()]}

    def skill_show(self, name: str) -> dict[str, Any]:
        from evotree.skills import get_skill

        info = get_skill(name)
        return {"v": 1, **self._skill_data(info, self._domain())}

    def memory_search(self, query: str, kind: str | None = None, limit: int = 20) -> dict[str, Any]:
        from evotree.memory.query import search

        hits = search(self.open(), query, limit=limit, kind=kind)
        return {"v": 1, "query": query, "hits": [h.to_dict() for h in hits]}

    def spend_record(self, usd: float, note: str, tokens: int | None = None,
                     version: str | None = None) -> dict[str, Any]:
        """``evotree spend record --json``: agent/API spend, recorded for this server's principal."""
        from evotree.harness.money import record_spend

        return record_spend(self.open(), usd, note, tokens=tokens, version=version,
                            actor=self.principal.identity()).to_dict()

    def memory_add(self, text: str, kind: str = "lesson", version: str | None = None, skill: str | None = None,
                   evidence: dict[str, str] | None = None, tags: list[str] | None = None) -> dict[str, Any]:
        from evotree.memory.record import add_entry

        if kind not in ("lesson", "negative_evidence"):
            from evotree.memory.model import InvalidMemory

            raise InvalidMemory(f"kind {kind!r} cannot be added by hand: lesson or negative_evidence",
                                fix="skill verifications and incidents are recorded by promotions and audits")
        return add_entry(self.open(), text, kind=kind, version=version, skill=skill,
                         evidence={str(k): str(v) for k, v in (evidence or {}).items()},
                         tags=list(tags or [])).to_dict()

