"""Executor selection, [executor] validation and the evidence store (no Ray cluster needed)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EVOTREE_BIN, ROOT, Cli

from evotree.core.config import parse_config
from evotree.core.config_execution import ExecutorSection
from evotree.core.errors import ConfigError
from evotree.harness.executors import ExecutorError, make_executor
from evotree.harness.executors.local import LocalExecutor
from evotree.harness.executors.store import MANIFEST, EvidenceStore, evidence_files


def _run_dir(root: Path) -> Path:
    (root / "evidence" / "train").mkdir(parents=True)
    (root / "evidence" / "eval").mkdir(parents=True)
    (root / "logs").mkdir()
    (root / "evidence" / "train" / "signals.jsonl").write_text('{"step": 1}\n{"step": 2}\n')
    (root / "evidence" / "eval" / "evals.jsonl").write_text(
        '{"split": "validation", "score": 1.0}\n'
    )
    (root / "logs" / "train.err").write_text("")
    (root / "candidate").mkdir()
    (root / "candidate" / "model.bin").write_bytes(b"\0" * 10)  # not evidence: never copied
    (root / "run.json").write_text("{}")
    return root


@pytest.mark.parametrize("scheme", ["", "file://"])
def test_store_round_trip_with_manifest(tmp_path: Path, scheme: str) -> None:
    local = _run_dir(tmp_path / "worker")
    store = EvidenceStore(f"{scheme}{tmp_path / 'store'}")
    manifest = store.finish("r1", local, {"status": "succeeded"})
    assert set(manifest["files"]) == {
        "evidence/train/signals.jsonl",
        "evidence/eval/evals.jsonl",
        "logs/train.err",
    }
    assert not (tmp_path / "store" / "runs" / "r1" / "candidate").exists()
    fetched = store.fetch("r1", tmp_path / "driver")
    assert fetched.complete and fetched.manifest["status"] == "succeeded" and not fetched.problems
    assert (tmp_path / "driver" / "evidence" / "train" / "signals.jsonl").read_text().count(
        "\n"
    ) == 2


def test_store_without_manifest_is_incomplete_but_imported(tmp_path: Path) -> None:
    local = _run_dir(tmp_path / "worker")
    store = EvidenceStore(str(tmp_path / "store"))
    store.put_files("r1", local, evidence_files(local))  # a partial sync, then the worker died
    fetched = store.fetch("r1", tmp_path / "driver")
    assert not fetched.complete and "no manifest.json" in fetched.problems[0]
    assert sorted(fetched.files) == sorted(evidence_files(local))


def test_store_detects_a_file_changed_or_missing_after_the_manifest(tmp_path: Path) -> None:
    local = _run_dir(tmp_path / "worker")
    store = EvidenceStore(str(tmp_path / "store"))
    store.finish("r1", local, {"status": "succeeded"})
    remote = tmp_path / "store" / "runs" / "r1"
    (remote / "evidence" / "train" / "signals.jsonl").write_text('{"step": 1}\n')  # truncated
    (remote / "logs" / "train.err").unlink()
    fetched = store.fetch("r1", tmp_path / "driver")
    assert not fetched.complete
    assert any("signals.jsonl does not match the manifest" in p for p in fetched.problems)
    assert any(
        "logs/train.err is listed in the manifest but missing" in p for p in fetched.problems
    )


def test_store_imports_only_run_evidence_names(tmp_path: Path) -> None:
    local = _run_dir(tmp_path / "worker")
    store = EvidenceStore(str(tmp_path / "store"))
    store.finish("r1", local, {"status": "succeeded"})
    remote = tmp_path / "store" / "runs" / "r1"
    (remote / "run.json").write_text(
        '{"status": "succeeded", "headline": {"value": 1.0}}'
    )  # forged
    manifest = json.loads((remote / MANIFEST).read_text())
    manifest["files"]["../../escape.txt"] = {"size": 1, "sha256": "x"}
    (remote / MANIFEST).write_text(json.dumps(manifest))
    fetched = store.fetch("r1", tmp_path / "driver" / "run")
    assert not (tmp_path / "driver" / "run" / "run.json").exists()
    assert (
        not (tmp_path / "escape.txt").exists() and not (tmp_path / "driver" / "escape.txt").exists()
    )
    assert not fetched.complete and any("not run evidence" in p for p in fetched.problems)


def test_store_unknown_protocol_is_an_executor_error() -> None:
    with pytest.raises(ExecutorError, match="cannot open the evidence store") as info:
        EvidenceStore("nosuchproto://bucket/x")
    assert info.value.exit_code == 35 and "fsspec" in info.value.fix


def test_executor_section_validation() -> None:
    section = parse_config(
        '[executor]\nkind = "ray"\nevidence_uri = "s3://b/evotree"\nmax_retries = 3\n'
    ).executor
    assert (section.kind, section.evidence_uri, section.max_retries, section.sync_seconds) == (
        "ray",
        "s3://b/evotree",
        3,
        10.0,
    )
    for bad, key in (
        ("max_retries = -1", "executor.max_retries"),
        ("sync_seconds = 0", "executor.sync_seconds"),
        ('kind = "pbs"', "executor.kind"),
        ("gpus = -1", "executor.gpus"),
    ):
        with pytest.raises(ConfigError) as info:
            parse_config(f"[executor]\n{bad}\n")
        assert info.value.details["key"] == key, bad


def test_make_executor_chooses_and_overrides() -> None:
    local = make_executor(ExecutorSection(jobs=3))
    assert isinstance(local, LocalExecutor) and local.jobs == 3
    assert make_executor(ExecutorSection(jobs=3), jobs=1).jobs == 1
    ray_executor = make_executor(
        ExecutorSection(kind="ray", address="10.0.0.1:6379"), address="auto"
    )
    assert ray_executor.kind == "ray" and ray_executor.address == "auto"
    assert make_executor(ExecutorSection(kind="ray"), kind="local").kind == "local"
    assert make_executor(ExecutorSection(), kind="slurm").kind == "slurm"
    with pytest.raises(
        ExecutorError, match="unknown executor 'pbs'; expected one of local, ray, slurm"
    ):
        make_executor(ExecutorSection(), kind="pbs")


def test_cli_rejects_unknown_executor(ws: object, run: Cli) -> None:
    result = run("run", "v0", "--executor", "pbs", code=2)
    assert "'pbs' is not one of 'local', 'ray'" in result.output


def test_choosing_the_local_executor_never_imports_ray(tmp_path: Path) -> None:
    code = (
        "import sys; from evotree.harness.executors import make_executor; from evotree.core.config_execution import ExecutorSection;"
        "import evotree.harness.records; make_executor(ExecutorSection(kind='local'));"
        "print('ray' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-P", "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_unreachable_ray_address_fails_fast_with_a_fix(ws: object, repo: Path) -> None:
    pytest.importorskip("ray")
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # a cluster nobody runs must be refused, not waited for: the timeout fails the test if it hangs
    proc = subprocess.run(
        [
            str(EVOTREE_BIN),
            "-C",
            str(repo),
            "run",
            "v0",
            "--executor",
            "ray",
            "--address",
            f"127.0.0.1:{port}",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 35 and error["code"] == "executor_error", proc.stderr
    assert (
        f"cannot reach the Ray cluster at 127.0.0.1:{port}" in error["message"]
        and "ray start" in error["fix"]
    )
    assert not list((repo / ".evotree" / "runs").glob("v0-*"))  # nothing was started


def test_candidate_package_is_the_exported_commit_without_judge_paths(
    ws: object, repo: Path
) -> None:
    import io
    import tarfile

    from conftest import git

    from evotree.harness.executors.ray import _tar_commit

    (repo / "judge").mkdir()
    (repo / "judge" / "hidden.json").write_text('{"validation": ["secret"]}')
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "judge and a script")
    commit = git(repo, "rev-parse", "HEAD")
    (repo / "train.py").write_text("print('uncommitted edit')\n")  # the live worktree never travels
    data, count = _tar_commit(ws, commit, exclude=["judge/"])
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = {m.name: m for m in archive.getmembers()}
        assert "judge" not in members and not any(name.startswith("judge/") for name in members)
        assert archive.extractfile("train.py").read() == b"print('train')\n"
        assert members["run.sh"].mode & 0o111 and members["train.py"].mtime == 0
    assert count == sum(1 for m in members.values() if m.isfile())
    again, _ = _tar_commit(ws, commit, exclude=["judge/"])
    assert again == data  # deterministic: one content-addressed package per commit
    judge, _ = _tar_commit(ws, commit, exclude=[])
    with tarfile.open(fileobj=io.BytesIO(judge)) as archive:
        assert "judge/hidden.json" in archive.getnames()


# ---------------------------------------------------------------- review fixes (store, syncer, kill)
def test_fetch_checks_against_the_returned_manifest_not_a_forged_store_copy(tmp_path: Path) -> None:
    local = _run_dir(tmp_path / "worker")
    store = EvidenceStore(str(tmp_path / "store"))
    returned = store.finish(
        "r1", local, {"status": "succeeded"}
    )  # what the worker returned via Ray
    remote = tmp_path / "store" / "runs" / "r1"
    forged = '{"split": "validation", "score": 99.0}\n'
    (remote / "evidence" / "eval" / "evals.jsonl").write_text(forged)  # train code rewrote both
    (remote / "evidence" / "train" / "rollouts.jsonl").write_text('{"x": 1}\n')  # and added a file
    manifest = json.loads((remote / MANIFEST).read_text())
    manifest["files"]["evidence/eval/evals.jsonl"] = {
        "size": len(forged),
        "sha256": hashlib.sha256(forged.encode()).hexdigest(),
    }
    manifest["files"]["evidence/train/rollouts.jsonl"] = {
        "size": 9,
        "sha256": hashlib.sha256(b'{"x": 1}\n').hexdigest(),
    }
    (remote / MANIFEST).write_text(json.dumps(manifest))
    assert store.fetch("r1", tmp_path / "naive").complete  # the store copy alone is fooled...
    fetched = store.fetch("r1", tmp_path / "driver", expected=returned["files"])
    assert not fetched.complete  # ...the returned manifest is not
    assert any(
        "evidence/eval/evals.jsonl does not match the manifest" in p for p in fetched.problems
    )
    assert fetched.manifest is None  # the store's manifest.json was not even read
    assert not (
        tmp_path / "driver" / "evidence" / "train" / "rollouts.jsonl"
    ).exists()  # not listed: not imported
    # untouched evidence checked against the returned manifest is complete
    store.finish("r2", local, {"status": "succeeded"})
    assert store.fetch("r2", tmp_path / "d2", expected=returned["files"]).complete


def test_evidence_files_looks_up_only_contract_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = _run_dir(tmp_path / "run")
    (local / "candidate" / "ckpt").mkdir()
    (local / "evidence" / "eval" / "evals.jsonl").unlink()
    (local / "evidence" / "eval" / "evals.jsonl").symlink_to(local / "candidate" / "model.bin")

    def no_walk(*_: object, **__: object) -> None:
        raise AssertionError("the run directory was walked")

    monkeypatch.setattr(Path, "rglob", no_walk)
    monkeypatch.setattr(Path, "iterdir", no_walk)
    assert evidence_files(local) == [
        "evidence/train/signals.jsonl",
        "logs/train.err",
    ]  # no link, no candidate/


def test_syncer_retries_a_failed_copy(tmp_path: Path) -> None:
    from evotree.harness.executors.node import Syncer as _Syncer

    local = _run_dir(tmp_path / "run")
    store = EvidenceStore(str(tmp_path / "store"))
    real_put, calls = store.put_files, []

    def flaky(run_id: str, root: Path, rels: list[str]) -> None:
        calls.append(list(rels))
        if len(calls) == 1:
            raise RuntimeError("store unavailable")
        real_put(run_id, root, rels)

    store.put_files = flaky  # type: ignore[method-assign]
    syncer = _Syncer(store, "r1", local, 60.0)
    with pytest.raises(RuntimeError):
        syncer.sync()
    assert syncer.sent == {}
    syncer.sync()  # the failed files are sent again
    assert sorted(calls[1]) == sorted(evidence_files(local))
    assert (tmp_path / "store" / "runs" / "r1" / "evidence" / "eval" / "evals.jsonl").exists()
    syncer.sync()
    assert len(calls) == 2  # nothing changed: nothing re-sent


def test_put_json_on_an_object_store_is_one_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = EvidenceStore("memory://evotree-test-store")
    assert (
        not store.local
        and EvidenceStore(str(tmp_path)).local
        and EvidenceStore(f"file://{tmp_path}").local
    )

    def no_move(*_: object, **__: object) -> None:
        raise AssertionError("mv on an object store is a copy and a delete")

    monkeypatch.setattr(store.fs, "mv", no_move)
    store.put_json("r1", MANIFEST, {"status": "succeeded"})
    assert store.read_json("r1", MANIFEST) == {"status": "succeeded"}
    assert not store.fs.exists(store.run_path("r1", MANIFEST + ".tmp"))
    local = EvidenceStore(str(tmp_path / "s"))
    local.put_json("r1", MANIFEST, {"a": 1})  # a file system: temporary name, then a rename
    assert json.loads((tmp_path / "s" / "runs" / "r1" / MANIFEST).read_text()) == {"a": 1}
    assert not (tmp_path / "s" / "runs" / "r1" / (MANIFEST + ".tmp")).exists()


def test_kill_run_processes_kills_by_run_id_and_returns_pids(tmp_path: Path) -> None:
    import os

    from evotree.harness.layout import ENV_RUN_ID
    from evotree.harness.recovery import kill_run_processes

    script = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True); print('up', flush=True); time.sleep(60)"
    mine = subprocess.Popen(
        [sys.executable, "-c", script],
        env={**os.environ, ENV_RUN_ID: "run-kill-1"},
        stdout=subprocess.PIPE,
        text=True,
    )
    other = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"],
        env={**os.environ, ENV_RUN_ID: "run-kill-2"},
    )
    try:
        assert (
            mine.stdout is not None and mine.stdout.readline().strip() == "up"
        )  # the grandchild exists
        killed = kill_run_processes("run-kill-1")
        assert mine.pid in killed and len(killed) == 2  # the child and its setsid grandchild
        assert mine.wait(timeout=5) == -9
        assert other.poll() is None  # another run's process is left alone
        import evotree.harness.executors.ray_worker as worker

        assert not hasattr(
            worker, "kill_run_processes"
        )  # one implementation, in evotree.harness.recovery
    finally:
        other.kill()
        mine.kill()
        other.wait()
