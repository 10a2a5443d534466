"""`evotree pull` trusts neither a remote's sizes nor its addresses; `push` follows no link.

Before: a large-run pointer made `pull` send a HEAD and a GET to a URI the remote chose, and a
512 MiB blob of zeros (a 512 KiB pack) was written whole with 1.6 GiB of memory. Now large runs
come only from this workspace's own store, each blob is measured (header only) and refused over
``[share] max_object_mb`` before anything is written, the fetch itself is capped at
``max_total_mb``, contents are streamed, and archiving opens files with ``O_NOFOLLOW``.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, git
from fixtures_ws import bare_remote, clone_as
from evotree.core.workspace import Workspace

RUN_ID = "v0-s0-20990101T000000-evil01"


def _record(ws: Workspace, run_id: str = RUN_ID) -> bytes:
    commit = git(ws.root, "rev-parse", "refs/evotree/champion")
    return json.dumps(
        {
            "run_id": run_id,
            "version": "v0",
            "seed": 0,
            "status": "succeeded",
            "commit": commit,
            "judge_commit": None,
            "judge_version": None,
            "train_command": "x",
            "eval_command": "y",
            "started_at": "2099-01-01T00:00:00+00:00",
            "ended_at": "2099-01-01T00:01:00+00:00",
        }
    ).encode()


def _shared(ws: Workspace, tmp_path: Path) -> tuple[Path, Path]:
    """(bare remote, attacker's clone) of the workspace ``ws``."""
    # the remote side streams too (not under test)
    bare = bare_remote(
        ws.root, tmp_path / "remote.git", how="evotree", git_config={"core.bigFileThreshold": "1m"}
    )
    return bare, clone_as(bare, tmp_path / "attacker", "Mallory", "mallory@example.com")


def _plant(repo: Path, run_id: str, files: dict[str, str]) -> None:
    """A run ref made with git plumbing: ``files`` maps a tree path to a blob id."""
    listing = "".join(f"100644 blob {oid}\t{name}\n" for name, oid in sorted(files.items()))
    tree = subprocess.run(
        ["git", "mktree"], cwd=repo, input=listing, capture_output=True, text=True, check=True
    ).stdout.strip()
    commit = git(repo, "commit-tree", tree, "-m", "evotree: evidence of run")
    git(repo, "update-ref", f"refs/evotree/runs/{run_id}", commit)
    git(
        repo,
        "-c",
        "core.bigFileThreshold=1m",
        "push",
        "-q",
        "origin",
        f"refs/evotree/runs/{run_id}",
    )


def _blob(repo: Path, data: bytes) -> str:
    return (
        subprocess.run(
            ["git", "hash-object", "-w", "--stdin"],
            cwd=repo,
            input=data,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )


# ----------------------------------------------------------------------------- addresses
def test_a_pointer_naming_an_address_is_never_contacted(ws: Workspace, tmp_path: Path) -> None:
    from evotree.harness.share import POINTER, pull_evidence

    _bare, attacker = _shared(ws, tmp_path)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    record = _record(ws)
    pointer = {
        "v": 1,
        "run_id": RUN_ID,
        "uri": f"http://127.0.0.1:{port}/steal",
        "files": {"run.json": {"size": len(record), "sha256": hashlib.sha256(record).hexdigest()}},
    }
    _plant(attacker, RUN_ID, {POINTER: _blob(attacker, json.dumps(pointer).encode())})

    pulled = Cli(ws.root).json("pull")
    assert pulled["restored"] == [] and f"refs/evotree/runs/{RUN_ID}" in pulled["updated"]
    (skipped,) = [s for s in pulled["skipped"] if s["run_id"] == RUN_ID]
    assert "names none" in skipped["reason"] and "never used" in skipped["reason"]
    with pytest.raises(TimeoutError):
        listener.accept()  # nobody connected: no HEAD, no GET
    # the workspace's own store is where it is read from (and only there)
    store = tmp_path / "our-store"
    (store / "evotree-archive" / RUN_ID).mkdir(parents=True)
    (store / "evotree-archive" / RUN_ID / "run.json").write_bytes(
        record + b" " * 10
    )  # longer than listed
    result = pull_evidence(Workspace.open(ws.root), fetch=False, store=str(store))
    assert result.restored == [] and "larger than" in result.skipped[0]["reason"]
    (store / "evotree-archive" / RUN_ID / "run.json").write_bytes(record)
    result = pull_evidence(Workspace.open(ws.root), fetch=False, store=str(store))
    assert result.restored == [RUN_ID]
    assert (ws.root / ".evotree" / "runs" / RUN_ID / "run.json").read_bytes() == record
    with pytest.raises(TimeoutError):
        listener.accept()
    listener.close()
    # a pointer listing a file over max_object_mb is refused before a byte is read
    huge = {**pointer, "files": {"run.json": {"size": 300 * 2**20, "sha256": "0" * 64}}}
    ref = git(
        ws.root,
        "commit-tree",
        subprocess.run(
            ["git", "mktree"],
            cwd=ws.root,
            capture_output=True,
            text=True,
            check=True,
            input=f"100644 blob {_blob(ws.root, json.dumps(huge).encode())}\t{POINTER}\n",
        ).stdout.strip(),
        "-m",
        "x",
    )
    git(ws.root, "update-ref", "refs/evotree/runs/v0-s1-huge", ref)
    result = pull_evidence(Workspace.open(ws.root), fetch=False, store=str(store))
    assert "max_object_mb" in next(
        s["reason"] for s in result.skipped if s["run_id"] == "v0-s1-huge"
    )


# ----------------------------------------------------------------------------- sizes
@pytest.mark.heavy
def test_a_512_mib_blob_of_zeros_is_refused_before_it_is_written_and_memory_stays_bounded(
    ws: Workspace, tmp_path: Path
) -> None:
    from evotree.harness.share import ShareError, _Budget, _fetch

    _bare, attacker = _shared(ws, tmp_path)
    zeros = tmp_path / "zeros"
    with open(zeros, "wb") as handle:
        handle.truncate(512 * 2**20)  # sparse: no disk
    big = git(attacker, "-c", "core.bigFileThreshold=1m", "hash-object", "-w", str(zeros))
    zeros.unlink()
    _plant(attacker, RUN_ID, {"run.json": _blob(attacker, _record(ws)), "evals.parquet": big})
    # the pull in a process of its own, so its peak memory (and its git children's) is its own
    script = (
        "import json, resource, sys\n"
        "from click.testing import CliRunner\n"
        "from evotree.cli.main import cli\n"
        "import evotree.harness.share, evotree.verbs  # loaded before the baseline: the pull's own growth counts\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        f"result = CliRunner().invoke(cli, ['-C', {str(ws.root)!r}, 'pull', '--json'])\n"
        "usage = {'self': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, 'baseline': before,\n"
        "         'children': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\n"
        "print(json.dumps({'code': result.exit_code, 'out': result.stdout, 'kib': usage}))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["code"] == 0, report["out"]
    pulled = json.loads(report["out"])
    (skipped,) = [s for s in pulled["skipped"] if s["run_id"] == RUN_ID]
    assert "512.0 MiB" in skipped["reason"] and "max_object_mb" in skipped["reason"]
    assert pulled["restored"] == []
    runs = ws.root / ".evotree" / "runs"
    written = [p for p in runs.rglob("*") if p.is_file()] if runs.exists() else []
    assert sum(p.stat().st_size for p in written) < 2**20, written  # nothing of it was written
    assert report["kib"]["self"] < 400 * 1024 and report["kib"]["children"] < 400 * 1024, report[
        "kib"
    ]
    # and the fetch itself is capped: a pack over what a pull may write stops git, nothing of it stays
    from evotree.core.gitio import Git

    fresh = tmp_path / "fresh"
    git(tmp_path, "init", "-q", str(fresh))
    with pytest.raises(ShareError, match="max_total_mb"):
        _fetch(Git(fresh), str(_bare), _Budget(256 * 2**20, 64 * 1024))
    packs = fresh / ".git" / "objects" / "pack"
    assert sum(p.stat().st_size for p in packs.rglob("*") if p.is_file()) <= 64 * 1024
    assert not [p for p in packs.iterdir() if p.name.startswith("tmp_")]
    assert not git(fresh, "for-each-ref", "refs/evotree-incoming/", "refs/evotree/")


# ----------------------------------------------------------------------------- links
def test_push_never_follows_a_link_in_a_run_directory(ws: Workspace, tmp_path: Path) -> None:
    from evotree.harness.share import _NotRegular, _read_regular, archive_run, run_ref

    secret = tmp_path / "secret.txt"
    secret.write_text("the approver's private notes\n")
    run_dir = ws.root / ".evotree" / "runs" / RUN_ID
    (run_dir / "logs").mkdir(parents=True)
    (run_dir / "run.json").write_bytes(_record(ws))
    (run_dir / "logs" / "train.out").write_text("ok\n")
    (run_dir / "logs" / "notes.txt").symlink_to(secret)
    run_id, outcome = archive_run(ws, run_dir)
    assert "logs/notes.txt is a link" in outcome and "never followed" in outcome
    assert ws.git.ref_target(run_ref(RUN_ID)) is None
    (run_dir / "logs" / "notes.txt").unlink()
    os.rename(run_dir / "logs", run_dir / "real-logs")
    (run_dir / "logs").symlink_to(tmp_path)  # a linked folder
    assert "logs is a link" in archive_run(ws, run_dir)[1]
    # read through O_NOFOLLOW at every component: a link swapped in after the walk is refused
    (tmp_path / "train.out").write_text("not evidence\n")
    with pytest.raises(_NotRegular):
        _read_regular(run_dir, "logs/train.out")
    (run_dir / "logs").unlink()
    os.rename(run_dir / "real-logs", run_dir / "logs")
    assert _read_regular(run_dir, "logs/train.out")[0] == b"ok\n"
    (run_dir / "run.json").rename(run_dir / "run.real")
    (run_dir / "run.json").symlink_to(run_dir / "run.real")
    with pytest.raises(_NotRegular):
        _read_regular(run_dir, "run.json")
    (run_dir / "run.json").unlink()
    (run_dir / "run.real").rename(run_dir / "run.json")
    assert archive_run(ws, run_dir) == (RUN_ID, "archived")
    assert "notes.txt" not in git(ws.root, "ls-tree", "-r", "--name-only", run_ref(RUN_ID))
