"""What the replay (steps re-run as bash ran them, ``harness/audit/replay.py``) costs the audit.

Audits blind held-out sets with their task repositories (``--repo/--base``, as
``bench/bench_audit_precision.py`` does) twice in the same run, interleaved: with the replay, and
with it left out (``trajectories.replay_hits`` made to return nothing: the rules alone). The
figure is the ratio of the two wall times (this machine is noisy: the ratio, not the seconds), and
the seconds a trajectory the replay adds. The task repositories are built once per round and
audited both ways; what the precision of either is stays in ``bench_audit_precision.py``.

Run:

    .venv/bin/python bench/bench_audit_replay.py [--sets heldout25,heldout24] [--rounds 2]
        [--json bench/results/audit_replay.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_audit_precision as precision  # noqa: E402


def _timed(folder: Path, replay: bool) -> tuple[float, dict[str, Any]]:
    from evotree.harness.audit import replay as replay_module
    from evotree.harness.audit import trajectories

    saved = trajectories.replay_hits
    if not replay:
        trajectories.replay_hits = lambda traj, ancestry: []
    replay_module._BY_STATE.clear()
    try:
        started = time.perf_counter()
        scored = precision.trajectory_set(folder, with_repo=True)
        return time.perf_counter() - started, scored
    finally:
        trajectories.replay_hits = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="heldout25,heldout24")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    rows = []
    for name in args.sets.split(","):
        folder = precision.TRAJECTORIES / name
        on: list[float] = []
        off: list[float] = []
        files = 0
        for _ in range(args.rounds):
            seconds, scored = _timed(folder, replay=False)
            off.append(seconds)
            seconds, scored = _timed(folder, replay=True)
            on.append(seconds)
            files = scored["files"]
        rows.append(
            {
                "set": name,
                "files": files,
                "rules_alone_s": round(min(off), 2),
                "with_replay_s": round(min(on), 2),
                "ratio": round(min(on) / min(off), 2),
                "added_s_per_trajectory": round((min(on) - min(off)) / max(files, 1), 3),
            }
        )
    result = {"bench": "audit_replay", "rounds": args.rounds, "sets": rows}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
