"""Write a played session (task text, steps with their outputs) in one agent's trajectory format.

The writer is the held-out sets' shared one (``../_kit/render.py``, which lists the formats);
this module gives it what the fourth set's agents wrote of their time (clocks, versions, models,
rollout ids).
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
    clock_start=1_733_300_000,
    clock_spread=5_000_000,
    claude_code="1.0.98",
    claude_model="claude-sonnet-4-20250514",
    claude_final_model="claude-sonnet-4-20250514",
    codex_cli="0.58.0",
    mini1="1.14.2",
    mini2="2.1.0",
    mini_model="anthropic/claude-sonnet-4-5-20250929",
    swe_agent="1.1.0",
    run_id="run-7f3a2c",
    step=41,
    group_id="g3",
)


def render(story: dict[str, Any], task: str, played: Any) -> str:
    """The file's text for story in its format; played: its steps (rollouts: samples' steps)."""
    return _kit.render(VERSIONS, story, task, played)
