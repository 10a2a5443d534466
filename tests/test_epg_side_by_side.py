"""bench/epg_side_by_side.py: the same policy files through EvoPolicyGym's judge and evotree's.

The first test needs only evotree's .venv: the bench's policies (EvoPolicyGym's contract) run unchanged
through evotree's gym judge in its compatibility mode, as the bench drives it. The second runs both
judges and needs the chroot of ``scripts/epg-chroot`` and an EvoPolicyGym v0.1.0 work tree
(``$EVOTREE_EPG_CHECKOUT``, default ``/tmp/epg``); it is skipped where they are absent.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip(
    "gymnasium", reason="the gym domain needs gymnasium: pip install 'evotree[gym]'"
)

BENCH = Path(__file__).resolve().parent.parent / "bench" / "epg_side_by_side.py"
CHROOT = Path(os.environ.get("EVOTREE_EPG_CHROOT", "/opt/trixie"))
CHECKOUT = Path(os.environ.get("EVOTREE_EPG_CHECKOUT", "/tmp/epg"))


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("epg_side_by_side", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_policies_run_unchanged_in_evotrees_compatibility_judge(tmp_path: Path) -> None:
    from evotree.domains.gym.scoring import compute_references

    bench = _bench()
    seeds = [
        47113601,
        1076138659,
        870966622,
        1708960876,
    ]  # EvoPolicyGym's first four Acrobot held-out seeds
    refs = compute_references(
        {"Acrobot-v1": [25458691]}
    ).to_json()  # static anchors: nothing is played
    out = {
        name: bench.run_evotree("Acrobot-v1", name, "heldout", seeds, refs, tmp_path)
        for name in ("random", "acrobot")
    }
    for name, result in out.items():
        assert result["exit"] == 0, result["stderr_tail"]
        assert len(result["returns"]) == 4, name
        assert result["signals"]["errors"] == 0 and result["signals"]["invalid_actions"] == 0
        assert result["signals"]["replay_mismatches"] == 0
    assert out["random"]["returns"] == [-500.0] * 4
    assert (
        sum(out["acrobot"]["returns"]) / 4 > -150.0
    )  # the hand policy swings up; random never does


@pytest.mark.heavy
@pytest.mark.skipif(
    not (CHROOT / "opt/epg-venv/bin/python").exists()
    or not (CHECKOUT / "src/evopolicygym").is_dir(),
    reason="needs scripts/epg-chroot's chroot and an EvoPolicyGym v0.1.0 work tree ($EVOTREE_EPG_CHECKOUT)",
)
@pytest.mark.skipif(os.geteuid() != 0, reason="chroot needs root")
def test_both_judges_agree_episode_by_episode_on_acrobot(tmp_path: Path) -> None:
    out = tmp_path / "side_by_side.json"
    assert (
        _bench().main(
            [
                "--epg",
                str(CHECKOUT),
                "--chroot",
                str(CHROOT),
                "--episodes",
                "4",
                "--envs",
                "Acrobot-v1",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    rows = json.loads(out.read_text())["envs"]["Acrobot-v1"]["policies"]
    for name, row in rows.items():
        assert row["bit_identical"] == 4, name
        assert row["epg"]["mean_return"] == row["evotree"]["mean_return"]
