"""The tools researchers already use: export a tree's runs to TensorBoard, MLflow and W&B.

Every exporter reads the evidence the way ``evotree sql`` does (:func:`evotree.harness.query.query`
over the ``signals`` and ``evals`` views) and the run records the way ``evotree runs`` does
(:func:`evotree.harness.records.list_runs`), then writes one run of the tool per evotree run:

- every signal ``(metric, step, value)`` as a scalar at its step (train-phase signals under their
  metric name, signals of another phase under ``<phase>/<metric>``; non-finite values, stored as
  null, are left out);
- the judge's headline as ``judge/headline`` and each split's mean score as
  ``judge/<split>/mean_score`` at the run's last signal step (0 for a run without signals);
- the run's metadata (version, seed, commit, status, judge commit) as text / params / tags.

The tools are optional (``pip install 'evotree-rl[export]'``) and imported inside the functions
that use them; a missing one raises :class:`MissingExportDependency` (exit 2, code
``missing_dependency``) naming the pip command.

:func:`check_staged` is the pre-commit hook's check: the audit's patch rules over what is staged
in a version's worktree (docs/ecosystem.md).
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evotree.core.errors import EvotreeError
from evotree.core.workspace import Workspace
from evotree.harness.query import query
from evotree.harness.records import list_runs
from evotree.harness.records import runs_dir
from evotree.core.refs import BRANCH_PREFIX
from evotree.harness.audit.errors import AuditInputError
from evotree.harness.audit.patch_gate import BLOCKING
from evotree.harness.version_patch import version_patch

__all__ = [
    "MissingExportDependency",
    "ExportError",
    "RunEvidence",
    "ExportedRun",
    "ExportResult",
    "collect_runs",
    "export_tensorboard",
    "export_mlflow",
    "export_wandb",
    "HEADLINE_TAG",
    "StagedCheck",
    "check_staged",
]

#: Scalar tag of the judge's headline (at the run's last step).
HEADLINE_TAG = "judge/headline"
_PIP = "pip install 'evotree-rl[export]'"


class MissingExportDependency(EvotreeError):
    """An exporter's tool (tensorboard, mlflow, wandb) is not installed."""

    exit_code = 2
    code = "missing_dependency"


class ExportError(EvotreeError):
    """An export could not be written (an unwritable destination, a tool that refused the data)."""

    exit_code = 17
    code = "export_error"


def _need(module: str, package: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExportDependency(
            f"this export needs {package} ({exc.name or exc} is not installed)",
            fix=f"{_PIP}  (or: pip install {package})",
        ) from None


@dataclass
class RunEvidence:
    """One run as the exporters see it: its record and its evidence, read from the views."""

    run_id: str
    version: str
    seed: int
    status: str
    commit: str
    judge_commit: str | None
    started_at: str
    ended_at: str | None
    #: ``(tag, step, value, ts)`` in step order; ``tag`` is the metric (``<phase>/<metric>`` off train)
    signals: list[tuple[str, int, float, float]] = field(default_factory=list)
    #: split -> mean score over that split's evals
    split_means: dict[str, float] = field(default_factory=dict)
    headline: dict[str, Any] | None = None

    @property
    def last_step(self) -> int:
        return max((s[1] for s in self.signals), default=0)

    def final_scalars(self) -> dict[str, float]:
        """The judge's scalars, logged at :attr:`last_step`."""
        out: dict[str, float] = {}
        if self.headline and isinstance(self.headline.get("value"), (int, float)):
            out[HEADLINE_TAG] = float(self.headline["value"])
        for split, mean in sorted(self.split_means.items()):
            out[f"judge/{split}/mean_score"] = mean
        return out

    def metadata(self) -> dict[str, str]:
        """Version, seed, commit, status (and judge commit, times, headline metric) as strings."""
        meta = {
            "run_id": self.run_id,
            "version": self.version,
            "seed": str(self.seed),
            "commit": self.commit,
            "status": self.status,
            "started_at": self.started_at,
        }
        if self.judge_commit:
            meta["judge_commit"] = self.judge_commit
        if self.ended_at:
            meta["ended_at"] = self.ended_at
        if self.headline and self.headline.get("metric"):
            meta["headline_metric"] = str(self.headline["metric"])
        return meta


@dataclass
class ExportedRun:
    run_id: str
    version: str
    seed: int
    status: str
    #: where this run went: a directory (TensorBoard, W&B) or an MLflow run id
    target: str
    scalars: int


@dataclass
class ExportResult:
    """What an export wrote: the tool, the destination and one entry per run."""

    tool: str
    destination: str
    runs: list[ExportedRun] = field(default_factory=list)
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ----------------------------------------------------------------------------- reading
def collect_runs(ws: Workspace, versions: list[str] | None = None) -> list[RunEvidence]:
    """The runs of ``versions`` (all when None or empty), oldest first, with their evidence."""

    if versions:
        wanted = {ws.resolve(v).id for v in versions}
        records = [r for r in list_runs(ws) if r.version in wanted]
    else:
        records = list_runs(ws)
    if not records:
        return []
    base = runs_dir(ws)
    ids = {r.run_id for r in records}
    signals: dict[str, list[tuple[str, int, float, float]]] = {}
    rows = query(
        base,
        "SELECT run_id, phase, metric, step, value, ts FROM signals "
        "WHERE value IS NOT NULL ORDER BY run_id, step, ts, metric",
    ).to_pylist()
    for row in rows:
        if row["run_id"] not in ids or row["step"] is None or not math.isfinite(row["value"]):
            continue
        tag = (
            row["metric"] if row["phase"] in ("train", None) else f"{row['phase']}/{row['metric']}"
        )
        signals.setdefault(row["run_id"], []).append(
            (tag, int(row["step"]), float(row["value"]), float(row["ts"] or 0.0))
        )
    means: dict[str, dict[str, float]] = {}
    for row in query(
        base,
        "SELECT run_id, split, avg(score) AS mean FROM evals WHERE score IS NOT NULL "
        "GROUP BY run_id, split",
    ).to_pylist():
        if row["run_id"] in ids and row["mean"] is not None:
            means.setdefault(row["run_id"], {})[row["split"]] = float(row["mean"])
    return [
        RunEvidence(
            run_id=r.run_id,
            version=r.version,
            seed=r.seed,
            status=r.status,
            commit=r.commit,
            judge_commit=r.judge_commit,
            started_at=r.started_at,
            ended_at=r.ended_at,
            signals=signals.get(r.run_id, []),
            split_means=means.get(r.run_id, {}),
            headline=r.headline,
        )
        for r in records
    ]


def _mkdir(path: Path) -> Path:
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(
            f"cannot create {path}: {exc.strerror or exc}", fix="pass a directory you can write"
        ) from None
    return path


def _safe_name(text: str) -> str:
    """A file-name-safe form of an id (run ids and version ids already are)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", text) or "_"


# ----------------------------------------------------------------------------- TensorBoard
def _text_value(tag: str, text: str) -> Any:
    from tensorboard.compat.proto import summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2

    meta = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text")
    )
    tensor = tensor_pb2.TensorProto(
        dtype=types_pb2.DT_STRING,
        string_val=[text.encode()],
        tensor_shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)]
        ),
    )
    return summary_pb2.Summary.Value(tag=tag, metadata=meta, tensor=tensor)


def export_tensorboard(
    ws: Workspace, directory: str | os.PathLike[str], *, versions: list[str] | None = None
) -> ExportResult:
    """Write one TensorBoard run directory per run: ``<directory>/<version>/<run_id>/``.

    Scalars: every signal at its step, the judge's headline and split means at the last step.
    Text: ``evotree/metadata`` (a Markdown table of version, seed, commit, status, ...) at step 0.
    Exporting again replaces a run's event files (its directory holds only this export's).
    """
    _need("tensorboard", "tensorboard")
    from tensorboard.compat.proto import event_pb2, summary_pb2
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    root = _mkdir(Path(directory))
    result = ExportResult(tool="tensorboard", destination=str(root.resolve()))
    for run in collect_runs(ws, versions):
        logdir = _mkdir(root / _safe_name(run.version) / _safe_name(run.run_id))
        for old in logdir.glob(
            "events.out.tfevents.*"
        ):  # an earlier export of this run: replaced, not doubled
            old.unlink()
        writer = EventFileWriter(str(logdir))
        count = 0
        try:
            table = "| key | value |\n|---|---|\n" + "\n".join(
                f"| {k} | {v} |" for k, v in run.metadata().items()
            )
            writer.add_event(
                event_pb2.Event(
                    wall_time=time.time(),
                    step=0,
                    summary=summary_pb2.Summary(value=[_text_value("evotree/metadata", table)]),
                )
            )
            for tag, step, value, ts in run.signals:
                writer.add_event(
                    event_pb2.Event(
                        wall_time=ts or time.time(),
                        step=step,
                        summary=summary_pb2.Summary(
                            value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)]
                        ),
                    )
                )
                count += 1
            final = run.final_scalars()
            if final:
                writer.add_event(
                    event_pb2.Event(
                        wall_time=time.time(),
                        step=run.last_step,
                        summary=summary_pb2.Summary(
                            value=[
                                summary_pb2.Summary.Value(tag=t, simple_value=v)
                                for t, v in final.items()
                            ]
                        ),
                    )
                )
                count += len(final)
        finally:
            writer.close()
        result.runs.append(
            ExportedRun(run.run_id, run.version, run.seed, run.status, str(logdir), count)
        )
    return result


# ----------------------------------------------------------------------------- MLflow
_MLFLOW_KEY = re.compile(r"[^A-Za-z0-9_\-. /]")


def export_mlflow(
    ws: Workspace,
    tracking_uri: str,
    *,
    versions: list[str] | None = None,
    experiment: str | None = None,
) -> ExportResult:
    """Log one MLflow run per run into ``tracking_uri`` (e.g. ``file:/path/mlruns``).

    MLflow 3 refuses its file store unless ``MLFLOW_ALLOW_FILE_STORE=true``: for a ``file:`` URI
    this sets it in the process's environment (unless already set); a reader of that store
    (``mlflow ui``, ``MlflowClient``) needs the same variable.

    The experiment is ``experiment`` or the workspace's folder name; run name = run id; params:
    version, seed, commit, judge_commit and ``recipe.<key>`` for each scalar of the commit's
    ``recipe.toml``; metrics: every signal with its step, the judge's scalars
    at the last step; tags: ``evotree.version``, ``evotree.status``, ``evotree.run_id``, ...
    Exporting a run again deletes its earlier MLflow run (found by ``evotree.run_id``) first.
    """
    _need("mlflow", "mlflow-skinny")
    from mlflow.entities import Metric, Param
    from mlflow.tracking import MlflowClient

    if tracking_uri.startswith("file:") or "://" not in tracking_uri:
        # MLflow 3 keeps its file store behind an opt-in; a file: URI asked for it explicitly
        os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    name = experiment or ws.root.name
    try:
        client = MlflowClient(tracking_uri=tracking_uri)  # an unsupported scheme raises here
        found = client.get_experiment_by_name(name)
        experiment_id = found.experiment_id if found is not None else client.create_experiment(name)
    except Exception as exc:  # MlflowException, OSError: the store refused
        first = next(
            (line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__
        )
        raise ExportError(
            f"MLflow store {tracking_uri} cannot be used (experiment {name!r}): {first}",
            fix="pass --tracking-uri file:/a/writable/folder, or http(s)://your-mlflow-server",
        ) from None
    result = ExportResult(tool="mlflow", destination=tracking_uri)
    for run in collect_runs(ws, versions):
        meta = run.metadata()
        tags = {f"evotree.{k}": v for k, v in meta.items()}
        tags["mlflow.runName"] = run.run_id
        for earlier in client.search_runs(
            [experiment_id], f"tags.`evotree.run_id` = '{run.run_id}'"
        ):
            client.delete_run(
                earlier.info.run_id
            )  # an earlier export of this run: replaced, not doubled
        created = client.create_run(experiment_id, run_name=run.run_id, tags=tags)
        mlflow_id = created.info.run_id
        metrics = [
            Metric(_MLFLOW_KEY.sub("_", tag), value, int((ts or time.time()) * 1000), step)
            for tag, step, value, ts in run.signals
        ]
        now_ms = int(time.time() * 1000)
        metrics += [
            Metric(_MLFLOW_KEY.sub("_", t), v, now_ms, run.last_step)
            for t, v in run.final_scalars().items()
        ]
        params = [
            Param(k, meta[k]) for k in ("version", "seed", "commit", "judge_commit") if k in meta
        ]
        params += [Param(k, v) for k, v in _recipe_params(ws, run.commit).items()]
        for i in range(0, len(params), 100):  # MLflow's limit per batch
            client.log_batch(mlflow_id, params=params[i : i + 100])
        for i in range(0, len(metrics), 1000):  # MLflow's limit per batch
            client.log_batch(mlflow_id, metrics=metrics[i : i + 1000])
        client.set_terminated(
            mlflow_id, status="FINISHED" if run.status in ("succeeded", "ingested") else "FAILED"
        )
        result.runs.append(
            ExportedRun(run.run_id, run.version, run.seed, run.status, mlflow_id, len(metrics))
        )
    return result


RECIPE_FILE = "recipe.toml"


def _recipe_params(ws: Workspace, commit: str) -> dict[str, str]:
    """``recipe.<dotted key>`` -> value for every scalar of the commit's ``recipe.toml`` ({} without one)."""
    import tomllib

    import pygit2

    try:
        tree = ws.git.repo[commit].peel(pygit2.Tree)
        data = tomllib.loads(tree[RECIPE_FILE].data.decode())
    except (
        KeyError,
        ValueError,
        UnicodeDecodeError,
        pygit2.GitError,
    ):  # none, not TOML, not in this clone
        return {}
    out: dict[str, str] = {}

    def walk(value: Any, prefix: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{prefix}.{key}")
        elif isinstance(value, (str, int, float, bool)) or (
            isinstance(value, list) and len(str(value)) < 500
        ):
            out[_MLFLOW_KEY.sub("_", prefix)] = str(value)[:6000]

    walk(data, "recipe")
    return out


# ----------------------------------------------------------------------------- W&B (offline)
def export_wandb(
    ws: Workspace,
    directory: str | os.PathLike[str],
    *,
    versions: list[str] | None = None,
    project: str | None = None,
) -> ExportResult:
    """Write one offline W&B run per run under ``<directory>/wandb/`` (``WANDB_MODE=offline``).

    Nothing goes over the network; ``wandb sync <directory>/wandb/offline-run-*`` uploads them
    later. Config: version, seed, commit, status; history: every signal at its step; summary: the
    judge's scalars.
    """
    _need("wandb", "wandb")
    import wandb

    root = _mkdir(Path(directory))
    result = ExportResult(tool="wandb", destination=str(root.resolve()))
    saved = {k: os.environ.get(k) for k in ("WANDB_MODE", "WANDB_SILENT", "WANDB_DISABLE_GIT")}
    os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_DISABLE_GIT="true")
    try:
        for run in collect_runs(ws, versions):
            by_step: dict[int, dict[str, float]] = {}
            for tag, step, value, _ts in run.signals:
                by_step.setdefault(step, {})[tag] = value
            final = run.final_scalars()
            wb = wandb.init(
                mode="offline",
                dir=str(root),
                project=project or ws.root.name,
                name=run.run_id,
                group=run.version,
                job_type="evotree-run",
                config=run.metadata(),
                tags=[run.version, run.status],
                reinit="create_new",
                settings=wandb.Settings(
                    console="off",
                    save_code=False,
                    disable_git=True,
                    x_disable_stats=True,
                    x_disable_meta=True,
                ),
            )
            if final:  # the judge's scalars at the last step, with that step's signals
                by_step.setdefault(run.last_step, {}).update(final)
            try:
                for step in sorted(by_step):
                    wb.log(by_step[step], step=step)
                target = str(wb.dir)
            finally:
                wb.finish()
            count = sum(len(v) for v in by_step.values())
            result.runs.append(
                ExportedRun(
                    run.run_id, run.version, run.seed, run.status, str(Path(target).parent), count
                )
            )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return result


# ----------------------------------------------------------------------------- pre-commit
@dataclass
class StagedCheck:
    """The audit's static checks (protected paths, the patch gate) over a worktree's staged tree."""

    version: str
    worktree: str
    #: the commit object the staged tree was wrapped in (no ref names it)
    staged_commit: str
    base: str
    files: int
    findings: list[dict[str, Any]] = field(default_factory=list)
    blocking: list[str] = field(default_factory=list)
    v: int = 1

    @property
    def exit_code(self) -> int:
        """28 (the audit's code) when a finding is high or critical: the commit is refused."""
        return 28 if self.blocking else 0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "exit_code": self.exit_code}


def check_staged(ws: Workspace, worktree: str | os.PathLike[str]) -> StagedCheck:
    """Run the patch rules of ``evotree audit`` on what is staged in a version's worktree.

    The staged tree (the index, written as a tree) is wrapped in a commit object whose parent
    is the worktree's HEAD, and audited as that version's patch would be after the commit
    (:func:`evotree.harness.version_patch.version_patch`: protected paths against the
    champion, the patch gate against the pristine base, with the configuration in force). No
    ref, index or file changes; the tree and commit objects stay unreferenced (``git gc``
    prunes them). For a pre-commit hook: exit 28 refuses the commit.
    """
    import pygit2

    path = Path(worktree)
    try:
        repo = pygit2.Repository(str(path))
    except pygit2.GitError as exc:
        raise AuditInputError(
            f"{path} is not a git worktree: {exc}",
            fix="run it inside a version's worktree (evotree show V names it)",
        ) from None
    if repo.head_is_unborn or repo.head_is_detached:
        raise AuditInputError(
            f"{path}: HEAD is not on a version's branch",
            fix="check out the version's branch (evotree/<id>) in its worktree",
        )
    branch = repo.head.name
    prefix = f"refs/heads/{BRANCH_PREFIX}"
    if not branch.startswith(prefix):
        raise AuditInputError(
            f"{path}: HEAD is on {branch}, not a version's branch ({prefix}<id>)",
            fix="run it inside a version's worktree (evotree show V names it)",
        )
    version = ws.resolve(branch[len(prefix) :]).id
    tree_id = repo.index.write_tree()
    sig = pygit2.Signature("evotree pre-commit", "pre-commit@evotree.invalid")
    staged = repo.create_commit(
        None, sig, sig, "staged changes (evotree pre-commit check)", tree_id, [repo.head.target]
    )
    patch = version_patch(ws, version, commit=str(staged))
    findings = patch.all_findings
    return StagedCheck(
        version=version,
        worktree=str(path.resolve()),
        staged_commit=str(staged),
        base=patch.base,
        files=len(patch.files),
        findings=[f.to_dict() for f in findings],
        blocking=[f.code for f in findings if f.severity in BLOCKING],
    )
