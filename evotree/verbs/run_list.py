"""The typed result of the ``--json`` outputs that list run records (``run``, ``runs``, ``ingest``,
``import tensorboard``): its own small module, so that printing runs imports nothing more than the
run records (:mod:`evotree.verbs.results` re-exports it)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from evotree.harness.records import RunRecord

__all__ = ["RunsResult"]


@dataclass(frozen=True)
class RunsResult:
    """Run records, oldest first: ``evotree run``, ``runs``, ``ingest`` and ``import tensorboard``
    ``--json``."""

    runs: list[RunRecord]
    v: int = 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "v": 1,
            "runs": [r.to_dict() if hasattr(r, "to_dict") else asdict(r) for r in self.runs],
        }
