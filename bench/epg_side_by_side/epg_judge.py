"""EvoPolicyGym's own judge on policy files, run under EvoPolicyGym's Python (>= 3.12; see scripts/epg-chroot).

Not part of evotree: bench/epg_side_by_side.py runs this file with the Python of a chroot that
has EvoPolicyGym's dependencies, with ``--epg-src`` pointing at the ``src`` folder of an
EvoPolicyGym checkout. It evaluates each policy the way EvoPolicyGym's finalize step evaluates
the selected snapshot (``PolicyRuntime.eval``: one ``Policy`` per pool, ``reset(i)`` for the
pool's i-th case, its Gymnasium ``World`` and ``Roller``) on the first N cases of a seed pool of
its ``data/main-128`` corpus, and prints one JSON object: per policy the per-episode returns,
EvoPolicyGym's score (mean, std, value; ``mean`` is null when an episode errored: void) and the
wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def _spec(env_id: str) -> Any:
    """EvoPolicyGym's GymSpec for a Gymnasium id: the curated ``gym/…`` one, else the discovered ``gymnasium/ID``."""
    from evopolicygym.envs.gym.dynamic import discover
    from evopolicygym.envs.gym.spec import BY_NAME

    for spec in BY_NAME.values():
        if spec.id == env_id:
            return spec
    for item in discover([env_id]):
        if item.spec.id == env_id:
            return item.spec
    raise SystemExit(f"epg_judge: EvoPolicyGym has no environment {env_id}")


def _pyproject_version(path: Path) -> str:
    import tomllib

    try:
        return str(tomllib.loads(path.read_text(encoding="utf-8"))["project"]["version"])
    except (OSError, KeyError, ValueError):
        return "unknown"


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("gymnasium", "numpy", "mujoco", "minigrid", "box2d", "pygame-ce"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epg-src", required=True, type=Path, help="the src/ folder of an EvoPolicyGym checkout")
    parser.add_argument("--data", required=True, type=Path, help="its data/main-128 folder")
    parser.add_argument("--policies", required=True, type=Path, help="folder of policy folders (NAME/policy.py)")
    parser.add_argument("--env", required=True, help="Gymnasium id, e.g. Acrobot-v1")
    parser.add_argument("--policy", action="append", required=True, help="policy folder name (repeatable)")
    parser.add_argument("--split", choices=("heldout", "valid"), default="heldout")
    parser.add_argument("--episodes", type=int, default=64)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.epg_src.resolve()))

    from importlib.metadata import PackageNotFoundError, version

    from evopolicygym.core import Snap, Verdict
    from evopolicygym.data import load
    from evopolicygym.envs.gym import gym
    from evopolicygym.infra.runtime.policy import PolicyRuntime
    from evopolicygym.infra.runtime.roll import Roller

    import gymnasium
    import numpy

    try:
        epg_version = version("evopolicygym")
    except PackageNotFoundError:  # run from a checkout's src/, not installed
        epg_version = _pyproject_version(args.epg_src.resolve().parent / "pyproject.toml")
    spec = _spec(args.env)
    registration = gym(spec)
    corpus = load(args.data / spec.name, env=spec.name)
    pool = corpus.final if args.split == "heldout" else corpus.valid
    trimmed = pool.pool.trim(min(args.episodes, pool.pool.size))
    runtime = PolicyRuntime(root=args.policies.resolve(), roller=Roller(make=registration.make),
                            value=registration.value)
    out: dict[str, Any] = {"judge": "evopolicygym", "evopolicygym": epg_version, "python": sys.version.split()[0],
                           "gymnasium": gymnasium.__version__, "numpy": numpy.__version__, "env": args.env,
                           "packages": _versions(), "epg_name": spec.name, "steps": spec.steps, "split": args.split,
                           "pool_ref": trimmed.ref, "pool_hash": pool.hash,
                           "seeds": [int(case.data["seed"]) for case in trimmed.cases],
                           "anchors": {"random": spec.random, "expert": spec.expert}, "policies": {}}
    for index, name in enumerate(args.policy):
        snap = Snap(index=index, submit=0, ref=name, verdict=Verdict.ok, cost=trimmed.size)
        started = time.perf_counter()
        try:
            score = runtime.eval(snap, trimmed, registration.task)
            entry = {"returns": list(score.returns), "mean": score.mean, "std": score.std, "value": score.value}
        except Exception as exc:  # noqa: BLE001 - reported, the other policies still run
            entry = {"error": f"{type(exc).__name__}: {exc}"}
        entry["seconds"] = round(time.perf_counter() - started, 3)
        out["policies"][name] = entry
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
