"""Fixed (protected: a candidate cannot change it): constants, data loading and the evaluation.

The worked example of ``evotree init --protocol autoresearch``, in the shape of karpathy/autoresearch's
prepare.py: it owns the time budget, the data and the metric (validation bits per byte); train.py
imports them. The data cache is data/ beside this file (train.txt, val.txt: generated prose).
"""

import os
import time

import numpy as np

#: seconds of training per run (the fixed time budget; evotree's runner sets it from evotree.toml)
TIME_BUDGET = float(os.environ.get("AUTORESEARCH_TIME_BUDGET", "30"))
#: the clock the budget is counted on: this process's CPU seconds (one thread). On a dedicated
#: machine it is the wall clock; on a shared CPU the wall clock gave a run 3x fewer steps when the
#: machine was busy, which is not a property of the recipe (docs/protocols/autoresearch.md)
clock = time.process_time
#: bytes of context a model is given at evaluation (it may use fewer)
CONTEXT = 32
#: a byte-level model: 256 symbols, so bits per token are bits per byte
VOCAB_SIZE = 256
#: validation positions scored by evaluate_bpb
EVAL_POSITIONS = 8192
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def load_split(split):
    """The bytes of data/<split>.txt ("train" or "val") as a uint8 array."""
    with open(os.path.join(DATA_DIR, f"{split}.txt"), "rb") as handle:
        return np.frombuffer(handle.read(), dtype=np.uint8)


def get_batch(data, batch_size, rng):
    """(contexts [B, CONTEXT], next bytes [B]) drawn at random positions of ``data``."""
    starts = rng.integers(0, len(data) - CONTEXT - 1, size=batch_size)
    index = starts[:, None] + np.arange(CONTEXT + 1)[None, :]
    rows = data[index]
    return rows[:, :CONTEXT], rows[:, CONTEXT]


def log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def evaluate_bpb(next_logprobs, batch_size=512):
    """Validation bits per byte of a model: ``next_logprobs(contexts [B, CONTEXT] uint8) -> [B, 256]``
    scores of the byte after each context (normalized here, so any finite scores are a distribution)."""
    data = load_split("val")
    positions = np.linspace(CONTEXT, len(data) - 1, EVAL_POSITIONS).astype(np.int64)
    total = 0.0
    for i in range(0, len(positions), batch_size):
        at = positions[i : i + batch_size]
        contexts = data[at[:, None] - CONTEXT + np.arange(CONTEXT)[None, :]]
        scores = log_softmax(np.asarray(next_logprobs(contexts), dtype=np.float64))
        if scores.shape != (len(at), VOCAB_SIZE) or not np.isfinite(scores).all():
            raise ValueError(
                f"next_logprobs returned {scores.shape}, not finite scores of shape ({len(at)}, 256)"
            )
        total += -scores[np.arange(len(at)), data[at]].sum()
    return total / len(positions) / np.log(2)
