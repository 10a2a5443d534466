"""The recorder SDK: what training and judging code calls to leave evidence.

Inside ``evotree run`` the harness sets the run's environment and::

    from evotree.harness.recorder import get_recorder
    rec = get_recorder()
    rec.signal(step, loss=0.3, reward_mean=0.5)
    rec.rollout_group(step, group_id="g7", task_id="add-3", rewards=[1, 0, 1, 1])
    rec.eval_result("validation", "add-3", 1.0)      # eval (judge) phase only

Rows go to ``evidence/<phase>/<kind>.jsonl`` one line per record, written with one ``write``
and flushed at once, so a crash (even SIGKILL) loses at most the line being written.
Non-finite numbers (NaN, ±inf) are never dropped: the row is kept with ``value``/``reward``/
``score`` null and ``nonfinite`` true, and counted in :attr:`Recorder.nonfinite`.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from evotree.core.errors import EvotreeError
from evotree.harness.layout import (
    ENV_EVIDENCE_DIR,
    ENV_MAX_STEPS,
    ENV_PHASE,
    ENV_RUN_ID,
    HIDDEN_SPLITS,
    PHASES,
)

__all__ = ["Recorder", "RecorderError", "get_recorder"]

#: Built once: ``json.dumps`` with non-default options builds a new encoder per call.
_ENCODER = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


class RecorderError(EvotreeError):
    """Misuse of the recorder: outside a run, a hidden split from the train phase, bad arguments."""

    exit_code = 13
    code = "recorder_error"


def _finite(value: Any, what: str) -> tuple[float | None, bool]:
    """(value as float or None, is_nonfinite); a clear error for non-numbers."""
    if isinstance(value, bool) or value is None:
        raise RecorderError(f"{what}: expected a number, actually: {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise RecorderError(f"{what}: expected a number, actually: {value!r}") from None
    if math.isfinite(number):
        return number, False
    return None, True


class Recorder:
    """Appends evidence rows for one phase of one run."""

    def __init__(
        self,
        evidence_dir: str | os.PathLike[str],
        *,
        run_id: str,
        phase: str,
        max_steps: int | None = None,
    ) -> None:
        if phase not in PHASES:
            raise RecorderError(f"phase: expected one of {', '.join(PHASES)}, actually: {phase!r}")
        self.evidence_dir = Path(evidence_dir)
        try:
            self.evidence_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RecorderError(
                f"cannot create the evidence directory {self.evidence_dir}: {exc.strerror}",
                fix="check the permissions and free space of the runs directory",
            ) from None
        self.run_id = run_id
        self.phase = phase
        self.max_steps = max_steps
        self.nonfinite = 0
        self.rows = {"signals": 0, "rollouts": 0, "evals": 0}
        self._files: dict[str, TextIO] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Recorder:
        """The recorder of the run this process belongs to (set up by ``evotree run``)."""
        env = os.environ if environ is None else environ
        evidence = env.get(ENV_EVIDENCE_DIR)
        if not evidence:
            raise RecorderError(
                f"no evotree run: {ENV_EVIDENCE_DIR} is not set, so there is nowhere to record",
                fix="start this script through `evotree run VERSION`, or create "
                "Recorder(path, run_id=..., phase='train') yourself for a local experiment",
            )
        max_steps = env.get(ENV_MAX_STEPS)
        return cls(
            evidence,
            run_id=env.get(ENV_RUN_ID, "local"),
            phase=env.get(ENV_PHASE, "train"),
            max_steps=int(max_steps) if max_steps else None,
        )

    # ------------------------------------------------------------------ writing
    def _write(self, kind: str, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        now = time.time()
        encode = _ENCODER.encode
        text = "".join(
            encode({"run_id": self.run_id, "phase": self.phase, **row, "ts": now}) + "\n"
            for row in rows
        )
        with self._lock:
            handle = self._files.get(kind)
            if handle is None:
                try:
                    handle = open(self.evidence_dir / f"{kind}.jsonl", "a", encoding="utf-8")
                except OSError as exc:
                    raise RecorderError(
                        f"cannot write evidence to {self.evidence_dir / (kind + '.jsonl')}: {exc.strerror}",
                        fix="check the permissions and free space of the runs directory",
                    ) from None
                self._files[kind] = handle
            handle.write(text)
            handle.flush()
            self.rows[kind] += len(rows)

    def signal(self, step: int, /, **metrics: Any) -> None:
        """Record scalar metrics at a training step (``rec.signal(3, loss=0.2, kl=0.01)``)."""
        step = self._step(step)
        rows = []
        for name, value in metrics.items():
            number, bad = _finite(value, f"signal {name!r} at step {step}")
            self.nonfinite += bad
            rows.append({"step": step, "metric": name, "value": number, "nonfinite": bad})
        self._write("signals", rows)

    def rollout_group(
        self,
        step: int,
        *,
        group_id: str,
        task_id: str,
        rewards: Sequence[float],
        components: dict[str, Sequence[float]] | None = None,
        lengths: Sequence[int] | None = None,
        truncated: Sequence[bool] | None = None,
        finish_reasons: Sequence[str] | None = None,
        texts: Sequence[str] | None = None,
        commands: Sequence[Sequence[str]] | None = None,
    ) -> None:
        """Record one GRPO group: the samples of one prompt, with their rewards (sample i = index i)."""
        step = self._step(step)
        n = len(rewards)
        if n == 0:
            raise RecorderError(f"rollout_group {group_id!r}: rewards is empty")
        columns: dict[str, Sequence[Any] | None] = {
            "lengths": lengths,
            "truncated": truncated,
            "finish_reasons": finish_reasons,
            "texts": texts,
            "commands": commands,
        }
        for name, values in {
            **columns,
            **{f"components[{k}]": v for k, v in (components or {}).items()},
        }.items():
            if values is not None and len(values) != n:
                raise RecorderError(
                    f"rollout_group {group_id!r}: {name} has {len(values)} values, rewards has {n}",
                    fix="pass one value per sample",
                )
        rows = []
        for i in range(n):
            reward, bad = _finite(rewards[i], f"reward of sample {i} in group {group_id!r}")
            parts: dict[str, float | None] = {}
            for name, values in (components or {}).items():
                if values[i] is None:  # the component does not apply to this sample (TRL's None)
                    parts[name] = None
                    continue
                parts[name], part_bad = _finite(values[i], f"component {name!r} of sample {i}")
                bad = bad or part_bad
            self.nonfinite += bad
            rows.append(
                {
                    "step": step,
                    "group_id": str(group_id),
                    "task_id": str(task_id),
                    "sample_index": i,
                    "reward": reward,
                    "components": json.dumps(parts, allow_nan=False),
                    "length": int(lengths[i]) if lengths is not None else None,
                    "truncated": bool(truncated[i]) if truncated is not None else None,
                    "finish_reason": str(finish_reasons[i]) if finish_reasons is not None else None,
                    "text": str(texts[i]) if texts is not None else None,
                    "commands": [str(c) for c in commands[i]] if commands is not None else [],
                    "nonfinite": bad,
                }
            )
        self._write("rollouts", rows)

    def eval_result(self, split: str, task_id: str, score: float, *, sample_index: int = 0) -> None:
        """Record one evaluation score. Hidden splits (validation, heldout) only from the judge."""
        if split in HIDDEN_SPLITS and self.phase != "eval":
            raise RecorderError(
                f"split {split!r} is hidden: only the judge (eval phase) records it, "
                f"and this is the {self.phase} phase",
                fix="record train-split results here; the judge scores validation and heldout",
            )
        number, bad = _finite(score, f"score of {split}/{task_id}")
        self.nonfinite += bad
        self._write(
            "evals",
            [
                {
                    "split": str(split),
                    "task_id": str(task_id),
                    "sample_index": int(sample_index),
                    "score": number,
                    "nonfinite": bad,
                }
            ],
        )

    def budget_exceeded(self, step: int) -> bool:
        """True once ``step`` is past the run's step budget (training loops should stop)."""
        return self.max_steps is not None and step >= self.max_steps

    def _step(self, step: Any) -> int:
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise RecorderError(f"step: expected a non-negative integer, actually: {step!r}")
        return step

    def close(self) -> None:
        """Close the evidence files (also done at interpreter exit)."""
        with self._lock:
            for handle in self._files.values():
                handle.close()
            self._files.clear()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


_default: Recorder | None = None


def get_recorder() -> Recorder:
    """The process-wide recorder of the current run (created from the environment once)."""
    global _default
    if _default is None:
        _default = Recorder.from_env()
    return _default
