"""Feasibility facts of fanotify as a reporter of the opens of the phase's git stores (issue 29,
item 7; docs/benchmarks/trace-fanotify.md): what an inode-marking listener outside the phase
sandbox is told of the box's programs reading the store, and what it is not. Real stores, the
real bubblewrap box (``wrap`` + ``accounted``, the guard's pruned copy bound over ``.git``), the
kernel's fanotify; the probes are bench/bench_trace_fanotify.py's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import bench_trace_fanotify as F  # noqa: E402  (bench/ is not a package)

pytestmark = pytest.mark.heavy


def _fanotify_reason() -> str | None:
    """Why the probes cannot run here (None: they can)."""
    if sys.platform != "linux":
        return "fanotify is Linux's"
    try:
        F.Fanotify().close()
    except (OSError, AttributeError) as exc:
        return f"fanotify with file handles is unavailable: {exc}"
    return None


def _sandbox_reason() -> str | None:
    from evotree.harness.sandbox import check_sandbox

    status = check_sandbox()
    return None if status.ok else f"no phase sandbox: {status.reason}"


needs_fanotify = pytest.mark.skipif(_fanotify_reason() is not None, reason=str(_fanotify_reason()))
needs_root_box = pytest.mark.skipif(
    os.geteuid() != 0 or _fanotify_reason() is not None or _sandbox_reason() is not None,
    reason="needs root (a pid in events, the queue flags), fanotify and the phase sandbox",
)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    repo = F._repository(tmp_path)
    subprocess.run(["git", "-C", str(repo), "gc", "-q"], check=True)
    return repo


@needs_root_box
def test_a_sandboxed_process_open_of_the_store_is_reported_with_its_host_pid(work: Path) -> None:
    fact = F.fact_sandboxed_pid(work)
    assert fact["reported"]
    # the box's shell is pid 2 in its namespace; the event carries the host's pid of it
    assert fact["pid"] > 0 and fact["pid"] != fact["pid_inside"]
    assert fact["nspid"] == [str(fact["pid"]), str(fact["pid_inside"])]
    assert fact["cmdline_at_pid"] == "sleep 2"


@needs_root_box
@pytest.mark.parametrize(
    "reader", ["git_log", "python_zlib_pack", "cp_pack_out", "o_path_then_proc_fd"]
)
def test_a_box_program_reading_the_store_is_reported(work: Path, reader: str) -> None:
    fact = F.fact_reader(work, reader)
    assert fact["rc"] == 0, fact["stderr"]
    assert fact["reported"], fact


@needs_root_box
@pytest.mark.parametrize("reader", ["hardlink_new_folder", "rename_new_folder"])
def test_a_marked_file_linked_or_moved_into_a_folder_made_in_the_phase_is_still_reported(
    work: Path, reader: str
) -> None:
    fact = F.fact_reader(work, reader)
    assert fact["rc"] == 0, fact["stderr"]
    assert fact["reported"], fact


@needs_root_box
def test_not_reported_an_o_path_open(work: Path) -> None:
    """An O_PATH descriptor reads nothing; its reopen (/proc/self/fd/N) is reported (above)."""
    fact = F.fact_reader(work, "o_path_only")
    assert fact["rc"] == 0, fact["stderr"]
    assert not fact["reported"], fact


@needs_root_box
def test_not_reported_a_loose_object_written_in_the_phase_into_a_new_fanout_folder(
    work: Path,
) -> None:
    """A limit of marks set at the start: a folder made in the phase is not marked, nor the
    object written in it, so its read (python zlib) is not reported."""
    fact = F.fact_reader(work, "loose_object_new_fanout")
    assert fact["rc"] == 0, fact["stderr"]
    assert not fact["reported"], fact


@needs_root_box
def test_a_clone_no_local_is_reported_but_not_the_reads_of_the_clone(work: Path) -> None:
    events_clone, proc1, _ = F._marked_box(
        work, 'git clone -q --no-local "file://$PWD/.git" /tmp/c'
    )
    events_both, proc2, _ = F._marked_box(
        work,
        'git clone -q --no-local "file://$PWD/.git" /tmp/c && '
        "for k in 1 2 3 4 5; do git -C /tmp/c log --stat -3 >/dev/null; done",
    )
    assert proc1.returncode == 0 and proc2.returncode == 0
    assert any(e.path.endswith(".pack") for e in events_clone)
    # the five logs of the clone add no event: the clone's files are new inodes, unmarked
    assert abs(len(events_both) - len(events_clone)) <= 1, (len(events_clone), len(events_both))


@needs_fanotify
def test_a_hard_link_or_rename_outside_the_marked_folders_is_reported(tmp_path: Path) -> None:
    fact = F.fact_host_hardlink(tmp_path)
    assert fact["hardlink_reported"] and fact["rename_reported"], fact


@pytest.mark.skipif(
    os.geteuid() != 0 or _fanotify_reason() is not None,
    reason="the unlimited queue needs CAP_SYS_ADMIN",
)
def test_the_default_queue_overflows_and_repeated_opens_merge(tmp_path: Path) -> None:
    fact = F.fact_queue(tmp_path)
    limit = fact["max_queued_events"]
    assert fact["default_queue"]["overflow"]
    assert fact["default_queue"]["events"] == limit + 1  # the overflow event itself
    assert not fact["unlimited_queue"]["overflow"]
    assert fact["unlimited_queue"]["events"] == 17000
    assert fact["same_file_1000_opens_events"] == 1


@pytest.mark.skipif(
    os.geteuid() != 0
    or shutil.which("setpriv") is None
    or shutil.which("bwrap") is None
    or _fanotify_reason() is not None,
    reason="needs root to become nobody (setpriv), bubblewrap and fanotify",
)
def test_an_unprivileged_listener_gets_inode_marks_and_events_but_no_pid() -> None:
    fact = F.fact_unprivileged()
    assert "error" not in fact, fact
    assert fact["uid"] == 65534
    assert fact["init_fid"] == "ok" and fact["inode_marks"] > 0
    for refused in (
        "init_fd_events",
        "init_unlimited_queue",
        "init_pidfd",
        "mount_mark",
        "filesystem_mark",
    ):
        assert fact[refused] == "EPERM", (refused, fact)
    # its own open: its pid; cat outside a box, cat in its own bubblewrap box: delivered, pid 0
    assert fact["events"]["HEAD"] == [fact["own_pid"]]
    assert fact["events"]["config"] == [0]
    assert fact["box_rc"] == 0 and fact["events"]["packed-refs"] == [0]
