"""The same policy files through EvoPolicyGym's own judge and evotree's gym judge, on EvoPolicyGym's seed pools.

For each environment and each policy folder of ``bench/epg_side_by_side/policies``
(written in EvoPolicyGym's contract: ``Policy(obs_space, action_space, env_meta)``,
``reset(episode_index)``, ``act(obs)`` on JSON observations), both judges play the first N seeds of
one of EvoPolicyGym's ``data/main-128/<env>/{heldout,valid}.json`` pools:

* **EvoPolicyGym's judge** (v0.1.0 needs Python >= 3.12): ``bench/epg_side_by_side/epg_judge.py`` runs
  in a chroot built by ``scripts/epg-chroot`` (Debian trixie, Python 3.13, the simulator packages
  pinned to the versions of evotree's .venv) and calls EvoPolicyGym's ``PolicyRuntime.eval`` — the
  evaluation its finalize step runs on the selected snapshot — from the checkout's ``src/``.
* **evotree's judge** in its EvoPolicyGym compatibility mode: ``python -P -m evotree.domains.gym.judge``
  as ``evotree run`` starts it (working directory with ``judge/gym.toml`` + ``judge/references.json``,
  ``$EVOTREE_CANDIDATE_DIR``, ``$EVOTREE_JUDGE_SPLITS``, an evidence folder), but outside a run's
  bubblewrap sandbox (the policy workers run as plain subprocesses; the judge's doc says returns are
  bit-identical with and without the nested sandbox). ``judge/gym.toml`` is what
  ``evotree init --protocol evopolicygym`` writes, with EvoPolicyGym's seeds as the pool;
  ``references.json`` is what that init computes (``scoring.compute_references`` on the first 16
  seeds of EvoPolicyGym's validation pool: its static anchors where it has them, else measured).

Per env × policy the JSON records both judges' per-episode returns, how many are bit-identical,
both raw means, EvoPolicyGym's documented normalization of its raw mean (only where its spec has
anchors), evotree's ``final_score`` signal and evotree's default-domain figure (the mean of
per-episode clipped normalized scores on the same anchors).

Prerequisites: ``sudo scripts/epg-chroot`` (or any Python >= 3.12 with gymnasium, mujoco, minigrid:
``--chroot /``), a work tree of EvoPolicyGym v0.1.0 (``git archive v0.1.0 | tar -x -C DIR``), and
evotree's .venv with the ``gym`` extra. Run as root when a chroot is used::

    .venv/bin/python -P bench/epg_side_by_side.py --epg /tmp/epg --episodes 64
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
POLICY_DIR = HERE / "epg_side_by_side" / "policies"
EPG_DRIVER = HERE / "epg_side_by_side" / "epg_judge.py"
#: env id -> the policy folders it plays: a seeded random policy, a simple hand policy, and probes
#: (``random_unseeded``: Python's global generator; ``zero``: all-zero actions)
POLICIES: dict[str, list[str]] = {
    "Acrobot-v1": ["random", "acrobot"],
    "MountainCarContinuous-v0": ["random", "mountaincarcontinuous", "random_unseeded"],
    "Reacher-v5": ["random", "reacher", "random_unseeded"],
    "Pusher-v5": ["random", "pusher"],
    "HalfCheetah-v5": ["random", "halfcheetah", "zero"],
    "Ant-v5": ["random", "zero"],
    "BipedalWalker-v3": ["random", "zero"],
    "MiniGrid-FourRooms-v0": ["random", "minigrid"],
    "MiniGrid-DoorKey-16x16-v0": ["random", "minigrid"],
    "MiniGrid-KeyCorridorS4R3-v0": ["random", "minigrid"],
    "MiniGrid-ObstructedMaze-1Q-v1": ["random", "minigrid"],
    "parking-v0": ["random", "zero"],
    "roundabout-v0": ["random", "idle"],
    "FetchPush-v4": ["random", "zero"],
    "FetchPickAndPlace-v4": ["random", "zero"],
    "CarRacing-v3": ["random", "zero"],
}
#: env id -> fewer episodes than --episodes, where an episode costs seconds on two cores
EPISODE_CAP: dict[str, int] = {
    "parking-v0": 16,
    "CarRacing-v3": 4,
}  # CarRacing: 96x96x3 pixels as JSON, every step
#: env id -> EvoPolicyGym's data folder under data/main-128
EPG_DATA: dict[str, str] = {
    "Acrobot-v1": "gym/acrobot",
    "MountainCarContinuous-v0": "gym/continuouscar",
    "Reacher-v5": "gym/reacher5",
    "Pusher-v5": "gym/pusher5",
    "HalfCheetah-v5": "gym/halfcheetah5",
    "Ant-v5": "gym/ant5",
    "BipedalWalker-v3": "gym/bipedal",
    "CarRacing-v3": "gym/racing",
    **{
        env_id: f"gymnasium/{env_id}"
        for env_id in (
            "MiniGrid-FourRooms-v0",
            "MiniGrid-DoorKey-16x16-v0",
            "MiniGrid-KeyCorridorS4R3-v0",
            "MiniGrid-ObstructedMaze-1Q-v1",
            "parking-v0",
            "roundabout-v0",
            "FetchPush-v4",
            "FetchPickAndPlace-v4",
        )
    },
}
REFERENCE_EPISODES = 16  # as evotree init --protocol evopolicygym (epg_init.REFERENCE_EPISODES)


def _seeds(epg: Path, env_id: str, split: str) -> list[int]:
    data = json.loads(
        (epg / "data" / "main-128" / EPG_DATA[env_id] / f"{split}.json").read_text(encoding="utf-8")
    )
    return [int(case["seed"]) for case in data["cases"]]


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("gymnasium", "numpy", "mujoco", "minigrid", "box2d", "pygame-ce"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def run_epg(
    epg: Path, chroot: str, python: str, env_id: str, policies: list[str], split: str, episodes: int
) -> dict[str, Any]:
    """EvoPolicyGym's judge on ``policies`` (folder names): its JSON report (see epg_judge.py)."""
    inside = chroot not in ("", "/")
    base = Path(chroot) / "tmp" if inside else Path(tempfile.gettempdir())
    stage = Path(tempfile.mkdtemp(prefix="epg-side-by-side-", dir=base))
    try:
        shutil.copytree(epg / "src", stage / "src")
        shutil.copy2(epg / "pyproject.toml", stage / "pyproject.toml")
        shutil.copytree(
            epg / "data" / "main-128" / EPG_DATA[env_id], stage / "data" / EPG_DATA[env_id]
        )
        shutil.copytree(POLICY_DIR, stage / "policies")
        shutil.copy2(EPG_DRIVER, stage / "epg_judge.py")
        seen = "/" + str(stage.relative_to(chroot)) if inside else str(stage)
        argv = [
            python,
            f"{seen}/epg_judge.py",
            "--epg-src",
            f"{seen}/src",
            "--data",
            f"{seen}/data",
            "--policies",
            f"{seen}/policies",
            "--env",
            env_id,
            "--split",
            split,
            "--episodes",
            str(episodes),
        ]
        for name in policies:
            argv += ["--policy", name]
        if inside:
            argv = [shutil.which("chroot") or "/usr/sbin/chroot", chroot, *argv]
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            "HOME": "/root",
            "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "OMP_NUM_THREADS": "1",
            "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "SDL_VIDEODRIVER": "dummy",
        }
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"EvoPolicyGym's judge failed on {env_id} (exit {done.returncode}):\n{done.stderr[-4000:]}"
            )
        return json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def run_evotree(
    env_id: str, policy: str, split: str, seeds: list[int], refs_json: str, workdir: Path
) -> dict[str, Any]:
    """evotree's gym judge (compatibility mode) on one policy folder: per-episode returns and its signals."""
    from evotree.domains.gym import JUDGE_FILE, REFERENCES_FILE
    from evotree.domains.gym.epg_init import _judge_toml
    from evotree.harness.layout import (
        ENV_CANDIDATE_DIR,
        ENV_EVIDENCE_DIR,
        ENV_JUDGE_SPLITS,
        ENV_PHASE,
        ENV_RUN_ID,
    )

    judge_dir = workdir / f"judge-{policy}"
    evidence = workdir / f"evidence-{policy}"
    (judge_dir / "judge").mkdir(parents=True)
    evidence.mkdir()
    our_split = "heldout" if split == "heldout" else "validation"
    # the judge/gym.toml `evotree init --protocol evopolicygym` writes, with EvoPolicyGym's seeds as the pool
    (judge_dir / JUDGE_FILE).write_text(
        _judge_toml(env_id, {our_split: {env_id: seeds}}, 120.0), encoding="utf-8"
    )
    (judge_dir / REFERENCES_FILE).write_text(refs_json, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVOTREE_")}
    env.update(
        {
            ENV_CANDIDATE_DIR: str(POLICY_DIR / policy),
            ENV_JUDGE_SPLITS: our_split,
            ENV_EVIDENCE_DIR: str(evidence),
            ENV_PHASE: "eval",
            ENV_RUN_ID: f"epg-side-by-side-{policy}",
            "PYTHONHASHSEED": "0",
            "SDL_VIDEODRIVER": "dummy",
        }
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-P", "-m", "evotree.domains.gym.judge"],
        cwd=judge_dir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    returns: dict[int, float] = {}
    for line in (
        (evidence / "evals.jsonl").read_text(encoding="utf-8").splitlines()
        if (evidence / "evals.jsonl").exists()
        else []
    ):
        row = json.loads(line)
        name, _, index = str(row.get("task_id", "")).rpartition("#")
        if name == env_id and row.get("split") == our_split:
            returns[int(index)] = float(row["score"])
    signals: dict[str, float] = {}
    if (evidence / "signals.jsonl").exists():
        for line in (evidence / "signals.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            key = str(row.get("metric", ""))
            if key.startswith(f"{our_split}/{env_id}/") and "#" not in key:
                signals[key.rsplit("/", 1)[-1]] = row["value"]
            elif key == "replay_mismatches":
                signals[key] = row["value"]
    return {
        "exit": done.returncode,
        "returns": [returns[i] for i in sorted(returns)],
        "signals": signals,
        "seconds": round(seconds, 3),
        "stderr_tail": done.stderr[-1500:] if done.returncode else "",
    }


def _num(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def markdown_table(results: dict[str, Any]) -> str:
    """The table of docs/domains/gym.md ("Side by side with EvoPolicyGym's judge") from a results JSON."""
    lines = [
        "| env | policy | EPG judge: mean return | evotree judge: mean return | identical episodes "
        "| EPG normalized (its anchors) | evotree `final_score` | evotree default score | anchors (random / expert) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for env_id, entry in results["envs"].items():
        if "error" in entry:
            lines.append(
                f"| {env_id} | — | not run: {entry['error'].splitlines()[0][:120]} | | | | | | |"
            )
            continue
        anchors = entry["evotree_anchors"]
        static = "EvoPolicyGym" in anchors.get("source", "")
        where = (
            f"{anchors['random']:g} / {anchors['expert']:g} (EPG static)"
            if static
            else f"{anchors['random']:.3f} / {anchors['expert']:.3f} (evotree, measured; EPG has none)"
        )
        for policy, row in entry["policies"].items():
            epg, ours = row["epg"], row["evotree"]
            epg_mean = "void" if epg["void"] else _num(epg["mean_return"])
            lines.append(
                f"| {env_id} | `{policy}` | {epg_mean} | {_num(ours['mean_return'])} "
                f"| {row['bit_identical']}/{row['episodes']} | {_num(epg['normalized'], 1)} "
                f"| {_num(ours['final_score'], 1)} | {_num(ours['default_scoring_mean'], 3)} | {where} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epg", type=Path, help="a work tree of EvoPolicyGym v0.1.0")
    parser.add_argument(
        "--chroot",
        default="/opt/trixie",
        help="root of the chroot with EvoPolicyGym's Python (scripts/epg-chroot); '/' for none",
    )
    parser.add_argument(
        "--epg-python", default="/opt/epg-venv/bin/python", help="that Python, as seen inside it"
    )
    parser.add_argument("--split", choices=("heldout", "valid"), default="heldout")
    parser.add_argument("--episodes", type=int, default=64, help="the first N seeds of the pool")
    parser.add_argument("--envs", nargs="*", default=list(POLICIES))
    parser.add_argument(
        "--out", type=Path, default=REPO / "bench" / "results" / "epg_side_by_side.json"
    )
    parser.add_argument(
        "--table", action="store_true", help="only print the markdown table of --out"
    )
    args = parser.parse_args(argv)
    if not args.table and args.epg is None:
        parser.error("--epg (a work tree of EvoPolicyGym v0.1.0) is required")
    if args.table:
        print(markdown_table(json.loads(args.out.read_text(encoding="utf-8"))), end="")
        return 0

    from evotree.domains.gym.scoring import compute_references, normalized_score

    results: dict[str, Any] = {
        "what": "the same EvoPolicyGym-contract policy files through EvoPolicyGym v0.1.0's judge and evotree's "
        "gym judge (compatibility mode) on EvoPolicyGym's seed pools",
        "split": args.split,
        "episodes": args.episodes,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {
            "python": platform.python_version(),
            **_versions(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
        },
        "command": "bench/epg_side_by_side.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "envs": {},
    }
    for env_id in args.envs:
        policies = POLICIES[env_id]
        episodes = min(args.episodes, EPISODE_CAP.get(env_id, args.episodes))
        seeds = _seeds(args.epg, env_id, args.split)[:episodes]
        print(f"{env_id}: EvoPolicyGym's judge ...", file=sys.stderr, flush=True)
        try:
            epg = run_epg(
                args.epg, args.chroot, args.epg_python, env_id, policies, args.split, episodes
            )
        except RuntimeError as exc:  # recorded; the other environments still run
            print(str(exc), file=sys.stderr)
            results["envs"][env_id] = {"error": str(exc)[-2000:]}
            continue
        if epg["seeds"] != seeds:
            raise RuntimeError(f"{env_id}: the two judges would play different seeds")
        refs = compute_references({env_id: _seeds(args.epg, env_id, "valid")[:REFERENCE_EPISODES]})
        low, high = refs.pair(env_id)
        entry: dict[str, Any] = {
            "epg_name": epg["epg_name"],
            "max_steps": epg["steps"],
            "seeds": seeds,
            "epg_versions": {
                "evopolicygym": epg["evopolicygym"],
                "python": epg["python"],
                **epg.get("packages", {}),
            },
            "epg_anchors": epg["anchors"],
            "evotree_anchors": {
                "random": low,
                "expert": high,
                "source": refs.envs[env_id].get("source", ""),
            },
            "policies": {},
        }
        with tempfile.TemporaryDirectory(prefix="evotree-side-by-side-") as tmp:
            for policy in policies:
                print(f"{env_id}: evotree's judge, {policy} ...", file=sys.stderr, flush=True)
                ours = run_evotree(env_id, policy, args.split, seeds, refs.to_json(), Path(tmp))
                theirs = epg["policies"][policy]
                a, b = theirs.get("returns", []), ours["returns"]
                same = sum(1 for x, y in zip(a, b) if x == y)
                epg_mean = theirs.get("mean")
                anchors = epg["anchors"]
                has_anchors = anchors["expert"] > anchors["random"]
                row = {
                    "episodes": len(seeds),
                    "epg": {
                        "mean_return": epg_mean,
                        "void": epg_mean is None,
                        "returns": a,
                        # docs/protocol/07-scoring.md there (v0.1.0's code does not compute it)
                        "normalized": (
                            min(
                                1.2,
                                max(
                                    0.0,
                                    (epg_mean - anchors["random"])
                                    / (anchors["expert"] - anchors["random"]),
                                ),
                            )
                            * 100.0
                            if has_anchors and epg_mean is not None
                            else None
                        ),
                        "seconds": theirs.get("seconds"),
                        "error": theirs.get("error"),
                    },
                    "evotree": {
                        "exit": ours["exit"],
                        "returns": b,
                        "mean_return": ours["signals"].get("mean_return"),
                        "final_score": ours["signals"].get("final_score"),
                        "errors": ours["signals"].get("errors"),
                        "invalid_actions": ours["signals"].get("invalid_actions"),
                        "replay_mismatches": ours["signals"].get("replay_mismatches"),
                        "default_scoring_mean": (
                            sum(normalized_score(r, low, high) for r in b) / len(b) if b else None
                        ),
                        "seconds": ours["seconds"],
                        "stderr_tail": ours["stderr_tail"],
                    },
                    "bit_identical": same,
                    "max_abs_diff": max((abs(x - y) for x, y in zip(a, b)), default=None),
                    # EvoPolicyGym's Python (>= 3.12) sums floats with compensation, evotree's 3.11 does not
                    "mean_diff": (
                        epg_mean - ours["signals"]["mean_return"]
                        if epg_mean is not None and "mean_return" in ours["signals"]
                        else None
                    ),
                }
                entry["policies"][policy] = row
                print(
                    f"  {policy:22s} EPG {epg_mean!s:>22s}  evotree {row['evotree']['mean_return']!s:>22s}  "
                    f"identical {same}/{len(seeds)}",
                    file=sys.stderr,
                    flush=True,
                )
        results["envs"][env_id] = entry
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(
            json.dumps(results, indent=1) + "\n", encoding="utf-8"
        )  # partial results survive
    results["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}", file=sys.stderr)
    print(markdown_table(results), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
