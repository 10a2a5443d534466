"""The ray executor against a real local Ray cluster started once for this module.

Parallel runs whose evidence all lands (through a store that is not the runs directory), a
worker killed mid-run (the attempt fails with its cause, partial evidence is kept but not
taken for complete, the run is retried), and cancellation (running and queued tasks).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import EVOTREE_BIN, Cli, git, validate
from fixtures_ws import recipe_version, skill_repo

from evotree.core.ledger import EventKind
from evotree.core.workspace import Workspace
from evotree.harness.layout import ENV_RUN_ID
from evotree.gates.runs import run_versions
from evotree.harness.records import list_runs

ray = pytest.importorskip("ray")

# a real local Ray cluster per test (about 40 s in all): run with the heavy suite, which CI runs
# after `make test`, to keep `make test` within its 8 minutes
pytestmark = pytest.mark.heavy

TRAIN = """\
import json, os, sys, time, tomllib
from evotree.harness import get_recorder
rec = get_recorder()
recipe = tomllib.load(open("recipe.toml", "rb"))
steps = int(recipe.get("steps", 3))
skill = float(recipe.get("skill", 0.5))
for step in range(1, steps + 1):
    rec.signal(step, loss=1.0 / step, reward=skill)
    rec.rollout_group(step, group_id=f"g{step}", task_id="t1", rewards=[skill, 0.0, skill, 1.0],
                      texts=["a", "b", "c", "d"], lengths=[1, 1, 1, 1])
block = recipe.get("block")
waited = 0.0
while block and os.path.exists(block) and waited < 120:
    time.sleep(0.05)
    waited += 0.05
rec.signal(0, sees_judge=float(os.path.exists("judge")),
           sees_git=float(os.system("git log -1 >/dev/null 2>&1") == 0),
           sees_ray=float(any(k.startswith("RAY_") for k in os.environ)))
json.dump({"skill": skill}, open("model.json", "w"))
if recipe.get("fail"):
    sys.exit(3)
"""

CONFIG = """\
[train]
command = "python train.py"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
[executor]
kind = "ray"
{executor}
"""


def make_ray_repo(path: Path, *, executor: str = "") -> Path:
    return skill_repo(path, train=TRAIN, config=CONFIG.format(executor=executor))


@pytest.fixture(scope="module")
def cluster() -> Any:
    """One local Ray instance (2 CPUs) for the whole module."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def ledger_events(ws: Workspace) -> list[dict[str, Any]]:
    out = git(ws.root, "log", "--format=%B%x00", "refs/evotree/ledger")
    events = []
    for message in out.split("\x00"):
        lines = [line for line in message.strip().splitlines() if line.startswith("{")]
        if lines:
            events.append(json.loads(lines[-1]))
    return events


def wait_for(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def run_pids(run_id: str) -> list[int]:
    needle = f"{ENV_RUN_ID}={run_id}".encode()
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def check_landed(ws: Workspace, record: Any, store: Path, *, skill: float, steps: int) -> None:
    """The run succeeded on a Ray worker and all its evidence reached the store and the driver."""
    import duckdb

    assert record.status == "succeeded", (record.error, record.notes)
    assert record.executor["kind"] == "ray" and record.executor["node_id"]
    assert record.executor["worker_pid"] != os.getpid()  # it ran in a Ray worker
    assert record.headline["value"] == pytest.approx(skill) and record.headline["n"] == 10
    # the store got every file and, last, the manifest, all written by the worker
    manifest = json.loads((store / "runs" / record.run_id / "manifest.json").read_text())
    assert (
        manifest["status"] == "succeeded"
        and manifest["worker_pid"] == record.executor["worker_pid"]
    )
    assert set(manifest["files"]) >= {
        "evidence/train/signals.jsonl",
        "evidence/train/rollouts.jsonl",
        "evidence/eval/evals.jsonl",
        "logs/train.err",
        "logs/eval.out",
    }
    # the driver imported and compacted it: exact rows
    run_dir = ws.root / ".evotree" / "runs" / record.run_id
    con = duckdb.connect()
    signals = con.execute(
        f"SELECT step, metric, value FROM read_parquet('{run_dir}/signals.parquet')"
    ).fetchall()
    assert sorted(s for s, m, _ in signals if m == "loss") == list(range(1, steps + 1))
    seen = {m: v for s, m, v in signals if s == 0}
    assert seen == {
        "sees_judge": 0.0,
        "sees_git": 0.0,
        "sees_ray": 0.0,
    }  # visibility boundary holds
    n_rollouts = con.execute(
        f"SELECT count(*) FROM read_parquet('{run_dir}/rollouts.parquet')"
    ).fetchone()[0]
    assert n_rollouts == 4 * steps
    scores = con.execute(
        f"SELECT avg(score), count(*) FROM read_parquet('{run_dir}/evals.parquet')"
    ).fetchone()
    assert scores == (pytest.approx(skill), 10)
    assert record.phases["train"]["returncode"] == 0 and record.phases["eval"]["returncode"] == 0
    assert record.usage["runs"] == 1 and record.usage["steps"] == steps
    validate(json.loads((run_dir / "run.json").read_text()), "run")


def test_parallel_runs_on_ray_evidence_lands_and_code_failures_are_not_retried(
    cluster: str, tmp_path: Path
) -> None:
    store = tmp_path / "shared-store"
    ws = Workspace.open(
        make_ray_repo(tmp_path / "w", executor=f'evidence_uri = "file://{store}"\nmax_retries = 2')
    )
    v1, v2 = (
        recipe_version(ws, "skill = 0.8\nsteps = 3\n"),
        recipe_version(ws, "skill = 0.3\nsteps = 2\n"),
    )
    v3 = recipe_version(ws, "skill = 0.5\nsteps = 1\nfail = true\n")
    events: list[tuple[str, str]] = []
    records = run_versions(
        ws, [v1, v2, v3], progress=lambda rid, ev, info: events.append((rid, ev))
    )
    assert [r.version for r in records] == [v1, v2, v3]
    check_landed(ws, records[0], store, skill=0.8, steps=3)
    check_landed(ws, records[1], store, skill=0.3, steps=2)
    failed = records[2]  # the candidate's own failure: failed, not retried, evidence complete
    assert failed.status == "failed" and "train phase exited with 3" in failed.error
    assert failed.executor["attempt"] == 0 and failed.evidence.get("complete") is not False
    for record in records:
        assert {e for rid, e in events if rid == record.run_id} >= {"started", "phase", "finished"}
    # only the driver wrote the ledger: one run.started and one run.finished per run
    kinds = [e["kind"] for e in ledger_events(ws)]
    assert (
        kinds.count(EventKind.RUN_STARTED.value) == 3
        and kinds.count(EventKind.RUN_FINISHED.value) == 3
    )
    tree = {v["id"]: v for v in Cli(ws.root).json("tree")["versions"]}
    assert tree[v1]["status"] == "evaluated" and tree[v1]["headline"]["value"] == pytest.approx(0.8)
    assert tree[v3]["status"] == "failed"
    assert not list((ws.root / ".evotree" / "runs" / ".active").iterdir())


@pytest.mark.slow
def test_versions_times_seeds_on_ray(cluster: str, tmp_path: Path) -> None:
    ws = Workspace.open(make_ray_repo(tmp_path / "w"))
    v1, v2 = (
        recipe_version(ws, "skill = 0.8\nsteps = 3\n"),
        recipe_version(ws, "skill = 0.3\nsteps = 2\n"),
    )
    records = run_versions(ws, [v1, v2], seeds=3)
    assert [(r.version, r.seed) for r in records] == [(v, s) for v in (v1, v2) for s in range(3)]
    for record in records:
        check_landed(
            ws,
            record,
            ws.root / ".evotree" / "store",
            skill=0.8 if record.version == v1 else 0.3,
            steps=3 if record.version == v1 else 2,
        )


def _gate(tmp_path: Path) -> tuple[Path, str]:
    """A file outside the repository that holds the train phase while it exists: the sandbox shows
    it to the phase only because the champion's policy lists its folder in [sandbox].read_paths."""
    folder = tmp_path / "gate"
    folder.mkdir()
    block = folder / "block"
    block.write_text("hold the train phase")
    return block, f'\n[sandbox]\nread_paths = ["{folder}"]\n'


def test_worker_killed_mid_run_fails_with_cause_and_is_retried(
    cluster: str, tmp_path: Path
) -> None:
    block, gate = _gate(tmp_path)
    ws = Workspace.open(
        make_ray_repo(tmp_path / "w", executor="max_retries = 1\nsync_seconds = 0.2" + gate)
    )
    v1 = recipe_version(ws, f'skill = 0.7\nsteps = 2\nblock = "{block}"\n')
    store = ws.root / ".evotree" / "store" / "runs"
    result: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: result.update(records=run_versions(ws, [v1])))
    thread.start()
    try:
        first = wait_for(
            lambda: next(iter(store.glob("*/worker.json")), None), 60, "the first worker"
        )
        run_id = first.parent.name
        # partial evidence reached the store (periodic sync) while the train phase is blocked
        wait_for(
            lambda: (first.parent / "evidence" / "train" / "signals.jsonl").exists(),
            30,
            "a partial sync",
        )
        orphans = wait_for(lambda: run_pids(run_id), 10, "the train process")
        worker_pid = json.loads(first.read_text())["worker_pid"]
        os.kill(worker_pid, signal.SIGKILL)  # the Ray worker executing the task dies
        retry = wait_for(lambda: (store / f"{run_id}-r1" / "worker.json").exists(), 60, "the retry")
        assert retry
        # the clean-up task killed what the dead worker's train phase left on the node
        wait_for(
            lambda: (
                not [
                    p
                    for p in orphans
                    if Path(f"/proc/{p}").exists()
                    and b"zombie" not in Path(f"/proc/{p}/status").read_bytes().lower()
                ]
            ),
            10,
            "the orphaned train process to die",
        )
    finally:
        block.unlink(missing_ok=True)
        thread.join(timeout=120)
    failed, succeeded = result["records"]
    assert failed.run_id == run_id and succeeded.run_id == f"{run_id}-r1"
    assert failed.status == "failed"
    assert "worker running this run died" in failed.error and "WorkerCrashedError" in failed.error
    assert "retried (attempt 1 of 1)" in failed.error
    assert failed.headline is None and failed.evidence.get("complete") is False
    assert any("evidence incomplete" in note for note in failed.notes)
    assert failed.evidence["rows"]["signals"] >= 2  # what arrived is kept for inspection...
    assert not (store / run_id / "manifest.json").exists()  # ...but it was never complete
    assert failed.usage["runs"] == 1  # the lost attempt is charged
    assert succeeded.status == "succeeded" and succeeded.executor["retry_of"] == run_id
    assert succeeded.executor["attempt"] == 1 and succeeded.headline["value"] == pytest.approx(0.7)
    finished = [e for e in ledger_events(ws) if e["kind"] == EventKind.RUN_FINISHED.value]
    assert sorted(e["data"]["status"] for e in finished) == ["failed", "succeeded"]
    tree = {v["id"]: v for v in Cli(ws.root).json("tree")["versions"]}
    assert tree[v1]["status"] == "evaluated"  # the failed attempt does not hide the retry's score


@pytest.mark.heavy
def test_cancel_stops_running_and_queued_ray_tasks(cluster: str, tmp_path: Path) -> None:
    block, gate = _gate(tmp_path)
    ws = Workspace.open(make_ray_repo(tmp_path / "w", executor=gate))
    v1 = recipe_version(ws, f'skill = 0.6\nsteps = 1\nblock = "{block}"\n')
    store = ws.root / ".evotree" / "store" / "runs"
    cancel = threading.Event()
    result: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: result.update(records=run_versions(ws, [v1], seeds=3, cancel=cancel))
    )
    thread.start()
    try:

        def in_train(run_id: str) -> bool:  # its train script runs (blocked), not the task's set-up
            for pid in run_pids(run_id):
                try:
                    if b"train.py" in Path(f"/proc/{pid}/cmdline").read_bytes():
                        return True
                except OSError:
                    continue
            return False

        def running() -> list[str] | None:
            live = [p.parent.name for p in store.glob("*/worker.json") if in_train(p.parent.name)]
            return live if len(live) == 2 else None

        started = wait_for(running, 60, "two running train phases")
        cancel.set()
        # what cancellation must achieve, not how fast: the request ends while the block still
        # holds the train phases (so they were stopped, not released), whatever the machine's load
        thread.join(timeout=300)
        assert not thread.is_alive(), (
            "the cancelled request did not end while its tasks were blocked"
        )
    finally:
        block.unlink(missing_ok=True)
        thread.join(timeout=60)
    records = result["records"]
    assert len(records) == 3 and {r.status for r in records} == {"cancelled"}
    # no run is left `running`, on disk or as a reservation in the ledger, and no process of them lives
    assert {r.status for r in list_runs(ws, version=v1)} == {"cancelled"}
    assert not (ws.ledger.meta().get("reservations") or {})
    assert not [pid for r in records for pid in run_pids(r.run_id)]
    ran = [r for r in records if r.run_id in started]
    queued = [r for r in records if r.run_id not in started]
    assert len(ran) == 2 and len(queued) == 1
    for record in ran:
        # its process group was stopped (the record may come back before the worker's phase entry)
        assert "train" not in record.phases or record.phases["train"]["returncode"] != 0
        assert record.usage["runs"] == 1 and not run_pids(record.run_id)
    assert queued[0].usage == {} and "before a Ray worker started it" in queued[0].error
    assert not list((ws.root / ".evotree" / "runs" / ".active").iterdir())


@pytest.mark.slow
def test_cli_executor_ray_ctrl_c_marks_runs_cancelled(cluster: str, tmp_path: Path) -> None:
    block = tmp_path / "block"
    block.write_text("hold")
    ws = Workspace.open(make_ray_repo(tmp_path / "w"))
    v1 = recipe_version(ws, f'skill = 0.6\nsteps = 1\nblock = "{block}"\n')
    proc = subprocess.Popen(
        [
            str(EVOTREE_BIN),
            "-C",
            str(ws.root),
            "run",
            v1,
            "--executor",
            "ray",
            "--address",
            cluster,
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    try:
        store = ws.root / ".evotree" / "store" / "runs"
        first = wait_for(lambda: next(iter(store.glob("*/worker.json")), None), 90, "the worker")
        wait_for(lambda: run_pids(first.parent.name), 20, "the train phase")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        block.unlink(missing_ok=True)
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert json.loads(out)["error"]["code"] == "cancelled"
    (record,) = list_runs(ws)
    assert record.status == "cancelled" and not run_pids(record.run_id)


def test_cli_run_executor_ray_json(cluster: str, tmp_path: Path) -> None:
    repo = make_ray_repo(tmp_path / "w")
    ws = Workspace.open(repo)
    v1 = recipe_version(ws, "skill = 0.9\nsteps = 1\n")
    out = Cli(repo).json("run", v1, "--executor", "ray", "--address", cluster)
    (record,) = out["runs"]
    validate(record, "run")
    assert record["status"] == "succeeded" and record["executor"]["kind"] == "ray"
    assert record["headline"]["value"] == pytest.approx(0.9)
    # the local executor still runs the same workspace when asked
    (local,) = Cli(repo).json("run", v1, "--executor", "local")["runs"]
    assert local["executor"] == {"kind": "local"} and local["headline"]["value"] == pytest.approx(
        0.9
    )


@pytest.mark.slow
def test_driver_killed_ray_run_is_recovered_as_crashed_with_incomplete_evidence(
    cluster: str, tmp_path: Path
) -> None:
    block = tmp_path / "block"
    block.write_text("hold")
    ws = Workspace.open(make_ray_repo(tmp_path / "w", executor="sync_seconds = 0.2"))
    v1 = recipe_version(ws, f'skill = 0.6\nsteps = 2\nblock = "{block}"\n')
    store = ws.root / ".evotree" / "store" / "runs"
    proc = subprocess.Popen(
        [
            str(EVOTREE_BIN),
            "-C",
            str(ws.root),
            "run",
            v1,
            "--executor",
            "ray",
            "--address",
            cluster,
            "--json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        first = wait_for(lambda: next(iter(store.glob("*/worker.json")), None), 90, "the worker")
        run_id = first.parent.name
        wait_for(
            lambda: (first.parent / "evidence" / "train" / "signals.jsonl").exists(),
            30,
            "a partial sync",
        )
        proc.kill()  # the driver dies; Ray ends its job's tasks, the watchdog their train phase
        proc.wait()
        wait_for(lambda: not run_pids(run_id), 60, "the train phase to be stopped")
    finally:
        block.unlink(missing_ok=True)
        if proc.poll() is None:
            proc.kill()
    (record,) = Cli(ws.root).json("runs")["runs"]  # every command recovers crashed runs first
    assert record["run_id"] == run_id and record["status"] == "crashed"
    assert record["evidence"]["complete"] is False and record["headline"] is None
    assert record["evidence"]["rows"]["signals"] >= 2
    assert any("imported" in note and "evidence store" in note for note in record["notes"])


@pytest.mark.slow
def test_lost_worker_is_not_retried_past_the_runs_budget(cluster: str, tmp_path: Path) -> None:
    block = tmp_path / "block"
    block.write_text("hold")
    ws = Workspace.open(
        make_ray_repo(
            tmp_path / "w", executor="max_retries = 3\n[budget]\nmax_runs_per_version = 1"
        )
    )
    v1 = recipe_version(ws, f'skill = 0.6\nsteps = 1\nblock = "{block}"\n')
    store = ws.root / ".evotree" / "store" / "runs"
    result: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: result.update(records=run_versions(ws, [v1])))
    thread.start()
    try:
        first = wait_for(lambda: next(iter(store.glob("*/worker.json")), None), 60, "the worker")
        wait_for(lambda: run_pids(first.parent.name), 20, "the train phase")
        os.kill(json.loads(first.read_text())["worker_pid"], signal.SIGKILL)
        thread.join(timeout=60)
    finally:
        block.unlink(missing_ok=True)
        thread.join(timeout=60)
    (record,) = result["records"]
    assert record.status == "failed" and "WorkerCrashedError" in record.error
    assert "not retried: budget.max_runs_per_version = 1 would be exceeded" in record.error


def test_a_run_no_node_can_hold_is_refused_before_anything_starts(
    cluster: str, tmp_path: Path
) -> None:
    from evotree.harness.executors import ExecutorError

    ws = Workspace.open(make_ray_repo(tmp_path / "w", executor="gpus = 1.0\ncpus = 1.0"))
    v1 = recipe_version(ws, "skill = 0.5\nsteps = 1\n")
    with pytest.raises(
        ExecutorError, match=r"no node of the Ray cluster can hold one run: .*GPU 1"
    ) as info:
        run_versions(ws, [v1])
    assert info.value.exit_code == 35 and "gpus" in info.value.fix
    # the request was reserved and released; no run started or finished
    assert not list_runs(ws) and not [
        e for e in ledger_events(ws) if e["kind"] in ("run.started", "run.finished")
    ]


@pytest.mark.slow
def test_runs_get_the_cpus_of_executor_section(cluster: str, tmp_path: Path) -> None:
    from datetime import datetime

    ws = Workspace.open(make_ray_repo(tmp_path / "w", executor="cpus = 2.0"))
    v1 = recipe_version(ws, "skill = 0.5\nsteps = 1\n")
    a, b = run_versions(ws, [v1], seeds=2)  # each run takes both CPUs of the cluster: one at a time

    def span(record: Any) -> tuple[datetime, datetime]:
        return (
            datetime.fromisoformat(record.phases["train"]["started_at"]),
            datetime.fromisoformat(record.phases["eval"]["ended_at"]),
        )

    (a0, a1), (b0, b1) = span(a), span(b)
    assert a1 <= b0 or b1 <= a0, "two runs asking for 2 CPUs each overlapped on a 2-CPU cluster"


def _forge_store(store_run: Path) -> None:
    """What train code with write access to a shared store could do after its worker returned:
    replace the evals with perfect scores and rewrite manifest.json to match them."""
    import hashlib

    forged = "".join(
        json.dumps({"split": "validation", "task_id": f"val-{i}", "score": 1.0}) + "\n"
        for i in range(10)
    ).encode()
    (store_run / "evidence" / "eval" / "evals.jsonl").write_bytes(forged)
    manifest = json.loads((store_run / "manifest.json").read_text())
    manifest["files"]["evidence/eval/evals.jsonl"] = {
        "size": len(forged),
        "sha256": hashlib.sha256(forged).hexdigest(),
    }
    (store_run / "manifest.json").write_text(json.dumps(manifest))


def test_forged_store_evidence_and_failing_fetch_are_not_taken_for_results(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The driver trusts the manifest the task returned, never the store's copy; a store whose
    fetch raises (not an OSError) gives a failed, incomplete run instead of aborting the request."""
    from evotree.harness.executors.store import EvidenceStore

    store = tmp_path / "shared-store"
    ws = Workspace.open(make_ray_repo(tmp_path / "w", executor=f'evidence_uri = "file://{store}"'))
    v1, v2 = (
        recipe_version(ws, "skill = 0.3\nsteps = 1\n"),
        recipe_version(ws, "skill = 0.4\nsteps = 1\n"),
    )
    real_fetch = EvidenceStore.fetch

    def fetch(self: EvidenceStore, run_id: str, local_root: Path, expected: Any = None) -> Any:
        if run_id.startswith(v2):
            raise RuntimeError("s3fs: connection reset")  # fsspec backends raise more than OSError
        _forge_store(store / "runs" / run_id)  # after the task returned, before the driver reads
        return real_fetch(self, run_id, local_root, expected=expected)

    monkeypatch.setattr(EvidenceStore, "fetch", fetch)  # the driver's side only
    forged, unreachable = run_versions(ws, [v1, v2])
    assert (
        forged.status == "failed"
        and forged.headline is None
        and forged.evidence["complete"] is False
    )
    assert "evidence/eval/evals.jsonl does not match the manifest" in forged.error
    assert unreachable.status == "failed" and unreachable.headline is None
    assert (
        "fetching the evidence" in unreachable.error
        and "RuntimeError: s3fs: connection reset" in unreachable.error
    )
    assert unreachable.evidence["complete"] is False and unreachable.usage["runs"] == 1
    assert {r.status for r in list_runs(ws)} == {"failed"}
    assert not list((ws.root / ".evotree" / "runs" / ".active").iterdir())


class _DriverBug(BaseException):
    """Escapes every ``except Exception``: stands for a driver failure mid-request."""


def test_an_aborted_request_leaves_no_run_running(
    cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evotree.harness.executors.store import EvidenceStore

    block = tmp_path / "block"
    block.write_text("hold")
    ws = Workspace.open(make_ray_repo(tmp_path / "w"))
    quick, slow = (
        recipe_version(ws, "skill = 0.3\nsteps = 1\n"),
        recipe_version(ws, f'skill = 0.6\nsteps = 1\nblock = "{block}"\n'),
    )

    def fetch(self: EvidenceStore, run_id: str, local_root: Path, expected: Any = None) -> Any:
        raise _DriverBug("boom")

    monkeypatch.setattr(EvidenceStore, "fetch", fetch)
    try:
        with pytest.raises(_DriverBug):
            run_versions(ws, [quick, slow])  # the quick run settles (and blows up) while slow runs
    finally:
        block.unlink(missing_ok=True)
    records = {r.version: r for r in list_runs(ws)}
    assert set(records) == {quick, slow}
    for record in records.values():
        assert record.status == "failed" and record.ended_at and record.headline is None
        assert "the driver stopped this request (_DriverBug: boom)" in record.error
        assert record.evidence.get("complete") is False and record.usage["runs"] == 1
    kinds = [e["kind"] for e in ledger_events(ws)]
    assert kinds.count(EventKind.RUN_FINISHED.value) == 2
    assert not list((ws.root / ".evotree" / "runs" / ".active").iterdir())
    wait_for(
        lambda: not any(run_pids(r.run_id) for r in records.values()),
        30,
        "the slow run's processes to end",
    )
