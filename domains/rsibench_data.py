"""RSIBench-Data's protocol template: ``evotree init --protocol rsibench-data``
(docs/protocols/rsibench-data.md).

Only the *data strategy* may change. ``data_strategy.py`` (the one editable file) writes
``selection.json``: what the fixed training stack is trained on and the few training settings a
strategy may set. The judge phase, from the judge store and out of the candidate's hands,
validates that file strictly (:data:`JUDGE_DATA`), builds the examples from its own copy of the
pool and the pool's generators (so a label is the generator's unless the strategy relabels it,
openly), trains (:data:`TRAINER`), and scores the model on hidden points. A selection the judge
refuses fails the run before anything is trained.

``selection.json``, format 2: an ordered list of examples, each a pool index or a point
synthesized by a named generator of the pool with its parameters, with an optional ``label``
(relabel), ``weight`` and ``repeat``; the list's order is the training order (unless the
strategy asks for shuffling); and a ``training`` object with whitelisted keys in bounds
(:data:`TRAINING_SETTINGS`). The first format, ``{"indices": [...]}``, still works as before:
the distinct in-range indices in increasing order, shuffled every epoch, default settings.

The task: points in [-1, 1]^2 labelled by a fixed line with 10 % of the labels flipped (so no
classifier beats 0.9 on average); the pool is 400 such points with 30 % flipped. Standard
library Python only; a run takes well under a second.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from evotree.core.config_template import toml_value
from evotree.domains import write_if_absent
from evotree.domains.line_task import TASK_PY_WITH_LINE

__all__ = [
    "MAX_EXAMPLES",
    "MIN_EXAMPLES",
    "START_ACCURACY",
    "TRAINING_SETTINGS",
    "materialize_rsibench",
]

#: the starting strategy's (first 60, shuffled) mean validation accuracy: the normalized scale's
#: 0.1, measured by tests/test_protocol_rsibench.py::test_the_start_anchor_is_what_the_start_scores
START_ACCURACY = 0.73

#: bounds of a selection: examples after repeats (the training bill stays bounded), per item
MIN_EXAMPLES = 10
MAX_EXAMPLES = 2000
MAX_REPEAT = 20
MAX_WEIGHT = 10.0
MAX_SELECTION_BYTES = 4 * 1024 * 1024

#: the whitelisted training settings: name -> (type, lowest, highest); the defaults are the
#: judge's (judge/task.toml [training]); shuffle defaults to false in format 2 (the list's order
#: is the training order) and to true in the first format (as it always did)
TRAINING_SETTINGS: dict[str, tuple[str, float | None, float | None]] = {
    "epochs": ("int", 1, 50),
    "lr": ("float", 0.0001, 1.0),
    "batch_size": ("int", 1, 64),
    "shuffle": ("bool", None, None),
}

#: the fixed task (protected), shared by the candidate (task.py) and the judge (judge_task.py)
TASK_PY = TASK_PY_WITH_LINE

#: the pool and its generators (protected); the judge runs its own copy (judge/judge_pool.py)
POOL_PY = '''\
"""The pool a data strategy draws on (protected: a candidate cannot change it): 400 points with
30 % of their labels flipped, and the generators the judge synthesizes examples from.

A strategy names a generator and its parameters in selection.json; the judge calls its own copy
of this file, so an example's label is the generator's (a strategy may relabel what it submits,
openly, with "label"). GENERATORS: name -> (function, {parameter: kind}); kinds: "seed" (an
integer in [0, 2**31)), "coordinate" (a finite number in [-1, 1])."""
import random

from task import line, points

POOL = points(seed=7, n=400, noise=0.30)


def sample(seed):
    """One more point drawn like the pool's (the same 30 % of labels flipped), from its own seed."""
    return points(seed=f"sample:{seed}", n=1, noise=0.30)[0]


def query(x, y):
    """The point (x, y) with the task's label, 10 % of labels flipped: the same answer every time
    for the same point (asking again does not average the noise away)."""
    x, y = float(x), float(y)
    flipped = random.Random(f"query:{x!r}:{y!r}").random() < 0.10
    return (x, y, 1 - line(x, y) if flipped else line(x, y))


GENERATORS = {"sample": (sample, {"seed": "seed"}),
              "query": (query, {"x": "coordinate", "y": "coordinate"})}
'''

#: the starting data strategy (the one editable file): the first 60 examples, shuffled
STRATEGY_PY = '''\
"""The data strategy (RSIBench-Data: the only file a candidate may change). It sees the pool
(pool.py: points with some labels flipped, and the generators) and writes selection.json; the
fixed training then runs in the judge. Starting strategy: the first 60 examples, shuffled.

selection.json (format 2), checked strictly by the judge (anything else fails the run, untrained):
  {"format": 2,
   "examples": [ITEM, ...],          # the training order (unless training.shuffle is true)
   "training": {SETTING: VALUE}}     # optional; only these keys, in these bounds:
      epochs 1..50 (20), lr 0.0001..1.0 (0.05), batch_size 1..64 (1), shuffle true/false (false)
  ITEM: {"index": I}                               a pool example, 0 <= I < len(POOL)
     or {"generator": NAME, "params": {...}}       a point from pool.GENERATORS[NAME](**params)
     with optional "label": 0 or 1 (relabel), "weight": 0 < w <= 10 (1), "repeat": 1..20 (1;
     the copies follow each other)
  Between 10 and 2000 examples after repeats. The first format, {"indices": [...]}, still works.
"""
import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # pool.py, task.py beside it
from pool import POOL

json.dump({"format": 2, "examples": [{"index": i} for i in range(60)],
           "training": {"epochs": 20, "lr": 0.05, "shuffle": True}}, open("selection.json", "w"))
'''

#: the judge's strict reading of selection.json (hidden, protected: judge/judge_data.py)
JUDGE_DATA = (
    f'''\
"""The judge's reading of selection.json: validated strictly, assembled from the judge's own pool
and generators. Any fault raises SelectionError before anything is trained."""
import json, math, os

MIN_EXAMPLES, MAX_EXAMPLES, MAX_REPEAT = {MIN_EXAMPLES}, {MAX_EXAMPLES}, {MAX_REPEAT}
MAX_WEIGHT, MAX_BYTES = {MAX_WEIGHT!r}, {MAX_SELECTION_BYTES}
TRAINING = {TRAINING_SETTINGS!r}
ITEM_KEYS = ("index", "generator", "params", "label", "weight", "repeat")
'''
    + '''

class SelectionError(ValueError):
    """selection.json is refused: the run fails, nothing is trained."""


def _strict_object(pairs):
    out = {}
    for key, value in pairs:
        if key in out:
            raise SelectionError(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name):
    raise SelectionError(f"{name} is not a number")


def _int(where, value, low, high):
    if type(value) is not int or not low <= value <= high:
        raise SelectionError(f"{where} must be an integer in [{low}, {high}], not {value!r}")
    return value


def _number(where, value, low, high, *, open_low=False):
    if type(value) not in (int, float) or not math.isfinite(value) \\
            or value < low or value > high or (open_low and value == low):
        bound = "(" if open_low else "["
        raise SelectionError(f"{where} must be a finite number in {bound}{low}, {high}], "
                             f"not {value!r}")
    return float(value)


def _keys(where, obj, allowed):
    if not isinstance(obj, dict):
        raise SelectionError(f"{where} must be an object, not {type(obj).__name__}")
    unknown = sorted(set(obj) - set(allowed))
    if unknown:
        raise SelectionError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} "
                             f"(allowed: {', '.join(allowed)})")


def training_settings(obj, defaults):
    """The whitelisted settings, checked and completed with the judge's defaults."""
    _keys("training", obj, tuple(TRAINING))
    out = dict(defaults)
    for key, value in obj.items():
        kind, low, high = TRAINING[key]
        where = f"training.{key}"
        if kind == "bool":
            if type(value) is not bool:
                raise SelectionError(f"{where} must be true or false, not {value!r}")
            out[key] = value
        elif kind == "int":
            out[key] = _int(where, value, low, high)
        else:
            out[key] = _number(where, value, low, high)
    return out


def _example(where, item, pool, generators):
    _keys(where, item, ITEM_KEYS)
    if ("index" in item) == ("generator" in item):
        raise SelectionError(f"{where} must name exactly one of index, generator")
    if "index" in item:
        if "params" in item:
            raise SelectionError(f"{where}: params belong to a generator")
        x, y, label = pool[_int(f"{where}.index", item["index"], 0, len(pool) - 1)]
    else:
        name = item["generator"]
        if not isinstance(name, str) or name not in generators:
            raise SelectionError(f"{where}.generator {name!r} is not a generator of the pool "
                                 f"(the pool's: {', '.join(sorted(generators))})")
        function, spec = generators[name]
        params = item.get("params", {})
        _keys(f"{where}.params", params, tuple(spec))
        missing = sorted(set(spec) - set(params))
        if missing:
            raise SelectionError(f"{where}.params: missing {', '.join(missing)} for {name}")
        args = {key: _int(f"{where}.params.{key}", params[key], 0, 2 ** 31 - 1) if kind == "seed"
                else _number(f"{where}.params.{key}", params[key], -1.0, 1.0)
                for key, kind in spec.items()}
        x, y, label = function(**args)
    if "label" in item:
        if type(item["label"]) is not int or item["label"] not in (0, 1):
            raise SelectionError(f"{where}.label must be 0 or 1, not {item['label']!r}")
        label = item["label"]
    weight = _number(f"{where}.weight", item.get("weight", 1.0), 0.0, MAX_WEIGHT, open_low=True)
    repeat = _int(f"{where}.repeat", item.get("repeat", 1), 1, MAX_REPEAT)
    return (x, y, label, weight), repeat


def read(path):
    """selection.json's text: a regular file (never a link), at most MAX_BYTES of UTF-8."""
    if os.path.islink(path) or not os.path.isfile(path):
        raise SelectionError("selection.json is missing or not a regular file")
    with open(path, "rb") as f:
        data = f.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise SelectionError(f"selection.json is over {MAX_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SelectionError("selection.json is not UTF-8 text") from None


def parse(text):
    """selection.json's text as JSON, strictly: no NaN or Infinity, no duplicate keys."""
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise SelectionError(f"selection.json is over {MAX_BYTES} bytes")
    try:
        return json.loads(text, object_pairs_hook=_strict_object, parse_constant=_no_constant)
    except json.JSONDecodeError as e:
        raise SelectionError(f"selection.json is not JSON: {e}") from None
    except RecursionError:
        raise SelectionError("selection.json is nested too deeply") from None


def assemble(data, pool, generators, defaults):
    """(rows, settings): the training rows (x, y, label, weight) in training order and the
    training settings, or SelectionError. generators: name -> (function, {param: kind})."""
    if isinstance(data, dict) and "format" not in data:  # the first format: {"indices": [...]}
        _keys("selection", data, ("indices",))
        indices = data.get("indices")
        if not isinstance(indices, list) or any(type(i) is not int for i in indices):
            raise SelectionError("indices must be a list of integers")
        chosen = sorted({i for i in indices if 0 <= i < len(pool)})
        rows = [(*pool[i], 1.0) for i in chosen]
        settings = dict(defaults, shuffle=True)
    else:
        _keys("selection", data, ("format", "examples", "training"))
        if data.get("format") != 2 or type(data.get("format")) is not int:
            raise SelectionError(f"format must be 2, not {data.get('format')!r}")
        examples = data.get("examples")
        if not isinstance(examples, list):
            raise SelectionError("examples must be a list")
        if len(examples) > MAX_EXAMPLES:
            raise SelectionError(f"{len(examples)} items: at most {MAX_EXAMPLES} examples")
        settings = training_settings(data.get("training", {}), dict(defaults, shuffle=False))
        rows = []
        for n, item in enumerate(examples):
            row, repeat = _example(f"examples[{n}]", item, pool, generators)
            rows.extend([row] * repeat)
            if len(rows) > MAX_EXAMPLES:
                raise SelectionError(f"more than {MAX_EXAMPLES} examples after repeats")
    if len(rows) < MIN_EXAMPLES:
        raise SelectionError(f"{len(rows)} examples: at least {MIN_EXAMPLES}")
    return rows, settings
'''
)

#: the fixed training stack (hidden, protected: judge/judge_trainer.py)
TRAINER = '''\
def train(rows, epochs, lr, seed=0, batch_size=1, shuffle=True):
    """Logistic regression by SGD on (x, y, label, weight) rows, in the rows' order unless
    shuffle; a batch's update is the mean of its examples' weighted gradients. With batch size
    1, weights 1 and shuffling it is the ai4ai template's trainer step for step."""
    import math
    import random

    rng = random.Random(seed)
    w, b = [0.0, 0.0], 0.0
    rows = list(rows)
    for _ in range(epochs):
        if shuffle:
            rng.shuffle(rows)
        for start in range(0, len(rows), batch_size):
            batch = rows[start:start + batch_size]
            step_x = step_y = step_b = 0.0
            for x, y, label, weight in batch:
                z = max(-30.0, min(30.0, w[0] * x + w[1] * y + b))
                g = (1.0 / (1.0 + math.exp(-z)) - label) * weight
                step_x += lr * g * x
                step_y += lr * g * y
                step_b += lr * g
            w[0] -= step_x / len(batch)
            w[1] -= step_y / len(batch)
            b -= step_b / len(batch)
    return {"w": w, "b": b}
'''

#: the judge (hidden): the strict reading, the fixed training, the score on hidden points
JUDGE = """\
import json, os, sys, time, tomllib
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
from judge_data import SelectionError, assemble, parse, read
from judge_pool import GENERATORS, POOL
from judge_task import points, predict
from judge_trainer import train
from evotree.harness import get_recorder

rec = get_recorder()
here = os.path.dirname(os.path.abspath(__file__))
settings = tomllib.load(open(os.path.join(here, "task.toml"), "rb"))

# the candidate chose the data and the whitelisted settings; the judge checks them, then trains
selection = os.path.join(os.environ["EVOTREE_CANDIDATE_DIR"], "selection.json")
try:
    rows, training = assemble(parse(read(selection)), POOL, GENERATORS, settings["training"])
except (OSError, SelectionError) as e:
    sys.exit(f"selection.json refused, nothing trained: {e}")
started = time.process_time()
seed = int(os.environ.get("EVOTREE_SEED", "0"))
model = train(rows, training["epochs"], training["lr"], seed=seed,
              batch_size=training["batch_size"], shuffle=training["shuffle"])
rec.signal(0, **{"judge/train_cpu_seconds": time.process_time() - started,
                 "judge/examples": len(rows)})
for split in os.environ.get("EVOTREE_JUDGE_SPLITS", "validation").split(","):
    conf = settings["splits"][split]
    for i, (x, y, label) in enumerate(points(conf["seed"], conf["points"])):
        correct = predict(model, x, y) == label
        rec.eval_result(split, f"{split}-{i}", 1.0 if correct else 0.0)
"""

#: the commented templates stay literal text (a TOML writer drops comments); each value they
#: take comes through toml_value, escaped by tomli_w
_TOML = """\
# evotree.toml of an RSIBench-Data-shaped task (docs/protocols/rsibench-data.md): only the data
# strategy may change; the fixed training stack runs in the judge phase, from the judge store.
[workspace]
domain = "custom"

[train]
# the candidate phase: the data strategy writes selection.json
command = "python data_strategy.py"

[eval]
# the strict reading of selection.json, the fixed training (judge/judge_trainer.py) on it, the
# hidden score
command = "python judge/eval.py"
judge_paths = ["judge/"]
# the judge phase trains: its wall and CPU time, measured by evotree, count as training
judge_trains = true

[eval.normalize]
unusable = 0.5
start = {start}
optimum = 0.9
failed_as_zero = true

[protect]
base = "root"
paths = ["task.py", "pool.py", "judge/"]
editable = ["data_strategy.py"]

[budget]
# RSIBench's 16 hours of wall clock per setting, from init; a money cap (runs and agent spend)
max_runs_per_version = 20
usd_per_cpu_hour = 0.05
tree_max_usd = 1.0
tree_max_search_hours = 16.0
"""

_JUDGE_TOML = """\
# HIDDEN: the judge's points (drawn at init) and the fixed training's defaults
[splits.validation]
seed = {validation}
points = 400

[splits.heldout]
seed = {heldout}
points = 400

[training]
# the defaults of the whitelisted settings a selection may set (judge/judge_data.py: bounds)
epochs = 20
lr = 0.05
batch_size = 1
"""


def materialize_rsibench(root: Path) -> list[str]:
    """Write the RSIBench-Data-shaped task into ``root`` (never overwriting); the paths written."""
    rng = secrets.SystemRandom()
    validation = rng.randint(1_000_000, 2_000_000_000)
    heldout = validation + rng.randint(1, 1_000_000)
    files = {
        "task.py": TASK_PY,
        "pool.py": POOL_PY,
        "data_strategy.py": STRATEGY_PY,
        "evotree.toml": _TOML.format(start=toml_value(START_ACCURACY)),
        "judge/eval.py": JUDGE,
        "judge/judge_task.py": TASK_PY,
        "judge/judge_trainer.py": TRAINER,
        "judge/judge_pool.py": POOL_PY.replace("from task import", "from judge_task import"),
        "judge/judge_data.py": JUDGE_DATA,
        "judge/task.toml": _JUDGE_TOML.format(
            validation=toml_value(validation), heldout=toml_value(heldout)
        ),
    }
    written: list[str] = []
    for rel, text in files.items():
        write_if_absent(Path(root), rel, text, written)
    return written
