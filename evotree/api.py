"""The Python API: what the CLI does, for notebooks and scripts, returning the same dataclasses.

``import evotree`` exposes these names lazily (importing ``evotree`` stays cheap)::

    import evotree
    ws = evotree.open("path/to/repo")            # or evotree.init("path", domain="gym")
    v1 = evotree.branch(ws, "filter dead groups")
    records = evotree.run(ws, ["v0", v1.id], seeds=3)
    result = evotree.compare(ws, "v0", v1.id)
    df = evotree.query_df(ws, "SELECT version, avg(score) FROM evals GROUP BY ALL")

Each function calls the verb behind one CLI command (:mod:`evotree.verbs`), acting for the person
running the script: the same trust root (acting verbs refuse an unsigned champion), the same
visibility rule (``compare``/``gates`` refused and figures redacted while hidden), the same gates
in front of :func:`run`; :func:`open` marks runs whose driving process died as crashed.
Errors are :class:`evotree.core.errors.EvotreeError` subclasses with ``message``, ``fix`` and
``exit_code``. Promotion and run approval are not here: they need a person at a terminal
(``evotree promote``, ``evotree approve-run``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evotree.core.versions import (
    PruneResult,
    TreeView,
    VersionDetail,
    prune_worktrees,
    restore_worktree,
)
from evotree.core.workspace import InitResult, Workspace, init_workspace
from evotree.verbs import Session, open_workspace
from evotree.domains import domain_template

if TYPE_CHECKING:
    from evotree.core.ledger import VersionRecord
    from evotree.diagnostics.compare import VersionComparison
    from evotree.diagnostics.diagnose import DiagnoseResult
    from evotree.gates.evaluation import GateReport
    from evotree.harness.records import ProgressFn, RunRecord

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
    return open_workspace(path)


def _session(ws: Workspace) -> Session:
    """The verb layer for the person running this script (the workspace's owner)."""
    return Session(ws.root)


def init(
    path: PathLike = ".", *, domain: str = "custom", signers: Sequence[str] = ()
) -> InitResult:
    """``evotree init``: turn the git repository at ``path`` into a workspace (v0 = HEAD = champion).

    ``signers``: ``[EMAIL=]KEY.pub`` of the people who may sign promotions, written to v0's
    ``gates/allowed_signers`` (a solo researcher can promote from the start).
    """

    return init_workspace(path, domain=domain, template=domain_template(domain), signers=signers)


def branch(
    ws: Workspace,
    hypothesis: str,
    *,
    parent: str = "champion",
    name: str | None = None,
    worktree: PathLike | None = None,
    skills: dict[str, dict[str, Any]] | None = None,
) -> VersionRecord:
    """``evotree branch``: a new version from ``parent`` with its own branch and worktree.

    ``skills`` maps skill names to parameters (``{"StdGroupFilter": {"min_std": 0.1}}``); each is
    checked before anything is created, then recorded in the version's ``skills.toml``.
    """
    return _session(ws).branch(
        hypothesis, parent=parent, name=name, worktree=worktree, skills=skills
    )


def merge(
    ws: Workspace,
    first: str,
    second: str,
    *,
    message: str,
    name: str | None = None,
    worktree: PathLike | None = None,
) -> VersionRecord:
    """``evotree merge``: a version with two parents."""
    return _session(ws).merge(first, second, message=message, name=name, worktree=worktree)


def abandon(ws: Workspace, version: str, *, reason: str, force: bool = False) -> VersionRecord:
    """``evotree abandon``: keep the branch as negative evidence, remove the worktree."""
    return _session(ws).abandon(version, reason=reason, force=force)


def tree(ws: Workspace) -> TreeView:
    """``evotree tree``: every version, its parent(s), status and headline score."""
    return _session(ws).tree()


def show(ws: Workspace, version: str) -> VersionDetail:
    """``evotree show``: one version in detail."""
    return _session(ws).show(version)


def log(
    ws: Workspace, *, version: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """``evotree log``: ledger events, newest first."""
    return _session(ws).log(version, limit)


def run(
    ws: Workspace,
    versions: list[str] | str,
    *,
    seeds: int = 1,
    seed_start: int = 0,
    jobs: int | None = None,
    heldout: bool = False,
    executor: str | None = None,
    address: str | None = None,
    progress: ProgressFn | None = None,
) -> list[RunRecord]:
    """``evotree run``: train and judge ``versions`` × ``seeds`` (the train gate in front)."""
    names = [versions] if isinstance(versions, str) else list(versions)
    return _session(ws).run(
        names,
        seeds=seeds,
        seed_start=seed_start,
        jobs=jobs,
        heldout=heldout,
        executor=executor,
        address=address,
        progress=progress,
    )


def runs(ws: Workspace, *, version: str | None = None) -> list[RunRecord]:
    """``evotree runs``: run records on this machine, oldest first."""
    return _session(ws).runs(version)


def compare(
    ws: Workspace,
    a: str,
    b: str,
    *,
    split: str = "validation",
    intersect: bool = False,
    B: int | None = None,
    seed: int = 0,
) -> VersionComparison:  # noqa: N803 - B as in the papers
    """``evotree compare``: Δ = b − a on the common task pool, with its CI, p-value and decision."""
    return _session(ws).compare(a, b, split=split, intersect=intersect, bootstrap=B, seed=seed)


def diagnose(
    ws: Workspace, version: str, *, layers: list[str] | None = None, record: bool = True
) -> DiagnoseResult:
    """``evotree diagnose``: score / signal / behavior / version findings, by the signed analyzers."""
    return _session(ws).diagnose(version, layers=layers, record=record)


def gates(ws: Workspace, version: str, *, B: int | None = None) -> GateReport:  # noqa: N803
    """``evotree gates``: every promotion gate for ``version``, without promoting."""
    return _session(ws).gates(version, bootstrap=B)


def query(ws: Workspace, sql: str) -> Any:
    """``evotree sql``: DuckDB SQL over the evidence views, as a ``pyarrow.Table`` (the judge's rows
    left out while figures are hidden).

    Views: ``runs``, ``signals``, ``rollouts``, ``evals``, ``findings``.
    """
    return _session(ws).query(sql)


def query_df(ws: Workspace, sql: str) -> Any:
    """:func:`query` as a ``pandas.DataFrame`` (needs pandas: ``pip install 'evotree-rl[data]'``)."""
    return query(ws, sql).to_pandas()
