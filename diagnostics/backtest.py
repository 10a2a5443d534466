"""Backtest: re-diagnose past runs from their stored rollouts, as they are and under a candidate
reward transform, without retraining.

:func:`backtest` opens two connections over ``runs_dir`` (:func:`evotree.harness.query.connect`), runs
the analyzers (:func:`evotree.diagnostics.findings.run_analyzers`) of the asked layers over the given
runs on each, and reports per run how the findings change (``new``, ``resolved``,
``severity_changed``) and how the dead-group ratio moves. On the second connection the stored
``_rollouts`` view is renamed ``_rollouts_stored`` and a new ``_rollouts`` takes its place::

    CREATE VIEW _rollouts AS SELECT * REPLACE (<transformed reward> AS reward) FROM _rollouts_stored

``rollouts`` (``_rollouts`` joined with run.json) names ``_rollouts`` and so sees the transformed
reward too; the files and :mod:`evotree.harness.query` are untouched. Everything is SQL: nothing is
read into Python row by row.

A :class:`RewardTransform` is declarative::

    reward' = scale * reward + sum(weight * components[name] for name, weight in add) + shift

``RewardTransform(add={"instruction_following": 0.1})`` is EvoTrainer's revival of dead groups by
a small instruction-following term. A component missing from a rollout (not recorded, recorded
as null, or not a number) counts as 0. A null or non-finite reward stays null or non-finite
(the analyzers leave it out as before). :meth:`RewardTransform.parse` reads the same from text:
``"reward + 0.1*instruction_following"``, ``"0.5*reward + 0.1*a - 0.05*b + 1"`` (component names
in text are identifiers, ``[A-Za-z_][A-Za-z0-9_]*``: ``a-b`` reads as ``a - b``; other names go
through ``RewardTransform(add=...)``); anything else
raises :class:`BacktestError` (exit code 24, code ``backtest_error``).

Dead groups here are counted by the ``signal.dead_groups`` analyzer's rule (train phase, groups
``(step, group_id)``, finite rewards only, a group is dead when its population std is below the
effective ``std_epsilon``; groups without a finite reward are left out), but all of them: the
ratio reported is the analyzer's ``dead_ratio`` (solved and unsolved dead groups together), not
the unsolved share behind ``signal.dead_groups_high`` (the solved share is behind
``signal.dead_groups_solved``; the findings diff shows how each of those moves). The counts are
made for every run asked, whereas the analyzer reports nothing for a run whose train rollouts
are not GRPO-style groups (:func:`evotree.diagnostics.signal_series.is_group_run`: gym episodes, say).
``revived_fraction`` is ``(dead_before - dead_after) / dead_before`` (None when nothing was
dead); ``groups_revived`` and ``groups_killed`` count the groups that went dead -> alive and
alive -> dead.

The "analyzer version" hook: ``thresholds`` (analyzer name -> overrides, as in
``[diagnose.thresholds]``) stands for another version of the analyzers; the same thresholds are
used before and after, and the result records them with a ``harness_version`` label.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evotree.diagnostics.behavior_rollouts import component_value_sql
from evotree.diagnostics.findings import Finding, Severity, make_thresholds, run_analyzers
from evotree.diagnostics.signal_groups import DeadGroups
from evotree.core.errors import EvotreeError
from evotree.harness.compaction import sql_string
from evotree.harness.query import connect

__all__ = [
    "BacktestError",
    "BacktestResult",
    "DeadGroupStats",
    "FindingChange",
    "RewardTransform",
    "RunBacktest",
    "apply_transform",
    "as_transform",
    "backtest",
    "diff_findings",
]

STORED_VIEW = "_rollouts_stored"


class BacktestError(EvotreeError, ValueError):
    """A backtest that cannot run: a reward transform that cannot be read, unknown runs."""

    exit_code = 24
    code = "backtest_error"


# ----------------------------------------------------------------------------- transform
_FIX = (
    'write it as a sum of terms: "reward" (optionally NUMBER*reward), NUMBER*component, '
    'and NUMBER; e.g. "reward + 0.1*instruction_following" or "0.5*reward + 0.1*format - 0.2"'
)
_TOKEN = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>[+\-*]))"
)


def _finite_number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise BacktestError(
            f"reward transform: {what} must be a finite number, actually: {value!r}"
        )
    return float(value)


@dataclass(frozen=True)
class RewardTransform:
    """``reward' = scale * reward + sum(w * components[name]) + shift`` (missing component: 0)."""

    add: Mapping[str, float] = field(default_factory=dict)
    scale: float = 1.0
    shift: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.add, Mapping):
            raise BacktestError(
                f"reward transform: add must map component names to weights, "
                f"actually: {type(self.add).__name__}"
            )
        add: dict[str, float] = {}
        for name, weight in self.add.items():
            if not isinstance(name, str) or not name:
                raise BacktestError(
                    f"reward transform: a component name must be a non-empty string, "
                    f"actually: {name!r}"
                )
            add[name] = _finite_number(weight, f"the weight of {name!r}")
        object.__setattr__(self, "add", add)
        object.__setattr__(self, "scale", _finite_number(self.scale, "scale"))
        object.__setattr__(self, "shift", _finite_number(self.shift, "shift"))

    @property
    def is_identity(self) -> bool:
        """True when the transform leaves every reward as it is."""
        return self.scale == 1.0 and self.shift == 0.0 and all(w == 0.0 for w in self.add.values())

    @classmethod
    def parse(cls, text: str) -> RewardTransform:
        """Read ``"reward + 0.1*instruction_following"`` (see the module doc); raise
        :class:`BacktestError` for anything else."""
        if not isinstance(text, str):
            raise BacktestError(
                f"reward transform: expected a string, actually: {type(text).__name__}", fix=_FIX
            )
        source = text.strip()
        if source.lower().startswith("reward'") or re.match(r"^reward\s*=[^=]", source):
            source = source.split("=", 1)[1].strip()  # "reward' = ..." / "reward = ..."
        tokens: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(source):
            match = _TOKEN.match(source, pos)
            if not match or match.end() == pos:
                raise BacktestError(
                    f"cannot parse reward transform {text!r}: unexpected "
                    f"{source[pos:].strip()[:20]!r} at position {pos}",
                    fix=_FIX,
                    transform=text,
                )
            kind = match.lastgroup or ""
            tokens.append((kind, match.group(kind), match.start(kind)))
            pos = match.end()
            while pos < len(source) and source[pos].isspace():
                pos += 1
        if not tokens:
            raise BacktestError("reward transform is empty", fix=_FIX, transform=text)

        def fail(why: str) -> BacktestError:
            return BacktestError(
                f"cannot parse reward transform {text!r}: {why}", fix=_FIX, transform=text
            )

        scale: float | None = None
        shift = 0.0
        add: dict[str, float] = {}
        i = 0
        first = True
        while i < len(tokens):
            sign = 1.0
            if tokens[i][0] == "op" and tokens[i][1] in "+-":
                sign = -1.0 if tokens[i][1] == "-" else 1.0
                i += 1
            elif not first:
                raise fail(f"expected + or - before {tokens[i][1]!r} at position {tokens[i][2]}")
            first = False
            coef, name = sign, None
            expect_factor = True
            while expect_factor:
                if i >= len(tokens):
                    raise fail("it ends with an operator")
                kind, value, at = tokens[i]
                if kind == "num":
                    coef *= float(value)
                elif kind == "name":
                    if name is not None:
                        raise fail(
                            f"{name!r} * {value!r}: a term may hold one name (products of "
                            "rewards or components are not supported)"
                        )
                    name = value
                else:
                    raise fail(f"expected a number or a name at position {at}, got {value!r}")
                i += 1
                expect_factor = i < len(tokens) and tokens[i] == ("op", "*", tokens[i][2])
                if expect_factor:
                    i += 1
            if name is None:
                shift += coef
            elif name == "reward":
                scale = (scale or 0.0) + coef
            else:
                add[name] = add.get(name, 0.0) + coef
        if scale is None:
            raise fail("it must contain the reward (e.g. 'reward + 0.1*instruction_following')")
        if not all(math.isfinite(v) for v in (scale, shift, *add.values())):
            raise fail("a coefficient is not finite")
        return cls(add=add, scale=scale, shift=shift)

    def sql(self, reward: str = "reward", components: str = "components") -> str:
        """The transformed reward as a DuckDB expression over columns ``reward`` and
        ``components`` (the JSON text of the rollout's reward components)."""
        if self.is_identity:
            return reward
        parts = [reward if self.scale == 1.0 else f"{self.scale!r} * {reward}"]
        for name, weight in self.add.items():
            if weight == 0.0:
                continue
            value = component_value_sql(name)
            if components != "components":
                value = value.replace("(components,", f"({components},")
            parts.append(f"{weight!r} * coalesce({value}, 0.0)")
        if self.shift != 0.0:
            parts.append(f"{self.shift!r}")
        return "(" + " + ".join(parts) + ")"

    def __str__(self) -> str:
        def term(coef: float, name: str | None, lead: bool) -> str:
            sign = "-" if coef < 0 else ("" if lead else "+")
            mag = abs(coef)
            body = f"{mag:g}" if name is None else (name if mag == 1.0 else f"{mag:g}*{name}")
            return f"{sign}{body}" if lead else f"{sign} {body}"

        out = [term(self.scale, "reward", True)] if self.scale != 0.0 else ["0*reward"]
        out += [term(w, n, False) for n, w in self.add.items() if w != 0.0]
        if self.shift != 0.0:
            out.append(term(self.shift, None, False))
        return " ".join(out)

    def to_dict(self) -> dict[str, Any]:
        return {
            "expression": str(self),
            "add": dict(self.add),
            "scale": self.scale,
            "shift": self.shift,
        }


def as_transform(value: RewardTransform | str | Mapping[str, Any] | None) -> RewardTransform:
    """``value`` as a :class:`RewardTransform` (None: the identity; a string: :meth:`parse`;
    a mapping: its fields ``add``, ``scale``, ``shift``)."""
    if value is None:
        return RewardTransform()
    if isinstance(value, RewardTransform):
        return value
    if isinstance(value, str):
        return RewardTransform.parse(value)
    if isinstance(value, Mapping):
        unknown = set(value) - {"add", "scale", "shift"}
        if unknown:
            raise BacktestError(
                f"reward transform: unknown keys {sorted(unknown)}", fix="keys: add, scale, shift"
            )
        return RewardTransform(**dict(value))
    raise BacktestError(
        f"reward transform: expected a RewardTransform or a string, "
        f"actually: {type(value).__name__}",
        fix=_FIX,
    )


def apply_transform(con: Any, transform: RewardTransform) -> None:
    """Make ``_rollouts`` (and through it ``rollouts``) of ``con`` carry the transformed reward.

    The stored view is kept as ``_rollouts_stored``. ``con`` must come from
    :func:`evotree.harness.query.connect` and must not have been transformed already.
    """
    con.execute(f"ALTER VIEW _rollouts RENAME TO {STORED_VIEW}")
    con.execute(
        f"CREATE VIEW _rollouts AS SELECT * REPLACE ({transform.sql()} AS reward) FROM {STORED_VIEW}"
    )


# ----------------------------------------------------------------------------- dead groups
@dataclass(frozen=True)
class DeadGroupStats:
    """Dead groups of one run under the ``signal.dead_groups`` rule."""

    groups: int
    dead: int

    @property
    def ratio(self) -> float | None:
        return self.dead / self.groups if self.groups else None

    def to_dict(self) -> dict[str, Any]:
        return {"groups": self.groups, "dead": self.dead, "ratio": self.ratio}


def _group_sd_sql(view: str, run_id: str) -> str:
    return (
        "SELECT step, group_id, count(r) AS n, stddev_pop(r) AS sd FROM (SELECT step, group_id, "
        f"CASE WHEN isfinite(reward) THEN reward END AS r FROM {view} "
        f"WHERE run_id = {sql_string(run_id)} AND phase = 'train') GROUP BY step, group_id"
    )


def _dead_stats(con: Any, run_id: str, eps: float, view: str = "_rollouts") -> DeadGroupStats:
    ((groups, dead),) = con.execute(
        f"SELECT count(*), count(*) FILTER (WHERE sd < {float(eps)!r}) FROM ({_group_sd_sql(view, run_id)}) "
        "WHERE n > 0"
    ).fetchall()
    return DeadGroupStats(int(groups), int(dead))


def _flips(con: Any, run_id: str, eps: float) -> tuple[int, int]:
    """(groups dead before and alive after, alive before and dead after) on a transformed ``con``."""
    e = repr(float(eps))
    ((revived, killed),) = con.execute(
        f"SELECT count(*) FILTER (WHERE b.sd < {e} AND a.sd >= {e}), "
        f"count(*) FILTER (WHERE b.sd >= {e} AND a.sd < {e}) "
        f"FROM ({_group_sd_sql(STORED_VIEW, run_id)}) AS b JOIN ({_group_sd_sql('_rollouts', run_id)}) AS a "
        "USING (step, group_id) WHERE b.n > 0 AND a.n > 0"
    ).fetchall()
    return int(revived or 0), int(killed or 0)


# ----------------------------------------------------------------------------- findings diff
@dataclass(frozen=True)
class FindingChange:
    """How one finding code of one run changed: ``new``, ``resolved`` or ``severity_changed``."""

    run_id: str
    code: str
    kind: str
    before: str | None  #: severity before (None: absent)
    after: str | None  #: severity after (None: absent)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "code": self.code,
            "kind": self.kind,
            "before": self.before,
            "after": self.after,
        }


def _by_code(findings: Iterable[Finding]) -> dict[str, str]:
    """code -> the highest severity among the findings with that code."""
    out: dict[str, Severity] = {}
    for f in findings:
        out[f.code] = max(out.get(f.code, f.rank), f.rank)
    return {code: rank.label for code, rank in out.items()}


def diff_findings(
    run_id: str, before: Iterable[Finding], after: Iterable[Finding]
) -> list[FindingChange]:
    """The changes between two sets of findings of one run, compared by code (the highest
    severity of a code counts); sorted by code."""
    b, a = _by_code(before), _by_code(after)
    changes = []
    for code in sorted(set(b) | set(a)):
        if code not in b:
            changes.append(FindingChange(run_id, code, "new", None, a[code]))
        elif code not in a:
            changes.append(FindingChange(run_id, code, "resolved", b[code], None))
        elif a[code] != b[code]:
            changes.append(FindingChange(run_id, code, "severity_changed", b[code], a[code]))
    return changes


def _summary(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    return [{"code": f.code, "severity": f.severity, "title": f.title} for f in findings]


# ----------------------------------------------------------------------------- result
@dataclass
class RunBacktest:
    """One run, before and after the transform."""

    run_id: str
    findings_before: list[Finding]
    findings_after: list[Finding]
    changes: list[FindingChange]
    dead_before: DeadGroupStats
    dead_after: DeadGroupStats
    groups_revived: int = 0
    groups_killed: int = 0

    @property
    def dead_group_ratio_before(self) -> float | None:
        return self.dead_before.ratio

    @property
    def dead_group_ratio_after(self) -> float | None:
        return self.dead_after.ratio

    @property
    def revived_fraction(self) -> float | None:
        """``(dead_before - dead_after) / dead_before``; None when no group was dead before."""
        if not self.dead_before.dead:
            return None
        return (self.dead_before.dead - self.dead_after.dead) / self.dead_before.dead

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "findings_before": _summary(self.findings_before),
            "findings_after": _summary(self.findings_after),
            "changes": [c.to_dict() for c in self.changes],
            "dead_groups_before": self.dead_before.to_dict(),
            "dead_groups_after": self.dead_after.to_dict(),
            "dead_group_ratio_before": self.dead_group_ratio_before,
            "dead_group_ratio_after": self.dead_group_ratio_after,
            "revived_fraction": self.revived_fraction,
            "groups_revived": self.groups_revived,
            "groups_killed": self.groups_killed,
        }


@dataclass
class BacktestResult:
    """What :func:`backtest` found; :meth:`to_dict` is its JSON form."""

    runs_dir: str
    run_ids: list[str]
    transform: RewardTransform
    layers: tuple[str, ...] | None
    harness_version: str
    thresholds: dict[str, Any]
    std_epsilon: float
    runs: list[RunBacktest]

    @property
    def changes(self) -> list[FindingChange]:
        return [c for run in self.runs for c in run.changes]

    def run(self, run_id: str) -> RunBacktest:
        for item in self.runs:
            if item.run_id == run_id:
                return item
        raise KeyError(run_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs_dir": self.runs_dir,
            "run_ids": list(self.run_ids),
            "transform": self.transform.to_dict(),
            "layers": list(self.layers) if self.layers is not None else None,
            "analyzers": {
                "harness_version": self.harness_version,
                "thresholds": self.thresholds,
                "dead_group_std_epsilon": self.std_epsilon,
            },
            "runs": [r.to_dict() for r in self.runs],
            "changes": [c.to_dict() for c in self.changes],
        }


def _thresholds_dict(overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in (overrides or {}).items():
        out[name] = dataclasses.asdict(value) if dataclasses.is_dataclass(value) else dict(value)
    return out


# ----------------------------------------------------------------------------- backtest
def backtest(
    runs_dir: Any,
    run_ids: Sequence[str] | str,
    *,
    transform: RewardTransform | str | Mapping[str, Any] | None = None,
    thresholds: Mapping[str, Any] | None = None,
    layers: Iterable[str] | None = ("signal", "behavior"),
    harness_version: str | None = None,
) -> BacktestResult:
    """Re-run the analyzers over the stored rollouts of ``run_ids``, as they are and under
    ``transform`` (None: the identity), and report the changes (see the module doc).

    ``thresholds``: analyzer name -> overrides (another "analyzer version",
    used on both sides); ``harness_version`` labels it in the result (default ``"builtin"``, or
    ``"builtin+overrides"`` with overrides). Raises :class:`BacktestError` for a bad transform,
    no runs or runs with no evidence under ``runs_dir``; ``ConfigError`` for bad thresholds.
    """

    chosen = as_transform(transform)
    ids = [run_ids] if isinstance(run_ids, str) else [str(r) for r in run_ids]
    if not ids:
        raise BacktestError(
            "backtest: no run ids given", fix="pass the ids of the runs to backtest"
        )
    layer_list = tuple(layers) if layers is not None else None
    overrides = dict(thresholds or {})
    eps = float(make_thresholds(DeadGroups, overrides.get(DeadGroups.name)).std_epsilon)
    label = harness_version or ("builtin+overrides" if overrides else "builtin")

    before, dead_before = _as_recorded(runs_dir, ids, layer_list, overrides, eps)
    after, dead_after, flips = _transformed(runs_dir, ids, chosen, layer_list, overrides, eps)
    runs = []
    for r in ids:
        fb = [f for f in before if f.run_id == r]
        fa = [f for f in after if f.run_id == r]
        runs.append(
            RunBacktest(
                r,
                fb,
                fa,
                diff_findings(r, fb, fa),
                dead_before[r],
                dead_after[r],
                groups_revived=flips[r][0],
                groups_killed=flips[r][1],
            )
        )
    return BacktestResult(
        runs_dir=str(runs_dir),
        run_ids=ids,
        transform=chosen,
        layers=layer_list,
        harness_version=label,
        thresholds=_thresholds_dict(overrides),
        std_epsilon=eps,
        runs=runs,
    )


def _as_recorded(
    runs_dir: Any,
    ids: list[str],
    layers: tuple[str, ...] | None,
    overrides: dict[str, Any],
    eps: float,
) -> tuple[list[Finding], dict[str, DeadGroupStats]]:
    """(findings, dead-group stats per run) of the runs as they were recorded; refused when a
    run has no evidence under ``runs_dir``."""
    con = connect(runs_dir)
    try:
        known = {
            r
            for (r,) in con.execute(
                "SELECT DISTINCT run_id FROM _rollouts UNION SELECT run_id FROM runs "
                "UNION SELECT DISTINCT run_id FROM _signals"
            ).fetchall()
        }
        missing = [r for r in ids if r not in known]
        if missing:
            raise BacktestError(
                f"backtest: no run {', '.join(map(repr, missing))} under {runs_dir}",
                fix="pass ids of runs recorded under the runs directory",
                missing=missing,
            )
        found = run_analyzers(con, run_ids=ids, version=None, layers=layers, thresholds=overrides)
        return found, {r: _dead_stats(con, r, eps) for r in ids}
    finally:
        con.close()


def _transformed(
    runs_dir: Any,
    ids: list[str],
    transform: RewardTransform,
    layers: tuple[str, ...] | None,
    overrides: dict[str, Any],
    eps: float,
) -> tuple[list[Finding], dict[str, DeadGroupStats], dict[str, tuple[int, int]]]:
    """(findings, dead-group stats per run, groups (revived, killed) per run) of the runs with
    ``transform`` applied to their rewards."""
    con = connect(runs_dir)
    try:
        apply_transform(con, transform)
        found = run_analyzers(con, run_ids=ids, version=None, layers=layers, thresholds=overrides)
        dead = {r: _dead_stats(con, r, eps) for r in ids}
        return found, dead, {r: _flips(con, r, eps) for r in ids}
    finally:
        con.close()
