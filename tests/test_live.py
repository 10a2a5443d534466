"""Watching a run: its output streamed, its step, rate and ETA in `evotree status`;
the follower reads no file the phase linked elsewhere, and shows control characters escaped."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from conftest import EVOTREE_BIN, Cli, commit_file

CHATTY = """\
import json, sys, time
from evotree.harness import get_recorder
rec = get_recorder()
rec.signal(0, total_steps=6)
for step in range(1, 7):
    print(f"hello from step {step}", flush=True)
    print("\\x1b[2Jcleared?", file=sys.stderr, flush=True)
    rec.signal(step, loss=1.0 / step)
    time.sleep(0.4)
json.dump({"skill": 0.5}, open("model.json", "w"))
"""


@pytest.fixture
def chatty(tmp_path: Path) -> tuple[Path, str]:
    from test_runs import make_run_repo

    from evotree.verbs import Session

    repo = make_run_repo(tmp_path / "w")
    made = Session(repo).branch("chatty")
    commit_file(repo / made.worktree, "train.py", CHATTY, "print as it trains")
    return repo, made.id


@pytest.mark.heavy
def test_run_follow_streams_the_phase_output_and_logs_follow_replays_it(
    chatty: tuple[Path, str],
) -> None:
    repo, version = chatty
    result = Cli(repo)("run", version, "--follow")
    err = result.stderr
    assert "train.out: hello from step 1" in err and "train.out: hello from step 6" in err
    assert (
        "\x1b[2J" not in err and "\\x1b[2J" in err
    )  # the phase's escape sequence is shown, not obeyed
    run_id = json.loads(Cli(repo)("runs", "--version", version, "--json").stdout)["runs"][0][
        "run_id"
    ]
    out = Cli(repo)("logs", run_id, "--follow", "--phase", "train").output
    assert [line for line in out.splitlines() if "hello" in line][-1].endswith("hello from step 6")
    lines = [
        json.loads(line)
        for line in Cli(repo)("logs", run_id, "--follow", "--json").stdout.splitlines()
    ]
    assert {
        "run_id": run_id,
        "phase": "train",
        "stream": "out",
        "line": "hello from step 3",
    } in lines


@pytest.mark.heavy
def test_status_shows_the_step_rate_and_eta_of_a_running_run(chatty: tuple[Path, str]) -> None:
    repo, version = chatty
    proc = subprocess.Popen(
        [str(EVOTREE_BIN), "-C", str(repo), "run", version, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    seen = None
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        running = json.loads(Cli(repo)("status", "--json").stdout)["running"]
        progress = running[0]["progress"] if running else {}
        if progress.get("step") and progress["step"] >= 2:
            seen = progress
            break
        time.sleep(0.2)
    proc.communicate(timeout=120)
    assert seen is not None, "no step seen while the run ran"
    assert seen["total_steps"] == 6 and seen["metric"] == "loss" and seen["steps_per_second"] > 0
    assert seen["eta_seconds"] is not None


def test_the_follower_does_not_read_a_log_the_phase_linked_elsewhere(tmp_path: Path) -> None:
    from evotree.harness.live import follow_logs

    secret = tmp_path / "host-secret"
    secret.write_text("TOP SECRET\n")
    run_dir = tmp_path / "run"
    (run_dir / "logs").mkdir(parents=True)
    (run_dir / "logs" / "train.out").symlink_to(secret)
    (run_dir / "logs" / "train.err").write_text("real line\n")
    lines = list(follow_logs(run_dir, ("train",), finished=lambda: True))
    assert ("train", "err", "real line") in lines and not any(
        "SECRET" in line for _, _, line in lines
    )
