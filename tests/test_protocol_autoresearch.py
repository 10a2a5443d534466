"""karpathy/autoresearch's loop on evotree (`evotree init --protocol autoresearch`).

Fast tests: the summary lines the metric is parsed from, the hidden evaluation's stream layout
(no context holds a byte scored at the same or a later step), results.tsv's layout, the two kinds
of init (an autoresearch repository; the worked example). Heavy tests run the protocol end to end
with real training: the worked example (a byte-level NumPy LM, a 3-second budget per run, a
learning rate that helps and an initialization that does not, a crash, a refused prepare.py
edit) and an autoresearch-shaped repository whose metric is read from the summary lines.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, git, validate
from fixtures_ws import empty_repo

from evotree.core.config import parse_config
from evotree.domains.autoresearch.corpus import generate
from evotree.domains.autoresearch.judge import stream_layout
from evotree.domains.autoresearch.summary import metric_value, parse_summary, peak_memory_gb
from evotree.domains.autoresearch.templates import EXAMPLE_MARKER, example_files, materialize
from evotree.report.results_tsv import ResultRow, results_tsv

#: the summary karpathy/autoresearch's program.md shows (its train.py prints this at the end)
KARPATHY_SUMMARY = """\
step 00953 (100.0%) | loss: 2.912345 | remaining: 0s
---
val_bpb:          0.997900
training_seconds: 300.1
total_seconds:    325.9
peak_vram_mb:     45060.2
mfu_percent:      39.80
total_tokens_M:   499.6
num_steps:        953
num_params_M:     50.3
depth:            8
"""


# ---------------------------------------------------------------------------- the summary lines
def test_the_summary_lines_are_read_as_program_md_greps_them() -> None:
    summary = parse_summary(KARPATHY_SUMMARY)
    assert metric_value(summary, "val_bpb") == 0.9979
    assert summary["num_steps"] == 953 and summary["depth"] == 8
    assert peak_memory_gb(summary) == pytest.approx(45060.2 / 1024)
    assert "step 00953 (100.0%) | loss" not in summary  # progress lines are not summary lines


def test_a_crash_has_no_metric() -> None:
    crashed = "step 00010 | loss: 9.1\nTraceback (most recent call last):\n  ...\nRuntimeError: CUDA out of memory\n"
    assert metric_value(parse_summary(crashed), "val_bpb") is None
    assert (
        metric_value(parse_summary("val_bpb: nan\n"), "val_bpb") is None
    )  # a NaN loss is a crash too
    assert (
        metric_value(parse_summary("val_bpb:   1.5\nval_bpb: 1.25\n"), "val_bpb") == 1.25
    )  # the last wins
    assert (
        metric_value(parse_summary("my_val_bpb: 1.0\n"), "val_bpb") is None
    )  # "^val_bpb:", not a suffix


# ---------------------------------------------------------------------------- the hidden evaluation
@pytest.mark.parametrize(
    ("size", "streams", "context", "steps"), [(12_000, 20, 32, 512), (5_000, 7, 16, 10_000)]
)
def test_no_context_holds_a_byte_scored_at_that_step_or_later(
    size: int, streams: int, context: int, steps: int
) -> None:
    """The judge asks for stream b's byte at position s_b + t after contexts [p - context, p): no
    byte any stream is scored on at step t or later may be in a context shown at step t or earlier."""
    starts, length = stream_layout(size, streams, context, steps)
    assert length >= 1 and starts[-1] + length <= size
    scored_at = {s + t: t for s in starts for t in range(length)}
    assert len(scored_at) == streams * length  # disjoint stretches
    for s in starts:
        for t in range(length):
            p = s + t
            for q in range(p - context, p):
                assert q >= 0
                assert scored_at.get(q, -1) < t, (s, t, q)


CHEATING_MODEL = """\
import numpy as np

print("val_bpb: 0.000001")  # a print at import must not reach the judge's answers


class Cheat:
    def next_logprobs(self, contexts):
        return np.full((len(contexts), 256), {value})  # unnormalized: "every byte is certain"


def load_model(path):
    return Cheat()
"""


@pytest.mark.parametrize("value", ["100.0", "0.0"])
def test_the_judge_normalizes_what_a_model_answers(tmp_path: Path, value: str) -> None:
    """Scores that claim certainty for every byte are a uniform distribution to the judge: 8 bits
    per byte, whatever the model prints or claims (no nested sandbox here: [sandbox] mode off)."""
    from evotree.domains.autoresearch.judge import hidden_bits_per_byte

    (tmp_path / "train.py").write_text(CHEATING_MODEL.format(value=value))
    text = generate(3, 4000).encode()
    bits = hidden_bits_per_byte(text, tmp_path, streams=4, context=16, steps=50)
    assert bits == pytest.approx([8.0] * 4, abs=1e-6)


def test_a_model_that_answers_nonsense_fails_the_judge(tmp_path: Path) -> None:
    from evotree.domains.autoresearch.judge import hidden_bits_per_byte

    (tmp_path / "train.py").write_text(CHEATING_MODEL.format(value="np.nan"))
    with pytest.raises(RuntimeError, match="non-finite"):
        hidden_bits_per_byte(generate(3, 4000).encode(), tmp_path, streams=4, context=16, steps=50)


def test_a_hidden_text_too_short_is_refused() -> None:
    with pytest.raises(ValueError):
        stream_layout(100, 20, 32, 512)


# ---------------------------------------------------------------------------- results.tsv
def test_results_tsv_has_autoresearchs_columns_then_evotrees() -> None:
    rows = [
        ResultRow(
            "a1b2c3d", 0.9979, 44.0, "keep", "baseline", "champion", None, None, None, 4, "v0"
        ),
        ResultRow(
            "b2c3d4e",
            0.9932,
            44.2,
            "keep",
            "increase LR\tto 0.04",
            "pass",
            0.0047,
            0.002,
            0.007,
            3,
            "v1",
        ),
        ResultRow(
            "c3d4e5f",
            None,
            None,
            "crash",
            "double model width (OOM)",
            "crash",
            None,
            None,
            None,
            0,
            "v2",
        ),
    ]
    table = list(csv.reader(io.StringIO(results_tsv(rows)), delimiter="\t"))
    assert table[0][:5] == ["commit", "val_bpb", "memory_gb", "status", "description"]
    assert table[0][5:] == ["verdict", "delta", "ci_low", "ci_high", "seeds", "version"]
    assert table[1][:5] == ["a1b2c3d", "0.997900", "44.0", "keep", "baseline"]
    assert table[2][4] == "increase LR to 0.04"  # a tab in a description cannot split the row
    assert table[2][5:8] == ["pass", "+0.004700", "+0.002000"]
    assert table[3][:4] == ["c3d4e5f", "0.000000", "0.0", "crash"]  # program.md's crash row
    assert all(len(r) == 11 for r in table)


# ---------------------------------------------------------------------------- init
def test_an_autoresearch_repository_gets_only_the_rules(tmp_path: Path) -> None:
    (tmp_path / "prepare.py").write_text("TIME_BUDGET = 300\n")
    (tmp_path / "train.py").write_text("print('val_bpb: 1.0')\n")
    (tmp_path / "program.md").write_text("# autoresearch\n")
    written = materialize(tmp_path)
    assert sorted(written) == ["evotree.toml", "program.evotree.md"]
    assert (
        tmp_path / "prepare.py"
    ).read_text() == "TIME_BUDGET = 300\n"  # nothing of the user's replaced
    config = parse_config((tmp_path / "evotree.toml").read_text())
    assert config.protect.editable == ["train.py"] and config.protect.base == "root"
    assert (
        "evotree.domains.autoresearch.runner" in config.train.command
        and "-- python train.py" in config.train.command
    )
    assert config.train.timeout_seconds == 600  # program.md: kill a run past 10 minutes
    assert (
        "--metric val_bpb --direction min" in config.eval.command
        and "--hidden" not in config.eval.command
    )
    assert config.gates.min_tasks == 1 and config.gates.champion_seeds >= 2
    assert config.executor.gpus == 1.0
    assert any(p.endswith("/.cache/autoresearch") for p in config.sandbox.read_paths)
    assert (
        "git reset" not in (tmp_path / "program.evotree.md").read_text().split("You never")[1][:10]
    )


def test_the_worked_example_files(tmp_path: Path) -> None:
    files = example_files(5, seeds=(123, 456))
    assert EXAMPLE_MARKER in files["prepare.py"]
    config = parse_config(files["evotree.toml"])
    assert "--time-budget 5 " in config.train.command and config.train.timeout_seconds >= 4 * 5
    assert "--hidden judge" in config.eval.command and config.eval.judge_paths == ["judge/"]
    assert config.protect.editable == ["train.py"] and config.gates.min_tasks == 20
    # the hidden texts are neither the train nor the validation text, and differ from each other
    hidden = files["judge/validation.txt"]
    assert (
        hidden[:2000] not in files["data/train.txt"] and hidden[:2000] not in files["data/val.txt"]
    )
    assert files["judge/validation.txt"] != files["judge/heldout.txt"]
    assert generate(7, 5000) == generate(7, 5000) != generate(8, 5000)
    assert len(files["data/train.txt"].encode()) <= 400_000  # a few hundred KB at most
    with pytest.raises(ValueError):
        example_files(0)
    # the example's own prepare.py is recognised as the example: init writes the rest around it
    (tmp_path / "prepare.py").write_text(files["prepare.py"])
    (tmp_path / "train.py").write_text(files["train.py"])
    assert "data/train.txt" in materialize(tmp_path, time_budget=5)


# ---------------------------------------------------------------------------- end to end
def _branch(cli: Cli, message: str, edit: dict[str, tuple[str, str]]) -> str:
    """A version from the champion with ``edit`` = {file: (old, new)} applied and committed."""
    version = cli.json("branch", "-m", message)["id"]
    worktree = cli.repo / ".evotree" / "worktrees" / version
    for rel, (old, new) in edit.items():
        text = (worktree / rel).read_text()
        assert old in text, (rel, old)
        (worktree / rel).write_text(text.replace(old, new))
    git(worktree, "commit", "-qam", message)
    return version


def _score_gate(cli: Cli, version: str) -> dict[str, Any]:
    import json

    from evotree.cli.main import cli as root

    out = cli.runner.invoke(root, ["-C", str(cli.repo), "gates", version, "--json"]).stdout
    return next(g for g in json.loads(out)["gates"] if g["name"] == "score")


def _run_any(cli: Cli, version: str) -> dict[str, Any]:
    """One run of ``version``, whatever the exit status (a failed run exits non-zero)."""
    import json

    from evotree.cli.main import cli as root

    return json.loads(
        cli.runner.invoke(root, ["-C", str(cli.repo), "run", version, "--json"]).stdout
    )["runs"][0]


def _tsv(cli: Cli) -> dict[str, dict[str, str]]:
    text = cli("export", "results-tsv").stdout
    rows = list(csv.DictReader(io.StringIO(text), delimiter="\t"))
    return {r["version"]: r for r in rows}


@pytest.mark.heavy
def test_the_worked_example_end_to_end(tmp_path: Path) -> None:
    """Two experiments through the protocol with real training (3 s per run): a larger learning
    rate is kept by the score gate; a smaller initialization, whose single run may look
    better (the step count under a wall-clock budget moves with the machine's load), is not."""
    repo = empty_repo(tmp_path / "example")
    for rel, text in example_files(3).items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(
        repo, "add", "prepare.py", "train.py", "program.md", "data", "evotree.toml"
    )  # judge/ never committed
    git(repo, "commit", "-qm", "an autoresearch repository")
    cli = Cli(repo)
    cli("init", "--protocol", "autoresearch")
    assert not (repo / "judge").exists()  # the hidden texts went into the judge store
    assert "validation.txt" in git(repo, "ls-tree", "-r", "--name-only", "refs/evotree/judge")
    # the baseline and its noise floor: the champion at four seeds
    for run in cli.json("run", "v0", "--seeds", "4")["runs"]:
        assert run["status"] == "succeeded", run
        assert run["headline"]["n"] == 20  # 20 hidden streams, one task each
    lr = _branch(
        cli,
        "raise the learning rate 0.0002 -> 0.001",
        {"train.py": ("LR = 0.0002 ", "LR = 0.001  ")},
    )
    init = _branch(
        cli,
        "initialize at 0.9 of the scale",
        {"train.py": ("INIT_SCALE = 1.0 ", "INIT_SCALE = 0.9 ")},
    )
    # the kept experiment at the champion's four seeds: at two, a real gain of 0.2+ bits per byte
    # was once judged "more_seeds" (p 0.019) on a loaded machine; the other at two is enough to
    # show a single lucky run is not kept
    for version, seeds in ((lr, 4), (init, 2)):
        runs = cli.json("run", version, "--seeds", str(seeds))["runs"]
        assert [r["status"] for r in runs] == ["succeeded"] * seeds, runs
    kept, not_kept = _score_gate(cli, lr), _score_gate(cli, init)
    assert kept["status"] == "pass", kept
    assert not_kept["status"] != "pass" and not_kept["numbers"]["verdict"] in (
        "more_seeds",
        "futile",
        "fail",
    ), not_kept
    # the judge's own bits per byte (hidden text) and the run's own summary line are both recorded
    rows = cli.json(
        "sql",
        "SELECT version, metric, avg(value) AS v FROM signals WHERE metric IN "
        "('judge/validation_val_bpb', 'summary/val_bpb') GROUP BY version, metric",
    )["rows"]
    means = {(r["version"], r["metric"]): r["v"] for r in rows}
    assert means[(lr, "judge/validation_val_bpb")] < means[("v0", "judge/validation_val_bpb")] - 0.2
    assert 0.5 < means[(lr, "summary/val_bpb")] < 8.0
    # a crash is recorded as a crash (the run failed, charged, never scored)
    crash = _branch(
        cli, "a typo", {"train.py": ("    val_bpb = evaluate_bpb(", "    val_bpb = evaluate_bpbb(")}
    )
    crashed = _run_any(cli, crash)
    assert crashed["status"] == "failed" and "crash" in " ".join(crashed["notes"]), crashed
    # prepare.py is fixed: a version that edits it is refused before anything runs
    cheat = _branch(
        cli,
        "a longer time budget",
        {"prepare.py": ('"AUTORESEARCH_TIME_BUDGET", "30"', '"X", "60"')},
    )
    error = cli.json("run", cheat, code=40)["error"]
    assert error["code"] == "patch_rejected" and "prepare.py" in error["message"]
    assert not list((repo / ".evotree" / "runs").glob(f"{cheat}-*"))
    # results.tsv: autoresearch's columns with the gate's decisions
    table = _tsv(cli)
    assert table["v0"]["status"] == "keep" and table["v0"]["verdict"] == "champion"
    assert table[lr]["status"] == "keep" and table[lr]["verdict"] == "pass"
    assert (
        float(table[lr]["val_bpb"]) < float(table["v0"]["val_bpb"])
        and float(table[lr]["ci_low"]) > 0
    )
    assert table[init]["status"] == "discard"
    assert table[crash]["status"] == "crash" and table[crash]["val_bpb"] == "0.000000"
    assert table[cheat]["status"] == "discard" and table[cheat]["verdict"] == "no_runs"


#: an autoresearch-shaped repository: prepare.py owns the evaluation, train.py prints the summary
#: (no real model: the metric is a fixed function of LR plus seed noise, so a run takes a second)
STAND_IN_PREPARE = '''\
"""Fixed: the time budget and the evaluation (an autoresearch-shaped stand-in)."""
TIME_BUDGET = 300


def evaluate_bpb(lr, seed):
    import os, random
    # the data cache, as autoresearch keeps it: outside the repository, under ~/.cache/autoresearch
    noise = float(open(os.path.expanduser("~/.cache/autoresearch/noise.txt")).read())
    return 1.0 + abs(lr - 0.04) + random.Random(seed).gauss(0, noise)
'''
STAND_IN_TRAIN = """\
import os
from prepare import evaluate_bpb
LR = 0.02
print("step 00001 | loss: 9.0")
if LR > 1:
    raise RuntimeError("CUDA out of memory")
val_bpb = evaluate_bpb(LR, int(os.environ.get("EVOTREE_SEED", "0")))
print("---")
print(f"val_bpb:          {val_bpb:.6f}")
print("training_seconds: 0.1")
print("peak_vram_mb:     2048.0")
print("num_steps:        1")
"""


@pytest.mark.heavy
def test_an_autoresearch_repository_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`evotree init --protocol autoresearch` in a repository that has its own train.py and
    prepare.py: the metric is read from the summary lines; one GPU per run (a stand-in device)."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # the rules ask for one GPU per run
    home = tmp_path / "home"
    (home / ".cache" / "autoresearch").mkdir(parents=True)
    (home / ".cache" / "autoresearch" / "noise.txt").write_text("0.002\n")
    monkeypatch.setenv("HOME", str(home))  # init names the data cache under the user's home
    repo = empty_repo(tmp_path / "autoresearch")
    (repo / "prepare.py").write_text(STAND_IN_PREPARE)
    (repo / "train.py").write_text(STAND_IN_TRAIN)
    (repo / ".gitignore").write_text("results.tsv\nrun.log\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "autoresearch")
    cli = Cli(repo)
    written = cli.json("init", "--protocol", "autoresearch")
    assert (repo / "evotree.toml").is_file() and (repo / "program.evotree.md").is_file(), written
    assert (repo / "prepare.py").read_text() == STAND_IN_PREPARE
    assert (
        f"{home}/.cache/autoresearch" in (repo / "evotree.toml").read_text()
    )  # read-only in the sandbox
    runs = cli.json("run", "v0", "--seeds", "4")["runs"]
    assert [r["status"] for r in runs] == ["succeeded"] * 4
    assert all(r["headline"]["n"] == 1 for r in runs)  # one number per run: the summary's val_bpb
    better = _branch(cli, "increase LR to 0.04", {"train.py": ("LR = 0.02", "LR = 0.04")})
    same = _branch(cli, "LR 0.0200001", {"train.py": ("LR = 0.02", "LR = 0.0200001")})
    for version in (better, same):
        cli.json("run", version, "--seeds", "2")
    assert _score_gate(cli, better)["status"] == "pass"
    assert _score_gate(cli, same)["status"] != "pass"  # within the noise floor: not kept
    oom = _branch(cli, "double model width", {"train.py": ("LR = 0.02", "LR = 2.0")})
    crashed = _run_any(cli, oom)
    assert crashed["status"] == "failed"
    cheat = _branch(
        cli, "a shorter evaluation", {"prepare.py": ("TIME_BUDGET = 300", "TIME_BUDGET = 600")}
    )
    assert cli.json("run", cheat, code=40)["error"]["code"] == "patch_rejected"
    target = repo / "results.tsv"
    cli("export", "results-tsv", "-o", str(target))
    table = {
        r["version"]: r for r in csv.DictReader(io.StringIO(target.read_text()), delimiter="\t")
    }
    assert table["v0"]["val_bpb"].startswith("1.02") and table["v0"]["memory_gb"] == "2.0"
    assert table[better]["status"] == "keep" and float(table[better]["val_bpb"]) == pytest.approx(
        1.0, abs=0.01
    )
    assert table[same]["status"] == "discard"
    assert table[oom]["status"] == "crash" and table[oom]["memory_gb"] == "0.0"
    exported = cli.json("export", "results-tsv")
    validate(exported, "export-results-tsv")
    rows = {r["version"]: r for r in exported["rows"]}
    assert (
        rows[better]["verdict"] == "pass"
        and rows[better]["delta"] > 0
        and rows[better]["ci_low"] > 0
    )
    assert rows[oom]["metric"] is None and rows[oom]["seeds"] == 0
