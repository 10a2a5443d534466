"""The slurm executor: each (version, seed) one job through submitit, the same sandbox on the node,
evidence back through the configured store.

submitit's local executor runs the jobs as real processes of this machine (the same pickled job
folder, result pickles and cancel as on a cluster). A real single-node Slurm (Debian's
``slurm-wlm`` and ``munge``, configured and started by the test) runs the same request where the
daemons can start here; the test says why it is skipped otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import git
from fixtures_ws import recipe_version, skill_repo

from evotree.core.ledger import EventKind
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
from evotree.harness.executors import ExecutorError
from evotree.harness.executors import slurm as slurm_executor
from evotree.harness.executors.slurm import SlurmExecutor, job_folder

pytest.importorskip("submitit")

TRAIN = """\
import json, os, sys, time, tomllib
from evotree.harness import get_recorder
rec = get_recorder()
recipe = tomllib.load(open("recipe.toml", "rb"))
steps, skill = int(recipe.get("steps", 3)), float(recipe.get("skill", 0.5))
if recipe.get("deaf"):  # ignores SIGTERM: its node stops it with SIGKILL after the grace
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
for step in range(1, steps + 1):
    rec.signal(step, loss=1.0 / step, reward=skill)
block = recipe.get("block")
waited = 0.0
while block and waited < 120:
    time.sleep(0.05)
    waited += 0.05
rec.signal(0, sees_judge=float(os.path.exists("judge")),
           sees_git=float(os.system("git log -1 >/dev/null 2>&1") == 0),
           sees_slurm=float(any(k.startswith(("SLURM_", "SUBMITIT_")) for k in os.environ)),
           sees_folder=float(os.path.exists(recipe.get("probe", "/nonexistent"))))
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
evidence_uri = "{store}"
sync_seconds = 0.3
"""


def make_slurm_repo(path: Path, store: Path, *, kind: str = "") -> Workspace:
    config = CONFIG.format(store=store) + (f'kind = "{kind}"\n' if kind else "")
    return Workspace.open(skill_repo(path, train=TRAIN, config=config))


def signals(ws: Workspace, run_id: str) -> dict[tuple[int, str], float]:
    import duckdb

    path = ws.root / ".evotree" / "runs" / run_id / "signals.parquet"
    rows = (
        duckdb.connect()
        .execute(f"SELECT step, metric, value FROM read_parquet('{path}')")
        .fetchall()
    )
    return {(s, m): v for s, m, v in rows}


def check_landed(
    ws: Workspace, record: Any, store: Path, *, skill: float, steps: int, cluster: str
) -> None:
    """The run succeeded in its own job and all its evidence came back through the store."""
    assert record.status == "succeeded", (record.error, record.notes)
    assert record.executor["kind"] == "slurm" and record.executor["cluster"] == cluster
    assert (
        record.executor["job_id"] and record.executor["worker_pid"] != os.getpid()
    )  # its own process
    assert record.headline["value"] == pytest.approx(skill) and record.headline["n"] == 10
    manifest = json.loads((store / "runs" / record.run_id / "manifest.json").read_text())
    assert (
        manifest["status"] == "succeeded"
        and manifest["worker_pid"] == record.executor["worker_pid"]
    )
    assert set(manifest["files"]) >= {
        "evidence/train/signals.jsonl",
        "evidence/eval/evals.jsonl",
        "logs/train.err",
    }
    seen = signals(ws, record.run_id)
    assert sorted(s for (s, m) in seen if m == "loss") == list(range(1, steps + 1))
    # the sandbox on the node: no judge, no repository, no scheduler variables, no job folder
    assert {m: v for (s, m), v in seen.items() if s == 0} == {
        "sees_judge": 0.0,
        "sees_git": 0.0,
        "sees_slurm": 0.0,
        "sees_folder": 0.0,
    }
    assert record.phases["train"]["sandbox"] == "bwrap" and record.phases["eval"]["returncode"] == 0
    assert record.usage["runs"] == 1 and record.usage["steps"] == steps


@pytest.mark.heavy
def test_runs_as_submitit_jobs_with_evidence_through_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    monkeypatch.setenv("EVOTREE_SLURM_CLUSTER", "local")
    # the shared job folder outside /tmp (which is private in a sandbox): a phase must still not see it
    shared = Path(tempfile.mkdtemp(prefix="evotree-test-slurm-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    monkeypatch.setenv("EVOTREE_SLURM_FOLDER", str(shared))
    store = tmp_path / "shared-store"
    ws = make_slurm_repo(tmp_path / "w", store)
    assert job_folder(ws) == shared
    v1 = recipe_version(ws, f'skill = 0.8\nsteps = 3\nprobe = "{shared / "jobs"}"\n')
    v2 = recipe_version(ws, f'skill = 0.3\nsteps = 2\nprobe = "{shared / "packages"}"\n')
    v3 = recipe_version(ws, "skill = 0.5\nsteps = 1\nfail = true\n")
    events: list[tuple[str, str]] = []
    records = run_versions(
        ws, [v1, v2, v3], executor="slurm", progress=lambda rid, ev, info: events.append((rid, ev))
    )
    assert [r.version for r in records] == [v1, v2, v3]
    check_landed(ws, records[0], store, skill=0.8, steps=3, cluster="local")
    check_landed(ws, records[1], store, skill=0.3, steps=2, cluster="local")
    assert len({r.executor["job_id"] for r in records}) == 3  # one job per version x seed
    failed = records[2]  # the candidate's own failure: failed, its evidence complete
    assert failed.status == "failed" and "train phase exited with 3" in failed.error
    assert failed.evidence.get("complete") is not False
    for record in records[:2]:  # progress read from the store: phases, steps, metrics
        assert {e for rid, e in events if rid == record.run_id} >= {
            "started",
            "phase",
            "step",
            "metric",
            "finished",
        }
    assert [e for rid, e in events if rid == records[0].run_id].count(
        "step"
    ) == 3  # steps 1..3 once each
    # the judge archives were read once and deleted; the candidate archive is content-addressed
    assert not list((job_folder(ws) / "judge").iterdir())
    assert (
        len(list((job_folder(ws) / "packages").glob("*.tar"))) == 3 and (shared / "jobs").is_dir()
    )
    # only the driver wrote the ledger
    out = git(ws.root, "log", "--format=%B%x00", "refs/evotree/ledger")
    kinds = [
        json.loads([x for x in m.strip().splitlines() if x.startswith("{")][-1])["kind"]
        for m in out.split("\x00")
        if "{" in m
    ]
    assert (
        kinds.count(EventKind.RUN_STARTED.value) == 3
        and kinds.count(EventKind.RUN_FINISHED.value) == 3
    )
    assert not list((ws.root / ".evotree" / "runs" / ".active").iterdir())


@pytest.mark.heavy
def test_seeds_are_one_job_each(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOTREE_SLURM_CLUSTER", "local")
    store = tmp_path / "store"
    ws = make_slurm_repo(tmp_path / "w", store, kind="slurm")  # [executor].kind chooses it
    records = run_versions(ws, ["v0"], seeds=2)
    assert [(r.version, r.seed) for r in records] == [("v0", 0), ("v0", 1)]
    assert len({r.executor["job_id"] for r in records}) == 2
    for record in records:
        check_landed(ws, record, store, skill=0.5, steps=3, cluster="local")


def _run_pids(run_id: str) -> list[int]:
    needle = f"EVOTREE_RUN_ID={run_id}".encode()
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def _wait(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def _cancel_while_training(
    ws: Workspace, store: Path, version: str, *, bound: float | None = None
) -> tuple[Any, str, float]:
    """Start ``version`` as a job and cancel it once its train phase runs; return the run's
    record, its id and the seconds from the cancel to the request's return (within ``bound``,
    by default the local cluster's grace and 45 s)."""
    bound = slurm_executor.LOCAL_CANCEL_GRACE_SECONDS + 45 if bound is None else bound
    earlier = set(store.glob("runs/*/worker.json"))
    cancel = threading.Event()
    result: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: result.update(
            records=run_versions(ws, [version], executor="slurm", cancel=cancel)
        )
    )
    thread.start()
    worker = _wait(
        lambda: next(iter(set(store.glob("runs/*/worker.json")) - earlier), None),
        60,
        "the job to start",
    )
    run_id = worker.parent.name
    _wait(lambda: _run_pids(run_id), 30, "the train phase")
    # its first steps reached the store: the train script runs (past its signal set-up)
    steps = store / "runs" / run_id / "evidence" / "train" / "signals.jsonl"
    _wait(lambda: steps.exists() and steps.read_text().strip(), 60, "the first steps")
    cancelled = time.monotonic()
    cancel.set()
    thread.join(bound)
    took = time.monotonic() - cancelled
    assert not thread.is_alive(), f"the request still runs {took:.0f} s after the cancel"
    (record,) = result["records"]
    return record, run_id, took


@pytest.mark.heavy
def test_cancel_stops_the_job_and_its_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The job gets SIGTERM (forwarded by submitit's controller), stops its phase and reports
    ``cancelled`` itself, well within the driver's grace; nothing of it is left.

    SIGINT is ignored meanwhile, as it is in a pytest started in the background by a
    non-interactive shell (``make test-heavy &``: the CI rehearsals where this test hung).
    submitit's controller inherits an ignored SIGINT, so a cancel by submitit's own SIGINT never
    reached the job, which ran its whole phase."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    monkeypatch.setenv("EVOTREE_SLURM_CLUSTER", "local")
    store = tmp_path / "store"
    ws = make_slurm_repo(tmp_path / "w", store)
    v1 = recipe_version(ws, "skill = 0.4\nsteps = 2\nblock = true\n")
    record, run_id, took = _cancel_while_training(ws, store, v1)
    assert not _run_pids(run_id)  # no process of the phase outlives the request
    assert record.status == "cancelled" and "stopped on the node" in record.error, (
        record.error,
        record.notes,
    )
    assert "SIGTERM" in record.error  # the driver's stop, not submitit's SIGINT-then-SIGKILL
    assert record.phases["train"]["wall_seconds"] < 60  # stopped, not run to its end
    assert took < slurm_executor.LOCAL_CANCEL_GRACE_SECONDS + 30
    saved = json.loads((ws.root / ".evotree" / "runs" / run_id / "run.json").read_text())
    assert saved["status"] == "cancelled"
    assert not list((ws.root / ".evotree" / "runs" / ".active").iterdir())


@pytest.mark.heavy
def test_a_job_that_does_not_stop_within_the_grace_is_killed_and_its_run_settled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job still running when the cancel's grace is over (here: a phase that ignores SIGTERM,
    which the node gives 5 s, against a 1 s grace) is killed with every process of its tree by
    the driver, and its run settled ``cancelled`` without waiting for a result that never comes."""
    monkeypatch.setenv("EVOTREE_SLURM_CLUSTER", "local")
    monkeypatch.setattr(slurm_executor, "LOCAL_CANCEL_GRACE_SECONDS", 1.0)
    store = tmp_path / "store"
    ws = make_slurm_repo(tmp_path / "w", store)
    v1 = recipe_version(ws, "skill = 0.4\nsteps = 2\nblock = true\ndeaf = true\n")
    record, run_id, took = _cancel_while_training(ws, store, v1)
    assert not _run_pids(run_id)  # killed with its job, not left to the node's SIGKILL
    assert record.status == "cancelled", (record.error, record.notes)
    assert "did not stop and report within 1 s of the cancel and was killed" in record.error
    assert "still alive" not in record.error
    assert any("evidence incomplete" in note for note in record.notes)
    # settled without submitit's 15-30 s wait for a result pickle
    assert took < 15, took
    saved = json.loads((ws.root / ".evotree" / "runs" / run_id / "run.json").read_text())
    assert saved["status"] == "cancelled"
    assert not list((ws.root / ".evotree" / "runs" / ".active").iterdir())


def test_bad_settings_fail_before_anything_is_submitted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evotree.core.config_execution import ExecutorSection

    monkeypatch.setenv("EVOTREE_SLURM_CLUSTER", "pbs")
    with pytest.raises(
        ExecutorError, match="EVOTREE_SLURM_CLUSTER must be one of slurm, local, actually: 'pbs'"
    ):
        SlurmExecutor(ExecutorSection())
    monkeypatch.setenv("EVOTREE_SLURM_CLUSTER", "local")
    ws = make_slurm_repo(tmp_path / "w", tmp_path / "store")
    (ws.root / "evotree.toml").write_text(CONFIG.format(store=tmp_path / "store") + "gpus = 0.5\n")
    git(ws.root, "commit", "-qam", "half a GPU")
    # the champion's [executor] is in force: a half GPU per job is refused, nothing is submitted
    from evotree.core.config import parse_config

    section = parse_config((ws.root / "evotree.toml").read_text()).executor
    from evotree.harness.planning import plan_runs

    plans = plan_runs(ws, ["v0"], authorize=lambda *a, **k: None, seeds=1)
    with pytest.raises(ExecutorError, match="whole number of GPUs per Slurm job, actually: 0.5"):
        SlurmExecutor(section).execute(ws, plans, progress=None, cancel=threading.Event())
    assert not (job_folder(ws) / "jobs").exists()


# ---------------------------------------------------------------------------- a real Slurm
SLURM_CONF = """\
ClusterName=evotree-test
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
AuthType=auth/munge
StateSaveLocation={state}/ctld
SlurmdSpoolDir={state}/d
SlurmctldPidFile={state}/slurmctld.pid
SlurmdPidFile={state}/slurmd.pid
SlurmctldLogFile={state}/slurmctld.log
SlurmdLogFile={state}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName={host} CPUs={cpus} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def slurm_cluster(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A one-node Slurm (slurmctld + slurmd on this machine, munge for auth), or a skip saying why."""
    tools = {
        name: shutil.which(name)
        or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
        for name in ("slurmctld", "slurmd", "munged", "sbatch", "sinfo", "scancel")
    }
    missing = [name for name, path in tools.items() if not path]
    if missing:
        pytest.skip(
            f"Slurm is not installed here (no {', '.join(missing)}): apt-get install -y slurm-wlm"
        )
    if os.geteuid() != 0:
        pytest.skip("starting slurmd needs root here (it runs jobs as their users)")
    state = tmp_path_factory.mktemp("slurm")
    for sub in ("ctld", "d", "munge", "etc"):
        (state / sub).mkdir()
    host = socket.gethostname().split(".")[0]
    conf = state / "etc" / "slurm.conf"
    conf.write_text(
        SLURM_CONF.format(
            host=host,
            state=state,
            ctld_port=_free_port(),
            d_port=_free_port(),
            cpus=max(1, min(4, os.cpu_count() or 1)),
        )
    )
    (state / "etc" / "cgroup.conf").write_text("CgroupPlugin=autodetect\nIgnoreSystemd=yes\n")
    key = state / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    socket_path = state / "munge" / "munge.socket"
    env = {**os.environ, "SLURM_CONF": str(conf)}
    started: list[subprocess.Popen[bytes]] = []
    try:
        munged = subprocess.run(
            [
                tools["munged"],
                "--force",
                f"--key-file={key}",
                f"--socket={socket_path}",
                f"--pid-file={state / 'munge' / 'munged.pid'}",
                f"--log-file={state / 'munge' / 'munged.log'}",
                f"--seed-file={state / 'munge' / 'munged.seed'}",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if munged.returncode != 0:
            pytest.skip(f"munged cannot start here: {munged.stderr.strip()[-300:]}")
        # the Slurm client library finds munge's socket by its compiled-in path only: point it there
        default = Path("/run/munge/munge.socket.2")
        if not default.exists():
            default.parent.mkdir(parents=True, exist_ok=True)
            default.symlink_to(socket_path)
        for daemon in ("slurmctld", "slurmd"):
            started.append(
                subprocess.Popen(
                    [tools[daemon], "-D", "-f", str(conf)],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
            )
        deadline = time.monotonic() + 60
        state_line = ""
        while time.monotonic() < deadline:
            for proc in started:
                if proc.poll() is not None:
                    err = (proc.stderr.read() if proc.stderr else b"").decode(errors="replace")
                    log = "".join(
                        (state / n).read_text(errors="replace")[-600:]
                        for n in ("slurmctld.log", "slurmd.log")
                        if (state / n).exists()
                    )
                    pytest.skip(
                        f"a Slurm daemon exited at start here: {err.strip()[-400:] or log[-400:]}"
                    )
            info = subprocess.run(
                [tools["sinfo"], "-h", "-o", "%t"], env=env, capture_output=True, text=True
            )
            state_line = info.stdout.strip() or info.stderr.strip()
            if info.returncode == 0 and state_line in ("idle", "mix"):
                break
            time.sleep(0.5)
        else:
            pytest.skip(
                f"the Slurm node did not become idle within 60 s (sinfo: {state_line[-300:]})"
            )
        yield {"conf": conf, "env": env, "state": state}
    finally:
        for proc in started:
            proc.terminate()
        for proc in started:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        pid_file = state / "munge" / "munged.pid"
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text().strip()), 15)
            except (ValueError, ProcessLookupError):
                pass
        link = Path("/run/munge/munge.socket.2")
        if link.is_symlink() and os.readlink(link) == str(socket_path):
            link.unlink()


@pytest.mark.heavy
def test_a_real_single_node_slurm_runs_the_request(
    slurm_cluster: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLURM_CONF", str(slurm_cluster["conf"]))
    monkeypatch.delenv("EVOTREE_SLURM_CLUSTER", raising=False)
    store = tmp_path / "store"
    ws = make_slurm_repo(tmp_path / "w", store)
    v1 = recipe_version(ws, "skill = 0.7\nsteps = 2\n")
    records = run_versions(ws, ["v0", v1], executor="slurm")
    for record, skill, steps in zip(records, (0.5, 0.7), (3, 2)):
        check_landed(ws, record, store, skill=skill, steps=steps, cluster="slurm")
        assert record.executor["job_id"].isdigit()  # a Slurm job id
    # a cancel: scancel's SIGTERM reaches the job, which stops its phase and reports cancelled
    blocked = recipe_version(ws, "skill = 0.4\nsteps = 2\nblock = true\n")
    record, run_id, took = _cancel_while_training(
        ws, store, blocked, bound=slurm_executor.CANCEL_GRACE_SECONDS + 45
    )
    assert record.status == "cancelled" and "stopped on the node" in record.error, (
        record.error,
        record.notes,
    )
    assert "SIGTERM" in record.error and record.phases["train"]["wall_seconds"] < 60
    _wait(lambda: not _run_pids(run_id), 10, "the cancelled job's processes to end")
    queue = subprocess.run(
        ["squeue", "-h"], env=slurm_cluster["env"], capture_output=True, text=True
    )
    assert queue.stdout.strip() == ""  # nothing left queued or running
