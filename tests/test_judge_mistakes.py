"""A judge that records something unusable is a failed run with the reason, not a success with
"no eval results" (30 NaN scores; 30 scores on a misspelled split)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Cli

NAN_JUDGE = """\
from evotree.harness import get_recorder
rec = get_recorder()
for i in range(30):
    rec.eval_result("validation", f"t{i}", float("nan"))
"""
MISSPELLED_JUDGE = """\
from evotree.harness import get_recorder
rec = get_recorder()
for i in range(30):
    rec.eval_result("valdation", f"t{i}", 0.5)
"""


@pytest.mark.heavy
@pytest.mark.parametrize(
    ("judge", "says"),
    [(NAN_JUDGE, "none with a finite score"), (MISSPELLED_JUDGE, "misspelled split")],
)
def test_a_judge_mistake_fails_the_run_with_the_reason(
    tmp_path: Path, judge: str, says: str
) -> None:
    from test_runs import make_run_repo

    repo = make_run_repo(tmp_path / "w", judge=judge)
    out = json.loads(Cli(repo)("run", "v0", "--json", code=37).stdout)
    [run] = out["runs"]
    assert run["status"] == "failed" and says in run["error"], run
    assert run["headline"] is None


@pytest.mark.heavy
def test_an_edited_config_in_the_checkout_is_named_not_silently_ignored(tmp_path: Path) -> None:
    from test_runs import make_run_repo

    repo = make_run_repo(tmp_path / "w")
    text = (repo / "evotree.toml").read_text()
    (repo / "evotree.toml").write_text(text + "\n# a local edit\n")
    result = Cli(repo)("run", "v0")
    assert "differs from the champion's" in result.stderr and "promote" in result.stderr
    (repo / "evotree.toml").write_text(text)
    assert "differs" not in Cli(repo)("run", "v0").stderr
