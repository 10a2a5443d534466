"""Leak audits of what runs saw: ``evotree audit V``, run before any promotion.

Modules:

* :mod:`evotree.harness.audit.commands` — the prefilter and per-step classification, over
  :mod:`~evotree.harness.audit.lexer` (shell lexer), :mod:`~evotree.harness.audit.unwrap` (what a
  command really runs) and :mod:`~evotree.harness.audit.rules` (the leak rules per simple command);
* :mod:`evotree.harness.audit.future_content` — content provenance against the task repository;
* :mod:`evotree.harness.audit.transcripts` — readers of trajectory formats (evotree rollouts, shell
  history, SWE-agent / mini-swe-agent JSON, Claude Code / Codex JSONL);
* :mod:`evotree.harness.audit.trajectories` — the trajectory audit and hash ancestry;
* :mod:`evotree.harness.audit.contamination` — n-gram overlap of training data with hidden splits;
* :mod:`evotree.harness.audit.version_audit` — :func:`audit_version`: every check over a version's runs,
  the leak-adjusted score, findings, the ``audit`` ledger event;
* :mod:`evotree.harness.audit.repo`, :mod:`evotree.harness.audit.protected` — repository hygiene and
  the version's patch against its pristine base, over :mod:`~evotree.harness.audit.protected_paths`
  (which paths are protected), :mod:`~evotree.harness.audit.patch_gate` (the patch gate) and
  :mod:`~evotree.harness.audit.payload` (what a file's content carries).

The public names below are imported lazily (this package is imported by code that must start
fast).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AuditReport",
    "audit_version",
    "audit_trajectories",
    "TrajectoryAudit",
    "AuditFailed",
    "AuditInputError",
    "record_audit",
    "record_task",
]

_LAZY = {
    "AuditReport": "evotree.harness.audit.version_audit",
    "audit_version": "evotree.harness.audit.version_audit",
    "record_task": "evotree.harness.audit.version_audit",
    "record_audit": "evotree.harness.audit.version_audit",
    "audit_trajectories": "evotree.harness.audit.trajectories",
    "TrajectoryAudit": "evotree.harness.audit.trajectories",
    "AuditFailed": "evotree.harness.audit.errors",
    "AuditInputError": "evotree.harness.audit.errors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'evotree.harness.audit' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
