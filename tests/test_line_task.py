"""The line task's text lives once (evotree.domains.line_task) and each protocol still writes the
task.py it wrote before: a workspace made earlier keeps a byte-identical file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from evotree.domains.line_task import TASK_PY_INLINE, TASK_PY_WITH_LINE
from evotree.domains.protocols import materialize_ai4ai
from evotree.domains.rsibench_data import materialize_rsibench

#: sha256 of the task.py each protocol wrote when the two texts were still separate copies
WRITTEN = {
    "ai4ai": "68d8f14e338583cd93db6bff32ecdd645adb2cb3a45386e57ecf7e43828561fd",
    "rsibench-data": "3551a60364aba2f69ec781569c41e26aca2829ea3e4b6bf59c40cfb0e304a720",
}


@pytest.mark.parametrize(
    ("protocol", "materialize"),
    [("ai4ai", materialize_ai4ai), ("rsibench-data", materialize_rsibench)],
)
def test_each_protocol_writes_the_task_it_always_wrote(
    tmp_path: Path, protocol: str, materialize: object
) -> None:
    materialize(tmp_path)  # type: ignore[operator]
    for rel in ("task.py", "judge/judge_task.py"):  # the candidate's copy and the judge's
        digest = hashlib.sha256((tmp_path / rel).read_bytes()).hexdigest()
        assert digest == WRITTEN[protocol], (protocol, rel)


def test_the_two_texts_are_the_same_task() -> None:
    """Same points, labels and predictions: only the clean label's spelling differs."""
    inline: dict[str, object] = {}
    named: dict[str, object] = {}
    exec(TASK_PY_INLINE, inline)  # noqa: S102 - the template's own code
    exec(TASK_PY_WITH_LINE, named)  # noqa: S102
    assert "line" not in inline and "line" in named
    for seed in (0, 1, 12345):
        assert inline["points"](seed, 200) == named["points"](seed, 200)  # type: ignore[operator]
        assert inline["points"](seed, 50, 0.0) == named["points"](seed, 50, 0.0)  # type: ignore[operator]
    clean = named["points"](3, 100, 0.0)  # type: ignore[operator]
    assert all(named["line"](x, y) == label for x, y, label in clean)  # type: ignore[operator]
