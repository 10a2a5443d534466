"""The run directory and evidence contract shared by the harness, the recorder and the query layer.

A run lives in ``<runs_dir>/<run_id>/``::

    run.json                        the run record (RunRecord in evotree.harness.records)
    candidate/                      the version's committed tree, exported without .git (train cwd)
    evidence/<phase>/<kind>.jsonl   written while running, one JSON object per line
    logs/<phase>.out, logs/<phase>.err
    <kind>.parquet                  all phases of one kind, zstd, written when the run ends

``phase`` is ``train`` or ``eval`` (the judge). Kinds: ``signals``, ``rollouts``, ``evals``.
Column names and Arrow types of each kind are in :data:`SCHEMAS`; the recorder writes exactly
these keys, compaction and the DuckDB views read exactly these.

Environment variables the harness sets for a phase (the recorder reads them):
:data:`ENV_RUN_DIR`, :data:`ENV_RUN_ID`, :data:`ENV_VERSION`, :data:`ENV_SEED`,
:data:`ENV_PHASE`, :data:`ENV_EVIDENCE_DIR`, :data:`ENV_CANDIDATE_DIR`, :data:`ENV_MAX_STEPS`.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "PHASES",
    "KINDS",
    "HIDDEN_SPLITS",
    "SCHEMAS",
    "arrow_schema",
    "ENV_CACHE_DIR",
    "ENV_RUN_DIR",
    "ENV_RUN_ID",
    "ENV_VERSION",
    "ENV_SEED",
    "ENV_PHASE",
    "ENV_EVIDENCE_DIR",
    "ENV_CANDIDATE_DIR",
    "ENV_MAX_STEPS",
    "ENV_MAX_EPISODES",
    "ENV_JUDGE_SPLITS",
    "INVALID_SUBMISSION_EXIT",
    "RunPaths",
]

PHASES = ("train", "eval")
KINDS = ("signals", "rollouts", "evals")
#: Splits only the judge (eval phase) may score; rows for them from the train phase are rejected.
HIDDEN_SPLITS = ("validation", "heldout")

ENV_RUN_DIR = "EVOTREE_RUN_DIR"
ENV_RUN_ID = "EVOTREE_RUN_ID"
ENV_VERSION = "EVOTREE_VERSION"
ENV_SEED = "EVOTREE_SEED"
ENV_PHASE = "EVOTREE_PHASE"
ENV_EVIDENCE_DIR = "EVOTREE_EVIDENCE_DIR"
ENV_CANDIDATE_DIR = "EVOTREE_CANDIDATE_DIR"
ENV_MAX_STEPS = "EVOTREE_MAX_STEPS"
#: The workspace's shared cache folder (``[train] prepare`` writes it; the train phase reads it).
ENV_CACHE_DIR = "EVOTREE_CACHE_DIR"
#: Episodes (recorded rollouts) the train phase may still spend; set only when budgeted.
ENV_MAX_EPISODES = "EVOTREE_MAX_EPISODES"
#: Splits the judge is asked to score, comma-separated (default "validation"; `evotree run
#: --heldout` adds "heldout", for the candidate selected on validation).
ENV_JUDGE_SPLITS = "EVOTREE_JUDGE_SPLITS"
#: Exit code of a train phase that found the submission invalid (e.g. policy.py does not
#: define a policy): the run is marked `invalid` and charged nothing.
INVALID_SUBMISSION_EXIT = 65

#: Column -> type name per kind. Types: str, int, float, bool, list[str]. Every row also has
#: run_id (str), phase (str), ts (float, unix seconds) and nonfinite (bool: a NaN/inf value).
SCHEMAS: dict[str, dict[str, str]] = {
    "signals": {
        "run_id": "str",
        "phase": "str",
        "step": "int",
        "metric": "str",
        "value": "float",
        "nonfinite": "bool",
        "ts": "float",
    },
    "rollouts": {
        "run_id": "str",
        "phase": "str",
        "step": "int",
        "group_id": "str",
        "task_id": "str",
        "sample_index": "int",
        "reward": "float",
        "components": "str",  # JSON object: reward component name -> value
        "length": "int",
        "truncated": "bool",
        "finish_reason": "str",
        "text": "str",
        "commands": "list[str]",  # shell commands / tool calls the trajectory issued
        "nonfinite": "bool",
        "ts": "float",
    },
    "evals": {
        "run_id": "str",
        "phase": "str",
        "split": "str",
        "task_id": "str",
        "sample_index": "int",
        "score": "float",
        "nonfinite": "bool",
        "ts": "float",
    },
}


def arrow_schema(kind: str):  # -> pyarrow.Schema (pyarrow imported lazily: it is heavy)
    """The Arrow schema of an evidence kind."""
    import pyarrow as pa

    types = {
        "str": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "list[str]": pa.list_(pa.string()),
    }
    return pa.schema([(name, types[t]) for name, t in SCHEMAS[kind].items()])


class RunPaths:
    """Paths inside one run directory."""

    def __init__(self, run_dir: Path) -> None:
        self.root = Path(run_dir)

    @property
    def record(self) -> Path:
        return self.root / "run.json"

    @property
    def candidate(self) -> Path:
        return self.root / "candidate"

    def evidence_dir(self, phase: str) -> Path:
        return self.root / "evidence" / phase

    def jsonl(self, phase: str, kind: str) -> Path:
        return self.evidence_dir(phase) / f"{kind}.jsonl"

    def parquet(self, kind: str) -> Path:
        return self.root / f"{kind}.parquet"

    def log(self, phase: str, stream: str) -> Path:
        return self.root / "logs" / f"{phase}.{stream}"
