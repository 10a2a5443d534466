"""Nothing outside the box follows what a phase wrote.

The attack that worked: a train phase leaves ``evidence/train/rollouts.jsonl`` as a symbolic link
to a host file the sandbox cannot see; compaction, run by evotree outside the sandbox with the
user's rights, followed it and the file's contents came back through ``evotree sql``. Here the
host file holds a line that is a valid rollout row with a marker: if anything reads it, the
marker shows up in the Parquet file or the SQL answer. Also a FIFO (whoever opens it blocks), a
linked phase folder, and the same against the manifest reader, the export and the judge's copy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evotree.harness.compaction import compact_run
from evotree.harness.layout import RunPaths
from evotree.harness.query import query
from evotree.harness.safe_files import UnsafeFile, open_regular, read_regular

MARKER = "HOST-SECRET-7f3a9c"


def _host_secret(tmp_path: Path) -> Path:
    """A host file outside every run directory, shaped as evidence rows so a reader would keep it."""
    secret = tmp_path / "host" / "secret.jsonl"
    secret.parent.mkdir(parents=True)
    row = {
        "run_id": "r",
        "phase": "train",
        "step": 1,
        "group_id": "g",
        "task_id": MARKER,
        "sample_index": 0,
        "reward": 1.0,
        "text": MARKER,
        "split": "train",
        "score": 1.0,
        "ts": 1.0,
    }
    secret.write_text(json.dumps(row) + "\n")
    return secret


def _run_dir(tmp_path: Path, run_id: str = "run-1") -> RunPaths:
    paths = RunPaths(tmp_path / "runs" / run_id)
    for phase in ("train", "eval"):
        paths.evidence_dir(phase).mkdir(parents=True)
    (paths.root / "run.json").write_text(
        json.dumps({"run_id": run_id, "version": "v1", "seed": 0, "status": "succeeded"})
    )
    honest = {
        "run_id": run_id,
        "phase": "train",
        "step": 1,
        "group_id": "g",
        "task_id": "t1",
        "sample_index": 0,
        "reward": 0.5,
        "text": "honest",
        "ts": 1.0,
    }
    (paths.evidence_dir("train") / "signals.jsonl").write_text("")
    (paths.evidence_dir("eval") / "rollouts.jsonl").write_text(
        json.dumps({**honest, "phase": "eval"}) + "\n"
    )
    return paths


def _everything(paths: RunPaths) -> str:
    """Every byte of every Parquet file and every SQL answer over the runs folder."""
    out = []
    for parquet in sorted(paths.root.glob("*.parquet")):
        out.append(parquet.read_bytes().decode("latin-1"))
    for view in ("rollouts", "evals", "signals"):
        out.append(
            json.dumps(query(paths.root.parent, f"SELECT * FROM {view}").to_pylist(), default=str)
        )
    return "\n".join(out)


@pytest.mark.parametrize("kind", ["rollouts", "evals"])
def test_a_symlinked_evidence_file_is_never_read(tmp_path: Path, kind: str) -> None:
    secret = _host_secret(tmp_path)
    paths = _run_dir(tmp_path)
    (paths.evidence_dir("train") / f"{kind}.jsonl").symlink_to(secret)
    # before compaction (a running run: evotree sql reads the JSONL files in place)
    assert MARKER not in json.dumps(
        query(paths.root.parent, f"SELECT * FROM {kind}").to_pylist(), default=str
    )
    result = compact_run(paths.root)
    assert result.refused == {f"evidence/train/{kind}.jsonl": "a symbolic link"}
    assert "refused" in result.to_dict()
    assert MARKER not in _everything(paths)
    assert "honest" in _everything(paths) or kind == "evals"  # the honest rows are still there


def test_a_fifo_as_evidence_does_not_hang_compaction(tmp_path: Path) -> None:
    paths = _run_dir(tmp_path)
    os.mkfifo(paths.evidence_dir("train") / "rollouts.jsonl")
    done: dict[str, object] = {}

    def work() -> None:
        done["result"] = compact_run(paths.root)

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "compaction blocked on the FIFO"
    result = done["result"]
    assert result.refused == {"evidence/train/rollouts.jsonl": "a FIFO"}  # type: ignore[attr-defined]
    assert json.loads(
        json.dumps(query(paths.root.parent, "SELECT text FROM rollouts").to_pylist())
    ) == [{"text": "honest"}]


def test_a_symlinked_phase_folder_is_never_read(tmp_path: Path) -> None:
    secret = _host_secret(tmp_path)
    (secret.parent / "rollouts.jsonl").write_text(secret.read_text())
    paths = _run_dir(tmp_path)
    (paths.root / "evidence" / "judge").symlink_to(secret.parent, target_is_directory=True)
    result = compact_run(paths.root)
    assert result.refused.get("evidence/judge") == "a symbolic link"
    assert MARKER not in _everything(paths)


def test_a_symlinked_evidence_folder_is_never_read(tmp_path: Path) -> None:
    secret = _host_secret(tmp_path)
    (secret.parent / "train").mkdir()
    (secret.parent / "train" / "rollouts.jsonl").write_text(secret.read_text())
    paths = _run_dir(tmp_path)
    for phase in ("train", "eval"):
        for f in paths.evidence_dir(phase).iterdir():
            f.unlink()
        paths.evidence_dir(phase).rmdir()
    (paths.root / "evidence").rmdir()
    (paths.root / "evidence").symlink_to(secret.parent, target_is_directory=True)
    result = compact_run(paths.root)
    assert list(result.refused) == ["evidence"] and "symbolic link" in result.refused["evidence"]
    assert MARKER not in _everything(paths)


def test_safe_open_refuses_links_on_the_way_fifos_devices_and_folders(tmp_path: Path) -> None:
    secret = _host_secret(tmp_path)
    root = tmp_path / "root"
    (root / "real").mkdir(parents=True)
    (root / "real" / "ok.txt").write_text("fine")
    (root / "link-file").symlink_to(secret)
    (root / "link-dir").symlink_to(secret.parent, target_is_directory=True)
    (root / "dev").symlink_to("/dev/zero")
    os.mkfifo(root / "fifo")
    assert read_regular(root, "real/ok.txt") == b"fine"
    cases = {
        "link-file": "a symbolic link",
        "link-dir/secret.jsonl": "link-dir on its way is a symbolic link",
        "fifo": "a FIFO",
        "real": "a directory",
        "dev": "a symbolic link",
        "../host/secret.jsonl": "not a plain",
    }
    for rel, why in cases.items():
        with pytest.raises(UnsafeFile) as caught:
            open_regular(root, rel)
        assert caught.value.reason.startswith(why), (rel, caught.value.reason)
    with pytest.raises(UnsafeFile, match="a device"):  # a device node itself (no link): not opened
        open_regular("/dev", "null")


def test_the_manifest_reader_does_not_follow_a_link(tmp_path: Path) -> None:
    from evotree.harness.integrity import EvidenceChanged, RunEvidence

    secret = _host_secret(tmp_path)
    paths = _run_dir(tmp_path)
    (paths.evidence_dir("train") / "evals.jsonl").symlink_to(secret)
    run = RunEvidence(run_id="run-1", version="v1", state="ok")
    with pytest.raises(EvidenceChanged, match="symbolic link"):
        run.read_verified(paths.root, "evidence/train/evals.jsonl")
    (paths.root / "evidence" / "judge").symlink_to(secret.parent, target_is_directory=True)
    with pytest.raises(EvidenceChanged, match="on its way"):
        run.read_verified(paths.root, "evidence/judge/secret.jsonl")


def test_an_export_into_a_folder_holding_a_fifo_refuses_without_hanging(tmp_path: Path) -> None:
    """The export writes a commit's files; a FIFO at a file's path is refused (O_NONBLOCK, fstat),
    never opened for writing (which would wait for a reader forever)."""
    code = f"""
import os, pygit2, sys
from pathlib import Path
from evotree.harness.export import UnsafeTree, export_tree
repo = pygit2.init_repository({str(tmp_path / "repo")!r})
blob = repo.create_blob(b"data")
tb = repo.TreeBuilder(); tb.insert("f.txt", blob, pygit2.GIT_FILEMODE_BLOB)
sig = pygit2.Signature("a", "a@b")
commit = repo.create_commit("HEAD", sig, sig, "m", tb.write(), [])
target = Path({str(tmp_path / "out")!r}); target.mkdir()
os.mkfifo(target / "f.txt")
try:
    export_tree(repo, commit, target)
except UnsafeTree as exc:
    print("refused", exc)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("refused"), proc.stdout + proc.stderr


def test_the_judges_copy_takes_regular_files_only(tmp_path: Path) -> None:
    from evotree.harness.sandbox_copy import copy_regular_files

    secret = _host_secret(tmp_path)
    cand = tmp_path / "cand"
    (cand / "sub").mkdir(parents=True)
    (cand / "policy.py").write_text("ok")
    (cand / "leak.jsonl").symlink_to(secret)
    (cand / "dir-link").symlink_to(secret.parent, target_is_directory=True)
    os.mkfifo(cand / "sub" / "pipe")
    os.link(secret, cand / "hard")  # a hard link to the host file: one inode, two names
    dst = tmp_path / "copy"
    dst.mkdir()
    report = copy_regular_files(cand, dst, max_files=100, max_bytes=1 << 20)
    assert sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*")) == ["policy.py", "sub"]
    assert {line.split(":")[0] for line in report.refused} == {
        "leak.jsonl",
        "dir-link",
        "sub/pipe",
        "hard",
    }
    assert not any(MARKER in p.read_text() for p in dst.rglob("*") if p.is_file())
