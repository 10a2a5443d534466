"""``evotree status``: what runs now, and what each version waits for (a run, a fix, a person).

Read-only and cheap: the ledger, the run records on this machine and ``git status`` of the
versions' worktrees — no gate is evaluated and no statistic computed (``evotree gates V`` does
that). A version "waits for a person" when only a person can move it: promotion is a signed
sign-off at a terminal (``evotree promote V``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.core.ledger import VersionStatus
from evotree.core.refs import branch_ref
from evotree.core.versions import tree_view, version_at
from evotree.core.workspace import Workspace
from evotree.harness.live import progress_of
from evotree.harness.records import RunRecord, RunStatus, list_runs, runs_dir
from evotree.harness.reservations import ForeignReservation, reservation_book

__all__ = ["WorkspaceStatus", "workspace_status"]


@dataclass
class WorkspaceStatus:
    """What ``evotree status`` prints (schema: ``status.schema.json``)."""

    root: str
    champion: str
    champion_headline: dict[str, Any] | None
    #: the version whose worktree the command was started in (None: elsewhere)
    here: str | None
    #: runs running now on this machine: run_id, version, seed, started_at
    running: list[dict[str, Any]] = field(default_factory=list)
    #: runs reserved in the ledger and not finished that count here: this workspace's, a live
    #: process's on this host, or a listed runner's
    #: (:func:`evotree.harness.reservations.reservation_book`, the budgets' rule)
    reserved: int = 0
    #: reservations in the ledger that count for nothing here (a remote's, unsigned, an unlisted
    #: runner key, expired, malformed): run_id, version, seed, host, at, why
    foreign_reservations: list[ForeignReservation] = field(default_factory=list)
    #: one row per version not abandoned: id, status, state, next, waits_for (agent / person / nothing)
    versions: list[dict[str, Any]] = field(default_factory=list)
    #: what waits for a person, one line each (promotions to decide)
    for_a_person: list[str] = field(default_factory=list)
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _runs_by_version(ws: Workspace) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for record in list_runs(ws):
        out.setdefault(record.version, []).append(record)
    return out


def _tip(ws: Workspace, version: str) -> str | None:
    target = ws.git.ref_target(branch_ref(version))
    return str(target) if target is not None else None


def workspace_status(ws: Workspace, *, here: str | Path | None = None) -> WorkspaceStatus:
    """The workspace's state for a person or an agent: running runs and each version's next step."""
    view = tree_view(ws)
    champion = next((v for v in view.versions if v.champion), None)
    runs = _runs_by_version(ws)
    status = WorkspaceStatus(
        root=str(ws.root),
        champion=view.champion,
        champion_headline=champion.headline if champion else None,
        here=version_at(ws, here) if here is not None else None,
    )
    try:
        book = reservation_book(ws, ws.ledger.meta())
    except EvotreeError:
        book = None
    if book is not None:  # the budgets' rule: a remote's are shown apart, never counted
        status.reserved = len(book.counted)
        status.foreign_reservations = book.foreign_rows()
    status.running = _running(ws, runs)
    running_versions = {r["version"] for r in status.running}
    for v in view.versions:
        if v.status == VersionStatus.ABANDONED.value:
            continue
        row, ask = _version_row(ws, v, runs.get(v.id, []), running=v.id in running_versions)
        if ask is not None:
            status.for_a_person.append(ask)
        status.versions.append(row)
    return status


def _running(ws: Workspace, runs: dict[str, list[RunRecord]]) -> list[dict[str, Any]]:
    """The running runs, each with its progress (step, rate, ETA)."""
    base = runs_dir(ws)
    return [
        {
            "run_id": r.run_id,
            "version": r.version,
            "seed": r.seed,
            "started_at": r.started_at,
            "progress": progress_of(
                base / r.run_id,
                started_at=r.started_at,
                max_steps=(r.limits or {}).get("max_steps"),
            ).to_dict(),
        }
        for records in runs.values()
        for r in records
        if r.status == RunStatus.RUNNING.value
    ]


def _version_row(
    ws: Workspace, v: Any, runs: list[RunRecord], *, running: bool
) -> tuple[dict[str, Any], str | None]:
    """A version's row (its runs, worktree and next step) and, when a person must decide
    something about it, the line saying what."""
    mine = [r for r in runs if r.status != RunStatus.INGESTED.value]
    scored = [r for r in mine if r.status == RunStatus.SUCCEEDED.value and r.headline]
    broken = [
        r
        for r in mine
        if r.status in (RunStatus.FAILED.value, RunStatus.INVALID.value, RunStatus.CRASHED.value)
    ]
    dirty: list[str] = []
    if v.worktree and ws.absolute(v.worktree).is_dir():
        try:
            dirty = ws.git.status_porcelain(ws.absolute(v.worktree))
        except EvotreeError:
            dirty = []
    row: dict[str, Any] = {
        "id": v.id,
        "status": v.status,
        "champion": v.champion,
        "runs": len(mine),
        "scored_runs": len(scored),
        "failed_runs": len(broken),
        "uncommitted": len(dirty),
        "headline": v.headline,
        "worktree": v.worktree,
    }
    if running:
        row.update(
            state="running",
            next=f"wait for its runs (evotree runs --version {v.id})",
            waits_for="runs",
        )
    elif dirty:
        row.update(
            state="uncommitted changes",
            next=f"commit them in {v.worktree} (evotree runs only committed trees)",
            waits_for="agent",
        )
    else:
        return row, _next_step(ws, v, row, mine, scored, broken)
    return row, None


def _next_step(
    ws: Workspace,
    v: Any,
    row: dict[str, Any],
    mine: list[RunRecord],
    scored: list[RunRecord],
    broken: list[RunRecord],
) -> str | None:
    """Fill the next step of a version that is neither running nor uncommitted (``row``'s
    state, next and waits_for); return the person's line when it waits for one."""
    if v.champion and not scored:
        row.update(
            state="champion without a score",
            next=f"evotree run {v.id} --seeds 3",
            waits_for="agent",
        )
    elif v.champion:
        row.update(
            state="champion",
            next='branch a new version: evotree branch -m "hypothesis"',
            waits_for="nothing",
        )
    elif not mine:
        row.update(state="not run yet", next=f"evotree run {v.id} --seeds 3", waits_for="agent")
    elif not scored:
        last = broken[-1] if broken else mine[-1]
        row.update(
            state=f"no scored run ({last.status})",
            next=f"evotree logs {last.run_id}",
            waits_for="agent",
        )
    elif _tip(ws, v.id) not in {r.commit for r in scored}:
        row.update(
            state="changed since its scored runs",
            next=f"evotree run {v.id} --seeds 3",
            waits_for="agent",
        )
    else:
        row.update(
            state="scored",
            next=f"evotree gates {v.id}, then a person: evotree promote {v.id}",
            waits_for="person",
        )
        return (
            f"{v.id}: decide its promotion (evotree gates {v.id}; evotree promote "
            f"{v.id} at a terminal, signed)"
        )
    return None
