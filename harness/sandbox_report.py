"""The one-line sandbox warning of ``evotree gates`` / ``evotree verify`` (moved out of
:mod:`evotree.harness.sandbox`, unchanged)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evotree.core.workspace import Workspace

__all__ = ["sandbox_warning"]


def sandbox_warning(ws: Workspace, version: str | None = None) -> str | None:
    """One line for the top of ``evotree gates`` / ``evotree verify``, or ``None`` when all is sandboxed.

    Warns when the champion's policy turns the sandbox off, and when recorded runs (of
    ``version``, or of any version) ran a phase without one.
    """
    problems = []
    if version is not None:
        version = ws.resolve(version).id
    if ws.config.sandbox.mode == "off":
        problems.append(
            'the champion\'s evotree.toml sets [sandbox] mode = "off": train and judge phases '
            "run without isolation (a candidate can read the judge's data, the repository and "
            "the network)"
        )
    runs = _unsandboxed_runs(ws, version)
    if runs:
        whose = f"of {version} " if version else ""
        problems.append(
            f"{len(runs)} run(s) {whose}ran without a sandbox: {', '.join(runs[:3])}"
            + (" …" if len(runs) > 3 else "")
        )
    if not problems:
        return None
    return "WARNING: sandbox off — " + "; ".join(problems)


def _unsandboxed_runs(ws: Workspace, version: str | None) -> list[str]:
    base = Path(ws.config.workspace.runs_dir)
    base = base if base.is_absolute() else ws.root / base
    found = []
    for record in sorted(base.glob("*/run.json")) if base.is_dir() else []:
        try:
            data = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        if not isinstance(
            data, dict
        ):  # not a run record (a damaged or foreign file): not ours to read
            continue
        if version is not None and data.get("version") != version:
            continue
        phases = data.get("phases") or {}
        if any(isinstance(p, dict) and p.get("sandbox") == "off" for p in phases.values()):
            found.append(str(data.get("run_id", record.parent.name)))
    return found
