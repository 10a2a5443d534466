"""Evidence that counts is evidence someone trusted produced.

The attack of the issue: a second clone of a shared remote rewrote a worse version's evals to
1.0, recomputed the run manifests with evotree's own functions and fast-forwarded the ledger;
after `evotree pull`, compare showed a large positive delta and every gate passed. Now a run
counts only when this workspace's evotree recorded it (its MAC) or a runner key the champion's
policy lists signed it (harness/provenance.py); anything else is `foreign`: listed, never counted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, commit_file
from fixtures_ws import bare_remote, clone_as, make_key, scored_config, scored_project
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace

JUDGE = """\
import json, os
from evotree.harness import get_recorder
rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
seed = int(os.environ["EVOTREE_SEED"])
for i in range(20):
    rec.eval_result("validation", f"task-{i}", min(1.0, max(0.0, model["skill"] + (i % 5 - 2) * 0.02 + seed * 0.01)))
"""


def _keypair(path: Path) -> str:
    return make_key(path.parent, path.name)[1]


def _workspace(path: Path, runner_keys: str = "") -> Workspace:
    config = scored_config(
        min_seeds=2, champion_seeds=2, bootstrap_samples=500, max_runs_per_version=8
    )
    files = {"gates/runner_keys": runner_keys} if runner_keys else {}
    return Workspace.open(
        scored_project(
            path, judge=JUDGE, config=config, files=files, message="recipe, judge, policy"
        )
    )


# ----------------------------------------------------------------------------- the rule, unit by unit
class _Record:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def _fields(record: _Record, provenance: dict[str, Any], **changed: Any) -> dict[str, Any]:
    data = {
        "run_id": record.run_id,
        "seed": record.seed,
        "status": record.status,
        "headline": record.headline,
        "evidence": {"digest": "sha256:" + "ab" * 32},
        "provenance": provenance,
    }
    data.update(changed)
    return data


def test_check_run_accepts_only_this_workspace_or_a_listed_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evotree.harness.provenance import attest_run, check_run, key_path

    ours = _workspace(tmp_path / "ours")
    theirs = _workspace(tmp_path / "theirs")
    record = _Record(
        run_id="v0-s0-abc",
        version="v0",
        seed=0,
        status="succeeded",
        headline={"metric": "validation/mean_score", "value": 0.5, "n": 20, "scored": 20},
        commit="c" * 40,
        judge_commit="d" * 40,
    )
    manifest = {"digest": "sha256:" + "ab" * 32}
    started = {"commit": "c" * 40, "judge_commit": "d" * 40}
    monkeypatch.delenv("EVOTREE_RUNNER_KEY", raising=False)
    prov = attest_run(ours, record, manifest)
    assert key_path(ours).is_file() and oct(key_path(ours).stat().st_mode & 0o777) == "0o600"
    assert not str(key_path(ours)).startswith(
        str(ours.state_dir)
    )  # not in .evotree/: git clean keeps it
    assert check_run(ours, "v0-s0-abc", "v0", started, _fields(record, prov)).source == "local"
    # every vouched-for fact is bound: a changed headline, digest, seed, status or commit is foreign
    headline = {**record.headline, "value": 1.0}
    for changed in (
        {"headline": headline},
        {"evidence": {"digest": "sha256:" + "cd" * 32}},
        {"seed": 1},
        {"status": "failed"},
    ):
        verdict = check_run(ours, "v0-s0-abc", "v0", started, _fields(record, prov, **changed))
        assert verdict.source == "foreign" and "edited" in str(verdict.reason), changed
    assert check_run(ours, "v0-s0-abc", "v1", started, _fields(record, prov)).source == "foreign"
    assert (
        check_run(
            ours, "v0-s0-abc", "v0", {**started, "commit": "e" * 40}, _fields(record, prov)
        ).source
        == "foreign"
    )
    # no provenance, or another workspace's: foreign
    assert "no provenance" in str(
        check_run(ours, "v0-s0-abc", "v0", started, _fields(record, None)).reason
    )
    other = attest_run(theirs, record, manifest)
    verdict = check_run(ours, "v0-s0-abc", "v0", started, _fields(record, other))
    assert verdict.source == "foreign" and "another workspace" in str(verdict.reason)
    assert check_run(theirs, "v0-s0-abc", "v0", started, _fields(record, other)).source == "local"

    # a runner key: counts where the policy lists it, and only there
    listed, unlisted = tmp_path / "listed", tmp_path / "unlisted"
    listed_pub, unlisted_pub = _keypair(listed), _keypair(unlisted)
    signed = attest_run(
        theirs,
        record,
        manifest,
        env={"EVOTREE_RUNNER_KEY": str(listed), "EVOTREE_RUNNER_PRINCIPAL": "gpu-node-1"},
    )
    assert signed["runner"]["principal"] == "gpu-node-1"
    allowed = f"gpu-node-1 {listed_pub}\n"
    verdict = check_run(
        ours, "v0-s0-abc", "v0", started, _fields(record, signed), runner_keys=allowed
    )
    assert verdict.source == "runner" and verdict.signer == "gpu-node-1"
    assert (
        check_run(ours, "v0-s0-abc", "v0", started, _fields(record, signed), runner_keys="").source
        == "foreign"
    )
    assert (
        check_run(
            ours, "v0-s0-abc", "v0", started, _fields(record, signed, seed=5), runner_keys=allowed
        ).source
        == "foreign"
    )
    # the principal must match the key's line; an unlisted key naming a listed principal is foreign
    forged = attest_run(
        theirs,
        record,
        manifest,
        env={"EVOTREE_RUNNER_KEY": str(unlisted), "EVOTREE_RUNNER_PRINCIPAL": "gpu-node-1"},
    )
    verdict = check_run(
        ours, "v0-s0-abc", "v0", started, _fields(record, forged), runner_keys=allowed
    )
    assert verdict.source == "foreign" and "gpu-node-1" in str(verdict.reason)
    assert unlisted_pub not in allowed


# ----------------------------------------------------------------------------- the attack, end to end
def _forge(ws: Workspace, source: Path, run_id: str, *, score: float | None) -> str:
    """A copy of ``source`` as run ``run_id`` (evals set to ``score``), recorded in ``ws``'s ledger
    with evotree's own functions: a manifest that matches, a ledger that fast-forwards."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from evotree.harness.finish import ledger_run_finished, ledger_run_started
    from evotree.harness.manifest import evidence_manifest
    from evotree.harness.records import RunRecord, runs_dir

    target = runs_dir(ws) / run_id
    shutil.copytree(source, target)
    data = json.loads((target / "run.json").read_text())
    data["run_id"] = run_id
    if score is not None:
        table = pq.read_table(target / "evals.parquet")
        column = table.schema.get_field_index("score")
        table = table.set_column(
            column,
            table.schema.field(column),
            pa.array([score] * table.num_rows, type=table.schema.field(column).type),
        )
        pq.write_table(table, target / "evals.parquet")
        data["headline"] = {**data["headline"], "value": score}
    (target / "run.json").write_text(json.dumps(data))
    record = RunRecord.load(target / "run.json")
    ledger_run_started(ws, record)
    ledger_run_finished(ws, record, evidence_manifest(target, data))
    return run_id


@pytest.mark.heavy
def test_forged_runs_pulled_from_a_remote_are_foreign_and_never_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evotree.gates.runs import run_versions
    from evotree.harness.integrity import verify_run_evidence
    from evotree.harness.provenance import FOREIGN_NOTE
    from evotree.harness.records import runs_dir
    from evotree.harness.share import archive_runs

    monkeypatch.delenv("EVOTREE_RUNNER_KEY", raising=False)
    runner, stranger = tmp_path / "runner-key", tmp_path / "stranger-key"
    runner_pub, _ = _keypair(runner), _keypair(stranger)
    a = _workspace(tmp_path / "a", runner_keys=f"team-runner {runner_pub}\n")
    v1 = create_version(a, hypothesis="worse", parent="champion")
    commit_file(a.root / v1.worktree, "recipe.toml", "skill = 0.3\n", "worse recipe")
    records = run_versions(a, ["v0"], seeds=2, jobs=2) + run_versions(
        Workspace.open(a.root), ["v1"], seeds=2, jobs=2
    )
    assert all(r.status == "succeeded" for r in records), [r.error for r in records]
    honest = Cli(a.root).json("compare", "v0", "v1")
    assert honest["delta"] < -0.1

    bare = bare_remote(a.root, tmp_path / "remote.git", how="evotree")

    # the attacker: a clone of the same remote, with evotree's own functions
    b_root = clone_as(bare, tmp_path / "b", "Mallory", "mallory@example.com")
    assert len(Cli(b_root).json("pull")["restored"]) == 4
    b = Workspace.open(b_root)
    v1_runs = sorted(r.run_id for r in records if r.version == "v1")
    v0_runs = sorted(r.run_id for r in records if r.version == "v0")
    monkeypatch.setenv("EVOTREE_RUNNER_KEY", str(stranger))  # signed, but by a key nobody listed
    monkeypatch.setenv("EVOTREE_RUNNER_PRINCIPAL", "team-runner")
    forged = [
        _forge(b, runs_dir(b) / rid, f"{rid}-x{i}", score=1.0) for i, rid in enumerate(v1_runs * 2)
    ]
    # and one honest copy signed by the listed runner key: that one counts in a (a team machine)
    monkeypatch.setenv("EVOTREE_RUNNER_KEY", str(runner))
    vouched = _forge(b, runs_dir(b) / v0_runs[0], f"{v0_runs[0]}-r", score=None)
    monkeypatch.delenv("EVOTREE_RUNNER_KEY")
    monkeypatch.delenv("EVOTREE_RUNNER_PRINCIPAL")
    # in the attacker's own workspace the forgery is perfectly consistent: manifests match, its key signed
    assert {
        r.run_id: r.state for r in verify_run_evidence(b, "v1").runs if r.run_id in forged
    } == dict.fromkeys(forged, "ok")
    assert archive_runs(b).archived and Cli(b_root).json("push")["rejected"] == []

    # the victim pulls: the ledger fast-forwards, the forged evidence is written back...
    pulled = Cli(a.root).json("pull")
    assert "refs/evotree/ledger" in pulled["updated"] and sorted(pulled["restored"]) == sorted(
        [*forged, vouched]
    )
    a = Workspace.open(a.root)
    # ... and counts for nothing
    states = {r.run_id: r for r in verify_run_evidence(a, "v1").runs}
    assert {rid: states[rid].state for rid in forged} == dict.fromkeys(forged, "foreign")
    assert "do not list" in states[forged[0]].problems[0]
    assert {rid: states[rid].state for rid in v1_runs} == dict.fromkeys(v1_runs, "ok")
    assert {r.run_id: r.state for r in verify_run_evidence(a, "v0").runs}[
        vouched
    ] == "ok"  # a listed runner
    listing = {r["run_id"]: r for r in Cli(a.root).json("runs")["runs"]}
    assert all(listing[rid]["notes"][0].startswith(FOREIGN_NOTE) for rid in forged)
    assert not any(
        str(n).startswith(FOREIGN_NOTE)
        for rid in [*v1_runs, vouched]
        for n in listing[rid]["notes"]
    )
    after = Cli(a.root).json("compare", "v0", "v1")
    assert not set(forged) & set(after["runs"]["b"]) and after["delta"] < -0.1
    assert sorted(after["runs"]["b"]) == v1_runs
    score = next(g for g in _gates(a.root, "v1")["gates"] if g["name"] == "score")
    assert score["status"] != "pass"
    assert sorted(score["numbers"]["evidence"]["candidate"]["foreign"]) == sorted(forged)


def _gates(root: Path, version: str) -> dict[str, Any]:
    """`evotree gates VERSION --json` (its exit code says pass or fail; the report is what is checked)."""
    from click.testing import CliRunner

    from evotree.cli.main import cli

    result = CliRunner().invoke(
        cli, ["-C", str(root), "gates", version, "--json"], catch_exceptions=False
    )
    return json.loads(result.stdout)


def test_a_workspace_key_that_cannot_be_made_never_loses_the_run(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attestation fails closed for counting, never for recording: no key, the run is foreign."""
    from evotree.harness import provenance

    monkeypatch.setattr(
        provenance, "key_path", lambda _ws: ws.root / "no-such-dir" / "x" / "provenance.key"
    )
    monkeypatch.setattr(
        Path,
        "mkdir",
        lambda *a, **k: (_ for _ in ()).throw(PermissionError(13, "Permission denied")),
    )
    record = _Record(
        run_id="v0-s0-k",
        version="v0",
        seed=0,
        status="succeeded",
        headline=None,
        commit="c" * 40,
        judge_commit=None,
    )
    prov = provenance.attest_run(ws, record, None)
    assert "error" in prov and "mac" not in prov
    monkeypatch.undo()
    verdict = provenance.check_run(ws, "v0-s0-k", "v0", None, _fields(record, prov, evidence=None))
    assert verdict.source == "foreign" and "without an attestation" in str(verdict.reason)
