"""GPU placement by the local executor: each run gets its own devices, none is over-subscribed.

This machine has no GPU: the devices are declared (``CUDA_VISIBLE_DEVICES`` of the parent, a
stand-in ``nvidia-smi`` on ``PATH``) and each phase records the ``CUDA_VISIBLE_DEVICES`` it was
given, from inside its sandbox.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from fixtures_ws import scored_project

from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
from evotree.harness.executors import ExecutorError
from evotree.harness.executors.gpus import (
    GpuPool,
    _parse_smi,
    _parse_visible,
    check_request,
    gpus_per_run,
    visible_devices,
)
from evotree.harness.records import runs_dir

# The train phase prints what it was given and when it ran; the judge prints what it was given.
TRAIN = """\
import json, os, time
from evotree.harness import get_recorder
start = time.time()
time.sleep(float(open("hold.txt").read()))
print(json.dumps({"cuda": os.environ.get("CUDA_VISIBLE_DEVICES"), "start": start, "end": time.time()}))
get_recorder().signal(1, reward=1.0)
"""
JUDGE = """\
import os
from evotree.harness import get_recorder
print(os.environ.get("CUDA_VISIBLE_DEVICES"))
get_recorder().eval_result("validation", "t1", 1.0)
"""
CONFIG = """\
[train]
command = "python train.py"
[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
[gates]
min_tasks = 1
[executor]
gpus = {gpus}
"""


def gpu_repo(path: Path, *, gpus: int, hold: float = 1.5) -> Workspace:
    return Workspace.open(
        scored_project(
            path,
            judge=JUDGE,
            config=CONFIG.format(gpus=gpus),
            train=TRAIN,
            recipe=None,
            files={"hold.txt": str(hold)},
            message="gpu recipe",
        )
    )


def seen(ws: Workspace, run_id: str) -> tuple[dict[str, object], str]:
    """(what the train phase printed, what the judge printed) of one run."""
    logs = runs_dir(ws) / run_id / "logs"
    train = json.loads((logs / "train.out").read_text().strip().splitlines()[-1])
    return train, (logs / "eval.out").read_text().strip()


# ------------------------------------------------------------------ which devices exist
def test_visible_devices_from_the_parent_environment() -> None:
    assert _parse_visible("0,1") == ["0", "1"]
    assert _parse_visible(" 2 , 3 ") == ["2", "3"]
    assert _parse_visible("") == []
    assert _parse_visible("0,-1,1") == ["0"]  # CUDA stops at the first invalid id
    assert _parse_visible("GPU-aaa,MIG-bbb") == ["GPU-aaa", "MIG-bbb"]
    assert visible_devices({"CUDA_VISIBLE_DEVICES": "4,5"}) == (
        ["4", "5"],
        "CUDA_VISIBLE_DEVICES='4,5'",
    )


def test_visible_devices_from_nvidia_smi(tmp_path: Path) -> None:
    listing = (
        "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-2222)\n"
        "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-33333333-4444)\n"
        "  MIG 3g.40gb     Device  0: (UUID: MIG-aaaa)\n"
        "  MIG 3g.40gb     Device  1: (UUID: MIG-bbbb)\n"
    )
    assert _parse_smi(listing) == ["0", "MIG-aaaa", "MIG-bbbb"]
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        "#!/bin/sh\n[ \"$1\" = -L ] || exit 9\nprintf 'GPU 0: A (UUID: GPU-a)\\nGPU 1: B (UUID: GPU-b)\\n'\n"
    )
    smi.chmod(0o755)
    assert visible_devices({}, smi=str(smi)) == (["0", "1"], "nvidia-smi -L")
    broken = tmp_path / "broken-smi"
    broken.write_text("#!/bin/sh\nexit 6\n")
    broken.chmod(0o755)
    assert visible_devices({}, smi=str(broken)) == ([], "nvidia-smi -L exited with 6")
    # the parent's CUDA_VISIBLE_DEVICES wins over what nvidia-smi lists (a scheduler narrowed it)
    assert visible_devices({"CUDA_VISIBLE_DEVICES": "1"}, smi=str(smi))[0] == ["1"]


def test_whole_gpus_only_and_no_more_than_exist() -> None:
    assert gpus_per_run(0.0) == 0 and gpus_per_run(2.0) == 2
    with pytest.raises(ExecutorError, match=r"whole number of GPUs .* actually: 0.5"):
        gpus_per_run(0.5)
    check_request(2, ["0", "1"], "x")
    with pytest.raises(
        ExecutorError, match=r"asks for 3 GPU\(s\) .* gives runs 2 GPU\(s\) \(0, 1\)"
    ) as err:
        check_request(3, ["0", "1"], "CUDA_VISIBLE_DEVICES='0,1'")
    assert "lower [executor].gpus" in (err.value.fix or "")
    with pytest.raises(ExecutorError, match="gives runs no GPU"):
        check_request(1, [], "no nvidia-smi")


# ------------------------------------------------------------------ the pool
def test_pool_hands_out_disjoint_devices_and_waits_for_a_free_one(tmp_path: Path) -> None:
    pool = GpuPool(["0", "1", "2"], tmp_path / "locks")
    cancel = threading.Event()
    a, b = pool.acquire(2, cancel), pool.acquire(1, cancel)
    assert a is not None and b is not None
    assert sorted(a.devices + b.devices) == ["0", "1", "2"] and a.env_value.count(",") == 1
    got: dict[str, object] = {}
    waited = threading.Event()
    thread = threading.Thread(
        target=lambda: got.update(lease=pool.acquire(1, cancel, on_wait=waited.set))
    )
    thread.start()
    assert waited.wait(5) and thread.is_alive()  # all three are held: it waits
    b.release()
    thread.join(5)
    assert not thread.is_alive() and got["lease"].devices == b.devices  # the freed one
    # a second process holding a device (another `evotree run`) is respected too
    lock = tmp_path / "other"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import fcntl, sys, time\n"
                "from evotree.harness.executors.gpus import GpuPool\n"
                "import threading\n"
                f"lease = GpuPool(['9'], __import__('pathlib').Path({str(lock)!r})).acquire(1, threading.Event())\n"
                "print(lease.devices, flush=True)\n"
                "time.sleep(30)\n"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "['9']"
        stop = threading.Event()
        timer = threading.Timer(0.6, stop.set)
        timer.start()
        assert GpuPool(["9"], lock).acquire(1, stop) is None  # never free; the cancel ends the wait
    finally:
        holder.kill()
        holder.wait()
    assert GpuPool(["9"], lock).acquire(1, threading.Event()).devices == ["9"]  # freed when it died


# ------------------------------------------------------------------ runs
def test_two_concurrent_runs_get_disjoint_devices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--jobs 2 on a machine declaring GPUs 0 and 1, one GPU per run: the two runs overlap in time,
    and each one's train and judge phases (in their sandboxes) see exactly its own GPU."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    ws = gpu_repo(tmp_path / "w", gpus=1)
    records = run_versions(ws, ["v0"], seeds=2, jobs=2)
    assert [r.status for r in records] == ["succeeded", "succeeded"], [
        (r.error, r.notes) for r in records
    ]
    # through the sandbox: CUDA_VISIBLE_DEVICES must survive the phase environment's filtering
    assert all(r.phases[p]["sandbox"] == "bwrap" for r in records for p in ("train", "eval"))
    (train_a, judge_a), (train_b, judge_b) = (seen(ws, r.run_id) for r in records)
    assert {train_a["cuda"], train_b["cuda"]} == {"0", "1"}  # disjoint, one each
    assert (
        judge_a == train_a["cuda"] and judge_b == train_b["cuda"]
    )  # the judge runs on the run's GPU
    assert [r.executor["gpus"] for r in records] == [[train_a["cuda"]], [train_b["cuda"]]]
    assert (
        train_a["start"] < train_b["end"] and train_b["start"] < train_a["end"]
    )  # they ran at once
    assert not list((ws.state_dir / "gpus").glob("*.lock")) or all(
        _unlocked(p) for p in (ws.state_dir / "gpus").glob("*.lock")
    )


def _unlocked(path: Path) -> bool:
    import fcntl

    with open(path) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
    return True


@pytest.mark.heavy
def test_more_jobs_than_gpus_wait_instead_of_sharing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--jobs 2 and one GPU: the second run waits for the first to end (it never shares GPU 0)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    ws = gpu_repo(tmp_path / "w", gpus=1, hold=1.0)
    events: list[tuple[str, str]] = []
    records = run_versions(
        ws, ["v0"], seeds=2, jobs=2, progress=lambda rid, ev, info: events.append((rid, ev))
    )
    assert [r.status for r in records] == ["succeeded", "succeeded"], [
        (r.error, r.notes) for r in records
    ]
    first, second = sorted(records, key=lambda r: seen(ws, r.run_id)[0]["start"])
    assert seen(ws, first.run_id)[0]["cuda"] == seen(ws, second.run_id)[0]["cuda"] == "0"
    # the second started only after the first had ended, both phases
    assert second.started_at >= first.ended_at
    assert (second.run_id, "waiting") in events
    assert any("waited" in n and "free GPU" in n for n in second.notes)


def test_asking_more_gpus_than_exist_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    ws = gpu_repo(tmp_path / "w", gpus=3)
    with pytest.raises(ExecutorError, match=r"asks for 3 GPU\(s\) .* CUDA_VISIBLE_DEVICES='0,1'"):
        run_versions(ws, ["v0"], seeds=2, jobs=2)
    base = runs_dir(ws)
    assert not [p for p in base.iterdir() if not p.name.startswith(".")] if base.exists() else True
    snapshot = ws.ledger.snapshot()
    from evotree.harness.reservations import live_reservations

    assert not live_reservations(snapshot.meta)  # the reservations were released


def test_gpus_zero_keeps_the_parent_devices_and_says_they_are_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    ws = gpu_repo(tmp_path / "w", gpus=0, hold=0.2)
    records = run_versions(ws, ["v0"], seeds=2, jobs=2)
    assert [r.status for r in records] == ["succeeded", "succeeded"], [
        (r.error, r.notes) for r in records
    ]
    for record in records:
        assert seen(ws, record.run_id)[0]["cuda"] == "0,1"
        assert "gpus" not in record.executor
        assert any("shared the 2 visible GPU(s)" in n for n in record.notes)
