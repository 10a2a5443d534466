#!/usr/bin/env python
"""Benchmark: the gym judge's episodes/s on CartPole-v1 against a plain Gymnasium loop.

Target: the judge, with the policy in a process of its own that gets only observations (the
environment stepped in the judge's process; with lanes, one binary message each way per round
of all the lanes' observations and actions), plays at least 0.8x the episodes/s of a plain loop
running the same policy on the same seeds (earlier target, when the policy's process also ran
the environment: 0.9x).

Arms, timed in the same process, in an order rotated every repetition (--repeats):

* ``plain``          — ``gym.make`` once, then for each seed ``reset(seed)``, a fresh policy,
  ``act``/``step`` to the end: what a user would write;
* ``judge``          — the judge's own loop (:func:`evotree.domains.gym.judge.judge_episodes`): the
  environment stepped in this process, the policy in one policy process, an observation and an
  action over the pipes per step (nothing is replayed any more: ``replay_fraction`` is ignored,
  so ``judge-replay-all`` and ``judge-noreplay`` time the same loop);
* ``judge-replay-all``, ``judge-noreplay`` — kept for the history of the earlier design;
* ``judge-2workers`` — two policy processes (the machine has 2 cores);
* ``judge-1lane``    — the judge with ``lanes = 1``: one episode at a time, one message each way
  per step (the default, ``lanes = 256``, plays up to 256 episodes side by side in the policy
  process: one message each way per round of all of them; fewer while the judge ramps up from
  one lane or when rounds are slow, ``runner._Pace``);
* ``judge-2groups``  — the judge with ``runner.GROUPS = 2``: the lanes in two groups whose
  rounds overlap (this process steps one group's environments while the policy's process
  answers the other's); ``judge-1group`` — with ``runner.GROUPS = 1`` (one group: the two
  processes take turns). The default (``GROUPS = None``) starts with one group and switches to
  two while this process waits little for a CPU (``runner._Overlap``);
* ``judge-fresh-env`` — the judge with a fresh environment for every episode (before
  ``driver.reusable``: CartPole's environment object now plays many episodes);
* ``judge-16lanes``, ``judge-64lanes`` — the judge with ``lanes = 16`` / ``64`` (earlier
  defaults): 16x / 4x more rounds;
* ``plain-process``, ``judge-process``, ``judge-process-late`` — whole processes, timed from
  their start to their exit (the interpreter and the imports included on both sides): a plain
  loop's script; a judge run as the judge phase runs it (its policy's process started first,
  ``launch.prestart``, while it imports the rest); the same with the policy's process started
  when the first episode is boarded (before ``launch.prestart``). Their ratio to
  ``plain-process`` is printed below the table (the table's ratios are to ``plain``);
* ``vector-plain``   — a plain ``gymnasium.vector.SyncVectorEnv`` loop (8 envs, batches of 8
  seeds, one policy object per sub-env). The judge has no vectorized path (its policies act on
  one observation); this row is the plain vector loop, for reference;
* ``judge-eval-sandbox`` — the judge's loop (default replay) run where ``evotree run`` runs it
  before the nested policy sandbox: inside the judge phase's bubblewrap sandbox, its worker a plain
  subprocess in that sandbox (a driver script in ``wrap(SandboxSpec(...))``);
* ``judge-nested``   — the same inside the judge phase's sandbox as ``evotree run`` starts it
  now (``SandboxSpec(policy=PolicySandbox())``: its own user namespace and
  ``$EVOTREE_POLICY_SANDBOX``), each worker in a nested sandbox of its own
  (:func:`evotree.harness.sandbox_nested.policy_sandbox_argv`). Target: at least 0.9x the
  episodes/s of ``judge-eval-sandbox``. The sandboxed arms time the judge's loop inside the
  sandbox (the outer sandbox's own start, ~0.1 s, is not counted; the nested worker's start is
  in *total*, as the plain worker's is).

For the judge arms two rates are kept: *steady* (the start-up and one round of lanes, measured
by a judge run of ``min(lanes, n // 2)`` episodes just before, subtracted: the marginal rate of
the episodes beyond the first batch, workers warm; one episode for ``judge-1lane``) and *total* (all episodes over the wall time
including starting the worker processes, ~0.5 s each: they import gymnasium and the policy);
the ratio is steady over plain. *CPU ms/episode* counts this process and its worker processes
(start-up subtracted the same way): the machine is shared, so wall rates of a two-process
design vary with the load; the CPU cost does not. The load average is printed with the results.
Every arm must produce exactly the plain loop's returns (checked). Policies: ``long`` (a linear
controller that balances for all 500 steps) and ``short`` (angle-only, ~40-step episodes: the
per-episode overhead dominates). Run:

    .venv/bin/python bench/bench_gym_judge.py [--repeats 5] [--episodes-long 100]
        [--episodes-short 400] [--policies long,short] [--arms plain,judge,...] [--json PATH]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

POLICIES = {
    "long": """\
class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass
    def reset(self):
        pass
    def act(self, obs):
        x, x_dot, theta, theta_dot = obs
        return int(theta + 0.5 * theta_dot + 0.05 * x + 0.1 * x_dot > 0.0)
""",
    "short": """\
class Policy:
    def __init__(self, env_id, observation_space, action_space):
        pass
    def reset(self):
        pass
    def act(self, obs):
        return int(obs[2] > 0)
""",
}
ENV_ID = "CartPole-v1"
#: ``--envs``: evotree's reference policy of each environment (observation-only ones), as a candidate.
REFERENCE_POLICY = """\
from evotree.domains.gym import core16, experts
class Policy:
    def __init__(self, env_id, observation_space, action_space):
        self.inner = core16.OBS_ONLY[env_id]() if env_id in core16.OBS_ONLY else experts.make_expert(env_id, None)
    def reset(self):
        self.inner.reset()
    def act(self, obs):
        return self.inner.act(obs)
"""


#: Steps of the last plain loop per environment (episode lengths for the report).
STEPS: dict[str, int] = {}


def load_policy(path: Path) -> type:
    spec = importlib.util.spec_from_file_location(f"bench_policy_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.Policy


def arm_plain(
    policy: type, seeds: list[int], env_id: str = ENV_ID
) -> tuple[list[float], dict[str, float]]:
    from evotree.domains.gym.catalog import make_env

    env = make_env(env_id)  # gymnasium.make after importing the package that registers the id
    start = time.perf_counter()
    returns = []
    steps = 0
    for seed in seeds:
        obs, _ = env.reset(seed=seed)
        pol = policy(env_id, env.observation_space, env.action_space)
        pol.reset()
        total = 0.0
        while True:
            obs, reward, terminated, truncated, _ = env.step(pol.act(obs))
            total += float(reward)
            steps += 1
            if terminated or truncated:
                break
        returns.append(total)
    wall = time.perf_counter() - start
    STEPS[env_id] = steps
    env.close()
    return returns, {"total": len(seeds) / wall, "steady": len(seeds) / wall}


def arm_vector(
    policy: type, seeds: list[int], width: int = 8
) -> tuple[list[float], dict[str, float]]:
    import gymnasium as gym
    import numpy as np

    envs = gym.vector.SyncVectorEnv([lambda: gym.make(ENV_ID) for _ in range(width)])
    start = time.perf_counter()
    returns: list[float] = []
    for at in range(0, len(seeds), width):
        batch = seeds[at : at + width]
        padded = batch + [batch[-1]] * (width - len(batch))
        obs, _ = envs.reset(seed=padded)
        pols = [
            policy(ENV_ID, envs.single_observation_space, envs.single_action_space)
            for _ in range(width)
        ]
        for pol in pols:
            pol.reset()
        totals = np.zeros(width)
        done = np.zeros(width, dtype=bool)
        while not done.all():
            actions = np.array([pols[i].act(obs[i]) for i in range(width)])
            obs, reward, terminated, truncated, _ = envs.step(actions)
            totals += np.where(done, 0.0, reward)
            done |= (
                terminated | truncated
            )  # a finished sub-env auto-resets; its later steps are ignored
        returns.extend(float(t) for t in totals[: len(batch)])
    wall = time.perf_counter() - start
    envs.close()
    return returns, {"total": len(seeds) / wall, "steady": len(seeds) / wall}


def arm_judge(
    candidate: Path,
    seeds: list[int],
    *,
    workers: int,
    replay: float,
    env_id: str = ENV_ID,
    lanes: int | None = None,
    groups: int | None = None,
    fresh: bool = False,
) -> tuple[list[float], dict[str, float]]:
    """The judge's loop on ``seeds``; its start-up (the worker processes importing gymnasium and the
    policy) is measured by a one-episode run just before and subtracted for the steady rates.
    ``groups``: ``runner.GROUPS`` for this arm; ``fresh``: a fresh environment for every
    episode, as before environments were reused (``driver.reusable``)."""
    from evotree.domains.gym import driver, runner

    saved = runner.GROUPS, dict(driver._RESET_SAFE)
    if groups is not None:
        runner.GROUPS = groups
    if fresh:
        driver._RESET_SAFE.clear()
    try:
        return _arm_judge(
            candidate, seeds, workers=workers, replay=replay, env_id=env_id, lanes=lanes
        )
    finally:
        runner.GROUPS = saved[0]
        driver._RESET_SAFE.clear()
        driver._RESET_SAFE.update(saved[1])


def _arm_judge(
    candidate: Path,
    seeds: list[int],
    *,
    workers: int,
    replay: float,
    env_id: str,
    lanes: int | None,
) -> tuple[list[float], dict[str, float]]:
    """:func:`arm_judge` with the module settings as they are."""
    from evotree.domains.gym.judge import judge_episodes
    from evotree.domains.gym.runner import Task
    from evotree.domains.gym.settings import JudgeSettings, References

    if lanes is None:  # the judge's default
        lanes = JudgeSettings(envs=[], pools={}).lanes
    settings = JudgeSettings(
        envs=[env_id],
        pools={},
        workers=workers,
        replay_fraction=replay,
        episode_timeout_seconds=60.0,
        lanes=lanes,
    )
    refs = References(envs={env_id: {"random": -1e9, "expert": 1e9}})  # scores are not looked at

    def once(chosen: list[int]) -> tuple[list[float], float, float]:
        tasks = [Task(env_id, i, seed) for i, seed in enumerate(chosen)]
        cpu, start = _cpu(), time.perf_counter()
        by_index: dict[int, float] = {}
        for episode, _score in judge_episodes(candidate, tasks, settings, refs):
            assert not episode.failed, episode.message
            by_index[episode.index] = episode.ret
        return [by_index[i] for i in range(len(chosen))], time.perf_counter() - start, _cpu() - cpu

    m = max(
        1, min(lanes, len(seeds) // 2)
    )  # one batch of lanes: start-up and one round of episodes
    _, wall_one, cpu_one = once(seeds[:m])
    returns, wall, cpu = once(seeds)
    n = len(seeds)
    return returns, {
        "total": n / wall,
        "steady": (n - m) / (wall - wall_one) if wall > wall_one else float("nan"),
        "cpu_ms_per_episode": (cpu - cpu_one) / (n - m) * 1000,
        "startup_s": wall_one,
    }


#: A whole plain loop as a process of its own: the interpreter, the imports (gymnasium) and the
#: loop of :func:`arm_plain`; ``argv``: the environment id, the policy file, the seeds. Prints the
#: returns (JSON).
_PLAIN_PROCESS = """\
import importlib.util, json, sys
from evotree.domains.gym.catalog import make_env

env_id, path, seeds = sys.argv[1], sys.argv[2], [int(s) for s in sys.argv[3:]]
spec = importlib.util.spec_from_file_location("policy", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
env = make_env(env_id)
returns = []
for seed in seeds:
    obs, _ = env.reset(seed=seed)
    pol = module.Policy(env_id, env.observation_space, env.action_space)
    pol.reset()
    total = 0.0
    while True:
        obs, reward, terminated, truncated, _ = env.step(pol.act(obs))
        total += float(reward)
        if terminated or truncated:
            break
    returns.append(total)
print(json.dumps(returns))
"""

#: A whole judge as a process of its own, in the order the judge phase runs
#: (:func:`evotree.domains.gym.judge.main`): the policy's process started first
#: (``launch.prestart``; not with ``late``), then the judge's imports, its settings and the
#: episodes; ``argv``: ``early``/``late``, the environment id, the candidate, the seeds.
_JUDGE_PROCESS = """\
import json, sys
from pathlib import Path

when, env_id, candidate, seeds = sys.argv[1], sys.argv[2], Path(sys.argv[3]), [int(s) for s in sys.argv[4:]]
if when == "early":
    from evotree.domains.gym.launch import prestart
    prestart(candidate, None)
from evotree.domains.gym.judge import judge_episodes
from evotree.domains.gym.runner import Task
from evotree.domains.gym.settings import JudgeSettings, References

settings = JudgeSettings(envs=[env_id], pools={}, workers=1, episode_timeout_seconds=60.0)
refs = References(envs={env_id: {"random": -1e9, "expert": 1e9}})
by_index = {}
tasks = [Task(env_id, i, seed) for i, seed in enumerate(seeds)]
for episode, _score in judge_episodes(candidate, tasks, settings, refs):
    assert not episode.failed, episode.message
    by_index[episode.index] = episode.ret
print(json.dumps([by_index[i] for i in range(len(seeds))]))
"""


def arm_process(argv: list[str], seeds: list[int]) -> tuple[list[float], dict[str, float]]:
    """A whole process (``python -P -c``, this machine's interpreter, the policy processes'
    environment): episodes over its wall time from its start to its exit, start-up and imports
    included on both sides (:data:`_PLAIN_PROCESS`, :data:`_JUDGE_PROCESS`)."""
    import subprocess

    from evotree.domains.gym.runner import worker_env

    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-P", "-c", *argv, *map(str, seeds)],
        capture_output=True,
        text=True,
        env=worker_env(),
        timeout=600,
        check=False,
    )
    wall = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr[-2000:]
    rate = len(seeds) / wall
    return json.loads(proc.stdout), {"total": rate, "steady": rate}


#: Runs the judge's loop inside a sandbox: ``argv[1]`` is the candidate, ``argv[2:]`` the seeds.
#: Prints the returns, and wall and CPU time of a one-episode run and of the full run (JSON).
_DRIVER = """\
import ctypes, json, os, resource, sys, time
from pathlib import Path
from evotree.domains.gym.judge import judge_episodes
from evotree.domains.gym.runner import Task
from evotree.domains.gym.settings import JudgeSettings, References

ENV_ID = sys.argv[1]
candidate, replay, seeds = Path(sys.argv[2]), float(sys.argv[3]), [int(s) for s in sys.argv[4:]]
settings = JudgeSettings(envs=[ENV_ID], pools={}, workers=1, replay_fraction=replay, episode_timeout_seconds=60.0)
refs = References(envs={ENV_ID: {"random": -1e9, "expert": 1e9}})


# a nested worker's CPU reaches this process's counters only if every process between them is
# reaped by its parent; bubblewrap's monitor may exit before its sandbox's init: adopt and reap it
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def reap():
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if not pid:
            time.sleep(0.005)


def cpu():
    reap()
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def once(chosen):
    tasks = [Task(ENV_ID, i, seed) for i, seed in enumerate(chosen)]
    c, start = cpu(), time.perf_counter()
    by_index = {}
    for episode, _score in judge_episodes(candidate, tasks, settings, refs):
        assert not episode.failed, episode.message
        by_index[episode.index] = episode.ret
    return [by_index[i] for i in range(len(chosen))], time.perf_counter() - start, cpu() - c


once(seeds[:1])  # warm-up: imports gymnasium here (the bench process has it) and checks the nested sandbox once
m = max(1, min(settings.lanes, len(seeds) // 2))  # one batch of lanes
_, wall_one, cpu_one = once(seeds[:m])
returns, wall, cpu_all = once(seeds)
print(json.dumps({"returns": returns, "wall_one": wall_one, "wall": wall, "cpu_one": cpu_one, "cpu": cpu_all,
                  "m": m}))
"""


def arm_judge_sandboxed(
    candidate: Path, seeds: list[int], *, nested: bool, replay: float = 0.25, env_id: str = ENV_ID
) -> tuple[list[float], dict[str, float]]:
    """The judge's loop inside the judge phase's sandbox: today's (``nested=False``: workers are plain
    subprocesses in it) or the nested one (``nested=True``: each worker in a nested sandbox)."""
    import subprocess

    from evotree.harness.sandbox import wrap
    from evotree.harness.sandbox_launch import sandbox_env
    from evotree.harness.sandbox_spec import PolicySandbox, SandboxSpec

    spec = SandboxSpec(
        cwd=candidate.parent,
        read_only=(candidate.parent,),
        policy=PolicySandbox() if nested else None,
    )
    argv = wrap(
        spec,
        [
            sys.executable,
            "-P",
            "-c",
            _DRIVER,
            env_id,
            str(candidate),
            str(replay),
            *map(str, seeds),
        ],
    )
    env = sandbox_env({k: v for k, v in os.environ.items() if not k.startswith("EVOTREE_")})
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the sandboxed judge failed ({proc.returncode}): {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    n, m = len(seeds), out["m"]
    return out["returns"], {
        "total": n / out["wall"],
        "steady": (n - m) / (out["wall"] - out["wall_one"])
        if out["wall"] > out["wall_one"]
        else float("nan"),
        "cpu_ms_per_episode": (out["cpu"] - out["cpu_one"]) / (n - m) * 1000,
        "startup_s": out["wall_one"],
    }


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--episodes-long", type=int, default=100)
    parser.add_argument("--episodes-short", type=int, default=400)
    parser.add_argument("--policies", default="long,short", help="comma-separated: long, short")
    parser.add_argument("--arms", default="", help="comma-separated arms (default: all)")
    parser.add_argument(
        "--envs",
        default="",
        help="comma-separated environment ids: each plays evotree's reference policy "
        "for it instead of the CartPole policies (default arms: plain, judge, judge-nested)",
    )
    parser.add_argument(
        "--episodes", type=int, default=40, help="episodes per environment with --envs"
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--record",
        type=Path,
        help="write the summary record (target, figure, verdict) of the judge arm here",
    )
    args = parser.parse_args()
    if args.envs and not args.arms:
        args.arms = "judge,judge-nested"

    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "policies": {},
    }
    import gymnasium

    results["machine"]["gymnasium"] = gymnasium.__version__
    with tempfile.TemporaryDirectory(prefix="evotree-bench-gym-") as tmp:
        cases = (
            [(env_id, env_id, REFERENCE_POLICY, args.episodes) for env_id in args.envs.split(",")]
            if args.envs
            else [
                (
                    name,
                    ENV_ID,
                    POLICIES[name],
                    args.episodes_long if name == "long" else args.episodes_short,
                )
                for name in args.policies.split(",")
            ]
        )
        for name, env_id, source, count in cases:
            candidate = Path(tmp) / name
            candidate.mkdir()
            (candidate / "policy.py").write_text(source)
            policy = load_policy(candidate / "policy.py")
            seeds = [1_000_000 + 7919 * i for i in range(count)]
            arms = {
                "plain": partial(arm_plain, policy, seeds, env_id),
                "judge": partial(
                    arm_judge, candidate, seeds, workers=1, replay=0.25, env_id=env_id
                ),
                "judge-replay-all": partial(
                    arm_judge, candidate, seeds, workers=1, replay=1.0, env_id=env_id
                ),
                "judge-noreplay": partial(
                    arm_judge, candidate, seeds, workers=1, replay=0.0, env_id=env_id
                ),
                "judge-2workers": partial(
                    arm_judge, candidate, seeds, workers=2, replay=0.25, env_id=env_id
                ),
                "judge-1lane": partial(
                    arm_judge, candidate, seeds, workers=1, replay=0.25, env_id=env_id, lanes=1
                ),
                "judge-16lanes": partial(
                    arm_judge, candidate, seeds, workers=1, replay=0.25, env_id=env_id, lanes=16
                ),
                "judge-2groups": partial(
                    arm_judge, candidate, seeds, workers=1, replay=0.25, env_id=env_id, groups=2
                ),
                "judge-1group": partial(
                    arm_judge, candidate, seeds, workers=1, replay=0.25, env_id=env_id, groups=1
                ),
                "judge-fresh-env": partial(
                    arm_judge, candidate, seeds, workers=1, replay=0.25, env_id=env_id, fresh=True
                ),
                "judge-64lanes": partial(
                    arm_judge, candidate, seeds, workers=1, replay=0.25, env_id=env_id, lanes=64
                ),
                "vector-plain": partial(arm_vector, policy, seeds),
                "plain-process": partial(
                    arm_process,
                    [_PLAIN_PROCESS, env_id, str(candidate / "policy.py")],
                    seeds,
                ),
                "judge-process": partial(
                    arm_process, [_JUDGE_PROCESS, "early", env_id, str(candidate)], seeds
                ),
                "judge-process-late": partial(
                    arm_process, [_JUDGE_PROCESS, "late", env_id, str(candidate)], seeds
                ),
                "judge-eval-sandbox": partial(
                    arm_judge_sandboxed, candidate, seeds, nested=False, env_id=env_id
                ),
                "judge-nested": partial(
                    arm_judge_sandboxed, candidate, seeds, nested=True, env_id=env_id
                ),
            }
            if args.arms:
                wanted = ["plain", *[a for a in args.arms.split(",") if a != "plain"]]
                arms = {a: arms[a] for a in wanted}
            order = list(arms)
            rates: dict[str, dict[str, list[float]]] = {
                a: {"total": [], "steady": [], "cpu_ms_per_episode": []} for a in arms
            }
            ratios: dict[str, list[float]] = {a: [] for a in arms}
            total_ratios: dict[str, list[float]] = {a: [] for a in arms}
            reference: list[float] | None = None
            for rep in range(args.repeats):
                shift = rep % len(order)
                rep_rates = {}
                for arm in order[shift:] + order[:shift]:
                    cpu0 = _cpu()
                    returns, rate = arms[arm]()
                    rate.setdefault("cpu_ms_per_episode", (_cpu() - cpu0) / len(seeds) * 1000)
                    if reference is None:
                        reference = returns
                    assert returns == reference, (
                        f"{arm} returned different returns than the first arm"
                    )
                    rep_rates[arm] = rate
                    for kind in ("total", "steady", "cpu_ms_per_episode"):
                        rates[arm][kind].append(rate[kind])
                for arm in arms:
                    ratios[arm].append(rep_rates[arm]["steady"] / rep_rates["plain"]["steady"])
                    total_ratios[arm].append(rep_rates[arm]["total"] / rep_rates["plain"]["total"])
            steps = STEPS.get(env_id, sum(reference or []))
            summary = {}
            for arm in arms:
                summary[arm] = {
                    "episodes_per_s_steady": statistics.median(rates[arm]["steady"]),
                    "episodes_per_s_total": statistics.median(rates[arm]["total"]),
                    "ratio_to_plain_steady": statistics.median(ratios[arm]),
                    "ratio_to_plain_total": statistics.median(total_ratios[arm]),
                    "cpu_ms_per_episode": statistics.median(rates[arm]["cpu_ms_per_episode"]),
                }
            results["policies"][name] = {
                "load_average": os.getloadavg()[0],
                "episodes": count,
                "steps_per_episode": steps / count,
                "arms": summary,
            }
            print(f"\nload average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
            print(
                f"policy {name}: {count} episodes of {env_id}, {steps / count:.1f} steps each, "
                f"median of {args.repeats} interleaved repetitions"
            )
            print(
                f"{'arm':19s} {'eps/s steady':>13s} {'eps/s total':>12s} {'ratio vs plain':>15s} "
                f"{'ratio total':>12s} {'CPU ms/episode':>15s}"
            )
            for arm, row in summary.items():
                print(
                    f"{arm:19s} {row['episodes_per_s_steady']:13.1f} {row['episodes_per_s_total']:12.1f} "
                    f"{row['ratio_to_plain_steady']:15.3f} {row['ratio_to_plain_total']:12.3f} "
                    f"{row['cpu_ms_per_episode']:15.3f}"
                )
            if "plain-process" in rates:  # whole processes against the whole plain process
                for arm in arms:
                    if arm.endswith(("-process", "-process-late")):
                        whole = statistics.median(
                            j / p
                            for j, p in zip(
                                rates[arm]["total"], rates["plain-process"]["total"], strict=True
                            )
                        )
                        summary[arm]["ratio_to_plain_process"] = whole
                        print(f"{arm:19s} ratio to plain-process (whole processes): {whole:.3f}")
            if "judge-nested" in rates and "judge-eval-sandbox" in rates:
                nested = [
                    n / b
                    for n, b in zip(
                        rates["judge-nested"]["steady"],
                        rates["judge-eval-sandbox"]["steady"],
                        strict=True,
                    )
                ]
                totals = [
                    n / b
                    for n, b in zip(
                        rates["judge-nested"]["total"],
                        rates["judge-eval-sandbox"]["total"],
                        strict=True,
                    )
                ]
                results["policies"][name]["nested_vs_eval_sandbox"] = {
                    "steady": statistics.median(nested),
                    "total": statistics.median(totals),
                    "steady_per_repetition": nested,
                }
                print(
                    f"judge-nested / judge-eval-sandbox: steady {statistics.median(nested):.3f}, total "
                    f"{statistics.median(totals):.3f} (median of per-repetition ratios; target >= 0.9)"
                )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    if args.record:
        args.record.write_text(
            json.dumps(_record(results, sys.argv[1:]), indent=1, ensure_ascii=False) + "\n"
        )
    return 0


def _record(results: dict[str, Any], argv: list[str]) -> dict[str, Any]:
    """The summary record (bench/results): the judge arm's steady ratio to the plain loop."""
    import subprocess

    parts, steady, loads, ratios = [], [], [], []
    for name, row in results["policies"].items():
        arms = row["arms"]
        if "judge" not in arms:
            continue
        ratio = arms["judge"][
            "ratio_to_plain_total"
        ]  # start-up included: the steady figure is noisy here
        ratios.append(ratio)
        parts.append(f"{ratio:.2f}x {name}")
        steady.append(f"{arms['judge']['ratio_to_plain_steady']:.2f}x")
        loads.append(row["load_average"])
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    target = (
        "gym judge, policy in its own process (observations only), >= 0.8x a plain Gymnasium loop"
    )
    figure = (
        f"{', '.join(parts)} (start-up incl.; steady {'/'.join(steady)}), load "
        f"{min(loads):.0f}-{max(loads):.0f} on {results['machine']['cpus']} CPUs"
    )
    verdict = "met" if ratios and min(ratios) >= 0.8 else "not met"
    return {
        "benchmark": "Gym judge with the split policy process vs a plain Gymnasium loop",
        "script": "bench/bench_gym_judge.py",
        "command": ".venv/bin/python -P bench/bench_gym_judge.py " + " ".join(argv),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit,
        "page": "docs/benchmarks/gym-judge.md",
        "target": target,
        "figure": figure,
        "verdict": verdict,
        "targets": [{"target": target, "figure": figure, "verdict": verdict}],
    }


if __name__ == "__main__":
    sys.exit(main())
