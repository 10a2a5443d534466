"""The math domain's supervised warm-up (evotree.domains.math.warmup): train-region data only,
content-hashed, deterministic (same key, same weights), cached and reused; and (slow) the
default v0 recipe climbs from the warm model on the judge's held-out facts."""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evotree.domains.math import MODEL_DIR, RECIPE_FILE, TRAIN_FILE
from evotree.domains.math.data import (
    HIDDEN_SEED_MIN,
    SplitSpec,
    _facts,
    generate,
    hidden_splits,
    in_judge_region,
    is_correct,
)
from evotree.domains.math.settings import SettingsError, parse_recipe
from evotree.domains.math.templates import MATH_TOML, RECIPE_TOML
from evotree.domains.math.warmup import (
    CACHE_SUBDIR,
    ENV_CACHE_DIR,
    MAX_EXAMPLES,
    WarmupSettings,
    build_warm_model,
    cache_root,
    ensure_warm_model,
    load_warm_model,
    prepare,
    warmup_examples,
    warmup_key,
)

pytest.importorskip("trl", reason="needs the llm extra (trl, transformers, torch)")
# tens of seconds of real runs and sandboxes: run apart (make test-heavy; CI runs it after make test)
pytestmark = [
    pytest.mark.filterwarnings("ignore:.*is_gradient_checkpointing:FutureWarning"),
    pytest.mark.heavy,
]

#: a small problem space and model, so a warm-up takes seconds
SMALL = SplitSpec(seed=0, num_problems=10, ops=("+",), max_operand=6)
SMALL_TINY = {
    "hidden_size": 32,
    "num_layers": 1,
    "num_heads": 2,
    "num_kv_heads": 1,
    "intermediate_size": 64,
}
QUICK = WarmupSettings(
    learning_rate=1e-2, batch_size=32, target_accuracy=0.3, eval_every=20, max_steps=400
)


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from evotree.domains.math.model import _prepare_tokenizer, tiny_tokenizer

    return _prepare_tokenizer(tiny_tokenizer())


def state(model: Any) -> dict[str, Any]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def same_weights(a: dict[str, Any], b: dict[str, Any]) -> bool:
    import torch

    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


# ============================================================================ data and key
def test_the_warmup_sees_every_train_region_fact_and_no_judge_fact() -> None:
    spec = SplitSpec(seed=0, num_problems=256)  # math.toml's defaults
    examples = warmup_examples(spec)
    facts = {fact for _, _, fact in examples}
    assert not any(in_judge_region(*f) for f in facts)
    assert facts == {f for f in _facts(spec) if not in_judge_region(*f)} and len(facts) == 344
    # the judge's questions never appear, whatever its seeds
    judge = hidden_splits(
        SplitSpec(seed=HIDDEN_SEED_MIN + 5, num_problems=59),
        SplitSpec(seed=HIDDEN_SEED_MIN + 6, num_problems=59),
    )
    prompts = {p for p, _, _ in examples}
    assert not prompts & {p.prompt for ps in judge.values() for p in ps}
    # every train problem of math.toml is among them, answered right; the seed and size do not matter
    by_prompt = {p: c for p, c, _ in examples}
    assert all(by_prompt[p.prompt] == f" {p.answer}" for p in generate(spec, judge_region=False))
    assert warmup_examples(replace(spec, seed=7, num_problems=3)) == examples
    # a wide range is sampled down to a fixed number of prompts, still none of the judge's
    wide = warmup_examples(SplitSpec(seed=0, num_problems=1, ops=("+", "-", "*"), max_operand=150))
    assert len(wide) == MAX_EXAMPLES and not any(in_judge_region(*fact) for _, _, fact in wide)


def test_the_key_hashes_everything_that_determines_the_weights(tokenizer: Any) -> None:
    key, inputs = warmup_key(SMALL, SMALL_TINY, QUICK, tokenizer)
    assert re.fullmatch(r"[0-9a-f]{64}", key) and inputs["torch"] and inputs["examples"] == 117
    assert warmup_key(replace(SMALL, seed=3), SMALL_TINY, QUICK, tokenizer)[0] == key  # same data
    others = [
        warmup_key(SMALL, SMALL_TINY, replace(QUICK, seed=1), tokenizer)[0],
        warmup_key(replace(SMALL, max_operand=7), SMALL_TINY, QUICK, tokenizer)[0],  # other data
        warmup_key(replace(SMALL, ops=("+", "-")), SMALL_TINY, QUICK, tokenizer)[0],
        warmup_key(SMALL, {**SMALL_TINY, "intermediate_size": 32}, QUICK, tokenizer)[0],
        warmup_key(SMALL, SMALL_TINY, replace(QUICK, target_accuracy=0.4), tokenizer)[0],
        warmup_key(SMALL, SMALL_TINY, replace(QUICK, learning_rate=5e-3), tokenizer)[0],
    ]
    assert len({key, *others}) == len(others) + 1
    # switching it off and on again is no other warm-up
    assert warmup_key(SMALL, SMALL_TINY, replace(QUICK, enabled=False), tokenizer)[0] == key


def test_the_recipe_reads_the_warmup_table() -> None:
    recipe = parse_recipe(tomllib.loads(RECIPE_TOML))
    assert recipe.warmup == WarmupSettings() and recipe.warmup.enabled
    assert (
        recipe.learning_rate,
        recipe.num_generations,
        recipe.per_device_train_batch_size,
        recipe.max_steps,
    ) == (5e-4, 8, 64, 200)
    changed = parse_recipe({"warmup": {"seed": 3, "target_accuracy": 0.5, "enabled": False}})
    assert changed.warmup == replace(WarmupSettings(), seed=3, target_accuracy=0.5, enabled=False)
    with pytest.raises(SettingsError) as info:
        parse_recipe({"warmup": {"target_acuracy": 0.5, "eval_every": 0}})
    assert "warmup.target_acuracy: unknown key (did you mean 'target_accuracy'?)" in str(info.value)
    assert "warmup.eval_every: expected a number in [1, 1000000]" in str(info.value)


def test_the_cache_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV_CACHE_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "evotree"
    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine" and cache_root(tmp_path / "x") == tmp_path / "x"
    monkeypatch.delenv(ENV_CACHE_DIR)
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache_root() == Path.home() / ".cache" / "evotree"


# ============================================================================ training and cache
def test_the_same_key_gives_the_same_weights(tokenizer: Any) -> None:
    capped = replace(QUICK, target_accuracy=1.0, max_steps=30, eval_every=10)
    first, report = build_warm_model(SMALL, SMALL_TINY, capped, tokenizer)
    again, _ = build_warm_model(SMALL, SMALL_TINY, capped, tokenizer)
    assert report["steps"] == 30 and not report["reached_target"]  # stopped at the cap
    assert same_weights(state(first), state(again))
    other, _ = build_warm_model(SMALL, SMALL_TINY, replace(capped, seed=1), tokenizer)
    assert not same_weights(state(first), state(other))


def test_the_warmup_stops_on_a_measured_level_and_is_reused(tokenizer: Any, tmp_path: Path) -> None:
    messages: list[str] = []
    first = ensure_warm_model(
        SMALL, SMALL_TINY, QUICK, tokenizer, cache=tmp_path, log=messages.append
    )
    assert first.trained and first.path == tmp_path / CACHE_SUBDIR / first.key
    manifest = json.loads((first.path / "warmup.json").read_text())
    # stopped when the measured accuracy reached the target, before the cap, at a measurement
    assert manifest["reached_target"] and manifest["accuracy"] >= QUICK.target_accuracy
    assert 0 < manifest["steps"] < QUICK.max_steps and manifest["steps"] % QUICK.eval_every == 0
    assert manifest["history"][-1] == {
        "step": manifest["steps"],
        "accuracy": round(manifest["accuracy"], 4),
    }
    assert all(h["accuracy"] < QUICK.target_accuracy for h in manifest["history"][:-1])
    assert manifest["key"] == first.key and manifest["inputs"]["settings"]["seed"] == 0
    assert any("training it" in m for m in messages)
    messages.clear()
    mtime = (first.path / "model.safetensors").stat().st_mtime_ns
    second = ensure_warm_model(
        SMALL, SMALL_TINY, QUICK, tokenizer, cache=tmp_path, log=messages.append
    )
    assert not second.trained and second.path == first.path and second.key == first.key
    assert any("reused from the cache" in m for m in messages) and not any(
        "training" in m for m in messages
    )
    assert (first.path / "model.safetensors").stat().st_mtime_ns == mtime
    # nothing else but the entry and its lock file: no staging folder left over
    assert sorted(p.name for p in (tmp_path / CACHE_SUBDIR).iterdir()) == [
        f".{first.key}.lock",
        first.key,
    ]
    # what the cache holds is what was trained: trained again from nothing, the same weights
    rebuilt, _ = build_warm_model(SMALL, SMALL_TINY, QUICK, tokenizer)
    assert same_weights(state(load_warm_model(first.path)), state(rebuilt))


def test_an_unwritable_cache_still_gives_a_warm_model(tokenizer: Any, tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"  # a cache folder that cannot be made (even by root)
    blocked.write_text("not a folder\n")
    messages: list[str] = []
    capped = replace(QUICK, target_accuracy=1.0, max_steps=5, eval_every=5)
    result = ensure_warm_model(
        SMALL, SMALL_TINY, capped, tokenizer, cache=blocked, log=messages.append
    )
    assert result.trained and (result.path / "model.safetensors").is_file()
    assert not str(result.path).startswith(str(blocked)) and any(
        "cannot be written" in m for m in messages
    )


_BUILD = """
import json, sys
from dataclasses import replace
sys.path.insert(0, {tests!r})
from test_math_warmup import QUICK, SMALL, SMALL_TINY
from evotree.domains.math.model import _prepare_tokenizer, tiny_tokenizer
from evotree.domains.math.warmup import ensure_warm_model
settings = replace(QUICK, target_accuracy=1.0, max_steps=120, eval_every=40)
result = ensure_warm_model(SMALL, SMALL_TINY, settings, _prepare_tokenizer(tiny_tokenizer()), cache={cache!r},
                           log=lambda m: print(m, file=sys.stderr))
print(json.dumps({{"trained": result.trained, "path": str(result.path)}}))
"""


def test_two_runs_building_one_warmup_train_it_once(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = _BUILD.format(tests=str(Path(__file__).parent), cache=str(tmp_path / "cache"))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=240) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in outs]
    results = [json.loads(out.strip().splitlines()[-1]) for out, _ in outs]
    assert sorted(r["trained"] for r in results) == [
        False,
        True,
    ]  # one trained, the other loaded it
    assert results[0]["path"] == results[1]["path"]
    assert sum("training it" in err for _, err in outs) == 1


# ============================================================================ the train phase
def small_workspace(path: Path, **warmup: Any) -> Path:
    """A version tree: the default recipe on the small space and model, 2 GRPO steps."""
    path.mkdir(parents=True)
    text = RECIPE_TOML.replace("max_steps = 200", "max_steps = 2").replace(
        "per_device_train_batch_size = 64", "per_device_train_batch_size = 16"
    )
    table = {
        "enabled": True,
        "learning_rate": QUICK.learning_rate,
        "batch_size": QUICK.batch_size,
        "target_accuracy": QUICK.target_accuracy,
        "eval_every": QUICK.eval_every,
        "max_steps": QUICK.max_steps,
        **warmup,
    }
    block = "enabled = true\ntarget_accuracy = 0.6\neval_every = 50\n"
    assert block in text
    text = text.replace(block, "".join(f"{k} = {json.dumps(v)}\n" for k, v in table.items()))
    for key, value in SMALL_TINY.items():
        text, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", text)
        assert n == 1, key
    (path / RECIPE_FILE).write_text(text)
    (path / TRAIN_FILE).write_text(
        MATH_TOML.replace("num_problems = 256", "num_problems = 16")
        .replace('ops = ["+", "-"]', 'ops = ["+"]')
        .replace("max_operand = 20", "max_operand = 6")
    )
    return path


def read_signals(path: Path) -> dict[str, float]:
    rows = [
        json.loads(line)
        for line in (path / "output" / "evidence" / "signals.jsonl").read_text().splitlines()
    ]
    return {r["metric"]: r["value"] for r in rows if r["step"] == 0}


def test_the_train_phase_trains_the_warmup_once_and_reuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evotree.domains.math.train import main

    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv("EVOTREE_EVIDENCE_DIR", raising=False)
    first_tree = small_workspace(tmp_path / "v0")
    assert main(first_tree) == 0, capsys.readouterr().err[-3000:]
    err = capsys.readouterr().err
    assert "not in the cache" in err and "training it" in err
    first = json.loads((first_tree / "output" / "train_summary.json").read_text())["warmup"]
    assert first["trained"] and first["accuracy"] >= QUICK.target_accuracy
    assert read_signals(first_tree)["warmup/trained"] == 1
    # another version (another GRPO learning rate) at another run seed: the same warm-up, loaded
    second_tree = small_workspace(tmp_path / "v1")
    text = (second_tree / RECIPE_FILE).read_text()
    (second_tree / RECIPE_FILE).write_text(
        re.sub(r"(?m)^learning_rate = 5e-4$", "learning_rate = 1e-3", text, count=1)
    )
    monkeypatch.setenv("EVOTREE_SEED", "3")
    assert main(second_tree) == 0, capsys.readouterr().err[-3000:]
    err = capsys.readouterr().err
    assert "reused from the cache" in err and "training it" not in err and "warm-up step" not in err
    second = json.loads((second_tree / "output" / "train_summary.json").read_text())
    assert second["warmup"]["key"] == first["key"] and not second["warmup"]["trained"]
    assert second["run_seed"] == 3
    assert read_signals(second_tree)["warmup/trained"] == 0
    assert [
        p.name for p in (tmp_path / "cache" / CACHE_SUBDIR).iterdir() if not p.name.startswith(".")
    ] == [first["key"]]
    # prepare() (the host's way to build it before a run) finds the same entry
    assert prepare(second_tree, cache=tmp_path / "cache").key == first["key"]


def test_without_the_warmup_or_with_a_local_model_nothing_is_warmed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from evotree.domains.math.train import main
    from evotree.harness.tiny_lm import build_tiny_causal_lm

    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv("EVOTREE_EVIDENCE_DIR", raising=False)
    off = small_workspace(tmp_path / "off", enabled=False)
    assert main(off) == 0, capsys.readouterr().err[-3000:]
    assert json.loads((off / "output" / "train_summary.json").read_text())["warmup"] is None
    assert prepare(off, cache=tmp_path / "cache") is None
    # any local Hugging Face model in place of the tiny one: loaded as it is, never warmed up
    from evotree.domains.math.model import _prepare_tokenizer, tiny_tokenizer

    local = tmp_path / "local-model"
    tok = _prepare_tokenizer(tiny_tokenizer())
    build_tiny_causal_lm(tok, seed=5, **SMALL_TINY).save_pretrained(local)
    tok.save_pretrained(local)
    tree = small_workspace(tmp_path / "hf")
    text = (tree / RECIPE_FILE).read_text()
    (tree / RECIPE_FILE).write_text(
        text.replace('model = "tiny"', f"model = {json.dumps(str(local))}", 1)
    )
    assert main(tree) == 0, capsys.readouterr().err[-3000:]
    summary = json.loads((tree / "output" / "train_summary.json").read_text())
    assert summary["warmup"] is None and str(local) in summary["model"]
    assert prepare(tree, cache=tmp_path / "cache") is None
    assert not (tmp_path / "cache").exists()


# ============================================================================ the default recipe learns
def avg_per_problem(model: Any, tokenizer: Any, problems: list[Any], samples: int) -> list[float]:
    from evotree.domains.math.judge import sample_completions

    texts = sample_completions(
        model,
        tokenizer,
        [p.prompt for p in problems],
        samples=samples,
        temperature=0.6,
        top_p=0.95,
        max_new_tokens=6,
        seed=0,
        batch_size=64,
    )
    return [
        sum(is_correct(t, p.answer) for t in ts) / samples
        for p, ts in zip(problems, texts, strict=True)
    ]


@pytest.mark.slow
def test_the_default_v0_climbs_from_the_warm_model_on_held_out_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default recipe (warm-up, then 200 GRPO steps at lr 5e-4, 8 x 8 completions per step)
    beats the warm model it starts from on every judge fact (8 samples each, the default judge's
    sampling): the paired 95 % interval of the gain excludes 0. About 2-3 minutes on 2 cores."""
    import torch

    from evotree.domains.math.model import load_trained
    from evotree.domains.math.train import main

    monkeypatch.setenv(ENV_CACHE_DIR, str(tmp_path / "cache"))
    monkeypatch.delenv("EVOTREE_EVIDENCE_DIR", raising=False)
    monkeypatch.setenv("EVOTREE_SEED", "0")
    (tmp_path / "v0").mkdir()
    (tmp_path / "v0" / RECIPE_FILE).write_text(RECIPE_TOML)
    (tmp_path / "v0" / TRAIN_FILE).write_text(MATH_TOML)
    threads = torch.get_num_threads()
    try:
        assert main(tmp_path / "v0") == 0, capsys.readouterr().err[-3000:]
        summary = json.loads((tmp_path / "v0" / "output" / "train_summary.json").read_text())
        assert summary["steps"] == 200 and summary["warmup"]["accuracy"] >= 0.6
        trained, tokenizer = load_trained(tmp_path / "v0" / MODEL_DIR)
        warm = load_warm_model(Path(summary["warmup"]["path"]))
        warm.eval()
        # every fact of the judge's region (118), as the default judge splits them
        splits = hidden_splits(
            SplitSpec(seed=HIDDEN_SEED_MIN + 17, num_problems=59),
            SplitSpec(seed=HIDDEN_SEED_MIN + 91, num_problems=59),
        )
        problems = splits["validation"] + splits["heldout"]
        torch.set_num_threads(1)
        before = avg_per_problem(warm, tokenizer, problems, 8)
        after = avg_per_problem(trained, tokenizer, problems, 8)
    finally:
        torch.set_num_threads(threads)
    gains = [a - b for a, b in zip(after, before, strict=True)]
    mean = statistics.mean(gains)
    half = 1.96 * statistics.stdev(gains) / math.sqrt(len(gains))
    print(
        f"warm Avg@8 {statistics.mean(before):.3f}, trained {statistics.mean(after):.3f}, "
        f"gain {mean:+.3f} ± {half:.3f}"
    )
    assert mean - half > 0, (statistics.mean(before), statistics.mean(after), mean, half)
