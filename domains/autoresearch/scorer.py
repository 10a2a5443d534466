"""The candidate's side of the hidden evaluation: ``python -P -m evotree.domains.autoresearch.scorer``.

Started by the judge (:mod:`evotree.domains.autoresearch.judge`) in the candidate's directory,
inside the judge's nested sandbox where it has one (no network, nothing of the judge visible,
nothing kept). It imports the candidate's ``train.py`` (its ``main`` does not run: it is guarded),
loads ``model.npz`` with ``train.load_model`` and answers the judge's questions on its standard
streams: a header (two little-endian uint32: B, C), then, per step, B contexts of C bytes in, and
B × 256 little-endian float32 scores of the next byte out. Only contexts come in, one step at a
time, so a model never sees a byte it is asked to predict. Anything the candidate prints goes to
standard error, never into the answers.
"""

from __future__ import annotations

import os
import struct
import sys

__all__ = ["main"]


def _read_exact(stream: object, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))  # type: ignore[attr-defined]
        if not chunk:
            return data
        data += chunk
    return data


def main() -> int:
    """Serve the candidate model's next-byte scores until the judge closes the input."""
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # the candidate's prints go to standard error
    questions = sys.stdin.buffer
    import numpy as np

    sys.path.insert(0, os.getcwd())
    import train  # the candidate's train.py

    model = train.load_model("model.npz")
    header = _read_exact(questions, 8)
    if len(header) < 8:
        return 0
    batch, context = struct.unpack("<II", header)
    while True:
        raw = _read_exact(questions, batch * context)
        if len(raw) < batch * context:
            return 0
        contexts = np.frombuffer(raw, dtype=np.uint8).reshape(batch, context)
        scores = np.asarray(model.next_logprobs(contexts), dtype="<f4")
        if scores.shape != (batch, 256):
            print(
                f"next_logprobs returned shape {scores.shape}, not ({batch}, 256)", file=sys.stderr
            )
            return 3
        answers.write(scores.tobytes())
        answers.flush()


if __name__ == "__main__":
    sys.exit(main())
