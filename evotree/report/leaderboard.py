"""A leaderboard over finalized searches: EvoPolicyGym's rank-normalized table.

EvoPolicyGym compares agents (a model with its harness) by the **held-out return** of the policy
each search's finalize selected, rank-normalized per environment, then averaged per capability
category and over the suite, with the number of environments an agent ranks 1st and in the top 2
(the seed article's table: ``agent | harness | Gym/Box2D | MuJoCo | MiniGrid | Robotics/Driving |
Core16 mean | 1st | Top-2``). :func:`leaderboard` computes it from several finalized workspaces.

The rules (docs/protocols/leaderboard.md):

* **Entry**: one finalized workspace gives, for each environment its held-out run judged, the
  raw held-out mean return (the judge's ``heldout/ENV/mean_return`` signal of the ``finalize``
  run). A search finalized as ``no_ok_submit`` or ``heldout_failed`` — or not finalized — has no
  held-out return: it ranks below every agent with one (EvoPolicyGym scores such a run 0) and
  ties with the others without one; the environments it counts for are those of its
  ``gym.toml``.
* **Several searches of one agent on one environment** (repeats): the mean of the held-out
  returns of those that have one; none with one ranks as above. (The table says how many
  searches it read per agent and environment: ``searches``.)
* **Rank-normalized score** of an environment with ``n`` agents: ``(n - rank + 1) / n``; the best
  gets 1, the worst ``1/n``; tied agents share the mean of the scores of the places they span
  (with 4 agents, a first place is 1.0 and a second 0.75: the article's 0.891 is 9 firsts and 7
  seconds over 16). ``1st``: the environments where the agent's place includes 1 (ties at the top
  count for each); ``Top-2``: those where it includes 1 or 2.
* **Category**: Gym/Box2D (classic control and Box2D), MuJoCo, MiniGrid, Robotics/Driving
  (highway-env and Gymnasium-Robotics), from :data:`evotree.domains.gym.catalog.CATALOG`; an
  environment outside it is "Other". A category mean is over the environments of that category
  the agent was ranked on; the overall mean over all of them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evotree.core.errors import UsageError
from evotree.domains.gym.catalog import CATALOG
from evotree.domains.gym.catalog import _family
from evotree.domains.gym import TRAIN_FILE
from evotree.domains.gym.settings import SettingsError
from evotree.domains.gym.settings import load_train_settings
from evotree.core.workspace import Workspace
from evotree.harness.records import RunRecord
from evotree.harness.records import runs_dir

__all__ = [
    "CATEGORIES",
    "SearchEntry",
    "AgentRow",
    "Leaderboard",
    "category_of",
    "load_search",
    "rank_scores",
    "leaderboard",
    "render_markdown",
    "parse_spec",
]

#: The article's four categories, in its column order.
CATEGORIES = ("Gym/Box2D", "MuJoCo", "MiniGrid", "Robotics/Driving")
_BY_FAMILY = {
    "classic": "Gym/Box2D",
    "box2d": "Gym/Box2D",
    "mujoco": "MuJoCo",
    "minigrid": "MiniGrid",
    "highway": "Robotics/Driving",
    "robotics": "Robotics/Driving",
}


def category_of(env_id: str) -> str:
    """The leaderboard category of a Gymnasium id (``Other`` outside the catalog's families)."""

    info = CATALOG.get(env_id)
    family = info.category if info is not None else _family(env_id)[0]
    return _BY_FAMILY.get(family, "Other")


@dataclass(frozen=True)
class SearchEntry:
    """What one finalized workspace contributes: held-out mean return per environment (None: none)."""

    path: str
    agent: str
    harness: str
    status: str  # the finalize event's status, or "not_finalized"
    returns: dict[str, float | None]
    heldout_run: str | None = None
    version: str | None = None


def parse_spec(spec: str) -> tuple[str | None, str | None, str]:
    """``[AGENT[:HARNESS]=]DIR`` -> (agent or None, harness or None, DIR)."""
    if "=" not in spec:
        return None, None, spec
    label, _, directory = spec.partition("=")
    agent, _, harness = label.partition(":")
    if not agent or not directory:
        raise UsageError(
            f"leaderboard: {spec!r} is not [AGENT[:HARNESS]=]DIR", fix="e.g. gpt=runs/acrobot-gpt"
        )
    return agent, harness or None, directory


def _finalize_event(ws: Any) -> dict[str, Any] | None:
    for entry in ws.ledger.entries():
        if entry.event.kind == "finalize":
            return dict(entry.event.data or {})
    return None


def _heldout_returns(run_dir: Path) -> dict[str, float]:
    import duckdb

    path = run_dir / "signals.parquet"
    if not path.exists():
        return {}
    con = duckdb.connect()
    try:
        rows = con.execute(
            "SELECT metric, value FROM read_parquet(?) WHERE phase = 'eval' AND metric LIKE "
            "'heldout/%/mean_return'",
            [str(path)],
        ).fetchall()
    finally:
        con.close()
    out = {}
    for metric, value in rows:
        env_id = str(metric)[len("heldout/") : -len("/mean_return")]
        if isinstance(value, (int, float)) and math.isfinite(value):
            out[env_id] = float(value)
    return out


def _train_envs(root: Path) -> list[str]:

    try:
        return list(load_train_settings(root / TRAIN_FILE).envs)
    except (SettingsError, OSError):
        return []


def load_search(
    directory: Path | str, *, agent: str | None = None, harness: str | None = None
) -> SearchEntry:
    """The held-out returns of the search in ``directory`` (a workspace), by its finalize event.

    Only the ``finalize`` run the event names is read, and only when it is that workspace's own
    record of a judge-only run that succeeded; anything else leaves the environments without a
    held-out return."""

    ws = Workspace.open(Path(directory))
    name = agent or Path(ws.root).name
    event = _finalize_event(ws)
    envs = _train_envs(ws.root)
    if event is None:
        return SearchEntry(
            str(ws.root), name, harness or "", "not_finalized", {e: None for e in envs}
        )
    status = str(event.get("status") or "unknown")
    run = event.get("heldout_run")
    returns: dict[str, float | None] = {e: None for e in envs}
    if (
        status == "finalized"
        and isinstance(run, str)
        and run
        and "/" not in run
        and not run.startswith(".")
    ):
        run_dir = runs_dir(ws) / run
        try:
            record = RunRecord.load(run_dir / "run.json")
        except Exception:  # noqa: BLE001 - an unreadable record gives no return, never a crash
            record = None
        if (
            record is not None
            and record.kind == "finalize"
            and record.status == "succeeded"
            and record.commit == event.get("commit")
        ):
            returns.update(_heldout_returns(run_dir))
    return SearchEntry(
        str(ws.root),
        name,
        harness or "",
        status,
        returns,
        run if isinstance(run, str) else None,
        event.get("version"),
    )


def rank_scores(values: dict[str, float | None]) -> dict[str, tuple[float, float, float]]:
    """Agent -> (rank-normalized score, best place, worst place) on one environment.

    Higher returns rank first; None ranks below every number; ties share the mean of their places'
    scores ``(n - place + 1) / n``."""
    n = len(values)
    order = sorted(values, key=lambda a: (values[a] is None, -(values[a] or 0.0)))
    out: dict[str, tuple[float, float, float]] = {}
    i = 0
    while i < n:
        j = i
        while j + 1 < n and values[order[j + 1]] == values[order[i]]:
            j += 1
        places = range(i + 1, j + 2)
        score = sum((n - p + 1) / n for p in places) / len(places)
        for a in order[i : j + 1]:
            out[a] = (score, float(i + 1), float(j + 1))
        i = j + 1
    return out


@dataclass
class AgentRow:
    """One row of the table."""

    agent: str
    harness: str
    categories: dict[str, float | None]
    mean: float | None
    first: int
    top2: int
    envs: int
    scores: dict[str, float] = field(default_factory=dict)
    returns: dict[str, float | None] = field(default_factory=dict)


@dataclass
class Leaderboard:
    """The table, its environments and the searches read."""

    rows: list[AgentRow]
    envs: list[str]
    categories: list[str]
    searches: list[SearchEntry]
    rule: str = (
        "rank-normalized held-out mean return per environment: (n - place + 1) / n, ties share; "
        "category and overall means of those; 1st / Top-2: environments placed 1st / in the top 2"
    )

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "rule": self.rule,
            "envs": self.envs,
            "categories": self.categories,
            "rows": [asdict(r) for r in self.rows],
            "searches": [asdict(s) for s in self.searches],
        }


def leaderboard(entries: Iterable[SearchEntry]) -> Leaderboard:
    """The rank-normalized table over ``entries`` (several may be of one agent and environment)."""
    entries = list(entries)
    if not entries:
        raise UsageError("leaderboard: no searches given", fix="evotree leaderboard DIR DIR …")
    key = lambda e: (e.agent, e.harness)  # noqa: E731
    agents: dict[tuple[str, str], None] = {}
    pooled: dict[str, dict[tuple[str, str], list[float | None]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for e in entries:
        agents.setdefault(key(e), None)
        for env_id, value in e.returns.items():
            pooled[env_id][key(e)].append(value)
    envs = sorted(pooled, key=lambda env: (_column(category_of(env)), env))
    scores: dict[tuple[str, str], dict[str, tuple[float, float, float]]] = defaultdict(dict)
    means: dict[tuple[str, str], dict[str, float | None]] = defaultdict(dict)
    for env_id in envs:
        values: dict[Any, float | None] = {}
        for agent, runs in pooled[env_id].items():
            values[agent] = means[agent][env_id] = _repeat_mean(runs)
        for agent, ranked in rank_scores(values).items():
            scores[agent][env_id] = ranked
    categories = [c for c in (*CATEGORIES, "Other") if any(category_of(e) == c for e in envs)]
    rows = []
    for agent in agents:
        mine = scores[agent]
        cats: dict[str, float | None] = {}
        for c in categories:
            vals = [s for env_id, (s, _, _) in mine.items() if category_of(env_id) == c]
            cats[c] = sum(vals) / len(vals) if vals else None
        all_scores = [s for (s, _, _) in mine.values()]
        rows.append(
            AgentRow(
                agent=agent[0],
                harness=agent[1],
                categories=cats,
                mean=sum(all_scores) / len(all_scores) if all_scores else None,
                first=sum(1 for (_, best, _) in mine.values() if best <= 1),
                top2=sum(1 for (_, best, _) in mine.values() if best <= 2),
                envs=len(mine),
                scores={e: s for e, (s, _, _) in mine.items()},
                returns=dict(means[agent]),
            )
        )
    rows.sort(key=lambda r: (-(r.mean if r.mean is not None else -1.0), -r.first, r.agent))
    return Leaderboard(rows=rows, envs=envs, categories=categories, searches=entries)


def _repeat_mean(runs: Sequence[float | None]) -> float | None:
    """Repeats of one agent on one environment: the mean; a repeat without a return makes it None
    only when none has one (otherwise it is left out and the mean is over those that have one)."""
    numbers = [v for v in runs if v is not None]
    return sum(numbers) / len(numbers) if numbers else None


def _column(category: str) -> int:
    return CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def render_markdown(board: Leaderboard, *, suite: str = "Core16") -> str:
    """The article's layout, then each environment's held-out returns and rank scores."""
    head = ["Agent", "Harness", *board.categories, f"{suite} mean", "1st", "Top-2"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in board.rows:
        cells = [
            r.agent,
            r.harness or "—",
            *(_fmt(r.categories[c]) for c in board.categories),
            _fmt(r.mean),
            str(r.first),
            f"{r.top2}/{r.envs}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "| Environment | Category | " + " | ".join(r.agent for r in board.rows) + " |",
        "|---|---|" + "---|" * len(board.rows),
    ]
    for env_id in board.envs:
        cells = []
        for r in board.rows:
            value = r.returns.get(env_id)
            score = r.scores.get(env_id)
            cells.append(
                "—"
                if score is None
                else f"{'—' if value is None else f'{value:.4g}'} ({score:.3f})"
            )
        lines.append(f"| {env_id} | {category_of(env_id)} | " + " | ".join(cells) + " |")
    lines += ["", f"Held-out mean return (rank-normalized score). {board.rule}."]
    return "\n".join(lines) + "\n"
