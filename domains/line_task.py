"""The fixed line task of the ai4ai and rsibench-data protocols: the text of the task.py (and the
judge's judge_task.py) each writes.

The two protocols write different texts of the same task (rsibench-data's names the clean label
``line()``, which its pool's generators import; ai4ai's computes it inline in ``points``), and a
workspace made before keeps its file: both texts stay byte for byte what they were
(tests/test_line_task.py pins their sha256).
"""

from __future__ import annotations

__all__ = ["TASK_PY_INLINE", "TASK_PY_WITH_LINE"]

_HEAD = '''\
"""The fixed task (protected: a candidate cannot change it): points in [-1, 1]^2 labelled by the
line 0.8 x - 0.6 y + 0.1 > 0, with a share of the labels flipped at random."""
import random

NOISE = 0.10


'''

_LINE = '''\
def line(x, y):
    """The clean label of (x, y)."""
    return 1 if 0.8 * x - 0.6 * y + 0.1 > 0 else 0


'''

_POINTS = """\
def points(seed, n, noise=NOISE):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        x, y = rng.uniform(-1, 1), rng.uniform(-1, 1)
        label = {label}
        if rng.random() < noise:
            label = 1 - label
        out.append((x, y, label))
    return out


def predict(model, x, y):
    w = model["w"]
    return 1 if w[0] * x + w[1] * y + model["b"] > 0 else 0
"""

#: ai4ai's task.py: the clean label computed inline
TASK_PY_INLINE = _HEAD + _POINTS.format(label="1 if 0.8 * x - 0.6 * y + 0.1 > 0 else 0")
#: rsibench-data's task.py: the clean label as ``line(x, y)`` (the pool's generators use it)
TASK_PY_WITH_LINE = _HEAD + _LINE + _POINTS.format(label="line(x, y)")
