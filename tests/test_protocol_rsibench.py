"""RSIBench-Data's data strategy (docs/protocols/rsibench-data.md): selection.json format 2 —
select, synthesize from the pool's generators, relabel, weight, repeat, order, and set the
whitelisted training settings — read strictly by the judge, trained by the fixed stack.

The fast tests load the judge-side templates (the strict reading, the pool and its generators,
the trainer) as the judge loads them; the heavy ones run real strategies through `evotree run`
and check that each capability moves the judged score the way it should against the first-60
baseline, and the search statistics RSIBench reports."""

from __future__ import annotations

import json
import statistics
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from conftest import Cli, git

from evotree.domains import protocols, rsibench_data


def _module(name: str, text: str, monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    exec(compile(text, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - the template's code
    return module


@pytest.fixture
def judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> types.SimpleNamespace:
    """The judge's modules as the template writes them into the judge store."""
    rsibench_data.materialize_rsibench(tmp_path)
    store = tmp_path / "judge"
    task = _module("judge_task", (store / "judge_task.py").read_text(), monkeypatch)
    pool = _module("judge_pool", (store / "judge_pool.py").read_text(), monkeypatch)
    data = _module("judge_data", (store / "judge_data.py").read_text(), monkeypatch)
    trainer = _module("judge_trainer", (store / "judge_trainer.py").read_text(), monkeypatch)
    import tomllib

    defaults = tomllib.loads((store / "task.toml").read_text())["training"]
    return types.SimpleNamespace(task=task, pool=pool, data=data, train=trainer.train, defaults=defaults,
                                 root=tmp_path)


def _read(judge: types.SimpleNamespace, selection: Any) -> tuple[list[Any], dict[str, Any]]:
    text = selection if isinstance(selection, str) else json.dumps(selection)
    rows, settings = judge.data.assemble(judge.data.parse(text), judge.pool.POOL, judge.pool.GENERATORS,
                                         judge.defaults)
    return rows, settings


def _refused(judge: types.SimpleNamespace, selection: Any, *words: str) -> str:
    with pytest.raises(judge.data.SelectionError) as caught:
        _read(judge, selection)
    message = str(caught.value)
    assert all(w in message for w in words), message
    return message


def _v2(examples: list[dict[str, Any]] | None = None, **training: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"format": 2, "examples": examples if examples is not None else
                           [{"index": i} for i in range(20)]}
    if training:
        out["training"] = training
    return out


def test_format_2_builds_the_rows_in_order(judge: types.SimpleNamespace) -> None:
    pool = judge.pool.POOL
    x, y, label = pool[3]
    rows, settings = _read(judge, _v2([
        {"index": 5},
        {"index": 3, "label": 1 - label, "weight": 2.5, "repeat": 3},
        {"generator": "query", "params": {"x": 0.5, "y": -0.25}},
        {"generator": "sample", "params": {"seed": 11}, "label": 0},
        *({"index": i} for i in range(10, 20)),
    ], epochs=3, lr=0.2, batch_size=4))
    assert rows[0] == (*pool[5], 1.0)
    assert rows[1:4] == [(x, y, 1 - label, 2.5)] * 3  # relabelled, weighted, repeated in place
    assert rows[4] == (0.5, -0.25, *judge.pool.query(0.5, -0.25)[2:], 1.0)
    assert rows[5][2] == 0 and rows[5][:2] == judge.pool.sample(11)[:2]
    assert rows[6:] == [(*pool[i], 1.0) for i in range(10, 20)]
    assert settings == {"epochs": 3, "lr": 0.2, "batch_size": 4, "shuffle": False}
    # defaults: the judge's, and in format 2 the list's order is the training order
    assert _read(judge, _v2())[1] == {"epochs": 20, "lr": 0.05, "batch_size": 1, "shuffle": False}


def test_the_first_format_still_works_as_before(judge: types.SimpleNamespace) -> None:
    rows, settings = _read(judge, {"indices": [12, 3, 3, 400, -1, *range(20, 30)]})
    assert rows == [(*judge.pool.POOL[i], 1.0) for i in [3, 12, *range(20, 30)]]
    assert settings == {"epochs": 20, "lr": 0.05, "batch_size": 1, "shuffle": True}
    _refused(judge, {"indices": list(range(9))}, "9 examples", "at least 10")
    _refused(judge, {"indices": ["1", *range(20)]}, "list of integers")


@pytest.mark.parametrize(("selection", "words"), [
    (_v2(seed=3), ["training", "unknown key", "'seed'", "allowed: epochs, lr, batch_size, shuffle"]),
    (_v2(epochs=0), ["training.epochs", "[1, 50]"]),
    (_v2(epochs=51), ["training.epochs", "[1, 50]"]),
    (_v2(epochs=2.0), ["training.epochs", "integer"]),
    (_v2(epochs=True), ["training.epochs", "integer"]),
    (_v2(lr=5), ["training.lr", "[0.0001, 1.0]"]),
    (_v2(lr=0), ["training.lr"]),
    (_v2(batch_size=65), ["training.batch_size"]),
    (_v2(shuffle=1), ["training.shuffle", "true or false"]),
    ({**_v2(), "extra": 1}, ["selection", "unknown key", "'extra'"]),
    ({**_v2(), "format": 3}, ["format must be 2"]),
    ({"examples": [{"index": 1}] * 20}, ["selection", "unknown key", "'examples'"]),
    (_v2([{"index": 1, "note": "x"}] * 20), ["examples[0]", "unknown key", "'note'"]),
    (_v2([{"index": 1, "weight": 0}] * 20), ["examples[0].weight", "(0.0, 10.0]"]),
    (_v2([{"index": 1, "weight": -1}] * 20), ["examples[0].weight"]),
    (_v2([{"index": 1, "weight": 11}] * 20), ["examples[0].weight"]),
    (_v2([{"index": 1, "weight": "2"}] * 20), ["examples[0].weight"]),
    (_v2([{"index": 1, "label": 2}] * 20), ["examples[0].label", "0 or 1"]),
    (_v2([{"index": 1, "label": True}] * 20), ["examples[0].label"]),
    (_v2([{"index": 1, "repeat": 0}] * 20), ["examples[0].repeat"]),
    (_v2([{"index": 1, "repeat": 21}] * 20), ["examples[0].repeat"]),
    (_v2([{"index": 400}] * 20), ["examples[0].index", "[0, 399]"]),
    (_v2([{"index": 1, "generator": "sample", "params": {"seed": 1}}] * 20), ["exactly one"]),
    (_v2([{"label": 1}] * 20), ["exactly one"]),
    (_v2([{"index": 1, "params": {"seed": 1}}] * 20), ["params belong to a generator"]),
    (_v2([{"generator": "oracle", "params": {}}] * 20), ["'oracle' is not a generator of the pool",
                                                        "query, sample"]),
    (_v2([{"generator": "__import__", "params": {}}] * 20), ["not a generator of the pool"]),
    (_v2([{"generator": "query", "params": {"x": 0.1}}] * 20), ["missing y"]),
    (_v2([{"generator": "query", "params": {"x": 0.1, "y": 0, "noise": 0}}] * 20),
     ["examples[0].params", "unknown key", "'noise'"]),
    (_v2([{"generator": "query", "params": {"x": 2.0, "y": 0}}] * 20), ["params.x", "[-1.0, 1.0]"]),
    (_v2([{"generator": "sample", "params": {"seed": -1}}] * 20), ["params.seed"]),
    (_v2([{"index": 1}] * 9), ["9 examples", "at least 10"]),
    (_v2([{"index": 1}] * 2001), ["2001 items", "at most 2000"]),
    (_v2([{"index": 1, "repeat": 20}] * 101), ["more than 2000 examples after repeats"]),
    (_v2([1] * 20), ["examples[0] must be an object"]),
    ([1, 2], ["selection must be an object"]),
])
def test_a_selection_outside_the_rules_is_refused(judge: types.SimpleNamespace, selection: Any,
                                                  words: list[str]) -> None:
    _refused(judge, selection, *words)


@pytest.mark.parametrize("text", [
    '{"format": 2, "examples": [{"index": 1, "weight": NaN}], "training": {}}',
    '{"format": 2, "examples": [{"index": 1, "weight": Infinity}]}',
    '{"format": 2, "examples": [{"index": 1, "weight": 1e400}]}',  # parses to inf
    '{"format": 2, "examples": [], "training": {"lr": -Infinity}}',
    '{"format": 2, "format": 2, "examples": []}',  # a duplicate key: which one counts?
    '{"format": 2, "examples": [',
])
def test_non_finite_numbers_and_malformed_json_are_refused(judge: types.SimpleNamespace, text: str) -> None:
    message = _refused(judge, text)
    assert any(w in message for w in ("not a number", "finite", "duplicate key", "not JSON")), message


def test_an_oversized_selection_is_refused_before_parsing(judge: types.SimpleNamespace) -> None:
    _refused(judge, " " * (4 * 1024 * 1024 + 1), "over 4194304 bytes")


def test_the_generators_label_their_own_points(judge: types.SimpleNamespace) -> None:
    """A generator's label is fixed by the pool's code: the same point gets the same label every
    time, whatever way the number is written; query's labels agree with the task's line about 90 %
    of the time; sample draws like the pool (about 30 % flipped); the strategy's copy (pool.py) and
    the judge's are the same code."""
    query, sample, line = judge.pool.query, judge.pool.sample, judge.task.line
    assert query(0, 1) == query(0.0, 1.0) and query(0.3, 0.2) == query(0.3, 0.2)
    grid = [(i / 25 - 1, j / 25 - 1) for i in range(50) for j in range(50)]
    agree = statistics.mean(query(x, y)[2] == line(x, y) for x, y in grid)
    assert 0.87 < agree < 0.93, agree
    drawn = [sample(s) for s in range(2000)]
    assert len({row[:2] for row in drawn}) == 2000  # what varies varies
    assert 0.66 < statistics.mean(line(x, y) == label for x, y, label in drawn) < 0.74
    ours = (judge.root / "pool.py").read_text()
    assert (judge.root / "judge" / "judge_pool.py").read_text() == ours.replace("from task import",
                                                                              "from judge_task import")


def test_the_fixed_trainer_with_the_defaults_is_the_old_trainer_step_for_step(judge: types.SimpleNamespace) -> None:
    """The first format trains exactly as before (unit weights, batch size 1, shuffled)."""
    ns: dict[str, Any] = {}
    exec(protocols.TRAINER, ns)  # noqa: S102 - the template's own code
    rows = judge.pool.POOL[:60]
    for seed in range(3):
        assert judge.train([(*r, 1.0) for r in rows], 20, 0.05, seed=seed) == ns["train"](rows, 20, 0.05, seed=seed)


def test_the_start_anchor_is_what_the_start_scores(judge: types.SimpleNamespace) -> None:
    """The normalized scale's 0.1 is the starting strategy's mean validation accuracy (its own
    selection.json, read by the judge) over judge seeds and training seeds."""
    import os
    import subprocess

    subprocess.run([sys.executable, "data_strategy.py"], cwd=judge.root, check=True,
                   env={**os.environ, "PYTHONPATH": str(judge.root)})
    rows, settings = _read(judge, (judge.root / "selection.json").read_text())
    points, predict = judge.task.points, judge.task.predict

    def accuracy(model: dict[str, Any], seed: int) -> float:
        test = points(seed, 400)
        return sum(predict(model, x, y) == label for x, y, label in test) / len(test)

    scores = [accuracy(judge.train(rows, settings["epochs"], settings["lr"], seed=s,
                                   batch_size=settings["batch_size"], shuffle=settings["shuffle"]), 5000 + j)
              for s in range(4) for j in range(10)]
    assert len(rows) == 60 and settings["shuffle"] is True
    assert statistics.mean(scores) == pytest.approx(rsibench_data.START_ACCURACY, abs=0.02)
    assert protocols.START_ACCURACY["rsibench-data"] == rsibench_data.START_ACCURACY
