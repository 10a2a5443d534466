"""The phase sandbox's accounting and limits, tested as a candidate (or its user) would see them.

Known defects, fixed: a sandboxed phase recorded ~0 s of CPU (bubblewrap returns before the
sandbox's init is reaped); ``max_processes`` was RLIMIT_NPROC only, which the kernel never
applies to root (tests and CI run as root: 200 children went through a limit of 50); and a
train phase could create user namespaces of its own (``unshare -U``, ``os.unshare``), an
escape surface. Each test below failed before the fix.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import commit_file, git, make_repo
from evotree.core.versions import create_version
from evotree.core.workspace import Workspace, init_workspace
from evotree.gates.runs import run_versions
from evotree.harness.sandbox import check_sandbox, disables_userns, wrap
from evotree.harness.sandbox_cgroup import PidsCgroup
from evotree.harness.sandbox_launch import accounted, sandbox_env
from evotree.harness.sandbox_spec import Limits, PolicySandbox, SandboxSpec

# tens of seconds of real sandboxes: run apart (make test-heavy; CI runs it after make test)
pytestmark = [
    pytest.mark.skipif(not check_sandbox().ok, reason="bubblewrap cannot start here"),
    pytest.mark.heavy,
]

TRAIN = """\
import ctypes, json, os, subprocess, sys, time, tomllib
from evotree.harness import get_recorder

rec = get_recorder()
r = tomllib.load(open("recipe.toml", "rb"))
if r.get("burn"):  # about a second of CPU, half of it in a child process
    subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\n"
                    "while time.process_time() - t < 0.6: pass"], check=True)
    t = time.process_time()
    while time.process_time() - t < 0.6:
        pass
if r.get("userns"):
    try:  # first try to raise the limit bubblewrap set (per user namespace; needs CAP_SYS_RESOURCE in it)
        with open("/proc/sys/user/max_user_namespaces", "w") as handle:
            handle.write("1000")
        raised = True
    except OSError:
        raised = False
    shell = subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode == 0
    libc = ctypes.CDLL(None, use_errno=True)
    direct = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER, as os.unshare does (Python 3.12)
    nested = subprocess.run(["bwrap", "--unshare-user", "--ro-bind", "/", "/", "true"],
                            capture_output=True).returncode == 0
    rec.signal(0, unshare_cli=float(shell), unshare_call=float(direct), nested_bwrap=float(nested),
               raised_limit=float(raised))
if r.get("fork"):  # 200 sleeping children: far more than max_processes
    kids = []
    for _ in range(int(r["fork"])):
        try:
            kids.append(subprocess.Popen(["sleep", "30"]))
        except OSError:
            break
    rec.signal(0, spawned=float(len(kids)))
    time.sleep(30)
json.dump({"skill": 0.5}, open("model.json", "w"))
"""

JUDGE = """\
import json, os
from evotree.harness import get_recorder

rec = get_recorder()
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
for i in range(4):
    rec.eval_result("validation", f"task-{i}", 1.0 if i < 2 else 0.0)
"""

CONFIG = """\
[train]
command = "python train.py"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
[sandbox]
max_processes = 50
"""


def _repo(path: Path) -> Path:
    repo = make_repo(path)
    (repo / "recipe.toml").write_text("")
    (repo / "train.py").write_text(TRAIN)
    (repo / "judge").mkdir()
    (repo / "judge" / "eval.py").write_text(JUDGE)
    (repo / "evotree.toml").write_text(CONFIG)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "recipe, train script and judge")
    init_workspace(repo)
    return repo


def _signals(ws: Workspace, run_id: str) -> dict[str, float]:
    import duckdb

    path = ws.root / ".evotree" / "runs" / run_id / "signals.parquet"
    if not path.exists():
        return {}
    rows = (
        duckdb.connect()
        .execute(f"SELECT metric, value FROM read_parquet('{path}') WHERE step = 0")
        .fetchall()
    )
    return dict(rows)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    repo = _repo(tmp_path_factory.mktemp("limits") / "w")
    ws = Workspace.open(repo)
    made = {}
    for name, recipe in (
        ("burn", "burn = true\n"),
        ("userns", "userns = true\n"),
        ("fork", "fork = 200\n"),
    ):
        version = create_version(ws, hypothesis=name)
        commit_file(repo / version.worktree, "recipe.toml", recipe, name)
        made[name] = version.id
    started = time.monotonic()
    records = run_versions(ws, list(made.values()))
    by_version = {r.version: r for r in records}
    return {
        "ws": ws,
        "elapsed": time.monotonic() - started,
        **{name: by_version[vid] for name, vid in made.items()},
    }


# ---------------------------------------------------------------------------- CPU time
def test_a_sandboxed_phase_records_its_real_cpu_time(runs: dict[str, Any]) -> None:
    record = runs["burn"]
    assert record.status == "succeeded", (record.error, record.notes)
    assert record.phases["train"]["sandbox"] == "bwrap"
    assert record.phases["train"]["cpu_seconds"] >= 0.5, record.phases["train"]  # was ~0.003 before
    assert record.cpu_seconds >= record.phases["train"]["cpu_seconds"]
    saved = json.loads(
        (runs["ws"].root / ".evotree" / "runs" / record.run_id / "run.json").read_text()
    )
    assert saved["phases"]["train"]["cpu_seconds"] >= 0.5


def test_the_launcher_counts_a_daemon_and_keeps_the_exit_status(tmp_path: Path) -> None:
    """wait4 on the launcher: the phase's own process, a setsid child, and the status of the first."""
    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass"
    script = f"setsid {sys.executable} -c '{burn}' & {sys.executable} -c '{burn}'; wait; exit 7"
    argv = accounted(
        wrap(SandboxSpec(cwd=tmp_path, read_write=(tmp_path,)), ["bash", "-c", script])
    )
    proc = subprocess.Popen(argv, start_new_session=True, env=sandbox_env(dict(os.environ)))
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7
    assert usage.ru_utime + usage.ru_stime >= 0.7


# ---------------------------------------------------------------------------- max_processes
def test_a_fork_bomb_is_stopped_and_the_run_says_why(runs: dict[str, Any]) -> None:
    record = runs["fork"]
    assert record.status == "budget_exceeded", (record.status, record.error)
    assert "max_processes = 50" in (record.error or "")
    stopped = record.phases["train"]["stopped_by"]
    assert stopped["limit"] == "max_processes" and stopped["max_processes"] == 50
    # seen past the limit by the supervisor's count, or refused at it by the kernel (a pids cgroup)
    assert stopped["seen"] > 50 or stopped.get("refused_forks", 0) > 0, stopped
    assert "eval" not in record.phases  # never judged
    # stopped at once, not after the children's 30 s sleep
    assert record.phases["train"]["wall_seconds"] < 20
    saved = json.loads(
        (runs["ws"].root / ".evotree" / "runs" / record.run_id / "run.json").read_text()
    )
    assert saved["phases"]["train"]["stopped_by"]["limit"] == "max_processes"


def test_the_supervisors_count_stops_a_fork_bomb_without_a_cgroup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no pids cgroup can be made (most containers), the supervisor's count is the bound for root."""
    monkeypatch.setattr(PidsCgroup, "create", classmethod(lambda cls, n: None))
    repo = _repo(tmp_path / "w")
    ws = Workspace.open(repo)
    version = create_version(ws, hypothesis="fork")
    commit_file(repo / version.worktree, "recipe.toml", "fork = 200\n", "fork")
    (record,) = run_versions(ws, [version.id])
    assert record.status == "budget_exceeded" and "more than [sandbox] max_processes = 50" in (
        record.error or ""
    )
    stopped = record.phases["train"]["stopped_by"]
    assert stopped["seen"] > 50 and "refused_forks" not in stopped
    assert record.phases["train"]["wall_seconds"] < 20


def test_where_a_pids_cgroup_can_be_made_the_kernel_bounds_the_phase(tmp_path: Path) -> None:
    cgroup = PidsCgroup.create(50)
    if cgroup is None:
        pytest.skip(
            "no pids cgroup can be made here: the supervisor's count is the only bound for root"
        )
    spawn = (
        "import subprocess\nkids = []\nfor _ in range(200):\n    try:\n"
        "        kids.append(subprocess.Popen(['sleep', '5']))\n    except OSError:\n        break\n"
        "print(len(kids))"
    )
    try:
        argv = accounted(
            wrap(SandboxSpec(cwd=tmp_path, read_only=(tmp_path,)), [sys.executable, "-c", spawn]),
            cgroup=cgroup,
        )
        out = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            env=sandbox_env(dict(os.environ)),
            start_new_session=True,
            timeout=60,
        ).stdout
        assert int(out.strip()) < 50  # refused by the kernel at the limit, whatever the uid
        assert cgroup.refused() > 0
    finally:
        assert cgroup.remove()
    assert not cgroup.path.exists()


def test_honest_phases_under_the_same_limit_are_unaffected(runs: dict[str, Any]) -> None:
    for name in ("burn", "userns"):
        record = runs[name]
        assert record.status == "succeeded", (name, record.error)
        assert record.headline["value"] == pytest.approx(0.5)
        assert (
            "stopped_by" not in record.phases["train"] and "stopped_by" not in record.phases["eval"]
        )
        # the evidence the phases wrote is the run's, as before
        run_dir = runs["ws"].root / ".evotree" / "runs" / record.run_id
        assert (run_dir / "evidence" / "train").is_dir() and (
            run_dir / "evidence" / "eval"
        ).is_dir()


# ---------------------------------------------------------------------------- user namespaces
@pytest.mark.skipif(
    not disables_userns(), reason="this bubblewrap has no --disable-userns (before 0.8)"
)
def test_a_train_phase_cannot_create_user_namespaces(runs: dict[str, Any]) -> None:
    seen = _signals(runs["ws"], runs["userns"].run_id)
    assert seen["unshare_cli"] == 0.0  # unshare -U true
    assert seen["unshare_call"] == 0.0  # unshare(CLONE_NEWUSER)
    assert seen["nested_bwrap"] == 0.0  # a bubblewrap of its own
    assert seen["raised_limit"] == 0.0  # nor can it lift the limit first


@pytest.mark.skipif(
    not disables_userns(), reason="this bubblewrap has no --disable-userns (before 0.8)"
)
def test_only_a_judge_that_nests_keeps_user_namespaces(tmp_path: Path) -> None:
    probe = (
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
        "print(libc.unshare(0x10000000) == 0)"
    )

    def nests(spec: SandboxSpec) -> str:
        return subprocess.run(
            wrap(spec, [sys.executable, "-I", "-c", probe]),
            capture_output=True,
            text=True,
            env=sandbox_env(dict(os.environ)),
            check=True,
        ).stdout.strip()

    assert nests(SandboxSpec(cwd=tmp_path, read_only=(tmp_path,))) == "False"
    assert (
        nests(SandboxSpec(cwd=tmp_path, read_only=(tmp_path,), limits=Limits(max_processes=50)))
        == "False"
    )
    assert (
        nests(SandboxSpec(cwd=tmp_path, read_only=(tmp_path,), policy=PolicySandbox())) == "True"
    )  # the gym judge nests
    assert (
        nests(SandboxSpec(cwd=tmp_path, read_only=(tmp_path,), userns=True)) == "True"
    )  # asked for explicitly


def test_the_count_includes_the_judges_nested_sandboxes(tmp_path: Path) -> None:
    """Candidate code the judge runs in a nested sandbox (its own PID namespace) is counted too."""
    import signal as signals

    from evotree.harness.sandbox import check_policy_sandbox, policy_sandbox_spec
    from evotree.harness.sandbox_box import SandboxBox
    from evotree.harness.sandbox_nested import policy_sandbox_argv

    if not check_policy_sandbox().ok:
        pytest.skip("no nested sandbox here")
    spec = policy_sandbox_spec(PolicySandbox())
    inner = policy_sandbox_argv(
        spec, None, ["bash", "-c", "for i in $(seq 30); do sleep 20 & done; wait"]
    )
    outer = wrap(SandboxSpec(cwd=tmp_path, read_only=(tmp_path,), policy=PolicySandbox()), inner)
    proc = subprocess.Popen(
        accounted(outer),
        start_new_session=True,
        env=sandbox_env(dict(os.environ)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    box = SandboxBox(proc.pid)
    try:
        deadline = time.monotonic() + 20
        seen = 0
        while time.monotonic() < deadline and seen < 30:
            seen = box.tasks()
            time.sleep(0.1)
        assert seen >= 30, seen  # 30 sleeps in the nested namespace, plus bash, the inits and bwrap
        assert len(box.members()) < 10  # the sandbox's own namespace holds only a few of them
    finally:
        box.signal(signals.SIGKILL)
        proc.wait(timeout=30)
        box.reap()
