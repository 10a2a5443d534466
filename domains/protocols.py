"""Protocol templates: ``evotree init --protocol ai4ai`` and ``--protocol rsibench-data``;
``--protocol autoresearch``, karpathy/autoresearch's loop (:mod:`evotree.domains.autoresearch`,
docs/protocols/autoresearch.md).

Each writes a small, CPU-only task of the protocol's shape into a custom-domain workspace, with
the protocol's rules in its ``evotree.toml`` (docs/protocols/ai4ai.md, docs/protocols/rsibench-data.md):

* **ai4ai** — AI4AI-Bench's shape: the candidate edits the *training algorithm* (``train.py``,
  ``config.toml``) of a fixed task (``task.py``, protected); patches are measured against the
  pristine base and may touch only those files; the judge scores the trained model on hidden
  points; scores are normalized (0 unusable = chance, 0.1 the starting algorithm, 1 the task's
  optimum, its Bayes accuracy); failed formal runs count 0; the hidden judge's figures are shown
  only after ``evotree finalize`` (the agent sees train.py's quick metric), which retrains the
  selected version clean and judges it once; an exploration budget (4 hours, 1 USD) apart from it.
* **rsibench-data** — RSIBench-Data's shape: only the *data strategy* may change
  (``data_strategy.py`` picks training examples from a fixed, partly mislabelled pool); the
  candidate phase writes its selection, and the fixed training stack runs in the judge phase
  from the judge store, out of the candidate's hands, then scores on hidden points; ``[eval]
  judge_trains = true`` counts that phase's measured time as training. Its templates, the
  strategy's selection format and the judge's strict reading of it are in
  :mod:`evotree.domains.rsibench_data`.

The task: points in the plane labelled by a fixed line with 10 % of the labels flipped at
random, so no classifier beats 0.9 on average (the optimum). Everything is standard library
Python and takes well under a second a run.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from pathlib import Path

from evotree.core.config_template import toml_value
from evotree.domains import write_if_absent
from evotree.domains.line_task import TASK_PY_INLINE
from evotree.domains.rsibench_data import START_ACCURACY as _RSIBENCH_START
from evotree.domains.rsibench_data import materialize_rsibench
from evotree.core.errors import EvotreeError

__all__ = ["PROTOCOLS", "protocol_template"]

PROTOCOLS = ("ai4ai", "rsibench-data", "autoresearch")

#: the shared task: a fixed line, 10 % label noise (so the Bayes accuracy, the optimum, is 0.9)
TASK_PY = TASK_PY_INLINE

#: the judge's scoring, shared by both protocols (it lives under judge/, hidden)
_JUDGE_COMMON = """\
import json, os, sys, tomllib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
from judge_task import points, predict
from evotree.harness import get_recorder

rec = get_recorder()
settings = tomllib.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "task.toml"), "rb"))


def score(model):
    for split in os.environ.get("EVOTREE_JUDGE_SPLITS", "validation").split(","):
        conf = settings["splits"][split]
        for i, (x, y, label) in enumerate(points(conf["seed"], conf["points"])):
            rec.eval_result(split, f"{split}-{i}", 1.0 if predict(model, x, y) == label else 0.0)
"""

AI4AI_JUDGE = (
    _JUDGE_COMMON
    + """
model = json.load(open(os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "model.json")))
score(model)
"""
)

#: the trainer, as the starting algorithm (ai4ai) and as the fixed training stack (rsibench-data)
TRAINER = '''\
def train(data, epochs, lr, seed=0):
    """Logistic regression by plain SGD on (x, y, label) rows; returns {"w": [..], "b": ..}."""
    import math
    import random

    rng = random.Random(seed)
    w, b = [0.0, 0.0], 0.0
    rows = list(data)
    for _ in range(epochs):
        rng.shuffle(rows)
        for x, y, label in rows:
            z = max(-30.0, min(30.0, w[0] * x + w[1] * y + b))
            p = 1.0 / (1.0 + math.exp(-z))
            g = p - label
            w[0] -= lr * g * x
            w[1] -= lr * g * y
            b -= lr * g
    return {"w": w, "b": b}
'''

AI4AI_TRAIN = '''\
"""The starting algorithm (AI4AI-Bench: the candidate improves this file and config.toml only)."""
import json, os, sys, tomllib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # task.py, trainer.py beside it
from evotree.harness import get_recorder
from task import points
from trainer import train

rec = get_recorder()
config = tomllib.load(open("config.toml", "rb"))
data = points(seed=1, n=config["train_points"])
model = train(data, epochs=config["epochs"], lr=config["lr"], seed=int(os.environ.get("EVOTREE_SEED", "0")))


def accuracy(rows):
    w, b = model["w"], model["b"]
    return sum(1 for x, y, label in rows if (w[0] * x + w[1] * y + b > 0) == bool(label)) / len(rows)


# the quick metrics (AI4AI's fast metric): what this script measures on data it may see; the hidden
# judge's score is not shown until the search is finalized
rec.signal(1, train_accuracy=accuracy(data), quick_accuracy=accuracy(points(seed=2, n=200)))
json.dump(model, open("model.json", "w"))
'''

AI4AI_CONFIG = """\
# hyperparameters of the starting algorithm (train.py reads them)
train_points = 40
epochs = 1
lr = 0.01
"""

_AI4AI_TOML = """\
# evotree.toml of an AI4AI-Bench-shaped task (docs/protocols/ai4ai.md): the candidate improves the
# training algorithm; everything else is fixed and judged on hidden points.
[workspace]
domain = "custom"

[train]
command = "python train.py"
# the quick metric (AI4AI's fast metric): train.py's accuracy on points it may see, shown in
# `tree`, `runs` and `show` where the hidden judge's score would be
headline_signal = "quick_accuracy"

[eval]
command = "python judge/eval.py"
judge_paths = ["judge/"]
# the hidden evaluator's figures (validation and held-out) are shown to nobody until `evotree
# finalize`: during the search the agent sees only its own quick metrics (train.py's signals)
hide_until_finalize = true
# finalize retrains the selected version clean (its train phase again, a fresh seed), then judges
# it once on the held-out points, charged to the finalize account, not to the exploration budget
finalize_retrain = true

[eval.normalize]
# AI4AI's scale: 0 an unusable model (chance: 0.5), 0.1 the starting algorithm (its validation
# accuracy, measured: docs/protocols/ai4ai.md), 1.0 the task's optimum (the Bayes accuracy of a
# line with 10 % of the labels flipped: 0.9); a failed formal run scores 0
unusable = 0.5
start = {start}
optimum = 0.9
failed_as_zero = true

[protect]
# patches are measured against the pristine base (v0) and may change only these files
base = "root"
paths = ["task.py", "trainer.py", "judge/"]
editable = ["train.py", "config.toml"]

[budget]
# the exploration budget: the agent's own experiments (every run of the search) end 4 hours after
# init (AI4AI's exploration) or at 1 USD of runs and agent spend; finalize's formal retrain is
# charged to its own account and is never refused by them
max_runs_per_version = 20
usd_per_cpu_hour = 0.05
tree_max_usd = 1.0
tree_max_search_hours = 4.0

[interventions]
# AI4AI's analysis: what kind of change each version makes (evotree diagnose, report --tree).
# Algorithm-level: the learning itself, i.e. code in functions or classes of train.py (a loss, an
# update, a training loop of the candidate's own); a line that only crashes, exits or reads and
# writes files never counts as algorithm-level, nor does a change at train.py's top level.
algorithm = ["train.py:def *", "train.py:class *"]
hyperparameter = ["config.toml"]
"""

#: the commented templates (this one and _AI4AI_TOML) stay literal text (a TOML writer drops
#: comments); each value they take comes through toml_value, escaped by tomli_w
_JUDGE_TOML = """\
# HIDDEN: the judge's points (drawn at init) and, for rsibench-data, the fixed training stack
[splits.validation]
seed = {validation}
points = 400

[splits.heldout]
seed = {heldout}
points = 400

[pool]
seed = 7
size = 400
noise = 0.30

[training]
epochs = 20
lr = 0.05
"""

#: the starting algorithm's validation accuracy (the normalized scale's 0.1), measured over 20
#: judge seeds by tests/test_protocols.py::test_the_start_anchors_are_what_the_start_scores
START_ACCURACY = {"ai4ai": 0.79, "rsibench-data": _RSIBENCH_START}


def _hidden_seeds() -> tuple[int, int]:
    rng = secrets.SystemRandom()
    first = rng.randint(1_000_000, 2_000_000_000)
    return first, first + rng.randint(1, 1_000_000)


def _write(root: Path, files: dict[str, str]) -> list[str]:
    written: list[str] = []
    for rel, text in files.items():
        write_if_absent(root, rel, text, written)
    return written


def materialize_ai4ai(root: Path) -> list[str]:
    """Write the AI4AI-shaped task into ``root`` (never overwriting); the paths written."""
    validation, heldout = _hidden_seeds()
    return _write(
        Path(root),
        {
            "task.py": TASK_PY,
            "trainer.py": TRAINER,
            "train.py": AI4AI_TRAIN,
            "config.toml": AI4AI_CONFIG,
            "evotree.toml": _AI4AI_TOML.format(start=toml_value(START_ACCURACY["ai4ai"])),
            "judge/eval.py": AI4AI_JUDGE,
            "judge/judge_task.py": TASK_PY,
            "judge/task.toml": _JUDGE_TOML.format(
                validation=toml_value(validation), heldout=toml_value(heldout)
            ),
        },
    )


def protocol_template(protocol: str) -> tuple[str, Callable[[Path], Iterable[str]]]:
    """(domain, template) for ``evotree init --protocol P``."""
    if protocol == "ai4ai":
        return "custom", materialize_ai4ai
    if protocol == "rsibench-data":
        return "custom", materialize_rsibench
    if protocol == "autoresearch":
        from evotree.domains.autoresearch.templates import materialize

        return "custom", materialize

    raise EvotreeError(f"unknown protocol {protocol!r}", fix=f"one of: {', '.join(PROTOCOLS)}")
