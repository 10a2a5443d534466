"""The findings model (diagnostics/findings.py): Finding, Severity, thresholds, the analyzer
registry and run_analyzers. Runs are built with the real recorder and compacted to Parquet;
analyzers run on real DuckDB connections from evotree.harness.query.connect.

``build_run`` here is also used by tests/test_signal_layer.py and tests/test_behavior_layer.py.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from evotree.diagnostics import findings as F
from evotree.diagnostics.findings import (
    AnalysisContext,
    Analyzer,
    Finding,
    FindingError,
    Severity,
    analyzer_classes,
    default_thresholds,
    make_thresholds,
    max_severity,
    register_analyzer,
    run_analyzers,
    sort_findings,
)
from evotree.core.errors import ConfigError
from evotree.harness.compaction import compact_run
from evotree.harness.query import FINDINGS_COLUMNS, connect, query
from evotree.harness.recorder import Recorder


# ----------------------------------------------------------------------------- run builder
def build_run(
    runs: Path,
    run_id: str,
    *,
    version: str = "v1",
    seed: int = 0,
    groups: Iterable[dict[str, Any]] = (),
    signals: Iterable[tuple[int, dict[str, float]]] = (),
    evals: Iterable[tuple[str, str, float]] = (),
    compact: bool = True,
) -> Path:
    """A run directory with run.json and the given evidence, written by the real recorder.

    ``groups``: keyword arguments of ``Recorder.rollout_group`` plus ``step`` (``group_id``
    defaults to ``g<i>``, ``task_id`` to ``t<i>``). ``signals``: (step, {metric: value}).
    ``evals``: (split, task_id, score), recorded by the judge (eval phase).
    """
    run_dir = runs / run_id
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(
        json.dumps({"run_id": run_id, "version": version, "seed": seed, "status": "succeeded"})
    )
    with Recorder(run_dir / "evidence" / "train", run_id=run_id, phase="train") as rec:
        for step, metrics in signals:
            rec.signal(step, **metrics)
        for i, group in enumerate(groups):
            kwargs = {"group_id": f"g{i}", "task_id": f"t{i}", **group}
            rec.rollout_group(kwargs.pop("step"), **kwargs)
    evals = list(evals)
    if evals:
        with Recorder(run_dir / "evidence" / "eval", run_id=run_id, phase="eval") as rec:
            for split, task_id, score in evals:
                rec.eval_result(split, task_id, score)
    if compact:
        compact_run(run_dir)
    return run_dir


def analyze(runs: Path, analyzer: Analyzer, run_id: str = "r1", **context: Any) -> list:
    """Run one analyzer over ``run_id`` of ``runs`` on a fresh connection (shared by the layer tests)."""
    con = connect(runs)
    ctx = AnalysisContext(**context)
    try:
        return analyzer.analyze(con, run_id=run_id, version="v1", context=ctx)
    finally:
        ctx.close()
        con.close()


def codes(found: Iterable[Finding]) -> list[str]:
    return sorted(f.code for f in found)


def one(found: list[Finding], code: str) -> Finding:
    matches = [f for f in found if f.code == code]
    assert len(matches) == 1, f"expected one {code}, got {codes(found)}"
    return matches[0]


# ----------------------------------------------------------------------------- Severity
def test_severity_orders_and_parses() -> None:
    assert Severity.INFO < Severity.WARN < Severity.HIGH < Severity.CRITICAL
    assert Severity.parse("high") is Severity.HIGH
    assert Severity.parse("CRITICAL") is Severity.CRITICAL
    assert Severity.parse(1) is Severity.WARN
    assert Severity.parse(Severity.INFO) is Severity.INFO
    assert str(Severity.WARN) == "warn" and Severity.CRITICAL.label == "critical"
    for bad in ("fatal", 4, -1, True, None):
        with pytest.raises(
            FindingError, match="severity: expected one of info, warn, high, critical"
        ):
            Severity.parse(bad)


# ----------------------------------------------------------------------------- Finding
def make_finding(**changes: Any) -> Finding:
    base = {
        "layer": "signal",
        "code": "signal.dead_groups_high",
        "severity": "critical",
        "title": "60% of groups are dead",
        "evidence": {"dead_ratio": 0.6, "query": "SELECT 1"},
        "suggestion": "filter them",
        "skills": ["StdGroupFilter"],
        "run_id": "r1",
        "version": "v2",
    }
    return Finding(**{**base, **changes})


def test_finding_round_trips_through_json() -> None:
    finding = make_finding(harness_version="abc123")
    data = json.loads(json.dumps(finding.to_dict(), allow_nan=False))
    assert data["v"] == 1
    assert data["code"] == "signal.dead_groups_high" and data["severity"] == "critical"
    assert data["evidence"] == {"dead_ratio": 0.6, "query": "SELECT 1"}
    assert Finding.from_dict(data) == finding
    assert finding.rank is Severity.CRITICAL and finding.query == "SELECT 1"


def test_finding_dict_has_the_findings_view_columns() -> None:
    data = make_finding().to_dict()
    assert set(FINDINGS_COLUMNS) - {"ts"} <= set(data)


def test_finding_evidence_is_made_json_safe() -> None:
    finding = make_finding(
        evidence={
            "a": float("nan"),
            "b": np.float64(0.25),
            "c": np.int64(3),
            "d": (1, 2),
            "e": np.array([1.5, float("inf")]),
            "f": {"g": np.bool_(True)},
        }
    )
    assert finding.evidence == {
        "a": None,
        "b": 0.25,
        "c": 3,
        "d": [1, 2],
        "e": [1.5, None],
        "f": {"g": True},
    }
    json.dumps(finding.to_dict(), allow_nan=False)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"layer": "reward"}, "layer: expected one of score, signal, behavior, version"),
        ({"code": "Dead Groups"}, "code: expected '<layer>.<snake_case>'"),
        ({"code": "behavior.dead_groups_high"}, "does not start with its layer"),
        ({"severity": "fatal"}, "severity: expected one of"),
        ({"title": ""}, "title: expected a non-empty string"),
        ({"evidence": [1, 2]}, "evidence: expected a dict"),
        ({"skills": "StdGroupFilter"}, "skills: expected a list"),
    ],
)
def test_finding_validates(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(FindingError, match=message):
        make_finding(**changes)


def test_from_dict_refuses_unknown_schema_versions_and_missing_fields() -> None:
    data = make_finding().to_dict()
    with pytest.raises(FindingError, match="finding schema version: expected 1, actually: 2"):
        Finding.from_dict({**data, "v": 2})
    with pytest.raises(FindingError, match="missing code"):
        Finding.from_dict({k: v for k, v in data.items() if k != "code"})
    minimal = Finding.from_dict(
        {
            "v": 1,
            "layer": "behavior",
            "code": "behavior.x",
            "severity": "info",
            "title": "t",
            "evidence": None,
            "skills": None,
        }
    )
    assert minimal.evidence == {} and minimal.skills == [] and minimal.harness_version == "builtin"


def test_sort_and_max_severity() -> None:
    found = [
        make_finding(severity="warn", code="signal.b"),
        make_finding(severity="critical", code="signal.z"),
        make_finding(layer="behavior", code="behavior.a", severity="critical"),
        make_finding(severity="info", code="signal.a"),
    ]
    assert [(f.severity, f.code) for f in sort_findings(found)] == [
        ("critical", "signal.z"),
        ("critical", "behavior.a"),
        ("warn", "signal.b"),
        ("info", "signal.a"),
    ]
    assert max_severity(found) is Severity.CRITICAL
    assert max_severity([]) is None


# ----------------------------------------------------------------------------- thresholds
def test_make_thresholds_applies_and_checks_overrides() -> None:
    from evotree.diagnostics.signal_groups import DeadGroups, DeadGroupsThresholds

    assert make_thresholds(DeadGroups) == DeadGroupsThresholds()
    custom = make_thresholds(DeadGroups, {"warn_ratio": 0.1, "critical_ratio": 1})
    assert custom.warn_ratio == 0.1 and custom.critical_ratio == 1
    same = DeadGroupsThresholds(std_epsilon=0.01)
    assert make_thresholds(DeadGroups, same) is same
    with pytest.raises(
        ConfigError, match=r"unknown key 'warn_ratoi' \(did you mean 'warn_ratio'\?\)"
    ):
        make_thresholds(DeadGroups, {"warn_ratoi": 0.1})
    with pytest.raises(ConfigError, match="warn_ratio expected float, actually: 'high'"):
        make_thresholds(DeadGroups, {"warn_ratio": "high"})
    with pytest.raises(
        ConfigError, match=r"warn_ratio \(0.6\) must not exceed critical_ratio \(0.5\)"
    ):
        make_thresholds(DeadGroups, {"warn_ratio": 0.6})
    from evotree.diagnostics.behavior_failures import FinishReasons

    assert make_thresholds(
        FinishReasons, {"format_failure_reasons": ["bad"]}
    ).format_failure_reasons == ("bad",)


def test_default_thresholds_cover_every_builtin_analyzer() -> None:
    names = [c.name for c in analyzer_classes(("signal", "behavior"))]
    assert names == [
        "signal.dead_groups",
        "signal.solve_rates",
        "signal.reward_trend",
        "signal.reward_below_start",
        "signal.entropy_collapse",
        "signal.echo_trap",
        "signal.kl_clip",
        "signal.nonfinite",
        "signal.truncation_trend",
        "behavior.length",
        "behavior.finish",
        "behavior.tools",
        "behavior.diversity",
        "behavior.repetition",
        "behavior.git_history",
        "behavior.reward_eval",
        "behavior.gym",
    ]
    defaults = default_thresholds(("signal", "behavior"))
    assert defaults["signal.dead_groups"] == {
        "std_epsilon": 1e-3,
        "warn_ratio": 0.25,
        "critical_ratio": 0.5,
        "solved_reward": 1.0,
        "window_fraction": 0.2,
    }
    assert defaults["signal.nonfinite"] == {}
    for cls in analyzer_classes(("signal", "behavior")):
        for f in dataclasses.fields(cls.thresholds_type):
            assert f.metadata.get("help"), f"{cls.name}.{f.name} has no help text"


# ----------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class _Limits:
    minimum_rows: int = 1


class _CountRows(Analyzer):
    """A workspace plug-in: reports the number of train rollouts."""

    name = "behavior.test_count_rows"
    layer = "behavior"
    codes = ("behavior.test_rows",)
    thresholds_type = _Limits
    harness_version: ClassVar[str] = "ws-harness-7"

    def analyze(self, con, *, run_id, version, context=None):
        ((n,),) = con.execute(
            "SELECT count(*) FROM _rollouts WHERE run_id = ?", [run_id]
        ).fetchall()
        if n < self.thresholds.minimum_rows:
            return []
        return [
            self.finding(
                "behavior.test_rows",
                "info",
                f"{n} rows",
                run_id=run_id,
                version=version,
                evidence={"rows": n, "query": "SELECT count(*) FROM _rollouts"},
            )
        ]


class _Broken(Analyzer):
    name = "signal.test_broken"
    layer = "signal"
    codes = ("signal.test_broken",)

    def analyze(self, con, *, run_id, version, context=None):
        raise ZeroDivisionError("division by zero\nsecond line")


@pytest.fixture
def registry_guard():
    saved = dict(F._REGISTRY)
    yield
    F._REGISTRY.clear()
    F._REGISTRY.update(saved)


def test_register_refuses_duplicates_and_bad_analyzers(registry_guard) -> None:
    register_analyzer(_CountRows)
    register_analyzer(_CountRows)  # the same class again is fine
    clone = type("Clone", (_CountRows,), {})
    with pytest.raises(FindingError, match="already registered"):
        register_analyzer(clone)
    register_analyzer(clone, replace=True)
    assert F._REGISTRY["behavior.test_count_rows"] is clone
    bad = type("Bad", (_CountRows,), {"name": "signal.x"})
    with pytest.raises(FindingError, match="must start with its layer 'behavior'"):
        register_analyzer(bad)
    bad_code = type("BadCode", (_CountRows,), {"codes": ("signal.rows",)})
    with pytest.raises(FindingError, match="is not '<behavior>.<snake_case>'"):
        register_analyzer(bad_code)

    @dataclass(frozen=True)
    class NoDefault:
        level: float

    with pytest.raises(FindingError, match="every threshold needs a default"):
        register_analyzer(type("NoDefaults", (_CountRows,), {"thresholds_type": NoDefault}))


def test_analyzer_may_only_emit_its_codes() -> None:
    with pytest.raises(FindingError, match="emitted 'behavior.other', which is not in its codes"):
        _CountRows().finding("behavior.other", "info", "t", run_id=None, version=None, evidence={})


# ----------------------------------------------------------------------------- run_analyzers
def dead_run(runs: Path, run_id: str = "r1", version: str = "v1") -> None:
    """10 groups at step 0, 3 dead: ratio 0.3 (warn by default)."""
    groups = [
        {"step": 0, "rewards": [0.2, 0.2]},
        {"step": 0, "rewards": [0.0, 0.0]},
        {"step": 0, "rewards": [0.5, 0.5]},
    ] + [{"step": 0, "rewards": [0.0, 1.0]}] * 7
    build_run(runs, run_id, version=version, groups=groups)


def test_run_analyzers_layers_thresholds_and_plugins(tmp_path: Path, registry_guard) -> None:
    dead_run(tmp_path, "r1", "v3")
    con = connect(tmp_path)
    found = run_analyzers(con, run_ids=["r1"], version=None, layers=["signal"])
    assert {f.layer for f in found} == {"signal"}
    dead = one(found, "signal.dead_groups_high")
    assert dead.severity == "warn" and dead.evidence["dead_ratio"] == pytest.approx(0.3)
    assert dead.version == "v3" and dead.run_id == "r1" and dead.harness_version == "builtin"
    assert run_analyzers(
        con,
        run_ids=["r1"],
        version="v3",
        layers=["signal"],
        thresholds={"signal.dead_groups": {"warn_ratio": 0.4}},
    ) == [f for f in found if f.code != "signal.dead_groups_high"]
    with pytest.raises(
        ConfigError,
        match=r"unknown analyzer 'signal.dead_group' \(did you mean 'signal.dead_groups'",
    ):
        run_analyzers(con, run_ids=["r1"], version="v3", thresholds={"signal.dead_group": {}})
    with pytest.raises(FindingError, match="layer: expected one of"):
        run_analyzers(con, run_ids=["r1"], version="v3", layers=["signals"])

    register_analyzer(_CountRows)
    register_analyzer(_Broken)
    timings: dict[str, float] = {}
    found = run_analyzers(
        con,
        run_ids=["r1"],
        version="v3",
        timings=timings,
        thresholds={"behavior.test_count_rows": {"minimum_rows": 5}},
    )
    rows = one(found, "behavior.test_rows")
    assert rows.evidence["rows"] == 20 and rows.harness_version == "ws-harness-7"
    broken = one(found, "signal.analyzer_failed")
    assert broken.severity == "warn" and broken.evidence == {
        "analyzer": "signal.test_broken",
        "error": "division by zero",
    }
    assert set(timings) == {c.name for c in analyzer_classes()}
    assert all(t >= 0 for t in timings.values())
    assert found == sort_findings(found)
    with pytest.raises(ZeroDivisionError):
        run_analyzers(con, run_ids=["r1"], version="v3", analyzers=[_Broken], strict=True)
    only = run_analyzers(
        con, run_ids=["r1"], version="v3", analyzers=[_CountRows(_Limits(minimum_rows=100))]
    )
    assert only == []


def test_run_analyzers_over_several_runs_keeps_them_apart(tmp_path: Path) -> None:
    dead_run(tmp_path, "r1")
    build_run(tmp_path, "r2", groups=[{"step": 0, "rewards": [0.0, 1.0]}] * 4)
    con = connect(tmp_path)
    found = run_analyzers(con, run_ids=["r1", "r2"], version="v1", layers=["signal"])
    assert [f.run_id for f in found if f.code == "signal.dead_groups_high"] == ["r1"]
    assert not con.execute(
        "SELECT * FROM duckdb_tables() WHERE table_name LIKE '_diag_%'"
    ).fetchall()


def test_every_evidence_query_reproduces_in_evotree_query(tmp_path: Path) -> None:
    """The SQL a finding records runs, over a fresh connection, and returns rows."""
    steps = range(12)
    groups = [
        {
            "step": s,
            "rewards": [1.0, 1.0, 1.0, 1.0],
            "lengths": [100 + 50 * s] * 4,
            "truncated": [s > 6] * 4,
            "finish_reasons": ["length" if s > 6 else "stop"] * 4,
            "texts": ["the answer is 4 because two plus two is four"] * 4,
            "commands": [["git log -p"], [], ["ls"], ["python a.py"]],
            "components": {"format": [0.0, 1.0, 1.0, 1.0]},
        }
        for s in steps
    ]
    signals = [
        (s, {"entropy": 1.0 if s < 3 else 0.1, "kl": 0.01 if s != 8 else 2.0, "grad_norm": 1.0})
        for s in steps
    ]
    build_run(tmp_path, "r1", groups=groups, signals=signals + [(12, {"loss": float("nan")})])
    build_run(
        tmp_path,
        "r0",
        version="v0",
        groups=[{"step": 0, "rewards": [0.0, 1.0], "lengths": [10, 12]}],
    )
    con = connect(tmp_path)
    found = run_analyzers(con, run_ids=["r1"], version="v1", parent_run_ids=["r0"], strict=True)
    assert len(found) >= 8, codes(found)
    for finding in found:
        for key, sql in finding.evidence.items():
            if key == "query" or key.startswith("query_"):
                assert query(tmp_path, sql).num_rows > 0, (finding.code, key, sql)
    assert all(f.query for f in found), [f.code for f in found if not f.query]


def test_an_empty_run_has_no_findings(tmp_path: Path) -> None:
    build_run(tmp_path, "r1")
    con = connect(tmp_path)
    assert run_analyzers(con, run_ids=["r1"], version="v1", strict=True) == []
    assert run_analyzers(con, run_ids=["missing"], version="v1", strict=True) == []


def test_nan_thresholds_are_refused() -> None:
    from evotree.diagnostics.signal_update import KlClip

    with pytest.raises(ConfigError, match="kl_warn must be in"):
        make_thresholds(KlClip, {"kl_warn": math.nan})


def test_a_running_run_is_read_from_its_jsonl_files(tmp_path: Path) -> None:
    """Before compaction (a live run) the views read JSONL: the same findings as from Parquet."""
    groups = [{"step": s, "rewards": [0.5, 0.5], "truncated": [s > 3, s > 2]} for s in range(8)]
    sig = [(s, {"entropy": 1.0 - 0.1 * s}) for s in range(8)]
    build_run(tmp_path / "live", "r1", groups=groups, signals=sig, compact=False)
    build_run(tmp_path / "done", "r1", groups=groups, signals=sig)
    live = run_analyzers(connect(tmp_path / "live"), run_ids=["r1"], version="v1", strict=True)
    done = run_analyzers(connect(tmp_path / "done"), run_ids=["r1"], version="v1", strict=True)
    assert live == done and "signal.dead_groups_high" in codes(live)
