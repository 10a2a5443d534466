"""Exports to TensorBoard, MLflow and W&B, and import from TensorBoard, read back by each tool's own reader.

Evidence comes from real `evotree run` runs of the tiny workspace of tests/test_runs.py (a run
takes about a second); no mocks.
"""

from __future__ import annotations

import json
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import Cli, validate
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions
from evotree.harness.query import query
from evotree.harness.records import list_runs, runs_dir
from test_runs import _version, make_run_repo


def f32(value: float) -> float:
    """What TensorBoard's simple_value (a float32) keeps of a float."""
    return struct.unpack("f", struct.pack("f", value))[0]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, str, Any]:
    """A workspace with one succeeded run of v1 (skill 0.8, 3 steps)."""
    ws = Workspace.open(make_run_repo(tmp_path_factory.mktemp("eco") / "w"))
    v1 = _version(ws, "skill = 0.8\nsteps = 3\n")
    (record,) = run_versions(ws, [v1])
    assert record.status == "succeeded", record.error
    return ws, v1, record


# ----------------------------------------------------------------------------- TensorBoard
def test_export_tensorboard_read_back_by_event_accumulator(
    tree: tuple[Workspace, str, Any], tmp_path: Path
) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ws, v1, record = tree
    Cli(ws.root).json("export", "tensorboard", str(tmp_path / "tb"), "--version", v1)
    out = Cli(ws.root).json(
        "export", "tensorboard", str(tmp_path / "tb"), "--version", v1
    )  # again: replaced
    validate(out, "export")
    assert out["tool"] == "tensorboard" and [r["run_id"] for r in out["runs"]] == [record.run_id]
    logdir = tmp_path / "tb" / v1 / record.run_id
    assert Path(out["runs"][0]["target"]).resolve() == logdir.resolve()
    assert len(list(logdir.glob("events.out.tfevents.*"))) == 1
    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()

    def series(tag: str) -> list[tuple[int, float]]:
        return [(e.step, e.value) for e in acc.Scalars(tag)]

    assert series("loss") == [(1, 1.0), (2, 0.5), (3, f32(1 / 3))]
    assert series("reward") == [(1, f32(0.8)), (2, f32(0.8)), (3, f32(0.8))]
    assert series("sees_judge") == [(0, 0.0)]  # the train phase never sees the judge
    # the judge: headline and split mean at the last step
    assert series("judge/headline") == [(3, f32(0.8))]
    assert series("judge/validation/mean_score") == [(3, f32(0.8))]
    assert record.headline["value"] == pytest.approx(0.8)
    # metadata as a text summary
    (text_event,) = acc.Tensors("evotree/metadata")
    table = text_event.tensor_proto.string_val[0].decode()
    for key, value in (
        ("version", v1),
        ("seed", "0"),
        ("commit", record.commit),
        ("status", "succeeded"),
    ):
        assert f"| {key} | {value} |" in table
    assert acc.summary_metadata["evotree/metadata"].plugin_data.plugin_name == "text"


def test_export_tensorboard_of_no_runs_and_unknown_version(
    tree: tuple[Workspace, str, Any], tmp_path: Path
) -> None:
    pytest.importorskip("tensorboard")
    ws, _v1, _record = tree
    cli = Cli(ws.root)
    out = cli.json("export", "tensorboard", str(tmp_path / "tb"), "--version", "v0")
    assert out["runs"] == []
    err = cli.json("export", "tensorboard", str(tmp_path / "tb"), "--version", "v99", code=5)
    assert err["error"]["code"]


def _write_trl_like_events(logdir: Path) -> dict[str, list[tuple[int, float]]]:
    """Event files with the tags transformers' TensorBoardCallback gives a TRL GRPO run."""
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    logged = {
        "train/loss": [(1, 0.25), (2, 0.125), (3, -0.5)],
        "train/reward": [(1, 0.5), (2, 0.75), (3, 1.0)],
        "train/kl": [(2, 0.0078125), (3, 0.015625)],
        "train/learning_rate": [(1, 1e-06), (2, 5e-07), (3, 0.0)],
        "train/train_runtime": [(3, 4.5)],
    }
    writer = EventFileWriter(str(logdir))
    for tag, points in logged.items():
        for step, value in points:
            writer.add_event(
                event_pb2.Event(
                    wall_time=1700000000.0 + step,
                    step=step,
                    summary=summary_pb2.Summary(
                        value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)]
                    ),
                )
            )
    writer.close()
    return logged


def test_import_tensorboard_makes_an_ingested_run(
    tree: tuple[Workspace, str, Any], tmp_path: Path
) -> None:
    pytest.importorskip("tensorboard")
    ws, _v1, _record = tree
    v1 = _version(
        ws, "skill = 0.1\n", hypothesis="trained elsewhere"
    )  # its own version: v1 keeps one run
    logged = _write_trl_like_events(tmp_path / "out" / "runs" / "Dec03_10-00-00_host")
    out = Cli(ws.root).json(
        "import", "tensorboard", str(tmp_path / "out"), "--version", v1, "--seed", "7"
    )
    validate(out, "runs")
    (run,) = out["runs"]
    assert run["status"] == "ingested" and run["version"] == v1 and run["seed"] == 7
    assert run["headline"] is None and run["judge_commit"] is None  # not judged: no score
    rows = query(
        runs_dir(ws), f"SELECT metric, step, value FROM signals WHERE run_id = '{run['run_id']}'"
    ).to_pylist()
    got = sorted((r["metric"], r["step"], r["value"]) for r in rows)
    want = sorted(
        (tag.removeprefix("train/"), step, f32(value))
        for tag, pts in logged.items()
        for step, value in pts
    )
    assert got == want
    assert any(
        r.run_id == run["run_id"] and r.status == "ingested" for r in list_runs(ws, version=v1)
    )


def test_import_tensorboard_refuses_bad_directories(
    tree: tuple[Workspace, str, Any], tmp_path: Path
) -> None:
    pytest.importorskip("tensorboard")
    ws, v1, _record = tree
    cli = Cli(ws.root)
    (tmp_path / "empty").mkdir()
    err = cli.json("import", "tensorboard", str(tmp_path / "empty"), "--version", v1, code=18)
    assert (
        err["error"]["code"] == "ingest_error"
        and "no TensorBoard event file" in err["error"]["message"]
    )
    _write_trl_like_events(tmp_path / "two" / "a")
    _write_trl_like_events(tmp_path / "two" / "b")
    err = cli.json("import", "tensorboard", str(tmp_path / "two"), "--version", v1, code=18)
    assert "2 TensorBoard runs" in err["error"]["message"]


def test_missing_tool_is_a_clear_error(
    tree: tuple[Workspace, str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the export extra: exit 2, code missing_dependency, the pip command as the fix."""
    ws, v1, _record = tree
    cli = Cli(ws.root)
    for module, args in (
        ("tensorboard", ("export", "tensorboard", str(tmp_path / "tb"))),
        ("mlflow", ("export", "mlflow", "--tracking-uri", f"file:{tmp_path / 'ml'}")),
        ("wandb", ("export", "wandb", str(tmp_path / "wb"))),
        ("tensorboard", ("import", "tensorboard", str(tmp_path), "--version", v1)),
    ):
        (tmp_path / "run").mkdir(exist_ok=True)
        (tmp_path / "run" / "events.out.tfevents.1700000000.host").write_bytes(
            b""
        )  # found before reading
        with monkeypatch.context() as patch:
            patch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
            err = cli.json(*args, code=2)["error"]
        assert err["code"] == "missing_dependency", args
        assert "evotree-rl[export]" in err["fix"], args
        assert not (tmp_path / "tb").exists() and not (tmp_path / "wb").exists()


# ----------------------------------------------------------------------------- MLflow
def test_export_mlflow_read_back_by_mlflow_client(
    tree: tuple[Workspace, str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mlflow")
    monkeypatch.setenv(
        "MLFLOW_ALLOW_FILE_STORE", "true"
    )  # MLflow 3 keeps its file store behind an opt-in
    from mlflow.tracking import MlflowClient

    ws, v1, record = tree
    uri = f"file:{tmp_path / 'mlruns'}"
    Cli(ws.root).json(
        "export", "mlflow", "--tracking-uri", uri, "--version", v1, "--experiment", "evo"
    )
    out = Cli(ws.root).json(
        "export", "mlflow", "--tracking-uri", uri, "--version", v1, "--experiment", "evo"
    )
    validate(out, "export")
    (exported,) = out["runs"]
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("evo")
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.run_id == exported["target"] and run.info.run_name == record.run_id
    assert run.info.status == "FINISHED"
    assert run.data.params["version"] == v1 and run.data.params["seed"] == "0"
    assert run.data.params["commit"] == record.commit
    assert run.data.params["recipe.skill"] == "0.8" and run.data.params["recipe.steps"] == "3"
    assert (
        run.data.tags["evotree.status"] == "succeeded"
        and run.data.tags["evotree.run_id"] == record.run_id
    )

    def history(key: str) -> list[tuple[int, float]]:
        return sorted((m.step, m.value) for m in client.get_metric_history(run.info.run_id, key))

    assert history("loss") == [(1, 1.0), (2, 0.5), (3, 1 / 3)]  # doubles: exact
    assert history("reward") == [(1, 0.8), (2, 0.8), (3, 0.8)]
    assert history("judge/headline") == [(3, record.headline["value"])]
    assert history("judge/validation/mean_score") == [(3, pytest.approx(0.8))]


# ----------------------------------------------------------------------------- W&B
def test_export_wandb_offline_run_files(tree: tuple[Workspace, str, Any], tmp_path: Path) -> None:
    pytest.importorskip("wandb")
    ws, v1, record = tree
    out = Cli(ws.root).json("export", "wandb", str(tmp_path / "wb"), "--version", v1)
    validate(out, "export")
    (exported,) = out["runs"]
    run_dir = Path(exported["target"])
    assert (
        run_dir.name.startswith("offline-run-")
        and run_dir.parent == (tmp_path / "wb" / "wandb").resolve()
    )
    (wandb_file,) = run_dir.glob("*.wandb")
    records = _read_wandb_records(wandb_file)
    history = [r for r in records if r.WhichOneof("record_type") == "history"]
    rows = [
        {
            item.key or "/".join(item.nested_key): json.loads(item.value_json)
            for item in h.history.item
        }
        for h in history
    ]
    assert [(r["_step"], r["loss"]) for r in rows if "loss" in r] == [
        (1, 1.0),
        (2, 0.5),
        (3, 1 / 3),
    ]
    (last,) = [r for r in rows if r["_step"] == 3]
    assert last["judge/headline"] == record.headline["value"] and last["reward"] == 0.8
    (run_record,) = [r.run for r in records if r.WhichOneof("record_type") == "run"]
    assert (
        run_record.display_name == record.run_id
        and run_record.run_group == v1
        and list(run_record.tags) == [v1, "succeeded"]
    )
    config = {item.key: json.loads(item.value_json) for item in run_record.config.update}
    assert (
        config["version"] == v1
        and config["commit"] == record.commit
        and config["status"] == "succeeded"
    )


def _read_wandb_records(path: Path) -> list[Any]:
    """The records of a .wandb file, parsed with wandb's own protobuf (wandb.proto.wandb_internal_pb2).

    wandb 0.31 has no Python reader left (its writer is the Go wandb-core); the framing is
    LevelDB's log format behind a 7-byte header (b":W&B", version, ...): 7-byte block headers
    (crc32, length, type) in 32 KiB blocks, records split FULL/FIRST/MIDDLE/LAST.
    """
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    block, pos, records, pending = 32768, 7, [], b""
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # block trailer: padding
            pos += left
            continue
        length = int.from_bytes(data[pos + 4 : pos + 6], "little")
        kind = data[pos + 6]
        if kind == 0 and length == 0:
            break
        chunk = data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):  # FULL or LAST
            rec = wandb_internal_pb2.Record()
            rec.ParseFromString(pending)
            records.append(rec)
            pending = b""
    return records


# ----------------------------------------------------------------------------- pre-commit
def test_precommit_audits_the_staged_tree(tree: tuple[Workspace, str, Any]) -> None:
    """`evotree precommit` in a version's worktree: a staged judge change is refused (exit 28),
    a staged recipe change passes; nothing in the worktree, its index or HEAD changes."""
    from conftest import git
    from evotree.core.versions import create_version

    ws, _v1, _record = tree
    rec = create_version(ws, hypothesis="pre-commit")
    wt = ws.root / rec.worktree
    head = git(wt, "rev-parse", "HEAD")
    (wt / "recipe.toml").write_text("skill = 0.9\nsteps = 3\n")
    git(wt, "add", "recipe.toml")
    ok = Cli(wt).json("precommit")
    validate(ok, "precommit")
    assert ok["version"] == rec.id and ok["blocking"] == [] and ok["exit_code"] == 0
    (wt / "judge").mkdir(exist_ok=True)  # a version's checkout may leave the judge out
    (wt / "judge" / "eval.py").write_text("print('every answer is right')\n")
    git(wt, "add", "judge/eval.py")
    refused = Cli(ws.root).json("precommit", "--worktree", str(wt), code=28)
    validate(refused, "precommit")
    assert "audit.protected_path" in refused["blocking"]
    assert any("judge/eval.py" in json.dumps(f) for f in refused["findings"])
    assert git(wt, "rev-parse", "HEAD") == head  # no commit made, the staged changes still staged
    assert sorted(git(wt, "diff", "--cached", "--name-only").split()) == [
        "judge/eval.py",
        "recipe.toml",
    ]
    err = Cli(ws.root).json("precommit", code=29)  # the main checkout is not on a version's branch
    assert err["error"]["code"]


PRE_COMMIT_CONFIG = """\
repos:
  - repo: local
    hooks:
      - id: evotree-audit
        name: evotree audit (staged)
        entry: evotree precommit
        language: system
        pass_filenames: false
        always_run: true
"""


def test_precommit_hook_under_the_pre_commit_tool(
    tree: tuple[Workspace, str, Any], tmp_path: Path
) -> None:
    """The documented `repo: local` hook, run by pre-commit itself inside a version's worktree."""
    import os
    import shutil
    import subprocess

    from conftest import git
    from evotree.core.versions import create_version

    exe = shutil.which("pre-commit") or shutil.which(
        "pre-commit", path=str(Path(sys.executable).parent)
    )
    if exe is None:
        pytest.skip("needs the pre-commit tool (pip install pre-commit)")
    ws, _v1, _record = tree
    rec = create_version(ws, hypothesis="hooked")
    wt = ws.root / rec.worktree
    config = tmp_path / "pre-commit-config.yaml"
    config.write_text(PRE_COMMIT_CONFIG)
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
    }

    def hook() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [exe, "run", "--config", str(config)],
            cwd=wt,
            env=env,
            text=True,
            capture_output=True,
            timeout=120,
        )

    (wt / "recipe.toml").write_text("skill = 0.7\nsteps = 3\n")
    git(wt, "add", "recipe.toml")
    passed = hook()
    assert passed.returncode == 0, passed.stdout + passed.stderr
    (wt / "gates").mkdir(exist_ok=True)
    (wt / "gates" / "policy.toml").write_text("min_runs = 0\n")
    git(wt, "add", "gates/policy.toml")
    refused = hook()
    assert refused.returncode == 1 and "audit.protected_path" in refused.stdout, (
        refused.stdout + refused.stderr
    )


# ----------------------------------------------------------------------------- math: report_to
@pytest.mark.heavy  # a real (short) GRPO run of the math domain: tens of seconds on 2 cores
@pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning")
def test_math_report_to_tensorboard_then_import(tmp_path: Path) -> None:
    pytest.importorskip("trl", reason="needs the llm extra (trl, transformers, torch)")
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from evotree.api import init as evotree_init
    from evotree.domains.math.settings import SettingsError, parse_recipe
    from test_domain_math import STEPS, fast_recipe, init_repo

    with pytest.raises(SettingsError, match="report_to"):  # network loggers stay refused
        parse_recipe({"trl": {"report_to": ["wandb"]}})
    parse_recipe({"trl": {"report_to": "tensorboard"}})
    repo = init_repo(tmp_path / "repo")
    (repo / "recipe.toml").write_text(
        fast_recipe() + 'report_to = ["tensorboard"]\n'
    )  # the [trl] table
    git_commit(repo)
    evotree_init(repo, domain="math")
    ws = Workspace.open(repo)
    (record,) = run_versions(ws, ["v0"])
    assert record.status == "succeeded", (record.error, record.notes)
    logdir = runs_dir(ws) / record.run_id / "candidate" / "output" / "tensorboard"
    assert list(logdir.glob("events.out.tfevents.*")), sorted(
        p.name for p in logdir.parent.iterdir()
    )
    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0})
    acc.Reload()
    assert [e.step for e in acc.Scalars("train/loss")] == list(range(1, STEPS + 1))
    # and back in as an ingested run: TRL's scalars become signals of the version
    (ingested,) = Cli(repo).json("import", "tensorboard", str(logdir), "--version", "v0")["runs"]
    rows = query(
        runs_dir(ws),
        f"SELECT metric, step, value FROM signals WHERE run_id = '{ingested['run_id']}'",
    ).to_pylist()
    loss = sorted((r["step"], r["value"]) for r in rows if r["metric"] == "loss")
    assert loss == [(e.step, e.value) for e in acc.Scalars("train/loss")]


def git_commit(repo: Path) -> None:
    from conftest import git

    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "a short recipe reporting to tensorboard")
