"""What every trajectory format is read into: a :class:`Trajectory` of :class:`Step` s.

The readers (:mod:`evotree.harness.audit.transcripts`) build them; the audit
(:mod:`evotree.harness.audit.trajectories`) judges them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Step", "Trajectory"]


@dataclass
class Step:
    """One command a trajectory issued (shell text) and what it printed (None: not recorded)."""

    command: str
    output: str | None = None
    tool: str = "shell"


@dataclass
class Trajectory:
    """One episode of an agent: its steps, and where it came from."""

    id: str
    format: str
    steps: list[Step] = field(default_factory=list)
    source: str | None = None
    task_id: str | None = None
    run_id: str | None = None
    phase: str | None = None
    text: str | None = None  # free observation text (evotree rollouts: the transcript)
    nbytes: int = 0
    #: what the task gave the agent before its first action (system / user messages): a hash
    #: quoted there is the task's, not something the agent dug up
    prompt: str | None = None
    #: why parts of the file could not be read as steps (``audit.unreadable``: never a pass)
    unread: list[str] = field(default_factory=list)
