"""Without a sandbox, `gates`, `verify` and every report say so on their first line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import EVOTREE_BIN
from test_sandbox import make_sandbox_repo

from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions


def _json(repo: Path, *args: str) -> dict:
    """The command's --json output, whatever its exit code (a failing gate exits non-zero)."""
    proc = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), *args, "--json"], capture_output=True, text=True
    )
    return json.loads(proc.stdout)


def _first_line(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), *args], capture_output=True, text=True
    )
    return (proc.stdout or proc.stderr).splitlines()[0]


@pytest.mark.heavy
@pytest.mark.parametrize("mode", ["off", "bwrap"])
def test_every_reader_puts_the_sandbox_warning_first(tmp_path: Path, mode: str) -> None:
    repo = make_sandbox_repo(tmp_path / "w", sandbox_config=f'mode = "{mode}"')
    ws = Workspace.open(repo)
    v1 = create_version(ws, hypothesis="the same recipe").id
    run_versions(ws, ["v0", v1])
    gates = _json(repo, "gates", v1)
    verify = _json(repo, "verify", "--no-tags")
    out = tmp_path / "report.md"
    _json(repo, "report", v1, "--format", "md", "--out", str(out))
    markdown = out.read_text()
    if mode == "bwrap":  # sandboxed: nothing to say, nothing said
        assert gates.get("sandbox_warning") is None and verify["sandbox_warning"] is None
        assert "sandbox off" not in markdown and "sandbox off" not in _first_line(
            repo, "verify", "--no-tags"
        )
        return
    for data in (gates, verify):
        assert data["sandbox_warning"].startswith("WARNING: sandbox off")
    assert _first_line(repo, "gates", v1).startswith("WARNING: sandbox off")
    assert _first_line(repo, "verify", "--no-tags").startswith("WARNING: sandbox off")
    first_text_line = [
        line for line in markdown.splitlines() if line and not line.startswith("<!--")
    ][0]
    assert "WARNING: sandbox off" in first_text_line
