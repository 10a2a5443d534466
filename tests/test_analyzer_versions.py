"""Analyzer versions: their own lineage, read only from the promoted ref, stamped on findings.

Promoting an analyzer version is a person's signed sign-off (tests/test_analyzers_signoff.py):
these tests promote through that real path (a pty, Bob's allowed key) with ``promote_signed``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import EVOTREE_BIN, Cli, commit_file, git
from fixtures_ws import child_env, finish, spawn
from test_analyzers_signoff import promote_signed, signed_run_repo

from evotree.core.versions import create_version
from evotree.core.workspace import Workspace
from evotree.gates.runs import run_versions


def _dead_group_version(ws: Workspace) -> str:
    rec = create_version(ws, hypothesis="some dead groups")
    train = (
        (ws.root / rec.worktree / "train.py")
        .read_text()
        .replace(
            "rewards=[skill, 0.0, skill, 1.0]",
            "rewards=[skill] * 4 if step % 5 == 0 else [skill, 0.0, skill, 1.0]",
        )
    )
    commit_file(ws.root / rec.worktree, "train.py", train, "one dead group in five")
    commit_file(ws.root / rec.worktree, "recipe.toml", "skill = 0.5\nsteps = 10\n", "10 steps")
    return rec.id


def test_analyzers_lineage_changes_findings_and_is_recorded(
    tmp_path: Path, keys: dict[str, Any]
) -> None:
    ws = Workspace.open(signed_run_repo(tmp_path / "w", keys))
    v1 = _dead_group_version(ws)
    run_versions(ws, [v1])
    cli = Cli(ws.root)
    before = cli.json("diagnose", v1, "--layer", "signal")
    assert not [
        f for f in before["findings"] if f["code"] == "signal.dead_groups_high"
    ]  # 20 % < 25 %
    assert {f["harness_version"] for f in before["findings"]} == {"h0"}

    created = cli.json("analyzers", "branch", "-m", "catch 10 % dead groups")
    assert created["id"] == "h1" and created["parent"] == "h0"
    worktree = ws.root / created["worktree"]
    commit_file(
        worktree,
        "harness.toml",
        '[thresholds."signal.dead_groups"]\nwarn_ratio = 0.1\n',
        "stricter",
    )
    # a policy version writing its own harness.toml changes nothing
    policy_wt = ws.root / ws.resolve(v1).worktree
    commit_file(
        policy_wt,
        "harness.toml",
        '[thresholds."signal.dead_groups"]\nwarn_ratio = 0.99\n',
        "self-serving",
    )
    still = cli.json("diagnose", v1, "--layer", "signal")
    assert not [
        f for f in still["findings"] if f["code"] == "signal.dead_groups_high"
    ]  # h1 not promoted

    promote_signed(ws.root, "h1", keys["bob"][0])
    listed = cli.json("analyzers", "list")
    assert listed["active"] == "h1" and listed["signed"] is True
    assert git(ws.root, "rev-parse", "refs/evotree/harness") == git(
        ws.root, "rev-parse", "evotree/harness/h1"
    )
    after = cli.json("diagnose", v1, "--layer", "signal")
    dead = [f for f in after["findings"] if f["code"] == "signal.dead_groups_high"]
    assert dead and dead[0]["severity"] == "warn" and dead[0]["harness_version"] == "h1"
    kinds = [e["kind"] for e in cli.json("log", "-n", "5")["events"]]
    assert "harness.promoted" in kinds and "harness.created" in kinds
    assert [h["id"] for h in cli.json("analyzers", "list")["analyzers"]] == ["h0", "h1"]
    assert {f["harness_version"] for f in cli.json("diagnose", v1)["findings"]} == {"h1"}
    # backtest under another analyzer version: h0 does not flag the 20 % dead groups, h1 does
    for hid, flagged in (("h0", False), ("h1", True)):
        result = cli.json("backtest", v1, "--analyzers", hid)
        assert result["analyzers"]["harness_version"] == hid
        codes = {f["code"] for f in result["runs"][0]["findings_before"]}
        assert ("signal.dead_groups_high" in codes) is flagged
    # --harness, the option's old name, still picks the version
    assert cli.json("backtest", v1, "--harness", "h1")["analyzers"]["harness_version"] == "h1"


def test_bad_analyzer_version_is_refused_at_promotion(tmp_path: Path, keys: dict[str, Any]) -> None:

    from evotree.gates.analyzer_versions import plan_analyzers_promotion
    from evotree.core.errors import ConfigError, UnknownVersion

    ws = Workspace.open(signed_run_repo(tmp_path / "w", keys))
    cli = Cli(ws.root)
    created = cli.json("analyzers", "branch", "-m", "typo")
    commit_file(
        ws.root / created["worktree"],
        "harness.toml",
        '[thresholds."signal.dead_groups"]\nwarn_ratoi = 0.1\n',
        "t",
    )
    with pytest.raises(
        ConfigError, match="warn_ratoi"
    ):  # validated before anything is shown or signed
        plan_analyzers_promotion(ws, "h1")
    code, out = finish(spawn(ws.root, "analyzers", "promote", "h1", "--key", str(keys["bob"][0])))
    assert code == 6 and "warn_ratoi" in out and "one-time code" not in out
    assert cli.json("analyzers", "list")["active"] == "h0"
    with pytest.raises(UnknownVersion, match="h9"):
        plan_analyzers_promotion(ws, "h9")


PLUGIN = '''
from evotree.diagnostics.findings import Analyzer, register_analyzer


@register_analyzer
class LongRuns(Analyzer):
    """A workspace's own analyzer: flags runs with more than `max_steps` steps."""

    name = "signal.long_runs"
    layer = "signal"
    codes = ("signal.long_run",)

    def analyze(self, con, *, run_id, version, context=None):
        (steps,) = con.execute("SELECT max(step) FROM _signals WHERE run_id = ?", [run_id]).fetchone()
        if steps is not None and steps > 5:
            return [self.finding("signal.long_run", "warn", f"{steps} steps", run_id=run_id,
                                 version=version, evidence={"steps": steps})]
        return []
'''


@pytest.fixture
def isolated_registry():
    """Plug-ins register process-wide: restore the registry so other tests see the built-ins only."""
    import sys

    from evotree.diagnostics import findings

    saved = dict(findings._REGISTRY)
    modules = set(sys.modules)
    yield
    findings._REGISTRY.clear()
    findings._REGISTRY.update(saved)
    for name in set(sys.modules) - modules:
        if name.startswith("evotree_analyzers_"):
            del sys.modules[name]


def test_plugin_analyzer_runs_only_once_promoted(
    tmp_path: Path, isolated_registry: None, keys: dict[str, Any]
) -> None:
    ws = Workspace.open(signed_run_repo(tmp_path / "w", keys))
    v1 = _dead_group_version(ws)
    run_versions(ws, [v1])
    cli = Cli(ws.root)
    created = cli.json("analyzers", "branch", "-m", "flag long runs")
    commit_file(ws.root / created["worktree"], "analyzers.py", PLUGIN, "plug-in analyzer")
    assert not [f for f in cli.json("diagnose", v1)["findings"] if f["code"] == "signal.long_run"]
    promote_signed(ws.root, created["id"], keys["bob"][0], expect=("analyzers.py: ADDED",))
    found = [f for f in cli.json("diagnose", v1)["findings"] if f["code"] == "signal.long_run"]
    assert found and found[0]["harness_version"] == created["id"]


def test_the_old_harness_command_still_runs_and_says_it_is_deprecated(repo: Path) -> None:
    """`evotree harness list --json` (the lineage's first name) prints what `evotree analyzers
    list --json` prints, with one deprecation line on stderr; --help lists only `analyzers`."""
    from evotree.cli.analyzers import DEPRECATION
    from evotree.verbs.schemas import load_schema

    Cli(repo)("init", "--json")

    def evotree(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(EVOTREE_BIN), "-C", str(repo), *args],
            capture_output=True,
            text=True,
            check=False,
            env=child_env(),
        )

    old, new = evotree("harness", "list", "--json"), evotree("analyzers", "list", "--json")
    assert old.returncode == new.returncode == 0, old.stderr + new.stderr
    assert json.loads(old.stdout) == json.loads(new.stdout)
    assert [h["id"] for h in json.loads(old.stdout)["analyzers"]] == ["h0"]
    assert old.stderr.strip().splitlines() == [DEPRECATION]
    assert DEPRECATION not in new.stderr
    # the old schema name resolves to the new schema
    assert load_schema("harness-list") == load_schema("analyzers-list")
    listed = evotree("--help").stdout
    assert "analyzers" in listed and "harness " not in listed.replace("the harness", "")
