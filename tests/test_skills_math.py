"""Skills at run time in the math domain: the train phase activates the version's skills.toml.

The default tests call the math train phase in process (``evotree.domains.math.train.main``) on a
materialized recipe with a skills.toml: real GRPO steps of the tiny model on CPU, evidence
read back. The ``slow`` test goes the whole way: `evotree branch --skill` (branch_with_skills)
-> `evotree run` (run_versions: exported commit, train phase subprocess, judge).
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_file, git
from test_domain_math import fast_recipe, init_repo, rows

from evotree.api import init as evotree_init  # noqa: E402
from evotree.domains.math import RECIPE_FILE, materialize
from evotree.skills.recipe import AppliedSkill, render_skills_text
from evotree.skills.runtime import group_stds, overlong_penalty

pytest.importorskip("trl", reason="needs the llm extra (trl, transformers, torch)")
pytestmark = pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning")

STEPS = 3
MIN_STD = 0.2
SKILLS = [
    AppliedSkill("StdGroupFilter", {"min_std": MIN_STD, "max_resample_batches": 0}),
    AppliedSkill("OverlongPenalty", {"max_length": 0, "cache_length": 2, "weight": 0.5}),
]


def short_recipe() -> str:
    return re.sub(r"(?m)^max_steps = .*$", f"max_steps = {STEPS}", fast_recipe())


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def check_evidence(signals: list[dict[str, Any]], rollouts: list[dict[str, Any]]) -> None:
    """The skills at work, as the evidence shows them."""
    by: dict[str, dict[int, float]] = defaultdict(dict)
    for r in signals:
        by[r["metric"]][r["step"]] = r["value"]
    assert by["skill/StdGroupFilter/active"] == {0: 1} and by["skill/OverlongPenalty/active"] == {
        0: 1
    }
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rollouts:
        groups[r["group_id"]].append(r)
        parts = (
            r["components"] if isinstance(r["components"], dict) else json.loads(r["components"])
        )
        # OverlongPenalty: max_length = the recipe's max_completion_length (5), cache 2
        assert parts["overlong_penalty"] == overlong_penalty(r["length"], 5, 2)
        assert r["reward"] == pytest.approx(
            parts["correctness"] + 0.5 * parts["format"] + 0.5 * parts["overlong_penalty"]
        )
    per_step: dict[int, list[float]] = defaultdict(list)
    for members in groups.values():
        values = [math.nan if m["reward"] is None else m["reward"] for m in members]
        per_step[members[0]["step"]].append(group_stds(values, len(values))[0])
    assert sorted(per_step) == list(range(1, STEPS + 1))
    total_dropped = 0
    for step, stds in per_step.items():
        dropped = sum(std <= MIN_STD for std in stds)
        assert by["skill/StdGroupFilter/dropped"][step] == dropped, step
        assert by["skill/StdGroupFilter/kept"][step] == len(stds) - dropped, step
        total_dropped += dropped
    assert total_dropped > 0


def test_the_train_phase_activates_the_skills(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evotree.domains.math.train import main

    materialize(tmp_path)
    (tmp_path / RECIPE_FILE).write_text(short_recipe())
    (tmp_path / "skills.toml").write_text(render_skills_text(SKILLS))
    assert main(tmp_path) == 0, capsys.readouterr().err[-3000:]
    assert "with skills StdGroupFilter, OverlongPenalty" in capsys.readouterr().err
    summary = json.loads((tmp_path / "output" / "train_summary.json").read_text())
    assert summary["skills"] == ["StdGroupFilter", "OverlongPenalty"] and summary["steps"] == STEPS
    evidence = tmp_path / "output" / "evidence"
    check_evidence(read_jsonl(evidence / "signals.jsonl"), read_jsonl(evidence / "rollouts.jsonl"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[skill]]\nname = "StdGroupFilter"\nparams = { min_std = -1.0 }\n',
            "min_std: out of range",
        ),
        ('[[skill]]\nname = "StdGroupFiltr"\n', "did you mean StdGroupFilter"),
        (
            '[[skill]]\nname = "AuxRewardTerm"\nparams = { term = "politeness" }\n',
            "the math domain offers instruction_following, brevity, not 'politeness'",
        ),
    ],
)
def test_a_skill_the_domain_cannot_use_is_an_invalid_submission(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    from evotree.domains.math.train import main

    materialize(tmp_path)
    (tmp_path / RECIPE_FILE).write_text(short_recipe())
    (tmp_path / "skills.toml").write_text(text)
    assert main(tmp_path) == 65
    err = capsys.readouterr().err
    assert "invalid submission" in err and "skills.toml" in err and message in err
    assert not (tmp_path / "output" / "model").exists()


@pytest.fixture(scope="module")
def skilled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from evotree.core.workspace import Workspace
    from evotree.gates.runs import run_versions
    from evotree.skills.recipe import branch_with_skills

    repo = init_repo(tmp_path_factory.mktemp("math-skills") / "repo")
    (repo / RECIPE_FILE).write_text(short_recipe())
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "a short recipe")
    evotree_init(repo, domain="math")
    ws = Workspace.open(repo)
    record = branch_with_skills(
        ws,
        hypothesis="drop flat groups, punish long answers",
        requested=[
            ("StdGroupFilter", {"min_std": str(MIN_STD)}),
            ("OverlongPenalty", {"cache_length": "2", "weight": "0.5"}),
        ],
    )
    (run,) = run_versions(ws, [record.id])
    broken = branch_with_skills(ws, hypothesis="a broken skills file", requested=[])
    commit_file(
        repo / broken.worktree,
        "skills.toml",
        '[[skill]]\nname = "StdGroupFilter"\nparams = { min_std = -1.0 }\n',
        "bad",
    )
    (invalid,) = run_versions(ws, [broken.id])
    runs = repo / ".evotree" / "runs"
    return {
        "ws": ws,
        "record": record,
        "run": run,
        "dir": runs / run.run_id,
        "invalid": invalid,
        "invalid_dir": runs / invalid.run_id,
    }


@pytest.mark.slow
def test_the_version_trains_with_its_skills(skilled: dict[str, Any]) -> None:
    run, run_dir = skilled["run"], skilled["dir"]
    assert skilled["record"].skills == ["StdGroupFilter", "OverlongPenalty"]
    assert run.status == "succeeded", (
        run.error,
        (run_dir / "logs" / "train.err").read_text()[-3000:],
    )
    summary = json.loads((run_dir / "candidate" / "output" / "train_summary.json").read_text())
    assert summary["skills"] == ["StdGroupFilter", "OverlongPenalty"]
    assert (run_dir / "candidate" / "skills.toml").is_file()  # the committed recipe, exported
    signals = [r for r in rows(run_dir / "signals.parquet") if r["phase"] == "train"]
    check_evidence(signals, rows(run_dir / "rollouts.parquet"))


@pytest.mark.slow
def test_a_broken_skills_file_is_an_invalid_submission(skilled: dict[str, Any]) -> None:
    record, run_dir = skilled["invalid"], skilled["invalid_dir"]
    assert record.status == "invalid", record.error
    err = (run_dir / "logs" / "train.err").read_text()
    assert "skills.toml" in err and "min_std: out of range" in err
    assert not (run_dir / "candidate" / "output" / "model").exists()
