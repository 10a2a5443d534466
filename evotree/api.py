"""The Python API: what the CLI does, for notebooks and scripts, returning the same dataclasses.

``import evotree`` exposes these names lazily (importing ``evotree`` stays cheap)::

    import evotree
    ws = evotree.open("path/to/repo")            # or evotree.init("path", domain="gym")
    v1 = evotree.branch(ws, "filter dead groups")
    records = evotree.run(ws, ["v0", v1.id], seeds=3)
    result = evotree.compare(ws, "v0", v1.id)
    df = evotree.query_df(ws, "SELECT version, avg(score) FROM evals GROUP BY ALL")

Each function is the library call behind one CLI command, with the same checks in front of it:
:func:`run` goes through the train gate, :func:`diagnose` uses the signed harness in force,
:func:`open` marks runs whose driving process died as crashed (as every CLI command does).
Errors are :class:`evotree.core.errors.EvotreeError` subclasses with ``message``, ``fix`` and
``exit_code``. Promotion and run approval are not here: they need a person at a terminal
(``evotree promote``, ``evotree approve-run``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotree.core.versions import (
    PruneResult,
    TreeView,
    VersionDetail,
    abandon_version,
    create_version,
    log_entries,
    merge_versions,
    prune_worktrees,
    restore_worktree,
    show_version,
    tree_view,
)
from evotree.core.workspace import InitResult, Workspace, init_workspace

if TYPE_CHECKING:
    from evotree.core.ledger import VersionRecord
    from evotree.diagnostics.compare import VersionComparison
    from evotree.diagnostics.diagnose import DiagnoseResult
    from evotree.gates.evidence import GateReport
    from evotree.harness.runs import ProgressFn, RunRecord

__all__ = [
    "InitResult",
    "PruneResult",
    "TreeView",
    "VersionDetail",
    "Workspace",
    "abandon",
    "branch",
    "compare",
    "diagnose",
    "gates",
    "init",
    "log",
    "merge",
    "open",
    "prune_worktrees",
    "query",
    "query_df",
    "restore_worktree",
    "run",
    "runs",
    "show",
    "tree",
]

PathLike = str | os.PathLike[str]


def open(path: PathLike = ".") -> Workspace:  # noqa: A001 - the verb users expect: evotree.open(path)
    """Open the workspace containing ``path``; runs whose process died are marked crashed first."""
    from evotree.harness.runs import recover_crashed_runs

    ws = Workspace.open(path)
    recover_crashed_runs(ws)
    return ws


def init(path: PathLike = ".", *, domain: str = "custom", signers: Sequence[str] = ()) -> InitResult:
    """``evotree init``: turn the git repository at ``path`` into a workspace (v0 = HEAD = champion).

    ``signers``: ``[EMAIL=]KEY.pub`` of the people who may sign promotions, written to v0's
    ``gates/allowed_signers`` (a solo researcher can promote from the start).
    """
    from evotree.domains import domain_template

    return init_workspace(path, domain=domain, template=domain_template(domain), signers=signers)


def branch(ws: Workspace, hypothesis: str, *, parent: str = "champion", name: str | None = None,
           worktree: PathLike | None = None, skills: dict[str, dict[str, Any]] | None = None) -> VersionRecord:
    """``evotree branch``: a new version from ``parent`` with its own branch and worktree.

    ``skills`` maps skill names to parameters (``{"StdGroupFilter": {"min_std": 0.1}}``); each is
    checked before anything is created, then recorded in the version's ``skills.toml``.
    """
    if skills:
        from evotree.skills.recipe import branch_with_skills

        requested = [(skill, dict(params or {})) for skill, params in skills.items()]
        return branch_with_skills(ws, hypothesis=hypothesis, parent=parent, name=name, worktree=worktree,
                                  requested=requested)
    return create_version(ws, hypothesis=hypothesis, parent=parent, name=name, worktree=worktree)


def merge(ws: Workspace, first: str, second: str, *, message: str, name: str | None = None,
          worktree: PathLike | None = None) -> VersionRecord:
    """``evotree merge``: a version with two parents."""
    return merge_versions(ws, first, second, message=message, name=name, worktree=worktree)


def abandon(ws: Workspace, version: str, *, reason: str, force: bool = False) -> VersionRecord:
    """``evotree abandon``: keep the branch as negative evidence, remove the worktree."""
    return abandon_version(ws, version, reason=reason, force=force)


def tree(ws: Workspace) -> TreeView:
    """``evotree tree``: every version, its parent(s), status and headline score."""
    return tree_view(ws)


def show(ws: Workspace, version: str) -> VersionDetail:
    """``evotree show``: one version in detail."""
    return show_version(ws, version)


def log(ws: Workspace, *, version: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """``evotree log``: ledger events, newest first."""
    return log_entries(ws, version=version, limit=limit)


def run(ws: Workspace, versions: list[str] | str, *, seeds: int = 1, seed_start: int = 0,
        jobs: int | None = None, heldout: bool = False, executor: str | None = None,
        address: str | None = None, progress: ProgressFn | None = None) -> list[RunRecord]:
    """``evotree run``: train and judge ``versions`` × ``seeds`` (the train gate in front)."""
    from evotree.gates.runs import run_versions

    names = [versions] if isinstance(versions, str) else list(versions)
    return run_versions(ws, names, seeds=seeds, seed_start=seed_start, jobs=jobs, heldout=heldout,
                        executor=executor, address=address, progress=progress)


def runs(ws: Workspace, *, version: str | None = None) -> list[RunRecord]:
    """``evotree runs``: run records on this machine, oldest first."""
    from evotree.harness.runs import list_runs

    return list_runs(ws, version=version)


def compare(ws: Workspace, a: str, b: str, *, split: str = "validation", intersect: bool = False,
            B: int | None = None, seed: int = 0) -> VersionComparison:  # noqa: N803 - B as in the papers
    """``evotree compare``: Δ = b − a on the common task pool, with its CI, p-value and decision."""
    import evotree.gates  # noqa: F401 - validates signed run voids for the evidence check
    from evotree.diagnostics.compare import compare as compare_versions

    return compare_versions(ws, a, b, split=split, intersect=intersect, B=B, seed=seed)


def diagnose(ws: Workspace, version: str, *, layers: list[str] | None = None,
             record: bool = True) -> DiagnoseResult:
    """``evotree diagnose``: score / signal / behavior / version findings, by the signed harness."""
    from evotree.diagnostics.diagnose import diagnose as diagnose_version
    from evotree.gates.harnesses import active_harness

    return diagnose_version(ws, version, harness=active_harness(ws), layers=layers, record=record)


def gates(ws: Workspace, version: str, *, B: int | None = None) -> GateReport:  # noqa: N803
    """``evotree gates``: every promotion gate for ``version``, without promoting."""
    from evotree.gates.evidence import evaluate_gates

    return evaluate_gates(ws, version, B=B)


def _evidence_dirs(ws: Workspace) -> tuple[Path, Path]:
    from evotree.harness.runs import runs_dir

    return runs_dir(ws), ws.state_dir / "findings"


def query(ws: Workspace, sql: str) -> Any:
    """``evotree sql``: DuckDB SQL over the evidence views, as a ``pyarrow.Table``.

    Views: ``runs``, ``signals``, ``rollouts``, ``evals``, ``findings``.
    """
    from evotree.harness.query import query as query_runs

    runs, findings = _evidence_dirs(ws)
    return query_runs(runs, sql, findings_dir=findings)


def query_df(ws: Workspace, sql: str) -> Any:
    """:func:`query` as a ``pandas.DataFrame`` (needs pandas: ``pip install 'evotree-rl[data]'``)."""
    from evotree.harness.query import query_df as query_runs_df

    runs, findings = _evidence_dirs(ws)
    return query_runs_df(runs, sql, findings_dir=findings)
