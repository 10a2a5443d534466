"""`evotree demo`: the whole loop on the math domain through the real CLI (slow: real GRPO runs),
plus fast checks of its refusals and its choice of skill."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from conftest import EVOTREE_BIN, Cli, git

from evotree.demo import _pick_skill
from evotree.core.proc import safe_env

DEMO_LIMIT_S = 300  # issue 9: under 5 minutes on 2 CPU cores


def test_demo_refuses_a_non_empty_folder(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    proc = subprocess.run([str(EVOTREE_BIN), "demo", str(target)], capture_output=True, text=True, env=safe_env())
    assert proc.returncode == 7 and "not an empty folder" in proc.stderr
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]


def test_demo_picks_the_first_applicable_skill() -> None:
    suggestions = {"suggestions": [
        {"skill": "StdGroupFilter", "applies": False, "applied": False, "addresses": []},
        {"skill": "DualLevelFilter", "applies": True, "applied": True, "addresses": []},
        {"skill": "OverlongPenalty", "applies": True, "applied": False,
         "addresses": [{"code": "behavior.truncation_rate_high"}]},
    ]}
    assert _pick_skill(suggestions) == ("OverlongPenalty", ["behavior.truncation_rate_high"])
    assert _pick_skill({"suggestions": []}) == (None, [])
    assert _pick_skill(None) == (None, [])


@pytest.mark.slow
def test_demo_end_to_end(tmp_path: Path) -> None:
    target = tmp_path / "demo"
    started = time.monotonic()
    proc = subprocess.run([str(EVOTREE_BIN), "demo", str(target)], capture_output=True, text=True,
                          env=safe_env(), timeout=900)
    elapsed = time.monotonic() - started
    out = proc.stdout
    assert proc.returncode == 0, out[-4000:] + proc.stderr[-2000:]
    for number in range(1, 11):
        assert f"[{number}/10]" in out
    for command in ("init --domain math", "run v0 --seeds 2", "diagnose v0", "suggest v0", "branch --from v0 --skill",
                    "run v1 --seeds 2", "diagnose v1", "compare v0 v1", "audit v1", "gates v1", "tree",
                    "report v1 --format md", "report v1 --format html"):
        assert f"$ evotree {command}" in out, command
    assert "skipped: evotree" not in out  # every command of the loop exists in this evotree
    assert "still running" in out or "train phase" in out  # visible progress while training
    assert f"cd {target} && evotree promote v1" in out
    # the user's skills/ and domains/ folders did not shadow evotree
    assert (target / "skills" / "__init__.py").exists() and (target / "domains" / "__init__.py").exists()
    # v1 carries the skill the demo said the findings call for, recorded in the ledger
    skill = out.split("→ the findings call for ", 1)[1].split(" ", 1)[0]
    events = Cli(target).json("log", "--version", "v1")["events"]
    assert any(e["kind"] == "skill.applied" and json.dumps(e["data"]).count(skill) for e in events)
    # nothing was promoted: the loop stopped at the human gate
    assert Cli(target).json("tree")["champion"] == "v0"
    assert git(target, "rev-parse", "refs/evotree/champion") == git(target, "rev-parse", "evotree/v0")
    # the reports exist and carry the numbers the runs gave (not canned ones)
    report_dir = target / ".evotree" / "reports" / "v1"
    md = (report_dir / "report.md").read_text()
    html = (report_dir / "report.html").read_text()
    compare = Cli(target).json("compare", "v0", "v1")
    assert f"| mean score | {compare['mean_a']:.3f} | {compare['mean_b']:.3f} | {compare['delta']:+.3f} |" in md
    assert f'id="delta">{compare["delta"]:+.3f}<' in html and "data:image/png;base64," in html
    assert (report_dir / "report-reward.png").is_file()
    assert elapsed < DEMO_LIMIT_S, f"the demo took {elapsed:.0f} s (limit {DEMO_LIMIT_S} s)"
