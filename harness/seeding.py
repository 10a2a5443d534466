"""The run's seed, for a phase's code: read it, derive seeds from it, seed every RNG with one.

``evotree run V --seeds N`` runs each version with the seeds ``0 .. N-1`` (``--seed-start`` moves
the range), the same for every version, and gives the seed to both phases as the environment
variable ``EVOTREE_SEED`` (:data:`evotree.harness.layout.ENV_SEED`). It changes a run only where
the phase's code reads it: the bundled domains do (docs/domains/*.md say exactly what is seeded);
a custom domain calls :func:`seed_everything` first thing::

    from evotree.harness import seed_everything

    seed = seed_everything()          # EVOTREE_SEED, or 0 outside `evotree run`

Two versions run at the same seed then draw the same random numbers wherever their code makes
the same draws (common random numbers), and two seeds of one version differ.

What :func:`seed_everything` cannot do: Python's hash randomization (the iteration order of
sets of strings, ``hash(str)``) is fixed when the interpreter starts, from ``PYTHONHASHSEED``;
setting that variable in a running process changes nothing in it, so it is not set here. Start
a process with ``PYTHONHASHSEED=0`` (or any fixed value) to make it reproducible, or do not let
results depend on set order. Libraries with their own generators (a ``numpy.random.Generator``,
``random.Random(...)`` instances, vLLM's engine, CUDA kernels that are not deterministic) are
seeded by whoever creates them: derive their seeds with :func:`derive_seed`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import random
import sys

from evotree.harness.layout import ENV_SEED

__all__ = ["SEED_MAX", "derive_seed", "run_seed", "seed_everything"]

#: The largest seed every generator here accepts (NumPy's legacy global generator: 2**32 - 1).
SEED_MAX = 2**32 - 1


def run_seed(default: int = 0) -> int:
    """The run's seed: ``EVOTREE_SEED`` as an integer, or ``default`` when it is not set (a phase
    run by hand, outside ``evotree run``). Raises :class:`ValueError` for a value that is not a
    non-negative integer."""
    raw = os.environ.get(ENV_SEED, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{ENV_SEED}={raw!r}: expected a non-negative integer") from None
    if value < 0:
        raise ValueError(f"{ENV_SEED}={raw!r}: expected a non-negative integer")
    return value


def derive_seed(*parts: int | str, bits: int = 31) -> int:
    """A seed in ``[0, 2**bits)`` from ``parts`` (a SHA-256 of their text: the same on every
    machine and Python, independent of hash randomization; different parts give independent-looking
    seeds). E.g. ``derive_seed("math", recipe_seed, run_seed)``."""
    if not 1 <= bits <= 64:
        raise ValueError(f"bits: expected 1 to 64, actually: {bits}")
    text = "evotree-seed/v1/" + "/".join(f"{type(p).__name__}:{p}" for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> (64 - bits)


def seed_everything(seed: int | None = None, *, torch: bool = True) -> int:
    """Seed Python's ``random``, NumPy's global generator and (with ``torch``, when torch is
    installed) torch on the CPU and every CUDA device; returns the seed used.

    ``seed`` None: the run's seed (:func:`run_seed`: ``EVOTREE_SEED``, 0 when unset). NumPy and
    torch are seeded only when they can be imported (torch is imported for it: pass
    ``torch=False`` in a process that does not use it, to save its import). ``PYTHONHASHSEED``
    cannot be changed in a running interpreter (see the module doc).
    """
    if seed is None:
        seed = run_seed()
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed: expected an integer, actually: {seed!r}")
    if not 0 <= seed <= SEED_MAX:
        raise ValueError(f"seed: expected 0 <= seed <= {SEED_MAX}, actually: {seed}")
    random.seed(seed)
    if "numpy" in sys.modules or importlib.util.find_spec("numpy") is not None:
        import numpy

        numpy.random.seed(seed)
    if torch and ("torch" in sys.modules or importlib.util.find_spec("torch") is not None):
        import torch as _torch

        _torch.manual_seed(seed)  # the CPU generator and, lazily, every CUDA device's
        if _torch.cuda.is_available():
            _torch.cuda.manual_seed_all(seed)
    return seed
