"""The judge of an autoresearch run: ``python -P -m evotree.domains.autoresearch.judge``.

Two kinds of evaluation, chosen by the champion's ``[eval] command`` (protected, like the judge):

* **summary** (karpathy/autoresearch's own contract; the default): the metric is read from the
  summary lines the train phase wrote to ``run.log`` (``val_bpb: 0.9979``). The candidate's own
  code computed it, as in autoresearch: it is what the agent sees too.
* **hidden** (``--hidden DIR``, the worked example): the decisive evaluation is the judge's own.
  ``DIR/<split>.txt`` (validation, heldout) live in the judge store — never in a candidate's tree,
  its run directory or the agent's view. The candidate's model (``train.load_model("model.npz")``)
  is asked, through :mod:`evotree.domains.autoresearch.scorer` in the judge's nested sandbox, for the
  next byte after contexts of the hidden text, one step at a time (it never sees a byte before it
  has scored it); the judge normalizes the scores itself and computes bits per byte. Each of
  ``--streams`` disjoint stretches of the text is one task, so the score gate compares versions
  task by task.

evotree's scores are higher-is-better: with ``--direction min`` (val_bpb) the recorded score is the
metric's negative; the metric itself is recorded as the signal ``judge/<split>_<metric>``.
"""

from __future__ import annotations

import argparse
import math
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

from evotree.domains.autoresearch.summary import DIRECTIONS, metric_value, parse_summary
from evotree.harness.sandbox_spec import ENV_POLICY_SANDBOX
from evotree.harness.sandbox_nested import policy_sandbox_argv
from evotree.harness import get_recorder

__all__ = ["hidden_bits_per_byte", "main", "stream_layout"]


def stream_layout(size: int, streams: int, context: int, steps: int) -> tuple[list[int], int]:
    """Start positions of ``streams`` scored stretches of a text of ``size`` bytes, and their length.

    Stretch b scores positions [s_b, s_b + L) from contexts text[p - context : p]; consecutive
    stretches are ``context`` bytes apart, so no context of one stretch holds a byte another
    stretch is scored on at the same or a later step.
    """
    length = min(steps, (size - context) // streams - context)
    if length < 1:
        raise ValueError(
            f"a hidden text of {size} bytes is too short for {streams} streams of context {context}"
        )
    return [context + b * (length + context) for b in range(streams)], length


def _scorer_command(candidate: Path) -> tuple[list[str], Path | None]:
    """The scorer's argv and working directory: nested-sandboxed in a sandboxed judge."""
    argv = [sys.executable, "-P", "-m", "evotree.domains.autoresearch.scorer"]
    import json

    raw = os.environ.get(ENV_POLICY_SANDBOX)
    if raw is None:  # a judge run without evotree's sandbox ([sandbox] mode = "off")
        return argv, candidate
    try:
        spec = json.loads(raw)
    except ValueError:
        spec = None
    if not isinstance(spec, dict):  # fail closed: policy_sandbox_argv refuses a spec with an error
        spec = {"error": f"${ENV_POLICY_SANDBOX} is not a JSON object"}

    return policy_sandbox_argv(spec, candidate, argv), None


def hidden_bits_per_byte(
    text: bytes, candidate: Path, *, streams: int, context: int, steps: int
) -> list[float]:
    """Bits per byte of the candidate's model on each stream of ``text`` (see :func:`stream_layout`)."""
    import numpy as np

    starts, length = stream_layout(len(text), streams, context, steps)
    data = np.frombuffer(text, dtype=np.uint8)
    argv, cwd = _scorer_command(candidate)
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOTREE_")}
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    nats = np.zeros(streams)
    try:
        proc.stdin.write(struct.pack("<II", streams, context))
        offsets = np.arange(context)
        for t in range(length):
            at = np.array(starts) + t
            proc.stdin.write(data[at[:, None] - context + offsets[None, :]].tobytes())
            proc.stdin.flush()
            raw = proc.stdout.read(streams * 256 * 4)
            if len(raw) < streams * 256 * 4:
                raise RuntimeError(
                    f"the candidate's model stopped answering at step {t} (exit {proc.poll()})"
                )
            scores = np.frombuffer(raw, dtype="<f4").astype(np.float64).reshape(streams, 256)
            if not np.isfinite(scores).all():
                raise RuntimeError(f"the candidate's model gave non-finite scores at step {t}")
            shifted = scores - scores.max(axis=1, keepdims=True)
            logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
            nats -= logp[np.arange(streams), data[at]]
        proc.stdin.close()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return [float(n / length / math.log(2)) for n in nats]


def main(argv: list[str] | None = None) -> int:
    """Score the candidate on the requested splits (``$EVOTREE_JUDGE_SPLITS``); the exit status."""
    parser = argparse.ArgumentParser(prog="evotree.domains.autoresearch.judge")
    parser.add_argument(
        "--metric", default="val_bpb", help="the summary line (and the hidden metric's name)"
    )
    parser.add_argument(
        "--direction", choices=DIRECTIONS, default="min", help="min: lower is better (val_bpb)"
    )
    parser.add_argument(
        "--log", default="run.log", help="the train phase's log, in the candidate's directory"
    )
    parser.add_argument(
        "--hidden",
        default=None,
        metavar="DIR",
        help="judge-store folder with <split>.txt: the judge's own evaluation on hidden text",
    )
    parser.add_argument(
        "--streams", type=int, default=20, help="hidden evaluation: tasks (disjoint stretches)"
    )
    parser.add_argument(
        "--context", type=int, default=32, help="hidden evaluation: bytes of context per question"
    )
    parser.add_argument(
        "--steps", type=int, default=512, help="hidden evaluation: bytes scored per stream"
    )
    args = parser.parse_args(argv)

    rec = get_recorder()
    sign = -1.0 if args.direction == "min" else 1.0
    candidate = Path(os.environ["EVOTREE_CANDIDATE_DIR"])
    splits = [s for s in os.environ.get("EVOTREE_JUDGE_SPLITS", "validation").split(",") if s]
    if args.hidden is None:
        log = candidate / args.log
        if not log.is_file():
            print(
                f"no {args.log} in the candidate's directory: the train phase wrote none",
                file=sys.stderr,
            )
            return 1
        value = metric_value(
            parse_summary(log.read_text(encoding="utf-8", errors="replace")), args.metric
        )
        if value is None:
            print(f"no finite '{args.metric}:' line in {args.log}: a crash", file=sys.stderr)
            return 1
        for split in splits:
            if split != "validation":  # the summary has one number: no held-out part to score
                print(f"the summary has no {split} part: {split} is not scored", file=sys.stderr)
                continue
            rec.eval_result(split, args.metric, sign * value)
            rec.signal(0, **{f"judge/{split}_{args.metric}": value})
        return 0
    found: dict[str, Any] = {}
    for split in splits:
        text = (Path(args.hidden) / f"{split}.txt").read_bytes()
        found[split] = hidden_bits_per_byte(
            text, candidate, streams=args.streams, context=args.context, steps=args.steps
        )
    for split, values in found.items():
        for b, value in enumerate(values):
            rec.eval_result(split, f"{split}-{b:02d}", sign * value)
        rec.signal(0, **{f"judge/{split}_{args.metric}": sum(values) / len(values)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
