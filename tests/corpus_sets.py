"""The held-out trajectory sets (tests/data/audit/trajectories/NAME), read the same way by each
set's data tests: the labels, JSON Lines files and the set's own Python modules."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

TRAJECTORIES = Path(__file__).resolve().parent / "data" / "audit" / "trajectories"
#: the transcript formats every held-out set covers (agents' logs, shell histories, rollouts)
FORMATS = frozenset(
    {
        "claude",
        "codex",
        "codex-exec",
        "mini1",
        "mini2",
        "mini2-tool",
        "swe",
        "swe-history",
        "bash",
        "bash-ts",
        "zsh",
        "rollouts",
    }
)


def set_dir(name: str) -> Path:
    """The folder of the trajectory set ``name`` (e.g. "heldout4")."""
    return TRAJECTORIES / name


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON Lines file, blank lines skipped."""
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def labels(name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the meta row, the file rows) of the set's labels.jsonl."""
    rows = read_jsonl(set_dir(name) / "labels.jsonl")
    return rows[0], rows[1:]


def set_module(name: str, module: str) -> ModuleType:
    """The set's ``module``.py, loaded as ``NAME_MODULE`` (the sets use the same file names),
    with the set's folder on sys.path while it runs (a set's module may import its siblings)."""
    folder = set_dir(name)
    spec = importlib.util.spec_from_file_location(f"{name}_{module}", folder / f"{module}.py")
    assert spec and spec.loader
    loaded = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(folder))
    try:
        spec.loader.exec_module(loaded)
    finally:
        sys.path.remove(str(folder))
    return loaded
