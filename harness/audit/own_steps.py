"""What a trajectory did itself before a step: a merge it started, content it staged, bytecode
it built, a bundle it created. A read of what the trajectory made itself (its own merge message,
index, ``.pyc`` or bundle) shows nothing of the task's future; the hit judge
(:mod:`evotree.harness.audit.trajectories`) clears such reads. Split from that module."""

from __future__ import annotations

import re

from evotree.harness.audit.bytecode_rules import builds_bytecode
from evotree.harness.audit.hits import Hit
from evotree.harness.audit.history_rules import BUNDLE_READ
from evotree.harness.audit.steps import Trajectory

__all__ = ["built", "made_bundle", "staged", "started_merge"]

#: git commands that leave a merge message (.git/MERGE_MSG, SQUASH_MSG) of the trajectory's own
_MERGES = re.compile(r"\bgit\b.*\b(?:merge|cherry-pick|revert|pull|rebase|am|stash)\b")


def started_merge(traj: Trajectory, k: int) -> bool:
    """Whether a step before step ``k`` ran a git command that leaves a merge message."""
    return any(_MERGES.search(step.command or "") for step in traj.steps[:k])


#: git commands that put the trajectory's own content in the index
_STAGES = re.compile(
    r"\bgit\b.*\b(?:add|stage|rm|mv|commit|reset|read-tree|apply\s+--(?:cached|index)|"
    r"update-index\s+--add|restore\s+--staged|merge|cherry-pick|revert|stash|checkout)\b"
)


def staged(traj: Trajectory, k: int, command: str = "") -> bool:
    """Whether the trajectory staged content of its own before ``command`` of step ``k``: in an
    earlier step, or earlier on step ``k``'s own line (``git add -A && git diff --cached``, the
    way mini-swe-agent submits)."""
    if any(_STAGES.search(step.command or "") for step in traj.steps[:k]):
        return True
    line = (traj.steps[k].command or "") if k < len(traj.steps) else ""
    at = line.find(command) if command else -1
    return at > 0 and bool(_STAGES.search(line[:at]))


def built(traj: Trajectory, k: int, command: str) -> bool:
    """Whether the trajectory (re)wrote the project's bytecode itself before ``command`` of
    step ``k``: in an earlier step, or earlier on step ``k``'s own line (``python -m compileall
    pkg && strings pkg/__pycache__/m.pyc``)."""
    if any(builds_bytecode(step.command or "") for step in traj.steps[:k]):
        return True
    line = (traj.steps[k].command or "") if k < len(traj.steps) else ""
    at = line.find(command) if command else -1
    if at < 0:  # re-joined words: the first word naming a cache
        cache = re.search(r"\S*(?:__pycache__|\.pyc\b)", line)
        at = cache.start() if cache else -1
    return at > 0 and builds_bytecode(line[:at])


def made_bundle(traj: Trajectory, k: int, hit: Hit) -> bool:
    """Whether the trajectory ran ``git bundle create FILE`` (for the FILE a bundle read names)
    before the read of step ``k``: in an earlier step, or earlier on step ``k``'s own line. The
    create was judged on its own by the history it packs."""
    name = hit.rule[len(BUNDLE_READ) + 2 :].strip()
    if not name:
        return False
    made = re.compile(r"\bbundle\s+create\s+(?:-\S+\s+)*" + re.escape(name) + r"(?=\s|$)")
    if any(made.search(step.command or "") for step in traj.steps[:k]):
        return True
    line = (traj.steps[k].command or "") if k < len(traj.steps) else ""
    at = line.find(hit.command) if hit.command else -1
    return at > 0 and bool(made.search(line[:at]))
