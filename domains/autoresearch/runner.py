"""The train phase of an autoresearch run: ``python -P -m evotree.domains.autoresearch.runner -- python train.py``.

It does what program.md asks the agent to do by hand (``uv run train.py > run.log 2>&1``, then
``grep "^val_bpb:" run.log``): it runs the command with the fixed time budget in its environment
(``AUTORESEARCH_TIME_BUDGET``, read by the example's prepare.py), writes everything the command
prints to ``run.log`` in the candidate's directory (where the judge reads it) and to its own
output (evotree's phase log), and records the summary's numbers as signals of the run. A command
that fails, or that ends without a finite metric line, fails the phase: evotree records the run as
failed (autoresearch's ``crash``), charged to the version, never scored.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from evotree.domains.autoresearch.summary import metric_value, parse_summary
from evotree.harness import get_recorder

__all__ = ["main"]

ENV_TIME_BUDGET = "AUTORESEARCH_TIME_BUDGET"


def main(argv: list[str] | None = None) -> int:
    """Run the command, tee its output to run.log, record the summary; the exit status of the phase."""
    parser = argparse.ArgumentParser(prog="evotree.domains.autoresearch.runner")
    parser.add_argument(
        "--time-budget",
        type=float,
        default=None,
        help="seconds of training, given to the command as $AUTORESEARCH_TIME_BUDGET",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="CPU threads of the command's math libraries (OMP/OpenBLAS/MKL_NUM_THREADS): on a "
        "shared CPU, more threads than cores make the step rate, so the result, erratic",
    )
    parser.add_argument(
        "--metric", default="val_bpb", help="the summary line the run's result is read from"
    )
    parser.add_argument(
        "--log", default="run.log", help="where the command's output goes (the judge reads it)"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command: ... -- python train.py")
    env = dict(os.environ)
    # evotree's phases run with PYTHONSAFEPATH=1 (so a candidate's file cannot shadow evotree's own
    # modules); train.py is the candidate's own script and imports prepare.py beside it, as in
    # autoresearch, so its folder goes back on its path
    env.pop("PYTHONSAFEPATH", None)
    if args.time_budget is not None:
        if not args.time_budget > 0:
            parser.error("--time-budget: a positive number of seconds")
        env[ENV_TIME_BUDGET] = f"{args.time_budget:g}"
    if args.threads is not None:
        if args.threads < 1:
            parser.error("--threads: at least 1")
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(args.threads)
    log = Path(args.log)
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        assert proc.stdout is not None
        for chunk in iter(lambda: proc.stdout.readline(), b""):
            out.write(chunk)
            out.flush()
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
        code = proc.wait()
    summary = parse_summary(log.read_text(encoding="utf-8", errors="replace"))

    rec = get_recorder()
    numbers = {f"summary/{k}": v for k, v in summary.items()}
    if numbers:
        rec.signal(
            int(summary.get("num_steps", 0)) if summary.get("num_steps", 0) >= 0 else 0, **numbers
        )
    if code != 0:
        print(
            f"evotree: the command exited with status {code}: a crash (see {log})", file=sys.stderr
        )
        return code if 0 < code < 256 and code != 65 else 1
    if metric_value(summary, args.metric) is None:
        print(
            f"evotree: no finite '{args.metric}:' summary line in {log}: the run is a crash",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
