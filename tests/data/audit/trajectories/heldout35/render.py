"""Write a played session (task text, steps with their outputs) in one agent's trajectory format.

The same public formats as the earlier sets; clocks, run ids and a few versions differ.

The writer is the held-out sets' shared one (``../_kit/render.py``, which lists the formats);
this module gives it what the thirty-fifth set's agents wrote of their time (clocks, versions,
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
    clock_start=1_793_200_000,
    clock_spread=1_170_000,
    claude_code="2.1.104",
    claude_model="claude-sonnet-4-5-20250929",
    claude_final_model="claude-opus-4-1-20250805",
    codex_cli="0.134.0",
    mini1="1.17.21",
    mini2="2.8.5",
    mini_model="openai/gpt-5-mini",
    swe_agent="1.1.27",
    run_id="run-f35c08",
    step=351,
    group_id="g35",
)


def render(story: dict[str, Any], task: str, played: Any) -> str:
    """The file's text for story in its format; played: its steps (rollouts: samples' steps)."""
    return _kit.render(VERSIONS, story, task, played)
