"""What the tree learned: skill verifications, lessons, negative evidence, incidents.

Kept on ``refs/evotree/memory`` with the same mechanics as the ledger (one commit per append,
compare-and-swap on the ref, no worktree touched), so it travels with ``git push/fetch
'refs/evotree/*'``; ``evotree memory export|import`` carries it between workspaces.

Memory is **advice, never evidence**: suggestions read it, gates never do. An imported entry
cannot change a version's record, a run, a finding or a sign-off.

Public API (imported lazily so ``import memory`` stays cheap):

* writing: :func:`record_promotion`, :func:`record_rejection`, :func:`record_abandonment`,
  :func:`record_incident`, :func:`add_entry`
* reading: :func:`list_entries`, :func:`get_entry`, :func:`search`, :func:`skill_status`
* moving: :func:`export_memory`, :func:`import_memory`, :func:`merge_memory` (a diverged clone's)
* suggestions: :func:`suggest`
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "EntryKind",
    "InvalidMemory",
    "MemoryEntry",
    "MemoryStore",
    "SearchHit",
    "SkillStatus",
    "add_entry",
    "export_memory",
    "get_entry",
    "import_memory",
    "list_entries",
    "merge_memory",
    "record_abandonment",
    "record_incident",
    "record_promotion",
    "record_rejection",
    "search",
    "skill_status",
    "suggest",
]

_WHERE = {
    "EntryKind": "evotree.memory.model",
    "InvalidMemory": "evotree.memory.model",
    "MemoryEntry": "evotree.memory.model",
    "MemoryStore": "evotree.memory.store",
    "SearchHit": "evotree.memory.read",
    "SkillStatus": "evotree.memory.read",
    "record_promotion": "evotree.memory.record",
    "record_rejection": "evotree.memory.record",
    "record_abandonment": "evotree.memory.record",
    "record_incident": "evotree.memory.record",
    "add_entry": "evotree.memory.record",
    "list_entries": "evotree.memory.read",
    "get_entry": "evotree.memory.read",
    "search": "evotree.memory.read",
    "skill_status": "evotree.memory.read",
    "export_memory": "evotree.memory.transfer",
    "import_memory": "evotree.memory.transfer",
    "merge_memory": "evotree.memory.transfer",
    "suggest": "evotree.memory.suggestions",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'memory' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
