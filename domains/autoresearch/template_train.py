"""The file you edit (karpathy/autoresearch's rule: train.py only): model, optimizer, training loop.

A byte-level language model in NumPy: the last N_CTX bytes are embedded, concatenated, passed
through one tanh hidden layer and a softmax over 256 bytes; trained with Adam for the fixed time
budget of prepare.py (on prepare.clock), then scored by prepare.evaluate_bpb. It prints the summary the run's metric
is read from (``val_bpb: ...``) and saves model.npz, which the hidden judge scores through
``load_model`` (keep that function and ``Model.next_logprobs`` working).
"""

import os
import resource
import time

import numpy as np

from prepare import (  # noqa: F401 - CONTEXT: the bound N_CTX must respect
    CONTEXT,
    TIME_BUDGET,
    VOCAB_SIZE,
    clock,
    evaluate_bpb,
    get_batch,
    load_split,
    log_softmax,
)

# ---------------------------------------------------------------------------- hyperparameters
N_CTX = 8  # bytes of context the model uses (at most prepare.CONTEXT)
EMBED = 16  # embedding width per byte
HIDDEN = 128  # hidden layer width
LR = 0.0002  # Adam learning rate
BATCH = 64  # sequences per step
BETA1, BETA2 = 0.9, 0.999
INIT_SCALE = 1.0  # multiplies the 1/sqrt(fan-in) initialization


class Model:
    def __init__(self, params):
        self.params = params

    @classmethod
    def create(cls, rng):
        fan_in = N_CTX * EMBED
        return cls(
            {
                "embed": rng.normal(0, 1.0, (VOCAB_SIZE, EMBED)),
                "w1": rng.normal(0, INIT_SCALE / np.sqrt(fan_in), (fan_in, HIDDEN)),
                "b1": np.zeros(HIDDEN),
                "w2": rng.normal(0, INIT_SCALE / np.sqrt(HIDDEN), (HIDDEN, VOCAB_SIZE)),
                "b2": np.zeros(VOCAB_SIZE),
            }
        )

    def forward(self, contexts):
        p = self.params
        x = contexts[:, -N_CTX:]
        e = p["embed"][x].reshape(len(x), -1)
        h = np.tanh(e @ p["w1"] + p["b1"])
        return (x, e, h), h @ p["w2"] + p["b2"]

    def next_logprobs(self, contexts):
        """Log-probabilities of the byte after each context ([B, CONTEXT] uint8 -> [B, 256])."""
        return log_softmax(self.forward(np.asarray(contexts, dtype=np.int64))[1])

    def loss_and_grads(self, contexts, targets):
        p = self.params
        (x, e, h), logits = self.forward(contexts)
        logp = log_softmax(logits)
        n = len(targets)
        loss = -logp[np.arange(n), targets].mean()
        d_logits = np.exp(logp)
        d_logits[np.arange(n), targets] -= 1.0
        d_logits /= n
        grads = {"w2": h.T @ d_logits, "b2": d_logits.sum(0)}
        d_h = (d_logits @ p["w2"].T) * (1.0 - h * h)
        grads["w1"], grads["b1"] = e.T @ d_h, d_h.sum(0)
        d_e = (d_h @ p["w1"].T).reshape(n, N_CTX, EMBED)
        grads["embed"] = np.zeros_like(p["embed"])
        np.add.at(grads["embed"], x, d_e)
        return loss, grads

    def save(self, path):
        np.savez(path, **self.params)


def load_model(path):
    """The trained model from ``save`` (the hidden judge calls this)."""
    with np.load(path) as saved:
        return Model({k: saved[k] for k in saved.files})


def main():
    started = time.time()
    seed = int(os.environ.get("EVOTREE_SEED", "0"))
    rng = np.random.default_rng(seed)
    train = load_split("train")
    model = Model.create(rng)
    m = {k: np.zeros_like(v) for k, v in model.params.items()}
    v = {k: np.zeros_like(v) for k, v in model.params.items()}
    step, training_seconds, loss = 0, 0.0, float("nan")
    while training_seconds < TIME_BUDGET:
        t0 = clock()
        contexts, targets = get_batch(train, BATCH, rng)
        loss, grads = model.loss_and_grads(contexts, targets)
        step += 1
        for k, g in grads.items():
            m[k] = BETA1 * m[k] + (1 - BETA1) * g
            v[k] = BETA2 * v[k] + (1 - BETA2) * g * g
            m_hat, v_hat = m[k] / (1 - BETA1**step), v[k] / (1 - BETA2**step)
            model.params[k] -= LR * m_hat / (np.sqrt(v_hat) + 1e-8)
        training_seconds += clock() - t0
        if step % 500 == 0:
            print(f"step {step:6d} | loss {loss:.4f} | {training_seconds:5.1f}s", flush=True)
    val_bpb = evaluate_bpb(model.next_logprobs)
    model.save("model.npz")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    params = sum(p.size for p in model.params.values())
    print("---")
    print(f"val_bpb:          {val_bpb:.6f}")
    print(f"training_seconds: {training_seconds:.1f}")
    print(f"total_seconds:    {time.time() - started:.1f}")
    print(f"peak_memory_mb:   {peak_mb:.1f}")
    print(f"num_steps:        {step}")
    print(f"num_params_M:     {params / 1e6:.3f}")
    print(f"context:          {N_CTX}")


if __name__ == "__main__":
    main()
