"""EvoPolicyGym's agent cannot roll out locally: while figures are hidden, `evotree agent`'s sandbox
shows the environments' packages empty (every rollout goes through `run` and is charged); in a
workspace that hides nothing they stay importable."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import EVOTREE_BIN, make_repo

PLAY = (
    "import gymnasium as g; e = g.make('CartPole-v1'); e.reset(seed=1); "
    "print('played', e.step(0)[1])"
)


def _agent(repo: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EVOTREE_BIN), "-C", str(repo), "agent", "--as", "bot", "--", "python3", "-c", code],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.heavy
def test_an_agent_cannot_play_the_environments_while_figures_are_hidden(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from test_gym_finalize import hidden_gym_workspace

    ws = hidden_gym_workspace(tmp_path / "epg")
    proc = _agent(ws.root, PLAY)
    assert proc.returncode != 0 and "played" not in proc.stdout, (proc.stdout, proc.stderr)
    plain = make_repo(tmp_path / "plain")
    subprocess.run([str(EVOTREE_BIN), "-C", str(plain), "init"], check=True, capture_output=True)
    ok = _agent(plain, PLAY)
    assert ok.returncode == 0 and "played" in ok.stdout, (ok.stdout, ok.stderr)
