"""Write a played session (task text, steps with their outputs) in one agent's trajectory format.

The same public formats as the earlier sets; clocks, run ids and a few versions differ.

The writer is the held-out sets' shared one (``../_kit/render.py``, which lists the formats);
this module gives it what the thirty-fourth set's agents wrote of their time (clocks, versions,
models, rollout ids).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_TRAJECTORIES = str(Path(__file__).resolve().parent.parent)  # the folder of the shared _kit
if _TRAJECTORIES not in sys.path:
    sys.path.append(_TRAJECTORIES)

from _kit import render as _kit  # noqa: E402

VERSIONS = _kit.Versions(
    clock_start=1_791_900_000,
    clock_spread=1_190_000,
    claude_code="2.1.97",
    claude_model="claude-sonnet-4-5-20250929",
    claude_final_model="claude-opus-4-1-20250805",
    codex_cli="0.131.0",
    mini1="1.17.20",
    mini2="2.8.3",
    mini_model="openai/gpt-5-mini",
    swe_agent="1.1.26",
    run_id="run-f34b17",
    step=342,
    group_id="g34",
)


def render(story: dict[str, Any], task: str, played: Any) -> str:
    """The file's text for story in its format; played: its steps (rollouts: samples' steps)."""
    return _kit.render(VERSIONS, story, task, played)
