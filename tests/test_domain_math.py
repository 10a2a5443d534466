"""The math domain: generator and splits, the workspace template, and real GRPO runs end to end.

No mocks: the end-to-end tests train the tiny local model with trl.GRPOTrainer on CPU through
``evotree.harness.execute.run_versions`` (train phase in the candidate's exported tree, judge in the
champion's tree), in real git repositories. One module-scoped workspace is trained for a few
steps and its runs are shared by the tests that read them. The default tests take ~75 s on
2 CPU cores (the GPU test is marked ``gpu`` and skipped without CUDA).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import commit_file, git

from evotree.api import init as evotree_init  # noqa: E402
from evotree.domains.math import JUDGE_FILE, MODEL_DIR, RECIPE_FILE, TRAIN_FILE, materialize
from evotree.domains.math.data import (
    HIDDEN_SEED_MIN,
    JUDGE_REGION_SHARE,
    SplitError,
    SplitSpec,
    build_splits,
    extract_answer,
    fact_key,
    generate,
    hidden_splits,
    in_judge_region,
    is_correct,
    is_well_formed,
    space_size,
)
from evotree.domains.math.settings import (
    Recipe,
    SettingsError,
    load_judge_settings,
    load_train_split,
    parse_recipe,
)
from evotree.domains.math.templates import MATH_TOML, RECIPE_TOML

pytest.importorskip("trl", reason="needs the llm extra (trl, transformers, torch)")

# TRL 1.16 itself calls transformers' deprecated is_gradient_checkpointing
# tens of seconds of real runs and sandboxes: run apart (make test-heavy; CI runs it after make test)
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning"),
    pytest.mark.heavy,
]

STEPS = 6
G = 8  # num_generations of the template
PER_STEP = 16  # completions per step in the fast recipe (2 prompts x 8)


def fast_recipe(*, warmup: bool = False, **changes: Any) -> str:
    """The v0 template, shortened to a few small steps (and any other key changed); without
    the tiny model's warm-up unless asked (tests/test_math_warmup.py tests it)."""
    text = RECIPE_TOML.replace("max_steps = 200", f"max_steps = {STEPS}")
    text = text.replace(
        "per_device_train_batch_size = 64", f"per_device_train_batch_size = {PER_STEP}"
    )
    if not warmup:
        text = text.replace("\nenabled = true\n", "\nenabled = false\n")
    for key, value in changes.items():
        text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {json.dumps(value)}", text)
        assert n == 1, key
    return text


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "-b", "main")
    git(path, "config", "user.name", "Ada Tester")
    git(path, "config", "user.email", "ada@example.com")
    (path / "README.md").write_text("arithmetic\n")
    git(path, "add", "-A")
    git(path, "commit", "--quiet", "-m", "readme")
    return path


def rows(path: Path) -> list[dict[str, Any]]:
    import duckdb

    cur = duckdb.connect().execute("SELECT * FROM read_parquet(?)", [str(path)])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row)) for row in cur.fetchall()]


# ============================================================================ data
def default_specs() -> tuple[SplitSpec, SplitSpec, SplitSpec]:
    train = tomllib.loads(MATH_TOML)["train"]
    train_spec = SplitSpec(**{**train, "ops": tuple(train["ops"])})
    return (
        train_spec,
        SplitSpec(seed=HIDDEN_SEED_MIN + 17, num_problems=48),
        SplitSpec(seed=HIDDEN_SEED_MIN + 91, num_problems=48),
    )


def test_generator_is_deterministic() -> None:
    spec = default_specs()[0]
    first, second = generate(spec, judge_region=False), generate(spec, judge_region=False)
    assert first == second and len(first) == spec.num_problems
    # in another interpreter too (no dependence on hash randomization or process state)
    code = (
        "from evotree.domains.math.data import SplitSpec, generate; "
        "print([p.task_id for p in generate(SplitSpec(seed=0, num_problems=256), judge_region=False)])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    ).stdout
    assert out.strip() == str([p.task_id for p in first])
    other = generate(SplitSpec(seed=1, num_problems=spec.num_problems), judge_region=False)
    assert [p.task_id for p in other] != [p.task_id for p in first]
    for p in first:
        assert re.fullmatch(r"(add|sub|mul)-\d+-\d+-t\d", p.task_id)
        assert p.answer == {"+": p.a + p.b, "-": p.a - p.b, "*": p.a * p.b}[p.op] >= 0
        assert p.prompt == f"{p.question}\nanswer:"
    assert len({p.task_id for p in first}) == len({p.question for p in first}) == len(first)


def test_the_three_splits_are_disjoint() -> None:
    train, validation, heldout = default_specs()
    splits = build_splits(train, validation, heldout)
    facts = {name: {p.fact for p in ps} for name, ps in splits.items()}
    texts = {name: {p.question for p in ps} for name, ps in splits.items()}
    for a, b in itertools.combinations(splits, 2):
        assert not facts[a] & facts[b], (a, b)
        assert not texts[a] & texts[b], (a, b)
    assert all(in_judge_region(*f) for f in facts["validation"] | facts["heldout"])
    assert not any(in_judge_region(*f) for f in facts["train"])
    # a candidate asking for every train problem there is still never meets a hidden one
    everything = SplitSpec(seed=5, num_problems=1, ops=("+", "-", "*"), max_operand=20)
    in_train, in_judge = (
        space_size(everything, judge_region=False),
        space_size(everything, judge_region=True),
    )
    all_train = generate(
        SplitSpec(seed=5, num_problems=in_train, ops=("+", "-", "*"), max_operand=20),
        judge_region=False,
    )
    assert {p.fact for p in all_train}.isdisjoint(facts["validation"] | facts["heldout"])
    assert abs(in_judge / (in_train + in_judge) - JUDGE_REGION_SHARE) < 0.05  # about a quarter
    # 3+4 and 4+3 are one fact: never one in train and the other hidden
    assert fact_key("+", 4, 3) == fact_key("+", 3, 4)
    assert all(
        in_judge_region("*", a, b) == in_judge_region("*", b, a)
        for a in range(12)
        for b in range(12)
    )
    # train seeds and judge seeds never overlap
    with pytest.raises(SplitError, match="train seeds are below"):
        build_splits(SplitSpec(seed=HIDDEN_SEED_MIN, num_problems=4), validation, heldout)


def test_held_out_skips_validation_even_from_the_same_seed() -> None:
    spec = SplitSpec(seed=HIDDEN_SEED_MIN + 3, num_problems=40)
    splits = hidden_splits(spec, spec)
    assert {p.fact for p in splits["validation"]}.isdisjoint(p.fact for p in splits["heldout"])


def test_a_split_larger_than_its_region_is_refused() -> None:
    small = SplitSpec(seed=0, num_problems=50, ops=("+",), max_operand=5)
    with pytest.raises(SplitError, match="only .* distinct facts"):
        generate(small, judge_region=False)


def test_every_prompt_is_within_the_tiny_vocabulary() -> None:
    from evotree.domains.math.model import tiny_tokenizer

    tok = tiny_tokenizer()
    train, validation, heldout = default_specs()
    problems = [p for ps in build_splits(train, validation, heldout).values() for p in ps]
    problems += generate(
        SplitSpec(seed=2, num_problems=60, ops=("*",), word_share=1.0), judge_region=False
    )
    for p in problems:
        text = p.prompt + f" {p.answer}"
        ids = tok(text)["input_ids"]
        assert tok.unk_token_id not in ids, text
        assert tok.decode(ids) == text
    assert (
        len(tok(" 17")["input_ids"]) == 3
    )  # space and two digits: max_completion_length 5 fits eos


def test_answer_checker_and_rewards() -> None:
    from evotree.domains.math.rewards import format_score, make_reward_functions

    assert (
        extract_answer(" 7") == 7
        and extract_answer("answer: 12 x") == 12
        and extract_answer("x7") is None
    )
    assert (
        is_correct(" 7", 7)
        and is_correct("7 8", 7)
        and not is_correct(" 17", 7)
        and not is_correct("", 7)
    )
    assert is_well_formed(" 7 ") and is_well_formed("answer 7") and not is_well_formed("7 8")
    assert format_score(" 7", True) == 1.0 and format_score(" 7", False) == 0.75
    assert (
        format_score("7 8", False) == 0.5
        and format_score("", True) == 0.25
        and format_score("x", False) == 0
    )
    correctness, fmt = make_reward_functions([2, 0])
    assert (correctness.__name__, fmt.__name__) == ("correctness", "format")
    kwargs = {
        "prompts": ["p"] * 3,
        "completions": [" 7", "7 7", "what"],
        "answer": ["7", "7", "7"],
        "completion_ids": [[5, 2], [5, 9, 5], [1, 0]],
    }
    assert correctness(**kwargs) == [1.0, 1.0, 0.0]
    assert fmt(**kwargs) == [1.0, 0.5, 0.25]


def test_pass_at_k_is_unbiased() -> None:
    from evotree.domains.math.judge import pass_at_k

    for n in range(1, 7):
        for c in range(n + 1):
            for k in range(1, n + 1):
                subsets = list(itertools.combinations([1] * c + [0] * (n - c), k))
                assert pass_at_k(n, c, k) == pytest.approx(
                    sum(any(s) for s in subsets) / len(subsets)
                )
    assert pass_at_k(4, 1, 1) == 0.25 and pass_at_k(4, 0, 4) == 0.0 and pass_at_k(4, 1, 4) == 1.0


# ============================================================================ settings
def test_the_template_is_the_default_recipe() -> None:
    assert parse_recipe(tomllib.loads(RECIPE_TOML)) == Recipe()
    recipe = parse_recipe(tomllib.loads(fast_recipe(lora=True)))
    assert recipe.lora and recipe.max_steps == STEPS and recipe.reward_weights == [1.0, 0.5]


@pytest.mark.parametrize(
    "text, message",
    [
        ("learnig_rate = 0.1\n", "learnig_rate: unknown key (did you mean 'learning_rate'?)"),
        ('temperature = "hot"\n', "temperature: expected a number, actually a string"),
        ("max_steps = 0\n", "max_steps: expected a number >= 1, actually: 0"),
        ("max_steps = 2.5\n", "max_steps: expected an integer"),
        ("num_generations = 3\n", "must be a multiple of num_generations (3)"),
        ("[rewards]\nformt = 1\n", "rewards.formt: unknown key (did you mean 'format'?)"),
        ("[rewards]\ncorrectness = 0\nformat = 0\n", "every reward weight is 0"),
        ('[trl]\noutput_dir = "x"\n', "trl.output_dir: set by the math domain itself"),
        ("[trl]\nmask_truncated = true\n", "did you mean 'mask_truncated_completions'?"),
        ("[tiny]\nhidden_size = 30\n", "must be divisible by num_heads"),
    ],
)
def test_invalid_recipes_are_explained(text: str, message: str) -> None:
    with pytest.raises(SettingsError) as info:
        parse_recipe(tomllib.loads(text))
    assert message in str(info.value), str(info.value)


def test_train_split_seeds_below_the_judges() -> None:
    from evotree.domains.math.settings import parse_train_split

    assert parse_train_split(tomllib.loads(MATH_TOML)) == default_specs()[0]
    with pytest.raises(SettingsError, match="seeds from 1_000_000 up are the judge's"):
        parse_train_split({"train": {"seed": HIDDEN_SEED_MIN}})
    with pytest.raises(SettingsError, match="ops: expected a non-empty list"):
        parse_train_split({"train": {"seed": 1, "ops": ["/"]}})


def test_judge_settings_are_checked() -> None:
    from evotree.domains.math.settings import parse_judge_settings
    from evotree.domains.math.templates import render_judge_toml

    good = parse_judge_settings(
        tomllib.loads(render_judge_toml(HIDDEN_SEED_MIN, HIDDEN_SEED_MIN + 1))
    )
    assert (good.samples, good.pass_at, good.temperature) == (8, [1, 8], 0.6)
    # every fact of the judge's region: validation and held-out take all 118 between them
    spec = good.splits["validation"]
    assert (
        spec.num_problems + good.splits["heldout"].num_problems
        == space_size(spec, judge_region=True)
        == 118
    )
    bad = {
        "judge": {"pass_at": [1, 9], "sampels": 3},
        "splits": {"validation": {"seed": 5}, "heldout": {}, "test": {}},
    }
    with pytest.raises(SettingsError) as info:
        parse_judge_settings(bad)
    text = str(info.value)
    for message in (
        "judge.sampels: unknown key (did you mean 'samples'?)",
        "judge.pass_at: every k must be in 1..samples (8)",
        "splits.validation.seed: expected 1_000_000 <= seed",
        "splits.heldout.seed: missing",
        "splits.test: unknown split",
    ):
        assert message in text, text
    same = {
        "splits": {"validation": {"seed": HIDDEN_SEED_MIN}, "heldout": {"seed": HIDDEN_SEED_MIN}}
    }
    with pytest.raises(SettingsError, match="different seeds"):
        parse_judge_settings(same)


# ============================================================================ workspace
def test_materialize_writes_without_overwriting(tmp_path: Path) -> None:
    written = materialize(tmp_path)
    assert written == [RECIPE_FILE, TRAIN_FILE, JUDGE_FILE]
    judge = load_judge_settings(tmp_path / JUDGE_FILE)
    seeds = [judge.splits["validation"].seed, judge.splits["heldout"].seed]
    assert all(s >= HIDDEN_SEED_MIN for s in seeds) and seeds[0] != seeds[1]
    assert judge.samples == 8 and judge.pass_at == [1, 8]
    assert load_train_split(tmp_path / TRAIN_FILE).seed < HIDDEN_SEED_MIN
    (tmp_path / RECIPE_FILE).write_text('model = "mine"\n')
    (tmp_path / JUDGE_FILE).unlink()
    assert materialize(tmp_path) == [JUDGE_FILE]
    assert (tmp_path / RECIPE_FILE).read_text() == 'model = "mine"\n'
    assert materialize(tmp_path) == []
    other = tmp_path / "other"
    assert materialize(other, validation_seed=HIDDEN_SEED_MIN + 1, heldout_seed=HIDDEN_SEED_MIN + 2)
    assert load_judge_settings(other / JUDGE_FILE).splits["heldout"].seed == HIDDEN_SEED_MIN + 2
    from evotree.core.errors import EvotreeError

    with pytest.raises(EvotreeError, match="seed"):
        materialize(tmp_path / "bad", validation_seed=3)
    assert not (tmp_path / "bad" / RECIPE_FILE).exists()


def test_init_workspace_writes_and_commits_the_domain(tmp_path: Path) -> None:
    from evotree.core.workspace import Workspace

    repo = init_repo(tmp_path / "repo")
    result = evotree_init(repo, domain="math")
    assert result.config_committed
    committed = git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    for rel in ("evotree.toml", RECIPE_FILE, TRAIN_FILE, "README.md"):
        assert rel in committed, rel
    # the hidden judge config is in the judge store only: not on the branch, not in the checkout
    assert JUDGE_FILE not in committed and not (repo / "judge").exists()
    assert result.judge_files == [JUDGE_FILE]
    assert git(repo, "ls-tree", "-r", "--name-only", "refs/evotree/judge") == JUDGE_FILE
    assert git(repo, "status", "--porcelain") == ""
    ws = Workspace.open(repo)
    assert ws.config.workspace.domain == "math"
    assert ws.config.train.command == "python -P -m evotree.domains.math.train"
    assert ws.config.eval.command == "python -P -m evotree.domains.math.judge"
    assert "judge/" in ws.config.eval.judge_paths
    assert git(repo, "rev-parse", "evotree/v0") == git(repo, "rev-parse", "HEAD")


# ============================================================================ real runs
@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A math workspace whose v0 (the template, shortened to a few steps) ran twice: once judged
    on validation, once with held-out; plus an invalid version."""
    from evotree.core.versions import create_version
    from evotree.core.workspace import Workspace
    from evotree.gates.runs import run_versions

    repo = init_repo(tmp_path_factory.mktemp("math") / "repo")
    (repo / RECIPE_FILE).write_text(fast_recipe())
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "a short recipe")
    evotree_init(repo, domain="math")
    ws = Workspace.open(repo)
    (first,) = run_versions(ws, ["v0"])
    (second,) = run_versions(ws, ["v0"], heldout=True)
    bad = create_version(ws, hypothesis="a misspelt key")
    commit_file(repo / bad.worktree, RECIPE_FILE, "learnig_rate = 0.1\n" + fast_recipe(), "typo")
    (invalid,) = run_versions(ws, [bad.id])
    runs = repo / ".evotree" / "runs"
    from evotree.harness.judge_store import judge_in_force, materialise_judge

    hidden = tmp_path_factory.mktemp(
        "judge-view"
    )  # the judge store, as a run's judge directory has it
    materialise_judge(ws.git.repo, judge_in_force(ws), hidden)
    assert not (repo / "judge").exists() and first.judge_data_commit == judge_in_force(ws)
    return {
        "ws": ws,
        "repo": repo,
        "judge": hidden,
        "first": first,
        "second": second,
        "invalid": invalid,
        "dir": runs / first.run_id,
        "heldout_dir": runs / second.run_id,
        "invalid_dir": runs / invalid.run_id,
    }


def test_a_v0_run_trains_and_is_judged(trained: dict[str, Any]) -> None:
    record, run_dir = trained["first"], trained["dir"]
    assert record.status == "succeeded", (
        record.error,
        (run_dir / "logs" / "train.err").read_text()[-3000:],
    )
    assert record.phases["train"]["returncode"] == 0 and record.phases["eval"]["returncode"] == 0
    model_dir = run_dir / "candidate" / MODEL_DIR
    assert (model_dir / "config.json").is_file() and (model_dir / "model.safetensors").is_file()
    assert (model_dir / "tokenizer.json").is_file()
    summary = json.loads((run_dir / "candidate" / "output" / "train_summary.json").read_text())
    assert summary["steps"] == STEPS and summary["train_problems"] == 256
    # the headline is the judge's validation Avg@k
    assert record.headline is not None and record.headline["metric"] == "validation/mean_score"
    assert record.headline["n"] == 59 * 8 and 0.0 <= record.headline["value"] <= 1.0
    usage = trained["ws"].ledger.snapshot().version("v0").usage
    assert usage["steps"] >= STEPS and usage["episodes"] >= STEPS * PER_STEP


def test_signals_show_training(trained: dict[str, Any]) -> None:
    signals = [r for r in rows(trained["dir"] / "signals.parquet") if r["phase"] == "train"]
    by_metric: dict[str, dict[int, float]] = defaultdict(dict)
    for r in signals:
        by_metric[r["metric"]][r["step"]] = r["value"]
    assert sorted(by_metric["loss"]) == list(range(1, STEPS + 1))
    assert len(set(by_metric["loss"].values())) > 1, by_metric["loss"]  # the loss changes
    assert len(set(by_metric["reward"].values())) > 1, by_metric["reward"]
    for name in ("rewards/correctness/mean", "rewards/format/mean", "entropy", "learning_rate"):
        assert sorted(by_metric[name]) == list(range(1, STEPS + 1)), name
    assert by_metric["train/problems"] == {0: 256.0}
    assert by_metric["model/parameters"][0] > 100_000


def test_rollouts_are_recorded_per_sample_in_groups(trained: dict[str, Any]) -> None:
    rollouts = rows(trained["dir"] / "rollouts.parquet")
    assert len(rollouts) == STEPS * PER_STEP and {r["phase"] for r in rollouts} == {"train"}
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rollouts:
        groups[r["group_id"]].append(r)
    assert len(groups) == STEPS * PER_STEP // G
    recipe = parse_recipe(tomllib.loads(fast_recipe()))
    train_ids = {p.task_id for p in generate(default_specs()[0], judge_region=False)}
    per_step_rewards: dict[int, list[float]] = defaultdict(list)
    for group_id, members in groups.items():
        assert sorted(r["sample_index"] for r in members) == list(range(G)), group_id
        assert len({r["task_id"] for r in members}) == 1 and members[0]["task_id"] in train_ids
        for r in members:
            parts = json.loads(r["components"])
            assert set(parts) == {"correctness", "format"}
            assert r["reward"] == pytest.approx(
                sum(w * parts[n] for n, w in recipe.rewards.items())
            )
            assert (
                r["finish_reason"] in ("stop", "length")
                and 0 < r["length"] <= recipe.max_completion_length
            )
            per_step_rewards[r["step"]].append(r["reward"])
    assert sorted(per_step_rewards) == list(range(1, STEPS + 1))
    means = {step: sum(v) / len(v) for step, v in per_step_rewards.items()}
    assert len(set(means.values())) > 1, means  # rewards change over the steps


def test_the_judge_scores_k_samples_per_validation_problem(trained: dict[str, Any]) -> None:
    evals = rows(trained["dir"] / "evals.parquet")
    assert {r["split"] for r in evals} == {"validation"}  # held-out only when asked for
    assert {r["phase"] for r in evals} == {"eval"} and {r["score"] for r in evals} <= {0.0, 1.0}
    judge = load_judge_settings(trained["judge"] / JUDGE_FILE)
    problems = hidden_splits(judge.splits["validation"], judge.splits["heldout"])
    by_task: dict[str, list[int]] = defaultdict(list)
    for r in evals:
        by_task[r["task_id"]].append(r["sample_index"])
    assert set(by_task) == {p.task_id for p in problems["validation"]}
    assert all(sorted(v) == list(range(8)) for v in by_task.values())
    signals = {
        r["metric"]: r["value"]
        for r in rows(trained["dir"] / "signals.parquet")
        if r["phase"] == "eval"
    }
    mean = sum(r["score"] for r in evals) / len(evals)
    assert (
        signals["validation/avg@8"]
        == pytest.approx(mean)
        == pytest.approx(trained["first"].headline["value"])
    )
    assert signals["validation/pass@1"] == pytest.approx(mean)
    assert signals["validation/pass@8"] >= signals["validation/pass@1"]
    assert signals["validation/problems"] == 59 and not any(
        m.startswith("heldout/") for m in signals
    )


def test_held_out_is_judged_when_asked_for(trained: dict[str, Any]) -> None:
    record = trained["second"]
    assert record.status == "succeeded", record.error
    evals = rows(trained["heldout_dir"] / "evals.parquet")
    counts = defaultdict(int)
    for r in evals:
        counts[r["split"]] += 1
    assert counts == {"validation": 59 * 8, "heldout": 59 * 8}
    assert record.headline["metric"] == "validation/mean_score"
    signals = {
        r["metric"]
        for r in rows(trained["heldout_dir"] / "signals.parquet")
        if r["phase"] == "eval"
    }
    assert {"heldout/avg@8", "heldout/pass@1", "heldout/pass@8"} <= signals
    # training and judging are deterministic: the same version gives the same validation samples
    first = sorted(
        (r["task_id"], r["sample_index"], r["score"])
        for r in rows(trained["dir"] / "evals.parquet")
    )
    again = sorted(
        (r["task_id"], r["sample_index"], r["score"]) for r in evals if r["split"] == "validation"
    )
    assert first == again


def _rollouts_by_step(run_dir: Path) -> list[tuple[int, str, int, str, float]]:
    return sorted(
        (r["step"], r["group_id"], r["sample_index"], r["task_id"] + "|" + r["text"], r["reward"])
        for r in rows(run_dir / "rollouts.parquet")
    )


@pytest.mark.heavy
def test_run_seeds_change_training_and_the_same_seed_repeats(trained: dict[str, Any]) -> None:
    """EVOTREE_SEED reaches the train phase: run seed 1 trains from other initial weights, on
    another prompt order, with other samples; seed 0 twice (the fixture's two runs) trains
    exactly alike. The train problems (math.toml) and the judge do not depend on the run seed."""
    from evotree.domains.math.settings import training_seed
    from evotree.gates.runs import run_versions

    (other,) = run_versions(trained["ws"], ["v0"], seed_start=1)
    other_dir = trained["repo"] / ".evotree" / "runs" / other.run_id
    assert other.seed == 1 and other.status == "succeeded", (
        other.error,
        (other_dir / "logs" / "train.err").read_text()[-3000:],
    )
    assert trained["first"].seed == trained["second"].seed == 0
    a, again, b = (
        _rollouts_by_step(d) for d in (trained["dir"], trained["heldout_dir"], other_dir)
    )
    assert a == again  # reproducible: the same seed, the same prompts, samples and rewards
    assert a != b
    order = [[t.split("|")[0] for step, _, i, t, _ in x if i == 0 and step <= 2] for x in (a, b)]
    assert order[0] != order[1]  # the data order follows the run seed
    summaries = [
        json.loads((d / "candidate" / "output" / "train_summary.json").read_text())
        for d in (trained["dir"], other_dir)
    ]
    recipe = parse_recipe(tomllib.loads(fast_recipe()))
    assert [(s["run_seed"], s["seed"]) for s in summaries] == [
        (0, training_seed(recipe.seed, 0)),
        (1, training_seed(recipe.seed, 1)),
    ]
    assert summaries[0]["train_problems"] == summaries[1]["train_problems"] == 256
    signals = {
        r["metric"]: r["value"]
        for r in rows(other_dir / "signals.parquet")
        if r["phase"] == "train" and r["step"] == 0
    }
    assert (signals["seed/run"], signals["seed/train"]) == (1, training_seed(recipe.seed, 1))
    # common random numbers: another version with the same recipe seed, at the same run seed,
    # starts from the same weights and draws the same first prompts and samples (step 1 is
    # generated before any update: only the learning rate differs)
    from evotree.core.versions import create_version

    sibling = create_version(trained["ws"], hypothesis="another learning rate", parent="v0")
    commit_file(
        trained["repo"] / sibling.worktree, RECIPE_FILE, fast_recipe(learning_rate=0.01), "lr"
    )
    (crn,) = run_versions(trained["ws"], [sibling.id], seed_start=1)
    assert crn.status == "succeeded", crn.error
    c = _rollouts_by_step(trained["repo"] / ".evotree" / "runs" / crn.run_id)
    assert [r for r in c if r[0] == 1] == [r for r in b if r[0] == 1] and c != b
    # the recipe's seed still chooses another stream
    assert training_seed(0, 1) == training_seed(0, 1) != training_seed(5, 1) != training_seed(0, 0)


def test_the_judge_is_deterministic_in_process(trained: dict[str, Any]) -> None:
    from evotree.domains.math.judge import sample_completions
    from evotree.domains.math.model import load_trained, set_cpu_threads

    judge = load_judge_settings(trained["judge"] / JUDGE_FILE)
    problems = hidden_splits(judge.splits["validation"], judge.splits["heldout"])["validation"]
    import torch

    model, tokenizer = load_trained(trained["dir"] / "candidate" / MODEL_DIR)
    threads = torch.get_num_threads()
    assert set_cpu_threads(model, judge.cpu_threads) == 1  # as the judge: a tiny model, one thread
    kwargs = {
        "samples": judge.samples,
        "temperature": judge.temperature,
        "top_p": judge.top_p,
        "max_new_tokens": judge.max_new_tokens,
        "seed": judge.seed,
        "batch_size": judge.batch_size,
    }
    first = sample_completions(model, tokenizer, [p.prompt for p in problems], **kwargs)
    assert first == sample_completions(model, tokenizer, [p.prompt for p in problems], **kwargs)
    recorded = {
        (r["task_id"], r["sample_index"]): r["score"]
        for r in rows(trained["dir"] / "evals.parquet")
    }
    scored = {
        (p.task_id, i): float(is_correct(t, p.answer))
        for p, texts in zip(problems, first, strict=True)
        for i, t in enumerate(texts)
    }
    torch.set_num_threads(threads)
    assert scored == recorded  # the judge's subprocess sampled exactly these


def test_hidden_problems_never_reach_the_candidate(trained: dict[str, Any]) -> None:
    judge_text = (trained["judge"] / JUDGE_FILE).read_text()
    judge = load_judge_settings(trained["judge"] / JUDGE_FILE)
    problems = hidden_splits(judge.splits["validation"], judge.splits["heldout"])
    secrets = [p.question for ps in problems.values() for p in ps]
    secrets += [str(spec.seed) for spec in judge.splits.values()]
    secrets += ["[splits.validation]", "[splits.heldout]"]
    for run_dir in (trained["dir"], trained["heldout_dir"]):
        assert not (run_dir / "candidate" / "judge").exists()
        visible = [p for p in (run_dir / "candidate").rglob("*") if p.is_file()]
        visible += [p for p in (run_dir / "evidence" / "train").rglob("*") if p.is_file()]
        visible += [run_dir / "logs" / "train.out", run_dir / "logs" / "train.err"]
        assert any(p.name == "rollouts.jsonl" for p in visible)
        for path in visible:
            data = path.read_bytes()
            for secret in secrets:
                assert secret.encode() not in data, (secret, path)
        assert judge_text.encode() not in (run_dir / "run.json").read_bytes()


def test_an_invalid_recipe_is_an_invalid_run(trained: dict[str, Any]) -> None:
    record, run_dir = trained["invalid"], trained["invalid_dir"]
    assert record.status == "invalid", record.error
    # the prepare phase (the warm-up, [train] prepare) reads the recipe first and refuses it
    err = (run_dir / "logs" / "prepare.err").read_text()
    assert "learnig_rate: unknown key (did you mean 'learning_rate'?)" in err
    assert "train" not in record.phases
    assert record.usage == {} and "eval" not in record.phases
    assert not (run_dir / "candidate" / "output").exists()


def test_use_vllm_on_cpu_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: test_vllm_rollouts_on_gpu covers use_vllm")
    from evotree.domains.math.train import main

    materialize(tmp_path)
    (tmp_path / RECIPE_FILE).write_text(fast_recipe(use_vllm=True))
    assert main(tmp_path) == 65
    assert "vLLM rollouts need a CUDA GPU" in capsys.readouterr().err
    assert not (tmp_path / "output").exists()


def test_judge_without_a_model_fails_clearly(trained: dict[str, Any], tmp_path: Path) -> None:
    judge_dir = tmp_path / "judge_tree"
    (judge_dir / "judge").mkdir(parents=True)
    (judge_dir / JUDGE_FILE).write_text((trained["judge"] / JUDGE_FILE).read_text())
    (tmp_path / "candidate").mkdir()
    env = {
        **os.environ,
        "EVOTREE_CANDIDATE_DIR": str(tmp_path / "candidate"),
        "EVOTREE_EVIDENCE_DIR": str(tmp_path / "evidence"),
        "EVOTREE_PHASE": "eval",
    }
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.math.judge"],
        cwd=judge_dir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "the candidate has no trained model: output/model/ is missing" in proc.stderr


def _train_subprocess(
    cwd: Path, *, max_steps: int | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOTREE_")}
    env.update(
        {
            "EVOTREE_EVIDENCE_DIR": str(cwd / "evidence"),
            "EVOTREE_PHASE": "train",
            "EVOTREE_RUN_ID": "t",
        }
    )
    if max_steps is not None:
        env["EVOTREE_MAX_STEPS"] = str(max_steps)
    return subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.math.train"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def test_lora_on_a_local_model_directory_within_the_step_budget(
    trained: dict[str, Any], tmp_path: Path
) -> None:
    """LoRA adapters train on a Hugging Face model given as a local directory (v0's trained tiny
    model), and EVOTREE_MAX_STEPS stops training through the callback."""
    from safetensors.torch import load_file

    materialize(tmp_path)
    local_model = trained["dir"] / "candidate" / MODEL_DIR
    (tmp_path / RECIPE_FILE).write_text(
        fast_recipe(
            lora=True, model=str(local_model), learning_rate=0.05, per_device_train_batch_size=16
        )
    )
    proc = _train_subprocess(tmp_path, max_steps=4)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "output" / "train_summary.json").read_text())
    assert summary["steps"] == 4 and summary["lora"] and str(local_model) in summary["model"]
    signals = [
        json.loads(line)
        for line in (tmp_path / "evidence" / "signals.jsonl").read_text().splitlines()
    ]
    assert {"budget/stopped"} <= {s["metric"] for s in signals}
    assert max(s["step"] for s in signals) == 4
    adapter = load_file(tmp_path / "output" / "adapter" / "adapter_model.safetensors")
    lora_b = [v for k, v in adapter.items() if "lora_B" in k]
    assert lora_b and all(float(v.abs().sum()) > 0 for v in lora_b)  # lora_B starts at zero
    trainable = {s["value"] for s in signals if s["metric"] == "model/trainable_parameters"}
    parameters = {s["value"] for s in signals if s["metric"] == "model/parameters"}
    assert trainable and max(trainable) < 0.2 * max(parameters)
    assert (tmp_path / MODEL_DIR / "model.safetensors").is_file()  # merged, for the judge


def test_an_unavailable_model_is_an_invalid_submission(tmp_path: Path) -> None:
    materialize(tmp_path)
    (tmp_path / RECIPE_FILE).write_text(fast_recipe(model="./no-such-model"))
    proc = _train_subprocess(tmp_path)
    assert proc.returncode == 65
    assert "no such directory" in proc.stderr


@pytest.mark.gpu
def test_vllm_rollouts_on_gpu(tmp_path: Path) -> None:
    """``use_vllm = true`` trains with vLLM generating the rollouts (GPU machines only)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("vLLM rollouts need a CUDA GPU; none here")
    pytest.importorskip("vllm", reason="vLLM is not installed (pip install 'evotree[vllm]')")
    materialize(tmp_path)
    recipe = fast_recipe(use_vllm=True).replace(
        "[trl]\n", '[trl]\nvllm_mode = "colocate"\nvllm_gpu_memory_utilization = 0.2\n'
    )
    # vLLM's attention kernels want a head size of 64 or more
    recipe = recipe.replace("hidden_size = 64", "hidden_size = 128").replace(
        "num_heads = 4", "num_heads = 2"
    )
    (tmp_path / RECIPE_FILE).write_text(recipe)
    proc = _train_subprocess(tmp_path, max_steps=2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / MODEL_DIR / "model.safetensors").is_file()
    rollouts = (tmp_path / "evidence" / "rollouts.jsonl").read_text().splitlines()
    assert len(rollouts) == 2 * PER_STEP
