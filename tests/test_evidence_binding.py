"""Evidence bound to the ledger: the score gate and compare count every run
the ledger says started, checked against the manifest its run.finished recorded.

The attack before: a version that is neutral on average (its even seeds lucky, its odd seeds
unlucky) fails the score gate; deleting the run directories of its unlucky seeds — or marking
them failed in run.json, or editing their scores — left only lucky seeds on disk, and the gate,
which read whatever run directories were there, passed. Each attack below is now a critical
``score.evidence_*`` finding that fails the gate, and ``evotree compare`` reports it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, git, validate
from fixtures_ws import recipe_version, scored_project
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
from evotree.harness.integrity import verify_run_evidence

#: even seeds are lucky, odd seeds unlucky, by ``spread``; the same 20 tasks for every run
JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
luck = 1.0 if int(os.environ["EVOTREE_SEED"]) % 2 == 0 else -1.0
for i in range(20):
    score = model["skill"] + model.get("spread", 0.0) * luck + (i % 5 - 2) * 0.01
    rec.eval_result("validation", f"task-{i}", min(1.0, max(0.0, score)))
"""


def _workspace(path: Path) -> Workspace:
    return Workspace.open(scored_project(path, judge=JUDGE))


def _score(repo: Path, version: str) -> tuple[dict[str, Any], dict[str, Any]]:
    report = Cli(repo).json("gates", version)
    validate(report, "gates")
    return next(g for g in report["gates"] if g["name"] == "score"), report


def _run_dir(ws: Workspace, run_id: str) -> Path:
    return ws.root / ".evotree" / "runs" / run_id


@pytest.fixture
def neutral(tmp_path: Path) -> tuple[Workspace, str, dict[int, str]]:
    """Champion v0 (3 seeds, no luck) and a neutral v1 (6 seeds: +0.2 on even, -0.2 on odd)."""
    ws = _workspace(tmp_path / "w")
    v1 = recipe_version(ws, "skill = 0.5\nspread = 0.2\n")
    records = run_versions(ws, ["v0"], seeds=3, jobs=2) + run_versions(
        Workspace.open(ws.root), [v1], seeds=6, jobs=2
    )
    assert all(r.status == "succeeded" for r in records), [r.error for r in records]
    return Workspace.open(ws.root), v1, {r.seed: r.run_id for r in records if r.version == v1}


def test_run_finished_records_a_manifest_and_honest_runs_verify(
    neutral: tuple[Workspace, str, dict[int, str]],
) -> None:
    ws, v1, runs = neutral
    event = next(e.event for e in ws.ledger.entries(version=v1) if e.event.kind == "run.finished")
    manifest = event.data["evidence"]
    assert manifest["v"] == 1 and manifest["digest"].startswith("sha256:") and manifest["host"]
    assert {
        "evals.parquet",
        "signals.parquet",
        "rollouts.parquet",
        "evidence/eval/evals.jsonl",
    } <= set(manifest["files"])
    assert all(h.startswith("sha256:") for h in manifest["files"].values())
    record = json.loads((_run_dir(ws, event.data["run_id"]) / "run.json").read_text())
    assert record["evidence"]["digest"] == manifest["digest"]
    check = verify_run_evidence(ws, v1)
    assert check.ok and [r.state for r in check.runs] == ["ok"] * 6 and check.unrecorded == []
    assert sorted(r.seed for r in check.runs) == list(range(6))
    # the honest comparison: neutral, so the score gate fails on the numbers (not on evidence)
    score, _ = _score(ws.root, v1)
    assert score["status"] == "fail" and "evidence" not in score["summary"]
    assert score["numbers"]["delta"] == pytest.approx(0.0, abs=1e-9)
    assert sorted(score["numbers"]["evidence"]["candidate"]["ok"]) == sorted(runs.values())


def test_deleting_the_unlucky_seeds_run_directories_fails_the_gate(
    neutral: tuple[Workspace, str, dict[int, str]],
) -> None:
    """The attack of the issue: before, the gate read the three lucky seeds left on disk and passed."""
    ws, v1, runs = neutral
    unlucky = sorted(runs[s] for s in (1, 3, 5))
    for run_id in unlucky:
        shutil.rmtree(_run_dir(ws, run_id))
    score, report = _score(ws.root, v1)
    assert score["status"] == "fail", score
    assert "evidence missing" in score["summary"] and all(
        r in score["summary"] for r in unlucky[:3]
    )
    (finding,) = score["numbers"]["findings"]
    assert finding["code"] == "score.evidence_missing" and finding["severity"] == "critical"
    assert sorted(finding["evidence"]["runs"]) == unlucky
    assert score["numbers"]["evidence"]["candidate"]["missing"] == unlucky
    assert "restore the run directories" in score["fix"]
    assert report["findings"][0]["code"] == "score.evidence_missing" and not report["passed"]
    # compare still computes on the verified runs — which now look much better — and says loudly why not to trust it
    data = Cli(ws.root).json("compare", "v0", v1, "--bootstrap", "1000")
    validate(data, "compare")
    assert data["delta"] == pytest.approx(0.2) and sorted(data["runs"]["b"]) == sorted(
        runs[s] for s in (0, 2, 4)
    )
    assert data["evidence"]["ok"] is False and data["caveat"].startswith("EVIDENCE PROBLEM")
    assert data["evidence"]["b"]["missing"] == unlucky
    assert [f["code"] for f in data["evidence"]["findings"]] == ["score.evidence_missing"]
    text = Cli(ws.root)("compare", "v0", v1, "--bootstrap", "1000").output
    assert "EVIDENCE PROBLEM" in text


def test_marking_the_unlucky_runs_failed_in_run_json_is_tampering(
    neutral: tuple[Workspace, str, dict[int, str]],
) -> None:
    """Before, version_scores took `status = 'succeeded'` from run.json: editing it dropped the runs."""
    ws, v1, runs = neutral
    for seed in (1, 3, 5):
        path = _run_dir(ws, runs[seed]) / "run.json"
        data = json.loads(path.read_text())
        data["status"] = "failed"
        path.write_text(json.dumps(data))
    score, _ = _score(ws.root, v1)
    assert score["status"] == "fail"
    (finding,) = score["numbers"]["findings"]
    assert finding["code"] == "score.evidence_tampered" and finding["severity"] == "critical"
    problems = finding["evidence"]["problems"][runs[1]]
    assert any("status ('failed', the ledger says 'succeeded')" in p for p in problems), problems


def test_editing_the_unlucky_runs_scores_is_tampering(
    neutral: tuple[Workspace, str, dict[int, str]],
) -> None:
    import duckdb

    from evotree.diagnostics.compare import version_scores
    from evotree.harness.integrity import EvidenceChanged

    ws, v1, runs = neutral
    checked_before = verify_run_evidence(ws, v1)
    for seed in (1, 3, 5):
        parquet = _run_dir(ws, runs[seed]) / "evals.parquet"
        con = duckdb.connect()
        con.execute(
            f"COPY (SELECT * REPLACE (score + 0.4 AS score) FROM read_parquet('{parquet}')) "
            f"TO '{parquet}.new' (FORMAT parquet)"
        )
        con.close()
        Path(f"{parquet}.new").replace(parquet)
    score, _ = _score(ws.root, v1)
    assert score["status"] == "fail"
    (finding,) = score["numbers"]["findings"]
    assert finding["code"] == "score.evidence_tampered"
    assert sorted(finding["evidence"]["runs"]) == sorted(runs[s] for s in (1, 3, 5))
    assert "changed: evals.parquet" in finding["evidence"]["problems"][runs[1]][0]
    # a file swapped between the check and the read is caught as it is read, never used
    with pytest.raises(EvidenceChanged, match="changed after its evidence was checked") as info:
        version_scores(ws, v1, check=checked_before)
    assert info.value.exit_code == 33
    # compare leaves the edited runs out of its numbers and names them
    data = Cli(ws.root).json("compare", "v0", v1, "--bootstrap", "1000")
    assert data["evidence"]["b"]["tampered"] == sorted(runs[s] for s in (1, 3, 5)) and data[
        "n_seeds"
    ] == [3, 3]


def test_a_started_run_that_never_finished_fails_the_gate_and_a_running_one_holds_it(
    tmp_path: Path,
) -> None:
    """A lucky-only candidate passes honestly; then a run the ledger says started (its driver
    killed, its marker and directory removed before any recovery) fails the gate."""
    import fcntl

    from evotree.harness.finish import ledger_run_started
    from evotree.harness.records import RunRecord

    ws = _workspace(tmp_path / "w")
    v1 = recipe_version(ws, "skill = 0.5\nspread = 0.2\n")
    run_versions(ws, ["v0"], seeds=3, jobs=2)
    for seed in (0, 2, 4):
        run_versions(Workspace.open(ws.root), [v1], seeds=1, seed_start=seed)
    score, _ = _score(ws.root, v1)
    assert score["status"] == "pass", score
    ws = Workspace.open(ws.root)
    commit = git(ws.root, "rev-parse", f"evotree/{v1}")
    ghost = RunRecord(
        run_id=f"{v1}-s1-ghost",
        version=v1,
        seed=1,
        status="running",
        commit=commit,
        judge_commit=git(ws.root, "rev-parse", "refs/evotree/champion"),
        judge_version="v0",
        train_command="python train.py",
        eval_command="python judge/eval.py",
        started_at="x",
    )
    ledger_run_started(ws, ghost)
    # while a process drives it (its .active flock is held) the gate waits for it
    marker = ws.root / ".evotree" / "runs" / ".active" / ghost.run_id
    with open(marker, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        assert verify_run_evidence(ws, v1).run(ghost.run_id).state == "running"
        from evotree.gates.evaluation import evaluate_gates
        from evotree.gates.policy import policy_at

        report = evaluate_gates(
            ws, v1, policy=policy_at(ws, "v0", ghost.judge_commit), run_audit=False
        )
        score = report.gates[0]
        assert (
            score.status == "unavailable"
            and ghost.run_id in score.summary
            and "still running" in score.summary
        )
    marker.unlink()
    score, _ = _score(ws.root, v1)
    assert score["status"] == "fail"
    (finding,) = score["numbers"]["findings"]
    assert finding["code"] == "score.evidence_unfinished" and finding["evidence"]["runs"] == [
        ghost.run_id
    ]


def test_unrecorded_and_unverifiable_runs(neutral: tuple[Workspace, str, dict[int, str]]) -> None:
    """A run directory the ledger never heard of is not counted; a run finished without a manifest
    (an evotree from before manifests) cannot be checked and fails the gate."""
    from evotree.harness.finish import ledger_run_finished
    from evotree.harness.records import RunRecord

    ws, v1, runs = neutral
    copy = _run_dir(ws, f"{runs[0]}-copy")
    shutil.copytree(_run_dir(ws, runs[0]), copy)
    data = json.loads((copy / "run.json").read_text())
    data["run_id"] = copy.name
    (copy / "run.json").write_text(json.dumps(data))
    check = verify_run_evidence(ws, v1)
    assert (
        check.ok
        and check.unrecorded == [copy.name]
        and copy.name not in [r.run_id for r in check.runs]
    )
    data = Cli(ws.root).json("compare", "v0", v1, "--bootstrap", "1000")
    assert copy.name not in data["runs"]["b"] and data["evidence"]["b"]["unrecorded"] == [copy.name]
    assert data["evidence"]["ok"] is True and data["caveat"] is None
    # a second run.finished without a manifest, as an older evotree wrote it
    ledger_run_finished(ws, RunRecord.load(_run_dir(ws, runs[3]) / "run.json"))
    check = verify_run_evidence(ws, v1)
    assert check.run(runs[3]).state == "unverified" and not check.ok
    score, _ = _score(ws.root, v1)
    assert (
        score["status"] == "fail"
        and score["numbers"]["findings"][0]["code"] == "score.evidence_unverified"
    )


def test_the_manifest_never_follows_links_or_opens_fifos(tmp_path: Path) -> None:
    """The train phase writes under evidence/: a link to /dev/zero or a FIFO there must not hang
    the hashing, and a link is bound by its target, not by what it points to."""
    import os

    from evotree.harness.manifest import evidence_files, evidence_manifest, record_binding

    run = tmp_path / "run"
    (run / "evidence" / "train").mkdir(parents=True)
    (run / "evidence" / "train" / "signals.jsonl").write_text('{"step": 1}\n')
    os.symlink("/dev/zero", run / "evidence" / "train" / "zero")
    os.symlink("/", run / "evidence" / "train" / "root")
    os.mkfifo(run / "evidence" / "train" / "pipe")
    (run / "evals.parquet").write_bytes(b"PAR1")
    files = evidence_files(run)
    assert set(files) == {
        "evals.parquet",
        "evidence/train/signals.jsonl",
        "evidence/train/zero",
        "evidence/train/root",
        "evidence/train/pipe",
    }
    assert files["evidence/train/zero"].startswith("link:") and files[
        "evidence/train/pipe"
    ].startswith("special:")
    record = {
        "run_id": "r",
        "version": "v1",
        "seed": 0,
        "status": "succeeded",
        "headline": {"value": 0.5},
    }
    manifest = evidence_manifest(run, record)
    assert manifest["n_files"] == 5 and manifest["record"] == record_binding(
        dict(record, notes=["not bound"])
    )
    assert manifest["record"] != record_binding(dict(record, seed=1))
    (run / "evidence" / "train" / "signals.jsonl").write_text('{"step": 2}\n')
    assert evidence_manifest(run, record)["digest"] != manifest["digest"]
